/* filter.h: the filters, which decide whether a pod may go on a node, and
 * the diagnosis that says why none would take it.
 *
 * In the order they run (a node is rejected by the first filter that
 * fails, as in kube-scheduler's default profile), with the reason each one
 * gives, word for word Kubernetes':
 *
 *   unschedulable   spec.unschedulable (cordon), unless the pod tolerates
 *                   node.kubernetes.io/unschedulable:NoSchedule
 *                   "node(s) were unschedulable"
 *   taints          NoSchedule and NoExecute taints the pod does not
 *                   tolerate; a node whose Ready condition is not True
 *                   counts as tainted node.kubernetes.io/not-ready (or
 *                   unreachable, when Unknown) with effect NoSchedule, as
 *                   Kubernetes' node lifecycle controller taints it
 *                   "node(s) had untolerated taint {KEY: VALUE}"
 *   node affinity   spec.nodeSelector and required node affinity
 *                   "node(s) didn't match Pod's node affinity/selector"
 *   host ports      "node(s) didn't have free ports for the requested pod ports"
 *   resources       "Too many pods", "Insufficient cpu", "Insufficient memory",
 *                   "Insufficient ephemeral-storage", "Insufficient NAME"
 *   volumes         the nodeAffinity of the volumes the pod's claims are
 *                   bound to (volumes.c works them out before the decision)
 *                   "node(s) had volume node affinity conflict"
 *   pod affinity    "node(s) didn't match pod affinity rules",
 *                   "node(s) didn't match pod anti-affinity rules",
 *                   "node(s) didn't satisfy existing pods anti-affinity rules"
 *
 * Every filter takes a diagnosis (may be NULL: a decision that found a node
 * never needs the reasons) and adds the reasons it rejects a node for. */
#ifndef CORRAL_SCHED_FILTER_H
#define CORRAL_SCHED_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "cache.h"
#include "objects.h"

#define SCHED_TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"
#define SCHED_TAINT_NOT_READY	  "node.kubernetes.io/not-ready"
#define SCHED_TAINT_UNREACHABLE	  "node.kubernetes.io/unreachable"

#define SCHED_REASON_UNSCHEDULABLE     "node(s) were unschedulable"
#define SCHED_REASON_NODE_AFFINITY     "node(s) didn't match Pod's node affinity/selector"
#define SCHED_REASON_PORTS	       "node(s) didn't have free ports for the requested pod ports"
#define SCHED_REASON_TOO_MANY_PODS     "Too many pods"
#define SCHED_REASON_POD_AFFINITY      "node(s) didn't match pod affinity rules"
#define SCHED_REASON_POD_ANTI_AFFINITY "node(s) didn't match pod anti-affinity rules"
#define SCHED_REASON_EXISTING_ANTI_AFFINITY                                                        \
	"node(s) didn't satisfy existing pods anti-affinity rules"
#define SCHED_REASON_VOLUME_NODE_CONFLICT "node(s) had volume node affinity conflict"
#define SCHED_NO_NODES			  "no nodes available to schedule pods"

/* How many nodes rejected the pod for each reason. */
struct sched_diag;
struct sched_diag *sched_diag_new(void);
void sched_diag_free(struct sched_diag *d);
void sched_diag_add(struct sched_diag *d, const char *reason);
size_t sched_diag_count(const struct sched_diag *d, const char *reason);
/* Kubernetes' FitError text: "0/N nodes are available: " then "COUNT
 * reason" for each reason, sorted as strings, joined by ", ", then ".".
 * malloc'd. */
char *sched_diag_message(const struct sched_diag *d, size_t nnodes);

/* What one decision works out once before the filters run over the nodes
 * (kube-scheduler's PreFilter): the topology domains that the pod's
 * required (anti-)affinity and the existing pods' anti-affinity allow or
 * forbid. */
struct sched_cycle;
struct sched_cycle *sched_cycle_new(const struct sched_cache *c, const struct sched_pod *p);
void sched_cycle_free(struct sched_cycle *cy);

/* Every filter in order; true if the pod may go on the node. */
bool sched_filter_node(const struct sched_cycle *cy, const struct sched_node *n,
		       struct sched_diag *d);

bool sched_filter_unschedulable(const struct sched_pod *p, const struct sched_node *n,
				struct sched_diag *d);
bool sched_filter_taints(const struct sched_pod *p, const struct sched_node *n,
			 struct sched_diag *d);
bool sched_filter_node_affinity(const struct sched_pod *p, const struct sched_node *n,
				struct sched_diag *d);
bool sched_filter_ports(const struct sched_pod *p, const struct sched_node *n,
			struct sched_diag *d);
bool sched_filter_resources(const struct sched_pod *p, const struct sched_node *n,
			    struct sched_diag *d);
bool sched_filter_volumes(const struct sched_pod *p, const struct sched_node *n,
			  struct sched_diag *d);
bool sched_filter_pod_affinity(const struct sched_cycle *cy, const struct sched_node *n,
			       struct sched_diag *d);

/* Whether the tolerations tolerate the taint (Kubernetes' ToleratesTaint). */
bool sched_tolerates(const struct sched_toleration *tols, size_t ntols, const char *key,
		     const char *value, enum sched_effect effect);
/* Whether a node selector term matches a node's labels and name. */
bool sched_node_term_matches(const struct sched_node_term *t, const struct ynode *labels,
			     const char *name);

#endif
