/* filter.c: the filters and the diagnosis of a pod that fits nowhere.
 * Filters read the cache and never change it; they run for hundreds of
 * nodes per decision, so the common case (no taints, no affinity, no host
 * ports) costs a few comparisons. */
#include "filter.h"
#include "nodeaffinity.h"
#include "selector.h"
#include "strmap.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- diagnosis ---------------------------------------------------------- */

struct sched_diag {
	struct strmap *reasons; /* reason -> count (uintptr_t) */
};

struct sched_diag *sched_diag_new(void)
{
	struct sched_diag *d = xcalloc(1, sizeof(*d));
	d->reasons = strmap_new();
	return d;
}

void sched_diag_free(struct sched_diag *d)
{
	if (!d)
		return;
	strmap_free(d->reasons, NULL);
	free(d);
}

void sched_diag_add(struct sched_diag *d, const char *reason)
{
	if (!d)
		return;
	uintptr_t v = (uintptr_t)strmap_get(d->reasons, reason);
	strmap_set(d->reasons, reason, (void *)(v + 1));
}

size_t sched_diag_count(const struct sched_diag *d, const char *reason)
{
	return (size_t)(uintptr_t)strmap_get(d->reasons, reason);
}

static int sched_diag__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *sched_diag_message(const struct sched_diag *d, size_t nnodes)
{
	size_t n = strmap_count(d->reasons);
	char **items = xcalloc(n ? n : 1, sizeof(*items));
	const char *reason;
	void *count;
	size_t k = 0;
	for (size_t i = 0; strmap_next(d->reasons, &i, &reason, &count);)
		items[k++] = xasprintf("%zu %s", (size_t)(uintptr_t)count, reason);
	qsort(items, k, sizeof(*items), sched_diag__cmp);
	size_t len = 64;
	for (size_t i = 0; i < k; i++)
		len += strlen(items[i]) + 2;
	char *msg = xmalloc(len);
	int off = snprintf(msg, len, "0/%zu nodes are available:", nnodes);
	for (size_t i = 0; i < k; i++) {
		off += snprintf(msg + off, len - (size_t)off, "%s%s", i ? ", " : " ", items[i]);
		free(items[i]);
	}
	snprintf(msg + off, len - (size_t)off, ".");
	free(items);
	return msg;
}

/* ---- taints and tolerations ---------------------------------------------- */

bool sched_tolerates(const struct sched_toleration *tols, size_t ntols, const char *key,
		     const char *value, enum sched_effect effect)
{
	for (size_t i = 0; i < ntols; i++) {
		const struct sched_toleration *t = &tols[i];
		if (t->effect != SCHED_EFFECT_ALL && t->effect != effect)
			continue;
		if (*t->key && strcmp(t->key, key) != 0)
			continue;
		if (t->exists || strcmp(t->value, value) == 0)
			return true;
	}
	return false;
}

bool sched_filter_unschedulable(const struct sched_pod *p, const struct sched_node *n,
				struct sched_diag *d)
{
	if (!n->info->unschedulable ||
	    sched_tolerates(p->tolerations, p->ntolerations, SCHED_TAINT_UNSCHEDULABLE, "",
			    SCHED_EFFECT_NO_SCHEDULE))
		return true;
	sched_diag_add(d, SCHED_REASON_UNSCHEDULABLE);
	return false;
}

static bool sched_filter__untolerated(const struct sched_pod *p, const char *key, const char *value,
				      struct sched_diag *d)
{
	if (d) {
		cleanup_free char *reason =
		    xasprintf("node(s) had untolerated taint {%s: %s}", key, value);
		sched_diag_add(d, reason);
	}
	(void)p;
	return false;
}

bool sched_filter_taints(const struct sched_pod *p, const struct sched_node *n,
			 struct sched_diag *d)
{
	const struct sched_nodeinfo *info = n->info;
	for (size_t i = 0; i < info->ntaints; i++) {
		const struct sched_taint *t = &info->taints[i];
		if (t->effect != SCHED_EFFECT_NO_SCHEDULE && t->effect != SCHED_EFFECT_NO_EXECUTE)
			continue;
		if (!sched_tolerates(p->tolerations, p->ntolerations, t->key, t->value, t->effect))
			return sched_filter__untolerated(p, t->key, t->value, d);
	}
	if (info->ready != SCHED_READY) {
		const char *key = info->ready == SCHED_UNREACHABLE ? SCHED_TAINT_UNREACHABLE
								   : SCHED_TAINT_NOT_READY;
		if (!sched_tolerates(p->tolerations, p->ntolerations, key, "",
				     SCHED_EFFECT_NO_SCHEDULE))
			return sched_filter__untolerated(p, key, "", d);
	}
	return true;
}

/* ---- node affinity ---------------------------------------------------------- */

static bool sched__in(const struct sched_node_req *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

static bool sched__req_matches(const struct sched_node_req *r, const char *v)
{
	switch (r->op) {
	case SCHED_OP_IN:
		return v && sched__in(r, v);
	case SCHED_OP_NOT_IN:
		return !v || !sched__in(r, v);
	case SCHED_OP_EXISTS:
		return v != NULL;
	case SCHED_OP_DOES_NOT_EXIST:
		return v == NULL;
	case SCHED_OP_GT:
	case SCHED_OP_LT: {
		if (!v || !*v)
			return false;
		char *end = NULL;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (*end || errno)
			return false;
		return r->op == SCHED_OP_GT ? x > r->num : x < r->num;
	}
	}
	return false;
}

bool sched_node_term_matches(const struct sched_node_term *t, const struct ynode *labels,
			     const char *name)
{
	if (!t->nexprs && !t->nfields)
		return false;
	for (size_t i = 0; i < t->nexprs; i++)
		if (!sched__req_matches(&t->exprs[i], sched_label(labels, t->exprs[i].key)))
			return false;
	for (size_t i = 0; i < t->nfields; i++)
		if (!sched__req_matches(&t->fields[i], name))
			return false;
	return true;
}

bool sched_filter_node_affinity(const struct sched_pod *p, const struct sched_node *n,
				struct sched_diag *d)
{
	const struct ynode *labels = n->info->labels;
	const struct ynode *sel = p->node_selector;
	for (size_t i = 0; sel && i < sel->n; i++) {
		const char *want = ynode_str(ynode_map_val(sel, i));
		const char *have = sched_label(labels, ynode_map_key(sel, i)->str);
		if (!have || strcmp(have, want ? want : "") != 0)
			goto reject;
	}
	if (p->has_required) {
		bool any = false;
		for (size_t i = 0; i < p->nrequired && !any; i++)
			any = sched_node_term_matches(&p->required[i], labels, n->name);
		if (!any)
			goto reject;
	}
	return true;
reject:
	sched_diag_add(d, SCHED_REASON_NODE_AFFINITY);
	return false;
}

/* ---- host ports ----------------------------------------------------------------- */

static bool sched__port_conflict(const struct sched_host_port *want,
				 const struct sched_host_port *used)
{
	if (want->port != used->port || strcmp(want->proto, used->proto) != 0)
		return false;
	return strcmp(want->ip, "0.0.0.0") == 0 || strcmp(used->ip, "0.0.0.0") == 0 ||
	       strcmp(want->ip, used->ip) == 0;
}

bool sched_filter_ports(const struct sched_pod *p, const struct sched_node *n, struct sched_diag *d)
{
	if (!p->nports || !n->nports)
		return true;
	for (size_t i = 0; i < n->npods; i++) {
		const struct sched_pod *o = n->pods[i];
		if (!o->nports || strcmp(o->key, p->key) == 0)
			continue;
		for (size_t a = 0; a < p->nports; a++) {
			for (size_t b = 0; b < o->nports; b++) {
				if (sched__port_conflict(&p->ports[a], &o->ports[b])) {
					sched_diag_add(d, SCHED_REASON_PORTS);
					return false;
				}
			}
		}
	}
	return true;
}

/* ---- resources ------------------------------------------------------------------ */

bool sched_filter_resources(const struct sched_pod *p, const struct sched_node *n,
			    struct sched_diag *d)
{
	const struct sched_nodeinfo *info = n->info;
	bool fits = true;
	if ((int64_t)n->npods + 1 > info->alloc_pods) {
		sched_diag_add(d, SCHED_REASON_TOO_MANY_PODS);
		fits = false;
	}
	const struct sched_res *want = &p->req;
	if (sched_res_is_zero(want))
		return fits;
	const struct sched_res *have = &info->alloc, *used = &n->requested;
	if (want->cpu > 0 && want->cpu > have->cpu - used->cpu) {
		sched_diag_add(d, "Insufficient cpu");
		fits = false;
	}
	if (want->mem > 0 && want->mem > have->mem - used->mem) {
		sched_diag_add(d, "Insufficient memory");
		fits = false;
	}
	if (want->eph > 0 && want->eph > have->eph - used->eph) {
		sched_diag_add(d, "Insufficient ephemeral-storage");
		fits = false;
	}
	for (size_t i = 0; i < want->next; i++) {
		const struct sched_ext *e = &want->ext[i];
		if (e->v <= 0 ||
		    e->v <= sched_res_ext(have, e->name) - sched_res_ext(used, e->name))
			continue;
		if (d) {
			cleanup_free char *reason = xasprintf("Insufficient %s", e->name);
			sched_diag_add(d, reason);
		}
		fits = false;
	}
	return fits;
}

/* ---- inter-pod affinity ------------------------------------------------------------ */

struct sched_cycle {
	const struct sched_cache *cache;
	const struct sched_pod *pod;
	/* "key=value" topology pairs -> pods there (uintptr_t):
	 * existing pods whose anti-affinity terms match this pod, */
	struct strmap *existing_anti;
	/* pods that match this pod's anti-affinity terms, */
	struct strmap *anti;
	/* pods that match this pod's affinity terms. */
	struct strmap *affinity;
	bool matches_own_affinity; /* the pod matches all its affinity terms */
};

/* Whether a term written in a pod of namespace term_ns matches pod p. */
static bool sched__term_matches(const struct sched_pod_term *t, const char *term_ns,
				const struct sched_pod *p)
{
	if (!t->all_namespaces) {
		bool in = false;
		if (!t->nnamespaces)
			in = strcmp(term_ns, p->ns) == 0;
		for (size_t i = 0; i < t->nnamespaces && !in; i++)
			in = strcmp(t->namespaces[i], p->ns) == 0;
		if (!in)
			return false;
	}
	return t->sel && selector_matches(t->sel, p->labels);
}

static void sched__count(struct strmap *m, const char *key, const char *value)
{
	cleanup_free char *pair = xasprintf("%s=%s", key, value);
	uintptr_t v = (uintptr_t)strmap_get(m, pair);
	strmap_set(m, pair, (void *)(v + 1));
}

static size_t sched__counted(const struct strmap *m, const char *key, const char *value)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s=%s", key, value);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		cleanup_free char *pair = xasprintf("%s=%s", key, value);
		return (size_t)(uintptr_t)strmap_get(m, pair);
	}
	return (size_t)(uintptr_t)strmap_get(m, buf);
}

struct sched_cycle *sched_cycle_new(const struct sched_cache *c, const struct sched_pod *p)
{
	struct sched_cycle *cy = xcalloc(1, sizeof(*cy));
	cy->cache = c;
	cy->pod = p;
	cy->existing_anti = strmap_new();
	cy->anti = strmap_new();
	cy->affinity = strmap_new();
	for (size_t i = 0; i < sched_cache_anti_count(c); i++) {
		const struct sched_pod *e = sched_cache_anti_at(c, i);
		const struct sched_nodeinfo *info = e->node->info;
		if (!info || strcmp(e->key, p->key) == 0)
			continue;
		for (size_t t = 0; t < e->nanti_affinity; t++) {
			const struct sched_pod_term *term = &e->anti_affinity[t];
			const char *v = sched_label(info->labels, term->topology_key);
			if (v && sched__term_matches(term, e->ns, p))
				sched__count(cy->existing_anti, term->topology_key, v);
		}
	}
	if (p->naffinity) {
		cy->matches_own_affinity = true;
		for (size_t t = 0; t < p->naffinity; t++)
			if (!sched__term_matches(&p->affinity[t], p->ns, p))
				cy->matches_own_affinity = false;
	}
	if (!p->naffinity && !p->nanti_affinity)
		return cy;
	for (size_t i = 0; i < sched_cache_node_count(c); i++) {
		const struct sched_node *n = sched_cache_node_at(c, i);
		for (size_t j = 0; j < n->npods; j++) {
			const struct sched_pod *e = n->pods[j];
			if (strcmp(e->key, p->key) == 0)
				continue;
			for (size_t t = 0; t < p->naffinity; t++) {
				const struct sched_pod_term *term = &p->affinity[t];
				const char *v = sched_label(n->info->labels, term->topology_key);
				if (v && sched__term_matches(term, p->ns, e))
					sched__count(cy->affinity, term->topology_key, v);
			}
			for (size_t t = 0; t < p->nanti_affinity; t++) {
				const struct sched_pod_term *term = &p->anti_affinity[t];
				const char *v = sched_label(n->info->labels, term->topology_key);
				if (v && sched__term_matches(term, p->ns, e))
					sched__count(cy->anti, term->topology_key, v);
			}
		}
	}
	return cy;
}

void sched_cycle_free(struct sched_cycle *cy)
{
	if (!cy)
		return;
	strmap_free(cy->existing_anti, NULL);
	strmap_free(cy->anti, NULL);
	strmap_free(cy->affinity, NULL);
	free(cy);
}

bool sched_filter_pod_affinity(const struct sched_cycle *cy, const struct sched_node *n,
			       struct sched_diag *d)
{
	const struct sched_pod *p = cy->pod;
	const struct ynode *labels = n->info->labels;
	if (p->naffinity) {
		bool exist = true;
		for (size_t t = 0; t < p->naffinity; t++) {
			const char *v = sched_label(labels, p->affinity[t].topology_key);
			if (!v) {
				/* Every topology key must be on the node. */
				sched_diag_add(d, SCHED_REASON_POD_AFFINITY);
				return false;
			}
			if (!sched__counted(cy->affinity, p->affinity[t].topology_key, v))
				exist = false;
		}
		/* The first pod of a group that has affinity to itself goes
		 * anywhere, else it would wait forever. */
		if (!exist && !(strmap_count(cy->affinity) == 0 && cy->matches_own_affinity)) {
			sched_diag_add(d, SCHED_REASON_POD_AFFINITY);
			return false;
		}
	}
	for (size_t t = 0; t < p->nanti_affinity; t++) {
		const char *v = sched_label(labels, p->anti_affinity[t].topology_key);
		if (v && sched__counted(cy->anti, p->anti_affinity[t].topology_key, v)) {
			sched_diag_add(d, SCHED_REASON_POD_ANTI_AFFINITY);
			return false;
		}
	}
	if (strmap_count(cy->existing_anti)) {
		const char *pair;
		for (size_t i = 0; strmap_next(cy->existing_anti, &i, &pair, NULL);) {
			const char *eq = strchr(pair, '=');
			cleanup_free char *key = xstrndup(pair, (size_t)(eq - pair));
			const char *v = sched_label(labels, key);
			if (v && strcmp(v, eq + 1) == 0) {
				sched_diag_add(d, SCHED_REASON_EXISTING_ANTI_AFFINITY);
				return false;
			}
		}
	}
	return true;
}

/* ---- all of them ------------------------------------------------------------------ */

bool sched_filter_volumes(const struct sched_pod *p, const struct sched_node *n,
			  struct sched_diag *d)
{
	const struct sched_nodeinfo *info = n->info;
	for (size_t i = 0; i < p->nvolume_affinity; i++)
		if (!info ||
		    !nodeaffinity_allows(p->volume_affinity[i], info->name, info->labels)) {
			sched_diag_add(d, SCHED_REASON_VOLUME_NODE_CONFLICT);
			return false;
		}
	return true;
}

bool sched_filter_node(const struct sched_cycle *cy, const struct sched_node *n,
		       struct sched_diag *d)
{
	const struct sched_pod *p = cy->pod;
	return sched_filter_unschedulable(p, n, d) && sched_filter_taints(p, n, d) &&
	       sched_filter_node_affinity(p, n, d) && sched_filter_ports(p, n, d) &&
	       sched_filter_resources(p, n, d) && sched_filter_volumes(p, n, d) &&
	       sched_filter_pod_affinity(cy, n, d);
}
