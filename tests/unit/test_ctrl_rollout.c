/* test_ctrl_rollout.c: the Deployment controller's plan on
 * hand-built ReplicaSets: maxSurge and maxUnavailable arithmetic and
 * rounding, rolling steps, the stricter counting of lagging statuses,
 * proportional scaling, Recreate, revision history cleanup, and the
 * pod-template-hash (stable, alphabet, collisions). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "obj.h"
#include "rollout.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static int scaled(const char *text, int total, bool up)
{
	cleanup_ynode struct ynode *v = y(text);
	int out = -1;
	assert_int_equal(rollout_scaled_value(v, total, up, &out), 0);
	return out;
}

static void test_rollout__percent_rounds_surge_up_unavailable_down(void **state)
{
	(void)state;
	assert_int_equal(scaled("25%", 3, true), 1);
	assert_int_equal(scaled("25%", 3, false), 0);
	assert_int_equal(scaled("25%", 10, true), 3);
	assert_int_equal(scaled("25%", 10, false), 2);
	assert_int_equal(scaled("'30%'", 7, true), 3);
	assert_int_equal(scaled("30%", 7, false), 2);
	assert_int_equal(scaled("100%", 7, false), 7);
	assert_int_equal(scaled("0%", 7, true), 0);
	assert_int_equal(scaled("2", 100, true), 2);
	assert_int_equal(scaled("'2'", 100, false), 2);
}

static void test_rollout__scaled_value_refuses_junk(void **state)
{
	(void)state;
	int out;
	cleanup_ynode struct ynode *a = y("abc");
	cleanup_ynode struct ynode *b = y("5x");
	cleanup_ynode struct ynode *c = y("'5%%'");
	assert_int_equal(rollout_scaled_value(a, 10, true, &out), -EINVAL);
	assert_int_equal(rollout_scaled_value(b, 10, true, &out), -EINVAL);
	assert_int_equal(rollout_scaled_value(c, 10, true, &out), -EINVAL);
}

static void fence(const char *s, const char *u, int desired, int want_s, int want_u)
{
	cleanup_ynode struct ynode *sn = s ? y(s) : NULL;
	cleanup_ynode struct ynode *un = u ? y(u) : NULL;
	int gs = -1, gu = -1;
	rollout_resolve_fenceposts(sn, un, desired, &gs, &gu);
	assert_int_equal(gs, want_s);
	assert_int_equal(gu, want_u);
}

static void test_rollout__fenceposts_as_kubernetes(void **state)
{
	(void)state;
	fence("25%", "25%", 4, 1, 1);
	fence("25%", "25%", 1, 1, 0);
	fence("25%", "25%", 10, 3, 2);
	fence("0", "0", 10, 0, 1); /* both zero: one may be unavailable */
	fence("0%", "0%", 10, 0, 1);
	fence("10%", "10%", 5, 1, 0); /* 0.5 up and down */
	fence(NULL, NULL, 5, 0, 1);
	fence("3", "2", 10, 3, 2);
}

static struct rollout_params params(const char *spec)
{
	cleanup_free char *text = xasprintf("{metadata: {generation: 1}, spec: %s}", spec);
	cleanup_ynode struct ynode *d = y(text);
	struct rollout_params p;
	rollout_params_init(&p, d);
	return p;
}

static void test_rollout__params_clamp_and_recreate(void **state)
{
	(void)state;
	struct rollout_params p = params("{replicas: 2, strategy: {type: RollingUpdate, "
					 "rollingUpdate: {maxSurge: 1, maxUnavailable: 5}}}");
	assert_int_equal(p.max_surge, 1);
	assert_int_equal(p.max_unavailable, 2); /* no more than replicas */
	p = params("{replicas: 0, strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}}");
	assert_int_equal(p.max_unavailable, 0);
	p = params("{replicas: 4, strategy: {type: Recreate}}");
	assert_true(p.recreate);
	assert_int_equal(p.max_surge, 0);
	assert_int_equal(p.max_unavailable, 0);
	p = params(
	    "{replicas: 3, revisionHistoryLimit: 2, paused: true, progressDeadlineSeconds: 600}");
	assert_int_equal(p.history_limit, 2);
	assert_true(p.paused);
	assert_int_equal(p.progress_deadline, 600);
	assert_int_equal(p.generation, 1);
}

/* A set: name, created (s), revision, spec, status replicas, available. */
static void set(struct rollout_rs *r, const char *name, int64_t created, long long revision,
		int spec, int status, int available)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->created = created;
	r->revision = revision;
	r->replicas = r->orig = spec;
	r->status_replicas = status;
	r->ready = r->available = available;
	r->desired = r->max = -1;
	r->set_revision = -1;
}

static struct rollout_params rolling(int replicas, int surge, int unavailable)
{
	struct rollout_params p = {.replicas = replicas,
				   .max_surge = surge,
				   .max_unavailable = unavailable,
				   .history_limit = -1,
				   .progress_deadline = -1};
	return p;
}

static void test_rollout__new_rs_grows_by_the_surge(void **state)
{
	(void)state;
	struct rollout_params p = rolling(10, 3, 2);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 10, 10, 10);
	set(&rs[1], "new", 2, 2, 0, 0, 0);
	assert_int_equal(rollout_new_rs_new_replicas(&p, rs, 2, 1), 3);
	assert_true(rollout_reconcile_new(&p, rs, 2, 1));
	assert_int_equal(rs[1].replicas, 3);
	assert_true(rs[1].annotate);
	assert_int_equal(rs[1].set_desired, 10);
	assert_int_equal(rs[1].set_max, 13);
	/* At the limit: nothing more. */
	assert_false(rollout_reconcile_new(&p, rs, 2, 1));
}

static void test_rollout__new_rs_counts_pods_not_yet_deleted(void **state)
{
	(void)state;
	/* The old set was scaled to 8 but its status still has 10 pods:
	 * they exist until its controller deletes them. */
	struct rollout_params p = rolling(10, 3, 2);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 8, 10, 10);
	set(&rs[1], "new", 2, 2, 2, 2, 0);
	assert_int_equal(rollout_new_rs_new_replicas(&p, rs, 2, 1), 3);
}

static void test_rollout__new_rs_above_replicas_scales_down(void **state)
{
	(void)state;
	struct rollout_params p = rolling(3, 1, 0);
	struct rollout_rs rs[1];
	set(&rs[0], "new", 1, 1, 5, 5, 5);
	assert_true(rollout_reconcile_new(&p, rs, 1, 0));
	assert_int_equal(rs[0].replicas, 3);
}

static void test_rollout__old_rs_scaled_down_within_max_unavailable(void **state)
{
	(void)state;
	struct rollout_params p = rolling(10, 3, 2);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 10, 10, 10);
	set(&rs[1], "new", 2, 2, 3, 3, 0);
	/* 13 pods, 8 must stay available, 3 new ones are not: 2 may go. */
	assert_true(rollout_reconcile_old(&p, rs, 2, 1));
	assert_int_equal(rs[0].replicas, 8);
	/* Same again with the new set still unavailable: no further. */
	rs[0].orig = rs[0].replicas;
	rs[0].status_replicas = 8;
	rs[0].available = 8;
	assert_false(rollout_reconcile_old(&p, rs, 2, 1));
}

static void test_rollout__lagging_available_never_counts_beyond_spec(void **state)
{
	(void)state;
	/* The old set was scaled 10 -> 8 but its status still says 10
	 * available; the 3 new pods became available. Kubernetes would count
	 * 13 available and scale the old set down by 5, to 3 + 3 = 6
	 * available pods, under the 8 wanted. */
	struct rollout_params p = rolling(10, 3, 2);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 8, 10, 10);
	set(&rs[1], "new", 2, 2, 3, 3, 3);
	assert_true(rollout_reconcile_old(&p, rs, 2, 1));
	assert_int_equal(rs[0].replicas, 5); /* 5 + 3 = 8 available */
}

static void test_rollout__unhealthy_old_pods_go_first(void **state)
{
	(void)state;
	struct rollout_params p = rolling(5, 2, 1);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 5, 5, 2); /* 3 unhealthy */
	set(&rs[1], "new", 2, 2, 2, 2, 0);
	/* 7 pods, 4 must stay available, 2 new unavailable: 1 may go, an
	 * unhealthy one; then 2 available <= 4: no healthy one goes. */
	assert_true(rollout_reconcile_old(&p, rs, 2, 1));
	assert_int_equal(rs[0].replicas, 4);
}

static void test_rollout__oldest_sets_scale_down_first(void **state)
{
	(void)state;
	struct rollout_params p = rolling(6, 0, 3);
	struct rollout_rs rs[3];
	set(&rs[0], "older", 1, 1, 3, 3, 3);
	set(&rs[1], "old", 2, 2, 3, 3, 3);
	set(&rs[2], "new", 3, 3, 0, 0, 0);
	assert_true(rollout_reconcile_old(&p, rs, 3, 2));
	assert_int_equal(rs[0].replicas, 0);
	assert_int_equal(rs[1].replicas, 3);
}

static void test_rollout__proportional_scaling_as_the_docs(void **state)
{
	(void)state;
	/* Kubernetes' documentation: 10 replicas, maxSurge 3, mid-rollout
	 * with 8 old and 5 new, scaled to 15: the 5 extra are spread 3 to
	 * the old set and 2 to the new one. */
	struct rollout_params p = rolling(15, 3, 2);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 8, 8, 8);
	set(&rs[1], "new", 2, 2, 5, 5, 0);
	rs[0].max = rs[1].max = 13;
	rs[0].desired = rs[1].desired = 10;
	assert_true(rollout_is_scaling_event(&p, rs, 2));
	rollout_scale(&p, rs, 2, 1, 13);
	assert_int_equal(rs[0].replicas, 11);
	assert_int_equal(rs[1].replicas, 7);
	assert_int_equal(rs[0].set_desired, 15);
	assert_int_equal(rs[0].set_max, 18);
}

static void test_rollout__proportional_scaling_down_keeps_the_sum(void **state)
{
	(void)state;
	struct rollout_params p = rolling(5, 1, 1);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 8, 8, 8);
	set(&rs[1], "new", 2, 2, 5, 5, 0);
	rs[0].max = rs[1].max = 13;
	rs[0].desired = rs[1].desired = 10;
	rollout_scale(&p, rs, 2, 1, 13);
	assert_int_equal(rs[0].replicas + rs[1].replicas, 6); /* 5 + maxSurge */
	assert_true(rs[0].replicas >= 0 && rs[1].replicas >= 0);
}

static void test_rollout__one_active_set_takes_the_whole_count(void **state)
{
	(void)state;
	struct rollout_params p = rolling(7, 2, 1);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 0, 0, 0);
	set(&rs[1], "new", 2, 2, 3, 3, 3);
	rs[1].desired = 3;
	assert_true(rollout_is_scaling_event(&p, rs, 2));
	rollout_scale(&p, rs, 2, 1, 3);
	assert_int_equal(rs[1].replicas, 7);
	assert_int_equal(rs[0].replicas, 0);
}

static void test_rollout__scaling_event_needs_a_differing_annotation(void **state)
{
	(void)state;
	struct rollout_params p = rolling(3, 1, 0);
	struct rollout_rs rs[2];
	set(&rs[0], "old", 1, 1, 0, 0, 0);
	set(&rs[1], "new", 2, 2, 3, 3, 3);
	rs[0].desired = 9; /* inactive: ignored */
	assert_false(rollout_is_scaling_event(&p, rs, 2));
	rs[1].desired = 3;
	assert_false(rollout_is_scaling_event(&p, rs, 2));
	rs[1].desired = 4;
	assert_true(rollout_is_scaling_event(&p, rs, 2));
}

static void test_rollout__recreate_scales_every_old_set_to_zero(void **state)
{
	(void)state;
	struct rollout_params p = {.replicas = 3, .recreate = true, .history_limit = -1};
	struct rollout_rs rs[3];
	set(&rs[0], "a", 1, 1, 2, 2, 2);
	set(&rs[1], "b", 2, 2, 0, 0, 0);
	set(&rs[2], "c", 3, 3, 1, 1, 1);
	assert_true(rollout_scale_down_old_for_recreate(&p, rs, 3, ROLLOUT_NONE));
	assert_int_equal(rs[0].replicas, 0);
	assert_int_equal(rs[2].replicas, 0);
	assert_false(rollout_scale_down_old_for_recreate(&p, rs, 3, ROLLOUT_NONE));
	assert_int_equal(rollout_new_rs_new_replicas(&p, rs, 3, 1), 3);
}

static void test_rollout__history_limit_removes_the_oldest_empty_sets(void **state)
{
	(void)state;
	struct rollout_params p = rolling(3, 1, 0);
	p.history_limit = 1;
	struct rollout_rs rs[4];
	set(&rs[0], "r2", 1, 2, 0, 0, 0);
	set(&rs[1], "r1", 2, 1, 0, 0, 0);
	set(&rs[2], "r3", 3, 3, 0, 1, 0); /* a pod still there */
	set(&rs[3], "new", 4, 4, 3, 3, 3);
	rollout_cleanup(&p, rs, 4, 3);
	assert_true(rs[1].remove);  /* revision 1 */
	assert_true(rs[0].remove);  /* revision 2 */
	assert_false(rs[2].remove); /* not empty yet */
	assert_false(rs[3].remove);
	struct rollout_rs two[2];
	set(&two[0], "r1", 1, 1, 1, 1, 1);
	set(&two[1], "new", 2, 2, 3, 3, 3);
	p.history_limit = 0;
	rollout_cleanup(&p, two, 2, 1);
	assert_false(two[0].remove); /* still has replicas */
}

static const char *tmpl_a = "{metadata: {labels: {app: web}}, spec: {containers: "
			    "[{name: web, image: nginx, ports: [{containerPort: 80}]}]}}";
static const char *tmpl_a_reordered =
    "{spec: {containers: [{ports: [{containerPort: '80'}], image: nginx, name: web}]}, "
    "metadata: {labels: {app: web}}}";
static const char *tmpl_a_hashed = "{metadata: {labels: {app: web, pod-template-hash: abc}}, "
				   "spec: {containers: [{name: web, image: nginx, ports: "
				   "[{containerPort: 80}]}]}}";
static const char *tmpl_b = "{metadata: {labels: {app: web}}, spec: {containers: "
			    "[{name: web, image: nginx:2, ports: [{containerPort: 80}]}]}}";

static void test_rollout__template_hash_is_stable(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = y(tmpl_a);
	cleanup_ynode struct ynode *a2 = y(tmpl_a_reordered);
	cleanup_ynode struct ynode *ah = y(tmpl_a_hashed);
	cleanup_ynode struct ynode *b = y(tmpl_b);
	cleanup_free char *ha = rollout_template_hash(a, -1);
	cleanup_free char *ha_again = rollout_template_hash(a, -1);
	cleanup_free char *ha2 = rollout_template_hash(a2, -1);
	cleanup_free char *hah = rollout_template_hash(ah, -1);
	cleanup_free char *hb = rollout_template_hash(b, -1);
	cleanup_free char *hc = rollout_template_hash(a, 1);
	assert_string_equal(ha, ha_again);
	assert_string_equal(ha, ha2); /* key order and quoting do not matter */
	assert_string_equal(ha, hah); /* nor its own hash label */
	assert_string_not_equal(ha, hb);
	assert_string_not_equal(ha, hc); /* a collision count moves it */
	size_t len = strlen(ha);
	assert_true(len >= 1 && len <= 10);
	for (size_t i = 0; i < len; i++)
		assert_non_null(strchr(CTRL_NAME_ALPHABET, ha[i]));
}

static void test_rollout__templates_equal_but_for_the_hash_label(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = y(tmpl_a);
	cleanup_ynode struct ynode *ah = y(tmpl_a_hashed);
	cleanup_ynode struct ynode *b = y(tmpl_b);
	assert_true(rollout_templates_equal(a, ah));
	assert_true(rollout_templates_equal(ah, a));
	assert_false(rollout_templates_equal(a, b));
}

static void test_rollout__rs_view_reads_annotations(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *rs = y(
	    "{metadata: {name: web-abc, creationTimestamp: '2026-01-02T03:04:05Z', generation: 2, "
	    "annotations: {deployment.kubernetes.io/revision: '4', "
	    "deployment.kubernetes.io/desired-replicas: '3', "
	    "deployment.kubernetes.io/max-replicas: '4'}}, spec: {replicas: 3}, "
	    "status: {replicas: 2, readyReplicas: 2, availableReplicas: 1, observedGeneration: "
	    "1}}");
	struct rollout_rs r;
	rollout_rs_init(&r, rs);
	assert_string_equal(r.name, "web-abc");
	assert_int_equal(r.revision, 4);
	assert_int_equal(r.replicas, 3);
	assert_int_equal(r.status_replicas, 2);
	assert_int_equal(r.available, 1);
	assert_int_equal(r.desired, 3);
	assert_int_equal(r.max, 4);
	assert_int_equal(r.generation, 2);
	assert_int_equal(r.observed, 1);
	assert_int_equal(r.created, 1767323045);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rollout__percent_rounds_surge_up_unavailable_down),
	    cmocka_unit_test(test_rollout__scaled_value_refuses_junk),
	    cmocka_unit_test(test_rollout__fenceposts_as_kubernetes),
	    cmocka_unit_test(test_rollout__params_clamp_and_recreate),
	    cmocka_unit_test(test_rollout__new_rs_grows_by_the_surge),
	    cmocka_unit_test(test_rollout__new_rs_counts_pods_not_yet_deleted),
	    cmocka_unit_test(test_rollout__new_rs_above_replicas_scales_down),
	    cmocka_unit_test(test_rollout__old_rs_scaled_down_within_max_unavailable),
	    cmocka_unit_test(test_rollout__lagging_available_never_counts_beyond_spec),
	    cmocka_unit_test(test_rollout__unhealthy_old_pods_go_first),
	    cmocka_unit_test(test_rollout__oldest_sets_scale_down_first),
	    cmocka_unit_test(test_rollout__proportional_scaling_as_the_docs),
	    cmocka_unit_test(test_rollout__proportional_scaling_down_keeps_the_sum),
	    cmocka_unit_test(test_rollout__one_active_set_takes_the_whole_count),
	    cmocka_unit_test(test_rollout__scaling_event_needs_a_differing_annotation),
	    cmocka_unit_test(test_rollout__recreate_scales_every_old_set_to_zero),
	    cmocka_unit_test(test_rollout__history_limit_removes_the_oldest_empty_sets),
	    cmocka_unit_test(test_rollout__template_hash_is_stable),
	    cmocka_unit_test(test_rollout__templates_equal_but_for_the_hash_label),
	    cmocka_unit_test(test_rollout__rs_view_reads_annotations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
