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

void nodeaddr_curl_tls(CURL *c, const char *ca_file, const char *cert_file, const char *key_file)
{
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
	curl_easy_setopt(c, CURLOPT_SSLCERT, cert_file);
	curl_easy_setopt(c, CURLOPT_SSLKEY, key_file);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
}
