/* test_conditions.c: status.conditions: lastTransitionTime kept while the
 * status holds and moved when it changes, the per-kind times (a Node's
 * heartbeat, a Pod's probe time, a Deployment's update time), replacing in
 * place or at the end, finding, comparing and removing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "conditions.h"
#include "testlib.h"

static void test_condition_build__transition_time_kept_while_status_holds(void **state)
{
	(void)state;
	const struct condition ready = {"Ready", "True", "KubeletReady", "ok"};
	cleanup_ynode struct ynode *first =
	    condition_build(&ready, NULL, "T1", CONDITION_HEARTBEAT);
	assert_string_equal(str(first, "type"), "Ready");
	assert_string_equal(str(first, "lastTransitionTime"), "T1");
	assert_string_equal(str(first, "lastHeartbeatTime"), "T1");
	cleanup_ynode struct ynode *second =
	    condition_build(&ready, first, "T2", CONDITION_HEARTBEAT);
	assert_string_equal(str(second, "lastTransitionTime"), "T1");
	assert_string_equal(str(second, "lastHeartbeatTime"), "T2");
	const struct condition down = {"Ready", "False", "KubeletNotReady", "no"};
	cleanup_ynode struct ynode *third =
	    condition_build(&down, second, "T3", CONDITION_HEARTBEAT);
	assert_string_equal(str(third, "lastTransitionTime"), "T3");
	assert_string_equal(str(third, "reason"), "KubeletNotReady");
	/* A pod's: lastProbeTime null, no heartbeat; no reason, no message. */
	const struct condition bare = {"PodScheduled", "True", NULL, NULL};
	cleanup_ynode struct ynode *pod = condition_build(&bare, NULL, "T1", CONDITION_PROBE_TIME);
	assert_non_null(ynode_get(pod, "lastProbeTime"));
	assert_true(ynode_is_null(ynode_get(pod, "lastProbeTime")));
	assert_null(ynode_get(pod, "lastHeartbeatTime"));
	assert_null(ynode_get(pod, "reason"));
	assert_null(ynode_get(pod, "message"));
	/* A Deployment's: lastUpdateTime moves at every set. */
	cleanup_ynode struct ynode *dep =
	    condition_build(&ready, first, "T4", CONDITION_UPDATE_TIME);
	assert_string_equal(str(dep, "lastUpdateTime"), "T4");
	assert_string_equal(str(dep, "lastTransitionTime"), "T1");
	/* An old condition with a null time has none to keep. */
	cleanup_ynode struct ynode *nulltime =
	    y("type: Ready\nstatus: \"True\"\nlastTransitionTime: null\n");
	cleanup_ynode struct ynode *fresh = condition_build(&ready, nulltime, "T5", 0);
	assert_string_equal(str(fresh, "lastTransitionTime"), "T5");
}

static const char *const pod_text = "status:\n"
				    "  conditions:\n"
				    "  - type: Initialized\n"
				    "    status: \"True\"\n"
				    "    lastTransitionTime: T0\n"
				    "  - type: Ready\n"
				    "    status: \"False\"\n"
				    "    reason: ContainersNotReady\n"
				    "    lastTransitionTime: T0\n"
				    "    lastProbeTime: null\n"
				    "  - type: PodScheduled\n"
				    "    status: \"True\"\n"
				    "    lastTransitionTime: T0\n";

static void test_condition_set__replaces_in_place_or_appends(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *pod = y(pod_text);
	struct ynode *st = ynode_get(pod, "status");
	const struct condition ready = {"Ready", "True", NULL, NULL};
	condition_set(st, &ready, "T1", CONDITION_PROBE_TIME);
	struct ynode *conds = ynode_get(st, "conditions");
	assert_int_equal(conds->n, 3);
	const struct ynode *c = ynode_item(conds, 1);
	assert_string_equal(str(c, "type"), "Ready");
	assert_string_equal(str(c, "status"), "True");
	assert_string_equal(str(c, "lastTransitionTime"), "T1");
	assert_null(ynode_get(c, "reason"));
	/* Same status: the time stays. */
	const struct condition sched = {"PodScheduled", "True", "Bound", NULL};
	condition_set(st, &sched, "T2", 0);
	assert_string_equal(str(ynode_item(conds, 2), "lastTransitionTime"), "T0");
	assert_string_equal(str(ynode_item(conds, 2), "reason"), "Bound");
	/* A new type goes at the end. */
	const struct condition target = {"DisruptionTarget", "True", "Evicted", "x"};
	condition_set(st, &target, "T3", 0);
	assert_int_equal(conds->n, 4);
	assert_string_equal(str(ynode_item(conds, 3), "type"), "DisruptionTarget");
	/* CONDITION_LAST moves the one it sets to the end. */
	const struct condition init = {"Initialized", "True", NULL, NULL};
	condition_set(st, &init, "T4", CONDITION_LAST);
	assert_int_equal(conds->n, 4);
	assert_string_equal(str(ynode_item(conds, 0), "type"), "Ready");
	assert_string_equal(str(ynode_item(conds, 3), "type"), "Initialized");
	assert_string_equal(str(ynode_item(conds, 3), "lastTransitionTime"), "T0");
	/* No list yet, or not a list: one is made. */
	cleanup_ynode struct ynode *empty = ynode_new_map();
	ynode_set(empty, "conditions", ynode_new_str("junk"));
	condition_set(empty, &ready, "T5", 0);
	assert_int_equal(ynode_get(empty, "conditions")->n, 1);
	assert_string_equal(str(empty, "conditions[0].lastTransitionTime"), "T5");
}

static void test_condition__find_compare_remove(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *pod = y(pod_text);
	struct ynode *st = ynode_get(pod, "status");
	const struct ynode *conds = ynode_get(st, "conditions");
	const struct ynode *ready = condition_find(conds, "Ready");
	assert_ptr_equal(ready, ynode_item(conds, 1));
	assert_null(condition_find(conds, "ContainersReady"));
	assert_null(condition_find(NULL, "Ready"));
	assert_null(condition_find(st, "Ready")); /* a mapping, not the list */
	assert_string_equal(condition_field(ready, "reason"), "ContainersNotReady");
	/* Absent and null read as "", as Go's omitempty strings. */
	assert_string_equal(condition_field(ready, "message"), "");
	assert_string_equal(condition_field(ready, "lastProbeTime"), "");
	assert_true(condition_field_is(ready, "message", NULL));
	assert_true(condition_field_is(ready, "message", ""));
	assert_false(condition_field_is(ready, "reason", NULL));
	const struct condition same = {"Ready", "False", "ContainersNotReady", NULL};
	const struct condition other_msg = {"Ready", "False", "ContainersNotReady", "m"};
	const struct condition other_status = {"Ready", "True", "ContainersNotReady", NULL};
	assert_true(condition_is(ready, &same));
	assert_false(condition_is(ready, &other_msg));
	assert_false(condition_is(ready, &other_status));
	assert_false(condition_is(NULL, &same));
	condition_remove(st, "Ready");
	assert_int_equal(ynode_get(st, "conditions")->n, 2);
	assert_null(condition_find(ynode_get(st, "conditions"), "Ready"));
	condition_remove(st, "Ready");
	assert_int_equal(ynode_get(st, "conditions")->n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_condition_build__transition_time_kept_while_status_holds),
	    cmocka_unit_test(test_condition_set__replaces_in_place_or_appends),
	    cmocka_unit_test(test_condition__find_compare_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
