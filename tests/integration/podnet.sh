#!/bin/bash
# What a pod reaches on the host, on a real node: corral-fs, corral-ctrl,
# corral-sched, corral-dns (its default addresses) and one real
# corral-noded. From inside a pod, TCP listeners the test starts on the
# host (on 0.0.0.0, on the pod's gateway, on the host's own address) are
# out of reach, while DNS through the kube-dns service address, a
# ClusterIP service and a NodePort still answer, and the host still
# reaches the pod. The pod has no IPv6 (none in its namespace, none on its
# veth). corral-dns listens on loopback and the gateways, not on 0.0.0.0.
# Under `corral up`, corral-dns runs as nobody and still answers, and
# still registers kube-dns.
#
# Traffic goes to loopback, to the pod's namespace, and from the pod to
# the host's own addresses (which never leave the machine).
. "$(dirname "$0")/../lib/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_daemons
for t in dig python3 nsenter ss; do
	command -v "$t" >/dev/null || { echo "not ok - $t is missing (scripts/deps.sh installs it)"; exit 1; }
done
NA=podnet-a
# off the default ports, so that a cluster of `corral up` may run beside
DPORT=10353 HPORT=18381 MPORT=20355
UPORT=10453 UHPORT=18481 UMPORT=20455
LPORT=17071 # the host listeners': LPORT on 0.0.0.0, +1 the gateway, +2 the host's address
PIDS=()
NPIDS=()
UP_MOUNT=$T/up
export CORRAL_REGISTRY=$T/registry
stop_all() {
	local p
	for p in "${NPIDS[@]}" "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${NPIDS[@]}" "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=() NPIDS=()
}
final() {
	[ -n "${PODNET_TEST_LOGS:-}" ] && mkdir -p "$PODNET_TEST_LOGS" && cp "$T"/*.log "$PODNET_TEST_LOGS"/
	mountpoint -q "$UP_MOUNT" && "$ROOT/tools/corral" down --mount "$UP_MOUNT" >/dev/null 2>&1
	# what corral down left of that cluster's (by pid: the mount's path is
	# this test's own)
	local p
	for p in $(pgrep -f "corral-[a-z]* --mount $UP_MOUNT"); do kill "$p"; done
	stop_all
	grep " $T/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
	cleanup
}
trap final EXIT
start_fs --pod-log-dir "$T/logs"
"$ROOT/tools/corral" image build-busybox --images "$T/images" >/dev/null || { echo "not ok - no busybox image"; exit 1; }
printf '[noded]\nstate = %s/nstate\nimages = %s/images\npod-log-dir = %s/logs\n' "$T" "$T" "$T" >"$T/corral.conf"
"$CTRL" --mount "$M" --leader-elect=false >>"$T/ctrl.log" 2>&1 &
PIDS+=($!)
"$SCHED" --mount "$M" --leader-elect=false >>"$T/sched.log" 2>&1 &
PIDS+=($!)
"$DNS" --mount "$M" --port $DPORT --health-port $HPORT --metrics-port $MPORT >>"$T/dns.log" 2>&1 &
DNSPID=$!
PIDS+=($DNSPID)
"$NODED" --mount "$M" --name "$NA" --config "$T/corral.conf" --heartbeat-period 1s \
	--cleanup-on-exit >>"$T/$NA.log" 2>&1 &
NPIDS+=($!)
D=$M/namespaces/podnet
mkdir -p "$D"
check "a real node turns Ready" wait_for 20 grep -q 'reason: KubeletReady' "$M/nodes/$NA.yaml"
cat >"$D/app.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: busybox
    command: ["sh", "-c", "mkdir -p /www && echo web-answers > /www/index.html && exec httpd -f -p 8080 -h /www"]
    ports: [{containerPort: 8080, name: http}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sh", "-c", "exec sleep 3607"]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
Y
ip_of() { sed -n "s/^  $2: //p" "$D/pods/$1.yaml" 2>/dev/null | tr -d "'"; }
check "both pods run" wait_for 60 sh -c "grep -q 'phase: Running' '$D/pods/web.yaml' && grep -q 'phase: Running' '$D/pods/client.yaml'"
check "the service has the web pod as its endpoint" wait_for 20 grep -q 'port: 8080' "$D/endpoints/web.yaml"
CIP=$(sed -n 's/^  clusterIP: //p' "$D/services/web.yaml" | tr -d "'")
NP=$(sed -n 's/^ *nodePort: //p' "$D/services/web.yaml" | head -1)
HOSTIP=$(ip_of client hostIP)
WEBIP=$(ip_of web podIP)
CLIENTIP=$(ip_of client podIP)
GW=${CLIENTIP%.*}.1
CPID=$(pgrep -f '^sleep 3607$' | head -1)
check "found the client pod's process and addresses ($CPID, $CLIENTIP via $GW, host $HOSTIP)" \
	sh -c "[ -n '$CPID' ] && [ -n '$CLIENTIP' ] && [ -n '$HOSTIP' ] && [ -n '$CIP' ] && [ -n '$NP' ]"
[ "$FAILS" = 0 ] || { echo "# logs:"; tail -n 5 "$T"/*.log | sed 's/^/# /'; exit 1; }

# in_pod CMD...: CMD run in the client pod's namespaces (its root, its
# network); host_net CMD...: in its network namespace with the host's tools
in_pod() { nsenter -t "$CPID" -m -u -i -n -p -r -w -- "$@"; }
host_net() { nsenter -t "$CPID" -n -- "$@"; }
# tcp_says ADDR PORT WORD: a TCP connection from the pod to ADDR:PORT
# reads WORD (a refused or dropped connection reads nothing)
tcp_says() { host_net timeout 3 python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)
sys.exit(0 if s.recv(64).startswith(sys.argv[3].encode()) else 1)' "$1" "$2" "$3"; }
# http_says URL WORD: a GET from the pod of URL answers WORD
http_says() { host_net timeout 4 python3 -c '
import sys, urllib.request
sys.exit(0 if sys.argv[2].encode() in urllib.request.urlopen(sys.argv[1], timeout=3).read() else 1)' "$1" "$2"; }

# ---- the host's listeners ------------------------------------------------
python3 -u -c '
import socket, select, sys
socks = []
for a, p in ((sys.argv[1], 0), (sys.argv[2], 1), (sys.argv[3], 2)):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, int(sys.argv[4]) + p))
    s.listen(16)
    socks.append(s)
print("listening", flush=True)
while True:
    for s in select.select(socks, [], [])[0]:
        c, _ = s.accept()
        c.sendall(b"host-reached\n")
        c.close()
' 0.0.0.0 "$GW" "$HOSTIP" "$LPORT" >"$T/listen.log" 2>&1 &
PIDS+=($!)
check "the host's listeners are up" wait_for 10 grep -q listening "$T/listen.log"
check "... and answer on the host itself (0.0.0.0:$LPORT)" sh -c "timeout 3 python3 -c 'import socket; s = socket.create_connection((\"127.0.0.1\", $LPORT)); assert s.recv(64).startswith(b\"host-reached\")'"
# the node's proxy applies the endpoints a moment after they are written
check "the pod reaches a ClusterIP service ($CIP:80)" wait_for 20 http_says "http://$CIP/" web-answers
check "the pod reaches a NodePort ($HOSTIP:$NP)" wait_for 20 http_says "http://$HOSTIP:$NP/" web-answers
check "the host reaches the pod ($WEBIP:8080)" sh -c "wget -qO- -T 5 http://$WEBIP:8080/ | grep -q web-answers"
refute "the pod does not reach a host listener on 0.0.0.0 through its gateway ($GW:$LPORT)" tcp_says "$GW" "$LPORT" host-reached
refute "... nor one bound to the gateway ($GW:$((LPORT + 1)))" tcp_says "$GW" $((LPORT + 1)) host-reached
refute "... nor one bound to the host's address ($HOSTIP:$((LPORT + 2)))" tcp_says "$HOSTIP" $((LPORT + 2)) host-reached
refute "... nor the 0.0.0.0 one through the host's address ($HOSTIP:$LPORT)" tcp_says "$HOSTIP" "$LPORT" host-reached
refute "... nor corral-dns's health port ($GW:$HPORT)" http_says "http://$GW:$HPORT/healthz" ok
# resolves NAME IP: the pod's own nslookup (its resolv.conf) finds IP
resolves() { in_pod nslookup "$1" 2>/dev/null | grep -q "Address.*$2"; }
check "the pod's resolv.conf names the kube-dns service address" in_pod grep -qx 'nameserver 10.96.0.10' /etc/resolv.conf
# (kube-dns's endpoints reach the node's proxy a moment after the node's podCIDR)
check "the pod resolves a service through it" wait_for 10 resolves web.podnet.svc.cluster.local "$CIP"
check "... and by the short name" wait_for 10 resolves web "$CIP"
check "... over TCP as well" wait_for 10 sh -c "[ \"\$(nsenter -t $CPID -n -- dig @10.96.0.10 +tcp +time=2 +tries=1 +short web.podnet.svc.cluster.local)\" = '$CIP' ]"

# ---- IPv6 ------------------------------------------------------------------
VETH=$(ip -o link show master "$(ip -o addr show to "$GW" | awk '{print $2}')" | awk -F': ' '{print $2}' | sed 's/@.*//' | head -1)
check "the pod has no IPv6 address (ip -6 addr inside shows none)" sh -c "[ -z \"\$(nsenter -t $CPID -n -- ip -6 -o addr)\" ]"
check "... IPv6 is disabled in its namespace" sh -c "[ \"\$(nsenter -t $CPID -n -- cat /proc/sys/net/ipv6/conf/all/disable_ipv6)\" = 1 ] && [ \"\$(nsenter -t $CPID -n -- cat /proc/sys/net/ipv6/conf/eth0/disable_ipv6)\" = 1 ]"
check "... and on its veth on the host ($VETH)" sh -c "[ -n '$VETH' ] && [ \"\$(cat /proc/sys/net/ipv6/conf/$VETH/disable_ipv6)\" = 1 ] && [ -z \"\$(ip -6 -o addr show dev $VETH)\" ]"

# ---- corral-dns's addresses ----------------------------------------------
# bound PORT: the local addresses listening on TCP port PORT, sorted
bound() { ss -Hlnt "sport = :$1" | awk '{print $4}' | sort | tr '\n' ' ' | sed 's/ $//'; }
udp_bound() { ss -Hlnu "sport = :$1" | awk '{print $4}' | sort | tr '\n' ' ' | sed 's/ $//'; }
check "corral-dns listens on loopback and the node's gateway, not 0.0.0.0 (TCP: $(bound $DPORT))" \
	wait_for 10 sh -c "[ \"\$(ss -Hlnt 'sport = :$DPORT' | awk '{print \$4}' | sort | tr '\n' ' ')\" = '$GW:$DPORT 127.0.0.1:$DPORT ' ]"
check "... UDP the same ($(udp_bound $DPORT))" [ "$(udp_bound $DPORT)" = "$GW:$DPORT 127.0.0.1:$DPORT" ]
check "... and its health and metrics ports only on loopback" [ "$(bound $HPORT) $(bound $MPORT)" = "127.0.0.1:$HPORT 127.0.0.1:$MPORT" ]

# ---- teardown of the node --------------------------------------------------
BRIDGE=$(ip -o addr show to "$GW" | awk '{print $2}')
rm -f "$D/pods/"*.yaml "$D/services/"*.yaml
check "the pods are gone from the node" wait_for 40 sh -c "[ \$(find '$T/nstate/nodes' -mindepth 3 -maxdepth 3 | wc -l) = 0 ]"
kill "${NPIDS[@]}" 2>/dev/null
wait "${NPIDS[@]}" 2>/dev/null
NPIDS=()
check "the node's table is gone (input chain and all)" sh -c "! nft list tables | grep -q 'corral_$BRIDGE\$'"
check "no agent logged an error" sh -c "! grep -h -e ' error: ' '$T/$NA.log'"

# ---- corral up: corral-dns drops root --------------------------------------
printf '[dns]\nport = %s\nhealth-port = %s\nmetrics-port = %s\n' $UPORT $UHPORT $UMPORT >"$T/up.conf"
"$ROOT/tools/corral" up --mount "$UP_MOUNT" --state "$T/upstate" --nodes 0 --config "$T/up.conf" >>"$T/up.log" 2>&1
check "corral up starts a cluster" mountpoint -q "$UP_MOUNT"
UPDNS=$("$ROOT/tools/corral" status --mount "$UP_MOUNT" 2>/dev/null | awk '$1 == "corral-dns" {print $2}')
check "corral-dns under corral up runs as nobody (its Uid line, pid $UPDNS)" \
	sh -c "[ -n '$UPDNS' ] && awk '/^Uid:/{print \$2, \$3, \$4, \$5}' /proc/$UPDNS/status | grep -qx '$(id -u nobody) $(id -u nobody) $(id -u nobody) $(id -u nobody)'"
check "... and answers from the mount (kube-dns.kube-system is 10.96.0.10)" wait_for 10 sh -c "[ \"\$(dig @127.0.0.1 -p $UPORT +time=2 +tries=1 +short kube-dns.kube-system.svc.cluster.local)\" = 10.96.0.10 ]"
check "... having registered kube-dns's endpoints" wait_for 10 readable "$UP_MOUNT/namespaces/kube-system/endpoints/kube-dns.yaml"
"$ROOT/tools/corral" down --mount "$UP_MOUNT" >>"$T/up.log" 2>&1
# functions, not sh -c: pgrep -f would find the sh that runs it
up_dns_gone() { ! pgrep -f "corral-dns --mount $UP_MOUNT" >/dev/null; }
check "corral down stops it" sh -c "! mountpoint -q '$UP_MOUNT'"
check "no corral-dns of that cluster is left" wait_for 10 up_dns_gone
[ "$FAILS" = 0 ] || { echo "# logs:"; tail -n 5 "$T"/*.log "$T/upstate/log/"*.log 2>/dev/null | sed 's/^/# /'; }
stop_all
[ "$FAILS" = 0 ]
