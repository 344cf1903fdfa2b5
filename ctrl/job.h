/* job.h: the Job controller (Kubernetes' job controller, batch/v1).
 *
 * A Job runs pods from its template until `completions` of them have
 * succeeded (or, with no completions, until one has and the rest are
 * done: a work queue), at most `parallelism` at a time. Its pods carry the
 * Job's ownerReference and the labels batch.kubernetes.io/controller-uid,
 * batch.kubernetes.io/job-name, controller-uid and job-name; the selector
 * is generated from the uid unless manualSelector is true. An Indexed Job
 * gives each pod an index 0..completions-1 (annotation and label
 * batch.kubernetes.io/job-completion-index, JOB_COMPLETION_INDEX in the
 * environment, hostname <job>-<index>) and is done when every index has
 * succeeded (status.completedIndexes, "1,3-5").
 *
 * Failures: a failed pod counts against backoffLimit (default 6; with
 * restartPolicy OnFailure the restarts of its running pods count), new
 * pods wait an exponential back-off after failures (10 s doubling, at most
 * 6 min, measured from the last failure: a timer), podFailurePolicy rules
 * (onExitCodes, onPodConditions) may fail the Job, the index, ignore or
 * count a failure, backoffLimitPerIndex fails an index on its own, and
 * activeDeadlineSeconds fails the Job once it has run that long. A failed
 * Job's running pods are deleted. Conditions, reasons and messages are
 * Kubernetes': SuccessCriteriaMet then Complete (CompletionsReached),
 * FailureTarget then Failed (BackoffLimitExceeded, DeadlineExceeded,
 * PodFailurePolicy, FailedIndexes, MaxFailedIndexesExceeded), Suspended
 * (JobSuspended / JobResumed). Finished pods are kept (their logs) until
 * the Job goes. */
#ifndef CORRAL_CTRL_JOB_H
#define CORRAL_CTRL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ynode.h"

struct ctrl;
struct jobc;

struct jobc *jobc_new(struct ctrl *c);
void jobc_free(struct jobc *j);

#define JOB_INDEX_KEY	      "batch.kubernetes.io/job-completion-index"
#define JOB_FAILURE_COUNT_KEY "batch.kubernetes.io/job-index-failure-count"
#define JOB_UID_LABEL	      "batch.kubernetes.io/controller-uid"
#define JOB_NAME_LABEL	      "batch.kubernetes.io/job-name"
#define JOB_BACKOFF_BASE_MS   10000ULL
#define JOB_BACKOFF_MAX_MS    360000ULL

/* Decision logic, pure, for the tests. */

/* The back-off before the next pod after `failures` failures in a row:
 * 0 for none, 10 s doubling per failure, at most 6 min. */
uint64_t job_backoff_ms(long long failures);
/* What is left of that back-off at now_ms after the last failure at
 * last_ms (0: it has passed). */
uint64_t job_backoff_left_ms(long long failures, int64_t last_ms, int64_t now_ms);

/* How many pods a non-indexed Job wants running: completions - succeeded
 * (completions < 0: a work queue, parallelism until one succeeds, then
 * no new ones), at most parallelism, never negative. */
long long job_want_active(long long parallelism, long long completions, long long succeeded,
			  long long active);

/* Indexes as Kubernetes writes them: "1,3-5"; "" for none. set has n
 * entries. malloc'd. */
char *job_format_indexes(const bool *set, long long n);
/* Marks in set (n entries) the indexes of s ("1,3-5"); indexes at or
 * beyond n are left out. Returns -1 if s does not parse. */
int job_parse_indexes(const char *s, bool *set, long long n);
/* Up to room indexes below n that are neither done, active nor failed,
 * lowest first, into out; returns how many. */
long long job_indexes_to_create(long long n, const bool *done, const bool *active,
				const bool *failed, long long room, long long *out);
/* A pod's completion index (its annotation), or -1 when it has none or it
 * is not below n. */
long long job_pod_index(const struct ynode *pod, long long n);

/* What podFailurePolicy says of a failed pod. */
enum job_pfp {
	JOB_PFP_NONE,	    /* no rule matches: it counts */
	JOB_PFP_COUNT,	    /* a Count rule */
	JOB_PFP_IGNORE,	    /* an Ignore rule: not counted */
	JOB_PFP_FAIL_JOB,   /* a FailJob rule */
	JOB_PFP_FAIL_INDEX, /* a FailIndex rule */
};
/* The first rule of job's podFailurePolicy that matches the failed pod;
 * for FailJob, *msg (may be NULL) gets Kubernetes' message, malloc'd. */
enum job_pfp job_pod_failure_action(const struct ynode *job, const struct ynode *pod, char **msg);

/* Whether job has a True Complete or Failed condition (*type, may be
 * NULL, gets which). */
bool job_finished(const struct ynode *job, const char **type);

/* The pod for job (the pod's name generated from <job>- or
 * <job>-<index>-; index < 0: non-indexed), with its labels, annotations,
 * ownerReference and, when indexed, the index's annotation and label,
 * JOB_COMPLETION_INDEX and hostname; failures > 0 sets the index's
 * failure-count annotation. */
struct ynode *job_pod_new(const struct ynode *job, long long index, long long failures);

#endif
