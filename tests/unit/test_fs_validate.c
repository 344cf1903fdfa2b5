/* test_fs_validate.c: the kind table (lib/kinds.c) and per-kind validation and
 * defaulting (fs/validate.c): what is accepted, the exact defaults, and one
 * rejection per rule with the field path the message must name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "kinds_scheduling.h"
#include "util.h"
#include "validate.h"
#include "validate_impl.h"
#include "ynode.h"

/* ---- helpers ---------------------------------------------------------- */

static struct ynode *parse(const char *yaml)
{
	struct ynode *doc = NULL;
	struct error *e = NULL;
	int r = yaml_parse_one(yaml, strlen(yaml), &doc, &e);
	if (r < 0)
		print_message("parse: %s\n", e->msg);
	assert_int_equal(r, 0);
	return doc;
}

/* Validates yaml as a write into plural's folder (over old_yaml when not
 * NULL); returns the error message, or NULL and the defaulted object. */
static char *run(const char *plural, const char *yaml, const char *old_yaml, struct ynode **out)
{
	const struct kind_info *k = kinds_by_plural(plural);
	assert_non_null(k);
	struct ynode *obj = parse(yaml);
	struct ynode *old = old_yaml ? parse(old_yaml) : NULL;
	struct error *e = NULL;
	int r = validate_object(k, obj, old, &e);
	ynode_free(old);
	if (r < 0) {
		assert_int_equal(r, -EINVAL);
		assert_non_null(e);
		assert_int_equal(e->status, EINVAL);
		char *msg = xstrdup(e->msg);
		error_free(e);
		ynode_free(obj);
		return msg;
	}
	assert_null(e);
	if (out)
		*out = obj;
	else
		ynode_free(obj);
	return NULL;
}

static struct ynode *accept_update(const char *plural, const char *yaml, const char *old)
{
	struct ynode *obj = NULL;
	char *msg = run(plural, yaml, old, &obj);
	if (msg)
		print_message("unexpected rejection: %s\n", msg);
	assert_null(msg);
	return obj;
}

static struct ynode *accept(const char *plural, const char *yaml)
{
	return accept_update(plural, yaml, NULL);
}

static void rejects_update(const char *plural, const char *yaml, const char *old,
			   const char *needle)
{
	char *msg = run(plural, yaml, old, NULL);
	if (!msg)
		print_message("accepted, expected \"%s\"\n", needle);
	assert_non_null(msg);
	if (!strstr(msg, needle))
		print_message("message \"%s\" lacks \"%s\"\n", msg, needle);
	assert_non_null(strstr(msg, needle));
	free(msg);
}

static void rejects(const char *plural, const char *yaml, const char *needle)
{
	rejects_update(plural, yaml, NULL, needle);
}

static void assert_str_at(const struct ynode *obj, const char *path, const char *want)
{
	const char *got = ynode_path_str(obj, path);
	if (!got || strcmp(got, want) != 0)
		print_message("%s: got %s, want %s\n", path, got ? got : "(none)", want);
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void assert_int_at(const struct ynode *obj, const char *path, long long want)
{
	long long got = -12345;
	const struct ynode *n = ynode_path(obj, path);
	if (!n || ynode_int(n, &got) != 0)
		print_message("%s: not an integer\n", path);
	assert_int_equal(ynode_int(n, &got), 0);
	assert_int_equal(got, want);
}

static void assert_absent(const struct ynode *obj, const char *path)
{
	if (ynode_path(obj, path))
		print_message("%s: present\n", path);
	assert_null(ynode_path(obj, path));
}

#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: dev\n"

static const char *pod_min = POD_HEAD "spec:\n"
				      "  containers:\n"
				      "  - name: web\n"
				      "    image: nginx\n"
				      "    ports:\n"
				      "    - containerPort: 80\n";

/* ---- kinds ------------------------------------------------------------ */

static void test_kinds__lookup_by_plural_and_kind(void **state)
{
	(void)state;
	const struct kind_info *k = kinds_by_plural("deployments");
	assert_non_null(k);
	assert_string_equal(k->kind, "Deployment");
	assert_string_equal(k->api_versions[0], "apps/v1");
	assert_ptr_equal(kinds_by_kind("Deployment"), k);
	assert_null(kinds_by_plural("deployment"));
	assert_null(kinds_by_kind("deployments"));
	assert_null(kinds_by_plural(NULL));
	assert_string_equal(kinds_by_kind("HorizontalPodAutoscaler")->plural,
			    "horizontalpodautoscalers");
	assert_string_equal(kinds_by_kind("Endpoints")->plural, "endpoints");
	assert_string_equal(kinds_by_kind("NetworkPolicy")->plural, "networkpolicies");
	assert_string_equal(kinds_by_kind("Ingress")->plural, "ingresses");
}

static void test_kinds__scope_and_history(void **state)
{
	(void)state;
	static const char *const cluster[] = {"Namespace", "Node", "PersistentVolume"};
	for (size_t i = 0; i < ARRAY_SIZE(cluster); i++)
		assert_false(kinds_by_kind(cluster[i])->namespaced);
	static const char *const no_history[] = {"Endpoints", "Lease", "Event"};
	for (size_t i = 0; i < ARRAY_SIZE(no_history); i++)
		assert_false(kinds_by_kind(no_history[i])->history);
	assert_true(kinds_by_kind("Node")->history);
	assert_true(kinds_by_kind("Pod")->namespaced);
	assert_true(kinds_by_kind("Deployment")->history);
}

static void test_kinds__api_versions(void **state)
{
	(void)state;
	const struct kind_info *d = kinds_by_kind("Deployment");
	assert_true(kinds_api_version_ok(d, "apps/v1"));
	assert_true(kinds_api_version_ok(d, "extensions/v1beta1"));
	assert_true(kinds_api_version_ok(d, "apps/v1beta1"));
	assert_false(kinds_api_version_ok(d, "v1"));
	assert_false(kinds_api_version_ok(d, NULL));
	assert_true(kinds_api_version_ok(kinds_by_kind("Event"), "v1"));
	assert_true(kinds_api_version_ok(kinds_by_kind("Event"), "events.k8s.io/v1"));
	const struct kind_info *h = kinds_by_kind("HorizontalPodAutoscaler");
	assert_true(kinds_api_version_ok(h, "autoscaling/v1"));
	assert_true(kinds_api_version_ok(h, "autoscaling/v2"));
	assert_true(kinds_api_version_ok(kinds_by_kind("Job"), "batch/v1"));
	assert_true(kinds_api_version_ok(kinds_by_kind("Lease"), "coordination.k8s.io/v1"));
	assert_true(kinds_api_version_ok(kinds_by_kind("PodDisruptionBudget"), "policy/v1"));
	assert_true(kinds_api_version_ok(kinds_by_kind("Ingress"), "networking.k8s.io/v1"));
}

static void test_kinds__table_is_consistent(void **state)
{
	(void)state;
	assert_true(kinds_count() >= 25);
	assert_null(kinds_at(kinds_count()));
	for (size_t i = 0; i < kinds_count(); i++) {
		const struct kind_info *k = kinds_at(i);
		assert_non_null(k->api_versions[0]);
		assert_ptr_equal(kinds_by_plural(k->plural), k);
		assert_ptr_equal(kinds_by_kind(k->kind), k);
		for (const char *p = k->plural; *p; p++)
			assert_true(*p >= 'a' && *p <= 'z');
	}
}

/* The two tables are joined by kind_id (validate_impl.h): every row of
 * lib's table has rules, and each slot holds the rules of its own kind. */
static void test_kinds__every_kind_has_rules(void **state)
{
	(void)state;
	assert_int_equal(kinds_count(), KIND_COUNT);
	for (size_t i = 0; i < kinds_count(); i++) {
		const struct kind_info *k = kinds_at(i);
		assert_int_equal(kinds_id(k), i);
		const struct kind_rules *r = v_rules_for(k);
		if (!r || r->kind != (enum kind_id)i)
			print_message("%s: no rules of its own\n", k->kind);
		assert_non_null(r);
		assert_int_equal(r->kind, i);
		assert_non_null(r->name);
		assert_non_null(r->check);
	}
	assert_ptr_equal(kinds_at(KIND_SECRET), kinds_by_kind("Secret"));
	assert_ptr_equal(kinds_at(KIND_LEASE), kinds_by_kind("Lease"));
}

/* ---- acceptance and defaults ------------------------------------------ */

static void test_validate__defaults_pod(void **state)
{
	(void)state;
	struct ynode *o = accept("pods", pod_min);
	assert_str_at(o, "spec.restartPolicy", "Always");
	assert_str_at(o, "spec.dnsPolicy", "ClusterFirst");
	assert_int_at(o, "spec.terminationGracePeriodSeconds", 30);
	assert_str_at(o, "spec.schedulerName", "default-scheduler");
	struct ynode *sc = ynode_path(o, "spec.securityContext");
	assert_non_null(sc);
	assert_int_equal(sc->type, YNODE_MAP);
	assert_int_equal(sc->n, 0);
	assert_str_at(o, "spec.containers[0].imagePullPolicy", "Always");
	assert_str_at(o, "spec.containers[0].terminationMessagePath", "/dev/termination-log");
	assert_str_at(o, "spec.containers[0].terminationMessagePolicy", "File");
	assert_str_at(o, "spec.containers[0].ports[0].protocol", "TCP");
	assert_int_equal(ynode_path(o, "spec.containers[0].resources")->type, YNODE_MAP);
	assert_str_at(o, "metadata.name", "web");
	ynode_free(o);
}

static void test_validate__defaults_pull_policy_by_tag(void **state)
{
	(void)state;
	static const struct {
		const char *image, *policy;
	} cases[] = {
	    {"nginx", "Always"},
	    {"nginx:latest", "Always"},
	    {"nginx:1.25", "IfNotPresent"},
	    {"registry:5000/app", "Always"},
	    {"registry:5000/app:v2", "IfNotPresent"},
	    {"busybox@sha256:0123456789abcdef", "IfNotPresent"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *y = xasprintf(POD_HEAD "spec:\n  containers:\n"
					     "  - name: a\n    image: \"%s\"\n",
				    cases[i].image);
		struct ynode *o = accept("pods", y);
		assert_str_at(o, "spec.containers[0].imagePullPolicy", cases[i].policy);
		ynode_free(o);
		free(y);
	}
	/* an explicit policy stays */
	struct ynode *o = accept("pods", POD_HEAD "spec:\n  containers:\n"
						  "  - name: a\n    image: nginx\n"
						  "    imagePullPolicy: Never\n");
	assert_str_at(o, "spec.containers[0].imagePullPolicy", "Never");
	ynode_free(o);
}

static void test_validate__defaults_pod_requests_from_limits(void **state)
{
	(void)state;
	struct ynode *o = accept("pods", POD_HEAD "spec:\n  containers:\n"
						  "  - name: a\n    image: nginx\n"
						  "    resources:\n      limits:\n"
						  "        cpu: 500m\n        memory: 128Mi\n"
						  "      requests:\n        cpu: 100m\n");
	assert_str_at(o, "spec.containers[0].resources.requests.cpu", "100m");
	assert_str_at(o, "spec.containers[0].resources.requests.memory", "128Mi");
	ynode_free(o);
}

static void test_validate__defaults_probes_and_volumes(void **state)
{
	(void)state;
	struct ynode *o = accept("pods", POD_HEAD
				 "spec:\n  containers:\n"
				 "  - name: a\n    image: nginx\n"
				 "    livenessProbe:\n      httpGet:\n        port: 80\n"
				 "    volumeMounts:\n    - name: cfg\n      mountPath: /etc/cfg\n"
				 "    - name: tmp\n      mountPath: /tmp\n"
				 "  volumes:\n  - name: cfg\n    configMap:\n      name: cfg\n"
				 "      defaultMode: 0644\n"
				 "  - name: tmp\n    emptyDir:\n");
	assert_int_at(o, "spec.containers[0].livenessProbe.timeoutSeconds", 1);
	assert_int_at(o, "spec.containers[0].livenessProbe.periodSeconds", 10);
	assert_int_at(o, "spec.containers[0].livenessProbe.successThreshold", 1);
	assert_int_at(o, "spec.containers[0].livenessProbe.failureThreshold", 3);
	assert_str_at(o, "spec.containers[0].livenessProbe.httpGet.path", "/");
	assert_str_at(o, "spec.containers[0].livenessProbe.httpGet.scheme", "HTTP");
	assert_int_at(o, "spec.volumes[0].configMap.defaultMode", 420);
	assert_int_equal(ynode_path(o, "spec.volumes[1].emptyDir")->type, YNODE_MAP);
	ynode_free(o);
}

static void test_validate__keeps_unknown_fields(void **state)
{
	(void)state;
	struct ynode *o = accept("pods", POD_HEAD "spec:\n  containers:\n"
						  "  - name: a\n    image: nginx\n"
						  "    futureField: 7\n"
						  "  futureSpec: {x: y}\n"
						  "extra: kept\n");
	assert_str_at(o, "spec.containers[0].futureField", "7");
	assert_str_at(o, "spec.futureSpec.x", "y");
	assert_str_at(o, "extra", "kept");
	ynode_free(o);
}

static const char *deploy_min =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
    "spec:\n"
    "  selector:\n    matchLabels:\n      app: web\n"
    "  template:\n"
    "    metadata:\n      labels:\n        app: web\n"
    "    spec:\n      containers:\n      - name: web\n        image: nginx:1.25\n"
    "        ports:\n        - containerPort: 80\n";

static void test_validate__defaults_deployment(void **state)
{
	(void)state;
	struct ynode *o = accept("deployments", deploy_min);
	assert_int_at(o, "spec.replicas", 1);
	assert_str_at(o, "spec.strategy.type", "RollingUpdate");
	assert_str_at(o, "spec.strategy.rollingUpdate.maxSurge", "25%");
	assert_str_at(o, "spec.strategy.rollingUpdate.maxUnavailable", "25%");
	assert_int_at(o, "spec.revisionHistoryLimit", 10);
	assert_int_at(o, "spec.progressDeadlineSeconds", 600);
	assert_str_at(o, "spec.template.spec.restartPolicy", "Always");
	assert_str_at(o, "spec.template.spec.dnsPolicy", "ClusterFirst");
	assert_int_at(o, "spec.template.spec.terminationGracePeriodSeconds", 30);
	assert_str_at(o, "spec.template.spec.schedulerName", "default-scheduler");
	assert_str_at(o, "spec.template.spec.containers[0].imagePullPolicy", "IfNotPresent");
	assert_str_at(o, "spec.template.spec.containers[0].ports[0].protocol", "TCP");
	ynode_free(o);

	o = accept("deployments",
		   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
		   "spec:\n  strategy:\n    type: Recreate\n"
		   "  selector:\n    matchLabels:\n      app: web\n"
		   "  template:\n    metadata:\n      labels:\n        app: web\n"
		   "    spec:\n      containers:\n      - name: web\n        image: nginx\n");
	assert_str_at(o, "spec.strategy.type", "Recreate");
	assert_absent(o, "spec.strategy.rollingUpdate");
	ynode_free(o);
}

static void test_validate__old_deployment_selector_from_template(void **state)
{
	(void)state;
	struct ynode *o =
	    accept("deployments",
		   "apiVersion: extensions/v1beta1\nkind: Deployment\n"
		   "metadata:\n  name: web\n"
		   "spec:\n  template:\n    metadata:\n      labels:\n        app: web\n"
		   "    spec:\n      containers:\n      - name: web\n        image: nginx\n");
	assert_str_at(o, "spec.selector.matchLabels.app", "web");
	assert_str_at(o, "metadata.labels.app", "web");
	ynode_free(o);
}

static void test_validate__defaults_replication_controller(void **state)
{
	(void)state;
	struct ynode *o =
	    accept("replicationcontrollers",
		   "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\n"
		   "spec:\n  template:\n    metadata:\n      labels:\n        app: x\n"
		   "    spec:\n      containers:\n      - name: c\n        image: busybox\n");
	assert_str_at(o, "spec.selector.app", "x");
	assert_str_at(o, "metadata.labels.app", "x");
	assert_int_at(o, "spec.replicas", 1);
	assert_str_at(o, "spec.template.spec.restartPolicy", "Always");
	ynode_free(o);
}

static void test_validate__defaults_replica_set_daemon_set_stateful_set(void **state)
{
	(void)state;
	static const char *tmpl =
	    "  selector:\n    matchLabels:\n      app: x\n"
	    "  template:\n    metadata:\n      labels:\n        app: x\n"
	    "    spec:\n      containers:\n      - name: c\n        image: busybox\n";
	char *y = xasprintf("apiVersion: apps/v1\nkind: ReplicaSet\n"
			    "metadata:\n  name: rs\nspec:\n%s",
			    tmpl);
	struct ynode *o = accept("replicasets", y);
	assert_int_at(o, "spec.replicas", 1);
	assert_str_at(o, "spec.template.spec.containers[0].imagePullPolicy", "Always");
	ynode_free(o);
	free(y);

	y = xasprintf("apiVersion: apps/v1\nkind: DaemonSet\n"
		      "metadata:\n  name: ds\nspec:\n%s",
		      tmpl);
	o = accept("daemonsets", y);
	assert_str_at(o, "spec.updateStrategy.type", "RollingUpdate");
	assert_int_at(o, "spec.updateStrategy.rollingUpdate.maxUnavailable", 1);
	assert_int_at(o, "spec.updateStrategy.rollingUpdate.maxSurge", 0);
	assert_int_at(o, "spec.revisionHistoryLimit", 10);
	assert_str_at(o, "spec.template.spec.dnsPolicy", "ClusterFirst");
	ynode_free(o);
	free(y);

	y = xasprintf("apiVersion: apps/v1\nkind: StatefulSet\n"
		      "metadata:\n  name: db\nspec:\n  serviceName: db\n%s"
		      "  volumeClaimTemplates:\n  - metadata:\n      name: data\n"
		      "    spec:\n      accessModes: [ReadWriteOnce]\n"
		      "      resources:\n        requests:\n          storage: 1Gi\n",
		      tmpl);
	o = accept("statefulsets", y);
	assert_int_at(o, "spec.replicas", 1);
	assert_str_at(o, "spec.podManagementPolicy", "OrderedReady");
	assert_str_at(o, "spec.updateStrategy.type", "RollingUpdate");
	assert_int_at(o, "spec.updateStrategy.rollingUpdate.partition", 0);
	assert_str_at(o, "spec.volumeClaimTemplates[0].spec.volumeMode", "Filesystem");
	assert_str_at(o, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", "Retain");
	ynode_free(o);
	free(y);
}

static const char *svc_min = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
			     "spec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n";

static void test_validate__defaults_service(void **state)
{
	(void)state;
	struct ynode *o = accept("services", svc_min);
	assert_str_at(o, "spec.type", "ClusterIP");
	assert_str_at(o, "spec.sessionAffinity", "None");
	assert_str_at(o, "spec.ports[0].protocol", "TCP");
	assert_int_at(o, "spec.ports[0].targetPort", 80);
	assert_absent(o, "spec.clusterIP");
	ynode_free(o);

	/* targetPort 0 means unset */
	o = accept("services", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
			       "spec:\n  ports:\n  - port: 8080\n    targetPort: 0\n");
	assert_int_at(o, "spec.ports[0].targetPort", 8080);
	ynode_free(o);

	o = accept("services",
		   "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
		   "spec:\n  type: NodePort\n  ports:\n"
		   "  - name: http\n    port: 80\n    targetPort: http\n    nodePort: 30080\n"
		   "  - name: dns\n    port: 53\n    protocol: UDP\n");
	assert_str_at(o, "spec.ports[0].targetPort", "http");
	assert_int_at(o, "spec.ports[1].targetPort", 53);
	assert_str_at(o, "spec.ports[1].protocol", "UDP");
	assert_str_at(o, "spec.externalTrafficPolicy", "Cluster");
	ynode_free(o);
}

static void test_validate__accepts_headless_service_without_ports(void **state)
{
	(void)state;
	struct ynode *o =
	    accept("services", "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\n"
			       "spec:\n  clusterIP: None\n  selector:\n    app: db\n");
	assert_str_at(o, "spec.clusterIP", "None");
	ynode_free(o);
	o = accept("services", "apiVersion: v1\nkind: Service\nmetadata:\n  name: ext\n"
			       "spec:\n  type: ExternalName\n  externalName: example.com\n");
	ynode_free(o);
}

static const char *job_min = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\n"
			     "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
			     "      containers:\n      - name: pi\n        image: perl:5.34\n"
			     "        command: [perl, -e, 'print 1']\n";

static void test_validate__defaults_job_and_cron_job(void **state)
{
	(void)state;
	struct ynode *o = accept("jobs", job_min);
	assert_int_at(o, "spec.completions", 1);
	assert_int_at(o, "spec.parallelism", 1);
	assert_int_at(o, "spec.backoffLimit", 6);
	assert_str_at(o, "spec.completionMode", "NonIndexed");
	assert_str_at(o, "spec.template.spec.restartPolicy", "Never");
	assert_str_at(o, "spec.template.spec.dnsPolicy", "ClusterFirst");
	ynode_free(o);

	/* parallelism alone leaves completions unset */
	o = accept("jobs", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: w\n"
			   "spec:\n  parallelism: 3\n  template:\n    spec:\n"
			   "      restartPolicy: OnFailure\n"
			   "      containers:\n      - name: w\n        image: busybox\n");
	assert_absent(o, "spec.completions");
	assert_int_at(o, "spec.parallelism", 3);
	ynode_free(o);

	o = accept("cronjobs",
		   "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: tick\n"
		   "spec:\n  schedule: '*/5 * * * 1-5'\n  jobTemplate:\n    spec:\n"
		   "      template:\n        spec:\n          restartPolicy: OnFailure\n"
		   "          containers:\n          - name: t\n            image: busybox\n");
	assert_str_at(o, "spec.concurrencyPolicy", "Allow");
	assert_int_at(o, "spec.successfulJobsHistoryLimit", 3);
	assert_int_at(o, "spec.failedJobsHistoryLimit", 1);
	assert_str_at(o, "spec.suspend", "false");
	assert_str_at(o, "spec.jobTemplate.spec.template.spec.dnsPolicy", "ClusterFirst");
	assert_absent(o, "spec.jobTemplate.spec.backoffLimit");
	ynode_free(o);
}

static void test_validate__defaults_secret_and_claims(void **state)
{
	(void)state;
	struct ynode *o = accept("secrets", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
					    "data:\n  a: aGVsbG8=\nstringData:\n  b: hi\n");
	assert_str_at(o, "type", "Opaque");
	assert_str_at(o, "data.a", "aGVsbG8=");
	assert_str_at(o, "data.b", "aGk=");
	assert_absent(o, "stringData");
	ynode_free(o);

	o = accept("persistentvolumeclaims",
		   "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n"
		   "spec:\n  accessModes: [ReadWriteOnce]\n"
		   "  resources:\n    requests:\n      storage: 1Gi\n");
	assert_str_at(o, "spec.volumeMode", "Filesystem");
	ynode_free(o);

	o = accept("persistentvolumes",
		   "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv1\n"
		   "  namespace: stray\n"
		   "spec:\n  capacity:\n    storage: 5Gi\n  accessModes: [ReadWriteOnce]\n"
		   "  hostPath:\n    path: /srv/pv1\n");
	assert_str_at(o, "spec.persistentVolumeReclaimPolicy", "Retain");
	assert_str_at(o, "spec.volumeMode", "Filesystem");
	assert_absent(o, "metadata.namespace");
	ynode_free(o);
}

static void test_validate__defaults_namespace_hpa_netpol(void **state)
{
	(void)state;
	struct ynode *o = accept("namespaces", "apiVersion: v1\nkind: Namespace\n"
					       "metadata:\n  name: dev\n");
	const struct ynode *labels = ynode_path(o, "metadata.labels");
	assert_non_null(labels);
	assert_string_equal(ynode_str(ynode_get(labels, "kubernetes.io/metadata.name")), "dev");
	ynode_free(o);

	o = accept("horizontalpodautoscalers",
		   "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
		   "metadata:\n  name: web\nspec:\n  scaleTargetRef:\n"
		   "    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n"
		   "  maxReplicas: 5\n");
	assert_int_at(o, "spec.minReplicas", 1);
	assert_str_at(o, "spec.metrics[0].type", "Resource");
	assert_str_at(o, "spec.metrics[0].resource.name", "cpu");
	assert_int_at(o, "spec.metrics[0].resource.target.averageUtilization", 80);
	ynode_free(o);

	o = accept("networkpolicies", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
				      "metadata:\n  name: np\nspec:\n  podSelector: {}\n"
				      "  egress:\n  - ports:\n    - port: 53\n");
	assert_str_at(o, "spec.policyTypes[0]", "Ingress");
	assert_str_at(o, "spec.policyTypes[1]", "Egress");
	assert_str_at(o, "spec.egress[0].ports[0].protocol", "TCP");
	ynode_free(o);
}

/* One minimal valid document of each remaining kind. */
static void test_validate__accepts_every_kind(void **state)
{
	(void)state;
	static const struct {
		const char *plural, *yaml;
	} docs[] = {
	    {"nodes", "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n"
		      "spec:\n  podCIDR: 10.244.1.0/24\n  taints:\n"
		      "  - key: dedicated\n    value: gpu\n    effect: NoSchedule\n"},
	    {"endpoints", "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: web\n"
			  "subsets:\n- addresses:\n  - ip: 10.244.1.5\n"
			  "  ports:\n  - port: 80\n"},
	    {"configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
			   "data:\n  app.conf: |\n    x = 1\n  empty:\n"},
	    {"resourcequotas", "apiVersion: v1\nkind: ResourceQuota\n"
			       "metadata:\n  name: q\nspec:\n  hard:\n"
			       "    pods: '10'\n    requests.cpu: '4'\n"
			       "    count/deployments.apps: 5\n"},
	    {"serviceaccounts", "apiVersion: v1\nkind: ServiceAccount\n"
				"metadata:\n  name: builder\n"},
	    {"limitranges", "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: l\n"
			    "spec:\n  limits:\n  - type: Container\n"
			    "    max:\n      cpu: '2'\n    min:\n      cpu: 100m\n"},
	    {"poddisruptionbudgets", "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
				     "metadata:\n  name: p\nspec:\n  minAvailable: 50%\n"
				     "  selector:\n    matchLabels:\n      app: web\n"},
	    {"ingresses", "apiVersion: networking.k8s.io/v1\nkind: Ingress\n"
			  "metadata:\n  name: i\nspec:\n  rules:\n"
			  "  - host: '*.example.com'\n    http:\n      paths:\n"
			  "      - path: /\n        pathType: Prefix\n"
			  "        backend:\n          service:\n            name: web\n"
			  "            port:\n              number: 80\n"},
	    {"ingresses", "apiVersion: extensions/v1beta1\nkind: Ingress\n"
			  "metadata:\n  name: old\nspec:\n  backend:\n"
			  "    serviceName: web\n    servicePort: 80\n"},
	    {"leases", "apiVersion: coordination.k8s.io/v1\nkind: Lease\n"
		       "metadata:\n  name: node-1\nspec:\n  holderIdentity: node-1\n"
		       "  leaseDurationSeconds: 40\n"},
	    {"events", "apiVersion: v1\nkind: Event\nmetadata:\n  name: web.1\n"
		       "  namespace: dev\ninvolvedObject:\n  kind: Pod\n  name: web\n"
		       "  namespace: dev\nreason: Scheduled\ntype: Normal\n"},
	    {"events", "apiVersion: events.k8s.io/v1\nkind: Event\n"
		       "metadata:\n  name: web.2\neventTime: '2024-01-01T00:00:00.000000Z'\n"
		       "reportingController: corral-sched\nreportingInstance: sched-1\n"
		       "action: Binding\nreason: Scheduled\ntype: Normal\n"},
	    {"horizontalpodautoscalers",
	     "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\n"
	     "metadata:\n  name: h\nspec:\n  scaleTargetRef:\n    kind: Deployment\n"
	     "    name: web\n  minReplicas: 2\n  maxReplicas: 4\n"
	     "  targetCPUUtilizationPercentage: 50\n"},
	    {"secrets", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\n"
			"type: kubernetes.io/tls\ndata:\n  tls.crt: YQ==\n  tls.key: Yg==\n"},
	    {"pods", POD_HEAD "spec:\n  initContainers:\n  - name: init\n"
			      "    image: busybox\n  containers:\n  - name: app\n"
			      "    image: busybox\n    env:\n    - name: POD_IP\n"
			      "      valueFrom:\n        fieldRef:\n"
			      "          fieldPath: status.podIP\n    - name: MODE\n"
			      "      value: fast\n  tolerations:\n  - operator: Exists\n"
			      "  nodeSelector:\n    disk: ssd\n"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(docs); i++)
		ynode_free(accept(docs[i].plural, docs[i].yaml));
}

/* ---- rejections: metadata and types ----------------------------------- */

static void test_validate__rejects_wrong_kind_and_version(void **state)
{
	(void)state;
	rejects("deployments", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: x\n",
		"kind: Invalid value: \"ReplicaSet\"");
	rejects("deployments", "apiVersion: v1\nkind: Deployment\nmetadata:\n  name: x\n",
		"apiVersion: Unsupported value: \"v1\"");
}

static void test_validate__rejects_invalid_names(void **state)
{
	(void)state;
	rejects("pods",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: Web_1\n"
		"spec:\n  containers:\n  - name: a\n    image: b\n",
		"metadata.name: Invalid value: \"Web_1\"");
	rejects("services",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: 1web\n"
		"spec:\n  ports:\n  - port: 80\n",
		"metadata.name: Invalid value: \"1web\": a DNS-1035 label");
	rejects("namespaces", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a.b\n",
		"metadata.name: Invalid value: \"a.b\"");
	rejects("pods", "apiVersion: v1\nkind: Pod\nmetadata: {}\n",
		"metadata.name: Required value");
}

static void test_validate__rejects_bad_labels_and_annotations(void **state)
{
	(void)state;
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"  labels:\n    'bad key!': x\n",
		"metadata.labels: Invalid value: \"bad key!\"");
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"  labels:\n    app: 'has space'\n",
		"metadata.labels: Invalid value: \"has space\"");
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"  labels:\n    version: 1\n",
		"metadata.labels[version]: Invalid value: 1: must be a string");
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"  annotations:\n    'a/b/c': x\n",
		"metadata.annotations: Invalid value: \"a/b/c\"");

	size_t big = 256 * 1024;
	char *val = xmalloc(big + 1);
	memset(val, 'x', big);
	val[big] = '\0';
	char *y = xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
			    "  annotations:\n    note: %s\n",
			    val);
	rejects("configmaps", y, "metadata.annotations: Too long: must have at most 262144 bytes");
	free(y);
	free(val);
}

static void test_validate__rejects_wrong_types(void **state)
{
	(void)state;
	rejects("pods", POD_HEAD "spec: nginx\n", "spec: Invalid value: \"nginx\": must be a map");
	rejects("pods", POD_HEAD "spec:\n  containers:\n    name: a\n",
		"spec.containers: Invalid value: {\"name\": \"a\"}: must be a list");
	rejects(
	    "pods",
	    POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
		     "    ports:\n    - containerPort: \"80\"\n",
	    "spec.containers[0].ports[0].containerPort: Invalid value: \"80\": must be an integer");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    env:\n    - name: DEBUG\n      value: true\n",
		"spec.containers[0].env[0].value: Invalid value: true: must be a string");
	rejects("pods", "- a\n- b\n", "must be a map");
}

/* ---- rejections: pods and containers ---------------------------------- */

static void test_validate__rejects_missing_containers(void **state)
{
	(void)state;
	rejects("pods", POD_HEAD "spec: {}\n", "spec.containers: Required value");
	rejects("pods", POD_HEAD "spec:\n  containers: []\n", "spec.containers: Required value");
	rejects("pods", POD_HEAD, "spec: Required value");
}

static void test_validate__rejects_missing_container_name(void **state)
{
	(void)state;
	rejects("pods", POD_HEAD "spec:\n  containers:\n  - image: nginx\n",
		"spec.containers[0].name: Required value");
	rejects("pods", POD_HEAD "spec:\n  containers:\n  - name: Web\n    image: nginx\n",
		"spec.containers[0].name: Invalid value: \"Web\"");
}

static void test_validate__rejects_duplicate_container_name(void **state)
{
	(void)state;
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: web\n    image: a\n"
			 "  - name: web\n    image: b\n",
		"spec.containers[1].name: Duplicate value: \"web\"");
	rejects("pods",
		POD_HEAD "spec:\n  initContainers:\n  - name: web\n    image: a\n"
			 "  containers:\n  - name: web\n    image: b\n",
		"spec.containers[0].name: Duplicate value: \"web\"");
}

static void test_validate__rejects_missing_image(void **state)
{
	(void)state;
	rejects("pods", POD_HEAD "spec:\n  containers:\n  - name: web\n",
		"spec.containers[0].image: Required value");
	rejects("pods", POD_HEAD "spec:\n  containers:\n  - name: web\n    image: ''\n",
		"spec.containers[0].image: Required value");
}

static void test_validate__rejects_bad_container_ports(void **state)
{
	(void)state;
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    ports:\n    - containerPort: 70000\n",
		"spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between "
		"1 and 65535, inclusive");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    ports:\n    - containerPort: 80\n      protocol: HTTP\n",
		"spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported "
		"values: \"TCP\", \"UDP\", \"SCTP\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    ports:\n    - containerPort: 80\n      name: http\n"
			 "    - containerPort: 81\n      name: http\n",
		"spec.containers[0].ports[1].name: Duplicate value: \"http\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    ports:\n    - containerPort: 80\n      name: web_port\n",
		"spec.containers[0].ports[0].name: Invalid value: \"web_port\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    ports:\n    - name: http\n",
		"spec.containers[0].ports[0].containerPort: Required value");
}

static void test_validate__security_context(void **state)
{
	(void)state;
#define SC_POD(sc)                                                                                 \
	POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n    securityContext: " sc "\n"
	struct ynode *o =
	    accept("pods", SC_POD("{capabilities: {add: [NET_RAW, cap_kill, ALL], drop: "
				  "[all, CAP_CHOWN]}, runAsUser: 1000, runAsNonRoot: "
				  "true, readOnlyRootFilesystem: true, "
				  "allowPrivilegeEscalation: false, privileged: false}"));
	ynode_free(o);
	o = accept("pods", POD_HEAD "spec:\n  securityContext: {runAsUser: 0, runAsGroup: 5, "
				    "fsGroup: 7, supplementalGroups: [1, 2], runAsNonRoot: false}\n"
				    "  containers:\n  - name: a\n    image: b\n");
	ynode_free(o);
	rejects("pods", SC_POD("{privileged: true}"),
		"spec.containers[0].securityContext.privileged: Forbidden: privileged containers "
		"are not supported by corral");
	rejects("pods", SC_POD("{capabilities: {add: [NET_FOO]}}"),
		"spec.containers[0].securityContext.capabilities.add[0]: Invalid value: "
		"\"NET_FOO\": must be a Linux capability");
	rejects("pods", SC_POD("{capabilities: {drop: [NET_RAW, CAP_]}}"),
		"spec.containers[0].securityContext.capabilities.drop[1]: Invalid value: \"CAP_\"");
	rejects("pods", SC_POD("{capabilities: {add: NET_RAW}}"),
		"spec.containers[0].securityContext.capabilities.add");
	rejects("pods", SC_POD("{runAsUser: -1}"),
		"spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between "
		"0 and 2147483647, inclusive");
	rejects("pods", SC_POD("{runAsGroup: 2147483648}"),
		"spec.containers[0].securityContext.runAsGroup: Invalid value: 2147483648");
	rejects("pods", SC_POD("{readOnlyRootFilesystem: maybe}"),
		"spec.containers[0].securityContext.readOnlyRootFilesystem");
	rejects("pods",
		SC_POD("{allowPrivilegeEscalation: false, capabilities: {add: [SYS_ADMIN]}}"),
		"spec.containers[0].securityContext: Invalid value: ");
	rejects("pods",
		SC_POD("{allowPrivilegeEscalation: false, capabilities: {add: [SYS_ADMIN]}}"),
		"cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
		"CAP_SYS_ADMIN");
	rejects("pods",
		POD_HEAD "spec:\n  securityContext: {supplementalGroups: [1, -2]}\n"
			 "  containers:\n  - name: a\n    image: b\n",
		"spec.securityContext.supplementalGroups[1]: Invalid value: -2");
	rejects("pods",
		POD_HEAD "spec:\n  securityContext: {runAsUser: x}\n"
			 "  containers:\n  - name: a\n    image: b\n",
		"spec.securityContext.runAsUser");
	/* a workload's template is a pod spec too */
	rejects("deployments",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: dev}\n"
		"spec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: "
		"b}}\n"
		"    spec:\n      containers:\n      - name: a\n        image: b\n"
		"        securityContext: {privileged: true}\n",
		"spec.template.spec.containers[0].securityContext.privileged: Forbidden");
#undef SC_POD
}

static void test_validate__rejects_bad_env(void **state)
{
	(void)state;
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    env:\n    - name: 1BAD\n      value: x\n",
		"spec.containers[0].env[0].name: Invalid value: \"1BAD\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    env:\n    - value: x\n",
		"spec.containers[0].env[0].name: Required value");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    env:\n    - name: A\n      valueFrom:\n"
			 "        secretKeyRef:\n          name: s\n",
		"spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value");
}

static void test_validate__rejects_bad_resources(void **state)
{
	(void)state;
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    resources:\n      limits:\n        memory: 12 parsecs\n",
		"spec.containers[0].resources.limits[memory]: Invalid value: \"12 parsecs\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    resources:\n      limits:\n        cpu: 500m\n"
			 "      requests:\n        cpu: '1'\n",
		"spec.containers[0].resources.requests[cpu]: Invalid value: \"1\": must be less "
		"than or equal to cpu limit of 500m");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    resources:\n      requests:\n        cpu: -1\n",
		"spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be "
		"greater than or equal to 0");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    resources:\n      requests:\n        gpu: 1\n",
		"spec.containers[0].resources.requests[gpu]: Invalid value: \"gpu\": must be a "
		"standard resource");
}

static void test_validate__rejects_bad_volumes(void **state)
{
	(void)state;
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  volumes:\n  - name: data\n    emptyDir: {}\n"
			 "  - name: data\n    emptyDir: {}\n",
		"spec.volumes[1].name: Duplicate value: \"data\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  volumes:\n  - name: data\n",
		"spec.volumes[0]: Required value: must specify a volume type");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  volumes:\n  - name: data\n    emptyDir: {}\n"
			 "    hostPath:\n      path: /x\n",
		"spec.volumes[0].emptyDir: Forbidden: may not specify more than 1 volume type");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    volumeMounts:\n    - name: data\n      mountPath: /data\n",
		"spec.containers[0].volumeMounts[0].name: Not found: \"data\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  volumes:\n  - name: s\n    secret: {}\n",
		"spec.volumes[0].secret.secretName: Required value");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  volumes:\n  - name: s\n    configMap:\n      name: c\n"
			 "      defaultMode: 0999\n",
		"spec.volumes[0].configMap.defaultMode: Invalid value: 999");
}

static void test_validate__rejects_bad_pod_fields(void **state)
{
	(void)state;
	rejects("pods",
		POD_HEAD "spec:\n  restartPolicy: Sometimes\n  containers:\n"
			 "  - name: a\n    image: b\n",
		"spec.restartPolicy: Unsupported value: \"Sometimes\"");
	rejects("pods",
		POD_HEAD "spec:\n  dnsPolicy: Cluster\n  containers:\n"
			 "  - name: a\n    image: b\n",
		"spec.dnsPolicy: Unsupported value: \"Cluster\"");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  tolerations:\n  - operator: Equal\n    value: x\n",
		"spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists "
		"when `key` is empty");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "    livenessProbe:\n      periodSeconds: 5\n",
		"spec.containers[0].livenessProbe: Required value: must specify a handler type");
	rejects("pods",
		POD_HEAD "spec:\n  containers:\n  - name: a\n    image: b\n"
			 "  nodeSelector:\n    disk: 'solid state'\n",
		"spec.nodeSelector: Invalid value: \"solid state\"");
}

static void test_validate__lists_several_errors(void **state)
{
	(void)state;
	char *msg =
	    run("pods", POD_HEAD "spec:\n  containers:\n  - name: a\n  - image: b\n", NULL, NULL);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "Pod \"web\" is invalid: ["));
	assert_non_null(strstr(msg, "spec.containers[0].image: Required value"));
	assert_non_null(strstr(msg, "spec.containers[1].name: Required value"));
	free(msg);
}

static void test_validate__leaves_document_as_written_on_rejection(void **state)
{
	(void)state;
	const char *y = POD_HEAD "spec:\n  containers:\n  - name: a\n"
				 "    image: nginx\n  restartPolicy: Bad\n";
	struct ynode *obj = parse(y);
	struct ynode *copy = ynode_clone(obj);
	struct error *e = NULL;
	assert_int_equal(validate_object(kinds_by_plural("pods"), obj, NULL, &e), -EINVAL);
	error_free(e);
	assert_true(ynode_equal(obj, copy));
	ynode_free(obj);
	ynode_free(copy);
}

/* ---- rejections: workload controllers --------------------------------- */

static void test_validate__rejects_selector_mismatch(void **state)
{
	(void)state;
	rejects("replicasets",
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: rs\n"
		"spec:\n  selector:\n    matchLabels:\n      app: web\n"
		"  template:\n    metadata:\n      labels:\n        app: api\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"spec.template.metadata.labels: Invalid value: {\"app\": \"api\"}: `selector` does "
		"not match template `labels`");
	rejects("deployments",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
		"spec:\n  selector:\n    matchExpressions:\n"
		"    - key: tier\n      operator: In\n      values: [front]\n"
		"  template:\n    metadata:\n      labels:\n        tier: back\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"`selector` does not match template `labels`");
	rejects("replicationcontrollers",
		"apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\n"
		"spec:\n  selector:\n    app: a\n"
		"  template:\n    metadata:\n      labels:\n        app: b\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"spec.template.metadata.labels: Invalid value");
	rejects("daemonsets",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\n"
		"spec:\n  selector:\n    matchLabels:\n      app: a\n"
		"  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n",
		"`selector` does not match template `labels`");
}

static void test_validate__rejects_missing_or_bad_selector(void **state)
{
	(void)state;
	rejects("deployments",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
		"spec:\n  template:\n    metadata:\n      labels:\n        app: a\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"spec.selector: Required value");
	rejects("deployments",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
		"spec:\n  selector: {}\n"
		"  template:\n    metadata:\n      labels:\n        app: a\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"spec.selector: Invalid value: {}: empty selector is invalid for deployment");
	rejects("deployments",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
		"spec:\n  selector:\n    matchExpressions:\n"
		"    - key: app\n      operator: Like\n"
		"  template:\n    metadata:\n      labels:\n        app: a\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"spec.selector.matchExpressions[0].operator: Unsupported value: \"Like\"");
	rejects("deployments",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
		"spec:\n  selector:\n    matchLabels:\n      app: a\n    matchLabelz: {}\n"
		"  template:\n    metadata:\n      labels:\n        app: a\n"
		"    spec:\n      containers:\n      - name: c\n        image: i\n",
		"spec.selector: Invalid value: unknown field \"matchLabelz\"");
}

static void test_validate__rejects_bad_replicas_and_strategy(void **state)
{
	(void)state;
	static const char *tail =
	    "  selector:\n    matchLabels:\n      app: a\n"
	    "  template:\n    metadata:\n      labels:\n        app: a\n"
	    "    spec:\n      containers:\n      - name: c\n        image: i\n";
	static const struct {
		const char *spec, *needle;
	} cases[] = {
	    {"  replicas: -1\n",
	     "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
	    {"  strategy:\n    type: BlueGreen\n",
	     "spec.strategy.type: Unsupported value: \"BlueGreen\""},
	    {"  strategy:\n    rollingUpdate:\n      maxSurge: 0\n      maxUnavailable: 0\n",
	     "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when "
	     "`maxSurge` is 0"},
	    {"  strategy:\n    rollingUpdate:\n      maxSurge: lots\n",
	     "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"lots\": a valid percent "
	     "string"},
	    {"  strategy:\n    rollingUpdate:\n      maxUnavailable: 150%\n",
	     "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be "
	     "greater than 100%"},
	    {"  strategy:\n    type: Recreate\n    rollingUpdate:\n      maxSurge: 1\n",
	     "spec.strategy.rollingUpdate: Forbidden"},
	    {"  minReadySeconds: 700\n", "spec.progressDeadlineSeconds: Invalid value: 600: must "
					 "be greater than minReadySeconds"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *y = xasprintf("apiVersion: apps/v1\nkind: Deployment\n"
				    "metadata:\n  name: d\nspec:\n%s%s",
				    cases[i].spec, tail);
		rejects("deployments", y, cases[i].needle);
		free(y);
	}
	rejects("replicationcontrollers",
		"apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\n"
		"spec:\n  template:\n    metadata:\n      labels:\n        app: b\n"
		"    spec:\n      restartPolicy: Never\n"
		"      containers:\n      - name: c\n        image: i\n",
		"spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: "
		"\"Always\"");
}

static void test_validate__rejects_bad_jobs(void **state)
{
	(void)state;
	rejects("jobs",
		"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
		"spec:\n  template:\n    spec:\n      restartPolicy: Always\n"
		"      containers:\n      - name: c\n        image: i\n",
		"spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported "
		"values: \"OnFailure\", \"Never\"");
	rejects("jobs",
		"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
		"spec:\n  template:\n    spec:\n"
		"      containers:\n      - name: c\n        image: i\n",
		"spec.template.spec.restartPolicy: Required value");
	rejects("jobs",
		"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
		"spec:\n  backoffLimit: -2\n  template:\n    spec:\n      restartPolicy: Never\n"
		"      containers:\n      - name: c\n        image: i\n",
		"spec.backoffLimit: Invalid value: -2");
	static const struct {
		const char *schedule, *needle;
	} cron[] = {
	    {"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
	    {"61 * * * *", "end of range (61) above maximum (59)"},
	    {"0 0 0 * *", "beginning of range (0) below minimum (1)"},
	    {"*/0 * * * *", "step of range should be a positive number"},
	    {"0 0 * FOO *", "failed to parse int from FOO"},
	    {"0 0 * * 8", "end of range (8) above maximum (7): 8 (day of week field)"},
	    {"TZ=UTC 0 0 * * *", "cannot use TZ or CRON_TZ"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cron); i++) {
		char *y =
		    xasprintf("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\n"
			      "spec:\n  schedule: '%s'\n  jobTemplate:\n    spec:\n"
			      "      template:\n        spec:\n          restartPolicy: Never\n"
			      "          containers:\n          - name: c\n            image: i\n",
			      cron[i].schedule);
		char *needle = xasprintf("spec.schedule: Invalid value: \"%s\": %s",
					 cron[i].schedule, cron[i].needle);
		rejects("cronjobs", y, needle);
		free(needle);
		free(y);
	}
	static const struct {
		const char *zone, *needle;
	} zones[] = {
	    {"Mars/Olympus", "unknown time zone Mars/Olympus"},
	    {"Local", "timeZone must be an explicit time zone"},
	    {"../etc/passwd", "unknown time zone ../etc/passwd"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(zones); i++) {
		char *y =
		    xasprintf("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\n"
			      "spec:\n  schedule: '0 * * * *'\n  timeZone: '%s'\n"
			      "  jobTemplate:\n    spec:\n"
			      "      template:\n        spec:\n          restartPolicy: Never\n"
			      "          containers:\n          - name: c\n            image: i\n",
			      zones[i].zone);
		char *needle = xasprintf("spec.timeZone: Invalid value: \"%s\": %s", zones[i].zone,
					 zones[i].needle);
		rejects("cronjobs", y, needle);
		free(needle);
		free(y);
	}
	rejects("cronjobs",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\n"
		"spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
		"          restartPolicy: Never\n"
		"          containers:\n          - name: c\n            image: i\n",
		"spec.schedule: Required value");
	ynode_free(accept("cronjobs",
			  "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\n"
			  "spec:\n  schedule: '@hourly'\n  jobTemplate:\n    spec:\n"
			  "      template:\n        spec:\n          restartPolicy: Never\n"
			  "          containers:\n          - name: c\n            image: i\n"));
	ynode_free(accept("cronjobs",
			  "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\n"
			  "spec:\n  schedule: '0 9-17/2 1,15 JAN-jun mon-FRI'\n"
			  "  jobTemplate:\n    spec:\n"
			  "      template:\n        spec:\n          restartPolicy: Never\n"
			  "          containers:\n          - name: c\n            image: i\n"));
}

/* ---- rejections: services --------------------------------------------- */

static void test_validate__rejects_bad_services(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *needle;
	} cases[] = {
	    {"  selector:\n    app: web\n", "spec.ports: Required value"},
	    {"  ports:\n  - port: 70000\n",
	     "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"},
	    {"  ports:\n  - name: http\n    port: 80\n  - name: http\n    port: 81\n",
	     "spec.ports[1].name: Duplicate value: \"http\""},
	    {"  ports:\n  - port: 80\n  - port: 81\n", "spec.ports[0].name: Required value"},
	    {"  ports:\n  - port: 80\n    nodePort: 30080\n",
	     "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"},
	    {"  type: NodePort\n  ports:\n  - port: 80\n    nodePort: 80\n",
	     "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. "
	     "The range of valid ports is 30000-32767"},
	    {"  type: Balanced\n  ports:\n  - port: 80\n",
	     "spec.type: Unsupported value: \"Balanced\""},
	    {"  clusterIP: 10.96.0.300\n  ports:\n  - port: 80\n",
	     "spec.clusterIP: Invalid value: \"10.96.0.300\""},
	    {"  ports:\n  - port: 80\n    targetPort: web_http\n",
	     "spec.ports[0].targetPort: Invalid value: \"web_http\""},
	    {"  ports:\n  - port: 80\n    targetPort: 70000\n",
	     "spec.ports[0].targetPort: Invalid value: 70000"},
	    {"  ports:\n  - port: 80\n    protocol: ICMP\n",
	     "spec.ports[0].protocol: Unsupported value: \"ICMP\""},
	    {"  ports:\n  - name: a\n    port: 80\n  - name: b\n    port: 80\n",
	     "spec.ports[1]: Duplicate value: \"80/TCP\""},
	    {"  type: ExternalName\n", "spec.externalName: Required value"},
	    {"  selector:\n    app: 'web server'\n  ports:\n  - port: 80\n",
	     "spec.selector: Invalid value: \"web server\""},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *y = xasprintf("apiVersion: v1\nkind: Service\nmetadata:\n"
				    "  name: web\nspec:\n%s",
				    cases[i].spec);
		rejects("services", y, cases[i].needle);
		free(y);
	}
}

/* ---- rejections: config, storage and the rest ------------------------- */

static void test_validate__rejects_bad_config_maps_and_secrets(void **state)
{
	(void)state;
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"data:\n  'bad/key': x\n",
		"data[bad/key]: Invalid value: \"bad/key\": a valid config key");
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"data:\n  port: 8080\n",
		"data[port]: Invalid value: 8080: must be a string");
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"data:\n  list: [a, b]\n",
		"data[list]: Invalid value: [\"a\", \"b\"]: must be a string");
	rejects("configmaps",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		"data:\n  a: x\nbinaryData:\n  a: eA==\n",
		"data[a]: Invalid value: \"a\": duplicate of key present in binaryData");

	size_t big = 1024 * 1024 + 1;
	char *val = xmalloc(big + 1);
	memset(val, 'x', big);
	val[big] = '\0';
	char *y = xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
			    "data:\n  big: %s\n",
			    val);
	rejects("configmaps", y, "data: Too long: must have at most 1048576 bytes");
	free(y);
	free(val);

	rejects(
	    "secrets",
	    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
	    "data:\n  password: hunter2\n",
	    "data[password]: Invalid value: \"<secret data>\": illegal base64 data at input byte");
	rejects("secrets",
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
		"type: kubernetes.io/tls\ndata:\n  tls.crt: YQ==\n",
		"data[tls.key]: Required value");
}

static void test_validate__rejects_bad_volumes_and_claims(void **state)
{
	(void)state;
	rejects("persistentvolumes",
		"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv\n"
		"spec:\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /x\n",
		"spec.capacity: Required value");
	rejects("persistentvolumes",
		"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv\n"
		"spec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n",
		"spec: Required value: must specify a volume type");
	rejects("persistentvolumes",
		"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv\n"
		"spec:\n  capacity:\n    storage: lots\n  accessModes: [ReadWriteOnce]\n"
		"  hostPath:\n    path: /x\n",
		"spec.capacity[storage]: Invalid value: \"lots\"");
	rejects("persistentvolumeclaims",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n"
		"spec:\n  resources:\n    requests:\n      storage: 1Gi\n",
		"spec.accessModes: Required value");
	rejects("persistentvolumeclaims",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n"
		"spec:\n  accessModes: [ReadWriteSometimes]\n"
		"  resources:\n    requests:\n      storage: 1Gi\n",
		"spec.accessModes[0]: Unsupported value: \"ReadWriteSometimes\"");
	rejects("persistentvolumeclaims",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n"
		"spec:\n  accessModes: [ReadWriteOnce]\n",
		"spec.resources[storage]: Required value");
}

static void test_validate__rejects_bad_hpa_pdb_lease_event(void **state)
{
	(void)state;
	rejects(
	    "horizontalpodautoscalers",
	    "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\n"
	    "metadata:\n  name: h\nspec:\n  scaleTargetRef:\n    kind: Deployment\n"
	    "    name: web\n  minReplicas: 5\n  maxReplicas: 2\n",
	    "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`");
	rejects("horizontalpodautoscalers",
		"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
		"metadata:\n  name: h\nspec:\n  maxReplicas: 2\n",
		"spec.scaleTargetRef: Required value");
	rejects("horizontalpodautoscalers",
		"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
		"metadata:\n  name: h\nspec:\n  scaleTargetRef:\n    kind: Deployment\n"
		"    name: web\n",
		"spec.maxReplicas: Required value");
	rejects("horizontalpodautoscalers",
		"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
		"metadata:\n  name: h\nspec:\n  scaleTargetRef:\n    kind: Deployment\n"
		"    name: web\n  maxReplicas: 3\n  metrics:\n  - type: Resource\n"
		"    resource:\n      name: cpu\n      target:\n        type: Utilization\n",
		"spec.metrics[0].resource.target.averageUtilization: Required value");
	rejects("poddisruptionbudgets",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\n"
		"spec:\n  minAvailable: 1\n  maxUnavailable: 1\n",
		"spec: Invalid value: {\"minAvailable\": 1, \"maxUnavailable\": 1}: minAvailable "
		"and maxUnavailable cannot be both set");
	rejects("leases",
		"apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l\n"
		"spec:\n  leaseDurationSeconds: 0\n",
		"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0");
	rejects("events", "apiVersion: v1\nkind: Event\nmetadata:\n  name: e\nreason: X\n",
		"involvedObject: Required value");
	rejects("events",
		"apiVersion: v1\nkind: Event\nmetadata:\n  name: e\n"
		"involvedObject:\n  kind: Pod\n  name: p\ntype: Fatal\n",
		"type: Unsupported value: \"Fatal\"");
	rejects("limitranges",
		"apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: l\n"
		"spec:\n  limits:\n  - type: Container\n    min:\n      cpu: '2'\n"
		"    max:\n      cpu: '1'\n",
		"spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max "
		"value 1");
	rejects("networkpolicies",
		"apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
		"metadata:\n  name: np\nspec:\n  ingress:\n  - from:\n"
		"    - ipBlock:\n        cidr: 10.0.0.0/33\n",
		"spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\"");
	rejects("ingresses",
		"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: i\n"
		"spec:\n  rules:\n  - http:\n      paths:\n      - path: /\n"
		"        backend:\n          service:\n            name: web\n"
		"            port:\n              number: 80\n",
		"spec.rules[0].http.paths[0].pathType: Required value");
	rejects("nodes",
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: n\nspec:\n  taints:\n"
		"  - key: k\n    effect: Sometimes\n",
		"spec.taints[0].effect: Unsupported value: \"Sometimes\"");
}

/* ---- updates ---------------------------------------------------------- */

static void test_validate__pod_update_rules(void **state)
{
	(void)state;
	/* the stored pod is the defaulted one */
	struct ynode *stored = accept("pods", pod_min);
	char *old = yaml_emit(stored, NULL);
	ynode_free(stored);

	/* writing the manifest again (no defaults) is no change */
	ynode_free(accept_update("pods", pod_min, old));
	/* the image may change */
	ynode_free(accept_update("pods",
				 POD_HEAD "spec:\n  containers:\n  - name: web\n"
					  "    image: nginx:1.26\n    ports:\n"
					  "    - containerPort: 80\n",
				 old));
	/* the scheduler binds by setting nodeName once */
	const char *bound = POD_HEAD "spec:\n  nodeName: node-1\n  containers:\n"
				     "  - name: web\n    image: nginx\n    ports:\n"
				     "    - containerPort: 80\n";
	struct ynode *b = accept_update("pods", bound, old);
	char *bound_old = yaml_emit(b, NULL);
	ynode_free(b);
	rejects_update("pods",
		       POD_HEAD "spec:\n  nodeName: node-2\n  containers:\n"
				"  - name: web\n    image: nginx\n    ports:\n"
				"    - containerPort: 80\n",
		       bound_old, "spec: Forbidden: pod updates may not change fields other than");
	free(bound_old);
	/* anything else is refused, naming what changed */
	rejects_update("pods",
		       POD_HEAD "spec:\n  containers:\n  - name: web\n"
				"    image: nginx\n    ports:\n"
				"    - containerPort: 8080\n",
		       old, "changed: spec.containers[0].ports[0].containerPort");
	rejects_update("pods",
		       POD_HEAD "spec:\n  restartPolicy: Never\n  containers:\n"
				"  - name: web\n    image: nginx\n    ports:\n"
				"    - containerPort: 80\n",
		       old, "spec: Forbidden: pod updates may not change fields");
	free(old);

	const char *tol = POD_HEAD "spec:\n  containers:\n  - name: web\n    image: nginx\n"
				   "  tolerations:\n  - key: a\n    operator: Exists\n";
	ynode_free(accept_update("pods",
				 POD_HEAD "spec:\n  containers:\n  - name: web\n    image: nginx\n"
					  "  tolerations:\n  - key: a\n    operator: Exists\n"
					  "  - key: b\n    operator: Exists\n",
				 tol));
	rejects_update("pods", POD_HEAD "spec:\n  containers:\n  - name: web\n    image: nginx\n",
		       tol, "spec.tolerations: Forbidden");
}

static void test_validate__immutable_selectors_and_job_template(void **state)
{
	(void)state;
	struct ynode *stored = accept("deployments", deploy_min);
	char *old = yaml_emit(stored, NULL);
	ynode_free(stored);
	ynode_free(accept_update("deployments", deploy_min, old));
	rejects_update("deployments",
		       "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
		       "spec:\n  selector:\n    matchLabels:\n      app: web\n      tier: x\n"
		       "  template:\n    metadata:\n      labels:\n        app: web\n"
		       "        tier: x\n    spec:\n      containers:\n      - name: web\n"
		       "        image: nginx:1.25\n",
		       old,
		       "spec.selector: Invalid value: {\"matchLabels\": {\"app\": \"web\", "
		       "\"tier\": \"x\"}}: field is immutable");
	free(old);

	stored = accept("jobs", job_min);
	old = yaml_emit(stored, NULL);
	ynode_free(stored);
	ynode_free(accept_update("jobs", job_min, old));
	rejects_update("jobs",
		       "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\n"
		       "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
		       "      containers:\n      - name: pi\n        image: perl:5.36\n",
		       old, "spec.template: Invalid value");
	free(old);
}

static void test_validate__service_cluster_ip_kept_and_immutable(void **state)
{
	(void)state;
	const char *old = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
			  "spec:\n  type: NodePort\n  clusterIP: 10.96.0.12\n"
			  "  clusterIPs: [10.96.0.12]\n  ports:\n  - port: 80\n"
			  "    nodePort: 31000\n    protocol: TCP\n    targetPort: 80\n"
			  "  sessionAffinity: None\n";
	/* the original manifest written again keeps what was allocated */
	struct ynode *o = accept_update("services",
					"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
					"spec:\n  type: NodePort\n  ports:\n  - port: 80\n",
					old);
	assert_str_at(o, "spec.clusterIP", "10.96.0.12");
	assert_int_at(o, "spec.ports[0].nodePort", 31000);
	ynode_free(o);
	rejects_update("services",
		       "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
		       "spec:\n  type: NodePort\n  clusterIP: 10.96.0.13\n"
		       "  ports:\n  - port: 80\n",
		       old, "spec.clusterIP: Invalid value: \"10.96.0.13\": field is immutable");
	/* the controller may allocate one where there was none */
	o = accept_update("services",
			  "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
			  "spec:\n  clusterIP: 10.96.0.14\n  ports:\n  - port: 80\n",
			  svc_min);
	assert_str_at(o, "spec.clusterIP", "10.96.0.14");
	ynode_free(o);
}

static void test_validate__immutable_config_map_and_claim(void **state)
{
	(void)state;
	const char *old = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
			  "immutable: true\ndata:\n  a: x\n";
	rejects_update("configmaps",
		       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
		       "immutable: true\ndata:\n  a: z\n",
		       old, "data: Forbidden: field is immutable when `immutable` is set");
	const char *claim = "apiVersion: v1\nkind: PersistentVolumeClaim\n"
			    "metadata:\n  name: c\nspec:\n  accessModes: [ReadWriteOnce]\n"
			    "  resources:\n    requests:\n      storage: 1Gi\n";
	ynode_free(
	    accept_update("persistentvolumeclaims",
			  "apiVersion: v1\nkind: PersistentVolumeClaim\n"
			  "metadata:\n  name: c\nspec:\n  accessModes: [ReadWriteOnce]\n"
			  "  volumeName: pv1\n  resources:\n    requests:\n      storage: 2Gi\n",
			  claim));
	rejects_update("persistentvolumeclaims",
		       "apiVersion: v1\nkind: PersistentVolumeClaim\n"
		       "metadata:\n  name: c\nspec:\n  accessModes: [ReadWriteMany]\n"
		       "  resources:\n    requests:\n      storage: 1Gi\n",
		       claim, "spec: Forbidden: spec is immutable after creation");
}

/* ---- IngressClass ----------------------------------------------------- */

#define IC_HEAD                                                                                    \
	"apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: external-lb\n"

/* The Kubernetes documentation's external-lb.yaml. */
static const char *ingress_class_doc = IC_HEAD "spec:\n"
					       "  controller: example.com/ingress-controller\n"
					       "  parameters:\n"
					       "    apiGroup: k8s.example.com\n"
					       "    kind: IngressParameters\n"
					       "    name: external-lb\n";

static void test_validate__ingress_class_accepted_and_defaulted(void **state)
{
	(void)state;
	struct ynode *obj = accept("ingressclasses", ingress_class_doc);
	assert_str_at(obj, "spec.controller", "example.com/ingress-controller");
	assert_str_at(obj, "spec.parameters.scope", "Cluster");
	ynode_free(obj);

	/* cluster-scoped: a namespace given is dropped; v1beta1 is served */
	obj = accept("ingressclasses", "apiVersion: networking.k8s.io/v1beta1\nkind: IngressClass\n"
				       "metadata:\n  name: nginx\n  namespace: dev\n"
				       "spec:\n  controller: k8s.io/ingress-nginx\n");
	assert_absent(obj, "metadata.namespace");
	assert_absent(obj, "spec.parameters");
	ynode_free(obj);

	obj = accept("ingressclasses", IC_HEAD "spec:\n  controller: example.com/x\n"
					       "  parameters:\n    kind: Params\n    name: p\n"
					       "    scope: Namespace\n    namespace: dev\n");
	assert_str_at(obj, "spec.parameters.scope", "Namespace");
	ynode_free(obj);
	assert_false(kinds_by_kind("IngressClass")->namespaced);
	assert_true(kinds_by_kind("IngressClass")->history);
	assert_string_equal(kinds_by_kind("IngressClass")->plural, "ingressclasses");
}

static void test_validate__ingress_class_rejections(void **state)
{
	(void)state;
	rejects("ingressclasses", IC_HEAD, "spec.controller: Required value");
	rejects(
	    "ingressclasses", IC_HEAD "spec:\n  controller: nginx\n",
	    "spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as "
	    "\"acme.io/foo\")");
	rejects("ingressclasses", IC_HEAD "spec:\n  controller: example.com/\n",
		"spec.controller: Invalid value: \"example.com/\": must be a domain-prefixed path");
	rejects("ingressclasses", IC_HEAD "spec:\n  controller: Example.com/x\n",
		"spec.controller: Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain");
	rejects("ingressclasses", IC_HEAD "spec:\n  controller: example.com/a b\n",
		"spec.controller: Invalid value: \"a b\": Invalid path (regex used for validation "
		"is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')");
	char long_ctl[300];
	memset(long_ctl, 'a', sizeof(long_ctl));
	memcpy(long_ctl, "example.com/", 12);
	long_ctl[251] = '\0';
	char *doc = xasprintf(IC_HEAD "spec:\n  controller: %s\n", long_ctl);
	rejects("ingressclasses", doc, "spec.controller: Too long: must have at most 250 bytes");
	free(doc);
	long_ctl[250] = '\0';
	doc = xasprintf(IC_HEAD "spec:\n  controller: %s\n", long_ctl);
	ynode_free(accept("ingressclasses", doc));
	free(doc);

	rejects("ingressclasses",
		IC_HEAD "spec:\n  controller: example.com/x\n  parameters:\n    name: p\n",
		"spec.parameters.kind: Required value: kind is required");
	rejects("ingressclasses",
		IC_HEAD "spec:\n  controller: example.com/x\n  parameters:\n    kind: P\n",
		"spec.parameters.name: Required value: name is required");
	rejects("ingressclasses",
		IC_HEAD
		"spec:\n  controller: example.com/x\n  parameters:\n    kind: P\n    name: a/b\n",
		"spec.parameters.name: Invalid value: \"a/b\": may not contain '/'");
	rejects("ingressclasses",
		IC_HEAD
		"spec:\n  controller: example.com/x\n  parameters:\n    kind: ..\n    name: p\n",
		"spec.parameters.kind: Invalid value: \"..\": may not be '..'");
	rejects(
	    "ingressclasses",
	    IC_HEAD "spec:\n  controller: example.com/x\n  parameters:\n    kind: P\n    name: p\n"
		    "    apiGroup: Example\n",
	    "spec.parameters.apiGroup: Invalid value: \"Example\": a lowercase RFC 1123 subdomain");
	rejects(
	    "ingressclasses",
	    IC_HEAD "spec:\n  controller: example.com/x\n  parameters:\n    kind: P\n    name: p\n"
		    "    scope: Global\n",
	    "spec.parameters.scope: Unsupported value: \"Global\": supported values: \"Cluster\", "
	    "\"Namespace\"");
	rejects(
	    "ingressclasses",
	    IC_HEAD "spec:\n  controller: example.com/x\n  parameters:\n    kind: P\n    name: p\n"
		    "    scope: Namespace\n",
	    "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'");
	rejects("ingressclasses",
		IC_HEAD
		"spec:\n  controller: example.com/x\n  parameters:\n    kind: P\n    name: p\n"
		"    namespace: dev\n",
		"spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'");
	rejects(
	    "ingressclasses",
	    "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: External_LB\n"
	    "spec:\n  controller: example.com/x\n",
	    "metadata.name: Invalid value: \"External_LB\"");
	rejects("ingressclasses",
		"apiVersion: extensions/v1beta1\nkind: IngressClass\nmetadata:\n  name: x\n"
		"spec:\n  controller: example.com/x\n",
		"apiVersion: Unsupported value: \"extensions/v1beta1\"");
}

static void test_validate__ingress_class_controller_immutable(void **state)
{
	(void)state;
	rejects_update("ingressclasses", IC_HEAD "spec:\n  controller: example.com/other\n",
		       ingress_class_doc,
		       "spec.controller: Invalid value: \"example.com/other\": field is immutable");
	/* the parameters may change, and an unchanged document is fine */
	ynode_free(accept_update("ingressclasses",
				 IC_HEAD "spec:\n  controller: example.com/ingress-controller\n"
					 "  parameters:\n    kind: Other\n    name: p\n",
				 ingress_class_doc));
	ynode_free(accept_update("ingressclasses", ingress_class_doc, ingress_class_doc));
}

/* ---- PriorityClass and a pod's priority ------------------------------- */

#define PC_HEAD "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"

static void test_validate__priority_class_accepted_and_defaulted(void **state)
{
	(void)state;
	struct ynode *obj =
	    accept("priorityclasses", PC_HEAD "metadata:\n  name: high\n"
					      "value: 1000000\nglobalDefault: false\n"
					      "description: for the web tier\n");
	assert_int_at(obj, "value", 1000000);
	assert_str_at(obj, "preemptionPolicy", "PreemptLowerPriority");
	ynode_free(obj);
	obj =
	    accept("priorityclasses", "apiVersion: scheduling.k8s.io/v1beta1\nkind: PriorityClass\n"
				      "metadata:\n  name: batch\n  namespace: dev\n"
				      "value: -5\npreemptionPolicy: Never\n");
	assert_str_at(obj, "preemptionPolicy", "Never");
	assert_absent(obj, "metadata.namespace");
	ynode_free(obj);
	/* the largest user value, and the system classes as the system has them */
	ynode_free(
	    accept("priorityclasses", PC_HEAD "metadata:\n  name: top\nvalue: 1000000000\n"));
	ynode_free(accept("priorityclasses",
			  "apiVersion: scheduling.k8s.io/v1alpha1\nkind: PriorityClass\n"
			  "metadata:\n  name: system-node-critical\nvalue: 2000001000\n"));
	ynode_free(accept("priorityclasses", PC_HEAD
			  "metadata:\n  name: system-cluster-critical\nvalue: 2000000000\n"));
	assert_false(kinds_by_kind("PriorityClass")->namespaced);
	assert_true(kinds_by_kind("PriorityClass")->history);
	assert_string_equal(kinds_by_kind("PriorityClass")->plural, "priorityclasses");
}

#define CR_HEAD                                                                                    \
	"apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: web-5d4f, namespace: "    \
	"dev}\n"

static void test_validate__controller_revision(void **state)
{
	(void)state;
	struct ynode *o = accept("controllerrevisions",
				 CR_HEAD "data: {spec: {template: {spec: {}}}}\nrevision: 3\n");
	assert_int_at(o, "revision", 3);
	ynode_free(o);
	o = accept("controllerrevisions", CR_HEAD "data: {a: 1}\n");
	assert_int_at(o, "revision", 0);
	ynode_free(o);
	rejects("controllerrevisions", CR_HEAD "revision: 1\n",
		"data: Required value: data is mandatory");
	rejects("controllerrevisions", CR_HEAD "data: {a: 1}\nrevision: -1\n",
		"revision: Invalid value: -1: must be greater than or equal to 0");
	/* a rollback renumbers a revision; its data never changes */
	ynode_free(accept_update("controllerrevisions", CR_HEAD "data: {a: 1}\nrevision: 4\n",
				 CR_HEAD "data: {a: 1}\nrevision: 1\n"));
	rejects_update("controllerrevisions", CR_HEAD "data: {a: 2}\nrevision: 1\n",
		       CR_HEAD "data: {a: 1}\nrevision: 1\n", "data: Invalid value");
	assert_true(kinds_by_kind("ControllerRevision")->namespaced);
	assert_true(kinds_api_version_ok(kinds_by_kind("ControllerRevision"), "apps/v1"));
}

static void test_validate__priority_class_rejections(void **state)
{
	(void)state;
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: high\n", "value: Required value");
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: high\nvalue: 1000000001\n",
		"value: Forbidden: maximum allowed value of a user defined priority is 1000000000");
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: high\nvalue: 3000000000\n",
		"value: Invalid value: 3000000000: must be a 32-bit integer");
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: high\nvalue: high\n",
		"value: Invalid value: \"high\"");
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: system-mine\nvalue: 10\n",
		"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
		"for system use only. error: system-mine is not a known system priority class");
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: system-node-critical\nvalue: 10\n",
		"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
		"for system use only. error: value of system-node-critical PriorityClass must be "
		"2000001000");
	rejects("priorityclasses",
		PC_HEAD "metadata:\n  name: system-cluster-critical\nvalue: 2000000000\n"
			"globalDefault: true\n",
		"error: globalDefault of system-cluster-critical PriorityClass must be false");
	rejects("priorityclasses",
		PC_HEAD "metadata:\n  name: high\nvalue: 1\nglobalDefault: 'yes'\n",
		"globalDefault: Invalid value: \"yes\": must be a boolean");
	rejects("priorityclasses",
		PC_HEAD "metadata:\n  name: high\nvalue: 1\npreemptionPolicy: Always\n",
		"preemptionPolicy: Unsupported value: \"Always\": supported values: "
		"\"PreemptLowerPriority\", \"Never\"");
	rejects("priorityclasses",
		PC_HEAD "metadata:\n  name: high\nvalue: 1\npreemptionPolicy: ''\n",
		"preemptionPolicy: Required value");
	rejects("priorityclasses", PC_HEAD "metadata:\n  name: High\nvalue: 1\n",
		"metadata.name: Invalid value: \"High\"");
	rejects("priorityclasses",
		"apiVersion: scheduling.k8s.io/v2\nkind: PriorityClass\n"
		"metadata:\n  name: high\nvalue: 1\n",
		"apiVersion: Unsupported value: \"scheduling.k8s.io/v2\"");
}

static void test_validate__priority_class_value_and_policy_immutable(void **state)
{
	(void)state;
	const char *old = PC_HEAD "metadata:\n  name: high\nvalue: 100\n";
	rejects_update("priorityclasses", PC_HEAD "metadata:\n  name: high\nvalue: 101\n", old,
		       "value: Forbidden: may not be changed in an update.");
	rejects_update("priorityclasses",
		       PC_HEAD "metadata:\n  name: high\nvalue: 100\npreemptionPolicy: Never\n",
		       old, "preemptionPolicy: Invalid value: \"Never\": field is immutable");
	/* the defaulted policy written out, a description, globalDefault: fine */
	ynode_free(accept_update("priorityclasses",
				 PC_HEAD "metadata:\n  name: high\nvalue: 100\n"
					 "preemptionPolicy: PreemptLowerPriority\n"
					 "description: now described\nglobalDefault: true\n",
				 old));
}

/* What priority_resolve gave, copied out of the documents it points into. */
struct resolved {
	int32_t value;
	char class_name[64]; /* "" for none */
	char policy[32];
};

/* Resolves pod_yaml's spec against the classes; returns the message of a
 * refusal, or NULL and the result in out. */
static char *resolve(const char *pod_yaml, const char *const *class_yaml, size_t n,
		     struct resolved *out)
{
	struct ynode *pod = parse(pod_yaml);
	struct ynode *classes[8] = {0};
	assert_true(n <= ARRAY_SIZE(classes));
	for (size_t i = 0; i < n; i++)
		classes[i] = parse(class_yaml[i]);
	struct priority_resolved r = {0};
	struct error *e = NULL;
	int rc = priority_resolve(ynode_get(pod, "spec"), (const struct ynode *const *)classes, n,
				  &r, &e);
	char *msg = NULL;
	if (rc < 0) {
		assert_int_equal(rc, -EINVAL);
		msg = xstrdup(e->msg);
		error_free(e);
	} else {
		assert_null(e);
		assert_non_null(r.policy);
		out->value = r.value;
		snprintf(out->class_name, sizeof(out->class_name), "%s",
			 r.class_name ? r.class_name : "");
		snprintf(out->policy, sizeof(out->policy), "%s", r.policy);
	}
	for (size_t i = 0; i < n; i++)
		ynode_free(classes[i]);
	ynode_free(pod);
	return msg;
}

static void test_priority__resolve(void **state)
{
	(void)state;
	static const char *const classes[] = {
	    PC_HEAD "metadata:\n  name: high\nvalue: 1000\npreemptionPolicy: Never\n",
	    PC_HEAD "metadata:\n  name: low\nvalue: 10\nglobalDefault: true\n",
	    PC_HEAD "metadata:\n  name: lower\nvalue: 5\nglobalDefault: true\n",
	    "not a map",
	};
	struct resolved r;

	/* the class named */
	assert_null(resolve(POD_HEAD "spec:\n  priorityClassName: high\n", classes, 4, &r));
	assert_int_equal(r.value, 1000);
	assert_string_equal(r.class_name, "high");
	assert_string_equal(r.policy, "Never");

	/* no name: the global default with the lowest value */
	assert_null(resolve(POD_HEAD "spec:\n  containers: []\n", classes, 4, &r));
	assert_int_equal(r.value, 5);
	assert_string_equal(r.class_name, "lower");
	assert_string_equal(r.policy, "PreemptLowerPriority");

	/* no name and no default: 0 */
	assert_null(resolve(POD_HEAD "spec:\n  priorityClassName: ''\n", classes, 1, &r));
	assert_int_equal(r.value, 0);
	assert_string_equal(r.class_name, "");
	assert_string_equal(r.policy, "PreemptLowerPriority");

	/* the system classes resolve without objects */
	assert_null(
	    resolve(POD_HEAD "spec:\n  priorityClassName: system-node-critical\n", classes, 0, &r));
	assert_int_equal(r.value, 2000001000);
	assert_string_equal(r.class_name, "system-node-critical");

	/* the pod may carry what its class gives, nothing else */
	assert_null(resolve(POD_HEAD "spec:\n  priorityClassName: high\n  priority: 1000\n"
				     "  preemptionPolicy: Never\n",
			    classes, 4, &r));
	char *msg = resolve(POD_HEAD "spec:\n  priorityClassName: nope\n", classes, 4, &r);
	assert_non_null(msg);
	assert_string_equal(msg, "no PriorityClass with name nope was found");
	free(msg);
	msg = resolve(POD_HEAD "spec:\n  priorityClassName: high\n  priority: 7\n", classes, 4, &r);
	assert_non_null(msg);
	assert_string_equal(msg, "the integer value of priority (7) must not be provided in pod "
				 "spec; priority admission controller computed 1000 from the given "
				 "PriorityClass name");
	free(msg);
	msg = resolve(POD_HEAD "spec:\n  priority: 1\n", classes, 1, &r);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "the integer value of priority (1) must not be provided"));
	assert_non_null(strstr(msg, "computed 0 from"));
	free(msg);
	msg = resolve(POD_HEAD "spec:\n  priorityClassName: high\n  preemptionPolicy: "
			       "PreemptLowerPriority\n",
		      classes, 4, &r);
	assert_non_null(msg);
	assert_string_equal(msg, "the string value of PreemptionPolicy (PreemptLowerPriority) must "
				 "not be provided in pod spec; priority admission controller "
				 "computed Never from the given PriorityClass name");
	free(msg);
}

/* ---- StatefulSets: mounts of claim templates ---------------------------- */

/* A file of tests/data (below $CORRAL_ROOT, else the working directory). */
static char *data_file(const char *name)
{
	const char *root = getenv("CORRAL_ROOT");
	cleanup_free char *path = xasprintf("%s/tests/data/%s", root && *root ? root : ".", name);
	char *text = util_read_file(path, NULL);
	if (!text)
		print_message("cannot read %s\n", path);
	assert_non_null(text);
	return text;
}

/* The Kubernetes documentation's StatefulSets mount their
 * volumeClaimTemplates by name; a mount naming neither a volume nor a
 * claim template is still refused, and a template is no pod's volume. */
static void test_validate__statefulset_claim_template_mounts(void **state)
{
	(void)state;
	static const char *const docs[] = {"statefulset-web.yaml", "statefulset-cassandra.yaml",
					   "statefulset-mysql.yaml", "statefulset-zookeeper.yaml"};
	for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
		cleanup_free char *y = data_file(docs[i]);
		struct ynode *o = accept("statefulsets", y);
		assert_string_equal(ynode_path_str(o, "spec.persistentVolumeClaimRetentionPolicy"
						      ".whenScaled"),
				    "Retain");
		ynode_free(o);
	}
	static const char *head =
	    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n"
	    "  serviceName: nginx\n  selector:\n    matchLabels:\n      app: nginx\n"
	    "  template:\n    metadata:\n      labels:\n        app: nginx\n"
	    "    spec:\n%s      containers:\n      - name: nginx\n        image: busybox\n"
	    "        volumeMounts:\n        - name: %s\n          mountPath: /data\n"
	    "  volumeClaimTemplates:\n  - metadata:\n      name: www\n"
	    "    spec:\n      accessModes: [ReadWriteOnce]\n"
	    "      resources:\n        requests:\n          storage: 1Gi\n";
	cleanup_free char *other = xasprintf(head, "", "data");
	rejects("statefulsets", other,
		"spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"data\"");
	cleanup_free char *ads = xasprintf(head, "      activeDeadlineSeconds: 5\n", "www");
	rejects("statefulsets", ads,
		"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
		"StatefulSet is not Supported");
	cleanup_free char *pod = xasprintf(POD_HEAD "spec:\n  containers:\n  - name: a\n"
						    "    image: b\n    volumeMounts:\n"
						    "    - name: www\n      mountPath: /data\n");
	rejects("pods", pod, "spec.containers[0].volumeMounts[0].name: Not found: \"www\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinds__lookup_by_plural_and_kind),
	    cmocka_unit_test(test_kinds__scope_and_history),
	    cmocka_unit_test(test_kinds__api_versions),
	    cmocka_unit_test(test_kinds__table_is_consistent),
	    cmocka_unit_test(test_kinds__every_kind_has_rules),
	    cmocka_unit_test(test_validate__controller_revision),
	    cmocka_unit_test(test_validate__defaults_pod),
	    cmocka_unit_test(test_validate__defaults_pull_policy_by_tag),
	    cmocka_unit_test(test_validate__defaults_pod_requests_from_limits),
	    cmocka_unit_test(test_validate__defaults_probes_and_volumes),
	    cmocka_unit_test(test_validate__keeps_unknown_fields),
	    cmocka_unit_test(test_validate__defaults_deployment),
	    cmocka_unit_test(test_validate__old_deployment_selector_from_template),
	    cmocka_unit_test(test_validate__defaults_replication_controller),
	    cmocka_unit_test(test_validate__defaults_replica_set_daemon_set_stateful_set),
	    cmocka_unit_test(test_validate__defaults_service),
	    cmocka_unit_test(test_validate__accepts_headless_service_without_ports),
	    cmocka_unit_test(test_validate__defaults_job_and_cron_job),
	    cmocka_unit_test(test_validate__defaults_secret_and_claims),
	    cmocka_unit_test(test_validate__defaults_namespace_hpa_netpol),
	    cmocka_unit_test(test_validate__accepts_every_kind),
	    cmocka_unit_test(test_validate__rejects_wrong_kind_and_version),
	    cmocka_unit_test(test_validate__rejects_invalid_names),
	    cmocka_unit_test(test_validate__rejects_bad_labels_and_annotations),
	    cmocka_unit_test(test_validate__rejects_wrong_types),
	    cmocka_unit_test(test_validate__rejects_missing_containers),
	    cmocka_unit_test(test_validate__rejects_missing_container_name),
	    cmocka_unit_test(test_validate__rejects_duplicate_container_name),
	    cmocka_unit_test(test_validate__rejects_missing_image),
	    cmocka_unit_test(test_validate__rejects_bad_container_ports),
	    cmocka_unit_test(test_validate__security_context),
	    cmocka_unit_test(test_validate__rejects_bad_env),
	    cmocka_unit_test(test_validate__rejects_bad_resources),
	    cmocka_unit_test(test_validate__rejects_bad_volumes),
	    cmocka_unit_test(test_validate__rejects_bad_pod_fields),
	    cmocka_unit_test(test_validate__lists_several_errors),
	    cmocka_unit_test(test_validate__leaves_document_as_written_on_rejection),
	    cmocka_unit_test(test_validate__rejects_selector_mismatch),
	    cmocka_unit_test(test_validate__rejects_missing_or_bad_selector),
	    cmocka_unit_test(test_validate__rejects_bad_replicas_and_strategy),
	    cmocka_unit_test(test_validate__rejects_bad_jobs),
	    cmocka_unit_test(test_validate__rejects_bad_services),
	    cmocka_unit_test(test_validate__rejects_bad_config_maps_and_secrets),
	    cmocka_unit_test(test_validate__rejects_bad_volumes_and_claims),
	    cmocka_unit_test(test_validate__rejects_bad_hpa_pdb_lease_event),
	    cmocka_unit_test(test_validate__pod_update_rules),
	    cmocka_unit_test(test_validate__immutable_selectors_and_job_template),
	    cmocka_unit_test(test_validate__service_cluster_ip_kept_and_immutable),
	    cmocka_unit_test(test_validate__immutable_config_map_and_claim),
	    cmocka_unit_test(test_validate__ingress_class_accepted_and_defaulted),
	    cmocka_unit_test(test_validate__ingress_class_rejections),
	    cmocka_unit_test(test_validate__ingress_class_controller_immutable),
	    cmocka_unit_test(test_validate__priority_class_accepted_and_defaulted),
	    cmocka_unit_test(test_validate__priority_class_rejections),
	    cmocka_unit_test(test_validate__priority_class_value_and_policy_immutable),
	    cmocka_unit_test(test_priority__resolve),
	    cmocka_unit_test(test_validate__statefulset_claim_template_mounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
