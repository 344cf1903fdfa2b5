#!/bin/bash
# corral exec (corral-exec(8)) and exec probes on a real pod: the command
# runs in the container's namespaces, root, cgroup, environment, working
# directory, user and capabilities; -i passes standard input, -t gives a
# terminal; the exit status and signals pass through; an exec probe sees
# the container's environment.
. "$(dirname "$0")/../lib/lib.sh"
EXEC=${CORRAL_EXEC_BIN:-$BUILD/corral-exec}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$EXEC" ] || { echo "not ok - no binary at $EXEC (run make)"; exit 1; }
N=exec-a
XPID=
final_cleanup() {
	[ -n "$XPID" ] && kill "$XPID" 2>/dev/null
	rm -f "$M"/namespaces/ex/pods/*.yaml 2>/dev/null
	stop_real_node
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$T/logs"
start_real_node "$N"
mkdir -p "$M/namespaces/ex"
P=$M/namespaces/ex/pods
check "node $N registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"
cx() { "$ROOT/tools/corral" exec --mount "$M" --state "$NSTATE" -n ex "$@"; }

cat >"$P/app.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  nodeName: $N
  terminationGracePeriodSeconds: 1
  securityContext: {runAsUser: 1000, runAsGroup: 3000}
  containers:
  - name: main
    image: busybox
    workingDir: /tmp
    env: [{name: GREETING, value: hello-from-env}, {name: PROBEVAR, value: "yes"}]
    command: ["sleep", "3600"]
    readinessProbe:
      exec: {command: ["sh", "-c", "test \"\$PROBEVAR\" = yes"]}
      periodSeconds: 1
  - name: side
    image: busybox
    securityContext: {runAsUser: 0, runAsGroup: 0}
    command: ["sleep", "3601"]
Y
ready() { grep -q "containerStatuses" "$P/app.yaml" && [ "$(grep -c 'ready: true' "$P/app.yaml")" -ge 2 ]; }
check "a pod with two containers runs" wait_for 30 grep -q 'phase: Running' "$P/app.yaml"
check "its exec readiness probe, which tests the container's own variable, passes" wait_for 30 ready

out() { [ "$(cx "${@:2}" 2>/dev/null)" = "$1" ]; }
check "exec runs in the pod's UTS namespace: hostname is the pod's" out app app -- hostname
check "in the first container by default" out "sleep 3600" app -- sh -c 'tr "\0" " " </proc/1/cmdline | sed "s/ \$//"'
check "-c names another container (its pid 1 is its own)" out "sleep 3601" app -c side -- sh -c 'tr "\0" " " </proc/1/cmdline | sed "s/ \$//"'
check "with the container's environment" out hello-from-env app -- sh -c 'echo $GREETING'
check "its working directory" out /tmp app -- pwd
check "its user and group" out "1000 3000" app -- sh -c 'echo $(id -u) $(id -g)'
check "and no capabilities (a non-root user)" out 0000000000000000 app -- sh -c 'sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status'
check "the side container (root) keeps the default set, without NET_RAW" out 00000000a80405fb app -c side -- sh -c 'sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status'
check "its cgroup is the container's" out same app -- sh -c '[ "$(cat /proc/self/cgroup)" = "$(cat /proc/1/cgroup)" ] && echo same'
check "its root is the container's (the image's busybox, not the host's /etc/os-release)" out none app -- sh -c 'test -e /etc/debian_version && echo host || echo none'
check "the exit status passes through" sh -c "cx() { \"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex \"\$@\"; }; cx app -- sh -c 'exit 3' 2>/dev/null; [ \$? = 3 ]"
check "with kubectl's message" sh -c "\"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex app -- sh -c 'exit 3' 2>&1 | grep -q 'command terminated with exit code 3'"
check "a command that does not exist: 127 and why" sh -c "\"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex app -- no-such-cmd 2>&1 | grep -q 'executable file not found in \$PATH'; \"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex app -- no-such-cmd 2>/dev/null; [ \$? = 127 ]"
check "-i passes standard input" sh -c "[ \"\$(echo piped | \"$ROOT/tools/corral\" exec -i --mount '$M' --state '$NSTATE' -n ex app -- cat)\" = piped ]"
check "without -i the command reads nothing" sh -c "[ -z \"\$(echo piped | \"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex app -- cat)\" ]"
check "-t gives it a terminal" sh -c "\"$ROOT/tools/corral\" exec -t --mount '$M' --state '$NSTATE' -n ex app -- sh -c 'test -t 0 && test -t 1 && echo on-a-tty' </dev/null | tr -d '\r' | grep -qx on-a-tty"
check "without -t none" out no-tty app -- sh -c 'test -t 1 && echo tty || echo no-tty'
check "-it: input through the terminal, output back" sh -c "printf 'echo typed-\$((40+2))\nexit\n' | \"$ROOT/tools/corral\" exec -i -t --mount '$M' --state '$NSTATE' -n ex app -- sh | tr -d '\r' | grep -qx typed-42"
check "an unknown container is refused with kubectl's words" sh -c "\"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex app -c nope -- true 2>&1 | grep -q 'container nope is not valid for pod app'"
check "an unknown pod too" sh -c "\"$ROOT/tools/corral\" exec --mount '$M' --state '$NSTATE' -n ex nopod -- true 2>&1 | grep -q 'pods \"nopod\" not found'"

# A signal to corral exec reaches the command, and the command goes.
check_term_ends_exec 4242 "$ROOT/tools/corral" exec --mount "$M" --state "$NSTATE" -n ex app -- sleep 4242
"$ROOT/tools/corral" exec --mount "$M" --state "$NSTATE" -n ex app -- sleep 4343 >/dev/null 2>&1 &
XPID=$!
check "SIGKILL to corral exec (it cannot pass that on):" wait_for 15 pgrep -f -x "sleep 4343"
kill -KILL "$XPID"
wait "$XPID" 2>/dev/null
XPID=
check "the command goes with it" wait_for 10 sh -c "! pgrep -f -x 'sleep 4343'"

rm -f "$P"/*.yaml
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "no agent error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log'"
[ "$FAILS" = 0 ]
