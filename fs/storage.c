/* storage.c: the storage admission hooks (storage.h) and the index of
 * stored StorageClasses the first of them keeps. It never reads the store
 * or the mount: the classes enter the index when their write is committed
 * (settle), so a claim is never given a class a failed write never
 * stored. */
#include "storage.h"
#include "quantity.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct storage__index {
	pthread_mutex_t lock;
	struct ynode **classes; /* the stored StorageClasses (copies) */
	size_t n, cap;
};

static const char *storage__name(const struct ynode *o)
{
	return ynode_path_str(o, "metadata.name");
}

static bool storage__annotation_true(const struct ynode *o, const char *key)
{
	const struct ynode *a = ynode_path(o, "metadata.annotations");
	const char *v = a && a->type == YNODE_MAP ? ynode_str(ynode_get(a, key)) : NULL;
	return v && !strcmp(v, "true");
}

static bool storage__is_default(const struct ynode *sc)
{
	return storage__annotation_true(sc, STORAGE_DEFAULT_CLASS_ANNOTATION) ||
	       storage__annotation_true(sc, STORAGE_BETA_DEFAULT_CLASS_ANNOTATION);
}

const struct ynode *storage_default_class(const struct ynode *const *classes, size_t n)
{
	const struct ynode *d = NULL;
	const char *dt = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!storage__is_default(classes[i]))
			continue;
		const char *t = ynode_path_str(classes[i], "metadata.creationTimestamp");
		if (!t)
			t = "";
		/* RFC 3339 in UTC compares as text. Newest first, then the
		 * lower name (Kubernetes' GetDefaultClass). */
		int c = d ? strcmp(t, dt) : 1;
		if (c > 0 || (c == 0 && strcmp(storage__name(classes[i]), storage__name(d)) < 0)) {
			d = classes[i];
			dt = t;
		}
	}
	return d;
}

/* Needs the lock. */
static size_t storage__find(const struct storage__index *x, const char *name)
{
	for (size_t i = 0; name && i < x->n; i++) {
		const char *ni = storage__name(x->classes[i]);
		if (ni && !strcmp(ni, name))
			return i;
	}
	return x->n;
}

/* Needs the lock. sc (a copy, taken) replaces the class of its name. */
static void storage__put(struct storage__index *x, struct ynode *sc)
{
	size_t i = storage__find(x, storage__name(sc));
	if (i < x->n) {
		ynode_free(x->classes[i]);
		x->classes[i] = sc;
		return;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		x->classes = xrealloc(x->classes, x->cap * sizeof(*x->classes));
	}
	x->classes[x->n++] = sc;
}

static void storage__drop(struct storage__index *x, const char *name)
{
	size_t i = storage__find(x, name);
	if (i == x->n)
		return;
	ynode_free(x->classes[i]);
	x->classes[i] = x->classes[--x->n];
}

void *storage_class_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct storage__index *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

void storage_class_hook_fini(void *state)
{
	struct storage__index *x = state;
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++)
		ynode_free(x->classes[i]);
	free(x->classes);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void storage_class_hook_load(void *state, const struct admission_request *rq)
{
	struct storage__index *x = state;
	if (!rq->obj || kinds_id(rq->kind) != KIND_STORAGE_CLASS || !storage__name(rq->obj))
		return;
	pthread_mutex_lock(&x->lock);
	storage__put(x, ynode_clone(rq->obj));
	pthread_mutex_unlock(&x->lock);
}

/* The claim's storage request in bytes (milli-units / 1000), or -1. */
static int64_t storage__request(const struct ynode *pvc)
{
	const char *s = ynode_path_str(pvc, "spec.resources.requests.storage");
	int64_t milli = 0;
	if (!s || quantity_parse(s, &milli, NULL) < 0)
		return -1;
	return milli;
}

/* PersistentVolumeClaimResize: growing needs a class that allows it. */
static int storage__admit_resize(struct storage__index *x, struct admission_request *rq,
				 struct error **err)
{
	int64_t now = storage__request(rq->obj), before = storage__request(rq->old);
	if (now < 0 || before < 0 || now <= before)
		return 0;
	const char *sc = ynode_path_str(rq->obj, "spec.storageClassName");
	const char *osc = ynode_path_str(rq->old, "spec.storageClassName");
	bool allowed = false;
	if (sc && *sc && osc && !strcmp(sc, osc)) {
		pthread_mutex_lock(&x->lock);
		size_t i = storage__find(x, sc);
		bool b = false;
		allowed = i < x->n &&
			  ynode_bool(ynode_get(x->classes[i], "allowVolumeExpansion"), &b) == 0 &&
			  b;
		pthread_mutex_unlock(&x->lock);
	}
	if (allowed)
		return 0;
	return admission_forbidden(err, rq,
				   "only dynamically provisioned pvc can be resized and the "
				   "storageclass that provisions the pvc must support resize");
}

/* DefaultStorageClass: a new claim without a class gets the default. */
static void storage__admit_default(struct storage__index *x, struct admission_request *rq)
{
	struct ynode *spec = ynode_get(rq->obj, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return;
	const struct ynode *cur = ynode_get(spec, "storageClassName");
	if (cur && !ynode_is_null(cur))
		return; /* set, "" included: Kubernetes leaves it */
	pthread_mutex_lock(&x->lock);
	const struct ynode *d =
	    storage_default_class((const struct ynode *const *)x->classes, x->n);
	cleanup_free char *name = d ? xstrdup(storage__name(d)) : NULL;
	pthread_mutex_unlock(&x->lock);
	if (!name)
		return;
	ynode_set(spec, "storageClassName", ynode_new_str(name));
	ynode_sort(spec);
	rq->changed = true;
}

int storage_class_hook_reserve(void *state, struct admission_request *rq, void **claim,
			       struct error **err)
{
	struct storage__index *x = state;
	*claim = NULL;
	if (!rq->obj || kinds_id(rq->kind) != KIND_PERSISTENT_VOLUME_CLAIM)
		return 0; /* classes enter the index at settle */
	if (rq->old)
		return storage__admit_resize(x, rq, err);
	storage__admit_default(x, rq);
	return 0;
}

void storage_class_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	struct storage__index *x = state;
	(void)claim;
	if (kinds_id(rq->kind) != KIND_STORAGE_CLASS)
		return;
	pthread_mutex_lock(&x->lock);
	if (rq->obj)
		storage__put(x, ynode_clone(rq->obj));
	else
		storage__drop(x, rq->name);
	pthread_mutex_unlock(&x->lock);
}

/* Whether the sequence holds the string s. */
static bool storage__seq_has(const struct ynode *seq, const char *s)
{
	for (size_t i = 0; seq && seq->type == YNODE_SEQ && i < seq->n; i++) {
		const char *v = ynode_str(ynode_item(seq, i));
		if (v && !strcmp(v, s))
			return true;
	}
	return false;
}

int storage_protection_hook_reserve(void *state, struct admission_request *rq, void **claim,
				    struct error **err)
{
	(void)state;
	(void)err;
	*claim = NULL;
	if (!rq->obj || rq->old)
		return 0; /* Kubernetes' plugin admits creates only */
	const char *fin = kinds_id(rq->kind) == KIND_PERSISTENT_VOLUME
			      ? STORAGE_PV_PROTECTION_FINALIZER
			      : STORAGE_PVC_PROTECTION_FINALIZER;
	struct ynode *md = ynode_get(rq->obj, "metadata");
	if (!md || md->type != YNODE_MAP)
		return 0;
	struct ynode *fins = ynode_get(md, "finalizers");
	if (fins && fins->type != YNODE_SEQ) {
		ynode_del(md, "finalizers");
		fins = NULL;
	}
	if (storage__seq_has(fins, fin))
		return 0;
	if (!fins) {
		ynode_set(md, "finalizers", ynode_new_seq());
		fins = ynode_get(md, "finalizers");
	}
	ynode_append(fins, ynode_new_str(fin));
	ynode_sort(md);
	rq->changed = true;
	return 0;
}
