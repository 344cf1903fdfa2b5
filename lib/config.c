/* config.c: table-driven loading of corral.conf through inih.
 *
 * The file is read whole before any field changes from its default, so that
 * [cluster] comes before the daemon's own section whatever their order, and
 * an error names the first bad line. Debian's inih is built without line
 * numbers in the handler, so the line reader counts them. This file must
 * never touch inih's global options: they belong to the whole process. */
#include "config.h"
#include "util.h"

#include <ini.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One value seen in the file for one key of the table. */
struct config__value {
	char *text;
	int line; /* 0: not set */
};

struct config__ctx {
	const char *path;
	const char *section;
	const struct config_key *keys;
	size_t nkeys;
	struct config__value *shared; /* [cluster], per key */
	struct config__value *own;    /* the daemon's section, per key */
	FILE *file;
	int line;     /* of the line inih is handling */
	int err_line; /* first error found by us, 0: none */
	char *err_msg;
};

static const struct config_key *config__find(const struct config_key *keys, const char *name)
{
	for (const struct config_key *k = keys; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

static void config__fail(struct config__ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void config__fail(struct config__ctx *c, const char *fmt, ...)
{
	if (c->err_line)
		return; /* keep the first */
	va_list ap;
	va_start(ap, fmt);
	c->err_line = c->line;
	c->err_msg = xvasprintf(fmt, ap);
	va_end(ap);
}

/* fgets() for inih, counting lines. A line longer than inih's buffer would
 * come back in pieces that parse as separate lines; refuse it instead. */
static char *config__reader(char *str, int num, void *stream)
{
	struct config__ctx *c = stream;
	if (!fgets(str, num, c->file))
		return NULL;
	c->line++;
	size_t len = strlen(str);
	if (len > 0 && str[len - 1] == '\n')
		return str;
	int ch = getc(c->file);
	if (ch == EOF || ch == '\n')
		return str; /* last line without newline, or an exact fit */
	while (ch != EOF && ch != '\n')
		ch = getc(c->file);
	config__fail(c, "line longer than %d characters", num - 3);
	str[0] = '\0';
	return str;
}

static int config__handler(void *user, const char *section, const char *name, const char *value)
{
	struct config__ctx *c = user;
	struct config__value *slot;
	if (!section[0]) {
		config__fail(c, "key '%s' outside any section", name);
		return 1;
	}
	if (strcmp(section, c->section) == 0)
		slot = c->own;
	else if (strcmp(section, CONFIG_SHARED_SECTION) == 0)
		slot = c->shared;
	else
		return 1; /* another daemon's */
	const struct config_key *k = config__find(c->keys, name);
	if (!k) {
		if (slot == c->own)
			config__fail(c, "unknown key '%s' in [%s]", name, section);
		return 1;
	}
	slot += k - c->keys;
	/* A repeated key (or a continuation line) replaces the value. */
	free(slot->text);
	slot->text = xstrdup(value ? value : "");
	slot->line = c->line;
	return 1;
}

int config_parse_int(const char *s, long long min, long long max, long long *out,
		     struct error **err)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno == ERANGE)
		return error_set(err, EINVAL, "'%s' is not an integer", s);
	if (min < max && (v < min || v > max))
		return error_set(err, ERANGE, "%lld is out of range %lld..%lld", v, min, max);
	*out = v;
	return 0;
}

int config_parse_double(const char *s, long long min, long long max, double *out,
			struct error **err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno == ERANGE || !isfinite(v))
		return error_set(err, EINVAL, "'%s' is not a number", s);
	if (min < max && (v < (double)min || v > (double)max))
		return error_set(err, ERANGE, "%s is out of range %lld..%lld", s, min, max);
	*out = v;
	return 0;
}

int config_parse_bool(const char *s, bool *out, struct error **err)
{
	static const char *yes[] = {"true", "yes", "on", "1"};
	static const char *no[] = {"false", "no", "off", "0"};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return error_set(err, EINVAL, "'%s' is not a boolean (true/false, yes/no, on/off, 1/0)", s);
}

int config_parse_duration(const char *s, uint64_t *ms, struct error **err)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	uint64_t total = 0;
	const char *p = s;
	if (!*p)
		goto bad;
	while (*p) {
		if (*p < '0' || *p > '9')
			goto bad;
		uint64_t n = 0;
		while (*p >= '0' && *p <= '9') {
			if (n > (UINT64_MAX - 9) / 10)
				goto range;
			n = n * 10 + (uint64_t)(*p++ - '0');
		}
		size_t ulen = 0;
		while (p[ulen] && (p[ulen] < '0' || p[ulen] > '9'))
			ulen++;
		size_t i;
		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (strlen(units[i].unit) == ulen && strncmp(p, units[i].unit, ulen) == 0)
				break;
		if (i == ARRAY_SIZE(units))
			goto bad;
		if (n > (UINT64_MAX - total) / units[i].ms)
			goto range;
		total += n * units[i].ms;
		p += ulen;
	}
	*ms = total;
	return 0;
bad:
	return error_set(err, EINVAL,
			 "'%s' is not a duration (numbers with units ms, s, m, h: 1m30s)", s);
range:
	return error_set(err, ERANGE, "duration '%s' is too long", s);
}

static int config__apply(const struct config_key *k, const char *text, struct error **err)
{
	int r = 0;
	switch (k->type) {
	case CONFIG_STRING: {
		char **field = k->ptr;
		free(*field);
		*field = xstrdup(text);
		break;
	}
	case CONFIG_INT: {
		long long v;
		bool ranged = k->min < k->max;
		r = config_parse_int(text, ranged ? k->min : INT_MIN, ranged ? k->max : INT_MAX, &v,
				     err);
		if (r == 0)
			*(int *)k->ptr = (int)v;
		break;
	}
	case CONFIG_BOOL:
		r = config_parse_bool(text, k->ptr, err);
		break;
	case CONFIG_DURATION: {
		uint64_t v;
		r = config_parse_duration(text, &v, err);
		if (r == 0 && k->min < k->max &&
		    (v > LLONG_MAX || (long long)v < k->min || (long long)v > k->max))
			r = error_set(err, ERANGE, "'%s' is out of range %lldms..%lldms", text,
				      k->min, k->max);
		if (r == 0)
			*(uint64_t *)k->ptr = v;
		break;
	}
	case CONFIG_DOUBLE:
		r = config_parse_double(text, k->min, k->max, k->ptr, err);
		break;
	default:
		r = error_set(err, EINVAL, "unknown type %d", (int)k->type);
	}
	if (r < 0)
		error_prefix(err, "%s", k->name);
	return r;
}

int config_set(const struct config_key *keys, const char *name, const char *value,
	       struct error **err)
{
	const struct config_key *k = config__find(keys, name);
	if (!k)
		return error_set(err, ENOENT, "unknown key '%s'", name);
	return config__apply(k, value, err);
}

void config_free(const struct config_key *keys)
{
	for (const struct config_key *k = keys; k->name; k++) {
		if (k->type == CONFIG_STRING) {
			char **field = k->ptr;
			free(*field);
			*field = NULL;
		}
	}
}

static void config__ctx_free(struct config__ctx *c)
{
	for (size_t i = 0; i < c->nkeys; i++) {
		free(c->shared[i].text);
		free(c->own[i].text);
	}
	free(c->shared);
	free(c->own);
	free(c->err_msg);
	if (c->file)
		fclose(c->file);
}

int config_load(const char *path, const char *section, const struct config_key *keys,
		struct error **err)
{
	bool explicit = path != NULL;
	struct config__ctx c = {
	    .path = explicit ? path : CONFIG_DEFAULT_PATH, .section = section, .keys = keys};
	int r = 0;
	for (const struct config_key *k = keys; k->name; k++) {
		/* A bad default is a bug in the table, not in the file. */
		if (k->def && (r = config__apply(k, k->def, err)) < 0) {
			error_prefix(err, "default");
			return r;
		}
		c.nkeys++;
	}
	c.file = fopen(c.path, "re");
	if (!c.file) {
		if (errno == ENOENT && !explicit)
			return 0;
		return error_set(err, errno, "%s: %s", c.path, strerror(errno));
	}
	c.shared = xcalloc(c.nkeys, sizeof(*c.shared));
	c.own = xcalloc(c.nkeys, sizeof(*c.own));
	int syntax = ini_parse_stream(config__reader, &c, config__handler, &c);
	if (syntax < 0) {
		r = error_set(err, ENOMEM, "%s: out of memory", c.path);
		goto out;
	}
	if (c.err_line && (syntax == 0 || c.err_line <= syntax)) {
		r = error_set(err, EINVAL, "%s:%d: %s", c.path, c.err_line, c.err_msg);
		goto out;
	}
	if (syntax > 0) {
		r = error_set(err, EINVAL, "%s:%d: expected '[section]' or 'key = value'", c.path,
			      syntax);
		goto out;
	}
	if (ferror(c.file)) {
		r = error_set(err, EIO, "%s: read error", c.path);
		goto out;
	}
	struct config__value *passes[] = {c.shared, c.own};
	for (size_t p = 0; p < ARRAY_SIZE(passes); p++) {
		for (size_t i = 0; i < c.nkeys; i++) {
			if (!passes[p][i].line)
				continue;
			r = config__apply(&keys[i], passes[p][i].text, err);
			if (r < 0) {
				error_prefix(err, "%s:%d", c.path, passes[p][i].line);
				goto out;
			}
		}
	}
out:
	config__ctx_free(&c);
	return r;
}

void config_flags_add(struct config_flags *f, const char *name, const char *value)
{
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n].name = xstrdup(name);
	f->v[f->n].value = xstrdup(value ? value : "true");
	f->n++;
}

int config_flags_apply(const struct config_flags *f, const struct config_key *keys,
		       struct error **err)
{
	for (size_t i = 0; i < f->n; i++) {
		if (config_set(keys, f->v[i].name, f->v[i].value, err) < 0) {
			error_prefix(err, "--%s", f->v[i].name);
			return -1;
		}
	}
	return 0;
}

void config_flags_clear(struct config_flags *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].name);
		free(f->v[i].value);
	}
	free(f->v);
	*f = (struct config_flags){0};
}
