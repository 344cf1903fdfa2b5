/* pvbinder.c: the PersistentVolume binder and the local-path provisioner
 * (pvbinder.h): the pure matcher first, then the controller. The
 * controller keeps its own copy of every volume, parsed once per change,
 * so that matching a claim is a pass over an array; it never decides on
 * what it has not read: every write re-checks the object it writes. */
#include "pvbinder.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "keymap.h"
#include "log.h"
#include "nodeaffinity.h"
#include "obj.h"
#include "quantity.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PVB__COMPONENT "persistentvolume-controller"

/* ---- the matcher ---------------------------------------------------------- */

unsigned pvb_access_modes(const struct ynode *list)
{
	static const struct {
		const char *name;
		unsigned bit;
	} modes[] = {
	    {"ReadWriteOnce", PVB_RWO},
	    {"ReadOnlyMany", PVB_ROX},
	    {"ReadWriteMany", PVB_RWX},
	    {"ReadWriteOncePod", PVB_RWOP},
	};
	unsigned m = 0;
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const char *s = ynode_str(ynode_item(list, i));
		for (size_t j = 0; s && j < ARRAY_SIZE(modes); j++)
			if (!strcmp(s, modes[j].name))
				m |= modes[j].bit;
	}
	return m;
}

static int64_t pvb__quantity(const char *s)
{
	int64_t milli = 0;
	if (!s || quantity_parse(s, &milli, NULL) < 0)
		return -1;
	return milli;
}

static const char *pvb__str_or(const char *s, const char *def)
{
	return s ? s : def;
}

bool pvb_volume_parse(const struct ynode *pv, struct pvb_volume *out)
{
	memset(out, 0, sizeof(*out));
	out->name = obj_name(pv);
	out->capacity = pvb__quantity(ynode_path_str(pv, "spec.capacity.storage"));
	if (!out->name || out->capacity < 0)
		return false;
	out->class = pvb__str_or(ynode_path_str(pv, "spec.storageClassName"), "");
	out->block = !strcmp(pvb__str_or(ynode_path_str(pv, "spec.volumeMode"), ""), "Block");
	out->modes = pvb_access_modes(ynode_path(pv, "spec.accessModes"));
	out->labels = ynode_path(pv, "metadata.labels");
	out->affinity = ynode_path(pv, "spec.nodeAffinity.required");
	const struct ynode *ref = ynode_path(pv, "spec.claimRef");
	if (ref && ref->type == YNODE_MAP && ynode_path_str(ref, "name")) {
		out->claim_ns = pvb__str_or(ynode_path_str(ref, "namespace"), "default");
		out->claim_name = ynode_path_str(ref, "name");
		out->claim_uid = ynode_path_str(ref, "uid");
		if (out->claim_uid && !*out->claim_uid)
			out->claim_uid = NULL;
	}
	out->deleting = object_is_deleting(pv);
	const char *phase = pvb__str_or(ynode_path_str(pv, "status.phase"), "");
	out->usable = !out->deleting && (!*phase || !strcmp(phase, "Available") ||
					 !strcmp(phase, "Pending") || out->claim_name);
	if (!strcmp(phase, "Failed") || !strcmp(phase, "Released"))
		out->usable = false;
	return true;
}

bool pvb_claim_parse(const struct ynode *pvc, struct pvb_claim *out)
{
	memset(out, 0, sizeof(*out));
	out->ns = obj_namespace(pvc);
	out->name = obj_name(pvc);
	out->uid = obj_uid(pvc);
	out->request = pvb__quantity(ynode_path_str(pvc, "spec.resources.requests.storage"));
	if (!out->name || out->request < 0)
		return false;
	if (!out->ns)
		out->ns = "default";
	out->class = pvb__str_or(ynode_path_str(pvc, "spec.storageClassName"), "");
	out->block = !strcmp(pvb__str_or(ynode_path_str(pvc, "spec.volumeMode"), ""), "Block");
	out->modes = pvb_access_modes(ynode_path(pvc, "spec.accessModes"));
	const struct ynode *sel = ynode_path(pvc, "spec.selector");
	struct selector *s = NULL;
	if (sel && !ynode_is_null(sel) && selector_parse_labelselector(sel, &s, NULL) == 0)
		out->selector = s;
	const char *vn = ynode_path_str(pvc, "spec.volumeName");
	out->volume_name = vn && *vn ? vn : NULL;
	return true;
}

bool pvb_prebound_to(const struct pvb_volume *v, const struct pvb_claim *c)
{
	if (!v->claim_name || strcmp(v->claim_name, c->name) || strcmp(v->claim_ns, c->ns))
		return false;
	return !v->claim_uid || (c->uid && !strcmp(v->claim_uid, c->uid));
}

bool pvb_volume_satisfies(const struct pvb_volume *v, const struct pvb_claim *c,
			  const struct pvb_node *nodes, size_t nnodes)
{
	if ((v->modes & c->modes) != c->modes || c->modes == 0)
		return false;
	if (strcmp(v->class, c->class) || v->block != c->block)
		return false;
	if (c->selector && !selector_matches(c->selector, v->labels))
		return false;
	if (!v->affinity)
		return true;
	if (c->node) {
		const struct ynode *labels = NULL;
		for (size_t i = 0; i < nnodes; i++)
			if (!strcmp(nodes[i].name, c->node))
				labels = nodes[i].labels;
		struct pvb_node n = {.name = c->node, .labels = labels};
		return nodeaffinity_allows(v->affinity, n.name, n.labels);
	}
	for (size_t i = 0; i < nnodes; i++)
		if (nodeaffinity_allows(v->affinity, nodes[i].name, nodes[i].labels))
			return true;
	return false;
}

const struct pvb_volume *pvb_match(const struct pvb_claim *c, const struct pvb_volume *vols,
				   size_t n, const struct pvb_node *nodes, size_t nnodes)
{
	const struct pvb_volume *best = NULL;
	cleanup_free char *key = obj_key(c->ns, c->name);
	for (size_t i = 0; i < n; i++) {
		const struct pvb_volume *v = &vols[i];
		if (v->deleting || v->capacity < c->request)
			continue;
		if (c->volume_name && strcmp(c->volume_name, v->name))
			continue;
		if (v->held_for && strcmp(v->held_for, key))
			continue;
		bool pre = pvb_prebound_to(v, c);
		if (v->claim_name && !pre)
			continue; /* claimed by another */
		if (!pre && !v->usable)
			continue;
		if (!pvb_volume_satisfies(v, c, nodes, nnodes))
			continue;
		if (pre)
			return v;
		if (!best || v->capacity < best->capacity ||
		    (v->capacity == best->capacity && strcmp(v->name, best->name) < 0))
			best = v;
	}
	return best;
}

/* ---- the controller ------------------------------------------------------- */

struct pvb__vol {
	struct ynode *obj; /* our copy */
	struct pvb_volume v;
};

struct pvbinder {
	struct ctrl *c;
	struct informer *pvs, *pvcs, *classes, *nodes, *pods;
	struct workqueue *claimq, *volq;
	struct pvb__vol *vols;	 /* every volume, parsed */
	struct pvb_volume *flat; /* vols[i].v, for the matcher */
	size_t n, cap;
	struct keymap *held;	 /* volume name -> claim key (malloc'd) */
	struct keymap *inflight; /* claim key -> NULL: a write for it runs */
	struct keymap *noted;	 /* claim key -> reason (malloc'd) last reported */
};

static size_t pvb__find(const struct pvbinder *b, const char *name)
{
	for (size_t i = 0; name && i < b->n; i++)
		if (!strcmp(b->vols[i].v.name, name))
			return i;
	return b->n;
}

/* Re-points held_for and the flat copy after any change. */
static void pvb__refresh(struct pvbinder *b, size_t i)
{
	b->vols[i].v.held_for = keymap_get(b->held, b->vols[i].v.name);
	b->flat[i] = b->vols[i].v;
}

static void pvb__vol_put(struct pvbinder *b, const struct ynode *obj)
{
	struct pvb_volume v;
	struct ynode *copy = ynode_clone(obj);
	if (!pvb_volume_parse(copy, &v)) {
		ynode_free(copy);
		return;
	}
	/* A held volume that now shows a claimRef is written: the informer
	 * has caught up. */
	if (v.claim_name && keymap_has(b->held, v.name))
		keymap_del(b->held, v.name);
	size_t i = pvb__find(b, v.name);
	if (i == b->n) {
		if (b->n == b->cap) {
			b->cap = b->cap ? 2 * b->cap : 64;
			b->vols = xrealloc(b->vols, b->cap * sizeof(*b->vols));
			b->flat = xrealloc(b->flat, b->cap * sizeof(*b->flat));
		}
		b->n++;
	} else {
		ynode_free(b->vols[i].obj);
	}
	b->vols[i].obj = copy;
	b->vols[i].v = v;
	pvb__refresh(b, i);
}

static void pvb__vol_drop(struct pvbinder *b, const char *name)
{
	size_t i = pvb__find(b, name);
	if (i == b->n)
		return;
	ynode_free(b->vols[i].obj);
	b->n--;
	if (i != b->n) {
		b->vols[i] = b->vols[b->n];
		b->flat[i] = b->flat[b->n];
	}
	keymap_del(b->held, name);
}

static void pvb__hold(struct pvbinder *b, const char *vol, const char *claim_key)
{
	keymap_set(b->held, vol, xstrdup(claim_key));
	size_t i = pvb__find(b, vol);
	if (i < b->n)
		pvb__refresh(b, i);
}

static void pvb__unhold(struct pvbinder *b, const char *vol)
{
	keymap_del(b->held, vol);
	size_t i = pvb__find(b, vol);
	if (i < b->n)
		pvb__refresh(b, i);
}

/* The nodes, as the matcher wants them; *ready only those Ready. */
struct pvb__nodes {
	struct pvb_node *all;
	size_t n, cap;
	bool ready_only;
};

static int pvb__node_visit(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	struct pvb__nodes *ns = data;
	if (ns->ready_only) {
		const struct ynode *cond =
		    condition_find(ynode_path(obj, "status.conditions"), "Ready");
		if (!condition_field_is(cond, "status", "True"))
			return 0;
		bool unsched = false;
		if (ynode_bool(ynode_path(obj, "spec.unschedulable"), &unsched) == 0 && unsched)
			return 0;
	}
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? 2 * ns->cap : 8;
		ns->all = xrealloc(ns->all, ns->cap * sizeof(*ns->all));
	}
	ns->all[ns->n].name = obj_name(obj);
	ns->all[ns->n].labels = ynode_path(obj, "metadata.labels");
	ns->n++;
	return 0;
}

static void pvb__nodes(struct pvbinder *b, struct pvb__nodes *out, bool ready_only)
{
	memset(out, 0, sizeof(*out));
	out->ready_only = ready_only;
	informer_foreach(b->nodes, NULL, pvb__node_visit, out);
}

/* Reports reason once per claim until it changes. */
static void pvb__note(struct pvbinder *b, const struct ynode *pvc, const char *key,
		      const char *type, const char *reason, const char *msg)
{
	const char *last = keymap_get(b->noted, key);
	if (last && !strcmp(last, msg))
		return;
	keymap_set(b->noted, key, xstrdup(msg));
	events_record(b->c->events, PVB__COMPONENT, pvc, type, reason, "%s", msg);
}

/* ---- writes ---- */

struct pvb__bind_arg {
	char *claim_key, *vol;
	char *ns, *name, *uid, *rv;
	bool by_ctrl;	     /* we set the claimRef / volumeName */
	char *capacity;	     /* the volume's, for the claim's status */
	struct ynode *modes; /* the volume's accessModes */
	struct pvbinder *b;
};

static void pvb__bind_arg_free(void *p)
{
	struct pvb__bind_arg *a = p;
	if (!a)
		return;
	free(a->claim_key);
	free(a->vol);
	free(a->ns);
	free(a->name);
	free(a->uid);
	free(a->rv);
	free(a->capacity);
	ynode_free(a->modes);
	free(a);
}

static struct ynode *pvb__map(struct ynode *m, const char *key)
{
	struct ynode *v = ynode_get(m, key);
	if (!v || v->type != YNODE_MAP) {
		ynode_set(m, key, ynode_new_map());
		v = ynode_get(m, key);
	}
	return v;
}

/* Sets m[key] = val (taken); 1 if that changed it. */
static int pvb__set(struct ynode *m, const char *key, struct ynode *val)
{
	if (ynode_equal(ynode_get(m, key), val)) {
		ynode_free(val);
		return 0;
	}
	ynode_set(m, key, val);
	return 1;
}

/* On a worker: the volume side of a bind, re-checked on what was read. */
static int pvb__mutate_volume(struct ynode *pv, void *arg, struct error **err)
{
	struct pvb__bind_arg *a = arg;
	if (object_is_deleting(pv))
		return error_set(err, EBUSY, "volume %s is being deleted", a->vol);
	const struct ynode *ref = ynode_path(pv, "spec.claimRef");
	const char *rname = ynode_path_str(ref, "name");
	if (rname) {
		const char *rns = pvb__str_or(ynode_path_str(ref, "namespace"), "default");
		const char *ruid = ynode_path_str(ref, "uid");
		if (strcmp(rname, a->name) || strcmp(rns, a->ns) ||
		    (ruid && *ruid && strcmp(ruid, a->uid)))
			return error_set(err, EBUSY, "volume %s is already bound to claim %s/%s",
					 a->vol, rns, rname);
	}
	int changed = 0;
	struct ynode *spec = pvb__map(pv, "spec");
	struct ynode *nref = ynode_new_map();
	ynode_set(nref, "apiVersion", ynode_new_str("v1"));
	ynode_set(nref, "kind", ynode_new_str("PersistentVolumeClaim"));
	ynode_set(nref, "name", ynode_new_str(a->name));
	ynode_set(nref, "namespace", ynode_new_str(a->ns));
	ynode_set(nref, "resourceVersion", ynode_new_str(a->rv ? a->rv : ""));
	ynode_set(nref, "uid", ynode_new_str(a->uid));
	/* A claimRef the user wrote keeps its resourceVersion and fields; we
	 * fill in the uid. */
	if (rname) {
		struct ynode *old = ynode_clone(ref);
		ynode_set(old, "uid", ynode_new_str(a->uid));
		if (!ynode_get(old, "kind"))
			ynode_set(old, "kind", ynode_new_str("PersistentVolumeClaim"));
		if (!ynode_get(old, "namespace"))
			ynode_set(old, "namespace", ynode_new_str(a->ns));
		ynode_free(nref);
		nref = old;
	}
	ynode_sort(nref);
	changed |= pvb__set(spec, "claimRef", nref);
	if (a->by_ctrl && !rname) {
		struct ynode *md = pvb__map(pv, "metadata");
		changed |= pvb__set(pvb__map(md, "annotations"), PVB_ANN_BOUND_BY_CTRL,
				    ynode_new_str("yes"));
	}
	struct ynode *st = pvb__map(pv, "status");
	changed |= pvb__set(st, "phase", ynode_new_str("Bound"));
	if (changed)
		ynode_sort(pv);
	return changed;
}

/* On a worker: the claim side. */
static int pvb__mutate_claim(struct ynode *pvc, void *arg, struct error **err)
{
	struct pvb__bind_arg *a = arg;
	const char *uid = obj_uid(pvc);
	if (!uid || strcmp(uid, a->uid))
		return error_set(err, ESTALE, "claim %s was replaced", a->claim_key);
	const char *vn = ynode_path_str(pvc, "spec.volumeName");
	if (vn && *vn && strcmp(vn, a->vol))
		return error_set(err, EBUSY, "claim %s names volume %s", a->claim_key, vn);
	int changed = 0;
	struct ynode *md = pvb__map(pvc, "metadata");
	struct ynode *ann = pvb__map(md, "annotations");
	if (!vn || !*vn) {
		changed |= pvb__set(pvb__map(pvc, "spec"), "volumeName", ynode_new_str(a->vol));
		changed |= pvb__set(ann, PVB_ANN_BOUND_BY_CTRL, ynode_new_str("yes"));
	}
	changed |= pvb__set(ann, PVB_ANN_BIND_COMPLETED, ynode_new_str("yes"));
	struct ynode *st = pvb__map(pvc, "status");
	changed |= pvb__set(st, "phase", ynode_new_str("Bound"));
	if (a->modes)
		changed |= pvb__set(st, "accessModes", ynode_clone(a->modes));
	if (a->capacity) {
		/* Never lower what the status says (an expansion in flight). */
		int64_t have = pvb__quantity(ynode_path_str(st, "capacity.storage"));
		if (have < pvb__quantity(a->capacity))
			changed |= pvb__set(pvb__map(st, "capacity"), "storage",
					    ynode_new_str(a->capacity));
	}
	if (changed)
		ynode_sort(pvc);
	return changed;
}

static void pvb__claim_done(void *data, const struct writer_result *res)
{
	struct pvb__bind_arg *a = data;
	struct pvbinder *b = a->b;
	keymap_del(b->inflight, a->claim_key);
	if (res->status && res->status != ENOENT && res->status != ESTALE) {
		log_warn("persistentvolume-binder: claim %s: %s", a->claim_key, res->msg);
		workqueue_add_rate_limited(b->claimq, a->claim_key);
	} else if (!res->status) {
		if (res->changed)
			log_info("persistentvolume-binder: claim %s bound to volume %s",
				 a->claim_key, a->vol);
		keymap_del(b->noted, a->claim_key);
		workqueue_forget(b->claimq, a->claim_key);
		/* Its events while the write ran were skipped: look again. */
		workqueue_add(b->claimq, a->claim_key);
	}
	pvb__bind_arg_free(a);
}

static void pvb__volume_done(void *data, const struct writer_result *res)
{
	struct pvb__bind_arg *a = data;
	struct pvbinder *b = a->b;
	if (res->status) {
		/* Taken by another, deleted, or refused: choose again. */
		log_info("persistentvolume-binder: claim %s: volume %s: %s", a->claim_key, a->vol,
			 res->msg);
		pvb__unhold(b, a->vol);
		keymap_del(b->inflight, a->claim_key);
		workqueue_add_rate_limited(b->claimq, a->claim_key);
		pvb__bind_arg_free(a);
		return;
	}
	cleanup_free char *path = obj_path("persistentvolumeclaims", a->ns, a->name);
	writer_update(b->c->writer, path, pvb__mutate_claim, a, NULL, 0, pvb__claim_done, a);
}

static struct pvb__bind_arg *pvb__bind_arg(struct pvbinder *b, const struct ynode *pvc,
					   const char *key, const struct pvb__vol *v, bool by_ctrl)
{
	struct pvb__bind_arg *a = xcalloc(1, sizeof(*a));
	a->b = b;
	a->claim_key = xstrdup(key);
	a->vol = xstrdup(v->v.name);
	a->ns = xstrdup(pvb__str_or(obj_namespace(pvc), "default"));
	a->name = xstrdup(obj_name(pvc));
	a->uid = xstrdup(pvb__str_or(obj_uid(pvc), ""));
	a->rv = obj_rv(pvc) ? xstrdup(obj_rv(pvc)) : NULL;
	a->by_ctrl = by_ctrl;
	const char *cap = ynode_path_str(v->obj, "spec.capacity.storage");
	a->capacity = cap ? xstrdup(cap) : NULL;
	const struct ynode *modes = ynode_path(v->obj, "spec.accessModes");
	a->modes = modes ? ynode_clone(modes) : NULL;
	return a;
}

/* Binds the claim to the volume: the volume, then the claim. */
static void pvb__bind(struct pvbinder *b, const struct ynode *pvc, const char *key,
		      const struct pvb__vol *v, bool by_ctrl)
{
	struct pvb__bind_arg *a = pvb__bind_arg(b, pvc, key, v, by_ctrl);
	pvb__hold(b, v->v.name, key);
	keymap_set(b->inflight, key, NULL);
	cleanup_free char *path = obj_path("persistentvolumes", NULL, v->v.name);
	writer_update(b->c->writer, path, pvb__mutate_volume, a, NULL, 0, pvb__volume_done, a);
}

/* Completes the claim side only (the volume is bound to it already). */
static void pvb__complete_claim(struct pvbinder *b, const struct ynode *pvc, const char *key,
				const struct pvb__vol *v)
{
	struct pvb__bind_arg *a = pvb__bind_arg(b, pvc, key, v, true);
	keymap_set(b->inflight, key, NULL);
	cleanup_free char *path = obj_path("persistentvolumeclaims", a->ns, a->name);
	writer_update(b->c->writer, path, pvb__mutate_claim, a, NULL, 0, pvb__claim_done, a);
}

/* A phase (and message) write, made only if the object still shows the
 * phase and claimRef uid the sync decided on: a bind that got in between
 * is never undone by a stale decision. */
struct pvb__phase_arg {
	char *phase, *msg;
	char *seen_phase; /* "" unset */
	char *seen_uid;	  /* claimRef uid seen, "" none (volumes only) */
	bool volume;
};

static void pvb__phase_arg_free(void *p)
{
	struct pvb__phase_arg *a = p;
	free(a->phase);
	free(a->msg);
	free(a->seen_phase);
	free(a->seen_uid);
	free(a);
}

static int pvb__mutate_phase(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct pvb__phase_arg *a = arg;
	if (strcmp(pvb__str_or(ynode_path_str(obj, "status.phase"), ""), a->seen_phase))
		return 0;
	if (a->volume &&
	    strcmp(pvb__str_or(ynode_path_str(obj, "spec.claimRef.uid"), ""), a->seen_uid))
		return 0;
	struct ynode *st = pvb__map(obj, "status");
	int changed = pvb__set(st, "phase", ynode_new_str(a->phase));
	if (a->msg)
		changed |= pvb__set(st, "message", ynode_new_str(a->msg));
	else if (ynode_get(st, "message")) {
		ynode_del(st, "message");
		changed = 1;
	}
	if (changed)
		ynode_sort(obj);
	return changed;
}

static void pvb__logged(void *data, const struct writer_result *res)
{
	char *what = data;
	if (res->status && res->status != ENOENT && res->status != ESTALE)
		log_warn("persistentvolume-binder: %s: %s", what, res->msg);
	free(what);
}

/* Sets seen's phase (seen: the cached object the decision was made on). */
static void pvb__set_phase(struct pvbinder *b, const char *plural, const struct ynode *seen,
			   const char *phase, const char *msg)
{
	cleanup_free char *path = obj_path(plural, obj_namespace(seen), obj_name(seen));
	struct pvb__phase_arg *a = xcalloc(1, sizeof(*a));
	a->phase = xstrdup(phase);
	a->msg = msg ? xstrdup(msg) : NULL;
	a->seen_phase = xstrdup(pvb__str_or(ynode_path_str(seen, "status.phase"), ""));
	a->volume = !strcmp(plural, "persistentvolumes");
	a->seen_uid = xstrdup(pvb__str_or(ynode_path_str(seen, "spec.claimRef.uid"), ""));
	writer_update(b->c->writer, path, pvb__mutate_phase, a, pvb__phase_arg_free, 0, pvb__logged,
		      xasprintf("%s %s: %s", plural, obj_name(seen), phase));
}

/* Removes the claimRef a controller set (the claim went elsewhere). */
static int pvb__mutate_unbind(struct ynode *pv, void *arg, struct error **err)
{
	(void)err;
	const char *uid = arg;
	const char *ruid = ynode_path_str(pv, "spec.claimRef.uid");
	if (!ruid || strcmp(ruid, uid))
		return 0;
	ynode_del(ynode_get(pv, "spec"), "claimRef");
	ynode_del(ynode_path(pv, "metadata.annotations"), PVB_ANN_BOUND_BY_CTRL);
	pvb__set(pvb__map(pv, "status"), "phase", ynode_new_str("Available"));
	ynode_sort(pv);
	return 1;
}

/* Grows the volume's capacity to the claim's request. */
static int pvb__mutate_capacity(struct ynode *pv, void *arg, struct error **err)
{
	(void)err;
	const char *want = arg;
	int64_t have = pvb__quantity(ynode_path_str(pv, "spec.capacity.storage"));
	if (have >= pvb__quantity(want))
		return 0;
	pvb__set(pvb__map(pvb__map(pv, "spec"), "capacity"), "storage", ynode_new_str(want));
	ynode_sort(pv);
	return 1;
}

/* ---- provisioning ---- */

static const struct ynode *pvb__class(struct pvbinder *b, const char *name)
{
	return name && *name ? informer_get(b->classes, name) : NULL;
}

static bool pvb__class_waits(const struct ynode *sc)
{
	const char *m = ynode_path_str(sc, "volumeBindingMode");
	return m && !strcmp(m, "WaitForFirstConsumer");
}

struct pvb__pod_find {
	const char *claim;
	const char *node;
};

static int pvb__pod_visit(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct pvb__pod_find *f = data;
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (!node || !*node || pod_is_terminal(pod))
		return 0;
	const struct ynode *vols = ynode_path(pod, "spec.volumes");
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++) {
		const char *cn =
		    ynode_path_str(ynode_item(vols, i), "persistentVolumeClaim.claimName");
		if (cn && !strcmp(cn, f->claim)) {
			f->node = node;
			return 1;
		}
	}
	return 0;
}

/* The node a WaitForFirstConsumer claim's volume must be on, or NULL. */
static const char *pvb__consumer_node(struct pvbinder *b, const struct ynode *pvc)
{
	const char *sel = obj_annotation(pvc, PVB_ANN_SELECTED_NODE);
	if (sel && *sel)
		return sel;
	struct pvb__pod_find f = {.claim = obj_name(pvc)};
	informer_foreach(b->pods, obj_namespace(pvc), pvb__pod_visit, &f);
	return f.node;
}

/* For Immediate classes: the Ready node with fewest local-path volumes. */
static const char *pvb__pick_node(struct pvbinder *b)
{
	struct pvb__nodes ns;
	pvb__nodes(b, &ns, true);
	const char *best = NULL;
	size_t best_n = 0;
	for (size_t i = 0; i < ns.n; i++) {
		size_t count = 0;
		for (size_t j = 0; j < b->n; j++)
			if (obj_annotation(b->vols[j].obj, PVB_ANN_PROVISIONED_BY) &&
			    b->vols[j].v.affinity &&
			    nodeaffinity_allows(b->vols[j].v.affinity, ns.all[i].name,
						ns.all[i].labels))
				count++;
		if (!best || count < best_n ||
		    (count == best_n && strcmp(ns.all[i].name, best) < 0)) {
			best = ns.all[i].name;
			best_n = count;
		}
	}
	free(ns.all);
	return best;
}

static void pvb__provisioned(void *data, const struct writer_result *res)
{
	struct pvb__bind_arg *a = data;
	struct pvbinder *b = a->b;
	keymap_del(b->inflight, a->claim_key);
	if (res->status && res->status != EEXIST) {
		log_warn("persistentvolume-binder: provisioning %s for claim %s: %s", a->vol,
			 a->claim_key, res->msg);
		events_record_ref(b->c->events, PVB__COMPONENT, "v1", "PersistentVolumeClaim",
				  a->ns, a->name, a->uid, "Warning", "ProvisioningFailed",
				  "failed to provision volume with StorageClass: %s", res->msg);
		workqueue_add_rate_limited(b->claimq, a->claim_key);
	} else {
		/* The volume's add may have come while the write ran (and was
		 * skipped): look again. */
		workqueue_add(b->claimq, a->claim_key);
	}
	if (!res->status) {
		events_record_ref(b->c->events, PVB__COMPONENT, "v1", "PersistentVolumeClaim",
				  a->ns, a->name, a->uid, "Normal", "ProvisioningSucceeded",
				  "Successfully provisioned volume %s", a->vol);
	}
	pvb__bind_arg_free(a);
}

/* The local-path volume for the claim on node: pvc-<uid>, pre-bound. */
static struct ynode *pvb__local_volume(const struct ynode *pvc, const struct ynode *sc,
				       const char *node, const char *dir)
{
	const char *uid = obj_uid(pvc);
	cleanup_free char *name = xasprintf("pvc-%s", uid);
	cleanup_free char *path = xasprintf("%s/%s", dir, name);
	struct ynode *pv = ynode_new_map();
	ynode_set(pv, "apiVersion", ynode_new_str("v1"));
	ynode_set(pv, "kind", ynode_new_str("PersistentVolume"));
	struct ynode *md = pvb__map(pv, "metadata");
	ynode_set(md, "name", ynode_new_str(name));
	struct ynode *ann = pvb__map(md, "annotations");
	ynode_set(ann, PVB_ANN_PROVISIONED_BY, ynode_new_str(PVB_PROVISIONER));
	ynode_set(ann, PVB_ANN_BOUND_BY_CTRL, ynode_new_str("yes"));
	struct ynode *spec = pvb__map(pv, "spec");
	struct ynode *cap = pvb__map(spec, "capacity");
	ynode_set(cap, "storage",
		  ynode_new_str(ynode_path_str(pvc, "spec.resources.requests.storage")));
	const struct ynode *modes = ynode_path(pvc, "spec.accessModes");
	ynode_set(spec, "accessModes", modes ? ynode_clone(modes) : ynode_new_seq());
	ynode_set(spec, "persistentVolumeReclaimPolicy",
		  ynode_new_str(pvb__str_or(ynode_path_str(sc, "reclaimPolicy"), "Delete")));
	ynode_set(spec, "storageClassName", ynode_new_str(obj_name(sc)));
	ynode_set(spec, "volumeMode",
		  ynode_new_str(pvb__str_or(ynode_path_str(pvc, "spec.volumeMode"), "Filesystem")));
	struct ynode *hp = pvb__map(spec, "hostPath");
	ynode_set(hp, "path", ynode_new_str(path));
	ynode_set(hp, "type", ynode_new_str("DirectoryOrCreate"));
	struct ynode *expr = ynode_new_map();
	ynode_set(expr, "key", ynode_new_str(PVB_HOSTNAME_LABEL));
	ynode_set(expr, "operator", ynode_new_str("In"));
	struct ynode *vals = ynode_new_seq();
	ynode_append(vals, ynode_new_str(node));
	ynode_set(expr, "values", vals);
	struct ynode *exprs = ynode_new_seq();
	ynode_append(exprs, expr);
	struct ynode *term = ynode_new_map();
	ynode_set(term, "matchExpressions", exprs);
	struct ynode *terms = ynode_new_seq();
	ynode_append(terms, term);
	struct ynode *req = ynode_new_map();
	ynode_set(req, "nodeSelectorTerms", terms);
	ynode_set(pvb__map(spec, "nodeAffinity"), "required", req);
	struct ynode *ref = pvb__map(spec, "claimRef");
	ynode_set(ref, "apiVersion", ynode_new_str("v1"));
	ynode_set(ref, "kind", ynode_new_str("PersistentVolumeClaim"));
	ynode_set(ref, "name", ynode_new_str(obj_name(pvc)));
	ynode_set(ref, "namespace", ynode_new_str(pvb__str_or(obj_namespace(pvc), "default")));
	ynode_set(ref, "resourceVersion", ynode_new_str(pvb__str_or(obj_rv(pvc), "")));
	ynode_set(ref, "uid", ynode_new_str(uid));
	ynode_sort(pv);
	return pv;
}

static void pvb__provision(struct pvbinder *b, const struct ynode *pvc, const char *key,
			   const struct ynode *sc, const char *node)
{
	if (!node)
		node = pvb__pick_node(b);
	if (!node) {
		pvb__note(b, pvc, key, "Warning", "ProvisioningFailed",
			  "no Ready node to provision a local-path volume on");
		return;
	}
	const struct ynode *n = informer_get(b->nodes, node);
	const char *dir = n ? obj_annotation(n, PVB_ANN_VOLUMES_DIR) : NULL;
	struct ynode *pv =
	    pvb__local_volume(pvc, sc, node, dir && *dir ? dir : PVB_DEFAULT_VOLUMES_DIR);
	struct pvb__bind_arg *a = xcalloc(1, sizeof(*a));
	a->b = b;
	a->claim_key = xstrdup(key);
	a->vol = xstrdup(obj_name(pv));
	a->ns = xstrdup(pvb__str_or(obj_namespace(pvc), "default"));
	a->name = xstrdup(obj_name(pvc));
	a->uid = xstrdup(pvb__str_or(obj_uid(pvc), ""));
	keymap_set(b->inflight, key, NULL);
	log_info("persistentvolume-binder: provisioning %s on node %s for claim %s", a->vol, node,
		 key);
	writer_create(b->c->writer, "persistentvolumes", pv, 0, pvb__provisioned, a);
}

/* ---- syncs ---- */

static bool pvb__claim_bound_to(const struct ynode *pvc, const struct pvb__vol *v)
{
	const char *vn = ynode_path_str(pvc, "spec.volumeName");
	return vn && !strcmp(vn, v->v.name) && v->v.claim_uid && obj_uid(pvc) &&
	       !strcmp(v->v.claim_uid, obj_uid(pvc));
}

/* A bound claim: its side complete, its volume grown when asked. */
static void pvb__sync_bound(struct pvbinder *b, const struct ynode *pvc, const char *key,
			    const struct pvb__vol *v, const struct pvb_claim *c)
{
	const struct ynode *sc = pvb__class(b, c->class);
	bool grow = false;
	if (c->request > v->v.capacity && sc &&
	    ynode_bool(ynode_get(sc, "allowVolumeExpansion"), &grow) == 0 && grow) {
		log_info("persistentvolume-binder: growing volume %s to %s for claim %s", v->v.name,
			 ynode_path_str(pvc, "spec.resources.requests.storage"), key);
		cleanup_free char *path = obj_path("persistentvolumes", NULL, v->v.name);
		writer_update(b->c->writer, path, pvb__mutate_capacity,
			      xstrdup(ynode_path_str(pvc, "spec.resources.requests.storage")), free,
			      0, pvb__logged, xasprintf("growing %s", v->v.name));
		return;
	}
	const char *phase = ynode_path_str(pvc, "status.phase");
	int64_t have = pvb__quantity(ynode_path_str(pvc, "status.capacity.storage"));
	if (!phase || strcmp(phase, "Bound") || !obj_annotation_true(pvc, PVB_ANN_BIND_COMPLETED) ||
	    have < v->v.capacity)
		pvb__complete_claim(b, pvc, key, v);
}

static int pvb__sync_claim(void *data, const char *key, struct error **err)
{
	(void)err;
	struct pvbinder *b = data;
	const struct ynode *pvc = informer_get(b->pvcs, key);
	if (!pvc || object_is_deleting(pvc) || keymap_has(b->inflight, key))
		return 0;
	struct pvb_claim c;
	if (!pvb_claim_parse(pvc, &c))
		return 0;
	cleanup_selector struct selector *sel = (struct selector *)c.selector;
	bool completed = obj_annotation_true(pvc, PVB_ANN_BIND_COMPLETED);
	const char *phase = pvb__str_or(ynode_path_str(pvc, "status.phase"), "");

	if (c.volume_name) {
		size_t i = pvb__find(b, c.volume_name);
		if (i == b->n) {
			if (completed && strcmp(phase, "Lost")) {
				pvb__set_phase(b, "persistentvolumeclaims", pvc, "Lost", NULL);
				events_record(b->c->events, PVB__COMPONENT, pvc, "Warning",
					      "ClaimLost",
					      "Bound claim has lost its PersistentVolume. "
					      "Data on the volume is lost!");
			} else if (!*phase) {
				pvb__set_phase(b, "persistentvolumeclaims", pvc, "Pending", NULL);
			}
			return 0;
		}
		struct pvb__vol *v = &b->vols[i];
		if (pvb__claim_bound_to(pvc, v)) {
			pvb__sync_bound(b, pvc, key, v, &c);
			return 0;
		}
		if (!v->v.claim_name || pvb_prebound_to(&v->v, &c)) {
			struct pvb__nodes ns;
			pvb__nodes(b, &ns, false);
			bool ok = v->v.capacity >= c.request &&
				  pvb_volume_satisfies(&v->v, &c, ns.all, ns.n) && !v->v.deleting &&
				  (!v->v.held_for || !strcmp(v->v.held_for, key));
			free(ns.all);
			if (ok) {
				pvb__bind(b, pvc, key, v, !v->v.claim_name);
				return 0;
			}
			pvb__note(b, pvc, key, "Warning", PVB_REASON_FAILED_BINDING,
				  "Cannot bind to requested volume: it does not satisfy the claim");
		} else if (completed) {
			if (strcmp(phase, "Lost"))
				pvb__set_phase(b, "persistentvolumeclaims", pvc, "Lost", NULL);
			return 0;
		} else {
			cleanup_free char *msg = xasprintf(
			    "volume \"%s\" already bound to a different claim.", c.volume_name);
			pvb__note(b, pvc, key, "Warning", PVB_REASON_FAILED_BINDING, msg);
		}
		if (!*phase)
			pvb__set_phase(b, "persistentvolumeclaims", pvc, "Pending", NULL);
		return 0;
	}

	const struct ynode *sc = pvb__class(b, c.class);
	if (sc && pvb__class_waits(sc)) {
		c.node = pvb__consumer_node(b, pvc);
		if (!c.node) {
			if (!*phase)
				pvb__set_phase(b, "persistentvolumeclaims", pvc, "Pending", NULL);
			pvb__note(b, pvc, key, "Normal", PVB_REASON_WAIT_CONSUMER,
				  PVB_MSG_WAIT_CONSUMER);
			return 0;
		}
	}
	struct pvb__nodes ns;
	pvb__nodes(b, &ns, false);
	const struct pvb_volume *m = pvb_match(&c, b->flat, b->n, ns.all, ns.n);
	free(ns.all);
	if (m) {
		struct pvb__vol *v = &b->vols[m - b->flat];
		pvb__bind(b, pvc, key, v, !pvb_prebound_to(&v->v, &c));
		return 0;
	}
	if (sc && !strcmp(pvb__str_or(ynode_path_str(sc, "provisioner"), ""), PVB_PROVISIONER)) {
		cleanup_free char *vname = xasprintf("pvc-%s", c.uid ? c.uid : "");
		if (pvb__find(b, vname) == b->n)
			pvb__provision(b, pvc, key, sc, c.node);
		return 0;
	}
	if (!*phase)
		pvb__set_phase(b, "persistentvolumeclaims", pvc, "Pending", NULL);
	if (!*c.class)
		pvb__note(b, pvc, key, "Normal", PVB_REASON_FAILED_BINDING,
			  "no persistent volumes available for this claim and no storage class is "
			  "set");
	else if (!sc) {
		cleanup_free char *msg =
		    xasprintf("storageclass.storage.k8s.io \"%s\" not found", c.class);
		pvb__note(b, pvc, key, "Warning", "ProvisioningFailed", msg);
	}
	return 0;
}

static int pvb__sync_volume(void *data, const char *key, struct error **err)
{
	(void)err;
	struct pvbinder *b = data;
	size_t i = pvb__find(b, key);
	if (i == b->n)
		return 0;
	struct pvb__vol *v = &b->vols[i];
	if (v->v.deleting || keymap_has(b->held, key))
		return 0;
	const char *phase = pvb__str_or(ynode_path_str(v->obj, "status.phase"), "");
	if (!v->v.claim_name) {
		if (strcmp(phase, "Available") && strcmp(phase, "Failed"))
			pvb__set_phase(b, "persistentvolumes", v->obj, "Available", NULL);
		return 0;
	}
	cleanup_free char *ckey = obj_key(v->v.claim_ns, v->v.claim_name);
	if (keymap_has(b->inflight, ckey))
		return 0;
	const struct ynode *pvc = informer_get(b->pvcs, ckey);
	const char *cuid = pvc ? obj_uid(pvc) : NULL;
	if (pvc && (!v->v.claim_uid || (cuid && !strcmp(cuid, v->v.claim_uid)))) {
		const char *vn = ynode_path_str(pvc, "spec.volumeName");
		if (vn && !strcmp(vn, key)) {
			if (strcmp(phase, "Bound"))
				pvb__set_phase(b, "persistentvolumes", v->obj, "Bound", NULL);
		} else if (vn && *vn) {
			/* The claim is bound elsewhere. */
			if (obj_annotation_true(v->obj, PVB_ANN_BOUND_BY_CTRL) && v->v.claim_uid) {
				cleanup_free char *path = obj_path("persistentvolumes", NULL, key);
				writer_update(b->c->writer, path, pvb__mutate_unbind,
					      xstrdup(v->v.claim_uid), free, 0, pvb__logged,
					      xasprintf("unbinding %s", key));
			} else if (strcmp(phase, "Available")) {
				pvb__set_phase(b, "persistentvolumes", v->obj, "Available", NULL);
			}
		} else {
			workqueue_add(b->claimq, ckey); /* the claim side is to come */
			if (!*phase)
				pvb__set_phase(b, "persistentvolumes", v->obj, "Available", NULL);
		}
		return 0;
	}
	if (!v->v.claim_uid) {
		/* Pre-bound to a claim that does not exist yet. */
		if (strcmp(phase, "Available"))
			pvb__set_phase(b, "persistentvolumes", v->obj, "Available", NULL);
		return 0;
	}
	/* The claim is gone: reclaim. */
	const char *policy =
	    pvb__str_or(ynode_path_str(v->obj, "spec.persistentVolumeReclaimPolicy"), "Retain");
	if (!strcmp(policy, "Delete")) {
		if (strcmp(phase, "Released")) {
			pvb__set_phase(b, "persistentvolumes", v->obj, "Released", NULL);
			return 0;
		}
		log_info("persistentvolume-binder: deleting volume %s (reclaim policy Delete)",
			 key);
		cleanup_free char *path = obj_path("persistentvolumes", NULL, key);
		writer_delete(b->c->writer, path, obj_uid(v->obj), 0, pvb__logged,
			      xasprintf("deleting %s", key));
	} else if (!strcmp(policy, "Recycle")) {
		if (strcmp(phase, "Failed")) {
			pvb__set_phase(b, "persistentvolumes", v->obj, "Failed",
				       "Recycle is deprecated and not supported: use Delete or "
				       "Retain (or dynamic provisioning)");
			events_record(b->c->events, PVB__COMPONENT, v->obj, "Warning",
				      "VolumeFailedRecycle",
				      "Recycle is deprecated and not supported: use Delete or "
				      "Retain");
		}
	} else if (strcmp(phase, "Released")) {
		pvb__set_phase(b, "persistentvolumes", v->obj, "Released", NULL);
	}
	return 0;
}

/* ---- informer handlers ---- */

/* Every claim that is not bound yet (a volume appeared or was freed). */
static int pvb__enqueue_unbound(void *data, const char *key, const struct ynode *pvc)
{
	struct pvbinder *b = data;
	const char *phase = ynode_path_str(pvc, "status.phase");
	if (!phase || strcmp(phase, "Bound"))
		workqueue_add(b->claimq, key);
	return 0;
}

static void pvb__on_volume(struct pvbinder *b, const struct ynode *obj)
{
	pvb__vol_put(b, obj);
	size_t i = pvb__find(b, obj_name(obj));
	if (i == b->n)
		return;
	const struct pvb_volume *v = &b->vols[i].v;
	workqueue_add(b->volq, v->name);
	if (v->claim_name) {
		cleanup_free char *ckey = obj_key(v->claim_ns, v->claim_name);
		workqueue_add(b->claimq, ckey);
	} else if (v->usable) {
		informer_foreach(b->pvcs, NULL, pvb__enqueue_unbound, b);
	}
}

static void pvb__on_pv_add(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	pvb__on_volume(data, obj);
}

static void pvb__on_pv_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *obj)
{
	(void)key;
	(void)old;
	pvb__on_volume(data, obj);
}

static void pvb__on_pv_delete(void *data, const char *key, const struct ynode *old)
{
	struct pvbinder *b = data;
	pvb__vol_drop(b, key);
	const char *cn = ynode_path_str(old, "spec.claimRef.name");
	if (cn) {
		cleanup_free char *ckey = obj_key(
		    pvb__str_or(ynode_path_str(old, "spec.claimRef.namespace"), "default"), cn);
		workqueue_add(b->claimq, ckey);
	}
}

static void pvb__on_pvc_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct pvbinder *b = data;
	workqueue_add(b->claimq, key);
}

static void pvb__on_pvc_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *obj)
{
	(void)old;
	pvb__on_pvc_add(data, key, obj);
}

static void pvb__on_pvc_delete(void *data, const char *key, const struct ynode *old)
{
	struct pvbinder *b = data;
	keymap_del(b->noted, key);
	char ns[256];
	const char *name = obj_key_split(key, ns, sizeof(ns));
	for (size_t i = 0; name && i < b->n; i++)
		if (b->vols[i].v.claim_name && !strcmp(b->vols[i].v.claim_name, name) &&
		    !strcmp(b->vols[i].v.claim_ns, ns))
			workqueue_add(b->volq, b->vols[i].v.name);
	(void)old;
}

/* A pod scheduled with claims: its WaitForFirstConsumer claims may bind. */
static void pvb__on_pod(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	struct pvbinder *b = data;
	const char *node = ynode_path_str(obj, "spec.nodeName");
	if (!node || !*node)
		return;
	const struct ynode *vols = ynode_path(obj, "spec.volumes");
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++) {
		const char *cn =
		    ynode_path_str(ynode_item(vols, i), "persistentVolumeClaim.claimName");
		if (!cn)
			continue;
		cleanup_free char *ckey = obj_key(obj_namespace(obj), cn);
		const struct ynode *pvc = informer_get(b->pvcs, ckey);
		if (pvc && !ynode_path_str(pvc, "spec.volumeName"))
			workqueue_add(b->claimq, ckey);
	}
}

static void pvb__on_pod_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *obj)
{
	(void)old;
	pvb__on_pod(data, key, obj);
}

static void pvb__on_class(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	(void)obj;
	struct pvbinder *b = data;
	informer_foreach(b->pvcs, NULL, pvb__enqueue_unbound, b);
}

static void pvb__on_class_update(void *data, const char *key, const struct ynode *old,
				 const struct ynode *obj)
{
	(void)old;
	pvb__on_class(data, key, obj);
}

struct pvbinder *pvbinder_new(struct ctrl *c)
{
	struct pvbinder *b = xcalloc(1, sizeof(*b));
	b->c = c;
	b->pvs = ctrl_informer(c, "persistentvolumes");
	b->pvcs = ctrl_informer(c, "persistentvolumeclaims");
	b->classes = ctrl_informer(c, "storageclasses");
	b->nodes = ctrl_informer(c, "nodes");
	b->pods = ctrl_informer(c, "pods");
	b->held = keymap_new(free);
	b->inflight = keymap_new(NULL);
	b->noted = keymap_new(free);
	b->claimq = workqueue_new(c->loop, "persistentvolume-binder claims", NULL);
	b->volq = workqueue_new(c->loop, "persistentvolume-binder volumes", NULL);
	workqueue_set_handler(b->claimq, pvb__sync_claim, b);
	workqueue_set_handler(b->volq, pvb__sync_volume, b);
	struct informer_handlers hv = {.on_add = pvb__on_pv_add,
				       .on_update = pvb__on_pv_update,
				       .on_delete = pvb__on_pv_delete};
	informer_add_handlers(b->pvs, &hv, b);
	struct informer_handlers hc = {.on_add = pvb__on_pvc_add,
				       .on_update = pvb__on_pvc_update,
				       .on_delete = pvb__on_pvc_delete};
	informer_add_handlers(b->pvcs, &hc, b);
	struct informer_handlers hp = {.on_add = pvb__on_pod, .on_update = pvb__on_pod_update};
	informer_add_handlers(b->pods, &hp, b);
	struct informer_handlers hs = {.on_add = pvb__on_class, .on_update = pvb__on_class_update};
	informer_add_handlers(b->classes, &hs, b);
	return b;
}

void pvbinder_free(struct pvbinder *b)
{
	if (!b)
		return;
	workqueue_free(b->claimq);
	workqueue_free(b->volq);
	for (size_t i = 0; i < b->n; i++)
		ynode_free(b->vols[i].obj);
	free(b->vols);
	free(b->flat);
	keymap_free(b->held);
	keymap_free(b->inflight);
	keymap_free(b->noted);
	free(b);
}
