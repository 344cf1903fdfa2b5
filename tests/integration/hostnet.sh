#!/bin/bash
# Pod networking across hosts (host-gw) in a lab of two hosts (tests/lib/
# lab.sh): one corral-fs over LMDB on the machine (mounted before the
# hosts are made, so that each host's mount namespace has it), corral-ctrl and corral-sched on the machine, and in each host
# a real corral-noded (node lab-I, InternalIP 10.77.0.I) and a corral-dns.
# Each host routes the other's podCIDR through its InternalIP; a pod on
# host 1 reaches a pod on host 2 by IP, through a Service's ClusterIP, and
# by the Service's name, and host 1's NodePort reaches it too; a pod on
# host 2 resolves the name; a pod reaches neither host 2's own address nor
# its gateway nor anything beyond the ranges; nodes that are not reachable
# get no route; a node changed or deleted takes its route along; nothing
# is left afterwards.
#
# Traffic stays in the lab: the hosts' bridge lives in a namespace of its
# own with no link to the machine's network, and the only next hops are
# the lab's 10.77.0.x.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/lab.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_daemons
for t in nsenter python3 wget nft systemd-nspawn; do
	command -v "$t" >/dev/null || { echo "not ok - $t is missing (scripts/deps.sh installs it)"; exit 1; }
done
DPORT=10253 # corral-dns, in each host's own network namespace
LPORT=17171 # a listener of host 2's own, on 0.0.0.0
PIDS=()
NPID=()
DPID=()
H() { echo "$T/lab/h$1"; }
# lab_bg I LOG CMD...: CMD on host I in the background, its output in LOG;
# $! is then CMD itself (nsenter execs it), to be signalled and waited for:
# `lab_exec ... &` would leave a subshell's pid there, and a TERM to it
# would never reach CMD
lab_bg() {
	local i=$1 log=$2
	shift 2
	nsenter -t "${LAB_ANCHOR[$i]}" -m -u -n -- "$@" >>"$log" 2>&1 &
}

stop_noded() { # I: its agent stops, its pods and network with it
	local i=$1
	[ -n "${NPID[$i]:-}" ] || return 0
	kill "${NPID[$i]}" 2>/dev/null
	wait "${NPID[$i]}" 2>/dev/null
	NPID[$i]=
}
final() {
	local p i
	[ -n "${HOSTNET_TEST_LOGS:-}" ] && mkdir -p "$HOSTNET_TEST_LOGS" &&
		cp "$T"/*.log "$HOSTNET_TEST_LOGS"/ 2>/dev/null &&
		for i in 1 2; do for p in "$(H "$i")"/*.log; do cp "$p" "$HOSTNET_TEST_LOGS/h$i-${p##*/}"; done; done
	for i in 1 2; do stop_noded "$i"; done
	for p in "${DPID[@]}" "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${DPID[@]}" "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	lab_down
	cleanup
}
trap final EXIT

# the mount first: the hosts' mount namespaces are copies of the machine's,
# made by lab_up, and see what it held then
start_fs
lab_up 2 || { echo "not ok - the lab did not come up"; exit 1; }
"$CTRL" --mount "$M" --leader-elect=false >>"$T/ctrl.log" 2>&1 &
PIDS+=($!)
"$SCHED" --mount "$M" --leader-elect=false >>"$T/sched.log" 2>&1 &
PIDS+=($!)
for i in 1 2; do
	h=$(H "$i")
	mkdir -p "$h/logs"
	printf '[noded]\nstate = %s/nstate\nimages = %s/images\npod-log-dir = %s/logs\n' "$h" "$h" "$h" >"$h/noded.conf"
	"$ROOT/tools/corral" image build-busybox --images "$h/images" >/dev/null ||
		{ echo "not ok - corral image build-busybox failed"; exit 1; }
	# health and metrics on the host's own loopback: no port is shared
	lab_bg "$i" "$h/dns.log" "$DNS" --mount "$M" --port "$DPORT"
	DPID[$i]=$!
	lab_bg "$i" "$h/noded.log" "$NODED" --mount "$M" --name "lab-$i" --node-ip "$(lab_ip "$i")" \
		--config "$h/noded.conf" --heartbeat-period 1s --cleanup-on-exit
	NPID[$i]=$!
done

ready() { grep -q 'reason: KubeletReady' "$M/nodes/$1.yaml" 2>/dev/null; }
both_ready() { ready lab-1 && ready lab-2; }
check "both hosts' nodes turn Ready" wait_for 30 both_ready
podcidr() { sed -n 's/^  podCIDR: //p' "$M/nodes/$1.yaml" | tr -d "'"; }
PC1=$(podcidr lab-1) PC2=$(podcidr lab-2)
check "the nodes have podCIDRs of their own ($PC1, $PC2)" sh -c "[ -n '$PC1' ] && [ -n '$PC2' ] && [ '$PC1' != '$PC2' ]"
GW2=${PC2%.0/*}.1
routes() { lab_exec "$1" ip -4 route show table main proto 204; }
# route_via I CIDR IP: host I routes CIDR through IP, with corral's protocol
route_via() { routes "$1" | grep -q "^$2 via $3 "; }
no_route() { ! routes "$1" | grep -q "^$2 "; }
check "host 1 routes host 2's podCIDR via 10.77.0.2" wait_for 10 route_via 1 "$PC2" 10.77.0.2
check "host 2 routes host 1's podCIDR via 10.77.0.1" wait_for 10 route_via 2 "$PC1" 10.77.0.1
check "... and neither routes its own podCIDR away (one route each)" sh -c "[ \$(ip netns exec $(lab_ns 1) ip -4 route show proto 204 | wc -l) = 1 ] && [ \$(ip netns exec $(lab_ns 2) ip -4 route show proto 204 | wc -l) = 1 ]"
check "the pod range is still unreachable beyond the nodes' slices" sh -c "ip netns exec $(lab_ns 1) ip -4 route show | grep -q '^unreachable 10.244.0.0/16'"

# host 2's own listener, on every address it has
mkdir -p "$T/www" && echo host-2-listener >"$T/www/index.html"
lab_bg 2 "$T/listener.log" python3 -m http.server "$LPORT" --bind 0.0.0.0 --directory "$T/www"
PIDS+=($!)
listening() { lab_exec 1 wget -qO- -T 2 "http://10.77.0.2:$LPORT/" | grep -q host-2-listener; }
check "host 1 reaches host 2's listener (it is up)" wait_for 10 listening
check "host 2 reaches it on its gateway $GW2" sh -c "ip netns exec $(lab_ns 2) timeout 2 wget -qO- http://$GW2:$LPORT/ | grep -q host-2-listener"

D=$M/namespaces/dev
mkdir -p "$D"
cat >"$D/web.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: lab-2
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: busybox
    command: ["sh", "-c", "mkdir -p /www && echo web-on-lab-2 > /www/index.html && exec httpd -f -p 8080 -h /www"]
    ports: [{containerPort: 8080, name: http}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
Y
has_ip() { grep -q "^  podIP: '\{0,1\}[0-9]" "$D/pods/web.yaml" 2>/dev/null; }
check "the web pod runs on host 2 with an address" wait_for 30 has_ip
WEBIP=$(sed -n 's/^  podIP: //p' "$D/pods/web.yaml" | tr -d "'")
in_endpoints() { grep -q "ip: '\{0,1\}$WEBIP" "$D/endpoints/web.yaml" 2>/dev/null; }
check "the service's only endpoint is it ($WEBIP)" wait_for 20 in_endpoints
CIP=$(sed -n 's/^  clusterIP: //p' "$D/services/web.yaml" | tr -d "'")
NP=$(sed -n 's/^ *nodePort: //p' "$D/services/web.yaml" | head -1)
# both proxies have its endpoint before pods ask
proxied() { lab_exec "$1" nft list table ip "corral-proxy-lab-$1" 2>/dev/null | grep -q "dnat to $WEBIP:8080"; }
both_proxied() { proxied 1 && proxied 2; }
check "both hosts' proxies DNAT $CIP to it" wait_for 10 both_proxied

client() { client_pod "$D" "$@"; }
# a pod's output: host I's pod logs
plog() { cat "$(H "$1")/logs/dev_$2_"*/c/*.log 2>/dev/null; }
# DNS asks until kube-dns answers (a pod may start before its proxy has
# kube-dns's rules), 20 times at most
ASK="i=0; until nslookup web.dev.svc.cluster.local; do i=\$((i + 1)); [ \$i -ge 20 ] && break; sleep 0.5; done"
client byip lab-1 "timeout 5 wget -qO- http://$WEBIP:8080/; echo done"
client bysvc lab-1 "timeout 5 wget -qO- http://$CIP/; echo done"
client dns1 lab-1 "$ASK; timeout 5 wget -qO- http://web.dev.svc.cluster.local/ && echo by-name; echo done"
client dns2 lab-2 "$ASK; echo done"
client fence lab-1 "timeout 5 wget -qO- http://$WEBIP:8080/ && echo CONTROL; timeout 3 wget -qO- http://10.77.0.2:$LPORT/ && echo REACHED-HOST; timeout 3 wget -qO- http://$GW2:$LPORT/ && echo REACHED-GATEWAY; timeout 3 wget -qO- http://10.77.1.1:$LPORT/ && echo REACHED-BEYOND; echo done"
# said I NAME PATTERN: pod NAME of host I printed PATTERN; got: and is done
said() { plog "$1" "$2" | grep -q -- "$3"; }
got() { said "$1" "$2" '^done' && said "$@"; }
nodeport() { lab_exec 1 wget -qO- -T 5 "http://10.77.0.1:$NP/" | grep -q web-on-lab-2; }
check "a pod on host 1 reaches the pod on host 2 by its IP" wait_for 30 got 1 byip web-on-lab-2
check "a pod on host 1 reaches it through the Service's ClusterIP $CIP" wait_for 20 got 1 bysvc web-on-lab-2
check "host 1's NodePort $NP reaches it on host 2" wait_for 10 nodeport
# what a failed DNS check leaves for its reader, as "#! " lines (run.sh
# shows them): the pod's own output, both corral-dns logs, kube-dns's
# Endpoints, each host's rules for them, and each corral-dns asked directly
dns_diag() {
	{
		echo "pod dns2:"; plog 2 dns2 | tail -12
		for i in 1 2; do echo "host $i's corral-dns:"; tail -8 "$(H "$i")/dns.log"; done
		echo "kube-dns endpoints:"; head -30 "$M/namespaces/kube-system/endpoints/kube-dns.yaml"
		for i in 1 2; do echo "host $i's rules for kube-dns:"; lab_exec "$i" nft list ruleset | grep -E '10\.96\.0\.10|:10253' | head -8; done
		for i in 1 2; do echo "host $i asks its corral-dns:"; lab_exec "$i" timeout 3 nslookup -port="$DPORT" web.dev.svc.cluster.local 127.0.0.1 | tail -2; done
	} 2>&1 | sed 's/^/#! /'
}
if wait_for 20 got 2 dns2 "Address.*$CIP"; then
	ok "a pod on host 2 resolves web.dev.svc.cluster.local to $CIP"
else
	fail "a pod on host 2 resolves web.dev.svc.cluster.local to $CIP"
	dns_diag
fi
check "a pod on host 1 resolves it too" wait_for 20 got 1 dns1 "Address.*$CIP"
check "... and reaches the Service by that name" said 1 dns1 by-name
# kube-dns's Endpoints hold both hosts' gateways; a writer that drops one
# (another host's registrar that knows fewer nodes, or a person) is undone
KDE=$M/namespaces/kube-system/endpoints/kube-dns.yaml
gateways() { [ "$(grep -c "ip: '\{0,1\}10\.244\." "$KDE")" = 2 ]; }
check "kube-dns's Endpoints give both hosts' gateways" wait_for 10 gateways
restores() { cat "$(H 1)/dns.log" "$(H 2)/dns.log" | grep -c 'endpoints kube-system/kube-dns: 2 address'; }
R0=$(restores)
sed "/ip: '\{0,1\}$GW2'\{0,1\}\$/d" "$KDE" >"$T/kube-dns.yaml"
check "... a copy without host 2's gateway ($GW2) is written over them" sh -c "! grep -q '$GW2' '$T/kube-dns.yaml' && cp '$T/kube-dns.yaml' '$KDE'"
restored() { gateways && [ "$(restores)" -gt "$R0" ]; }
check "... and corral-dns puts it back" wait_for 10 restored
check "the fenced pod tried everything" wait_for 20 said 1 fence '^done'
check "... and its wget works (it reached the web pod)" said 1 fence CONTROL
refute "a pod on host 1 does not reach host 2's own address 10.77.0.2" said 1 fence REACHED-HOST
refute "... nor host 2's gateway $GW2 (its input chain)" said 1 fence REACHED-GATEWAY
refute "... nor anything beyond the lab's ranges" said 1 fence REACHED-BEYOND
# counter_hit I NODE PATTERN: host I's node table dropped something by the
# rule whose text matches PATTERN
counter_hit() { lab_exec "$1" nft list table ip "corral_crl$(hash8 "$2")" | grep -- "$3" | grep -q 'counter packets [1-9]'; }
check "host 1's forward chain dropped the pod's tries beyond the pod range" counter_hit 1 lab-1 'ip daddr != 10.244.0.0/16 counter'
check "host 2's input chain dropped the try at its gateway" counter_hit 2 lab-2 "ip daddr $GW2 ct state"

# Nodes that are not to be routed, and a node that moves and goes: far's
# InternalIP is beyond every subnet of the hosts, near's on theirs.
fake_node() { # NAME CIDR IP
	printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nspec: {podCIDR: %s}\nstatus:\n  addresses: [{type: InternalIP, address: %s}]\n' "$1" "$2" "$3" >"$M/nodes/$1.yaml"
}
fake_node far 10.244.250.0/24 192.0.2.7
fake_node wide 10.0.0.0/8 10.77.0.7
fake_node near 10.244.251.0/24 10.77.0.9
check "a node on the hosts' subnet is routed (10.244.251.0/24 via 10.77.0.9)" wait_for 10 route_via 1 10.244.251.0/24 10.77.0.9
refute "a node beyond every subnet of the host is not" sh -c "ip netns exec $(lab_ns 1) ip -4 route show | grep -q '10.244.250.0/24'"
refute "a podCIDR wider than the pod range is not (nor does it replace the unreachable route)" sh -c "ip netns exec $(lab_ns 1) ip -4 route show | grep -Eq '^10.0.0.0/8|^10.244.0.0/16 via'"
fake_node near 10.244.251.0/24 10.77.0.8
check "a node's new InternalIP moves its route (via 10.77.0.8)" wait_for 10 route_via 2 10.244.251.0/24 10.77.0.8
rm -f "$M/nodes/near.yaml" "$M/nodes/far.yaml" "$M/nodes/wide.yaml"
gone_both() { no_route 1 10.244.251.0/24 && no_route 2 10.244.251.0/24; }
check "a deleted node's route is gone on both hosts" wait_for 10 gone_both

# Tear down: the pods, then host 2's agent; its node object stays until
# deleted, and with it host 1's route to it.
rm -f "$D/pods/"*.yaml "$D/services/"*.yaml
no_pods() { [ -z "$(find "$(H 1)/nstate/nodes" "$(H 2)/nstate/nodes" -mindepth 3 -maxdepth 3 2>/dev/null)" ]; }
check "the pods are gone from both hosts" wait_for 30 no_pods
stop_noded 2
check "host 2's last agent took its routes with it" sh -c "[ -z \"\$(ip netns exec $(lab_ns 2) ip -4 route show proto 204)\" ]"
check "host 1 keeps its route while node lab-2 exists" route_via 1 "$PC2" 10.77.0.2
rm -f "$M/nodes/lab-2.yaml"
check "node lab-2 deleted: host 1's route to it is gone" wait_for 10 no_route 1 "$PC2"
stop_noded 1
nothing_left() { # I: no route, link or table of corral's in host I
	local ns
	ns=$(lab_ns "$1")
	[ -z "$(ip netns exec "$ns" ip -4 route show proto 204)" ] &&
		! ip netns exec "$ns" ip -4 route show | grep -q '10.244.0.0/16\|10.96.0.0/16' &&
		! ip -n "$ns" -br link | grep -q '^cr[lv]' &&
		! ip netns exec "$ns" nft list tables | grep -q corral
}
check "nothing of corral's is left in host 1 (routes, links, tables)" nothing_left 1
check "nor in host 2" nothing_left 2
for p in "${DPID[@]}"; do kill "$p" 2>/dev/null; done
for p in "${DPID[@]}"; do wait "$p" 2>/dev/null; done
DPID=()
lab_down
check "the lab's namespaces are gone" sh -c "! ip netns list | grep -q '$LAB_PFX'"
check "the machine itself got no route of corral's" sh -c "[ -z \"\$(ip -4 route show proto 204)\" ]"
refute "no agent logged an error" grep -h ' error: ' "$(H 1)/noded.log" "$(H 2)/noded.log"
[ "$FAILS" = 0 ]
