#!/bin/bash
# bench/pods.sh BUILD_DIR: corral-noded's real runtime through a private
# mount (issue 3's targets).
#   1. baseline: BENCH_PODS (100) runs of a bare `systemd-nspawn --read-only
#      -D IMAGE /bin/true` in a row, on the busybox image;
#   2. BENCH_PODS pods in a row, each timed from the close() of its file to
#      the file saying phase Running with a podIP (read through the mount);
#   3. BENCH_PODS busybox pods written at once: time until all are Running
#      (beside the floor: as many bare systemd-nspawn running sleep started
#      at once, time until each has said READY=1), the agent's RSS, and
#      memory per pod (the proportional set size of
#      its pause, shim, systemd-nspawn and payload) beside that of
#      BENCH_BARE (20) bare systemd-nspawn running sleep (nspawn and payload).
# Prints a table: metric, corral, baseline, ratio. Asserts nothing about
# time; fails when it cannot measure.
#
# The whole script is one block that bash reads before it runs any of it:
# bash reads a script as it goes, so a run that outlived an edit of this
# file ran pieces of the new text at the old offsets ("memavail: command
# not found").
{
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/pods.sh BUILD_DIR"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
N=${BENCH_PODS:-100} NBARE=${BENCH_BARE:-20}
[ "$(id -u)" = 0 ] || die "needs root (mounts, namespaces, nspawn)"
T=$(mktemp -d /tmp/corral-podbench.XXXXXX)
M=$T/mnt NODE=podbench-$$ PIDS=() BARE=()
mkdir -p "$M"
cleanup() {
	local p
	for p in "${BARE[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
cc -O2 -iquote "$ROOT/lib" -o "$T/podbench" "$SRC/podbench.c" "$B/libcorral.a" || die "cannot build podbench"
"$ROOT/tools/corral" image build-busybox --images "$T/images" >/dev/null || die "no busybox image"
"$B/corral-fs" -f --state "$T/state" --pod-log-dir "$T/logs" "$M" >"$T/fs.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
printf '[noded]\nstate = %s/nstate\nimages = %s/images\npod-log-dir = %s/logs\n' "$T" "$T" "$T" >"$T/noded.conf"
"$B/corral-noded" --mount "$M" --name "$NODE" --config "$T/noded.conf" --cleanup-on-exit >"$T/noded.log" 2>&1 &
NPID=$!
PIDS+=($NPID)
for _ in $(seq 200); do grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" 2>/dev/null && break; sleep 0.05; done
grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" || die "the node did not turn Ready: $(tail -3 "$T/noded.log")"
mkdir -p "$M/namespaces/bench"
P=$M/namespaces/bench/pods
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
# pss PID...: the sum of their proportional set sizes, KiB
pss() { local p t=0 v; for p in "$@"; do v=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null); t=$((t + ${v:-0})); done; echo "$t"; }
hash8() { # the FNV-1a hash corral-noded names interfaces with (ASCII names)
	local s=$1 h=2166136261 i c
	for ((i = 0; i < ${#s}; i++)); do
		printf -v c '%d' "'${s:i:1}"
		h=$(((h ^ c) * 16777619 & 0xffffffff))
	done
	printf '%08x
' "$h"
}
CGROOT=/sys/fs/cgroup/memory; [ -d "$CGROOT" ] || CGROOT=/sys/fs/cgroup
CG=$CGROOT/corral/$(hash8 "$NODE")
wait_empty() { for _ in $(seq 600); do [ -z "$(ls "$T/nstate/nodes/$NODE/pods" 2>/dev/null)" ] && return 0; sleep 0.1; done; return 1; }

echo "bench: $N bare systemd-nspawn /bin/true in a row" >&2
BASE=$("$T/podbench" nspawn "$T/images/busybox" "$N") || die "bare nspawn failed"
echo "bench: $N pods in a row through the mount" >&2
ROW=$("$T/podbench" pods "$P" "$NODE" busybox "$N") || die "pods in a row: $(tail -3 "$T/noded.log")"
rm -f "$P"/*.yaml
wait_empty || die "the pods were not removed"

echo "bench: $NBARE bare systemd-nspawn running sleep" >&2
for i in $(seq "$NBARE"); do
	systemd-nspawn --quiet --register=no --keep-unit --read-only --console=pipe --resolv-conf=off \
		--timezone=off --link-journal=no --machine="benchbare-$$-$i" -D "$T/images/busybox" \
		/bin/sleep 600 >/dev/null 2>&1 </dev/null &
	BARE+=($!)
done
sleep 3
alive=0 kids=()
for p in "${BARE[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); kids+=($(pgrep -P "$p")); done
[ "$alive" = "$NBARE" ] || die "only $alive of $NBARE bare nspawn stayed up"
BARE_KB=$(( $(pss "${BARE[@]}" "${kids[@]}") / NBARE ))
# the containers' first processes too: a sleep that is PID 1 would outlive
# its nspawn
for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done
for p in "${BARE[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
BARE=()
sleep 1

echo "bench: $N bare systemd-nspawn at once" >&2
BBURST=$("$T/podbench" nspawn-burst "$T/images/busybox" "$N") || die "bare nspawn at once failed"
sleep 1
echo "bench: $N pods at once" >&2
BURST=$("$T/podbench" burst "$P" "$NODE" busybox "$N") || die "burst: $(tail -3 "$T/noded.log")"
sleep 2
RSS=$(awk '/^VmRSS:/ {print $2}' "/proc/$NPID/status")
# every process of the pods: shims, nspawns and payloads (in the pods'
# cgroups), and the pauses (the agent's children)
POD_KB=$(( $(pss $(find "$CG" -name cgroup.procs -exec cat {} + 2>/dev/null) $(pgrep -P "$NPID" -x corral-pause)) / N ))
RUNNING=$(grep -l '^  phase: Running' "$P"/*.yaml | wc -l)
rm -f "$P"/*.yaml
wait_empty || die "the burst's pods were not removed"

bm=$(field "$BASE" median_ms) bp=$(field "$BASE" p99_ms)
rm_=$(field "$ROW" median_ms) rp=$(field "$ROW" p99_ms)
printf '\n%-58s %10s %10s %7s\n' metric corral baseline ratio
printf '%-58s %10s %10s %7s\n' "pod start, close() to Running+podIP, median ms [nspawn /bin/true]" "$rm_" "$bm" "$(ratio "$rm_" "$bm")"
printf '%-58s %10s %10s %7s\n' "pod start, p99 ms [nspawn /bin/true p99]" "$rp" "$bp" "$(ratio "$rp" "$bp")"
bs=$(field "$BURST" secs) bb=$(field "$BBURST" secs)
printf '%-58s %10s %10s %7s\n' "$N pods at once: all Running, s [bare nspawn all started]" "$bs" "$bb" "$(ratio "$bs" "$bb")"
printf '%-58s %10s %10s %7s\n' "pods Running of $N" "$RUNNING" "" ""
printf '%-58s %10s %10s %7s\n' "corral-noded RSS with $N pods, MiB" "$(awk -v k="$RSS" 'BEGIN{printf "%.1f", k/1024}')" "" ""
printf '%-58s %10s %10s %7s\n' "memory (PSS) per pod, KiB [bare nspawn running sleep]" "$POD_KB" "$BARE_KB" "$(ratio "$POD_KB" "$BARE_KB")"
exit
}
