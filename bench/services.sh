#!/bin/bash
# bench/services.sh BUILD_DIR: the service controllers of corral-ctrl
# through a private mount (state and mount in a temporary folder).
#
#   1. endpoints latency: BENCH_FLIPS (100) flips of a pod's Ready condition,
#      written through the mount (the pod is on a node no agent runs, so
#      nothing else writes it); each latency runs from the return of the
#      pod's close() to the IN_CLOSE_WRITE of its service's endpoints file
#      showing the change. Median and p99. Baseline: a plain write and read
#      back of a ConfigMap through the mount (one round trip), median and
#      p99 over as many.
#   2. allocation: BENCH_SERVICES (1000) Services written by 8 threads with
#      corral-ctrl running; time from the first write until every one
#      carries its clusterIP and the Allocated condition. Baseline: the same
#      services written by the same threads into another namespace while no
#      corral-ctrl runs (what the writes alone cost).
# Prints one table: metric, corral, baseline, ratio. Asserts nothing about
# time; it fails when it cannot measure.
#
# Knobs: BENCH_FLIPS (100), BENCH_SERVICES (1000), BENCH_KEEP=1 keeps the
# temporary folder and the logs.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/services.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl SB=$B/svcbench
FLIPS=${BENCH_FLIPS:-100}
NSVC=${BENCH_SERVICES:-1000}
for b in "$FS" "$CTRL"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem)"
[ -c /dev/fuse ] || die "no /dev/fuse"
cc -O2 -pthread -o "$SB" "$SRC/svcbench.c" || die "cannot build svcbench"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-svcbench.XXXXXX") || die "mktemp fails"
M=$T/mnt
mkdir -p "$M"
CTRL_PID= FSPID=
cleanup() {
	set +e
	if [ -n "$CTRL_PID" ]; then
		kill "$CTRL_PID" 2>/dev/null
		wait "$CTRL_PID" 2>/dev/null
	fi
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

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
val() { sed -n "s/.*\b$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
ROWS=()
row() { ROWS+=("$(printf '%-44s %12s %12s %8s' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }

"$FS" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount: $(tail -2 "$T/fs.log")"

# Baselines first, with no controller running.
base_rt=$("$SB" roundtrip -m "$M" -N base -n "$FLIPS") || die "roundtrip: $base_rt"
base_svc=$("$SB" services -m "$M" -N plain -n "$NSVC" -t 8) || die "plain services: $base_svc"
rm -rf "$M/namespaces/plain" || die "cannot remove the baseline's namespace"

"$CTRL" --mount "$M" --leader-elect=false >"$T/ctrl.log" 2>&1 &
CTRL_PID=$!
for _ in $(seq 100); do grep -q 'controllers started' "$T/ctrl.log" && break; sleep 0.05; done
grep -q 'controllers started' "$T/ctrl.log" || die "corral-ctrl did not start: $(tail -2 "$T/ctrl.log")"

flip=$("$SB" flip -m "$M" -N flip -n "$FLIPS") || die "flip: $flip"
alloc=$("$SB" services -m "$M" -N alloc -n "$NSVC" -t 8 -w) || die "allocation: $alloc"
dups=$(sed -n 's/^  clusterIP: //p' "$M"/namespaces/alloc/services/*.yaml | sort | uniq -d | wc -l)

echo "roundtrip: $base_rt"
echo "flip:      $flip"
echo "plain:     $base_svc"
echo "alloc:     $alloc"
row "endpoints latency median, ms [write+read]" "$(val median_ms "$flip")" "$(val median_ms "$base_rt")"
row "endpoints latency p99, ms [write+read]" "$(val p99_ms "$flip")" "$(val p99_ms "$base_rt")"
row "pod status write median, ms [write+read]" "$(val write_median_ms "$flip")" "$(val median_ms "$base_rt")"
row "$NSVC services allocated, s [written only]" "$(val secs "$alloc")" "$(val secs "$base_svc")"
printf '%-44s %12s %12s %8s\n' metric corral baseline ratio
for r in "${ROWS[@]}"; do echo "$r"; done
echo "duplicate clusterIPs among the $NSVC: $dups"
[ "$dups" = 0 ]
