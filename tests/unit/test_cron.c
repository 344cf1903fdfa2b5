/* test_cron.c: the cron schedule parser (every syntax, robfig/cron's
 * messages with the field named), next times in UTC and across the changes
 * of offset of real zones and POSIX rules, month ends and Feb 29, and the
 * time zone names Kubernetes refuses. */
#include "testlib.h"

#include "cron.h"
#include "timefmt.h"
#include "util.h"

#include <errno.h>

static int64_t at(const char *s)
{
	time_t t = 0;
	if (rfc3339_parse(s, &t) < 0)
		fail_msg("bad test time %s", s);
	return (int64_t)t;
}

static struct cron_schedule *parse(const char *spec)
{
	struct cron_schedule *s = NULL;
	cleanup_error struct error *err = NULL;
	if (cron_parse(spec, &s, &err) < 0)
		fail_msg("\"%s\" does not parse: %s", spec, err->msg);
	return s;
}

static struct cron_zone *zone(const char *name)
{
	struct cron_zone *z = NULL;
	cleanup_error struct error *err = NULL;
	if (cron_zone_load(name, &z, &err) < 0)
		fail_msg("no zone %s: %s", name, err->msg);
	return z;
}

/* The next time of spec after from in z, as RFC 3339 ("-" for none). */
static void assert_next(const char *spec, const struct cron_zone *z, const char *from,
			const char *want)
{
	cleanup_cron struct cron_schedule *s = parse(spec);
	int64_t t = cron_next(s, z, at(from));
	char got[RFC3339_SIZE] = "-";
	if (t >= 0)
		rfc3339_format((time_t)t, got);
	if (strcmp(got, want))
		fail_msg("\"%s\" after %s: got %s, want %s", spec, from, got, want);
}

static void assert_refused(const char *spec, const char *msg)
{
	struct cron_schedule *s = NULL;
	cleanup_error struct error *err = NULL;
	assert_int_equal(cron_parse(spec, &s, &err), -EINVAL);
	assert_null(s);
	assert_non_null(err);
	if (strcmp(err->msg, msg))
		fail_msg("\"%s\": got \"%s\", want \"%s\"", spec, err->msg, msg);
}

static void test_cron_parse__accepts_every_syntax(void **state)
{
	(void)state;
	static const char *const ok[] = {
	    "* * * * *",
	    "*/5 * * * *",
	    "1-10/2 * * * *",
	    "0,15,30,45 * * * *",
	    "0 0 1 JAN-dec *",
	    "0 0 * * SUN-sat",
	    "0 0 * * mon,Wed,FRI",
	    "0 0 * * 7",
	    "0 0 * * 5-7",
	    "0 0 ? * ?",
	    "5/15 * * * *",
	    "@hourly",
	    "@daily",
	    "@midnight",
	    "@weekly",
	    "@monthly",
	    "@yearly",
	    "@annually",
	    "@every 1h30m",
	    "  0  0\t* *  *  ",
	    "59 23 31 12 6",
	    "0 0 +1 * *",
	};
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		cron_free(parse(ok[i]));
}

static void test_cron_parse__refuses_with_the_field_and_why(void **state)
{
	(void)state;
	assert_refused("", "empty spec string");
	assert_refused("* * * *", "expected exactly 5 fields, found 4: [* * * *]");
	assert_refused("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]");
	assert_refused("60 * * * *", "end of range (60) above maximum (59): 60 (minute field)");
	assert_refused("* 24 * * *", "end of range (24) above maximum (23): 24 (hour field)");
	assert_refused("* * 0 * *",
		       "beginning of range (0) below minimum (1): 0 (day of month field)");
	assert_refused("* * * 13 *", "end of range (13) above maximum (12): 13 (month field)");
	assert_refused("* * * * 8", "end of range (8) above maximum (7): 8 (day of week field)");
	assert_refused("5-1 * * * *",
		       "beginning of range (5) beyond end of range (1): 5-1 (minute field)");
	assert_refused("*/0 * * * *",
		       "step of range should be a positive number: */0 (minute field)");
	assert_refused("1/2/3 * * * *", "too many slashes: 1/2/3 (minute field)");
	assert_refused("1-2-3 * * * *", "too many hyphens: 1-2-3 (minute field)");
	assert_refused("* * * FOO *", "failed to parse int from FOO: strconv.Atoi: parsing "
				      "\"FOO\": invalid syntax (month field)");
	assert_refused("* * * * */-1", "negative number (-1) not allowed: -1 (day of week field)");
	assert_refused("99999999999999999999 * * * *",
		       "failed to parse int from 99999999999999999999: strconv.Atoi: parsing "
		       "\"99999999999999999999\": value out of range (minute field)");
	assert_refused(", * * * *", "no value in list: , (minute field)");
	assert_refused("* * * * JANUARY",
		       "failed to parse int from JANUARY: strconv.Atoi: "
		       "parsing \"JANUARY\": invalid syntax (day of week field)");
	assert_refused("@reboot", "unrecognized descriptor: @reboot");
	assert_refused("@Daily", "unrecognized descriptor: @Daily");
	assert_refused("@every 5", "failed to parse duration @every 5: time: missing unit in "
				   "duration \"5\"");
	assert_refused("@every 5y", "failed to parse duration @every 5y: time: unknown unit "
				    "\"y\" in duration \"5y\"");
	assert_refused("TZ=UTC 0 0 * * *", CRON_TZ_MESSAGE);
	assert_refused("CRON_TZ=Europe/Berlin 0 0 * * *", CRON_TZ_MESSAGE);
}

static void test_cron_next__utc(void **state)
{
	(void)state;
	assert_next("* * * * *", NULL, "2026-12-01T13:15:00Z", "2026-12-01T13:16:00Z");
	assert_next("* * * * *", NULL, "2026-12-01T13:15:59Z", "2026-12-01T13:16:00Z");
	assert_next("*/5 * * * *", NULL, "2026-12-01T13:15:00Z", "2026-12-01T13:20:00Z");
	assert_next("1-10/4 * * * *", NULL, "2026-12-01T13:05:00Z", "2026-12-01T13:09:00Z");
	assert_next("1-10/4 * * * *", NULL, "2026-12-01T13:09:00Z", "2026-12-01T14:01:00Z");
	assert_next("50/5 * * * *", NULL, "2026-12-01T13:56:00Z", "2026-12-01T14:50:00Z");
	assert_next("0 0 * * *", NULL, "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z");
	assert_next("@hourly", NULL, "2026-12-01T13:15:00Z", "2026-12-01T14:00:00Z");
	assert_next("@daily", NULL, "2026-12-01T13:15:00Z", "2026-12-02T00:00:00Z");
	assert_next("@midnight", NULL, "2026-12-01T13:15:00Z", "2026-12-02T00:00:00Z");
	assert_next("@weekly", NULL, "2026-12-01T13:15:00Z", "2026-12-06T00:00:00Z");
	assert_next("@monthly", NULL, "2026-12-01T13:15:00Z", "2027-01-01T00:00:00Z");
	assert_next("@yearly", NULL, "2026-12-01T13:15:00Z", "2027-01-01T00:00:00Z");
	assert_next("@annually", NULL, "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z");
	assert_next("@every 90s", NULL, "2026-12-01T13:15:00Z", "2026-12-01T13:16:30Z");
	assert_next("@every 1ms", NULL, "2026-12-01T13:15:00Z", "2026-12-01T13:15:01Z");
	/* Names, either case, and 7 as Sunday. */
	assert_next("0 0 1 feb,JUN *", NULL, "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z");
	assert_next("0 9 * * Sat", NULL, "2026-12-01T13:15:00Z", "2026-12-05T09:00:00Z");
	assert_next("0 9 * * 7", NULL, "2026-12-01T13:15:00Z", "2026-12-06T09:00:00Z");
	assert_next("0 9 * * 0", NULL, "2026-12-01T13:15:00Z", "2026-12-06T09:00:00Z");
	assert_next("0 9 * * fri-7", NULL, "2026-12-01T13:15:00Z", "2026-12-04T09:00:00Z");
}

static void test_cron_next__month_ends_and_leap_days(void **state)
{
	(void)state;
	assert_next("0 0 31 * *", NULL, "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z");
	assert_next("0 0 31 * *", NULL, "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z");
	assert_next("0 0 30 * *", NULL, "2026-01-30T00:00:00Z", "2026-03-30T00:00:00Z");
	assert_next("0 0 29 2 *", NULL, "2026-01-01T00:00:00Z", "2028-02-29T00:00:00Z");
	assert_next("0 0 29 2 *", NULL, "2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z");
	/* 2100 is no leap year: the next Feb 29 is beyond five years. */
	assert_next("0 0 29 2 *", NULL, "2096-03-01T00:00:00Z", "-");
	assert_next("0 0 30 2 *", NULL, "2026-01-01T00:00:00Z", "-");
	assert_next("59 23 28-31 2 *", NULL, "2027-02-28T23:59:00Z", "2028-02-28T23:59:00Z");
	assert_next("59 23 28-31 2 *", NULL, "2028-02-28T23:59:00Z", "2028-02-29T23:59:00Z");
}

static void test_cron_next__day_of_month_or_day_of_week(void **state)
{
	(void)state;
	/* Both restricted: the 13th or a Friday. 2026-11-13 is a Friday. */
	assert_next("0 0 13 * 5", NULL, "2026-11-14T00:00:00Z", "2026-11-20T00:00:00Z");
	assert_next("0 0 13 * 5", NULL, "2026-12-11T00:00:00Z", "2026-12-13T00:00:00Z");
	/* One is "*": both must match. */
	assert_next("0 0 * * 5", NULL, "2026-12-01T00:00:00Z", "2026-12-04T00:00:00Z");
	assert_next("0 0 13 * *", NULL, "2026-12-01T00:00:00Z", "2026-12-13T00:00:00Z");
	/* "?" is "*", and so is "*\/1". */
	assert_next("0 0 13 * ?", NULL, "2026-12-01T00:00:00Z", "2026-12-13T00:00:00Z");
	assert_next("0 0 13 * */1", NULL, "2026-12-01T00:00:00Z", "2026-12-13T00:00:00Z");
}

static void test_cron_next__day_of_week_step_is_restricted(void **state)
{
	(void)state;
	/* "*\/2" in day of week: Sun, Tue, Thu, Sat, or the 13th. 2026-12-01 is a
	 * Tuesday. */
	assert_next("0 0 13 * */2", NULL, "2026-12-01T00:00:00Z", "2026-12-03T00:00:00Z");
}

/* Europe/Berlin: 2026-03-29 02:00 CET becomes 03:00 CEST; 2026-10-25 03:00
 * CEST becomes 02:00 CET. */
static void check_berlin(const struct cron_zone *z)
{
	/* The skipped hour: robfig/cron skips it. */
	assert_next("30 2 * * *", z, "2026-03-28T12:00:00Z", "2026-03-30T00:30:00Z");
	assert_next("0 * * * *", z, "2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z");
	assert_next("*/30 * * * *", z, "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z");
	assert_next("0 3 * * *", z, "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z");
	/* The repeated hour: once, at its first occurrence... */
	assert_next("30 2 * * *", z, "2026-10-24T12:00:00Z", "2026-10-25T00:30:00Z");
	assert_next("30 2 * * *", z, "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z");
	assert_next("30 2 25 10 *", z, "2026-10-25T00:45:00Z", "2027-10-25T00:30:00Z");
	/* ... unless every hour runs: then at each. */
	assert_next("0 * * * *", z, "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z");
	assert_next("0 * * * *", z, "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z");
	assert_next("*/20 * * * *", z, "2026-10-25T00:50:00Z", "2026-10-25T01:00:00Z");
	assert_next("* * * * *", z, "2026-10-25T00:59:00Z", "2026-10-25T01:00:00Z");
	/* Plain days in summer and winter. */
	assert_next("0 9 * * *", z, "2026-07-01T00:00:00Z", "2026-07-01T07:00:00Z");
	assert_next("0 9 * * *", z, "2026-12-01T00:00:00Z", "2026-12-01T08:00:00Z");
	assert_next("0 0 1 1 *", z, "2026-12-01T00:00:00Z", "2026-12-31T23:00:00Z");
}

static void test_cron_next__across_dst_in_zoneinfo(void **state)
{
	(void)state;
	cleanup_cron_zone struct cron_zone *z = zone("Europe/Berlin");
	check_berlin(z);
	/* Far beyond the file's last transition, its POSIX rule holds. */
	assert_next("0 12 * * *", z, "2090-07-01T00:00:00Z", "2090-07-01T10:00:00Z");
	assert_next("0 12 * * *", z, "2090-12-01T00:00:00Z", "2090-12-01T11:00:00Z");
}

static void test_cron_next__across_dst_in_a_posix_rule(void **state)
{
	(void)state;
	cleanup_cron_zone struct cron_zone *z = NULL;
	assert_int_equal(cron_zone_posix("CET-1CEST,M3.5.0,M10.5.0/3", &z, NULL), 0);
	check_berlin(z);
	cleanup_cron_zone struct cron_zone *au = NULL;
	assert_int_equal(cron_zone_posix("AEST-10AEDT,M10.1.0,M4.1.0/3", &au, NULL), 0);
	bool dst = false;
	assert_int_equal(cron_zone_offset(au, at("2027-01-15T00:00:00Z"), &dst), 11 * 3600);
	assert_true(dst);
	assert_int_equal(cron_zone_offset(au, at("2027-07-15T00:00:00Z"), &dst), 10 * 3600);
	assert_false(dst);
	cleanup_cron_zone struct cron_zone *fixed = NULL;
	assert_int_equal(cron_zone_posix("<+0530>-5:30", &fixed, NULL), 0);
	assert_next("0 9 * * *", fixed, "2026-12-01T00:00:00Z", "2026-12-01T03:30:00Z");
	struct cron_zone *bad = NULL;
	assert_int_equal(cron_zone_posix("CET-1CEST,M13.5.0,M10.5.0", &bad, NULL), -EINVAL);
	assert_int_equal(cron_zone_posix("X1", &bad, NULL), -EINVAL);
}

/* robfig/cron's own cases for America/New_York in 2012. */
static void test_cron_next__new_york_as_robfig(void **state)
{
	(void)state;
	cleanup_cron_zone struct cron_zone *z = zone("America/New_York");
	assert_next("30 2 11 Mar ?", z, "2012-03-11T05:00:00Z", "2013-03-11T06:30:00Z");
	assert_next("0 * * * ?", z, "2012-03-11T05:00:00Z", "2012-03-11T06:00:00Z");
	assert_next("0 * * * ?", z, "2012-03-11T06:00:00Z", "2012-03-11T07:00:00Z");
	assert_next("0 * * * ?", z, "2012-03-11T07:00:00Z", "2012-03-11T08:00:00Z");
	assert_next("0 1 * * ?", z, "2012-03-11T06:00:00Z", "2012-03-12T05:00:00Z");
	assert_next("0 2 * * ?", z, "2012-03-11T05:00:00Z", "2012-03-12T06:00:00Z");
	assert_next("30 2 04 Nov ?", z, "2012-11-04T04:00:00Z", "2012-11-04T07:30:00Z");
	assert_next("0 * * * ?", z, "2012-11-04T05:00:00Z", "2012-11-04T06:00:00Z");
	assert_next("0 * * * ?", z, "2012-11-04T06:00:00Z", "2012-11-04T07:00:00Z");
	/* robfig runs a 1am job twice that night; we run it once. */
	assert_next("0 1 * * ?", z, "2012-11-04T04:00:00Z", "2012-11-04T05:00:00Z");
	assert_next("0 1 * * ?", z, "2012-11-04T05:00:00Z", "2012-11-05T06:00:00Z");
}

static void test_cron_zone__names(void **state)
{
	(void)state;
	static const struct {
		const char *name, *msg;
	} bad[] = {
	    {"", "timeZone must be nil or non-empty string"},
	    {"Local", "timeZone must be an explicit time zone as defined in "
		      "https://www.iana.org/time-zones"},
	    {"../etc/passwd", "unknown time zone ../etc/passwd"},
	    {"Europe/./Berlin", "unknown time zone Europe/./Berlin"},
	    {"-Europe", "unknown time zone -Europe"},
	    {"America/Argentina_Buenos_Aires", "unknown time zone America/Argentina_Buenos_Aires"},
	    {"Mars/Olympus", "unknown time zone Mars/Olympus"},
	    {"Europe", "unknown time zone Europe"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cron_zone *z = NULL;
		cleanup_error struct error *err = NULL;
		assert_int_equal(cron_zone_load(bad[i].name, &z, &err), -EINVAL);
		assert_null(z);
		assert_string_equal(err->msg, bad[i].msg);
	}
	cleanup_cron_zone struct cron_zone *utc = zone("UTC");
	assert_int_equal(cron_zone_offset(utc, 0, NULL), 0);
	cleanup_cron_zone struct cron_zone *etc = zone("Etc/GMT+5");
	assert_int_equal(cron_zone_offset(etc, at("2026-07-01T00:00:00Z"), NULL), -5 * 3600);
	cron_zone_free(cron_zone_local());
}

static void test_cron_zone__refuses_broken_tzif(void **state)
{
	(void)state;
	size_t len = 0;
	cleanup_free char *data = util_read_file("/usr/share/zoneinfo/Europe/Berlin", &len);
	assert_non_null(data);
	struct cron_zone *z = NULL;
	for (size_t cut = 0; cut < 300 && cut < len; cut += 7) {
		if (cron_zone_parse("cut", (unsigned char *)data, cut, &z, NULL) == 0) {
			/* A cut inside the footer still leaves a zone. */
			assert_true(cut > 44);
			cron_zone_free(z);
		}
	}
	assert_int_equal(cron_zone_parse("x", (const unsigned char *)"TZifxx", 6, &z, NULL),
			 -EINVAL);
	assert_int_equal(cron_zone_parse("full", (unsigned char *)data, len, &z, NULL), 0);
	cron_zone_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cron_parse__accepts_every_syntax),
	    cmocka_unit_test(test_cron_parse__refuses_with_the_field_and_why),
	    cmocka_unit_test(test_cron_next__utc),
	    cmocka_unit_test(test_cron_next__month_ends_and_leap_days),
	    cmocka_unit_test(test_cron_next__day_of_month_or_day_of_week),
	    cmocka_unit_test(test_cron_next__day_of_week_step_is_restricted),
	    cmocka_unit_test(test_cron_next__across_dst_in_zoneinfo),
	    cmocka_unit_test(test_cron_next__across_dst_in_a_posix_rule),
	    cmocka_unit_test(test_cron_next__new_york_as_robfig),
	    cmocka_unit_test(test_cron_zone__names),
	    cmocka_unit_test(test_cron_zone__refuses_broken_tzif),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
