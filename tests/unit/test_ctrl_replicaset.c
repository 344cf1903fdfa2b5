/* test_ctrl_replicaset.c: the ReplicaSet controller's decisions on
 * hand-built pods: scale-down order, claiming (keep, adopt, release),
 * pods made from the template, and the status with minReadySeconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "obj.h"
#include "replicaset.h"
#include "selector.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

/* A pod: name, node ("" unscheduled), phase, ready since (NULL: not
 * ready), created, restarts. */
static struct ynode *pod(const char *name, const char *node, const char *phase,
			 const char *ready_since, const char *created, int restarts)
{
	cleanup_free char *text = xasprintf(
	    "{metadata: {name: %s, namespace: dev, creationTimestamp: '%s', labels: {app: web}}, "
	    "spec: {nodeName: '%s'}, status: {phase: %s, conditions: [{type: Ready, status: '%s', "
	    "lastTransitionTime: '%s'}], containerStatuses: [{name: c, restartCount: %d}]}}",
	    name, created, node, phase, ready_since ? "True" : "False",
	    ready_since ? ready_since : created, restarts);
	return y(text);
}

static void rank(struct ynode **pods, size_t n, const char *const *want)
{
	struct rsc_pod *p = xcalloc(n, sizeof(*p));
	for (size_t i = 0; i < n; i++)
		rsc_pod_init(&p[i], obj_name(pods[i]), pods[i]);
	rsc_pods_colocate(p, n);
	rsc_rank_for_deletion(p, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(obj_name(p[i].obj), want[i]);
	free(p);
}

static void test_rsc__scale_down_order(void **state)
{
	(void)state;
	struct ynode *pods[] = {
	    pod("ready-old", "n1", "Running", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", 0),
	    pod("unscheduled", "", "Pending", NULL, "2026-01-01T00:00:00Z", 0),
	    pod("pending", "n2", "Pending", NULL, "2026-01-01T00:00:00Z", 0),
	    pod("running-not-ready", "n3", "Running", NULL, "2026-01-01T00:00:00Z", 0),
	    pod("ready-new", "n4", "Running", "2026-01-01T00:05:00Z", "2026-01-01T00:00:00Z", 0),
	    pod("unknown", "n5", "Unknown", NULL, "2026-01-01T00:00:00Z", 0),
	};
	const char *want[] = {"unscheduled",	   "pending",	"unknown",
			      "running-not-ready", "ready-new", "ready-old"};
	rank(pods, ARRAY_SIZE(pods), want);
	for (size_t i = 0; i < ARRAY_SIZE(pods); i++)
		ynode_free(pods[i]);
}

static void test_rsc__scale_down_newest_and_restarts(void **state)
{
	(void)state;
	const char *t = "2026-01-01T00:00:00Z";
	struct ynode *pods[] = {
	    pod("old", "n1", "Running", t, "2026-01-01T00:00:00Z", 0),
	    pod("new", "n2", "Running", t, "2026-01-01T00:10:00Z", 0),
	    pod("restarts", "n3", "Running", t, "2026-01-01T00:00:00Z", 5),
	};
	const char *want[] = {"restarts", "new", "old"};
	rank(pods, ARRAY_SIZE(pods), want);
	for (size_t i = 0; i < ARRAY_SIZE(pods); i++)
		ynode_free(pods[i]);
}

static void test_rsc__scale_down_crowded_node_and_cost(void **state)
{
	(void)state;
	const char *t = "2026-01-01T00:00:00Z";
	struct ynode *pods[] = {
	    pod("alone", "n1", "Running", t, t, 0),
	    pod("crowd-a", "n2", "Running", t, t, 0),
	    pod("crowd-b", "n2", "Running", t, t, 0),
	};
	const char *want[] = {"crowd-a", "crowd-b", "alone"};
	rank(pods, ARRAY_SIZE(pods), want);
	/* A deletion cost beats the crowd. */
	struct ynode *md = ynode_get(pods[0], "metadata");
	struct ynode *ann = ynode_new_map();
	ynode_set(ann, CTRL_DELETION_COST_ANNOTATION, ynode_new_str("-5"));
	ynode_set(md, "annotations", ann);
	const char *want2[] = {"alone", "crowd-a", "crowd-b"};
	rank(pods, ARRAY_SIZE(pods), want2);
	for (size_t i = 0; i < ARRAY_SIZE(pods); i++)
		ynode_free(pods[i]);
}

static void test_rsc__claims(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = NULL;
	cleanup_ynode struct ynode *s = y("{matchLabels: {app: web}}");
	assert_int_equal(selector_parse_labelselector(s, &sel, NULL), 0);
	cleanup_ynode struct ynode *ours = y("{metadata: {labels: {app: web}, ownerReferences: "
					     "[{apiVersion: apps/v1, kind: ReplicaSet, "
					     "name: web, uid: U1, controller: true}]}}");
	cleanup_ynode struct ynode *ours_relabelled =
	    y("{metadata: {labels: {app: other}, ownerReferences: [{apiVersion: apps/v1, kind: "
	      "ReplicaSet, name: web, uid: U1, controller: true}]}}");
	cleanup_ynode struct ynode *theirs = y("{metadata: {labels: {app: web}, ownerReferences: "
					       "[{apiVersion: apps/v1, kind: ReplicaSet, "
					       "name: x, uid: U2, controller: true}]}}");
	cleanup_ynode struct ynode *not_controller =
	    y("{metadata: {labels: {app: web}, ownerReferences: [{apiVersion: v1, kind: ConfigMap, "
	      "name: x, uid: U3}]}}");
	cleanup_ynode struct ynode *orphan = y("{metadata: {labels: {app: web}}}");
	cleanup_ynode struct ynode *stranger = y("{metadata: {labels: {app: db}}}");
	cleanup_ynode struct ynode *done =
	    y("{metadata: {labels: {app: web}}, status: {phase: Succeeded}}");
	const struct adopt_owner o = {.api_version = "apps/v1", .kind = "ReplicaSet", .uid = "U1"};
	assert_int_equal(rsc_claim_pod(&o, sel, ours), ADOPT_KEEP);
	assert_int_equal(rsc_claim_pod(&o, sel, ours_relabelled), ADOPT_RELEASE);
	assert_int_equal(rsc_claim_pod(&o, sel, theirs), ADOPT_IGNORE);
	assert_int_equal(rsc_claim_pod(&o, sel, not_controller), ADOPT_ADOPT);
	assert_int_equal(rsc_claim_pod(&o, sel, orphan), ADOPT_ADOPT);
	assert_int_equal(rsc_claim_pod(&o, sel, stranger), ADOPT_IGNORE);
	assert_int_equal(rsc_claim_pod(&o, sel, done), ADOPT_IGNORE);
}

static void test_rsc__pod_from_template(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *rs = y(
	    "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-5d8f, namespace: dev, "
	    "uid: U1}, spec: {replicas: 2, template: {metadata: {labels: {app: web}, annotations: "
	    "{a: b}}, spec: {containers: [{name: c, image: nginx}]}}}}");
	cleanup_ynode struct ynode *p = rsc_pod_from_template(rs, "ReplicaSet", "apps/v1");
	const char *name = obj_name(p);
	assert_int_equal(strlen(name), strlen("web-5d8f-") + 5);
	assert_int_equal(strncmp(name, "web-5d8f-", 9), 0);
	for (const char *c = name + 9; *c; c++)
		assert_non_null(strchr(CTRL_NAME_ALPHABET, *c));
	assert_string_equal(ynode_path_str(p, "kind"), "Pod");
	assert_string_equal(ynode_path_str(p, "apiVersion"), "v1");
	assert_string_equal(obj_namespace(p), "dev");
	assert_string_equal(obj_label(p, "app"), "web");
	assert_string_equal(obj_annotation(p, "a"), "b");
	assert_string_equal(ynode_path_str(p, "spec.containers[0].image"), "nginx");
	const struct ynode *ref = obj_controller_ref(p);
	assert_non_null(ref);
	assert_string_equal(ynode_str(ynode_get(ref, "uid")), "U1");
	assert_string_equal(ynode_str(ynode_get(ref, "kind")), "ReplicaSet");
	assert_string_equal(ynode_str(ynode_get(ref, "apiVersion")), "apps/v1");
	assert_string_equal(ynode_str(ynode_get(ref, "name")), "web-5d8f");
	assert_string_equal(ynode_str(ynode_get(ref, "blockOwnerDeletion")), "true");
	/* Two pods never share a name. */
	cleanup_ynode struct ynode *q = rsc_pod_from_template(rs, "ReplicaSet", "apps/v1");
	assert_string_not_equal(obj_name(p), obj_name(q));
}

static void test_rsc__long_names_are_cut_to_58(void **state)
{
	(void)state;
	char longname[80];
	memset(longname, 'a', 70);
	longname[70] = '\0';
	cleanup_free char *text = xasprintf(
	    "{metadata: {name: %s, namespace: dev, uid: U}, spec: {template: {spec: {}}}}",
	    longname);
	cleanup_ynode struct ynode *rs = y(text);
	cleanup_ynode struct ynode *p = rsc_pod_from_template(rs, "ReplicaSet", "apps/v1");
	assert_int_equal(strlen(obj_name(p)), 63);
}

static void test_rsc__status_counts(void **state)
{
	(void)state;
	obj_set_now(1767225600 + 100); /* 2026-01-01T00:01:40Z */
	cleanup_ynode struct ynode *rs =
	    y("{metadata: {name: web, generation: 3}, spec: {minReadySeconds: 30, template: "
	      "{metadata: {labels: {app: web, tier: front}}}}}");
	struct ynode *pods[] = {
	    /* ready 100 s ago: available */
	    y("{metadata: {labels: {app: web, tier: front}}, status: {conditions: [{type: Ready, "
	      "status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z'}]}}"),
	    /* ready 10 s ago: 20 s to go */
	    y("{metadata: {labels: {app: web, tier: front}}, status: {conditions: [{type: Ready, "
	      "status: 'True', lastTransitionTime: '2026-01-01T00:01:30Z'}]}}"),
	    /* not ready, and missing a template label */
	    y("{metadata: {labels: {app: web}}, status: {conditions: [{type: Ready, status: "
	      "'False'}]}}"),
	};
	int64_t wait = 0;
	cleanup_ynode struct ynode *st =
	    rsc_status(rs, (const struct ynode *const *)pods, 3, obj_now(), NULL, &wait);
	assert_int_equal(obj_int(st, "replicas", -1), 3);
	assert_int_equal(obj_int(st, "fullyLabeledReplicas", -1), 2);
	assert_int_equal(obj_int(st, "readyReplicas", -1), 2);
	assert_int_equal(obj_int(st, "availableReplicas", -1), 1);
	assert_int_equal(obj_int(st, "observedGeneration", -1), 3);
	assert_int_equal(wait, 20);
	assert_null(ynode_get(st, "conditions"));
	cleanup_ynode struct ynode *failed =
	    rsc_status(rs, (const struct ynode *const *)pods, 3, obj_now(), "quota", NULL);
	assert_string_equal(ynode_path_str(failed, "conditions[0].type"), "ReplicaFailure");
	assert_string_equal(ynode_path_str(failed, "conditions[0].message"), "quota");
	for (size_t i = 0; i < ARRAY_SIZE(pods); i++)
		ynode_free(pods[i]);
	obj_set_now(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rsc__scale_down_order),
	    cmocka_unit_test(test_rsc__scale_down_newest_and_restarts),
	    cmocka_unit_test(test_rsc__scale_down_crowded_node_and_cost),
	    cmocka_unit_test(test_rsc__claims),
	    cmocka_unit_test(test_rsc__pod_from_template),
	    cmocka_unit_test(test_rsc__long_names_are_cut_to_58),
	    cmocka_unit_test(test_rsc__status_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
