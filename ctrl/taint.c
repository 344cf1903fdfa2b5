/* taint.c: the taint manager (see taint.h).
 *
 * A pod is looked at when it changes and when its node's NoExecute taints
 * change (each node's last such list is kept to tell). A pending deletion
 * is an entry in a binary min-heap by deadline, found by pod key through a
 * map; one loop timer is armed at the heap's top. A due entry deletes the
 * pod by its uid, so a pod made again under the name is not touched.
 *
 * This file must never delete a pod whose node's taints it tolerates. */
#include "taint.h"
#include "ctrl.h"
#include "events.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "util.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TAINT__COMPONENT "taint-eviction-controller"

/* ---- pure ---------------------------------------------------------------- */

static bool taint__empty(const char *s)
{
	return !s || !*s;
}

bool taint_tolerates(const struct ynode *tol, const struct ynode *taint)
{
	const char *te = ynode_str(ynode_get(tol, "effect"));
	const char *e = ynode_str(ynode_get(taint, "effect"));
	if (!taint__empty(te) && (!e || strcmp(te, e)))
		return false;
	const char *tk = ynode_str(ynode_get(tol, "key"));
	const char *k = ynode_str(ynode_get(taint, "key"));
	const char *op = ynode_str(ynode_get(tol, "operator"));
	bool exists = op && !strcmp(op, "Exists");
	if (taint__empty(tk))
		return exists; /* an empty key matches every key with Exists only */
	if (!k || strcmp(tk, k))
		return false;
	if (exists)
		return true;
	const char *tv = ynode_str(ynode_get(tol, "value"));
	const char *v = ynode_str(ynode_get(taint, "value"));
	return !strcmp(tv ? tv : "", v ? v : "");
}

enum taint_verdict taint_verdict(const struct ynode *taints, const struct ynode *tols,
				 long long *seconds)
{
	bool any = false, bounded = false;
	long long least = 0;
	for (size_t i = 0; taints && taints->type == YNODE_SEQ && i < taints->n; i++) {
		const struct ynode *t = ynode_item(taints, i);
		const char *e = ynode_str(ynode_get(t, "effect"));
		if (!e || strcmp(e, "NoExecute"))
			continue;
		any = true;
		bool tolerated = false;
		for (size_t j = 0; tols && tols->type == YNODE_SEQ && j < tols->n; j++) {
			const struct ynode *tol = ynode_item(tols, j);
			if (!taint_tolerates(tol, t))
				continue;
			tolerated = true;
			long long s = 0;
			if (ynode_int(ynode_get(tol, "tolerationSeconds"), &s) != 0)
				continue; /* for ever */
			if (s <= 0)
				return TAINT_EVICT_NOW;
			if (!bounded || s < least)
				least = s;
			bounded = true;
		}
		if (!tolerated)
			return TAINT_EVICT_NOW;
	}
	if (!any)
		return TAINT_NONE;
	if (!bounded)
		return TAINT_TOLERATED;
	if (seconds)
		*seconds = least;
	return TAINT_EVICT_AFTER;
}

/* ---- the heap ------------------------------------------------------------ */

struct taint__entry {
	char *key; /* "ns/name" */
	char *uid;
	uint64_t created_ms; /* first seen to be evicted */
	uint64_t due_ms;
	size_t at; /* its index in the heap */
};

struct taintmgr {
	struct ctrl *c;
	struct informer *nodes;
	struct informer *pods;
	struct keymap *noexec;	/* node -> struct ynode * (its NoExecute taints) */
	struct keymap *entries; /* pod key -> struct taint__entry * (in the heap) */
	struct taint__entry **heap;
	size_t n, cap;
	struct loop_timer *timer;
};

static void taint__swap(struct taintmgr *t, size_t a, size_t b)
{
	struct taint__entry *x = t->heap[a];
	t->heap[a] = t->heap[b];
	t->heap[b] = x;
	t->heap[a]->at = a;
	t->heap[b]->at = b;
}

static void taint__up(struct taintmgr *t, size_t i)
{
	while (i > 0 && t->heap[(i - 1) / 2]->due_ms > t->heap[i]->due_ms) {
		taint__swap(t, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void taint__down(struct taintmgr *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < t->n && t->heap[l]->due_ms < t->heap[m]->due_ms)
			m = l;
		if (r < t->n && t->heap[r]->due_ms < t->heap[m]->due_ms)
			m = r;
		if (m == i)
			return;
		taint__swap(t, i, m);
		i = m;
	}
}

static void taint__arm(struct taintmgr *t)
{
	if (!t->n) {
		loop_timer_stop(t->timer);
		return;
	}
	uint64_t now = loop_now_ms(), due = t->heap[0]->due_ms;
	loop_timer_start(t->timer, due > now ? due - now : 0, 0);
}

/* Takes e out of the heap (the map still has it). */
static void taint__unheap(struct taintmgr *t, struct taint__entry *e)
{
	size_t i = e->at;
	t->n--;
	if (i != t->n) {
		t->heap[i] = t->heap[t->n];
		t->heap[i]->at = i;
		taint__down(t, i);
		taint__up(t, i);
	}
}

static void taint__entry_free(void *p)
{
	struct taint__entry *e = p;
	if (!e)
		return;
	free(e->key);
	free(e->uid);
	free(e);
}

static void taint__cancel(struct taintmgr *t, const char *key, const struct ynode *pod)
{
	struct taint__entry *e = keymap_get(t->entries, key);
	if (!e)
		return;
	taint__unheap(t, e);
	if (pod)
		events_record(t->c->events, TAINT__COMPONENT, pod, "Normal", "TaintManagerEviction",
			      "Cancelling deletion of Pod %s", key);
	keymap_del(t->entries, key);
	taint__arm(t);
}

static void taint__schedule(struct taintmgr *t, const char *key, const struct ynode *pod,
			    long long seconds)
{
	uint64_t now = loop_now_ms();
	struct taint__entry *e = keymap_get(t->entries, key);
	if (e && strcmp(e->uid, obj_uid(pod) ? obj_uid(pod) : "")) {
		taint__cancel(t, key, NULL);
		e = NULL;
	}
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->key = xstrdup(key);
		e->uid = xstrdup(obj_uid(pod) ? obj_uid(pod) : "");
		e->created_ms = now;
		e->due_ms = now + (uint64_t)seconds * 1000;
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 64;
			t->heap = xrealloc(t->heap, t->cap * sizeof(*t->heap));
		}
		e->at = t->n;
		t->heap[t->n++] = e;
		keymap_set(t->entries, key, e);
		taint__up(t, e->at);
		if (seconds > 0)
			log_info("taint-eviction: pod %s: deleted in %lld s unless its node's "
				 "NoExecute taints go",
				 key, seconds);
	} else {
		uint64_t due = e->created_ms + (uint64_t)seconds * 1000;
		if (due == e->due_ms)
			return;
		e->due_ms = due;
		taint__down(t, e->at);
		taint__up(t, e->at);
	}
	taint__arm(t);
}

/* ---- deciding ------------------------------------------------------------ */

static void taint__process(struct taintmgr *t, const char *key, const struct ynode *pod)
{
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (!node || !*node || object_is_deleting(pod) || pod_is_terminal(pod)) {
		taint__cancel(t, key, NULL);
		return;
	}
	const struct ynode *taints = keymap_get(t->noexec, node);
	long long seconds = 0;
	switch (taint_verdict(taints, ynode_path(pod, "spec.tolerations"), &seconds)) {
	case TAINT_NONE:
	case TAINT_TOLERATED:
		taint__cancel(t, key, pod);
		break;
	case TAINT_EVICT_NOW:
		taint__schedule(t, key, pod, 0);
		break;
	case TAINT_EVICT_AFTER:
		taint__schedule(t, key, pod, seconds);
		break;
	}
}

static void taint__deleted(void *data, const struct writer_result *res)
{
	char *key = data;
	if (res->status && res->status != ENOENT && res->status != ESTALE)
		log_warn("taint-eviction: cannot delete pod %s: %s", key, res->msg);
	free(key);
}

static void taint__on_timer(struct loop *loop, struct loop_timer *timer, void *data)
{
	(void)loop;
	(void)timer;
	struct taintmgr *t = data;
	uint64_t now = loop_now_ms();
	while (t->n && t->heap[0]->due_ms <= now) {
		struct taint__entry *e = t->heap[0];
		taint__unheap(t, e);
		const struct ynode *pod = informer_get(t->pods, e->key);
		if (pod && !strcmp(obj_uid(pod) ? obj_uid(pod) : "", e->uid)) {
			events_record(t->c->events, TAINT__COMPONENT, pod, "Normal",
				      "TaintManagerEviction", "Marking for deletion Pod %s",
				      e->key);
			log_info("taint-eviction: deleting pod %s from node %s", e->key,
				 ynode_path_str(pod, "spec.nodeName"));
			cleanup_free char *path =
			    obj_path("pods", obj_namespace(pod), obj_name(pod));
			writer_delete(t->c->writer, path, e->uid, 0, taint__deleted,
				      xstrdup(e->key));
		}
		keymap_del(t->entries, e->key);
	}
	taint__arm(t);
}

/* ---- the informers --------------------------------------------------------- */

static struct ynode *taint__noexec_of(const struct ynode *node)
{
	struct ynode *out = ynode_new_seq();
	const struct ynode *l = ynode_path(node, "spec.taints");
	for (size_t i = 0; l && l->type == YNODE_SEQ && i < l->n; i++) {
		const char *e = ynode_str(ynode_get(ynode_item(l, i), "effect"));
		if (e && !strcmp(e, "NoExecute"))
			ynode_append(out, ynode_clone(ynode_item(l, i)));
	}
	return out;
}

struct taint__walk {
	struct taintmgr *t;
	const char *node;
};

static int taint__visit(void *data, const char *key, const struct ynode *pod)
{
	struct taint__walk *w = data;
	const char *on = ynode_path_str(pod, "spec.nodeName");
	if (on && !strcmp(on, w->node))
		taint__process(w->t, key, pod);
	return 0;
}

static void taint__node_changed(struct taintmgr *t, const char *name, const struct ynode *node)
{
	struct ynode *now = node ? taint__noexec_of(node) : NULL;
	const struct ynode *before = keymap_get(t->noexec, name);
	bool same = (!before || !before->n) == (!now || !now->n) &&
		    (!before || !now || ynode_equal(before, now));
	if (now && now->n)
		keymap_set(t->noexec, name, now);
	else {
		keymap_del(t->noexec, name);
		ynode_free(now);
	}
	if (same)
		return;
	struct taint__walk w = {.t = t, .node = name};
	informer_foreach(t->pods, NULL, taint__visit, &w);
}

static void taint__on_node(void *data, const char *key, const struct ynode *obj)
{
	taint__node_changed(data, key, obj);
}

static void taint__on_node_update(void *data, const char *key, const struct ynode *old,
				  const struct ynode *obj)
{
	(void)old;
	taint__node_changed(data, key, obj);
}

static void taint__on_node_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	taint__node_changed(data, key, NULL);
}

static void taint__on_pod(void *data, const char *key, const struct ynode *obj)
{
	taint__process(data, key, obj);
}

static void taint__on_pod_update(void *data, const char *key, const struct ynode *old,
				 const struct ynode *obj)
{
	(void)old;
	taint__process(data, key, obj);
}

static void taint__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	taint__cancel(data, key, NULL);
}

static void taint__ynode_free(void *p)
{
	ynode_free(p);
}

struct taintmgr *taintmgr_new(struct ctrl *c)
{
	struct taintmgr *t = xcalloc(1, sizeof(*t));
	t->c = c;
	t->nodes = ctrl_informer(c, "nodes");
	t->pods = ctrl_informer(c, "pods");
	t->noexec = keymap_new(taint__ynode_free);
	t->entries = keymap_new(taint__entry_free);
	t->timer = loop_timer_new(c->loop, taint__on_timer, t);
	/* nodes first: a pod listed after its node sees the node's taints */
	struct informer_handlers nh = {
	    .on_add = taint__on_node,
	    .on_update = taint__on_node_update,
	    .on_delete = taint__on_node_delete,
	};
	informer_add_handlers(t->nodes, &nh, t);
	struct informer_handlers ph = {
	    .on_add = taint__on_pod,
	    .on_update = taint__on_pod_update,
	    .on_delete = taint__on_pod_delete,
	};
	informer_add_handlers(t->pods, &ph, t);
	return t;
}

size_t taintmgr_pending(const struct taintmgr *t)
{
	return t ? t->n : 0;
}

void taintmgr_free(struct taintmgr *t)
{
	if (!t)
		return;
	loop_timer_free(t->timer);
	keymap_free(t->entries);
	keymap_free(t->noexec);
	free(t->heap);
	free(t);
}
