/* kinds_coordination.c: the rules of the coordination.k8s.io API group's
 * kind, Lease (what corral's daemons use for leader election). */
#include "names.h"
#include "validate_impl.h"

/* ---- Lease -------------------------------------------------------------- */

static void check_lease(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	v_get_str(c, spec, "holderIdentity", OPT);
	long long v = 0;
	if (v_get_i32(c, spec, "leaseDurationSeconds", OPT, &v))
		v_check_min(c, "leaseDurationSeconds", v, 1);
	v_get_i32_min(c, spec, "leaseTransitions", 0, NULL);
	v_get_str(c, spec, "acquireTime", OPT);
	v_get_str(c, spec, "renewTime", OPT);
	v_path_pop(c, mark);
}

/* Lease */
const struct kind_rules v_rules_lease = {
    .kind = KIND_LEASE,
    .name = names_dns1123_subdomain,
    .check = check_lease,
};
