/* workqueue.c: client-go's rate-limited work queue for a single thread.
 *
 * Every key the queue knows has one item in a tree (queued, processing,
 * waiting on its timer, or remembered for its back-off); the ready ones are
 * also linked in a FIFO. An item goes away when it is none of these.
 * This file must never call a handler except from workqueue_drain(). */
#include "workqueue.h"
#include "log.h"
#include "util.h"

#include <limits.h>
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct workqueue__item {
	char *key; /* first: the tree compares items by key */
	struct workqueue *q;
	struct workqueue__item *next; /* FIFO link while queued */
	bool queued;		      /* in the FIFO */
	bool processing;	      /* handed out, done() not yet called */
	bool dirty;		      /* added while processing: queue at done() */
	unsigned failures;	      /* rate-limited adds since forget() */
	struct loop_timer *timer;     /* delayed add; created on first use */
	uint64_t ready_ms;	      /* while the timer is armed: when it fires */
};

struct workqueue {
	struct loop *loop;
	char *name;
	uint64_t base_ms;
	uint64_t max_ms;
	void *items; /* tsearch tree of struct workqueue__item */
	struct workqueue__item *head, *tail;
	size_t len; /* items in the FIFO */
	workqueue_handler fn;
	void *fn_data;
	struct loop_hook *hook; /* set while fn is */
};

static int workqueue__cmp(const void *a, const void *b)
{
	return strcmp(((const struct workqueue__item *)a)->key,
		      ((const struct workqueue__item *)b)->key);
}

static struct workqueue__item *workqueue__find(const struct workqueue *q, const char *key)
{
	struct workqueue__item probe = {.key = (char *)key};
	void **found = tfind(&probe, &q->items, workqueue__cmp);
	return found ? *found : NULL;
}

static struct workqueue__item *workqueue__find_or_add(struct workqueue *q, const char *key)
{
	struct workqueue__item *it = workqueue__find(q, key);
	if (it)
		return it;
	it = xcalloc(1, sizeof(*it));
	it->key = xstrdup(key);
	it->q = q;
	if (!tsearch(it, &q->items, workqueue__cmp))
		abort(); /* tsearch fails only when out of memory */
	return it;
}

static void workqueue__free_item(void *p)
{
	struct workqueue__item *it = p;
	loop_timer_free(it->timer);
	free(it->key);
	free(it);
}

/* Forgets an item that no longer holds any state. */
static void workqueue__release(struct workqueue *q, struct workqueue__item *it)
{
	if (it->queued || it->processing || it->dirty || it->failures ||
	    (it->timer && loop_timer_armed(it->timer)))
		return;
	tdelete(it, &q->items, workqueue__cmp);
	workqueue__free_item(it);
}

static void workqueue__enqueue(struct workqueue *q, struct workqueue__item *it)
{
	it->queued = true;
	it->next = NULL;
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->len++;
}

static void workqueue__add_item(struct workqueue *q, struct workqueue__item *it)
{
	if (it->queued)
		return;
	if (it->processing) {
		it->dirty = true;
		return;
	}
	workqueue__enqueue(q, it);
}

static void workqueue__on_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct workqueue__item *it = data;
	workqueue__add_item(it->q, it);
}

struct workqueue *workqueue_new(struct loop *loop, const char *name,
				const struct workqueue_opts *opts)
{
	struct workqueue *q = xcalloc(1, sizeof(*q));
	q->loop = loop;
	q->name = xstrdup(name ? name : "workqueue");
	q->base_ms = opts && opts->base_delay_ms ? opts->base_delay_ms : WORKQUEUE_BASE_DELAY_MS;
	q->max_ms = opts && opts->max_delay_ms ? opts->max_delay_ms : WORKQUEUE_MAX_DELAY_MS;
	if (q->max_ms < q->base_ms)
		q->max_ms = q->base_ms;
	return q;
}

void workqueue_free(struct workqueue *q)
{
	if (!q)
		return;
	loop_remove_hook(q->loop, q->hook);
	tdestroy(q->items, workqueue__free_item);
	free(q->name);
	free(q);
}

void workqueue_freep(struct workqueue **q)
{
	workqueue_free(*q);
	*q = NULL;
}

void workqueue_add(struct workqueue *q, const char *key)
{
	workqueue__add_item(q, workqueue__find_or_add(q, key));
}

void workqueue_add_after(struct workqueue *q, const char *key, uint64_t delay_ms)
{
	if (delay_ms == 0) {
		workqueue_add(q, key);
		return;
	}
	struct workqueue__item *it = workqueue__find_or_add(q, key);
	uint64_t ready = loop_now_ms() + delay_ms;
	if (!it->timer)
		it->timer = loop_timer_new(q->loop, workqueue__on_timer, it);
	else if (loop_timer_armed(it->timer) && it->ready_ms <= ready)
		return;
	it->ready_ms = ready;
	loop_timer_start(it->timer, delay_ms, 0);
}

/* base * 2^failures, capped; no overflow whatever failures is. */
static uint64_t workqueue__backoff(const struct workqueue *q, unsigned failures)
{
	uint64_t d = q->base_ms;
	for (unsigned i = 0; i < failures && d < q->max_ms; i++)
		d = d > q->max_ms / 2 ? q->max_ms : d * 2;
	return d < q->max_ms ? d : q->max_ms;
}

uint64_t workqueue_add_rate_limited(struct workqueue *q, const char *key)
{
	struct workqueue__item *it = workqueue__find_or_add(q, key);
	uint64_t delay = workqueue__backoff(q, it->failures);
	if (it->failures < UINT_MAX)
		it->failures++;
	workqueue_add_after(q, key, delay);
	return delay;
}

void workqueue_forget(struct workqueue *q, const char *key)
{
	struct workqueue__item *it = workqueue__find(q, key);
	if (!it)
		return;
	it->failures = 0;
	workqueue__release(q, it);
}

unsigned workqueue_num_requeues(const struct workqueue *q, const char *key)
{
	struct workqueue__item *it = workqueue__find(q, key);
	return it ? it->failures : 0;
}

const char *workqueue_get(struct workqueue *q)
{
	struct workqueue__item *it = q->head;
	if (!it)
		return NULL;
	q->head = it->next;
	if (!q->head)
		q->tail = NULL;
	q->len--;
	it->next = NULL;
	it->queued = false;
	it->processing = true;
	it->dirty = false;
	return it->key;
}

void workqueue_done(struct workqueue *q, const char *key)
{
	struct workqueue__item *it = workqueue__find(q, key);
	if (!it || !it->processing)
		return;
	it->processing = false;
	if (it->dirty) {
		it->dirty = false;
		workqueue__enqueue(q, it);
	}
	workqueue__release(q, it);
}

size_t workqueue_len(const struct workqueue *q)
{
	return q->len;
}

size_t workqueue_drain(struct workqueue *q, size_t max, workqueue_handler fn, void *data)
{
	size_t n = 0;
	const char *key;
	while (n < max && (key = workqueue_get(q))) {
		cleanup_error struct error *err = NULL;
		if (fn(data, key, &err) < 0) {
			uint64_t delay = workqueue_add_rate_limited(q, key);
			log_warn("%s: %s: %s (failure %u, retrying in %llu ms)", q->name, key,
				 err ? err->msg : "failed", workqueue_num_requeues(q, key),
				 (unsigned long long)delay);
		} else {
			workqueue_forget(q, key);
		}
		workqueue_done(q, key); /* key may be freed from here on */
		n++;
	}
	return n;
}

static bool workqueue__before_sleep(struct loop *loop, void *data)
{
	(void)loop;
	struct workqueue *q = data;
	/* Only what was ready when the turn began: a handler that adds keys
	 * (its own included) must not keep the loop from its fds. */
	workqueue_drain(q, q->len, q->fn, q->fn_data);
	return q->len > 0;
}

void workqueue_set_handler(struct workqueue *q, workqueue_handler fn, void *data)
{
	q->fn = fn;
	q->fn_data = data;
	if (fn && !q->hook)
		q->hook = loop_add_before_sleep(q->loop, workqueue__before_sleep, q);
	else if (!fn && q->hook) {
		loop_remove_hook(q->loop, q->hook);
		q->hook = NULL;
	}
}
