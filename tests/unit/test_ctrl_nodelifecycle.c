/* test_ctrl_nodelifecycle.c: the decisions of the node lifecycle
 * controller, the taint manager and the disruption controller on
 * hand-built objects: a node's readiness and zone, zone states and their
 * rates, the token bucket, which taints a node gets (and which it keeps),
 * conditions set Unknown, pods marked not ready, which taints a pod
 * tolerates and for how long, and a PodDisruptionBudget's arithmetic and
 * status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conditions.h"
#include "disruption.h"
#include "nodelifecycle.h"
#include "taint.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

#define NOW "2026-01-02T03:04:05Z"

static const struct nodelc_rates RATES = {
    .eviction_rate = 0.1,
    .secondary_eviction_rate = 0.01,
    .unhealthy_threshold = 0.55,
    .large_cluster_threshold = 50,
};

static struct ynode *node_with(const char *ready, const char *extra)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "metadata: {name: n1, creationTimestamp: '2026-01-01T00:00:00Z'}\n"
		 "spec: {%s}\n"
		 "status:\n"
		 "  conditions:\n"
		 "  - {type: MemoryPressure, status: 'False', lastHeartbeatTime: t0}\n"
		 "  - {type: Ready, status: '%s', lastHeartbeatTime: t0, lastTransitionTime: t0}\n",
		 extra ? extra : "", ready);
	return y(buf);
}

static size_t ntaints(const struct ynode *node)
{
	const struct ynode *l = ynode_path(node, "spec.taints");
	return l && l->type == YNODE_SEQ ? l->n : 0;
}

/* ---- nodes ------------------------------------------------------------------ */

static void test_nodelc__readiness_and_zone(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *r = node_with("True", NULL);
	cleanup_ynode struct ynode *f = node_with("False", NULL);
	cleanup_ynode struct ynode *u = node_with("Unknown", NULL);
	cleanup_ynode struct ynode *none = y("metadata: {name: x}");
	assert_int_equal(nodelc_node_ready(r), NODELC_READY);
	assert_int_equal(nodelc_node_ready(f), NODELC_NOT_READY);
	assert_int_equal(nodelc_node_ready(u), NODELC_UNKNOWN);
	assert_int_equal(nodelc_node_ready(none), NODELC_UNKNOWN);
	assert_null(nodelc_noexecute_key(r));
	assert_string_equal(nodelc_noexecute_key(f), NODELC_TAINT_NOT_READY);
	assert_string_equal(nodelc_noexecute_key(u), NODELC_TAINT_UNREACHABLE);

	cleanup_free char *z0 = nodelc_zone_key(r);
	assert_string_equal(z0, "");
	cleanup_ynode struct ynode *zoned =
	    y("metadata: {labels: {topology.kubernetes.io/region: eu, "
	      "topology.kubernetes.io/zone: eu-1}}");
	cleanup_free char *z1 = nodelc_zone_key(zoned);
	assert_string_equal(z1, "eu\x1f"
				"eu-1");
	cleanup_ynode struct ynode *beta = y("metadata: {labels: "
					     "{failure-domain.beta.kubernetes.io/zone: b}}");
	cleanup_free char *z2 = nodelc_zone_key(beta);
	assert_string_equal(z2, "\x1f"
				"b");
}

static void test_nodelc__grace_covers_a_renewal(void **state)
{
	(void)state;
	assert_int_equal(nodelc_grace_ms(40000, 10000), 40000);
	assert_int_equal(nodelc_grace_ms(40000, 0), 40000); /* no interval seen yet */
	/* a grace shorter than the renewals: one and a half of them */
	assert_int_equal(nodelc_grace_ms(6000, 10000), 15000);
	assert_int_equal(nodelc_grace_ms(2000, 500), 2000);
}

static void test_nodelc__zone_states(void **state)
{
	(void)state;
	assert_int_equal(nodelc_zone_state(3, 0, 0.55), NODELC_ZONE_NORMAL);
	assert_int_equal(nodelc_zone_state(0, 1, 0.55), NODELC_ZONE_FULL);
	assert_int_equal(nodelc_zone_state(0, 0, 0.55), NODELC_ZONE_NORMAL);
	/* two not ready are never a partial disruption, whatever the share */
	assert_int_equal(nodelc_zone_state(1, 2, 0.55), NODELC_ZONE_NORMAL);
	/* three of five: 0.6 >= 0.55 */
	assert_int_equal(nodelc_zone_state(2, 3, 0.55), NODELC_ZONE_PARTIAL);
	/* three of six: 0.5 < 0.55 */
	assert_int_equal(nodelc_zone_state(3, 3, 0.55), NODELC_ZONE_NORMAL);
	/* exactly the threshold counts */
	assert_int_equal(nodelc_zone_state(9, 11, 0.55), NODELC_ZONE_PARTIAL);
	assert_string_equal(nodelc_zone_state_name(NODELC_ZONE_PARTIAL), "PartialDisruption");
	assert_string_equal(nodelc_zone_state_name(NODELC_ZONE_FULL), "FullDisruption");
}

static void test_nodelc__zone_rates(void **state)
{
	(void)state;
	assert_true(nodelc_zone_rate(NODELC_ZONE_NORMAL, 10, false, &RATES) == 0.1);
	assert_true(nodelc_zone_rate(NODELC_ZONE_FULL, 10, false, &RATES) == 0.1);
	/* a partially disrupted small zone stops, a large one slows */
	assert_true(nodelc_zone_rate(NODELC_ZONE_PARTIAL, 50, false, &RATES) == 0);
	assert_true(nodelc_zone_rate(NODELC_ZONE_PARTIAL, 51, false, &RATES) == 0.01);
	/* every zone fully disrupted: nothing is evicted anywhere */
	assert_true(nodelc_zone_rate(NODELC_ZONE_FULL, 10, true, &RATES) == 0);
	assert_true(nodelc_zone_rate(NODELC_ZONE_NORMAL, 10, true, &RATES) == 0);
}

static void test_nodelc__token_bucket(void **state)
{
	(void)state;
	struct nodelc_bucket b;
	uint64_t wait = 0;
	nodelc_bucket_init(&b, 0.1, 1000);
	assert_true(nodelc_bucket_take(&b, 1000, &wait)); /* burst 1: the first at once */
	assert_false(nodelc_bucket_take(&b, 1000, &wait));
	assert_true(wait >= 9999 && wait <= 10001);
	assert_false(nodelc_bucket_take(&b, 6000, &wait));
	assert_true(wait >= 4999 && wait <= 5001);
	assert_true(nodelc_bucket_take(&b, 11000, &wait));
	/* a long idle time fills one token, not more */
	assert_true(nodelc_bucket_take(&b, 1000000, NULL));
	assert_false(nodelc_bucket_take(&b, 1000000, NULL));
	/* rate 0: never */
	nodelc_bucket_init(&b, 0, 0);
	assert_false(nodelc_bucket_take(&b, 0, &wait));
	assert_true(wait == UINT64_MAX);
	assert_false(nodelc_bucket_take(&b, 1000000000, NULL));
}

static void test_nodelc__taints_follow_conditions(void **state)
{
	(void)state;
	/* Unknown: unreachable NoSchedule at once, NoExecute only when set */
	cleanup_ynode struct ynode *u = node_with("Unknown", NULL);
	assert_true(nodelc_apply_taints(u, NODELC_NOEXEC_KEEP, NOW));
	assert_int_equal(ntaints(u), 1);
	assert_true(nodelc_has_taint(u, NODELC_TAINT_UNREACHABLE, "NoSchedule"));
	assert_string_equal(str(ynode_item(ynode_path(u, "spec.taints"), 0), "timeAdded"), NOW);
	assert_false(nodelc_apply_taints(u, NODELC_NOEXEC_KEEP, NOW));
	assert_true(nodelc_apply_taints(u, NODELC_NOEXEC_SET, NOW));
	assert_true(nodelc_has_taint(u, NODELC_TAINT_UNREACHABLE, "NoExecute"));
	assert_int_equal(ntaints(u), 2);
	/* KEEP keeps it; SET again changes nothing, timeAdded kept */
	assert_false(nodelc_apply_taints(u, NODELC_NOEXEC_KEEP, "later"));
	assert_false(nodelc_apply_taints(u, NODELC_NOEXEC_SET, "later"));
	assert_string_equal(str(ynode_item(ynode_path(u, "spec.taints"), 0), "timeAdded"), NOW);

	/* Ready False: the taints swap to not-ready */
	struct ynode *rc = condition_find(ynode_path(u, "status.conditions"), "Ready");
	ynode_set(rc, "status", ynode_new_str("False"));
	assert_true(nodelc_apply_taints(u, NODELC_NOEXEC_SWAP_ONLY, NOW));
	assert_true(nodelc_has_taint(u, NODELC_TAINT_NOT_READY, "NoSchedule"));
	assert_true(nodelc_has_taint(u, NODELC_TAINT_NOT_READY, "NoExecute"));
	assert_false(nodelc_has_taint(u, NODELC_TAINT_UNREACHABLE, "NoExecute"));
	assert_false(nodelc_has_taint(u, NODELC_TAINT_UNREACHABLE, "NoSchedule"));

	/* Ready again: every taint of the controller goes, others stay */
	ynode_set(rc, "status", ynode_new_str("True"));
	struct ynode *mine = y("{key: example.com/x, effect: NoExecute}");
	ynode_append(ynode_path(u, "spec.taints"), mine);
	assert_true(nodelc_apply_taints(u, NODELC_NOEXEC_CLEAR, NOW));
	assert_int_equal(ntaints(u), 1);
	assert_true(nodelc_has_taint(u, "example.com/x", "NoExecute"));
	/* a person's not-ready NoSchedule taint on a ready node is the controller's */
	cleanup_ynode struct ynode *r =
	    node_with("True", "taints: [{key: node.kubernetes.io/not-ready, effect: NoSchedule}]");
	assert_true(nodelc_apply_taints(r, NODELC_NOEXEC_KEEP, NOW));
	assert_null(ynode_path(r, "spec.taints"));
}

static void test_nodelc__taints_of_pressure_and_cordon(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *n = node_with("True", "unschedulable: true");
	struct ynode *mp = condition_find(ynode_path(n, "status.conditions"), "MemoryPressure");
	ynode_set(mp, "status", ynode_new_str("True"));
	assert_true(nodelc_apply_taints(n, NODELC_NOEXEC_KEEP, NOW));
	assert_int_equal(ntaints(n), 2);
	assert_true(nodelc_has_taint(n, NODELC_TAINT_MEMORY_PRESSURE, "NoSchedule"));
	assert_true(nodelc_has_taint(n, NODELC_TAINT_UNSCHEDULABLE, "NoSchedule"));
	/* uncordoned, pressure gone: no taints, and no empty list left */
	ynode_set(ynode_get(n, "spec"), "unschedulable", ynode_new_plain("false"));
	ynode_set(mp, "status", ynode_new_str("False"));
	assert_true(nodelc_apply_taints(n, NODELC_NOEXEC_KEEP, NOW));
	assert_null(ynode_path(n, "spec.taints"));
}

static void test_nodelc__mark_unknown(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *n = node_with("True", NULL);
	assert_true(nodelc_mark_unknown(n, NOW));
	const struct ynode *conds = ynode_path(n, "status.conditions");
	const struct ynode *rc = condition_find(conds, "Ready");
	assert_string_equal(condition_field(rc, "status"), "Unknown");
	assert_string_equal(condition_field(rc, "reason"), "NodeStatusUnknown");
	assert_string_equal(condition_field(rc, "message"), "Kubelet stopped posting node status.");
	assert_string_equal(condition_field(rc, "lastTransitionTime"), NOW);
	assert_string_equal(condition_field(rc, "lastHeartbeatTime"), "t0"); /* kept */
	assert_string_equal(condition_field(condition_find(conds, "MemoryPressure"), "status"),
			    "Unknown");
	/* the conditions the node never posted are added, "never posted" */
	const struct ynode *dp = condition_find(conds, "DiskPressure");
	assert_non_null(dp);
	assert_string_equal(condition_field(dp, "reason"), "NodeStatusNeverUpdated");
	assert_string_equal(condition_field(dp, "message"), "Kubelet never posted node status.");
	assert_false(nodelc_mark_unknown(n, "later"));
}

static void test_nodelc__pods_marked_not_ready(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *p =
	    y("status: {conditions: [{type: Ready, status: 'True', lastTransitionTime: t0}]}");
	assert_true(nodelc_mark_pod_not_ready(p, NOW));
	const struct ynode *rc = condition_find(ynode_path(p, "status.conditions"), "Ready");
	assert_string_equal(condition_field(rc, "status"), "False");
	assert_string_equal(condition_field(rc, "lastTransitionTime"), NOW);
	assert_false(nodelc_mark_pod_not_ready(p, NOW));
	cleanup_ynode struct ynode *pending = y("status: {phase: Pending}");
	assert_false(nodelc_mark_pod_not_ready(pending, NOW));
}

/* ---- the taint manager ------------------------------------------------------------ */

static void test_taint__tolerates(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *t = y("{key: k, value: v, effect: NoExecute}");
	struct {
		const char *tol;
		bool want;
	} cases[] = {
	    {"{key: k, operator: Equal, value: v, effect: NoExecute}", true},
	    {"{key: k, value: v}", true}, /* operator Equal by default, any effect */
	    {"{key: k, operator: Equal, value: w}", false},
	    {"{key: k, operator: Exists}", true},
	    {"{key: k, operator: Exists, effect: NoSchedule}", false},
	    {"{operator: Exists}", true}, /* everything */
	    {"{operator: Exists, effect: NoExecute}", true},
	    {"{value: v}", false}, /* an empty key needs Exists */
	    {"{key: other, operator: Exists}", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_ynode struct ynode *tol = y(cases[i].tol);
		if (taint_tolerates(tol, t) != cases[i].want)
			fail_msg("%s: want %d", cases[i].tol, cases[i].want);
	}
}

static void test_taint__verdicts(void **state)
{
	(void)state;
	long long s = -1;
	cleanup_ynode struct ynode *none = y("[{key: a, effect: NoSchedule}]");
	cleanup_ynode struct ynode *unr =
	    y("[{key: node.kubernetes.io/unreachable, effect: NoExecute}, {key: a, effect: "
	      "NoSchedule}]");
	cleanup_ynode struct ynode *two =
	    y("[{key: node.kubernetes.io/unreachable, effect: NoExecute}, "
	      "{key: maint, effect: NoExecute}]");
	cleanup_ynode struct ynode *deflt =
	    y("[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, "
	      "tolerationSeconds: 300}, {key: node.kubernetes.io/unreachable, operator: Exists, "
	      "effect: NoExecute, tolerationSeconds: 300}]");
	cleanup_ynode struct ynode *forever =
	    y("[{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}]");
	cleanup_ynode struct ynode *both =
	    y("[{key: node.kubernetes.io/unreachable, operator: Exists, tolerationSeconds: 60}, "
	      "{operator: Exists, tolerationSeconds: 20}]");
	cleanup_ynode struct ynode *zero =
	    y("[{key: node.kubernetes.io/unreachable, operator: Exists, tolerationSeconds: 0}]");

	/* no NoExecute taint: nothing, whatever the tolerations */
	assert_int_equal(taint_verdict(none, NULL, &s), TAINT_NONE);
	assert_int_equal(taint_verdict(NULL, deflt, &s), TAINT_NONE);
	/* not tolerated: now */
	assert_int_equal(taint_verdict(unr, NULL, &s), TAINT_EVICT_NOW);
	/* the default tolerations: after 300 s */
	assert_int_equal(taint_verdict(unr, deflt, &s), TAINT_EVICT_AFTER);
	assert_int_equal(s, 300);
	/* one of two taints not tolerated: now */
	assert_int_equal(taint_verdict(two, deflt, &s), TAINT_EVICT_NOW);
	/* without tolerationSeconds: for ever */
	assert_int_equal(taint_verdict(unr, forever, &s), TAINT_TOLERATED);
	/* the least of the tolerations used */
	assert_int_equal(taint_verdict(unr, both, &s), TAINT_EVICT_AFTER);
	assert_int_equal(s, 20);
	assert_int_equal(taint_verdict(two, both, &s), TAINT_EVICT_AFTER);
	assert_int_equal(s, 20);
	/* 0 s or less: now */
	assert_int_equal(taint_verdict(unr, zero, &s), TAINT_EVICT_NOW);
}

/* ---- PodDisruptionBudgets ------------------------------------------------------------ */

static void budget(const char *spec, long long npods, long long scale, long long expected,
		   long long desired)
{
	cleanup_ynode struct ynode *s = y(spec);
	struct disruption_budget b;
	cleanup_error struct error *err = NULL;
	if (disruption_budget(s, npods, scale, &b, &err) < 0)
		fail_msg("%s: %s", spec, err->msg);
	if (b.expected != expected || b.desired != desired)
		fail_msg("%s: expected %lld desired %lld, want %lld %lld", spec, b.expected,
			 b.desired, expected, desired);
}

static void test_disruption__budgets(void **state)
{
	(void)state;
	/* minAvailable as an integer: of the pods matched */
	budget("{minAvailable: 2}", 3, 10, 3, 2);
	/* as a percentage: of the controllers' replicas, rounded up */
	budget("{minAvailable: '50%'}", 3, 5, 5, 3);
	budget("{minAvailable: '100%'}", 3, 4, 4, 4);
	/* maxUnavailable: replicas less it, rounded up, never below 0 */
	budget("{maxUnavailable: 1}", 3, 4, 4, 3);
	budget("{maxUnavailable: '30%'}", 3, 5, 5, 3);
	budget("{maxUnavailable: 10}", 3, 4, 4, 0);
	budget("{}", 3, 4, 0, 0);
	cleanup_ynode struct ynode *a = y("{maxUnavailable: 1}");
	cleanup_ynode struct ynode *b = y("{minAvailable: '25%'}");
	cleanup_ynode struct ynode *c = y("{minAvailable: 2}");
	assert_true(disruption_needs_scale(a));
	assert_true(disruption_needs_scale(b));
	assert_false(disruption_needs_scale(c));
	cleanup_ynode struct ynode *bad = y("{maxUnavailable: 'x%y'}");
	struct disruption_budget out;
	cleanup_error struct error *err = NULL;
	assert_true(disruption_budget(bad, 1, 1, &out, &err) < 0);

	assert_int_equal(disruption_allowed(3, 2, 3), 1);
	assert_int_equal(disruption_allowed(2, 2, 3), 0);
	assert_int_equal(disruption_allowed(1, 2, 3), 0);
	assert_int_equal(disruption_allowed(3, 0, 0), 0); /* nothing expected */
}

static struct disruption_calc *calc(const char *healthy, const char *present, long long expected,
				    long long desired)
{
	struct disruption_calc *k = xcalloc(1, sizeof(*k));
	k->healthy = y(healthy);
	k->present = y(present);
	k->b.expected = expected;
	k->b.desired = desired;
	k->generation = 2;
	return k;
}

static void test_disruption__status(void **state)
{
	(void)state;
	int64_t now = 1767323045; /* 2026-01-02T03:04:05Z */
	struct disruption_calc *k = calc("[a, b, c]", "[a, b, c]", 3, 2);
	cleanup_ynode struct ynode *st = disruption_status(NULL, k, now);
	assert_string_equal(str(st, "currentHealthy"), "3");
	assert_string_equal(str(st, "desiredHealthy"), "2");
	assert_string_equal(str(st, "expectedPods"), "3");
	assert_string_equal(str(st, "disruptionsAllowed"), "1");
	assert_string_equal(str(st, "observedGeneration"), "2");
	const struct ynode *c = condition_find(ynode_get(st, "conditions"), "DisruptionAllowed");
	assert_string_equal(condition_field(c, "status"), "True");
	assert_string_equal(condition_field(c, "reason"), "SufficientPods");

	/* a pod evicted a moment ago and still there does not count; one
	 * evicted long ago counts again; one gone leaves disruptedPods */
	cleanup_ynode struct ynode *old =
	    y("{disruptedPods: {a: '2026-01-02T03:04:00Z', b: '2026-01-02T02:00:00Z', "
	      "gone: '2026-01-02T03:04:00Z'}}");
	cleanup_ynode struct ynode *st2 = disruption_status(old, k, now);
	assert_string_equal(str(st2, "currentHealthy"), "2");
	assert_string_equal(str(st2, "disruptionsAllowed"), "0");
	assert_non_null(ynode_path(st2, "disruptedPods.a"));
	assert_null(ynode_path(st2, "disruptedPods.b"));
	assert_null(ynode_path(st2, "disruptedPods.gone"));
	c = condition_find(ynode_get(st2, "conditions"), "DisruptionAllowed");
	assert_string_equal(condition_field(c, "reason"), "InsufficientPods");
	disruption_calc_free(k);

	/* a failure: SyncFailed, nothing allowed */
	k = calc("[a, b, c]", "[a, b, c]", 3, 0);
	k->failure = xstrdup("found no controllers for pod \"a\"");
	cleanup_ynode struct ynode *st3 = disruption_status(NULL, k, now);
	assert_string_equal(str(st3, "disruptionsAllowed"), "0");
	c = condition_find(ynode_get(st3, "conditions"), "DisruptionAllowed");
	assert_string_equal(condition_field(c, "reason"), "SyncFailed");
	assert_string_equal(condition_field(c, "message"), "found no controllers for pod \"a\"");
	disruption_calc_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nodelc__readiness_and_zone),
	    cmocka_unit_test(test_nodelc__grace_covers_a_renewal),
	    cmocka_unit_test(test_nodelc__zone_states),
	    cmocka_unit_test(test_nodelc__zone_rates),
	    cmocka_unit_test(test_nodelc__token_bucket),
	    cmocka_unit_test(test_nodelc__taints_follow_conditions),
	    cmocka_unit_test(test_nodelc__taints_of_pressure_and_cordon),
	    cmocka_unit_test(test_nodelc__mark_unknown),
	    cmocka_unit_test(test_nodelc__pods_marked_not_ready),
	    cmocka_unit_test(test_taint__tolerates),
	    cmocka_unit_test(test_taint__verdicts),
	    cmocka_unit_test(test_disruption__budgets),
	    cmocka_unit_test(test_disruption__status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
