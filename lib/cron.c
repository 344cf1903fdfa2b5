/* cron.c: the cron schedule parser (robfig/cron's standard one, in its
 * words), next-time computation in a zone's local time, and the zones
 * themselves, read from TZif files.
 *
 * The next time is searched on the local calendar (month, day, hour,
 * minute, as robfig/cron does) and each matching local time is then turned
 * into the instants it names: none in a skipped hour, two in a repeated
 * one. Near a change of offset the search starts and stops three hours
 * wider, so that the earliest instant wins whatever order the local times
 * come in. This file must never touch the process's TZ or localtime(). */
#include "cron.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CRON__STAR   (1ULL << 63) /* the field was "*" or "?" */
#define CRON__SWING  (3 * 3600)	  /* the widest change of offset we allow for */
#define CRON__YEARS  5		  /* robfig/cron looks this far, no further */
#define CRON__MAXLEN 1024

struct cron_schedule {
	uint64_t field[5]; /* minute, hour, dom, month, dow: bit v for value v */
	int64_t every;	   /* > 0: "@every", in seconds */
};

enum { CRON__MIN, CRON__HOUR, CRON__DOM, CRON__MON, CRON__DOW };

static const char *const cron__month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
						"aug", "sep", "oct", "nov", "dec", NULL};
static const char *const cron__day_names[] = {"sun", "mon", "tue", "wed",
					      "thu", "fri", "sat", NULL};

struct cron__bounds {
	long long lo, hi;	  /* what "*" means */
	long long top;		  /* the largest value allowed (7 for Sunday) */
	const char *const *names; /* names[i] is lo + i (dow: i) */
	const char *what;
};

static const struct cron__bounds cron__bounds[5] = {
    {0, 59, 59, NULL, "minute"},
    {0, 23, 23, NULL, "hour"},
    {1, 31, 31, NULL, "day of month"},
    {1, 12, 12, cron__month_names, "month"},
    {0, 6, 7, cron__day_names, "day of week"},
};

/* ---- parsing ---------------------------------------------------------- */

/* Go's %q of s, near enough for messages: quotes, and escapes for bytes
 * that are not printable ASCII. */
static char *cron__quote(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(4 * n + 3), *p = out;
	*p++ = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch < 0x20 || ch >= 0x7f) {
			p += sprintf(p, "\\x%02x", ch);
		} else {
			*p++ = (char)ch;
		}
	}
	*p++ = '"';
	*p = '\0';
	return out;
}

/* robfig's mustParseInt: Go's strconv.Atoi, then no negatives. Returns a
 * malloc'd complaint or NULL. */
static char *cron__int(const char *s, long long *out)
{
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p || strspn(p, "0123456789") != strlen(p)) {
		cleanup_free char *q = cron__quote(s);
		return xasprintf(
		    "failed to parse int from %s: strconv.Atoi: parsing %s: invalid syntax", s, q);
	}
	unsigned long long v = 0;
	for (; *p; p++) {
		if (v > ((unsigned long long)LLONG_MAX + 1 - (unsigned)(*p - '0')) / 10) {
			cleanup_free char *q = cron__quote(s);
			return xasprintf("failed to parse int from %s: strconv.Atoi: parsing %s: "
					 "value out of range",
					 s, q);
		}
		v = v * 10 + (unsigned)(*p - '0');
	}
	if ((!neg && v > (unsigned long long)LLONG_MAX)) {
		cleanup_free char *q = cron__quote(s);
		return xasprintf(
		    "failed to parse int from %s: strconv.Atoi: parsing %s: value out of range", s,
		    q);
	}
	long long n = neg ? (long long)(0 - v) : (long long)v;
	if (n < 0)
		return xasprintf("negative number (%lld) not allowed: %s", n, s);
	*out = n;
	return NULL;
}

static char *cron__int_or_name(const char *s, const struct cron__bounds *b, long long *out)
{
	for (size_t i = 0; b->names && b->names[i]; i++)
		if (!strcasecmp(s, b->names[i])) {
			*out = (b->names == cron__month_names ? b->lo : 0) + (long long)i;
			return NULL;
		}
	return cron__int(s, out);
}

/* robfig's getRange: one item of a list. */
static char *cron__range(const char *expr, const struct cron__bounds *b, uint64_t *bits)
{
	cleanup_free char *copy = xstrdup(expr);
	char *slash = strchr(copy, '/');
	if (slash && strchr(slash + 1, '/'))
		return xasprintf("too many slashes: %s", expr);
	if (slash)
		*slash = '\0';
	long long start = 0, end = 0, step = 1;
	uint64_t extra = 0;
	char *dash = strchr(copy, '-');
	bool single = !dash;
	if (dash)
		*dash = '\0';
	if (!strcmp(copy, "*") || !strcmp(copy, "?")) {
		/* robfig ignores what follows a hyphen here. */
		start = b->lo;
		end = b->hi;
		extra = CRON__STAR;
	} else {
		char *why = cron__int_or_name(copy, b, &start);
		if (why)
			return why;
		if (!dash) {
			end = start;
		} else {
			if (strchr(dash + 1, '-'))
				return xasprintf("too many hyphens: %s", expr);
			if ((why = cron__int_or_name(dash + 1, b, &end)))
				return why;
		}
	}
	if (slash) {
		char *why = cron__int(slash + 1, &step);
		if (why)
			return why;
		if (single)
			end = b->hi;
		if (step > 1)
			extra = 0;
	}
	if (start < b->lo)
		return xasprintf("beginning of range (%lld) below minimum (%lld): %s", start, b->lo,
				 expr);
	if (end > b->top)
		return xasprintf("end of range (%lld) above maximum (%lld): %s", end, b->top, expr);
	if (start > end)
		return xasprintf("beginning of range (%lld) beyond end of range (%lld): %s", start,
				 end, expr);
	if (step == 0)
		return xasprintf("step of range should be a positive number: %s", expr);
	uint64_t v = 0;
	for (long long i = start; i <= end; i += step)
		v |= 1ULL << i;
	*bits = v | extra;
	return NULL;
}

/* One field: a comma-separated list. */
static char *cron__field(const char *field, const struct cron__bounds *b, uint64_t *bits)
{
	cleanup_free char *copy = xstrdup(field);
	*bits = 0;
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		uint64_t v = 0;
		char *why = cron__range(item, b, &v);
		if (why)
			return why;
		*bits |= v;
	}
	if (!(*bits & ~CRON__STAR))
		return xasprintf("no value in list: %s", field);
	if (b->top == 7 && (*bits & (1ULL << 7))) /* 7 is Sunday too */
		*bits = (*bits & ~(1ULL << 7)) | 1ULL;
	return NULL;
}

/* Go's time.ParseDuration, in whole seconds (robfig rounds @every down to
 * a second, and up to one). */
static char *cron__duration(const char *s, int64_t *out)
{
	cleanup_free char *q = cron__quote(s);
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!strcmp(p, "0")) {
		*out = 0;
		return NULL;
	}
	if (!*p)
		return xasprintf("time: invalid duration %s", q);
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1},	  {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3},
		     {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},	   {"h", 3600e9}};
	double total = 0;
	while (*p) {
		if (!(isdigit((unsigned char)*p) || *p == '.'))
			return xasprintf("time: invalid duration %s", q);
		const char *num = p;
		while (isdigit((unsigned char)*p))
			p++;
		bool pre = p > num, post = false;
		if (*p == '.') {
			p++;
			const char *f = p;
			while (isdigit((unsigned char)*p))
				p++;
			post = p > f;
		}
		if (!pre && !post)
			return xasprintf("time: invalid duration %s", q);
		double v = strtod(num, NULL);
		const char *u = p;
		while (*p && *p != '.' && !isdigit((unsigned char)*p))
			p++;
		if (p == u)
			return xasprintf("time: missing unit in duration %s", q);
		double mul = 0;
		for (size_t i = 0; i < ARRAY_SIZE(units); i++)
			if (strlen(units[i].unit) == (size_t)(p - u) &&
			    !strncmp(u, units[i].unit, (size_t)(p - u)))
				mul = units[i].ns;
		if (!mul) {
			cleanup_free char *unit = xstrndup(u, (size_t)(p - u));
			cleanup_free char *uq = cron__quote(unit);
			return xasprintf("time: unknown unit %s in duration %s", uq, q);
		}
		total += v * mul;
		if (total > 9223372036854775807.0)
			return xasprintf("time: invalid duration %s", q);
	}
	*out = neg ? 0 : (int64_t)(total / 1e9);
	return NULL;
}

static int cron__descriptor(const char *spec, struct cron_schedule *s, struct error **err)
{
	static const struct {
		const char *name;
		const char *fields;
	} macros[] = {
	    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
	    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},	  {"@midnight", "0 0 * * *"},
	    {"@hourly", "0 * * * *"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(macros); i++)
		if (!strcmp(spec, macros[i].name)) {
			struct cron_schedule *m = NULL;
			if (cron_parse(macros[i].fields, &m, err) < 0)
				return -EINVAL;
			*s = *m;
			cron_free(m);
			return 0;
		}
	if (!strncmp(spec, "@every ", 7)) {
		int64_t d = 0;
		cleanup_free char *why = cron__duration(spec + 7, &d);
		if (why)
			return error_set(err, EINVAL, "failed to parse duration %s: %s", spec, why);
		s->every = d < 1 ? 1 : d;
		return 0;
	}
	return error_set(err, EINVAL, "unrecognized descriptor: %s", spec);
}

int cron_parse(const char *spec, struct cron_schedule **out, struct error **err)
{
	*out = NULL;
	if (!spec || !*spec)
		return error_set(err, EINVAL, "empty spec string");
	if (strlen(spec) > CRON__MAXLEN)
		return error_set(err, EINVAL, "schedule longer than %d characters", CRON__MAXLEN);
	if (strstr(spec, "TZ"))
		return error_set(err, EINVAL, "%s", CRON_TZ_MESSAGE);
	struct cron_schedule *s = xcalloc(1, sizeof(*s));
	if (spec[0] == '@') {
		if (cron__descriptor(spec, s, err) < 0) {
			free(s);
			return -EINVAL;
		}
		*out = s;
		return 0;
	}
	/* Go's strings.Fields: split on ASCII white space. */
	cleanup_free char *copy = xstrdup(spec);
	char *fields[5] = {0};
	size_t n = 0;
	char *save = NULL;
	for (char *f = strtok_r(copy, " \t\n\v\f\r", &save); f;
	     f = strtok_r(NULL, " \t\n\v\f\r", &save)) {
		if (n < 5)
			fields[n] = f;
		n++;
	}
	if (n != 5) {
		cleanup_free char *again = xstrdup(spec);
		size_t len = 0;
		char *list = xmalloc(strlen(spec) + 3);
		list[len++] = '[';
		save = NULL;
		for (char *f = strtok_r(again, " \t\n\v\f\r", &save); f;
		     f = strtok_r(NULL, " \t\n\v\f\r", &save))
			len += (size_t)sprintf(list + len, "%s%s", len > 1 ? " " : "", f);
		list[len++] = ']';
		list[len] = '\0';
		error_set(err, EINVAL, "expected exactly 5 fields, found %zu: %s", n, list);
		free(list);
		free(s);
		return -EINVAL;
	}
	for (size_t i = 0; i < 5; i++) {
		cleanup_free char *why = cron__field(fields[i], &cron__bounds[i], &s->field[i]);
		if (why) {
			free(s);
			return error_set(err, EINVAL, "%s (%s field)", why, cron__bounds[i].what);
		}
	}
	*out = s;
	return 0;
}

void cron_free(struct cron_schedule *s)
{
	free(s);
}

void cron_freep(struct cron_schedule **s)
{
	cron_free(*s);
	*s = NULL;
}

/* ---- the calendar ----------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static int64_t cron__days(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void cron__civil(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int64_t cron__floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static bool cron__leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int cron__dim(int64_t y, int m)
{
	static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && cron__leap(y) ? 29 : dim[m - 1];
}

/* 0 Sunday .. 6 Saturday. */
static int cron__wday(int64_t days)
{
	int64_t w = (days + 4) % 7;
	return (int)(w < 0 ? w + 7 : w);
}

struct cron__time {
	int64_t y;
	int mon, d, h, min;
};

static bool cron__bit(uint64_t field, int v)
{
	return field & (1ULL << v);
}

/* robfig's dayMatches: both day fields must match when either is "*",
 * else either may. */
static bool cron__day_matches(const struct cron_schedule *s, const struct cron__time *c)
{
	bool dom = cron__bit(s->field[CRON__DOM], c->d);
	bool dow = cron__bit(s->field[CRON__DOW], cron__wday(cron__days(c->y, c->mon, c->d)));
	if ((s->field[CRON__DOM] & CRON__STAR) || (s->field[CRON__DOW] & CRON__STAR))
		return dom && dow;
	return dom || dow;
}

static void cron__next_month(struct cron__time *c)
{
	c->d = 1;
	c->h = c->min = 0;
	if (++c->mon > 12) {
		c->mon = 1;
		c->y++;
	}
}

/* Moves c to the first local time at or after it that s matches; false if
 * none comes before the year limit. */
static bool cron__match(const struct cron_schedule *s, struct cron__time *c, int64_t limit)
{
	for (;;) {
		if (c->y > limit)
			return false;
		if (!cron__bit(s->field[CRON__MON], c->mon) || c->d > cron__dim(c->y, c->mon)) {
			cron__next_month(c);
			continue;
		}
		if (!cron__day_matches(s, c)) {
			c->d++;
			c->h = c->min = 0;
			continue;
		}
		if (!cron__bit(s->field[CRON__HOUR], c->h)) {
			c->min = 0;
			if (++c->h > 23) {
				c->h = 0;
				c->d++;
			}
			continue;
		}
		if (!cron__bit(s->field[CRON__MIN], c->min)) {
			if (++c->min > 59) {
				c->min = 0;
				if (++c->h > 23) {
					c->h = 0;
					c->d++;
				}
			}
			continue;
		}
		return true;
	}
}

static int64_t cron__local_secs(const struct cron__time *c)
{
	return cron__days(c->y, c->mon, c->d) * 86400 + c->h * 3600 + c->min * 60;
}

static struct cron__time cron__from_local(int64_t l)
{
	struct cron__time c = {0};
	int64_t days = cron__floor_div(l, 86400), rem = l - days * 86400;
	cron__civil(days, &c.y, &c.mon, &c.d);
	c.h = (int)(rem / 3600);
	c.min = (int)(rem % 3600 / 60);
	return c;
}

static int cron__off(const struct cron_zone *z, int64_t t)
{
	return z ? cron_zone_offset(z, t, NULL) : 0;
}

int64_t cron_next(const struct cron_schedule *s, const struct cron_zone *z, int64_t t)
{
	if (s->every > 0)
		return t + s->every;
	bool near = cron__off(z, t - CRON__SWING) != cron__off(z, t + CRON__SWING);
	int64_t l = t + cron__off(z, t);
	l = cron__floor_div(l, 60) * 60 + (near ? -CRON__SWING : 60);
	struct cron__time c = cron__from_local(l);
	int64_t limit = c.y + CRON__YEARS, best = -1, stop = INT64_MAX;
	bool every_hour = (s->field[CRON__HOUR] & ~CRON__STAR) == 0xffffffULL;
	while (cron__match(s, &c, limit)) {
		int64_t local = cron__local_secs(&c);
		if (best >= 0 && local > stop)
			break;
		/* The instants this local time names: one per offset around it
		 * that maps it back to itself. */
		int offs[2] = {cron__off(z, local - 86400), cron__off(z, local + 86400)};
		int64_t u[2];
		int n = 0;
		for (int i = 0; i < 2; i++) {
			if (i == 1 && offs[1] == offs[0])
				break;
			int64_t cand = local - offs[i];
			if (cron__off(z, cand) == offs[i])
				u[n++] = cand;
		}
		if (n == 2 && u[1] < u[0]) {
			int64_t tmp = u[0];
			u[0] = u[1];
			u[1] = tmp;
		}
		for (int i = 0; i < n; i++) {
			if (u[i] <= t || (i == 1 && !every_hour))
				continue;
			if (best < 0 || u[i] < best) {
				bool first = best < 0;
				best = u[i];
				if (first)
					stop = local + (cron__off(z, best - CRON__SWING) !=
								cron__off(z, best + CRON__SWING)
							    ? CRON__SWING
							    : 0);
			}
		}
		if (best >= 0 && local >= stop)
			break;
		if (++c.min > 59) {
			c.min = 0;
			if (++c.h > 23) {
				c.h = 0;
				c.d++;
			}
		}
	}
	return best;
}

/* ---- zones ------------------------------------------------------------ */

/* A POSIX TZ rule: std offset, and dst with its start and end. */
struct cron__rule_date {
	char kind; /* 'J': 1..365 without Feb 29; 'D': 0..365; 'M': month.week.day */
	int a, b, c;
	int secs; /* local time of the change */
};

struct cron__posix {
	int std_off, dst_off; /* east positive */
	bool has_dst;
	struct cron__rule_date start, end;
};

struct cron__type {
	int32_t off;
	bool dst;
};

struct cron_zone {
	char *name;
	size_t ntrans;
	int64_t *trans;
	unsigned char *idx;
	size_t ntypes;
	struct cron__type *types;
	bool has_rule;
	struct cron__posix rule;
};

static const char *cron__posix_name(const char *p)
{
	if (*p == '<') {
		const char *e = strchr(p, '>');
		return e && e - p >= 4 ? e + 1 : NULL;
	}
	const char *s = p;
	while (isalpha((unsigned char)*p))
		p++;
	return p - s >= 3 ? p : NULL;
}

/* [+-]hh[:mm[:ss]], hours up to max. */
static const char *cron__posix_hms(const char *p, int max, int *out)
{
	int sign = 1;
	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	if (!isdigit((unsigned char)*p))
		return NULL;
	int v[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++) {
		if (i && *p != ':')
			break;
		if (i)
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		int n = 0, digits = 0;
		while (isdigit((unsigned char)*p) && digits < 3) {
			n = n * 10 + (*p++ - '0');
			digits++;
		}
		if (i && n > 59)
			return NULL;
		v[i] = n;
	}
	if (v[0] > max)
		return NULL;
	*out = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
	return p;
}

static const char *cron__posix_num(const char *p, int lo, int hi, int *out)
{
	if (!isdigit((unsigned char)*p))
		return NULL;
	int n = 0;
	while (isdigit((unsigned char)*p) && n <= hi)
		n = n * 10 + (*p++ - '0');
	if (n < lo || n > hi)
		return NULL;
	*out = n;
	return p;
}

static const char *cron__posix_date(const char *p, struct cron__rule_date *d)
{
	if (*p == 'M') {
		d->kind = 'M';
		if (!(p = cron__posix_num(p + 1, 1, 12, &d->a)) || *p++ != '.' ||
		    !(p = cron__posix_num(p, 1, 5, &d->b)) || *p++ != '.' ||
		    !(p = cron__posix_num(p, 0, 6, &d->c)))
			return NULL;
	} else if (*p == 'J') {
		d->kind = 'J';
		if (!(p = cron__posix_num(p + 1, 1, 365, &d->a)))
			return NULL;
	} else {
		d->kind = 'D';
		if (!(p = cron__posix_num(p, 0, 365, &d->a)))
			return NULL;
	}
	d->secs = 2 * 3600;
	if (*p == '/' && !(p = cron__posix_hms(p + 1, 167, &d->secs)))
		return NULL;
	return p;
}

static int cron__posix_parse(const char *s, struct cron__posix *r)
{
	memset(r, 0, sizeof(*r));
	const char *p = cron__posix_name(s);
	int off = 0;
	if (!p || !(p = cron__posix_hms(p, 24, &off)))
		return -1;
	r->std_off = -off;
	if (!*p)
		return 0;
	if (!(p = cron__posix_name(p)))
		return -1;
	r->has_dst = true;
	r->dst_off = r->std_off + 3600;
	if (*p && *p != ',') {
		if (!(p = cron__posix_hms(p, 24, &off)))
			return -1;
		r->dst_off = -off;
	}
	if (!*p) {
		/* No rule: the United States' since 2007, as Go and glibc. */
		r->start = (struct cron__rule_date){'M', 3, 2, 0, 7200};
		r->end = (struct cron__rule_date){'M', 11, 1, 0, 7200};
		return 0;
	}
	if (*p++ != ',' || !(p = cron__posix_date(p, &r->start)) || *p++ != ',' ||
	    !(p = cron__posix_date(p, &r->end)) || *p)
		return -1;
	return 0;
}

/* Seconds from the start of year y (local) to the day d names. */
static int64_t cron__rule_day(int64_t y, const struct cron__rule_date *d)
{
	int64_t day = 0;
	switch (d->kind) {
	case 'J':
		day = d->a - 1 + (cron__leap(y) && d->a >= 60);
		break;
	case 'D':
		day = d->a;
		break;
	default: {
		int64_t first = cron__days(y, d->a, 1);
		int wd = cron__wday(first);
		int md = 1 + (d->c - wd + 7) % 7 + (d->b - 1) * 7;
		while (md > cron__dim(y, d->a))
			md -= 7;
		day = first + md - 1 - cron__days(y, 1, 1);
	}
	}
	return day * 86400 + d->secs;
}

static int cron__posix_offset(const struct cron__posix *r, int64_t t, bool *dst)
{
	if (!r->has_dst) {
		*dst = false;
		return r->std_off;
	}
	int64_t y;
	int m, d;
	cron__civil(cron__floor_div(t + r->std_off, 86400), &y, &m, &d);
	int64_t y0 = cron__days(y, 1, 1) * 86400;
	int64_t start = y0 + cron__rule_day(y, &r->start) - r->std_off;
	int64_t end = y0 + cron__rule_day(y, &r->end) - r->dst_off;
	if (start < end)
		*dst = t >= start && t < end;
	else
		*dst = !(t >= end && t < start);
	return *dst ? r->dst_off : r->std_off;
}

int cron_zone_offset(const struct cron_zone *z, int64_t t, bool *dst)
{
	bool dummy;
	if (!dst)
		dst = &dummy;
	if (!z->ntrans) {
		if (z->has_rule)
			return cron__posix_offset(&z->rule, t, dst);
		*dst = z->types[0].dst;
		return z->types[0].off;
	}
	if (t < z->trans[0]) {
		size_t first = 0;
		for (size_t i = 0; i < z->ntypes; i++)
			if (!z->types[i].dst) {
				first = i;
				break;
			}
		*dst = z->types[first].dst;
		return z->types[first].off;
	}
	size_t lo = 0, hi = z->ntrans; /* the last transition <= t is in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->trans[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	if (lo == z->ntrans - 1 && z->has_rule)
		return cron__posix_offset(&z->rule, t, dst);
	const struct cron__type *ty = &z->types[z->idx[lo]];
	*dst = ty->dst;
	return ty->off;
}

static uint32_t cron__be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t cron__be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)cron__be32(p) << 32 | cron__be32(p + 4));
}

int cron_zone_parse(const char *name, const unsigned char *data, size_t len, struct cron_zone **out,
		    struct error **err)
{
	*out = NULL;
	const unsigned char *p = data, *end = data + len;
	if (len < 44 || memcmp(p, "TZif", 4))
		return error_set(err, EINVAL, "%s: not a TZif file", name);
	int version = p[4] ? p[4] - '0' : 1;
	size_t tsize = 4;
	for (int pass = 0;; pass++) {
		if ((size_t)(end - p) < 44 || memcmp(p, "TZif", 4))
			return error_set(err, EINVAL, "%s: a TZif header is cut short", name);
		uint32_t isut = cron__be32(p + 20), isstd = cron__be32(p + 24),
			 leap = cron__be32(p + 28), timecnt = cron__be32(p + 32),
			 typecnt = cron__be32(p + 36), charcnt = cron__be32(p + 40);
		p += 44;
		uint64_t need = (uint64_t)timecnt * (tsize + 1) + (uint64_t)typecnt * 6 + charcnt +
				(uint64_t)leap * (tsize + 4) + isstd + isut;
		if (need > (uint64_t)(end - p) || typecnt == 0 || typecnt > 256)
			return error_set(err, EINVAL, "%s: TZif data is cut short", name);
		if (version >= 2 && pass == 0) {
			p += need;
			tsize = 8;
			continue;
		}
		struct cron_zone *z = xcalloc(1, sizeof(*z));
		z->name = xstrdup(name);
		z->ntrans = timecnt;
		z->trans = xcalloc(timecnt + 1, sizeof(*z->trans));
		z->idx = xcalloc(timecnt + 1, 1);
		z->ntypes = typecnt;
		z->types = xcalloc(typecnt, sizeof(*z->types));
		for (uint32_t i = 0; i < timecnt; i++) {
			z->trans[i] = tsize == 8 ? cron__be64(p) : (int32_t)cron__be32(p);
			p += tsize;
			if (i && z->trans[i] <= z->trans[i - 1]) {
				cron_zone_free(z);
				return error_set(err, EINVAL, "%s: transitions out of order", name);
			}
		}
		for (uint32_t i = 0; i < timecnt; i++) {
			z->idx[i] = *p++;
			if (z->idx[i] >= typecnt) {
				cron_zone_free(z);
				return error_set(err, EINVAL, "%s: a transition to no type", name);
			}
		}
		for (uint32_t i = 0; i < typecnt; i++, p += 6) {
			int32_t off = (int32_t)cron__be32(p);
			if (off < -26 * 3600 || off > 26 * 3600) {
				cron_zone_free(z);
				return error_set(err, EINVAL, "%s: an offset out of range", name);
			}
			z->types[i] = (struct cron__type){off, p[4] != 0};
		}
		p += charcnt + (uint64_t)leap * (tsize + 4) + isstd + isut;
		if (version >= 2 && p < end && *p == '\n') {
			const unsigned char *nl = memchr(p + 1, '\n', (size_t)(end - p - 1));
			if (nl && nl > p + 1) {
				cleanup_free char *rule =
				    xstrndup((const char *)p + 1, (size_t)(nl - p - 1));
				z->has_rule = cron__posix_parse(rule, &z->rule) == 0;
			}
		}
		*out = z;
		return 0;
	}
}

int cron_zone_posix(const char *rule, struct cron_zone **out, struct error **err)
{
	*out = NULL;
	struct cron__posix r;
	if (cron__posix_parse(rule, &r) < 0)
		return error_set(err, EINVAL, "not a POSIX TZ rule: %s", rule);
	struct cron_zone *z = xcalloc(1, sizeof(*z));
	z->name = xstrdup(rule);
	z->ntypes = 1;
	z->types = xcalloc(1, sizeof(*z->types));
	z->types[0].off = r.std_off;
	z->has_rule = true;
	z->rule = r;
	*out = z;
	return 0;
}

static struct cron_zone *cron__utc(void)
{
	struct cron_zone *z = xcalloc(1, sizeof(*z));
	z->name = xstrdup("UTC");
	z->ntypes = 1;
	z->types = xcalloc(1, sizeof(*z->types));
	return z;
}

/* Kubernetes' validTimeZoneCharacters, for each part between slashes. */
static bool cron__zone_part_ok(const char *p, size_t n)
{
	if (n < 1 || n > 14 || (n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)) ||
	    p[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)p[i]) && !strchr(".-_+", p[i]))
			return false;
	return true;
}

int cron_zone_check_name(const char *name, struct error **err)
{
	if (!name || !*name)
		return error_set(err, EINVAL, "timeZone must be nil or non-empty string");
	for (const char *p = name;;) {
		size_t n = strcspn(p, "/");
		if (!cron__zone_part_ok(p, n))
			return error_set(err, EINVAL, "unknown time zone %s", name);
		if (!p[n])
			break;
		p += n + 1;
	}
	if (!strcasecmp(name, "Local"))
		return error_set(err, EINVAL,
				 "timeZone must be an explicit time zone as defined in "
				 "https://www.iana.org/time-zones");
	return 0;
}

static struct cron_zone *cron__zone_file(const char *name, const char *path)
{
	size_t len = 0;
	cleanup_free char *data = util_read_file(path, &len);
	struct cron_zone *z = NULL;
	if (data && cron_zone_parse(name, (const unsigned char *)data, len, &z, NULL) == 0)
		return z;
	return NULL;
}

int cron_zone_load(const char *name, struct cron_zone **out, struct error **err)
{
	*out = NULL;
	if (cron_zone_check_name(name, err) < 0)
		return -EINVAL;
	if (!strcmp(name, "UTC")) {
		*out = cron__utc();
		return 0;
	}
	static const char *const dirs[] = {"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo",
					   "/usr/lib/locale/TZ", "/etc/zoneinfo"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		cleanup_free char *path = xasprintf("%s/%s", dirs[i], name);
		if ((*out = cron__zone_file(name, path)))
			return 0;
	}
	return error_set(err, EINVAL, "unknown time zone %s", name);
}

struct cron_zone *cron_zone_local(void)
{
	struct cron_zone *z = cron__zone_file("Local", "/etc/localtime");
	return z ? z : cron__utc();
}

void cron_zone_free(struct cron_zone *z)
{
	if (!z)
		return;
	free(z->name);
	free(z->trans);
	free(z->idx);
	free(z->types);
	free(z);
}

void cron_zone_freep(struct cron_zone **z)
{
	cron_zone_free(*z);
	*z = NULL;
}
