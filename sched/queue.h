/* queue.h: the scheduling queue, after kube-scheduler's: pending pods by
 * key ("ns/name") in one of three places.
 *
 *   active         ready to be scheduled: highest spec.priority first, then
 *                  in the order they arrived;
 *   backing off    failed lately: wait their back-off (initial, doubling
 *                  with every failure up to max), then become active;
 *   unschedulable  fit nowhere: wait for a cluster event that may help
 *                  them (a node added or changed, a pod gone, a pod bound),
 *                  then become active, or backing off if their back-off
 *                  has not run out; after max-unschedulable without one
 *                  they are tried again anyway.
 *
 * So a pod that fits nowhere costs nothing until the cluster changes, and
 * never more than one attempt per back-off. A pod taken with pop() is in
 * none of them until the caller says how its attempt went. Single thread:
 * the loop's. */
#ifndef CORRAL_SCHED_QUEUE_H
#define CORRAL_SCHED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"

/* Cluster events, as a mask. */
enum {
	SCHED_EVENT_NODE = 1 << 0,	/* a node added, or changed in what filters see */
	SCHED_EVENT_POD_GONE = 1 << 1,	/* a pod that held resources went */
	SCHED_EVENT_POD_BOUND = 1 << 2, /* a pod was bound (pod affinity) */
};

struct sched_queue_opts {
	uint64_t initial_backoff_ms;   /* 1 s */
	uint64_t max_backoff_ms;       /* 10 s */
	uint64_t max_unschedulable_ms; /* 5 min */
};

struct sched_queue;
struct sched_queue *sched_queue_new(struct loop *loop, const struct sched_queue_opts *o);
void sched_queue_free(struct sched_queue *q);

/* A pending pod, new or updated. An unschedulable pod becomes active (or
 * backs off) when changed; changed is false for an update that cannot help
 * it (its status only). */
void sched_queue_add(struct sched_queue *q, const char *key, long long priority, bool changed);
/* Forgets a pod (deleted, bound, or not ours). */
void sched_queue_delete(struct sched_queue *q, const char *key);

/* The next active pod, or NULL. The key stays valid until one of the three
 * calls below for it. */
const char *sched_queue_pop(struct sched_queue *q);
/* It was placed: forget it. */
void sched_queue_done(struct sched_queue *q, const char *key);
/* It fits nowhere: wait for one of the events (mask), at least its
 * back-off. */
void sched_queue_unschedulable(struct sched_queue *q, const char *key, unsigned events);
/* Its binding failed: try again after its back-off (a pod done() already
 * comes back with this priority). */
void sched_queue_retry(struct sched_queue *q, const char *key, long long priority);

/* A cluster event: unschedulable pods that wait for it move on. */
void sched_queue_move(struct sched_queue *q, unsigned events);

size_t sched_queue_active_len(const struct sched_queue *q);
size_t sched_queue_unschedulable_len(const struct sched_queue *q);
/* Every pod the queue knows, in any place. */
size_t sched_queue_len(const struct sched_queue *q);
/* The back-off of the pod's next failure, for tests and logs (0 if unknown). */
uint64_t sched_queue_backoff_ms(const struct sched_queue *q, const char *key);

#endif
