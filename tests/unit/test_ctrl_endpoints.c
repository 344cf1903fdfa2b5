/* test_ctrl_endpoints.c: the Endpoints a service gets from hand-built
 * pods: targetPort by number and by container port name, which pods count,
 * ready and unready addresses, publishNotReadyAddresses, subsets grouped by
 * port sets, hostnames, headless services without ports, and a stable
 * order whatever order the pods come in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "endpoints.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

/* A pod of dev with label app: web; ready "True"/"False"; ports: the
 * containers' ports list, "" for none; extra: more spec fields. */
static struct ynode *pod(const char *name, const char *ip, const char *ready, const char *ports,
			 const char *extra)
{
	cleanup_free char *text = xasprintf(
	    "{metadata: {name: %s, namespace: dev, uid: uid-%s, labels: {app: web}}, spec: "
	    "{nodeName: n1, %s containers: [{name: c, image: i%s%s}]}, status: {phase: Running, "
	    "podIP: '%s', conditions: [{type: Ready, status: '%s'}]}}",
	    name, name, extra ? extra : "", *ports ? ", ports: " : "", ports, ip, ready);
	return y(text);
}

static struct ynode *build(const struct ynode *svc, struct ynode **pods, size_t n)
{
	return endpoints_build(svc, (const struct ynode *const *)pods, n);
}

static void free_all(struct ynode **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ynode_free(v[i]);
}

/* The ips at path (a sequence of addresses), joined by spaces. */
static char *ips(const struct ynode *ep, const char *path)
{
	const struct ynode *seq = ynode_path(ep, path);
	char *out = xstrdup("");
	for (size_t i = 0; seq && i < seq->n; i++) {
		char *next = xasprintf("%s%s%s", out, i ? " " : "",
				       ynode_path_str(ynode_item(seq, i), "ip"));
		free(out);
		out = next;
	}
	return out;
}

static void test_ep__target_port(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *p = pod(
	    "a", "10.0.0.1", "True",
	    "[{name: http, containerPort: 8080}, {name: dns, containerPort: 53, protocol: UDP}]",
	    NULL);
	long long out = 0;
	cleanup_ynode struct ynode *num = y("{port: 80, targetPort: 9000}");
	assert_int_equal(endpoints_target_port(num, p, &out), 0);
	assert_int_equal(out, 9000);
	cleanup_ynode struct ynode *none = y("{port: 80}");
	assert_int_equal(endpoints_target_port(none, p, &out), 0);
	assert_int_equal(out, 80);
	cleanup_ynode struct ynode *named = y("{port: 80, targetPort: http}");
	assert_int_equal(endpoints_target_port(named, p, &out), 0);
	assert_int_equal(out, 8080);
	cleanup_ynode struct ynode *udp = y("{port: 53, targetPort: dns, protocol: UDP}");
	assert_int_equal(endpoints_target_port(udp, p, &out), 0);
	assert_int_equal(out, 53);
	cleanup_ynode struct ynode *wrong_proto = y("{port: 53, targetPort: dns}");
	assert_int_equal(endpoints_target_port(wrong_proto, p, &out), -1);
	cleanup_ynode struct ynode *missing = y("{port: 80, targetPort: metrics}");
	assert_int_equal(endpoints_target_port(missing, p, &out), -1);
}

static void test_ep__eligible(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *ok = pod("a", "10.0.0.1", "False", "", NULL);
	cleanup_ynode struct ynode *no_ip = pod("b", "", "True", "", NULL);
	cleanup_ynode struct ynode *gone = pod("c", "10.0.0.3", "True", "", NULL);
	ynode_set(ynode_get(gone, "metadata"), "deletionTimestamp",
		  ynode_new_str("2026-01-01T00:00:00Z"));
	cleanup_ynode struct ynode *done = pod("d", "10.0.0.4", "False", "", NULL);
	ynode_set(ynode_get(done, "status"), "phase", ynode_new_str("Succeeded"));
	assert_true(endpoints_pod_eligible(ok, false));
	assert_false(endpoints_pod_eligible(no_ip, false));
	assert_false(endpoints_pod_eligible(gone, false));
	assert_true(endpoints_pod_eligible(gone, true));
	assert_false(endpoints_pod_eligible(done, false));
}

static void test_ep__ready_and_unready(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: web, namespace: dev, labels: {tier: front}}, spec: {clusterIP: "
	      "10.96.0.5, selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}}");
	struct ynode *pods[] = {
	    pod("b", "10.0.0.10", "True", "", NULL),
	    pod("a", "10.0.0.9", "True", "", NULL),
	    pod("c", "10.0.0.11", "False", "", NULL),
	    pod("d", "", "True", "", NULL),
	};
	cleanup_ynode struct ynode *ep = build(svc, pods, 4);
	assert_string_equal(ynode_path_str(ep, "kind"), "Endpoints");
	assert_string_equal(ynode_path_str(ep, "apiVersion"), "v1");
	assert_string_equal(ynode_path_str(ep, "metadata.name"), "web");
	assert_string_equal(ynode_path_str(ep, "metadata.namespace"), "dev");
	assert_string_equal(ynode_path_str(ep, "metadata.labels.tier"), "front");
	assert_int_equal(ynode_path(ep, "subsets")->n, 1);
	cleanup_free char *ready = ips(ep, "subsets[0].addresses");
	cleanup_free char *unready = ips(ep, "subsets[0].notReadyAddresses");
	assert_string_equal(ready, "10.0.0.9 10.0.0.10"); /* by address, not by text */
	assert_string_equal(unready, "10.0.0.11");
	const struct ynode *a0 = ynode_path(ep, "subsets[0].addresses[0]");
	assert_string_equal(ynode_path_str(a0, "nodeName"), "n1");
	assert_string_equal(ynode_path_str(a0, "targetRef.kind"), "Pod");
	assert_string_equal(ynode_path_str(a0, "targetRef.name"), "a");
	assert_string_equal(ynode_path_str(a0, "targetRef.namespace"), "dev");
	assert_string_equal(ynode_path_str(a0, "targetRef.uid"), "uid-a");
	assert_null(ynode_get(a0, "hostname"));
	assert_string_equal(ynode_path_str(ep, "subsets[0].ports[0].port"), "8080");
	assert_string_equal(ynode_path_str(ep, "subsets[0].ports[0].protocol"), "TCP");
	assert_null(ynode_path(ep, "subsets[0].ports[0].name"));
	free_all(pods, 4);
}

static void test_ep__publish_not_ready(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: web, namespace: dev}, spec: {publishNotReadyAddresses: true, "
	      "selector: {app: web}, ports: [{port: 80}]}}");
	struct ynode *pods[] = {
	    pod("a", "10.0.0.1", "False", "", NULL),
	    pod("b", "10.0.0.2", "True", "", NULL),
	};
	cleanup_ynode struct ynode *ep = build(svc, pods, 2);
	cleanup_free char *ready = ips(ep, "subsets[0].addresses");
	assert_string_equal(ready, "10.0.0.1 10.0.0.2");
	assert_null(ynode_path(ep, "subsets[0].notReadyAddresses"));
	free_all(pods, 2);
}

static void test_ep__multi_port_subsets(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: web, namespace: dev}, spec: {selector: {app: web}, ports: [{name: "
	      "metrics, port: 9090, targetPort: metrics}, {name: http, port: 80, targetPort: "
	      "http}]}}");
	/* Two pods serve both ports (on different numbers), one only http. */
	struct ynode *pods[] = {
	    pod("a", "10.0.0.1", "True",
		"[{name: http, containerPort: 8080}, {name: metrics, "
		"containerPort: 9100}]",
		NULL),
	    pod("b", "10.0.0.2", "False",
		"[{name: http, containerPort: 8080}, {name: metrics, containerPort: 9100}]", NULL),
	    pod("c", "10.0.0.3", "True", "[{name: http, containerPort: 8081}]", NULL),
	    pod("d", "10.0.0.4", "True", "[{name: other, containerPort: 1}]", NULL),
	};
	cleanup_ynode struct ynode *ep = build(svc, pods, 4);
	const struct ynode *subsets = ynode_path(ep, "subsets");
	assert_int_equal(subsets->n, 2); /* d serves no port of the service */
	/* Sorted by port set: "http/8080/TCP;metrics/9100/TCP;" < "http/8081/TCP;" */
	cleanup_free char *r0 = ips(ep, "subsets[0].addresses");
	cleanup_free char *u0 = ips(ep, "subsets[0].notReadyAddresses");
	cleanup_free char *r1 = ips(ep, "subsets[1].addresses");
	assert_string_equal(r0, "10.0.0.1");
	assert_string_equal(u0, "10.0.0.2");
	assert_string_equal(r1, "10.0.0.3");
	assert_int_equal(ynode_path(ep, "subsets[0].ports")->n, 2);
	assert_string_equal(ynode_path_str(ep, "subsets[0].ports[0].name"), "http");
	assert_string_equal(ynode_path_str(ep, "subsets[0].ports[0].port"), "8080");
	assert_string_equal(ynode_path_str(ep, "subsets[0].ports[1].name"), "metrics");
	assert_string_equal(ynode_path_str(ep, "subsets[0].ports[1].port"), "9100");
	assert_int_equal(ynode_path(ep, "subsets[1].ports")->n, 1);
	assert_string_equal(ynode_path_str(ep, "subsets[1].ports[0].port"), "8081");
	free_all(pods, 4);
}

static void test_ep__hostname_with_subdomain(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: db, namespace: dev}, spec: {clusterIP: None, selector: {app: "
	      "web}, ports: [{port: 5432}]}}");
	struct ynode *pods[] = {
	    pod("db-0", "10.0.0.1", "True", "", "hostname: db-0, subdomain: db,"),
	    pod("x", "10.0.0.2", "True", "", "hostname: x, subdomain: other,"),
	};
	cleanup_ynode struct ynode *ep = build(svc, pods, 2);
	assert_string_equal(ynode_path_str(ep, "subsets[0].addresses[0].hostname"), "db-0");
	assert_null(ynode_path(ep, "subsets[0].addresses[1].hostname"));
	assert_non_null(ynode_path(ep, "metadata.labels"));
	assert_non_null(ynode_get(ynode_path(ep, "metadata.labels"), ENDPOINTS_HEADLESS_LABEL));
	free_all(pods, 2);
}

static void test_ep__headless_without_ports(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *hl =
	    y("{metadata: {name: hl, namespace: dev}, spec: {clusterIP: None, selector: {app: "
	      "web}}}");
	cleanup_ynode struct ynode *plain =
	    y("{metadata: {name: p, namespace: dev}, spec: {selector: {app: web}}}");
	struct ynode *pods[] = {pod("a", "10.0.0.1", "True", "", NULL)};
	cleanup_ynode struct ynode *ep = build(hl, pods, 1);
	cleanup_free char *r = ips(ep, "subsets[0].addresses");
	assert_string_equal(r, "10.0.0.1");
	assert_null(ynode_path(ep, "subsets[0].ports"));
	cleanup_ynode struct ynode *none = build(plain, pods, 1);
	assert_null(ynode_get(none, "subsets"));
	assert_null(ynode_path(none, "metadata.labels"));
	free_all(pods, 1);
}

static void test_ep__stable_order(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: web, namespace: dev}, spec: {selector: {app: web}, ports: [{name: "
	      "b, port: 81}, {name: a, port: 80}]}}");
	struct ynode *pods[] = {
	    pod("p1", "10.0.1.1", "True", "", NULL),
	    pod("p2", "10.0.0.200", "False", "", NULL),
	    pod("p3", "10.0.0.3", "True", "", NULL),
	    pod("p4", "10.0.0.20", "True", "", NULL),
	};
	struct ynode *reversed[] = {pods[3], pods[2], pods[1], pods[0]};
	cleanup_ynode struct ynode *e1 = build(svc, pods, 4);
	cleanup_ynode struct ynode *e2 = build(svc, reversed, 4);
	assert_true(ynode_equal(e1, e2));
	/* Emitted, the texts are the same too (what a write would compare). */
	cleanup_free char *t1 = yaml_emit(e1, NULL);
	cleanup_free char *t2 = yaml_emit(e2, NULL);
	assert_string_equal(t1, t2);
	cleanup_free char *r = ips(e1, "subsets[0].addresses");
	assert_string_equal(r, "10.0.0.3 10.0.0.20 10.0.1.1");
	assert_string_equal(ynode_path_str(e1, "subsets[0].ports[0].name"), "a");
	/* One pod turning ready changes the result. */
	ynode_set(ynode_path(pods[1], "status.conditions[0]"), "status", ynode_new_str("True"));
	cleanup_ynode struct ynode *e3 = build(svc, pods, 4);
	assert_false(ynode_equal(e1, e3));
	free_all(pods, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ep__target_port),
	    cmocka_unit_test(test_ep__eligible),
	    cmocka_unit_test(test_ep__ready_and_unready),
	    cmocka_unit_test(test_ep__publish_not_ready),
	    cmocka_unit_test(test_ep__multi_port_subsets),
	    cmocka_unit_test(test_ep__hostname_with_subdomain),
	    cmocka_unit_test(test_ep__headless_without_ports),
	    cmocka_unit_test(test_ep__stable_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
