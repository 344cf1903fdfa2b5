/* test_sched_cache.c: how corral-sched reads pods and nodes, its cache's
 * assume/forget/confirm cycle and per-node sums, and its string map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "objects.h"
#include "strmap.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static struct sched_pod *parse_pod(const char *text)
{
	cleanup_ynode struct ynode *doc = y(text);
	return sched_pod_parse(doc);
}

static struct sched_nodeinfo *parse_node(const char *text)
{
	cleanup_ynode struct ynode *doc = y(text);
	return sched_nodeinfo_parse(doc);
}

static struct sched_pod *pod(const char *name, const char *uid, const char *node, const char *cpu)
{
	cleanup_free char *text = xasprintf(
	    "{kind: Pod, metadata: {name: %s, namespace: dev, uid: %s, ownerReferences: [{kind: "
	    "ReplicaSet, name: rs, uid: rs-1, controller: true}]}, spec: {%s%s%s containers: "
	    "[{name: c, image: i, resources: {requests: {cpu: '%s'}}}]}}",
	    name, uid, node ? "nodeName: " : "", node ? node : "", node ? "," : "", cpu);
	return parse_pod(text);
}

static void add_node(struct sched_cache *c, const char *name)
{
	cleanup_free char *text = xasprintf(
	    "{kind: Node, metadata: {name: %s}, status: {allocatable: {cpu: '4', memory: 4Gi, "
	    "pods: '10'}, conditions: [{type: Ready, status: 'True'}]}}",
	    name);
	sched_cache_set_node(c, parse_node(text));
}

/* ---- objects ---------------------------------------------------------------- */

static void test_objects_pod__fields(void **state)
{
	(void)state;
	cleanup_sched_pod struct sched_pod *p = parse_pod(
	    "{kind: Pod, metadata: {name: web, namespace: prod, uid: u1, labels: {app: web}, "
	    "deletionTimestamp: '2026-01-01T00:00:00Z'}, spec: {priority: 7, containers: [{name: "
	    "c, "
	    "image: i}]}, status: {phase: Running}}");
	assert_string_equal(p->key, "prod/web");
	assert_string_equal(p->uid, "u1");
	assert_null(p->node_name);
	assert_string_equal(p->scheduler_name, "default-scheduler");
	assert_true(p->deleting);
	assert_false(p->terminal);
	assert_int_equal(p->priority, 7);
	assert_string_equal(sched_label(p->labels, "app"), "web");
	assert_null(p->owner);
	assert_null(p->error);
	cleanup_sched_pod struct sched_pod *q = parse_pod(
	    "{kind: Pod, metadata: {name: job}, spec: {schedulerName: mine, nodeName: n1, "
	    "containers: [{name: c, image: i}]}, status: {phase: Failed}}");
	assert_string_equal(q->key, "default/job");
	assert_string_equal(q->scheduler_name, "mine");
	assert_string_equal(q->node_name, "n1");
	assert_true(q->terminal);
	assert_false(q->deleting);
}

static void test_objects_pod__bad_quantity_is_an_error(void **state)
{
	(void)state;
	cleanup_sched_pod struct sched_pod *p = parse_pod(
	    "{kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i, resources: "
	    "{requests: {cpu: lots}}}]}}");
	assert_non_null(p->error);
	assert_non_null(strstr(p->error, "spec.containers[0].resources.requests.cpu"));
}

static void test_objects_node__ready_cordon_taints_allocatable(void **state)
{
	(void)state;
	struct sched_nodeinfo *a = parse_node(
	    "{kind: Node, metadata: {name: n, labels: {x: y}}, spec: {unschedulable: true, taints: "
	    "[{key: k, value: v, effect: NoExecute}]}, status: {capacity: {cpu: '2', memory: 1Gi, "
	    "pods: '5'}, conditions: [{type: MemoryPressure, status: 'False'}, {type: Ready, "
	    "status: 'False'}]}}");
	assert_string_equal(a->name, "n");
	assert_true(a->unschedulable);
	assert_int_equal(a->ready, SCHED_NOT_READY);
	assert_int_equal(a->ntaints, 1);
	assert_int_equal(a->taints[0].effect, SCHED_EFFECT_NO_EXECUTE);
	assert_int_equal(a->alloc.cpu, 2000); /* capacity stands in for allocatable */
	assert_int_equal(a->alloc_pods, 5);
	struct sched_nodeinfo *b =
	    parse_node("{kind: Node, metadata: {name: n}, status: {allocatable: {cpu: '2'}}}");
	assert_int_equal(b->ready, SCHED_NOT_READY); /* no Ready condition */
	assert_false(sched_nodeinfo_equal(a, b));
	sched_nodeinfo_free(b);
	/* A heartbeat is no change. */
	b = parse_node(
	    "{kind: Node, metadata: {name: n, labels: {x: y}}, spec: {unschedulable: true, taints: "
	    "[{key: k, value: v, effect: NoExecute}]}, status: {capacity: {cpu: '2', memory: 1Gi, "
	    "pods: '5'}, conditions: [{type: Ready, status: 'False', lastHeartbeatTime: "
	    "'2026-01-01T00:00:10Z'}]}}");
	assert_true(sched_nodeinfo_equal(a, b));
	sched_nodeinfo_free(a);
	sched_nodeinfo_free(b);
}

/* ---- the cache ------------------------------------------------------------------ */

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

static void test_cache_nodes__set_change_remove(void **state)
{
	struct sched_cache *c = *state;
	assert_true(sched_cache_set_node(
	    c, parse_node("{kind: Node, metadata: {name: a}, status: {allocatable: {cpu: '1'}}}")));
	assert_false(sched_cache_set_node(
	    c, parse_node("{kind: Node, metadata: {name: a}, status: {allocatable: {cpu: '1'}}}")));
	assert_true(sched_cache_set_node(
	    c, parse_node("{kind: Node, metadata: {name: a}, status: {allocatable: {cpu: '2'}}}")));
	add_node(c, "b");
	assert_int_equal(sched_cache_node_count(c), 2);
	assert_true(sched_cache_remove_node(c, "a"));
	assert_false(sched_cache_remove_node(c, "a"));
	assert_int_equal(sched_cache_node_count(c), 1);
	assert_string_equal(sched_cache_node_at(c, 0)->name, "b");
	assert_null(sched_cache_node(c, "a"));
}

static void test_cache_pods__assume_confirm_forget(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "a");
	add_node(c, "b");
	cleanup_sched_pod struct sched_pod *replica = pod("probe", "u9", NULL, "1");
	sched_cache_assume(c, pod("p", "u1", NULL, "1"), "a");
	struct sched_node *a = sched_cache_node(c, "a");
	assert_int_equal(a->requested.cpu, 1000);
	assert_int_equal(a->npods, 1);
	assert_int_equal(sched_node_owner_pods(a, replica), 1);
	assert_true(sched_cache_pod(c, "dev/p")->assumed);
	/* Seen bound: confirmed, no longer forgettable. */
	sched_cache_add_pod(c, pod("p", "u1", "a", "1"));
	assert_false(sched_cache_pod(c, "dev/p")->assumed);
	assert_false(sched_cache_forget(c, "dev/p"));
	assert_int_equal(a->requested.cpu, 1000);
	assert_int_equal(a->npods, 1);
	/* An assumed pod that was bound elsewhere (another scheduler) moves. */
	sched_cache_assume(c, pod("q", "u2", NULL, "2"), "a");
	assert_int_equal(a->requested.cpu, 3000);
	sched_cache_add_pod(c, pod("q", "u2", "b", "2"));
	assert_int_equal(a->requested.cpu, 1000);
	assert_int_equal(sched_cache_node(c, "b")->requested.cpu, 2000);
	/* A failed binding is forgotten. */
	sched_cache_assume(c, pod("r", "u3", NULL, "500m"), "b");
	assert_int_equal(sched_cache_node(c, "b")->requested.cpu, 2500);
	assert_true(sched_cache_forget(c, "dev/r"));
	assert_int_equal(sched_cache_node(c, "b")->requested.cpu, 2000);
	assert_int_equal(sched_cache_pod_count(c), 2);
	assert_true(sched_cache_remove_pod(c, "dev/p"));
	assert_int_equal(a->requested.cpu, 0);
	assert_int_equal(a->npods, 0);
	assert_int_equal(sched_node_owner_pods(a, replica), 0);
}

static void test_cache_pods__placeholder_for_unknown_node(void **state)
{
	struct sched_cache *c = *state;
	/* Bound before its node is seen (or after it went). */
	sched_cache_add_pod(c, pod("p", "u1", "later", "1"));
	assert_int_equal(sched_cache_node_count(c), 0);
	struct sched_node *n = sched_cache_node(c, "later");
	assert_non_null(n);
	assert_null(n->info);
	add_node(c, "later");
	assert_int_equal(sched_cache_node_count(c), 1);
	assert_int_equal(sched_cache_node(c, "later")->requested.cpu, 1000);
	sched_cache_remove_node(c, "later");
	assert_int_equal(sched_cache_node_count(c), 0);
	assert_non_null(sched_cache_node(c, "later")); /* still holds p */
	sched_cache_remove_pod(c, "dev/p");
	assert_null(sched_cache_node(c, "later"));
}

static void test_cache_pods__terminal_pod_holds_nothing(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "a");
	sched_cache_add_pod(c, pod("p", "u1", "a", "1"));
	sched_cache_add_pod(c,
			    parse_pod("{kind: Pod, metadata: {name: p, namespace: dev, uid: u1}, "
				      "spec: {nodeName: a, containers: [{name: c, image: i}]}, "
				      "status: {phase: Succeeded}}"));
	assert_null(sched_cache_pod(c, "dev/p"));
	assert_int_equal(sched_cache_node(c, "a")->requested.cpu, 0);
}

static void test_cache_pods__anti_affinity_index(void **state)
{
	struct sched_cache *c = *state;
	add_node(c, "a");
	sched_cache_add_pod(
	    c,
	    parse_pod(
		"{kind: Pod, metadata: {name: p, namespace: dev}, spec: {nodeName: a, "
		"affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
		"[{labelSelector: {matchLabels: {a: b}}, topologyKey: kubernetes.io/hostname}]}}, "
		"containers: [{name: c, image: i}]}}"));
	sched_cache_add_pod(c, pod("q", "u2", "a", "1"));
	assert_int_equal(sched_cache_anti_count(c), 1);
	assert_string_equal(sched_cache_anti_at(c, 0)->key, "dev/p");
	sched_cache_remove_pod(c, "dev/p");
	assert_int_equal(sched_cache_anti_count(c), 0);
}

/* ---- strmap ------------------------------------------------------------------------ */

static void test_strmap__set_get_del_many(void **state)
{
	(void)state;
	struct strmap *m = strmap_new();
	for (uintptr_t i = 1; i <= 5000; i++) {
		char key[32];
		snprintf(key, sizeof(key), "k%lu", (unsigned long)i);
		assert_null(strmap_set(m, key, (void *)i));
	}
	assert_int_equal(strmap_count(m), 5000);
	/* Delete every third, check the rest survive the backward shifts. */
	for (uintptr_t i = 3; i <= 5000; i += 3) {
		char key[32];
		snprintf(key, sizeof(key), "k%lu", (unsigned long)i);
		assert_ptr_equal(strmap_del(m, key), (void *)i);
	}
	for (uintptr_t i = 1; i <= 5000; i++) {
		char key[32];
		snprintf(key, sizeof(key), "k%lu", (unsigned long)i);
		if (i % 3 == 0)
			assert_false(strmap_has(m, key));
		else
			assert_ptr_equal(strmap_get(m, key), (void *)i);
	}
	size_t n = 0;
	const char *k;
	void *v;
	for (size_t i = 0; strmap_next(m, &i, &k, &v);)
		n++;
	assert_int_equal(n, strmap_count(m));
	assert_ptr_equal(strmap_set(m, "k1", (void *)7), (void *)1);
	assert_null(strmap_del(m, "nope"));
	strmap_free(m, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_objects_pod__fields),
	    cmocka_unit_test(test_objects_pod__bad_quantity_is_an_error),
	    cmocka_unit_test(test_objects_node__ready_cordon_taints_allocatable),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	    T(test_cache_nodes__set_change_remove),
	    T(test_cache_pods__assume_confirm_forget),
	    T(test_cache_pods__placeholder_for_unknown_node),
	    T(test_cache_pods__terminal_pod_holds_nothing),
	    T(test_cache_pods__anti_affinity_index),
#undef T
	    cmocka_unit_test(test_strmap__set_get_del_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
