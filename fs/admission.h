/* admission.h: the admission hooks of corral-fs's write path, the checks
 * that look at other objects than the one written (the Service address
 * and nodePort index, a pod's priority from its PriorityClass, LimitRange
 * defaults and bounds, ResourceQuota; ServiceAccount and StorageClass
 * defaults next). A write is parsed,
 * validated against its kind and defaulted (object_build()), then passed
 * through every hook that applies to its kind, in table order, then
 * stored (write.h). Only the write path may refuse a write.
 *
 * The protocol, for each write or deletion:
 *
 *   reserve   before the store write. The hook checks the request against
 *             its state and takes what the new object holds (an address, a
 *             share of a quota) so that two concurrent writes cannot both
 *             take the last of it. It may refuse: -errno (EINVAL, or
 *             EACCES for a forbidden write) and an error whose message,
 *             in Kubernetes' wording, reaches .errors (the errno reaches
 *             the writer's close or rename); then nothing is stored. What it took it
 *             keeps in *claim, handed back to settle or unreserve.
 *             A hook may change rq->obj (a mutating hook: defaults, a
 *             value taken from another object); it then sets rq->changed
 *             and the write path declares the changed object to the
 *             history.
 *   settle    after the store committed the change: the hook makes it
 *             its state's (frees what the old object held and the new one
 *             does not). Cannot fail.
 *   unreserve when the store write failed, or is to be retried (another
 *             write got in between: the object is built again on what
 *             that one stored and reserved again), or a later hook
 *             refused: gives back what reserve took. Cannot fail.
 *
 * Exactly one of settle and unreserve follows every reserve that returned
 * 0, with the same request and claim. When a hook refuses, the hooks
 * before it are unreserved, last first. A deletion reaches the hooks too,
 * with rq->obj NULL and rq->old the stored object.
 *
 * At start, load is called (when set) with every stored object of the
 * hook's load_kinds (its kinds when NULL), rq->old NULL, unchecked, so
 * that the hook's state is the store's.
 *
 * A hook's state is this corral-fs's view: over a shared store (etcd)
 * other hosts write too. What must be unique across every host (a
 * Service's address, a node port) a hook also names as claims
 * (admission_claim()), which the store takes or gives back in the
 * write's own transaction (store.h's struct store_claim): of two hosts
 * taking one, exactly one write is stored.
 *
 * Hooks run on many worker threads at once: each keeps its own state
 * thread-safe. They do no I/O on the mount and never block on another
 * write. */
#ifndef CORRAL_FS_ADMISSION_H
#define CORRAL_FS_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "kinds.h"
#include "servicerange.h"
#include "store.h"
#include "ynode.h"

/* One write (or deletion) as the hooks see it. */
struct admission_request {
	const struct kind_info *kind;
	const char *ns;		    /* NULL: cluster-scoped */
	const char *name;	    /* metadata.name */
	const char *owner;	    /* "ns/name" ("/name" when cluster-scoped) */
	struct ynode *obj;	    /* the object to store; NULL: a deletion */
	const struct ynode *old;    /* the stored object; NULL: a create */
	bool changed;		    /* out: a hook changed obj */
	struct store_claim *claims; /* out: admission_claim()'s */
	size_t nclaims;
};

/* The write rq takes (take) or gives back name ("svcip/10.96.0.5") in the
 * store, held as holder ("service dev/a"); refusal: the error when another
 * holds it. Copies the strings. */
void admission_claim(struct admission_request *rq, bool take, const char *name, const char *holder,
		     const char *refusal);
/* Frees rq's claims (after the store write, whatever its outcome). */
void admission_claims_clear(struct admission_request *rq);

/* What the hooks are made from. */
struct admission_config {
	const struct servicerange *service_range; /* Services' addresses */
	long long not_ready_toleration_s;	  /* DefaultTolerationSeconds; 0: 300 */
	long long unreachable_toleration_s;	  /* the same; 0: 300 */
};

struct admission_hook {
	const char *name;				   /* "service-addresses": for the log */
	const enum kind_id *kinds;			   /* the kinds it applies to, ended by
							      KIND_COUNT; NULL: every kind */
	const enum kind_id *load_kinds;			   /* those of them load wants at start;
							      NULL: all of them */
	void *(*init)(const struct admission_config *cfg); /* its state */
	void (*fini)(void *state);
	void (*load)(void *state, const struct admission_request *rq); /* may be NULL */
	/* Its load also takes other hosts' changes over a shared store: an
	 * object replaces what it held of that name, none forgets it. */
	bool follows;
	int (*reserve)(void *state, struct admission_request *rq, void **claim, struct error **err);
	void (*settle)(void *state, const struct admission_request *rq, void *claim);
	void (*unreserve)(void *state, const struct admission_request *rq, void *claim);
};

/* Kubernetes' Forbidden for rq: `<resource> "<name>" is forbidden:
 * <why>`, the resource as "pods" or "priorityclasses.scheduling.k8s.io".
 * Returns -EACCES. */
int admission_forbidden(struct error **err, const struct admission_request *rq, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));

/* corral-fs's hooks, in the order they run: adding a hook is one row of
 * this table (admission.c). */
const struct admission_hook *admission_default_hooks(size_t *n);

struct admission;
/* What one write's reserve took, hook by hook. */
struct admission_ticket;

/* Instantiates hooks (n of them, run in this order) with cfg. */
struct admission *admission_new(const struct admission_hook *hooks, size_t n,
				const struct admission_config *cfg);
void admission_free(struct admission *a);
/* Whether any hook applies to kind k (a may be NULL: none does). */
bool admission_applies(const struct admission *a, const struct kind_info *k);
/* Whether a hook applies to kind k and wants its stored objects at start
 * (k is one of its load_kinds). */
bool admission_wants_load(const struct admission *a, const struct kind_info *k);
void admission_load(struct admission *a, const struct admission_request *rq);
/* Whether a hook that follows other hosts' changes wants kind k's. */
bool admission_wants_follow(const struct admission *a, const struct kind_info *k);
/* A change another host stored (rq->obj NULL: a deletion), to the hooks
 * that follow (their load). The others know only this host's writes
 * (corral-fs(8), The store over etcd). */
void admission_follow(struct admission *a, const struct admission_request *rq);
/* The state of a's hook named name, or NULL (for tests). */
void *admission_hook_state(const struct admission *a, const char *name);

/* Reserves for every hook that applies to rq->kind, in order. On a refusal
 * returns its -errno and error, having unreserved the hooks before it, and
 * *t is NULL. On success *t (never NULL) goes to settle or unreserve. a may
 * be NULL: no hooks. */
int admission_reserve(struct admission *a, struct admission_request *rq,
		      struct admission_ticket **t, struct error **err);
/* The change is stored: every hook reserved settles; frees t. */
void admission_settle(struct admission *a, const struct admission_request *rq,
		      struct admission_ticket *t);
/* The change is not stored: every hook reserved gives back, last first;
 * frees t. */
void admission_unreserve(struct admission *a, const struct admission_request *rq,
			 struct admission_ticket *t);

#endif
