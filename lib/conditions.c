/* conditions.c: status.conditions lists (see conditions.h). */
#include "conditions.h"

#include <string.h>

struct ynode *condition_find(const struct ynode *conditions, const char *type)
{
	if (!conditions || conditions->type != YNODE_SEQ || !type)
		return NULL;
	for (size_t i = 0; i < conditions->n; i++) {
		const char *t = ynode_str(ynode_get(ynode_item(conditions, i), "type"));
		if (t && !strcmp(t, type))
			return ynode_item(conditions, i);
	}
	return NULL;
}

const char *condition_field(const struct ynode *cond, const char *field)
{
	const struct ynode *v = ynode_get(cond, field);
	if (ynode_is_null(v) || v->type != YNODE_SCALAR)
		return "";
	return v->str;
}

bool condition_field_is(const struct ynode *cond, const char *field, const char *value)
{
	return !strcmp(condition_field(cond, field), value ? value : "");
}

bool condition_is(const struct ynode *cond, const struct condition *c)
{
	return cond && condition_field_is(cond, "status", c->status) &&
	       condition_field_is(cond, "reason", c->reason) &&
	       condition_field_is(cond, "message", c->message);
}

struct ynode *condition_build(const struct condition *c, const struct ynode *old, const char *now,
			      unsigned flags)
{
	struct ynode *m = ynode_new_map();
	ynode_set(m, "type", ynode_new_str(c->type));
	ynode_set(m, "status", ynode_new_str(c->status));
	if (flags & CONDITION_HEARTBEAT)
		ynode_set(m, "lastHeartbeatTime", ynode_new_str(now));
	if (flags & CONDITION_PROBE_TIME)
		ynode_set(m, "lastProbeTime", ynode_new_plain("null"));
	if (flags & CONDITION_UPDATE_TIME)
		ynode_set(m, "lastUpdateTime", ynode_new_str(now));
	const char *old_status = ynode_str(ynode_get(old, "status"));
	const struct ynode *old_time = ynode_get(old, "lastTransitionTime");
	bool held = old_status && !ynode_is_null(old_time) && old_time->type == YNODE_SCALAR &&
		    !strcmp(old_status, c->status);
	ynode_set(m, "lastTransitionTime", ynode_new_str(held ? old_time->str : now));
	if (c->reason)
		ynode_set(m, "reason", ynode_new_str(c->reason));
	if (c->message)
		ynode_set(m, "message", ynode_new_str(c->message));
	return m;
}

void condition_set(struct ynode *status, const struct condition *c, const char *now, unsigned flags)
{
	struct ynode *conds = ynode_get(status, "conditions");
	if (!conds || conds->type != YNODE_SEQ) {
		conds = ynode_new_seq();
		ynode_set(status, "conditions", conds);
	}
	for (size_t i = 0; i < conds->n; i++) {
		struct ynode *old = ynode_item(conds, i);
		const char *t = ynode_str(ynode_get(old, "type"));
		if (!t || strcmp(t, c->type) != 0)
			continue;
		struct ynode *m = condition_build(c, old, now, flags);
		if (flags & CONDITION_LAST) {
			condition_remove(status, c->type);
			ynode_append(conds, m);
		} else {
			conds->items[i] = m;
			ynode_free(old);
		}
		return;
	}
	ynode_append(conds, condition_build(c, NULL, now, flags));
}

void condition_remove(struct ynode *status, const char *type)
{
	struct ynode *conds = ynode_get(status, "conditions");
	if (!conds || conds->type != YNODE_SEQ)
		return;
	size_t j = 0;
	for (size_t i = 0; i < conds->n; i++) {
		struct ynode *c = conds->items[i];
		const char *t = ynode_str(ynode_get(c, "type"));
		if (t && !strcmp(t, type))
			ynode_free(c);
		else
			conds->items[j++] = c;
	}
	conds->n = j;
}
