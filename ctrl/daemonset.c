/* daemonset.c: the DaemonSet controller (see daemonset.h for what it does).
 *
 * One sync per DaemonSet key: find or make the ControllerRevision of the
 * current template (its hash is the pods' controller-revision-hash), claim
 * the pods (keep, adopt, release, as adopt.h), map them to their nodes,
 * then for every node decide whether a pod should run there and create or
 * delete the difference; when nothing is left to create or delete, take
 * one step of the rolling update, clean up old revisions and write the
 * status. Like the ReplicaSet controller it does not sync a DaemonSet
 * again until its informers show every write it made (expect.h).
 *
 * This file must never write a pod it does not own or adopt, nor a
 * DaemonSet's metadata or spec. */
#include "daemonset.h"
#include "adopt.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "owners.h"
#include "replicaset.h"
#include "revision.h"
#include "rollout.h"
#include "selector.h"
#include "strmap.h"
#include "throttle.h"
#include "treepath.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DSC__COMPONENT	     "daemonset-controller"
#define DSC__FAILURE_BASE_MS 1000
#define DSC__FAILURE_MAX_MS  300000

struct dsc {
	struct ctrl *c;
	struct informer *dss, *pods, *nodes, *revs;
	struct owners *owned_pods, *owned_revs;
	struct workqueue *q;
	struct expect *exp;
	struct keymap *batch;	 /* key -> next create batch (uintptr_t) */
	struct keymap *backoff;	 /* key -> create back-off in ms (uintptr_t) */
	struct keymap *retry_at; /* key -> when creates may go again (uintptr_t ms) */
	struct throttle *status;
	int burst;
};

/* ---- decision logic ---------------------------------------------------- */

static const struct {
	const char *key, *effect;
	bool host_network; /* only for hostNetwork pods */
} dsc__tolerations[] = {
    {"node.kubernetes.io/not-ready", "NoExecute", false},
    {"node.kubernetes.io/unreachable", "NoExecute", false},
    {"node.kubernetes.io/disk-pressure", "NoSchedule", false},
    {"node.kubernetes.io/memory-pressure", "NoSchedule", false},
    {"node.kubernetes.io/pid-pressure", "NoSchedule", false},
    {"node.kubernetes.io/unschedulable", "NoSchedule", false},
    {"node.kubernetes.io/network-unavailable", "NoSchedule", true},
};

static bool dsc__str_is(const struct ynode *n, const char *s)
{
	const char *v = ynode_str(n);
	return v ? !strcmp(v, s) : !*s;
}

void dsc_add_daemon_tolerations(struct ynode *spec)
{
	bool host = false;
	if (ynode_bool(ynode_get(spec, "hostNetwork"), &host) < 0)
		host = false;
	struct ynode *tols = ynode_get(spec, "tolerations");
	if (!tols || tols->type != YNODE_SEQ) {
		tols = ynode_new_seq();
		ynode_set(spec, "tolerations", tols);
	}
	for (size_t t = 0; t < ARRAY_SIZE(dsc__tolerations); t++) {
		if (dsc__tolerations[t].host_network && !host)
			continue;
		struct ynode *tol = ynode_new_map();
		ynode_set(tol, "key", ynode_new_str(dsc__tolerations[t].key));
		ynode_set(tol, "operator", ynode_new_str("Exists"));
		ynode_set(tol, "effect", ynode_new_str(dsc__tolerations[t].effect));
		bool replaced = false;
		for (size_t i = 0; i < tols->n && !replaced; i++) {
			struct ynode *old = ynode_item(tols, i);
			if (old->type != YNODE_MAP ||
			    !dsc__str_is(ynode_get(old, "key"), dsc__tolerations[t].key) ||
			    !dsc__str_is(ynode_get(old, "operator"), "Exists") ||
			    !dsc__str_is(ynode_get(old, "effect"), dsc__tolerations[t].effect))
				continue;
			ynode_free(old);
			tols->items[i] = tol;
			replaced = true;
		}
		if (!replaced)
			ynode_append(tols, tol);
	}
}

void dsc_set_node_affinity(struct ynode *spec, const char *node)
{
	struct ynode *na = ynode_get_map(ynode_get_map(spec, "affinity"), "nodeAffinity");
	struct ynode *req = ynode_new_map();
	struct ynode *values = ynode_new_seq();
	ynode_append(values, ynode_new_str(node));
	struct ynode *field = ynode_new_map();
	ynode_set(field, "key", ynode_new_str("metadata.name"));
	ynode_set(field, "operator", ynode_new_str("In"));
	ynode_set(field, "values", values);
	struct ynode *fields = ynode_new_seq();
	ynode_append(fields, field);
	struct ynode *term = ynode_new_map();
	ynode_set(term, "matchFields", fields);
	struct ynode *terms = ynode_new_seq();
	ynode_append(terms, term);
	ynode_set(req, "nodeSelectorTerms", terms);
	ynode_set(na, "requiredDuringSchedulingIgnoredDuringExecution", req);
}

const char *dsc_pod_node(const struct ynode *pod)
{
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (node && *node)
		return node;
	const struct ynode *terms = ynode_path(
	    pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
		 ".nodeSelectorTerms");
	for (size_t i = 0; terms && terms->type == YNODE_SEQ && i < terms->n; i++) {
		const struct ynode *fields = ynode_get(ynode_item(terms, i), "matchFields");
		for (size_t j = 0; fields && fields->type == YNODE_SEQ && j < fields->n; j++) {
			const struct ynode *f = ynode_item(fields, j);
			const struct ynode *vals = ynode_get(f, "values");
			if (dsc__str_is(ynode_get(f, "key"), "metadata.name") &&
			    dsc__str_is(ynode_get(f, "operator"), "In") && vals &&
			    vals->type == YNODE_SEQ && vals->n == 1)
				return ynode_str(ynode_item(vals, 0));
		}
	}
	return NULL;
}

/* A NodeSelectorRequirement against the value v (NULL: absent). */
static bool dsc__req_matches(const struct ynode *req, const char *v)
{
	const char *op = ynode_str(ynode_get(req, "operator"));
	const struct ynode *vals = ynode_get(req, "values");
	size_t nv = vals && vals->type == YNODE_SEQ ? vals->n : 0;
	bool in = false;
	for (size_t i = 0; v && i < nv; i++)
		in |= dsc__str_is(ynode_item(vals, i), v);
	if (!op)
		return false;
	if (!strcmp(op, "In"))
		return in;
	if (!strcmp(op, "NotIn"))
		return !in;
	if (!strcmp(op, "Exists"))
		return v != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return v == NULL;
	if ((!strcmp(op, "Gt") || !strcmp(op, "Lt")) && v && nv == 1) {
		char *e1 = NULL, *e2 = NULL;
		const char *w = ynode_str(ynode_item(vals, 0));
		long long a = strtoll(v, &e1, 10), b = w ? strtoll(w, &e2, 10) : 0;
		if (!*v || *e1 || !w || !*w || *e2)
			return false;
		return op[0] == 'G' ? a > b : a < b;
	}
	return false;
}

/* A NodeSelectorTerm: all its requirements; an empty term matches no node. */
static bool dsc__term_matches(const struct ynode *term, const struct ynode *labels,
			      const char *name)
{
	const struct ynode *exprs = ynode_get(term, "matchExpressions");
	const struct ynode *fields = ynode_get(term, "matchFields");
	size_t ne = exprs && exprs->type == YNODE_SEQ ? exprs->n : 0;
	size_t nf = fields && fields->type == YNODE_SEQ ? fields->n : 0;
	if (!ne && !nf)
		return false;
	for (size_t i = 0; i < ne; i++) {
		const struct ynode *r = ynode_item(exprs, i);
		const char *key = ynode_str(ynode_get(r, "key"));
		if (!dsc__req_matches(r, key ? ynode_str(ynode_get(labels, key)) : NULL))
			return false;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct ynode *r = ynode_item(fields, i);
		if (!dsc__str_is(ynode_get(r, "key"), "metadata.name") ||
		    !dsc__req_matches(r, name))
			return false;
	}
	return true;
}

static bool dsc__node_matches(const struct ynode *spec, const struct ynode *node)
{
	const char *name = obj_name(node);
	const struct ynode *labels = ynode_path(node, "metadata.labels");
	const char *want = ynode_path_str(spec, "nodeName");
	if (want && *want && (!name || strcmp(want, name) != 0))
		return false;
	const struct ynode *sel = ynode_get(spec, "nodeSelector");
	for (size_t i = 0; sel && sel->type == YNODE_MAP && i < sel->n; i++) {
		const char *have = ynode_str(ynode_get(labels, ynode_map_key(sel, i)->str));
		const char *v = ynode_str(ynode_map_val(sel, i));
		if (!have || strcmp(have, v ? v : "") != 0)
			return false;
	}
	const struct ynode *req = ynode_path(
	    spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
	if (!req || ynode_is_null(req))
		return true;
	const struct ynode *terms = ynode_get(req, "nodeSelectorTerms");
	for (size_t i = 0; terms && terms->type == YNODE_SEQ && i < terms->n; i++)
		if (dsc__term_matches(ynode_item(terms, i), labels, name))
			return true;
	return false;
}

static bool dsc__tolerates(const struct ynode *tols, const char *key, const char *value,
			   const char *effect)
{
	for (size_t i = 0; tols && tols->type == YNODE_SEQ && i < tols->n; i++) {
		const struct ynode *t = ynode_item(tols, i);
		const char *te = ynode_str(ynode_get(t, "effect"));
		if (te && *te && strcmp(te, effect) != 0)
			continue;
		const char *tk = ynode_str(ynode_get(t, "key"));
		const char *op = ynode_str(ynode_get(t, "operator"));
		bool exists = op && !strcmp(op, "Exists");
		if (tk && *tk ? strcmp(tk, key) != 0 : !exists)
			continue;
		if (exists || dsc__str_is(ynode_get(t, "value"), value ? value : ""))
			return true;
	}
	return false;
}

void dsc_node_should_run(const struct ynode *spec, const struct ynode *node, bool *run, bool *stay)
{
	*run = *stay = false;
	if (!dsc__node_matches(spec, node))
		return;
	*run = *stay = true;
	const struct ynode *tols = ynode_get(spec, "tolerations");
	const struct ynode *taints = ynode_path(node, "spec.taints");
	for (size_t i = 0; taints && taints->type == YNODE_SEQ && i < taints->n; i++) {
		const struct ynode *t = ynode_item(taints, i);
		const char *effect = ynode_str(ynode_get(t, "effect"));
		const char *key = ynode_str(ynode_get(t, "key"));
		if (!effect || !key ||
		    (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0))
			continue;
		if (dsc__tolerates(tols, key, ynode_str(ynode_get(t, "value")), effect))
			continue;
		*run = false;
		if (!strcmp(effect, "NoExecute"))
			*stay = false;
	}
	bool unsched = false;
	if (ynode_bool(ynode_path(node, "spec.unschedulable"), &unsched) == 0 && unsched &&
	    !dsc__tolerates(tols, "node.kubernetes.io/unschedulable", "", "NoSchedule"))
		*run = false;
}

void dsc_rolling_bounds(const struct ynode *ds, int desired, int *max_surge, int *max_unavailable)
{
	*max_surge = *max_unavailable = 0;
	const char *type = ynode_path_str(ds, "spec.updateStrategy.type");
	if (type && strcmp(type, "RollingUpdate") != 0)
		return;
	const struct ynode *ru = ynode_path(ds, "spec.updateStrategy.rollingUpdate");
	const struct ynode *u = ynode_get(ru, "maxUnavailable");
	const struct ynode *s = ynode_get(ru, "maxSurge");
	if (!u || ynode_is_null(u) || rollout_scaled_value(u, desired, true, max_unavailable) < 0)
		*max_unavailable = 1;
	if (!s || ynode_is_null(s) || rollout_scaled_value(s, desired, true, max_surge) < 0)
		*max_surge = 0;
	if (desired > 0 && *max_surge == 0 && *max_unavailable == 0)
		*max_unavailable = 1;
}

size_t dsc_rolling_update(struct dsc_slot *s, size_t n, int max_surge, int max_unavailable)
{
	size_t writes = 0;
	if (max_surge == 0) {
		int unavailable = 0;
		/* First count what is unavailable already, then pick old pods
		 * in order while the budget lasts. */
		for (size_t i = 0; i < n; i++)
			if ((s[i].has_new && s[i].has_old) || (!s[i].has_new && !s[i].has_old) ||
			    (s[i].has_new && !s[i].new_available))
				unavailable++;
		int budget = max_unavailable - unavailable;
		for (size_t i = 0; i < n; i++) {
			if (!s[i].has_old || s[i].has_new)
				continue;
			if (!s[i].old_available) {
				s[i].delete_old = true;
				writes++;
			} else if (budget > 0) {
				s[i].delete_old = true;
				budget--;
				writes++;
			}
		}
		return writes;
	}
	/* A node with both pods surges until its old pod is gone (stricter
	 * than Kubernetes, which stops counting it once the new pod is
	 * available: the bound then holds at every moment). */
	int surging = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i].has_old && s[i].has_new)
			surging++;
	int budget = max_surge - surging;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].has_old)
			continue;
		if (s[i].has_new) {
			if (s[i].new_available) {
				s[i].delete_old = true;
				writes++;
			}
		} else if (!s[i].old_available) {
			s[i].create_new = true;
			writes++;
		} else if (budget > 0) {
			s[i].create_new = true;
			budget--;
			writes++;
		}
	}
	return writes;
}

/* ---- writes ------------------------------------------------------------- */

/* A write in flight for a DaemonSet. */
struct dsc__op {
	struct dsc *d;
	char *owner; /* the DaemonSet's key */
	char *ns, *ds_name, *ds_uid;
	char *key;		    /* the object written, when known */
	const struct informer *inf; /* where it shows */
	bool gone;
	const char *what; /* "create pod", "delete pod", ... */
};

static struct dsc__op *dsc__op_new(struct dsc *d, const char *owner, const struct ynode *ds,
				   const struct informer *inf, const char *name, const char *what)
{
	struct dsc__op *op = xcalloc(1, sizeof(*op));
	op->d = d;
	op->owner = xstrdup(owner);
	op->ns = xstrdup(obj_namespace(ds) ? obj_namespace(ds) : "");
	op->ds_name = xstrdup(obj_name(ds));
	op->ds_uid = xstrdup(obj_uid(ds) ? obj_uid(ds) : "");
	op->key = name ? obj_key(op->ns, name) : NULL;
	op->inf = inf;
	op->what = what;
	expect_write(d->exp, owner);
	return op;
}

static void dsc__op_free(struct dsc__op *op)
{
	free(op->owner);
	free(op->ns);
	free(op->ds_name);
	free(op->ds_uid);
	free(op->key);
	free(op);
}

static void dsc__event(struct dsc__op *op, const char *type, const char *reason, const char *msg,
		       const char *arg)
{
	struct dsc *d = op->d;
	if (d->c->events)
		events_record_ref(d->c->events, DSC__COMPONENT, "apps/v1", "DaemonSet", op->ns,
				  op->ds_name, op->ds_uid, type, reason, "%s: %s", msg, arg);
}

static void dsc__written(void *data, const struct writer_result *res)
{
	struct dsc__op *op = data;
	struct dsc *d = op->d;
	bool ok = res->status == 0;
	uint64_t now = loop_now_ms();
	cleanup_free char *key = op->key     ? xstrdup(op->key)
				 : res->name ? obj_key(op->ns, res->name)
					     : NULL;
	expect_written(d->exp, op->owner, ok, op->inf, key, res->min_rv, op->gone, now);
	if (res->status == EEXIST) {
		/* A revision's name still taken (by the revision of a DaemonSet
		 * of that name just deleted, until the garbage collector takes
		 * it): look again in a while, not at once. */
		workqueue_add_after(d->q, op->owner, DSC__FAILURE_BASE_MS);
		dsc__op_free(op);
		return;
	}
	bool create_pod = !strcmp(op->what, "create pod");
	bool delete_pod = !strcmp(op->what, "delete pod");
	if (ok && create_pod) {
		keymap_del(d->backoff, op->owner);
		dsc__event(op, "Normal", "SuccessfulCreate", "Created pod", res->name);
	} else if (ok && delete_pod) {
		char ns[256];
		const char *name = obj_key_split(op->key, ns, sizeof(ns));
		dsc__event(op, "Normal", "SuccessfulDelete", "Deleted pod", name ? name : op->key);
	} else if (!ok && res->status != ENOENT && res->status != ESTALE) {
		log_warn("DaemonSet %s: cannot %s %s: %s", op->owner, op->what, res->path,
			 res->msg);
		if (create_pod) {
			dsc__event(op, "Warning", "FailedCreate", "Error creating", res->msg);
			uintptr_t b = (uintptr_t)keymap_get(d->backoff, op->owner);
			b = b ? 2 * b : DSC__FAILURE_BASE_MS;
			if (b > DSC__FAILURE_MAX_MS)
				b = DSC__FAILURE_MAX_MS;
			keymap_set(d->backoff, op->owner, (void *)b);
			keymap_set(d->retry_at, op->owner, (void *)(uintptr_t)(now + b));
			keymap_del(d->batch, op->owner);
			workqueue_add_after(d->q, op->owner, b);
		} else if (delete_pod) {
			dsc__event(op, "Warning", "FailedDelete", "Error deleting", res->msg);
		}
	}
	workqueue_add(d->q, op->owner);
	dsc__op_free(op);
}

/* ---- sync --------------------------------------------------------------- */

struct dsc__pod {
	const struct ynode *obj;
	const char *node; /* its target node */
	int64_t created;
	bool updated; /* the current revision's */
	bool terminal;
};

struct dsc__claim {
	struct dsc *d;
	const char *owner;
	const struct ynode *ds;
	struct adopt_owner as;
	struct selector *sel;
	const char *hash;
	struct dsc__pod *pods;
	size_t n, cap;
	unsigned writes;
};

static int dsc__visit_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct dsc__claim *cl = data;
	struct dsc *d = cl->d;
	if (object_is_deleting(pod))
		return 0;
	enum adopt_claim what = adopt_claim(&cl->as, cl->sel, pod);
	if (what == ADOPT_IGNORE || (what == ADOPT_ADOPT && !pod_is_active(pod)))
		return 0;
	if (what == ADOPT_RELEASE || what == ADOPT_ADOPT) {
		cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
		struct dsc__op *op =
		    dsc__op_new(d, cl->owner, cl->ds, d->pods, obj_name(pod), "update pod");
		adopt_write(d->c->writer, path, &cl->as, what, pod_is_active, dsc__written, op);
		cl->writes++;
		if (what == ADOPT_RELEASE)
			return 0;
	}
	if (cl->n == cl->cap) {
		cl->cap = cl->cap ? 2 * cl->cap : 16;
		cl->pods = xrealloc(cl->pods, cl->cap * sizeof(*cl->pods));
	}
	struct dsc__pod *p = &cl->pods[cl->n++];
	p->obj = pod;
	p->node = dsc_pod_node(pod);
	p->created = obj_time_parse(ynode_path_str(pod, "metadata.creationTimestamp"));
	const char *h = obj_label(pod, DSC_HASH_LABEL);
	p->updated = h && cl->hash && !strcmp(h, cl->hash);
	p->terminal = pod_is_terminal(pod);
	return 0;
}

static int dsc__pod_cmp(const void *a, const void *b)
{
	const struct dsc__pod *x = a, *y = b;
	int c = strcmp(x->node ? x->node : "", y->node ? y->node : "");
	if (c)
		return c;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(obj_name(x->obj), obj_name(y->obj));
}

struct dsc__nodes {
	const struct ynode **v;
	size_t n, cap;
};

static int dsc__visit_node(void *data, const char *key, const struct ynode *node)
{
	(void)key;
	struct dsc__nodes *ns = data;
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? 2 * ns->cap : 64;
		ns->v = xrealloc(ns->v, ns->cap * sizeof(*ns->v));
	}
	ns->v[ns->n++] = node;
	return 0;
}

static int dsc__node_cmp(const void *a, const void *b)
{
	return strcmp(obj_name(*(const struct ynode *const *)a),
		      obj_name(*(const struct ynode *const *)b));
}

/* A node as the sync sees it: whether it wants a pod, and its pods
 * (cl.pods[first .. first + n), sorted oldest first). */
struct dsc__node {
	const struct ynode *obj;
	bool run, stay;
	size_t first, n;
};

static void dsc__delete_pod(struct dsc *d, const char *key, const struct ynode *ds,
			    const struct ynode *pod)
{
	cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
	struct dsc__op *op = dsc__op_new(d, key, ds, d->pods, obj_name(pod), "delete pod");
	op->gone = true;
	writer_delete(d->c->writer, path, obj_uid(pod), 0, dsc__written, op);
}

static void dsc__create_pod(struct dsc *d, const char *key, const struct ynode *ds,
			    const char *hash, const char *node)
{
	struct ynode *pod = rsc_pod_from_template(ds, "DaemonSet", "apps/v1");
	struct ynode *labels = ynode_get_map(ynode_get_map(pod, "metadata"), "labels");
	ynode_set(labels, DSC_HASH_LABEL, ynode_new_str(hash));
	char gen[32];
	snprintf(gen, sizeof(gen), "%lld", obj_int(ds, "metadata.generation", 0));
	ynode_set(labels, DSC_GENERATION_LABEL, ynode_new_str(gen));
	struct ynode *spec = ynode_get_map(pod, "spec");
	dsc_add_daemon_tolerations(spec);
	dsc_set_node_affinity(spec, node);
	cleanup_free char *dir = treepath_folder("pods", obj_namespace(ds));
	struct dsc__op *op = dsc__op_new(d, key, ds, d->pods, NULL, "create pod");
	writer_create(d->c->writer, dir, pod, WRITER_GENERATE, dsc__written, op);
}

/* Finds or makes the revision of ds's current template; *hash gets its
 * hash (NULL while it is being made). Renumbers it when an older one
 * comes back, deletes duplicates. Returns the writes made; revs gets the
 * others (old ones), sorted by number. */
static unsigned dsc__history(struct dsc *d, const char *key, const struct ynode *ds,
			     struct revision_list *revs, const char **hash,
			     const struct ynode **cur_out)
{
	unsigned writes = 0;
	revision_collect(d->owned_revs, obj_uid(ds), revs);
	cleanup_ynode struct ynode *data = revision_data(ds);
	const struct ynode **dups = xcalloc(revs->n + 1, sizeof(*dups));
	size_t ndups = 0;
	long long max_old = 0;
	const struct ynode *cur = revision_split(revs, data, dups, &ndups, &max_old);
	for (size_t i = 0; i < ndups; i++) {
		cleanup_free char *path =
		    obj_path("controllerrevisions", obj_namespace(dups[i]), obj_name(dups[i]));
		struct dsc__op *op =
		    dsc__op_new(d, key, ds, d->revs, obj_name(dups[i]), "delete revision");
		op->gone = true;
		writer_delete(d->c->writer, path, obj_uid(dups[i]), 0, dsc__written, op);
		writes++;
	}
	free(dups);
	*cur_out = cur;
	*hash = NULL;
	if (cur) {
		*hash = obj_label(cur, DSC_HASH_LABEL);
		if (obj_int(cur, "revision", 0) <= max_old) {
			cleanup_free char *path =
			    obj_path("controllerrevisions", obj_namespace(cur), obj_name(cur));
			struct dsc__op *op =
			    dsc__op_new(d, key, ds, d->revs, obj_name(cur), "renumber revision");
			writer_update(d->c->writer, path, revision_mutate_number,
				      (void *)(intptr_t)(max_old + 1), NULL, 0, dsc__written, op);
			writes++;
		}
		return writes;
	}
	long long collision = obj_int(ds, "status.collisionCount", -1);
	cleanup_free char *h = rollout_template_hash(ynode_path(ds, "spec.template"), collision);
	struct ynode *cr = revision_new(ds, "DaemonSet", h, max_old + 1, ynode_clone(data));
	cleanup_free char *dir = treepath_folder("controllerrevisions", obj_namespace(ds));
	struct dsc__op *op = dsc__op_new(d, key, ds, d->revs, obj_name(cr), "create revision");
	writer_create(d->c->writer, dir, cr, 0, dsc__written, op);
	return writes + 1;
}

static bool dsc__hash_in_use(void *arg, const char *h)
{
	const struct dsc__claim *cl = arg;
	for (size_t j = 0; j < cl->n; j++) {
		const char *ph = obj_label(cl->pods[j].obj, DSC_HASH_LABEL);
		if (ph && !strcmp(ph, h))
			return true;
	}
	return false;
}

/* cleanupHistory: old revisions beyond revisionHistoryLimit that no pod
 * uses go, lowest numbers first. */
static void dsc__cleanup_history(struct dsc *d, const char *key, const struct ynode *ds,
				 const struct revision_list *old, struct dsc__claim *cl)
{
	const struct ynode **gone = xcalloc(old->n + 1, sizeof(*gone));
	size_t n = revision_excess(old, obj_int(ds, "spec.revisionHistoryLimit", 10),
				   dsc__hash_in_use, cl, gone);
	for (size_t i = 0; i < n; i++) {
		const struct ynode *r = gone[i];
		cleanup_free char *path =
		    obj_path("controllerrevisions", obj_namespace(r), obj_name(r));
		struct dsc__op *op =
		    dsc__op_new(d, key, ds, d->revs, obj_name(r), "delete revision");
		op->gone = true;
		writer_delete(d->c->writer, path, obj_uid(r), 0, dsc__written, op);
	}
	free(gone);
}

/* updateDaemonSetStatus, over the nodes as the sync found them. */
static struct ynode *dsc__status(const struct ynode *ds, const struct dsc__node *nodes, size_t nn,
				 const struct dsc__claim *cl, int64_t now, int64_t *wait_s)
{
	long long desired = 0, current = 0, ready = 0, available = 0, updated = 0, mis = 0;
	long long min_ready = obj_int(ds, "spec.minReadySeconds", 0);
	int64_t wait = 0;
	for (size_t i = 0; i < nn; i++) {
		const struct dsc__node *n = &nodes[i];
		const struct dsc__pod *p = NULL;
		for (size_t j = 0; j < n->n && !p; j++)
			if (!cl->pods[n->first + j].terminal)
				p = &cl->pods[n->first + j];
		if (!n->run) {
			if (p)
				mis++;
			continue;
		}
		desired++;
		if (!p)
			continue;
		current++;
		if (pod_is_ready(p->obj, NULL)) {
			ready++;
			int64_t w = 0;
			if (pod_is_available(p->obj, min_ready, now, &w))
				available++;
			else if (w > 0 && (!wait || w < wait))
				wait = w;
		}
		if (p->updated)
			updated++;
	}
	if (wait_s)
		*wait_s = wait;
	struct ynode *st = ynode_new_map();
	ynode_set(st, "currentNumberScheduled", ynode_new_int(current));
	ynode_set(st, "numberMisscheduled", ynode_new_int(mis));
	ynode_set(st, "desiredNumberScheduled", ynode_new_int(desired));
	ynode_set(st, "numberReady", ynode_new_int(ready));
	long long gen = obj_int(ds, "metadata.generation", -1);
	if (gen >= 0)
		ynode_set(st, "observedGeneration", ynode_new_int(gen));
	ynode_set(st, "updatedNumberScheduled", ynode_new_int(updated));
	ynode_set(st, "numberAvailable", ynode_new_int(available));
	if (desired - available > 0)
		ynode_set(st, "numberUnavailable", ynode_new_int(desired - available));
	const struct ynode *cc = ynode_path(ds, "status.collisionCount");
	if (cc)
		ynode_set(st, "collisionCount", ynode_clone(cc));
	ynode_sort(st);
	return st;
}

static void dsc__write_status(struct dsc *d, const char *key, const struct ynode *ds,
			      struct ynode *st)
{
	const struct ynode *stored = ynode_get(ds, "status");
	if (ynode_equal(st, stored)) {
		ynode_free(st);
		return;
	}
	uint64_t wait = 0;
	if (!throttle_take(d->status, key, throttle_status_urgent(stored, st), loop_now_ms(),
			   &wait)) {
		workqueue_add_after(d->q, key, wait);
		ynode_free(st);
		return;
	}
	cleanup_free char *path = obj_path("daemonsets", obj_namespace(ds), obj_name(ds));
	struct dsc__op *op = dsc__op_new(d, key, ds, d->dss, obj_name(ds), "write the status of");
	writer_update(d->c->writer, path, ctrl_mutate_status, st, ctrl_ynode_free, 0, dsc__written,
		      op);
}

/* podsShouldBeOnNode for every node, and the pods of nodes that are gone;
 * creates are counted into *create (nodes listed in need). */
static unsigned dsc__manage(struct dsc *d, const char *key, const struct ynode *ds,
			    struct dsc__claim *cl, struct dsc__node *nodes, size_t nn,
			    const char **need, size_t *nneed, bool surge)
{
	unsigned writes = 0;
	for (size_t i = 0; i < nn; i++) {
		struct dsc__node *n = &nodes[i];
		size_t running = 0;
		for (size_t j = 0; j < n->n; j++) {
			struct dsc__pod *p = &cl->pods[n->first + j];
			if (!n->stay || p->terminal) {
				dsc__delete_pod(d, key, ds, p->obj);
				writes++;
			} else {
				running++;
			}
		}
		if (n->run && !running) {
			need[(*nneed)++] = obj_name(n->obj);
			continue;
		}
		if (!n->stay || running <= 1)
			continue;
		/* One pod per node: the oldest; while surging, the oldest of
		 * the current revision and the oldest of an older one. */
		bool have_new = false, have_old = false, first = true;
		for (size_t j = 0; j < n->n; j++) {
			struct dsc__pod *p = &cl->pods[n->first + j];
			if (p->terminal)
				continue;
			bool keep = surge ? (p->updated ? !have_new : !have_old) : first;
			first = false;
			if (p->updated)
				have_new = true;
			else
				have_old = true;
			if (keep)
				continue;
			dsc__delete_pod(d, key, ds, p->obj);
			writes++;
		}
	}
	return writes;
}

static int dsc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct dsc *d = data;
	const struct ynode *ds = informer_get(d->dss, key);
	if (!ds) {
		expect_forget(d->exp, key);
		keymap_del(d->batch, key);
		keymap_del(d->backoff, key);
		keymap_del(d->retry_at, key);
		throttle_forget(d->status, key);
		return 0;
	}
	uint64_t now_ms = loop_now_ms(), recheck = 0;
	if (!expect_ready(d->exp, key, now_ms, &recheck)) {
		if (recheck)
			workqueue_add_after(d->q, key, recheck);
		return 0;
	}
	if (!obj_uid(ds) || object_is_deleting(ds))
		return 0;
	cleanup_error struct error *serr = NULL;
	struct dsc__claim cl = {.d = d, .owner = key, .ds = ds};
	if (selector_parse_labelselector(ynode_path(ds, "spec.selector"), &cl.sel, &serr) < 0) {
		log_warn("DaemonSet %s: spec.selector: %s", key, serr->msg);
		return 0;
	}
	if (selector_is_empty(cl.sel) || selector_is_nothing(cl.sel)) {
		log_warn("DaemonSet %s: an empty selector would select every pod; ignored", key);
		selector_free(cl.sel);
		return 0;
	}
	struct revision_list old = {0};
	const struct ynode *cur = NULL;
	cl.writes = dsc__history(d, key, ds, &old, &cl.hash, &cur);
	if (!cl.hash) {
		/* The revision is being made: sync once it is seen. */
		selector_free(cl.sel);
		free(old.v);
		return 0;
	}
	adopt_owner_init(&cl.as, ds, "apps/v1", "DaemonSet");
	const char *ns = obj_namespace(ds);
	owners_foreach_owned(d->owned_pods, obj_uid(ds), dsc__visit_pod, &cl);
	owners_foreach_orphan(d->owned_pods, ns, dsc__visit_pod, &cl);
	selector_free(cl.sel);
	if (cl.n > 1)
		qsort(cl.pods, cl.n, sizeof(*cl.pods), dsc__pod_cmp);

	/* The template's pod spec, as a daemon pod has it. */
	const struct ynode *ts = ynode_path(ds, "spec.template.spec");
	cleanup_ynode struct ynode *spec = ts ? ynode_clone(ts) : ynode_new_map();
	dsc_add_daemon_tolerations(spec);

	struct dsc__nodes all = {0};
	informer_foreach(d->nodes, NULL, dsc__visit_node, &all);
	if (all.n > 1)
		qsort(all.v, all.n, sizeof(*all.v), dsc__node_cmp);
	struct dsc__node *nodes = xcalloc(all.n + 1, sizeof(*nodes));
	size_t nn = all.n, desired = 0;
	/* Both lists are sorted by node name: walk them together; pods of
	 * nodes that are not there go. */
	size_t pi = 0;
	for (size_t i = 0; i < nn; i++) {
		struct dsc__node *n = &nodes[i];
		n->obj = all.v[i];
		dsc_node_should_run(spec, n->obj, &n->run, &n->stay);
		desired += n->run;
		const char *name = obj_name(n->obj);
		for (; pi < cl.n && strcmp(cl.pods[pi].node ? cl.pods[pi].node : "", name) < 0;
		     pi++) {
			dsc__delete_pod(d, key, ds, cl.pods[pi].obj);
			cl.writes++;
		}
		n->first = pi;
		for (; pi < cl.n && cl.pods[pi].node && !strcmp(cl.pods[pi].node, name); pi++)
			n->n++;
	}
	for (; pi < cl.n; pi++) {
		dsc__delete_pod(d, key, ds, cl.pods[pi].obj);
		cl.writes++;
	}
	free(all.v);

	int max_surge = 0, max_unavailable = 0;
	dsc_rolling_bounds(ds, (int)desired, &max_surge, &max_unavailable);
	const char **need = xcalloc(nn + 1, sizeof(*need));
	size_t nneed = 0;
	cl.writes += dsc__manage(d, key, ds, &cl, nodes, nn, need, &nneed, max_surge > 0);

	bool rolling = !ynode_path_str(ds, "spec.updateStrategy.type") ||
		       !strcmp(ynode_path_str(ds, "spec.updateStrategy.type"), "RollingUpdate");
	if (!cl.writes && !nneed && rolling) {
		struct dsc_slot *slots = xcalloc(nn + 1, sizeof(*slots));
		const struct ynode **olds = xcalloc(nn + 1, sizeof(*olds));
		const char **where = xcalloc(nn + 1, sizeof(*where));
		long long min_ready = obj_int(ds, "spec.minReadySeconds", 0);
		int64_t now = obj_now();
		size_t ns_ = 0;
		for (size_t i = 0; i < nn; i++) {
			struct dsc__node *n = &nodes[i];
			if (!n->stay || !n->n)
				continue;
			struct dsc_slot *s = &slots[ns_];
			bool two = false;
			for (size_t j = 0; j < n->n; j++) {
				struct dsc__pod *p = &cl.pods[n->first + j];
				bool avail = pod_is_available(p->obj, min_ready, now, NULL);
				if (p->updated) {
					two |= s->has_new;
					s->has_new = true;
					s->new_available = avail;
				} else {
					two |= s->has_old;
					s->has_old = true;
					s->old_available = avail;
					olds[ns_] = p->obj;
				}
			}
			if (two) {
				/* manage sorts it out first */
				memset(s, 0, sizeof(*s));
				olds[ns_] = NULL;
				continue;
			}
			where[ns_] = obj_name(n->obj);
			ns_++;
		}
		dsc_rolling_update(slots, ns_, max_surge, max_unavailable);
		for (size_t i = 0; i < ns_; i++) {
			if (slots[i].delete_old) {
				dsc__delete_pod(d, key, ds, olds[i]);
				cl.writes++;
			}
			if (slots[i].create_new)
				need[nneed++] = where[i];
		}
		free(where);
		free(slots);
		free(olds);
	}

	/* Creates: in batches that double while they succeed, within
	 * burst-replicas, not during a failure's back-off. */
	uintptr_t retry = (uintptr_t)keymap_get(d->retry_at, key);
	if (nneed && retry && now_ms < retry) {
		workqueue_add_after(d->q, key, retry - now_ms);
		nneed = 0;
	}
	if (nneed) {
		uintptr_t batch = (uintptr_t)keymap_get(d->batch, key);
		if (!batch)
			batch = 1;
		size_t want = nneed < batch ? nneed : batch;
		if (want > (size_t)d->burst)
			want = (size_t)d->burst;
		for (size_t i = 0; i < want; i++)
			dsc__create_pod(d, key, ds, cl.hash, need[i]);
		cl.writes += (unsigned)want;
		batch *= 2;
		if (batch > (uintptr_t)d->burst)
			batch = (uintptr_t)d->burst;
		keymap_set(d->batch, key, (void *)batch);
	} else {
		keymap_del(d->batch, key);
	}

	if (!cl.writes) {
		dsc__cleanup_history(d, key, ds, &old, &cl);
		int64_t wait = 0;
		struct ynode *st = dsc__status(ds, nodes, nn, &cl, obj_now(), &wait);
		dsc__write_status(d, key, ds, st);
		if (wait > 0)
			workqueue_add_after(d->q, key, (uint64_t)wait * 1000 + 50);
	}
	free(need);
	free(nodes);
	free(old.v);
	free(cl.pods);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void dsc__on_ds(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct dsc *d = data;
	workqueue_add(d->q, key);
}

static void dsc__on_ds_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *obj)
{
	(void)old;
	dsc__on_ds(data, key, obj);
}

static int dsc__visit_enqueue(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct dsc *d = data;
	workqueue_add(d->q, key);
	return 0;
}

/* A node came or went: every DaemonSet looks at it. */
static void dsc__on_node(void *data, const char *key, const struct ynode *node)
{
	(void)key;
	(void)node;
	struct dsc *d = data;
	informer_foreach(d->dss, NULL, dsc__visit_enqueue, d);
}

/* Only labels, taints and unschedulable decide where a daemon pod runs:
 * heartbeats (status) are ignored. */
static void dsc__on_node_update(void *data, const char *key, const struct ynode *old,
				const struct ynode *node)
{
	if (ynode_equal(ynode_path(old, "metadata.labels"), ynode_path(node, "metadata.labels")) &&
	    ynode_equal(ynode_get(old, "spec"), ynode_get(node, "spec")))
		return;
	dsc__on_node(data, key, node);
}

static bool dsc__enqueue_owner(struct dsc *d, const struct ynode *obj)
{
	bool controlled = false;
	cleanup_free char *key = adopt_resolve_owner(d->dss, "DaemonSet", obj, &controlled);
	if (key)
		workqueue_add(d->q, key);
	return controlled;
}

struct dsc__match {
	struct dsc *d;
	const struct ynode *labels;
};

static int dsc__visit_match(void *data, const char *key, const struct ynode *ds)
{
	struct dsc__match *m = data;
	cleanup_selector struct selector *sel = NULL;
	if (selector_parse_labelselector(ynode_path(ds, "spec.selector"), &sel, NULL) == 0 &&
	    !selector_is_empty(sel) && selector_matches(sel, m->labels))
		workqueue_add(m->d->q, key);
	return 0;
}

static void dsc__on_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct dsc *d = data;
	if (dsc__enqueue_owner(d, pod) || !pod_is_active(pod))
		return;
	struct dsc__match m = {.d = d, .labels = ynode_path(pod, "metadata.labels")};
	informer_foreach(d->dss, obj_namespace(pod), dsc__visit_match, &m);
}

static void dsc__on_pod_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *pod)
{
	struct dsc *d = data;
	if (!ynode_equal(obj_controller_ref(old), obj_controller_ref(pod)))
		dsc__enqueue_owner(d, old);
	dsc__on_pod(data, key, pod);
}

static void dsc__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	dsc__enqueue_owner(data, old);
}

static void dsc__on_rev(void *data, const char *key, const struct ynode *rev)
{
	(void)key;
	dsc__enqueue_owner(data, rev);
}

static void dsc__on_rev_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *rev)
{
	(void)old;
	dsc__on_rev(data, key, rev);
}

struct dsc *dsc_new(struct ctrl *c)
{
	struct dsc *d = xcalloc(1, sizeof(*d));
	d->c = c;
	d->burst = c->cfg && c->cfg->burst_replicas > 0 ? c->cfg->burst_replicas : 500;
	d->dss = ctrl_informer(c, "daemonsets");
	d->pods = ctrl_informer(c, "pods");
	d->nodes = ctrl_informer(c, "nodes");
	d->revs = ctrl_informer(c, "controllerrevisions");
	d->owned_pods = ctrl_owners(c, "pods");
	d->owned_revs = ctrl_owners(c, "controllerrevisions");
	d->q = workqueue_new(c->loop, "daemonsets", NULL);
	d->exp = expect_new();
	d->batch = keymap_new(NULL);
	d->backoff = keymap_new(NULL);
	d->retry_at = keymap_new(NULL);
	d->status = throttle_new(c->cfg ? c->cfg->status_interval_ms : 0);
	struct informer_handlers dh = {
	    .on_add = dsc__on_ds,
	    .on_update = dsc__on_ds_update,
	    .on_delete = dsc__on_ds,
	};
	informer_add_handlers(d->dss, &dh, d);
	struct informer_handlers ph = {
	    .on_add = dsc__on_pod,
	    .on_update = dsc__on_pod_update,
	    .on_delete = dsc__on_pod_delete,
	};
	informer_add_handlers(d->pods, &ph, d);
	struct informer_handlers nh = {
	    .on_add = dsc__on_node,
	    .on_update = dsc__on_node_update,
	    .on_delete = dsc__on_node,
	};
	informer_add_handlers(d->nodes, &nh, d);
	struct informer_handlers rh = {
	    .on_add = dsc__on_rev,
	    .on_update = dsc__on_rev_update,
	    .on_delete = dsc__on_rev,
	};
	informer_add_handlers(d->revs, &rh, d);
	workqueue_set_handler(d->q, dsc__sync, d);
	return d;
}

void dsc_free(struct dsc *d)
{
	if (!d)
		return;
	workqueue_free(d->q);
	expect_free(d->exp);
	keymap_free(d->batch);
	keymap_free(d->backoff);
	keymap_free(d->retry_at);
	throttle_free(d->status);
	free(d);
}
