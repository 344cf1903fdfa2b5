/* logs.c: see logs.h. */
#include "logs.h"
#include "names.h"
#include "podlogs.h"
#include "util.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define LOGS_LOCK_R(t) pthread_rwlock_rdlock(tree_lock(t))
#define LOGS_LOCK_W(t) pthread_rwlock_wrlock(tree_lock(t))
#define LOGS_UNLOCK(t) pthread_rwlock_unlock(tree_lock(t))

bool logs_node(const struct node *n)
{
	return n->type == NODE_LOGS || n->type == NODE_LOGPOD || n->type == NODE_LOGFILE;
}

struct logs__ent {
	char *name;
	char *source;
	struct timespec mtime; /* a pod's log folder: its modification */
};

static void logs__ents_free(struct logs__ent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].source);
	}
	free(v);
}

static void logs__ents_put(struct logs__ent **v, size_t *n, const char *name, const char *source,
			   struct timespec mtime)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*v)[i].name, name) != 0)
			continue;
		/* the newer instance wins */
		if (podlogs_newer(source, &mtime, (*v)[i].source, &(*v)[i].mtime)) {
			free((*v)[i].source);
			(*v)[i].source = xstrdup(source);
			(*v)[i].mtime = mtime;
		}
		return;
	}
	*v = xrealloc(*v, sizeof(**v) * (*n + 1));
	(*v)[*n] = (struct logs__ent){xstrdup(name), xstrdup(source), mtime};
	(*n)++;
}

/* The pods of namespace ns that have log folders. */
static struct logs__ent *logs__scan_pods(const char *log_dir, const char *ns, size_t *n)
{
	struct logs__ent *v = NULL;
	*n = 0;
	cleanup_dir DIR *d = opendir(log_dir);
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		cleanup_free char *name = NULL;
		if (!podlogs_instance(de->d_name, ns, &name))
			continue;
		cleanup_free char *path = xasprintf("%s/%s", log_dir, de->d_name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			logs__ents_put(&v, n, name, path, st.st_mtim);
	}
	return v;
}

/* The containers of a pod's log folder, each with its newest log. */
static struct logs__ent *logs__scan_containers(const char *poddir, size_t *n)
{
	struct logs__ent *v = NULL;
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
		long best = podlogs_newest_restart(cd);
		if (best < 0)
			continue;
		cleanup_free char *name = xasprintf("%s.log", de->d_name);
		cleanup_free char *file = xasprintf("%s/%ld.log", cdir, best);
		logs__ents_put(&v, n, name, file, (struct timespec){0});
	}
	return v;
}

/* The names of the pods in the pods/ folder beside the logs folder dir
 * (tree lock held). */
static char **logs__pod_names(struct tree *t, struct node *dir, size_t *n)
{
	char **v = NULL;
	*n = 0;
	struct node *pods = dir->parent ? tree_child(t, dir->parent, "pods") : NULL;
	for (struct node *c = pods ? pods->first : NULL; c; c = c->next) {
		size_t len;
		if (c->type != NODE_OBJECT || c->pending || !names_object_file(c->name, &len))
			continue;
		v = xrealloc(v, sizeof(*v) * (*n + 1));
		v[(*n)++] = xstrndup(c->name, len);
	}
	return v;
}

/* Adds the remote logs (remotelogs.h) of the pods of names[nnames] that
 * have none here to v. */
static void logs__add_remote(struct remotelogs *rl, const char *ns, char **names, size_t nnames,
			     struct logs__ent **v, size_t *n)
{
	size_t keep = 0;
	for (size_t i = 0; i < nnames; i++) {
		bool local = false;
		for (size_t k = 0; k < *n && !local; k++)
			local = strcmp((*v)[k].name, names[i]) == 0;
		if (!local)
			names[keep++] = names[i];
		else
			free(names[i]);
	}
	size_t nr = 0;
	struct remotelogs_ent *r = remotelogs_pods(rl, ns, names, keep, &nr);
	for (size_t i = 0; i < nr; i++)
		logs__ents_put(v, n, r[i].name, r[i].source, (struct timespec){0});
	remotelogs_ents_free(r, nr);
	for (size_t i = 0; i < keep; i++)
		free(names[i]);
	free(names);
}

void logs_refresh(struct tree *t, const char *log_dir, struct remotelogs *rl, uint64_t ino)
{
	LOGS_LOCK_R(t);
	struct node *dir = tree_by_ino(t, ino);
	enum node_type type = dir ? dir->type : NODE_ROOT;
	cleanup_free char *ns = dir && dir->ns ? xstrdup(dir->ns) : NULL;
	cleanup_free char *source = dir && dir->source ? xstrdup(dir->source) : NULL;
	cleanup_free char *name = dir && dir->name ? xstrdup(dir->name) : NULL;
	size_t npods = 0;
	char **pods = rl && type == NODE_LOGS && ns ? logs__pod_names(t, dir, &npods) : NULL;
	LOGS_UNLOCK(t);
	struct logs__ent *v = NULL;
	size_t n = 0;
	if (type == NODE_LOGS && ns) {
		v = logs__scan_pods(log_dir, ns, &n);
		if (rl)
			logs__add_remote(rl, ns, pods, npods, &v, &n);
	} else if (type == NODE_LOGPOD && remotelogs_is_url(source) && ns && name) {
		struct remotelogs_ent *r = remotelogs_containers(rl, ns, name, source, &n);
		v = xcalloc(n ? n : 1, sizeof(*v));
		for (size_t i = 0; i < n; i++)
			v[i] = (struct logs__ent){
			    steal_pointer(&r[i].name), steal_pointer(&r[i].source), {0, 0}};
		remotelogs_ents_free(r, n);
	} else if (type == NODE_LOGPOD && source) {
		v = logs__scan_containers(source, &n);
	} else {
		return;
	}
	enum node_type child = type == NODE_LOGS ? NODE_LOGPOD : NODE_LOGFILE;
	LOGS_LOCK_W(t);
	dir = tree_by_ino(t, ino);
	if (dir && dir->parent) {
		for (struct node *c = dir->first, *next; c; c = next) {
			next = c->next;
			bool keep = false;
			for (size_t i = 0; i < n && !keep; i++)
				keep = strcmp(v[i].name, c->name) == 0;
			if (!keep)
				tree_unlink(t, c);
		}
		/* Only the logs of pods that exist: a deleted pod's output goes
		 * with it (and rm -r of a namespace is not stopped by it). */
		struct node *pods =
		    type == NODE_LOGS && dir->parent ? tree_child(t, dir->parent, "pods") : NULL;
		for (size_t i = 0; i < n; i++) {
			if (type == NODE_LOGS) {
				cleanup_free char *f = xasprintf("%s.yaml", v[i].name);
				struct node *p = pods ? tree_child(t, pods, f) : NULL;
				if (!p || p->pending) {
					struct node *stale = tree_child(t, dir, v[i].name);
					if (stale)
						tree_unlink(t, stale);
					continue;
				}
			}
			struct node *c = tree_child(t, dir, v[i].name);
			if (!c)
				c = tree_add(t, dir, v[i].name, child,
					     child == NODE_LOGPOD ? S_IFDIR | 0555
								  : S_IFREG | 0444);
			if (!c->source || strcmp(c->source, v[i].source) != 0) {
				free(c->source);
				c->source = xstrdup(v[i].source);
			}
		}
	}
	LOGS_UNLOCK(t);
	logs__ents_free(v, n);
}
void logs_file_stat(struct tree *t, uint64_t ino, struct stat *st)
{
	LOGS_LOCK_R(t);
	struct node *n = tree_by_ino(t, ino);
	cleanup_free char *source =
	    n && n->type == NODE_LOGFILE && n->source ? xstrdup(n->source) : NULL;
	LOGS_UNLOCK(t);
	struct stat disk;
	if (source && !remotelogs_is_url(source) && stat(source, &disk) == 0) {
		st->st_size = disk.st_size;
		st->st_blocks = disk.st_blocks;
		st->st_mtim = disk.st_mtim;
		st->st_ctim = disk.st_ctim;
	}
}

char *logs_remote_url(struct tree *t, uint64_t ino)
{
	LOGS_LOCK_R(t);
	struct node *n = tree_by_ino(t, ino);
	char *url = n && n->type == NODE_LOGFILE && remotelogs_is_url(n->source)
			? xstrdup(n->source)
			: NULL;
	LOGS_UNLOCK(t);
	return url;
}
