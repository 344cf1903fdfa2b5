/* replicaset.h: the ReplicaSet and ReplicationController controllers
 * (Kubernetes' replicaset and replicationcontroller controllers).
 *
 * Each keeps spec.replicas pods that its selector matches: it adopts
 * matching pods that no controller owns, releases its pods whose labels
 * stop matching, creates pods from the template named <name>-<5 random
 * characters> with an ownerReference (controller: true), and deletes
 * unscheduled, then pending, then not-ready, then the newest pods first.
 * It writes status.replicas, fullyLabeledReplicas, readyReplicas,
 * availableReplicas (ready for minReadySeconds) and observedGeneration.
 *
 * Creates go in batches that double while they succeed (1, 2, 4, ...), as
 * Kubernetes' slow start, and never more than burst-replicas per sync. */
#ifndef CORRAL_CTRL_REPLICASET_H
#define CORRAL_CTRL_REPLICASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adopt.h"
#include "selector.h"
#include "ynode.h"

struct ctrl;
struct rsc;

/* rc: the ReplicationController flavour (v1, equality selector). */
struct rsc *rsc_new(struct ctrl *c, bool rc);
void rsc_free(struct rsc *r);

/* Decision logic, pure, for the tests. */

/* A pod of the set, with what ranks it for deletion. */
struct rsc_pod {
	const char *name; /* the pod's name; ties go by it */
	const struct ynode *obj;
	bool assigned; /* spec.nodeName set */
	int phase;     /* Pending 0, Unknown 1, Running 2 */
	bool ready;
	int64_t ready_since; /* -1: unknown */
	long long cost;	     /* controller.kubernetes.io/pod-deletion-cost */
	int colocated;	     /* pods of the set on the same node */
	long long restarts;  /* most restarts of one container */
	int64_t created;     /* -1: unknown */
};

/* Fills p from a pod. */
void rsc_pod_init(struct rsc_pod *p, const char *name, const struct ynode *pod);
/* Counts, for each pod, the pods of the set on its node. */
void rsc_pods_colocate(struct rsc_pod *pods, size_t n);
/* Sorts pods so that the first ones are the ones to delete first:
 * unscheduled, pending, not ready, lower deletion cost, more crowded
 * nodes, ready for less time, more restarts, newer. */
void rsc_rank_for_deletion(struct rsc_pod *pods, size_t n);

/* What the set o does with a pod it sees (adopt.h), an orphan adopted
 * only while it is active. */
enum adopt_claim rsc_claim_pod(const struct adopt_owner *o, const struct selector *sel,
			       const struct ynode *pod);

/* A pod for the set rs, from its template: a generated name, the
 * template's labels and annotations, an ownerReference (controller:
 * true, blockOwnerDeletion: true) to rs of kind/apiVersion. */
struct ynode *rsc_pod_from_template(const struct ynode *rs, const char *kind,
				    const char *api_version);

/* The status the set should have with these pods (its own, active):
 * replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
 * observedGeneration, and a ReplicaFailure condition when failure is not
 * NULL. *wait_s gets the seconds until a ready pod becomes available
 * (0: none waits). */
struct ynode *rsc_status(const struct ynode *rs, const struct ynode *const *pods, size_t n,
			 int64_t now, const char *failure, int64_t *wait_s);

#endif
