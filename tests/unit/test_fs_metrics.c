/* test_fs_metrics.c: corral-fs's rules for the metrics kinds (PodMetrics,
 * NodeMetrics, MetricValue: fs/kinds_metrics.c) and for the
 * HorizontalPodAutoscaler's v2 behavior (fs/kinds_autoscaling.c): what
 * metrics-server and kubectl write is accepted, and each rule refuses with
 * the field it names; and how the history shows an autoscaled object
 * (fs/object.c): its replica count is the autoscaler's, never declared. */
#include "testlib.h"

#include <errno.h>

#include "kinds.h"
#include "object.h"
#include "util.h"
#include "validate.h"

/* The message of a refused write of text into plural's folder, or NULL. */
static char *run(const char *plural, const char *text)
{
	const struct kind_info *k = kinds_by_plural(plural);
	assert_non_null(k);
	cleanup_ynode struct ynode *obj = y(text);
	cleanup_error struct error *e = NULL;
	if (validate_object(k, obj, NULL, &e) == 0)
		return NULL;
	assert_int_equal(e->status, EINVAL);
	return xstrdup(e->msg);
}

static void accepts(const char *plural, const char *text)
{
	cleanup_free char *msg = run(plural, text);
	if (msg)
		fail_msg("refused: %s", msg);
}

static void refuses(const char *plural, const char *text, const char *needle)
{
	cleanup_free char *msg = run(plural, text);
	if (!msg)
		fail_msg("accepted, expected \"%s\"", needle);
	if (!strstr(msg, needle))
		fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
}

#define PM_HEAD "apiVersion: metrics.k8s.io/v1beta1\nkind: PodMetrics\nmetadata:\n  name: web-1\n"
#define NM_HEAD "apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata:\n  name: n1\n"
#define MV_HEAD                                                                                    \
	"apiVersion: custom.metrics.k8s.io/v1beta2\nkind: MetricValue\nmetadata:\n  name: q\n"
#define HPA_HEAD                                                                                   \
	"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: h\n"        \
	"spec:\n  scaleTargetRef:\n    kind: Deployment\n    name: web\n  maxReplicas: 4\n"

static void test_metrics__kinds_are_live_only(void **state)
{
	(void)state;
	static const char *const plurals[] = {"podmetrics", "nodemetrics", "metrics"};
	for (size_t i = 0; i < ARRAY_SIZE(plurals); i++) {
		const struct kind_info *k = kinds_by_plural(plurals[i]);
		assert_non_null(k);
		assert_false(k->history);
	}
	assert_true(kinds_by_plural("podmetrics")->namespaced);
	assert_false(kinds_by_plural("nodemetrics")->namespaced);
	assert_true(kinds_api_version_ok(kinds_by_kind("PodMetrics"), "metrics.k8s.io/v1beta1"));
	assert_true(
	    kinds_api_version_ok(kinds_by_kind("MetricValue"), "custom.metrics.k8s.io/v1beta2"));
}

static void test_metrics__accepts_what_metrics_server_serves(void **state)
{
	(void)state;
	accepts("podmetrics", PM_HEAD "timestamp: '2026-12-01T10:00:00Z'\nwindow: 15s\n"
				      "containers:\n- name: app\n  usage:\n"
				      "    cpu: 312345678n\n    memory: 9240Ki\n");
	accepts("podmetrics", PM_HEAD "window: 10.5s\ncontainers: []\n");
	accepts("nodemetrics", NM_HEAD "timestamp: '2026-12-01T10:00:00Z'\nwindow: 1m0s\n"
				       "usage:\n  cpu: 1200m\n  memory: 2Gi\n");
	accepts("metrics", MV_HEAD "describedObject:\n  kind: Pod\n  name: web-1\n"
				   "metric:\n  name: qps\nvalue: '120'\n");
	accepts("metrics", MV_HEAD "describedObject:\n  kind: Service\n  name: web\n"
				   "  apiVersion: v1\nmetric:\n  name: qps\nvalue: 1500m\n"
				   "timestamp: '2026-12-01T10:00:00Z'\nwindowSeconds: 60\n");
}

static void test_metrics__refuses_bad_fields(void **state)
{
	(void)state;
	refuses("podmetrics", PM_HEAD "timestamp: yesterday\n", "timestamp: Invalid value");
	refuses("podmetrics", PM_HEAD "window: soon\n", "window: Invalid value");
	refuses("podmetrics", PM_HEAD "containers:\n- usage:\n    cpu: 1m\n",
		"containers[0].name: Required value");
	refuses("podmetrics", PM_HEAD "containers:\n- name: app\n  usage:\n    cpu: lots\n",
		"containers[0].usage.cpu");
	refuses("podmetrics", PM_HEAD "containers:\n- name: app\n  usage:\n    cpu: -1\n",
		"must be greater than or equal to 0");
	refuses("nodemetrics", NM_HEAD "usage:\n  memory: x\n", "usage.memory");
	refuses("metrics", MV_HEAD "metric:\n  name: qps\nvalue: '1'\n",
		"describedObject: Required value");
	refuses("metrics", MV_HEAD "describedObject:\n  kind: Pod\n  name: p\nvalue: '1'\n",
		"metric: Required value");
	refuses("metrics",
		MV_HEAD "describedObject:\n  kind: Pod\n  name: p\n"
			"metric:\n  name: qps\n",
		"value: Required value");
	refuses("metrics",
		MV_HEAD "describedObject:\n  kind: Pod\n  name: p\n"
			"metric:\n  name: qps\nvalue: many\n",
		"value");
}

static void test_metrics__hpa_behavior_rules(void **state)
{
	(void)state;
	accepts("horizontalpodautoscalers",
		HPA_HEAD "  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 60\n"
			 "      selectPolicy: Min\n      policies:\n      - type: Percent\n"
			 "        value: 50\n        periodSeconds: 15\n"
			 "    scaleUp:\n      policies:\n      - type: Pods\n        value: 4\n"
			 "        periodSeconds: 60\n");
	refuses("horizontalpodautoscalers",
		HPA_HEAD "  behavior:\n    scaleUp:\n      selectPolicy: Most\n",
		"spec.behavior.scaleUp.selectPolicy: Unsupported value");
	refuses("horizontalpodautoscalers",
		HPA_HEAD "  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 3601\n",
		"must be less than or equal to 3600");
	refuses("horizontalpodautoscalers",
		HPA_HEAD "  behavior:\n    scaleDown:\n      policies:\n      - type: Pods\n"
			 "        value: 0\n        periodSeconds: 15\n",
		"spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be "
		"greater than zero");
	refuses("horizontalpodautoscalers",
		HPA_HEAD "  behavior:\n    scaleDown:\n      policies:\n      - type: Pods\n"
			 "        value: 1\n        periodSeconds: 1801\n",
		"must be less than or equal to 1800");
	refuses("horizontalpodautoscalers",
		HPA_HEAD "  behavior:\n    scaleDown:\n      policies:\n      - type: Share\n"
			 "        value: 1\n        periodSeconds: 1\n",
		"policies[0].type: Unsupported value");
}

static void test_metrics__hpa_v1_and_v2_both_valid(void **state)
{
	(void)state;
	accepts("horizontalpodautoscalers",
		"apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: h\n"
		"spec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n"
		"    name: web\n  minReplicas: 1\n  maxReplicas: 10\n"
		"  targetCPUUtilizationPercentage: 50\n");
	accepts("horizontalpodautoscalers", HPA_HEAD
		"  metrics:\n  - type: Pods\n    pods:\n      metric:\n        name: qps\n"
		"      target:\n        type: AverageValue\n        averageValue: '10'\n"
		"  - type: Object\n    object:\n      describedObject:\n        kind: Service\n"
		"        name: web\n      metric:\n        name: qps\n"
		"      target:\n        type: Value\n        value: '100'\n"
		"  - type: ContainerResource\n    containerResource:\n      name: cpu\n"
		"      container: app\n      target:\n        type: Utilization\n"
		"        averageUtilization: 60\n");
	refuses("horizontalpodautoscalers",
		"apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: h\n"
		"spec:\n  scaleTargetRef:\n    kind: Deployment\n    name: web\n  maxReplicas: 1\n"
		"  targetCPUUtilizationPercentage: 0\n",
		"targetCPUUtilizationPercentage");
}

/* ---- the history of an autoscaled object (fs/object.c) ------------------ */

#define DEPLOY(ann, replicas)                                                                      \
	"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n" ann "spec:\n" replicas   \
	"  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n"              \
	"      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n"       \
	"        image: busybox\n"
#define AUTOSCALED "  annotations:\n    " KINDS_AUTOSCALED_ANNOTATION ": web\n"

/* Builds text over old (NULL: a create); the stored text is returned in
 * *stored for the next step. */
static void build(const char *text, const char *old, struct object_build *b)
{
	*b = (struct object_build){.kind = kinds_by_plural("deployments"),
				   .ns = "dev",
				   .name = "web",
				   .text = text,
				   .len = strlen(text),
				   .old_yaml = old,
				   .old_len = old ? strlen(old) : 0};
	cleanup_error struct error *err = NULL;
	if (object_build(b, &err) < 0)
		fail_msg("object_build: %s", err->msg);
}

static char *stored(const struct object_build *b)
{
	struct ynode *o = ynode_clone(b->obj);
	ynode_set(ynode_get(o, "metadata"), "resourceVersion", ynode_new_str("5"));
	char *text = yaml_emit(o, NULL);
	ynode_free(o);
	return text;
}

static void test_metrics__autoscaled_replicas_stay_out_of_the_history(void **state)
{
	(void)state;
	struct object_build b;
	/* before any HPA: replicas are declared */
	build(DEPLOY("", "  replicas: 2\n"), NULL, &b);
	assert_non_null(strstr(b.declared, "replicas: 2"));
	cleanup_free char *s1 = stored(&b);
	object_build_clear(&b);
	/* the autoscaler takes it over: one commit, without the count */
	build(DEPLOY(AUTOSCALED, "  replicas: 4\n"), s1, &b);
	assert_non_null(b.declared);
	assert_null(strstr(b.declared, "replicas:"));
	assert_non_null(strstr(b.declared, KINDS_AUTOSCALED_ANNOTATION));
	assert_string_equal(str(b.obj, "spec.replicas"), "4");
	cleanup_free char *s2 = stored(&b);
	object_build_clear(&b);
	/* its next changes make none */
	build(DEPLOY(AUTOSCALED, "  replicas: 7\n"), s2, &b);
	assert_null(b.declared);
	assert_null(b.message);
	assert_true(b.decl_changed); /* still a change, for concurrency */
	cleanup_free char *s3 = stored(&b);
	object_build_clear(&b);
	/* a rollback from the history (no replicas) keeps the current count */
	build(DEPLOY(AUTOSCALED, ""), s3, &b);
	assert_string_equal(str(b.obj, "spec.replicas"), "7");
	assert_null(b.declared);
	object_build_clear(&b);
	/* a person's change of the image commits, still without the count */
	cleanup_free char *edit = xstrdup(DEPLOY(AUTOSCALED, ""));
	char *img = strstr(edit, "busybox");
	memcpy(img, "busyboy", 7);
	build(edit, s3, &b);
	assert_non_null(b.declared);
	assert_null(strstr(b.declared, "replicas:"));
	assert_string_equal(str(b.obj, "spec.replicas"), "7");
	object_build_clear(&b);
	/* without the annotation a missing count is defaulted, as ever */
	build(DEPLOY("", ""), s1, &b);
	assert_string_equal(str(b.obj, "spec.replicas"), "1");
	object_build_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_metrics__kinds_are_live_only),
	    cmocka_unit_test(test_metrics__accepts_what_metrics_server_serves),
	    cmocka_unit_test(test_metrics__refuses_bad_fields),
	    cmocka_unit_test(test_metrics__hpa_behavior_rules),
	    cmocka_unit_test(test_metrics__hpa_v1_and_v2_both_valid),
	    cmocka_unit_test(test_metrics__autoscaled_replicas_stay_out_of_the_history),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
