#!/bin/bash
# bench/hosts.sh BUILD_DIR: the scheduler benchmark over three hosts (issue
# 18): BENCH_NODES hollow nodes × BENCH_PODS pods, with the nodes spread
# over the three hosts of a lab (tests/lib/lab.sh: network namespaces on a
# private bridge, an etcd member and a corral-fs on each), beside the
# single-host LMDB figure of the same run (bench/sched.sh, run first with
# the same knobs).
#
# In the lab each host writes its third of the nodes through its own mount
# (schedbench nodes -f), corral-sched runs on host 1, and host 1 writes the
# pods and watches them bound (schedbench pods), so that every binding is
# a write to etcd through host 1's corral-fs and every node a write from
# another host's. Prints both figures and their ratio; like bench/sched.sh
# it fails only when it cannot measure or a pod is left unbound.
#
# Knobs: those of bench/sched.sh (BENCH_NODES, BENCH_PODS, BENCH_WRITERS,
# BENCH_OWNERS, BENCH_SCHED_SECONDS), and BENCH_KEEP=1.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/hosts.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
NODES=${BENCH_NODES:-1000}
PODS=${BENCH_PODS:-10000}
WRITERS=${BENCH_WRITERS:-16}
OWNERS=${BENCH_OWNERS:-100}
WAIT=${BENCH_SCHED_SECONDS:-180}
export BENCH_NODES=$NODES BENCH_PODS=$PODS BENCH_WRITERS=$WRITERS BENCH_OWNERS=$OWNERS BENCH_SCHED_SECONDS=$WAIT
[ "$(id -u)" = 0 ] || die "needs root (FUSE mounts, network namespaces)"
for c in etcd nsenter unshare ip curl; do command -v "$c" >/dev/null || die "needs $c"; done
[ -x "$B/corral-fs" ] && [ -x "$B/corral-sched" ] || die "no corral-fs or corral-sched in $B (run make)"

# --- the single host, LMDB (bench/sched.sh builds schedbench too) ------------------------
echo "== one host, LMDB (bench/sched.sh) =="
"$SRC/sched.sh" "$B" | tee "${TMPDIR:-/tmp}/corral-hostsbench.$$.lmdb" || die "bench/sched.sh failed"
lmdb=$(sed -n 's/^pods bound\/s, end to end: first pod written to last bound *\([0-9.]*\).*/\1/p' \
	"${TMPDIR:-/tmp}/corral-hostsbench.$$.lmdb")
rm -f "${TMPDIR:-/tmp}/corral-hostsbench.$$.lmdb"
[ -n "$lmdb" ] || die "no pods bound/s in bench/sched.sh's output"
GEN=$B/schedbench
[ -x "$GEN" ] || die "no $GEN"

# --- the lab ---------------------------------------------------------------------------
T=$(mktemp -d "${TMPDIR:-/tmp}/corral-hostsbench.XXXXXX") || die "mktemp fails"
chmod 755 "$T"
wait_for() { local s=$1; shift; for _ in $(seq $((s * 20))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }
# shellcheck source=../tests/lib/lab.sh
. "$ROOT/tests/lib/lab.sh"
MNT=$T/cl # the same path on every host, a mount of its own on each
mkdir -p "$MNT"
FSP=() SCHEDPID=
cleanup() {
	set +e
	[ -n "$SCHEDPID" ] && kill "$SCHEDPID" 2>/dev/null
	for p in "${FSP[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${FSP[@]}"; do wait "$p" 2>/dev/null; done
	lab_down
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
failed() {
	echo "bench: $*" >&2
	for l in "$T"/fs1.log "$T"/sched.log; do [ -s "$l" ] && { echo "--- $l:" >&2; tail -n 5 "$l" >&2; }; done
	exit 1
}
field() { local kv; for kv in $1; do case $kv in "$2="*) echo "${kv#*=}"; return 0 ;; esac; done; return 1; }

echo
echo "== three hosts, etcd (a lab on this machine) =="
lab_up 3 || failed "the lab did not come up"
lab_etcd_up || failed "the lab's etcd did not come up"
for i in 1 2 3; do
	store=etcd://$(lab_ip "$i"):2379
	for j in 1 2 3; do [ "$j" = "$i" ] || store+=,$(lab_ip "$j"):2379; done
	lab_exec "$i" "$B/corral-fs" -f --store "$store" --state "$T/lab/h$i/state" "$MNT" >"$T/fs$i.log" 2>&1 &
	FSP+=($!)
done
for i in 1 2 3; do
	wait_for 20 lab_exec "$i" test -d "$MNT/namespaces/default" || failed "host $i's corral-fs did not mount"
done
echo "writing $NODES nodes, a third from each host ..."
per=$(((NODES + 2) / 3)) first=1 NPIDS=()
for i in 1 2 3; do
	k=$per
	[ $((first + k - 1)) -gt "$NODES" ] && k=$((NODES - first + 1))
	lab_exec "$i" "$GEN" nodes -m "$MNT" -n "$k" -f "$first" -t 16 >"$T/nodes$i.out" 2>&1 &
	NPIDS+=($!)
	first=$((first + k))
done
for p in "${NPIDS[@]}"; do wait "$p" || failed "writing the nodes failed: $(cat "$T"/nodes*.out)"; done
# corral-sched lists the nodes once, at its start: host 1 must have all of
# them first (those written on hosts 2 and 3 reach it through the watch).
nodes_on_1() { [ "$(lab_exec 1 sh -c 'ls "$1" | wc -l' sh "$MNT/nodes")" -ge "$NODES" ]; }
wait_for 120 nodes_on_1 || failed "host 1 does not see the $NODES nodes"
lab_exec 1 mkdir "$MNT/namespaces/bench" || failed "mkdir of a namespace fails"
lab_exec 1 "$B/corral-sched" --mount "$MNT" --leader-elect=false >"$T/sched.log" 2>&1 &
SCHEDPID=$!
sched_ready() { grep -q "scheduling for .*: $NODES nodes" "$T/sched.log"; }
wait_for 120 sched_ready || failed "corral-sched on host 1 did not start with $NODES nodes"
echo "writing $PODS pods on host 1 and waiting for them to be bound (at most ${WAIT}s) ..."
p=$(lab_exec 1 "$GEN" pods -m "$MNT" -N bench -n "$PODS" -t "$WRITERS" -o "$OWNERS" -s "$WAIT" \
	-p "$SCHEDPID" -P "${FSP[0]}") || failed "the pod run failed: $p"
c=$(lab_exec 2 "$GEN" check -m "$MNT" -N bench) || failed "the check on host 2 failed: $c"
etcd=$(field "$p" rate)
echo
printf '%-58s %14s\n' "metric" "value"
printf '%-58s %14s\n' "pods bound/s, one host, LMDB (bench/sched.sh)" "$lmdb"
printf '%-58s %14s\n' "pods bound/s, three hosts, etcd (nodes from all three)" "$etcd"
printf '%-58s %14s\n' "ratio etcd / LMDB" "$(awk -v a="$etcd" -v b="$lmdb" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
printf '%-58s %14s\n' "pods bound / written (three hosts)" "$(field "$p" bound) / $(field "$p" written)"
printf '%-58s %14s\n' "nodes oversubscribed, checked on host 2" "$(field "$c" oversubscribed)"
echo "schedbench: $p"
echo "schedbench: $c"
[ "$(field "$p" bound)" = "$PODS" ] || die "only $(field "$p" bound) of $PODS pods were bound within ${WAIT}s"
[ "$(field "$c" oversubscribed)" = 0 ] || die "a node is oversubscribed"
exit 0
