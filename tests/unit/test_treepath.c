/* test_treepath.c: object paths and store keys, both ways: a namespaced
 * object, a cluster-scoped one, a Namespace, and what is no object's path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "treepath.h"
#include "util.h"

static void test_treepath__builds(void **state)
{
	(void)state;
	cleanup_free char *p1 = treepath_object("pods", "dev", "web");
	cleanup_free char *p2 = treepath_object("nodes", NULL, "n1");
	cleanup_free char *p3 = treepath_object("namespaces", NULL, "dev");
	cleanup_free char *p4 = treepath_object("persistentvolumes", "", "pv");
	cleanup_free char *k1 = treepath_key("pods", "dev", "web");
	cleanup_free char *k3 = treepath_key("namespaces", "ignored", "dev");
	assert_string_equal(p1, "namespaces/dev/pods/web.yaml");
	assert_string_equal(p2, "nodes/n1.yaml");
	assert_string_equal(p3, "namespaces/dev.yaml");
	assert_string_equal(p4, "persistentvolumes/pv.yaml");
	assert_string_equal(k1, "namespaces/dev/pods/web");
	assert_string_equal(k3, "namespaces/dev");
	cleanup_free char *f1 = treepath_folder("leases", "kube-node-lease");
	cleanup_free char *f2 = treepath_folder(NULL, "dev");
	cleanup_free char *f3 = treepath_folder("nodes", NULL);
	cleanup_free char *f4 = treepath_folder("nodes", "");
	assert_string_equal(f1, "namespaces/kube-node-lease/leases");
	assert_string_equal(f2, "namespaces/dev");
	assert_string_equal(f3, "nodes");
	assert_string_equal(f4, "nodes");
}

static void parses(const char *path, bool key, const char *ns, const char *plural, const char *name)
{
	struct treepath tp;
	struct error *err = NULL;
	int rc = key ? treepath_parse_key(path, &tp, &err) : treepath_parse(path, &tp, &err);
	if (rc != 0)
		fail_msg("%s: %s", path, err ? err->msg : "?");
	if (ns)
		assert_string_equal(tp.ns, ns);
	else
		assert_null(tp.ns);
	assert_string_equal(tp.plural, plural);
	assert_string_equal(tp.name, name);
	/* and back */
	cleanup_free char *again =
	    key ? treepath_key(plural, ns, name) : treepath_object(plural, ns, name);
	assert_string_equal(again, path);
	treepath_clear(&tp);
	assert_null(tp.name);
}

static void refused(const char *path, bool key)
{
	struct treepath tp;
	cleanup_error struct error *err = NULL;
	int rc = key ? treepath_parse_key(path, &tp, &err) : treepath_parse(path, &tp, &err);
	if (rc != -EINVAL)
		fail_msg("%s taken for an object's path", path);
	assert_non_null(err);
	assert_null(tp.plural);
}

static void test_treepath__parses(void **state)
{
	(void)state;
	parses("namespaces/dev/pods/web", true, "dev", "pods", "web");
	parses("nodes/n1", true, NULL, "nodes", "n1");
	parses("namespaces/dev", true, NULL, "namespaces", "dev");
	parses("namespaces/dev/deployments/web.v2.yaml", false, "dev", "deployments", "web.v2");
	parses("storageclasses/fast.yaml", false, NULL, "storageclasses", "fast");
	parses("namespaces/kube-system.yaml", false, NULL, "namespaces", "kube-system");
	refused("", true);
	refused("pods", true);
	refused("namespaces/dev/pods", true);
	refused("namespaces/dev/pods/web/x", true);
	refused("other/dev/pods/web", true);
	refused("nodes//n1", true);
	refused("/nodes/n1", true);
	refused("nodes/n1/", true);
	refused("nodes/n1", false);			 /* no .yaml */
	refused("namespaces/dev/pods/#web.yaml", false); /* an editor's */
	refused("namespaces/dev/pods/.web.yaml.swp", false);
	refused("namespaces/dev/pods/.yaml", false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_treepath__builds),
	    cmocka_unit_test(test_treepath__parses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
