/* quotacalc.c: ResourceQuota arithmetic (quotacalc.h), Kubernetes'
 * quota evaluators over ynode trees: resource lists, what each kind
 * charges, scopes, a pod's constraints. Pure functions: no state, no I/O. */
#include "quotacalc.h"
#include "pod.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resource lists ---- */

void quotacalc_list_clear(struct quotacalc_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The index of name, or where it would go (*found false). */
static size_t quotacalc__list_pos(const struct quotacalc_list *l, const char *name, bool *found)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(l->v[mid].name, name);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

const struct quotacalc_amount *quotacalc_list_find(const struct quotacalc_list *l, const char *name)
{
	bool found;
	size_t i = quotacalc__list_pos(l, name, &found);
	return found ? &l->v[i] : NULL;
}

int64_t quotacalc_list_get(const struct quotacalc_list *l, const char *name)
{
	const struct quotacalc_amount *a = quotacalc_list_find(l, name);
	return a ? a->milli : 0;
}

void quotacalc_list_add(struct quotacalc_list *l, const char *name, int64_t milli,
			enum quantity_fmt fmt)
{
	bool found;
	size_t i = quotacalc__list_pos(l, name, &found);
	if (found) {
		/* A sum takes the format of what is added to zero, as
		 * Kubernetes' Quantity.Add. */
		if (l->v[i].milli == 0)
			l->v[i].fmt = fmt;
		if (__builtin_add_overflow(l->v[i].milli, milli, &l->v[i].milli))
			l->v[i].milli = milli > 0 ? INT64_MAX : INT64_MIN;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(*l->v));
	l->v[i] = (struct quotacalc_amount){.name = xstrdup(name), .milli = milli, .fmt = fmt};
	l->n++;
}

/* Sets name to milli (the larger of the two when max). */
static void quotacalc__list_max(struct quotacalc_list *l, const char *name, int64_t milli,
				enum quantity_fmt fmt)
{
	const struct quotacalc_amount *a = quotacalc_list_find(l, name);
	if (!a)
		quotacalc_list_add(l, name, milli, fmt);
	else if (milli > a->milli)
		quotacalc_list_add(l, name, milli - a->milli, fmt);
}

void quotacalc_list_read(struct quotacalc_list *l, const struct ynode *map)
{
	for (size_t i = 0; map && map->type == YNODE_MAP && i < map->n; i++) {
		const char *name = ynode_str(ynode_map_key(map, i));
		const char *text = ynode_str(ynode_map_val(map, i));
		int64_t milli;
		if (!name || !text || quantity_parse(text, &milli, NULL) < 0)
			continue;
		quotacalc_list_add(l, name, milli, quantity_fmt_of(text));
	}
}

char *quotacalc_list_format(const struct quotacalc_list *l)
{
	size_t cap = 64, len = 0;
	char *out = xmalloc(cap);
	out[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		char q[64];
		quantity_format_in(l->v[i].milli, l->v[i].fmt, q, sizeof(q));
		size_t need = len + strlen(l->v[i].name) + strlen(q) + 3;
		if (need > cap) {
			cap = 2 * need;
			out = xrealloc(out, cap);
		}
		len += (size_t)snprintf(out + len, cap - len, "%s%s=%s", i ? "," : "", l->v[i].name,
					q);
	}
	return out;
}

/* ---- what an object charges ---- */

static bool quotacalc__streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* A resource that is counted both bare and as requests.<name>. */
static bool quotacalc__standard(const char *r)
{
	return !strcmp(r, "cpu") || !strcmp(r, "memory") || !strcmp(r, "ephemeral-storage");
}

/* Kubernetes' IsExtendedResourceName: a qualified name with a domain
 * outside kubernetes.io, that is not requests.*. */
static bool quotacalc__extended(const char *r)
{
	const char *slash = strchr(r, '/');
	if (!slash || !strncmp(r, "requests.", 9))
		return false;
	size_t dl = (size_t)(slash - r);
	const char *k8s = "kubernetes.io";
	size_t kl = strlen(k8s);
	if (dl == kl && !strncmp(r, k8s, kl))
		return false;
	if (dl > kl && r[dl - kl - 1] == '.' && !strncmp(slash - kl, k8s, kl))
		return false;
	return true;
}

/* A pod's requests and limits, as Kubernetes' PodRequests: the sum of its
 * containers, at least any one init container, plus its overhead. */
void quotacalc_pod_resources(const struct ynode *pod, bool overhead, struct quotacalc_list *req,
			     struct quotacalc_list *lim)
{
	const struct ynode *spec = ynode_get(pod, "spec");
	const struct ynode *cs = ynode_get(spec, "containers");
	for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
		const struct ynode *res = ynode_get(ynode_item(cs, i), "resources");
		quotacalc_list_read(req, ynode_get(res, "requests"));
		quotacalc_list_read(lim, ynode_get(res, "limits"));
	}
	const struct ynode *ics = ynode_get(spec, "initContainers");
	for (size_t i = 0; ics && ics->type == YNODE_SEQ && i < ics->n; i++) {
		const struct ynode *res = ynode_get(ynode_item(ics, i), "resources");
		struct quotacalc_list r = {0}, l = {0};
		quotacalc_list_read(&r, ynode_get(res, "requests"));
		quotacalc_list_read(&l, ynode_get(res, "limits"));
		for (size_t k = 0; k < r.n; k++)
			quotacalc__list_max(req, r.v[k].name, r.v[k].milli, r.v[k].fmt);
		for (size_t k = 0; k < l.n; k++)
			quotacalc__list_max(lim, l.v[k].name, l.v[k].milli, l.v[k].fmt);
		quotacalc_list_clear(&r);
		quotacalc_list_clear(&l);
	}
	if (overhead) {
		quotacalc_list_read(req, ynode_get(spec, "overhead"));
		quotacalc_list_read(lim, ynode_get(spec, "overhead"));
	}
}

/* Kubernetes' podComputeUsageHelper: what requests and limits charge. */
static void quotacalc__compute_usage(const struct quotacalc_list *req,
				     const struct quotacalc_list *lim, struct quotacalc_list *out)
{
	quotacalc_list_add(out, "pods", 1000, QUANTITY_DECIMAL_SI);
	for (size_t i = 0; i < req->n; i++) {
		const struct quotacalc_amount *a = &req->v[i];
		if (quotacalc__standard(a->name) || !strncmp(a->name, "hugepages-", 10))
			quotacalc_list_add(out, a->name, a->milli, a->fmt);
		if (quotacalc__standard(a->name) || !strncmp(a->name, "hugepages-", 10) ||
		    quotacalc__extended(a->name)) {
			cleanup_free char *n = xasprintf("requests.%s", a->name);
			quotacalc_list_add(out, n, a->milli, a->fmt);
		}
	}
	for (size_t i = 0; i < lim->n; i++) {
		const struct quotacalc_amount *a = &lim->v[i];
		if (quotacalc__standard(a->name)) {
			cleanup_free char *n = xasprintf("limits.%s", a->name);
			quotacalc_list_add(out, n, a->milli, a->fmt);
		}
	}
}

/* Kubernetes' QuotaV1Pod: a terminal pod, or one being deleted with no
 * grace left, charges only its object count. */
static bool quotacalc__pod_counts(const struct ynode *pod)
{
	if (pod_is_terminal(pod))
		return false;
	if (object_is_deleting(pod)) {
		long long grace = 0;
		ynode_int(ynode_path(pod, "metadata.deletionGracePeriodSeconds"), &grace);
		return grace > 0;
	}
	return true;
}

static void quotacalc__count_name(const struct kind_info *k, char *buf, size_t size)
{
	const char *av = k->api_versions[0];
	const char *slash = av ? strchr(av, '/') : NULL;
	if (slash)
		snprintf(buf, size, "count/%s.%.*s", k->plural, (int)(slash - av), av);
	else
		snprintf(buf, size, "count/%s", k->plural);
}

/* A PVC's storage class: spec.storageClassName, or the beta annotation. */
static const char *quotacalc__pvc_class(const struct ynode *pvc)
{
	const char *c = ynode_path_str(pvc, "spec.storageClassName");
	if (c && *c)
		return c;
	const struct ynode *ann = ynode_path(pvc, "metadata.annotations");
	c = ynode_str(ynode_get(ann, "volume.beta.kubernetes.io/storage-class"));
	return c && *c ? c : NULL;
}

void quotacalc_usage(const struct kind_info *k, const struct ynode *obj, struct quotacalc_list *out)
{
	char count[160];
	quotacalc__count_name(k, count, sizeof(count));
	quotacalc_list_add(out, count, 1000, QUANTITY_DECIMAL_SI);
	switch (kinds_id(k)) {
	case KIND_POD:
		if (quotacalc__pod_counts(obj)) {
			struct quotacalc_list req = {0}, lim = {0};
			quotacalc_pod_resources(obj, true, &req, &lim);
			quotacalc__compute_usage(&req, &lim, out);
			quotacalc_list_clear(&req);
			quotacalc_list_clear(&lim);
		}
		break;
	case KIND_SERVICE: {
		quotacalc_list_add(out, "services", 1000, QUANTITY_DECIMAL_SI);
		const char *type = ynode_path_str(obj, "spec.type");
		const struct ynode *ports = ynode_path(obj, "spec.ports");
		int64_t nports = ports && ports->type == YNODE_SEQ ? (int64_t)ports->n : 0;
		if (quotacalc__streq(type, "NodePort")) {
			quotacalc_list_add(out, "services.nodeports", 1000 * nports,
					   QUANTITY_DECIMAL_SI);
		} else if (quotacalc__streq(type, "LoadBalancer")) {
			bool alloc = true;
			ynode_bool(ynode_path(obj, "spec.allocateLoadBalancerNodePorts"), &alloc);
			quotacalc_list_add(out, "services.nodeports", alloc ? 1000 * nports : 0,
					   QUANTITY_DECIMAL_SI);
			quotacalc_list_add(out, "services.loadbalancers", 1000,
					   QUANTITY_DECIMAL_SI);
		}
		break;
	}
	case KIND_PERSISTENT_VOLUME_CLAIM: {
		quotacalc_list_add(out, "persistentvolumeclaims", 1000, QUANTITY_DECIMAL_SI);
		const char *text = ynode_path_str(obj, "spec.resources.requests.storage");
		int64_t storage = 0;
		bool has = text && quantity_parse(text, &storage, NULL) == 0;
		if (has)
			quotacalc_list_add(out, "requests.storage", storage, quantity_fmt_of(text));
		const char *cls = quotacalc__pvc_class(obj);
		if (cls) {
			cleanup_free char *n =
			    xasprintf("%s.storageclass.storage.k8s.io/persistentvolumeclaims", cls);
			quotacalc_list_add(out, n, 1000, QUANTITY_DECIMAL_SI);
			if (has) {
				cleanup_free char *s = xasprintf(
				    "%s.storageclass.storage.k8s.io/requests.storage", cls);
				quotacalc_list_add(out, s, storage, quantity_fmt_of(text));
			}
		}
		break;
	}
	case KIND_CONFIG_MAP:
		quotacalc_list_add(out, "configmaps", 1000, QUANTITY_DECIMAL_SI);
		break;
	case KIND_SECRET:
		quotacalc_list_add(out, "secrets", 1000, QUANTITY_DECIMAL_SI);
		break;
	case KIND_REPLICATION_CONTROLLER:
		quotacalc_list_add(out, "replicationcontrollers", 1000, QUANTITY_DECIMAL_SI);
		break;
	case KIND_RESOURCE_QUOTA:
		quotacalc_list_add(out, "resourcequotas", 1000, QUANTITY_DECIMAL_SI);
		break;
	default:
		break;
	}
}

/* ---- scopes ---- */

void quotacalc_facts_clear(struct quotacalc_facts *f)
{
	free(f->priority_class);
	memset(f, 0, sizeof(*f));
}

/* Kubernetes' GetPodQOS == BestEffort: no container requests or limits
 * a positive amount of cpu or memory. */
static bool quotacalc__best_effort(const struct ynode *pod)
{
	static const char *const lists[] = {"spec.containers", "spec.initContainers"};
	for (size_t l = 0; l < 2; l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const struct ynode *res = ynode_get(ynode_item(cs, i), "resources");
			for (int w = 0; w < 2; w++) {
				struct quotacalc_list q = {0};
				quotacalc_list_read(&q, ynode_get(res, w ? "limits" : "requests"));
				bool any = quotacalc_list_get(&q, "cpu") > 0 ||
					   quotacalc_list_get(&q, "memory") > 0;
				quotacalc_list_clear(&q);
				if (any)
					return false;
			}
		}
	}
	return true;
}

static bool quotacalc__terms_cross_ns(const struct ynode *terms, bool weighted)
{
	for (size_t i = 0; terms && terms->type == YNODE_SEQ && i < terms->n; i++) {
		const struct ynode *t = ynode_item(terms, i);
		if (weighted)
			t = ynode_get(t, "podAffinityTerm");
		const struct ynode *nss = ynode_get(t, "namespaces");
		if ((nss && nss->type == YNODE_SEQ && nss->n) ||
		    !ynode_is_null(ynode_get(t, "namespaceSelector")))
			return true;
	}
	return false;
}

void quotacalc_facts_of(const struct kind_info *k, const struct ynode *obj,
			struct quotacalc_facts *f)
{
	memset(f, 0, sizeof(*f));
	if (!obj || kinds_id(k) != KIND_POD)
		return;
	f->pod = true;
	f->best_effort = quotacalc__best_effort(obj);
	long long ads = -1;
	f->terminating =
	    ynode_int(ynode_path(obj, "spec.activeDeadlineSeconds"), &ads) == 0 && ads >= 0;
	const char *pc = ynode_path_str(obj, "spec.priorityClassName");
	f->priority_class = pc && *pc ? xstrdup(pc) : NULL;
	static const char *const aff[] = {"podAffinity", "podAntiAffinity"};
	for (size_t a = 0; a < 2; a++) {
		cleanup_free char *p = xasprintf("spec.affinity.%s", aff[a]);
		const struct ynode *pa = ynode_path(obj, p);
		if (quotacalc__terms_cross_ns(
			ynode_get(pa, "requiredDuringSchedulingIgnoredDuringExecution"), false) ||
		    quotacalc__terms_cross_ns(
			ynode_get(pa, "preferredDuringSchedulingIgnoredDuringExecution"), true))
			f->cross_ns_affinity = true;
	}
}

static bool quotacalc__in_values(const struct ynode *values, const char *s)
{
	for (size_t i = 0; s && values && values->type == YNODE_SEQ && i < values->n; i++)
		if (quotacalc__streq(ynode_str(ynode_item(values, i)), s))
			return true;
	return false;
}

/* One scope requirement (a name, an operator, values) against a pod. */
static bool quotacalc__scope_matches(const char *scope, const char *op, const struct ynode *values,
				     const struct quotacalc_facts *f)
{
	bool exists = !op || !strcmp(op, "Exists");
	bool hit;
	if (quotacalc__streq(scope, "PriorityClass")) {
		const char *pc = f->priority_class;
		if (exists)
			return pc != NULL;
		if (quotacalc__streq(op, "DoesNotExist"))
			return pc == NULL;
		if (quotacalc__streq(op, "In"))
			return pc && quotacalc__in_values(values, pc);
		if (quotacalc__streq(op, "NotIn"))
			return !pc || !quotacalc__in_values(values, pc);
		return false;
	}
	if (quotacalc__streq(scope, "Terminating"))
		hit = f->terminating;
	else if (quotacalc__streq(scope, "NotTerminating"))
		hit = !f->terminating;
	else if (quotacalc__streq(scope, "BestEffort"))
		hit = f->best_effort;
	else if (quotacalc__streq(scope, "NotBestEffort"))
		hit = !f->best_effort;
	else if (quotacalc__streq(scope, "CrossNamespacePodAffinity"))
		hit = f->cross_ns_affinity;
	else
		return false;
	/* Validation allows only Exists for these; DoesNotExist reads as
	 * its negation. */
	return quotacalc__streq(op, "DoesNotExist") ? !hit : hit;
}

/* Whether the quota rq (its spec) selects an object with facts f. */
bool quotacalc_selects(const struct ynode *rq, const struct quotacalc_facts *f)
{
	const struct ynode *scopes = ynode_path(rq, "spec.scopes");
	const struct ynode *exprs = ynode_path(rq, "spec.scopeSelector.matchExpressions");
	size_t ns = scopes && scopes->type == YNODE_SEQ ? scopes->n : 0;
	size_t ne = exprs && exprs->type == YNODE_SEQ ? exprs->n : 0;
	if (ns + ne == 0)
		return true;
	if (!f->pod)
		return false; /* only the pod evaluator knows scopes */
	for (size_t i = 0; i < ns; i++)
		if (!quotacalc__scope_matches(ynode_str(ynode_item(scopes, i)), NULL, NULL, f))
			return false;
	for (size_t i = 0; i < ne; i++) {
		const struct ynode *e = ynode_item(exprs, i);
		if (!quotacalc__scope_matches(ynode_str(ynode_get(e, "scopeName")),
					      ynode_str(ynode_get(e, "operator")),
					      ynode_get(e, "values"), f))
			return false;
	}
	return true;
}

bool quotacalc_matches(const struct ynode *rq, const struct kind_info *k, const struct ynode *obj)
{
	struct quotacalc_facts f;
	quotacalc_facts_of(k, obj, &f);
	bool m = quotacalc_selects(rq, &f);
	quotacalc_facts_clear(&f);
	return m;
}

/* ---- a pod's constraints ---- */

static const char *const quotacalc__validated[] = {"cpu",    "limits.cpu",   "limits.memory",
						   "memory", "requests.cpu", "requests.memory"};

int quotacalc_pod_constraints(const struct quotacalc_list *hard, const struct ynode *pod,
			      struct error **err)
{
	/* Per required resource (in the sorted order above), the names of
	 * the containers that lack it, sorted and each once, as Kubernetes'
	 * sets.String lists them (a list of names at 0). */
	struct quotacalc_list missing[ARRAY_SIZE(quotacalc__validated)] = {0};
	bool any = false;
	static const char *const lists[] = {"spec.containers", "spec.initContainers"};
	for (size_t l = 0; l < 2; l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const struct ynode *c = ynode_item(cs, i);
			const struct ynode *res = ynode_get(c, "resources");
			struct quotacalc_list req = {0}, lim = {0}, use = {0};
			quotacalc_list_read(&req, ynode_get(res, "requests"));
			quotacalc_list_read(&lim, ynode_get(res, "limits"));
			quotacalc__compute_usage(&req, &lim, &use);
			const char *name = ynode_str(ynode_get(c, "name"));
			for (size_t r = 0; r < ARRAY_SIZE(quotacalc__validated); r++) {
				if (!quotacalc_list_find(hard, quotacalc__validated[r]) ||
				    quotacalc_list_find(&use, quotacalc__validated[r]))
					continue;
				quotacalc_list_add(&missing[r], name ? name : "", 0,
						   QUANTITY_DECIMAL_SI);
				any = true;
			}
			quotacalc_list_clear(&req);
			quotacalc_list_clear(&lim);
			quotacalc_list_clear(&use);
		}
	}
	cleanup_free char *msg = NULL;
	for (size_t r = 0; r < ARRAY_SIZE(quotacalc__validated); r++) {
		if (!missing[r].n)
			continue;
		cleanup_free char *names = xstrdup(missing[r].v[0].name);
		for (size_t k = 1; k < missing[r].n; k++) {
			char *n = xasprintf("%s,%s", names, missing[r].v[k].name);
			free(names);
			names = n;
		}
		char *m = xasprintf("%s%s%s for: %s", msg ? msg : "", msg ? "; " : "",
				    quotacalc__validated[r], names);
		free(msg);
		msg = m;
		quotacalc_list_clear(&missing[r]);
	}
	if (!any)
		return 0;
	return error_set(err, EACCES, "must specify %s", msg);
}

bool quotacalc_kind_charges(const struct kind_info *k, const char *r)
{
	char count[160];
	quotacalc__count_name(k, count, sizeof(count));
	if (!strcmp(r, count))
		return true;
	switch (kinds_id(k)) {
	case KIND_POD:
		return !strcmp(r, "pods") || quotacalc__standard(r) ||
		       !strncmp(r, "hugepages-", 10) ||
		       (!strncmp(r, "requests.", 9) && strcmp(r, "requests.storage")) ||
		       !strncmp(r, "limits.", 7);
	case KIND_SERVICE:
		return !strncmp(r, "services", 8);
	case KIND_PERSISTENT_VOLUME_CLAIM:
		return !strcmp(r, "persistentvolumeclaims") || !strcmp(r, "requests.storage") ||
		       strstr(r, ".storageclass.storage.k8s.io/") != NULL;
	case KIND_CONFIG_MAP:
		return !strcmp(r, "configmaps");
	case KIND_SECRET:
		return !strcmp(r, "secrets");
	case KIND_REPLICATION_CONTROLLER:
		return !strcmp(r, "replicationcontrollers");
	case KIND_RESOURCE_QUOTA:
		return !strcmp(r, "resourcequotas");
	default:
		return false;
	}
}
