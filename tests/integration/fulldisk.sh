#!/bin/bash
# A full state folder: writers get ENOSPC (not EIO) and .errors says the
# disk is full; reads and rm still work; corral-fs starts again after
# kill -9 on the full disk (read-only but for deletions); once space comes
# back, writes work again by themselves and the history catches up, with
# every deletion made meanwhile and `git fsck` clean. The state folder is
# a small tmpfs of its own (LMDB and git see ENOSPC and short writes on it
# as on a full ext4); the cleanup unmounts it whatever happens.
. "$(dirname "$0")/../lib/lib.sh"

mkdir -p "$S"
if ! mount -t tmpfs -o size=64m,mode=0755 corral-fulldisk "$S"; then
	echo "not ok - cannot mount a tmpfs at $S for the state folder"
	exit 1
fi
__fulldisk_cleanup() {
	if [ -n "$FSPID" ]; then
		kill "$FSPID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$FSPID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$FSPID" 2>/dev/null
		wait "$FSPID" 2>/dev/null
	fi
	if mountpoint -q "$M"; then fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; fi
	FSPID=
	# (cleanup removes $T: the tmpfs must be gone first)
	umount "$S" 2>/dev/null || umount -l "$S"
	cleanup
}
trap __fulldisk_cleanup EXIT

D=$M/namespaces/default/configmaps
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {v: "%s"}\n' "$1" "$2"; }
# big NAME: a ConfigMap of about 1 MiB (a write that needs new pages)
big() {
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata:\n' "$1"
	for i in $(seq 16); do printf '  k%s: "%s"\n' "$i" "$(head -c 48000 /dev/urandom | base64 -w0)"; done
}
# put NAME TEXT-FILE: cp, whose close reports the commit's errno
put() { cp "$2" "$D/$1.yaml" 2>"$T/put.err"; }
enospc() { ! put "$@" && grep -q 'No space left on device' "$T/put.err"; }
errors_full() { grep -q "$1.yaml: .*no space left on device in $S/state" "$M/.errors"; }
free_kb() { df -k --output=avail "$S" | tail -1 | tr -d ' '; }

start_fs
for n in keep gone1 gone2 gone3; do cm "$n" 1 >"$T/$n.yaml"; done
check "writes before the disk fills" sh -c "cp '$T/keep.yaml' '$D/keep.yaml' && cp '$T/gone1.yaml' '$D/gone1.yaml' && cp '$T/gone2.yaml' '$D/gone2.yaml' && cp '$T/gone3.yaml' '$D/gone3.yaml'"
for i in $(seq 50); do cm "many$i" "$i" >"$D/many$i.yaml" || fail "write many$i"; done
history_settle

# Fill the file system to the last block.
dd if=/dev/zero of="$S/filler" bs=1M 2>/dev/null
dd if=/dev/zero of="$S/filler2" bs=4k 2>/dev/null
check "the state folder is full" test "$(free_kb)" -lt 4
cm small 1 >"$T/small.yaml"
big big >"$T/big.yaml"
check "a big write on the full disk fails with ENOSPC" enospc big "$T/big.yaml"
check "... and .errors says the disk is full" errors_full big
check "a small write fails with ENOSPC too" enospc small "$T/small.yaml"
check "... and .errors says so" errors_full small
refute "... and nothing was stored" test -e "$D/small.yaml"
check "reads work" grep -q '^  name: keep' "$D/keep.yaml"
check "rm works on the full disk" rm "$D/gone1.yaml"
refute "... and the object is gone" test -e "$D/gone1.yaml"

# kill -9 on the full disk, and start again.
kill9_fs
start_fs
check "corral-fs starts again on the full disk" test -d "$M/namespaces/default"
check "reads work after the restart" grep -q '^  name: keep' "$D/keep.yaml"
refute "the deletion before kill -9 held" test -e "$D/gone1.yaml"
check "rm works after the restart" rm "$D/gone2.yaml"
refute "... and the object is gone" test -e "$D/gone2.yaml"
check "50 more deletions fit on the full disk" sh -c "for i in \$(seq 50); do rm '$D/'many\$i.yaml || exit 1; done"
refute "... and they are gone" sh -c "ls '$D' | grep -q many"
check "writes fail with ENOSPC after the restart" enospc small "$T/small.yaml"
check "... and .errors says the disk is full" errors_full small
check "the store said it is full" grep -q 'only deletions are accepted' "$T/fs.log"

# Space comes back: writes work again, without a restart.
rm -f "$S/filler" "$S/filler2"
check "once space is freed, writes work again" put small "$T/small.yaml"
check "... the big one too" put big "$T/big.yaml"
check "... and read back" grep -q '^  name: big' "$D/big.yaml"
check "rm still works" rm "$D/gone3.yaml"
check "the store said it has room again" grep -q 'has room again' "$T/fs.log"
if history_settle 30; then
	ok "the history catches up"
	for n in gone1 gone2 gone3; do
		check "... with the deletion of $n" sh -c "git --git-dir='$S/history.git' log --format=%B -- namespaces/default/configmaps/$n.yaml | grep -qi 'delete'"
		refute "... and $n is not in HEAD" git --git-dir="$S/history.git" cat-file -e "HEAD:namespaces/default/configmaps/$n.yaml"
	done
	check "... with the writes made after" git --git-dir="$S/history.git" cat-file -e HEAD:namespaces/default/configmaps/big.yaml
	check "... and keep as it was" git --git-dir="$S/history.git" cat-file -e HEAD:namespaces/default/configmaps/keep.yaml
fi
check "git fsck is clean" git --git-dir="$S/history.git" fsck --strict --no-progress
[ "$FAILS" = 0 ]
