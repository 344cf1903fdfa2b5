/* keymap.c: chained hash buckets keyed by FNV-1a.
 *
 * Iteration walks bucket by bucket; pos encodes (bucket << 16 | depth) so
 * that keymap_next() needs no state beyond the caller's counter. This file
 * must never call back into its caller except through free_val. */
#include "keymap.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct keymap__entry {
	struct keymap__entry *next;
	uint64_t hash;
	void *val;
	char key[]; /* NUL-terminated */
};

struct keymap {
	struct keymap__entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
	void (*free_val)(void *);
};

static uint64_t keymap__hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct keymap *keymap_new(void (*free_val)(void *))
{
	struct keymap *m = xcalloc(1, sizeof(*m));
	m->nbuckets = 16;
	m->buckets = xcalloc(m->nbuckets, sizeof(*m->buckets));
	m->free_val = free_val;
	return m;
}

void keymap_free(struct keymap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct keymap__entry *e = m->buckets[i];
		while (e) {
			struct keymap__entry *next = e->next;
			if (m->free_val)
				m->free_val(e->val);
			free(e);
			e = next;
		}
	}
	free(m->buckets);
	free(m);
}

void keymap_freep(struct keymap **m)
{
	keymap_free(*m);
	*m = NULL;
}

static struct keymap__entry **keymap__slot(const struct keymap *m, const char *key, uint64_t h)
{
	struct keymap__entry **p = &m->buckets[h & (m->nbuckets - 1)];
	while (*p && ((*p)->hash != h || strcmp((*p)->key, key) != 0))
		p = &(*p)->next;
	return p;
}

static void keymap__grow(struct keymap *m)
{
	size_t n = m->nbuckets * 2;
	struct keymap__entry **b = xcalloc(n, sizeof(*b));
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct keymap__entry *e = m->buckets[i];
		while (e) {
			struct keymap__entry *next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
			e = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
}

void *keymap_get(const struct keymap *m, const char *key)
{
	struct keymap__entry *e = *keymap__slot(m, key, keymap__hash(key));
	return e ? e->val : NULL;
}

bool keymap_has(const struct keymap *m, const char *key)
{
	return *keymap__slot(m, key, keymap__hash(key)) != NULL;
}

void keymap_set(struct keymap *m, const char *key, void *val)
{
	uint64_t h = keymap__hash(key);
	struct keymap__entry **p = keymap__slot(m, key, h);
	if (*p) {
		if (m->free_val && (*p)->val != val)
			m->free_val((*p)->val);
		(*p)->val = val;
		return;
	}
	size_t len = strlen(key);
	struct keymap__entry *e = xmalloc(sizeof(*e) + len + 1);
	memcpy(e->key, key, len + 1);
	e->hash = h;
	e->val = val;
	e->next = NULL;
	*p = e;
	if (++m->count > m->nbuckets)
		keymap__grow(m);
}

void *keymap_take(struct keymap *m, const char *key)
{
	struct keymap__entry **p = keymap__slot(m, key, keymap__hash(key));
	struct keymap__entry *e = *p;
	if (!e)
		return NULL;
	*p = e->next;
	void *val = e->val;
	free(e);
	m->count--;
	return val;
}

bool keymap_del(struct keymap *m, const char *key)
{
	struct keymap__entry **p = keymap__slot(m, key, keymap__hash(key));
	struct keymap__entry *e = *p;
	if (!e)
		return false;
	*p = e->next;
	if (m->free_val)
		m->free_val(e->val);
	free(e);
	m->count--;
	return true;
}

size_t keymap_count(const struct keymap *m)
{
	return m->count;
}

bool keymap_next(const struct keymap *m, size_t *pos, const char **key, void **val)
{
	size_t b = *pos >> 16, depth = *pos & 0xffff;
	for (; b < m->nbuckets; b++, depth = 0) {
		struct keymap__entry *e = m->buckets[b];
		for (size_t i = 0; e && i < depth; i++)
			e = e->next;
		if (e) {
			if (key)
				*key = e->key;
			if (val)
				*val = e->val;
			*pos = (b << 16) | (depth + 1);
			return true;
		}
	}
	*pos = b << 16;
	return false;
}
