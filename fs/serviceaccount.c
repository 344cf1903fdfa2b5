/* serviceaccount.c: the admission hook "serviceaccount" (serviceaccount.h)
 * and its index of the stored ServiceAccounts. It never reads the store or
 * the mount.
 *
 * The index says, for "ns/name", that the ServiceAccount is stored and
 * what its automountServiceAccountToken is. It changes only when a
 * ServiceAccount's write or deletion is committed (settle): a pod written
 * while its ServiceAccount is being created or deleted sees it either way,
 * as Kubernetes' pods see its informer. */
#include "serviceaccount.h"
#include "strmap.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

struct sa__index {
	pthread_mutex_t lock;
	struct strmap *accounts; /* "ns/name" -> int *: automount, -1 unset */
};

/* Kubernetes' utilrand alphabet: no vowels, no look-alike digits. */
static const char sa__alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

static void sa__suffix(char out[6])
{
	unsigned char r[5] = {0};
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		/* never short for 5 bytes; fall back on the clock all the same */
		uint64_t t = (uint64_t)(uintptr_t)out ^ (uint64_t)time(NULL);
		memcpy(r, &t, sizeof(r));
	}
	for (size_t i = 0; i < 5; i++)
		out[i] = sa__alphabet[r[i] % (sizeof(sa__alphabet) - 1)];
	out[5] = '\0';
}

static int sa__automount_of(const struct ynode *obj)
{
	bool b = false;
	if (ynode_bool(ynode_get(obj, "automountServiceAccountToken"), &b) < 0)
		return -1;
	return b ? 1 : 0;
}

bool serviceaccount_automount(const struct ynode *spec, int sa_automount)
{
	bool b = false;
	if (ynode_bool(ynode_get(spec, "automountServiceAccountToken"), &b) == 0)
		return b;
	return sa_automount != 0;
}

static bool sa__set_str(struct ynode *m, const char *key, const char *val)
{
	const char *cur = ynode_str(ynode_get(m, key));
	if (cur && !strcmp(cur, val))
		return false;
	ynode_set(m, key, ynode_new_str(val));
	return true;
}

/* The volume Kubernetes' plugin adds (as its defaults leave it). */
static struct ynode *sa__volume(const char *name)
{
	struct ynode *token = ynode_new_map();
	ynode_set(token, "expirationSeconds", ynode_new_int(SA_TOKEN_SECONDS));
	ynode_set(token, "path", ynode_new_str("token"));
	struct ynode *s1 = ynode_new_map();
	ynode_set(s1, "serviceAccountToken", token);

	struct ynode *item = ynode_new_map();
	ynode_set(item, "key", ynode_new_str("ca.crt"));
	ynode_set(item, "path", ynode_new_str("ca.crt"));
	struct ynode *items = ynode_new_seq();
	ynode_append(items, item);
	struct ynode *cm = ynode_new_map();
	ynode_set(cm, "items", items);
	ynode_set(cm, "name", ynode_new_str(SA_ROOT_CA_CONFIGMAP));
	struct ynode *s2 = ynode_new_map();
	ynode_set(s2, "configMap", cm);

	struct ynode *ref = ynode_new_map();
	ynode_set(ref, "apiVersion", ynode_new_str("v1"));
	ynode_set(ref, "fieldPath", ynode_new_str("metadata.namespace"));
	struct ynode *ditem = ynode_new_map();
	ynode_set(ditem, "fieldRef", ref);
	ynode_set(ditem, "path", ynode_new_str("namespace"));
	struct ynode *ditems = ynode_new_seq();
	ynode_append(ditems, ditem);
	struct ynode *dapi = ynode_new_map();
	ynode_set(dapi, "items", ditems);
	struct ynode *s3 = ynode_new_map();
	ynode_set(s3, "downwardAPI", dapi);

	struct ynode *sources = ynode_new_seq();
	ynode_append(sources, s1);
	ynode_append(sources, s2);
	ynode_append(sources, s3);
	struct ynode *proj = ynode_new_map();
	ynode_set(proj, "defaultMode", ynode_new_int(0644));
	ynode_set(proj, "sources", sources);
	struct ynode *vol = ynode_new_map();
	ynode_set(vol, "name", ynode_new_str(name));
	ynode_set(vol, "projected", proj);
	return vol;
}

static bool sa__has_prefix(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* Adds the mount to every container of list that mounts nothing at the
 * token's path; whether any did. */
static bool sa__mount_all(struct ynode *list, const char *volume)
{
	bool added = false;
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		struct ynode *c = ynode_item(list, i);
		if (c->type != YNODE_MAP)
			continue;
		struct ynode *mounts = ynode_get(c, "volumeMounts");
		bool taken = false;
		for (size_t j = 0; mounts && mounts->type == YNODE_SEQ && j < mounts->n; j++) {
			const char *p = ynode_path_str(ynode_item(mounts, j), "mountPath");
			taken = taken || (p && !strcmp(p, SA_TOKEN_MOUNT_PATH));
		}
		if (taken)
			continue;
		if (!mounts || mounts->type != YNODE_SEQ) {
			mounts = ynode_new_seq();
			ynode_set(c, "volumeMounts", mounts);
		}
		struct ynode *m = ynode_new_map();
		ynode_set(m, "mountPath", ynode_new_str(SA_TOKEN_MOUNT_PATH));
		ynode_set(m, "name", ynode_new_str(volume));
		ynode_set(m, "readOnly", ynode_new_bool(true));
		ynode_append(mounts, m);
		added = true;
	}
	return added;
}

bool serviceaccount_admit_spec(struct ynode *spec, bool automount, const char *suffix)
{
	const char *name = ynode_str(ynode_get(spec, "serviceAccountName"));
	if (!name || !*name)
		name = ynode_str(ynode_get(spec, "serviceAccount"));
	cleanup_free char *sa = xstrdup(name && *name ? name : "default");
	bool changed = sa__set_str(spec, "serviceAccountName", sa);
	changed = sa__set_str(spec, "serviceAccount", sa) || changed;
	if (!automount)
		return changed;

	/* A volume the pod has already (a kube-api-access-* of its own) is
	 * the one to mount, as Kubernetes' plugin finds it by its prefix. */
	struct ynode *vols = ynode_get(spec, "volumes");
	cleanup_free char *volume = NULL;
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n && !volume; i++) {
		const char *vn = ynode_path_str(ynode_item(vols, i), "name");
		if (sa__has_prefix(vn, SA_VOLUME_PREFIX))
			volume = xstrdup(vn);
	}
	bool have = volume != NULL;
	if (!volume)
		volume = xasprintf("%s%s", SA_VOLUME_PREFIX, suffix);
	bool needed = sa__mount_all(ynode_get(spec, "initContainers"), volume);
	needed = sa__mount_all(ynode_get(spec, "containers"), volume) || needed;
	if (needed && !have) {
		if (!vols || vols->type != YNODE_SEQ) {
			vols = ynode_new_seq();
			ynode_set(spec, "volumes", vols);
		}
		ynode_append(vols, sa__volume(volume));
	}
	return changed || needed;
}

/* The kube-api-access-* volume of spec, or NULL. */
static const struct ynode *sa__token_volume(const struct ynode *spec)
{
	const struct ynode *vols = ynode_get(spec, "volumes");
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++)
		if (sa__has_prefix(ynode_path_str(ynode_item(vols, i), "name"), SA_VOLUME_PREFIX))
			return ynode_item(vols, i);
	return NULL;
}

/* The mount at the token's path of the container named name in list. */
static const struct ynode *sa__token_mount(const struct ynode *list, const char *name)
{
	for (size_t i = 0; name && list && list->type == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *c = ynode_item(list, i);
		const char *cn = ynode_path_str(c, "name");
		if (!cn || strcmp(cn, name))
			continue;
		const struct ynode *mounts = ynode_get(c, "volumeMounts");
		for (size_t j = 0; mounts && mounts->type == YNODE_SEQ && j < mounts->n; j++) {
			const char *p = ynode_path_str(ynode_item(mounts, j), "mountPath");
			if (p && !strcmp(p, SA_TOKEN_MOUNT_PATH))
				return ynode_item(mounts, j);
		}
	}
	return NULL;
}

static bool sa__carry_mounts(struct ynode *list, const struct ynode *old_list, const char *vol)
{
	bool changed = false;
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		struct ynode *c = ynode_item(list, i);
		const char *cn = ynode_path_str(c, "name");
		const struct ynode *was = sa__token_mount(old_list, cn);
		if (!was || sa__token_mount(list, cn) || c->type != YNODE_MAP ||
		    strcmp(ynode_path_str(was, "name") ? ynode_path_str(was, "name") : "", vol))
			continue;
		struct ynode *mounts = ynode_get(c, "volumeMounts");
		if (!mounts || mounts->type != YNODE_SEQ) {
			mounts = ynode_new_seq();
			ynode_set(c, "volumeMounts", mounts);
		}
		ynode_append(mounts, ynode_clone(was));
		changed = true;
	}
	return changed;
}

bool serviceaccount_carry(struct ynode *pod, const struct ynode *old)
{
	struct ynode *spec = ynode_get(pod, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!spec || spec->type != YNODE_MAP || !os || os->type != YNODE_MAP)
		return false;
	bool changed = false;
	static const char *const names[] = {"serviceAccountName", "serviceAccount"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const char *now = ynode_str(ynode_get(spec, names[i]));
		const struct ynode *was = ynode_get(os, names[i]);
		if ((!now || !*now) && ynode_str(was) && *ynode_str(was)) {
			ynode_set(spec, names[i], ynode_clone(was));
			changed = true;
		}
	}
	const struct ynode *vol = sa__token_volume(os);
	const char *vname = ynode_path_str(vol, "name");
	if (!vol || !vname || sa__token_volume(spec))
		return changed;
	struct ynode *vols = ynode_get(spec, "volumes");
	if (!vols || vols->type != YNODE_SEQ) {
		vols = ynode_new_seq();
		ynode_set(spec, "volumes", vols);
	}
	ynode_append(vols, ynode_clone(vol));
	sa__carry_mounts(ynode_get(spec, "initContainers"), ynode_get(os, "initContainers"), vname);
	sa__carry_mounts(ynode_get(spec, "containers"), ynode_get(os, "containers"), vname);
	return true;
}

/* ---- the hook ------------------------------------------------------------ */

void *serviceaccount_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct sa__index *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	x->accounts = strmap_new();
	return x;
}

void serviceaccount_hook_fini(void *state)
{
	struct sa__index *x = state;
	if (!x)
		return;
	strmap_free(x->accounts, free);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

/* Needs the lock. */
static void sa__put(struct sa__index *x, const char *ns, const char *name, int automount)
{
	cleanup_free char *key = xasprintf("%s/%s", ns, name);
	int *v = xmalloc(sizeof(*v));
	*v = automount;
	free(strmap_set(x->accounts, key, v));
}

void serviceaccount_hook_load(void *state, const struct admission_request *rq)
{
	struct sa__index *x = state;
	if (!rq->obj || kinds_id(rq->kind) != KIND_SERVICE_ACCOUNT || !rq->ns || !rq->name)
		return;
	pthread_mutex_lock(&x->lock);
	sa__put(x, rq->ns, rq->name, sa__automount_of(rq->obj));
	pthread_mutex_unlock(&x->lock);
}

static bool sa__mirror(const struct ynode *pod)
{
	return ynode_get(ynode_path(pod, "metadata.annotations"), "kubernetes.io/config.mirror") !=
	       NULL;
}

int serviceaccount_hook_reserve(void *state, struct admission_request *rq, void **claim,
				struct error **err)
{
	struct sa__index *x = state;
	*claim = NULL;
	if (!rq->obj || rq->old || kinds_id(rq->kind) != KIND_POD || !rq->ns)
		return 0; /* ServiceAccounts enter the index at settle */
	struct ynode *spec = ynode_get(rq->obj, "spec");
	if (!spec || spec->type != YNODE_MAP || sa__mirror(rq->obj))
		return 0;
	const char *named = ynode_str(ynode_get(spec, "serviceAccountName"));
	if (!named || !*named)
		named = ynode_str(ynode_get(spec, "serviceAccount"));
	cleanup_free char *sa = xstrdup(named && *named ? named : "default");
	cleanup_free char *key = xasprintf("%s/%s", rq->ns, sa);
	cleanup_free char *dkey = xasprintf("%s/default", rq->ns);
	pthread_mutex_lock(&x->lock);
	const int *found = strmap_get(x->accounts, key);
	int automount = found ? *found : -1;
	bool ready = strmap_has(x->accounts, dkey);
	pthread_mutex_unlock(&x->lock);
	if (!found && ready)
		return error_set(err, EACCES,
				 "pods \"%s\" is forbidden: error looking up service account "
				 "%s/%s: serviceaccount \"%s\" not found",
				 rq->name, rq->ns, sa, sa);
	char suffix[6];
	sa__suffix(suffix);
	bool mount = found && serviceaccount_automount(spec, automount);
	if (serviceaccount_admit_spec(spec, mount, suffix)) {
		rq->changed = true;
		/* stored normalized, its keys sorted (object.h) */
		ynode_sort(spec);
	}
	return 0;
}

void serviceaccount_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	struct sa__index *x = state;
	(void)claim;
	if (kinds_id(rq->kind) != KIND_SERVICE_ACCOUNT || !rq->ns || !rq->name)
		return;
	pthread_mutex_lock(&x->lock);
	if (rq->obj) {
		sa__put(x, rq->ns, rq->name, sa__automount_of(rq->obj));
	} else {
		cleanup_free char *key = xasprintf("%s/%s", rq->ns, rq->name);
		free(strmap_del(x->accounts, key));
	}
	pthread_mutex_unlock(&x->lock);
}
