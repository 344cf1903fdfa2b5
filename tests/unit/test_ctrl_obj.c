/* test_ctrl_obj.c: the controllers' object helpers: times, keys and paths,
 * owner references, generated names, pod readiness, and the string map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keymap.h"
#include "obj.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static void test_obj__times(void **state)
{
	(void)state;
	assert_int_equal(obj_time_parse("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(obj_time_parse("2026-01-01T00:00:00Z"), 1767225600);
	assert_int_equal(obj_time_parse("2026-01-01T00:00:00.123456Z"), 1767225600);
	assert_int_equal(obj_time_parse("2026-01-01T02:00:00+02:00"), 1767225600);
	assert_int_equal(obj_time_parse("2026-01-01"), -1);
	assert_int_equal(obj_time_parse("2026-01-01T00:00:00"), -1);
	assert_int_equal(obj_time_parse(NULL), -1);
	char buf[32];
	obj_time_format(1767225600, buf);
	assert_string_equal(buf, "2026-01-01T00:00:00Z");
}

static void test_obj__keys_and_paths(void **state)
{
	(void)state;
	cleanup_free char *k = obj_key("dev", "web");
	assert_string_equal(k, "dev/web");
	cleanup_free char *c = obj_key(NULL, "n1");
	assert_string_equal(c, "n1");
	char ns[16];
	assert_string_equal(obj_key_split("dev/web", ns, sizeof(ns)), "web");
	assert_string_equal(ns, "dev");
	assert_null(obj_key_split("n1", ns, sizeof(ns)));
	cleanup_free char *p1 = obj_path("pods", "dev", "web");
	cleanup_free char *p2 = obj_path("nodes", NULL, "n1");
	cleanup_free char *p3 = obj_path("namespaces", NULL, "dev");
	assert_string_equal(p1, "namespaces/dev/pods/web.yaml");
	assert_string_equal(p2, "nodes/n1.yaml");
	assert_string_equal(p3, "namespaces/dev.yaml");
}

static void test_obj__owner_references(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *o = y("{metadata: {name: p}}");
	assert_null(obj_controller_ref(o));
	obj_add_owner_ref(o, obj_owner_ref_new("v1", "ConfigMap", "c", "U0", false));
	assert_null(obj_controller_ref(o));
	obj_add_owner_ref(o, obj_owner_ref_new("apps/v1", "ReplicaSet", "rs", "U1", true));
	const struct ynode *ref = obj_controller_ref(o);
	assert_non_null(ref);
	assert_string_equal(ynode_str(ynode_get(ref, "uid")), "U1");
	assert_string_equal(ynode_str(ynode_get(ref, "controller")), "true");
	assert_string_equal(ynode_str(ynode_get(ref, "blockOwnerDeletion")), "true");
	assert_int_equal(obj_remove_owner_refs(o, "U1"), 1);
	assert_null(obj_controller_ref(o));
	assert_int_equal(obj_remove_owner_refs(o, "U1"), 0);
	assert_int_equal(obj_remove_owner_refs(o, "U0"), 1);
	assert_null(ynode_path(o, "metadata.ownerReferences"));
}

static void test_obj__readiness(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *ready =
	    y("{status: {phase: Running, conditions: [{type: PodScheduled, status: 'True'}, "
	      "{type: Ready, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z'}]}}");
	cleanup_ynode struct ynode *not_ready =
	    y("{status: {conditions: [{type: Ready, status: 'False'}]}}");
	cleanup_ynode struct ynode *failed = y("{status: {phase: Failed}}");
	cleanup_ynode struct ynode *deleting =
	    y("{metadata: {deletionTimestamp: '2026-01-01T00:00:00Z'}}");
	int64_t since = 0, wait = 0;
	assert_true(pod_is_ready(ready, &since));
	assert_int_equal(since, 1767225600);
	assert_false(pod_is_ready(not_ready, NULL));
	assert_true(pod_is_available(ready, 0, 0, NULL));
	assert_false(pod_is_available(ready, 60, 1767225600 + 10, &wait));
	assert_int_equal(wait, 50);
	assert_true(pod_is_available(ready, 60, 1767225600 + 60, NULL));
	assert_true(pod_is_active(ready));
	assert_false(pod_is_active(failed));
	assert_false(pod_is_active(deleting));
}

static void test_obj__generated_names(void **state)
{
	(void)state;
	cleanup_free char *a = obj_generate_name("web-");
	assert_int_equal(strlen(a), 9);
	for (const char *c = a + 4; *c; c++)
		assert_non_null(strchr(CTRL_NAME_ALPHABET, *c));
	char buf[6];
	obj_random_suffix(buf, 5);
	assert_int_equal(strlen(buf), 5);
}

static void test_obj__annotations_and_numbers(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *o =
	    y("{metadata: {annotations: {corral.io/orphan: 'true', n: '42', "
	      "f: 'false'}, labels: {app: web}}, spec: {replicas: 3}}");
	assert_true(obj_annotation_true(o, CTRL_ORPHAN_ANNOTATION));
	assert_false(obj_annotation_true(o, "f"));
	assert_false(obj_annotation_true(o, "missing"));
	assert_int_equal(obj_int(o, "metadata.annotations.n", -1), 42);
	assert_int_equal(obj_int(o, "spec.replicas", -1), 3);
	assert_int_equal(obj_int(o, "spec.nothing", -7), -7);
	assert_string_equal(obj_label(o, "app"), "web");
	assert_int_equal(obj_rv_num("12345"), 12345);
	assert_int_equal(obj_rv_num(NULL), 0);
	cleanup_ynode struct ynode *want = y("{app: web}");
	assert_true(labels_contain(ynode_path(o, "metadata.labels"), want));
	cleanup_ynode struct ynode *more = y("{app: web, tier: x}");
	assert_false(labels_contain(ynode_path(o, "metadata.labels"), more));
}

static int freed;
static void count_free(void *p)
{
	freed++;
	free(p);
}

static void test_keymap__set_get_delete_iterate(void **state)
{
	(void)state;
	freed = 0;
	struct keymap *m = keymap_new(count_free);
	char key[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		keymap_set(m, key, xasprintf("v%d", i));
	}
	assert_int_equal(keymap_count(m), 1000);
	assert_string_equal(keymap_get(m, "k999"), "v999");
	keymap_set(m, "k1", xstrdup("again"));
	assert_int_equal(freed, 1);
	assert_string_equal(keymap_get(m, "k1"), "again");
	assert_true(keymap_del(m, "k2"));
	assert_false(keymap_del(m, "k2"));
	assert_false(keymap_has(m, "k2"));
	char *v = keymap_take(m, "k3");
	assert_string_equal(v, "v3");
	free(v);
	size_t n = 0;
	const char *k;
	for (size_t i = 0; keymap_next(m, &i, &k, NULL);)
		n++;
	assert_int_equal(n, 998);
	keymap_free(m);
	assert_int_equal(freed, 1 + 1 + 998);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_obj__times),
	    cmocka_unit_test(test_obj__keys_and_paths),
	    cmocka_unit_test(test_obj__owner_references),
	    cmocka_unit_test(test_obj__readiness),
	    cmocka_unit_test(test_obj__generated_names),
	    cmocka_unit_test(test_obj__annotations_and_numbers),
	    cmocka_unit_test(test_keymap__set_get_delete_iterate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
