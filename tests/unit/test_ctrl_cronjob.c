/* test_ctrl_cronjob.c: the CronJob controller's decisions: which scheduled
 * time is due, when to wake, missed runs and the starting deadline,
 * Forbid, the Job from the template, what is finished and what is
 * pruned. */
#include "testlib.h"

#include "cronjob.h"
#include "obj.h"
#include "timefmt.h"
#include "util.h"

static int64_t at(const char *s)
{
	time_t t = 0;
	if (rfc3339_parse(s, &t) < 0)
		fail_msg("bad test time %s", s);
	return (int64_t)t;
}

/* A CronJob created at created, with extra spec and status lines. */
static struct ynode *cronjob(const char *schedule, const char *created, const char *spec,
			     const char *status)
{
	cleanup_free char *text =
	    xasprintf("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: hello\n"
		      "  namespace: dev\n  uid: u-1\n  creationTimestamp: '%s'\n"
		      "spec:\n  schedule: '%s'\n%s"
		      "  jobTemplate:\n    metadata:\n      labels: {app: hello}\n"
		      "      annotations: {note: yes}\n"
		      "    spec:\n      template:\n        spec:\n          restartPolicy: Never\n"
		      "status:\n%s",
		      created, schedule, spec ? spec : "", status ? status : "  {}\n");
	return y(text);
}

struct planned {
	struct cronjobc_plan p;
	int rc;
};

static struct planned plan(const struct ynode *cj, const char *now, const struct cron_zone *z)
{
	struct planned out = {0};
	cleanup_cron struct cron_schedule *s = NULL;
	assert_int_equal(cron_parse(ynode_path_str(cj, "spec.schedule"), &s, NULL), 0);
	out.rc = cronjobc_plan(cj, s, z, at(now), &out.p, NULL);
	return out;
}

static void test_cronjob_plan__the_first_minute_is_due(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *cj = cronjob("* * * * *", "2026-12-01T13:00:30Z", NULL, NULL);
	struct planned r = plan(cj, "2026-12-01T13:00:50Z", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.p.scheduled, -1);
	assert_int_equal(r.p.wake_ms, at("2026-12-01T13:01:00Z") * 1000 + 100);
	r = plan(cj, "2026-12-01T13:01:10Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:01:00Z"));
	assert_false(r.p.done || r.p.too_late || r.p.forbidden);
	assert_int_equal(r.p.missed, 0);
	assert_int_equal(r.p.wake_ms, at("2026-12-01T13:02:00Z") * 1000 + 100);
}

static void test_cronjob_plan__a_scheduled_time_runs_once(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *cj = cronjob("*/5 * * * *", "2026-12-01T12:00:00Z", NULL,
						 "  lastScheduleTime: '2026-12-01T13:05:00Z'\n");
	struct planned r = plan(cj, "2026-12-01T13:07:00Z", NULL);
	assert_int_equal(r.p.scheduled, -1);
	assert_int_equal(r.p.wake_ms, at("2026-12-01T13:10:00Z") * 1000 + 100);
	r = plan(cj, "2026-12-01T13:10:00Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:10:00Z"));
	assert_false(r.p.done);
	/* The Job of that time is active already: done. */
	cleanup_ynode struct ynode *cj2 = cronjob(
	    "*/5 * * * *", "2026-12-01T12:00:00Z", NULL,
	    "  lastScheduleTime: '2026-12-01T13:05:00Z'\n  active:\n  - name: hello-29935510\n");
	r = plan(cj2, "2026-12-01T13:10:01Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:10:00Z"));
	assert_true(r.p.done);
}

static void test_cronjob_plan__missed_runs_catch_up_once(void **state)
{
	(void)state;
	/* corral-ctrl was down for 30 minutes: the most recent time runs. */
	cleanup_ynode struct ynode *cj = cronjob("* * * * *", "2026-12-01T12:00:00Z", NULL,
						 "  lastScheduleTime: '2026-12-01T13:00:00Z'\n");
	struct planned r = plan(cj, "2026-12-01T13:30:20Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:30:00Z"));
	assert_int_equal(r.p.missed, 30);
	assert_int_equal(r.p.wake_ms, at("2026-12-01T13:31:00Z") * 1000 + 100);
	/* More than 100: still the most recent one, and the count to report. */
	r = plan(cj, "2026-12-01T16:00:20Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T16:00:00Z"));
	assert_true(r.p.missed > CRONJOBC_MANY_MISSED);
	assert_int_equal(r.p.missed, 180);
}

static void test_cronjob_plan__starting_deadline_limits_the_catch_up(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *cj =
	    cronjob("0 * * * *", "2026-12-01T00:00:00Z", "  startingDeadlineSeconds: 60\n",
		    "  lastScheduleTime: '2026-12-01T10:00:00Z'\n");
	/* Within a minute of 13:00: it runs, and nothing was missed before the
	 * deadline's window. */
	struct planned r = plan(cj, "2026-12-01T13:00:40Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:00:00Z"));
	assert_false(r.p.too_late);
	assert_int_equal(r.p.missed, 0);
	/* Later than that: nothing is due until 14:00. */
	r = plan(cj, "2026-12-01T13:01:01Z", NULL);
	assert_int_equal(r.p.scheduled, -1);
	assert_int_equal(r.p.wake_ms, at("2026-12-01T14:00:00Z") * 1000 + 100);
	/* Without a deadline the 13:00 run would start late. */
	cleanup_ynode struct ynode *late = cronjob("0 * * * *", "2026-12-01T00:00:00Z", NULL,
						   "  lastScheduleTime: '2026-12-01T12:00:00Z'\n");
	r = plan(late, "2026-12-01T13:59:00Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:00:00Z"));
}

static void test_cronjob_plan__forbid_waits_for_the_active_job(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *cj = cronjob(
	    "* * * * *", "2026-12-01T12:00:00Z", "  concurrencyPolicy: Forbid\n",
	    "  lastScheduleTime: '2026-12-01T13:00:00Z'\n  active:\n  - name: hello-29935500\n");
	struct planned r = plan(cj, "2026-12-01T13:01:00Z", NULL);
	assert_int_equal(r.p.scheduled, at("2026-12-01T13:01:00Z"));
	assert_true(r.p.forbidden);
	cleanup_ynode struct ynode *allow = cronjob(
	    "* * * * *", "2026-12-01T12:00:00Z", "  concurrencyPolicy: Allow\n",
	    "  lastScheduleTime: '2026-12-01T13:00:00Z'\n  active:\n  - name: hello-29935500\n");
	r = plan(allow, "2026-12-01T13:01:00Z", NULL);
	assert_false(r.p.forbidden);
}

static void test_cronjob_plan__in_a_time_zone(void **state)
{
	(void)state;
	cleanup_cron_zone struct cron_zone *z = NULL;
	assert_int_equal(cron_zone_load("Europe/Berlin", &z, NULL), 0);
	cleanup_ynode struct ynode *cj = cronjob("0 9 * * *", "2026-12-01T00:00:00Z", NULL, NULL);
	struct planned r = plan(cj, "2026-12-01T08:00:05Z", z);
	assert_int_equal(r.p.scheduled, at("2026-12-01T08:00:00Z"));
	r = plan(cj, "2026-12-01T07:59:59Z", z);
	assert_int_equal(r.p.scheduled, -1);
	assert_int_equal(r.p.wake_ms, at("2026-12-01T08:00:00Z") * 1000 + 100);
}

static void test_cronjob_job__from_the_template(void **state)
{
	(void)state;
	cleanup_free char *name = cronjobc_job_name("hello", at("2026-12-01T13:16:00Z"));
	assert_string_equal(name, "hello-29935516");
	cleanup_ynode struct ynode *cj = cronjob("* * * * *", "2026-12-01T12:00:00Z", NULL, NULL);
	cleanup_ynode struct ynode *job =
	    cronjobc_job_from_template(cj, at("2026-12-01T13:16:00Z"), NULL);
	assert_string_equal(str(job, "kind"), "Job");
	assert_string_equal(str(job, "apiVersion"), "batch/v1");
	assert_string_equal(str(job, "metadata.name"), "hello-29935516");
	assert_string_equal(str(job, "metadata.namespace"), "dev");
	assert_string_equal(str(job, "metadata.labels.app"), "hello");
	assert_string_equal(str(job, "metadata.annotations.note"), "yes");
	assert_string_equal(obj_annotation(job, CRONJOBC_SCHEDULED_ANNOTATION),
			    "2026-12-01T13:16:00Z");
	const struct ynode *ref = obj_controller_ref(job);
	assert_non_null(ref);
	assert_string_equal(str(ref, "kind"), "CronJob");
	assert_string_equal(str(ref, "name"), "hello");
	assert_string_equal(str(ref, "uid"), "u-1");
	assert_string_equal(str(job, "spec.template.spec.restartPolicy"), "Never");
	/* The annotation is in the CronJob's zone, as Go's RFC 3339. */
	cleanup_cron_zone struct cron_zone *z = NULL;
	assert_int_equal(cron_zone_load("America/New_York", &z, NULL), 0);
	cleanup_ynode struct ynode *ny =
	    cronjobc_job_from_template(cj, at("2026-12-01T13:16:00Z"), z);
	assert_string_equal(obj_annotation(ny, CRONJOBC_SCHEDULED_ANNOTATION),
			    "2026-12-01T08:16:00-05:00");
}

static struct ynode *job(const char *name, const char *cond, const char *start)
{
	cleanup_free char *text =
	    xasprintf("metadata:\n  name: %s\nstatus:\n%s%s%s%s", name,
		      start ? "  startTime: '" : "", start ? start : "", start ? "'\n" : "",
		      cond ? (!strcmp(cond, "Complete")
				  ? "  conditions:\n  - type: Complete\n    status: 'True'\n"
			      : !strcmp(cond, "Failed")
				  ? "  conditions:\n  - type: Failed\n    status: 'True'\n"
				  : "  conditions:\n  - type: Complete\n    status: 'False'\n")
			   : "  active: 1\n");
	return y(text);
}

static void test_cronjob_job__finished_is_a_true_condition(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = job("a", "Complete", NULL);
	cleanup_ynode struct ynode *b = job("b", "Failed", NULL);
	cleanup_ynode struct ynode *c = job("c", "NotYet", NULL);
	cleanup_ynode struct ynode *d = job("d", NULL, NULL);
	const char *cond = NULL;
	assert_true(cronjobc_job_finished(a, &cond));
	assert_string_equal(cond, "Complete");
	assert_true(cronjobc_job_finished(b, &cond));
	assert_string_equal(cond, "Failed");
	assert_false(cronjobc_job_finished(c, NULL));
	assert_false(cronjobc_job_finished(d, NULL));
}

static void test_cronjob_prune__oldest_finished_beyond_the_limits(void **state)
{
	(void)state;
	struct ynode *jobs[] = {
	    job("ok-3", "Complete", "2026-12-01T13:03:00Z"),
	    job("ok-1", "Complete", "2026-12-01T13:01:00Z"),
	    job("ok-nostart", "Complete", NULL),
	    job("ok-2", "Complete", "2026-12-01T13:02:00Z"),
	    job("ok-4", "Complete", "2026-12-01T13:04:00Z"),
	    job("bad-1", "Failed", "2026-12-01T13:01:30Z"),
	    job("bad-2", "Failed", "2026-12-01T13:02:30Z"),
	    job("running", NULL, "2026-12-01T12:00:00Z"),
	};
	size_t n = ARRAY_SIZE(jobs), out[ARRAY_SIZE(jobs)];
	size_t k = cronjobc_prune((const struct ynode *const *)jobs, n, 3, 1, out);
	assert_int_equal(k, 3);
	assert_string_equal(obj_name(jobs[out[0]]), "ok-1");
	assert_string_equal(obj_name(jobs[out[1]]), "ok-2");
	assert_string_equal(obj_name(jobs[out[2]]), "bad-1");
	/* Limits of 0 delete every finished Job; no limit keeps them. */
	k = cronjobc_prune((const struct ynode *const *)jobs, n, 0, -1, out);
	assert_int_equal(k, 5);
	assert_string_equal(obj_name(jobs[out[4]]), "ok-nostart");
	k = cronjobc_prune((const struct ynode *const *)jobs, n, -1, -1, out);
	assert_int_equal(k, 0);
	for (size_t i = 0; i < n; i++)
		ynode_free(jobs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cronjob_plan__the_first_minute_is_due),
	    cmocka_unit_test(test_cronjob_plan__a_scheduled_time_runs_once),
	    cmocka_unit_test(test_cronjob_plan__missed_runs_catch_up_once),
	    cmocka_unit_test(test_cronjob_plan__starting_deadline_limits_the_catch_up),
	    cmocka_unit_test(test_cronjob_plan__forbid_waits_for_the_active_job),
	    cmocka_unit_test(test_cronjob_plan__in_a_time_zone),
	    cmocka_unit_test(test_cronjob_job__from_the_template),
	    cmocka_unit_test(test_cronjob_job__finished_is_a_true_condition),
	    cmocka_unit_test(test_cronjob_prune__oldest_finished_beyond_the_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
