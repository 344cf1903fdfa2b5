/* test_noded_static.c: static pods as the kubelet makes them from a
 * manifest (noded/static.h): name NAME-NODE, namespace default, bound to
 * the node, a uid that follows the manifest, the config annotations; what
 * is not a Pod refused with the reason; Pods found in PodLists and Lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "error.h"
#include "static.h"
#include "util.h"
#include "ynode.h"

static struct ynode *parse(const char *text)
{
	struct ynode *doc = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &doc, NULL), 0);
	return doc;
}

#define WEB                                                                                        \
	"apiVersion: v1\nkind: Pod\nmetadata: {name: Web, uid: x, resourceVersion: '4'}\n"         \
	"spec: {containers: [{name: c, image: busybox}]}\nstatus: {phase: Running}\n"

static void test_static_pod_build__names_binds_and_annotates(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *m = parse(WEB);
	cleanup_ynode struct ynode *p =
	    static_pod_build(m, "node-1", "file", "/etc/corral/manifests/web.yaml", 0, NULL);
	assert_non_null(p);
	assert_string_equal(ynode_path_str(p, "metadata.name"), "web-node-1");
	assert_string_equal(ynode_path_str(p, "metadata.namespace"), "default");
	assert_string_equal(ynode_path_str(p, "spec.nodeName"), "node-1");
	assert_null(ynode_path(p, "status"));
	assert_null(ynode_path(p, "metadata.resourceVersion"));
	const char *uid = ynode_path_str(p, "metadata.uid");
	assert_non_null(uid);
	assert_int_equal(strlen(uid), 32);
	const struct ynode *ann = ynode_path(p, "metadata.annotations");
	assert_string_equal(ynode_str(ynode_get(ann, "kubernetes.io/config.source")), "file");
	assert_string_equal(ynode_str(ynode_get(ann, "kubernetes.io/config.hash")), uid);
	assert_string_equal(ynode_str(ynode_get(ann, "kubernetes.io/config.seen")),
			    "1970-01-01T00:00:00Z");
}

static void test_static_pod_build__uid_follows_the_manifest_node_and_source(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *m = parse(WEB);
	cleanup_ynode struct ynode *m2 =
	    parse("apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: kube-system}\n"
		  "spec: {containers: [{name: c, image: busybox:1.36}]}\n");
	cleanup_ynode struct ynode *a = static_pod_build(m, "n", "file", "/m/web.yaml", 1, NULL);
	cleanup_ynode struct ynode *b = static_pod_build(m, "n", "file", "/m/web.yaml", 99, NULL);
	cleanup_ynode struct ynode *c = static_pod_build(m, "o", "file", "/m/web.yaml", 1, NULL);
	cleanup_ynode struct ynode *d = static_pod_build(m, "n", "http", "/m/web.yaml", 1, NULL);
	cleanup_ynode struct ynode *e = static_pod_build(m2, "n", "file", "/m/web.yaml", 1, NULL);
	const char *ua = ynode_path_str(a, "metadata.uid");
	assert_string_equal(ua, ynode_path_str(b, "metadata.uid")); /* not the time */
	assert_string_not_equal(ua, ynode_path_str(c, "metadata.uid"));
	assert_string_not_equal(ua, ynode_path_str(d, "metadata.uid"));
	assert_string_not_equal(ua, ynode_path_str(e, "metadata.uid"));
	assert_string_equal(ynode_path_str(e, "metadata.namespace"), "kube-system");
	/* the same pod as a PodList's item (no apiVersion, kind, other order) */
	cleanup_ynode struct ynode *item =
	    parse("spec: {containers: [{image: busybox, name: c}]}\n"
		  "metadata: {resourceVersion: '4', uid: x, name: Web}\n");
	cleanup_ynode struct ynode *f = static_pod_build(item, "n", "file", "/m/web.yaml", 1, NULL);
	assert_string_equal(ua, ynode_path_str(f, "metadata.uid"));
}

static void test_static_pod_build__refuses_what_is_not_a_pod(void **state)
{
	(void)state;
	static const struct {
		const char *text, *why;
	} cases[] = {
	    {"apiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
	     "kind Service: a static pod must be a Pod"},
	    {"apiVersion: apps/v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n",
	     "apiVersion apps/v1: a static pod is v1"},
	    {"kind: Pod\nspec: {containers: []}\n", "metadata.name: Required value"},
	    {"kind: Pod\nmetadata: {name: x}\n", "spec.containers: Required value"},
	    {"kind: Pod\nmetadata: {name: x_y}\nspec: {containers: []}\n", "metadata.name"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_ynode struct ynode *m = parse(cases[i].text);
		struct error *err = NULL;
		assert_null(static_pod_build(m, "n", "file", "/m/x.yaml", 0, &err));
		assert_non_null(err);
		assert_non_null(strstr(err->msg, cases[i].why));
		error_free(err);
	}
}

static void test_static_pods_of__pods_lists_and_others(void **state)
{
	(void)state;
	const struct ynode *out[4];
	cleanup_ynode struct ynode *pod = parse(WEB);
	assert_int_equal(static_pods_of(pod, out, 4), 1);
	assert_ptr_equal(out[0], pod);
	cleanup_ynode struct ynode *list =
	    parse("apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n"
		  "- {kind: Pod, metadata: {name: b}}\n- {kind: Service, metadata: {name: s}}\n");
	assert_int_equal(static_pods_of(list, out, 4), 2);
	assert_string_equal(ynode_path_str(out[1], "metadata.name"), "b");
	cleanup_ynode struct ynode *other = parse("kind: ConfigMap\n");
	assert_int_equal(static_pods_of(other, out, 4), 0);
	assert_int_equal(static_pods_of(list, out, 1), 1); /* at most max */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_static_pod_build__names_binds_and_annotates),
	    cmocka_unit_test(test_static_pod_build__uid_follows_the_manifest_node_and_source),
	    cmocka_unit_test(test_static_pod_build__refuses_what_is_not_a_pod),
	    cmocka_unit_test(test_static_pods_of__pods_lists_and_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
