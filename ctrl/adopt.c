/* adopt.c: claims, and the mutations that adopt and release.
 *
 * This file must never change an object another controller owns: every
 * mutation looks at the controller reference of the object it read. */
#include "adopt.h"
#include "obj.h"
#include "pod.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* An adopt_write in flight: the owner, copied. */
struct adopt__job {
	struct adopt_owner o;
	char *api_version, *kind, *name, *ns, *uid;
	enum adopt_claim what;
	adopt_filter_fn filter;
};

void adopt_owner_init(struct adopt_owner *o, const struct ynode *owner, const char *api_version,
		      const char *kind)
{
	memset(o, 0, sizeof(*o));
	o->api_version = api_version;
	o->kind = kind;
	o->name = obj_name(owner);
	o->ns = obj_namespace(owner);
	o->uid = obj_uid(owner);
	o->deleting = object_is_deleting(owner);
}

static bool adopt__same_ns(const char *a, const char *b)
{
	return !a || !*a || (b && !strcmp(a, b));
}

enum adopt_claim adopt_claim(const struct adopt_owner *o, const struct selector *sel,
			     const struct ynode *obj)
{
	if (!o->uid || !*o->uid)
		return ADOPT_IGNORE;
	const struct ynode *ref = obj_controller_ref(obj);
	bool matches = selector_matches(sel, ynode_path(obj, "metadata.labels"));
	if (ref) {
		const char *ruid = ynode_str(ynode_get(ref, "uid"));
		if (!ruid || strcmp(ruid, o->uid) != 0)
			return ADOPT_IGNORE;
		if (matches)
			return ADOPT_KEEP;
		return o->deleting ? ADOPT_IGNORE : ADOPT_RELEASE;
	}
	if (!matches || o->deleting || object_is_deleting(obj) ||
	    !adopt__same_ns(o->ns, obj_namespace(obj)))
		return ADOPT_IGNORE;
	return ADOPT_ADOPT;
}

int adopt_apply(struct ynode *obj, const struct adopt_owner *o, enum adopt_claim what,
		adopt_filter_fn filter)
{
	if (!o->uid || !*o->uid)
		return 0;
	if (what == ADOPT_RELEASE)
		return obj_remove_owner_refs(obj, o->uid) > 0;
	if (what != ADOPT_ADOPT)
		return 0;
	/* Someone took it, or it went, meanwhile. */
	if (obj_controller_ref(obj) || object_is_deleting(obj) || (filter && !filter(obj)))
		return 0;
	obj_add_owner_ref(obj, obj_owner_ref_new(o->api_version, o->kind, o->name, o->uid, true));
	return 1;
}

static int adopt__mutate(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	struct adopt__job *j = arg;
	return adopt_apply(obj, &j->o, j->what, j->filter);
}

static char *adopt__dup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void adopt__job_free(void *p)
{
	struct adopt__job *j = p;
	free(j->api_version);
	free(j->kind);
	free(j->name);
	free(j->ns);
	free(j->uid);
	free(j);
}

void adopt_write(struct writer *w, const char *path, const struct adopt_owner *o,
		 enum adopt_claim what, adopt_filter_fn filter, writer_done_fn done, void *data)
{
	struct adopt__job *j = xcalloc(1, sizeof(*j));
	j->o.api_version = j->api_version = adopt__dup(o->api_version);
	j->o.kind = j->kind = adopt__dup(o->kind);
	j->o.name = j->name = adopt__dup(o->name);
	j->o.ns = j->ns = adopt__dup(o->ns);
	j->o.uid = j->uid = adopt__dup(o->uid);
	j->o.deleting = o->deleting;
	j->what = what;
	j->filter = filter;
	writer_update(w, path, adopt__mutate, j, adopt__job_free, 0, done, data);
}

char *adopt_resolve_owner(struct informer *owners, const char *kind, const struct ynode *obj,
			  bool *controlled)
{
	const struct ynode *ref = obj_controller_ref(obj);
	if (controlled)
		*controlled = ref != NULL;
	const char *rkind = ref ? ynode_str(ynode_get(ref, "kind")) : NULL;
	const char *name = ref ? ynode_str(ynode_get(ref, "name")) : NULL;
	const char *uid = ref ? ynode_str(ynode_get(ref, "uid")) : NULL;
	if (!rkind || strcmp(rkind, kind) != 0 || !name)
		return NULL;
	char *key = obj_key(obj_namespace(obj), name);
	const struct ynode *owner = informer_get(owners, key);
	if (owner && uid && obj_uid(owner) && !strcmp(uid, obj_uid(owner)))
		return key;
	free(key);
	return NULL;
}
