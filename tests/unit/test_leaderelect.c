/* test_leaderelect.c: Lease-based leader election on a plain folder laid
 * out like the mount: the first candidate leads, a second follows, takes
 * over once the leader stops renewing for the lease duration, and the old
 * leader then stops; a release hands over at once. Each candidate runs on
 * a loop of its own, so that one can be frozen as a dead process would. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "leaderelect.h"
#include "loop.h"
#include "util.h"

struct cand {
	struct loop *loop;
	struct leader *le;
	int started, stopped;
};

static void on_started(void *data)
{
	((struct cand *)data)->started++;
}

static void on_stopped(void *data)
{
	((struct cand *)data)->stopped++;
}

static char dir[64];

static void cand_new(struct cand *c, const char *id)
{
	memset(c, 0, sizeof(*c));
	c->loop = loop_new(NULL);
	struct leader_config cfg = {
	    .mount = dir,
	    .ns = "kube-system",
	    .name = "test",
	    .identity = id,
	    .lease_ms = 600,
	    .renew_ms = 400,
	    .retry_ms = 100,
	    .on_started = on_started,
	    .on_stopped = on_stopped,
	    .data = c,
	};
	cleanup_error struct error *err = NULL;
	c->le = leader_new(c->loop, &cfg, &err);
	if (!c->le)
		fail_msg("leader_new: %s", err->msg);
	assert_int_equal(leader_start(c->le, NULL), 0);
}

static void cand_free(struct cand *c)
{
	leader_free(c->le);
	loop_free(c->loop);
}

static void run(struct cand *c, int ms)
{
	uint64_t end = loop_now_ms() + (uint64_t)ms;
	while (loop_now_ms() < end)
		loop_run_once(c->loop, 10, NULL);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/test_leaderelect.XXXXXX");
	assert_non_null(mkdtemp(dir));
	cleanup_free char *leases = xasprintf("%s/namespaces/kube-system/leases", dir);
	assert_int_equal(util_mkdir_p(leases, 0755), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void test_leaderelect__first_leads_second_takes_over(void **state)
{
	(void)state;
	struct cand a, b;
	cand_new(&a, "a");
	assert_true(leader_is_leader(a.le));
	assert_int_equal(a.started, 1);
	cand_new(&b, "b");
	assert_false(leader_is_leader(b.le));
	assert_string_equal(leader_holder(b.le), "a");
	/* Both run: a renews, b keeps following. */
	for (int i = 0; i < 40; i++) {
		run(&a, 10);
		run(&b, 10);
	}
	assert_true(leader_is_leader(a.le));
	assert_false(leader_is_leader(b.le));
	/* a freezes (a dead process): b takes over after the lease. */
	run(&b, 1500);
	assert_true(leader_is_leader(b.le));
	assert_int_equal(b.started, 1);
	cleanup_free char *path = xasprintf("%s/namespaces/kube-system/leases/test.yaml", dir);
	cleanup_free char *text = util_read_file(path, NULL);
	assert_non_null(strstr(text, "holderIdentity: b"));
	assert_non_null(strstr(text, "leaseTransitions: 1"));
	/* a wakes up: it cannot renew, and stops. */
	run(&a, 300);
	assert_false(leader_is_leader(a.le));
	assert_int_equal(a.stopped, 1);
	cand_free(&a);
	cand_free(&b);
}

static void test_leaderelect__release_hands_over_at_once(void **state)
{
	(void)state;
	struct cand a, b;
	cand_new(&a, "a");
	cand_new(&b, "b");
	assert_true(leader_is_leader(a.le));
	leader_release(a.le);
	assert_false(leader_is_leader(a.le));
	run(&b, 200); /* well under the lease duration */
	assert_true(leader_is_leader(b.le));
	cand_free(&a);
	cand_free(&b);
}

static void test_leaderelect__durations_are_checked(void **state)
{
	(void)state;
	struct loop *loop = loop_new(NULL);
	struct leader_config cfg = {.mount = dir,
				    .ns = "kube-system",
				    .name = "x",
				    .lease_ms = 1000,
				    .renew_ms = 1000,
				    .retry_ms = 100};
	cleanup_error struct error *err = NULL;
	assert_null(leader_new(loop, &cfg, &err));
	assert_int_equal(err->status, EINVAL);
	loop_free(loop);
	cleanup_free char *id = leader_identity();
	assert_non_null(strchr(id, '_'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_leaderelect__first_leads_second_takes_over, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_leaderelect__release_hands_over_at_once, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_leaderelect__durations_are_checked, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
