/* nodeaddr.h: where and how a node's agent serves its logs and exec to
 * other hosts (corral-noded(8)): the address its Node object reports (the
 * InternalIP of status.addresses and
 * status.daemonEndpoints.kubeletEndpoint.Port), reached over mutual TLS
 * with the cluster CA. Used by corral-fs (logs of pods on other hosts) and
 * corral-exec(8). */
#ifndef CORRAL_NODEADDR_H
#define CORRAL_NODEADDR_H

#include <curl/curl.h>

#include "ynode.h"

/* "https://<InternalIP>:<Port>" of a Node object, or NULL when it reports
 * no address or no port. Pure. */
char *nodeaddr_kubelet_base(const struct ynode *node);

/* Sets up c for a node's server: HTTPS only, the peer checked against
 * ca_file (certificate and name), cert_file and key_file shown as ours, no
 * signals (libcurl's time-outs then need no SIGALRM). */
void nodeaddr_curl_tls(CURL *c, const char *ca_file, const char *cert_file, const char *key_file);

#endif
