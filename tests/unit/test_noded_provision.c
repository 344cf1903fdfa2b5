/* test_noded_provision.c: which local-path volume folders corral-noded
 * makes and removes (noded/provision.c): only pvc-* folders of this node
 * directly inside its volumes folder; made while the volume lives,
 * removed when a Delete volume is released, being deleted or deleted. */
#include "testlib.h"

#include "provision.h"
#include "util.h"

static struct ynode *pv(const char *name, const char *node, const char *path, const char *policy,
			const char *extra)
{
	cleanup_free char *text =
	    xasprintf("metadata: {name: %s, annotations: {pv.kubernetes.io/provisioned-by: "
		      "corral.io/local-path}}\n"
		      "spec:\n  hostPath: {path: %s}\n  persistentVolumeReclaimPolicy: %s\n"
		      "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: "
		      "[{key: kubernetes.io/hostname, operator: In, values: [%s]}]}]}}\n%s",
		      name, path, policy, node, extra);
	return y(text);
}

static void test_provision__folder_of_this_node_only(void **state)
{
	(void)state;
	struct ynode *v = pv("pvc-1", "a", "/v/pvc-1", "Delete", "");
	cleanup_free char *f = provision_folder(v, "a", "/v");
	assert_string_equal(f, "/v/pvc-1");
	assert_null(provision_folder(v, "b", "/v"));
	assert_null(provision_folder(v, "a", "/w"));
	ynode_free(v);
	/* a path elsewhere, a name not pvc-*, another provisioner: never */
	v = pv("pvc-1", "a", "/etc", "Delete", "");
	assert_null(provision_folder(v, "a", "/v"));
	ynode_free(v);
	v = pv("data", "a", "/v/data", "Delete", "");
	assert_null(provision_folder(v, "a", "/v"));
	ynode_free(v);
	v = y("{metadata: {name: pvc-1}, spec: {hostPath: {path: /v/pvc-1}}}");
	assert_null(provision_folder(v, "a", "/v"));
	ynode_free(v);
}

static void test_provision__decide(void **state)
{
	(void)state;
	struct ynode *v = pv("pvc-1", "a", "/v/pvc-1", "Delete", "status: {phase: Bound}\n");
	assert_int_equal(provision_decide(v, false), PROVISION_CREATE);
	assert_int_equal(provision_decide(v, true), PROVISION_REMOVE);
	ynode_free(v);
	v = pv("pvc-1", "a", "/v/pvc-1", "Delete", "status: {phase: Released}\n");
	assert_int_equal(provision_decide(v, false), PROVISION_REMOVE);
	ynode_free(v);
	v = pv("pvc-1", "a", "/v/pvc-1", "Retain", "status: {phase: Released}\n");
	assert_int_equal(provision_decide(v, false), PROVISION_NOTHING);
	assert_int_equal(provision_decide(v, true), PROVISION_NOTHING);
	ynode_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_provision__folder_of_this_node_only),
	    cmocka_unit_test(test_provision__decide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
