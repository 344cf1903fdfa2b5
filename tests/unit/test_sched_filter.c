/* test_sched_filter.c: each filter of corral-sched on hand-built nodes and
 * pods, the reasons they give, and the unschedulable message as a whole. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algorithm.h"
#include "cache.h"
#include "filter.h"
#include "objects.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

/* A Ready node with cpu, memory and pods, labels and spec given as flow
 * mappings' insides ("role: a", "taints: [...]"). */
static void add_node(struct sched_cache *c, const char *name, const char *cpu, const char *mem,
		     const char *labels, const char *spec, const char *ready)
{
	cleanup_free char *text = xasprintf(
	    "{apiVersion: v1, kind: Node, metadata: {name: %s, labels: {kubernetes.io/hostname: "
	    "%s%s%s}}, spec: {%s}, status: {allocatable: {cpu: '%s', memory: %s, pods: '3'}, "
	    "conditions: [{type: Ready, status: '%s'}]}}",
	    name, name, labels ? ", " : "", labels ? labels : "", spec ? spec : "", cpu, mem,
	    ready ? ready : "True");
	cleanup_ynode struct ynode *doc = y(text);
	sched_cache_set_node(c, sched_nodeinfo_parse(doc));
}

/* A pod in namespace dev: spec is the inside of the spec mapping. */
static struct sched_pod *pod(const char *name, const char *labels, const char *spec)
{
	cleanup_free char *text = xasprintf(
	    "{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: dev, uid: uid-%s, labels: "
	    "{%s}}, spec: {%s}}",
	    name, name, labels ? labels : "", spec);
	cleanup_ynode struct ynode *doc = y(text);
	return sched_pod_parse(doc);
}

static struct sched_pod *pod_cpu(const char *name, const char *cpu, const char *more)
{
	cleanup_free char *spec =
	    xasprintf("containers: [{name: c, image: i, resources: {requests: {cpu: '%s'}}}]%s%s",
		      cpu, more ? ", " : "", more ? more : "");
	return pod(name, NULL, spec);
}

/* Binds a pod of cpu on node (as the informer would see it). */
static void bind_pod(struct sched_cache *c, const char *name, const char *node, const char *labels,
		     const char *spec)
{
	struct sched_pod *p = pod(name, labels, spec);
	p->node_name = xstrdup(node);
	sched_cache_add_pod(c, p);
}

struct fixture {
	struct sched_cache *c;
	struct sched_diag *d;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	f->c = sched_cache_new();
	f->d = sched_diag_new();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	sched_diag_free(f->d);
	sched_cache_free(f->c);
	free(f);
	return 0;
}

static struct sched_node *node(struct fixture *f, const char *name)
{
	struct sched_node *n = sched_cache_node(f->c, name);
	assert_non_null(n);
	return n;
}

/* The decision's message for p, freed by the caller. */
static char *message_for(struct fixture *f, const struct sched_pod *p)
{
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *a = sched_algo_new(&o, 42);
	struct sched_decision d;
	sched_algo_decide(a, f->c, p, &d);
	assert_null(d.node);
	char *msg = steal_pointer(&d.message);
	sched_decision_clear(&d);
	sched_algo_free(a);
	return msg;
}

static void test_filter_unschedulable__cordoned_node_refuses(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "4", "4Gi", NULL, "unschedulable: true", NULL);
	add_node(f->c, "m", "4", "4Gi", NULL, NULL, NULL);
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", NULL);
	assert_false(sched_filter_unschedulable(p, node(f, "n"), f->d));
	assert_true(sched_filter_unschedulable(p, node(f, "m"), f->d));
	assert_int_equal(sched_diag_count(f->d, "node(s) were unschedulable"), 1);
}

static void test_filter_unschedulable__toleration_lets_through(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "4", "4Gi", NULL, "unschedulable: true", NULL);
	cleanup_sched_pod struct sched_pod *p =
	    pod_cpu("p", "1",
		    "tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, "
		    "effect: NoSchedule}]");
	assert_true(sched_filter_unschedulable(p, node(f, "n"), NULL));
}

static void test_filter_taints__noschedule_and_noexecute(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "ns", "4", "4Gi", NULL, "taints: [{key: a, value: b, effect: NoSchedule}]",
		 NULL);
	add_node(f->c, "ne", "4", "4Gi", NULL, "taints: [{key: x, effect: NoExecute}]", NULL);
	add_node(f->c, "pref", "4", "4Gi", NULL,
		 "taints: [{key: a, value: b, effect: PreferNoSchedule}]", NULL);
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", NULL);
	assert_false(sched_filter_taints(p, node(f, "ns"), f->d));
	assert_false(sched_filter_taints(p, node(f, "ne"), f->d));
	assert_true(sched_filter_taints(p, node(f, "pref"), f->d));
	assert_int_equal(sched_diag_count(f->d, "node(s) had untolerated taint {a: b}"), 1);
	assert_int_equal(sched_diag_count(f->d, "node(s) had untolerated taint {x: }"), 1);
}

static void test_filter_taints__tolerations_equal_exists_effect(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "4", "4Gi", NULL, "taints: [{key: a, value: b, effect: NoSchedule}]",
		 NULL);
	struct {
		const char *tol;
		bool ok;
	} cases[] = {
	    {"[{key: a, operator: Equal, value: b, effect: NoSchedule}]", true},
	    {"[{key: a, value: b}]", true}, /* Equal is the default; any effect */
	    {"[{key: a, operator: Exists}]", true},
	    {"[{operator: Exists}]", true},				/* every taint */
	    {"[{key: a, operator: Equal, value: c}]", false},		/* another value */
	    {"[{key: a, operator: Exists, effect: NoExecute}]", false}, /* another effect */
	    {"[{key: z, operator: Exists}]", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *more = xasprintf("tolerations: %s", cases[i].tol);
		cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", more);
		if (sched_filter_taints(p, node(f, "n"), NULL) != cases[i].ok)
			fail_msg("toleration %s: wanted %s", cases[i].tol,
				 cases[i].ok ? "pass" : "reject");
	}
}

static void test_filter_taints__not_ready_is_a_taint(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "down", "4", "4Gi", NULL, NULL, "False");
	add_node(f->c, "lost", "4", "4Gi", NULL, NULL, "Unknown");
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", NULL);
	assert_false(sched_filter_taints(p, node(f, "down"), f->d));
	assert_false(sched_filter_taints(p, node(f, "lost"), f->d));
	assert_int_equal(
	    sched_diag_count(f->d,
			     "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"),
	    1);
	assert_int_equal(
	    sched_diag_count(f->d,
			     "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"),
	    1);
	/* A DaemonSet-like toleration gets through. */
	cleanup_sched_pod struct sched_pod *ds =
	    pod_cpu("ds", "1",
		    "tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: "
		    "NoSchedule}]");
	assert_true(sched_filter_taints(ds, node(f, "down"), NULL));
	assert_false(sched_filter_taints(ds, node(f, "lost"), NULL));
}

static void test_filter_node_affinity__node_selector(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "gpu", "4", "4Gi", "accel: gpu, zone: a", NULL, NULL);
	add_node(f->c, "cpu", "4", "4Gi", "zone: a", NULL, NULL);
	cleanup_sched_pod struct sched_pod *p =
	    pod_cpu("p", "1", "nodeSelector: {accel: gpu, zone: a}");
	assert_true(sched_filter_node_affinity(p, node(f, "gpu"), f->d));
	assert_false(sched_filter_node_affinity(p, node(f, "cpu"), f->d));
	assert_int_equal(
	    sched_diag_count(f->d, "node(s) didn't match Pod's node affinity/selector"), 1);
}

/* A pod whose claim's volume is on node a only (volumes.c gives it the
 * volume's nodeAffinity) fits a only, and the message names the conflict. */
static void test_filter_volumes__bound_volume_node_affinity(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "a", "4", "4Gi", NULL, NULL, NULL);
	add_node(f->c, "b", "4", "4Gi", NULL, NULL, NULL);
	cleanup_sched_pod struct sched_pod *p =
	    pod_cpu("p", "1", "volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]");
	assert_int_equal(p->nclaims, 1);
	assert_string_equal(p->claims[0], "data");
	assert_true(sched_filter_volumes(p, node(f, "b"), f->d));
	p->volume_affinity = xcalloc(1, sizeof(*p->volume_affinity));
	p->volume_affinity[p->nvolume_affinity++] =
	    y("{nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, "
	      "operator: In, values: [a]}]}]}");
	assert_true(sched_filter_volumes(p, node(f, "a"), f->d));
	assert_false(sched_filter_volumes(p, node(f, "b"), f->d));
	assert_int_equal(sched_diag_count(f->d, SCHED_REASON_VOLUME_NODE_CONFLICT), 1);
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *a = sched_algo_new(&o, 42);
	for (int i = 0; i < 4; i++) {
		struct sched_decision d;
		sched_algo_decide(a, f->c, p, &d);
		assert_non_null(d.node);
		assert_string_equal(d.node->name, "a");
		sched_decision_clear(&d);
	}
	sched_algo_free(a);
}

static bool affinity_matches(struct fixture *f, const char *node_name, const char *terms)
{
	cleanup_free char *more =
	    xasprintf("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
		      "{nodeSelectorTerms: %s}}}",
		      terms);
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", more);
	if (p->error)
		fail_msg("%s: %s", terms, p->error);
	return sched_filter_node_affinity(p, node(f, node_name), NULL);
}

static void test_filter_node_affinity__operators(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "4", "4Gi", "role: web, cores: '16'", NULL, NULL);
	struct {
		const char *terms;
		bool ok;
	} cases[] = {
	    {"[{matchExpressions: [{key: role, operator: In, values: [db, web]}]}]", true},
	    {"[{matchExpressions: [{key: role, operator: In, values: [db]}]}]", false},
	    {"[{matchExpressions: [{key: role, operator: NotIn, values: [db]}]}]", true},
	    {"[{matchExpressions: [{key: role, operator: NotIn, values: [web]}]}]", false},
	    {"[{matchExpressions: [{key: nope, operator: NotIn, values: [x]}]}]", true},
	    {"[{matchExpressions: [{key: role, operator: Exists}]}]", true},
	    {"[{matchExpressions: [{key: nope, operator: Exists}]}]", false},
	    {"[{matchExpressions: [{key: nope, operator: DoesNotExist}]}]", true},
	    {"[{matchExpressions: [{key: role, operator: DoesNotExist}]}]", false},
	    {"[{matchExpressions: [{key: cores, operator: Gt, values: ['8']}]}]", true},
	    {"[{matchExpressions: [{key: cores, operator: Gt, values: ['16']}]}]", false},
	    {"[{matchExpressions: [{key: cores, operator: Lt, values: ['32']}]}]", true},
	    {"[{matchExpressions: [{key: role, operator: Lt, values: ['32']}]}]",
	     false}, /* not a number */
	    {"[{matchExpressions: [{key: nope, operator: Gt, values: ['1']}]}]", false},
	    /* Terms are ORed, expressions ANDed. */
	    {"[{matchExpressions: [{key: role, operator: In, values: [db]}]}, "
	     "{matchExpressions: [{key: role, operator: Exists}]}]",
	     true},
	    {"[{matchExpressions: [{key: role, operator: Exists}, {key: nope, operator: Exists}]}]",
	     false},
	    {"[{matchFields: [{key: metadata.name, operator: In, values: [n]}]}]", true},
	    {"[{matchFields: [{key: metadata.name, operator: NotIn, values: [n]}]}]", false},
	    /* An empty term, or no terms, matches nothing. */
	    {"[{}]", false},
	    {"[]", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (affinity_matches(f, "n", cases[i].terms) != cases[i].ok)
			fail_msg("%s: wanted %s", cases[i].terms,
				 cases[i].ok ? "match" : "no match");
}

static void test_filter_node_affinity__bad_operator_is_an_error(void **state)
{
	(void)state;
	cleanup_sched_pod struct sched_pod *p = pod_cpu(
	    "p", "1",
	    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
	    "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near, values: [b]}]}]}}}");
	assert_non_null(p->error);
	assert_non_null(strstr(p->error, "Unsupported value: \"Near\""));
}

static void test_filter_ports__conflicts(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "4", "4Gi", NULL, NULL, NULL);
	bind_pod(f->c, "web", "n", NULL,
		 "containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 8080}, "
		 "{containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}]}]");
	struct {
		const char *ports;
		bool ok;
	} cases[] = {
	    {"[{containerPort: 80, hostPort: 8080}]", false},
	    {"[{containerPort: 80, hostPort: 8081}]", true},
	    {"[{containerPort: 80}]", true}, /* no host port */
	    {"[{containerPort: 80, hostPort: 8080, protocol: UDP}]", true},
	    {"[{containerPort: 53, hostPort: 53, protocol: UDP}]", false}, /* 0.0.0.0 takes all */
	    {"[{containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.2}]", true},
	    {"[{containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}]", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *spec =
		    xasprintf("containers: [{name: c, image: i, ports: %s}]", cases[i].ports);
		cleanup_sched_pod struct sched_pod *p = pod("p", NULL, spec);
		if (sched_filter_ports(p, node(f, "n"), NULL) != cases[i].ok)
			fail_msg("%s: wanted %s", cases[i].ports, cases[i].ok ? "free" : "taken");
	}
	cleanup_sched_pod struct sched_pod *p =
	    pod("p", NULL,
		"containers: [{name: c, image: i, ports: [{containerPort: 1, hostPort: 8080}]}]");
	assert_false(sched_filter_ports(p, node(f, "n"), f->d));
	assert_int_equal(
	    sched_diag_count(f->d, "node(s) didn't have free ports for the requested pod ports"),
	    1);
}

static void test_filter_resources__cpu_memory_pods(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "2", "1Gi", NULL, NULL, NULL);
	bind_pod(f->c, "a", "n", NULL,
		 "containers: [{name: c, image: i, resources: {requests: {cpu: 1500m, memory: "
		 "512Mi}}}]");
	cleanup_sched_pod struct sched_pod *fits = pod(
	    "p", NULL,
	    "containers: [{name: c, image: i, resources: {requests: {cpu: 500m, memory: 512Mi}}}]");
	assert_true(sched_filter_resources(fits, node(f, "n"), NULL));
	cleanup_sched_pod struct sched_pod *big = pod(
	    "q", NULL,
	    "containers: [{name: c, image: i, resources: {requests: {cpu: 501m, memory: 513Mi}}}]");
	assert_false(sched_filter_resources(big, node(f, "n"), f->d));
	assert_int_equal(sched_diag_count(f->d, "Insufficient cpu"), 1);
	assert_int_equal(sched_diag_count(f->d, "Insufficient memory"), 1);
	/* The node takes 3 pods: two more fit by count, the fourth not. */
	bind_pod(f->c, "b", "n", NULL, "containers: [{name: c, image: i}]");
	bind_pod(f->c, "c", "n", NULL, "containers: [{name: c, image: i}]");
	cleanup_sched_pod struct sched_pod *empty =
	    pod("e", NULL, "containers: [{name: c, image: i}]");
	assert_false(sched_filter_resources(empty, node(f, "n"), f->d));
	assert_int_equal(sched_diag_count(f->d, "Too many pods"), 1);
}

static void test_filter_resources__limits_stand_for_requests(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "1", "1Gi", NULL, NULL, NULL);
	cleanup_sched_pod struct sched_pod *p =
	    pod("p", NULL, "containers: [{name: c, image: i, resources: {limits: {cpu: '2'}}}]");
	assert_int_equal(p->req.cpu, 2000);
	assert_false(sched_filter_resources(p, node(f, "n"), NULL));
}

static void test_filter_resources__init_containers_as_kubernetes(void **state)
{
	(void)state;
	/* Regular init containers run one at a time: max(max(init), sum). */
	cleanup_sched_pod struct sched_pod *p =
	    pod("p", NULL,
		"initContainers: [{name: i1, image: i, resources: {requests: {cpu: '3', memory: "
		"1Gi}}}, "
		"{name: i2, image: i, resources: {requests: {cpu: '1', memory: 3Gi}}}], "
		"containers: [{name: a, image: i, resources: {requests: {cpu: '1', memory: 1Gi}}}, "
		"{name: b, image: i, resources: {requests: {cpu: '1', memory: 1Gi}}}]");
	assert_null(p->error);
	assert_int_equal(p->req.cpu, 3000);
	assert_int_equal(p->req.mem, 3LL * 1024 * 1024 * 1024 * 1000);
	/* A sidecar (restartPolicy Always) runs beside what follows, and beside
	 * the containers; overhead comes on top. */
	cleanup_sched_pod struct sched_pod *s = pod(
	    "s", NULL,
	    "initContainers: [{name: side, image: i, restartPolicy: Always, resources: {requests: "
	    "{cpu: 500m}}}, {name: i1, image: i, resources: {requests: {cpu: '2'}}}], "
	    "containers: [{name: a, image: i, resources: {requests: {cpu: '1'}}}], "
	    "overhead: {cpu: 100m}");
	assert_null(s->error);
	assert_int_equal(s->req.cpu, 2500 + 100); /* max(500m + 2, 1 + 500m) + 100m */
}

static void test_filter_resources__extended_and_ephemeral(void **state)
{
	struct fixture *f = *state;
	cleanup_ynode struct ynode *doc = y(
	    "{kind: Node, metadata: {name: g}, status: {allocatable: {cpu: '4', memory: 4Gi, pods: "
	    "'10', ephemeral-storage: 10Gi, nvidia.com/gpu: '1'}, conditions: [{type: Ready, "
	    "status: "
	    "'True'}]}}");
	sched_cache_set_node(f->c, sched_nodeinfo_parse(doc));
	cleanup_sched_pod struct sched_pod *p =
	    pod("p", NULL,
		"containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: '2', "
		"ephemeral-storage: 20Gi}}}]");
	assert_false(sched_filter_resources(p, node(f, "g"), f->d));
	assert_int_equal(sched_diag_count(f->d, "Insufficient nvidia.com/gpu"), 1);
	assert_int_equal(sched_diag_count(f->d, "Insufficient ephemeral-storage"), 1);
	cleanup_sched_pod struct sched_pod *q =
	    pod("q", NULL,
		"containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: '1'}}}]");
	assert_true(sched_filter_resources(q, node(f, "g"), NULL));
}

static void test_filter_resources__terminated_and_assumed_pods(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "n", "1", "1Gi", NULL, NULL, NULL);
	/* A Succeeded pod holds nothing. */
	cleanup_ynode struct ynode *doc =
	    y("{kind: Pod, metadata: {name: done, namespace: dev}, spec: {nodeName: n, containers: "
	      "[{name: c, image: i, resources: {requests: {cpu: '1'}}}]}, status: {phase: "
	      "Succeeded}}");
	sched_cache_add_pod(f->c, sched_pod_parse(doc));
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", NULL);
	assert_true(sched_filter_resources(p, node(f, "n"), NULL));
	/* An assumed pod holds its requests at once... */
	sched_cache_assume(f->c, pod_cpu("first", "600m", NULL), "n");
	cleanup_sched_pod struct sched_pod *q = pod_cpu("q", "600m", NULL);
	assert_false(sched_filter_resources(q, node(f, "n"), NULL));
	/* ...until forgotten. */
	assert_true(sched_cache_forget(f->c, "dev/first"));
	assert_true(sched_filter_resources(q, node(f, "n"), NULL));
}

static void test_filter_pod_anti_affinity__hostname(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "a", "4", "4Gi", NULL, NULL, NULL);
	add_node(f->c, "b", "4", "4Gi", NULL, NULL, NULL);
	const char *anti =
	    "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
	    "[{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}}, "
	    "containers: [{name: c, image: i}]";
	bind_pod(f->c, "web-1", "a", "app: web", "containers: [{name: c, image: i}]");
	cleanup_sched_pod struct sched_pod *p = pod("web-2", "app: web", anti);
	struct sched_cycle *cy = sched_cycle_new(f->c, p);
	assert_false(sched_filter_pod_affinity(cy, node(f, "a"), f->d));
	assert_true(sched_filter_pod_affinity(cy, node(f, "b"), f->d));
	assert_int_equal(sched_diag_count(f->d, "node(s) didn't match pod anti-affinity rules"), 1);
	sched_cycle_free(cy);
	/* Another namespace's pods are not matched by default. */
	cleanup_ynode struct ynode *other =
	    y("{kind: Pod, metadata: {name: web-x, namespace: prod, labels: {app: web}}, spec: "
	      "{nodeName: b, containers: [{name: c, image: i}]}}");
	sched_cache_add_pod(f->c, sched_pod_parse(other));
	cy = sched_cycle_new(f->c, p);
	assert_true(sched_filter_pod_affinity(cy, node(f, "b"), NULL));
	sched_cycle_free(cy);
}

static void test_filter_pod_anti_affinity__existing_pods_rules(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "a", "4", "4Gi", NULL, NULL, NULL);
	add_node(f->c, "b", "4", "4Gi", NULL, NULL, NULL);
	/* A bound pod that wants no app=db beside it keeps db off its node. */
	bind_pod(
	    f->c, "loner", "a", "app: loner",
	    "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
	    "[{labelSelector: {matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}]}}, "
	    "containers: [{name: c, image: i}]");
	cleanup_sched_pod struct sched_pod *p =
	    pod("db", "app: db", "containers: [{name: c, image: i}]");
	struct sched_cycle *cy = sched_cycle_new(f->c, p);
	assert_false(sched_filter_pod_affinity(cy, node(f, "a"), f->d));
	assert_true(sched_filter_pod_affinity(cy, node(f, "b"), NULL));
	assert_int_equal(
	    sched_diag_count(f->d, "node(s) didn't satisfy existing pods anti-affinity rules"), 1);
	sched_cycle_free(cy);
}

static void test_filter_pod_affinity__required(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "a", "4", "4Gi", "zone: z1", NULL, NULL);
	add_node(f->c, "b", "4", "4Gi", "zone: z2", NULL, NULL);
	add_node(f->c, "c", "4", "4Gi", NULL, NULL, NULL);
	const char *aff =
	    "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
	    "[{labelSelector: {matchLabels: {app: cache}}, topologyKey: zone}]}}, "
	    "containers: [{name: c, image: i}]";
	/* The first of a group that wants itself goes anywhere with the key. */
	cleanup_sched_pod struct sched_pod *first = pod("c1", "app: cache", aff);
	struct sched_cycle *cy = sched_cycle_new(f->c, first);
	assert_true(sched_filter_pod_affinity(cy, node(f, "a"), NULL));
	assert_true(sched_filter_pod_affinity(cy, node(f, "b"), NULL));
	assert_false(sched_filter_pod_affinity(cy, node(f, "c"), f->d)); /* no zone label */
	sched_cycle_free(cy);
	/* Once one is in z1, the others follow it there. */
	bind_pod(f->c, "c1", "a", "app: cache", aff);
	cleanup_sched_pod struct sched_pod *second = pod("c2", "app: cache", aff);
	cy = sched_cycle_new(f->c, second);
	assert_true(sched_filter_pod_affinity(cy, node(f, "a"), NULL));
	assert_false(sched_filter_pod_affinity(cy, node(f, "b"), f->d));
	sched_cycle_free(cy);
	assert_int_equal(sched_diag_count(f->d, "node(s) didn't match pod affinity rules"), 2);
	/* A pod that does not match its own terms waits for one that does. */
	cleanup_sched_pod struct sched_pod *lone = pod("l", "app: other", aff);
	sched_cache_remove_pod(f->c, "dev/c1");
	cy = sched_cycle_new(f->c, lone);
	assert_false(sched_filter_pod_affinity(cy, node(f, "a"), NULL));
	sched_cycle_free(cy);
}

static void test_filter_message__kubernetes_wording_and_order(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "small", "1", "1Gi", "role: small", NULL, NULL);
	add_node(f->c, "big", "8", "16Gi", "role: big", NULL, NULL);
	add_node(f->c, "gpu", "8", "16Gi", "accel: gpu", NULL, NULL);
	/* Reasons sorted as strings, counts in front, as FitError.Error(). */
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "4", "nodeSelector: {role: small}");
	cleanup_free char *msg = message_for(f, p);
	assert_string_equal(msg, "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't "
				 "match Pod's node affinity/selector.");
	cleanup_sched_pod struct sched_pod *q = pod_cpu("q", "64", NULL);
	cleanup_free char *msg2 = message_for(f, q);
	assert_string_equal(msg2, "0/3 nodes are available: 3 Insufficient cpu.");
}

static void test_filter_message__first_failing_filter_per_node(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "cordoned", "1", "1Gi", NULL, "unschedulable: true", NULL);
	add_node(f->c, "tainted", "1", "1Gi", NULL,
		 "taints: [{key: k, value: v, effect: NoSchedule}]", NULL);
	add_node(f->c, "down", "1", "1Gi", NULL, NULL, "False");
	add_node(f->c, "small", "1", "1Gi", NULL, NULL, NULL);
	cleanup_sched_pod struct sched_pod *p = pod(
	    "p", NULL,
	    "containers: [{name: c, image: i, resources: {requests: {cpu: '2', memory: 2Gi}}}]");
	cleanup_free char *msg = message_for(f, p);
	assert_string_equal(msg,
			    "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient "
			    "memory, 1 node(s) had untolerated taint {k: v}, 1 node(s) had "
			    "untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were "
			    "unschedulable.");
}

static void test_filter_message__no_nodes(void **state)
{
	struct fixture *f = *state;
	cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "1", NULL);
	cleanup_free char *msg = message_for(f, p);
	assert_string_equal(msg, "no nodes available to schedule pods");
}

static void test_filter_decide__picks_the_only_fit(void **state)
{
	struct fixture *f = *state;
	add_node(f->c, "small", "1", "1Gi", NULL, NULL, NULL);
	add_node(f->c, "big", "8", "16Gi", NULL, NULL, NULL);
	add_node(f->c, "tainted", "8", "16Gi", NULL,
		 "taints: [{key: k, value: v, effect: NoExecute}]", NULL);
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *a = sched_algo_new(&o, 7);
	for (int i = 0; i < 20; i++) {
		cleanup_sched_pod struct sched_pod *p = pod_cpu("p", "2", NULL);
		struct sched_decision d;
		sched_algo_decide(a, f->c, p, &d);
		assert_non_null(d.node);
		assert_string_equal(d.node->name, "big");
		assert_int_equal(d.feasible, 1);
		sched_decision_clear(&d);
	}
	sched_algo_free(a);
}

static void test_filter_decide__a_burst_never_oversubscribes(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < 150; i++) {
		cleanup_free char *name = xasprintf("n%03d", i);
		add_node(f->c, name, "2", "4Gi", NULL, NULL, NULL);
	}
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *a = sched_algo_new(&o, 3);
	/* 150 nodes of 2 cpus, 3 pods each: 450 pods of 600m fit, as 3 per
	 * node; the 451st does not. */
	size_t placed = 0;
	for (int i = 0; i < 460; i++) {
		cleanup_free char *name = xasprintf("p%d", i);
		struct sched_pod *p = pod_cpu(name, "600m", NULL);
		struct sched_decision d;
		sched_algo_decide(a, f->c, p, &d);
		if (d.node) {
			sched_cache_assume(f->c, p, d.node->name);
			placed++;
		} else {
			assert_non_null(strstr(d.message, "0/150 nodes are available:"));
			sched_pod_free(p);
		}
		sched_decision_clear(&d);
	}
	assert_int_equal(placed, 450);
	for (size_t i = 0; i < sched_cache_node_count(f->c); i++) {
		struct sched_node *n = sched_cache_node_at(f->c, i);
		assert_true(n->requested.cpu <= n->info->alloc.cpu);
		assert_int_equal(n->npods, 3);
	}
	sched_algo_free(a);
}

static void test_filter_decide__percentage_of_nodes(void **state)
{
	(void)state;
	struct sched_algo_opts o = {.weights = SCHED_WEIGHTS_DEFAULT};
	struct sched_algo *a = sched_algo_new(&o, 1);
	assert_int_equal(sched_algo_nodes_to_find(a, 50), 50);
	assert_int_equal(sched_algo_nodes_to_find(a, 200),
			 200 * 49 / 100 < 100 ? 100 : 200 * 49 / 100);
	assert_int_equal(sched_algo_nodes_to_find(a, 1000), 420);
	assert_int_equal(sched_algo_nodes_to_find(a, 5000), 500);  /* 50 - 40 = 10 % */
	assert_int_equal(sched_algo_nodes_to_find(a, 10000), 500); /* at least 5 % */
	sched_algo_free(a);
	o.percentage = 100;
	a = sched_algo_new(&o, 1);
	assert_int_equal(sched_algo_nodes_to_find(a, 1000), 1000);
	sched_algo_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	    T(test_filter_unschedulable__cordoned_node_refuses),
	    T(test_filter_unschedulable__toleration_lets_through),
	    T(test_filter_taints__noschedule_and_noexecute),
	    T(test_filter_taints__tolerations_equal_exists_effect),
	    T(test_filter_taints__not_ready_is_a_taint),
	    T(test_filter_node_affinity__node_selector),
	    T(test_filter_node_affinity__operators),
	    T(test_filter_node_affinity__bad_operator_is_an_error),
	    T(test_filter_ports__conflicts),
	    T(test_filter_resources__cpu_memory_pods),
	    T(test_filter_resources__limits_stand_for_requests),
	    T(test_filter_resources__init_containers_as_kubernetes),
	    T(test_filter_resources__extended_and_ephemeral),
	    T(test_filter_resources__terminated_and_assumed_pods),
	    T(test_filter_pod_anti_affinity__hostname),
	    T(test_filter_pod_anti_affinity__existing_pods_rules),
	    T(test_filter_pod_affinity__required),
	    T(test_filter_message__kubernetes_wording_and_order),
	    T(test_filter_message__first_failing_filter_per_node),
	    T(test_filter_message__no_nodes),
	    T(test_filter_decide__picks_the_only_fit),
	    T(test_filter_volumes__bound_volume_node_affinity),
	    T(test_filter_decide__a_burst_never_oversubscribes),
	    T(test_filter_decide__percentage_of_nodes),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
