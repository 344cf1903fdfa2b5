/* gc.c: the garbage collector.
 *
 * Objects are named by "item" strings, "<plural>/<informer key>"
 * ("pods/dev/web-x2b4k", "nodes/n1"). The work queue holds items to check;
 * a check decides from the uid index alone when every owner is present,
 * and reads the owner's file through the mount when one is not, since an
 * informer may not have listed it yet.
 *
 * This file must never delete an object that has an owner it cannot prove
 * gone. */
#include "gc.h"
#include "ctrl.h"
#include "keymap.h"
#include "kinds.h"
#include "log.h"
#include "obj.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GC__CONFIRM_MS 300
#define GC__ORPHAN     "orphan"
#define GC__FOREGROUND "foregroundDeletion"

struct gc__kind {
	struct gc *g;
	const struct kind_info *k;
	struct informer *inf;
};

struct gc {
	struct ctrl *c;
	struct gc__kind *kinds;
	size_t nkinds;
	struct keymap *uids;	   /* uid -> item (char *) */
	struct keymap *dependents; /* owner uid -> struct keymap (set of items) */
	struct keymap *orphaning;  /* uids of owners deleted with the orphan annotation */
	struct keymap *busy;	   /* items with a write in flight */
	struct keymap *suspect;	   /* items whose owner was first found gone at (ms) */
	struct workqueue *q;
};

enum gc_action gc_decide(const enum gc_owner_state *states, size_t n)
{
	size_t exists = 0, gone = 0, orphaned = 0;
	for (size_t i = 0; i < n; i++) {
		if (states[i] == GC_OWNER_EXISTS)
			exists++;
		else if (states[i] == GC_OWNER_GONE)
			gone++;
		else
			orphaned++;
	}
	if (!gone && !orphaned)
		return GC_NOTHING;
	if (!exists && gone)
		return GC_DELETE;
	return GC_REMOVE_REFS;
}

static bool gc__has_finalizer(const struct ynode *obj, const char *name)
{
	const struct ynode *fin = ynode_path(obj, "metadata.finalizers");
	for (size_t i = 0; fin && fin->type == YNODE_SEQ && i < fin->n; i++) {
		const char *f = ynode_str(ynode_item(fin, i));
		if (f && !strcmp(f, name))
			return true;
	}
	return false;
}

enum gc_owner_step gc_decide_owner(const struct ynode *owner, size_t dependents,
				   const char **finalizer)
{
	*finalizer = NULL;
	if (!object_is_deleting(owner))
		return GC_STEP_NONE;
	if (gc__has_finalizer(owner, GC__ORPHAN))
		*finalizer = GC__ORPHAN;
	else if (gc__has_finalizer(owner, GC__FOREGROUND))
		*finalizer = GC__FOREGROUND;
	else
		return GC_STEP_NONE;
	if (!dependents)
		return GC_STEP_REMOVE_FINALIZER;
	return !strcmp(*finalizer, GC__ORPHAN) ? GC_STEP_ORPHAN_DEPENDENTS
					       : GC_STEP_DELETE_DEPENDENTS;
}

static void gc__set_free(void *p)
{
	keymap_free(p);
}

static char *gc__item(const struct gc__kind *gk, const char *key)
{
	return xasprintf("%s/%s", gk->k->plural, key);
}

static struct gc__kind *gc__kind_of(struct gc *g, const char *item, const char **key)
{
	const char *slash = strchr(item, '/');
	if (!slash)
		return NULL;
	for (size_t i = 0; i < g->nkinds; i++) {
		const char *p = g->kinds[i].k->plural;
		if (strlen(p) == (size_t)(slash - item) &&
		    !strncmp(p, item, (size_t)(slash - item))) {
			*key = slash + 1;
			return &g->kinds[i];
		}
	}
	return NULL;
}

/* Indexes. */

static void gc__index_refs(struct gc *g, const char *item, const struct ynode *obj, bool add)
{
	const struct ynode *refs = ynode_path(obj, "metadata.ownerReferences");
	for (size_t i = 0; refs && refs->type == YNODE_SEQ && i < refs->n; i++) {
		const char *uid = ynode_str(ynode_get(ynode_item(refs, i), "uid"));
		if (!uid)
			continue;
		struct keymap *set = keymap_get(g->dependents, uid);
		if (add) {
			if (!set) {
				set = keymap_new(NULL);
				keymap_set(g->dependents, uid, set);
			}
			keymap_set(set, item, NULL);
		} else if (set) {
			keymap_del(set, item);
			if (!keymap_count(set)) {
				keymap_del(g->dependents, uid);
				/* An owner waiting on its dependents (its
				 * orphan or foregroundDeletion finalizer) may
				 * go on now. */
				const char *owner = keymap_get(g->uids, uid);
				if (owner)
					workqueue_add(g->q, owner);
			}
		}
	}
}

static void gc__index_uid(struct gc *g, const char *item, const struct ynode *obj, bool add)
{
	const char *uid = obj_uid(obj);
	if (!uid)
		return;
	if (add) {
		keymap_set(g->uids, uid, xstrdup(item));
		return;
	}
	const char *cur = keymap_get(g->uids, uid);
	if (cur && !strcmp(cur, item))
		keymap_del(g->uids, uid);
}

static bool gc__has_refs(const struct ynode *obj)
{
	const struct ynode *refs = ynode_path(obj, "metadata.ownerReferences");
	return refs && refs->type == YNODE_SEQ && refs->n;
}

static void gc__on_add(void *data, const char *key, const struct ynode *obj)
{
	struct gc__kind *gk = data;
	struct gc *g = gk->g;
	cleanup_free char *item = gc__item(gk, key);
	gc__index_uid(g, item, obj, true);
	if (gc__has_refs(obj)) {
		gc__index_refs(g, item, obj, true);
		workqueue_add(g->q, item);
	}
	const char *fin;
	if (gc_decide_owner(obj, 0, &fin) != GC_STEP_NONE)
		workqueue_add(g->q, item);
}

static void gc__on_update(void *data, const char *key, const struct ynode *old,
			  const struct ynode *obj)
{
	struct gc__kind *gk = data;
	struct gc *g = gk->g;
	cleanup_free char *item = gc__item(gk, key);
	if (!ynode_equal(ynode_path(old, "metadata.uid"), ynode_path(obj, "metadata.uid"))) {
		gc__index_uid(g, item, old, false);
		gc__index_uid(g, item, obj, true);
	}
	const struct ynode *a = ynode_path(old, "metadata.ownerReferences");
	const struct ynode *b = ynode_path(obj, "metadata.ownerReferences");
	if (!ynode_equal(a, b)) {
		gc__index_refs(g, item, old, false);
		gc__index_refs(g, item, obj, true);
		if (gc__has_refs(obj))
			workqueue_add(g->q, item);
	}
	const char *fin;
	if (gc_decide_owner(obj, 0, &fin) != GC_STEP_NONE)
		workqueue_add(g->q, item);
}

static void gc__on_delete(void *data, const char *key, const struct ynode *old)
{
	struct gc__kind *gk = data;
	struct gc *g = gk->g;
	cleanup_free char *item = gc__item(gk, key);
	gc__index_uid(g, item, old, false);
	gc__index_refs(g, item, old, false);
	keymap_del(g->suspect, item);
	const char *uid = obj_uid(old);
	struct keymap *set = uid ? keymap_get(g->dependents, uid) : NULL;
	if (!set)
		return;
	if (obj_annotation_true(old, CTRL_ORPHAN_ANNOTATION)) {
		log_info("garbage collector: %s was deleted with %s: orphaning %zu dependents",
			 item, CTRL_ORPHAN_ANNOTATION, keymap_count(set));
		keymap_set(g->orphaning, uid, NULL);
	}
	const char *dep;
	for (size_t i = 0; keymap_next(set, &i, &dep, NULL);)
		workqueue_add(g->q, dep);
}

/* Writes. */

struct gc__op {
	struct gc *g;
	char *item;
	bool delete;
};

static void gc__done(void *data, const struct writer_result *res)
{
	struct gc__op *op = data;
	struct gc *g = op->g;
	keymap_del(g->busy, op->item);
	if (res->status == 0) {
		log_debug("garbage collector: %s %s", op->delete ? "deleted" : "orphaned",
			  op->item);
	} else if (res->status != ENOENT && res->status != ESTALE) {
		log_warn("garbage collector: %s: %s", op->item, res->msg);
		workqueue_add_after(g->q, op->item, 1000);
	}
	free(op->item);
	free(op);
}

struct gc__refs {
	char **uids;
	size_t n;
};

static void gc__refs_free(void *p)
{
	struct gc__refs *r = p;
	for (size_t i = 0; i < r->n; i++)
		free(r->uids[i]);
	free(r->uids);
	free(r);
}

static int gc__mutate_remove(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	struct gc__refs *r = arg;
	int removed = 0;
	for (size_t i = 0; i < r->n; i++)
		removed += obj_remove_owner_refs(obj, r->uids[i]);
	return removed > 0;
}

/* Whether the owner named by ref (of a dependent in ns) exists, asking the
 * mount when the caches do not know its uid. */
static enum gc_owner_state gc__owner(struct gc *g, const struct ynode *ref, const char *ns)
{
	const char *uid = ynode_str(ynode_get(ref, "uid"));
	const char *kind = ynode_str(ynode_get(ref, "kind"));
	const char *name = ynode_str(ynode_get(ref, "name"));
	if (!uid || !kind || !name)
		return GC_OWNER_EXISTS;
	if (keymap_has(g->uids, uid))
		return GC_OWNER_EXISTS;
	const struct kind_info *k = kinds_by_kind(kind);
	if (!k)
		return GC_OWNER_EXISTS; /* a kind corral does not serve: cannot tell */
	cleanup_free char *path = obj_path(k->plural, k->namespaced ? ns : NULL, name);
	cleanup_ynode struct ynode *owner = NULL;
	struct error *err = NULL;
	int r = write_read_object(g->c->mount, path, &owner, &err);
	int status = err ? err->status : 0;
	error_free(err);
	if (r == 0) {
		const char *ouid = obj_uid(owner);
		if (ouid && !strcmp(ouid, uid))
			return GC_OWNER_EXISTS;
	} else if (status != ENOENT) {
		return GC_OWNER_EXISTS;
	}
	return keymap_has(g->orphaning, uid) ? GC_OWNER_ORPHANED : GC_OWNER_GONE;
}

static int gc__mutate_finalizer(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const char *name = arg;
	return ynode_seq_remove_str(ynode_path(obj, "metadata.finalizers"), name) > 0;
}

/* An owner being deleted with our orphan or foregroundDeletion finalizer:
 * the next step for its dependents, or its finalizer's removal. */
static void gc__sync_owner(struct gc *g, struct gc__kind *gk, const char *item,
			   const struct ynode *obj)
{
	const char *uid = obj_uid(obj);
	struct keymap *set = uid ? keymap_get(g->dependents, uid) : NULL;
	const char *fin;
	enum gc_owner_step step = gc_decide_owner(obj, set ? keymap_count(set) : 0, &fin);
	if (step == GC_STEP_NONE)
		return;
	if (step == GC_STEP_REMOVE_FINALIZER) {
		cleanup_free char *path =
		    obj_path(gk->k->plural, obj_namespace(obj), obj_name(obj));
		log_debug("garbage collector: %s has no dependents left: removing %s", item, fin);
		struct gc__op *op = xcalloc(1, sizeof(*op));
		op->g = g;
		op->item = xstrdup(item);
		keymap_set(g->busy, item, NULL);
		writer_update(g->c->writer, path, gc__mutate_finalizer, (void *)fin, NULL, 0,
			      gc__done, op);
		return;
	}
	const char *dep;
	for (size_t i = 0; keymap_next(set, &i, &dep, NULL);) {
		const char *dkey;
		struct gc__kind *dk = gc__kind_of(g, dep, &dkey);
		const struct ynode *d = dk ? informer_get(dk->inf, dkey) : NULL;
		if (!d || keymap_has(g->busy, dep))
			continue;
		cleanup_free char *path = obj_path(dk->k->plural, obj_namespace(d), obj_name(d));
		struct gc__op *op = xcalloc(1, sizeof(*op));
		op->g = g;
		op->item = xstrdup(dep);
		keymap_set(g->busy, dep, NULL);
		if (step == GC_STEP_DELETE_DEPENDENTS) {
			if (object_is_deleting(d)) {
				keymap_del(g->busy, dep);
				free(op->item);
				free(op);
				continue; /* going already: waited for */
			}
			op->delete = true;
			writer_delete(g->c->writer, path, obj_uid(d), 0, gc__done, op);
		} else {
			struct gc__refs *r = xcalloc(1, sizeof(*r));
			r->uids = xcalloc(1, sizeof(char *));
			r->uids[r->n++] = xstrdup(uid);
			writer_update(g->c->writer, path, gc__mutate_remove, r, gc__refs_free, 0,
				      gc__done, op);
		}
	}
}

static int gc__sync(void *data, const char *item, struct error **err)
{
	(void)err;
	struct gc *g = data;
	const char *key;
	struct gc__kind *gk = gc__kind_of(g, item, &key);
	if (!gk || keymap_has(g->busy, item))
		return 0;
	const struct ynode *obj = informer_get(gk->inf, key);
	if (!obj)
		return 0;
	gc__sync_owner(g, gk, item, obj);
	if (keymap_has(g->busy, item))
		return 0;
	const struct ynode *refs = ynode_path(obj, "metadata.ownerReferences");
	if (!refs || refs->type != YNODE_SEQ || !refs->n)
		return 0;
	enum gc_owner_state *states = xcalloc(refs->n, sizeof(*states));
	struct gc__refs *drop = xcalloc(1, sizeof(*drop));
	drop->uids = xcalloc(refs->n, sizeof(char *));
	for (size_t i = 0; i < refs->n; i++) {
		states[i] = gc__owner(g, ynode_item(refs, i), obj_namespace(obj));
		const char *uid = ynode_str(ynode_get(ynode_item(refs, i), "uid"));
		if (states[i] != GC_OWNER_EXISTS && uid)
			drop->uids[drop->n++] = xstrdup(uid);
	}
	enum gc_action action = gc_decide(states, refs->n);
	free(states);
	if (action == GC_NOTHING) {
		keymap_del(g->suspect, item);
		gc__refs_free(drop);
		return 0;
	}
	/* Look twice, GC__CONFIRM_MS apart, before acting: a file being
	 * replaced (sed -i) can be missing for an instant. */
	uint64_t now = loop_now_ms();
	uintptr_t first = (uintptr_t)keymap_get(g->suspect, item);
	if (!first || now < first + GC__CONFIRM_MS) {
		if (!first)
			keymap_set(g->suspect, item, (void *)(uintptr_t)now);
		workqueue_add_after(g->q, item,
				    first ? first + GC__CONFIRM_MS - now : GC__CONFIRM_MS);
		gc__refs_free(drop);
		return 0;
	}
	keymap_del(g->suspect, item);
	cleanup_free char *path = obj_path(gk->k->plural, obj_namespace(obj), obj_name(obj));
	struct gc__op *op = xcalloc(1, sizeof(*op));
	op->g = g;
	op->item = xstrdup(item);
	op->delete = action == GC_DELETE;
	keymap_set(g->busy, item, NULL);
	if (action == GC_DELETE) {
		log_debug("garbage collector: deleting %s: its owners are gone", item);
		writer_delete(g->c->writer, path, obj_uid(obj), 0, gc__done, op);
		gc__refs_free(drop);
	} else {
		writer_update(g->c->writer, path, gc__mutate_remove, drop, gc__refs_free, 0,
			      gc__done, op);
	}
	return 0;
}

struct gc *gc_new(struct ctrl *c)
{
	struct gc *g = xcalloc(1, sizeof(*g));
	g->c = c;
	g->uids = keymap_new(free);
	g->dependents = keymap_new(gc__set_free);
	g->orphaning = keymap_new(NULL);
	g->busy = keymap_new(NULL);
	g->suspect = keymap_new(NULL);
	g->q = workqueue_new(c->loop, "garbagecollector", NULL);
	g->kinds = xcalloc(kinds_count(), sizeof(*g->kinds));
	for (size_t i = 0; i < kinds_count(); i++) {
		const struct kind_info *k = kinds_at(i);
		if (!strcmp(k->plural, "events"))
			continue;
		struct gc__kind *gk = &g->kinds[g->nkinds++];
		gk->g = g;
		gk->k = k;
		gk->inf = ctrl_informer(c, k->plural);
		struct informer_handlers h = {
		    .on_add = gc__on_add,
		    .on_update = gc__on_update,
		    .on_delete = gc__on_delete,
		};
		informer_add_handlers(gk->inf, &h, gk);
	}
	workqueue_set_handler(g->q, gc__sync, g);
	return g;
}

void gc_free(struct gc *g)
{
	if (!g)
		return;
	workqueue_free(g->q);
	keymap_free(g->uids);
	keymap_free(g->dependents);
	keymap_free(g->orphaning);
	keymap_free(g->busy);
	keymap_free(g->suspect);
	free(g->kinds);
	free(g);
}
