#!/bin/bash
# tests/run.sh itself, on a tree of its own: a suite that cannot run (no run
# bit, a syntax error, a unit test binary missing or not executable) is a
# failure, never skipped; one that dies without a "not ok" is one failure;
# the format check (make format-check) is one check.
set -u
RUN=$(cd "$(dirname "$0")/.." && pwd)/run.sh
X=$(mktemp -d /tmp/corral-runner.XXXXXX)
trap 'rm -rf "$X"' EXIT
FAILS=0
ok() { echo "ok - $1"; }
fail() { echo "not ok - $1"; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else fail "$what"; fi; }

mkdir -p "$X/tests/integration" "$X/tests/unit" "$X/build/tests"
cp "$RUN" "$X/tests/run.sh"
I=$X/tests/integration
printf '#!/bin/bash\necho "ok - one"\necho "ok - two"\n' >"$I/good.sh"
printf '#!/bin/bash\necho "ok - never run"\n' >"$I/noexec.sh"
printf '#!/bin/bash\nif true; then\necho "ok - never run"\n' >"$I/broken.sh"
printf '#!/bin/bash\necho "ok - before"\nexit 3\n' >"$I/dies.sh"
chmod +x "$I/good.sh" "$I/broken.sh" "$I/dies.sh"
for u in test_missing test_noexec test_good; do echo '/* a unit test */' >"$X/tests/unit/$u.c"; done
printf '#!/bin/sh\necho "[  PASSED  ] 2 test(s)."\n' >"$X/build/tests/test_good"
cp "$X/build/tests/test_good" "$X/build/tests/test_noexec"
chmod +x "$X/build/tests/test_good"
printf 'format-check:\n\t@true\n' >"$X/Makefile"

"$X/tests/run.sh" build >"$X/out" 2>&1
rc=$?
sed 's/^/# /' "$X/out"
has() { grep -qxF -- "$1" "$X/out"; }
check "a script without its run bit is a failure" has "FAIL noexec: not executable"
check "a script with a syntax error is a failure" has "FAIL broken: syntax error"
check "... and is not run" sh -c "! grep -q 'never run' '$X/out'"
check "a script that dies without \"not ok\" is one failure" grep -qx 'integration dies: 1 passed, 1 failed ([0-9]* s)' "$X/out"
check "a unit test binary that is missing is a failure" grep -q '^FAIL test_missing: missing' "$X/out"
check "a unit test binary that is not executable is a failure" has "FAIL test_noexec: not executable"
check "the suites that run are counted" sh -c "grep -qx 'integration good: 2 passed, 0 failed ([0-9]* s)' '$X/out' && grep -qxF 'unit test_good: 2 passed, 0 failed' '$X/out'"
check "the format check counts as one" has "format: 1 passed, 0 failed"
check "the last line counts them all" test "$(tail -1 "$X/out")" = "6 passed, 5 failed"
check "and run.sh fails" test "$rc" != 0
[ "$FAILS" = 0 ]
