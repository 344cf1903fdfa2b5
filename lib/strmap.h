/* strmap.h: the hash map of corral, from strings (or byte strings, the
 * _n functions) to pointers: the scheduler's lookups on every decision,
 * the controllers' indexes, corral-dns's names in wire form.
 *
 * Open addressing with linear probing and backward-shift deletion, at most
 * 3/4 full, grown by doubling; FNV-1a. Keys are copied and owned by the
 * map, values are the caller's. Not thread-safe. Iteration order is the
 * table's and changes when the map grows or loses keys: do not add or
 * delete while iterating. */
#ifndef CORRAL_STRMAP_H
#define CORRAL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap;

struct strmap *strmap_new(void);
/* free_val (may be NULL) is called on every value. */
void strmap_free(struct strmap *m, void (*free_val)(void *));

/* The value for key, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* The hash of a string key, computed once by a caller that looks the same
 * key up in many maps, and the lookup that takes it. */
uint64_t strmap_hash(const char *key);
void *strmap_get_hashed(const struct strmap *m, const char *key, uint64_t hash);
/* Whether key is present (its value may be NULL). */
bool strmap_has(const struct strmap *m, const char *key);
/* Sets key's value; returns the value it replaces, or NULL. */
void *strmap_set(struct strmap *m, const char *key, void *val);
/* Removes key; returns its value, or NULL if absent. */
void *strmap_del(struct strmap *m, const char *key);
size_t strmap_count(const struct strmap *m);

/* The same with keys of len bytes, which may hold NULs. A string key and
 * the byte key of its strlen() bytes are the same key. */
void *strmap_getn(const struct strmap *m, const void *key, size_t len);
bool strmap_hasn(const struct strmap *m, const void *key, size_t len);
void *strmap_setn(struct strmap *m, const void *key, size_t len, void *val);
void *strmap_deln(struct strmap *m, const void *key, size_t len);

/* Iteration: for (size_t i = 0; strmap_next(m, &i, &k, &v);) ...; key
 * and val may be NULL. The key is NUL-terminated (after its bytes). */
bool strmap_next(const struct strmap *m, size_t *i, const char **key, void **val);

#endif
