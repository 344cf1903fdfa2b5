#!/bin/bash
# Jobs on real pods against a real mount: corral-fs, corral-ctrl (the job,
# ttl-after-finished, podgc and garbagecollector controllers) and a real
# corral-noded running busybox pods. A Job runs to Complete with its logs
# readable; a failing Job reaches BackoffLimitExceeded with the back-off
# between its pods (read from their creation times); an Indexed Job's
# indexes, environment and hostnames; suspend and resume; the TTL after
# finishing deletes a Job and its pods; podgc deletes a pod of a vanished
# (hollow) node after the quarantine, and the oldest terminated pods above
# --terminated-pod-gc-threshold.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for b in "$CTRL" "$NODED"; do [ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }; done
command -v systemd-nspawn >/dev/null || { echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
NA=jobtest-a NH=jobtest-gone
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate
mkdir -p "$LOGS"
declare -A NPID
CTRL_PID=
start_node() { # NAME [FLAGS...]
	local n=$1
	shift
	"$NODED" --mount "$M" --name "$n" --config "$T/noded.conf" --heartbeat-period 1s \
		--cleanup-on-exit "$@" >>"$T/$n.log" 2>&1 &
	NPID[$n]=$!
}
stop_node() {
	local p=${NPID[$1]:-}
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	NPID[$1]=
}
start_ctrl() {
	"$CTRL" --mount "$M" --leader-elect=false "$@" >>"$T/ctrl.log" 2>&1 &
	CTRL_PID=$!
}
stop_ctrl() {
	[ -n "$CTRL_PID" ] || return 0
	kill "$CTRL_PID" 2>/dev/null
	wait "$CTRL_PID" 2>/dev/null
	CTRL_PID=
}
final_cleanup() {
	stop_ctrl
	# the real node stops its pods (--cleanup-on-exit) while the mount is there
	for n in "$NA" "$NH"; do stop_node "$n"; done
	if [ "$FAILS" != 0 ] && [ -n "${CORRAL_TEST_KEEP:-}" ]; then
		mkdir -p "$CORRAL_TEST_KEEP" && cp -r "$T"/*.log "$M/namespaces/dev" "$CORRAL_TEST_KEEP/" 2>/dev/null
	fi
	node_net_cleanup "$NSTATE" "$NA"
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$LOGS"
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\n' "$NSTATE" "$IMAGES" "$LOGS" >"$T/noded.conf"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >>"$T/image.log" 2>&1 ||
	{ echo "not ok - cannot build the busybox image: $(tail -2 "$T/image.log")"; exit 1; }
start_node "$NA"
D=$M/namespaces/dev
mkdir -p "$D"
wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$NA.yaml" || { echo "not ok - node $NA is not Ready"; exit 1; }
start_ctrl --pod-gc-quarantine 5s

job() { echo "$D/jobs/$1.yaml"; }
# jcond FILE TYPE FIELD: a field (status, reason, message) of the condition TYPE
jcond() {
	awk -v t="$2" -v f="$3" '
		/^  - / || /^  [a-zA-Z]/ { if (typ == t) { found = 1; print val; exit } typ = ""; val = "" }
		{ line = $0; sub(/^  - /, "    ", line) }
		line ~ "^    " f ": " { val = line; sub("^    " f ": ", "", val); gsub("\x27", "", val) }
		line ~ "^    type: " { typ = line; sub("^    type: ", "", typ) }
		END { if (!found && typ == t) print val }' "$1" 2>/dev/null
}
is_cond() { [ "$(jcond "$(job "$1")" "$2" status)" = True ]; }
top() { sed -n "s/^  $2: //p" "$1" | tr -d "'"; }
jpods() { ls "$D/pods" 2>/dev/null | grep "^$1-[-a-z0-9]*\.yaml$" | sed 's/\.yaml$//'; }
npods() { jpods "$1" | wc -l; }
created() { date -d "$(sed -n "s/^  creationTimestamp: //p" "$D/pods/$1.yaml" | tr -d "'")" +%s; }
podlog() { cat "$D/logs/$1/$2.log" 2>/dev/null; }

# ---- a Job runs to Complete, its pods and logs kept ----
cat >"$(job pi)" <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: 2
  parallelism: 2
  template:
    spec:
      nodeName: $NA
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: pi, image: busybox, command: [sh, -c, "echo job-done"]}]
Y
check "a Job reaches Complete" wait_for 60 is_cond pi Complete
check "with reason CompletionsReached" test "$(jcond "$(job pi)" Complete reason)" = CompletionsReached
check "and SuccessCriteriaMet before it" is_cond pi SuccessCriteriaMet
check "status: succeeded 2, startTime and completionTime" sh -c "grep -q '^  succeeded: 2' '$(job pi)' && grep -q '^  startTime: ' '$(job pi)' && grep -q '^  completionTime: ' '$(job pi)'"
check "no active pods left (omitted, as Kubernetes omits 0)" sh -c "! grep -q '^  active: ' '$(job pi)'"
check "both finished pods are kept" test "$(npods pi)" = 2
P1=$(jpods pi | head -1)
check "a pod carries the Job's labels" sh -c "grep -q 'batch.kubernetes.io/job-name: pi' '$D/pods/$P1.yaml' && grep -q '^    job-name: pi' '$D/pods/$P1.yaml' && grep -q 'batch.kubernetes.io/controller-uid: ' '$D/pods/$P1.yaml'"
check "and the Job's controller reference" sh -c "grep -A6 'ownerReferences:' '$D/pods/$P1.yaml' | grep -q 'kind: Job'"
check "its log is readable through the mount" wait_for 10 sh -c "cat '$D'/logs/pi-*/pi.log | grep -q job-done"
check "a SuccessfulCreate and a Completed event" wait_for 10 sh -c "grep -l 'reason: SuccessfulCreate' '$D'/events/pi.*.yaml && grep -l 'reason: Completed' '$D'/events/pi.*.yaml"

# ---- a failing Job: back-off between its pods, then BackoffLimitExceeded ----
cat >"$(job boom)" <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: boom}
spec:
  backoffLimit: 1
  template:
    spec:
      nodeName: $NA
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: boom, image: busybox, command: [sh, -c, "exit 3"]}]
Y
check "a failing Job reaches Failed" wait_for 60 is_cond boom Failed
check "with reason BackoffLimitExceeded" test "$(jcond "$(job boom)" Failed reason)" = BackoffLimitExceeded
check "and Kubernetes' message" test "$(jcond "$(job boom)" Failed message)" = "Job has reached the specified backoff limit"
check "FailureTarget too" is_cond boom FailureTarget
check "failed: 2 (backoffLimit 1: two pods)" grep -q '^  failed: 2' "$(job boom)"
check "two pods, both kept" test "$(npods boom)" = 2
read -r B1 B2 < <(for p in $(jpods boom); do echo "$(created "$p") $p"; done | sort -n | awk '{print $2}' | tr '\n' ' ')
check "the second pod came at least the 10 s back-off after the first" test $(( $(created "$B2") - $(created "$B1") )) -ge 10
check "a BackoffLimitExceeded event" wait_for 10 sh -c "grep -l 'reason: BackoffLimitExceeded' '$D'/events/boom.*.yaml"

# ---- an Indexed Job: indexes, JOB_COMPLETION_INDEX, hostnames ----
cat >"$(job idx)" <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: idx}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      nodeName: $NA
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: w, image: busybox, command: [sh, -c, "echo index=\$JOB_COMPLETION_INDEX host=\$(hostname)"]}]
Y
check "an Indexed Job reaches Complete" wait_for 60 is_cond idx Complete
check "completedIndexes: 0-2" grep -q "^  completedIndexes: '\{0,1\}0-2'\{0,1\}\$" "$(job idx)"
for i in 0 1 2; do
	p=$(ls "$D/pods" | grep "^idx-$i-[a-z0-9]\{5\}\.yaml$" | sed 's/\.yaml$//')
	check "index $i: one pod idx-$i-xxxxx" test -n "$p"
	check "index $i: its annotation and label" sh -c "[ \$(grep -c \"batch.kubernetes.io/job-completion-index: '$i'\" '$D/pods/$p.yaml') -ge 2 ]"
	check "index $i: JOB_COMPLETION_INDEX and hostname idx-$i in its output" wait_for 10 sh -c "cat '$D/logs/$p/w.log' | grep -q 'index=$i host=idx-$i'"
done

# ---- suspend and resume ----
cat >"$(job nap)" <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: nap}
spec:
  suspend: true
  template:
    spec:
      nodeName: $NA
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: nap, image: busybox, command: [sleep, "3600"]}]
Y
check "a suspended Job says Suspended" wait_for 20 is_cond nap Suspended
check "with reason JobSuspended" test "$(jcond "$(job nap)" Suspended reason)" = JobSuspended
check "and has no pods" test "$(npods nap)" = 0
sed -i 's/^  suspend: true/  suspend: false/' "$(job nap)"
check "resumed, it runs a pod" wait_for 30 sh -c "grep -q '^  phase: Running' '$D'/pods/nap-*.yaml"
sus_is() { [ "$(jcond "$(job nap)" Suspended status)" = "$1" ] && [ "$(jcond "$(job nap)" Suspended reason)" = "$2" ]; }
check "Suspended is False with reason JobResumed" wait_for 10 sus_is False JobResumed
check "and active: 1, ready: 1" wait_for 10 sh -c "grep -q '^  active: 1' '$(job nap)' && grep -q '^  ready: 1' '$(job nap)'"
sed -i 's/^  suspend: false/  suspend: true/' "$(job nap)"
check "suspended again, its running pod is deleted" wait_for 30 sh -c "[ \$(ls '$D/pods' | grep -c '^nap-') = 0 ]"
check "and Suspended is True again" wait_for 10 sus_is True JobSuspended
rm -f "$(job nap)"

# ---- ttlSecondsAfterFinished deletes the Job and, through GC, its pods ----
cat >"$(job brief)" <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: brief}
spec:
  ttlSecondsAfterFinished: 2
  template:
    spec:
      nodeName: $NA
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: b, image: busybox, command: ["true"]}]
Y
check "a Job with a TTL completes" wait_for 60 sh -c "[ -e '$(job brief)' ] && grep -q 'type: Complete' '$(job brief)' || [ ! -e '$(job brief)' ]"
check "then it is deleted after its TTL" wait_for 30 sh -c "[ ! -e '$(job brief)' ]"
check "and its pod goes with it" wait_for 30 sh -c "[ \$(ls '$D/pods' | grep -c '^brief-') = 0 ]"

# ---- podgc: a pod bound to a node that is gone ----
start_node "$NH" --hollow
check "a hollow node registers" wait_for 15 readable "$M/nodes/$NH.yaml"
cat >"$D/pods/stray.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: stray}
spec:
  nodeName: $NH
  containers: [{name: c, image: busybox}]
Y
check "its pod runs" wait_for 15 grep -q '^  phase: Running' "$D/pods/stray.yaml"
stop_node "$NH"
rm -f "$M/nodes/$NH.yaml"
check "the node is gone" sh -c "[ ! -e '$M/nodes/$NH.yaml' ]"
check "its pod stays for the quarantine" test -e "$D/pods/stray.yaml"
check "the pod of the vanished node is deleted after the quarantine (--pod-gc-quarantine 5s)" wait_for 30 sh -c "[ ! -e '$D/pods/stray.yaml' ]"
check "a pod of a node that exists is left" sh -c "ls '$D/pods' | grep -q '^pi-'"

# ---- podgc: terminated pods above the threshold, oldest first ----
stop_ctrl
start_ctrl --terminated-pod-gc-threshold 3
check "terminated pods above --terminated-pod-gc-threshold 3 are deleted down to 3" wait_for 30 sh -c "[ \$(grep -l '^  phase: \(Succeeded\|Failed\)' '$D'/pods/*.yaml | wc -l) = 3 ]"
check "the newest are kept (the Indexed Job's)" test "$(npods idx)" = 3
check "the oldest went first (the first Job's)" test "$(npods pi)" = 0

echo "# jobs: $FAILS failed"
[ "$FAILS" = 0 ]
