/* kinds_apps.c: the rules of the apps API group's kinds -- ReplicaSet,
 * Deployment, DaemonSet, StatefulSet -- and of the core group's
 * ReplicationController, their older sibling: replicas, selector against
 * template, update strategies, immutable selectors -- and ControllerRevision,
 * the history a DaemonSet's rollouts leave. */
#include "names.h"
#include "util.h"
#include "validate_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- workload controllers --------------------------------------------- */

static const char *const deploy_strategies[] = {"Recreate", "RollingUpdate", NULL};
static const char *const ds_strategies[] = {"RollingUpdate", "OnDelete", NULL};
static const char *const pod_management[] = {"OrderedReady", "Parallel", NULL};
static const char *const retention_policies[] = {"Retain", "Delete", NULL};

/* Before apps/v1 a selector could be left out and was taken from the
 * template's labels (extensions/v1beta1, apps/v1beta1). */
static bool selector_defaulted(const struct vctx *c)
{
	return c->api_version && (!strcmp(c->api_version, "extensions/v1beta1") ||
				  !strcmp(c->api_version, "apps/v1beta1"));
}

/* An apps workload's spec.template (a pod template whose restartPolicy is
 * Always) and spec.selector (a LabelSelector) that must select it; a
 * StatefulSet's containers may also mount its volumeClaimTemplates. */
static struct ynode *check_template_selector(struct vctx *c, const struct ynode *spec,
					     const char *what)
{
	const struct ynode *claims =
	    !strcmp(what, "statefulset") ? ynode_get(spec, "volumeClaimTemplates") : NULL;
	struct ynode *t =
	    v_check_pod_template_claims(c, spec, "template", v_restart_always, false, claims);
	struct ynode *labels = t ? ynode_path(t, "metadata.labels") : NULL;
	if (selector_defaulted(c) && v_node_unset(ynode_get(spec, "selector"))) {
		if (t && v_node_empty(labels))
			v_err_required(c, "selector", NULL);
		return t;
	}
	struct ynode *sel = v_check_label_selector(c, spec, "selector", REQ);
	if (sel)
		v_check_selector_selects(c, sel, t, what);
	return t;
}

/* rollingUpdate.maxSurge and maxUnavailable: an integer or a percentage,
 * not both 0 (counting an absent one as its default). */
static void check_rolling_update(struct vctx *c, const struct ynode *ru, bool surge_default_zero,
				 bool unavailable_default_zero)
{
	size_t mark = v_path_push(c, "rollingUpdate");
	long long v = 0;
	bool pct = false, zero_s = surge_default_zero, zero_u = unavailable_default_zero;
	if (!v_node_unset(ynode_get(ru, "maxSurge")))
		zero_s = v_check_int_or_percent(c, ru, "maxSurge", 0, &v, &pct) && v == 0;
	if (!v_node_unset(ynode_get(ru, "maxUnavailable")))
		zero_u = v_check_int_or_percent(c, ru, "maxUnavailable", 100, &v, &pct) && v == 0;
	if (zero_s && zero_u)
		v_err_invalid_int(c, "maxUnavailable", 0, "may not be 0 when `maxSurge` is 0");
	v_path_pop(c, mark);
}

static void check_replicas_common(struct vctx *c, const struct ynode *spec)
{
	v_get_i32_min(c, spec, "replicas", 0, NULL);
	v_get_i32_min(c, spec, "minReadySeconds", 0, NULL);
}

static void check_replication_controller_spec(struct vctx *c, const struct ynode *spec)
{
	check_replicas_common(c, spec);
	struct ynode *t = v_check_pod_template(c, spec, "template", v_restart_always, false);
	struct ynode *labels = t ? ynode_path(t, "metadata.labels") : NULL;
	if (v_node_empty(ynode_get(spec, "selector"))) {
		if (t && v_node_empty(labels))
			v_err_required(c, "selector", NULL);
	} else {
		struct ynode *sel = v_check_labels(c, spec, "selector");
		if (sel && t && !v_map_selects(sel, labels))
			v_err_invalid_node(c, "template.metadata.labels", labels,
					   "`selector` does not match template `labels`");
	}
}

static void check_replication_controller(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, check_replication_controller_spec);
}

/* The selector, and the object's own labels when it has none, from the
 * template's labels (a ReplicationController, and apps kinds before
 * apps/v1). */
static void default_selector_from_template(struct ynode *obj, bool label_sel)
{
	struct ynode *spec = ynode_get(obj, "spec");
	struct ynode *labels = ynode_path(spec, "template.metadata.labels");
	if (!spec || spec->type != YNODE_MAP || !labels || labels->type != YNODE_MAP ||
	    labels->n == 0)
		return;
	if (v_node_empty(ynode_get(spec, "selector"))) {
		if (label_sel) {
			struct ynode *sel = ynode_new_map();
			ynode_set(sel, "matchLabels", ynode_clone(labels));
			ynode_set(spec, "selector", sel);
		} else {
			ynode_set(spec, "selector", ynode_clone(labels));
		}
	}
	struct ynode *md = ynode_get(obj, "metadata");
	if (md && md->type == YNODE_MAP && v_node_empty(ynode_get(md, "labels")))
		ynode_set(md, "labels", ynode_clone(labels));
}

static void default_replication_controller(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_selector_from_template(obj, false);
	struct ynode *spec = ynode_get(obj, "spec");
	v_default_int(spec, "replicas", 1);
	v_default_pod_template(spec, "template.spec");
}

/* ReplicationController */
const struct kind_rules v_rules_replication_controller = {
    .kind = KIND_REPLICATION_CONTROLLER,
    .name = names_dns1123_subdomain,
    .check = check_replication_controller,
    .defaults = default_replication_controller,
};

static void check_replica_set_spec(struct vctx *c, const struct ynode *spec)
{
	check_replicas_common(c, spec);
	check_template_selector(c, spec, "replicaset");
}

static void check_replica_set(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, check_replica_set_spec);
}

static void default_replica_set(struct vctx *c, struct ynode *obj)
{
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	v_default_int(spec, "replicas", 1);
	v_default_pod_template(spec, "template.spec");
}

static void update_selector(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	v_check_immutable(c, obj, old, "spec.selector");
}

/* ReplicaSet */
const struct kind_rules v_rules_replica_set = {
    .kind = KIND_REPLICA_SET,
    .name = names_dns1123_subdomain,
    .check = check_replica_set,
    .defaults = default_replica_set,
    .update = update_selector,
};

/* A Deployment's strategy or a DaemonSet's updateStrategy: a type from
 * types, and rollingUpdate only with a type other than no_rolling. */
static void check_update_strategy(struct vctx *c, const struct ynode *spec, const char *field,
				  const char *const *types, const char *no_rolling, bool daemon_set)
{
	struct ynode *st = v_get_map(c, spec, field, OPT);
	if (!st)
		return;
	size_t sm = v_path_push(c, field);
	const char *type = v_get_enum(c, st, "type", OPT, types);
	struct ynode *ru = v_get_map(c, st, "rollingUpdate", OPT);
	if (ru && type && !strcmp(type, no_rolling))
		v_err_forbidden(c, "rollingUpdate",
				"may not be specified when strategy `type` is '%s'", no_rolling);
	else if (ru)
		check_rolling_update(c, ru, daemon_set, false);
	v_path_pop(c, sm);
}

static void check_deployment_spec(struct vctx *c, const struct ynode *spec)
{
	check_replicas_common(c, spec);
	check_template_selector(c, spec, "deployment");
	long long mrs = 0, pds = 600;
	v_get_i32_min(c, spec, "minReadySeconds", 0, &mrs);
	v_get_i32_min(c, spec, "revisionHistoryLimit", 0, NULL);
	v_get_i32_min(c, spec, "progressDeadlineSeconds", 0, &pds);
	if (pds <= mrs)
		v_err_invalid_int(c, "progressDeadlineSeconds", pds,
				  "must be greater than minReadySeconds");
	bool paused = false;
	v_get_bool(c, spec, "paused", OPT, &paused);
	check_update_strategy(c, spec, "strategy", deploy_strategies, "Recreate", false);
}

static void check_deployment(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, check_deployment_spec);
}

static void default_deployment(struct vctx *c, struct ynode *obj)
{
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	v_default_int(spec, "replicas", 1);
	struct ynode *st = v_default_map(spec, "strategy");
	v_default_str(st, "type", "RollingUpdate");
	if (st && v_streq(ynode_path_str(st, "type"), "RollingUpdate")) {
		struct ynode *ru = v_default_map(st, "rollingUpdate");
		v_default_str(ru, "maxUnavailable", "25%");
		v_default_str(ru, "maxSurge", "25%");
	}
	v_default_int(spec, "revisionHistoryLimit", 10);
	v_default_int(spec, "progressDeadlineSeconds", 600);
	v_default_pod_template(spec, "template.spec");
}

/* Deployment */
const struct kind_rules v_rules_deployment = {
    .kind = KIND_DEPLOYMENT,
    .name = names_dns1123_subdomain,
    .check = check_deployment,
    .defaults = default_deployment,
    .update = update_selector,
};

static void check_daemon_set_spec(struct vctx *c, const struct ynode *spec)
{
	check_template_selector(c, spec, "daemonset");
	v_get_i32_min(c, spec, "minReadySeconds", 0, NULL);
	v_get_i32_min(c, spec, "revisionHistoryLimit", 0, NULL);
	check_update_strategy(c, spec, "updateStrategy", ds_strategies, "OnDelete", true);
}

static void check_daemon_set(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, check_daemon_set_spec);
}

static void default_daemon_set(struct vctx *c, struct ynode *obj)
{
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	struct ynode *st = v_default_map(spec, "updateStrategy");
	v_default_str(st, "type", "RollingUpdate");
	if (st && v_streq(ynode_path_str(st, "type"), "RollingUpdate")) {
		struct ynode *ru = v_default_map(st, "rollingUpdate");
		v_default_int(ru, "maxUnavailable", 1);
		v_default_int(ru, "maxSurge", 0);
	}
	v_default_int(spec, "revisionHistoryLimit", 10);
	v_default_pod_template(spec, "template.spec");
}

/* DaemonSet */
const struct kind_rules v_rules_daemon_set = {
    .kind = KIND_DAEMON_SET,
    .name = names_dns1123_subdomain,
    .check = check_daemon_set,
    .defaults = default_daemon_set,
    .update = update_selector,
};

static void check_claim_template(struct vctx *c, struct ynode *t, void *arg)
{
	(void)arg;
	v_check_template_metadata(c, t, REQ, names_dns1123_subdomain);
	v_check_required_spec(c, t, v_check_pvc_spec);
}

static void check_stateful_set_spec(struct vctx *c, const struct ynode *spec)
{
	check_replicas_common(c, spec);
	v_get_str(c, spec, "serviceName", OPT);
	struct ynode *t = check_template_selector(c, spec, "statefulset");
	if (t && !v_node_unset(ynode_path(t, "spec.activeDeadlineSeconds")))
		v_err_forbidden(c, "template.spec.activeDeadlineSeconds",
				"activeDeadlineSeconds in StatefulSet is not Supported");
	v_get_enum(c, spec, "podManagementPolicy", OPT, pod_management);
	v_get_i32_min(c, spec, "revisionHistoryLimit", 0, NULL);
	struct ynode *st = v_get_map(c, spec, "updateStrategy", OPT);
	if (st) {
		size_t sm = v_path_push(c, "updateStrategy");
		const char *type = v_get_enum(c, st, "type", OPT, ds_strategies);
		struct ynode *ru = v_get_map(c, st, "rollingUpdate", OPT);
		if (ru && type && !strcmp(type, "OnDelete")) {
			v_err_forbidden(c, "rollingUpdate",
					"only allowed for updateStrategy 'RollingUpdate'");
		} else if (ru) {
			size_t rm = v_path_push(c, "rollingUpdate");
			long long v = 0;
			bool pct = false;
			v_get_i32_min(c, ru, "partition", 0, NULL);
			if (v_check_int_or_percent(c, ru, "maxUnavailable", 100, &v, &pct) &&
			    v == 0)
				v_err_invalid_int(c, "maxUnavailable", 0, "must be greater than 0");
			v_path_pop(c, rm);
		}
		v_path_pop(c, sm);
	}
	v_check_each(c, spec, "volumeClaimTemplates", OPT, check_claim_template, NULL);
	struct ynode *rp = v_get_map(c, spec, "persistentVolumeClaimRetentionPolicy", OPT);
	if (rp) {
		size_t rm = v_path_push(c, "persistentVolumeClaimRetentionPolicy");
		v_get_enum(c, rp, "whenDeleted", OPT, retention_policies);
		v_get_enum(c, rp, "whenScaled", OPT, retention_policies);
		v_path_pop(c, rm);
	}
	struct ynode *ord = v_get_map(c, spec, "ordinals", OPT);
	if (ord) {
		size_t om = v_path_push(c, "ordinals");
		v_get_i32_min(c, ord, "start", 0, NULL);
		v_path_pop(c, om);
	}
}

static void check_stateful_set(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, check_stateful_set_spec);
}

static void default_stateful_set(struct vctx *c, struct ynode *obj)
{
	struct ynode *it;
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	v_default_int(spec, "replicas", 1);
	v_default_str(spec, "podManagementPolicy", "OrderedReady");
	struct ynode *st = v_default_map(spec, "updateStrategy");
	v_default_str(st, "type", "RollingUpdate");
	if (st && v_streq(ynode_path_str(st, "type"), "RollingUpdate")) {
		struct ynode *ru = v_default_map(st, "rollingUpdate");
		v_default_int(ru, "partition", 0);
	}
	v_default_int(spec, "revisionHistoryLimit", 10);
	struct ynode *rp = v_default_map(spec, "persistentVolumeClaimRetentionPolicy");
	v_default_str(rp, "whenDeleted", "Retain");
	v_default_str(rp, "whenScaled", "Retain");
	struct ynode *vcts = ynode_get(spec, "volumeClaimTemplates");
	for_each_map_item(vcts, i, it) v_default_pvc_spec(ynode_get(it, "spec"));
	v_default_pod_template(spec, "template.spec");
}

/* Kubernetes lets a StatefulSet change only these; the rest is fixed. */
static void update_stateful_set(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	v_check_immutable(c, obj, old, "spec.selector");
	const struct ynode *ns = ynode_get(obj, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!ns || !os || ns->type != YNODE_MAP || os->type != YNODE_MAP)
		return;
	cleanup_ynode struct ynode *a = ynode_clone(ns);
	cleanup_ynode struct ynode *b = ynode_clone(os);
	static const char *const mutable[] = {
	    "replicas",
	    "ordinals",
	    "template",
	    "updateStrategy",
	    "persistentVolumeClaimRetentionPolicy",
	    "minReadySeconds",
	    "selector" /* reported above */
	};
	for (size_t i = 0; i < ARRAY_SIZE(mutable); i++) {
		v_del_if(a, mutable[i]);
		v_del_if(b, mutable[i]);
	}
	if (!v_tree_equal(a, b))
		v_err_forbidden(
		    c, "spec",
		    "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
		    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
		    "'minReadySeconds' are forbidden");
}

/* StatefulSet */
const struct kind_rules v_rules_stateful_set = {
    .kind = KIND_STATEFUL_SET,
    .name = names_dns1123_subdomain,
    .check = check_stateful_set,
    .defaults = default_stateful_set,
    .update = update_stateful_set,
};

/* ---- history ------------------------------------------------------------ */

/* ValidateControllerRevision: data (any value) is mandatory, revision is
 * not negative. */
static void check_controller_revision(struct vctx *c, struct ynode *obj)
{
	if (v_node_unset(ynode_get(obj, "data")))
		v_err_required(c, "data", "data is mandatory");
	long long rev = 0;
	if (v_get_int(c, obj, "revision", OPT, &rev))
		v_check_min(c, "revision", rev, 0);
}

static void default_controller_revision(struct vctx *c, struct ynode *obj)
{
	(void)c;
	v_default_int(obj, "revision", 0);
}

/* ValidateControllerRevisionUpdate: a revision's data never changes (a
 * rollback renumbers the revision instead). */
static void update_controller_revision(struct vctx *c, const struct ynode *obj,
				       const struct ynode *old)
{
	v_check_immutable(c, obj, old, "data");
}

/* ControllerRevision */
const struct kind_rules v_rules_controller_revision = {
    .kind = KIND_CONTROLLER_REVISION,
    .name = names_dns1123_subdomain,
    .check = check_controller_revision,
    .defaults = default_controller_revision,
    .update = update_controller_revision,
};
