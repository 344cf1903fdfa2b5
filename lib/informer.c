/* informer.c: list + inotify watch of one kind's folders under the mount.
 *
 * Watches: namespaces/ itself (namespaces come and go as folders), each
 * namespace's <plural>/ folder, and, while that folder is missing, the
 * namespace folder (to see it created). A kind folder can also appear without
 * any event we could see (the file system may create it on its own), so a
 * namespace still missing it is retried on a timer with back-off; resync and
 * overflow relists retry it too.
 *
 * Events are hints, the file system is the truth: an object is re-read (the
 * file opened anew) on every event, a delete event counts only if the file is
 * really gone (an editor that renames the old file away and writes a new one
 * must look like an update, not a delete and an add), and a relist compares
 * what it reads with the cache. A hash of each file's bytes spares re-parsing
 * unchanged files and re-logging a broken one.
 *
 * This file must never write under the mount, and never emit an update for
 * an object whose content did not change. */
#include "informer.h"
#include "fnv.h"
#include "log.h"
#include "names.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define INFORMER__RETRY_MIN_MS 10
#define INFORMER__RETRY_MAX_MS 1000
#define INFORMER__NS_TRIES     30 /* then only a relist looks again */

#define INFORMER__ROOT_MASK                                                                        \
	(IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF |     \
	 IN_ONLYDIR)
#define INFORMER__KIND_MASK                                                                        \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF |               \
	 IN_MOVE_SELF | IN_ONLYDIR)
#define INFORMER__NSDIR_MASK (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

/* One file of the kind's folder that looked like an object. */
struct informer__obj {
	const char *name;  /* first: trees compare by it; without ".yaml"; in key */
	char *key;	   /* "ns/name" or "name" */
	struct ynode *obj; /* the last version that parsed; NULL if none did */
	void *item;	   /* with a transform, what it made of that version */
	uint64_t hash;	   /* of the bytes last read */
	unsigned gen;	   /* the listing that last saw the file */
};

/* A namespace; the one record of a cluster-scoped kind has the name "". */
struct informer__ns {
	char *name;	/* first: trees compare by it */
	void *objs;	/* tree of struct informer__obj */
	int kind_wd;	/* watch on the kind folder, -1 while it is missing */
	int dir_wd;	/* watch on the namespace folder while kind_wd is -1 */
	unsigned tries; /* timed attempts to find the kind folder */
	unsigned gen;	/* the relist that last saw the namespace */
};

enum informer__role {
	INFORMER__ROOT,	 /* namespaces/ */
	INFORMER__KIND,	 /* a kind folder */
	INFORMER__NSDIR, /* a namespace folder, waiting for its kind folder */
};

struct informer__watch {
	int wd; /* first: the tree compares by it */
	enum informer__role role;
	struct informer__ns *ns; /* NULL for the root */
};

struct informer__listener {
	struct informer_handlers h;
	struct informer_item_handlers ih; /* used when items */
	bool items;
	void *data;
	struct workqueue *q;
};

struct informer {
	struct loop *loop;
	char *plural;
	char *root; /* <mount>/namespaces, or <mount>/<plural> */
	bool namespaced;
	int ifd;	/* inotify, -1 before start */
	int root_wd;	/* namespaced: watch on root; -1 when lost */
	bool unmounted; /* saw IN_UNMOUNT: keep the cache until back */
	bool started;
	void *nss;     /* tree of struct informer__ns */
	void *watches; /* tree of struct informer__watch */
	size_t count;  /* objects with obj != NULL */
	unsigned gen;  /* listing generation */
	struct informer__listener *listeners;
	size_t nlisteners;
	uint64_t resync_ms;
	struct loop_timer *resync_timer;
	struct loop_timer *retry_timer;
	uint64_t retry_ms;
	/* Files seen going that are deleted only if still gone after a grace
	 * period: an editor's save renames the file away before it writes the
	 * new one, and watchers must not see that as a deletion. */
	struct informer__gone {
		char *ns; /* NULL for cluster-scoped kinds */
		char *name;
	} * gone;
	size_t ngone;
	struct loop_timer *gone_timer;
	uint64_t grace_ms;	      /* INFORMER__GONE_GRACE_MS unless set */
	struct informer_transform xf; /* xf.make NULL: keep trees */
};

#define INFORMER__GONE_GRACE_MS 250

static void informer__relist(struct informer *inf);
static void informer__schedule_retry(struct informer *inf);

/* Trees: every node type starts with its key. */

static int informer__cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int informer__cmp_wd(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void *informer__tfind_name(void *const *root, const char *name)
{
	const char *probe = name;
	void **found = tfind(&probe, root, informer__cmp_name);
	return found ? *found : NULL;
}

static void informer__tinsert(void *node, void **root, int (*cmp)(const void *, const void *))
{
	if (!tsearch(node, root, cmp))
		abort(); /* out of memory */
}

/* A tree's nodes in order, for walks that call out or change the tree. */
struct informer__vec {
	void **items;
	size_t n, cap;
};

static void informer__collect(const void *nodep, VISIT which, void *closure)
{
	struct informer__vec *v = closure;
	if (which != postorder && which != leaf)
		return;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->items = xrealloc(v->items, v->cap * sizeof(*v->items));
	}
	v->items[v->n++] = *(void *const *)nodep;
}

static struct informer__vec informer__nodes(const void *root)
{
	struct informer__vec v = {0};
	twalk_r(root, informer__collect, &v);
	return v;
}

/* Names and paths. */

static bool informer__object_name(const char *file, char **name)
{
	size_t len;
	if (!names_object_file(file, &len))
		return false;
	*name = xstrndup(file, len);
	return true;
}

static char *informer__kind_dir(const struct informer *inf, const struct informer__ns *ns)
{
	if (!inf->namespaced)
		return xstrdup(inf->root);
	return xasprintf("%s/%s/%s", inf->root, ns->name, inf->plural);
}

/* Listeners. */

static void informer__tell_add(const struct informer__listener *l, const struct informer__obj *o)
{
	if (l->q)
		workqueue_add(l->q, o->key);
	else if (l->items && l->ih.on_add)
		l->ih.on_add(l->data, o->key, o->item);
	else if (!l->items && l->h.on_add)
		l->h.on_add(l->data, o->key, o->obj);
}

static void informer__emit_add(struct informer *inf, const struct informer__obj *o)
{
	for (size_t i = 0; i < inf->nlisteners; i++)
		informer__tell_add(&inf->listeners[i], o);
}

static void informer__emit_update(struct informer *inf, const struct informer__obj *o,
				  const struct ynode *old, void *old_item)
{
	for (size_t i = 0; i < inf->nlisteners; i++) {
		struct informer__listener *l = &inf->listeners[i];
		if (l->q)
			workqueue_add(l->q, o->key);
		else if (l->items && l->ih.on_update)
			l->ih.on_update(l->data, o->key, old_item, o->item);
		else if (!l->items && l->h.on_update)
			l->h.on_update(l->data, o->key, old, o->obj);
	}
}

static void informer__emit_delete(struct informer *inf, const char *key, const struct ynode *old,
				  void *old_item)
{
	for (size_t i = 0; i < inf->nlisteners; i++) {
		struct informer__listener *l = &inf->listeners[i];
		if (l->q)
			workqueue_add(l->q, key);
		else if (l->items && l->ih.on_delete)
			l->ih.on_delete(l->data, key, old_item);
		else if (!l->items && l->h.on_delete)
			l->h.on_delete(l->data, key, old);
	}
}

/* Objects. */

/* Whether o holds a version that parsed (a tree, or an item). */
static bool informer__has(const struct informer__obj *o)
{
	return o->obj || o->item;
}

static void informer__obj_free(struct informer *inf, struct informer__obj *o)
{
	ynode_free(o->obj);
	if (o->item)
		inf->xf.free(o->item);
	free(o->key);
	free(o);
}

/* Forgets one object; reports its deletion if it had ever parsed. */
static void informer__remove(struct informer *inf, struct informer__ns *ns, const char *name)
{
	struct informer__obj *o = informer__tfind_name(&ns->objs, name);
	if (!o)
		return;
	tdelete(o, &ns->objs, informer__cmp_name);
	if (informer__has(o)) {
		inf->count--;
		informer__emit_delete(inf, o->key, o->obj, o->item);
	}
	informer__obj_free(inf, o);
}

/* Brings one object in line with its file. */
static void informer__refresh(struct informer *inf, struct informer__ns *ns, const char *name)
{
	cleanup_free char *dir = informer__kind_dir(inf, ns);
	cleanup_free char *path = xasprintf("%s/%s.yaml", dir, name);
	size_t len;
	cleanup_free char *buf = util_read_object_file(path, &len);
	if (!buf) {
		if (errno == ENOENT || errno == ENOTDIR)
			informer__remove(inf, ns, name);
		else
			log_warn("informer %s: %s: %s", inf->plural, path, strerror(errno));
		return;
	}
	uint64_t hash = fnv1a(buf, len);
	struct informer__obj *o = informer__tfind_name(&ns->objs, name);
	if (o && o->hash == hash) {
		o->gen = inf->gen;
		return;
	}
	if (!o) {
		o = xcalloc(1, sizeof(*o));
		o->key = ns->name[0] ? xasprintf("%s/%s", ns->name, name) : xstrdup(name);
		o->name = ns->name[0] ? o->key + strlen(ns->name) + 1 : o->key;
		informer__tinsert(o, &ns->objs, informer__cmp_name);
	}
	o->hash = hash;
	o->gen = inf->gen;

	cleanup_error struct error *err = NULL;
	struct ynode *doc = NULL;
	if (yaml_parse_one(buf, len, &doc, &err) < 0 || doc->type != YNODE_MAP) {
		log_warn("informer %s: %s: skipped: %s", inf->plural, path,
			 err ? err->msg : "not a mapping");
		ynode_free(doc);
		return;
	}
	if (inf->xf.make) {
		void *old_item = o->item;
		o->item = inf->xf.make(inf->xf.data, o->key, doc);
		ynode_free(doc);
		if (!old_item) {
			inf->count++;
			informer__emit_add(inf, o);
			return;
		}
		informer__emit_update(inf, o, NULL, old_item);
		inf->xf.free(old_item);
		return;
	}
	struct ynode *old = o->obj;
	if (old && ynode_equal(old, doc)) {
		ynode_free(doc); /* other bytes, same object */
		return;
	}
	o->obj = doc;
	if (!old) {
		inf->count++;
		informer__emit_add(inf, o);
		return;
	}
	informer__emit_update(inf, o, old, NULL);
	ynode_free(old);
}

/* Handles a delete event: the name counts as gone only if it is. */
static void informer__gone(struct informer *inf, struct informer__ns *ns, const char *name)
{
	cleanup_free char *dir = informer__kind_dir(inf, ns);
	cleanup_free char *path = xasprintf("%s/%s.yaml", dir, name);
	struct stat st;
	if (lstat(path, &st) == 0) {
		/* Replaced already (its own close or rename event follows), or
		 * not removed: an object with finalizers stays, being deleted,
		 * and only a read shows its deletionTimestamp. */
		informer__refresh(inf, ns, name);
		return;
	}
	if (errno != ENOENT && errno != ENOTDIR) {
		/* Cannot tell (the file system is failing): keep it. */
		log_warn("informer %s: %s: %s", inf->plural, path, strerror(errno));
		return;
	}
	if (inf->grace_ms == 0) {
		informer__remove(inf, ns, name);
		return;
	}
	inf->gone = xrealloc(inf->gone, sizeof(*inf->gone) * (inf->ngone + 1));
	inf->gone[inf->ngone].ns = inf->namespaced ? xstrdup(ns->name) : NULL;
	inf->gone[inf->ngone].name = xstrdup(name);
	inf->ngone++;
	if (!loop_timer_armed(inf->gone_timer))
		loop_timer_start(inf->gone_timer, inf->grace_ms, 0);
}

static struct informer__ns *informer__ns_get(struct informer *inf, const char *name, bool add);

/* The grace period is over: what is still missing is deleted. */
static void informer__on_gone(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct informer *inf = data;
	struct informer__gone *gone = inf->gone;
	size_t n = inf->ngone;
	inf->gone = NULL;
	inf->ngone = 0;
	for (size_t i = 0; i < n; i++) {
		struct informer__ns *ns =
		    informer__ns_get(inf, gone[i].ns ? gone[i].ns : "", false);
		if (ns) {
			cleanup_free char *dir = informer__kind_dir(inf, ns);
			cleanup_free char *path = xasprintf("%s/%s.yaml", dir, gone[i].name);
			struct stat st;
			if (lstat(path, &st) == 0)
				informer__refresh(inf, ns, gone[i].name);
			else if (errno == ENOENT || errno == ENOTDIR)
				informer__remove(inf, ns, gone[i].name);
		}
		free(gone[i].ns);
		free(gone[i].name);
	}
	free(gone);
}

/* Forgets every object of ns, reporting each deletion. */
static void informer__purge(struct informer *inf, struct informer__ns *ns)
{
	struct informer__vec v = informer__nodes(ns->objs);
	for (size_t i = 0; i < v.n; i++)
		informer__remove(inf, ns, ((struct informer__obj *)v.items[i])->name);
	free(v.items);
}

/* Reads the kind folder of ns; objects no longer in it are deleted. */
static int informer__list_dir(struct informer *inf, struct informer__ns *ns)
{
	cleanup_free char *dir = informer__kind_dir(inf, ns);
	cleanup_dir DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR)
			log_warn("informer %s: %s: %s", inf->plural, dir, strerror(errno));
		return -1;
	}
	unsigned gen = ++inf->gen;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *name = NULL;
		if (de->d_type == DT_DIR || !informer__object_name(de->d_name, &name))
			continue;
		informer__refresh(inf, ns, name);
		free(name);
	}
	struct informer__vec v = informer__nodes(ns->objs);
	for (size_t i = 0; i < v.n; i++) {
		struct informer__obj *o = v.items[i];
		if (o->gen != gen)
			informer__remove(inf, ns, o->name);
	}
	free(v.items);
	return 0;
}

/* Watches. */

static void informer__watch_add(struct informer *inf, int wd, enum informer__role role,
				struct informer__ns *ns)
{
	void **found = tfind(&wd, &inf->watches, informer__cmp_wd);
	if (found) {
		/* The same folder again (inotify hands back its wd). */
		struct informer__watch *w = *found;
		w->role = role;
		w->ns = ns;
		return;
	}
	struct informer__watch *w = xcalloc(1, sizeof(*w));
	w->wd = wd;
	w->role = role;
	w->ns = ns;
	informer__tinsert(w, &inf->watches, informer__cmp_wd);
}

static struct informer__watch *informer__watch_find(struct informer *inf, int wd)
{
	void **found = tfind(&wd, &inf->watches, informer__cmp_wd);
	return found ? *found : NULL;
}

/* Forgets wd; rm also asks the kernel to drop it (its IN_IGNORED will then
 * find nothing and be ignored). */
static void informer__watch_del(struct informer *inf, int wd, bool rm)
{
	if (wd < 0)
		return;
	struct informer__watch *w = informer__watch_find(inf, wd);
	if (w) {
		tdelete(w, &inf->watches, informer__cmp_wd);
		free(w);
	}
	if (rm)
		inotify_rm_watch(inf->ifd, wd);
}

static int informer__add_watch(struct informer *inf, const char *path, uint32_t mask)
{
	int wd = inotify_add_watch(inf->ifd, path, mask);
	if (wd < 0 && errno == ENOSPC) {
		log_error("informer %s: %s: out of inotify watches "
			  "(raise fs.inotify.max_user_watches)",
			  inf->plural, path);
		errno = ENOSPC; /* callers look at it */
	}
	return wd;
}

/* Namespaces. */

static struct informer__ns *informer__ns_get(struct informer *inf, const char *name, bool add)
{
	struct informer__ns *ns = informer__tfind_name(&inf->nss, name);
	if (ns || !add)
		return ns;
	ns = xcalloc(1, sizeof(*ns));
	ns->name = xstrdup(name);
	ns->kind_wd = -1;
	ns->dir_wd = -1;
	informer__tinsert(ns, &inf->nss, informer__cmp_name);
	return ns;
}

/* The namespace is gone: its objects are deleted and its watches dropped. */
static void informer__ns_drop(struct informer *inf, struct informer__ns *ns)
{
	informer__purge(inf, ns);
	informer__watch_del(inf, ns->kind_wd, true);
	informer__watch_del(inf, ns->dir_wd, true);
	tdelete(ns, &inf->nss, informer__cmp_name);
	free(ns->name);
	free(ns);
}

enum informer__attach { INFORMER__ATTACHED, INFORMER__PENDING, INFORMER__DROPPED };

/* Watches and lists the kind folder of ns; if it is missing, watches the
 * namespace folder for it and leaves ns pending. */
static enum informer__attach informer__ns_attach(struct informer *inf, struct informer__ns *ns)
{
	if (ns->kind_wd >= 0) {
		informer__list_dir(inf, ns);
		return INFORMER__ATTACHED;
	}
	cleanup_free char *dir = informer__kind_dir(inf, ns);
	int wd = informer__add_watch(inf, dir, INFORMER__KIND_MASK);
	if (wd < 0 && inf->namespaced && ns->dir_wd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		cleanup_free char *nsdir = xasprintf("%s/%s", inf->root, ns->name);
		int dwd = informer__add_watch(inf, nsdir, INFORMER__NSDIR_MASK);
		if (dwd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
			informer__ns_drop(inf, ns);
			return INFORMER__DROPPED;
		}
		if (dwd >= 0) {
			ns->dir_wd = dwd;
			informer__watch_add(inf, dwd, INFORMER__NSDIR, ns);
		}
		/* It may have appeared before the watch was in place. */
		wd = informer__add_watch(inf, dir, INFORMER__KIND_MASK);
	}
	if (wd < 0) {
		/* A missing folder holds no objects; any other failure (out of
		 * watches, a failing file system) says nothing about them. */
		if ((errno == ENOENT || errno == ENOTDIR) && !inf->unmounted)
			informer__purge(inf, ns);
		return INFORMER__PENDING;
	}
	ns->kind_wd = wd;
	ns->tries = 0;
	informer__watch_add(inf, wd, INFORMER__KIND, ns);
	informer__watch_del(inf, ns->dir_wd, true);
	ns->dir_wd = -1;
	if (informer__list_dir(inf, ns) < 0) {
		/* Gone again already: its IN_IGNORED will tell. */
		log_debug("informer %s: %s vanished while listing", inf->plural, dir);
	}
	return INFORMER__ATTACHED;
}

/* Watches the root (namespaced) or the kind folder (cluster-scoped). */
static int informer__root_attach(struct informer *inf)
{
	if (!inf->namespaced) {
		struct informer__ns *ns = informer__ns_get(inf, "", true);
		if (ns->kind_wd >= 0)
			return 0;
		int wd = informer__add_watch(inf, inf->root, INFORMER__KIND_MASK);
		if (wd < 0)
			return -errno;
		ns->kind_wd = wd;
		informer__watch_add(inf, wd, INFORMER__KIND, ns);
		return 0;
	}
	if (inf->root_wd >= 0)
		return 0;
	int wd = informer__add_watch(inf, inf->root, INFORMER__ROOT_MASK);
	if (wd < 0)
		return -errno;
	inf->root_wd = wd;
	informer__watch_add(inf, wd, INFORMER__ROOT, NULL);
	return 0;
}

static bool informer__root_lost(const struct informer *inf)
{
	if (inf->namespaced)
		return inf->root_wd < 0;
	struct informer__ns *ns = informer__tfind_name(&inf->nss, "");
	return !ns || ns->kind_wd < 0;
}

/* Relists everything: namespaces, then each kind folder. */
static void informer__relist(struct informer *inf)
{
	if (informer__root_lost(inf)) {
		if (informer__root_attach(inf) < 0) {
			informer__schedule_retry(inf);
			return;
		}
		inf->unmounted = false;
	}
	if (!inf->namespaced) {
		informer__list_dir(inf, informer__ns_get(inf, "", true));
		return;
	}
	cleanup_dir DIR *d = opendir(inf->root);
	if (!d) {
		log_warn("informer %s: %s: %s", inf->plural, inf->root, strerror(errno));
		return;
	}
	unsigned gen = ++inf->gen;
	bool pending = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		struct informer__ns *ns = informer__ns_get(inf, de->d_name, true);
		ns->gen = gen;
		ns->tries = 0;
		if (informer__ns_attach(inf, ns) == INFORMER__PENDING)
			pending = true;
	}
	struct informer__vec v = informer__nodes(inf->nss);
	for (size_t i = 0; i < v.n; i++) {
		struct informer__ns *ns = v.items[i];
		if (ns->gen != gen)
			informer__ns_drop(inf, ns);
	}
	free(v.items);
	if (pending)
		informer__schedule_retry(inf);
}

/* Retries: a lost root, and namespaces still without their kind folder. */

static void informer__on_retry(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct informer *inf = data;
	bool again = false;
	if (informer__root_lost(inf)) {
		if (informer__root_attach(inf) < 0) {
			again = true; /* until the mount is back, however long */
		} else {
			log_info("informer %s: %s is back, relisting", inf->plural, inf->root);
			inf->unmounted = false;
			informer__relist(inf);
			return;
		}
	} else {
		struct informer__vec v = informer__nodes(inf->nss);
		for (size_t i = 0; i < v.n; i++) {
			struct informer__ns *ns = v.items[i];
			if (ns->kind_wd >= 0 || ns->tries >= INFORMER__NS_TRIES)
				continue;
			ns->tries++;
			if (informer__ns_attach(inf, ns) == INFORMER__PENDING &&
			    ns->tries < INFORMER__NS_TRIES)
				again = true;
		}
		free(v.items);
	}
	if (again) {
		inf->retry_ms *= 2;
		if (inf->retry_ms > INFORMER__RETRY_MAX_MS)
			inf->retry_ms = INFORMER__RETRY_MAX_MS;
		loop_timer_start(inf->retry_timer, inf->retry_ms, 0);
	}
}

static void informer__schedule_retry(struct informer *inf)
{
	inf->retry_ms = INFORMER__RETRY_MIN_MS;
	loop_timer_start(inf->retry_timer, inf->retry_ms, 0);
}

static void informer__on_resync(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	informer__relist(data);
}

/* Events. */

static void informer__on_root_event(struct informer *inf, const struct inotify_event *ev)
{
	if (!(ev->mask & IN_ISDIR) || !ev->len || ev->name[0] == '.')
		return;
	if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
		struct informer__ns *ns = informer__ns_get(inf, ev->name, true);
		ns->tries = 0;
		if (informer__ns_attach(inf, ns) == INFORMER__PENDING)
			informer__schedule_retry(inf);
	} else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
		/* An rmdir that left the namespace Terminating leaves its
		 * folder (and its kind folders' watches) in place. */
		cleanup_free char *dir = xasprintf("%s/%s", inf->root, ev->name);
		struct stat st;
		if (lstat(dir, &st) == 0)
			return;
		struct informer__ns *ns = informer__ns_get(inf, ev->name, false);
		if (ns)
			informer__ns_drop(inf, ns);
	}
}

static void informer__on_kind_event(struct informer *inf, struct informer__ns *ns,
				    const struct inotify_event *ev)
{
	char *name = NULL;
	if ((ev->mask & IN_ISDIR) && ev->len && (ev->mask & (IN_DELETE | IN_MOVED_FROM)) &&
	    ev->name[0] != '.') {
		/* namespaces/: the rmdir of a namespace's folder changes its
		 * Namespace (Terminating), or removed it with the folder. */
		cleanup_free char *file = xasprintf("%s.yaml", ev->name);
		if (informer__object_name(file, &name))
			informer__refresh(inf, ns, name);
		free(name);
		return;
	}
	if ((ev->mask & IN_ISDIR) || !ev->len || !informer__object_name(ev->name, &name))
		return;
	if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) {
		informer__refresh(inf, ns, name);
	} else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
		informer__gone(inf, ns, name);
	free(name);
}

/* The kernel dropped a watch: its folder was deleted, or the mount went. */
static void informer__on_ignored(struct informer *inf, struct informer__watch *w)
{
	enum informer__role role = w->role;
	struct informer__ns *ns = w->ns;
	informer__watch_del(inf, w->wd, false);
	switch (role) {
	case INFORMER__ROOT:
		inf->root_wd = -1;
		log_error("informer %s: lost %s; keeping the cache until it is back", inf->plural,
			  inf->root);
		informer__schedule_retry(inf);
		break;
	case INFORMER__NSDIR:
		ns->dir_wd = -1;
		break;
	case INFORMER__KIND:
		ns->kind_wd = -1;
		if (!inf->namespaced) {
			log_error("informer %s: lost %s; keeping the cache until it is back",
				  inf->plural, inf->root);
			informer__schedule_retry(inf);
		} else if (!inf->unmounted) {
			ns->tries = 0;
			if (informer__ns_attach(inf, ns) == INFORMER__PENDING)
				informer__schedule_retry(inf);
		}
		break;
	}
}

static void informer__on_event(struct informer *inf, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		log_warn("informer %s: inotify queue overflowed, relisting", inf->plural);
		informer__relist(inf);
		return;
	}
	struct informer__watch *w = informer__watch_find(inf, ev->wd);
	if (!w)
		return; /* a watch we dropped already */
	if (ev->mask & IN_UNMOUNT)
		inf->unmounted = true;
	if (ev->mask & IN_IGNORED) {
		informer__on_ignored(inf, w);
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		/* Drop it ourselves (a moved folder keeps its watch); IN_IGNORED
		 * then comes and is handled above. */
		inotify_rm_watch(inf->ifd, ev->wd);
		return;
	}
	switch (w->role) {
	case INFORMER__ROOT:
		informer__on_root_event(inf, ev);
		break;
	case INFORMER__KIND:
		informer__on_kind_event(inf, w->ns, ev);
		break;
	case INFORMER__NSDIR:
		if ((ev->mask & IN_ISDIR) && ev->len && strcmp(ev->name, inf->plural) == 0)
			informer__ns_attach(inf, w->ns);
		break;
	}
}

static void informer__on_inotify(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct informer *inf = data;
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				log_error("informer %s: inotify read: %s", inf->plural,
					  strerror(errno));
			return;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			informer__on_event(inf, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* The API. */

struct informer *informer_new(struct loop *loop, const char *mount, const char *plural,
			      bool namespaced)
{
	struct informer *inf = xcalloc(1, sizeof(*inf));
	inf->loop = loop;
	inf->plural = xstrdup(plural);
	inf->namespaced = namespaced;
	inf->root =
	    namespaced ? xasprintf("%s/namespaces", mount) : xasprintf("%s/%s", mount, plural);
	inf->ifd = -1;
	inf->root_wd = -1;
	inf->retry_timer = loop_timer_new(loop, informer__on_retry, inf);
	inf->resync_timer = loop_timer_new(loop, informer__on_resync, inf);
	inf->gone_timer = loop_timer_new(loop, informer__on_gone, inf);
	inf->grace_ms = INFORMER__GONE_GRACE_MS;
	return inf;
}

/* tdestroy() frees the tree; its nodes are freed after, with inf at hand. */
static void informer__node_keep(void *p)
{
	(void)p;
}

static void informer__ns_free(struct informer *inf, struct informer__ns *ns)
{
	struct informer__vec v = informer__nodes(ns->objs);
	tdestroy(ns->objs, informer__node_keep);
	for (size_t i = 0; i < v.n; i++)
		informer__obj_free(inf, v.items[i]);
	free(v.items);
	free(ns->name);
	free(ns);
}

void informer_free(struct informer *inf)
{
	if (!inf)
		return;
	if (inf->ifd >= 0) {
		loop_del_fd(inf->loop, inf->ifd);
		close(inf->ifd);
	}
	loop_timer_free(inf->retry_timer);
	loop_timer_free(inf->resync_timer);
	loop_timer_free(inf->gone_timer);
	for (size_t i = 0; i < inf->ngone; i++) {
		free(inf->gone[i].ns);
		free(inf->gone[i].name);
	}
	free(inf->gone);
	tdestroy(inf->watches, free);
	struct informer__vec v = informer__nodes(inf->nss);
	tdestroy(inf->nss, informer__node_keep);
	for (size_t i = 0; i < v.n; i++)
		informer__ns_free(inf, v.items[i]);
	free(v.items);
	free(inf->listeners);
	free(inf->root);
	free(inf->plural);
	free(inf);
}

void informer_freep(struct informer **inf)
{
	informer_free(*inf);
	*inf = NULL;
}

static void informer__replay(struct informer *inf, const struct informer__listener *l)
{
	struct informer__vec nss = informer__nodes(inf->nss);
	for (size_t i = 0; i < nss.n; i++) {
		struct informer__vec v =
		    informer__nodes(((struct informer__ns *)nss.items[i])->objs);
		for (size_t j = 0; j < v.n; j++) {
			const struct informer__obj *o = v.items[j];
			if (informer__has(o))
				informer__tell_add(l, o);
		}
		free(v.items);
	}
	free(nss.items);
}

static void informer__listen(struct informer *inf, struct informer__listener l)
{
	inf->listeners = xrealloc(inf->listeners, (inf->nlisteners + 1) * sizeof(*inf->listeners));
	inf->listeners[inf->nlisteners++] = l;
	if (inf->started)
		informer__replay(inf, &l);
}

void informer_add_handlers(struct informer *inf, const struct informer_handlers *h, void *data)
{
	informer__listen(inf, (struct informer__listener){.h = *h, .data = data});
}

void informer_add_queue(struct informer *inf, struct workqueue *q)
{
	informer__listen(inf, (struct informer__listener){.q = q});
}

void informer_add_item_handlers(struct informer *inf, const struct informer_item_handlers *h,
				void *data)
{
	informer__listen(inf, (struct informer__listener){.ih = *h, .items = true, .data = data});
}

void informer_set_transform(struct informer *inf, const struct informer_transform *t)
{
	inf->xf = *t;
}

void informer_set_resync(struct informer *inf, uint64_t period_ms)
{
	inf->resync_ms = period_ms;
	if (!inf->started)
		return;
	if (period_ms)
		loop_timer_start(inf->resync_timer, period_ms, period_ms);
	else
		loop_timer_stop(inf->resync_timer);
}

int informer_start(struct informer *inf, struct error **err)
{
	if (inf->started)
		return error_set(err, EALREADY, "informer %s: already started", inf->plural);
	inf->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (inf->ifd < 0)
		return error_set(err, errno, "inotify_init1: %s", strerror(errno));
	int r = loop_add_fd(inf->loop, inf->ifd, LOOP_READ, informer__on_inotify, inf, err);
	if (r < 0) {
		close(inf->ifd);
		inf->ifd = -1;
		return r;
	}
	/* Watch before listing, so that nothing falls in between. */
	r = informer__root_attach(inf);
	if (r < 0) {
		loop_del_fd(inf->loop, inf->ifd);
		close(inf->ifd);
		inf->ifd = -1;
		return error_set(err, -r, "informer %s: %s: %s", inf->plural, inf->root,
				 strerror(-r));
	}
	inf->started = true;
	informer__relist(inf);
	if (inf->resync_ms)
		loop_timer_start(inf->resync_timer, inf->resync_ms, inf->resync_ms);
	return 0;
}

void informer_resync(struct informer *inf)
{
	if (inf->started)
		informer__relist(inf);
}

static struct informer__obj *informer__find(const struct informer *inf, const char *key)
{
	char nsname[NAME_MAX + 1] = "";
	const char *name = key;
	if (inf->namespaced) {
		const char *slash = strchr(key, '/');
		if (!slash || (size_t)(slash - key) > NAME_MAX)
			return NULL;
		memcpy(nsname, key, (size_t)(slash - key));
		nsname[slash - key] = '\0';
		name = slash + 1;
	}
	struct informer__ns *ns = informer__tfind_name(&inf->nss, nsname);
	if (!ns)
		return NULL;
	return informer__tfind_name(&ns->objs, name);
}

const struct ynode *informer_get(const struct informer *inf, const char *key)
{
	struct informer__obj *o = informer__find(inf, key);
	return o ? o->obj : NULL;
}

void *informer_get_item(const struct informer *inf, const char *key)
{
	struct informer__obj *o = informer__find(inf, key);
	return o ? o->item : NULL;
}

static int informer__visit_ns(const struct informer__ns *ns, informer_visit_cb cb, void *data)
{
	struct informer__vec v = informer__nodes(ns->objs);
	int r = 0;
	for (size_t i = 0; i < v.n && r == 0; i++) {
		const struct informer__obj *o = v.items[i];
		if (o->obj)
			r = cb(data, o->key, o->obj);
	}
	free(v.items);
	return r;
}

int informer_foreach(const struct informer *inf, const char *ns, informer_visit_cb cb, void *data)
{
	if (ns || !inf->namespaced) {
		struct informer__ns *one = informer__tfind_name(&inf->nss, ns ? ns : "");
		return one ? informer__visit_ns(one, cb, data) : 0;
	}
	struct informer__vec v = informer__nodes(inf->nss);
	int r = 0;
	for (size_t i = 0; i < v.n && r == 0; i++)
		r = informer__visit_ns(v.items[i], cb, data);
	free(v.items);
	return r;
}

size_t informer_count(const struct informer *inf)
{
	return inf->count;
}

void informer_set_delete_grace(struct informer *inf, uint64_t ms)
{
	inf->grace_ms = ms;
}
