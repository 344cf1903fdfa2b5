/* statefulset.c: the StatefulSet controller (see statefulset.h for what it
 * does).
 *
 * One sync per StatefulSet key: find or make the ControllerRevision of the
 * current template (the update revision) and find the current one, claim
 * the pods whose names are the set's (keep, adopt, release, as adopt.h),
 * put them on their ordinals, keep the claims' ownerReferences as the
 * retention policy wants them, then plan (ssc_plan: Kubernetes'
 * updateStatefulSet) the creates and deletes, make the claims a pod needs
 * before the pod, and when nothing was written clean up old revisions and
 * write the status. Like the other controllers it does not sync a set
 * again until its informers show every write it made (expect.h).
 *
 * This file must never write a pod or a claim it does not own or adopt
 * (a claim: one named for a pod of the set), nor a StatefulSet's metadata
 * or spec. */
#include "statefulset.h"
#include "adopt.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "log.h"
#include "obj.h"
#include "owners.h"
#include "revision.h"
#include "rollout.h"
#include "selector.h"
#include "throttle.h"
#include "treepath.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SSC__COMPONENT "statefulset-controller"
#define SSC__RETRY_MS  1000

struct ssc {
	struct ctrl *c;
	struct informer *sets, *pods, *revs, *claims;
	struct owners *owned_pods, *owned_revs;
	struct workqueue *q;
	struct expect *exp;
	struct throttle *status;
};

/* ---- decision logic ---------------------------------------------------- */

long ssc_pod_ordinal(const char *set, const char *pod)
{
	size_t n = set ? strlen(set) : 0;
	if (!set || !pod || strncmp(set, pod, n) != 0 || pod[n] != '-')
		return -1;
	const char *d = pod + n + 1;
	if (!*d || (d[0] == '0' && d[1]) || strlen(d) > 9)
		return -1;
	long v = 0;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return -1;
		v = v * 10 + (*d - '0');
	}
	return v;
}

char *ssc_claim_name(const char *tmpl, const char *set, long ordinal)
{
	return xasprintf("%s-%s-%ld", tmpl, set, ordinal);
}

static const char *ssc__policy(const struct ynode *set, const char *which)
{
	const char *v =
	    ynode_path_str(ynode_path(set, "spec.persistentVolumeClaimRetentionPolicy"), which);
	return v && *v ? v : "Retain";
}

struct ynode *ssc_new_pod(const struct ynode *set, const struct ynode *tmpl, long ordinal,
			  const char *hash)
{
	const char *name = obj_name(set);
	struct ynode *pod = ynode_new_map();
	ynode_set(pod, "apiVersion", ynode_new_str("v1"));
	ynode_set(pod, "kind", ynode_new_str("Pod"));
	struct ynode *md = ynode_get_map(pod, "metadata");
	cleanup_free char *pname = xasprintf("%s-%ld", name, ordinal);
	ynode_set(md, "name", ynode_new_str(pname));
	if (obj_namespace(set))
		ynode_set(md, "namespace", ynode_new_str(obj_namespace(set)));
	const struct ynode *labels = ynode_path(tmpl, "metadata.labels");
	struct ynode *l =
	    labels && labels->type == YNODE_MAP ? ynode_clone(labels) : ynode_new_map();
	char idx[24];
	snprintf(idx, sizeof(idx), "%ld", ordinal);
	ynode_set(l, SSC_POD_NAME_LABEL, ynode_new_str(pname));
	ynode_set(l, SSC_POD_INDEX_LABEL, ynode_new_str(idx));
	if (hash)
		ynode_set(l, REVISION_HASH_LABEL, ynode_new_str(hash));
	ynode_set(md, "labels", l);
	const struct ynode *ann = ynode_path(tmpl, "metadata.annotations");
	if (ann && ann->type == YNODE_MAP)
		ynode_set(md, "annotations", ynode_clone(ann));
	const struct ynode *fin = ynode_path(tmpl, "metadata.finalizers");
	if (fin && fin->type == YNODE_SEQ)
		ynode_set(md, "finalizers", ynode_clone(fin));
	obj_add_owner_ref(pod,
			  obj_owner_ref_new("apps/v1", "StatefulSet", name, obj_uid(set), true));
	const struct ynode *ts = ynode_get(tmpl, "spec");
	struct ynode *spec = ts && ts->type == YNODE_MAP ? ynode_clone(ts) : ynode_new_map();
	ynode_set(pod, "spec", spec);
	/* updateIdentity */
	ynode_set(spec, "hostname", ynode_new_str(pname));
	const char *svc = ynode_path_str(set, "spec.serviceName");
	if (svc && *svc)
		ynode_set(spec, "subdomain", ynode_new_str(svc));
	/* updateStorage: a claim template's volume replaces one of its name */
	const struct ynode *cts = ynode_path(set, "spec.volumeClaimTemplates");
	size_t nct = cts && cts->type == YNODE_SEQ ? cts->n : 0;
	if (!nct)
		return pod;
	struct ynode *vols = ynode_get(spec, "volumes");
	struct ynode *nv = ynode_new_seq();
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++) {
		const char *vn = ynode_path_str(ynode_item(vols, i), "name");
		bool taken = false;
		for (size_t j = 0; vn && j < nct && !taken; j++) {
			const char *cn = ynode_path_str(ynode_item(cts, j), "metadata.name");
			taken = cn && !strcmp(cn, vn);
		}
		if (!taken)
			ynode_append(nv, ynode_clone(ynode_item(vols, i)));
	}
	for (size_t j = 0; j < nct; j++) {
		const char *cn = ynode_path_str(ynode_item(cts, j), "metadata.name");
		if (!cn)
			continue;
		cleanup_free char *claim = ssc_claim_name(cn, name, ordinal);
		struct ynode *v = ynode_new_map();
		ynode_set(v, "name", ynode_new_str(cn));
		ynode_set(ynode_get_map(v, "persistentVolumeClaim"), "claimName",
			  ynode_new_str(claim));
		ynode_append(nv, v);
	}
	ynode_set(spec, "volumes", nv);
	return pod;
}

struct ynode *ssc_new_claim(const struct ynode *set, const struct ynode *ct, long ordinal)
{
	const char *cn = ynode_path_str(ct, "metadata.name");
	struct ynode *claim = ynode_new_map();
	ynode_set(claim, "apiVersion", ynode_new_str("v1"));
	ynode_set(claim, "kind", ynode_new_str("PersistentVolumeClaim"));
	struct ynode *md = ynode_get_map(claim, "metadata");
	cleanup_free char *name = ssc_claim_name(cn ? cn : "", obj_name(set), ordinal);
	ynode_set(md, "name", ynode_new_str(name));
	if (obj_namespace(set))
		ynode_set(md, "namespace", ynode_new_str(obj_namespace(set)));
	const struct ynode *tl = ynode_path(ct, "metadata.labels");
	struct ynode *labels = tl && tl->type == YNODE_MAP ? ynode_clone(tl) : ynode_new_map();
	const struct ynode *ml = ynode_path(set, "spec.selector.matchLabels");
	for (size_t i = 0; ml && ml->type == YNODE_MAP && i < ml->n; i++)
		ynode_set(labels, ynode_map_key(ml, i)->str, ynode_clone(ynode_map_val(ml, i)));
	if (labels->n)
		ynode_set(md, "labels", labels);
	else
		ynode_free(labels);
	const struct ynode *ann = ynode_path(ct, "metadata.annotations");
	if (ann && ann->type == YNODE_MAP && ann->n)
		ynode_set(md, "annotations", ynode_clone(ann));
	const struct ynode *spec = ynode_get(ct, "spec");
	ynode_set(claim, "spec", spec ? ynode_clone(spec) : ynode_new_map());
	cleanup_free char *pod = xasprintf("%s-%ld", obj_name(set), ordinal);
	ssc_claim_owners(claim, set, pod, NULL, true);
	return claim;
}

static bool ssc__has_ref(const struct ynode *o, const char *uid)
{
	const struct ynode *refs = ynode_path(o, "metadata.ownerReferences");
	for (size_t i = 0; uid && refs && refs->type == YNODE_SEQ && i < refs->n; i++) {
		const char *u = ynode_path_str(ynode_item(refs, i), "uid");
		if (u && !strcmp(u, uid))
			return true;
	}
	return false;
}

/* setOwnerRef / removeOwnerRef: a plain reference (no controller). */
static bool ssc__set_ref(struct ynode *o, const char *kind, const char *api, const char *name,
			 const char *uid, bool want)
{
	if (!uid)
		return false;
	bool has = ssc__has_ref(o, uid);
	if (has == want)
		return false;
	if (want)
		obj_add_owner_ref(o, obj_owner_ref_new(api, kind, name, uid, false));
	else
		obj_remove_owner_refs(o, uid);
	return true;
}

bool ssc_claim_owners(struct ynode *claim, const struct ynode *set, const char *pod,
		      const char *pod_uid, bool in_range)
{
	bool del_deleted = !strcmp(ssc__policy(set, "whenDeleted"), "Delete");
	bool del_scaled = !strcmp(ssc__policy(set, "whenScaled"), "Delete");
	bool want_set = del_deleted && (in_range || !del_scaled);
	bool want_pod = del_scaled && !in_range;
	bool changed =
	    ssc__set_ref(claim, "StatefulSet", "apps/v1", obj_name(set), obj_uid(set), want_set);
	changed |= ssc__set_ref(claim, "Pod", "v1", pod, pod_uid, want_pod);
	return changed;
}

void ssc_policy_of(const struct ynode *set, size_t nrep, struct ssc_policy *p)
{
	const char *pm = ynode_path_str(set, "spec.podManagementPolicy");
	const char *type = ynode_path_str(set, "spec.updateStrategy.type");
	p->parallel = pm && !strcmp(pm, "Parallel");
	p->rolling = !type || !*type || !strcmp(type, "RollingUpdate");
	p->partition = obj_int(set, "spec.updateStrategy.rollingUpdate.partition", 0);
	if (p->partition < 0)
		p->partition = 0;
	p->max_unavailable = 1;
	const struct ynode *mu =
	    ynode_path(set, "spec.updateStrategy.rollingUpdate.maxUnavailable");
	int v = 0;
	if (mu && !ynode_is_null(mu) && rollout_scaled_value(mu, (int)nrep, false, &v) == 0 &&
	    v > 0)
		p->max_unavailable = v;
}

static bool ssc__healthy(const struct ssc_slot *s)
{
	return s->exists && !s->terminating && !s->failed && s->ready && s->available;
}

size_t ssc_plan(struct ssc_slot *rep, size_t nrep, struct ssc_slot *cond, size_t ncond,
		const struct ssc_policy *p)
{
	bool mono = !p->parallel;
	size_t n = 0;
	/* processReplica, lowest ordinal first */
	for (size_t i = 0; i < nrep; i++) {
		struct ssc_slot *s = &rep[i];
		if (s->exists && s->failed) {
			if (!s->terminating) {
				s->remove = true;
				n++;
			}
			if (mono)
				return n;
			continue;
		}
		if (!s->exists) {
			s->create = true;
			n++;
			if (mono)
				return n;
			continue;
		}
		if (s->terminating) {
			if (mono)
				return n;
			continue;
		}
		if (mono && !(s->ready && s->available))
			return n;
	}
	/* processCondemned, highest ordinal first; while ordered, only the
	 * first unhealthy pod may go when one is unhealthy */
	const struct ssc_slot *first_unhealthy = NULL;
	for (size_t i = 0; i < ncond && !first_unhealthy; i++)
		if (!ssc__healthy(&cond[i]))
			first_unhealthy = &cond[i];
	for (size_t i = ncond; i-- > 0;) {
		struct ssc_slot *s = &cond[i];
		if (!s->exists)
			continue;
		if (s->terminating) {
			if (mono)
				return n;
			continue;
		}
		if (mono && !s->ready && s != first_unhealthy)
			return n;
		s->remove = true;
		n++;
		if (mono)
			return n;
	}
	if (!p->rolling || n)
		return n;
	/* updateStatefulSetAfterInvariantEstablished */
	int unavailable = 0;
	for (size_t i = 0; i < nrep; i++)
		if (!ssc__healthy(&rep[i]))
			unavailable++;
	int budget = p->max_unavailable - unavailable;
	for (size_t i = nrep; i-- > 0 && (long)i >= p->partition && budget > 0;) {
		struct ssc_slot *s = &rep[i];
		if (s->exists && !s->updated && !s->terminating) {
			s->remove = true;
			n++;
			budget--;
		}
	}
	return n;
}

/* ---- writes ------------------------------------------------------------- */

/* A write in flight for a StatefulSet. */
struct ssc__op {
	struct ssc *s;
	char *owner; /* the set's key */
	char *ns, *set_name, *set_uid;
	char *key;		    /* the object written */
	const struct informer *inf; /* where it shows */
	bool gone;
	const char *what; /* "create Pod", "delete Pod", "create Claim", ... */
	char *pod;	  /* for a claim's event */
};

static struct ssc__op *ssc__op_new(struct ssc *s, const char *owner, const struct ynode *set,
				   const struct informer *inf, const char *name, const char *what)
{
	struct ssc__op *op = xcalloc(1, sizeof(*op));
	op->s = s;
	op->owner = xstrdup(owner);
	op->ns = xstrdup(obj_namespace(set) ? obj_namespace(set) : "");
	op->set_name = xstrdup(obj_name(set));
	op->set_uid = xstrdup(obj_uid(set) ? obj_uid(set) : "");
	op->key = obj_key(op->ns, name);
	op->inf = inf;
	op->what = what;
	expect_write(s->exp, owner);
	return op;
}

static void ssc__op_free(struct ssc__op *op)
{
	free(op->owner);
	free(op->ns);
	free(op->set_name);
	free(op->set_uid);
	free(op->key);
	free(op->pod);
	free(op);
}

static void ssc__written(void *data, const struct writer_result *res)
{
	struct ssc__op *op = data;
	struct ssc *s = op->s;
	bool ok = res->status == 0;
	uint64_t now = loop_now_ms();
	expect_written(s->exp, op->owner, ok, op->inf, op->key, res->min_rv, op->gone, now);
	char ns[256];
	const char *name = obj_key_split(op->key, ns, sizeof(ns));
	if (!name)
		name = op->key;
	bool ev =
	    s->c->events && (!strncmp(op->what, "create ", 7) || !strncmp(op->what, "delete ", 7));
	bool claim = strstr(op->what, "Claim") != NULL;
	if (ok && ev) {
		if (claim)
			events_record_ref(s->c->events, SSC__COMPONENT, "apps/v1", "StatefulSet",
					  op->ns, op->set_name, op->set_uid, "Normal",
					  "SuccessfulCreate",
					  "%s %s Pod %s in StatefulSet %s success", op->what, name,
					  op->pod ? op->pod : "", op->set_name);
		else
			events_record_ref(
			    s->c->events, SSC__COMPONENT, "apps/v1", "StatefulSet", op->ns,
			    op->set_name, op->set_uid, "Normal",
			    op->what[0] == 'c' ? "SuccessfulCreate" : "SuccessfulDelete",
			    "%s %s in StatefulSet %s successful", op->what, name, op->set_name);
	} else if (!ok && res->status != ENOENT && res->status != ESTALE) {
		log_warn("StatefulSet %s: cannot %s %s: %s", op->owner, op->what, res->path,
			 res->msg);
		if (ev && res->status != EEXIST)
			events_record_ref(s->c->events, SSC__COMPONENT, "apps/v1", "StatefulSet",
					  op->ns, op->set_name, op->set_uid, "Warning",
					  op->what[0] == 'c' ? "FailedCreate" : "FailedDelete",
					  "%s %s in StatefulSet %s failed error: %s", op->what,
					  name, op->set_name, res->msg);
		/* a name still taken (a pod or claim on its way out), or a
		 * refusal: look again in a while, not at once */
		workqueue_add_after(s->q, op->owner, SSC__RETRY_MS);
		ssc__op_free(op);
		return;
	}
	workqueue_add(s->q, op->owner);
	ssc__op_free(op);
}

static void ssc__delete(struct ssc *s, const char *key, const struct ynode *set,
			const struct informer *inf, const char *plural, const struct ynode *obj,
			const char *what)
{
	cleanup_free char *path = obj_path(plural, obj_namespace(obj), obj_name(obj));
	struct ssc__op *op = ssc__op_new(s, key, set, inf, obj_name(obj), what);
	op->gone = true;
	writer_delete(s->c->writer, path, obj_uid(obj), 0, ssc__written, op);
}

/* ---- revisions ---------------------------------------------------------- */

/* Finds or makes the update revision (*upd, NULL while it is being made),
 * renumbers it above the others when an older template came back, deletes
 * duplicates. revs keeps the other (old) ones. Returns the writes made. */
static unsigned ssc__history(struct ssc *s, const char *key, const struct ynode *set,
			     struct revision_list *revs, const struct ynode **upd)
{
	unsigned writes = 0;
	revision_collect(s->owned_revs, obj_uid(set), revs);
	cleanup_ynode struct ynode *data = revision_data(set);
	const struct ynode **dups = xcalloc(revs->n + 1, sizeof(*dups));
	size_t ndups = 0;
	long long max_old = 0;
	const struct ynode *cur = revision_split(revs, data, dups, &ndups, &max_old);
	for (size_t i = 0; i < ndups; i++) {
		ssc__delete(s, key, set, s->revs, "controllerrevisions", dups[i],
			    "delete revision");
		writes++;
	}
	free(dups);
	*upd = cur;
	if (cur) {
		if (obj_int(cur, "revision", 0) <= max_old) {
			cleanup_free char *path =
			    obj_path("controllerrevisions", obj_namespace(cur), obj_name(cur));
			struct ssc__op *op =
			    ssc__op_new(s, key, set, s->revs, obj_name(cur), "renumber revision");
			writer_update(s->c->writer, path, revision_mutate_number,
				      (void *)(intptr_t)(max_old + 1), NULL, 0, ssc__written, op);
			writes++;
		}
		return writes;
	}
	long long collision = obj_int(set, "status.collisionCount", -1);
	cleanup_free char *h = rollout_template_hash(ynode_path(set, "spec.template"), collision);
	struct ynode *cr = revision_new(set, "StatefulSet", h, max_old + 1, ynode_clone(data));
	cleanup_free char *dir = treepath_folder("controllerrevisions", obj_namespace(set));
	struct ssc__op *op = ssc__op_new(s, key, set, s->revs, obj_name(cr), "create revision");
	writer_create(s->c->writer, dir, cr, 0, ssc__written, op);
	return writes + 1;
}

/* ---- sync --------------------------------------------------------------- */

struct ssc__claim {
	struct ssc *s;
	const char *owner;
	const struct ynode *set;
	struct adopt_owner as;
	struct selector *sel;
	const struct ynode **pods;
	size_t n, cap;
	unsigned writes;
};

static int ssc__visit_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct ssc__claim *cl = data;
	struct ssc *s = cl->s;
	/* isMemberOf: only pods named as the set's are its */
	if (ssc_pod_ordinal(obj_name(cl->set), obj_name(pod)) < 0)
		return 0;
	enum adopt_claim what = adopt_claim(&cl->as, cl->sel, pod);
	if (what == ADOPT_IGNORE || (what == ADOPT_ADOPT && !pod_is_active(pod)))
		return 0;
	if (what == ADOPT_RELEASE || what == ADOPT_ADOPT) {
		cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
		struct ssc__op *op =
		    ssc__op_new(s, cl->owner, cl->set, s->pods, obj_name(pod), "update Pod");
		adopt_write(s->c->writer, path, &cl->as, what, pod_is_active, ssc__written, op);
		cl->writes++;
		return 0;
	}
	if (cl->n == cl->cap) {
		cl->cap = cl->cap ? 2 * cl->cap : 16;
		cl->pods = xrealloc(cl->pods, cl->cap * sizeof(*cl->pods));
	}
	cl->pods[cl->n++] = pod;
	return 0;
}

static int ssc__by_ordinal(const void *a, const void *b, void *arg)
{
	const char *set = arg;
	long x = ssc_pod_ordinal(set, obj_name(*(const struct ynode *const *)a));
	long y = ssc_pod_ordinal(set, obj_name(*(const struct ynode *const *)b));
	return x < y ? -1 : x > y;
}

static bool ssc__running_ready(const struct ynode *pod)
{
	const char *phase = ynode_path_str(pod, "status.phase");
	return phase && !strcmp(phase, "Running") && pod_is_ready(pod, NULL);
}

static void ssc__slot_fill(struct ssc_slot *sl, const struct ynode *pod, const char *upd_name,
			   long long min_ready, int64_t now, int64_t *wait)
{
	if (!pod)
		return;
	sl->exists = true;
	sl->terminating = object_is_deleting(pod);
	sl->failed = pod_is_terminal(pod);
	sl->ready = ssc__running_ready(pod);
	int64_t w = 0;
	sl->available = sl->ready && pod_is_available(pod, min_ready, now, &w);
	if (sl->ready && !sl->available && w > 0 && (!*wait || w < *wait))
		*wait = w;
	const char *h = obj_label(pod, REVISION_HASH_LABEL);
	sl->updated = h && upd_name && !strcmp(h, upd_name);
}

/* What a claim's ownerReferences are set from, on a worker. */
struct ssc__owners_arg {
	struct ynode *set; /* name, uid, policy */
	char *pod, *pod_uid;
	bool in_range;
};

static void ssc__owners_arg_free(void *p)
{
	struct ssc__owners_arg *a = p;
	ynode_free(a->set);
	free(a->pod);
	free(a->pod_uid);
	free(a);
}

static int ssc__mutate_owners(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	struct ssc__owners_arg *a = arg;
	return ssc_claim_owners(obj, a->set, a->pod, a->pod_uid, a->in_range) ? 1 : 0;
}

/* The claims of the pod at ordinal: keeps their ownerReferences as the
 * policy wants them (pod: the pod, when there is one) and, with create,
 * makes the missing ones. Returns the writes; *ready is false while a
 * claim is missing or on its way out. */
static unsigned ssc__claims(struct ssc *s, const char *key, const struct ynode *set, long ord,
			    const struct ynode *pod, bool in_range, bool create, bool *ready)
{
	unsigned writes = 0;
	*ready = true;
	const struct ynode *cts = ynode_path(set, "spec.volumeClaimTemplates");
	const char *ns = obj_namespace(set);
	cleanup_free char *pname = xasprintf("%s-%ld", obj_name(set), ord);
	for (size_t i = 0; cts && cts->type == YNODE_SEQ && i < cts->n; i++) {
		const struct ynode *ct = ynode_item(cts, i);
		const char *cn = ynode_path_str(ct, "metadata.name");
		if (!cn)
			continue;
		cleanup_free char *name = ssc_claim_name(cn, obj_name(set), ord);
		cleanup_free char *ckey = obj_key(ns, name);
		const struct ynode *claim = informer_get(s->claims, ckey);
		if (!claim) {
			*ready = false;
			if (!create)
				continue;
			struct ynode *obj = ssc_new_claim(set, ct, ord);
			cleanup_free char *dir = treepath_folder("persistentvolumeclaims", ns);
			struct ssc__op *op =
			    ssc__op_new(s, key, set, s->claims, name, "create Claim");
			op->pod = xstrdup(pname);
			writer_create(s->c->writer, dir, obj, 0, ssc__written, op);
			writes++;
			continue;
		}
		if (object_is_deleting(claim)) {
			*ready = false;
			continue;
		}
		cleanup_ynode struct ynode *probe = ynode_clone(claim);
		if (!ssc_claim_owners(probe, set, pname, pod ? obj_uid(pod) : NULL, in_range))
			continue;
		struct ssc__owners_arg *a = xcalloc(1, sizeof(*a));
		a->set = ynode_new_map();
		struct ynode *md = ynode_get_map(a->set, "metadata");
		ynode_set(md, "name", ynode_new_str(obj_name(set)));
		ynode_set(md, "uid", ynode_new_str(obj_uid(set)));
		const struct ynode *rp =
		    ynode_path(set, "spec.persistentVolumeClaimRetentionPolicy");
		if (rp)
			ynode_set(ynode_get_map(a->set, "spec"),
				  "persistentVolumeClaimRetentionPolicy", ynode_clone(rp));
		a->pod = xstrdup(pname);
		a->pod_uid = pod && obj_uid(pod) ? xstrdup(obj_uid(pod)) : NULL;
		a->in_range = in_range;
		cleanup_free char *path = obj_path("persistentvolumeclaims", ns, name);
		struct ssc__op *op = ssc__op_new(s, key, set, s->claims, name, "update Claim");
		writer_update(s->c->writer, path, ssc__mutate_owners, a, ssc__owners_arg_free, 0,
			      ssc__written, op);
		writes++;
		/* a condemned pod goes only once its claims name it */
		if (!in_range)
			*ready = false;
	}
	return writes;
}

static const struct ynode *ssc__find_rev(const struct revision_list *old, const struct ynode *upd,
					 const char *name)
{
	if (!name || !*name)
		return NULL;
	if (upd && !strcmp(obj_name(upd), name))
		return upd;
	for (size_t i = 0; i < old->n; i++)
		if (!strcmp(obj_name(old->v[i]), name))
			return old->v[i];
	return NULL;
}

/* cleanupHistory: old revisions beyond revisionHistoryLimit that neither
 * a pod nor the status names go, lowest numbers first. */
static void ssc__cleanup_history(struct ssc *s, const char *key, const struct ynode *set,
				 struct revision_list *old, const struct ynode *const *pods,
				 size_t npods, const char *current)
{
	size_t keep = 0;
	for (size_t i = 0; i < old->n; i++) {
		const char *rn = obj_name(old->v[i]);
		bool used = current && !strcmp(current, rn);
		for (size_t j = 0; j < npods && !used; j++) {
			const char *h = obj_label(pods[j], REVISION_HASH_LABEL);
			used = h && !strcmp(h, rn);
		}
		if (!used)
			old->v[keep++] = old->v[i];
	}
	old->n = keep;
	const struct ynode **gone = xcalloc(old->n + 1, sizeof(*gone));
	size_t n =
	    revision_excess(old, obj_int(set, "spec.revisionHistoryLimit", 10), NULL, NULL, gone);
	for (size_t i = 0; i < n; i++)
		ssc__delete(s, key, set, s->revs, "controllerrevisions", gone[i],
			    "delete revision");
	free(gone);
}

static void ssc__write_status(struct ssc *s, const char *key, const struct ynode *set,
			      struct ynode *st)
{
	const struct ynode *stored = ynode_get(set, "status");
	if (ynode_equal(st, stored)) {
		ynode_free(st);
		return;
	}
	uint64_t wait = 0;
	if (!throttle_take(s->status, key, throttle_status_urgent(stored, st), loop_now_ms(),
			   &wait)) {
		workqueue_add_after(s->q, key, wait);
		ynode_free(st);
		return;
	}
	cleanup_free char *path = obj_path("statefulsets", obj_namespace(set), obj_name(set));
	struct ssc__op *op =
	    ssc__op_new(s, key, set, s->sets, obj_name(set), "write the status of");
	writer_update(s->c->writer, path, ctrl_mutate_status, st, ctrl_ynode_free, 0, ssc__written,
		      op);
}

static int ssc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct ssc *s = data;
	const struct ynode *set = informer_get(s->sets, key);
	if (!set) {
		expect_forget(s->exp, key);
		throttle_forget(s->status, key);
		return 0;
	}
	uint64_t now_ms = loop_now_ms(), recheck = 0;
	if (!expect_ready(s->exp, key, now_ms, &recheck)) {
		if (recheck)
			workqueue_add_after(s->q, key, recheck);
		return 0;
	}
	if (!obj_uid(set) || object_is_deleting(set))
		return 0;
	cleanup_error struct error *serr = NULL;
	struct ssc__claim cl = {.s = s, .owner = key, .set = set};
	if (selector_parse_labelselector(ynode_path(set, "spec.selector"), &cl.sel, &serr) < 0) {
		log_warn("StatefulSet %s: spec.selector: %s", key, serr->msg);
		return 0;
	}
	if (selector_is_empty(cl.sel) || selector_is_nothing(cl.sel)) {
		log_warn("StatefulSet %s: an empty selector would select every pod; ignored", key);
		selector_free(cl.sel);
		return 0;
	}
	struct revision_list old = {0};
	const struct ynode *upd = NULL;
	cl.writes = ssc__history(s, key, set, &old, &upd);
	if (!upd) {
		selector_free(cl.sel);
		free(old.v);
		return 0;
	}
	const char *upd_name = obj_name(upd);
	const struct ynode *cur =
	    ssc__find_rev(&old, upd, ynode_path_str(set, "status.currentRevision"));
	if (!cur)
		cur = upd;
	const char *cur_name = obj_name(cur);

	adopt_owner_init(&cl.as, set, "apps/v1", "StatefulSet");
	const char *ns = obj_namespace(set);
	owners_foreach_owned(s->owned_pods, obj_uid(set), ssc__visit_pod, &cl);
	owners_foreach_orphan(s->owned_pods, ns, ssc__visit_pod, &cl);
	selector_free(cl.sel);
	const char *name = obj_name(set);
	if (cl.n > 1)
		qsort_r(cl.pods, cl.n, sizeof(*cl.pods), ssc__by_ordinal, (void *)name);

	long long replicas = obj_int(set, "spec.replicas", 1);
	if (replicas < 0)
		replicas = 0;
	long start = (long)obj_int(set, "spec.ordinals.start", 0);
	if (start < 0)
		start = 0;
	long long min_ready = obj_int(set, "spec.minReadySeconds", 0);
	int64_t now = obj_now(), wait = 0;
	size_t nrep = (size_t)replicas;
	struct ssc_slot *rep = xcalloc(nrep + 1, sizeof(*rep));
	const struct ynode **rep_pod = xcalloc(nrep + 1, sizeof(*rep_pod));
	struct ssc_slot *cond = xcalloc(cl.n + 1, sizeof(*cond));
	const struct ynode **cond_pod = xcalloc(cl.n + 1, sizeof(*cond_pod));
	size_t ncond = 0;
	for (size_t i = 0; i < nrep; i++)
		rep[i].ordinal = start + (long)i;
	for (size_t i = 0; i < cl.n; i++) {
		long ord = ssc_pod_ordinal(name, obj_name(cl.pods[i]));
		if (ord >= start && ord < start + (long)nrep) {
			size_t at = (size_t)(ord - start);
			rep_pod[at] = cl.pods[i];
			ssc__slot_fill(&rep[at], cl.pods[i], upd_name, min_ready, now, &wait);
		} else {
			cond[ncond].ordinal = ord;
			cond_pod[ncond] = cl.pods[i];
			ssc__slot_fill(&cond[ncond], cl.pods[i], upd_name, min_ready, now, &wait);
			ncond++;
		}
	}

	/* claims of the pods there are: ownerReferences as the policy says */
	bool ready = true;
	for (size_t i = 0; i < nrep; i++)
		if (rep_pod[i])
			cl.writes += ssc__claims(s, key, set, rep[i].ordinal, rep_pod[i], true,
						 false, &ready);

	struct ssc_policy pol;
	ssc_policy_of(set, nrep, &pol);
	if (!cl.writes)
		ssc_plan(rep, nrep, cond, ncond, &pol);
	for (size_t i = 0; i < nrep; i++) {
		if (rep[i].remove) {
			ssc__delete(s, key, set, s->pods, "pods", rep_pod[i], "delete Pod");
			cl.writes++;
		}
	}
	for (size_t i = 0; i < nrep; i++) {
		if (!rep[i].create)
			continue;
		unsigned w = ssc__claims(s, key, set, rep[i].ordinal, NULL, true, true, &ready);
		cl.writes += w;
		if (!ready || w)
			continue;
		/* newVersionedStatefulSetPod: below the partition, the current
		 * revision's template */
		bool at_current = pol.rolling && (long)i < pol.partition && cur != upd;
		cleanup_ynode struct ynode *tmpl = at_current ? revision_template(cur) : NULL;
		const struct ynode *t = tmpl ? tmpl : ynode_path(set, "spec.template");
		struct ynode *pod =
		    ssc_new_pod(set, t, rep[i].ordinal, at_current ? cur_name : upd_name);
		cleanup_free char *dir = treepath_folder("pods", ns);
		struct ssc__op *op = ssc__op_new(s, key, set, s->pods, obj_name(pod), "create Pod");
		writer_create(s->c->writer, dir, pod, 0, ssc__written, op);
		cl.writes++;
	}
	for (size_t i = 0; i < ncond; i++) {
		if (!cond[i].remove)
			continue;
		/* whenScaled Delete: the claims name the pod before it goes */
		unsigned w =
		    ssc__claims(s, key, set, cond[i].ordinal, cond_pod[i], false, false, &ready);
		cl.writes += w;
		if (w)
			continue;
		ssc__delete(s, key, set, s->pods, "pods", cond_pod[i], "delete Pod");
		cl.writes++;
	}

	if (!cl.writes) {
		long long nreplicas = 0, nready = 0, navail = 0, ncur = 0, nupd = 0;
		for (size_t i = 0; i < cl.n; i++) {
			const struct ynode *p = cl.pods[i];
			nreplicas++;
			if (ssc__running_ready(p)) {
				nready++;
				if (pod_is_available(p, min_ready, now, NULL))
					navail++;
			}
			if (object_is_deleting(p))
				continue;
			const char *h = obj_label(p, REVISION_HASH_LABEL);
			if (h && !strcmp(h, cur_name))
				ncur++;
			if (h && !strcmp(h, upd_name))
				nupd++;
		}
		const char *cur_out = cur_name;
		/* completeRollingUpdate */
		if (nupd == replicas && nready == replicas && nreplicas == replicas) {
			cur_out = upd_name;
			ncur = nupd;
		}
		struct ynode *st = ynode_new_map();
		long long gen = obj_int(set, "metadata.generation", -1);
		if (gen >= 0)
			ynode_set(st, "observedGeneration", ynode_new_int(gen));
		ynode_set(st, "replicas", ynode_new_int(nreplicas));
		ynode_set(st, "readyReplicas", ynode_new_int(nready));
		ynode_set(st, "currentReplicas", ynode_new_int(ncur));
		ynode_set(st, "updatedReplicas", ynode_new_int(nupd));
		ynode_set(st, "currentRevision", ynode_new_str(cur_out));
		ynode_set(st, "updateRevision", ynode_new_str(upd_name));
		ynode_set(st, "availableReplicas", ynode_new_int(navail));
		const struct ynode *cc = ynode_path(set, "status.collisionCount");
		ynode_set(st, "collisionCount", cc ? ynode_clone(cc) : ynode_new_int(0));
		ynode_sort(st);
		ssc__cleanup_history(s, key, set, &old, cl.pods, cl.n, cur_out);
		ssc__write_status(s, key, set, st);
		if (wait > 0)
			workqueue_add_after(s->q, key, (uint64_t)wait * 1000 + 50);
	}
	free(rep);
	free(rep_pod);
	free(cond);
	free(cond_pod);
	free(old.v);
	free(cl.pods);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void ssc__on_set(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct ssc *s = data;
	workqueue_add(s->q, key);
}

static void ssc__on_set_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *obj)
{
	(void)old;
	ssc__on_set(data, key, obj);
}

static bool ssc__enqueue_owner(struct ssc *s, const struct ynode *obj)
{
	bool controlled = false;
	cleanup_free char *key = adopt_resolve_owner(s->sets, "StatefulSet", obj, &controlled);
	if (key)
		workqueue_add(s->q, key);
	return controlled;
}

struct ssc__match {
	struct ssc *s;
	const struct ynode *obj;
	bool claim; /* obj is a claim: match by its name */
};

static int ssc__visit_match(void *data, const char *key, const struct ynode *set)
{
	struct ssc__match *m = data;
	if (m->claim) {
		cleanup_free char *mid = xasprintf("-%s-", obj_name(set));
		if (strstr(obj_name(m->obj), mid))
			workqueue_add(m->s->q, key);
		return 0;
	}
	if (ssc_pod_ordinal(obj_name(set), obj_name(m->obj)) < 0)
		return 0;
	cleanup_selector struct selector *sel = NULL;
	if (selector_parse_labelselector(ynode_path(set, "spec.selector"), &sel, NULL) == 0 &&
	    !selector_is_empty(sel) && selector_matches(sel, ynode_path(m->obj, "metadata.labels")))
		workqueue_add(m->s->q, key);
	return 0;
}

static void ssc__on_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct ssc *s = data;
	if (ssc__enqueue_owner(s, pod) || !pod_is_active(pod))
		return;
	struct ssc__match m = {.s = s, .obj = pod};
	informer_foreach(s->sets, obj_namespace(pod), ssc__visit_match, &m);
}

static void ssc__on_pod_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *pod)
{
	struct ssc *s = data;
	if (!ynode_equal(obj_controller_ref(old), obj_controller_ref(pod)))
		ssc__enqueue_owner(s, old);
	ssc__on_pod(data, key, pod);
}

static void ssc__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	ssc__enqueue_owner(data, old);
}

static void ssc__on_rev(void *data, const char *key, const struct ynode *rev)
{
	(void)key;
	ssc__enqueue_owner(data, rev);
}

static void ssc__on_rev_update(void *data, const char *key, const struct ynode *old,
			       const struct ynode *rev)
{
	(void)old;
	ssc__on_rev(data, key, rev);
}

static void ssc__on_claim(void *data, const char *key, const struct ynode *claim)
{
	(void)key;
	struct ssc *s = data;
	struct ssc__match m = {.s = s, .obj = claim, .claim = true};
	informer_foreach(s->sets, obj_namespace(claim), ssc__visit_match, &m);
}

static void ssc__on_claim_update(void *data, const char *key, const struct ynode *old,
				 const struct ynode *claim)
{
	/* a claim's status (its binding) decides nothing here */
	if (ynode_equal(ynode_get(old, "metadata"), ynode_get(claim, "metadata")))
		return;
	ssc__on_claim(data, key, claim);
}

struct ssc *ssc_new(struct ctrl *c)
{
	struct ssc *s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->sets = ctrl_informer(c, "statefulsets");
	s->pods = ctrl_informer(c, "pods");
	s->revs = ctrl_informer(c, "controllerrevisions");
	s->claims = ctrl_informer(c, "persistentvolumeclaims");
	s->owned_pods = ctrl_owners(c, "pods");
	s->owned_revs = ctrl_owners(c, "controllerrevisions");
	s->q = workqueue_new(c->loop, "statefulsets", NULL);
	s->exp = expect_new();
	s->status = throttle_new(c->cfg ? c->cfg->status_interval_ms : 0);
	struct informer_handlers sh = {
	    .on_add = ssc__on_set,
	    .on_update = ssc__on_set_update,
	    .on_delete = ssc__on_set,
	};
	informer_add_handlers(s->sets, &sh, s);
	struct informer_handlers ph = {
	    .on_add = ssc__on_pod,
	    .on_update = ssc__on_pod_update,
	    .on_delete = ssc__on_pod_delete,
	};
	informer_add_handlers(s->pods, &ph, s);
	struct informer_handlers rh = {
	    .on_add = ssc__on_rev,
	    .on_update = ssc__on_rev_update,
	    .on_delete = ssc__on_rev,
	};
	informer_add_handlers(s->revs, &rh, s);
	struct informer_handlers ch = {
	    .on_add = ssc__on_claim,
	    .on_update = ssc__on_claim_update,
	    .on_delete = ssc__on_claim,
	};
	informer_add_handlers(s->claims, &ch, s);
	workqueue_set_handler(s->q, ssc__sync, s);
	return s;
}

void ssc_free(struct ssc *s)
{
	if (!s)
		return;
	workqueue_free(s->q);
	expect_free(s->exp);
	throttle_free(s->status);
	free(s);
}
