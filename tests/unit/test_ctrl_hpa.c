/* test_ctrl_hpa.c: the HorizontalPodAutoscaler's arithmetic (ctrl/hpa.c)
 * against the cases of Kubernetes' documentation and its
 * replica_calculator_test.go: the ratio and ceil, the tolerance, pods
 * without metrics and pods not yet ready, several metrics, Object
 * metrics, behavior policies, selectPolicy and the stabilization
 * windows. */
#include "testlib.h"

#include "hpa.h"

#define NOW 1800000000LL

static const struct hpa_calc calc = {HPA_TOLERANCE, HPA_CPU_INIT_PERIOD_S, HPA_READINESS_DELAY_S,
				     NOW};

/* A running, ready pod started long ago, using milli of a request of
 * request. */
static struct hpa_pod pod(const char *name, int64_t milli, int64_t request)
{
	return (struct hpa_pod){.name = name,
				.phase = "Running",
				.has_ready = true,
				.ready = true,
				.ready_since = NOW - 3600,
				.start = NOW - 3600,
				.has_metric = true,
				.value = milli,
				.metric_time = NOW - 5,
				.metric_window = 15,
				.has_request = true,
				.request = request};
}

static int resource(int current, const struct hpa_pod *pods, size_t n, long long target,
		    long long *util)
{
	int replicas = -1;
	int64_t avg = 0;
	long long u = 0;
	cleanup_error struct error *err = NULL;
	int r = hpa_resource_replicas(&calc, current, pods, n, "cpu", true, target, &replicas, &u,
				      &avg, &err);
	if (r < 0)
		fail_msg("%s", err->msg);
	if (util)
		*util = u;
	return replicas;
}

/* The documentation's example: 200m used of a 100m target... here as
 * utilization: ceil(current x current/target). */
static void test_hpa__ratio_and_ceil(void **state)
{
	(void)state;
	struct hpa_pod p[] = {pod("a", 200, 100), pod("b", 200, 100)};
	long long util = 0;
	/* 200% against 100%: double */
	assert_int_equal(resource(2, p, 2, 100, &util), 4);
	assert_int_equal(util, 200);
	/* 50% against 100%: halve */
	p[0].value = p[1].value = 50;
	assert_int_equal(resource(2, p, 2, 100, &util), 1);
	/* replica_calculator_test: 3 pods at 10%, 30%, 50% of 1 core,
	 * target 30%: within tolerance, stays */
	struct hpa_pod q[] = {pod("a", 100, 1000), pod("b", 300, 1000), pod("c", 500, 1000)};
	assert_int_equal(resource(3, q, 3, 30, &util), 3);
	assert_int_equal(util, 30);
	/* ... target 20%: 30/20 x 3 = 4.5, up to 5 */
	assert_int_equal(resource(3, q, 3, 20, NULL), 5);
}

static void test_hpa__tolerance(void **state)
{
	(void)state;
	/* 109% of the target: within 10%, no change */
	struct hpa_pod p[] = {pod("a", 109, 100), pod("b", 109, 100)};
	assert_int_equal(resource(2, p, 2, 100, NULL), 2);
	/* 111%: beyond it */
	p[0].value = p[1].value = 111;
	assert_int_equal(resource(2, p, 2, 100, NULL), 3);
	/* 91% and 89% */
	p[0].value = p[1].value = 91;
	assert_int_equal(resource(2, p, 2, 100, NULL), 2);
	p[0].value = p[1].value = 80;
	assert_int_equal(resource(4,
				  (struct hpa_pod[]){pod("a", 80, 100), pod("b", 80, 100),
						     pod("c", 80, 100), pod("d", 80, 100)},
				  4, 100, NULL),
			 4); /* 0.8 x 4 = 3.2 -> 4: ceil keeps it */
	/* a configured tolerance of 0 acts on 101% */
	struct hpa_calc strict = calc;
	strict.tolerance = 0;
	struct hpa_pod r[] = {pod("a", 101, 100), pod("b", 101, 100)};
	int replicas;
	long long util;
	int64_t avg;
	assert_int_equal(
	    hpa_resource_replicas(&strict, 2, r, 2, "cpu", true, 100, &replicas, &util, &avg, NULL),
	    0);
	assert_int_equal(replicas, 3);
}

static void test_hpa__missing_metrics(void **state)
{
	(void)state;
	/* scale-up: missing pods count as 0%. Two at 100% of request
	 * against 50%, one without metrics: 2 x ... ratio 2 -> with the
	 * missing one at 0: 200/3 = 66% -> ratio 1.33 x 3 = 4 */
	struct hpa_pod p[] = {pod("a", 100, 100), pod("b", 100, 100), pod("c", 0, 100)};
	p[2].has_metric = false;
	assert_int_equal(resource(3, p, 3, 50, NULL), 4);
	/* scale-down: missing pods count as 100% of their request. Two at
	 * 10% against 50% with one missing: (10+10+100)/3 = 40% -> 0.8 x 3
	 * = 2.4 -> 3: no scale-down beyond what the missing one allows */
	p[0].value = p[1].value = 10;
	assert_int_equal(resource(3, p, 3, 50, NULL), 3);
	/* all at 0% but one missing: (0+0+100)/3 = 33% against 50%:
	 * 0.66 x 3 = 2 */
	p[0].value = p[1].value = 0;
	assert_int_equal(resource(3, p, 3, 50, NULL), 2);
	/* the fill-in crosses the target: the count stays (tolerance
	 * rule "would change direction") */
	p[0].value = p[1].value = 55;
	assert_int_equal(resource(3, p, 3, 50, NULL), 3);
}

static void test_hpa__not_ready_pods(void **state)
{
	(void)state;
	/* a pod not yet ready (within the CPU initialization period) is
	 * left out, then counted at 0% on a scale-up */
	struct hpa_pod p[] = {pod("a", 300, 100), pod("b", 300, 100), pod("c", 900, 100)};
	p[2].ready = false;
	p[2].start = NOW - 60;
	p[2].ready_since = NOW - 60;
	long long util = 0;
	/* ready ones at 300% against 100% -> with c at 0: 200% x 3 = 6 */
	assert_int_equal(resource(3, p, 3, 100, &util), 6);
	assert_int_equal(util, 300); /* the status shows the ready pods' use */
	/* a Pending pod is unready whatever the metric */
	struct hpa_pod q[] = {pod("a", 300, 100), pod("b", 0, 100)};
	q[1].phase = "Pending";
	assert_int_equal(resource(2, q, 2, 100, NULL), 3); /* 150% x 2 = 3 */
	/* on a scale-down unready pods are left out entirely */
	struct hpa_pod r[] = {pod("a", 20, 100), pod("b", 20, 100), pod("c", 0, 100)};
	r[2].ready = false;
	r[2].start = NOW - 60;
	assert_int_equal(resource(3, r, 3, 100, NULL), 1);
	/* a ready pod in its first 5 minutes whose sample predates its
	 * readiness is left out too */
	struct hpa_pod s[] = {pod("a", 100, 100), pod("b", 500, 100)};
	s[1].start = NOW - 120;
	s[1].ready_since = NOW - 10;
	s[1].metric_time = NOW - 5; /* window 15 s: taken before ready + window */
	assert_int_equal(resource(2, s, 2, 100, NULL), 2);
	/* past 5 minutes, a pod that turned unready later counts */
	struct hpa_pod t[] = {pod("a", 100, 100), pod("b", 300, 100)};
	t[1].ready = false;
	t[1].ready_since = NOW - 100;
	assert_int_equal(resource(2, t, 2, 100, NULL), 4);
	/* failed and deleting pods are ignored */
	struct hpa_pod u[] = {pod("a", 200, 100), pod("b", 0, 100), pod("c", 0, 100)};
	u[1].phase = "Failed";
	u[2].deleting = true;
	assert_int_equal(resource(3, u, 3, 100, NULL), 2);
}

static void test_hpa__errors(void **state)
{
	(void)state;
	int replicas;
	long long util;
	int64_t avg;
	cleanup_error struct error *e1 = NULL, *e2 = NULL, *e3 = NULL;
	assert_true(hpa_resource_replicas(&calc, 1, NULL, 0, "cpu", true, 50, &replicas, &util,
					  &avg, &e1) < 0);
	assert_non_null(strstr(e1->msg, "no pods returned by selector"));
	struct hpa_pod p[] = {pod("a", 100, 100)};
	p[0].has_request = false;
	p[0].missing_request = "app";
	assert_true(hpa_resource_replicas(&calc, 1, p, 1, "cpu", true, 50, &replicas, &util, &avg,
					  &e2) < 0);
	assert_string_equal(e2->msg, "missing request for cpu in container app of Pod a");
	struct hpa_pod q[] = {pod("a", 100, 100)};
	q[0].has_metric = false;
	assert_true(hpa_resource_replicas(&calc, 1, q, 1, "cpu", true, 50, &replicas, &util, &avg,
					  &e3) < 0);
	assert_non_null(strstr(e3->msg, "did not receive metrics for targeted pods"));
}

static void test_hpa__average_value_and_pods_metrics(void **state)
{
	(void)state;
	/* Pods metric qps, target 10 per pod: 3 pods at 20 -> 6 */
	struct hpa_pod p[] = {pod("a", 20000, 0), pod("b", 20000, 0), pod("c", 20000, 0)};
	int replicas = -1;
	int64_t avg = 0;
	assert_int_equal(hpa_plain_replicas(&calc, 3, p, 3, false, 10000, &replicas, &avg, NULL),
			 0);
	assert_int_equal(replicas, 6);
	assert_int_equal(avg, 20000);
	/* within tolerance */
	p[0].value = p[1].value = p[2].value = 10500;
	hpa_plain_replicas(&calc, 3, p, 3, false, 10000, &replicas, &avg, NULL);
	assert_int_equal(replicas, 3);
	/* a missing one on a scale-down counts at the target */
	p[0].value = p[1].value = 1000;
	p[2].has_metric = false;
	hpa_plain_replicas(&calc, 3, p, 3, false, 10000, &replicas, &avg, NULL);
	/* (1+1+10)/3 = 4 per pod -> 0.4 x 3 = 1.2 -> 2 */
	assert_int_equal(replicas, 2);
	/* a Pending pod without metrics on a scale-up counts at 0 */
	struct hpa_pod q[] = {pod("a", 30000, 0), pod("b", 0, 0)};
	q[1].phase = "Pending";
	q[1].has_metric = false;
	hpa_plain_replicas(&calc, 2, q, 2, false, 10000, &replicas, &avg, NULL);
	assert_int_equal(replicas, 3); /* 15 per pod x 2 / 10 */
}

static void test_hpa__object_metrics(void **state)
{
	(void)state;
	/* Value: 3 ready pods, the Service's qps 600 against 200: x3 */
	assert_int_equal(hpa_object_replicas(&calc, 3, 3, 600000, 200000), 9);
	assert_int_equal(hpa_object_replicas(&calc, 3, 3, 210000, 200000), 3); /* tolerance */
	assert_int_equal(hpa_object_replicas(&calc, 0, 0, 500000, 200000), 3); /* from 0 */
	/* AverageValue: 600 across replicas at 100 each -> 6; per-replica
	 * usage 600/3 = 200 */
	int64_t usage = 0;
	assert_int_equal(hpa_object_avg_replicas(&calc, 3, 600000, 100000, &usage), 6);
	assert_int_equal(usage, 200000);
	assert_int_equal(hpa_object_avg_replicas(&calc, 3, 310000, 100000, &usage), 3);
}

/* The documentation's algorithm details: with several metrics the
 * largest proposal wins (the controller takes the max). */
static void test_hpa__multiple_metrics_take_the_max(void **state)
{
	(void)state;
	struct hpa_pod p[] = {pod("a", 50, 100), pod("b", 50, 100)};
	int cpu = resource(2, p, 2, 100, NULL);			    /* cpu says 1 */
	int obj = hpa_object_replicas(&calc, 2, 2, 400000, 100000); /* qps says 8 */
	assert_int_equal(cpu, 1);
	assert_int_equal(obj, 8);
	assert_int_equal(cpu > obj ? cpu : obj, 8);
}

static int normalize(struct hpa_memory *m, const struct hpa_behavior *b, int64_t now, int current,
		     int desired, int min, int max, struct hpa_verdict *v)
{
	return hpa_normalize(m, b, 300, now, current, desired, min, max, v);
}

static void test_hpa__no_behavior_limits(void **state)
{
	(void)state;
	struct hpa_memory m = {0};
	struct hpa_verdict v;
	/* max(2 x current, 4) per sync */
	assert_int_equal(normalize(&m, NULL, NOW, 1, 10, 1, 20, &v), 4);
	assert_true(v.limited);
	assert_string_equal(v.limited_reason, "ScaleUpLimit");
	memset(&m, 0, sizeof(m));
	assert_int_equal(normalize(&m, NULL, NOW, 5, 30, 1, 8, &v), 8);
	assert_string_equal(v.limited_reason, "TooManyReplicas");
	memset(&m, 0, sizeof(m));
	assert_int_equal(normalize(&m, NULL, NOW, 3, 0, 2, 8, &v), 2);
	assert_string_equal(v.limited_reason, "TooFewReplicas");
	memset(&m, 0, sizeof(m));
	assert_int_equal(normalize(&m, NULL, NOW, 3, 5, 1, 8, &v), 5);
	assert_false(v.limited);
	assert_string_equal(v.limited_reason, "DesiredWithinRange");
	assert_string_equal(v.able_reason, "ReadyForNewScale");
}

static void test_hpa__downscale_stabilization(void **state)
{
	(void)state;
	struct hpa_memory m = {0};
	struct hpa_verdict v;
	/* 8 recommended, then 2: the highest of the last 300 s holds */
	assert_int_equal(normalize(&m, NULL, NOW, 8, 8, 1, 10, &v), 8);
	assert_int_equal(normalize(&m, NULL, NOW + 60, 8, 2, 1, 10, &v), 8);
	assert_string_equal(v.able_reason, "ScaleDownStabilized");
	assert_int_equal(normalize(&m, NULL, NOW + 200, 8, 3, 1, 10, &v), 8);
	/* once 8 is older than the window, the highest left is 3 */
	assert_int_equal(normalize(&m, NULL, NOW + 301, 8, 2, 1, 10, &v), 3);
	/* and later 2 */
	assert_int_equal(normalize(&m, NULL, NOW + 600, 3, 2, 1, 10, &v), 2);
	/* a scale-up is never held back */
	assert_int_equal(normalize(&m, NULL, NOW + 601, 2, 4, 1, 10, &v), 4);
}

static struct hpa_behavior behavior(const char *text)
{
	cleanup_ynode struct ynode *b = y(text);
	struct hpa_behavior out;
	hpa_behavior_parse(b, 300, &out);
	return out;
}

static void test_hpa__behavior_defaults(void **state)
{
	(void)state;
	struct hpa_behavior b = behavior("{}");
	assert_int_equal(b.up.window_s, 0);
	assert_int_equal(b.up.npolicies, 2);
	assert_int_equal(b.up.policies[0].type, HPA_POLICY_PODS);
	assert_int_equal(b.up.policies[0].value, 4);
	assert_int_equal(b.up.policies[1].type, HPA_POLICY_PERCENT);
	assert_int_equal(b.up.policies[1].value, 100);
	assert_int_equal(b.down.window_s, 300);
	assert_int_equal(b.down.npolicies, 1);
	assert_int_equal(b.down.policies[0].value, 100);
	assert_int_equal(b.down.select, HPA_SELECT_MAX);
	struct hpa_behavior c = behavior("scaleDown:\n  stabilizationWindowSeconds: 0\n"
					 "  selectPolicy: Disabled\n");
	assert_int_equal(c.down.window_s, 0);
	assert_int_equal(c.down.select, HPA_SELECT_DISABLED);
}

static void test_hpa__behavior_policies(void **state)
{
	(void)state;
	struct hpa_verdict v;
	/* the documentation's example: scaleDown 4 pods or 10% per minute,
	 * the larger change (Max) */
	struct hpa_behavior b = behavior("scaleDown:\n  stabilizationWindowSeconds: 0\n"
					 "  policies:\n  - type: Pods\n    value: 4\n"
					 "    periodSeconds: 60\n  - type: Percent\n    value: 10\n"
					 "    periodSeconds: 60\n");
	struct hpa_memory m = {0};
	/* from 80 to 1: 10% is 8, 4 pods is 4: the larger, 8, goes: 72 */
	assert_int_equal(normalize(&m, &b, NOW, 80, 1, 1, 100, &v), 72);
	assert_true(v.limited);
	assert_string_equal(v.limited_reason, "ScaleDownLimit");
	hpa_record_scale(&m, &b, NOW, 80, 72);
	/* within the same minute nothing more may go */
	assert_int_equal(normalize(&m, &b, NOW + 15, 72, 1, 1, 100, &v), 72);
	/* a minute later: 72 -> 10% of 72 is 7.2 -> 64 (int truncation) */
	assert_int_equal(normalize(&m, &b, NOW + 61, 72, 1, 1, 100, &v), 64);
	/* below 40 pods the 4-pod policy is the larger change */
	struct hpa_memory m2 = {0};
	assert_int_equal(normalize(&m2, &b, NOW, 30, 1, 1, 100, &v), 26);
	/* selectPolicy Min: the smaller change */
	struct hpa_behavior mn = behavior("scaleDown:\n  stabilizationWindowSeconds: 0\n"
					  "  selectPolicy: Min\n  policies:\n  - type: Pods\n"
					  "    value: 4\n    periodSeconds: 60\n  - type: Percent\n"
					  "    value: 10\n    periodSeconds: 60\n");
	struct hpa_memory m3 = {0};
	assert_int_equal(normalize(&m3, &mn, NOW, 80, 1, 1, 100, &v), 76);
	/* Disabled: no scale-down at all */
	struct hpa_behavior off = behavior("scaleDown:\n  selectPolicy: Disabled\n");
	struct hpa_memory m4 = {0};
	assert_int_equal(normalize(&m4, &off, NOW, 10, 1, 1, 100, &v), 10);
	/* the default scale-up: the larger of 4 pods and 100% per 15 s */
	struct hpa_behavior up = behavior("{}");
	struct hpa_memory m5 = {0};
	assert_int_equal(normalize(&m5, &up, NOW, 1, 50, 1, 100, &v), 5);
	assert_string_equal(v.limited_reason, "ScaleUpLimit");
	hpa_record_scale(&m5, &up, NOW, 1, 5);
	assert_int_equal(normalize(&m5, &up, NOW + 5, 5, 50, 1, 100, &v), 5); /* same period */
	assert_int_equal(normalize(&m5, &up, NOW + 16, 5, 50, 1, 100, &v), 10);
	/* maxReplicas is the tighter bound */
	struct hpa_memory m6 = {0};
	assert_int_equal(normalize(&m6, &up, NOW, 10, 50, 1, 12, &v), 12);
	assert_string_equal(v.limited_reason, "TooManyReplicas");
}

static void test_hpa__behavior_stabilization(void **state)
{
	(void)state;
	struct hpa_verdict v;
	/* scaleUp window of 60 s: the lowest recommendation of the last
	 * minute holds a scale-up back */
	struct hpa_behavior b = behavior("scaleUp:\n  stabilizationWindowSeconds: 60\n"
					 "scaleDown:\n  stabilizationWindowSeconds: 120\n");
	struct hpa_memory m = {0};
	assert_int_equal(normalize(&m, &b, NOW, 3, 3, 1, 20, &v), 3);
	assert_int_equal(normalize(&m, &b, NOW + 10, 3, 8, 1, 20, &v), 3);
	assert_string_equal(v.able_reason, "ScaleUpStabilized");
	/* after 60 s of 8 the 3 has left the window */
	assert_int_equal(normalize(&m, &b, NOW + 75, 3, 8, 1, 20, &v), 7); /* 4 pods policy */
	/* the down window: the highest of the last two minutes */
	struct hpa_memory d = {0};
	assert_int_equal(normalize(&d, &b, NOW, 6, 6, 1, 20, &v), 6);
	assert_int_equal(normalize(&d, &b, NOW + 60, 6, 2, 1, 20, &v), 6);
	assert_string_equal(v.able_reason, "ScaleDownStabilized");
	assert_int_equal(normalize(&d, &b, NOW + 121, 6, 2, 1, 20, &v), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hpa__ratio_and_ceil),
	    cmocka_unit_test(test_hpa__tolerance),
	    cmocka_unit_test(test_hpa__missing_metrics),
	    cmocka_unit_test(test_hpa__not_ready_pods),
	    cmocka_unit_test(test_hpa__errors),
	    cmocka_unit_test(test_hpa__average_value_and_pods_metrics),
	    cmocka_unit_test(test_hpa__object_metrics),
	    cmocka_unit_test(test_hpa__multiple_metrics_take_the_max),
	    cmocka_unit_test(test_hpa__no_behavior_limits),
	    cmocka_unit_test(test_hpa__downscale_stabilization),
	    cmocka_unit_test(test_hpa__behavior_defaults),
	    cmocka_unit_test(test_hpa__behavior_policies),
	    cmocka_unit_test(test_hpa__behavior_stabilization),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
