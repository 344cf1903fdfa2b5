/* workqueue.h: a de-duplicating queue of string keys ("dev/web") with
 * delayed adds and per-key exponential back-off, as client-go's rate-limited
 * work queue, for one thread: the loop's.
 *
 * A key is queued at most once however often it is added. A key handed out
 * by workqueue_get() is "processing" until workqueue_done(); if it is added
 * meanwhile it is queued again at done(), never handed out twice at once.
 * Delayed adds are loop timers. Keys are copied; the queue owns its copies. */
#ifndef CORRAL_WORKQUEUE_H
#define CORRAL_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "loop.h"

#define WORKQUEUE_BASE_DELAY_MS 5ULL
#define WORKQUEUE_MAX_DELAY_MS	1000000ULL /* 1000 s */

struct workqueue;

struct workqueue_opts {
	uint64_t base_delay_ms; /* first retry after this; 0: WORKQUEUE_BASE_DELAY_MS */
	uint64_t max_delay_ms;	/* back-off doubles up to this; 0: WORKQUEUE_MAX_DELAY_MS */
};

/* name appears in log lines ("replicasets: dev/web: ..."); opts may be NULL. */
struct workqueue *workqueue_new(struct loop *loop, const char *name,
				const struct workqueue_opts *opts);
void workqueue_free(struct workqueue *q);
void workqueue_freep(struct workqueue **q);
#define cleanup_workqueue __attribute__((cleanup(workqueue_freep)))

void workqueue_add(struct workqueue *q, const char *key);
/* Adds key once delay_ms has passed (0: now). A key already waiting keeps
 * the earlier of its two times. */
void workqueue_add_after(struct workqueue *q, const char *key, uint64_t delay_ms);
/* Adds key after its back-off: base, 2*base, 4*base, ... up to the maximum,
 * one step further at each call until workqueue_forget(). Returns the delay
 * chosen, in milliseconds. */
uint64_t workqueue_add_rate_limited(struct workqueue *q, const char *key);
/* Resets key's back-off (after it was handled successfully). */
void workqueue_forget(struct workqueue *q, const char *key);
/* How many rate-limited adds since the last forget. */
unsigned workqueue_num_requeues(const struct workqueue *q, const char *key);

/* The next ready key, or NULL when none is. The string stays valid until
 * workqueue_done() for it. */
const char *workqueue_get(struct workqueue *q);
void workqueue_done(struct workqueue *q, const char *key);
/* Keys ready to be handed out. */
size_t workqueue_len(const struct workqueue *q);

/* Handles one key: returns 0 when done (the back-off is forgotten), or
 * negative with *err set to retry it rate-limited; the queue then logs the
 * error with its name and the key, and frees it. A handler may add keys (its
 * own too) but must not free the queue. A deleted object's key comes here as
 * any other: the handler finds it gone from its informer and cleans up. */
typedef int (*workqueue_handler)(void *data, const char *key, struct error **err);

/* Hands up to max ready keys to fn (get, fn, forget or retry, done);
 * returns how many. */
size_t workqueue_drain(struct workqueue *q, size_t max, workqueue_handler fn, void *data);
/* Drains the queue into fn from a before-sleep hook of the loop, so that keys
 * added in one turn are handled before the loop sleeps; keys added while
 * draining wait for the next turn. fn NULL stops it. */
void workqueue_set_handler(struct workqueue *q, workqueue_handler fn, void *data);

#endif
