/* hostgw.h: pods of other hosts reached over the hosts' own network, as
 * flannel's host-gw backend does (see corral-noded(8), NETWORK).
 *
 * Every other node whose podCIDR is a slice of the cluster range, whose
 * InternalIP is not an address of this host and lies on a subnet this host
 * is directly connected to, gets a route on this host:
 *
 *   <podCIDR> via <InternalIP> proto 204
 *
 * more specific than the cluster range's unreachable route. Nodes of this
 * host (their InternalIP is ours) need none: their bridges are here.
 *
 * What a host wants depends only on the nodes and the host's addresses, not
 * on which of its agents looks: several agents on one host want the same
 * routes, replace them idempotently, and remove only what none of them
 * wants. Routes are told from everyone else's by their protocol (204) and
 * their place (a slice of the cluster range, never the range itself).
 *
 * It must never route anything off the cluster's own addresses: no route
 * for a range outside the cluster range, none through a next hop that is
 * not on a connected subnet of the host, or that is itself inside the pod
 * or service range. */
#ifndef CORRAL_NODED_HOSTGW_H
#define CORRAL_NODED_HOSTGW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cidr.h"
#include "error.h"
#include "loop.h"

#define HOSTGW_PROTO	   204	 /* rtnetlink protocol of our routes (ip route ... proto 204) */
#define HOSTGW_DEBOUNCE_MS 20	 /* node changes within this share one reconcile */
#define HOSTGW_RESYNC_MS   30000 /* routes checked again (someone may have removed one) */
#define HOSTGW_IFNAME_SIZE 16

/* An IPv4 address of this host and the subnet it is on. */
struct hostgw_addr {
	uint32_t ip;
	unsigned prefix;
	char dev[HOSTGW_IFNAME_SIZE];
};

/* What the decision looks at on this host. */
struct hostgw_host {
	struct cidr cluster; /* every podCIDR's range */
	struct cidr service; /* ClusterIPs: never a next hop */
	const struct hostgw_addr *addrs;
	size_t n_addrs;
};

struct hostgw_route {
	struct cidr dst; /* a node's podCIDR */
	uint32_t via;	 /* its InternalIP */
};

enum hostgw_verdict {
	HOSTGW_ROUTE,	    /* another host's node: a route */
	HOSTGW_LOCAL,	    /* a node of this host: its bridge is here */
	HOSTGW_NO_CIDR,	    /* no (parseable) podCIDR yet */
	HOSTGW_OUTSIDE,	    /* podCIDR not a slice of the cluster range */
	HOSTGW_NO_IP,	    /* no (parseable) InternalIP */
	HOSTGW_BAD_HOP,	    /* InternalIP in the pod or service range, or not unicast */
	HOSTGW_UNCONNECTED, /* InternalIP on no subnet of this host */
	HOSTGW_OVERLAP,	    /* podCIDR overlaps a local node's or another route's */
};

/* One node: pod_cidr (spec.podCIDR) and internal_ip (its InternalIP
 * address), either may be NULL. *route is set for HOSTGW_ROUTE, and
 * route->dst for HOSTGW_LOCAL too (with a podCIDR inside the range). Pure. */
enum hostgw_verdict hostgw_decide(const struct hostgw_host *h, const char *pod_cidr,
				  const char *internal_ip, struct hostgw_route *route);
const char *hostgw_verdict_str(enum hostgw_verdict v);

/* A node as the planner sees it. */
struct hostgw_node {
	const char *name;
	const char *pod_cidr;
	const char *internal_ip;
	enum hostgw_verdict verdict; /* set by hostgw_plan() */
};

/* The routes this host wants for nodes[0..n): hostgw_decide() for each,
 * then every route whose podCIDR overlaps a local node's or another
 * route's is dropped (HOSTGW_OVERLAP: two nodes claiming one range reach
 * neither). Routes in *out (malloc'd, sorted by destination), their
 * number returned. Pure. */
size_t hostgw_plan(const struct hostgw_host *h, struct hostgw_node *nodes, size_t n,
		   struct hostgw_route **out);

/* One line of `ip -4 route show proto 204` ("10.244.2.0/24 via 10.77.0.2
 * dev eth0 ..."): 0 with *r, -1 for any other line. */
int hostgw_parse_route(const char *line, struct hostgw_route *r);

/* Whether a route of ours is one hostgw may remove: a slice of the
 * cluster range, never the range (its unreachable route) itself. */
bool hostgw_owned(const struct cidr *cluster, const struct cidr *dst);

/* What turns the routes installed (have, as read back) into those wanted:
 * ip(8) batch lines, "route replace ... proto 204" for each wanted route
 * not installed as it is, "route del ... proto 204" for each owned route
 * that is wanted no more. NULL when nothing is to change. Pure. */
char *hostgw_changes(const struct cidr *cluster, const struct hostgw_route *have, size_t n_have,
		     const struct hostgw_route *want, size_t n_want);

/* The running part: an informer on nodes/, a debounce and a resync timer. */
struct hostgw;

struct hostgw_opts {
	const char *mount;
	const char *node; /* this agent's node: for its log only */
	struct cidr cluster_cidr;
	struct cidr service_cidr;
};

struct hostgw *hostgw_new(struct loop *loop, const struct hostgw_opts *o);
/* Lists the nodes, installs the routes, then follows nodes/. */
int hostgw_start(struct hostgw *g, struct error **err);
/* Reconciles now. */
int hostgw_sync(struct hostgw *g, struct error **err);
/* Removes every route of ours in the cluster range (when the last agent of
 * the host goes). */
void hostgw_remove_all(const struct cidr *cluster);
void hostgw_free(struct hostgw *g);

#endif
