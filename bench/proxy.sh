#!/bin/bash
# bench/proxy.sh BUILD_DIR: corral-noded's service proxy, run alone by
# tests/tools/proxy-run, against a private corral-fs, in network namespaces
# made for the run (a "host" with a bridge, two server pods, a client pod;
# nothing touches the machine's own network).
#
#   1. Endpoints change to live rules: the client pod (one python3 process
#      in its namespace) rewrites endpoints/lat.yaml so that its one address
#      flips between pod p1 and pod p2, takes the time when close() returns,
#      then connects to the ClusterIP until the other pod answers. Median,
#      p90 and max over BENCH_CHANGES (50) changes, with the one service,
#      then again with BENCH_SERVICES (1000) services in the table. The
#      baseline is `nft -f` of the same table text by hand (the floor: what
#      applying the rules alone costs).
#   2. Apply time of a table of BENCH_SERVICES services (2 endpoints each):
#      proxy-run --once's own apply (spawning nft -f - for the whole
#      transaction) against `nft -f` of the same text by hand; medians of
#      BENCH_REPEAT (5).
# Prints one table: metric, corral, baseline, ratio. Asserts nothing about
# time. Knobs: BENCH_CHANGES, BENCH_SERVICES, BENCH_REPEAT, BENCH_KEEP=1.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/proxy.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
FS=$B/corral-fs PROXY=$B/tests/tools/proxy-run BB=/usr/bin/busybox
CHANGES=${BENCH_CHANGES:-50}
NSVC=${BENCH_SERVICES:-1000}
REPEAT=${BENCH_REPEAT:-5}
for b in "$FS" "$PROXY" "$BB"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (FUSE, network namespaces)"
command -v nft >/dev/null || die "no nft"
PY=$(command -v python3) || die "no python3"

ID=$$
H=crlbench-host-$ID
BR=crl-b$ID
TABLE=crlbench-proxy
T=$(mktemp -d "${TMPDIR:-/tmp}/corral-proxybench.XXXXXX") || die "mktemp fails"
M=$T/mnt
mkdir -p "$M"
NSS=() PIDS=() FSPID=
cleanup() {
	set +e
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null; done
	if [ -n "$FSPID" ]; then
		kill "$FSPID" 2>/dev/null
		for _ in $(seq 50); do mountpoint -q "$M" || break; sleep 0.1; done
		mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
		kill -9 "$FSPID" 2>/dev/null
		wait "$FSPID" 2>/dev/null
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then echo "bench: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$FS" -f --state "$T/state" "$M" >>"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.1; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount: $(tail -3 "$T/fs.log")"
mkdir -p "$M/namespaces/bench"
D=$M/namespaces/bench

. "$(cd "$(dirname "$0")" && pwd)/../tests/lib/netns.sh"
netns_host || die "ip netns add $H"
mkpod() { netns_pod "crlbench-$1-$ID" "$1" "$2"; }
mkpod p1 10.244.0.2
mkpod p2 10.244.0.3
mkpod p3 10.244.0.4

cat >"$D/services/lat.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: lat}
spec:
  clusterIP: 10.96.0.2
  ports: [{name: http, port: 80, targetPort: 8080}]
Y
cat >"$T/lat.py" <<'P'
# lat.py ENDPOINTS_FILE CLUSTER_IP CHANGES: flips the endpoints between p1
# and p2 and prints, per change, the ms from close() to the first answer
# of the new endpoint through the ClusterIP.
import socket, sys, time
path, cip, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
pods = {"p1": "10.244.0.2", "p2": "10.244.0.3"}
def ask():
    try:
        s = socket.create_connection((cip, 80), timeout=0.5)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
        s.close()
        return data.split(b"\r\n\r\n", 1)[-1].decode().strip()
    except OSError:
        return None
for i in range(n + 1):
    want = "p1" if i % 2 == 0 else "p2"
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Endpoints\nmetadata: {name: lat}\nsubsets:\n"
                "- addresses: [{ip: %s}]\n  ports: [{name: http, port: 8080}]\n" % pods[want])
    t0 = time.monotonic()
    deadline = t0 + 10
    while ask() != want:
        if time.monotonic() > deadline:
            print("timeout", flush=True)
            sys.exit(1)
    if i > 0:  # the first one waits for the proxy's start
        print("%.3f" % ((time.monotonic() - t0) * 1000), flush=True)
    time.sleep(0.02)
P

start_proxy() {
	ip netns exec "$H" "$PROXY" --mount "$M" --table "$TABLE" --bridge "$BR" \
		--pod-cidr 10.244.0.0/24 ${BENCH_VERBOSE:+--verbose} >"$T/proxy.out" 2>>"$T/proxy.log" &
	PROXY_PID=$!
	PIDS+=($PROXY_PID)
	for _ in $(seq 600); do grep -q ready "$T/proxy.out" && return 0; sleep 0.1; done
	die "proxy-run did not start: $(tail -3 "$T/proxy.log")"
}
stop_proxy() { kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; }
# stats FILE: "median p90 max" of the numbers in FILE
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) { print "- - -"; exit }
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	p = v[int(NR * 0.9 + 0.999)]; printf "%.1f %.1f %.1f", m, p, v[NR] }'; }
median() { stats "$1" | cut -d' ' -f1; }
# nft_by_hand FILE: ms of `nft -f FILE`, timed inside the host namespace
# (as proxy-run times its own), median of REPEAT
nft_by_hand() {
	ip netns exec "$H" bash -c 'for i in $(seq "$2"); do
		s=$(date +%s%N); nft -f "$1" || exit 1; e=$(date +%s%N)
		echo $(( (e - s) / 1000 )); done' - "$1" "$REPEAT" |
		awk '{ printf "%.1f\n", $1 / 1000 }' >"$T/hand.ms" || die "nft -f $1 fails"
	ip netns exec "$H" nft delete table ip "$TABLE"
	median "$T/hand.ms"
}
# the same transaction proxy-run sends: create, delete, then the table
transaction() {
	{ printf 'table ip %s {}\ndelete table ip %s\n' "$TABLE" "$TABLE"
	  ip netns exec "$H" "$PROXY" --mount "$M" --table "$TABLE" --bridge "$BR" \
		--pod-cidr 10.244.0.0/24 --print; } >"$1"
}
latency() { # LABEL
	ip netns exec crlbench-p3-$ID "$PY" "$T/lat.py" "$D/endpoints/lat.yaml" 10.96.0.2 "$CHANGES" \
		>"$T/lat-$1.ms" || die "latency run $1: $(tail -1 "$T/lat-$1.ms")"
}

ROWS=()
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
row() { ROWS+=("$(printf '%-60s %10s %10s %8s' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }

# ---- 1. latency, one service -----------------------------------------------
start_proxy
latency 1
stop_proxy
transaction "$T/small.nft"
HAND1=$(nft_by_hand "$T/small.nft")
read -r M1 P1 X1 <<<"$(stats "$T/lat-1.ms")"
row "endpoints change -> live, 1 service: median ms [nft -f]" "$M1" "$HAND1"
row "endpoints change -> live, 1 service: p90 ms [nft -f]" "$P1" "$HAND1"
row "endpoints change -> live, 1 service: max ms [nft -f]" "$X1" "$HAND1"

# ---- 2. a thousand services ------------------------------------------------
"$PY" - "$D" "$NSVC" <<'P' || die "cannot write $NSVC services"
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    ip = "10.96.%d.%d" % (1 + i // 250, 1 + i % 250)
    with open("%s/services/s%d.yaml" % (d, i), "w") as f:
        f.write("apiVersion: v1\nkind: Service\nmetadata: {name: s%d}\nspec:\n"
                "  clusterIP: %s\n  ports: [{name: http, port: 80}, {name: dns, port: 53, protocol: UDP}]\n" % (i, ip))
    with open("%s/endpoints/s%d.yaml" % (d, i), "w") as f:
        f.write("apiVersion: v1\nkind: Endpoints\nmetadata: {name: s%d}\nsubsets:\n"
                "- addresses: [{ip: 10.244.1.%d}, {ip: 10.244.2.%d}]\n"
                "  ports: [{name: http, port: 8080}, {name: dns, port: 5353, protocol: UDP}]\n"
                % (i, 1 + i % 250, 1 + i % 250))
P
: >"$T/apply.ms" && : >"$T/render.ms"
for i in $(seq "$REPEAT"); do
	ip netns exec "$H" "$PROXY" --mount "$M" --table "$TABLE" --bridge "$BR" \
		--pod-cidr 10.244.0.0/24 --once >"$T/once.out" 2>>"$T/proxy.log" || die "proxy-run --once fails"
	awk '{ printf "%.1f\n", $4 / 1000 }' "$T/once.out" >>"$T/apply.ms"
	awk '{ printf "%.1f\n", $2 / 1000 }' "$T/once.out" >>"$T/render.ms"
	BYTES=$(awk '{ print $6 }' "$T/once.out")
done
ip netns exec "$H" nft delete table ip "$TABLE"
transaction "$T/big.nft"
HANDN=$(nft_by_hand "$T/big.nft")
RULES=$(grep -c 'dnat to' "$T/big.nft")
row "apply $NSVC services ($RULES DNAT rules, $BYTES B): ms [nft -f]" "$(median "$T/apply.ms")" "$HANDN"
row "render $NSVC services: ms [nft -f]" "$(median "$T/render.ms")" "$HANDN"

start_proxy
latency n
stop_proxy
read -r MN PN XN <<<"$(stats "$T/lat-n.ms")"
row "endpoints change -> live, $NSVC services: median ms [nft -f]" "$MN" "$HANDN"
row "endpoints change -> live, $NSVC services: p90 ms [nft -f]" "$PN" "$HANDN"
row "endpoints change -> live, $NSVC services: max ms [nft -f]" "$XN" "$HANDN"

printf '%-60s %10s %10s %8s\n' "metric [baseline]" corral baseline ratio
printf '%-60s %10s %10s %8s\n' "$(printf '%.0s-' $(seq 60))" ---------- ---------- --------
printf '%s\n' "${ROWS[@]}"
echo "($CHANGES changes per latency row; apply and nft -f: medians of $REPEAT)"
