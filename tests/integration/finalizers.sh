#!/bin/bash
# metadata.finalizers and deletionTimestamp on a real mount, for several
# kinds (a ConfigMap, a Deployment, a Secret, a cluster-scoped Node): rm
# exits 0 and leaves the file, readable, with its deletionTimestamp; a
# second rm changes nothing; a write that adds a finalizer or changes the
# timestamp is refused with Kubernetes' message in .errors, one that leaves
# the timestamp out keeps it; the write that removes the last finalizer
# deletes the object, and the history has one commit for it, the
# deletion's; an editor's save (rename over) does the same; finalizer
# names are checked. Then with corral-ctrl: the garbage collector deletes
# a dependent that has finalizers without waiting on it, and it goes once
# its finalizer is removed.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
[ -x "$CTRL" ] || { echo "not ok - no $CTRL (run make)"; exit 1; }
CPID=
trap '[ -n "$CPID" ] && kill "$CPID" 2>/dev/null; [ -n "$CPID" ] && wait "$CPID" 2>/dev/null; cleanup' EXIT
start_fs
mkdir "$M/namespaces/dev"
D=$M/namespaces/dev
rv() { obj_rev "$1"; }
commits() { git --git-dir="$S/history.git" log --format=%s -- "$1" 2>/dev/null; }

# try KIND-FILE TEXT: one kind, the whole contract
try() {
	local what=$1 f=$2 text=$3 hpath=$4 msg=$5
	printf '%s' "$text" >"$f" || { fail "$what: the object with a finalizer is written"; return; }
	history_settle
	local c0; c0=$(commits "$hpath" | wc -l)
	check "$what: rm of an object with a finalizer exits 0" rm "$f"
	check "$what: ... its file stays, readable" readable "$f"
	check "$what: ... with a deletionTimestamp" grep -q '^  deletionTimestamp:' "$f"
	check "$what: ... and deletionGracePeriodSeconds 0" grep -q '^  deletionGracePeriodSeconds: 0' "$f"
	local r1; r1=$(rv "$f")
	check "$what: a second rm exits 0" rm "$f"
	check "$what: ... and changes nothing" test "$(rv "$f")" = "$r1"
	refute "$what: a write adding a finalizer is refused" sed -i 's|^  - example.com/hold$|  - example.com/hold\n  - example.com/more|' "$f"
	check "$what: ... with Kubernetes' message" sh -c "tail -3 '$M/.errors' | grep -q 'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers \[\]string{\"example.com/more\"}'"
	refute "$what: a write changing the timestamp is refused" sed -i 's|^  deletionTimestamp: .*|  deletionTimestamp: "2030-01-01T00:00:00Z"|' "$f"
	check "$what: ... field is immutable" sh -c "tail -3 '$M/.errors' | grep -q 'metadata.deletionTimestamp: Invalid value: \"2030-01-01T00:00:00Z\": field is immutable'"
	check "$what: a write leaving the timestamp out is taken and keeps it" sh -c "sed -i '/^  deletionTimestamp:/d' '$f' && grep -q '^  deletionTimestamp:' '$f'"
	history_settle
	check "$what: no commit for what kept it" test "$(commits "$hpath" | wc -l)" = "$c0"
	# (the kernel's entry for it goes a moment after the rename returns)
	sed -i '/^  finalizers:/d; /^  - example.com\/hold/d' "$f"
	check "$what: removing the last finalizer deletes it" wait_for 5 sh -c "! test -e '$f'"
	history_settle
	check "$what: the history has one commit more, the deletion's" sh -c "[ \$(git --git-dir='$S/history.git' log --format=%s -- '$hpath' | wc -l) -eq $((c0 + 1)) ] && git --git-dir='$S/history.git' log -1 --format=%B -- '$hpath' | grep -qxE '(- )?$msg'"
}

try "ConfigMap" "$D/configmaps/cm.yaml" 'apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  finalizers:
  - example.com/hold
data: {a: "1"}
' namespaces/dev/configmaps/cm.yaml "delete configmap dev/cm"
try "Deployment" "$D/deployments/web.yaml" 'apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  finalizers:
  - example.com/hold
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: busybox}]}
' namespaces/dev/deployments/web.yaml "delete deployment dev/web"
try "Secret" "$D/secrets/s.yaml" 'apiVersion: v1
kind: Secret
metadata:
  name: s
  finalizers:
  - example.com/hold
stringData: {a: b}
' namespaces/dev/secrets/s.yaml "delete secret dev/s"
try "Node" "$M/nodes/n1.yaml" 'apiVersion: v1
kind: Node
metadata:
  name: n1
  finalizers:
  - example.com/hold
' nodes/n1.yaml "delete node n1"

# An editor's save (a new file renamed over) that drops the last finalizer.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ed\n  finalizers: [example.com/hold]\n' >"$D/configmaps/ed.yaml"
rm "$D/configmaps/ed.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ed\n' >"$D/configmaps/.ed.new"
check "a rename over it without the finalizer is taken" mv "$D/configmaps/.ed.new" "$D/configmaps/ed.yaml"
check "... and deletes it" wait_for 5 sh -c "! test -e '$D/configmaps/ed.yaml'"
check "... and the folder lists neither file" sh -c "! ls -a '$D/configmaps' | grep -q 'ed'"

# Names.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  finalizers: ["-no-"]\n' >"$T/bad.yaml"
refute "a finalizer that is not a qualified name is refused" cp "$T/bad.yaml" "$D/configmaps/bad.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: both\n  finalizers: [orphan, foregroundDeletion]\n' >"$T/both.yaml"
refute "orphan and foregroundDeletion together are refused" cp "$T/both.yaml" "$D/configmaps/both.yaml"
check "... with Kubernetes' message" grep -q 'finalizer orphan and foregroundDeletion cannot be both set' "$M/.errors"

# Without finalizers, rm is as before.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n' >"$D/configmaps/plain.yaml"
check "rm of an object without finalizers removes it" sh -c "rm '$D/configmaps/plain.yaml' && ! test -e '$D/configmaps/plain.yaml'"

# The garbage collector and a dependent with a finalizer.
"$CTRL" --mount "$M" --controllers garbagecollector >>"$T/ctrl.log" 2>&1 &
CPID=$!
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owner}\n' >"$D/configmaps/owner.yaml"
uid=$(sed -n 's/^  uid: //p' "$D/configmaps/owner.yaml")
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dep\n  finalizers: [example.com/hold]\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %s}]\n' "$uid" >"$D/configmaps/dep.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dep2\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %s}]\n' "$uid" >"$D/configmaps/dep2.yaml"
wait_for 10 grep -q 'garbage\|leading\|started' "$T/ctrl.log"
rm "$D/configmaps/owner.yaml"
check "the collector deletes the dependent without a finalizer" wait_for 20 sh -c "! test -e '$D/configmaps/dep2.yaml'"
check "... and marks the one with a finalizer" wait_for 20 grep -q '^  deletionTimestamp:' "$D/configmaps/dep.yaml"
sed -i '/^  finalizers:/d; /^  - example.com\/hold/d' "$D/configmaps/dep.yaml"
check "... which goes once its finalizer is removed" wait_for 10 sh -c "! test -e '$D/configmaps/dep.yaml'"
# An owner with orphan, then one with foregroundDeletion.
for how in orphan:orphan fg:foregroundDeletion; do
	n=${how%%:*} fin=${how#*:}
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o-%s\n  finalizers: [%s]\n' "$n" "$fin" >"$D/configmaps/o-$n.yaml"
	ouid=$(sed -n 's/^  uid: //p' "$D/configmaps/o-$n.yaml")
	check "$fin: the owner is there" test -n "$ouid"
	for i in 1 2; do
		printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d%s-%s\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: o-%s, uid: %s}]\n' "$i" "$n" "$n" "$ouid" >"$D/configmaps/d$i-$n.yaml"
	done
	check "$fin: its dependents are there" test -e "$D/configmaps/d1-$n.yaml" -a -e "$D/configmaps/d2-$n.yaml"
	rm "$D/configmaps/o-$n.yaml"
	check "$fin: the owner goes once the collector is done" wait_for 20 sh -c "! test -e '$D/configmaps/o-$n.yaml'"
done
check "orphan: its dependents stay" test -e "$D/configmaps/d1-orphan.yaml" -a -e "$D/configmaps/d2-orphan.yaml"
check "orphan: ... without a reference to it" sh -c "! grep -q ownerReferences '$D/configmaps/d1-orphan.yaml' '$D/configmaps/d2-orphan.yaml'"
check "foregroundDeletion: its dependents went first" sh -c "! test -e '$D/configmaps/d1-fg.yaml' && ! test -e '$D/configmaps/d2-fg.yaml'"
# An rm that leaves an object being deleted changes its text as a write does:
# a reader told by IN_DELETE reads it with its deletionTimestamp, whole.
check "a read right after an rm that keeps the object sees it being deleted" "$BUILD/tests/tools/read-fresh" "$D/configmaps/fresh-rm.yaml" 20 rm
[ "$FAILS" = 0 ]
