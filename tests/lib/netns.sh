# Sourced by the service proxy's test and benchmark: a node made of network
# namespaces of the caller's own, so that nothing touches the machine's
# network. The caller sets T (a temporary folder), BB (busybox), H (the
# host namespace's name), BR (its bridge), NSS=() and PIDS=(), and its exit
# trap deletes every namespace in NSS (which deletes their links, addresses,
# routes and tables) and kills every PID in PIDS.

# netns_host: namespace $H with forwarding, the bridge $BR (gateway
# 10.244.0.1/24) and, as noded installs it, the unreachable route for the
# service range.
netns_host() {
	ip netns add "$H" || return 1
	NSS+=("$H")
	ip -n "$H" link set lo up
	ip netns exec "$H" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$H" link add "$BR" type bridge
	ip -n "$H" addr add 10.244.0.1/24 dev "$BR"
	ip -n "$H" link set "$BR" up
	ip -n "$H" route add unreachable 10.96.0.0/16
}

# netns_pod NS NAME ADDR: namespace NS on a veth of the bridge with ADDR/24
# and a default route through the gateway, an httpd on 8080 answering NAME.
netns_pod() {
	local ns=$1 n=$2 addr=$3
	ip netns add "$ns" || return 1
	NSS+=("$ns")
	ip -n "$H" link add "v$n" type veth peer name eth0 netns "$ns"
	ip -n "$H" link set "v$n" master "$BR" up
	# hairpin: with br_netfilter, a pod's packet DNATed to itself is
	# bridged back out of the port it came in by (as bridge CNI sets it)
	ip -n "$H" link set "v$n" type bridge_slave hairpin on
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$addr/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add default via 10.244.0.1
	mkdir -p "$T/www-$n"
	echo "$n" >"$T/www-$n/index.html"
	ip netns exec "$ns" "$BB" httpd -f -p 8080 -h "$T/www-$n" &
	PIDS+=($!)
}
