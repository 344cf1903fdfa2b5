/* workers.h: a bounded pool of threads for the node agent's blocking work
 * (a pod's sandbox and containers being set up: forks, the wait for a
 * pause, ip(8), overlay mounts), so that the loop stays free for status
 * writes, probes and heartbeats while many pods start at once.
 *
 * A job's run() runs on one of at most max_threads threads (made as jobs
 * come, kept until workers_free()); its done() runs afterwards on the
 * loop's thread, from an eventfd on the loop. Jobs start in the order they
 * are submitted. run() must touch nothing the loop owns: what it needs is
 * copied into its data, and it leaves its results there for done(), which
 * owns data again. The threads block every signal (the loop takes them
 * through its signalfd). */
#ifndef CORRAL_NODED_WORKERS_H
#define CORRAL_NODED_WORKERS_H

#include <stddef.h>

#include "error.h"

struct loop;
struct workers;

typedef void (*workers_fn)(void *data);

struct workers *workers_new(struct loop *loop, unsigned max_threads, struct error **err);
/* Frees w after workers_drain(). NULL is fine. */
void workers_free(struct workers *w);

/* Queues a job; run on a thread, then done on the loop (done may be
 * NULL). */
void workers_submit(struct workers *w, workers_fn run, workers_fn done, void *data);
/* Blocks until every job submitted has run, then calls their done()s
 * (for an agent that stops: nothing it started is left unrecorded). */
void workers_drain(struct workers *w);
/* Jobs submitted whose done() has not run yet. */
size_t workers_pending(const struct workers *w);
/* The most threads w runs. */
unsigned workers_max(const struct workers *w);

#endif
