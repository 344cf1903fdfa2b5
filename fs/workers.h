/* workers.h: corral-fs's pool of threads for the requests that write the
 * store. Such a request waits for an fsync; run here, it leaves the
 * single-threaded session loop free for lookups and reads, and
 * concurrent writers meet in one group commit. A job replies to its
 * request itself. Jobs run in no particular order between threads. */
#ifndef CORRAL_FS_WORKERS_H
#define CORRAL_FS_WORKERS_H

#include <stddef.h>

#include "error.h"

struct workers;

struct workers *workers_new(void);
/* Starts n threads. */
int workers_start(struct workers *w, size_t n, struct error **err);
/* Queues fn(arg); fn owns arg. */
void workers_queue(struct workers *w, void (*fn)(void *arg), void *arg);
/* Runs what is queued, stops the threads and frees w. */
void workers_free(struct workers *w);

#endif
