#!/bin/bash
# bench/namespace.sh BUILD_DIR: rm -r of a busy namespace (issue 14's
# first target).
#
# Starts a private corral-fs, corral-ctrl, and nodes that run pods:
# corral-sched and BENCH_HOLLOW hollow corral-noded when their binaries
# are there, else tests/tools/fake-kubelet. Fills namespace "big" with
# BENCH_DEPLOYMENTS (10) Deployments of BENCH_REPLICAS (100) pods, 100
# Services selecting them and 1,000 ConfigMaps, waits until every pod is
# bound, then times `rm -r namespaces/big` until it exits (which must be
# 0) and until the namespace is gone (its folder and file), all controllers
# running.
# Baseline, in the same run: the time to write as many objects through the
# mount (the pods, the Services and the ConfigMaps, 16 threads: fsbench,
# and a loop for the Services), in another namespace. Prints one table:
# metric, corral, baseline, ratio; the target is a ratio of at most 3 for
# "namespace gone". Asserts nothing about time; it fails when it cannot
# measure, or when rm -r does not exit 0.
#
# Knobs: BENCH_DEPLOYMENTS (10), BENCH_REPLICAS (100), BENCH_SERVICES
# (100), BENCH_CONFIGMAPS (1000), BENCH_NODES (hollow|fake), BENCH_HOLLOW
# (enough for every pod, 110 each), BENCH_WAIT_MAX seconds per phase
# (180), BENCH_KEEP=1 keeps the temporary folder and the logs.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/namespace.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl SCHED=$B/corral-sched NODED=$B/corral-noded
FAKE=$B/tests/tools/fake-kubelet FSB=$B/fsbench
NDEP=${BENCH_DEPLOYMENTS:-10}
REPLICAS=${BENCH_REPLICAS:-100}
NSVC=${BENCH_SERVICES:-100}
NCM=${BENCH_CONFIGMAPS:-1000}
PODS=$((NDEP * REPLICAS))
HOLLOW=${BENCH_HOLLOW:-$((PODS * 3 / 2 / 110 + 1))}
WAIT_MAX=${BENCH_WAIT_MAX:-180}
NODES=${BENCH_NODES:-}
for b in "$FS" "$CTRL" "$FAKE"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem)"
[ -c /dev/fuse ] || die "no /dev/fuse"
cc -O2 -pthread -o "$FSB" "$SRC/fsbench.c" || die "cannot build fsbench"
if [ -z "$NODES" ]; then
	if [ -x "$SCHED" ] && [ -x "$NODED" ]; then NODES=hollow; else NODES=fake; fi
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-nsbench.XXXXXX") || die "mktemp fails"
M=$T/mnt
mkdir -p "$M"
PIDS=() FSPID=
cleanup() {
	set +e
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
fsbench_secs() { "$FSB" "$@" | tr ' ' '\n' | sed -n 's/^secs=//p'; }
# until CMD...: until it holds, at most WAIT_MAX seconds
until_ok() {
	local end=$((SECONDS + WAIT_MAX))
	while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.05; done
	return 1
}
ROWS=()
row() { ROWS+=("$(printf '%-50s %10s %10s %8s' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }

"$FS" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
FSPID=$!
until_ok test -d "$M/namespaces" || die "corral-fs did not mount: $(tail -2 "$T/fs.log")"
if [ "$NODES" = hollow ]; then
	"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
	PIDS+=($!)
	for i in $(seq "$HOLLOW"); do
		"$NODED" --mount "$M" --name "hollow-$i" --hollow >>"$T/noded-$i.log" 2>&1 &
		PIDS+=($!)
	done
	WAIT_MAX=20 until_ok sh -c "[ \$(ls '$M/nodes' | wc -l) -ge $HOLLOW ]" || {
		echo "bench: hollow nodes did not register; using fake-kubelet" >&2
		NODES=fake
	}
fi
if [ "$NODES" = fake ]; then
	"$FAKE" --threads 16 "$M" >>"$T/fake-kubelet.log" 2>&1 &
	PIDS+=($!)
fi
"$CTRL" --mount "$M" >>"$T/ctrl.log" 2>&1 &
PIDS+=($!)

# Baseline: as many plain writes, in a namespace of their own.
mkdir "$M/namespaces/base"
t0=$(now_ms)
"$FSB" write -d "$M/namespaces/base/pods" -n "$PODS" -t 16 -k pod -p p -N base >/dev/null
"$FSB" write -d "$M/namespaces/base/configmaps" -n "$NCM" -t 16 -p c -N base >/dev/null
for i in $(seq "$NSVC"); do
	printf 'apiVersion: v1\nkind: Service\nmetadata: {name: s%s}\nspec: {selector: {app: d%s}, ports: [{port: 80}]}\n' \
	    "$i" $((i % NDEP + 1)) >"$M/namespaces/base/services/s$i.yaml"
done
BASE=$(calc "($(now_ms) - $t0) / 1000")
# Its pods would take the nodes' room: it goes before the busy namespace.
rm -r "$M/namespaces/base" 2>/dev/null
until_ok sh -c "! test -e '$M/namespaces/base'" || die "the baseline namespace did not go"

# The busy namespace.
N=$M/namespaces/big
mkdir "$N"
t0=$(now_ms)
for d in $(seq "$NDEP"); do
	cat >"$N/deployments/d$d.yaml" <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: d$d}
spec:
  replicas: $REPLICAS
  selector: {matchLabels: {app: d$d}}
  template:
    metadata: {labels: {app: d$d}}
    spec: {containers: [{name: c, image: busybox, command: [sleep, "3600"]}]}
Y
done
for i in $(seq "$NSVC"); do
	printf 'apiVersion: v1\nkind: Service\nmetadata: {name: s%s}\nspec: {selector: {app: d%s}, ports: [{port: 80}]}\n' \
	    "$i" $((i % NDEP + 1)) >"$N/services/s$i.yaml"
done
"$FSB" write -d "$N/configmaps" -n "$NCM" -t 16 -p c -N big >/dev/null
bound() { [ "$(grep -l '^  nodeName:' "$N"/pods/*.yaml 2>/dev/null | wc -l)" -ge "$PODS" ]; }
until_ok bound || die "the $PODS pods were not all bound: $(ls "$N/pods" | wc -l) pods"
FILLED=$(calc "($(now_ms) - $t0) / 1000")
until_ok sh -c "[ \$(ls '$N/endpoints' | wc -l) -ge $NSVC ]" || die "the Services' Endpoints are not all there"

t0=$(now_ms)
rm -r "$N" 2>"$T/rm.err" || die "rm -r of the namespace failed: $(head -3 "$T/rm.err" | tr '\n' ' ')"
RM_EXIT=$(calc "($(now_ms) - $t0) / 1000")
gone() { ! test -e "$N" && ! test -e "$M/namespaces/big.yaml"; }
until_ok gone || die "the namespace is not gone after ${WAIT_MAX}s: $(ls "$N/pods" 2>/dev/null | wc -l) pods left"
GONE=$(calc "($(now_ms) - $t0) / 1000")

echo "namespace deletion: $PODS pods of $NDEP Deployments ($NODES nodes), $NSVC Services, $NCM ConfigMaps"
printf '%-50s %10s %10s %8s\n' metric corral baseline ratio
row "filled: all pods bound, s [writes]" "$FILLED" "$BASE"
row "rm -r exits (0), s [writes]" "$RM_EXIT" "$BASE"
row "namespace gone, s [writes] (target <= 3)" "$GONE" "$BASE"
printf '%s\n' "${ROWS[@]}"
