#!/bin/bash
# corral-noded's pool of setups (issue 17) with a real runtime: a pod
# deleted while its setup runs on the pool, another deleted while its setup
# waits in the queue, and the agent stopped (SIGTERM) with a setup running
# and others queued, then restarted: nothing of any of them is left behind
# (processes, veth, cgroups, mounts, state, logs), a queued setup whose pod
# went or whose agent stops is never begun, and the restarted agent runs
# the pods that are declared, each once.
#
# The agent runs one setup at a time (pod-workers = 1) from a copy of its
# binaries whose corral-pause holds a pod's setup on its worker while
# $T/hold/POD exists and $T/go/POD does not: the test decides when a setup
# goes on, and waits for states, never for time.
. "$(dirname "$0")/../lib/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v systemd-nspawn >/dev/null ||
	{ echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
for b in corral-noded corral-shim corral-runas corral-pause; do
	[ -x "$BUILD/$b" ] || { echo "not ok - no $BUILD/$b (run make)"; exit 1; }
done
NODE=setup-$$
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate
mkdir -p "$LOGS" "$T/bin" "$T/hold" "$T/go"
cp "$BUILD/corral-noded" "$BUILD/corral-shim" "$BUILD/corral-runas" "$T/bin/"
# the pause: notes its pid, waits while its pod is held, then is the real one
cat >"$T/bin/corral-pause" <<EOF
#!/bin/sh
echo \$\$ >"$T/pause.\$1"
if [ -e "$T/hold/\$1" ]; then
	while [ ! -e "$T/go/\$1" ] && [ ! -e "$T/go/all" ]; do sleep 0.02; done
fi
exec "$BUILD/corral-pause" "\$@"
EOF
chmod 755 "$T/bin/corral-pause"
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\npod-workers = 1\n' \
	"$NSTATE" "$IMAGES" "$LOGS" >"$T/noded.conf"
CGROOT=/sys/fs/cgroup/memory
[ -d "$CGROOT" ] || CGROOT=/sys/fs/cgroup
CG=$CGROOT/corral/$(hash8 "$NODE")
PODS=$NSTATE/nodes/$NODE/pods
P=$M/namespaces/dev/pods

NPID=
start_node() { # [ARGS...]
	"$T/bin/corral-noded" --verbose --mount "$M" --name "$NODE" --config "$T/noded.conf" \
		--heartbeat-period 1s "$@" >>"$T/noded.log" 2>&1 &
	NPID=$!
}
stop_node() {
	[ -n "$NPID" ] || return 0
	kill "$NPID" 2>/dev/null
	wait "$NPID"
	local rc=$?
	NPID=
	return $rc
}
final_cleanup() {
	local p f
	touch "$T/go/all"
	stop_node
	if [ "$FAILS" != 0 ] && [ -n "${CORRAL_TEST_KEEP:-}" ]; then
		mkdir -p "$CORRAL_TEST_KEEP" && cp -r "$T"/*.log "$P" "$CORRAL_TEST_KEEP/" 2>/dev/null
	fi
	# what an agent that failed to clean up left: the pods' processes,
	# then the node's network, mounts and cgroups
	for p in $(pgrep -f -- "--director[y]=$NSTATE"); do kill -9 "$p" 2>/dev/null; done
	for f in "$T"/pause.*; do [ -e "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
	node_net_cleanup "$NSTATE" "$NODE"
	[ -d "$CG" ] && find "$CG" -depth -type d -exec rmdir {} + 2>/dev/null
	cleanup
}
trap final_cleanup EXIT

start_fs --pod-log-dir "$LOGS"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >/dev/null 2>&1 ||
	{ echo "not ok - corral image build-busybox failed"; exit 1; }
start_node --cleanup-on-exit
check "node $NODE registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml"
mkdir -p "$M/namespaces/dev"
pod() { echo "$P/$1.yaml"; }
mkpod() { # NAME: a busybox pod of this node that sleeps
	cat >"$(pod "$1")" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $NODE
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
Y
}
uid_of() { sed -n 's/^  uid: //p' "$(pod "$1")"; }
logged() { grep -q -- "$1" "$T/noded.log"; }
phase_is() { grep -q "^  phase: $2\$" "$(pod "$1")"; }
pause_of() { cat "$T/pause.$1" 2>/dev/null; }
# nspawns UID: how many systemd-nspawn run a container of the pod
nspawns() { pgrep -c -f -- "^systemd-nspawn .*--director[y]=$PODS/$1/"; }
# left UID NAME: something of the pod is still on the host (its nspawn or
# shim, its pause, veth, state, logs, mounts or cgroup)
left() {
	pgrep -f -- "--director[y]=$PODS/$1/" >/dev/null && return 0
	[ -n "$(pause_of "$2")" ] && kill -0 "$(pause_of "$2")" 2>/dev/null && return 0
	ip link show "crv$(hash8 "$1")" >/dev/null 2>&1 && return 0
	[ -e "$PODS/$1" ] && return 0
	compgen -G "$LOGS/*_$1" >/dev/null && return 0
	grep -q -- "$1" /proc/mounts && return 0
	[ -e "$CG/$1" ] && return 0
	return 1
}
gone() { ! left "$@"; }

# ---- deleted while its setup runs, and while it is queued ----
touch "$T/hold/a" "$T/hold/b"
mkpod a
check "a's setup is under way on the pool (its pause started, held)" wait_for 20 test -s "$T/pause.a"
mkpod b
check "b's setup waits in the queue behind it (one worker)" wait_for 20 logged "pod dev/b: setup queued"
UA=$(uid_of a) UB=$(uid_of b)
rm "$(pod a)" "$(pod b)"
check "a deleted while its setup runs: stopped once the setup is over" wait_for 20 logged "pod dev/a: stopping once its setup is over"
check "b deleted while queued: the same" wait_for 20 logged "pod dev/b: stopping once its setup is over"
touch "$T/go/a"
check "b's setup is called off before it begins" wait_for 30 logged "pod dev/b: its setup was called off before it began"
check "a leaves nothing on the host (processes, veth, state, logs, mounts, cgroup)" wait_for 30 gone "$UA" a
check "nor does b" wait_for 30 gone "$UB" b
check "b's pause was never started" test ! -e "$T/pause.b"
check "the agent still runs" kill -0 "$NPID"
check "and stopped with --cleanup-on-exit, exits 0" stop_node

# ---- SIGTERM with a setup running and two queued, then a restart ----
start_node
check "the agent, started again, registers Ready" wait_for 15 sh -c "grep -c 'following .* pods of this node' '$T/noded.log' | grep -qx 2"
touch "$T/hold/c"
mkpod c
check "c's setup is under way (held)" wait_for 20 test -s "$T/pause.c"
mkpod d
mkpod e
check "d's and e's setups wait in the queue" wait_for 20 sh -c "grep -q 'pod dev/d: setup queued' '$T/noded.log' && grep -q 'pod dev/e: setup queued' '$T/noded.log'"
UC=$(uid_of c) UD=$(uid_of d) UE=$(uid_of e)
PAUSE_C=$(pause_of c)
kill -TERM "$NPID"
check "SIGTERM: the agent stops" wait_for 10 logged "Terminated: stopping"
touch "$T/go/c"
wait "$NPID"
RC=$?
NPID=
check "and exits 0 once c's setup is over (it did: $RC)" test "$RC" = 0
check "d's and e's setups were called off" sh -c "grep -q 'pod dev/d: its setup was called off' '$T/noded.log' && grep -q 'pod dev/e: its setup was called off' '$T/noded.log'"
c_runs_on() { kill -0 "$PAUSE_C" && [ "$(nspawns "$UC")" = 1 ]; }
check "c, whose setup was under way, was finished and runs on (its pause, one nspawn)" wait_for 20 c_runs_on
check "c is recorded for the next agent (pause and shim state)" test -s "$PODS/$UC/pause" -a -s "$PODS/$UC/c/c/shim"
check "nothing of d was made (pause, veth, nspawn, mounts, cgroup)" gone "$UD" d
check "nor of e" gone "$UE" e
rm "$(pod e)"
start_node --cleanup-on-exit
check "the restarted agent runs c and d" wait_for 60 sh -c "grep -q '^  phase: Running' '$(pod c)' && grep -q '^  phase: Running' '$(pod d)'"
c_adopted() { [ "$(pause_of c)" = "$PAUSE_C" ] && c_runs_on; }
check "c is adopted, not started again: the same pause, one nspawn" c_adopted
d_once() { [ "$(nspawns "$UD")" = 1 ]; }
check "d runs once" d_once
check "e, deleted while the agent was down, is never set up" sh -c "! grep -q 'pod dev/e: sandbox up' '$T/noded.log' && test ! -e '$T/pause.e'"
check "and leaves nothing" wait_for 30 gone "$UE" e
rm "$(pod c)" "$(pod d)"
both_gone() { gone "$UC" c && gone "$UD" d; }
check "c and d deleted leave nothing" wait_for 30 both_gone
check "no pod state is left" wait_for 10 sh -c "[ -z \"\$(ls '$PODS' 2>/dev/null)\" ]"
check "the agent stopped with --cleanup-on-exit exits 0" stop_node
check "no agent logged an error" sh -c "! grep -e ' error: ' -e 'Sanitizer' '$T/noded.log'"
[ "$FAILS" = 0 ]
