#!/bin/bash
# ResourceQuota and LimitRange on a real mount: corral-fs refuses the
# write that would exceed a quota, or that a LimitRange bounds, at its
# close, with Kubernetes' message in .errors; LimitRange defaults are in
# the stored pod before the quota counts it; the resourcequota controller
# keeps status.hard and status.used; a ReplicaSet whose pod is refused
# shows FailedCreate with the quota's message; a restart of corral-fs
# still enforces the quota (its sums are loaded from the store). No nodes:
# the quota counts pods as they are written.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
[ -x "$CTRL" ] || { echo "not ok - no $CTRL (run make)"; exit 1; }
CPID=
stop_ctrl() {
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null && wait "$CPID" 2>/dev/null
	CPID=
}
trap 'stop_ctrl; cleanup' EXIT
start_fs
"$CTRL" --mount "$M" --controllers replicaset,resourcequota >>"$T/ctrl.log" 2>&1 &
CPID=$!
mkdir "$M/namespaces/dev" "$M/namespaces/rs"
D=$M/namespaces/dev
# pod NAME RESOURCES: a pod of one container "app" (RESOURCES a flow body)
pod() {
	cat <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  containers: [{name: app, image: busybox, resources: {$2}}]
Y
}
put_pod() { pod "$1" "$2" >"$T/$1.yaml" && cp "$T/$1.yaml" "$D/pods/$1.yaml"; }
errors_has() { grep -qF -- "$1" "$M/.errors"; }
# used FILE KEY VALUE: status.used of the quota FILE says KEY: VALUE
used_is() { sed -n '/^  used:/,$p' "$1" | grep -Eq "^    $2: '?$3'?\$"; }
hard_is() { sed -n '/^  hard:/,/^  used:/p' "$1" | grep -Eq "^    $2: '?$3'?\$"; }

# ---- refusals ------------------------------------------------------------------
cat >"$D/resourcequotas/q1.yaml" <<'Y'
apiVersion: v1
kind: ResourceQuota
metadata: {name: q1}
spec:
  hard: {requests.cpu: "2", pods: "10"}
Y
check "a ResourceQuota is accepted" readable "$D/resourcequotas/q1.yaml"
check "a pod requesting 900m is admitted" put_pod p1 "requests: {cpu: 900m}"
check "... and another" put_pod p2 "requests: {cpu: 900m}"
refute "a third pod requesting 500m is refused at its close" put_pod p3 "requests: {cpu: 500m}"
check "... and is not there" test ! -e "$D/pods/p3.yaml"
check ".errors says why, in Kubernetes' words" errors_has \
	'namespaces/dev/pods/p3.yaml: pods "p3" is forbidden: exceeded quota: q1, requested: requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2'
refute "a pod without a cpu request is refused" put_pod p4 ""
check "... with Kubernetes' message" errors_has \
	'pods "p4" is forbidden: failed quota: q1: must specify requests.cpu for: app'

# ---- status --------------------------------------------------------------------
Q=$D/resourcequotas/q1.yaml
check "the resourcequota controller writes status.hard" wait_for 10 hard_is "$Q" requests.cpu 2
check "... and status.used" wait_for 10 sh -c "$(declare -f used_is); used_is '$Q' requests.cpu 1800m && used_is '$Q' pods 2"
check "deleting a pod gives its share back" rm "$D/pods/p1.yaml"
check "... status.used follows" wait_for 10 sh -c "$(declare -f used_is); used_is '$Q' requests.cpu 900m && used_is '$Q' pods 1"
check "... and the pod that was refused now fits" put_pod p3 "requests: {cpu: 500m}"
check "a quota written later counts what exists" sh -c "printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: late}\nspec:\n  hard: {count/pods: \"2\"}\n' >'$D/resourcequotas/late.yaml'"
check "... its status.used says so" wait_for 10 used_is "$D/resourcequotas/late.yaml" count/pods 2
refute "... and it refuses the next pod" put_pod p5 "requests: {cpu: 100m}"
check "... by its name" errors_has 'exceeded quota: late, requested: count/pods=1, used: count/pods=2, limited: count/pods=2'
rm -f "$D/resourcequotas/late.yaml"

# ---- LimitRange ----------------------------------------------------------------
cat >"$D/limitranges/lr.yaml" <<'Y'
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
    default: {cpu: 300m, memory: 128Mi}
    defaultRequest: {cpu: 200m}
Y
check "a LimitRange is accepted" readable "$D/limitranges/lr.yaml"
check "a pod setting no resources is admitted" put_pod d1 ""
check "... and reads back with the default limits" grep -q 'cpu: 300m' "$D/pods/d1.yaml"
check "... and the default requests" grep -q 'cpu: 200m' "$D/pods/d1.yaml"
check "... and the annotation saying so" grep -q 'kubernetes.io/limit-ranger: .LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app' "$D/pods/d1.yaml"
check "... and the quota counted the defaulted request" wait_for 10 sh -c "$(declare -f used_is); used_is '$Q' requests.cpu 1600m"
refute "a container limited above the LimitRange's max is refused" put_pod big "limits: {cpu: \"2\"}"
check "... with Kubernetes' message" errors_has \
	'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
refute "a defaulted pod past the quota is refused by the quota" put_pod d2 "requests: {cpu: 500m}"
check "... after the LimitRange's defaults" errors_has 'pods "d2" is forbidden: exceeded quota: q1, requested: requests.cpu=500m, used: requests.cpu=1600m, limited: requests.cpu=2'

# ---- a ReplicaSet refused by a quota -------------------------------------------
cat >"$M/namespaces/rs/resourcequotas/two.yaml" <<'Y'
apiVersion: v1
kind: ResourceQuota
metadata: {name: two}
spec:
  hard: {pods: "2"}
Y
cat >"$M/namespaces/rs/replicasets/web.yaml" <<'Y'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: busybox}]}
Y
npods() { [ "$(ls "$M/namespaces/rs/pods" | grep -c '^web-')" -eq "$1" ]; }
check "a ReplicaSet of 3 in a namespace allowing 2 pods gets 2" wait_for 10 npods 2
check "... and shows FailedCreate with the quota's message" wait_for 10 sh -c \
	"grep -l 'reason: FailedCreate' '$M/namespaces/rs/events/'*.yaml | xargs grep -l 'exceeded quota: two, requested: pods=1, used: pods=2, limited: pods=2' | grep -q ."
check "... and the ReplicaFailure condition" wait_for 10 grep -q 'reason: FailedCreate' "$M/namespaces/rs/replicasets/web.yaml"
refute "... never a third pod" npods 3
stop_ctrl

# ---- after a restart -------------------------------------------------------------
stop_fs
start_fs
refute "after a restart of corral-fs the quota still refuses" put_pod p6 "requests: {cpu: 500m}"
check "... with the sums loaded from the store" errors_has 'pods "p6" is forbidden: exceeded quota: q1, requested: requests.cpu=500m, used: requests.cpu=1600m'

[ "$FAILS" = 0 ]
