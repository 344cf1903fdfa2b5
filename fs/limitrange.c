/* limitrange.c: the admission hook "limit-ranger" (limitrange.h) and its
 * index of the stored LimitRanges. It never reads the store or the mount.
 * The LimitRanges enter the index when their write is committed (settle),
 * as Kubernetes' plugin sees them through its informer: a pod written
 * while its namespace's LimitRange is being written sees it either way. */
#include "limitrange.h"
#include "pod.h"
#include "quantity.h"
#include "quotacalc.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pure part ---- */

/* Errors of one LimitRange, Kubernetes' aggregate: each message once. */
struct limitrange__errs {
	char **v;
	size_t n;
};

static void limitrange__add(struct limitrange__errs *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void limitrange__add(struct limitrange__errs *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->v[i], m)) {
			free(m);
			return;
		}
	e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
	e->v[e->n++] = m;
}

static void limitrange__errs_clear(struct limitrange__errs *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* "a" for one error, "[a, b]" for several. Malloc'd. */
static char *limitrange__errs_format(const struct limitrange__errs *e)
{
	if (e->n == 1)
		return xstrdup(e->v[0]);
	char *out = xstrdup("[");
	for (size_t i = 0; i < e->n; i++) {
		char *m = xasprintf("%s%s%s", out, i ? ", " : "", e->v[i]);
		free(out);
		out = m;
	}
	char *m = xasprintf("%s]", out);
	free(out);
	return m;
}

/* The canonical text of an amount, as Quantity.String(). */
static void limitrange__text(const struct quotacalc_amount *a, char *buf, unsigned size)
{
	quantity_format_in(a->milli, a->fmt, buf, size);
}

static void limitrange__min(struct limitrange__errs *e, const char *type,
			    const struct quotacalc_amount *enf, const struct quotacalc_list *req,
			    const struct quotacalc_list *lim)
{
	const struct quotacalc_amount *r = quotacalc_list_find(req, enf->name);
	const struct quotacalc_amount *l = quotacalc_list_find(lim, enf->name);
	char se[64], sv[64];
	limitrange__text(enf, se, sizeof(se));
	if (!r) {
		limitrange__add(e, "minimum %s usage per %s is %s.  No request is specified",
				enf->name, type, se);
		return;
	}
	if (r->milli < enf->milli) {
		limitrange__text(r, sv, sizeof(sv));
		limitrange__add(e, "minimum %s usage per %s is %s, but request is %s", enf->name,
				type, se, sv);
		return;
	}
	if (l && l->milli < enf->milli) {
		limitrange__text(l, sv, sizeof(sv));
		limitrange__add(e, "minimum %s usage per %s is %s, but limit is %s", enf->name,
				type, se, sv);
	}
}

static void limitrange__max(struct limitrange__errs *e, const char *type,
			    const struct quotacalc_amount *enf, const struct quotacalc_list *req,
			    const struct quotacalc_list *lim)
{
	const struct quotacalc_amount *r = quotacalc_list_find(req, enf->name);
	const struct quotacalc_amount *l = quotacalc_list_find(lim, enf->name);
	char se[64], sv[64];
	limitrange__text(enf, se, sizeof(se));
	if (!l) {
		limitrange__add(e, "maximum %s usage per %s is %s.  No limit is specified",
				enf->name, type, se);
		return;
	}
	if (l->milli > enf->milli) {
		limitrange__text(l, sv, sizeof(sv));
		limitrange__add(e, "maximum %s usage per %s is %s, but limit is %s", enf->name,
				type, se, sv);
		return;
	}
	if (r && r->milli > enf->milli) {
		limitrange__text(r, sv, sizeof(sv));
		limitrange__add(e, "maximum %s usage per %s is %s, but request is %s", enf->name,
				type, se, sv);
	}
}

/* A claim's max: against its request only (a PVC has no limits). */
static void limitrange__max_request(struct limitrange__errs *e, const char *type,
				    const struct quotacalc_amount *enf,
				    const struct quotacalc_list *req)
{
	const struct quotacalc_amount *r = quotacalc_list_find(req, enf->name);
	char se[64], sv[64];
	limitrange__text(enf, se, sizeof(se));
	if (!r) {
		limitrange__add(e, "maximum %s usage per %s is %s.  No request is specified",
				enf->name, type, se);
		return;
	}
	if (r->milli > enf->milli) {
		limitrange__text(r, sv, sizeof(sv));
		limitrange__add(e, "maximum %s usage per %s is %s, but request is %s", enf->name,
				type, se, sv);
	}
}

static void limitrange__ratio(struct limitrange__errs *e, const char *type,
			      const struct quotacalc_amount *enf, const struct quotacalc_list *req,
			      const struct quotacalc_list *lim)
{
	const struct quotacalc_amount *r = quotacalc_list_find(req, enf->name);
	const struct quotacalc_amount *l = quotacalc_list_find(lim, enf->name);
	char se[64];
	limitrange__text(enf, se, sizeof(se));
	if (!r || r->milli == 0) {
		limitrange__add(e,
				"%s max limit to request ratio per %s is %s, but no request is "
				"specified or request is 0",
				enf->name, type, se);
		return;
	}
	if (!l || l->milli == 0) {
		limitrange__add(e,
				"%s max limit to request ratio per %s is %s, but no limit is "
				"specified or limit is 0",
				enf->name, type, se);
		return;
	}
	double ratio = (double)l->milli / (double)r->milli;
	if (ratio * 1000.0 > (double)enf->milli)
		limitrange__add(e,
				"%s max limit to request ratio per %s is %s, but provided ratio "
				"is %f",
				enf->name, type, se, ratio);
}

/* min, max and maxLimitRequestRatio of item against req and lim. */
static void limitrange__enforce(struct limitrange__errs *e, const char *type,
				const struct ynode *item, const struct quotacalc_list *req,
				const struct quotacalc_list *lim)
{
	struct quotacalc_list mn = {0}, mx = {0}, ratio = {0};
	quotacalc_list_read(&mn, ynode_get(item, "min"));
	quotacalc_list_read(&mx, ynode_get(item, "max"));
	quotacalc_list_read(&ratio, ynode_get(item, "maxLimitRequestRatio"));
	for (size_t i = 0; i < mn.n; i++)
		limitrange__min(e, type, &mn.v[i], req, lim);
	for (size_t i = 0; i < mx.n; i++)
		limitrange__max(e, type, &mx.v[i], req, lim);
	for (size_t i = 0; i < ratio.n; i++)
		limitrange__ratio(e, type, &ratio.v[i], req, lim);
	quotacalc_list_clear(&mn);
	quotacalc_list_clear(&mx);
	quotacalc_list_clear(&ratio);
}

static bool limitrange__type_is(const struct ynode *item, const char *type)
{
	const char *t = ynode_str(ynode_get(item, "type"));
	return t && !strcmp(t, type);
}

/* Sets in map (created under parent[key]) every name of defaults it lacks;
 * appends the names set to *set ("cpu, memory"). */
static void limitrange__merge(struct ynode *parent, const char *key, const struct ynode *defaults,
			      char **set)
{
	for (size_t i = 0; defaults && defaults->type == YNODE_MAP && i < defaults->n; i++) {
		const char *name = ynode_str(ynode_map_key(defaults, i));
		struct ynode *m = ynode_get(parent, key);
		if (m && m->type == YNODE_MAP && ynode_get(m, name))
			continue;
		m = ynode_get_map(parent, key);
		ynode_set(m, name, ynode_clone(ynode_map_val(defaults, i)));
		char *s = *set ? xasprintf("%s, %s", *set, name) : xstrdup(name);
		free(*set);
		*set = s;
	}
}

/* Sorted, comma-separated: Kubernetes sorts the names it reports. */
static char *limitrange__sorted(const char *list)
{
	if (!list)
		return NULL;
	struct quotacalc_list l = {0};
	cleanup_free char *copy = xstrdup(list);
	char *save = NULL;
	for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		quotacalc_list_add(&l, t, 0, QUANTITY_DECIMAL_SI);
	char *out = NULL;
	for (size_t i = 0; i < l.n; i++) {
		char *s = out ? xasprintf("%s, %s", out, l.v[i].name) : xstrdup(l.v[i].name);
		free(out);
		out = s;
	}
	quotacalc_list_clear(&l);
	return out;
}

/* One LimitRange's defaults into the pod's containers (Kubernetes'
 * mergePodResourceRequirements), its annotation when any was set. */
static void limitrange__default_pod(const struct ynode *lr, struct ynode *pod, bool *changed)
{
	const struct ynode *items = ynode_path(lr, "spec.limits");
	cleanup_ynode struct ynode *dlim = ynode_new_map();
	cleanup_ynode struct ynode *dreq = ynode_new_map();
	for (size_t i = 0; items && items->type == YNODE_SEQ && i < items->n; i++) {
		const struct ynode *it = ynode_item(items, i);
		if (!limitrange__type_is(it, "Container"))
			continue;
		const struct ynode *d = ynode_get(it, "default");
		for (size_t k = 0; d && d->type == YNODE_MAP && k < d->n; k++)
			ynode_set(dlim, ynode_map_key(d, k)->str, ynode_clone(ynode_map_val(d, k)));
		d = ynode_get(it, "defaultRequest");
		for (size_t k = 0; d && d->type == YNODE_MAP && k < d->n; k++)
			ynode_set(dreq, ynode_map_key(d, k)->str, ynode_clone(ynode_map_val(d, k)));
	}
	if (!dlim->n && !dreq->n)
		return;
	cleanup_free char *notes = NULL;
	static const char *const lists[] = {"containers", "initContainers"};
	static const char *const what[] = {"container", "init container"};
	struct ynode *spec = ynode_get(pod, "spec");
	for (size_t l = 0; l < 2; l++) {
		struct ynode *cs = ynode_get(spec, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			struct ynode *c = ynode_item(cs, i);
			if (c->type != YNODE_MAP)
				continue;
			struct ynode *res = ynode_get_map(c, "resources");
			cleanup_free char *set_lim = NULL;
			cleanup_free char *set_req = NULL;
			limitrange__merge(res, "limits", dlim, &set_lim);
			limitrange__merge(res, "requests", dreq, &set_req);
			const char *name = ynode_str(ynode_get(c, "name"));
			cleanup_free char *sreq = limitrange__sorted(set_req);
			cleanup_free char *slim = limitrange__sorted(set_lim);
			const char *parts[2] = {sreq, slim};
			const char *kinds[2] = {"request", "limit"};
			for (int p = 0; p < 2; p++) {
				if (!parts[p])
					continue;
				char *n = xasprintf("%s%s%s %s for %s %s", notes ? notes : "",
						    notes ? "; " : "", parts[p], kinds[p], what[l],
						    name ? name : "");
				free(notes);
				notes = n;
			}
		}
	}
	if (!notes)
		return;
	struct ynode *meta = ynode_get_map(pod, "metadata");
	struct ynode *ann = ynode_get_map(meta, "annotations");
	cleanup_free char *val = xasprintf("LimitRanger plugin set: %s", notes);
	ynode_set(ann, "kubernetes.io/limit-ranger", ynode_new_str(val));
	*changed = true;
}

static void limitrange__validate_pod(const struct ynode *lr, const struct ynode *pod,
				     struct limitrange__errs *e)
{
	const struct ynode *items = ynode_path(lr, "spec.limits");
	for (size_t i = 0; items && items->type == YNODE_SEQ && i < items->n; i++) {
		const struct ynode *it = ynode_item(items, i);
		if (limitrange__type_is(it, "Container")) {
			static const char *const lists[] = {"spec.containers",
							    "spec.initContainers"};
			for (size_t l = 0; l < 2; l++) {
				const struct ynode *cs = ynode_path(pod, lists[l]);
				for (size_t c = 0; cs && cs->type == YNODE_SEQ && c < cs->n; c++) {
					const struct ynode *res =
					    ynode_get(ynode_item(cs, c), "resources");
					struct quotacalc_list req = {0}, lim = {0};
					quotacalc_list_read(&req, ynode_get(res, "requests"));
					quotacalc_list_read(&lim, ynode_get(res, "limits"));
					limitrange__enforce(e, "Container", it, &req, &lim);
					quotacalc_list_clear(&req);
					quotacalc_list_clear(&lim);
				}
			}
		}
		if (limitrange__type_is(it, "Pod")) {
			struct quotacalc_list req = {0}, lim = {0};
			quotacalc_pod_resources(pod, false, &req, &lim);
			limitrange__enforce(e, "Pod", it, &req, &lim);
			quotacalc_list_clear(&req);
			quotacalc_list_clear(&lim);
		}
	}
}

static void limitrange__validate_pvc(const struct ynode *lr, const struct ynode *pvc,
				     struct limitrange__errs *e)
{
	const struct ynode *items = ynode_path(lr, "spec.limits");
	struct quotacalc_list req = {0}, none = {0};
	quotacalc_list_read(&req, ynode_path(pvc, "spec.resources.requests"));
	for (size_t i = 0; items && items->type == YNODE_SEQ && i < items->n; i++) {
		const struct ynode *it = ynode_item(items, i);
		if (!limitrange__type_is(it, "PersistentVolumeClaim"))
			continue;
		struct quotacalc_list mn = {0}, mx = {0};
		quotacalc_list_read(&mn, ynode_get(it, "min"));
		quotacalc_list_read(&mx, ynode_get(it, "max"));
		for (size_t k = 0; k < mn.n; k++)
			limitrange__min(e, "PersistentVolumeClaim", &mn.v[k], &req, &none);
		for (size_t k = 0; k < mx.n; k++)
			limitrange__max_request(e, "PersistentVolumeClaim", &mx.v[k], &req);
		quotacalc_list_clear(&mn);
		quotacalc_list_clear(&mx);
	}
	quotacalc_list_clear(&req);
}

int limitrange_apply(const struct ynode *const *ranges, size_t n, struct ynode *obj, bool is_pod,
		     bool *changed, struct error **err)
{
	/* Kubernetes runs the mutating pass (every LimitRange's defaults)
	 * before the validating one. */
	for (size_t i = 0; is_pod && i < n; i++)
		limitrange__default_pod(ranges[i], obj, changed);
	for (size_t i = 0; i < n; i++) {
		struct limitrange__errs e = {0};
		if (is_pod)
			limitrange__validate_pod(ranges[i], obj, &e);
		else
			limitrange__validate_pvc(ranges[i], obj, &e);
		if (e.n) {
			cleanup_free char *msg = limitrange__errs_format(&e);
			limitrange__errs_clear(&e);
			return error_set(err, EACCES, "%s", msg);
		}
	}
	return 0;
}

/* ---- the hook ---- */

struct limitrange__index {
	pthread_mutex_t lock;
	struct ynode **ranges; /* the stored LimitRanges (copies), by ns then name */
	char **keys;	       /* "ns/name" of each */
	size_t n, cap;
};

/* Needs the lock. The index of key, or where it goes. */
static size_t limitrange__pos(const struct limitrange__index *x, const char *key, bool *found)
{
	*found = false;
	size_t i = 0;
	for (; i < x->n; i++) {
		int c = strcmp(x->keys[i], key);
		if (c == 0)
			*found = true;
		if (c >= 0)
			break;
	}
	return i;
}

static void limitrange__put(struct limitrange__index *x, const char *key, const struct ynode *lr)
{
	bool found;
	size_t i = limitrange__pos(x, key, &found);
	if (found) {
		ynode_free(x->ranges[i]);
		x->ranges[i] = ynode_clone(lr);
		return;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		x->ranges = xrealloc(x->ranges, x->cap * sizeof(*x->ranges));
		x->keys = xrealloc(x->keys, x->cap * sizeof(*x->keys));
	}
	memmove(&x->ranges[i + 1], &x->ranges[i], (x->n - i) * sizeof(*x->ranges));
	memmove(&x->keys[i + 1], &x->keys[i], (x->n - i) * sizeof(*x->keys));
	x->ranges[i] = ynode_clone(lr);
	x->keys[i] = xstrdup(key);
	x->n++;
}

static void limitrange__drop(struct limitrange__index *x, const char *key)
{
	bool found;
	size_t i = limitrange__pos(x, key, &found);
	if (!found)
		return;
	ynode_free(x->ranges[i]);
	free(x->keys[i]);
	memmove(&x->ranges[i], &x->ranges[i + 1], (x->n - i - 1) * sizeof(*x->ranges));
	memmove(&x->keys[i], &x->keys[i + 1], (x->n - i - 1) * sizeof(*x->keys));
	x->n--;
}

void *limitrange_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct limitrange__index *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

void limitrange_hook_fini(void *state)
{
	struct limitrange__index *x = state;
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++) {
		ynode_free(x->ranges[i]);
		free(x->keys[i]);
	}
	free(x->ranges);
	free(x->keys);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

static void limitrange__apply_change(struct limitrange__index *x,
				     const struct admission_request *rq)
{
	if (kinds_id(rq->kind) != KIND_LIMIT_RANGE || !rq->ns)
		return;
	cleanup_free char *key = xasprintf("%s/%s", rq->ns, rq->name);
	pthread_mutex_lock(&x->lock);
	if (rq->obj)
		limitrange__put(x, key, rq->obj);
	else
		limitrange__drop(x, key);
	pthread_mutex_unlock(&x->lock);
}

void limitrange_hook_load(void *state, const struct admission_request *rq)
{
	limitrange__apply_change(state, rq);
}

int limitrange_hook_reserve(void *state, struct admission_request *rq, void **claim,
			    struct error **err)
{
	struct limitrange__index *x = state;
	*claim = NULL;
	enum kind_id id = kinds_id(rq->kind);
	if (!rq->obj || !rq->ns || (id != KIND_POD && id != KIND_PERSISTENT_VOLUME_CLAIM))
		return 0;
	if (id == KIND_POD && rq->old)
		return 0; /* a pod's containers cannot change */
	if (rq->old && object_is_deleting(rq->old))
		return 0;
	/* The namespace's LimitRanges, copied out of the index. */
	cleanup_free char *prefix = xasprintf("%s/", rq->ns);
	size_t plen = strlen(prefix);
	struct ynode **mine = NULL;
	size_t n = 0;
	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; i < x->n; i++) {
		if (strncmp(x->keys[i], prefix, plen))
			continue;
		mine = xrealloc(mine, (n + 1) * sizeof(*mine));
		mine[n++] = ynode_clone(x->ranges[i]);
	}
	pthread_mutex_unlock(&x->lock);
	int r = 0;
	if (n) {
		struct error *lerr = NULL;
		bool changed = false;
		r = limitrange_apply((const struct ynode *const *)mine, n, rq->obj, id == KIND_POD,
				     &changed, &lerr);
		if (r < 0) {
			r = admission_forbidden(err, rq, "%s", lerr->msg);
			error_free(lerr);
		} else if (changed) {
			/* Stored normalized, its keys sorted (object.h). */
			ynode_sort(rq->obj);
			rq->changed = true;
		}
	}
	for (size_t i = 0; i < n; i++)
		ynode_free(mine[i]);
	free(mine);
	return r;
}

void limitrange_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	(void)claim;
	limitrange__apply_change(state, rq);
}

void limitrange_hook_unreserve(void *state, const struct admission_request *rq, void *claim)
{
	(void)state;
	(void)rq;
	(void)claim;
}
