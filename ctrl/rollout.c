/* rollout.c: the Deployment controller's plan, as pure functions over
 * rollout_rs views: Kubernetes' arithmetic of maxSurge and maxUnavailable, the
 * steps of a rolling update, Recreate, proportional scaling, the cleanup of
 * old revisions, and the pod-template-hash. The controller (deployment.c)
 * builds the views, runs the plan and writes what changed.
 *
 * This file must never read or write anything but its arguments. */
#include "rollout.h"
#include "fnv.h"
#include "obj.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arithmetic ------------------------------------------------------ */

int rollout_scaled_value(const struct ynode *v, int total, bool round_up, int *out)
{
	const char *s = ynode_str(v);
	if (!s || !*s)
		return -EINVAL;
	char *end = NULL;
	long long x = strtoll(s, &end, 10);
	if (end == s)
		return -EINVAL;
	if (*end == '\0') {
		*out = (int)x;
		return 0;
	}
	if (strcmp(end, "%") != 0)
		return -EINVAL;
	/* As Go's math.Ceil or math.Floor of value * total / 100, exactly. */
	long long num = x * (long long)total;
	long long q = num / 100, r = num % 100;
	if (r && round_up && num > 0)
		q++;
	else if (r && !round_up && num < 0)
		q--;
	*out = (int)q;
	return 0;
}

void rollout_resolve_fenceposts(const struct ynode *surge, const struct ynode *unavailable,
				int desired, int *max_surge, int *max_unavailable)
{
	int s = 0, u = 0;
	if (!surge || ynode_is_null(surge) || rollout_scaled_value(surge, desired, true, &s) < 0)
		s = 0;
	if (!unavailable || ynode_is_null(unavailable) ||
	    rollout_scaled_value(unavailable, desired, false, &u) < 0)
		u = 0;
	if (s == 0 && u == 0)
		u = 1;
	*max_surge = s;
	*max_unavailable = u;
}

void rollout_params_init(struct rollout_params *p, const struct ynode *d)
{
	memset(p, 0, sizeof(*p));
	p->replicas = (int)obj_int(d, "spec.replicas", 1);
	const char *type = ynode_path_str(d, "spec.strategy.type");
	p->recreate = type && !strcmp(type, "Recreate");
	p->history_limit = obj_int(d, "spec.revisionHistoryLimit", -1);
	bool paused = false;
	p->paused = ynode_bool(ynode_path(d, "spec.paused"), &paused) == 0 && paused;
	p->min_ready = obj_int(d, "spec.minReadySeconds", 0);
	p->progress_deadline = obj_int(d, "spec.progressDeadlineSeconds", -1);
	if (p->progress_deadline == 2147483647LL)
		p->progress_deadline = -1;
	p->generation = obj_int(d, "metadata.generation", 0);
	if (!p->recreate) {
		const struct ynode *ru = ynode_path(d, "spec.strategy.rollingUpdate");
		rollout_resolve_fenceposts(ynode_get(ru, "maxSurge"),
					   ynode_get(ru, "maxUnavailable"), p->replicas,
					   &p->max_surge, &p->max_unavailable);
		if (p->replicas == 0)
			p->max_unavailable = 0;
		else if (p->max_unavailable > p->replicas)
			p->max_unavailable = p->replicas;
	}
}

void rollout_rs_init(struct rollout_rs *r, const struct ynode *rs)
{
	memset(r, 0, sizeof(*r));
	r->obj = rs;
	r->name = obj_name(rs);
	r->created = obj_time_parse(ynode_path_str(rs, "metadata.creationTimestamp"));
	r->revision = obj_annotation(rs, CTRL_REVISION_ANNOTATION)
			  ? strtoll(obj_annotation(rs, CTRL_REVISION_ANNOTATION), NULL, 10)
			  : 0;
	r->replicas = r->orig = (int)obj_int(rs, "spec.replicas", 1);
	r->status_replicas = (int)obj_int(rs, "status.replicas", 0);
	r->ready = (int)obj_int(rs, "status.readyReplicas", 0);
	r->available = (int)obj_int(rs, "status.availableReplicas", 0);
	const char *a = obj_annotation(rs, CTRL_DESIRED_ANNOTATION);
	r->desired = a ? strtoll(a, NULL, 10) : -1;
	a = obj_annotation(rs, CTRL_MAX_ANNOTATION);
	r->max = a ? strtoll(a, NULL, 10) : -1;
	r->generation = obj_int(rs, "metadata.generation", 0);
	r->observed = obj_int(rs, "status.observedGeneration", 0);
	r->set_revision = -1;
}

/* Pods that exist or will: the larger of spec and status. */
static int rollout__pods(const struct rollout_rs *r)
{
	return r->replicas > r->status_replicas ? r->replicas : r->status_replicas;
}

/* Available pods that will stay: the smaller of status and spec. */
static int rollout__available(const struct rollout_rs *r)
{
	return r->available < r->replicas ? r->available : r->replicas;
}

static bool rollout__live(const struct rollout_rs *rs, size_t i)
{
	return !rs[i].remove;
}

bool rollout_scale_rs(const struct rollout_params *p, struct rollout_rs *r, int to)
{
	if (r->replicas == to)
		return false;
	r->replicas = to;
	r->annotate = true;
	r->set_desired = p->replicas;
	r->set_max = (long long)p->replicas + p->max_surge;
	return true;
}

int rollout_new_rs_new_replicas(const struct rollout_params *p, const struct rollout_rs *rs,
				size_t n, size_t newi)
{
	if (p->recreate)
		return p->replicas;
	long long current = 0;
	for (size_t i = 0; i < n; i++)
		if (rollout__live(rs, i))
			current += rollout__pods(&rs[i]);
	long long max_total = (long long)p->replicas + p->max_surge;
	if (current >= max_total)
		return rs[newi].replicas;
	long long up = max_total - current;
	if (up > (long long)p->replicas - rs[newi].replicas)
		up = (long long)p->replicas - rs[newi].replicas;
	return rs[newi].replicas + (int)up;
}

bool rollout_reconcile_new(const struct rollout_params *p, struct rollout_rs *rs, size_t n,
			   size_t newi)
{
	struct rollout_rs *nrs = &rs[newi];
	if (nrs->replicas == p->replicas)
		return false;
	if (nrs->replicas > p->replicas)
		return rollout_scale_rs(p, nrs, p->replicas);
	return rollout_scale_rs(p, nrs, rollout_new_rs_new_replicas(p, rs, n, newi));
}

/* Sorting index arrays of sets. */

static int rollout__by_created(const void *a, const void *b, void *arg)
{
	const struct rollout_rs *rs = arg;
	const struct rollout_rs *x = &rs[*(const size_t *)a], *y = &rs[*(const size_t *)b];
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int rollout__by_size_older(const void *a, const void *b, void *arg)
{
	const struct rollout_rs *rs = arg;
	const struct rollout_rs *x = &rs[*(const size_t *)a], *y = &rs[*(const size_t *)b];
	if (x->replicas != y->replicas)
		return x->replicas > y->replicas ? -1 : 1;
	return rollout__by_created(a, b, arg);
}

static int rollout__by_size_newer(const void *a, const void *b, void *arg)
{
	const struct rollout_rs *rs = arg;
	const struct rollout_rs *x = &rs[*(const size_t *)a], *y = &rs[*(const size_t *)b];
	if (x->replicas != y->replicas)
		return x->replicas > y->replicas ? -1 : 1;
	return -rollout__by_created(a, b, arg);
}

static int rollout__by_revision(const void *a, const void *b, void *arg)
{
	const struct rollout_rs *rs = arg;
	const struct rollout_rs *x = &rs[*(const size_t *)a], *y = &rs[*(const size_t *)b];
	if (x->revision != y->revision)
		return x->revision < y->revision ? -1 : 1;
	return rollout__by_created(a, b, arg);
}

/* The old sets (all but newi and removed ones), sorted by cmp. */
static size_t *rollout__olds(const struct rollout_rs *rs, size_t n, size_t newi, bool active_only,
			     int (*cmp)(const void *, const void *, void *), size_t *count)
{
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (i != newi && rollout__live(rs, i) && (!active_only || rs[i].replicas > 0))
			idx[m++] = i;
	if (cmp)
		qsort_r(idx, m, sizeof(*idx), cmp, (void *)rs);
	*count = m;
	return idx;
}

static int rollout__cleanup_unhealthy(const struct rollout_params *p, struct rollout_rs *rs,
				      size_t n, size_t newi, int max_cleanup)
{
	size_t m;
	cleanup_free size_t *olds = rollout__olds(rs, n, newi, true, rollout__by_created, &m);
	int total = 0;
	for (size_t k = 0; k < m; k++) {
		struct rollout_rs *r = &rs[olds[k]];
		if (total >= max_cleanup)
			break;
		if (r->replicas == 0)
			continue;
		int avail = rollout__available(r);
		if (r->replicas == avail)
			continue;
		int down = max_cleanup - total;
		if (r->replicas - avail < down)
			down = r->replicas - avail;
		rollout_scale_rs(p, r, r->replicas - down);
		total += down;
	}
	return total;
}

static int rollout__scale_down_old_rolling(const struct rollout_params *p, struct rollout_rs *rs,
					   size_t n, size_t newi)
{
	int min_available = p->replicas - p->max_unavailable;
	int available = 0;
	for (size_t i = 0; i < n; i++)
		if (rollout__live(rs, i))
			available += rollout__available(&rs[i]);
	if (available <= min_available)
		return 0;
	size_t m;
	cleanup_free size_t *olds = rollout__olds(rs, n, newi, true, rollout__by_created, &m);
	int total = 0, target = available - min_available;
	for (size_t k = 0; k < m; k++) {
		struct rollout_rs *r = &rs[olds[k]];
		if (total >= target)
			break;
		if (r->replicas == 0)
			continue;
		int down = target - total;
		if (r->replicas < down)
			down = r->replicas;
		rollout_scale_rs(p, r, r->replicas - down);
		total += down;
	}
	return total;
}

bool rollout_reconcile_old(const struct rollout_params *p, struct rollout_rs *rs, size_t n,
			   size_t newi)
{
	long long old_pods = 0, all_pods = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rollout__live(rs, i))
			continue;
		all_pods += rs[i].replicas;
		if (i != newi)
			old_pods += rs[i].replicas;
	}
	if (old_pods == 0)
		return false;
	long long min_available = (long long)p->replicas - p->max_unavailable;
	long long new_unavailable =
	    newi == ROLLOUT_NONE ? 0 : rs[newi].replicas - rollout__available(&rs[newi]);
	long long max_down = all_pods - min_available - new_unavailable;
	if (max_down <= 0)
		return false;
	int cleaned = rollout__cleanup_unhealthy(p, rs, n, newi, (int)max_down);
	int scaled = rollout__scale_down_old_rolling(p, rs, n, newi);
	return cleaned + scaled > 0;
}

bool rollout_scale_down_old_for_recreate(const struct rollout_params *p, struct rollout_rs *rs,
					 size_t n, size_t newi)
{
	bool scaled = false;
	for (size_t i = 0; i < n; i++)
		if (i != newi && rollout__live(rs, i) && rs[i].replicas != 0)
			scaled |= rollout_scale_rs(p, &rs[i], 0);
	return scaled;
}

bool rollout_is_scaling_event(const struct rollout_params *p, const struct rollout_rs *rs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rollout__live(rs, i) && rs[i].replicas > 0 && rs[i].desired >= 0 &&
		    rs[i].desired != p->replicas)
			return true;
	return false;
}

static int rollout__fraction(const struct rollout_params *p, const struct rollout_rs *r,
			     int status_replicas)
{
	if (p->replicas == 0)
		return -r->replicas;
	long long dreplicas = (long long)p->replicas + p->max_surge;
	long long annotated = r->max >= 0 ? r->max : status_replicas;
	if (annotated <= 0)
		return 0;
	/* math.Round(replicas * dreplicas / annotated): half away from zero. */
	long long num = (long long)r->replicas * dreplicas;
	long long mag = num < 0 ? -num : num;
	long long size = (2 * mag + annotated) / (2 * annotated);
	return (int)(num < 0 ? -size : size) - r->replicas;
}

static int rollout__proportion(const struct rollout_params *p, const struct rollout_rs *r,
			       int to_add, int added, int status_replicas)
{
	if (r->replicas == 0 || to_add == 0 || to_add == added)
		return 0;
	int fraction = rollout__fraction(p, r, status_replicas);
	int allowed = to_add - added;
	if (to_add > 0)
		return fraction < allowed ? fraction : allowed;
	return fraction > allowed ? fraction : allowed;
}

void rollout_scale(const struct rollout_params *p, struct rollout_rs *rs, size_t n, size_t newi,
		   int status_replicas)
{
	/* FindActiveOrLatest. */
	size_t m;
	cleanup_free size_t *olds = rollout__olds(rs, n, newi, false, rollout__by_created, &m);
	if (newi == ROLLOUT_NONE && m == 0)
		return;
	size_t nactive = 0, one = ROLLOUT_NONE;
	cleanup_free size_t *active = xcalloc(n + 1, sizeof(*active));
	for (size_t k = 0; k < m; k++)
		if (rs[olds[k]].replicas > 0)
			active[nactive++] = olds[k];
	if (newi != ROLLOUT_NONE && rs[newi].replicas > 0)
		active[nactive++] = newi;
	if (nactive == 0)
		one = newi != ROLLOUT_NONE ? newi : olds[m - 1]; /* the newest old one */
	else if (nactive == 1)
		one = active[0];
	if (one != ROLLOUT_NONE) {
		rollout_scale_rs(p, &rs[one], p->replicas);
		return;
	}
	/* IsSaturated: the new set is whole; the old ones go. */
	if (newi != ROLLOUT_NONE && rs[newi].desired == p->replicas &&
	    rs[newi].replicas == p->replicas && rs[newi].available == p->replicas) {
		for (size_t k = 0; k < m; k++)
			if (rs[olds[k]].replicas > 0)
				rollout_scale_rs(p, &rs[olds[k]], 0);
		return;
	}
	if (p->recreate)
		return;
	long long all = 0;
	for (size_t k = 0; k < nactive; k++)
		all += rs[active[k]].replicas;
	long long allowed = p->replicas > 0 ? (long long)p->replicas + p->max_surge : 0;
	int to_add = (int)(allowed - all);
	if (to_add > 0)
		qsort_r(active, nactive, sizeof(*active), rollout__by_size_newer, rs);
	else if (to_add < 0)
		qsort_r(active, nactive, sizeof(*active), rollout__by_size_older, rs);
	cleanup_free int *sizes = xcalloc(nactive + 1, sizeof(*sizes));
	int added = 0;
	for (size_t k = 0; k < nactive; k++) {
		struct rollout_rs *r = &rs[active[k]];
		if (to_add != 0) {
			int prop = rollout__proportion(p, r, to_add, added, status_replicas);
			sizes[k] = r->replicas + prop;
			added += prop;
		} else {
			sizes[k] = r->replicas;
		}
	}
	for (size_t k = 0; k < nactive; k++) {
		if (k == 0 && to_add != 0) {
			sizes[0] += to_add - added;
			if (sizes[0] < 0)
				sizes[0] = 0;
		}
		rollout_scale_rs(p, &rs[active[k]], sizes[k]);
	}
}

void rollout_cleanup(const struct rollout_params *p, struct rollout_rs *rs, size_t n, size_t newi)
{
	if (p->history_limit < 0)
		return;
	size_t m;
	cleanup_free size_t *olds = rollout__olds(rs, n, newi, false, rollout__by_revision, &m);
	long long diff = (long long)m - p->history_limit;
	for (long long k = 0; k < diff && k < (long long)m; k++) {
		struct rollout_rs *r = &rs[olds[k]];
		if (r->status_replicas != 0 || r->replicas != 0 || r->generation > r->observed ||
		    r->fresh)
			continue;
		r->remove = true;
	}
}

/* ---- template hash ------------------------------------------------------- */

static void rollout__fnv(uint32_t *h, const void *p, size_t len)
{
	*h = fnv1a32_add(*h, p, len);
}

static int rollout__cmp_keys(const void *a, const void *b, void *arg)
{
	const struct ynode *map = arg;
	return strcmp(ynode_map_key(map, *(const size_t *)a)->str,
		      ynode_map_key(map, *(const size_t *)b)->str);
}

/* A canonical form: keys sorted, quoting ignored, nulls alike. */
static void rollout__hash_node(uint32_t *h, const struct ynode *n)
{
	if (!n || ynode_is_null(n)) {
		rollout__fnv(h, "~", 1);
		return;
	}
	if (n->type == YNODE_SCALAR) {
		char head[24];
		int len = snprintf(head, sizeof(head), "s%zu:", n->len);
		rollout__fnv(h, head, (size_t)len);
		rollout__fnv(h, n->str, n->len);
		return;
	}
	if (n->type == YNODE_SEQ) {
		rollout__fnv(h, "[", 1);
		for (size_t i = 0; i < n->n; i++)
			rollout__hash_node(h, ynode_item(n, i));
		rollout__fnv(h, "]", 1);
		return;
	}
	cleanup_free size_t *idx = xcalloc(n->n + 1, sizeof(*idx));
	for (size_t i = 0; i < n->n; i++)
		idx[i] = i;
	qsort_r(idx, n->n, sizeof(*idx), rollout__cmp_keys, (void *)n);
	rollout__fnv(h, "{", 1);
	for (size_t i = 0; i < n->n; i++) {
		rollout__hash_node(h, ynode_map_key(n, idx[i]));
		rollout__hash_node(h, ynode_map_val(n, idx[i]));
	}
	rollout__fnv(h, "}", 1);
}

static struct ynode *rollout__without_hash(const struct ynode *tmpl)
{
	struct ynode *t = ynode_clone(tmpl);
	struct ynode *labels = ynode_path(t, "metadata.labels");
	if (labels && labels->type == YNODE_MAP) {
		ynode_del(labels, CTRL_HASH_LABEL);
		if (labels->n == 0)
			ynode_del(ynode_get(t, "metadata"), "labels");
	}
	return t;
}

char *rollout_template_hash(const struct ynode *tmpl, long long collision)
{
	cleanup_ynode struct ynode *t = rollout__without_hash(tmpl);
	uint32_t h = FNV1A32_BASIS;
	rollout__hash_node(&h, t);
	if (collision >= 0) {
		unsigned char b[8] = {0};
		uint32_t c = (uint32_t)collision;
		for (int i = 0; i < 4; i++)
			b[i] = (unsigned char)(c >> (8 * i));
		rollout__fnv(&h, b, sizeof(b));
	}
	/* SafeEncodeString of the decimal digits. */
	static const char alphabet[] = CTRL_NAME_ALPHABET;
	char digits[16];
	snprintf(digits, sizeof(digits), "%u", h);
	for (char *d = digits; *d; d++)
		*d = alphabet[(unsigned char)*d % (sizeof(alphabet) - 1)];
	return xstrdup(digits);
}

bool rollout_templates_equal(const struct ynode *a, const struct ynode *b)
{
	cleanup_ynode struct ynode *x = rollout__without_hash(a);
	cleanup_ynode struct ynode *y = rollout__without_hash(b);
	return ynode_equal(x, y);
}
