/* watch.c: informers feeding the zone (watch.h). */
#include "watch.h"
#include "informer.h"
#include "kubedns.h"
#include "log.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct watch {
	const struct watch_config *cfg;
	struct zone *zone;
	struct metrics *metrics;
	struct informer *services, *endpoints, *nodes;
	struct loop_timer *kubedns; /* nodes changed: rewrite once they settle */
};

/* Nodes come in bursts (corral up --hollow N): one write per burst. */
#define WATCH__KUBEDNS_DELAY_MS 200
/* A write of kube-dns's Endpoints that failed is tried again after this. */
#define WATCH__KUBEDNS_RETRY_MS 1000

static void watch__nodes_changed(struct watch *w);

/* Re-indexes the service of key "ns/name" from both caches. */
static void watch__reindex(struct watch *w, const char *key)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return;
	cleanup_free char *ns = xstrndup(key, (size_t)(slash - key));
	zone_set_service(w->zone, ns, slash + 1, informer_get(w->services, key),
			 informer_get(w->endpoints, key));
	metrics_bump(&w->metrics->zone_updates);
}

/* Re-indexes key's service; a registrar also checks kube-dns's own
 * objects again when anything else changed them (another host's
 * registrar, with fewer nodes known, or a person). */
static void watch__changed(struct watch *w, const char *key)
{
	watch__reindex(w, key);
	if (w->kubedns && strcmp(key, KUBEDNS_NAMESPACE "/" KUBEDNS_NAME) == 0)
		watch__nodes_changed(w);
}

static void watch__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	watch__changed(data, key);
}

static void watch__on_update(void *data, const char *key, const struct ynode *old,
			     const struct ynode *obj)
{
	(void)old;
	(void)obj;
	watch__changed(data, key);
}

static void watch__on_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	watch__changed(data, key);
}

static void watch__sync_kubedns(struct watch *w)
{
	cleanup_error struct error *err = NULL;
	const struct ynode *cur = informer_get(w->endpoints, KUBEDNS_NAMESPACE "/" KUBEDNS_NAME);
	if (kubedns_sync_endpoints(w->cfg->mount, w->nodes, w->cfg->port, cur, &err) < 0) {
		log_warn("kube-dns endpoints: %s (trying again in %d ms)", err->msg,
			 WATCH__KUBEDNS_RETRY_MS);
		loop_timer_start(w->kubedns, WATCH__KUBEDNS_RETRY_MS, 0);
	}
}

static void watch__on_kubedns_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	watch__sync_kubedns(data);
}

static void watch__nodes_changed(struct watch *w)
{
	if (!loop_timer_armed(w->kubedns))
		loop_timer_start(w->kubedns, WATCH__KUBEDNS_DELAY_MS, 0);
}

static void watch__on_node(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	(void)obj;
	watch__nodes_changed(data);
}

static void watch__on_node_update(void *data, const char *key, const struct ynode *old,
				  const struct ynode *obj)
{
	(void)key;
	if (strcmp(ynode_path_str(old, "spec.podCIDR") ? ynode_path_str(old, "spec.podCIDR") : "",
		   ynode_path_str(obj, "spec.podCIDR") ? ynode_path_str(obj, "spec.podCIDR") : ""))
		watch__nodes_changed(data);
}

struct watch *watch_new(struct loop *loop, const struct watch_config *cfg, struct zone *zone,
			struct metrics *metrics)
{
	struct watch *w = xcalloc(1, sizeof(*w));
	w->cfg = cfg;
	w->zone = zone;
	w->metrics = metrics;
	w->services = informer_new(loop, cfg->mount, "services", true);
	w->endpoints = informer_new(loop, cfg->mount, "endpoints", true);
	static const struct informer_handlers h = {
	    .on_add = watch__on_add, .on_update = watch__on_update, .on_delete = watch__on_delete};
	informer_add_handlers(w->services, &h, w);
	informer_add_handlers(w->endpoints, &h, w);
	if (cfg->resync_ms) {
		informer_set_resync(w->services, cfg->resync_ms);
		informer_set_resync(w->endpoints, cfg->resync_ms);
	}
	if (cfg->register_service) {
		w->nodes = informer_new(loop, cfg->mount, "nodes", false);
		static const struct informer_handlers nh = {.on_add = watch__on_node,
							    .on_update = watch__on_node_update,
							    .on_delete = watch__on_node};
		informer_add_handlers(w->nodes, &nh, w);
		w->kubedns = loop_timer_new(loop, watch__on_kubedns_timer, w);
	}
	return w;
}

int watch_start(struct watch *w, struct error **err)
{
	if (w->cfg->register_service) {
		cleanup_error struct error *e = NULL;
		if (kubedns_ensure_service(w->cfg->mount, w->cfg->cluster_ip, w->cfg->port, &e) < 0)
			log_warn("kube-dns service: %s", e->msg);
	}
	if (informer_start(w->services, err) < 0 || informer_start(w->endpoints, err) < 0)
		return -1;
	if (w->nodes) {
		if (informer_start(w->nodes, err) < 0)
			return -1;
		loop_timer_stop(w->kubedns);
		watch__sync_kubedns(w); /* also with no nodes yet */
	}
	return 0;
}

void watch_free(struct watch *w)
{
	if (!w)
		return;
	loop_timer_free(w->kubedns);
	informer_free(w->nodes);
	informer_free(w->endpoints);
	informer_free(w->services);
	free(w);
}
