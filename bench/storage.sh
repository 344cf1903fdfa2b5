#!/bin/bash
# bench/storage.sh BUILD_DIR: the PersistentVolume binder (issue 13's
# target), through a private mount with corral-fs and corral-ctrl running
# only the binder and the protection controllers.
#   1. baseline: BENCH_CLAIMS (1,000) PersistentVolumes and as many claims
#      written by one shell (no controller running): the time to write the
#      2,000 objects;
#   2. cold: corral-ctrl started on them; time from its start until every
#      claim is Bound (the issue's target, at most 5 s);
#   3. live: as many volumes and claims again, in a second namespace,
#      written while the binder runs: the volumes first, then the claims;
#      time from the first claim's write until every claim is Bound.
# Sizes are mixed (1-200Gi); the claims' requests are the volumes' sizes in
# another order, so that smallest fit binds every claim to a volume of
# exactly its size: the run checks that, that every claim is bound, and
# that no volume is bound twice (distinct volumeNames, each volume's
# claimRef naming its claim). Prints a table: metric, corral, baseline,
# ratio. Asserts nothing
# about time; fails when a check fails or it cannot measure.
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/storage.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
N=${BENCH_CLAIMS:-1000} WAIT_MAX=${BENCH_WAIT_MAX:-300}
for b in "$B/corral-fs" "$B/corral-ctrl"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (mounts)"
T=$(mktemp -d /tmp/corral-storagebench.XXXXXX)
M=$T/mnt PIDS=() CTRL=
mkdir -p "$M"
cleanup() {
	local p
	[ -n "$CTRL" ] && { kill "$CTRL" 2>/dev/null; wait "$CTRL" 2>/dev/null; }
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
"$B/corral-fs" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount: $(tail -3 "$T/fs.log")"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
size() { echo $((($1 * 37) % 200 + 1)); }    # Gi of volume i
req() { echo $((($1 * 53 + 11) % N)); }      # claim j asks for volume req(j)'s size

# write_set PREFIX NS: N volumes PREFIX-v<i>, then N claims c<j> in NS
write_volumes() {
	local i
	for ((i = 0; i < N; i++)); do
		printf 'apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s-v%d}\nspec:\n  capacity: {storage: %dGi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: bench\n  hostPath: {path: /tmp/%s-v%d}\n' \
			"$1" "$i" "$(size "$i")" "$1" "$i" >"$M/persistentvolumes/$1-v$i.yaml" || die "volume $1-v$i refused: $(tail -1 "$M/.errors")"
	done
}
write_claims() {
	local j
	for ((j = 0; j < N; j++)); do
		printf 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c%d}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: bench\n  resources: {requests: {storage: %dGi}}\n' \
			"$j" "$(size "$(req "$j")")" >"$M/namespaces/$1/persistentvolumeclaims/c$j.yaml" || die "claim $1/c$j refused: $(tail -1 "$M/.errors")"
	done
}
mkdir "$M/namespaces/base" "$M/namespaces/bench" || die "cannot make the namespaces"

echo "bench: baseline, $N volumes and $N claims written with no controller" >&2
t0=$(now_ms)
write_volumes base
write_claims base
t1=$(now_ms)
BASE_MS=$((t1 - t0))
# bound NS: every claim of NS is Bound
bound() { [ "$(grep -l '^  phase: Bound' "$M/namespaces/$1/persistentvolumeclaims/"*.yaml 2>/dev/null | wc -l)" -ge "$N" ]; }
nbound() { grep -l '^  phase: Bound' "$M/namespaces/$1/persistentvolumeclaims/"*.yaml 2>/dev/null | wc -l; }

echo "bench: the binder started on them" >&2
t0=$(now_ms)
"$B/corral-ctrl" --mount "$M" --leader-elect=false \
	--controllers persistentvolume-binder,pvc-protection,pv-protection >"$T/ctrl.log" 2>&1 &
CTRL=$!
for _ in $(seq $((WAIT_MAX * 20))); do bound base && break; sleep 0.05; done
t1=$(now_ms)
bound base || die "not every claim bound within ${WAIT_MAX}s ($(nbound base) of $N)"
COLD_MS=$((t1 - t0))

echo "bench: $N more volumes, then $N more claims, written while the binder runs" >&2
write_volumes bench
available() { [ "$(grep -l '^  phase: Available' "$M/persistentvolumes/"bench-*.yaml 2>/dev/null | wc -l)" -ge "$N" ]; }
for _ in $(seq $((WAIT_MAX * 10))); do available && break; sleep 0.1; done
available || die "the volumes did not all become Available"
t0=$(now_ms)
write_claims bench
t_written=$(now_ms)
for _ in $(seq $((WAIT_MAX * 20))); do bound bench && break; sleep 0.05; done
t1=$(now_ms)
bound bench || die "not every claim bound within ${WAIT_MAX}s ($(nbound bench) of $N)"
LIVE_MS=$((t1 - t0))

# ---- the checks ----
bad=0
declare -A seen
check_set() { # NS PREFIX
	local j f v want got
	for ((j = 0; j < N; j++)); do
		f=$M/namespaces/$1/persistentvolumeclaims/c$j.yaml
		v=$(sed -n 's/^  volumeName: //p' "$f")
		[ -n "$v" ] || { echo "bench: $1/c$j names no volume" >&2; bad=$((bad + 1)); continue; }
		case $v in "$2"-v*) ;; *) echo "bench: $1/c$j bound to $v, not one of $2-*" >&2; bad=$((bad + 1)) ;; esac
		[ -z "${seen[$v]:-}" ] || { echo "bench: $v bound twice (${seen[$v]} and $1/c$j)" >&2; bad=$((bad + 1)); }
		seen[$v]=$1/c$j
		want=$(size "$(req "$j")")
		got=$(sed -n 's/^    storage: \([0-9]*\)Gi$/\1/p' "$M/persistentvolumes/$v.yaml" | head -1)
		[ "$got" = "$want" ] || { echo "bench: $1/c$j (${want}Gi) bound to $v (${got}Gi): not the smallest fit" >&2; bad=$((bad + 1)); }
		grep -A8 '  claimRef:' "$M/persistentvolumes/$v.yaml" | grep -q "name: c$j\$" ||
			{ echo "bench: $v's claimRef does not name c$j" >&2; bad=$((bad + 1)); }
	done
}
check_set base base
check_set bench bench
[ "$bad" = 0 ] || die "$bad check(s) failed"
printf '%-58s %10s %10s %8s\n' metric corral baseline ratio
printf '%-58s %10s %10s %8s\n' "$N claims bound from a cold start, ms [writing $((2 * N)) objects]" "$COLD_MS" "$BASE_MS" "$(ratio "$COLD_MS" "$BASE_MS")"
printf '%-58s %10s %10s %8s\n' "$N claims written and bound live, ms [writing $((2 * N)) objects]" "$LIVE_MS" "$BASE_MS" "$(ratio "$LIVE_MS" "$BASE_MS")"
printf '%-58s %10s\n' "  of which writing the $N claims, ms" "$((t_written - t0))"
echo "checked: $((2 * N)) of $((2 * N)) claims bound, each to a volume of exactly its size (smallest fit), no volume bound twice; target: $N bound in <= 5000 ms"
