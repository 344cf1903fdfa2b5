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
/* A map that keeps the caller's keys instead of copies: each key set must
 * stay valid and unchanged until it is deleted or the map freed, and
 * strmap_next() hands it back as it was given (setting a key that is
 * there already keeps the one first given). A lookup compares against
 * the caller's bytes, so a key held inside its value (a name in the
 * record it names) costs one memory access less than a copy would. */
struct strmap *strmap_new_borrowing(void);
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

/* Prefetches what a lookup of key will read, without waiting for it: its
 * home slot, or (deep), once that slot is likely cached, the key the
 * lookup will compare and the value it will return. For a batch of
 * lookups: a pass of each over the batch, then the lookups, whose memory
 * accesses then overlap instead of following one another. */
void strmap_prefetchn(const struct strmap *m, const void *key, size_t len, bool deep);

/* Iteration: for (size_t i = 0; strmap_next(m, &i, &k, &v);) ...; key
 * and val may be NULL. The key is NUL-terminated (after its bytes). */
bool strmap_next(const struct strmap *m, size_t *i, const char **key, void **val);

#endif
