#!/bin/bash
# bench/jobs.sh BUILD_DIR: the Job controller on real pods (issue 12's
# target), through a private mount with corral-fs, corral-ctrl and a real
# corral-noded running busybox pods that exit at once.
#   1. baseline: BENCH_COMPLETIONS (100) such pods written by hand,
#      BENCH_PARALLELISM (10) at a time, each batch waited for until all of
#      it has succeeded: time from the first write to the last success;
#   2. a Job with completions BENCH_COMPLETIONS and parallelism
#      BENCH_PARALLELISM of the same pods: time from its write to its
#      Complete condition.
# Prints a table: metric, corral, baseline, ratio (the target is at most
# 3). Asserts nothing about time; fails when it cannot measure.
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/jobs.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
N=${BENCH_COMPLETIONS:-100} PAR=${BENCH_PARALLELISM:-10} WAIT_MAX=${BENCH_WAIT_MAX:-600}
for b in "$B/corral-fs" "$B/corral-ctrl" "$B/corral-noded"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (mounts, namespaces, nspawn)"
T=$(mktemp -d /tmp/corral-jobbench.XXXXXX)
M=$T/mnt NODE=jobbench-$$ PIDS=() NPID=
mkdir -p "$M"
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "$NPID" ] && { kill "$NPID" 2>/dev/null; wait "$NPID" 2>/dev/null; }
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	grep " $T/nstate" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
"$ROOT/tools/corral" image build-busybox --images "$T/images" >/dev/null || die "no busybox image"
"$B/corral-fs" -f --state "$T/state" --pod-log-dir "$T/logs" "$M" >"$T/fs.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount: $(tail -3 "$T/fs.log")"
printf '[noded]\nstate = %s/nstate\nimages = %s/images\npod-log-dir = %s/logs\n' "$T" "$T" "$T" >"$T/noded.conf"
"$B/corral-noded" --mount "$M" --name "$NODE" --config "$T/noded.conf" --cleanup-on-exit >"$T/noded.log" 2>&1 &
NPID=$!
for _ in $(seq 200); do grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" 2>/dev/null && break; sleep 0.05; done
grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" || die "the node did not turn Ready: $(tail -3 "$T/noded.log")"
"$B/corral-ctrl" --mount "$M" --leader-elect=false >"$T/ctrl.log" 2>&1 &
PIDS+=($!)
D=$M/namespaces/bench
mkdir -p "$D"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
SPEC="nodeName: $NODE
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: [\"true\"]}]"
# succeeded FILE...: how many of them say phase Succeeded
succeeded() { grep -l '^  phase: Succeeded' "$@" 2>/dev/null | wc -l; }

echo "bench: $N pods by hand, $PAR at a time" >&2
t0=$(now_ms)
for ((b = 0; b < N; b += PAR)); do
	files=()
	for ((i = b; i < b + PAR && i < N; i++)); do
		f=$D/pods/hand-$i.yaml
		printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: hand-%d}\nspec:\n  %s\n' "$i" "$SPEC" >"$f" || die "pod hand-$i refused: $(tail -1 "$M/.errors")"
		files+=("$f")
	done
	deadline=$(( $(now_ms) + WAIT_MAX * 1000 ))
	until [ "$(succeeded "${files[@]}")" = "${#files[@]}" ]; do
		[ "$(now_ms)" -lt "$deadline" ] || die "batch $b did not succeed: $(tail -3 "$T/noded.log")"
		sleep 0.05
	done
done
BASE_MS=$(( $(now_ms) - t0 ))
rm -f "$D"/pods/hand-*.yaml

echo "bench: a Job of completions $N, parallelism $PAR" >&2
JOB="apiVersion: batch/v1
kind: Job
metadata: {name: burst}
spec:
  completions: $N
  parallelism: $PAR
  backoffLimit: 0
  template:
    spec:
      $(echo "$SPEC" | sed '2,$s/^/    /')"
t0=$(now_ms)
echo "$JOB" >"$D/jobs/burst.yaml" || die "the Job was refused: $(tail -1 "$M/.errors")"
deadline=$(( t0 + WAIT_MAX * 1000 ))
until grep -B4 'type: Complete' "$D/jobs/burst.yaml" 2>/dev/null | grep -q "status: 'True'"; do
	[ "$(now_ms)" -lt "$deadline" ] || die "the Job did not complete: $(grep -A12 '^status:' "$D/jobs/burst.yaml" | tr '\n' ' ')"
	grep -q 'type: Failed' "$D/jobs/burst.yaml" 2>/dev/null && die "the Job failed: $(grep -A12 '^status:' "$D/jobs/burst.yaml" | tr '\n' ' ')"
	sleep 0.05
done
JOB_MS=$(( $(now_ms) - t0 ))
grep -q "^  succeeded: $N\$" "$D/jobs/burst.yaml" || die "Complete without succeeded: $N"

printf '\n%-58s %10s %10s %7s\n' metric corral baseline ratio
printf '%-58s %10s %10s %7s\n' "Job of $N pods, parallelism $PAR, to Complete, ms [by hand]" "$JOB_MS" "$BASE_MS" "$(ratio "$JOB_MS" "$BASE_MS")"
