/* scheduler.c: the scheduler's wiring, on the loop thread.
 *
 * Informer events keep the cache and the queue in step with the mount:
 * a bound pod holds its node's resources; a pending pod for this scheduler
 * waits in the queue; a terminated, deleted or foreign pod is left alone.
 * Cluster changes that may help unschedulable pods are gathered during a
 * turn and handed to the queue once, before the decisions of that turn.
 * Each decision assumes the pod on its node at once and hands the write to
 * the binder; its result either is confirmed by the pod's own update event
 * or is forgotten and the pod tried again after its back-off.
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

static void scheduler__node_set(void *data, const char *key, const struct ynode *obj)
{
	struct scheduler *s = data;
	struct sched_nodeinfo *info = sched_nodeinfo_parse(obj);
	free(info->name);
	info->name = xstrdup(key);
	if (info->error)
		log_warn("node %s: %s", key, info->error);
	if (sched_cache_set_node(s->cache, info))
		s->events |= SCHED_EVENT_NODE;
}

static void scheduler__node_add(void *data, const char *key, const struct ynode *obj)
{
	scheduler__node_set(data, key, obj);
}

static void scheduler__node_update(void *data, const char *key, const struct ynode *old,
				   const struct ynode *obj)
{
	(void)old;
	scheduler__node_set(data, key, obj);
}

static void scheduler__node_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct scheduler *s = data;
	sched_cache_remove_node(s->cache, key);
}

/* ---- pods --------------------------------------------------------------------- */

static bool scheduler__pump(struct scheduler *s, unsigned max);

/* Whether an update may change where the pod fits: its spec or labels. */
static bool scheduler__pod_changed(const struct ynode *old, const struct ynode *obj)
{
	if (!old)
		return true;
	return !ynode_equal(ynode_get(old, "spec"), ynode_get(obj, "spec")) ||
	       !ynode_equal(ynode_path(old, "metadata.labels"), ynode_path(obj, "metadata.labels"));
}

static void scheduler__pod_set(struct scheduler *s, const char *key, const struct ynode *old,
			       const struct ynode *obj)
{
	struct sched_pod *p = sched_pod_parse(obj);
	if (strcmp(p->key, key) != 0) {
		free(p->key);
		p->key = xstrdup(key);
	}
	const struct sched_pod *cached = sched_cache_pod(s->cache, key);
	if (p->terminal) {
		/* Succeeded or Failed: holds nothing any more. */
		if (sched_cache_remove_pod(s->cache, key))
			s->events |= SCHED_EVENT_POD_GONE;
		sched_queue_delete(s->queue, key);
		sched_pod_free(p);
		return;
	}
	if (p->node_name) {
		if (!cached)
			s->events |= SCHED_EVENT_POD_BOUND;
		else if (strcmp(cached->node_name, p->node_name) != 0 ||
			 strcmp(cached->uid, p->uid) != 0)
			s->events |= SCHED_EVENT_POD_BOUND | SCHED_EVENT_POD_GONE;
		sched_queue_delete(s->queue, key);
		sched_cache_add_pod(s->cache, p); /* confirms an assumed pod */
		return;
	}
	if (cached) {
		if (cached->assumed && strcmp(cached->uid, p->uid) == 0 && !p->deleting) {
			/* Our binding is on its way; its result decides. */
			sched_pod_free(p);
			return;
		}
		/* Another pod under the same name, or one being deleted. */
		sched_cache_remove_pod(s->cache, key);
		s->events |= SCHED_EVENT_POD_GONE;
	}
	if (p->deleting || strcmp(p->scheduler_name, s->name) != 0)
		sched_queue_delete(s->queue, key);
	else
		sched_queue_add(s->queue, key, p->priority, scheduler__pod_changed(old, obj));
	sched_pod_free(p);
}

/* The informer reports every event it can read before it returns to the
 * loop, and while pods keep coming that can take long: decide for a few
 * pods at each event, so that bindings start while the burst goes on. */
#define SCHEDULER_PUMP_PER_EVENT 2

static void scheduler__pod_add(void *data, const char *key, const struct ynode *obj)
{
	scheduler__pod_set(data, key, NULL, obj);
	if (((struct scheduler *)data)->started)
		scheduler__pump(data, SCHEDULER_PUMP_PER_EVENT);
}

static void scheduler__pod_update(void *data, const char *key, const struct ynode *old,
				  const struct ynode *obj)
{
	scheduler__pod_set(data, key, old, obj);
	if (((struct scheduler *)data)->started)
		scheduler__pump(data, SCHEDULER_PUMP_PER_EVENT);
}

static void scheduler__pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct scheduler *s = data;
	if (sched_cache_remove_pod(s->cache, key))
		s->events |= SCHED_EVENT_POD_GONE;
	sched_queue_delete(s->queue, key);
}

/* ---- decisions ------------------------------------------------------------------ */

static void scheduler__unschedulable(struct scheduler *s, const char *key, const struct ynode *obj,
				     const char *reason, const char *message, unsigned events)
{
	s->stats.unschedulable++;
	sched_queue_unschedulable(s->queue, key, events);
	if (sched_bind_condition_is(obj, "False", reason, message))
		return; /* said already */
	log_info("%s: %s: %s", key, reason, message);
	sched_binder_status(s->binder, key, ynode_clone(obj), reason, message);
}

/* One pod taken from the queue: place it, or say why not. */
static void scheduler__schedule(struct scheduler *s, const char *key)
{
	const struct ynode *obj = informer_get(s->pods, key);
	if (!obj) {
		sched_queue_done(s->queue, key);
		return;
	}
	cleanup_sched_pod struct sched_pod *p = sched_pod_parse(obj);
	if (p->node_name || p->deleting || p->terminal || strcmp(p->scheduler_name, s->name) != 0 ||
	    sched_cache_pod(s->cache, key)) {
		/* Bound, going, not ours, or our binding is on its way. */
		sched_queue_done(s->queue, key);
		return;
	}
	if (strcmp(p->key, key) != 0) {
		free(p->key);
		p->key = xstrdup(key);
	}
	if (p->error) {
		/* Only a change of the pod can help. */
		scheduler__unschedulable(s, key, obj, "SchedulerError", p->error, 0);
		return;
	}
	if (p->gated) {
		/* Kubernetes' PreEnqueue: only the gates' removal (a change of
		 * the pod) lets it in. */
		scheduler__unschedulable(s, key, obj, "SchedulingGated",
					 "Scheduling is blocked due to non-empty scheduling gates",
					 0);
		return;
	}
	cleanup_free char *vwhy = NULL;
	if (sched_volumes_prepare(s->volumes, p, &vwhy) < 0) {
		cleanup_free char *msg = xasprintf("0/%zu nodes are available: %s.",
						   sched_cache_node_count(s->cache), vwhy);
		scheduler__unschedulable(s, key, obj, "Unschedulable", msg, SCHED_EVENT_NODE);
		return;
	}
	struct sched_decision d;
	sched_algo_decide(s->algo, s->cache, p, &d);
	if (!d.node) {
		unsigned events = SCHED_EVENT_NODE | SCHED_EVENT_POD_GONE;
		if (p->naffinity)
			events |= SCHED_EVENT_POD_BOUND;
		scheduler__unschedulable(s, key, obj, "Unschedulable", d.message, events);
		sched_decision_clear(&d);
		return;
	}
	s->stats.decisions++;
	log_debug("%s: to %s (%zu of %zu nodes feasible, %zu evaluated)", key, d.node->name,
		  d.feasible, sched_cache_node_count(s->cache), d.evaluated);
	sched_binder_bind(s->binder, key, ynode_clone(obj), d.node->name, p->priority);
	sched_cache_assume(s->cache, steal_pointer(&p), d.node->name);
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
	const struct ynode *obj = informer_get(s->pods, r->key);
	if (!obj)
		return;
	const char *node = ynode_path_str(obj, "spec.nodeName");
	const char *uid = ynode_path_str(obj, "metadata.uid");
	if ((node && *node) || (uid && strcmp(uid, r->uid) != 0))
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
	static const struct informer_handlers node_h = {scheduler__node_add, scheduler__node_update,
							scheduler__node_delete};
	static const struct informer_handlers pod_h = {scheduler__pod_add, scheduler__pod_update,
						       scheduler__pod_delete};
	informer_add_handlers(s->nodes, &node_h, s);
	informer_add_handlers(s->pods, &pod_h, s);
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
