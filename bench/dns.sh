#!/bin/bash
# bench/dns.sh BUILD_DIR: corral-dns against dnsmasq, side by side.
#
# Starts a private corral-fs (state and mount in a temporary folder) and
# writes BENCH_SERVICES (10,000) Services into it (namespace bench,
# ClusterIPs in 10.96.0.0/16), then:
#   1. corral-dns serving them with --threads 1 and, in a second process,
#      --threads 2 (BENCH_DNS_THREADS, "1 2"), and dnsmasq (--no-resolv
#      --no-hosts --addn-hosts) serving the same names from a hosts file,
#      all on loopback, and the floor: bench/dnsfloor.c, a minimal UDP
#      responder that answers every query with the same A record (one
#      process per thread count, as many threads, each its own socket,
#      recvmmsg/sendmmsg batches); dnsperf asks each the same shuffled A
#      queries for BENCH_SECONDS (10) per round, in turn, BENCH_ROUNDS (2)
#      rounds; the best round of each counts. Prints the qps of each, each
#      corral-dns's ratio to dnsmasq in the same run (target: corral-dns
#      >= 2.5x dnsmasq) and to the floor of its thread count, the floor's
#      ratio to dnsmasq (the most any server could show here), and the CPU
#      each server and
#      dnsperf used in its round (on a small machine dnsperf itself may be
#      what limits the rate: then its CPU is near the time of the round
#      times its threads).
#   2. the time from an Endpoints file's close to corral-dns answering with
#      the address it names (bench/dnslat.c), over BENCH_CHANGES (50)
#      changes: median, p90, max (target: median <= 100 ms).
# Asserts nothing about speed; fails when it cannot measure. Traffic goes
# to 127.0.0.1 only. BENCH_KEEP=1 keeps the temporary folder and logs;
# BENCH_PERF=1 profiles corral-dns in its last round (perf record -g) and
# prints where its time went.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/dns.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
FS=$B/corral-fs DNS=$B/corral-dns
NSVC=${BENCH_SERVICES:-10000}
SECS=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-2}
NCHG=${BENCH_CHANGES:-50}
PORT=10253 DMPORT=10254 FLOORPORT=10260
THREADS=${BENCH_DNS_THREADS:-1 2}
[ "$(id -u)" = 0 ] || die "needs root (it mounts)"
for x in "$FS" "$DNS"; do [ -x "$x" ] || die "no $x (run make)"; done
for t in dnsperf dnsmasq dig; do command -v $t >/dev/null || die "$t is missing (scripts/deps.sh)"; done

T=$(mktemp -d /tmp/corral-bench-dns.XXXXXX)
chmod 755 "$T"
M=$T/mnt
mkdir -p "$M"
PIDS=()
FSPID=
finish() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "$FSPID" ] && kill "$FSPID" 2>/dev/null
	for _ in $(seq 50); do mountpoint -q "$M" || break; sleep 0.1; done
	mountpoint -q "$M" && fusermount3 -u "$M"
	[ -n "$FSPID" ] && wait "$FSPID" 2>/dev/null
	if [ -n "${BENCH_KEEP:-}" ]; then echo "bench: kept $T"; else rm -rf "$T"; fi
}
trap finish EXIT

cc -O2 -std=gnu11 -D_GNU_SOURCE -iquote "$SRC/dns" -iquote "$SRC/lib" -o "$T/dnslat" \
	"$SRC/bench/dnslat.c" "$SRC/dns/wire.c" || die "cannot build dnslat"
cc -O2 -std=gnu11 -D_GNU_SOURCE -pthread -o "$T/dnsfloor" "$SRC/bench/dnsfloor.c" ||
	die "cannot build dnsfloor"

"$FS" -f --state "$T/state" "$M" >>"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.1; done
[ -d "$M/namespaces" ] || die "corral-fs did not mount"
mkdir "$M/namespaces/bench"

# The i-th service's name and address: s<i>, 10.96.<1 + i/250>.<1 + i%250>.
ip_of() { echo "10.96.$((1 + $1 / 250)).$((1 + $1 % 250))"; }
echo "bench: writing $NSVC services through the mount"
start=$(date +%s.%N)
WRITERS=()
for w in $(seq 0 7); do
	(
		for ((i = w; i < NSVC; i += 8)); do
			printf 'apiVersion: v1\nkind: Service\nmetadata: {name: s%d}\nspec: {clusterIP: %s, ports: [{name: http, port: 80}]}\n' \
				"$i" "$(ip_of $i)" >"$M/namespaces/bench/services/s$i.yaml" || exit 1
		done
	) &
	WRITERS+=($!)
done
for p in "${WRITERS[@]}"; do wait "$p" || die "a writer failed"; done
n=$(ls "$M/namespaces/bench/services" | wc -l)
[ "$n" = "$NSVC" ] || die "only $n of $NSVC services were written"
echo "bench: written in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
printf 'apiVersion: v1\nkind: Service\nmetadata: {name: lat}\nspec: {clusterIP: None, ports: [{port: 80}]}\n' \
	>"$M/namespaces/bench/services/lat.yaml"

# the same names for dnsmasq, and the queries (shuffled, the same for both)
for ((i = 0; i < NSVC; i++)); do echo "$(ip_of $i) s$i.bench.svc.cluster.local"; done >"$T/hosts"
for ((i = 0; i < NSVC; i++)); do echo "s$i.bench.svc.cluster.local A"; done | shuf >"$T/queries"

# one corral-dns per thread count, each on a port of its own (the first:
# PORT, the one dnslat asks), and one floor per thread count
declare -A DNSPORT DNSPID FLPORT FLPID
p=$PORT
for t in $THREADS; do
	FLPORT[$t]=$((FLOORPORT + t))
	"$T/dnsfloor" "${FLPORT[$t]}" "$t" 10.96.0.1 >>"$T/dnsfloor-$t.log" 2>&1 &
	FLPID[$t]=$!
	PIDS+=($!)
	DNSPORT[$t]=$p
	"$DNS" --mount "$M" --listen 127.0.0.1 --port "$p" --health-port 0 --metrics-port 0 \
		--threads "$t" --register-service=false --log-level warn >>"$T/dns-$t.log" 2>&1 &
	DNSPID[$t]=$!
	PIDS+=($!)
	[ "$p" = $PORT ] && p=10255 || p=$((p + 1))
done
dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --addn-hosts="$T/hosts" \
	--listen-address=127.0.0.1 --bind-interfaces --port=$DMPORT --user=root \
	--pid-file="$T/dnsmasq.pid" --cache-size=10000 >>"$T/dnsmasq.log" 2>&1 &
DMPID=$!
PIDS+=($DMPID)
last=$((NSVC - 1))
answers() { [ "$(dig @127.0.0.1 -p "$1" +short +time=1 +tries=1 s$last.bench.svc.cluster.local)" = "$(ip_of $last)" ]; }
for _ in $(seq 600); do
	all=1
	for t in $THREADS; do answers "${DNSPORT[$t]}" || all=; done
	[ -n "$all" ] && answers $DMPORT && break
	sleep 0.1
done
for t in $THREADS; do answers "${DNSPORT[$t]}" || die "corral-dns --threads $t does not answer (see $T/dns-$t.log)"; done
for t in $THREADS; do
	[ "$(dig @127.0.0.1 -p "${FLPORT[$t]}" +short +time=1 +tries=1 s0.bench.svc.cluster.local)" = 10.96.0.1 ] ||
		die "dnsfloor $t does not answer (see $T/dnsfloor-$t.log)"
done
answers $DMPORT || die "dnsmasq does not answer"
# cpu PID: the user and system time a process has used, in clock ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# busy: the machine's busy and total clock ticks so far (all CPUs)
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# qps PORT PID: dnsperf's "Queries per second", and a check that all were
# answered NOERROR; the CPU (% of one core) the server PID and dnsperf used
# go to $T/cpu-PORT
qps() {
	local c0 c1 b0 b1 perf= stat=
	if [ -n "${BENCH_PERF:-}" ] && [ "$r" = "$ROUNDS" ]; then
		if [ "$1" = "$PERFPORT" ]; then
			perf record -F 999 -g -p "$2" -o "$T/perf.data" -- sleep "$SECS" >"$T/perf.log" 2>&1 &
			perf=$!
		fi
		perf stat -x, -e 'syscalls:sys_enter_*' -p "$2" -o "$T/stat-$1" -- sleep "$SECS" >/dev/null 2>&1 &
		stat=$!
	fi
	c0=$(cpu "$2")
	b0=$(busy)
	/usr/bin/time -f '%U %S' -o "$T/time-$1" dnsperf -s 127.0.0.1 -p "$1" -d "$T/queries" -l "$SECS" \
		-c 4 -q 200 -t 2 >"$T/dnsperf-$1.log" 2>&1 ||
		die "dnsperf failed against port $1 (see $T/dnsperf-$1.log)"
	c1=$(cpu "$2")
	b1=$(busy)
	[ -n "$perf" ] && wait "$perf"
	[ -n "$stat" ] && wait "$stat"
	grep -q 'NOERROR' "$T/dnsperf-$1.log" || die "port $1 answered no NOERROR"
	awk -v c0="$c0" -v c1="$c1" -v s="$SECS" -v hz="$(getconf CLK_TCK)" -v b0="$b0" -v b1="$b1" \
		'{ split(b0, x, " "); split(b1, y, " ");
		   printf "server %.0f%%, dnsperf %.0f%%, machine %.0f%% busy\n", 100 * (c1 - c0) / hz / s,
			100 * ($1 + $2) / s, 100 * (y[1] - x[1]) / (y[2] - x[2]) }' "$T/time-$1" >"$T/cpu-$1"
	sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' "$T/dnsperf-$1.log"
}
# BENCH_PERF profiles the corral-dns with the most threads
PERFPORT=
for t in $THREADS; do PERFPORT=${DNSPORT[$t]}; done
declare -A BEST FLBEST
best_d=0
for t in $THREADS; do BEST[$t]=0 FLBEST[$t]=0; done
for r in $(seq "$ROUNDS"); do
	d=$(qps $DMPORT $DMPID)
	line="bench: round $r: dnsmasq $d qps ($(cat "$T/cpu-$DMPORT"))"
	for t in $THREADS; do
		c=$(qps "${DNSPORT[$t]}" "${DNSPID[$t]}")
		line="$line; corral-dns --threads $t $c qps ($(cat "$T/cpu-${DNSPORT[$t]}"))"
		BEST[$t]=$(echo "$c ${BEST[$t]}" | awk '{print ($1 > $2) ? $1 : $2}')
		f=$(qps "${FLPORT[$t]}" "${FLPID[$t]}")
		line="$line; floor, $t thread(s) $f qps ($(cat "$T/cpu-${FLPORT[$t]}"))"
		FLBEST[$t]=$(echo "$f ${FLBEST[$t]}" | awk '{print ($1 > $2) ? $1 : $2}')
	done
	echo "$line [CPU: % of one core; the machine's busy time: % of its $(nproc) cores]"
	best_d=$(echo "$d $best_d" | awk '{print ($1 > $2) ? $1 : $2}')
done
lost=$(sed -n 's/.*Queries lost: *\([0-9]*\).*/\1/p' "$T/dnsperf-$PORT.log")

echo "bench: $NCHG Endpoints changes, close to answer"
lat=$("$T/dnslat" "$M/namespaces/bench/endpoints/lat.yaml" lat.bench.svc.cluster.local $PORT "$NCHG") ||
	die "change latency: $lat"

echo
printf '%-44s %14s %14s %8s\n' "metric" "corral-dns" "baseline" "ratio"
# row METRIC A B: A, B and A / B
row() { printf '%-44s %14.0f %14.0f %7.2fx\n' "$1" "$2" "$3" "$(echo "$2 $3" | awk '{print $1 / $2}')"; }
for t in $THREADS; do
	row "A queries/s, --threads $t [dnsmasq hosts]" "${BEST[$t]}" "$best_d"
	row "A queries/s, --threads $t [floor, $t thread(s)]" "${BEST[$t]}" "${FLBEST[$t]}"
	row "floor's queries/s, $t thread(s) [dnsmasq hosts]" "${FLBEST[$t]}" "$best_d"
done
med=$(echo "$lat" | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
p90=$(echo "$lat" | sed -n 's/.*p90_ms=\([0-9.]*\).*/\1/p')
max=$(echo "$lat" | sed -n 's/.*max_ms=\([0-9.]*\).*/\1/p')
printf '%-44s %11s ms %14s %8s\n' "Endpoints close -> answer, median of $NCHG" "$med" "100 ms (target)" "-"
printf '%-44s %11s ms\n' "... p90" "$p90"
printf '%-44s %11s ms\n' "... max" "$max"
if [ -n "${BENCH_PERF:-}" ]; then
	echo "bench: corral-dns's profile in its last round (perf report --no-children, top 40):"
	perf report -i "$T/perf.data" --no-children --stdio --sort sym 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -40
	for p in $PERFPORT $DMPORT; do
		echo "bench: system calls of the server on port $p in its last round (per query):"
		q=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' "$T/dnsperf-$p.log")
		awk -F, -v q="$q" '$1 ~ /^[0-9]+$/ && $1 > 0 { sub("syscalls:sys_enter_", "", $3);
			printf "  %-16s %10d %8.3f\n", $3, $1, $1 / q }' "$T/stat-$p" | sort -k2 -nr | head -8
	done
fi
echo "(corral-dns lost ${lost:-0} queries in its last round; dnsperf: -c 4 -q 200, ${SECS}s per round, best of $ROUNDS)"
