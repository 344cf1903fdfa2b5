#!/bin/bash
# lib's informer against a real corral-fs mount: list, then inotify through
# FUSE for writes, sed -i renames, deletes, an editor's backup rename, and a
# namespace made after the start.
. "$(dirname "$0")/../lib/lib.sh"
DUMP=$BUILD/tests/tools/informer-dump
[ -x "$DUMP" ] || { echo "not ok - no $DUMP (run make)"; exit 1; }
start_fs
mkdir "$M/namespaces/dev"
cat >"$T/pod.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: web, image: "nginx:1"}]
Y
cp "$T/pod.yaml" "$M/namespaces/dev/pods/web.yaml"
"$DUMP" "$M" pods >"$T/events" 2>"$T/dump.err" &
DPID=$!
trap 'kill $DPID 2>/dev/null; cleanup' EXIT
seen() { wait_for 5 grep -q "$1" "$T/events"; }
check "the informer lists what is there" seen '^add dev/web image=nginx:1'
sed -i 's/nginx:1/nginx:2/' "$M/namespaces/dev/pods/web.yaml"
check "sed -i through the mount is an update" seen '^update dev/web image=nginx:2'
sed 's/web/api/g' "$T/pod.yaml" >"$M/namespaces/dev/pods/api.yaml"
check "a new file is an add" seen '^add dev/api'
mkdir "$M/namespaces/later"
sed 's/web/late/g' "$T/pod.yaml" >"$M/namespaces/later/pods/late.yaml"
check "a namespace made after the start is followed" seen '^add later/late'
mv "$M/namespaces/dev/pods/web.yaml" "$M/namespaces/dev/pods/web.yaml~"
sed 's/nginx:2/nginx:3/' "$M/namespaces/dev/pods/web.yaml~" >"$M/namespaces/dev/pods/web.yaml"
rm "$M/namespaces/dev/pods/web.yaml~"
check "an editor's backup-rename save is an update" seen '^update dev/web image=nginx:3'
rm "$M/namespaces/dev/pods/api.yaml"
check "rm is a delete" seen '^delete dev/api'
refute "the backup-rename save was never a delete" grep -q '^delete dev/web' "$T/events"
echo junk >"$M/namespaces/dev/pods/.web.yaml.swp"
# the informer takes events in order: once it reports a pod written after
# the scratch file, it has seen the scratch file too
sed 's/web/after/g' "$T/pod.yaml" >"$M/namespaces/dev/pods/after.yaml"
check "a pod written after a scratch file is an add" seen '^add dev/after'
refute "scratch files are not objects" grep -q 'swp' "$T/events"
kill $DPID; wait $DPID 2>/dev/null
check "the informer stops cleanly on SIGTERM" test $? -lt 128
cat "$T/events" >&2
[ "$FAILS" = 0 ]
