/* ops.c: the FUSE operations. See ops.h for the caching rules.
 *
 * Every handler ends in exactly one fuse_reply_*. What a handler does
 * beyond the tree is elsewhere: the write path (write.c, with its
 * admission hooks), namespaces (namespace.c), .errors (errors.c), the
 * logs/ view (logs.c), the workers (workers.c) and the notifier
 * (notifier.c). The tree lock is held
 * only around memory work; reading and writing the store, and notifying
 * the kernel, happen outside it. corral-fs never changes an object on its
 * own: each change here is the direct result of a request. */
#include "ops.h"
#include "fs.h"
#include "kinds.h"
#include "log.h"
#include "logs.h"
#include "names.h"
#include "namespace.h"
#include "object.h"
#include "remote.h"
#include "treepath.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum fs__op {
	FS_OP_SETATTR,
	FS_OP_MKDIR,
	FS_OP_RMDIR,
	FS_OP_UNLINK,
	FS_OP_RENAME,
	FS_OP_FLUSH,
	FS_OP_FSYNC,
	FS_OP_OPEN /* a writer's open that waits for the page cache's readers */
};

struct fs__handle;

struct fs__job {
	enum fs__op op;
	fuse_req_t req;
	fuse_ino_t ino, newparent;
	char *name, *newname;
	struct stat attr;
	int to_set;
	struct fuse_file_info fi;
	bool has_fi;
	mode_t mode;
	unsigned int flags;
	int datasync;
	struct fs__handle *handle; /* FS_OP_OPEN: the handle being opened */
	bool create;		   /* FS_OP_OPEN: for a create (reply with entry) */
	struct fuse_entry_param entry;
};

struct fs__handle {
	struct blob *snap; /* objects read, .errors: what this open sees */
	char *buf;	   /* objects written: the whole new text */
	size_t len, cap;
	bool write, dirty;
	bool wrote;		  /* scratch: written (or truncated) through this handle */
	bool append;		  /* object written with O_APPEND */
	bool fresh;		  /* object: opened, nothing written or truncated yet */
	bool cached;		  /* object read through the page cache (counted in
				     the node's cached) */
	bool changer;		  /* object writer (counted in the node's changing) */
	bool waived;		  /* cached reader a change gave up waiting for: no
				     longer counted, never waited for again */
	struct fs__handle *rnext; /* the node's other counted cached readers */
	pid_t pid;		  /* object writer: the thread that opened it */
	int failed;		  /* a write or truncation refused (its errno): every
				     later close fails and commits nothing */
	struct fs__handle *wnext; /* the node's other writers */
	int fd;			  /* a container log: the file on disk, else -1 */
	char *remote;		  /* a container log on another host: its URL */
	pthread_mutex_t lock;
};

struct fs__dirent {
	uint64_t ino;
	mode_t type;
	char *name;
};

struct fs__dir {
	struct fs__dirent *ents;
	size_t n;
};

static struct fs *fs__of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

struct node *fs__relock(struct fs *fs, uint64_t ino)
{
	FS_LOCK_W(fs);
	return tree_by_ino(fs->tree, ino);
}

/* ---- the page cache's readers and the changes that wait for them ---- */

/* The readers of n that a change gave up waiting for (write lock held):
 * each is marked, leaves the count, and is never waited for again, so a
 * reader that keeps the file open costs one wait, not one per change. */
static int fs__waive_readers(struct node *n)
{
	int k = 0;
	for (struct fs__handle *h = n->readers; h; h = h->rnext, k++)
		h->waived = true;
	n->readers = NULL;
	n->cached = 0;
	return k;
}

/* Waits until object ino has no reader served through the page cache,
 * or FS_QUIET_WAIT_MS have passed. Without the tree lock. */
static void fs__wait_quiet(struct fs *fs, uint64_t ino)
{
	struct timespec end = util_deadline(CLOCK_MONOTONIC, FS_QUIET_WAIT_MS);
	pthread_mutex_lock(&fs->quiet_lock);
	for (;;) {
		unsigned long gen = fs->quiet_gen;
		pthread_mutex_unlock(&fs->quiet_lock);
		FS_LOCK_R(fs);
		struct node *n = tree_by_ino(fs->tree, ino);
		int readers = n ? n->cached : 0;
		FS_UNLOCK(fs);
		pthread_mutex_lock(&fs->quiet_lock);
		if (readers == 0)
			break;
		int rc = 0;
		while (fs->quiet_gen == gen && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&fs->quiet_cond, &fs->quiet_lock, &end);
		if (rc == ETIMEDOUT) {
			pthread_mutex_unlock(&fs->quiet_lock);
			n = fs__relock(fs, ino);
			int waived = n ? fs__waive_readers(n) : 0;
			FS_UNLOCK(fs);
			pthread_mutex_lock(&fs->quiet_lock);
			if (waived)
				log_warn("inode %ju: %d reader(s) kept it open %d ms; changing it "
					 "anyway, and not waiting for them again",
					 (uintmax_t)ino, waived, FS_QUIET_WAIT_MS);
			break;
		}
	}
	pthread_mutex_unlock(&fs->quiet_lock);
}

/* Page cache reader h of n closed (write lock held): tells the changes
 * waiting for n when it was the last counted. Returns whether to call
 * fs__quiet_wake() once the lock is released. */
static bool fs__cached_closed(struct node *n, struct fs__handle *h)
{
	if (h->waived)
		return false;
	for (struct fs__handle **pp = (struct fs__handle **)&n->readers; *pp; pp = &(*pp)->rnext)
		if (*pp == h) {
			*pp = h->rnext;
			break;
		}
	if (n->cached > 0)
		n->cached--;
	return n->cached == 0 && n->changing > 0;
}

static void fs__quiet_wake(struct fs *fs)
{
	pthread_mutex_lock(&fs->quiet_lock);
	fs->quiet_gen++;
	pthread_cond_broadcast(&fs->quiet_cond);
	pthread_mutex_unlock(&fs->quiet_lock);
}

int fs__replace_text(struct fs *fs, uint64_t ino, bool held, fs__text_change *change, void *data)
{
	struct node *n;
	if (!held) {
		n = fs__relock(fs, ino);
		if (n)
			n->changing++;
		FS_UNLOCK(fs);
		fs__wait_quiet(fs, ino);
	}
	int r = change(fs, ino, data);
	/* Before the request is answered, so before its inotify event. */
	fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	if (!held) {
		n = fs__relock(fs, ino);
		if (n && n->changing > 0)
			n->changing--;
		FS_UNLOCK(fs);
	}
	return r;
}

/* ---- names ---- */

/* Whether name, in a folder that holds objects, names one (names.h). */
static bool fs__object_name(const char *name)
{
	return names_object_file(name, NULL);
}

static char *fs__base(const char *name)
{
	return xstrndup(name, strlen(name) - 5);
}

/* The kind of object a file named name in dir would be, or NULL if it
 * would be a scratch file. */
static const struct kind_info *fs__object_kind(const struct node *dir, const char *name)
{
	if (!fs__object_name(name))
		return NULL;
	if (dir->type == NODE_KIND)
		return dir->kind;
	if (dir->type == NODE_NSROOT)
		return dir->kind; /* the kind whose objects are namespaces */
	return NULL;
}

/* Whether name in dir is a drop box: "<anything>.yaml" at a namespace's
 * top or at the mount's top, filed by corral-ctrl. */
static bool fs__drop_name(const struct node *dir, const char *name)
{
	return fs__object_name(name) && (dir->type == NODE_NS || dir->type == NODE_ROOT);
}

/* "namespaces/dev/pods/x.yaml"; needs the lock. */
static char *fs__path(const struct node *n)
{
	if (!n->parent)
		return xstrdup(n->name);
	if (n->parent->type == NODE_ROOT)
		return xstrdup(n->name);
	cleanup_free char *p = fs__path(n->parent);
	return xasprintf("%s/%s", p, n->name);
}

static char *fs__child_path(const struct node *dir, const char *name)
{
	if (dir->type == NODE_ROOT)
		return xstrdup(name);
	cleanup_free char *p = fs__path(dir);
	return xasprintf("%s/%s", p, name);
}

char *fs__author(fuse_req_t req, struct fs *fs)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	/* The last writer's name is kept: most writes come from one user, and
	 * the password database is a file read per lookup. */
	pthread_mutex_lock(&fs->author_lock);
	if (fs->author && fs->author_uid == ctx->uid) {
		char *a = xstrdup(fs->author);
		pthread_mutex_unlock(&fs->author_lock);
		return a;
	}
	pthread_mutex_unlock(&fs->author_lock);
	struct passwd pw, *res = NULL;
	char buf[1024];
	char *a;
	if (getpwuid_r(ctx->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		a = xasprintf("%s <%s@%s>", pw.pw_name, pw.pw_name, fs->hostname);
	else
		a = xasprintf("uid%u <uid%u@%s>", (unsigned)ctx->uid, (unsigned)ctx->uid,
			      fs->hostname);
	pthread_mutex_lock(&fs->author_lock);
	free(fs->author);
	fs->author = xstrdup(a);
	fs->author_uid = ctx->uid;
	pthread_mutex_unlock(&fs->author_lock);
	return a;
}

/* ---- errors ---- */

void fs__reject(struct fs *fs, const char *path, const struct error *e)
{
	size_t len = errors_add(fs->errors, path, e);
	/* .errors has no attribute cache: stat shows the new size at once. */
	struct node *n = fs__relock(fs, fs->errors_ino);
	if (n) {
		n->size = len;
		clock_gettime(CLOCK_REALTIME, &n->mtime);
		n->ctime = n->mtime;
	}
	FS_UNLOCK(fs);
}

static struct blob *fs__errors_blob(struct fs *fs)
{
	size_t len = 0;
	cleanup_free char *text = errors_text(fs->errors, &len);
	return blob_new(text, len);
}

int fs__errno(const struct error *e)
{
	int s = e ? e->status : EIO;
	return s > 0 ? s : EIO;
}

/* Refuses a request on path (below the mount): the reason goes to
 * .errors, as every refusal's does. Returns status, for the reply. Called
 * without the lock. */
static int fs__refuse(struct fs *fs, const char *path, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fs__refuse(struct fs *fs, const char *path, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	struct error e = {status, msg};
	fs__reject(fs, path, &e);
	return status;
}

/* ---- attributes ---- */

static void fs__stat(const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_nlink = S_ISDIR(n->mode) ? 2 : 1;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_size = (off_t)n->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((n->size + 511) / 512);
	st->st_atim = n->atime;
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
}

/* Container logs change on disk behind our back: cache them briefly. */
static double fs__ttl(const struct node *n)
{
	return n->type == NODE_ERRORS ? 0.0 : logs_node(n) ? 1.0 : FS_TTL;
}

/* Fills e for n and counts the kernel's new reference; needs the lock
 * (read is enough: the count is atomic, and nodes are freed only under the
 * write lock). */
void fs__entry(struct node *n, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->generation = 1;
	fs__stat(n, &e->attr);
	e->attr_timeout = fs__ttl(n);
	e->entry_timeout = logs_node(n) ? 1.0 : FS_TTL;
	__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
}

mode_t fs__object_mode(const struct kind_info *k)
{
	return S_IFREG | k->file_mode;
}

/* Whether a kind's files are for their owner alone (Secrets, 0600). */
static bool fs__private_kind(const struct kind_info *k)
{
	return k && !(k->file_mode & 077);
}

/* Whether regular file n may hold what only root may read: the file of a
 * private kind's object (or a backup it was renamed to), a scratch file
 * in a private kind's folder (an editor's or rsync's temporary copy), or
 * a drop box file (it may hold Secrets until corral-ctrl files it).
 * Needs the lock. */
static bool fs__private_file(const struct node *n)
{
	if (!S_ISREG(n->mode))
		return false;
	if (n->drop || fs__private_kind(n->kind))
		return true;
	return n->parent && n->parent->type == NODE_KIND && fs__private_kind(n->parent->kind);
}

/* Keeps a private file's mode at 0600 at most, whatever its writer asks
 * (cp -a, rsync -a, tar x, chmod): the mode is clamped, never refused, so
 * that those tools succeed. Write lock. */
static void fs__clamp_mode(struct node *n)
{
	if (fs__private_file(n))
		n->mode = (n->mode & (mode_t)~07777) | (n->mode & 0600);
}

/* The path of node ino below the mount, for .errors. */
static char *fs__ino_path(struct fs *fs, uint64_t ino)
{
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	char *path = n ? fs__path(n) : xstrdup("?");
	FS_UNLOCK(fs);
	return path;
}

/* ---- the write path ---- */

static int fs__load_one(void *data, const char *key, const struct store_record *rec);

int fs__write(struct fs *fs, const struct write_target *t, const char *text, size_t len,
	      const char *author, struct blob **out, uint64_t *rv, struct error **err)
{
	struct write_result res = {0};
	int r = write_object(fs->store, fs->admission, t, text, len, author, &res, err);
	if (r < 0)
		return r;
	if (r == WRITE_GONE) {
		*out = NULL;
		*rv = 0;
		return r;
	}
	*out = blob_new(res.yaml, res.len);
	*rv = res.rv;
	write_result_clear(&res);
	return 0;
}

int fs__delete(struct fs *fs, const struct write_target *t, const char *author, struct error **err)
{
	return write_delete(fs->store, fs->admission, t, author, err);
}

/* Where a request's write goes: the write path's target (owning its
 * strings) and the file's path below the mount, for .errors. */
struct fs__target {
	const struct kind_info *kind;
	char *ns, *name, *key, *path;
	struct write_target w; /* the above, for write.h */
};

static void fs__target_clear(struct fs__target *t)
{
	free(t->ns);
	free(t->name);
	free(t->key);
	free(t->path);
	memset(t, 0, sizeof(*t));
}

/* Needs the lock. */
static void fs__target_of(const struct node *dir, const char *name, struct fs__target *t)
{
	t->kind = fs__object_kind(dir, name);
	t->ns = dir->type == NODE_KIND && dir->ns ? xstrdup(dir->ns) : NULL;
	t->name = fs__base(name);
	t->key = tree_key(dir, name);
	t->path = fs__child_path(dir, name);
	t->w = (struct write_target){.kind = t->kind, .ns = t->ns, .name = t->name, .key = t->key};
}

void fs__set_content(struct node *n, struct blob *b, uint64_t rv)
{
	if (rv < n->rv && !n->pending) {
		blob_unref(b); /* a newer write already landed */
		return;
	}
	blob_unref(n->content);
	n->content = b;
	n->size = b->len;
	n->rv = rv;
	n->pending = false;
	clock_gettime(CLOCK_REALTIME, &n->mtime);
	n->ctime = n->mtime;
}

/* Loads an object's text into a blob (from the cache or the store). */
static struct blob *fs__load(struct fs *fs, uint64_t ino, struct error **err)
{
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	struct blob *b = n ? blob_ref(n->content) : NULL;
	char *key = n && !b && n->parent && !n->pending ? tree_object_key(n) : NULL;
	bool pending = n && n->pending;
	FS_UNLOCK(fs);
	if (b)
		return b;
	if (pending)
		return blob_new("", 0);
	if (!key) {
		error_set(err, ENOENT, "no such object");
		return NULL;
	}
	struct store_record rec = {0};
	int r = store_get(fs->store, key, &rec, err);
	free(key);
	if (r < 0)
		return NULL;
	b = blob_new(rec.yaml, rec.len);
	n = fs__relock(fs, ino);
	if (n && !n->content && n->rv == rec.rv) {
		n->content = blob_ref(b);
		n->size = b->len;
	}
	FS_UNLOCK(fs);
	store_record_clear(&rec);
	return b;
}

/* ---- lookup and attributes ---- */

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	struct fuse_entry_param e;
	FS_LOCK_R(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (!n && dir && dir->type == NODE_NS) {
		const struct kind_info *k = kinds_by_plural(name);
		if ((k && k->namespaced) || strcmp(name, "logs") == 0) {
			/* A kind folder someone removed comes back. */
			FS_UNLOCK(fs);
			dir = fs__relock(fs, parent);
			if (dir && dir->parent)
				namespace_ensure_kinds(fs, dir);
			n = dir ? tree_child(fs->tree, dir, name) : NULL;
		}
	}
	if (dir && (dir->type == NODE_LOGS || dir->type == NODE_LOGPOD)) {
		/* Always from the disk: a restart changes which file it is. */
		FS_UNLOCK(fs);
		logs_refresh(fs->tree, fs->log_dir, fs->remotelogs, parent);
		FS_LOCK_R(fs);
		dir = tree_by_ino(fs->tree, parent);
		n = dir ? tree_child(fs->tree, dir, name) : NULL;
	}
	if (!n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, dir ? ENOENT : ESTALE);
		return;
	}
	bool logfile = n->type == NODE_LOGFILE;
	fs__entry(n, &e);
	FS_UNLOCK(fs);
	if (logfile) {
		cleanup_free char *url = logs_remote_url(fs->tree, e.ino);
		if (url && fs->remotelogs) { /* its size from its node */
			remotelogs_reply_entry(fs->remotelogs, req, &e, url);
			return;
		}
		logs_file_stat(fs->tree, e.ino, &e.attr);
	}
	fuse_reply_entry(req, &e);
}

static void fs__forget_one(struct fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct node *n = tree_by_ino(fs->tree, ino);
	if (n)
		tree_forget(fs->tree, n, nlookup);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_W(fs);
	fs__forget_one(fs, ino, nlookup);
	FS_UNLOCK(fs);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_W(fs);
	for (size_t i = 0; i < count; i++)
		fs__forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	FS_UNLOCK(fs);
	fuse_reply_none(req);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct fs *fs = fs__of(req);
	struct stat st;
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	fs__stat(n, &st);
	double ttl = fs__ttl(n);
	bool logfile = n->type == NODE_LOGFILE;
	FS_UNLOCK(fs);
	if (logfile) {
		cleanup_free char *url = logs_remote_url(fs->tree, ino);
		if (url && fs->remotelogs) { /* its size from its node */
			remotelogs_reply_attr(fs->remotelogs, req, &st, ttl, url);
			return;
		}
		logs_file_stat(fs->tree, ino, &st);
	}
	fuse_reply_attr(req, &st, ttl);
}

/* After a refused write of object ino (stored under key): a new file
 * leaves again, unless the store holds the object (a file renamed away by
 * an editor and written anew): then the file shows the stored object. */
static void fs__undo_pending(struct fs *fs, uint64_t ino, const char *key)
{
	bool gone = false;
	uint64_t dir_ino = 0;
	cleanup_free char *name = NULL;
	struct store_record rec = {0};
	bool stored = store_get(fs->store, key, &rec, NULL) == 0;
	struct node *n = fs__relock(fs, ino);
	if (n && n->pending && n->parent) {
		if (stored) {
			fs__set_content(n, blob_new(rec.yaml, rec.len), rec.rv);
		} else {
			dir_ino = n->parent->ino;
			name = xstrdup(n->name);
			tree_unlink(fs->tree, n);
			gone = true;
		}
	}
	FS_UNLOCK(fs);
	store_record_clear(&rec);
	if (gone)
		fuse_lowlevel_notify_inval_entry(fs->se, dir_ino, name, strlen(name));
	else if (stored)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
}

/* The object of node ino was deleted by a write that removed its last
 * finalizer (or by the namespace controller's, for a Namespace): its node
 * leaves the tree, and a Namespace's folder with it. */
static void fs__forget_object(struct fs *fs, uint64_t ino, const struct write_target *t)
{
	uint64_t dir_ino = 0;
	cleanup_free char *name = NULL;
	struct node *n = fs__relock(fs, ino);
	if (n && n->parent) {
		dir_ino = n->parent->ino;
		name = xstrdup(n->name);
		tree_unlink(fs->tree, n);
	}
	FS_UNLOCK(fs);
	if (name)
		notifier_inval_entry(fs->notifier, dir_ino, name);
	if (t->kind->namespace_object)
		namespace_forget(fs, t->name);
}

/* A deletion left the object of node n (in folder dir) in the store,
 * being deleted (it has finalizers): its node shows what is stored now.
 * Write lock held. */
static void fs__show_kept(struct fs *fs, struct node *n, const char *key)
{
	struct store_record rec = {0};
	if (store_get(fs->store, key, &rec, NULL) < 0)
		return;
	fs__set_content(n, blob_new(rec.yaml, rec.len), rec.rv);
	store_record_clear(&rec);
}

/* A commit of bytes as an object's new text (fs__commit_change). */
struct fs__commit {
	fuse_req_t req;
	const char *text;
	size_t len;
};

/* Commits the bytes as the object node ino stands for, or records why
 * not; fs__replace_text's change. Returns 0 or a positive errno. */
static int fs__commit_change(struct fs *fs, uint64_t ino, void *data)
{
	const struct fs__commit *c = data;
	fuse_req_t req = c->req;
	const char *text = c->text;
	size_t len = c->len;
	struct fs__target t = {0};
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || !n->parent || n->type != NODE_OBJECT) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	fs__target_of(n->parent, n->name, &t);
	t.w.expect_absent = n->pending;
	FS_UNLOCK(fs);

	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	struct blob *b = NULL;
	uint64_t rv = 0;
	int r = fs__write(fs, &t.w, text, len, author, &b, &rv, &err);
	if (r < 0) {
		int e = fs__errno(err);
		fs__reject(fs, t.path, err);
		error_free(err);
		/* The writer's bytes may have grown the size the kernel keeps
		 * for the file: fs__replace_text invalidates it. */
		fs__undo_pending(fs, ino, t.key);
		fs__target_clear(&t);
		return e;
	}
	if (r == WRITE_GONE) {
		/* The last finalizer went: so did the object. */
		fs__forget_object(fs, ino, &t.w);
		fs__target_clear(&t);
		return 0;
	}
	n = fs__relock(fs, ino);
	if (n)
		fs__set_content(n, b, rv);
	else
		blob_unref(b);
	if (t.kind->namespace_object)
		namespace_add(fs, t.name); /* a Namespace file brings its folder */
	FS_UNLOCK(fs);
	fs__target_clear(&t);
	return 0;
}

/* Commits text as object ino's new text. held: by a writer's handle,
 * which waited for the page cache's readers at its open. */
static int fs__commit_node(fuse_req_t req, struct fs *fs, uint64_t ino, const char *text,
			   size_t len, bool held)
{
	struct fs__commit c = {req, text, len};
	return fs__replace_text(fs, ino, held, fs__commit_change, &c);
}

/* truncate(2) of an object by path (fs__truncate_change). */
struct fs__truncation {
	fuse_req_t req;
	size_t size;
};

/* Commits what a truncation leaves of object ino; fs__replace_text's
 * change. */
static int fs__truncate_change(struct fs *fs, uint64_t ino, void *data)
{
	const struct fs__truncation *tr = data;
	struct error *err = NULL;
	int e = 0;
	struct blob *cur = fs__load(fs, ino, &err);
	if (!cur) {
		e = fs__errno(err);
		error_free(err);
	} else if (tr->size != cur->len) {
		cleanup_free char *buf = xcalloc(1, tr->size + 1);
		memcpy(buf, cur->data, tr->size < cur->len ? tr->size : cur->len);
		struct fs__commit c = {tr->req, buf, tr->size};
		e = fs__commit_change(fs, ino, &c);
	}
	blob_unref(cur);
	return e;
}

static void fs__handle_truncate(struct fs__handle *h, size_t size);
static bool fs__handle_fail(struct fs__handle *h, int e);

/* The truncation of open(O_TRUNC), which the kernel sends without naming
 * the handle: it is for the writer that the same thread has just opened
 * and that has done nothing yet (the newest such one), and for no other
 * process's buffer. Returns whether there was one. */
static bool fs__truncate_opener(struct fs *fs, uint64_t ino, pid_t pid)
{
	bool found = false;
	struct node *n = fs__relock(fs, ino);
	for (struct fs__handle *w = n ? n->writers : NULL; w && !found; w = w->wnext)
		if (w->fresh && w->pid == pid) {
			fs__handle_truncate(w, 0);
			found = true;
		}
	FS_UNLOCK(fs);
	return found;
}

/* The size part of setattr: a scratch file's bytes, a writer's buffer, or
 * (truncate(2) of an object by path) a commit of what is left. Every size
 * is checked against its limit before anything is allocated. Returns 0 or
 * an errno. */
static int fs__truncate(fuse_req_t req, struct fs *fs, uint64_t ino, off_t length,
			struct fs__handle *h)
{
	if (length < 0)
		return EINVAL;
	size_t size = (size_t)length;
	struct node *n = fs__relock(fs, ino);
	if (!n) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	enum node_type type = n->type;
	int e = 0;
	if (type == NODE_SCRATCH) {
		size_t old = n->size;
		if (size > FS_SCRATCH_FILE_MAX)
			e = EFBIG;
		else if (size > old &&
			 atomic_load(&fs->scratch_bytes) + (size - old) > FS_SCRATCH_TOTAL_MAX)
			e = ENOSPC;
		else {
			if (size > n->cap) {
				n->data = xrealloc(n->data, size);
				n->cap = size;
			}
			if (size > old)
				memset(n->data + old, 0, size - old);
			atomic_fetch_add(&fs->scratch_bytes, size - old);
			n->size = size;
		}
	} else if (type != NODE_OBJECT) {
		e = S_ISDIR(n->mode) ? EISDIR : EPERM;
	} else if (size > OBJECT_MAX_BYTES) {
		e = EFBIG;
	}
	cleanup_free char *path = e && e != EISDIR ? fs__path(n) : NULL;
	FS_UNLOCK(fs);
	if (e == EISDIR)
		return e;
	if (e) {
		/* A writer whose truncation failed has not the text it meant:
		 * its close fails too (and one line says why). */
		if (h && type == NODE_SCRATCH)
			h->wrote = true; /* a drop box file refused in part is not kept */
		if (h && !fs__handle_fail(h, e))
			return e;
		if (e == EPERM)
			return fs__refuse(fs, path, e,
					  "only objects and scratch files have a size");
		if (e == ENOSPC)
			return fs__refuse(
			    fs, path, e,
			    "the scratch files of the mount would hold more than %d bytes",
			    FS_SCRATCH_TOTAL_MAX);
		return fs__refuse(fs, path, e,
				  "truncating to %zu bytes: over the limit of %d for %s", size,
				  type == NODE_OBJECT ? OBJECT_MAX_BYTES : FS_SCRATCH_FILE_MAX,
				  type == NODE_OBJECT ? "an object" : "a scratch file");
	}
	if (type == NODE_SCRATCH)
		return 0;
	if (h && h->write) {
		fs__handle_truncate(h, size);
		return 0;
	}
	if (size == 0 && fs__truncate_opener(fs, ino, fuse_req_ctx(req)->pid))
		return 0;
	/* truncate(2) of an object: commit what is left. */
	struct fs__truncation tr = {req, size};
	return fs__replace_text(fs, ino, false, fs__truncate_change, &tr);
}

/* setattr: sizes (a truncation commits an object), modes, owners and
 * times. Returns 0 with the new attributes in st, or an errno. */
static int fs__setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi, struct stat *st, double *ttl)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_R(fs);
	struct node *ln = tree_by_ino(fs->tree, ino);
	bool is_log = ln && logs_node(ln);
	cleanup_free char *path = is_log ? fs__path(ln) : NULL;
	FS_UNLOCK(fs);
	if (is_log)
		return fs__refuse(fs, path, EPERM, "container logs are read-only");
	struct fs__handle *h = fi ? (struct fs__handle *)(uintptr_t)fi->fh : NULL;

	if (to_set & FUSE_SET_ATTR_SIZE) {
		int e = fs__truncate(req, fs, ino, attr->st_size, h);
		if (e)
			return e;
	}
	struct node *n = fs__relock(fs, ino);
	if (!n) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	/* Modes, owners and times are kept in memory: accepted so that cp -a,
	 * tar and rsync work, never part of an object. */
	if (to_set & FUSE_SET_ATTR_MODE) {
		n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
		fs__clamp_mode(n);
	}
	if (to_set & FUSE_SET_ATTR_UID)
		n->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		n->gid = attr->st_gid;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (to_set & FUSE_SET_ATTR_ATIME)
		n->atime = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		n->atime = now;
	if (to_set & FUSE_SET_ATTR_MTIME)
		n->mtime = attr->st_mtim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		n->mtime = now;
	n->ctime = now;
	/* A writer's truncation is its buffer's: every other opener still
	 * sees the stored object, and so does the kernel's size. */
	fs__stat(n, st);
	*ttl = fs__ttl(n);
	FS_UNLOCK(fs);
	return 0;
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || n->type != NODE_SYMLINK) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, n ? EINVAL : ENOENT);
		return;
	}
	cleanup_free char *target = xstrndup(n->data ? n->data : "", n->size);
	FS_UNLOCK(fs);
	fuse_reply_readlink(req, target);
}

/* ---- folders that go ---- */

static int fs__rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	struct node *dir = fs__relock(fs, parent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (!n) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	if (!S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		return ENOTDIR;
	}
	if (n->type == NODE_KIND && n->ns) {
		int e = namespace_rmdir_kind(fs, n);
		FS_UNLOCK(fs);
		return e;
	}
	if (n->type == NODE_LOGS) {
		/* An empty logs/ may go (rm -r does that); it comes back when
		 * looked up. */
		int e = n->nkids ? ENOTEMPTY : 0;
		if (!e)
			tree_unlink(fs->tree, n);
		FS_UNLOCK(fs);
		return e;
	}
	if (n->type != NODE_NS) {
		cleanup_free char *path = fs__child_path(dir, name);
		FS_UNLOCK(fs);
		return fs__refuse(fs, path, EPERM,
				  "only a namespace, or one of its kind folders, can be removed");
	}
	uint64_t nsroot_ino = dir->ino;
	FS_UNLOCK(fs);
	int e = namespace_delete(req, fs, nsroot_ino, name, true);
	if (!e) {
		cleanup_free char *fname = xasprintf("%s.yaml", name);
		notifier_inval_entry(fs->notifier, nsroot_ino, fname);
	}
	return e;
}

/* An rm that left its object being deleted (fs__kept_change). */
struct fs__kept {
	uint64_t parent;
	const char *name, *key;
};

/* The file of an object an rm left being deleted shows what is stored
 * now; fs__replace_text's change. */
static int fs__kept_change(struct fs *fs, uint64_t ino, void *data)
{
	const struct fs__kept *k = data;
	struct node *dir = fs__relock(fs, k->parent);
	struct node *n = dir ? tree_child(fs->tree, dir, k->name) : NULL;
	uint64_t other = n && n->ino != ino ? n->ino : 0;
	if (n)
		fs__show_kept(fs, n, k->key);
	FS_UNLOCK(fs);
	if (other) /* the name found another file meanwhile */
		fuse_lowlevel_notify_inval_inode(fs->se, other, 0, 0);
	return 0;
}

/* ---- files ---- */

static int fs__unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	struct fs__target t = {0};
	struct node *dir = fs__relock(fs, parent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (!n) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	if (S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		return EISDIR;
	}
	if (n->type == NODE_OBJECT && remote_replaying(fs, req)) {
		/* Another writer's deletion, stored already. */
		tree_unlink(fs->tree, n);
		FS_UNLOCK(fs);
		return 0;
	}
	if (n->type == NODE_ERRORS || logs_node(n) ||
	    (n->type == NODE_SYMLINK && dir->type == NODE_ROOT && strcmp(name, ".git") == 0)) {
		bool logs = logs_node(n);
		cleanup_free char *path = fs__child_path(dir, name);
		FS_UNLOCK(fs);
		return fs__refuse(fs, path, EPERM, "%s",
				  logs ? "container logs are read-only: they go with their pod"
				       : ".errors and .git cannot be removed");
	}
	if (n->type == NODE_SCRATCH || n->type == NODE_SYMLINK) {
		/* A file an object was renamed to (an editor's backup): when it
		 * goes and no file took the object's place, so does the
		 * object. */
		cleanup_free char *moved = n->moved_from ? xstrdup(n->moved_from) : NULL;
		const struct kind_info *mk = n->kind;
		atomic_fetch_sub(&fs->scratch_bytes, n->type == NODE_SCRATCH ? n->size : 0);
		tree_unlink(fs->tree, n);
		FS_UNLOCK(fs);
		if (moved && mk) {
			/* key: namespaces/<ns>/<plural>/<name> or <plural>/<name> */
			struct store_record rec = {0};
			bool replaced = false;
			char *slash = strrchr(moved, '/');
			cleanup_free char *oname = xstrdup(slash ? slash + 1 : moved);
			cleanup_free char *ns = NULL;
			if (mk->namespaced && strncmp(moved, "namespaces/", 11) == 0)
				ns = xstrndup(moved + 11, strcspn(moved + 11, "/"));
			FS_LOCK_R(fs);
			/* Is there a file for the object again? */
			struct node *cur = tree_root(fs->tree);
			cleanup_free char *p = xstrdup(moved);
			for (char *save = NULL, *seg = strtok_r(p, "/", &save); seg && cur;
			     seg = strtok_r(NULL, "/", &save)) {
				bool last = !strchr(save ? save : "", '/') && (!save || !*save);
				cleanup_free char *nm =
				    last ? xasprintf("%s.yaml", seg) : xstrdup(seg);
				cur = tree_child(fs->tree, cur, nm);
			}
			replaced = cur != NULL;
			FS_UNLOCK(fs);
			if (!replaced && store_get(fs->store, moved, &rec, NULL) == 0) {
				cleanup_free char *author = fs__author(req, fs);
				struct error *err = NULL;
				struct write_target wt = {
				    .kind = mk, .ns = ns, .name = oname, .key = moved};
				int dr = fs__delete(fs, &wt, author, &err);
				if (dr < 0)
					log_warn("deleting %s: %s", moved, err ? err->msg : "?");
				error_free(err);
				store_record_clear(&rec);
				if (dr == WRITE_KEPT &&
				    store_get(fs->store, moved, &rec, NULL) == 0) {
					/* It has finalizers: it stays, being
					 * deleted, and its file comes back. */
					FS_LOCK_W(fs);
					fs__load_one(fs, moved, &rec);
					FS_UNLOCK(fs);
				}
			}
			store_record_clear(&rec);
		}
		return 0;
	}
	if (dir->type == NODE_NSROOT) {
		uint64_t nsroot_ino = dir->ino;
		cleanup_free char *base = fs__base(name);
		FS_UNLOCK(fs);
		int e = namespace_delete(req, fs, nsroot_ino, base, false);
		if (!e)
			notifier_inval_entry(fs->notifier, nsroot_ino, base);
		return e;
	}
	if (n->pending) {
		tree_unlink(fs->tree, n);
		FS_UNLOCK(fs);
		return 0;
	}
	fs__target_of(dir, name, &t);
	uint64_t ino = n->ino;
	FS_UNLOCK(fs);
	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	int r = fs__delete(fs, &t.w, author, &err);
	if (r < 0 && r != -ENOENT) {
		int e = fs__errno(err);
		fs__reject(fs, t.path, err);
		error_free(err);
		fs__target_clear(&t);
		return e;
	}
	error_free(err);
	if (r == WRITE_KEPT) {
		/* It has finalizers: rm succeeds and the file stays, being
		 * deleted (the kernel looks it up again): its text changes. */
		struct fs__kept k = {parent, name, t.key};
		fs__replace_text(fs, ino, false, fs__kept_change, &k);
		fs__target_clear(&t);
		return 0;
	}
	/* One that goes needs no wait: its readers keep the version they
	 * opened. */
	dir = fs__relock(fs, parent);
	n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (n)
		tree_unlink(fs->tree, n);
	FS_UNLOCK(fs);
	fs__target_clear(&t);
	return 0;
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	struct fuse_entry_param e;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct node *dir = fs__relock(fs, parent);
	int err = !dir						 ? ENOENT
		  : tree_child(fs->tree, dir, name)		 ? EEXIST
		  : fs__object_kind(dir, name) || logs_node(dir) ? EPERM
								 : 0;
	if (err) {
		bool logs = err == EPERM && logs_node(dir);
		cleanup_free char *path = err == EPERM ? fs__child_path(dir, name) : NULL;
		FS_UNLOCK(fs);
		if (path)
			fs__refuse(fs, path, err, "%s",
				   logs ? "container logs are read-only"
					: "a symbolic link cannot have an object's name");
		fuse_reply_err(req, err);
		return;
	}
	struct node *n = tree_add(fs->tree, dir, name, NODE_SYMLINK, S_IFLNK | 0777);
	n->data = xstrdup(link);
	n->size = strlen(link);
	n->cap = n->size + 1;
	n->uid = ctx->uid;
	n->gid = ctx->gid;
	fs__entry(n, &e);
	FS_UNLOCK(fs);
	fuse_reply_entry(req, &e);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	struct fs *fs = fs__of(req);
	FS_LOCK_R(fs);
	struct node *dir = tree_by_ino(fs->tree, newparent);
	cleanup_free char *path = dir ? fs__child_path(dir, newname) : xstrdup(newname);
	FS_UNLOCK(fs);
	fuse_reply_err(req, fs__refuse(fs, path, EPERM,
				       "hard links are not supported: copy the file instead"));
}

/* ---- drop boxes ---- */

struct fs__drop_refusals {
	struct fs *fs;
	const char *path;
	size_t n;
};

static void fs__drop_refused(void *data, const struct error *e)
{
	struct fs__drop_refusals *rf = data;
	rf->n++;
	fs__reject(rf->fs, rf->path, e);
}

/* A file renamed over an object's name (fs__rename_over_change). */
struct fs__rename_over {
	fuse_req_t req;
	uint64_t ino, newparent; /* the file renamed, and its new folder */
	const char *newname;
	struct fs__target t;
	char *text; /* its bytes (NULL: loaded) */
	size_t len;
};

/* Commits the bytes of the file renamed as the object it now names, and
 * moves it there; fs__replace_text's change, with wait_ino the object
 * replaced (or the file itself). */
static int fs__rename_over_change(struct fs *fs, uint64_t wait_ino, void *data)
{
	struct fs__rename_over *ro = data;
	fuse_req_t req = ro->req;
	uint64_t ino = ro->ino, newparent = ro->newparent;
	const char *newname = ro->newname;
	struct fs__target *tp = &ro->t;
	char *text = ro->text;
	size_t len = ro->len;
	struct node *n, *ndir, *old;
	int e;
	if (!text) {
		struct error *err = NULL;
		struct blob *b = fs__load(fs, ino, &err);
		error_free(err);
		text = ro->text = xmemdup0(b ? b->data : NULL, b ? b->len : 0);
		len = b ? b->len : 0;
		blob_unref(b);
	}
	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	struct blob *b = NULL;
	uint64_t rv = 0;
	int r = fs__write(fs, &tp->w, text, len, author, &b, &rv, &err);
	if (r < 0) {
		e = fs__errno(err);
		fs__reject(fs, tp->path, err);
		error_free(err);
		return e;
	}
	n = fs__relock(fs, ino);
	ndir = tree_by_ino(fs->tree, newparent);
	old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
	if (r == WRITE_GONE) {
		/* Renamed over an object being deleted, without its last
		 * finalizer: both files go with it. */
		if (old && old != n)
			tree_unlink(fs->tree, old);
		if (n) {
			atomic_fetch_sub(&fs->scratch_bytes, n->type == NODE_SCRATCH ? n->size : 0);
			tree_unlink(fs->tree, n);
		}
		FS_UNLOCK(fs);
		notifier_inval_entry(fs->notifier, newparent, newname);
		if (tp->kind->namespace_object)
			namespace_forget(fs, tp->name);
		return 0;
	}
	if (n && ndir) {
		if (old && old != n)
			tree_unlink(fs->tree, old);
		atomic_fetch_sub(&fs->scratch_bytes, n->type == NODE_SCRATCH ? n->size : 0);
		free(n->data);
		n->data = NULL;
		n->cap = 0;
		free(n->moved_from);
		n->moved_from = NULL;
		n->type = NODE_OBJECT;
		n->kind = tp->kind;
		n->mode = fs__object_mode(tp->kind);
		n->pending = true; /* so that set_content takes any rv */
		tree_move(fs->tree, n, ndir, newname);
		fs__set_content(n, b, rv);
		if (tp->kind->namespace_object)
			namespace_add(fs, tp->name);
	} else {
		blob_unref(b);
	}
	FS_UNLOCK(fs);
	if (ino != wait_ino) /* the file renamed in place: fs__replace_text has the other */
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	return 0;
}

/* Checks the text of drop box file path (at namespace ns's top, or the
 * mount's with ns NULL), as `kubectl apply -f` would apply it: each
 * document that cannot be filed is recorded in .errors. Returns 0 when
 * the file may stay (at least one document can be filed), else an errno
 * (EINVAL: none can, or it is no YAML). */
static int fs__drop_verdict(struct fs *fs, const char *ns, const char *path, const char *text,
			    size_t len)
{
	struct fs__drop_refusals rf = {.fs = fs, .path = path};
	struct error *err = NULL;
	if (object_check_drop(ns, text, len, fs__drop_refused, &rf, &err) >= 0)
		return 0;
	int e = fs__errno(err);
	if (rf.n == 0) /* no document to blame: no YAML, too large, empty */
		fs__reject(fs, path, err);
	error_free(err);
	return e;
}

static int fs__rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct fs *fs = fs__of(req);
	struct node *dir = fs__relock(fs, parent);
	struct node *ndir = tree_by_ino(fs->tree, newparent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	struct node *old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
	int e = 0;
	const char *why = NULL; /* a refusal's reason, for .errors */
	if (!n || !ndir)
		e = ENOENT;
	else if (flags & RENAME_EXCHANGE)
		e = EINVAL, why = "renameat2 with RENAME_EXCHANGE is not supported: files do not "
				  "trade places here; rename one, then the other";
	else if (old == n)
		e = 0;
	else if (old && (flags & RENAME_NOREPLACE))
		e = EEXIST;
	else if (S_ISDIR(n->mode) || (old && S_ISDIR(old->mode)))
		e = EPERM, why = "namespaces and kind folders cannot be renamed";
	else if (logs_node(n) || logs_node(ndir) || (old && logs_node(old)))
		e = EPERM, why = "container logs are read-only";
	else if (n->type == NODE_ERRORS || (old && old->type == NODE_ERRORS) ||
		 (dir->type == NODE_ROOT && strcmp(name, ".git") == 0) ||
		 (ndir->type == NODE_ROOT && strcmp(newname, ".git") == 0))
		e = EPERM, why = ".errors and .git cannot be renamed or replaced";
	if (e || old == n) {
		cleanup_free char *path = why ? fs__child_path(dir, name) : NULL;
		FS_UNLOCK(fs);
		return why ? fs__refuse(fs, path, e, "%s", why) : e;
	}
	const struct kind_info *to_kind = fs__object_kind(ndir, newname);
	uint64_t ino = n->ino;

	if (n->type == NODE_OBJECT && !n->pending) {
		if (to_kind) {
			/* Objects have no rename in Kubernetes: the name is
			 * inside the document. */
			cleanup_free char *path = fs__child_path(ndir, newname);
			FS_UNLOCK(fs);
			struct error er = {
			    EINVAL, "an object cannot be renamed: its name is metadata.name; copy "
				    "it to the new name and remove the old file"};
			fs__reject(fs, path, &er);
			return EINVAL;
		}
		/* Renamed to a scratch name (an editor's backup): the file
		 * becomes scratch; the object stays stored until that file is
		 * removed, or is updated by the file written in its place. */
		char *key = tree_object_key(n);
		struct blob *b = blob_ref(n->content);
		FS_UNLOCK(fs);
		if (!b) {
			struct error *err = NULL;
			b = fs__load(fs, ino, &err);
			error_free(err);
		}
		n = fs__relock(fs, ino);
		ndir = tree_by_ino(fs->tree, newparent);
		old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
		if (!n || !ndir || !n->parent) {
			FS_UNLOCK(fs);
			blob_unref(b);
			free(key);
			return ENOENT;
		}
		if (old) {
			atomic_fetch_sub(&fs->scratch_bytes,
					 old->type == NODE_SCRATCH ? old->size : 0);
			tree_unlink(fs->tree, old);
		}
		n->type = NODE_SCRATCH;
		n->moved_from = key;
		free(n->data);
		n->size = b ? b->len : 0;
		n->data = xmalloc(n->size + 1);
		memcpy(n->data, b ? b->data : "", n->size);
		n->cap = n->size + 1;
		blob_unref(n->content);
		n->content = NULL;
		atomic_fetch_add(&fs->scratch_bytes, n->size);
		blob_unref(b);
		tree_move(fs->tree, n, ndir, newname);
		FS_UNLOCK(fs);
		return 0;
	}

	if (!to_kind) {
		/* Scratch to scratch: memory only; a drop box name is checked
		 * first, as a close would. */
		bool drop = fs__drop_name(ndir, newname) && n->type == NODE_SCRATCH;
		if (drop) {
			cleanup_free char *text = xmemdup0(n->data, n->size);
			size_t len = n->size;
			cleanup_free char *ns = ndir->type == NODE_NS ? xstrdup(ndir->ns) : NULL;
			cleanup_free char *path = fs__child_path(ndir, newname);
			FS_UNLOCK(fs);
			e = fs__drop_verdict(fs, ns, path, text, len);
			if (e)
				return e;
			n = fs__relock(fs, ino);
			ndir = tree_by_ino(fs->tree, newparent);
			old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
			if (!n || !n->parent || !ndir) {
				FS_UNLOCK(fs);
				return ENOENT;
			}
		}
		if (n->type == NODE_OBJECT) { /* a pending object leaves the object names */
			n->type = NODE_SCRATCH;
			n->pending = false;
		}
		n->drop = drop;
		if (old) {
			atomic_fetch_sub(&fs->scratch_bytes,
					 old->type == NODE_SCRATCH ? old->size : 0);
			tree_unlink(fs->tree, old);
		}
		tree_move(fs->tree, n, ndir, newname);
		mode_t was = n->mode;
		fs__clamp_mode(n);
		bool clamped = n->mode != was;
		FS_UNLOCK(fs);
		if (clamped) /* the kernel keeps the mode it saw */
			fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
		return 0;
	}
	if (n->type == NODE_SYMLINK) {
		cleanup_free char *path = fs__child_path(ndir, newname);
		FS_UNLOCK(fs);
		return fs__refuse(fs, path, EPERM, "a symbolic link cannot have an object's name");
	}

	/* A file renamed over an object name (sed -i, rsync, vim's or emacs'
	 * save): its bytes are the object's new text, taken whole now, after
	 * the page cache's readers of the object it replaces. */
	struct fs__rename_over ro = {
	    .req = req, .ino = ino, .newparent = newparent, .newname = newname};
	fs__target_of(ndir, newname, &ro.t);
	ro.text = n->type == NODE_SCRATCH ? xmemdup0(n->data, n->size) : NULL;
	ro.len = n->type == NODE_SCRATCH ? n->size : 0;
	uint64_t wait_ino = old && old->type == NODE_OBJECT && !old->pending ? old->ino : ino;
	FS_UNLOCK(fs);
	e = fs__replace_text(fs, wait_ino, false, fs__rename_over_change, &ro);
	free(ro.text);
	fs__target_clear(&ro.t);
	return e;
}

static struct fs__handle *fs__handle_new(void)
{
	struct fs__handle *h = xcalloc(1, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	h->fd = -1;
	return h;
}

static void fs__handle_free(struct fs__handle *h)
{
	if (!h)
		return;
	blob_unref(h->snap);
	free(h->buf);
	if (h->fd >= 0)
		close(h->fd);
	free(h->remote);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* The open writers of an object, so that the truncation of open(O_TRUNC)
 * (which the kernel sends without naming the handle, from the opening
 * thread) reaches the one it is for. Tree lock held for writing. */
static void fs__writer_add(struct node *n, struct fs__handle *h, fuse_req_t req)
{
	h->fresh = true;
	h->pid = fuse_req_ctx(req)->pid;
	h->wnext = n->writers;
	n->writers = h;
}

static void fs__writer_del(struct node *n, struct fs__handle *h)
{
	for (struct fs__handle **pp = (struct fs__handle **)&n->writers; *pp; pp = &(*pp)->wnext)
		if (*pp == h) {
			*pp = h->wnext;
			return;
		}
}

static void fs__handle_truncate(struct fs__handle *h, size_t size)
{
	pthread_mutex_lock(&h->lock);
	if (size + 1 > h->cap)
		h->buf = xrealloc(h->buf, h->cap = size + 1);
	if (size > h->len)
		memset(h->buf + h->len, 0, size - h->len);
	h->len = size;
	h->dirty = true;
	h->fresh = false;
	pthread_mutex_unlock(&h->lock);
}

/* Marks h as refused in part (errno e): whatever it holds is not what its
 * writer meant. Returns whether this is its first refusal, the one that
 * .errors records. */
static bool fs__handle_fail(struct fs__handle *h, int e)
{
	pthread_mutex_lock(&h->lock);
	bool first = !h->failed;
	if (first)
		h->failed = e;
	h->fresh = false;
	pthread_mutex_unlock(&h->lock);
	return first;
}

/* Sets up the handle of an open object: a snapshot to read, or the text
 * to edit. */
static int fs__open_object(struct fs *fs, uint64_t ino, int flags, struct fs__handle *h)
{
	h->write = (flags & O_ACCMODE) != O_RDONLY;
	if ((h->write && (flags & O_TRUNC)) || h->snap)
		return 0;
	struct error *err = NULL;
	struct blob *b = fs__load(fs, ino, &err);
	if (!b) {
		int e = fs__errno(err);
		error_free(err);
		return e;
	}
	if (h->write) {
		h->cap = b->len + 1;
		h->buf = xmalloc(h->cap);
		memcpy(h->buf, b->data, b->len);
		h->len = b->len;
		blob_unref(b);
	} else {
		h->snap = b;
	}
	return 0;
}

/* Undoes what opening h counted on node n (its open, and how it reads or
 * writes); write lock held. Returns whether to call fs__quiet_wake() once
 * the lock is released. */
static bool fs__handle_uncount(struct node *n, struct fs__handle *h)
{
	bool wake = false;
	n->open_count--;
	if (h->write)
		fs__writer_del(n, h);
	if (h->cached)
		wake = fs__cached_closed(n, h);
	/* A writer's commit invalidated the kernel's copy at its flush:
	 * readers may use the page cache again. */
	if (h->changer && n->changing > 0)
		n->changing--;
	return wake;
}

/* fs__handle_uncount() for a handle that never served a request. */
static void fs__handle_closed(struct fs *fs, uint64_t ino, struct fs__handle *h)
{
	struct node *n = fs__relock(fs, ino);
	bool wake = n && fs__handle_uncount(n, h);
	FS_UNLOCK(fs);
	if (wake)
		fs__quiet_wake(fs);
}

/* Counts a new handle h of object n (write lock held) and chooses how it
 * is served: a writer keeps new readers off the page cache until it is
 * released, and must wait (returns true) until those already reading
 * through it have closed; a reader goes through the page cache when no
 * change is under way, else it reads its own snapshot with direct I/O. */
static bool fs__object_opening(struct node *n, struct fs__handle *h, bool writing, bool replay)
{
	h->write = writing;
	if (writing && replay)
		return false; /* remote.c changed the text already, under its own count */
	if (writing) {
		n->changing++;
		h->changer = true;
		return n->cached > 0;
	}
	if (n->changing == 0 && !n->writers) {
		n->cached++;
		h->cached = true;
		h->rnext = n->readers;
		n->readers = h;
	}
	h->snap = blob_ref(n->content); /* NULL: loaded by fs__open_object */
	return false;
}

/* The rest of an open (or of a create that found its file), once h is
 * counted: the handle's contents, then the reply (with entry e for a
 * create). Runs in the loop, or in a worker for a writer that waited. */
static void fs__open_finish(fuse_req_t req, struct fs *fs, uint64_t ino, struct fuse_file_info *fi,
			    enum node_type type, struct fs__handle *h,
			    const struct fuse_entry_param *entry)
{
	bool writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	int e = 0;
	if (type == NODE_OBJECT) {
		e = fs__open_object(fs, ino, fi->flags, h);
		if (!e && h->write) {
			struct node *n = fs__relock(fs, ino);
			if (n)
				fs__writer_add(n, h, req);
			FS_UNLOCK(fs);
		}
		/* A writer's bytes (and the size the kernel keeps for them)
		 * must not reach the page cache that readers share: writers
		 * and the readers that open during a change use direct I/O,
		 * and the latter read their snapshot. See ops.h. */
		fi->direct_io = !h->cached;
		fi->keep_cache = h->cached;
		h->append = h->write && (fi->flags & O_APPEND);
		if (h->write && (fi->flags & O_TRUNC))
			h->dirty = true;
	} else if (type == NODE_ERRORS) {
		h->snap = fs__errors_blob(fs);
		fi->direct_io = 1;
	} else if (type == NODE_SCRATCH && (fi->flags & O_TRUNC)) {
		h->wrote = true;
	} else if (type == NODE_LOGFILE) {
		FS_LOCK_R(fs);
		struct node *n = tree_by_ino(fs->tree, ino);
		cleanup_free char *source = n && n->source ? xstrdup(n->source) : NULL;
		FS_UNLOCK(fs);
		if (remotelogs_is_url(source)) { /* read from its node */
			h->remote = steal_pointer(&source);
			e = fs->remotelogs ? 0 : EIO;
		} else {
			h->fd = source ? open(source, O_RDONLY | O_CLOEXEC) : -1;
			if (h->fd < 0)
				e = source ? errno : ENOENT;
		}
		fi->direct_io = 1; /* it grows behind the kernel's back */
	}
	if (e) {
		fs__handle_closed(fs, ino, h);
		fs__handle_free(h);
		if (entry) { /* the kernel never gets the entry it was counted for */
			struct node *n = fs__relock(fs, ino);
			if (n)
				tree_forget(fs->tree, n, 1);
			FS_UNLOCK(fs);
		}
		fuse_reply_err(req, e);
		return;
	}
	/* Only a handle that writes an object has anything to do at close:
	 * spare the kernel's flush round trip for all the others. */
	fi->noflush = !(type == NODE_OBJECT && h->write) && !(type == NODE_SCRATCH && writing);
	fi->fh = (uint64_t)(uintptr_t)h;
	int r = entry ? fuse_reply_create(req, entry, fi) : fuse_reply_open(req, fi);
	if (r == -ENOENT) {
		/* The opener was interrupted: no release will come. */
		fs__handle_closed(fs, ino, h);
		fs__handle_free(h);
	}
}

static void fs__queue(struct fs *fs, struct fs__job *job);
static struct fs__job *fs__job(enum fs__op op, fuse_req_t req, fuse_ino_t ino, const char *name);

/* Hands a writer's open to a worker, which waits for the page cache's
 * readers of the object to close before it replies. */
static void fs__open_later(fuse_req_t req, struct fs *fs, uint64_t ino, struct fuse_file_info *fi,
			   struct fs__handle *h, const struct fuse_entry_param *entry)
{
	struct fs__job *j = fs__job(FS_OP_OPEN, req, ino, NULL);
	j->fi = *fi;
	j->has_fi = true;
	j->handle = h;
	if (entry) {
		j->create = true;
		j->entry = *entry;
	}
	fs__queue(fs, j);
}

/* Whether a read of the store's objects must fail with EIO: a shared
 * store this mount may be too far behind (store_check_fresh()). The
 * watch's own replays always pass. */
static bool fs__stale(struct fs *fs, fuse_req_t req)
{
	if (!fs->remote || remote_replaying(fs, req))
		return false;
	struct error *err = NULL;
	if (store_check_fresh(fs->store, &err) == 0)
		return false;
	log_debug("%s", err->msg);
	error_free(err);
	return true;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct node *n = fs__relock(fs, ino);
	if (!n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	enum node_type type = n->type;
	bool writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	if (S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((type == NODE_ERRORS || type == NODE_SYMLINK || type == NODE_LOGFILE) && writing) {
		cleanup_free char *path = fs__path(n);
		FS_UNLOCK(fs);
		fs__refuse(fs, path, EACCES, "%s",
			   type == NODE_ERRORS ? ".errors is read-only: it is written by corral-fs"
			   : type == NODE_LOGFILE ? "container logs are read-only"
						  : "a symbolic link cannot be opened for writing");
		fuse_reply_err(req, EACCES);
		return;
	}
	if (type == NODE_SCRATCH && (fi->flags & O_TRUNC)) {
		atomic_fetch_sub(&fs->scratch_bytes, n->size);
		n->size = 0;
	}
	/* An object being created is not there for readers until its
	 * writer's close takes it (it would read empty). */
	if (type == NODE_OBJECT && (!n->parent || (n->pending && !writing))) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (type == NODE_OBJECT && !writing && fs__stale(fs, req)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EIO);
		return;
	}
	n->open_count++;
	struct fs__handle *h = fs__handle_new();
	bool wait =
	    type == NODE_OBJECT && fs__object_opening(n, h, writing, remote_replaying(fs, req));
	FS_UNLOCK(fs);
	if (wait)
		fs__open_later(req, fs, ino, fi, h, NULL);
	else
		fs__open_finish(req, fs, ino, fi, type, h, NULL);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e;
	struct node *dir = fs__relock(fs, parent);
	if (!dir || !dir->parent) {
		bool root = dir && dir->type == NODE_ROOT;
		if (!root) {
			FS_UNLOCK(fs);
			fuse_reply_err(req, ENOENT);
			return;
		}
	}
	struct node *n = tree_child(fs->tree, dir, name);
	if (n && (fi->flags & O_EXCL)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EEXIST);
		return;
	}
	if (n) {
		/* Lost a race with another creator: open what is there. */
		uint64_t ino = n->ino;
		enum node_type type = n->type;
		bool writing = (fi->flags & O_ACCMODE) != O_RDONLY;
		fs__entry(n, &e);
		n->open_count++;
		struct fs__handle *h = fs__handle_new();
		bool wait = type == NODE_OBJECT && fs__object_opening(n, h, writing, false);
		FS_UNLOCK(fs);
		if (wait)
			fs__open_later(req, fs, ino, fi, h, &e);
		else
			fs__open_finish(req, fs, ino, fi, type, h, &e);
		return;
	}
	const struct kind_info *k = fs__object_kind(dir, name);
	if (logs_node(dir) || (!k && (dir->type == NODE_ROOT && (strcmp(name, ".errors") == 0 ||
								 strcmp(name, ".git") == 0)))) {
		bool logs = logs_node(dir);
		cleanup_free char *path = fs__child_path(dir, name);
		FS_UNLOCK(fs);
		fs__refuse(fs, path, EPERM, "%s",
			   logs ? "container logs are read-only"
				: ".errors and .git cannot be replaced");
		fuse_reply_err(req, EPERM);
		return;
	}
	n = tree_add(fs->tree, dir, name, k ? NODE_OBJECT : NODE_SCRATCH,
		     k ? fs__object_mode(k) : S_IFREG | (mode & 07777));
	n->uid = ctx->uid;
	n->gid = ctx->gid;
	n->kind = k;
	n->pending = k != NULL;
	n->drop = !k && fs__drop_name(dir, name);
	fs__clamp_mode(n); /* a drop box file is private from its creation */
	n->open_count++;
	fs__entry(n, &e);
	struct fs__handle *h = fs__handle_new();
	if (k) {
		fs__writer_add(n, h, req);
		n->changing++;
		h->changer = true;
	}
	FS_UNLOCK(fs);
	h->write = k != NULL;
	h->dirty = k != NULL; /* creating is writing, even with no bytes */
	h->wrote = !k;
	h->append = k && (fi->flags & O_APPEND);
	fi->direct_io = k != NULL;
	fi->fh = (uint64_t)(uintptr_t)h;
	fuse_reply_create(req, &e, fi);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	if (h->remote) { /* replied to from remotelogs' threads */
		remotelogs_read(fs->remotelogs, req, h->remote, size, off);
		return;
	}
	if (h->fd >= 0) {
		cleanup_free char *buf = xmalloc(size ? size : 1);
		ssize_t r = pread(h->fd, buf, size, off);
		if (r < 0)
			fuse_reply_err(req, errno);
		else
			fuse_reply_buf(req, buf, (size_t)r);
		return;
	}
	if (h->cached) {
		/* What fills the page cache is the current text, whatever this
		 * handle opened: no change happens while it is open (changes
		 * wait for it), unless one gave up waiting (ops.h). */
		FS_LOCK_R(fs);
		struct node *n = tree_by_ino(fs->tree, ino);
		struct blob *b = n && n->type == NODE_OBJECT && n->content ? blob_ref(n->content)
									   : blob_ref(h->snap);
		FS_UNLOCK(fs);
		size_t o = (size_t)off < b->len ? (size_t)off : b->len;
		size_t cnt = b->len - o < size ? b->len - o : size;
		fuse_reply_buf(req, b->data + o, cnt);
		blob_unref(b);
		return;
	}
	if (h->snap) {
		size_t o = (size_t)off < h->snap->len ? (size_t)off : h->snap->len;
		size_t n = h->snap->len - o < size ? h->snap->len - o : size;
		fuse_reply_buf(req, h->snap->data + o, n);
		return;
	}
	if (h->write) {
		pthread_mutex_lock(&h->lock);
		size_t o = (size_t)off < h->len ? (size_t)off : h->len;
		size_t n = h->len - o < size ? h->len - o : size;
		cleanup_free char *copy = xmalloc(n + 1);
		memcpy(copy, h->buf + o, n);
		pthread_mutex_unlock(&h->lock);
		fuse_reply_buf(req, copy, n);
		return;
	}
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || !(n->type == NODE_SCRATCH)) {
		FS_UNLOCK(fs);
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	size_t o = (size_t)off < n->size ? (size_t)off : n->size;
	size_t cnt = n->size - o < size ? n->size - o : size;
	cleanup_free char *copy = xmalloc(cnt + 1);
	if (cnt)
		memcpy(copy, n->data + o, cnt);
	FS_UNLOCK(fs);
	fuse_reply_buf(req, copy, cnt);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	if (h->write && h->append) {
		pthread_mutex_lock(&h->lock);
		off = (off_t)h->len; /* the kernel's size is the stored one's */
		pthread_mutex_unlock(&h->lock);
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	size_t end = (size_t)off + size;
	if (h->write) {
		if (end > OBJECT_MAX_BYTES) {
			/* Refused in part: the close that follows fails too. */
			if (fs__handle_fail(h, EFBIG)) {
				cleanup_free char *path = fs__ino_path(fs, ino);
				fs__refuse(
				    fs, path, EFBIG,
				    "writing up to byte %zu: over the limit of %d for an object",
				    end, OBJECT_MAX_BYTES);
			}
			fuse_reply_err(req, EFBIG);
			return;
		}
		pthread_mutex_lock(&h->lock);
		if (end + 1 > h->cap) {
			size_t cap = h->cap ? h->cap : 4096;
			while (cap < end + 1)
				cap *= 2;
			h->buf = xrealloc(h->buf, cap);
			h->cap = cap;
		}
		if ((size_t)off > h->len)
			memset(h->buf + h->len, 0, (size_t)off - h->len);
		memcpy(h->buf + off, buf, size);
		if (end > h->len)
			h->len = end;
		h->dirty = true;
		h->fresh = false;
		size_t len = h->len;
		pthread_mutex_unlock(&h->lock);
		struct node *n = fs__relock(fs, ino);
		if (n && n->pending)
			n->size = len;
		FS_UNLOCK(fs);
		fuse_reply_write(req, size);
		return;
	}
	struct node *n = fs__relock(fs, ino);
	int e = 0;
	if (!n || n->type != NODE_SCRATCH)
		e = EBADF;
	else if (end > FS_SCRATCH_FILE_MAX)
		e = EFBIG;
	else if (end > n->size &&
		 atomic_load(&fs->scratch_bytes) + (end - n->size) > FS_SCRATCH_TOTAL_MAX)
		e = ENOSPC;
	if (e) {
		cleanup_free char *path = e != EBADF ? fs__path(n) : NULL;
		FS_UNLOCK(fs);
		if (path)
			h->wrote = true; /* a drop box file refused in part is not kept */
		if (path && fs__handle_fail(h, e)) {
			if (e == EFBIG)
				fs__refuse(fs, path, e,
					   "writing up to byte %zu: over the limit of %d for a "
					   "scratch file",
					   end, FS_SCRATCH_FILE_MAX);
			else
				fs__refuse(
				    fs, path, e,
				    "the scratch files of the mount would hold more than %d bytes",
				    FS_SCRATCH_TOTAL_MAX);
		}
		fuse_reply_err(req, e);
		return;
	}
	if (end > n->cap) {
		size_t cap = n->cap ? n->cap : 4096;
		while (cap < end)
			cap *= 2;
		n->data = xrealloc(n->data, cap);
		n->cap = cap;
	}
	if ((size_t)off > n->size)
		memset(n->data + n->size, 0, (size_t)off - n->size);
	memcpy(n->data + off, buf, size);
	if (end > n->size) {
		atomic_fetch_add(&fs->scratch_bytes, end - n->size);
		n->size = end;
	}
	clock_gettime(CLOCK_REALTIME, &n->mtime);
	n->ctime = n->mtime;
	FS_UNLOCK(fs);
	h->wrote = true;
	fuse_reply_write(req, size);
}

/* fallocate(2): nothing here has blocks to reserve, so it is not
 * supported, as before; but a range beyond the file's size limit is
 * refused as such (EFBIG), so that no size passes unchecked. */
static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	(void)mode;
	(void)fi;
	struct fs *fs = fs__of(req);
	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	enum node_type type = n ? n->type : NODE_ERRORS;
	FS_UNLOCK(fs);
	off_t max = type == NODE_OBJECT	   ? OBJECT_MAX_BYTES
		    : type == NODE_SCRATCH ? FS_SCRATCH_FILE_MAX
					   : 0;
	if (max && (length > max || offset > max - length)) {
		cleanup_free char *path = fs__ino_path(fs, ino);
		fuse_reply_err(req,
			       fs__refuse(fs, path, EFBIG,
					  "fallocate up to byte %ju: over the limit of %jd for %s",
					  (uintmax_t)offset + (uintmax_t)length, (intmax_t)max,
					  type == NODE_OBJECT ? "an object" : "a scratch file"));
		return;
	}
	fuse_reply_err(req, EOPNOTSUPP);
}

/* Commits a dirty write handle. Returns 0 or an errno. */
static int fs__commit_handle(fuse_req_t req, struct fs *fs, uint64_t ino, struct fs__handle *h)
{
	pthread_mutex_lock(&h->lock);
	int failed = h->write ? h->failed : 0;
	if (failed) {
		/* Refused in part (.errors has said why): nothing of it is
		 * stored, and every close of it says so. */
		h->dirty = false;
		pthread_mutex_unlock(&h->lock);
		struct fs__target t = {0};
		FS_LOCK_R(fs);
		struct node *n = tree_by_ino(fs->tree, ino);
		bool pending = n && n->pending && n->parent && n->type == NODE_OBJECT;
		if (pending)
			fs__target_of(n->parent, n->name, &t);
		FS_UNLOCK(fs);
		if (pending)
			fs__undo_pending(fs, ino, t.key);
		fs__target_clear(&t);
		return failed;
	}
	if (!h->write || !h->dirty) {
		pthread_mutex_unlock(&h->lock);
		return 0;
	}
	if (h->len == 0) {
		/* Nothing written yet: a shell closes the file it opened for a
		 * redirection once before the command writes through its copy
		 * of the descriptor. Committed, if ever, at a later close. */
		pthread_mutex_unlock(&h->lock);
		return 0;
	}
	cleanup_free char *text = xmemdup0(h->buf, h->len);
	size_t len = h->len;
	h->dirty = false;
	pthread_mutex_unlock(&h->lock);
	return fs__commit_node(req, fs, ino, text, len, true);
}

/* A drop box file written and closed: kept when at least one document
 * can be filed (corral-ctrl files those and reports the others); refused
 * whole when none can. */
static int fs__check_drop(struct fs *fs, uint64_t ino, int failed)
{
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || !n->drop || !n->parent) {
		FS_UNLOCK(fs);
		return 0;
	}
	cleanup_free char *text = xmemdup0(n->data, n->size);
	size_t len = n->size;
	cleanup_free char *ns = n->parent->type == NODE_NS ? xstrdup(n->parent->ns) : NULL;
	cleanup_free char *path = fs__path(n);
	FS_UNLOCK(fs);
	if (len == 0 && !failed)
		return 0; /* a shell's first close of its redirection */
	/* A write refused in part (.errors has said why) leaves half a file. */
	int e = failed ? failed : fs__drop_verdict(fs, ns, path, text, len);
	if (!e)
		return 0;
	/* A refused drop box file is not kept. */
	uint64_t dir_ino = 0;
	cleanup_free char *name = NULL;
	n = fs__relock(fs, ino);
	if (n && n->parent) {
		dir_ino = n->parent->ino;
		name = xstrdup(n->name);
		atomic_fetch_sub(&fs->scratch_bytes, n->size);
		tree_unlink(fs->tree, n);
	}
	FS_UNLOCK(fs);
	if (name)
		fuse_lowlevel_notify_inval_entry(fs->se, dir_ino, name, strlen(name));
	return e;
}

/* Closing a handle: a drop box file is checked, an object written is
 * committed. Returns 0 or an errno. */
static int fs__flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	if (h->wrote) {
		h->wrote = false;
		pthread_mutex_lock(&h->lock);
		int failed = h->failed;
		pthread_mutex_unlock(&h->lock);
		return fs__check_drop(fs, ino, failed);
	}
	return fs__commit_handle(req, fs, ino, h);
}

static int fs__fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	/* Stored objects are durable already; a pending edit is committed. */
	return fs__commit_handle(req, fs, ino, h);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	bool empty_write = h->write && h->dirty && h->len == 0 && !h->failed;
	uint64_t dir_ino = 0;
	cleanup_free char *gone = NULL;
	cleanup_free char *path = NULL;
	bool wake = false;
	struct node *n = fs__relock(fs, ino);
	if (n) {
		wake = fs__handle_uncount(n, h);
		if (empty_write && n->parent && n->open_count == 0) {
			if (n->pending) {
				/* Created and closed with nothing in it: no object. */
				dir_ino = n->parent->ino;
				gone = xstrdup(n->name);
				tree_unlink(fs->tree, n);
				n = tree_by_ino(fs->tree, ino);
			} else {
				path = fs__path(n);
			}
		}
		if (n) {
			if (n->pending && !n->parent)
				n->pending = false;
			tree_forget(fs->tree, n, 0); /* frees it if nothing knows it */
		}
	}
	FS_UNLOCK(fs);
	fs__handle_free(h);
	if (wake)
		fs__quiet_wake(fs);
	if (path) {
		struct error e = {
		    EINVAL,
		    "an empty write was ignored: the object is unchanged (rm deletes an object)"};
		fs__reject(fs, path, &e);
		/* Not from the loop: a read through the page cache may be
		 * under way, and only the loop would answer it. */
		notifier_inval_inode(fs->notifier, ino);
	}
	if (gone)
		notifier_inval_entry(fs->notifier, dir_ino, gone);
	fuse_reply_err(req, 0);
}

/* ---- folders ---- */

static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	logs_refresh(fs->tree, fs->log_dir, fs->remotelogs,
		     ino); /* does nothing for other folders */
	struct node *n = fs__relock(fs, ino);
	if (!n || !S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, n ? ENOTDIR : ENOENT);
		return;
	}
	if ((n->type == NODE_NSROOT || n->type == NODE_NS || n->type == NODE_KIND) &&
	    fs__stale(fs, req)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EIO);
		return;
	}
	if (n->type == NODE_NS && n->parent)
		namespace_ensure_kinds(fs, n);
	struct fs__dir *d = xcalloc(1, sizeof(*d));
	d->ents = xcalloc(n->nkids + 2, sizeof(*d->ents));
	d->ents[0] = (struct fs__dirent){n->ino, S_IFDIR, xstrdup(".")};
	d->ents[1] =
	    (struct fs__dirent){n->parent ? n->parent->ino : n->ino, S_IFDIR, xstrdup("..")};
	d->n = 2;
	for (struct node *c = n->first; c; c = c->next)
		d->ents[d->n++] = (struct fs__dirent){c->ino, c->mode & S_IFMT, xstrdup(c->name)};
	FS_UNLOCK(fs);
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	fuse_reply_open(req, fi);
}

static void fs__readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi, bool plus)
{
	(void)ino;
	struct fs *fs = fs__of(req);
	struct fs__dir *d = (struct fs__dir *)(uintptr_t)fi->fh;
	cleanup_free char *buf = xmalloc(size);
	size_t used = 0;
	if (plus)
		FS_LOCK_R(fs);
	for (size_t i = (size_t)off; i < d->n; i++) {
		struct fs__dirent *de = &d->ents[i];
		size_t need;
		if (plus) {
			struct fuse_entry_param e = {0};
			struct node *n = i >= 2 ? tree_by_ino(fs->tree, de->ino) : NULL;
			if (n) {
				fs__stat(n, &e.attr);
				e.ino = n->ino;
				e.generation = 1;
				/* A log's size is on disk: let stat ask for it. */
				e.attr_timeout = n->type == NODE_LOGFILE ? 0.0 : fs__ttl(n);
				e.entry_timeout = logs_node(n) ? 1.0 : FS_TTL;
			} else {
				e.attr.st_ino = de->ino;
				e.attr.st_mode = de->type;
			}
			need = fuse_add_direntry_plus(req, buf + used, size - used, de->name, &e,
						      (off_t)i + 1);
			if (need > size - used)
				break;
			if (n) /* the entry was handed out: the kernel holds it */
				__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
		} else {
			struct stat st = {.st_ino = de->ino, .st_mode = de->type};
			need = fuse_add_direntry(req, buf + used, size - used, de->name, &st,
						 (off_t)i + 1);
			if (need > size - used)
				break;
		}
		used += need;
	}
	if (plus)
		FS_UNLOCK(fs);
	fuse_reply_buf(req, buf, used);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	fs__readdir(req, ino, size, off, fi, false);
}

static void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	fs__readdir(req, ino, size, off, fi, true);
}

static void fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct fs__dir *d = (struct fs__dir *)(uintptr_t)fi->fh;
	for (size_t i = 0; i < d->n; i++)
		free(d->ents[i].name);
	free(d->ents);
	free(d);
	fuse_reply_err(req, 0);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct fs *fs = fs__of(req);
	struct statvfs st = {0};
	FS_LOCK_R(fs);
	size_t files = tree_count(fs->tree);
	FS_UNLOCK(fs);
	st.f_bsize = 4096;
	st.f_frsize = 4096;
	st.f_blocks = 1 << 20;
	st.f_bfree = st.f_bavail = (1 << 20) - (atomic_load(&fs->scratch_bytes) >> 12);
	st.f_files = files + (1 << 20);
	st.f_ffree = st.f_favail = 1 << 20;
	st.f_namemax = 255;
	fuse_reply_statfs(req, &st);
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* No atomic O_TRUNC: the kernel would empty the file's size and page
	 * cache for every reader at open. Without it the truncation comes as
	 * a setattr from the opening thread (naming no handle), which only
	 * the buffer that thread has just opened takes. */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	/* Writes go through to us: the kernel must not merge them in a cache
	 * we then have to reconcile with what was committed. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* ls -l wants attributes with every entry. */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
}

static void fs__setattr_reply(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			      struct fuse_file_info *fi)
{
	struct stat st;
	double ttl = 0;
	int e = fs__setattr(req, ino, attr, to_set, fi, &st, &ttl);
	if (e)
		fuse_reply_err(req, e);
	else
		fuse_reply_attr(req, &st, ttl);
}

/* ---- the workers ---- */

static void fs__run(struct fs__job *j)
{
	struct fuse_file_info *fi = j->has_fi ? &j->fi : NULL;
	switch (j->op) {
	case FS_OP_SETATTR:
		fs__setattr_reply(j->req, j->ino, &j->attr, j->to_set, fi);
		break;
	case FS_OP_MKDIR: {
		struct fuse_entry_param e;
		struct fs *rfs = fs__of(j->req);
		int r = remote_replaying(rfs, j->req)
			    ? remote_mkdir(rfs, j->ino, j->name, &e)
			    : namespace_mkdir(j->req, j->ino, j->name, &e);
		if (r == EPERM) { /* namespace.c's refusal of a folder outside namespaces/ */
			struct fs *fs = fs__of(j->req);
			FS_LOCK_R(fs);
			struct node *dir = tree_by_ino(fs->tree, j->ino);
			cleanup_free char *path =
			    dir ? fs__child_path(dir, j->name) : xstrdup(j->name);
			FS_UNLOCK(fs);
			fs__refuse(fs, path, r,
				   "folders are made only in namespaces/ (a namespace) and in a "
				   "namespace's folder (its kind folders)");
		}
		if (r)
			fuse_reply_err(j->req, r);
		else
			fuse_reply_entry(j->req, &e);
		break;
	}
	case FS_OP_RMDIR:
		fuse_reply_err(j->req, fs__rmdir(j->req, j->ino, j->name));
		break;
	case FS_OP_UNLINK:
		fuse_reply_err(j->req, fs__unlink(j->req, j->ino, j->name));
		break;
	case FS_OP_RENAME:
		fuse_reply_err(j->req, fs__rename(j->req, j->ino, j->name, j->newparent, j->newname,
						  j->flags));
		break;
	case FS_OP_FLUSH:
		fuse_reply_err(j->req, fs__flush(j->req, j->ino, fi));
		break;
	case FS_OP_FSYNC:
		fuse_reply_err(j->req, fs__fsync(j->req, j->ino, j->datasync, fi));
		break;
	case FS_OP_OPEN: {
		struct fs *fs = fs__of(j->req);
		fs__wait_quiet(fs, j->ino);
		fs__open_finish(j->req, fs, j->ino, &j->fi, NODE_OBJECT, j->handle,
				j->create ? &j->entry : NULL);
		break;
	}
	}
}

static void fs__run_job(void *arg)
{
	struct fs__job *j = arg;
	fs__run(j);
	free(j->name);
	free(j->newname);
	free(j);
}

static void fs__queue(struct fs *fs, struct fs__job *job)
{
	workpool_submit(fs->workers, fs__run_job, NULL, job, 0);
}

static struct fs__job *fs__job(enum fs__op op, fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs__job *j = xcalloc(1, sizeof(*j));
	j->op = op;
	j->req = req;
	j->ino = ino;
	j->name = name ? xstrdup(name) : NULL;
	return j;
}

/* The truncations that change only a writer's buffer: open(O_TRUNC)'s,
 * for the writer the same thread has just opened (every rewrite of an
 * object sends one: corral-sched's bindings, the status writers'), and
 * ftruncate() of a handle that writes an object. They are done here, in
 * the loop, sparing a worker's hand-over; returns whether it was one.
 * Any other truncation (one that commits, or refuses) goes to a worker. */
static bool fs__truncate_buffer(fuse_req_t req, fuse_ino_t ino, off_t length,
				struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	if (length < 0 || length > OBJECT_MAX_BYTES)
		return false;
	struct node *n = fs__relock(fs, ino);
	bool object = n && n->type == NODE_OBJECT;
	FS_UNLOCK(fs);
	if (!object)
		return false;
	struct fs__handle *h = fi ? (struct fs__handle *)(uintptr_t)fi->fh : NULL;
	if (h && h->write) {
		fs__handle_truncate(h, (size_t)length);
		return true;
	}
	return length == 0 && fs__truncate_opener(fs, ino, fuse_req_ctx(req)->pid);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	if (!(to_set & FUSE_SET_ATTR_SIZE)) {
		fs__setattr_reply(req, ino, attr, to_set, fi);
		return;
	}
	if (fs__truncate_buffer(req, ino, attr->st_size, fi)) {
		/* The rest (times, modes) as any setattr's. */
		fs__setattr_reply(req, ino, attr, to_set & ~FUSE_SET_ATTR_SIZE, fi);
		return;
	}
	struct fs__job *j = fs__job(FS_OP_SETATTR, req, ino, NULL);
	j->attr = *attr;
	j->to_set = to_set;
	if (fi) {
		j->fi = *fi;
		j->has_fi = true;
	}
	fs__queue(fs__of(req), j);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fs__job *j = fs__job(FS_OP_MKDIR, req, parent, name);
	j->mode = mode;
	fs__queue(fs__of(req), j);
}

static void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fs__queue(fs__of(req), fs__job(FS_OP_RMDIR, req, parent, name));
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fs__queue(fs__of(req), fs__job(FS_OP_UNLINK, req, parent, name));
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct fs__job *j = fs__job(FS_OP_RENAME, req, parent, name);
	j->newparent = newparent;
	j->newname = xstrdup(newname);
	j->flags = flags;
	fs__queue(fs__of(req), j);
}

/* Whether closing or syncing h has something to commit. */
static bool fs__handle_pending(struct fs__handle *h)
{
	pthread_mutex_lock(&h->lock);
	bool pending = h->write && (h->failed || (h->dirty && h->len > 0));
	pthread_mutex_unlock(&h->lock);
	return pending;
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	if (!fs__handle_pending(h) && !h->wrote) {
		fuse_reply_err(req, 0);
		return;
	}
	struct fs__job *j = fs__job(FS_OP_FLUSH, req, ino, NULL);
	j->fi = *fi;
	j->has_fi = true;
	fs__queue(fs__of(req), j);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	if (!fs__handle_pending((struct fs__handle *)(uintptr_t)fi->fh)) {
		fuse_reply_err(req, 0);
		return;
	}
	struct fs__job *j = fs__job(FS_OP_FSYNC, req, ino, NULL);
	j->fi = *fi;
	j->has_fi = true;
	j->datasync = datasync;
	fs__queue(fs__of(req), j);
}

static const struct fuse_lowlevel_ops fs__ops = {
    .init = fs_init,
    .lookup = fs_lookup,
    .forget = fs_forget,
    .forget_multi = fs_forget_multi,
    .getattr = fs_getattr,
    .setattr = fs_setattr,
    .readlink = fs_readlink,
    .mkdir = fs_mkdir,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .symlink = fs_symlink,
    .rename = fs_rename,
    .link = fs_link,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .flush = fs_flush,
    .release = fs_release,
    .fsync = fs_fsync,
    .opendir = fs_opendir,
    .readdir = fs_readdir,
    .readdirplus = fs_readdirplus,
    .releasedir = fs_releasedir,
    .statfs = fs_statfs,
    .create = fs_create,
    .fallocate = fs_fallocate,
};

const struct fuse_lowlevel_ops *fs_ops(void)
{
	return &fs__ops;
}

/* ---- setting up ---- */

static struct admission *fs__admission(const struct fs *fs)
{
	size_t n;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	struct admission_config cfg = {.service_range = &fs->range,
				       .not_ready_toleration_s = fs->toleration_s[0],
				       .unreachable_toleration_s = fs->toleration_s[1]};
	return admission_new(hooks, n, &cfg);
}

struct fs *fs_new(struct store *store, const char *gitdir)
{
	struct fs *fs = xcalloc(1, sizeof(*fs));
	fs->tree = tree_new();
	fs->store = store;
	fs->gitdir = xstrdup(gitdir);
	fs->log_dir = xstrdup("/var/log/pods");
	servicerange_parse(SERVICERANGE_DEFAULT_CIDR, &fs->range, NULL);
	fs->admission = fs__admission(fs);
	fs->errors = errors_new();
	fs->notifier = notifier_new();
	fs->workers =
	    workpool_new(&(const struct workpool_opts){0}, NULL); /* no loop: cannot fail */
	pthread_mutex_init(&fs->quiet_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fs->quiet_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (gethostname(fs->hostname, sizeof(fs->hostname) - 1) < 0)
		strcpy(fs->hostname, "localhost");
	pthread_mutex_init(&fs->author_lock, NULL);
	return fs;
}

/* Splits a store key into where its node goes. */
static int fs__load_one(void *data, const char *key, const struct store_record *rec)
{
	struct fs *fs = data;
	struct node *root = tree_root(fs->tree);
	struct node *dir = NULL;
	struct treepath tp;
	if (treepath_parse_key(key, &tp, NULL) == 0) {
		if (tp.ns) {
			dir = tree_child(fs->tree, namespace_add(fs, tp.ns), tp.plural);
		} else {
			dir = tree_child(fs->tree, root, tp.plural);
			if (dir && dir->type == NODE_NSROOT)
				namespace_add(fs, tp.name);
		}
	}
	cleanup_free char *name = tp.name;
	free(tp.ns);
	free(tp.plural);
	if (!dir || !name || (dir->type != NODE_KIND && dir->type != NODE_NSROOT)) {
		log_warn("store: %s has no place in the tree; left alone", key);
		return 0;
	}
	cleanup_free char *fname = xasprintf("%s.yaml", name);
	const struct kind_info *k = fs__object_kind(dir, fname);
	struct node *obj = tree_add(fs->tree, dir, fname, NODE_OBJECT, fs__object_mode(k));
	obj->kind = k;
	obj->size = rec->len;
	obj->rv = rec->rv;
	obj->mtime.tv_sec = rec->mtime_ns / 1000000000;
	obj->mtime.tv_nsec = rec->mtime_ns % 1000000000;
	obj->ctime = obj->mtime;
	return 0;
}

/* The stored objects of a kind folder, into the hooks that keep state
 * over them (the Service address index), at start: the load above reads
 * no text. */
static int fs__admission_load_dir(struct fs *fs, struct node *dir, size_t *count,
				  struct error **err)
{
	if (!dir || (dir->type != NODE_KIND && dir->type != NODE_NSROOT) ||
	    !admission_wants_load(fs->admission, dir->kind))
		return 0;
	for (struct node *o = dir->first; o; o = o->next) {
		if (o->type != NODE_OBJECT)
			continue;
		cleanup_free char *key = tree_object_key(o);
		cleanup_free char *name = fs__base(o->name);
		cleanup_free char *owner = xasprintf("%s/%s", dir->ns ? dir->ns : "", name);
		struct store_record rec = {0};
		int r = store_get(fs->store, key, &rec, err);
		if (r < 0)
			return r;
		cleanup_ynode struct ynode *obj = NULL;
		if (yaml_parse_one(rec.yaml, rec.len, &obj, NULL) == 0) {
			struct admission_request rq = {.kind = dir->kind,
						       .ns = dir->ns,
						       .name = name,
						       .owner = owner,
						       .obj = obj};
			admission_load(fs->admission, &rq);
			(*count)++;
		}
		store_record_clear(&rec);
	}
	return 0;
}

static int fs__admission_load(struct fs *fs, struct error **err)
{
	struct node *root = tree_root(fs->tree);
	size_t count = 0;
	int r = 0;
	for (struct node *d = root->first; d && r == 0; d = d->next) {
		if (d->type == NODE_KIND)
			r = fs__admission_load_dir(fs, d, &count, err);
		if (d->type != NODE_NSROOT)
			continue;
		r = fs__admission_load_dir(fs, d, &count, err); /* the Namespaces */
		for (struct node *ns = d->first; ns && r == 0; ns = ns->next)
			for (struct node *kd = ns->type == NODE_NS ? ns->first : NULL; kd && r == 0;
			     kd = kd->next)
				r = fs__admission_load_dir(fs, kd, &count, err);
	}
	if (r == 0 && count)
		log_info("%zu stored objects loaded into the admission hooks", count);
	return r;
}

int fs_load(struct fs *fs, struct error **err)
{
	struct node *root = tree_root(fs->tree);
	const struct kind_info *nskind = NULL;
	for (size_t i = 0; i < kinds_count(); i++)
		if (kinds_at(i)->namespace_object)
			nskind = kinds_at(i);
	struct node *nsroot = tree_add(fs->tree, root, "namespaces", NODE_NSROOT, S_IFDIR | 0755);
	nsroot->kind = nskind;
	for (size_t i = 0; i < kinds_count(); i++) {
		const struct kind_info *k = kinds_at(i);
		if (k->namespaced || k->namespace_object)
			continue;
		struct node *d = tree_add(fs->tree, root, k->plural, NODE_KIND, S_IFDIR | 0755);
		d->kind = k;
	}
	struct node *git = tree_add(fs->tree, root, ".git", NODE_SYMLINK, S_IFLNK | 0777);
	git->data = xstrdup(fs->gitdir);
	git->size = strlen(fs->gitdir);
	git->cap = git->size + 1;
	fs->errors_ino = tree_add(fs->tree, root, ".errors", NODE_ERRORS, S_IFREG | 0444)->ino;

	if (store_is_empty(fs->store)) {
		static const char *defaults[] = {"default", "kube-system", "kube-public",
						 "kube-node-lease"};
		for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
			cleanup_free char *text =
			    xasprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n",
				      defaults[i]);
			cleanup_free char *key = xasprintf("namespaces/%s", defaults[i]);
			/* Create-only: of hosts starting together on one
			 * store, one makes it and the others leave it be. */
			struct write_target t = {
			    .kind = nskind, .name = defaults[i], .key = key, .create_only = true};
			struct blob *b = NULL;
			uint64_t rv;
			int r = fs__write(fs, &t, text, strlen(text), "corral <corral@localhost>",
					  &b, &rv, err);
			if (r < 0 && err && *err && (*err)->status == EEXIST) {
				/* Another corral-fs made it first. */
				error_free(*err);
				*err = NULL;
				continue;
			}
			if (r < 0)
				return r;
			blob_unref(b);
		}
	}
	int r = store_foreach(fs->store, false, fs__load_one, fs, err);
	return r < 0 ? r : fs__admission_load(fs, err);
}

void fs_set_service_range(struct fs *fs, const struct servicerange *range)
{
	fs->range = *range;
	admission_free(fs->admission);
	fs->admission = fs__admission(fs);
}

void fs_set_default_tolerations(struct fs *fs, long long not_ready_s, long long unreachable_s)
{
	fs->toleration_s[0] = not_ready_s;
	fs->toleration_s[1] = unreachable_s;
	admission_free(fs->admission);
	fs->admission = fs__admission(fs);
}

void fs_set_remote_logs(struct fs *fs, struct remotelogs *rl)
{
	fs->remotelogs = rl;
}

void fs_set_log_dir(struct fs *fs, const char *dir)
{
	free(fs->log_dir);
	fs->log_dir = xstrdup(dir);
}

int fs_start(struct fs *fs, struct fuse_session *se, const char *mountpoint, struct error **err)
{
	fs->se = se;
	int r = notifier_start(fs->notifier, se, err);
	if (r == 0)
		r = workpool_start(fs->workers, FS_WORKERS, err);
	return r < 0 ? r : remote_start(fs, mountpoint, err);
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	/* The replays first: they wait on the workers; then the workers:
	 * what they still run may queue invalidations. */
	remote_stop(fs);
	workpool_free(fs->workers);
	notifier_free(fs->notifier);
	errors_free(fs->errors);
	admission_free(fs->admission);
	tree_free(fs->tree);
	free(fs->author);
	free(fs->gitdir);
	free(fs->log_dir);
	pthread_mutex_destroy(&fs->author_lock);
	pthread_mutex_destroy(&fs->quiet_lock);
	pthread_cond_destroy(&fs->quiet_cond);
	free(fs);
}
