/* store_etcd.h: the etcd store's key layout and value encoding
 * (store_etcd.c's header comment describes them), apart so that they can
 * be tested without an etcd. */
#ifndef CORRAL_FS_STORE_ETCD_H
#define CORRAL_FS_STORE_ETCD_H

#include "store.h"

#define STORE_ETCD_PREFIX      "/corral/"
#define STORE_ETCD_TRIMMER_KEY STORE_ETCD_PREFIX "history-trimmer"
/* Stands for the revision in a stored text: the largest uint64, so that no
 * resourceVersion a client could have seen is mistaken for it. */
#define STORE_ETCD_RV_MARK "18446744073709551615"

enum store_etcd_space {
	STORE_ETCD_OBJECT,  /* o/: objects */
	STORE_ETCD_DECL,    /* d/: declared-part revisions */
	STORE_ETCD_OUTBOX,  /* h/: the history's outbox */
	STORE_ETCD_REPLICA, /* r/: the revision each history replica reached */
	STORE_ETCD_CLAIM,   /* c/: claims (store.h's struct store_claim) */
	STORE_ETCD_LIVE,    /* l/: each watcher's liveness probe */
};

/* How far behind the store a watching corral-fs may serve reads, in
 * milliseconds (corral-fs(8), "Losing etcd"), and how often it checks. */
#define STORE_ETCD_STALE_MS 5000
#define STORE_ETCD_PROBE_MS 1000

/* The etcd key of store key key in space (key NULL: the space's prefix). */
char *store_etcd_key(enum store_etcd_space space, const char *key);
/* The end of the range of every key starting with prefix (which ends in
 * '/'). */
char *store_etcd_range_end(const char *prefix);
/* An object's value: the header line and yaml (whose
 * metadata.resourceVersion is STORE_ETCD_RV_MARK, if it has one). */
char *store_etcd_encode_value(int64_t mtime_ns, const char *yaml, size_t len, size_t *out_len);
/* The record of a value stored at revision rv, the mark replaced by rv:
 * 0, or -EINVAL when the value is not one of encode_value()'s. */
int store_etcd_decode_value(const char *v, size_t len, uint64_t rv, struct store_record *rec);
/* "HOST:PORT,HOST:PORT" into a malloc'd array. */
int store_etcd_parse_endpoints(const char *list, char ***out, size_t *n, struct error **err);

/* For tests: the answers to the next n object writes of s are lost after
 * etcd committed them (the writer gets EIO, as when a member dies between
 * its commit and its answer). */
void store_etcd_lose_replies(struct store *s, unsigned n);

#endif
