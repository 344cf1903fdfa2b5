/* nodeaddr.c: see nodeaddr.h. */
#include "nodeaddr.h"
#include "util.h"

#include <string.h>

char *nodeaddr_kubelet_base(const struct ynode *node)
{
	const struct ynode *addrs = ynode_path(node, "status.addresses");
	const char *ip = NULL;
	for (size_t i = 0; addrs && addrs->type == YNODE_SEQ && i < addrs->n && !ip; i++) {
		const char *t = ynode_path_str(ynode_item(addrs, i), "type");
		if (t && strcmp(t, "InternalIP") == 0)
			ip = ynode_path_str(ynode_item(addrs, i), "address");
	}
	long long port = 0;
	if (!ip || !*ip || strlen(ip) > 45 || strpbrk(ip, "/?#@ ") ||
	    ynode_int(ynode_path(node, "status.daemonEndpoints.kubeletEndpoint.Port"), &port) < 0 ||
	    port <= 0 || port > 65535)
		return NULL;
	return strchr(ip, ':') ? xasprintf("https://[%s]:%lld", ip, port)
			       : xasprintf("https://%s:%lld", ip, port);
}
