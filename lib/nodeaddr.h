/* nodeaddr.h: where a node's agent serves its logs and exec to other
 * hosts (corral-noded(8)), as its Node object reports it: the InternalIP
 * of status.addresses and status.daemonEndpoints.kubeletEndpoint.Port.
 * Read by corral-fs (logs of pods on other hosts) and corral-exec(8). */
#ifndef CORRAL_NODEADDR_H
#define CORRAL_NODEADDR_H

#include "ynode.h"

/* "https://<InternalIP>:<Port>" of a Node object, or NULL when it reports
 * no address or no port. Pure. */
char *nodeaddr_kubelet_base(const struct ynode *node);

#endif
