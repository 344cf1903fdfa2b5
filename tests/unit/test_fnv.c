/* test_fnv.c: FNV-1a, 64 and 32 bits: the published test vectors, and
 * pieces hashed one after the other as their concatenation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fnv.h"

static void test_fnv__vectors(void **state)
{
	(void)state;
	assert_true(fnv1a("", 0) == 0xcbf29ce484222325ULL);
	assert_true(fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
	assert_true(fnv1a("foobar", 6) == 0x85944171f73967e8ULL);
	assert_true(fnv1a32("", 0) == 0x811c9dc5u);
	assert_true(fnv1a32("a", 1) == 0xe40c292cu);
	assert_true(fnv1a32("foobar", 6) == 0xbf9cf968u);
	/* Pieces hash as their concatenation. */
	assert_true(fnv1a_add(fnv1a("foo", 3), "bar", 3) == fnv1a("foobar", 6));
	assert_true(fnv1a32_add(fnv1a32("fo", 2), "obar", 4) == fnv1a32("foobar", 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fnv__vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
