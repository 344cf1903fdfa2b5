#!/bin/bash
# corral-fs end to end: real mount, real tools, real git, kill -9.
. "$(dirname "$0")/../lib/lib.sh"
start_fs
P=$M/namespaces/dev

cat >"$T/pod.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata:
  name: myweb
  labels: {name: myweb}
spec:
  containers:
  - name: myweb
    image: kubeguide/tomcat-app:v1
    ports: [{containerPort: 8080}]
Y
pod() { sed "s/name: myweb$/name: $1/; s/{name: myweb}/{name: $1}/" "$T/pod.yaml"; }

# ---- the tree ----
check "default namespaces exist" test -d "$M/namespaces/default" -a -d "$M/namespaces/kube-system"
check "cluster-scoped folders exist" test -d "$M/nodes" -a -d "$M/persistentvolumes"
check "mkdir makes a namespace" mkdir "$P"
check "a new namespace has its kind folders" test -d "$P/pods" -a -d "$P/deployments" -a -d "$P/services"
check "the namespace object is a file" grep -q '^kind: Namespace' "$M/namespaces/dev.yaml"
refute "mkdir outside namespaces/ is refused" mkdir "$M/nodes/x"
refute "a bad namespace name is refused" mkdir "$M/namespaces/Bad_Name"

# ---- write, read back normalized ----
check "cp of a valid pod" cp "$T/pod.yaml" "$P/pods/myweb.yaml"
check "read back with a uid" grep -q '^  uid: ' "$P/pods/myweb.yaml"
check "read back with a resourceVersion" grep -q "^  resourceVersion: '[0-9]*'" "$P/pods/myweb.yaml"
check "read back with a creationTimestamp" grep -q '^  creationTimestamp: ' "$P/pods/myweb.yaml"
check "read back with the namespace" grep -q '^  namespace: dev' "$P/pods/myweb.yaml"
check "defaults are filled in (restartPolicy)" grep -q 'restartPolicy: Always' "$P/pods/myweb.yaml"
uid=$(sed -n 's/^  uid: //p' "$P/pods/myweb.yaml")

# ---- sed -i, history ----
check "sed -i works" sed -i 's/tomcat-app:v1/tomcat-app:v2/' "$P/pods/myweb.yaml"
check "the edit is visible at once" grep -q 'tomcat-app:v2' "$P/pods/myweb.yaml"
check "an update keeps the uid" grep -q "uid: $uid" "$P/pods/myweb.yaml"
commits() { (cd "$M" && git log --oneline -- namespaces/dev/pods/myweb.yaml | wc -l); }
# the history is written behind the store: wait for it to reach the edit
rv=$(obj_rev "$P/pods/myweb.yaml")
wait_history 10 "$rv" || fail "the history reaches the edit's revision $rv (at $(history_rev))"
if [ "$(commits)" = 2 ]; then ok "git log in the mount: one commit per change"; else fail "git log shows $(commits) commits for the pod, want 2"; fi
check "the commit message names the field" sh -c "cd '$M' && git log -1 --format=%s -- namespaces/dev/pods/myweb.yaml | grep -q 'update pod dev/myweb: spec.containers\[0\].image'"
check "the writing user is the author" sh -c "cd '$M' && git log -1 --format=%an -- namespaces/dev/pods/myweb.yaml | grep -qx root"
check "history blobs carry no server-set fields" sh -c "cd '$M' && ! git show HEAD:namespaces/dev/pods/myweb.yaml | grep -qE 'uid:|resourceVersion:|creationTimestamp:'"
sed -i 's/\(image: .*\)/\1/' "$P/pods/myweb.yaml"
history_settle
check "a write that changes nothing declared makes no commit" test "$(commits)" = 2

# ---- rejections leave the object as it was ----
before=$(cat "$P/pods/myweb.yaml")
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n' >"$T/bad.yaml"
refute "a tab-indented document is refused" cp "$T/bad.yaml" "$P/pods/myweb.yaml"
check "the refused write left the pod as it was" test "$before" = "$(cat "$P/pods/myweb.yaml")"
check ".errors has a size that stat shows" test -s "$M/.errors"
check ".errors names the file and the line" grep -q 'namespaces/dev/pods/myweb.yaml: line 4' "$M/.errors"
sed 's/kind: Pod/kind: Service/' "$T/pod.yaml" >"$T/svc.yaml"
refute "a Service written into pods/ is refused" cp "$T/svc.yaml" "$P/pods/myweb.yaml"
check ".errors says why (kind)" grep -q 'kind: Invalid value: "Service"' "$M/.errors"
refute "a name that differs from the file name is refused" cp "$T/pod.yaml" "$P/pods/other.yaml"
check "the refused new file is not left behind" test ! -e "$P/pods/other.yaml"
printf 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n' >"$T/bomb.yaml"
refute "a YAML alias bomb is refused" cp "$T/bomb.yaml" "$P/pods/myweb.yaml"
head -c 2000000 /dev/zero | tr '\0' 'a' >"$T/big.yaml"
refute "a document over the size limit is refused" cp "$T/big.yaml" "$P/pods/myweb.yaml"
check "after all that the pod is still as it was" test "$before" = "$(cat "$P/pods/myweb.yaml")"
refute "a stale resourceVersion is a conflict" sh -c "sed 's/resourceVersion: .*/resourceVersion: \"1\"/' '$P/pods/myweb.yaml' > '$T/stale.yaml' && cp '$T/stale.yaml' '$P/pods/myweb.yaml'"
check "the conflict is reported as such" grep -q 'Conflict' "$M/.errors"
# A spec edit over a version whose status alone changed since stands (as a
# status subresource keeps them apart); a status write over it does not.
cp "$P/pods/myweb.yaml" "$T/read.yaml"
sed '/^status:/,$d' "$P/pods/myweb.yaml" >"$T/st2.yaml"; printf 'status:\n  phase: Pending\n' >>"$T/st2.yaml"
cp "$T/st2.yaml" "$P/pods/myweb.yaml"
sed 's/tomcat-app:v2/tomcat-app:v2b/' "$T/read.yaml" >"$T/edit.yaml"
check "a spec edit over a status-only change since its read stands" cp "$T/edit.yaml" "$P/pods/myweb.yaml"
check "... and the stored status is kept" grep -q 'phase: Pending' "$P/pods/myweb.yaml"
sed 's/phase: Pending/phase: Failed/' "$T/st2.yaml" >"$T/st3.yaml"
refute "a status write over a stale version is a conflict" cp "$T/st3.yaml" "$P/pods/myweb.yaml"
sed 's/tomcat-app:v2b/tomcat-app:v2c/' "$T/edit.yaml" >"$T/edit2.yaml"
refute "a spec edit over a version whose spec changed since is a conflict" cp "$T/edit2.yaml" "$P/pods/myweb.yaml"
sed -i 's/tomcat-app:v2b/tomcat-app:v2/' "$P/pods/myweb.yaml"
refute "objects cannot be renamed to another object name" mv "$P/pods/myweb.yaml" "$P/pods/other.yaml"
refute ".errors is read-only" sh -c "echo x > '$M/.errors'"
refute "a pod cannot be created in a missing namespace folder" cp "$T/pod.yaml" "$M/namespaces/nope/pods/myweb.yaml"
refute "a pod cannot be created in a kind folder that does not exist" cp "$T/pod.yaml" "$P/widgets/myweb.yaml"
refute "a path through .. is checked where it lands (a pod in services/)" cp "$T/pod.yaml" "$P/pods/../services/myweb.yaml"
refute "a name that is not a DNS subdomain is refused" sh -c "sed 's/name: myweb$/name: My_Web/' '$T/pod.yaml' > '$P/pods/My_Web.yaml'"
check "a refused name leaves no file" test ! -e "$P/pods/My_Web.yaml"

# ---- editors and tools ----
if timeout 20 vim -es -u NONE -c '%s/tomcat-app:v2/tomcat-app:v3/' -c 'wq' "$P/pods/myweb.yaml" </dev/null; then
	check "vim saves" grep -q 'tomcat-app:v3' "$P/pods/myweb.yaml"
else fail "vim saves"; fi
check "vim's save keeps the uid" grep -q "uid: $uid" "$P/pods/myweb.yaml"
# An editor's backup by rename, then the file written anew (vim, emacs).
mv "$P/pods/myweb.yaml" "$P/pods/myweb.yaml~" && sed 's/tomcat-app:v3/tomcat-app:v4/' "$P/pods/myweb.yaml~" >"$P/pods/myweb.yaml" && rm "$P/pods/myweb.yaml~"
check "save by backup-rename keeps the object (same uid)" grep -q "uid: $uid" "$P/pods/myweb.yaml"
check "... with the new content" grep -q 'tomcat-app:v4' "$P/pods/myweb.yaml"
# the history as it is once every earlier write has reached it
history_settle
base=$(git --git-dir="$S/history.git" rev-parse HEAD)
for f in 4913 .myweb.yaml.swp 'myweb.yaml~' '#myweb.yaml#' sedAbC123; do echo scratch >"$P/pods/$f"; done
check "scratch files are kept" test "$(cat "$P/pods/4913")" = scratch
check "an emacs lock symlink can be made" ln -s 'root@host.1234:0' "$P/pods/.#myweb.yaml"
rm -f "$P/pods/4913" "$P/pods/.myweb.yaml.swp" "$P/pods/myweb.yaml~" "$P/pods/#myweb.yaml#" "$P/pods/sedAbC123" "$P/pods/.#myweb.yaml"
# since then: the settle mark's commit alone, touching its file alone
history_settle
since() { git --git-dir="$S/history.git" rev-list --count "$base..HEAD"; }
changed() { git --git-dir="$S/history.git" diff --name-only "$base" HEAD; }
check "scratch files never enter the history" test "$(since) $(changed)" = "1 ${SETTLE#"$M"/}"
check "scratch files are gone after rm" test "$(ls -A "$P/pods")" = myweb.yaml
mkdir -p "$T/src"
pod web1 >"$T/src/web1.yaml"
pod web2 >"$T/src/web2.yaml"
pod web3 >"$T/src/web3.yaml"
pod web4 >"$T/src/web4.yaml"
check "tar x into a kind folder" sh -c "tar -C '$T/src' -cf - web1.yaml | tar -C '$P/pods' -xf -"
check "cp -a" cp -a "$T/src/web2.yaml" "$P/pods/"
check "rsync" rsync "$T/src/web3.yaml" "$P/pods/"
check "install" install -m 644 "$T/src/web4.yaml" "$P/pods/web4.yaml"
cp "$T/src/web1.yaml" "$T/web5.yaml" && sed -i 's/web1/web5/' "$T/web5.yaml"
check "mv from another filesystem" mv "$T/web5.yaml" "$P/pods/web5.yaml"
check "all five are objects" sh -c "for i in 1 2 3 4 5; do grep -q uid: '$P/pods/web'\$i.yaml || exit 1; done"
check "O_EXCL on an existing object fails" sh -c "set -C; ! echo x > '$P/pods/web1.yaml'"
check "chmod, chown and touch are accepted" sh -c "chmod 600 '$P/pods/web1.yaml' && chown root '$P/pods/web1.yaml' && touch '$P/pods/web1.yaml' && chmod 644 '$P/pods/web1.yaml'"
check "dd conv=fsync writes an object" sh -c "sed 's/web1/web6/' '$T/src/web1.yaml' | dd of='$P/pods/web6.yaml' conv=fsync status=none && grep -q uid: '$P/pods/web6.yaml'"
rm -f "$P/pods/web6.yaml"
check "echo >> appends to an object" sh -c "echo '# note' >> '$P/pods/web2.yaml' && grep -q uid: '$P/pods/web2.yaml'"
check "ls -l lists them" test "$(ls -l "$P/pods" | grep -c '\.yaml$')" = 6

truncate -s 0 "$P/pods/web2.yaml"
check "truncate -s 0 of an object leaves it as it was" grep -q 'name: web2' "$P/pods/web2.yaml"
check "... and stat shows its real size again" test "$(stat -c %s "$P/pods/web2.yaml")" = "$(cat "$P/pods/web2.yaml" | wc -c)"
# ftruncate(2) of a writer's handle, then a write through it: what is
# committed at close is what was written after the truncation.
sed 's/{name: web3}/{name: web3, rewrite: ftruncate}/' "$T/src/web3.yaml" >"$T/web3-label.yaml"
check "ftruncate(2) and a write through one handle rewrite an object" perl -e '
	open(my $in, "<", $ARGV[1]) or die; my $doc = do { local $/; <$in> };
	open(my $f, "+<", $ARGV[0]) or die; truncate($f, 0) or die;
	seek($f, 0, 0); print $f $doc; close($f) or die "close: $!"' \
	"$P/pods/web3.yaml" "$T/web3-label.yaml"
check "... and it reads back rewritten" grep -q 'rewrite: ftruncate' "$P/pods/web3.yaml"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fromfile\n' >"$M/namespaces/fromfile.yaml"
check "a Namespace written as a file brings its folder" test -d "$M/namespaces/fromfile/pods"
refute "the default namespace cannot be deleted" rmdir "$M/namespaces/kube-public"
check "history.git is for root only (it holds Secrets)" test "$(stat -c %a "$S/history.git")" = 700

# ---- what never enters the history ----
hist_count() { git --git-dir="$S/history.git" rev-list --count HEAD; }
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: marker0}\ndata: {a: b}\n' >"$P/configmaps/marker0.yaml"
wait_history 10 "$(obj_rev "$P/configmaps/marker0.yaml")" || fail "the history reaches marker0"
n0=$(hist_count)
sed '/^spec:/,$d' "$P/pods/web1.yaml" >"$T/st.yaml"
printf 'status:\n  phase: Running\n' >>"$T/st.yaml"
sed -n '/^spec:/,$p' "$P/pods/web1.yaml" | sed '/^status:/,$d' >>"$T/st.yaml"
check "a status write is accepted" cp "$T/st.yaml" "$P/pods/web1.yaml"
check "... and visible" grep -q 'phase: Running' "$P/pods/web1.yaml"
uid1=$(sed -n 's/^  uid: //p' "$P/pods/web1.yaml")
cat >"$T/owned.yaml" <<Y
apiVersion: v1
kind: Pod
metadata:
  name: owned
  ownerReferences: [{apiVersion: v1, kind: Pod, name: web1, uid: $uid1, controller: true}]
spec: {containers: [{name: c, image: busybox}]}
Y
check "a controller-owned object is accepted" cp "$T/owned.yaml" "$P/pods/owned.yaml"
cat >"$T/ev.yaml" <<Y
apiVersion: v1
kind: Event
metadata: {name: ev1}
involvedObject: {kind: Pod, name: web1, namespace: dev}
reason: Test
message: hello
Y
check "an Event is accepted" cp "$T/ev.yaml" "$P/events/ev1.yaml"
printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l1}\nspec: {holderIdentity: me, leaseDurationSeconds: 15}\n' >"$P/leases/l1.yaml"
check "a Lease is accepted" grep -q 'holderIdentity: me' "$P/leases/l1.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: marker}\ndata: {a: b}\n' >"$P/configmaps/marker.yaml"
wait_history 10 "$(obj_rev "$P/configmaps/marker.yaml")" || fail "the history reaches marker"
# one commit since marker0, the marker's alone (not a batch that held more)
check "status, controller-owned objects, Events and Leases make no commit" \
	test "$(hist_count) $(git --git-dir="$S/history.git" log -1 --format=%s)" = "$((n0 + 1)) create configmap dev/marker"
rm -f "$P/pods/owned.yaml" "$P/events/ev1.yaml" "$P/leases/l1.yaml"

# ---- drop boxes: checked at close, kept for corral-ctrl to file ----
cat >"$T/drop.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: one}
data: {a: "1"}
---
apiVersion: v1
kind: Service
metadata: {name: two}
spec: {selector: {app: two}, ports: [{port: 80}]}
Y
check "a valid multi-document drop box file is accepted" cp "$T/drop.yaml" "$P/"
check "... and kept for the controllers" grep -q 'name: two' "$P/drop.yaml"
check "a drop box at the top of the mount is accepted" cp "$T/drop.yaml" "$M/all.yaml"
sed 's/port: 80/port: 99999/' "$T/drop.yaml" >"$T/baddrop.yaml"
check "a drop box with a bad document is kept for its good one (dropbox.sh)" cp "$T/baddrop.yaml" "$P/baddrop.yaml"
check "... and .errors names the document" grep -q 'baddrop.yaml: document 2 (Service two' "$M/.errors"
sed 's/name: one/name: one\n  namespace: other/' "$T/drop.yaml" >"$T/nsdrop.yaml"
refute "a drop box document for another namespace is refused" cp "$T/nsdrop.yaml" "$P/nsdrop.yaml"
rm -f "$P/drop.yaml" "$M/all.yaml" "$P/baddrop.yaml"

# ---- readers see every change, other users can read ----
check "a second reader sees the stored bytes" cmp "$P/pods/web1.yaml" <(cat "$P/pods/web1.yaml")
check "another user can read (allow_other)" su nobody -s /bin/sh -c "cat '$P/pods/web1.yaml'"
refute "another user cannot write (default_permissions)" su nobody -s /bin/sh -c "cp '$T/src/web1.yaml' '$P/pods/web1.yaml'"
check "another user can read .errors" su nobody -s /bin/sh -c "cat '$M/.errors'"

# ---- readers never see a write in progress ----
exec 7>"$P/pods/creating.yaml"
refute "an object being created cannot be read before its close" cat "$P/pods/creating.yaml"
pod creating >&7
exec 7>&-
check "... and can once it is closed" grep -q 'name: creating' "$P/pods/creating.yaml"
rm -f "$P/pods/creating.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: race\nspec:\n  containers: [{name: a, image: busybox}]\n' >"$P/pods/race.yaml"
check "readers only ever see whole stored versions while writers rewrite in place" "$BUILD/tests/tools/read-race" "$P/pods/race.yaml" 3
check "... also when the versions span pages of different counts" "$BUILD/tests/tools/read-race" "$P/pods/race.yaml" 3 3
check "... also when the writers rename each version over it" "$BUILD/tests/tools/read-race" "$P/pods/race.yaml" 3 3 rename
# What an informer relies on: once a writer's close returns (IN_CLOSE_WRITE),
# another process reads that version at once, from the page cache too.
check "a read right after a close sees that version (resourceVersion only grows)" "$BUILD/tests/tools/read-fresh" "$P/configmaps/fresh.yaml" 200
# Every other change of an object's text goes the same way (fs__replace_text):
# read after the change's inotify event, from the page cache too.
check "... and right after a truncate(2) by path (IN_MODIFY)" "$BUILD/tests/tools/read-fresh" "$P/configmaps/fresh-trunc.yaml" 50 truncate
check "... and right after a rename over it (IN_MOVED_TO)" "$BUILD/tests/tools/read-fresh" "$P/configmaps/fresh-mv.yaml" 50 rename
check "... and right after an rm that leaves a namespace Terminating (IN_DELETE)" "$BUILD/tests/tools/read-fresh" "$M/namespaces/fresh-term.yaml" 10 terminate
rm -f "$P/configmaps/fresh-trunc.yaml" "$P/configmaps/fresh-mv.yaml"
"$BUILD/tests/tools/read-race" "$P/pods/race.yaml" 6 2 >"$T/race-load.log" 2>&1 &
RACE=$!
LOADERS=
for _ in 1 2; do
	(for _ in $(seq 400); do cat "$P/configmaps/fresh.yaml" "$P/pods/race.yaml" >/dev/null 2>&1; done) &
	LOADERS="$LOADERS $!"
done
check "... and so it does under load (rewrites and readers of other files)" "$BUILD/tests/tools/read-fresh" "$P/configmaps/fresh.yaml" 200
# shellcheck disable=SC2086
wait $LOADERS
check "readers under that load only saw whole versions" wait $RACE
check "no change gave up waiting for the page cache's readers" test "$(grep -c 'changing it anyway' "$T/fs.log")" = 0
rm -f "$P/pods/race.yaml" "$P/configmaps/fresh.yaml"
# A reader that keeps a file open holds a writer back for a second at most;
# then the write goes ahead, and that reader reads the new version whole.
# The wait gives up on that reader once: later writes do not wait for it.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\ndata:\n  seq: "1"\n' >"$P/configmaps/held.yaml"
gaveup=$(grep -c 'changing it anyway' "$T/fs.log")
exec 8<"$P/configmaps/held.yaml"
check "a write goes ahead while a reader keeps the file open" sh -c "printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\ndata:\n  seq: \"2\"\n  more: a longer text\n' >'$P/configmaps/held.yaml'"
check "... after saying so in the log" test "$(grep -c 'changing it anyway' "$T/fs.log")" = $((gaveup + 1))
for i in 3 4 5 6; do
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\ndata:\n  seq: "%s"\n  more: a longer text\n' "$i" >"$P/configmaps/held.yaml"
done
check "... and four more writes do not wait for that reader again" test "$(grep -c 'changing it anyway' "$T/fs.log")" = $((gaveup + 1))
check "... which all were taken" grep -q 'seq: .6' "$P/configmaps/held.yaml"
cat <&8 >"$T/held.out"
exec 8<&-
check "... and that reader reads the newest version whole" grep -q "seq: .6" "$T/held.out"
rm -f "$P/configmaps/held.yaml"

# ---- inotify ----
inotifywait -m -e close_write -e moved_to -e delete --format '%e %f' "$P/pods" >"$T/inotify.log" 2>"$T/inotify.err" &
IW=$!
wait_for 10 grep -q 'Watches established' "$T/inotify.err"
cp "$T/src/web1.yaml" "$P/pods/web1.yaml"
sed -i 's/v1/v1/' "$P/pods/web2.yaml"
rm "$P/pods/web3.yaml"
wait_for 10 grep -q 'DELETE web3.yaml' "$T/inotify.log"
kill $IW 2>/dev/null; wait $IW 2>/dev/null
check "inotify sees a write closed" grep -q 'CLOSE_WRITE,CLOSE web1.yaml' "$T/inotify.log"
check "inotify sees sed -i's rename" grep -q 'MOVED_TO web2.yaml' "$T/inotify.log"
check "inotify sees a delete" grep -q 'DELETE web3.yaml' "$T/inotify.log"

# ---- rm, rollback ----
check "rm deletes" rm "$P/pods/web4.yaml"
check "rm'd object is gone" test ! -e "$P/pods/web4.yaml"
history_settle
check "the delete is in the history" sh -c "cd '$M' && git log --format=%B | grep -q 'delete pod dev/web4'"
check "git show REV:path > path rolls back" sh -c "cd '$M' && rev=\$(git log -1 --format=%H -- namespaces/dev/pods/web4.yaml) && git show \$rev~1:namespaces/dev/pods/web4.yaml > namespaces/dev/pods/web4.yaml"
check "the rolled back object is there again" grep -q 'name: web4' "$P/pods/web4.yaml"
mkdir "$M/namespaces/gone"
cp "$T/src/web1.yaml" "$M/namespaces/gone/pods/web1.yaml"
check "rmdir of a non-empty namespace leaves it Terminating" sh -c "rmdir '$M/namespaces/gone' && grep -q 'phase: Terminating' '$M/namespaces/gone.yaml' && test -e '$M/namespaces/gone/pods/web1.yaml'"
check "rm -r deletes a namespace" rm -r "$M/namespaces/gone"
check "the namespace folder is gone" test ! -e "$M/namespaces/gone"
check "the namespace object is gone" test ! -e "$M/namespaces/gone.yaml"

# ---- kill -9 in the middle of a stream of writes ----
mkdir "$M/namespaces/burst"
(for i in $(seq 1 400); do
	sed "s/name: myweb$/name: b$i/" "$T/pod.yaml" >"$M/namespaces/burst/pods/b$i.yaml" && echo "b$i"
done) >"$T/acked" 2>/dev/null &
W=$!
# in the middle of the stream: once some writes are acknowledged
wait_for 20 sh -c "[ \$(wc -l <'$T/acked') -ge 20 ]" || fail "kill -9: a stream of writes is under way"
kill9_fs
wait $W 2>/dev/null
acked=$(wc -l <"$T/acked")
start_fs
lost=0
while read -r n; do [ -e "$M/namespaces/burst/pods/$n.yaml" ] || lost=$((lost + 1)); done <"$T/acked"
if [ "$acked" -gt 0 ] && [ "$lost" = 0 ]; then ok "kill -9: all $acked acknowledged writes survive"; else fail "kill -9: $lost of $acked acknowledged writes lost"; fi
want=$(obj_rev "$M/namespaces/burst/pods/$(tail -1 "$T/acked").yaml")
if wait_history 20 "$want"; then
	ok "kill -9: the history catches up after the restart"
else fail "kill -9: history at $(history_rev), want $want"; fi
inhist=$(git --git-dir="$S/history.git" ls-tree --name-only HEAD namespaces/burst/pods/ | wc -l)
if [ "$inhist" -ge "$acked" ]; then ok "kill -9: no acknowledged write is missing from the history"; else fail "kill -9: history holds $inhist of $acked"; fi

# ---- restart and restore ----
stop_fs
# Two loop threads instead of the default one ([fs] loop-threads).
start_fs --loop-threads 2
check "a clean restart keeps everything" grep -q 'tomcat-app:v4' "$P/pods/myweb.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: race1\nspec:\n  containers: [{name: a, image: busybox}]\n' >"$P/pods/race1.yaml"
check "with two loop threads readers too see only whole stored versions" "$BUILD/tests/tools/read-race" "$P/pods/race1.yaml" 3 3
rm -f "$P/pods/race1.yaml"
mkdir -p "$T/nomount"
timeout 10 "$FS_BIN" -f --state "$T/nostate" --loop-threads=0 "$T/nomount" >"$T/nomount.log" 2>&1
rc=$?
mountpoint -q "$T/nomount" && fusermount3 -u "$T/nomount"
check "--loop-threads=0 is refused before mounting" test "$rc" = 2
check "... naming the value without its = and the values it takes" grep -q 'loop-threads: 0 is not between 1 and 16' "$T/nomount.log"
stop_fs
mv "$S/state" "$T/state.lost"
start_fs --restore
check "--restore rebuilds the live store from the history" grep -q 'tomcat-app:v4' "$P/pods/myweb.yaml"
check "--restore brings back namespaces" test -d "$M/namespaces/burst/pods"
pod afterrestore >"$M/namespaces/dev/pods/afterrestore.yaml"
if wait_for 10 sh -c "git --git-dir='$S/history.git' log -3 --format=%B | grep -q 'create pod dev/afterrestore'"; then
	ok "a write after --restore reaches the history"
else fail "a write after --restore reaches the history"; fi
# kill -9 in the middle of a commit leaves the ref's lock file behind
stop_fs
: >"$S/history.git/refs/heads/main.lock"
start_fs
pod afterlock >"$M/namespaces/dev/pods/afterlock.yaml"
if wait_history 10 "$(obj_rev "$M/namespaces/dev/pods/afterlock.yaml")"; then
	ok "the history goes on after a writer died holding its ref's lock"
else fail "the history goes on after a writer died holding its ref's lock (at $(history_rev))"; fi

[ "$FAILS" = 0 ]
