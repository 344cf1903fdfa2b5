/* kinds_policy.c: the rules of the policy API group's kind,
 * PodDisruptionBudget. */
#include "names.h"
#include "validate_impl.h"

/* ---- PodDisruptionBudget ---------------------------------------------- */

static const char *const eviction_policies[] = {"IfHealthyBudget", "AlwaysAllow", NULL};

static void check_pdb(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	long long v = 0;
	bool pct = false;
	v_check_int_or_percent(c, spec, "minAvailable", 100, &v, &pct);
	v_check_int_or_percent(c, spec, "maxUnavailable", 100, &v, &pct);
	if (!v_node_unset(ynode_get(spec, "minAvailable")) &&
	    !v_node_unset(ynode_get(spec, "maxUnavailable")))
		v_err_invalid_node(c, NULL, spec,
				   "minAvailable and maxUnavailable cannot be both set");
	v_check_label_selector(c, spec, "selector", OPT);
	v_get_enum(c, spec, "unhealthyPodEvictionPolicy", OPT, eviction_policies);
	v_path_pop(c, mark);
}

/* PodDisruptionBudget */
const struct kind_rules v_rules_pod_disruption_budget = {
    .kind = KIND_POD_DISRUPTION_BUDGET,
    .name = names_dns1123_subdomain,
    .check = check_pdb,
};
