#!/bin/bash
# A host that joins a cluster over etcd later: mount A over a one-member
# etcd makes objects, changes and deletes some, and the outbox is trimmed
# (A is its only replica); mount B then starts with a fresh state folder.
# B's history begins with one commit of the whole declared cluster, so its
# HEAD tree is A's; a change made after B joined is one more commit there,
# once.
. "$(dirname "$0")/../lib/lib.sh"
command -v etcd >/dev/null || { echo "not ok - no etcd (apt-get install etcd-server)"; exit 1; }
# A on its own mount; B on lib.sh's ($M, $FSPID).
MA=$T/a MB=$M SA=$T/sa SB=$T/sb
mkdir -p "$MA"
EPID= APID=

# Two free ports below the ephemeral range (as etcd.sh picks them).
port_free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
BASE=
for try in $(seq 0 40); do
	b=$((20000 + (($$ * 11 + try * 89) % 1200) * 10))
	if port_free $((b + 8)) && port_free $((b + 9)); then BASE=$b; break; fi
done
[ -n "$BASE" ] || { echo "not ok - no free ports for etcd"; exit 1; }
CLIENT=127.0.0.1:$((BASE + 8))

stop_a() {
	[ -n "$APID" ] || return 0
	kill "$APID" 2>/dev/null
	wait_for 5 sh -c "! mountpoint -q '$MA'" || fusermount3 -u "$MA" 2>/dev/null || umount -l "$MA"
	kill -9 "$APID" 2>/dev/null
}
# The mounts first (lib.sh's cleanup removes $T, with A's mount in it),
# then etcd.
trap 'stop_a; [ -n "$FSPID" ] && stop_fs; [ -n "$EPID" ] && { kill -9 "$EPID"; wait "$EPID"; } 2>/dev/null; cleanup' EXIT

etcd --name j1 --data-dir "$T/e1" --listen-client-urls "http://$CLIENT" \
	--advertise-client-urls "http://$CLIENT" --listen-peer-urls "http://127.0.0.1:$((BASE + 9))" \
	--initial-advertise-peer-urls "http://127.0.0.1:$((BASE + 9))" \
	--initial-cluster "j1=http://127.0.0.1:$((BASE + 9))" >>"$T/e1.log" 2>&1 &
EPID=$!
wait_for 30 sh -c "curl -sf -m 1 http://$CLIENT/health | grep -q true" ||
	{ echo "not ok - etcd did not start: $(tail -2 "$T/e1.log")"; exit 1; }

# mount NAME MOUNT STATE: the mount's pid in $!
mount_fs() {
	"$FS_BIN" -f --store "etcd://$CLIENT" --state "$3" "$2" >>"$T/fs$1.log" 2>&1 &
}
mounted() {
	wait_for 20 test -d "$1/namespaces/default" ||
		{ echo "not ok - corral-fs did not mount $1: $(tail -2 "$T"/fs*.log)"; exit 1; }
}
mount_fs a "$MA" "$SA"
APID=$!
mounted "$MA"
ok "A mounts over a one-member etcd"

cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: "%s"}\n' "$1" "$2"; }
mkdir "$MA/namespaces/dev"
wait_for 5 test -d "$MA/namespaces/dev/configmaps"
cm c1 1 >"$MA/namespaces/dev/configmaps/c1.yaml"
cm c1 2 >"$MA/namespaces/dev/configmaps/c1.yaml"
cm gone 1 >"$MA/namespaces/dev/configmaps/gone.yaml"
rm "$MA/namespaces/dev/configmaps/gone.yaml"
cm keep 1 >"$MA/namespaces/dev/configmaps/keep.yaml"

# log_n STATE PATH N: STATE's history has N commits that change PATH.
log_n() { [ "$(git --git-dir="$1/history.git" log --format=%H -- "$2" 2>/dev/null | wc -l)" = "$3" ]; }
check "A's history holds c1's two changes" wait_for 15 log_n "$SA" namespaces/dev/configmaps/c1.yaml 2
# The outbox as etcd holds it: /corral/h/ up to /corral/h0 (the gateway
# leaves a count of 0 out).
outbox_empty() {
	local r
	r=$(curl -sf -m 2 "http://$CLIENT/v3/kv/range" \
		-d "{\"key\":\"$(printf /corral/h/ | base64)\",\"range_end\":\"$(printf /corral/h0 | base64)\",\"count_only\":true}") &&
		grep -q '"header"' <<<"$r" && ! grep -q '"count"' <<<"$r"
}
check "A trims the outbox: the changes before B joins are gone from it" wait_for 20 outbox_empty

mount_fs b "$MB" "$SB"
FSPID=$!
mounted "$MB"
ok "B mounts later, with a fresh state folder"
head_has() { git --git-dir="$1/history.git" show "HEAD:$2" 2>/dev/null | grep -q "$3"; }
check "B's HEAD holds c1, made before it joined, as last changed" wait_for 15 head_has "$SB" namespaces/dev/configmaps/c1.yaml 'a: .2'
check "and the namespace, and kube-system's" sh -c "git --git-dir='$SB/history.git' show HEAD:namespaces/dev.yaml && git --git-dir='$SB/history.git' show HEAD:namespaces/kube-system.yaml"
refute "but not the ConfigMap deleted before it joined" git --git-dir="$SB/history.git" show HEAD:namespaces/dev/configmaps/gone.yaml
check "B's history begins with the cluster at one revision" sh -c "git --git-dir='$SB/history.git' log --reverse --format=%B | head -1 | grep -q '^corral: the cluster at revision [0-9]*, when this host.s history began'"
check "with its Corral-Revision trailer" sh -c "git --git-dir='$SB/history.git' log --reverse --format=%B | sed -n '/^Corral-Revision: [0-9][0-9]*$/p' | head -1 | grep -q ."
same_tree() { [ "$(git --git-dir="$SA/history.git" rev-parse HEAD^{tree})" = "$(git --git-dir="$SB/history.git" rev-parse HEAD^{tree})" ]; }
check "B's HEAD tree is A's" wait_for 15 same_tree

# ---- after B joined ----------------------------------------------------------------
cm c1 3 >"$MA/namespaces/dev/configmaps/c1.yaml"
cm late 1 >"$MA/namespaces/dev/configmaps/late.yaml"
check "a ConfigMap made on A after B joined is in B's history" wait_for 15 log_n "$SB" namespaces/dev/configmaps/late.yaml 1
check "c1's change after B joined is in B's history: the snapshot and it" wait_for 15 log_n "$SB" namespaces/dev/configmaps/c1.yaml 2
check "B's HEAD tree is A's again" wait_for 15 same_tree
# Once, not twice: B has caught up with A (same tree, same revision).
rev_of() { git --git-dir="$1/history.git" log -1 --format=%B | sed -n 's/^Corral-Revision: //p'; }
same_rev() { [ -n "$(rev_of "$SA")" ] && [ "$(rev_of "$SA")" = "$(rev_of "$SB")" ]; }
check "B's history reaches A's revision" wait_for 15 same_rev
check "and holds the late ConfigMap once" log_n "$SB" namespaces/dev/configmaps/late.yaml 1
check "and c1's change once" log_n "$SB" namespaces/dev/configmaps/c1.yaml 2

[ "$FAILS" = 0 ]
