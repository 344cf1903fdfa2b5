#!/bin/bash
# corral-dns against a real mount, asked with dig: A for a ClusterIP
# service, headless services (ready addresses only, hostnames), SRV for
# named ports, PTR, pod names, NXDOMAIN and NODATA with the SOA, the
# question's case, TCP, truncation over UDP, a change answered at once,
# the kube-dns Service and Endpoints it keeps, health and metrics over
# HTTP, forwarding to a fake upstream (dnsmasq on loopback) and REFUSED
# without one, running as nobody after binding, and a clean stop on SIGTERM.
#
# Traffic goes to 127.0.0.1 only, on ports no running cluster uses.
. "$(dirname "$0")/../lib/lib.sh"
DNS=${CORRAL_DNS_BIN:-$BUILD/corral-dns}
[ -x "$DNS" ] || { echo "not ok - no $DNS (run make)"; exit 1; }
for t in dig curl dnsmasq; do
	command -v "$t" >/dev/null || { echo "not ok - $t is missing (scripts/deps.sh installs it)"; exit 1; }
done
PORT=10153 HPORT=18081 MPORT=20055 FPORT=10155 UPORT=10154
PIDS=()
stop_all() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}
trap 'stop_all; cleanup' EXIT
start_fs
D=$M/namespaces/dev
mkdir "$D"
cat >"$D/services/web.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: 10.96.1.5
  selector: {app: web}
  ports:
  - {name: http, port: 80, protocol: TCP}
  - {name: metrics, port: 9100, protocol: UDP}
Y
cat >"$D/services/db.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports:
  - {name: pg, port: 5432}
Y
cat >"$D/endpoints/db.yaml" <<'Y'
apiVersion: v1
kind: Endpoints
metadata: {name: db}
subsets:
- addresses:
  - {ip: 10.244.0.5, hostname: db-0}
  - {ip: 10.244.0.6}
  notReadyAddresses:
  - {ip: 10.244.0.7, hostname: db-2}
  ports:
  - {name: pg, port: 5432, protocol: TCP}
Y
cat >"$M/nodes/n1.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.3.0/24}
Y

"$DNS" --mount "$M" --listen 127.0.0.1 --port $PORT --health-port $HPORT --metrics-port $MPORT \
	>>"$T/dns.log" 2>&1 &
DNSPID=$!
PIDS+=($DNSPID)
check "corral-dns answers /healthz with 200 ok" wait_for 10 sh -c "curl -fs http://127.0.0.1:$HPORT/healthz | grep -qx ok"

q() { dig @127.0.0.1 -p $PORT +time=2 +tries=1 "$@"; }
short() { q +short "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }
is() { local want=$1; shift; [ "$(short "$@")" = "$want" ]; }
status_is() { local want=$1; shift; q "$@" | grep -q "status: $want,"; }

check "A: web.dev.svc.cluster.local is its ClusterIP" is 10.96.1.5 web.dev.svc.cluster.local
check "... authoritative (aa)" sh -c "dig @127.0.0.1 -p $PORT web.dev.svc.cluster.local | grep -q 'flags: qr aa'"
check "... in the question's case" sh -c "dig @127.0.0.1 -p $PORT WeB.Dev.svc.cluster.local | grep -q '^WeB.Dev.svc.cluster.local.*IN	A	10.96.1.5'"
check "headless: the ready addresses, not the unready one" is "10.244.0.5 10.244.0.6" db.dev.svc.cluster.local
check "headless: <hostname>.<svc> answers its address" is 10.244.0.5 db-0.db.dev.svc.cluster.local
check "... an unready hostname is NXDOMAIN" status_is NXDOMAIN db-2.db.dev.svc.cluster.local
check "SRV for a named TCP port" is "0 100 80 web.dev.svc.cluster.local." _http._tcp.web.dev.svc.cluster.local SRV
check "SRV for a named UDP port" is "0 100 9100 web.dev.svc.cluster.local." _metrics._udp.web.dev.svc.cluster.local SRV
check "SRV of a headless service: one per ready address" \
	is "0 100 5432 10-244-0-6.db.dev.svc.cluster.local. 0 100 5432 db-0.db.dev.svc.cluster.local." _pg._tcp.db.dev.svc.cluster.local SRV
check "... with the targets' addresses as additional records" sh -c "dig @127.0.0.1 -p $PORT _pg._tcp.db.dev.svc.cluster.local SRV | grep -q 'ADDITIONAL: 3'"
check "PTR of a ClusterIP" is web.dev.svc.cluster.local. -x 10.96.1.5
check "PTR of an endpoint address" is db-0.db.dev.svc.cluster.local. -x 10.244.0.5
check "pod A: 10-244-1-7.dev.pod.cluster.local" is 10.244.1.7 10-244-1-7.dev.pod.cluster.local
check "NXDOMAIN for a name in the zone that does not exist" status_is NXDOMAIN nope.dev.svc.cluster.local
check "... with the SOA in the authority section" sh -c "dig @127.0.0.1 -p $PORT nope.dev.svc.cluster.local | grep -A1 'AUTHORITY SECTION' | grep -q 'SOA	ns.dns.cluster.local. hostmaster.cluster.local.'"
check "NODATA: AAAA of a service is NOERROR without answers" sh -c "dig @127.0.0.1 -p $PORT web.dev.svc.cluster.local AAAA | grep -q 'status: NOERROR.*' && dig @127.0.0.1 -p $PORT web.dev.svc.cluster.local AAAA | grep -q 'ANSWER: 0, AUTHORITY: 1'"
check "... and so is a namespace (an empty non-terminal)" sh -c "dig @127.0.0.1 -p $PORT dev.svc.cluster.local | grep -q 'status: NOERROR' && dig @127.0.0.1 -p $PORT dev.svc.cluster.local | grep -q 'ANSWER: 0, AUTHORITY: 1'"
check "NS at the apex" is ns.dns.cluster.local. cluster.local NS
check "SOA at the apex, as an answer" sh -c "dig @127.0.0.1 -p $PORT +short cluster.local SOA | grep -q '^ns.dns.cluster.local. hostmaster.cluster.local. [0-9]* 7200 1800 86400 5$'"
check "TCP: +tcp gets the same answer" is 10.96.1.5 +tcp web.dev.svc.cluster.local
check "TCP: several queries on one connection" sh -c "dig @127.0.0.1 -p $PORT +tcp +keepopen +short web.dev.svc.cluster.local db-0.db.dev.svc.cluster.local | tr '\n' ' ' | grep -q '10.96.1.5 10.244.0.5'"
check "REFUSED for a name outside the zone without upstreams" status_is REFUSED example.test

# ---- truncation -------------------------------------------------------------
{
	printf 'apiVersion: v1\nkind: Endpoints\nmetadata: {name: big}\nsubsets:\n- addresses:\n'
	for i in $(seq 1 60); do printf '  - {ip: 10.244.9.%d}\n' "$i"; done
} >"$T/big-eps.yaml"
printf 'apiVersion: v1\nkind: Service\nmetadata: {name: big}\nspec: {clusterIP: None, ports: [{port: 80}]}\n' >"$D/services/big.yaml"
cp "$T/big-eps.yaml" "$D/endpoints/big.yaml"
check "60 addresses over UDP without EDNS: TC set, no answers" sh -c "dig @127.0.0.1 -p $PORT +ignore +noedns big.dev.svc.cluster.local | grep -q 'flags: qr aa tc rd; QUERY: 1, ANSWER: 0'"
check "... with +bufsize=600: still TC" sh -c "dig @127.0.0.1 -p $PORT +ignore +bufsize=600 big.dev.svc.cluster.local | grep -q 'flags: qr aa tc rd'"
check "... with +bufsize=1232: all 60" sh -c "dig @127.0.0.1 -p $PORT +ignore +bufsize=1232 big.dev.svc.cluster.local | grep -q 'ANSWER: 60'"
check "... and dig retrying over TCP gets all 60" sh -c "[ \$(dig @127.0.0.1 -p $PORT +noedns +short big.dev.svc.cluster.local | wc -l) = 60 ]"

# ---- changes ----------------------------------------------------------------
printf 'apiVersion: v1\nkind: Endpoints\nmetadata: {name: db}\nsubsets:\n- addresses: [{ip: 10.244.0.5, hostname: db-0}, {ip: 10.244.0.8}]\n  ports: [{name: pg, port: 5432}]\n' >"$T/db2.yaml"
cp "$T/db2.yaml" "$D/endpoints/db.yaml"
check "an Endpoints change is answered" wait_for 10 is "10.244.0.5 10.244.0.8" db.dev.svc.cluster.local
rm "$D/services/web.yaml"
check "a deleted Service is NXDOMAIN" wait_for 10 status_is NXDOMAIN web.dev.svc.cluster.local
check "... and its PTR is gone" sh -c "! dig @127.0.0.1 -p $PORT -x 10.96.1.5 | grep -q 'PTR	web'"
mkdir "$M/namespaces/late"
printf 'apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {clusterIP: 10.96.7.7, ports: [{port: 443}]}\n' >"$M/namespaces/late/services/api.yaml"
check "a Service in a namespace made later is answered" wait_for 10 is 10.96.7.7 api.late.svc.cluster.local

# ---- kube-dns ---------------------------------------------------------------
KS=$M/namespaces/kube-system
check "the kube-dns Service is created" test -f "$KS/services/kube-dns.yaml"
check "... with clusterIP 10.96.0.10" grep -q 'clusterIP: 10.96.0.10' "$KS/services/kube-dns.yaml"
check "... and targetPort the DNS port" sh -c "[ \$(grep -c 'targetPort: $PORT' '$KS/services/kube-dns.yaml') = 2 ]"
refute "... without a selector" grep -q selector "$KS/services/kube-dns.yaml"
check "its Endpoints hold the node's gateway" wait_for 5 grep -q 'ip: 10.244.3.1' "$KS/endpoints/kube-dns.yaml"
check "... on ports dns/UDP and dns-tcp/TCP" sh -c "grep -q 'name: dns-tcp' '$KS/endpoints/kube-dns.yaml' && grep -q 'protocol: UDP' '$KS/endpoints/kube-dns.yaml'"
check "kube-dns.kube-system.svc.cluster.local is 10.96.0.10" is 10.96.0.10 kube-dns.kube-system.svc.cluster.local
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nspec: {podCIDR: 10.244.4.0/24}\n' >"$M/nodes/n2.yaml"
check "a new node's gateway joins the Endpoints" wait_for 5 grep -q 'ip: 10.244.4.1' "$KS/endpoints/kube-dns.yaml"

# ---- health and metrics -----------------------------------------------------
check "GET /healthz on the metrics port too" sh -c "curl -fs http://127.0.0.1:$MPORT/healthz | grep -qx ok"
check "an unknown path is 404" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$HPORT/nope) = 404 ]"
check "POST is 405" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:$HPORT/healthz) = 405 ]"
BIG=$(head -c 5000 /dev/zero | tr '\0' x)
check "a request over 4 KiB is refused (413)" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Big: $BIG' http://127.0.0.1:$HPORT/healthz) = 413 ]"
curl -fs "http://127.0.0.1:$MPORT/metrics" >"$T/metrics.txt"
check "metrics: queries by type" grep -Eq '^corral_dns_requests_total\{type="A"\} [1-9]' "$T/metrics.txt"
check "metrics: responses by rcode" grep -Eq '^corral_dns_responses_total\{rcode="NXDOMAIN"\} [1-9]' "$T/metrics.txt"
check "metrics: REFUSED counted" grep -Eq '^corral_dns_responses_total\{rcode="REFUSED"\} [1-9]' "$T/metrics.txt"
check "metrics: a latency histogram" grep -Eq '^corral_dns_request_duration_seconds_bucket\{le="\+Inf"\} [1-9]' "$T/metrics.txt"
check "metrics: TCP queries counted" grep -Eq '^corral_dns_requests_proto_total\{proto="tcp"\} [1-9]' "$T/metrics.txt"
check "metrics: truncations counted" grep -Eq '^corral_dns_truncated_total [1-9]' "$T/metrics.txt"

# ---- forwarding -------------------------------------------------------------
dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --listen-address=127.0.0.1 \
	--bind-interfaces --port=$UPORT --address=/example.test/192.0.2.1 --user=root \
	--pid-file="$T/dnsmasq.pid" >>"$T/dnsmasq.log" 2>&1 &
UPID=$!
PIDS+=($UPID)
"$DNS" --mount "$M" --listen 127.0.0.1 --port $FPORT --health-port 0 --metrics-port 0 \
	--register-service=false --upstream "127.0.0.1:$UPORT" --forward-timeout 300ms \
	>>"$T/dns-fwd.log" 2>&1 &
FPID=$!
PIDS+=($FPID)
fq() { dig @127.0.0.1 -p $FPORT +time=2 +tries=1 "$@"; }
check "forwarded: example.test from the upstream" wait_for 5 sh -c "[ \"\$(dig @127.0.0.1 -p $FPORT +short example.test)\" = 192.0.2.1 ]"
check "... over TCP too" sh -c "[ \"\$(dig @127.0.0.1 -p $FPORT +tcp +short example.test)\" = 192.0.2.1 ]"
check "... the answer says recursion is available (ra)" sh -c "dig @127.0.0.1 -p $FPORT example.test | grep -q 'flags: qr.* ra'"
check "... while the zone is still answered here" sh -c "[ \"\$(dig @127.0.0.1 -p $FPORT +short db-0.db.dev.svc.cluster.local)\" = 10.244.0.5 ]"
kill "$UPID"
wait "$UPID" 2>/dev/null
check "SERVFAIL when the upstream does not answer" sh -c "dig @127.0.0.1 -p $FPORT +time=3 +tries=1 other.example.test | grep -q 'status: SERVFAIL'"

# ---- privileges -------------------------------------------------------------
"$DNS" --mount "$M" --listen 127.0.0.1 --port $((FPORT + 1)) --health-port 0 --metrics-port 0 \
	--register-service=false --user nobody >>"$T/dns-nobody.log" 2>&1 &
NPID=$!
PIDS+=($NPID)
check "--user nobody: still answers from the mount" wait_for 5 sh -c "[ \"\$(dig @127.0.0.1 -p $((FPORT + 1)) +short db-0.db.dev.svc.cluster.local)\" = 10.244.0.5 ]"
check "... running as nobody" sh -c "[ \"\$(ps -o user= -p $NPID)\" = nobody ]"

# ---- stop -------------------------------------------------------------------
kill -TERM "$DNSPID"
wait "$DNSPID"
rc=$?
check "SIGTERM stops corral-dns cleanly (exit 0)" [ "$rc" = 0 ]
check "... and it says so" grep -q 'stopped' "$T/dns.log"
[ "$FAILS" = 0 ] || { echo "# logs:"; tail -n 5 "$T"/dns*.log | sed 's/^/# /'; }
