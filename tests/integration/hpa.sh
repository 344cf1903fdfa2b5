#!/bin/bash
# Metrics as files and the HorizontalPodAutoscaler against a real mount:
# corral-fs, corral-ctrl and corral-noded with short intervals (set in
# corral.conf: metrics every second, an HPA sync every second).
#
#   hollow node   PodMetrics and NodeMetrics from the pods' hollow.corral.io
#                 annotations; corral top; corral autoscale; an
#                 autoscaling/v1 HPA scaling a Deployment up to maxReplicas
#                 with its status, conditions and SuccessfulRescale event;
#                 the history leaves the autoscaler's counts out and a
#                 rollback through git keeps them; custom metrics written
#                 with echo (Pods and Object, autoscaling/v2, behavior)
#                 driving a scale-up and a scale-down; metrics vanish with
#                 their pods.
#   real node     a busybox pod burning CPU shows it in its PodMetrics
#                 within two intervals; an HPA at 50% scales its Deployment
#                 up under that load and back down once it stops.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORRAL=$ROOT/tools/corral
for b in "$CTRL" "$NODED"; do [ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }; done
command -v systemd-nspawn >/dev/null || { echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
NH=hpatest-hollow NR=hpatest-real
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate LOAD=$T/load
mkdir -p "$LOGS" "$LOAD"
declare -A NPID
CTRL_PID=
start_node() { # NAME [FLAGS...]
	local n=$1
	shift
	"$NODED" --mount "$M" --name "$n" --config "$T/corral.conf" --heartbeat-period 1s \
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
final_cleanup() {
	rm -f "$LOAD/on"
	[ -n "$CTRL_PID" ] && kill "$CTRL_PID" 2>/dev/null && wait "$CTRL_PID" 2>/dev/null
	for n in "$NH" "$NR"; do stop_node "$n"; done
	if [ "$FAILS" != 0 ] && [ -n "${CORRAL_TEST_KEEP:-}" ]; then
		mkdir -p "$CORRAL_TEST_KEEP" && cp -r "$T"/*.log "$M/namespaces/dev" "$CORRAL_TEST_KEEP/" 2>/dev/null
	fi
	node_net_cleanup "$NSTATE" "$NR"
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$LOGS"
cat >"$T/corral.conf" <<C
[noded]
state = $NSTATE
images = $IMAGES
pod-log-dir = $LOGS
metrics-interval = 1s
hollow-cpu = 4
[ctrl]
horizontal-pod-autoscaler-sync-period = 1s
horizontal-pod-autoscaler-downscale-stabilization = 3s
C
"$CORRAL" image build-busybox --images "$IMAGES" >>"$T/image.log" 2>&1 ||
	{ echo "not ok - cannot build the busybox image: $(tail -2 "$T/image.log")"; exit 1; }
start_node "$NH" --hollow
"$CTRL" --mount "$M" --leader-elect=false --config "$T/corral.conf" >>"$T/ctrl.log" 2>&1 &
CTRL_PID=$!
D=$M/namespaces/dev
mkdir -p "$D"
wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$NH.yaml" || { echo "not ok - node $NH is not Ready"; exit 1; }

sfield() { sed -n '/^status:/,$p' "$1" | sed -n "s/^  $2: //p" | tr -d "'"; } # FILE KEY
replicas() { sed -n '/^spec:/,/^[a-z]/p' "$1" | sed -n 's/^  replicas: //p'; }
has_replicas() { [ "$(replicas "$D/deployments/$1.yaml")" = "$2" ]; }
pods_of() { ls "$D/pods" 2>/dev/null | grep "^$1-" | sed 's/\.yaml$//'; }
running() { [ "$(for p in $(pods_of "$1"); do sed -n 's/^  phase: //p' "$D/pods/$p.yaml"; done | grep -c Running)" = "$2" ]; }
# cond FILE TYPE: "STATUS REASON" of a condition of the status
cond() {
	awk -v t="$2" '
		/^  - / || /^  [a-zA-Z]/ { if (typ == t) { print st, rs; found = 1; exit } typ = st = rs = "" }
		{ l = $0; sub(/^  - /, "    ", l) }
		l ~ /^    type: / { typ = l; sub(/^    type: /, "", typ) }
		l ~ /^    status: / { st = l; sub(/^    status: /, "", st); gsub("\x27", "", st) }
		l ~ /^    reason: / { rs = l; sub(/^    reason: /, "", rs) }
		END { if (!found && typ == t) print st, rs }' "$1" 2>/dev/null
}
is_cond() { [ "$(cond "$1" "$2")" = "$3" ]; }
event_says() { grep -l -F -- "$1" "$D"/events/*.yaml 2>/dev/null | grep -q .; }
deployment() { # NAME REPLICAS NODE ANNOTATIONS...
	local name=$1 n=$2 node=$3 ann=""
	shift 3
	[ $# -gt 0 ] && ann="      annotations: {$(IFS=,; echo "$*")}"
	cat <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name}
spec:
  replicas: $n
  selector: {matchLabels: {app: $name}}
  template:
    metadata:
      labels: {app: $name}
$ann
    spec:
      nodeName: $node
      terminationGracePeriodSeconds: 1
      volumes: [{name: load, hostPath: {path: $LOAD}}]
      containers:
      - name: app
        image: busybox
        command: [sh, -c, 'while :; do [ -e /load/on ] || sleep 0.5; done']
        volumeMounts: [{name: load, mountPath: /load}]
        resources: {requests: {cpu: 100m, memory: 16Mi}, limits: {cpu: 200m}}
Y
}

# ---- metrics on a hollow node ----------------------------------------------
deployment web 1 "$NH" '"hollow.corral.io/cpu": 50m' '"hollow.corral.io/memory": 9Mi' >"$D/deployments/web.yaml"
check "a Deployment on the hollow node runs its pod" wait_for 20 running web 1
WP=$(pods_of web | head -1)
PM=$D/podmetrics/$WP.yaml
check "the pod's PodMetrics appears in namespaces/dev/podmetrics/" wait_for 10 readable "$PM"
check "... metrics.k8s.io/v1beta1, kind PodMetrics" sh -c "grep -q '^apiVersion: metrics.k8s.io/v1beta1' '$PM' && grep -q '^kind: PodMetrics' '$PM'"
check "... the container's cpu in nanocores, as metrics-server prints it" grep -q '^    cpu: 50000000n' "$PM"
check "... its memory working set" grep -q '^    memory: 9Mi' "$PM"
check "... with timestamp and window" sh -c "grep -q '^timestamp: ' '$PM' && grep -q '^window: 1s' '$PM'"
check "... owned by the pod (the garbage collector's to remove)" grep -q 'kind: Pod$' "$PM"
check "the node's NodeMetrics appears in nodemetrics/" wait_for 10 grep -q '^  cpu: 50000000n' "$M/nodemetrics/$NH.yaml"
history_settle
check "PodMetrics and NodeMetrics are never in the history" sh -c "! git --git-dir='$S/history.git' log --name-only --format= | grep -q metrics/"
check "corral top pods -n dev prints kubectl top's table" sh -c "'$CORRAL' top pods -n dev --mount '$M' | tee '$T/top.out' | head -1 | grep -Eq '^NAME +CPU\(cores\) +MEMORY\(bytes\)$'"
check "... the pod at 50m and 9Mi" grep -Eq "^$WP +50m +9Mi$" "$T/top.out"
check "corral top pods -A adds the namespace" sh -c "'$CORRAL' top pods -A --mount '$M' | grep -Eq '^dev +$WP +50m +9Mi$'"
check "corral top nodes: the node's share of its allocatable cpu" sh -c "'$CORRAL' top nodes --mount '$M' | grep -Eq '^$NH +50m +1% +9Mi +[0-9]+%$'"

# ---- corral autoscale: an autoscaling/v1 HPA scales up to maxReplicas -------
check "corral autoscale writes the HPA file" sh -c "'$CORRAL' autoscale -n dev deployment web --cpu-percent=20 --min=1 --max=4 --mount '$M' | grep -qx 'horizontalpodautoscaler.autoscaling/web autoscaled'"
H=$D/horizontalpodautoscalers/web.yaml
check "... autoscaling/v1 with targetCPUUtilizationPercentage, as kubectl writes it" sh -c "grep -q '^apiVersion: autoscaling/v1' '$H' && grep -q 'targetCPUUtilizationPercentage: 20' '$H' && grep -q 'kind: Deployment' '$H'"
check "... and refuses a second one of that name" sh -c "! '$CORRAL' autoscale -n dev deployment web --max=4 --mount '$M' 2>/dev/null"
# 50m of a 100m request is 250% of 20%: from 1 to ceil(2.5) = 3, then
# (once the new pods are ready) 8, which maxReplicas holds to 4
check "the HPA scales the Deployment up (50% used against 20%)" wait_for 20 has_replicas web 4
check "... to maxReplicas, then holds" wait_for 20 sh -c "[ \"\$(sed -n '/^status:/,\$p' '$H' | sed -n 's/^  desiredReplicas: //p')\" = 4 ] && [ \"\$(sed -n '/^status:/,\$p' '$H' | sed -n 's/^  currentReplicas: //p')\" = 4 ]"
check "... status.currentCPUUtilizationPercentage: 50" wait_for 10 sh -c "sed -n '/^status:/,\$p' '$H' | grep -q '^  currentCPUUtilizationPercentage: 50$'"
check "... status.lastScaleTime" test -n "$(sfield "$H" lastScaleTime)"
able_true() { cond "$H" AbleToScale | grep -q '^True '; }
check "... AbleToScale True" wait_for 10 able_true
check "... ScalingActive True ValidMetricFound" is_cond "$H" ScalingActive "True ValidMetricFound"
check "... ScalingLimited True TooManyReplicas" wait_for 10 is_cond "$H" ScalingLimited "True TooManyReplicas"
check "... the event SuccessfulRescale with Kubernetes' reason" wait_for 10 event_says "New size: 3; reason: cpu resource utilization (percentage of request) above target"
check "... all 4 pods run" wait_for 20 running web 4
history_settle
check "git log of the Deployment: its creation and the autoscaler taking it over, no more" \
	sh -c "[ \$(git --git-dir='$S/history.git' log --oneline -- namespaces/dev/deployments/web.yaml | wc -l) = 2 ]"
check "... no declared replica count since the autoscaler took over" \
	sh -c "! git --git-dir='$S/history.git' show HEAD:namespaces/dev/deployments/web.yaml | grep -q 'replicas:'"
check "a person's change of the Deployment commits, still without the count" sed -i 's/terminationGracePeriodSeconds: 1$/terminationGracePeriodSeconds: 2/' "$D/deployments/web.yaml"
history_settle
REV=$(git --git-dir="$S/history.git" log --format=%H -- namespaces/dev/deployments/web.yaml | sed -n 2p)
check "git show REV:path > path rolls that change back" sh -c "cd '$M' && git show $REV:namespaces/dev/deployments/web.yaml > namespaces/dev/deployments/web.yaml"
check "... and keeps the autoscaler's 4 replicas" sh -c "grep -q 'terminationGracePeriodSeconds: 1$' '$D/deployments/web.yaml' && [ \"\$(sed -n '/^spec:/,/^[a-z]/p' '$D/deployments/web.yaml' | sed -n 's/^  replicas: //p')\" = 4 ]"
check "deleting the HPA gives the Deployment back: its annotation goes" rm "$H"
check "... (autoscaling.corral.io/horizontal-pod-autoscaler removed)" wait_for 15 sh -c "! grep -q 'autoscaling.corral.io/horizontal-pod-autoscaler' '$D/deployments/web.yaml'"
history_settle
check "... and the count is declared again, in the history" sh -c "git --git-dir='$S/history.git' show HEAD:namespaces/dev/deployments/web.yaml | grep -q '^  replicas: 4'"

# ---- custom metrics with echo: Pods and Object, autoscaling/v2 -------------
deployment qps 2 "$NH" >"$D/deployments/qps.yaml"
check "a second Deployment runs 2 pods" wait_for 20 running qps 2
# value POD N: what a sidecar would write
value() {
	echo "apiVersion: custom.metrics.k8s.io/v1beta2
kind: MetricValue
metadata: {name: $1.qps}
describedObject: {kind: Pod, name: $1}
metric: {name: qps}
value: '$2'" >"$D/metrics/$1.qps.yaml"
}
all_values() { local p; for p in $(pods_of qps); do value "$p" "$1" || return 1; done; }
service_value() {
	echo "apiVersion: custom.metrics.k8s.io/v1beta2
kind: MetricValue
metadata: {name: svc-qps.requests}
describedObject: {kind: Service, name: svc-qps, apiVersion: v1}
metric: {name: requests}
value: '$1'" >"$D/metrics/svc-qps.requests.yaml"
}
check "a MetricValue is written with echo into namespaces/dev/metrics/" all_values 30
check "... another for an object (a Service's requests)" service_value 50
cat >"$D/horizontalpodautoscalers/qps.yaml" <<'Y'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: qps}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: qps}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Pods
    pods:
      metric: {name: qps}
      target: {type: AverageValue, averageValue: '10'}
  - type: Object
    object:
      describedObject: {apiVersion: v1, kind: Service, name: svc-qps}
      metric: {name: requests}
      target: {type: Value, value: '100'}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 0
      policies: [{type: Pods, value: 10, periodSeconds: 15}]
Y
Q=$D/horizontalpodautoscalers/qps.yaml
check "an autoscaling/v2 HPA on both metrics scales up on the larger (qps 30 per pod against 10)" wait_for 20 has_replicas qps 4
check "... the reason names the Pods metric" wait_for 10 event_says "New size: 4; reason: pods metric qps above target"
check "... status.currentMetrics shows both, as Kubernetes writes them" wait_for 10 sh -c "sed -n '/^  currentMetrics:/,/^  [a-z]/p' '$Q' | grep -q '^ *averageValue: .30.' && sed -n '/^  currentMetrics:/,/^  [a-z]/p' '$Q' | grep -q '^ *value: .50.'"
check "... all 4 pods run" wait_for 20 running qps 4
check "echo of a low qps for every pod scales it down (behavior: no window)" all_values 1
check "... to minReplicas" wait_for 30 has_replicas qps 1
check "... 'All metrics below target'" wait_for 10 event_says "reason: All metrics below target"
check "the Object metric alone raises it again (requests 400 against 100)" service_value 400
# the default scale-up policy counts the scale-up of the last 15 s
check "... to 4" wait_for 30 has_replicas qps 4
check "... the reason names it" wait_for 10 event_says "reason: Service metric requests above target"
check "a Pods metric missing for every pod: ScalingActive False FailedGetPodsMetric" sh -c "rm -f '$D'/metrics/qps-*.qps.yaml && sed -i 's/^\\( *\\)name: svc-qps\$/\\1name: nothere/' '$Q' && grep -q 'name: nothere' '$Q'"
check "... (reported in the status)" wait_for 15 is_cond "$Q" ScalingActive "False FailedGetPodsMetric"
rm -f "$Q"
rm -f "$D/deployments/qps.yaml"
check "a pod's PodMetrics vanishes with its pod" wait_for 20 sh -c "[ -z \"\$(ls '$D/podmetrics' | grep '^qps-')\" ]"

# ---- a real pod under load ---------------------------------------------------
rm -f "$D/deployments/web.yaml"
start_node "$NR"
wait_for 20 grep -q 'reason: KubeletReady' "$M/nodes/$NR.yaml" || fail "node $NR is Ready"
deployment burn 1 "$NR" >"$D/deployments/burn.yaml"
check "a busybox pod runs on the real node" wait_for 30 running burn 1
BP=$(pods_of burn | head -1)
BM=$D/podmetrics/$BP.yaml
cpu_milli() { sed -n 's/^    cpu: \([0-9]*\)n$/\1/p' "$1" 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s / 1000000 }'; }
idle() { readable "$BM" && [ "$(cpu_milli "$BM")" -lt 50 ]; }
check "its PodMetrics (from the cgroup) shows it idle" wait_for 15 idle
touch "$LOAD/on"
# metrics every second: a reading after the load starts has it. Idle, the
# loop's sleep (a process each 0.5 s) costs about a tenth of the request:
# at 0.2 s it cost a quarter on a loaded machine, which kept two idle pods
# at 26-29% of their request and the HPA from going down to one.
burning() { [ "$(cpu_milli "$1")" -ge 120 ]; }
check "burning CPU (limit 200m) shows in its PodMetrics" wait_for 10 burning "$BM"
check "... and in corral top" sh -c "'$CORRAL' top pods -n dev --mount '$M' | grep -Eq '^$BP +(1[2-9][0-9]|2[0-9][0-9])m '"
check "... the memory working set is there too" grep -Eq '^    memory: [0-9]+(Ki|Mi)?$' "$BM"
check "the node's NodeMetrics is the machine's" wait_for 10 sh -c "grep -Eq '^  cpu: [0-9]+n$' '$M/nodemetrics/$NR.yaml'"
check "corral autoscale at 50% (kubectl autoscale's form)" "$CORRAL" autoscale -n dev deployment burn --cpu-percent=50 --min=1 --max=3 --mount "$M"
check "under load the HPA scales the real Deployment up to maxReplicas" wait_for 30 has_replicas burn 3
check "... its pods run" wait_for 30 running burn 3
rm -f "$LOAD/on"
check "once the load stops, it scales down after the stabilization window" wait_for 40 has_replicas burn 1
check "... 'All metrics below target'" event_says "New size: 1; reason: All metrics below target"
rm -f "$D/horizontalpodautoscalers/burn.yaml" "$D/deployments/burn.yaml"
check "the real pods go, and their PodMetrics with them" wait_for 30 sh -c "[ -z \"\$(ls '$D/pods' | grep '^burn-')\" ] && [ -z \"\$(ls '$D/podmetrics' | grep '^burn-')\" ]"
check "no daemon logged an error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T'/ctrl.log '$T'/$NH.log '$T'/$NR.log"
grep -h ' \(warn\|error\): ' "$T"/ctrl.log "$T"/$NH.log "$T"/$NR.log | grep -v 'metrics' >&2
[ "$FAILS" = 0 ]
