/* test_ctrl_gc.c: what the garbage collector does with a dependent, given
 * the states of its owners. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "gc.h"

static enum gc_action decide(size_t n, ...)
{
	enum gc_owner_state s[8];
	va_list ap;
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		s[i] = (enum gc_owner_state)va_arg(ap, int);
	va_end(ap);
	return gc_decide(s, n);
}

static void test_gc__owner_gone_deletes(void **state)
{
	(void)state;
	assert_int_equal(decide(1, GC_OWNER_GONE), GC_DELETE);
	assert_int_equal(decide(2, GC_OWNER_GONE, GC_OWNER_GONE), GC_DELETE);
}

static void test_gc__owner_present_keeps(void **state)
{
	(void)state;
	assert_int_equal(decide(1, GC_OWNER_EXISTS), GC_NOTHING);
	assert_int_equal(decide(0), GC_NOTHING);
}

static void test_gc__one_owner_left_drops_the_others(void **state)
{
	(void)state;
	assert_int_equal(decide(2, GC_OWNER_EXISTS, GC_OWNER_GONE), GC_REMOVE_REFS);
	assert_int_equal(decide(2, GC_OWNER_GONE, GC_OWNER_EXISTS), GC_REMOVE_REFS);
}

static void test_gc__orphaning_keeps_the_dependent(void **state)
{
	(void)state;
	assert_int_equal(decide(1, GC_OWNER_ORPHANED), GC_REMOVE_REFS);
	assert_int_equal(decide(2, GC_OWNER_ORPHANED, GC_OWNER_EXISTS), GC_REMOVE_REFS);
	/* An owner gone for good still takes it, orphaning or not. */
	assert_int_equal(decide(2, GC_OWNER_ORPHANED, GC_OWNER_GONE), GC_DELETE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gc__owner_gone_deletes),
	    cmocka_unit_test(test_gc__owner_present_keeps),
	    cmocka_unit_test(test_gc__one_owner_left_drops_the_others),
	    cmocka_unit_test(test_gc__orphaning_keeps_the_dependent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
