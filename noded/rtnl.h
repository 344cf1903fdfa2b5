/* rtnl.h: the few rtnetlink requests a pod's network takes (a veth pair
 * with one end in the pause's namespace, the end on the bridge brought up,
 * the pod's address and default route), made by the agent itself: two runs
 * of ip(8) per pod cost more than the rest of a pod's setup when many pods
 * start at once (issue 17).
 *
 * Each call sends one request and waits for the kernel's answer; a refusal
 * comes back as the kernel's errno. Sockets are the caller's; one socket
 * serves one thread at a time. Nothing here ever touches a link it was not
 * named. */
#ifndef CORRAL_NODED_RTNL_H
#define CORRAL_NODED_RTNL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct mnl_socket;

/* A route socket (libmnl's) in the network namespace of process pid (0:
 * the caller's), or NULL; rtnl_close() it. The calling thread enters that
 * namespace for the socket() alone. */
struct mnl_socket *rtnl_open(pid_t pid, struct error **err);
void rtnl_close(struct mnl_socket *nl); /* NULL is fine */

/* The veth pair name (down, a port of master) and peer, moved into the
 * network namespace of process peer_ns. */
int rtnl_veth_add(struct mnl_socket *nl, const char *name, const char *master, const char *peer,
		  pid_t peer_ns, struct error **err);

struct rtnl_link_change {
	bool up;	     /* bring it up */
	bool bridge_hairpin; /* a bridge port: hairpin on */
};

int rtnl_link_set(struct mnl_socket *nl, const char *name, const struct rtnl_link_change *c,
		  struct error **err);
/* -ENODEV (and err unset) when there is no such link. */
int rtnl_link_del(struct mnl_socket *nl, const char *name, struct error **err);
/* IPv4 address addr/prefix (network byte order) on link dev. */
int rtnl_addr_add(struct mnl_socket *nl, const char *dev, uint32_t addr, unsigned prefix,
		  struct error **err);
/* The IPv4 default route through gateway (network byte order). */
int rtnl_route_default(struct mnl_socket *nl, uint32_t gateway, struct error **err);

#endif
