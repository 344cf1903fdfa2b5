#!/bin/bash
# bench/daemonset.sh BUILD_DIR: a DaemonSet over BENCH_NODES (1000) hollow
# nodes through a private mount, against a baseline measured in the same run.
#
# Starts a private corral-fs (state and mount in a temporary folder), writes
# the nodes as files (bench/schedbench nodes: Ready, no taints) and starts
# corral-sched. Baseline: as many pods, one per node with spec.nodeName set
# (created bound), copied into the mount by 16 cp processes: the time to
# write them all. Then corral-ctrl (the daemonset controller alone) and one
# DaemonSet written into the mount: the time from its write until each node
# has its pod, created by corral-ctrl and bound by corral-sched through its
# matchFields node affinity, as tests/tools/pod-census sees them at every
# inotify event. Prints one table: metric, corral, baseline, ratio, and the
# issue's target (all pods created and bound in <= 10 s). Asserts nothing
# about time; it fails when it cannot measure (a pod left unbound).
#
# Knobs: BENCH_NODES (1000), BENCH_WAIT_MAX seconds (120), BENCH_KEEP=1 keeps
# the temporary folder and the logs.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/daemonset.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl SCHED=$B/corral-sched
CENSUS=$B/tests/tools/pod-census GEN=$B/schedbench
NODES=${BENCH_NODES:-1000}
WAIT=${BENCH_WAIT_MAX:-120}
for b in "$FS" "$CTRL" "$SCHED" "$CENSUS"; do
	[ -x "$b" ] || die "no $b (run make first)"
done
[ -f "$B/libcorral.a" ] || die "no $B/libcorral.a (run make first)"
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem)"
[ -c /dev/fuse ] || die "no /dev/fuse"
for c in cc fusermount3 awk pkg-config xargs; do
	command -v "$c" >/dev/null || die "needs $c"
done
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -D_GNU_SOURCE -pthread -iquote "$ROOT/lib" -o "$GEN" "$SRC/schedbench.c" \
	"$B/libcorral.a" $(pkg-config --libs yaml-0.1) || die "cannot build schedbench"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-dsbench.XXXXXX") || die "mktemp fails"
MNT=$T/mnt
mkdir -p "$MNT" "$T/base"
FSPID= SCHEDPID= CTRLPID= CENSUSPID=

is_mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
stop() { # PID: SIGTERM, then SIGKILL after 5 s
	alive "$1" || return 0
	kill -TERM "$1"
	for _ in $(seq 50); do alive "$1" || break; sleep 0.1; done
	alive "$1" && kill -KILL "$1"
	wait "$1" 2>/dev/null
}
cleanup() {
	set +e
	stop "$CENSUSPID"
	stop "$CTRLPID"
	stop "$SCHEDPID"
	stop "$FSPID"
	is_mounted "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
	if is_mounted "$MNT"; then
		echo "bench: could not unmount $MNT; leaving $T" >&2
	elif [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "bench: kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
failed() {
	echo "bench: $*" >&2
	for l in fs sched ctrl; do
		[ -s "$T/$l.log" ] && { echo "--- last lines of $l.log:" >&2; grep -v ' debug: ' "$T/$l.log" | tail -n 10 >&2; }
	done
	exit 1
}
now_ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }

# --- corral-fs, the nodes, corral-sched -------------------------------------------
"$FS" -f --state "$T/state" "$MNT" >"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 200); do
	[ -d "$MNT/namespaces" ] && is_mounted "$MNT" && break
	alive "$FSPID" || failed "corral-fs exited before the mount was ready"
	sleep 0.05
done
[ -d "$MNT/namespaces" ] || failed "corral-fs did not mount within 10 s"
echo "daemonset bench: $NODES nodes, $(nproc) cpus, $(uname -r), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
n=$("$GEN" nodes -m "$MNT" -n "$NODES" -t 16) || failed "writing the nodes failed: $n"
mkdir "$MNT/namespaces/base" "$MNT/namespaces/bench" || failed "mkdir of a namespace fails"
"$SCHED" --mount "$MNT" >"$T/sched.log" 2>&1 &
SCHEDPID=$!
for _ in $(seq 600); do
	grep -q "scheduling for .*: $NODES nodes" "$T/sched.log" && break
	alive "$SCHEDPID" || failed "corral-sched exited at start"
	sleep 0.1
done
grep -q "scheduling for .*: $NODES nodes" "$T/sched.log" ||
	failed "corral-sched did not start with $NODES nodes within 60 s"

# --- baseline: one pod per node with nodeName, by hand ----------------------------
for node in $(ls "$MNT/nodes" | sed 's/\.yaml$//'); do
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {app: base}}\nspec:\n  nodeName: %s\n  containers: [{name: c, image: busybox}]\n' \
		"base-$node" "$node" >"$T/base/base-$node.yaml"
done
echo "baseline: $NODES pods with nodeName, 16 cp processes ..."
t0=$(now_ms)
(cd "$T/base" && ls | xargs -P 16 -n 64 cp -t "$MNT/namespaces/base/pods/") ||
	failed "the baseline's writes failed"
t1=$(now_ms)
[ "$(ls "$MNT/namespaces/base/pods" | wc -l)" -eq "$NODES" ] || failed "the baseline has not $NODES pods"
base=$(secs "$t0" "$t1")

# --- the DaemonSet ----------------------------------------------------------------
"$CTRL" --mount "$MNT" --leader-elect=false --controllers daemonset >"$T/ctrl.log" 2>&1 &
CTRLPID=$!
for _ in $(seq 600); do
	grep -q 'controllers started' "$T/ctrl.log" && break
	alive "$CTRLPID" || failed "corral-ctrl exited at start"
	sleep 0.1
done
grep -q 'controllers started' "$T/ctrl.log" || failed "corral-ctrl did not start within 60 s"
"$CENSUS" --bound --time "$MNT" bench app=bench >"$T/census.log" 2>&1 &
CENSUSPID=$!
sleep 0.3 # its first listing (of no pod); it prints every change after it
echo "a DaemonSet over $NODES nodes ..."
t0=$(now_ms)
cat >"$MNT/namespaces/bench/daemonsets/bench.yaml" <<'Y' || failed "the DaemonSet's write fails"
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: bench}
spec:
  selector: {matchLabels: {app: bench}}
  template:
    metadata: {labels: {app: bench}}
    spec: {containers: [{name: c, image: busybox}]}
Y
done_at=
for _ in $(seq $((WAIT * 10))); do
	done_at=$(awk -v n="$NODES" '$2 >= n && $4 >= n { print $1; exit }' "$T/census.log")
	[ -n "$done_at" ] && break
	alive "$CTRLPID" || failed "corral-ctrl died"
	sleep 0.1
done
[ -n "$done_at" ] || failed "not all $NODES pods created and bound within ${WAIT}s: $(tail -1 "$T/census.log")"
created_at=$(awk -v n="$NODES" '$2 >= n { print $1; exit }' "$T/census.log")
ds=$(secs "$t0" "$done_at")
created=$(secs "$t0" "$created_at")
sleep 0.5
extra=$(awk -v n="$NODES" '$2 > n { print; exit }' "$T/census.log")
[ -z "$extra" ] || failed "more than $NODES pods at one time: $extra"
per_node=$(grep -h '^  nodeName: ' "$MNT"/namespaces/bench/pods/*.yaml | sort | uniq -d | head -1)
[ -z "$per_node" ] || failed "two pods on one node: $per_node"

printf '%-52s %10s %10s %8s\n' metric corral baseline ratio
printf '%-52s %10s %10s %8s\n' "seconds, $NODES daemon pods created [by hand, bound]" "$created" "$base" "$(ratio "$created" "$base")"
printf '%-52s %10s %10s %8s\n' "seconds, $NODES daemon pods created and bound [same]" "$ds" "$base" "$(ratio "$ds" "$base")"
echo "target: all $NODES pods created and bound in <= 10 s: $ds s ($(awk -v s="$ds" 'BEGIN { print (s <= 10) ? "met" : "not met" }'))"
