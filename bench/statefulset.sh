#!/bin/bash
# bench/statefulset.sh BUILD_DIR: a StatefulSet of BENCH_PODS (20) real
# busybox pods, each with a claim from the StorageClass local-path, all
# Ready, against a baseline measured in the same run: as many pods created
# by hand one after another, each once the previous one is Ready, each with
# a local-path claim of its own too.
#
# Starts a private corral-fs, corral-sched, corral-ctrl (controllers
# statefulset, persistentvolume-binder, pvc-protection, pv-protection) and
# one real corral-noded node (busybox image from `corral image
# build-busybox`) whose volumes folder is inside the temporary folder. The
# script writes the StorageClass local-path (provisioner corral.io/local-path,
# volumeBindingMode WaitForFirstConsumer, reclaimPolicy Delete), as
# `corral up` does. No PersistentVolume is written by hand: each claim stays
# Pending until its pod is bound to the node, then corral-ctrl's
# persistentvolume-binder provisions a volume pvc-UID there and binds it,
# and the node makes its folder and mounts it.
# Baseline: for each i, a claim base-i (storageClassName local-path) and a
# pod base-i mounting it are written, then the pod's Ready condition is
# waited for (polled every 50 ms) before the next: the same provisioning on
# both sides. Then a StatefulSet web (OrderedReady) whose claims www-web-i
# come from its volumeClaimTemplates (storageClassName local-path): the time
# from its write until status.readyReplicas is BENCH_PODS (polled the same
# way). Afterwards every www-web-i must be Bound to a volume provisioned by
# corral.io/local-path whose folder is in the node's volumes folder. Prints
# one table: metric, corral, baseline, ratio, and the issue's target (ratio
# <= 2). Asserts nothing about time; it fails when it cannot measure.
#
# Knobs: BENCH_PODS (20), BENCH_WAIT_MAX seconds (300), BENCH_KEEP=1 keeps
# the temporary folder and the logs.
set -u

die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/statefulset.sh BUILD_DIR"
[ -d "$1" ] || die "no build folder $1 (run make first)"
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/.." && pwd)
FS=$B/corral-fs CTRL=$B/corral-ctrl SCHED=$B/corral-sched NODED=$B/corral-noded
PODS=${BENCH_PODS:-20}
WAIT=${BENCH_WAIT_MAX:-300}
for b in "$FS" "$CTRL" "$SCHED" "$NODED"; do
	[ -x "$b" ] || die "no $b (run make first)"
done
[ "$(id -u)" = 0 ] || die "needs root (it mounts a FUSE filesystem and runs pods)"
[ -c /dev/fuse ] || die "no /dev/fuse"
for c in fusermount3 awk systemd-nspawn ip nft; do
	command -v "$c" >/dev/null || die "needs $c"
done
# the teardown of a real node that could not clean up after itself
eval "$(sed -n '/^hash8() {/,/^}/p; /^node_net_cleanup() {/,/^}/p' "$ROOT/tests/lib/lib.sh")"

T=$(mktemp -d "${TMPDIR:-/tmp}/corral-ssbench.XXXXXX") || die "mktemp fails"
chmod 755 "$T"
MNT=$T/mnt NODE=ssbench-a VOL=$T/volumes
mkdir -p "$MNT" "$T/logs"
FSPID= SCHEDPID= CTRLPID= NODEPID=

is_mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
stop() { # PID: SIGTERM, then SIGKILL after 10 s
	alive "$1" || return 0
	kill -TERM "$1"
	for _ in $(seq 100); do alive "$1" || break; sleep 0.1; done
	alive "$1" && kill -KILL "$1"
	wait "$1" 2>/dev/null
}
cleanup() {
	set +e
	stop "$NODEPID"
	stop "$CTRLPID"
	stop "$SCHEDPID"
	node_net_cleanup "$T/nstate" "$NODE"
	stop "$FSPID"
	is_mounted "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
	if is_mounted "$MNT"; then
		echo "bench: could not unmount $MNT; leaving $T" >&2
	elif [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "bench: kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
failed() {
	echo "bench: $*" >&2
	for l in fs sched ctrl node; do
		[ -s "$T/$l.log" ] && { echo "--- last lines of $l.log:" >&2; grep -v ' debug: ' "$T/$l.log" | tail -n 10 >&2; }
	done
	exit 1
}
now_ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.3g", a / b }'; }
# until CMD... succeeds, polled every 50 ms, at most WAIT seconds
until_ok() {
	local _
	for _ in $(seq $((WAIT * 20))); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
D=$MNT/namespaces/bench
ready() { awk '/^    status: /{s=$2} /^    type: Ready$/{print s; exit}' "$D/pods/$1.yaml" 2>/dev/null | tr -d "'" | grep -qx True; }
set_ready() { sed -n '/^status:/,$p' "$D/statefulsets/web.yaml" 2>/dev/null | grep -q "^  readyReplicas: $PODS\$"; }
# claim NAME: a claim of the StorageClass local-path, no volume named
claim() {
	printf 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, labels: {app: base}}\nspec:\n  storageClassName: local-path\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n' \
		"$1" >"$D/persistentvolumeclaims/$1.yaml"
}
# local_bound CLAIM: the claim is Bound to a volume of corral.io/local-path
# whose folder, in the node's volumes folder, exists
local_bound() {
	local f=$D/persistentvolumeclaims/$1.yaml v p
	grep -q '^  phase: Bound$' "$f" 2>/dev/null || return 1
	v=$(awk '/^  volumeName: /{print $2; exit}' "$f" | tr -d "'\"")
	[ -n "$v" ] || return 1
	grep -q 'pv.kubernetes.io/provisioned-by: corral.io/local-path' "$MNT/persistentvolumes/$v.yaml" 2>/dev/null || return 1
	p=$(awk '/^    path: /{print $2; exit}' "$MNT/persistentvolumes/$v.yaml" | tr -d "'\"")
	[ "$p" = "$VOL/$v" ] && [ -d "$p" ]
}

# --- corral-fs, the node, corral-sched, corral-ctrl ---------------------------------
"$FS" -f --state "$T/state" --pod-log-dir "$T/logs" "$MNT" >"$T/fs.log" 2>&1 &
FSPID=$!
for _ in $(seq 200); do
	[ -d "$MNT/namespaces" ] && is_mounted "$MNT" && break
	alive "$FSPID" || failed "corral-fs exited before the mount was ready"
	sleep 0.05
done
[ -d "$MNT/namespaces" ] || failed "corral-fs did not mount within 10 s"
echo "statefulset bench: $PODS real pods, $(nproc) cpus, $(uname -r), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
"$ROOT/tools/corral" image build-busybox --images "$T/images" >"$T/image.log" 2>&1 ||
	failed "corral image build-busybox: $(tail -2 "$T/image.log")"
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\nvolumes = %s\n' "$T/nstate" "$T/images" "$T/logs" "$VOL" >"$T/noded.conf"
"$NODED" --mount "$MNT" --name "$NODE" --config "$T/noded.conf" --heartbeat-period 1s \
	--cleanup-on-exit >"$T/node.log" 2>&1 &
NODEPID=$!
node_ready() { grep -q 'reason: KubeletReady' "$MNT/nodes/$NODE.yaml" 2>/dev/null; }
WAIT=30 until_ok node_ready || failed "the node did not register Ready within 30 s"
"$SCHED" --mount "$MNT" >"$T/sched.log" 2>&1 &
SCHEDPID=$!
"$CTRL" --mount "$MNT" --leader-elect=false --controllers statefulset,persistentvolume-binder,pvc-protection,pv-protection >"$T/ctrl.log" 2>&1 &
CTRLPID=$!
started() { grep -q 'controllers started' "$T/ctrl.log"; }
WAIT=60 until_ok started || failed "corral-ctrl did not start within 60 s"
mkdir "$D" || failed "mkdir of a namespace fails"
cat >"$MNT/storageclasses/local-path.yaml" <<'Y' || failed "the StorageClass's write fails"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-path}
provisioner: corral.io/local-path
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
Y

# --- baseline: one pod after another, each once the previous is Ready --------------
echo "baseline: $PODS pods with a local-path claim each, one after another by hand ..."
t0=$(now_ms)
for i in $(seq 0 $((PODS - 1))); do
	claim "base-$i" || failed "claim base-$i: its write fails"
	cat >"$D/pods/base-$i.yaml" <<Y || failed "pod base-$i: its write fails"
apiVersion: v1
kind: Pod
metadata: {name: base-$i, labels: {app: base}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: [sleep, "3600"], volumeMounts: [{name: www, mountPath: /www}]}]
  volumes: [{name: www, persistentVolumeClaim: {claimName: base-$i}}]
Y
	until_ok ready "base-$i" || failed "pod base-$i not Ready within ${WAIT}s"
done
t1=$(now_ms)
base=$(secs "$t0" "$t1")
for i in $(seq 0 $((PODS - 1))); do
	local_bound "base-$i" || failed "claim base-$i is not bound to a local-path volume in $VOL"
	rm -f "$D/pods/base-$i.yaml"
done

# --- the StatefulSet -------------------------------------------------------------------
echo "a StatefulSet of $PODS pods (OrderedReady) ..."
t0=$(now_ms)
cat >"$D/statefulsets/web.yaml" <<Y || failed "the StatefulSet's write fails"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: $PODS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: c, image: busybox, command: [sleep, "3600"], volumeMounts: [{name: www, mountPath: /www}]}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      storageClassName: local-path
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
Y
until_ok set_ready || failed "not $PODS ready replicas within ${WAIT}s: $(grep "readyReplicas" "$D/statefulsets/web.yaml")"
t1=$(now_ms)
ss=$(secs "$t0" "$t1")
for i in $(seq 0 $((PODS - 1))); do
	ready "web-$i" || failed "web-$i is not Ready"
	grep -q "claimName: www-web-$i\$" "$D/pods/web-$i.yaml" || failed "web-$i does not mount www-web-$i"
	local_bound "www-web-$i" || failed "claim www-web-$i is not bound to a local-path volume in $VOL"
done

printf '%-56s %10s %10s %8s\n' metric corral baseline ratio
printf '%-56s %10s %10s %8s\n' "seconds, $PODS pods with claims all Ready [one by one by hand]" "$ss" "$base" "$(ratio "$ss" "$base")"
echo "target: the StatefulSet in <= 2x the baseline: $(ratio "$ss" "$base")x ($(awk -v a="$ss" -v b="$base" 'BEGIN { print (a <= 2 * b) ? "met" : "not met" }'))"
echo "(claims of the StorageClass local-path, WaitForFirstConsumer: each volume provisioned on the node and bound by corral-ctrl's persistentvolume-binder once its pod was bound; $(ls "$VOL" | grep -c '^pvc-') volume folders in the node's volumes folder)"
