#!/bin/bash
# Services against a real mount, with corral-sched and two hollow
# corral-noded nodes: a Deployment of 2 behind a Service gets a clusterIP and
# endpoints with both pod IPs; a named targetPort resolves and a multi-port
# service groups its ports; a requested clusterIP is honoured, a clash, an
# out-of-range address and a taken nodePort are refused at the write by
# corral-fs with the reason in .errors; an address inside corral-fs's range
# but outside corral-ctrl's is refused by corral-ctrl (a condition and an
# event); nodePorts; headless
# services get no address but endpoints; a pod turning unready moves to
# notReadyAddresses within a second; deleting a service removes its
# endpoints and frees its address; a restart of corral-ctrl keeps every
# allocation and hands out no duplicate; a restart of corral-fs still
# refuses a clash (its index is rebuilt from the store).
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
for b in "$CTRL" "$SCHED" "$NODED"; do
	[ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }
done
PIDS=()
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}
trap '[ -n "${SVC_TEST_LOGS:-}" ] && cp "$T"/*.log "$SVC_TEST_LOGS"/; stop_all; cleanup' EXIT
start_fs
start_ctrl() {
	"$CTRL" --mount "$M" --leader-elect=false --service-cidr 10.96.0.0/20 "$@" >>"$T/ctrl.log" 2>&1 &
	CTRL_PID=$!
	PIDS+=($CTRL_PID)
}
"$SCHED" --mount "$M" --leader-elect=false >>"$T/sched.log" 2>&1 &
PIDS+=($!)
for n in 1 2; do
	"$NODED" --mount "$M" --name hollow-$n --hollow --heartbeat-period 1s >>"$T/hollow-$n.log" 2>&1 &
	PIDS+=($!)
done
start_ctrl
mkdir "$M/namespaces/dev"
D=$M/namespaces/dev
svc() { echo "$D/services/$1.yaml"; }
ep() { echo "$D/endpoints/$1.yaml"; }
cip() { sed -n "s/^  clusterIP: //p" "$(svc "$1")" | tr -d "'"; }
# cond NAME: status, reason of the service's Allocated condition
cond() { awk '/^  - lastTransitionTime/{inc=1} inc && /^    reason: /{r=$2} inc && /^    status: /{s=$2} /^    type: Allocated/{gsub("\x27","",s); print s, r; exit}' "$(svc "$1")"; }
# ips FILE SECTION: the sorted ips of addresses or notReadyAddresses
ips() {
	awk -v want="$2" '/^(- |  )?addresses:/{sec="addresses"; next} /^(- |  )?notReadyAddresses:/{sec="notReadyAddresses"; next} /^(- |  )?ports:/{sec=""; next} /^[a-z]/{sec=""} sec == want && /^  (- |  )ip: /{print $NF}' "$1" | tr -d "'" | sort | tr '\n' ' '
}
pod_ips() { for f in "$D"/pods/"$1"-*.yaml; do sed -n 's/^  podIP: //p' "$f" | tr -d "'"; done | sort | tr '\n' ' '; }
mksvc() { # NAME YAML-SPEC
	cat >"$(svc "$1")" <<Y
apiVersion: v1
kind: Service
metadata: {name: $1, labels: {tier: $1}}
spec: $2
Y
}

# ---- a Deployment of 2 behind a Service ----------------------------------------
cat >"$D/deployments/web.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: busybox
        ports: [{name: http, containerPort: 8080}, {name: metrics, containerPort: 9100}]
Y
check "hollow nodes register" wait_for 15 readable "$M/nodes/hollow-1.yaml" "$M/nodes/hollow-2.yaml"
mksvc web "{selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}"
check "a Service gets a clusterIP in 10.96.0.0/16" wait_for 5 sh -c "sed -n 's/^  clusterIP: //p' '$(svc web)' | grep -q '^10\.96\.'"
check "... and clusterIPs with it" sh -c "grep -A1 '^  clusterIPs:' '$(svc web)' | grep -q -- '- $(cip web)'"
check "... and the condition Allocated True" test "$(cond web)" = "True Allocated"
both_ready() { [ "$(ls "$D"/pods/web-*.yaml 2>/dev/null | wc -l)" = 2 ] && [ "$(pod_ips web | wc -w)" = 2 ]; }
check "the Deployment's 2 pods run with pod IPs" wait_for 20 both_ready
have_ips() { [ -s "$(ep "$1")" ] && [ "$(ips "$(ep "$1")" "$2")" = "$3" ]; }
check "... exactly the two pods' IPs" wait_for 5 have_ips web addresses "$(pod_ips web)"
check "... with the targetPort 8080 as port, protocol TCP" sh -c "grep -Eq '^  (- |  )port: 8080' '$(ep web)' && grep -Eq '^  (- |  )protocol: TCP' '$(ep web)'"
check "... with nodeName and a targetRef to each Pod" sh -c "grep -q 'nodeName: hollow-' '$(ep web)' && [ \$(grep -c 'kind: Pod' '$(ep web)') = 2 ]"
check "... labelled as the service" grep -q 'tier: web' "$(ep web)"
# the history is written behind the store: look once it has caught up
history_settle
check "endpoints are not in the history" sh -c "! git --git-dir='$S/history.git' log --oneline -- namespaces/dev/endpoints | grep -q ."
check "the clusterIP is in the history (the service's declared spec)" sh -c "git --git-dir='$S/history.git' show HEAD:namespaces/dev/services/web.yaml 2>/dev/null | grep -q 'clusterIP: $(cip web)' || git --git-dir='$S/history.git' log -p -- namespaces/dev/services/web.yaml | grep -q 'clusterIP: $(cip web)'"

# ---- a named targetPort, several ports ------------------------------------------
mksvc named "{selector: {app: web}, ports: [{name: http, port: 80, targetPort: http}, {name: metrics, port: 9090, targetPort: metrics}]}"
check "a named targetPort resolves to the pods' containerPort" wait_for 5 sh -c "grep -q '^    port: 8080' '$(ep named)' && grep -q '^    port: 9100' '$(ep named)'"
check "... both ports in one subset with both addresses" sh -c "[ \$(grep -c '^- addresses:' '$(ep named)') = 1 ] && [ \$(grep -c 'name: http' '$(ep named)') = 1 ]"
mksvc unnamed "{selector: {app: web}, ports: [{port: 80}, {port: 81}]}" 2>/dev/null
refute "a multi-port service without port names is refused" test -e "$(svc unnamed)"
check "... with the reason in .errors" grep -q 'ports\[0\].name: Required value' "$M/.errors"

# ---- requested, clashing and out-of-range addresses -----------------------------
mksvc req "{selector: {app: web}, clusterIP: 10.96.0.50, ports: [{port: 80}]}"
check "a requested clusterIP is honoured" wait_for 5 sh -c "[ \"\$(awk '/^    type: Allocated/{f=1} END{print f}' '$(svc req)')\" = 1 ]"
check "... it keeps 10.96.0.50 and is Allocated" sh -c "[ '$(cip req)' = 10.96.0.50 ] && grep -q 'reason: Allocated' '$(svc req)'"
refute "a clashing clusterIP is refused at the write" mksvc clash "{selector: {app: web}, clusterIP: 10.96.0.50, ports: [{port: 80}]}"
check "... and not stored" test ! -e "$(svc clash)"
check "... with a clear message naming the holder in .errors" grep -q 'Service "clash" is invalid: spec.clusterIP: Invalid value: "10.96.0.50": provided IP is already allocated (to service dev/req)' "$M/.errors"
refute "an address outside the service range is refused at the write" mksvc far "{selector: {app: web}, clusterIP: 10.97.0.5, ports: [{port: 80}]}"
check "... with the range in .errors" grep -q '"10.97.0.5": provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16' "$M/.errors"
# corral-fs takes 10.96.0.0/16, this corral-ctrl only 10.96.0.0/20.
mksvc outer "{selector: {app: web}, clusterIP: 10.96.200.1, ports: [{port: 80}]}"
check "an address corral-ctrl's range lacks is refused by it: Allocated False, ClusterIPOutOfRange" wait_for 5 sh -c "grep -q 'reason: ClusterIPOutOfRange' '$(svc outer)' && grep -q \"status: 'False'\" '$(svc outer)'"
check "... with Kubernetes' message" grep -q 'The range of valid IPs is 10.96.0.0/20' "$(svc outer)"
check "... and a Warning event" wait_for 5 sh -c "grep -l 'reason: ClusterIPOutOfRange' '$D'/events/*.yaml | xargs grep -q 'type: Warning'"
mksvc dns "{selector: {app: web}, clusterIP: 10.96.0.10, ports: [{name: dns, port: 53, protocol: UDP}]}"
allocated() { grep -q 'reason: Allocated' "$(svc "$1")" && [ "$(cip "$1")" = "$2" ]; } # NAME IP
check "the reserved .10 is given to a service that asks for it" wait_for 5 allocated dns 10.96.0.10

# ---- nodePorts --------------------------------------------------------------------
mksvc np "{type: NodePort, selector: {app: web}, ports: [{name: a, port: 80}, {name: b, port: 81, nodePort: 31002}]}"
np_of() { sed -n 's/^    nodePort: //p' "$(svc "$1")" | sort -n | tr '\n' ' '; }
check "a NodePort service gets a nodePort in 30000-32767, a requested one is kept" wait_for 5 sh -c "grep -q 'reason: Allocated' '$(svc np)' && [ \$(sed -n 's/^    nodePort: //p' '$(svc np)' | wc -l) = 2 ] && sed -n 's/^    nodePort: //p' '$(svc np)' | grep -q 31002 && sed -n 's/^    nodePort: //p' '$(svc np)' | grep -v 31002 | awk '{exit !(\$1 >= 30000 && \$1 <= 32767)}'"
refute "a taken nodePort is refused at the write" mksvc np2 "{type: NodePort, selector: {app: web}, ports: [{port: 80, nodePort: 31002}]}"
check "... naming the holder in .errors" grep -q 'spec.ports\[0\].nodePort: Invalid value: 31002: provided port is already allocated (to service dev/np)' "$M/.errors"

# ---- headless ---------------------------------------------------------------------
mksvc hl "{clusterIP: None, selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}"
check "a headless service gets endpoints with both pods" wait_for 5 have_ips hl addresses "$(pod_ips web)"
check "... and no address (clusterIP stays None)" test "$(cip hl)" = None
check "... its endpoints carry the headless label" grep -q 'service.kubernetes.io/headless' "$(ep hl)"
mksvc nosel "{ports: [{port: 80}]}"
check "a service without a selector gets an address" wait_for 5 grep -q 'reason: Allocated' "$(svc nosel)"

# ---- readiness ----------------------------------------------------------------------
# A pod on a node no agent runs, whose status this test writes through the mount.
podfile=$D/pods/manual.yaml
manual() { # READY(True|False)
	cat >"$podfile" <<Y
apiVersion: v1
kind: Pod
metadata: {name: manual, labels: {app: manual}}
spec:
  nodeName: ghost
  containers: [{name: c, image: busybox}]
status:
  phase: Running
  podIP: 10.244.250.7
  conditions: [{type: Ready, status: '$1'}]
Y
}
manual True
mksvc manual "{selector: {app: manual}, ports: [{port: 80}]}"
check "a ready pod written by hand is a ready address" wait_for 5 have_ips manual addresses "10.244.250.7 "
# the endpoints controller has seen nosel: it wrote those of a service made after it
check "... and no endpoints from us for the service without a selector" test ! -e "$(ep nosel)"
manual False
t0=$(date +%s%N)
wait_for 5 have_ips manual notReadyAddresses "10.244.250.7 "
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
check "a pod turning unready moves to notReadyAddresses within a second (${ms} ms)" test "$ms" -lt 1000
check "... and leaves the addresses" test "$(ips "$(ep manual)" addresses)" = ""
manual True
check "... and back when ready again" wait_for 10 have_ips manual addresses "10.244.250.7 "
mksvc pnr "{selector: {app: manual}, publishNotReadyAddresses: true, ports: [{port: 80}]}"
manual False
check "publishNotReadyAddresses lists an unready pod in addresses" wait_for 5 sh -c "[ -s '$(ep pnr)' ] && grep -q '^  - ip: 10.244.250.7\|^    ip: 10.244.250.7' '$(ep pnr)' && ! grep -q notReadyAddresses '$(ep pnr)'"
cat >"$D/pods/hosted.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: hosted, labels: {app: manual}}
spec: {nodeName: ghost, hostname: db-0, subdomain: manual, containers: [{name: c, image: busybox}]}
status: {phase: Running, podIP: 10.244.250.8, conditions: [{type: Ready, status: 'True'}]}
Y
check "a pod with hostname and subdomain = the service has its hostname" wait_for 5 grep -q 'hostname: db-0' "$(ep manual)"

# ---- deleting and freeing -------------------------------------------------------------
rm "$(svc req)"
check "deleting a service removes its endpoints" wait_for 5 test ! -e "$(ep req)"
mksvc again "{selector: {app: web}, clusterIP: 10.96.0.50, ports: [{port: 80}]}"
check "... and frees its address: a new service takes it" wait_for 5 allocated again 10.96.0.50
refute "the reserved .10 is refused to another while the dns service holds it" mksvc dns2 "{selector: {app: web}, clusterIP: 10.96.0.10, ports: [{port: 80}]}"
rm "$(svc dns)"
check "... and given once it is freed" mksvc dns2 "{selector: {app: web}, clusterIP: 10.96.0.10, ports: [{port: 80}]}"
check "... Allocated" wait_for 5 grep -q 'reason: Allocated' "$(svc dns2)"
rm "$(svc outer)"

# ---- restart -----------------------------------------------------------------------------
# every service has its address before they are noted (pnr and manual were
# not waited for)
all_have_ips() { for f in "$D"/services/*.yaml; do grep -q '^  clusterIP: ' "$f" || return 1; done; }
wait_for 10 all_have_ips || fail "every service has a clusterIP"
before=$(for f in "$D"/services/*.yaml; do echo "$(basename "$f") $(sed -n 's/^  clusterIP: //p' "$f")"; done)
kill "$CTRL_PID"
wait "$CTRL_PID" 2>/dev/null
# While no corral-ctrl runs: one service without an address, and one that
# asks for the lowest free address, the one the restarted controller would
# hand out first. Whichever it decides first, the one that asked keeps it
# (corral-fs refuses the controller's write if it gives it to the other).
used=$(sed -n 's/^  clusterIP: //p' "$D"/services/*.yaml)
for i in $(seq 2 255); do [ "$i" != 10 ] && ! grep -qx "10.96.0.$i" <<<"$used" && break; done
lowest=10.96.0.$i
mksvc aaa-auto "{selector: {app: web}, ports: [{port: 80}]}"
mksvc zzz-asks "{selector: {app: web}, clusterIP: $lowest, ports: [{port: 80}]}"
start_ctrl
check "a service that asked for the next free address keeps it" wait_for 10 sh -c "grep -q 'reason: Allocated' '$(svc zzz-asks)' && grep -q 'reason: Allocated' '$(svc aaa-auto)'"
check "... and the other gets another" sh -c "[ '$(cip zzz-asks)' = $lowest ] && [ -n \"\$(sed -n 's/^  clusterIP: //p' '$(svc aaa-auto)')\" ] && ! grep -q '^  clusterIP: $lowest\$' '$(svc aaa-auto)'"
for i in 1 2 3 4 5; do mksvc "post$i" "{selector: {app: web}, ports: [{port: 80}]}"; done
check "after a restart new services get addresses" wait_for 10 sh -c "for i in 1 2 3 4 5; do grep -q 'reason: Allocated' '$D/services/post'\$i.yaml || exit 1; done"
after=$(for f in "$D"/services/*.yaml; do case $f in */post* | */aaa-auto.yaml | */zzz-asks.yaml) ;; *) echo "$(basename "$f") $(sed -n 's/^  clusterIP: //p' "$f")" ;; esac; done)
check "... the services from before keep theirs" test "$before" = "$after"
dups=$(sed -n 's/^  clusterIP: //p' "$D"/services/*.yaml | grep -v None | sort | uniq -d)
check "... and no address is held twice" test -z "$dups"
check "... nor .1 handed out unasked" sh -c "! sed -n 's/^  clusterIP: //p' '$D'/services/*.yaml | grep -qx 10.96.0.1"
check "corral-ctrl logged no error" sh -c "! grep -q ' error' '$T/ctrl.log'"
held=$(cip again)
stop_all
stop_fs
start_fs
refute "after a restart of corral-fs a clash is still refused at the write" mksvc clash2 "{clusterIP: $held, ports: [{port: 80}]}"
check "... naming the holder" grep -q "provided IP is already allocated (to service dev/again)" "$M/.errors"
exit $((FAILS > 0))
