#!/bin/bash
# Storage on a real mount: corral-fs (StorageClasses, the default class,
# the protection finalizers, resize rules), corral-ctrl (the
# persistentvolume-binder, the local-path provisioner, pvc-/pv-protection),
# corral-sched (the volume filter) and two real corral-noded nodes running
# busybox pods, each with its own volumes folder. Binding by smallest fit
# with both sides written as Kubernetes writes them, a claim waiting until a
# PV appears, pre-binding both ways, Retain releasing, a restart of
# corral-ctrl, dynamic provisioning with Immediate binding and the data
# deleted with the claim (Delete), expansion, WaitForFirstConsumer placing
# the volume on the node the pod went to and the pod's data in that folder,
# the volume filter keeping the next pod there, an unbound Immediate claim
# refused by the scheduler, and a claim in use outliving rm until its pod
# goes (needs corral-fs's finalizers).
. "$(dirname "$0")/../lib/lib.sh"
CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for b in "$CTRL" "$SCHED" "$NODED"; do [ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }; done
command -v systemd-nspawn >/dev/null || { echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
NA=sttest-a NB=sttest-b
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate
mkdir -p "$LOGS"
declare -A NPID
CTRL_PID= SCHED_PID=
start_node() { # NAME
	printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\nvolumes = %s\n' \
		"$NSTATE" "$IMAGES" "$LOGS" "$T/vols-$1" >"$T/$1.conf"
	"$NODED" --mount "$M" --name "$1" --config "$T/$1.conf" --heartbeat-period 1s \
		--cleanup-on-exit >>"$T/$1.log" 2>&1 &
	NPID[$1]=$!
}
stop_node() {
	local p=${NPID[$1]:-}
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	NPID[$1]=
}
start_ctrl() {
	"$CTRL" --mount "$M" --leader-elect=false >>"$T/ctrl.log" 2>&1 &
	CTRL_PID=$!
}
stop_ctrl() {
	[ -n "$CTRL_PID" ] || return 0
	kill "$CTRL_PID" 2>/dev/null
	wait "$CTRL_PID" 2>/dev/null
	CTRL_PID=
}
final_cleanup() {
	stop_ctrl
	[ -n "$SCHED_PID" ] && { kill "$SCHED_PID" 2>/dev/null; wait "$SCHED_PID" 2>/dev/null; }
	for n in "$NA" "$NB"; do stop_node "$n"; done
	if [ "$FAILS" != 0 ] && [ -n "${CORRAL_TEST_KEEP:-}" ]; then
		mkdir -p "$CORRAL_TEST_KEEP" && cp -r "$T"/*.log "$M/namespaces/dev" "$M/persistentvolumes" "$CORRAL_TEST_KEEP/" 2>/dev/null
	fi
	node_net_cleanup "$NSTATE" "$NA" "$NB"
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$LOGS"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >>"$T/image.log" 2>&1 ||
	{ echo "not ok - cannot build the busybox image: $(tail -2 "$T/image.log")"; exit 1; }
start_node "$NA"
start_node "$NB"
D=$M/namespaces/dev
mkdir -p "$D"
PVD=$M/persistentvolumes PVCD=$D/persistentvolumeclaims SCD=$M/storageclasses
for n in "$NA" "$NB"; do
	wait_for 20 grep -q 'reason: KubeletReady' "$M/nodes/$n.yaml" || { echo "not ok - node $n is not Ready: $(tail -3 "$T/$n.log")"; exit 1; }
done
"$SCHED" --mount "$M" >>"$T/sched.log" 2>&1 &
SCHED_PID=$!
start_ctrl

pv() { # NAME SIZE CLASS [MORE-SPEC-LINES]
	cat >"$PVD/$1.yaml" <<Y
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1, labels: {size: "$2"}}
spec:
  capacity: {storage: $2}
  accessModes: [ReadWriteOnce]
  storageClassName: "$3"
  hostPath: {path: $T/hp/$1}
${4:-}
Y
}
pvc() { # NAME SIZE CLASS|- [MORE-SPEC-LINES]: "-" leaves storageClassName out
	local cls="  storageClassName: \"$3\""
	[ "$3" = - ] && cls=
	cat >"$PVCD/$1.yaml" <<Y
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: $2}}
$cls
${4:-}
Y
}
field() { sed -n "s/^ *$2: //p" "$1" 2>/dev/null | head -1 | tr -d "'\""; }
phase() { sed -n '/^status:/,$p' "$1" 2>/dev/null | sed -n 's/^  phase: //p'; }
is_phase() { [ "$(phase "$1")" = "$2" ]; }
bound_to() { is_phase "$PVCD/$1.yaml" Bound && [ "$(field "$PVCD/$1.yaml" volumeName)" = "$2" ]; }
pv_of() { field "$PVCD/$1.yaml" volumeName; }
gone() { [ ! -e "$1" ]; }
last_error() { tail -1 "$M/.errors" 2>/dev/null; }
has_event() { grep -l "reason: $2" "$D"/events/*.yaml 2>/dev/null | xargs -r grep -l "name: $1\$" | grep -q .; }

# ---- StorageClasses at the write ----------------------------------------------
cat >"$T/sc-bad.yaml" <<'Y'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: bad}
reclaimPolicy: Recycle
Y
refute "a StorageClass without provisioner, reclaimPolicy Recycle, is refused" cp "$T/sc-bad.yaml" "$SCD/bad.yaml"
check "... saying why (provisioner Required, reclaimPolicy Unsupported)" \
	sh -c "tail -1 '$M/.errors' | grep -q 'provisioner: Required value' && tail -1 '$M/.errors' | grep -q 'reclaimPolicy: Unsupported value: \"Recycle\"'"
cat >"$SCD/fast.yaml" <<'Y' || fail "the StorageClass fast is refused: $(last_error)"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: corral.io/local-path
allowVolumeExpansion: true
Y
check "a StorageClass is stored with Kubernetes' defaults (Delete, Immediate)" \
	sh -c "grep -q '^reclaimPolicy: Delete' '$SCD/fast.yaml' && grep -q '^volumeBindingMode: Immediate' '$SCD/fast.yaml'"
refute "its volumeBindingMode cannot change" sh -c "sed 's/^volumeBindingMode: Immediate/volumeBindingMode: WaitForFirstConsumer/' '$SCD/fast.yaml' >'$T/f.yaml' && cp '$T/f.yaml' '$SCD/fast.yaml'"
check "... (field is immutable)" sh -c "tail -1 '$M/.errors' | grep -q 'volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable'"

# ---- static binding, smallest fit -----------------------------------------------
mkdir -p "$T/hp"
pv pv1 1Gi manual
pv pv5 5Gi manual
pv pv10 10Gi manual
check "three PVs become Available" wait_for 10 sh -c "for v in pv1 pv5 pv10; do grep -q '^  phase: Available' '$PVD/'\$v.yaml || exit 1; done"
check "a new PV gets the kubernetes.io/pv-protection finalizer" grep -q -- '- kubernetes.io/pv-protection' "$PVD/pv5.yaml"
pvc claim4 4Gi manual
check "a 4Gi claim binds the smallest fit, pv5" wait_for 15 bound_to claim4 pv5
C4UID=$(field "$PVCD/claim4.yaml" uid)
check "... the PV is Bound with claimRef naming the claim's uid" \
	sh -c "grep -q '^  phase: Bound' '$PVD/pv5.yaml' && grep -A8 '  claimRef:' '$PVD/pv5.yaml' | grep -q 'uid: $C4UID'"
check "... and its resourceVersion, kind and namespace" \
	sh -c "grep -A8 '  claimRef:' '$PVD/pv5.yaml' | grep -q 'resourceVersion: ' && grep -A8 '  claimRef:' '$PVD/pv5.yaml' | grep -q 'kind: PersistentVolumeClaim' && grep -A8 '  claimRef:' '$PVD/pv5.yaml' | grep -q 'namespace: dev'"
check "... annotated pv.kubernetes.io/bound-by-controller on both sides" \
	sh -c "grep -q 'pv.kubernetes.io/bound-by-controller: .yes' '$PVD/pv5.yaml' && grep -q 'pv.kubernetes.io/bound-by-controller: .yes' '$PVCD/claim4.yaml'"
check "... the claim pv.kubernetes.io/bind-completed, capacity 5Gi, accessModes" \
	sh -c "grep -q 'pv.kubernetes.io/bind-completed: .yes' '$PVCD/claim4.yaml' && sed -n '/^status:/,\$p' '$PVCD/claim4.yaml' | grep -q 'storage: 5Gi' && sed -n '/^status:/,\$p' '$PVCD/claim4.yaml' | grep -q -- '- ReadWriteOnce'"
check "... the claim has the kubernetes.io/pvc-protection finalizer" grep -q -- '- kubernetes.io/pvc-protection' "$PVCD/claim4.yaml"
check "the other PVs stay Available" sh -c "grep -q '^  phase: Available' '$PVD/pv1.yaml' && grep -q '^  phase: Available' '$PVD/pv10.yaml'"
refute "shrinking a claim is refused" sh -c "sed 's/storage: 4Gi/storage: 3Gi/' '$PVCD/claim4.yaml' >'$T/c.yaml' && cp '$T/c.yaml' '$PVCD/claim4.yaml'"
check "... field can not be less than previous value" sh -c "tail -1 '$M/.errors' | grep -q 'spec.resources.requests.storage: Forbidden: field can not be less than previous value'"
refute "growing a claim of a class that does not allow expansion is refused" sh -c "sed 's/storage: 4Gi/storage: 6Gi/' '$PVCD/claim4.yaml' >'$T/c.yaml' && cp '$T/c.yaml' '$PVCD/claim4.yaml'"
check "... with Kubernetes' message" sh -c "tail -1 '$M/.errors' | grep -q 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize'"

# ---- waiting, pre-binding -------------------------------------------------------
pvc big 20Gi manual
check "a claim that no PV fits stays Pending" wait_for 10 is_phase "$PVCD/big.yaml" Pending
check "... with an event saying so (no StorageClass manual to provision from)" wait_for 10 has_event big ProvisioningFailed
pv pv20 20Gi manual
check "... and binds the PV that appears" wait_for 15 bound_to big pv20
pvc named 1Gi manual "  volumeName: pv10"
check "a claim naming a volume (spec.volumeName) binds it, not the smaller fit" wait_for 15 bound_to named pv10
check "... without bound-by-controller on the claim" sh -c "! grep -q 'bound-by-controller' '$PVCD/named.yaml'"
pv pvpre 3Gi manual "  claimRef: {namespace: dev, name: pre}"
pvc pre 1Gi manual
check "a PV pre-bound by claimRef takes its claim, not the smaller pv1" wait_for 15 bound_to pre pvpre
check "... the claimRef gets the claim's uid" sh -c "grep -A8 '  claimRef:' '$PVD/pvpre.yaml' | grep -q 'uid: $(field "$PVCD/pre.yaml" uid 2>/dev/null)'"

# ---- release (Retain), restart ----------------------------------------------------
rm -f "$PVCD/claim4.yaml"
check "deleting a claim: the claim goes (no pod uses it)" wait_for 15 gone "$PVCD/claim4.yaml"
check "... its Retain PV becomes Released and stays" wait_for 15 is_phase "$PVD/pv5.yaml" Released
stop_ctrl
pv pv2 2Gi manual
pvc after 2Gi manual
start_ctrl
check "after a corral-ctrl restart, a claim written meanwhile binds" wait_for 15 bound_to after pv2
check "... and the bound ones stay as they were" sh -c "bound_to() { grep -q 'volumeName: '\$2 '$PVCD/'\$1.yaml; }; bound_to big pv20 && bound_to named pv10 && bound_to pre pvpre"

# ---- dynamic provisioning, Immediate, expansion, Delete ---------------------------
pvc dyn 1Gi fast
check "a claim of an Immediate local-path class gets a PV pvc-<uid>" wait_for 15 sh -c "grep -q 'volumeName: pvc-' '$PVCD/dyn.yaml'"
DYN=$(pv_of dyn)
check "... bound" wait_for 15 bound_to dyn "$DYN"
check "... annotated pv.kubernetes.io/provisioned-by: corral.io/local-path" grep -q 'pv.kubernetes.io/provisioned-by: corral.io/local-path' "$PVD/$DYN.yaml"
check "... capacity = request, reclaimPolicy from the class" \
	sh -c "grep -q 'storage: 1Gi' '$PVD/$DYN.yaml' && grep -q 'persistentVolumeReclaimPolicy: Delete' '$PVD/$DYN.yaml'"
DYNNODE=$(grep -A12 'nodeAffinity:' "$PVD/$DYN.yaml" | sed -n 's/^ *- \(sttest-[ab]\)$/\1/p' | head -1)
check "... with nodeAffinity to one of the nodes" test -n "$DYNNODE"
check "... its folder made by that node in its volumes folder" wait_for 10 test -d "$T/vols-$DYNNODE/$DYN"
check "... the path of the PV is that folder" grep -q "path: $T/vols-$DYNNODE/$DYN" "$PVD/$DYN.yaml"
check "... the ProvisioningSucceeded event" wait_for 10 has_event dyn ProvisioningSucceeded
sed 's/storage: 1Gi/storage: 2Gi/' "$PVCD/dyn.yaml" >"$T/c.yaml"
check "growing a claim of a class with allowVolumeExpansion is accepted" cp "$T/c.yaml" "$PVCD/dyn.yaml"
check "... the PV's capacity grows" wait_for 15 sh -c "grep -A1 '  capacity:' '$PVD/$DYN.yaml' | grep -q 'storage: 2Gi'"
check "... then the claim's status.capacity" wait_for 15 sh -c "sed -n '/^status:/,\$p' '$PVCD/dyn.yaml' | grep -q 'storage: 2Gi'"
echo data >"$T/vols-$DYNNODE/$DYN/file"
rm -f "$PVCD/dyn.yaml"
check "deleting the claim of a Delete PV deletes the PV" wait_for 20 gone "$PVD/$DYN.yaml"
check "... and its node removes the data" wait_for 10 gone "$T/vols-$DYNNODE/$DYN"

# ---- WaitForFirstConsumer and the volume filter, two real nodes ------------------
cat >"$SCD/local-path.yaml" <<'Y' || fail "the StorageClass local-path is refused: $(last_error)"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: corral.io/local-path
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
Y
pvc www 1Gi -
check "a claim without storageClassName gets the default class" grep -q 'storageClassName: local-path' "$PVCD/www.yaml"
check "... a WaitForFirstConsumer claim stays Pending with event WaitForFirstConsumer" wait_for 10 has_event www WaitForFirstConsumer
check "... and no PV is made for it" sh -c "is() { grep -q 'phase: Pending' '$PVCD/www.yaml'; }; is && ! grep -q volumeName '$PVCD/www.yaml'"
podfile() { # NAME CLAIM [NODE-SELECTOR-HOST]
	local sel=
	[ -n "${3:-}" ] && sel="  nodeSelector: {kubernetes.io/hostname: $3}"
	cat >"$D/pods/$1.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
$sel
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: [sh, -c, "echo from-$1 >> /data/who; exec sleep 3600"]
    volumeMounts: [{name: d, mountPath: /data}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: $2}}]
Y
}
podfile first www "$NB"
check "a pod using it is scheduled (to $NB, by its nodeSelector)" wait_for 15 sh -c "grep -q 'nodeName: $NB' '$D/pods/first.yaml'"
check "... the claim then binds a PV provisioned on $NB" wait_for 20 sh -c "grep -q 'volumeName: pvc-' '$PVCD/www.yaml' && grep -q 'phase: Bound' '$PVCD/www.yaml'"
WWW=$(pv_of www)
check "... whose nodeAffinity names $NB" sh -c "grep -A12 'nodeAffinity:' '$PVD/$WWW.yaml' | grep -q -- '- $NB'"
check "... the pod runs" wait_for 30 grep -q 'phase: Running' "$D/pods/first.yaml"
check "... and its data is in $NB's volumes folder" wait_for 15 grep -q from-first "$T/vols-$NB/$WWW/who"
podfile second www
check "a second pod of the claim (no nodeSelector) goes to the volume's node" wait_for 15 sh -c "grep -q 'nodeName: $NB' '$D/pods/second.yaml'"
pvc imm 100Gi manual
podfile needy imm
check "a pod whose Immediate claim is unbound is not scheduled" wait_for 15 sh -c "grep -q 'pod has unbound immediate PersistentVolumeClaims' '$D/pods/needy.yaml'"
rm -f "$D/pods/needy.yaml" "$PVCD/imm.yaml"

# ---- protection: a claim in use outlives rm until its pods go --------------------
rm -f "$PVCD/www.yaml"
if wait_for 5 gone "$PVCD/www.yaml"; then
	fail "a claim in use outlives rm (kubernetes.io/pvc-protection): it was deleted at once (corral-fs has no finalizers: branch nsfinal)"
else
	check "rm of a claim in use leaves it, with a deletionTimestamp" grep -q 'deletionTimestamp:' "$PVCD/www.yaml"
	check "... its PV stays Bound" is_phase "$PVD/$WWW.yaml" Bound
	rm -f "$D/pods/first.yaml"
	check "... and while one pod still uses it, it stays" sh -c "sleep 0; test -e '$PVCD/www.yaml'"
	rm -f "$D/pods/second.yaml"
	check "... once its pods are gone, the claim goes" wait_for 30 gone "$PVCD/www.yaml"
	check "... then its Delete PV and the data on $NB" wait_for 30 sh -c "! test -e '$PVD/$WWW.yaml' && ! test -e '$T/vols-$NB/$WWW'"
fi
rm -f "$D/pods/first.yaml" "$D/pods/second.yaml"
check "the pods go" wait_for 30 sh -c "! ls '$D/pods/' | grep -q yaml"

check "no daemon logged an error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T'/ctrl.log '$T'/sched.log '$T'/$NA.log '$T'/$NB.log"
echo "# storage: $FAILS failed"
[ "$FAILS" = 0 ]
