/* test_ctrl_gc.c: what the garbage collector does with a dependent, given
 * the states of its owners. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "gc.h"
#include "testlib.h"

#include <string.h>

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

static enum gc_owner_step owner_step(const char *meta, size_t deps, const char **fin)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n%s",
		 meta);
	struct ynode *o = y(buf);
	enum gc_owner_step s = gc_decide_owner(o, deps, fin);
	ynode_free(o);
	return s;
}

#define DELETING "  deletionTimestamp: '2026-12-01T10:00:00Z'\n"

static void test_gc__owner_finalizers(void **state)
{
	(void)state;
	const char *fin;
	/* Not being deleted, or no finalizer of the collector's: nothing. */
	assert_int_equal(owner_step("  finalizers: [orphan]\n", 2, &fin), GC_STEP_NONE);
	assert_int_equal(owner_step("  finalizers: [example.com/x]\n" DELETING, 2, &fin),
			 GC_STEP_NONE);
	/* orphan: the dependents lose their references, then it goes. */
	assert_int_equal(owner_step("  finalizers: [orphan]\n" DELETING, 2, &fin),
			 GC_STEP_ORPHAN_DEPENDENTS);
	assert_string_equal(fin, "orphan");
	assert_int_equal(owner_step("  finalizers: [orphan]\n" DELETING, 0, &fin),
			 GC_STEP_REMOVE_FINALIZER);
	assert_string_equal(fin, "orphan");
	/* foregroundDeletion: the dependents are deleted first. */
	assert_int_equal(
	    owner_step("  finalizers: [example.com/x, foregroundDeletion]\n" DELETING, 1, &fin),
	    GC_STEP_DELETE_DEPENDENTS);
	assert_string_equal(fin, "foregroundDeletion");
	assert_int_equal(owner_step("  finalizers: [foregroundDeletion]\n" DELETING, 0, &fin),
			 GC_STEP_REMOVE_FINALIZER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gc__owner_gone_deletes),
	    cmocka_unit_test(test_gc__owner_present_keeps),
	    cmocka_unit_test(test_gc__one_owner_left_drops_the_others),
	    cmocka_unit_test(test_gc__orphaning_keeps_the_dependent),
	    cmocka_unit_test(test_gc__owner_finalizers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
