#!/bin/bash
# The StatefulSet controller against a real mount with real busybox pods
# (corral-sched, one real corral-noded node, corral-dns): web-0, web-1,
# web-2 created in order, each once the one before is Ready; claims
# www-web-N on hostPath PVs (type DirectoryOrCreate, made by the node);
# stable identity (hostname, subdomain, labels) and DNS
# web-0.nginx.dev.svc.cluster.local answered with the pod's address; a
# deleted pod back with the same name, claim and data; a partitioned
# rolling update (highest ordinal first, below the partition untouched);
# a rollback through git (the old revision renumbered, no new one); an
# ordered scale-down from the highest ordinal that waits for the lower
# pods; the set deleted: its pods go, its claims stay (Retain).
#
# Until a PV binder runs (branch storage), the suite binds each claim to
# its pre-bound PV (claimRef) itself, as the binder would: it writes the
# claim's spec.volumeName.
. "$(dirname "$0")/../lib/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_daemons
for t in systemd-nspawn dig; do
	command -v "$t" >/dev/null || { echo "not ok - $t is missing (scripts/deps.sh installs it)"; exit 1; }
done
NA=sstest-a
PORT=10163 HPORT=18091 MPORT=20065
IMAGES=$T/images NSTATE=$T/nstate LOGS=$T/logs
PIDS=()
NODEPID=
stop_all() {
	local p
	[ -n "$NODEPID" ] && kill "$NODEPID" 2>/dev/null && wait "$NODEPID" 2>/dev/null
	NODEPID=
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}
final_cleanup() {
	if [ "$FAILS" != 0 ] && [ -n "${CORRAL_TEST_KEEP:-}" ]; then
		mkdir -p "$CORRAL_TEST_KEEP" && cp -r "$T"/*.log "$M/namespaces/dev" "$CORRAL_TEST_KEEP/" 2>/dev/null
	fi
	stop_all
	node_net_cleanup "$NSTATE" "$NA"
	cleanup
}
trap final_cleanup EXIT
mkdir -p "$LOGS"
start_fs --pod-log-dir "$LOGS"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >>"$T/image.log" 2>&1 ||
	{ echo "not ok - corral image build-busybox: $(tail -2 "$T/image.log")"; exit 1; }
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\n' "$NSTATE" "$IMAGES" "$LOGS" >"$T/noded.conf"
"$NODED" --mount "$M" --name "$NA" --config "$T/noded.conf" --heartbeat-period 1s \
	--cleanup-on-exit >>"$T/node.log" 2>&1 &
NODEPID=$!
"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
PIDS+=($!)
"$CTRL" --mount "$M" --leader-elect=false >>"$T/ctrl.log" 2>&1 &
PIDS+=($!)
"$DNS" --mount "$M" --listen 127.0.0.1 --port $PORT --health-port $HPORT --metrics-port $MPORT \
	>>"$T/dns.log" 2>&1 &
PIDS+=($!)
check "node $NA registers Ready" wait_for 20 grep -q 'reason: KubeletReady' "$M/nodes/$NA.yaml"

D=$M/namespaces/dev
mkdir -p "$D"
SS=$D/statefulsets/web.yaml
pod() { echo "$D/pods/$1.yaml"; }
claim() { echo "$D/persistentvolumeclaims/$1.yaml"; }
field() { sed -n "s/^  $2: //p" "$1" 2>/dev/null | tr -d "'" | head -1; }
label() { sed -n "/^  labels:/,/^  [a-z]/s|^    $2: ||p" "$1" 2>/dev/null | tr -d "'" | head -1; }
# observed: the controller has synced the set's latest spec
observed() { [ "$(sed -n 's/^  generation: //p' "$SS")" = "$(sed -n '/^status:/,$p' "$SS" | sed -n 's/^  observedGeneration: //p')" ]; }
ready() { awk '/^    status: /{s=$2} /^    type: Ready$/{print s; exit}' "$(pod "$1")" 2>/dev/null | tr -d "'" | grep -qx True; }
running() { grep -q '^  phase: Running' "$(pod "$1")" 2>/dev/null; }
gone() { [ ! -e "$(pod "$1")" ]; }
status_is() { sed -n '/^status:/,$p' "$SS" | grep -q "^  $1: '\{0,1\}$2'\{0,1\}\$"; }
hash_of() { label "$(pod "$1")" controller-revision-hash; }
q() { dig @127.0.0.1 -p $PORT +time=2 +tries=1 +short "$@"; }
# bind N: as a binder would, claim www-web-N to its pre-bound PV
bind() {
	local c
	c=$(claim "www-web-$1")
	wait_for 20 readable "$c" || return 1
	grep -q '^  volumeName:' "$c" || sed -i "s/^spec:\$/spec:\n  volumeName: pv-web-$1/" "$c"
	grep -q "^  volumeName: pv-web-$1\$" "$c"
}
for n in 0 1 2; do
	cat >"$M/persistentvolumes/pv-web-$n.yaml" <<Y
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-web-$n}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: dev, name: www-web-$n}
  hostPath: {path: $T/pv/$n, type: DirectoryOrCreate}
Y
done
cat >"$D/services/nginx.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: nginx}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: web, port: 80}]
Y
# the pod is Ready once its claim holds a file "ready"
cat >"$T/web.yaml" <<'Y'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: nginx
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: busybox
        command: [sh, -c, "hostname >> /www/boots; exec sleep 3600"]
        readinessProbe: {exec: {command: [test, -e, /www/ready]}, periodSeconds: 1}
        volumeMounts: [{name: www, mountPath: /www}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
Y

# ---- ordered start --------------------------------------------------------------
check "a StatefulSet mounting its claim template is accepted" cp "$T/web.yaml" "$SS"
unowned() { ! grep -q ownerReferences "$(claim "$1")"; }
check "the claim www-web-0 is made" bind 0
check "... owned by nobody (Retain)" unowned www-web-0
check "... labelled with the set's selector" grep -q '^    app: web$' "$(claim www-web-0)"
check "web-0 runs, on the PV its node made (DirectoryOrCreate)" wait_for 30 running web-0
check "... $T/pv/0 exists, with the pod's boot" wait_for 10 grep -qx web-0 "$T/pv/0/boots"
seen_unready() { status_is replicas "$1" && status_is readyReplicas "$2"; }
absent() { [ ! -e "$(pod "web-$1")" ] && [ ! -e "$(claim "www-web-$1")" ]; }
check "web-0 not ready: the status says 1 replica, 0 ready" wait_for 10 seen_unready 1 0
check "... and there is no web-1 nor its claim" absent 1
touch "$T/pv/0/ready"
check "web-0 Ready" wait_for 20 ready web-0
check "then web-1's claim" bind 1
check "... and web-1 runs" wait_for 30 running web-1
check "web-1 not ready: the status says 2 replicas, 1 ready" wait_for 10 seen_unready 2 1
check "... and there is no web-2 nor its claim" absent 2
touch "$T/pv/1/ready"
check "then web-2's claim" bind 2
mkdir -p "$T/pv/2" && touch "$T/pv/2/ready"
all_ready() { local p; for p; do ready "$p" || return 1; done; }
status_all() { local k; for k in replicas readyReplicas availableReplicas currentReplicas updatedReplicas; do status_is $k "$1" || return 1; done; }
check "... all 3 ready" wait_for 30 all_ready web-0 web-1 web-2
check "the status: 3 replicas, ready, available, current and updated" wait_for 20 status_all 3
REV1=$(sed -n '/^status:/,$p' "$SS" | sed -n 's/^  currentRevision: //p')
check "... currentRevision = updateRevision = a ControllerRevision web-<hash>" sh -c "[ -n '$REV1' ] && grep -q '^  updateRevision: $REV1\$' '$SS' && grep -q '^kind: ControllerRevision' '$D/controllerrevisions/$REV1.yaml'"
check "events: SuccessfulCreate for pods and claims" wait_for 10 sh -c "grep -l 'create Pod web-2 in StatefulSet web successful' '$D'/events/*.yaml | grep -q . && grep -l 'create Claim www-web-2 Pod web-2 in StatefulSet web success' '$D'/events/*.yaml | grep -q ."

# ---- identity --------------------------------------------------------------------
P1=$(pod web-1)
check "web-1: hostname web-1, subdomain nginx" sh -c "grep -q '^  hostname: web-1\$' '$P1' && grep -q '^  subdomain: nginx\$' '$P1'"
labels_ok() { [ "$(label "$P1" statefulset.kubernetes.io/pod-name)" = web-1 ] && [ "$(label "$P1" apps.kubernetes.io/pod-index)" = 1 ] && [ "$(label "$P1" controller-revision-hash)" = "$REV1" ]; }
check "... labels pod-name, pod-index and controller-revision-hash" labels_ok
check "... its claim as the volume www" grep -q 'claimName: www-web-1' "$P1"
check "... owned by the StatefulSet (controller)" sh -c "grep -q 'kind: StatefulSet' '$P1' && grep -q 'controller: true' '$P1'"
IP0=$(field "$(pod web-0)" podIP)
answers() { local ip; ip=$(field "$(pod "$1")" podIP); [ -n "$ip" ] && [ "$(q "$1.nginx.dev.svc.cluster.local")" = "$ip" ]; }
count_is() { [ "$(q "$1" | wc -l)" = "$2" ]; }
check "DNS: web-0.nginx.dev.svc.cluster.local is web-0's address" wait_for 20 answers web-0
check "... web-2.nginx.dev.svc.cluster.local web-2's" wait_for 20 answers web-2
check "... nginx.dev.svc.cluster.local has the three" wait_for 20 count_is nginx.dev.svc.cluster.local 3

# ---- a deleted pod comes back the same ----------------------------------------------
UID0=$(field "$(pod web-0)" uid)
check "rm web-0" rm "$(pod web-0)"
new_uid() { local u; u=$(field "$(pod "$1")" uid); [ -n "$u" ] && [ "$u" != "$2" ]; }
check "... web-0 comes back: a new pod of the same name" wait_for 30 new_uid web-0 "$UID0"
check "... on the same claim" grep -q 'claimName: www-web-0' "$(pod web-0)"
boots() { [ "$(grep -cx "web-$1" "$T/pv/$1/boots" 2>/dev/null)" -ge "$2" ]; }
check "... whose data it finds: the PV has both boots" wait_for 30 boots 0 2
check "... Ready again" wait_for 20 ready web-0
check "... and its new address in the DNS" wait_for 20 answers web-0

# ---- a partitioned rolling update ------------------------------------------------------
wait_for 20 status_is readyReplicas 3
check "partition 1 and a new template (sed -i)" \
	sed -i 's/^\( *\)partition: 0$/\1partition: 1/; s/exec sleep 3600/exec sleep 3601/' "$SS"
check "... both in the spec" sh -c "grep -q 'partition: 1' '$SS' && grep -q 'sleep 3601' '$SS'"
new_update() { local r; r=$(sed -n '/^status:/,$p' "$SS" | sed -n 's/^  updateRevision: //p'); [ -n "$r" ] && [ "$r" != "$REV1" ]; }
check "... a new ControllerRevision, the updateRevision" wait_for 20 new_update
REV2=$(sed -n '/^status:/,$p' "$SS" | sed -n 's/^  updateRevision: //p')
at() { local p r=$1; shift; for p; do [ "$(hash_of "$p")" = "$r" ] && ready "$p" || return 1; done; }
# the order: web-1 is not replaced while web-2 is not (yet) updated
order_ok() { [ "$(hash_of web-1)" != "$REV2" ] || at "$REV2" web-2 || touch "$T/order-bad"; }
updated2() { order_ok; at "$REV2" web-2 web-1; }
check "... web-2 and web-1 updated" wait_for 60 updated2
check "... web-2 first: web-1 was never at the new revision before web-2 was ready at it" test ! -e "$T/order-bad"
check "... web-0, below the partition, stays at the old revision" sh -c "! grep -q 'sleep 3601' '$(pod web-0)' && grep -q 'controller-revision-hash: $REV1' '$(pod web-0)'"
partial() { status_is updatedReplicas 2 && status_is currentReplicas 1 && status_is currentRevision "$REV1"; }
check "... status: 2 updated, 1 current, currentRevision the old one" wait_for 20 partial
history_settle
check "... web-0 still untouched once settled" grep -q "controller-revision-hash: $REV1" "$(pod web-0)"

# ---- rollback through git ------------------------------------------------------------
check "ControllerRevisions, claims and pods are not in the history" sh -c "! git --git-dir='$S/history.git' log --name-only --format= | grep -Eq '/(controllerrevisions|pods)/'"
GREV=$(git --git-dir="$S/history.git" log --format=%H -- namespaces/dev/statefulsets/web.yaml | sed -n 2p)
NREVS=$(ls "$D/controllerrevisions" | grep -c '^web-')
check "git show REV:path > path rolls back to the first template" sh -c "cd '$M' && git show $GREV:namespaces/dev/statefulsets/web.yaml > namespaces/dev/statefulsets/web.yaml"
check "... the updateRevision is the first one again" wait_for 20 status_is updateRevision "$REV1"
check "... every pod is back at it" wait_for 60 at "$REV1" web-0 web-1 web-2
check "... no new ControllerRevision" test "$(ls "$D/controllerrevisions" | grep -c '^web-')" = "$NREVS"
check "... the first is renumbered above the second" sh -c "[ \$(sed -n 's/^revision: //p' '$D/controllerrevisions/$REV1.yaml') -gt \$(sed -n 's/^revision: //p' '$D/controllerrevisions/$REV2.yaml') ]"
whole() { status_is currentRevision "$REV1" && status_is currentReplicas 3 && status_is updatedReplicas 3; }
check "... status: current = update again, 3 current" wait_for 30 whole

# ---- ordered scale-down -------------------------------------------------------------------
check "scale to 2: web-2 goes (the highest)" sh -c "sed -i 's/^  replicas: 3\$/  replicas: 2/' '$SS'"
check "... web-2 is gone" wait_for 30 gone web-2
check "... web-0 and web-1 stay" sh -c "[ -e '$(pod web-0)' ] && [ -e '$(pod web-1)' ]"
check "... its claim stays (whenScaled Retain)" readable "$(claim www-web-2)"
rm -f "$T/pv/0/ready"
unready() { ! ready "$1"; }
check "web-0 not ready" wait_for 20 unready web-0
check "... the controller sees it (1 of 2 ready)" wait_for 20 seen_unready 2 1
both() { [ -e "$(pod web-1)" ] && [ -e "$(pod web-0)" ]; }
check "scale to 1 while web-0 is not ready" sed -i 's/^  replicas: 2$/  replicas: 1/' "$SS"
check "... the controller has synced it" wait_for 20 observed
check "... and left web-1: it waits for web-0 to be ready" both
touch "$T/pv/0/ready"
check "web-0 ready again: web-1 goes" wait_for 30 gone web-1
check "... web-0 stays" test -e "$(pod web-0)"
check "scale to 0: web-0 goes" sed -i 's/^  replicas: 1$/  replicas: 0/' "$SS"
check "... web-0 is gone" wait_for 30 gone web-0
check "... status: 0 replicas" wait_for 20 seen_unready 0 0
check "events: SuccessfulDelete" sh -c "grep -l 'delete Pod web-1 in StatefulSet web successful' '$D'/events/*.yaml | grep -q ."

# ---- the set deleted ------------------------------------------------------------------
sed -i 's/^  replicas: 0$/  replicas: 1/' "$SS"
check "scaled back to 1: web-0 on its old claim and data" wait_for 30 boots 0 3
check "deleting the StatefulSet" rm "$SS"
check "... its pods go (garbage collector)" wait_for 30 gone web-0
norevs() { ! ls "$D/controllerrevisions" | grep -q '^web-'; }
check "... its ControllerRevisions go" wait_for 30 norevs
check "... its claims stay (whenDeleted Retain)" readable "$(claim www-web-0)" "$(claim www-web-1)" "$(claim www-web-2)"
check "... and the data on their PVs" test -s "$T/pv/1/boots"
stop_all
[ "$FAILS" = 0 ]
