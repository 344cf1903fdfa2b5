/* cache.h: the scheduler's view of the cluster: every node, and on each
 * node the pods that hold its resources, with their sums kept up to date.
 *
 * A pod holds a node's resources from the moment the scheduler decides to
 * put it there (assumed) until it is gone, terminated or seen bound
 * elsewhere. Assuming at once is what keeps a burst of pods from all
 * landing on the node that looked emptiest: the next decision already sees
 * the last one, long before the binding is written and read back. A bound
 * pod read from the mount replaces the assumed one (same key); a failed
 * binding is forgotten, which is a no-op once the pod was seen bound.
 *
 * Pods bound to a node that is not (or no longer) known are kept on a
 * placeholder, so that the node comes back with them counted. Single
 * thread: the loop's. */
#ifndef CORRAL_SCHED_CACHE_H
#define CORRAL_SCHED_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "objects.h"
#include "strmap.h"

struct sched_cache;

struct sched_node {
	char *name;
	struct sched_nodeinfo *info; /* NULL: a placeholder for pods only */
	size_t idx;		     /* in the list of known nodes, while info */
	struct sched_res requested;  /* the sum of its pods' requests */
	int64_t nz_cpu, nz_mem;	     /* the same with the scoring defaults */
	struct sched_pod **pods;     /* the pods it holds, in no order */
	size_t npods, cap;
	size_t nports;	       /* of those, pods with host ports */
	struct strmap *owners; /* controller uid -> pods (uintptr_t) */
};

struct sched_cache *sched_cache_new(void);
void sched_cache_free(struct sched_cache *c);

/* Adds or updates a node, taking info. Returns true when the node is new or
 * changed in something the scheduler looks at. */
bool sched_cache_set_node(struct sched_cache *c, struct sched_nodeinfo *info);
/* Returns true if the node was known. */
bool sched_cache_remove_node(struct sched_cache *c, const char *name);
/* The known nodes (placeholders excluded), by index. */
size_t sched_cache_node_count(const struct sched_cache *c);
struct sched_node *sched_cache_node_at(const struct sched_cache *c, size_t i);
/* A node by name, placeholders included; NULL if none. */
struct sched_node *sched_cache_node(const struct sched_cache *c, const char *name);

/* Adds a pod that is bound (p->node_name set), taking p; it replaces any
 * pod with the same key, assumed or not. A terminal pod is not added (and
 * frees nothing but itself): it holds nothing. */
void sched_cache_add_pod(struct sched_cache *c, struct sched_pod *p);
/* Assumes p (unbound) on node, taking p; p->node_name stays NULL (p may be
 * the informer's item too), p->node says where it is. */
void sched_cache_assume(struct sched_cache *c, struct sched_pod *p, const char *node);
/* Drops the pod of key if it is still only assumed; returns true if it
 * dropped one. */
bool sched_cache_forget(struct sched_cache *c, const char *key);
/* Drops the pod of key whatever it is; returns true if there was one. */
bool sched_cache_remove_pod(struct sched_cache *c, const char *key);
const struct sched_pod *sched_cache_pod(const struct sched_cache *c, const char *key);
size_t sched_cache_pod_count(const struct sched_cache *c);

/* The pods in the cache with required anti-affinity terms (their terms can
 * keep another pod off a node). */
size_t sched_cache_anti_count(const struct sched_cache *c);
const struct sched_pod *sched_cache_anti_at(const struct sched_cache *c, size_t i);

/* How many of node's pods belong to the controller of pod p. */
size_t sched_node_owner_pods(const struct sched_node *n, const struct sched_pod *p);

#endif
