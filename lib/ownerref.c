/* ownerref.c: owner references (see ownerref.h). */
#include "ownerref.h"

#include <string.h>

const struct ynode *ownerref_controller(const struct ynode *o)
{
	const struct ynode *refs = ynode_path(o, "metadata.ownerReferences");
	if (!refs || refs->type != YNODE_SEQ)
		return NULL;
	for (size_t i = 0; i < refs->n; i++) {
		bool ctl = false;
		const struct ynode *ref = ynode_item(refs, i);
		if (ref->type == YNODE_MAP && ynode_bool(ynode_get(ref, "controller"), &ctl) == 0 &&
		    ctl)
			return ref;
	}
	return NULL;
}

struct ynode *ownerref_new(const char *api_version, const char *kind, const char *name,
			   const char *uid, bool controller)
{
	struct ynode *ref = ynode_new_map();
	ynode_set(ref, "apiVersion", ynode_new_str(api_version));
	ynode_set(ref, "kind", ynode_new_str(kind));
	ynode_set(ref, "name", ynode_new_str(name));
	ynode_set(ref, "uid", ynode_new_str(uid));
	if (controller) {
		ynode_set(ref, "controller", ynode_new_bool(true));
		ynode_set(ref, "blockOwnerDeletion", ynode_new_bool(true));
	}
	return ref;
}

void ownerref_add(struct ynode *o, struct ynode *ref)
{
	struct ynode *md = ynode_get_map(o, "metadata");
	struct ynode *refs = ynode_get(md, "ownerReferences");
	if (!refs || refs->type != YNODE_SEQ) {
		refs = ynode_new_seq();
		ynode_set(md, "ownerReferences", refs);
	}
	ynode_append(refs, ref);
}

int ownerref_remove(struct ynode *o, const char *uid)
{
	struct ynode *md = ynode_get(o, "metadata");
	struct ynode *refs = ynode_get(md, "ownerReferences");
	if (!refs || refs->type != YNODE_SEQ)
		return 0;
	int removed = 0;
	size_t j = 0;
	for (size_t i = 0; i < refs->n; i++) {
		struct ynode *ref = refs->items[i];
		const char *u = ynode_str(ynode_get(ref, "uid"));
		if (u && !strcmp(u, uid)) {
			ynode_free(ref);
			removed++;
		} else {
			refs->items[j++] = ref;
		}
	}
	refs->n = j;
	if (j == 0)
		ynode_del(md, "ownerReferences");
	return removed;
}
