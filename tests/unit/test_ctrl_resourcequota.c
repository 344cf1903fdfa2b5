/* test_ctrl_resourcequota.c: the status the resourcequota controller
 * writes (ctrl/resourcequota.c): hard as spec.hard, used summed over the
 * objects the quota selects and charges, every hard name listed (0 when
 * nothing charges it), values printed as Kubernetes prints them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kinds.h"
#include "resourcequota.h"
#include "util.h"
#include "ynode.h"

static struct ynode *parse(const char *text)
{
	struct ynode *o = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &o, NULL), 0);
	return o;
}

static void test_resourcequota__status_sums_what_the_quota_selects(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *rq =
	    parse("metadata: {name: q, namespace: dev}\nspec:\n  hard: {pods: '10', requests.cpu: "
		  "'2', requests.memory: 4Gi, configmaps: '5', services.nodeports: '3'}\n"
		  "  scopes: [NotTerminating]\n");
	cleanup_ynode struct ynode *p1 = parse(
	    "metadata: {name: a}\nspec: {containers: [{name: c, image: x, resources: {requests: "
	    "{cpu: 900m, memory: 1Gi}}}]}\n");
	cleanup_ynode struct ynode *p2 = parse(
	    "metadata: {name: b}\nspec: {containers: [{name: c, image: x, resources: {requests: "
	    "{cpu: 900m, memory: 1Gi}}}]}\n");
	/* Terminating: not this quota's. */
	cleanup_ynode struct ynode *p3 = parse(
	    "metadata: {name: t}\nspec: {activeDeadlineSeconds: 5, containers: [{name: c, image: "
	    "x, resources: {requests: {cpu: 1}}}]}\n");
	/* Finished: no longer counted. */
	cleanup_ynode struct ynode *p4 = parse(
	    "metadata: {name: f}\nspec: {containers: [{name: c, image: x, resources: {requests: "
	    "{cpu: 1}}}]}\nstatus: {phase: Failed}\n");
	/* A scoped quota charges pods only. */
	cleanup_ynode struct ynode *cm = parse("metadata: {name: cm}\n");
	const struct ynode *objs[] = {p1, p2, p3, p4, cm};
	const struct kind_info *pod = kinds_by_kind("Pod");
	const struct kind_info *kinds[] = {pod, pod, pod, pod, kinds_by_kind("ConfigMap")};
	cleanup_ynode struct ynode *st = resourcequota_status(rq, objs, kinds, 5);
	cleanup_free char *text = yaml_emit(st, NULL);
	assert_string_equal(text, "hard:\n"
				  "  configmaps: '5'\n"
				  "  pods: '10'\n"
				  "  requests.cpu: '2'\n"
				  "  requests.memory: 4Gi\n"
				  "  services.nodeports: '3'\n"
				  "used:\n"
				  "  configmaps: '0'\n"
				  "  pods: '2'\n"
				  "  requests.cpu: 1800m\n"
				  "  requests.memory: 2Gi\n"
				  "  services.nodeports: '0'\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resourcequota__status_sums_what_the_quota_selects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
