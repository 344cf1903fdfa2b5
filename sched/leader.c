/* leader.c: the scheduler runs while this process leads. It never binds
 * after losing the lease: the loop stops at once. */
#include "leader.h"
#include "log.h"
#include "scheduler.h"
#include "util.h"

#include <stdlib.h>

struct sched_leader {
	struct loop *loop;
	struct scheduler *s;
	struct leader *le; /* NULL without election */
	bool failed;	   /* the scheduler could not start, or leadership was lost */
};

static void sched_leader__started(void *data)
{
	struct sched_leader *sl = data;
	cleanup_error struct error *err = NULL;
	if (scheduler_start(sl->s, &err) < 0) {
		log_error("cannot start the scheduler: %s", err->msg);
		sl->failed = true;
		loop_stop(sl->loop);
	}
}

static void sched_leader__stopped(void *data)
{
	struct sched_leader *sl = data;
	log_error("leaderelection lost");
	sl->failed = true;
	loop_stop(sl->loop);
}

struct sched_leader *sched_leader_new(struct loop *loop, struct scheduler *s,
				      const struct leader_config *lc, struct error **err)
{
	struct sched_leader *sl = xcalloc(1, sizeof(*sl));
	sl->loop = loop;
	sl->s = s;
	if (!lc)
		return sl;
	struct leader_config c = *lc;
	c.on_started = sched_leader__started;
	c.on_stopped = sched_leader__stopped;
	c.data = sl;
	sl->le = leader_new(loop, &c, err);
	if (!sl->le) {
		free(sl);
		return NULL;
	}
	return sl;
}

int sched_leader_start(struct sched_leader *sl, struct error **err)
{
	if (!sl->le) {
		int r = scheduler_start(sl->s, err);
		if (r < 0)
			sl->failed = true;
		return r;
	}
	return leader_start(sl->le, err);
}

bool sched_leader_failed(const struct sched_leader *sl)
{
	return sl->failed;
}

void sched_leader_free(struct sched_leader *sl)
{
	if (!sl)
		return;
	leader_free(sl->le); /* releases the lease if held */
	free(sl);
}
