/* scheduler.c: the scheduler's wiring, on the loop thread.
 *
 * Informer events keep the cache and the queue in step with the mount:
 * a bound pod holds its node's resources; a pending pod for this scheduler
 * waits in the queue; a terminated, deleted or foreign pod is left alone.
 * Cluster changes that may help unschedulable pods are gathered during a
 * turn and handed to the queue once, before the decisions of that turn.
 * Each decision assumes the pod on its node at once and hands the write to
 * the binder; its result either is confirmed (by the binding's success, or
 * the pod's own update event, whichever comes first) or is forgotten and
 * the pod tried again after its back-off.
 *
 * The informers keep no trees: each object read becomes at once the struct
 * the scheduler decides on (objects.h), and a pod's struct is shared with
 * the cache while it holds a node. A successful binding is taken as the
 * pod's state at once; the pods informer still reads the close back (inotify
 * merges two closes of one file, so another writer's change can share the
 * binding's event: skipping it would lose that change).
 *
 * Nothing here blocks but the reads of the informers: writes belong to the
 * binder's threads. */
#include "scheduler.h"
#include "bind.h"
#include "cache.h"
#include "informer.h"
#include "log.h"
#include "objects.h"
#include "util.h"
#include "volumes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SCHEDULER_BATCH 128

struct scheduler {
	struct loop *loop;
	struct scheduler_opts opts;
	char *mount, *name;
	struct informer *nodes, *pods;
	struct sched_cache *cache;
	struct sched_queue *queue;
	struct sched_algo *algo;
	struct sched_binder *binder;
	struct sched_volumes *volumes; /* the pods' claims */
	struct loop_hook *hook;
	unsigned events; /* cluster events seen this turn */
	bool started;	 /* listed nodes and pods: decisions may run */
	struct scheduler_stats stats;
};

/* ---- nodes ------------------------------------------------------------------ */

static void *scheduler__node_make(void *data, const char *key, const struct ynode *obj)
{
	(void)data;
	struct sched_nodeinfo *info = sched_nodeinfo_parse(obj);
	free(info->name);
	info->name = xstrdup(key);
	return info;
}

static void scheduler__node_unref(void *item)
{
	sched_nodeinfo_free(item);
}

static void scheduler__node_set(void *data, const char *key, void *item)
{
	struct scheduler *s = data;
	const struct sched_nodeinfo *info = item;
	if (info->error)
		log_warn("node %s: %s", key, info->error);
	if (sched_cache_set_node(s->cache, sched_nodeinfo_clone(info)))
		s->events |= SCHED_EVENT_NODE;
}

static void scheduler__node_update(void *data, const char *key, void *old, void *item)
{
	(void)old;
	scheduler__node_set(data, key, item);
}

static void scheduler__node_delete(void *data, const char *key, void *old)
{
	(void)old;
	struct scheduler *s = data;
	sched_cache_remove_node(s->cache, key);
}

/* ---- pods --------------------------------------------------------------------- */

static bool scheduler__pump(struct scheduler *s, unsigned max);

static void *scheduler__pod_make(void *data, const char *key, const struct ynode *obj)
{
	(void)data;
	struct sched_pod *p = sched_pod_parse(obj);
	if (strcmp(p->key, key) != 0) {
		free(p->key);
		p->key = xstrdup(key);
	}
	return p;
}

static void scheduler__pod_unref(void *item)
{
	sched_pod_free(item);
}

static void scheduler__pod_set(struct scheduler *s, const char *key, const struct sched_pod *old,
			       struct sched_pod *p)
{
	const struct sched_pod *cached = sched_cache_pod(s->cache, key);
	if (p->terminal) {
		/* Succeeded or Failed: holds nothing any more. */
		if (sched_cache_remove_pod(s->cache, key))
			s->events |= SCHED_EVENT_POD_GONE;
		sched_queue_delete(s->queue, key);
		return;
	}
	if (p->node_name) {
		if (!cached)
			s->events |= SCHED_EVENT_POD_BOUND;
		else if (strcmp(cached->node->name, p->node_name) != 0 ||
			 strcmp(cached->uid, p->uid) != 0)
			s->events |= SCHED_EVENT_POD_BOUND | SCHED_EVENT_POD_GONE;
		sched_queue_delete(s->queue, key);
		/* Confirms an assumed pod. */
		sched_cache_add_pod(s->cache, sched_pod_ref(p));
		return;
	}
	if (cached) {
		if (cached->assumed && strcmp(cached->uid, p->uid) == 0 && !p->deleting)
			return; /* our binding is on its way; its result decides */
		/* Another pod under the same name, or one being deleted. */
		sched_cache_remove_pod(s->cache, key);
		s->events |= SCHED_EVENT_POD_GONE;
	}
	if (p->deleting || strcmp(p->scheduler_name, s->name) != 0)
		sched_queue_delete(s->queue, key);
	else /* a change of spec or labels may change where it fits */
		sched_queue_add(s->queue, key, p->priority, !old || old->fit_hash != p->fit_hash);
}

/* The informer reports every event it can read before it returns to the
 * loop, and while pods keep coming that can take long: decide for a few
 * pods at each event, so that bindings start while the burst goes on. */
#define SCHEDULER_PUMP_PER_EVENT 2

static void scheduler__pod_add(void *data, const char *key, void *item)
{
	scheduler__pod_set(data, key, NULL, item);
	if (((struct scheduler *)data)->started)
		scheduler__pump(data, SCHEDULER_PUMP_PER_EVENT);
}

static void scheduler__pod_update(void *data, const char *key, void *old, void *item)
{
	scheduler__pod_set(data, key, old, item);
	if (((struct scheduler *)data)->started)
		scheduler__pump(data, SCHEDULER_PUMP_PER_EVENT);
}

static void scheduler__pod_delete(void *data, const char *key, void *old)
{
	(void)old;
	struct scheduler *s = data;
	if (sched_cache_remove_pod(s->cache, key))
		s->events |= SCHED_EVENT_POD_GONE;
	sched_queue_delete(s->queue, key);
}

/* ---- decisions ------------------------------------------------------------------ */

static struct sched_bind_pod scheduler__bind_pod(const struct sched_pod *p)
{
	return (struct sched_bind_pod){
	    .key = p->key, .uid = p->uid, .rv = p->rv, .priority = p->priority};
}

static void scheduler__unschedulable(struct scheduler *s, const struct sched_pod *p,
				     const char *reason, const char *message, unsigned events)
{
	s->stats.unschedulable++;
	sched_queue_unschedulable(s->queue, p->key, events);
	if (sched_pod_condition_is(p, "False", reason, message))
		return; /* said already */
	log_info("%s: %s: %s", p->key, reason, message);
	struct sched_bind_pod bp = scheduler__bind_pod(p);
	sched_binder_status(s->binder, &bp, reason, message);
}

/* One pod taken from the queue: place it, or say why not. */
static void scheduler__schedule(struct scheduler *s, const char *key)
{
	struct sched_pod *p = informer_get_item(s->pods, key);
	if (!p || p->node_name || p->deleting || p->terminal ||
	    strcmp(p->scheduler_name, s->name) != 0 || sched_cache_pod(s->cache, key)) {
		/* Gone, bound, going, not ours, or our binding is on its way. */
		sched_queue_done(s->queue, key);
		return;
	}
	if (p->error) {
		/* Only a change of the pod can help. */
		scheduler__unschedulable(s, p, "SchedulerError", p->error, 0);
		return;
	}
	if (p->gated) {
		/* Kubernetes' PreEnqueue: only the gates' removal (a change of
		 * the pod) lets it in. */
		scheduler__unschedulable(s, p, "SchedulingGated",
					 "Scheduling is blocked due to non-empty scheduling gates",
					 0);
		return;
	}
	cleanup_free char *vwhy = NULL;
	if (sched_volumes_prepare(s->volumes, p, &vwhy) < 0) {
		cleanup_free char *msg = xasprintf("0/%zu nodes are available: %s.",
						   sched_cache_node_count(s->cache), vwhy);
		scheduler__unschedulable(s, p, "Unschedulable", msg, SCHED_EVENT_NODE);
		return;
	}
	struct sched_decision d;
	sched_algo_decide(s->algo, s->cache, p, &d);
	if (!d.node) {
		unsigned events = SCHED_EVENT_NODE | SCHED_EVENT_POD_GONE;
		if (p->naffinity)
			events |= SCHED_EVENT_POD_BOUND;
		scheduler__unschedulable(s, p, "Unschedulable", d.message, events);
		sched_decision_clear(&d);
		return;
	}
	s->stats.decisions++;
	log_debug("%s: to %s (%zu of %zu nodes feasible, %zu evaluated)", key, d.node->name,
		  d.feasible, sched_cache_node_count(s->cache), d.evaluated);
	struct sched_bind_pod bp = scheduler__bind_pod(p);
	sched_binder_bind(s->binder, &bp, d.node->name);
	sched_cache_assume(s->cache, sched_pod_ref(p), d.node->name);
	sched_queue_done(s->queue, key);
	sched_decision_clear(&d);
}

/* Hands the turn's cluster events to the queue, then decides for up to
 * max active pods. Returns true if active pods are left. */
static bool scheduler__pump(struct scheduler *s, unsigned max)
{
	if (s->events) {
		sched_queue_move(s->queue, s->events);
		s->events = 0;
	}
	for (unsigned i = 0; i < max; i++) {
		const char *key = sched_queue_pop(s->queue);
		if (!key)
			break;
		scheduler__schedule(s, key);
	}
	return sched_queue_active_len(s->queue) > 0;
}

static bool scheduler__before_sleep(struct loop *loop, void *data)
{
	(void)loop;
	struct scheduler *s = data;
	/* More to do: poll the fds without sleeping, then come back. */
	return scheduler__pump(s, s->opts.batch ? s->opts.batch : SCHEDULER_BATCH);
}

/* ---- write results ---------------------------------------------------------------- */

/* A binding was accepted. Unless its close has been read back already, the
 * pod is taken as bound now, as the store has it (the binding was checked
 * against the version the decision saw, so that is the version read last
 * plus the binding) until the informer reads it. */
static void scheduler__bound(struct scheduler *s, const struct sched_write_result *r)
{
	struct sched_pod *cur = informer_get_item(s->pods, r->key);
	if (!cur || cur->node_name || strcmp(cur->uid, r->uid) != 0 || !cur->rv || !r->rv ||
	    strcmp(cur->rv, r->rv) != 0)
		return; /* read back already, or not the pod decided on */
	cur->node_name = xstrdup(r->node);
	free(cur->rv);
	cur->rv = NULL; /* the store's new one, unknown until read */
	free(cur->cond.status);
	free(cur->cond.reason);
	free(cur->cond.message);
	cur->cond.status = xstrdup("True");
	cur->cond.reason = xstrdup("");
	cur->cond.message = xstrdup("");
	sched_cache_add_pod(s->cache, sched_pod_ref(cur));
}

static void scheduler__written(void *data, const struct sched_write_result *r)
{
	struct scheduler *s = data;
	if (r->what == SCHED_WRITE_STATUS) {
		/* A conflict means the pod changed: its update event brings it back. */
		if (r->status && r->status != EAGAIN && r->status != ENOENT)
			log_warn("%s: cannot write its PodScheduled condition: %s", r->key,
				 strerror(r->status));
		return;
	}
	if (!r->status) {
		s->stats.bound++;
		log_debug("%s: bound to %s", r->key, r->node);
		scheduler__bound(s, r);
		return;
	}
	const struct sched_pod *cached = sched_cache_pod(s->cache, r->key);
	if (cached && cached->assumed && strcmp(cached->uid, r->uid) == 0 &&
	    sched_cache_forget(s->cache, r->key))
		s->events |= SCHED_EVENT_POD_GONE;
	if (r->status == EAGAIN) {
		s->stats.conflicts++;
		/* The usual fate of a pod two schedulers both placed. */
		log_debug("%s: binding to %s lost a conflict (the pod changed, or another "
			  "scheduler bound it); trying again",
			  r->key, r->node);
	} else if (r->status == ENOENT) {
		log_debug("%s: gone before its binding to %s", r->key, r->node);
	} else {
		s->stats.failures++;
		log_warn("%s: binding to %s failed: %s (see .errors in the mount); trying again",
			 r->key, r->node, strerror(r->status));
	}
	const struct sched_pod *cur = informer_get_item(s->pods, r->key);
	if (!cur || cur->node_name || strcmp(cur->uid, r->uid) != 0)
		return; /* bound meanwhile, or another pod: its own events tell */
	sched_queue_retry(s->queue, r->key, r->priority);
}

/* ---- the API ------------------------------------------------------------------------- */

/* A claim, volume or class changed: pods waiting on their claims may fit. */
static void scheduler__volumes_changed(void *data)
{
	struct scheduler *s = data;
	s->events |= SCHED_EVENT_NODE;
}

struct scheduler *scheduler_new(struct loop *loop, const struct scheduler_opts *o)
{
	struct scheduler *s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->opts = *o;
	s->mount = xstrdup(o->mount);
	s->name = xstrdup(o->name);
	s->opts.mount = s->mount;
	s->opts.name = s->name;
	s->cache = sched_cache_new();
	s->queue = sched_queue_new(loop, &o->queue);
	s->algo = sched_algo_new(&o->algo, 0);
	s->nodes = informer_new(loop, s->mount, "nodes", false);
	s->pods = informer_new(loop, s->mount, "pods", true);
	s->volumes = sched_volumes_new(loop, s->mount, scheduler__volumes_changed, s);
	return s;
}

int scheduler_start(struct scheduler *s, struct error **err)
{
	s->binder = sched_binder_new(s->loop, s->mount, s->opts.workers ? s->opts.workers : 1,
				     scheduler__written, s, err);
	if (!s->binder)
		return -1;
	static const struct informer_item_handlers node_h = {
	    scheduler__node_set, scheduler__node_update, scheduler__node_delete};
	static const struct informer_item_handlers pod_h = {
	    scheduler__pod_add, scheduler__pod_update, scheduler__pod_delete};
	const struct informer_transform node_x = {scheduler__node_make, scheduler__node_unref, s};
	const struct informer_transform pod_x = {scheduler__pod_make, scheduler__pod_unref, s};
	informer_set_transform(s->nodes, &node_x);
	informer_set_transform(s->pods, &pod_x);
	informer_add_item_handlers(s->nodes, &node_h, s);
	informer_add_item_handlers(s->pods, &pod_h, s);
	informer_set_resync(s->nodes, s->opts.resync_ms);
	informer_set_resync(s->pods, s->opts.resync_ms);
	int r = sched_volumes_start(s->volumes, err);
	if (r < 0)
		return r;
	r = informer_start(s->nodes, err);
	if (r < 0)
		return r;
	r = informer_start(s->pods, err);
	if (r < 0)
		return r;
	s->hook = loop_add_before_sleep(s->loop, scheduler__before_sleep, s);
	s->started = true;
	log_info("scheduling for %s on %s: %zu nodes, %zu pods (%zu pending)", s->name, s->mount,
		 sched_cache_node_count(s->cache), informer_count(s->pods),
		 sched_queue_len(s->queue));
	return 0;
}

void scheduler_free(struct scheduler *s)
{
	if (!s)
		return;
	loop_remove_hook(s->loop, s->hook);
	sched_binder_free(s->binder);
	informer_free(s->pods);
	informer_free(s->nodes);
	sched_volumes_free(s->volumes);
	sched_queue_free(s->queue);
	sched_cache_free(s->cache);
	sched_algo_free(s->algo);
	free(s->mount);
	free(s->name);
	free(s);
}

const struct scheduler_stats *scheduler_stats(const struct scheduler *s)
{
	return &s->stats;
}
