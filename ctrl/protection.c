/* protection.c: the pvc-protection and pv-protection controllers
 * (protection.h). */
#include "protection.h"
#include "ctrl.h"
#include "log.h"
#include "obj.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct protection {
	struct ctrl *c;
	bool volumes;
	struct informer *objs; /* claims or volumes */
	struct informer *pods; /* pvc-protection only */
	struct workqueue *q;
};

bool protection_pod_uses_claim(const struct ynode *pod, const char *claim)
{
	if (!claim || pod_is_terminal(pod))
		return false;
	const struct ynode *vols = ynode_path(pod, "spec.volumes");
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++) {
		const char *cn =
		    ynode_path_str(ynode_item(vols, i), "persistentVolumeClaim.claimName");
		if (cn && !strcmp(cn, claim))
			return true;
	}
	return false;
}

bool protection_volume_in_use(const struct ynode *pv)
{
	const char *phase = ynode_path_str(pv, "status.phase");
	return phase && !strcmp(phase, "Bound");
}

bool protection_has_finalizer(const struct ynode *o, const char *fin)
{
	const struct ynode *f = ynode_path(o, "metadata.finalizers");
	for (size_t i = 0; f && f->type == YNODE_SEQ && i < f->n; i++) {
		const char *s = ynode_str(ynode_item(f, i));
		if (s && !strcmp(s, fin))
			return true;
	}
	return false;
}

int protection_remove_finalizer(struct ynode *o, const char *fin)
{
	struct ynode *md = ynode_get(o, "metadata");
	struct ynode *f = ynode_get(md, "finalizers");
	if (!ynode_seq_remove_str(f, fin))
		return 0;
	if (!f->n)
		ynode_del(md, "finalizers");
	return 1;
}

struct protection__arg {
	const char *fin;
	bool volumes;
};

/* On a worker: re-checked on the object read. */
static int protection__mutate(struct ynode *o, void *arg, struct error **err)
{
	(void)err;
	const struct protection__arg *a = arg;
	if (!object_is_deleting(o))
		return 0;
	if (a->volumes && protection_volume_in_use(o))
		return 0;
	return protection_remove_finalizer(o, a->fin);
}

static void protection__done(void *data, const struct writer_result *res)
{
	char *key = data;
	if (res->status && res->status != ENOENT)
		log_warn("protection: %s: %s", key, res->msg);
	else if (!res->status && res->changed)
		log_info("protection: removed the finalizer of %s", key);
	free(key);
}

struct protection__find {
	const char *claim;
	bool used;
};

static int protection__pod_visit(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct protection__find *f = data;
	if (protection_pod_uses_claim(pod, f->claim)) {
		f->used = true;
		return 1;
	}
	return 0;
}

static int protection__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct protection *p = data;
	const struct ynode *o = informer_get(p->objs, key);
	const char *fin = p->volumes ? PROTECTION_PV_FINALIZER : PROTECTION_PVC_FINALIZER;
	if (!o || !object_is_deleting(o) || !protection_has_finalizer(o, fin))
		return 0;
	if (p->volumes) {
		if (protection_volume_in_use(o))
			return 0;
	} else {
		struct protection__find f = {.claim = obj_name(o)};
		informer_foreach(p->pods, obj_namespace(o), protection__pod_visit, &f);
		if (f.used)
			return 0;
	}
	static const struct protection__arg pvc = {PROTECTION_PVC_FINALIZER, false};
	static const struct protection__arg pv = {PROTECTION_PV_FINALIZER, true};
	cleanup_free char *path =
	    obj_path(p->volumes ? "persistentvolumes" : "persistentvolumeclaims", obj_namespace(o),
		     obj_name(o));
	writer_update(p->c->writer, path, protection__mutate, (void *)(p->volumes ? &pv : &pvc),
		      NULL, 0, protection__done, xstrdup(key));
	return 0;
}

static void protection__on_obj(void *data, const char *key, const struct ynode *obj)
{
	struct protection *p = data;
	if (object_is_deleting(obj))
		workqueue_add(p->q, key);
}

static void protection__on_obj_update(void *data, const char *key, const struct ynode *old,
				      const struct ynode *obj)
{
	(void)old;
	protection__on_obj(data, key, obj);
}

/* A pod that goes or stops frees its claims. */
static void protection__pod_claims(struct protection *p, const struct ynode *pod)
{
	const struct ynode *vols = ynode_path(pod, "spec.volumes");
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++) {
		const char *cn =
		    ynode_path_str(ynode_item(vols, i), "persistentVolumeClaim.claimName");
		if (!cn)
			continue;
		cleanup_free char *key = obj_key(obj_namespace(pod), cn);
		const struct ynode *pvc = informer_get(p->objs, key);
		if (pvc && object_is_deleting(pvc))
			workqueue_add(p->q, key);
	}
}

static void protection__on_pod_update(void *data, const char *key, const struct ynode *old,
				      const struct ynode *obj)
{
	(void)key;
	(void)old;
	if (pod_is_terminal(obj))
		protection__pod_claims(data, obj);
}

static void protection__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	protection__pod_claims(data, old);
}

struct protection *protection_new(struct ctrl *c, bool volumes)
{
	struct protection *p = xcalloc(1, sizeof(*p));
	p->c = c;
	p->volumes = volumes;
	p->objs = ctrl_informer(c, volumes ? "persistentvolumes" : "persistentvolumeclaims");
	p->q = workqueue_new(c->loop, volumes ? "pv-protection" : "pvc-protection", NULL);
	workqueue_set_handler(p->q, protection__sync, p);
	struct informer_handlers h = {.on_add = protection__on_obj,
				      .on_update = protection__on_obj_update};
	informer_add_handlers(p->objs, &h, p);
	if (!volumes) {
		p->pods = ctrl_informer(c, "pods");
		struct informer_handlers hp = {.on_update = protection__on_pod_update,
					       .on_delete = protection__on_pod_delete};
		informer_add_handlers(p->pods, &hp, p);
	}
	return p;
}

void protection_free(struct protection *p)
{
	if (!p)
		return;
	workqueue_free(p->q);
	free(p);
}
