/* deployment.h: the Deployment controller (Kubernetes' deployment
 * controller).
 *
 * A Deployment owns ReplicaSets named <deployment>-<pod-template-hash>,
 * the hash being a stable digest of the pod template in Kubernetes'
 * alphabet: the same template always gives the same name, so a template
 * written back from the history (`git show REV:path > path`) finds its old
 * ReplicaSet and rolls back to it, with the next revision. RollingUpdate
 * keeps the pods within maxSurge above and maxUnavailable below
 * spec.replicas, Recreate removes every old pod before the new ones
 * start; scaling a Deployment mid-rollout scales its ReplicaSets in
 * proportion; revisionHistoryLimit prunes old empty ReplicaSets; paused
 * stops rollouts. Status: replicas, updatedReplicas, readyReplicas,
 * availableReplicas, unavailableReplicas, observedGeneration,
 * collisionCount and the Progressing and Available conditions.
 *
 * The revision annotation lives on the ReplicaSets only: a Deployment's
 * metadata is what a person declared, and belongs to the history.
 *
 * Counting is stricter than Kubernetes' where a cache could lag: a
 * ReplicaSet counts as many pods as the larger of its spec and its status
 * (pods not yet deleted still exist), and as many available pods as the
 * smaller of its status and its spec (pods about to be deleted will not
 * be), so that the bounds hold for the pods that really exist. */
#ifndef CORRAL_CTRL_DEPLOYMENT_H
#define CORRAL_CTRL_DEPLOYMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rollout.h"
#include "ynode.h"

struct ctrl;
struct depc;

struct depc *depc_new(struct ctrl *c);
void depc_free(struct depc *d);

#endif
