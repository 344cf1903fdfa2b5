#!/bin/bash
# bench/cronjob.sh BUILD_DIR: corral-ctrl's idle cost of many CronJobs.
#
# Starts a private corral-fs and a corral-ctrl running only the cronjob
# controller, then:
#   1. the baseline: corral-ctrl's CPU (utime + stime from /proc/PID/stat)
#      and context switches over BENCH_WINDOW (20) seconds with no CronJob;
#   2. BENCH_CRONJOBS (1000) CronJobs scheduled every minute; once the
#      minute's Jobs are all made and the CronJobs' statuses written (and
#      corral-ctrl's CPU has settled), the same measures over the quiet part
#      of the minute, up to a second before the next one (at least
#      BENCH_WINDOW seconds: else the next minute's quiet part);
# and prints metric, corral, baseline, ratio. The target is under 1% of a
# core between minutes: no CronJob is polled, one timer waits for the next
# minute. Asserts nothing about time; fails when it cannot measure.
#
# Knobs: BENCH_CRONJOBS (1000), BENCH_WINDOW (20), BENCH_WAIT_MAX (180),
# BENCH_KEEP=1 keeps the temporary folder and the logs.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/cronjob.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl
N=${BENCH_CRONJOBS:-1000}
WINDOW=${BENCH_WINDOW:-20}
WAIT_MAX=${BENCH_WAIT_MAX:-180}
for b in "$FS" "$CTRL"; do [ -x "$b" ] || die "no $b (run make first)"; done
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem)"
[ -c /dev/fuse ] || die "no /dev/fuse"
[ "$WINDOW" -le 50 ] || die "BENCH_WINDOW must leave room in a minute (at most 50)"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-cronbench.XXXXXX") || die "mktemp fails"
M=$T/mnt
mkdir -p "$M"
CTRL_PID= FSPID=
cleanup() {
	set +e
	[ -n "$CTRL_PID" ] && kill "$CTRL_PID" 2>/dev/null && wait "$CTRL_PID" 2>/dev/null
	if [ -n "$FSPID" ]; then
		kill "$FSPID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$FSPID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$FSPID" 2>/dev/null
		wait "$FSPID" 2>/dev/null
	fi
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$CTRL_PID/stat"; }
switches() { awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$CTRL_PID/status"; }
HZ=$(getconf CLK_TCK)
ROWS=()
row() { ROWS+=("$(printf '%-48s %12s %12s %8s' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }
# until SECONDS CMD...: CMD holds within SECONDS, else the bench fails
until_() {
	local end=$((SECONDS + $1)) what=$2
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || die "timed out: $what"
		sleep 0.2
	done
}
# settle: corral-ctrl's CPU does not move for a second (at most 30 s)
settle() {
	local a b
	for _ in $(seq 30); do
		a=$(ticks)
		sleep 1
		b=$(ticks)
		[ "$a" = "$b" ] && return 0
	done
}
# measure SECONDS: CPU in % of a core and context switches per second
measure() {
	local t0 s0 t1 s1 start end
	start=$(date +%s%N)
	t0=$(ticks)
	s0=$(switches)
	sleep "$1"
	t1=$(ticks)
	s1=$(switches)
	end=$(date +%s%N)
	local secs
	secs=$(calc "($end - $start) / 1e9")
	CPU=$(calc "100 * ($t1 - $t0) / $HZ / $secs" 3)
	CSW=$(calc "($s1 - $s0) / $secs" 2)
}

"$FS" -f --state "$T/state" "$M" >"$T/fs.log" 2>&1 &
FSPID=$!
until_ 10 "corral-fs mounts" test -d "$M/namespaces"
mkdir "$M/namespaces/cron"
"$CTRL" --mount "$M" --leader-elect=false --controllers cronjob --event-ttl 0 \
	>"$T/ctrl.log" 2>&1 &
CTRL_PID=$!
until_ 20 "corral-ctrl starts" grep -q 'controllers started' "$T/ctrl.log"

# 1. The baseline: no CronJob.
settle
measure "$WINDOW"
BASE_CPU=$CPU BASE_CSW=$CSW

# 2. N CronJobs, every minute.
D=$M/namespaces/cron
t0=$(date +%s%N)
for i in $(seq "$N"); do
	cat >"$D/cronjobs/c$i.yaml" <<Y || die "CronJob c$i was refused: $(tail -1 "$M/.errors")"
apiVersion: batch/v1
kind: CronJob
metadata: {name: c$i}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox, command: ["true"]}]
Y
done
created=$(calc "($(date +%s%N) - $t0) / 1e9" 1)
njobs() { ls "$D/jobs" | wc -l; }
nstatus() { grep -l '^  lastScheduleTime:' "$D"/cronjobs/*.yaml 2>/dev/null | wc -l; }
minute=0
for round in 1 2 3; do
	want=$((N * round))
	until_ "$WAIT_MAX" "$want Jobs" sh -c "[ \$(ls '$D/jobs' | wc -l) -ge $want ]"
	until_ "$WAIT_MAX" "$N statuses" sh -c "[ \$(grep -l '^  lastScheduleTime:' '$D'/cronjobs/*.yaml | wc -l) -ge $N ]"
	settle
	left=$((59 - $(date +%S | sed 's/^0//')))
	if [ "$left" -ge "$WINDOW" ]; then
		minute=$round
		measure "$left"
		break
	fi
	# too little of this minute is left: the next one
	until_ 70 "the next minute" sh -c "[ \$(ls '$D/jobs' | wc -l) -gt $want ]"
done
[ "$minute" -gt 0 ] || die "no quiet part of a minute was long enough to measure"
row "idle: corral-ctrl CPU between minutes, % of a core" "$CPU" "$BASE_CPU"
row "idle: context switches per second" "$CSW" "$BASE_CSW"
echo "CronJob benchmark ($(nproc) CPUs): $N CronJobs every minute (written in $created s); baseline: corral-ctrl idle with no CronJob, same run"
printf '%-48s %12s %12s %8s\n' metric corral baseline ratio
for r in "${ROWS[@]}"; do echo "$r"; done
echo "measured over ${left} s of minute $minute, after its $N Jobs were made; target: under 1% of a core"
