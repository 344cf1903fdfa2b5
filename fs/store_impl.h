/* store_impl.h: what the store's backends (store.c: LMDB, store_etcd.c:
 * etcd) share with the dispatch (store_backend.c) and nothing else: each
 * backend's struct store begins with a pointer to its table of
 * operations, and store.h's functions call through it. */
#ifndef CORRAL_FS_STORE_IMPL_H
#define CORRAL_FS_STORE_IMPL_H

#include "store.h"

#include <time.h>

struct store_ops {
	void (*close)(struct store *s);
	int (*apply)(struct store *s, struct store_change *c, struct error **err);
	void (*lock_key)(struct store *s, const char *key);
	void (*unlock_key)(struct store *s, const char *key);
	int (*get)(struct store *s, const char *key, struct store_record *rec, struct error **err);
	int (*foreach)(struct store *s, bool with_yaml,
		       int (*fn)(void *data, const char *key, const struct store_record *rec),
		       void *data, struct error **err);
	int (*snapshot)(struct store *s,
			int (*fn)(void *data, const char *key, const struct store_record *rec),
			void *data, uint64_t *rev, struct error **err);
	uint64_t (*revision)(struct store *s);
	int (*raise_revision)(struct store *s, uint64_t rev, struct error **err);
	bool (*is_empty)(struct store *s);
	int (*outbox_read)(struct store *s, uint64_t after_rv, size_t max,
			   struct store_outbox_entry **out, size_t *n, struct error **err);
	int (*outbox_trim)(struct store *s, uint64_t rv, struct error **err);
	void (*outbox_wait)(struct store *s, uint64_t after_rv, int timeout_ms);
	void (*outbox_kick)(struct store *s);
	/* NULL: no other writer can change the store (LMDB). */
	int (*watch)(struct store *s, store_watch_fn fn, void *data, struct error **err);
	void (*unwatch)(struct store *s);
	/* NULL: always fresh. */
	int (*check_fresh)(struct store *s, struct error **err);
};

/* The head of every backend's struct store. */
struct store_base {
	const struct store_ops *ops;
};

extern const struct store_ops store_lmdb_ops;
int store_lmdb_open(const char *dir, struct store **out, struct error **err);
int store_etcd_open(const char *endpoints, struct store **out, struct error **err);

#endif
