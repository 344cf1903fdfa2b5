# Sourced by the multi-host suites and benchmarks: a lab of N hosts on this
# machine, none of whose traffic can leave it.
#
#   lab_up N        hosts 1..N: each a network namespace of its own with
#                   eth0 = 10.77.0.I/24 on a bridge that lives in a further
#                   namespace (no link to the machine's network, no default
#                   route anywhere), and an anchor process holding the host's
#                   own mount and UTS namespaces (hostname lab-I, its own
#                   /run/corral and, if the caller wants it, its own
#                   /cluster). Mounts the machine made before lab_up are
#                   seen in the hosts (later ones only where the machine's
#                   / is a shared mount: not in every container, so mount
#                   first); a host's own mounts are seen nowhere else.
#   lab_exec I CMD  runs CMD on host I (its network, mount and UTS namespaces)
#   lab_ip I        host I's address
#   lab_etcd_up [N] one etcd member per host, on hosts 1..N (default all;
#                   the others free for a cluster of their own) (client
#                   10.77.0.I:2379, peer :2380, data in $T/lab/hI/etcd),
#                   returns once all are healthy; LAB_STORE is then the
#                   etcd://... for --store
#   lab_etcd_kill I kill -9 host I's member
#   lab_kill_host I kill -9 every process of host I: those in its network
#                   or mount namespace and all their descendants (a pod's
#                   processes live in network and mount namespaces of
#                   their own), frozen first so that none forks away
#   lab_down        kills what runs in the hosts, deletes the namespaces (and
#                   with them every link, address, route and nftables table
#                   made in them); the caller's EXIT trap calls it.
#
# The caller sets T (a temporary folder). Names carry $$, so two runs never
# meet.

LAB_N=0
LAB_PFX=crlab$$
LAB_BR=$LAB_PFX-br
LAB_ANCHOR=()
LAB_ETCD=()
LAB_STORE=

lab_ip() { echo "10.77.0.$1"; }
lab_ns() { echo "$LAB_PFX-h$1"; }

lab_up() {
	local n=$1 i ns pidf
	mkdir -p "$T/lab" /run/corral || return 1
	# The suites point proxies at a dead port (lib.sh) so that nothing
	# reaches the Internet; the lab's addresses are direct: etcd's JSON
	# gateway dials its own member, corral-fs a node's log server.
	NO_PROXY=${NO_PROXY:+$NO_PROXY,}10.77.0.0/24
	for ((i = 1; i <= n; i++)); do NO_PROXY+=,$(lab_ip "$i"); done
	export NO_PROXY no_proxy=$NO_PROXY
	ip netns add "$LAB_BR" || return 1
	ip -n "$LAB_BR" link set lo up
	ip -n "$LAB_BR" link add lab0 type bridge
	ip -n "$LAB_BR" link set lab0 up
	for ((i = 1; i <= n; i++)); do
		ns=$(lab_ns "$i")
		ip netns add "$ns" || return 1
		LAB_N=$i
		ip -n "$ns" link set lo up
		ip -n "$ns" link add eth0 type veth peer name "h$i" netns "$LAB_BR"
		ip -n "$LAB_BR" link set "h$i" master lab0 up
		ip -n "$ns" addr add "$(lab_ip "$i")/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
		mkdir -p "$T/lab/h$i"
		pidf=$T/lab/h$i/anchor.pid
		# The anchor: its own mount and UTS namespaces in the host's
		# network namespace; sysfs mounted again so that /sys/class/net
		# shows the host's links, and the machine's cgroup tree moved back
		# beneath it as it is (v2, or v1 and hybrid: the agents' limits
		# work in the lab as on the machine).
		mkdir -p "$T/lab/h$i/cg"
		nsenter --net="/run/netns/$ns" unshare --mount --propagation slave --uts --fork \
			sh -c 'hostname "$1"; mount --rbind /sys/fs/cgroup "$3" &&
				umount -l /sys && mount -t sysfs sysfs /sys &&
				mount --move "$3" /sys/fs/cgroup &&
				mount -t tmpfs -o mode=0755 tmpfs /run/corral &&
				echo $$ >"$2" && exec sleep infinity' sh "lab-$i" "$pidf" "$T/lab/h$i/cg" \
			>>"$T/lab/h$i/anchor.log" 2>&1 &
		disown $! # killed with the lab: no "Killed" line from bash
		local k
		for k in $(seq 100); do [ -s "$pidf" ] && break; sleep 0.05; done
		[ -s "$pidf" ] || { echo "lab: host $i's anchor did not start: $(cat "$T/lab/h$i/anchor.log")" >&2; return 1; }
		LAB_ANCHOR[$i]=$(cat "$pidf")
	done
}

lab_exec() {
	local i=$1
	shift
	nsenter -t "${LAB_ANCHOR[$i]}" -m -u -n -- "$@"
}

lab_etcd_up() {
	local i cluster='' urls=() n=${1:-$LAB_N}
	command -v etcd >/dev/null || { echo "lab: no etcd (apt-get install etcd-server)" >&2; return 1; }
	[ "$n" -ge 1 ] && [ "$n" -le "$LAB_N" ] || { echo "lab: no hosts 1..$n" >&2; return 1; }
	for ((i = 1; i <= n; i++)); do
		cluster+=${cluster:+,}h$i=http://$(lab_ip "$i"):2380
		urls+=("$(lab_ip "$i"):2379")
	done
	for ((i = 1; i <= n; i++)); do lab_etcd_start "$i" "$cluster"; done
	LAB_STORE=etcd://$(
		IFS=,
		echo "${urls[*]}"
	)
	for ((i = 1; i <= n; i++)); do
		wait_for 30 lab_etcd_healthy "$i" ||
			{ echo "lab: etcd on host $i is not healthy: $(tail -3 "$T/lab/h$i/etcd.log")" >&2; return 1; }
	done
}

# lab_etcd_start I [CLUSTER]: host I's member (again, after a kill: the data
# folder makes it rejoin).
lab_etcd_start() {
	local i=$1 cluster=${2:-$LAB_CLUSTER} ip
	LAB_CLUSTER=$cluster
	ip=$(lab_ip "$i")
	# nsenter itself, not lab_exec: $! must be etcd's PID (nsenter execs
	# it), not a subshell's that a kill would not reach through
	nsenter -t "${LAB_ANCHOR[$i]}" -m -u -n -- etcd --name "h$i" --data-dir "$T/lab/h$i/etcd" \
		--listen-client-urls "http://$ip:2379" --advertise-client-urls "http://$ip:2379" \
		--listen-peer-urls "http://$ip:2380" --initial-advertise-peer-urls "http://$ip:2380" \
		--initial-cluster "$cluster" --initial-cluster-token "$LAB_PFX" \
		>>"$T/lab/h$i/etcd.log" 2>&1 &
	LAB_ETCD[$i]=$!
}

lab_etcd_healthy() { lab_exec "$1" curl -sf -m 1 "http://$(lab_ip "$1"):2379/health" | grep -q '"health":"true"'; }

lab_etcd_kill() {
	local i=$1
	[ -n "${LAB_ETCD[$i]:-}" ] || return 0
	kill -9 "${LAB_ETCD[$i]}" 2>/dev/null
	wait "${LAB_ETCD[$i]}" 2>/dev/null
	LAB_ETCD[$i]=
}

# lab_pids I: the processes of host I, its anchor aside: those in its
# network namespace or its mount namespace (the anchor's), and every
# descendant of theirs (a pod's pause and containers: namespaces of their
# own, started by the host's agent).
lab_pids() {
	local a=${LAB_ANCHOR[$1]:-} mnt
	[ -n "$a" ] || return 0
	mnt=$(readlink "/proc/$a/ns/mnt" 2>/dev/null) || return 0
	{
		ip netns pids "$(lab_ns "$1")" 2>/dev/null
		echo "mnt $mnt"
		stat -c 'ns %n %N' /proc/[0-9]*/ns/mnt 2>/dev/null | tr -d "'"
		cat /proc/[0-9]*/stat 2>/dev/null | awk '{ p = $1; sub(/.*\) /, ""); print "pp", p, $2 }'
	} | awk -v anchor="$a" '
		NF == 1 { own[$1] = 1; next }
		$1 == "mnt" { mnt = $2; next }
		$1 == "ns" { p = $2; sub(/^\/proc\//, "", p); sub(/\/.*/, "", p); ns[p] = $NF; next }
		$1 == "pp" { parent[$2] = $3; pids[++n] = $2 }
		END {
			for (i = 1; i <= n; i++) if (ns[pids[i]] == mnt) own[pids[i]] = 1
			do { more = 0
				for (i = 1; i <= n; i++) { p = pids[i]
					if (!(p in own) && (parent[p] in own)) { own[p] = 1; more = 1 } }
			} while (more)
			for (p in own) if (p != anchor && p != "") print p
		}'
}

lab_kill_host() {
	local i=$1 p ps n=-1
	# freeze until no new process shows up, then kill them all
	for _ in $(seq 20); do
		ps=$(lab_pids "$i")
		for p in $ps; do kill -STOP "$p" 2>/dev/null; done
		[ "$(echo "$ps" | wc -w)" = "$n" ] && break
		n=$(echo "$ps" | wc -w)
	done
	for p in $ps; do kill -9 "$p" 2>/dev/null; done
	for _ in $(seq 50); do [ -z "$(lab_pids "$i")" ] && break; sleep 0.1; done
	for p in $(lab_pids "$i"); do kill -9 "$p" 2>/dev/null; done
	LAB_ETCD[$i]=
}

# lab_umount_all I: host I's FUSE mounts (its /cluster), from inside it.
lab_umount_all() {
	local m
	for m in $(lab_exec "$1" awk '$3 ~ /^fuse/ {print $2}' /proc/self/mounts 2>/dev/null | sort -r); do
		lab_exec "$1" fusermount3 -u "$m" 2>/dev/null || lab_exec "$1" umount -l "$m" 2>/dev/null
	done
}

lab_down() {
	local i p
	for ((i = 1; i <= LAB_N; i++)); do
		for p in $(lab_pids "$i"); do kill "$p" 2>/dev/null; done
	done
	for ((i = 1; i <= LAB_N; i++)); do
		for _ in $(seq 50); do [ -z "$(lab_pids "$i")" ] && break; sleep 0.1; done
		lab_umount_all "$i"
		for p in $(lab_pids "$i"); do kill -9 "$p" 2>/dev/null; done
		[ -n "${LAB_ANCHOR[$i]:-}" ] && kill -9 "${LAB_ANCHOR[$i]}" 2>/dev/null
		ip netns del "$(lab_ns "$i")" 2>/dev/null
	done
	ip netns del "$LAB_BR" 2>/dev/null
	LAB_N=0
}
