/* finalizers.h: metadata.finalizers and metadata.deletionTimestamp, the
 * deletion contract of every kind, as Kubernetes' apiserver keeps it:
 *
 *   - an object whose finalizers are not empty is not removed by a
 *     deletion (rm, a cascade, a controller's unlink): the deletion sets
 *     deletionTimestamp (and deletionGracePeriodSeconds: 0) and the object
 *     stays, readable, until its finalizers are gone; a second deletion
 *     changes nothing;
 *   - while it is being deleted, a write may remove finalizers and change
 *     anything else, but may not add a finalizer nor change the timestamp
 *     (one left out is kept, as the apiserver keeps it);
 *   - the write that removes the last finalizer deletes the object.
 *
 * A Namespace counts its spec.finalizers too (the "kubernetes" finalizer
 * the namespace controller removes once the namespace is empty), and its
 * deletion also puts it in phase Terminating.
 *
 * Pure functions over parsed objects: the write path (write.c) asks what a
 * deletion or a write does and carries it out. */
#ifndef CORRAL_FS_FINALIZERS_H
#define CORRAL_FS_FINALIZERS_H

#include <stdbool.h>
#include <time.h>

#include "error.h"
#include "kinds.h"
#include "ynode.h"

/* Kubernetes' finalizers of the garbage collector, and the namespace's. */
#define FINALIZER_ORPHAN     "orphan"
#define FINALIZER_FOREGROUND "foregroundDeletion"
#define FINALIZER_NAMESPACE  "kubernetes"

enum finalizers_verdict {
	FINALIZERS_STORE,  /* store the write as built (deletionTimestamp carried over) */
	FINALIZERS_MARK,   /* a deletion that sets deletionTimestamp: the object stays */
	FINALIZERS_KEEP,   /* a deletion of an object already being deleted: nothing */
	FINALIZERS_DELETE, /* remove the object: no finalizers (left) */
};

/* What a deletion (obj NULL) of old, or a write of obj over old (NULL: a
 * create), does. obj is the object as written (its metadata not yet
 * replaced by the server's). A write that adds finalizers to an object
 * being deleted, or changes its deletionTimestamp or
 * deletionGracePeriodSeconds, is refused (-EINVAL, Kubernetes' message);
 * so is one that sets both orphan and foregroundDeletion. */
int finalizers_decide(const struct kind_info *k, const struct ynode *old, const struct ynode *obj,
		      enum finalizers_verdict *v, struct error **err);
/* Whether obj has finalizers (for a Namespace, metadata's or spec's). */
bool finalizers_any(const struct kind_info *k, const struct ynode *obj);
/* Whether obj's metadata.finalizers holds name. */
bool finalizers_has(const struct ynode *obj, const char *name);
/* Marks obj (a copy of the stored object) as being deleted at now:
 * deletionTimestamp, deletionGracePeriodSeconds 0; a Namespace also gets
 * phase Terminating and the kubernetes finalizer in spec.finalizers. */
void finalizers_mark(const struct kind_info *k, struct ynode *obj, time_t now);
/* Copies deletionTimestamp and deletionGracePeriodSeconds from old (being
 * deleted) into obj, which the server's metadata was just given. */
void finalizers_carry(const struct ynode *old, struct ynode *obj);

#endif
