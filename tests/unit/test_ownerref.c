/* test_ownerref.c: owner references: the controller reference (the one
 * with controller: true, any spelling of true, never a plain owner), new
 * references, adding and removing by uid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "ownerref.h"

static struct ynode *parse(const char *text)
{
	struct ynode *n = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &n, NULL), 0);
	return n;
}

static void test_ownerref__controller(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *o =
	    parse("metadata:\n  ownerReferences:\n"
		  "  - {kind: ConfigMap, name: c, uid: U0}\n"
		  "  - {kind: Job, name: j, uid: U1, controller: false}\n"
		  "  - {kind: ReplicaSet, name: rs, uid: U2, controller: true}\n");
	const struct ynode *ref = ownerref_controller(o);
	assert_non_null(ref);
	assert_string_equal(ynode_str(ynode_get(ref, "uid")), "U2");
	cleanup_ynode struct ynode *quoted = parse("metadata:\n  ownerReferences:\n  - {kind: Job, "
						   "name: j, uid: U1, controller: \"true\"}\n");
	assert_null(ownerref_controller(quoted)); /* a string is no bool */
	cleanup_ynode struct ynode *none = parse("metadata: {name: x}\n");
	assert_null(ownerref_controller(none));
	cleanup_ynode struct ynode *junk = parse("metadata: {ownerReferences: 3}\n");
	assert_null(ownerref_controller(junk));
	assert_null(ownerref_controller(NULL));
}

static void test_ownerref__add_and_remove(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *o = ynode_new_map();
	ownerref_add(o, ownerref_new("v1", "ConfigMap", "c", "U0", false));
	assert_null(ownerref_controller(o));
	const struct ynode *plain = ynode_path(o, "metadata.ownerReferences[0]");
	assert_null(ynode_get(plain, "controller"));
	assert_null(ynode_get(plain, "blockOwnerDeletion"));
	ownerref_add(o, ownerref_new("apps/v1", "ReplicaSet", "rs", "U1", true));
	const struct ynode *ref = ownerref_controller(o);
	assert_non_null(ref);
	assert_string_equal(ynode_str(ynode_get(ref, "apiVersion")), "apps/v1");
	assert_string_equal(ynode_str(ynode_get(ref, "kind")), "ReplicaSet");
	assert_string_equal(ynode_str(ynode_get(ref, "name")), "rs");
	bool b = false;
	assert_int_equal(ynode_bool(ynode_get(ref, "blockOwnerDeletion"), &b), 0);
	assert_true(b);
	assert_int_equal(ownerref_remove(o, "U1"), 1);
	assert_null(ownerref_controller(o));
	assert_int_equal(ownerref_remove(o, "U1"), 0);
	assert_int_equal(ownerref_remove(o, "U0"), 1);
	assert_null(ynode_path(o, "metadata.ownerReferences"));
	assert_int_equal(ownerref_remove(o, "U0"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ownerref__controller),
	    cmocka_unit_test(test_ownerref__add_and_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
