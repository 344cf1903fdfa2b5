/* nodelifecycle.c: the node lifecycle controller (see nodelifecycle.h).
 *
 * One work queue of node names: a node is synced when it, its Lease or its
 * zone changes, and again when its grace period would run out (a delayed
 * add), so nothing polls. A sync writes only what differs from the
 * informer's copy; the writes are read-modify-write and re-check on the
 * object read (a heartbeat that came in meanwhile wins over Unknown). The
 * zones' states are computed by one more key of the queue after the node
 * syncs of a turn; the NoExecute taints wait in their zone's queue, which
 * one timer drains at the zone's rate.
 *
 * This file never deletes anything: evicting is the taint manager's
 * (taint.c). */
#include "nodelifecycle.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "timefmt.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NODELC__ZONES_KEY " zones" /* no node has a space in its name */
#define NODELC__COMPONENT "node-controller"

/* ---- pure ---------------------------------------------------------------- */

enum nodelc_ready nodelc_node_ready(const struct ynode *node)
{
	const struct ynode *c = condition_find(ynode_path(node, "status.conditions"), "Ready");
	if (condition_field_is(c, "status", "True"))
		return NODELC_READY;
	if (condition_field_is(c, "status", "False"))
		return NODELC_NOT_READY;
	return NODELC_UNKNOWN;
}

char *nodelc_zone_key(const struct ynode *node)
{
	const char *region = obj_label(node, "topology.kubernetes.io/region");
	const char *zone = obj_label(node, "topology.kubernetes.io/zone");
	if (!region)
		region = obj_label(node, "failure-domain.beta.kubernetes.io/region");
	if (!zone)
		zone = obj_label(node, "failure-domain.beta.kubernetes.io/zone");
	if (!region && !zone)
		return xstrdup("");
	return xasprintf("%s\x1f%s", region ? region : "", zone ? zone : "");
}

enum nodelc_zone_state nodelc_zone_state(int ready, int not_ready, double threshold)
{
	if (ready == 0 && not_ready > 0)
		return NODELC_ZONE_FULL;
	if (not_ready > 2 && (double)not_ready / (double)(ready + not_ready) >= threshold)
		return NODELC_ZONE_PARTIAL;
	return NODELC_ZONE_NORMAL;
}

const char *nodelc_zone_state_name(enum nodelc_zone_state s)
{
	switch (s) {
	case NODELC_ZONE_INITIAL:
		return "Initial";
	case NODELC_ZONE_NORMAL:
		return "Normal";
	case NODELC_ZONE_PARTIAL:
		return "PartialDisruption";
	case NODELC_ZONE_FULL:
		return "FullDisruption";
	}
	return "?";
}

double nodelc_zone_rate(enum nodelc_zone_state s, int size, bool all_full,
			const struct nodelc_rates *r)
{
	if (all_full)
		return 0;
	switch (s) {
	case NODELC_ZONE_PARTIAL:
		/* ReducedQPSFunc: a small cluster stops, a large one slows */
		return size > r->large_cluster_threshold ? r->secondary_eviction_rate : 0;
	case NODELC_ZONE_FULL: /* HealthyQPSFunc */
	case NODELC_ZONE_NORMAL:
	case NODELC_ZONE_INITIAL:
		return r->eviction_rate;
	}
	return 0;
}

void nodelc_bucket_init(struct nodelc_bucket *b, double rate, uint64_t now_ms)
{
	b->rate = rate > 0 ? rate : 0;
	b->tokens = 1;
	b->last_ms = now_ms;
}

bool nodelc_bucket_take(struct nodelc_bucket *b, uint64_t now_ms, uint64_t *wait_ms)
{
	if (b->rate <= 0) {
		if (wait_ms)
			*wait_ms = UINT64_MAX;
		return false;
	}
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * b->rate / 1000.0;
		if (b->tokens > 1)
			b->tokens = 1;
		b->last_ms = now_ms;
	}
	if (b->tokens >= 1) {
		b->tokens -= 1;
		return true;
	}
	if (wait_ms) {
		double ms = (1 - b->tokens) * 1000.0 / b->rate;
		*wait_ms = (uint64_t)ms + 1;
	}
	return false;
}

uint64_t nodelc_grace_ms(uint64_t grace_ms, uint64_t renew_interval_ms)
{
	uint64_t least = renew_interval_ms + renew_interval_ms / 2;
	return grace_ms > least ? grace_ms : least;
}

const char *nodelc_noexecute_key(const struct ynode *node)
{
	switch (nodelc_node_ready(node)) {
	case NODELC_READY:
		return NULL;
	case NODELC_NOT_READY:
		return NODELC_TAINT_NOT_READY;
	case NODELC_UNKNOWN:
		return NODELC_TAINT_UNREACHABLE;
	}
	return NULL;
}

static bool nodelc__taint_is(const struct ynode *t, const char *key, const char *effect)
{
	const char *k = ynode_str(ynode_get(t, "key"));
	const char *e = ynode_str(ynode_get(t, "effect"));
	return k && e && !strcmp(k, key) && !strcmp(e, effect);
}

bool nodelc_has_taint(const struct ynode *node, const char *key, const char *effect)
{
	const struct ynode *l = ynode_path(node, "spec.taints");
	for (size_t i = 0; l && l->type == YNODE_SEQ && i < l->n; i++)
		if (nodelc__taint_is(ynode_item(l, i), key, effect))
			return true;
	return false;
}

/* The taints this controller owns: every other is someone else's. */
static const char *const nodelc__noschedule_keys[] = {
    NODELC_TAINT_NOT_READY,	      NODELC_TAINT_UNREACHABLE,	  NODELC_TAINT_UNSCHEDULABLE,
    NODELC_TAINT_MEMORY_PRESSURE,     NODELC_TAINT_DISK_PRESSURE, NODELC_TAINT_PID_PRESSURE,
    NODELC_TAINT_NETWORK_UNAVAILABLE,
};

struct nodelc__want {
	const char *key, *effect;
};

static bool nodelc__owned(const struct ynode *t)
{
	const char *k = ynode_str(ynode_get(t, "key"));
	const char *e = ynode_str(ynode_get(t, "effect"));
	if (!k || !e)
		return false;
	if (!strcmp(e, "NoExecute"))
		return !strcmp(k, NODELC_TAINT_NOT_READY) || !strcmp(k, NODELC_TAINT_UNREACHABLE);
	if (strcmp(e, "NoSchedule"))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(nodelc__noschedule_keys); i++)
		if (!strcmp(k, nodelc__noschedule_keys[i]))
			return true;
	return false;
}

static bool nodelc__cond_true(const struct ynode *conds, const char *type)
{
	return condition_field_is(condition_find(conds, type), "status", "True");
}

/* The taints node should have of those the controller owns; at most 8. */
static size_t nodelc__wanted(const struct ynode *node, enum nodelc_noexec noexec,
			     struct nodelc__want *w)
{
	size_t n = 0;
	const struct ynode *conds = ynode_path(node, "status.conditions");
	const struct ynode *ready = condition_find(conds, "Ready");
	if (condition_field_is(ready, "status", "False"))
		w[n++] = (struct nodelc__want){NODELC_TAINT_NOT_READY, "NoSchedule"};
	else if (ready && !condition_field_is(ready, "status", "True"))
		w[n++] = (struct nodelc__want){NODELC_TAINT_UNREACHABLE, "NoSchedule"};
	if (nodelc__cond_true(conds, "MemoryPressure"))
		w[n++] = (struct nodelc__want){NODELC_TAINT_MEMORY_PRESSURE, "NoSchedule"};
	if (nodelc__cond_true(conds, "DiskPressure"))
		w[n++] = (struct nodelc__want){NODELC_TAINT_DISK_PRESSURE, "NoSchedule"};
	if (nodelc__cond_true(conds, "PIDPressure"))
		w[n++] = (struct nodelc__want){NODELC_TAINT_PID_PRESSURE, "NoSchedule"};
	if (nodelc__cond_true(conds, "NetworkUnavailable"))
		w[n++] = (struct nodelc__want){NODELC_TAINT_NETWORK_UNAVAILABLE, "NoSchedule"};
	bool unsched = false;
	if (ynode_bool(ynode_path(node, "spec.unschedulable"), &unsched) == 0 && unsched)
		w[n++] = (struct nodelc__want){NODELC_TAINT_UNSCHEDULABLE, "NoSchedule"};

	const char *key = nodelc_noexecute_key(node);
	const char *other = key && !strcmp(key, NODELC_TAINT_NOT_READY) ? NODELC_TAINT_UNREACHABLE
									: NODELC_TAINT_NOT_READY;
	if (noexec == NODELC_NOEXEC_SWAP_ONLY)
		noexec = key && nodelc_has_taint(node, other, "NoExecute") ? NODELC_NOEXEC_SET
									   : NODELC_NOEXEC_KEEP;
	if (noexec == NODELC_NOEXEC_SET && key) {
		w[n++] = (struct nodelc__want){key, "NoExecute"};
	} else if (noexec == NODELC_NOEXEC_KEEP) {
		static const char *const both[] = {NODELC_TAINT_NOT_READY,
						   NODELC_TAINT_UNREACHABLE};
		for (size_t i = 0; i < ARRAY_SIZE(both); i++)
			if (nodelc_has_taint(node, both[i], "NoExecute"))
				w[n++] = (struct nodelc__want){both[i], "NoExecute"};
	}
	return n;
}

bool nodelc_apply_taints(struct ynode *node, enum nodelc_noexec noexec, const char *now)
{
	struct nodelc__want w[10];
	size_t nw = nodelc__wanted(node, noexec, w);
	struct ynode *spec = ynode_get(node, "spec");
	struct ynode *taints = spec ? ynode_get(spec, "taints") : NULL;
	bool changed = false;
	/* drop the owned ones not wanted */
	if (taints && taints->type == YNODE_SEQ) {
		size_t keep = 0;
		for (size_t i = 0; i < taints->n; i++) {
			struct ynode *t = ynode_item(taints, i);
			bool wanted = !nodelc__owned(t);
			for (size_t j = 0; !wanted && j < nw; j++)
				wanted = nodelc__taint_is(t, w[j].key, w[j].effect);
			if (wanted) {
				taints->items[keep++] = t;
			} else {
				ynode_free(t);
				changed = true;
			}
		}
		taints->n = keep;
	}
	for (size_t j = 0; j < nw; j++) {
		if (nodelc_has_taint(node, w[j].key, w[j].effect))
			continue;
		if (!spec || spec->type != YNODE_MAP) {
			spec = ynode_new_map();
			ynode_set(node, "spec", spec);
		}
		taints = ynode_get(spec, "taints");
		if (!taints || taints->type != YNODE_SEQ) {
			taints = ynode_new_seq();
			ynode_set(spec, "taints", taints);
		}
		struct ynode *t = ynode_new_map();
		ynode_set(t, "key", ynode_new_str(w[j].key));
		ynode_set(t, "effect", ynode_new_str(w[j].effect));
		ynode_set(t, "timeAdded", ynode_new_str(now));
		ynode_append(taints, t);
		changed = true;
	}
	if (taints && taints->type == YNODE_SEQ && taints->n == 0 && changed)
		ynode_del(spec, "taints");
	return changed;
}

bool nodelc_mark_unknown(struct ynode *node, const char *now)
{
	static const char *const types[] = {"Ready", "MemoryPressure", "DiskPressure",
					    "PIDPressure"};
	struct ynode *st = ynode_get_map(node, "status");
	struct ynode *conds = ynode_get(st, "conditions");
	if (!conds || conds->type != YNODE_SEQ) {
		conds = ynode_new_seq();
		ynode_set(st, "conditions", conds);
	}
	bool changed = false;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		struct ynode *c = condition_find(conds, types[i]);
		if (!c) {
			const char *created = ynode_path_str(node, "metadata.creationTimestamp");
			c = ynode_new_map();
			ynode_set(c, "type", ynode_new_str(types[i]));
			ynode_set(c, "status", ynode_new_str("Unknown"));
			ynode_set(c, "lastHeartbeatTime", ynode_new_str(created ? created : now));
			ynode_set(c, "lastTransitionTime", ynode_new_str(now));
			ynode_set(c, "reason", ynode_new_str(NODELC_NEVER_REASON));
			ynode_set(c, "message", ynode_new_str(NODELC_NEVER_MESSAGE));
			ynode_append(conds, c);
			changed = true;
			continue;
		}
		if (condition_field_is(c, "status", "Unknown"))
			continue;
		ynode_set(c, "status", ynode_new_str("Unknown"));
		ynode_set(c, "reason", ynode_new_str(NODELC_UNKNOWN_REASON));
		ynode_set(c, "message", ynode_new_str(NODELC_UNKNOWN_MESSAGE));
		ynode_set(c, "lastTransitionTime", ynode_new_str(now));
		changed = true;
	}
	return changed;
}

bool nodelc_mark_pod_not_ready(struct ynode *pod, const char *now)
{
	struct ynode *st = ynode_get_map(pod, "status");
	struct ynode *c = condition_find(ynode_get(st, "conditions"), "Ready");
	if (!c || condition_field_is(c, "status", "False"))
		return false; /* a pod not started has no Ready to take away */
	ynode_set(c, "status", ynode_new_str("False"));
	ynode_set(c, "lastTransitionTime", ynode_new_str(now));
	return true;
}

/* ---- the controller -------------------------------------------------------- */

/* What the controller knows of one node. */
struct nodelc__node {
	uint64_t probe_ms;	    /* when its heartbeat last moved, our clock */
	uint64_t renew_ms;	    /* when its Lease was last seen renewed */
	uint64_t renew_interval_ms; /* between its last two renewals seen */
	char *hb;		    /* Ready's lastHeartbeatTime, as last seen */
	char *renew;		    /* its Lease's renewTime, as last seen */
	char *zone;		    /* nodelc_zone_key() */
	enum nodelc_ready ready;
	bool seen;	  /* ready is from an earlier sync */
	bool queued;	  /* waits in its zone's queue for a NoExecute taint */
	bool unknown_out; /* a write of Unknown is in flight */
};

struct nodelc__zone {
	enum nodelc_zone_state state;
	struct nodelc_bucket bucket;
	int size;
	char **queue; /* node names, first in first out */
	size_t n, cap;
};

struct nodelc {
	struct ctrl *c;
	struct informer *nodes;
	struct informer *leases;
	struct informer *pods;
	struct workqueue *q;
	struct keymap *state; /* node name -> struct nodelc__node */
	struct keymap *zones; /* zone key -> struct nodelc__zone */
	struct loop_timer *tainter;
	struct nodelc_rates rates;
	uint64_t grace_ms;
	bool all_full;
};

static void nodelc__node_free(void *p)
{
	struct nodelc__node *s = p;
	if (!s)
		return;
	free(s->hb);
	free(s->renew);
	free(s->zone);
	free(s);
}

static void nodelc__zone_free(void *p)
{
	struct nodelc__zone *z = p;
	if (!z)
		return;
	for (size_t i = 0; i < z->n; i++)
		free(z->queue[i]);
	free(z->queue);
	free(z);
}

static struct nodelc__node *nodelc__get(struct nodelc *n, const char *name)
{
	struct nodelc__node *s = keymap_get(n->state, name);
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->probe_ms = loop_now_ms(); /* a node first seen gets its grace from now */
		keymap_set(n->state, name, s);
	}
	return s;
}

static struct nodelc__zone *nodelc__zone(struct nodelc *n, const char *key)
{
	struct nodelc__zone *z = keymap_get(n->zones, key);
	if (!z) {
		z = xcalloc(1, sizeof(*z));
		z->state = NODELC_ZONE_INITIAL;
		nodelc_bucket_init(&z->bucket,
				   nodelc_zone_rate(z->state, 0, n->all_full, &n->rates),
				   loop_now_ms());
		keymap_set(n->zones, key, z);
	}
	return z;
}

static void nodelc__dequeue(struct nodelc *n, const char *name, struct nodelc__node *s)
{
	if (!s || !s->queued)
		return;
	s->queued = false;
	struct nodelc__zone *z = keymap_get(n->zones, s->zone ? s->zone : "");
	for (size_t i = 0; z && i < z->n; i++) {
		if (strcmp(z->queue[i], name))
			continue;
		free(z->queue[i]);
		memmove(&z->queue[i], &z->queue[i + 1], (z->n - i - 1) * sizeof(*z->queue));
		z->n--;
		break;
	}
}

static void nodelc__enqueue(struct nodelc *n, const char *name, struct nodelc__node *s)
{
	if (s->queued)
		return;
	struct nodelc__zone *z = nodelc__zone(n, s->zone ? s->zone : "");
	if (z->n == z->cap) {
		z->cap = z->cap ? 2 * z->cap : 8;
		z->queue = xrealloc(z->queue, z->cap * sizeof(*z->queue));
	}
	z->queue[z->n++] = xstrdup(name);
	s->queued = true;
	if (!loop_timer_armed(n->tainter))
		loop_timer_start(n->tainter, 0, 0);
}

static void nodelc__now(char *buf)
{
	obj_time_format(obj_now(), buf);
}

static void nodelc__written(void *data, const struct writer_result *res)
{
	char *what = data;
	if (res->status && res->status != ENOENT)
		log_warn("nodelifecycle: %s: %s", what, res->msg);
	free(what);
}

/* Mutate: the node's taints (arg: enum nodelc_noexec). */
static int nodelc__mutate_taints(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	char now[RFC3339_SIZE];
	nodelc__now(now);
	return nodelc_apply_taints(obj, (enum nodelc_noexec)(uintptr_t)arg, now) ? 1 : 0;
}

/* Mutate: conditions Unknown, unless the heartbeat moved since it was seen
 * stale (arg: the lastHeartbeatTime then, "" for none). */
static int nodelc__mutate_unknown(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct ynode *c = condition_find(ynode_path(obj, "status.conditions"), "Ready");
	if (strcmp(condition_field(c, "lastHeartbeatTime"), arg))
		return 0;
	char now[RFC3339_SIZE];
	nodelc__now(now);
	return nodelc_mark_unknown(obj, now) ? 1 : 0;
}

static int nodelc__mutate_pod_not_ready(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const char *node = arg;
	const char *on = ynode_path_str(obj, "spec.nodeName");
	if (!on || strcmp(on, node) || pod_is_terminal(obj))
		return 0;
	char now[RFC3339_SIZE];
	nodelc__now(now);
	return nodelc_mark_pod_not_ready(obj, now) ? 1 : 0;
}

static void nodelc__write_taints(struct nodelc *n, const char *name, enum nodelc_noexec noexec)
{
	cleanup_free char *path = obj_path("nodes", NULL, name);
	writer_update(n->c->writer, path, nodelc__mutate_taints, (void *)(uintptr_t)noexec, NULL, 0,
		      nodelc__written, xasprintf("taints of node %s", name));
}

struct nodelc__podlist {
	const char *node;
	char **keys;
	size_t n, cap;
};

static int nodelc__collect_pod(void *data, const char *key, const struct ynode *pod)
{
	struct nodelc__podlist *l = data;
	const char *on = ynode_path_str(pod, "spec.nodeName");
	if (!on || strcmp(on, l->node) || pod_is_terminal(pod) || !pod_is_ready(pod, NULL))
		return 0;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->keys = xrealloc(l->keys, l->cap * sizeof(*l->keys));
	}
	l->keys[l->n++] = xstrdup(key);
	return 0;
}

/* MarkPodsNotReady: every ready pod bound to the node. */
static void nodelc__pods_not_ready(struct nodelc *n, const char *name)
{
	struct nodelc__podlist l = {.node = name};
	informer_foreach(n->pods, NULL, nodelc__collect_pod, &l);
	for (size_t i = 0; i < l.n; i++) {
		char ns[256];
		const char *pod = obj_key_split(l.keys[i], ns, sizeof(ns));
		if (pod) {
			cleanup_free char *path = obj_path("pods", ns, pod);
			writer_update(n->c->writer, path, nodelc__mutate_pod_not_ready,
				      xstrdup(name), free, 0, nodelc__written,
				      xasprintf("Ready of pod %s", l.keys[i]));
		}
		free(l.keys[i]);
	}
	if (l.n)
		log_info("nodelifecycle: node %s is not ready: %zu pods marked not ready", name,
			 l.n);
	free(l.keys);
}

static const char *nodelc__hb(const struct ynode *node)
{
	const struct ynode *c = condition_find(ynode_path(node, "status.conditions"), "Ready");
	return condition_field(c, "lastHeartbeatTime");
}

/* Notes a heartbeat that moved: now is its probe time. */
static void nodelc__observe(struct nodelc__node *s, char **seen, const char *now_value)
{
	if (*seen && !strcmp(*seen, now_value))
		return;
	free(*seen);
	*seen = xstrdup(now_value);
	s->probe_ms = loop_now_ms();
}

static void nodelc__sync_node(struct nodelc *n, const char *name)
{
	const struct ynode *node = informer_get(n->nodes, name);
	if (!node) {
		struct nodelc__node *s = keymap_get(n->state, name);
		nodelc__dequeue(n, name, s);
		keymap_del(n->state, name);
		workqueue_add(n->q, NODELC__ZONES_KEY);
		return;
	}
	struct nodelc__node *s = nodelc__get(n, name);
	cleanup_free char *zone = nodelc_zone_key(node);
	if (!s->zone || strcmp(s->zone, zone)) {
		nodelc__dequeue(n, name, s);
		free(s->zone);
		s->zone = xstrdup(zone);
		workqueue_add(n->q, NODELC__ZONES_KEY);
	}
	nodelc__observe(s, &s->hb, nodelc__hb(node));

	/* The grace period: never less than one and a half of the node's
	 * renew intervals, so that a grace shorter than the heartbeat does not
	 * take every node for gone between two renewals. */
	uint64_t now = loop_now_ms();
	uint64_t grace = nodelc_grace_ms(n->grace_ms, s->renew_interval_ms);
	enum nodelc_ready ready = nodelc_node_ready(node);
	const struct ynode *rc = condition_find(ynode_path(node, "status.conditions"), "Ready");
	bool is_unknown = rc && condition_field_is(rc, "status", "Unknown");
	if (now - s->probe_ms >= grace) {
		if (!is_unknown && !s->unknown_out) {
			cleanup_free char *path = obj_path("nodes", NULL, name);
			log_info("nodelifecycle: node %s: no heartbeat for %llu ms: status Unknown",
				 name, (unsigned long long)(now - s->probe_ms));
			writer_update(n->c->writer, path, nodelc__mutate_unknown,
				      xstrdup(nodelc__hb(node)), free, 0, nodelc__written,
				      xasprintf("status of node %s", name));
			s->unknown_out = true;
		}
	} else {
		s->unknown_out = false;
		workqueue_add_after(n->q, name, s->probe_ms + grace - now);
	}

	/* Pods leave Endpoints as soon as their node is not ready. */
	if (ready != NODELC_READY && (!s->seen || s->ready == NODELC_READY)) {
		if (s->seen)
			events_record(n->c->events, NODELC__COMPONENT, node, "Normal",
				      "NodeNotReady", "Node %s status is now: NodeNotReady", name);
		nodelc__pods_not_ready(n, name);
	}
	if (s->seen && ready != s->ready)
		workqueue_add(n->q, NODELC__ZONES_KEY);
	s->ready = ready;
	s->seen = true;

	/* The taints. */
	const char *key = nodelc_noexecute_key(node);
	enum nodelc_noexec noexec = NODELC_NOEXEC_KEEP;
	if (!key || n->all_full) {
		nodelc__dequeue(n, name, s);
		noexec = NODELC_NOEXEC_CLEAR;
	} else if (nodelc_has_taint(node, key, "NoExecute")) {
		nodelc__dequeue(n, name, s);
	} else if (nodelc_has_taint(node,
				    !strcmp(key, NODELC_TAINT_NOT_READY) ? NODELC_TAINT_UNREACHABLE
									 : NODELC_TAINT_NOT_READY,
				    "NoExecute")) {
		nodelc__dequeue(n, name, s);
		noexec = NODELC_NOEXEC_SWAP_ONLY; /* tainted already: swapped at once */
	} else {
		nodelc__enqueue(n, name, s);
	}
	cleanup_ynode struct ynode *copy = ynode_clone(node);
	char nowbuf[RFC3339_SIZE];
	nodelc__now(nowbuf);
	if (nodelc_apply_taints(copy, noexec, nowbuf))
		nodelc__write_taints(n, name, noexec);
}

struct nodelc__census {
	struct nodelc *n;
	struct keymap *counts; /* zone -> (uintptr_t)(ready << 32 | not ready) */
};

static int nodelc__count(void *data, const char *key, const struct ynode *node)
{
	(void)key;
	struct nodelc__census *c = data;
	cleanup_free char *zone = nodelc_zone_key(node);
	uint64_t v = (uint64_t)(uintptr_t)keymap_get(c->counts, zone);
	v += nodelc_node_ready(node) == NODELC_READY ? (1ULL << 32) : 1;
	keymap_set(c->counts, zone, (void *)(uintptr_t)v);
	return 0;
}

/* handleDisruption: the zones' states and rates. */
static void nodelc__sync_zones(struct nodelc *n)
{
	struct nodelc__census c = {.n = n, .counts = keymap_new(NULL)};
	informer_foreach(n->nodes, NULL, nodelc__count, &c);
	const char *zone;
	void *v;
	bool all_full = keymap_count(c.counts) > 0;
	for (size_t i = 0; keymap_next(c.counts, &i, &zone, &v);) {
		uint64_t x = (uint64_t)(uintptr_t)v;
		if (nodelc_zone_state((int)(x >> 32), (int)(x & 0xffffffff),
				      n->rates.unhealthy_threshold) != NODELC_ZONE_FULL)
			all_full = false;
	}
	bool mode_changed = all_full != n->all_full;
	if (mode_changed) {
		if (all_full)
			log_warn("nodelifecycle: every zone is fully disrupted: no node is tainted "
				 "for eviction and the NoExecute taints are taken off");
		else
			log_info("nodelifecycle: a zone is no longer fully disrupted: evictions "
				 "resume");
		n->all_full = all_full;
	}
	uint64_t now = loop_now_ms();
	for (size_t i = 0; keymap_next(c.counts, &i, &zone, &v);) {
		uint64_t x = (uint64_t)(uintptr_t)v;
		int ready = (int)(x >> 32), not_ready = (int)(x & 0xffffffff);
		struct nodelc__zone *z = nodelc__zone(n, zone);
		enum nodelc_zone_state st =
		    nodelc_zone_state(ready, not_ready, n->rates.unhealthy_threshold);
		double rate = nodelc_zone_rate(st, ready + not_ready, all_full, &n->rates);
		if (st != z->state && z->state != NODELC_ZONE_INITIAL)
			log_info("nodelifecycle: zone \"%s\" is now %s (%d ready, %d not)", zone,
				 nodelc_zone_state_name(st), ready, not_ready);
		z->size = ready + not_ready;
		z->state = st;
		if (rate != z->bucket.rate)
			nodelc_bucket_init(&z->bucket, rate, now);
	}
	keymap_free(c.counts);
	if (mode_changed) {
		/* every node again: taints off, or back on through the queues;
		 * leaving the mode gives every node a fresh grace period */
		const char *name;
		for (size_t i = 0; keymap_next(n->state, &i, &name, &v);) {
			struct nodelc__node *s = v;
			if (!all_full)
				s->probe_ms = now;
			workqueue_add(n->q, name);
		}
	}
	if (!loop_timer_armed(n->tainter))
		loop_timer_start(n->tainter, 0, 0);
}

/* Drains the zones' queues, each at its rate. */
static void nodelc__on_tainter(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct nodelc *n = data;
	uint64_t now = loop_now_ms(), next = UINT64_MAX;
	const char *zkey;
	void *v;
	for (size_t i = 0; keymap_next(n->zones, &i, &zkey, &v);) {
		struct nodelc__zone *z = v;
		while (z->n > 0) {
			char *name = z->queue[0];
			struct nodelc__node *s = keymap_get(n->state, name);
			const struct ynode *node = informer_get(n->nodes, name);
			const char *key = node ? nodelc_noexecute_key(node) : NULL;
			bool needed =
			    s && key && !n->all_full && !nodelc_has_taint(node, key, "NoExecute");
			uint64_t wait = 0;
			if (needed && !nodelc_bucket_take(&z->bucket, now, &wait)) {
				if (wait < next)
					next = wait;
				break;
			}
			z->n--;
			memmove(&z->queue[0], &z->queue[1], z->n * sizeof(*z->queue));
			if (s)
				s->queued = false;
			if (needed) {
				log_info("nodelifecycle: node %s: taint %s:NoExecute", name, key);
				nodelc__write_taints(n, name, NODELC_NOEXEC_SET);
			}
			free(name);
		}
	}
	if (next != UINT64_MAX)
		loop_timer_start(n->tainter, next, 0);
}

static int nodelc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct nodelc *n = data;
	if (!strcmp(key, NODELC__ZONES_KEY))
		nodelc__sync_zones(n);
	else
		nodelc__sync_node(n, key);
	return 0;
}

static void nodelc__on_node(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct nodelc *n = data;
	workqueue_add(n->q, key);
}

static void nodelc__on_node_update(void *data, const char *key, const struct ynode *old,
				   const struct ynode *obj)
{
	(void)old;
	nodelc__on_node(data, key, obj);
}

static void nodelc__on_lease(void *data, const char *key, const struct ynode *lease)
{
	struct nodelc *n = data;
	char ns[256];
	const char *name = obj_key_split(key, ns, sizeof(ns));
	if (!name || strcmp(ns, NODELC_LEASE_NAMESPACE))
		return;
	const char *renew = ynode_path_str(lease, "spec.renewTime");
	struct nodelc__node *s = nodelc__get(n, name);
	bool moved = !s->renew || strcmp(s->renew, renew ? renew : "");
	nodelc__observe(s, &s->renew, renew ? renew : "");
	if (moved) {
		uint64_t now = loop_now_ms();
		if (s->renew_ms)
			s->renew_interval_ms = now - s->renew_ms;
		s->renew_ms = now;
	}
	workqueue_add(n->q, name);
}

static void nodelc__on_lease_update(void *data, const char *key, const struct ynode *old,
				    const struct ynode *obj)
{
	(void)old;
	nodelc__on_lease(data, key, obj);
}

struct nodelc *nodelc_new(struct ctrl *c)
{
	struct nodelc *n = xcalloc(1, sizeof(*n));
	n->c = c;
	n->grace_ms =
	    c->cfg && c->cfg->node_monitor_grace_ms ? c->cfg->node_monitor_grace_ms : 40000;
	n->rates = (struct nodelc_rates){
	    .eviction_rate = c->cfg ? c->cfg->node_eviction_rate : 0.1,
	    .secondary_eviction_rate = c->cfg ? c->cfg->secondary_node_eviction_rate : 0.01,
	    .unhealthy_threshold = c->cfg ? c->cfg->unhealthy_zone_threshold : 0.55,
	    .large_cluster_threshold = c->cfg ? c->cfg->large_cluster_size_threshold : 50,
	};
	n->nodes = ctrl_informer(c, "nodes");
	n->leases = ctrl_informer(c, "leases");
	n->pods = ctrl_informer(c, "pods");
	n->q = workqueue_new(c->loop, "nodelifecycle", NULL);
	n->state = keymap_new(nodelc__node_free);
	n->zones = keymap_new(nodelc__zone_free);
	n->tainter = loop_timer_new(c->loop, nodelc__on_tainter, n);
	struct informer_handlers nh = {
	    .on_add = nodelc__on_node,
	    .on_update = nodelc__on_node_update,
	    .on_delete = nodelc__on_node,
	};
	informer_add_handlers(n->nodes, &nh, n);
	struct informer_handlers lh = {.on_add = nodelc__on_lease,
				       .on_update = nodelc__on_lease_update};
	informer_add_handlers(n->leases, &lh, n);
	workqueue_set_handler(n->q, nodelc__sync, n);
	workqueue_add(n->q, NODELC__ZONES_KEY);
	return n;
}

void nodelc_free(struct nodelc *n)
{
	if (!n)
		return;
	loop_timer_free(n->tainter);
	workqueue_free(n->q);
	keymap_free(n->state);
	keymap_free(n->zones);
	free(n);
}
