/* test_servicerange.c: the service ranges of [cluster]: CIDRs, node port
 * ranges, and addresses' offsets in a range. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "servicerange.h"
#include "util.h"

static void test_servicerange__parse(void **state)
{
	(void)state;
	struct servicerange r;
	assert_int_equal(servicerange_parse("10.96.0.0/16", &r, NULL), 0);
	assert_int_equal(r.base, (10u << 24) | (96u << 16));
	assert_int_equal(r.size, 65536);
	assert_string_equal(r.text, "10.96.0.0/16");
	assert_int_equal(servicerange_parse("10.96.0.0/12", &r, NULL), 0);
	assert_int_equal(r.size, 1u << 20);
	cleanup_error struct error *err = NULL;
	assert_int_equal(servicerange_parse("10.96.0.1/16", &r, &err), -EINVAL);
	assert_non_null(strstr(err->msg, "host bits"));
	assert_int_equal(servicerange_parse("10.96.0.0/8", &r, NULL), -EINVAL);
	assert_int_equal(servicerange_parse("10.96.0.0", &r, NULL), -EINVAL);
	assert_int_equal(servicerange_parse("10.96.0.0/", &r, NULL), -EINVAL);
	assert_int_equal(servicerange_parse("10.96.0.0/16x", &r, NULL), -EINVAL);
	assert_int_equal(servicerange_parse("fd00::/108", &r, NULL), -EINVAL);
	assert_int_equal(servicerange_parse(NULL, &r, NULL), -EINVAL);
}

static void test_servicerange__parse_ports(void **state)
{
	(void)state;
	int lo = 0, hi = 0;
	assert_int_equal(servicerange_parse_ports("30000-32767", &lo, &hi, NULL), 0);
	assert_int_equal(lo, 30000);
	assert_int_equal(hi, 32767);
	assert_int_equal(servicerange_parse_ports("31000-30000", &lo, &hi, NULL), -EINVAL);
	assert_int_equal(servicerange_parse_ports("30000", &lo, &hi, NULL), -EINVAL);
	assert_int_equal(servicerange_parse_ports("0-10", &lo, &hi, NULL), -EINVAL);
	assert_int_equal(servicerange_parse_ports("30000-70000", &lo, &hi, NULL), -EINVAL);
	assert_int_equal(servicerange_parse_ports("30000-3x", &lo, &hi, NULL), -EINVAL);
}

static void test_servicerange__offset(void **state)
{
	(void)state;
	struct servicerange r;
	assert_int_equal(servicerange_parse("10.96.0.0/16", &r, NULL), 0);
	uint32_t off = 0;
	assert_int_equal(servicerange_offset(&r, "10.96.1.2", &off), 0);
	assert_int_equal(off, 258);
	char buf[16];
	servicerange_format(&r, off, buf);
	assert_string_equal(buf, "10.96.1.2");
	assert_int_equal(servicerange_offset(&r, "10.96.0.0", &off), -ERANGE);
	assert_int_equal(servicerange_offset(&r, "10.96.255.255", &off), -ERANGE);
	assert_int_equal(servicerange_offset(&r, "10.97.0.1", &off), -ERANGE);
	assert_int_equal(servicerange_offset(&r, "10.95.255.254", &off), -ERANGE);
	assert_int_equal(servicerange_offset(&r, "10.96.0.256", &off), -EINVAL);
	assert_int_equal(servicerange_offset(&r, "None", &off), -EINVAL);
	assert_int_equal(servicerange_offset(&r, NULL, &off), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_servicerange__parse),
	    cmocka_unit_test(test_servicerange__parse_ports),
	    cmocka_unit_test(test_servicerange__offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
