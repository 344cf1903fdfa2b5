/* queue.c: the scheduling queue (see queue.h): a binary heap for the active
 * pods, one loop timer per pod backing off, an array for the unschedulable
 * ones (so that an event costs only what waits), and a periodic timer for
 * the pods left unschedulable too long. It never calls back into the
 * scheduler: its owner pops. */
#include "queue.h"
#include "strmap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

enum sched_queue__state {
	SCHED_Q_ACTIVE,
	SCHED_Q_BACKOFF,
	SCHED_Q_UNSCHED,
	SCHED_Q_POPPED,
};

struct sched_queue__entry {
	char *key;
	struct sched_queue *q;
	enum sched_queue__state state;
	long long priority;
	uint64_t seq;		  /* arrival in the active heap: ties by age */
	size_t idx;		  /* in the heap (active) or the array (unschedulable) */
	unsigned attempts;	  /* failures so far */
	uint64_t retry_ms;	  /* not tried again before this (monotonic ms) */
	uint64_t since_ms;	  /* unschedulable since */
	unsigned events;	  /* unschedulable: the events it waits for */
	struct loop_timer *timer; /* backing off; made on first use */
};

struct sched_queue {
	struct loop *loop;
	struct sched_queue_opts opts;
	struct strmap *entries; /* key -> entry */
	struct sched_queue__entry **heap;
	size_t nheap, capheap;
	struct sched_queue__entry **unsched;
	size_t nunsched, capunsched;
	uint64_t seq;
	struct loop_timer *flush;
};

/* ---- the active heap: higher priority first, then lower seq ------------- */

static bool sched_queue__before(const struct sched_queue__entry *a,
				const struct sched_queue__entry *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return a->seq < b->seq;
}

static void sched_queue__heap_set(struct sched_queue *q, size_t i, struct sched_queue__entry *e)
{
	q->heap[i] = e;
	e->idx = i;
}

static void sched_queue__sift_up(struct sched_queue *q, size_t i)
{
	struct sched_queue__entry *e = q->heap[i];
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!sched_queue__before(e, q->heap[parent]))
			break;
		sched_queue__heap_set(q, i, q->heap[parent]);
		i = parent;
	}
	sched_queue__heap_set(q, i, e);
}

static void sched_queue__sift_down(struct sched_queue *q, size_t i)
{
	struct sched_queue__entry *e = q->heap[i];
	for (;;) {
		size_t l = 2 * i + 1, best = i;
		struct sched_queue__entry *b = e;
		if (l < q->nheap && sched_queue__before(q->heap[l], b))
			best = l, b = q->heap[l];
		if (l + 1 < q->nheap && sched_queue__before(q->heap[l + 1], b))
			best = l + 1, b = q->heap[l + 1];
		if (best == i)
			break;
		sched_queue__heap_set(q, i, b);
		i = best;
	}
	sched_queue__heap_set(q, i, e);
}

static void sched_queue__heap_push(struct sched_queue *q, struct sched_queue__entry *e)
{
	if (q->nheap == q->capheap) {
		q->capheap = q->capheap ? 2 * q->capheap : 64;
		q->heap = xrealloc(q->heap, q->capheap * sizeof(*q->heap));
	}
	e->state = SCHED_Q_ACTIVE;
	e->seq = q->seq++;
	q->heap[q->nheap++] = e;
	sched_queue__sift_up(q, q->nheap - 1);
}

static void sched_queue__heap_remove(struct sched_queue *q, struct sched_queue__entry *e)
{
	size_t i = e->idx;
	struct sched_queue__entry *last = q->heap[--q->nheap];
	if (i == q->nheap)
		return;
	sched_queue__heap_set(q, i, last);
	sched_queue__sift_down(q, i);
	sched_queue__sift_up(q, last->idx);
}

/* ---- places ------------------------------------------------------------------ */

static void sched_queue__unsched_remove(struct sched_queue *q, struct sched_queue__entry *e)
{
	struct sched_queue__entry *last = q->unsched[--q->nunsched];
	q->unsched[e->idx] = last;
	last->idx = e->idx;
}

/* Takes e out of wherever it is. */
static void sched_queue__detach(struct sched_queue *q, struct sched_queue__entry *e)
{
	switch (e->state) {
	case SCHED_Q_ACTIVE:
		sched_queue__heap_remove(q, e);
		break;
	case SCHED_Q_BACKOFF:
		loop_timer_stop(e->timer);
		break;
	case SCHED_Q_UNSCHED:
		sched_queue__unsched_remove(q, e);
		break;
	case SCHED_Q_POPPED:
		break;
	}
	e->state = SCHED_Q_POPPED;
}

static void sched_queue__on_backoff(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct sched_queue__entry *e = data;
	if (e->state == SCHED_Q_BACKOFF)
		sched_queue__heap_push(e->q, e);
}

/* Active now if its back-off ran out, else once it does. */
static void sched_queue__activate(struct sched_queue *q, struct sched_queue__entry *e)
{
	sched_queue__detach(q, e);
	uint64_t now = loop_now_ms();
	if (e->retry_ms <= now) {
		sched_queue__heap_push(q, e);
		return;
	}
	if (!e->timer)
		e->timer = loop_timer_new(q->loop, sched_queue__on_backoff, e);
	e->state = SCHED_Q_BACKOFF;
	loop_timer_start(e->timer, e->retry_ms - now, 0);
}

static uint64_t sched_queue__backoff(const struct sched_queue *q, unsigned attempts)
{
	uint64_t d = q->opts.initial_backoff_ms;
	for (unsigned i = 1; i < attempts && d < q->opts.max_backoff_ms; i++)
		d *= 2;
	return d < q->opts.max_backoff_ms ? d : q->opts.max_backoff_ms;
}

static void sched_queue__failed(struct sched_queue *q, struct sched_queue__entry *e)
{
	if (e->attempts < 64)
		e->attempts++;
	e->retry_ms = loop_now_ms() + sched_queue__backoff(q, e->attempts);
}

static void sched_queue__on_flush(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct sched_queue *q = data;
	uint64_t now = loop_now_ms();
	for (size_t i = q->nunsched; i-- > 0;) {
		struct sched_queue__entry *e = q->unsched[i];
		if (e->since_ms + q->opts.max_unschedulable_ms <= now)
			sched_queue__activate(q, e);
	}
}

/* ---- the API ---------------------------------------------------------------------- */

struct sched_queue *sched_queue_new(struct loop *loop, const struct sched_queue_opts *o)
{
	struct sched_queue *q = xcalloc(1, sizeof(*q));
	q->loop = loop;
	q->opts = *o;
	if (!q->opts.initial_backoff_ms)
		q->opts.initial_backoff_ms = 1000;
	if (q->opts.max_backoff_ms < q->opts.initial_backoff_ms)
		q->opts.max_backoff_ms = q->opts.initial_backoff_ms;
	if (!q->opts.max_unschedulable_ms)
		q->opts.max_unschedulable_ms = 5 * 60 * 1000;
	q->entries = strmap_new();
	q->flush = loop_timer_new(loop, sched_queue__on_flush, q);
	uint64_t period = q->opts.max_unschedulable_ms / 10;
	if (period > 30000)
		period = 30000;
	if (period < 10)
		period = 10;
	loop_timer_start(q->flush, period, period);
	return q;
}

static void sched_queue__entry_free(void *p)
{
	struct sched_queue__entry *e = p;
	loop_timer_free(e->timer);
	free(e->key);
	free(e);
}

void sched_queue_free(struct sched_queue *q)
{
	if (!q)
		return;
	loop_timer_free(q->flush);
	strmap_free(q->entries, sched_queue__entry_free);
	free(q->heap);
	free(q->unsched);
	free(q);
}

void sched_queue_add(struct sched_queue *q, const char *key, long long priority, bool changed)
{
	struct sched_queue__entry *e = strmap_get(q->entries, key);
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->key = xstrdup(key);
		e->q = q;
		e->priority = priority;
		strmap_set(q->entries, key, e);
		sched_queue__heap_push(q, e);
		return;
	}
	if (e->state == SCHED_Q_UNSCHED && changed) {
		e->priority = priority;
		sched_queue__activate(q, e);
	}
}

void sched_queue_delete(struct sched_queue *q, const char *key)
{
	struct sched_queue__entry *e = strmap_get(q->entries, key);
	if (!e)
		return;
	sched_queue__detach(q, e);
	strmap_del(q->entries, key);
	sched_queue__entry_free(e);
}

const char *sched_queue_pop(struct sched_queue *q)
{
	if (!q->nheap)
		return NULL;
	struct sched_queue__entry *e = q->heap[0];
	sched_queue__heap_remove(q, e);
	e->state = SCHED_Q_POPPED;
	return e->key;
}

void sched_queue_done(struct sched_queue *q, const char *key)
{
	sched_queue_delete(q, key);
}

void sched_queue_unschedulable(struct sched_queue *q, const char *key, unsigned events)
{
	struct sched_queue__entry *e = strmap_get(q->entries, key);
	if (!e)
		return;
	sched_queue__detach(q, e);
	sched_queue__failed(q, e);
	if (q->nunsched == q->capunsched) {
		q->capunsched = q->capunsched ? 2 * q->capunsched : 64;
		q->unsched = xrealloc(q->unsched, q->capunsched * sizeof(*q->unsched));
	}
	e->state = SCHED_Q_UNSCHED;
	e->events = events;
	e->since_ms = loop_now_ms();
	e->idx = q->nunsched;
	q->unsched[q->nunsched++] = e;
}

void sched_queue_retry(struct sched_queue *q, const char *key, long long priority)
{
	struct sched_queue__entry *e = strmap_get(q->entries, key);
	if (!e) {
		sched_queue_add(q, key, priority, true);
		e = strmap_get(q->entries, key);
	}
	sched_queue__detach(q, e);
	sched_queue__failed(q, e);
	sched_queue__activate(q, e);
}

void sched_queue_move(struct sched_queue *q, unsigned events)
{
	for (size_t i = q->nunsched; i-- > 0;) {
		struct sched_queue__entry *e = q->unsched[i];
		if (e->events & events)
			sched_queue__activate(q, e);
	}
}

size_t sched_queue_active_len(const struct sched_queue *q)
{
	return q->nheap;
}

size_t sched_queue_unschedulable_len(const struct sched_queue *q)
{
	return q->nunsched;
}

size_t sched_queue_len(const struct sched_queue *q)
{
	return strmap_count(q->entries);
}

uint64_t sched_queue_backoff_ms(const struct sched_queue *q, const char *key)
{
	const struct sched_queue__entry *e = strmap_get(q->entries, key);
	return e ? sched_queue__backoff(q, e->attempts + 1) : 0;
}
