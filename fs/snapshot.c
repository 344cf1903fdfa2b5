/* snapshot.c: see snapshot.h. An entry holds what a write of the object
 * would have queued (write.c): its path is its key and ".yaml", its text
 * the declared form. */
#include "snapshot.h"
#include "kinds.h"
#include "log.h"
#include "object.h"
#include "treepath.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct snapshot__state {
	struct store_outbox_entry *e;
	size_t n, cap;
};

static int snapshot__one(void *data, const char *key, const struct store_record *rec)
{
	struct snapshot__state *st = data;
	struct treepath tp;
	if (treepath_parse_key(key, &tp, NULL) < 0)
		return 0;
	const struct kind_info *k = kinds_by_plural(tp.plural);
	bool placed = k && (tp.ns ? k->namespaced : !k->namespaced);
	treepath_clear(&tp);
	cleanup_ynode struct ynode *obj = NULL;
	if (!placed || yaml_parse_one(rec->yaml, rec->len, &obj, NULL) < 0) {
		log_warn("history: %s is not a stored object of a known kind; left out", key);
		return 0;
	}
	char *declared = object_declared(k, obj);
	if (!declared)
		return 0;
	if (st->n == st->cap)
		st->e = xrealloc(st->e, (st->cap = st->cap * 2 + 64) * sizeof(*st->e));
	st->e[st->n++] = (struct store_outbox_entry){
	    .path = xasprintf("%s.yaml", key),
	    .yaml = declared,
	    .message = xasprintf("%s", key),
	    .author = xstrdup("corral <corral@localhost>"),
	    .when_ns = rec->mtime_ns,
	};
	return 0;
}

int snapshot_declared(struct store *s, struct store_outbox_entry **out, size_t *n, uint64_t *rev,
		      struct error **err)
{
	struct snapshot__state st = {0};
	*out = NULL;
	*n = 0;
	int r = store_snapshot(s, snapshot__one, &st, rev, err);
	if (r < 0) {
		store_outbox_free(st.e, st.n);
		return r;
	}
	for (size_t i = 0; i < st.n; i++)
		st.e[i].rv = *rev;
	*out = st.e;
	*n = st.n;
	return 0;
}
