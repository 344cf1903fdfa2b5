#!/bin/bash
# corral-sched against a real mount: hollow nodes written as files, pods
# that fit in one place only, the unschedulable message word for word,
# nodeSelector, affinity, taints, cordon, host ports, anti-affinity, retries
# when the cluster changes, schedulerName, terminated pods, two
# schedulers at once that never both bind a pod, leader election (only
# the lease holder binds; another takes over after kill -9), and Bindings
# written by hand. SCHED_TEST_LOGS=DIR keeps
# the schedulers' logs there; CORRAL_SCHED_BIN picks another binary (ASan).
. "$(dirname "$0")/../lib/lib.sh"
SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
[ -x "$SCHED" ] || { echo "not ok - no corral-sched binary at $SCHED (run make)"; exit 1; }
SPIDS=()
trap '[ -n "${SCHED_TEST_LOGS:-}" ] && cp "$T"/*.log "$SCHED_TEST_LOGS"/; for p in "${SPIDS[@]}"; do kill "$p" 2>/dev/null; done; for p in "${SPIDS[@]}"; do wait "$p" 2>/dev/null; done; cleanup' EXIT
start_fs
mkdir "$M/namespaces/dev"
P=$M/namespaces/dev/pods

# node NAME CPU MEMORY "LABELS" ["SPEC"] [READY]: a hollow node, as a file.
node() {
	cat >"$M/nodes/$1.yaml" <<Y
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1${4:+, $4}}}
spec: {${5:-}}
status:
  capacity: {cpu: "$2", memory: $3, pods: "110"}
  allocatable: {cpu: "$2", memory: $3, pods: "110"}
  conditions: [{type: Ready, status: "${6:-True}"}]
Y
}
# pod NAME CPU [SPEC-LINES...]: a pod in dev requesting CPU.
pod() {
	local name=$1 cpu=$2
	shift 2
	{
		printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {app: %s}}\nspec:\n' "$name" "$name"
		for l in "$@"; do printf '  %s\n' "$l"; done
		printf '  containers: [{name: c, image: busybox, resources: {requests: {cpu: "%s"}}}]\n' "$cpu"
	} >"$P/$name.yaml"
}
node_of() { sed -n 's/^  nodeName: //p' "$P/$1.yaml"; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }
bound() { [ -n "$(node_of "$1")" ]; }
# The message of the pod's PodScheduled condition, unquoted.
message_of() { sed -n "s/^    message: //p" "$P/$1.yaml" | sed "s/^'\(.*\)'\$/\1/; s/''/'/g"; }
says() { [ "$(message_of "$1")" = "$2" ]; }
NSCHED=0 # schedulers started: each logs to sched.N.log
start_sched() {
	NSCHED=$((NSCHED + 1))
	"$SCHED" --mount "$M" "$@" >>"$T/sched.$NSCHED.log" 2>&1 &
	SPIDS+=($!)
}

node small 1 1Gi "role: small"
node big 8 16Gi "role: big"
node gpu 4 8Gi "accel: gpu" "taints: [{key: dedicated, value: gpu, effect: NoSchedule}]"
start_sched --verbose
wait_for 10 grep -q 'scheduling for default-scheduler' "$T/sched.1.log"
check "corral-sched starts on the mount with 3 nodes" grep -q '3 nodes' "$T/sched.1.log"

pod needs4 4
check "a pod that fits one node only goes there" wait_for 15 bound_to needs4 big
pod other 100m "schedulerName: someone-else"
pod wantsgpu 100m "nodeSelector: {accel: gpu}" \
	"tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]"
check "nodeSelector and a toleration lead to the tainted node" wait_for 15 bound_to wantsgpu gpu
pod notolerate 100m "nodeSelector: {accel: gpu}"
check "the unschedulable message names the taint and the selector, as Kubernetes" \
	wait_for 15 says notolerate "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector."
pod toobig 64
check "a pod too big for every node says Insufficient cpu" \
	wait_for 15 says toobig "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu."
check "the condition is PodScheduled=False, reason Unschedulable" \
	grep -q "reason: Unschedulable" "$P/toobig.yaml"
refute "an unschedulable pod is not bound" bound toobig
refute "a pod for another scheduler is left alone" grep -q 'nodeName\|PodScheduled' "$P/other.yaml"
check "a bound pod has PodScheduled=True" grep -q "status: 'True'" "$P/needs4.yaml"

pod affin 100m "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: In, values: [big, huge]}]}]}}}"
check "required node affinity In" wait_for 15 bound_to affin big
pod notin 100m "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: NotIn, values: [big]}, {key: accel, operator: DoesNotExist}]}]}}}"
check "required node affinity NotIn and DoesNotExist" wait_for 15 bound_to notin small

# Host ports: the second pod wanting 8080 on the only node it may use waits.
cat >"$P/port1.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: port1}
spec:
  nodeSelector: {role: big}
  containers: [{name: c, image: busybox, ports: [{containerPort: 80, hostPort: 8080}]}]
Y
check "a pod with a host port is bound" wait_for 15 bound_to port1 big
sed 's/port1/port2/' >"$P/port2.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: port1}
spec:
  nodeSelector: {role: big}
  containers: [{name: c, image: busybox, ports: [{containerPort: 80, hostPort: 8080}]}]
Y
check "a second pod wanting the same host port on that node waits, with Kubernetes' reason" \
	wait_for 15 says port2 "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}."

# Pod anti-affinity on the hostname: one per node, the fourth waits.
for i in 1 2 3 4; do
	cat >"$P/anti$i.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: anti$i, labels: {app: anti}}
spec:
  tolerations: [{operator: Exists}]
  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: anti}}, topologyKey: kubernetes.io/hostname}]}}
  containers: [{name: c, image: busybox}]
Y
done
check "pod anti-affinity: three replicas bound" wait_for 15 bash -c "[ \$(cat $P/anti[1234].yaml | grep -c '^  nodeName:') = 3 ]"
check "pod anti-affinity: on three different nodes" \
	bash -c "[ \$(sed -n 's/^  nodeName: //p' $P/anti[1234].yaml | sort -u | wc -l) = 3 ]"
one_says() { local m=$1 p; shift; for p; do says "$p" "$m" && return 0; done; return 1; }
check "pod anti-affinity: the fourth says why" wait_for 15 one_says \
	"0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules." anti1 anti2 anti3 anti4

# Cordon: a pod that fits only the cordoned node waits until it is uncordoned.
node small 1 1Gi "role: small" "unschedulable: true"
pod cordoned 100m "nodeSelector: {role: small}"
check "a cordoned node takes no pod" wait_for 15 grep -q '1 node(s) were unschedulable' "$P/cordoned.yaml"
node small 1 1Gi "role: small"
check "uncordoning the node lets the pod on" wait_for 15 bound_to cordoned small

# A node that is not Ready is tainted not-ready for the scheduler.
node late 2 2Gi "role: late" "" False
pod waitready 100m "nodeSelector: {role: late}"
check "a NotReady node takes no pod" wait_for 15 bash -c \
	"grep -q 'untolerated taint {node.kubernetes.io/not-ready: }' $P/waitready.yaml"
node late 2 2Gi "role: late"
check "the pod goes on once the node is Ready" wait_for 15 bound_to waitready late

# Unschedulable until a big enough node comes.
pod needs12 12
check "a pod needing 12 cpus waits" wait_for 15 grep -q 'Insufficient cpu' "$P/needs12.yaml"
node huge 16 32Gi "role: huge"
check "a new node that fits gets it, without touching the pod" wait_for 15 bound_to needs12 huge

# Resources freed by a deleted pod, and terminated pods that hold nothing.
node tiny 1 1Gi "role: tiny"
pod fill1 1 "nodeSelector: {role: tiny}"
check "a pod fills the tiny node" wait_for 15 bound_to fill1 tiny
pod fill2 1 "nodeSelector: {role: tiny}"
check "the next one does not fit" wait_for 15 grep -q '1 Insufficient cpu' "$P/fill2.yaml"
rm "$P/fill1.yaml"
check "deleting the first lets the second on" wait_for 15 bound_to fill2 tiny
cat >"$P/done.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: tiny2
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
status: {phase: Succeeded}
Y
node tiny2 1 1Gi "role: tiny2"
pod after 1 "nodeSelector: {role: tiny2}"
check "a Succeeded pod holds no cpu on its node" wait_for 15 bound_to after tiny2

# Init containers: the larger of the biggest init container and the sum.
node mid 3 4Gi "role: mid"
cat >"$P/init.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  nodeSelector: {role: mid}
  initContainers: [{name: i, image: busybox, resources: {requests: {cpu: "4"}}}]
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
Y
check "an init container bigger than the node keeps the pod off it" \
	wait_for 15 grep -q '1 Insufficient cpu' "$P/init.yaml"

check "the first scheduler holds the lease" \
	grep -q "$(sed -n 's/.* as \([^ ]*\).*/\1/p' "$T/sched.1.log" | head -1)" "$M/namespaces/kube-system/leases/corral-sched.yaml"

# Two schedulers at once: every pod bound once, no node oversubscribed. The
# second runs without leader election so that both bind.
node a1 4 8Gi "pool: race"
node a2 4 8Gi "pool: race"
node a3 4 8Gi "pool: race"
start_sched --verbose --leader-elect=false
wait_for 10 grep -q 'scheduling for default-scheduler' "$T/sched.2.log"
mkdir "$M/namespaces/race"
R=$M/namespaces/race/pods
WPIDS=()
for i in $(seq 1 60); do
	cat >"$R/r$i.yaml" <<Y &
apiVersion: v1
kind: Pod
metadata: {name: r$i}
spec:
  nodeSelector: {pool: race}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "100m"}}}]
Y
	WPIDS+=($!)
	[ $((i % 8)) = 0 ] && wait "${WPIDS[@]}" && WPIDS=()
done
[ ${#WPIDS[@]} = 0 ] || wait "${WPIDS[@]}"
check "two schedulers bind all 60 pods" wait_for 30 bash -c "[ \$(cat $R/*.yaml | grep -c '^  nodeName:') = 60 ]"
# a scheduler logs a binding once its write has returned, a moment after
# the file shows it: wait for the logs to hold all 60
wait_for 10 bash -c "[ \$(cat $T/sched.[12].log | grep -c 'race/r[0-9]*: bound to') -ge 60 ]" ||
	fail "the schedulers log their 60 bindings"
# Each scheduler logs the bindings the store accepted; together exactly one
# per pod, each naming the node the pod's file shows.
grep -h 'race/r[0-9]*: bound to' "$T"/sched.[12].log | sed 's/.* race\/\(r[0-9]*\): bound to \(.*\)$/\1 \2/' | sort >"$T/accepted"
for i in $(seq 1 60); do echo "r$i $(sed -n 's/^  nodeName: //p' "$R/r$i.yaml")"; done | sort >"$T/files"
check "the two schedulers' accepted bindings are exactly one per pod" \
	bash -c "[ \$(wc -l <$T/accepted) = 60 ] && [ \$(cut -d' ' -f1 $T/accepted | sort -u | wc -l) = 60 ]"
check "every accepted binding is the node in the pod's file" diff "$T/accepted" "$T/files"
c1=$(grep -c 'race/r[0-9]*: bound to' "$T/sched.1.log") c2=$(grep -c 'race/r[0-9]*: bound to' "$T/sched.2.log")
echo "# race: scheduler 1 bound $c1, scheduler 2 bound $c2; $(cat "$T"/sched.[12].log | grep -c 'lost a conflict') bindings lost a conflict"

# Stop cleanly on SIGTERM.
for p in "${SPIDS[@]}"; do kill "$p"; done
rc=0
for p in "${SPIDS[@]}"; do wait "$p" || rc=$?; done
SPIDS=()
check "corral-sched stops cleanly on SIGTERM" test "$rc" = 0
check "and says so" grep -q 'stopped:' "$T/sched.1.log"
refute "no scheduler logged an error" grep -q ' error: ' "$T/sched.1.log" "$T/sched.2.log"
LEASE_FILE=$M/namespaces/kube-system/leases/corral-sched.yaml
check "... and hands the lease over" grep -q "holderIdentity: ''" "$LEASE_FILE"

# Leader election: of two schedulers, only the lease holder binds; after
# kill -9 of it, the other takes over within the lease duration.
LEASE=(--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms)
identity_of() { sed -n 's/.* as \([^ ]*\).*/\1/p' "$T/sched.$1.log" | head -1; }
start_sched --verbose "${LEASE[@]}"
L1=${SPIDS[-1]}
check "a scheduler with leader election takes the free lease and schedules" \
	wait_for 10 grep -q 'scheduling for default-scheduler' "$T/sched.3.log"
start_sched --verbose "${LEASE[@]}"
L2=${SPIDS[-1]}
check "a second one follows" wait_for 10 grep -q 'is held by' "$T/sched.4.log"
check "... the lease names the first" grep -q "holderIdentity: $(identity_of 3)" "$LEASE_FILE"
mkdir "$M/namespaces/elect"
E=$M/namespaces/elect/pods
epod() {
	cat >"$E/$1.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {pool: race}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "10m"}}}]
Y
}
for i in $(seq 1 10); do epod e$i; done
check "the leader binds all 10 pods" wait_for 15 bash -c "[ \$(cat $E/*.yaml | grep -c '^  nodeName:') = 10 ]"
check "... all of them itself" wait_for 5 bash -c "[ \$(grep -c 'elect/e[0-9]*: bound to' $T/sched.3.log) = 10 ]"
refute "the follower binds nothing" grep -q 'bound to' "$T/sched.4.log"
refute "... nor schedules at all" grep -q 'scheduling for default-scheduler' "$T/sched.4.log"
kill -9 "$L1"
wait "$L1" 2>/dev/null
check "kill -9 of the leader: the follower takes over within the lease duration" \
	wait_for 5 grep -q 'scheduling for default-scheduler' "$T/sched.4.log"
check "... the lease names it" grep -q "holderIdentity: $(identity_of 4)" "$LEASE_FILE"
check "... and counts the transition" grep -q 'leaseTransitions: [1-9]' "$LEASE_FILE"
epod after
check "the new leader binds a new pod" wait_for 15 grep -q 'elect/after: bound to' "$T/sched.4.log"
check "... once" bound after
kill "$L2"
rc=0
wait "$L2" || rc=$?
SPIDS=()
check "the new leader stops cleanly on SIGTERM" test "$rc" = 0
check "... and hands the lease over" grep -q "holderIdentity: ''" "$LEASE_FILE"
refute "it logged no error" grep -q ' error: ' "$T/sched.4.log"
# Leadership lost (another holder wrote the lease): exit non-zero, as
# kube-scheduler does, rather than bind any further.
start_sched "${LEASE[@]}"
L3=${SPIDS[-1]}
wait_for 10 grep -q 'scheduling for default-scheduler' "$T/sched.5.log"
sed -i 's/holderIdentity: .*/holderIdentity: intruder/' "$LEASE_FILE"
check "a leader that loses the lease exits" wait_for 5 bash -c "! kill -0 $L3"
rc=0
wait "$L3" || rc=$?
SPIDS=()
check "... non-zero" test "$rc" != 0
check "... saying leaderelection lost" grep -q 'error: leaderelection lost' "$T/sched.5.log"
refute "a renew deadline longer than the lease duration is refused" \
	"$SCHED" --mount "$M" --leader-elect-renew-deadline 20s

# A Binding written over a pod's file binds it, as Kubernetes' pods/binding
# subresource (no scheduler runs now: "other" is for someone else anyway).
binding() { printf 'apiVersion: v1\nkind: Binding\nmetadata: {name: %s%s}\ntarget: {kind: Node, name: %s}\n' "$1" "${3:-}" "$2" >"$T/binding.yaml"; }
binding other a1 ", uid: not-its-uid"
refute "a Binding with another uid is refused at close" cp "$T/binding.yaml" "$P/other.yaml"
check "... as a conflict, said in .errors" grep -q 'Precondition failed: UID' "$M/.errors"
refute "... and the pod stays unbound" bound other
binding other a1
check "a Binding written over a pod's file binds it" cp "$T/binding.yaml" "$P/other.yaml"
check "... the file reads back the bound pod" bound_to other a1
check "... whole, with PodScheduled=True" bash -c "grep -q 'image: busybox' '$P/other.yaml' && grep -q \"status: 'True'\" '$P/other.yaml'"
binding other a2
refute "a second Binding is refused" cp "$T/binding.yaml" "$P/other.yaml"
check "... saying the pod is bound already" grep -q 'already assigned to node "a1"' "$M/.errors"
check "... and the pod stays on its node" bound_to other a1
if [ "$FAILS" != 0 ]; then
	echo "--- sched.1.log (tail)" >&2
	grep -v ' debug: ' "$T/sched.1.log" | tail -30 >&2
fi
[ "$FAILS" = 0 ]
