#!/bin/bash
# Services end to end on real nodes: corral-fs, corral-ctrl, corral-sched,
# corral-dns and two real corral-noded. A Deployment of 2 behind a NodePort Service is
# reached by ClusterIP from a pod (both replicas answer), by NodePort from the
# host, by a pod through its own service (hairpin); a replica whose readiness
# probe fails leaves the endpoints and the proxy's rules; a service without
# endpoints refuses at once; pods reach services by name through kube-dns
# (corral-dns behind the proxy, as their resolv.conf says).
. "$(dirname "$0")/../lib/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_daemons
NA=svctest-a NB=svctest-b
PIDS=()
NPIDS=()
stop_all() {
	local p
	for p in "${NPIDS[@]}" "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${NPIDS[@]}" "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=() NPIDS=()
}
final() {
	[ -n "${SVC_TEST_LOGS:-}" ] && mkdir -p "$SVC_TEST_LOGS" && cp "$T"/*.log "$SVC_TEST_LOGS"/
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
# off the default ports, so that a cluster of `corral up` may run beside
"$DNS" --mount "$M" --port 10253 --health-port 18281 --metrics-port 20255 >>"$T/dns.log" 2>&1 &
PIDS+=($!)
for n in "$NA" "$NB"; do
	"$NODED" --mount "$M" --name "$n" --config "$T/corral.conf" --heartbeat-period 1s \
		--cleanup-on-exit >>"$T/$n.log" 2>&1 &
	NPIDS+=($!)
done
D=$M/namespaces/dev
mkdir -p "$D"
check "two real nodes turn Ready" wait_for 20 sh -c "grep -q 'reason: KubeletReady' '$M/nodes/$NA.yaml' && grep -q 'reason: KubeletReady' '$M/nodes/$NB.yaml'"
cat >"$D/app.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: busybox
        command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && touch /tmp/ready && exec httpd -f -p 8080 -h /www"]
        ports: [{containerPort: 8080, name: http}]
        readinessProbe: {exec: {command: [test, -f, /tmp/ready]}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: empty}
spec:
  selector: {app: nobody}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: self}
spec:
  selector: {app: self}
  ports: [{port: 80, targetPort: 8080}]
Y
cip() { sed -n 's/^  clusterIP: //p' "$D/services/$1.yaml" | tr -d "'"; }
check "the services get clusterIPs" wait_for 20 sh -c "grep -q 'clusterIP: [0-9]' '$D/services/web.yaml' && grep -q 'clusterIP: [0-9]' '$D/services/empty.yaml' && grep -q 'clusterIP: [0-9]' '$D/services/self.yaml'"
CIP=$(cip web) EIP=$(cip empty)
NP=$(sed -n 's/^ *nodePort: //p' "$D/services/web.yaml" | head -1)
readyips() { awk '/^(- |  )?addresses:/{s=1; next} /^(- |  )?(notReadyAddresses|ports):/{s=0} s && /ip: /{print $NF}' "$D/endpoints/web.yaml" 2>/dev/null | sort | tr '\n' ' '; }
nready() { readyips | wc -w; }
check "both replicas run on real nodes and are Ready in the endpoints" wait_for 60 sh -c "[ \$(awk '/^(- |  )?addresses:/{s=1; next} /^(- |  )?(notReadyAddresses|ports):/{s=0} s && /ip: /' '$D/endpoints/web.yaml' 2>/dev/null | wc -l) = 2 ]"
check "the endpoints name the container port (8080)" grep -q 'port: 8080' "$D/endpoints/web.yaml"
client() { client_pod "$D" "$@"; }
log() { cat "$T/logs/dev_$1_"*/c/*.log 2>/dev/null; }
client c1 "$NA" "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do wget -qO- http://$CIP/; done; echo done"
check "a pod reaches the service by its ClusterIP" wait_for 30 sh -c "cat '$T'/logs/dev_c1_*/c/*.log 2>/dev/null | grep -q '^done'"
check "both replicas answer through it (spread)" sh -c "[ \$(cat '$T'/logs/dev_c1_*/c/*.log | grep '^web-' | sort -u | wc -l) = 2 ]"
HOSTIP=$(sed -n 's/^  hostIP: //p' "$D/pods/c1.yaml" | tr -d "'")
check "the host reaches it by NodePort $HOSTIP:$NP" sh -c "wget -qO- -T 5 http://$HOSTIP:$NP/ | grep -q '^web-'"
client c2 "$NB" "s=\$(date +%s); wget -qO- http://$EIP/; echo elapsed=\$((\$(date +%s) - s)); echo done"
check "a service without endpoints refuses at once (no hang)" wait_for 20 sh -c "cat '$T'/logs/dev_c2_*/c/*.log 2>/dev/null | grep -Eq '^elapsed=[0-2]$'"
cat >"$D/pods/selfie.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: selfie, labels: {app: self}}
spec:
  nodeName: $NA
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sh", "-c", "mkdir -p /www && echo its-me > /www/index.html && (httpd -f -p 8080 -h /www &) && sleep 3 && wget -qO- http://$(cip self)/ && exec sleep 3600"]}]
Y
check "a pod reaches itself through its own service (hairpin)" wait_for 30 sh -c "cat '$T'/logs/dev_selfie_*/c/*.log 2>/dev/null | grep -q its-me"
check "kube-dns is a service with endpoints at the nodes' gateways" wait_for 10 sh -c "grep -q 'clusterIP: 10.96.0.10' '$M/namespaces/kube-system/services/kube-dns.yaml' && grep -q 'port: 10253' '$M/namespaces/kube-system/endpoints/kube-dns.yaml'"
check "dig on the host: web.dev.svc.cluster.local is the ClusterIP" sh -c "[ \"\$(dig @127.0.0.1 -p 10253 +short web.dev.svc.cluster.local)\" = '$CIP' ]"
# The pod may start before node B's proxy has kube-dns's rules (pods start
# in a few tens of ms): it asks until kube-dns answers, 30 times at most.
client c4 "$NB" "i=0; until nslookup web.dev.svc.cluster.local; do i=\$((i + 1)); [ \$i -ge 30 ] && break; sleep 1; done; wget -qO- http://web/ && echo by-short-name; wget -qO- http://web.dev/ && echo by-ns-name; echo done"
check "a pod resolves the service's full name through kube-dns" wait_for 45 sh -c "cat '$T'/logs/dev_c4_*/c/*.log 2>/dev/null | grep -q 'Address.*$CIP'"
check "and reaches it by its short name (search path)" wait_for 10 sh -c "cat '$T'/logs/dev_c4_*/c/*.log | grep -q by-short-name"
check "and by name.namespace" wait_for 10 sh -c "cat '$T'/logs/dev_c4_*/c/*.log | grep -q by-ns-name"
# a replica turning unready leaves the endpoints and the rules
P1=$(pgrep -f '^httpd -f -p 8080 -h /www' | while read -r p; do h=$(nsenter -t "$p" -u hostname 2>/dev/null); case $h in web-*) echo "$p $h"; break ;; esac; done)
PID1=${P1%% *} NAME1=${P1#* }
check "found a replica's process ($NAME1)" test -n "$PID1"
nsenter -t "$PID1" -m -r -- /bin/rm -f /tmp/ready
check "a replica whose readiness probe fails leaves the ready addresses" wait_for 20 sh -c "[ \$(awk '/^(- |  )?addresses:/{s=1; next} /^(- |  )?(notReadyAddresses|ports):/{s=0} s && /ip: /' '$D/endpoints/web.yaml' | wc -l) = 1 ]"
check "and is listed in notReadyAddresses" grep -q 'notReadyAddresses:' "$D/endpoints/web.yaml"
# the nodes' proxies apply the endpoints a moment later: wait for their rules
IP1=$(sed -n 's/^  podIP: //p' "$D/pods/$NAME1.yaml" | tr -d "'")
no_dnat() { # IP: no node's proxy table sends traffic to IP
	local n
	[ -n "$1" ] || return 1
	for n in "$NA" "$NB"; do
		nft list table ip "corral-proxy-$n" >"$T/table.txt" 2>/dev/null || return 1
		! grep -q "dnat to $1:" "$T/table.txt" || return 1
	done
}
check "... and from the nodes' proxy rules ($IP1)" wait_for 10 no_dnat "$IP1"
client c3 "$NB" "for i in 1 2 3 4 5 6 7 8; do wget -qO- http://$CIP/; done; echo done"
check "then only the ready replica answers" wait_for 30 sh -c "cat '$T'/logs/dev_c3_*/c/*.log 2>/dev/null | grep -q '^done' && ! cat '$T'/logs/dev_c3_*/c/*.log | grep -q '^$NAME1\$' && [ \$(cat '$T'/logs/dev_c3_*/c/*.log | grep -c '^web-') = 8 ]"
rm -f "$D/deployments/web.yaml" "$D/services/"*.yaml "$D/pods/"*.yaml
check "everything deleted: no pod state left on the nodes" wait_for 40 sh -c "[ \$(find '$T/nstate/nodes' -mindepth 3 -maxdepth 3 | wc -l) = 0 ]"
stop_all
check "the nodes' tables are gone" sh -c "! nft list tables | grep -q 'corral.*svctest'"
check "no agent logged an error" sh -c "! grep -h -e ' error: ' '$T'/$NA.log '$T'/$NB.log"
[ "$FAILS" = 0 ]
