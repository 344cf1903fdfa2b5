/* objects.c: reading Pod and Node objects into the scheduler's structs.
 *
 * Requests follow Kubernetes' PodRequests: the containers' requests are
 * summed; restartable init containers (sidecars, restartPolicy: Always) run
 * beside them and add to the sum; every other init container runs alone,
 * beside the sidecars started before it, and the pod needs the larger of the
 * two; spec.overhead comes on top. A missing request falls back to the
 * limit, as the API server defaults it.
 *
 * This file must never keep a pointer into the object it reads: the
 * informer frees objects when they change. */
#include "objects.h"
#include "conditions.h"
#include "fnv.h"
#include "ownerref.h"
#include "pod.h"
#include "quantity.h"
#include "selector.h"
#include "strmap.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- resources ---------------------------------------------------------- */

void sched_res_clear(struct sched_res *r)
{
	for (size_t i = 0; i < r->next; i++)
		free(r->ext[i].name);
	free(r->ext);
	memset(r, 0, sizeof(*r));
}

static int64_t *sched_res__slot(struct sched_res *r, const char *name)
{
	if (strcmp(name, "cpu") == 0)
		return &r->cpu;
	if (strcmp(name, "memory") == 0)
		return &r->mem;
	if (strcmp(name, "ephemeral-storage") == 0)
		return &r->eph;
	for (size_t i = 0; i < r->next; i++)
		if (strcmp(r->ext[i].name, name) == 0)
			return &r->ext[i].v;
	r->ext = xrealloc(r->ext, (r->next + 1) * sizeof(*r->ext));
	r->ext[r->next].name = xstrdup(name);
	r->ext[r->next].v = 0;
	return &r->ext[r->next++].v;
}

void sched_res_add_named(struct sched_res *r, const char *name, int64_t v)
{
	*sched_res__slot(r, name) += v;
}

void sched_res_copy(struct sched_res *dst, const struct sched_res *src)
{
	sched_res_clear(dst);
	dst->cpu = src->cpu;
	dst->mem = src->mem;
	dst->eph = src->eph;
	for (size_t i = 0; i < src->next; i++)
		sched_res_add_named(dst, src->ext[i].name, src->ext[i].v);
}

void sched_res_add(struct sched_res *a, const struct sched_res *b)
{
	a->cpu += b->cpu;
	a->mem += b->mem;
	a->eph += b->eph;
	for (size_t i = 0; i < b->next; i++)
		sched_res_add_named(a, b->ext[i].name, b->ext[i].v);
}

void sched_res_sub(struct sched_res *a, const struct sched_res *b)
{
	a->cpu -= b->cpu;
	a->mem -= b->mem;
	a->eph -= b->eph;
	for (size_t i = 0; i < b->next; i++)
		sched_res_add_named(a, b->ext[i].name, -b->ext[i].v);
}

void sched_res_max(struct sched_res *a, const struct sched_res *b)
{
	if (b->cpu > a->cpu)
		a->cpu = b->cpu;
	if (b->mem > a->mem)
		a->mem = b->mem;
	if (b->eph > a->eph)
		a->eph = b->eph;
	for (size_t i = 0; i < b->next; i++) {
		int64_t *s = sched_res__slot(a, b->ext[i].name);
		if (b->ext[i].v > *s)
			*s = b->ext[i].v;
	}
}

int64_t sched_res_ext(const struct sched_res *r, const char *name)
{
	for (size_t i = 0; i < r->next; i++)
		if (strcmp(r->ext[i].name, name) == 0)
			return r->ext[i].v;
	return 0;
}

bool sched_res_is_zero(const struct sched_res *r)
{
	if (r->cpu || r->mem || r->eph)
		return false;
	for (size_t i = 0; i < r->next; i++)
		if (r->ext[i].v)
			return false;
	return true;
}

/* ---- small readers ------------------------------------------------------- */

const char *sched_label(const struct ynode *labels, const char *key)
{
	const struct ynode *v = ynode_get(labels, key);
	if (!v)
		return NULL;
	if (v->type != YNODE_SCALAR)
		return NULL;
	return ynode_is_null(v) ? "" : v->str;
}

static char *sched__dup_str(const struct ynode *n)
{
	const char *s = ynode_str(n);
	return s && !ynode_is_null(n) && *s ? xstrdup(s) : NULL;
}

static bool sched__is_seq(const struct ynode *n)
{
	return n && n->type == YNODE_SEQ;
}

static bool sched__is_map(const struct ynode *n)
{
	return n && n->type == YNODE_MAP;
}

/* Records the first problem only: it is what the pod's condition shows. */
static void sched__error(char **error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sched__error(char **error, const char *fmt, ...)
{
	if (!error || *error)
		return;
	va_list ap;
	va_start(ap, fmt);
	*error = xvasprintf(fmt, ap);
	va_end(ap);
}

/* Adds a ResourceList (requests, limits, overhead) to r; "pods" goes to
 * *pods when pods is not NULL, and is ignored otherwise. skip (may be NULL)
 * names resources to leave out. */
static void sched__read_list(const struct ynode *list, const char *path, struct sched_res *r,
			     int64_t *pods, const struct ynode *skip, char **error)
{
	if (!sched__is_map(list))
		return;
	for (size_t i = 0; i < list->n; i++) {
		const char *name = ynode_map_key(list, i)->str;
		const char *text = ynode_str(ynode_map_val(list, i));
		if (skip && ynode_get(skip, name))
			continue;
		int64_t v = 0;
		cleanup_error struct error *err = NULL;
		if (!text || quantity_parse(text, &v, &err) < 0) {
			sched__error(error, "%s.%s: %s", path, name,
				     err ? err->msg : "must be a quantity");
			continue;
		}
		if (strcmp(name, "pods") == 0) {
			if (pods)
				*pods += v / 1000;
			continue;
		}
		sched_res_add_named(r, name, v);
	}
}

/* One container's requests (limits standing in for missing requests), and
 * the same with the scoring defaults for missing cpu and memory. */
static void sched__container_requests(const struct ynode *c, const char *path,
				      struct sched_res *req, struct sched_res *nz, char **error)
{
	const struct ynode *res = ynode_get(c, "resources");
	const struct ynode *requests = ynode_get(res, "requests");
	const struct ynode *limits = ynode_get(res, "limits");
	cleanup_free char *rpath = xasprintf("%s.resources.requests", path);
	cleanup_free char *lpath = xasprintf("%s.resources.limits", path);
	sched__read_list(requests, rpath, req, NULL, NULL, error);
	sched__read_list(limits, lpath, req, NULL, sched__is_map(requests) ? requests : NULL,
			 error);
	sched_res_copy(nz, req);
	if (!ynode_get(requests, "cpu") && !ynode_get(limits, "cpu"))
		nz->cpu = SCHED_DEFAULT_MILLI_CPU;
	if (!ynode_get(requests, "memory") && !ynode_get(limits, "memory"))
		nz->mem = SCHED_DEFAULT_MEMORY;
}

static void sched__add_ports(struct sched_pod *p, const struct ynode *c)
{
	const struct ynode *ports = ynode_get(c, "ports");
	if (!sched__is_seq(ports))
		return;
	for (size_t i = 0; i < ports->n; i++) {
		const struct ynode *port = ynode_item(ports, i);
		long long hp = 0;
		if (ynode_int(ynode_get(port, "hostPort"), &hp) < 0 || hp <= 0)
			continue;
		const char *proto = ynode_str(ynode_get(port, "protocol"));
		const char *ip = ynode_str(ynode_get(port, "hostIP"));
		p->ports = xrealloc(p->ports, (p->nports + 1) * sizeof(*p->ports));
		p->ports[p->nports].port = (long)hp;
		p->ports[p->nports].proto = xstrdup(proto && *proto ? proto : "TCP");
		p->ports[p->nports].ip = xstrdup(ip && *ip ? ip : "0.0.0.0");
		p->nports++;
	}
}

static void sched__requests(struct sched_pod *p, const struct ynode *spec)
{
	struct sched_res nz = {0};
	const struct ynode *cs = ynode_get(spec, "containers");
	for (size_t i = 0; sched__is_seq(cs) && i < cs->n; i++) {
		struct sched_res r = {0}, z = {0};
		cleanup_free char *path = xasprintf("spec.containers[%zu]", i);
		sched__container_requests(ynode_item(cs, i), path, &r, &z, &p->error);
		sched_res_add(&p->req, &r);
		sched_res_add(&nz, &z);
		sched_res_clear(&r);
		sched_res_clear(&z);
		sched__add_ports(p, ynode_item(cs, i));
	}
	struct sched_res side = {0}, side_nz = {0}, init = {0}, init_nz = {0};
	const struct ynode *ics = ynode_get(spec, "initContainers");
	for (size_t i = 0; sched__is_seq(ics) && i < ics->n; i++) {
		const struct ynode *c = ynode_item(ics, i);
		struct sched_res r = {0}, z = {0};
		cleanup_free char *path = xasprintf("spec.initContainers[%zu]", i);
		sched__container_requests(c, path, &r, &z, &p->error);
		const char *restart = ynode_str(ynode_get(c, "restartPolicy"));
		if (restart && strcmp(restart, "Always") == 0) {
			/* A sidecar: runs from now on, beside everything after. */
			sched_res_add(&side, &r);
			sched_res_add(&side_nz, &z);
			sched_res_copy(&r, &side);
			sched_res_copy(&z, &side_nz);
			sched__add_ports(p, c);
		} else {
			sched_res_add(&r, &side);
			sched_res_add(&z, &side_nz);
		}
		sched_res_max(&init, &r);
		sched_res_max(&init_nz, &z);
		sched_res_clear(&r);
		sched_res_clear(&z);
	}
	sched_res_add(&p->req, &side);
	sched_res_add(&nz, &side_nz);
	sched_res_max(&p->req, &init);
	sched_res_max(&nz, &init_nz);
	const struct ynode *overhead = ynode_get(spec, "overhead");
	sched__read_list(overhead, "spec.overhead", &p->req, NULL, NULL, &p->error);
	sched__read_list(overhead, "spec.overhead", &nz, NULL, NULL, NULL);
	p->nz_cpu = nz.cpu;
	p->nz_mem = nz.mem;
	sched_res_clear(&nz);
	sched_res_clear(&side);
	sched_res_clear(&side_nz);
	sched_res_clear(&init);
	sched_res_clear(&init_nz);
}

static enum sched_effect sched__effect(const char *s)
{
	if (!s || !*s)
		return SCHED_EFFECT_ALL;
	if (strcmp(s, "NoSchedule") == 0)
		return SCHED_EFFECT_NO_SCHEDULE;
	if (strcmp(s, "PreferNoSchedule") == 0)
		return SCHED_EFFECT_PREFER_NO_SCHEDULE;
	if (strcmp(s, "NoExecute") == 0)
		return SCHED_EFFECT_NO_EXECUTE;
	return SCHED_EFFECT_OTHER;
}

static void sched__tolerations(struct sched_pod *p, const struct ynode *list)
{
	if (!sched__is_seq(list))
		return;
	p->tolerations = xcalloc(list->n ? list->n : 1, sizeof(*p->tolerations));
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *t = ynode_item(list, i);
		const char *key = ynode_str(ynode_get(t, "key"));
		const char *op = ynode_str(ynode_get(t, "operator"));
		const char *value = ynode_str(ynode_get(t, "value"));
		struct sched_toleration *tol = &p->tolerations[p->ntolerations++];
		tol->key = xstrdup(key ? key : "");
		tol->value = xstrdup(value ? value : "");
		tol->effect = sched__effect(ynode_str(ynode_get(t, "effect")));
		if (!op || !*op || strcmp(op, "Equal") == 0)
			tol->exists = false;
		else if (strcmp(op, "Exists") == 0)
			tol->exists = true;
		else
			sched__error(&p->error,
				     "spec.tolerations[%zu].operator: Unsupported value: \"%s\": "
				     "supported values: \"Equal\", \"Exists\"",
				     i, op);
	}
}

static int sched__op(const char *s, enum sched_op *op)
{
	static const struct {
		const char *name;
		enum sched_op op;
	} ops[] = {
	    {"In", SCHED_OP_IN},	 {"NotIn", SCHED_OP_NOT_IN},
	    {"Exists", SCHED_OP_EXISTS}, {"DoesNotExist", SCHED_OP_DOES_NOT_EXIST},
	    {"Gt", SCHED_OP_GT},	 {"Lt", SCHED_OP_LT},
	};
	for (size_t i = 0; s && i < ARRAY_SIZE(ops); i++) {
		if (strcmp(s, ops[i].name) == 0) {
			*op = ops[i].op;
			return 0;
		}
	}
	return -1;
}

static void sched__node_req_clear(struct sched_node_req *r)
{
	free(r->key);
	for (size_t i = 0; i < r->nvalues; i++)
		free(r->values[i]);
	free(r->values);
}

static void sched__node_term_clear(struct sched_node_term *t)
{
	for (size_t i = 0; i < t->nexprs; i++)
		sched__node_req_clear(&t->exprs[i]);
	for (size_t i = 0; i < t->nfields; i++)
		sched__node_req_clear(&t->fields[i]);
	free(t->exprs);
	free(t->fields);
	memset(t, 0, sizeof(*t));
}

/* A list of NodeSelectorRequirements; fields: matchFields (metadata.name). */
static void sched__node_reqs(const struct ynode *list, const char *path, bool fields,
			     struct sched_node_req **out, size_t *nout, char **error)
{
	if (!sched__is_seq(list))
		return;
	*out = xcalloc(list->n ? list->n : 1, sizeof(**out));
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *e = ynode_item(list, i);
		const char *key = ynode_str(ynode_get(e, "key"));
		const char *ops = ynode_str(ynode_get(e, "operator"));
		const struct ynode *vals = ynode_get(e, "values");
		struct sched_node_req *r = &(*out)[(*nout)++];
		r->key = xstrdup(key ? key : "");
		if (sched__op(ops, &r->op) < 0) {
			sched__error(
			    error,
			    "%s[%zu].operator: Unsupported value: \"%s\": supported values: "
			    "\"DoesNotExist\", \"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\"",
			    path, i, ops ? ops : "");
			r->op = SCHED_OP_IN; /* matches nothing without values */
			continue;
		}
		if (fields && (strcmp(r->key, "metadata.name") != 0 ||
			       (r->op != SCHED_OP_IN && r->op != SCHED_OP_NOT_IN))) {
			sched__error(
			    error,
			    "%s[%zu]: Invalid value: \"%s\": only metadata.name with In or "
			    "NotIn is supported",
			    path, i, r->key);
			r->op = SCHED_OP_IN;
		}
		size_t nv = sched__is_seq(vals) ? vals->n : 0;
		r->values = xcalloc(nv ? nv : 1, sizeof(*r->values));
		for (size_t j = 0; j < nv; j++) {
			const char *v = ynode_str(ynode_item(vals, j));
			r->values[r->nvalues++] = xstrdup(v ? v : "");
		}
		switch (r->op) {
		case SCHED_OP_IN:
		case SCHED_OP_NOT_IN:
			if (!nv)
				sched__error(
				    error,
				    "%s[%zu].values: Required value: must be specified when "
				    "`operator` is 'In' or 'NotIn'",
				    path, i);
			break;
		case SCHED_OP_EXISTS:
		case SCHED_OP_DOES_NOT_EXIST:
			if (nv)
				sched__error(error,
					     "%s[%zu].values: Forbidden: may not be specified when "
					     "`operator` is 'Exists' or 'DoesNotExist'",
					     path, i);
			break;
		case SCHED_OP_GT:
		case SCHED_OP_LT: {
			char *end = NULL;
			errno = 0;
			if (nv == 1 && *r->values[0])
				r->num = strtoll(r->values[0], &end, 10);
			if (nv != 1 || !end || *end || errno)
				sched__error(
				    error,
				    "%s[%zu].values: Required value: must be specified single "
				    "value when `operator` is 'Lt' or 'Gt'",
				    path, i);
			break;
		}
		}
	}
}

static void sched__node_term(const struct ynode *t, const char *path, struct sched_node_term *out,
			     char **error)
{
	cleanup_free char *e = xasprintf("%s.matchExpressions", path);
	cleanup_free char *f = xasprintf("%s.matchFields", path);
	sched__node_reqs(ynode_get(t, "matchExpressions"), e, false, &out->exprs, &out->nexprs,
			 error);
	sched__node_reqs(ynode_get(t, "matchFields"), f, true, &out->fields, &out->nfields, error);
}

static void sched__node_affinity(struct sched_pod *p, const struct ynode *na)
{
	static const char base[] = "spec.affinity.nodeAffinity";
	const struct ynode *req = ynode_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
	if (req && !ynode_is_null(req)) {
		p->has_required = true;
		const struct ynode *terms = ynode_get(req, "nodeSelectorTerms");
		size_t n = sched__is_seq(terms) ? terms->n : 0;
		p->required = xcalloc(n ? n : 1, sizeof(*p->required));
		for (size_t i = 0; i < n; i++) {
			cleanup_free char *path =
			    xasprintf("%s.requiredDuringSchedulingIgnoredDuringExecution."
				      "nodeSelectorTerms[%zu]",
				      base, i);
			sched__node_term(ynode_item(terms, i), path, &p->required[p->nrequired++],
					 &p->error);
		}
	}
	const struct ynode *pref = ynode_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
	if (!sched__is_seq(pref))
		return;
	p->preferred = xcalloc(pref->n ? pref->n : 1, sizeof(*p->preferred));
	for (size_t i = 0; i < pref->n; i++) {
		const struct ynode *t = ynode_item(pref, i);
		long long w = 0;
		if (ynode_int(ynode_get(t, "weight"), &w) < 0 || w < 1 || w > 100) {
			sched__error(
			    &p->error,
			    "%s.preferredDuringSchedulingIgnoredDuringExecution[%zu].weight: "
			    "Invalid value: must be in the range 1-100",
			    base, i);
			continue;
		}
		struct sched_pref_term *pt = &p->preferred[p->npreferred++];
		pt->weight = w;
		cleanup_free char *path = xasprintf(
		    "%s.preferredDuringSchedulingIgnoredDuringExecution[%zu].preference", base, i);
		sched__node_term(ynode_get(t, "preference"), path, &pt->term, &p->error);
	}
}

static void sched__pod_terms(struct sched_pod *p, const struct ynode *list, const char *path,
			     struct sched_pod_term **out, size_t *nout)
{
	if (!sched__is_seq(list))
		return;
	*out = xcalloc(list->n ? list->n : 1, sizeof(**out));
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *t = ynode_item(list, i);
		struct sched_pod_term *pt = &(*out)[(*nout)++];
		const char *key = ynode_str(ynode_get(t, "topologyKey"));
		pt->topology_key = xstrdup(key ? key : "");
		if (!*pt->topology_key)
			sched__error(&p->error,
				     "%s[%zu].topologyKey: Required value: can not be empty", path,
				     i);
		const struct ynode *ls = ynode_get(t, "labelSelector");
		if (ls && !ynode_is_null(ls)) {
			cleanup_error struct error *err = NULL;
			if (selector_parse_labelselector(ls, &pt->sel, &err) < 0)
				sched__error(&p->error, "%s[%zu].labelSelector.%s", path, i,
					     err->msg);
		}
		const struct ynode *nss = ynode_get(t, "namespaces");
		if (sched__is_seq(nss) && nss->n) {
			pt->namespaces = xcalloc(nss->n, sizeof(*pt->namespaces));
			for (size_t j = 0; j < nss->n; j++) {
				const char *ns = ynode_str(ynode_item(nss, j));
				pt->namespaces[pt->nnamespaces++] = xstrdup(ns ? ns : "");
			}
		}
		const struct ynode *nsel = ynode_get(t, "namespaceSelector");
		if (sched__is_map(nsel)) {
			bool empty = true;
			for (size_t j = 0; j < nsel->n; j++) {
				const struct ynode *v = ynode_map_val(nsel, j);
				if (!ynode_is_null(v) && !(v->type != YNODE_SCALAR && v->n == 0))
					empty = false;
			}
			if (empty)
				pt->all_namespaces = true;
			else
				sched__error(
				    &p->error,
				    "%s[%zu].namespaceSelector: Unsupported value: corral-sched "
				    "takes only the empty selector {} (every namespace)",
				    path, i);
		}
	}
}

/* FNV-1a of a tree: types, keys and scalars, each ended apart. */
static uint64_t sched__tree_hash(uint64_t h, const struct ynode *n)
{
	if (!n)
		return fnv1a_add(h, "-", 1);
	char t = n->type == YNODE_SCALAR ? 's' : n->type == YNODE_SEQ ? 'q' : 'm';
	h = fnv1a_add(h, &t, 1);
	if (n->type == YNODE_SCALAR)
		return fnv1a_add(h, n->str, n->len + 1);
	size_t items = n->type == YNODE_MAP ? 2 * n->n : n->n;
	for (size_t i = 0; i < items; i++)
		h = sched__tree_hash(h, n->items[i]);
	return fnv1a_add(h, "e", 1);
}

static void sched__read_cond(struct sched_pod *p, const struct ynode *status)
{
	const struct ynode *c = condition_find(ynode_get(status, "conditions"), "PodScheduled");
	if (!c)
		return;
	p->cond.status = xstrdup(condition_field(c, "status"));
	p->cond.reason = xstrdup(condition_field(c, "reason"));
	p->cond.message = xstrdup(condition_field(c, "message"));
}

bool sched_pod_condition_is(const struct sched_pod *p, const char *status, const char *reason,
			    const char *message)
{
	return p->cond.status && strcmp(p->cond.status, status ? status : "") == 0 &&
	       strcmp(p->cond.reason, reason ? reason : "") == 0 &&
	       strcmp(p->cond.message, message ? message : "") == 0;
}

struct sched_pod *sched_pod_ref(struct sched_pod *p)
{
	p->refs++;
	return p;
}

struct sched_pod *sched_pod_parse(const struct ynode *obj)
{
	struct sched_pod *p = xcalloc(1, sizeof(*p));
	p->refs = 1;
	const struct ynode *meta = ynode_get(obj, "metadata");
	const struct ynode *spec = ynode_get(obj, "spec");
	const char *ns = ynode_str(ynode_get(meta, "namespace"));
	const char *name = ynode_str(ynode_get(meta, "name"));
	const char *uid = ynode_str(ynode_get(meta, "uid"));
	p->ns = xstrdup(ns && *ns ? ns : "default");
	p->name = xstrdup(name ? name : "");
	p->uid = xstrdup(uid ? uid : "");
	p->key = xasprintf("%s/%s", p->ns, p->name);
	p->rv = sched__dup_str(ynode_get(meta, "resourceVersion"));
	sched__read_cond(p, ynode_get(obj, "status"));
	p->fit_hash =
	    sched__tree_hash(sched__tree_hash(FNV1A_BASIS, spec), ynode_get(meta, "labels"));
	p->node_name = sched__dup_str(ynode_get(spec, "nodeName"));
	p->scheduler_name = sched__dup_str(ynode_get(spec, "schedulerName"));
	if (!p->scheduler_name)
		p->scheduler_name = xstrdup(SCHED_DEFAULT_SCHEDULER);
	p->deleting = object_is_deleting(obj);
	p->terminal = pod_is_terminal(obj);
	const struct ynode *gates = ynode_get(spec, "schedulingGates");
	p->gated = gates && gates->type == YNODE_SEQ && gates->n > 0;
	if (ynode_int(ynode_get(spec, "priority"), &p->priority) < 0)
		p->priority = 0;
	const struct ynode *labels = ynode_get(meta, "labels");
	if (sched__is_map(labels) && labels->n)
		p->labels = ynode_clone(labels);
	const struct ynode *vols = ynode_get(spec, "volumes");
	for (size_t i = 0; vols && vols->type == YNODE_SEQ && i < vols->n; i++) {
		const char *cn =
		    ynode_path_str(ynode_item(vols, i), "persistentVolumeClaim.claimName");
		if (!cn || !*cn)
			continue;
		p->claims = xrealloc(p->claims, (p->nclaims + 1) * sizeof(*p->claims));
		p->claims[p->nclaims++] = xstrdup(cn);
	}
	const struct ynode *o = ownerref_controller(obj);
	if (o) {
		const char *ouid = ynode_str(ynode_get(o, "uid"));
		const char *kind = ynode_str(ynode_get(o, "kind"));
		const char *oname = ynode_str(ynode_get(o, "name"));
		p->owner = ouid && *ouid ? xstrdup(ouid)
					 : xasprintf("%s/%s", kind ? kind : "", oname ? oname : "");
	}
	if (p->owner)
		p->owner_hash = strmap_hash(p->owner);
	sched__requests(p, spec);
	const struct ynode *sel = ynode_get(spec, "nodeSelector");
	if (sched__is_map(sel) && sel->n)
		p->node_selector = ynode_clone(sel);
	const struct ynode *aff = ynode_get(spec, "affinity");
	sched__node_affinity(p, ynode_get(aff, "nodeAffinity"));
	sched__pod_terms(
	    p, ynode_path(aff, "podAffinity.requiredDuringSchedulingIgnoredDuringExecution"),
	    "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
	    &p->affinity, &p->naffinity);
	sched__pod_terms(
	    p, ynode_path(aff, "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"),
	    "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
	    &p->anti_affinity, &p->nanti_affinity);
	sched__tolerations(p, ynode_get(spec, "tolerations"));
	return p;
}

static void sched__pod_terms_free(struct sched_pod_term *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		selector_free(t[i].sel);
		for (size_t j = 0; j < t[i].nnamespaces; j++)
			free(t[i].namespaces[j]);
		free(t[i].namespaces);
		free(t[i].topology_key);
	}
	free(t);
}

void sched_pod_free(struct sched_pod *p)
{
	if (!p || --p->refs > 0)
		return;
	free(p->key);
	free(p->ns);
	free(p->name);
	free(p->uid);
	free(p->rv);
	free(p->cond.status);
	free(p->cond.reason);
	free(p->cond.message);
	free(p->node_name);
	free(p->scheduler_name);
	sched_res_clear(&p->req);
	for (size_t i = 0; i < p->nports; i++) {
		free(p->ports[i].proto);
		free(p->ports[i].ip);
	}
	free(p->ports);
	ynode_free(p->labels);
	for (size_t i = 0; i < p->nclaims; i++)
		free(p->claims[i]);
	free(p->claims);
	for (size_t i = 0; i < p->nvolume_affinity; i++)
		ynode_free(p->volume_affinity[i]);
	free(p->volume_affinity);
	free(p->owner);
	ynode_free(p->node_selector);
	for (size_t i = 0; i < p->nrequired; i++)
		sched__node_term_clear(&p->required[i]);
	free(p->required);
	for (size_t i = 0; i < p->npreferred; i++)
		sched__node_term_clear(&p->preferred[i].term);
	free(p->preferred);
	for (size_t i = 0; i < p->ntolerations; i++) {
		free(p->tolerations[i].key);
		free(p->tolerations[i].value);
	}
	free(p->tolerations);
	sched__pod_terms_free(p->affinity, p->naffinity);
	sched__pod_terms_free(p->anti_affinity, p->nanti_affinity);
	free(p->error);
	free(p);
}

void sched_pod_freep(struct sched_pod **p)
{
	sched_pod_free(*p);
	*p = NULL;
}

/* ---- nodes ---------------------------------------------------------------- */

struct sched_nodeinfo *sched_nodeinfo_parse(const struct ynode *obj)
{
	struct sched_nodeinfo *n = xcalloc(1, sizeof(*n));
	const struct ynode *meta = ynode_get(obj, "metadata");
	const struct ynode *spec = ynode_get(obj, "spec");
	const struct ynode *status = ynode_get(obj, "status");
	const char *name = ynode_str(ynode_get(meta, "name"));
	n->name = xstrdup(name ? name : "");
	const struct ynode *labels = ynode_get(meta, "labels");
	if (sched__is_map(labels) && labels->n)
		n->labels = ynode_clone(labels);
	const struct ynode *taints = ynode_get(spec, "taints");
	if (sched__is_seq(taints) && taints->n) {
		n->taints = xcalloc(taints->n, sizeof(*n->taints));
		for (size_t i = 0; i < taints->n; i++) {
			const struct ynode *t = ynode_item(taints, i);
			const char *key = ynode_str(ynode_get(t, "key"));
			const char *value = ynode_str(ynode_get(t, "value"));
			struct sched_taint *taint = &n->taints[n->ntaints++];
			taint->key = xstrdup(key ? key : "");
			taint->value = xstrdup(value ? value : "");
			taint->effect = sched__effect(ynode_str(ynode_get(t, "effect")));
		}
	}
	bool b = false;
	n->unschedulable = ynode_bool(ynode_get(spec, "unschedulable"), &b) == 0 && b;
	n->ready = SCHED_NOT_READY;
	const struct ynode *ready = condition_find(ynode_get(status, "conditions"), "Ready");
	if (condition_field_is(ready, "status", "True"))
		n->ready = SCHED_READY;
	else if (condition_field_is(ready, "status", "Unknown"))
		n->ready = SCHED_UNREACHABLE;
	const struct ynode *alloc = ynode_get(status, "allocatable");
	if (!sched__is_map(alloc))
		alloc = ynode_get(status, "capacity");
	sched__read_list(alloc, "status.allocatable", &n->alloc, &n->alloc_pods, NULL, &n->error);
	return n;
}

struct sched_nodeinfo *sched_nodeinfo_clone(const struct sched_nodeinfo *n)
{
	struct sched_nodeinfo *c = xcalloc(1, sizeof(*c));
	c->name = xstrdup(n->name);
	c->labels = n->labels ? ynode_clone(n->labels) : NULL;
	c->taints = xcalloc(n->ntaints ? n->ntaints : 1, sizeof(*c->taints));
	for (size_t i = 0; i < n->ntaints; i++) {
		c->taints[i].key = xstrdup(n->taints[i].key);
		c->taints[i].value = xstrdup(n->taints[i].value);
		c->taints[i].effect = n->taints[i].effect;
	}
	c->ntaints = n->ntaints;
	c->unschedulable = n->unschedulable;
	c->ready = n->ready;
	sched_res_copy(&c->alloc, &n->alloc);
	c->alloc_pods = n->alloc_pods;
	c->error = n->error ? xstrdup(n->error) : NULL;
	return c;
}

void sched_nodeinfo_free(struct sched_nodeinfo *n)
{
	if (!n)
		return;
	free(n->name);
	ynode_free(n->labels);
	for (size_t i = 0; i < n->ntaints; i++) {
		free(n->taints[i].key);
		free(n->taints[i].value);
	}
	free(n->taints);
	sched_res_clear(&n->alloc);
	free(n->error);
	free(n);
}

static bool sched__res_equal(const struct sched_res *a, const struct sched_res *b)
{
	if (a->cpu != b->cpu || a->mem != b->mem || a->eph != b->eph || a->next != b->next)
		return false;
	for (size_t i = 0; i < a->next; i++)
		if (sched_res_ext(b, a->ext[i].name) != a->ext[i].v)
			return false;
	return true;
}

bool sched_nodeinfo_equal(const struct sched_nodeinfo *a, const struct sched_nodeinfo *b)
{
	if (strcmp(a->name, b->name) != 0 || a->unschedulable != b->unschedulable ||
	    a->ready != b->ready || a->alloc_pods != b->alloc_pods || a->ntaints != b->ntaints ||
	    !sched__res_equal(&a->alloc, &b->alloc))
		return false;
	if (!(a->labels ? b->labels && ynode_equal(a->labels, b->labels) : !b->labels))
		return false;
	for (size_t i = 0; i < a->ntaints; i++) {
		if (strcmp(a->taints[i].key, b->taints[i].key) != 0 ||
		    strcmp(a->taints[i].value, b->taints[i].value) != 0 ||
		    a->taints[i].effect != b->taints[i].effect)
			return false;
	}
	return true;
}
