/* kinds_storage.c: the rules of the storage.k8s.io API group's kind, the
 * cluster-scoped StorageClass, as Kubernetes' ValidateStorageClass and
 * ValidateStorageClassUpdate have them: a provisioner, parameters,
 * reclaimPolicy Delete or Retain (default Delete), volumeBindingMode
 * Immediate or WaitForFirstConsumer (default Immediate), and
 * allowVolumeExpansion; provisioner, parameters, reclaimPolicy and
 * volumeBindingMode are fixed once the class exists. Which class a claim
 * gets is the write path's (storage.c), not these rules'. */
#include "names.h"
#include "util.h"
#include "validate_impl.h"

#include <string.h>

#define STORAGE_PARAMETERS_MAX	   512
#define STORAGE_PARAMETERS_LEN_MAX (256 * 1024)

static const char *const sc_reclaim_policies[] = {"Delete", "Retain", NULL};
static const char *const sc_binding_modes[] = {"Immediate", "WaitForFirstConsumer", NULL};

static void check_provisioner(struct vctx *c, const struct ynode *obj)
{
	const char *p = v_get_str(c, obj, "provisioner", OPT);
	if (!p || !*p) {
		if (v_node_unset(ynode_get(obj, "provisioner")) || (p && !*p))
			v_err_required(c, "provisioner", NULL);
		return;
	}
	/* Kubernetes checks the lower-cased name as a qualified name. */
	cleanup_free char *lower = xstrdup(p);
	for (char *s = lower; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
	struct error *e = NULL;
	if (names_qualified_name(lower, &e) < 0) {
		v_err_invalid_str(c, "provisioner", p, "%s", e ? e->msg : "not a qualified name");
		error_free(e);
	}
}

static void check_parameters(struct vctx *c, const struct ynode *obj)
{
	struct ynode *params = v_get_map(c, obj, "parameters", OPT);
	if (!params)
		return;
	size_t total = 0;
	for (size_t i = 0; i < params->n; i++) {
		const char *k = ynode_str(ynode_map_key(params, i));
		const struct ynode *v = ynode_map_val(params, i);
		if (!k || !*k)
			v_err_invalid_str(c, "parameters", "", "field can not be empty.");
		if (v && v->type != YNODE_SCALAR) {
			v_err_invalid_node(c, "parameters", v, "must be a string");
			continue;
		}
		total += (k ? strlen(k) : 0) + (ynode_str(v) ? strlen(ynode_str(v)) : 0);
	}
	if (params->n > STORAGE_PARAMETERS_MAX)
		v_err_invalid_int(c, "parameters", (long long)params->n,
				  "can't have more than %d parameters", STORAGE_PARAMETERS_MAX);
	if (total > STORAGE_PARAMETERS_LEN_MAX)
		v_err_too_long(c, "parameters", STORAGE_PARAMETERS_LEN_MAX);
}

static void check_storage_class(struct vctx *c, struct ynode *obj)
{
	check_provisioner(c, obj);
	check_parameters(c, obj);
	v_get_enum(c, obj, "reclaimPolicy", OPT, sc_reclaim_policies);
	v_get_enum(c, obj, "volumeBindingMode", OPT, sc_binding_modes);
	bool b = false;
	v_get_bool(c, obj, "allowVolumeExpansion", OPT, &b);
	v_check_str_list(c, obj, "mountOptions", OPT, NULL);
	v_get_seq(c, obj, "allowedTopologies", OPT);
}

static void default_storage_class(struct vctx *c, struct ynode *obj)
{
	(void)c;
	v_default_str(obj, "reclaimPolicy", "Delete");
	v_default_str(obj, "volumeBindingMode", "Immediate");
}

static void update_storage_class(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	static const struct {
		const char *field, *why;
	} fixed[] = {
	    {"parameters", "updates to parameters are forbidden."},
	    {"provisioner", "updates to provisioner are forbidden."},
	    {"reclaimPolicy", "updates to reclaimPolicy are forbidden."},
	};
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		if (!v_tree_equal(ynode_get(obj, fixed[i].field), ynode_get(old, fixed[i].field)))
			v_err_forbidden(c, fixed[i].field, "%s", fixed[i].why);
	v_check_immutable(c, obj, old, "volumeBindingMode");
}

/* StorageClass */
const struct kind_rules v_rules_storage_class = {
    .kind = KIND_STORAGE_CLASS,
    .name = names_dns1123_subdomain,
    .check = check_storage_class,
    .defaults = default_storage_class,
    .update = update_storage_class,
};
