/* quota.c: the admission hook "resource-quota" (quota.h): what objects
 * charge, which quotas select them, and the per-namespace sums the hook
 * keeps. It never reads the store or the mount.
 *
 * Why sums kept by the hook and not Kubernetes' status.used: Kubernetes
 * writes the quota's status in admission, with a compare-and-swap on the
 * quota object, so that two apiservers cannot both take the last of it.
 * Here every writer is a worker of one process: a write's reserve takes
 * its share of the sums under one lock, and the next writer sees it. The
 * sums start from the stored objects (load) and follow every committed
 * write (settle), so they are never status.used as a controller last wrote
 * it, and a quota created later is summed from what is stored at once. */
#include "quota.h"
#include "pod.h"
#include "strmap.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resource lists ---- */

void quota_list_clear(struct quota_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The index of name, or where it would go (*found false). */
static size_t quota__list_pos(const struct quota_list *l, const char *name, bool *found)
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

const struct quota_amount *quota_list_find(const struct quota_list *l, const char *name)
{
	bool found;
	size_t i = quota__list_pos(l, name, &found);
	return found ? &l->v[i] : NULL;
}

static int64_t quota__get(const struct quota_list *l, const char *name)
{
	const struct quota_amount *a = quota_list_find(l, name);
	return a ? a->milli : 0;
}

void quota_list_add(struct quota_list *l, const char *name, int64_t milli, enum quantity_fmt fmt)
{
	bool found;
	size_t i = quota__list_pos(l, name, &found);
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
	l->v[i] = (struct quota_amount){.name = xstrdup(name), .milli = milli, .fmt = fmt};
	l->n++;
}

/* Sets name to milli (the larger of the two when max). */
static void quota__list_max(struct quota_list *l, const char *name, int64_t milli,
			    enum quantity_fmt fmt)
{
	const struct quota_amount *a = quota_list_find(l, name);
	if (!a)
		quota_list_add(l, name, milli, fmt);
	else if (milli > a->milli)
		quota_list_add(l, name, milli - a->milli, fmt);
}

void quota_list_read(struct quota_list *l, const struct ynode *map)
{
	for (size_t i = 0; map && map->type == YNODE_MAP && i < map->n; i++) {
		const char *name = ynode_str(ynode_map_key(map, i));
		const char *text = ynode_str(ynode_map_val(map, i));
		int64_t milli;
		if (!name || !text || quantity_parse(text, &milli, NULL) < 0)
			continue;
		quota_list_add(l, name, milli, quantity_fmt_of(text));
	}
}

char *quota_list_format(const struct quota_list *l)
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

static bool quota__streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* A resource that is counted both bare and as requests.<name>. */
static bool quota__standard(const char *r)
{
	return !strcmp(r, "cpu") || !strcmp(r, "memory") || !strcmp(r, "ephemeral-storage");
}

/* Kubernetes' IsExtendedResourceName: a qualified name with a domain
 * outside kubernetes.io, that is not requests.*. */
static bool quota__extended(const char *r)
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
static void quota__pod_resources(const struct ynode *pod, struct quota_list *req,
				 struct quota_list *lim)
{
	const struct ynode *spec = ynode_get(pod, "spec");
	const struct ynode *cs = ynode_get(spec, "containers");
	for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
		const struct ynode *res = ynode_get(ynode_item(cs, i), "resources");
		quota_list_read(req, ynode_get(res, "requests"));
		quota_list_read(lim, ynode_get(res, "limits"));
	}
	const struct ynode *ics = ynode_get(spec, "initContainers");
	for (size_t i = 0; ics && ics->type == YNODE_SEQ && i < ics->n; i++) {
		const struct ynode *res = ynode_get(ynode_item(ics, i), "resources");
		struct quota_list r = {0}, l = {0};
		quota_list_read(&r, ynode_get(res, "requests"));
		quota_list_read(&l, ynode_get(res, "limits"));
		for (size_t k = 0; k < r.n; k++)
			quota__list_max(req, r.v[k].name, r.v[k].milli, r.v[k].fmt);
		for (size_t k = 0; k < l.n; k++)
			quota__list_max(lim, l.v[k].name, l.v[k].milli, l.v[k].fmt);
		quota_list_clear(&r);
		quota_list_clear(&l);
	}
	quota_list_read(req, ynode_get(spec, "overhead"));
	quota_list_read(lim, ynode_get(spec, "overhead"));
}

/* Kubernetes' podComputeUsageHelper: what requests and limits charge. */
static void quota__compute_usage(const struct quota_list *req, const struct quota_list *lim,
				 struct quota_list *out)
{
	quota_list_add(out, "pods", 1000, QUANTITY_DECIMAL_SI);
	for (size_t i = 0; i < req->n; i++) {
		const struct quota_amount *a = &req->v[i];
		if (quota__standard(a->name) || !strncmp(a->name, "hugepages-", 10))
			quota_list_add(out, a->name, a->milli, a->fmt);
		if (quota__standard(a->name) || !strncmp(a->name, "hugepages-", 10) ||
		    quota__extended(a->name)) {
			cleanup_free char *n = xasprintf("requests.%s", a->name);
			quota_list_add(out, n, a->milli, a->fmt);
		}
	}
	for (size_t i = 0; i < lim->n; i++) {
		const struct quota_amount *a = &lim->v[i];
		if (quota__standard(a->name)) {
			cleanup_free char *n = xasprintf("limits.%s", a->name);
			quota_list_add(out, n, a->milli, a->fmt);
		}
	}
}

/* Kubernetes' QuotaV1Pod: a terminal pod, or one being deleted with no
 * grace left, charges only its object count. */
static bool quota__pod_counts(const struct ynode *pod)
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

static void quota__count_name(const struct kind_info *k, char *buf, size_t size)
{
	const char *av = k->api_versions[0];
	const char *slash = av ? strchr(av, '/') : NULL;
	if (slash)
		snprintf(buf, size, "count/%s.%.*s", k->plural, (int)(slash - av), av);
	else
		snprintf(buf, size, "count/%s", k->plural);
}

/* A PVC's storage class: spec.storageClassName, or the beta annotation. */
static const char *quota__pvc_class(const struct ynode *pvc)
{
	const char *c = ynode_path_str(pvc, "spec.storageClassName");
	if (c && *c)
		return c;
	const struct ynode *ann = ynode_path(pvc, "metadata.annotations");
	c = ynode_str(ynode_get(ann, "volume.beta.kubernetes.io/storage-class"));
	return c && *c ? c : NULL;
}

void quota_usage(const struct kind_info *k, const struct ynode *obj, struct quota_list *out)
{
	char count[160];
	quota__count_name(k, count, sizeof(count));
	quota_list_add(out, count, 1000, QUANTITY_DECIMAL_SI);
	switch (kinds_id(k)) {
	case KIND_POD:
		if (quota__pod_counts(obj)) {
			struct quota_list req = {0}, lim = {0};
			quota__pod_resources(obj, &req, &lim);
			quota__compute_usage(&req, &lim, out);
			quota_list_clear(&req);
			quota_list_clear(&lim);
		}
		break;
	case KIND_SERVICE: {
		quota_list_add(out, "services", 1000, QUANTITY_DECIMAL_SI);
		const char *type = ynode_path_str(obj, "spec.type");
		const struct ynode *ports = ynode_path(obj, "spec.ports");
		int64_t nports = ports && ports->type == YNODE_SEQ ? (int64_t)ports->n : 0;
		if (quota__streq(type, "NodePort")) {
			quota_list_add(out, "services.nodeports", 1000 * nports,
				       QUANTITY_DECIMAL_SI);
		} else if (quota__streq(type, "LoadBalancer")) {
			bool alloc = true;
			ynode_bool(ynode_path(obj, "spec.allocateLoadBalancerNodePorts"), &alloc);
			quota_list_add(out, "services.nodeports", alloc ? 1000 * nports : 0,
				       QUANTITY_DECIMAL_SI);
			quota_list_add(out, "services.loadbalancers", 1000, QUANTITY_DECIMAL_SI);
		}
		break;
	}
	case KIND_PERSISTENT_VOLUME_CLAIM: {
		quota_list_add(out, "persistentvolumeclaims", 1000, QUANTITY_DECIMAL_SI);
		const char *text = ynode_path_str(obj, "spec.resources.requests.storage");
		int64_t storage = 0;
		bool has = text && quantity_parse(text, &storage, NULL) == 0;
		if (has)
			quota_list_add(out, "requests.storage", storage, quantity_fmt_of(text));
		const char *cls = quota__pvc_class(obj);
		if (cls) {
			cleanup_free char *n =
			    xasprintf("%s.storageclass.storage.k8s.io/persistentvolumeclaims", cls);
			quota_list_add(out, n, 1000, QUANTITY_DECIMAL_SI);
			if (has) {
				cleanup_free char *s = xasprintf(
				    "%s.storageclass.storage.k8s.io/requests.storage", cls);
				quota_list_add(out, s, storage, quantity_fmt_of(text));
			}
		}
		break;
	}
	case KIND_CONFIG_MAP:
		quota_list_add(out, "configmaps", 1000, QUANTITY_DECIMAL_SI);
		break;
	case KIND_SECRET:
		quota_list_add(out, "secrets", 1000, QUANTITY_DECIMAL_SI);
		break;
	case KIND_REPLICATION_CONTROLLER:
		quota_list_add(out, "replicationcontrollers", 1000, QUANTITY_DECIMAL_SI);
		break;
	case KIND_RESOURCE_QUOTA:
		quota_list_add(out, "resourcequotas", 1000, QUANTITY_DECIMAL_SI);
		break;
	default:
		break;
	}
}

/* ---- scopes ---- */

/* What a quota's scopes look at, of one object. */
struct quota__facts {
	bool pod;
	bool best_effort;
	bool terminating;
	bool cross_ns_affinity;
	char *priority_class; /* NULL or "" when none */
};

static void quota__facts_clear(struct quota__facts *f)
{
	free(f->priority_class);
	memset(f, 0, sizeof(*f));
}

/* Kubernetes' GetPodQOS == BestEffort: no container requests or limits
 * a positive amount of cpu or memory. */
static bool quota__best_effort(const struct ynode *pod)
{
	static const char *const lists[] = {"spec.containers", "spec.initContainers"};
	for (size_t l = 0; l < 2; l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const struct ynode *res = ynode_get(ynode_item(cs, i), "resources");
			for (int w = 0; w < 2; w++) {
				struct quota_list q = {0};
				quota_list_read(&q, ynode_get(res, w ? "limits" : "requests"));
				bool any =
				    quota__get(&q, "cpu") > 0 || quota__get(&q, "memory") > 0;
				quota_list_clear(&q);
				if (any)
					return false;
			}
		}
	}
	return true;
}

static bool quota__terms_cross_ns(const struct ynode *terms, bool weighted)
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

static void quota__facts_of(const struct kind_info *k, const struct ynode *obj,
			    struct quota__facts *f)
{
	memset(f, 0, sizeof(*f));
	if (!obj || kinds_id(k) != KIND_POD)
		return;
	f->pod = true;
	f->best_effort = quota__best_effort(obj);
	long long ads = -1;
	f->terminating =
	    ynode_int(ynode_path(obj, "spec.activeDeadlineSeconds"), &ads) == 0 && ads >= 0;
	const char *pc = ynode_path_str(obj, "spec.priorityClassName");
	f->priority_class = pc && *pc ? xstrdup(pc) : NULL;
	static const char *const aff[] = {"podAffinity", "podAntiAffinity"};
	for (size_t a = 0; a < 2; a++) {
		cleanup_free char *p = xasprintf("spec.affinity.%s", aff[a]);
		const struct ynode *pa = ynode_path(obj, p);
		if (quota__terms_cross_ns(
			ynode_get(pa, "requiredDuringSchedulingIgnoredDuringExecution"), false) ||
		    quota__terms_cross_ns(
			ynode_get(pa, "preferredDuringSchedulingIgnoredDuringExecution"), true))
			f->cross_ns_affinity = true;
	}
}

static bool quota__in_values(const struct ynode *values, const char *s)
{
	for (size_t i = 0; s && values && values->type == YNODE_SEQ && i < values->n; i++)
		if (quota__streq(ynode_str(ynode_item(values, i)), s))
			return true;
	return false;
}

/* One scope requirement (a name, an operator, values) against a pod. */
static bool quota__scope_matches(const char *scope, const char *op, const struct ynode *values,
				 const struct quota__facts *f)
{
	bool exists = !op || !strcmp(op, "Exists");
	bool hit;
	if (quota__streq(scope, "PriorityClass")) {
		const char *pc = f->priority_class;
		if (exists)
			return pc != NULL;
		if (quota__streq(op, "DoesNotExist"))
			return pc == NULL;
		if (quota__streq(op, "In"))
			return pc && quota__in_values(values, pc);
		if (quota__streq(op, "NotIn"))
			return !pc || !quota__in_values(values, pc);
		return false;
	}
	if (quota__streq(scope, "Terminating"))
		hit = f->terminating;
	else if (quota__streq(scope, "NotTerminating"))
		hit = !f->terminating;
	else if (quota__streq(scope, "BestEffort"))
		hit = f->best_effort;
	else if (quota__streq(scope, "NotBestEffort"))
		hit = !f->best_effort;
	else if (quota__streq(scope, "CrossNamespacePodAffinity"))
		hit = f->cross_ns_affinity;
	else
		return false;
	/* Validation allows only Exists for these; DoesNotExist reads as
	 * its negation. */
	return quota__streq(op, "DoesNotExist") ? !hit : hit;
}

/* Whether the quota rq (its spec) selects an object with facts f. */
static bool quota__matches_facts(const struct ynode *rq, const struct quota__facts *f)
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
		if (!quota__scope_matches(ynode_str(ynode_item(scopes, i)), NULL, NULL, f))
			return false;
	for (size_t i = 0; i < ne; i++) {
		const struct ynode *e = ynode_item(exprs, i);
		if (!quota__scope_matches(ynode_str(ynode_get(e, "scopeName")),
					  ynode_str(ynode_get(e, "operator")),
					  ynode_get(e, "values"), f))
			return false;
	}
	return true;
}

bool quota_matches(const struct ynode *rq, const struct kind_info *k, const struct ynode *obj)
{
	struct quota__facts f;
	quota__facts_of(k, obj, &f);
	bool m = quota__matches_facts(rq, &f);
	quota__facts_clear(&f);
	return m;
}

/* ---- a pod's constraints ---- */

static const char *const quota__validated[] = {"cpu",	 "limits.cpu",	 "limits.memory",
					       "memory", "requests.cpu", "requests.memory"};

int quota_pod_constraints(const struct quota_list *hard, const struct ynode *pod,
			  struct error **err)
{
	/* Per required resource (in the sorted order above), the containers
	 * that lack it, "a,b". */
	char *missing[ARRAY_SIZE(quota__validated)] = {0};
	bool any = false;
	static const char *const lists[] = {"spec.containers", "spec.initContainers"};
	for (size_t l = 0; l < 2; l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const struct ynode *c = ynode_item(cs, i);
			const struct ynode *res = ynode_get(c, "resources");
			struct quota_list req = {0}, lim = {0}, use = {0};
			quota_list_read(&req, ynode_get(res, "requests"));
			quota_list_read(&lim, ynode_get(res, "limits"));
			quota__compute_usage(&req, &lim, &use);
			for (size_t r = 0; r < ARRAY_SIZE(quota__validated); r++) {
				if (!quota_list_find(hard, quota__validated[r]) ||
				    quota_list_find(&use, quota__validated[r]))
					continue;
				const char *name = ynode_str(ynode_get(c, "name"));
				char *m = missing[r]
					      ? xasprintf("%s,%s", missing[r], name ? name : "")
					      : xstrdup(name ? name : "");
				free(missing[r]);
				missing[r] = m;
				any = true;
			}
			quota_list_clear(&req);
			quota_list_clear(&lim);
			quota_list_clear(&use);
		}
	}
	if (!any)
		return 0;
	/* Kubernetes lists each resource's containers sorted: ours are in
	 * spec order, which is the common case of one container. */
	cleanup_free char *msg = xstrdup("");
	for (size_t r = 0; r < ARRAY_SIZE(quota__validated); r++) {
		if (!missing[r])
			continue;
		char *m = xasprintf("%s%s%s for: %s", msg, *msg ? "; " : "", quota__validated[r],
				    missing[r]);
		free(msg);
		msg = m;
		free(missing[r]);
	}
	return error_set(err, EACCES, "must specify %s", msg);
}

/* ---- the hook's state ---- */

/* What one stored object charges. */
struct quota__record {
	struct quota__facts facts;
	struct quota_list usage;
};

struct quota__quota {
	char *name;
	uint64_t id;		    /* names this quota in claims, never reused */
	struct ynode *obj;	    /* the stored ResourceQuota (a copy) */
	struct quota_list hard;	    /* spec.hard */
	struct quota_list used;	    /* of the settled objects it selects */
	struct quota_list reserved; /* taken by writes in flight */
};

struct quota__ns {
	struct strmap *records;	      /* "<plural>/<name>" -> struct quota__record */
	struct quota__quota **quotas; /* sorted by name */
	size_t nq, capq;
};

struct quota__state {
	pthread_mutex_t lock;
	struct strmap *nss; /* namespace -> struct quota__ns */
	uint64_t next_id;
};

/* What a write's reserve took: amounts of quotas, by id. */
struct quota__take {
	uint64_t id;
	char *name;
	int64_t milli;
};
struct quota__claim {
	struct quota__take *v;
	size_t n;
};

static void quota__record_free(void *p)
{
	struct quota__record *r = p;
	if (!r)
		return;
	quota__facts_clear(&r->facts);
	quota_list_clear(&r->usage);
	free(r);
}

static struct quota__record *quota__record_new(const struct kind_info *k, const struct ynode *obj)
{
	struct quota__record *r = xcalloc(1, sizeof(*r));
	quota__facts_of(k, obj, &r->facts);
	quota_usage(k, obj, &r->usage);
	return r;
}

static void quota__quota_free(struct quota__quota *q)
{
	free(q->name);
	ynode_free(q->obj);
	quota_list_clear(&q->hard);
	quota_list_clear(&q->used);
	quota_list_clear(&q->reserved);
	free(q);
}

static void quota__ns_free(void *p)
{
	struct quota__ns *n = p;
	if (!n)
		return;
	strmap_free(n->records, quota__record_free);
	for (size_t i = 0; i < n->nq; i++)
		quota__quota_free(n->quotas[i]);
	free(n->quotas);
	free(n);
}

static struct quota__ns *quota__ns_get(struct quota__state *s, const char *ns, bool create)
{
	struct quota__ns *n = strmap_get(s->nss, ns);
	if (!n && create) {
		n = xcalloc(1, sizeof(*n));
		n->records = strmap_new();
		strmap_set(s->nss, ns, n);
	}
	return n;
}

static size_t quota__quota_pos(const struct quota__ns *n, const char *name, bool *found)
{
	*found = false;
	size_t i = 0;
	for (; i < n->nq; i++) {
		int c = strcmp(n->quotas[i]->name, name);
		if (c == 0)
			*found = true;
		if (c >= 0)
			break;
	}
	return i;
}

/* Adds (sign 1) or takes away (-1) what rec charges to q, if q selects it. */
static void quota__charge(struct quota__quota *q, const struct quota__record *rec, int sign)
{
	if (!rec || !quota__matches_facts(q->obj, &rec->facts))
		return;
	for (size_t i = 0; i < q->hard.n; i++) {
		const struct quota_amount *a = quota_list_find(&rec->usage, q->hard.v[i].name);
		if (a)
			quota_list_add(&q->used, a->name, sign * a->milli, a->fmt);
	}
}

static void quota__recount(struct quota__ns *n, struct quota__quota *q)
{
	quota_list_clear(&q->used);
	const char *key;
	void *val;
	for (size_t i = 0; strmap_next(n->records, &i, &key, &val);)
		quota__charge(q, val, 1);
}

/* A ResourceQuota written: its hard and scopes now count. */
static void quota__put_quota(struct quota__state *s, struct quota__ns *n, const char *name,
			     const struct ynode *obj)
{
	bool found;
	size_t i = quota__quota_pos(n, name, &found);
	struct quota__quota *q;
	if (found) {
		q = n->quotas[i];
		ynode_free(q->obj);
		quota_list_clear(&q->hard);
	} else {
		q = xcalloc(1, sizeof(*q));
		q->name = xstrdup(name);
		q->id = ++s->next_id;
		if (n->nq == n->capq) {
			n->capq = n->capq ? 2 * n->capq : 4;
			n->quotas = xrealloc(n->quotas, n->capq * sizeof(*n->quotas));
		}
		memmove(&n->quotas[i + 1], &n->quotas[i], (n->nq - i) * sizeof(*n->quotas));
		n->quotas[i] = q;
		n->nq++;
	}
	q->obj = ynode_clone(obj);
	quota_list_read(&q->hard, ynode_path(obj, "spec.hard"));
	quota__recount(n, q);
}

static void quota__drop_quota(struct quota__ns *n, const char *name)
{
	bool found;
	size_t i = quota__quota_pos(n, name, &found);
	if (!found)
		return;
	quota__quota_free(n->quotas[i]);
	memmove(&n->quotas[i], &n->quotas[i + 1], (n->nq - i - 1) * sizeof(*n->quotas));
	n->nq--;
}

static char *quota__key(const struct admission_request *rq)
{
	return xasprintf("%s/%s", rq->kind->plural, rq->name);
}

/* Needs the lock: the committed change of rq into the state. */
static void quota__apply(struct quota__state *s, const struct admission_request *rq)
{
	if (!rq->ns || !rq->kind->namespaced)
		return;
	struct quota__ns *n = quota__ns_get(s, rq->ns, rq->obj != NULL);
	if (!n)
		return;
	cleanup_free char *key = quota__key(rq);
	struct quota__record *old = strmap_del(n->records, key);
	for (size_t i = 0; i < n->nq; i++)
		quota__charge(n->quotas[i], old, -1);
	quota__record_free(old);
	if (rq->obj) {
		struct quota__record *rec = quota__record_new(rq->kind, rq->obj);
		for (size_t i = 0; i < n->nq; i++)
			quota__charge(n->quotas[i], rec, 1);
		strmap_set(n->records, key, rec);
	}
	if (kinds_id(rq->kind) == KIND_RESOURCE_QUOTA) {
		if (rq->obj)
			quota__put_quota(s, n, rq->name, rq->obj);
		else
			quota__drop_quota(n, rq->name);
	}
}

static struct quota__quota *quota__by_id(struct quota__ns *n, uint64_t id)
{
	for (size_t i = 0; n && i < n->nq; i++)
		if (n->quotas[i]->id == id)
			return n->quotas[i];
	return NULL;
}

/* Needs the lock: gives back what c took. */
static void quota__release(struct quota__state *s, const struct admission_request *rq,
			   struct quota__claim *c)
{
	struct quota__ns *n = c && c->n ? quota__ns_get(s, rq->ns, false) : NULL;
	for (size_t i = 0; c && i < c->n; i++) {
		struct quota__quota *q = quota__by_id(n, c->v[i].id);
		if (q)
			quota_list_add(&q->reserved, c->v[i].name, -c->v[i].milli,
				       QUANTITY_DECIMAL_SI);
	}
}

static void quota__claim_free(struct quota__claim *c)
{
	for (size_t i = 0; c && i < c->n; i++)
		free(c->v[i].name);
	if (c)
		free(c->v);
	free(c);
}

static int quota__forbidden(struct error **err, const struct admission_request *rq, const char *fmt,
			    ...) __attribute__((format(printf, 3, 4)));

static int quota__forbidden(struct error **err, const struct admission_request *rq, const char *fmt,
			    ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *why = xvasprintf(fmt, ap);
	va_end(ap);
	return admission_forbidden(err, rq, "%s", why);
}

/* Needs the lock. Checks rq against every quota of n and takes its share
 * into *out; or refuses. */
static int quota__check(struct quota__ns *n, struct admission_request *rq, struct quota__claim *out,
			struct error **err)
{
	struct quota__record *rec = quota__record_new(rq->kind, rq->obj);
	cleanup_free char *key = quota__key(rq);
	const struct quota__record *old = rq->old ? strmap_get(n->records, key) : NULL;
	int r = 0;
	/* First every quota's constraints, as Kubernetes does, then the sums. */
	for (size_t i = 0; r == 0 && i < n->nq && rec->facts.pod && !rq->old; i++) {
		struct quota__quota *q = n->quotas[i];
		struct error *cerr = NULL;
		if (quota__matches_facts(q->obj, &rec->facts) &&
		    quota_pod_constraints(&q->hard, rq->obj, &cerr) < 0) {
			r = quota__forbidden(err, rq, "failed quota: %s: %s", q->name, cerr->msg);
			error_free(cerr);
		}
	}
	for (size_t i = 0; r == 0 && i < n->nq; i++) {
		struct quota__quota *q = n->quotas[i];
		if (!quota__matches_facts(q->obj, &rec->facts))
			continue;
		bool old_in = old && quota__matches_facts(q->obj, &old->facts);
		struct quota_list req = {0}, used = {0}, lim = {0};
		for (size_t h = 0; h < q->hard.n; h++) {
			const struct quota_amount *hd = &q->hard.v[h];
			const struct quota_amount *a = quota_list_find(&rec->usage, hd->name);
			if (!a)
				continue;
			int64_t d = a->milli - (old_in ? quota__get(&old->usage, hd->name) : 0);
			if (d <= 0)
				continue;
			const struct quota_amount *u = quota_list_find(&q->used, hd->name);
			int64_t now = (u ? u->milli : 0) + quota__get(&q->reserved, hd->name);
			if (now + d > hd->milli) {
				quota_list_add(&req, hd->name, d, a->fmt);
				quota_list_add(&used, hd->name, now,
					       u && u->milli ? u->fmt : a->fmt);
				quota_list_add(&lim, hd->name, hd->milli, hd->fmt);
			}
		}
		if (req.n) {
			cleanup_free char *sreq = quota_list_format(&req);
			cleanup_free char *sused = quota_list_format(&used);
			cleanup_free char *slim = quota_list_format(&lim);
			r = quota__forbidden(
			    err, rq, "exceeded quota: %s, requested: %s, used: %s, limited: %s",
			    q->name, sreq, sused, slim);
		}
		quota_list_clear(&req);
		quota_list_clear(&used);
		quota_list_clear(&lim);
	}
	/* Everything fits: take the increases. */
	for (size_t i = 0; r == 0 && i < n->nq; i++) {
		struct quota__quota *q = n->quotas[i];
		if (!quota__matches_facts(q->obj, &rec->facts))
			continue;
		bool old_in = old && quota__matches_facts(q->obj, &old->facts);
		for (size_t h = 0; h < q->hard.n; h++) {
			const struct quota_amount *a =
			    quota_list_find(&rec->usage, q->hard.v[h].name);
			int64_t d =
			    a ? a->milli - (old_in ? quota__get(&old->usage, a->name) : 0) : 0;
			if (d <= 0)
				continue;
			quota_list_add(&q->reserved, a->name, d, a->fmt);
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] =
			    (struct quota__take){.id = q->id, .name = xstrdup(a->name), .milli = d};
		}
	}
	quota__record_free(rec);
	return r;
}

void *quota_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct quota__state *s = xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->nss = strmap_new();
	return s;
}

void quota_hook_fini(void *state)
{
	struct quota__state *s = state;
	if (!s)
		return;
	strmap_free(s->nss, quota__ns_free);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void quota_hook_load(void *state, const struct admission_request *rq)
{
	struct quota__state *s = state;
	pthread_mutex_lock(&s->lock);
	quota__apply(s, rq);
	pthread_mutex_unlock(&s->lock);
}

/* Whether Kubernetes' evaluator for the kind handles the operation:
 * creates always, updates of Services and PVCs (a type or a size can
 * grow), never deletions. */
static bool quota__handles(const struct admission_request *rq)
{
	if (!rq->obj)
		return false;
	if (!rq->old)
		return true;
	enum kind_id id = kinds_id(rq->kind);
	return id == KIND_SERVICE || id == KIND_PERSISTENT_VOLUME_CLAIM;
}

int quota_hook_reserve(void *state, struct admission_request *rq, void **claim, struct error **err)
{
	struct quota__state *s = state;
	*claim = NULL;
	if (!rq->ns || !rq->kind->namespaced || !quota__handles(rq))
		return 0;
	pthread_mutex_lock(&s->lock);
	struct quota__ns *n = quota__ns_get(s, rq->ns, false);
	if (!n || !n->nq) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	struct quota__claim *c = xcalloc(1, sizeof(*c));
	int r = quota__check(n, rq, c, err);
	if (r < 0)
		quota__release(s, rq, c);
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		quota__claim_free(c);
		return r;
	}
	*claim = c;
	return 0;
}

void quota_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	struct quota__state *s = state;
	pthread_mutex_lock(&s->lock);
	quota__release(s, rq, claim);
	quota__apply(s, rq);
	pthread_mutex_unlock(&s->lock);
	quota__claim_free(claim);
}

void quota_hook_unreserve(void *state, const struct admission_request *rq, void *claim)
{
	struct quota__state *s = state;
	pthread_mutex_lock(&s->lock);
	quota__release(s, rq, claim);
	pthread_mutex_unlock(&s->lock);
	quota__claim_free(claim);
}

bool quota_hook_used(void *state, const char *ns, const char *name, struct quota_list *out)
{
	struct quota__state *s = state;
	pthread_mutex_lock(&s->lock);
	struct quota__ns *n = quota__ns_get(s, ns, false);
	bool found = false;
	size_t i = n ? quota__quota_pos(n, name, &found) : 0;
	if (found) {
		struct quota__quota *q = n->quotas[i];
		for (size_t h = 0; h < q->hard.n; h++) {
			const struct quota_amount *u = quota_list_find(&q->used, q->hard.v[h].name);
			quota_list_add(out, q->hard.v[h].name, u ? u->milli : 0,
				       u && u->milli ? u->fmt : q->hard.v[h].fmt);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}
