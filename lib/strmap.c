/* strmap.c: open-addressing hash map (see strmap.h). Deletion shifts the
 * rest of a probe run back, so there are no tombstones to clean up. */
#include "strmap.h"
#include "fnv.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define STRMAP__MIN_CAP 16

struct strmap__slot {
	char *key; /* NULL: empty; else len bytes and a NUL (borrowed: as given) */
	size_t len;
	uint64_t hash;
	void *val;
};

struct strmap {
	struct strmap__slot *slots;
	size_t cap; /* a power of two */
	size_t count;
	bool borrowing; /* the keys are the caller's (strmap_new_borrowing()) */
};

uint64_t strmap_hash(const char *key)
{
	return fnv1a(key, strlen(key));
}

struct strmap *strmap_new(void)
{
	struct strmap *m = xcalloc(1, sizeof(*m));
	m->cap = STRMAP__MIN_CAP;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	return m;
}

struct strmap *strmap_new_borrowing(void)
{
	struct strmap *m = strmap_new();
	m->borrowing = true;
	return m;
}

void strmap_free(struct strmap *m, void (*free_val)(void *))
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		if (!m->borrowing)
			free(m->slots[i].key);
		if (free_val)
			free_val(m->slots[i].val);
	}
	free(m->slots);
	free(m);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t strmap__find(const struct strmap *m, const void *key, size_t len, uint64_t hash)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)hash & mask;
	for (;; i = (i + 1) & mask) {
		const struct strmap__slot *s = &m->slots[i];
		if (!s->key || (s->hash == hash && s->len == len && !memcmp(s->key, key, len)))
			return i;
	}
}

static void strmap__grow(struct strmap *m)
{
	struct strmap__slot *old = m->slots;
	size_t oldcap = m->cap;
	m->cap *= 2;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	size_t mask = m->cap - 1;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key)
			continue;
		size_t j = (size_t)old[i].hash & mask;
		while (m->slots[j].key)
			j = (j + 1) & mask;
		m->slots[j] = old[i];
	}
	free(old);
}

static void *strmap__get(const struct strmap *m, const void *key, size_t len, uint64_t hash)
{
	const struct strmap__slot *s = &m->slots[strmap__find(m, key, len, hash)];
	return s->key ? s->val : NULL;
}

void *strmap_getn(const struct strmap *m, const void *key, size_t len)
{
	return strmap__get(m, key, len, fnv1a(key, len));
}

void *strmap_get(const struct strmap *m, const char *key)
{
	return strmap_getn(m, key, strlen(key));
}

void *strmap_get_hashed(const struct strmap *m, const char *key, uint64_t hash)
{
	return strmap__get(m, key, strlen(key), hash);
}

void strmap_prefetchn(const struct strmap *m, const void *key, size_t len, bool deep)
{
	uint64_t hash = fnv1a(key, len);
	if (!deep) {
		__builtin_prefetch(&m->slots[(size_t)hash & (m->cap - 1)]);
		return;
	}
	size_t mask = m->cap - 1;
	for (size_t i = (size_t)hash & mask; m->slots[i].key; i = (i + 1) & mask) {
		if (m->slots[i].hash == hash) {
			__builtin_prefetch(m->slots[i].key);
			__builtin_prefetch(m->slots[i].val);
			return;
		}
	}
}

bool strmap_hasn(const struct strmap *m, const void *key, size_t len)
{
	return m->slots[strmap__find(m, key, len, fnv1a(key, len))].key != NULL;
}

bool strmap_has(const struct strmap *m, const char *key)
{
	return strmap_hasn(m, key, strlen(key));
}

void *strmap_setn(struct strmap *m, const void *key, size_t len, void *val)
{
	uint64_t hash = fnv1a(key, len);
	size_t i = strmap__find(m, key, len, hash);
	if (m->slots[i].key) {
		void *old = m->slots[i].val;
		m->slots[i].val = val;
		return old;
	}
	if ((m->count + 1) * 4 > m->cap * 3) {
		strmap__grow(m);
		i = strmap__find(m, key, len, hash);
	}
	char *copy = (char *)key;
	if (!m->borrowing) {
		copy = xmalloc(len + 1);
		memcpy(copy, key, len);
		copy[len] = '\0';
	}
	m->slots[i] = (struct strmap__slot){.key = copy, .len = len, .hash = hash, .val = val};
	m->count++;
	return NULL;
}

void *strmap_set(struct strmap *m, const char *key, void *val)
{
	return strmap_setn(m, key, strlen(key), val);
}

void *strmap_deln(struct strmap *m, const void *key, size_t len)
{
	size_t mask = m->cap - 1;
	size_t i = strmap__find(m, key, len, fnv1a(key, len));
	if (!m->slots[i].key)
		return NULL;
	void *val = m->slots[i].val;
	if (!m->borrowing)
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

void *strmap_del(struct strmap *m, const char *key)
{
	return strmap_deln(m, key, strlen(key));
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
