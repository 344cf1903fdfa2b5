/* disruption.c: PodDisruptionBudgets' status and evictions (see
 * disruption.h).
 *
 * A budget is synced when it, a pod of its namespace, or a controller of
 * its namespace changes. The sync counts on the loop's thread from the
 * informers; the status is computed again on the worker from the budget as
 * read (ctrl/write.h), so that the disruptedPods an eviction wrote a
 * moment ago, which the informer may not show yet, are kept and counted.
 *
 * An eviction reads the mount afresh on the worker that runs it: the pod,
 * then every budget of its namespace. This file must never delete a pod
 * covered by a budget without first writing that budget's decrement. */
#include "disruption.h"
#include "conditions.h"
#include "ctrl.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "rollout.h"
#include "selector.h"
#include "timefmt.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DISRUPTION__PDBS "poddisruptionbudgets"

/* ---- pure ---------------------------------------------------------------- */

static bool disruption__set(const struct ynode *v)
{
	return v && !ynode_is_null(v);
}

static bool disruption__is_percent(const struct ynode *v)
{
	const char *s = ynode_str(v);
	return v && v->type == YNODE_SCALAR && s && *s && s[strlen(s) - 1] == '%';
}

bool disruption_needs_scale(const struct ynode *spec)
{
	if (disruption__set(ynode_get(spec, "maxUnavailable")))
		return true;
	return disruption__is_percent(ynode_get(spec, "minAvailable"));
}

int disruption_budget(const struct ynode *spec, long long npods, long long scale,
		      struct disruption_budget *out, struct error **err)
{
	const struct ynode *maxu = ynode_get(spec, "maxUnavailable");
	const struct ynode *mina = ynode_get(spec, "minAvailable");
	*out = (struct disruption_budget){0};
	int v = 0;
	if (disruption__set(maxu)) {
		if (rollout_scaled_value(maxu, (int)scale, true, &v) < 0)
			return error_set(err, EINVAL, "invalid value for maxUnavailable: %s",
					 ynode_str(maxu) ? ynode_str(maxu) : "?");
		out->expected = scale;
		out->desired = scale - v > 0 ? scale - v : 0;
	} else if (disruption__set(mina)) {
		if (disruption__is_percent(mina)) {
			if (rollout_scaled_value(mina, (int)scale, true, &v) < 0)
				return error_set(err, EINVAL, "invalid value for minAvailable: %s",
						 ynode_str(mina));
			out->expected = scale;
			out->desired = v;
		} else {
			long long n = 0;
			if (ynode_int(mina, &n) != 0)
				return error_set(err, EINVAL, "invalid value for minAvailable: %s",
						 ynode_str(mina) ? ynode_str(mina) : "?");
			out->expected = npods;
			out->desired = n;
		}
	}
	return 0;
}

long long disruption_allowed(long long current, long long desired, long long expected)
{
	long long a = current - desired;
	return expected <= 0 || a <= 0 ? 0 : a;
}

void disruption_calc_free(struct disruption_calc *k)
{
	if (!k)
		return;
	free(k->failure);
	ynode_free(k->healthy);
	ynode_free(k->present);
	free(k);
}

static bool disruption__listed(const struct ynode *seq, const char *name)
{
	for (size_t i = 0; seq && seq->type == YNODE_SEQ && i < seq->n; i++) {
		const char *s = ynode_str(ynode_item(seq, i));
		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

struct ynode *disruption_status(const struct ynode *old, const struct disruption_calc *k,
				int64_t now)
{
	struct ynode *st = old && old->type == YNODE_MAP ? ynode_clone(old) : ynode_new_map();
	char nowbuf[RFC3339_SIZE];
	obj_time_format(now, nowbuf);
	/* disruptedPods: those still here, for a while */
	struct ynode *kept = ynode_new_map();
	const struct ynode *dp = ynode_get(st, "disruptedPods");
	for (size_t i = 0; dp && dp->type == YNODE_MAP && i < dp->n; i++) {
		const char *name = ynode_str(dp->items[2 * i]);
		int64_t t = obj_time_parse(ynode_str(dp->items[2 * i + 1]));
		if (!name || !disruption__listed(k->present, name) || t < 0 ||
		    t + DISRUPTION_DELETION_TIMEOUT_S < now)
			continue;
		ynode_set(kept, name, ynode_clone(dp->items[2 * i + 1]));
	}
	long long current = 0;
	for (size_t i = 0; k->healthy && i < k->healthy->n; i++) {
		const char *s = ynode_str(ynode_item(k->healthy, i));
		if (s && !ynode_get(kept, s))
			current++;
	}
	long long allowed =
	    k->failure ? 0 : disruption_allowed(current, k->b.desired, k->b.expected);
	if (kept->n)
		ynode_set(st, "disruptedPods", kept);
	else {
		ynode_del(st, "disruptedPods");
		ynode_free(kept);
	}
	ynode_set(st, "currentHealthy", ynode_new_int(current));
	ynode_set(st, "desiredHealthy", ynode_new_int(k->failure ? 0 : k->b.desired));
	ynode_set(st, "disruptionsAllowed", ynode_new_int(allowed));
	ynode_set(st, "expectedPods", ynode_new_int(k->failure ? 0 : k->b.expected));
	ynode_set(st, "observedGeneration", ynode_new_int(k->generation));
	struct condition c = {.type = "DisruptionAllowed"};
	if (k->failure) {
		c.status = "False";
		c.reason = "SyncFailed";
		c.message = k->failure;
	} else if (allowed > 0) {
		c.status = "True";
		c.reason = "SufficientPods";
	} else {
		c.status = "False";
		c.reason = "InsufficientPods";
	}
	condition_set(st, &c, nowbuf, 0);
	return st;
}

/* ---- the eviction, on a worker -------------------------------------------- */

static bool disruption__matches(const struct ynode *pdb, const struct ynode *pod)
{
	const struct ynode *sel = ynode_path(pdb, "spec.selector");
	if (!sel || ynode_is_null(sel))
		return false; /* policy/v1: a nil selector selects nothing */
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_labelselector(sel, &s, NULL) < 0)
		return false;
	return selector_matches(s, ynode_path(pod, "metadata.labels"));
}

/* The budgets of ns covering pod, read from the mount: their paths. */
static int disruption__covering(const char *mount, const char *ns, const struct ynode *pod,
				char ***paths, size_t *n, struct error **err)
{
	*paths = NULL;
	*n = 0;
	cleanup_free char *rel = xasprintf("namespaces/%s/" DISRUPTION__PDBS, ns);
	cleanup_free char *dir = xasprintf("%s/%s", mount, rel);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : error_set(err, errno, "%s: %s", rel, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		cleanup_free char *path = xasprintf("%s/%s", rel, de->d_name);
		cleanup_ynode struct ynode *pdb = NULL;
		struct error *rerr = NULL;
		if (write_read_object(mount, path, &pdb, &rerr) < 0) {
			error_free(rerr); /* gone meanwhile */
			continue;
		}
		if (!disruption__matches(pdb, pod))
			continue;
		*paths = xrealloc(*paths, (*n + 1) * sizeof(**paths));
		(*paths)[(*n)++] = xstrdup(path);
	}
	closedir(d);
	return 0;
}

static int disruption__delete_pod(const char *mount, const char *path, struct error **err)
{
	cleanup_free char *full = xasprintf("%s/%s", mount, path);
	if (unlink(full) < 0 && errno != ENOENT)
		return error_set(err, errno, "deleting %s: %s", path, strerror(errno));
	return 0;
}

/* One try: 1 to try again (the budget changed under the write). */
static int disruption__try_evict(const char *mount, const char *ns, const char *name,
				 const char *pod_path, struct error **err)
{
	cleanup_ynode struct ynode *pod = NULL;
	struct error *rerr = NULL;
	if (write_read_object(mount, pod_path, &pod, &rerr) < 0) {
		if (rerr->status == ENOENT) {
			error_free(rerr);
			return error_set(err, ENOENT, "pods \"%s\" not found", name);
		}
		*err = rerr;
		return -rerr->status;
	}
	if (object_is_deleting(pod))
		return 0;
	/* a pod that has ended or not started disrupts nothing */
	const char *phase = ynode_path_str(pod, "status.phase");
	if (pod_is_terminal(pod) || (phase && !strcmp(phase, "Pending")))
		return disruption__delete_pod(mount, pod_path, err);
	char **paths = NULL;
	size_t n = 0;
	int r = disruption__covering(mount, ns, pod, &paths, &n, err);
	if (r < 0)
		return r;
	if (n == 0) {
		free(paths);
		return disruption__delete_pod(mount, pod_path, err);
	}
	cleanup_free char *pdb_path = xstrdup(paths[0]);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (n > 1)
		return error_set(err, EINVAL,
				 "This pod has more than one PodDisruptionBudget, which the "
				 "eviction subresource does not support.");
	cleanup_ynode struct ynode *pdb = NULL;
	if (write_read_object(mount, pdb_path, &pdb, &rerr) < 0) {
		error_free(rerr);
		return 1; /* gone meanwhile: look again */
	}
	const char *pdb_name = obj_name(pdb) ? obj_name(pdb) : "?";
	long long gen = obj_int(pdb, "metadata.generation", 0);
	long long observed = obj_int(pdb, "status.observedGeneration", -1);
	if (observed < gen)
		return error_set(
		    err, EBUSY,
		    DISRUPTION_VIOLATION
		    " The disruption budget %s is still being processed by the server.",
		    pdb_name);
	long long allowed = obj_int(pdb, "status.disruptionsAllowed", 0);
	long long current = obj_int(pdb, "status.currentHealthy", 0);
	long long desired = obj_int(pdb, "status.desiredHealthy", 0);
	if (!pod_is_ready(pod, NULL)) {
		/* unhealthyPodEvictionPolicy: IfHealthyBudget (the default) lets an
		 * unready pod go while the budget is met, AlwaysAllow always */
		const char *policy = ynode_path_str(pdb, "spec.unhealthyPodEvictionPolicy");
		if ((policy && !strcmp(policy, "AlwaysAllow")) ||
		    (current >= desired && desired > 0))
			return disruption__delete_pod(mount, pod_path, err);
	}
	if (allowed < 0)
		return error_set(err, EACCES, "pdb disruptions allowed is negative");
	if (allowed == 0)
		return error_set(err, EBUSY,
				 DISRUPTION_VIOLATION
				 " The disruption budget %s needs %lld healthy pods and has %lld "
				 "currently",
				 pdb_name, desired, current);
	struct ynode *st = ynode_get_map(pdb, "status");
	struct ynode *dp = ynode_get_map(st, "disruptedPods");
	if (dp->n >= DISRUPTION_MAX_DISRUPTED)
		return error_set(err, EACCES,
				 "DisruptedPods map too big - too many evictions not confirmed by "
				 "PDB controller");
	char nowbuf[RFC3339_SIZE];
	obj_time_format(obj_now(), nowbuf);
	ynode_set(dp, name, ynode_new_str(nowbuf));
	ynode_set(st, "disruptionsAllowed", ynode_new_int(allowed - 1));
	r = write_put_object(mount, pdb_path, pdb, O_TRUNC, err);
	if (r == -EAGAIN || r == -ENOENT) {
		error_free(*err);
		*err = NULL;
		return 1; /* another eviction or the controller got in first */
	}
	if (r < 0)
		return r;
	return disruption__delete_pod(mount, pod_path, err);
}

int disruption_evict(const char *mount, const char *ns, const char *name, struct error **err)
{
	cleanup_free char *pod_path = obj_path("pods", ns, name);
	for (int attempt = 0; attempt < 4 * WRITER_RETRIES; attempt++) {
		int r = disruption__try_evict(mount, ns, name, pod_path, err);
		if (r <= 0)
			return r;
	}
	return error_set(err, EAGAIN, "the disruption budget of pod %s/%s kept changing: try again",
			 ns, name);
}

/* ---- the controller -------------------------------------------------------- */

struct disruption {
	struct ctrl *c;
	struct informer *pdbs;
	struct informer *pods;
	struct informer *rs, *deploy, *rc, *sts;
	struct workqueue *q;
};

/* The replicas of a pod's controller, once per controller (seen: uids). */
static int disruption__scale_of(struct disruption *d, const char *ns, const struct ynode *pod,
				struct keymap *seen, long long *sum, struct error **err)
{
	const struct ynode *ref = obj_controller_ref(pod);
	if (!ref)
		return error_set(err, ENOENT, "found no controllers for pod \"%s\"", obj_name(pod));
	const char *kind = ynode_path_str(ref, "kind");
	const char *name = ynode_path_str(ref, "name");
	const char *uid = ynode_path_str(ref, "uid");
	struct informer *inf = NULL;
	if (kind && !strcmp(kind, "ReplicaSet"))
		inf = d->rs;
	else if (kind && !strcmp(kind, "ReplicationController"))
		inf = d->rc;
	else if (kind && !strcmp(kind, "StatefulSet"))
		inf = d->sts;
	else if (kind && !strcmp(kind, "Deployment"))
		inf = d->deploy;
	cleanup_free char *key = obj_key(ns, name ? name : "");
	const struct ynode *owner = inf ? informer_get(inf, key) : NULL;
	if (!owner || (uid && obj_uid(owner) && strcmp(uid, obj_uid(owner))))
		return error_set(err, ENOENT, "found no controllers for pod \"%s\"", obj_name(pod));
	/* a Deployment's ReplicaSet counts as its Deployment */
	const struct ynode *up = obj_controller_ref(owner);
	if (inf == d->rs && up && !strcmp(ynode_path_str(up, "kind") ?: "", "Deployment")) {
		cleanup_free char *dkey = obj_key(ns, ynode_path_str(up, "name"));
		const struct ynode *dep = informer_get(d->deploy, dkey);
		if (dep)
			owner = dep;
	}
	const char *ouid = obj_uid(owner) ? obj_uid(owner) : key;
	if (keymap_has(seen, ouid))
		return 0;
	keymap_set(seen, ouid, (void *)1);
	*sum += obj_int(owner, "spec.replicas", 1);
	return 0;
}

struct disruption__walk {
	struct disruption *d;
	const struct ynode *pdb;
	struct selector *sel;
	struct disruption_calc *k;
	long long npods, scale;
	bool need_scale;
	struct keymap *seen;
	struct error *err;
};

static int disruption__visit(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct disruption__walk *w = data;
	if (!w->sel || !selector_matches(w->sel, ynode_path(pod, "metadata.labels")))
		return 0;
	w->npods++;
	if (w->need_scale && !w->err)
		disruption__scale_of(w->d, obj_namespace(pod), pod, w->seen, &w->scale, &w->err);
	if (object_is_deleting(pod))
		return 0;
	ynode_append(w->k->present, ynode_new_str(obj_name(pod)));
	if (!pod_is_terminal(pod) && pod_is_ready(pod, NULL))
		ynode_append(w->k->healthy, ynode_new_str(obj_name(pod)));
	return 0;
}

static int disruption__mutate(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct disruption_calc *k = arg;
	struct ynode *st = disruption_status(ynode_get(obj, "status"), k, obj_now());
	/* the budget as read may be newer than the one counted */
	ynode_set(st, "observedGeneration", ynode_new_int(k->generation));
	if (ynode_equal(st, ynode_get(obj, "status"))) {
		ynode_free(st);
		return 0;
	}
	ynode_set(obj, "status", st);
	return 1;
}

static void disruption__calc_free(void *p)
{
	disruption_calc_free(p);
}

static void disruption__written(void *data, const struct writer_result *res)
{
	char *key = data;
	if (res->status && res->status != ENOENT)
		log_warn("disruption: status of PodDisruptionBudget %s: %s", key, res->msg);
	free(key);
}

static int disruption__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct disruption *d = data;
	const struct ynode *pdb = informer_get(d->pdbs, key);
	if (!pdb || object_is_deleting(pdb))
		return 0;
	struct disruption_calc *k = xcalloc(1, sizeof(*k));
	k->healthy = ynode_new_seq();
	k->present = ynode_new_seq();
	k->generation = obj_int(pdb, "metadata.generation", 1);
	const struct ynode *spec = ynode_get(pdb, "spec");
	struct disruption__walk w = {.d = d, .pdb = pdb, .k = k, .seen = keymap_new(NULL)};
	w.need_scale = disruption_needs_scale(spec);
	const struct ynode *selnode = ynode_get(spec, "selector");
	struct error *serr = NULL;
	if (selnode && !ynode_is_null(selnode) &&
	    selector_parse_labelselector(selnode, &w.sel, &serr) < 0) {
		k->failure = xstrdup(serr->msg);
		error_free(serr);
	}
	if (!k->failure)
		informer_foreach(d->pods, obj_namespace(pdb), disruption__visit, &w);
	if (w.err) {
		k->failure = xstrdup(w.err->msg);
		error_free(w.err);
	}
	if (!k->failure && disruption_budget(spec, w.npods, w.scale, &k->b, &serr) < 0) {
		k->failure = xstrdup(serr->msg);
		error_free(serr);
	}
	selector_free(w.sel);
	keymap_free(w.seen);
	/* evicted pods that are not gone count again after a while */
	const struct ynode *dp = ynode_path(pdb, "status.disruptedPods");
	if (dp && dp->type == YNODE_MAP && dp->n)
		workqueue_add_after(d->q, key, (DISRUPTION_DELETION_TIMEOUT_S + 1) * 1000ULL);
	cleanup_free char *path = obj_path(DISRUPTION__PDBS, obj_namespace(pdb), obj_name(pdb));
	writer_update(d->c->writer, path, disruption__mutate, k, disruption__calc_free, 0,
		      disruption__written, xstrdup(key));
	return 0;
}

struct disruption__ns {
	struct disruption *d;
};

static int disruption__enqueue(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct disruption *d = data;
	workqueue_add(d->q, key);
	return 0;
}

/* Something of namespace ns changed: its budgets again. */
static void disruption__touch_ns(struct disruption *d, const struct ynode *obj)
{
	const char *ns = obj_namespace(obj);
	if (ns)
		informer_foreach(d->pdbs, ns, disruption__enqueue, d);
}

static void disruption__on_obj(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	disruption__touch_ns(data, obj);
}

static void disruption__on_obj_update(void *data, const char *key, const struct ynode *old,
				      const struct ynode *obj)
{
	(void)key;
	(void)old;
	disruption__touch_ns(data, obj);
}

static void disruption__on_pdb(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct disruption *d = data;
	workqueue_add(d->q, key);
}

static void disruption__on_pdb_update(void *data, const char *key, const struct ynode *old,
				      const struct ynode *obj)
{
	(void)old;
	disruption__on_pdb(data, key, obj);
}

struct disruption *disruption_new(struct ctrl *c)
{
	struct disruption *d = xcalloc(1, sizeof(*d));
	d->c = c;
	d->pdbs = ctrl_informer(c, DISRUPTION__PDBS);
	d->pods = ctrl_informer(c, "pods");
	d->rs = ctrl_informer(c, "replicasets");
	d->deploy = ctrl_informer(c, "deployments");
	d->rc = ctrl_informer(c, "replicationcontrollers");
	d->sts = ctrl_informer(c, "statefulsets");
	d->q = workqueue_new(c->loop, "disruption", NULL);
	struct informer_handlers ph = {.on_add = disruption__on_pdb,
				       .on_update = disruption__on_pdb_update};
	informer_add_handlers(d->pdbs, &ph, d);
	struct informer_handlers oh = {
	    .on_add = disruption__on_obj,
	    .on_update = disruption__on_obj_update,
	    .on_delete = disruption__on_obj,
	};
	informer_add_handlers(d->pods, &oh, d);
	informer_add_handlers(d->rs, &oh, d);
	informer_add_handlers(d->deploy, &oh, d);
	informer_add_handlers(d->rc, &oh, d);
	informer_add_handlers(d->sts, &oh, d);
	workqueue_set_handler(d->q, disruption__sync, d);
	return d;
}

void disruption_free(struct disruption *d)
{
	if (!d)
		return;
	workqueue_free(d->q);
	free(d);
}
