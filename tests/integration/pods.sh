#!/bin/bash
# corral-noded's real runtime against a real mount: pods run as a
# corral-pause and systemd-nspawn containers on the node's bridge; commands,
# environment, volumes, logs, restarts and back-off, probes, limits and OOM,
# bad input, two nodes reaching each other, adoption after kill -9, and
# nothing of a deleted pod left on the host.
. "$(dirname "$0")/../lib/lib.sh"
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$NODED" ] || { echo "not ok - no corral-noded binary at $NODED (run make)"; exit 1; }
command -v systemd-nspawn >/dev/null || { echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
NA=podtest-a NB=podtest-b NC=podtest-c
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate
mkdir -p "$LOGS"
declare -A NPID
start_node() { # NAME [CONFIG]
	"$NODED" --mount "$M" --name "$1" --config "${2:-$T/noded.conf}" --heartbeat-period 1s \
		--cleanup-on-exit >>"$T/$1.log" 2>&1 &
	NPID[$1]=$!
}
stop_node() { # NAME [SIGNAL]
	local p=${NPID[$1]:-}
	[ -n "$p" ] || return 0
	kill -"${2:-TERM}" "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	NPID[$1]=
}
final_cleanup() {
	local n
	for n in "$NA" "$NB" "$NC"; do stop_node "$n"; done
	if [ "$FAILS" != 0 ] && [ -n "${CORRAL_TEST_KEEP:-}" ]; then
		mkdir -p "$CORRAL_TEST_KEEP" && cp -r "$T"/*.log "$M/namespaces/dev/pods" "$CORRAL_TEST_KEEP/" 2>/dev/null
	fi
	# an agent that died cannot clean up: do it for it, by name
	node_net_cleanup "$NSTATE" "$NA" "$NB" "$NC"
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$LOGS"
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\neviction-memory-available = 1Mi\n' \
	"$NSTATE" "$IMAGES" "$LOGS" >"$T/noded.conf"
check "corral image build-busybox makes an image" "$ROOT/tools/corral" image build-busybox --images "$IMAGES"
check "the image is a root folder with busybox's applets" test -x "$IMAGES/busybox/bin/sh" -a -x "$IMAGES/busybox/bin/busybox"
check "corral image list shows it" sh -c "'$ROOT/tools/corral' image list --images '$IMAGES' | grep -qx busybox:latest"
mkdir -p "$T/rootfs/bin" "$T/rootfs/usr"
cp /bin/busybox "$T/rootfs/bin/"
ln -s busybox "$T/rootfs/bin/sh"
check "corral image import takes a root folder as NAME_TAG" "$ROOT/tools/corral" image import tiny:v1 "$T/rootfs" --images "$IMAGES"
check "(as tiny_v1/)" test -x "$IMAGES/tiny_v1/bin/busybox"
tar -C "$T/rootfs" -cf "$T/tiny.tar" .
check "corral image import takes a tar" "$ROOT/tools/corral" image import tarry "$T/tiny.tar" --images "$IMAGES"
check "(as tarry/, the tag latest)" test -x "$IMAGES/tarry/bin/busybox"
check "an image name that cannot be one is refused" sh -c "! '$ROOT/tools/corral' image import 'Bad/Name' '$T/rootfs' --images '$IMAGES' 2>/dev/null"

start_node "$NA"
start_node "$NB"
node() { echo "$M/nodes/$1.yaml"; }
P=$M/namespaces/dev/pods
mkdir -p "$M/namespaces/dev"
pod() { echo "$P/$1.yaml"; }
top() { sed -n "s/^  $2: //p" "$1" | tr -d "'"; }
phase() { top "$(pod "$1")" phase; }
is_phase() { [ "$(phase "$1")" = "$2" ]; }
podlog() { cat "$M/namespaces/dev/logs/$1/$2.log" 2>/dev/null; }
log_has() { podlog "$1" "$2" | grep -q -- "$3"; }
nspawns() { pgrep -c -x systemd-nspawn 2>/dev/null || echo 0; }
# synced NODE: NODE's agent has taken every pod event before this: a pod
# bound to it now (its image does not exist: no container) gets its status
# once the agent's queue, which takes pods in order, reaches it. The pod is
# deleted again.
MARKS=0
synced() {
	local m=mark$((MARKS += 1)) rc
	cat >"$(pod $m)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $m}
spec:
  nodeName: $1
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: nosuchimage, command: ["true"]}]
Y
	wait_for 20 grep -q 'reason: ErrImagePull' "$(pod $m)"
	rc=$?
	rm -f "$(pod $m)"
	return $rc
}
check "node $NA registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$(node $NA)"
check "node $NB registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$(node $NB)"
BRA=crl$(hash8 "$NA")
check "node $NA has its bridge $BRA" ip link show "$BRA"
check "and its safety table drops pods' traffic beyond the pod range" sh -c "nft list table ip corral_$BRA | grep -q 'iifname \"$BRA\" ip daddr != 10.244.0.0/16 counter packets [0-9]* bytes [0-9]* drop'"
check "the pod range has an unreachable route" sh -c "ip route show type unreachable | grep -q '^unreachable 10.244.0.0/16'"
check "the service range has an unreachable route" sh -c "ip route show type unreachable | grep -q '^unreachable 10.96.0.0/16'"
check "forwarding is on for the bridge alone" sh -c "[ \$(cat /proc/sys/net/ipv4/conf/$BRA/forwarding) = 1 ] && [ \$(cat /proc/sys/net/ipv4/conf/eth0/forwarding 2>/dev/null || echo 0) = 0 ]"

# ---- two containers sharing the pod's network; env, volumes, logs ----
cat >"$M/namespaces/dev/configmaps/cfg.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {greeting: hello-from-configmap, app.conf: "mode=test\n"}
Y
cat >"$M/namespaces/dev/secrets/sec.yaml" <<'Y'
apiVersion: v1
kind: Secret
metadata: {name: sec}
stringData: {password: s3cret}
Y
mkdir -p "$T/host"
echo host-file-content >"$T/host/data.txt"
cat >"$(pod web)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 3
  volumes:
  - {name: shared, emptyDir: {}}
  - {name: mem, emptyDir: {medium: Memory}}
  - {name: cfg, configMap: {name: cfg}}
  - {name: sec, secret: {secretName: sec}}
  - {name: host, hostPath: {path: $T/host, type: Directory}}
  containers:
  - name: srv
    image: busybox
    command: ["sh", "-c", "mkdir -p /www && echo shared-net-ok > /www/index.html && echo from-srv > /shared/note && exec httpd -f -p 8080 -h /www"]
    ports: [{containerPort: 8080, name: http}]
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: cli
    image: busybox:latest
    workingDir: /tmp
    env:
    - {name: GREETING, valueFrom: {configMapKeyRef: {name: cfg, key: greeting}}}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: sec, key: password}}}
    - {name: MY_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: MY_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    - {name: MY_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: PLAIN, value: "plain-\$(MY_NAME)"}
    command: ["sh", "-c"]
    args:
    - |
      echo "env GREETING=\$GREETING PASSWORD=\$PASSWORD MY_NAME=\$MY_NAME MY_NS=\$MY_NS MY_IP=\$MY_IP PLAIN=\$PLAIN"
      echo "pwd \$(pwd) host \$(hostname)"
      echo "cfgfile \$(cat /etc/cfg/app.conf)"
      echo "secfile \$(cat /etc/sec/password) mode \$(stat -L -c %a /etc/sec/password)"
      echo "hostfile \$(cat /host/data.txt)"
      mount | grep -q ' /mem type tmpfs' && echo mem-is-tmpfs
      echo "resolv \$(grep -c 'nameserver 10.96.0.10' /etc/resolv.conf) \$(grep search /etc/resolv.conf)"
      grep -q "\$MY_IP.*web" /etc/hosts && echo hosts-has-pod
      sleep 1; wget -qO- http://127.0.0.1:8080/; cat /shared/note
      exec sleep 3600
    volumeMounts:
    - {name: shared, mountPath: /shared}
    - {name: mem, mountPath: /mem}
    - {name: cfg, mountPath: /etc/cfg}
    - {name: sec, mountPath: /etc/sec, readOnly: true}
    - {name: host, mountPath: /host}
Y
check "a two-container pod turns Running" wait_for 30 is_phase web Running
W=$(pod web)
IPW=$(top "$W" podIP)
check "with a podIP of its node's range ($IPW)" sh -c "echo '$IPW' | grep -q '^10\.244\.'"
check "hostIP and startTime are set" sh -c "grep -q '^  hostIP: ' '$W' && grep -q '^  startTime: ' '$W'"
check "both containers are running and ready" sh -c "[ \$(grep -c '      running:' '$W') = 2 ] && grep -q \"^  - containerID: nspawn://\" '$W'"
check "qosClass BestEffort" grep -q '^  qosClass: BestEffort' "$W"
check "two systemd-nspawn run for it" test "$(nspawns)" -ge 2
check "a pause holds its namespaces" sh -c "pgrep -x corral-pause >/dev/null"
check "the containers share localhost (cli reached srv)" wait_for 15 log_has web cli shared-net-ok
check "an emptyDir is shared between containers" wait_for 5 log_has web cli from-srv
check "env from a configMap key" log_has web cli GREETING=hello-from-configmap
check "env from a secret key" log_has web cli PASSWORD=s3cret
check "env from fieldRef (name, namespace, podIP)" log_has web cli "MY_NAME=web MY_NS=dev MY_IP=$IPW"
check "\$(VAR) is expanded in env values" log_has web cli PLAIN=plain-web
check "workingDir and the pod's hostname" log_has web cli "pwd /tmp host web"
check "a configMap volume holds its keys as files" log_has web cli "cfgfile mode=test"
check "a secret volume's files are 0400" log_has web cli "secfile s3cret mode 400"
check "a hostPath volume is the host's folder" log_has web cli "hostfile host-file-content"
check "an emptyDir of medium Memory is a tmpfs" log_has web cli mem-is-tmpfs
check "resolv.conf points at the cluster DNS with the search path" log_has web cli "resolv 1 search dev.svc.cluster.local svc.cluster.local cluster.local"
check "/etc/hosts names the pod" log_has web cli hosts-has-pod
check "the image folder is never written" test ! -e "$IMAGES/busybox/www"
UIDW0=$(sed -n 's/^  uid: //p' "$W")
sed -i 's/greeting: hello-from-configmap/greeting: changed-configmap/' "$M/namespaces/dev/configmaps/cfg.yaml"
check "a changed configMap reaches its volume's files in the running pod" wait_for 10 sh -c "grep -qx changed-configmap '$NSTATE/nodes/$NA/pods/$UIDW0/volumes/cfg/greeting'"
check "the host reaches the pod by its IP" sh -c "wget -qO- -T 3 http://$IPW:8080/ | grep -q shared-net-ok"

# ---- pods on two nodes reach each other ----
cat >"$(pod other)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  nodeName: $NB
  restartPolicy: Never
  containers:
  - {name: c, image: busybox, command: ["sh", "-c", "wget -qO- http://$IPW:8080/ && echo cross-node-ok"]}
  - {name: t, image: tiny:v1, command: ["sh", "-c", "echo from-the-imported-image"]}
Y
check "a pod on the other node reaches the first by pod IP" wait_for 30 log_has other c cross-node-ok
check "an imported image (tiny:v1) runs" wait_for 10 log_has other t from-the-imported-image
check "and, its command done, Succeeded (restartPolicy Never)" wait_for 15 is_phase other Succeeded
check "with reason Completed, exit code 0" sh -c "grep -q 'reason: Completed' '$(pod other)' && grep -q 'exitCode: 0' '$(pod other)'"
OIP=$(top "$(pod other)" podIP)
check "its address is of the other node's range" sh -c "[ '${OIP%.*}' != '${IPW%.*}' ]"

# ---- a persistentVolumeClaim bound to a hostPath PersistentVolume ----
mkdir -p "$T/pvdata"
cat >"$M/persistentvolumes/pv1.yaml" <<Y
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: $T/pvdata}}
Y
cat >"$M/namespaces/dev/persistentvolumeclaims/claim.yaml" <<'Y'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: pv1}
Y
cat >"$(pod pvc)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: pvc}
spec:
  nodeName: $NA
  restartPolicy: Never
  volumes: [{name: data, persistentVolumeClaim: {claimName: claim}}]
  containers: [{name: c, image: busybox, command: ["sh", "-c", "echo kept > /data/out"], volumeMounts: [{name: data, mountPath: /data}]}]
Y
check "a persistentVolumeClaim mounts its bound volume's hostPath" wait_for 20 sh -c "grep -qx kept '$T/pvdata/out'"
cat >"$(pod unbound)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: unbound}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 1
  volumes: [{name: data, persistentVolumeClaim: {claimName: nosuchclaim}}]
  containers: [{name: c, image: busybox, command: ["sleep", "60"], volumeMounts: [{name: data, mountPath: /data}]}]
Y
check "a claim that does not exist: FailedMount naming it" wait_for 15 sh -c "grep -q 'reason: FailedMount' '$(pod unbound)' && grep -q 'nosuchclaim' '$(pod unbound)'"

# ---- lifecycle: exit codes, restart policies, back-off ----
mkpod() { # NAME POLICY IMAGE COMMAND...
	local name=$1 policy=$2 image=$3; shift 3
	local cmd='' a
	for a in "$@"; do cmd+="\"$a\", "; done
	cat >"$(pod "$name")" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $name}
spec:
  nodeName: $NA
  restartPolicy: $policy
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: $image, command: [${cmd%, }]}]
Y
}
mkpod fails Never busybox sh -c "echo failing; exit 3"
check "a container exiting 3 with restartPolicy Never: Failed" wait_for 20 is_phase fails Failed
check "terminated, exitCode 3, reason Error" sh -c "grep -q 'exitCode: 3' '$(pod fails)' && grep -q 'reason: Error' '$(pod fails)'"
mkpod crash Always busybox sh -c "echo crashing; exit 1"
restarts() { sed -n 's/^    restartCount: //p' "$(pod "$1")" | head -1; }
check "a container that exits at once is restarted (restartCount >= 1)" wait_for 20 sh -c "[ \"\$(sed -n 's/^    restartCount: //p' '$(pod crash)')\" -ge 1 ]"
check "and then waits in CrashLoopBackOff with a back-off message" wait_for 20 sh -c "grep -q 'reason: CrashLoopBackOff' '$(pod crash)' && grep -q 'message: back-off 10s restarting failed container=c' '$(pod crash)'"
check "lastState says how it ended" sh -c "grep -A3 'lastState:' '$(pod crash)' | grep -q 'terminated:' && grep -A6 'lastState:' '$(pod crash)' | grep -q 'exitCode: 1'"
check "the crashing pod stays Running (restartPolicy Always)" is_phase crash Running
check "each run has its own log file" wait_for 5 sh -c "ls '$LOGS'/dev_crash_*/c/ | grep -q '^1.log$'"
mkpod once OnFailure busybox sh -c "exit 0"
check "OnFailure with exit 0: Succeeded, no restart" wait_for 20 sh -c "[ \"\$(sed -n 's/^  phase: //p' '$(pod once)')\" = Succeeded ] && grep -q 'restartCount: 0' '$(pod once)'"

# ---- bad input ----
mkpod noimage Always nosuchimage sh -c "true"
check "an image that does not exist: waiting ErrImagePull, with the folders looked at" wait_for 15 sh -c "grep -q 'reason: ErrImagePull' '$(pod noimage)' && grep -q 'nosuchimage' '$(pod noimage)'"
check "(and the pod stays Pending)" is_phase noimage Pending
mkpod nocmd Never busybox /no/such/command
check "a command that does not exist: terminated StartError, exit 128" wait_for 15 sh -c "grep -q 'reason: StartError' '$(pod nocmd)' && grep -q 'exitCode: 128' '$(pod nocmd)' && grep -q 'executable file not found' '$(pod nocmd)'"
cat >"$(pod nohost)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: nohost}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 1
  volumes: [{name: h, hostPath: {path: $T/no/such/dir, type: Directory}}]
  containers: [{name: c, image: busybox, command: ["sleep", "60"], volumeMounts: [{name: h, mountPath: /h}]}]
Y
check "a hostPath that does not exist: waiting FailedMount naming the path" wait_for 15 sh -c "grep -q 'reason: FailedMount' '$(pod nohost)' && grep -q 'no/such/dir' '$(pod nohost)'"
cat >"$(pod nocm)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: nocm}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sleep", "60"], env: [{name: X, valueFrom: {configMapKeyRef: {name: missing, key: k}}}]}]
Y
check "a configMap that does not exist: CreateContainerConfigError" wait_for 15 sh -c "grep -q 'reason: CreateContainerConfigError' '$(pod nocm)' && grep -q 'configmap \"missing\" not found' '$(pod nocm)'"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: missing}\ndata: {k: v}\n' >"$M/namespaces/dev/configmaps/missing.yaml"
check "once the configMap is written, the pod runs (no restart of anything needed)" wait_for 15 grep -q '      running:' "$(pod nocm)"
cat >"$(pod ports)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: ports}
spec:
  nodeName: $NA
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - {name: a, image: busybox, command: ["httpd", "-f", "-p", "9090"], ports: [{containerPort: 9090}]}
  - {name: b, image: busybox, command: ["sh", "-c", "sleep 1; exec httpd -f -p 9090"], ports: [{containerPort: 9090}]}
Y
check "two containers on one port: the second ends with an error the status shows" wait_for 20 sh -c "grep -A12 'name: b' '$(pod ports)' | grep -q 'reason: Error'"
cat >"$(pod elsewhere)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: elsewhere}
spec:
  nodeName: no-such-node
  containers: [{name: c, image: busybox, command: ["sleep", "60"]}]
Y
synced "$NA" && synced "$NB" || fail "the agents take a pod written after it"
check "a pod for another node is left alone (no status)" sh -c "! grep -q '^  phase:' '$(pod elsewhere)'"
check "the agents are alive after all the bad input" sh -c "kill -0 ${NPID[$NA]} && kill -0 ${NPID[$NB]}"

# ---- probes ----
cat >"$(pod probed)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: probed}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "mkdir -p /www; echo ok > /www/index.html; sleep 2; exec httpd -f -p 8081 -h /www"]
    readinessProbe: {httpGet: {path: /, port: 8081}, periodSeconds: 1}
    livenessProbe: {exec: {command: ["test", "!", "-e", "/tmp/die"]}, periodSeconds: 1, failureThreshold: 2}
  - name: t
    image: busybox
    command: ["sh", "-c", "sleep 3600"]
    readinessProbe: {tcpSocket: {port: 8081}, periodSeconds: 1}
Y
ready_status() { awk '/^  - lastProbeTime/{t=""} /^    status: /{s=$2} /^    type: Ready$/{print s; exit}' "$(pod "$1")" | tr -d "'"; }
is_ready() { [ "$(ready_status "$1")" = "$2" ]; }
check "a pod with an httpGet readiness probe starts unready" wait_for 15 sh -c "grep -q 'phase: Running' '$(pod probed)' && grep -q 'containers with unready status' '$(pod probed)'"
check "then turns Ready when its probes pass (httpGet, tcpSocket)" wait_for 20 is_ready probed True
PR=$(sed -n 's/^    restartCount: //p' "$(pod probed)" | head -1)
CID=$(pgrep -f '^httpd -f -p 8081' | head -1)
check "a failing exec liveness probe restarts the container" sh -c "nsenter -t $CID -m -r -- /bin/touch /tmp/die"
check "(restartCount grows)" wait_for 20 sh -c "[ \"\$(sed -n 's/^    restartCount: //p' '$(pod probed)' | head -1)\" -gt $PR ]"

# ---- limits, QoS and the OOM killer ----
cat >"$(pod oom)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: oom}
spec:
  nodeName: $NA
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "sleep 4; tail /dev/zero"]
    resources: {limits: {memory: 24Mi, cpu: 500m}, requests: {memory: 24Mi, cpu: 500m}}
Y
check "a pod with equal requests and limits is Guaranteed" wait_for 15 grep -q 'qosClass: Guaranteed' "$(pod oom)"
UID_OOM=$(sed -n 's/^  uid: //p' "$(pod oom)")
CG=/sys/fs/cgroup/memory/corral/$(hash8 "$NA")/$UID_OOM/c
[ -d /sys/fs/cgroup/memory ] || CG=/sys/fs/cgroup/corral/$(hash8 "$NA")/$UID_OOM/c
check "its memory limit is its cgroup's" wait_for 10 sh -c "grep -qx 25165824 '$CG/memory.limit_in_bytes' 2>/dev/null || grep -qx 25165824 '$CG/memory.max'"
check "its cpu limit is a CFS quota" sh -c "grep -qx 50000 '${CG/memory/cpu}/cpu.cfs_quota_us' 2>/dev/null || grep -q '^50000 100000' '$CG/cpu.max'"
check "exceeding the memory limit: terminated OOMKilled" wait_for 30 sh -c "grep -q 'reason: OOMKilled' '$(pod oom)'"
check "(and Failed)" is_phase oom Failed

# ---- eviction under memory pressure ----
# a node whose threshold is above what any machine has is always under
# pressure: it evicts one pod a period, BestEffort before Guaranteed
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\neviction-memory-available = 1Pi\neviction-period = 3s\n' \
	"$NSTATE" "$IMAGES" "$LOGS" >"$T/evict.conf"
for q in be gu; do
	res=''
	[ $q = gu ] && res='resources: {limits: {memory: 64Mi, cpu: 100m}, requests: {memory: 64Mi, cpu: 100m}}'
	cat >"$(pod $q)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $q}
spec:
  nodeName: $NC
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sleep", "3600"], $res}]
Y
done
start_node "$NC" "$T/evict.conf"
check "a node under memory pressure says so (MemoryPressure True)" wait_for 15 sh -c "grep -B4 'type: MemoryPressure' '$(node $NC)' | grep -q \"status: 'True'\""
check "it evicts the BestEffort pod: Failed, reason Evicted, with the threshold" wait_for 20 sh -c "grep -q '^  phase: Failed' '$(pod be)' && grep -q '^  reason: Evicted' '$(pod be)' && grep -q 'low on resource: memory' '$(pod be)'"
check "the Guaranteed pod after it" wait_for 20 sh -c "grep -q '^  reason: Evicted' '$(pod gu)'"
check "in that order" sh -c "grep 'evicted' '$T/$NC.log' | head -1 | grep -q 'pod dev/be'"
# the Guaranteed pod goes a whole eviction period after it, and the agent
# has synced the evicted one since
check "an evicted pod is not restarted" sh -c "! grep -q '      running:' '$(pod be)'"
rm -f "$(pod be)" "$(pod gu)"
check "evicted pods deleted leave nothing" wait_for 15 sh -c "[ \$(find '$NSTATE/nodes/$NC/pods/' -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) = 0 ]"
stop_node "$NC"

# ---- restart safety: kill -9 of the agent ----
WPID=$(pgrep -f '^httpd -f -p 8080 -h /www' | head -1)
UID_ONCE=$(sed -n 's/^  uid: //p' "$(pod once)")
check "a finished pod's state stays on the host until it is deleted" test -n "$UID_ONCE" -a -d "$NSTATE/nodes/$NA/pods/$UID_ONCE"
stop_node "$NA" KILL
check "kill -9 of the agent leaves its pods running" sh -c "kill -0 $WPID && wget -qO- -T 3 http://$IPW:8080/ | grep -q shared-net-ok"
rm "$(pod once)"
start_node "$NA"
# the restarted agent has listed its pods (a second "following" line), then
# synced them all (a pod written after the list)
following() { [ "$(grep -c 'following .* pods of this node' "$T/$NA.log")" -ge 2 ]; }
wait_for 20 following && synced "$NA" || fail "the restarted agent follows and syncs its pods"
check "the restarted agent adopts them: the same processes, no duplicates" sh -c "kill -0 $WPID && [ \$(pgrep -fc '^httpd -f -p 8080 -h /www') = 1 ]"
check "and keeps reporting them Running with the same IP" sh -c "grep -q 'phase: Running' '$W' && [ \"\$(sed -n 's/^  podIP: //p' '$W')\" = '$IPW' ]"
check "restartCount of the adopted containers is unchanged" sh -c "! grep -q 'restartCount: [1-9]' '$W'"
check "a pod deleted while the agent was down is cleaned up after its restart" wait_for 20 sh -c "[ ! -e '$NSTATE/nodes/$NA/pods/$UID_ONCE' ]"

# ---- delete: grace period, then nothing left ----
UIDW=$(sed -n 's/^  uid: //p' "$W")
VETH=crv$(hash8 "$UIDW")
check "the pod's veth is on the bridge" ip link show "$VETH"
rm "$W"
gone() {
	! pgrep -f '^httpd -f -p 8080 -h /www' >/dev/null &&
		! ip link show "$VETH" >/dev/null 2>&1 &&
		[ ! -e "$NSTATE/nodes/$NA/pods/$UIDW" ] &&
		! ls "$LOGS" | grep -q "$UIDW" &&
		! grep -q "$UIDW" /proc/mounts &&
		[ ! -e "/sys/fs/cgroup/memory/corral/$(hash8 "$NA")/$UIDW" ]
}
cat >"$(pod web2)" <<Y
apiVersion: v1
kind: Pod
metadata: {name: web2}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
Y
check "a pod made while another stops does not get the stopping pod's address" wait_for 15 sh -c "ip=\$(sed -n 's/^  podIP: //p' '$(pod web2)'); [ -n \"\$ip\" ] && [ \"\$ip\" != '$IPW' ]"
check "rm of the pod: within its grace period nothing of it is left (processes, veth, state, logs, mounts, cgroups)" wait_for 20 gone
for p in web2 pvc unbound other fails crash noimage nocmd nohost nocm ports elsewhere probed oom; do rm -f "$(pod $p)"; done
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "and no pod state (pause, overlays, volumes)" wait_for 10 sh -c "[ \$(find '$NSTATE/nodes/$NA/pods/' '$NSTATE/nodes/$NB/pods/' -mindepth 1 -maxdepth 1 | wc -l) = 0 ]"
stop_node "$NA"
stop_node "$NB"
check "the agents stopped with --cleanup-on-exit take their bridges and tables away" sh -c "! ip link show $BRA 2>/dev/null && ! nft list table ip corral_$BRA 2>/dev/null"
check "no agent logged an error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T'/$NA.log '$T'/$NB.log"
grep -h ' \(warn\|error\): ' "$T"/$NA.log "$T"/$NB.log >&2
[ "$FAILS" = 0 ]
