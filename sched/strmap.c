/* strmap.c: open-addressing string hash map (FNV-1a, linear probing,
 * backward-shift deletion, so there are no tombstones to clean up).
 * The table stays at most 3/4 full. */
#include "strmap.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STRMAP__MIN_CAP 16

struct strmap__slot {
	char *key; /* NULL: empty */
	uint64_t hash;
	void *val;
};

struct strmap {
	struct strmap__slot *slots;
	size_t cap; /* a power of two */
	size_t count;
};

uint64_t strmap_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct strmap *strmap_new(void)
{
	struct strmap *m = xcalloc(1, sizeof(*m));
	m->cap = STRMAP__MIN_CAP;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	return m;
}

void strmap_free(struct strmap *m, void (*free_val)(void *))
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		free(m->slots[i].key);
		if (free_val)
			free_val(m->slots[i].val);
	}
	free(m->slots);
	free(m);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t strmap__find(const struct strmap *m, const char *key, uint64_t hash)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)hash & mask;
	while (m->slots[i].key && (m->slots[i].hash != hash || strcmp(m->slots[i].key, key) != 0))
		i = (i + 1) & mask;
	return i;
}

static void strmap__grow(struct strmap *m)
{
	struct strmap__slot *old = m->slots;
	size_t oldcap = m->cap;
	m->cap *= 2;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key)
			continue;
		size_t j = strmap__find(m, old[i].key, old[i].hash);
		m->slots[j] = old[i];
	}
	free(old);
}

void *strmap_get(const struct strmap *m, const char *key)
{
	size_t i = strmap__find(m, key, strmap_hash(key));
	return m->slots[i].key ? m->slots[i].val : NULL;
}

void *strmap_get_hashed(const struct strmap *m, const char *key, uint64_t hash)
{
	size_t i = strmap__find(m, key, hash);
	return m->slots[i].key ? m->slots[i].val : NULL;
}

bool strmap_has(const struct strmap *m, const char *key)
{
	return m->slots[strmap__find(m, key, strmap_hash(key))].key != NULL;
}

void *strmap_set(struct strmap *m, const char *key, void *val)
{
	uint64_t hash = strmap_hash(key);
	size_t i = strmap__find(m, key, hash);
	if (m->slots[i].key) {
		void *old = m->slots[i].val;
		m->slots[i].val = val;
		return old;
	}
	if ((m->count + 1) * 4 > m->cap * 3) {
		strmap__grow(m);
		i = strmap__find(m, key, hash);
	}
	m->slots[i].key = xstrdup(key);
	m->slots[i].hash = hash;
	m->slots[i].val = val;
	m->count++;
	return NULL;
}

void *strmap_del(struct strmap *m, const char *key)
{
	size_t mask = m->cap - 1;
	size_t i = strmap__find(m, key, strmap_hash(key));
	if (!m->slots[i].key)
		return NULL;
	void *val = m->slots[i].val;
	free(m->slots[i].key);
	m->slots[i].key = NULL;
	m->count--;
	/* Shift back the entries of the run after i that may move closer to
	 * their home slot, so that probing never crosses a hole. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		size_t home = (size_t)m->slots[j].hash & mask;
		/* j may move to hole unless home lies cyclically in (hole, j]. */
		bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (stays)
			continue;
		m->slots[hole] = m->slots[j];
		m->slots[j].key = NULL;
		hole = j;
	}
	return val;
}

size_t strmap_count(const struct strmap *m)
{
	return m->count;
}

bool strmap_next(const struct strmap *m, size_t *i, const char **key, void **val)
{
	for (; *i < m->cap; (*i)++) {
		if (!m->slots[*i].key)
			continue;
		if (key)
			*key = m->slots[*i].key;
		if (val)
			*val = m->slots[*i].val;
		(*i)++;
		return true;
	}
	return false;
}
