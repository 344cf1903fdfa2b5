#!/bin/bash
# corral-fs against hostile sizes and refused writes (issue 11): every size
# that reaches it (truncate by path or handle, write offsets, fallocate) is
# bounded by the object size limit and refused with EFBIG, never allocated;
# a write refused in any part fails its close and stores nothing;
# open(O_TRUNC) empties its own writer's buffer only; every refusal writes a
# .errors line; Secrets and drop box files are never wider than 0600.
. "$(dirname "$0")/../lib/lib.sh"
start_fs
C=$M/namespaces/default/configmaps
SEC=$M/namespaces/default/secrets
D=$M/namespaces/default
TIB=$((1 << 40))
alive() { kill -0 "$FSPID" 2>/dev/null && test -d "$M/namespaces"; }
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: "%s"}\n' "$1" "$2"; }
secret() { printf 'apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\nstringData: {p: hunter2}\n' "$1"; }
mode() { stat -c %a "$1"; }
# revive: a corral-fs that died (already counted as a failure) is started
# again on the same state, so that each part below is tested on its own.
revive() { alive || { kill9_fs; start_fs; }; }
# err_line PATH: .errors has a line for PATH (below the mount).
err_line() { grep -q "^[^ ]* $1: " "$M/.errors"; }

# op.py OP ARGS...: runs the steps of OP, printing each one's result ("ok"
# or its errno's name), space-separated.
cat >"$T/op.py" <<'P'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
out = []
def step(f, *a):
    try:
        r = f(*a)
        out.append("ok")
        return r
    except OSError as e:
        out.append(errno.errorcode.get(e.errno, str(e.errno)))
def cerr(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
op, a = sys.argv[1], sys.argv[2:]
if op == "truncate":
    step(os.truncate, a[0], int(a[1]))
elif op == "fresh-truncate": # a writer that has done nothing, then truncate(2)
    fd = os.open(a[0], os.O_WRONLY)
    step(os.truncate, a[0], int(a[1]))
    step(os.close, fd)
elif op == "ftruncate":
    fd = os.open(a[0], os.O_WRONLY)
    step(os.ftruncate, fd, int(a[1]))
    step(os.close, fd)
elif op == "pwrite":
    fd = os.open(a[0], os.O_WRONLY)
    step(os.pwrite, fd, b"x", int(a[1]))
    step(os.close, fd)
elif op == "fallocate":
    fd = os.open(a[0], os.O_WRONLY)
    step(lambda: cerr(libc.fallocate(fd, 0, int(a[1]), int(a[2]))))
    step(os.close, fd)
elif op == "oversize": # O_TRUNC, 1 MiB, 1 MiB more, close
    fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o644)
    step(os.write, fd, b"a" * (1 << 20))
    step(os.write, fd, b"a" * (1 << 20))
    step(os.close, fd)
elif op == "late-fix": # a refused write, then a valid text: still refused
    fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC)
    step(os.pwrite, fd, b"x", 2 << 20)
    step(os.pwrite, fd, open(a[1], "rb").read(), 0)
    step(os.close, fd)
elif op == "exchange":
    step(lambda: cerr(libc.renameat2(-100, a[0].encode(), -100, a[1].encode(), 2)))
elif op == "otrunc": # another process's open(O_TRUNC) leaves this buffer alone
    orig = open(a[0], "rb").read()
    fd1 = os.open(a[0], os.O_RDWR)
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        fd2 = os.open(a[0], os.O_WRONLY | os.O_TRUNC)
        os.write(w1, b"o")
        os.read(r2, 1)
        os.write(fd2, open(a[1], "rb").read())
        try:
            os.close(fd2)
            os._exit(0)
        except OSError:
            os._exit(1)
    os.read(r1, 1)
    data = os.pread(fd1, 1 << 21, 0)
    out.append("kept" if data == orig else "emptied(%d)" % len(data))
    step(os.pwrite, fd1, data.replace(b"keepme", b"edited"), 0)
    step(os.close, fd1)
    out.append("edited" if b"edited" in open(a[0], "rb").read() else "unedited")
    os.write(w2, b"g")
    _, st = os.waitpid(pid, 0)
    out.append("ok" if st == 0 else "child-failed")
elif op == "create": # O_CREAT with mode 0644: the mode of the open file
    fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    out.append("%o" % (os.fstat(fd).st_mode & 0o7777))
    os.write(fd, open(a[1], "rb").read())
    step(os.close, fd)
print(" ".join(out))
P
op() { python3 "$T/op.py" "$@" 2>&1; }
# expect WHAT WANT OP ARGS...: ok when op prints WANT.
expect() {
	local what=$1 want=$2 got
	shift 2
	got=$(op "$@")
	if [ "$got" = "$want" ]; then ok "$what"; else fail "$what (got: $got; want: $want)"; fi
}

cm base 1 >"$C/base.yaml"
check "an object to work on" readable "$C/base.yaml"
cp "$C/base.yaml" "$T/base.before"
same() { cmp -s "$T/base.before" "$C/base.yaml"; }

# ---- 1. every size is bounded ----
expect "truncate(2) of an object by path to 1 TiB is refused with EFBIG" EFBIG truncate "$C/base.yaml" $TIB
check "... corral-fs lives" alive
check "... and the object is as it was" same
check "... and .errors says why" err_line namespaces/default/configmaps/base.yaml
expect "truncate(2) by path while a writer has it open and has done nothing: EFBIG" "EFBIG ok" \
	fresh-truncate "$C/base.yaml" $TIB
check "... corral-fs lives" alive
check "... and the object is as it was" same
expect "ftruncate(2) of a writer to 1 TiB: EFBIG, and its close fails" "EFBIG EFBIG" ftruncate "$C/base.yaml" $TIB
check "... and the object is as it was" same
expect "a write at 1 TiB (sparse, beyond the end): EFBIG, and its close fails" "EFBIG EFBIG" pwrite "$C/base.yaml" $TIB
check "... and the object is as it was" same
expect "fallocate(2) of 1 TiB on an object: EFBIG" "EFBIG ok" fallocate "$C/base.yaml" 0 $TIB
expect "fallocate(2) at 1 TiB on an object: EFBIG" "EFBIG ok" fallocate "$C/base.yaml" $TIB 1
check "... corral-fs lives" alive
check "... and the object is as it was" same
: >"$D/.scratch"
expect "truncate(2) of a scratch file to 1 TiB: EFBIG" EFBIG truncate "$D/.scratch" $TIB
expect "a write at 1 TiB in a scratch file: EFBIG" "EFBIG ok" pwrite "$D/.scratch" $TIB
expect "fallocate(2) of 1 TiB on a scratch file: EFBIG" "EFBIG ok" fallocate "$D/.scratch" 0 $TIB
check "... and .errors says why" err_line namespaces/default/.scratch
check "... corral-fs lives" alive
rm -f "$D/.scratch"

revive
# ---- 4. a write refused in any part stores nothing ----
head -c 2000000 /dev/zero | tr '\0' x | sed '1s/^/apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\ndata: {a: "/; $s/$/"}/' >"$T/big.yaml"
refute "cp of a 2 MB text over an object fails" cp "$T/big.yaml" "$C/base.yaml"
check "... and the object is byte for byte as it was" same
check "... and .errors names the file" err_line namespaces/default/configmaps/base.yaml
expect "a write over the limit fails, and so does the close that follows" "ok EFBIG EFBIG" oversize "$C/base.yaml"
check "... and the object is byte for byte as it was" same
cm base 2 >"$T/base2.yaml"
expect "a valid text written after a refused write is refused at close too" "EFBIG ok EFBIG" late-fix "$C/base.yaml" "$T/base2.yaml"
check "... and the object is byte for byte as it was" same
refute "cp of a 2 MB text to a new object's name fails" cp "$T/big.yaml" "$C/fresh.yaml"
check "... and there is no such object" test ! -e "$C/fresh.yaml"
expect "a new file written over the limit: the close fails" "ok EFBIG EFBIG" oversize "$C/fresh2.yaml"
check "... and there is no such object" test ! -e "$C/fresh2.yaml"
refute "a drop box file written over the limit is refused" cp "$T/big.yaml" "$D/bigdrop.yaml"
check "... and not kept" test ! -e "$D/bigdrop.yaml"
check "... corral-fs lives" alive
check "writing the object works as before" sh -c "cp '$T/base2.yaml' '$C/base.yaml' && grep -q \"a: '2'\" '$C/base.yaml'"

revive
# ---- 5. open(O_TRUNC) empties its own buffer only ----
cm trunc keepme >"$C/trunc.yaml"
cm trunc other >"$T/trunc2.yaml"
readable "$C/trunc.yaml" || fail "the object trunc was not stored"
r=$(op otrunc "$C/trunc.yaml" "$T/trunc2.yaml")
set -- $r
[ "${1:-}" = kept ] && ok "open(O_TRUNC) by one process leaves another's write buffer whole" ||
	fail "open(O_TRUNC) by one process leaves another's write buffer whole (got: $r)"
[ "${2:-} ${3:-} ${4:-}" = "ok ok edited" ] && ok "... whose in-place edit is then taken" ||
	fail "... whose in-place edit is then taken (got: $r)"
[ "${5:-}" = ok ] && ok "... and the O_TRUNC writer's own text is taken after it" ||
	fail "... and the O_TRUNC writer's own text is taken after it (got: $r)"
check "... whole" sh -c "grep -q 'a: other' '$C/trunc.yaml' && ! grep -q keepme '$C/trunc.yaml'"
cm base 4 >"$T/base4.yaml"
check "a shell's redirection (O_TRUNC) still replaces an object" sh -c "cat '$T/base4.yaml' >'$C/base.yaml'"
check "... with the new text" grep -q "a: '4'" "$C/base.yaml"

revive
# ---- 7. every refusal writes a .errors line ----
cm ex1 1 >"$C/ex1.yaml"
cm ex2 1 >"$C/ex2.yaml"
cm other 1 >"$C/other.yaml"
expect "renameat2(RENAME_EXCHANGE) of two objects is refused with EINVAL" EINVAL exchange "$C/ex1.yaml" "$C/ex2.yaml"
check "... and .errors says why" err_line namespaces/default/configmaps/ex1.yaml
check "... in words" grep -q 'ex1.yaml: .*RENAME_EXCHANGE' "$M/.errors"
check "... and both objects are as they were" sh -c "grep -q 'name: ex1' '$C/ex1.yaml' && grep -q 'name: ex2' '$C/ex2.yaml'"
refute "link(2) is refused" ln "$C/other.yaml" "$C/hard.yaml"
check "... and .errors says why" err_line namespaces/default/configmaps/hard.yaml
refute "mkdir in a kind folder is refused" mkdir "$C/sub"
check "... and .errors says why" err_line namespaces/default/configmaps/sub
refute "a symbolic link with an object's name is refused" ln -s x "$C/link.yaml"
check "... and .errors says why" err_line namespaces/default/configmaps/link.yaml
refute "removing .errors is refused" rm -f "$M/.errors"
check "... and .errors says why" err_line .errors
refute "rmdir of a cluster-scoped kind folder is refused" rmdir "$M/nodes"
check "... and .errors says why" err_line nodes
refute "renaming a folder is refused" mv "$D/configmaps" "$D/cms"
check "... and .errors says why" err_line namespaces/default/configmaps
refute "opening .errors for writing is refused" sh -c "echo x >>'$M/.errors'"
check "... and .errors says why" grep -q '^[^ ]* \.errors: .*writ' "$M/.errors"
rm -f "$C/other.yaml" "$C/ex1.yaml" "$C/ex2.yaml"

revive
# ---- 10. Secrets and drop box files are 0600 at most ----
secret s1 >"$T/s1.yaml"
chmod 644 "$T/s1.yaml"
check "cp -a of a 0644 Secret" cp -a "$T/s1.yaml" "$SEC/s1.yaml"
check "... leaves it 0600" test "$(mode "$SEC/s1.yaml")" = 600
check "chmod 644 of a Secret is taken" chmod 644 "$SEC/s1.yaml"
check "... as 0600" test "$(mode "$SEC/s1.yaml")" = 600
check "chmod 755 of a Secret is taken as 0600" sh -c "chmod 755 '$SEC/s1.yaml' && test \$(stat -c %a '$SEC/s1.yaml') = 600"
check "chmod 400 of a Secret narrows it" sh -c "chmod 400 '$SEC/s1.yaml' && test \$(stat -c %a '$SEC/s1.yaml') = 400"
secret s2 >"$T/s2.yaml"
chmod 644 "$T/s2.yaml"
check "rsync -a of a 0644 Secret" rsync -a "$T/s2.yaml" "$SEC/s2.yaml"
check "... leaves it 0600" test "$(mode "$SEC/s2.yaml")" = 600
secret s3 >"$T/s3.yaml"
chmod 644 "$T/s3.yaml"
tar -C "$T" -cf "$T/s3.tar" s3.yaml
check "tar x of a 0644 Secret" tar -C "$SEC" -xf "$T/s3.tar"
check "... leaves it 0600" test "$(mode "$SEC/s3.yaml")" = 600
check "a Secret moved to a backup name" mv "$SEC/s1.yaml" "$SEC/s1.yaml~"
check "... stays at most 0600 when chmod 644" sh -c "chmod 644 '$SEC/s1.yaml~' && test \$(stat -c %a '$SEC/s1.yaml~') = 600 -o \$(stat -c %a '$SEC/s1.yaml~') = 400"
rm -f "$SEC/s1.yaml~"
check "a ConfigMap's chmod 755 is taken as asked, as before" sh -c "chmod 755 '$C/base.yaml' && test \$(stat -c %a '$C/base.yaml') = 755"
chmod 644 "$C/base.yaml"

expect "a drop box file is 0600 from its creation" "600 ok" create "$D/drop1.yaml" "$T/s1.yaml"
check "... and after its close" test "$(mode "$D/drop1.yaml")" = 600
check "... and stays 0600 when chmod 644" sh -c "chmod 644 '$D/drop1.yaml' && test \$(stat -c %a '$D/drop1.yaml') = 600"
check "cp -a of a 0644 manifest into a drop box" cp -a "$T/s2.yaml" "$D/drop2.yaml"
check "... leaves it 0600" test "$(mode "$D/drop2.yaml")" = 600
expect "a drop box file at the mount's top is 0600 from its creation" "600 ok" create "$M/drop3.yaml" "$T/s3.yaml"
cp "$T/s3.yaml" "$D/.moving"
chmod 644 "$D/.moving"
check "a 0644 scratch file renamed into a drop box name" mv "$D/.moving" "$D/drop4.yaml"
check "... is 0600" test "$(mode "$D/drop4.yaml")" = 600
: >"$D/.plain"
chmod 644 "$D/.plain"
expect "a scratch file in a Secrets folder (rsync's, an editor's) is 0600 from its creation" "600 ok" \
	create "$SEC/.s4.yaml.tmp" "$T/s3.yaml"
check "... and stays 0600 when chmod 644" sh -c "chmod 644 '$SEC/.s4.yaml.tmp' && test \$(stat -c %a '$SEC/.s4.yaml.tmp') = 600"
rm -f "$SEC/.s4.yaml.tmp"
check "a scratch file keeps the mode asked, as before" test "$(mode "$D/.plain")" = 644

rm -f "$D/drop1.yaml" "$D/drop2.yaml" "$M/drop3.yaml" "$D/drop4.yaml" "$D/.plain" \
	"$SEC/s1.yaml" "$SEC/s2.yaml" "$SEC/s3.yaml" "$C/trunc.yaml" "$C/base.yaml"
check "what the test made is gone" sh -c "! ls '$D'/*.yaml '$SEC'/*.yaml '$C'/*.yaml '$M'/drop3.yaml 2>/dev/null | grep -q ."
check "corral-fs lived through it all" alive

[ "$FAILS" = 0 ]
