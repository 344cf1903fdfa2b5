#!/bin/bash
# bench/ctrl.sh BUILD_DIR: corral-ctrl end to end through a private mount.
#
# Starts a private corral-fs (state and mount in a temporary folder) with
# nodes that bind pods and make them ready: corral-sched and hollow
# corral-noded when their binaries are there (BENCH_NODES=hollow), else
# tests/tools/fake-kubelet (BENCH_NODES=fake). Then, with corral-ctrl:
#   1. a Deployment of BENCH_REPLICAS (100) replicas dropped into the mount:
#      time until every pod exists, is bound, is ready;
#   2. a rolling update of it (maxSurge and maxUnavailable 25%), with the
#      pods counted at every inotify event: the surge and unavailability
#      bounds must hold at every one of them;
#   3. BENCH_DEPLOYMENTS (1000) Deployments of 3 replicas written while
#      corral-ctrl is stopped, then a cold start: time until all pods exist
#      and are ready (this phase binds pods with fake-kubelet, which has no
#      capacity to run out of and costs little: it measures corral-ctrl);
#   4. a restart with everything in place: time to list, and the writes it
#      makes (none is needed);
#   5. CPU used by corral-ctrl in 10 idle seconds.
# Baselines, measured in the same run: the same number of plain object
# writes through the mount by 16 threads (bench/fsbench), and for the
# restart the time to read every pod file once. Prints one table: metric,
# corral, baseline, ratio. Asserts nothing about time; it fails when it
# cannot measure, or when a bound of the rolling update is broken.
#
# Knobs: BENCH_REPLICAS (100), BENCH_DEPLOYMENTS (1000), BENCH_NODES
# (hollow|fake) for phases 1 and 2, BENCH_HOLLOW nodes (enough for twice
# BENCH_REPLICAS, 110 pods each), BENCH_WAIT_MAX seconds per phase
# (120), BENCH_KEEP=1 keeps the temporary folder and the logs.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/ctrl.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl SCHED=$B/corral-sched NODED=$B/corral-noded
CENSUS=$B/tests/tools/pod-census FAKE=$B/tests/tools/fake-kubelet FSB=$B/fsbench
REPLICAS=${BENCH_REPLICAS:-100}
NDEP=${BENCH_DEPLOYMENTS:-1000}
# hollow nodes take 110 pods each: enough for the first Deployment
HOLLOW=${BENCH_HOLLOW:-$(( REPLICAS * 2 / 110 + 1 ))}
WAIT_MAX=${BENCH_WAIT_MAX:-120}
NODES=${BENCH_NODES:-}
for b in "$FS" "$CTRL" "$CENSUS" "$FAKE"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem)"
[ -c /dev/fuse ] || die "no /dev/fuse"
cc -O2 -pthread -o "$FSB" "$SRC/fsbench.c" || die "cannot build fsbench"
if [ -z "$NODES" ]; then
	if [ -x "$SCHED" ] && [ -x "$NODED" ]; then NODES=hollow; else NODES=fake; fi
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-ctrlbench.XXXXXX") || die "mktemp fails"
M=$T/mnt
mkdir -p "$M"
PIDS=() CTRL_PID= FSPID=
cleanup() {
	set +e
	for p in "${PIDS[@]}" $CTRL_PID; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}" $CTRL_PID; do wait "$p" 2>/dev/null; done
	if [ -n "$FSPID" ]; then
		kill "$FSPID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$FSPID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$FSPID" 2>/dev/null
		wait "$FSPID" 2>/dev/null
	fi
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { date +%s%3N; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
# wait_line FILE AWK-CONDITION: until a line of FILE meets it; echoes the line.
wait_line() {
	local end=$((SECONDS + WAIT_MAX)) l
	while [ $SECONDS -lt $end ]; do
		l=$(awk "$2 { print; exit }" "$1" 2>/dev/null)
		[ -n "$l" ] && { echo "$l"; return 0; }
		sleep 0.05
	done
	return 1
}
fsbench_secs() { "$FSB" "$@" | tr ' ' '\n' | sed -n 's/^secs=//p'; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
start_ctrl() {
	"$CTRL" --mount "$M" >>"$T/ctrl.log" 2>&1 &
	CTRL_PID=$!
}
stop_ctrl() {
	kill -TERM "$CTRL_PID"
	wait "$CTRL_PID"
	CTRL_PID=
}
ROWS=()
row() { ROWS+=("$(printf '%-44s %12s %12s %8s' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }

"$FS" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount: $(tail -2 "$T/fs.log")"

start_nodes() {
	if [ "$NODES" = hollow ]; then
		"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
		PIDS+=($!)
		for i in $(seq "$HOLLOW"); do
			"$NODED" --mount "$M" --name "hollow-$i" --hollow >>"$T/noded-$i.log" 2>&1 &
			PIDS+=($!)
		done
		local end=$((SECONDS + 20))
		while [ $SECONDS -lt $end ]; do
			[ "$(ls "$M/nodes" 2>/dev/null | wc -l)" -ge "$HOLLOW" ] && return 0
			sleep 0.1
		done
		echo "bench: hollow nodes did not register ($(tail -1 "$T/noded-1.log")); using fake-kubelet" >&2
		for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
		PIDS=()
		NODES=fake
	fi
	"$FAKE" --threads 16 "$M" >>"$T/fake-kubelet.log" 2>&1 &
	PIDS+=($!)
}
start_nodes

# Baseline: plain writes of as many objects, 16 threads.
mkdir "$M/namespaces/base1"
B1=$(fsbench_secs write -d "$M/namespaces/base1/pods" -n "$REPLICAS" -t 16 -k pod -p p -N base1)
rm -rf "$M/namespaces/base1" 2>/dev/null
NODES1=$NODES

# 1. One Deployment of REPLICAS.
mkdir "$M/namespaces/big"
start_ctrl
"$CENSUS" --time --bound --image busybox:2 "$M" big app=big >"$T/census-big.log" 2>&1 &
PIDS+=($!)
sleep 0.5
cat >"$T/big.yaml" <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: $REPLICAS
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: c, image: busybox, command: [sleep, "3600"]}]}
Y
t0=$(now_ms)
cp "$T/big.yaml" "$M/namespaces/big/" || die "the drop box refused the Deployment"
l=$(wait_line "$T/census-big.log" "\$2 >= $REPLICAS") || die "$REPLICAS pods were not created: $(tail -1 "$T/census-big.log")"
created=$(calc "($(echo "$l" | cut -d' ' -f1) - $t0) / 1000")
l=$(wait_line "$T/census-big.log" "\$5 >= $REPLICAS") || die "$REPLICAS pods were not bound"
bound=$(calc "($(echo "$l" | cut -d' ' -f1) - $t0) / 1000")
l=$(wait_line "$T/census-big.log" "\$3 >= $REPLICAS") || die "$REPLICAS pods did not become ready"
ready=$(calc "($(echo "$l" | cut -d' ' -f1) - $t0) / 1000")
row "$REPLICAS replicas: all created, s [$REPLICAS writes]" "$created" "$B1"
row "$REPLICAS replicas: all bound, s [$REPLICAS writes]" "$bound" "$B1"
row "$REPLICAS replicas: all ready, s [$REPLICAS writes]" "$ready" "$B1"

# 2. A rolling update of it, checked at every event.
surge=$(( (REPLICAS * 25 + 99) / 100 )) unavail=$(( REPLICAS * 25 / 100 ))
wait_line "$T/census-big.log" "\$2 == $REPLICAS && \$3 == $REPLICAS" >/dev/null
start_line=$(wc -l <"$T/census-big.log")
t0=$(now_ms)
sed -i 's/image: busybox$/image: busybox:2/' "$M/namespaces/big/deployments/big.yaml" || die "sed -i of the Deployment failed"
l=$(wait_line "$T/census-big.log" "\$2 == $REPLICAS && \$3 == $REPLICAS && \$4 == $REPLICAS") || die "the rolling update did not finish: $(tail -1 "$T/census-big.log")"
rolled=$(calc "($(echo "$l" | cut -d' ' -f1) - $t0) / 1000")
steps=$(tail -n +$((start_line + 1)) "$T/census-big.log" | wc -l)
maxpods=$(tail -n +$((start_line + 1)) "$T/census-big.log" | awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }')
minready=$(tail -n +$((start_line + 1)) "$T/census-big.log" | awk 'BEGIN { m = 1e9 } $3 < m { m = $3 } END { print m }')
row "rolling update of $REPLICAS: done, s [$REPLICAS writes]" "$rolled" "$B1"
BOUNDS="rolling update: $steps events seen; most pods $maxpods (bound $((REPLICAS + surge))), fewest ready $minready (bound $((REPLICAS - unavail)))"
BOUNDS_OK=1
[ "$maxpods" -le $((REPLICAS + surge)) ] && [ "$minready" -ge $((REPLICAS - unavail)) ] || BOUNDS_OK=0

# 3. Cold start with NDEP Deployments x 3, on fake-kubelet.
stop_ctrl
rm "$M/namespaces/big/deployments/big.yaml"
for _ in $(seq 200); do [ "$(ls "$M/namespaces/big/pods" | wc -l)" = 0 ] && break; sleep 0.1; done
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
PIDS=()
"$FAKE" --threads 16 "$M" >>"$T/fake-kubelet.log" 2>&1 &
PIDS+=($!)
mkdir "$M/namespaces/base2"
B3=$(fsbench_secs write -d "$M/namespaces/base2/pods" -n $((NDEP * 4)) -t 16 -k pod -p p -N base2)
rm -rf "$M/namespaces/base2" 2>/dev/null
mkdir "$M/namespaces/fleet"
mkdir -p "$T/fleet"
for i in $(seq "$NDEP"); do
	cat >"$T/fleet/d$i.yaml" <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: d$i, labels: {fleet: "yes"}}
spec:
  replicas: 3
  selector: {matchLabels: {app: d$i}}
  template:
    metadata: {labels: {app: d$i, fleet: "yes"}}
    spec: {containers: [{name: c, image: busybox, command: [sleep, "3600"]}]}
Y
done
ls "$T/fleet" | xargs -P 16 -I{} cp "$T/fleet/{}" "$M/namespaces/fleet/deployments/{}"
[ "$(ls "$M/namespaces/fleet/deployments" | wc -l)" = "$NDEP" ] || die "could not write the $NDEP Deployments"
"$CENSUS" --time --bound "$M" fleet fleet=yes >"$T/census-fleet.log" 2>&1 &
PIDS+=($!)
sleep 0.5
t0=$(now_ms)
start_ctrl
want=$((NDEP * 3))
l=$(wait_line "$T/census-fleet.log" "\$2 >= $want") || die "cold start: the pods were not all created: $(tail -1 "$T/census-fleet.log")"
cold_created=$(calc "($(echo "$l" | cut -d' ' -f1) - $t0) / 1000")
if l=$(wait_line "$T/census-fleet.log" "\$3 >= $want"); then
	cold_ready=$(calc "($(echo "$l" | cut -d' ' -f1) - $t0) / 1000")
else
	cold_ready=-
	echo "bench: cold start: only $(tail -1 "$T/census-fleet.log" | cut -d' ' -f3) of $want pods became ready in ${WAIT_MAX}s" >&2
fi
row "$NDEP x 3 cold start: pods created, s [$((NDEP * 4)) writes]" "$cold_created" "$B3"
row "$NDEP x 3 cold start: pods ready, s [$((NDEP * 4)) writes]" "$cold_ready" "$B3"

# 4. Restart with everything in place.
sleep 3
stop_ctrl
# versions: the resourceVersion of every Deployment, ReplicaSet and pod.
versions() { grep -H '^  resourceVersion:' "$M"/namespaces/fleet/{deployments,replicasets,pods}/*.yaml | sort; }
versions >"$T/rv0"
t0=$(now_ms)
start_ctrl
for _ in $(seq $((WAIT_MAX * 10))); do grep -q 'controllers started' "$T/ctrl.log" && [ "$(grep -c 'controllers started' "$T/ctrl.log")" -ge 3 ] && break; sleep 0.1; done
listed=$(grep 'controllers started' "$T/ctrl.log" | tail -1 | sed -n 's/.*listed in \([0-9]*\) ms.*/\1/p')
sleep 5
versions >"$T/rv1"
extra=$(diff "$T/rv0" "$T/rv1" | grep -c '^>')
t=$(now_ms)
"$FSB" read -d "$M/namespaces/fleet/pods" -n "$want" -t 1 >/dev/null
readall=$(calc "($(now_ms) - $t) / 1000")
row "restart: every kind listed, s [read $want pods]" "$(calc "$listed / 1000")" "$readall"
row "restart: objects it rewrote in 5 s (none needed)" "$extra" "-"

# 5. Idle CPU.
c0=$(cpu_ticks "$CTRL_PID")
sleep 10
c1=$(cpu_ticks "$CTRL_PID")
row "idle: corral-ctrl CPU in 10 s, s" "$(calc "($c1 - $c0) / $(getconf CLK_TCK)")" "-"

echo "corral-ctrl benchmark ($(nproc) CPUs; phases 1-2 on $NODES1 nodes, then fake-kubelet); baseline in brackets: plain pod writes by 16 threads through the same mount"
printf '%-44s %12s %12s %8s\n' metric corral baseline ratio
for r in "${ROWS[@]}"; do echo "$r"; done
echo "$BOUNDS"
[ "$BOUNDS_OK" = 1 ] || { echo "bench: the rolling update broke its bounds" >&2; exit 1; }
