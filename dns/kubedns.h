/* kubedns.h: the kube-dns Service and its Endpoints, through which pods
 * reach corral-dns (nameserver 10.96.0.10 port 53 in their resolv.conf,
 * carried to this host's port by the service proxy).
 *
 * The Service has no selector, so the endpoints controller leaves its
 * Endpoints alone (as in Kubernetes) and corral-dns writes them itself:
 * the gateway address of every node's podCIDR (network + 1, an address of
 * this host on the node's bridge), ports dns/UDP and dns-tcp/TCP at the
 * port corral-dns listens on. Writes go through the mount as a person's
 * would, on the loop's thread: they are rare (start, a node's podCIDR). */
#ifndef CORRAL_DNS_KUBEDNS_H
#define CORRAL_DNS_KUBEDNS_H

#include <stdint.h>

#include "error.h"
#include "informer.h"
#include "ynode.h"

#define KUBEDNS_NAMESPACE "kube-system"
#define KUBEDNS_NAME	  "kube-dns"

/* Creates namespaces/kube-system/services/kube-dns.yaml unless it exists
 * (an existing one is left as it is). */
int kubedns_ensure_service(const char *mount, const char *cluster_ip, int port, struct error **err);

/* The Endpoints object for the nodes' gateways (nodes: an informer of
 * nodes), as it should be. */
struct ynode *kubedns_endpoints(const struct informer *nodes, int port);
/* Writes the endpoints when they differ from current (may be NULL). */
int kubedns_sync_endpoints(const char *mount, const struct informer *nodes, int port,
			   const struct ynode *current, struct error **err);

/* "10.244.0.0/24" -> "10.244.0.1" (out: 16 bytes); -1 if no IPv4 CIDR
 * with room for a gateway. */
int kubedns_gateway(const char *cidr, char *out);

#endif
