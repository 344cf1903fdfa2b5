#!/bin/bash
# Pod fields corral-noded and corral-sched once ignored, on a real pod:
# hostAliases in /etc/hosts, envFrom keys with dots (set by corral-runas,
# since systemd-nspawn's --setenv refuses them), no systemd-nspawn messages
# in a short-lived container's log (nor its propagate folder left behind),
# and spec.schedulingGates holding a pod
# back from corral-sched until the last gate goes.
. "$(dirname "$0")/../lib/lib.sh"
SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
[ -x "$SCHED" ] || { echo "not ok - no binary at $SCHED (run make)"; exit 1; }
N=podfields-a
SPID=
final_cleanup() {
	rm -f "$M"/namespaces/pf/pods/*.yaml 2>/dev/null
	stop_real_node
	if [ -n "$SPID" ]; then
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
	fi
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$T/logs"
start_real_node "$N"
mkdir -p "$M/namespaces/pf"
P=$M/namespaces/pf/pods
podlog() { cat "$M/namespaces/pf/logs/$1/$2.log" 2>/dev/null; }
log_has() { podlog "$1" "$2" | grep -q -- "$3"; }
# refused "what" FILE MESSAGE cmd...: cmd fails, FILE is as it was (or
# absent), and .errors names FILE with MESSAGE
refused() {
	local what=$1 f=$2 msg=$3 before after
	shift 3
	before=$(cat "$f" 2>/dev/null)
	if "$@" >/dev/null 2>&1; then fail "$what (the write succeeded)"; return; fi
	after=$(cat "$f" 2>/dev/null)
	if [ "$before" != "$after" ]; then fail "$what (the object changed)"; return; fi
	check "$what" grep -qF -- "$msg" "$M/.errors"
}
check "node $N registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"

cat >"$M/namespaces/pf/configmaps/special.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: special}
data: {special.how: very, special-type: charm, plain: "yes"}
Y
cat >"$P/hosts.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: hosts}
spec:
  nodeName: $N
  restartPolicy: Never
  hostAliases:
  - ip: "127.0.0.1"
    hostnames: ["foo.local", "bar.local"]
  - ip: "10.1.2.3"
    hostnames: ["foo.remote", "bar.remote"]
  containers:
  - name: c
    image: busybox
    envFrom: [{configMapRef: {name: special}}]
    command: ["sh", "-c", "cat /etc/hosts; tr '\\\\0' '\\\\n' </proc/1/environ | sort; echo script-done"]
Y
check "a pod with hostAliases and envFrom keys with dots runs to its end" wait_for 30 log_has hosts c script-done
check "its /etc/hosts ends with the kubelet's HostAliases section" log_has hosts c "# Entries added by HostAliases."
check "each alias a line: address, then its names" log_has hosts c "$(printf '10.1.2.3\tfoo.remote\tbar.remote')"
check "the pod's own line stays" sh -c "cat '$M/namespaces/pf/logs/hosts/c.log' | grep -q '	hosts$'"
check "envFrom's special.how=very is in the environment" log_has hosts c "^special.how=very$"
check "so is special-type=charm" log_has hosts c "^special-type=charm$"
check "and the plain key" log_has hosts c "^plain=yes$"
HOSTS_UID=$(sed -n 's/^  uid: //p' "$P/hosts.yaml" | tr -d "'")
check "systemd-nspawn's propagate folder of the container is gone" sh -c "[ -n '$HOSTS_UID' ] && [ -d /run/systemd/nspawn/propagate ] && ! [ -e /run/systemd/nspawn/propagate/p$(hash8 "$HOSTS_UID")-c0-0 ]"
check "the pod Succeeded (the dotted names did not fail the container)" wait_for 15 grep -q 'phase: Succeeded' "$P/hosts.yaml"
check "no systemd-nspawn message in the container's log" sh -c "! grep -qE 'Attempted to remove|Container p[0-9a-f]{8}-' '$M/namespaces/pf/logs/hosts/c.log'"

cat >"$P/dotuser.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: dotuser}
spec:
  nodeName: $N
  restartPolicy: Never
  securityContext: {runAsUser: 1000, runAsGroup: 3000}
  containers:
  - name: c
    image: busybox
    env: [{name: my.var, value: dotted}, {name: PLAIN_VAR, value: plain}]
    command: ["sh", "-c", "id -u; tr '\\\\0' '\\\\n' </proc/1/environ | sort; echo script-done"]
Y
check "env with a dotted name and runAsUser together run" wait_for 30 log_has dotuser c script-done
check "the dotted variable is set" log_has dotuser c "^my.var=dotted$"
check "the plain one too" log_has dotuser c "^PLAIN_VAR=plain$"
check "and the user is still 1000" log_has dotuser c "^1000$"

# schedulingGates, with corral-sched
"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
SPID=$!
cat >"$P/gated.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/foo}, {name: example.com/bar}]
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: ["true"]}]
Y
check "a gated pod gets PodScheduled False, reason SchedulingGated" wait_for 15 grep -q 'reason: SchedulingGated' "$P/gated.yaml"
check "and no node" sh -c "! grep -q 'nodeName:' '$P/gated.yaml'"
refused "adding a gate to a created pod is refused" "$P/gated.yaml" \
	"only deletion is allowed, but found new scheduling gate 'example.com/baz'" \
	sed -i 's|^  - name: example.com/bar$|&\n  - name: example.com/baz|' "$P/gated.yaml"
refused "binding a gated pod is refused" "$P/gated.yaml" \
	"spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared" \
	sed -i "s|^spec:|spec:\n  nodeName: $N|" "$P/gated.yaml"
check "removing one gate is allowed" sed -i '/^  - name: example.com\/foo$/d' "$P/gated.yaml"
check "it went" sh -c "grep -q 'example.com/bar' '$P/gated.yaml' && ! grep -q 'example.com/foo' '$P/gated.yaml'"
check "the pod is still SchedulingGated, on no node" sh -c "! grep -q 'nodeName:' '$P/gated.yaml' && grep -q 'reason: SchedulingGated' '$P/gated.yaml'"
check "removing the last gate is allowed" sed -i '/^  schedulingGates:$/d; /^  - name: example.com\/bar$/d' "$P/gated.yaml"
check "corral-sched binds the pod" wait_for 15 grep -q "nodeName: $N" "$P/gated.yaml"
newpod() { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  schedulingGates: %s\n  containers: [{name: c, image: busybox}]\n' "$1" "$2" | cat >"$P/$1.yaml"; }
refused "a gate that is not a qualified name is refused at the write" "$P/bad.yaml" \
	'spec.schedulingGates[0].name: Invalid value: "-bad-"' newpod bad '[{name: -bad-}]'
refused "a duplicate gate is refused" "$P/dup.yaml" \
	'spec.schedulingGates[1]: Duplicate value: "a.b/c"' newpod dup '[{name: a.b/c}, {name: a.b/c}]'
rm -f "$P"/*.yaml
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "no agent error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log'"
[ "$FAILS" = 0 ]
