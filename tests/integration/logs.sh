#!/bin/bash
# The read-only view of containers' output: namespaces/<ns>/logs/<pod>/<container>.log
. "$(dirname "$0")/../lib/lib.sh"
L=$T/podlogs
mkdir -p "$L"
start_fs --pod-log-dir "$L"
mkdir "$M/namespaces/dev"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: busybox}, {name: side, image: busybox}]}\n' >"$M/namespaces/dev/pods/web.yaml"
mkdir -p "$L/dev_web_0001/app" "$L/dev_web_0001/side" "$L/dev_ghost_0002/app" "$L/other_web_0003/app"
echo "line one" >"$L/dev_web_0001/app/0.log"
echo "side car" >"$L/dev_web_0001/side/0.log"
echo "ghost" >"$L/dev_ghost_0002/app/0.log"
check "a namespace has a logs folder" test -d "$M/namespaces/dev/logs"
check "a pod's containers are listed" test "$(ls "$M/namespaces/dev/logs/web" | tr '\n' ' ')" = "app.log side.log "
check "a container's output reads back" test "$(cat "$M/namespaces/dev/logs/web/app.log")" = "line one"
check "stat shows the log's size" test "$(stat -c %s "$M/namespaces/dev/logs/web/app.log")" = 9
echo "line two" >>"$L/dev_web_0001/app/0.log"
check "the log is read as it grows" grep -q "line two" "$M/namespaces/dev/logs/web/app.log"
mkdir -p "$L/dev_web_0001/app" && echo "restarted" >"$L/dev_web_0001/app/1.log"
# the kernel keeps a log's entry for a second (fs__ttl): wait for the new one
check "after a restart the newest log is shown" wait_for 5 grep -q restarted "$M/namespaces/dev/logs/web/app.log"
refute "logs of pods that do not exist are not shown" test -e "$M/namespaces/dev/logs/ghost"
refute "logs of another namespace are not shown" test -e "$M/namespaces/dev/logs/web/other"
refute "a log cannot be written" sh -c "echo x > '$M/namespaces/dev/logs/web/app.log'"
refute "a log cannot be removed" rm -f "$M/namespaces/dev/logs/web/app.log"
refute "nothing can be created in logs/" touch "$M/namespaces/dev/logs/x"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: brief}\nspec: {containers: [{name: app, image: busybox}]}\n' >"$M/namespaces/dev/pods/brief.yaml"
mkdir -p "$L/dev_brief_0004/app" && echo short >"$L/dev_brief_0004/app/0.log"
check "a second pod's log is there" grep -q short "$M/namespaces/dev/logs/brief/app.log"
rm "$M/namespaces/dev/pods/brief.yaml"
ls "$M/namespaces/dev/logs" >/dev/null
check "a deleted pod's log folder goes with it" wait_for 5 test ! -e "$M/namespaces/dev/logs/brief/app.log"
check "the filesystem still answers after that" ls "$M/namespaces/dev/logs/web"
check "rm -r of the namespace is not stopped by logs" rm -r "$M/namespaces/dev"
check "the namespace is gone" test ! -e "$M/namespaces/dev"
[ "$FAILS" = 0 ]
