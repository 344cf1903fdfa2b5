/* dropbox.c: filing drop box files.
 *
 * Watches: the mount's top and each namespace folder for files closed or
 * moved in, and namespaces/ for namespace folders coming and going. Each
 * drop file is filed by one job on the writer's threads (all of its
 * documents, then the removal); a file written again while its job runs
 * is filed again after it.
 *
 * This file must never remove a drop file whose content it has not at
 * least tried to file: every document of what it read, each filed or
 * reported, and the file still holding what it read. */
#include "dropbox.h"
#include "ctrl.h"
#include "disruption.h"
#include "events.h"
#include "keymap.h"
#include "kinds.h"
#include "log.h"
#include "names.h"
#include "obj.h"
#include "util.h"
#include "write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define DROPBOX__FILE_MASK (IN_CLOSE_WRITE | IN_MOVED_TO)
#define DROPBOX__NS_MASK   (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR)

enum { DROPBOX__RUNNING = 1, DROPBOX__AGAIN = 2 };

struct dropbox {
	struct ctrl *c;
	int ifd;
	int root_wd;
	int nsdir_wd;
	struct keymap *wd_ns; /* "wd" -> namespace name (char *) */
	struct keymap *ns_wd; /* namespace -> wd (uintptr_t) */
	struct keymap *busy;  /* drop file path -> DROPBOX__RUNNING | AGAIN */
};

/* One document that could not be filed. */
struct dropbox__failure {
	char *kind, *ns, *name, *msg;
	size_t index;
};

/* The job: one drop file, filed on a worker. */
struct dropbox__job {
	struct dropbox *db;
	char *path; /* below the mount */
	char *ns;   /* NULL at the top */
	size_t docs, filed;
	struct dropbox__failure *fails;
	size_t nfails;
	bool again; /* changed while filed: do it again */
	bool gone;  /* no such file any more */
};

/* ---- merging and targets ------------------------------------------------- */

void dropbox_merge(struct ynode *target, const struct ynode *patch)
{
	if (!target || !patch || target->type != YNODE_MAP || patch->type != YNODE_MAP)
		return;
	for (size_t i = 0; i < patch->n; i++) {
		const char *k = ynode_map_key(patch, i)->str;
		const struct ynode *v = ynode_map_val(patch, i);
		struct ynode *cur = ynode_get(target, k);
		if (v->type == YNODE_SCALAR && ynode_is_null(v))
			ynode_del(target, k);
		else if (v->type == YNODE_MAP && cur && cur->type == YNODE_MAP)
			dropbox_merge(cur, v);
		else
			ynode_set(target, k, ynode_clone(v));
	}
}

char *dropbox_target(const char *ns, const struct ynode *doc, struct error **err)
{
	const char *kind = ynode_path_str(doc, "kind");
	const char *name = ynode_path_str(doc, "metadata.name");
	const struct kind_info *k = kind ? kinds_by_kind(kind) : NULL;
	if (!k)
		return error_set(err, EINVAL, "kind: Unsupported value: \"%s\"", kind ? kind : ""),
		       NULL;
	if (!name || !*name)
		return error_set(err, EINVAL, "metadata.name: Required value"), NULL;
	if (!k->namespaced)
		return obj_path(k->plural, NULL, name);
	const char *dns = ynode_path_str(doc, "metadata.namespace");
	if (ns)
		dns = ns;
	else if (!dns || !*dns)
		dns = "default";
	return obj_path(k->plural, dns, name);
}

/* ---- filing, on a worker ------------------------------------------------- */

/* Files one document as `kubectl apply` would. */
static int dropbox__file_doc(const char *mount, const char *ns, const struct ynode *doc,
			     char **where, struct error **err)
{
	if (!strcmp(ynode_path_str(doc, "kind"), "Eviction")) {
		/* POSTed, not filed: the eviction of the pod it names */
		const char *dns = ynode_path_str(doc, "metadata.namespace");
		const char *ens = ns ? ns : dns && *dns ? dns : "default";
		const char *pod = ynode_path_str(doc, "metadata.name");
		if (!pod || !*pod)
			return error_set(err, EINVAL, "metadata.name: Required value");
		*where = obj_path("pods", ens, pod);
		return disruption_evict(mount, ens, pod, err);
	}
	char *path = dropbox_target(ns, doc, err);
	if (!path)
		return -EINVAL;
	*where = path;
	if (!strcmp(ynode_path_str(doc, "kind"), "Namespace")) {
		/* Its folder first: a Namespace file alone brings none. */
		cleanup_free char *dir =
		    xasprintf("%s/namespaces/%s", mount, ynode_path_str(doc, "metadata.name"));
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return error_set(err, errno, "mkdir %s: %s", dir + strlen(mount) + 1,
					 strerror(errno));
	}
	bool own_rv = ynode_path_str(doc, "metadata.resourceVersion") != NULL;
	for (int attempt = 0;; attempt++) {
		cleanup_ynode struct ynode *stored = NULL;
		struct error *rerr = NULL;
		int r = write_read_object(mount, path, &stored, &rerr);
		if (r < 0 && rerr->status != ENOENT) {
			*err = rerr;
			return r;
		}
		if (r < 0) {
			error_free(rerr);
			r = write_put_object(mount, path, doc, O_CREAT | O_EXCL, err);
			if (r == -EEXIST && attempt < WRITER_RETRIES) {
				error_free(*err);
				*err = NULL;
				continue;
			}
			return r;
		}
		cleanup_ynode struct ynode *merged = ynode_clone(stored);
		dropbox_merge(merged, doc);
		if (ynode_equal(merged, stored))
			return 0;
		r = write_put_object(mount, path, merged, O_TRUNC, err);
		if (r == -EAGAIN && !own_rv && attempt < WRITER_RETRIES) {
			error_free(*err);
			*err = NULL;
			continue;
		}
		if (r == -EINVAL) {
			/* The merge may keep a stored field that the written ones
			 * rule out (a rollingUpdate beside type: Recreate): the
			 * document alone wins then, as a replace, status kept. */
			cleanup_ynode struct ynode *alone = ynode_clone(doc);
			const char *rv = obj_rv(stored);
			if (rv && !own_rv)
				ynode_set(ynode_get_map(alone, "metadata"), "resourceVersion",
					  ynode_new_str(rv));
			struct error *e2 = NULL;
			if (write_put_object(mount, path, alone, O_TRUNC, &e2) == 0) {
				error_free(*err);
				*err = NULL;
				return 0;
			}
			error_free(e2);
		}
		return r;
	}
}

static int dropbox__run(const char *mount, void *arg, struct error **err)
{
	struct dropbox__job *j = arg;
	cleanup_free char *full = xasprintf("%s/%s", mount, j->path);
	size_t len;
	cleanup_free char *text = util_read_file(full, &len);
	if (!text) {
		if (errno == ENOENT) {
			j->gone = true;
			return 0;
		}
		return error_set(err, errno, "%s: %s", j->path, strerror(errno));
	}
	struct ynode **docs = NULL;
	size_t n = 0;
	if (yaml_parse(text, len, &docs, &n, err) < 0) {
		error_prefix(err, "%s", j->path);
		return -EINVAL;
	}
	j->docs = n;
	for (size_t i = 0; i < n; i++) {
		struct error *e = NULL;
		cleanup_free char *where = NULL;
		if (dropbox__file_doc(mount, j->ns, docs[i], &where, &e) == 0) {
			j->filed++;
		} else {
			j->fails = xrealloc(j->fails, (j->nfails + 1) * sizeof(*j->fails));
			struct dropbox__failure *f = &j->fails[j->nfails++];
			const char *kind = ynode_path_str(docs[i], "kind");
			const char *name = ynode_path_str(docs[i], "metadata.name");
			const char *dns = ynode_path_str(docs[i], "metadata.namespace");
			f->kind = xstrdup(kind ? kind : "?");
			f->name = xstrdup(name ? name : "?");
			f->ns = xstrdup(j->ns ? j->ns : dns && *dns ? dns : "default");
			f->msg = xstrdup(e && e->msg ? e->msg : "failed");
			f->index = i + 1;
		}
		error_free(e);
	}
	for (size_t i = 0; i < n; i++)
		ynode_free(docs[i]);
	free(docs);
	/* Remove it only if it still holds what was filed. */
	size_t now_len;
	cleanup_free char *now = util_read_file(full, &now_len);
	if (!now)
		return 0;
	if (now_len != len || memcmp(now, text, len) != 0) {
		j->again = true;
		return 0;
	}
	if (unlink(full) < 0 && errno != ENOENT)
		return error_set(err, errno, "%s: cannot remove: %s", j->path, strerror(errno));
	return 0;
}

/* ---- on the loop ----------------------------------------------------------- */

static void dropbox__submit(struct dropbox *db, const char *path, const char *ns);

static void dropbox__job_free(void *p)
{
	struct dropbox__job *j = p;
	for (size_t i = 0; i < j->nfails; i++) {
		free(j->fails[i].kind);
		free(j->fails[i].ns);
		free(j->fails[i].name);
		free(j->fails[i].msg);
	}
	free(j->fails);
	free(j->path);
	free(j->ns);
	free(j);
}

struct dropbox__done {
	struct dropbox__job *j; /* freed by the writer after done */
};

static void dropbox__done(void *data, const struct writer_result *res)
{
	struct dropbox__job *j = data;
	struct dropbox *db = j->db;
	if (res->status)
		log_warn("drop box %s: %s", j->path, res->msg);
	else if (!j->gone)
		log_info("drop box %s: filed %zu of %zu documents%s", j->path, j->filed, j->docs,
			 j->again ? "; it changed meanwhile, filing it again" : "");
	for (size_t i = 0; i < j->nfails; i++) {
		struct dropbox__failure *f = &j->fails[i];
		log_warn("drop box %s: document %zu (%s %s): %s", j->path, f->index, f->kind,
			 f->name, f->msg);
		/* In the document's namespace, or in default when it has none. */
		cleanup_free char *nsdir = xasprintf("%s/namespaces/%s", db->c->mount, f->ns);
		struct stat st;
		const char *ens = stat(nsdir, &st) == 0 ? f->ns : NULL;
		if (db->c->events)
			events_record_ref(db->c->events, "dropbox", NULL, f->kind, ens, f->name,
					  NULL, "Warning", "FailedApply",
					  "drop box %s, document %zu (%s %s): %s", j->path,
					  f->index, f->kind, f->name, f->msg);
	}
	uintptr_t state = (uintptr_t)keymap_get(db->busy, j->path);
	keymap_del(db->busy, j->path);
	if (j->again || (state & DROPBOX__AGAIN))
		dropbox__submit(db, j->path, j->ns);
}

static void dropbox__submit(struct dropbox *db, const char *path, const char *ns)
{
	uintptr_t state = (uintptr_t)keymap_get(db->busy, path);
	if (state) {
		keymap_set(db->busy, path, (void *)(state | DROPBOX__AGAIN));
		return;
	}
	keymap_set(db->busy, path, (void *)(uintptr_t)DROPBOX__RUNNING);
	struct dropbox__job *j = xcalloc(1, sizeof(*j));
	j->db = db;
	j->path = xstrdup(path);
	j->ns = ns ? xstrdup(ns) : NULL;
	writer_call(db->c->writer, dropbox__run, j, dropbox__job_free, 0, dropbox__done, j);
}

static bool dropbox__name(const char *name)
{
	return names_object_file(name, NULL);
}

/* Files every drop file of a folder (ns NULL: the top). */
static void dropbox__scan(struct dropbox *db, const char *ns)
{
	cleanup_free char *dir =
	    ns ? xasprintf("%s/namespaces/%s", db->c->mount, ns) : xstrdup(db->c->mount);
	cleanup_dir DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!dropbox__name(de->d_name) ||
		    (de->d_type != DT_REG && de->d_type != DT_UNKNOWN))
			continue;
		/* A scan can meet a file its writer has created but not yet
		 * written (cp opens, then writes): filed now it would be
		 * filed empty and removed under the writer. Its close
		 * brings it back here (IN_CLOSE_WRITE) with its content. */
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && st.st_size == 0)
			continue;
		cleanup_free char *path =
		    ns ? xasprintf("namespaces/%s/%s", ns, de->d_name) : xstrdup(de->d_name);
		dropbox__submit(db, path, ns);
	}
}

static void dropbox__watch_ns(struct dropbox *db, const char *ns)
{
	if (keymap_has(db->ns_wd, ns))
		return;
	cleanup_free char *dir = xasprintf("%s/namespaces/%s", db->c->mount, ns);
	int wd = inotify_add_watch(db->ifd, dir, DROPBOX__FILE_MASK | IN_ONLYDIR);
	if (wd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			log_warn("drop box: cannot watch %s: %s", dir, strerror(errno));
		return;
	}
	char wdk[16];
	snprintf(wdk, sizeof(wdk), "%d", wd);
	keymap_set(db->wd_ns, wdk, xstrdup(ns));
	keymap_set(db->ns_wd, ns, (void *)(uintptr_t)wd);
	dropbox__scan(db, ns);
}

static void dropbox__forget_wd(struct dropbox *db, int wd)
{
	char wdk[16];
	snprintf(wdk, sizeof(wdk), "%d", wd);
	char *ns = keymap_take(db->wd_ns, wdk);
	if (ns) {
		keymap_del(db->ns_wd, ns);
		free(ns);
	}
}

static void dropbox__on_event(struct dropbox *db, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		log_warn("drop box: inotify queue overflowed, looking at every folder");
		dropbox__scan(db, NULL);
		const char *ns;
		for (size_t i = 0; keymap_next(db->ns_wd, &i, &ns, NULL);)
			dropbox__scan(db, ns);
		return;
	}
	if (ev->mask & IN_IGNORED) {
		dropbox__forget_wd(db, ev->wd);
		return;
	}
	if (!ev->len)
		return;
	if (ev->wd == db->nsdir_wd) {
		if (!(ev->mask & IN_ISDIR) || ev->name[0] == '.')
			return;
		if (ev->mask & (IN_CREATE | IN_MOVED_TO))
			dropbox__watch_ns(db, ev->name);
		return;
	}
	if ((ev->mask & IN_ISDIR) || !dropbox__name(ev->name))
		return;
	if (ev->wd == db->root_wd) {
		dropbox__submit(db, ev->name, NULL);
		return;
	}
	char wdk[16];
	snprintf(wdk, sizeof(wdk), "%d", ev->wd);
	const char *ns = keymap_get(db->wd_ns, wdk);
	if (!ns)
		return;
	cleanup_free char *path = xasprintf("namespaces/%s/%s", ns, ev->name);
	cleanup_free char *nsc = xstrdup(ns);
	dropbox__submit(db, path, nsc);
}

static void dropbox__on_inotify(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct dropbox *db = data;
	char buf[16 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				log_error("drop box: inotify read: %s", strerror(errno));
			return;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			dropbox__on_event(db, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

struct dropbox *dropbox_new(struct ctrl *c, struct error **err)
{
	struct dropbox *db = xcalloc(1, sizeof(*db));
	db->c = c;
	db->root_wd = db->nsdir_wd = -1;
	db->wd_ns = keymap_new(free);
	db->ns_wd = keymap_new(NULL);
	db->busy = keymap_new(NULL);
	db->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (db->ifd < 0) {
		error_set(err, errno, "drop box: inotify_init1: %s", strerror(errno));
		dropbox_free(db);
		return NULL;
	}
	if (loop_add_fd(c->loop, db->ifd, LOOP_READ, dropbox__on_inotify, db, err) < 0) {
		close(db->ifd);
		db->ifd = -1;
		dropbox_free(db);
		return NULL;
	}
	cleanup_free char *nsdir = xasprintf("%s/namespaces", c->mount);
	db->root_wd = inotify_add_watch(db->ifd, c->mount, DROPBOX__FILE_MASK | IN_ONLYDIR);
	db->nsdir_wd = inotify_add_watch(db->ifd, nsdir, DROPBOX__NS_MASK);
	if (db->root_wd < 0 || db->nsdir_wd < 0) {
		error_set(err, errno, "drop box: cannot watch %s: %s", c->mount, strerror(errno));
		dropbox_free(db);
		return NULL;
	}
	/* Watch first, then look: nothing falls in between. */
	dropbox__scan(db, NULL);
	cleanup_dir DIR *d = opendir(nsdir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN))
			dropbox__watch_ns(db, de->d_name);
	return db;
}

void dropbox_free(struct dropbox *db)
{
	if (!db)
		return;
	if (db->ifd >= 0) {
		loop_del_fd(db->c->loop, db->ifd);
		close(db->ifd);
	}
	keymap_free(db->wd_ns);
	keymap_free(db->ns_wd);
	keymap_free(db->busy);
	free(db);
}
