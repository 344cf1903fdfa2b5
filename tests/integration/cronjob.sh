#!/bin/bash
# The CronJob controller against a real mount: a per-minute CronJob whose
# first time is due at once (its status.lastScheduleTime is written in the
# past, as after a corral-ctrl that was down) and whose next one comes from
# the timer at the next minute; the Job's name, labels, annotations and
# owner; status.active, lastScheduleTime, lastSuccessfulTime; history limits
# pruning finished Jobs; Forbid and Replace at the next minute; suspend;
# timeZone; the missed times rule; a restart catching up; schedules and
# zones refused with .errors saying why; cascade delete.
#
# No Job controller runs here: the test writes the Jobs' conditions itself
# through the mount, as a Job controller would.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
[ -x "$CTRL" ] || { echo "not ok - no $CTRL (run make)"; exit 1; }
CPIDS=()
stop_all() {
	for p in "${CPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${CPIDS[@]}"; do wait "$p" 2>/dev/null; done
	CPIDS=()
}
trap '[ -n "${CTRL_TEST_LOGS:-}" ] && cp "$T"/*.log "$CTRL_TEST_LOGS"/; stop_all; cleanup' EXIT
start_fs
start_ctrl() {
	"$CTRL" --mount "$M" --leader-elect=false --controllers cronjob,garbagecollector \
		>>"$T/ctrl.log" 2>&1 &
	CTRL_PID=$!
	CPIDS+=($CTRL_PID)
}
mkdir "$M/namespaces/dev"
D=$M/namespaces/dev
ago() { date -u -d "$1 ago" +%Y-%m-%dT%H:%M:00Z; }
jobs_of() { ls "$D/jobs" 2>/dev/null | sed -n "s/^\($1-[0-9][0-9]*\)\.yaml$/\1/p"; }
njobs() { jobs_of "$1" | wc -l; }
has_jobs() { [ "$(njobs "$1")" -eq "$2" ]; }
cj_status() { sed -n '/^status:/,$p' "$D/cronjobs/$1.yaml"; }
event() { grep -l "reason: $2" "$D/events/$1".*.yaml 2>/dev/null | grep -q .; }
# cronjob NAME SCHEDULE SPEC-LINES LAST: a CronJob whose last run was at LAST
cronjob() {
	cat >"$T/$1.yaml" <<Y
apiVersion: batch/v1
kind: CronJob
metadata: {name: $1}
spec:
  schedule: "$2"
$3
  jobTemplate:
    metadata:
      labels: {app: $1}
      annotations: {team: batch}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox, command: [sh, -c, date]}]
status:
  lastScheduleTime: '$4'
Y
	cp "$T/$1.yaml" "$D/cronjobs/$1.yaml"
}
# finish JOB CONDITION START: writes the Job's status as a Job controller would
finish() {
	local f=$D/jobs/$1.yaml now
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	sed '/^status:/,$d' "$f" >"$T/finish.yaml"
	{
		echo "status:"
		[ -n "${3:-}" ] && echo "  startTime: '$3'"
		[ "$2" = Complete ] && echo "  completionTime: '$now'"
		echo "  conditions:"
		echo "  - {type: $2, status: 'True', lastTransitionTime: '$now'}"
	} >>"$T/finish.yaml"
	cp "$T/finish.yaml" "$f"
}
# ownedjob NAME CONDITION START: a finished Job that hello owns
ownedjob() {
	cat >"$T/$1.yaml" <<Y
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  ownerReferences:
  - {apiVersion: batch/v1, kind: CronJob, name: hello, uid: $HELLO_UID, controller: true, blockOwnerDeletion: true}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
status:
  startTime: '$3'
  conditions:
  - {type: $2, status: 'True'}
Y
	cp "$T/$1.yaml" "$D/jobs/$1.yaml"
}

start_ctrl

# ---- refused at the write ----------------------------------------------------
bad() {
	/usr/bin/printf 'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: bad}\nspec:\n  schedule: "%s"\n%s  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: t, image: busybox}]}}}}\n' "$1" "${2:-}" >"$T/bad.yaml"
	! cp "$T/bad.yaml" "$D/cronjobs/bad.yaml" 2>/dev/null
}
check "a schedule with minute 61 is refused" bad "61 * * * *"
check "... .errors says which field and why" grep -q 'spec.schedule: Invalid value: "61 \* \* \* \*": end of range (61) above maximum (59): 61 (minute field)' "$M/.errors"
check "a schedule of four fields is refused" bad "* * * *"
check "... saying so" grep -q 'expected exactly 5 fields, found 4' "$M/.errors"
check "TZ= in the schedule is refused" bad "TZ=UTC * * * * *"
check "... with Kubernetes' message" grep -q 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead' "$M/.errors"
check "an unknown timeZone is refused" bad "* * * * *" $'  timeZone: Mars/Olympus\n'
check "... saying why" grep -q 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' "$M/.errors"
check "... and nothing was stored" test ! -e "$D/cronjobs/bad.yaml"

# ---- a per-minute CronJob --------------------------------------------------------
check "a suspended CronJob is accepted" cronjob susp "* * * * *" "  suspend: true" "$(ago '5 min')"
check "a Forbid CronJob is accepted" cronjob forbid "* * * * *" "  concurrencyPolicy: Forbid" "$(ago '5 min')"
check "a Replace CronJob is accepted" cronjob replace "* * * * *" "  concurrencyPolicy: Replace" "$(ago '5 min')"
check "a per-minute CronJob due now is accepted" cronjob hello "* * * * *" "  successfulJobsHistoryLimit: 3
  failedJobsHistoryLimit: 1" "$(ago '5 min')"
check "it makes a Job <cronjob>-<minutes since the epoch> at once" wait_for 15 has_jobs hello 1
J0=$(jobs_of hello | head -1)
F0=$D/jobs/$J0.yaml
check "... readable" wait_for 5 readable "$F0"
last_is() { [ "$(date -u -d "$(cj_status "$1" | sed -n "s/^  lastScheduleTime: '\{0,1\}\([^']*\).*/\1/p")" +%s)" = "$2" ]; }
# A minute may turn between the write and this check: then the newest Job
# is the next minute's, and lastScheduleTime names that one.
newest_named() { local j; j=$(jobs_of hello | sort -t- -k2 -n | tail -1); [ -n "$j" ] && last_is hello $((${j#hello-} * 60)); }
check "... named by the scheduled minute (status.lastScheduleTime)" wait_for 10 newest_named
check "... with the template's labels and annotations" sh -c "grep -q 'app: hello' '$F0' && grep -q 'team: batch' '$F0'"
check "... the scheduled-timestamp annotation" grep -q "batch.kubernetes.io/cronjob-scheduled-timestamp: '\{0,1\}$(date -u -d @$((${J0#hello-} * 60)) +%Y-%m-%dT%H:%M:%SZ)" "$F0"
HELLO_UID=$(sed -n 's/^  uid: //p' "$D/cronjobs/hello.yaml" | head -1)
check "... owned by the CronJob (controller: true, its uid)" sh -c "grep -q 'kind: CronJob' '$F0' && grep -q 'uid: $HELLO_UID' '$F0' && grep -q 'controller: true' '$F0'"
check "... the template's Job spec" grep -q 'restartPolicy: Never' "$F0"
active_has() { cj_status "$1" | grep -q "name: $2"; }
check "the CronJob's status.active names it" wait_for 10 active_has hello "$J0"
check "an event SuccessfulCreate on the CronJob" wait_for 10 event hello SuccessfulCreate
check "Forbid and Replace made their first Jobs" wait_for 10 sh -c "[ \$(ls '$D/jobs' | grep -c '^forbid-') = 1 ] && [ \$(ls '$D/jobs' | grep -c '^replace-') = 1 ]"
check "a suspended CronJob makes no Job" has_jobs susp 0
R0=$(jobs_of replace | head -1)
F0F=$(jobs_of forbid | head -1)

# ---- history limits --------------------------------------------------------------
for i in 1 2 3 4; do ownedjob "hello-old$i" Complete "$(ago "$((50 - i)) min")"; done
for i in 1 2; do ownedjob "hello-fail$i" Failed "$(ago "$((50 - i)) min")"; done
check "finished Jobs beyond successfulJobsHistoryLimit go, oldest first" wait_for 10 sh -c "test ! -e '$D/jobs/hello-old1.yaml' && test -e '$D/jobs/hello-old2.yaml' && test -e '$D/jobs/hello-old4.yaml'"
check "... and beyond failedJobsHistoryLimit" wait_for 10 sh -c "test ! -e '$D/jobs/hello-fail1.yaml' && test -e '$D/jobs/hello-fail2.yaml'"
check "... with SuccessfulDelete events" wait_for 10 event hello SuccessfulDelete
check "the active Job is kept" test -e "$F0"
check "a Job completes (its conditions written)" finish "$J0" Complete
check "... and leaves status.active" wait_for 10 eval "! active_has hello '$J0'"
check "... status.lastSuccessfulTime is set" wait_for 10 eval "cj_status hello | grep -q '^  lastSuccessfulTime: '"
check "... a SawCompletedJob event" wait_for 10 event hello SawCompletedJob
check "... and the now 4th finished Job goes (no start time counts as newest)" wait_for 10 sh -c "test ! -e '$D/jobs/hello-old2.yaml' && test -e '$D/jobs/hello-old3.yaml' && test -e '$F0'"

# ---- suspend ---------------------------------------------------------------------
check "resuming a suspended CronJob (sed -i) runs its due time" sed -i 's/suspend: true/suspend: false/' "$D/cronjobs/susp.yaml"
check "... a Job" wait_for 15 has_jobs susp 1

# ---- time zones and missed times -------------------------------------------------
check "a CronJob in Asia/Kolkata is accepted" cronjob india "* * * * *" "  timeZone: Asia/Kolkata" "$(ago '5 min')"
check "... its Job's scheduled timestamp is in that zone" wait_for 15 sh -c "grep -q 'cronjob-scheduled-timestamp: .*+05:30' '$D'/jobs/india-*.yaml"
check "a CronJob that missed more than 100 times is accepted" cronjob many "* * * * *" "" "$(ago '3 hours')"
check "... a TooManyMissedTimes event" wait_for 15 event many TooManyMissedTimes
check "... and it runs the most recent time once" wait_for 15 has_jobs many 1

# ---- the next minute, from the timer ---------------------------------------------
# Counted as "a Job of a later minute than the first", not "exactly two":
# on a loaded machine the minute can turn more than once before this line.
later_job() { jobs_of hello | awk -v j0="${J0#hello-}" -F- '$2 > j0 {f = 1} END {exit !f}'; }
check "at the next minute the timer makes the next Job (waits up to a minute)" wait_for 75 later_job
check "Replace deletes the active Job ..." wait_for 15 test ! -e "$D/jobs/$R0.yaml"
check "... and makes the next one" wait_for 15 eval "jobs_of replace | grep -vxq '$R0'"
check "Forbid makes no second Job while the first is active" has_jobs forbid 1
check "... with a JobAlreadyActive event" wait_for 15 event forbid JobAlreadyActive
check "once the active Job fails (conditions written) ..." finish "$F0F" Failed
check "... Forbid starts the time it held back" wait_for 15 has_jobs forbid 2

# ---- a restart catches up ---------------------------------------------------------
stop_all
check "while corral-ctrl is down, a CronJob due now is accepted" cronjob late "*/2 * * * *" "" "$(ago '30 min')"
start_ctrl
check "... the restarted corral-ctrl runs its missed time once" wait_for 15 has_jobs late 1

# ---- cascade delete ----------------------------------------------------------------
check "deleting the CronJob deletes its Jobs" rm "$D/cronjobs/hello.yaml"
check "... (garbage collector)" wait_for 15 sh -c "! ls '$D/jobs' | grep -q '^hello-'"
grep -E ' (warn|error): ' "$T"/ctrl.log >&2
[ "$FAILS" = 0 ]
