/* ctrl.c: the controller manager: the table of controllers, shared
 * informers, and the start and stop of the controllers. Every informer a
 * controller asks for is made here once and shared; all of them are
 * started after every controller has added its handlers, so each
 * controller hears every object as an add.
 *
 * A new controller is one row of ctrl_controllers[] (its start and stop
 * adapt its own constructor and destructor) plus its file; its name then
 * works in --controllers and --help without more. */
#include "ctrl.h"
#include "cronjob.h"
#include "daemonset.h"
#include "deployment.h"
#include "disruption.h"
#include "dropbox.h"
#include "endpoints.h"
#include "events.h"
#include "gc.h"
#include "hpa.h"
#include "job.h"
#include "keymap.h"
#include "kinds.h"
#include "log.h"
#include "namespace.h"
#include "nodelifecycle.h"
#include "owners.h"
#include "podgc.h"
#include "protection.h"
#include "pvbinder.h"
#include "replicaset.h"
#include "resourcequota.h"
#include "serviceaccount.h"
#include "serviceip.h"
#include "statefulset.h"
#include "taint.h"
#include "ttl.h"
#include "util.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the controllers ------------------------------------------------------ */

static int ctrl__start_rs(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = rsc_new(c, false);
	return 0;
}

static int ctrl__start_rc(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = rsc_new(c, true);
	return 0;
}

static void ctrl__stop_rsc(void *state)
{
	rsc_free(state);
}

static int ctrl__start_deployment(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = depc_new(c);
	return 0;
}

static void ctrl__stop_deployment(void *state)
{
	depc_free(state);
}

static int ctrl__start_daemonset(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = dsc_new(c);
	return 0;
}

static void ctrl__stop_daemonset(void *state)
{
	dsc_free(state);
}

static int ctrl__start_statefulset(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = ssc_new(c);
	return 0;
}

static void ctrl__stop_statefulset(void *state)
{
	ssc_free(state);
}

static int ctrl__start_gc(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = gc_new(c);
	return 0;
}

static void ctrl__stop_gc(void *state)
{
	gc_free(state);
}

static int ctrl__start_dropbox(struct ctrl *c, void **state, struct error **err)
{
	*state = dropbox_new(c, err);
	return *state ? 0 : -EIO;
}

static void ctrl__stop_dropbox(void *state)
{
	dropbox_free(state);
}

/* The recorder (c->events) is there whatever runs; this gives it the
 * events to expire. */
static int ctrl__start_eventttl(struct ctrl *c, void **state, struct error **err)
{
	(void)state;
	(void)err;
	if (c->cfg->event_ttl_ms)
		events_expire(c->events, ctrl_informer(c, "events"));
	return 0;
}

static int ctrl__start_serviceip(struct ctrl *c, void **state, struct error **err)
{
	if (!(*state = svcip_new(c)))
		return error_set(err, EINVAL, "serviceip: the service ranges do not parse");
	return 0;
}

static void ctrl__stop_serviceip(void *state)
{
	svcip_free(state);
}

static int ctrl__start_endpoints(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = endpointsc_new(c);
	return 0;
}

static void ctrl__stop_endpoints(void *state)
{
	endpointsc_free(state);
}

static int ctrl__start_job(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = jobc_new(c);
	return 0;
}

static void ctrl__stop_job(void *state)
{
	jobc_free(state);
}

static int ctrl__start_ttl(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = ttlc_new(c);
	return 0;
}

static void ctrl__stop_ttl(void *state)
{
	ttlc_free(state);
}

static int ctrl__start_podgc(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = podgc_new(c);
	return 0;
}

static void ctrl__stop_podgc(void *state)
{
	podgc_free(state);
}

static int ctrl__start_cronjob(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = cronjobc_new(c);
	return 0;
}

static void ctrl__stop_cronjob(void *state)
{
	cronjobc_free(state);
}

static int ctrl__start_namespace(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = nsc_new(c);
	return 0;
}

static void ctrl__stop_namespace(void *state)
{
	nsc_free(state);
}

static int ctrl__start_pvbinder(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = pvbinder_new(c);
	return 0;
}

static void ctrl__stop_pvbinder(void *state)
{
	pvbinder_free(state);
}

static int ctrl__start_pvc_protection(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = protection_new(c, false);
	return 0;
}

static int ctrl__start_pv_protection(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = protection_new(c, true);
	return 0;
}

static void ctrl__stop_protection(void *state)
{
	protection_free(state);
}

static int ctrl__start_nodelifecycle(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = nodelc_new(c);
	return 0;
}

static void ctrl__stop_nodelifecycle(void *state)
{
	nodelc_free(state);
}

static int ctrl__start_taint(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = taintmgr_new(c);
	return 0;
}

static void ctrl__stop_taint(void *state)
{
	taintmgr_free(state);
}

static int ctrl__start_disruption(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = disruption_new(c);
	return 0;
}

static void ctrl__stop_disruption(void *state)
{
	disruption_free(state);
}

static int ctrl__start_resourcequota(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = resourcequota_new(c);
	return 0;
}

static void ctrl__stop_resourcequota(void *state)
{
	resourcequota_free(state);
}

static int ctrl__start_serviceaccount(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = sac_new_serviceaccounts(c);
	return 0;
}

/* The cluster CA's certificate, read once at start: a file that cannot be
 * read stops corral-ctrl rather than publish nothing. */
static int ctrl__start_root_ca(struct ctrl *c, void **state, struct error **err)
{
	const char *file = c->cfg ? c->cfg->root_ca_file : NULL;
	cleanup_free char *pem = NULL;
	if (file && *file) {
		size_t len = 0;
		if (!(pem = util_read_file(file, &len)))
			return error_set(err, errno, "root-ca-file: %s: %s", file, strerror(errno));
	}
	*state = sac_new_root_ca(c, pem ? pem : "");
	return 0;
}

static void ctrl__stop_sac(void *state)
{
	sac_free(state);
}

static int ctrl__start_hpa(struct ctrl *c, void **state, struct error **err)
{
	(void)err;
	*state = hpac_new(c);
	return 0;
}

static void ctrl__stop_hpa(void *state)
{
	hpac_free(state);
}

const struct ctrl_controller ctrl_controllers[] = {
    {.name = "replicaset", .start = ctrl__start_rs, .stop = ctrl__stop_rsc},
    {.name = "replicationcontroller", .start = ctrl__start_rc, .stop = ctrl__stop_rsc},
    {.name = "deployment", .start = ctrl__start_deployment, .stop = ctrl__stop_deployment},
    {.name = "garbagecollector", .start = ctrl__start_gc, .stop = ctrl__stop_gc},
    {.name = "dropbox", .start = ctrl__start_dropbox, .stop = ctrl__stop_dropbox, .listed = true},
    {.name = "eventttl", .start = ctrl__start_eventttl},
    {.name = "serviceip", .start = ctrl__start_serviceip, .stop = ctrl__stop_serviceip},
    {.name = "endpoints", .start = ctrl__start_endpoints, .stop = ctrl__stop_endpoints},
    {.name = "job", .start = ctrl__start_job, .stop = ctrl__stop_job},
    {.name = "ttl-after-finished", .start = ctrl__start_ttl, .stop = ctrl__stop_ttl},
    {.name = "podgc", .start = ctrl__start_podgc, .stop = ctrl__stop_podgc},
    {.name = "daemonset", .start = ctrl__start_daemonset, .stop = ctrl__stop_daemonset},
    {.name = "cronjob", .start = ctrl__start_cronjob, .stop = ctrl__stop_cronjob},
    {.name = "namespace", .start = ctrl__start_namespace, .stop = ctrl__stop_namespace},
    {.name = "persistentvolume-binder", .start = ctrl__start_pvbinder, .stop = ctrl__stop_pvbinder},
    {.name = "pvc-protection", .start = ctrl__start_pvc_protection, .stop = ctrl__stop_protection},
    {.name = "pv-protection", .start = ctrl__start_pv_protection, .stop = ctrl__stop_protection},
    {.name = "statefulset", .start = ctrl__start_statefulset, .stop = ctrl__stop_statefulset},
    {.name = "nodelifecycle", .start = ctrl__start_nodelifecycle, .stop = ctrl__stop_nodelifecycle},
    {.name = "taint-eviction-controller", .start = ctrl__start_taint, .stop = ctrl__stop_taint},
    {.name = "disruption", .start = ctrl__start_disruption, .stop = ctrl__stop_disruption},
    {.name = "resourcequota", .start = ctrl__start_resourcequota, .stop = ctrl__stop_resourcequota},
    {.name = "serviceaccount", .start = ctrl__start_serviceaccount, .stop = ctrl__stop_sac},
    {.name = "root-ca-cert-publisher", .start = ctrl__start_root_ca, .stop = ctrl__stop_sac},
    {.name = "horizontalpodautoscaling", .start = ctrl__start_hpa, .stop = ctrl__stop_hpa},
};
const size_t ctrl_ncontrollers = ARRAY_SIZE(ctrl_controllers);

const char *ctrl_names(void)
{
	static char names[1024];
	if (names[0])
		return names;
	size_t len = 0;
	for (size_t i = 0; i < ctrl_ncontrollers && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
					ctrl_controllers[i].name);
	return names;
}

static const struct ctrl_controller *ctrl__find(const char *name)
{
	for (size_t i = 0; i < ctrl_ncontrollers; i++)
		if (!strcmp(name, ctrl_controllers[i].name))
			return &ctrl_controllers[i];
	return NULL;
}

int ctrl_check_controllers(const char *list, struct error **err)
{
	cleanup_free char *copy = xstrdup(list ? list : "*");
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		const char *name = tok[0] == '-' ? tok + 1 : tok;
		if (!strcmp(name, "*"))
			continue;
		if (!ctrl__find(name))
			return error_set(err, EINVAL,
					 "controllers: unknown controller \"%s\" (known: %s)", name,
					 ctrl_names());
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

/* Stops the started rows of one phase, the last started first. */
static void ctrl__stop_rows(struct ctrl *c, bool listed)
{
	for (size_t i = ctrl_ncontrollers; c->state && i-- > 0;) {
		const struct ctrl_controller *row = &ctrl_controllers[i];
		if (row->listed != listed)
			continue;
		if (row->stop)
			row->stop(c->state[i]);
		c->state[i] = NULL;
	}
}

/* Starts the rows of one phase that --controllers leaves on. */
static int ctrl__start_rows(struct ctrl *c, bool listed, struct error **err)
{
	for (size_t i = 0; i < ctrl_ncontrollers; i++) {
		const struct ctrl_controller *row = &ctrl_controllers[i];
		if (row->listed != listed || !ctrl_enabled(c, row->name))
			continue;
		int r = row->start(c, &c->state[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int ctrl_start(struct ctrl *c, struct error **err)
{
	if (c->running)
		return 0;
	uint64_t t0 = loop_now_ms();
	c->state = xcalloc(ctrl_ncontrollers, sizeof(*c->state));
	c->events = events_new(c->loop, c->writer, NULL, c->host, c->cfg->event_ttl_ms);
	int r = ctrl__start_rows(c, false, err);
	if (r < 0) {
		ctrl_stop(c);
		return r;
	}
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
	r = ctrl__start_rows(c, true, err);
	if (r < 0) {
		ctrl_stop(c);
		return r;
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
	ctrl__stop_rows(c, true);
	keymap_free(c->owner_indexes);
	c->owner_indexes = NULL;
	keymap_free(c->informers);
	c->informers = NULL;
	ctrl__stop_rows(c, false);
	free(c->state);
	c->state = NULL;
	events_free(c->events);
	c->events = NULL;
	if (c->running)
		log_info("controllers stopped");
	c->running = false;
}
