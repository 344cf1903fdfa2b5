/* kinds_metrics.c: the rules of the metrics kinds: PodMetrics and
 * NodeMetrics (metrics.k8s.io, what metrics-server serves; corral-noded
 * writes them) and MetricValue (custom.metrics.k8s.io, one value of one
 * metric of one object, for the HorizontalPodAutoscaler's Pods and Object
 * metrics; anyone may write it, with `echo`). None of them has a spec:
 * their fields are at the top level, as the metrics APIs serve them. */
#include "names.h"
#include "timefmt.h"
#include "util.h"
#include "validate_impl.h"

#include <string.h>
#include <time.h>

/* A resource list whose values are quantities (usage: cpu, memory). */
static void check_usage(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct ynode *u = v_get_map(c, m, key, req);
	if (!u)
		return;
	size_t mark = v_path_push(c, key);
	int64_t q;
	for (size_t i = 0; i < u->n; i++) {
		const struct ynode *v = ynode_map_val(u, i);
		const char *name = ynode_map_key(u, i)->str;
		if (v_check_quantity(c, name, v, &q) && q < 0)
			v_err_invalid_str(c, name, v->str, "must be greater than or equal to 0");
	}
	v_path_pop(c, mark);
}

static void check_timestamp(struct vctx *c, const struct ynode *obj, const char *key)
{
	const char *ts = v_get_str(c, obj, key, OPT);
	time_t t;
	if (ts && rfc3339_parse(ts, &t) < 0)
		v_err_invalid_str(c, key, ts, "must be an RFC 3339 time");
}

static void check_window(struct vctx *c, const struct ynode *obj)
{
	const char *w = v_get_str(c, obj, "window", OPT);
	if (!w)
		return;
	/* a Go duration as metrics-server prints it: "15s", "1m0s", "10.5s" */
	size_t n = strspn(w, "0123456789.hmsun");
	if (!*w || w[n] || !strpbrk(w, "hms"))
		v_err_invalid_str(c, "window", w, "must be a duration such as 15s");
}

/* ---- PodMetrics --------------------------------------------------------- */

static void check_container_usage(struct vctx *c, struct ynode *ct, void *arg)
{
	(void)arg;
	const char *name = v_get_str(c, ct, "name", REQ);
	if (name)
		v_check_name(c, "name", name, names_dns1123_label);
	check_usage(c, ct, "usage", REQ);
}

static void check_pod_metrics(struct vctx *c, struct ynode *obj)
{
	check_timestamp(c, obj, "timestamp");
	check_window(c, obj);
	v_check_each(c, obj, "containers", OPT, check_container_usage, NULL);
}

/* PodMetrics */
const struct kind_rules v_rules_pod_metrics = {
    .kind = KIND_POD_METRICS,
    .name = names_dns1123_subdomain,
    .check = check_pod_metrics,
};

/* ---- NodeMetrics -------------------------------------------------------- */

static void check_node_metrics(struct vctx *c, struct ynode *obj)
{
	check_timestamp(c, obj, "timestamp");
	check_window(c, obj);
	check_usage(c, obj, "usage", OPT);
}

/* NodeMetrics */
const struct kind_rules v_rules_node_metrics = {
    .kind = KIND_NODE_METRICS,
    .name = names_dns1123_subdomain,
    .check = check_node_metrics,
};

/* ---- MetricValue -------------------------------------------------------- */

static void check_metric_value(struct vctx *c, struct ynode *obj)
{
	struct ynode *d = v_get_map(c, obj, "describedObject", REQ);
	if (d) {
		size_t mark = v_path_push(c, "describedObject");
		v_get_str(c, d, "kind", REQ);
		const char *name = v_get_str(c, d, "name", REQ);
		if (name)
			v_check_name(c, "name", name, names_dns1123_subdomain);
		v_get_str(c, d, "apiVersion", OPT);
		v_path_pop(c, mark);
	}
	struct ynode *m = v_get_map(c, obj, "metric", REQ);
	if (m) {
		size_t mark = v_path_push(c, "metric");
		v_get_str(c, m, "name", REQ);
		v_path_pop(c, mark);
	}
	/* v1beta1 names the metric at the top (metricName) */
	struct ynode *v = v_get_any(c, obj, "value", REQ);
	int64_t q;
	if (v)
		v_check_quantity(c, "value", v, &q);
	check_timestamp(c, obj, "timestamp");
	long long w;
	if (v_get_i32(c, obj, "windowSeconds", OPT, &w))
		v_check_min(c, "windowSeconds", w, 0);
}

/* MetricValue */
const struct kind_rules v_rules_metric_value = {
    .kind = KIND_METRIC_VALUE,
    .name = names_dns1123_subdomain,
    .check = check_metric_value,
};
