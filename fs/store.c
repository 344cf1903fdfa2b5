/* store.c: the live store over LMDB, with group commit and the outbox.
 *
 * Writers queue their changes; the first writer to find no committer at
 * work becomes the committer, takes every queued change into one write
 * transaction, commits it and wakes the others. So concurrent writers
 * share one fsync, and a change is durable before store_apply() returns.
 * No lock of ours is held during the commit's I/O except the queue's
 * leadership, which writers only wait on.
 *
 * A commit of LMDB writes the new pages, syncs them, then writes the meta
 * page that points at them and syncs again. The store commits with
 * MDB_NOMETASYNC instead: the meta page is written but not synced (LMDB
 * keeps the store whole: a meta page is only written once its pages are
 * on disk), and the batch stays "unsynced", its writers waiting, until
 * the next fdatasync of the data file: the next batch's own sync of its
 * pages, when writers are queued behind it, or one more sync by its
 * committer when none is (then after giving up the leadership, so that
 * the next batch may begin meanwhile). So under load a batch costs one
 * sync instead of two, and no store_apply() returns before its change's
 * meta page is on disk. The flag is the environment's: LMDB 0.9 (Debian's
 * 0.9.24) ignores it when given to mdb_txn_begin() and writes the meta
 * page through its O_DSYNC descriptor, a second sync in every commit. The
 * other write transactions (the outbox's trim, a raised revision) follow
 * the same rule: a trim need not be durable, only consistent, and a raised
 * revision is synced before it returns.
 *
 * Record layout (objects db): 16-byte header (rv, mtime in ns, both
 * little-endian uint64) followed by the YAML text. Outbox db: key is the rv
 * big-endian (so cursor order is revision order), value is the NUL-separated
 * fields path, author, message, mtime, then the YAML ("" and a flag for
 * deletions). This file must never know about kinds or validation.
 *
 * A full disk: LMDB writes its pages at commit and reports a short write
 * as EIO, and a deletion needs new pages too (copy on write). So the data
 * file keeps STORE_RESERVE bytes allocated beyond its data (fallocate, the
 * file's size unchanged); a change that adds data is refused with ENOSPC
 * when that reserve cannot be kept or the file system has no room left,
 * before LMDB tries, and deletions go on in the reserve. Each batch looks
 * again, so writes come back by themselves when space does. */
#include "store.h"
#include "keylock.h"
#include "log.h"
#include "store_impl.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#define STORE_MAP_SIZE	    (8ULL << 30) /* sparse; the file grows as used */
#define STORE_RESERVE	    (8ULL << 20) /* kept allocated beyond the data, for deletions */
#define STORE_FREE_MIN	    (1ULL << 20) /* free space below which the disk is full */
#define STORE_FREE_FAR	    (1ULL << 30) /* free space that is looked at less often */
#define STORE_FREE_FRESH_NS 100000000LL	 /* how long such a look holds: 100 ms */

struct store__req {
	struct store_change *c;
	int result;
	struct error *err;
	bool done;
	pthread_cond_t wake; /* its writer's: done, or its turn to lead */
	struct store__req *next;
};

struct store {
	const struct store_ops *ops; /* first: store_impl.h */
	MDB_env *env;
	MDB_dbi objects, outbox, meta;
	MDB_dbi declrv; /* key -> revision of its last declared change */
	uint64_t rev;	/* last committed revision; under lock */

	pthread_mutex_t lock;
	pthread_cond_t done_cond;   /* the leadership was given up */
	pthread_cond_t outbox_cond; /* the outbox grew */
	struct store__req *queue, **queue_tail;
	struct store__req *unsynced; /* committed, its meta page not yet synced */
	bool committing;
	bool kicked;

	char *dir;	       /* the store's folder, for messages */
	int fd;		       /* LMDB's data file */
	uint64_t reserved_end; /* the data file is allocated up to here */
	bool full;	       /* the last look found no room */
	uint64_t free_seen;    /* free bytes at the last look */
	int64_t free_seen_ns;  /* when (CLOCK_MONOTONIC) */
	struct keylocks *keys;
};

static int store__mdb_err(struct error **err, int rc, const char *what)
{
	int status = rc == MDB_MAP_FULL ? ENOSPC : rc > 0 && rc < 200 ? rc : EIO;
	return error_set(err, status, "store: %s: %s", what, mdb_strerror(rc));
}

static uint64_t store__free_bytes(struct store *s)
{
	struct statvfs vs;
	if (statvfs(s->dir, &vs) != 0)
		return UINT64_MAX; /* cannot tell: not full */
	return (uint64_t)vs.f_bavail * vs.f_frsize;
}

/* The free bytes as the committer looks at them before a batch: a look
 * holds for STORE_FREE_FRESH_NS while more than STORE_FREE_FAR is free
 * (no writer fills that much in the meantime); closer to full, every
 * batch looks again. Only the committer (or store_open) calls it. */
static uint64_t store__free_bytes_cached(struct store *s)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (s->free_seen >= STORE_FREE_FAR && now - s->free_seen_ns < STORE_FREE_FRESH_NS)
		return s->free_seen;
	s->free_seen = store__free_bytes(s);
	s->free_seen_ns = now;
	return s->free_seen;
}

static int store__full_err(struct store *s, struct error **err)
{
	return error_set(err, ENOSPC,
			 "store: no space left on device in %s (only deletions are "
			 "accepted until space is freed)",
			 s->dir);
}

/* A failed commit: LMDB reports a short write on a full disk as EIO. */
static int store__commit_err(struct store *s, struct error **err, int rc, const char *what)
{
	if ((rc == EIO || rc == ENOSPC || rc == EDQUOT) &&
	    store__free_bytes(s) < STORE_FREE_MIN + STORE_RESERVE)
		return store__full_err(s, err);
	return store__mdb_err(err, rc, what);
}

/* Whether a change that adds data may be committed: the reserve beyond
 * the data is allocated and the file system has room beyond it. Logs
 * when the answer changes. Only the committer (or store_open) calls it. */
static bool store__room(struct store *s)
{
	MDB_envinfo info;
	MDB_stat st;
	bool room = true;
	if (mdb_env_info(s->env, &info) == 0 && mdb_env_stat(s->env, &st) == 0) {
		uint64_t used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
		if (s->reserved_end < used + STORE_RESERVE) {
			/* Allocate ahead, so that this is seldom done. */
			uint64_t want[] = {used + 2 * STORE_RESERVE, used + STORE_RESERVE};
			int e = 0;
			for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
				if (fallocate(s->fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)want[i]) == 0) {
					s->reserved_end = want[i];
					e = 0;
					break;
				}
				e = errno;
			}
			/* A file system without fallocate keeps no reserve,
			 * but is not full for that. */
			if (e == ENOSPC || e == EDQUOT)
				room = false;
		}
	}
	if (room && store__free_bytes_cached(s) < STORE_FREE_MIN)
		room = false;
	if (room == s->full) {
		if (room)
			log_info("store: %s has room again: writes are accepted", s->dir);
		else
			log_warn("store: no space left on device in %s: only deletions are "
				 "accepted until space is freed",
				 s->dir);
	}
	s->full = !room;
	return room;
}

static int64_t store__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void store__put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t store__get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void store__put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint64_t store__get_be64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static void store__lmdb_close(struct store *s);

int store_lmdb_open(const char *dir, struct store **out, struct error **err)
{
	int r, rc;
	if ((r = util_mkdir_p(dir, 0700)) < 0)
		return error_set(err, -r, "store: cannot create %s: %s", dir, strerror(-r));
	struct store *s = xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->done_cond, NULL);
	pthread_cond_init(&s->outbox_cond, NULL);
	s->queue_tail = &s->queue;
	s->ops = &store_lmdb_ops;
	s->keys = keylocks_new();
	s->dir = xstrdup(dir);
	s->fd = -1;
	MDB_txn *txn = NULL;
	if ((rc = mdb_env_create(&s->env)) != 0)
		goto mdb_fail;
	mdb_env_set_maxdbs(s->env, 8);
	mdb_env_set_mapsize(s->env, STORE_MAP_SIZE);
	mdb_env_set_maxreaders(s->env, 256);
	/* NOTLS: read transactions are short and may run on any FUSE thread.
	 * NOMETASYNC: see the top. */
	if ((rc = mdb_env_open(s->env, dir, MDB_NOTLS | MDB_NOMETASYNC, 0600)) != 0)
		goto mdb_fail;
	if ((rc = mdb_env_get_fd(s->env, &s->fd)) != 0)
		goto mdb_fail;
	/* The reserve first: on a full disk the store still opens, read-only
	 * but for deletions. */
	store__room(s);
	if ((rc = mdb_txn_begin(s->env, NULL, 0, &txn)) != 0)
		goto mdb_fail;
	if ((rc = mdb_dbi_open(txn, "objects", MDB_CREATE, &s->objects)) != 0 ||
	    (rc = mdb_dbi_open(txn, "outbox", MDB_CREATE, &s->outbox)) != 0 ||
	    (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &s->meta)) != 0 ||
	    (rc = mdb_dbi_open(txn, "declrv", MDB_CREATE, &s->declrv)) != 0)
		goto mdb_fail;
	MDB_val k = {.mv_size = 3, .mv_data = "rev"}, v;
	rc = mdb_get(txn, s->meta, &k, &v);
	if (rc == 0 && v.mv_size == 8)
		s->rev = store__get_le64(v.mv_data);
	else if (rc != MDB_NOTFOUND && rc != 0)
		goto mdb_fail;
	if ((rc = mdb_txn_commit(txn)) != 0) {
		txn = NULL;
		goto mdb_fail;
	}
	*out = s;
	return 0;
mdb_fail:
	if (txn)
		mdb_txn_abort(txn);
	r = store__mdb_err(err, rc, dir);
	store__lmdb_close(s);
	return r;
}

static void store__lmdb_close(struct store *s)
{
	if (!s)
		return;
	if (s->env) {
		mdb_env_sync(s->env, 1); /* the last meta page (NOMETASYNC) */
		mdb_env_close(s->env);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->done_cond);
	pthread_cond_destroy(&s->outbox_cond);
	keylocks_free(s->keys);
	free(s->dir);
	free(s);
}

static void store__lmdb_lock_key(struct store *s, const char *key)
{
	keylocks_lock(s->keys, key);
}

static void store__lmdb_unlock_key(struct store *s, const char *key)
{
	keylocks_unlock(s->keys, key);
}

static uint64_t store__lmdb_revision(struct store *s)
{
	pthread_mutex_lock(&s->lock);
	uint64_t rev = s->rev;
	pthread_mutex_unlock(&s->lock);
	return rev;
}

static int store__outbox_put(struct store *s, MDB_txn *txn, const struct store_change *c,
			     struct error **err)
{
	char when[24];
	snprintf(when, sizeof(when), "%lld", (long long)c->mtime_ns);
	const char *fields[] = {c->history_path,
				c->author ? c->author : "corral <corral@localhost>",
				c->message ? c->message : "",
				when,
				c->history_yaml ? "1" : "0",
				c->history_yaml ? c->history_yaml : ""};
	size_t total = 0;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		total += strlen(fields[i]) + 1;
	unsigned char key[8];
	store__put_be64(key, c->rv);
	MDB_val k = {.mv_size = 8, .mv_data = key}, v = {.mv_size = total};
	int rc = mdb_put(txn, s->outbox, &k, &v, MDB_RESERVE);
	if (rc != 0)
		return store__mdb_err(err, rc, "outbox");
	char *p = v.mv_data;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		size_t l = strlen(fields[i]) + 1;
		memcpy(p, fields[i], l);
		p += l;
	}
	return 0;
}

/* Applies one change inside txn. A negative result with *fatal false only
 * fails this change; with *fatal true the transaction is lost. */
static int store__apply_one(struct store *s, MDB_txn *txn, uint64_t *rev, struct store_change *c,
			    bool *fatal, struct error **err)
{
	MDB_val k = {.mv_size = strlen(c->key), .mv_data = (void *)c->key}, v;
	int rc = mdb_get(txn, s->objects, &k, &v);
	uint64_t cur_rv = 0;
	if (rc == 0)
		cur_rv = v.mv_size >= 16 ? store__get_le64(v.mv_data) : 0;
	else if (rc != MDB_NOTFOUND)
		return *fatal = true, store__mdb_err(err, rc, c->key);
	if (!c->obj && rc == MDB_NOTFOUND)
		return error_set(err, ENOENT, "%s: no such object", c->key);
	if (cur_rv != c->expect_rv)
		return error_set(err, EAGAIN,
				 "%s: changed meanwhile (revision %llu, expected %llu)", c->key,
				 (unsigned long long)cur_rv, (unsigned long long)c->expect_rv);
	c->rv = *rev + 1;
	c->mtime_ns = store__now_ns();
	if (c->obj) {
		char rvbuf[24];
		snprintf(rvbuf, sizeof(rvbuf), "%llu", (unsigned long long)c->rv);
		ynode_set(ynode_get_map(c->obj, "metadata"), "resourceVersion",
			  ynode_new_str(rvbuf));
		free(c->yaml);
		c->yaml = yaml_emit(c->obj, &c->yaml_len);
		v.mv_size = 16 + c->yaml_len;
		if ((rc = mdb_put(txn, s->objects, &k, &v, MDB_RESERVE)) != 0)
			return *fatal = true, store__mdb_err(err, rc, c->key);
		store__put_le64(v.mv_data, c->rv);
		store__put_le64((unsigned char *)v.mv_data + 8, (uint64_t)c->mtime_ns);
		memcpy((char *)v.mv_data + 16, c->yaml, c->yaml_len);
	} else if ((rc = mdb_del(txn, s->objects, &k, NULL)) != 0) {
		return *fatal = true, store__mdb_err(err, rc, c->key);
	}
	if (c->obj && c->decl_changed) {
		unsigned char buf[8];
		store__put_le64(buf, c->rv);
		MDB_val dv = {.mv_size = 8, .mv_data = buf};
		if ((rc = mdb_put(txn, s->declrv, &k, &dv, 0)) != 0)
			return *fatal = true, store__mdb_err(err, rc, c->key);
	} else if (!c->obj && (rc = mdb_del(txn, s->declrv, &k, NULL)) != 0 && rc != MDB_NOTFOUND) {
		return *fatal = true, store__mdb_err(err, rc, c->key);
	}
	if (c->history_path && store__outbox_put(s, txn, c, err) < 0)
		return *fatal = true, -EIO;
	*rev = c->rv;
	return 0;
}

/* Commits one batch: the queue as it was when called, its meta page
 * unsynced (see the top). Sets each change's result; the batch is
 * not done yet. Returns whether a transaction was committed: then its
 * data pages were synced, which made the batch before it durable, and its
 * own meta page waits for the next sync. Under the lock: s->rev. */
static bool store__commit_batch(struct store *s, struct store__req *batch, uint64_t rev)
{
	MDB_txn *txn = NULL;
	struct error *fatal_err = NULL;
	bool fatal = false, any = false, committed = false;
	int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
	if (rc != 0) {
		store__mdb_err(&fatal_err, rc, "begin");
		fatal = true;
	}
	uint64_t start_rev = rev;
	bool adds = false;
	for (struct store__req *q = batch; q; q = q->next)
		adds = adds || q->c->obj;
	bool room = !adds || store__room(s);
	for (struct store__req *q = batch; q && !fatal; q = q->next) {
		if (!room && q->c->obj) {
			q->result = store__full_err(s, &q->err);
			continue;
		}
		q->result = store__apply_one(s, txn, &rev, q->c, &fatal, &q->err);
		if (q->result == 0)
			any = true;
	}
	if (!fatal && any) {
		unsigned char buf[8];
		store__put_le64(buf, rev);
		MDB_val k = {.mv_size = 3, .mv_data = "rev"}, v = {.mv_size = 8, .mv_data = buf};
		if ((rc = mdb_put(txn, s->meta, &k, &v, 0)) != 0 ||
		    (rc = mdb_txn_commit(txn)) != 0) {
			if (rc != 0 && txn && !fatal_err)
				store__commit_err(s, &fatal_err, rc, "commit");
			fatal = true;
		} else {
			committed = true;
		}
		txn = NULL;
	}
	if (txn)
		mdb_txn_abort(txn);
	if (fatal)
		for (struct store__req *q = batch; q; q = q->next)
			q->result = error_set(&q->err, fatal_err ? fatal_err->status : EIO, "%s",
					      fatal_err ? fatal_err->msg : "store: commit failed");
	pthread_mutex_lock(&s->lock);
	if (!fatal)
		s->rev = rev;
	if (!fatal && rev != start_rev)
		pthread_cond_broadcast(&s->outbox_cond);
	pthread_mutex_unlock(&s->lock);
	error_free(fatal_err);
	return committed;
}

/* The batch is over (under the lock): its writers may return, each woken
 * alone (self is the caller's, awake). rc: the sync that was to make it
 * durable failed (LMDB's code), or 0. */
static void store__batch_done(struct store *s, struct store__req *batch, int rc,
			      const struct store__req *self)
{
	for (struct store__req *q = batch, *next; q; q = next) {
		next = q->next; /* q is its writer's once done */
		if (rc != 0 && q->result == 0) {
			error_free(steal_pointer(&q->err));
			q->result = store__commit_err(s, &q->err, rc, "sync");
		}
		q->done = true;
		if (q != self)
			pthread_cond_signal(&q->wake);
	}
}

/* Commits what is queued, as long as the leader's own change is not
 * durable (under the lock; s->committing set). Returns the batch that
 * waits for a sync of its own, if any. */
static struct store__req *store__lead(struct store *s, struct store__req *self)
{
	for (;;) {
		struct store__req *batch = s->queue, *prev = s->unsynced;
		s->queue = NULL;
		s->queue_tail = &s->queue;
		s->unsynced = NULL;
		uint64_t rev = s->rev;
		pthread_mutex_unlock(&s->lock);
		bool committed = store__commit_batch(s, batch, rev);
		int rc = prev && !committed ? mdb_env_sync(s->env, 1) : 0;
		pthread_mutex_lock(&s->lock);
		if (prev)
			store__batch_done(s, prev, rc, self);
		if (!committed) {
			store__batch_done(s, batch, 0, self);
			return NULL;
		}
		if (!s->queue)
			return batch; /* no one to sync it for us */
		/* The next batch's commit syncs this one: ours, if our own
		 * change is not durable yet; else the next leader's. */
		s->unsynced = batch;
		if (self->done)
			return NULL;
	}
}

static int store__lmdb_apply(struct store *s, struct store_change *c, struct error **err)
{
	struct store__req req = {.c = c, .wake = PTHREAD_COND_INITIALIZER};
	pthread_mutex_lock(&s->lock);
	*s->queue_tail = &req;
	s->queue_tail = &req.next;
	while (!req.done) {
		if (s->committing || !s->queue) {
			pthread_cond_wait(&req.wake, &s->lock);
			continue;
		}
		/* Lead: take everything queued so far into one transaction,
		 * whose data sync makes the batch before it durable. */
		s->committing = true;
		struct store__req *own = store__lead(s, &req);
		s->committing = false;
		/* The next batch may begin meanwhile: its first writer leads. */
		if (s->queue)
			pthread_cond_signal(&s->queue->wake);
		pthread_cond_broadcast(&s->done_cond);
		if (own) {
			/* Once more, outside the lock. */
			pthread_mutex_unlock(&s->lock);
			int rc = mdb_env_sync(s->env, 1);
			pthread_mutex_lock(&s->lock);
			store__batch_done(s, own, rc, &req);
		}
	}
	pthread_mutex_unlock(&s->lock);
	pthread_cond_destroy(&req.wake);
	if (req.result < 0) {
		if (err && !*err)
			*err = req.err;
		else
			error_free(req.err);
	}
	return req.result;
}

static int store__lmdb_raise_revision(struct store *s, uint64_t rev, struct error **err)
{
	pthread_mutex_lock(&s->lock);
	while (s->committing)
		pthread_cond_wait(&s->done_cond, &s->lock);
	int r = 0;
	if (rev > s->rev) {
		MDB_txn *txn;
		unsigned char buf[8];
		store__put_le64(buf, rev);
		MDB_val k = {.mv_size = 3, .mv_data = "rev"}, v = {.mv_size = 8, .mv_data = buf};
		int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
		if (rc == 0 && (rc = mdb_put(txn, s->meta, &k, &v, 0)) != 0)
			mdb_txn_abort(txn);
		else if (rc == 0 && (rc = mdb_txn_commit(txn)) == 0)
			rc = mdb_env_sync(s->env, 1); /* its meta page (NOMETASYNC) */
		if (rc != 0)
			r = store__commit_err(s, err, rc, "revision");
		else
			s->rev = rev;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

void store_record_clear(struct store_record *rec)
{
	free(rec->yaml);
	memset(rec, 0, sizeof(*rec));
}

static void store__record_from(const MDB_val *v, bool with_yaml, struct store_record *rec)
{
	const unsigned char *p = v->mv_data;
	memset(rec, 0, sizeof(*rec));
	if (v->mv_size < 16)
		return;
	rec->rv = store__get_le64(p);
	rec->mtime_ns = (int64_t)store__get_le64(p + 8);
	rec->len = v->mv_size - 16;
	if (with_yaml)
		rec->yaml = xstrndup((const char *)p + 16, rec->len);
}

static int store__lmdb_get(struct store *s, const char *key, struct store_record *rec,
			   struct error **err)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
	if (rc != 0)
		return store__mdb_err(err, rc, "read");
	MDB_val k = {.mv_size = strlen(key), .mv_data = (void *)key}, v;
	rc = mdb_get(txn, s->objects, &k, &v);
	if (rc == 0) {
		store__record_from(&v, true, rec);
		MDB_val dv;
		if (mdb_get(txn, s->declrv, &k, &dv) == 0 && dv.mv_size == 8)
			rec->decl_rv = store__get_le64(dv.mv_data);
	}
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return error_set(err, ENOENT, "%s: no such object", key);
	if (rc != 0)
		return store__mdb_err(err, rc, key);
	return 0;
}

/* Every object in one read transaction; *rev (when not NULL): the
 * revision that transaction sees. */
static int store__lmdb_scan(struct store *s, bool with_yaml,
			    int (*fn)(void *data, const char *key, const struct store_record *rec),
			    void *data, uint64_t *rev, struct error **err)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
	if (rc != 0)
		return store__mdb_err(err, rc, "read");
	if (rev) {
		MDB_val rk = {.mv_size = 3, .mv_data = "rev"}, rv;
		*rev = mdb_get(txn, s->meta, &rk, &rv) == 0 && rv.mv_size == 8
			   ? store__get_le64(rv.mv_data)
			   : 0;
	}
	if ((rc = mdb_cursor_open(txn, s->objects, &cur)) != 0) {
		mdb_txn_abort(txn);
		return store__mdb_err(err, rc, "cursor");
	}
	MDB_val k, v;
	int r = 0;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && r == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		cleanup_free char *key = xstrndup(k.mv_data, k.mv_size);
		struct store_record rec;
		store__record_from(&v, with_yaml, &rec);
		r = fn(data, key, &rec);
		store_record_clear(&rec);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return store__mdb_err(err, rc, "scan");
	return r < 0 ? r : 0;
}

static int store__lmdb_foreach(struct store *s, bool with_yaml,
			       int (*fn)(void *data, const char *key,
					 const struct store_record *rec),
			       void *data, struct error **err)
{
	return store__lmdb_scan(s, with_yaml, fn, data, NULL, err);
}

static int store__lmdb_snapshot(struct store *s,
				int (*fn)(void *data, const char *key,
					  const struct store_record *rec),
				void *data, uint64_t *rev, struct error **err)
{
	return store__lmdb_scan(s, true, fn, data, rev, err);
}

static bool store__lmdb_is_empty(struct store *s)
{
	MDB_txn *txn;
	MDB_stat st = {0};
	if (mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn) != 0)
		return false;
	mdb_stat(txn, s->objects, &st);
	mdb_txn_abort(txn);
	return st.ms_entries == 0;
}

static int store__lmdb_outbox_read(struct store *s, uint64_t after_rv, size_t max,
				   struct store_outbox_entry **out, size_t *n, struct error **err)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	*out = NULL;
	*n = 0;
	if (after_rv == UINT64_MAX)
		return 0; /* nothing can come after the last revision */
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
	if (rc != 0)
		return store__mdb_err(err, rc, "read");
	if ((rc = mdb_cursor_open(txn, s->outbox, &cur)) != 0) {
		mdb_txn_abort(txn);
		return store__mdb_err(err, rc, "cursor");
	}
	struct store_outbox_entry *e = NULL;
	size_t cnt = 0;
	unsigned char start[8];
	store__put_be64(start, after_rv + 1);
	MDB_val k = {.mv_size = 8, .mv_data = start}, v;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0 && cnt < max;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const char *f[6];
		const char *p = v.mv_data, *end = p + v.mv_size;
		size_t nf = 0;
		while (p < end && nf < 6) {
			f[nf++] = p;
			p += strnlen(p, (size_t)(end - p)) + 1;
		}
		if (k.mv_size != 8 || nf != 6)
			continue; /* not ours; never written by this file */
		e = xrealloc(e, sizeof(*e) * (cnt + 1));
		struct store_outbox_entry *x = &e[cnt++];
		x->rv = store__get_be64(k.mv_data);
		x->path = xstrdup(f[0]);
		x->author = xstrdup(f[1]);
		x->message = xstrdup(f[2]);
		x->when_ns = strtoll(f[3], NULL, 10);
		x->yaml = f[4][0] == '1' ? xstrndup(f[5], (size_t)(end - f[5])) : NULL;
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	*out = e;
	*n = cnt;
	return 0;
}

void store_outbox_free(struct store_outbox_entry *e, size_t n)
{
	if (!e)
		return; /* a failed read's: no entries, whatever n says */
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].yaml);
		free(e[i].message);
		free(e[i].author);
	}
	free(e);
}

static int store__lmdb_outbox_trim(struct store *s, uint64_t rv, struct error **err)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	/* One fsync (of the data pages) instead of two (NOMETASYNC, see the
	 * top): the trim need not be durable, only consistent. */
	int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
	if (rc != 0)
		return store__mdb_err(err, rc, "begin");
	if ((rc = mdb_cursor_open(txn, s->outbox, &cur)) != 0) {
		mdb_txn_abort(txn);
		return store__mdb_err(err, rc, "cursor");
	}
	MDB_val k, v;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size == 8 && store__get_be64(k.mv_data) > rv)
			break;
		if ((rc = mdb_cursor_del(cur, 0)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return store__mdb_err(err, rc, "trim");
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		return store__commit_err(s, err, rc, "commit");
	return 0;
}

static void store__lmdb_outbox_wait(struct store *s, uint64_t after_rv, int timeout_ms)
{
	struct timespec ts = util_deadline(CLOCK_REALTIME, (uint64_t)timeout_ms);
	pthread_mutex_lock(&s->lock);
	while (s->rev <= after_rv && !s->kicked)
		if (pthread_cond_timedwait(&s->outbox_cond, &s->lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&s->lock);
}

static void store__lmdb_outbox_kick(struct store *s)
{
	pthread_mutex_lock(&s->lock);
	s->kicked = true;
	pthread_cond_broadcast(&s->outbox_cond);
	pthread_mutex_unlock(&s->lock);
}

const struct store_ops store_lmdb_ops = {
    .close = store__lmdb_close,
    .apply = store__lmdb_apply,
    .lock_key = store__lmdb_lock_key,
    .unlock_key = store__lmdb_unlock_key,
    .get = store__lmdb_get,
    .foreach = store__lmdb_foreach,
    .snapshot = store__lmdb_snapshot,
    .revision = store__lmdb_revision,
    .raise_revision = store__lmdb_raise_revision,
    .is_empty = store__lmdb_is_empty,
    .outbox_read = store__lmdb_outbox_read,
    .outbox_trim = store__lmdb_outbox_trim,
    .outbox_wait = store__lmdb_outbox_wait,
    .outbox_kick = store__lmdb_outbox_kick,
};
