#!/bin/bash
# corral-noded's service proxy (tests/tools/proxy-run) against a real mount,
# in a world of network namespaces this test makes and removes: a "host"
# namespace with a bridge (gateway 10.244.0.1/24) and a node address
# (192.0.2.1, a documentation address, on its loopback), three "pod"
# namespaces on veths of that bridge running busybox httpd. Services and
# Endpoints are written by hand. Nothing touches the real host's network:
# every link, address, route and table lives inside those namespaces.
#
# Checks: ClusterIP from a pod, spread over both endpoints, ClientIP
# affinity, NodePort from the host's own address and from a pod, hairpin
# (a pod reaching itself through its service), no endpoints refused fast,
# an endpoints change applied, UDP, an unchanged world not re-applied, and
# the table gone when proxy-run stops.
. "$(dirname "$0")/../lib/lib.sh"
PROXY=$BUILD/tests/tools/proxy-run
UDP=$BUILD/tests/tools/udp-echo
BB=/usr/bin/busybox
for b in "$PROXY" "$UDP"; do [ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }; done
for c in ip nft "$BB"; do
	command -v "$c" >/dev/null || { echo "not ok - $c is missing"; exit 1; }
done

ID=$$
H=crltest-host-$ID
NSS=() # every namespace made, deleted by the trap
PIDS=() # every process started, killed by PID by the trap
TABLE=crltest-proxy
BR=crl-t$ID
NODE_IP=192.0.2.1
PROXY_PID=

teardown() {
	local p n
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	# deleting a namespace deletes its links, addresses, routes and tables
	for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null; done
	cleanup
}
trap teardown EXIT

in_host() { ip netns exec "$H" "$@"; }
in_pod() { local n=$1; shift; ip netns exec "crltest-$n-$ID" "$@"; }

# ---- the world -------------------------------------------------------------
. "$(dirname "$0")/../lib/netns.sh"
netns_host || { echo "not ok - ip netns add $H"; exit 1; }
in_host ip addr add "$NODE_IP/32" dev lo

# mkpod N ADDR: namespace crltest-N-$ID on the bridge, an httpd on 8080
# answering "N", a UDP server on 5353 answering "N"
mkpod() {
	netns_pod "crltest-$1-$ID" "$1" "$2"
	ip netns exec "crltest-$1-$ID" "$UDP" serve 5353 "$1" &
	PIDS+=($!)
}
mkpod p1 10.244.0.2
mkpod p2 10.244.0.3
mkpod p3 10.244.0.4 # the client, and a pod of service "self"

start_fs
mkdir -p "$M/namespaces/dev"
D=$M/namespaces/dev

# service NAME IP [TYPE] [AFFINITY]: one TCP port 80 (nodePort 30080 + n
# for NodePort services) and one UDP port 53, both named
service() {
	local name=$1 ip=$2 type=${3:-ClusterIP} aff=${4:-None} np=
	[ "$type" = NodePort ] && np=", nodePort: $((30080 + ${#name}))"
	cat >"$D/services/$name.yaml" <<Y
apiVersion: v1
kind: Service
metadata: {name: $name}
spec:
  type: $type
  clusterIP: $ip
  sessionAffinity: $aff
  selector: {app: $name}
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: 8080$np}
  - {name: dns, port: 53, protocol: UDP, targetPort: 5353}
Y
}
# endpoints NAME IP...: ready addresses with ports http 8080, dns 5353
endpoints() {
	local name=$1 a addrs=
	shift
	for a in "$@"; do addrs+="{ip: $a}, "; done
	if [ $# = 0 ]; then
		printf 'apiVersion: v1\nkind: Endpoints\nmetadata: {name: %s}\nsubsets: []\n' "$name" \
			>"$D/endpoints/$name.yaml"
		return
	fi
	cat >"$D/endpoints/$name.yaml" <<Y
apiVersion: v1
kind: Endpoints
metadata: {name: $name}
subsets:
- addresses: [${addrs%, }]
  ports: [{name: http, port: 8080, protocol: TCP}, {name: dns, port: 5353, protocol: UDP}]
Y
}

service web 10.96.0.20 NodePort # nodePort 30083
endpoints web 10.244.0.2 10.244.0.3
service sticky 10.96.0.21 ClusterIP ClientIP
endpoints sticky 10.244.0.2 10.244.0.3
service self 10.96.0.22
endpoints self 10.244.0.4
service empty 10.96.0.23 NodePort # nodePort 30085
endpoints empty

ip netns exec "$H" "$PROXY" --mount "$M" --table "$TABLE" --bridge "$BR" --pod-cidr 10.244.0.0/24 \
	--node-address "$NODE_IP" >"$T/proxy.out" 2>"$T/proxy.log" &
PROXY_PID=$!
PIDS+=($PROXY_PID)
check "proxy-run starts and says ready" wait_for 10 grep -q ready "$T/proxy.out"
check "the table is in the host namespace" in_host nft list table ip "$TABLE"
refute "... and not in the real host's" nft list table ip "$TABLE"

# get NS URL: the body, or nothing (2 s at most)
get() { in_pod "$1" timeout 2 "$BB" wget -q -O - "$2" 2>/dev/null; }
# answers NS URL N: the distinct bodies of N requests, sorted, one line
answers() {
	local i
	for i in $(seq "$3"); do get "$1" "$2"; done | sort -u | tr '\n' ' '
}

check "ClusterIP:80 from a pod answers" sh -c "[ -n \"\$(ip netns exec crltest-p3-$ID timeout 2 $BB wget -q -O - http://10.96.0.20/)\" ]"
A=$(answers p3 http://10.96.0.20/ 20)
check "both endpoints answer over 20 requests (spread): $A" test "$A" = "p1 p2 "
A=$(answers p3 http://10.96.0.21/ 20)
check "ClientIP affinity: one client always reaches one endpoint: $A" sh -c "[ '$A' = 'p1 ' ] || [ '$A' = 'p2 ' ]"
A=$(in_host timeout 2 "$BB" wget -q -O - "http://$NODE_IP:30083/")
check "NodePort on the node's address from the host itself: $A" sh -c "[ '$A' = p1 ] || [ '$A' = p2 ]"
A=$(get p3 "http://$NODE_IP:30083/")
check "NodePort on the node's address from a pod: $A" sh -c "[ '$A' = p1 ] || [ '$A' = p2 ]"
A=$(get p3 http://10.96.0.22/)
check "hairpin: a pod reaches itself through its service's ClusterIP: $A" test "$A" = p3
check "... masqueraded (the mark is kube-proxy's 0x4000)" sh -c "ip netns exec $H nft list table ip $TABLE | grep -q 'meta mark & 0x00004000 == 0x00004000'"

# the same without br_netfilter: what reaches the bridge's address is routed
if in_host sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null; then
	A=$(answers p3 http://10.96.0.20/ 20)
	check "without br_netfilter: both endpoints answer a pod of the same bridge: $A" test "$A" = "p1 p2 "
	A=$(get p3 http://10.96.0.22/)
	check "without br_netfilter: hairpin: $A" test "$A" = p3
	in_host sysctl -qw net.bridge.bridge-nf-call-iptables=1
fi

# refused DEST PORT: a TCP connect from p3 fails with "refused" within 2 s
refused() {
	local out
	out=$(in_pod p3 timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>&1)
	[ $? != 124 ] && echo "$out" | grep -qi refused
}
S=$(date +%s%N)
check "no endpoints: connecting to the ClusterIP is refused (reset), not a hang" refused 10.96.0.23 80
E=$(( ($(date +%s%N) - S) / 1000000 ))
check "... fast (${E} ms)" test "$E" -lt 1000
check "no endpoints: the NodePort is refused too" refused "$NODE_IP" 30085
host_refused() { in_host timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>&1 | grep -qi refused; }
check "... and from the host itself" host_refused "$NODE_IP" 30085
refute "a port the service does not have is not answered" get p3 http://10.96.0.20:81/

udp() { in_pod p3 timeout 2 "$UDP" ask "$1" 53 2>&1; }
A=$(udp 10.96.0.20)
check "UDP: ClusterIP:53 answers from an endpoint: $A" sh -c "[ '$A' = p1 ] || [ '$A' = p2 ]"
udp_refused() { udp "$1" | grep -q 'Connection refused'; }
check "UDP: no endpoints is refused (ICMP port unreachable)" wait_for 3 udp_refused 10.96.0.23

# ---- changes ---------------------------------------------------------------
endpoints web 10.244.0.3
only_p2() { [ "$(answers p3 http://10.96.0.20/ 10)" = "p2 " ]; }
check "an endpoints change is applied: p1 left, only p2 answers" wait_for 5 only_p2
endpoints empty 10.244.0.2
check "a service that had no endpoints answers once it has one" wait_for 5 sh -c "[ \"\$(ip netns exec crltest-p3-$ID timeout 2 $BB wget -q -O - http://10.96.0.23/)\" = p1 ]"
rm "$D/endpoints/web.yaml"
check "endpoints removed: the ClusterIP is refused" wait_for 5 refused 10.96.0.20 80
endpoints web 10.244.0.2 10.244.0.3
check "... and back" wait_for 5 sh -c "[ -n \"\$(ip netns exec crltest-p3-$ID timeout 2 $BB wget -q -O - http://10.96.0.20/)\" ]"
rm "$D/services/self.yaml"
check "a service removed leaves the table" wait_for 5 sh -c "! ip netns exec $H nft list table ip $TABLE | grep -q 10.96.0.22"
handles() { in_host nft -a list table ip "$TABLE" | grep -o '# handle [0-9]*' | sort; }
in_table() { in_host nft list table ip "$TABLE" | grep -q "$1"; }
HANDLES=$(handles)
cp "$D/services/web.yaml" "$T/web.yaml" && cp "$T/web.yaml" "$D/services/web.yaml"
# a change made after it: once the proxy has applied that, it has seen the
# unchanged write too (it takes the informers' events in order)
service probe 10.96.0.24
check "a service written after an unchanged one is applied" wait_for 5 in_table 10.96.0.24
check "an unchanged world is not applied again (same rule handles)" test -z "$(comm -23 <(echo "$HANDLES") <(handles))"
[ -n "$HANDLES" ] || fail "no handles listed"
printf 'not yaml: [' >"$D/services/bad.yaml" 2>/dev/null
cat >"$D/endpoints/sticky.yaml" 2>/dev/null <<'Y'
apiVersion: v1
kind: Endpoints
metadata: {name: sticky}
subsets:
- addresses: [{ip: 8.8.8.8}, {ip: 10.244.0.2}]
  ports: [{name: http, port: 8080}]
Y
# sticky's new endpoints have no dns port: its UDP chain goes once they are applied
check "bad endpoints are applied, the good part of them" wait_for 5 sh -c "! ip netns exec $H nft list table ip $TABLE | grep -q 'chain svc-dev/sticky/udp/53'"
check "proxy-run is still running after bad input" kill -0 "$PROXY_PID"
refute "... and never DNATs outside the pod range" sh -c "ip netns exec $H nft list table ip $TABLE | grep -q 8.8.8.8"

# ---- stop ------------------------------------------------------------------
kill "$PROXY_PID"
wait "$PROXY_PID"
RC=$?
check "proxy-run stops on SIGTERM with status 0 (got $RC)" test "$RC" = 0
refute "the table is removed when proxy-run exits" in_host nft list table ip "$TABLE"
# (the host's ICMP errors are rate-limited per peer: a try may go unanswered)
no_route() { in_pod p3 timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" 2>&1 | grep -qi 'no route'; }
check "ClusterIP traffic then meets the unreachable route (no route to host)" wait_for 10 no_route 10.96.0.20 80
grep -q 'error\|ERROR' "$T/proxy.log" && { echo "# proxy-run's log:"; sed 's/^/# /' "$T/proxy.log"; }
[ "$FAILS" = 0 ]
