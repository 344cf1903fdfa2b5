/* watch.h: keeping the zone in step with the mount.
 *
 * Informers on services and endpoints (namespaced; new namespaces are
 * followed) re-index one service on any change to it or to its endpoints,
 * inside the event's callback: an answer changes as soon as the loop has
 * read the inotify event of the file's close. With kube-dns registration,
 * an informer on nodes rewrites kube-dns's endpoints when a node's podCIDR
 * comes or goes. */
#ifndef CORRAL_DNS_WATCH_H
#define CORRAL_DNS_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "loop.h"
#include "metrics.h"
#include "zone.h"

struct watch;

struct watch_config {
	const char *mount;
	uint64_t resync_ms;
	bool register_service; /* write kube-dns's Service and Endpoints */
	const char *cluster_ip;
	int port;
};

struct watch *watch_new(struct loop *loop, const struct watch_config *cfg, struct zone *zone,
			struct metrics *metrics);
/* Registers kube-dns (if asked), then lists everything into the zone. */
int watch_start(struct watch *w, struct error **err);
void watch_free(struct watch *w);

#endif
