#!/bin/bash
# Several hosts (issue 18's user story) in a lab of three (tests/lib/lab.sh):
# network namespaces on a private bridge, each with its own mount and UTS
# namespaces, /cluster and etcd member. `corral up --store etcd://...` on
# host 1, `corral up --join --pki` with a copy of its PKI on hosts 2 and 3:
# one node per host named for it, one active corral-ctrl and corral-sched,
# corral-dns on every host; the options refused as documented; a
# namespace and a Deployment made on host 1 seen by inotify on the others
# at the same resourceVersion; the same history on every host; two hosts
# writing one object over one resourceVersion: exactly one wins; the log
# of a pod on host 1 read on host 3; then host 1, which holds every lead
# (corral-ctrl's and corral-sched's Leases, the history's trimmer), killed
# (every process, its etcd member and its pods included) during writes
# from hosts 2 and 3: nothing acknowledged lost, writes go on within etcd's
# election, the survivors take the Leases and the trimmer over, the
# history goes on, its pods replaced on hosts 2 and 3. Last, `corral up
# --etcd-local` on a fourth host alone, and `corral down` stopping its
# etcd.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/lab.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORRAL=$ROOT/tools/corral
for b in corral-ctrl corral-sched corral-dns corral-noded; do
	[ -x "$BUILD/$b" ] || { echo "not ok - no $BUILD/$b (run make)"; exit 1; }
done
for c in etcd inotifywait systemd-nspawn openssl curl nsenter; do
	command -v $c >/dev/null || { echo "not ok - $c is missing"; exit 1; }
done
# Each host's /cluster is its own mount; a /cluster the machine mounts
# itself would show in every host (slave propagation): then a folder of ours.
LM=/cluster
mountpoint -q /cluster 2>/dev/null && LM=$T/cluster
mkdir -p "$LM" || { echo "not ok - cannot create $LM"; exit 1; }
NS=$LM/namespaces/dev
UP=() # hosts where corral up was run
WPIDS=() # inotifywait
BPIDS=() # the writers of the burst

hosts_down() {
	local i p
	for p in "${WPIDS[@]}" "${BPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for i in "${UP[@]}"; do
		lab_exec "$i" "$CORRAL" down --mount "$LM" --state "$T/lab/h$i/state" >>"$T/lab/h$i/down.log" 2>&1
	done
	if [ -n "${HOSTS_TEST_LOGS:-}" ]; then
		mkdir -p "$HOSTS_TEST_LOGS" && cp -r "$T"/lab "$T"/*.out "$HOSTS_TEST_LOGS"/ 2>/dev/null
	fi
	# A killed host's agent could not remove its nodes' cgroups (the
	# machine's, in every hierarchy: v2, or v1 and hybrid): once nothing
	# of the host runs, the empty ones go.
	local d
	for ((i = 1; i <= LAB_N; i++)); do
		lab_kill_host "$i"
		for d in /sys/fs/cgroup/corral/"$(hash8 "lab-$i")" /sys/fs/cgroup/*/corral/"$(hash8 "lab-$i")"; do
			[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	done
	lab_down
}
trap 'hosts_down; cleanup' EXIT

# on I CMD...: CMD on host I, its output kept quiet
on() { lab_exec "$@"; }
# store_for I: the store's members, host I's own first (as a host would
# list them: its requests go to its own member while it lives)
store_for() {
	local j s=etcd://$(lab_ip "$1"):2379
	for ((j = 1; j <= 3; j++)); do [ "$j" = "$1" ] || s+=,$(lab_ip "$j"):2379; done
	echo "$s"
}
# readable_on I FILE...: every FILE reads back as an object on host I
readable_on() { on "$1" sh -c 'for f; do grep -q "^kind:" "$f" || exit 1; done' sh "${@:2}"; }
rev_on() { on "$1" cat "$2" 2>/dev/null | sed -n "s/^  resourceVersion: '\{0,1\}\([0-9]*\)'\{0,1\}\$/\1/p" | head -1; }

START=$SECONDS
lab_up 4 || { echo "not ok - the lab did not come up"; exit 1; }
lab_etcd_up 3 || { echo "not ok - the lab's etcd did not come up"; exit 1; }
ok "a lab of three hosts, an etcd member on each"
for i in 1 2 3 4; do
	[ "$(on $i uname -n)" = "lab-$i" ] || fail "host $i's uname -n is lab-$i ($(on $i uname -n))"
done

"$CORRAL" image build-busybox --images "$T/images" >/dev/null 2>&1 ||
	{ echo "not ok - corral image build-busybox failed"; exit 1; }
GRACE=3 TOL=1
for i in 1 2 3 4; do
	mkdir -p "$T/lab/h$i/logs"
	cat >"$T/lab/h$i/corral.conf" <<EOF
[fs]
pod-log-dir = $T/lab/h$i/logs
default-not-ready-toleration-seconds = $TOL
default-unreachable-toleration-seconds = $TOL
[ctrl]
node-monitor-grace-period = ${GRACE}s
node-eviction-rate = 100
leader-elect-lease-duration = 6s
leader-elect-renew-deadline = 4s
leader-elect-retry-period = 1s
[sched]
leader-elect-lease-duration = 6s
leader-elect-renew-deadline = 4s
leader-elect-retry-period = 1s
[noded]
state = $T/lab/h$i/nstate
images = $T/images
pod-log-dir = $T/lab/h$i/logs
heartbeat-period = 1s
node-lease-renew-interval = 1s
EOF
done
# up I ARGS...: corral up on host I, its state under the lab's folder
up() {
	local i=$1
	shift
	on "$i" "$CORRAL" up --state "$T/lab/h$i/state" --mount "$LM" --config "$T/lab/h$i/corral.conf" \
		--serve-port 10250 "$@" >>"$T/lab/h$i/up.log" 2>&1
}

# ---- the first host ----------------------------------------------------------------
UP+=(1)
up 1 --store "$(store_for 1)" ||
	{ echo "not ok - corral up --store etcd://... on host 1: $(tail -3 "$T/lab/h1/up.log")"; exit 1; }
ok "corral up --store etcd://... on host 1"
node_ready_on() { on "$1" grep -q "^kind: Node" "$LM/nodes/$2.yaml"; }
check "host 1's node is lab-1" wait_for 20 node_ready_on 1 lab-1
rootca() { on 1 test -s "$LM/namespaces/default/configmaps/kube-root-ca.crt.yaml"; }
check "host 1's corral-ctrl publishes the cluster CA" wait_for 20 rootca

# ---- the options, refused --------------------------------------------------------------
# refused WHAT PATTERN ARGS...: corral up ARGS on host 4 fails, saying PATTERN
refused() {
	local what=$1 pat=$2 out
	shift 2
	if out=$(on 4 "$CORRAL" up --state "$T/lab/h4/bad" --mount "$T/bad" "$@" 2>&1); then
		fail "$what (it went up: $out)"
		on 4 "$CORRAL" down --mount "$T/bad" >/dev/null 2>&1
	elif grep -q -- "$pat" <<<"$out"; then ok "$what"
	else fail "$what (said: $out)"; fi
}
refused "--join without --store is refused" "give its --store" --join
refused "--etcd-local with --store is refused" "without --store" --etcd-local --store "$LAB_STORE"
refused "--etcd-local with --join is refused" "nothing to --join" --etcd-local --join
refused "--etcd-local=PORT wants a port" "wants a client port" --etcd-local=x
refused "--store wants etcd:// URLs" "wants etcd://" --store http://10.77.0.1:2379
refused "--pki wants a folder" "is not a folder" --pki "$T/nowhere"
mkdir -p "$T/badpki"
cp "$T/lab/h1/state/pki/ca.crt" "$T/lab/h1/state/pki/sa.pub" "$T/badpki/"
refused "--pki wants the four files" "ca.key is missing" --pki "$T/badpki"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/badpki/ca.key" 2>/dev/null
cp "$T/lab/h1/state/pki/sa.key" "$T/badpki/"
refused "--pki wants ca.key to be ca.crt's key" "is not the key of" --pki "$T/badpki"
refused "--join needs the cluster's PKI" "needs the cluster's CA" --store "$(store_for 2)" --join
# host 2 without --join would bring a CA of its own into the cluster
out=$(on 2 "$CORRAL" up --state "$T/lab/h2/stray" --mount "$LM" --config "$T/lab/h2/corral.conf" \
	--nodes 0 --store "$(store_for 2)" 2>&1)
rc=$?
check "a second host without --join is refused: the store holds another CA" \
	test "$rc" != 0 -a -n "$(grep 'holds a cluster made with another CA' <<<"$out")"
refute "and it left nothing mounted" on 2 mountpoint -q "$LM"
refute "and nothing running" on 2 pgrep -f "state $T/lab/h2/stray"

# ---- hosts 2 and 3 join ------------------------------------------------------------
# the first host's PKI as a person would copy it (scp): the four files
PKI=$T/pki-copy
mkdir -p "$PKI" && cp "$T"/lab/h1/state/pki/{ca.crt,ca.key,sa.key,sa.pub} "$PKI"/
UP+=(2 3)
up 2 --store "$(store_for 2)" --join --pki "$PKI" &
j2=$!
up 3 --store "$(store_for 3)" --join --pki "$PKI" &
j3=$!
wait "$j2" || { echo "not ok - corral up --join --pki on host 2: $(tail -3 "$T/lab/h2/up.log")"; exit 1; }
wait "$j3" || { echo "not ok - corral up --join --pki on host 3: $(tail -3 "$T/lab/h3/up.log")"; exit 1; }
ok "corral up --join --pki on hosts 2 and 3"
for i in 1 2 3; do
	check "host $i's corral status: all alive" on $i "$CORRAL" status --mount "$LM"
done
nodes_everywhere() {
	local i n
	for i in 1 2 3; do for n in lab-1 lab-2 lab-3; do node_ready_on $i $n || return 1; done; done
}
check "nodes lab-1, lab-2 and lab-3 registered, seen on every host" wait_for 20 nodes_everywhere
check "every host uses the cluster's CA and service-account key" sh -c \
	"cmp '$T/lab/h1/state/pki/ca.crt' '$T/lab/h2/state/pki/ca.crt' && cmp '$T/lab/h1/state/pki/ca.crt' '$T/lab/h3/state/pki/ca.crt' &&
	 cmp '$T/lab/h1/state/pki/sa.key' '$T/lab/h3/state/pki/sa.key'"
check "host 3's node certificate is signed by the cluster CA" \
	openssl verify -CAfile "$T/lab/h1/state/pki/ca.crt" "$T/lab/h3/state/pki/node-lab-3.crt"
sc_commits() { on "$1" git -C "$LM" log --format=%H -- storageclasses/local-path.yaml | wc -l; }
check "the StorageClass of the first run is written once, by host 1" test "$(sc_commits 1)" = 1

# ---- leaders ------------------------------------------------------------------------
# leads NAME: which hosts' NAME logs say they lead its Lease (one line each)
leads() { grep -l "now leads kube-system/$1\$" "$T"/lab/h[123]/state/log/"$1".log 2>/dev/null | wc -l; }
waiting() { grep -l "kube-system/$1 is held by" "$T"/lab/h[123]/state/log/"$1".log 2>/dev/null | wc -l; }
R=1 # the host that reads (host 1 until it is killed)
lease_holder() { on "$R" sed -n 's/^  holderIdentity: //p' "$LM/namespaces/kube-system/leases/$1.yaml" | tr -d "'\""; }
one_leader() { [ "$(leads "$1")" = 1 ] && [ "$(waiting "$1")" = 2 ]; }
held_by_host1() { case $(lease_holder "$1") in lab-1_*) return 0 ;; esac; return 1; }
for d in corral-ctrl corral-sched; do
	check "$d runs on every host: one leads, the other two wait" wait_for 10 one_leader $d
	check "$d: its Lease is held by host 1's" held_by_host1 $d
done
dns_health() { on "$1" curl -sf -m 1 http://127.0.0.1:8081/health >/dev/null || on "$1" curl -sf -m 1 http://127.0.0.1:8081/healthz >/dev/null; }
for i in 1 2 3; do check "corral-dns answers on host $i (each host serves DNS; no election)" wait_for 10 dns_health $i; done

# ---- a namespace and a Deployment, seen everywhere ----------------------------------
# watch I NAME FOLDER: inotifywait on host I into $T/NAME.ev, set up
watch() {
	on "$1" inotifywait -m -e create,close_write,moved_to --format '%e %f' "$3" >"$T/$2.ev" 2>"$T/$2.err" &
	WPIDS+=($!)
	wait_for 5 grep -q 'Watches established' "$T/$2.err"
}
watch 3 ns3 "$LM/namespaces" || fail "inotifywait on host 3's namespaces/"
on 1 mkdir "$NS"
for i in 2 3; do
	check "namespace dev made on host 1 is on host $i" wait_for 10 on $i test -d "$NS/deployments"
done
check "host 3's inotify saw it created (IN_CREATE)" wait_for 5 grep -q 'CREATE,ISDIR dev$' "$T/ns3.ev"
watch 2 dep2 "$NS/deployments" || fail "inotifywait on host 2's deployments/"
# deployment NAME REPLICAS [FIRST]: a Deployment of busybox pods (one
# container, app) that say FIRST, then wait, and stop at once on SIGTERM
deployment() {
	cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: busybox
        command: [sh, -c, "echo ${3:-started}; trap 'exit 0' TERM; while :; do sleep 1; done"]
EOF
}
deployment web 1 >"$T/web.yaml"
t0=$(date +%s%N)
on 1 cp "$T/web.yaml" "$NS/"
check "a Deployment copied into host 1's drop box: host 2's inotify sees deployments/web.yaml" \
	wait_for 10 grep -qE '(CLOSE_WRITE,CLOSE|MOVED_TO) web.yaml' "$T/dep2.ev"
echo "# host 1's cp to host 2's event: $((($(date +%s%N) - t0) / 1000000)) ms at most (through the drop box)"
same_rev() { local a b; a=$(rev_on 1 "$NS/deployments/web.yaml") b=$(rev_on 2 "$NS/deployments/web.yaml"); [ -n "$a" ] && [ "$a" = "$b" ]; }
check "and reads it at host 1's resourceVersion" wait_for 5 same_rev

# a direct write: host 1's close to host 2's event
watch 2 cm2 "$NS/configmaps" || fail "inotifywait on host 2's configmaps/"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: "1"}\n' >"$T/c1.yaml"
t0=$(date +%s%N)
on 1 cp "$T/c1.yaml" "$NS/configmaps/c1.yaml"
wait_for 5 grep -q 'CLOSE_WRITE,CLOSE c1.yaml' "$T/cm2.ev"
t1=$(date +%s%N)
check "a write on host 1 raises IN_CLOSE_WRITE on host 2 ($(((t1 - t0) / 1000000)) ms)" grep -q 'CLOSE_WRITE,CLOSE c1.yaml' "$T/cm2.ev"
check "at the same resourceVersion" test "$(rev_on 1 "$NS/configmaps/c1.yaml")" = "$(rev_on 2 "$NS/configmaps/c1.yaml")"

# ---- conflicts between hosts -----------------------------------------------------------
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: race}\ndata: {w: "0"}\n' >"$T/race.yaml"
on 1 cp "$T/race.yaml" "$NS/configmaps/race.yaml"
wins=0
for round in 1 2 3; do
	r=$(rev_on 1 "$NS/configmaps/race.yaml")
	race_seen() { [ "$(rev_on 3 "$NS/configmaps/race.yaml")" = "$r" ]; }
	wait_for 5 race_seen
	CP=()
	for h in 1 3; do
		printf "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: race, resourceVersion: '%s'}\ndata: {w: h%s-%s}\n" \
			"$r" "$h" "$round" >"$T/race.$h"
		(on $h cp "$T/race.$h" "$NS/configmaps/race.yaml" 2>/dev/null && echo won >"$T/won.$h") &
		CP+=($!)
	done
	wait "${CP[@]}"
	n=0
	for h in 1 3; do [ -e "$T/won.$h" ] && n=$((n + 1)); rm -f "$T/won.$h"; done
	[ "$n" = 1 ] && wins=$((wins + 1))
done
check "hosts 1 and 3 writing one object over one resourceVersion: exactly one wins (3 rounds)" test "$wins" = 3

# ---- the history, on every host --------------------------------------------------------
# The settle marker from host 1; each host's history reaches it (its
# Corral-Revision), and then every host's HEAD holds the same namespace dev
# (made after every host was up: a host's history begins when it joins,
# corral(8)) and the same number of commits for each of its files (a
# batch never holds two changes of one file; batches may differ).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settle}\ndata: {m: "%s"}\n' "$(date +%s%N)" >"$T/settle.yaml"
on 1 cp "$T/settle.yaml" "$NS/configmaps/settle.yaml"
SR=$(rev_on 1 "$NS/configmaps/settle.yaml")
head_rev() { on "$1" git -C "$LM" log -1 --format=%B | sed -n 's/^Corral-Revision: //p'; }
head_tree() { on "$1" git -C "$LM" rev-parse HEAD:namespaces/dev; }
DEVFILES="namespaces/dev.yaml namespaces/dev/deployments/web.yaml namespaces/dev/configmaps/c1.yaml
	namespaces/dev/configmaps/race.yaml namespaces/dev/configmaps/settle.yaml"
file_commits() { local f; for f in $DEVFILES; do on "$1" git -C "$LM" log --format=%H -- "$f" | wc -l; done; }
same_history() {
	local i r t0 t
	t0=$(head_tree 1)
	for i in 1 2 3; do
		r=$(head_rev $i)
		[ -n "$r" ] && [ "$r" -ge "$SR" ] || return 1
		t=$(head_tree $i)
		[ -n "$t" ] && [ "$t" = "$t0" ] || return 1
	done
}
check "git log in every host's mount reaches the last change, with the same namespace dev" wait_for 20 same_history
c1=$(file_commits 1 | tr '\n' ' ')
check "each of dev's files has as many commits on every host ($c1)" sh -c \
	"[ '$c1' = '$(file_commits 2 | tr '\n' ' ')' ] && [ '$c1' = '$(file_commits 3 | tr '\n' ' ')' ] && [ '$c1' != '0 0 0 0 0 ' ]"
# the race's three winners, one commit each after the create
check "the raced object's history holds its create and the three winners" test "$(echo "$c1" | awk '{ print $4 }')" = 4

# ---- a quota, charged on every host ---------------------------------------------------------
# Host 1 admits on what every host stored: a ConfigMap made on host 2 is
# charged on host 1 too, and given back when host 2 deletes it.
QX=$LM/namespaces/qx
on 1 mkdir "$QX" || fail "host 1 makes namespace qx"
root_ca_on() { on "$1" test -e "$QX/configmaps/kube-root-ca.crt.yaml"; }
root_ca_on_both() { root_ca_on 1 && root_ca_on 2; }
check "qx's kube-root-ca.crt is on hosts 1 and 2" wait_for 20 root_ca_on_both
printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: two}\nspec: {hard: {count/configmaps: "2"}}\n' >"$T/two.yaml"
for c in a b; do printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n' $c >"$T/cm-$c.yaml"; done
on 1 cp "$T/two.yaml" "$QX/resourcequotas/two.yaml" || fail "host 1 writes qx's quota"
quota_on() { on "$1" test -e "$QX/resourcequotas/two.yaml"; }
wait_for 20 quota_on 2 || fail "host 2 sees qx's quota"
put_cm() { on "$1" cp "$T/cm-$2.yaml" "$QX/configmaps/$2.yaml" 2>/dev/null; } # HOST NAME
check "host 2 makes ConfigMap a, the quota's second" put_cm 2 a
a_on_1() { on 1 test -e "$QX/configmaps/a.yaml"; }
wait_for 20 a_on_1 || fail "host 1 sees ConfigMap a"
refute "host 1 refuses ConfigMap b: host 2's a is charged there too" put_cm 1 b
refute "... and stores nothing of b" on 1 test -e "$QX/configmaps/b.yaml"
on 2 rm "$QX/configmaps/a.yaml" || fail "host 2 deletes ConfigMap a"
a_gone_on_1() { ! a_on_1; }
wait_for 20 a_gone_on_1 || fail "host 1 sees ConfigMap a deleted"
check "host 1 then takes ConfigMap b: the deletion on host 2 gave a's share back" put_cm 1 b

# ---- pods on host 1, their logs on host 3 ------------------------------------------------
# Hosts 2 and 3 cordoned while far's pods are placed: both land on host 1.
for n in lab-2 lab-3; do on 1 "$CORRAL" cordon "$n" --mount "$LM" >/dev/null || fail "cordon $n"; done
deployment far 2 "far says hello" >"$T/far.yaml"
on 1 cp "$T/far.yaml" "$NS/deployments/far.yaml" || fail "host 1 writes deployments/far.yaml"
# far_pods_on NODE...: far's pods that run on one of NODE..., one a line
far_pods_on() {
	on "$R" sh -c 'cd "$1" && shift && for f in far-*.yaml; do
		[ -f "$f" ] || continue
		grep -q "^  deletionTimestamp:" "$f" && continue
		grep -q "^  phase: Running" "$f" || continue
		n=$(sed -n "s/^  nodeName: //p" "$f")
		for w; do [ "$n" = "$w" ] && echo "${f%.yaml}"; done
	done' sh "$NS/pods" "$@"
}
two_far_on() { [ "$(far_pods_on "$@" | wc -l)" = 2 ]; }
check "far's two pods run on host 1's node" wait_for 40 two_far_on lab-1
for n in lab-2 lab-3; do on 1 "$CORRAL" uncordon "$n" --mount "$LM" >/dev/null || fail "uncordon $n"; done
FARPOD=$(far_pods_on lab-1 | head -1)
far_log() { on 3 cat "$NS/logs/$FARPOD/app.log" 2>/dev/null | grep -q 'far says hello'; }
check "host 3 reads the log of $FARPOD, running on host 1, through its mount" wait_for 15 far_log
refute "which is not on host 3's disk" sh -c "ls '$T/lab/h3/logs' | grep -q '_${FARPOD}_'"

# ---- host 1, the leader of everything, killed during writes from hosts 2 and 3 ------------
# etcd_on I JSON: a range request (JSON) to host I's member, its answer
etcd_on() { on "$1" curl -sf -m 2 -X POST "http://$(lab_ip "$1"):2379/v3/kv/range" -d "$2"; }
b64() { printf %s "$1" | base64 -w0; }
# trimmer_on I: which host's history trims the outbox (its writer id is
# HOSTNAME-PID-...), as host I's member says
trimmer_on() { etcd_on "$1" "{\"key\": \"$(b64 /corral/history-trimmer)\"}" | jq -r '.kvs[0].value // empty' | base64 -d | cut -d- -f1-2; }
trimmer_is() { [ "$(trimmer_on "$1")" = "$2" ]; }
check "host 1's history is the outbox's trimmer" trimmer_is 2 lab-1
for d in corral-ctrl corral-sched; do
	check "$d: its Lease is still held by host 1's" held_by_host1 $d
done
# Each writer acknowledges a name (cp's close returned 0) with the time its
# write began and ended, in ns; a refused write (EIO) is not acknowledged.
writer() { # HOST
	on "$1" bash -c 'i=0; while [ ! -e "$3/stop" ]; do
		i=$((i + 1)); s=$(date +%s%N)
		printf "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b$1-$i}\n" >"$3/w$1.yaml"
		cp "$3/w$1.yaml" "$2/configmaps/b$1-$i.yaml" 2>/dev/null && echo "b$1-$i $s $(date +%s%N)" >>"$3/ack$1"
	done' sh "$1" "$NS" "$T" &
	BPIDS+=($!)
}
: >"$T/ack2"
: >"$T/ack3"
writer 2
writer 3
acks() { [ "$(wc -l <"$T/ack2")" -ge "$1" ] && [ "$(wc -l <"$T/ack3")" -ge "$1" ]; }
wait_for 10 acks 10 || fail "hosts 2 and 3 write before the kill"
KILL=$(date +%s%N)
lab_kill_host 1
killed=$(date +%s%N)
R=2
refute "host 1's etcd member is gone" lab_etcd_healthy 1
check "nothing of host 1 runs: its processes and pods all killed" test -z "$(lab_pids 1)"
# after_kill N: each writer has N writes begun after the kill acknowledged
after_kill() { local f; for f in "$T/ack2" "$T/ack3"; do [ "$(awk -v k="$killed" '$2 > k' "$f" | wc -l)" -ge "$1" ] || return 1; done; }
check "hosts 2 and 3 go on writing" wait_for 20 after_kill 10
touch "$T/stop"
for p in "${BPIDS[@]}"; do wait "$p" 2>/dev/null; done
BPIDS=()
# The longest stretch without an acknowledged write on a survivor, from the
# kill: etcd's election (1 s here) when host 1's member was not etcd's
# leader; when it was, the write each survivor had in flight was lost with
# that leader, and fails (EIO) once corral-fs's 5 s for a request are over
# (corral-fs(8), Losing etcd): 5 s, the election and the next write at most.
gap() { awk -v k="$KILL" '$3 > k { print $3 }' "$1" | sort -n | awk -v k="$KILL" '
	BEGIN { last = k } { if ($1 - last > g) g = $1 - last; last = $1 } END { printf "%d\n", g / 1000000 }'; }
g2=$(gap "$T/ack2") g3=$(gap "$T/ack3")
check "writes go on within etcd's election and one lost request: longest pause ${g2} ms on host 2, ${g3} ms on host 3" \
	test "$g2" -le 7500 -a "$g3" -le 7500
# every name acknowledged reads back on both survivors
all_acked_on() {
	on "$1" sh -c 'cd "$1/configmaps" && while read -r n _; do grep -q "^kind:" "$n.yaml" || { echo "$n" >&2; exit 1; }; done' sh "$NS" <"$2"
}
n2=$(wc -l <"$T/ack2") n3=$(wc -l <"$T/ack3")
acked_on() { all_acked_on "$1" "$T/ack2" && all_acked_on "$1" "$T/ack3"; }
for h in 2 3; do
	check "host $h reads all $((n2 + n3)) acknowledged writes (0 lost)" wait_for 10 acked_on $h
done
# The leads go to the survivors: the Leases once host 1's expire (6 s),
# the trimmer once its etcd lease does (10 s).
held_by_survivor() { case $(lease_holder "$1") in lab-2_* | lab-3_*) return 0 ;; esac; return 1; }
for d in corral-ctrl corral-sched; do
	check "$d: a survivor takes its Lease over" wait_for 30 held_by_survivor $d
	echo "# $d's Lease: held by $(lease_holder $d)"
done
trimmer_survives() { trimmer_is 2 lab-2 || trimmer_is 2 lab-3; }
check "a survivor's history takes the outbox's trimming over" wait_for 30 trimmer_survives
# The history goes on: a change after the kill in both survivors' git log,
# and the outbox trimmed up to it (the dead replica no longer holds it).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\ndata: {m: "%s"}\n' "$(date +%s%N)" >"$T/after.yaml"
on 2 cp "$T/after.yaml" "$NS/configmaps/after.yaml" || fail "host 2 writes configmaps/after.yaml"
AR=$(rev_on 2 "$NS/configmaps/after.yaml")
history_after() { local i r; for i in 2 3; do r=$(head_rev $i); [ -n "$r" ] && [ "$r" -ge "$AR" ] || return 1; done; }
check "a change made after the kill reaches the history of hosts 2 and 3" wait_for 20 history_after
outbox_upto() { etcd_on 2 "{\"key\": \"$(b64 /corral/h/)\", \"range_end\": \"$(b64 /corral/h0)\", \"keys_only\": true, \"max_mod_revision\": $1}" | jq '(.kvs // []) | length'; }
trimmed() { [ "$(outbox_upto "$AR")" = 0 ]; }
check "and the outbox is trimmed up to it" wait_for 30 trimmed
# ready_status NODE: the status of NODE's Ready condition, read on host $R
ready_status() {
	on "$R" cat "$LM/nodes/$1.yaml" | sed -n '/^status:/,$p' | awk '
		/^  [a-zA-Z]/ { inc = ($0 ~ /^  conditions:/); next }
		inc && /^  - / { if (ty == "Ready") { print st; found = 1; exit } ty = ""; st = "" }
		inc { l = $0; sub(/^  [- ] /, "", l); gsub(/\047/, "", l)
			if (l ~ /^ *type: /) { sub(/^ *type: /, "", l); ty = l }
			if (l ~ /^ *status: /) { sub(/^ *status: /, "", l); st = l } }
		END { if (!found && ty == "Ready") print st }'
}
node_unknown() { [ "$(ready_status lab-1)" = Unknown ]; }
check "node lab-1 turns Unknown after the grace period (the new corral-ctrl's)" wait_for 20 node_unknown
check "far's pods are replaced on hosts 2 and 3" wait_for 60 two_far_on lab-2 lab-3
check "no far pod is left on lab-1" test -z "$(far_pods_on lab-1)"

# ---- --etcd-local, on host 4 alone -----------------------------------------------------------
UP+=(4)
check "corral up --etcd-local on host 4" on 4 "$CORRAL" up --etcd-local --state "$T/lab/h4/state" \
	--mount "$LM" --config "$T/lab/h4/corral.conf" --nodes 0
check "its etcd member answers on 127.0.0.1:2379" on 4 curl -sf -m 2 http://127.0.0.1:2379/health
on 4 "$CORRAL" status --mount "$LM" >"$T/status4.out" 2>&1
check "corral status lists the etcd process alive" grep -qE '^etcd +[0-9]+ +alive' "$T/status4.out"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\n' >"$T/local.yaml"
check "the cluster over the local etcd takes a write" on 4 cp "$T/local.yaml" "$LM/namespaces/default/configmaps/local.yaml"
epid=$(cat "$T/lab/h4/state/run/etcd.pid" 2>/dev/null)
check "corral down on host 4" on 4 "$CORRAL" down --mount "$LM" --state "$T/lab/h4/state"
UP=("${UP[@]:0:3}")
# gone PID: no such process, or one dead that its new parent has not reaped
gone() { local st; st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null); [ -z "$st" ] || [ "$st" = Z ]; }
etcd_gone() { [ -n "$epid" ] && gone "$epid"; }
check "and its etcd is stopped" etcd_gone

echo "# the lab's checks took $((SECONDS - START)) s, teardown aside"
[ "$FAILS" = 0 ]
