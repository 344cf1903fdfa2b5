#!/bin/bash
# Runs every suite and ends with one line: "N passed, N failed".
#   tests/run.sh [--unit|--integration] BUILD_DIR
# Unit suites are cmocka binaries, one per tests/unit/test_*.c (their
# summary lines are counted); one that is missing or not executable is a
# failure. Integration suites are scripts under tests/integration/ that
# print "ok - what" or "not ok - what" per check; a script that dies
# without saying "not ok" counts as one failure, and so does one that
# cannot run (no run bit, a syntax error). Integration tests need root and
# /dev/fuse: without them they fail, loudly; they are never skipped. The
# format check counts as one unit check.
set -u
mode=all
case "${1:-}" in --unit) mode=unit; shift ;; --integration) mode=integration; shift ;; esac
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CORRAL_BUILD=$ROOT/$B CORRAL_ROOT=$ROOT
passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count_cmocka() {
	local name=$1 rc=$2 p f
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0} f=${f:-0}
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; echo "FAIL $name: exited $rc"; fi
	[ "$f" != 0 ] && grep -E '^\[  (FAILED|  ERROR)' "$log" | head -20
	echo "unit $name: $p passed, $f failed"
	passed=$((passed + p)) failed=$((failed + f))
}

# cannot_run KIND NAME WHY: a suite that could not even start, one failure.
cannot_run() {
	echo "FAIL $2: $3"
	echo "$1 $2: 0 passed, 1 failed"
	failed=$((failed + 1))
}

if [ "$mode" != integration ]; then
	for src in "$ROOT"/tests/unit/test_*.c; do
		[ -e "$src" ] || continue
		name=$(basename "$src" .c)
		t=$ROOT/$B/tests/$name
		if [ ! -e "$t" ]; then cannot_run unit "$name" "missing ($B/tests/$name; run make)"; continue; fi
		if [ ! -x "$t" ]; then cannot_run unit "$name" "not executable"; continue; fi
		timeout 300 "$t" >"$log" 2>&1
		count_cmocka "$name" $?
	done
fi

# The C sources as .clang-format writes them (`make format` mends them):
# one check, a failure naming each file that differs.
if [ "$mode" != integration ]; then
	if ! command -v clang-format >/dev/null; then
		cannot_run format clang-format "clang-format is not installed (scripts/deps.sh installs it)"
	elif make -s -C "$ROOT" format-check >"$log" 2>&1; then
		echo "format: 1 passed, 0 failed"
		passed=$((passed + 1))
	else
		echo "FAIL format: not as .clang-format writes them (make format):"
		grep -o '^[^:]*\.[ch]:' "$log" | sort -u | sed 's/:$//; s/^/  /' | head -20
		echo "format: 0 passed, 1 failed"
		failed=$((failed + 1))
	fi
fi

# machine_whole NAME: after a suite, the machine's device nodes are still
# what every later suite and nspawn needs (a tool that replaces a file by
# renaming a new one over it, pointed at /dev/null, makes it a regular
# file, and systemd-nspawn then refuses to start any container). A suite
# that broke one fails here, and the node is made again for the next.
machine_whole() {
	local dev spec
	for spec in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
		dev=/dev/${spec%%:*}
		[ -c "$dev" ] && continue
		echo "not ok - $1 left $dev a $(stat -c %F "$dev" 2>/dev/null || echo missing file), not a character device"
		failed=$((failed + 1))
		rm -f "$dev"
		spec=${spec#*:}
		mknod -m 666 "$dev" c "${spec%:*}" "${spec#*:}"
	done
}

if [ "$mode" != unit ]; then
	machine_whole "an earlier run"
	for t in "$ROOT"/tests/integration/*.sh; do
		[ -e "$t" ] || continue
		name=$(basename "$t" .sh)
		if [ ! -x "$t" ]; then cannot_run integration "$name" "not executable"; continue; fi
		if ! bash -n "$t" >"$log" 2>&1; then
			cannot_run integration "$name" "syntax error"
			head -5 "$log"
			continue
		fi
		start=$SECONDS
		timeout 600 "$t" >"$log" 2>&1
		rc=$?
		p=$(grep -c '^ok ' "$log") f=$(grep -c '^not ok ' "$log")
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; echo "FAIL $name: exited $rc"; tail -5 "$log"; fi
		grep -E '^(not ok |#! )' "$log" | head -60
		echo "integration $name: $p passed, $f failed ($((SECONDS - start)) s)"
		passed=$((passed + p)) failed=$((failed + f))
		machine_whole "$name"
	done
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
