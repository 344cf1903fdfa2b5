/* test_noded_metrics.c: corral-noded's metrics (noded/metrics.c) and the
 * cgroup accounting readers (noded/cgroup.c) against fixture files of
 * cgroup v1 and v2 under tests/data/cgroup/: the CPU counter, the memory
 * working set as cadvisor computes it, the rate and its units, and the
 * PodMetrics and NodeMetrics objects as metrics-server serves them. */
#include "testlib.h"

#include <errno.h>
#include <unistd.h>

#include "cgroup.h"
#include "metrics.h"
#include "util.h"

static char *fixture(const char *rel)
{
	const char *root = getenv("CORRAL_ROOT");
	return xasprintf("%s/tests/data/cgroup/%s", root ? root : ".", rel);
}

static void test_metrics__cgroup_v1(void **state)
{
	(void)state;
	cleanup_free char *mem = fixture("v1/memory");
	cleanup_free char *acct = fixture("v1/cpuacct");
	struct cgroup_usage u = {0};
	cleanup_error struct error *err = NULL;
	assert_int_equal(cgroup_usage_v1(mem, acct, &u, &err), 0);
	assert_int_equal(u.cpu_ns, 312345678000ULL);
	/* usage_in_bytes 14540800 less total_inactive_file 5079040 */
	assert_int_equal(u.memory_working_set, 9461760);
	char buf[METRICS_BUF];
	metrics_format_memory(u.memory_working_set, buf);
	assert_string_equal(buf, "9240Ki");
}

static void test_metrics__cgroup_v1_inactive_above_usage(void **state)
{
	(void)state;
	/* no total_ lines; inactive_file larger than the usage: 0, never
	 * negative */
	cleanup_free char *dir = fixture("v1-nototal");
	struct cgroup_usage u = {0};
	assert_int_equal(cgroup_usage_v1(dir, dir, &u, NULL), 0);
	assert_int_equal(u.memory_working_set, 0);
}

static void test_metrics__cgroup_v2(void **state)
{
	(void)state;
	cleanup_free char *dir = fixture("v2");
	struct cgroup_usage u = {0};
	assert_int_equal(cgroup_usage_v2(dir, &u, NULL), 0);
	assert_int_equal(u.cpu_ns, 1500250000ULL); /* usage_usec x 1000 */
	/* memory.current 10485760 less inactive_file 1048576 */
	assert_int_equal(u.memory_working_set, 9437184);
	char buf[METRICS_BUF];
	metrics_format_memory(u.memory_working_set, buf);
	assert_string_equal(buf, "9Mi");
}

static void test_metrics__cgroup_missing_files(void **state)
{
	(void)state;
	cleanup_free char *dir = fixture("nowhere");
	struct cgroup_usage u;
	cleanup_error struct error *e1 = NULL, *e2 = NULL;
	assert_true(cgroup_usage_v2(dir, &u, &e1) < 0);
	assert_int_equal(e1->status, ENOENT);
	assert_true(cgroup_usage_v1(dir, dir, &u, &e2) < 0);
	/* v1's file names are not v2's */
	cleanup_free char *v2 = fixture("v2");
	assert_true(cgroup_usage_v1(v2, v2, &u, NULL) < 0);
}

static void test_metrics__rates_and_units(void **state)
{
	(void)state;
	/* 4.685 s of CPU in 15 s: 312345678n */
	assert_int_equal(metrics_nanocores(0, 4685185170ULL, 15000000000ULL), 312345678);
	/* two cores busy */
	assert_int_equal(metrics_nanocores(1000, 1000 + 30000000000ULL, 15000000000ULL),
			 2000000000ULL);
	assert_int_equal(metrics_nanocores(500, 100, 1000), 0); /* restarted */
	assert_int_equal(metrics_nanocores(0, 100, 0), 0);
	char buf[METRICS_BUF];
	metrics_format_cpu(312345678, buf);
	assert_string_equal(buf, "312345678n");
	metrics_format_memory(1000, buf);
	assert_string_equal(buf, "1000");
	metrics_format_memory(2LL << 30, buf);
	assert_string_equal(buf, "2Gi");
	metrics_format_memory(0, buf);
	assert_string_equal(buf, "0");
	metrics_format_window(15000, buf);
	assert_string_equal(buf, "15s");
	metrics_format_window(1500, buf);
	assert_string_equal(buf, "1.5s");
	metrics_format_window(60000, buf);
	assert_string_equal(buf, "1m0s");
	metrics_format_window(15250, buf);
	assert_string_equal(buf, "15.25s");
}

static void test_metrics__pod_object(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *pod =
	    y("metadata:\n  name: web-1\n  namespace: dev\n  uid: u-1\n  labels:\n    app: web\n");
	const struct metrics_container c[] = {{"app", 312345678, 9461760}, {"side", 0, 4096}};
	cleanup_ynode struct ynode *o = metrics_pod_object(pod, c, 2, 1800000000, 15000);
	assert_string_equal(str(o, "apiVersion"), "metrics.k8s.io/v1beta1");
	assert_string_equal(str(o, "kind"), "PodMetrics");
	assert_string_equal(str(o, "metadata.name"), "web-1");
	assert_string_equal(str(o, "metadata.namespace"), "dev");
	assert_string_equal(str(o, "metadata.labels.app"), "web");
	assert_string_equal(str(o, "metadata.ownerReferences[0].kind"), "Pod");
	assert_string_equal(str(o, "metadata.ownerReferences[0].uid"), "u-1");
	assert_string_equal(str(o, "timestamp"), "2027-01-15T08:00:00Z");
	assert_string_equal(str(o, "window"), "15s");
	assert_string_equal(str(o, "containers[0].name"), "app");
	assert_string_equal(str(o, "containers[0].usage.cpu"), "312345678n");
	assert_string_equal(str(o, "containers[0].usage.memory"), "9240Ki");
	assert_string_equal(str(o, "containers[1].usage.cpu"), "0n");
	assert_string_equal(str(o, "containers[1].usage.memory"), "4Ki");
}

static void test_metrics__node_object_and_proc(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *o =
	    metrics_node_object("n1", "u-n", 1200000000, 2LL << 30, 1800000000, 60000);
	assert_string_equal(str(o, "kind"), "NodeMetrics");
	assert_null(ynode_path(o, "metadata.namespace"));
	assert_string_equal(str(o, "metadata.ownerReferences[0].kind"), "Node");
	assert_string_equal(str(o, "usage.cpu"), "1200000000n");
	assert_string_equal(str(o, "usage.memory"), "2Gi");
	assert_string_equal(str(o, "window"), "1m0s");
	uint64_t ns = 0;
	long hz = sysconf(_SC_CLK_TCK);
	assert_int_equal(
	    metrics_parse_proc_stat("cpu  100 20 30 5000 7 1 2 3 0 0\ncpu0 1 2 3 4\n", &ns, NULL),
	    0);
	/* user nice system irq softirq steal, not idle or iowait */
	assert_int_equal(ns, 156ULL * (1000000000ULL / (unsigned long long)hz));
	assert_true(metrics_parse_proc_stat("intr 1 2\n", &ns, NULL) < 0);
	int64_t ws = 0;
	assert_int_equal(
	    metrics_parse_meminfo("MemTotal:       16000 kB\nMemFree:        4000 kB\n"
				  "MemAvailable:   9000 kB\nInactive(file):  2000 kB\n",
				  &ws, NULL),
	    0);
	assert_int_equal(ws, 10000 * 1024);
	assert_true(metrics_parse_meminfo("Buffers: 1 kB\n", &ws, NULL) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_metrics__cgroup_v1),
	    cmocka_unit_test(test_metrics__cgroup_v1_inactive_above_usage),
	    cmocka_unit_test(test_metrics__cgroup_v2),
	    cmocka_unit_test(test_metrics__cgroup_missing_files),
	    cmocka_unit_test(test_metrics__rates_and_units),
	    cmocka_unit_test(test_metrics__pod_object),
	    cmocka_unit_test(test_metrics__node_object_and_proc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
