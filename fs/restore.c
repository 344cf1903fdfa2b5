/* restore.c: see restore.h. An object the history holds but that no longer
 * validates, or that has no place in the tree, is skipped and logged:
 * the rest of the cluster comes back. */
#include "restore.h"
#include "kinds.h"
#include "log.h"
#include "object.h"
#include "treepath.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct restore__state {
	struct store *store;
	size_t restored, skipped;
};

/* The kind of namespaces/<name>.yaml. */
static const struct kind_info *restore__namespace_kind(void)
{
	for (size_t i = 0; i < kinds_count(); i++)
		if (kinds_at(i)->namespace_object)
			return kinds_at(i);
	return NULL;
}

static int restore__one(void *data, const char *path, const char *yaml, size_t len)
{
	struct restore__state *rs = data;
	struct treepath tp;
	if (treepath_parse(path, &tp, NULL) < 0)
		return 0;
	cleanup_free char *ns = tp.ns, *plural = tp.plural, *name = tp.name;
	const struct kind_info *k = NULL;
	if (!ns && strcmp(plural, "namespaces") == 0)
		k = restore__namespace_kind();
	else
		k = kinds_by_plural(plural);
	if (!k || (ns && !k->namespaced)) {
		rs->skipped++;
		return 0;
	}
	struct object_build b = {.kind = k, .ns = ns, .name = name, .text = yaml, .len = len};
	struct error *err = NULL;
	if (object_build(&b, &err) < 0) {
		log_warn("restore: %s: %s", path, err->msg);
		error_free(err);
		rs->skipped++;
		return 0;
	}
	/* Already in the history: not queued again. */
	cleanup_free char *key = treepath_key(plural, ns, name);
	struct store_change c = {.key = key, .obj = b.obj, .decl_changed = true};
	int r = store_apply(rs->store, &c, &err);
	free(c.yaml);
	object_build_clear(&b);
	if (r < 0) {
		log_warn("restore: %s: %s", path, err ? err->msg : "?");
		error_free(err);
		rs->skipped++;
		return 0;
	}
	rs->restored++;
	return 0;
}

int restore_from_history(struct store *store, struct history *h, struct error **err)
{
	if (!store_is_empty(store))
		return error_set(err, EEXIST,
				 "restore: the live store is not empty; move it away first");
	struct restore__state rs = {.store = store};
	/* Revisions go on from the history's, or new changes would look old
	 * to the history writer. */
	int r = store_raise_revision(store, history_revision(h), err);
	if (r < 0)
		return r;
	r = history_foreach_head(h, restore__one, &rs, err);
	if (r < 0)
		return r;
	log_info("restore: %zu objects from the history, %zu skipped", rs.restored, rs.skipped);
	return 0;
}
