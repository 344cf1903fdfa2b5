#!/bin/bash
# Images pulled from a registry (corral-noded(8), IMAGES): Debian's
# docker-registry on 127.0.0.1 (plain HTTP, and one with basic auth),
# images built here from busybox-static as OCI layouts and pushed with
# skopeo: two layers with a whiteout and an opaque folder, a second image
# sharing the base layer, a manifest list; pulled by real pods with their
# config (Cmd, Env, WorkingDir, User) applied, every layer unpacked once,
# a corrupted blob refused, the pull policies, imagePullSecrets, the
# ErrImagePull/ImagePullBackOff messages and Events, the image GC on a small
# image file system, and corral image list/pull/rm.
. "$(dirname "$0")/../lib/lib.sh"
NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$NODED" ] || { echo "not ok - no corral-noded binary at $NODED (run make)"; exit 1; }
for p in systemd-nspawn skopeo docker-registry htpasswd busybox; do
	command -v "$p" >/dev/null || { echo "not ok - $p is missing (scripts/deps.sh installs it)"; exit 1; }
done
N=images-a
R1=127.0.0.1:5161 R2=127.0.0.1:5162
LOGS=$T/logs IMAGES=$T/images NSTATE=$T/nstate STORE=$T/istore
mkdir -p "$LOGS" "$STORE"
NPID= RPIDS=()
final_cleanup() {
	rm -f "$M"/namespaces/im/pods/*.yaml 2>/dev/null
	[ -n "$NPID" ] && wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
	if [ -n "$NPID" ]; then
		kill "$NPID" 2>/dev/null
		wait "$NPID" 2>/dev/null
	fi
	local p
	for p in "${RPIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	node_net_cleanup "$NSTATE" "$N"
	grep " $STORE" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
	cleanup
}
trap final_cleanup EXIT
for port in 5161 5162; do
	if ss -ltn | grep -q ":$port "; then echo "not ok - port $port is taken: the test registries need it"; exit 1; fi
done
# a small image file system, for the GC
mount -t tmpfs -o size=48m corral-images "$STORE" || { echo "not ok - cannot mount a tmpfs for the image store"; exit 1; }

# ---- the registries ----
mkdir -p "$T/reg1" "$T/reg2"
htpasswd -Bbn puller s3cret >"$T/htpasswd"
cat >"$T/reg1.yml" <<C
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $T/reg1}, delete: {enabled: true}}
http: {addr: $R1}
C
cat >"$T/reg2.yml" <<C
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $T/reg2}}
http: {addr: $R2}
auth: {htpasswd: {realm: corral-test, path: $T/htpasswd}}
C
docker-registry serve "$T/reg1.yml" >"$T/reg1.log" 2>&1 &
RPIDS+=($!)
docker-registry serve "$T/reg2.yml" >"$T/reg2.log" 2>&1 &
RPIDS+=($!)
wait_for 10 curl -sf "http://$R1/v2/" || { echo "not ok - the test registry did not start: $(tail -2 "$T/reg1.log")"; exit 1; }
wait_for 10 sh -c "curl -s -o /dev/null -w '%{http_code}' http://$R2/v2/ | grep -q 401" ||
	{ echo "not ok - the test registry with basic auth did not start: $(tail -2 "$T/reg2.log")"; exit 1; }

# ---- test images, as OCI layouts ----
ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
sha() { sha256sum "$1" | cut -d' ' -f1; }
# layer NAME DIR: DIR as a gzip'd layer blob, once ($T/layers/NAME.*)
layer() {
	mkdir -p "$T/layers"
	tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$2" -cf "$T/layers/$1.tar" . &&
		gzip -n -c "$T/layers/$1.tar" >"$T/layers/$1.tgz"
}
# oci LAYOUT TAG CONFIG LAYER...: an image in an OCI layout; CONFIG is the
# "config" object of the image config
oci() {
	local lay=$1 tag=$2 cfg=$3 l d layers='' diffs=''
	shift 3
	mkdir -p "$lay/blobs/sha256"
	for l; do
		d=$(sha "$T/layers/$l.tgz")
		cp "$T/layers/$l.tgz" "$lay/blobs/sha256/$d"
		diffs="$diffs${diffs:+,}\"sha256:$(sha "$T/layers/$l.tar")\""
		layers="$layers${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$d\",\"size\":$(stat -c %s "$T/layers/$l.tgz")}"
	done
	printf '{"architecture":"%s","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":[%s]}}' \
		"$ARCH" "$cfg" "$diffs" >"$T/c.json"
	d=$(sha "$T/c.json")
	cp "$T/c.json" "$lay/blobs/sha256/$d"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' \
		"$d" "$(stat -c %s "$T/c.json")" "$layers" >"$T/m.json"
	d=$(sha "$T/m.json")
	cp "$T/m.json" "$lay/blobs/sha256/$d"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
		"$d" "$(stat -c %s "$T/m.json")" "$tag" >"$lay/index.json"
	echo "sha256:$d"
}
push() { # LAYOUT:TAG REGISTRY/REPO:TAG [skopeo options]
	local src=$1 dst=$2
	shift 2
	skopeo --insecure-policy copy -q --dest-tls-verify=false "$@" "oci:$src" "docker://$dst" >>"$T/push.log" 2>&1
}
mkdir -p "$T/base/bin" "$T/base/etc" "$T/base/data" "$T/top/etc" "$T/top/data" "$T/top2" "$T/amd/" "$T/arm" "$T/bad"
cp /bin/busybox "$T/base/bin/busybox"
for a in sh cat ls id pwd echo test sleep true; do ln -s busybox "$T/base/bin/$a"; done
printf 'root:x:0:0:root:/root:/bin/sh\nworker:x:1234:2345:worker:/:/bin/sh\n' >"$T/base/etc/passwd"
printf 'root:x:0:\nworkers:x:2345:\n' >"$T/base/etc/group"
echo doomed >"$T/base/etc/doomed"
echo old >"$T/base/data/old"
echo from-layer-2 >"$T/top/hello.txt"
: >"$T/top/etc/.wh.doomed"
: >"$T/top/data/.wh..wh..opq"
echo new >"$T/top/data/new"
echo second-image >"$T/top2/second.txt"
echo right-arch >"$T/amd/arch.txt"
echo wrong-arch >"$T/arm/arch.txt"
head -c 300000 /dev/urandom >"$T/bad/noise"
for l in base top top2 amd arm bad; do layer "$l" "$T/$l" || { echo "not ok - cannot make layer $l"; exit 1; }; done
APP_CMD='["sh","-c","cat /hello.txt; test -e /etc/doomed && echo whiteout-broken || echo whiteout-ok; ls /data | grep -q old && echo opaque-broken || echo opaque-ok; echo $GREETING; echo wd=$(pwd); exec sleep 3600"]'
APP=$(oci "$T/oci-app" 1.0 "{\"Env\":[\"PATH=/bin\",\"GREETING=from-image-config\"],\"WorkingDir\":\"/data\",\"Cmd\":$APP_CMD}" base top)
oci "$T/oci-other" 1 '{"Env":["PATH=/bin"],"User":"worker","Entrypoint":["sh","-c"],"Cmd":["cat /second.txt; echo uid=$(id -u) gid=$(id -g); exec sleep 3600"]}' base top2 >/dev/null
AMD=$(oci "$T/oci-amd" amd '{"Env":["PATH=/bin"],"Cmd":["sh","-c","cat /arch.txt; exec sleep 3600"]}' base amd)
ARM=$(oci "$T/oci-arm" arm '{"Env":["PATH=/bin"],"Cmd":["sh","-c","cat /arch.txt; exec sleep 3600"]}' base arm)
oci "$T/oci-bad" 1 '{"Env":["PATH=/bin"],"Cmd":["sh","-c","exec sleep 3600"]}' base bad >/dev/null
ok=1
push "$T/oci-app:1.0" "$R1/team/app:1.0" || ok=0
push "$T/oci-app:1.0" "$R1/team/app:latest" || ok=0
push "$T/oci-other:1" "$R1/team/other:1" || ok=0
push "$T/oci-amd:amd" "$R1/team/multi:amd" || ok=0
push "$T/oci-arm:arm" "$R1/team/multi:arm" || ok=0
push "$T/oci-bad:1" "$R1/team/bad:1" || ok=0
push "$T/oci-app:1.0" "$R2/private/app:1.0" --dest-creds puller:s3cret || ok=0
[ "$ok" = 1 ] || { echo "not ok - pushing the test images failed: $(tail -3 "$T/push.log")"; exit 1; }
# the manifest list: linux/arm64 first, then this machine's
OTHER_ARCH=arm64; [ "$ARCH" = arm64 ] && OTHER_ARCH=amd64
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"}},{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"}}]}' \
	"$ARM" "$(stat -c %s "$T/oci-arm/blobs/sha256/${ARM#sha256:}")" "$OTHER_ARCH" \
	"$AMD" "$(stat -c %s "$T/oci-amd/blobs/sha256/${AMD#sha256:}")" "$ARCH" >"$T/index.json"
curl -sf -X PUT -H 'Content-Type: application/vnd.oci.image.index.v1+json' --data-binary @"$T/index.json" \
	"http://$R1/v2/team/multi/manifests/1" -o /dev/null || { echo "not ok - pushing the manifest list failed"; exit 1; }
# corrupt the bad image's own layer in the registry's storage
BADL=$(sha "$T/layers/bad.tgz")
BADF=$T/reg1/docker/registry/v2/blobs/sha256/${BADL:0:2}/$BADL/data
[ -f "$BADF" ] || { echo "not ok - no blob file $BADF in the registry's storage"; exit 1; }
head -c "$(stat -c %s "$BADF")" /dev/urandom >"$BADF"

# ---- the node ----
start_fs --pod-log-dir "$LOGS"
printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\nimage-store = %s\n' "$NSTATE" "$IMAGES" "$LOGS" "$STORE" >"$T/noded.conf"
printf 'insecure-registries = %s, %s\nimage-gc-high-threshold = 60\nimage-gc-low-threshold = 50\n' "$R1" "$R2" >>"$T/noded.conf"
printf 'image-minimum-gc-age = 0s\nimage-gc-period = 500ms\n' >>"$T/noded.conf"
"$ROOT/tools/corral" image build-busybox --images "$IMAGES" >/dev/null 2>&1 ||
	{ echo "not ok - corral image build-busybox failed"; exit 1; }
"$NODED" --mount "$M" --name "$N" --config "$T/noded.conf" --heartbeat-period 1s \
	--cleanup-on-exit >>"$T/noded.log" 2>&1 &
NPID=$!
NS=im
mkdir -p "$M/namespaces/$NS"
P=$M/namespaces/$NS/pods
pod() { echo "$P/$1.yaml"; }
podlog() { cat "$M/namespaces/$NS/logs/$1/c.log" 2>/dev/null; }
log_has() { podlog "$1" | grep -q -- "$2"; }
is_running() { grep -q 'phase: Running' "$(pod "$1")" && grep -q 'started: true' "$(pod "$1")"; }
waiting() { grep -A3 'waiting:' "$(pod "$1")" 2>/dev/null | grep -q "reason: $2"; }
events() { cat "$M/namespaces/$NS/events/"*.yaml 2>/dev/null; }
# event_has REASON TEXT: an Event of that reason says TEXT
event_has() { grep -l "^reason: $1\$" "$M/namespaces/$NS/events/"*.yaml 2>/dev/null | xargs -r grep -lF -- "$2" | grep -q .; }
ilist() { "$NODED" --config "$T/noded.conf" image list; }
if ! wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"; then
	echo "not ok - node $N registers Ready: $(tail -3 "$T/noded.log")"
	exit 1
fi
ok "node $N registers Ready"

# mkpod NAME IMAGE [EXTRA-CONTAINER-YAML] [EXTRA-SPEC-YAML]
mkpod() {
	cat >"$(pod "$1")" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $N
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
${4:-}
  containers:
  - name: c
    image: "$2"
${3:-}
Y
}
# the failing pulls first: their back-off runs while the rest goes on
mkpod missing "$R1/team/missing:1"
mkpod bad "$R1/team/bad:1"
mkpod app "$R1/team/app:1.0"
check "a pod of a registry image runs" wait_for 30 is_running app
check "the second layer's file is there" wait_for 10 log_has app from-layer-2
check "the whiteout of layer 2 hides layer 1's /etc/doomed" log_has app whiteout-ok
check "the opaque /data of layer 2 hides layer 1's /data/old" log_has app opaque-ok
check "the image config's Env is applied" log_has app from-image-config
check "the image config's WorkingDir is applied" log_has app wd=/data
check "status imageID is the repository digest" grep -q "imageID: $R1/team/app@$APP" "$(pod app)"
check "status image is the normalized reference" grep -q "image: $R1/team/app:1.0" "$(pod app)"
check "an Event says Pulling image" event_has Pulling "Pulling image \"$R1/team/app:1.0\""
check "an Event says Pulled, as the kubelet words it" sh -c "grep -h '^message: ' '$M/namespaces/$NS/events/'*.yaml | grep -Eq 'Successfully pulled image .$R1/team/app:1.0. in [0-9.]+m?s \\([0-9.]+m?s including waiting\\)\\. Image size: [0-9]+ bytes\\.'"
check "two layers unpacked" test "$(ls "$STORE/layers" | grep -vc '^\.')" = 2
check "the container's root is an overlay of both layers" sh -c "grep ' overlay ' /proc/mounts | grep '$NSTATE' | grep -q 'lowerdir=$STORE/layers/[0-9a-f]*:$STORE/layers/'"

mkpod other "$R1/team/other:1"
check "a second image sharing the base layer runs" wait_for 30 is_running other
check "its own layer is there" wait_for 10 log_has other second-image
check "the base layer is stored once: three layers for two images" test "$(ls "$STORE/layers" | grep -vc '^\.')" = 3
check "the image config's User is honoured (a name from its /etc/passwd)" log_has other "uid=1234 gid=2345"

mkpod multi "$R1/team/multi:1"
check "a manifest list's linux/$ARCH image runs" wait_for 30 is_running multi
check "(the $ARCH entry, not the $OTHER_ARCH one listed first)" wait_for 10 log_has multi right-arch

check "a corrupted layer blob is refused: ErrImagePull" wait_for 30 waiting bad ErrImagePull
check "saying the digest did not match" sh -c "grep -A4 'waiting:' '$(pod bad)' | grep -qi 'digest'"
check "and nothing of it is unpacked" sh -c "! ls '$STORE/layers' | grep -q \$(sha256sum '$T/layers/bad.tar' | cut -c1-64)"
check "a Failed event says so" event_has Failed "Failed to pull image \"$R1/team/bad:1\""

# pull policies
mkpod never "$R1/team/nothere:1" "    imagePullPolicy: Never"
check "Never, not present: ErrImageNeverPull" wait_for 20 waiting never ErrImageNeverPull
check "with the kubelet's message" grep -q "Container image \"$R1/team/nothere:1\" is not present with pull policy of Never" "$(pod never)"
mkpod never2 "$R1/team/app:1.0" "    imagePullPolicy: Never"
check "Never, present: runs" wait_for 30 is_running never2
check "IfNotPresent, present: no pull, 'already present on machine'" wait_for 10 event_has Pulled "Container image \"$R1/team/app:1.0\" already present on machine"
PULLS=$(grep -c "pull $R1/team/app:latest: done" "$T/noded.log")
mkpod always "$R1/team/app:latest"
check "no tag: Always (the default), pulled although its layers are here" wait_for 30 is_running always
check "(asking the registry)" wait_for 10 sh -c "[ \$(grep -c 'pull $R1/team/app:latest: done' '$T/noded.log') -gt $PULLS ]"
check "imagePullPolicy defaults to Always for :latest" grep -q 'imagePullPolicy: Always' "$(pod always)"

# credentials
mkpod noauth "$R2/private/app:1.0"
check "a registry that needs credentials, none given: ErrImagePull" wait_for 30 waiting noauth ErrImagePull
check "saying why" sh -c "grep -A4 'waiting:' '$(pod noauth)' | grep -Eqi 'unauthorized|authentication required|denied'"
AUTH=$(printf 'puller:s3cret' | base64 -w0)
DCJ=$(printf '{"auths":{"%s":{"auth":"%s"}}}' "$R2" "$AUTH" | base64 -w0)
cat >"$M/namespaces/$NS/secrets/regcred.yaml" <<Y
apiVersion: v1
kind: Secret
metadata: {name: regcred}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: $DCJ}
Y
mkpod withauth "$R2/private/app:1.0" "" "  imagePullSecrets: [{name: regcred}]"
check "imagePullSecrets of type dockerconfigjson: pulled with basic auth, runs" wait_for 30 is_running withauth
check "no temporary credentials file left" sh -c "! find '$STORE' -name auth.json | grep -q ."

# back-off
check "a missing image: ErrImagePull first" waiting missing ErrImagePull
check "then ImagePullBackOff, with the kubelet's message" wait_for 40 sh -c "grep -A4 'waiting:' '$(pod missing)' | grep -q 'Back-off pulling image \"$R1/team/missing:1\"'"
check "and a BackOff event" wait_for 10 event_has BackOff "Back-off pulling image \"$R1/team/missing:1\""

# corral image
check "corral image list shows the pulled images" sh -c "'$ROOT/tools/corral' image list --config '$T/noded.conf' | grep -q '$R1/team/other:1'"
check "corral image pull by hand" sh -c "'$ROOT/tools/corral' image pull --config '$T/noded.conf' '$R1/team/multi:arm' | grep -q 'Downloaded newer image'"
check "corral image rm removes it" sh -c "'$ROOT/tools/corral' image rm --config '$T/noded.conf' '$R1/team/multi:arm' && ! '$ROOT/tools/corral' image list --config '$T/noded.conf' | grep -q 'multi:arm'"
check "and its own layer with it" sh -c "! ls '$STORE/layers' | grep -q \$(sha256sum '$T/layers/arm.tar' | cut -c1-64)"

skopeo --insecure-policy copy -q --src-tls-verify=false "docker://$R1/team/other:1" \
	"docker-archive:$T/saved.tar:example.com/saved/other:7" >>"$T/push.log" 2>&1
check "corral image import takes a docker save archive, under the name it carries" sh -c "'$ROOT/tools/corral' image import '$T/saved.tar' --config '$T/noded.conf' | grep -q 'example.com/saved/other:7'"
mkpod imported example.com/saved/other:7 "    imagePullPolicy: Never"
check "a pod of the imported image runs (Never: no registry asked)" wait_for 30 is_running imported

# the image GC: other and multi unused, app in use; the store filled past
# the high threshold
rm -f "$(pod other)" "$(pod multi)" "$(pod imported)"
check "unused images' containers are gone" wait_for 30 sh -c "! ls -d '$NSTATE'/nodes/*/pods/*/c/*/image 2>/dev/null | xargs -r cat | grep -qE 'team/(other|multi)|saved/other'"
filler() {
	local total used want
	read -r total used <<<"$(df -B1 --output=size,used "$STORE" | tail -1)"
	want=$((total * 62 / 100 - used))
	[ "$want" -gt 0 ] && head -c "$want" /dev/zero >"$STORE/.filler"
}
filler
check "above the high threshold, the GC removes the unused images" wait_for 20 sh -c "! '$NODED' --config '$T/noded.conf' image list | grep -qE 'team/(other|multi):1|saved/other'"
check "but never one a container uses" sh -c "'$NODED' --config '$T/noded.conf' image list | grep -q 'team/app:1.0'"
check "(its layers stay)" test -d "$STORE/layers/$(sha256sum "$T/layers/top.tar" | cut -c1-64)"
check "the unused image's own layer is gone" sh -c "! ls '$STORE/layers' | grep -q \$(sha256sum '$T/layers/top2.tar' | cut -c1-64)"
check "the app pod still runs" is_running app
rm -f "$STORE/.filler"

dump_pods() {
	local f
	[ "$FAILS" != 0 ] || return 0
	for f in "$P"/*.yaml; do
		[ -e "$f" ] || continue
		echo "# $f:"
		sed -n '/^status:/,$p' "$f" | grep -A8 'containerStatuses:'
		cat "$M/namespaces/$NS/logs/$(basename "$f" .yaml)/c.log"
	done >&2 2>/dev/null
	tail -40 "$T/noded.log" >&2
}
dump_pods
rm -f "$P"/*.yaml
check "every pod deleted: no systemd-nspawn of ours left" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
check "no agent error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log'"
[ "$FAILS" = 0 ]
