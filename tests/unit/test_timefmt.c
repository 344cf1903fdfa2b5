/* test_timefmt.c: RFC 3339 times: the formats Kubernetes writes, the
 * round trip, offsets and fractions, and the strings the parser refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "timefmt.h"

#define T0 1796000000

static void test_timefmt__formats(void **state)
{
	(void)state;
	char buf[RFC3339_SIZE], micro[RFC3339_MICRO_SIZE];
	rfc3339_format(0, buf);
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	rfc3339_format(951782400, buf); /* a leap day */
	assert_string_equal(buf, "2000-02-29T00:00:00Z");
	rfc3339_format(86400 + 3661, buf);
	assert_string_equal(buf, "1970-01-02T01:01:01Z");
	assert_int_equal(strlen(buf), RFC3339_SIZE - 1);
	rfc3339_format_micro(0, micro);
	assert_string_equal(micro, "1970-01-01T00:00:00.000000Z");
	rfc3339_format_micro((86400 + 61) * 1000000LL + 123456, micro);
	assert_string_equal(micro, "1970-01-02T00:01:01.123456Z");
	assert_int_equal(strlen(micro), RFC3339_MICRO_SIZE - 1);
	rfc3339_format_micro(-1, micro);
	assert_string_equal(micro, "1969-12-31T23:59:59.999999Z");
}

static void test_timefmt__round_trip(void **state)
{
	(void)state;
	char buf[RFC3339_SIZE], micro[RFC3339_MICRO_SIZE];
	for (time_t t = T0 - 400 * 86400; t < T0 + 400 * 86400; t += 86400 + 3607) {
		time_t back = 0;
		rfc3339_format(t, buf);
		assert_int_equal(rfc3339_parse(buf, &back), 0);
		assert_int_equal(back, t);
		rfc3339_format_micro((int64_t)t * 1000000 + 999999, micro);
		assert_int_equal(rfc3339_parse(micro, &back), 0);
		assert_int_equal(back, t);
	}
}

static void test_timefmt__parses_offsets_and_fractions(void **state)
{
	(void)state;
	time_t t = 0;
	assert_int_equal(rfc3339_parse("1970-01-01T01:00:00+01:00", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(rfc3339_parse("1969-12-31T23:30:00-00:30", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(rfc3339_parse("1970-01-01T00:00:10.5Z", &t), 0);
	assert_int_equal(t, 10);
	assert_int_equal(rfc3339_parse("1970-01-01t00:00:10z", &t), 0);
	assert_int_equal(t, 10);
	assert_int_equal(rfc3339_parse("2024-02-29T00:00:00Z", &t), 0);
	assert_int_equal(t, 1709164800);
}

static void test_timefmt__rejects_bad_input(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "yesterday",
	    "1970-01-01",
	    "1970-01-01T00:00:00",	  /* no zone */
	    "1970-01-01 00:00:00Z",	  /* a blank for the T */
	    "1970-01-01T00:00:00ZZ",	  /* trailing bytes */
	    "1970-01-01T00:00:00Z ",	  /* trailing blank */
	    " 1970-01-01T00:00:00Z",	  /* leading blank */
	    "1970-1-01T00:00:00Z",	  /* a one-digit month */
	    "1970-01-01T0:00:00Z",	  /* a one-digit hour */
	    "1970-13-01T00:00:00Z",	  /* month 13 */
	    "1970-00-01T00:00:00Z",	  /* month 0 */
	    "1970-01-00T00:00:00Z",	  /* day 0 */
	    "1970-04-31T00:00:00Z",	  /* April has 30 days */
	    "2023-02-29T00:00:00Z",	  /* not a leap year */
	    "1900-02-29T00:00:00Z",	  /* not a leap year either */
	    "1970-01-01T24:00:00Z",	  /* hour 24 */
	    "1970-01-01T00:60:00Z",	  /* minute 60 */
	    "1970-01-01T00:00:60Z",	  /* second 60 */
	    "1970-01-01T00:00:00.Z",	  /* a fraction without digits */
	    "1970-01-01T00:00:00+0100",	  /* offset without a colon */
	    "1970-01-01T00:00:00+01",	  /* offset without minutes */
	    "1970-01-01T00:00:00+24:00",  /* offset hour 24 */
	    "1970-01-01T00:00:00+01:60",  /* offset minute 60 */
	    "1970-01-01T00:00:00+01:00x", /* trailing bytes */
	    "1970/01/01T00:00:00Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		time_t t = 42;
		if (rfc3339_parse(bad[i], &t) != -1)
			fail_msg("\"%s\" parsed", bad[i]);
		assert_int_equal(t, 42);
	}
	time_t t = 42;
	assert_int_equal(rfc3339_parse(NULL, &t), -1);
	assert_int_equal(t, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timefmt__formats),
	    cmocka_unit_test(test_timefmt__round_trip),
	    cmocka_unit_test(test_timefmt__parses_offsets_and_fractions),
	    cmocka_unit_test(test_timefmt__rejects_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
