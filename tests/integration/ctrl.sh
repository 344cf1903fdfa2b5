#!/bin/bash
# corral-ctrl against a real mount: drop boxes (apply, multi-document, a
# refused document), ReplicaSet naming and owner references, scaling with
# sed -i, scale-down order, adoption and release, ReplicationControllers,
# rolling update bounds seen at every inotify event, Recreate, rollback
# through git, paused, the progress deadline, events, cascade delete, the
# orphan annotation, an owner deleted while corral-ctrl was down, leader
# failover by kill -9, and a clean stop on SIGTERM.
#
# Pods are made ready by tests/tools/fake-kubelet (test scaffolding standing
# in for corral-sched and a hollow corral-noded); pods labelled hold stay
# unready.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
FAKE=$BUILD/tests/tools/fake-kubelet
CENSUS=$BUILD/tests/tools/pod-census
for b in "$CTRL" "$FAKE" "$CENSUS"; do
	[ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }
done
CPIDS=()
stop_all() {
	for p in "${CPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${CPIDS[@]}"; do wait "$p" 2>/dev/null; done
	CPIDS=()
}
trap '[ -n "${CTRL_TEST_LOGS:-}" ] && cp "$T"/*.log "$CTRL_TEST_LOGS"/; stop_all; cleanup' EXIT
start_fs
LEASE=(--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms)
# start_ctrl NAME [FLAGS...]: a corral-ctrl in the background; its pid in CTRL_PID.
start_ctrl() {
	local name=$1
	shift
	"$CTRL" --mount "$M" "${LEASE[@]}" "$@" >>"$T/$name.log" 2>&1 &
	CTRL_PID=$!
	CPIDS+=($CTRL_PID)
}
"$FAKE" --hold hold --delay 100 "$M" >>"$T/fake-kubelet.log" 2>&1 &
CPIDS+=($!)
start_ctrl ctrl1
C1=$CTRL_PID
mkdir "$M/namespaces/dev"
D=$M/namespaces/dev
count() { ls "$D/$1" 2>/dev/null | grep -c "^$2"; }
has() { [ "$(count "$1" "$2")" -eq "$3" ]; }
field() { sed -n "s/^  $2: //p" "$1"; } # a top-level field of a section, e.g. status
status_field() { sed -n '/^status:/,$p' "$1" | sed -n "s/^  $2: //p"; } # FILE KEY: a field of its status
# observed FILE: the controller has seen the object's latest spec
observed() { [ "$(field "$1" generation)" = "$(status_field "$1" observedGeneration)" ]; }

# ---- drop box ----------------------------------------------------------------
cat >"$T/web.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: busybox, command: [sleep, "3600"]}]}
Y
check "a Deployment dropped at the namespace's top is accepted" cp "$T/web.yaml" "$D/"
check "... filed as deployments/web.yaml" wait_for 10 readable "$D/deployments/web.yaml"
check "... and the drop file is removed" wait_for 10 test ! -e "$D/web.yaml"
check "a ReplicaSet web-<pod-template-hash> is made" wait_for 10 has replicasets web- 1
RS=$(ls "$D/replicasets" | grep '^web-' | head -1)
RS=${RS%.yaml}
check "... its name is the Deployment's and a hash in Kubernetes' alphabet" \
	sh -c "echo '$RS' | grep -Eq '^web-[bcdfghjklmnpqrstvwxz2456789]{6,10}$'"
check "3 pods <replicaset>-<5 random characters>" wait_for 10 has pods "$RS-" 3
POD=$(ls "$D/pods" | grep "^$RS-" | head -1)
check "... named as Kubernetes names them" \
	sh -c "echo '${POD%.yaml}' | grep -Eq '^$RS-[bcdfghjklmnpqrstvwxz2456789]{5}$'"
RSUID=$(sed -n 's/^  uid: //p' "$D/replicasets/$RS.yaml")
check "... owned by the ReplicaSet: controller, blockOwnerDeletion, its uid" \
	sh -c "grep -q 'uid: $RSUID' '$D/pods/$POD' && grep -q 'controller: true' '$D/pods/$POD' && grep -q 'blockOwnerDeletion: true' '$D/pods/$POD' && grep -q 'kind: ReplicaSet' '$D/pods/$POD'"
check "the pod template hash label is on the ReplicaSet's pods" grep -q "pod-template-hash: ${RS#web-}" "$D/pods/$POD"
check "the ReplicaSet is owned by the Deployment" grep -q 'kind: Deployment' "$D/replicasets/$RS.yaml"
check "the Deployment becomes available" wait_for 15 grep -q '^  availableReplicas: 3' "$D/deployments/web.yaml"
check "... with the Available condition" grep -q 'reason: MinimumReplicasAvailable' "$D/deployments/web.yaml"
check "... and status.observedGeneration" grep -q 'observedGeneration: 1' "$D/deployments/web.yaml"
check "the ReplicaSet's status counts ready pods" wait_for 10 grep -q 'readyReplicas: 3' "$D/replicasets/$RS.yaml"
check "the ReplicaSet carries the revision annotation" grep -q "deployment.kubernetes.io/revision: '1'" "$D/replicasets/$RS.yaml"
check "events: SuccessfulCreate on the ReplicaSet" wait_for 10 sh -c "grep -l 'reason: SuccessfulCreate' '$D'/events/*.yaml | head -1 | grep -q ."
check "events: ScalingReplicaSet on the Deployment" wait_for 10 sh -c "grep -l 'reason: ScalingReplicaSet' '$D'/events/*.yaml | xargs grep -l 'kind: Deployment' | grep -q ."
# the history is written behind the store: look once it has caught up
history_settle
check "events are not in the history" sh -c "! git --git-dir='$S/history.git' log --name-only --format= | grep -q /events/"
check "pods and ReplicaSets are not in the history" sh -c "! git --git-dir='$S/history.git' log --name-only --format= | grep -Eq '/(pods|replicasets)/'"

# ---- scaling with sed -i -----------------------------------------------------
check "sed -i scales the Deployment" sed -i 's/replicas: 3/replicas: 5/' "$D/deployments/web.yaml"
check "... to 5 pods" wait_for 15 has pods "$RS-" 5
check "... all available" wait_for 15 grep -q '^  availableReplicas: 5' "$D/deployments/web.yaml"

# ---- a rolling update, watched at every event --------------------------------
"$CENSUS" --image busybox:2 "$M" dev app=web >"$T/census-web.log" 2>&1 &
CENSUS_PID=$!
CPIDS+=($CENSUS_PID)
wait_for 5 grep -q '^5 5 0' "$T/census-web.log" || fail "pod-census sees the 5 pods"
check "a template change (sed -i) starts a rollout" sed -i 's/image: busybox$/image: busybox:2/' "$D/deployments/web.yaml"
check "... a second ReplicaSet" wait_for 15 has replicasets web- 2
check "... which ends with 5 new pods, all ready" wait_for 30 grep -q '^5 5 5$' "$T/census-web.log"
kill "$CENSUS_PID" 2>/dev/null
# maxSurge 25% of 5 rounds up to 2, maxUnavailable 25% rounds down to 1.
check "... never more than 5 + 2 pods at any event" awk '$1 > 7 { bad = 1 } END { exit bad }' "$T/census-web.log"
check "... never fewer than 5 - 1 ready pods at any event" awk '$2 < 4 { bad = 1 } END { exit bad }' "$T/census-web.log"
check "... and the old ReplicaSet is scaled to 0" wait_for 10 grep -q '^  replicas: 0' "$D/replicasets/$RS.yaml"
check "the Deployment says the rollout is complete" wait_for 15 grep -q 'reason: NewReplicaSetAvailable' "$D/deployments/web.yaml"
history_settle
check "git log shows the Deployment's three declared changes" \
	sh -c "[ \$(git --git-dir='$S/history.git' log --oneline -- namespaces/dev/deployments/web.yaml | wc -l) = 3 ]"

# ---- rollback through git ----------------------------------------------------
# the Deployment as it was before its last change (HEAD may be another path's)
REV=$(git --git-dir="$S/history.git" log --format=%H -- namespaces/dev/deployments/web.yaml | sed -n 2p)
check "git show REV:path > path rolls back" sh -c "cd '$M' && git show $REV:namespaces/dev/deployments/web.yaml > namespaces/dev/deployments/web.yaml"
check "... to the old ReplicaSet (no third one)" wait_for 30 sh -c "grep -q '^  replicas: 5' '$D/replicasets/$RS.yaml' && [ \$(ls '$D/pods' | grep -c '^$RS-') -eq 5 ] && [ \$(ls '$D/pods' | grep -c '^web-') -eq 5 ]"
check "... still two ReplicaSets" has replicasets web- 2
check "... the old ReplicaSet is revision 3, remembering revision 1" \
	sh -c "grep -q \"deployment.kubernetes.io/revision: '3'\" '$D/replicasets/$RS.yaml' && grep -q \"revision-history: '1'\" '$D/replicasets/$RS.yaml'"

# ---- scale-down order ----------------------------------------------------------
cat >"$D/replicasets/order.yaml" <<'Y'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: order}
spec:
  replicas: 3
  selector: {matchLabels: {app: order}}
  template:
    metadata: {labels: {app: order, hold: "yes"}}
    spec: {containers: [{name: c, image: busybox}]}
Y
check "a ReplicaSet of held pods gets its 3 pods" wait_for 10 has pods order- 3
wait_for 5 sh -c "[ \$(grep -l 'nodeName' '$D'/pods/order-* | wc -l) -eq 3 ]" || fail "the 3 held pods are bound"
READY=$(ls "$D/pods" | grep '^order-' | head -1)
# mark_ready FILE: what a node agent does, by hand.
mark_ready() {
	local f=$1 ts
	ts=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	{ sed '/^status:/,$d' "$f"; printf 'status:\n  phase: Running\n  conditions:\n  - {type: Ready, status: "True", lastTransitionTime: "%s"}\n' "$ts"; } >"$T/ready.yaml"
	cp "$T/ready.yaml" "$f"
}
check "one of them is made ready by hand" mark_ready "$D/pods/$READY"
check "... and counted" wait_for 10 grep -q 'readyReplicas: 1' "$D/replicasets/order.yaml"
check "scaling to 1 keeps the ready pod" sed -i 's/replicas: 3/replicas: 1/' "$D/replicasets/order.yaml"
check "... deleting the 2 unready ones" wait_for 10 sh -c "[ \$(ls '$D/pods' | grep -c '^order-') -eq 1 ] && [ -f '$D/pods/$READY' ]"

# ---- adoption and release ----------------------------------------------------
cat >"$D/pods/stray.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: stray, labels: {app: adopt}}
spec: {containers: [{name: c, image: busybox}]}
Y
cat >"$D/replicasets/adopt.yaml" <<'Y'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: adopt}
spec:
  replicas: 2
  selector: {matchLabels: {app: adopt}}
  template:
    metadata: {labels: {app: adopt}}
    spec: {containers: [{name: c, image: busybox}]}
Y
check "a ReplicaSet adopts a matching pod nobody owns" wait_for 10 grep -q 'name: adopt' "$D/pods/stray.yaml"
check "... and makes only the one pod more it needs" wait_for 10 sh -c "[ \$(ls '$D/pods' | grep -c '^adopt-') -eq 1 ]"
# once its status counts the two, the ReplicaSet has seen all it made
adopt_seen() { [ "$(status_field "$D/replicasets/adopt.yaml" replicas)" = 2 ]; }
wait_for 10 adopt_seen || fail "the ReplicaSet's status counts 2 pods"
check "... no more" has pods adopt- 1
check "a pod relabelled out of the selector is released" sed -i 's/app: adopt/app: gone/' "$D/pods/stray.yaml"
check "... loses its ownerReference" wait_for 10 sh -c "! grep -q ownerReferences '$D/pods/stray.yaml'"
check "... and is replaced" wait_for 10 has pods adopt- 2

# ---- ReplicationController ---------------------------------------------------
cat >"$D/replicationcontrollers/rc.yaml" <<'Y'
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  replicas: 2
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec: {containers: [{name: c, image: busybox}]}
Y
check "a ReplicationController makes its pods" wait_for 10 has pods rc- 2
check "... owned with kind ReplicationController" sh -c "grep -l 'kind: ReplicationController' '$D'/pods/rc-* | grep -q ."
check "... counted in its status" wait_for 10 grep -q 'readyReplicas: 2' "$D/replicationcontrollers/rc.yaml"
check "... and scales with sed -i" sed -i 's/replicas: 2/replicas: 3/' "$D/replicationcontrollers/rc.yaml"
check "... to 3" wait_for 10 has pods rc- 3
check "... with its status" wait_for 10 grep -q 'readyReplicas: 3' "$D/replicationcontrollers/rc.yaml"

# ---- Recreate ------------------------------------------------------------------
sed 's/name: web}/name: rec}/; s/app: web/app: rec/g; s/replicas: 3/replicas: 3/; s/strategy: .*/strategy: {type: Recreate}/' "$T/web.yaml" >"$D/deployments/rec.yaml"
check "a Recreate Deployment gets its pods" wait_for 15 sh -c "grep -q '^  availableReplicas: 3' '$D/deployments/rec.yaml'"
"$CENSUS" --image busybox:2 "$M" dev app=rec >"$T/census-rec.log" 2>&1 &
CENSUS_PID=$!
CPIDS+=($CENSUS_PID)
wait_for 5 grep -q '^3 3 0' "$T/census-rec.log" || fail "pod-census sees the 3 pods"
check "a template change recreates" sed -i 's/image: busybox$/image: busybox:2/' "$D/deployments/rec.yaml"
check "... ending with 3 new pods" wait_for 30 grep -q '^3 3 3$' "$T/census-rec.log"
kill "$CENSUS_PID" 2>/dev/null
check "... and no new pod ever ran beside an old one" awk '$3 > 0 && $1 != $3 { bad = 1 } END { exit bad }' "$T/census-rec.log"
check "... all old ones were gone first" grep -q '^0 0 0$' "$T/census-rec.log"

# ---- paused, and the progress deadline -----------------------------------------
check "paused: true is accepted" sed -i 's/^  replicas: 3/  paused: true\n  replicas: 3/' "$D/deployments/rec.yaml"
check "... and says so" wait_for 10 grep -q 'reason: DeploymentPaused' "$D/deployments/rec.yaml"
check "a template change of a paused Deployment" sed -i 's/image: busybox:2/image: busybox:3/' "$D/deployments/rec.yaml"
check "... is observed" wait_for 10 observed "$D/deployments/rec.yaml"
check "... and makes no ReplicaSet" has replicasets rec- 2
check "unpausing rolls it out" sed -i '/^  paused: true/d' "$D/deployments/rec.yaml"
check "... to a third ReplicaSet" wait_for 15 has replicasets rec- 3
sed 's/name: web}/name: stuck}/; s/app: web}/app: stuck, hold: "yes"}/; s/{app: web}}/{app: stuck}}/; s/replicas: 3/replicas: 1\n  progressDeadlineSeconds: 2/' "$T/web.yaml" >"$D/deployments/stuck.yaml"
check "a Deployment whose pods never become ready" wait_for 10 has pods stuck- 1
check "... reports ProgressDeadlineExceeded after progressDeadlineSeconds" wait_for 15 grep -q 'reason: ProgressDeadlineExceeded' "$D/deployments/stuck.yaml"

# ---- drop boxes: apply, several documents, a refused one ------------------------
cat >"$D/configmaps/settings.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {keep: "1", change: "1"}
Y
cat >"$T/multi.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: dev}
data: {change: "2"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: dev}
spec:
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: web, image: busybox}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fresh}
data: {a: "1"}
Y
check "a drop box at the mount's top with three documents is accepted" cp "$T/multi.yaml" "$M/multi.yaml"
check "... is removed once filed" wait_for 10 test ! -e "$M/multi.yaml"
check "... an existing object is updated: the written field wins" wait_for 5 sh -c "grep -q \"change: '2'\" '$D/configmaps/settings.yaml'"
check "... and the fields not written are kept" grep -q "keep: '1'" "$D/configmaps/settings.yaml"
check "... a document without a namespace goes to default" test -f "$M/namespaces/default/configmaps/fresh.yaml"
check "... the refused one (an immutable selector) is in .errors" grep -q 'deployments/web.yaml' "$M/.errors"
check "... and left the Deployment as it was" grep -q 'app: web' "$D/deployments/web.yaml"
check "... and is reported as an event" wait_for 10 sh -c "grep -l 'reason: FailedApply' '$D'/events/*.yaml | grep -q ."
check "... naming the drop file, the document's index, kind and name" sh -c "grep -l 'drop box multi.yaml, document 2 (Deployment web)' '$D'/events/*.yaml | grep -q ."
printf 'apiVersion: v1\nkind: Nope\nmetadata: {name: x}\n' >"$T/bad.yaml"
refute "a drop box with an unknown kind is refused at close" cp "$T/bad.yaml" "$D/bad.yaml"
# kubectl apply -f: the documents that can be filed are, the others are
# reported. corral-fs accepts such a file once at least one document is
# valid (issue 10); until then it refuses it whole and there is nothing
# for corral-ctrl to file, which is said as a skip, never as an ok.
cat >"$T/partial.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: partial-good}
data: {a: "1"}
---
apiVersion: widgets.example.com/v1
kind: Widget
metadata: {name: odd}
Y
check "a drop box with a ConfigMap and a document of an unknown kind is accepted" cp "$T/partial.yaml" "$D/partial.yaml"
check "... the ConfigMap is filed" wait_for 10 readable "$D/configmaps/partial-good.yaml"
check "... the drop file is removed once every document was tried" wait_for 10 test ! -e "$D/partial.yaml"
check "... a Warning event names the unknown one" wait_for 10 sh -c "grep -l 'partial.yaml, document 2 (Widget odd)' '$D'/events/*.yaml | grep -q ."
cat >"$T/ns.yaml" <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: made, labels: {team: a}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: inside, namespace: made}
data: {a: "1"}
Y
check "a drop box can make a namespace and fill it" cp "$T/ns.yaml" "$M/ns.yaml"
check "... in order" wait_for 10 readable "$M/namespaces/made/configmaps/inside.yaml"
check "... with the Namespace's labels" grep -q 'team: a' "$M/namespaces/made.yaml"

# ---- garbage collection ---------------------------------------------------------
check "deleting a Deployment" rm "$D/deployments/web.yaml"
check "... deletes its ReplicaSets and their pods" wait_for 20 sh -c "[ \$(ls '$D/pods' '$D/replicasets' | grep -c '^web-') -eq 0 ]"
sed 's/name: web}/name: orph, annotations: {corral.io\/orphan: "true"}}/; s/app: web/app: orph/g' "$T/web.yaml" >"$D/deployments/orph.yaml"
check "a Deployment with corral.io/orphan: \"true\"" wait_for 15 grep -q '^  availableReplicas: 3' "$D/deployments/orph.yaml"
ORS=$(ls "$D/replicasets" | grep '^orph-' | head -1)
check "... deleted" rm "$D/deployments/orph.yaml"
check "... orphans its ReplicaSet: no ownerReferences left" wait_for 10 sh -c "! grep -q ownerReferences '$D/replicasets/$ORS'"
check "... which enters the history as a declared object" wait_for 10 sh -c "git --git-dir='$S/history.git' log --oneline -- 'namespaces/dev/replicasets/$ORS' | grep -q ."
check "... and stays, with its pods" sh -c "[ -f '$D/replicasets/$ORS' ] && [ \$(ls '$D/pods' | grep -c '^orph-') -eq 3 ]"
check "corral-ctrl stops on SIGTERM" kill -TERM "$C1"
wait "$C1"
check "... with status 0" test $? = 0
check "... and hands the lease over" grep -q "holderIdentity: ''" "$M/namespaces/kube-system/leases/corral-ctrl.yaml"
check "a ReplicaSet deleted while corral-ctrl is down" rm "$D/replicasets/$ORS"
check "... leaves its pods for now" has pods orph- 3
OLD_EVENT=$(ls -tr "$D/events" | head -1)
start_ctrl ctrl2 --event-ttl 20s
C2=$CTRL_PID
check "... until corral-ctrl starts again and deletes them" wait_for 15 has pods orph- 0
check "events older than --event-ttl are deleted" wait_for 15 test ! -e "$D/events/$OLD_EVENT"
check "... recent ones stay" sh -c "ls '$D/events' | grep -q ."

# ---- leader election ------------------------------------------------------------
start_ctrl ctrl3
C3=$CTRL_PID
check "a second corral-ctrl follows" wait_for 10 grep -q 'is held by' "$T/ctrl3.log"
check "... the lease names the first" grep -q "$(sed -n 's/.* as \([^ ]*\).*/\1/p' "$T/ctrl2.log" | head -1)" "$M/namespaces/kube-system/leases/corral-ctrl.yaml"
kill -9 "$C2"
check "kill -9 of the leader: the follower takes over within the lease duration" wait_for 10 grep -q 'now leads' "$T/ctrl3.log"
check "... and acts" sed -i 's/replicas: 3/replicas: 4/' "$D/deployments/rec.yaml"
check "... (4 pods)" wait_for 15 sh -c "grep -q '^  availableReplicas: 4' '$D/deployments/rec.yaml'"
check "the lease counts the transition" grep -q 'leaseTransitions: [1-9]' "$M/namespaces/kube-system/leases/corral-ctrl.yaml"
check "--help" "$CTRL" --help
check "--version" "$CTRL" --version
refute "an unknown controller name is refused" "$CTRL" --mount "$M" --controllers nope
grep -E ' (warn|error): ' "$T"/ctrl*.log >&2
[ "$FAILS" = 0 ]
