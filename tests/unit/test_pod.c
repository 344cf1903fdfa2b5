/* test_pod.c: a pod's state as Kubernetes' podutil reads it: terminal
 * (Succeeded, Failed), active (neither, and not being deleted, a null
 * deletionTimestamp being none), ready (the Ready condition True, since
 * when) and available after minReadySeconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "pod.h"

static struct ynode *parse(const char *text)
{
	struct ynode *n = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &n, NULL), 0);
	return n;
}

static void test_pod__terminal_and_active(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool terminal, deleting, active;
	} cases[] = {
	    {"status: {phase: Running}\n", false, false, true},
	    {"status: {phase: Pending}\n", false, false, true},
	    {"metadata: {name: p}\n", false, false, true},
	    {"status: {phase: Succeeded}\n", true, false, false},
	    {"status: {phase: Failed}\n", true, false, false},
	    {"metadata: {deletionTimestamp: \"2026-01-01T00:00:00Z\"}\nstatus: {phase: Running}\n",
	     false, true, false},
	    {"metadata: {deletionTimestamp: \"2026-01-01T00:00:00Z\"}\nstatus: {phase: Failed}\n",
	     true, true, false},
	    /* null is no deletionTimestamp (Go's nil *Time) */
	    {"metadata: {deletionTimestamp: null}\nstatus: {phase: Running}\n", false, false, true},
	    {"metadata: {deletionTimestamp: ~}\n", false, false, true},
	    {"metadata: {deletionTimestamp: \"\"}\n", false, false, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cleanup_ynode struct ynode *pod = parse(cases[i].text);
		if (pod_is_terminal(pod) != cases[i].terminal ||
		    object_is_deleting(pod) != cases[i].deleting ||
		    pod_is_active(pod) != cases[i].active)
			fail_msg("case %zu: %s", i, cases[i].text);
	}
	assert_false(pod_is_terminal(NULL));
	assert_false(object_is_deleting(NULL));
}

static void test_pod__ready_and_available(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *ready = parse(
	    "status:\n  conditions:\n"
	    "  - {type: PodScheduled, status: \"True\"}\n"
	    "  - {type: Ready, status: \"True\", lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n");
	cleanup_ynode struct ynode *not_ready = parse(
	    "status:\n  conditions:\n"
	    "  - {type: Ready, status: \"False\", lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n");
	cleanup_ynode struct ynode *no_time =
	    parse("status:\n  conditions:\n  - {type: Ready, status: \"True\"}\n");
	cleanup_ynode struct ynode *none = parse("status: {phase: Running}\n");
	int64_t since = 0, wait = 0;
	assert_true(pod_is_ready(ready, &since));
	assert_int_equal(since, 1767225600);
	assert_false(pod_is_ready(not_ready, &since));
	assert_int_equal(since, 1767225600);
	assert_true(pod_is_ready(no_time, &since));
	assert_int_equal(since, -1);
	assert_false(pod_is_ready(none, &since));
	assert_int_equal(since, -1);
	assert_true(pod_is_available(ready, 0, 0, NULL));
	assert_false(pod_is_available(ready, 60, 1767225600 + 10, &wait));
	assert_int_equal(wait, 50);
	assert_true(pod_is_available(ready, 60, 1767225600 + 60, &wait));
	assert_int_equal(wait, 0);
	assert_false(pod_is_available(not_ready, 0, 0, &wait));
	/* Ready since an unknown time: not available until a status says. */
	assert_true(pod_is_available(no_time, 0, 0, NULL));
	assert_false(pod_is_available(no_time, 1, 1767225600, &wait));
	assert_int_equal(wait, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pod__terminal_and_active),
	    cmocka_unit_test(test_pod__ready_and_available),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
