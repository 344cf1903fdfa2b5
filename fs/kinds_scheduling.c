/* kinds_scheduling.c: the rules of the scheduling.k8s.io API group's kind,
 * the cluster-scoped PriorityClass, and the pure part of the Priority
 * admission plugin: the value and preemption policy a new pod gets from its
 * class (kinds_scheduling.h). */
#include "kinds_scheduling.h"
#include "names.h"
#include "util.h"
#include "validate_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SYSTEM_PREFIX "system-"

/* The classes Kubernetes reserves (scheduling/v1 SystemPriorityClasses). */
static const struct {
	const char *name;
	int32_t value;
} system_classes[] = {
    {"system-node-critical", 2000001000},
    {"system-cluster-critical", 2000000000},
};

static const char *const preemption_policies[] = {"PreemptLowerPriority", "Never", NULL};

/* Kubernetes' IsKnownSystemPriorityClass: NULL when name is a system class
 * written as the system has it, else why not. */
static char *system_class_mismatch(const char *name, long long value, bool global)
{
	for (size_t i = 0; i < ARRAY_SIZE(system_classes); i++) {
		if (strcmp(system_classes[i].name, name) != 0)
			continue;
		if (value != system_classes[i].value)
			return xasprintf("value of %s PriorityClass must be %d", name,
					 (int)system_classes[i].value);
		if (global)
			return xasprintf("globalDefault of %s PriorityClass must be false", name);
		return NULL;
	}
	return xasprintf("%s is not a known system priority class", name);
}

static void check_priority_class(struct vctx *c, struct ynode *obj)
{
	long long value = 0;
	bool global = false;
	bool has_value = v_get_i32(c, obj, "value", REQ, &value);
	v_get_bool(c, obj, "globalDefault", OPT, &global);
	v_get_str(c, obj, "description", OPT);
	const char *name = ynode_path_str(obj, "metadata.name");
	if (name && !strncmp(name, SYSTEM_PREFIX, strlen(SYSTEM_PREFIX))) {
		cleanup_free char *why = system_class_mismatch(name, value, global);
		if (why)
			v_err_forbidden(c, "metadata.name",
					"priority class names with '" SYSTEM_PREFIX
					"' prefix are reserved for system use only. error: %s",
					why);
	} else if (has_value && value > PRIORITY_USER_MAX) {
		v_err_forbidden(c, "value",
				"maximum allowed value of a user defined priority is %d",
				PRIORITY_USER_MAX);
	}
	const char *policy = v_get_str(c, obj, "preemptionPolicy", OPT);
	if (policy && !*policy)
		v_err_required(c, "preemptionPolicy", NULL);
	else if (policy && !v_in_list(policy, preemption_policies))
		v_err_unsupported(c, "preemptionPolicy", policy, preemption_policies);
}

static void default_priority_class(struct vctx *c, struct ynode *obj)
{
	(void)c;
	v_default_str(obj, "preemptionPolicy", PRIORITY_POLICY_DEFAULT);
}

/* A class's value and policy are what its pods were given: both are fixed. */
static void update_priority_class(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	long long a = 0, b = 0;
	bool ha = v_scalar_int(ynode_get(obj, "value"), &a);
	bool hb = v_scalar_int(ynode_get(old, "value"), &b);
	if (ha != hb || a != b)
		v_err_forbidden(c, "value", "may not be changed in an update.");
	v_check_immutable(c, obj, old, "preemptionPolicy");
}

const struct kind_rules v_rules_priority_class = {
    .kind = KIND_PRIORITY_CLASS,
    .name = names_dns1123_subdomain,
    .check = check_priority_class,
    .defaults = default_priority_class,
    .update = update_priority_class,
};

/* ---- a pod's priority --------------------------------------------------- */

static bool class_value(const struct ynode *pc, int32_t *out)
{
	long long v = 0;
	if (ynode_int(ynode_get(pc, "value"), &v) != 0 || v > INT32_MAX || v < INT32_MIN)
		return false;
	*out = (int32_t)v;
	return true;
}

static const char *class_policy(const struct ynode *pc)
{
	const char *p = ynode_str(ynode_get(pc, "preemptionPolicy"));
	return p && *p ? p : PRIORITY_POLICY_DEFAULT;
}

static bool class_is_default(const struct ynode *pc)
{
	bool b = false;
	return ynode_bool(ynode_get(pc, "globalDefault"), &b) == 0 && b;
}

int priority_resolve(const struct ynode *pod_spec, const struct ynode *const *classes, size_t n,
		     struct priority_resolved *out, struct error **err)
{
	*out = (struct priority_resolved){.value = 0, .policy = PRIORITY_POLICY_DEFAULT};
	const char *want = ynode_str(ynode_get(pod_spec, "priorityClassName"));
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		const struct ynode *pc = classes[i];
		int32_t v = 0;
		if (!pc || pc->type != YNODE_MAP || !class_value(pc, &v))
			continue;
		const char *name = ynode_path_str(pc, "metadata.name");
		bool pick = want && *want ? name && !strcmp(name, want)
					  : class_is_default(pc) && (!found || v < out->value);
		if (!pick)
			continue;
		*out = (struct priority_resolved){
		    .class_name = name, .value = v, .policy = class_policy(pc)};
		found = true;
		if (want && *want)
			break;
	}
	for (size_t i = 0; !found && want && *want && i < ARRAY_SIZE(system_classes); i++) {
		if (strcmp(system_classes[i].name, want) != 0)
			continue;
		*out = (struct priority_resolved){.class_name = system_classes[i].name,
						  .value = system_classes[i].value,
						  .policy = PRIORITY_POLICY_DEFAULT};
		found = true;
	}
	if (want && *want && !found)
		return error_set(err, EINVAL, "no PriorityClass with name %s was found", want);

	long long given = 0;
	const struct ynode *pn = ynode_get(pod_spec, "priority");
	if (!ynode_is_null(pn) && (ynode_int(pn, &given) != 0 || given != out->value))
		return error_set(
		    err, EINVAL,
		    "the integer value of priority (%s) must not be provided in pod spec; priority "
		    "admission controller computed %d from the given PriorityClass name",
		    ynode_str(pn) ? ynode_str(pn) : "?", (int)out->value);
	const char *policy = ynode_str(ynode_get(pod_spec, "preemptionPolicy"));
	if (policy && *policy && strcmp(policy, out->policy) != 0)
		return error_set(
		    err, EINVAL,
		    "the string value of PreemptionPolicy (%s) must not be provided in pod spec; "
		    "priority admission controller computed %s from the given PriorityClass name",
		    policy, out->policy);
	return 0;
}

bool priority_carry(struct ynode *pod, const struct ynode *old)
{
	static const char *const admitted[] = {"priority", "preemptionPolicy", "priorityClassName"};
	struct ynode *spec = ynode_get(pod, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	bool changed = false;
	if (!spec || spec->type != YNODE_MAP || !os || os->type != YNODE_MAP)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(admitted); i++) {
		const struct ynode *was = ynode_get(os, admitted[i]);
		if (v_node_empty(ynode_get(spec, admitted[i])) && !v_node_empty(was)) {
			ynode_set(spec, admitted[i], ynode_clone(was));
			changed = true;
		}
	}
	return changed;
}
