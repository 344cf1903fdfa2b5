/* nslifecycle.c: see nslifecycle.h. A create races the Namespace write
 * that makes its namespace Terminating exactly as in Kubernetes (the
 * plugin reads an informer's cache): one reserved before that write
 * settles is admitted, and the namespace controller deletes it. */
#include "nslifecycle.h"
#include "namespace.h"
#include "pod.h"
#include "strmap.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct nslifecycle {
	pthread_mutex_t lock;
	struct strmap *terminating; /* namespace name -> NULL */
};

void *nslifecycle_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct nslifecycle *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	x->terminating = strmap_new();
	return x;
}

void nslifecycle_hook_fini(void *state)
{
	struct nslifecycle *x = state;
	if (!x)
		return;
	strmap_free(x->terminating, NULL);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

static void nslifecycle__track(struct nslifecycle *x, const char *name, const struct ynode *obj)
{
	pthread_mutex_lock(&x->lock);
	if (obj && object_is_deleting(obj))
		strmap_set(x->terminating, name, NULL);
	else
		strmap_del(x->terminating, name);
	pthread_mutex_unlock(&x->lock);
}

void nslifecycle_hook_load(void *state, const struct admission_request *rq)
{
	if (rq->kind->namespace_object && rq->obj)
		nslifecycle__track(state, rq->name, rq->obj);
}

int nslifecycle_hook_reserve(void *state, struct admission_request *rq, void **claim,
			     struct error **err)
{
	struct nslifecycle *x = state;
	*claim = NULL;
	if (rq->kind->namespace_object) {
		/* A deletion, or the update that marks one. */
		bool deleting = !rq->obj || (object_is_deleting(rq->obj) &&
					     !(rq->old && object_is_deleting(rq->old)));
		if (deleting && namespace_protected(rq->name))
			return admission_forbidden(err, rq, "this namespace may not be deleted");
		return 0;
	}
	if (!rq->ns || rq->old || !rq->obj)
		return 0; /* updates and deletions always pass */
	pthread_mutex_lock(&x->lock);
	bool terminating = strmap_has(x->terminating, rq->ns);
	pthread_mutex_unlock(&x->lock);
	if (terminating)
		return admission_forbidden(
		    err, rq,
		    "unable to create new content in namespace %s because it is being terminated",
		    rq->ns);
	return 0;
}

void nslifecycle_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	(void)claim;
	if (rq->kind->namespace_object)
		nslifecycle__track(state, rq->name, rq->obj);
}
