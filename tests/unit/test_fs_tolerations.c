/* test_fs_tolerations.c: the admission hook "default-toleration-seconds"
 * (fs/tolerations.c), Kubernetes' DefaultTolerationSeconds: a new pod gets
 * the not-ready and unreachable NoExecute tolerations with the configured
 * seconds unless it already tolerates the taint (a toleration with the key
 * or no key, effect NoExecute or none); an update is left alone but keeps
 * what the create was given; other kinds are not touched. */
#include "testlib.h"

#include "admission.h"
#include "kinds.h"
#include "tolerations.h"
#include "util.h"

static const struct ynode *tol(const struct ynode *pod, size_t i)
{
	const struct ynode *l = ynode_path(pod, "spec.tolerations");
	assert_non_null(l);
	assert_true(i < l->n);
	return ynode_item(l, i);
}

static size_t ntols(const struct ynode *pod)
{
	const struct ynode *l = ynode_path(pod, "spec.tolerations");
	return l && l->type == YNODE_SEQ ? l->n : 0;
}

static void test_tolerations__new_pod_gets_both_in_order(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *p = y("spec: {containers: [{name: a, image: b}]}");
	assert_true(tolerations_add_defaults(p, 300, 120));
	assert_int_equal(ntols(p), 2);
	assert_string_equal(str(tol(p, 0), "key"), "node.kubernetes.io/not-ready");
	assert_string_equal(str(tol(p, 0), "operator"), "Exists");
	assert_string_equal(str(tol(p, 0), "effect"), "NoExecute");
	assert_string_equal(str(tol(p, 0), "tolerationSeconds"), "300");
	assert_string_equal(str(tol(p, 1), "key"), "node.kubernetes.io/unreachable");
	assert_string_equal(str(tol(p, 1), "tolerationSeconds"), "120");
	/* a second pass adds nothing */
	assert_false(tolerations_add_defaults(p, 300, 120));
	assert_int_equal(ntols(p), 2);
}

static void test_tolerations__existing_ones_are_kept(void **state)
{
	(void)state;
	/* its own unreachable toleration (no effect: every effect) stays as it is */
	cleanup_ynode struct ynode *p =
	    y("spec: {tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, "
	      "tolerationSeconds: 6}]}");
	assert_true(tolerations_add_defaults(p, 300, 300));
	assert_int_equal(ntols(p), 2);
	assert_string_equal(str(tol(p, 0), "tolerationSeconds"), "6");
	assert_string_equal(str(tol(p, 1), "key"), "node.kubernetes.io/not-ready");

	/* an empty key with Exists tolerates everything */
	cleanup_ynode struct ynode *all = y("spec: {tolerations: [{operator: Exists}]}");
	assert_false(tolerations_add_defaults(all, 300, 300));
	/* a NoSchedule toleration of the key does not count */
	cleanup_ynode struct ynode *ns =
	    y("spec: {tolerations: [{key: node.kubernetes.io/not-ready, "
	      "operator: Exists, effect: NoSchedule}]}");
	assert_true(tolerations_add_defaults(ns, 300, 300));
	assert_int_equal(ntols(ns), 3);
}

static void test_tolerations__update_carries_what_the_create_got(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *old = y("spec: {containers: [{name: a}]}");
	tolerations_add_defaults(old, 30, 40);
	cleanup_ynode struct ynode *again = y("spec: {containers: [{name: a}]}");
	assert_true(tolerations_carry(again, old));
	assert_true(ynode_equal(ynode_path(again, "spec.tolerations"),
				ynode_path(old, "spec.tolerations")));
	assert_false(tolerations_carry(again, old));
}

static void test_tolerations__hook_admits_only_pod_creates(void **state)
{
	(void)state;
	void *h = tolerations_hook_init(&(struct admission_config){.not_ready_toleration_s = 7});
	void *claim = NULL;
	cleanup_ynode struct ynode *p = y("spec: {containers: [{name: a}]}");
	struct admission_request rq = {.kind = kinds_by_kind("Pod"), .obj = p};
	assert_int_equal(tolerations_hook_reserve(h, &rq, &claim, NULL), 0);
	assert_true(rq.changed);
	assert_string_equal(str(tol(p, 0), "tolerationSeconds"), "7");
	assert_string_equal(str(tol(p, 1), "tolerationSeconds"), "300"); /* 0: the default */

	cleanup_ynode struct ynode *u = y("spec: {containers: [{name: a}]}");
	struct admission_request up = {.kind = kinds_by_kind("Pod"), .obj = u, .old = p};
	assert_int_equal(tolerations_hook_reserve(h, &up, &claim, NULL), 0);
	assert_false(up.changed);
	assert_int_equal(ntols(u), 0);

	cleanup_ynode struct ynode *d = y("spec: {template: {spec: {}}}");
	struct admission_request dp = {.kind = kinds_by_kind("Deployment"), .obj = d};
	assert_int_equal(tolerations_hook_reserve(h, &dp, &claim, NULL), 0);
	assert_false(dp.changed);
	tolerations_hook_fini(h);

	/* the hook is in corral-fs's table, before service-addresses */
	size_t n, tl = 0, svc = 0;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(hooks[i].name, "default-toleration-seconds"))
			tl = i + 1;
		if (!strcmp(hooks[i].name, "service-addresses"))
			svc = i + 1;
	}
	assert_true(tl && svc && tl < svc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tolerations__new_pod_gets_both_in_order),
	    cmocka_unit_test(test_tolerations__existing_ones_are_kept),
	    cmocka_unit_test(test_tolerations__update_carries_what_the_create_got),
	    cmocka_unit_test(test_tolerations__hook_admits_only_pod_creates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
