/* test_fs_binding.c: a Binding written over a pod's file (binding.c),
 * through the write path against a temporary LMDB store: it binds an
 * unbound pod (spec.nodeName, PodScheduled=True) and nothing else changes;
 * a second binding, a stale uid or resourceVersion and a pod being deleted
 * are conflicts that leave the pod as it was; a Binding without a target
 * or for another pod is refused; one for a pod that is not there finds
 * nothing; a pod that merely mentions the word is written as a pod. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"
#include "kinds.h"
#include "store.h"
#include "testlib.h"
#include "util.h"
#include "write.h"
#include "ynode.h"

#define AUTHOR "test <test@localhost>"
#define POD                                                                                        \
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: dev\nspec:\n"             \
	"  containers:\n  - name: c\n    image: busybox\n"

#define fixture testlib_store_fixture

static const struct write_target web = {
    .ns = "dev", .name = "web", .key = "namespaces/dev/pods/web"};

static int setup(void **state)
{
	return testlib_store_setup(state, "corral-binding");
}

/* Writes text to dev/web; returns 0 or -errno, the error's text in msg. */
static int put(struct fixture *f, const char *text, char *msg, size_t msglen)
{
	struct write_target t = web;
	t.kind = kinds_by_kind("Pod");
	struct write_result res = {0};
	cleanup_error struct error *err = NULL;
	int r = write_object(f->s, NULL, &t, text, strlen(text), AUTHOR, &res, &err);
	if (msg)
		snprintf(msg, msglen, "%s", err ? err->msg : "");
	write_result_clear(&res);
	return r < 0 ? r : 0;
}

static struct ynode *stored(struct fixture *f)
{
	struct store_record rec = {0};
	cleanup_error struct error *err = NULL;
	assert_int_equal(store_get(f->s, web.key, &rec, &err), 0);
	struct ynode *doc = NULL;
	assert_int_equal(yaml_parse_one(rec.yaml, rec.len, &doc, NULL), 0);
	store_record_clear(&rec);
	return doc;
}

static char *binding(const char *extra_md, const char *node)
{
	return xasprintf("apiVersion: v1\nkind: Binding\nmetadata:\n  name: web\n%s"
			 "target:\n  kind: Node\n  name: %s\n",
			 extra_md, node);
}

static void test_binding__binds_an_unbound_pod(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put(f, POD, NULL, 0), 0);
	cleanup_ynode struct ynode *before = stored(f);
	const char *uid = ynode_path_str(before, "metadata.uid");
	const char *rv = ynode_path_str(before, "metadata.resourceVersion");
	cleanup_free char *md = xasprintf("  uid: %s\n  resourceVersion: '%s'\n", uid, rv);
	cleanup_free char *b = binding(md, "n1");
	assert_int_equal(put(f, b, NULL, 0), 0);
	cleanup_ynode struct ynode *after = stored(f);
	assert_string_equal(ynode_path_str(after, "kind"), "Pod");
	assert_string_equal(ynode_path_str(after, "spec.nodeName"), "n1");
	assert_string_equal(ynode_path_str(after, "metadata.uid"), uid);
	assert_string_not_equal(ynode_path_str(after, "metadata.resourceVersion"), rv);
	assert_string_equal(ynode_path_str(after, "spec.containers[0].image"), "busybox");
	assert_string_equal(ynode_path_str(after, "status.conditions[0].type"), "PodScheduled");
	assert_string_equal(ynode_path_str(after, "status.conditions[0].status"), "True");
}

static void test_binding__second_binding_is_a_conflict(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put(f, POD, NULL, 0), 0);
	cleanup_free char *b1 = binding("", "n1");
	cleanup_free char *b2 = binding("", "n2");
	assert_int_equal(put(f, b1, NULL, 0), 0);
	char msg[512];
	assert_int_equal(put(f, b2, msg, sizeof(msg)), -EAGAIN);
	assert_non_null(strstr(msg, "already assigned to node \"n1\""));
	cleanup_ynode struct ynode *after = stored(f);
	assert_string_equal(ynode_path_str(after, "spec.nodeName"), "n1");
}

static void test_binding__stale_preconditions_are_conflicts(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put(f, POD, NULL, 0), 0);
	cleanup_ynode struct ynode *before = stored(f);
	cleanup_free char *text = yaml_emit(before, NULL);
	char msg[512];
	cleanup_free char *b1 = binding("  uid: not-the-pod\n", "n1");
	assert_int_equal(put(f, b1, msg, sizeof(msg)), -EAGAIN);
	assert_non_null(strstr(msg, "Precondition failed: UID"));
	cleanup_free char *b2 = binding("  resourceVersion: '12345'\n", "n1");
	assert_int_equal(put(f, b2, msg, sizeof(msg)), -EAGAIN);
	assert_non_null(strstr(msg, "has been modified"));
	cleanup_ynode struct ynode *after = stored(f);
	cleanup_free char *text2 = yaml_emit(after, NULL);
	assert_string_equal(text, text2);
}

static void test_binding__refuses_bad_bindings(void **state)
{
	struct fixture *f = *state;
	char msg[512];
	cleanup_free char *b = binding("", "n1");
	assert_int_equal(put(f, b, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "not found"));
	assert_int_equal(put(f, POD, NULL, 0), 0);
	assert_int_equal(put(f,
			     "apiVersion: v1\nkind: Binding\nmetadata: {name: web}\n"
			     "target: {kind: Node}\n",
			     msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "target.name: Required value"));
	assert_int_equal(put(f,
			     "apiVersion: v1\nkind: Binding\nmetadata: {name: db}\n"
			     "target: {kind: Node, name: n1}\n",
			     msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "metadata.name"));
	cleanup_ynode struct ynode *after = stored(f);
	assert_null(ynode_path(after, "spec.nodeName"));
}

static void test_binding__a_pod_that_names_it_is_a_pod(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put(f,
			     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: "
			     "{note: Binding}\nspec:\n  containers:\n  - name: c\n    image: i\n",
			     NULL, 0),
			 0);
	cleanup_ynode struct ynode *after = stored(f);
	assert_string_equal(ynode_path_str(after, "metadata.annotations.note"), "Binding");
	assert_null(ynode_path(after, "spec.nodeName"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, testlib_store_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_binding__binds_an_unbound_pod),
	    T(test_binding__second_binding_is_a_conflict),
	    T(test_binding__stale_preconditions_are_conflicts),
	    T(test_binding__refuses_bad_bindings),
	    T(test_binding__a_pod_that_names_it_is_a_pod),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
