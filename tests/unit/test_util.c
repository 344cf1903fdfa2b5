/* test_util.c: lib/util.c's deadlines: milliseconds carried into seconds,
 * and a deadline that lies after now on its clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util.h"

static void test_util_timespec_add_ms__carries_nanoseconds(void **state)
{
	(void)state;
	struct timespec t = util_timespec_add_ms((struct timespec){5, 999000000L}, 1);
	assert_int_equal(t.tv_sec, 6);
	assert_int_equal(t.tv_nsec, 0);
	t = util_timespec_add_ms((struct timespec){5, 600000000L}, 2500);
	assert_int_equal(t.tv_sec, 8);
	assert_int_equal(t.tv_nsec, 100000000L);
	t = util_timespec_add_ms((struct timespec){5, 1}, 0);
	assert_int_equal(t.tv_sec, 5);
	assert_int_equal(t.tv_nsec, 1);
}

static void test_util_deadline__after_now(void **state)
{
	(void)state;
	clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};
	for (size_t i = 0; i < ARRAY_SIZE(clocks); i++) {
		struct timespec before;
		clock_gettime(clocks[i], &before);
		struct timespec d = util_deadline(clocks[i], 1500);
		long long ns = (long long)(d.tv_sec - before.tv_sec) * 1000000000LL +
			       (d.tv_nsec - before.tv_nsec);
		assert_true(ns >= 1500000000LL);
		assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_util_timespec_add_ms__carries_nanoseconds),
	    cmocka_unit_test(test_util_deadline__after_now),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
