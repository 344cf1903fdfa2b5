/* namespace.c: see namespace.h. */
#include "namespace.h"
#include "finalizers.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The kinds whose objects controllers delete when their owner goes come
 * first in a namespace's folder: rm -r, which walks it in that order,
 * then removes them before their owners, and so never meets a file that
 * a controller removed after rm had listed it (an Endpoints of a Service
 * rm removed a moment before, a Deployment's ReplicaSets and pods). */
static const char *namespace__first[] = {
    "events", "endpoints", "pods", "controllerrevisions", "replicasets", "jobs",
};

static void namespace__add_kind(struct fs *fs, struct node *nsdir, const struct kind_info *k)
{
	if (!k || !k->namespaced || tree_child(fs->tree, nsdir, k->plural))
		return;
	struct node *d = tree_add(fs->tree, nsdir, k->plural, NODE_KIND, S_IFDIR | 0755);
	d->kind = k;
}

void namespace_ensure_kinds(struct fs *fs, struct node *nsdir)
{
	for (size_t i = 0; i < ARRAY_SIZE(namespace__first); i++)
		namespace__add_kind(fs, nsdir, kinds_by_plural(namespace__first[i]));
	for (size_t i = 0; i < kinds_count(); i++)
		namespace__add_kind(fs, nsdir, kinds_at(i));
	if (!tree_child(fs->tree, nsdir, "logs"))
		tree_add(fs->tree, nsdir, "logs", NODE_LOGS, S_IFDIR | 0555);
}

struct node *namespace_add(struct fs *fs, const char *name)
{
	struct node *nsroot = tree_child(fs->tree, tree_root(fs->tree), "namespaces");
	struct node *d = tree_child(fs->tree, nsroot, name);
	if (!d) {
		d = tree_add(fs->tree, nsroot, name, NODE_NS, S_IFDIR | 0755);
		d->ns = xstrdup(name);
	}
	namespace_ensure_kinds(fs, d);
	return d;
}

/* The kind of namespaces/<name>.yaml. */
static const struct kind_info *namespace__kind(struct fs *fs)
{
	return tree_child(fs->tree, tree_root(fs->tree), "namespaces")->kind;
}

int namespace_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	struct fs *fs = fuse_req_userdata(req);
	FS_LOCK_W(fs);
	struct node *dir = tree_by_ino(fs->tree, parent);
	if (!dir) {
		FS_UNLOCK(fs);
		return ENOENT;
	}
	if (tree_child(fs->tree, dir, name)) {
		FS_UNLOCK(fs);
		return EEXIST;
	}
	if (dir->type == NODE_NS) {
		const struct kind_info *k = kinds_by_plural(name);
		if (k && k->namespaced) {
			namespace_ensure_kinds(fs, dir);
			fs__entry(tree_child(fs->tree, dir, name), e);
			FS_UNLOCK(fs);
			return 0;
		}
	}
	if (dir->type != NODE_NSROOT) {
		FS_UNLOCK(fs);
		return EPERM;
	}
	const struct kind_info *k = namespace__kind(fs);
	FS_UNLOCK(fs);

	/* mkdir namespaces/NAME declares the Namespace NAME. */
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: '%s'\n", name);
	cleanup_free char *key = xasprintf("namespaces/%s", name);
	cleanup_free char *author = fs__author(req, fs);
	struct write_target t = {.kind = k, .name = name, .key = key};
	struct error *err = NULL;
	struct blob *b = NULL;
	uint64_t rv = 0;
	struct store_record rec = {0};
	if (store_get(fs->store, key, &rec, NULL) == 0) {
		/* Declared already (by a Namespace file): just the folder. */
		b = blob_new(rec.yaml, rec.len);
		rv = rec.rv;
		store_record_clear(&rec);
	} else if (fs__write(fs, &t, text, strlen(text), author, &b, &rv, &err) < 0) {
		int ec = fs__errno(err);
		fs__reject(fs, key, err);
		error_free(err);
		return ec;
	}
	cleanup_free char *fname = xasprintf("%s.yaml", name);
	dir = fs__relock(fs, parent);
	struct node *obj = tree_child(fs->tree, dir, fname);
	if (!obj) {
		obj = tree_add(fs->tree, dir, fname, NODE_OBJECT, fs__object_mode(k));
		obj->kind = k;
	}
	fs__set_content(obj, b, rv);
	struct node *nsdir = namespace_add(fs, name);
	fs__entry(nsdir, e);
	FS_UNLOCK(fs);
	return 0;
}

/* Whether a namespace folder holds an object (or a file being written). */
static bool namespace__busy(const struct node *nsdir)
{
	for (const struct node *c = nsdir->first; c; c = c->next)
		if ((c->type != NODE_KIND && c->type != NODE_LOGS) ||
		    (c->type == NODE_KIND && c->nkids > 0))
			return true;
	return false;
}

/* The namespaces Kubernetes keeps whatever happens (NamespaceLifecycle's
 * immortal namespaces). */
bool namespace_protected(const char *name)
{
	return strcmp(name, "default") == 0 || strcmp(name, "kube-system") == 0 ||
	       strcmp(name, "kube-public") == 0 || strcmp(name, "kube-node-lease") == 0;
}

void namespace_forget(struct fs *fs, const char *name)
{
	cleanup_free char *fname = xasprintf("%s.yaml", name);
	FS_LOCK_W(fs);
	struct node *nsroot = tree_child(fs->tree, tree_root(fs->tree), "namespaces");
	struct node *nsdir = nsroot ? tree_child(fs->tree, nsroot, name) : NULL;
	uint64_t root_ino = nsroot ? nsroot->ino : 0;
	bool had_dir = nsdir != NULL, had_obj = false;
	if (nsdir) {
		while (nsdir->first)
			tree_unlink(fs->tree, nsdir->first);
		tree_unlink(fs->tree, nsdir);
	}
	struct node *obj = nsroot ? tree_child(fs->tree, nsroot, fname) : NULL;
	if (obj) {
		tree_unlink(fs->tree, obj);
		had_obj = true;
	}
	FS_UNLOCK(fs);
	if (had_dir)
		notifier_inval_entry(fs->notifier, root_ino, name);
	if (had_obj)
		notifier_inval_entry(fs->notifier, root_ino, fname);
}

/* A successful rmdir makes the kernel take the folder's inode for dead
 * (nothing can be listed or made in it again): a folder that rmdir leaves
 * in place gets a new node, with a new inode number, that takes over what
 * the old one held. Write lock. */
static void namespace__renew(struct fs *fs, struct node *d)
{
	struct node *dir = d->parent;
	cleanup_free char *name = xstrdup(d->name);
	cleanup_free char *tmp = xasprintf(".renew-%llu", (unsigned long long)d->ino);
	tree_move(fs->tree, d, dir, tmp);
	struct node *nd = tree_add(fs->tree, dir, name, d->type, d->mode);
	nd->kind = d->kind;
	if (!nd->ns && d->ns) /* tree_add gives a namespace's children theirs */
		nd->ns = xstrdup(d->ns);
	while (d->first) {
		struct node *c = d->first;
		cleanup_free char *cname = xstrdup(c->name);
		tree_move(fs->tree, c, nd, cname);
	}
	tree_unlink(fs->tree, d);
}

int namespace_rmdir_kind(struct fs *fs, struct node *kdir)
{
	if (kdir->nkids == 0)
		tree_unlink(fs->tree, kdir);
	else
		namespace__renew(fs, kdir);
	return 0;
}

/* A namespace turning Terminating (namespace__show_terminating). */
struct namespace__terminating {
	uint64_t nsroot_ino;
	const char *name, *fname, *key;
	bool rmdir;
};

/* Its Namespace file (node ino, 0: none) shows what is stored, and an
 * rmdir renews its folder; fs__replace_text's change. */
static int namespace__show_terminating(struct fs *fs, uint64_t ino, void *data)
{
	const struct namespace__terminating *c = data;
	struct store_record rec = {0};
	bool stored = store_get(fs->store, c->key, &rec, NULL) == 0;
	struct node *nsroot = fs__relock(fs, c->nsroot_ino);
	struct node *obj = nsroot ? tree_child(fs->tree, nsroot, c->fname) : NULL;
	uint64_t other = obj && obj->ino != ino ? obj->ino : 0;
	if (obj && stored)
		fs__set_content(obj, blob_new(rec.yaml, rec.len), rec.rv);
	struct node *nsdir = nsroot ? tree_child(fs->tree, nsroot, c->name) : NULL;
	if (nsdir && c->rmdir)
		namespace__renew(fs, nsdir);
	FS_UNLOCK(fs);
	store_record_clear(&rec);
	if (other && stored) /* the name found another file meanwhile */
		fuse_lowlevel_notify_inval_inode(fs->se, other, 0, 0);
	return 0;
}

/* Removes the kubernetes finalizer of a Namespace being deleted whose
 * folder is empty: nothing is left for the namespace controller to do.
 * WRITE_GONE when that deleted it. */
static int namespace__finalize(struct fs *fs, const struct write_target *t, const char *author)
{
	struct store_record rec = {0};
	if (store_get(fs->store, t->key, &rec, NULL) < 0)
		return -ENOENT;
	cleanup_ynode struct ynode *obj = NULL;
	int r = yaml_parse_one(rec.yaml, rec.len, &obj, NULL);
	store_record_clear(&rec);
	if (r < 0)
		return r;
	ynode_seq_remove_str(ynode_path(obj, "spec.finalizers"), FINALIZER_NAMESPACE);
	cleanup_free char *text = yaml_emit(obj, NULL);
	struct blob *b = NULL;
	uint64_t rv = 0;
	struct error *err = NULL;
	r = fs__write(fs, t, text, strlen(text), author, &b, &rv, &err);
	if (r < 0)
		log_warn("finalizing namespace %s: %s", t->name, err ? err->msg : "?");
	error_free(err);
	blob_unref(b);
	return r;
}

int namespace_delete(fuse_req_t req, struct fs *fs, uint64_t nsroot_ino, const char *name,
		     bool rmdir)
{
	cleanup_free char *key = xasprintf("namespaces/%s", name);
	cleanup_free char *fname = xasprintf("%s.yaml", name);
	if (namespace_protected(name)) {
		cleanup_free char *msg = xasprintf(
		    "namespaces \"%s\" is forbidden: this namespace may not be deleted", name);
		struct error e = {EPERM, msg};
		fs__reject(fs, key, &e);
		return EPERM;
	}
	FS_LOCK_R(fs);
	const struct kind_info *k = namespace__kind(fs);
	FS_UNLOCK(fs);
	cleanup_free char *author = fs__author(req, fs);
	struct write_target t = {.kind = k, .name = name, .key = key};
	struct error *err = NULL;
	int r = fs__delete(fs, &t, author, &err);
	if (r < 0 && r != -ENOENT) {
		int e = fs__errno(err);
		cleanup_free char *path = xasprintf("namespaces/%s", fname);
		fs__reject(fs, path, err);
		error_free(err);
		return e;
	}
	error_free(err);
	if (r == WRITE_KEPT) {
		/* Terminating: creates in it are refused from now on. When
		 * nothing is left in it, it goes at once; else the namespace
		 * controller empties it, then removes the finalizer. */
		FS_LOCK_R(fs);
		struct node *nsroot = tree_by_ino(fs->tree, nsroot_ino);
		struct node *nsdir = nsroot ? tree_child(fs->tree, nsroot, name) : NULL;
		bool busy = nsdir && namespace__busy(nsdir);
		FS_UNLOCK(fs);
		if (busy || namespace__finalize(fs, &t, author) != WRITE_GONE) {
			/* The Namespace file shows it Terminating: a change like
			 * any other (fs.h). */
			struct namespace__terminating c = {nsroot_ino, name, fname, key, rmdir};
			FS_LOCK_R(fs);
			nsroot = tree_by_ino(fs->tree, nsroot_ino);
			struct node *was = nsroot ? tree_child(fs->tree, nsroot, fname) : NULL;
			uint64_t was_ino = was ? was->ino : 0;
			FS_UNLOCK(fs);
			if (was_ino)
				fs__replace_text(fs, was_ino, false, namespace__show_terminating,
						 &c);
			else
				namespace__show_terminating(fs, 0, &c);
			return 0;
		}
	}
	namespace_forget(fs, name);
	return 0;
}
