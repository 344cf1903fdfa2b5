/* owners.c: controller uid -> keys, namespace -> orphan keys, both as
 * sets (keymaps of keymaps). The keys are collected before callbacks run,
 * so a callback may change the informer's cache (but not run the loop). */
#include "owners.h"
#include "keymap.h"
#include "obj.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct owners {
	struct informer *inf;
	struct keymap *owned;	/* controller uid -> set of keys */
	struct keymap *orphans; /* namespace -> set of keys */
};

static void owners__set_free(void *p)
{
	keymap_free(p);
}

static void owners__add(struct keymap *m, const char *group, const char *key)
{
	struct keymap *set = keymap_get(m, group);
	if (!set) {
		set = keymap_new(NULL);
		keymap_set(m, group, set);
	}
	keymap_set(set, key, NULL);
}

static void owners__del(struct keymap *m, const char *group, const char *key)
{
	struct keymap *set = keymap_get(m, group);
	if (!set)
		return;
	keymap_del(set, key);
	if (!keymap_count(set))
		keymap_del(m, group);
}

static const char *owners__uid(const struct ynode *obj)
{
	const struct ynode *ref = obj_controller_ref(obj);
	return ref ? ynode_str(ynode_get(ref, "uid")) : NULL;
}

static void owners__index(struct owners *o, const char *key, const struct ynode *obj, bool add)
{
	const char *uid = owners__uid(obj);
	const char *ns = obj_namespace(obj);
	if (uid)
		(add ? owners__add : owners__del)(o->owned, uid, key);
	else
		(add ? owners__add : owners__del)(o->orphans, ns ? ns : "", key);
}

static void owners__on_add(void *data, const char *key, const struct ynode *obj)
{
	owners__index(data, key, obj, true);
}

static void owners__on_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *obj)
{
	const char *a = owners__uid(old), *b = owners__uid(obj);
	if ((!a && !b) || (a && b && !strcmp(a, b)))
		return;
	owners__index(data, key, old, false);
	owners__index(data, key, obj, true);
}

static void owners__on_delete(void *data, const char *key, const struct ynode *old)
{
	owners__index(data, key, old, false);
}

struct owners *owners_new(struct informer *inf)
{
	struct owners *o = xcalloc(1, sizeof(*o));
	o->inf = inf;
	o->owned = keymap_new(owners__set_free);
	o->orphans = keymap_new(owners__set_free);
	struct informer_handlers h = {
	    .on_add = owners__on_add,
	    .on_update = owners__on_update,
	    .on_delete = owners__on_delete,
	};
	informer_add_handlers(inf, &h, o);
	return o;
}

void owners_free(struct owners *o)
{
	if (!o)
		return;
	keymap_free(o->owned);
	keymap_free(o->orphans);
	free(o);
}

static int owners__visit(const struct owners *o, const struct keymap *set, informer_visit_cb cb,
			 void *data)
{
	if (!set)
		return 0;
	size_t n = keymap_count(set), k = 0;
	char **keys = xcalloc(n + 1, sizeof(*keys));
	const char *key;
	for (size_t i = 0; keymap_next(set, &i, &key, NULL) && k < n;)
		keys[k++] = xstrdup(key);
	int r = 0;
	for (size_t i = 0; i < k; i++) {
		const struct ynode *obj = r ? NULL : informer_get(o->inf, keys[i]);
		if (obj)
			r = cb(data, keys[i], obj);
		free(keys[i]);
	}
	free(keys);
	return r;
}

int owners_foreach_owned(const struct owners *o, const char *uid, informer_visit_cb cb, void *data)
{
	return uid ? owners__visit(o, keymap_get(o->owned, uid), cb, data) : 0;
}

int owners_foreach_orphan(const struct owners *o, const char *ns, informer_visit_cb cb, void *data)
{
	return owners__visit(o, keymap_get(o->orphans, ns ? ns : ""), cb, data);
}
