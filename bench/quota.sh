#!/bin/bash
# bench/quota.sh BUILD_DIR: ResourceQuota under concurrent writers (issue
# 14's target), through a private mount with corral-fs alone.
#   1. baseline: BENCH_WRITERS (50) writers each write BENCH_PER_WRITER (10)
#      pods into a namespace without a quota, all at once;
#   2. the same race into a namespace whose ResourceQuota says
#      pods: BENCH_QUOTA (100).
# The race must admit exactly BENCH_QUOTA pods and refuse every other write
# with the quota's message (each refused writer finds its own line in
# .errors); the script fails otherwise. Prints a table: metric, corral,
# baseline, ratio. Asserts nothing about time.
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/quota.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
W=${BENCH_WRITERS:-50} PER=${BENCH_PER_WRITER:-10} QUOTA=${BENCH_QUOTA:-100}
[ -x "$B/corral-fs" ] || die "no $B/corral-fs (run make first)"
[ "$(id -u)" = 0 ] || die "needs root (FUSE mounts)"
[ $((W * PER)) -gt "$QUOTA" ] || die "the race must try more than $QUOTA pods"
T=$(mktemp -d /tmp/corral-quotabench.XXXXXX)
M=$T/mnt FSPID=
mkdir -p "$M"
cleanup() {
	[ -n "$FSPID" ] && { kill "$FSPID" 2>/dev/null; wait "$FSPID" 2>/dev/null; }
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
"$B/corral-fs" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount: $(tail -3 "$T/fs.log")"
mkdir "$M/namespaces/free" "$M/namespaces/capped"
printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: "%d"}\n' \
	"$QUOTA" >"$M/namespaces/capped/resourcequotas/q.yaml" || die "the quota was refused"

# writer NS N: writes PER pods w<N>-<i> (coreutils printf: its exit status
# says whether the close, where corral-fs admits, succeeded); prints
# "admitted refused-with-the-message other"
writer() {
	local ns=$1 w=$2 i name ok=0 msg=0 bad=0
	local want="exceeded quota: q, requested: pods=1, used: pods=$QUOTA, limited: pods=$QUOTA"
	for ((i = 0; i < PER; i++)); do
		name=w$w-$i
		if /usr/bin/printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers: [{name: c, image: busybox}]\n' \
			"$name" 2>/dev/null >"$M/namespaces/$ns/pods/$name.yaml"; then
			ok=$((ok + 1))
		elif grep -qF "namespaces/$ns/pods/$name.yaml: pods \"$name\" is forbidden: $want" "$M/.errors"; then
			msg=$((msg + 1))
		else
			bad=$((bad + 1))
		fi
	done
	echo "$ok $msg $bad"
}
# race NS: all writers at once; sets OK MSG BAD and MS
race() {
	local ns=$1 w t0 pids=()
	t0=$(now_ms)
	for ((w = 0; w < W; w++)); do
		writer "$ns" "$w" >"$T/$ns-$w.out" &
		pids+=($!)
	done
	wait "${pids[@]}"
	MS=$(($(now_ms) - t0))
	read -r OK MSG BAD < <(cat "$T/$ns"-*.out | awk '{ a += $1; b += $2; c += $3 } END { print a, b, c }')
}
echo "bench: $W writers x $PER pods, no quota" >&2
race free
B_OK=$OK B_MS=$MS
[ "$B_OK" = $((W * PER)) ] || die "without a quota only $B_OK of $((W * PER)) pods were admitted"
echo "bench: $W writers x $PER pods, quota pods: $QUOTA" >&2
race capped
STORED=$(ls "$M/namespaces/capped/pods" | grep -c '\.yaml$')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
rate() { awk -v n="$1" -v ms="$2" 'BEGIN { if (ms > 0) printf "%.0f", n * 1000 / ms; else print "-" }'; }
R_Q=$(rate $((W * PER)) "$MS") R_B=$(rate $((W * PER)) "$B_MS")
printf '%-44s %10s %10s %8s\n' metric corral baseline ratio
printf '%-44s %10s %10s %8s\n' "pods admitted [no quota]" "$OK" "$B_OK" "$(ratio "$OK" "$B_OK")"
printf '%-44s %10s %10s %8s\n' "pods stored [no quota]" "$STORED" "$B_OK" "$(ratio "$STORED" "$B_OK")"
printf '%-44s %10s %10s %8s\n' "refused with the quota's message" "$MSG" 0 -
printf '%-44s %10s %10s %8s\n' "refused otherwise (must be 0)" "$BAD" 0 -
printf '%-44s %10s %10s %8s\n' "writes/s, $W writers [same race, no quota]" "$R_Q" "$R_B" "$(ratio "$R_Q" "$R_B")"
[ "$OK" = "$QUOTA" ] && [ "$STORED" = "$QUOTA" ] && [ "$MSG" = $((W * PER - QUOTA)) ] && [ "$BAD" = 0 ] ||
	die "the quota was not kept: $OK admitted, $STORED stored, $MSG refused with its message, $BAD otherwise"
