/* remote.c: other writers' changes, applied to the tree and replayed
 * through the mount (remote.h says why and what it costs). Runs on the
 * store's watch thread; never holds the tree lock across a system call on
 * the mount, which this daemon itself serves. */
#include "remote.h"
#include "kinds.h"
#include "log.h"
#include "namespace.h"
#include "strmap.h"
#include "treepath.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct remote {
	char *mountpoint;      /* absolute; every replay resolves its path afresh,
				  so that no descriptor keeps the mount busy */
	atomic_int tid;	       /* the watch thread, whose requests are replays */
	struct strmap *relist; /* during a relist, the keys it named */
};

bool remote_replaying(struct fs *fs, fuse_req_t req)
{
	return fs->remote && fuse_req_ctx(req)->pid == atomic_load(&fs->remote->tid);
}

int remote_mkdir(struct fs *fs, fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	int r = 0;
	if (!dir || dir->type != NODE_NSROOT)
		r = EPERM;
	else
		fs__entry(namespace_add(fs, name), e);
	FS_UNLOCK(fs);
	return r;
}

/* The folder a key's node goes in (made if it is a namespace's); write
 * lock. *new_ns: a Namespace whose folder is not there yet. */
static struct node *remote__dir(struct fs *fs, const struct treepath *tp, bool *new_ns)
{
	struct node *root = tree_root(fs->tree);
	struct node *nsroot = tree_child(fs->tree, root, "namespaces");
	*new_ns = false;
	if (tp->ns) {
		struct node *nsdir = tree_child(fs->tree, nsroot, tp->ns);
		if (!nsdir)
			nsdir = namespace_add(fs, tp->ns); /* its Namespace comes later */
		else
			namespace_ensure_kinds(fs, nsdir);
		return tree_child(fs->tree, nsdir, tp->plural);
	}
	struct node *dir = tree_child(fs->tree, root, tp->plural);
	if (dir && dir->type == NODE_NSROOT)
		*new_ns = !tree_child(fs->tree, dir, tp->name);
	return dir;
}

/* Another host's put of an object (remote__set_text). */
struct remote__change {
	const struct store_record *rec;
	int replay; /* set: the tree took it */
};

/* Sets object ino's text to the put's when it is newer;
 * fs__replace_text's change. */
static int remote__set_text(struct fs *fs, uint64_t ino, void *data)
{
	struct remote__change *c = data;
	const struct store_record *rec = c->rec;
	FS_LOCK_W(fs);
	struct node *n = tree_by_ino(fs->tree, ino);
	if (n && !n->pending && n->rv < rec->rv) {
		fs__set_content(n, blob_new(rec->yaml, rec->len), rec->rv);
		n->mtime.tv_sec = rec->mtime_ns / 1000000000;
		n->mtime.tv_nsec = rec->mtime_ns % 1000000000;
		n->ctime = n->mtime;
		c->replay = 1;
	}
	FS_UNLOCK(fs);
	return 0;
}

/* Another host's change of the object at tp (rec NULL: deleted), to the
 * admission hooks that follow other hosts' changes (the quotas' charges,
 * the LimitRanges: a namespace's, both), so that this host admits on what
 * the cluster holds. */
static void remote__admission(struct fs *fs, const struct treepath *tp,
			      const struct store_record *rec)
{
	const struct kind_info *kind = tp->ns && tp->plural ? kinds_by_plural(tp->plural) : NULL;
	if (!kind || !tp->name || !admission_wants_follow(fs->admission, kind))
		return;
	cleanup_ynode struct ynode *obj = NULL;
	if (rec && yaml_parse_one(rec->yaml, rec->len, &obj, NULL) < 0)
		return;
	cleanup_free char *owner = xasprintf("%s/%s", tp->ns, tp->name);
	struct admission_request rq = {
	    .kind = kind, .ns = tp->ns, .name = tp->name, .owner = owner, .obj = obj};
	admission_follow(fs->admission, &rq);
}

/* Applies a put to the tree: 1 when the file must be replayed, 0 when the
 * tree has it already. */
static int remote__put(struct fs *fs, const char *key, const struct store_record *rec, bool *new_ns)
{
	struct treepath tp = {0};
	if (treepath_parse_key(key, &tp, NULL) < 0)
		return 0;
	remote__admission(fs, &tp, rec);
	cleanup_free char *fname = xasprintf("%s.yaml", tp.name);
	uint64_t ino = 0;
	FS_LOCK_W(fs);
	struct node *dir = remote__dir(fs, &tp, new_ns);
	struct node *n = dir ? tree_child(fs->tree, dir, fname) : NULL;
	if (dir && (dir->type == NODE_KIND || dir->type == NODE_NSROOT) && !n) {
		n = tree_add(fs->tree, dir, fname, NODE_OBJECT, fs__object_mode(dir->kind));
		n->kind = dir->kind;
		n->rv = 0;
	}
	/* A file a local writer is creating is left to it: its commit
	 * conflicts and then shows what is stored. */
	if (n && n->type == NODE_OBJECT && !n->pending && n->rv < rec->rv)
		ino = n->ino;
	FS_UNLOCK(fs);
	if (!ino) {
		treepath_clear(&tp);
		return 0;
	}
	/* The text changes as a local writer's commit changes it: after the
	 * readers that read it through the page cache have closed. */
	struct remote__change c = {rec, 0};
	fs__replace_text(fs, ino, false, remote__set_text, &c);
	treepath_clear(&tp);
	return c.replay;
}

static void remote__replay_put(struct fs *fs, const char *key, bool new_ns)
{
	struct remote *rm = fs->remote;
	if (new_ns) {
		cleanup_free char *dir = xasprintf("%s/%s", rm->mountpoint, key);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			log_debug("remote: mkdir %s: %s", dir, strerror(errno));
	}
	cleanup_free char *path = xasprintf("%s/%s.yaml", rm->mountpoint, key);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		log_debug("remote: open %s: %s", path, strerror(errno));
		return;
	}
	close(fd);
}

static void remote__delete(struct fs *fs, const char *key, uint64_t rv)
{
	struct treepath tp = {0};
	if (treepath_parse_key(key, &tp, NULL) < 0)
		return;
	remote__admission(fs, &tp, NULL);
	cleanup_free char *fname = xasprintf("%s.yaml", tp.name);
	bool ns_object = false;
	FS_LOCK_R(fs);
	struct node *root = tree_root(fs->tree);
	struct node *dir = NULL;
	if (tp.ns) {
		struct node *nsdir =
		    tree_child(fs->tree, tree_child(fs->tree, root, "namespaces"), tp.ns);
		dir = nsdir ? tree_child(fs->tree, nsdir, tp.plural) : NULL;
	} else {
		dir = tree_child(fs->tree, root, tp.plural);
		ns_object = dir && dir->type == NODE_NSROOT;
	}
	struct node *n = dir ? tree_child(fs->tree, dir, fname) : NULL;
	bool there = n && n->type == NODE_OBJECT && n->rv < rv;
	FS_UNLOCK(fs);
	cleanup_free char *path = xasprintf("%s/%s.yaml", fs->remote->mountpoint, key);
	if (there && unlink(path) < 0)
		log_debug("remote: unlink %s: %s", path, strerror(errno));
	if (ns_object)
		namespace_forget(fs, tp.name);
	treepath_clear(&tp);
}

/* The object keys of folder d's files that a relist did not name; read
 * lock. */
static void remote__unnamed(struct remote *rm, const struct node *d, uint64_t rv, char ***gone,
			    size_t *n)
{
	for (struct node *o = d->first; o; o = o->next) {
		if (o->type != NODE_OBJECT || o->pending || o->rv > rv)
			continue;
		char *key = tree_object_key(o);
		if (strmap_has(rm->relist, key)) {
			free(key);
			continue;
		}
		*gone = xrealloc(*gone, sizeof(**gone) * (*n + 1));
		(*gone)[(*n)++] = key;
	}
}

/* The end of a relist at revision rv: every object it did not name is
 * gone. */
static void remote__relisted(struct fs *fs, uint64_t rv)
{
	struct remote *rm = fs->remote;
	size_t n = 0;
	char **gone = NULL;
	FS_LOCK_R(fs);
	for (struct node *d = tree_root(fs->tree)->first; d; d = d->next) {
		remote__unnamed(rm, d, rv, &gone, &n);
		for (struct node *x = d->type == NODE_NSROOT ? d->first : NULL; x; x = x->next)
			for (struct node *k = x->type == NODE_NS ? x->first : NULL; k; k = k->next)
				remote__unnamed(rm, k, rv, &gone, &n);
	}
	FS_UNLOCK(fs);
	for (size_t i = 0; i < n; i++) {
		remote__delete(fs, gone[i], rv + 1);
		free(gone[i]);
	}
	free(gone);
	strmap_free(rm->relist, NULL);
	rm->relist = NULL;
}

static void remote__change(void *data, const char *key, const struct store_record *rec, uint64_t rv)
{
	struct fs *fs = data;
	struct remote *rm = fs->remote;
	atomic_store(&rm->tid, (int)gettid());
	if (!key && rv == 0) {
		strmap_free(rm->relist, NULL);
		rm->relist = strmap_new();
		return;
	}
	if (!key) {
		if (rm->relist)
			remote__relisted(fs, rv);
		return;
	}
	if (!rec) {
		remote__delete(fs, key, rv);
		return;
	}
	if (rm->relist)
		strmap_set(rm->relist, key, NULL);
	bool new_ns = false;
	if (remote__put(fs, key, rec, &new_ns) > 0 || new_ns)
		remote__replay_put(fs, key, new_ns);
}

int remote_start(struct fs *fs, const char *mountpoint, struct error **err)
{
	if (!store_shared(fs->store))
		return 0;
	struct remote *rm = xcalloc(1, sizeof(*rm));
	rm->mountpoint = realpath(mountpoint, NULL);
	if (!rm->mountpoint) {
		int e = errno;
		free(rm);
		return error_set(err, e, "remote: %s: %s", mountpoint, strerror(e));
	}
	rm->tid = -1;
	fs->remote = rm;
	return store_watch(fs->store, remote__change, fs, err);
}

void remote_stop(struct fs *fs)
{
	struct remote *rm = fs->remote;
	if (!rm)
		return;
	store_unwatch(fs->store);
	strmap_free(rm->relist, NULL);
	free(rm->mountpoint);
	free(rm);
	fs->remote = NULL;
}
