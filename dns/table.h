/* table.h: a hash table from byte strings to pointers, for corral-dns's
 * indexes (names in wire form, "ns/name" keys). Chained, grown by doubling
 * so that a lookup stays O(1) at any size. Keys are copied; values belong
 * to the caller. Single-threaded. */
#ifndef CORRAL_DNS_TABLE_H
#define CORRAL_DNS_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct table;

struct table *table_new(void);
/* Frees the table; free_val (may be NULL) is called on every value. */
void table_free(struct table *t, void (*free_val)(void *));

void *table_get(const struct table *t, const void *key, size_t len);
/* Sets key to val, replacing (and returning) the old value, or NULL. */
void *table_put(struct table *t, const void *key, size_t len, void *val);
/* Removes key; returns its value, or NULL if absent. */
void *table_take(struct table *t, const void *key, size_t len);
size_t table_count(const struct table *t);

/* FNV-1a, the table's hash. */
uint64_t table_hash(const void *key, size_t len);

#endif
