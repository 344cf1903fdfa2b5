/* priority.c: the admission hook "priority" (priority.h) and its index of
 * the stored PriorityClasses. It never reads the store or the mount.
 *
 * Why an index fed by settle, and not a read of the store in the write:
 * the hook's reserve runs before the store write, on many workers at once.
 * A read of the store sees only what is committed, so two PriorityClasses
 * written with globalDefault: true at the same time would each see no
 * default and both be stored (Kubernetes has that race and picks the
 * lowest value after it). Here a write that makes a class the default
 * reserves "the default" under the index's lock, and no other class can
 * reserve or become it until that write settles or gives it back: at most
 * one default is ever stored by corral-fs. The classes themselves enter
 * the index only when their write is committed (settle), so a pod is never
 * given the value of a class that a failed write never stored. A pod
 * written while its class is being created or deleted sees the class
 * either way, as Kubernetes' pods see its informer; a class's value and
 * policy cannot change (kinds_scheduling.c), so a pod never gets a stale
 * value of a class that exists. */
#include "priority.h"
#include "kinds_scheduling.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct priority__index {
	pthread_mutex_t lock;
	struct ynode **classes; /* the stored PriorityClasses (copies) */
	size_t n, cap;
	char *pending_default; /* the class a write is making the default */
	size_t npending;       /* such writes in flight (all of that class) */
};

/* What a PriorityClass write's reserve took: the default, when it makes
 * its class the default. */
struct priority__claim {
	bool took_default;
};

static const char *priority__name(const struct ynode *pc)
{
	return ynode_path_str(pc, "metadata.name");
}

static bool priority__is_default(const struct ynode *pc)
{
	bool b = false;
	return ynode_bool(ynode_get(pc, "globalDefault"), &b) == 0 && b;
}

static long long priority__value(const struct ynode *pc)
{
	long long v = 0;
	ynode_int(ynode_get(pc, "value"), &v);
	return v;
}

/* Needs the lock. The index of the class named name, or n. */
static size_t priority__find(const struct priority__index *x, const char *name)
{
	for (size_t i = 0; name && i < x->n; i++) {
		const char *ni = priority__name(x->classes[i]);
		if (ni && !strcmp(ni, name))
			return i;
	}
	return x->n;
}

/* Needs the lock. pc (a copy, taken) replaces the class of its name. */
static void priority__put(struct priority__index *x, struct ynode *pc)
{
	size_t i = priority__find(x, priority__name(pc));
	if (i < x->n) {
		ynode_free(x->classes[i]);
		x->classes[i] = pc;
		return;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		x->classes = xrealloc(x->classes, x->cap * sizeof(*x->classes));
	}
	x->classes[x->n++] = pc;
}

/* Needs the lock. */
static void priority__drop(struct priority__index *x, const char *name)
{
	size_t i = priority__find(x, name);
	if (i == x->n)
		return;
	ynode_free(x->classes[i]);
	x->classes[i] = x->classes[--x->n];
}

/* Needs the lock. The default class, the lowest value if several (as
 * Kubernetes picks), or NULL. */
static const struct ynode *priority__default(const struct priority__index *x)
{
	const struct ynode *d = NULL;
	for (size_t i = 0; i < x->n; i++)
		if (priority__is_default(x->classes[i]) &&
		    (!d || priority__value(x->classes[i]) < priority__value(d)))
			d = x->classes[i];
	return d;
}

/* Sets key of spec to val (taken) unless it holds that already. */
static void priority__set(struct ynode *spec, const char *key, struct ynode *val, bool *changed)
{
	if (ynode_equal(ynode_get(spec, key), val)) {
		ynode_free(val);
		return;
	}
	ynode_set(spec, key, val);
	*changed = true;
}

/* A new pod: its priority from the classes, as Kubernetes' admitPod. */
static int priority__admit_pod(struct priority__index *x, struct admission_request *rq,
			       struct error **err)
{
	struct ynode *spec = ynode_get(rq->obj, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return 0; /* validation requires one: nothing to give */
	struct priority_resolved out;
	struct error *rerr = NULL;
	pthread_mutex_lock(&x->lock);
	int r = priority_resolve(spec, (const struct ynode *const *)x->classes, x->n, &out, &rerr);
	/* out points into the index: copy before unlocking. */
	cleanup_free char *class_name = r == 0 && out.class_name ? xstrdup(out.class_name) : NULL;
	cleanup_free char *policy = r == 0 ? xstrdup(out.policy) : NULL;
	pthread_mutex_unlock(&x->lock);
	if (r < 0) {
		r = admission_forbidden(err, rq, "%s", rerr->msg);
		error_free(rerr);
		return r;
	}
	bool named = ynode_str(ynode_get(spec, "priorityClassName")) &&
		     *ynode_str(ynode_get(spec, "priorityClassName"));
	if (!named && class_name)
		priority__set(spec, "priorityClassName", ynode_new_str(class_name), &rq->changed);
	priority__set(spec, "priority", ynode_new_int(out.value), &rq->changed);
	priority__set(spec, "preemptionPolicy", ynode_new_str(policy), &rq->changed);
	/* The object is stored normalized, its keys sorted (object.h):
	 * an update compares it with the next one as it is. */
	if (rq->changed)
		ynode_sort(spec);
	return 0;
}

/* A PriorityClass write: only one class may be the default. */
static int priority__reserve_class(struct priority__index *x, struct admission_request *rq,
				   void **claim, struct error **err)
{
	if (!priority__is_default(rq->obj))
		return 0;
	pthread_mutex_lock(&x->lock);
	const struct ynode *d = priority__default(x);
	const char *other = d && strcmp(priority__name(d), rq->name) ? priority__name(d) : NULL;
	if (!other && x->npending && strcmp(x->pending_default, rq->name))
		other = x->pending_default;
	if (other) {
		cleanup_free char *o = xstrdup(other);
		pthread_mutex_unlock(&x->lock);
		return admission_forbidden(
		    err, rq,
		    "PriorityClass %s is already marked as default. Only one default can exist", o);
	}
	if (!x->npending++) {
		free(x->pending_default);
		x->pending_default = xstrdup(rq->name);
	}
	pthread_mutex_unlock(&x->lock);
	struct priority__claim *c = xcalloc(1, sizeof(*c));
	c->took_default = true;
	*claim = c;
	return 0;
}

/* Needs the lock: gives back what claim took. */
static void priority__release(struct priority__index *x, struct priority__claim *c)
{
	if (c && c->took_default && !--x->npending) {
		free(x->pending_default);
		x->pending_default = NULL;
	}
}

void *priority_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct priority__index *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

void priority_hook_fini(void *state)
{
	struct priority__index *x = state;
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++)
		ynode_free(x->classes[i]);
	free(x->classes);
	free(x->pending_default);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void priority_hook_load(void *state, const struct admission_request *rq)
{
	struct priority__index *x = state;
	if (!rq->obj || kinds_id(rq->kind) != KIND_PRIORITY_CLASS || !priority__name(rq->obj))
		return;
	pthread_mutex_lock(&x->lock);
	priority__put(x, ynode_clone(rq->obj));
	pthread_mutex_unlock(&x->lock);
}

int priority_hook_reserve(void *state, struct admission_request *rq, void **claim,
			  struct error **err)
{
	struct priority__index *x = state;
	*claim = NULL;
	if (!rq->obj)
		return 0; /* a deletion: the class leaves the index at settle */
	if (kinds_id(rq->kind) == KIND_PRIORITY_CLASS)
		return priority__reserve_class(x, rq, claim, err);
	if (kinds_id(rq->kind) != KIND_POD)
		return 0;
	if (rq->old)
		return 0; /* an update keeps what the create gave: the pod's carry
			   * rule (priority_carry, kinds_core.c) did so at validation */
	return priority__admit_pod(x, rq, err);
}

void priority_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	struct priority__index *x = state;
	pthread_mutex_lock(&x->lock);
	if (kinds_id(rq->kind) == KIND_PRIORITY_CLASS) {
		if (rq->obj)
			priority__put(x, ynode_clone(rq->obj));
		else
			priority__drop(x, rq->name);
	}
	priority__release(x, claim);
	pthread_mutex_unlock(&x->lock);
	free(claim);
}

void priority_hook_unreserve(void *state, const struct admission_request *rq, void *claim)
{
	struct priority__index *x = state;
	(void)rq;
	pthread_mutex_lock(&x->lock);
	priority__release(x, claim);
	pthread_mutex_unlock(&x->lock);
	free(claim);
}
