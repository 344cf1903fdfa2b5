#!/bin/bash
# Namespaces that delete cleanly, on a real mount with corral-ctrl: the
# namespaces every cluster has are refused with Kubernetes' message; rm -r
# of a busy namespace (a Deployment whose pods fake-kubelet makes ready,
# Services and their Endpoints, ConfigMaps, Events, and a writer adding
# ConfigMaps all along) exits 0 and leaves nothing; while a namespace is
# Terminating (held by an object's finalizer) creates in it are refused
# with Kubernetes' message, updates are not, and its conditions say what
# it waits for; rmdir and rm of NAME.yaml delete a namespace too.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
FAKE=$BUILD/tests/tools/fake-kubelet
for b in "$CTRL" "$FAKE"; do
	[ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }
done
CPIDS=()
WPID=
stop_all() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	for p in "${CPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${CPIDS[@]}" $WPID; do wait "$p" 2>/dev/null; done
	CPIDS=()
	WPID=
}
trap '[ -n "${CTRL_TEST_LOGS:-}" ] && cp "$T"/*.log "$CTRL_TEST_LOGS"/; stop_all; cleanup' EXIT
start_fs
"$FAKE" --delay 50 "$M" >>"$T/fake-kubelet.log" 2>&1 &
CPIDS+=($!)
"$CTRL" --mount "$M" >>"$T/ctrl.log" 2>&1 &
CPIDS+=($!)
wait_for 10 grep -q 'leading\|started' "$T/ctrl.log"
count() { ls "$1" 2>/dev/null | grep -c '\.yaml$'; }
gone() { ! test -e "$M/namespaces/$1" && ! test -e "$M/namespaces/$1.yaml"; }
cond() { # NS TYPE: the lines of a condition of namespace NS (its keys come sorted, type last)
	awk -v t="$2" '/^  - / {b = ""} {b = b $0 "\n"} $0 ~ "^    type: " t "$" {printf "%s", b}' \
	    "$M/namespaces/$1.yaml" 2>/dev/null
}
has_cond() { cond "$1" "$2" | grep -q -- "$3"; } # NS TYPE TEXT

# ---- the namespaces every cluster has ----------------------------------------
for ns in default kube-system kube-public kube-node-lease; do
	refute "rmdir of $ns is refused" rmdir "$M/namespaces/$ns"
	refute "rm of $ns.yaml is refused" rm "$M/namespaces/$ns.yaml"
	check "... and $ns is not Terminating" sh -c "! grep -q Terminating '$M/namespaces/$ns.yaml'"
done
check ".errors says Kubernetes' message" grep -q 'namespaces "kube-node-lease" is forbidden: this namespace may not be deleted' "$M/.errors"

# ---- a busy namespace goes with rm -r ----------------------------------------
B=$M/namespaces/busy
mkdir "$B"
cat >"$B/app.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 12
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: busybox, command: [sleep, "3600"]}]
Y
for i in $(seq 6); do
	printf 'apiVersion: v1\nkind: Service\nmetadata: {name: s%s}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n' "$i" >"$B/services/s$i.yaml"
done
for i in $(seq 40); do
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%s}\ndata: {a: "1"}\n' "$i" >"$B/configmaps/c$i.yaml"
done
check "the Deployment's 12 pods are there" wait_for 30 sh -c "[ \$(ls '$B/pods' | grep -c '^web-') -ge 12 ]"
check "each Service has its Endpoints" wait_for 20 sh -c "[ \$(ls '$B/endpoints' | grep -c '^s') -eq 6 ]"
check "events are written in it" wait_for 20 sh -c "[ \$(ls '$B/events' | wc -l) -gt 0 ]"
# A writer that keeps making ConfigMaps, through and after the rm.
(i=0; while :; do i=$((i + 1)); { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w%s}\n' "$i" >"$B/configmaps/w$i.yaml"; } 2>/dev/null; done) &
WPID=$!
wait_for 10 test -e "$B/configmaps/w20.yaml"
if rm -r "$B" 2>"$T/rm.err"; then ok "rm -r of a busy namespace exits 0"; else fail "rm -r of a busy namespace exits 0: $(head -3 "$T/rm.err" | tr '\n' ' ')"; fi
check "the namespace and its folder go" wait_for 60 gone busy
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=
check "nothing of it is left" sh -c "! ls '$M/namespaces' | grep -q '^busy'"
check "the writer was refused while it was Terminating" grep -q 'configmaps "w[0-9]*" is forbidden: unable to create new content in namespace busy because it is being terminated' "$M/.errors"
history_settle
# The deletion may share a commit with the cascade's ("N changes" whose
# body lists at most 64 of them): the message line, or else HEAD's tree
# without the namespace that an earlier commit had.
ns_deleted_in_history() {
	(cd "$M" && git log --format=%B | grep -qx -e 'delete namespace busy' -e '- delete namespace busy') && return 0
	(cd "$M" && ! git ls-tree -r --name-only HEAD | grep -q '^namespaces/busy[/.]' &&
		git log --format=%H -- 'namespaces/busy*' | grep -q .)
}
check "the history has the namespace's deletion" ns_deleted_in_history
mkdir "$B"
# corral-ctrl's root-ca-cert-publisher may already have put kube-root-ca.crt
# in it: nothing else may be there.
check "a namespace made again under that name starts empty" sh -c "[ \$(ls '$B/configmaps' | grep -vcx kube-root-ca.crt.yaml) -eq 0 ]"
check "... and takes creates" sh -c "printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: again}\n' >'$B/configmaps/again.yaml'"
rm -r "$B"
wait_for 20 gone busy

# ---- Terminating: held by a finalizer ----------------------------------------
H=$M/namespaces/held
mkdir "$H"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  finalizers: [example.com/hold]\ndata: {a: "1"}\n' >"$H/configmaps/keep.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n' >"$H/configmaps/plain.yaml"
check "rm -r of a namespace whose object has a finalizer exits 0" rm -r "$H"
check "the namespace is Terminating" grep -q 'phase: Terminating' "$M/namespaces/held.yaml"
check "... with its deletionTimestamp" grep -q 'deletionTimestamp:' "$M/namespaces/held.yaml"
check "... and the kubernetes finalizer" sh -c "sed -n '/^spec:/,/^[a-z]/p' '$M/namespaces/held.yaml' | grep -q -- '- kubernetes'"
check "its folder is still there" test -d "$H/configmaps"
check "the plain ConfigMap went" wait_for 20 sh -c "! test -e '$H/configmaps/plain.yaml'"
check "the held one stays, being deleted" grep -q deletionTimestamp "$H/configmaps/keep.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n' >"$T/late.yaml"
refute "a create in a Terminating namespace is refused" cp "$T/late.yaml" "$H/configmaps/late.yaml"
check ".errors says Kubernetes' message" grep -q 'configmaps "late" is forbidden: unable to create new content in namespace held because it is being terminated' "$M/.errors"
check "an update in it is not refused" sed -i 's/a: "1"/a: "2"/; s/a: '"'"'1'"'"'/a: "2"/' "$H/configmaps/keep.yaml"
check "NamespaceContentRemaining says what is left" wait_for 20 has_cond held NamespaceContentRemaining 'Some resources are remaining: configmaps. has 1 resource instances'
check "NamespaceFinalizersRemaining names the finalizer" wait_for 20 has_cond held NamespaceFinalizersRemaining 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances'
check "NamespaceDeletionContentFailure is False" has_cond held NamespaceDeletionContentFailure "status: 'False'"
check "NamespaceDeletionDiscoveryFailure is there" has_cond held NamespaceDeletionDiscoveryFailure 'All resources successfully discovered'
sed -i '/finalizers:/d; /example.com\/hold/d' "$H/configmaps/keep.yaml"
check "its finalizer removed, the object goes" wait_for 20 sh -c "! test -e '$H/configmaps/keep.yaml'"
check "then the namespace goes" wait_for 30 gone held

# ---- rmdir, rm NAME.yaml -----------------------------------------------------
for how in rmdir rmfile; do
	N=$M/namespaces/$how
	mkdir "$N"
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n' >"$N/configmaps/c.yaml"
	if [ $how = rmdir ]; then
		check "rmdir of a namespace that holds objects exits 0" rmdir "$N"
	else
		check "rm of a namespace's file exits 0" rm "$M/namespaces/$how.yaml"
	fi
	check "... and the namespace goes, objects and all" wait_for 30 gone $how
done
[ "$FAILS" = 0 ]
