/* store_backend.c: store.h's functions, dispatched to the backend that
 * store_open() chose (store_impl.h). Nothing here knows LMDB or etcd. */
#include "store.h"
#include "store_impl.h"
#include "util.h"

#include <string.h>

#define STORE__ETCD_SCHEME "etcd://"

static const struct store_ops *store__ops(struct store *s)
{
	return ((struct store_base *)s)->ops;
}

int store_open(const char *where, struct store **out, struct error **err)
{
	if (strncmp(where, STORE__ETCD_SCHEME, strlen(STORE__ETCD_SCHEME)) == 0)
		return store_etcd_open(where + strlen(STORE__ETCD_SCHEME), out, err);
	return store_lmdb_open(where, out, err);
}

void store_close(struct store *s)
{
	if (s)
		store__ops(s)->close(s);
}

int store_apply(struct store *s, struct store_change *c, struct error **err)
{
	return store__ops(s)->apply(s, c, err);
}

void store_lock_key(struct store *s, const char *key)
{
	store__ops(s)->lock_key(s, key);
}

void store_unlock_key(struct store *s, const char *key)
{
	store__ops(s)->unlock_key(s, key);
}

int store_get(struct store *s, const char *key, struct store_record *rec, struct error **err)
{
	return store__ops(s)->get(s, key, rec, err);
}

int store_foreach(struct store *s, bool with_yaml,
		  int (*fn)(void *data, const char *key, const struct store_record *rec),
		  void *data, struct error **err)
{
	return store__ops(s)->foreach (s, with_yaml, fn, data, err);
}

int store_snapshot(struct store *s,
		   int (*fn)(void *data, const char *key, const struct store_record *rec),
		   void *data, uint64_t *rev, struct error **err)
{
	return store__ops(s)->snapshot(s, fn, data, rev, err);
}

uint64_t store_revision(struct store *s)
{
	return store__ops(s)->revision(s);
}

int store_raise_revision(struct store *s, uint64_t rev, struct error **err)
{
	return store__ops(s)->raise_revision(s, rev, err);
}

bool store_is_empty(struct store *s)
{
	return store__ops(s)->is_empty(s);
}

int store_outbox_read(struct store *s, uint64_t after_rv, size_t max,
		      struct store_outbox_entry **out, size_t *n, struct error **err)
{
	return store__ops(s)->outbox_read(s, after_rv, max, out, n, err);
}

int store_outbox_trim(struct store *s, uint64_t rv, struct error **err)
{
	return store__ops(s)->outbox_trim(s, rv, err);
}

void store_outbox_wait(struct store *s, uint64_t after_rv, int timeout_ms)
{
	store__ops(s)->outbox_wait(s, after_rv, timeout_ms);
}

void store_outbox_kick(struct store *s)
{
	store__ops(s)->outbox_kick(s);
}

int store_watch(struct store *s, store_watch_fn fn, void *data, struct error **err)
{
	const struct store_ops *ops = store__ops(s);
	return ops->watch ? ops->watch(s, fn, data, err) : 0;
}

void store_unwatch(struct store *s)
{
	const struct store_ops *ops = store__ops(s);
	if (ops->unwatch)
		ops->unwatch(s);
}

int store_check_fresh(struct store *s, struct error **err)
{
	const struct store_ops *ops = store__ops(s);
	return ops->check_fresh ? ops->check_fresh(s, err) : 0;
}

bool store_shared(struct store *s)
{
	return store__ops(s)->watch != NULL;
}
