#!/bin/bash
# Static pods (corral-noded(8), STATIC PODS): manifests in static-pod-path
# run on the node directly, followed with inotify (add, change, delete),
# even while corral-fs is down; each shows in the mount as a mirror pod
# NAME-NODE whose deletion does not stop it; pods from manifest-url (a
# local HTTP server) likewise.
. "$(dirname "$0")/../lib/lib.sh"
command -v busybox >/dev/null || { echo "not ok - busybox is missing (apt-get install busybox-static)"; exit 1; }
N=static-a
MAN=$T/manifests WWW=$T/www
mkdir -p "$MAN" "$WWW"
HPID=
final_cleanup() {
	rm -f "$MAN"/* "$WWW"/*
	stop_real_node
	if [ -n "$HPID" ]; then
		kill "$HPID" 2>/dev/null
		wait "$HPID" 2>/dev/null
	fi
	cleanup
}
trap final_cleanup EXIT
start_fs --pod-log-dir "$T/logs"
# a port for the manifest server: one nothing listens on
PORT=
for p in $(seq 18480 18520); do
	if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { echo "not ok - no free port for the manifest server"; exit 1; }
busybox httpd -f -p "127.0.0.1:$PORT" -h "$WWW" >>"$T/httpd.log" 2>&1 &
HPID=$!
start_real_node "$N" "static-pod-path = $MAN" "file-check-frequency = 1s" \
	"manifest-url = http://127.0.0.1:$PORT/pods.yaml" "http-check-frequency = 1s"
D=$M/namespaces/default/pods
check "node $N registers Ready" wait_for 15 grep -q 'reason: KubeletReady' "$M/nodes/$N.yaml"

manifest() { # NAME WORD: a pod that says WORD once, then sleeps
	cat <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: busybox
    command: ["sh", "-c", "echo started-$2; exec sleep 3600"]
Y
}
mirror_running() { grep -q 'kubernetes.io/config.mirror' "$D/$1.yaml" && grep -q 'phase: Running' "$D/$1.yaml"; }
starts() { cat "$M/namespaces/default/logs/$1/web.log" 2>/dev/null | grep -c "^started-$2\$"; }
said() { [ "$(starts "$1" "$2")" = "${3:-1}" ]; }
mirror_hash() { sed -n "s/^    kubernetes.io\/config.mirror: '\{0,1\}\([0-9a-f]*\)'\{0,1\}\$/\1/p" "$D/$1.yaml" 2>/dev/null; }

manifest static-web one >"$MAN/static-web.yaml"
check "a manifest in static-pod-path runs: its mirror pod static-web-$N is Running" wait_for 30 mirror_running "static-web-$N"
check "the mirror carries config.source: file and spec.nodeName" sh -c "grep -q 'kubernetes.io/config.source: file' '$D/static-web-$N.yaml' && grep -q 'nodeName: $N' '$D/static-web-$N.yaml'"
check "the container said it started, once" wait_for 15 said "static-web-$N" one
H1=$(mirror_hash "static-web-$N")
check "the mirror's config.mirror is the static pod's hash" test -n "$H1"

rm "$D/static-web-$N.yaml"
check "deleting the mirror: it comes back" wait_for 15 mirror_running "static-web-$N"
check "the pod was not restarted (still one start in its log)" said "static-web-$N" one
check "same hash" sh -c "[ '$(mirror_hash "static-web-$N")' = '$H1' ]"

manifest static-web two >"$MAN/static-web.yaml"
changed() { h=$(mirror_hash "static-web-$N"); [ -n "$h" ] && [ "$h" != "$H1" ] && mirror_running "static-web-$N"; }
check "a changed manifest replaces the pod: a new mirror hash, Running" wait_for 30 changed
check "and the new container runs" wait_for 15 said "static-web-$N" two

mv "$MAN/static-web.yaml" "$T/static-web.moved"
check "a removed manifest stops the pod: its mirror is deleted" wait_for 30 test ! -e "$D/static-web-$N.yaml"
check "and its container is gone" wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE/nodes/$N/pods/' >/dev/null"

printf 'apiVersion: v1\nkind: Service\nmetadata: {name: x}\n' >"$MAN/not-a-pod.yaml"
printf 'kind: Pod\nmetadata: {name: [unclosed\n' >"$MAN/broken.yaml"
check "a manifest that is not a Pod is reported in the agent's log" wait_for 10 grep -q "not-a-pod.yaml: kind Service: a static pod must be a Pod" "$T/noded.log"
check "a broken one too, naming the file" wait_for 10 grep -q "broken.yaml: .*line" "$T/noded.log"
rm -f "$MAN/not-a-pod.yaml" "$MAN/broken.yaml"

# corral-fs down: a new manifest still runs; its mirror appears once the
# mount is back
stop_fs
manifest offline three >"$MAN/offline.yaml"
off_log() { cat "$LOGS"/default_offline-${N}_*/web/0.log 2>/dev/null | grep -q '^started-three$'; }
check "with corral-fs down, a new static pod runs (its log on the node)" wait_for 30 off_log
start_fs --pod-log-dir "$LOGS"
check "corral-fs back: its mirror appears, Running" wait_for 30 mirror_running "offline-$N"
rm -f "$MAN/offline.yaml"
check "and goes with its manifest" wait_for 30 test ! -e "$D/offline-$N.yaml"

# manifest-url: a PodList, then one pod
{
	echo 'apiVersion: v1'
	echo 'kind: PodList'
	echo 'items:'
	# each item: its manifest without apiVersion and kind, as a list entry
	for n in url-a url-b; do manifest $n $n | sed '1,2d' | sed -e 's/^/  /' -e '1s/^  /- /'; done
} >"$WWW/pods.yaml.tmp"
mv "$WWW/pods.yaml.tmp" "$WWW/pods.yaml"
check "manifest-url's PodList: url-a runs" wait_for 30 mirror_running "url-a-$N"
check "and url-b" wait_for 30 mirror_running "url-b-$N"
check "with config.source: http" grep -q 'kubernetes.io/config.source: http' "$D/url-a-$N.yaml"
manifest url-a url-a >"$WWW/pods.yaml.tmp" && mv "$WWW/pods.yaml.tmp" "$WWW/pods.yaml"
check "the URL now gives one pod: url-b stops" wait_for 30 test ! -e "$D/url-b-$N.yaml"
check "url-a runs on, not restarted" sh -c "mirror_running() { grep -q 'phase: Running' '$D/url-a-$N.yaml'; }; mirror_running && [ \$(grep -c '^started-url-a\$' '$M/namespaces/default/logs/url-a-$N/web.log') = 1 ]"
rm -f "$WWW/pods.yaml"
check "the URL failing (404) is reported" wait_for 15 grep -q "pods.yaml: curl failed" "$T/noded.log"
check "and its pods are kept" mirror_running "url-a-$N"
printf 'apiVersion: v1\nkind: PodList\nitems: []\n' >"$WWW/pods.yaml.tmp" && mv "$WWW/pods.yaml.tmp" "$WWW/pods.yaml"
check "an empty PodList at the URL stops them" wait_for 30 test ! -e "$D/url-a-$N.yaml"

# (but the informers' word that the mount went, which it did)
check "no agent error" sh -c "! grep -h -e ' error: ' -e 'Sanitizer' '$T/noded.log' | grep -v 'error: informer [a-z]*: lost '"
[ "$FAILS" = 0 ]
