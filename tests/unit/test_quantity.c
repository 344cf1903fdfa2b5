/* test_quantity.c: quantity_parse() and quantity_format(): every accepted
 * spelling, every rejection class, int64 boundaries, round trips. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"
#include "quantity.h"

static int64_t parse_ok(const char *s)
{
	struct error *err = NULL;
	int64_t v = -12345;
	int rc = quantity_parse(s, &v, &err);
	if (rc != 0)
		fail_msg("quantity_parse(\"%s\") failed: %s", s, err ? err->msg : "(no error)");
	assert_null(err);
	return v;
}

/* Parses s expecting failure; returns the error's status and checks that
 * the message contains want. The output value must be left alone. */
static int parse_fails(const char *s, const char *want)
{
	cleanup_error struct error *err = NULL;
	int64_t v = 777;
	int rc = quantity_parse(s, &v, &err);
	if (rc >= 0)
		fail_msg("quantity_parse(\"%s\") accepted as %lld", s, (long long)v);
	assert_non_null(err);
	assert_int_equal(rc, -err->status);
	assert_int_equal(v, 777);
	if (!strstr(err->msg, want))
		fail_msg("quantity_parse(\"%s\"): message \"%s\" lacks \"%s\"", s, err->msg, want);
	return err->status;
}

#define FORMAT_MSG "quantities must match the regular expression"
#define SUFFIX_MSG "unable to parse quantity's suffix"
#define RANGE_MSG  "out of range"

static void test_quantity__parses_plain_integers(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("0"), 0);
	assert_int_equal(parse_ok("1"), 1000);
	assert_int_equal(parse_ok("2"), 2000);
	assert_int_equal(parse_ok("007"), 7000);
	assert_int_equal(parse_ok("123456"), 123456000);
}

static void test_quantity__parses_signs(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("+1"), 1000);
	assert_int_equal(parse_ok("-2"), -2000);
	assert_int_equal(parse_ok("-0"), 0);
	assert_int_equal(parse_ok("+0.5"), 500);
	assert_int_equal(parse_ok("-250m"), -250);
	assert_int_equal(parse_ok("-1Ki"), -1024000);
}

static void test_quantity__parses_fractions(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("0.5"), 500);
	assert_int_equal(parse_ok(".5"), 500);
	assert_int_equal(parse_ok("1."), 1000);
	assert_int_equal(parse_ok("0.1"), 100);
	assert_int_equal(parse_ok("1.5"), 1500);
	assert_int_equal(parse_ok("0.001"), 1);
	assert_int_equal(parse_ok("3.14159"), 3142); /* 3141.59m rounds up */
	assert_int_equal(parse_ok("1.000000000000000000000000000"), 1000);
	/* Kubernetes accepts a dot right before the suffix ("1.G"). */
	assert_int_equal(parse_ok("1.G"), 1000000000000LL);
}

static void test_quantity__parses_decimal_si_suffixes(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("250m"), 250);
	assert_int_equal(parse_ok("1m"), 1);
	assert_int_equal(parse_ok("1k"), 1000000LL);
	assert_int_equal(parse_ok("1M"), 1000000000LL);
	assert_int_equal(parse_ok("1G"), 1000000000000LL);
	assert_int_equal(parse_ok("1T"), 1000000000000000LL);
	assert_int_equal(parse_ok("1P"), 1000000000000000000LL);
	assert_int_equal(parse_ok("0.001E"), 1000000000000000000LL);
	assert_int_equal(parse_ok("1.5k"), 1500000);
	assert_int_equal(parse_ok("0.5m"), 1); /* 0.5m rounds up to 1m */
	assert_int_equal(parse_ok("1500000u"), 1500);
	assert_int_equal(parse_ok("2000000n"), 2);
}

static void test_quantity__parses_binary_si_suffixes(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("1Ki"), 1024000LL);
	assert_int_equal(parse_ok("128Mi"), 128LL * 1048576 * 1000);
	assert_int_equal(parse_ok("1Gi"), 1073741824000LL);
	assert_int_equal(parse_ok("1.5Gi"), 1610612736000LL);
	assert_int_equal(parse_ok("1Ti"), 1099511627776000LL);
	assert_int_equal(parse_ok("1Pi"), 1125899906842624000LL);
	assert_int_equal(parse_ok("0.0005Ki"), 512); /* exactly 0.512 */
	assert_int_equal(parse_ok("0.5Ki"), 512000);
	/* 1Ei is 2^60, times 1000 milli is beyond int64... */
	parse_fails("1Ei", RANGE_MSG);
	/* ...but a small fraction of it fits, exactly. */
	assert_int_equal(parse_ok("0.001Ei"), 1152921504606846976LL);
}

static void test_quantity__parses_exponents(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("1e3"), 1000000);
	assert_int_equal(parse_ok("1E3"), 1000000); /* E + digits: exponent */
	assert_int_equal(parse_ok("1e+3"), 1000000);
	assert_int_equal(parse_ok("1e-3"), 1);
	assert_int_equal(parse_ok("1e0"), 1000);
	assert_int_equal(parse_ok("2.5e2"), 250000);
	assert_int_equal(parse_ok("1e-4"), 1);	 /* rounds up */
	assert_int_equal(parse_ok("-1e-4"), -1); /* away from zero */
	assert_int_equal(parse_ok("1e-1000"), 1);
	assert_int_equal(parse_ok("0e1000"), 0);
	assert_int_equal(parse_ok("0e99999999999999999999999"), 0);
	assert_int_equal(parse_ok("1e15"), 1000000000000000000LL);
	assert_int_equal(parse_ok("123456789012345678901234567890e-30"), 124);
}

static void test_quantity__e_alone_is_exa(void **state)
{
	(void)state;
	/* 1E would be 10^21 milli: too large, but as exa, not as a bad
	 * exponent (a range error, not a suffix error). */
	assert_int_equal(parse_fails("1E", RANGE_MSG), ERANGE);
	assert_int_equal(parse_ok("0.000001E"), 1000000000000000LL);
	assert_int_equal(parse_ok("0E"), 0);
}

static void test_quantity__rounds_up_finer_than_milli(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("0.0001"), 1);
	assert_int_equal(parse_ok("0.0011"), 2);
	assert_int_equal(parse_ok("1.0000001"), 1001);
	assert_int_equal(parse_ok("0.000000000000000000000001"), 1);
	assert_int_equal(parse_ok("1n"), 1);
	assert_int_equal(parse_ok("1u"), 1);
	assert_int_equal(parse_ok("1000u"), 1);
	assert_int_equal(parse_ok("1001u"), 2);
	assert_int_equal(parse_ok("-1001u"), -2);
	/* Trailing zeros are not "finer" than 1m. */
	assert_int_equal(parse_ok("0.0010000000"), 1);
}

static void test_quantity__int64_boundaries(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("9223372036854775807m"), INT64_MAX);
	assert_int_equal(parse_ok("-9223372036854775808m"), INT64_MIN);
	assert_int_equal(parse_ok("9223372036854775.807"), INT64_MAX);
	assert_int_equal(parse_ok("9223372036854775807e-3"), INT64_MAX);
	assert_int_equal(parse_ok("9223372036854775.8065"), INT64_MAX);
	assert_int_equal(parse_ok("9.223372036854775807P"), INT64_MAX);
	assert_int_equal(parse_ok("0.009223372036854775807E"), INT64_MAX);
	assert_int_equal(parse_ok("8Pi"), 9007199254740992000LL);
	/* 0.008Ei is exactly 2^63 milli: one past INT64_MAX, but its
	 * negation is INT64_MIN. */
	parse_fails("0.008Ei", RANGE_MSG);
	assert_int_equal(parse_ok("-0.008Ei"), INT64_MIN);
}

static void test_quantity__rejects_int64_overflow(void **state)
{
	(void)state;
	assert_int_equal(parse_fails("9223372036854775808m", RANGE_MSG), ERANGE);
	parse_fails("-9223372036854775809m", RANGE_MSG);
	parse_fails("9223372036854775.8071", RANGE_MSG); /* rounds up past */
	parse_fails("9223372036854776", RANGE_MSG);
	parse_fails("10E", RANGE_MSG);
	parse_fails("1e16", RANGE_MSG);
	parse_fails("1e999999999999999999999", RANGE_MSG);
	parse_fails("100000000000000000000000000000000000", RANGE_MSG);
	parse_fails("9Pi", RANGE_MSG);
	parse_fails("-9Pi", RANGE_MSG);
}

static void test_quantity__rejects_empty_and_signs_alone(void **state)
{
	(void)state;
	assert_int_equal(parse_fails("", FORMAT_MSG), EINVAL);
	parse_fails("+", FORMAT_MSG);
	parse_fails("-", FORMAT_MSG);
	parse_fails(".", FORMAT_MSG);
	parse_fails("-.", FORMAT_MSG);
	parse_fails("m", FORMAT_MSG);
	parse_fails("Ki", FORMAT_MSG);
	parse_fails("e3", FORMAT_MSG);
	assert_int_equal(quantity_parse(NULL, &(int64_t){0}, NULL), -EINVAL);
}

static void test_quantity__rejects_malformed_numbers(void **state)
{
	(void)state;
	parse_fails("1.1.M", FORMAT_MSG);
	parse_fails("1..5", FORMAT_MSG);
	parse_fails("+-1", FORMAT_MSG);
	parse_fails("--1", FORMAT_MSG);
	parse_fails(" 1", FORMAT_MSG);
	parse_fails("1 ", FORMAT_MSG);
	parse_fails("1 Gi", FORMAT_MSG);
	parse_fails("aoeu", FORMAT_MSG);
	parse_fails("0x10", FORMAT_MSG);
	parse_fails("1,000", FORMAT_MSG);
	parse_fails("1Gb", FORMAT_MSG);
}

static void test_quantity__rejects_unknown_suffix(void **state)
{
	(void)state;
	assert_int_equal(parse_fails("1K", SUFFIX_MSG), EINVAL);
	parse_fails("1i", SUFFIX_MSG);
	parse_fails("1mi", SUFFIX_MSG);
	parse_fails("0.1mi", SUFFIX_MSG);
	parse_fails(".5i", SUFFIX_MSG);
	parse_fails("1ki", SUFFIX_MSG);
	parse_fails("1KiB", FORMAT_MSG);
	parse_fails("1Kii", SUFFIX_MSG);
}

static void test_quantity__rejects_double_suffix(void **state)
{
	(void)state;
	parse_fails("1kk", SUFFIX_MSG);
	parse_fails("1Mm", SUFFIX_MSG);
	parse_fails("1GiM", SUFFIX_MSG);
	parse_fails("1e3k", SUFFIX_MSG);
	parse_fails("1ke3", SUFFIX_MSG);
	parse_fails("1Ki5", SUFFIX_MSG);
}

static void test_quantity__rejects_bad_exponents(void **state)
{
	(void)state;
	parse_fails("1e", SUFFIX_MSG);
	parse_fails("1e-", SUFFIX_MSG);
	parse_fails("1e+", SUFFIX_MSG);
	parse_fails("-3.01e-", SUFFIX_MSG);
	parse_fails("1e+-3", SUFFIX_MSG);
	parse_fails("1e3.5", FORMAT_MSG);
	parse_fails("1e3e3", SUFFIX_MSG);
	parse_fails("1E-", SUFFIX_MSG);
}

static void test_quantity__ignores_null_err(void **state)
{
	(void)state;
	int64_t v = 0;
	assert_int_equal(quantity_parse("1x", &v, NULL), -EINVAL);
	assert_int_equal(quantity_parse("1e99", &v, NULL), -ERANGE);
	assert_int_equal(quantity_parse("3", &v, NULL), 0);
	assert_int_equal(v, 3000);
}

static const char *fmt(int64_t milli)
{
	static char buf[64];
	quantity_format(milli, buf, sizeof(buf));
	return buf;
}

static void test_quantity__formats_canonically(void **state)
{
	(void)state;
	assert_string_equal(fmt(0), "0");
	assert_string_equal(fmt(250), "250m");
	assert_string_equal(fmt(1500), "1500m");
	assert_string_equal(fmt(-250), "-250m");
	assert_string_equal(fmt(2000), "2");
	assert_string_equal(fmt(-2000), "-2");
	assert_string_equal(fmt(1500000), "1500");
	assert_string_equal(fmt(1000000), "1k");
	assert_string_equal(fmt(1000000000000LL), "1G");
	assert_string_equal(fmt(1200000000LL), "1200k");
	assert_string_equal(fmt(128LL * 1048576 * 1000), "128Mi");
	assert_string_equal(fmt(1073741824000LL), "1Gi");
	assert_string_equal(fmt(1610612736000LL), "1536Mi");
	assert_string_equal(fmt(-1024000), "-1Ki");
	assert_string_equal(fmt(1000000000000000000LL), "1P");
	assert_string_equal(fmt(512000000), "512k"); /* shorter than 500Ki */
	assert_string_equal(fmt(INT64_MAX), "9223372036854775807m");
	assert_string_equal(fmt(INT64_MIN), "-9223372036854775808m");
	assert_string_equal(fmt(INT64_MIN / 1000 * 1000), "-9223372036854775");
	assert_string_equal(fmt(1152921504606846976LL), "1152921504606846976m");
}

static void test_quantity__format_truncates_to_size(void **state)
{
	(void)state;
	char buf[4] = "xyz";
	quantity_format(128LL * 1048576 * 1000, buf, sizeof(buf));
	assert_string_equal(buf, "128");
	quantity_format(250, buf, 1);
	assert_string_equal(buf, "");
	quantity_format(250, buf, 0); /* writes nothing */
	assert_string_equal(buf, "");
}

static void test_quantity__format_round_trips(void **state)
{
	(void)state;
	static const int64_t values[] = {
	    0,
	    1,
	    -1,
	    999,
	    1000,
	    1001,
	    1024000,
	    1000000,
	    1023999,
	    1048576000,
	    5000000000000LL,
	    INT64_MAX,
	    INT64_MIN,
	    INT64_MAX / 1000 * 1000,
	    INT64_MIN / 1000 * 1000,
	    1152921504606846976LL,
	    1125899906842624000LL,
	};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char buf[64];
		quantity_format(values[i], buf, sizeof(buf));
		assert_int_equal(parse_ok(buf), values[i]);
	}
	/* Every power of two and ten times a few small factors. */
	for (int64_t f = 1; f <= 9; f++) {
		for (int64_t m = 1; m <= INT64_MAX / 10 / f; m *= 10) {
			char buf[64];
			quantity_format(m * f, buf, sizeof(buf));
			assert_int_equal(parse_ok(buf), m * f);
		}
		for (int64_t m = 1; m <= INT64_MAX / 2 / f; m *= 2) {
			char buf[64];
			quantity_format(-m * f, buf, sizeof(buf));
			assert_int_equal(parse_ok(buf), -m * f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantity__parses_plain_integers),
	    cmocka_unit_test(test_quantity__parses_signs),
	    cmocka_unit_test(test_quantity__parses_fractions),
	    cmocka_unit_test(test_quantity__parses_decimal_si_suffixes),
	    cmocka_unit_test(test_quantity__parses_binary_si_suffixes),
	    cmocka_unit_test(test_quantity__parses_exponents),
	    cmocka_unit_test(test_quantity__e_alone_is_exa),
	    cmocka_unit_test(test_quantity__rounds_up_finer_than_milli),
	    cmocka_unit_test(test_quantity__int64_boundaries),
	    cmocka_unit_test(test_quantity__rejects_int64_overflow),
	    cmocka_unit_test(test_quantity__rejects_empty_and_signs_alone),
	    cmocka_unit_test(test_quantity__rejects_malformed_numbers),
	    cmocka_unit_test(test_quantity__rejects_unknown_suffix),
	    cmocka_unit_test(test_quantity__rejects_double_suffix),
	    cmocka_unit_test(test_quantity__rejects_bad_exponents),
	    cmocka_unit_test(test_quantity__ignores_null_err),
	    cmocka_unit_test(test_quantity__formats_canonically),
	    cmocka_unit_test(test_quantity__format_truncates_to_size),
	    cmocka_unit_test(test_quantity__format_round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
