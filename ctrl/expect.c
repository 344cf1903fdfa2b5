/* expect.c: per-owner writes in flight and versions to be seen. Checked
 * lazily against the informers' caches, so that nothing here needs to hear
 * of every event. */
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct expect__wait {
	const struct informer *inf;
	char *key;
	unsigned long long rv; /* seen at this version or later */
	bool gone;	       /* or: not seen at all */
	uint64_t since_ms;
};

struct expect__owner {
	unsigned in_flight;
	struct expect__wait *waits;
	size_t n;
};

struct expect {
	struct keymap *owners; /* owner key -> struct expect__owner */
};

static void expect__owner_free(void *p)
{
	struct expect__owner *o = p;
	for (size_t i = 0; i < o->n; i++)
		free(o->waits[i].key);
	free(o->waits);
	free(o);
}

struct expect *expect_new(void)
{
	struct expect *e = xcalloc(1, sizeof(*e));
	e->owners = keymap_new(expect__owner_free);
	return e;
}

void expect_free(struct expect *e)
{
	if (!e)
		return;
	keymap_free(e->owners);
	free(e);
}

static struct expect__owner *expect__get(struct expect *e, const char *owner)
{
	struct expect__owner *o = keymap_get(e->owners, owner);
	if (!o) {
		o = xcalloc(1, sizeof(*o));
		keymap_set(e->owners, owner, o);
	}
	return o;
}

void expect_write(struct expect *e, const char *owner)
{
	expect__get(e, owner)->in_flight++;
}

void expect_written(struct expect *e, const char *owner, bool ok, const struct informer *inf,
		    const char *key, unsigned long long min_rv, bool gone, uint64_t now_ms)
{
	struct expect__owner *o = keymap_get(e->owners, owner);
	if (!o)
		return; /* forgotten meanwhile */
	if (o->in_flight)
		o->in_flight--;
	if (ok && inf && key && (gone || min_rv)) {
		o->waits = xrealloc(o->waits, (o->n + 1) * sizeof(*o->waits));
		o->waits[o->n++] = (struct expect__wait){
		    .inf = inf,
		    .key = xstrdup(key),
		    .rv = gone ? 0 : min_rv,
		    .gone = gone,
		    .since_ms = now_ms,
		};
	}
	if (!o->in_flight && !o->n)
		keymap_del(e->owners, owner);
}

static bool expect__seen(const struct expect__wait *w)
{
	const struct ynode *obj = informer_get(w->inf, w->key);
	if (w->gone)
		return obj == NULL;
	return obj && obj_rv_num(obj_rv(obj)) >= w->rv;
}

bool expect_ready(struct expect *e, const char *owner, uint64_t now_ms, uint64_t *recheck_ms)
{
	struct expect__owner *o = keymap_get(e->owners, owner);
	if (!o)
		return true;
	size_t j = 0;
	uint64_t next = 0;
	for (size_t i = 0; i < o->n; i++) {
		struct expect__wait *w = &o->waits[i];
		if (expect__seen(w)) {
			free(w->key);
			continue;
		}
		if (now_ms >= w->since_ms + EXPECT_TTL_MS) {
			log_warn("%s: gave up waiting to see %s%s", owner, w->key,
				 w->gone ? " deleted" : " written");
			free(w->key);
			continue;
		}
		uint64_t at = w->since_ms + EXPECT_TTL_MS - now_ms;
		if (!next || at < next)
			next = at;
		o->waits[j++] = *w;
	}
	o->n = j;
	if (recheck_ms)
		*recheck_ms = o->in_flight ? 0 : next;
	if (!o->in_flight && !o->n) {
		keymap_del(e->owners, owner);
		return true;
	}
	return false;
}

unsigned expect_in_flight(const struct expect *e, const char *owner)
{
	struct expect__owner *o = keymap_get(e->owners, owner);
	return o ? o->in_flight : 0;
}

void expect_forget(struct expect *e, const char *owner)
{
	struct expect__owner *o = keymap_get(e->owners, owner);
	if (o && !o->in_flight)
		keymap_del(e->owners, owner);
	else if (o) {
		for (size_t i = 0; i < o->n; i++)
			free(o->waits[i].key);
		o->n = 0;
	}
}
