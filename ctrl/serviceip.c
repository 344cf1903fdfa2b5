/* serviceip.c: the ClusterIP and nodePort allocator and its controller.
 *
 * The allocator keeps one table slot per address of the range and one per
 * port, each pointing at the owning service's record, so that a claim, a
 * release and the next free address are O(1) amortized (a cursor goes
 * round the range). A sync plans against the allocator (claims and frees
 * at once, so that two services never get one address even while their
 * writes are in flight) and then writes the plan into the service; a
 * service with a write in flight does not sync again until its informer
 * shows the write (expect.h).
 *
 * This file must never write anything but a Service's spec.clusterIP,
 * spec.clusterIPs, spec.ports[].nodePort and its Allocated condition. */
#include "serviceip.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "timefmt.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVCIP__COMPONENT "serviceip-controller"
#define SVCIP__PORTS	 65536

/* ---- the allocator ------------------------------------------------------ */

struct svcip__owner {
	char *key;
	int64_t ip;	   /* offset in the range, -1: none */
	bool ip_unwritten; /* handed out here, not yet seen in its spec */
	int *ports;
	size_t nports, cap;
};

struct svcip_alloc {
	struct servicerange range;
	uint32_t size; /* slots: the range's size, at most SVCIP_MAX_RANGE */
	int port_lo, port_hi;
	struct svcip__owner **ips;   /* size slots */
	struct svcip__owner **ports; /* SVCIP__PORTS slots */
	struct keymap *owners;	     /* key -> struct svcip__owner */
	uint32_t next_ip;	     /* where the search for a free one starts */
	int next_port;
	size_t ips_used, ports_used;
};

static void svcip__owner_free(void *p)
{
	struct svcip__owner *o = p;
	if (o) {
		free(o->key);
		free(o->ports);
		free(o);
	}
}

struct svcip_alloc *svcip_alloc_new(const struct servicerange *range, int port_lo, int port_hi)
{
	struct svcip_alloc *a = xcalloc(1, sizeof(*a));
	a->range = *range;
	a->size = range->size > SVCIP_MAX_RANGE ? SVCIP_MAX_RANGE : range->size;
	a->port_lo = port_lo;
	a->port_hi = port_hi;
	a->ips = xcalloc(a->size, sizeof(*a->ips));
	a->ports = xcalloc(SVCIP__PORTS, sizeof(*a->ports));
	a->owners = keymap_new(svcip__owner_free);
	a->next_port = port_lo;
	return a;
}

void svcip_alloc_free(struct svcip_alloc *a)
{
	if (!a)
		return;
	keymap_free(a->owners);
	free(a->ips);
	free(a->ports);
	free(a);
}

static struct svcip__owner *svcip__owner(struct svcip_alloc *a, const char *key, bool make)
{
	struct svcip__owner *o = keymap_get(a->owners, key);
	if (!o && make) {
		o = xcalloc(1, sizeof(*o));
		o->key = xstrdup(key);
		o->ip = -1;
		keymap_set(a->owners, key, o);
	}
	return o;
}

/* Drops an owner that holds nothing any more. */
static void svcip__owner_gc(struct svcip_alloc *a, struct svcip__owner *o)
{
	if (o && o->ip < 0 && !o->nports)
		keymap_del(a->owners, o->key);
}

/* Never handed out unasked: the network and broadcast addresses, .1 and .10. */
static bool svcip__reserved(const struct svcip_alloc *a, uint32_t off)
{
	return off == 0 || off == a->size - 1 || off == 1 || off == 10;
}

static void svcip__take_ip(struct svcip_alloc *a, struct svcip__owner *o, uint32_t off)
{
	if (o->ip >= 0 && (uint32_t)o->ip == off) {
		o->ip_unwritten = false; /* claimed: its spec has it */
		return;
	}
	if (o->ip >= 0) {
		a->ips[o->ip] = NULL;
		a->ips_used--;
	}
	o->ip = off;
	o->ip_unwritten = false;
	a->ips[off] = o;
	a->ips_used++;
}

int svcip_claim_ip(struct svcip_alloc *a, const char *ip, const char *owner, const char **holder)
{
	uint32_t off = 0;
	int r = servicerange_offset(&a->range, ip, &off);
	if (r < 0)
		return r;
	if (off >= a->size)
		return -ERANGE;
	struct svcip__owner *cur = a->ips[off];
	bool evict = cur && strcmp(cur->key, owner) != 0 && cur->ip_unwritten;
	if (cur && strcmp(cur->key, owner) != 0 && !evict) {
		if (holder)
			*holder = cur->key;
		return -EEXIST;
	}
	if (evict) {
		/* Handed out here but not written yet, while this service was
		 * stored asking for it: corral-fs gives it to this one. */
		a->ips[off] = NULL;
		a->ips_used--;
		cur->ip = -1;
		if (holder)
			*holder = cur->key;
	}
	svcip__take_ip(a, svcip__owner(a, owner, true), off);
	return evict ? 1 : 0;
}

int svcip_ip_of(const struct svcip_alloc *a, const char *owner, char *buf)
{
	const struct svcip__owner *o = keymap_get(a->owners, owner);
	if (!o || o->ip < 0)
		return -ENOENT;
	servicerange_format(&a->range, (uint32_t)o->ip, buf);
	return 0;
}

int svcip_allocate_ip(struct svcip_alloc *a, const char *owner, char *buf)
{
	if (svcip_ip_of(a, owner, buf) == 0)
		return 0;
	for (uint32_t i = 0; i < a->size; i++) {
		uint32_t off = (a->next_ip + i) % a->size;
		if (a->ips[off] || svcip__reserved(a, off))
			continue;
		struct svcip__owner *o = svcip__owner(a, owner, true);
		svcip__take_ip(a, o, off);
		o->ip_unwritten = true;
		a->next_ip = (off + 1) % a->size;
		servicerange_format(&a->range, off, buf);
		return 0;
	}
	return -ENOSPC;
}

void svcip_release_ip(struct svcip_alloc *a, const char *owner)
{
	struct svcip__owner *o = keymap_get(a->owners, owner);
	if (!o || o->ip < 0)
		return;
	a->ips[o->ip] = NULL;
	a->ips_used--;
	o->ip = -1;
	svcip__owner_gc(a, o);
}

static void svcip__take_port(struct svcip_alloc *a, struct svcip__owner *o, int port)
{
	if (a->ports[port] == o)
		return;
	if (o->nports == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 4;
		o->ports = xrealloc(o->ports, o->cap * sizeof(*o->ports));
	}
	o->ports[o->nports++] = port;
	a->ports[port] = o;
	a->ports_used++;
}

int svcip_claim_port(struct svcip_alloc *a, int port, const char *owner, const char **holder)
{
	if (port < a->port_lo || port > a->port_hi)
		return -ERANGE;
	struct svcip__owner *cur = a->ports[port];
	if (cur && strcmp(cur->key, owner) != 0) {
		if (holder)
			*holder = cur->key;
		return -EEXIST;
	}
	svcip__take_port(a, svcip__owner(a, owner, true), port);
	return 0;
}

int svcip_allocate_port(struct svcip_alloc *a, const char *owner, int *port)
{
	int span = a->port_hi - a->port_lo + 1;
	for (int i = 0; i < span; i++) {
		int p = a->port_lo + (a->next_port - a->port_lo + i) % span;
		if (a->ports[p])
			continue;
		svcip__take_port(a, svcip__owner(a, owner, true), p);
		a->next_port = p + 1 > a->port_hi ? a->port_lo : p + 1;
		*port = p;
		return 0;
	}
	return -ENOSPC;
}

void svcip_release_ports_except(struct svcip_alloc *a, const char *owner, const int *keep, size_t n)
{
	struct svcip__owner *o = keymap_get(a->owners, owner);
	if (!o)
		return;
	size_t w = 0;
	for (size_t i = 0; i < o->nports; i++) {
		bool kept = false;
		for (size_t j = 0; j < n && !kept; j++)
			kept = keep[j] == o->ports[i];
		if (kept) {
			o->ports[w++] = o->ports[i];
		} else {
			a->ports[o->ports[i]] = NULL;
			a->ports_used--;
		}
	}
	o->nports = w;
	svcip__owner_gc(a, o);
}

void svcip_release(struct svcip_alloc *a, const char *owner)
{
	svcip_release_ports_except(a, owner, NULL, 0);
	svcip_release_ip(a, owner);
}

size_t svcip_ips_in_use(const struct svcip_alloc *a)
{
	return a->ips_used;
}

size_t svcip_ports_in_use(const struct svcip_alloc *a)
{
	return a->ports_used;
}

/* ---- plans -------------------------------------------------------------- */

static bool svcip__empty(const char *s)
{
	return !s || !*s;
}

static bool svcip__wants_node_ports(const char *type)
{
	return type && (!strcmp(type, "NodePort") || !strcmp(type, "LoadBalancer"));
}

/* The first refusal names the condition; later ones are appended. */
static void svcip__refuse(struct svcip_plan *plan, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void svcip__refuse(struct svcip_plan *plan, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (!plan->message) {
		plan->status = "False";
		plan->reason = reason;
		plan->message = steal_pointer(&msg);
		return;
	}
	char *joined = xasprintf("%s; %s", plan->message, msg);
	free(plan->message);
	plan->message = joined;
}

static const char *svcip__protocol(const struct ynode *port)
{
	const char *p = ynode_str(ynode_get(port, "protocol"));
	return svcip__empty(p) ? "TCP" : p;
}

static void svcip__plan_ports(struct svcip_alloc *a, const char *key, const struct ynode *ports,
			      struct svcip_plan *plan)
{
	size_t n = ports && ports->type == YNODE_SEQ ? ports->n : 0;
	cleanup_free int *keep = xcalloc(n + 1, sizeof(*keep));
	cleanup_free bool *missing = xcalloc(n + 1, sizeof(*missing));
	size_t nkeep = 0;
	/* First what the service asks for. */
	for (size_t i = 0; i < n; i++) {
		long long np = 0;
		const struct ynode *np_node = ynode_get(ynode_item(ports, i), "nodePort");
		if (ynode_is_null(np_node) || (ynode_int(np_node, &np) == 0 && np == 0)) {
			missing[i] = true;
			continue;
		}
		const char *holder = NULL;
		int r = ynode_int(np_node, &np) < 0 || np < 0 || np > 65535
			    ? -ERANGE
			    : svcip_claim_port(a, (int)np, key, &holder);
		if (r == 0)
			keep[nkeep++] = (int)np;
		else if (r == -EEXIST)
			svcip__refuse(
			    plan, "NodePortAlreadyAllocated",
			    "spec.ports[%zu].nodePort: Invalid value: %lld: provided port is "
			    "already allocated (to service %s)",
			    i, np, holder);
		else
			svcip__refuse(
			    plan, "NodePortOutOfRange",
			    "spec.ports[%zu].nodePort: Invalid value: %s: provided port is "
			    "not in the valid range. The range of valid ports is %d-%d",
			    i, ynode_str(np_node) ? ynode_str(np_node) : "?", a->port_lo,
			    a->port_hi);
	}
	/* Then ports for the others: those already given to this service (a
	 * write in flight) first, then fresh ones. */
	struct svcip__owner *o = svcip__owner(a, key, false);
	size_t reuse = 0;
	for (size_t i = 0; i < n; i++) {
		if (!missing[i])
			continue;
		int port = 0;
		while (o && reuse < o->nports && !port) {
			int held = o->ports[reuse++];
			bool kept = false;
			for (size_t j = 0; j < nkeep && !kept; j++)
				kept = keep[j] == held;
			if (!kept)
				port = held;
		}
		if (!port && svcip_allocate_port(a, key, &port) < 0) {
			svcip__refuse(plan, "RangeFull",
				      "spec.ports[%zu].nodePort: no ports left in the range %d-%d",
				      i, a->port_lo, a->port_hi);
			continue;
		}
		o = svcip__owner(a, key, false);
		keep[nkeep++] = port;
		const struct ynode *p = ynode_item(ports, i);
		struct svcip_port *sp = &plan->ports[plan->nports++];
		sp->port = 0;
		ynode_int(ynode_get(p, "port"), &sp->port);
		snprintf(sp->protocol, sizeof(sp->protocol), "%s", svcip__protocol(p));
		sp->node_port = port;
	}
	svcip_release_ports_except(a, key, keep, nkeep);
}

void svcip_plan_service(struct svcip_alloc *a, const char *key, const struct ynode *svc,
			struct svcip_plan *plan)
{
	const char *cidr = a->range.text;
	memset(plan, 0, sizeof(*plan));
	const struct ynode *spec = ynode_get(svc, "spec");
	const char *type = ynode_path_str(spec, "type");
	if (svcip__empty(type))
		type = "ClusterIP";
	if (!strcmp(type, "ExternalName")) {
		svcip_release(a, key);
		return; /* nothing to allocate, nothing to say */
	}
	plan->status = "True";
	plan->reason = "Allocated";
	const char *ip = ynode_path_str(spec, "clusterIP");
	if (ip && !strcmp(ip, "None")) {
		svcip_release_ip(a, key);
	} else if (svcip__empty(ip)) {
		if (svcip_allocate_ip(a, key, plan->ip) < 0)
			svcip__refuse(plan, "RangeFull",
				      "spec.clusterIP: no addresses left in the range %s", cidr);
	} else {
		const char *holder = NULL;
		int r = svcip_claim_ip(a, ip, key, &holder);
		if (r >= 0) {
			snprintf(plan->ip, sizeof(plan->ip), "%s", ip);
			if (r == 1)
				plan->evicted = xstrdup(holder);
		} else {
			svcip_release_ip(a, key);
			if (r == -EEXIST)
				svcip__refuse(
				    plan, "ClusterIPAlreadyAllocated",
				    "spec.clusterIP: Invalid value: \"%s\": provided IP is "
				    "already allocated (to service %s)",
				    ip, holder);
			else
				svcip__refuse(
				    plan, "ClusterIPOutOfRange",
				    "spec.clusterIP: Invalid value: \"%s\": provided IP is "
				    "not in the valid range. The range of valid IPs is %s",
				    ip, cidr);
		}
	}
	const struct ynode *ports = ynode_get(spec, "ports");
	if (svcip__wants_node_ports(type) && ports && ports->type == YNODE_SEQ) {
		plan->ports = xcalloc(ports->n + 1, sizeof(*plan->ports));
		svcip__plan_ports(a, key, ports, plan);
	} else {
		svcip_release_ports_except(a, key, NULL, 0);
	}
	if (!plan->message)
		plan->message = xstrdup("");
}

void svcip_plan_clear(struct svcip_plan *plan)
{
	free(plan->ports);
	free(plan->message);
	free(plan->evicted);
	memset(plan, 0, sizeof(*plan));
}

static const struct ynode *svcip__condition(const struct ynode *svc)
{
	return condition_find(ynode_path(svc, "status.conditions"), SVCIP_CONDITION);
}

void svcip_claim_existing(struct svcip_alloc *a, const char *key, const struct ynode *svc)
{
	const char *st = ynode_str(ynode_get(svcip__condition(svc), "status"));
	if (!st || strcmp(st, "True") != 0)
		return;
	const char *ip = ynode_path_str(svc, "spec.clusterIP");
	if (!svcip__empty(ip) && strcmp(ip, "None") != 0)
		svcip_claim_ip(a, ip, key, NULL);
	if (!svcip__wants_node_ports(ynode_path_str(svc, "spec.type")))
		return;
	const struct ynode *ports = ynode_path(svc, "spec.ports");
	for (size_t i = 0; ports && ports->type == YNODE_SEQ && i < ports->n; i++) {
		long long np = 0;
		if (ynode_int(ynode_get(ynode_item(ports, i), "nodePort"), &np) == 0 && np > 0 &&
		    np < SVCIP__PORTS)
			svcip_claim_port(a, (int)np, key, NULL);
	}
}

int svcip_apply_plan(struct ynode *svc, const struct svcip_plan *plan, int64_t now)
{
	struct ynode *spec = ynode_get(svc, "spec");
	if (!plan->status || !spec || spec->type != YNODE_MAP)
		return 0;
	int changed = 0;
	if (plan->ip[0]) {
		const char *cur = ynode_str(ynode_get(spec, "clusterIP"));
		if (svcip__empty(cur)) {
			ynode_set(spec, "clusterIP", ynode_new_str(plan->ip));
			changed = 1;
		} else if (strcmp(cur, plan->ip) != 0) {
			return 0; /* changed meanwhile: the next sync decides again */
		}
		const struct ynode *ips = ynode_get(spec, "clusterIPs");
		if (!ips || ips->type != YNODE_SEQ || !ips->n) {
			struct ynode *seq = ynode_new_seq();
			ynode_append(seq, ynode_new_str(plan->ip));
			ynode_set(spec, "clusterIPs", seq);
			changed = 1;
		}
	}
	struct ynode *ports = ynode_get(spec, "ports");
	for (size_t i = 0; i < plan->nports; i++) {
		const struct svcip_port *sp = &plan->ports[i];
		for (size_t j = 0; ports && ports->type == YNODE_SEQ && j < ports->n; j++) {
			struct ynode *p = ynode_item(ports, j);
			long long port = 0, np = 0;
			const struct ynode *np_node = ynode_get(p, "nodePort");
			if (ynode_int(ynode_get(p, "port"), &port) < 0 || port != sp->port ||
			    strcmp(svcip__protocol(p), sp->protocol) != 0)
				continue;
			if (ynode_is_null(np_node) || (ynode_int(np_node, &np) == 0 && np == 0)) {
				ynode_set(p, "nodePort", ynode_new_int(sp->node_port));
				changed = 1;
			}
			break;
		}
	}
	const struct condition c = {SVCIP_CONDITION, plan->status, plan->reason, plan->message};
	if (condition_is(svcip__condition(svc), &c))
		return changed;
	char ts[RFC3339_SIZE];
	obj_time_format(now, ts);
	condition_set(ynode_get_map(svc, "status"), &c, ts, 0);
	return 1;
}

/* ---- the controller ----------------------------------------------------- */

struct svcip {
	struct ctrl *c;
	struct informer *svcs;
	struct workqueue *q;
	struct expect *exp;
	struct svcip_alloc *alloc;
	bool primed;		/* the start-up pass is done */
	struct keymap *refused; /* keys of services refused something */
};

struct svcip__op {
	struct svcip *s;
	char *key;
};

static int svcip__mutate(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	return svcip_apply_plan(obj, arg, obj_now());
}

static void svcip__plan_free(void *p)
{
	if (p) {
		svcip_plan_clear(p);
		free(p);
	}
}

static void svcip__written(void *data, const struct writer_result *res)
{
	struct svcip__op *op = data;
	struct svcip *s = op->s;
	expect_written(s->exp, op->key, res->status == 0, s->svcs, op->key, res->min_rv, false,
		       loop_now_ms());
	if (res->status == 0 || res->status == ENOENT) {
		workqueue_add(s->q, op->key);
	} else if (res->status == EINVAL && res->msg && strstr(res->msg, "already allocated")) {
		/* corral-fs gave what this plan chose to a Service written
		 * meanwhile: forget the plan and decide again. */
		log_info("Service %s: %s; allocating again", op->key, res->msg);
		svcip_release(s->alloc, op->key);
		workqueue_add_rate_limited(s->q, op->key);
	} else {
		log_warn("Service %s: cannot write its allocation: %s", op->key, res->msg);
		workqueue_add_rate_limited(s->q, op->key);
	}
	free(op->key);
	free(op);
}

static int svcip__prime_one(void *data, const char *key, const struct ynode *svc)
{
	svcip_claim_existing(data, key, svc);
	return 0;
}

/* What was freed may be what a refused service waits for. */
static void svcip__retry_refused(struct svcip *s)
{
	const char *key;
	void *v;
	for (size_t i = 0; keymap_next(s->refused, &i, &key, &v);)
		workqueue_add(s->q, key);
}

static int svcip__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct svcip *s = data;
	if (!s->primed) {
		/* Every service is listed before the first sync: claim what
		 * was confirmed before anything is decided. */
		informer_foreach(s->svcs, NULL, svcip__prime_one, s->alloc);
		s->primed = true;
		log_info("serviceip: %zu addresses and %zu node ports in use",
			 svcip_ips_in_use(s->alloc), svcip_ports_in_use(s->alloc));
	}
	size_t used = svcip_ips_in_use(s->alloc) + svcip_ports_in_use(s->alloc);
	const struct ynode *svc = informer_get(s->svcs, key);
	if (!svc) {
		svcip_release(s->alloc, key);
		keymap_del(s->refused, key);
		expect_forget(s->exp, key);
		if (svcip_ips_in_use(s->alloc) + svcip_ports_in_use(s->alloc) < used)
			svcip__retry_refused(s);
		return 0;
	}
	uint64_t recheck = 0;
	if (!expect_ready(s->exp, key, loop_now_ms(), &recheck)) {
		if (recheck)
			workqueue_add_after(s->q, key, recheck);
		return 0;
	}
	struct svcip_plan *plan = xcalloc(1, sizeof(*plan));
	svcip_plan_service(s->alloc, key, svc, plan);
	if (plan->evicted)
		workqueue_add(s->q, plan->evicted);
	if (svcip_ips_in_use(s->alloc) + svcip_ports_in_use(s->alloc) < used)
		svcip__retry_refused(s);
	if (!plan->status) {
		keymap_del(s->refused, key);
		svcip__plan_free(plan);
		return 0;
	}
	bool refused = !strcmp(plan->status, "False");
	if (refused)
		keymap_set(s->refused, key, NULL);
	else
		keymap_del(s->refused, key);
	cleanup_ynode struct ynode *copy = ynode_clone(svc);
	if (!svcip_apply_plan(copy, plan, obj_now())) {
		svcip__plan_free(plan);
		return 0;
	}
	if (refused && s->c->events)
		events_record(s->c->events, SVCIP__COMPONENT, svc, "Warning", plan->reason, "%s",
			      plan->message);
	else if (plan->ip[0] && !ynode_path_str(svc, "spec.clusterIP"))
		log_debug("Service %s: clusterIP %s", key, plan->ip);
	char ns[256];
	const char *name = obj_key_split(key, ns, sizeof(ns));
	cleanup_free char *path = obj_path("services", ns, name ? name : key);
	struct svcip__op *op = xcalloc(1, sizeof(*op));
	op->s = s;
	op->key = xstrdup(key);
	expect_write(s->exp, key);
	writer_update(s->c->writer, path, svcip__mutate, plan, svcip__plan_free, 0, svcip__written,
		      op);
	return 0;
}

static void svcip__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct svcip *s = data;
	workqueue_add(s->q, key);
}

static void svcip__on_update(void *data, const char *key, const struct ynode *old,
			     const struct ynode *obj)
{
	(void)old;
	svcip__on_add(data, key, obj);
}

struct svcip *svcip_new(struct ctrl *c)
{
	const char *cidr =
	    c->cfg && c->cfg->service_cidr ? c->cfg->service_cidr : SERVICERANGE_DEFAULT_CIDR;
	const char *ports = c->cfg && c->cfg->node_port_range ? c->cfg->node_port_range
							      : SERVICERANGE_DEFAULT_PORTS;
	struct servicerange range;
	int lo, hi;
	cleanup_error struct error *err = NULL;
	if (servicerange_parse(cidr, &range, &err) < 0 ||
	    servicerange_parse_ports(ports, &lo, &hi, &err) < 0) {
		log_error("serviceip: %s", err->msg);
		return NULL;
	}
	struct svcip *s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->alloc = svcip_alloc_new(&range, lo, hi);
	s->svcs = ctrl_informer(c, "services");
	s->q = workqueue_new(c->loop, "services", NULL);
	s->exp = expect_new();
	s->refused = keymap_new(NULL);
	struct informer_handlers h = {
	    .on_add = svcip__on_add,
	    .on_update = svcip__on_update,
	    .on_delete = svcip__on_add,
	};
	informer_add_handlers(s->svcs, &h, s);
	workqueue_set_handler(s->q, svcip__sync, s);
	return s;
}

void svcip_free(struct svcip *s)
{
	if (!s)
		return;
	workqueue_free(s->q);
	expect_free(s->exp);
	keymap_free(s->refused);
	svcip_alloc_free(s->alloc);
	free(s);
}
