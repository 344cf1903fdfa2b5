/* tolerations.c: DefaultTolerationSeconds (see tolerations.h). Its state
 * is the two durations, fixed at start: nothing to lock. */
#include "tolerations.h"
#include "kinds.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct tolerations__cfg {
	long long not_ready_s;
	long long unreachable_s;
};

/* Whether one of tols tolerates taint key with effect NoExecute whatever
 * its value, as the plugin asks: the key is the taint's or empty, the
 * effect NoExecute or empty. */
static bool tolerations__has(const struct ynode *tols, const char *key)
{
	for (size_t i = 0; tols && tols->type == YNODE_SEQ && i < tols->n; i++) {
		const struct ynode *t = ynode_item(tols, i);
		const char *k = ynode_str(ynode_get(t, "key"));
		const char *e = ynode_str(ynode_get(t, "effect"));
		if ((!k || !*k || !strcmp(k, key)) && (!e || !*e || !strcmp(e, "NoExecute")))
			return true;
	}
	return false;
}

static struct ynode *tolerations__new(const char *key, long long seconds)
{
	struct ynode *t = ynode_new_map();
	ynode_set(t, "key", ynode_new_str(key));
	ynode_set(t, "operator", ynode_new_str("Exists"));
	ynode_set(t, "effect", ynode_new_str("NoExecute"));
	ynode_set(t, "tolerationSeconds", ynode_new_int(seconds));
	return t;
}

bool tolerations_add_defaults(struct ynode *pod, long long not_ready_s, long long unreachable_s)
{
	struct ynode *spec = ynode_get(pod, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return false;
	struct ynode *tols = ynode_get(spec, "tolerations");
	bool nr = tolerations__has(tols, TOLERATIONS_NOT_READY);
	bool ur = tolerations__has(tols, TOLERATIONS_UNREACHABLE);
	if (nr && ur)
		return false;
	if (!tols || tols->type != YNODE_SEQ) {
		tols = ynode_new_seq();
		ynode_set(spec, "tolerations", tols);
	}
	if (!nr)
		ynode_append(tols, tolerations__new(TOLERATIONS_NOT_READY, not_ready_s));
	if (!ur)
		ynode_append(tols, tolerations__new(TOLERATIONS_UNREACHABLE, unreachable_s));
	return true;
}

bool tolerations_carry(struct ynode *pod, const struct ynode *old)
{
	static const char *const keys[] = {TOLERATIONS_NOT_READY, TOLERATIONS_UNREACHABLE};
	struct ynode *spec = ynode_get(pod, "spec");
	const struct ynode *otols = ynode_path(old, "spec.tolerations");
	if (!spec || spec->type != YNODE_MAP || !otols || otols->type != YNODE_SEQ)
		return false;
	bool added = false;
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		if (tolerations__has(ynode_get(spec, "tolerations"), keys[k]))
			continue;
		for (size_t i = 0; i < otols->n; i++) {
			const struct ynode *t = ynode_item(otols, i);
			const char *key = ynode_str(ynode_get(t, "key"));
			const char *e = ynode_str(ynode_get(t, "effect"));
			if (!key || strcmp(key, keys[k]) || !e || strcmp(e, "NoExecute"))
				continue;
			struct ynode *tols = ynode_get(spec, "tolerations");
			if (!tols || tols->type != YNODE_SEQ) {
				tols = ynode_new_seq();
				ynode_set(spec, "tolerations", tols);
			}
			ynode_append(tols, ynode_clone(t));
			added = true;
		}
	}
	return added;
}

void *tolerations_hook_init(const struct admission_config *cfg)
{
	struct tolerations__cfg *c = xcalloc(1, sizeof(*c));
	c->not_ready_s = cfg && cfg->not_ready_toleration_s > 0 ? cfg->not_ready_toleration_s
								: TOLERATIONS_DEFAULT_S;
	c->unreachable_s = cfg && cfg->unreachable_toleration_s > 0 ? cfg->unreachable_toleration_s
								    : TOLERATIONS_DEFAULT_S;
	return c;
}

void tolerations_hook_fini(void *state)
{
	free(state);
}

int tolerations_hook_reserve(void *state, struct admission_request *rq, void **claim,
			     struct error **err)
{
	(void)err;
	const struct tolerations__cfg *c = state;
	*claim = NULL;
	if (!rq->obj || rq->old || kinds_id(rq->kind) != KIND_POD)
		return 0;
	if (tolerations_add_defaults(rq->obj, c->not_ready_s, c->unreachable_s))
		rq->changed = true;
	return 0;
}
