#!/bin/bash
# corral-fs's admission hook "priority" on a real mount (no other daemon):
# a pod naming a PriorityClass reads back with the class's value; a pod
# naming no class that exists is refused at its close and .errors says
# why; a second default class is refused.
. "$(dirname "$0")/../lib/lib.sh" 2>/dev/null || . "$(dirname "$0")/lib.sh"
start_fs
mkdir "$M/namespaces/dev"
P=$M/namespaces/dev/pods

cat >"$T/high.yaml" <<'Y'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000000
description: for the pods that must run
Y
cat >"$T/web.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  priorityClassName: high
  containers: [{name: c, image: nginx:1.25}]
Y
sed 's/name: web}/name: orphan}/; s/priorityClassName: high/priorityClassName: missing/' \
	"$T/web.yaml" >"$T/orphan.yaml"

check "a PriorityClass is accepted" cp "$T/high.yaml" "$M/priorityclasses/high.yaml"
check "a pod naming it is accepted" cp "$T/web.yaml" "$P/web.yaml"
check "... and reads back with the class's value" grep -q 'priority: 1000000' "$P/web.yaml"
check "... and its preemption policy" grep -q 'preemptionPolicy: PreemptLowerPriority' "$P/web.yaml"
check "writing the pod's manifest again keeps its priority" cp "$T/web.yaml" "$P/web.yaml"
check "... which still reads back" grep -q 'priority: 1000000' "$P/web.yaml"

refute "a pod naming a missing PriorityClass is refused" cp "$T/orphan.yaml" "$P/orphan.yaml"
check "... and is not there" test ! -e "$P/orphan.yaml"
check ".errors says why, in Kubernetes' words" \
	grep -q 'namespaces/dev/pods/orphan.yaml: pods "orphan" is forbidden: no PriorityClass with name missing was found' "$M/.errors"

sed 's/name: high}/name: standard}/; s/value: 1000000/value: 10/' "$T/high.yaml" >"$T/standard.yaml"
printf 'globalDefault: true\n' >>"$T/standard.yaml"
sed 's/name: standard}/name: other}/' "$T/standard.yaml" >"$T/other.yaml"
check "a default PriorityClass is accepted" cp "$T/standard.yaml" "$M/priorityclasses/standard.yaml"
refute "a second default is refused" cp "$T/other.yaml" "$M/priorityclasses/other.yaml"
check "... and .errors says which class is the default" \
	grep -q 'priorityclasses/other.yaml: .*PriorityClass standard is already marked as default. Only one default can exist' "$M/.errors"

# The hook's classes are loaded from the store at start.
stop_fs
start_fs
refute "after a restart, a second default is still refused" cp "$T/other.yaml" "$M/priorityclasses/other.yaml"
sed 's/name: web}/name: web2}/' "$T/web.yaml" >"$T/web2.yaml"
check "... and a new pod naming a class gets its value" \
	sh -c "cp '$T/web2.yaml' '$P/web2.yaml' && grep -q 'priority: 1000000' '$P/web2.yaml'"

[ "$FAILS" = 0 ]
