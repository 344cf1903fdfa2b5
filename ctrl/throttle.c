/* throttle.c: key -> the loop time of its last status write.
 *
 * This file must never hold a write back that is urgent. */
#include "throttle.h"
#include "keymap.h"
#include "obj.h"
#include "util.h"

#include <stdlib.h>

struct throttle {
	uint64_t interval_ms;
	struct keymap *last; /* key -> ms of its last write (uintptr_t, never 0) */
};

struct throttle *throttle_new(uint64_t interval_ms)
{
	struct throttle *t = xcalloc(1, sizeof(*t));
	t->interval_ms = interval_ms;
	t->last = keymap_new(NULL);
	return t;
}

void throttle_free(struct throttle *t)
{
	if (!t)
		return;
	keymap_free(t->last);
	free(t);
}

bool throttle_take(struct throttle *t, const char *key, bool urgent, uint64_t now_ms,
		   uint64_t *wait_ms)
{
	uintptr_t last = (uintptr_t)keymap_get(t->last, key);
	if (!urgent && last && now_ms < last + t->interval_ms) {
		if (wait_ms)
			*wait_ms = last + t->interval_ms - now_ms;
		return false;
	}
	keymap_set(t->last, key, (void *)(uintptr_t)(now_ms ? now_ms : 1));
	if (wait_ms)
		*wait_ms = 0;
	return true;
}

void throttle_forget(struct throttle *t, const char *key)
{
	keymap_del(t->last, key);
}

bool throttle_status_urgent(const struct ynode *stored, const struct ynode *st)
{
	return !stored ||
	       obj_int(stored, "observedGeneration", -1) != obj_int(st, "observedGeneration", -1);
}
