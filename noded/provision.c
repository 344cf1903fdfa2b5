/* provision.c: local-path volumes' folders on this node (provision.h),
 * from an informer of persistentvolumes. */
#include "provision.h"
#include "informer.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct provision {
	struct informer *inf;
	char *node;
	char *dir;
};

static const char *provision__annotation(const struct ynode *o, const char *key)
{
	const struct ynode *a = ynode_path(o, "metadata.annotations");
	return a && a->type == YNODE_MAP ? ynode_str(ynode_get(a, key)) : NULL;
}

/* Whether the volume's required nodeAffinity names node by hostname (as
 * the provisioner writes it). */
static bool provision__on_node(const struct ynode *pv, const char *node)
{
	const struct ynode *terms = ynode_path(pv, "spec.nodeAffinity.required.nodeSelectorTerms");
	for (size_t i = 0; terms && terms->type == YNODE_SEQ && i < terms->n; i++) {
		const struct ynode *exprs = ynode_get(ynode_item(terms, i), "matchExpressions");
		for (size_t j = 0; exprs && exprs->type == YNODE_SEQ && j < exprs->n; j++) {
			const struct ynode *e = ynode_item(exprs, j);
			const char *key = ynode_path_str(e, "key");
			const char *op = ynode_path_str(e, "operator");
			const struct ynode *vals = ynode_get(e, "values");
			if (!key || strcmp(key, "kubernetes.io/hostname") || !op ||
			    strcmp(op, "In"))
				continue;
			for (size_t k = 0; vals && vals->type == YNODE_SEQ && k < vals->n; k++) {
				const char *v = ynode_str(ynode_item(vals, k));
				if (v && !strcmp(v, node))
					return true;
			}
		}
	}
	return false;
}

char *provision_folder(const struct ynode *pv, const char *node, const char *dir)
{
	const char *by = provision__annotation(pv, PROVISION_ANN_PROVISIONER);
	const char *name = ynode_path_str(pv, "metadata.name");
	const char *path = ynode_path_str(pv, "spec.hostPath.path");
	if (!path)
		path = ynode_path_str(pv, "spec.local.path");
	if (!by || strcmp(by, PROVISION_PROVISIONER) || !name || !path || !dir)
		return NULL;
	if (strncmp(name, "pvc-", 4) || strchr(name, '/') || !strcmp(name + 4, "") ||
	    strstr(name, ".."))
		return NULL;
	if (!provision__on_node(pv, node))
		return NULL;
	char *want = xasprintf("%s/%s", dir, name);
	if (strcmp(want, path)) {
		free(want);
		return NULL; /* not our folder's place: never touched */
	}
	return want;
}

enum provision_action provision_decide(const struct ynode *pv, bool deleted)
{
	const char *policy = ynode_path_str(pv, "spec.persistentVolumeReclaimPolicy");
	bool del = policy && !strcmp(policy, "Delete");
	const char *phase = ynode_path_str(pv, "status.phase");
	const char *dts = ynode_path_str(pv, "metadata.deletionTimestamp");
	bool deleting = dts && *dts;
	if (deleted || deleting || (phase && !strcmp(phase, "Released")))
		return del ? PROVISION_REMOVE : PROVISION_NOTHING;
	if (phase && !strcmp(phase, "Failed"))
		return PROVISION_NOTHING;
	return PROVISION_CREATE;
}

static int provision__rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		log_warn("provision: cannot remove %s: %s", path, strerror(errno));
	return 0;
}

static void provision__apply(struct provision *p, const struct ynode *pv, bool deleted)
{
	cleanup_free char *folder = provision_folder(pv, p->node, p->dir);
	if (!folder)
		return;
	struct stat st;
	bool exists = lstat(folder, &st) == 0;
	switch (provision_decide(pv, deleted)) {
	case PROVISION_CREATE: {
		if (exists)
			return;
		int r = util_mkdir_p(folder, 0777);
		if (r < 0) {
			log_warn("provision: cannot make %s: %s", folder, strerror(-r));
			return;
		}
		chmod(folder, 0777); /* whatever the umask: any pod's user writes */
		log_info("provision: made %s", folder);
		return;
	}
	case PROVISION_REMOVE:
		if (!exists)
			return;
		nftw(folder, provision__rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		log_info("provision: removed %s (reclaim policy Delete)", folder);
		return;
	case PROVISION_NOTHING:
		return;
	}
}

static void provision__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	provision__apply(data, obj, false);
}

static void provision__on_update(void *data, const char *key, const struct ynode *old,
				 const struct ynode *obj)
{
	(void)key;
	(void)old;
	provision__apply(data, obj, false);
}

static void provision__on_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	provision__apply(data, old, true);
}

struct provision *provision_new(struct loop *loop, const char *mount, const char *node,
				const char *dir)
{
	struct provision *p = xcalloc(1, sizeof(*p));
	p->node = xstrdup(node);
	p->dir = xstrdup(dir);
	p->inf = informer_new(loop, mount, "persistentvolumes", false);
	static const struct informer_handlers h = {
	    .on_add = provision__on_add,
	    .on_update = provision__on_update,
	    .on_delete = provision__on_delete,
	};
	informer_add_handlers(p->inf, &h, p);
	return p;
}

int provision_start(struct provision *p, struct error **err)
{
	int r = util_mkdir_p(p->dir, 0755);
	if (r < 0)
		log_warn("provision: cannot make %s: %s", p->dir, strerror(-r));
	return informer_start(p->inf, err);
}

void provision_free(struct provision *p)
{
	if (!p)
		return;
	informer_free(p->inf);
	free(p->node);
	free(p->dir);
	free(p);
}
