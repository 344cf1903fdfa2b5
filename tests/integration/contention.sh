#!/bin/bash
# Last-writer-wins under contention: writes without metadata.resourceVersion
# always win (corral-tree(5)). 100, 200 and 1,000 processes write the same
# ConfigMap at once; every one of them must succeed (no EAGAIN "changed
# meanwhile"), no refusal reaches .errors, and the object read back is one
# whole writer's version. A write with a stale resourceVersion is still a
# conflict.
. "$(dirname "$0")/../lib/lib.sh"
start_fs
F=$M/namespaces/default/configmaps/hot.yaml

# writer N: cp of one whole manifest, each field naming its writer (cp,
# unlike a shell redirection, fails when the close that commits fails).
writer() {
	manifest "$1" >"$T/w$1.yaml" && cp "$T/w$1.yaml" "$F"
}
manifest() {
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hot\n  labels: {writer: "w%s"}\ndata:\n  a: "%s"\n  b: "%s"\n  c: "%s-%s"\n' \
		"$1" "$1" "$1" "$1" "$(printf '%0200d' "$1")"
}

# whole: the stored object is one writer's: label, a, b and c agree.
whole() {
	local w a b c
	w=$(sed -n 's/^    writer: w\(.*\)$/\1/p' "$F")
	a=$(sed -n "s/^  a: '\{0,1\}\"\{0,1\}\([0-9]*\).*/\1/p" "$F")
	b=$(sed -n "s/^  b: '\{0,1\}\"\{0,1\}\([0-9]*\).*/\1/p" "$F")
	c=$(sed -n "s/^  c: '\{0,1\}\"\{0,1\}\([0-9]*\)-.*/\1/p" "$F")
	[ -n "$w" ] && [ "$w" = "$a" ] && [ "$a" = "$b" ] && [ "$b" = "$c" ]
}

contend() {
	local n=$1 pids=() failed=0 i errs0 errs1
	errs0=$(wc -l <"$M/.errors")
	for i in $(seq "$n"); do
		writer "$i" 2>>"$T/writers.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || failed=$((failed + 1)); done
	errs1=$(wc -l <"$M/.errors")
	if [ "$failed" = 0 ]; then ok "$n concurrent last-writer-wins writers all succeed"; else
		fail "$n concurrent last-writer-wins writers: $failed failed ($(sort "$T/writers.err" | uniq -c | head -2))"
	fi
	if [ "$errs1" = "$errs0" ]; then ok "... and .errors shows no refusal"; else
		fail "... .errors grew by $((errs1 - errs0)) lines: $(tail -1 "$M/.errors")"
	fi
	check "... and the object read back is one whole writer's version" whole
	: >"$T/writers.err"
}

check "a first write" writer 0
contend 100
contend 200
contend 1000

# Optimistic concurrency stays: a write naming an old resourceVersion is
# a conflict and changes nothing.
rv=$(obj_rev "$F")
writer 5000
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hot\n  resourceVersion: "%s"\ndata: {a: "6000"}\n' "$rv" >"$T/stale.yaml"
refute "a write with a stale resourceVersion is refused" cp "$T/stale.yaml" "$F"
check "... and the stored object is the newer write" grep -q '^  a: .*5000' "$F"
check "... and .errors says it is a conflict" grep -q 'hot.yaml: .*Conflict' "$M/.errors"
[ "$FAILS" = 0 ]
