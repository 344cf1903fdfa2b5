/* scheduler.h: corral-sched's context: two informers (nodes, pods) feeding
 * the cache and the queue, decisions on the loop thread between events,
 * and the binder writing them. */
#ifndef CORRAL_SCHED_SCHEDULER_H
#define CORRAL_SCHED_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "algorithm.h"
#include "error.h"
#include "loop.h"
#include "queue.h"

struct scheduler_opts {
	const char *mount;
	const char *name;   /* spec.schedulerName this scheduler serves */
	unsigned workers;   /* write workers */
	unsigned batch;	    /* decisions per loop turn at most; 0: 128 */
	uint64_t resync_ms; /* informers relist every so often; 0: never */
	struct sched_algo_opts algo;
	struct sched_queue_opts queue;
};

struct scheduler_stats {
	size_t decisions;     /* pods placed (assumed) */
	size_t bound;	      /* bindings accepted by the store */
	size_t conflicts;     /* bindings refused with EAGAIN */
	size_t failures;      /* other refused bindings */
	size_t unschedulable; /* attempts that found no node */
};

struct scheduler;
struct scheduler *scheduler_new(struct loop *loop, const struct scheduler_opts *o);
/* Lists nodes, then pods, then schedules from the loop. Fails when the
 * mount has no cluster, or the workers cannot start. */
int scheduler_start(struct scheduler *s, struct error **err);
void scheduler_free(struct scheduler *s);
const struct scheduler_stats *scheduler_stats(const struct scheduler *s);

#endif
