/* test_ctrl_daemonset.c: the DaemonSet controller's decisions on
 * hand-built objects: the daemon pod's tolerations, the node affinity that
 * binds a pod to its node, which nodes should run a pod (nodeSelector,
 * required node affinity and matchFields, taints and tolerations), the
 * bounds of a rolling update and its steps under maxUnavailable and
 * maxSurge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemonset.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

/* ---- tolerations and affinity ------------------------------------------ */

static size_t count_key(const struct ynode *tols, const char *key, const char *effect)
{
	size_t n = 0;
	for (size_t i = 0; tols && i < tols->n; i++) {
		const struct ynode *t = ynode_item(tols, i);
		if (!strcmp(str(t, "key"), key) && !strcmp(str(t, "effect"), effect))
			n++;
	}
	return n;
}

static void test_daemonset__daemon_tolerations(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *spec =
	    y("{containers: [{name: c, image: busybox}],"
	      " tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists,"
	      " effect: NoSchedule, tolerationSeconds: 5}, {key: mine, operator: Exists}]}");
	dsc_add_daemon_tolerations(spec);
	const struct ynode *tols = ynode_get(spec, "tolerations");
	assert_int_equal(tols->n, 7); /* six added (one replaced), the pod's own kept */
	assert_int_equal(count_key(tols, "node.kubernetes.io/not-ready", "NoExecute"), 1);
	assert_int_equal(count_key(tols, "node.kubernetes.io/unreachable", "NoExecute"), 1);
	assert_int_equal(count_key(tols, "node.kubernetes.io/disk-pressure", "NoSchedule"), 1);
	assert_int_equal(count_key(tols, "node.kubernetes.io/memory-pressure", "NoSchedule"), 1);
	assert_int_equal(count_key(tols, "node.kubernetes.io/pid-pressure", "NoSchedule"), 1);
	assert_int_equal(count_key(tols, "node.kubernetes.io/unschedulable", "NoSchedule"), 1);
	assert_int_equal(count_key(tols, "node.kubernetes.io/network-unavailable", "NoSchedule"),
			 0);
	for (size_t i = 0; i < tols->n; i++)
		assert_null(ynode_get(ynode_item(tols, i), "tolerationSeconds"));
	/* again: nothing more */
	dsc_add_daemon_tolerations(spec);
	assert_int_equal(ynode_get(spec, "tolerations")->n, 7);

	cleanup_ynode struct ynode *host = y("{hostNetwork: true, containers: []}");
	dsc_add_daemon_tolerations(host);
	tols = ynode_get(host, "tolerations");
	assert_int_equal(tols->n, 7);
	assert_int_equal(count_key(tols, "node.kubernetes.io/network-unavailable", "NoSchedule"),
			 1);
}

static void test_daemonset__node_affinity_binds_the_pod(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *pod =
	    y("{metadata: {name: p}, spec: {affinity: {nodeAffinity: {"
	      "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
	      "{matchExpressions: [{key: zone, operator: In, values: [a]}]}]},"
	      "preferredDuringSchedulingIgnoredDuringExecution: []}}}}");
	assert_null(dsc_pod_node(pod));
	dsc_set_node_affinity(ynode_get(pod, "spec"), "n7");
	assert_string_equal(dsc_pod_node(pod), "n7");
	const struct ynode *terms = ynode_path(
	    pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		 "nodeSelectorTerms");
	assert_int_equal(terms->n, 1); /* replaced, as Kubernetes does */
	const struct ynode *f = ynode_item(ynode_get(ynode_item(terms, 0), "matchFields"), 0);
	assert_string_equal(str(f, "key"), "metadata.name");
	assert_string_equal(str(f, "operator"), "In");
	assert_non_null(ynode_path(pod, "spec.affinity.nodeAffinity."
					"preferredDuringSchedulingIgnoredDuringExecution"));
	/* a bound pod is its node's */
	ynode_set(ynode_get(pod, "spec"), "nodeName", ynode_new_str("n8"));
	assert_string_equal(dsc_pod_node(pod), "n8");

	cleanup_ynode struct ynode *bare = y("{spec: {containers: []}}");
	dsc_set_node_affinity(ynode_get(bare, "spec"), "n1");
	assert_string_equal(dsc_pod_node(bare), "n1");
}

/* ---- eligibility ------------------------------------------------------- */

#define NODE(labels, spec) "{metadata: {name: n1, labels: " labels "}, spec: " spec "}"

/* run/stay of a daemon pod of spec_text on node_text, tolerations added. */
static int eligible(const char *spec_text, const char *node_text)
{
	cleanup_ynode struct ynode *spec = y(spec_text);
	cleanup_ynode struct ynode *node = y(node_text);
	dsc_add_daemon_tolerations(spec);
	bool run = true, stay = true;
	dsc_node_should_run(spec, node, &run, &stay);
	assert_true(stay || !run);
	return (run ? 1 : 0) | (stay ? 2 : 0);
}

enum { NEITHER = 0, RUN_STAY = 3, STAY_ONLY = 2 };

static void test_daemonset__node_selector_and_affinity(void **state)
{
	(void)state;
	const char *plain = NODE("{role: edge, zone: a, cores: '8'}", "{}");
	assert_int_equal(eligible("{}", plain), RUN_STAY);
	assert_int_equal(eligible("{nodeSelector: {role: edge}}", plain), RUN_STAY);
	assert_int_equal(eligible("{nodeSelector: {role: edge, zone: b}}", plain), NEITHER);
	assert_int_equal(eligible("{nodeSelector: {gpu: 'true'}}", plain), NEITHER);
	assert_int_equal(eligible("{nodeName: n1}", plain), RUN_STAY);
	assert_int_equal(eligible("{nodeName: n2}", plain), NEITHER);
#define REQ(terms)                                                                                 \
	"{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "              \
	"{nodeSelectorTerms: " terms "}}}}"
	assert_int_equal(eligible(REQ("[{matchExpressions: [{key: zone, operator: In, values: "
				      "[a, b]}]}]"),
				  plain),
			 RUN_STAY);
	assert_int_equal(eligible(REQ("[{matchExpressions: [{key: zone, operator: NotIn, values: "
				      "[a]}]}]"),
				  plain),
			 NEITHER);
	/* terms are ORed, requirements ANDed */
	assert_int_equal(
	    eligible(REQ("[{matchExpressions: [{key: zone, operator: In, values: [b]}]},"
			 " {matchExpressions: [{key: role, operator: Exists},"
			 " {key: gpu, operator: DoesNotExist}]}]"),
		     plain),
	    RUN_STAY);
	assert_int_equal(eligible(REQ("[{matchExpressions: [{key: role, operator: Exists},"
				      " {key: zone, operator: DoesNotExist}]}]"),
				  plain),
			 NEITHER);
	assert_int_equal(
	    eligible(REQ("[{matchExpressions: [{key: cores, operator: Gt, values: ['4']}]}]"),
		     plain),
	    RUN_STAY);
	assert_int_equal(
	    eligible(REQ("[{matchExpressions: [{key: cores, operator: Lt, values: ['4']}]}]"),
		     plain),
	    NEITHER);
	/* matchFields on metadata.name */
	assert_int_equal(
	    eligible(REQ("[{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]"),
		     plain),
	    RUN_STAY);
	assert_int_equal(
	    eligible(REQ("[{matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]}]"),
		     plain),
	    NEITHER);
	/* an empty term, or no terms, matches no node */
	assert_int_equal(eligible(REQ("[{}]"), plain), NEITHER);
	assert_int_equal(eligible(REQ("[]"), plain), NEITHER);
#undef REQ
}

static void test_daemonset__taints_and_tolerations(void **state)
{
	(void)state;
	const char *ns = NODE("{}", "{taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}");
	const char *ne = NODE("{}", "{taints: [{key: dedicated, value: gpu, effect: NoExecute}]}");
	const char *pref = NODE("{}", "{taints: [{key: x, effect: PreferNoSchedule}]}");
	/* untolerated NoSchedule: no new pod, a running one stays */
	assert_int_equal(eligible("{}", ns), STAY_ONLY);
	/* untolerated NoExecute: neither */
	assert_int_equal(eligible("{}", ne), NEITHER);
	assert_int_equal(eligible("{}", pref), RUN_STAY);
	/* tolerated: by value, by Exists, by an empty key with Exists */
	assert_int_equal(
	    eligible("{tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]}", ns),
	    RUN_STAY);
	assert_int_equal(
	    eligible("{tolerations: [{key: dedicated, value: cpu, effect: NoSchedule}]}", ns),
	    STAY_ONLY);
	assert_int_equal(eligible("{tolerations: [{key: dedicated, operator: Exists}]}", ne),
			 RUN_STAY);
	assert_int_equal(eligible("{tolerations: [{operator: Exists}]}", ne), RUN_STAY);
	assert_int_equal(
	    eligible("{tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]}", ne),
	    NEITHER);
	/* the daemon pod's own tolerations */
	assert_int_equal(
	    eligible("{}", NODE("{}", "{taints: [{key: node.kubernetes.io/not-ready, effect: "
				      "NoExecute}, {key: node.kubernetes.io/unreachable, effect: "
				      "NoExecute}]}")),
	    RUN_STAY);
	assert_int_equal(
	    eligible("{}",
		     NODE("{}", "{taints: [{key: node.kubernetes.io/memory-pressure, effect: "
				"NoSchedule}, {key: node.kubernetes.io/disk-pressure, effect: "
				"NoSchedule}, {key: node.kubernetes.io/pid-pressure, effect: "
				"NoSchedule}]}")),
	    RUN_STAY);
	assert_int_equal(eligible("{}", NODE("{}", "{unschedulable: true}")), RUN_STAY);
	const char *netun =
	    NODE("{}", "{taints: [{key: node.kubernetes.io/network-unavailable, effect: "
		       "NoSchedule}]}");
	assert_int_equal(eligible("{}", netun), STAY_ONLY);
	assert_int_equal(eligible("{hostNetwork: true}", netun), RUN_STAY);
	/* the not-ready NoSchedule taint is not the daemon pod's */
	assert_int_equal(
	    eligible("{}", NODE("{}", "{taints: [{key: node.kubernetes.io/not-ready, effect: "
				      "NoSchedule}]}")),
	    STAY_ONLY);
}

/* ---- rolling updates ---------------------------------------------------- */

static void bounds(const char *ds_text, int desired, int surge, int unavailable)
{
	cleanup_ynode struct ynode *ds = y(ds_text);
	int s = -1, u = -1;
	dsc_rolling_bounds(ds, desired, &s, &u);
	assert_int_equal(s, surge);
	assert_int_equal(u, unavailable);
}

static void test_daemonset__rolling_bounds(void **state)
{
	(void)state;
	bounds("{spec: {}}", 5, 0, 1);
	bounds(
	    "{spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}}}",
	    5, 0, 2);
	/* percentages round up, both */
	bounds("{spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 10%}}}}", 15, 0, 2);
	bounds("{spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 10%}}}}", 15,
	       2, 0);
	/* both 0: one unavailable, if there are nodes */
	bounds("{spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 0}}}}", 3, 0,
	       1);
	bounds("{spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 0%, maxSurge: 0}}}}", 0, 0,
	       0);
	bounds("{spec: {updateStrategy: {type: OnDelete}}}", 5, 0, 0);
}

/* Slots from a string, one letter pair per node: O old available, o old
 * unavailable, N new available, n new unavailable, - none. */
static size_t slots(const char *spec, struct dsc_slot *s)
{
	size_t n = 0;
	for (const char *p = spec; *p; p++) {
		if (*p == ' ') {
			n++;
			continue;
		}
		if (p == spec || p[-1] == ' ')
			memset(&s[n], 0, sizeof(s[n]));
		if (*p == 'O' || *p == 'o') {
			s[n].has_old = true;
			s[n].old_available = *p == 'O';
		} else if (*p == 'N' || *p == 'n') {
			s[n].has_new = true;
			s[n].new_available = *p == 'N';
		}
	}
	return n + 1;
}

/* The plan as a string: per slot, d (delete old), c (create new), . */
static void plan(const char *spec, int surge, int unavailable, const char *want)
{
	struct dsc_slot s[32];
	size_t n = slots(spec, s);
	size_t writes = dsc_rolling_update(s, n, surge, unavailable);
	char got[64] = "";
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		got[i] = s[i].delete_old ? 'd' : s[i].create_new ? 'c' : '.';
		count += s[i].delete_old + s[i].create_new;
	}
	got[n] = '\0';
	if (strcmp(got, want) != 0)
		print_message("%s (surge %d, unavailable %d): got %s, want %s\n", spec, surge,
			      unavailable, got, want);
	assert_string_equal(got, want);
	assert_int_equal(writes, count);
}

static void test_daemonset__rolling_update_max_unavailable(void **state)
{
	(void)state;
	/* one at a time, in order */
	plan("O O O", 0, 1, "d..");
	plan("O O O", 0, 2, "dd.");
	/* a new pod not yet available uses the budget up */
	plan("n O O", 0, 1, "...");
	plan("n O O", 0, 2, ".d.");
	plan("N O O", 0, 1, ".d.");
	/* an unavailable old pod goes whatever the budget */
	plan("n o O", 0, 1, ".d.");
	plan("O o o", 0, 1, "ddd"); /* as Kubernetes: they do not count */
	/* a node with no pod, or with both, counts as unavailable */
	plan("- O O", 0, 1, "...");
	plan("On O", 0, 2, ".d");
	plan("N N N", 0, 1, "...");
}

static void test_daemonset__rolling_update_max_surge(void **state)
{
	(void)state;
	/* a new pod beside an old one, on at most maxSurge nodes */
	plan("O O O", 1, 0, "c..");
	plan("O O O", 2, 0, "cc.");
	/* surging: wait while the new pod is not available */
	plan("On O O", 1, 0, "...");
	/* once it is, the old pod goes; the next node surges once it is gone */
	plan("ON O O", 1, 0, "d..");
	plan("ON O O", 2, 0, "dc.");
	plan("N O O", 1, 0, ".c.");
	/* beside an unavailable old pod always */
	plan("On o O", 1, 0, ".c.");
	/* nothing old: nothing to do */
	plan("N N -", 1, 0, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_daemonset__daemon_tolerations),
	    cmocka_unit_test(test_daemonset__node_affinity_binds_the_pod),
	    cmocka_unit_test(test_daemonset__node_selector_and_affinity),
	    cmocka_unit_test(test_daemonset__taints_and_tolerations),
	    cmocka_unit_test(test_daemonset__rolling_bounds),
	    cmocka_unit_test(test_daemonset__rolling_update_max_unavailable),
	    cmocka_unit_test(test_daemonset__rolling_update_max_surge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
