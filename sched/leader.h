/* leader.h: corral-sched's leadership. With leader election on (the
 * default, as kube-scheduler's --leader-elect), the scheduler runs only
 * while this process holds the Lease
 * namespaces/<lease-namespace>/leases/<lease-name>.yaml (lib's
 * leaderelect.h): it starts when it takes the lease. Losing the lease
 * stops the loop and the daemon exits non-zero, as kube-scheduler does, so
 * that no pod is bound by a scheduler that no longer leads. Without
 * election, the scheduler starts at once. A clean stop hands the lease
 * over. */
#ifndef CORRAL_SCHED_LEADER_H
#define CORRAL_SCHED_LEADER_H

#include <stdbool.h>

#include "error.h"
#include "leaderelect.h"
#include "loop.h"

struct scheduler;
struct sched_leader;

/* lc: the lease to hold (its callbacks are ignored), or NULL to schedule
 * without election. */
struct sched_leader *sched_leader_new(struct loop *loop, struct scheduler *s,
				      const struct leader_config *lc, struct error **err);
/* Starts leading or following (or, without election, the scheduler). */
int sched_leader_start(struct sched_leader *sl, struct error **err);
/* Whether the scheduler could not start or the lease was lost (the
 * daemon should exit non-zero). */
bool sched_leader_failed(const struct sched_leader *sl);
/* Hands the lease over if held and frees. */
void sched_leader_free(struct sched_leader *sl);

#endif
