#!/bin/bash
# Builds every tests/fuzz/fuzz_*.c as a libFuzzer binary under ASan + UBSan
# and runs each for FUZZ_SECONDS (default 30) over its seed corpus,
# tests/fuzz/corpus/<name>/ for fuzz_<name>.c, when that folder exists.
# New inputs go to build-fuzz/corpus/<name>/, never into the seeds; crashes
# to build-fuzz/artifacts/. Exits non-zero if a build fails or any fuzzer
# reports a finding.
#   scripts/fuzz.sh [name...]      (default: every harness)
#   FUZZ_SECONDS=300 FUZZ_JOBS=2 scripts/fuzz.sh yaml
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
B=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-30}
JOBS=${FUZZ_JOBS:-2}
CC=${FUZZ_CC:-clang}
PKGS="yaml-0.1 lmdb fuse3 inih libgit2 jansson libcrypto zlib libcurl libmicrohttpd gnutls libmnl"

if ! command -v "$CC" >/dev/null; then
	echo "fuzz: $CC not found (scripts/deps.sh installs clang)" >&2
	exit 1
fi
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# shellcheck disable=SC2086
CFLAGS="-std=gnu11 -O1 -g -fno-omit-frame-pointer -D_GNU_SOURCE -Ilib -Ifs -Inoded -Idns $SAN \
$(pkg-config --cflags $PKGS 2>/dev/null)"
# shellcheck disable=SC2086
LIBS="$(pkg-config --libs $PKGS 2>/dev/null) -lpthread"

# Every library, fs and dns source, instrumented for coverage, in archives:
# the linker then takes only what a harness needs. A source that does not
# compile is left out with a warning; a harness that needs it fails to link.
rm -rf "$B/obj"
mkdir -p "$B/obj/lib" "$B/obj/fs" "$B/obj/noded" "$B/obj/dns" "$B/bin" "$B/artifacts"
srcs=$(ls lib/*.c; ls fs/*.c noded/*.c dns/*.c | grep -v '/main\.c$')
export CC CFLAGS B
# shellcheck disable=SC2016,SC2086
printf '%s\n' $srcs | xargs -P "$JOBS" -I{} sh -c \
	'$CC $CFLAGS -fsanitize=fuzzer-no-link -c -o "$B/obj/${1%.c}.o" "$1" 2>"$B/obj/${1%.c}.err" ||
	 echo "fuzz: warning: $1 does not compile with $CC (see $B/obj/${1%.c}.err); left out" >&2' _ {}
rm -f "$B/libcorral.a" "$B/libcorralfs.a" "$B/libcorraldns.a"
ar rcs "$B/libcorral.a" "$B"/obj/lib/*.o
ar rcs "$B/libcorralfs.a" "$B"/obj/fs/*.o
rm -f "$B/libcorralnoded.a" "$B/libcorraldns.a"
ar rcs "$B/libcorralnoded.a" "$B"/obj/noded/*.o
ar rcs "$B/libcorraldns.a" "$B"/obj/dns/*.o

if [ $# -gt 0 ]; then
	harnesses=$(for n in "$@"; do echo "tests/fuzz/fuzz_$n.c"; done)
else
	harnesses=$(ls tests/fuzz/fuzz_*.c)
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=0
for src in $harnesses; do
	name=$(basename "$src" .c)
	name=${name#fuzz_}
	bin=$B/bin/fuzz_$name
	# shellcheck disable=SC2086
	if ! $CC $CFLAGS -fsanitize=fuzzer -o "$bin" "$src" \
		"$B/libcorralfs.a" "$B/libcorralnoded.a" "$B/libcorraldns.a" "$B/libcorral.a" $LIBS; then
		echo "fuzz $name: build failed"
		failed=$((failed + 1))
		continue
	fi
	work=$B/corpus/$name
	mkdir -p "$work"
	seeds=
	[ -d "tests/fuzz/corpus/$name" ] && seeds=tests/fuzz/corpus/$name
	echo "fuzz $name: ${SECONDS_EACH}s${seeds:+ over $seeds}"
	# shellcheck disable=SC2086
	if "$bin" -max_total_time="$SECONDS_EACH" -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$B/artifacts/${name}-" \
		"$work" $seeds >"$B/fuzz_$name.log" 2>&1; then
		echo "fuzz $name: ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
			"$B/fuzz_$name.log" | grep -o '[0-9]*$') runs)"
	else
		echo "fuzz $name: FINDING (log: $B/fuzz_$name.log)"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' \
			"$B/fuzz_$name.log" | head -10
		failed=$((failed + 1))
	fi
done
[ "$failed" = 0 ] || { echo "fuzz: $failed harness(es) failed"; exit 1; }
echo "fuzz: all harnesses ran clean"
