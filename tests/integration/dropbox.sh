#!/bin/bash
# corral-fs's drop boxes alone (no corral-ctrl): a manifest written at a
# namespace's top or the mount's is kept when at least one of its documents
# can be filed, as `kubectl apply -f` applies what it can; every document
# that cannot is named in .errors (file, document, kind and name, reason).
# A file with no document that can be filed, or no YAML, is refused whole.
. "$(dirname "$0")/../lib/lib.sh"
start_fs
mkdir "$M/namespaces/dev"
P=$M/namespaces/dev

cat >"$T/mixed.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: one}
data: {a: "1"}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
---
apiVersion: v1
kind: Service
metadata: {name: badport}
spec: {selector: {app: x}, ports: [{port: 99999}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: four}
data: {b: "2"}
Y

# ---- a mixed file is kept ----
check "a drop box file with some documents that cannot be filed is accepted" cp "$T/mixed.yaml" "$P/mixed.yaml"
check "... and kept whole for corral-ctrl" cmp "$T/mixed.yaml" "$P/mixed.yaml"
check ".errors names the document of a kind corral has no folder for" \
	grep -q 'namespaces/dev/mixed.yaml: document 2 (Widget w1, line [0-9]*): kind: Unsupported value: "Widget"' "$M/.errors"
check ".errors names the document that does not validate, with the rule" \
	grep -q 'namespaces/dev/mixed.yaml: document 3 (Service badport, line [0-9]*): .*spec.ports\[0\].port' "$M/.errors"
check "... each refused document once" test "$(grep -c 'mixed.yaml: document' "$M/.errors")" = 2
refute "... and the documents that can be filed are not in .errors" grep -qE 'mixed.yaml: document (1|4) ' "$M/.errors"
check "... in the format of every .errors line" \
	grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z namespaces/dev/mixed.yaml: document 2 ' "$M/.errors"

check "a mixed file at the mount's top is accepted" cp "$T/mixed.yaml" "$M/top.yaml"
check "... and .errors names its refused documents" grep -q '^[^ ]* top.yaml: document 2 (Widget w1' "$M/.errors"

# A file renamed into a drop box name is checked as a close would.
cp "$T/mixed.yaml" "$P/.scratch.tmp"
check "a mixed file renamed into a drop box name is accepted" mv "$P/.scratch.tmp" "$P/moved.yaml"
check "... and kept" test -f "$P/moved.yaml"
check "... and .errors names its refused documents" grep -q 'namespaces/dev/moved.yaml: document 3 (Service badport' "$M/.errors"

# ---- a file with nothing to file is refused ----
cat >"$T/none.yaml" <<'Y'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: elsewhere}
Y
refute "a drop box file with no document that can be filed is refused" cp "$T/none.yaml" "$P/none.yaml"
check "... with EINVAL" sh -c "cp '$T/none.yaml' '$P/none2.yaml' 2>&1 | grep -q 'Invalid argument'"
check "... and is not kept" test ! -e "$P/none.yaml" -a ! -e "$P/none2.yaml"
check "... and .errors names each of its documents" \
	sh -c "grep -q 'none.yaml: document 1 (Widget w2' '$M/.errors' && grep -q 'none.yaml: document 2 (ConfigMap other.*metadata.namespace' '$M/.errors'"
cp "$T/none.yaml" "$P/.scratch2.tmp"
refute "... also when renamed into a drop box name" mv "$P/.scratch2.tmp" "$P/none3.yaml"
check "... which then is not there" test ! -e "$P/none3.yaml"

printf 'kind: [\n' >"$T/notyaml.yaml"
refute "a drop box file that is no YAML is refused" cp "$T/notyaml.yaml" "$P/notyaml.yaml"
check "... and .errors names the file" grep -q 'namespaces/dev/notyaml.yaml: ' "$M/.errors"

# ---- files that were fine before still are ----
head -4 "$T/mixed.yaml" >"$T/single.yaml"
check "a drop box file whose documents are all valid is accepted" cp "$T/single.yaml" "$P/single.yaml"
refute "... and puts nothing in .errors" grep -q 'single.yaml' "$M/.errors"

rm -f "$P/mixed.yaml" "$P/moved.yaml" "$P/single.yaml" "$M/top.yaml"
check "drop box files can be removed" test ! -e "$P/mixed.yaml" -a ! -e "$M/top.yaml"

[ "$FAILS" = 0 ]
