/* pvbinder.h: the PersistentVolume binder (row "persistentvolume-binder",
 * Kubernetes' PV controller) and the local-path provisioner
 * (corral.io/local-path).
 *
 * The matcher is pure (pvb_volume, pvb_claim, pvb_match()): a claim binds
 * the smallest volume whose capacity is >= its request, whose access
 * modes include the claim's, whose storageClassName is the claim's ("" is
 * no class), whose volumeMode is the claim's, whose labels the claim's
 * selector matches and whose nodeAffinity allows the claim's node (when
 * it has one) or some known node (when it has none); a volume pre-bound
 * to the claim (claimRef) is taken first if it fits, and one pre-bound to
 * another claim never; a claim's spec.volumeName names its volume.
 *
 * The controller writes both sides as Kubernetes does: the volume first
 * (spec.claimRef with the claim's uid and resourceVersion, annotation
 * pv.kubernetes.io/bound-by-controller when it set the claimRef, phase
 * Bound), then the claim (spec.volumeName, pv.kubernetes.io/bind-completed,
 * pv.kubernetes.io/bound-by-controller when it set volumeName, phase
 * Bound, status capacity and accessModes). Each write re-checks on the
 * object it read (a volume already claimed by another claim is never
 * taken) and carries the resourceVersion read, so two binds racing for one
 * volume conflict and the loser finds it taken: never a double bind. A
 * volume chosen but not yet seen bound by the informer is held for its
 * claim, so one pass over many claims does not pick a volume twice.
 * Everything is derived from the objects, so a restart continues.
 *
 * Reclaim, when a bound volume's claim is gone: Retain: phase Released
 * (kept); Delete: the volume is deleted (the data of a local-path volume
 * by its node's corral-noded, noded/provision.c); Recycle (deprecated in
 * Kubernetes): refused, phase Failed with a message.
 *
 * Provisioning: a claim that no volume fits, of a class whose provisioner
 * is corral.io/local-path, gets a volume pvc-<claim uid> on one node:
 * Immediate classes pick a Ready node (the one with fewest local-path
 * volumes, then by name); WaitForFirstConsumer classes wait (event
 * WaitForFirstConsumer) for the node a pod using the claim is scheduled
 * to (its spec.nodeName) or the claim's volume.kubernetes.io/selected-node
 * annotation. Static volumes of a WaitForFirstConsumer class are matched
 * against that node too. Expansion: a bound claim asking more than its
 * volume holds, of a class with allowVolumeExpansion, grows the volume's
 * capacity, then the claim's status.capacity. */
#ifndef CORRAL_CTRL_PVBINDER_H
#define CORRAL_CTRL_PVBINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "selector.h"
#include "ynode.h"

#define PVB_PROVISIONER		  "corral.io/local-path"
#define PVB_ANN_BIND_COMPLETED	  "pv.kubernetes.io/bind-completed"
#define PVB_ANN_BOUND_BY_CTRL	  "pv.kubernetes.io/bound-by-controller"
#define PVB_ANN_PROVISIONED_BY	  "pv.kubernetes.io/provisioned-by"
#define PVB_ANN_SELECTED_NODE	  "volume.kubernetes.io/selected-node"
#define PVB_ANN_VOLUMES_DIR	  "corral.io/volumes-dir" /* on a Node, set by its noded */
#define PVB_DEFAULT_VOLUMES_DIR	  "/var/lib/corral/volumes"
#define PVB_HOSTNAME_LABEL	  "kubernetes.io/hostname"
#define PVB_REASON_WAIT_CONSUMER  "WaitForFirstConsumer"
#define PVB_MSG_WAIT_CONSUMER	  "waiting for first consumer to be created before binding"
#define PVB_REASON_FAILED_BINDING "FailedBinding"

/* Access modes as bits. */
enum {
	PVB_RWO = 1 << 0,
	PVB_ROX = 1 << 1,
	PVB_RWX = 1 << 2,
	PVB_RWOP = 1 << 3,
};

/* A node, as the matcher needs it. */
struct pvb_node {
	const char *name;
	const struct ynode *labels;
};

/* A PersistentVolume, parsed once (strings point into the object). */
struct pvb_volume {
	const char *name;
	int64_t capacity;  /* milli-units of spec.capacity.storage */
	const char *class; /* "" no class */
	bool block;	   /* volumeMode Block */
	unsigned modes;	   /* PVB_* */
	const struct ynode *labels;
	const struct ynode *affinity;		       /* spec.nodeAffinity.required, or NULL */
	const char *claim_ns, *claim_name, *claim_uid; /* claimRef; NULL: none */
	bool deleting;
	bool usable;	      /* phase Available, Pending or unset; or bound to claim_* */
	const char *held_for; /* "ns/name": chosen for that claim, write in flight */
};

struct pvb_claim {
	const char *ns, *name, *uid;
	int64_t request; /* milli-units of spec.resources.requests.storage */
	const char *class;
	bool block;
	unsigned modes;
	const struct selector *selector; /* NULL: none */
	const char *volume_name;	 /* spec.volumeName, NULL: none */
	const char *node;		 /* the node the volume must allow; NULL: any */
};

/* The access modes of a list of names ("ReadWriteOnce"...). */
unsigned pvb_access_modes(const struct ynode *list);
/* Parses a PersistentVolume; false if it has no name or capacity. */
bool pvb_volume_parse(const struct ynode *pv, struct pvb_volume *out);
/* Parses a claim (selector: out->selector is made, free it with
 * selector_free); false if it has no name or request. */
bool pvb_claim_parse(const struct ynode *pvc, struct pvb_claim *out);

/* Whether the volume may hold the claim, size aside: modes, class, mode,
 * selector, node affinity (the claim's node, else any of nodes). */
bool pvb_volume_satisfies(const struct pvb_volume *v, const struct pvb_claim *c,
			  const struct pvb_node *nodes, size_t nnodes);
/* Whether the volume is pre-bound (claimRef) to this claim. */
bool pvb_prebound_to(const struct pvb_volume *v, const struct pvb_claim *c);
/* The volume the claim binds to among vols, or NULL: one pre-bound to it
 * if it satisfies, else the smallest usable, unclaimed, unheld one that
 * satisfies and holds the request (ties: the lower name). */
const struct pvb_volume *pvb_match(const struct pvb_claim *c, const struct pvb_volume *vols,
				   size_t n, const struct pvb_node *nodes, size_t nnodes);

struct ctrl;
struct pvbinder;
struct pvbinder *pvbinder_new(struct ctrl *c);
void pvbinder_free(struct pvbinder *b);

#endif
