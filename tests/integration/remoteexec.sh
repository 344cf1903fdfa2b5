#!/bin/bash
# corral exec of a pod whose node is on another host, on loopback: a real
# corral-noded serves exec on its serve port (mutual TLS with a CA this
# test makes); corral exec, told a state folder that holds no node (as on
# another machine), reaches the pod through it. Standard output, standard
# error, the exit status and standard input (-i) pass; -t gives a
# terminal; a client without a certificate of the CA is refused; a path
# out of the names is refused; a node that does not answer gives an error
# within the time-out, not a hang; a client that leaves ends its command.
. "$(dirname "$0")/../lib/lib.sh"
EXEC=${CORRAL_EXEC_BIN:-$BUILD/corral-exec}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$EXEC" ] || { echo "not ok - no binary at $EXEC (run make)"; exit 1; }
command -v curl >/dev/null || { echo "not ok - curl is missing"; exit 1; }
command -v python3 >/dev/null || { echo "not ok - python3 is missing (the silent node)"; exit 1; }
N=rexec-a
XPID= SPID=
final_cleanup() {
	[ -n "$XPID" ] && kill "$XPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	rm -f "$M"/namespaces/rx/pods/*.yaml 2>/dev/null
	stop_real_node
	cleanup
}
trap final_cleanup EXIT
P=$T/pki
make_test_pki "$P" || { echo "not ok - openssl cannot make the test's certificates"; exit 1; }
PORT=$(free_port) || { echo "not ok - no free loopback port"; exit 1; }
start_fs --pod-log-dir "$T/logs"
start_real_node "$N" "node-ip = 127.0.0.1" "serve-port = $PORT" "serve-address = 127.0.0.1" \
	"tls-cert-file = $P/node.crt" "tls-private-key-file = $P/node.key" "client-ca-file = $P/ca.crt"
mkdir -p "$M/namespaces/rx" "$T/elsewhere"
PODS=$M/namespaces/rx/pods
check "node $N registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"
check "the node reports where it serves" grep -q "Port: $PORT" "$M/nodes/$N.yaml"
# a state folder without the node: the pod's node is "on another machine"
CX=("$ROOT/tools/corral" exec --mount "$M" --state "$T/elsewhere" --ca-file "$P/ca.crt"
	--client-cert "$P/client.crt" --client-key "$P/client.key" -n rx)
cx() { "${CX[@]}" "$@"; }

cat >"$PODS/app.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  nodeName: $N
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    workingDir: /tmp
    env: [{name: GREETING, value: hello-from-env}]
    command: ["sleep", "3600"]
  - name: side
    image: busybox
    command: ["sleep", "3601"]
Y
ready() { grep -q "containerStatuses" "$PODS/app.yaml" && [ "$(grep -c 'ready: true' "$PODS/app.yaml")" -ge 2 ]; }
check "a pod with two containers runs" wait_for 30 grep -q 'phase: Running' "$PODS/app.yaml"
check "both are ready" wait_for 30 ready

out() { [ "$(cx "${@:2}" 2>"$T/err")" = "$1" ]; }
check "exec runs remotely in the pod: hostname is the pod's" out app app -- hostname
check "it went through the node's server, not the local state" grep -q "exec in rx/app/main: hostname" "$T/noded.log"
check "in the container's environment and working directory" out "hello-from-env /tmp" app -- sh -c 'echo $GREETING $(pwd)'
check "-c names another container" out "sleep 3601" app -c side -- sh -c 'tr "\0" " " </proc/1/cmdline | sed "s/ \$//"'
check "arguments with spaces, quotes and & pass whole" out "a b&c=d 'e'" app -- echo "a b&c=d 'e'"
cx app -- sh -c 'echo to-out; echo to-err >&2' >"$T/o" 2>"$T/e"
check "standard output reaches standard output" test "$(cat "$T/o")" = to-out
check "standard error reaches standard error" test "$(cat "$T/e")" = to-err
cx app -- sh -c 'exit 3' >/dev/null 2>"$T/e"
RC=$?
check "the exit status passes through" test "$RC" = 3
check "with kubectl's message" grep -q 'command terminated with exit code 3' "$T/e"
cx app -- sh -c 'kill -TERM $$' >/dev/null 2>&1
RC=$?
check "a command ended by a signal: 128 + the signal" test "$RC" = 143
cx app -- no-such-cmd >/dev/null 2>"$T/e"
RC=$?
check "a command that does not exist: 127" test "$RC" = 127
check "and why" grep -q 'executable file not found in \$PATH' "$T/e"
check "-i passes standard input" sh -c "[ \"\$(echo piped | $(printf '%q ' "${CX[@]}") -i app -- cat)\" = piped ]"
check "without -i the command reads nothing" sh -c "[ -z \"\$(echo piped | $(printf '%q ' "${CX[@]}") app -- cat)\" ]"
head -c 300000 /dev/urandom >"$T/big"
cx -i app -- cat <"$T/big" >"$T/big.back" 2>/dev/null
check "300 kB of input come back whole through cat" cmp -s "$T/big" "$T/big.back"
check "large output comes whole" test "$(cx app -- sh -c 'head -c 1000000 /dev/zero' 2>/dev/null | wc -c)" = 1000000
check "-t gives the command a terminal" sh -c "$(printf '%q ' "${CX[@]}") -t app -- sh -c 'test -t 0 && test -t 1 && echo on-a-tty' </dev/null | tr -d '\r' | grep -qx on-a-tty"
check "without -t none" out no-tty app -- sh -c 'test -t 1 && echo tty || echo no-tty'
check "-it: input through the terminal, output back" sh -c "printf 'echo typed-\$((40+2))\nexit\n' | $(printf '%q ' "${CX[@]}") -i -t app -- sh | tr -d '\r' | grep -qx typed-42"
check "-t on our terminal: its size reaches the command" sh -c "script -qec \"stty cols 91 rows 33; $(printf '%q ' "${CX[@]}") -t app -- stty size\" /dev/null </dev/null | tr -d '\r' | grep -qx '33 91'"
cx app -c nope -- true >/dev/null 2>"$T/e"
check "an unknown container is refused with kubectl's words" grep -q 'container nope is not valid for pod app' "$T/e"

# the server itself
URL="https://127.0.0.1:$PORT/exec/rx/app/main?command=hostname&stdout=1"
code() { curl -s -o "$T/body" -w '%{http_code}' --cacert "$P/ca.crt" "$@"; }
mine() { code --cert "$P/client.crt" --key "$P/client.key" "$@"; }
check "no client certificate: 401" test "$(code -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "$URL")" = 401
check "a certificate of another CA is refused" \
	sh -c "c=\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$P/ca.crt' --cert '$P/stranger.crt' --key '$P/stranger.key' -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' '$URL'); [ \"\$c\" != 101 ] && [ \"\$c\" != 200 ]"
cx --client-cert "$P/stranger.crt" --client-key "$P/stranger.key" app -- hostname >"$T/o" 2>"$T/e"
RC=$?
check "corral exec with a stranger's certificate fails" test "$RC" = 1 -a ! -s "$T/o"
check "and says the node does not take it" grep -q 'unable to upgrade connection' "$T/e"
cx --client-cert "$T/none.crt" app -- hostname >/dev/null 2>"$T/e"
RC=$?
check "corral exec without a certificate fails" test "$RC" = 1
check "and names the missing file" grep -q "client certificate of the cluster: $T/none.crt" "$T/e"
check "an exec without an upgrade: 400" test "$(mine "$URL")" = 400
check "an escaped .. is refused" \
	test "$(mine -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "https://127.0.0.1:$PORT/exec/rx/%2e%2e/app/main?command=id")" = 400
check "a name with a slash inside is refused" \
	test "$(mine -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "https://127.0.0.1:$PORT/exec/rx/app%2f..%2f..%2fx/main?command=id")" = 400
check "a path with .. is refused" \
	test "$(mine --path-as-is -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "https://127.0.0.1:$PORT/exec/rx/app/../../../main?command=id")" = 400
check "an exec without a command: 400" \
	test "$(mine -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "https://127.0.0.1:$PORT/exec/rx/app/main")" = 400
check "an unknown pod on the node: 404" \
	test "$(mine -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "https://127.0.0.1:$PORT/exec/rx/nopod/main?command=id")" = 404
check "an unknown container: 404" \
	test "$(mine -H 'Connection: Upgrade' -H 'Upgrade: corral.exec.v1' "https://127.0.0.1:$PORT/exec/rx/app/nope?command=id")" = 404
check "the logs are still served" test "$(mine "https://127.0.0.1:$PORT/containerLogs/rx/app/main")" = 200

# A client that leaves ends its command.
check_term_ends_exec 4545 "${CX[@]}" app -- sleep 4545

# Nodes that do not answer: an error, not a hang.
node_at() { # NAME PORT
	printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nstatus:\n  addresses: [{type: InternalIP, address: 127.0.0.1}]\n  daemonEndpoints: {kubeletEndpoint: {Port: %s}}\n' \
		"$1" "$2" >"$M/nodes/$1.yaml"
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: on-%s}\nspec: {nodeName: %s, containers: [{name: app, image: busybox}]}\n' \
		"$1" "$1" >"$PODS/on-$1.yaml"
}
DEAD=$(free_port) || { echo "not ok - no free loopback port"; exit 1; }
node_at gone "$DEAD"
timeout 30 "${CX[@]}" on-gone -- true >/dev/null 2>"$T/e"
RC=$?
check "a node nothing listens for: an error at once" test "$RC" = 1
check "that says it cannot reach the node" grep -q 'cannot reach node gone' "$T/e"
SILENT=$(free_port) || { echo "not ok - no free loopback port"; exit 1; }
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); time.sleep(300)' "$SILENT" &
SPID=$!
check "a silent node listens" wait_for 10 sh -c "ss -Hltn 'sport = :$SILENT' | grep -q ."
node_at silent "$SILENT"
START=$SECONDS
timeout 30 "${CX[@]}" --connect-timeout 2 on-silent -- true >/dev/null 2>"$T/e"
RC=$?
check "a node that takes the connection and never answers: an error, not a hang" test "$RC" = 1
check "within the time-out" test $((SECONDS - START)) -le 10
check "that says so" grep -q 'node silent (https://127.0.0.1:[0-9]*) does not answer: nothing within 2000 ms' "$T/e"
kill "$SPID"
wait "$SPID" 2>/dev/null
SPID=

rm -f "$PODS"/*.yaml
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "no agent error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log'"
[ "$FAILS" = 0 ]
