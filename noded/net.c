/* net.c: bridges, routes and the safety table, through ip(8) and nft(8);
 * each pod's veth through rtnetlink (rtnl.h), many of them being made at
 * once. */
#include "net.h"
#include "exec.h"
#include "fnv.h"
#include "log.h"
#include "rtnl.h"
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct net {
	char *node;
	struct cidr pod_cidr, cluster_cidr, service_cidr;
	char bridge[NET_IFNAME_SIZE];
	char table[NET_IFNAME_SIZE + 8];
	char gateway[CIDR_IP_SIZE];
	/* pods' networks are made one at a time (net_pod_up) */
	pthread_mutex_t pod_lock;
};

void net_hash(const char *s, char out[9])
{
	snprintf(out, 9, "%08x", fnv1a32(s, strlen(s)));
}

struct net *net_new(const struct net_opts *o)
{
	struct net *n = xcalloc(1, sizeof(*n));
	n->node = xstrdup(o->node);
	n->pod_cidr = o->pod_cidr;
	n->cluster_cidr = o->cluster_cidr;
	n->service_cidr = o->service_cidr;
	char h[9];
	net_hash(o->node, h);
	snprintf(n->bridge, sizeof(n->bridge), "crl%s", h);
	snprintf(n->table, sizeof(n->table), "corral_%s", n->bridge);
	cidr_ip_format(o->pod_cidr.addr + 1, n->gateway);
	pthread_mutex_init(&n->pod_lock, NULL);
	return n;
}

void net_free(struct net *n)
{
	if (!n)
		return;
	pthread_mutex_destroy(&n->pod_lock);
	free(n->node);
	free(n);
}

const char *net_bridge(const struct net *n)
{
	return n->bridge;
}

const char *net_gateway(const struct net *n)
{
	return n->gateway;
}

static int net__ip(const char *batch, pid_t netns, struct error **err)
{
	char *argv[] = {"ip", "-batch", "-", NULL};
	return exec_run(argv, batch, netns, err);
}

static int net__sysctl(const char *path, const char *value, struct error **err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	ssize_t w = write(fd, value, strlen(value));
	int e = errno;
	close(fd);
	if (w != (ssize_t)strlen(value))
		return error_set(err, e, "%s: %s", path, strerror(e));
	return 0;
}

static bool net__link_exists(const char *name)
{
	cleanup_free char *path = xasprintf("/sys/class/net/%s", name);
	return access(path, F_OK) == 0;
}

/* Whether the kernel has IPv6 at all (not booted with ipv6.disable=1). */
static bool net__has_ipv6(void)
{
	return access("/proc/sys/net/ipv6", F_OK) == 0;
}

/* No IPv6 on a link of the host: the table above is IPv4's alone, so a
 * pod must not reach the host, nor be reached, over IPv6 either (not even
 * link-local). */
static int net__no_ipv6(const char *link, struct error **err)
{
	if (!net__has_ipv6())
		return 0;
	cleanup_free char *path = xasprintf("/proc/sys/net/ipv6/conf/%s/disable_ipv6", link);
	return net__sysctl(path, "1", err);
}

/* The node's nftables table: pods talk to pods (and, through the proxy's
 * DNAT, to services) and to nothing beyond the pod range. On the host
 * itself a pod reaches only what a Service or NodePort translated for it
 * (the kube-dns endpoints are the gateways, the proxy's DNAT brings DNS
 * there) and the answers to what the host started (probes, the proxy's
 * hairpin); a listener on 0.0.0.0, the gateway or any other address of
 * the host is out of its reach. Pods of other hosts come in through the
 * host's own link (hostgw.h) and are forwarded to ours; the only address
 * of the host they can send to (the forward chains of their own hosts
 * keep them inside the pod range) is the gateway, and it is closed to
 * them as to ours. */
static char *net__table(const struct net *n)
{
	char pods[CIDR_STR_SIZE];
	cidr_format(&n->cluster_cidr, pods);
	return xasprintf("table ip %s {}\n"
			 "delete table ip %s\n"
			 "table ip %s {\n"
			 "\tchain forward {\n"
			 "\t\ttype filter hook forward priority -10; policy accept;\n"
			 "\t\tiifname \"%s\" ip daddr != %s counter drop\n"
			 "\t\toifname \"%s\" ip saddr != %s counter drop\n"
			 "\t}\n"
			 "\tchain input {\n"
			 "\t\ttype filter hook input priority -10; policy accept;\n"
			 "\t\tiifname \"%s\" ct state established,related accept\n"
			 "\t\tiifname \"%s\" ct status dnat accept\n"
			 "\t\tiifname \"%s\" counter drop\n"
			 "\t\tiifname != \"lo\" ip saddr %s ip daddr %s ct status dnat accept\n"
			 "\t\tiifname != \"lo\" ip saddr %s ip daddr %s "
			 "ct state new,invalid,untracked counter drop\n"
			 "\t}\n"
			 "}\n",
			 n->table, n->table, n->table, n->bridge, pods, n->bridge, pods, n->bridge,
			 n->bridge, n->bridge, pods, n->gateway, pods, n->gateway);
}

/* net_up()'s steps. Each failure returns at once: a goto past the
 * cleanup variables below would free them uninitialized. */
static int net__up(struct net *n, struct error **err)
{
	char pods[CIDR_STR_SIZE], services[CIDR_STR_SIZE];
	cidr_format(&n->cluster_cidr, pods);
	cidr_format(&n->service_cidr, services);
	/* The safety net first, so that nothing of ours is ever up without it. */
	cleanup_free char *table = net__table(n);
	char *nft[] = {"nft", "-f", "-", NULL};
	if (exec_run(nft, table, 0, err) < 0)
		return -1;
	cleanup_free char *routes = xasprintf("route replace unreachable %s\n"
					      "route replace unreachable %s\n",
					      pods, services);
	if (net__ip(routes, 0, err) < 0)
		return -1;
	if (!net__link_exists(n->bridge)) {
		cleanup_free char *br = xasprintf("link add %s type bridge\n", n->bridge);
		if (net__ip(br, 0, err) < 0)
			return -1;
	}
	cleanup_free char *fwd = xasprintf("/proc/sys/net/ipv4/conf/%s/forwarding", n->bridge);
	if (net__sysctl(fwd, "1", err) < 0 || net__no_ipv6(n->bridge, err) < 0)
		return -1;
	cleanup_free char *addr = xasprintf("addr replace %s/%u dev %s\n"
					    "link set %s up\n",
					    n->gateway, n->pod_cidr.prefix, n->bridge, n->bridge);
	if (net__ip(addr, 0, err) < 0)
		return -1;
	log_info("network: bridge %s %s/%u, unreachable %s and %s, table ip %s", n->bridge,
		 n->gateway, n->pod_cidr.prefix, pods, services, n->table);
	return 0;
}

int net_up(struct net *n, struct error **err)
{
	if (net__up(n, err) < 0) {
		error_prefix(err, "node network");
		return -1;
	}
	return 0;
}

/* Whether another corral bridge than ours is on the machine. */
static bool net__others(const struct net *n)
{
	DIR *d = opendir("/sys/class/net");
	if (!d)
		return true;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, "crl", 3) == 0 && strcmp(de->d_name, n->bridge) != 0)
			found = true;
	}
	closedir(d);
	return found;
}

bool net_down(struct net *n)
{
	struct error *err = NULL;
	cleanup_free char *del = xasprintf("link del %s\n", n->bridge);
	if (net__link_exists(n->bridge) && net__ip(del, 0, &err) < 0) {
		log_warn("network: %s", err->msg);
		error_free(err);
		err = NULL;
	}
	bool last = !net__others(n);
	if (last) {
		char pods[CIDR_STR_SIZE], services[CIDR_STR_SIZE];
		cidr_format(&n->cluster_cidr, pods);
		cidr_format(&n->service_cidr, services);
		cleanup_free char *routes = xasprintf(
		    "route del unreachable %s\nroute del unreachable %s\n", pods, services);
		char *argv[] = {"ip", "-force", "-batch", "-", NULL};
		if (exec_run(argv, routes, 0, &err) < 0) {
			log_debug("network: %s", err->msg);
			error_free(err);
			err = NULL;
		}
	}
	cleanup_free char *table = xasprintf("delete table ip %s\n", n->table);
	char *nft[] = {"nft", "-f", "-", NULL};
	if (exec_run(nft, table, 0, &err) < 0) {
		log_debug("network: %s", err->msg);
		error_free(err);
	}
	return last;
}

void net_veth_name(const char *uid, char out[NET_IFNAME_SIZE])
{
	char h[9];
	net_hash(uid, h);
	snprintf(out, NET_IFNAME_SIZE, "crv%s", h);
}

/* Deletes link name if it is there (a veth of an earlier try). */
static void net__link_drop(struct mnl_socket *nl, const char *name)
{
	struct error *err = NULL;
	if (rtnl_link_del(nl, name, &err) < 0 && err) {
		log_debug("network: %s", err->msg);
		error_free(err);
	}
}

/* The host's end of the pod's veth: made on the bridge, IPv6 turned off
 * on it while it is down (so that it never gets an address, not even a
 * link-local one), then up, with hairpin on. Each request waits for the
 * kernel's rtnl lock, which many pods starting at once contend for: no
 * more of them than that. */
static int net__host_end(struct net *n, struct mnl_socket *nl, const char *veth, pid_t pause,
			 struct error **err)
{
	if (net__link_exists(veth))
		net__link_drop(nl, veth);
	if (rtnl_veth_add(nl, veth, n->bridge, "eth0", pause, err) < 0)
		return -1;
	const struct rtnl_link_change up = {.up = true, .bridge_hairpin = true};
	if (net__no_ipv6(veth, err) < 0 || rtnl_link_set(nl, veth, &up, err) < 0) {
		net__link_drop(nl, veth);
		return -1;
	}
	return 0;
}

/* The pod's end: eth0 (IPv6 is off in the pause's namespace before it
 * exists: the pause turned it off there), its address, up, and the
 * default route through the gateway. */
static int net__pod_end(struct net *n, pid_t pause, const char *ip, struct error **err)
{
	uint32_t addr, gw;
	if (cidr_ip_parse(ip, &addr) < 0 || cidr_ip_parse(n->gateway, &gw) < 0)
		return error_set(err, EINVAL, "%s: not an IPv4 address", ip);
	struct mnl_socket *nl = rtnl_open(pause, err);
	if (!nl)
		return -1;
	const struct rtnl_link_change up = {.up = true};
	int r = 0;
	if (rtnl_addr_add(nl, "eth0", htonl(addr), n->pod_cidr.prefix, err) < 0 ||
	    rtnl_link_set(nl, "eth0", &up, err) < 0 || rtnl_route_default(nl, htonl(gw), err) < 0)
		r = -1;
	rtnl_close(nl);
	return r;
}

/* One pod's network at a time: every step takes the kernel's rtnl lock
 * anyway, and the disable_ipv6 write does not wait for it but retries
 * the system call at once (addrconf_sysctl_disable()'s rtnl_trylock), so
 * pod workers in step would spin, on a CPU the lock's holder needs. */
int net_pod_up(struct net *n, const char *uid, pid_t pause, const char *ip, struct error **err)
{
	char veth[NET_IFNAME_SIZE];
	net_veth_name(uid, veth);
	struct mnl_socket *nl = rtnl_open(0, err);
	if (!nl)
		return -1;
	pthread_mutex_lock(&n->pod_lock);
	int r = net__host_end(n, nl, veth, pause, err);
	if (r == 0 && net__pod_end(n, pause, ip, err) < 0) {
		net__link_drop(nl, veth);
		r = -1;
	}
	pthread_mutex_unlock(&n->pod_lock);
	rtnl_close(nl);
	if (r < 0)
		error_prefix(err, "pod network (%s on %s)", ip, n->bridge);
	return r;
}

void net_pod_down(struct net *n, const char *uid)
{
	(void)n;
	char veth[NET_IFNAME_SIZE];
	net_veth_name(uid, veth);
	if (!net__link_exists(veth))
		return;
	struct error *err = NULL;
	struct mnl_socket *nl = rtnl_open(0, &err);
	if (!nl) {
		log_warn("network: %s", err->msg);
		error_free(err);
		return;
	}
	net__link_drop(nl, veth);
	rtnl_close(nl);
}
