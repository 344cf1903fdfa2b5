# Sourced by the integration tests: a private mount and state, checks that
# print "ok - ..." or "not ok - ...", and a trap that always cleans up.
set -u
BUILD=${CORRAL_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
FS_BIN=${CORRAL_FS_BIN:-$BUILD/corral-fs}
if [ "$(id -u)" != 0 ]; then
	echo "not ok - integration tests need root (FUSE allow_other, su); run as root"
	exit 1
fi
if [ ! -c /dev/fuse ]; then
	echo "not ok - /dev/fuse is missing: cannot mount"
	exit 1
fi
if [ ! -x "$FS_BIN" ]; then
	echo "not ok - no corral-fs binary at $FS_BIN (run make)"
	exit 1
fi
T=$(mktemp -d /tmp/corral-test.XXXXXX)
chmod 755 "$T" # other users must reach the mount
M=$T/mnt
S=$T/state
mkdir -p "$M"
FSPID=
FAILS=0

cleanup() {
	[ -n "$FSPID" ] && kill "$FSPID" 2>/dev/null
	for _ in $(seq 50); do mountpoint -q "$M" || break; sleep 0.1; done
	if mountpoint -q "$M"; then fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; fi
	[ -n "$FSPID" ] && kill -9 "$FSPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

ok() { echo "ok - $1"; }
fail() { echo "not ok - $1"; FAILS=$((FAILS + 1)); }
# check "what" cmd...: ok if cmd succeeds
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else fail "$what"; fi; }
# refute "what" cmd...: ok if cmd fails
refute() { local what=$1; shift; if "$@" >/dev/null 2>&1; then fail "$what"; else ok "$what"; fi; }
wait_for() { local s=$1; shift; for _ in $(seq $((s * 20))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }

start_fs() {
	"$FS_BIN" -f --state "$S" "$@" "$M" >>"$T/fs.log" 2>&1 &
	FSPID=$!
	wait_for 10 test -d "$M/namespaces" || { echo "not ok - corral-fs did not mount: $(tail -3 "$T/fs.log")"; exit 1; }
}

stop_fs() {
	kill "$FSPID" 2>/dev/null
	wait "$FSPID" 2>/dev/null
	for _ in $(seq 50); do mountpoint -q "$M" || break; sleep 0.1; done
	mountpoint -q "$M" && fusermount3 -u "$M"
	FSPID=
}

kill9_fs() {
	kill -9 "$FSPID" 2>/dev/null
	wait "$FSPID" 2>/dev/null
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M"
	FSPID=
}

# The revision HEAD of the history has reached.
history_rev() { git --git-dir="$S/history.git" log -1 --format=%B 2>/dev/null | sed -n 's/^Corral-Revision: //p'; }
