/* logs.c: see logs.h. */
#include "logs.h"
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
	time_t mtime;
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
			   time_t mtime)
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
			logs__ents_put(&v, n, name, path, st.st_mtime);
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
		logs__ents_put(&v, n, name, file, 0);
	}
	return v;
}

void logs_refresh(struct tree *t, const char *log_dir, uint64_t ino)
{
	LOGS_LOCK_R(t);
	struct node *dir = tree_by_ino(t, ino);
	enum node_type type = dir ? dir->type : NODE_ROOT;
	cleanup_free char *ns = dir && dir->ns ? xstrdup(dir->ns) : NULL;
	cleanup_free char *source = dir && dir->source ? xstrdup(dir->source) : NULL;
	LOGS_UNLOCK(t);
	struct logs__ent *v = NULL;
	size_t n = 0;
	if (type == NODE_LOGS && ns)
		v = logs__scan_pods(log_dir, ns, &n);
	else if (type == NODE_LOGPOD && source)
		v = logs__scan_containers(source, &n);
	else
		return;
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
	if (source && stat(source, &disk) == 0) {
		st->st_size = disk.st_size;
		st->st_blocks = disk.st_blocks;
		st->st_mtim = disk.st_mtim;
		st->st_ctim = disk.st_ctim;
	}
}
