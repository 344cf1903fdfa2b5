#!/bin/bash
# A pod's securityContext on real pods (corral-noded(8), SECURITY
# CONTEXTS): no CAP_NET_RAW by default and no raw socket, capabilities
# added and dropped, runAsUser/runAsGroup/supplementalGroups, runAsNonRoot
# refused with the kubelet's reason, readOnlyRootFilesystem,
# allowPrivilegeEscalation: false as no_new_privs; privileged and unknown
# capabilities refused at the write.
. "$(dirname "$0")/../lib/lib.sh"
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$NODED" ] || { echo "not ok - no corral-noded binary at $NODED (run make)"; exit 1; }
command -v systemd-nspawn >/dev/null || { echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
N=secctx-a
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate
mkdir -p "$LOGS"
NPID=
final_cleanup() {
	rm -f "$M"/namespaces/sx/pods/*.yaml 2>/dev/null
	[ -n "$NPID" ] && wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
	if [ -n "$NPID" ]; then
		kill "$NPID" 2>/dev/null
		wait "$NPID" 2>/dev/null
	fi
	node_net_cleanup "$NSTATE" "$N"
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$LOGS"
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\n' "$NSTATE" "$IMAGES" "$LOGS" >"$T/noded.conf"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >/dev/null 2>&1 ||
	{ echo "not ok - corral image build-busybox failed"; exit 1; }
"$NODED" --mount "$M" --name "$N" --config "$T/noded.conf" --heartbeat-period 1s \
	--cleanup-on-exit >>"$T/noded.log" 2>&1 &
NPID=$!
mkdir -p "$M/namespaces/sx"
P=$M/namespaces/sx/pods
pod() { echo "$P/$1.yaml"; }
podlog() { cat "$M/namespaces/sx/logs/$1/$2.log" 2>/dev/null; }
log_has() { podlog "$1" "$2" | grep -q -- "$3"; }
check "node $N registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"

# mkpod NAME POD-SECURITY-CONTEXT CONTAINER-SECURITY-CONTEXT SCRIPT
mkpod() {
	cat >"$(pod "$1")" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $N
  terminationGracePeriodSeconds: 1
  securityContext: $2
  restartPolicy: Never
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - name: c
    image: busybox
    securityContext: $3
    volumeMounts: [{name: scratch, mountPath: /scratch}]
    command: ["sh", "-c"]
    args:
    - |
$(printf '%s\n' "$4" | sed 's/^/      /')
      echo script-done
Y
}
# What every container prints: its capability sets, no_new_privs, ids, and
# whether a raw socket opens (ping from busybox needs one: the netns's
# ping_group_range allows no ICMP datagram socket).
PROBE='eff=$(sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status)
echo "capeff $eff netraw $(( (0x$eff >> 13) & 1 ))"
echo "nnp $(sed -n "s/^NoNewPrivs:[[:space:]]*//p" /proc/self/status)"
echo "ids $(id -u) $(id -g) groups $(id -G)"
if ping -c 1 -W 2 127.0.0.1 >/dev/null 2>&1; then echo raw-socket-ok; else echo raw-socket-refused; fi
if touch /root-write 2>/dev/null; then echo root-writable; else echo root-read-only; fi
if touch /scratch/x 2>/dev/null; then echo volume-writable; fi'
done_pod() { log_has "$1" c script-done; }
# ran_with POD LINE: POD's script has run to its end, and printed LINE
ran_with() { done_pod "$1" && log_has "$1" c "$2"; }

mkpod plain '{}' '{}' "$PROBE"
check "a pod without a securityContext runs" wait_for 30 done_pod plain
check "by default it lacks CAP_NET_RAW (bit 13 of CapEff)" log_has plain c "netraw 0"
check "and keeps containerd's default set without it (CapEff 00000000a80405fb)" log_has plain c "capeff 00000000a80405fb "
check "a raw socket fails" log_has plain c raw-socket-refused
check "it runs as root, no_new_privs unset, its root writable" sh -c "podlog() { cat '$M/namespaces/sx/logs/plain/c.log'; }; podlog | grep -q '^ids 0 0' && podlog | grep -q '^nnp 0' && podlog | grep -q root-writable"

mkpod netraw '{}' '{capabilities: {add: [NET_RAW]}}' "$PROBE"
check "capabilities.add [NET_RAW]: the container has it" wait_for 30 ran_with netraw "netraw 1"
check "and a raw socket works" log_has netraw c raw-socket-ok

mkpod only '{}' '{capabilities: {drop: [ALL], add: [cap_kill, CHOWN]}}' "$PROBE"
check "drop [ALL], add [cap_kill, CHOWN] (any case, with or without CAP_): exactly those" wait_for 30 ran_with only "capeff 0000000000000021 "

mkpod dropone '{}' '{capabilities: {add: [ALL], drop: [CAP_NET_RAW]}}' "$PROBE"
# ALL is every capability the agent itself may hand on (its bounding set)
BND=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
WANT=$(printf '%016x' $((0x$BND & ~(1 << 13))))
check "add [ALL], drop [CAP_NET_RAW]: every capability but NET_RAW ($WANT)" wait_for 30 ran_with dropone "capeff $WANT "

mkpod user '{runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [4000, 4001]}' '{}' "$PROBE"
check "runAsUser 1000, runAsGroup 3000, supplementalGroups of the pod: id shows them" wait_for 30 ran_with user "ids 1000 3000 groups 3000 4000 4001"
check "a non-root user has no effective capabilities" log_has user c "capeff 0000000000000000 "
check "and cannot open a raw socket" log_has user c raw-socket-refused

mkpod override '{runAsUser: 1000, runAsGroup: 3000}' '{runAsUser: 2000, runAsNonRoot: true}' "$PROBE"
check "the container's runAsUser overrides the pod's" wait_for 30 ran_with override "ids 2000 3000"

mkpod rootgroup '{}' '{runAsGroup: 5000}' "$PROBE"
check "runAsGroup alone: root with that group, and its capabilities" wait_for 30 ran_with rootgroup "ids 0 5000"
check "(the default set)" log_has rootgroup c "capeff 00000000a80405fb "

mkpod ro '{}' '{readOnlyRootFilesystem: true}' "$PROBE"
check "readOnlyRootFilesystem: a write to / fails" wait_for 30 ran_with ro root-read-only
check "while a volume stays writable" log_has ro c volume-writable

mkpod nnp '{}' '{allowPrivilegeEscalation: false}' "$PROBE"
check "allowPrivilegeEscalation: false sets no_new_privs" wait_for 30 ran_with nnp "nnp 1"

waiting_has() { grep -q "$2" "$(pod "$1")"; }
mkpod nonroot '{runAsNonRoot: true}' '{}' "$PROBE"
check "runAsNonRoot with the image's root: refused, CreateContainerConfigError" wait_for 30 waiting_has nonroot 'reason: CreateContainerConfigError'
check "with the kubelet's message" waiting_has nonroot 'container has runAsNonRoot and image will run as root (pod: "nonroot_sx('
refute "and nothing of it ran" log_has nonroot c script-done
mkpod nonroot0 '{}' '{runAsNonRoot: true, runAsUser: 0}' "$PROBE"
check "runAsNonRoot with runAsUser 0: refused with the kubelet's message" wait_for 30 waiting_has nonroot0 'runAsUser breaks non-root policy (pod: "nonroot0_sx('

refused() { # NAME CONTAINER-SECURITY-CONTEXT: the write fails, nothing is stored
	mkpod "$1" '{}' "$2" "true" 2>/dev/null
	local rc=$?
	[ "$rc" != 0 ] && [ ! -e "$(pod "$1")" ]
}
check "privileged: true is refused at the write" refused priv '{privileged: true}'
check "with a reason in .errors" grep -q 'securityContext.privileged: Forbidden: privileged containers are not supported' "$M/.errors"
check "an unknown capability is refused at the write" refused badcap '{capabilities: {add: [NET_FOO]}}'
check "naming it in .errors" grep -q 'capabilities.add\[0\]: Invalid value: "NET_FOO"' "$M/.errors"
check "allowPrivilegeEscalation false with CAP_SYS_ADMIN is refused, as Kubernetes does" refused esc '{allowPrivilegeEscalation: false, capabilities: {add: [SYS_ADMIN]}}'
check "a negative runAsUser is refused" refused neg '{runAsUser: -1}'

dump_pods() { # what the pods said, when a check failed
	local f
	[ "$FAILS" != 0 ] || return 0
	for f in "$P"/*.yaml; do
		[ -e "$f" ] || continue
		echo "# $f:"
		grep -A4 -e 'waiting:' "$f"
		cat "$M/namespaces/sx/logs/$(basename "$f" .yaml)/c.log"
	done >&2 2>/dev/null
}
dump_pods
rm -f "$P"/*.yaml
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "no agent error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log'"
[ "$FAILS" = 0 ]
