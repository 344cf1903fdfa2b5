/* test_ctrl_expect.c: the machinery under the controllers, on a plain
 * folder laid out like the mount (no FUSE): the writer's jobs and their
 * done callbacks, the index of objects by controller, and expectations
 * that wait until an informer shows a write. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "expect.h"
#include "informer.h"
#include "loop.h"
#include "obj.h"
#include "owners.h"
#include "util.h"
#include "write.h"

struct fixture {
	char dir[64];
	struct loop *loop;
	struct informer *inf;
	struct writer *w;
};

static void put(struct fixture *f, const char *name, const char *extra_md)
{
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/%s.yaml", f->dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: dev\n%s", name,
		extra_md ? extra_md : "");
	fclose(fp);
}

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/test_ctrl_expect.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	cleanup_free char *pods = xasprintf("%s/namespaces/dev/pods", f->dir);
	assert_int_equal(util_mkdir_p(pods, 0755), 0);
	f->loop = loop_new(NULL);
	f->inf = informer_new(f->loop, f->dir, "pods", true);
	f->w = writer_new(f->loop, f->dir, 4, NULL);
	assert_non_null(f->w);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	writer_free(f->w);
	informer_free(f->inf);
	loop_free(f->loop);
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Runs the loop until *flag or about two seconds passed. */
static void run_until(struct fixture *f, bool (*cond)(void *), void *arg)
{
	for (int i = 0; i < 200 && !cond(arg); i++)
		loop_run_once(f->loop, 10, NULL);
}

struct visit {
	char names[8][32];
	int n;
};

static int collect(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	struct visit *v = data;
	if (v->n < 8)
		snprintf(v->names[v->n++], 32, "%s", obj_name(obj));
	return 0;
}

static bool has_owner_u1_two(void *arg)
{
	struct owners *o = arg;
	struct visit v = {0};
	owners_foreach_owned(o, "U1", collect, &v);
	return v.n == 2;
}

static const char *owned_u1 = "  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, "
			      "name: rs, uid: U1, controller: true}\n";

static void test_owners__index_follows_the_informer(void **state)
{
	struct fixture *f = *state;
	put(f, "a", owned_u1);
	put(f, "b", NULL);
	put(f, "c",
	    "  ownerReferences:\n  - {apiVersion: v1, kind: X, name: x, uid: U2, controller: "
	    "true}\n");
	struct owners *o = owners_new(f->inf);
	assert_int_equal(informer_start(f->inf, NULL), 0);
	struct visit v = {0};
	owners_foreach_owned(o, "U1", collect, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.names[0], "a");
	struct visit orph = {0};
	owners_foreach_orphan(o, "dev", collect, &orph);
	assert_int_equal(orph.n, 1);
	assert_string_equal(orph.names[0], "b");
	put(f, "b", owned_u1); /* adopted */
	run_until(f, has_owner_u1_two, o);
	assert_true(has_owner_u1_two(o));
	struct visit none = {0};
	owners_foreach_orphan(o, "dev", collect, &none);
	assert_int_equal(none.n, 0);
	owners_free(o);
}

struct ready_arg {
	struct expect *e;
};

static bool is_ready(void *arg)
{
	struct ready_arg *r = arg;
	return expect_ready(r->e, "dev/rs", loop_now_ms(), NULL);
}

static void test_expect__waits_for_the_informer(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(informer_start(f->inf, NULL), 0);
	struct expect *e = expect_new();
	struct ready_arg r = {e};
	assert_true(expect_ready(e, "dev/rs", loop_now_ms(), NULL));
	expect_write(e, "dev/rs");
	assert_int_equal(expect_in_flight(e, "dev/rs"), 1);
	assert_false(expect_ready(e, "dev/rs", loop_now_ms(), NULL));
	/* Done: version 7 of dev/x must be seen. */
	expect_written(e, "dev/rs", true, f->inf, "dev/x", 7, false, loop_now_ms());
	uint64_t recheck = 0;
	assert_false(expect_ready(e, "dev/rs", loop_now_ms(), &recheck));
	assert_true(recheck > 0 && recheck <= EXPECT_TTL_MS);
	put(f, "x", "  resourceVersion: '6'\n");
	for (int i = 0; i < 20; i++)
		loop_run_once(f->loop, 10, NULL);
	assert_false(expect_ready(e, "dev/rs", loop_now_ms(), NULL)); /* too old */
	put(f, "x", "  resourceVersion: '7'\n");
	run_until(f, is_ready, &r);
	assert_true(is_ready(&r));
	/* A delete is seen when the informer drops it. */
	expect_write(e, "dev/rs");
	expect_written(e, "dev/rs", true, f->inf, "dev/x", 0, true, loop_now_ms());
	assert_false(expect_ready(e, "dev/rs", loop_now_ms(), NULL));
	cleanup_free char *path = xasprintf("%s/namespaces/dev/pods/x.yaml", f->dir);
	unlink(path);
	run_until(f, is_ready, &r);
	assert_true(is_ready(&r));
	/* A failed write leaves nothing to wait for; an old wait expires. */
	expect_write(e, "dev/rs");
	expect_written(e, "dev/rs", false, f->inf, "dev/y", 1, false, loop_now_ms());
	assert_true(expect_ready(e, "dev/rs", loop_now_ms(), NULL));
	expect_write(e, "dev/rs");
	expect_written(e, "dev/rs", true, f->inf, "dev/never", 1, false, loop_now_ms());
	assert_false(expect_ready(e, "dev/rs", loop_now_ms(), NULL));
	assert_true(expect_ready(e, "dev/rs", loop_now_ms() + EXPECT_TTL_MS, NULL));
	expect_free(e);
}

struct done {
	int calls;
	int status;
	char name[64];
	bool changed;
};

static void on_done(void *data, const struct writer_result *res)
{
	struct done *d = data;
	d->calls++;
	d->status = res->status;
	d->changed = res->changed;
	snprintf(d->name, sizeof(d->name), "%s", res->name ? res->name : "");
}

static bool called(void *arg)
{
	return ((struct done *)arg)->calls > 0;
}

static int bump(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const char *to = arg;
	if (!strcmp(ynode_path_str(obj, "spec.v") ? ynode_path_str(obj, "spec.v") : "", to))
		return 0;
	ynode_set(ynode_get_map(obj, "spec"), "v", ynode_new_str(to));
	return 1;
}

static struct ynode *pod_obj(const char *name)
{
	struct ynode *p = ynode_new_map();
	ynode_set(p, "apiVersion", ynode_new_str("v1"));
	ynode_set(p, "kind", ynode_new_str("Pod"));
	ynode_set(ynode_get_map(p, "metadata"), "name", ynode_new_str(name));
	return p;
}

static void test_writer__jobs_and_done_callbacks(void **state)
{
	struct fixture *f = *state;
	struct done d = {0};
	writer_create(f->w, "namespaces/dev/pods", pod_obj("new-bcdfg"), 0, on_done, &d);
	run_until(f, called, &d);
	assert_int_equal(d.status, 0);
	assert_string_equal(d.name, "new-bcdfg");
	/* The name is taken: EEXIST, unless a new one may be generated. */
	struct done d2 = {0};
	writer_create(f->w, "namespaces/dev/pods", pod_obj("new-bcdfg"), 0, on_done, &d2);
	run_until(f, called, &d2);
	assert_int_equal(d2.status, EEXIST);
	struct done d3 = {0};
	writer_create(f->w, "namespaces/dev/pods", pod_obj("new-bcdfg"), WRITER_GENERATE, on_done,
		      &d3);
	run_until(f, called, &d3);
	assert_int_equal(d3.status, 0);
	assert_string_not_equal(d3.name, "new-bcdfg");
	assert_int_equal(strncmp(d3.name, "new-", 4), 0);
	/* An update changes, then finds nothing more to change. */
	struct done u = {0};
	writer_update(f->w, "namespaces/dev/pods/new-bcdfg.yaml", bump, xstrdup("2"), free, 0,
		      on_done, &u);
	run_until(f, called, &u);
	assert_int_equal(u.status, 0);
	assert_true(u.changed);
	struct done u2 = {0};
	writer_update(f->w, "namespaces/dev/pods/new-bcdfg.yaml", bump, xstrdup("2"), free,
		      WRITER_LOW, on_done, &u2);
	run_until(f, called, &u2);
	assert_int_equal(u2.status, 0);
	assert_false(u2.changed);
	cleanup_ynode struct ynode *back = NULL;
	assert_int_equal(
	    write_read_object(f->dir, "namespaces/dev/pods/new-bcdfg.yaml", &back, NULL), 0);
	assert_string_equal(ynode_path_str(back, "spec.v"), "2");
	/* Delete, with a uid precondition that does not hold, then without. */
	struct done x = {0};
	writer_delete(f->w, "namespaces/dev/pods/new-bcdfg.yaml", "other-uid", 0, on_done, &x);
	run_until(f, called, &x);
	assert_int_equal(x.status, ESTALE);
	struct done x2 = {0};
	writer_delete(f->w, "namespaces/dev/pods/new-bcdfg.yaml", NULL, 0, on_done, &x2);
	run_until(f, called, &x2);
	assert_int_equal(x2.status, 0);
	struct done x3 = {0};
	writer_update(f->w, "namespaces/dev/pods/new-bcdfg.yaml", bump, xstrdup("3"), free, 0,
		      on_done, &x3);
	writer_drain(f->w);
	assert_int_equal(x3.calls, 1);
	assert_int_equal(x3.status, ENOENT);
	assert_int_equal(writer_pending(f->w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_owners__index_follows_the_informer, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_expect__waits_for_the_informer, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_writer__jobs_and_done_callbacks, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
