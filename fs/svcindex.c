/* svcindex.c: the index of Service addresses and node ports.
 *
 * Slots hold malloc'd copies of the holder's name. Every change happens
 * under one mutex, held only for the few slots a write touches, never
 * across the store's commit. This file must never decide an allocation:
 * it only refuses and records. */
#include "svcindex.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVCINDEX__PORTS 65536

struct svcindex {
	pthread_mutex_t lock;
	struct servicerange range;
	uint32_t size;
	char **ips;   /* size slots: the holder, or NULL */
	char **ports; /* SVCINDEX__PORTS slots */
};

/* What a Service object holds. */
struct svcindex__holds {
	const char *ip_text; /* spec.clusterIP when it names an address */
	int ip_err;	     /* 0, or servicerange_offset()'s result */
	uint32_t ip;
	int *ports;
	size_t *port_index; /* each port's place in spec.ports */
	size_t nports;
};

static void svcindex__holds_of(const struct svcindex *x, const struct ynode *svc,
			       struct svcindex__holds *h)
{
	memset(h, 0, sizeof(*h));
	h->ip_err = -ENOENT;
	if (!svc)
		return;
	const char *type = ynode_path_str(svc, "spec.type");
	if (type && !strcmp(type, "ExternalName"))
		return;
	const char *ip = ynode_path_str(svc, "spec.clusterIP");
	if (ip && *ip && strcmp(ip, "None") != 0) {
		h->ip_text = ip;
		h->ip_err = servicerange_offset(&x->range, ip, &h->ip);
		if (h->ip_err == 0 && h->ip >= x->size)
			h->ip_err = -ERANGE;
	}
	const struct ynode *ports = ynode_path(svc, "spec.ports");
	if (!ports || ports->type != YNODE_SEQ || !ports->n)
		return;
	h->ports = xcalloc(ports->n, sizeof(*h->ports));
	h->port_index = xcalloc(ports->n, sizeof(*h->port_index));
	for (size_t i = 0; i < ports->n; i++) {
		long long np = 0;
		if (ynode_int(ynode_get(ynode_item(ports, i), "nodePort"), &np) == 0 && np > 0 &&
		    np < SVCINDEX__PORTS) {
			h->port_index[h->nports] = i;
			h->ports[h->nports++] = (int)np;
		}
	}
}

static void svcindex__holds_clear(struct svcindex__holds *h)
{
	free(h->ports);
	free(h->port_index);
}

static bool svcindex__has_port(const struct svcindex__holds *h, int port)
{
	for (size_t i = 0; i < h->nports; i++)
		if (h->ports[i] == port)
			return true;
	return false;
}

static bool svcindex__same_ip(const struct svcindex__holds *a, const struct svcindex__holds *b)
{
	return a->ip_err == 0 && b->ip_err == 0 && a->ip == b->ip;
}

/* Frees a slot if owner holds it. */
static void svcindex__free_slot(char **slot, const char *owner)
{
	if (*slot && !strcmp(*slot, owner)) {
		free(*slot);
		*slot = NULL;
	}
}

struct svcindex *svcindex_new(const struct servicerange *range)
{
	struct svcindex *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	x->range = *range;
	x->size = range->size > SVCINDEX_MAX_RANGE ? SVCINDEX_MAX_RANGE : range->size;
	x->ips = xcalloc(x->size, sizeof(*x->ips));
	x->ports = xcalloc(SVCINDEX__PORTS, sizeof(*x->ports));
	return x;
}

void svcindex_free(struct svcindex *x)
{
	if (!x)
		return;
	for (uint32_t i = 0; i < x->size; i++)
		free(x->ips[i]);
	for (size_t i = 0; i < SVCINDEX__PORTS; i++)
		free(x->ports[i]);
	free(x->ips);
	free(x->ports);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void svcindex_load(struct svcindex *x, const char *owner, const struct ynode *svc)
{
	struct svcindex__holds h;
	svcindex__holds_of(x, svc, &h);
	pthread_mutex_lock(&x->lock);
	if (h.ip_err == 0 && !x->ips[h.ip])
		x->ips[h.ip] = xstrdup(owner);
	for (size_t i = 0; i < h.nports; i++)
		if (!x->ports[h.ports[i]])
			x->ports[h.ports[i]] = xstrdup(owner);
	pthread_mutex_unlock(&x->lock);
	svcindex__holds_clear(&h);
}

/* Adds one refusal to the list. */
static void svcindex__refuse(char **list, size_t *n, char *msg)
{
	if (!*list) {
		*list = msg;
	} else {
		char *joined = xasprintf("%s, %s", *list, msg);
		free(*list);
		free(msg);
		*list = joined;
	}
	(*n)++;
}

int svcindex_reserve(struct svcindex *x, const char *owner, const char *name,
		     const struct ynode *svc, const struct ynode *old, struct svcindex_claim *got,
		     struct error **err)
{
	memset(got, 0, sizeof(*got));
	got->ip = -1;
	struct svcindex__holds h, oh;
	svcindex__holds_of(x, svc, &h);
	svcindex__holds_of(x, old, &oh);
	char *refusals = NULL;
	size_t nrefusals = 0;
	got->ports = xcalloc(h.nports + 1, sizeof(*got->ports));
	pthread_mutex_lock(&x->lock);
	bool new_ip = h.ip_text && !svcindex__same_ip(&h, &oh) &&
		      !(oh.ip_text && !strcmp(oh.ip_text, h.ip_text));
	if (new_ip && h.ip_err == -ERANGE) {
		svcindex__refuse(
		    &refusals, &nrefusals,
		    xasprintf("spec.clusterIP: Invalid value: \"%s\": provided IP is not "
			      "in the valid range. The range of valid IPs is %s",
			      h.ip_text, x->range.text));
	} else if (new_ip && h.ip_err == 0) {
		char **slot = &x->ips[h.ip];
		if (*slot && strcmp(*slot, owner) != 0) {
			svcindex__refuse(
			    &refusals, &nrefusals,
			    xasprintf("spec.clusterIP: Invalid value: \"%s\": provided "
				      "IP is already allocated (to service %s)",
				      h.ip_text, *slot));
		} else if (!*slot) {
			*slot = xstrdup(owner);
			got->ip = h.ip;
		}
	}
	for (size_t i = 0; i < h.nports; i++) {
		int p = h.ports[i];
		if (svcindex__has_port(&oh, p))
			continue;
		char **slot = &x->ports[p];
		if (*slot && strcmp(*slot, owner) != 0) {
			svcindex__refuse(
			    &refusals, &nrefusals,
			    xasprintf("spec.ports[%zu].nodePort: Invalid value: %d: "
				      "provided port is already allocated (to service %s)",
				      h.port_index[i], p, *slot));
		} else if (!*slot) {
			*slot = xstrdup(owner);
			got->ports[got->nports++] = p;
		}
	}
	pthread_mutex_unlock(&x->lock);
	svcindex__holds_clear(&h);
	svcindex__holds_clear(&oh);
	if (!refusals)
		return 0;
	svcindex_unreserve(x, owner, got);
	int r = error_set(err, EINVAL,
			  nrefusals > 1 ? "Service \"%s\" is invalid: [%s]"
					: "Service \"%s\" is invalid: %s",
			  name, refusals);
	free(refusals);
	return r;
}

void svcindex_unreserve(struct svcindex *x, const char *owner, struct svcindex_claim *got)
{
	pthread_mutex_lock(&x->lock);
	if (got->ip >= 0)
		svcindex__free_slot(&x->ips[got->ip], owner);
	for (size_t i = 0; i < got->nports; i++)
		svcindex__free_slot(&x->ports[got->ports[i]], owner);
	pthread_mutex_unlock(&x->lock);
	free(got->ports);
	memset(got, 0, sizeof(*got));
	got->ip = -1;
}

void svcindex_settle(struct svcindex *x, const char *owner, const struct ynode *svc,
		     const struct ynode *old, struct svcindex_claim *got)
{
	free(got->ports);
	memset(got, 0, sizeof(*got));
	got->ip = -1;
	if (!old)
		return;
	struct svcindex__holds h, oh;
	svcindex__holds_of(x, svc, &h);
	svcindex__holds_of(x, old, &oh);
	pthread_mutex_lock(&x->lock);
	if (oh.ip_err == 0 && !svcindex__same_ip(&h, &oh))
		svcindex__free_slot(&x->ips[oh.ip], owner);
	for (size_t i = 0; i < oh.nports; i++)
		if (!svcindex__has_port(&h, oh.ports[i]))
			svcindex__free_slot(&x->ports[oh.ports[i]], owner);
	pthread_mutex_unlock(&x->lock);
	svcindex__holds_clear(&h);
	svcindex__holds_clear(&oh);
}

void svcindex_drop(struct svcindex *x, const char *owner, const struct ynode *old)
{
	svcindex_settle(x, owner, NULL, old,
			&(struct svcindex_claim){.ip = -1, .ports = NULL, .nports = 0});
}

/* ---- the admission hook ---- */

/* The claims of rq in a shared store (admission.h): the address and the
 * node ports rq->obj holds that rq->old did not, taken; those rq->old held
 * that rq->obj does not, given back. By the address's canonical text, so
 * that two spellings of one address are one claim. */
static void svcindex__claims(const struct svcindex *x, struct admission_request *rq)
{
	struct svcindex__holds h, oh;
	svcindex__holds_of(x, rq->obj, &h);
	svcindex__holds_of(x, rq->old, &oh);
	cleanup_free char *holder = xasprintf("service %s", rq->owner);
	char ip[16], name[48];
	if (h.ip_err == 0 && !svcindex__same_ip(&h, &oh)) {
		servicerange_format(&x->range, h.ip, ip);
		snprintf(name, sizeof(name), "svcip/%s", ip);
		cleanup_free char *why =
		    xasprintf("Service \"%s\" is invalid: spec.clusterIP: Invalid value: \"%s\": "
			      "provided IP is already allocated",
			      rq->name, h.ip_text);
		admission_claim(rq, true, name, holder, why);
	}
	if (oh.ip_err == 0 && !svcindex__same_ip(&h, &oh)) {
		servicerange_format(&x->range, oh.ip, ip);
		snprintf(name, sizeof(name), "svcip/%s", ip);
		admission_claim(rq, false, name, holder, NULL);
	}
	for (size_t i = 0; i < h.nports; i++) {
		if (svcindex__has_port(&oh, h.ports[i]))
			continue;
		snprintf(name, sizeof(name), "nodeport/%d", h.ports[i]);
		cleanup_free char *why = xasprintf(
		    "Service \"%s\" is invalid: spec.ports[%zu].nodePort: Invalid value: %d: "
		    "provided port is already allocated",
		    rq->name, h.port_index[i], h.ports[i]);
		admission_claim(rq, true, name, holder, why);
	}
	for (size_t i = 0; i < oh.nports; i++) {
		if (svcindex__has_port(&h, oh.ports[i]))
			continue;
		snprintf(name, sizeof(name), "nodeport/%d", oh.ports[i]);
		admission_claim(rq, false, name, holder, NULL);
	}
	svcindex__holds_clear(&h);
	svcindex__holds_clear(&oh);
}

void *svcindex_hook_init(const struct admission_config *cfg)
{
	if (cfg && cfg->service_range)
		return svcindex_new(cfg->service_range);
	struct servicerange range;
	servicerange_parse(SERVICERANGE_DEFAULT_CIDR, &range, NULL);
	return svcindex_new(&range);
}

void svcindex_hook_fini(void *state)
{
	svcindex_free(state);
}

void svcindex_hook_load(void *state, const struct admission_request *rq)
{
	if (rq->obj)
		svcindex_load(state, rq->owner, rq->obj);
}

int svcindex_hook_reserve(void *state, struct admission_request *rq, void **claim,
			  struct error **err)
{
	*claim = NULL;
	if (!rq->obj) {
		svcindex__claims(state, rq); /* a deletion gives back, takes nothing */
		return 0;
	}
	struct svcindex_claim *got = xcalloc(1, sizeof(*got));
	got->ip = -1;
	int r = svcindex_reserve(state, rq->owner, rq->name, rq->obj, rq->old, got, err);
	if (r < 0) {
		free(got);
		return r;
	}
	svcindex__claims(state, rq);
	*claim = got;
	return 0;
}

void svcindex_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	if (!rq->obj) {
		if (rq->old)
			svcindex_drop(state, rq->owner, rq->old);
		return;
	}
	svcindex_settle(state, rq->owner, rq->obj, rq->old, claim);
	free(claim);
}

void svcindex_hook_unreserve(void *state, const struct admission_request *rq, void *claim)
{
	if (claim)
		svcindex_unreserve(state, rq->owner, claim);
	free(claim);
}
