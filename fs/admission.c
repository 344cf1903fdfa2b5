/* admission.c: the table of corral-fs's admission hooks and the protocol
 * that runs them (see admission.h). The hooks themselves live with their
 * state (svcindex.c: Services' addresses and node ports; priority.c: a
 * pod's priority from its PriorityClass; storage.c: claims' default
 * StorageClass, resizes and the protection finalizers; limitrange.c:
 * LimitRanges' defaults and bounds; quota.c: ResourceQuotas;
 * serviceaccount.c: a pod's ServiceAccount and its token volume). */
#include "admission.h"
#include "limitrange.h"
#include "nslifecycle.h"
#include "priority.h"
#include "quota.h"
#include "serviceaccount.h"
#include "storage.h"
#include "svcindex.h"
#include "tolerations.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* DefaultStorageClass (and PersistentVolumeClaimResize) admit claims; the
 * classes are their state. StorageObjectInUseProtection protects claims
 * and volumes. */
static const enum kind_id admission__storage_class[] = {KIND_PERSISTENT_VOLUME_CLAIM,
							KIND_STORAGE_CLASS, KIND_COUNT};
static const enum kind_id admission__storage_class_load[] = {KIND_STORAGE_CLASS, KIND_COUNT};
static const enum kind_id admission__storage_protection[] = {KIND_PERSISTENT_VOLUME_CLAIM,
							     KIND_PERSISTENT_VOLUME, KIND_COUNT};
static const enum kind_id admission__pods[] = {KIND_POD, KIND_COUNT};
static const enum kind_id admission__services[] = {KIND_SERVICE, KIND_COUNT};
/* Kubernetes' Priority plugin admits pods and PriorityClasses; only the
 * classes are its state. */
static const enum kind_id admission__priority[] = {KIND_POD, KIND_PRIORITY_CLASS, KIND_COUNT};
static const enum kind_id admission__priority_load[] = {KIND_PRIORITY_CLASS, KIND_COUNT};
/* LimitRanger admits pods and claims; only the LimitRanges are its state. */
static const enum kind_id admission__limitrange[] = {KIND_POD, KIND_PERSISTENT_VOLUME_CLAIM,
						     KIND_LIMIT_RANGE, KIND_COUNT};
static const enum kind_id admission__limitrange_load[] = {KIND_LIMIT_RANGE, KIND_COUNT};

/* NamespaceLifecycle sees every kind; only Namespaces are its state. */
static const enum kind_id admission__nslifecycle_load[] = {KIND_NAMESPACE, KIND_COUNT};

/* Kubernetes' ServiceAccount plugin admits pods; ServiceAccounts are its
 * state. */
static const enum kind_id admission__serviceaccount[] = {KIND_POD, KIND_SERVICE_ACCOUNT,
							 KIND_COUNT};
static const enum kind_id admission__serviceaccount_load[] = {KIND_SERVICE_ACCOUNT, KIND_COUNT};

static const struct admission_hook admission__table[] = {
    {
	.name = "namespace-lifecycle",
	.load_kinds = admission__nslifecycle_load,
	.init = nslifecycle_hook_init,
	.fini = nslifecycle_hook_fini,
	.load = nslifecycle_hook_load,
	.reserve = nslifecycle_hook_reserve,
	.settle = nslifecycle_hook_settle,
    },
    {
	.name = "limit-ranger",
	.kinds = admission__limitrange,
	.load_kinds = admission__limitrange_load,
	.init = limitrange_hook_init,
	.fini = limitrange_hook_fini,
	.load = limitrange_hook_load,
	.follows = true,
	.reserve = limitrange_hook_reserve,
	.settle = limitrange_hook_settle,
	.unreserve = limitrange_hook_unreserve,
    },
    {
	.name = "serviceaccount",
	.kinds = admission__serviceaccount,
	.load_kinds = admission__serviceaccount_load,
	.init = serviceaccount_hook_init,
	.fini = serviceaccount_hook_fini,
	.load = serviceaccount_hook_load,
	.reserve = serviceaccount_hook_reserve,
	.settle = serviceaccount_hook_settle,
    },
    {
	.name = "default-toleration-seconds",
	.kinds = admission__pods,
	.init = tolerations_hook_init,
	.fini = tolerations_hook_fini,
	.reserve = tolerations_hook_reserve,
    },
    {
	.name = "default-storage-class",
	.kinds = admission__storage_class,
	.load_kinds = admission__storage_class_load,
	.init = storage_class_hook_init,
	.fini = storage_class_hook_fini,
	.load = storage_class_hook_load,
	.reserve = storage_class_hook_reserve,
	.settle = storage_class_hook_settle,
    },
    {
	.name = "storage-object-in-use-protection",
	.kinds = admission__storage_protection,
	.reserve = storage_protection_hook_reserve,
    },
    {
	.name = "service-addresses",
	.kinds = admission__services,
	.init = svcindex_hook_init,
	.fini = svcindex_hook_fini,
	.load = svcindex_hook_load,
	.reserve = svcindex_hook_reserve,
	.settle = svcindex_hook_settle,
	.unreserve = svcindex_hook_unreserve,
    },
    {
	.name = "priority",
	.kinds = admission__priority,
	.load_kinds = admission__priority_load,
	.init = priority_hook_init,
	.fini = priority_hook_fini,
	.load = priority_hook_load,
	.reserve = priority_hook_reserve,
	.settle = priority_hook_settle,
	.unreserve = priority_hook_unreserve,
    },
    /* ResourceQuota last, as Kubernetes orders it: it charges the object
     * every other hook has changed. Every kind: count/<resource>. */
    {
	.name = "resource-quota",
	.init = quota_hook_init,
	.fini = quota_hook_fini,
	.load = quota_hook_load,
	.follows = true,
	.reserve = quota_hook_reserve,
	.settle = quota_hook_settle,
	.unreserve = quota_hook_unreserve,
    },
};

int admission_forbidden(struct error **err, const struct admission_request *rq, const char *fmt,
			...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *why = xvasprintf(fmt, ap);
	va_end(ap);
	const char *av = rq->kind->api_versions[0];
	const char *slash = av ? strchr(av, '/') : NULL;
	cleanup_free char *resource =
	    slash ? xasprintf("%s.%.*s", rq->kind->plural, (int)(slash - av), av)
		  : xstrdup(rq->kind->plural);
	return error_set(err, EACCES, "%s \"%s\" is forbidden: %s", resource, rq->name, why);
}

const struct admission_hook *admission_default_hooks(size_t *n)
{
	*n = ARRAY_SIZE(admission__table);
	return admission__table;
}

struct admission__slot {
	const struct admission_hook *hook;
	void *state;
};

struct admission {
	struct admission__slot *slots; /* in the order they run */
	size_t n;
};

struct admission_ticket {
	size_t n;      /* hooks reserved, the first n that apply */
	size_t *which; /* their slots */
	void **claims; /* what each took */
};

struct admission *admission_new(const struct admission_hook *hooks, size_t n,
				const struct admission_config *cfg)
{
	struct admission *a = xcalloc(1, sizeof(*a));
	a->slots = xcalloc(n ? n : 1, sizeof(*a->slots));
	for (size_t i = 0; i < n; i++) {
		a->slots[i].hook = &hooks[i];
		a->slots[i].state = hooks[i].init ? hooks[i].init(cfg) : NULL;
	}
	a->n = n;
	return a;
}

void admission_free(struct admission *a)
{
	if (!a)
		return;
	for (size_t i = a->n; i-- > 0;)
		if (a->slots[i].hook->fini)
			a->slots[i].hook->fini(a->slots[i].state);
	free(a->slots);
	free(a);
}

/* Whether kinds (ended by KIND_COUNT; NULL: every kind) names k. */
static bool admission__listed(const enum kind_id *kinds, const struct kind_info *k)
{
	if (!kinds)
		return true;
	enum kind_id id = k ? kinds_id(k) : KIND_COUNT;
	for (const enum kind_id *kp = kinds; *kp != KIND_COUNT; kp++)
		if (*kp == id)
			return true;
	return false;
}

static bool admission__applies(const struct admission_hook *h, const struct kind_info *k)
{
	return admission__listed(h->kinds, k);
}

static bool admission__loads(const struct admission_hook *h, const struct kind_info *k)
{
	return h->load && admission__applies(h, k) && admission__listed(h->load_kinds, k);
}

bool admission_applies(const struct admission *a, const struct kind_info *k)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (admission__applies(a->slots[i].hook, k))
			return true;
	return false;
}

bool admission_wants_load(const struct admission *a, const struct kind_info *k)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (admission__loads(a->slots[i].hook, k))
			return true;
	return false;
}

void admission_load(struct admission *a, const struct admission_request *rq)
{
	for (size_t i = 0; a && i < a->n; i++) {
		const struct admission_hook *h = a->slots[i].hook;
		if (admission__loads(h, rq->kind))
			h->load(a->slots[i].state, rq);
	}
}

bool admission_wants_follow(const struct admission *a, const struct kind_info *k)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (a->slots[i].hook->follows && admission__loads(a->slots[i].hook, k))
			return true;
	return false;
}

void admission_follow(struct admission *a, const struct admission_request *rq)
{
	for (size_t i = 0; a && i < a->n; i++) {
		const struct admission_hook *h = a->slots[i].hook;
		if (h->follows && admission__loads(h, rq->kind))
			h->load(a->slots[i].state, rq);
	}
}

void *admission_hook_state(const struct admission *a, const char *name)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (!strcmp(a->slots[i].hook->name, name))
			return a->slots[i].state;
	return NULL;
}

void admission_claim(struct admission_request *rq, bool take, const char *name, const char *holder,
		     const char *refusal)
{
	rq->claims = xrealloc(rq->claims, (rq->nclaims + 1) * sizeof(*rq->claims));
	rq->claims[rq->nclaims++] = (struct store_claim){.name = xstrdup(name),
							 .holder = xstrdup(holder),
							 .refusal = xstrdup(refusal ? refusal : ""),
							 .take = take};
}

void admission_claims_clear(struct admission_request *rq)
{
	for (size_t i = 0; i < rq->nclaims; i++) {
		free(rq->claims[i].name);
		free(rq->claims[i].holder);
		free(rq->claims[i].refusal);
	}
	free(rq->claims);
	rq->claims = NULL;
	rq->nclaims = 0;
}

static void admission__ticket_free(struct admission_ticket *t)
{
	if (!t)
		return;
	free(t->which);
	free(t->claims);
	free(t);
}

void admission_unreserve(struct admission *a, const struct admission_request *rq,
			 struct admission_ticket *t)
{
	for (size_t i = t ? t->n : 0; i-- > 0;) {
		const struct admission__slot *s = &a->slots[t->which[i]];
		if (s->hook->unreserve)
			s->hook->unreserve(s->state, rq, t->claims[i]);
	}
	admission__ticket_free(t);
}

void admission_settle(struct admission *a, const struct admission_request *rq,
		      struct admission_ticket *t)
{
	for (size_t i = 0; t && i < t->n; i++) {
		const struct admission__slot *s = &a->slots[t->which[i]];
		if (s->hook->settle)
			s->hook->settle(s->state, rq, t->claims[i]);
	}
	admission__ticket_free(t);
}

int admission_reserve(struct admission *a, struct admission_request *rq,
		      struct admission_ticket **t, struct error **err)
{
	struct admission_ticket *tk = xcalloc(1, sizeof(*tk));
	size_t n = a ? a->n : 0;
	tk->which = xcalloc(n ? n : 1, sizeof(*tk->which));
	tk->claims = xcalloc(n ? n : 1, sizeof(*tk->claims));
	for (size_t i = 0; i < n; i++) {
		const struct admission__slot *s = &a->slots[i];
		if (!admission__applies(s->hook, rq->kind))
			continue;
		void *claim = NULL;
		int r = s->hook->reserve ? s->hook->reserve(s->state, rq, &claim, err) : 0;
		if (r < 0) {
			admission_unreserve(a, rq, tk);
			admission_claims_clear(rq);
			*t = NULL;
			return r;
		}
		tk->which[tk->n] = i;
		tk->claims[tk->n] = claim;
		tk->n++;
	}
	*t = tk;
	return 0;
}
