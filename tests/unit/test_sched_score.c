/* test_sched_score.c: each score of corral-sched on hand-built nodes and
 * pods, their normalization, the weighted pick and its random ties. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algorithm.h"
#include "cache.h"
#include "objects.h"
#include "score.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static void add_node(struct sched_cache *c, const char *name, const char *cpu, const char *mem,
		     const char *labels, const char *spec)
{
	cleanup_free char *text = xasprintf(
	    "{kind: Node, metadata: {name: %s, labels: {kubernetes.io/hostname: %s%s%s}}, spec: "
	    "{%s}, status: {allocatable: {cpu: '%s', memory: %s, pods: '110'}, conditions: "
	    "[{type: Ready, status: 'True'}]}}",
	    name, name, labels ? ", " : "", labels ? labels : "", spec ? spec : "", cpu, mem);
	cleanup_ynode struct ynode *doc = y(text);
	sched_cache_set_node(c, sched_nodeinfo_parse(doc));
}

static struct sched_pod *pod(const char *name, const char *meta, const char *spec)
{
	cleanup_free char *text = xasprintf(
	    "{kind: Pod, metadata: {name: %s, namespace: dev, uid: uid-%s%s%s}, spec: {%s}}", name,
	    name, meta ? ", " : "", meta ? meta : "", spec);
	cleanup_ynode struct ynode *doc = y(text);
	return sched_pod_parse(doc);
}

static struct sched_pod *pod_req(const char *name, const char *cpu, const char *mem)
{
	cleanup_free char *spec = xasprintf(
	    "containers: [{name: c, image: i, resources: {requests: {cpu: '%s', memory: %s}}}]",
	    cpu, mem);
	return pod(name, NULL, spec);
}

static int setup(void **state)
{
	*state = sched_cache_new();
	return 0;
}

static int teardown(void **state)
{
	sched_cache_free(*state);
	return 0;
}

static struct sched_node *node(struct sched_cache *c, const char *name)
{
	struct sched_node *n = sched_cache_node(c, name);
	assert_non_null(n);
	return n;
}

static void put(struct sched_cache *c, struct sched_pod *p, const char *node_name)
{
	p->node_name = xstrdup(node_name);
	sched_cache_add_pod(c, p);
}

static void test_score_least_allocated__free_share(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "n", "4", "8Gi", NULL, NULL);
	put(c, pod_req("a", "1", "2Gi"), "n");
	cleanup_sched_pod struct sched_pod *p = pod_req("p", "1", "2Gi");
	/* cpu (4 - 2) / 4 = 50, memory (8 - 4) / 8 = 50. */
	assert_int_equal(sched_score_least_allocated(p, node(c, "n")), 50);
	/* Requests nothing: counts 100m and 200Mi. */
	cleanup_sched_pod struct sched_pod *e = pod("e", NULL, "containers: [{name: c, image: i}]");
	assert_int_equal(e->nz_cpu, 100);
	assert_int_equal(e->nz_mem, 200LL * 1024 * 1024 * 1000);
	/* cpu (4000 - 1100) * 100 / 4000 = 72, memory (8192 - 2248) * 100 / 8192 = 72 */
	assert_int_equal(sched_score_least_allocated(e, node(c, "n")), 72);
	/* Beyond the node: 0. */
	cleanup_sched_pod struct sched_pod *big = pod_req("b", "8", "16Gi");
	assert_int_equal(sched_score_least_allocated(big, node(c, "n")), 0);
}

static void test_score_balanced_allocation__even_use(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "n", "4", "8Gi", NULL, NULL);
	cleanup_sched_pod struct sched_pod *even = pod_req("e", "2", "4Gi");
	assert_int_equal(sched_score_balanced_allocation(even, node(c, "n")), 100);
	cleanup_sched_pod struct sched_pod *skew = pod_req("s", "4", "0");
	/* shares 1 and 0: std 0.5 -> 50. */
	assert_int_equal(sched_score_balanced_allocation(skew, node(c, "n")), 50);
	cleanup_sched_pod struct sched_pod *some = pod_req("m", "1", "4Gi");
	/* shares .25 and .5: std .125 -> 87. */
	assert_int_equal(sched_score_balanced_allocation(some, node(c, "n")), 87);
}

static void test_score_node_affinity__preferred_weights(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "ssd", "4", "8Gi", "disk: ssd, zone: a", NULL);
	add_node(c, "hdd", "4", "8Gi", "disk: hdd, zone: a", NULL);
	add_node(c, "none", "4", "8Gi", NULL, NULL);
	cleanup_sched_pod struct sched_pod *p = pod(
	    "p", NULL,
	    "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: "
	    "80, preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}, "
	    "{weight: 20, preference: {matchExpressions: [{key: zone, operator: Exists}]}}]}}, "
	    "containers: [{name: c, image: i}]");
	assert_null(p->error);
	int64_t s[3] = {sched_score_node_affinity_raw(p, node(c, "ssd")),
			sched_score_node_affinity_raw(p, node(c, "hdd")),
			sched_score_node_affinity_raw(p, node(c, "none"))};
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 20);
	assert_int_equal(s[2], 0);
	sched_score_normalize(s, 3, false);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 20);
	assert_int_equal(s[2], 0);
}

static void test_score_taint_toleration__prefer_no_schedule(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "clean", "4", "8Gi", NULL, NULL);
	add_node(c, "one", "4", "8Gi", NULL, "taints: [{key: a, effect: PreferNoSchedule}]");
	add_node(c, "two", "4", "8Gi", NULL,
		 "taints: [{key: a, effect: PreferNoSchedule}, {key: b, value: x, effect: "
		 "PreferNoSchedule}, {key: c, effect: NoSchedule}]");
	cleanup_sched_pod struct sched_pod *p = pod("p", NULL, "containers: [{name: c, image: i}]");
	int64_t s[3] = {sched_score_taint_raw(p, node(c, "clean")),
			sched_score_taint_raw(p, node(c, "one")),
			sched_score_taint_raw(p, node(c, "two"))};
	assert_int_equal(s[1], 1);
	assert_int_equal(s[2], 2);
	sched_score_normalize(s, 3, true);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 50);
	assert_int_equal(s[2], 0);
	/* A toleration for PreferNoSchedule (or every effect) counts; one for
	 * NoSchedule only does not. */
	cleanup_sched_pod struct sched_pod *t =
	    pod("t", NULL,
		"tolerations: [{key: a, operator: Exists, effect: PreferNoSchedule}, {key: b, "
		"operator: "
		"Exists, effect: NoSchedule}], containers: [{name: c, image: i}]");
	assert_int_equal(sched_score_taint_raw(t, node(c, "two")), 1);
}

static void test_score_spread__replicas_of_one_owner(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "a", "8", "8Gi", NULL, NULL);
	add_node(c, "b", "8", "8Gi", NULL, NULL);
	add_node(c, "d", "8", "8Gi", NULL, NULL);
	const char *owned = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, "
			    "uid: rs-1, controller: true}]";
	const char *spec = "containers: [{name: c, image: i}]";
	put(c, pod("w1", owned, spec), "a");
	put(c, pod("w2", owned, spec), "a");
	put(c, pod("w3", owned, spec), "b");
	put(c, pod("x1", NULL, spec), "d"); /* not a replica */
	cleanup_sched_pod struct sched_pod *p = pod("w4", owned, spec);
	assert_string_equal(p->owner, "rs-1");
	int64_t s[3] = {sched_score_spread_raw(p, node(c, "a")),
			sched_score_spread_raw(p, node(c, "b")),
			sched_score_spread_raw(p, node(c, "d"))};
	assert_int_equal(s[0], 2);
	assert_int_equal(s[1], 1);
	assert_int_equal(s[2], 0);
	sched_score_normalize(s, 3, true);
	assert_int_equal(s[0], 0);
	assert_int_equal(s[1], 50);
	assert_int_equal(s[2], 100);
	/* A pod without a controller is spread by nothing. */
	cleanup_sched_pod struct sched_pod *bare = pod("bare", NULL, spec);
	assert_null(bare->owner);
	assert_int_equal(sched_score_spread_raw(bare, node(c, "a")), 0);
	/* Placing replicas one by one fills the emptiest nodes first. */
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *algo = sched_algo_new(&o, 5);
	struct sched_decision d;
	sched_algo_decide(algo, c, p, &d);
	assert_string_equal(d.node->name, "d");
	sched_decision_clear(&d);
	sched_algo_free(algo);
}

static void test_score_pick__least_allocated_node_wins(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "busy", "4", "8Gi", NULL, NULL);
	add_node(c, "idle", "4", "8Gi", NULL, NULL);
	put(c, pod_req("a", "3", "6Gi"), "busy");
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *algo = sched_algo_new(&o, 9);
	cleanup_sched_pod struct sched_pod *p = pod_req("p", "500m", "1Gi");
	struct sched_decision d;
	sched_algo_decide(algo, c, p, &d);
	assert_string_equal(d.node->name, "idle");
	assert_int_equal(d.feasible, 2);
	sched_decision_clear(&d);
	sched_algo_free(algo);
}

static void test_score_pick__ties_at_random(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "a", "4", "8Gi", NULL, NULL);
	add_node(c, "b", "4", "8Gi", NULL, NULL);
	add_node(c, "d", "4", "8Gi", NULL, NULL);
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *algo = sched_algo_new(&o, 11);
	cleanup_sched_pod struct sched_pod *p = pod_req("p", "1", "1Gi");
	int seen[3] = {0};
	for (int i = 0; i < 300; i++) {
		struct sched_decision d;
		sched_algo_decide(algo, c, p, &d);
		seen[d.node->name[0] == 'a' ? 0 : d.node->name[0] == 'b' ? 1 : 2]++;
		sched_decision_clear(&d);
	}
	/* Every one of three equal nodes is picked, none always. */
	for (int i = 0; i < 3; i++) {
		assert_true(seen[i] > 0);
		assert_true(seen[i] < 300);
	}
	sched_algo_free(algo);
}

static void test_score_weights__taint_outweighs_least_allocated(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "tainted", "64", "128Gi", NULL, "taints: [{key: a, effect: PreferNoSchedule}]");
	add_node(c, "clean", "4", "8Gi", NULL, NULL);
	put(c, pod_req("a", "2", "4Gi"), "clean");
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *algo = sched_algo_new(&o, 13);
	cleanup_sched_pod struct sched_pod *p = pod_req("p", "100m", "100Mi");
	struct sched_decision d;
	sched_algo_decide(algo, c, p, &d);
	assert_string_equal(d.node->name, "clean");
	sched_decision_clear(&d);
	sched_algo_free(algo);
	/* With its weight at 0 the emptier node wins. */
	o.weights.taint_toleration = 0;
	algo = sched_algo_new(&o, 13);
	sched_algo_decide(algo, c, p, &d);
	assert_string_equal(d.node->name, "tainted");
	sched_decision_clear(&d);
	sched_algo_free(algo);
}

static void test_score_normalize__all_zero(void **state)
{
	(void)state;
	int64_t s[2] = {0, 0};
	sched_score_normalize(s, 2, false);
	assert_int_equal(s[0], 0);
	sched_score_normalize(s, 2, true);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	    T(test_score_least_allocated__free_share),
	    T(test_score_balanced_allocation__even_use),
	    T(test_score_node_affinity__preferred_weights),
	    T(test_score_taint_toleration__prefer_no_schedule),
	    T(test_score_spread__replicas_of_one_owner),
	    T(test_score_pick__least_allocated_node_wins),
	    T(test_score_pick__ties_at_random),
	    T(test_score_weights__taint_outweighs_least_allocated),
	    T(test_score_normalize__all_zero),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
