/* strmap.h: a hash map from strings to pointers, for the scheduler's
 * lookups by name on every scheduling decision (nodes, pods, owners), where
 * a tree's string comparisons would dominate.
 *
 * Open addressing with linear probing and backward-shift deletion; keys are
 * copied and owned by the map, values are the caller's. Not thread-safe.
 * Iteration order is the table's and changes when the map grows or loses
 * keys: do not add or delete while iterating. */
#ifndef CORRAL_SCHED_STRMAP_H
#define CORRAL_SCHED_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap;

struct strmap *strmap_new(void);
/* free_val (may be NULL) is called on every value. */
void strmap_free(struct strmap *m, void (*free_val)(void *));

/* The value for key, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* The same with the key's hash computed once by the caller (a key looked
 * up in many maps). */
uint64_t strmap_hash(const char *key);
void *strmap_get_hashed(const struct strmap *m, const char *key, uint64_t hash);
/* Whether key is present (its value may be NULL). */
bool strmap_has(const struct strmap *m, const char *key);
/* Sets key's value; returns the value it replaces, or NULL. */
void *strmap_set(struct strmap *m, const char *key, void *val);
/* Removes key; returns its value, or NULL if absent. */
void *strmap_del(struct strmap *m, const char *key);
size_t strmap_count(const struct strmap *m);

/* Iteration: for (size_t i = 0; strmap_next(m, &i, &k, &v);) ... */
bool strmap_next(const struct strmap *m, size_t *i, const char **key, void **val);

#endif
