/* keymap.h: a hash map from strings ("dev/web", a uid) to pointers, for the
 * controllers' indexes: owners by uid, expectations and work in flight by
 * key, recent events by what they say.
 *
 * lib's strmap (strmap.h) with an owner for the values: keys are copied and
 * owned by the map, values belong to the caller (or to free_val when the map
 * has one). Not thread-safe: the loop's thread only. Do not add or delete while
 * iterating; collect the keys first. */
#ifndef CORRAL_CTRL_KEYMAP_H
#define CORRAL_CTRL_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

struct keymap;

/* free_val (may be NULL) frees a value the map drops: keymap_del(),
 * a replaced value in keymap_set(), keymap_free(). */
struct keymap *keymap_new(void (*free_val)(void *));
void keymap_free(struct keymap *m);
void keymap_freep(struct keymap **m);
#define cleanup_keymap __attribute__((cleanup(keymap_freep)))

void *keymap_get(const struct keymap *m, const char *key);
bool keymap_has(const struct keymap *m, const char *key);
/* Sets key's value, freeing the one it replaces. */
void keymap_set(struct keymap *m, const char *key, void *val);
/* Removes key and hands its value back (not freed); NULL if absent. */
void *keymap_take(struct keymap *m, const char *key);
/* Removes key, freeing its value; false if absent. */
bool keymap_del(struct keymap *m, const char *key);
size_t keymap_count(const struct keymap *m);

/* for (size_t i = 0; keymap_next(m, &i, &k, &v);) ... */
bool keymap_next(const struct keymap *m, size_t *pos, const char **key, void **val);

#endif
