/* ops.c: the FUSE operations. See ops.h for the caching rules.
 *
 * Every handler ends in exactly one fuse_reply_*. The tree lock is held
 * only around memory work; reading and writing the store, and notifying
 * the kernel, happen outside it. corral-fs never changes an object on its
 * own: each change here is the direct result of a request. */
#include "ops.h"
#include "kinds.h"
#include "log.h"
#include "object.h"
#include "svcindex.h"
#include "tree.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

struct fs__inval {
	uint64_t parent;
	char *name;
	struct fs__inval *next;
};

struct fs {
	struct tree *tree;
	struct store *store;
	struct fuse_session *se;
	char *gitdir;
	char *log_dir; /* where containers' output is: /var/log/pods */
	struct svcindex *services; /* addresses and node ports Services hold */
	char hostname[256];

	pthread_mutex_t errors_lock;
	char *errors[FS_ERRORS_MAX]; /* ring of rejection lines */
	size_t errors_next;
	size_t errors_len;	     /* bytes in the ring: .errors' size */
	char *author;		     /* the last writer, under errors_lock */
	uid_t author_uid;
	uint64_t errors_ino;
	atomic_size_t scratch_bytes;

	/* The notifier: entry invalidations that must not run inside the
	 * request that causes them. */
	pthread_t notifier;
	bool notifier_started, stopping;
	pthread_mutex_t inval_lock;
	pthread_cond_t inval_cond;
	struct fs__inval *inval_head;

	/* Workers: requests that write the store (and so wait for an fsync)
	 * run here, so that the session loop keeps serving lookups and reads
	 * and concurrent writers meet in one group commit. */
	pthread_t workers[FS_WORKERS];
	size_t nworkers;
	pthread_mutex_t jobs_lock;
	pthread_cond_t jobs_cond;
	struct fs__job *jobs_head, **jobs_tail;
};

enum fs__op { FS_OP_SETATTR, FS_OP_MKDIR, FS_OP_RMDIR, FS_OP_UNLINK, FS_OP_RENAME, FS_OP_FLUSH,
	       FS_OP_FSYNC };

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
	struct fs__job *next;
};

struct fs__handle {
	struct blob *snap; /* objects read, .errors: what this open sees */
	char *buf;	   /* objects written: the whole new text */
	size_t len, cap;
	bool write, dirty;
	bool wrote;	   /* scratch: written (or truncated) through this handle */
	bool append;	   /* object written with O_APPEND */
	bool fresh;	   /* object: opened, nothing written or truncated yet */
	struct fs__handle *wnext; /* the node's other writers */
	int fd;		   /* a container log: the file on disk, else -1 */
	pthread_mutex_t lock;
};

static void fs__handle_truncate(struct fs__handle *h, size_t size);

struct fs__dirent {
	uint64_t ino;
	mode_t type;
	char *name;
};

struct fs__dir {
	struct fs__dirent *ents;
	size_t n;
};

#define FS_LOCK_R(fs) pthread_rwlock_rdlock(tree_lock((fs)->tree))
#define FS_LOCK_W(fs) pthread_rwlock_wrlock(tree_lock((fs)->tree))
#define FS_UNLOCK(fs) pthread_rwlock_unlock(tree_lock((fs)->tree))

static struct fs *fs__of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* ---- names ---- */

static bool fs__ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), m = strlen(suffix);
	return l > m && strcmp(s + l - m, suffix) == 0;
}

/* Whether name, in a folder that holds objects, names one: "<name>.yaml"
 * that is no editor's or tool's temporary (those begin with '.' or '#'). */
static bool fs__object_name(const char *name)
{
	return fs__ends_with(name, ".yaml") && name[0] != '.' && name[0] != '#';
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
		return kinds_by_kind("Namespace");
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

/* The store key of dir/name ("namespaces/dev/pods/web"). */
static char *fs__key(const struct node *dir, const char *name)
{
	cleanup_free char *base = fs__base(name);
	if (dir->type == NODE_NSROOT)
		return xasprintf("namespaces/%s", base);
	if (dir->ns)
		return xasprintf("namespaces/%s/%s/%s", dir->ns, dir->name, base);
	return xasprintf("%s/%s", dir->name, base);
}

static char *fs__author(fuse_req_t req, struct fs *fs)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	/* The last writer's name is kept: most writes come from one user, and
	 * the password database is a file read per lookup. */
	pthread_mutex_lock(&fs->errors_lock);
	if (fs->author && fs->author_uid == ctx->uid) {
		char *a = xstrdup(fs->author);
		pthread_mutex_unlock(&fs->errors_lock);
		return a;
	}
	pthread_mutex_unlock(&fs->errors_lock);
	struct passwd pw, *res = NULL;
	char buf[1024];
	char *a;
	if (getpwuid_r(ctx->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		a = xasprintf("%s <%s@%s>", pw.pw_name, pw.pw_name, fs->hostname);
	else
		a = xasprintf("uid%u <uid%u@%s>", (unsigned)ctx->uid, (unsigned)ctx->uid,
			      fs->hostname);
	pthread_mutex_lock(&fs->errors_lock);
	free(fs->author);
	fs->author = xstrdup(a);
	fs->author_uid = ctx->uid;
	pthread_mutex_unlock(&fs->errors_lock);
	return a;
}

/* ---- errors ---- */

static void fs__reject(struct fs *fs, const char *path, const struct error *e)
{
	char ts[32];
	object_timestamp(time(NULL), ts);
	char *line = xasprintf("%s %s: %s\n", ts, path, e ? e->msg : "rejected");
	log_warn("rejected %s: %s", path, e ? e->msg : "?");
	pthread_mutex_lock(&fs->errors_lock);
	if (fs->errors[fs->errors_next])
		fs->errors_len -= strlen(fs->errors[fs->errors_next]);
	free(fs->errors[fs->errors_next]);
	fs->errors[fs->errors_next] = line;
	fs->errors_len += strlen(line);
	fs->errors_next = (fs->errors_next + 1) % FS_ERRORS_MAX;
	size_t len = fs->errors_len;
	pthread_mutex_unlock(&fs->errors_lock);
	/* .errors has no attribute cache: stat shows the new size at once. */
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, fs->errors_ino);
	if (n) {
		n->size = len;
		clock_gettime(CLOCK_REALTIME, &n->mtime);
		n->ctime = n->mtime;
	}
	FS_UNLOCK(fs);
}

static struct blob *fs__errors_blob(struct fs *fs)
{
	pthread_mutex_lock(&fs->errors_lock);
	size_t len = 0;
	for (size_t i = 0; i < FS_ERRORS_MAX; i++)
		if (fs->errors[i])
			len += strlen(fs->errors[i]);
	char *buf = xmalloc(len + 1), *p = buf;
	for (size_t i = 0; i < FS_ERRORS_MAX; i++) {
		const char *l = fs->errors[(fs->errors_next + i) % FS_ERRORS_MAX];
		if (l)
			p = stpcpy(p, l);
	}
	pthread_mutex_unlock(&fs->errors_lock);
	struct blob *b = blob_new(buf, len);
	free(buf);
	return b;
}

static int fs__errno(const struct error *e)
{
	int s = e ? e->status : EIO;
	return s > 0 ? s : EIO;
}

/* ---- the notifier ---- */

static void fs__inval_later(struct fs *fs, uint64_t parent, const char *name)
{
	struct fs__inval *iv = xcalloc(1, sizeof(*iv));
	iv->parent = parent;
	iv->name = xstrdup(name);
	pthread_mutex_lock(&fs->inval_lock);
	iv->next = fs->inval_head;
	fs->inval_head = iv;
	pthread_cond_signal(&fs->inval_cond);
	pthread_mutex_unlock(&fs->inval_lock);
}

static void *fs__notifier(void *arg)
{
	struct fs *fs = arg;
	pthread_mutex_lock(&fs->inval_lock);
	while (!fs->stopping) {
		if (!fs->inval_head) {
			pthread_cond_wait(&fs->inval_cond, &fs->inval_lock);
			continue;
		}
		struct fs__inval *list = fs->inval_head;
		fs->inval_head = NULL;
		pthread_mutex_unlock(&fs->inval_lock);
		while (list) {
			struct fs__inval *next = list->next;
			fuse_lowlevel_notify_inval_entry(fs->se, list->parent, list->name,
							 strlen(list->name));
			free(list->name);
			free(list);
			list = next;
		}
		pthread_mutex_lock(&fs->inval_lock);
	}
	pthread_mutex_unlock(&fs->inval_lock);
	return NULL;
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

static bool fs__is_log(const struct node *n)
{
	return n->type == NODE_LOGS || n->type == NODE_LOGPOD || n->type == NODE_LOGFILE;
}

/* Container logs change on disk behind our back: cache them briefly. */
static double fs__ttl(const struct node *n)
{
	return n->type == NODE_ERRORS ? 0.0 : fs__is_log(n) ? 1.0 : FS_TTL;
}

/* Fills e for n and counts the kernel's new reference; needs the lock
 * (read is enough: the count is atomic, and nodes are freed only under the
 * write lock). */
static void fs__entry(struct node *n, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->generation = 1;
	fs__stat(n, &e->attr);
	e->attr_timeout = fs__ttl(n);
	e->entry_timeout = fs__is_log(n) ? 1.0 : FS_TTL;
	__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
}

static mode_t fs__object_mode(const struct kind_info *k)
{
	return S_IFREG | (strcmp(k->kind, "Secret") == 0 ? 0600 : 0644);
}

/* Makes the kind folders of a namespace that are missing; write lock. */
static void fs__ensure_kinds(struct fs *fs, struct node *nsdir)
{
	for (size_t i = 0; i < kinds_count(); i++) {
		const struct kind_info *k = kinds_at(i);
		if (!k->namespaced || tree_child(fs->tree, nsdir, k->plural))
			continue;
		struct node *d = tree_add(fs->tree, nsdir, k->plural, NODE_KIND, S_IFDIR | 0755);
		d->kind = k;
	}
	if (!tree_child(fs->tree, nsdir, "logs"))
		tree_add(fs->tree, nsdir, "logs", NODE_LOGS, S_IFDIR | 0555);
}

/* ---- container logs ----
 * namespaces/<ns>/logs/<pod>/<container>.log shows
 * <log_dir>/<ns>_<pod>_<uid>/<container>/<restarts>.log, the newest pod
 * instance and the newest restart. The folders are read from the disk
 * when listed or looked up, never under the tree lock. */

struct fs__logent {
	char *name;
	char *source;
	time_t mtime;
};

static void fs__logents_free(struct fs__logent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].source);
	}
	free(v);
}

static void fs__logents_put(struct fs__logent **v, size_t *n, const char *name,
			    const char *source, time_t mtime)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*v)[i].name, name) != 0)
			continue;
		if (mtime >= (*v)[i].mtime) { /* the newer instance wins */
			free((*v)[i].source);
			(*v)[i].source = xstrdup(source);
			(*v)[i].mtime = mtime;
		}
		return;
	}
	*v = xrealloc(*v, sizeof(**v) * (*n + 1));
	(*v)[*n] = (struct fs__logent){xstrdup(name), xstrdup(source), mtime};
	(*n)++;
}

/* The pods of namespace ns that have log folders. */
static struct fs__logent *fs__scan_pods(const char *log_dir, const char *ns, size_t *n)
{
	struct fs__logent *v = NULL;
	*n = 0;
	cleanup_dir DIR *d = opendir(log_dir);
	if (!d)
		return NULL;
	size_t nl = strlen(ns);
	struct dirent *de;
	while ((de = readdir(d))) {
		/* <ns>_<pod>_<uid>: names and namespaces hold no '_'. */
		if (strncmp(de->d_name, ns, nl) != 0 || de->d_name[nl] != '_')
			continue;
		const char *pod = de->d_name + nl + 1;
		const char *us = strchr(pod, '_');
		if (!us || us == pod)
			continue;
		cleanup_free char *name = xstrndup(pod, (size_t)(us - pod));
		cleanup_free char *path = xasprintf("%s/%s", log_dir, de->d_name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			fs__logents_put(&v, n, name, path, st.st_mtime);
	}
	return v;
}

/* The containers of a pod's log folder, each with its newest log. */
static struct fs__logent *fs__scan_containers(const char *poddir, size_t *n)
{
	struct fs__logent *v = NULL;
	*n = 0;
	cleanup_dir DIR *d = opendir(poddir);
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		cleanup_free char *cdir = xasprintf("%s/%s", poddir, de->d_name);
		cleanup_dir DIR *cd = opendir(cdir);
		if (!cd)
			continue;
		long best = -1;
		struct dirent *le;
		while ((le = readdir(cd))) {
			char *end;
			long r = strtol(le->d_name, &end, 10);
			if (end != le->d_name && strcmp(end, ".log") == 0 && r > best)
				best = r;
		}
		if (best < 0)
			continue;
		cleanup_free char *name = xasprintf("%s.log", de->d_name);
		cleanup_free char *file = xasprintf("%s/%ld.log", cdir, best);
		fs__logents_put(&v, n, name, file, 0);
	}
	return v;
}

/* Brings the children of a logs folder (pods) or of a pod's folder
 * (containers) in line with the disk. */
static void fs__logs_refresh(struct fs *fs, uint64_t ino)
{
	FS_LOCK_R(fs);
	struct node *dir = tree_by_ino(fs->tree, ino);
	enum node_type type = dir ? dir->type : NODE_ROOT;
	cleanup_free char *ns = dir && dir->ns ? xstrdup(dir->ns) : NULL;
	cleanup_free char *source = dir && dir->source ? xstrdup(dir->source) : NULL;
	FS_UNLOCK(fs);
	struct fs__logent *v = NULL;
	size_t n = 0;
	if (type == NODE_LOGS && ns)
		v = fs__scan_pods(fs->log_dir, ns, &n);
	else if (type == NODE_LOGPOD && source)
		v = fs__scan_containers(source, &n);
	else
		return;
	enum node_type child = type == NODE_LOGS ? NODE_LOGPOD : NODE_LOGFILE;
	FS_LOCK_W(fs);
	dir = tree_by_ino(fs->tree, ino);
	if (dir && dir->parent) {
		for (struct node *c = dir->first, *next; c; c = next) {
			next = c->next;
			bool keep = false;
			for (size_t i = 0; i < n && !keep; i++)
				keep = strcmp(v[i].name, c->name) == 0;
			if (!keep)
				tree_unlink(fs->tree, c);
		}
		/* Only the logs of pods that exist: a deleted pod's output goes
		 * with it (and rm -r of a namespace is not stopped by it). */
		struct node *pods = type == NODE_LOGS && dir->parent
					    ? tree_child(fs->tree, dir->parent, "pods") : NULL;
		for (size_t i = 0; i < n; i++) {
			if (type == NODE_LOGS) {
				cleanup_free char *f = xasprintf("%s.yaml", v[i].name);
				struct node *p = pods ? tree_child(fs->tree, pods, f) : NULL;
				if (!p || p->pending) {
					struct node *stale = tree_child(fs->tree, dir, v[i].name);
					if (stale)
						tree_unlink(fs->tree, stale);
					continue;
				}
			}
			struct node *c = tree_child(fs->tree, dir, v[i].name);
			if (!c)
				c = tree_add(fs->tree, dir, v[i].name, child,
					     child == NODE_LOGPOD ? S_IFDIR | 0555 : S_IFREG | 0444);
			if (!c->source || strcmp(c->source, v[i].source) != 0) {
				free(c->source);
				c->source = xstrdup(v[i].source);
			}
		}
	}
	FS_UNLOCK(fs);
	fs__logents_free(v, n);
}

/* Size and times of a container log from the disk. */
static void fs__logfile_stat(struct fs *fs, uint64_t ino, struct stat *st)
{
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	cleanup_free char *source = n && n->type == NODE_LOGFILE && n->source ? xstrdup(n->source) : NULL;
	FS_UNLOCK(fs);
	struct stat disk;
	if (source && stat(source, &disk) == 0) {
		st->st_size = disk.st_size;
		st->st_blocks = disk.st_blocks;
		st->st_mtim = disk.st_mtim;
		st->st_ctim = disk.st_ctim;
	}
}

static struct node *fs__add_namespace(struct fs *fs, const char *name)
{
	struct node *nsroot = tree_child(fs->tree, tree_root(fs->tree), "namespaces");
	struct node *d = tree_child(fs->tree, nsroot, name);
	if (!d) {
		d = tree_add(fs->tree, nsroot, name, NODE_NS, S_IFDIR | 0755);
		d->ns = xstrdup(name);
	}
	fs__ensure_kinds(fs, d);
	return d;
}

/* ---- the store side of a write ---- */

static bool fs__is_service(const struct kind_info *k)
{
	return k && strcmp(k->kind, "Service") == 0;
}

/* A stored Service's addresses and ports join the index (at load) or
 * leave it (deleted). */
static void fs__services_note(struct fs *fs, const char *ns, const char *name, const char *yaml,
			      size_t len, bool stored)
{
	cleanup_ynode struct ynode *svc = NULL;
	if (!yaml || yaml_parse_one(yaml, len, &svc, NULL) < 0)
		return;
	cleanup_free char *owner = xasprintf("%s/%s", ns ? ns : "", name);
	if (stored)
		svcindex_load(fs->services, owner, svc);
	else
		svcindex_drop(fs->services, owner, svc);
}

/* Stores text as the object dir/name on behalf of author. */
static int fs__store_object(struct fs *fs, const struct kind_info *k, const char *ns,
			    const char *name, const char *key, const char *text, size_t len,
			    const char *author, struct blob **out, uint64_t *rv,
			    struct error **err)
{
	cleanup_free char *hpath = xasprintf("%s.yaml", key);
	for (int attempt = 0;; attempt++) {
		struct store_record old = {0};
		struct error *gerr = NULL;
		int r = store_get(fs->store, key, &old, &gerr);
		if (r < 0 && r != -ENOENT) {
			*err = gerr;
			return r;
		}
		error_free(gerr);
		bool have_old = r == 0;
		struct object_build b = {.kind = k, .ns = ns, .name = name, .text = text,
					 .len = len, .old_yaml = have_old ? old.yaml : NULL,
					 .old_len = old.len, .old_decl_rv = old.decl_rv};
		r = object_build(&b, err);
		if (r < 0) {
			store_record_clear(&old);
			return r;
		}
		/* A Service may not take what another holds (svcindex.h). */
		struct svcindex_claim claim = {.ip = -1};
		cleanup_ynode struct ynode *old_svc = NULL;
		cleanup_free char *owner = NULL;
		if (fs__is_service(k)) {
			owner = xasprintf("%s/%s", ns ? ns : "", name);
			if (have_old)
				yaml_parse_one(old.yaml, old.len, &old_svc, NULL);
			r = svcindex_reserve(fs->services, owner, name, b.obj, old_svc, &claim, err);
			if (r < 0) {
				store_record_clear(&old);
				object_build_clear(&b);
				return r;
			}
		}
		struct store_change c = {.key = key, .obj = b.obj,
					 .expect_rv = have_old ? old.rv : 0,
					 .history_path = b.message ? hpath : NULL,
					 .history_yaml = b.declared, .message = b.message,
					 .author = author, .decl_changed = b.decl_changed};
		struct error *serr = NULL;
		r = store_apply(fs->store, &c, &serr);
		store_record_clear(&old);
		if (owner && r < 0)
			svcindex_unreserve(fs->services, owner, &claim);
		else if (owner)
			svcindex_settle(fs->services, owner, b.obj, old_svc, &claim);
		object_build_clear(&b);
		if (r == -EAGAIN && attempt < 32) {
			/* Another write got in between our read and commit:
			 * build again on what it stored. */
			error_free(serr);
			free(c.yaml);
			continue;
		}
		if (r < 0) {
			*err = serr;
			free(c.yaml);
			return r;
		}
		*out = blob_new(c.yaml, c.yaml_len);
		*rv = c.rv;
		free(c.yaml);
		return 0;
	}
}

static int fs__delete_object(struct fs *fs, const struct kind_info *k, const char *ns,
			     const char *name, const char *key, const char *author,
			     struct error **err)
{
	cleanup_free char *hpath = xasprintf("%s.yaml", key);
	cleanup_free char *msg = object_delete_message(k, ns, name);
	for (int attempt = 0;; attempt++) {
		struct store_record old = {0};
		int r = store_get(fs->store, key, &old, err);
		if (r < 0)
			return r;
		bool hist = object_in_history(k, old.yaml, old.len);
		struct store_change c = {.key = key, .expect_rv = old.rv,
					 .history_path = hist ? hpath : NULL, .message = msg,
					 .author = author};
		struct error *serr = NULL;
		r = store_apply(fs->store, &c, &serr);
		if (r == 0 && fs__is_service(k))
			fs__services_note(fs, ns, name, old.yaml, old.len, false);
		store_record_clear(&old);
		if (r == -EAGAIN && attempt < 32) {
			error_free(serr);
			continue;
		}
		if (r < 0)
			*err = serr;
		else
			error_free(serr);
		return r;
	}
}

/* Commits text as the object that node n (an object node, write-locked
 * state read by the caller) stands for: dir/name. Called without the lock.
 * On success updates n and invalidates the kernel's copy. */
struct fs__target {
	const struct kind_info *kind;
	char *ns, *name, *key, *path;
	uint64_t dir_ino;
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
	t->key = fs__key(dir, name);
	t->path = fs__child_path(dir, name);
	t->dir_ino = dir->ino;
}

static void fs__set_content(struct node *n, struct blob *b, uint64_t rv)
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
	FS_LOCK_W(fs);
	n = tree_by_ino(fs->tree, ino);
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
			FS_LOCK_W(fs);
			dir = tree_by_ino(fs->tree, parent);
			if (dir && dir->parent)
				fs__ensure_kinds(fs, dir);
			n = dir ? tree_child(fs->tree, dir, name) : NULL;
		}
	}
	if (dir && (dir->type == NODE_LOGS || dir->type == NODE_LOGPOD)) {
		/* Always from the disk: a restart changes which file it is. */
		FS_UNLOCK(fs);
		fs__logs_refresh(fs, parent);
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
	if (logfile)
		fs__logfile_stat(fs, e.ino, &e.attr);
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
	if (logfile)
		fs__logfile_stat(fs, ino, &st);
	fuse_reply_attr(req, &st, ttl);
}

/* Commits the bytes as the object n stands for, or records why not.
 * Returns 0 or a positive errno. */
static int fs__commit_node(fuse_req_t req, struct fs *fs, uint64_t ino, const char *text,
			   size_t len)
{
	struct fs__target t = {0};
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || !n->parent || n->type != NODE_OBJECT) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	fs__target_of(n->parent, n->name, &t);
	FS_UNLOCK(fs);

	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	struct blob *b = NULL;
	uint64_t rv = 0;
	int r = fs__store_object(fs, t.kind, t.ns, t.name, t.key, text, len, author, &b, &rv, &err);
	if (r < 0) {
		int e = fs__errno(err);
		fs__reject(fs, t.path, err);
		error_free(err);
		/* A new file that was refused leaves again, unless the store
		 * holds the object (a file renamed away by an editor and
		 * written anew): then the file shows the stored object. */
		bool gone = false;
		uint64_t dir_ino = 0;
		cleanup_free char *name = NULL;
		struct store_record rec = {0};
		bool stored = store_get(fs->store, t.key, &rec, NULL) == 0;
		FS_LOCK_W(fs);
		n = tree_by_ino(fs->tree, ino);
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
		fs__target_clear(&t);
		return e;
	}
	FS_LOCK_W(fs);
	n = tree_by_ino(fs->tree, ino);
	if (n)
		fs__set_content(n, b, rv);
	else
		blob_unref(b);
	if (!t.ns && strcmp(t.kind->kind, "Namespace") == 0)
		fs__add_namespace(fs, t.name); /* a Namespace file brings its folder */
	FS_UNLOCK(fs);
	fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	fs__target_clear(&t);
	return 0;
}

static void fs__setattr_run(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_R(fs);
	struct node *ln = tree_by_ino(fs->tree, ino);
	bool is_log = ln && fs__is_log(ln);
	FS_UNLOCK(fs);
	if (is_log) {
		fuse_reply_err(req, EPERM);
		return;
	}
	struct fs__handle *h = fi ? (struct fs__handle *)(uintptr_t)fi->fh : NULL;
	struct stat st;

	if (to_set & FUSE_SET_ATTR_SIZE) {
		size_t size = (size_t)attr->st_size;
		FS_LOCK_W(fs);
		struct node *n = tree_by_ino(fs->tree, ino);
		int e = 0;
		enum node_type type = n ? n->type : NODE_ERRORS;
		if (!n)
			e = ENOENT;
		else if (type == NODE_SCRATCH) {
			size_t old = n->size;
			if (size > FS_SCRATCH_FILE_MAX ||
			    (size > old && atomic_load(&fs->scratch_bytes) + (size - old) >
						   FS_SCRATCH_TOTAL_MAX))
				e = size > FS_SCRATCH_FILE_MAX ? EFBIG : ENOSPC;
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
		} else if (type != NODE_OBJECT)
			e = S_ISDIR(n->mode) ? EISDIR : EPERM;
		FS_UNLOCK(fs);
		bool to_writers = false;
		if (!e && type == NODE_OBJECT && !(h && h->write)) {
			/* open(O_TRUNC) truncates without naming its handle:
			 * it is for the writers that have done nothing yet. */
			FS_LOCK_W(fs);
			n = tree_by_ino(fs->tree, ino);
			for (struct fs__handle *w = n ? n->writers : NULL; w; w = w->wnext)
				if (w->fresh) {
					/* Several may have just opened: each keeps
					 * waiting for its own truncation. */
					fs__handle_truncate(w, size);
					w->fresh = true;
					to_writers = true;
				}
			FS_UNLOCK(fs);
		}
		if (!e && type == NODE_OBJECT && !to_writers) {
			if (h && h->write) {
				if (size > OBJECT_MAX_BYTES)
					e = EFBIG;
				else
					fs__handle_truncate(h, size);
			} else {
				/* truncate(2) of an object: commit what is left. */
				struct error *err = NULL;
				struct blob *cur = fs__load(fs, ino, &err);
				if (!cur) {
					e = fs__errno(err);
					error_free(err);
				} else if (size != cur->len) {
					cleanup_free char *buf = xcalloc(1, size + 1);
					memcpy(buf, cur->data, size < cur->len ? size : cur->len);
					e = fs__commit_node(req, fs, ino, buf, size);
				}
				blob_unref(cur);
			}
		}
		if (e) {
			fuse_reply_err(req, e);
			return;
		}
	}
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* Modes, owners and times are kept in memory: accepted so that cp -a,
	 * tar and rsync work, never part of an object. */
	if (to_set & FUSE_SET_ATTR_MODE)
		n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
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
	fs__stat(n, &st);
	double ttl = fs__ttl(n);
	FS_UNLOCK(fs);
	fuse_reply_attr(req, &st, ttl);
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

/* ---- namespaces ---- */

static void fs__mkdir_run(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)mode;
	struct fs *fs = fs__of(req);
	struct fuse_entry_param e;
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	if (!dir) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (tree_child(fs->tree, dir, name)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EEXIST);
		return;
	}
	if (dir->type == NODE_NS) {
		const struct kind_info *k = kinds_by_plural(name);
		if (k && k->namespaced) {
			fs__ensure_kinds(fs, dir);
			fs__entry(tree_child(fs->tree, dir, name), &e);
			FS_UNLOCK(fs);
			fuse_reply_entry(req, &e);
			return;
		}
	}
	if (dir->type != NODE_NSROOT) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EPERM);
		return;
	}
	FS_UNLOCK(fs);

	/* mkdir namespaces/NAME declares the Namespace NAME. */
	cleanup_free char *text = xasprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: '%s'\n", name);
	cleanup_free char *key = xasprintf("namespaces/%s", name);
	cleanup_free char *author = fs__author(req, fs);
	const struct kind_info *k = kinds_by_kind("Namespace");
	struct error *err = NULL;
	struct blob *b = NULL;
	uint64_t rv = 0;
	struct store_record rec = {0};
	if (store_get(fs->store, key, &rec, NULL) == 0) {
		/* Declared already (by a Namespace file): just the folder. */
		b = blob_new(rec.yaml, rec.len);
		rv = rec.rv;
		store_record_clear(&rec);
	} else if (fs__store_object(fs, k, NULL, name, key, text, strlen(text), author, &b, &rv,
				    &err) < 0) {
		cleanup_free char *path = xasprintf("namespaces/%s", name);
		int ec = fs__errno(err);
		fs__reject(fs, path, err);
		error_free(err);
		fuse_reply_err(req, ec);
		return;
	}
	cleanup_free char *fname = xasprintf("%s.yaml", name);
	FS_LOCK_W(fs);
	dir = tree_by_ino(fs->tree, parent);
	struct node *obj = tree_child(fs->tree, dir, fname);
	if (!obj) {
		obj = tree_add(fs->tree, dir, fname, NODE_OBJECT, fs__object_mode(k));
		obj->kind = k;
	}
	fs__set_content(obj, b, rv);
	struct node *nsdir = fs__add_namespace(fs, name);
	fs__entry(nsdir, &e);
	FS_UNLOCK(fs);
	fuse_reply_entry(req, &e);
}

/* Whether a namespace folder holds anything but empty kind folders. */
static bool fs__ns_busy(const struct node *nsdir)
{
	for (const struct node *c = nsdir->first; c; c = c->next)
		if ((c->type != NODE_KIND && c->type != NODE_LOGS) ||
		    (c->type == NODE_KIND && c->nkids > 0))
			return true;
	return false;
}

/* Deletes namespace name: its folder and its object. The caller names the
 * entry the kernel is removing; the other is invalidated later. */
/* The namespaces Kubernetes keeps whatever happens. */
static bool fs__ns_protected(const char *name)
{
	return strcmp(name, "default") == 0 || strcmp(name, "kube-system") == 0 ||
	       strcmp(name, "kube-public") == 0 || strcmp(name, "kube-node-lease") == 0;
}

static int fs__delete_namespace(fuse_req_t req, struct fs *fs, struct node *nsroot,
				const char *name)
{
	if (fs__ns_protected(name)) {
		cleanup_free char *path = xasprintf("namespaces/%s", name);
		struct error e = {EPERM, "this namespace is part of every cluster and cannot be deleted"};
		fs__reject(fs, path, &e);
		return EPERM;
	}
	cleanup_free char *fname = xasprintf("%s.yaml", name);
	FS_LOCK_R(fs);
	struct node *nsdir = tree_child(fs->tree, nsroot, name);
	bool busy = nsdir && fs__ns_busy(nsdir);
	FS_UNLOCK(fs);
	if (busy)
		return ENOTEMPTY;
	cleanup_free char *key = xasprintf("namespaces/%s", name);
	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	int r = fs__delete_object(fs, kinds_by_kind("Namespace"), NULL, name, key, author, &err);
	if (r < 0 && r != -ENOENT) {
		int e = fs__errno(err);
		cleanup_free char *path = xasprintf("namespaces/%s", fname);
		fs__reject(fs, path, err);
		error_free(err);
		return e;
	}
	error_free(err);
	FS_LOCK_W(fs);
	nsdir = tree_child(fs->tree, nsroot, name);
	if (nsdir) {
		while (nsdir->first)
			tree_unlink(fs->tree, nsdir->first);
		tree_unlink(fs->tree, nsdir);
	}
	struct node *obj = tree_child(fs->tree, nsroot, fname);
	if (obj)
		tree_unlink(fs->tree, obj);
	FS_UNLOCK(fs);
	return 0;
}

static void fs__rmdir_run(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (!n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if ((n->type == NODE_KIND && n->ns) || n->type == NODE_LOGS) {
		/* An empty kind folder (or logs/) may go (rm -r does that);
		 * it comes back when looked up. */
		int e = n->nkids ? ENOTEMPTY : 0;
		if (!e)
			tree_unlink(fs->tree, n);
		FS_UNLOCK(fs);
		fuse_reply_err(req, e);
		return;
	}
	if (n->type != NODE_NS) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EPERM);
		return;
	}
	uint64_t nsroot_ino = dir->ino;
	FS_UNLOCK(fs);
	FS_LOCK_R(fs);
	dir = tree_by_ino(fs->tree, nsroot_ino);
	FS_UNLOCK(fs);
	int e = fs__delete_namespace(req, fs, dir, name);
	if (!e) {
		cleanup_free char *fname = xasprintf("%s.yaml", name);
		fs__inval_later(fs, nsroot_ino, fname);
	}
	fuse_reply_err(req, e);
}

/* ---- files ---- */

static void fs__unlink_run(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	struct fs__target t = {0};
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (!n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (n->type == NODE_ERRORS || fs__is_log(n) ||
	    (n->type == NODE_SYMLINK && dir->type == NODE_ROOT && strcmp(name, ".git") == 0)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EPERM);
		return;
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
				cleanup_free char *nm = last ? xasprintf("%s.yaml", seg) : xstrdup(seg);
				cur = tree_child(fs->tree, cur, nm);
			}
			replaced = cur != NULL;
			FS_UNLOCK(fs);
			if (!replaced && store_get(fs->store, moved, &rec, NULL) == 0) {
				cleanup_free char *author = fs__author(req, fs);
				struct error *err = NULL;
				if (fs__delete_object(fs, mk, ns, oname, moved, author, &err) < 0)
					log_warn("deleting %s: %s", moved, err ? err->msg : "?");
				error_free(err);
			}
			store_record_clear(&rec);
		}
		fuse_reply_err(req, 0);
		return;
	}
	if (dir->type == NODE_NSROOT) {
		uint64_t nsroot_ino = dir->ino;
		cleanup_free char *base = fs__base(name);
		FS_UNLOCK(fs);
		int e = fs__delete_namespace(req, fs, dir, base);
		if (!e)
			fs__inval_later(fs, nsroot_ino, base);
		fuse_reply_err(req, e);
		return;
	}
	if (n->pending) {
		tree_unlink(fs->tree, n);
		FS_UNLOCK(fs);
		fuse_reply_err(req, 0);
		return;
	}
	fs__target_of(dir, name, &t);
	FS_UNLOCK(fs);
	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	int r = fs__delete_object(fs, t.kind, t.ns, t.name, t.key, author, &err);
	if (r < 0 && r != -ENOENT) {
		int e = fs__errno(err);
		fs__reject(fs, t.path, err);
		error_free(err);
		fs__target_clear(&t);
		fuse_reply_err(req, e);
		return;
	}
	error_free(err);
	FS_LOCK_W(fs);
	dir = tree_by_ino(fs->tree, parent);
	n = dir ? tree_child(fs->tree, dir, name) : NULL;
	if (n)
		tree_unlink(fs->tree, n);
	FS_UNLOCK(fs);
	fs__target_clear(&t);
	fuse_reply_err(req, 0);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs__of(req);
	struct fuse_entry_param e;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	int err = !dir ? ENOENT : tree_child(fs->tree, dir, name) ? EEXIST
				: fs__object_kind(dir, name) || fs__is_log(dir) ? EPERM : 0;
	if (err) {
		FS_UNLOCK(fs);
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
	(void)newparent;
	(void)newname;
	fuse_reply_err(req, EPERM);
}

static void fs__rename_run(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct fs *fs = fs__of(req);
	if (flags & RENAME_EXCHANGE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	struct node *ndir = tree_by_ino(fs->tree, newparent);
	struct node *n = dir ? tree_child(fs->tree, dir, name) : NULL;
	struct node *old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
	int e = 0;
	if (!n || !ndir)
		e = ENOENT;
	else if (old == n)
		e = 0;
	else if (old && (flags & RENAME_NOREPLACE))
		e = EEXIST;
	else if (S_ISDIR(n->mode) || (old && S_ISDIR(old->mode)))
		e = EPERM; /* namespaces and kind folders do not move */
	else if (fs__is_log(n) || fs__is_log(ndir) || (old && fs__is_log(old)))
		e = EPERM;
	else if (n->type == NODE_ERRORS || (old && old->type == NODE_ERRORS) ||
		 (dir->type == NODE_ROOT && strcmp(name, ".git") == 0) ||
		 (ndir->type == NODE_ROOT && strcmp(newname, ".git") == 0))
		e = EPERM;
	if (e || old == n) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, e);
		return;
	}
	const struct kind_info *to_kind = fs__object_kind(ndir, newname);
	uint64_t ino = n->ino;

	if (n->type == NODE_OBJECT && !n->pending) {
		if (to_kind) {
			/* Objects have no rename in Kubernetes: the name is
			 * inside the document. */
			cleanup_free char *path = fs__child_path(ndir, newname);
			FS_UNLOCK(fs);
			struct error er = {EINVAL, "an object cannot be renamed: its name is metadata.name; copy it to the new name and remove the old file"};
			fs__reject(fs, path, &er);
			fuse_reply_err(req, EINVAL);
			return;
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
		FS_LOCK_W(fs);
		n = tree_by_ino(fs->tree, ino);
		ndir = tree_by_ino(fs->tree, newparent);
		old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
		if (!n || !ndir || !n->parent) {
			FS_UNLOCK(fs);
			blob_unref(b);
			free(key);
			fuse_reply_err(req, ENOENT);
			return;
		}
		if (old) {
			atomic_fetch_sub(&fs->scratch_bytes, old->type == NODE_SCRATCH ? old->size : 0);
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
		fuse_reply_err(req, 0);
		return;
	}

	if (!to_kind) {
		/* Scratch to scratch: memory only; a drop box name is checked
		 * first, as a close would. */
		bool drop = fs__drop_name(ndir, newname) && n->type == NODE_SCRATCH;
		if (drop) {
			cleanup_free char *text = xstrndup(n->data ? n->data : "", n->size);
			size_t len = n->size;
			cleanup_free char *ns = ndir->type == NODE_NS ? xstrdup(ndir->ns) : NULL;
			cleanup_free char *path = fs__child_path(ndir, newname);
			FS_UNLOCK(fs);
			struct error *err = NULL;
			if (object_check_drop(ns, text, len, &err) < 0) {
				e = fs__errno(err);
				fs__reject(fs, path, err);
				error_free(err);
				fuse_reply_err(req, e);
				return;
			}
			FS_LOCK_W(fs);
			n = tree_by_ino(fs->tree, ino);
			ndir = tree_by_ino(fs->tree, newparent);
			old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
			if (!n || !n->parent || !ndir) {
				FS_UNLOCK(fs);
				fuse_reply_err(req, ENOENT);
				return;
			}
		}
		if (n->type == NODE_OBJECT) { /* a pending object leaves the object names */
			n->type = NODE_SCRATCH;
			n->pending = false;
		}
		n->drop = drop;
		if (old) {
			atomic_fetch_sub(&fs->scratch_bytes, old->type == NODE_SCRATCH ? old->size : 0);
			tree_unlink(fs->tree, old);
		}
		tree_move(fs->tree, n, ndir, newname);
		FS_UNLOCK(fs);
		fuse_reply_err(req, 0);
		return;
	}
	if (n->type == NODE_SYMLINK) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, EPERM);
		return;
	}

	/* A file renamed over an object name (sed -i, rsync, vim's or emacs'
	 * save): its bytes are the object's new text, taken whole now. */
	struct fs__target t = {0};
	fs__target_of(ndir, newname, &t);
	cleanup_free char *text = n->type == NODE_SCRATCH ? xstrndup(n->data ? n->data : "", n->size)
							  : NULL;
	size_t len = n->type == NODE_SCRATCH ? n->size : 0;
	FS_UNLOCK(fs);
	if (!text) {
		struct error *err = NULL;
		struct blob *b = fs__load(fs, ino, &err);
		error_free(err);
		text = xstrndup(b ? b->data : "", b ? b->len : 0);
		len = b ? b->len : 0;
		blob_unref(b);
	}
	cleanup_free char *author = fs__author(req, fs);
	struct error *err = NULL;
	struct blob *b = NULL;
	uint64_t rv = 0;
	int r = fs__store_object(fs, t.kind, t.ns, t.name, t.key, text, len, author, &b, &rv, &err);
	if (r < 0) {
		e = fs__errno(err);
		fs__reject(fs, t.path, err);
		error_free(err);
		fs__target_clear(&t);
		fuse_reply_err(req, e);
		return;
	}
	FS_LOCK_W(fs);
	n = tree_by_ino(fs->tree, ino);
	ndir = tree_by_ino(fs->tree, newparent);
	old = ndir ? tree_child(fs->tree, ndir, newname) : NULL;
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
		n->kind = t.kind;
		n->mode = fs__object_mode(t.kind);
		n->pending = true; /* so that set_content takes any rv */
		tree_move(fs->tree, n, ndir, newname);
		fs__set_content(n, b, rv);
		if (!t.ns && strcmp(t.kind->kind, "Namespace") == 0)
			fs__add_namespace(fs, t.name);
	} else {
		blob_unref(b);
	}
	FS_UNLOCK(fs);
	fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	fs__target_clear(&t);
	fuse_reply_err(req, 0);
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
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* The open writers of an object, so that the truncation of open(O_TRUNC)
 * (which the kernel sends without naming the handle) reaches them. Tree
 * lock held for writing. */
static void fs__writer_add(struct node *n, struct fs__handle *h)
{
	h->fresh = true;
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

/* Sets up the handle of an open object: a snapshot to read, or the text
 * to edit. */
static int fs__open_object(struct fs *fs, uint64_t ino, int flags, struct fs__handle *h)
{
	h->write = (flags & O_ACCMODE) != O_RDONLY;
	if (h->write && (flags & O_TRUNC))
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

static void fs__opened(struct fs *fs, uint64_t ino)
{
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (n)
		n->open_count++;
	FS_UNLOCK(fs);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
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
		FS_UNLOCK(fs);
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
	n->open_count++;
	FS_UNLOCK(fs);

	struct fs__handle *h = fs__handle_new();
	int e = 0;
	if (type == NODE_OBJECT) {
		e = fs__open_object(fs, ino, fi->flags, h);
		if (!e && h->write) {
			FS_LOCK_W(fs);
			n = tree_by_ino(fs->tree, ino);
			if (n)
				fs__writer_add(n, h);
			FS_UNLOCK(fs);
		}
		/* No page cache for objects: a writer's bytes (and the size
		 * the kernel keeps for them) would reach other readers through
		 * it, and a reader's snapshot is the only version it may see. */
		fi->direct_io = 1;
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
		n = tree_by_ino(fs->tree, ino);
		cleanup_free char *source = n && n->source ? xstrdup(n->source) : NULL;
		FS_UNLOCK(fs);
		h->fd = source ? open(source, O_RDONLY | O_CLOEXEC) : -1;
		if (h->fd < 0)
			e = source ? errno : ENOENT;
		fi->direct_io = 1; /* it grows behind the kernel's back */
	}
	if (e) {
		fs__handle_free(h);
		FS_LOCK_W(fs);
		n = tree_by_ino(fs->tree, ino);
		if (n)
			n->open_count--;
		FS_UNLOCK(fs);
		fuse_reply_err(req, e);
		return;
	}
	/* Only a handle that writes an object has anything to do at close:
	 * spare the kernel's flush round trip for all the others. */
	fi->noflush = !(type == NODE_OBJECT && h->write) && !(type == NODE_SCRATCH && writing);
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* The opener was interrupted: no release will come. */
		FS_LOCK_W(fs);
		n = tree_by_ino(fs->tree, ino);
		if (n) {
			n->open_count--;
			if (h->write)
				fs__writer_del(n, h);
		}
		FS_UNLOCK(fs);
		fs__handle_free(h);
	}
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e;
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
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
		fs__entry(n, &e);
		FS_UNLOCK(fs);
		struct fs__handle *h = fs__handle_new();
		if (n->type == NODE_OBJECT) {
			fs__open_object(fs, ino, fi->flags, h);
			h->dirty = h->write && (fi->flags & O_TRUNC);
			h->append = h->write && (fi->flags & O_APPEND);
			fi->direct_io = h->write;
			if (h->write) {
				FS_LOCK_W(fs);
				struct node *cn = tree_by_ino(fs->tree, ino);
				if (cn)
					fs__writer_add(cn, h);
				FS_UNLOCK(fs);
			}
		}
		fs__opened(fs, ino);
		fi->fh = (uint64_t)(uintptr_t)h;
		fuse_reply_create(req, &e, fi);
		return;
	}
	const struct kind_info *k = fs__object_kind(dir, name);
	if (fs__is_log(dir) ||
	    (!k && (dir->type == NODE_ROOT && (strcmp(name, ".errors") == 0 || strcmp(name, ".git") == 0)))) {
		FS_UNLOCK(fs);
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
	n->open_count++;
	fs__entry(n, &e);
	struct fs__handle *h = fs__handle_new();
	if (k)
		fs__writer_add(n, h);
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
	if (h->fd >= 0) {
		cleanup_free char *buf = xmalloc(size ? size : 1);
		ssize_t r = pread(h->fd, buf, size, off);
		if (r < 0)
			fuse_reply_err(req, errno);
		else
			fuse_reply_buf(req, buf, (size_t)r);
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
	size_t end = (size_t)off + size;
	if (h->write) {
		if (end > OBJECT_MAX_BYTES) {
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
		FS_LOCK_W(fs);
		struct node *n = tree_by_ino(fs->tree, ino);
		if (n && n->pending)
			n->size = len;
		FS_UNLOCK(fs);
		fuse_reply_write(req, size);
		return;
	}
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	int e = 0;
	if (!n || n->type != NODE_SCRATCH)
		e = EBADF;
	else if (end > FS_SCRATCH_FILE_MAX)
		e = EFBIG;
	else if (end > n->size &&
		 atomic_load(&fs->scratch_bytes) + (end - n->size) > FS_SCRATCH_TOTAL_MAX)
		e = ENOSPC;
	if (e) {
		FS_UNLOCK(fs);
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

/* Commits a dirty write handle. Returns 0 or an errno. */
static int fs__commit_handle(fuse_req_t req, struct fs *fs, uint64_t ino, struct fs__handle *h)
{
	pthread_mutex_lock(&h->lock);
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
	cleanup_free char *text = xstrndup(h->buf, h->len);
	size_t len = h->len;
	h->dirty = false;
	pthread_mutex_unlock(&h->lock);
	return fs__commit_node(req, fs, ino, text, len);
}

/* A drop box file written and closed: refused whole if any document is
 * bad, so that corral-ctrl only ever sees files it can file. */
static int fs__check_drop(struct fs *fs, uint64_t ino)
{
	FS_LOCK_R(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || !n->drop || !n->parent) {
		FS_UNLOCK(fs);
		return 0;
	}
	cleanup_free char *text = xstrndup(n->data ? n->data : "", n->size);
	size_t len = n->size;
	cleanup_free char *ns = n->parent->type == NODE_NS ? xstrdup(n->parent->ns) : NULL;
	cleanup_free char *path = fs__path(n);
	FS_UNLOCK(fs);
	if (len == 0)
		return 0; /* a shell's first close of its redirection */
	struct error *err = NULL;
	if (object_check_drop(ns, text, len, &err) == 0)
		return 0;
	int e = fs__errno(err);
	fs__reject(fs, path, err);
	error_free(err);
	/* A refused drop box file is not kept. */
	uint64_t dir_ino = 0;
	cleanup_free char *name = NULL;
	FS_LOCK_W(fs);
	n = tree_by_ino(fs->tree, ino);
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

static void fs__flush_run(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	if (h->wrote) {
		h->wrote = false;
		fuse_reply_err(req, fs__check_drop(fs, ino));
		return;
	}
	fuse_reply_err(req, fs__commit_handle(req, fs, ino, h));
}

static void fs__fsync_run(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	/* Stored objects are durable already; a pending edit is committed. */
	fuse_reply_err(req, fs__commit_handle(req, fs, ino, h));
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	struct fs__handle *h = (struct fs__handle *)(uintptr_t)fi->fh;
	bool empty_write = h->write && h->dirty && h->len == 0;
	if (h->write) {
		FS_LOCK_W(fs);
		struct node *wn = tree_by_ino(fs->tree, ino);
		if (wn)
			fs__writer_del(wn, h);
		FS_UNLOCK(fs);
	}
	fs__handle_free(h);
	uint64_t dir_ino = 0;
	cleanup_free char *gone = NULL;
	cleanup_free char *path = NULL;
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (n) {
		n->open_count--;
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
	if (path) {
		struct error e = {EINVAL, "an empty write was ignored: the object is unchanged (rm deletes an object)"};
		fs__reject(fs, path, &e);
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	}
	if (gone)
		fs__inval_later(fs, dir_ino, gone);
	fuse_reply_err(req, 0);
}

/* ---- folders ---- */

static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs__of(req);
	fs__logs_refresh(fs, ino); /* does nothing for other folders */
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (!n || !S_ISDIR(n->mode)) {
		FS_UNLOCK(fs);
		fuse_reply_err(req, n ? ENOTDIR : ENOENT);
		return;
	}
	if (n->type == NODE_NS && n->parent)
		fs__ensure_kinds(fs, n);
	struct fs__dir *d = xcalloc(1, sizeof(*d));
	d->ents = xcalloc(n->nkids + 2, sizeof(*d->ents));
	d->ents[0] = (struct fs__dirent){n->ino, S_IFDIR, xstrdup(".")};
	d->ents[1] = (struct fs__dirent){n->parent ? n->parent->ino : n->ino, S_IFDIR, xstrdup("..")};
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
				e.entry_timeout = fs__is_log(n) ? 1.0 : FS_TTL;
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
	 * a setattr on the writer's handle, which only its buffer sees. */
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

/* ---- the workers ---- */

static void fs__queue(struct fs *fs, struct fs__job *job)
{
	pthread_mutex_lock(&fs->jobs_lock);
	job->next = NULL;
	*fs->jobs_tail = job;
	fs->jobs_tail = &job->next;
	pthread_cond_signal(&fs->jobs_cond);
	pthread_mutex_unlock(&fs->jobs_lock);
}

static void fs__run(struct fs__job *j)
{
	struct fuse_file_info *fi = j->has_fi ? &j->fi : NULL;
	switch (j->op) {
	case FS_OP_SETATTR:
		fs__setattr_run(j->req, j->ino, &j->attr, j->to_set, fi);
		break;
	case FS_OP_MKDIR:
		fs__mkdir_run(j->req, j->ino, j->name, j->mode);
		break;
	case FS_OP_RMDIR:
		fs__rmdir_run(j->req, j->ino, j->name);
		break;
	case FS_OP_UNLINK:
		fs__unlink_run(j->req, j->ino, j->name);
		break;
	case FS_OP_RENAME:
		fs__rename_run(j->req, j->ino, j->name, j->newparent, j->newname, j->flags);
		break;
	case FS_OP_FLUSH:
		fs__flush_run(j->req, j->ino, fi);
		break;
	case FS_OP_FSYNC:
		fs__fsync_run(j->req, j->ino, j->datasync, fi);
		break;
	}
}

static void *fs__worker(void *arg)
{
	struct fs *fs = arg;
	pthread_mutex_lock(&fs->jobs_lock);
	for (;;) {
		while (!fs->jobs_head && !fs->stopping)
			pthread_cond_wait(&fs->jobs_cond, &fs->jobs_lock);
		if (!fs->jobs_head)
			break;
		struct fs__job *j = fs->jobs_head;
		fs->jobs_head = j->next;
		if (!fs->jobs_head)
			fs->jobs_tail = &fs->jobs_head;
		pthread_mutex_unlock(&fs->jobs_lock);
		fs__run(j);
		free(j->name);
		free(j->newname);
		free(j);
		pthread_mutex_lock(&fs->jobs_lock);
	}
	pthread_mutex_unlock(&fs->jobs_lock);
	return NULL;
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

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	if (!(to_set & FUSE_SET_ATTR_SIZE)) {
		fs__setattr_run(req, ino, attr, to_set, fi);
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
	bool pending = h->write && h->dirty && h->len > 0;
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
};

const struct fuse_lowlevel_ops *fs_ops(void)
{
	return &fs__ops;
}

/* ---- setting up ---- */

struct fs *fs_new(struct store *store, const char *gitdir)
{
	struct fs *fs = xcalloc(1, sizeof(*fs));
	fs->tree = tree_new();
	fs->store = store;
	fs->gitdir = xstrdup(gitdir);
	fs->log_dir = xstrdup("/var/log/pods");
	struct servicerange range;
	servicerange_parse(SERVICERANGE_DEFAULT_CIDR, &range, NULL);
	fs->services = svcindex_new(&range);
	if (gethostname(fs->hostname, sizeof(fs->hostname) - 1) < 0)
		strcpy(fs->hostname, "localhost");
	pthread_mutex_init(&fs->errors_lock, NULL);
	pthread_mutex_init(&fs->inval_lock, NULL);
	pthread_cond_init(&fs->inval_cond, NULL);
	pthread_mutex_init(&fs->jobs_lock, NULL);
	pthread_cond_init(&fs->jobs_cond, NULL);
	fs->jobs_tail = &fs->jobs_head;
	return fs;
}

/* Splits a store key into where its node goes. */
static int fs__load_one(void *data, const char *key, const struct store_record *rec)
{
	struct fs *fs = data;
	struct node *root = tree_root(fs->tree);
	struct node *dir = NULL;
	cleanup_free char *copy = xstrdup(key);
	char *parts[5];
	size_t n = 0;
	for (char *save = NULL, *p = strtok_r(copy, "/", &save); p && n < 5;
	     p = strtok_r(NULL, "/", &save))
		parts[n++] = p;
	const char *name = NULL;
	if (n == 2 && strcmp(parts[0], "namespaces") == 0) {
		fs__add_namespace(fs, parts[1]);
		dir = tree_child(fs->tree, root, "namespaces");
		name = parts[1];
	} else if (n == 4 && strcmp(parts[0], "namespaces") == 0) {
		struct node *nsdir = fs__add_namespace(fs, parts[1]);
		dir = tree_child(fs->tree, nsdir, parts[2]);
		name = parts[3];
	} else if (n == 2) {
		dir = tree_child(fs->tree, root, parts[0]);
		name = parts[1];
	}
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

/* Every stored Service's addresses and ports into the index, at start
 * (the load above reads no text). */
static int fs__services_index(struct fs *fs, struct error **err)
{
	struct node *nsroot = tree_child(fs->tree, tree_root(fs->tree), "namespaces");
	size_t count = 0;
	for (struct node *ns = nsroot ? nsroot->first : NULL; ns; ns = ns->next) {
		struct node *dir = ns->type == NODE_NS ? tree_child(fs->tree, ns, "services") : NULL;
		for (struct node *o = dir ? dir->first : NULL; o; o = o->next) {
			if (o->type != NODE_OBJECT)
				continue;
			cleanup_free char *name = fs__base(o->name);
			cleanup_free char *key = xasprintf("namespaces/%s/services/%s", ns->name, name);
			struct store_record rec = {0};
			int r = store_get(fs->store, key, &rec, err);
			if (r < 0)
				return r;
			fs__services_note(fs, ns->name, name, rec.yaml, rec.len, true);
			store_record_clear(&rec);
			count++;
		}
	}
	if (count)
		log_info("%zu services hold their addresses and node ports", count);
	return 0;
}

int fs_load(struct fs *fs, struct error **err)
{
	struct node *root = tree_root(fs->tree);
	struct node *nsroot = tree_add(fs->tree, root, "namespaces", NODE_NSROOT, S_IFDIR | 0755);
	nsroot->kind = kinds_by_kind("Namespace");
	for (size_t i = 0; i < kinds_count(); i++) {
		const struct kind_info *k = kinds_at(i);
		if (k->namespaced || strcmp(k->kind, "Namespace") == 0)
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
			cleanup_free char *text = xasprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n",
							    defaults[i]);
			cleanup_free char *key = xasprintf("namespaces/%s", defaults[i]);
			struct blob *b = NULL;
			uint64_t rv;
			int r = fs__store_object(fs, nsroot->kind, NULL, defaults[i], key, text,
						 strlen(text), "corral <corral@localhost>", &b, &rv, err);
			if (r < 0)
				return r;
			blob_unref(b);
		}
	}
	int r = store_foreach(fs->store, false, fs__load_one, fs, err);
	return r < 0 ? r : fs__services_index(fs, err);
}

void fs_set_service_range(struct fs *fs, const struct servicerange *range)
{
	svcindex_free(fs->services);
	fs->services = svcindex_new(range);
}

void fs_set_log_dir(struct fs *fs, const char *dir)
{
	free(fs->log_dir);
	fs->log_dir = xstrdup(dir);
}

int fs_start(struct fs *fs, struct fuse_session *se, struct error **err)
{
	fs->se = se;
	int rc = pthread_create(&fs->notifier, NULL, fs__notifier, fs);
	if (rc != 0)
		return error_set(err, rc, "cannot start the notifier: %s", strerror(rc));
	fs->notifier_started = true;
	for (; fs->nworkers < FS_WORKERS; fs->nworkers++) {
		rc = pthread_create(&fs->workers[fs->nworkers], NULL, fs__worker, fs);
		if (rc != 0)
			return error_set(err, rc, "cannot start a worker: %s", strerror(rc));
	}
	return 0;
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	if (fs->notifier_started) {
		pthread_mutex_lock(&fs->inval_lock);
		fs->stopping = true;
		pthread_cond_signal(&fs->inval_cond);
		pthread_mutex_unlock(&fs->inval_lock);
		pthread_join(fs->notifier, NULL);
	}
	pthread_mutex_lock(&fs->jobs_lock);
	fs->stopping = true;
	pthread_cond_broadcast(&fs->jobs_cond);
	pthread_mutex_unlock(&fs->jobs_lock);
	for (size_t i = 0; i < fs->nworkers; i++)
		pthread_join(fs->workers[i], NULL);
	while (fs->inval_head) {
		struct fs__inval *n = fs->inval_head->next;
		free(fs->inval_head->name);
		free(fs->inval_head);
		fs->inval_head = n;
	}
	for (size_t i = 0; i < FS_ERRORS_MAX; i++)
		free(fs->errors[i]);
	svcindex_free(fs->services);
	tree_free(fs->tree);
	free(fs->author);
	free(fs->gitdir);
	free(fs->log_dir);
	pthread_mutex_destroy(&fs->errors_lock);
	pthread_mutex_destroy(&fs->inval_lock);
	pthread_cond_destroy(&fs->inval_cond);
	pthread_mutex_destroy(&fs->jobs_lock);
	pthread_cond_destroy(&fs->jobs_cond);
	free(fs);
}

/* ---- restore ---- */

struct fs__restore {
	struct store *store;
	size_t restored, skipped;
};

static int fs__restore_one(void *data, const char *path, const char *yaml, size_t len)
{
	struct fs__restore *rs = data;
	if (!fs__ends_with(path, ".yaml"))
		return 0;
	cleanup_free char *key = xstrndup(path, strlen(path) - 5);
	cleanup_free char *copy = xstrdup(key);
	char *parts[5];
	size_t n = 0;
	for (char *save = NULL, *p = strtok_r(copy, "/", &save); p && n < 5;
	     p = strtok_r(NULL, "/", &save))
		parts[n++] = p;
	const struct kind_info *k = NULL;
	const char *ns = NULL, *name = NULL;
	if (n == 2 && strcmp(parts[0], "namespaces") == 0)
		k = kinds_by_kind("Namespace"), name = parts[1];
	else if (n == 4 && strcmp(parts[0], "namespaces") == 0)
		k = kinds_by_plural(parts[2]), ns = parts[1], name = parts[3];
	else if (n == 2)
		k = kinds_by_plural(parts[0]), name = parts[1];
	if (!k || (ns && !k->namespaced)) {
		rs->skipped++;
		return 0;
	}
	struct object_build b = {.kind = k, .ns = ns, .name = name, .text = yaml, .len = len};
	struct error *err = NULL;
	if (object_build(&b, &err) < 0) {
		log_warn("restore: %s: %s", path, err->msg);
		error_free(err);
		rs->skipped++;
		return 0;
	}
	/* Already in the history: not queued again. */
	struct store_change c = {.key = key, .obj = b.obj, .decl_changed = true};
	int r = store_apply(rs->store, &c, &err);
	free(c.yaml);
	object_build_clear(&b);
	if (r < 0) {
		log_warn("restore: %s: %s", path, err ? err->msg : "?");
		error_free(err);
		rs->skipped++;
		return 0;
	}
	rs->restored++;
	return 0;
}

int fs_restore(struct store *store, struct history *h, struct error **err)
{
	if (!store_is_empty(store))
		return error_set(err, EEXIST, "restore: the live store is not empty; move it away first");
	struct fs__restore rs = {.store = store};
	/* Revisions go on from the history's, or new changes would look old
	 * to the history writer. */
	int r = store_raise_revision(store, history_revision(h), err);
	if (r < 0)
		return r;
	r = history_foreach_head(h, fs__restore_one, &rs, err);
	if (r < 0)
		return r;
	log_info("restore: %zu objects from the history, %zu skipped", rs.restored, rs.skipped);
	return 0;
}
