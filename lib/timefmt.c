/* timefmt.c: RFC 3339 formatting and strict parsing (see timefmt.h),
 * by hand so that no locale, no strptime leniency (leading blanks, one-digit
 * fields) and no range overflow slips through. */
#include "timefmt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* n decimal digits of v at p. */
static void timefmt__put(char *p, int n, int v)
{
	for (int i = n - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
}

/* "YYYY-MM-DDTHH:MM:SS" of t, clamped to years 0 to 9999. */
static void timefmt__head(time_t t, char buf[static RFC3339_SIZE])
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || tm.tm_year < -1900)
		tm = (struct tm){.tm_year = -1900, .tm_mday = 1};
	else if (tm.tm_year > 9999 - 1900)
		tm = (struct tm){.tm_year = 9999 - 1900,
				 .tm_mon = 11,
				 .tm_mday = 31,
				 .tm_hour = 23,
				 .tm_min = 59,
				 .tm_sec = 59};
	memcpy(buf, "0000-00-00T00:00:00", 20);
	timefmt__put(buf, 4, tm.tm_year + 1900);
	timefmt__put(buf + 5, 2, tm.tm_mon + 1);
	timefmt__put(buf + 8, 2, tm.tm_mday);
	timefmt__put(buf + 11, 2, tm.tm_hour);
	timefmt__put(buf + 14, 2, tm.tm_min);
	timefmt__put(buf + 17, 2, tm.tm_sec);
}

void rfc3339_format(time_t t, char buf[static RFC3339_SIZE])
{
	char head[RFC3339_SIZE];
	timefmt__head(t, head);
	snprintf(buf, RFC3339_SIZE, "%.19sZ", head);
}

void rfc3339_format_micro(int64_t usec, char buf[static RFC3339_MICRO_SIZE])
{
	int64_t sec = usec / 1000000, frac = usec % 1000000;
	if (frac < 0) {
		sec--;
		frac += 1000000;
	}
	char head[RFC3339_SIZE];
	timefmt__head((time_t)sec, head);
	snprintf(buf, RFC3339_MICRO_SIZE, "%.19s.%06dZ", head, (int)frac);
}

/* n decimal digits at s into *out. */
static bool timefmt__digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static int timefmt__days_in_month(int year, int month)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	return month == 2 && leap ? 29 : days[month - 1];
}

int rfc3339_parse(const char *s, time_t *out)
{
	int y, mo, d, h, mi, sec;
	/* Every check reads at most up to the first byte that fails, so a
	 * short string stops at its NUL. */
	if (!s || !timefmt__digits(s, 4, &y) || s[4] != '-' || !timefmt__digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !timefmt__digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !timefmt__digits(s + 11, 2, &h) || s[13] != ':' || !timefmt__digits(s + 14, 2, &mi) ||
	    s[16] != ':' || !timefmt__digits(s + 17, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > timefmt__days_in_month(y, mo) || h > 23 || mi > 59 ||
	    sec > 59)
		return -1;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	long off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (!timefmt__digits(p + 1, 2, &oh) || p[3] != ':' ||
		    !timefmt__digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -1;
		off = (oh * 3600L + om * 60L) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	struct tm tm = {.tm_year = y - 1900,
			.tm_mon = mo - 1,
			.tm_mday = d,
			.tm_hour = h,
			.tm_min = mi,
			.tm_sec = sec};
	*out = timegm(&tm) - off;
	return 0;
}
