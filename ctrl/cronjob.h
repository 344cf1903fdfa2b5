/* cronjob.h: the CronJob controller (Kubernetes' cronjob controller, v2).
 *
 * At each time its schedule names (cron.h, in spec.timeZone or
 * corral-ctrl's own zone) a CronJob creates a Job from its jobTemplate,
 * named <cronjob>-<scheduled time in minutes since the epoch>, with the
 * template's labels and annotations, a controller reference to the
 * CronJob and the annotation batch.kubernetes.io/cronjob-scheduled-timestamp.
 * concurrencyPolicy Allow runs Jobs side by side, Forbid skips a time while
 * a Job is active (it starts once that one finishes, if still within the
 * deadline), Replace deletes the active Jobs first. A time later than
 * startingDeadlineSeconds is missed (event MissSchedule); more than 100
 * missed times are reported (TooManyMissedTimes) and only the most recent
 * one runs. suspend stops new Jobs. Finished Jobs (a Complete or Failed
 * condition True) beyond successfulJobsHistoryLimit and
 * failedJobsHistoryLimit are deleted oldest first. Status: active,
 * lastScheduleTime, lastSuccessfulTime.
 *
 * No polling: one timerfd on the real-time clock waits for the earliest
 * next time of every CronJob (a heap); a change of the clock cancels it
 * and every CronJob is looked at again, as after a restart: a missed time
 * within the deadline (at most one) runs then. */
#ifndef CORRAL_CTRL_CRONJOB_H
#define CORRAL_CTRL_CRONJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cron.h"
#include "ynode.h"

#define CRONJOBC_SCHEDULED_ANNOTATION "batch.kubernetes.io/cronjob-scheduled-timestamp"
#define CRONJOBC_MANY_MISSED	      100

struct ctrl;
struct cronjobc;

struct cronjobc *cronjobc_new(struct ctrl *c);
void cronjobc_free(struct cronjobc *cc);

/* Decision logic, pure, for the tests. Times are seconds since the epoch. */

/* Kubernetes' mostRecentScheduleTime: from earliest (lastScheduleTime, else
 * the creation time, moved up to now - startingDeadlineSeconds when
 * with_deadline), the latest scheduled time not after now (-1: none) and
 * how many were missed (an estimate, as Kubernetes makes it). Negative
 * with *err when two times of the schedule are less than a second apart. */
int cronjobc_most_recent(const struct ynode *cj, const struct cron_schedule *s,
			 const struct cron_zone *z, int64_t now, bool with_deadline,
			 int64_t *earliest, int64_t *recent, long long *missed, struct error **err);

/* What a sync decides about starting a Job now. */
struct cronjobc_plan {
	int64_t scheduled; /* the time to start a Job for, or -1 */
	long long missed;  /* missed times (> CRONJOBC_MANY_MISSED: an event) */
	bool too_late;	   /* scheduled is past startingDeadlineSeconds: missed */
	bool done;	   /* scheduled was handled already */
	bool forbidden;	   /* Forbid, and a Job is still active */
	int64_t wake_ms;   /* when to look again, wall-clock milliseconds */
};

/* The plan for cj with its status (active, lastScheduleTime) at now. */
int cronjobc_plan(const struct ynode *cj, const struct cron_schedule *s, const struct cron_zone *z,
		  int64_t now, struct cronjobc_plan *p, struct error **err);

/* "<cronjob>-<scheduled / 60>"; malloc'd. */
char *cronjobc_job_name(const char *cronjob, int64_t scheduled);
/* The Job for scheduled, from cj's jobTemplate (z: cj's zone, for the
 * annotation). */
struct ynode *cronjobc_job_from_template(const struct ynode *cj, int64_t scheduled,
					 const struct cron_zone *z);
/* Whether job has a Complete or Failed condition True; *condition (may be
 * NULL) gets which. */
bool cronjobc_job_finished(const struct ynode *job, const char **condition);

/* The finished Jobs to delete, oldest first (by status.startTime, none
 * last, then name), beyond the limits (negative: no limit): their indexes
 * into jobs, in out (room for n); returns how many. */
size_t cronjobc_prune(const struct ynode *const *jobs, size_t n, long long successful_limit,
		      long long failed_limit, size_t *out);

#endif
