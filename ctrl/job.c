/* job.c: the Job controller.
 *
 * One sync per Job key: claim the Job's pods (its own, and orphans its
 * selector matches), count them (active, ready, succeeded, failed, by
 * index for an Indexed Job), decide whether the Job is finished, else
 * create or delete the difference, and write the status. As for
 * ReplicaSets, a Job does not sync again until its writes are done and
 * the informers show them (expect.h); the status waits for a sync with no
 * pod writes, but for the one that finishes the Job, which deletes its
 * running pods and writes the final status at once. Back-off and the
 * active deadline are delayed adds of the key (loop timers): nothing
 * polls.
 *
 * This file must never write a pod it does not own or adopt, and never
 * delete a finished pod: those go with their Job. */
#include "job.h"
#include "adopt.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "log.h"
#include "obj.h"
#include "owners.h"
#include "replicaset.h"
#include "selector.h"
#include "timefmt.h"
#include "treepath.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JOBC__COMPONENT "job-controller"

struct jobc {
	struct ctrl *c;
	struct informer *jobs;
	struct informer *pods;
	struct owners *owned; /* pods by controller */
	struct workqueue *q;
	struct expect *exp;
	int burst;
};

/* A write in flight for a Job. */
struct jobc__op {
	struct jobc *j;
	char *owner; /* the Job's key */
	char *ns;
	char *job_name;
	char *job_uid;
	char *pod; /* the pod's name, for deletes */
};

/* ---- decision logic ---------------------------------------------------- */

uint64_t job_backoff_ms(long long failures)
{
	if (failures <= 0)
		return 0;
	uint64_t d = JOB_BACKOFF_BASE_MS;
	for (long long i = 1; i < failures && d < JOB_BACKOFF_MAX_MS; i++)
		d *= 2;
	return d < JOB_BACKOFF_MAX_MS ? d : JOB_BACKOFF_MAX_MS;
}

uint64_t job_backoff_left_ms(long long failures, int64_t last_ms, int64_t now_ms)
{
	uint64_t d = job_backoff_ms(failures);
	if (!d)
		return 0;
	int64_t elapsed = now_ms - last_ms;
	if (elapsed < 0)
		elapsed = 0;
	return (uint64_t)elapsed >= d ? 0 : d - (uint64_t)elapsed;
}

long long job_want_active(long long parallelism, long long completions, long long succeeded,
			  long long active)
{
	long long want;
	if (completions < 0)
		want = succeeded > 0 ? active : parallelism;
	else
		want = completions - succeeded;
	if (want > parallelism)
		want = parallelism;
	return want < 0 ? 0 : want;
}

char *job_format_indexes(const bool *set, long long n)
{
	struct strbuf {
		char *s;
		size_t len, cap;
	} b = {xstrdup(""), 0, 1};
	for (long long i = 0; i < n; i++) {
		if (!set[i])
			continue;
		long long k = i;
		while (k + 1 < n && set[k + 1])
			k++;
		char part[48];
		int len = k == i
			      ? snprintf(part, sizeof(part), "%s%lld", b.len ? "," : "", i)
			      : snprintf(part, sizeof(part), "%s%lld-%lld", b.len ? "," : "", i, k);
		if (b.len + (size_t)len + 1 > b.cap) {
			b.cap = 2 * (b.len + (size_t)len + 1);
			b.s = xrealloc(b.s, b.cap);
		}
		memcpy(b.s + b.len, part, (size_t)len + 1);
		b.len += (size_t)len;
		i = k;
	}
	return b.s;
}

int job_parse_indexes(const char *s, bool *set, long long n)
{
	if (!s)
		return 0;
	const char *p = s;
	while (*p) {
		char *end = NULL;
		long long a = strtoll(p, &end, 10), b = a;
		if (end == p || a < 0)
			return -1;
		p = end;
		if (*p == '-') {
			b = strtoll(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		for (long long i = a; i <= b && i < n; i++)
			set[i] = true;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

long long job_indexes_to_create(long long n, const bool *done, const bool *active,
				const bool *failed, long long room, long long *out)
{
	long long k = 0;
	for (long long i = 0; i < n && k < room; i++)
		if (!done[i] && !active[i] && !(failed && failed[i]))
			out[k++] = i;
	return k;
}

long long job_pod_index(const struct ynode *pod, long long n)
{
	const char *s = obj_annotation(pod, JOB_INDEX_KEY);
	if (!s || !*s)
		return -1;
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (*end || v < 0 || v >= n)
		return -1;
	return v;
}

static bool job__int_in(const struct ynode *values, long long v)
{
	for (size_t i = 0; values && values->type == YNODE_SEQ && i < values->n; i++) {
		long long x;
		if (ynode_int(ynode_item(values, i), &x) == 0 && x == v)
			return true;
	}
	return false;
}

/* The first container (of those the rule names) that terminated with a
 * non-zero code the rule's operator matches; its name and code. */
static bool job__exit_code_rule(const struct ynode *rule, const struct ynode *pod,
				const char **cname, long long *code)
{
	const char *want = ynode_path_str(rule, "containerName");
	const char *op = ynode_path_str(rule, "operator");
	const struct ynode *values = ynode_get(rule, "values");
	static const char *const lists[] = {"status.initContainerStatuses",
					    "status.containerStatuses"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const struct ynode *c = ynode_item(cs, i);
			const char *name = ynode_path_str(c, "name");
			if (want && (!name || strcmp(want, name)))
				continue;
			long long ec = 0;
			if (ynode_int(ynode_path(c, "state.terminated.exitCode"), &ec) < 0 || !ec)
				continue;
			bool in = job__int_in(values, ec);
			if (op && !strcmp(op, "NotIn") ? !in : in) {
				*cname = name ? name : "";
				*code = ec;
				return true;
			}
		}
	}
	return false;
}

static bool job__conditions_rule(const struct ynode *patterns, const struct ynode *pod)
{
	const struct ynode *conds = ynode_path(pod, "status.conditions");
	for (size_t i = 0; patterns && patterns->type == YNODE_SEQ && i < patterns->n; i++) {
		const struct ynode *p = ynode_item(patterns, i);
		const char *type = ynode_path_str(p, "type");
		const char *status = ynode_path_str(p, "status");
		const struct ynode *c = type ? condition_find(conds, type) : NULL;
		if (c && condition_field_is(c, "status", status ? status : "True"))
			return true;
	}
	return false;
}

enum job_pfp job_pod_failure_action(const struct ynode *job, const struct ynode *pod, char **msg)
{
	const struct ynode *rules = ynode_path(job, "spec.podFailurePolicy.rules");
	for (size_t i = 0; rules && rules->type == YNODE_SEQ && i < rules->n; i++) {
		const struct ynode *rule = ynode_item(rules, i);
		const char *action = ynode_path_str(rule, "action");
		const struct ynode *codes = ynode_get(rule, "onExitCodes");
		const char *cname = NULL;
		long long code = 0;
		bool match = codes ? job__exit_code_rule(codes, pod, &cname, &code)
				   : job__conditions_rule(ynode_get(rule, "onPodConditions"), pod);
		if (!match || !action)
			continue;
		if (!strcmp(action, "Ignore"))
			return JOB_PFP_IGNORE;
		if (!strcmp(action, "Count"))
			return JOB_PFP_COUNT;
		if (!strcmp(action, "FailIndex"))
			return JOB_PFP_FAIL_INDEX;
		if (!strcmp(action, "FailJob")) {
			if (msg && codes)
				*msg =
				    xasprintf("Container %s for pod %s/%s failed with exit code "
					      "%lld matching FailJob rule at index %zu",
					      cname, obj_namespace(pod) ? obj_namespace(pod) : "",
					      obj_name(pod), code, i);
			else if (msg)
				*msg = xasprintf("Pod %s/%s has condition matching FailJob rule "
						 "at index %zu",
						 obj_namespace(pod) ? obj_namespace(pod) : "",
						 obj_name(pod), i);
			return JOB_PFP_FAIL_JOB;
		}
	}
	return JOB_PFP_NONE;
}

bool job_finished(const struct ynode *job, const char **type)
{
	static const char *const types[] = {"Complete", "Failed"};
	const struct ynode *conds = ynode_path(job, "status.conditions");
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		const struct ynode *c = condition_find(conds, types[i]);
		if (c && condition_field_is(c, "status", "True")) {
			if (type)
				*type = types[i];
			return true;
		}
	}
	return false;
}

/* JOB_COMPLETION_INDEX from the downward API, as Kubernetes adds it. */
static void job__add_index_env(struct ynode *containers)
{
	for (size_t i = 0; containers && containers->type == YNODE_SEQ && i < containers->n; i++) {
		struct ynode *c = ynode_item(containers, i);
		struct ynode *env = ynode_get(c, "env");
		bool has = false;
		for (size_t k = 0; env && env->type == YNODE_SEQ && k < env->n; k++) {
			const char *name = ynode_path_str(ynode_item(env, k), "name");
			if (name && !strcmp(name, "JOB_COMPLETION_INDEX"))
				has = true;
		}
		if (has)
			continue;
		if (!env || env->type != YNODE_SEQ) {
			env = ynode_new_seq();
			ynode_set(c, "env", env);
		}
		struct ynode *e = ynode_new_map();
		ynode_set(e, "name", ynode_new_str("JOB_COMPLETION_INDEX"));
		struct ynode *fr = ynode_get_map(ynode_get_map(e, "valueFrom"), "fieldRef");
		ynode_set(fr, "fieldPath",
			  ynode_new_str("metadata.annotations['" JOB_INDEX_KEY "']"));
		ynode_append(env, e);
	}
}

struct ynode *job_pod_new(const struct ynode *job, long long index, long long failures)
{
	const struct ynode *t = ynode_path(job, "spec.template");
	struct ynode *pod = ynode_new_map();
	ynode_set(pod, "apiVersion", ynode_new_str("v1"));
	ynode_set(pod, "kind", ynode_new_str("Pod"));
	struct ynode *md = ynode_get_map(pod, "metadata");
	cleanup_free char *base = index < 0 ? xasprintf("%s-", obj_name(job))
					    : xasprintf("%s-%lld-", obj_name(job), index);
	cleanup_free char *name = obj_generate_name(base);
	ynode_set(md, "name", ynode_new_str(name));
	if (obj_namespace(job))
		ynode_set(md, "namespace", ynode_new_str(obj_namespace(job)));
	const struct ynode *tl = ynode_path(t, "metadata.labels");
	struct ynode *labels = tl && tl->type == YNODE_MAP ? ynode_clone(tl) : ynode_new_map();
	const char *uid = obj_uid(job) ? obj_uid(job) : "";
	ynode_set(labels, JOB_UID_LABEL, ynode_new_str(uid));
	ynode_set(labels, JOB_NAME_LABEL, ynode_new_str(obj_name(job)));
	ynode_set(labels, "controller-uid", ynode_new_str(uid));
	ynode_set(labels, "job-name", ynode_new_str(obj_name(job)));
	const struct ynode *ta = ynode_path(t, "metadata.annotations");
	struct ynode *ann = ta && ta->type == YNODE_MAP ? ynode_clone(ta) : NULL;
	struct ynode *spec =
	    ynode_get(t, "spec") ? ynode_clone(ynode_get(t, "spec")) : ynode_new_map();
	if (index >= 0) {
		char idx[24];
		snprintf(idx, sizeof(idx), "%lld", index);
		if (!ann)
			ann = ynode_new_map();
		ynode_set(ann, JOB_INDEX_KEY, ynode_new_str(idx));
		ynode_set(labels, JOB_INDEX_KEY, ynode_new_str(idx));
		if (failures > 0) {
			snprintf(idx, sizeof(idx), "%lld", failures);
			ynode_set(ann, JOB_FAILURE_COUNT_KEY, ynode_new_str(idx));
		}
		cleanup_free char *host = xasprintf("%s-%lld", obj_name(job), index);
		ynode_set(spec, "hostname", ynode_new_str(host));
		job__add_index_env(ynode_get(spec, "containers"));
		job__add_index_env(ynode_get(spec, "initContainers"));
	}
	ynode_set(md, "labels", labels);
	if (ann)
		ynode_set(md, "annotations", ann);
	const struct ynode *fin = ynode_path(t, "metadata.finalizers");
	if (fin && fin->type == YNODE_SEQ)
		ynode_set(md, "finalizers", ynode_clone(fin));
	obj_add_owner_ref(pod, obj_owner_ref_new("batch/v1", "Job", obj_name(job), uid, true));
	ynode_set(pod, "spec", spec);
	return pod;
}

/* ---- writes ------------------------------------------------------------- */

static struct jobc__op *jobc__op_new(struct jobc *j, const char *owner, const struct ynode *job,
				     const char *pod)
{
	struct jobc__op *op = xcalloc(1, sizeof(*op));
	op->j = j;
	op->owner = xstrdup(owner);
	op->ns = xstrdup(obj_namespace(job) ? obj_namespace(job) : "");
	op->job_name = xstrdup(obj_name(job));
	op->job_uid = xstrdup(obj_uid(job) ? obj_uid(job) : "");
	op->pod = pod ? xstrdup(pod) : NULL;
	expect_write(j->exp, owner);
	return op;
}

static void jobc__op_free(struct jobc__op *op)
{
	free(op->owner);
	free(op->ns);
	free(op->job_name);
	free(op->job_uid);
	free(op->pod);
	free(op);
}

static void jobc__event_ref(struct jobc *j, const char *ns, const char *name, const char *uid,
			    const char *type, const char *reason, const char *msg)
{
	if (j->c->events)
		events_record_ref(j->c->events, JOBC__COMPONENT, "batch/v1", "Job", ns, name, uid,
				  type, reason, "%s", msg);
}

static void jobc__event(struct jobc *j, const struct ynode *job, const char *type,
			const char *reason, const char *msg)
{
	jobc__event_ref(j, obj_namespace(job), obj_name(job), obj_uid(job), type, reason, msg);
}

static void jobc__created(void *data, const struct writer_result *res)
{
	struct jobc__op *op = data;
	struct jobc *j = op->j;
	cleanup_free char *key = res->name ? obj_key(op->ns, res->name) : NULL;
	expect_written(j->exp, op->owner, res->status == 0, j->pods, key, res->min_rv, false,
		       loop_now_ms());
	cleanup_free char *msg = NULL;
	if (res->status == 0) {
		msg = xasprintf("Created pod: %s", res->name);
		jobc__event_ref(j, op->ns, op->job_name, op->job_uid, "Normal", "SuccessfulCreate",
				msg);
		workqueue_add(j->q, op->owner);
	} else {
		log_warn("Job %s: cannot create a pod: %s", op->owner, res->msg);
		msg = xasprintf("Error creating: %s", res->msg);
		jobc__event_ref(j, op->ns, op->job_name, op->job_uid, "Warning", "FailedCreate",
				msg);
		workqueue_add_rate_limited(j->q, op->owner);
	}
	jobc__op_free(op);
}

static void jobc__deleted(void *data, const struct writer_result *res)
{
	struct jobc__op *op = data;
	struct jobc *j = op->j;
	cleanup_free char *key = obj_key(op->ns, op->pod);
	expect_written(j->exp, op->owner, res->status == 0, j->pods, key, 0, true, loop_now_ms());
	cleanup_free char *msg = NULL;
	if (res->status == 0) {
		msg = xasprintf("Deleted pod: %s", op->pod);
		jobc__event_ref(j, op->ns, op->job_name, op->job_uid, "Normal", "SuccessfulDelete",
				msg);
	} else if (res->status != ENOENT && res->status != ESTALE) {
		log_warn("Job %s: cannot delete pod %s: %s", op->owner, op->pod, res->msg);
		msg = xasprintf("Error deleting: %s", res->msg);
		jobc__event_ref(j, op->ns, op->job_name, op->job_uid, "Warning", "FailedDelete",
				msg);
	}
	workqueue_add(j->q, op->owner);
	jobc__op_free(op);
}

static void jobc__written_pod(void *data, const struct writer_result *res)
{
	struct jobc__op *op = data;
	struct jobc *j = op->j;
	cleanup_free char *key = obj_key(op->ns, op->pod);
	expect_written(j->exp, op->owner, res->status == 0, j->pods, key, res->min_rv, false,
		       loop_now_ms());
	if (res->status && res->status != ENOENT)
		log_warn("Job %s: cannot update pod %s: %s", op->owner, op->pod, res->msg);
	workqueue_add(j->q, op->owner);
	jobc__op_free(op);
}

static void jobc__written_status(void *data, const struct writer_result *res)
{
	struct jobc__op *op = data;
	struct jobc *j = op->j;
	expect_written(j->exp, op->owner, res->status == 0, j->jobs, op->owner, res->min_rv, false,
		       loop_now_ms());
	if (res->status && res->status != ENOENT)
		log_warn("Job %s: cannot write the status: %s", op->owner, res->msg);
	workqueue_add(j->q, op->owner);
	jobc__op_free(op);
}

/* ---- sync --------------------------------------------------------------- */

/* What a sync learns from the Job's pods. */
struct jobc__scan {
	struct jobc *j;
	const char *owner;
	const struct ynode *job;
	struct adopt_owner as;
	struct selector *sel;
	bool indexed;
	long long completions; /* -1: a work queue */
	long long per_index;   /* backoffLimitPerIndex, -1: none */
	bool on_failure;       /* restartPolicy OnFailure */
	struct rsc_pod *active;
	size_t nactive, cap;
	long long ready, succeeded, failed, restarts;
	bool *done, *running, *failed_idx; /* per index (indexed) */
	long long *idx_failures;
	int64_t last_success, last_failure; /* seconds; -1: none */
	long long failures_after_success;
	int64_t *failure_times; /* of counted failures, to count those after the last success */
	size_t nfail, fcap;
	char *fail_job; /* a FailJob rule's message */
	unsigned writes;
};

/* When a finished pod finished: the latest finishedAt of its containers,
 * else its creation. */
static int64_t jobc__finished_at(const struct ynode *pod)
{
	int64_t best = -1;
	static const char *const lists[] = {"status.initContainerStatuses",
					    "status.containerStatuses"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			int64_t t = obj_time_parse(
			    ynode_path_str(ynode_item(cs, i), "state.terminated.finishedAt"));
			if (t > best)
				best = t;
		}
	}
	if (best < 0)
		best = obj_time_parse(ynode_path_str(pod, "metadata.creationTimestamp"));
	return best;
}

static long long jobc__restarts(const struct ynode *pod)
{
	long long sum = 0;
	static const char *const lists[] = {"status.initContainerStatuses",
					    "status.containerStatuses"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++)
			sum += obj_int(ynode_item(cs, i), "restartCount", 0);
	}
	return sum;
}

static void jobc__count_pod(struct jobc__scan *s, const struct ynode *pod)
{
	long long idx = s->indexed ? job_pod_index(pod, s->completions) : -1;
	if (s->indexed && idx < 0)
		return; /* Kubernetes deletes such pods; they do not count */
	const char *phase = ynode_path_str(pod, "status.phase");
	if (phase && !strcmp(phase, "Succeeded")) {
		s->succeeded++;
		if (idx >= 0)
			s->done[idx] = true;
		int64_t t = jobc__finished_at(pod);
		if (t > s->last_success)
			s->last_success = t;
		return;
	}
	if (phase && !strcmp(phase, "Failed")) {
		cleanup_free char *msg = NULL;
		enum job_pfp what = job_pod_failure_action(s->job, pod, &msg);
		if (what == JOB_PFP_IGNORE)
			return;
		if (what == JOB_PFP_FAIL_JOB && !s->fail_job)
			s->fail_job = xstrdup(msg ? msg : "");
		if (what == JOB_PFP_FAIL_INDEX && idx >= 0)
			s->failed_idx[idx] = true;
		s->failed++;
		if (idx >= 0) {
			s->idx_failures[idx]++;
			if (s->per_index >= 0 && s->idx_failures[idx] > s->per_index)
				s->failed_idx[idx] = true;
		}
		int64_t t = jobc__finished_at(pod);
		if (t > s->last_failure)
			s->last_failure = t;
		if (s->nfail == s->fcap) {
			s->fcap = s->fcap ? 2 * s->fcap : 16;
			s->failure_times = xrealloc(s->failure_times, s->fcap * sizeof(int64_t));
		}
		s->failure_times[s->nfail++] = t;
		return;
	}
	if (object_is_deleting(pod))
		return;
	if (idx >= 0)
		s->running[idx] = true;
	if (pod_is_ready(pod, NULL))
		s->ready++;
	if (s->on_failure)
		s->restarts += jobc__restarts(pod);
	if (s->nactive == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->active = xrealloc(s->active, s->cap * sizeof(*s->active));
	}
	rsc_pod_init(&s->active[s->nactive++], obj_name(pod), pod);
}

static bool jobc__adoptable(const struct ynode *pod)
{
	return pod_is_active(pod);
}

static int jobc__visit_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct jobc__scan *s = data;
	enum adopt_claim what = adopt_claim(&s->as, s->sel, pod);
	if (what == ADOPT_ADOPT && !pod_is_active(pod))
		what = ADOPT_IGNORE;
	if (what == ADOPT_IGNORE)
		return 0;
	if (what == ADOPT_RELEASE || what == ADOPT_ADOPT) {
		cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
		struct jobc__op *op = jobc__op_new(s->j, s->owner, s->job, obj_name(pod));
		adopt_write(s->j->c->writer, path, &s->as, what, jobc__adoptable, jobc__written_pod,
			    op);
		s->writes++;
		if (what == ADOPT_RELEASE)
			return 0;
	}
	jobc__count_pod(s, pod);
	return 0;
}

/* The Job's selector: spec.selector with manualSelector, else the
 * generated one (its uid). */
static int jobc__selector(const struct ynode *job, struct selector **sel, struct error **err)
{
	const struct ynode *manual = ynode_path(job, "spec.manualSelector");
	bool m = false;
	if (manual && ynode_bool(manual, &m) == 0 && m)
		return selector_parse_labelselector(ynode_path(job, "spec.selector"), sel, err);
	cleanup_free char *text =
	    xasprintf("{matchLabels: {%s: '%s'}}", JOB_UID_LABEL, obj_uid(job) ? obj_uid(job) : "");
	cleanup_ynode struct ynode *s = NULL;
	if (yaml_parse_one(text, strlen(text), &s, err) < 0)
		return -EINVAL;
	return selector_parse_labelselector(s, sel, err);
}

static bool jobc__bool(const struct ynode *job, const char *path)
{
	bool b = false;
	const struct ynode *n = ynode_path(job, path);
	return n && ynode_bool(n, &b) == 0 && b;
}

static void jobc__delete_active(struct jobc__scan *s, size_t n)
{
	struct jobc *j = s->j;
	if (n > s->nactive)
		n = s->nactive;
	for (size_t i = 0; i < n; i++) {
		const struct ynode *pod = s->active[i].obj;
		cleanup_free char *path = obj_path("pods", obj_namespace(pod), obj_name(pod));
		struct jobc__op *op = jobc__op_new(j, s->owner, s->job, obj_name(pod));
		writer_delete(j->c->writer, path, obj_uid(pod), 0, jobc__deleted, op);
		s->writes++;
	}
}

static void jobc__set_count(struct ynode *st, const char *key, long long v)
{
	/* omitempty, as Kubernetes writes them */
	if (v)
		ynode_set(st, key, ynode_new_int(v));
	else
		ynode_del(st, key);
}

static long long jobc__count_set(const bool *set, long long n)
{
	long long k = 0;
	for (long long i = 0; i < n; i++)
		k += set[i];
	return k;
}

static int jobc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct jobc *j = data;
	const struct ynode *job = informer_get(j->jobs, key);
	if (!job) {
		expect_forget(j->exp, key);
		return 0;
	}
	if (job_finished(job, NULL) || object_is_deleting(job))
		return 0;
	uint64_t recheck = 0;
	if (!expect_ready(j->exp, key, loop_now_ms(), &recheck)) {
		if (recheck)
			workqueue_add_after(j->q, key, recheck);
		return 0;
	}
	cleanup_error struct error *serr = NULL;
	struct jobc__scan s = {
	    .j = j, .owner = key, .job = job, .last_success = -1, .last_failure = -1};
	adopt_owner_init(&s.as, job, "batch/v1", "Job");
	if (jobc__selector(job, &s.sel, &serr) < 0) {
		log_warn("Job %s: spec.selector: %s", key, serr->msg);
		return 0;
	}
	const char *mode = ynode_path_str(job, "spec.completionMode");
	s.indexed = mode && !strcmp(mode, "Indexed");
	s.completions = obj_int(job, "spec.completions", -1);
	if (s.indexed && s.completions < 0)
		s.completions = 0;
	s.per_index = s.indexed ? obj_int(job, "spec.backoffLimitPerIndex", -1) : -1;
	const char *rp = ynode_path_str(job, "spec.template.spec.restartPolicy");
	s.on_failure = rp && !strcmp(rp, "OnFailure");
	size_t nidx = s.indexed ? (size_t)s.completions + 1 : 1;
	s.done = xcalloc(nidx, sizeof(bool));
	s.running = xcalloc(nidx, sizeof(bool));
	s.failed_idx = xcalloc(nidx, sizeof(bool));
	s.idx_failures = xcalloc(nidx, sizeof(long long));
	/* Indexes once done stay done, whatever happened to their pods. */
	if (s.indexed) {
		job_parse_indexes(ynode_path_str(job, "status.completedIndexes"), s.done,
				  s.completions);
		job_parse_indexes(ynode_path_str(job, "status.failedIndexes"), s.failed_idx,
				  s.completions);
	}
	const char *ns = obj_namespace(job);
	owners_foreach_owned(j->owned, obj_uid(job), jobc__visit_pod, &s);
	owners_foreach_orphan(j->owned, ns, jobc__visit_pod, &s);
	selector_free(s.sel);
	for (size_t i = 0; i < s.nfail; i++)
		if (s.failure_times[i] >= s.last_success)
			s.failures_after_success++;
	free(s.failure_times);
	if (s.indexed) /* a done index beats its failures */
		for (long long i = 0; i < s.completions; i++)
			if (s.done[i])
				s.failed_idx[i] = false;

	int64_t now = obj_now();
	char ts[RFC3339_SIZE];
	obj_time_format(now, ts);
	const struct ynode *old = ynode_get(job, "status");
	struct ynode *st = old && old->type == YNODE_MAP ? ynode_clone(old) : ynode_new_map();
	bool suspend = jobc__bool(job, "spec.suspend");
	const struct ynode *conds = ynode_get(st, "conditions");
	const struct ynode *susp = condition_find(conds, "Suspended");
	bool was_suspended = susp && condition_field_is(susp, "status", "True");
	long long parallelism = obj_int(job, "spec.parallelism", 1);
	long long backoff_limit = obj_int(job, "spec.backoffLimit", 6);
	long long active_deadline = obj_int(job, "spec.activeDeadlineSeconds", -1);
	int64_t start = obj_time_parse(ynode_path_str(st, "startTime"));
	bool transition = false; /* the status must go with this sync's pod writes */

	/* Suspension: its condition, and startTime anew on resume. */
	if (suspend && !was_suspended) {
		const struct condition c = {"Suspended", "True", "JobSuspended", "Job suspended"};
		condition_set(st, &c, ts, 0);
		jobc__event(j, job, "Normal", "Suspended", "Job suspended");
		transition = true;
	} else if (!suspend && was_suspended) {
		const struct condition c = {"Suspended", "False", "JobResumed", "Job resumed"};
		condition_set(st, &c, ts, 0);
		jobc__event(j, job, "Normal", "Resumed", "Job resumed");
		transition = true;
		start = -1;
		ynode_del(st, "startTime");
	}
	if (!suspend && start < 0) {
		start = now;
		ynode_set(st, "startTime", ynode_new_str(ts));
		transition = true;
	}

	/* Finished? */
	const char *fail_reason = NULL, *fail_msg = NULL;
	long long nfailed_idx = s.indexed ? jobc__count_set(s.failed_idx, s.completions) : 0;
	long long ndone = s.indexed ? jobc__count_set(s.done, s.completions) : 0;
	if (s.fail_job) {
		fail_reason = "PodFailurePolicy";
		fail_msg = s.fail_job;
	} else if (s.per_index < 0 && (s.failed > backoff_limit ||
				       (s.on_failure && (backoff_limit ? s.restarts >= backoff_limit
								       : s.restarts > 0)))) {
		fail_reason = "BackoffLimitExceeded";
		fail_msg = "Job has reached the specified backoff limit";
	} else if (s.indexed && ynode_path(job, "spec.maxFailedIndexes") &&
		   nfailed_idx > obj_int(job, "spec.maxFailedIndexes", 0)) {
		fail_reason = "MaxFailedIndexesExceeded";
		fail_msg = "Job has exceeded the specified maximal number of failed indexes";
	} else if (s.indexed && nfailed_idx && ndone + nfailed_idx >= s.completions && !s.nactive) {
		fail_reason = "FailedIndexes";
		fail_msg = "Job has failed indexes";
	} else if (!suspend && active_deadline > 0 && start >= 0 &&
		   now - start >= active_deadline) {
		fail_reason = "DeadlineExceeded";
		fail_msg = "Job was active longer than specified deadline";
	}
	bool complete = false;
	if (!fail_reason) {
		if (s.indexed)
			complete = ndone >= s.completions;
		else if (s.completions >= 0)
			complete = s.succeeded >= s.completions;
		else
			complete = s.succeeded > 0 && !s.nactive;
	}

	bool finish = fail_reason || complete;
	long long active = (long long)s.nactive;
	if (fail_reason) {
		jobc__delete_active(&s, s.nactive);
		s.failed += active;
		active = 0;
		s.ready = 0;
		const struct condition ft = {"FailureTarget", "True", fail_reason, fail_msg};
		const struct condition f = {"Failed", "True", fail_reason, fail_msg};
		condition_set(st, &ft, ts, 0);
		condition_set(st, &f, ts, 0);
		jobc__event(j, job, "Warning", fail_reason, fail_msg);
	} else if (complete) {
		jobc__delete_active(&s, s.nactive);
		active = 0;
		s.ready = 0;
		const struct condition sc = {"SuccessCriteriaMet", "True", "CompletionsReached",
					     "Reached expected number of succeeded pods"};
		const struct condition c = {"Complete", "True", "CompletionsReached",
					    "Reached expected number of succeeded pods"};
		condition_set(st, &sc, ts, 0);
		condition_set(st, &c, ts, 0);
		ynode_set(st, "completionTime", ynode_new_str(ts));
		jobc__event(j, job, "Normal", "Completed", "Job completed");
	} else if (suspend) {
		jobc__delete_active(&s, s.nactive);
	} else {
		/* Deadline: a timer for it. */
		if (active_deadline > 0 && start >= 0)
			workqueue_add_after(j->q, key,
					    (uint64_t)(start + active_deadline - now) * 1000 + 50);
		long long want =
		    s.indexed ? (s.completions - ndone - nfailed_idx)
			      : job_want_active(parallelism, s.completions, s.succeeded, active);
		if (want > parallelism)
			want = parallelism;
		if (want < 0)
			want = 0;
		long long diff = want - active;
		uint64_t left = diff > 0 ? job_backoff_left_ms(s.failures_after_success,
							       s.last_failure * 1000, now * 1000)
					 : 0;
		if (diff > 0 && left) {
			workqueue_add_after(j->q, key, left + 50);
		} else if (diff > 0) {
			if (diff > j->burst)
				diff = j->burst;
			cleanup_free char *dir = treepath_folder("pods", ns);
			cleanup_free long long *idx = NULL;
			long long n = diff;
			if (s.indexed) {
				idx = xcalloc((size_t)diff, sizeof(long long));
				n = job_indexes_to_create(s.completions, s.done, s.running,
							  s.failed_idx, diff, idx);
			}
			for (long long i = 0; i < n; i++) {
				long long index = idx ? idx[i] : -1;
				struct ynode *pod =
				    job_pod_new(job, index, index >= 0 ? s.idx_failures[index] : 0);
				struct jobc__op *op = jobc__op_new(j, key, job, NULL);
				writer_create(j->c->writer, dir, pod, WRITER_GENERATE,
					      jobc__created, op);
				s.writes++;
			}
		} else if (diff < 0 && !s.indexed) {
			rsc_pods_colocate(s.active, s.nactive);
			rsc_rank_for_deletion(s.active, s.nactive);
			jobc__delete_active(&s, (size_t)-diff);
		}
	}

	if (!s.writes || finish || transition) {
		jobc__set_count(st, "active", active);
		ynode_set(st, "ready", ynode_new_int(s.ready));
		jobc__set_count(st, "succeeded", s.succeeded);
		jobc__set_count(st, "failed", s.failed);
		if (s.indexed) {
			cleanup_free char *ci = job_format_indexes(s.done, s.completions);
			if (*ci)
				ynode_set(st, "completedIndexes", ynode_new_str(ci));
			else
				ynode_del(st, "completedIndexes");
			if (s.per_index >= 0) {
				cleanup_free char *fi =
				    job_format_indexes(s.failed_idx, s.completions);
				ynode_set(st, "failedIndexes", ynode_new_str(fi));
			}
		}
		ynode_set(st, "uncountedTerminatedPods", ynode_new_map());
		ynode_sort(st);
		if (!ynode_equal(st, old)) {
			cleanup_free char *path = obj_path("jobs", ns, obj_name(job));
			struct jobc__op *op = jobc__op_new(j, key, job, NULL);
			writer_update(j->c->writer, path, ctrl_mutate_status, st, ctrl_ynode_free,
				      0, jobc__written_status, op);
			st = NULL;
		}
	}
	ynode_free(st);
	free(s.active);
	free(s.done);
	free(s.running);
	free(s.failed_idx);
	free(s.idx_failures);
	free(s.fail_job);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void jobc__on_job(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct jobc *j = data;
	workqueue_add(j->q, key);
}

static void jobc__on_job_update(void *data, const char *key, const struct ynode *old,
				const struct ynode *obj)
{
	(void)old;
	jobc__on_job(data, key, obj);
}

static bool jobc__enqueue_owner(struct jobc *j, const struct ynode *pod)
{
	bool controlled = false;
	cleanup_free char *key = adopt_resolve_owner(j->jobs, "Job", pod, &controlled);
	if (key)
		workqueue_add(j->q, key);
	return controlled;
}

struct jobc__match {
	struct jobc *j;
	const struct ynode *labels;
};

static int jobc__visit_match(void *data, const char *key, const struct ynode *job)
{
	struct jobc__match *m = data;
	cleanup_selector struct selector *sel = NULL;
	if (jobc__selector(job, &sel, NULL) == 0 && selector_matches(sel, m->labels))
		workqueue_add(m->j->q, key);
	return 0;
}

static void jobc__on_pod_add(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct jobc *j = data;
	if (!jobc__enqueue_owner(j, pod) && pod_is_active(pod)) {
		struct jobc__match m = {.j = j, .labels = ynode_path(pod, "metadata.labels")};
		informer_foreach(j->jobs, obj_namespace(pod), jobc__visit_match, &m);
	}
}

static void jobc__on_pod_update(void *data, const char *key, const struct ynode *old,
				const struct ynode *pod)
{
	struct jobc *j = data;
	if (!ynode_equal(obj_controller_ref(old), obj_controller_ref(pod)) &&
	    obj_controller_ref(old))
		jobc__enqueue_owner(j, old);
	jobc__on_pod_add(data, key, pod);
}

static void jobc__on_pod_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	jobc__enqueue_owner(data, old);
}

struct jobc *jobc_new(struct ctrl *c)
{
	struct jobc *j = xcalloc(1, sizeof(*j));
	j->c = c;
	j->burst = c->cfg && c->cfg->burst_replicas > 0 ? c->cfg->burst_replicas : 500;
	j->jobs = ctrl_informer(c, "jobs");
	j->pods = ctrl_informer(c, "pods");
	j->owned = ctrl_owners(c, "pods");
	j->q = workqueue_new(c->loop, "jobs", NULL);
	j->exp = expect_new();
	struct informer_handlers jh = {
	    .on_add = jobc__on_job,
	    .on_update = jobc__on_job_update,
	    .on_delete = jobc__on_job,
	};
	informer_add_handlers(j->jobs, &jh, j);
	struct informer_handlers ph = {
	    .on_add = jobc__on_pod_add,
	    .on_update = jobc__on_pod_update,
	    .on_delete = jobc__on_pod_delete,
	};
	informer_add_handlers(j->pods, &ph, j);
	workqueue_set_handler(j->q, jobc__sync, j);
	return j;
}

void jobc_free(struct jobc *j)
{
	if (!j)
		return;
	workqueue_free(j->q);
	expect_free(j->exp);
	free(j);
}
