/* hpa.c: the HorizontalPodAutoscaler controller; see hpa.h. The first
 * half is Kubernetes' arithmetic (replica_calculator.go and the
 * normalization of horizontal.go), pure; the second half reads the tree
 * and writes the target's scale and the HPA's status. */
#include "hpa.h"
#include "autoscale.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "keymap.h"
#include "log.h"
#include "loop.h"
#include "obj.h"
#include "quantity.h"
#include "selector.h"
#include "timefmt.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the replica calculator ---------------------------------------------- */

/* math.h's ceil and fabs, without libm for two functions. */
static long long hpa__ceil(double x)
{
	long long i = (long long)x;
	return (double)i < x ? i + 1 : i;
}

static double hpa__abs(double x)
{
	return x < 0 ? -x : x;
}

enum hpa__group { HPA__READY, HPA__UNREADY, HPA__MISSING, HPA__IGNORED };

static bool hpa__phase_is(const struct hpa_pod *p, const char *phase)
{
	const char *ph = p->phase && *p->phase ? p->phase : "Pending";
	return !strcmp(ph, phase);
}

/* Kubernetes' groupPods for one pod. */
static enum hpa__group hpa__group(const struct hpa_calc *c, const struct hpa_pod *p, bool cpu)
{
	if (p->deleting || hpa__phase_is(p, "Failed"))
		return HPA__IGNORED;
	if (hpa__phase_is(p, "Pending"))
		return HPA__UNREADY;
	if (!p->has_metric)
		return HPA__MISSING;
	if (!cpu)
		return HPA__READY;
	if (!p->has_ready || p->start < 0)
		return HPA__UNREADY;
	bool unready;
	if (p->start + c->cpu_init_s > c->now)
		/* within the initialization period: ready, and the sample
		 * taken once it was */
		unready = !p->ready || p->metric_time < p->ready_since + p->metric_window;
	else
		/* after it: unready only if it never was ready since start */
		unready = !p->ready && p->start + c->readiness_delay_s > p->ready_since;
	return unready ? HPA__UNREADY : HPA__READY;
}

/* The metric of each pod the calculator counts: its own, a fill-in, or
 * none (excluded). */
struct hpa__sample {
	bool in;
	int64_t value;
};

static int hpa__utilization(const struct hpa_pod *pods, const struct hpa__sample *s, size_t n,
			    long long target, double *ratio, long long *util, int64_t *avg,
			    size_t *count, struct error **err)
{
	int64_t total = 0, requests = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].in)
			continue;
		total += s[i].value;
		requests += pods[i].request;
		k++;
	}
	if (requests == 0)
		return error_set(err, EINVAL, "no metrics returned matched known pods");
	*util = (long long)(total * 100 / requests);
	*ratio = (double)*util / (double)target;
	if (avg)
		*avg = k ? total / (int64_t)k : 0;
	if (count)
		*count = k;
	return 0;
}

/* The count the ready pods' ratio proposes: none within the tolerance. */
static int hpa__proposed(const struct hpa_calc *c, int current, double ratio, size_t ready)
{
	if (hpa__abs(1.0 - ratio) <= c->tolerance)
		return current;
	return (int)hpa__ceil(ratio * (double)ready);
}

/* The count once missing and unready pods are filled in (nratio over
 * count pods): none within the tolerance, nor when the fill-ins turn the
 * ratio (or the count) the other way. */
static int hpa__refilled(const struct hpa_calc *c, int current, double ratio, double nratio,
			 size_t count)
{
	if (hpa__abs(1.0 - nratio) <= c->tolerance || (ratio < 1.0 && nratio > 1.0) ||
	    (ratio > 1.0 && nratio < 1.0))
		return current;
	int next = (int)hpa__ceil(nratio * (double)count);
	if ((nratio < 1.0 && next > current) || (nratio > 1.0 && next < current))
		return current;
	return next;
}

int hpa_resource_replicas(const struct hpa_calc *c, int current, const struct hpa_pod *pods,
			  size_t n, const char *resource, bool cpu, long long target_util,
			  int *replicas, long long *util, int64_t *avg, struct error **err)
{
	if (n == 0)
		return error_set(err, ENOENT,
				 "no pods returned by selector while calculating replica count");
	for (size_t i = 0; i < n; i++)
		if (!pods[i].has_request)
			return error_set(
			    err, EINVAL, "missing request for %s in container %s of Pod %s",
			    resource, pods[i].missing_request ? pods[i].missing_request : "",
			    pods[i].name);
	cleanup_free struct hpa__sample *s = xcalloc(n, sizeof(*s));
	cleanup_free enum hpa__group *g = xcalloc(n, sizeof(*g));
	size_t ready = 0, unready = 0, missing = 0;
	for (size_t i = 0; i < n; i++) {
		g[i] = hpa__group(c, &pods[i], cpu);
		ready += g[i] == HPA__READY;
		unready += g[i] == HPA__UNREADY;
		missing += g[i] == HPA__MISSING;
		s[i] = (struct hpa__sample){g[i] == HPA__READY, pods[i].value};
	}
	if (!ready)
		return error_set(
		    err, ENOENT,
		    "did not receive metrics for targeted pods (pods might be unready)");
	double ratio = 0;
	if (hpa__utilization(pods, s, n, target_util, &ratio, util, avg, NULL, err) < 0)
		return -EINVAL;
	bool up_with_unready = unready > 0 && ratio > 1.0;
	if (!up_with_unready && !missing) {
		*replicas = hpa__proposed(c, current, ratio, ready);
		return 0;
	}
	if (missing) {
		long long fallback = target_util > 100 ? target_util : 100;
		for (size_t i = 0; i < n; i++) {
			if (g[i] != HPA__MISSING)
				continue;
			if (ratio < 1.0) /* scale-down: as if at the request (or target) */
				s[i] = (struct hpa__sample){true, pods[i].request * fallback / 100};
			else if (ratio > 1.0) /* scale-up: as if idle */
				s[i] = (struct hpa__sample){true, 0};
		}
	}
	if (up_with_unready)
		for (size_t i = 0; i < n; i++)
			if (g[i] == HPA__UNREADY)
				s[i] = (struct hpa__sample){true, 0};
	double nratio = 0;
	long long nutil;
	size_t count = 0;
	if (hpa__utilization(pods, s, n, target_util, &nratio, &nutil, NULL, &count, err) < 0)
		return -EINVAL;
	*replicas = hpa__refilled(c, current, ratio, nratio, count);
	return 0;
}

int hpa_plain_replicas(const struct hpa_calc *c, int current, const struct hpa_pod *pods, size_t n,
		       bool cpu, int64_t target_avg, int *replicas, int64_t *avg,
		       struct error **err)
{
	if (n == 0)
		return error_set(err, ENOENT,
				 "no pods returned by selector while calculating replica count");
	if (target_avg <= 0)
		return error_set(err, EINVAL, "the target value must be positive");
	cleanup_free enum hpa__group *g = xcalloc(n, sizeof(*g));
	size_t ready = 0, unready = 0, missing = 0;
	int64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		g[i] = hpa__group(c, &pods[i], cpu);
		ready += g[i] == HPA__READY;
		unready += g[i] == HPA__UNREADY;
		missing += g[i] == HPA__MISSING;
		if (g[i] == HPA__READY)
			total += pods[i].value;
	}
	if (!ready)
		return error_set(
		    err, ENOENT,
		    "did not receive metrics for targeted pods (pods might be unready)");
	*avg = total / (int64_t)ready;
	double ratio = (double)*avg / (double)target_avg;
	bool up_with_unready = unready > 0 && ratio > 1.0;
	if (!up_with_unready && !missing) {
		*replicas = hpa__proposed(c, current, ratio, ready);
		return 0;
	}
	size_t count = ready;
	if (missing) {
		/* scale-down: missing pods at the target; else idle */
		if (ratio < 1.0)
			total += target_avg * (int64_t)missing;
		count += missing;
	}
	if (up_with_unready)
		count += unready; /* at 0 */
	double nratio = (double)(total / (int64_t)count) / (double)target_avg;
	*replicas = hpa__refilled(c, current, ratio, nratio, count);
	return 0;
}

int hpa_object_replicas(const struct hpa_calc *c, int current, int ready_pods, int64_t value,
			int64_t target)
{
	double ratio = (double)value / (double)target;
	if (current == 0)
		return (int)hpa__ceil(ratio);
	if (hpa__abs(1.0 - ratio) <= c->tolerance)
		return current;
	return (int)hpa__ceil(ratio * (double)ready_pods);
}

int hpa_object_avg_replicas(const struct hpa_calc *c, int current, int64_t value,
			    int64_t target_avg, int64_t *usage)
{
	int replicas = current;
	double ratio = (double)value / ((double)target_avg * (double)current);
	if (hpa__abs(1.0 - ratio) > c->tolerance)
		replicas = (int)hpa__ceil((double)value / (double)target_avg);
	*usage = current ? (int64_t)hpa__ceil((double)value / (double)current) : value;
	return replicas;
}

/* ---- behavior ------------------------------------------------------------- */

static void hpa__rules_parse(const struct ynode *r, bool up, int64_t down_window_s,
			     struct hpa_rules *out)
{
	memset(out, 0, sizeof(*out));
	out->select = HPA_SELECT_MAX;
	out->window_s = up ? 0 : down_window_s;
	const char *sel = ynode_str(ynode_get(r, "selectPolicy"));
	if (sel && !strcmp(sel, "Min"))
		out->select = HPA_SELECT_MIN;
	else if (sel && !strcmp(sel, "Disabled"))
		out->select = HPA_SELECT_DISABLED;
	long long w;
	if (ynode_int(ynode_get(r, "stabilizationWindowSeconds"), &w) == 0)
		out->window_s = w;
	const struct ynode *ps = ynode_get(r, "policies");
	for (size_t i = 0; ps && ps->type == YNODE_SEQ && i < ps->n; i++) {
		if (out->npolicies == HPA_MAX_POLICIES)
			break;
		const struct ynode *p = ynode_item(ps, i);
		const char *type = ynode_str(ynode_get(p, "type"));
		long long v = 0, period = 0;
		ynode_int(ynode_get(p, "value"), &v);
		ynode_int(ynode_get(p, "periodSeconds"), &period);
		out->policies[out->npolicies++] = (struct hpa_policy){
		    type && !strcmp(type, "Pods") ? HPA_POLICY_PODS : HPA_POLICY_PERCENT, (int)v,
		    (int)period};
	}
	if (out->npolicies)
		return;
	/* Kubernetes' GenerateHPAScaleUpRules / GenerateHPAScaleDownRules */
	if (up) {
		out->policies[0] = (struct hpa_policy){HPA_POLICY_PODS, 4, 15};
		out->policies[1] = (struct hpa_policy){HPA_POLICY_PERCENT, 100, 15};
		out->npolicies = 2;
	} else {
		out->policies[0] = (struct hpa_policy){HPA_POLICY_PERCENT, 100, 15};
		out->npolicies = 1;
	}
}

void hpa_behavior_parse(const struct ynode *behavior, int64_t down_window_s,
			struct hpa_behavior *out)
{
	hpa__rules_parse(ynode_get(behavior, "scaleUp"), true, down_window_s, &out->up);
	hpa__rules_parse(ynode_get(behavior, "scaleDown"), false, down_window_s, &out->down);
}

/* Records a recommendation, over the oldest one outside every window
 * (or the oldest of all when the memory is full). */
static void hpa__remember(struct hpa_memory *m, int64_t now, int desired, bool found_old,
			  size_t old)
{
	if (!found_old && m->nrecs == HPA_MAX_RECOMMENDATIONS) {
		found_old = true;
		old = 0;
		for (size_t i = 1; i < m->nrecs; i++)
			if (m->recs[i].t < m->recs[old].t)
				old = i;
	}
	size_t at = found_old ? old : m->nrecs++;
	m->recs[at].t = now;
	m->recs[at].replicas = desired;
}

static int hpa__change_in_period(const struct hpa_memory *m, bool up, int64_t now, int period_s)
{
	int sum = 0;
	size_t n = up ? m->nup : m->ndown;
	for (size_t i = 0; i < n; i++) {
		int64_t t = up ? m->up[i].t : m->down[i].t;
		if (t > now - period_s)
			sum += up ? m->up[i].change : m->down[i].change;
	}
	return sum;
}

static int hpa__up_limit(const struct hpa_memory *m, const struct hpa_rules *r, int64_t now,
			 int current)
{
	if (r->select == HPA_SELECT_DISABLED)
		return current;
	bool min = r->select == HPA_SELECT_MIN;
	long long result = min ? INT_MAX : INT_MIN;
	for (size_t i = 0; i < r->npolicies; i++) {
		const struct hpa_policy *p = &r->policies[i];
		int start = current - hpa__change_in_period(m, true, now, p->period_s);
		long long proposed = p->type == HPA_POLICY_PODS
					 ? (long long)start + p->value
					 : hpa__ceil((double)start * (1 + p->value / 100.0));
		result = min ? (proposed < result ? proposed : result)
			     : (proposed > result ? proposed : result);
	}
	return (int)result;
}

static int hpa__down_limit(const struct hpa_memory *m, const struct hpa_rules *r, int64_t now,
			   int current)
{
	if (r->select == HPA_SELECT_DISABLED)
		return current;
	bool min = r->select == HPA_SELECT_MIN;
	long long result = min ? INT_MIN : INT_MAX;
	for (size_t i = 0; i < r->npolicies; i++) {
		const struct hpa_policy *p = &r->policies[i];
		int start = current + hpa__change_in_period(m, false, now, p->period_s);
		long long proposed = p->type == HPA_POLICY_PODS
					 ? (long long)start - p->value
					 : (long long)((double)start * (1 - p->value / 100.0));
		result = min ? (proposed > result ? proposed : result)
			     : (proposed < result ? proposed : result);
	}
	return (int)result;
}

static void hpa__limited(struct hpa_verdict *v, bool limited, const char *reason,
			 const char *message)
{
	v->limited = limited;
	v->limited_reason = reason;
	v->limited_message = message;
}

#define HPA__WITHIN    "the desired count is within the acceptable range"
#define HPA__TOO_MANY  "the desired replica count is more than the maximum replica count"
#define HPA__TOO_FEW   "the desired replica count is less than the minimum replica count"
#define HPA__UP_RATE   "the desired replica count is increasing faster than the maximum scale rate"
#define HPA__DOWN_RATE "the desired replica count is decreasing faster than the maximum scale rate"
#define HPA__READY_MSG "recommended size matches current size"
#define HPA__DOWN_STAB                                                                             \
	"recent recommendations were higher than current one, applying the highest recent "        \
	"recommendation"
#define HPA__UP_STAB                                                                               \
	"recent recommendations were lower than current one, applying the lowest recent "          \
	"recommendation"

/* normalizeDesiredReplicas: the highest recommendation of the window,
 * then min, max and a scale-up of at most max(2 x current, 4). */
static int hpa__normalize_plain(struct hpa_memory *m, int64_t window_s, int64_t now, int current,
				int desired, int min, int max, struct hpa_verdict *v)
{
	int stabilized = desired;
	bool found_old = false;
	size_t old = 0;
	for (size_t i = 0; i < m->nrecs; i++) {
		if (m->recs[i].t < now - window_s) {
			found_old = true;
			old = i;
		} else if (m->recs[i].replicas > stabilized) {
			stabilized = m->recs[i].replicas;
		}
	}
	hpa__remember(m, now, desired, found_old, old);
	if (stabilized != desired) {
		v->able_reason = "ScaleDownStabilized";
		v->able_message = HPA__DOWN_STAB;
	} else {
		v->able_reason = "ReadyForNewScale";
		v->able_message = HPA__READY_MSG;
	}
	int up_limit = current * 2 > 4 ? current * 2 : 4;
	int allowed_max = max;
	const char *reason = "TooManyReplicas", *msg = HPA__TOO_MANY;
	if (max > up_limit) {
		allowed_max = up_limit;
		reason = "ScaleUpLimit";
		msg = HPA__UP_RATE;
	}
	int out = stabilized;
	if (stabilized < min) {
		out = min;
		reason = "TooFewReplicas";
		msg = HPA__TOO_FEW;
	} else if (stabilized > allowed_max) {
		out = allowed_max;
	} else {
		reason = "DesiredWithinRange";
		msg = HPA__WITHIN;
	}
	hpa__limited(v, out != stabilized, reason, msg);
	return out;
}

static int hpa__normalize_behavior(struct hpa_memory *m, const struct hpa_behavior *b, int64_t now,
				   int current, int desired, int min, int max,
				   struct hpa_verdict *v)
{
	int up_rec = desired, down_rec = desired;
	int64_t up_cut = now - b->up.window_s, down_cut = now - b->down.window_s;
	bool found_old = false;
	size_t old = 0;
	for (size_t i = 0; i < m->nrecs; i++) {
		int64_t t = m->recs[i].t;
		int r = m->recs[i].replicas;
		if (t > up_cut && r < up_rec)
			up_rec = r;
		if (t > down_cut && r > down_rec)
			down_rec = r;
		if (t < up_cut && t < down_cut) {
			found_old = true;
			old = i;
		}
	}
	int stabilized = current;
	if (stabilized < up_rec)
		stabilized = up_rec;
	if (stabilized > down_rec)
		stabilized = down_rec;
	hpa__remember(m, now, desired, found_old, old);
	if (stabilized != desired) {
		bool up = desired >= current;
		v->able_reason = up ? "ScaleUpStabilized" : "ScaleDownStabilized";
		v->able_message = up ? HPA__UP_STAB : HPA__DOWN_STAB;
	} else {
		v->able_reason = "ReadyForNewScale";
		v->able_message = HPA__READY_MSG;
	}
	int out = stabilized;
	const char *reason = "DesiredWithinRange", *msg = HPA__WITHIN;
	if (stabilized > current) {
		int limit = hpa__up_limit(m, &b->up, now, current);
		if (limit < current)
			limit = current;
		int allowed = max;
		const char *r = "TooManyReplicas", *mm = HPA__TOO_MANY;
		if (allowed > limit) {
			allowed = limit;
			r = "ScaleUpLimit";
			mm = HPA__UP_RATE;
		}
		if (stabilized > allowed) {
			out = allowed;
			reason = r;
			msg = mm;
		}
	} else if (stabilized < current) {
		int limit = hpa__down_limit(m, &b->down, now, current);
		if (limit > current)
			limit = current;
		int allowed = min;
		const char *r = "TooFewReplicas", *mm = HPA__TOO_FEW;
		if (allowed < limit) {
			allowed = limit;
			r = "ScaleDownLimit";
			mm = HPA__DOWN_RATE;
		}
		if (stabilized < allowed) {
			out = allowed;
			reason = r;
			msg = mm;
		}
	}
	hpa__limited(v, out != stabilized, reason, msg);
	return out;
}

int hpa_normalize(struct hpa_memory *m, const struct hpa_behavior *b, int64_t down_window_s,
		  int64_t now, int current, int desired, int min, int max, struct hpa_verdict *v)
{
	if (!b)
		return hpa__normalize_plain(m, down_window_s, now, current, desired, min, max, v);
	return hpa__normalize_behavior(m, b, now, current, desired, min, max, v);
}

/* The longest period of rules' policies: events older are forgotten. */
static int hpa__longest(const struct hpa_rules *r)
{
	int p = 0;
	for (size_t i = 0; i < r->npolicies; i++)
		if (r->policies[i].period_s > p)
			p = r->policies[i].period_s;
	return p;
}

void hpa_record_scale(struct hpa_memory *m, const struct hpa_behavior *b, int64_t now, int prev,
		      int next)
{
	if (!b || prev == next)
		return;
	bool up = next > prev;
	int keep = hpa__longest(up ? &b->up : &b->down);
	size_t *n = up ? &m->nup : &m->ndown;
	/* forget what no policy's period reaches any more */
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		int64_t t = up ? m->up[i].t : m->down[i].t;
		if (t <= now - keep)
			continue;
		if (up)
			m->up[k++] = m->up[i];
		else
			m->down[k++] = m->down[i];
	}
	*n = k;
	if (*n == HPA_MAX_SCALE_EVENTS) {
		/* full: drop the oldest */
		if (up)
			memmove(&m->up[0], &m->up[1], (*n - 1) * sizeof(m->up[0]));
		else
			memmove(&m->down[0], &m->down[1], (*n - 1) * sizeof(m->down[0]));
		(*n)--;
	}
	if (up) {
		m->up[*n].t = now;
		m->up[*n].change = next - prev;
	} else {
		m->down[*n].t = now;
		m->down[*n].change = prev - next;
	}
	(*n)++;
}

/* ---- the controller -------------------------------------------------------- */

#define HPA__COMPONENT "horizontal-pod-autoscaler"

/* What the controller keeps of one HPA between syncs. */
struct hpa__state {
	struct hpa_memory mem;
	char *target_path; /* the target it last scaled, for the annotation */
	bool busy;	   /* a write in flight */
};

struct hpac {
	struct ctrl *c;
	struct informer *hpas, *pods, *podmetrics, *metrics;
	struct informer *targets[4];
	struct workqueue *q;
	struct keymap *state; /* HPA key -> struct hpa__state */
	uint64_t sync_ms;
	int64_t down_window_s;
	double tolerance;
};

/* The scalable kinds, by the kind a scaleTargetRef names. */
static const struct {
	const char *kind, *plural;
	bool map_selector; /* spec.selector is a map (RC) */
} hpa__kinds[4] = {
    {"Deployment", "deployments", false},
    {"ReplicaSet", "replicasets", false},
    {"ReplicationController", "replicationcontrollers", true},
    {"StatefulSet", "statefulsets", false},
};

static void hpa__state_free(void *p)
{
	struct hpa__state *s = p;
	if (s) {
		free(s->target_path);
		free(s);
	}
}

static struct hpa__state *hpa__state(struct hpac *h, const char *key)
{
	struct hpa__state *s = keymap_get(h->state, key);
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		keymap_set(h->state, key, s);
	}
	return s;
}

static int64_t hpa__milli(const struct ynode *n)
{
	int64_t v = 0;
	const char *s = ynode_str(n);
	if (!s || quantity_parse(s, &v, NULL) < 0)
		return -1;
	return v;
}

/* "15s", "1m0s", "500ms": whole seconds; 0 when it does not read. */
static int64_t hpa__window_s(const char *s)
{
	if (!s)
		return 0;
	double total = 0;
	while (*s) {
		char *end;
		double v = strtod(s, &end);
		if (end == s)
			return 0;
		if (!strncmp(end, "ms", 2)) {
			total += v / 1000;
			end += 2;
		} else if (*end == 'h' || *end == 'm' || *end == 's') {
			total += v * (*end == 'h' ? 3600 : *end == 'm' ? 60 : 1);
			end++;
		} else {
			return 0;
		}
		s = end;
	}
	return (int64_t)total;
}

/* One metric of the HPA, as v2 names it (a v1 HPA has one). */
struct hpa__metric {
	const char *type;	       /* "Resource", ... */
	const struct ynode *src;       /* its resource / pods / object map */
	const char *resource;	       /* Resource, ContainerResource */
	const char *container;	       /* ContainerResource */
	const char *target_type;       /* Utilization, AverageValue, Value */
	long long target_util;	       /* Utilization */
	int64_t target_value;	       /* AverageValue / Value, milli */
	const char *metric_name;       /* Pods, Object */
	const struct ynode *described; /* Object */
};

static void hpa__metric_read(const struct ynode *m, struct hpa__metric *out)
{
	memset(out, 0, sizeof(*out));
	out->type = ynode_str(ynode_get(m, "type"));
	static const struct {
		const char *type, *field;
	} fields[] = {{"Resource", "resource"},
		      {"ContainerResource", "containerResource"},
		      {"Pods", "pods"},
		      {"Object", "object"},
		      {"External", "external"}};
	for (size_t i = 0; out->type && i < ARRAY_SIZE(fields); i++)
		if (!strcmp(out->type, fields[i].type))
			out->src = ynode_get(m, fields[i].field);
	const struct ynode *t = ynode_get(out->src, "target");
	out->resource = ynode_str(ynode_get(out->src, "name"));
	out->container = ynode_str(ynode_get(out->src, "container"));
	out->metric_name = ynode_path_str(out->src, "metric.name");
	out->described = ynode_get(out->src, "describedObject");
	out->target_type = ynode_str(ynode_get(t, "type"));
	out->target_util = obj_int(t, "averageUtilization", 0);
	const char *vk =
	    out->target_type && !strcmp(out->target_type, "Value") ? "value" : "averageValue";
	out->target_value = hpa__milli(ynode_get(t, vk));
}

/* What one sync reads and decides. */
struct hpa__sync {
	struct hpac *h;
	const char *key;
	const struct ynode *hpa;
	const char *ns;
	bool v1;
	struct selector *sel;
	const struct ynode **pods;
	size_t npods, cap;
	struct keymap *values; /* "Kind/name/metric" -> MetricValue */
};

static int hpa__visit_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct hpa__sync *s = data;
	if (!selector_matches(s->sel, ynode_path(pod, "metadata.labels")))
		return 0;
	if (s->npods == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->pods = xrealloc(s->pods, s->cap * sizeof(*s->pods));
	}
	s->pods[s->npods++] = pod;
	return 0;
}

static int hpa__visit_value(void *data, const char *key, const struct ynode *mv)
{
	(void)key;
	struct hpa__sync *s = data;
	const char *kind = ynode_path_str(mv, "describedObject.kind");
	const char *name = ynode_path_str(mv, "describedObject.name");
	const char *metric = ynode_path_str(mv, "metric.name");
	if (!metric)
		metric = ynode_str(ynode_get(mv, "metricName")); /* v1beta1 */
	if (!kind || !name || !metric)
		return 0;
	cleanup_free char *k = xasprintf("%s/%s/%s", kind, name, metric);
	keymap_set(s->values, k, (void *)mv);
	return 0;
}

static const struct ynode *hpa__value(struct hpa__sync *s, const char *kind, const char *name,
				      const char *metric)
{
	if (!s->values) {
		s->values = keymap_new(NULL);
		informer_foreach(s->h->metrics, s->ns, hpa__visit_value, s);
	}
	cleanup_free char *k = xasprintf("%s/%s/%s", kind, name, metric);
	return keymap_get(s->values, k);
}

/* The calculator's view of pod i for metric m (resource or custom). */
static void hpa__pod_view(struct hpa__sync *s, const struct ynode *pod, const struct hpa__metric *m,
			  struct hpa_pod *p)
{
	memset(p, 0, sizeof(*p));
	p->name = obj_name(pod);
	p->deleting = object_is_deleting(pod);
	p->phase = ynode_path_str(pod, "status.phase");
	p->has_ready = condition_find(ynode_path(pod, "status.conditions"), "Ready") != NULL;
	p->ready_since = -1;
	p->ready = pod_is_ready(pod, &p->ready_since);
	p->start = obj_time_parse(ynode_path_str(pod, "status.startTime"));
	bool resource = !strcmp(m->type, "Resource") || !strcmp(m->type, "ContainerResource");
	if (!resource) {
		const struct ynode *mv = hpa__value(s, "Pod", p->name, m->metric_name);
		int64_t v = mv ? hpa__milli(ynode_get(mv, "value")) : -1;
		if (v >= 0) {
			p->has_metric = true;
			p->value = v;
		}
		return;
	}
	/* requests */
	p->has_request = true;
	const struct ynode *cs = ynode_path(pod, "spec.containers");
	for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
		const struct ynode *ct = ynode_item(cs, i);
		const char *cname = ynode_str(ynode_get(ct, "name"));
		if (m->container && (!cname || strcmp(cname, m->container)))
			continue;
		const struct ynode *reqs = ynode_path(ct, "resources.requests");
		int64_t r = hpa__milli(ynode_get(reqs, m->resource));
		if (r < 0) {
			p->has_request = false;
			p->missing_request = cname;
			break;
		}
		p->request += r;
	}
	/* usage */
	cleanup_free char *mkey = obj_key(s->ns, p->name);
	const struct ynode *pm = informer_get(s->h->podmetrics, mkey);
	const struct ynode *mcs = ynode_get(pm, "containers");
	if (!pm || !mcs || mcs->type != YNODE_SEQ)
		return;
	int64_t sum = 0;
	bool found = !m->container;
	for (size_t i = 0; i < mcs->n; i++) {
		const struct ynode *mc = ynode_item(mcs, i);
		const char *cname = ynode_str(ynode_get(mc, "name"));
		if (m->container && (!cname || strcmp(cname, m->container)))
			continue;
		found = true;
		int64_t v = hpa__milli(ynode_path(mc, "usage")
					   ? ynode_get(ynode_get(mc, "usage"), m->resource)
					   : NULL);
		if (v > 0)
			sum += v;
	}
	if (!found)
		return;
	p->has_metric = true;
	p->value = sum;
	p->metric_time = obj_time_parse(ynode_str(ynode_get(pm, "timestamp")));
	p->metric_window = hpa__window_s(ynode_str(ynode_get(pm, "window")));
}

/* One metric's proposal. */
struct hpa__proposal {
	int replicas;
	char *name;	      /* "cpu resource utilization (percentage of request)" */
	struct ynode *status; /* its currentMetrics entry */
	const char *fail_reason;
	char *fail_msg;
	long long util; /* Resource cpu Utilization: for v1's status */
	bool has_util;
};

static struct ynode *hpa__current(const char *key, int64_t value, long long util, bool has_util)
{
	struct ynode *cur = ynode_new_map();
	char buf[64];
	if (has_util)
		ynode_set(cur, "averageUtilization", ynode_new_int(util));
	quantity_format(value, buf, sizeof(buf));
	ynode_set(cur, key, ynode_new_str(buf));
	return cur;
}

static void hpa__propose(struct hpa__sync *s, const struct hpa__metric *m, int current,
			 struct hpa__proposal *out)
{
	struct hpac *h = s->h;
	memset(out, 0, sizeof(*out));
	out->replicas = -1;
	struct hpa_calc calc = {h->tolerance, HPA_CPU_INIT_PERIOD_S, HPA_READINESS_DELAY_S,
				obj_now()};
	cleanup_error struct error *err = NULL;
	const char *type = m->type ? m->type : "";
	bool container = !strcmp(type, "ContainerResource");
	if (!strcmp(type, "Resource") || container) {
		out->fail_reason =
		    container ? "FailedGetContainerResourceMetric" : "FailedGetResourceMetric";
		if (!m->resource || (container && !m->container)) {
			error_set(&err, EINVAL, "no resource named");
			goto fail;
		}
		cleanup_free struct hpa_pod *pods = xcalloc(s->npods + 1, sizeof(*pods));
		for (size_t i = 0; i < s->npods; i++)
			hpa__pod_view(s, s->pods[i], m, &pods[i]);
		bool cpu = !strcmp(m->resource, "cpu");
		int64_t avg = 0;
		struct ynode *st = ynode_new_map();
		ynode_set(st, "name", ynode_new_str(m->resource));
		if (container)
			ynode_set(st, "container", ynode_new_str(m->container));
		bool util = m->target_type && !strcmp(m->target_type, "Utilization");
		int r;
		if (util) {
			r = hpa_resource_replicas(&calc, current, pods, s->npods, m->resource, cpu,
						  m->target_util, &out->replicas, &out->util, &avg,
						  &err);
			out->has_util = r == 0;
			out->name =
			    xasprintf(container ? "%s container resource utilization "
						  "(percentage of request)"
						: "%s resource utilization (percentage of request)",
				      m->resource);
		} else {
			r = hpa_plain_replicas(&calc, current, pods, s->npods, cpu, m->target_value,
					       &out->replicas, &avg, &err);
			out->name = xasprintf(container ? "%s container resource" : "%s resource",
					      m->resource);
		}
		if (r < 0) {
			ynode_free(st);
			goto fail;
		}
		ynode_set(st, "current", hpa__current("averageValue", avg, out->util, util));
		out->status = ynode_new_map();
		ynode_set(out->status, "type", ynode_new_str(type));
		ynode_set(out->status, container ? "containerResource" : "resource", st);
		return;
	}
	if (!strcmp(type, "Pods")) {
		out->fail_reason = "FailedGetPodsMetric";
		cleanup_free struct hpa_pod *pods = xcalloc(s->npods + 1, sizeof(*pods));
		for (size_t i = 0; i < s->npods; i++)
			hpa__pod_view(s, s->pods[i], m, &pods[i]);
		int64_t avg = 0;
		if (!m->metric_name) {
			error_set(&err, EINVAL, "no metric named");
			goto fail;
		}
		if (hpa_plain_replicas(&calc, current, pods, s->npods, false, m->target_value,
				       &out->replicas, &avg, &err) < 0) {
			error_prefix(&err, "unable to get metric %s", m->metric_name);
			goto fail;
		}
		out->name = xasprintf("pods metric %s", m->metric_name);
		struct ynode *st = ynode_new_map();
		struct ynode *mm = ynode_new_map();
		ynode_set(mm, "name", ynode_new_str(m->metric_name));
		ynode_set(st, "metric", mm);
		ynode_set(st, "current", hpa__current("averageValue", avg, 0, false));
		out->status = ynode_new_map();
		ynode_set(out->status, "type", ynode_new_str("Pods"));
		ynode_set(out->status, "pods", st);
		return;
	}
	if (!strcmp(type, "Object")) {
		out->fail_reason = "FailedGetObjectMetric";
		const char *kind = ynode_str(ynode_get(m->described, "kind"));
		const char *name = ynode_str(ynode_get(m->described, "name"));
		const struct ynode *mv = kind && name && m->metric_name
					     ? hpa__value(s, kind, name, m->metric_name)
					     : NULL;
		int64_t v = mv ? hpa__milli(ynode_get(mv, "value")) : -1;
		if (v < 0) {
			error_set(&err, ENOENT,
				  "unable to get metric %s: %s on %s %s/%s: no MetricValue in "
				  "namespaces/%s/metrics/",
				  m->metric_name ? m->metric_name : "", kind ? kind : "",
				  kind ? kind : "", s->ns, name ? name : "", s->ns);
			goto fail;
		}
		if (m->target_value <= 0) {
			error_set(&err, EINVAL, "the target value must be positive");
			goto fail;
		}
		struct ynode *cur;
		if (m->target_type && !strcmp(m->target_type, "AverageValue")) {
			int64_t usage = 0;
			out->replicas =
			    hpa_object_avg_replicas(&calc, current, v, m->target_value, &usage);
			cur = hpa__current("averageValue", usage, 0, false);
		} else {
			int ready = 0;
			for (size_t i = 0; i < s->npods; i++) {
				const char *ph = ynode_path_str(s->pods[i], "status.phase");
				if (ph && !strcmp(ph, "Running") && pod_is_ready(s->pods[i], NULL))
					ready++;
			}
			if (!s->npods) {
				error_set(&err, ENOENT,
					  "no pods returned by selector while "
					  "calculating replica count");
				goto fail;
			}
			out->replicas =
			    hpa_object_replicas(&calc, current, ready, v, m->target_value);
			cur = hpa__current("value", v, 0, false);
		}
		out->name = xasprintf("%s metric %s", kind, m->metric_name);
		struct ynode *st = ynode_new_map();
		ynode_set(st, "describedObject", ynode_clone(m->described));
		struct ynode *mm = ynode_new_map();
		ynode_set(mm, "name", ynode_new_str(m->metric_name));
		ynode_set(st, "metric", mm);
		ynode_set(st, "current", cur);
		out->status = ynode_new_map();
		ynode_set(out->status, "type", ynode_new_str("Object"));
		ynode_set(out->status, "object", st);
		return;
	}
	out->fail_reason = "InvalidMetricSourceType";
	error_set(&err, EINVAL, "unknown metric source type \"%s\"%s", type,
		  !strcmp(type, "External") ? " (corral has no external metrics)" : "");
fail:
	out->replicas = -1;
	out->fail_msg = xstrdup(err ? err->msg : "unknown error");
}

static void hpa__proposal_clear(struct hpa__proposal *p)
{
	free(p->name);
	free(p->fail_msg);
	ynode_free(p->status);
}

/* The conditions of the status being built. */
struct hpa__conds {
	struct condition able, active, limited;
	char able_msg[256], active_msg[512];
	bool have_limited;
};

/* A write in flight. */
struct hpa__op {
	struct hpac *h;
	char *key;
	char *hpa_path;
	struct ynode *status; /* to write once the scale is written */
	int prev, next;
	char *reason;
	struct hpa_behavior behavior;
	bool has_behavior;
	struct ynode *hpa; /* a copy, for events */
};

static void hpa__op_free(struct hpa__op *op)
{
	free(op->key);
	free(op->hpa_path);
	ynode_free(op->status);
	free(op->reason);
	ynode_free(op->hpa);
	free(op);
}

static void hpa__status_written(void *data, const struct writer_result *res)
{
	struct hpa__op *op = data;
	struct hpa__state *st = keymap_get(op->h->state, op->key);
	if (st)
		st->busy = false;
	if (res->status && res->status != ENOENT)
		log_warn("horizontalpodautoscalers %s: cannot write the status: %s", op->key,
			 res->msg);
	hpa__op_free(op);
}

static void hpa__write_status(struct hpa__op *op)
{
	struct ynode *status = op->status;
	op->status = NULL;
	writer_update(op->h->c->writer, op->hpa_path, ctrl_mutate_status, status, ctrl_ynode_free,
		      0, hpa__status_written, op);
}

struct hpa__scale_arg {
	int replicas;
	char *hpa_name;
};

static void hpa__scale_arg_free(void *p)
{
	struct hpa__scale_arg *a = p;
	free(a->hpa_name);
	free(a);
}

static bool hpa__annotated(const struct ynode *obj, const char *hpa_name)
{
	const char *v = obj_annotation(obj, HPA_ANNOTATION);
	return v && hpa_name && !strcmp(v, hpa_name);
}

static int hpa__mutate_scale(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct hpa__scale_arg *a = arg;
	struct ynode *spec = ynode_get_map(obj, "spec");
	struct ynode *md = ynode_get_map(obj, "metadata");
	bool same =
	    obj_int(obj, "spec.replicas", -1) == a->replicas && hpa__annotated(obj, a->hpa_name);
	if (same)
		return 0;
	ynode_set(spec, "replicas", ynode_new_int(a->replicas));
	ynode_set(ynode_get_map(md, "annotations"), HPA_ANNOTATION, ynode_new_str(a->hpa_name));
	return 1;
}

/* The HPA is gone: its target's annotation goes with it. */
static int hpac__unannotate(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct hpa__scale_arg *a = arg;
	if (!hpa__annotated(obj, a->hpa_name))
		return 0;
	ynode_del(ynode_path(obj, "metadata.annotations"), HPA_ANNOTATION);
	return 1;
}

static void hpa__event(struct hpac *h, const struct ynode *hpa, const char *type,
		       const char *reason, const char *msg)
{
	if (h->c->events)
		events_record(h->c->events, HPA__COMPONENT, hpa, type, reason, "%s", msg);
}

static void hpa__set_condition(struct ynode *status, const struct ynode *old_status,
			       const struct condition *c)
{
	char ts[RFC3339_SIZE];
	obj_time_format(obj_now(), ts);
	const struct ynode *old = condition_find(ynode_get(old_status, "conditions"), c->type);
	struct ynode *conds = ynode_get(status, "conditions");
	if (!conds) {
		conds = ynode_new_seq();
		ynode_set(status, "conditions", conds);
	}
	for (size_t i = 0; i < conds->n; i++) {
		struct ynode *it = ynode_item(conds, i);
		if (condition_field_is(it, "type", c->type)) {
			ynode_free(it);
			conds->items[i] = condition_build(c, old, ts, 0);
			return;
		}
	}
	ynode_append(conds, condition_build(c, old, ts, 0));
}

static void hpa__scaled(void *data, const struct writer_result *res)
{
	struct hpa__op *op = data;
	struct hpac *h = op->h;
	const struct ynode *old_status = ynode_get(op->hpa, "status");
	cleanup_free char *msg = NULL;
	if (res->status == 0) {
		struct hpa__state *st = keymap_get(h->state, op->key);
		if (st)
			hpa_record_scale(&st->mem, op->has_behavior ? &op->behavior : NULL,
					 obj_now(), op->prev, op->next);
		msg = xasprintf("New size: %d; reason: %s", op->next, op->reason);
		hpa__event(h, op->hpa, "Normal", "SuccessfulRescale", msg);
		log_info("horizontalpodautoscalers %s: %s", op->key, msg);
	} else {
		msg = xasprintf("New size: %d; reason: %s; error: %s", op->next, op->reason,
				res->msg);
		hpa__event(h, op->hpa, "Warning", "FailedRescale", msg);
		cleanup_free char *why = xasprintf(
		    "the HPA controller was unable to update the target scale: %s", res->msg);
		const struct condition c = {"AbleToScale", "False", "FailedUpdateScale", why};
		hpa__set_condition(op->status, old_status, &c);
		ynode_set(op->status, "desiredReplicas", ynode_new_int(op->prev));
		const struct ynode *last = ynode_get(old_status, "lastScaleTime");
		if (last)
			ynode_set(op->status, "lastScaleTime", ynode_clone(last));
		else
			ynode_del(op->status, "lastScaleTime");
	}
	hpa__write_status(op);
}

static const char *hpa__plural(const char *kind, bool *map_selector)
{
	for (size_t i = 0; kind && i < ARRAY_SIZE(hpa__kinds); i++)
		if (!strcmp(kind, hpa__kinds[i].kind)) {
			*map_selector = hpa__kinds[i].map_selector;
			return hpa__kinds[i].plural;
		}
	return NULL;
}

static size_t hpa__target_index(const char *plural)
{
	for (size_t i = 0; i < ARRAY_SIZE(hpa__kinds); i++)
		if (!strcmp(plural, hpa__kinds[i].plural))
			return i;
	return 0;
}

/* The v2 metrics of an HPA: its own, or the v1 form converted. */
static struct ynode *hpa__metrics(const struct ynode *hpa, bool v1)
{
	if (!v1) {
		const struct ynode *m = ynode_path(hpa, "spec.metrics");
		if (m && m->type == YNODE_SEQ && m->n)
			return ynode_clone(m);
	}
	return autoscale_cpu_metrics(obj_int(hpa, "spec.targetCPUUtilizationPercentage", 80));
}

/* The status, minus conditions: as setStatus() builds it. */
static struct ynode *hpa__status(const struct ynode *hpa, bool v1, int current, int desired,
				 struct ynode *metrics, bool rescaled, long long util,
				 bool has_util)
{
	struct ynode *st = ynode_new_map();
	long long gen = obj_int(hpa, "metadata.generation", -1);
	if (gen >= 0)
		ynode_set(st, "observedGeneration", ynode_new_int(gen));
	const struct ynode *last = ynode_path(hpa, "status.lastScaleTime");
	if (rescaled) {
		char ts[RFC3339_SIZE];
		obj_time_format(obj_now(), ts);
		ynode_set(st, "lastScaleTime", ynode_new_str(ts));
	} else if (last) {
		ynode_set(st, "lastScaleTime", ynode_clone(last));
	}
	ynode_set(st, "currentReplicas", ynode_new_int(current));
	ynode_set(st, "desiredReplicas", ynode_new_int(desired));
	if (v1) {
		if (has_util)
			ynode_set(st, "currentCPUUtilizationPercentage", ynode_new_int(util));
		ynode_free(metrics);
	} else if (metrics && metrics->n) {
		ynode_set(st, "currentMetrics", metrics);
	} else {
		ynode_free(metrics);
	}
	return st;
}

static void hpa__submit_status(struct hpac *h, const char *key, const struct ynode *hpa,
			       struct ynode *status)
{
	struct hpa__state *st = hpa__state(h, key);
	if (ynode_equal(status, ynode_get(hpa, "status"))) {
		ynode_free(status);
		return;
	}
	struct hpa__op *op = xcalloc(1, sizeof(*op));
	op->h = h;
	op->key = xstrdup(key);
	op->hpa_path = obj_path("horizontalpodautoscalers", obj_namespace(hpa), obj_name(hpa));
	op->status = status;
	st->busy = true;
	hpa__write_status(op);
}

/* An HPA that cannot act: its status says why. */
static void hpa__cannot(struct hpac *h, const char *key, const struct ynode *hpa, bool v1,
			int current, const struct condition *c)
{
	const struct ynode *old = ynode_get(hpa, "status");
	long long desired = obj_int(hpa, "status.desiredReplicas", current);
	struct ynode *st = hpa__status(hpa, v1, current, (int)desired, NULL, false, 0, false);
	if (ynode_get(old, "conditions"))
		ynode_set(st, "conditions", ynode_clone(ynode_get(old, "conditions")));
	hpa__set_condition(st, old, c);
	hpa__submit_status(h, key, hpa, st);
}

static int hpa__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct hpac *h = data;
	const struct ynode *hpa = informer_get(h->hpas, key);
	struct hpa__state *state = keymap_get(h->state, key);
	if (!hpa) {
		if (state && state->target_path) {
			/* the target is a person's to scale again: its history
			 * records spec.replicas from now on */
			char ns[256];
			const char *name = obj_key_split(key, ns, sizeof(ns));
			struct hpa__scale_arg *a = xcalloc(1, sizeof(*a));
			a->hpa_name = xstrdup(name ? name : key);
			writer_update(h->c->writer, state->target_path, hpac__unannotate, a,
				      hpa__scale_arg_free, 0, NULL, NULL);
		}
		keymap_del(h->state, key);
		return 0;
	}
	workqueue_add_after(h->q, key, h->sync_ms);
	state = hpa__state(h, key);
	if (state->busy)
		return 0;
	const char *av = ynode_str(ynode_get(hpa, "apiVersion"));
	bool v1 = av && !strcmp(av, "autoscaling/v1");
	const char *ns = obj_namespace(hpa);
	const char *kind = ynode_path_str(hpa, "spec.scaleTargetRef.kind");
	const char *tname = ynode_path_str(hpa, "spec.scaleTargetRef.name");
	bool map_sel = false;
	const char *plural = hpa__plural(kind, &map_sel);
	const struct ynode *old_status = ynode_get(hpa, "status");
	int prev_current = (int)obj_int(hpa, "status.currentReplicas", 0);
	if (!plural || !tname) {
		cleanup_free char *msg = xasprintf(
		    "the HPA controller was unable to get the target's current scale: no matches "
		    "for kind \"%s\" (corral scales Deployment, ReplicaSet, "
		    "ReplicationController and StatefulSet)",
		    kind ? kind : "");
		const struct condition c = {"AbleToScale", "False", "FailedGetScale", msg};
		hpa__cannot(h, key, hpa, v1, prev_current, &c);
		return 0;
	}
	cleanup_free char *tkey = obj_key(ns, tname);
	const struct ynode *target = informer_get(h->targets[hpa__target_index(plural)], tkey);
	if (!target) {
		cleanup_free char *msg =
		    xasprintf("the HPA controller was unable to get the target's current scale: "
			      "%s \"%s\" not found",
			      plural, tname);
		const struct condition c = {"AbleToScale", "False", "FailedGetScale", msg};
		hpa__event(
		    h, hpa, "Warning", "FailedGetScale",
		    msg + strlen(
			      "the HPA controller was unable to get the target's current scale: "));
		hpa__cannot(h, key, hpa, v1, prev_current, &c);
		return 0;
	}
	free(state->target_path);
	state->target_path = obj_path(plural, ns, tname);
	int current = (int)obj_int(target, "spec.replicas", 1);
	int minr = (int)obj_int(hpa, "spec.minReplicas", 1);
	int maxr = (int)obj_int(hpa, "spec.maxReplicas", 1);

	struct hpa__conds cd = {0};
	cd.able =
	    (struct condition){"AbleToScale", "True", "SucceededGetScale",
			       "the HPA controller was able to get the target's current scale"};
	struct hpa__sync s = {.h = h, .key = key, .hpa = hpa, .ns = ns, .v1 = v1};
	cleanup_error struct error *serr = NULL;
	const struct ynode *sel = ynode_path(target, "spec.selector");
	if (map_sel && (!sel || sel->type != YNODE_MAP || !sel->n))
		sel = ynode_path(target, "spec.template.metadata.labels");
	int sr = map_sel ? selector_parse_map(sel, &s.sel, &serr)
			 : selector_parse_labelselector(sel, &s.sel, &serr);
	if (sr < 0) {
		cleanup_free char *msg =
		    xasprintf("the HPA target's selector does not parse: %s", serr->msg);
		const struct condition c = {"ScalingActive", "False", "InvalidSelector", msg};
		hpa__cannot(h, key, hpa, v1, current, &c);
		return 0;
	}
	informer_foreach(h->pods, ns, hpa__visit_pod, &s);

	int desired = 0;
	bool rescale = false;
	cleanup_free char *reason = NULL;
	struct ynode *metric_status = ynode_new_seq();
	long long util = 0;
	bool has_util = false;
	struct hpa_behavior behavior;
	const struct ynode *bnode = ynode_path(hpa, "spec.behavior");
	bool has_behavior = !v1 && bnode && bnode->type == YNODE_MAP;
	if (has_behavior)
		hpa_behavior_parse(bnode, h->down_window_s, &behavior);
	struct hpa_verdict v = {0};
	bool failed = false;
	if (current == 0 && minr != 0) {
		cd.active = (struct condition){
		    "ScalingActive", "False", "ScalingDisabled",
		    "scaling is disabled since the replica count of the target is zero"};
	} else if (current > maxr) {
		reason = xstrdup("Current number of replicas above Spec.MaxReplicas");
		desired = maxr;
	} else if (current < minr) {
		reason = xstrdup("Current number of replicas below Spec.MinReplicas");
		desired = minr;
	} else {
		cleanup_ynode struct ynode *metrics = hpa__metrics(hpa, v1);
		int best = -1, invalid = 0;
		const char *best_name = NULL;
		struct hpa__proposal *props = xcalloc(metrics->n + 1, sizeof(*props));
		const struct hpa__proposal *first_bad = NULL;
		for (size_t i = 0; i < metrics->n; i++) {
			struct hpa__metric m;
			hpa__metric_read(ynode_item(metrics, i), &m);
			hpa__propose(&s, &m, current, &props[i]);
			if (props[i].replicas < 0) {
				invalid++;
				if (!first_bad)
					first_bad = &props[i];
				continue;
			}
			ynode_append(metric_status, steal_pointer(&props[i].status));
			if (props[i].has_util && i == 0) {
				util = props[i].util;
				has_util = true;
			}
			if (best < 0 || props[i].replicas > best) {
				best = props[i].replicas;
				best_name = props[i].name;
			}
		}
		if (invalid >= (int)metrics->n || (invalid > 0 && best < current)) {
			cleanup_free char *msg =
			    xasprintf("the HPA was unable to compute the replica count: %s",
				      first_bad->fail_msg);
			snprintf(cd.active_msg, sizeof(cd.active_msg), "%s", msg);
			cd.active = (struct condition){"ScalingActive", "False",
						       first_bad->fail_reason, cd.active_msg};
			hpa__event(h, hpa, "Warning", first_bad->fail_reason, first_bad->fail_msg);
			failed = true;
		} else {
			snprintf(
			    cd.active_msg, sizeof(cd.active_msg),
			    "the HPA was able to successfully calculate a replica count from %s",
			    best_name);
			cd.active = (struct condition){"ScalingActive", "True", "ValidMetricFound",
						       cd.active_msg};
			desired = best;
			if (desired > current)
				reason = xasprintf("%s above target", best_name);
			else if (desired < current)
				reason = xstrdup("All metrics below target");
			desired = hpa_normalize(&state->mem, has_behavior ? &behavior : NULL,
						h->down_window_s, obj_now(), current, desired, minr,
						maxr, &v);
			cd.able.reason = v.able_reason;
			cd.able.message = v.able_message;
			cd.limited =
			    (struct condition){"ScalingLimited", v.limited ? "True" : "False",
					       v.limited_reason, v.limited_message};
			cd.have_limited = true;
			rescale = desired != current;
		}
		for (size_t i = 0; i < metrics->n; i++)
			hpa__proposal_clear(&props[i]);
		free(props);
	}
	if (reason && !cd.active.type) {
		/* min/max: no metric was computed */
		cd.active = (struct condition){"ScalingActive", "True", "ValidMetricFound", NULL};
		rescale = desired != current;
	}
	selector_free(s.sel);
	free(s.pods);
	keymap_free(s.values);

	if (failed || (!rescale && !cd.have_limited && !reason)) {
		/* no decision: keep the last desired count */
		int keep = (int)obj_int(hpa, "status.desiredReplicas", current);
		struct ynode *st =
		    hpa__status(hpa, v1, current, keep, metric_status, false, util, has_util);
		if (ynode_get(old_status, "conditions"))
			ynode_set(st, "conditions",
				  ynode_clone(ynode_get(old_status, "conditions")));
		hpa__set_condition(st, old_status, &cd.able);
		hpa__set_condition(st, old_status, &cd.active);
		hpa__submit_status(h, key, hpa, st);
		return 0;
	}
	if (!rescale)
		desired = current;
	struct ynode *st =
	    hpa__status(hpa, v1, current, desired, metric_status, rescale, util, has_util);
	if (cd.active.type && !cd.active.message)
		cd.active =
		    (struct condition){"ScalingActive", "True", "ValidMetricFound",
				       "the HPA was able to successfully calculate a replica "
				       "count from the replica limits"};
	if (ynode_get(old_status, "conditions"))
		ynode_set(st, "conditions", ynode_clone(ynode_get(old_status, "conditions")));
	hpa__set_condition(st, old_status, &cd.able);
	hpa__set_condition(st, old_status, &cd.active);
	if (cd.have_limited)
		hpa__set_condition(st, old_status, &cd.limited);
	if (!rescale) {
		hpa__submit_status(h, key, hpa, st);
		return 0;
	}
	char able[160];
	snprintf(able, sizeof(able), "the HPA controller was able to update the target scale to %d",
		 desired);
	const struct condition ok = {"AbleToScale", "True", "SucceededRescale", able};
	hpa__set_condition(st, old_status, &ok);
	struct hpa__op *op = xcalloc(1, sizeof(*op));
	op->h = h;
	op->key = xstrdup(key);
	op->hpa_path = obj_path("horizontalpodautoscalers", ns, obj_name(hpa));
	op->status = st;
	op->prev = current;
	op->next = desired;
	op->reason = xstrdup(reason ? reason : "");
	op->behavior = behavior;
	op->has_behavior = has_behavior;
	op->hpa = ynode_clone(hpa);
	struct hpa__scale_arg *a = xcalloc(1, sizeof(*a));
	a->replicas = desired;
	a->hpa_name = xstrdup(obj_name(hpa));
	state->busy = true;
	writer_update(h->c->writer, state->target_path, hpa__mutate_scale, a, hpa__scale_arg_free,
		      0, hpa__scaled, op);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void hpa__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct hpac *h = data;
	workqueue_add(h->q, key);
}

/* A change of the spec is acted on at once; the controller's own status
 * writes wait for the next period. */
static void hpa__on_update(void *data, const char *key, const struct ynode *old,
			   const struct ynode *obj)
{
	struct hpac *h = data;
	if (!ynode_equal(ynode_get(old, "spec"), ynode_get(obj, "spec")))
		workqueue_add(h->q, key);
}

struct hpac *hpac_new(struct ctrl *c)
{
	struct hpac *h = xcalloc(1, sizeof(*h));
	h->c = c;
	const struct ctrl_config *cfg = c->cfg;
	h->sync_ms = cfg && cfg->hpa_sync_ms ? cfg->hpa_sync_ms : 15000;
	h->down_window_s = cfg ? (int64_t)(cfg->hpa_downscale_ms / 1000) : HPA_DOWNSCALE_WINDOW_S;
	h->tolerance = HPA_TOLERANCE;
	if (cfg && cfg->hpa_tolerance && *cfg->hpa_tolerance)
		h->tolerance = strtod(cfg->hpa_tolerance, NULL);
	h->hpas = ctrl_informer(c, "horizontalpodautoscalers");
	h->pods = ctrl_informer(c, "pods");
	h->podmetrics = ctrl_informer(c, "podmetrics");
	h->metrics = ctrl_informer(c, "metrics");
	for (size_t i = 0; i < ARRAY_SIZE(hpa__kinds); i++)
		h->targets[i] = ctrl_informer(c, hpa__kinds[i].plural);
	h->q = workqueue_new(c->loop, "horizontalpodautoscalers", NULL);
	h->state = keymap_new(hpa__state_free);
	struct informer_handlers hh = {
	    .on_add = hpa__on_add,
	    .on_update = hpa__on_update,
	    .on_delete = hpa__on_add,
	};
	informer_add_handlers(h->hpas, &hh, h);
	workqueue_set_handler(h->q, hpa__sync, h);
	return h;
}

void hpac_free(struct hpac *h)
{
	if (!h)
		return;
	workqueue_free(h->q);
	keymap_free(h->state);
	free(h);
}
