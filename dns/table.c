/* table.c: a chained hash table keyed by byte strings (see table.h). */
#include "table.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct table__entry {
	struct table__entry *next;
	uint64_t hash;
	void *val;
	size_t len;
	unsigned char key[];
};

struct table {
	struct table__entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
};

uint64_t table_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

struct table *table_new(void)
{
	struct table *t = xcalloc(1, sizeof(*t));
	t->nbuckets = 64;
	t->buckets = xcalloc(t->nbuckets, sizeof(*t->buckets));
	return t;
}

void table_free(struct table *t, void (*free_val)(void *))
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct table__entry *e = t->buckets[i];
		while (e) {
			struct table__entry *next = e->next;
			if (free_val)
				free_val(e->val);
			free(e);
			e = next;
		}
	}
	free(t->buckets);
	free(t);
}

static struct table__entry **table__find(const struct table *t, const void *key, size_t len,
					 uint64_t h)
{
	struct table__entry **pp = &t->buckets[h & (t->nbuckets - 1)];
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && (*pp)->len == len && !memcmp((*pp)->key, key, len))
			return pp;
	return pp;
}

void *table_get(const struct table *t, const void *key, size_t len)
{
	struct table__entry **pp = table__find(t, key, len, table_hash(key, len));
	return *pp ? (*pp)->val : NULL;
}

static void table__grow(struct table *t)
{
	size_t n = t->nbuckets * 2;
	struct table__entry **b = xcalloc(n, sizeof(*b));
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct table__entry *e = t->buckets[i];
		while (e) {
			struct table__entry *next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
			e = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
}

void *table_put(struct table *t, const void *key, size_t len, void *val)
{
	uint64_t h = table_hash(key, len);
	struct table__entry **pp = table__find(t, key, len, h);
	if (*pp) {
		void *old = (*pp)->val;
		(*pp)->val = val;
		return old;
	}
	struct table__entry *e = xmalloc(sizeof(*e) + len);
	e->next = NULL;
	e->hash = h;
	e->val = val;
	e->len = len;
	memcpy(e->key, key, len);
	*pp = e;
	if (++t->count > t->nbuckets)
		table__grow(t);
	return NULL;
}

void *table_take(struct table *t, const void *key, size_t len)
{
	struct table__entry **pp = table__find(t, key, len, table_hash(key, len));
	struct table__entry *e = *pp;
	if (!e)
		return NULL;
	void *val = e->val;
	*pp = e->next;
	free(e);
	t->count--;
	return val;
}

size_t table_count(const struct table *t)
{
	return t->count;
}
