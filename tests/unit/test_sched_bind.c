/* test_sched_bind.c: the documents corral-sched writes (the binding, the
 * PodScheduled condition) and its write workers, against a plain folder
 * laid out as a mount. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bind.h"
#include "loop.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

#define POD                                                                                        \
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: dev\n  uid: u1\n"         \
	"  resourceVersion: '12'\nspec:\n  containers:\n  - image: busybox\n    name: c\n"

static void test_bind_doc__node_and_condition(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *doc = y(POD);
	sched_bind_set_node(doc, "n1", "2026-01-01T00:00:00Z");
	assert_string_equal(ynode_path_str(doc, "spec.nodeName"), "n1");
	assert_string_equal(ynode_path_str(doc, "metadata.resourceVersion"), "12");
	assert_true(sched_bind_condition_is(doc, "True", NULL, NULL));
	assert_string_equal(ynode_path_str(doc, "status.conditions[0].type"), "PodScheduled");
	assert_string_equal(ynode_path_str(doc, "status.conditions[0].lastTransitionTime"),
			    "2026-01-01T00:00:00Z");
	cleanup_free char *text = yaml_emit(doc, NULL);
	assert_non_null(strstr(text, "status: 'True'"));
	assert_non_null(strstr(text, "lastProbeTime: null"));
}

static void test_bind_doc__unschedulable_condition_updates_in_place(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *doc = y(POD "status:\n  conditions:\n  - type: Ready\n    "
						"status: 'False'\n");
	assert_false(sched_bind_condition_is(doc, "False", "Unschedulable", "m1"));
	sched_bind_set_condition(doc, "False", "Unschedulable", "m1", "2026-01-01T00:00:00Z");
	assert_true(sched_bind_condition_is(doc, "False", "Unschedulable", "m1"));
	assert_false(sched_bind_condition_is(doc, "False", "Unschedulable", "m2"));
	/* Another message: same condition, same transition time. */
	sched_bind_set_condition(doc, "False", "Unschedulable", "m2", "2026-01-02T00:00:00Z");
	const struct ynode *conds = ynode_path(doc, "status.conditions");
	assert_int_equal(conds->n, 2);
	assert_string_equal(ynode_path_str(doc, "status.conditions[0].type"), "Ready");
	assert_string_equal(ynode_path_str(doc, "status.conditions[1].message"), "m2");
	assert_string_equal(ynode_path_str(doc, "status.conditions[1].lastTransitionTime"),
			    "2026-01-01T00:00:00Z");
	/* Bound: the status turns, and the reason goes. */
	sched_bind_set_node(doc, "n1", "2026-01-03T00:00:00Z");
	assert_true(sched_bind_condition_is(doc, "True", NULL, NULL));
	assert_string_equal(ynode_path_str(doc, "status.conditions[1].lastTransitionTime"),
			    "2026-01-03T00:00:00Z");
	assert_null(ynode_path(doc, "status.conditions[1].reason"));
}

/* ---- the workers, on a plain folder ------------------------------------------ */

struct fixture {
	char dir[64];
	struct loop *loop;
	struct sched_binder *b;
	struct sched_write_result last;
	int results;
};

static void on_result(void *data, const struct sched_write_result *r)
{
	struct fixture *f = data;
	f->last = *r;
	f->last.key = NULL; /* freed after the callback */
	f->last.node = NULL;
	f->last.uid = NULL;
	f->results++;
}

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/test_sched_bind.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	cleanup_free char *pods = xasprintf("%s/namespaces/dev/pods", f->dir);
	assert_int_equal(util_mkdir_p(pods, 0755), 0);
	cleanup_error struct error *err = NULL;
	f->loop = loop_new(&err);
	f->b = sched_binder_new(f->loop, f->dir, 4, on_result, f, &err);
	assert_non_null(f->b);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	sched_binder_free(f->b);
	loop_free(f->loop);
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void until_results(struct fixture *f, int n)
{
	while (f->results < n)
		assert_int_equal(loop_run_once(f->loop, -1, NULL), 0);
}

static void test_bind_workers__write_the_file(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/web.yaml", f->dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(POD, fp);
	fclose(fp);
	sched_binder_bind(f->b, "dev/web", y(POD), "n1", 0);
	until_results(f, 1);
	assert_int_equal(f->last.status, 0);
	assert_int_equal(f->last.what, SCHED_WRITE_BIND);
	assert_int_equal(sched_binder_pending(f->b), 0);
	size_t len;
	cleanup_free char *text = util_read_file(path, &len);
	cleanup_ynode struct ynode *doc = y(text);
	assert_string_equal(ynode_path_str(doc, "spec.nodeName"), "n1");
	assert_string_equal(ynode_path_str(doc, "metadata.resourceVersion"), "12");
	sched_binder_status(f->b, "dev/web", y(POD), "Unschedulable", "0/1 nodes are available.");
	until_results(f, 2);
	assert_int_equal(f->last.what, SCHED_WRITE_STATUS);
	assert_int_equal(f->last.status, 0);
}

static void test_bind_workers__never_create_a_pod(void **state)
{
	struct fixture *f = *state;
	sched_binder_bind(f->b, "dev/gone", y(POD), "n1", 0);
	until_results(f, 1);
	assert_int_equal(f->last.status, ENOENT);
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/gone.yaml", f->dir);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bind_doc__node_and_condition),
	    cmocka_unit_test(test_bind_doc__unschedulable_condition_updates_in_place),
	    cmocka_unit_test_setup_teardown(test_bind_workers__write_the_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bind_workers__never_create_a_pod, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
