/* adopt.h: which objects a controller claims, and the writes that adopt
 * and release them (Kubernetes' ControllerRefManager).
 *
 * A controller owns the objects whose controller reference (the
 * ownerReferences entry with controller: true) carries its uid. A sync
 * claims each object its owners index lists as its own or as an orphan of
 * its namespace:
 *   - owned by another controller: never touched;
 *   - ours and matching the selector: kept;
 *   - ours and no longer matching: released (our references removed),
 *     unless the owner is being deleted (then it is left alone);
 *   - an orphan that matches: adopted (a controller reference to the owner
 *     added), unless the owner or the object is being deleted or they are
 *     in different namespaces.
 * The write checks again on the object it read, so that a concurrent
 * claim by someone else always wins. ReplicaSets and ReplicationControllers
 * claim pods, Deployments ReplicaSets; Jobs, DaemonSets and StatefulSets
 * will claim pods the same way. */
#ifndef CORRAL_CTRL_ADOPT_H
#define CORRAL_CTRL_ADOPT_H

#include <stdbool.h>

#include "informer.h"
#include "selector.h"
#include "write.h"
#include "ynode.h"

enum adopt_claim {
	ADOPT_IGNORE,  /* another controller's, or not ours to take */
	ADOPT_KEEP,    /* ours, and matching */
	ADOPT_ADOPT,   /* no controller, matching: take it */
	ADOPT_RELEASE, /* ours, no longer matching: let it go */
};

/* The claiming controller, as its controller references name it. The
 * strings are borrowed. */
struct adopt_owner {
	const char *api_version; /* "apps/v1" */
	const char *kind;	 /* "ReplicaSet" */
	const char *name;
	const char *ns;	 /* NULL: cluster-scoped */
	const char *uid; /* NULL: claims nothing */
	bool deleting;	 /* metadata.deletionTimestamp set */
};

/* The owner from its object (name, namespace, uid, deletionTimestamp). */
void adopt_owner_init(struct adopt_owner *o, const struct ynode *owner, const char *api_version,
		      const char *kind);

/* What the owner does with obj, whose labels sel is matched against. */
enum adopt_claim adopt_claim(const struct adopt_owner *o, const struct selector *sel,
			     const struct ynode *obj);

/* A further condition an object must meet to be adopted (a pod: still
 * active); checked on the object the write reads. */
typedef bool (*adopt_filter_fn)(const struct ynode *obj);

/* Applies an ADOPT_ADOPT or ADOPT_RELEASE claim to obj: adds the owner's
 * controller reference if obj still has no controller, is not being
 * deleted and passes filter (may be NULL); or removes every reference to
 * the owner's uid. Returns 1 if obj changed, else 0 (a writer_mutate_fn's
 * answer). */
int adopt_apply(struct ynode *obj, const struct adopt_owner *o, enum adopt_claim what,
		adopt_filter_fn filter);

/* Submits the write of an ADOPT_ADOPT or ADOPT_RELEASE claim on path
 * (below the mount) through w; done(data, ...) reports it. The owner's
 * strings are copied. */
void adopt_write(struct writer *w, const char *path, const struct adopt_owner *o,
		 enum adopt_claim what, adopt_filter_fn filter, writer_done_fn done, void *data);

/* The key ("ns/name") of the owner that obj's controller reference
 * names, when it is of kind and owners (an informer of that kind) holds it
 * with that uid (Kubernetes' resolveControllerRef): the one to sync when
 * obj changes. NULL otherwise; *controlled (may be NULL) tells whether obj
 * has a controller at all. malloc'd. */
char *adopt_resolve_owner(struct informer *owners, const char *kind, const struct ynode *obj,
			  bool *controlled);

#endif
