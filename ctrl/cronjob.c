/* cronjob.c: the CronJob controller.
 *
 * One sync per CronJob key, as Kubernetes' syncCronJob: reconcile
 * status.active with the Jobs it owns (finished ones leave it, missing
 * ones too), then decide whether a scheduled time is due, create its Job,
 * prune finished Jobs beyond the history limits and write the status. A
 * Job's uid is known only once the informer shows it, so a created Job
 * joins status.active at the next sync, which waits for it (expect.h); a
 * corral-ctrl stopped in between finds the Job by its name at the same
 * scheduled time (EEXIST) and carries on.
 *
 * The wake-ups: a min-heap of (wall-clock time, key) and one timerfd on
 * CLOCK_REALTIME armed at its top, with TFD_TIMER_CANCEL_ON_SET so that a
 * change of the clock wakes it and every CronJob is synced again. A key
 * rescheduled leaves its older heap entry behind; entries are checked
 * against the key's current time when they come up.
 *
 * This file must never write a Job that no CronJob of its own owns. */
#include "cronjob.h"
#include "adopt.h"
#include "conditions.h"
#include "ctrl.h"
#include "events.h"
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "owners.h"
#include "timefmt.h"
#include "treepath.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CRONJOBC__DELTA_MS  100 /* Kubernetes' nextScheduleDelta */
#define CRONJOBC__COMPONENT "cronjob-controller"

/* ---- decision logic ---------------------------------------------------- */

int cronjobc_most_recent(const struct ynode *cj, const struct cron_schedule *s,
			 const struct cron_zone *z, int64_t now, bool with_deadline,
			 int64_t *earliest_out, int64_t *recent, long long *missed,
			 struct error **err)
{
	*recent = -1;
	*missed = 0;
	int64_t earliest = obj_time_parse(ynode_path_str(cj, "metadata.creationTimestamp"));
	int64_t last = obj_time_parse(ynode_path_str(cj, "status.lastScheduleTime"));
	if (last >= 0)
		earliest = last;
	if (earliest < 0)
		earliest = now;
	long long deadline = obj_int(cj, "spec.startingDeadlineSeconds", -1);
	if (with_deadline && deadline >= 0 && now - deadline > earliest)
		earliest = now - deadline;
	*earliest_out = earliest;
	int64_t t1 = cron_next(s, z, earliest);
	if (t1 < 0 || now < t1)
		return 0;
	int64_t t2 = cron_next(s, z, t1);
	if (t2 < 0 || now < t2) {
		*recent = t1;
		return 0;
	}
	int64_t between = t2 - t1;
	if (between < 1)
		return error_set(err, EINVAL,
				 "time difference between two schedules is less than 1 second");
	long long n = (now - t1) / between + 1;
	*missed = n;
	/* Kubernetes' estimate: start two intervals before the count's end. */
	int64_t t = cron_next(s, z, t1 + (n - 2) * between);
	for (; t >= 0 && t <= now; t = cron_next(s, z, t))
		*recent = t;
	return 0;
}

static bool cronjobc__active_has_name(const struct ynode *cj, const char *name)
{
	const struct ynode *active = ynode_path(cj, "status.active");
	for (size_t i = 0; active && active->type == YNODE_SEQ && i < active->n; i++) {
		const char *n = ynode_path_str(ynode_item(active, i), "name");
		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static size_t cronjobc__active_count(const struct ynode *cj)
{
	const struct ynode *active = ynode_path(cj, "status.active");
	return active && active->type == YNODE_SEQ ? active->n : 0;
}

/* Kubernetes' nextScheduleTimeDuration: the next time after the most
 * recent one (or after earliest when none was missed, or now). */
static int64_t cronjobc__wake_ms(const struct ynode *cj, const struct cron_schedule *s,
				 const struct cron_zone *z, int64_t now)
{
	int64_t earliest = now, recent = -1;
	long long missed = 0;
	int64_t from = now;
	if (cronjobc_most_recent(cj, s, z, now, false, &earliest, &recent, &missed, NULL) == 0)
		from = recent >= 0 ? recent : missed ? now : earliest;
	int64_t next = cron_next(s, z, from);
	if (next < 0)
		return -1;
	return next * 1000 + CRONJOBC__DELTA_MS;
}

int cronjobc_plan(const struct ynode *cj, const struct cron_schedule *s, const struct cron_zone *z,
		  int64_t now, struct cronjobc_plan *p, struct error **err)
{
	memset(p, 0, sizeof(*p));
	p->scheduled = -1;
	p->wake_ms = cronjobc__wake_ms(cj, s, z, now);
	int64_t earliest = 0, recent = -1;
	if (cronjobc_most_recent(cj, s, z, now, true, &earliest, &recent, &p->missed, err) < 0)
		return -EINVAL;
	if (recent < 0)
		return 0;
	p->scheduled = recent;
	long long deadline = obj_int(cj, "spec.startingDeadlineSeconds", -1);
	if (deadline >= 0 && recent + deadline < now) {
		p->too_late = true;
		return 0;
	}
	cleanup_free char *name = cronjobc_job_name(obj_name(cj), recent);
	int64_t last = obj_time_parse(ynode_path_str(cj, "status.lastScheduleTime"));
	if (cronjobc__active_has_name(cj, name) || last == recent) {
		p->done = true;
		return 0;
	}
	const char *policy = ynode_path_str(cj, "spec.concurrencyPolicy");
	if (policy && !strcmp(policy, "Forbid") && cronjobc__active_count(cj) > 0)
		p->forbidden = true;
	return 0;
}

char *cronjobc_job_name(const char *cronjob, int64_t scheduled)
{
	return xasprintf("%s-%lld", cronjob, (long long)(scheduled / 60));
}

/* Go's time.RFC3339 of t in z: "2026-12-01T14:16:00+01:00", "Z" for UTC. */
static void cronjobc__format_local(int64_t t, const struct cron_zone *z, char buf[32])
{
	int off = z ? cron_zone_offset(z, t, NULL) : 0;
	char utc[RFC3339_SIZE];
	rfc3339_format((time_t)(t + off), utc);
	if (!off) {
		snprintf(buf, 32, "%s", utc);
		return;
	}
	int a = off < 0 ? -off : off;
	snprintf(buf, 32, "%.19s%c%02d:%02d", utc, off < 0 ? '-' : '+', a / 3600, a % 3600 / 60);
}

struct ynode *cronjobc_job_from_template(const struct ynode *cj, int64_t scheduled,
					 const struct cron_zone *z)
{
	const struct ynode *t = ynode_path(cj, "spec.jobTemplate");
	struct ynode *job = ynode_new_map();
	ynode_set(job, "apiVersion", ynode_new_str("batch/v1"));
	ynode_set(job, "kind", ynode_new_str("Job"));
	struct ynode *md = ynode_get_map(job, "metadata");
	cleanup_free char *name = cronjobc_job_name(obj_name(cj), scheduled);
	ynode_set(md, "name", ynode_new_str(name));
	if (obj_namespace(cj))
		ynode_set(md, "namespace", ynode_new_str(obj_namespace(cj)));
	const struct ynode *labels = ynode_path(t, "metadata.labels");
	if (labels && labels->type == YNODE_MAP)
		ynode_set(md, "labels", ynode_clone(labels));
	const struct ynode *ann = ynode_path(t, "metadata.annotations");
	struct ynode *annotations =
	    ann && ann->type == YNODE_MAP ? ynode_clone(ann) : ynode_new_map();
	char ts[32];
	cronjobc__format_local(scheduled, z, ts);
	ynode_set(annotations, CRONJOBC_SCHEDULED_ANNOTATION, ynode_new_str(ts));
	ynode_set(md, "annotations", annotations);
	obj_add_owner_ref(
	    job, obj_owner_ref_new("batch/v1", "CronJob", obj_name(cj), obj_uid(cj), true));
	const struct ynode *spec = ynode_get(t, "spec");
	ynode_set(job, "spec", spec ? ynode_clone(spec) : ynode_new_map());
	return job;
}

bool cronjobc_job_finished(const struct ynode *job, const char **condition)
{
	const struct ynode *conds = ynode_path(job, "status.conditions");
	static const char *const types[] = {"Complete", "Failed"};
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		const struct ynode *c = condition_find(conds, types[i]);
		if (c && condition_field_is(c, "status", "True")) {
			if (condition)
				*condition = types[i];
			return true;
		}
	}
	return false;
}

struct cronjobc__aged {
	size_t index;
	int64_t start; /* -1: none */
	const char *name;
};

/* Kubernetes' byJobStartTime: oldest first, no start time last, then by
 * name. */
static int cronjobc__aged_cmp(const void *pa, const void *pb)
{
	const struct cronjobc__aged *a = pa, *b = pb;
	if ((a->start < 0) != (b->start < 0))
		return a->start < 0 ? 1 : -1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return strcmp(a->name, b->name);
}

static size_t cronjobc__prune_kind(const struct ynode *const *jobs, size_t n, const char *kind,
				   long long limit, size_t *out)
{
	if (limit < 0)
		return 0;
	struct cronjobc__aged *aged = xcalloc(n + 1, sizeof(*aged));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const char *cond = NULL;
		if (!cronjobc_job_finished(jobs[i], &cond) || strcmp(cond, kind))
			continue;
		aged[m].index = i;
		aged[m].start = obj_time_parse(ynode_path_str(jobs[i], "status.startTime"));
		aged[m].name = obj_name(jobs[i]) ? obj_name(jobs[i]) : "";
		m++;
	}
	size_t k = 0;
	if ((long long)m > limit) {
		qsort(aged, m, sizeof(*aged), cronjobc__aged_cmp);
		for (; k < m - (size_t)limit; k++)
			out[k] = aged[k].index;
	}
	free(aged);
	return k;
}

size_t cronjobc_prune(const struct ynode *const *jobs, size_t n, long long successful_limit,
		      long long failed_limit, size_t *out)
{
	size_t k = cronjobc__prune_kind(jobs, n, "Complete", successful_limit, out);
	return k + cronjobc__prune_kind(jobs, n, "Failed", failed_limit, out + k);
}

/* ---- the controller ---------------------------------------------------- */

/* One entry of the wake-up heap. */
struct cronjobc__wake {
	int64_t at_ms;
	char *key;
};

/* A Job created (or found there already) that is not in status.active yet. */
struct cronjobc__created {
	char *name;
	int64_t scheduled;
};

struct cronjobc {
	struct ctrl *c;
	struct informer *cronjobs;
	struct informer *jobs;
	struct owners *owned; /* jobs by controller */
	struct workqueue *q;
	struct expect *exp;
	struct keymap *zones;	 /* timeZone -> struct cron_zone */
	struct cron_zone *local; /* corral-ctrl's own zone */
	struct keymap *created;	 /* key -> struct cronjobc__created */
	struct keymap *wake_at;	 /* key -> int64_t * (its current wake-up) */
	struct cronjobc__wake *heap;
	size_t nheap, capheap;
	int tfd; /* CLOCK_REALTIME timerfd, -1 if none */
	int64_t armed_ms;
};

/* A write in flight for a CronJob. */
struct cronjobc__op {
	struct cronjobc *cc;
	char *owner; /* the CronJob's key */
	char *ns;
	char *name; /* the CronJob's */
	char *uid;
	char *job; /* the Job's name */
	int64_t scheduled;
};

static void cronjobc__arm(struct cronjobc *cc);

static void cronjobc__heap_swap(struct cronjobc *cc, size_t a, size_t b)
{
	struct cronjobc__wake t = cc->heap[a];
	cc->heap[a] = cc->heap[b];
	cc->heap[b] = t;
}

static void cronjobc__heap_push(struct cronjobc *cc, int64_t at_ms, const char *key)
{
	if (cc->nheap == cc->capheap) {
		cc->capheap = cc->capheap ? 2 * cc->capheap : 64;
		cc->heap = xrealloc(cc->heap, cc->capheap * sizeof(*cc->heap));
	}
	size_t i = cc->nheap++;
	cc->heap[i] = (struct cronjobc__wake){at_ms, xstrdup(key)};
	while (i > 0 && cc->heap[(i - 1) / 2].at_ms > cc->heap[i].at_ms) {
		cronjobc__heap_swap(cc, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

/* Moves the entry at i down to its place. */
static void cronjobc__heap_down(struct cronjobc *cc, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < cc->nheap && cc->heap[l].at_ms < cc->heap[m].at_ms)
			m = l;
		if (r < cc->nheap && cc->heap[r].at_ms < cc->heap[m].at_ms)
			m = r;
		if (m == i)
			return;
		cronjobc__heap_swap(cc, i, m);
		i = m;
	}
}

/* Removes the top; the caller frees its key. */
static struct cronjobc__wake cronjobc__heap_pop(struct cronjobc *cc)
{
	struct cronjobc__wake top = cc->heap[0];
	cc->heap[0] = cc->heap[--cc->nheap];
	cronjobc__heap_down(cc, 0);
	return top;
}

/* Whether a heap entry is the key's current wake-up. */
static bool cronjobc__wake_current(struct cronjobc *cc, const struct cronjobc__wake *w)
{
	const int64_t *at = keymap_get(cc->wake_at, w->key);
	return at && *at == w->at_ms;
}

/* Drops the stale entries when they outnumber the live ones. */
static void cronjobc__heap_compact(struct cronjobc *cc)
{
	if (cc->nheap < 2 * keymap_count(cc->wake_at) + 64)
		return;
	size_t j = 0;
	for (size_t i = 0; i < cc->nheap; i++) {
		if (cronjobc__wake_current(cc, &cc->heap[i]))
			cc->heap[j++] = cc->heap[i];
		else
			free(cc->heap[i].key);
	}
	cc->nheap = j;
	/* Re-heapify bottom-up. */
	for (size_t k = cc->nheap / 2; k-- > 0;)
		cronjobc__heap_down(cc, k);
}

/* key syncs again at wall-clock at_ms (-1: not on a timer). */
static void cronjobc__wake_key(struct cronjobc *cc, const char *key, int64_t at_ms)
{
	if (at_ms < 0) {
		keymap_del(cc->wake_at, key);
		return;
	}
	int64_t *cur = keymap_get(cc->wake_at, key);
	if (cur && *cur == at_ms)
		return;
	int64_t *v = xmalloc(sizeof(*v));
	*v = at_ms;
	keymap_set(cc->wake_at, key, v);
	cronjobc__heap_push(cc, at_ms, key);
	cronjobc__heap_compact(cc);
	cronjobc__arm(cc);
}

static int64_t cronjobc__wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Arms the timerfd at the heap's first current entry. */
static void cronjobc__arm(struct cronjobc *cc)
{
	while (cc->nheap && !cronjobc__wake_current(cc, &cc->heap[0])) {
		struct cronjobc__wake w = cronjobc__heap_pop(cc);
		free(w.key);
	}
	int64_t at = cc->nheap ? cc->heap[0].at_ms : -1;
	if (cc->tfd < 0 || at == cc->armed_ms)
		return;
	struct itimerspec its = {0};
	if (at >= 0) {
		its.it_value.tv_sec = at / 1000;
		its.it_value.tv_nsec = (at % 1000) * 1000000;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(cc->tfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0)
		log_warn("cronjob: cannot arm the timer: %s", strerror(errno));
	cc->armed_ms = at;
}

static int cronjobc__visit_enqueue(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	workqueue_add(data, key);
	return 0;
}

static void cronjobc__on_timer(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct cronjobc *cc = data;
	uint64_t ticks = 0;
	ssize_t r = read(fd, &ticks, sizeof(ticks));
	cc->armed_ms = -2; /* re-arm whatever comes next */
	if (r < 0 && errno == ECANCELED) {
		/* The clock was set: every CronJob looks at its times again. */
		log_info("cronjob: the clock changed; looking at every CronJob again");
		informer_foreach(cc->cronjobs, NULL, cronjobc__visit_enqueue, cc->q);
	}
	int64_t now = cronjobc__wall_ms();
	while (cc->nheap && cc->heap[0].at_ms <= now) {
		struct cronjobc__wake w = cronjobc__heap_pop(cc);
		if (cronjobc__wake_current(cc, &w)) {
			keymap_del(cc->wake_at, w.key);
			workqueue_add(cc->q, w.key);
		}
		free(w.key);
	}
	cronjobc__arm(cc);
}

/* ---- writes ------------------------------------------------------------- */

static struct cronjobc__op *cronjobc__op_new(struct cronjobc *cc, const char *owner,
					     const struct ynode *cj, const char *job)
{
	struct cronjobc__op *op = xcalloc(1, sizeof(*op));
	op->cc = cc;
	op->owner = xstrdup(owner);
	op->ns = xstrdup(obj_namespace(cj) ? obj_namespace(cj) : "");
	op->name = xstrdup(obj_name(cj));
	op->uid = xstrdup(obj_uid(cj) ? obj_uid(cj) : "");
	op->job = job ? xstrdup(job) : NULL;
	expect_write(cc->exp, owner);
	return op;
}

static void cronjobc__op_free(struct cronjobc__op *op)
{
	free(op->owner);
	free(op->ns);
	free(op->name);
	free(op->uid);
	free(op->job);
	free(op);
}

static void cronjobc__event(struct cronjobc *cc, const char *ns, const char *name, const char *uid,
			    const char *type, const char *reason, const char *fmt, const char *arg)
{
	if (!cc->c->events)
		return;
	events_record_ref(cc->c->events, CRONJOBC__COMPONENT, "batch/v1", "CronJob", ns, name, uid,
			  type, reason, fmt, arg);
}

static void cronjobc__op_event(struct cronjobc__op *op, const char *type, const char *reason,
			       const char *fmt, const char *arg)
{
	cronjobc__event(op->cc, op->ns, op->name, op->uid, type, reason, fmt, arg);
}

static void cronjobc__created_free(void *p)
{
	struct cronjobc__created *c = p;
	if (c) {
		free(c->name);
		free(c);
	}
}

static void cronjobc__note_created(struct cronjobc *cc, const struct cronjobc__op *op)
{
	struct cronjobc__created *c = xcalloc(1, sizeof(*c));
	c->name = xstrdup(op->job);
	c->scheduled = op->scheduled;
	keymap_set(cc->created, op->owner, c);
}

static void cronjobc__job_created(void *data, const struct writer_result *res)
{
	struct cronjobc__op *op = data;
	struct cronjobc *cc = op->cc;
	cleanup_free char *key = obj_key(op->ns, op->job);
	uint64_t now = loop_now_ms();
	if (res->status == 0) {
		expect_written(cc->exp, op->owner, true, cc->jobs, key, res->min_rv, false, now);
		cronjobc__note_created(cc, op);
		cronjobc__op_event(op, "Normal", "SuccessfulCreate", "Created job %s", op->job);
		workqueue_forget(cc->q, op->owner);
		workqueue_add(cc->q, op->owner);
	} else if (res->status == EEXIST) {
		/* Made by an earlier corral-ctrl for the same time: the sync
		 * checks that it is ours before it counts it. */
		expect_written(cc->exp, op->owner, true, cc->jobs, key, 1, false, now);
		log_info("CronJob %s: job %s already exists", op->owner, op->job);
		cronjobc__note_created(cc, op);
		workqueue_add(cc->q, op->owner);
	} else {
		expect_written(cc->exp, op->owner, false, NULL, NULL, 0, false, now);
		log_warn("CronJob %s: cannot create job %s: %s", op->owner, op->job, res->msg);
		cronjobc__op_event(op, "Warning", "FailedCreate", "Error creating job: %s",
				   res->msg);
		workqueue_add_rate_limited(cc->q, op->owner);
	}
	cronjobc__op_free(op);
}

static void cronjobc__job_deleted(void *data, const struct writer_result *res)
{
	struct cronjobc__op *op = data;
	struct cronjobc *cc = op->cc;
	cleanup_free char *key = obj_key(op->ns, op->job);
	expect_written(cc->exp, op->owner, res->status == 0, cc->jobs, key, 0, true, loop_now_ms());
	if (res->status == 0) {
		cronjobc__op_event(op, "Normal", "SuccessfulDelete", "Deleted job %s", op->job);
	} else if (res->status != ENOENT && res->status != ESTALE) {
		log_warn("CronJob %s: cannot delete job %s: %s", op->owner, op->job, res->msg);
		cronjobc__op_event(op, "Warning", "FailedDelete", "Deleted job: %s", res->msg);
	}
	workqueue_add(cc->q, op->owner);
	cronjobc__op_free(op);
}

static void cronjobc__status_written(void *data, const struct writer_result *res)
{
	struct cronjobc__op *op = data;
	struct cronjobc *cc = op->cc;
	expect_written(cc->exp, op->owner, res->status == 0, cc->cronjobs, op->owner, res->min_rv,
		       false, loop_now_ms());
	if (res->status && res->status != ENOENT)
		log_warn("CronJob %s: cannot write the status: %s", op->owner, res->msg);
	workqueue_add(cc->q, op->owner);
	cronjobc__op_free(op);
}

static void cronjobc__delete_job(struct cronjobc *cc, const char *key, const struct ynode *cj,
				 const struct ynode *job)
{
	cleanup_free char *path = obj_path("jobs", obj_namespace(job), obj_name(job));
	struct cronjobc__op *op = cronjobc__op_new(cc, key, cj, obj_name(job));
	writer_delete(cc->c->writer, path, obj_uid(job), 0, cronjobc__job_deleted, op);
}

/* ---- sync --------------------------------------------------------------- */

static const struct cron_zone *cronjobc__zone(struct cronjobc *cc, const char *name,
					      struct error **err)
{
	if (!name)
		return cc->local;
	struct cron_zone *z = keymap_get(cc->zones, name);
	if (z)
		return z;
	if (cron_zone_load(name, &z, err) < 0)
		return NULL;
	keymap_set(cc->zones, name, z);
	return z;
}

struct cronjobc__children {
	const struct ynode **jobs;
	size_t n, cap;
};

static int cronjobc__visit_job(void *data, const char *key, const struct ynode *job)
{
	(void)key;
	struct cronjobc__children *ch = data;
	if (ch->n == ch->cap) {
		ch->cap = ch->cap ? 2 * ch->cap : 8;
		ch->jobs = xrealloc(ch->jobs, ch->cap * sizeof(*ch->jobs));
	}
	ch->jobs[ch->n++] = job;
	return 0;
}

static const struct ynode *cronjobc__child_by_uid(const struct cronjobc__children *ch,
						  const char *uid)
{
	for (size_t i = 0; uid && i < ch->n; i++)
		if (obj_uid(ch->jobs[i]) && !strcmp(obj_uid(ch->jobs[i]), uid))
			return ch->jobs[i];
	return NULL;
}

static const struct ynode *cronjobc__child_by_name(const struct cronjobc__children *ch,
						   const char *name)
{
	for (size_t i = 0; name && i < ch->n; i++)
		if (obj_name(ch->jobs[i]) && !strcmp(obj_name(ch->jobs[i]), name))
			return ch->jobs[i];
	return NULL;
}

static struct ynode *cronjobc__job_ref(const struct ynode *job)
{
	struct ynode *ref = ynode_new_map();
	ynode_set(ref, "apiVersion", ynode_new_str("batch/v1"));
	ynode_set(ref, "kind", ynode_new_str("Job"));
	ynode_set(ref, "name", ynode_new_str(obj_name(job)));
	if (obj_namespace(job))
		ynode_set(ref, "namespace", ynode_new_str(obj_namespace(job)));
	if (obj_rv(job))
		ynode_set(ref, "resourceVersion", ynode_new_str(obj_rv(job)));
	if (obj_uid(job))
		ynode_set(ref, "uid", ynode_new_str(obj_uid(job)));
	return ref;
}

/* Removes the status.active entry at i (the list too when empty). */
static void cronjobc__active_remove(struct ynode *st, size_t i)
{
	struct ynode *active = ynode_get(st, "active");
	struct ynode *keep = ynode_new_seq();
	for (size_t j = 0; j < active->n; j++)
		if (j != i)
			ynode_append(keep, ynode_clone(ynode_item(active, j)));
	if (keep->n)
		ynode_set(st, "active", keep);
	else {
		ynode_free(keep);
		ynode_del(st, "active");
	}
}

static void cronjobc__active_add(struct ynode *st, const struct ynode *job)
{
	struct ynode *active = ynode_get(st, "active");
	if (!active || active->type != YNODE_SEQ) {
		active = ynode_new_seq();
		ynode_set(st, "active", active);
	}
	ynode_append(active, cronjobc__job_ref(job));
}

static void cronjobc__set_time(struct ynode *st, const char *field, int64_t t)
{
	char ts[RFC3339_SIZE];
	obj_time_format(t, ts);
	ynode_set(st, field, ynode_new_str(ts));
}

/* The time a Job completed: completionTime, else its Complete condition's
 * lastTransitionTime. */
static int64_t cronjobc__completed_at(const struct ynode *job)
{
	int64_t t = obj_time_parse(ynode_path_str(job, "status.completionTime"));
	if (t >= 0)
		return t;
	const struct ynode *c = condition_find(ynode_path(job, "status.conditions"), "Complete");
	return c ? obj_time_parse(ynode_path_str(c, "lastTransitionTime")) : -1;
}

/* Reconciles status.active with the children; the status to write. */
static struct ynode *cronjobc__reconcile(struct cronjobc *cc, const char *key,
					 const struct ynode *cj,
					 const struct cronjobc__children *ch)
{
	const struct ynode *old = ynode_get(cj, "status");
	struct ynode *st = old && old->type == YNODE_MAP ? ynode_clone(old) : ynode_new_map();
	const char *ns = obj_namespace(cj), *name = obj_name(cj), *uid = obj_uid(cj);
	struct cronjobc__created *made = keymap_get(cc->created, key);
	if (made) {
		const struct ynode *job = cronjobc__child_by_name(ch, made->name);
		if (job && !cronjobc__active_has_name(cj, made->name) &&
		    !cronjobc_job_finished(job, NULL))
			cronjobc__active_add(st, job);
		int64_t last = obj_time_parse(ynode_path_str(st, "lastScheduleTime"));
		if (last < made->scheduled)
			cronjobc__set_time(st, "lastScheduleTime", made->scheduled);
		if (!job)
			log_info("CronJob %s: job %s went before it was seen", key, made->name);
		keymap_del(cc->created, key);
	}
	int64_t last_ok = obj_time_parse(ynode_path_str(st, "lastSuccessfulTime"));
	for (size_t i = 0; i < ch->n; i++) {
		const struct ynode *job = ch->jobs[i];
		const struct ynode *active = ynode_get(st, "active");
		size_t at = SIZE_MAX;
		for (size_t j = 0; active && active->type == YNODE_SEQ && j < active->n; j++) {
			const char *u = ynode_path_str(ynode_item(active, j), "uid");
			if (u && obj_uid(job) && !strcmp(u, obj_uid(job)))
				at = j;
		}
		const char *cond = NULL;
		bool finished = cronjobc_job_finished(job, &cond);
		if (at == SIZE_MAX && !finished) {
			cronjobc__event(
			    cc, ns, name, uid, "Warning", "UnexpectedJob",
			    "Saw a job that the controller did not create or forgot: %s",
			    obj_name(job));
		} else if (at != SIZE_MAX && finished) {
			cronjobc__active_remove(st, at);
			cleanup_free char *what =
			    xasprintf("%s, condition: %s", obj_name(job), cond);
			cronjobc__event(cc, ns, name, uid, "Normal", "SawCompletedJob",
					"Saw completed job: %s", what);
		}
		if (finished && !strcmp(cond, "Complete")) {
			int64_t t = cronjobc__completed_at(job);
			if (t > last_ok) {
				last_ok = t;
				cronjobc__set_time(st, "lastSuccessfulTime", t);
			}
		}
	}
	/* Active Jobs that are gone. */
	const struct ynode *active = ynode_get(st, "active");
	for (size_t j = active && active->type == YNODE_SEQ ? active->n : 0; j-- > 0;) {
		const struct ynode *ref = ynode_item(active, j);
		if (cronjobc__child_by_uid(ch, ynode_path_str(ref, "uid")))
			continue;
		const char *jname = ynode_path_str(ref, "name");
		cleanup_free char *jkey = obj_key(ns, jname ? jname : "");
		const struct ynode *job = informer_get(cc->jobs, jkey);
		if (job && obj_uid(job) && ynode_path_str(ref, "uid") &&
		    !strcmp(obj_uid(job), ynode_path_str(ref, "uid")))
			continue; /* there, but no longer ours: Kubernetes keeps it */
		cronjobc__event(cc, ns, name, uid, "Normal", "MissingJob",
				"Active job went missing: %s", jname ? jname : "");
		cronjobc__active_remove(st, j);
		active = ynode_get(st, "active");
	}
	return st;
}

static void cronjobc__write_status(struct cronjobc *cc, const char *key, const struct ynode *cj,
				   struct ynode *st)
{
	if (ynode_equal(st, ynode_get(cj, "status"))) {
		ynode_free(st);
		return;
	}
	cleanup_free char *path = obj_path("cronjobs", obj_namespace(cj), obj_name(cj));
	struct cronjobc__op *op = cronjobc__op_new(cc, key, cj, NULL);
	writer_update(cc->c->writer, path, ctrl_mutate_status, st, ctrl_ynode_free, 0,
		      cronjobc__status_written, op);
}

/* RFC 1123 with a numeric zone, in UTC, as Kubernetes' MissSchedule says. */
static void cronjobc__rfc1123z(int64_t t, char buf[40])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	snprintf(buf, 40, "%s, %02d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday], tm.tm_mday,
		 months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static int cronjobc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct cronjobc *cc = data;
	const struct ynode *cj = informer_get(cc->cronjobs, key);
	if (!cj) {
		expect_forget(cc->exp, key);
		keymap_del(cc->created, key);
		cronjobc__wake_key(cc, key, -1);
		return 0;
	}
	uint64_t now_ms = loop_now_ms(), recheck = 0;
	if (!expect_ready(cc->exp, key, now_ms, &recheck)) {
		if (recheck)
			workqueue_add_after(cc->q, key, recheck);
		return 0;
	}
	const char *ns = obj_namespace(cj), *name = obj_name(cj), *uid = obj_uid(cj);
	struct cronjobc__children ch = {0};
	owners_foreach_owned(cc->owned, uid, cronjobc__visit_job, &ch);
	struct ynode *st = cronjobc__reconcile(cc, key, cj, &ch);
	/* The decisions read the reconciled status. */
	cleanup_ynode struct ynode *view = ynode_clone(cj);
	ynode_set(view, "status", ynode_clone(st));

	const char *tzname = ynode_path_str(cj, "spec.timeZone");
	const char *sched = ynode_path_str(cj, "spec.schedule");
	cleanup_error struct error *zerr = NULL, *serr = NULL, *perr = NULL;
	cleanup_cron struct cron_schedule *s = NULL;
	const struct cron_zone *z = NULL;
	bool deleting = ynode_path(cj, "metadata.deletionTimestamp") != NULL;
	bool suspended = false;
	if (ynode_bool(ynode_path(cj, "spec.suspend"), &suspended) < 0)
		suspended = false;
	struct cronjobc_plan plan = {.scheduled = -1, .wake_ms = -1};
	bool create = false;
	if (deleting) {
		;
	} else if (!(z = cronjobc__zone(cc, tzname, &zerr))) {
		cleanup_free char *q = xasprintf("\"%s\": %s", tzname, zerr->msg);
		cronjobc__event(cc, ns, name, uid, "Warning", "UnknownTimeZone",
				"invalid timeZone: %s", q);
	} else if (suspended) {
		;
	} else if (cron_parse(sched ? sched : "", &s, &serr) < 0) {
		cleanup_free char *q = xasprintf("\"%s\" : %s", sched ? sched : "", serr->msg);
		cronjobc__event(cc, ns, name, uid, "Warning", "UnparseableSchedule",
				"unparseable schedule: %s", q);
	} else if (cronjobc_plan(view, s, z, obj_now(), &plan, &perr) < 0) {
		cleanup_free char *q = xasprintf("%s : %s", sched, perr->msg);
		cronjobc__event(cc, ns, name, uid, "Warning", "InvalidSchedule",
				"invalid schedule: %s", q);
	} else if (plan.scheduled >= 0) {
		if (plan.missed > CRONJOBC_MANY_MISSED && !plan.done) {
			cleanup_free char *n = xasprintf("%lld", plan.missed);
			cronjobc__event(cc, ns, name, uid, "Warning", "TooManyMissedTimes",
					"too many missed start times: %s. Set or decrease "
					".spec.startingDeadlineSeconds or check clock skew",
					n);
		}
		if (plan.too_late) {
			char when[40];
			cronjobc__rfc1123z(plan.scheduled, when);
			cronjobc__event(cc, ns, name, uid, "Warning", "MissSchedule",
					"Missed scheduled time to start a job: %s", when);
		} else if (plan.forbidden) {
			cronjobc__event(cc, ns, name, uid, "Normal", "JobAlreadyActive",
					"Not starting job because prior execution is running and "
					"concurrency policy is %s",
					"Forbid");
		} else if (!plan.done) {
			create = true;
		}
	}

	if (create) {
		const char *policy = ynode_path_str(cj, "spec.concurrencyPolicy");
		if (policy && !strcmp(policy, "Replace")) {
			const struct ynode *active;
			while ((active = ynode_get(st, "active")) && active->type == YNODE_SEQ &&
			       active->n) {
				const struct ynode *ref = ynode_item(active, 0);
				const struct ynode *job =
				    cronjobc__child_by_uid(&ch, ynode_path_str(ref, "uid"));
				if (job)
					cronjobc__delete_job(cc, key, cj, job);
				cronjobc__active_remove(st, 0);
			}
		}
		struct ynode *job = cronjobc_job_from_template(cj, plan.scheduled, z);
		cleanup_free char *dir = treepath_folder("jobs", ns);
		struct cronjobc__op *op = cronjobc__op_new(cc, key, cj, obj_name(job));
		op->scheduled = plan.scheduled;
		writer_create(cc->c->writer, dir, job, 0, cronjobc__job_created, op);
	}

	/* Finished Jobs beyond the history limits. */
	if (!deleting && ch.n) {
		size_t *doomed = xcalloc(ch.n, sizeof(*doomed));
		size_t k = cronjobc_prune(ch.jobs, ch.n,
					  obj_int(cj, "spec.successfulJobsHistoryLimit", -1),
					  obj_int(cj, "spec.failedJobsHistoryLimit", -1), doomed);
		for (size_t i = 0; i < k; i++)
			cronjobc__delete_job(cc, key, cj, ch.jobs[doomed[i]]);
		free(doomed);
	}
	free(ch.jobs);
	cronjobc__write_status(cc, key, cj, st);
	cronjobc__wake_key(cc, key, plan.wake_ms);
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void cronjobc__on_cronjob(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct cronjobc *cc = data;
	workqueue_add(cc->q, key);
}

static void cronjobc__on_cronjob_update(void *data, const char *key, const struct ynode *old,
					const struct ynode *obj)
{
	(void)old;
	cronjobc__on_cronjob(data, key, obj);
}

static void cronjobc__enqueue_owner(struct cronjobc *cc, const struct ynode *job)
{
	cleanup_free char *key = adopt_resolve_owner(cc->cronjobs, "CronJob", job, NULL);
	if (key)
		workqueue_add(cc->q, key);
}

static void cronjobc__on_job(void *data, const char *key, const struct ynode *job)
{
	(void)key;
	cronjobc__enqueue_owner(data, job);
}

static void cronjobc__on_job_update(void *data, const char *key, const struct ynode *old,
				    const struct ynode *job)
{
	(void)key;
	if (!ynode_equal(obj_controller_ref(old), obj_controller_ref(job)))
		cronjobc__enqueue_owner(data, old);
	cronjobc__enqueue_owner(data, job);
}

static void cronjobc__zone_free(void *p)
{
	cron_zone_free(p);
}

struct cronjobc *cronjobc_new(struct ctrl *c)
{
	struct cronjobc *cc = xcalloc(1, sizeof(*cc));
	cc->c = c;
	cc->cronjobs = ctrl_informer(c, "cronjobs");
	cc->jobs = ctrl_informer(c, "jobs");
	cc->owned = ctrl_owners(c, "jobs");
	cc->q = workqueue_new(c->loop, "cronjobs", NULL);
	cc->exp = expect_new();
	cc->zones = keymap_new(cronjobc__zone_free);
	cc->local = cron_zone_local();
	cc->created = keymap_new(cronjobc__created_free);
	cc->wake_at = keymap_new(free);
	cc->armed_ms = -2;
	cc->tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	cleanup_error struct error *err = NULL;
	if (cc->tfd < 0) {
		log_warn("cronjob: no timerfd (%s): CronJobs do not run on time", strerror(errno));
	} else if (loop_add_fd(c->loop, cc->tfd, LOOP_READ, cronjobc__on_timer, cc, &err) < 0) {
		log_warn("cronjob: %s", err->msg);
		close(cc->tfd);
		cc->tfd = -1;
	}
	struct informer_handlers ch = {
	    .on_add = cronjobc__on_cronjob,
	    .on_update = cronjobc__on_cronjob_update,
	    .on_delete = cronjobc__on_cronjob,
	};
	informer_add_handlers(cc->cronjobs, &ch, cc);
	struct informer_handlers jh = {
	    .on_add = cronjobc__on_job,
	    .on_update = cronjobc__on_job_update,
	    .on_delete = cronjobc__on_job,
	};
	informer_add_handlers(cc->jobs, &jh, cc);
	workqueue_set_handler(cc->q, cronjobc__sync, cc);
	return cc;
}

void cronjobc_free(struct cronjobc *cc)
{
	if (!cc)
		return;
	if (cc->tfd >= 0) {
		loop_del_fd(cc->c->loop, cc->tfd);
		close(cc->tfd);
	}
	workqueue_free(cc->q);
	expect_free(cc->exp);
	keymap_free(cc->zones);
	cron_zone_free(cc->local);
	keymap_free(cc->created);
	keymap_free(cc->wake_at);
	for (size_t i = 0; i < cc->nheap; i++)
		free(cc->heap[i].key);
	free(cc->heap);
	free(cc);
}
