/* volumes.c: a pod's claims before its decision (volumes.h). */
#include "volumes.h"
#include "informer.h"
#include "pod.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct sched_volumes {
	struct informer *pvcs, *pvs, *classes;
	void (*on_change)(void *data);
	void *data;
};

static void sched_volumes__changed(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	(void)obj;
	struct sched_volumes *v = data;
	if (v->on_change)
		v->on_change(v->data);
}

static void sched_volumes__updated(void *data, const char *key, const struct ynode *old,
				   const struct ynode *obj)
{
	(void)old;
	sched_volumes__changed(data, key, obj);
}

struct sched_volumes *sched_volumes_new(struct loop *loop, const char *mount,
					void (*on_change)(void *data), void *data)
{
	struct sched_volumes *v = xcalloc(1, sizeof(*v));
	v->on_change = on_change;
	v->data = data;
	v->pvcs = informer_new(loop, mount, "persistentvolumeclaims", true);
	v->pvs = informer_new(loop, mount, "persistentvolumes", false);
	v->classes = informer_new(loop, mount, "storageclasses", false);
	static const struct informer_handlers h = {
	    .on_add = sched_volumes__changed,
	    .on_update = sched_volumes__updated,
	    .on_delete = sched_volumes__changed,
	};
	informer_add_handlers(v->pvcs, &h, v);
	informer_add_handlers(v->pvs, &h, v);
	informer_add_handlers(v->classes, &h, v);
	return v;
}

int sched_volumes_start(struct sched_volumes *v, struct error **err)
{
	if (informer_start(v->pvcs, err) < 0 || informer_start(v->pvs, err) < 0)
		return -1;
	/* a mount without StorageClasses (an older corral-fs) has no
	 * WaitForFirstConsumer class: every unbound claim is immediate */
	struct error *e = NULL;
	if (informer_start(v->classes, &e) < 0)
		error_free(e);
	return 0;
}

void sched_volumes_free(struct sched_volumes *v)
{
	if (!v)
		return;
	informer_free(v->pvcs);
	informer_free(v->pvs);
	informer_free(v->classes);
	free(v);
}

static bool sched_volumes__waits(const struct sched_volumes *v, const struct ynode *pvc)
{
	const char *cls = ynode_path_str(pvc, "spec.storageClassName");
	const struct ynode *sc = cls && *cls ? informer_get(v->classes, cls) : NULL;
	const char *mode = ynode_path_str(sc, "volumeBindingMode");
	return mode && !strcmp(mode, "WaitForFirstConsumer");
}

int sched_volumes_prepare(const struct sched_volumes *v, struct sched_pod *p, char **why)
{
	*why = NULL;
	for (size_t i = 0; i < p->nvolume_affinity; i++)
		ynode_free(p->volume_affinity[i]);
	p->nvolume_affinity = 0;
	bool unbound_immediate = false;
	for (size_t i = 0; i < p->nclaims; i++) {
		cleanup_free char *key = xasprintf("%s/%s", p->ns, p->claims[i]);
		const struct ynode *pvc = informer_get(v->pvcs, key);
		if (!pvc) {
			*why = xasprintf("persistentvolumeclaim \"%s\" not found", p->claims[i]);
			return -1;
		}
		if (object_is_deleting(pvc)) {
			*why = xasprintf("persistentvolumeclaim \"%s\" is being deleted",
					 p->claims[i]);
			return -1;
		}
		const char *vn = ynode_path_str(pvc, "spec.volumeName");
		if (!vn || !*vn) {
			if (!sched_volumes__waits(v, pvc))
				unbound_immediate = true;
			continue;
		}
		const struct ynode *pv = informer_get(v->pvs, vn);
		if (!pv) {
			*why = xasprintf("persistentvolume \"%s\" not found", vn);
			return -1;
		}
		const struct ynode *req = ynode_path(pv, "spec.nodeAffinity.required");
		if (!req || ynode_is_null(req))
			continue;
		p->volume_affinity = xrealloc(p->volume_affinity, (p->nvolume_affinity + 1) *
								      sizeof(*p->volume_affinity));
		p->volume_affinity[p->nvolume_affinity++] = ynode_clone(req);
	}
	if (unbound_immediate) {
		*why = xstrdup(SCHED_VOLUMES_UNBOUND_IMMEDIATE);
		return -1;
	}
	return 0;
}
