/* revision.c: ControllerRevisions shared by the DaemonSet and StatefulSet
 * controllers (see revision.h). Pure functions over ynode trees and the
 * owners index; no writes. */
#include "revision.h"
#include "obj.h"
#include "owners.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int revision__visit(void *data, const char *key, const struct ynode *rev)
{
	(void)key;
	struct revision_list *r = data;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 8;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = rev;
	return 0;
}

static int revision__by_number(const void *a, const void *b)
{
	long long x = obj_int(*(const struct ynode *const *)a, "revision", 0);
	long long y = obj_int(*(const struct ynode *const *)b, "revision", 0);
	return x < y ? -1 : x > y;
}

void revision_collect(const struct owners *owned, const char *owner_uid, struct revision_list *list)
{
	owners_foreach_owned(owned, owner_uid, revision__visit, list);
	if (list->n > 1) /* none: the array is NULL, which qsort may not take */
		qsort(list->v, list->n, sizeof(*list->v), revision__by_number);
}

struct ynode *revision_data(const struct ynode *owner)
{
	const struct ynode *t = ynode_path(owner, "spec.template");
	struct ynode *tmpl = t ? ynode_clone(t) : ynode_new_map();
	ynode_set(tmpl, "$patch", ynode_new_str("replace"));
	struct ynode *data = ynode_new_map();
	ynode_set(ynode_get_map(data, "spec"), "template", tmpl);
	ynode_sort(data);
	return data;
}

struct ynode *revision_template(const struct ynode *rev)
{
	const struct ynode *t = ynode_path(rev, "data.spec.template");
	if (!t || t->type != YNODE_MAP)
		return ynode_new_map();
	struct ynode *c = ynode_clone(t);
	ynode_del(c, "$patch");
	return c;
}

struct ynode *revision_new(const struct ynode *owner, const char *kind, const char *hash,
			   long long number, struct ynode *data)
{
	struct ynode *cr = ynode_new_map();
	ynode_set(cr, "apiVersion", ynode_new_str("apps/v1"));
	ynode_set(cr, "kind", ynode_new_str("ControllerRevision"));
	struct ynode *md = ynode_get_map(cr, "metadata");
	cleanup_free char *name = xasprintf("%s-%s", obj_name(owner), hash);
	ynode_set(md, "name", ynode_new_str(name));
	ynode_set(md, "namespace", ynode_new_str(obj_namespace(owner)));
	const struct ynode *tl = ynode_path(owner, "spec.template.metadata.labels");
	struct ynode *labels = tl && tl->type == YNODE_MAP ? ynode_clone(tl) : ynode_new_map();
	ynode_set(labels, REVISION_HASH_LABEL, ynode_new_str(hash));
	ynode_set(md, "labels", labels);
	const struct ynode *ann = ynode_path(owner, "metadata.annotations");
	if (ann && ann->type == YNODE_MAP && ann->n)
		ynode_set(md, "annotations", ynode_clone(ann));
	obj_add_owner_ref(
	    cr, obj_owner_ref_new("apps/v1", kind, obj_name(owner), obj_uid(owner), true));
	ynode_set(cr, "data", data);
	ynode_set(cr, "revision", ynode_new_int(number));
	return cr;
}

const struct ynode *revision_split(struct revision_list *list, const struct ynode *data,
				   const struct ynode **dups, size_t *ndups, long long *max_old)
{
	const struct ynode *cur = NULL;
	size_t keep = 0;
	*ndups = 0;
	*max_old = 0;
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *r = list->v[i];
		if (!ynode_equal(ynode_get(r, "data"), data)) {
			long long n = obj_int(r, "revision", 0);
			if (n > *max_old)
				*max_old = n;
			list->v[keep++] = r;
			continue;
		}
		if (cur) /* a duplicate: the newest number stays */
			dups[(*ndups)++] = cur;
		cur = r;
	}
	list->n = keep;
	return cur;
}

int revision_mutate_number(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	long long want = (long long)(intptr_t)arg;
	if (obj_int(obj, "revision", 0) >= want)
		return 0;
	ynode_set(obj, "revision", ynode_new_int(want));
	return 1;
}

size_t revision_excess(const struct revision_list *list, long long limit,
		       bool (*in_use)(void *arg, const char *hash), void *arg,
		       const struct ynode **out)
{
	if (limit < 0 || (long long)list->n <= limit)
		return 0;
	long long excess = (long long)list->n - limit;
	size_t n = 0;
	for (size_t i = 0; i < list->n && excess > 0; i++) {
		const char *h = obj_label(list->v[i], REVISION_HASH_LABEL);
		if (h && in_use && in_use(arg, h))
			continue;
		out[n++] = list->v[i];
		excess--;
	}
	return n;
}
