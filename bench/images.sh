#!/bin/bash
# bench/images.sh BUILD_DIR: image pulls from a loopback registry (issue
# 16's targets). Debian's docker-registry on 127.0.0.1, images of
# BENCH_LAYER_MB (8) MiB of random data per layer, pushed with skopeo.
#   1. a 5-layer image pulled into an empty layer store by `corral-noded
#      image pull` (manifest, config, layers, every digest checked, every
#      layer unpacked) beside `skopeo copy` of the same image to a folder
#      (the baseline), median of BENCH_RUNS (3) each; target ratio <= 1.3;
#   2. a second image sharing 4 of those 5 layers: the layers it fetches
#      (must be 1);
#   3. BENCH_PODS (20) pods of one fresh image written at once on a real
#      node: time until all run, and the pulls the agent made (must be 1).
# Prints a table: metric, corral, baseline, ratio. Fails when it cannot
# measure or a count is wrong; asserts nothing about time.
set -u
die() { echo "bench: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/images.sh BUILD_DIR"
B=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MB=${BENCH_LAYER_MB:-8} RUNS=${BENCH_RUNS:-3} NPODS=${BENCH_PODS:-20}
R=127.0.0.1:5163
[ "$(id -u)" = 0 ] || die "needs root (mounts, namespaces, nspawn)"
for p in skopeo docker-registry systemd-nspawn; do command -v "$p" >/dev/null || die "$p is missing (scripts/deps.sh)"; done
ss -ltn | grep -q ":${R##*:} " && die "port ${R##*:} is taken"
export HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost
T=$(mktemp -d /tmp/corral-imgbench.XXXXXX)
M=$T/mnt NODE=imgbench-$$ PIDS=()
mkdir -p "$M"
cleanup() {
	local p
	rm -f "$M"/namespaces/bench/pods/*.yaml 2>/dev/null
	for _ in $(seq 300); do pgrep -f -- "--director[y]=$T/nstate" >/dev/null || break; sleep 0.1; done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	mountpoint -q "$M" && { fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; }
	grep " $T" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

cat >"$T/reg.yml" <<C
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $T/reg}}
http: {addr: $R}
C
docker-registry serve "$T/reg.yml" >"$T/reg.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -sf "http://$R/v2/" >/dev/null && break; sleep 0.1; done
curl -sf "http://$R/v2/" >/dev/null || die "the registry did not start: $(tail -2 "$T/reg.log")"

# ---- images: OCI layouts of gzip'd layers ----
ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
sha() { sha256sum "$1" | cut -d' ' -f1; }
mkdir -p "$T/l"
layer() { # NAME: a layer of MB MiB of random data, and busybox in the first
	mkdir -p "$T/src/$1"
	head -c "$((MB << 20))" /dev/urandom >"$T/src/$1/data-$1"
	if [ "$1" = l1 ]; then
		mkdir -p "$T/src/l1/bin" "$T/src/l1/usr"
		cp /bin/busybox "$T/src/l1/bin/busybox"
		ln -s busybox "$T/src/l1/bin/sh"
		ln -s busybox "$T/src/l1/bin/sleep"
	fi
	tar --numeric-owner -C "$T/src/$1" -cf "$T/l/$1.tar" . && gzip -1 -n -c "$T/l/$1.tar" >"$T/l/$1.tgz"
}
image() { # LAYOUT LAYER...
	local lay=$1 l d layers='' diffs=''
	shift
	mkdir -p "$lay/blobs/sha256"
	for l; do
		d=$(sha "$T/l/$l.tgz")
		cp "$T/l/$l.tgz" "$lay/blobs/sha256/$d"
		diffs="$diffs${diffs:+,}\"sha256:$(sha "$T/l/$l.tar")\""
		layers="$layers${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$d\",\"size\":$(stat -c %s "$T/l/$l.tgz")}"
	done
	printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["sleep","3600"]},"rootfs":{"type":"layers","diff_ids":[%s]}}' "$ARCH" "$diffs" >"$T/c.json"
	d=$(sha "$T/c.json")
	cp "$T/c.json" "$lay/blobs/sha256/$d"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' "$d" "$(stat -c %s "$T/c.json")" "$layers" >"$T/m.json"
	d=$(sha "$T/m.json")
	cp "$T/m.json" "$lay/blobs/sha256/$d"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"1"}}]}' "$d" "$(stat -c %s "$T/m.json")" >"$lay/index.json"
}
push() { skopeo --insecure-policy copy -q --dest-tls-verify=false "oci:$1:1" "docker://$R/bench/$2:1" >>"$T/push.log" 2>&1 || die "push $2: $(tail -2 "$T/push.log")"; }
for l in l1 l2 l3 l4 l5 l6 l7; do layer "$l" || die "cannot make layer $l"; done
image "$T/oci-a" l1 l2 l3 l4 l5
image "$T/oci-b" l1 l2 l3 l4 l6
image "$T/oci-c" l1 l7
push "$T/oci-a" a
push "$T/oci-b" b
push "$T/oci-c" c

# ---- 1. one 5-layer pull, beside skopeo copy to a folder ----
printf '[noded]\nstate = %s/nstate\nimages = %s/images\npod-log-dir = %s/logs\ninsecure-registries = %s\nimage-store = %s/store\n' \
	"$T" "$T" "$T" "$R" "$T" >"$T/noded.conf"
for i in $(seq "$RUNS"); do
	rm -rf "$T/dir"
	t0=$(now_ms)
	skopeo --insecure-policy copy -q --src-tls-verify=false "docker://$R/bench/a:1" "dir:$T/dir" >/dev/null 2>&1 || die "skopeo copy failed"
	echo $(($(now_ms) - t0)) >>"$T/base.ms"
	rm -rf "$T/store"
	t0=$(now_ms)
	"$B/corral-noded" --config "$T/noded.conf" image pull "$R/bench/a:1" >"$T/pull-a.log" 2>&1 || die "corral pull failed: $(tail -1 "$T/pull-a.log")"
	echo $(($(now_ms) - t0)) >>"$T/corral.ms"
done
BASE=$(median <"$T/base.ms") CORRAL=$(median <"$T/corral.ms")

# ---- 2. an image sharing 4 of the 5 layers ----
"$B/corral-noded" --config "$T/noded.conf" image pull "$R/bench/b:1" >"$T/pull-b.log" 2>&1 || die "corral pull of b failed: $(tail -1 "$T/pull-b.log")"
FETCHED=$(sed -n 's/.*fetching \([0-9]*\) of 5 layers.*/\1/p' "$T/pull-b.log")
[ "$FETCHED" = 1 ] || die "the second image fetched ${FETCHED:-?} layers, not 1"
NLAYERS=$(ls "$T/store/layers" | grep -vc '^\.')

# ---- 3. NPODS pods of one fresh image (BENCH_PODS=0: not) ----
PODS_MS=- PULLS=-
if [ "$NPODS" -gt 0 ]; then
"$ROOT/tools/corral" image build-busybox --images "$T/images" >/dev/null || die "no busybox image"
"$B/corral-fs" -f --state "$T/state" --pod-log-dir "$T/logs" "$M" >"$T/fs.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -d "$M/namespaces" ] && break; sleep 0.05; done
"$B/corral-noded" --mount "$M" --name "$NODE" --config "$T/noded.conf" --cleanup-on-exit >"$T/noded.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" 2>/dev/null && break; sleep 0.1; done
grep -q 'reason: KubeletReady' "$M/nodes/$NODE.yaml" 2>/dev/null || die "the node is not Ready: $(tail -2 "$T/noded.log")"
mkdir -p "$M/namespaces/bench"
t0=$(now_ms)
for i in $(seq "$NPODS"); do
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p%s}\nspec:\n  nodeName: %s\n  terminationGracePeriodSeconds: 1\n  containers: [{name: c, image: "%s/bench/c:1"}]\n' \
		"$i" "$NODE" "$R" >"$M/namespaces/bench/pods/p$i.yaml" || die "pod p$i refused"
done
running() { [ "$(grep -l 'started: true' "$M"/namespaces/bench/pods/*.yaml 2>/dev/null | wc -l)" = "$NPODS" ]; }
for _ in $(seq 1200); do running && break; sleep 0.1; done
running || die "not all $NPODS pods run: $(tail -2 "$T/noded.log")"
PODS_MS=$(($(now_ms) - t0))
PULLS=$(grep -c "pull $R/bench/c:1: done" "$T/noded.log")
[ "$PULLS" = 1 ] || die "$NPODS pods of one image made $PULLS pulls, not 1"
fi

printf '%-52s %10s %10s %6s\n' metric corral baseline ratio
printf '%-52s %8sms %8sms %6s\n' "pull, 5 x ${MB} MiB layers [skopeo copy to dir:]" "$CORRAL" "$BASE" \
	"$(awk -v a="$CORRAL" -v b="$BASE" 'BEGIN {printf "%.2f", a / b}')"
printf '%-52s %10s %10s %6s\n' "layers fetched for an image sharing 4 of 5" "$FETCHED" 1 ""
printf '%-52s %10s %10s %6s\n' "layers stored for the two images" "$NLAYERS" 6 ""
printf '%-52s %8sms %10s %6s\n' "$NPODS pods of one fresh image, all running" "$PODS_MS" "" ""
printf '%-52s %10s %10s %6s\n' "pulls made for them" "$PULLS" 1 ""
echo "target: pull ratio <= 1.3"
