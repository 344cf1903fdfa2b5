#!/bin/bash
# Every daemon refuses a start it cannot make with a message that names
# what is wrong and exit status 1: never a signal, never a crash (corral-fs
# used to free an unset pointer when its state folder was unusable).
. "$(dirname "$0")/../lib/lib.sh"

# starts "what" WANT CMD...: CMD exits 1 (not by a signal) and says WANT.
starts() {
	local what=$1 want=$2 out rc
	shift 2
	out=$(timeout 20 "$@" 2>&1)
	rc=$?
	# (a sanitizer's report exits 1 too: it is a crash all the same)
	if [ "$rc" = 1 ] && printf '%s' "$out" | grep -qF -- "$want" &&
		! printf '%s' "$out" | grep -q 'Sanitizer'; then
		ok "$what"
	else
		fail "$what (exit $rc: $(printf '%s' "$out" | tail -2))"
	fi
}

NOPE=$T/no/such/mount
# (no folder can be made under /proc)
starts "corral-fs: an unusable state folder" "cannot use state folder /proc/corral-none/state" \
	"$FS_BIN" -f --state /proc/corral-none/state "$M"
check "... and nothing is mounted" sh -c "! mountpoint -q '$M'"
starts "corral-ctrl: no cluster mounted" "no cluster is mounted at $NOPE" \
	"$BUILD/corral-ctrl" --mount "$NOPE"
starts "corral-noded: no cluster mounted" "$NOPE is not a corral mount" \
	"$BUILD/corral-noded" --mount "$NOPE" --hollow --name startup-test
starts "corral-sched: no cluster mounted" "$NOPE" "$BUILD/corral-sched" --mount "$NOPE"
[ "$FAILS" = 0 ]
