/* test_ctrl_serviceip.c: the ClusterIP and nodePort allocator and the
 * plans it makes for services: reserved addresses, requested,
 * clashing and out-of-range addresses, release, a full range, the
 * derivation at start from confirmed services, and nodePorts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serviceip.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static struct svcip_alloc *alloc16(void)
{
	struct servicerange r;
	if (servicerange_parse("10.96.0.0/16", &r, NULL) < 0)
		fail();
	return svcip_alloc_new(&r, 30000, 32767);
}

static void test_svcip__skips_reserved_addresses(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	char buf[16], key[32];
	/* .0 is the network, .1 the kubernetes service's, .10 the DNS's. */
	for (int i = 2; i <= 11; i++) {
		if (i == 10)
			continue;
		snprintf(key, sizeof(key), "dev/s%d", i);
		assert_int_equal(svcip_allocate_ip(a, key, buf), 0);
		char want[16];
		snprintf(want, sizeof(want), "10.96.0.%d", i);
		assert_string_equal(buf, want);
	}
	/* Asking again gives an owner the address it holds. */
	assert_int_equal(svcip_allocate_ip(a, "dev/s2", buf), 0);
	assert_string_equal(buf, "10.96.0.2");
	assert_int_equal(svcip_ips_in_use(a), 9);
	/* The reserved ones go to whoever asks for them by name. */
	assert_int_equal(svcip_claim_ip(a, "10.96.0.10", "kube-system/kube-dns", NULL), 0);
	assert_int_equal(svcip_claim_ip(a, "10.96.0.1", "default/kubernetes", NULL), 0);
	svcip_alloc_free(a);
}

static void test_svcip__requested_clash_and_range(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	const char *holder = NULL;
	assert_int_equal(svcip_claim_ip(a, "10.96.3.4", "dev/a", &holder), 0);
	assert_int_equal(svcip_claim_ip(a, "10.96.3.4", "dev/a", &holder), 0);
	assert_int_equal(svcip_claim_ip(a, "10.96.3.4", "dev/b", &holder), -EEXIST);
	assert_string_equal(holder, "dev/a");
	assert_int_equal(svcip_claim_ip(a, "10.97.0.1", "dev/b", NULL), -ERANGE);
	assert_int_equal(svcip_claim_ip(a, "10.96.0.0", "dev/b", NULL), -ERANGE);
	assert_int_equal(svcip_claim_ip(a, "10.96.255.255", "dev/b", NULL), -ERANGE);
	assert_int_equal(svcip_claim_ip(a, "10.96.0.300", "dev/b", NULL), -EINVAL);
	assert_int_equal(svcip_claim_ip(a, "fd00::1", "dev/b", NULL), -EINVAL);
	/* An owner holds one address: claiming another frees the first. */
	assert_int_equal(svcip_claim_ip(a, "10.96.3.5", "dev/a", NULL), 0);
	assert_int_equal(svcip_claim_ip(a, "10.96.3.4", "dev/b", NULL), 0);
	assert_int_equal(svcip_ips_in_use(a), 2);
	svcip_alloc_free(a);
}

static void test_svcip__request_takes_unwritten_allocation(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	char buf[16];
	const char *holder = NULL;
	/* Handed to dev/auto, whose write is in flight... */
	assert_int_equal(svcip_allocate_ip(a, "dev/auto", buf), 0);
	assert_string_equal(buf, "10.96.0.2");
	/* ... when dev/asks, stored asking for it, is seen: it wins. */
	assert_int_equal(svcip_claim_ip(a, "10.96.0.2", "dev/asks", &holder), 1);
	assert_string_equal(holder, "dev/auto");
	assert_int_equal(svcip_ip_of(a, "dev/auto", buf), -ENOENT);
	assert_int_equal(svcip_allocate_ip(a, "dev/auto", buf), 0);
	assert_string_equal(buf, "10.96.0.3");
	/* Once dev/auto's spec shows it (it claims it), it is not taken. */
	assert_int_equal(svcip_claim_ip(a, "10.96.0.3", "dev/auto", NULL), 0);
	assert_int_equal(svcip_claim_ip(a, "10.96.0.3", "dev/late", &holder), -EEXIST);
	assert_string_equal(holder, "dev/auto");
	/* Nor is a requested one. */
	assert_int_equal(svcip_claim_ip(a, "10.96.0.2", "dev/late", &holder), -EEXIST);
	assert_int_equal(svcip_ips_in_use(a), 2);
	svcip_alloc_free(a);
}

static void test_svcip__plan_takes_unwritten_allocation(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *autos =
	    y("{metadata: {name: auto, namespace: dev}, spec: {ports: [{port: 80}]}}");
	cleanup_ynode struct ynode *asks =
	    y("{metadata: {name: asks, namespace: dev}, spec: {clusterIP: 10.96.0.2, ports: "
	      "[{port: 80}]}}");
	struct svcip_plan p1, p2;
	svcip_plan_service(a, "dev/auto", autos, &p1);
	assert_string_equal(p1.ip, "10.96.0.2");
	svcip_plan_service(a, "dev/asks", asks, &p2);
	assert_string_equal(p2.status, "True");
	assert_string_equal(p2.evicted, "dev/auto");
	svcip_plan_clear(&p1);
	svcip_plan_clear(&p2);
	/* dev/auto, synced again, gets another address. */
	svcip_plan_service(a, "dev/auto", autos, &p1);
	assert_string_equal(p1.ip, "10.96.0.3");
	assert_null(p1.evicted);
	svcip_plan_clear(&p1);
	svcip_alloc_free(a);
}

static void test_svcip__release_and_reuse(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	char buf[16];
	assert_int_equal(svcip_claim_ip(a, "10.96.0.50", "dev/a", NULL), 0);
	assert_int_equal(svcip_claim_ip(a, "10.96.0.50", "dev/b", NULL), -EEXIST);
	svcip_release(a, "dev/a");
	assert_int_equal(svcip_ips_in_use(a), 0);
	assert_int_equal(svcip_ip_of(a, "dev/a", buf), -ENOENT);
	assert_int_equal(svcip_claim_ip(a, "10.96.0.50", "dev/b", NULL), 0);
	assert_int_equal(svcip_ip_of(a, "dev/b", buf), 0);
	assert_string_equal(buf, "10.96.0.50");
	svcip_alloc_free(a);
}

static void test_svcip__full_range(void **state)
{
	(void)state;
	/* A /28: 16 addresses, less the network, broadcast, .1 and .10. */
	struct servicerange r;
	assert_int_equal(servicerange_parse("10.96.0.0/28", &r, NULL), 0);
	struct svcip_alloc *a = svcip_alloc_new(&r, 30000, 30001);
	char buf[16], key[32];
	for (int i = 0; i < 12; i++) {
		snprintf(key, sizeof(key), "dev/s%d", i);
		assert_int_equal(svcip_allocate_ip(a, key, buf), 0);
		assert_string_not_equal(buf, "10.96.0.1");
		assert_string_not_equal(buf, "10.96.0.10");
		assert_string_not_equal(buf, "10.96.0.15");
	}
	assert_int_equal(svcip_allocate_ip(a, "dev/one-more", buf), -ENOSPC);
	svcip_release_ip(a, "dev/s4");
	assert_int_equal(svcip_allocate_ip(a, "dev/one-more", buf), 0);
	int p1 = 0, p2 = 0, p3 = 0;
	assert_int_equal(svcip_allocate_port(a, "dev/x", &p1), 0);
	assert_int_equal(svcip_allocate_port(a, "dev/x", &p2), 0);
	assert_int_not_equal(p1, p2);
	assert_int_equal(svcip_allocate_port(a, "dev/y", &p3), -ENOSPC);
	svcip_alloc_free(a);
}

static void test_svcip__node_ports(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	const char *holder = NULL;
	int p = 0;
	assert_int_equal(svcip_claim_port(a, 31002, "dev/a", NULL), 0);
	assert_int_equal(svcip_claim_port(a, 31002, "dev/b", &holder), -EEXIST);
	assert_string_equal(holder, "dev/a");
	assert_int_equal(svcip_claim_port(a, 29999, "dev/b", NULL), -ERANGE);
	assert_int_equal(svcip_claim_port(a, 32768, "dev/b", NULL), -ERANGE);
	assert_int_equal(svcip_allocate_port(a, "dev/b", &p), 0);
	assert_true(p >= 30000 && p <= 32767 && p != 31002);
	int keep[] = {31002};
	assert_int_equal(svcip_claim_port(a, 31003, "dev/a", NULL), 0);
	svcip_release_ports_except(a, "dev/a", keep, 1);
	assert_int_equal(svcip_claim_port(a, 31003, "dev/b", NULL), 0);
	assert_int_equal(svcip_claim_port(a, 31002, "dev/b", NULL), -EEXIST);
	assert_int_equal(svcip_ports_in_use(a), 3);
	svcip_alloc_free(a);
}

static const char *condition(const struct ynode *svc, const char *field)
{
	const struct ynode *conds = ynode_path(svc, "status.conditions");
	for (size_t i = 0; conds && i < conds->n; i++)
		if (!strcmp(ynode_path_str(ynode_item(conds, i), "type"), SVCIP_CONDITION))
			return ynode_path_str(ynode_item(conds, i), field);
	return NULL;
}

/* Plans for svc and applies the plan; returns the plan's status. */
static const char *plan_and_apply(struct svcip_alloc *a, const char *key, struct ynode *svc)
{
	struct svcip_plan plan;
	svcip_plan_service(a, key, svc, &plan);
	const char *st = plan.status;
	svcip_apply_plan(svc, &plan, 1700000000);
	svcip_plan_clear(&plan);
	return st;
}

static void test_svcip__plan_allocates_and_writes(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: web, namespace: dev}, spec: {type: ClusterIP, ports: [{port: "
	      "80}]}}");
	assert_string_equal(plan_and_apply(a, "dev/web", svc), "True");
	assert_string_equal(ynode_path_str(svc, "spec.clusterIP"), "10.96.0.2");
	assert_string_equal(ynode_path_str(svc, "spec.clusterIPs[0]"), "10.96.0.2");
	assert_string_equal(condition(svc, "status"), "True");
	assert_string_equal(condition(svc, "reason"), "Allocated");
	/* Planned again (the informer shows the write): nothing to change. */
	struct svcip_plan plan;
	svcip_plan_service(a, "dev/web", svc, &plan);
	assert_int_equal(svcip_apply_plan(svc, &plan, 1700000001), 0);
	svcip_plan_clear(&plan);
	assert_int_equal(svcip_ips_in_use(a), 1);
	svcip_alloc_free(a);
}

static void test_svcip__plan_in_flight_allocates_once(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {name: np, namespace: dev}, spec: {type: NodePort, ports: [{name: a, "
	      "port: 80}, {name: b, port: 81}]}}");
	struct svcip_plan p1, p2;
	/* Two syncs of the unchanged service (its write still in flight). */
	svcip_plan_service(a, "dev/np", svc, &p1);
	svcip_plan_service(a, "dev/np", svc, &p2);
	assert_string_equal(p1.ip, p2.ip);
	assert_int_equal(p1.nports, 2);
	assert_int_equal(p2.nports, 2);
	assert_int_equal(p1.ports[0].node_port, p2.ports[0].node_port);
	assert_int_equal(p1.ports[1].node_port, p2.ports[1].node_port);
	assert_int_not_equal(p1.ports[0].node_port, p1.ports[1].node_port);
	assert_int_equal(svcip_ips_in_use(a), 1);
	assert_int_equal(svcip_ports_in_use(a), 2);
	assert_int_equal(svcip_apply_plan(svc, &p1, 1700000000), 1);
	long long np = 0;
	assert_int_equal(ynode_int(ynode_path(svc, "spec.ports[1].nodePort"), &np), 0);
	assert_int_equal(np, p1.ports[1].node_port);
	svcip_plan_clear(&p1);
	svcip_plan_clear(&p2);
	/* Turned into a ClusterIP service: its ports go back. */
	ynode_set(ynode_get(svc, "spec"), "type", ynode_new_str("ClusterIP"));
	assert_string_equal(plan_and_apply(a, "dev/np", svc), "True");
	assert_int_equal(svcip_ports_in_use(a), 0);
	svcip_alloc_free(a);
}

static void test_svcip__plan_refuses_clash_and_range(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *first =
	    y("{metadata: {name: a, namespace: dev}, spec: {clusterIP: 10.96.0.50, ports: [{port: "
	      "80}]}}");
	cleanup_ynode struct ynode *clash =
	    y("{metadata: {name: b, namespace: dev}, spec: {clusterIP: 10.96.0.50, ports: [{port: "
	      "80}]}}");
	cleanup_ynode struct ynode *far =
	    y("{metadata: {name: c, namespace: dev}, spec: {clusterIP: 10.97.0.50, ports: [{port: "
	      "80}]}}");
	assert_string_equal(plan_and_apply(a, "dev/a", first), "True");
	assert_string_equal(ynode_path_str(first, "spec.clusterIPs[0]"), "10.96.0.50");
	assert_string_equal(plan_and_apply(a, "dev/b", clash), "False");
	assert_string_equal(condition(clash, "reason"), "ClusterIPAlreadyAllocated");
	assert_non_null(strstr(condition(clash, "message"),
			       "spec.clusterIP: Invalid value: \"10.96.0.50\": provided IP is "
			       "already allocated (to service dev/a)"));
	assert_null(ynode_path(clash, "spec.clusterIPs"));
	assert_string_equal(plan_and_apply(a, "dev/c", far), "False");
	assert_string_equal(condition(far, "reason"), "ClusterIPOutOfRange");
	assert_non_null(
	    strstr(condition(far, "message"), "The range of valid IPs is 10.96.0.0/16"));
	/* Once the holder goes, the refused one gets it. */
	svcip_release(a, "dev/a");
	assert_string_equal(plan_and_apply(a, "dev/b", clash), "True");
	assert_string_equal(condition(clash, "reason"), "Allocated");
	assert_string_equal(condition(clash, "message"), "");
	svcip_alloc_free(a);
}

static void test_svcip__plan_headless_and_external(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *hl =
	    y("{metadata: {name: hl, namespace: dev}, spec: {clusterIP: None, selector: {app: "
	      "x}}}");
	cleanup_ynode struct ynode *ext =
	    y("{metadata: {name: ext, namespace: dev}, spec: {type: ExternalName, externalName: "
	      "example.com}}");
	assert_string_equal(plan_and_apply(a, "dev/hl", hl), "True");
	assert_string_equal(ynode_path_str(hl, "spec.clusterIP"), "None");
	assert_null(ynode_path(hl, "spec.clusterIPs"));
	assert_null(plan_and_apply(a, "dev/ext", ext));
	assert_null(ynode_path(ext, "status"));
	assert_int_equal(svcip_ips_in_use(a), 0);
	svcip_alloc_free(a);
}

static void test_svcip__plan_node_port_refusals(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *one =
	    y("{metadata: {name: one, namespace: dev}, spec: {type: NodePort, ports: [{port: 80, "
	      "nodePort: 31002}]}}");
	cleanup_ynode struct ynode *two =
	    y("{metadata: {name: two, namespace: dev}, spec: {type: LoadBalancer, ports: [{port: "
	      "80, nodePort: 31002}]}}");
	assert_string_equal(plan_and_apply(a, "dev/one", one), "True");
	assert_string_equal(plan_and_apply(a, "dev/two", two), "False");
	assert_string_equal(condition(two, "reason"), "NodePortAlreadyAllocated");
	assert_non_null(strstr(condition(two, "message"), "spec.ports[0].nodePort"));
	/* The address is still given: only the port was refused. */
	assert_non_null(ynode_path_str(two, "spec.clusterIP"));
	svcip_alloc_free(a);
}

static void test_svcip__restart_derives_from_services(void **state)
{
	(void)state;
	/* A first controller allocates... */
	struct svcip_alloc *a = alloc16();
	struct ynode *svcs[3];
	const char *keys[] = {"dev/a", "dev/b", "dev/c"};
	for (int i = 0; i < 3; i++) {
		svcs[i] = y("{metadata: {namespace: dev}, spec: {type: NodePort, ports: [{port: "
			    "80}]}}");
		assert_string_equal(plan_and_apply(a, keys[i], svcs[i]), "True");
	}
	svcip_alloc_free(a);
	/* ... a second one starts from the services alone, in any order. */
	a = alloc16();
	for (int i = 2; i >= 0; i--)
		svcip_claim_existing(a, keys[i], svcs[i]);
	assert_int_equal(svcip_ips_in_use(a), 3);
	assert_int_equal(svcip_ports_in_use(a), 3);
	for (int i = 0; i < 3; i++) {
		char buf[16];
		assert_int_equal(svcip_ip_of(a, keys[i], buf), 0);
		assert_string_equal(buf, ynode_path_str(svcs[i], "spec.clusterIP"));
	}
	/* A new service gets none of theirs. */
	cleanup_ynode struct ynode *fresh =
	    y("{metadata: {namespace: dev}, spec: {type: NodePort, ports: [{port: 80}]}}");
	assert_string_equal(plan_and_apply(a, "dev/d", fresh), "True");
	for (int i = 0; i < 3; i++) {
		assert_string_not_equal(ynode_path_str(fresh, "spec.clusterIP"),
					ynode_path_str(svcs[i], "spec.clusterIP"));
		assert_string_not_equal(ynode_path_str(fresh, "spec.ports[0].nodePort"),
					ynode_path_str(svcs[i], "spec.ports[0].nodePort"));
	}
	/* One that asks for a confirmed address is refused, whatever its key. */
	cleanup_ynode struct ynode *late =
	    y("{metadata: {namespace: aaa}, spec: {ports: [{port: 80}]}}");
	ynode_set(ynode_get(late, "spec"), "clusterIP",
		  ynode_new_str(ynode_path_str(svcs[1], "spec.clusterIP")));
	assert_string_equal(plan_and_apply(a, "aaa/late", late), "False");
	/* A service never confirmed claims nothing at start. */
	cleanup_ynode struct ynode *unconfirmed =
	    y("{metadata: {namespace: dev}, spec: {clusterIP: 10.96.9.9}}");
	svcip_claim_existing(a, "dev/u", unconfirmed);
	assert_int_equal(svcip_ips_in_use(a), 4);
	for (int i = 0; i < 3; i++)
		ynode_free(svcs[i]);
	svcip_alloc_free(a);
}

static void test_svcip__condition_keeps_transition_time(void **state)
{
	(void)state;
	struct svcip_alloc *a = alloc16();
	cleanup_ynode struct ynode *svc =
	    y("{metadata: {namespace: dev}, spec: {clusterIP: 10.96.1.1, ports: [{port: 80}]}, "
	      "status: {conditions: [{type: Other, status: 'True'}, {type: Allocated, status: "
	      "'False', reason: ClusterIPAlreadyAllocated, message: x, lastTransitionTime: "
	      "'2020-01-01T00:00:00Z'}]}}");
	assert_string_equal(plan_and_apply(a, "dev/s", svc), "True");
	assert_string_equal(condition(svc, "lastTransitionTime"), "2023-11-14T22:13:20Z");
	assert_string_equal(ynode_path_str(svc, "status.conditions[0].type"), "Other");
	assert_int_equal(ynode_path(svc, "status.conditions")->n, 2);
	svcip_alloc_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_svcip__skips_reserved_addresses),
	    cmocka_unit_test(test_svcip__requested_clash_and_range),
	    cmocka_unit_test(test_svcip__request_takes_unwritten_allocation),
	    cmocka_unit_test(test_svcip__plan_takes_unwritten_allocation),
	    cmocka_unit_test(test_svcip__release_and_reuse),
	    cmocka_unit_test(test_svcip__full_range),
	    cmocka_unit_test(test_svcip__node_ports),
	    cmocka_unit_test(test_svcip__plan_allocates_and_writes),
	    cmocka_unit_test(test_svcip__plan_in_flight_allocates_once),
	    cmocka_unit_test(test_svcip__plan_refuses_clash_and_range),
	    cmocka_unit_test(test_svcip__plan_headless_and_external),
	    cmocka_unit_test(test_svcip__plan_node_port_refusals),
	    cmocka_unit_test(test_svcip__restart_derives_from_services),
	    cmocka_unit_test(test_svcip__condition_keeps_transition_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
