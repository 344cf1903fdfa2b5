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

static void test_bind_doc__binding_with_preconditions(void **state)
{
	(void)state;
	const struct sched_bind_pod p = {.key = "dev/web", .uid = "u1", .rv = "12"};
	size_t len = 0;
	cleanup_free char *text = sched_bind_document(&p, "n1", &len);
	assert_int_equal(len, strlen(text));
	cleanup_ynode struct ynode *doc = y(text);
	assert_string_equal(ynode_path_str(doc, "apiVersion"), "v1");
	assert_string_equal(ynode_path_str(doc, "kind"), "Binding");
	assert_string_equal(ynode_path_str(doc, "metadata.name"), "web");
	assert_string_equal(ynode_path_str(doc, "metadata.namespace"), "dev");
	assert_string_equal(ynode_path_str(doc, "metadata.uid"), "u1");
	assert_string_equal(ynode_path_str(doc, "metadata.resourceVersion"), "12");
	assert_string_equal(ynode_path_str(doc, "target.kind"), "Node");
	assert_string_equal(ynode_path_str(doc, "target.name"), "n1");
	/* Unknown preconditions are left out, not sent empty. */
	const struct sched_bind_pod q = {.key = "dev/web", .uid = "", .rv = NULL};
	cleanup_free char *bare = sched_bind_document(&q, "n1", NULL);
	cleanup_ynode struct ynode *bdoc = y(bare);
	assert_null(ynode_path(bdoc, "metadata.uid"));
	assert_null(ynode_path(bdoc, "metadata.resourceVersion"));
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
	cleanup_free char *text = yaml_emit(doc, NULL);
	assert_non_null(strstr(text, "lastProbeTime: null"));
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
	f->last.rv = NULL;
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

static void put_pod(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static const struct sched_bind_pod web = {.key = "dev/web", .uid = "u1", .rv = "12"};

static void test_bind_workers__write_the_file(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/web.yaml", f->dir);
	put_pod(path, POD);
	sched_binder_bind(f->b, &web, "n1");
	until_results(f, 1);
	assert_int_equal(f->last.status, 0);
	assert_int_equal(f->last.what, SCHED_WRITE_BIND);
	assert_int_equal(sched_binder_pending(f->b), 0);
	size_t len;
	cleanup_free char *text = util_read_file(path, &len);
	cleanup_ynode struct ynode *doc = y(text);
	/* A plain folder keeps what was written: the Binding itself. */
	assert_string_equal(ynode_path_str(doc, "kind"), "Binding");
	assert_string_equal(ynode_path_str(doc, "target.name"), "n1");
	assert_string_equal(ynode_path_str(doc, "metadata.resourceVersion"), "12");
	/* The status write reads the pod afresh and writes it back whole. */
	put_pod(path, POD);
	sched_binder_status(f->b, &web, "Unschedulable", "0/1 nodes are available.");
	until_results(f, 2);
	assert_int_equal(f->last.what, SCHED_WRITE_STATUS);
	assert_int_equal(f->last.status, 0);
	cleanup_free char *text2 = util_read_file(path, &len);
	cleanup_ynode struct ynode *doc2 = y(text2);
	assert_string_equal(ynode_path_str(doc2, "kind"), "Pod");
	assert_true(
	    sched_bind_condition_is(doc2, "False", "Unschedulable", "0/1 nodes are available."));
}

static void test_bind_workers__status_of_a_changed_pod_is_a_conflict(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/web.yaml", f->dir);
	put_pod(path, POD);
	const struct sched_bind_pod older = {.key = "dev/web", .uid = "u1", .rv = "11"};
	sched_binder_status(f->b, &older, "Unschedulable", "m");
	until_results(f, 1);
	assert_int_equal(f->last.status, EAGAIN);
	size_t len;
	cleanup_free char *text = util_read_file(path, &len);
	assert_string_equal(text, POD); /* untouched */
	const struct sched_bind_pod other = {.key = "dev/web", .uid = "u2", .rv = "12"};
	sched_binder_status(f->b, &other, "Unschedulable", "m");
	until_results(f, 2);
	assert_int_equal(f->last.status, EAGAIN);
}

static void test_bind_workers__never_create_a_pod(void **state)
{
	struct fixture *f = *state;
	const struct sched_bind_pod gone = {.key = "dev/gone", .uid = "u1", .rv = "12"};
	sched_binder_bind(f->b, &gone, "n1");
	until_results(f, 1);
	assert_int_equal(f->last.status, ENOENT);
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/gone.yaml", f->dir);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bind_doc__binding_with_preconditions),
	    cmocka_unit_test(test_bind_doc__unschedulable_condition_updates_in_place),
	    cmocka_unit_test_setup_teardown(test_bind_workers__write_the_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_bind_workers__status_of_a_changed_pod_is_a_conflict, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bind_workers__never_create_a_pod, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
