#!/bin/bash
# corral-fs over etcd: a three-member etcd on loopback and two mounts, A and
# B, each preferring another member. A namespace made on A appears on B
# (IN_CREATE on B's namespaces/); a write on A raises IN_CLOSE_WRITE on B,
# a delete IN_DELETE, and both show the same resourceVersion; two mounts
# writing one object over the same resourceVersion: exactly one wins; both
# histories hold the changes; a Service address or node port taken on A is
# refused on B (which never saw it: the claim in etcd decides), two mounts
# taking one address at once: exactly one wins, and a deletion gives it
# back; a member killed and restarted loses nothing
# and the mounts go on; with no quorum a write fails with EIO and nothing
# changes; with every member gone reads fail with EIO once the staleness
# bound (5 s) has passed, and come back with the members, as writes do.
. "$(dirname "$0")/../lib/lib.sh"
command -v etcd >/dev/null || { echo "not ok - no etcd (apt-get install etcd-server)"; exit 1; }
command -v inotifywait >/dev/null || { echo "not ok - no inotifywait"; exit 1; }
MA=$T/a MB=$T/b SA=$T/sa SB=$T/sb
mkdir -p "$MA" "$MB"
EPIDS=(0 0 0 0) # by member, 1..3
FPIDS=()
WPIDS=()

# Ports below the ephemeral range (a redialling peer may take a dead
# member's port there as its source port): six free ones from 20000 on.
free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
BASE=
for try in $(seq 0 40); do
	b=$((20000 + (($$ * 7 + try * 97) % 1200) * 10))
	if free $((b + 1)) && free $((b + 2)) && free $((b + 3)) && free $((b + 5)) &&
		free $((b + 6)) && free $((b + 7)); then BASE=$b; break; fi
done
[ -n "$BASE" ] || { echo "not ok - no free ports for etcd"; exit 1; }
client() { echo "127.0.0.1:$((BASE + $1))"; }
peer() { echo "http://127.0.0.1:$((BASE + 4 + $1))"; }
CLUSTER="e1=$(peer 1),e2=$(peer 2),e3=$(peer 3)"

start_member() {
	etcd --name "e$1" --data-dir "$T/e$1" --listen-client-urls "http://$(client "$1")" \
		--advertise-client-urls "http://$(client "$1")" --listen-peer-urls "$(peer "$1")" \
		--initial-advertise-peer-urls "$(peer "$1")" --initial-cluster "$CLUSTER" \
		--initial-cluster-token "corral-test-$$" >>"$T/e$1.log" 2>&1 &
	EPIDS[$1]=$!
}
kill_member() { kill -9 "${EPIDS[$1]}" 2>/dev/null; wait "${EPIDS[$1]}" 2>/dev/null; EPIDS[$1]=0; }
healthy() { curl -sf -m 1 "http://$(client "$1")/health" | grep -q '"health":"true"'; }

stop_all() {
	for p in "${WPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${FPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for m in "$MA" "$MB"; do
		for _ in $(seq 50); do mountpoint -q "$m" || break; sleep 0.1; done
		if mountpoint -q "$m"; then fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; fi
	done
	for p in "${FPIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for i in 1 2 3; do [ "${EPIDS[$i]}" != 0 ] && kill_member "$i"; done
}
trap 'stop_all; cleanup' EXIT

for i in 1 2 3; do start_member "$i"; done
wait_for 30 sh -c "curl -sf -m 1 http://$(client 1)/health | grep -q true && curl -sf -m 1 http://$(client 2)/health | grep -q true && curl -sf -m 1 http://$(client 3)/health | grep -q true" ||
	{ echo "not ok - etcd did not start: $(tail -2 "$T/e1.log")"; exit 1; }
"$FS_BIN" -f --store "etcd://$(client 1),$(client 2),$(client 3)" --state "$SA" "$MA" >>"$T/fsa.log" 2>&1 &
FPIDS+=($!)
"$FS_BIN" -f --store "etcd://$(client 2),$(client 3),$(client 1)" --state "$SB" "$MB" >>"$T/fsb.log" 2>&1 &
FPIDS+=($!)
wait_for 20 test -d "$MA/namespaces/default" -a -d "$MB/namespaces/default" ||
	{ echo "not ok - corral-fs --store etcd:// did not mount: $(tail -2 "$T/fsa.log") $(tail -2 "$T/fsb.log")"; exit 1; }
ok "two mounts over a three-member etcd"
# written_once NS...: etcd counts one write of each Namespace since its creation
written_once() {
	local n k
	for n; do
		k=$(printf '/corral/o/namespaces/%s' "$n" | base64 -w0)
		curl -sf -m 2 "http://$(client 1)/v3/kv/range" -d "{\"key\": \"$k\"}" | grep -q '"version":"1"' || return 1
	done
}
check "both starting on an empty store, the default namespaces are made once" written_once default kube-system kube-public kube-node-lease

# ---- namespaces -----------------------------------------------------------------
inotifywait -q -m -e create --format '%e %f' "$MB/namespaces" >"$T/ns.events" 2>/dev/null &
WPIDS+=($!)
wait_for 5 sh -c "sleep 0.2; true" # the watch is set up before the first write
mkdir "$MA/namespaces/dev"
check "a namespace made on A is on B, with its kind folders" wait_for 10 test -d "$MB/namespaces/dev/configmaps"
check "and its Namespace file" readable "$MB/namespaces/dev.yaml"
check "B's inotify saw the namespace's folder created (IN_CREATE)" wait_for 5 grep -q 'CREATE,ISDIR dev$' "$T/ns.events"

# ---- writes, updates, deletes ---------------------------------------------------------
inotifywait -q -m -e close_write,moved_to,delete --format '%e %f' "$MB/namespaces/dev/configmaps" >"$T/cm.events" 2>/dev/null &
WPIDS+=($!)
inotifywait -q -m -e close_write,moved_to,delete --format '%e %f' "$MA/namespaces/dev/configmaps" >"$T/cma.events" 2>/dev/null &
WPIDS+=($!)
sleep 0.3
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: "1"}\n' >"$MA/namespaces/dev/configmaps/c1.yaml"
check "a write on A raises IN_CLOSE_WRITE on B" wait_for 5 grep -q 'CLOSE_WRITE,CLOSE c1.yaml' "$T/cm.events"
rva=$(obj_rev "$MA/namespaces/dev/configmaps/c1.yaml")
rvb=$(obj_rev "$MB/namespaces/dev/configmaps/c1.yaml")
check "A and B show one resourceVersion ($rva, $rvb)" test -n "$rva" -a "$rva" = "$rvb"
sed -i 's/a: .1./a: "2"/' "$MB/namespaces/dev/configmaps/c1.yaml"
check "an update on B reaches A" wait_for 5 grep -q 'a: .2' "$MA/namespaces/dev/configmaps/c1.yaml"
check "and raises an event on A" wait_for 5 grep -q 'c1.yaml' "$T/cma.events"
check "B's own write is not replayed on B" test "$(grep -c 'CLOSE_WRITE,CLOSE c1.yaml' "$T/cm.events")" = 1
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\n' >"$MA/namespaces/dev/configmaps/gone.yaml"
wait_for 5 test -e "$MB/namespaces/dev/configmaps/gone.yaml"
rm "$MA/namespaces/dev/configmaps/gone.yaml"
check "a delete on A raises IN_DELETE on B" wait_for 5 grep -q 'DELETE gone.yaml' "$T/cm.events"
check "and the file is gone from B" wait_for 5 sh -c "! test -e '$MB/namespaces/dev/configmaps/gone.yaml'"

# ---- conflicts -----------------------------------------------------------------
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: race}\ndata: {w: "0"}\n' >"$MA/namespaces/dev/configmaps/race.yaml"
wait_for 5 readable "$MB/namespaces/dev/configmaps/race.yaml"
r0=$(obj_rev "$MA/namespaces/dev/configmaps/race.yaml")
wait_for 5 sh -c "grep -q \"resourceVersion: '$r0'\" '$MB/namespaces/dev/configmaps/race.yaml'"
wins=0
for round in 1 2 3; do
	r=$(obj_rev "$MA/namespaces/dev/configmaps/race.yaml")
	wait_for 5 sh -c "grep -q \"resourceVersion: '$r'\" '$MB/namespaces/dev/configmaps/race.yaml'"
	CP=()
	for m in A B; do
		d=$MA; [ $m = B ] && d=$MB
		printf "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: race, resourceVersion: '%s'}\ndata: {w: %s%s}\n" \
			"$r" "$m" "$round" >"$T/race.$m"
		(cp "$T/race.$m" "$d/namespaces/dev/configmaps/race.yaml" 2>/dev/null && echo won >"$T/won.$m") &
		CP+=($!)
	done
	wait "${CP[@]}" # each cp ends: a request to etcd times out after 5 s
	n=0
	for m in A B; do [ -e "$T/won.$m" ] && n=$((n + 1)); rm -f "$T/won.$m"; done
	[ "$n" = 1 ] && wins=$((wins + 1))
done
check "two mounts writing over one resourceVersion: exactly one wins (3 rounds)" test "$wins" = 3

# ---- Service addresses and node ports: one holder across hosts -----------------
# svc NAME IP [NODEPORT]: a Service manifest
svc() {
	if [ -n "${3:-}" ]; then
		printf 'apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec: {type: NodePort, clusterIP: %s, ports: [{port: 80, nodePort: %s}]}\n' "$1" "$2" "$3"
	else
		printf 'apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec: {clusterIP: %s, ports: [{port: 80}]}\n' "$1" "$2"
	fi
}
SV=namespaces/dev/services
svc s1 10.96.77.1 30771 >"$T/s1.yaml"
check "A takes a Service's address and node port" cp "$T/s1.yaml" "$MA/$SV/s1.yaml"
wait_for 5 readable "$MB/$SV/s1.yaml"
svc s2 10.96.77.1 >"$T/s2.yaml"
if cp "$T/s2.yaml" "$MB/$SV/s2.yaml" 2>"$T/s2.err"; then
	fail "B refuses another Service on A's address"
else
	ok "B refuses another Service on A's address"
fi
check "with EINVAL ($(tr -d '\n' <"$T/s2.err" | tail -c 60))" grep -q 'Invalid argument' "$T/s2.err"
check "and .errors names the holder" wait_for 5 grep -q 'provided IP is already allocated (to service dev/s1)' "$MB/.errors"
check "and nothing is stored" sh -c "! test -e '$MB/$SV/s2.yaml'"
svc s3 10.96.77.3 30771 >"$T/s3.yaml"
if cp "$T/s3.yaml" "$MB/$SV/s3.yaml" 2>/dev/null; then
	fail "B refuses another Service on A's node port"
else
	ok "B refuses another Service on A's node port"
fi
check "and .errors says so" wait_for 5 grep -q 'provided port is already allocated (to service dev/s1)' "$MB/.errors"
wins=0
for round in 1 2 3; do
	CP=()
	for m in A B; do
		d=$MA; [ $m = B ] && d=$MB
		r=$(echo "r$m$round" | tr AB ab)
		svc "$r" "10.96.78.$round" >"$T/$r.yaml"
		(cp "$T/$r.yaml" "$d/$SV/$r.yaml" 2>/dev/null && echo won >"$T/won.$m") &
		CP+=($!)
	done
	wait "${CP[@]}"
	n=0
	for m in A B; do [ -e "$T/won.$m" ] && n=$((n + 1)); rm -f "$T/won.$m"; done
	[ "$n" = 1 ] && wins=$((wins + 1))
done
check "two mounts taking one address at once: exactly one wins (3 rounds)" test "$wins" = 3
rm "$MA/$SV/s1.yaml"
wait_for 5 sh -c "! test -e '$MB/$SV/s1.yaml'"
svc s4 10.96.77.1 30771 >"$T/s4.yaml"
check "a deleted Service's address and port are taken again on B" cp "$T/s4.yaml" "$MB/$SV/s4.yaml"

# ---- history -----------------------------------------------------------------
# hist_n STATE N: STATE's history holds N changes of c1 (its create on A, its update on B)
hist_n() { [ "$(git --git-dir="$1/history.git" log --format=%s -- namespaces/dev/configmaps/c1.yaml 2>/dev/null | wc -l)" = "$2" ]; }
check "A's history holds c1's two changes" wait_for 15 hist_n "$SA" 2
check "B's history holds them too" wait_for 15 hist_n "$SB" 2
check "both show the namespace's creation" sh -c "git --git-dir='$SA/history.git' log --format=%s -- namespaces/dev.yaml | grep -q . && git --git-dir='$SB/history.git' log --format=%s -- namespaces/dev.yaml | grep -q ."

# ---- a member killed and restarted --------------------------------------------------
kill_member 1
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m1}\n' >"$MA/namespaces/dev/configmaps/m1.yaml" 2>"$T/m1.err"
check "with its first member killed, A still takes writes" readable "$MA/namespaces/dev/configmaps/m1.yaml"
check "and B sees them" wait_for 10 readable "$MB/namespaces/dev/configmaps/m1.yaml"
start_member 1
check "the member comes back" wait_for 30 healthy 1
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m2}\n' >"$MB/namespaces/dev/configmaps/m2.yaml"
check "writes go on after its return" wait_for 10 readable "$MA/namespaces/dev/configmaps/m2.yaml"

# ---- no quorum, then no member -------------------------------------------------------
kill_member 2
kill_member 3
lost_at=$SECONDS
before=$(cat "$MA/namespaces/dev/configmaps/c1.yaml")
check "reads are served from the cache at first" test -n "$before"
# cp, not a shell redirection: the shell does not look at close(2)'s
# result, where a write's commit reports.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: "9"}\n' >"$T/c1.new"
if cp "$T/c1.new" "$MA/namespaces/dev/configmaps/c1.yaml" 2>"$T/eio.err"; then
	fail "a write without quorum is refused"
else
	ok "a write without quorum is refused"
fi
check "with EIO ($(tr -d '\n' <"$T/eio.err" | tail -c 80))" grep -q 'Input/output error' "$T/eio.err"
kill_member 1
# stale_read DIR: reading an object, or listing its folder, fails with EIO
stale_read() {
	! cat "$1/namespaces/dev/configmaps/c1.yaml" >/dev/null 2>"$T/stale.err" &&
		grep -q 'Input/output error' "$T/stale.err" &&
		! ls "$1/namespaces/dev/configmaps" >/dev/null 2>&1
}
check "with every member gone, reads fail with EIO on A" wait_for 15 stale_read "$MA"
stale_after=$((SECONDS - lost_at))
check "and on B" wait_for 15 stale_read "$MB"
# The bound is 5 s; a write's refusal above may take 5 s more to come.
check "within the staleness bound ($stale_after s after the quorum went)" test "$stale_after" -le 13
start_member 1
start_member 2
start_member 3
check "the members come back" wait_for 30 sh -c "curl -sf -m 1 http://$(client 2)/health | grep -q true"
check "reads come back once the watch has caught up" wait_for 30 readable "$MA/namespaces/dev/configmaps/c1.yaml"
check "on B too" wait_for 30 readable "$MB/namespaces/dev/configmaps/c1.yaml"
check "and the object is unchanged" test "$(cat "$MA/namespaces/dev/configmaps/c1.yaml")" = "$before"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: back}\n' >"$T/back.new"
wrote() { cp "$T/back.new" "$MA/namespaces/dev/configmaps/back.yaml"; }
# wait_secs SECS cmd...: wait_for by the clock (a cp may take etcd's 5 s).
wait_secs() { local end=$((SECONDS + $1)); shift; until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $end ] && return 1; sleep 0.2; done; }
check "writes come back with the quorum" wait_secs 60 wrote
check "and reach B" wait_for 10 readable "$MB/namespaces/dev/configmaps/back.yaml"

[ "$FAILS" = 0 ]
