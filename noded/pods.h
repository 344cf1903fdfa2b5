/* pods.h: the pods of this node. Watches every pod (lib's informer on
 * "pods"), keeps those whose spec.nodeName is this node, gives each an
 * address from the node's podCIDR, has the runtime run it, and writes its
 * status back through the mount (read, change status, write back with the
 * resourceVersion read; a conflict is read and tried again). A pod that goes
 * away, or is replaced by another of the same name, has its runtime state
 * removed and its address given back.
 *
 * After a restart the addresses pods already show in their status are taken
 * back before any new one is handed out, so that a pod keeps its IP. */
#ifndef CORRAL_NODED_PODS_H
#define CORRAL_NODED_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cidr.h"
#include "error.h"
#include "loop.h"
#include "runtime.h"
#include "ynode.h"

struct pods_opts {
	const char *mount;
	const char *node_name;
	const struct cidr *pod_cidr; /* NULL: pods get no address */
	const char *host_ip;	     /* status.hostIP */
	uint64_t resync_ms;	     /* re-sync every pod of ours; 0: never */
	bool follow_config;	     /* re-sync a namespace's pods when its
				      * ConfigMaps or Secrets change */
};

struct pods;

/* rt stays the caller's and must outlive the pods. */
struct pods *pods_new(struct loop *loop, const struct pods_opts *o, struct runtime *rt);
void pods_free(struct pods *p);
void pods_freep(struct pods **p);
#define cleanup_pods __attribute__((cleanup(pods_freep)))

/* Lists the pods (taking back their addresses) and follows the mount. */
int pods_start(struct pods *p, struct error **err);
/* Pods of this node being run. */
size_t pods_count(const struct pods *p);
/* Calls cb for every pod bound to this node (key "ns/name") until it
 * returns non-zero; cb must not change the cache. */
int pods_foreach(const struct pods *p,
		 int (*cb)(void *data, const char *key, const struct ynode *pod), void *data);

/* A pod from one of this node's own sources (static.h) under key
 * ("ns/name"): run as if bound here (pod is taken; NULL: it is gone and
 * stops). Its status is shown by a mirror pod in the mount, the same pod
 * with the annotation kubernetes.io/config.mirror (its config.hash), made
 * when missing and again when deleted: deleting the mirror does not stop
 * the pod, and a mirror whose static pod is gone is deleted. Mirror pods
 * are never run from the mount. */
void pods_static_set(struct pods *p, const char *key, struct ynode *pod);

#endif
