#!/bin/bash
# bench/svclat.sh BUILD_DIR: a service's endpoints change reaching the proxy
# rules and the DNS answers after a pod's status changes (issue 6's target:
# a median of at most 100 ms), end to end: corral-fs, corral-ctrl (the
# endpoints controller), corral-dns and one real corral-noded (the proxy),
# on a private mount. BENCH_FLIPS (50) times the pod's address changes
# (its status written by hand: the pod's node runs no agent); each is timed
# from the close() to the endpoints file, the DNS answer of a headless
# service and the proxy's nftables table all showing it (bench/svclat.c,
# which polls nft(8), so its own cost is in the rules' figure). Baseline in
# the same run: `nft list table` itself, the polling's resolution.
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/svclat.sh BUILD_DIR"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
N=${BENCH_FLIPS:-50}
[ "$(id -u)" = 0 ] || die "needs root"
T=$(mktemp -d /tmp/corral-svclat.XXXXXX)
M=$T/mnt NODE=svclat-$$ PIDS=()
mkdir -p "$M"
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
cc -O2 -I"$ROOT/dns" -I"$ROOT/lib" -o "$T/svclat" "$SRC/svclat.c" "$ROOT/dns/wire.c" || die "cannot build svclat"
"$B/corral-fs" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
"$B/corral-ctrl" --mount "$M" --leader-elect=false >"$T/ctrl.log" 2>&1 &
PIDS+=($!)
"$B/corral-dns" --mount "$M" --port 10353 --health-port 0 --metrics-port 0 >"$T/dns.log" 2>&1 &
PIDS+=($!)
printf '[noded]\nstate = %s/nstate\nimages = %s/images\npod-log-dir = %s/logs\n' "$T" "$T" "$T" >"$T/noded.conf"
"$B/corral-noded" --mount "$M" --name "$NODE" --config "$T/noded.conf" --cleanup-on-exit >"$T/noded.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" 2>/dev/null && break; sleep 0.05; done
grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" 2>/dev/null || die "the node did not turn Ready: $(tail -2 "$T/noded.log")"
D=$M/namespaces/lat
mkdir -p "$D"
cat >"$D/services/lat.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: lat}
spec: {selector: {app: lat}, ports: [{port: 80, targetPort: 8080}]}
Y
cat >"$D/services/lath.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: lath}
spec: {clusterIP: None, selector: {app: lat}, ports: [{port: 80, targetPort: 8080}]}
Y
TABLE=$(nft list tables | sed -n "s/^table ip \(corral-proxy-svclat-$$\)\$/\1/p")
[ -n "$TABLE" ] || die "no proxy table for $NODE"
echo "bench: $N changes of a pod's address" >&2
OUT=$("$T/svclat" "$D/pods/lat.yaml" "$D/endpoints/lat.yaml" lath.lat.svc.cluster.local 10353 "$TABLE" "$N") ||
	die "svclat failed"
s=$(date +%s%N)
for _ in $(seq 20); do nft list table ip "$TABLE" >/dev/null; done
NFTMS=$(awk -v a="$s" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 20 / 1e6 }')
f() { echo "$OUT" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
printf '\n%-62s %8s %8s\n' metric median p90
printf '%-62s %8s %8s\n' "pod status close() -> endpoints file, ms" "$(f endpoints_median_ms)" "$(f endpoints_p90_ms)"
printf '%-62s %8s %8s\n' "pod status close() -> DNS answer (headless), ms" "$(f dns_median_ms)" "$(f dns_p90_ms)"
printf '%-62s %8s %8s\n' "pod status close() -> proxy rules in the kernel, ms" "$(f rules_median_ms)" "$(f rules_p90_ms)"
printf '%-62s %8s %8s\n' "pod status close() -> both DNS and rules, ms [target 100]" "$(f all_median_ms)" "$(f all_p90_ms)"
printf '%-62s %8s\n' "baseline: one nft list table (the rules' polling step), ms" "$NFTMS"
