#!/bin/sh
# Install the Debian packages corral needs to build, test and run, if missing.
set -e
PKGS="gcc make pkg-config libfuse3-dev fuse3 libyaml-dev libinih-dev libgit2-dev
liblmdb-dev libcmocka-dev systemd-container git inotify-tools mandoc vim
rsync nftables iproute2 busybox-static clang clang-format procps psmisc util-linux file
bind9-dnsutils dnsperf dnsmasq-base curl python3 tzdata libssl-dev openssl
skopeo docker-registry apache2-utils libjansson-dev libcurl4-openssl-dev
libmicrohttpd-dev libgnutls28-dev etcd-server etcd-client libmnl-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run as root, or: apt-get install$missing)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# corral runs docker-registry only as the tests' own loopback registry: the
# service Debian starts on installing it (listening on :5000, every
# interface) is stopped and disabled again.
case " $missing " in
*" docker-registry "*)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
		systemctl disable --now docker-registry.service >/dev/null 2>&1 || true
	fi
	;;
esac
# etcd likewise: corral-fs --store etcd:// and the tests start their own
# members; the packaged service (listening on 2379) is not wanted.
case " $missing " in
*" etcd-server "*)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
		systemctl disable --now etcd.service >/dev/null 2>&1 || true
	fi
	;;
esac
