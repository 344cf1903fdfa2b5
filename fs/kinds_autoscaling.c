/* kinds_autoscaling.c: the rules of the autoscaling API group's kind,
 * HorizontalPodAutoscaler, in its v1 shape (targetCPUUtilizationPercentage)
 * and its v2 shape (metrics, behavior). */
#include "autoscale.h"
#include "names.h"
#include "util.h"
#include "validate_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- HorizontalPodAutoscaler ------------------------------------------ */

static const char *const metric_types[] = {"Object",   "Pods", "Resource", "ContainerResource",
					   "External", NULL};
static const char *const metric_fields[] = {"object",	"pods", "resource", "containerResource",
					    "external", NULL};
static const char *const target_types[] = {"Utilization", "Value", "AverageValue", NULL};

static void check_metric_target(struct vctx *c, const struct ynode *m)
{
	struct ynode *t = v_get_map(c, m, "target", REQ);
	if (!t)
		return;
	size_t mark = v_path_push(c, "target");
	const char *type = v_get_enum(c, t, "type", REQ, target_types);
	long long v = 0;
	int64_t q = 0;
	if (v_get_i32(c, t, "averageUtilization", OPT, &v))
		v_check_min(c, "averageUtilization", v, 1);
	static const char *const qs[] = {"value", "averageValue"};
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++) {
		struct ynode *qv = v_get_any(c, t, qs[i], OPT);
		if (qv && v_check_quantity(c, qs[i], qv, &q) && q <= 0)
			v_err_invalid_str(c, qs[i], qv->str, "must be positive");
	}
	if (type && !strcmp(type, "Utilization") &&
	    v_node_unset(ynode_get(t, "averageUtilization")))
		v_err_required(c, "averageUtilization",
			       "must set `averageUtilization` when `type` is 'Utilization'");
	if (type && !strcmp(type, "Value") && v_node_unset(ynode_get(t, "value")))
		v_err_required(c, "value", "must set `value` when `type` is 'Value'");
	if (type && !strcmp(type, "AverageValue") && v_node_unset(ynode_get(t, "averageValue")))
		v_err_required(c, "averageValue",
			       "must set `averageValue` when `type` is 'AverageValue'");
	v_path_pop(c, mark);
}

static void check_metric(struct vctx *c, struct ynode *m, void *arg)
{
	(void)arg;
	const char *type = v_get_enum(c, m, "type", REQ, metric_types);
	if (!type)
		return;
	size_t i = 0;
	while (strcmp(metric_types[i], type) != 0)
		i++;
	const char *field = metric_fields[i];
	struct ynode *src = v_get_map(c, m, field, REQ);
	if (!src)
		return;
	size_t mark = v_path_push(c, field);
	if (!strcmp(field, "resource") || !strcmp(field, "containerResource")) {
		v_get_str(c, src, "name", REQ);
		if (!strcmp(field, "containerResource"))
			v_get_str(c, src, "container", REQ);
	} else {
		struct ynode *metric = v_get_map(c, src, "metric", REQ);
		if (metric) {
			size_t mm = v_path_push(c, "metric");
			v_get_str(c, metric, "name", REQ);
			v_path_pop(c, mm);
		}
		if (!strcmp(field, "object")) {
			struct ynode *d = v_get_map(c, src, "describedObject", REQ);
			size_t dm = v_path_push(c, "describedObject");
			v_get_str(c, d, "kind", d ? REQ : OPT);
			v_get_str(c, d, "name", d ? REQ : OPT);
			v_path_pop(c, dm);
		}
	}
	check_metric_target(c, src);
	v_path_pop(c, mark);
}

static const char *const select_policies[] = {"Max", "Min", "Disabled", NULL};
static const char *const policy_types[] = {"Pods", "Percent", NULL};

static void check_policy(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	v_get_enum(c, p, "type", REQ, policy_types);
	long long v = 0;
	if (v_get_i32(c, p, "value", REQ, &v) && v <= 0)
		v_err_invalid_int(c, "value", v, "must be greater than zero");
	if (v_get_i32(c, p, "periodSeconds", REQ, &v)) {
		if (v <= 0)
			v_err_invalid_int(c, "periodSeconds", v, "must be greater than zero");
		else if (v > 1800)
			v_err_invalid_int(c, "periodSeconds", v,
					  "must be less than or equal to 1800");
	}
}

/* behavior.scaleUp / scaleDown (HPAScalingRules); policies left out are
 * the controller's defaults, as Kubernetes defaults them. */
static void check_scaling_rules(struct vctx *c, const struct ynode *b, const char *key)
{
	struct ynode *r = v_get_map(c, b, key, OPT);
	if (!r)
		return;
	size_t mark = v_path_push(c, key);
	v_get_enum(c, r, "selectPolicy", OPT, select_policies);
	long long w = 0;
	if (v_get_i32(c, r, "stabilizationWindowSeconds", OPT, &w)) {
		if (w < 0)
			v_err_invalid_int(c, "stabilizationWindowSeconds", w,
					  "must be greater than or equal to zero");
		else if (w > 3600)
			v_err_invalid_int(c, "stabilizationWindowSeconds", w,
					  "must be less than or equal to 3600");
	}
	v_check_each(c, r, "policies", OPT, check_policy, NULL);
	v_path_pop(c, mark);
}

static void check_behavior(struct vctx *c, const struct ynode *spec)
{
	struct ynode *b = v_get_map(c, spec, "behavior", OPT);
	if (!b)
		return;
	size_t mark = v_path_push(c, "behavior");
	check_scaling_rules(c, b, "scaleUp");
	check_scaling_rules(c, b, "scaleDown");
	v_path_pop(c, mark);
}

static bool hpa_v1(const struct vctx *c)
{
	return c->api_version && !strcmp(c->api_version, "autoscaling/v1");
}

static void check_hpa(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	struct ynode *ref = v_get_map(c, spec, "scaleTargetRef", REQ);
	if (ref) {
		size_t rm = v_path_push(c, "scaleTargetRef");
		v_get_str(c, ref, "kind", REQ);
		const char *name = v_get_str(c, ref, "name", REQ);
		if (name)
			v_check_name(c, "name", name, names_dns1123_subdomain);
		v_get_str(c, ref, "apiVersion", OPT);
		v_path_pop(c, rm);
	}
	long long minr = 1, maxr;
	if (v_get_i32(c, spec, "minReplicas", OPT, &minr) && minr < 1) {
		v_err_invalid_int(c, "minReplicas", minr, "must be greater than or equal to 1");
		minr = 1;
	}
	if (v_get_i32(c, spec, "maxReplicas", REQ, &maxr)) {
		if (maxr < 1)
			v_err_invalid_int(c, "maxReplicas", maxr, "must be greater than 0");
		else if (maxr < minr)
			v_err_invalid_int(c, "maxReplicas", maxr,
					  "must be greater than or equal to `minReplicas`");
	}
	if (hpa_v1(c)) {
		long long v = 0;
		if (v_get_i32(c, spec, "targetCPUUtilizationPercentage", OPT, &v))
			v_check_min(c, "targetCPUUtilizationPercentage", v, 1);
	} else {
		v_check_each(c, spec, "metrics", OPT, check_metric, NULL);
		check_behavior(c, spec);
	}
	v_path_pop(c, mark);
}

static void default_hpa(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = ynode_get(obj, "spec");
	v_default_int(spec, "minReplicas", 1);
	if (hpa_v1(c) || !spec || !v_node_empty(ynode_get(spec, "metrics")))
		return;
	ynode_set(spec, "metrics", autoscale_cpu_metrics(80));
}

/* HorizontalPodAutoscaler */
const struct kind_rules v_rules_horizontal_pod_autoscaler = {
    .kind = KIND_HORIZONTAL_POD_AUTOSCALER,
    .name = names_dns1123_subdomain,
    .check = check_hpa,
    .defaults = default_hpa,
};
