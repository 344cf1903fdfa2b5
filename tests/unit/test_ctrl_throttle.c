/* test_ctrl_throttle.c: the status-write throttle: status-only writes of
 * one object at most once per interval, urgent ones at once, each object
 * on its own clock. The clock is the caller's, so no test waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "throttle.h"
#include "util.h"

static void test_throttle__at_most_once_per_interval(void **state)
{
	(void)state;
	struct throttle *t = throttle_new(1000);
	uint64_t wait = 99;
	assert_true(throttle_take(t, "dev/web", false, 5000, &wait));
	assert_int_equal(wait, 0);
	assert_false(throttle_take(t, "dev/web", false, 5001, &wait));
	assert_int_equal(wait, 999);
	assert_false(throttle_take(t, "dev/web", false, 5999, &wait));
	assert_int_equal(wait, 1);
	/* A refused write is not a write: the clock still runs from 5000. */
	assert_true(throttle_take(t, "dev/web", false, 6000, &wait));
	assert_false(throttle_take(t, "dev/web", false, 6500, NULL));
	throttle_free(t);
}

static void test_throttle__urgent_goes_at_once_and_counts(void **state)
{
	(void)state;
	struct throttle *t = throttle_new(1000);
	uint64_t wait = 0;
	assert_true(throttle_take(t, "dev/web", false, 5000, NULL));
	assert_true(throttle_take(t, "dev/web", true, 5100, &wait));
	assert_int_equal(wait, 0);
	/* The urgent write was the last one. */
	assert_false(throttle_take(t, "dev/web", false, 5600, &wait));
	assert_int_equal(wait, 500);
	throttle_free(t);
}

static void test_throttle__each_key_and_forget(void **state)
{
	(void)state;
	struct throttle *t = throttle_new(1000);
	assert_true(throttle_take(t, "dev/a", false, 5000, NULL));
	assert_true(throttle_take(t, "dev/b", false, 5001, NULL));
	assert_false(throttle_take(t, "dev/a", false, 5002, NULL));
	throttle_forget(t, "dev/a");
	assert_true(throttle_take(t, "dev/a", false, 5003, NULL));
	/* A first write at a clock of 0 still counts. */
	assert_true(throttle_take(t, "dev/c", false, 0, NULL));
	assert_false(throttle_take(t, "dev/c", false, 10, NULL));
	throttle_free(t);
	/* An interval of 0 never waits. */
	t = throttle_new(0);
	assert_true(throttle_take(t, "dev/a", false, 5000, NULL));
	assert_true(throttle_take(t, "dev/a", false, 5000, NULL));
	throttle_free(t);
}

static void test_throttle__urgent_status(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *old = y("{observedGeneration: 2, replicas: 1}");
	cleanup_ynode struct ynode *counts = y("{observedGeneration: 2, replicas: 3}");
	cleanup_ynode struct ynode *newgen = y("{observedGeneration: 3, replicas: 1}");
	assert_false(throttle_status_urgent(old, counts));
	assert_true(throttle_status_urgent(old, newgen));
	assert_true(throttle_status_urgent(NULL, counts));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_throttle__at_most_once_per_interval),
	    cmocka_unit_test(test_throttle__urgent_goes_at_once_and_counts),
	    cmocka_unit_test(test_throttle__each_key_and_forget),
	    cmocka_unit_test(test_throttle__urgent_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
