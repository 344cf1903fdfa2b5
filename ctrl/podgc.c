/* podgc.c: the pod garbage collector: terminated pods beyond the
 * threshold, oldest first, and pods of nodes that have gone.
 *
 * The count of terminated pods is kept from the pod informer's events; a
 * pass over the pods runs only when it is above the threshold. A node is
 * missing once it has been seen deleted; it is checked again when its
 * quarantine is over (a delayed add of "node:NAME"), and so is a node
 * seen deleted that a pod bound later names. A node name that was never
 * registered while this process ran (test scaffolding binds pods to such
 * names) is left alone. This file must never delete a pod whose node
 * exists. */
#include "podgc.h"
#include "ctrl.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PODGC__TERMINATED "terminated"
#define PODGC__NODE	  "node:"

struct podgc {
	struct ctrl *c;
	struct informer *pods;
	struct informer *nodes;
	struct workqueue *q;
	struct keymap *missing; /* node name -> (uintptr_t) ms it was first seen missing */
	struct keymap *gone;	/* node names seen deleted (and not back) */
	long long threshold;	/* 0: no limit */
	uint64_t quarantine_ms; /* a gone node's pods wait this long */
	long long terminated;	/* pods in the informer that have terminated */
};

static int podgc__cmp(const void *pa, const void *pb)
{
	const struct ynode *a = *(const struct ynode *const *)pa;
	const struct ynode *b = *(const struct ynode *const *)pb;
	int64_t ta = obj_time_parse(ynode_path_str(a, "metadata.creationTimestamp"));
	int64_t tb = obj_time_parse(ynode_path_str(b, "metadata.creationTimestamp"));
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return strcmp(obj_name(a) ? obj_name(a) : "", obj_name(b) ? obj_name(b) : "");
}

void podgc_sort_oldest(const struct ynode **pods, size_t n)
{
	if (n > 1)
		qsort(pods, n, sizeof(*pods), podgc__cmp);
}

static void podgc__deleted(void *data, const struct writer_result *res)
{
	char *what = data;
	if (res->status && res->status != ENOENT && res->status != ESTALE)
		log_warn("podgc: cannot delete pod %s: %s", what, res->msg);
	free(what);
}

static void podgc__delete(struct podgc *g, const struct ynode *pod, const char *why)
{
	cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
	cleanup_free char *key = obj_key(obj_namespace(pod), obj_name(pod));
	log_info("podgc: deleting pod %s: %s", key, why);
	writer_delete(g->c->writer, path, obj_uid(pod), 0, podgc__deleted, xstrdup(key));
}

struct podgc__list {
	const struct ynode **pods;
	size_t n, cap;
	const char *node; /* only pods bound to it; NULL: terminated ones */
};

static int podgc__collect(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct podgc__list *l = data;
	if (l->node) {
		const char *n = ynode_path_str(pod, "spec.nodeName");
		if (!n || strcmp(n, l->node) || object_is_deleting(pod))
			return 0;
	} else if (!pod_is_terminal(pod)) {
		return 0;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->pods = xrealloc(l->pods, l->cap * sizeof(*l->pods));
	}
	l->pods[l->n++] = pod;
	return 0;
}

static void podgc__gc_terminated(struct podgc *g)
{
	if (!g->threshold || g->terminated <= g->threshold)
		return;
	struct podgc__list l = {0};
	informer_foreach(g->pods, NULL, podgc__collect, &l);
	if ((long long)l.n > g->threshold) {
		podgc_sort_oldest(l.pods, l.n);
		size_t excess = l.n - (size_t)g->threshold;
		for (size_t i = 0; i < excess; i++)
			podgc__delete(g, l.pods[i], "terminated pods are over the threshold");
		/* counted down as the informer sees them go */
	}
	free(l.pods);
}

static void podgc__gc_node(struct podgc *g, const char *node)
{
	if (informer_get(g->nodes, node)) {
		keymap_del(g->missing, node);
		return;
	}
	uint64_t now = loop_now_ms();
	uint64_t since = (uint64_t)(uintptr_t)keymap_get(g->missing, node);
	if (!since) {
		since = now;
		keymap_set(g->missing, node, (void *)(uintptr_t)since);
	}
	cleanup_free char *key = xasprintf(PODGC__NODE "%s", node);
	if (now - since < g->quarantine_ms) {
		workqueue_add_after(g->q, key, since + g->quarantine_ms - now);
		return;
	}
	keymap_del(g->missing, node);
	struct podgc__list l = {.node = node};
	informer_foreach(g->pods, NULL, podgc__collect, &l);
	cleanup_free char *why = xasprintf("its node %s does not exist", node);
	for (size_t i = 0; i < l.n; i++)
		podgc__delete(g, l.pods[i], why);
	free(l.pods);
}

static int podgc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct podgc *g = data;
	if (!strcmp(key, PODGC__TERMINATED))
		podgc__gc_terminated(g);
	else if (!strncmp(key, PODGC__NODE, strlen(PODGC__NODE)))
		podgc__gc_node(g, key + strlen(PODGC__NODE));
	return 0;
}

/* A pod bound to a node seen deleted that is still missing: note the
 * node. */
static void podgc__check_node(struct podgc *g, const struct ynode *pod)
{
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (!node || !*node || !keymap_has(g->gone, node) || informer_get(g->nodes, node) ||
	    keymap_has(g->missing, node))
		return;
	cleanup_free char *key = xasprintf(PODGC__NODE "%s", node);
	workqueue_add(g->q, key);
}

static void podgc__on_pod_add(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct podgc *g = data;
	if (pod_is_terminal(pod) && ++g->terminated > g->threshold && g->threshold)
		workqueue_add(g->q, PODGC__TERMINATED);
	podgc__check_node(g, pod);
}

static void podgc__on_pod_update(void *data, const char *key, const struct ynode *old,
				 const struct ynode *pod)
{
	(void)key;
	struct podgc *g = data;
	bool was = pod_is_terminal(old), is = pod_is_terminal(pod);
	g->terminated += (long long)is - (long long)was;
	if (is && !was && g->threshold && g->terminated > g->threshold)
		workqueue_add(g->q, PODGC__TERMINATED);
	podgc__check_node(g, pod);
}

static void podgc__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	struct podgc *g = data;
	if (pod_is_terminal(old))
		g->terminated--;
}

static void podgc__on_node_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct podgc *g = data;
	keymap_del(g->gone, key);
	keymap_del(g->missing, key);
}

static void podgc__on_node_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct podgc *g = data;
	keymap_set(g->gone, key, (void *)1);
	cleanup_free char *k = xasprintf(PODGC__NODE "%s", key);
	workqueue_add(g->q, k);
}

struct podgc *podgc_new(struct ctrl *c)
{
	struct podgc *g = xcalloc(1, sizeof(*g));
	g->c = c;
	g->threshold = c->cfg ? c->cfg->pod_gc_threshold : 12500;
	g->quarantine_ms = c->cfg ? c->cfg->pod_gc_quarantine_ms : 40000;
	g->pods = ctrl_informer(c, "pods");
	g->nodes = ctrl_informer(c, "nodes");
	g->q = workqueue_new(c->loop, "podgc", NULL);
	g->missing = keymap_new(NULL);
	g->gone = keymap_new(NULL);
	struct informer_handlers nh = {.on_add = podgc__on_node_add,
				       .on_delete = podgc__on_node_delete};
	informer_add_handlers(g->nodes, &nh, g);
	struct informer_handlers ph = {
	    .on_add = podgc__on_pod_add,
	    .on_update = podgc__on_pod_update,
	    .on_delete = podgc__on_pod_delete,
	};
	informer_add_handlers(g->pods, &ph, g);
	workqueue_set_handler(g->q, podgc__sync, g);
	return g;
}

void podgc_free(struct podgc *g)
{
	if (!g)
		return;
	workqueue_free(g->q);
	keymap_free(g->missing);
	keymap_free(g->gone);
	free(g);
}
