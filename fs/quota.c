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
#include "strmap.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the hook's state ---- */

/* What one stored object charges. */
struct quotacalc__record {
	struct quotacalc_facts facts;
	struct quotacalc_list usage;
};

struct quotacalc__quota {
	char *name;
	uint64_t id;			/* names this quota in claims, never reused */
	struct ynode *obj;		/* the stored ResourceQuota (a copy) */
	struct quotacalc_list hard;	/* spec.hard */
	struct quotacalc_list used;	/* of the settled objects it selects */
	struct quotacalc_list reserved; /* taken by writes in flight */
};

struct quotacalc__ns {
	struct strmap *records;		  /* "<plural>/<name>" -> struct quotacalc__record */
	struct quotacalc__quota **quotas; /* sorted by name */
	size_t nq, capq;
};

struct quotacalc__state {
	pthread_mutex_t lock;
	struct strmap *nss; /* namespace -> struct quotacalc__ns */
	uint64_t next_id;
};

/* What a write's reserve took: amounts of quotas, by id. */
struct quotacalc__take {
	uint64_t id;
	char *name;
	int64_t milli;
};
struct quotacalc__claim {
	struct quotacalc__take *v;
	size_t n;
};

static void quotacalc__record_free(void *p)
{
	struct quotacalc__record *r = p;
	if (!r)
		return;
	quotacalc_facts_clear(&r->facts);
	quotacalc_list_clear(&r->usage);
	free(r);
}

static struct quotacalc__record *quotacalc__record_new(const struct kind_info *k,
						       const struct ynode *obj)
{
	struct quotacalc__record *r = xcalloc(1, sizeof(*r));
	quotacalc_facts_of(k, obj, &r->facts);
	quotacalc_usage(k, obj, &r->usage);
	return r;
}

static void quotacalc__quota_free(struct quotacalc__quota *q)
{
	free(q->name);
	ynode_free(q->obj);
	quotacalc_list_clear(&q->hard);
	quotacalc_list_clear(&q->used);
	quotacalc_list_clear(&q->reserved);
	free(q);
}

static void quotacalc__ns_free(void *p)
{
	struct quotacalc__ns *n = p;
	if (!n)
		return;
	strmap_free(n->records, quotacalc__record_free);
	for (size_t i = 0; i < n->nq; i++)
		quotacalc__quota_free(n->quotas[i]);
	free(n->quotas);
	free(n);
}

static struct quotacalc__ns *quotacalc__ns_get(struct quotacalc__state *s, const char *ns,
					       bool create)
{
	struct quotacalc__ns *n = strmap_get(s->nss, ns);
	if (!n && create) {
		n = xcalloc(1, sizeof(*n));
		n->records = strmap_new();
		strmap_set(s->nss, ns, n);
	}
	return n;
}

static size_t quotacalc__quota_pos(const struct quotacalc__ns *n, const char *name, bool *found)
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
static void quotacalc__charge(struct quotacalc__quota *q, const struct quotacalc__record *rec,
			      int sign)
{
	if (!rec || !quotacalc_selects(q->obj, &rec->facts))
		return;
	for (size_t i = 0; i < q->hard.n; i++) {
		const struct quotacalc_amount *a =
		    quotacalc_list_find(&rec->usage, q->hard.v[i].name);
		if (a)
			quotacalc_list_add(&q->used, a->name, sign * a->milli, a->fmt);
	}
}

static void quotacalc__recount(struct quotacalc__ns *n, struct quotacalc__quota *q)
{
	quotacalc_list_clear(&q->used);
	const char *key;
	void *val;
	for (size_t i = 0; strmap_next(n->records, &i, &key, &val);)
		quotacalc__charge(q, val, 1);
}

/* A ResourceQuota written: its hard and scopes now count. */
static void quotacalc__put_quota(struct quotacalc__state *s, struct quotacalc__ns *n,
				 const char *name, const struct ynode *obj)
{
	bool found;
	size_t i = quotacalc__quota_pos(n, name, &found);
	struct quotacalc__quota *q;
	if (found) {
		q = n->quotas[i];
		ynode_free(q->obj);
		quotacalc_list_clear(&q->hard);
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
	quotacalc_list_read(&q->hard, ynode_path(obj, "spec.hard"));
	quotacalc__recount(n, q);
}

static void quotacalc__drop_quota(struct quotacalc__ns *n, const char *name)
{
	bool found;
	size_t i = quotacalc__quota_pos(n, name, &found);
	if (!found)
		return;
	quotacalc__quota_free(n->quotas[i]);
	memmove(&n->quotas[i], &n->quotas[i + 1], (n->nq - i - 1) * sizeof(*n->quotas));
	n->nq--;
}

static char *quotacalc__key(const struct admission_request *rq)
{
	return xasprintf("%s/%s", rq->kind->plural, rq->name);
}

/* Needs the lock: the committed change of rq into the state. */
static void quotacalc__apply(struct quotacalc__state *s, const struct admission_request *rq)
{
	if (!rq->ns || !rq->kind->namespaced)
		return;
	struct quotacalc__ns *n = quotacalc__ns_get(s, rq->ns, rq->obj != NULL);
	if (!n)
		return;
	cleanup_free char *key = quotacalc__key(rq);
	struct quotacalc__record *old = strmap_del(n->records, key);
	for (size_t i = 0; i < n->nq; i++)
		quotacalc__charge(n->quotas[i], old, -1);
	quotacalc__record_free(old);
	if (rq->obj) {
		struct quotacalc__record *rec = quotacalc__record_new(rq->kind, rq->obj);
		for (size_t i = 0; i < n->nq; i++)
			quotacalc__charge(n->quotas[i], rec, 1);
		strmap_set(n->records, key, rec);
	}
	if (kinds_id(rq->kind) == KIND_RESOURCE_QUOTA) {
		if (rq->obj)
			quotacalc__put_quota(s, n, rq->name, rq->obj);
		else
			quotacalc__drop_quota(n, rq->name);
	}
}

static struct quotacalc__quota *quotacalc__by_id(struct quotacalc__ns *n, uint64_t id)
{
	for (size_t i = 0; n && i < n->nq; i++)
		if (n->quotas[i]->id == id)
			return n->quotas[i];
	return NULL;
}

/* Needs the lock: gives back what c took. */
static void quotacalc__release(struct quotacalc__state *s, const struct admission_request *rq,
			       struct quotacalc__claim *c)
{
	struct quotacalc__ns *n = c && c->n ? quotacalc__ns_get(s, rq->ns, false) : NULL;
	for (size_t i = 0; c && i < c->n; i++) {
		struct quotacalc__quota *q = quotacalc__by_id(n, c->v[i].id);
		if (q)
			quotacalc_list_add(&q->reserved, c->v[i].name, -c->v[i].milli,
					   QUANTITY_DECIMAL_SI);
	}
}

static void quotacalc__claim_free(struct quotacalc__claim *c)
{
	for (size_t i = 0; c && i < c->n; i++)
		free(c->v[i].name);
	if (c)
		free(c->v);
	free(c);
}

/* Needs the lock. Checks rq against every quota of n and takes its share
 * into *out; or refuses. */
static int quotacalc__check(struct quotacalc__ns *n, struct admission_request *rq,
			    struct quotacalc__claim *out, struct error **err)
{
	struct quotacalc__record *rec = quotacalc__record_new(rq->kind, rq->obj);
	cleanup_free char *key = quotacalc__key(rq);
	const struct quotacalc__record *old = rq->old ? strmap_get(n->records, key) : NULL;
	int r = 0;
	/* First every quota's constraints, as Kubernetes does, then the sums. */
	for (size_t i = 0; r == 0 && i < n->nq && rec->facts.pod && !rq->old; i++) {
		struct quotacalc__quota *q = n->quotas[i];
		struct error *cerr = NULL;
		if (quotacalc_selects(q->obj, &rec->facts) &&
		    quotacalc_pod_constraints(&q->hard, rq->obj, &cerr) < 0) {
			r = admission_forbidden(err, rq, "failed quota: %s: %s", q->name,
						cerr->msg);
			error_free(cerr);
		}
	}
	for (size_t i = 0; r == 0 && i < n->nq; i++) {
		struct quotacalc__quota *q = n->quotas[i];
		if (!quotacalc_selects(q->obj, &rec->facts))
			continue;
		bool old_in = old && quotacalc_selects(q->obj, &old->facts);
		struct quotacalc_list req = {0}, used = {0}, lim = {0};
		for (size_t h = 0; h < q->hard.n; h++) {
			const struct quotacalc_amount *hd = &q->hard.v[h];
			const struct quotacalc_amount *a =
			    quotacalc_list_find(&rec->usage, hd->name);
			if (!a)
				continue;
			int64_t d =
			    a->milli - (old_in ? quotacalc_list_get(&old->usage, hd->name) : 0);
			if (d <= 0)
				continue;
			const struct quotacalc_amount *u = quotacalc_list_find(&q->used, hd->name);
			int64_t now =
			    (u ? u->milli : 0) + quotacalc_list_get(&q->reserved, hd->name);
			if (now + d > hd->milli) {
				quotacalc_list_add(&req, hd->name, d, a->fmt);
				quotacalc_list_add(&used, hd->name, now,
						   u && u->milli ? u->fmt : a->fmt);
				quotacalc_list_add(&lim, hd->name, hd->milli, hd->fmt);
			}
		}
		if (req.n) {
			cleanup_free char *sreq = quotacalc_list_format(&req);
			cleanup_free char *sused = quotacalc_list_format(&used);
			cleanup_free char *slim = quotacalc_list_format(&lim);
			r = admission_forbidden(
			    err, rq, "exceeded quota: %s, requested: %s, used: %s, limited: %s",
			    q->name, sreq, sused, slim);
		}
		quotacalc_list_clear(&req);
		quotacalc_list_clear(&used);
		quotacalc_list_clear(&lim);
	}
	/* Everything fits: take the increases. */
	for (size_t i = 0; r == 0 && i < n->nq; i++) {
		struct quotacalc__quota *q = n->quotas[i];
		if (!quotacalc_selects(q->obj, &rec->facts))
			continue;
		bool old_in = old && quotacalc_selects(q->obj, &old->facts);
		for (size_t h = 0; h < q->hard.n; h++) {
			const struct quotacalc_amount *a =
			    quotacalc_list_find(&rec->usage, q->hard.v[h].name);
			int64_t d =
			    a ? a->milli - (old_in ? quotacalc_list_get(&old->usage, a->name) : 0)
			      : 0;
			if (d <= 0)
				continue;
			quotacalc_list_add(&q->reserved, a->name, d, a->fmt);
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] = (struct quotacalc__take){
			    .id = q->id, .name = xstrdup(a->name), .milli = d};
		}
	}
	quotacalc__record_free(rec);
	return r;
}

void *quota_hook_init(const struct admission_config *cfg)
{
	(void)cfg;
	struct quotacalc__state *s = xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->nss = strmap_new();
	return s;
}

void quota_hook_fini(void *state)
{
	struct quotacalc__state *s = state;
	if (!s)
		return;
	strmap_free(s->nss, quotacalc__ns_free);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void quota_hook_load(void *state, const struct admission_request *rq)
{
	struct quotacalc__state *s = state;
	pthread_mutex_lock(&s->lock);
	quotacalc__apply(s, rq);
	pthread_mutex_unlock(&s->lock);
}

/* Whether Kubernetes' evaluator for the kind handles the operation:
 * creates always, updates of Services and PVCs (a type or a size can
 * grow), never deletions. */
static bool quotacalc__handles(const struct admission_request *rq)
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
	struct quotacalc__state *s = state;
	*claim = NULL;
	if (!rq->ns || !rq->kind->namespaced || !quotacalc__handles(rq))
		return 0;
	pthread_mutex_lock(&s->lock);
	struct quotacalc__ns *n = quotacalc__ns_get(s, rq->ns, false);
	if (!n || !n->nq) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	struct quotacalc__claim *c = xcalloc(1, sizeof(*c));
	int r = quotacalc__check(n, rq, c, err);
	if (r < 0)
		quotacalc__release(s, rq, c);
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		quotacalc__claim_free(c);
		return r;
	}
	*claim = c;
	return 0;
}

void quota_hook_settle(void *state, const struct admission_request *rq, void *claim)
{
	struct quotacalc__state *s = state;
	pthread_mutex_lock(&s->lock);
	quotacalc__release(s, rq, claim);
	quotacalc__apply(s, rq);
	pthread_mutex_unlock(&s->lock);
	quotacalc__claim_free(claim);
}

void quota_hook_unreserve(void *state, const struct admission_request *rq, void *claim)
{
	struct quotacalc__state *s = state;
	pthread_mutex_lock(&s->lock);
	quotacalc__release(s, rq, claim);
	pthread_mutex_unlock(&s->lock);
	quotacalc__claim_free(claim);
}

bool quota_hook_used(void *state, const char *ns, const char *name, struct quotacalc_list *out)
{
	struct quotacalc__state *s = state;
	pthread_mutex_lock(&s->lock);
	struct quotacalc__ns *n = quotacalc__ns_get(s, ns, false);
	bool found = false;
	size_t i = n ? quotacalc__quota_pos(n, name, &found) : 0;
	if (found) {
		struct quotacalc__quota *q = n->quotas[i];
		for (size_t h = 0; h < q->hard.n; h++) {
			const struct quotacalc_amount *u =
			    quotacalc_list_find(&q->used, q->hard.v[h].name);
			quotacalc_list_add(out, q->hard.v[h].name, u ? u->milli : 0,
					   u && u->milli ? u->fmt : q->hard.v[h].fmt);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}
