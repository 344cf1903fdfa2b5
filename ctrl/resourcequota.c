/* resourcequota.c: the resourcequota controller (resourcequota.h). One
 * queue of quota keys ("ns/name"); a change of any watched object queues
 * the quotas of its namespace that limit something its kind charges. A
 * sync counts from the shared informers' caches and writes the status only
 * when it differs from the cached one. This file never refuses or deletes
 * anything: enforcement is corral-fs's. */
#include "resourcequota.h"
#include "ctrl.h"
#include "log.h"
#include "obj.h"
#include "quotacalc.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What a watched kind's handlers are called with. */
struct resourcequota__watch {
	struct resourcequota *r;
	const struct kind_info *kind;
	struct informer *inf;
};

struct resourcequota {
	struct ctrl *c;
	struct informer *quotas;
	struct workqueue *q;
	struct resourcequota__watch watch[KIND_COUNT]; /* inf NULL: not watched */
};

/* The hard list of rq, and whether any of its names is charged by k. */
static bool resourcequota__limits_kind(const struct ynode *rq, const struct kind_info *k)
{
	const struct ynode *hard = ynode_path(rq, "spec.hard");
	for (size_t i = 0; hard && hard->type == YNODE_MAP && i < hard->n; i++)
		if (quotacalc_kind_charges(k, ynode_str(ynode_map_key(hard, i))))
			return true;
	return false;
}

/* Adds the charge of obj (of kind k) to used, for the names of hard. */
static void resourcequota__charge(const struct ynode *rq, const struct quotacalc_list *hard,
				  const struct kind_info *k, const struct ynode *obj,
				  struct quotacalc_list *used)
{
	if (!quotacalc_matches(rq, k, obj))
		return;
	struct quotacalc_list u = {0};
	quotacalc_usage(k, obj, &u);
	for (size_t i = 0; i < hard->n; i++) {
		const struct quotacalc_amount *a = quotacalc_list_find(&u, hard->v[i].name);
		if (a)
			quotacalc_list_add(used, a->name, a->milli, a->fmt);
	}
	quotacalc_list_clear(&u);
}

static struct ynode *resourcequota__list_map(const struct quotacalc_list *l)
{
	struct ynode *m = ynode_new_map();
	for (size_t i = 0; i < l->n; i++) {
		char buf[64];
		quantity_format_in(l->v[i].milli, l->v[i].fmt, buf, sizeof(buf));
		ynode_set(m, l->v[i].name, ynode_new_str(buf));
	}
	return m;
}

/* used starts with every hard name at 0, as Kubernetes lists them. */
static void resourcequota__used_init(const struct quotacalc_list *hard, struct quotacalc_list *used)
{
	for (size_t i = 0; i < hard->n; i++)
		quotacalc_list_add(used, hard->v[i].name, 0, hard->v[i].fmt);
}

static struct ynode *resourcequota__build(const struct quotacalc_list *hard,
					  const struct quotacalc_list *used)
{
	struct ynode *st = ynode_new_map();
	ynode_set(st, "hard", resourcequota__list_map(hard));
	ynode_set(st, "used", resourcequota__list_map(used));
	return st;
}

struct ynode *resourcequota_status(const struct ynode *rq, const struct ynode *const *objs,
				   const struct kind_info *const *kinds, size_t n)
{
	struct quotacalc_list hard = {0}, used = {0};
	quotacalc_list_read(&hard, ynode_path(rq, "spec.hard"));
	resourcequota__used_init(&hard, &used);
	for (size_t i = 0; i < n; i++)
		resourcequota__charge(rq, &hard, kinds[i], objs[i], &used);
	struct ynode *st = resourcequota__build(&hard, &used);
	quotacalc_list_clear(&hard);
	quotacalc_list_clear(&used);
	return st;
}

struct resourcequota__count {
	const struct ynode *rq;
	const struct quotacalc_list *hard;
	const struct kind_info *kind;
	struct quotacalc_list *used;
};

static int resourcequota__visit(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	struct resourcequota__count *cnt = data;
	resourcequota__charge(cnt->rq, cnt->hard, cnt->kind, obj, cnt->used);
	return 0;
}

static void resourcequota__written(void *data, const struct writer_result *res)
{
	char *key = data;
	if (res->status && res->status != ENOENT)
		log_warn("resourcequota: cannot write the status of %s: %s", key, res->msg);
	free(key);
}

static int resourcequota__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct resourcequota *r = data;
	const struct ynode *rq = informer_get(r->quotas, key);
	if (!rq)
		return 0;
	char ns[256] = "";
	const char *name = obj_key_split(key, ns, sizeof(ns));
	if (!name)
		return 0;
	struct quotacalc_list hard = {0}, used = {0};
	quotacalc_list_read(&hard, ynode_path(rq, "spec.hard"));
	resourcequota__used_init(&hard, &used);
	for (size_t k = 0; k < KIND_COUNT; k++) {
		struct resourcequota__watch *w = &r->watch[k];
		if (!w->inf || !resourcequota__limits_kind(rq, w->kind))
			continue;
		struct resourcequota__count cnt = {
		    .rq = rq, .hard = &hard, .kind = w->kind, .used = &used};
		informer_foreach(w->inf, ns, resourcequota__visit, &cnt);
	}
	cleanup_ynode struct ynode *st = resourcequota__build(&hard, &used);
	quotacalc_list_clear(&hard);
	quotacalc_list_clear(&used);
	workqueue_add_after(r->q, key, RESOURCEQUOTA_RESYNC_MS);
	if (ynode_equal(ynode_get(rq, "status"), st))
		return 0;
	cleanup_free char *path = obj_path("resourcequotas", ns, name);
	writer_update(r->c->writer, path, ctrl_mutate_status, ynode_clone(st), ctrl_ynode_free, 0,
		      resourcequota__written, xstrdup(key));
	return 0;
}

struct resourcequota__queue_ns {
	struct resourcequota *r;
	const struct kind_info *kind;
};

static int resourcequota__queue_quota(void *data, const char *key, const struct ynode *rq)
{
	struct resourcequota__queue_ns *qn = data;
	if (resourcequota__limits_kind(rq, qn->kind))
		workqueue_add(qn->r->q, key);
	return 0;
}

/* An object of w's kind changed: queue its namespace's quotas on it. */
static void resourcequota__changed(struct resourcequota__watch *w, const char *key)
{
	char ns[256] = "";
	if (!obj_key_split(key, ns, sizeof(ns)) || !*ns)
		return;
	struct resourcequota__queue_ns qn = {.r = w->r, .kind = w->kind};
	informer_foreach(w->r->quotas, ns, resourcequota__queue_quota, &qn);
}

static void resourcequota__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	resourcequota__changed(data, key);
}

static void resourcequota__on_update(void *data, const char *key, const struct ynode *old,
				     const struct ynode *obj)
{
	(void)old;
	(void)obj;
	resourcequota__changed(data, key);
}

static void resourcequota__on_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	resourcequota__changed(data, key);
}

static void resourcequota__on_quota(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct resourcequota *r = data;
	workqueue_add(r->q, key);
}

static void resourcequota__on_quota_update(void *data, const char *key, const struct ynode *old,
					   const struct ynode *obj)
{
	(void)old;
	resourcequota__on_quota(data, key, obj);
}

struct resourcequota *resourcequota_new(struct ctrl *c)
{
	struct resourcequota *r = xcalloc(1, sizeof(*r));
	r->c = c;
	r->q = workqueue_new(c->loop, "resourcequotas", NULL);
	r->quotas = ctrl_informer(c, "resourcequotas");
	struct informer_handlers qh = {.on_add = resourcequota__on_quota,
				       .on_update = resourcequota__on_quota_update};
	informer_add_handlers(r->quotas, &qh, r);
	struct informer_handlers h = {.on_add = resourcequota__on_add,
				      .on_update = resourcequota__on_update,
				      .on_delete = resourcequota__on_delete};
	for (size_t k = 0; k < KIND_COUNT; k++) {
		const struct kind_info *ki = kinds_at(k);
		/* Events are many and short-lived: count/events is enforced at
		 * the write, not summed here. */
		if (!ki || !ki->namespaced || k == KIND_EVENT)
			continue;
		r->watch[k] = (struct resourcequota__watch){
		    .r = r, .kind = ki, .inf = ctrl_informer(c, ki->plural)};
		informer_add_handlers(r->watch[k].inf, &h, &r->watch[k]);
	}
	workqueue_set_handler(r->q, resourcequota__sync, r);
	return r;
}

void resourcequota_free(struct resourcequota *r)
{
	if (!r)
		return;
	workqueue_free(r->q);
	free(r);
}
