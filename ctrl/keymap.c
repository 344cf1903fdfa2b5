/* keymap.c: lib's strmap with the values' owner beside it (free_val).
 * This file must never call back into its caller except through free_val. */
#include "keymap.h"
#include "strmap.h"
#include "util.h"

#include <stdlib.h>

struct keymap {
	struct strmap *m;
	void (*free_val)(void *);
};

struct keymap *keymap_new(void (*free_val)(void *))
{
	struct keymap *m = xcalloc(1, sizeof(*m));
	m->m = strmap_new();
	m->free_val = free_val;
	return m;
}

void keymap_free(struct keymap *m)
{
	if (!m)
		return;
	strmap_free(m->m, m->free_val);
	free(m);
}

void keymap_freep(struct keymap **m)
{
	keymap_free(*m);
	*m = NULL;
}

void *keymap_get(const struct keymap *m, const char *key)
{
	return strmap_get(m->m, key);
}

bool keymap_has(const struct keymap *m, const char *key)
{
	return strmap_has(m->m, key);
}

void keymap_set(struct keymap *m, const char *key, void *val)
{
	void *old = strmap_set(m->m, key, val);
	if (old && old != val && m->free_val)
		m->free_val(old);
}

void *keymap_take(struct keymap *m, const char *key)
{
	return strmap_del(m->m, key);
}

bool keymap_del(struct keymap *m, const char *key)
{
	if (!strmap_has(m->m, key))
		return false;
	void *val = strmap_del(m->m, key);
	if (m->free_val)
		m->free_val(val);
	return true;
}

size_t keymap_count(const struct keymap *m)
{
	return strmap_count(m->m);
}

bool keymap_next(const struct keymap *m, size_t *pos, const char **key, void **val)
{
	return strmap_next(m->m, pos, key, val);
}
