#!/bin/bash
# Logs of a pod on another host, on loopback: a hollow corral-noded serves
# its node's pod-log-dir over HTTPS (mutual TLS with a CA this test makes);
# corral-fs, whose own pod-log-dir is another folder, reads the pod's log
# through it. A client without a certificate of the CA is refused, a path
# out of the log folder is refused, a node that does not answer gives an
# error, not a hang.
. "$(dirname "$0")/../lib/lib.sh"
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
[ -x "$NODED" ] || { echo "not ok - no corral-noded binary at $NODED (run make)"; exit 1; }
command -v openssl >/dev/null || { echo "not ok - openssl is missing"; exit 1; }
command -v curl >/dev/null || { echo "not ok - curl is missing"; exit 1; }
NPID=
trap '[ -n "$NPID" ] && kill "$NPID" 2>/dev/null; [ -n "$NPID" ] && wait "$NPID" 2>/dev/null; cleanup' EXIT

# The PKI: the cluster CA, the node's server certificate (for 127.0.0.1),
# corral-fs's client certificate, and a stranger's CA and certificate.
P=$T/pki
make_test_pki "$P" || { echo "not ok - openssl cannot make the test's certificates"; exit 1; }

FSLOGS=$T/fslogs NLOGS=$T/nodelogs
mkdir -p "$FSLOGS" "$NLOGS"
start_fs --pod-log-dir "$FSLOGS" --ca-file "$P/ca.crt" --client-cert "$P/client.crt" --client-key "$P/client.key"
PORT=$(free_port) || { echo "not ok - no free loopback port"; exit 1; }
cat >"$T/noded.conf" <<C
[noded]
node-ip = 127.0.0.1
pod-log-dir = $NLOGS
serve-port = $PORT
tls-cert-file = $P/node.crt
tls-private-key-file = $P/node.key
client-ca-file = $P/ca.crt
C
"$NODED" --mount "$M" --name far --hollow --heartbeat-period 1s --config "$T/noded.conf" >>"$T/far.log" 2>&1 &
NPID=$!
check "the node registers" wait_for 10 test -f "$M/nodes/far.yaml"
check "the node reports where it serves" wait_for 10 grep -q "Port: $PORT" "$M/nodes/far.yaml"
check "the node reports its InternalIP" grep -q "address: 127.0.0.1" "$M/nodes/far.yaml"

mkdir "$M/namespaces/dev"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {nodeName: far, containers: [{name: app, image: busybox}]}\n' \
	>"$M/namespaces/dev/pods/web.yaml"
running() { grep -q "running:" "$M/namespaces/dev/pods/web.yaml"; }
check "the hollow node runs the pod" wait_for 20 running
UID_=$(sed -n 's/^  uid: //p' "$M/namespaces/dev/pods/web.yaml" | tr -d "'")
mkdir -p "$NLOGS/dev_web_$UID_/app"
printf 'hello from far\nsecond line\n' >"$NLOGS/dev_web_$UID_/app/0.log"
LOG=$M/namespaces/dev/logs/web/app.log

refute "the log is not on corral-fs's own disk" test -e "$FSLOGS/dev_web_$UID_"
check "the remote pod is listed under logs/" wait_for 10 test -d "$M/namespaces/dev/logs/web"
check "its container is listed" test "$(ls "$M/namespaces/dev/logs/web")" = app.log
check "the remote log reads back through the mount" test "$(cat "$LOG")" = "$(printf 'hello from far\nsecond line')"
check "stat shows the remote log's size" test "$(stat -c %s "$LOG")" = 27
check "tail reads its end" test "$(tail -n 1 "$LOG")" = "second line"
check "a read from an offset gets the rest" test "$(tail -c +7 "$LOG" | head -1)" = "from far"
echo "third line" >>"$NLOGS/dev_web_$UID_/app/0.log"
check "the log is read as it grows" wait_for 5 grep -q "third line" "$LOG"
head -c 300000 /dev/zero | tr '\0' x >>"$NLOGS/dev_web_$UID_/app/0.log"
check "a log larger than one read comes whole" test "$(cat "$LOG" | wc -c)" = 300038
refute "a remote log cannot be written" sh -c "echo x > '$LOG'"

# the server itself
URL=https://127.0.0.1:$PORT/containerLogs/dev/web/app
check "curl with the client certificate reads the log" \
	sh -c "curl -sf --cacert '$P/ca.crt' --cert '$P/client.crt' --key '$P/client.key' '$URL' | head -1 | grep -qx 'hello from far'"
code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$P/ca.crt" "$@"; }
check "no client certificate: 401" test "$(code "$URL")" = 401
check "a certificate of another CA is refused" \
	sh -c "c=\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$P/ca.crt' --cert '$P/stranger.crt' --key '$P/stranger.key' '$URL'); [ \"\$c\" != 200 ]"
mine() { code --cert "$P/client.crt" --key "$P/client.key" "$@"; }
check "a range request gets part of the log" test "$(mine -r 6-9 "$URL")" = 206
check "a missing container: 404" test "$(mine "https://127.0.0.1:$PORT/containerLogs/dev/web/nope")" = 404
check "a path with .. is refused" \
	test "$(mine --path-as-is "https://127.0.0.1:$PORT/containerLogs/dev/web/../../../../etc/passwd")" = 400
check "an escaped .. is refused" \
	test "$(mine "https://127.0.0.1:$PORT/containerLogs/dev/%2e%2e/web/app")" = 400
check "a name with a slash inside is refused" \
	test "$(mine "https://127.0.0.1:$PORT/containerLogs/dev/web%2f..%2f..%2fx/app")" = 400
check "anything but /containerLogs/ is not found" test "$(mine "https://127.0.0.1:$PORT/etc/passwd")" = 404
# a link to a folder laid out as a pod's logs, outside the log folder
mkdir -p "$T/outside/app" && echo 'outside the log folder' >"$T/outside/app/0.log"
ln -s "$T/outside" "$NLOGS/dev_evil_1"
check "a symbolic link in the log folder is not followed" \
	test "$(mine "https://127.0.0.1:$PORT/containerLogs/dev/evil/app")" = 404
check "a followed log streams what it gains" \
	sh -c "(sleep 1; echo 'followed line' >>'$NLOGS/dev_web_$UID_/app/0.log') & timeout 10 curl -sN --cacert '$P/ca.crt' --cert '$P/client.crt' --key '$P/client.key' '$URL?follow=true' | grep -q -m1 'followed line'"

# a node that does not answer: an error, not a hang
DEAD=$(free_port) || { echo "not ok - no free loopback port"; exit 1; }
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: gone}\nstatus:\n  addresses: [{type: InternalIP, address: 127.0.0.1}]\n  daemonEndpoints: {kubeletEndpoint: {Port: %s}}\n' \
	"$DEAD" >"$M/nodes/gone.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: lost}\nspec: {nodeName: gone, containers: [{name: app, image: busybox}]}\nstatus:\n  phase: Running\n  containerStatuses: [{name: app, ready: true, restartCount: 0, image: busybox, imageID: "", state: {running: {startedAt: "2026-01-01T00:00:00Z"}}}]\n' \
	>"$M/namespaces/dev/pods/lost.yaml"
check "the pod of a silent node is listed" wait_for 10 test -e "$M/namespaces/dev/logs/lost/app.log"
timeout 30 cat "$M/namespaces/dev/logs/lost/app.log" >"$T/lost.out" 2>&1
RC=$?
check "reading it fails with an error, not a timeout" test "$RC" != 0 -a "$RC" != 124
check "the error is EIO" grep -q "Input/output error" "$T/lost.out"
check "the mount still answers" test "$(cat "$LOG" | head -1)" = "hello from far"

kill "$NPID"
wait "$NPID"
NRC=$?
NPID=
check "the node agent stops cleanly" test "$NRC" = 0
timeout 30 cat "$LOG" >/dev/null 2>&1
RC=$?
check "a stopped node's log gives an error, not a hang" test "$RC" != 0 -a "$RC" != 124
[ "$FAILS" = 0 ]
