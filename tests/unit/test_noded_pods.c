/* test_noded_pods.c: the pod status corral-noded writes — what a hollow
 * node reports (Running and Ready with its IP, every container running,
 * init containers completed), what the real runtime reports until it exists
 * (Pending, ContainerRuntimeNotReady, no IP), building again changing
 * nothing, times kept across changes, others' fields kept, the phase rules
 * and QoS classes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conditions.h"
#include "loop.h"
#include "podstatus.h"
#include "runtime.h"
#include "testlib.h"
#include "timefmt.h"
#include "util.h"

#define T0 1796000000

static const char pod_yaml[] = "apiVersion: v1\n"
			       "kind: Pod\n"
			       "metadata: {name: web, namespace: dev, uid: u-1}\n"
			       "spec:\n"
			       "  nodeName: hollow-1\n"
			       "  restartPolicy: Always\n"
			       "  initContainers: [{name: setup, image: busybox}]\n"
			       "  containers:\n"
			       "  - {name: app, image: 'nginx:1.25'}\n"
			       "  - {name: side, image: busybox}\n";

/* A status built for pod, stored in it as corral-fs would, read back. */
static void store_status(struct ynode *pod, struct ynode *status)
{
	cleanup_free char *text = yaml_emit(status, NULL);
	ynode_free(status);
	ynode_set(pod, "status", y(text));
}

static struct ynode *hollow_status(struct runtime *rt, const struct ynode *pod, time_t now)
{
	struct pod_report r = {0};
	assert_int_equal(runtime_sync_pod(rt, "dev/web", pod, "10.244.7.2", &r, NULL), 0);
	struct ynode *st = podstatus_build(pod, &r, "192.0.2.2", "10.244.7.2", now);
	pod_report_clear(&r);
	return st;
}

static void test_podstatus__hollow_pod_runs_at_once(void **state)
{
	(void)state;
	cleanup_runtime struct runtime *rt = runtime_hollow_new();
	assert_true(rt->wants_ip);
	const char *reason, *message;
	assert_true(runtime_ready(rt, &reason, &message));
	cleanup_ynode struct ynode *pod = y(pod_yaml);
	cleanup_ynode struct ynode *st = hollow_status(rt, pod, T0);
	char now[RFC3339_SIZE];
	rfc3339_format(T0, now);

	assert_string_equal(str(st, "phase"), "Running");
	assert_string_equal(str(st, "podIP"), "10.244.7.2");
	assert_string_equal(str(st, "podIPs[0].ip"), "10.244.7.2");
	assert_string_equal(str(st, "hostIP"), "192.0.2.2");
	assert_string_equal(str(st, "hostIPs[0].ip"), "192.0.2.2");
	assert_string_equal(str(st, "startTime"), now);
	assert_string_equal(str(st, "qosClass"), "BestEffort");

	static const char *const types[] = {"Initialized", "Ready", "ContainersReady",
					    "PodScheduled"};
	const struct ynode *conds = ynode_get(st, "conditions");
	assert_int_equal(conds->n, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct ynode *c = condition_find(conds, types[i]);
		assert_non_null(c);
		assert_string_equal(str(c, "status"), "True");
		assert_string_equal(str(c, "lastTransitionTime"), now);
	}

	const struct ynode *cs = ynode_get(st, "containerStatuses");
	assert_int_equal(cs->n, 2);
	assert_string_equal(str(cs, "[0].name"), "app");
	assert_string_equal(str(cs, "[0].image"), "nginx:1.25");
	assert_non_null(strstr(str(cs, "[0].imageID"), "nginx:1.25"));
	assert_true(strncmp(str(cs, "[0].containerID"), "hollow://", 9) == 0);
	assert_string_equal(str(cs, "[0].ready"), "true");
	assert_string_equal(str(cs, "[0].started"), "true");
	assert_string_equal(str(cs, "[0].restartCount"), "0");
	assert_string_equal(str(cs, "[0].state.running.startedAt"), now);
	assert_string_equal(str(cs, "[1].name"), "side");
	assert_string_equal(str(cs, "[1].image"), "busybox");
	assert_string_not_equal(str(cs, "[0].containerID"), str(cs, "[1].containerID"));

	const struct ynode *ics = ynode_get(st, "initContainerStatuses");
	assert_int_equal(ics->n, 1);
	assert_string_equal(str(ics, "[0].name"), "setup");
	assert_string_equal(str(ics, "[0].state.terminated.exitCode"), "0");
	assert_string_equal(str(ics, "[0].state.terminated.reason"), "Completed");
	assert_string_equal(str(ics, "[0].ready"), "true");
}

static void test_podstatus__building_again_changes_nothing(void **state)
{
	(void)state;
	cleanup_runtime struct runtime *rt = runtime_hollow_new();
	cleanup_ynode struct ynode *pod = y(pod_yaml);
	store_status(pod, hollow_status(rt, pod, T0));
	/* later, as after an event of our own write or an agent restart */
	cleanup_ynode struct ynode *again = hollow_status(rt, pod, T0 + 300);
	assert_true(ynode_equal(again, ynode_get(pod, "status")));
}

/* The real runtime, not attached to a network yet: its binaries are
 * stand-ins in a scratch folder (nothing is started without an address). */
static struct loop *test_loop;
static char test_bin[] = "/tmp/corral-noded-test.XXXXXX";

static struct runtime *real_runtime(void)
{
	if (!test_loop) {
		assert_non_null(mkdtemp(test_bin));
		static const char *const names[] = {"corral-pause", "corral-shim"};
		for (size_t i = 0; i < 2; i++) {
			char *path = xasprintf("%s/%s", test_bin, names[i]);
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			fputs("#!/bin/sh\nexit 1\n", f);
			fclose(f);
			chmod(path, 0755);
			free(path);
		}
		test_loop = loop_new(NULL);
		assert_non_null(test_loop);
	}
	const struct nspawn_opts o = {
	    .loop = test_loop,
	    .mount = "/nonexistent",
	    .node = "n1",
	    .state_dir = test_bin,
	    .images_dir = test_bin,
	    .log_dir = test_bin,
	    .bin_dir = test_bin,
	    .dns_ip = "10.96.0.10",
	    .domain = "cluster.local",
	};
	struct runtime *rt = runtime_nspawn_new(&o, NULL);
	assert_non_null(rt);
	return rt;
}

static void test_podstatus__real_runtime_not_ready_is_pending_with_a_reason(void **state)
{
	(void)state;
	cleanup_runtime struct runtime *rt = real_runtime();
	assert_true(rt->wants_ip);
	const char *reason, *message;
	assert_false(runtime_ready(rt, &reason, &message));
	assert_string_equal(reason, "KubeletNotReady");
	assert_non_null(strstr(message, "network not ready"));

	cleanup_ynode struct ynode *pod = y(pod_yaml);
	struct pod_report r = {0};
	assert_int_equal(runtime_sync_pod(rt, "dev/web", pod, NULL, &r, NULL), 0);
	cleanup_ynode struct ynode *st = podstatus_build(pod, &r, "192.0.2.2", NULL, T0);
	pod_report_clear(&r);
	assert_string_equal(str(st, "phase"), "Pending");
	assert_null(ynode_get(st, "podIP"));
	assert_null(ynode_get(st, "podIPs"));
	assert_string_equal(str(st, "hostIP"), "192.0.2.2");
	assert_non_null(ynode_get(st, "startTime"));
	const struct ynode *cs = ynode_get(st, "containerStatuses");
	for (size_t i = 0; i < cs->n; i++) {
		const struct ynode *c = ynode_item(cs, i);
		assert_string_equal(str(c, "state.waiting.reason"), "ContainerCreating");
		assert_non_null(ynode_path(c, "state.waiting.message"));
		assert_string_equal(str(c, "ready"), "false");
		assert_string_equal(str(c, "started"), "false");
		assert_null(ynode_get(c, "containerID"));
	}
	const struct ynode *conds = ynode_get(st, "conditions");
	const struct ynode *ready = condition_find(conds, "Ready");
	assert_string_equal(str(ready, "status"), "False");
	assert_string_equal(str(ready, "reason"), "ContainersNotReady");
	assert_string_equal(str(ready, "message"), "containers with unready status: [app side]");
	const struct ynode *init = condition_find(conds, "Initialized");
	assert_string_equal(str(init, "status"), "False");
	assert_string_equal(str(init, "message"), "containers with incomplete status: [setup]");
	assert_string_equal(str(condition_find(conds, "PodScheduled"), "status"), "True");
}

static void test_podstatus__pending_then_running_keeps_start_time(void **state)
{
	(void)state;
	cleanup_runtime struct runtime *real = real_runtime();
	cleanup_runtime struct runtime *hollow = runtime_hollow_new();
	cleanup_ynode struct ynode *pod = y(pod_yaml);
	struct pod_report r = {0};
	assert_int_equal(runtime_sync_pod(real, "dev/web", pod, NULL, &r, NULL), 0);
	store_status(pod, podstatus_build(pod, &r, "192.0.2.2", NULL, T0));
	pod_report_clear(&r);
	cleanup_ynode struct ynode *st = hollow_status(hollow, pod, T0 + 60);
	char t0[RFC3339_SIZE], t1[RFC3339_SIZE];
	rfc3339_format(T0, t0);
	rfc3339_format(T0 + 60, t1);
	assert_string_equal(str(st, "phase"), "Running");
	assert_string_equal(str(st, "startTime"), t0);
	const struct ynode *conds = ynode_get(st, "conditions");
	assert_string_equal(str(condition_find(conds, "Ready"), "lastTransitionTime"), t1);
	assert_string_equal(str(condition_find(conds, "PodScheduled"), "lastTransitionTime"), t0);
	assert_string_equal(str(st, "containerStatuses[0].state.running.startedAt"), t1);
	assert_null(ynode_path(st, "containerStatuses[0].state.waiting"));
}

static void test_podstatus__keeps_what_others_wrote(void **state)
{
	(void)state;
	cleanup_runtime struct runtime *rt = runtime_hollow_new();
	cleanup_ynode struct ynode *pod = y(pod_yaml);
	ynode_set(pod, "status",
		  y("nominatedNodeName: hollow-1\n"
		    "conditions:\n"
		    "- {type: PodScheduled, status: 'True', lastTransitionTime: T}\n"
		    "- {type: DisruptionTarget, status: 'False', lastTransitionTime: T}\n"));
	cleanup_ynode struct ynode *st = hollow_status(rt, pod, T0);
	assert_string_equal(str(st, "nominatedNodeName"), "hollow-1");
	const struct ynode *conds = ynode_get(st, "conditions");
	assert_int_equal(conds->n, 5);
	assert_non_null(condition_find(conds, "DisruptionTarget"));
	/* the scheduler's PodScheduled keeps its time */
	assert_string_equal(str(condition_find(conds, "PodScheduled"), "lastTransitionTime"), "T");
}

static void test_podstatus__replaced_container_gets_new_times(void **state)
{
	(void)state;
	cleanup_runtime struct runtime *rt = runtime_hollow_new();
	cleanup_ynode struct ynode *pod = y(pod_yaml);
	store_status(pod, hollow_status(rt, pod, T0));
	/* same name, another pod (a new uid): other container IDs */
	ynode_set(ynode_get(pod, "metadata"), "uid", ynode_new_str("u-2"));
	cleanup_ynode struct ynode *st = hollow_status(rt, pod, T0 + 5);
	char t1[RFC3339_SIZE];
	rfc3339_format(T0 + 5, t1);
	assert_string_equal(str(st, "containerStatuses[0].state.running.startedAt"), t1);
}

static struct pod_report report(const char *states)
{
	/* one letter per container: w waiting, W waiting to restart, r
	 * running, s exited 0, f exited 1; before '|' the init containers */
	struct pod_report r = {0};
	const char *bar = strchr(states, '|');
	const char *main_states = bar ? bar + 1 : states;
	size_t ni = bar ? (size_t)(bar - states) : 0, nc = strlen(main_states);
	r.init = ni ? xcalloc(ni, sizeof(*r.init)) : NULL;
	r.containers = nc ? xcalloc(nc, sizeof(*r.containers)) : NULL;
	r.ninit = ni;
	r.ncontainers = nc;
	for (size_t k = 0; k < ni + nc; k++) {
		struct pod_container_report *c = k < ni ? &r.init[k] : &r.containers[k - ni];
		char s = k < ni ? states[k] : main_states[k - ni];
		c->name = xasprintf("c%zu", k);
		c->state = s == 'r'		  ? POD_CONTAINER_RUNNING
			   : s == 's' || s == 'f' ? POD_CONTAINER_TERMINATED
						  : POD_CONTAINER_WAITING;
		c->exit_code = s == 'f';
		c->restart_count = s == 'W';
	}
	return r;
}

static void test_podstatus_phase__kubelet_rules(void **state)
{
	(void)state;
	static const struct {
		const char *states, *policy, *want;
	} cases[] = {
	    {"", "Always", "Pending"},	      {"w", "Always", "Pending"},
	    {"rw", "Always", "Pending"},      {"rr", "Always", "Running"},
	    {"rs", "Never", "Running"},	      {"rW", "Always", "Running"},
	    {"ss", "Always", "Running"},      {"ss", "Never", "Succeeded"},
	    {"ss", "OnFailure", "Succeeded"}, {"sf", "Never", "Failed"},
	    {"sf", "OnFailure", "Running"},   {"w|r", "Always", "Pending"},
	    {"r|r", "Always", "Pending"},     {"s|r", "Always", "Running"},
	    {"f|r", "Never", "Failed"},	      {"f|r", "Always", "Pending"},
	    {"ss", NULL, "Running"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pod_report r = report(cases[i].states);
		const char *got = podstatus_phase(&r, cases[i].policy);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("%s with %s: %s, want %s", cases[i].states,
				 cases[i].policy ? cases[i].policy : "(none)", got, cases[i].want);
		pod_report_clear(&r);
	}
}

static void test_podstatus_qos_class(void **state)
{
	(void)state;
	static const struct {
		const char *containers, *want;
	} cases[] = {
	    {"[{name: a}]", "BestEffort"},
	    {"[{name: a, resources: {}}]", "BestEffort"},
	    {"[{name: a, resources: {requests: {cpu: 100m}}}]", "Burstable"},
	    {"[{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]", "Guaranteed"},
	    {"[{name: a, resources: {limits: {cpu: 1, memory: 1Gi},"
	     " requests: {cpu: 1000m, memory: 1024Mi}}}]",
	     "Guaranteed"},
	    {"[{name: a, resources: {limits: {cpu: 1, memory: 1Gi},"
	     " requests: {cpu: 500m}}}]",
	     "Burstable"},
	    {"[{name: a, resources: {limits: {cpu: 1}}}]", "Burstable"},
	    {"[{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}, {name: b}]", "Burstable"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cleanup_free char *text =
		    xasprintf("spec: {containers: %s}\n", cases[i].containers);
		cleanup_ynode struct ynode *pod = y(text);
		const char *got = podstatus_qos_class(pod);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("%s: %s, want %s", cases[i].containers, got, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_podstatus__hollow_pod_runs_at_once),
	    cmocka_unit_test(test_podstatus__building_again_changes_nothing),
	    cmocka_unit_test(test_podstatus__real_runtime_not_ready_is_pending_with_a_reason),
	    cmocka_unit_test(test_podstatus__pending_then_running_keeps_start_time),
	    cmocka_unit_test(test_podstatus__keeps_what_others_wrote),
	    cmocka_unit_test(test_podstatus__replaced_container_gets_new_times),
	    cmocka_unit_test(test_podstatus_phase__kubelet_rules),
	    cmocka_unit_test(test_podstatus_qos_class),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	if (test_loop) { /* the real runtime's scratch folder */
		testlib_rm_tree(test_bin);
		loop_free(test_loop);
	}
	return failed;
}
