/* events.c: the event recorder and the expiry of old events.
 *
 * Recent events are remembered by what they say, for the correlation of
 * repeats; the memory forgets them after EVENTS_AGGREGATE_S. Expiry looks
 * at every cached Event when its timer fires and arms the timer for the
 * next deadline; an event added with an earlier deadline re-arms it.
 *
 * This file must never write anything but Event objects. */
#include "events.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "treepath.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EVENTS__SLACK_MS   1000
#define EVENTS__RECENT_MAX 4096

struct events__recent {
	char *ns;
	char *name;
	char *first; /* firstTimestamp */
	long long count;
	int64_t last; /* seconds */
};

struct events {
	struct loop *loop;
	struct writer *w;
	struct informer *inf;
	char *host;
	uint64_t ttl_ms;
	struct keymap *recent;	 /* what it says -> struct events__recent */
	struct keymap *deleting; /* event keys being deleted */
	struct loop_timer *timer;
	uint64_t armed_at; /* monotonic ms the timer fires at; 0: not armed */
	unsigned seq;
	int64_t pruned; /* when the memory was last pruned */
};

static void events__recent_free(void *p)
{
	struct events__recent *r = p;
	free(r->ns);
	free(r->name);
	free(r->first);
	free(r);
}

int64_t events_last_time(const struct ynode *e)
{
	static const char *const paths[] = {"lastTimestamp", "series.lastObservedTime", "eventTime",
					    "metadata.creationTimestamp"};
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		int64_t t = obj_time_parse(ynode_path_str(e, paths[i]));
		if (t >= 0)
			return t;
	}
	return -1;
}

/* Expiry. */

static void events__arm(struct events *ev, int64_t expires_s)
{
	int64_t now = obj_now();
	uint64_t delay = expires_s > now ? (uint64_t)(expires_s - now) * 1000 : 0;
	uint64_t at = loop_now_ms() + delay + EVENTS__SLACK_MS;
	if (ev->armed_at && ev->armed_at <= at && loop_timer_armed(ev->timer))
		return;
	ev->armed_at = at;
	loop_timer_start(ev->timer, delay + EVENTS__SLACK_MS, 0);
}

static void events__deleted(void *data, const struct writer_result *res)
{
	struct events *ev = data;
	(void)ev;
	if (res->status && res->status != ENOENT)
		log_warn("events: cannot expire %s: %s", res->path, res->msg);
}

struct events__scan {
	struct events *ev;
	int64_t now;
	int64_t next; /* earliest expiry still ahead, -1: none */
};

static int events__visit(void *data, const char *key, const struct ynode *e)
{
	struct events__scan *s = data;
	int64_t t = events_last_time(e);
	if (t < 0)
		return 0;
	int64_t expires = t + (int64_t)(s->ev->ttl_ms / 1000);
	if (expires > s->now) {
		if (s->next < 0 || expires < s->next)
			s->next = expires;
		return 0;
	}
	if (keymap_has(s->ev->deleting, key))
		return 0;
	keymap_set(s->ev->deleting, key, NULL);
	char ns[256];
	const char *name = obj_key_split(key, ns, sizeof(ns));
	if (!name)
		return 0;
	cleanup_free char *path = obj_path("events", ns, name);
	writer_delete(s->ev->w, path, NULL, WRITER_LOW, events__deleted, s->ev);
	return 0;
}

static void events__on_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct events *ev = data;
	ev->armed_at = 0;
	struct events__scan s = {.ev = ev, .now = obj_now(), .next = -1};
	informer_foreach(ev->inf, NULL, events__visit, &s);
	if (s.next >= 0)
		events__arm(ev, s.next);
}

static void events__seen(void *data, const char *key, const struct ynode *e)
{
	(void)key;
	struct events *ev = data;
	int64_t t = events_last_time(e);
	if (t >= 0)
		events__arm(ev, t + (int64_t)(ev->ttl_ms / 1000));
}

static void events__on_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *e)
{
	(void)old;
	events__seen(data, key, e);
}

static void events__on_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct events *ev = data;
	keymap_del(ev->deleting, key);
}

struct events *events_new(struct loop *loop, struct writer *w, struct informer *inf,
			  const char *host, uint64_t ttl_ms)
{
	struct events *ev = xcalloc(1, sizeof(*ev));
	ev->loop = loop;
	ev->w = w;
	ev->host = xstrdup(host ? host : "localhost");
	ev->ttl_ms = ttl_ms;
	ev->recent = keymap_new(events__recent_free);
	ev->deleting = keymap_new(NULL);
	ev->timer = loop_timer_new(loop, events__on_timer, ev);
	if (inf)
		events_expire(ev, inf);
	return ev;
}

void events_expire(struct events *ev, struct informer *inf)
{
	if (!inf || !ev->ttl_ms || ev->inf)
		return;
	ev->inf = inf;
	struct informer_handlers h = {
	    .on_add = events__seen,
	    .on_update = events__on_update,
	    .on_delete = events__on_delete,
	};
	informer_add_handlers(inf, &h, ev);
}

void events_free(struct events *ev)
{
	if (!ev)
		return;
	loop_timer_free(ev->timer);
	keymap_free(ev->recent);
	keymap_free(ev->deleting);
	free(ev->host);
	free(ev);
}

/* Recording. */

static void events__written(void *data, const struct writer_result *res)
{
	(void)data;
	if (res->status && res->status != ENOENT)
		log_warn("events: cannot write %s: %s", res->path, res->msg);
}

/* Forgets what is older than the correlation window, when there is much. */
static void events__prune(struct events *ev, int64_t now)
{
	if (keymap_count(ev->recent) < EVENTS__RECENT_MAX || now - ev->pruned < 60)
		return;
	ev->pruned = now;
	const char *k;
	void *v;
	char **old = NULL;
	size_t n = 0;
	for (size_t i = 0; keymap_next(ev->recent, &i, &k, &v);) {
		struct events__recent *r = v;
		if (now - r->last >= EVENTS_AGGREGATE_S) {
			old = xrealloc(old, (n + 1) * sizeof(*old));
			old[n++] = xstrdup(k);
		}
	}
	for (size_t i = 0; i < n; i++) {
		keymap_del(ev->recent, old[i]);
		free(old[i]);
	}
	free(old);
}

static void events__emit(struct events *ev, const char *component, const char *api_version,
			 const char *kind, const char *ns, const char *name, const char *uid,
			 const char *type, const char *reason, const char *msg)
{
	if (!name || !kind)
		return;
	const char *ens = ns && *ns ? ns : "default";
	int64_t now = obj_now();
	char ts[32];
	obj_time_format(now, ts);
	cleanup_free char *what = xasprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", ens, kind,
					    name, uid ? uid : "", type, reason, msg);
	events__prune(ev, now);
	struct events__recent *r = keymap_get(ev->recent, what);
	if (r && now - r->last >= EVENTS_AGGREGATE_S) {
		keymap_del(ev->recent, what);
		r = NULL;
	}
	if (r) {
		r->count++;
		r->last = now;
	} else {
		struct timespec tsp;
		clock_gettime(CLOCK_REALTIME, &tsp);
		unsigned long long nanos = (unsigned long long)tsp.tv_sec * 1000000000ULL +
					   (unsigned long long)tsp.tv_nsec;
		r = xcalloc(1, sizeof(*r));
		r->ns = xstrdup(ens);
		/* Two events in the same nanosecond must not share a name. */
		r->name = xasprintf("%.200s.%llx", name, nanos + ev->seq++);
		r->first = xstrdup(ts);
		r->count = 1;
		r->last = now;
		keymap_set(ev->recent, what, r);
	}

	struct ynode *e = ynode_new_map();
	ynode_set(e, "apiVersion", ynode_new_str("v1"));
	ynode_set(e, "kind", ynode_new_str("Event"));
	struct ynode *md = ynode_get_map(e, "metadata");
	ynode_set(md, "name", ynode_new_str(r->name));
	ynode_set(md, "namespace", ynode_new_str(ens));
	struct ynode *io = ynode_get_map(e, "involvedObject");
	if (api_version)
		ynode_set(io, "apiVersion", ynode_new_str(api_version));
	ynode_set(io, "kind", ynode_new_str(kind));
	ynode_set(io, "name", ynode_new_str(name));
	if (ns && *ns)
		ynode_set(io, "namespace", ynode_new_str(ns));
	if (uid)
		ynode_set(io, "uid", ynode_new_str(uid));
	ynode_set(e, "reason", ynode_new_str(reason));
	ynode_set(e, "message", ynode_new_str(msg));
	ynode_set(e, "type", ynode_new_str(type));
	struct ynode *src = ynode_get_map(e, "source");
	ynode_set(src, "component", ynode_new_str(component));
	ynode_set(src, "host", ynode_new_str(ev->host));
	ynode_set(e, "firstTimestamp", ynode_new_str(r->first));
	ynode_set(e, "lastTimestamp", ynode_new_str(ts));
	ynode_set(e, "count", ynode_new_int(r->count));
	ynode_set(e, "reportingComponent", ynode_new_str(component));
	ynode_set(e, "reportingInstance", ynode_new_str(ev->host));
	cleanup_free char *dir = treepath_folder("events", ens);
	log_debug("event %s/%s: %s %s: %s", ens, name, type, reason, msg);
	writer_create(ev->w, dir, e, WRITER_LOW | WRITER_REPLACE, events__written, ev);
}

void events_record(struct events *ev, const char *component, const struct ynode *obj,
		   const char *type, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	events__emit(ev, component, ynode_path_str(obj, "apiVersion"), ynode_path_str(obj, "kind"),
		     obj_namespace(obj), obj_name(obj), obj_uid(obj), type, reason, msg);
}

void events_record_ref(struct events *ev, const char *component, const char *api_version,
		       const char *kind, const char *ns, const char *name, const char *uid,
		       const char *type, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	events__emit(ev, component, api_version, kind, ns, name, uid, type, reason, msg);
}
