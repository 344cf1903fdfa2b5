/* workpool.h: a bounded pool of threads for a daemon's blocking work (a
 * pod's setup in corral-noded, a write through the mount in corral-ctrl,
 * a write request in corral-fs), so that the thread that owns the
 * daemon's state stays free.
 *
 * A job's run() runs on one of at most `threads` threads; its done(), when
 * the pool has a loop, runs afterwards on the loop's thread (an eventfd on
 * the loop brings it there), else right after run() on the same thread.
 * run() must touch nothing the loop owns: what it needs is copied into its
 * data, and it leaves its results there for done(), which owns data again.
 * Jobs start in the order they were submitted; a WORKPOOL_LOW job only when
 * no other job waits and none was submitted for low_pause_ms. The threads
 * block every signal (a daemon takes them on its loop or main thread). */
#ifndef CORRAL_WORKPOOL_H
#define CORRAL_WORKPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct loop;
struct workpool;

typedef void (*workpool_fn)(void *data);

struct workpool_opts {
	struct loop *loop;     /* done()s run on it; NULL: on the worker */
	unsigned threads;      /* the most threads (0: 1; workpool_start() may say) */
	bool on_demand;	       /* threads made as jobs wait, not all at the start */
	size_t stack_size;     /* 0: the system's default */
	uint64_t low_pause_ms; /* WORKPOOL_LOW jobs wait for a pause this long */
};

#define WORKPOOL_LOW 1u /* after every other job */

/* No thread runs before workpool_start(). Fails only if the eventfd
 * cannot be made or put on the loop. */
struct workpool *workpool_new(const struct workpool_opts *o, struct error **err);
/* Starts the threads (threads, when not 0, replaces the options'): all of
 * them, or as jobs come (on_demand). */
int workpool_start(struct workpool *w, unsigned threads, struct error **err);
/* Runs what is queued and its done()s (a pool never started drops its
 * jobs), stops the threads, frees w. NULL is fine. */
void workpool_free(struct workpool *w);

/* Queues a job (done may be NULL). flags: WORKPOOL_LOW. */
void workpool_submit(struct workpool *w, workpool_fn run, workpool_fn done, void *data,
		     unsigned flags);
/* Blocks until every job submitted (including those the done()s submit)
 * has run and its done() too; on the loop's thread. */
void workpool_drain(struct workpool *w);
/* Jobs submitted whose done() has not run yet. */
size_t workpool_pending(const struct workpool *w);
/* The most threads w runs. */
unsigned workpool_max(const struct workpool *w);

#endif
