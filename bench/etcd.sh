#!/bin/bash
# bench/etcd.sh BUILD_DIR: corral-fs over a three-member etcd on loopback.
#
# Prints, in one run:
#   - durable writes/s through one mount (ConfigMaps created, each durable
#     at close), 1 and 8 writers, beside the same puts made straight to etcd
#     through corral-fs's own etcd client (store_apply, with the history
#     outbox entry, as the mount writes them): ratio mount/direct (goal >= 0.5);
#   - the etcd requests each of those writes cost (KV requests the three
#     members answered, over the writes made; the history's and the
#     liveness probe's included), beside the direct puts' (one each);
#   - the time from a write on mount A until an inotify watch on mount B
#     reports it, p50 and p99 in ms (goals 20 and 100), from the write's
#     open and from its close's return (the write acknowledged).
# It asserts nothing about time; it fails only when it cannot measure.
# Knobs: BENCH_SECONDS per rate phase (5), BENCH_LATENCY_WRITES (200).
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/etcd.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
FS=$B/corral-fs
SECS=${BENCH_SECONDS:-5}
LATN=${BENCH_LATENCY_WRITES:-200}
[ -x "$FS" ] || die "no $FS (run make first)"
[ "$(id -u)" = 0 ] || die "needs root (FUSE allow_other)"
command -v etcd >/dev/null || die "needs etcd (apt-get install etcd-server)"
# shellcheck disable=SC2046
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -pthread -iquote "$ROOT/lib" -iquote "$ROOT/fs" \
	-o "$B/etcdbench" "$SRC/etcdbench.c" "$B/fs/store.o" "$B/fs/store_backend.o" \
	"$B/fs/store_etcd.o" "$B/fs/keylock.o" "$B/libcorral.a" \
	$(pkg-config --libs yaml-0.1 lmdb jansson libcrypto libcurl) -lpthread ||
	die "cannot build etcdbench"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench-etcd.XXXXXX") || die "mktemp fails"
MA=$T/a MB=$T/b
mkdir -p "$MA" "$MB"
EPIDS=()
FPIDS=()
cleanup() {
	set +e
	for p in "${FPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for m in "$MA" "$MB"; do
		for _ in $(seq 50); do mountpoint -q "$m" || break; sleep 0.1; done
		mountpoint -q "$m" && { fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; }
	done
	# Each process gone before its folders are removed.
	for p in "${FPIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for p in "${EPIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
wait_for() { local s=$1; shift; for _ in $(seq $((s * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

# Ports below the ephemeral range.
free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
BASE=
for try in $(seq 0 40); do
	b=$((21000 + (($$ * 11 + try * 89) % 1100) * 10))
	free $((b + 1)) && free $((b + 2)) && free $((b + 3)) && free $((b + 5)) &&
		free $((b + 6)) && free $((b + 7)) && { BASE=$b; break; }
done
[ -n "$BASE" ] || die "no free ports"
CL="e1=http://127.0.0.1:$((BASE + 5)),e2=http://127.0.0.1:$((BASE + 6)),e3=http://127.0.0.1:$((BASE + 7))"
for i in 1 2 3; do
	etcd --name "e$i" --data-dir "$T/e$i" --listen-client-urls "http://127.0.0.1:$((BASE + i))" \
		--advertise-client-urls "http://127.0.0.1:$((BASE + i))" \
		--listen-peer-urls "http://127.0.0.1:$((BASE + 4 + i))" \
		--initial-advertise-peer-urls "http://127.0.0.1:$((BASE + 4 + i))" \
		--initial-cluster "$CL" --initial-cluster-token "bench-$$" >"$T/e$i.log" 2>&1 &
	EPIDS+=($!)
done
for i in 1 2 3; do
	wait_for 30 sh -c "curl -sf -m 1 http://127.0.0.1:$((BASE + i))/health | grep -q true" ||
		die "etcd did not start: $(tail -2 "$T/e$i.log")"
done
EPS="127.0.0.1:$((BASE + 1)),127.0.0.1:$((BASE + 2)),127.0.0.1:$((BASE + 3))"
EPS_B="127.0.0.1:$((BASE + 2)),127.0.0.1:$((BASE + 3)),127.0.0.1:$((BASE + 1))"
# KV requests the members have answered so far (gRPC, which the JSON
# gateway calls too).
kv_requests() {
	for p in $((BASE + 1)) $((BASE + 2)) $((BASE + 3)); do curl -s -m 5 "http://127.0.0.1:$p/metrics"; done |
		awk '/^grpc_server_handled_total/ && /grpc_service="etcdserverpb.KV"/ { n += $2 } END { printf "%d", n }'
}
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# The baseline first, with no corral-fs watching (a watcher's replays would
# take the CPU the puts need); then mount A alone for its writes; then B,
# for the latency.
declare -A base breq
for w in 1 8; do
	r0=$(kv_requests)
	read -r base[$w] n < <("$B/etcdbench" store "$EPS" "$w" "$SECS") || die "the direct puts failed"
	breq[$w]=$(per $(($(kv_requests) - r0)) "$n")
done
"$FS" -f --store "etcd://$EPS" --state "$T/sa" "$MA" >"$T/fsa.log" 2>&1 &
FPIDS+=($!)
# (the store is not empty: no default namespaces are made)
wait_for 20 test -d "$MA/namespaces" || die "corral-fs A did not mount: $(tail -2 "$T/fsa.log")"
mkdir "$MA/namespaces/bench" || die "mkdir on the mount"
printf '%-44s %12s %12s %8s\n' metric corral baseline ratio
for w in 1 8; do
	r0=$(kv_requests)
	read -r mnt n < <("$B/etcdbench" mount "$MA/namespaces/bench/configmaps" "$w" "$SECS") ||
		die "the mount's writes failed"
	req=$(per $(($(kv_requests) - r0)) "$n")
	printf '%-44s %12s %12s %8s\n' "durable writes/s, $w writer(s) (mount vs etcd)" "$mnt" "${base[$w]}" "$(ratio "$mnt" "${base[$w]}")"
	printf '%-44s %12s %12s %8s\n' "  etcd requests per write, $w writer(s)" "$req" "${breq[$w]}" "$(ratio "$req" "${breq[$w]}")"
done
"$FS" -f --store "etcd://$EPS_B" --state "$T/sb" "$MB" >"$T/fsb.log" 2>&1 &
FPIDS+=($!)
wait_for 20 test -d "$MB/namespaces/bench" || die "corral-fs B did not mount: $(tail -2 "$T/fsb.log")"
mkdir "$MA/namespaces/lat" && wait_for 10 test -d "$MB/namespaces/lat/configmaps" || die "no lat namespace on B"
read -r p50 p99 a50 a99 n < <("$B/etcdbench" latency "$MA/namespaces/lat/configmaps" "$MB/namespaces/lat/configmaps" "$LATN") ||
	die "latency: nothing measured"
printf '%-44s %12s %12s %8s\n' "write on A seen by inotify on B, p50 ms" "$p50" "20 (goal)" "$(ratio "$p50" 20)"
printf '%-44s %12s %12s %8s\n' "write on A seen by inotify on B, p99 ms" "$p99" "100 (goal)" "$(ratio "$p99" 100)"
printf '%-44s %12s %12s %8s\n' "  the same from A's close (acknowledged), p50" "$a50" "20 (goal)" "$(ratio "$a50" 20)"
printf '%-44s %12s %12s %8s\n' "  the same from A's close (acknowledged), p99" "$a99" "100 (goal)" "$(ratio "$a99" 100)"
echo "($n of $LATN writes seen on B)"
