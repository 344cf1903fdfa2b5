/* workers.c: see workers.h; the pool is lib's (workpool.h), without a
 * loop: a job replies to its request on its thread. */
#include "workers.h"
#include "util.h"
#include "workpool.h"

#include <stdlib.h>

struct workers {
	struct workpool *pool;
};

struct workers *workers_new(void)
{
	const struct workpool_opts o = {0};
	struct workers *w = xcalloc(1, sizeof(*w));
	w->pool = workpool_new(&o, NULL); /* without a loop it cannot fail */
	if (!w->pool)
		abort();
	return w;
}

int workers_start(struct workers *w, size_t n, struct error **err)
{
	return workpool_start(w->pool, (unsigned)n, err);
}

void workers_queue(struct workers *w, void (*fn)(void *arg), void *arg)
{
	workpool_submit(w->pool, fn, NULL, arg, 0);
}

void workers_free(struct workers *w)
{
	if (!w)
		return;
	/* with no thread started, jobs are dropped: the session is gone, no
	 * request of theirs can be answered */
	workpool_free(w->pool);
	free(w);
}
