/* net.h: a node's network on the host, and each pod's place on it
 * (DESIGN.md, "Nodes and pods" and "Networking rules for tests").
 *
 * A node has a bridge of its own, crl<hash of the node name>, holding the
 * gateway address of its podCIDR; forwarding is turned on for that bridge
 * alone (net.ipv4.conf.<bridge>.forwarding), never machine-wide. The pod and
 * service ranges get unreachable routes (the bridges' own routes are more
 * specific), so that nothing addressed into them leaves the machine, and an
 * nftables table of the node's, ip corral_<bridge>, drops whatever a pod
 * sends to be forwarded outside the pod range, and whatever would be
 * forwarded to a pod from outside it.
 *
 * A pod is a veth pair: crv<hash of the pod's uid> on the bridge, eth0 in the
 * pause's network namespace with the pod's address and a default route
 * through the gateway.
 *
 * The node's part is made with ip(8) and nft(8), a pod's veth with
 * rtnetlink (rtnl.h), and everything is undone by net_down(): the
 * table and the bridge (which takes its veths with it), and the unreachable
 * routes when no other corral bridge is left on the machine. */
#ifndef CORRAL_NODED_NET_H
#define CORRAL_NODED_NET_H

#include <stdbool.h>
#include <sys/types.h>

#include "cidr.h"
#include "error.h"

#define NET_IFNAME_SIZE 16

struct net_opts {
	const char *node;	  /* the node's name */
	struct cidr pod_cidr;	  /* this node's */
	struct cidr cluster_cidr; /* every node's pods */
	struct cidr service_cidr; /* ClusterIPs */
};

struct net;

struct net *net_new(const struct net_opts *o);
void net_free(struct net *n);

/* Makes (or takes over, after a restart) the bridge, routes and table. */
int net_up(struct net *n, struct error **err);
/* Removes them; true when no other corral bridge is left on the host
 * (the unreachable routes went too). */
bool net_down(struct net *n);

const char *net_bridge(const struct net *n);
/* "10.244.0.1" */
const char *net_gateway(const struct net *n);

/* The host end's name of the pod with this uid. */
void net_veth_name(const char *uid, char out[NET_IFNAME_SIZE]);
/* Gives the pod whose pause is pid its veth and address ("10.244.0.5");
 * corral-pause has turned IPv6 off in its namespace. Pod workers call it
 * at once; it makes one pod's network at a time. */
int net_pod_up(struct net *n, const char *uid, pid_t pause, const char *ip, struct error **err);
/* Removes the pod's veth if it is still there (the pause's death removes
 * it too). */
void net_pod_down(struct net *n, const char *uid);

/* The interface names' hash: FNV-1a, 8 hex digits. */
void net_hash(const char *s, char out[9]);

#endif
