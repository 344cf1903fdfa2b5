#!/bin/bash
# Nodes that fail over, on a real mount with corral-fs, corral-ctrl,
# corral-sched and hollow corral-noded agents (short intervals from
# corral.conf): Leases renewed; the default tolerations; a node killed with
# kill -9 turns Unknown and tainted, its pods not ready at once and replaced
# elsewhere after their tolerationSeconds, a pod that tolerates for ever
# kept; the node back is untainted; a NoExecute taint written with sed
# evicts; cordon keeps new pods off; drain with a PodDisruptionBudget
# blocks until the budget allows, and the budget's status; then one real
# node (systemd-nspawn) killed, whose pod is replaced on another.
. "$(dirname "$0")/../lib/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
CORRAL=$ROOT/tools/corral
for b in "$CTRL" "$SCHED" "$NODED"; do
	[ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }
done
declare -A NPID
PIDS=()
REAL=nodes-real
NSTATE=$T/nstate
stop_node() { # NAME [SIGNAL]
	local p=${NPID[$1]:-}
	[ -n "$p" ] || return 0
	kill -"${2:-TERM}" "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	NPID[$1]=
}
final_cleanup() {
	local n p
	for n in "${!NPID[@]}"; do stop_node "$n"; done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "${NODES_TEST_LOGS:-}" ] && cp -r "$T"/*.log "$T"/*.out "$M/namespaces/dev/pods" "$NODES_TEST_LOGS"/ 2>/dev/null
	node_net_cleanup "$NSTATE" "$REAL"
	cleanup
}
trap final_cleanup EXIT

GRACE=2 TOL=3
cat >"$T/corral.conf" <<EOF
[fs]
default-not-ready-toleration-seconds = $TOL
default-unreachable-toleration-seconds = $TOL
[ctrl]
node-monitor-grace-period = ${GRACE}s
node-eviction-rate = 100
[noded]
heartbeat-period = 500ms
node-lease-renew-interval = 500ms
EOF
start_fs --config "$T/corral.conf"
"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
PIDS+=($!)
"$CTRL" --mount "$M" --config "$T/corral.conf" --leader-elect=false >>"$T/ctrl.log" 2>&1 &
PIDS+=($!)
start_hollow() { # NAME
	"$NODED" --mount "$M" --name "$1" --hollow --config "$T/corral.conf" >>"$T/$1.log" 2>&1 &
	NPID[$1]=$!
}
for n in h1 h2 h3; do start_hollow $n; done
node() { echo "$M/nodes/$1.yaml"; }
check "three hollow nodes register" wait_for 20 readable "$(node h1)" "$(node h2)" "$(node h3)"
mkdir -p "$M/namespaces/dev"
D=$M/namespaces/dev
P=$D/pods

# cond FILE TYPE: the status of the condition TYPE in FILE's status
cond() {
	sed -n '/^status:/,$p' "$1" | awk -v t="$2" '
		/^  [a-zA-Z]/ { inc = ($0 ~ /^  conditions:/); next }
		inc && /^  - / { if (ty == t) { print st; found = 1; exit } ty = ""; st = "" }
		inc { l = $0; sub(/^  [- ] /, "", l); gsub(/'"'"'/, "", l)
			if (l ~ /^ *type: /) { sub(/^ *type: /, "", l); ty = l }
			if (l ~ /^ *status: /) { sub(/^ *status: /, "", l); st = l } }
		END { if (!found && ty == t) print st }'
}
cond_is() { [ "$(cond "$1" "$2")" = "$3" ]; }
# taint FILE KEY EFFECT: FILE's spec.taints has it
taint() { sed -n '/^spec:/,/^[a-z]/p' "$1" | awk -v k="$2" -v e="$3" '
	/^  taints:/ { in_t = 1; next } in_t && /^  [^ -]/ { in_t = 0 }
	in_t && /^  - / { if (kk == k && ee == e) f = 1; kk = ""; ee = "" }
	in_t { l = $0; sub(/^  [- ] /, "", l)
		if (l ~ /^ *key: /) { sub(/^ *key: /, "", l); kk = l }
		if (l ~ /^ *effect: /) { sub(/^ *effect: /, "", l); ee = l } }
	END { if (kk == k && ee == e) f = 1; exit !f }'; }
untainted() { ! sed -n '/^spec:/,/^[a-z]/p' "$1" | grep -q '^  taints:'; }
node_of() { sed -n 's/^  nodeName: //p' "$1" 2>/dev/null; }
pods_of() { grep -l "app: $1\$" "$P"/*.yaml 2>/dev/null; } # APP
on_node() { local f; for f in $(pods_of "$1"); do [ "$(node_of "$f")" = "$2" ] && echo "$f"; done; }
# all_ready APP N [NOT-ON]: N pods of APP, all Ready, none on node NOT-ON
all_ready() {
	local f n=0
	for f in $(pods_of "$1"); do
		cond_is "$f" Ready True || return 1
		[ -n "${3:-}" ] && [ "$(node_of "$f")" = "$3" ] && return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$2" ]
}
lease=$M/namespaces/kube-node-lease/leases/h1.yaml

# ---- Leases ------------------------------------------------------------------
check "each node has a Lease in kube-node-lease" wait_for 10 readable "$lease"
check "... held by the node, for 40 s" sh -c "grep -q '^  holderIdentity: h1$' '$lease' && grep -q '^  leaseDurationSeconds: 40$' '$lease'"
r1=$(sed -n 's/^  renewTime: //p' "$lease")
check "... renewed on its interval" wait_for 5 sh -c "[ \"\$(sed -n 's/^  renewTime: //p' '$lease')\" != '$r1' ]"

# ---- default tolerations, and a ReplicaSet over the three nodes --------------
cat >"$D/replicasets/web.yaml" <<'Y'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
Y
check "a ReplicaSet's 6 pods run and are ready" wait_for 20 all_ready web 6
F=$(pods_of web | head -1)
check "pods get the not-ready and unreachable NoExecute tolerations ($TOL s)" sh -c "
	grep -q 'key: node.kubernetes.io/not-ready' '$F' && grep -q 'key: node.kubernetes.io/unreachable' '$F' &&
	[ \$(grep -c 'tolerationSeconds: $TOL\$' '$F') = 2 ] && grep -q 'effect: NoExecute' '$F'"
check "the pods are spread over the three nodes" sh -c "[ \$(for f in \$(grep -l 'app: web\$' '$P'/*.yaml); do sed -n 's/^  nodeName: //p' \$f; done | sort -u | wc -l) = 3 ]"
# a pod on h1 that tolerates unreachable for ever, behind a Service
cat >"$P/stay.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: stay, labels: {app: stay}}
spec:
  nodeName: h1
  tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}]
  containers: [{name: c, image: busybox}]
Y
cat >"$D/services/stay.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: stay}
spec: {selector: {app: stay}, ports: [{port: 80}]}
Y
check "a pod tolerating unreachable for ever runs on h1, in its Endpoints" \
	wait_for 60 sh -c "grep -q '^  - ip: ' '$D/endpoints/stay.yaml'"
ON_H1=$(on_node web h1 | wc -l)
check "h1 holds some of the ReplicaSet's pods" test "$ON_H1" -gt 0

# ---- kill -9 of a hollow node -------------------------------------------------
stop_node h1 KILL
check "the killed node turns Ready Unknown after the grace period" wait_for 15 cond_is "$(node h1)" Ready Unknown
check "... with Kubernetes' message" grep -q 'message: Kubelet stopped posting node status.' "$(node h1)"
check "... tainted unreachable NoSchedule" taint "$(node h1)" node.kubernetes.io/unreachable NoSchedule
check "... and NoExecute, with timeAdded" wait_for 10 sh -c "grep -q 'timeAdded:' '$(node h1)'"
check "... (NoExecute)" wait_for 10 taint "$(node h1)" node.kubernetes.io/unreachable NoExecute
check "its pods get Ready False at once, and leave Endpoints" \
	wait_for 10 sh -c "! grep -Eq '^[- ] addresses:' '$D/endpoints/stay.yaml' && grep -q 'notReadyAddresses:' '$D/endpoints/stay.yaml'"
check "... the ReplicaSet's pods are replaced on the other nodes after $TOL s" wait_for 30 all_ready web 6 h1
check "... the taint manager said so in an Event" wait_for 10 sh -c "grep -l 'reason: TaintManagerEviction' '$D'/events/*.yaml | xargs grep -l 'Marking for deletion Pod dev/web' | grep -q ."
check "the pod tolerating for ever is kept" test -f "$P/stay.yaml"
check "... not ready" cond_is "$P/stay.yaml" Ready False
check "new pods are not bound to the tainted node" sh -c "[ -z \"\$(for f in \$(grep -l 'app: web\$' '$P'/*.yaml); do sed -n 's/^  nodeName: //p' \$f; done | grep -x h1)\" ]"

# ---- the node comes back -------------------------------------------------------
start_hollow h1
check "the node back is Ready again" wait_for 15 cond_is "$(node h1)" Ready True
check "... and its taints are gone" wait_for 10 untainted "$(node h1)"
check "... the pod kept is ready again" wait_for 10 cond_is "$P/stay.yaml" Ready True

# ---- a NoExecute taint written by a person -------------------------------------
add_taint() { # NODE: a NoExecute taint by sed -i (again on a conflict with a heartbeat)
	local i
	for i in $(seq 50); do
		sed -i '/^spec:/a\  taints: [{key: example.com/maintenance, value: "yes", effect: NoExecute}]' "$(node "$1")" 2>/dev/null
		taint "$(node "$1")" example.com/maintenance NoExecute && return 0
		sleep 0.1
	done
	return 1
}
del_taint() { # NODE: spec.taints out (h2 has no other), by a read-modify-write
	local i f
	f=$(node "$1")
	for i in $(seq 50); do
		awk '/^  taints:/ { skip = 1; next } skip && /^  - |^    / { next } { skip = 0; print }' "$f" >"$T/node.new"
		cat "$T/node.new" >"$f" 2>/dev/null
		grep -q example.com/maintenance "$f" || return 0
		sleep 0.1
	done
	return 1
}
# sed_retry FILE EXPR: sed -i, again while a controller's write gets in between
sed_retry() {
	local i
	for i in $(seq 50); do
		sed -i "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_for 10 all_ready web 6 || fail "the ReplicaSet is whole before the taint"
ON_H2=$(on_node web h2 | wc -l)
check "sed -i adds a NoExecute taint to h2 ($ON_H2 of the pods are there)" add_taint h2
check "... the pods that do not tolerate it are evicted at once and replaced" wait_for 20 all_ready web 6 h2
check "... none of them is on h2 any more" test -z "$(on_node web h2)"
check "the taint removed by sed, h2 takes pods again" del_taint h2

# ---- cordon ----------------------------------------------------------------------
check "corral cordon h3" sh -c "'$CORRAL' cordon h3 --mount '$M' | grep -qx 'node/h3 cordoned'"
check "... spec.unschedulable: true" grep -q '^  unschedulable: true$' "$(node h3)"
check "... the controller adds the unschedulable NoSchedule taint" wait_for 10 taint "$(node h3)" node.kubernetes.io/unschedulable NoSchedule
check "... cordon again says so" sh -c "'$CORRAL' cordon h3 --mount '$M' | grep -qx 'node/h3 already cordoned'"
pods_of web | sort >"$T/before"
sed_retry "$D/replicasets/web.yaml" 's/replicas: 6/replicas: 9/'
check "a ReplicaSet scaled to 9 while h3 is cordoned" wait_for 20 all_ready web 9
check "... puts none of its new pods there" sh -c "for f in \$(ls '$P'/*.yaml | sort | comm -13 '$T/before' -); do grep -q '^  nodeName: h3\$' \$f && exit 1; done; exit 0"
check "corral uncordon h3 takes it off" sh -c "'$CORRAL' uncordon h3 --mount '$M' | grep -qx 'node/h3 uncordoned' && ! grep -q '^  unschedulable:' '$(node h3)'"
check "... and its taint" wait_for 10 untainted "$(node h3)"
sed_retry "$D/replicasets/web.yaml" 's/replicas: 9/replicas: 6/'

# ---- drain with a PodDisruptionBudget ---------------------------------------------
"$CORRAL" cordon h1 --mount "$M" >/dev/null
"$CORRAL" cordon h3 --mount "$M" >/dev/null
cat >"$D/deployments/db.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: busybox}]}
Y
check "a Deployment's 3 pods run on h2 (h1 and h3 cordoned)" wait_for 20 all_ready db 3
check "... all on h2" test "$(on_node db h2 | wc -l)" = 3
"$CORRAL" uncordon h1 --mount "$M" >/dev/null
"$CORRAL" uncordon h3 --mount "$M" >/dev/null
cat >"$D/poddisruptionbudgets/db.yaml" <<'Y'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  minAvailable: 3
  selector: {matchLabels: {app: db}}
Y
PDB=$D/poddisruptionbudgets/db.yaml
pdb() { sed -n '/^status:/,$p' "$PDB" | sed -n "s/^  $1: //p"; }
pdb_is() { [ "$(pdb "$1")" = "$2" ]; }
check "the PDB's status: currentHealthy 3, desiredHealthy 3, expectedPods 3" \
	wait_for 10 sh -c "sed -n '/^status:/,\$p' '$PDB' | grep -q '^  currentHealthy: 3' && sed -n '/^status:/,\$p' '$PDB' | grep -q '^  desiredHealthy: 3' && sed -n '/^status:/,\$p' '$PDB' | grep -q '^  expectedPods: 3'"
check "... disruptionsAllowed 0, DisruptionAllowed False InsufficientPods" sh -c "
	sed -n '/^status:/,\$p' '$PDB' | grep -q '^  disruptionsAllowed: 0' && grep -q 'reason: InsufficientPods' '$PDB'"
check "... observedGeneration 1" pdb_is observedGeneration 1
"$CORRAL" drain h2 --mount "$M" --ignore-daemonsets --retry-interval 1 >"$T/drain.out" 2>&1 &
DRAIN=$!
PIDS+=($DRAIN)
check "corral drain h2 cordons it" wait_for 10 grep -q '^  unschedulable: true$' "$(node h2)"
check "... evicts the pods no budget covers" wait_for 20 sh -c "[ -z \"\$(for f in \$(grep -l 'app: web\$' '$P'/*.yaml); do sed -n 's/^  nodeName: //p' \$f; done | grep -x h2)\" ]"
check "... and is refused for the budget's, with Kubernetes' message" wait_for 20 \
	grep -q "error when evicting pods/\"db-.*\" -n \"dev\" (will retry after 1s): Cannot evict pod as it would violate the pod's disruption budget." "$T/drain.out"
check "... while the db pods stay" sh -c "[ \$(grep -l 'app: db\$' '$P'/*.yaml | wc -l) = 3 ] && kill -0 $DRAIN"
# one disruption at a time
sed_retry "$PDB" 's/minAvailable: 3/minAvailable: 2/'
check "with minAvailable 2 the budget allows a disruption" wait_for 20 sh -c "sed -n '/^status:/,\$p' '$PDB' | grep -Eq '^  disruptionsAllowed: [1-9]' && grep -q 'reason: SufficientPods' '$PDB'"
check "... the drain goes through" wait_for 60 sh -c "! kill -0 $DRAIN 2>/dev/null"
wait $DRAIN
check "... exits 0 saying node/h2 drained" sh -c "[ $? = 0 ] && grep -qx 'node/h2 drained' '$T/drain.out'"
check "... nothing of the ReplicaSet or Deployment is left on h2" sh -c "[ -z \"\$(for f in '$P'/*.yaml; do sed -n 's/^  nodeName: //p' \$f; done | grep -x h2)\" ]"
check "... the db pods run again elsewhere" wait_for 30 all_ready db 3 h2
check "... the budget counts them" wait_for 20 pdb_is currentHealthy 3
check "maxUnavailable as a percentage: of the Deployment's replicas, rounded up" \
	sed_retry "$PDB" 's/minAvailable: 2/maxUnavailable: 50%/'
check "... desiredHealthy 1, disruptionsAllowed 2" wait_for 20 sh -c "sed -n '/^status:/,\$p' '$PDB' | grep -q '^  desiredHealthy: 1' && sed -n '/^status:/,\$p' '$PDB' | grep -q '^  disruptionsAllowed: 2'"
"$CORRAL" uncordon h2 --mount "$M" >/dev/null

# ---- a real node ------------------------------------------------------------------
IMAGES=$T/images
"$CORRAL" image build-busybox --images "$IMAGES" >/dev/null 2>&1 || fail "corral image build-busybox"
cat >>"$T/corral.conf" <<EOF
state = $NSTATE
images = $IMAGES
pod-log-dir = $T/logs
eviction-memory-available = 1Mi
EOF
mkdir -p "$T/logs"
start_real() {
	"$NODED" --mount "$M" --name "$REAL" --config "$T/corral.conf" --cleanup-on-exit >>"$T/$REAL.log" 2>&1 &
	NPID[$REAL]=$!
}
start_real
check "a real node registers and is ready" wait_for 30 cond_is "$(node $REAL)" Ready True
cat >"$D/replicasets/real.yaml" <<Y
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: real}
spec:
  replicas: 1
  selector: {matchLabels: {app: real}}
  template:
    metadata: {labels: {app: real}}
    spec:
      affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$REAL]}]}}]}}
      containers: [{name: c, image: busybox, command: [sleep, "3600"]}]
Y
check "a pod runs in a container on the real node" wait_for 40 sh -c "f=\$(grep -l 'app: real\$' '$P'/*.yaml | head -1); [ -n \"\$f\" ] && grep -q '^  nodeName: $REAL\$' \$f && grep -q '^  phase: Running' \$f"
stop_node "$REAL" KILL
check "the real node killed turns Unknown and tainted" wait_for 20 sh -c "grep -q 'Kubelet stopped posting node status.' '$(node $REAL)'"
check "... its pod is replaced on a hollow node" wait_for 40 all_ready real 1 "$REAL"
start_real
real_back() { cond_is "$(node $REAL)" Ready True && untainted "$(node $REAL)"; }
check "the real node back is Ready and untainted" wait_for 30 real_back
check "... and takes back no pod it no longer owns" sh -c "[ -z \"\$(for f in '$P'/*.yaml; do sed -n 's/^  nodeName: //p' \$f; done | grep -x '$REAL')\" ]"
stop_node "$REAL"

echo "# $FAILS failed"
[ "$FAILS" = 0 ]
