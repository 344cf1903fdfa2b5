/* strv.h: a growing list of malloc'd strings (argv, environments). */
#ifndef CORRAL_NODED_STRV_H
#define CORRAL_NODED_STRV_H

#include <stddef.h>

struct strv {
	char **v; /* NULL-terminated once anything was added */
	size_t n;
	size_t cap;
};

/* Takes s (malloc'd). */
void strv_take(struct strv *s, char *str);
void strv_add(struct strv *s, const char *str);
void strv_addf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strv_clear(struct strv *s);
/* An environment list: sets NAME=VALUE, replacing an earlier NAME. */
void strv_setenv(struct strv *s, const char *name, const char *value);
/* The value of NAME in an environment list, or NULL. */
const char *strv_getenv(const struct strv *s, const char *name);

#endif
