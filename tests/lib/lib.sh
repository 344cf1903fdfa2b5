# Sourced by the integration tests: a private mount and state, checks that
# print "ok - ..." or "not ok - ...", and a trap that always cleans up.
set -u
BUILD=${CORRAL_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
FS_BIN=${CORRAL_FS_BIN:-$BUILD/corral-fs}
if [ "$(id -u)" != 0 ]; then
	echo "not ok - integration tests need root (FUSE allow_other, su); run as root"
	exit 1
fi
if [ ! -c /dev/fuse ]; then
	echo "not ok - /dev/fuse is missing: cannot mount"
	exit 1
fi
if [ ! -x "$FS_BIN" ]; then
	echo "not ok - no corral-fs binary at $FS_BIN (run make)"
	exit 1
fi
# corral-noded pulls an image that is no folder from its registry: a test's
# must never reach the Internet's (Go never proxies loopback registries)
export HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost
T=$(mktemp -d /tmp/corral-test.XXXXXX)
chmod 755 "$T" # other users must reach the mount
M=$T/mnt
S=$T/state
mkdir -p "$M"
FSPID=
FAILS=0

cleanup() {
	[ -n "$FSPID" ] && kill "$FSPID" 2>/dev/null
	for _ in $(seq 50); do mountpoint -q "$M" || break; sleep 0.1; done
	if mountpoint -q "$M"; then fusermount3 -u "$M" 2>/dev/null || umount -l "$M"; fi
	[ -n "$FSPID" ] && kill -9 "$FSPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

ok() { echo "ok - $1"; }
fail() { echo "not ok - $1"; FAILS=$((FAILS + 1)); }
# check "what" cmd...: ok if cmd succeeds
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else fail "$what"; fi; }
# refute "what" cmd...: ok if cmd fails
refute() { local what=$1; shift; if "$@" >/dev/null 2>&1; then fail "$what"; else ok "$what"; fi; }
# wait_for SECS cmd...: until cmd succeeds (run anew each time), at most SECS.
# Its arguments are expanded once, by the caller: a value that changes over
# time belongs inside cmd (a function, or sh -c '...'), never in "$(...)".
wait_for() { local s=$1; shift; for _ in $(seq $((s * 20))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }

start_fs() {
	"$FS_BIN" -f --state "$S" "$@" "$M" >>"$T/fs.log" 2>&1 &
	FSPID=$!
	wait_for 10 test -d "$M/namespaces" || { echo "not ok - corral-fs did not mount: $(tail -3 "$T/fs.log")"; exit 1; }
}

stop_fs() {
	kill "$FSPID" 2>/dev/null
	wait "$FSPID" 2>/dev/null
	for _ in $(seq 50); do mountpoint -q "$M" || break; sleep 0.1; done
	mountpoint -q "$M" && fusermount3 -u "$M"
	FSPID=
}

kill9_fs() {
	kill -9 "$FSPID" 2>/dev/null
	wait "$FSPID" 2>/dev/null
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M"
	FSPID=
}

# readable FILE...: every FILE reads back as a stored object. A file that
# another process is writing is listed, with its size, before its close
# commits it, but cannot be opened until then: `test -s` is not enough.
readable() { local f; for f; do grep -q '^kind:' "$f" 2>/dev/null || return 1; done; }

# The revision HEAD of the history has reached.
history_rev() { git --git-dir="$S/history.git" log -1 --format=%B 2>/dev/null | sed -n 's/^Corral-Revision: //p'; }
# obj_rev FILE: the object's metadata.resourceVersion, the store revision
# of its last write.
obj_rev() { sed -n "s/^  resourceVersion: '\{0,1\}\([0-9]*\)'\{0,1\}\$/\1/p" "$1" 2>/dev/null | head -1; }
__history_at() { local r; r=$(history_rev); [ -n "$r" ] && [ -n "$1" ] && [ "$r" -ge "$1" ]; }
# wait_history SECS REV: until the history's HEAD has reached store revision
# REV (its Corral-Revision). Only a change that enters the history moves
# HEAD: REV must be the revision of such a write.
wait_history() { wait_for "$1" __history_at "$2"; }
# history_settle [SECS]: until everything written so far has reached the
# history. It writes a declared change of a ConfigMap of its own
# (default/corral-test-settle) and waits for the history to reach it: the
# history writer takes the store's changes in order, so every change before
# it is then committed (or was never to be). The marker is one commit more
# in the whole history, none in any other path's. A history that does not
# reach it is a failure.
SETTLE=$M/namespaces/default/configmaps/corral-test-settle.yaml
history_settle() {
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: corral-test-settle}\ndata: {mark: "%s"}\n' \
		"$(date +%s%N)" >"$SETTLE" || return 1
	wait_history "${1:-20}" "$(obj_rev "$SETTLE")" ||
		{ fail "the history reaches a change written last (at $(history_rev), want $(obj_rev "$SETTLE"))"; return 1; }
}

# need_daemons: CTRL, SCHED, NODED and DNS, the binaries of a whole cluster
# (CORRAL_<NAME>_BIN or the build's); a suite without one of them fails.
need_daemons() {
	CTRL=${CORRAL_CTRL_BIN:-$BUILD/corral-ctrl}
	SCHED=${CORRAL_SCHED_BIN:-$BUILD/corral-sched}
	NODED=${CORRAL_NODED_BIN:-$BUILD/corral-noded}
	DNS=${CORRAL_DNS_BIN:-$BUILD/corral-dns}
	local b
	for b in "$CTRL" "$SCHED" "$NODED" "$DNS"; do
		[ -x "$b" ] || { echo "not ok - no $b (run make)"; exit 1; }
	done
}

# hash8 NAME: the FNV-1a hash corral-noded names a node's or a pod's
# interfaces and cgroups with (crl<hash> bridges, crv<hash> veths).
hash8() {
	local s=$1 h=2166136261 i c
	for ((i = 0; i < ${#s}; i++)); do
		printf -v c '%d' "'${s:i:1}"
		h=$(((h ^ c) * 16777619 & 0xffffffff))
	done
	printf '%08x\n' "$h"
}

# client_pod FOLDER NAME NODE SCRIPT: a busybox pod NAME of the namespace
# FOLDER (namespaces/<ns>) bound to NODE, that runs `sh -c SCRIPT` once.
client_pod() {
	cat >"$1/pods/$2.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: $2}
spec:
  nodeName: $3
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers: [{name: c, image: busybox, command: ["sh", "-c", "$4"]}]
Y
}

# node_net_cleanup STATE NODE...: what a real corral-noded leaves when it
# dies before cleaning up: each NODE's bridge and nftables table, the
# unreachable routes once no corral bridge is left, and the mounts under
# its STATE folder. For final cleanups, after the agents are stopped.
node_net_cleanup() {
	local state=$1 n br
	shift
	for n; do
		br=crl$(hash8 "$n")
		ip link del "$br" 2>/dev/null
		nft delete table ip "corral_$br" 2>/dev/null
	done
	ip -br link show type bridge | grep -q '^crl' || {
		ip route del unreachable 10.244.0.0/16 2>/dev/null
		ip route del unreachable 10.96.0.0/16 2>/dev/null
	}
	grep " $state" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m"; done
}

# start_real_node NAME [LINE...]: a real corral-noded NAME on the mount,
# with the busybox image, its state and pod logs under $T ($NSTATE,
# $IMAGES, $LOGS: start corral-fs with --pod-log-dir "$T/logs"); each LINE
# goes into its [noded] section. Sets NPID. stop_real_node, in a final
# cleanup after the suite removed its pods, waits for their nspawns,
# stops the agent and removes its network.
NPID=
start_real_node() {
	local bin=${CORRAL_NODED_BIN:-$BUILD/corral-noded} root l
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	RN_NAME=$1
	shift
	NSTATE=$T/nstate IMAGES=$T/images LOGS=$T/logs
	mkdir -p "$LOGS"
	[ -x "$bin" ] || { echo "not ok - no corral-noded binary at $bin (run make)"; exit 1; }
	command -v systemd-nspawn >/dev/null ||
		{ echo "not ok - systemd-nspawn is missing (apt-get install systemd-container)"; exit 1; }
	{
		printf '[noded]\nstate = %s\nimages = %s\npod-log-dir = %s\n' "$NSTATE" "$IMAGES" "$LOGS"
		for l; do printf '%s\n' "$l"; done
	} >"$T/noded.conf"
	"$root/tools/corral" image build-busybox --images "$IMAGES" >/dev/null 2>&1 ||
		{ echo "not ok - corral image build-busybox failed"; exit 1; }
	"$bin" --mount "$M" --name "$RN_NAME" --config "$T/noded.conf" --heartbeat-period 1s \
		--cleanup-on-exit >>"$T/noded.log" 2>&1 &
	NPID=$!
}
stop_real_node() {
	[ -n "$NPID" ] || return 0
	wait_for 30 sh -c "! pgrep -f -- '--director[y]=$NSTATE' >/dev/null"
	kill "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
	NPID=
	node_net_cleanup "$NSTATE" "$RN_NAME"
}

# free_port: a loopback TCP port nothing listens on now
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 20000))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# make_test_pki DIR: with openssl, in DIR, a cluster CA (ca.crt, ca.key),
# a node's server certificate for 127.0.0.1 (node.crt, node.key), a
# client certificate of the CA (client.crt, client.key), and a stranger's
# CA and client certificate (stranger.crt, stranger.key). 0 or 1.
make_test_pki() {
	local P=$1
	mkdir -p "$P" || return 1
	__mkca() { # NAME
		openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=$1" \
			-keyout "$P/$1.key" -out "$P/$1.crt" -addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	}
	__mkcert() { # NAME CA EXT
		openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$P/$1.key" -out "$P/$1.csr" 2>/dev/null &&
			printf '%s\n' "$3" >"$P/$1.ext" &&
			openssl x509 -req -in "$P/$1.csr" -CA "$P/$2.crt" -CAkey "$P/$2.key" -CAcreateserial \
				-days 2 -sha256 -extfile "$P/$1.ext" -out "$P/$1.crt" 2>/dev/null
	}
	command -v openssl >/dev/null &&
		__mkca ca && __mkca stranger-ca &&
		__mkcert node ca "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth" &&
		__mkcert client ca "extendedKeyUsage=clientAuth" &&
		__mkcert stranger stranger-ca "extendedKeyUsage=clientAuth"
}

# check_term_ends_exec NAME CMD...: CMD (a corral exec that runs `sleep
# NAME` in a container) runs it; SIGTERM to CMD ends it with 128+15 and the
# command in the container goes. XPID holds CMD's pid meanwhile, for a
# final cleanup.
XPID=
check_term_ends_exec() {
	local n=$1 rc
	shift
	"$@" >/dev/null 2>&1 &
	XPID=$!
	check "a long command runs in the container" wait_for 15 pgrep -f -x "sleep $n"
	kill -TERM "$XPID"
	wait "$XPID"
	rc=$?
	XPID=
	check "SIGTERM to corral exec ends it with 128+15" test "$rc" = 143
	check "and the command in the container is gone" wait_for 10 sh -c "! pgrep -f -x 'sleep $n'"
}
