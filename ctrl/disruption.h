/* disruption.h: the disruption controller (row "disruption") and
 * evictions, as Kubernetes' pkg/controller/disruption and the pods/eviction
 * subresource.
 *
 * The controller keeps each PodDisruptionBudget's status: expectedPods,
 * desiredHealthy, currentHealthy (the pods its selector matches in its
 * namespace that are Ready and not being deleted, less those evicted and
 * not yet gone), disruptionsAllowed, observedGeneration, disruptedPods and
 * the DisruptionAllowed condition (SufficientPods, InsufficientPods, or
 * SyncFailed with why). minAvailable as an integer wants that many of the
 * matched pods; as a percentage, and maxUnavailable either way, they are
 * of the pods' controllers' replicas (a ReplicaSet's, its Deployment's
 * when it has one, a ReplicationController's, a StatefulSet's), rounded
 * up.
 *
 * An eviction is corral's POST of an Eviction: a drop box document
 *   apiVersion: policy/v1
 *   kind: Eviction
 *   metadata: {name: POD, namespace: NS}
 * that the drop box controller (dropbox.h) hands to disruption_evict()
 * instead of filing it. It deletes the pod if no budget covers it, or the
 * pod is not running, or its one budget allows a disruption; then it first
 * takes one from the budget (disruptionsAllowed - 1, the pod in
 * disruptedPods) by a write that carries the budget's resourceVersion, so
 * that of two evictions racing for the last disruption one sees the
 * other's write and is refused. A refusal is Kubernetes' 429: "Cannot
 * evict pod as it would violate the pod's disruption budget." (EBUSY), and
 * is reported as the drop box reports one (a FailedApply Warning event). */
#ifndef CORRAL_CTRL_DISRUPTION_H
#define CORRAL_CTRL_DISRUPTION_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "ynode.h"

#define DISRUPTION_VIOLATION	      "Cannot evict pod as it would violate the pod's disruption budget."
#define DISRUPTION_DELETION_TIMEOUT_S 120 /* an evicted pod not gone by then counts again */
#define DISRUPTION_MAX_DISRUPTED      2000

struct ctrl;
struct disruption;

/* What a budget's spec asks of pods. */
struct disruption_budget {
	long long expected; /* expectedPods */
	long long desired;  /* desiredHealthy */
};

/* Whether spec needs the controllers' scale (maxUnavailable, or
 * minAvailable as a percentage). */
bool disruption_needs_scale(const struct ynode *spec);
/* expectedPods and desiredHealthy for spec, npods matched, scale the sum
 * of their controllers' replicas (when disruption_needs_scale()). EINVAL
 * for a value that is neither an integer nor a percentage. Pure. */
int disruption_budget(const struct ynode *spec, long long npods, long long scale,
		      struct disruption_budget *out, struct error **err);
/* disruptionsAllowed: current - desired, 0 when that or expected is not
 * positive. */
long long disruption_allowed(long long current, long long desired, long long expected);

/* What one sync found, for the status. */
struct disruption_calc {
	char *failure;		    /* NULL, or why it could not compute (SyncFailed) */
	struct disruption_budget b; /* when no failure */
	struct ynode *healthy;	    /* seq: names of the Ready pods not being deleted */
	struct ynode *present;	    /* seq: names of the pods not being deleted */
	long long generation;	    /* the budget's metadata.generation */
};
void disruption_calc_free(struct disruption_calc *k);
/* The status a budget whose status is old (may be NULL) gets from k at
 * now (seconds): disruptedPods kept for the pods still present, not
 * longer than DISRUPTION_DELETION_TIMEOUT_S; new. Pure. */
struct ynode *disruption_status(const struct ynode *old, const struct disruption_calc *k,
				int64_t now);

/* The eviction of pod ns/name through the mount, on any thread (a
 * writer's worker): 0 once the pod is deleted (or was gone or going
 * already: ENOENT when it never was), or the refusal. */
int disruption_evict(const char *mount, const char *ns, const char *name, struct error **err);

struct disruption *disruption_new(struct ctrl *c);
void disruption_free(struct disruption *d);

#endif
