#!/bin/bash
# ServiceAccounts on a real mount and a real node (corral-ctrl(8),
# SERVICE ACCOUNTS; corral-fs(8), ADMISSION; corral-tree(5), TOKENS):
# every namespace, existing and new, gets ServiceAccount default and
# ConfigMap kube-root-ca.crt with the CA's certificate; a deleted default
# comes back; a pod naming a ServiceAccount that does not exist is refused
# with Kubernetes' message; a pod gets serviceAccountName default and the
# kube-api-access volume; a real busybox pod reads its token, ca.crt and
# namespace, and the token's claims are decoded and its signature checked
# here with openssl against the public key; automountServiceAccountToken:
# false leaves the pod without them; a downwardAPI labels file follows a
# label changed with sed -i.
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for b in "$CTRL" "$NODED"; do [ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }; done
command -v systemd-nspawn >/dev/null || { echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
command -v openssl >/dev/null || { echo "not ok - openssl is missing (scripts/deps.sh)"; exit 1; }
N=sa-node
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate PKI=$T/pki
mkdir -p "$LOGS"
NPID= CPID=
final_cleanup() {
	rm -f "$M"/namespaces/sa/pods/*.yaml 2>/dev/null
	[ -n "$NPID" ] && wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
	for p in $NPID $CPID; do kill "$p" 2>/dev/null; done
	for p in $NPID $CPID; do wait "$p" 2>/dev/null; done
	node_net_cleanup "$NSTATE" "$N"
	cleanup
}
trap final_cleanup EXIT

# The keys, as corral up makes them (tools/corral, make_pki).
mkdir -m 700 "$PKI"
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=corral-test-ca \
	-keyout "$PKI/ca.key" -out "$PKI/ca.crt" >/dev/null 2>&1 &&
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" >/dev/null 2>&1 &&
	openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null &&
	chmod 600 "$PKI/sa.key" || { echo "not ok - openssl could not make the keys"; exit 1; }

start_fs --pod-log-dir "$LOGS"
"$CTRL" --mount "$M" --leader-elect=false --controllers serviceaccount,root-ca-cert-publisher \
	--root-ca-file "$PKI/ca.crt" >>"$T/ctrl.log" 2>&1 &
CPID=$!
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\n' "$NSTATE" "$IMAGES" "$LOGS" >"$T/noded.conf"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >/dev/null 2>&1 ||
	{ echo "not ok - corral image build-busybox failed"; exit 1; }
"$NODED" --mount "$M" --name "$N" --config "$T/noded.conf" --heartbeat-period 1s \
	--service-account-key-file "$PKI/sa.key" --cleanup-on-exit >>"$T/noded.log" 2>&1 &
NPID=$!

D=$M/namespaces/sa
P=$D/pods
pod() { echo "$P/$1.yaml"; }
podlog() { cat "$D/logs/$1/c.log" 2>/dev/null; }
log_has() { podlog "$1" | grep -q -- "$2"; }
# ca_in FILE: the ConfigMap FILE holds the CA's certificate (its base64 body)
ca_in() { readable "$1" && grep -q -- "$(sed -n 2p "$PKI/ca.crt")" "$1"; }

check "namespace default gets ServiceAccount default" wait_for 10 readable "$M/namespaces/default/serviceaccounts/default.yaml"
check "... and kube-system too" wait_for 10 readable "$M/namespaces/kube-system/serviceaccounts/default.yaml"
check "... and ConfigMap kube-root-ca.crt with the CA's certificate" wait_for 10 ca_in "$M/namespaces/default/configmaps/kube-root-ca.crt.yaml"
mkdir "$D"
check "a new namespace gets ServiceAccount default" wait_for 10 readable "$D/serviceaccounts/default.yaml"
check "... and kube-root-ca.crt" wait_for 10 ca_in "$D/configmaps/kube-root-ca.crt.yaml"
UID1=$(sed -n 's/^  uid: //p' "$D/serviceaccounts/default.yaml")
rm "$D/serviceaccounts/default.yaml"
recreated() { readable "$D/serviceaccounts/default.yaml" && ! grep -q "uid: $UID1" "$D/serviceaccounts/default.yaml"; }
check "a deleted default ServiceAccount is made again" wait_for 10 recreated
check "node $N registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"

# mkpod NAME SPEC-EXTRA SCRIPT [LABELS [CONTAINER-EXTRA]]
mkpod() {
	local labels=${4:-"{app: $1}"}
	cat >"$(pod "$1")" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: $labels}
spec:
  nodeName: $N
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
$2
  containers:
  - name: c
    image: busybox
${5:-}
    command: ["sh", "-c"]
    args:
    - |
$(printf '%s\n' "$3" | sed 's/^/      /')
Y
}

refute "a pod naming a ServiceAccount that does not exist is refused" mkpod robot "  serviceAccountName: robot" "true"
check "... not stored" test ! -e "$(pod robot)"
check "... with Kubernetes' message in .errors" grep -q 'namespaces/sa/pods/robot.yaml: pods "robot" is forbidden: error looking up service account sa/robot: serviceaccount "robot" not found' "$M/.errors"

SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
mkpod reader "" "echo ns=[\$(cat $SA_DIR/namespace)]
echo ca=[\$(md5sum < $SA_DIR/ca.crt | cut -d' ' -f1)]
echo token=[\$(cat $SA_DIR/token)]
echo mode=[\$(stat -c %a $SA_DIR/token)]
echo reader-done"
check "a pod gets serviceAccountName default" grep -q '^  serviceAccountName: default' "$(pod reader)"
check "... and the kube-api-access volume, mounted read-only at $SA_DIR" sh -c "grep -q 'name: kube-api-access-[a-z0-9]\{5\}$' '$(pod reader)' && grep -q 'mountPath: $SA_DIR' '$(pod reader)' && grep -q 'expirationSeconds: 3607' '$(pod reader)'"
check "a real pod reads its token, ca.crt and namespace" wait_for 60 log_has reader reader-done
check "... the namespace file says sa" log_has reader 'ns=\[sa\]'
check "... ca.crt is the cluster CA's certificate" log_has reader "ca=\[$(md5sum <"$PKI/ca.crt" | cut -d' ' -f1)\]"
check "... the token file is 0644 (defaultMode 420)" log_has reader 'mode=\[644\]'
TOKEN=$(podlog reader | sed -n 's/.*token=\[\([^]]*\)\].*/\1/p')
printf '%s' "$TOKEN" >"$T/token"
# b64url_decode: base64url on stdin, unpadded, to bytes
b64url_decode() { local s; s=$(tr -- '-_' '+/'); while [ $((${#s} % 4)) != 0 ]; do s="$s="; done; printf '%s' "$s" | base64 -d; }
IFS=. read -r H64 C64 S64 <"$T/token"
printf '%s.%s' "$H64" "$C64" >"$T/signed"
printf '%s' "$S64" | b64url_decode >"$T/sig"
printf '%s' "$C64" | b64url_decode >"$T/claims"
printf '%s' "$H64" | b64url_decode >"$T/header"
check "the token is a JWS of three parts" test -n "$S64"
check "... signed RS256, as its header says" grep -q '"alg":"RS256"' "$T/header"
check "... its signature verifies with the public key (openssl)" openssl dgst -sha256 -verify "$PKI/sa.pub" -signature "$T/sig" "$T/signed"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null | openssl pkey -pubout >"$T/other.pub" 2>/dev/null
refute "... and not with another key" openssl dgst -sha256 -verify "$T/other.pub" -signature "$T/sig" "$T/signed"
claim() { grep -q -- "$1" "$T/claims"; }
PUID=$(sed -n 's/^  uid: //p' "$(pod reader)" | head -1)
SAUID=$(sed -n 's/^  uid: //p' "$D/serviceaccounts/default.yaml")
check "claims: sub is system:serviceaccount:sa:default" claim '"sub":"system:serviceaccount:sa:default"'
check "claims: iss and aud are the default issuer" claim '"aud":\["https://kubernetes.default.svc.cluster.local"\],.*"iss":"https://kubernetes.default.svc.cluster.local"'
check "claims: kubernetes.io names the namespace, the pod and its uid, the ServiceAccount and its uid" \
	claim "\"kubernetes.io\":{\"namespace\":\"sa\",\"pod\":{\"name\":\"reader\",\"uid\":\"$PUID\"},\"serviceaccount\":{\"name\":\"default\",\"uid\":\"$SAUID\"}}"
EXP=$(sed -n 's/.*"exp":\([0-9]*\).*/\1/p' "$T/claims")
IAT=$(sed -n 's/.*"iat":\([0-9]*\).*/\1/p' "$T/claims")
NBF=$(sed -n 's/.*"nbf":\([0-9]*\).*/\1/p' "$T/claims")
check "claims: exp is iat + 3607 s, nbf is iat" test "$((EXP - IAT))" = 3607 -a "$NBF" = "$IAT"
# Not against the wall clock (a loaded machine may take any time to get
# here): the token was issued for this pod, so not before it was created.
PCT=$(date -u -d "$(sed -n "s/^  creationTimestamp: '\{0,1\}\([^']*\).*/\1/p" "$(pod reader)" | head -1)" +%s)
check "claims: issued after the pod was created, and not in the future" test "$IAT" -ge "$PCT" -a "$IAT" -le "$(date +%s)"

mkpod quiet "  automountServiceAccountToken: false" "if ls $SA_DIR >/dev/null 2>&1; then echo has-token; else echo no-token; fi"
check "automountServiceAccountToken: false: no kube-api-access volume" sh -c "! grep -q kube-api-access '$(pod quiet)'"
check "... and nothing at $SA_DIR in the pod" wait_for 60 log_has quiet no-token

mkpod labels "  volumes:
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: name, fieldRef: {fieldPath: metadata.name}}
  automountServiceAccountToken: false" "while :; do echo \"labels=\$(tr '\n' ' ' </info/labels) name=\$(cat /info/name)\"; sleep 0.2; done" \
	"{app: web, tier: one}" "    volumeMounts: [{name: info, mountPath: /info}]"
check "a downwardAPI volume's labels file, as the kubelet writes it" wait_for 60 log_has labels 'labels=app="web" tier="one" name=labels'
check "a label changed with sed -i" sed -i 's/^    tier: one$/    tier: two/' "$(pod labels)"
check "... reaches the labels file in the running pod" wait_for 30 log_has labels 'labels=app="web" tier="two"'

dump_pods() { # what the pods said, when a check failed
	local f
	[ "$FAILS" != 0 ] || return 0
	for f in "$P"/*.yaml; do
		[ -e "$f" ] || continue
		echo "# $f:"
		sed -n '/^status:/,$p' "$f" | grep -A4 -e 'waiting:' -e 'terminated:'
		podlog "$(basename "$f" .yaml)" | tail -5
	done >&2 2>/dev/null
	tail -20 "$T/noded.log" "$T/ctrl.log" >&2
}
dump_pods
rm -f "$P"/*.yaml
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "no agent or controller error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log' '$T/ctrl.log'"
[ "$FAILS" = 0 ]
