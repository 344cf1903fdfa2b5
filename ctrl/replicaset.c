/* replicaset.c: the ReplicaSet and ReplicationController controllers.
 *
 * One sync per set key: claim the active pods of the namespace (keep,
 * adopt, release), create or delete the difference, and write the status.
 * Writes go through the writer; a set does not sync again until its writes
 * are done and its informers show them (expect.h), so that a stale cache
 * never makes it create or delete twice. While pods are being created or
 * deleted the status waits for the next sync, which comes when the
 * informers report the result.
 *
 * This file must never write a pod it does not own or adopt. */
#include "replicaset.h"
#include "adopt.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "owners.h"
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

#define RSC__FAILURE_BASE_MS 1000
#define RSC__FAILURE_MAX_MS  300000

/* The last failure to create a pod for a set, and when to try again. */
struct rsc__failure {
	char *msg;
	uint64_t retry_at_ms;
	uint64_t backoff_ms;
};

struct rsc {
	struct ctrl *c;
	bool rc;
	const char *kind;	 /* "ReplicaSet" */
	const char *api_version; /* "apps/v1" */
	const char *plural;	 /* "replicasets" */
	const char *component;	 /* "replicaset-controller" */
	struct informer *sets;
	struct informer *pods;
	struct owners *owned; /* pods by controller */
	struct workqueue *q;
	struct expect *exp;
	struct keymap *batch;	 /* set key -> next create batch (uintptr_t) */
	struct keymap *failure;	 /* set key -> struct rsc__failure */
	struct throttle *status; /* status writes of sets no one owns */
	int burst;
};

/* A write in flight for a set. */
struct rsc__op {
	struct rsc *r;
	char *owner; /* the set's key */
	char *ns;
	char *set_name;
	char *set_uid;
	char *pod; /* the pod's name, for deletes */
};

/* ---- decision logic ---------------------------------------------------- */

static int rsc__phase(const struct ynode *pod)
{
	const char *phase = ynode_path_str(pod, "status.phase");
	if (phase && !strcmp(phase, "Running"))
		return 2;
	if (phase && !strcmp(phase, "Unknown"))
		return 1;
	return 0;
}

static long long rsc__restarts(const struct ynode *pod)
{
	long long most = 0;
	static const char *const lists[] = {"status.containerStatuses",
					    "status.initContainerStatuses"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			long long n = obj_int(ynode_item(cs, i), "restartCount", 0);
			if (n > most)
				most = n;
		}
	}
	return most;
}

void rsc_pod_init(struct rsc_pod *p, const char *name, const struct ynode *pod)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	p->obj = pod;
	const char *node = ynode_path_str(pod, "spec.nodeName");
	p->assigned = node && *node;
	p->phase = rsc__phase(pod);
	p->ready = pod_is_ready(pod, &p->ready_since);
	p->cost = 0;
	const char *cost = obj_annotation(pod, CTRL_DELETION_COST_ANNOTATION);
	if (cost)
		p->cost = strtoll(cost, NULL, 10);
	p->restarts = rsc__restarts(pod);
	p->created = obj_time_parse(ynode_path_str(pod, "metadata.creationTimestamp"));
}

void rsc_pods_colocate(struct rsc_pod *pods, size_t n)
{
	/* Sets are small: quadratic is fine and needs no map. */
	for (size_t i = 0; i < n; i++) {
		pods[i].colocated = 0;
		const char *node = ynode_path_str(pods[i].obj, "spec.nodeName");
		if (!node || !*node)
			continue;
		for (size_t j = 0; j < n; j++) {
			const char *other = ynode_path_str(pods[j].obj, "spec.nodeName");
			if (other && !strcmp(node, other))
				pods[i].colocated++;
		}
	}
}

/* Kubernetes' afterOrZero: a zero (unknown) time first, then the later. */
static int rsc__later_first(int64_t a, int64_t b)
{
	if (a == b)
		return 0;
	if (a < 0 || b < 0)
		return a < 0 ? -1 : 1;
	return a > b ? -1 : 1;
}

static int rsc__rank_cmp(const void *pa, const void *pb)
{
	const struct rsc_pod *a = pa, *b = pb;
	if (a->assigned != b->assigned)
		return a->assigned ? 1 : -1;
	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	if (a->ready != b->ready)
		return a->ready ? 1 : -1;
	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	if (a->colocated != b->colocated)
		return a->colocated > b->colocated ? -1 : 1;
	if (a->ready && b->ready) {
		int c = rsc__later_first(a->ready_since, b->ready_since);
		if (c)
			return c;
	}
	if (a->restarts != b->restarts)
		return a->restarts > b->restarts ? -1 : 1;
	int c = rsc__later_first(a->created, b->created);
	if (c)
		return c;
	return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

void rsc_rank_for_deletion(struct rsc_pod *pods, size_t n)
{
	qsort(pods, n, sizeof(*pods), rsc__rank_cmp);
}

enum adopt_claim rsc_claim_pod(const struct adopt_owner *o, const struct selector *sel,
			       const struct ynode *pod)
{
	enum adopt_claim what = adopt_claim(o, sel, pod);
	if (what == ADOPT_ADOPT && !pod_is_active(pod))
		return ADOPT_IGNORE;
	return what;
}

struct ynode *rsc_pod_from_template(const struct ynode *rs, const char *kind,
				    const char *api_version)
{
	const struct ynode *t = ynode_path(rs, "spec.template");
	struct ynode *pod = ynode_new_map();
	ynode_set(pod, "apiVersion", ynode_new_str("v1"));
	ynode_set(pod, "kind", ynode_new_str("Pod"));
	struct ynode *md = ynode_get_map(pod, "metadata");
	cleanup_free char *base = xasprintf("%s-", obj_name(rs));
	cleanup_free char *name = obj_generate_name(base);
	ynode_set(md, "name", ynode_new_str(name));
	if (obj_namespace(rs))
		ynode_set(md, "namespace", ynode_new_str(obj_namespace(rs)));
	const struct ynode *labels = ynode_path(t, "metadata.labels");
	if (labels && labels->type == YNODE_MAP)
		ynode_set(md, "labels", ynode_clone(labels));
	const struct ynode *ann = ynode_path(t, "metadata.annotations");
	if (ann && ann->type == YNODE_MAP)
		ynode_set(md, "annotations", ynode_clone(ann));
	const struct ynode *fin = ynode_path(t, "metadata.finalizers");
	if (fin && fin->type == YNODE_SEQ)
		ynode_set(md, "finalizers", ynode_clone(fin));
	obj_add_owner_ref(pod,
			  obj_owner_ref_new(api_version, kind, obj_name(rs), obj_uid(rs), true));
	const struct ynode *spec = ynode_get(t, "spec");
	ynode_set(pod, "spec", spec ? ynode_clone(spec) : ynode_new_map());
	return pod;
}

struct ynode *rsc_status(const struct ynode *rs, const struct ynode *const *pods, size_t n,
			 int64_t now, const char *failure, int64_t *wait_s)
{
	const struct ynode *tlabels = ynode_path(rs, "spec.template.metadata.labels");
	long long min_ready = obj_int(rs, "spec.minReadySeconds", 0);
	long long fully = 0, ready = 0, available = 0;
	int64_t wait = 0;
	for (size_t i = 0; i < n; i++) {
		if (labels_contain(ynode_path(pods[i], "metadata.labels"), tlabels))
			fully++;
		if (pod_is_ready(pods[i], NULL))
			ready++;
		int64_t w = 0;
		if (pod_is_available(pods[i], min_ready, now, &w))
			available++;
		else if (w > 0 && (!wait || w < wait))
			wait = w;
	}
	if (wait_s)
		*wait_s = wait;
	struct ynode *st = ynode_new_map();
	ynode_set(st, "replicas", ynode_new_int((long long)n));
	ynode_set(st, "fullyLabeledReplicas", ynode_new_int(fully));
	ynode_set(st, "readyReplicas", ynode_new_int(ready));
	ynode_set(st, "availableReplicas", ynode_new_int(available));
	long long gen = obj_int(rs, "metadata.generation", -1);
	if (gen >= 0)
		ynode_set(st, "observedGeneration", ynode_new_int(gen));
	if (failure) {
		const struct ynode *old =
		    condition_find(ynode_path(rs, "status.conditions"), "ReplicaFailure");
		char ts[RFC3339_SIZE];
		obj_time_format(now, ts);
		const struct condition c = {"ReplicaFailure", "True", "FailedCreate", failure};
		struct ynode *conds = ynode_new_seq();
		ynode_append(conds, condition_build(&c, old, ts, 0));
		ynode_set(st, "conditions", conds);
	}
	return st;
}

/* ---- writes ------------------------------------------------------------- */

static struct rsc__op *rsc__op_new(struct rsc *r, const char *owner, const struct ynode *set,
				   const char *pod)
{
	struct rsc__op *op = xcalloc(1, sizeof(*op));
	op->r = r;
	op->owner = xstrdup(owner);
	op->ns = xstrdup(obj_namespace(set) ? obj_namespace(set) : "");
	op->set_name = xstrdup(obj_name(set));
	op->set_uid = xstrdup(obj_uid(set) ? obj_uid(set) : "");
	op->pod = pod ? xstrdup(pod) : NULL;
	expect_write(r->exp, owner);
	return op;
}

static void rsc__op_free(struct rsc__op *op)
{
	free(op->owner);
	free(op->ns);
	free(op->set_name);
	free(op->set_uid);
	free(op->pod);
	free(op);
}

static void rsc__event(struct rsc__op *op, const char *type, const char *reason, const char *fmt,
		       const char *arg)
{
	struct rsc *r = op->r;
	if (!r->c->events)
		return;
	events_record_ref(r->c->events, r->component, r->api_version, r->kind, op->ns, op->set_name,
			  op->set_uid, type, reason, fmt, arg);
}

static void rsc__failure_free(void *p)
{
	struct rsc__failure *f = p;
	if (f) {
		free(f->msg);
		free(f);
	}
}

static void rsc__created(void *data, const struct writer_result *res)
{
	struct rsc__op *op = data;
	struct rsc *r = op->r;
	uint64_t now = loop_now_ms();
	cleanup_free char *key = res->name ? obj_key(op->ns, res->name) : NULL;
	expect_written(r->exp, op->owner, res->status == 0, r->pods, key, res->min_rv, false, now);
	if (res->status == 0) {
		keymap_del(r->failure, op->owner);
		rsc__event(op, "Normal", "SuccessfulCreate", "Created pod: %s", res->name);
	} else {
		log_warn("%s %s: cannot create a pod: %s", r->kind, op->owner, res->msg);
		rsc__event(op, "Warning", "FailedCreate", "Error creating: %s", res->msg);
		struct rsc__failure *f = keymap_get(r->failure, op->owner);
		if (!f) {
			f = xcalloc(1, sizeof(*f));
			keymap_set(r->failure, op->owner, f);
		}
		free(f->msg);
		f->msg = xstrdup(res->msg);
		f->backoff_ms = f->backoff_ms ? f->backoff_ms * 2 : RSC__FAILURE_BASE_MS;
		if (f->backoff_ms > RSC__FAILURE_MAX_MS)
			f->backoff_ms = RSC__FAILURE_MAX_MS;
		f->retry_at_ms = now + f->backoff_ms;
		keymap_del(r->batch, op->owner);
		workqueue_add_after(r->q, op->owner, f->backoff_ms);
	}
	workqueue_add(r->q, op->owner);
	rsc__op_free(op);
}

static void rsc__deleted(void *data, const struct writer_result *res)
{
	struct rsc__op *op = data;
	struct rsc *r = op->r;
	cleanup_free char *key = obj_key(op->ns, op->pod);
	expect_written(r->exp, op->owner, res->status == 0, r->pods, key, 0, true, loop_now_ms());
	if (res->status == 0) {
		rsc__event(op, "Normal", "SuccessfulDelete", "Deleted pod: %s", op->pod);
	} else if (res->status != ENOENT && res->status != ESTALE) {
		log_warn("%s %s: cannot delete pod %s: %s", r->kind, op->owner, op->pod, res->msg);
		rsc__event(op, "Warning", "FailedDelete", "Error deleting: %s", res->msg);
	}
	workqueue_add(r->q, op->owner);
	rsc__op_free(op);
}

/* Adoption, release and status writes: wait to see them, then sync. */
static void rsc__written_pod(void *data, const struct writer_result *res)
{
	struct rsc__op *op = data;
	struct rsc *r = op->r;
	cleanup_free char *key = obj_key(op->ns, op->pod);
	expect_written(r->exp, op->owner, res->status == 0, r->pods, key, res->min_rv, false,
		       loop_now_ms());
	if (res->status && res->status != ENOENT)
		log_warn("%s %s: cannot update pod %s: %s", r->kind, op->owner, op->pod, res->msg);
	workqueue_add(r->q, op->owner);
	rsc__op_free(op);
}

static void rsc__written_status(void *data, const struct writer_result *res)
{
	struct rsc__op *op = data;
	struct rsc *r = op->r;
	expect_written(r->exp, op->owner, res->status == 0, r->sets, op->owner, res->min_rv, false,
		       loop_now_ms());
	if (res->status && res->status != ENOENT)
		log_warn("%s %s: cannot write the status: %s", r->kind, op->owner, res->msg);
	workqueue_add(r->q, op->owner);
	rsc__op_free(op);
}

/* Whether a status-only change of a set that a person may edit (one no
 * controller owns) waits: such writes come at most once per
 * status-interval, so that a `sed -i` rarely meets a conflict. A set a
 * Deployment owns is written at once: its rollout waits for the counts. */
static bool rsc__status_later(struct rsc *r, const char *key, const struct ynode *set,
			      const struct ynode *st)
{
	if (obj_controller_ref(set))
		return false;
	uint64_t wait = 0;
	if (throttle_take(r->status, key, throttle_status_urgent(ynode_get(set, "status"), st),
			  loop_now_ms(), &wait))
		return false;
	workqueue_add_after(r->q, key, wait);
	return true;
}

/* ---- sync --------------------------------------------------------------- */

struct rsc__claim {
	struct rsc *r;
	const char *owner;
	const struct ynode *set;
	const char *uid;
	struct adopt_owner as; /* the set, claiming */
	struct selector *sel;
	struct rsc_pod *pods;
	size_t n, cap;
	unsigned writes;
};

/* key is the index's copy, gone after the call: pods are kept by name. */
static int rsc__visit_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct rsc__claim *cl = data;
	struct rsc *r = cl->r;
	if (!pod_is_active(pod))
		return 0;
	enum adopt_claim what = rsc_claim_pod(&cl->as, cl->sel, pod);
	if (what == ADOPT_IGNORE)
		return 0;
	if (what == ADOPT_RELEASE || what == ADOPT_ADOPT) {
		cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
		struct rsc__op *op = rsc__op_new(r, cl->owner, cl->set, obj_name(pod));
		adopt_write(r->c->writer, path, &cl->as, what, pod_is_active, rsc__written_pod, op);
		cl->writes++;
		if (what == ADOPT_RELEASE)
			return 0;
	}
	if (cl->n == cl->cap) {
		cl->cap = cl->cap ? 2 * cl->cap : 16;
		cl->pods = xrealloc(cl->pods, cl->cap * sizeof(*cl->pods));
	}
	rsc_pod_init(&cl->pods[cl->n++], obj_name(pod), pod);
	return 0;
}

static int rsc__selector(const struct rsc *r, const struct ynode *set, struct selector **sel,
			 struct error **err)
{
	const struct ynode *s = ynode_path(set, "spec.selector");
	if (r->rc) {
		/* An RC without a selector takes its template's labels. */
		if (!s || s->type != YNODE_MAP || !s->n)
			s = ynode_path(set, "spec.template.metadata.labels");
		return selector_parse_map(s, sel, err);
	}
	return selector_parse_labelselector(s, sel, err);
}

static int rsc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct rsc *r = data;
	const struct ynode *set = informer_get(r->sets, key);
	if (!set) {
		expect_forget(r->exp, key);
		keymap_del(r->batch, key);
		keymap_del(r->failure, key);
		throttle_forget(r->status, key);
		return 0;
	}
	uint64_t now_ms = loop_now_ms(), recheck = 0;
	if (!expect_ready(r->exp, key, now_ms, &recheck)) {
		if (recheck)
			workqueue_add_after(r->q, key, recheck);
		return 0;
	}
	cleanup_error struct error *serr = NULL;
	struct rsc__claim cl = {.r = r, .owner = key, .set = set, .uid = obj_uid(set)};
	adopt_owner_init(&cl.as, set, r->api_version, r->kind);
	if (rsc__selector(r, set, &cl.sel, &serr) < 0) {
		log_warn("%s %s: spec.selector: %s", r->kind, key, serr->msg);
		return 0;
	}
	const char *ns = obj_namespace(set);
	owners_foreach_owned(r->owned, cl.uid, rsc__visit_pod, &cl);
	owners_foreach_orphan(r->owned, ns, rsc__visit_pod, &cl);
	selector_free(cl.sel);

	long long replicas = obj_int(set, "spec.replicas", 1);
	long long diff = (long long)cl.n - replicas;
	struct rsc__failure *fail = keymap_get(r->failure, key);
	bool manage = true;
	if (fail && now_ms < fail->retry_at_ms) {
		manage = false;
		workqueue_add_after(r->q, key, fail->retry_at_ms - now_ms);
	}
	if (diff < 0 && manage) {
		long long want = -diff;
		uintptr_t batch = (uintptr_t)keymap_get(r->batch, key);
		if (!batch)
			batch = 1;
		if (want > (long long)batch)
			want = (long long)batch;
		if (want > r->burst)
			want = r->burst;
		cleanup_free char *dir = treepath_folder("pods", ns);
		for (long long i = 0; i < want; i++) {
			struct ynode *pod = rsc_pod_from_template(set, r->kind, r->api_version);
			struct rsc__op *op = rsc__op_new(r, key, set, NULL);
			writer_create(r->c->writer, dir, pod, WRITER_GENERATE, rsc__created, op);
		}
		batch *= 2;
		if (batch > (uintptr_t)r->burst)
			batch = (uintptr_t)r->burst;
		keymap_set(r->batch, key, (void *)batch);
		cl.writes += (unsigned)want;
	} else if (diff > 0) {
		if (diff > r->burst)
			diff = r->burst;
		rsc_pods_colocate(cl.pods, cl.n);
		rsc_rank_for_deletion(cl.pods, cl.n);
		for (long long i = 0; i < diff; i++) {
			const struct ynode *pod = cl.pods[i].obj;
			cleanup_free char *path = obj_path("pods", ns, obj_name(pod));
			struct rsc__op *op = rsc__op_new(r, key, set, obj_name(pod));
			writer_delete(r->c->writer, path, obj_uid(pod), 0, rsc__deleted, op);
		}
		cl.writes += (unsigned)diff;
	} else if (diff == 0) {
		keymap_del(r->batch, key);
	}

	if (!cl.writes) {
		const struct ynode **objs = xcalloc(cl.n + 1, sizeof(*objs));
		for (size_t i = 0; i < cl.n; i++)
			objs[i] = cl.pods[i].obj;
		int64_t wait = 0;
		struct ynode *st =
		    rsc_status(set, objs, cl.n, obj_now(), fail ? fail->msg : NULL, &wait);
		free(objs);
		if (!ynode_equal(st, ynode_get(set, "status")) &&
		    !rsc__status_later(r, key, set, st)) {
			cleanup_free char *path = obj_path(r->plural, ns, obj_name(set));
			struct rsc__op *op = rsc__op_new(r, key, set, NULL);
			writer_update(r->c->writer, path, ctrl_mutate_status, st, ctrl_ynode_free,
				      0, rsc__written_status, op);
		} else {
			ynode_free(st);
		}
		if (wait > 0)
			workqueue_add_after(r->q, key, (uint64_t)wait * 1000 + 50);
	}
	free(cl.pods);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void rsc__on_set(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct rsc *r = data;
	workqueue_add(r->q, key);
}

static void rsc__on_set_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *obj)
{
	(void)old;
	rsc__on_set(data, key, obj);
}

/* Enqueues the set that controls pod (by its controller reference);
 * returns whether the pod has a controller at all. */
static bool rsc__enqueue_owner(struct rsc *r, const struct ynode *pod)
{
	bool controlled = false;
	cleanup_free char *key = adopt_resolve_owner(r->sets, r->kind, pod, &controlled);
	if (key)
		workqueue_add(r->q, key);
	return controlled;
}

struct rsc__match {
	struct rsc *r;
	const struct ynode *labels;
};

static int rsc__visit_match(void *data, const char *key, const struct ynode *set)
{
	struct rsc__match *m = data;
	cleanup_selector struct selector *sel = NULL;
	if (rsc__selector(m->r, set, &sel, NULL) == 0 && selector_matches(sel, m->labels))
		workqueue_add(m->r->q, key);
	return 0;
}

/* An orphan pod: every set whose selector matches may adopt it. */
static void rsc__enqueue_matching(struct rsc *r, const struct ynode *pod)
{
	struct rsc__match m = {.r = r, .labels = ynode_path(pod, "metadata.labels")};
	informer_foreach(r->sets, obj_namespace(pod), rsc__visit_match, &m);
}

static void rsc__on_pod_add(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct rsc *r = data;
	if (!rsc__enqueue_owner(r, pod) && pod_is_active(pod))
		rsc__enqueue_matching(r, pod);
}

static void rsc__on_pod_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *pod)
{
	(void)key;
	struct rsc *r = data;
	const struct ynode *old_ref = obj_controller_ref(old), *ref = obj_controller_ref(pod);
	bool ref_changed = !ynode_equal(old_ref, ref);
	bool labels_changed =
	    !ynode_equal(ynode_path(old, "metadata.labels"), ynode_path(pod, "metadata.labels"));
	if (ref_changed && old_ref)
		rsc__enqueue_owner(r, old);
	if (rsc__enqueue_owner(r, pod))
		return;
	if ((labels_changed || ref_changed) && pod_is_active(pod))
		rsc__enqueue_matching(r, pod);
}

static void rsc__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	rsc__enqueue_owner(data, old);
}

struct rsc *rsc_new(struct ctrl *c, bool rc)
{
	struct rsc *r = xcalloc(1, sizeof(*r));
	r->c = c;
	r->rc = rc;
	r->kind = rc ? "ReplicationController" : "ReplicaSet";
	r->api_version = rc ? "v1" : "apps/v1";
	r->plural = rc ? "replicationcontrollers" : "replicasets";
	r->component = rc ? "replication-controller" : "replicaset-controller";
	r->burst = c->cfg && c->cfg->burst_replicas > 0 ? c->cfg->burst_replicas : 500;
	r->sets = ctrl_informer(c, r->plural);
	r->pods = ctrl_informer(c, "pods");
	r->owned = ctrl_owners(c, "pods");
	r->q = workqueue_new(c->loop, r->plural, NULL);
	r->exp = expect_new();
	r->batch = keymap_new(NULL);
	r->failure = keymap_new(rsc__failure_free);
	r->status = throttle_new(c->cfg ? c->cfg->status_interval_ms : 0);
	struct informer_handlers sh = {
	    .on_add = rsc__on_set,
	    .on_update = rsc__on_set_update,
	    .on_delete = rsc__on_set,
	};
	informer_add_handlers(r->sets, &sh, r);
	struct informer_handlers ph = {
	    .on_add = rsc__on_pod_add,
	    .on_update = rsc__on_pod_update,
	    .on_delete = rsc__on_pod_delete,
	};
	informer_add_handlers(r->pods, &ph, r);
	workqueue_set_handler(r->q, rsc__sync, r);
	return r;
}

void rsc_free(struct rsc *r)
{
	if (!r)
		return;
	workqueue_free(r->q);
	expect_free(r->exp);
	keymap_free(r->batch);
	keymap_free(r->failure);
	throttle_free(r->status);
	free(r);
}
