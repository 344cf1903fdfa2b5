/* ctrl.c: the controller manager: shared informers, and the start and stop
 * of the controllers. Every informer a controller asks for is made here
 * once and shared; all of them are started after every controller has
 * added its handlers, so each controller hears every object as an add. */
#include "ctrl.h"
#include "deployment.h"
#include "dropbox.h"
#include "endpoints.h"
#include "events.h"
#include "gc.h"
#include "keymap.h"
#include "kinds.h"
#include "log.h"
#include "owners.h"
#include "replicaset.h"
#include "serviceip.h"
#include "util.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const ctrl__names[] = {
    "replicaset", "replicationcontroller",
    "deployment", "garbagecollector",
    "dropbox",	  "eventttl",
    "serviceip",  "endpoints",
};

int ctrl_check_controllers(const char *list, struct error **err)
{
	cleanup_free char *copy = xstrdup(list ? list : "*");
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		const char *name = tok[0] == '-' ? tok + 1 : tok;
		if (!strcmp(name, "*"))
			continue;
		bool known = false;
		for (size_t i = 0; i < ARRAY_SIZE(ctrl__names); i++)
			known |= !strcmp(name, ctrl__names[i]);
		if (!known)
			return error_set(err, EINVAL,
					 "controllers: unknown controller \"%s\" (known: %s)", name,
					 CTRL_NAMES);
	}
	return 0;
}

bool ctrl_enabled(const struct ctrl *c, const char *name)
{
	const char *list = c->cfg && c->cfg->controllers ? c->cfg->controllers : "*";
	cleanup_free char *copy = xstrdup(list);
	char *save = NULL;
	bool on = false;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (!strcmp(tok, "*"))
			on = true;
		else if (tok[0] == '-' && !strcmp(tok + 1, name))
			return false;
		else if (!strcmp(tok, name))
			on = true;
	}
	return on;
}

static void ctrl__informer_free(void *p)
{
	informer_free(p);
}

struct informer *ctrl_informer(struct ctrl *c, const char *plural)
{
	if (!c->informers)
		c->informers = keymap_new(ctrl__informer_free);
	struct informer *inf = keymap_get(c->informers, plural);
	if (inf)
		return inf;
	const struct kind_info *k = kinds_by_plural(plural);
	inf = informer_new(c->loop, c->mount, plural, k ? k->namespaced : true);
	if (c->cfg && c->cfg->resync_ms)
		informer_set_resync(inf, c->cfg->resync_ms);
	keymap_set(c->informers, plural, inf);
	return inf;
}

static void ctrl__owners_free(void *p)
{
	owners_free(p);
}

struct owners *ctrl_owners(struct ctrl *c, const char *plural)
{
	if (!c->owner_indexes)
		c->owner_indexes = keymap_new(ctrl__owners_free);
	struct owners *o = keymap_get(c->owner_indexes, plural);
	if (!o) {
		o = owners_new(ctrl_informer(c, plural));
		keymap_set(c->owner_indexes, plural, o);
	}
	return o;
}

int ctrl_mutate_status(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct ynode *st = arg;
	if (ynode_equal(ynode_get(obj, "status"), st))
		return 0;
	ynode_set(obj, "status", ynode_clone(st));
	return 1;
}

void ctrl_ynode_free(void *p)
{
	ynode_free(p);
}

int ctrl_start(struct ctrl *c, struct error **err)
{
	if (c->running)
		return 0;
	uint64_t t0 = loop_now_ms();
	struct informer *events_inf = NULL;
	if (ctrl_enabled(c, "eventttl") && c->cfg->event_ttl_ms)
		events_inf = ctrl_informer(c, "events");
	c->events = events_new(c->loop, c->writer, events_inf, c->host, c->cfg->event_ttl_ms);
	if (ctrl_enabled(c, "replicaset"))
		c->rs = rsc_new(c, false);
	if (ctrl_enabled(c, "replicationcontroller"))
		c->rc = rsc_new(c, true);
	if (ctrl_enabled(c, "deployment"))
		c->deploy = depc_new(c);
	if (ctrl_enabled(c, "garbagecollector"))
		c->gc = gc_new(c);
	if (ctrl_enabled(c, "serviceip") && !(c->svcip = svcip_new(c))) {
		ctrl_stop(c);
		return error_set(err, EINVAL, "serviceip: the service ranges do not parse");
	}
	if (ctrl_enabled(c, "endpoints"))
		c->endpoints = endpointsc_new(c);
	/* Start every informer; each lists its kind before it returns. */
	const char *plural;
	void *v;
	size_t objects = 0;
	for (size_t i = 0; c->informers && keymap_next(c->informers, &i, &plural, &v);) {
		if (informer_start(v, err) < 0) {
			ctrl_stop(c);
			return -EIO;
		}
		objects += informer_count(v);
	}
	if (ctrl_enabled(c, "dropbox")) {
		c->drop = dropbox_new(c, err);
		if (!c->drop) {
			ctrl_stop(c);
			return -EIO;
		}
	}
	c->running = true;
	log_info("controllers started: %zu objects listed in %llu ms", objects,
		 (unsigned long long)(loop_now_ms() - t0));
	return 0;
}

void ctrl_stop(struct ctrl *c)
{
	/* Let the writes in flight finish while everything they report to
	 * is still there. */
	if (c->writer)
		writer_drain(c->writer);
	dropbox_free(c->drop);
	c->drop = NULL;
	keymap_free(c->owner_indexes);
	c->owner_indexes = NULL;
	keymap_free(c->informers);
	c->informers = NULL;
	gc_free(c->gc);
	c->gc = NULL;
	endpointsc_free(c->endpoints);
	c->endpoints = NULL;
	svcip_free(c->svcip);
	c->svcip = NULL;
	depc_free(c->deploy);
	c->deploy = NULL;
	rsc_free(c->rs);
	rsc_free(c->rc);
	c->rs = c->rc = NULL;
	events_free(c->events);
	c->events = NULL;
	if (c->running)
		log_info("controllers stopped");
	c->running = false;
}
