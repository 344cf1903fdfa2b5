/* strv.c: string lists. */
#include "strv.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void strv_take(struct strv *s, char *str)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strv_add(struct strv *s, const char *str)
{
	strv_take(s, xstrdup(str));
}

void strv_addf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strv_take(s, xvasprintf(fmt, ap));
	va_end(ap);
}

void strv_clear(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strv){0};
}

static ssize_t strv__find(const struct strv *s, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < s->n; i++) {
		if (strncmp(s->v[i], name, len) == 0 && s->v[i][len] == '=')
			return (ssize_t)i;
	}
	return -1;
}

void strv_setenv(struct strv *s, const char *name, const char *value)
{
	ssize_t i = strv__find(s, name);
	char *kv = xasprintf("%s=%s", name, value);
	if (i < 0) {
		strv_take(s, kv);
		return;
	}
	free(s->v[i]);
	s->v[i] = kv;
}

const char *strv_getenv(const struct strv *s, const char *name)
{
	ssize_t i = strv__find(s, name);
	return i < 0 ? NULL : s->v[i] + strlen(name) + 1;
}
