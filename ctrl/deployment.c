/* deployment.c: the Deployment controller.
 *
 * A sync reads the Deployment and the ReplicaSets it owns (claiming
 * orphans that match its selector, releasing its own that no longer do),
 * makes a plan on rollout_rs views with the pure functions below (ports of
 * Kubernetes' rolloutRolling, rolloutRecreate, scale and cleanup), then
 * writes what the plan changed: new ReplicaSets, sizes and annotations,
 * deletions, and the status. Like the ReplicaSet controller it does not
 * sync a Deployment again until its informers show every write it made.
 *
 * This file must never write a Deployment's metadata or spec. */
#include "deployment.h"
#include "adopt.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "owners.h"
#include "selector.h"
#include "throttle.h"
#include "timefmt.h"
#include "treepath.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct depc {
	struct ctrl *c;
	struct informer *deps, *sets, *pods;
	struct owners *owned_sets, *owned_pods; /* by controller */
	struct workqueue *q;
	struct expect *exp;
	struct throttle *status; /* status-only writes */
};

#define DEPC__COMPONENT "deployment-controller"

/* ---- conditions -------------------------------------------------------- */

static struct ynode *depc__cond(const struct ynode *st, const char *type)
{
	return condition_find(ynode_get(st, "conditions"), type);
}

/* Sets the condition whatever it was: lastUpdateTime now, the transition
 * time kept while the status holds, the condition last in the list. */
static void depc__cond_put(struct ynode *st, const char *type, const char *status,
			   const char *reason, const char *msg)
{
	char now[RFC3339_SIZE];
	obj_time_format(obj_now(), now);
	const struct condition c = {type, status, reason, msg};
	condition_set(st, &c, now, CONDITION_UPDATE_TIME | CONDITION_LAST);
}

/* SetDeploymentCondition: same status and reason changes nothing. */
static void depc__cond_set(struct ynode *st, const char *type, const char *status,
			   const char *reason, const char *msg)
{
	const struct ynode *cur = depc__cond(st, type);
	if (cur && condition_field_is(cur, "status", status) &&
	    condition_field_is(cur, "reason", reason))
		return;
	depc__cond_put(st, type, status, reason, msg);
}

/* ---- status ------------------------------------------------------------ */

static long long depc__st(const struct ynode *st, const char *field)
{
	return obj_int(st, field, 0);
}

/* calculateStatus, from the working status (conditions, collisionCount). */
static struct ynode *depc__calculate_status(const struct rollout_params *p,
					    const struct rollout_rs *rs, size_t n, size_t newi,
					    const struct ynode *work)
{
	long long available = 0, total = 0, actual = 0, ready = 0;
	for (size_t i = 0; i < n; i++) {
		if (!!rs[i].remove)
			continue;
		available += rs[i].available;
		total += rs[i].replicas;
		actual += rs[i].status_replicas;
		ready += rs[i].ready;
	}
	long long unavailable = total - available;
	if (unavailable < 0)
		unavailable = 0;
	struct ynode *st = ynode_new_map();
	ynode_set(st, "observedGeneration", ynode_new_int(p->generation));
	ynode_set(st, "replicas", ynode_new_int(actual));
	ynode_set(st, "updatedReplicas",
		  ynode_new_int(newi == ROLLOUT_NONE ? 0 : rs[newi].status_replicas));
	ynode_set(st, "readyReplicas", ynode_new_int(ready));
	ynode_set(st, "availableReplicas", ynode_new_int(available));
	ynode_set(st, "unavailableReplicas", ynode_new_int(unavailable));
	const struct ynode *cc = ynode_get(work, "collisionCount");
	if (cc)
		ynode_set(st, "collisionCount", ynode_clone(cc));
	const struct ynode *conds = ynode_get(work, "conditions");
	if (conds && conds->type == YNODE_SEQ)
		ynode_set(st, "conditions", ynode_clone(conds));
	if (available >= (long long)p->replicas - p->max_unavailable)
		depc__cond_set(st, "Available", "True", "MinimumReplicasAvailable",
			       "Deployment has minimum availability.");
	else
		depc__cond_set(st, "Available", "False", "MinimumReplicasUnavailable",
			       "Deployment does not have minimum availability.");
	return st;
}

static bool depc__complete(const struct rollout_params *p, const struct ynode *st)
{
	return depc__st(st, "updatedReplicas") == p->replicas &&
	       depc__st(st, "replicas") == p->replicas &&
	       depc__st(st, "availableReplicas") == p->replicas &&
	       depc__st(st, "observedGeneration") >= p->generation;
}

static bool depc__progressing(const struct ynode *old, const struct ynode *st)
{
	long long old_old = depc__st(old, "replicas") - depc__st(old, "updatedReplicas");
	long long new_old = depc__st(st, "replicas") - depc__st(st, "updatedReplicas");
	return depc__st(st, "updatedReplicas") > depc__st(old, "updatedReplicas") ||
	       new_old < old_old ||
	       depc__st(st, "readyReplicas") > depc__st(old, "readyReplicas") ||
	       depc__st(st, "availableReplicas") > depc__st(old, "availableReplicas");
}

static bool depc__timed_out(const struct rollout_params *p, const struct ynode *st)
{
	if (p->progress_deadline < 0)
		return false;
	const struct ynode *c = depc__cond(st, "Progressing");
	if (!c || condition_field_is(c, "reason", "NewReplicaSetAvailable"))
		return false;
	if (condition_field_is(c, "reason", "ProgressDeadlineExceeded"))
		return true;
	int64_t from = obj_time_parse(ynode_str(ynode_get(c, "lastUpdateTime")));
	return from >= 0 && from + p->progress_deadline < obj_now();
}

/* syncRolloutStatus's conditions on the calculated status st; work is
 * the Deployment's status as this sync left it. */
static void depc__rollout_conditions(const struct rollout_params *p, const struct rollout_rs *rs,
				     size_t newi, const struct ynode *work, struct ynode *st)
{
	if (p->progress_deadline < 0)
		condition_remove(st, "Progressing");
	const struct ynode *cur = depc__cond(work, "Progressing");
	bool complete_before = depc__st(st, "replicas") == depc__st(st, "updatedReplicas") && cur &&
			       condition_field_is(cur, "reason", "NewReplicaSetAvailable");
	if (p->progress_deadline < 0 || complete_before)
		return;
	const char *name = newi == ROLLOUT_NONE ? NULL : rs[newi].name;
	if (depc__complete(p, st)) {
		cleanup_free char *msg =
		    xasprintf("ReplicaSet \"%s\" has successfully progressed.", name ? name : "");
		depc__cond_set(st, "Progressing", "True", "NewReplicaSetAvailable", msg);
	} else if (depc__progressing(work, st)) {
		cleanup_free char *msg = name ? xasprintf("ReplicaSet \"%s\" is progressing.", name)
					      : xstrdup("Deployment is progressing.");
		/* Always set (its lastUpdateTime moves), the transition time
		 * kept from the working status's True one. */
		depc__cond_put(st, "Progressing", "True", "ReplicaSetUpdated", msg);
	} else if (depc__timed_out(p, st)) {
		cleanup_free char *msg =
		    xasprintf("ReplicaSet \"%s\" has timed out progressing.", name ? name : "");
		depc__cond_set(st, "Progressing", "False", "ProgressDeadlineExceeded", msg);
	}
}

/* checkPausedConditions on the working status. */
static void depc__paused_conditions(const struct rollout_params *p, struct ynode *work)
{
	if (p->progress_deadline < 0)
		return;
	const struct ynode *c = depc__cond(work, "Progressing");
	if (c && condition_field_is(c, "reason", "ProgressDeadlineExceeded"))
		return;
	bool paused_cond = c && condition_field_is(c, "reason", "DeploymentPaused");
	if (p->paused && !paused_cond)
		depc__cond_set(work, "Progressing", "Unknown", "DeploymentPaused",
			       "Deployment is paused");
	else if (!p->paused && paused_cond)
		depc__cond_set(work, "Progressing", "Unknown", "DeploymentResumed",
			       "Deployment is resumed");
}

/* ---- writes -------------------------------------------------------------- */

/* A write in flight for a Deployment. */
struct depc__op {
	struct depc *dc;
	char *owner; /* the Deployment's key */
	char *ns;
	char *d_name, *d_uid;
	char *key;	  /* the object written (a set's key, or owner for status) */
	bool status;	  /* the Deployment's status */
	bool gone;	  /* a delete */
	const char *what; /* "create", "update", "delete", "status": for a failure */
	int from, to;	  /* a scale, for its event; from < 0: none */
};

static struct depc__op *depc__op_new(struct depc *dc, const char *owner, const struct ynode *d,
				     const char *key)
{
	struct depc__op *op = xcalloc(1, sizeof(*op));
	op->dc = dc;
	op->owner = xstrdup(owner);
	op->ns = xstrdup(obj_namespace(d) ? obj_namespace(d) : "");
	op->d_name = xstrdup(obj_name(d));
	op->d_uid = xstrdup(obj_uid(d) ? obj_uid(d) : "");
	op->key = key ? xstrdup(key) : NULL;
	op->what = "update";
	op->from = -1;
	expect_write(dc->exp, owner);
	return op;
}

static void depc__op_free(struct depc__op *op)
{
	free(op->owner);
	free(op->ns);
	free(op->d_name);
	free(op->d_uid);
	free(op->key);
	free(op);
}

static void depc__written(void *data, const struct writer_result *res)
{
	struct depc__op *op = data;
	struct depc *dc = op->dc;
	bool ok = res->status == 0;
	cleanup_free char *key = NULL;
	if (op->key)
		key = xstrdup(op->key);
	else if (res->name)
		key = obj_key(op->ns, res->name);
	expect_written(dc->exp, op->owner, ok, op->status ? dc->deps : dc->sets, key, res->min_rv,
		       op->gone, loop_now_ms());
	if (ok && op->from >= 0 && op->from != op->to && dc->c->events) {
		char ns_buf[256];
		const char *rs_name = key ? obj_key_split(key, ns_buf, sizeof(ns_buf)) : NULL;
		events_record_ref(dc->c->events, DEPC__COMPONENT, "apps/v1", "Deployment", op->ns,
				  op->d_name, op->d_uid, "Normal", "ScalingReplicaSet",
				  "Scaled %s replica set %s to %d from %d",
				  op->to > op->from ? "up" : "down", rs_name ? rs_name : "?",
				  op->to, op->from);
	}
	if (!ok && res->status != ENOENT && res->status != ESTALE && res->status != EEXIST) {
		log_warn("Deployment %s: cannot %s %s: %s", op->owner, op->what, res->path,
			 res->msg);
		if (dc->c->events && !op->status)
			events_record_ref(dc->c->events, DEPC__COMPONENT, "apps/v1", "Deployment",
					  op->ns, op->d_name, op->d_uid, "Warning",
					  !strcmp(op->what, "create")	? "FailedCreate"
					  : !strcmp(op->what, "delete") ? "FailedDelete"
									: "FailedUpdate",
					  "Cannot %s %s: %s", op->what, res->path, res->msg);
	}
	workqueue_add(dc->q, op->owner);
	depc__op_free(op);
}

/* What an update changes on a ReplicaSet. */
struct depc__change {
	int replicas;		   /* -1: leave */
	long long desired, max;	   /* -1: leave */
	long long revision;	   /* -1: leave */
	long long min_ready;	   /* -1: leave */
	struct ynode *annotations; /* to set; NULL: none */
};

static void depc__change_free(void *p)
{
	struct depc__change *ch = p;
	ynode_free(ch->annotations);
	free(ch);
}

static struct depc__change *depc__change_new(void)
{
	struct depc__change *ch = xcalloc(1, sizeof(*ch));
	ch->replicas = -1;
	ch->desired = ch->max = ch->revision = ch->min_ready = -1;
	return ch;
}

static bool depc__set_annotation(struct ynode *rs, const char *key, const char *value)
{
	const char *cur = obj_annotation(rs, key);
	if (cur && !strcmp(cur, value))
		return false;
	struct ynode *md = ynode_get_map(rs, "metadata");
	ynode_set(ynode_get_map(md, "annotations"), key, ynode_new_str(value));
	return true;
}

static bool depc__set_annotation_int(struct ynode *rs, const char *key, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	return depc__set_annotation(rs, key, buf);
}

/* The revision annotation, keeping the one it replaces in the history
 * annotation (a rollback to this set). */
static bool depc__set_revision(struct ynode *rs, long long revision)
{
	const char *cur = obj_annotation(rs, CTRL_REVISION_ANNOTATION);
	long long old = cur ? strtoll(cur, NULL, 10) : 0;
	if (cur && old >= revision)
		return false;
	if (cur && *cur) {
		const char *hist = obj_annotation(rs, CTRL_REVISION_HISTORY_ANNOTATION);
		cleanup_free char *h = hist && *hist ? xasprintf("%s,%s", hist, cur) : xstrdup(cur);
		depc__set_annotation(rs, CTRL_REVISION_HISTORY_ANNOTATION, h);
	}
	return depc__set_annotation_int(rs, CTRL_REVISION_ANNOTATION, revision);
}

static int depc__mutate_rs(struct ynode *rs, void *arg, struct error **err)
{
	(void)err;
	struct depc__change *ch = arg;
	int changed = 0;
	if (ch->replicas >= 0 && obj_int(rs, "spec.replicas", -1) != ch->replicas) {
		ynode_set(ynode_get_map(rs, "spec"), "replicas", ynode_new_int(ch->replicas));
		changed = 1;
	}
	if (ch->min_ready >= 0 && obj_int(rs, "spec.minReadySeconds", 0) != ch->min_ready) {
		ynode_set(ynode_get_map(rs, "spec"), "minReadySeconds",
			  ynode_new_int(ch->min_ready));
		changed = 1;
	}
	if (ch->desired >= 0)
		changed |= depc__set_annotation_int(rs, CTRL_DESIRED_ANNOTATION, ch->desired);
	if (ch->max >= 0)
		changed |= depc__set_annotation_int(rs, CTRL_MAX_ANNOTATION, ch->max);
	if (ch->revision >= 0)
		changed |= depc__set_revision(rs, ch->revision);
	for (size_t i = 0; ch->annotations && i < ch->annotations->n; i++) {
		const char *v = ynode_str(ynode_map_val(ch->annotations, i));
		if (v)
			changed |=
			    depc__set_annotation(rs, ynode_map_key(ch->annotations, i)->str, v);
	}
	return changed;
}

/* The Deployment's annotations that its ReplicaSets carry too. */
static struct ynode *depc__copied_annotations(const struct ynode *d)
{
	static const char *const skip[] = {
	    "kubectl.kubernetes.io/last-applied-configuration",
	    CTRL_REVISION_ANNOTATION,
	    CTRL_REVISION_HISTORY_ANNOTATION,
	    CTRL_DESIRED_ANNOTATION,
	    CTRL_MAX_ANNOTATION,
	    "deprecated.deployment.rollback.to",
	    CTRL_ORPHAN_ANNOTATION,
	};
	const struct ynode *ann = ynode_path(d, "metadata.annotations");
	struct ynode *out = ynode_new_map();
	for (size_t i = 0; ann && ann->type == YNODE_MAP && i < ann->n; i++) {
		const char *k = ynode_map_key(ann, i)->str;
		bool skipped = false;
		for (size_t j = 0; j < ARRAY_SIZE(skip); j++)
			skipped |= !strcmp(k, skip[j]);
		if (!skipped && ynode_str(ynode_map_val(ann, i)))
			ynode_set(out, k, ynode_clone(ynode_map_val(ann, i)));
	}
	return out;
}

/* A new ReplicaSet for d's template, with hash and revision. */
static struct ynode *depc__new_rs(const struct ynode *d, const char *hash, long long revision)
{
	const struct ynode *tmpl = ynode_path(d, "spec.template");
	struct ynode *rs = ynode_new_map();
	ynode_set(rs, "apiVersion", ynode_new_str("apps/v1"));
	ynode_set(rs, "kind", ynode_new_str("ReplicaSet"));
	struct ynode *md = ynode_get_map(rs, "metadata");
	cleanup_free char *name = xasprintf("%s-%s", obj_name(d), hash);
	ynode_set(md, "name", ynode_new_str(name));
	ynode_set(md, "namespace", ynode_new_str(obj_namespace(d)));
	struct ynode *t = ynode_clone(tmpl);
	struct ynode *tlabels = ynode_get_map(ynode_get_map(t, "metadata"), "labels");
	ynode_set(tlabels, CTRL_HASH_LABEL, ynode_new_str(hash));
	ynode_set(md, "labels", ynode_clone(tlabels));
	struct ynode *ann = depc__copied_annotations(d);
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", revision);
	ynode_set(ann, CTRL_REVISION_ANNOTATION, ynode_new_str(buf));
	ynode_set(md, "annotations", ann);
	obj_add_owner_ref(
	    rs, obj_owner_ref_new("apps/v1", "Deployment", obj_name(d), obj_uid(d), true));
	struct ynode *spec = ynode_get_map(rs, "spec");
	ynode_set(spec, "replicas", ynode_new_int(0));
	long long min_ready = obj_int(d, "spec.minReadySeconds", 0);
	if (min_ready > 0)
		ynode_set(spec, "minReadySeconds", ynode_new_int(min_ready));
	struct ynode *sel = ynode_clone(ynode_path(d, "spec.selector"));
	if (!sel || sel->type != YNODE_MAP) {
		ynode_free(sel);
		sel = ynode_new_map();
	}
	ynode_set(ynode_get_map(sel, "matchLabels"), CTRL_HASH_LABEL, ynode_new_str(hash));
	ynode_set(spec, "selector", sel);
	ynode_set(spec, "template", t);
	return rs;
}

/* ---- sync ---------------------------------------------------------------- */

struct depc__claim {
	struct depc *dc;
	const char *owner;
	const struct ynode *d;
	const char *uid;
	struct adopt_owner as; /* the Deployment, claiming */
	struct selector *sel;
	const struct ynode **sets;
	size_t n, cap;
};

static int depc__visit_rs(void *data, const char *key, const struct ynode *rs)
{
	struct depc__claim *cl = data;
	struct depc *dc = cl->dc;
	enum adopt_claim what = adopt_claim(&cl->as, cl->sel, rs);
	if (what == ADOPT_IGNORE)
		return 0;
	if (what == ADOPT_ADOPT || what == ADOPT_RELEASE) {
		cleanup_free char *path = obj_path("replicasets", obj_namespace(rs), obj_name(rs));
		struct depc__op *op = depc__op_new(dc, cl->owner, cl->d, key);
		adopt_write(dc->c->writer, path, &cl->as, what, NULL, depc__written, op);
		if (what == ADOPT_RELEASE)
			return 0;
	}
	if (cl->n == cl->cap) {
		cl->cap = cl->cap ? 2 * cl->cap : 8;
		cl->sets = xrealloc(cl->sets, cl->cap * sizeof(*cl->sets));
	}
	cl->sets[cl->n++] = rs;
	return 0;
}

struct depc__oldpods {
	const char **uids;
	size_t n;
	bool running;
};

static int depc__visit_oldpod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct depc__oldpods *o = data;
	const struct ynode *ref = obj_controller_ref(pod);
	const char *uid = ref ? ynode_str(ynode_get(ref, "uid")) : NULL;
	if (!uid)
		return 0;
	for (size_t i = 0; i < o->n; i++) {
		if (strcmp(o->uids[i], uid) != 0)
			continue;
		if (pod_is_terminal(pod))
			return 0;
		o->running = true;
		return 1;
	}
	return 0;
}

/* Whether pods of the old sets still run (Recreate waits for none). */
static bool depc__old_pods_running(struct depc *dc, const struct rollout_rs *rs, size_t n,
				   size_t newi)
{
	struct depc__oldpods o = {.uids = xcalloc(n + 1, sizeof(char *))};
	for (size_t i = 0; i < n; i++) {
		if (i == newi || rs[i].fresh)
			continue;
		if (rs[i].status_replicas > 0) {
			free(o.uids);
			return true;
		}
		if (obj_uid(rs[i].obj))
			o.uids[o.n++] = obj_uid(rs[i].obj);
	}
	for (size_t i = 0; i < o.n && !o.running; i++)
		owners_foreach_owned(dc->owned_pods, o.uids[i], depc__visit_oldpod, &o);
	free(o.uids);
	return o.running;
}

/* Plans the new ReplicaSet for the template; ROLLOUT_NONE on a hash
 * collision (collisionCount went up in work). */
static size_t depc__plan_create(struct depc *dc, const struct ynode *d,
				const struct rollout_params *p, struct rollout_rs *rs, size_t *n,
				long long max_old, struct ynode *work, struct ynode **fresh)
{
	long long cc = obj_int(work, "collisionCount", -1);
	cleanup_free char *hash = rollout_template_hash(ynode_path(d, "spec.template"), cc);
	cleanup_free char *key = xasprintf("%s/%s-%s", obj_namespace(d), obj_name(d), hash);
	if (informer_get(dc->sets, key)) {
		/* Someone else's, or another template under our name. */
		log_info("Deployment %s/%s: ReplicaSet %s exists with another template or owner; "
			 "collisionCount %lld",
			 obj_namespace(d), obj_name(d), key, cc < 0 ? 1 : cc + 1);
		ynode_set(work, "collisionCount", ynode_new_int(cc < 0 ? 1 : cc + 1));
		return ROLLOUT_NONE;
	}
	*fresh = depc__new_rs(d, hash, max_old + 1);
	size_t i = (*n)++;
	rollout_rs_init(&rs[i], *fresh);
	rs[i].fresh = true;
	rs[i].created = obj_now();
	rs[i].revision = max_old + 1;
	rs[i].replicas = rs[i].orig = 0;
	rs[i].replicas = rollout_new_rs_new_replicas(p, rs, *n, i);
	if (p->progress_deadline >= 0) {
		cleanup_free char *msg = xasprintf("Created new replica set \"%s\"", rs[i].name);
		depc__cond_set(work, "Progressing", "True", "NewReplicaSetCreated", msg);
	}
	return i;
}

/* Submits what the plan changed. */
static void depc__apply(struct depc *dc, const char *key, const struct ynode *d,
			const struct rollout_params *p, struct rollout_rs *rs, size_t n,
			size_t newi, struct ynode *fresh, bool new_min_ready,
			struct ynode *new_annotations)
{
	const char *ns = obj_namespace(d);
	for (size_t i = 0; i < n; i++) {
		struct rollout_rs *r = &rs[i];
		if (r->fresh) {
			struct ynode *md = ynode_get_map(fresh, "metadata");
			struct ynode *ann = ynode_get_map(md, "annotations");
			char buf[32];
			snprintf(buf, sizeof(buf), "%d", p->replicas);
			ynode_set(ann, CTRL_DESIRED_ANNOTATION, ynode_new_str(buf));
			snprintf(buf, sizeof(buf), "%d", p->replicas + p->max_surge);
			ynode_set(ann, CTRL_MAX_ANNOTATION, ynode_new_str(buf));
			ynode_set(ynode_get_map(fresh, "spec"), "replicas",
				  ynode_new_int(r->replicas));
			cleanup_free char *rkey = obj_key(ns, r->name);
			cleanup_free char *dir = treepath_folder("replicasets", ns);
			struct depc__op *op = depc__op_new(dc, key, d, rkey);
			op->what = "create";
			op->from = 0;
			op->to = r->replicas;
			writer_create(dc->c->writer, dir, fresh, 0, depc__written, op);
			continue;
		}
		cleanup_free char *rkey = obj_key(ns, r->name);
		cleanup_free char *path = obj_path("replicasets", ns, r->name);
		if (r->remove) {
			struct depc__op *op = depc__op_new(dc, key, d, rkey);
			op->what = "delete";
			op->gone = true;
			writer_delete(dc->c->writer, path, obj_uid(r->obj), 0, depc__written, op);
			continue;
		}
		bool is_new = i == newi;
		bool annotations = is_new && new_annotations && new_annotations->n;
		if (r->replicas == r->orig && !r->annotate && r->set_revision < 0 &&
		    !(is_new && new_min_ready) && !annotations)
			continue;
		struct depc__change *ch = depc__change_new();
		if (r->replicas != r->orig)
			ch->replicas = r->replicas;
		if (r->annotate) {
			ch->desired = r->set_desired;
			ch->max = r->set_max;
		}
		ch->revision = r->set_revision;
		if (is_new && new_min_ready)
			ch->min_ready = p->min_ready;
		if (annotations)
			ch->annotations = ynode_clone(new_annotations);
		struct depc__op *op = depc__op_new(dc, key, d, rkey);
		if (r->replicas != r->orig) {
			op->from = r->orig;
			op->to = r->replicas;
		}
		writer_update(dc->c->writer, path, depc__mutate_rs, ch, depc__change_free, 0,
			      depc__written, op);
	}
}

/* Writes the status if it changed; status-only changes at most once per
 * status_interval, so that a person's `sed -i` rarely meets a conflict. */
static void depc__write_status(struct depc *dc, const char *key, const struct ynode *d,
			       struct ynode *st)
{
	const struct ynode *stored = ynode_get(d, "status");
	if (ynode_equal(st, stored)) {
		ynode_free(st);
		return;
	}
	bool urgent =
	    throttle_status_urgent(stored, st) ||
	    !ynode_equal(ynode_get(stored, "collisionCount"), ynode_get(st, "collisionCount"));
	uint64_t wait = 0;
	if (!throttle_take(dc->status, key, urgent, loop_now_ms(), &wait)) {
		workqueue_add_after(dc->q, key, wait);
		ynode_free(st);
		return;
	}
	cleanup_free char *path = obj_path("deployments", obj_namespace(d), obj_name(d));
	struct depc__op *op = depc__op_new(dc, key, d, key);
	op->what = "status";
	op->status = true;
	writer_update(dc->c->writer, path, ctrl_mutate_status, st, ctrl_ynode_free, 0,
		      depc__written, op);
}

/* requeueStuckDeployment: look again when the progress deadline passes. */
static void depc__requeue_stuck(struct depc *dc, const char *key, const struct rollout_params *p,
				const struct ynode *st)
{
	const struct ynode *c = depc__cond(st, "Progressing");
	if (!c || p->progress_deadline < 0 || depc__complete(p, st) ||
	    condition_field_is(c, "reason", "ProgressDeadlineExceeded"))
		return;
	int64_t from = obj_time_parse(ynode_str(ynode_get(c, "lastUpdateTime")));
	if (from < 0)
		return;
	int64_t after = from + p->progress_deadline - obj_now();
	workqueue_add_after(dc->q, key, after < 1 ? 1000 : (uint64_t)after * 1000 + 100);
}

static int depc__by_created_obj(const void *a, const void *b)
{
	const struct rollout_rs *x = a, *y = b;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int depc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct depc *dc = data;
	const struct ynode *d = informer_get(dc->deps, key);
	if (!d) {
		expect_forget(dc->exp, key);
		throttle_forget(dc->status, key);
		return 0;
	}
	uint64_t recheck = 0;
	if (!expect_ready(dc->exp, key, loop_now_ms(), &recheck)) {
		if (recheck)
			workqueue_add_after(dc->q, key, recheck);
		return 0;
	}
	cleanup_error struct error *serr = NULL;
	struct depc__claim cl = {.dc = dc, .owner = key, .d = d, .uid = obj_uid(d)};
	if (!cl.uid)
		return 0;
	adopt_owner_init(&cl.as, d, "apps/v1", "Deployment");
	if (selector_parse_labelselector(ynode_path(d, "spec.selector"), &cl.sel, &serr) < 0) {
		log_warn("Deployment %s: spec.selector: %s", key, serr->msg);
		return 0;
	}
	if (selector_is_empty(cl.sel) || selector_is_nothing(cl.sel)) {
		log_warn("Deployment %s: an empty selector would select every pod; ignored", key);
		selector_free(cl.sel);
		return 0;
	}
	const char *ns = obj_namespace(d);
	owners_foreach_owned(dc->owned_sets, cl.uid, depc__visit_rs, &cl);
	owners_foreach_orphan(dc->owned_sets, ns, depc__visit_rs, &cl);
	selector_free(cl.sel);
	if (expect_in_flight(dc->exp, key)) {
		/* Adoptions or releases: plan once they are seen. */
		free(cl.sets);
		return 0;
	}

	struct rollout_params p;
	rollout_params_init(&p, d);
	size_t n = cl.n;
	struct rollout_rs *rs = xcalloc(n + 2, sizeof(*rs));
	for (size_t i = 0; i < n; i++)
		rollout_rs_init(&rs[i], cl.sets[i]);
	free(cl.sets);
	qsort(rs, n, sizeof(*rs), depc__by_created_obj);

	const struct ynode *stored = ynode_get(d, "status");
	struct ynode *work =
	    stored && stored->type == YNODE_MAP ? ynode_clone(stored) : ynode_new_map();
	depc__paused_conditions(&p, work);

	/* The new set: the oldest whose template is the Deployment's. */
	const struct ynode *tmpl = ynode_path(d, "spec.template");
	size_t newi = ROLLOUT_NONE;
	for (size_t i = 0; i < n && newi == ROLLOUT_NONE; i++)
		if (rollout_templates_equal(tmpl, ynode_path(rs[i].obj, "spec.template")))
			newi = i;
	long long max_old = 0;
	for (size_t i = 0; i < n; i++)
		if (i != newi && rs[i].revision > max_old)
			max_old = rs[i].revision;
	bool new_min_ready = false;
	cleanup_ynode struct ynode *copied = depc__copied_annotations(d);
	struct ynode *new_annotations = NULL;
	if (newi != ROLLOUT_NONE) {
		struct rollout_rs *nrs = &rs[newi];
		if (nrs->revision < max_old + 1)
			nrs->set_revision = max_old + 1;
		new_min_ready = obj_int(nrs->obj, "spec.minReadySeconds", 0) != p.min_ready;
		for (size_t i = 0; i < copied->n; i++) {
			const char *v = obj_annotation(nrs->obj, ynode_map_key(copied, i)->str);
			const char *w = ynode_str(ynode_map_val(copied, i));
			if (!v || !w || strcmp(v, w) != 0)
				new_annotations = copied;
		}
		if (p.progress_deadline >= 0 && !depc__cond(work, "Progressing")) {
			cleanup_free char *msg =
			    xasprintf("Found new replica set \"%s\"", nrs->name);
			depc__cond_set(work, "Progressing", "True", "FoundNewReplicaSet", msg);
		}
	}

	struct ynode *fresh = NULL;
	bool rollout = true;
	if (p.paused || rollout_is_scaling_event(&p, rs, n)) {
		rollout_scale(&p, rs, n, newi, (int)obj_int(stored, "replicas", 0));
		if (p.paused)
			rollout_cleanup(&p, rs, n, newi);
		rollout = false;
	} else if (p.recreate) {
		if (!rollout_scale_down_old_for_recreate(&p, rs, n, newi) &&
		    !depc__old_pods_running(dc, rs, n, newi)) {
			if (newi == ROLLOUT_NONE)
				newi = depc__plan_create(dc, d, &p, rs, &n, max_old, work, &fresh);
			else
				rollout_scale_rs(&p, &rs[newi], p.replicas);
			if (newi != ROLLOUT_NONE && depc__complete(&p, stored))
				rollout_cleanup(&p, rs, n, newi);
		}
	} else {
		if (newi == ROLLOUT_NONE)
			newi = depc__plan_create(dc, d, &p, rs, &n, max_old, work, &fresh);
		if (newi != ROLLOUT_NONE && !rollout_reconcile_new(&p, rs, n, newi) &&
		    !rollout_reconcile_old(&p, rs, n, newi) && depc__complete(&p, stored))
			rollout_cleanup(&p, rs, n, newi);
	}

	depc__apply(dc, key, d, &p, rs, n, newi, fresh, new_min_ready, new_annotations);
	struct ynode *st = depc__calculate_status(&p, rs, n, newi, work);
	if (rollout)
		depc__rollout_conditions(&p, rs, newi, work, st);
	depc__requeue_stuck(dc, key, &p, st);
	depc__write_status(dc, key, d, st);
	ynode_free(work);
	free(rs);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void depc__on_deployment(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct depc *dc = data;
	workqueue_add(dc->q, key);
}

static void depc__on_deployment_update(void *data, const char *key, const struct ynode *old,
				       const struct ynode *obj)
{
	(void)old;
	depc__on_deployment(data, key, obj);
}

/* The Deployment that controls a ReplicaSet; true if it has a controller. */
static bool depc__enqueue_owner(struct depc *dc, const struct ynode *rs)
{
	bool controlled = false;
	cleanup_free char *key = adopt_resolve_owner(dc->deps, "Deployment", rs, &controlled);
	if (key)
		workqueue_add(dc->q, key);
	return controlled;
}

struct depc__match {
	struct depc *dc;
	const struct ynode *labels;
};

static int depc__visit_match(void *data, const char *key, const struct ynode *d)
{
	struct depc__match *m = data;
	cleanup_selector struct selector *sel = NULL;
	if (selector_parse_labelselector(ynode_path(d, "spec.selector"), &sel, NULL) == 0 &&
	    !selector_is_empty(sel) && selector_matches(sel, m->labels))
		workqueue_add(m->dc->q, key);
	return 0;
}

static void depc__on_rs(void *data, const char *key, const struct ynode *rs)
{
	(void)key;
	struct depc *dc = data;
	if (depc__enqueue_owner(dc, rs))
		return;
	struct depc__match m = {.dc = dc, .labels = ynode_path(rs, "metadata.labels")};
	informer_foreach(dc->deps, obj_namespace(rs), depc__visit_match, &m);
}

static void depc__on_rs_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *rs)
{
	struct depc *dc = data;
	if (!ynode_equal(obj_controller_ref(old), obj_controller_ref(rs)))
		depc__enqueue_owner(dc, old);
	depc__on_rs(data, key, rs);
}

/* A pod went: a Recreate Deployment may be waiting for its old pods. */
static void depc__on_pod_delete(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct depc *dc = data;
	const struct ynode *ref = obj_controller_ref(pod);
	const char *kind = ref ? ynode_str(ynode_get(ref, "kind")) : NULL;
	const char *name = ref ? ynode_str(ynode_get(ref, "name")) : NULL;
	if (!kind || strcmp(kind, "ReplicaSet") != 0 || !name)
		return;
	cleanup_free char *rkey = obj_key(obj_namespace(pod), name);
	const struct ynode *rs = informer_get(dc->sets, rkey);
	if (rs)
		depc__enqueue_owner(dc, rs);
}

struct depc *depc_new(struct ctrl *c)
{
	struct depc *dc = xcalloc(1, sizeof(*dc));
	dc->c = c;
	dc->deps = ctrl_informer(c, "deployments");
	dc->sets = ctrl_informer(c, "replicasets");
	dc->pods = ctrl_informer(c, "pods");
	dc->owned_sets = ctrl_owners(c, "replicasets");
	dc->owned_pods = ctrl_owners(c, "pods");
	dc->q = workqueue_new(c->loop, "deployments", NULL);
	dc->exp = expect_new();
	dc->status = throttle_new(c->cfg ? c->cfg->status_interval_ms : 0);
	struct informer_handlers dh = {
	    .on_add = depc__on_deployment,
	    .on_update = depc__on_deployment_update,
	    .on_delete = depc__on_deployment,
	};
	informer_add_handlers(dc->deps, &dh, dc);
	struct informer_handlers rh = {
	    .on_add = depc__on_rs,
	    .on_update = depc__on_rs_update,
	    .on_delete = depc__on_rs,
	};
	informer_add_handlers(dc->sets, &rh, dc);
	struct informer_handlers ph = {.on_delete = depc__on_pod_delete};
	informer_add_handlers(dc->pods, &ph, dc);
	workqueue_set_handler(dc->q, depc__sync, dc);
	return dc;
}

void depc_free(struct depc *dc)
{
	if (!dc)
		return;
	workqueue_free(dc->q);
	expect_free(dc->exp);
	throttle_free(dc->status);
	free(dc);
}
