/* statefulset.h: the StatefulSet controller (Kubernetes' statefulset
 * controller).
 *
 * A StatefulSet of N replicas runs the pods <set>-<start> ...
 * <set>-<start+N-1> (start: spec.ordinals.start, 0 by default), each with
 * a stable identity: hostname its own name, subdomain the set's
 * serviceName, labels statefulset.kubernetes.io/pod-name,
 * apps.kubernetes.io/pod-index and controller-revision-hash, and for each
 * of spec.volumeClaimTemplates a claim <template>-<set>-<ordinal>
 * (created before the pod, kept after it) mounted as the volume of the
 * template's name. With podManagementPolicy OrderedReady a pod is created
 * only when every lower one is Running and Ready (available for
 * minReadySeconds), and pods beyond the replicas go from the highest
 * ordinal down, one at a time; with Parallel all at once. A pod that is
 * deleted, or that fails, comes back with the same name and claims.
 *
 * Each template is a ControllerRevision (revision.h); updateStrategy
 * RollingUpdate deletes pods of an older revision from the highest
 * ordinal down to the partition, no more than maxUnavailable (1) at a
 * time unavailable, and they come back at the update revision; pods below
 * the partition are made at the current revision. OnDelete replaces a pod
 * only once someone deletes it.
 *
 * persistentVolumeClaimRetentionPolicy: whenDeleted Delete gives each
 * claim an ownerReference to the set (the garbage collector takes the
 * claims with it); whenScaled Delete gives the claims of a pod beyond the
 * replicas an ownerReference to that pod before it is deleted; Retain
 * leaves (removes) them.
 *
 * The status: replicas, readyReplicas, availableReplicas, currentReplicas,
 * updatedReplicas, currentRevision, updateRevision, observedGeneration,
 * collisionCount. */
#ifndef CORRAL_CTRL_STATEFULSET_H
#define CORRAL_CTRL_STATEFULSET_H

#include <stdbool.h>
#include <stddef.h>

#include "ynode.h"

struct ctrl;
struct ssc;

#define SSC_POD_NAME_LABEL  "statefulset.kubernetes.io/pod-name"
#define SSC_POD_INDEX_LABEL "apps.kubernetes.io/pod-index"

struct ssc *ssc_new(struct ctrl *c);
void ssc_free(struct ssc *s);

/* Decision logic, pure, for the tests. */

/* The ordinal of pod as a pod of set (its name <set>-<N>), or -1. */
long ssc_pod_ordinal(const char *set, const char *pod);
/* <template>-<set>-<ordinal>, malloc'd. */
char *ssc_claim_name(const char *tmpl, const char *set, long ordinal);

/* The pod of set at ordinal from tmpl (a pod template, the revision's):
 * name, labels (the template's, pod-name, pod-index, hash), hostname,
 * subdomain (serviceName), one persistentVolumeClaim volume per claim
 * template (replacing a volume of that name), an ownerReference
 * (controller) to set. */
struct ynode *ssc_new_pod(const struct ynode *set, const struct ynode *tmpl, long ordinal,
			  const char *hash);
/* The claim of template ct for the pod at ordinal: its name, the
 * template's labels with the set's matchLabels, its spec; owner
 * references as ssc_claim_owners() makes them (pod_uid NULL: none yet). */
struct ynode *ssc_new_claim(const struct ynode *set, const struct ynode *ct, long ordinal);

/* Sets or removes, as the set's persistentVolumeClaimRetentionPolicy
 * asks, claim's ownerReferences to set and to the pod (name, uid) whose
 * claim it is; in_range: the pod's ordinal is within the replicas.
 * Returns whether it changed anything. */
bool ssc_claim_owners(struct ynode *claim, const struct ynode *set, const char *pod,
		      const char *pod_uid, bool in_range);

/* One ordinal as a sync sees it, and what the plan does there. */
struct ssc_slot {
	long ordinal;
	bool exists;	  /* a pod of the set with that name */
	bool terminating; /* deletionTimestamp set */
	bool failed;	  /* Failed or Succeeded: to be replaced */
	bool ready;	  /* Running and Ready */
	bool available;	  /* ... for minReadySeconds */
	bool updated;	  /* at the update revision */
	bool create;	  /* the plan creates it */
	bool remove;	  /* the plan deletes it */
};

struct ssc_policy {
	bool parallel;	     /* podManagementPolicy Parallel */
	bool rolling;	     /* updateStrategy RollingUpdate */
	long partition;	     /* index into the replicas */
	int max_unavailable; /* at least 1 */
};

/* updateStatefulSet over rep (the replicas' ordinals, lowest first) and
 * cond (pods beyond them, lowest first): marks creates and deletes.
 * Returns how many. */
size_t ssc_plan(struct ssc_slot *rep, size_t nrep, struct ssc_slot *cond, size_t ncond,
		const struct ssc_policy *p);

/* The policy of set for nrep replicas. */
void ssc_policy_of(const struct ynode *set, size_t nrep, struct ssc_policy *p);

#endif
