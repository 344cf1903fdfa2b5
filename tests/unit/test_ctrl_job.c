/* test_ctrl_job.c: the Job controller's decisions on hand-built objects:
 * how many pods to run, the back-off between failures, index bookkeeping
 * ("1,3-5"), the pods made from the template (labels, index, env,
 * hostname), podFailurePolicy, when a Job counts as finished, the
 * TTL-after-finished deadline and podgc's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job.h"
#include "obj.h"
#include "podgc.h"
#include "testlib.h"
#include "ttl.h"
#include "util.h"
#include "ynode.h"

static void test_job__want_active(void **state)
{
	(void)state;
	/* completions 5, parallelism 2 */
	assert_int_equal(job_want_active(2, 5, 0, 0), 2);
	assert_int_equal(job_want_active(2, 5, 4, 0), 1);
	assert_int_equal(job_want_active(2, 5, 5, 1), 0);
	assert_int_equal(job_want_active(2, 5, 7, 0), 0);
	/* parallelism above what is left */
	assert_int_equal(job_want_active(10, 3, 1, 0), 2);
	/* a work queue: parallelism until one succeeds, then no new pods */
	assert_int_equal(job_want_active(3, -1, 0, 1), 3);
	assert_int_equal(job_want_active(3, -1, 1, 2), 2);
	assert_int_equal(job_want_active(3, -1, 1, 0), 0);
	/* parallelism 0: nothing runs */
	assert_int_equal(job_want_active(0, 5, 0, 0), 0);
}

static void test_job__backoff_doubles_to_six_minutes(void **state)
{
	(void)state;
	assert_int_equal(job_backoff_ms(0), 0);
	assert_int_equal(job_backoff_ms(1), 10000);
	assert_int_equal(job_backoff_ms(2), 20000);
	assert_int_equal(job_backoff_ms(3), 40000);
	assert_int_equal(job_backoff_ms(6), 320000);
	assert_int_equal(job_backoff_ms(7), 360000);
	assert_int_equal(job_backoff_ms(1000), 360000);
	/* what is left, from the last failure */
	assert_int_equal(job_backoff_left_ms(1, 100000, 100000), 10000);
	assert_int_equal(job_backoff_left_ms(1, 100000, 104000), 6000);
	assert_int_equal(job_backoff_left_ms(1, 100000, 110000), 0);
	assert_int_equal(job_backoff_left_ms(2, 100000, 115000), 5000);
	assert_int_equal(job_backoff_left_ms(0, 100000, 100000), 0);
	/* a clock behind the failure waits the whole back-off, not more */
	assert_int_equal(job_backoff_left_ms(1, 100000, 90000), 10000);
}

static void fmt(const char *bits, const char *want)
{
	long long n = (long long)strlen(bits);
	bool *set = xcalloc((size_t)n + 1, sizeof(bool));
	for (long long i = 0; i < n; i++)
		set[i] = bits[i] == '1';
	cleanup_free char *s = job_format_indexes(set, n);
	assert_string_equal(s, want);
	/* and back */
	bool *back = xcalloc((size_t)n + 1, sizeof(bool));
	assert_int_equal(job_parse_indexes(s, back, n), 0);
	assert_memory_equal(set, back, (size_t)n * sizeof(bool));
	free(set);
	free(back);
}

static void test_job__indexes_format_and_parse(void **state)
{
	(void)state;
	fmt("", "");
	fmt("0000", "");
	fmt("1", "0");
	fmt("010111", "1,3-5");
	fmt("1101", "0-1,3");
	fmt("11111", "0-4");
	fmt("1010101", "0,2,4,6");
	bool set[8] = {0};
	assert_int_equal(job_parse_indexes("1,3-5,7-12", set, 8), 0);
	assert_true(set[1] && set[3] && set[4] && set[5] && set[7]);
	assert_false(set[0] || set[2] || set[6]);
	assert_int_equal(job_parse_indexes("1,x", set, 8), -1);
	assert_int_equal(job_parse_indexes("5-3", set, 8), -1);
	assert_int_equal(job_parse_indexes("1;2", set, 8), -1);
	assert_int_equal(job_parse_indexes(NULL, set, 8), 0);
}

static void test_job__indexes_to_create_lowest_first(void **state)
{
	(void)state;
	bool done[6] = {1, 0, 0, 1, 0, 0}, active[6] = {0, 1, 0, 0, 0, 0};
	bool failed[6] = {0, 0, 0, 0, 1, 0};
	long long out[6];
	assert_int_equal(job_indexes_to_create(6, done, active, failed, 6, out), 2);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 5);
	assert_int_equal(job_indexes_to_create(6, done, active, failed, 1, out), 1);
	assert_int_equal(out[0], 2);
	assert_int_equal(job_indexes_to_create(6, done, active, NULL, 6, out), 3);
	assert_int_equal(out[1], 4);
	assert_int_equal(job_indexes_to_create(6, done, active, failed, 0, out), 0);
}

static struct ynode *job(const char *spec_extra)
{
	cleanup_free char *text = xasprintf(
	    "{apiVersion: batch/v1, kind: Job, metadata: {name: pi, namespace: dev, uid: u-1}, "
	    "spec: {%s template: {metadata: {labels: {app: pi}, annotations: {a: b}}, spec: "
	    "{restartPolicy: Never, containers: [{name: c, image: busybox, env: [{name: X, "
	    "value: y}]}], initContainers: [{name: i, image: busybox}]}}}}",
	    spec_extra);
	return y(text);
}

static void test_job__pod_from_template(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *j = job("");
	cleanup_ynode struct ynode *p = job_pod_new(j, -1, 0);
	const char *name = str(p, "metadata.name");
	assert_int_equal(strlen(name), strlen("pi-") + 5);
	assert_memory_equal(name, "pi-", 3);
	assert_string_equal(str(p, "metadata.namespace"), "dev");
	assert_string_equal(str(p, "metadata.labels.app"), "pi");
	assert_string_equal(obj_label(p, JOB_UID_LABEL), "u-1");
	assert_string_equal(obj_label(p, JOB_NAME_LABEL), "pi");
	assert_string_equal(obj_label(p, "controller-uid"), "u-1");
	assert_string_equal(obj_label(p, "job-name"), "pi");
	assert_string_equal(obj_annotation(p, "a"), "b");
	assert_null(obj_annotation(p, JOB_INDEX_KEY));
	assert_null(ynode_path(p, "spec.hostname"));
	const struct ynode *ref = obj_controller_ref(p);
	assert_non_null(ref);
	assert_string_equal(str(ref, "kind"), "Job");
	assert_string_equal(str(ref, "apiVersion"), "batch/v1");
	assert_string_equal(str(ref, "uid"), "u-1");
	assert_string_equal(str(p, "spec.restartPolicy"), "Never");
	assert_int_equal(ynode_path(p, "spec.containers[0].env")->n, 1);
}

static void test_job__indexed_pod(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *j = job("completionMode: Indexed, completions: 4,");
	cleanup_ynode struct ynode *p = job_pod_new(j, 3, 2);
	const char *name = str(p, "metadata.name");
	assert_memory_equal(name, "pi-3-", 5);
	assert_int_equal(strlen(name), 5 + 5);
	assert_string_equal(obj_annotation(p, JOB_INDEX_KEY), "3");
	assert_string_equal(obj_label(p, JOB_INDEX_KEY), "3");
	assert_string_equal(obj_annotation(p, JOB_FAILURE_COUNT_KEY), "2");
	assert_string_equal(str(p, "spec.hostname"), "pi-3");
	assert_string_equal(str(p, "spec.containers[0].env[0].name"), "X");
	assert_string_equal(str(p, "spec.containers[0].env[1].name"), "JOB_COMPLETION_INDEX");
	assert_string_equal(str(p, "spec.containers[0].env[1].valueFrom.fieldRef.fieldPath"),
			    "metadata.annotations['batch.kubernetes.io/job-completion-index']");
	assert_string_equal(str(p, "spec.initContainers[0].env[0].name"), "JOB_COMPLETION_INDEX");
	assert_int_equal(job_pod_index(p, 4), 3);
	assert_int_equal(job_pod_index(p, 3), -1);
	cleanup_ynode struct ynode *first = job_pod_new(j, 0, 0);
	assert_null(obj_annotation(first, JOB_FAILURE_COUNT_KEY));
	assert_int_equal(job_pod_index(first, 4), 0);
}

/* A failed pod whose container c exited with code. */
static struct ynode *failed_pod(int code, const char *cond)
{
	cleanup_free char *text = xasprintf(
	    "{metadata: {name: pi-abcde, namespace: dev}, status: {phase: Failed, conditions: "
	    "[{type: %s, status: 'True'}], containerStatuses: [{name: c, state: {terminated: "
	    "{exitCode: %d}}}]}}",
	    cond, code);
	return y(text);
}

static void test_job__pod_failure_policy(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *j =
	    job("podFailurePolicy: {rules: ["
		"{action: FailJob, onExitCodes: {containerName: c, operator: In, values: [42]}},"
		"{action: Ignore, onPodConditions: [{type: DisruptionTarget}]},"
		"{action: Count, onExitCodes: {operator: NotIn, values: [1, 2]}},"
		"{action: Ignore, onExitCodes: {operator: In, values: [2]}}]},");
	cleanup_ynode struct ynode *p42 = failed_pod(42, "Ready");
	cleanup_free char *msg = NULL;
	assert_int_equal(job_pod_failure_action(j, p42, &msg), JOB_PFP_FAIL_JOB);
	assert_string_equal(msg, "Container c for pod dev/pi-abcde failed with exit code 42 "
				 "matching FailJob rule at index 0");
	cleanup_ynode struct ynode *pd = failed_pod(1, "DisruptionTarget");
	assert_int_equal(job_pod_failure_action(j, pd, NULL), JOB_PFP_IGNORE);
	cleanup_ynode struct ynode *p7 = failed_pod(7, "Ready");
	assert_int_equal(job_pod_failure_action(j, p7, NULL), JOB_PFP_COUNT);
	cleanup_ynode struct ynode *p2 = failed_pod(2, "Ready");
	assert_int_equal(job_pod_failure_action(j, p2, NULL), JOB_PFP_IGNORE);
	cleanup_ynode struct ynode *p1 = failed_pod(1, "Ready");
	assert_int_equal(job_pod_failure_action(j, p1, NULL), JOB_PFP_NONE);
	/* no policy: every failure counts */
	cleanup_ynode struct ynode *plain = job("");
	assert_int_equal(job_pod_failure_action(plain, p42, NULL), JOB_PFP_NONE);
	cleanup_ynode struct ynode *fi =
	    job("podFailurePolicy: {rules: [{action: FailIndex, onExitCodes: {operator: In, "
		"values: [7]}}]},");
	assert_int_equal(job_pod_failure_action(fi, p7, NULL), JOB_PFP_FAIL_INDEX);
}

static void test_job__finished_and_ttl(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *running =
	    y("{spec: {ttlSecondsAfterFinished: 30}, status: {conditions: [{type: Suspended, "
	      "status: 'False'}]}}");
	assert_false(job_finished(running, NULL));
	assert_int_equal(ttl_expires_at(running), -1);
	cleanup_ynode struct ynode *done =
	    y("{spec: {ttlSecondsAfterFinished: 30}, status: {completionTime: "
	      "'2026-01-01T00:00:05Z', conditions: [{type: Complete, status: 'True', "
	      "lastTransitionTime: '2026-01-01T00:00:00Z'}]}}");
	const char *type = NULL;
	assert_true(job_finished(done, &type));
	assert_string_equal(type, "Complete");
	assert_int_equal(ttl_expires_at(done), obj_time_parse("2026-01-01T00:00:30Z"));
	cleanup_ynode struct ynode *failed =
	    y("{spec: {ttlSecondsAfterFinished: 0}, status: {conditions: [{type: Failed, status: "
	      "'True', lastTransitionTime: '2026-01-01T00:01:00Z'}]}}");
	assert_true(job_finished(failed, &type));
	assert_string_equal(type, "Failed");
	assert_int_equal(ttl_expires_at(failed), obj_time_parse("2026-01-01T00:01:00Z"));
	cleanup_ynode struct ynode *no_ttl =
	    y("{spec: {}, status: {conditions: [{type: Failed, status: 'True'}]}}");
	assert_int_equal(ttl_expires_at(no_ttl), -1);
	cleanup_ynode struct ynode *false_complete =
	    y("{status: {conditions: [{type: Complete, status: 'False'}]}}");
	assert_false(job_finished(false_complete, NULL));
}

static void test_podgc__oldest_first(void **state)
{
	(void)state;
	struct ynode *a = y("{metadata: {name: a, creationTimestamp: '2026-01-01T00:00:03Z'}}");
	struct ynode *b = y("{metadata: {name: b, creationTimestamp: '2026-01-01T00:00:01Z'}}");
	struct ynode *c = y("{metadata: {name: c, creationTimestamp: '2026-01-01T00:00:01Z'}}");
	const struct ynode *pods[] = {a, c, b};
	podgc_sort_oldest(pods, 3);
	assert_string_equal(obj_name(pods[0]), "b");
	assert_string_equal(obj_name(pods[1]), "c");
	assert_string_equal(obj_name(pods[2]), "a");
	ynode_free(a);
	ynode_free(b);
	ynode_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_job__want_active),
	    cmocka_unit_test(test_job__backoff_doubles_to_six_minutes),
	    cmocka_unit_test(test_job__indexes_format_and_parse),
	    cmocka_unit_test(test_job__indexes_to_create_lowest_first),
	    cmocka_unit_test(test_job__pod_from_template),
	    cmocka_unit_test(test_job__indexed_pod),
	    cmocka_unit_test(test_job__pod_failure_policy),
	    cmocka_unit_test(test_job__finished_and_ttl),
	    cmocka_unit_test(test_podgc__oldest_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
