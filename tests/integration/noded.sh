#!/bin/bash
# corral-noded against a real mount: hollow nodes register with capacity, a
# podCIDR and Ready; heartbeats advance without commits; pods bound by hand
# run with an IP of the node's range, keep it across a restart and give it
# back when deleted; nodes started together get distinct podCIDRs; a real
# node without its runtime registers NotReady and says why its pods wait.
. "$(dirname "$0")/../lib/lib.sh"
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
[ -x "$NODED" ] || { echo "not ok - no corral-noded binary at $NODED (run make)"; exit 1; }
NPIDS=()
STOP_RCS=
# stop_nodes: SIGTERM to every agent this test started, by PID; their exit
# statuses go to STOP_RCS
stop_nodes() {
	local p
	for p in "${NPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${NPIDS[@]}"; do wait "$p" 2>/dev/null; STOP_RCS+=" $?"; done
	NPIDS=()
}
trap 'stop_nodes; cleanup' EXIT
start_fs

# start_node NAME [ARGS...]: a node agent on the mount, logging to $T/NAME.log
start_node() {
	local name=$1
	shift
	"$NODED" --mount "$M" --name "$name" --heartbeat-period 1s "$@" >>"$T/$name.log" 2>&1 &
	NPIDS+=($!)
	eval "PID_${name//-/_}=$!"
}
node() { echo "$M/nodes/$1.yaml"; }
pod() { echo "$M/namespaces/dev/pods/$1.yaml"; }
# cond FILE TYPE: the status of condition TYPE
cond() { awk -v t="$2" '/^    status: /{s=$2} /^    type: /{ if ($2 == t) { gsub("\x27", "", s); print s; exit } }' "$1"; }
# beat FILE: the lastHeartbeatTime of the Ready condition
beat() { awk '/^  - lastHeartbeatTime: /{h=$3} /^    type: Ready$/{print h; exit}' "$1"; }
top() { sed -n "s/^  $2: //p" "$1" | tr -d "'"; } # FILE KEY: a key of spec or status
cidr_of() { top "$(node "$1")" podCIDR; }
ip_of() { top "$(pod "$1")" podIP; }
# in_cidr IP CIDR: IP lies in CIDR (a /24 or wider, as noded cuts them)
in_cidr() {
	local ip=$1 net=${2%/*} len=${2#*/} a b c d e f g h
	IFS=. read -r a b c d <<<"$ip"
	IFS=. read -r e f g h <<<"$net"
	local x=$(((a << 24) | (b << 16) | (c << 8) | d)) y=$(((e << 24) | (f << 16) | (g << 8) | h))
	local mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
	[ -n "$ip" ] && [ $((x & mask)) = $((y & mask)) ]
}
mkpod() { # NAME NODE
	cat >"$(pod "$1")" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  nodeName: $2
  initContainers: [{name: setup, image: busybox}]
  containers:
  - {name: app, image: "nginx:1.25"}
  - {name: side, image: busybox}
Y
}
running() { grep -q '^  phase: Running' "$(pod "$1")" && [ "$(cond "$(pod "$1")" Ready)" = True ] && [ -n "$(ip_of "$1")" ]; }
commits() { git --git-dir="$S/history.git" log --oneline -- "$@" 2>/dev/null | wc -l; }

# ---- a hollow node registers ----
start_node hollow-1 --hollow
check "a hollow node registers nodes/hollow-1.yaml" wait_for 10 readable "$(node hollow-1)"
N=$(node hollow-1)
check "capacity: kubemark's hollow sizes" sh -c "grep -A4 '^  capacity:' '$N' | grep -q \"cpu: '1'\" && grep -A4 '^  capacity:' '$N' | grep -q 'memory: 3840Mi' && grep -A4 '^  capacity:' '$N' | grep -q \"pods: '110'\""
check "allocatable is reported" grep -q '^  allocatable:' "$N"
C1=$(cidr_of hollow-1)
check "a podCIDR from 10.244.0.0/16 ($C1)" in_cidr "${C1%/*}" 10.244.0.0/16
check "spec.podCIDRs holds it too" grep -qx -- "  - $C1" "$N"
check "Ready is True" test "$(cond "$N" Ready)" = True
for t in MemoryPressure DiskPressure PIDPressure; do
	check "$t is False" test "$(cond "$N" $t)" = False
done
check "labels kubernetes.io/hostname, os and arch" sh -c "grep -q 'kubernetes.io/hostname: hollow-1' '$N' && grep -q 'kubernetes.io/os: linux' '$N' && grep -q 'kubernetes.io/arch: ' '$N'"
check "nodeInfo and an InternalIP address" sh -c "grep -q '^  nodeInfo:' '$N' && grep -q 'type: InternalIP' '$N'"
# the Lease is written after the node
check "a Lease in kube-node-lease" wait_for 10 readable "$M/namespaces/kube-node-lease/leases/hollow-1.yaml"

# ---- heartbeats ----
b1=$(beat "$N")
check "the heartbeat advances" wait_for 10 sh -c "[ \"\$(awk '/^  - lastHeartbeatTime: /{h=\$3} /^    type: Ready\$/{print h; exit}' '$N')\" != '$b1' ]"
b2=$(beat "$N")
wait_for 10 sh -c "[ \"\$(awk '/^  - lastHeartbeatTime: /{h=\$3} /^    type: Ready\$/{print h; exit}' '$N')\" != '$b2' ]" ||
	fail "a second heartbeat"
# the history is written behind the store: count once it has caught up
history_settle
check "heartbeats make no commits (one: the node's creation)" test "$(commits nodes/hollow-1.yaml)" = 1
check "Leases make no commits" test "$(commits namespaces/kube-node-lease)" = 0
check "the node's generation stays 1" grep -q "^  generation: 1$" "$N"

# ---- pods ----
mkdir -p "$M/namespaces/dev"
mkpod web hollow-1
check "a pod bound by hand becomes Running and Ready" wait_for 10 running web
P=$(pod web)
check "its podIP ($(ip_of web)) is in the podCIDR $C1" in_cidr "$(ip_of web)" "$C1"
check "hostIP and startTime are set" sh -c "grep -q '^  hostIP: ' '$P' && grep -q '^  startTime: ' '$P'"
check "every container is ready, started, running" sh -c "[ \$(grep -c '^    ready: true' '$P') = 3 ] && [ \$(grep -c '^    started: true' '$P') = 2 ] && [ \$(grep -c '^      running:' '$P') = 2 ]"
check "the init container completed" grep -q 'reason: Completed' "$P"
for t in PodScheduled Initialized ContainersReady; do
	check "condition $t is True" test "$(cond "$P" $t)" = True
done
check "restartCount, image and imageID are reported" sh -c "grep -q 'restartCount: 0' '$P' && grep -q 'image: nginx:1.25' '$P' && grep -q 'imageID: ' '$P'"
history_settle
check "a status update makes no commit" test "$(commits namespaces/dev/pods/web.yaml)" = 1
# a pod of a node no agent runs; checked once hollow-1 and hollow-2 have
# run pods written after it (each agent takes its events in order)
mkpod other nodeless-1

# ---- a second node, and three started together ----
start_node hollow-2 --hollow
check "a second hollow node registers" wait_for 10 readable "$(node hollow-2)"
C2=$(cidr_of hollow-2)
check "the two nodes have distinct podCIDRs ($C1, $C2)" test -n "$C2" -a "$C1" != "$C2"
start_node hollow-3 --hollow
start_node hollow-4 --hollow
start_node hollow-5 --hollow
check "three nodes started together register" wait_for 20 readable "$(node hollow-3)" "$(node hollow-4)" "$(node hollow-5)"
cidrs=$(for n in 1 2 3 4 5; do cidr_of hollow-$n; done)
check "five nodes, five distinct podCIDRs: $(echo $cidrs)" test "$(echo "$cidrs" | grep -c .)" = 5 -a "$(echo "$cidrs" | sort -u | wc -l)" = 5
mkpod on2 hollow-2
on2_ok() { running on2 && in_cidr "$(ip_of on2)" "$C2"; }
check "a pod of hollow-2 runs in hollow-2's range" wait_for 10 on2_ok

# ---- addresses given back, kept across a restart ----
mkpod second hollow-1
check "a second pod runs" wait_for 10 running second
refute "a pod of another node is left alone" grep -q '^status:' "$(pod other)"
ip1=$(ip_of web) ip2=$(ip_of second)
check "two pods, two addresses ($ip1, $ip2)" test -n "$ip2" -a "$ip1" != "$ip2"
rm "$(pod web)"
check "the agent gives the deleted pod's address back" wait_for 10 grep -q "pod dev/web deleted: released $ip1" "$T/hollow-1.log"
mkpod third hollow-1
check "a new pod gets the address given back" wait_for 10 sh -c "grep -q '^  podIP: $ip1\$' '$(pod third)'"

kill "$PID_hollow_1"
wait "$PID_hollow_1"
check "SIGTERM stops the agent cleanly" test $? = 0
check "a stopped node leaves its object" test -s "$N"
start_node hollow-1 --hollow
check "the restarted agent takes the node over" wait_for 10 sh -c "grep -c 'exists' '$T/hollow-1.log' | grep -q 1"
check "the node keeps its podCIDR" test "$(cidr_of hollow-1)" = "$C1"
mkpod fourth hollow-1
check "a pod bound after the restart runs" wait_for 10 running fourth
check "pods keep their addresses across a restart" test "$(ip_of second)" = "$ip2" -a "$(ip_of third)" = "$ip1"
ip4=$(ip_of fourth)
check "the new pod's address ($ip4) is none of theirs" test -n "$ip4" -a "$ip4" != "$ip1" -a "$ip4" != "$ip2"

# ---- a deleted node object is registered again ----
rm "$N"
check "a deleted node object comes back at the next heartbeat" wait_for 10 readable "$N"
check "with the same podCIDR" test "$(cidr_of hollow-1)" = "$C1"

# ---- a real node (its pods are tested in pods.sh) ----
printf '[cluster]\nstate = %s\n[noded]\nmax-pods = 50\n' "$T/state-real" >"$T/corral.conf"
bridges() { ip -br link show type bridge | grep -c '^crl' || true; }
nb=$(bridges)
start_node real-1 --config "$T/corral.conf" --cleanup-on-exit
check "a real node registers" wait_for 10 readable "$(node real-1)"
R=$(node real-1)
ready_real() { test "$(cond "$R" Ready)" = True; }
check "a real node is Ready once its bridge is up" wait_for 10 ready_real
check "it made a bridge of its own" test "$(bridges)" = $((nb + 1))
check "its cpu capacity is the machine's ($(nproc))" sh -c "grep -A4 '^  capacity:' '$R' | grep -q \"cpu: '$(nproc)'\""
check "max-pods from the config file" sh -c "grep -A4 '^  capacity:' '$R' | grep -q \"pods: '50'\""
check "the runtime is systemd-nspawn" grep -q 'containerRuntimeVersion: systemd-nspawn://' "$R"
check "the real node's agent is alive" kill -0 "$PID_real_1"

kill "$PID_real_1"
wait "$PID_real_1"
check "a real node's agent stops cleanly too" test $? = 0
check "and with --cleanup-on-exit takes its bridge away" test "$(bridges)" = "$nb"
stop_nodes
check "every agent exits 0 on SIGTERM (${STOP_RCS# })" test -z "$(echo $STOP_RCS | tr -d ' 0')"
check "no agent logged an error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T'/*.log"
grep -h ' \(warn\|error\): ' "$T"/*.log >&2
[ "$FAILS" = 0 ]
