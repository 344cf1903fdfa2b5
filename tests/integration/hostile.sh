#!/bin/bash
# Hostile YAML on a real mount (corral-fs alone): an alias bomb, one that
# would abort corral-fs by its size, an object that grows past the size
# limit once stored, and NUL bytes are refused at the close with a reason
# in .errors and the writer's errno; corral-fs stays up with little memory,
# and what is stored (objects and history) does not change.
. "$(dirname "$0")/../lib/lib.sh"
start_fs
mkdir "$M/namespaces/dev"
C=$M/namespaces/dev/configmaps

# bomb FILE S N: a ConfigMap whose data.a is an anchored string of S bytes
# that data.list aliases N times.
bomb() {
	{
		printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata:\n  a: &a ' "$(basename "$1" .yaml)"
		head -c "$2" /dev/zero | tr '\0' x
		printf '\nlist: [*a'
		yes ', *a' | head -n "$(($3 - 1))" | tr -d '\n'
		printf ']\n'
	} >"$1"
}
alive() { kill -0 "$FSPID" && mountpoint -q "$M" && test -d "$M/namespaces/dev"; }
# The peak memory corral-fs has used, in kB.
peak_kb() { sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB\$/\1/p" "/proc/$FSPID/status"; }
# commits FILE: how many commits of the history touch FILE's path.
commits() { git --git-dir="$S/history.git" log --format=%H -- "$1" 2>/dev/null | wc -l; }

cat >"$T/cfg.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: "1"}
Y
check "a ConfigMap is accepted" cp "$T/cfg.yaml" "$C/cfg.yaml"
cp "$C/cfg.yaml" "$T/cfg.stored"
history_settle
cfg_commits=$(commits namespaces/dev/configmaps/cfg.yaml)

# ---- alias amplification ----
bomb "$T/bomb.yaml" 102400 5000
check "the alias bomb is about 120 kB" test "$(stat -c %s "$T/bomb.yaml")" -lt 130000
before=$(peak_kb)
[ -n "$before" ] || fail "cannot read corral-fs's peak memory (VmHWM)"
refute "the alias bomb (100 kB aliased 5,000 times) is refused" cp "$T/bomb.yaml" "$C/bomb.yaml"
check "... with EINVAL" sh -c "cp '$T/bomb.yaml' '$C/bomb.yaml' 2>&1 | grep -q 'Invalid argument'"
check "... and is not there" test ! -e "$C/bomb.yaml"
check ".errors says why" \
	grep -q 'namespaces/dev/configmaps/bomb.yaml: .*alias \*a expands the document to more than 4194304 bytes of text (alias expansion limit)' "$M/.errors"
check "corral-fs is alive" alive
after=$(peak_kb)
check "... and refused it in little memory (peak $before kB, then $after kB)" test "$((${after:-999999} - ${before:-0}))" -lt 131072
cp "$T/bomb.yaml" "$T/cfg-bomb.yaml"
sed -i 's/name: bomb}/name: cfg}/' "$T/cfg-bomb.yaml"
refute "the alias bomb written over an object is refused" cp "$T/cfg-bomb.yaml" "$C/cfg.yaml"
check "... and the object is unchanged" cmp -s "$T/cfg.stored" "$C/cfg.yaml"

bomb "$T/big.yaml" 1468006 50
check "the big bomb is about 1.45 MB" test "$(stat -c %s "$T/big.yaml")" -lt 1500000
refute "an alias bomb of 1.45 MB is refused" cp "$T/big.yaml" "$C/big.yaml"
check "... with a reason in .errors" grep -q 'configmaps/big.yaml: .*alias \*a expands' "$M/.errors"
check "corral-fs is alive after it" alive
after=$(peak_kb)
check "... in little memory (peak $after kB)" test "$((${after:-999999} - ${before:-0}))" -lt 131072

# Two copies of 700 kB: within the parser's budget, over the object size
# limit once stored.
{
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice}\nx:\n  a: &a '
	head -c 716800 /dev/zero | tr '\0' x
	printf '\n  b: *a\n  c: *a\n'
} >"$T/twice.yaml"
refute "an object stored over the size limit is refused" cp "$T/twice.yaml" "$C/twice.yaml"
check "... with EFBIG" sh -c "cp '$T/twice.yaml' '$C/twice.yaml' 2>&1 | grep -q 'File too large'"
check "... and .errors says why" \
	grep -q 'configmaps/twice.yaml: .*the object as stored would be over the limit of 1572864 bytes' "$M/.errors"
check "... and is not there" test ! -e "$C/twice.yaml"

# ---- NUL bytes ----
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nul}\ndata: {a: "1\0"}\n' >"$T/nul.yaml"
refute "a file with a NUL byte is refused" cp "$T/nul.yaml" "$C/nul.yaml"
check "... with EINVAL" sh -c "cp '$T/nul.yaml' '$C/nul.yaml' 2>&1 | grep -q 'Invalid argument'"
check ".errors says where the NUL is" \
	grep -q 'configmaps/nul.yaml: line 4 column 13 (byte offset 65): NUL byte' "$M/.errors"
check "... and it is not there" test ! -e "$C/nul.yaml"
printf '\0' >"$T/nul-start.yaml"
cat "$T/cfg.yaml" >>"$T/nul-start.yaml"
refute "a NUL byte at the start, written over an object, is refused" cp "$T/nul-start.yaml" "$C/cfg.yaml"
check "... .errors says line 1 column 1" grep -q 'configmaps/cfg.yaml: line 1 column 1 (byte offset 0): NUL byte' "$M/.errors"
cp "$T/cfg.yaml" "$T/nul-end.yaml"
printf '\0' >>"$T/nul-end.yaml"
refute "a NUL byte at the end is refused" cp "$T/nul-end.yaml" "$C/cfg.yaml"
check "... and the object is unchanged" cmp -s "$T/cfg.stored" "$C/cfg.yaml"
refute "a drop box file with a NUL byte is refused" cp "$T/nul.yaml" "$M/namespaces/dev/nul.yaml"
check "... and .errors says where" \
	grep -q 'namespaces/dev/nul.yaml: line 4 column 13 (byte offset 65): NUL byte' "$M/.errors"
check "corral-fs is alive after the NULs" alive
refute "corral-fs logged no memory error (ASan builds)" grep -q 'ERROR: AddressSanitizer' "$T/fs.log"

# ---- nothing stored changed ----
check "the stored ConfigMap reads as before" cmp -s "$T/cfg.stored" "$C/cfg.yaml"
check "only the ConfigMap is there" test "$(ls "$C")" = cfg.yaml
history_settle
check "the history has no commit of the refused objects" \
	test "$(git --git-dir="$S/history.git" log --format=%s | grep -c 'bomb\|big\|twice\|nul')" = 0
check "... nor a new one of the ConfigMap" test "$(commits namespaces/dev/configmaps/cfg.yaml)" = "$cfg_commits"

[ "$FAILS" = 0 ]
