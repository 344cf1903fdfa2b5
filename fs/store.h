/* store.h: the live store: every object, with its status, in LMDB (the
 * embedded default, store.c) or in etcd (store_etcd.c: several corral-fs
 * share it; store_open("etcd://HOST:PORT,...")).
 *
 * An object is stored under its key, the path below the mount without
 * ".yaml" ("namespaces/dev/pods/myweb", "nodes/n1", "namespaces/dev" for a
 * Namespace). The store's revision counts changes; an object's
 * resourceVersion is the revision that last wrote it. A change that enters
 * the history is queued in the same transaction (the outbox), so a crash
 * never loses a history entry. Writers that arrive together share one
 * transaction and one fsync (group commit): store_apply() returns only when
 * its change is durable. This interface is all corral-fs knows of LMDB or
 * etcd (store_impl.h dispatches to them). */
#ifndef CORRAL_FS_STORE_H
#define CORRAL_FS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ynode.h"

struct store;

/* One thing that only one object may hold at a time across every writer
 * of a shared store (a Service's address, a node port): the change takes
 * it (no one may hold it yet) or gives it back, in its own transaction.
 * A store no other process writes (LMDB) has nothing to claim: its
 * admission hooks' own state decides, and it ignores claims. */
struct store_claim {
	char *name;    /* "svcip/10.96.0.5", "nodeport/30080" */
	char *holder;  /* what the claim says holds it: "service dev/a" */
	char *refusal; /* take: the error when another holds it; the store
			  adds " (to <its holder>)" */
	bool take;     /* true: take it; false: give it back */
};

struct store_change {
	const char *key;
	struct ynode *obj;		  /* what to store; NULL deletes; its
					     metadata.resourceVersion is set here */
	uint64_t expect_rv;		  /* the revision this change was built on;
					     0: the key must not exist */
	const char *history_path;	  /* non-NULL: queue for the history */
	const char *history_yaml;	  /* declared form; NULL: a deletion */
	const char *message;		  /* one line for `git log --oneline` */
	const char *author;		  /* "name <email>" */
	bool decl_changed;		  /* the declared part changed (or was made) */
	const struct store_claim *claims; /* taken or given back with it */
	size_t nclaims;
	/* Results, set by store_apply(). */
	uint64_t rv; /* the change's revision */
	char *yaml;  /* the stored text (malloc'd), not on delete */
	size_t yaml_len;
	int64_t mtime_ns;
};

struct store_record {
	uint64_t rv;
	uint64_t decl_rv; /* revision of the last change of the declared part
			     (0 when not known: then rv) */
	int64_t mtime_ns;
	char *yaml; /* malloc'd, NUL-terminated */
	size_t len;
};

struct store_outbox_entry {
	uint64_t rv;
	char *path; /* history path, "namespaces/dev/pods/myweb.yaml" */
	char *yaml; /* NULL: deleted */
	char *message;
	char *author;
	int64_t when_ns;
};

/* where: a folder (LMDB) or "etcd://HOST:PORT[,HOST:PORT...]". */
int store_open(const char *where, struct store **out, struct error **err);
void store_close(struct store *s);

/* Applies one change durably. -EAGAIN: the stored revision is no longer
 * expect_rv (rebuild the change from the current object and retry);
 * -ENOENT: deleting what is not there; -EINVAL: a claim it takes is
 * another's (the claim's refusal); -EIO: the store could not be reached,
 * or its answer was lost (the change may have been stored: a watch then
 * reports it as another writer's). */
int store_apply(struct store *s, struct store_change *c, struct error **err);

/* Serializes the writers of one key in this process, first come first
 * served: a writer holds its key from the read its change is built on to
 * the change's commit, so that writers of the same object never build on
 * the same revision (only one change of a key can win a group commit; the
 * others would come back -EAGAIN and build again, without end under
 * contention). Writers of other keys still share commits. */
void store_lock_key(struct store *s, const char *key);
void store_unlock_key(struct store *s, const char *key);

/* Reads one object; -ENOENT if absent. */
int store_get(struct store *s, const char *key, struct store_record *rec, struct error **err);
void store_record_clear(struct store_record *rec);

/* Calls fn for every object in key order (without loading their text when
 * with_yaml is false). Stops early if fn returns non-zero. */
int store_foreach(struct store *s, bool with_yaml,
		  int (*fn)(void *data, const char *key, const struct store_record *rec),
		  void *data, struct error **err);

/* Calls fn for every object, with its text, in key order, as the store
 * was at one revision, and sets *rev to it: every change up to *rev shows,
 * none after (one read transaction in LMDB, one etcd revision). Stops early
 * if fn returns non-zero. */
int store_snapshot(struct store *s,
		   int (*fn)(void *data, const char *key, const struct store_record *rec),
		   void *data, uint64_t *rev, struct error **err);

uint64_t store_revision(struct store *s);
/* Raises the revision to at least rev (a restore continues after the
 * history it came from). */
int store_raise_revision(struct store *s, uint64_t rev, struct error **err);
bool store_is_empty(struct store *s);

/* The outbox after revision after_rv, oldest first, at most max entries. */
int store_outbox_read(struct store *s, uint64_t after_rv, size_t max,
		      struct store_outbox_entry **out, size_t *n, struct error **err);
void store_outbox_free(struct store_outbox_entry *e, size_t n);
/* Removes the entries up to and including rv. Not made durable on its
 * own: entries the history already holds are skipped by revision anyway. */
int store_outbox_trim(struct store *s, uint64_t rv, struct error **err);
/* Waits until the outbox may have entries after rv or timeout_ms passes. */
void store_outbox_wait(struct store *s, uint64_t after_rv, int timeout_ms);
/* Wakes every waiter (on shutdown). */
void store_outbox_kick(struct store *s);

/* A change that another writer made to a shared store (etcd), in revision
 * order: rec NULL for a deletion (rv its revision). A relist (the store
 * lost its place in the change stream: compacted) begins with a call with
 * key NULL and rv 0, names every object as a change, and ends with a call
 * with key NULL and rv the list's revision: whatever it did not name is
 * gone. Never called for this process's own changes. */
typedef void (*store_watch_fn)(void *data, const char *key, const struct store_record *rec,
			       uint64_t rv);
/* Follows other writers' changes from the current revision on, in a thread
 * of the store's; fn is called from it. A store no other process writes
 * (LMDB) never calls fn. */
int store_watch(struct store *s, store_watch_fn fn, void *data, struct error **err);
/* Stops the watch (waits for the call in progress). */
void store_unwatch(struct store *s);
/* 0 while what this process has seen of a shared store is at most the
 * store's documented staleness behind it; else -EIO (the watch has lost
 * every member, or has not caught up since). Always 0 for LMDB. */
int store_check_fresh(struct store *s, struct error **err);
/* Whether other processes write this store (store_watch() matters). */
bool store_shared(struct store *s);

#endif
