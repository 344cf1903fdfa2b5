/* quotacalc.h: ResourceQuota arithmetic, as Kubernetes' quota evaluators
 * compute it, shared by corral-fs's admission (fs/quota.c) and
 * corral-ctrl's resourcequota controller (ctrl/resourcequota.c) so that
 * status.used is what admission counts:
 *
 *   - what an object charges (quotacalc_usage()): count/<plural>[.<group>]
 *     for every object; pods, requests.cpu, requests.memory, limits.cpu,
 *     limits.memory, cpu, memory (and ephemeral-storage, hugepages-*,
 *     extended requests.*) for a pod that is not terminal (containers
 *     summed, at least any init container, plus overhead); services,
 *     services.nodeports, services.loadbalancers; persistentvolumeclaims,
 *     requests.storage and <class>.storageclass.storage.k8s.io/
 *     {requests.storage,persistentvolumeclaims}; configmaps, secrets,
 *     replicationcontrollers, resourcequotas;
 *   - which objects a quota's scopes select (BestEffort, NotBestEffort,
 *     Terminating, NotTerminating, PriorityClass, CrossNamespacePodAffinity,
 *     and scopeSelector with In, NotIn, Exists, DoesNotExist): pods only,
 *     when it has any;
 *   - a pod's constraints: a quota on cpu or memory requires every
 *     container to request (or limit) it. */
#ifndef CORRAL_QUOTACALC_H
#define CORRAL_QUOTACALC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kinds.h"
#include "quantity.h"
#include "ynode.h"

/* A resource list: names sorted, each amount in milli-units with the
 * format Kubernetes would print it in. */
struct quotacalc_amount {
	char *name;
	int64_t milli;
	enum quantity_fmt fmt;
};
struct quotacalc_list {
	struct quotacalc_amount *v;
	size_t n, cap;
};

void quotacalc_list_clear(struct quotacalc_list *l);
/* The amount of name, or NULL. */
const struct quotacalc_amount *quotacalc_list_find(const struct quotacalc_list *l,
						   const char *name);
/* Adds milli to name (created at 0 in format fmt when absent). */
void quotacalc_list_add(struct quotacalc_list *l, const char *name, int64_t milli,
			enum quantity_fmt fmt);
/* Reads a ResourceList mapping ({cpu: 500m}) into l (added). Entries
 * that do not parse are skipped (validation refused them already). */
void quotacalc_list_read(struct quotacalc_list *l, const struct ynode *map);
/* "a=1,b=2Gi" (Kubernetes' prettyPrint: names sorted). Malloc'd. */
char *quotacalc_list_format(const struct quotacalc_list *l);

/* A pod's requests and limits (added to req and lim), as Kubernetes'
 * PodRequests: the sum of its containers, at least any one init
 * container, plus spec.overhead when overhead. */
void quotacalc_pod_resources(const struct ynode *pod, bool overhead, struct quotacalc_list *req,
			     struct quotacalc_list *lim);
/* What obj (of kind k) charges to a quota of its namespace. */
void quotacalc_usage(const struct kind_info *k, const struct ynode *obj,
		     struct quotacalc_list *out);
/* Whether the ResourceQuota rq's scopes select obj (every object when it
 * has none; only pods when it has some). */
bool quotacalc_matches(const struct ynode *rq, const struct kind_info *k, const struct ynode *obj);
/* Kubernetes' pod evaluator's Constraints: every container must request
 * (or limit) each of cpu, memory, requests.*, limits.* that hard names.
 * 0, or -EACCES with "must specify limits.cpu for: a,b; ..." in *err. */
int quotacalc_pod_constraints(const struct quotacalc_list *hard, const struct ynode *pod,
			      struct error **err);
/* The amount of name, 0 when absent. */
int64_t quotacalc_list_get(const struct quotacalc_list *l, const char *name);

/* What a quota's scopes look at, of one object (quotacalc_facts_of()). */
struct quotacalc_facts {
	bool pod;
	bool best_effort;
	bool terminating;
	bool cross_ns_affinity;
	char *priority_class; /* NULL or "" when none */
};

void quotacalc_facts_of(const struct kind_info *k, const struct ynode *obj,
			struct quotacalc_facts *f);
void quotacalc_facts_clear(struct quotacalc_facts *f);
/* Whether the ResourceQuota rq selects an object with facts f. */
bool quotacalc_selects(const struct ynode *rq, const struct quotacalc_facts *f);
/* Whether an object of kind k can charge resource (a name of spec.hard):
 * which kinds a quota's sums look at. */
bool quotacalc_kind_charges(const struct kind_info *k, const char *resource);

#endif
