#!/bin/bash
# bench/run.sh BUILD_DIR: corral-fs against baselines measured in the same run.
#
# Starts a private corral-fs (its own state and mount in a temporary folder)
# and a private tmpfs, drives both with bench/fsbench (built here with cc into
# BUILD_DIR), and prints one table: metric, corral, baseline, ratio
# (corral/baseline). See bench/README.md for what each figure means.
# It asserts nothing about time; it fails only when it cannot measure.
#
# Knobs (environment): BENCH_OBJECTS (10000), BENCH_SECONDS per rate phase (5),
# BENCH_GIT_CHANGES git CLI commits timed (500, or as many as fit in
# BENCH_GIT_SECONDS, 45), BENCH_WAIT_MAX seconds to wait for the history (120),
# BENCH_KEEP=1 keeps the temporary folder, BENCH_WRITES_ONLY=1 stops after the
# write phases (for comparing write-path changes quickly).
set -u

die() { echo "bench: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: bench/run.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
FS=$B/corral-fs
FSB=$B/fsbench
N=${BENCH_OBJECTS:-10000}
SECS=${BENCH_SECONDS:-5}
GITN=${BENCH_GIT_CHANGES:-500}
GIT_SECS=${BENCH_GIT_SECONDS:-45}
WAIT_MAX=${BENCH_WAIT_MAX:-120}

[ -x "$FS" ] || die "no $FS (run make first)"
[ "$(id -u)" = 0 ] || die "needs root (it mounts a tmpfs and a FUSE filesystem)"
[ -c /dev/fuse ] || die "no /dev/fuse"
for c in cc git fusermount3 du awk; do
	command -v "$c" >/dev/null || die "needs $c"
done
cc -O2 -pthread -o "$FSB" "$SRC/fsbench.c" || die "cannot build fsbench"
cc -O2 -o "$B/lmdbbase" "$SRC/lmdbbase.c" -llmdb || die "cannot build lmdbbase"
# shellcheck disable=SC2046
cc -O2 $(pkg-config --cflags fuse3) -o "$B/fusefloor" "$SRC/fusefloor.c" $(pkg-config --libs fuse3) -llmdb ||
	die "cannot build fusefloor"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX") || die "mktemp fails"
MNT=$T/mnt
TMPFS=$T/tmpfs
FLOOR=$T/floor
FLOORPID=
WFLOOR=$T/wfloor
WFLOORPID=
STATE=$T/state
HIST=$STATE/history.git
mkdir -p "$MNT" "$TMPFS" "$STATE"
FSPID=

is_mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
alive() { [ -n "$FSPID" ] && kill -0 "$FSPID" 2>/dev/null; }

cleanup() {
	set +e
	if alive; then
		kill -TERM "$FSPID"
		for _ in $(seq 50); do alive || break; sleep 0.1; done
		alive && kill -KILL "$FSPID"
	fi
	[ -n "$FSPID" ] && wait "$FSPID" 2>/dev/null
	for p in "$FLOORPID" "$WFLOORPID"; do
		[ -n "$p" ] || continue
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	is_mounted "$FLOOR" && { fusermount3 -u "$FLOOR" 2>/dev/null || umount -l "$FLOOR"; }
	is_mounted "$WFLOOR" && { fusermount3 -u "$WFLOOR" 2>/dev/null || umount -l "$WFLOOR"; }
	is_mounted "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
	is_mounted "$TMPFS" && { umount "$TMPFS" 2>/dev/null || umount -l "$TMPFS"; }
	if is_mounted "$MNT" || is_mounted "$TMPFS" || is_mounted "$FLOOR" || is_mounted "$WFLOOR"; then
		echo "bench: could not unmount everything; leaving $T" >&2
	elif [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "bench: kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fs_failed() {
	echo "bench: $*" >&2
	echo "--- last lines of corral-fs's log:" >&2
	tail -n 15 "$T/fs.log" >&2
	exit 1
}
check_fs() { alive || fs_failed "corral-fs (pid $FSPID) is gone"; }

now_ns() { date +%s%N; }
# field "key=value key=value" KEY
field() {
	local kv
	for kv in $1; do
		case $kv in "$2="*) echo "${kv#*=}"; return 0 ;; esac
	done
	return 1
}
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }

# fsbench ARGS...: runs the load generator, echoes its figures line.
fsbench() {
	local out
	out=$("$FSB" "$@") || { echo "bench: fsbench $* failed" >&2; return 1; }
	local errs; errs=$(field "$out" errors)
	[ "${errs:-0}" = 0 ] || echo "bench: fsbench $1 on ${3:-?}: $errs operations failed" >&2
	echo "$out"
}

# head_revision: the Corral-Revision trailer of history.git's HEAD, or 0.
head_revision() {
	local r
	r=$(git --git-dir="$HIST" log -1 --format=%B HEAD 2>/dev/null |
		sed -n 's/^Corral-Revision: *\([0-9][0-9]*\).*/\1/p' | tail -n 1)
	echo "${r:-0}"
}
# resource_version FILE: metadata.resourceVersion as read through the mount.
resource_version() {
	sed -En "s/^  resourceVersion: *[\"']?([0-9]+)[\"']? *\$/\\1/p" "$1" | head -n 1
}
# wait_history REV MAX: waits until HEAD's trailer reaches REV. Echoes the
# time it reached it (ns since the epoch), or nothing after MAX seconds.
wait_history() {
	local rev=$1 deadline=$(($(now_ns) + $2 * 1000000000)) t
	while :; do
		t=$(now_ns)
		if [ "$(head_revision)" -ge "$rev" ]; then echo "$t"; return 0; fi
		[ "$t" -lt "$deadline" ] || return 1
		check_fs
		sleep 0.05
	done
}
# settle FILE: lets the history catch up with the write of FILE before the
# next phase, so that the history writer does not skew it.
settle() {
	local rv
	rv=$(resource_version "$1")
	[ -n "$rv" ] || return 0
	wait_history "$rv" "$WAIT_MAX" >/dev/null ||
		echo "bench: the history did not reach revision $rv within ${WAIT_MAX}s (now $(head_revision))" >&2
}
# quiesce FILE: before a durable-write phase or its baseline: the history
# has caught up with the write of FILE (if any), corral-fs's repack (its
# child) is over, and every dirty page is on disk, so that no phase pays
# for the writeback of the one before it.
quiesce() {
	[ -n "${1:-}" ] && settle "$1"
	local deadline=$(($(now_ns) + WAIT_MAX * 1000000000))
	while [ -n "$(pgrep -P "$FSPID")" ] && [ "$(now_ns)" -lt "$deadline" ]; do
		check_fs
		sleep 0.1
	done
	sync
}
# ls_secs DIR: median of three timed `ls -l DIR`.
ls_secs() {
	local i t0 t1 s=""
	for i in 1 2 3; do
		t0=$(now_ns)
		LC_ALL=C ls -l "$1" >/dev/null || return 1
		t1=$(now_ns)
		s="$s $((t1 - t0))"
	done
	# shellcheck disable=SC2086
	printf '%s\n' $s | sort -n | sed -n 2p | awk '{ printf "%.4f", $1 / 1e9 }'
}

ROWS=()
row() { ROWS+=("$1|$2|$3|$(ratio "$2" "$3")"); }

# --- set up: corral-fs on a private mount, a tmpfs beside it -------------------
"$FS" -f --state "$STATE" "$MNT" >"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 200); do
	[ -d "$MNT/namespaces" ] && is_mounted "$MNT" && break
	alive || fs_failed "corral-fs exited before the mount was ready"
	sleep 0.05
done
[ -d "$MNT/namespaces" ] || fs_failed "corral-fs did not mount within 10 s"
mkdir "$MNT/namespaces/bench" || fs_failed "mkdir of a namespace fails"
D=$MNT/namespaces/bench/configmaps
[ -d "$D" ] || mkdir "$D" 2>/dev/null
[ -d "$D" ] || fs_failed "no configmaps/ folder in a new namespace"

mount -t tmpfs -o size=2g,mode=0755 corral-bench "$TMPFS" || die "cannot mount a tmpfs on $TMPFS"
DT=$TMPFS/namespaces/bench/configmaps
mkdir -p "$DT"

echo "corral bench: $N objects, ${SECS}s per rate, $(nproc) cpus, $(uname -r), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "state and mount in $T"

# --- a burst of N new objects, and the history's lag behind it ----------------
echo "burst: $N new configmaps, 8 writers ..."
c=$(fsbench write -d "$D" -n "$N" -t 8 -s "$WAIT_MAX" -p cm -N bench) || fs_failed "the burst failed"
check_fs
burst_ok=$(field "$c" ok)
[ "$burst_ok" = "$N" ] || echo "bench: only $burst_ok of $N objects written in the burst" >&2
burst_end=$(field "$c" end_ns)
last=$(field "$c" last)
rv=$(resource_version "$D/$last")
[ -n "$rv" ] || fs_failed "no metadata.resourceVersion in $last as read through the mount"
echo "burst ended at revision $rv (last close: $last); waiting for the history ..."
lag=
if reached=$(wait_history "$rv" "$WAIT_MAX"); then
	lag=$(calc "($reached - $burst_end) / 1e9" 3)
else
	echo "bench: history.git's HEAD did not reach revision $rv within ${WAIT_MAX}s (now $(head_revision))" >&2
fi
hist_bytes=$(du -sb "$HIST" 2>/dev/null | cut -f1)
hist_commits=$(git --git-dir="$HIST" rev-list --count HEAD 2>/dev/null || echo 0)
burst_secs=$(field "$c" secs)

t=$(fsbench write -d "$DT" -n "$N" -t 8 -p cm -N bench) || die "the tmpfs burst failed"
row "creates/s, burst of $N new objects, 8 writers [tmpfs]" "$(field "$c" rate)" "$(field "$t" rate)"

# --- writes with N objects present: every write replaces one of them ----------
prev=$D/$last
for th in 1 8; do
	echo "writes: $th writer(s), ${SECS}s each ..."
	quiesce "$prev"
	c=$(fsbench write -d "$D" -n 1000000000 -r "$N" -t "$th" -s "$SECS" -p cm -N bench) ||
		fs_failed "the $th-writer run failed"
	check_fs
	t=$(fsbench write -d "$DT" -n 1000000000 -r "$N" -t "$th" -s "$SECS" -p cm -N bench) ||
		die "the $th-writer tmpfs run failed"
	row "durable writes/s, $N present, $th writer(s) [tmpfs]" "$(field "$c" rate)" "$(field "$t" rate)"
	if [ "$th" = 1 ]; then
		# The disk's own ceiling: bare LMDB, one durable commit per put,
		# in a folder beside the store (same filesystem).
		mkdir -p "$T/lmdbbase"
		quiesce "$D/$(field "$c" last)"
		l=$("$B/lmdbbase" "$T/lmdbbase" 2000) || die "lmdbbase failed"
		row "durable writes/s, 1 writer [bare LMDB: 1 synced txn per put]" "$(field "$c" rate)" "$(field "$l" rate)"
		# The floor of any FUSE filesystem that makes each close durable:
		# fusefloor -w, one synced LMDB put per close, its N files made
		# first so that every timed write replaces one, as above.
		mkdir -p "$WFLOOR" "$T/wfloor.db"
		"$B/fusefloor" -w "$T/wfloor.db" "$WFLOOR" 2>"$T/wfloor.log" &
		WFLOORPID=$!
		for _ in $(seq 100); do is_mounted "$WFLOOR" && break; sleep 0.05; done
		is_mounted "$WFLOOR" || die "fusefloor -w did not mount: $(tail -n 3 "$T/wfloor.log")"
		fsbench write -d "$WFLOOR" -n "$N" -t 8 -p cm -N bench >/dev/null || die "the write floor's fill failed"
		quiesce
		f=$(fsbench write -d "$WFLOOR" -n 1000000000 -r "$N" -t 1 -s "$SECS" -p cm -N bench) ||
			die "the write floor's run failed"
		row "durable writes/s, 1 writer [minimal FUSE fs + synced put]" "$(field "$c" rate)" "$(field "$f" rate)"
		row "minimal FUSE fs's durable writes/s, 1 writer [bare LMDB]" "$(field "$f" rate)" "$(field "$l" rate)"
		kill -TERM "$WFLOORPID" && wait "$WFLOORPID"
		WFLOORPID=
		is_mounted "$WFLOOR" && fusermount3 -u "$WFLOOR"
	fi
	prev=$D/$(field "$c" last)
	settle "$prev"
done

if [ "${BENCH_WRITES_ONLY:-0}" = 1 ]; then
	echo
	for r in "${ROWS[@]}"; do
		IFS='|' read -r m a b q <<<"$r"
		printf '%-60s %12s %12s %8s\n' "$m" "${a:--}" "${b:--}" "$q"
	done
	echo "history lag after the burst: ${lag:-?} s; history.git: $hist_commits commits, $hist_bytes bytes"
	exit 0
fi

# --- reads of existing objects in a shuffled order ----------------------------
# After the history's idle repack too (quiesce): it would take a core
# from corral-fs's read phase alone, not from the baselines' after it.
quiesce "$prev"
# The floor: a minimal FUSE filesystem with as many files of an object's
# size, read through the page cache (an open and a release per file).
mkdir -p "$FLOOR"
"$B/fusefloor" "$FLOOR" "$N" "$(wc -c <"$D/$last")" 2>"$T/floor.log" &
FLOORPID=$!
for _ in $(seq 100); do is_mounted "$FLOOR" && break; sleep 0.05; done
is_mounted "$FLOOR" || die "fusefloor did not mount: $(tail -n 3 "$T/floor.log")"
for th in 1 8; do
	echo "reads: $th reader(s), ${SECS}s each ..."
	c=$(fsbench read -d "$D" -n 1000000000 -t "$th" -s "$SECS") || fs_failed "the $th-reader run failed"
	check_fs
	t=$(fsbench read -d "$DT" -n 1000000000 -t "$th" -s "$SECS") || die "the $th-reader tmpfs run failed"
	f=$(fsbench read -d "$FLOOR" -n 1000000000 -t "$th" -s "$SECS") || die "the $th-reader fusefloor run failed"
	row "files read/s, random order, $th reader(s) [tmpfs]" "$(field "$c" rate)" "$(field "$t" rate)"
	row "files read/s, $th reader(s) [minimal FUSE fs, page cache]" "$(field "$c" rate)" "$(field "$f" rate)"
	row "minimal FUSE fs's files read/s, $th reader(s) [tmpfs]" "$(field "$f" rate)" "$(field "$t" rate)"
done

# --- ls -l of the folder --------------------------------------------------------
echo "ls -l ..."
c=$(ls_secs "$D") || fs_failed "ls -l of the mount fails"
t=$(ls_secs "$DT")
row "ls -l of $N objects, s, median of 3 [tmpfs]" "$c" "$t"

# --- memory ---------------------------------------------------------------------
check_fs
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FSPID/status")
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$FSPID/status")
data=$(cat "$D"/*.yaml | wc -c)
row "corral-fs RSS, MiB [objects as read back, MiB]" "$(calc "$rss / 1024" 1)" "$(calc "$data / 1048576" 1)"
row "corral-fs peak RSS (VmHWM), MiB [same]" "$(calc "$hwm / 1024" 1)" "$(calc "$data / 1048576" 1)"

# --- the git CLI, one commit per change, in a folder of N files ----------------
echo "git CLI: $GITN commits, one per change, beside $N files ..."
G=$T/gitcli
GD=$G/namespaces/bench/configmaps
mkdir -p "$GD"
cp "$DT"/*.yaml "$GD"/
export HOME=$T GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost \
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
{ git -C "$G" init -q && git -C "$G" config gc.auto 0 &&
	git -C "$G" add -A && git -C "$G" commit -q -m "$N objects"; } || die "git setup fails"
g0=$(du -sb "$G/.git" | cut -f1)
t0=$(now_ns)
git_end=$((t0 + GIT_SECS * 1000000000))
gitn=0
for i in $(seq "$GITN"); do
	[ "$(now_ns)" -lt "$git_end" ] || break
	f=$GD/git-$i.yaml
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: git-%s\n  namespace: bench\n  labels:\n    app: fsbench\n    writer: "0"\ndata:\n  seq: "%s"\n  note: a small object written by the corral benchmark\n  payload: "0123456789abcdef0123456789abcdef0123456789abcdef"\n  padding: "fedcba9876543210fedcba9876543210fedcba9876543210"\n' "$i" "$i" >"$f"
	{ git -C "$G" add "$f" && git -C "$G" commit -q -m "create configmap bench/git-$i"; } ||
		die "git commit fails"
	gitn=$i
done
t1=$(now_ns)
g1=$(du -sb "$G/.git" | cut -f1)
git_rate=$(calc "$gitn / (($t1 - $t0) / 1e9)" 1)
git_secs=$(calc "$N / $git_rate" 1)
git_bytes=$((g0 + (g1 - g0) * N / gitn))
hist_rate=
[ -n "$lag" ] && hist_rate=$(calc "$burst_ok / ($burst_secs + $lag)" 1)
row "history lag after the burst, s [git CLI: $N commits, s]" "$lag" "$git_secs"
row "history changes recorded/s [git CLI commits/s]" "$hist_rate" "$git_rate"
row "history.git bytes after the burst [git CLI, extrapolated]" "$hist_bytes" "$git_bytes"
check_fs

# --- the table --------------------------------------------------------------------
echo
printf '%-60s %12s %12s %8s\n' "metric [baseline]" corral baseline ratio
printf '%-60s %12s %12s %8s\n' "$(printf '%.0s-' $(seq 60))" ------------ ------------ --------
for r in "${ROWS[@]}"; do
	IFS='|' read -r m a b q <<<"$r"
	printf '%-60s %12s %12s %8s\n' "$m" "${a:--}" "${b:--}" "$q"
done
echo "[baseline in brackets]; ratio = corral / baseline. history.git: $hist_commits commits for the"
echo "burst's $burst_ok changes; the git CLI figures are from $gitn commits beside $N files."
