#!/bin/bash
# The DaemonSet controller against a real mount, with corral-sched and hollow
# corral-noded nodes: one pod per node, bound by corral-sched through the
# matchFields node affinity the controller writes; the daemon pod's
# tolerations; a nodeSelector followed as nodes are added, labelled and
# removed; a NoSchedule taint keeps a running pod, a NoExecute one evicts
# it; status and events; ControllerRevisions and controller-revision-hash;
# a rolling update's bounds read from the objects at every inotify event
# (maxUnavailable, then maxSurge); OnDelete; a rollback through git.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
CENSUS=$BUILD/tests/tools/pod-census
for b in "$CTRL" "$SCHED" "$NODED" "$CENSUS"; do
	[ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }
done
PIDS=()
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}
trap '[ -n "${DS_TEST_LOGS:-}" ] && cp "$T"/*.log "$DS_TEST_LOGS"/; stop_all; cleanup' EXIT
start_fs
"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
PIDS+=($!)
"$CTRL" --mount "$M" --leader-elect=false >>"$T/ctrl.log" 2>&1 &
PIDS+=($!)
# start_node NAME: a hollow node agent; its pid in NODE_<NAME>
start_node() {
	"$NODED" --mount "$M" --name "$1" --hollow --heartbeat-period 1s >>"$T/$1.log" 2>&1 &
	PIDS+=($!)
	eval "NODE_${1//-/_}=$!"
}
stop_node() { local v="NODE_${1//-/_}"; kill "${!v}" 2>/dev/null; wait "${!v}" 2>/dev/null; }
mkdir "$M/namespaces/kube-system" 2>/dev/null
D=$M/namespaces/kube-system
DS=$D/daemonsets/agent.yaml
for n in n1 n2 n3; do start_node $n; done
check "three hollow nodes register" wait_for 20 readable "$M/nodes/n1.yaml" "$M/nodes/n2.yaml" "$M/nodes/n3.yaml"

pods_of() { grep -l "^    name: agent$" "$D"/pods/*.yaml 2>/dev/null; }
npods() { pods_of | wc -l; }
has_pods() { [ "$(npods)" -eq "$1" ]; }
# on NODE: the names of agent's pods bound to NODE
on() { grep -l "^  nodeName: $1\$" $(pods_of) 2>/dev/null; }
on_each() { local n; for n; do [ "$(on "$n" | wc -l)" -eq 1 ] || return 1; done; }
status_is() { sed -n '/^status:/,$p' "$DS" | grep -q "^  $1: $2\$"; }
# observed: the controller has seen the DaemonSet's latest spec
observed() { [ "$(sed -n 's/^  generation: //p' "$DS")" = "$(sed -n '/^status:/,$p' "$DS" | sed -n 's/^  observedGeneration: //p')" ]; }
running_all() { # N: N pods, every one Running and ready
	local f
	[ "$(npods)" -eq "$1" ] || return 1
	for f in $(pods_of); do grep -q '^  phase: Running' "$f" || return 1; done
}

cat >"$T/agent.yaml" <<'Y'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: busybox, command: [sleep, "3600"]}]
Y
# ---- one pod per node ----------------------------------------------------------
check "a DaemonSet is accepted" cp "$T/agent.yaml" "$DS"
check "... one pod on each of the 3 nodes, bound by corral-sched" wait_for 20 on_each n1 n2 n3
check "... and no more" has_pods 3
P1=$(on n1 | head -1)
check "... named <daemonset>-<5 random characters>" sh -c "basename '$P1' .yaml | grep -Eq '^agent-[bcdfghjklmnpqrstvwxz2456789]{5}$'"
check "... owned by the DaemonSet (controller)" sh -c "grep -q 'kind: DaemonSet' '$P1' && grep -q 'controller: true' '$P1'"
check "... bound through a matchFields node affinity on metadata.name" \
	sh -c "grep -A4 'matchFields:' '$P1' | grep -q 'key: metadata.name' && grep -A6 'matchFields:' '$P1' | grep -q -- '- n1'"
check "... with the daemon pod's tolerations" \
	sh -c "grep -q 'node.kubernetes.io/not-ready' '$P1' && grep -q 'node.kubernetes.io/unreachable' '$P1' && grep -q 'node.kubernetes.io/unschedulable' '$P1' && grep -q 'node.kubernetes.io/disk-pressure' '$P1' && grep -q 'node.kubernetes.io/memory-pressure' '$P1' && grep -q 'node.kubernetes.io/pid-pressure' '$P1'"
check "... but not network-unavailable (no hostNetwork)" sh -c "! grep -q 'network-unavailable' '$P1'"
check "the status counts 3 desired, scheduled, ready and available" \
	wait_for 20 sh -c "$(declare -f status_is); DS='$DS'; status_is desiredNumberScheduled 3 && status_is currentNumberScheduled 3 && status_is numberReady 3 && status_is numberAvailable 3 && status_is updatedNumberScheduled 3 && status_is numberMisscheduled 0"
check "... and observedGeneration" status_is observedGeneration 1
check "a ControllerRevision agent-<hash>, revision 1" wait_for 5 sh -c "ls '$D/controllerrevisions' | grep -q '^agent-' && grep -q '^revision: 1' '$D'/controllerrevisions/agent-*.yaml"
REV1=$(basename "$(ls "$D"/controllerrevisions/agent-*.yaml | head -1)" .yaml)
check "... its hash is the pods' controller-revision-hash label" grep -q "controller-revision-hash: ${REV1#agent-}" "$P1"
check "... its data is the template" grep -q 'image: busybox' "$D/controllerrevisions/$REV1.yaml"
check "events: SuccessfulCreate on the DaemonSet" wait_for 10 sh -c "grep -l 'reason: SuccessfulCreate' '$D'/events/*.yaml | xargs grep -l 'kind: DaemonSet' | grep -q ."

# ---- nodes come and go -----------------------------------------------------------
start_node n4
check "a new node gets a pod" wait_for 20 on_each n1 n2 n3 n4
check "... 4 desired" wait_for 10 status_is desiredNumberScheduled 4
stop_node n4
rm -f "$M/nodes/n4.yaml"
check "a node deleted: its pod is deleted" wait_for 20 sh -c "$(declare -f pods_of npods); D='$D'; [ \$(npods) -eq 3 ]"
check "... 3 desired" wait_for 10 status_is desiredNumberScheduled 3
check "events: SuccessfulDelete" wait_for 10 sh -c "grep -l 'reason: SuccessfulDelete' '$D'/events/*.yaml | xargs grep -l 'kind: DaemonSet' | grep -q ."

# ---- a nodeSelector, labels changing ---------------------------------------------
sed -i 's/^    spec:$/    spec:\n      nodeSelector: {role: edge}/' "$DS"
check "a nodeSelector no node matches: every pod goes" wait_for 20 has_pods 0
check "... 0 desired" wait_for 10 status_is desiredNumberScheduled 0
label() { sed -i "s/^  labels:$/  labels:\n    role: $2/" "$M/nodes/$1.yaml"; }
check "labelling a node role=edge (sed -i)" label n2 edge
check "... gives it a pod" wait_for 20 sh -c "$(declare -f pods_of npods on on_each); D='$D'; on_each n2 && [ \$(npods) -eq 1 ]"
check "... 1 desired" wait_for 10 status_is desiredNumberScheduled 1
check "removing the label (sed -i)" sed -i '/^    role: edge$/d' "$M/nodes/n2.yaml"
check "... takes the pod away" wait_for 20 has_pods 0
sed -i '/^      nodeSelector:$/d; /^        role: edge$/d' "$DS"
check "the nodeSelector removed: 3 pods again" wait_for 20 on_each n1 n2 n3

# ---- taints -------------------------------------------------------------------
taint() { sed -i "s/^spec:$/spec:\n  taints: [{key: $2, effect: $3}]/" "$M/nodes/$1.yaml"; }
check "a NoSchedule taint on n3 (sed -i)" taint n3 dedicated NoSchedule
history_settle
check "... leaves its running pod" on_each n1 n2 n3
check "... which is no longer desired there" wait_for 10 status_is desiredNumberScheduled 2
check "... and counts as misscheduled" wait_for 10 status_is numberMisscheduled 1
check "a NoExecute taint instead" sed -i 's/^  - effect: NoSchedule$/  - effect: NoExecute/' "$M/nodes/n3.yaml"
check "... evicts it" wait_for 20 sh -c "$(declare -f pods_of npods on); D='$D'; [ \$(npods) -eq 2 ] && [ -z \"\$(on n3)\" ]"
sed -i '/^  taints:$/,/^    key: dedicated$/d' "$M/nodes/n3.yaml"
check "the taint removed: 3 pods again" wait_for 20 on_each n1 n2 n3
check "all 3 running" wait_for 20 running_all 3

# ---- a rolling update, maxUnavailable 1, watched at every event -------------------
"$CENSUS" --image busybox:2 "$M" kube-system app=agent >"$T/census-1.log" 2>&1 &
CENSUS_PID=$!
PIDS+=($CENSUS_PID)
wait_for 10 grep -q '^3 3 0$' "$T/census-1.log" || fail "pod-census sees the 3 pods"
check "a template change (sed -i) starts a rolling update" sed -i 's/image: busybox$/image: busybox:2/' "$DS"
check "... which ends with 3 new pods, all ready" wait_for 40 grep -q '^3 3 3$' "$T/census-1.log"
kill "$CENSUS_PID" 2>/dev/null
check "... never more than 3 pods at any event (maxSurge 0)" awk '$1 > 3 { bad = 1 } END { exit bad }' "$T/census-1.log"
check "... never fewer than 3 - 1 ready at any event (maxUnavailable 1)" awk '$2 < 2 { bad = 1 } END { exit bad }' "$T/census-1.log"
# rev_of IMAGE: the ControllerRevision whose template runs IMAGE
rev_of() { basename "$(grep -l "image: $1\$" "$D"/controllerrevisions/agent-*.yaml | head -1)" .yaml; }
revno() { sed -n 's/^revision: //p' "$D/controllerrevisions/$1.yaml"; }
highest() { sed -n 's/^revision: //p' "$D"/controllerrevisions/agent-*.yaml | sort -n | tail -1; }
check "... a ControllerRevision of the new template" wait_for 10 sh -c "grep -l 'image: busybox:2\$' '$D'/controllerrevisions/agent-*.yaml | grep -q ."
REV2=$(rev_of busybox:2)
check "... numbered highest" test "$(revno "$REV2")" = "$(highest)"
check "... the new pods carry its hash" sh -c "$(declare -f pods_of); D='$D'; [ \$(grep -l 'controller-revision-hash: ${REV2#agent-}' \$(pods_of) | wc -l) -eq 3 ]"
check "... the status: 3 updated and available, the generation observed" wait_for 20 sh -c "$(declare -f status_is observed); DS='$DS'; status_is updatedNumberScheduled 3 && status_is numberAvailable 3 && observed"

# ---- maxSurge 1 -------------------------------------------------------------------
"$CENSUS" --image busybox:3 "$M" kube-system app=agent >"$T/census-2.log" 2>&1 &
CENSUS_PID=$!
PIDS+=($CENSUS_PID)
wait_for 10 grep -q '^3 3 0$' "$T/census-2.log" || fail "pod-census sees the 3 pods"
check "maxSurge 1, maxUnavailable 0 and a new image (sed -i)" \
	sed -i 's/maxUnavailable: 1$/maxUnavailable: 0/; s/maxSurge: 0$/maxSurge: 1/; s/image: busybox:2$/image: busybox:3/' "$DS"
check "... ends with 3 new pods, all ready" wait_for 40 grep -q '^3 3 3$' "$T/census-2.log"
kill "$CENSUS_PID" 2>/dev/null
check "... never more than 3 + 1 pods at any event" awk '$1 > 4 { bad = 1 } END { exit bad }' "$T/census-2.log"
check "... and once 4 (it surged)" awk '$1 == 4 { s = 1 } END { exit !s }' "$T/census-2.log"
check "... never fewer than 3 ready at any event (maxUnavailable 0)" awk '$2 < 3 { bad = 1 } END { exit bad }' "$T/census-2.log"
check "... and back to 3 pods" wait_for 20 has_pods 3

# ---- rollback through git ---------------------------------------------------------
history_settle
check "ControllerRevisions and daemon pods are not in the history" sh -c "! git --git-dir='$S/history.git' log --name-only --format= | grep -Eq '/(controllerrevisions|pods)/'"
check "... the DaemonSet's declared changes are" sh -c "[ \$(git --git-dir='$S/history.git' log --oneline -- namespaces/kube-system/daemonsets/agent.yaml | wc -l) -ge 5 ]"
# the DaemonSet as it was two declared changes ago (busybox:2)
REV=$(git --git-dir="$S/history.git" log --format=%H -- namespaces/kube-system/daemonsets/agent.yaml | sed -n 2p)
OLDNO=$(highest)
NREVS=$(ls "$D/controllerrevisions" | grep -c '^agent-')
check "git show REV:path > path rolls back" sh -c "cd '$M' && git show $REV:namespaces/kube-system/daemonsets/agent.yaml > namespaces/kube-system/daemonsets/agent.yaml"
check "... the template is busybox:2 again" grep -q 'image: busybox:2$' "$DS"
check "... the pods follow: 3, all with busybox:2's revision's hash" wait_for 40 sh -c "$(declare -f pods_of npods); D='$D'; [ \$(npods) -eq 3 ] && [ \$(grep -l 'controller-revision-hash: ${REV2#agent-}' \$(pods_of) | wc -l) -eq 3 ] && ! grep -q 'busybox:3' \$(pods_of)"
check "... no new ControllerRevision: busybox:2's is renumbered highest" wait_for 10 sh -c "$(declare -f revno highest); D='$D'; [ \$(revno $REV2) = \$(highest) ] && [ \$(revno $REV2) -gt $OLDNO ]"
check "... and there are as many as before" test "$(ls "$D/controllerrevisions" | grep -c '^agent-')" = "$NREVS"

# ---- OnDelete ---------------------------------------------------------------------
sed -i 's/type: RollingUpdate/type: OnDelete/; /rollingUpdate/d; /maxSurge/d; /maxUnavailable/d; s/image: busybox:2$/image: busybox:4/' "$DS"
check "OnDelete: a new template is observed" wait_for 20 sh -c "$(declare -f status_is observed); DS='$DS'; observed && status_is updatedNumberScheduled 0"
check "... and leaves the pods as they are" sh -c "$(declare -f pods_of); D='$D'; ! grep -q 'busybox:4' \$(pods_of)"
check "... deleting one pod brings a new one of the new template" sh -c "rm '$(on n1 | head -1)'"
check "... on the same node" wait_for 20 sh -c "$(declare -f pods_of on); D='$D'; grep -q 'busybox:4' \$(on n1) 2>/dev/null"
check "... 1 updated" wait_for 20 status_is updatedNumberScheduled 1

# ---- the DaemonSet deleted ------------------------------------------------------
check "deleting the DaemonSet" rm "$DS"
check "... deletes its pods (garbage collector)" wait_for 30 has_pods 0
check "... and its ControllerRevisions" wait_for 30 sh -c "! ls '$D/controllerrevisions' | grep -q '^agent-'"
stop_all
[ "$FAILS" = 0 ]
