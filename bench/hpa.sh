#!/bin/bash
# bench/hpa.sh BUILD_DIR: the metrics' cost and the autoscaler's targets
# (issue 15), measured in one run.
#
# Starts a private corral-fs, then:
#   1. metrics cost: a hollow corral-noded running BENCH_PODS (100) pods
#      (each with a hollow.corral.io/cpu annotation, so that every pod has a
#      PodMetrics), first with metrics-interval 1h (the baseline: heartbeats
#      only), then at 1 s; its CPU over BENCH_WINDOW (10) seconds each, and
#      the store revisions (writes) in each window, read from a marker's
#      resourceVersion. The CPU per round of readings is scaled to the
#      15 s default: % of a core for metrics at 15 s. The store's write
#      capacity is measured in the same run: durable writes/s of objects of
#      a PodMetrics' size by 1 and 8 writers; the metric writes of 100 pods
#      at 15 s are printed as a share of it;
#   2. the autoscaler on real pods: a Deployment of busybox pods (request
#      100m, limit 100m) that burn CPU on demand: BENCH_TOKENS (2) token
#      folders in a hostPath volume, each claimed by one pod, which then
#      burns its whole limit. The load is 2 x 100m whatever the number of
#      pods, so an HPA at 50% has one steady count: 4. The table prints
#      replicas and utilization every sync period from the load's start,
#      through its stop, until the count is back at 1 after the
#      stabilization window; the ratios are the sync periods and seconds
#      taken against the targets (3 sync periods to the steady count;
#      back down after the window). A PNG plot beside the table when
#      gnuplot is installed.
#
# Knobs: BENCH_PODS (100), BENCH_WINDOW (10), BENCH_SYNC (5s),
# BENCH_STABILIZATION (30s), BENCH_TOKENS (2), BENCH_MAX (6),
# BENCH_PLOT (hpa.png, in the current folder), BENCH_KEEP=1. Asserts nothing
# about time; fails when it cannot measure.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/hpa.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl NODED=$B/corral-noded CORRAL=$ROOT/tools/corral
NPODS=${BENCH_PODS:-100}
WINDOW=${BENCH_WINDOW:-10}
SYNC=${BENCH_SYNC:-5}
STAB=${BENCH_STABILIZATION:-30}
TOKENS=${BENCH_TOKENS:-2}
MAXR=${BENCH_MAX:-6}
PLOT=${BENCH_PLOT:-$PWD/hpa.png}
for b in "$FS" "$CTRL" "$NODED"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem, runs containers)"
[ -c /dev/fuse ] || die "no /dev/fuse"
command -v systemd-nspawn >/dev/null || die "systemd-nspawn is missing"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-hpabench.XXXXXX") || die "mktemp fails"
chmod 755 "$T"
M=$T/mnt
mkdir -p "$M" "$T/load" "$T/logs"
FSPID= CTRL_PID= HOLLOW_PID= REAL_PID=
stop() { # PIDVAR
	local p=${!1}
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	printf -v "$1" '%s' ""
}
cleanup() {
	set +e
	rm -rf "$T/load/on" "$T"/load/claim.*
	stop CTRL_PID
	stop HOLLOW_PID
	stop REAL_PID # --cleanup-on-exit: its pods, bridge and table go
	if [ -n "$FSPID" ]; then
		kill "$FSPID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$FSPID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$FSPID" 2>/dev/null
		wait "$FSPID" 2>/dev/null
	fi
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	grep " $T/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
ROWS=()
row() { ROWS+=("$(printf '%-56s %12s %12s %8s' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }
until_() {
	local end=$((SECONDS + $1)) what=$2
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || die "timed out: $what"
		sleep 0.2
	done
}
now_ns() { date +%s%N; }
MARK=$M/namespaces/default/configmaps/bench-mark.yaml
# rev: the store's revision now (a marker's resourceVersion after a write)
rev() {
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bench-mark}\ndata: {t: "%s"}\n' "$(now_ns)" >"$MARK"
	sed -n "s/^  resourceVersion: '\{0,1\}\([0-9]*\)'\{0,1\}\$/\1/p" "$MARK" | head -1
}

"$FS" -f --state "$T/state" --pod-log-dir "$T/logs" "$M" >"$T/fs.log" 2>&1 &
FSPID=$!
until_ 10 "corral-fs mounts" test -d "$M/namespaces"
mkdir -p "$M/namespaces/bench"
D=$M/namespaces/bench

# ---- 1. metrics cost --------------------------------------------------------
conf() { # INTERVAL
	cat >"$T/noded.conf" <<C
[noded]
state = $T/nstate
images = $T/images
pod-log-dir = $T/logs
metrics-interval = $1
hollow-cpu = 64
hollow-memory = 256Gi
max-pods = 500
C
}
start_hollow() {
	"$NODED" --mount "$M" --name bench-hollow --hollow --config "$T/noded.conf" \
		>>"$T/hollow.log" 2>&1 &
	HOLLOW_PID=$!
}
conf 1h
start_hollow
until_ 20 "the hollow node registers" grep -q 'reason: KubeletReady' "$M/nodes/bench-hollow.yaml"
for i in $(seq "$NPODS"); do
	cat >"$D/pods/p$i.yaml" <<Y || die "pod p$i refused: $(tail -1 "$M/.errors")"
apiVersion: v1
kind: Pod
metadata:
  name: p$i
  annotations: {hollow.corral.io/cpu: 250m, hollow.corral.io/memory: 64Mi}
spec:
  nodeName: bench-hollow
  containers: [{name: app, image: busybox, resources: {requests: {cpu: 100m}}}]
Y
done
running() { [ "$(grep -l '^  phase: Running' "$D"/pods/p*.yaml 2>/dev/null | wc -l)" -ge "$NPODS" ]; }
until_ 120 "$NPODS hollow pods run" running
# measure PID SECONDS: sets CPU (seconds) and WRITES (store revisions)
measure() {
	local t0 t1 r0 r1
	r0=$(rev)
	t0=$(ticks "$1")
	sleep "$2"
	t1=$(ticks "$1")
	r1=$(rev)
	CPU=$(calc "($t1 - $t0) / $HZ" 4)
	WRITES=$((r1 - r0 - 1))
}
sleep 2
measure "$HOLLOW_PID" "$WINDOW"
BASE_CPU=$CPU BASE_WRITES=$WRITES
stop HOLLOW_PID
conf 1s
start_hollow
pm_all() { [ "$(ls "$D/podmetrics" | wc -l)" -ge "$NPODS" ]; }
until_ 30 "$NPODS PodMetrics" pm_all
measure "$HOLLOW_PID" "$WINDOW"
MET_CPU=$CPU MET_WRITES=$WRITES
stop HOLLOW_PID
# per round of readings (one a second), beyond the baseline's work
per_round=$(calc "($MET_CPU - $BASE_CPU) / $WINDOW" 5)
pct15=$(calc "100 * $per_round / 15" 4)
writes_round=$(calc "($MET_WRITES - $BASE_WRITES) / $WINDOW" 1)
writes15=$(calc "$writes_round / 15" 2)

# the store's capacity for writes of that size: bash's own open/write/close
# loop (no process per write), 1 and 8 writers, for WINDOW seconds
PMTEXT=$(cat "$D/podmetrics/p1.yaml" | grep -v -e '^  resourceVersion' -e '^  uid' -e '^  creationTimestamp')
writer() { # ID
	local end=$((SECONDS + WINDOW)) n=0 k texts=()
	for k in $(seq 0 49); do texts[k]=${PMTEXT//name: p1$'\n'/name: cap$1-$k$'\n'}; done
	while [ $SECONDS -lt $end ]; do
		k=$((n % 50))
		printf '%s\n' "${texts[k]}" >"$D/podmetrics/cap$1-$k.yaml" 2>/dev/null && n=$((n + 1))
	done
	echo "$n"
}
capacity() { # WRITERS
	local pids=() total=0 i f
	for i in $(seq "$1"); do
		writer "$i" >"$T/cap.$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in $(seq "$1"); do total=$((total + $(cat "$T/cap.$i"))); done
	calc "$total / $WINDOW" 1
}
CAP1=$(capacity 1)
CAP8=$(capacity 8)
rm -f "$D"/podmetrics/cap*.yaml

row "metrics: corral-noded CPU per reading of $NPODS pods, ms" "$(calc "1000 * $per_round" 2)" "-"
row "metrics: corral-noded CPU at 15 s, % of a core" "$pct15" "1"
row "metrics: store writes per reading (measured)" "$writes_round" "$((NPODS + 1))"
row "metrics: writes/s at 15 s / store capacity, 1 writer" "$writes15" "$CAP1"
row "metrics: writes/s at 15 s / store capacity, 8 writers" "$writes15" "$CAP8"

# ---- 2. the autoscaler on real pods -----------------------------------------
rm -f "$D"/pods/p*.yaml
"$CORRAL" image build-busybox --images "$T/images" >>"$T/image.log" 2>&1 || die "cannot build the busybox image"
cat >>"$T/noded.conf" <<C
[ctrl]
horizontal-pod-autoscaler-sync-period = ${SYNC}s
horizontal-pod-autoscaler-downscale-stabilization = ${STAB}s
C
sed -i 's/^metrics-interval = .*/metrics-interval = 2s/' "$T/noded.conf"
"$NODED" --mount "$M" --name bench-real --config "$T/noded.conf" --cleanup-on-exit \
	>>"$T/real.log" 2>&1 &
REAL_PID=$!
until_ 30 "the real node registers" grep -q 'reason: KubeletReady' "$M/nodes/bench-real.yaml"
"$CTRL" --mount "$M" --leader-elect=false --config "$T/noded.conf" >>"$T/ctrl.log" 2>&1 &
CTRL_PID=$!
until_ 20 "corral-ctrl starts" grep -q 'controllers started' "$T/ctrl.log"
cat >"$D/deployments/burn.yaml" <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: burn}
spec:
  replicas: 1
  selector: {matchLabels: {app: burn}}
  template:
    metadata: {labels: {app: burn}}
    spec:
      nodeName: bench-real
      terminationGracePeriodSeconds: 1
      volumes: [{name: load, hostPath: {path: $T/load}}]
      containers:
      - name: app
        image: busybox
        command:
        - sh
        - -c
        - |
          while :; do
            if [ -e /load/on ]; then
              for k in \$(cat /load/on); do
                if mkdir /load/claim.\$k 2>/dev/null; then
                  while [ -e /load/on ]; do :; done
                fi
              done
            fi
            sleep 0.3
          done
        volumeMounts: [{name: load, mountPath: /load}]
        resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}
Y
deployed_running() { [ "$(grep -l '^  phase: Running' "$D"/pods/burn-*.yaml 2>/dev/null | wc -l)" -ge 1 ]; }
until_ 60 "the Deployment's pod runs" deployed_running
"$CORRAL" autoscale -n bench deployment burn --cpu-percent=50 --min=1 --max="$MAXR" --mount "$M" >/dev/null ||
	die "corral autoscale fails"
H=$D/horizontalpodautoscalers/burn.yaml
until_ 60 "the HPA's first status" grep -q '^  currentCPUUtilizationPercentage:' "$H"
replicas() { sed -n '/^spec:/,/^[a-z]/p' "$D/deployments/burn.yaml" | sed -n 's/^  replicas: //p'; }
util() { sed -n '/^status:/,$p' "$H" | sed -n 's/^  currentCPUUtilizationPercentage: //p'; }
steady=$((TOKENS * 100 / 50))
SERIES=$T/series.txt
: >"$SERIES"
t_load=$(now_ns)
seq "$TOKENS" | tr '\n' ' ' >"$T/load/on"
sample() { echo "$(calc "($(now_ns) - $t_load) / 1e9" 0) $(replicas) $(util)" | tee -a "$SERIES" >/dev/null; }
reached=""
end=$((SECONDS + 40 * SYNC))
while [ $SECONDS -lt $end ]; do
	sleep "$SYNC"
	sample
	if [ "$(replicas)" = "$steady" ] && [ -z "$reached" ]; then
		reached=$(calc "($(now_ns) - $t_load) / 1e9" 1)
		held=0
	fi
	if [ -n "$reached" ]; then
		held=$((held + 1))
		[ "$held" -ge 4 ] && break # held for 4 sync periods: steady
	fi
done
[ -n "$reached" ] || echo "bench: the count never reached $steady" >&2
rm -rf "$T/load/on" "$T"/load/claim.*
t_stop=$(now_ns)
down=""
end=$((SECONDS + STAB + 30 * SYNC))
while [ $SECONDS -lt $end ]; do
	sleep "$SYNC"
	sample
	if [ "$(replicas)" = 1 ]; then
		down=$(calc "($(now_ns) - $t_stop) / 1e9" 1)
		break
	fi
done
[ -n "$down" ] || echo "bench: the count never went back to 1" >&2
row "autoscaler: sync periods from the load to $steady replicas" "$( [ -n "$reached" ] && calc "$reached / $SYNC" 2 || echo -)" "3"
row "autoscaler: seconds from the load's stop to 1 replica" "${down:--}" "$STAB"

echo "HPA benchmark ($(nproc) CPUs): metrics of $NPODS hollow pods (baseline: the same agent with metrics every hour, same run); an HPA at 50% on real busybox pods, sync ${SYNC}s, stabilization ${STAB}s"
printf '%-56s %12s %12s %8s\n' metric corral baseline ratio
for r in "${ROWS[@]}"; do echo "$r"; done
echo "targets: metrics under 1% of a core and under 5% of the store's capacity; the steady count in at most 3 sync periods; back down after the window"
echo
echo "replicas and utilization over time (load on at 0 s, off after the steady count):"
printf '%8s %9s %12s\n' seconds replicas utilization
awk '{ printf "%8s %9s %11s%%\n", $1, $2, $3 }' "$SERIES"
if command -v gnuplot >/dev/null; then
	gnuplot <<G 2>/dev/null && echo "plot: $PLOT"
set terminal png size 800,400
set output "$PLOT"
set xlabel "seconds since the load started"
set ylabel "replicas"
set y2label "utilization %"
set y2tics
plot "$SERIES" using 1:2 with steps title "replicas", "$SERIES" using 1:3 axes x1y2 with lines title "utilization"
G
fi
