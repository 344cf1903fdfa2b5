/* gc.h: the garbage collector (Kubernetes' garbagecollector controller,
 * background propagation).
 *
 * It follows every kind but Event and keeps two indexes: which object has
 * a uid, and which objects name a uid in their ownerReferences. When an
 * object goes, its dependents are looked at: a dependent none of whose
 * owners exists any more is deleted (and its own dependents follow the
 * same way); one that still has an owner loses the references to the
 * owners that are gone. An owner that is not in the caches is looked up
 * through the mount before anything is deleted, and at start every object
 * with ownerReferences is checked, so an owner deleted while corral-ctrl
 * was down is noticed too.
 *
 * An owner deleted with the annotation corral.io/orphan: "true" orphans
 * its dependents instead: they lose their references to it and stay.
 *
 * An owner being deleted (corral-fs keeps an object with finalizers,
 * finalizers.h) with Kubernetes' finalizers of this collector:
 * "orphan": its dependents lose their references to it, then the
 * finalizer is removed; "foregroundDeletion": its dependents are deleted,
 * and once none is left the finalizer is removed. Removing the last
 * finalizer deletes the owner. A dependent with finalizers of its own is
 * deleted like any other (it stays, being deleted): the collector never
 * waits on one, except a foreground owner, for its dependents to go. */
#ifndef CORRAL_CTRL_GC_H
#define CORRAL_CTRL_GC_H

#include <stdbool.h>
#include <stddef.h>

#include "ynode.h"

struct ctrl;
struct gc;

struct gc *gc_new(struct ctrl *c);
void gc_free(struct gc *g);

/* Decision logic, pure, for the tests. */
enum gc_owner_state {
	GC_OWNER_EXISTS, /* or cannot be told: never delete on a guess */
	GC_OWNER_GONE,
	GC_OWNER_ORPHANED, /* gone, and it asked for orphaning */
};
enum gc_action {
	GC_NOTHING,
	GC_DELETE,	/* no owner left */
	GC_REMOVE_REFS, /* drop the references to the gone owners */
};
/* states[i] is the state of the dependent's i-th ownerReference. */
enum gc_action gc_decide(const enum gc_owner_state *states, size_t n);

/* What an owner's own finalizers ask of the collector. */
enum gc_owner_step {
	GC_STEP_NONE,		   /* not being deleted, or no finalizer of ours */
	GC_STEP_ORPHAN_DEPENDENTS, /* "orphan": drop their references to it */
	GC_STEP_DELETE_DEPENDENTS, /* "foregroundDeletion": delete them */
	GC_STEP_REMOVE_FINALIZER,  /* no dependent left: remove *finalizer */
};
/* For owner (its metadata), which dependents dependents name it still;
 * *finalizer is set to the finalizer the step is for. */
enum gc_owner_step gc_decide_owner(const struct ynode *owner, size_t dependents,
				   const char **finalizer);

#endif
