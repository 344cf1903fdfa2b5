/* test_noded_node.c: the Node object and Lease that corral-noded writes —
 * conditions (lastTransitionTime kept while a status holds,
 * lastHeartbeatTime moving), the object built for a new node and brought
 * up to date on a stored one (others' labels, spec, conditions and status
 * fields kept, podCIDR never replaced), the Lease with its podCIDR claim,
 * and reading podCIDRs held and claimed by other nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "conditions.h"
#include "node.h"
#include "testlib.h"
#include "timefmt.h"
#include "util.h"

#define T0 1796000000 /* 2026-11-30T... */

static struct machine_info info = {
    .machine_id = "mid",
    .system_uuid = "uuid",
    .boot_id = "boot",
    .kernel_version = "6.1.0",
    .os_image = "Debian GNU/Linux 12 (bookworm)",
    .architecture = "amd64",
};

static struct node_facts facts(void)
{
	struct node_facts f = {
	    .name = "hollow-1",
	    .hollow = true,
	    .capacity = {1000, 4026531840LL * 1000, 0, 110000},
	    .allocatable = {1000, 4026531840LL * 1000, 0, 110000},
	    .info = &info,
	    .runtime_version = "hollow://0.1.0",
	    .host_ip = "192.0.2.2",
	    .pod_cidr = "10.244.7.0/24",
	    .ready = true,
	    .ready_reason = "KubeletReady",
	    .ready_message = "kubelet is posting ready status",
	};
	return f;
}

static void test_node_object__new_node(void **state)
{
	(void)state;
	struct node_facts f = facts();
	cleanup_ynode struct ynode *n = ynode_new_map();
	node_object_apply(n, &f, T0);
	assert_string_equal(str(n, "apiVersion"), "v1");
	assert_string_equal(str(n, "kind"), "Node");
	assert_string_equal(str(n, "metadata.name"), "hollow-1");
	const struct ynode *labels = ynode_path(n, "metadata.labels");
	assert_string_equal(ynode_str(ynode_get(labels, "kubernetes.io/hostname")), "hollow-1");
	assert_string_equal(ynode_str(ynode_get(labels, "kubernetes.io/os")), "linux");
	assert_string_equal(ynode_str(ynode_get(labels, "kubernetes.io/arch")), "amd64");
	assert_string_equal(ynode_str(ynode_get(labels, "corral.io/hollow")), "true");
	assert_string_equal(str(n, "spec.podCIDR"), "10.244.7.0/24");
	assert_string_equal(str(n, "spec.podCIDRs[0]"), "10.244.7.0/24");
	/* kubemark's hollow sizes, as Kubernetes prints quantities */
	assert_string_equal(str(n, "status.capacity.cpu"), "1");
	assert_string_equal(str(n, "status.capacity.memory"), "3840Mi");
	assert_string_equal(str(n, "status.capacity.pods"), "110");
	assert_string_equal(str(n, "status.capacity.ephemeral-storage"), "0");
	assert_string_equal(str(n, "status.allocatable.memory"), "3840Mi");

	static const char *const types[] = {"MemoryPressure", "DiskPressure", "PIDPressure",
					    "Ready"};
	static const char *const statuses[] = {"False", "False", "False", "True"};
	const struct ynode *conds = ynode_path(n, "status.conditions");
	assert_int_equal(conds->n, 4);
	char now[RFC3339_SIZE];
	rfc3339_format(T0, now);
	for (size_t i = 0; i < 4; i++) {
		const struct ynode *c = ynode_item(conds, i);
		assert_string_equal(str(c, "type"), types[i]);
		assert_string_equal(str(c, "status"), statuses[i]);
		assert_string_equal(str(c, "lastHeartbeatTime"), now);
		assert_string_equal(str(c, "lastTransitionTime"), now);
		assert_non_null(ynode_get(c, "reason"));
		assert_non_null(ynode_get(c, "message"));
	}
	assert_string_equal(str(n, "status.conditions[3].reason"), "KubeletReady");
	assert_string_equal(str(n, "status.addresses[0].type"), "InternalIP");
	assert_string_equal(str(n, "status.addresses[0].address"), "192.0.2.2");
	assert_string_equal(str(n, "status.addresses[1].type"), "Hostname");
	assert_string_equal(str(n, "status.addresses[1].address"), "hollow-1");
	assert_string_equal(str(n, "status.nodeInfo.containerRuntimeVersion"), "hollow://0.1.0");
	assert_string_equal(str(n, "status.nodeInfo.operatingSystem"), "linux");
	assert_string_equal(str(n, "status.nodeInfo.architecture"), "amd64");
	assert_string_equal(str(n, "status.nodeInfo.machineID"), "mid");
	assert_string_equal(str(n, "status.nodeInfo.bootID"), "boot");
	assert_string_equal(str(n, "status.nodeInfo.osImage"), "Debian GNU/Linux 12 (bookworm)");
	assert_non_null(ynode_path(n, "status.nodeInfo.kubeletVersion"));

	/* what is emitted reads back the same (strings that look like
	 * numbers or booleans stay strings) */
	cleanup_free char *text = yaml_emit(n, NULL);
	cleanup_ynode struct ynode *back = y(text);
	assert_true(ynode_equal(n, back));
	assert_true(ynode_path(back, "status.capacity.cpu")->quoted);
	assert_true(ynode_path(back, "status.conditions[0].status")->quoted);
}

static void test_node_object__heartbeat_moves_only_heartbeat_times(void **state)
{
	(void)state;
	struct node_facts f = facts();
	cleanup_ynode struct ynode *n = ynode_new_map();
	node_object_apply(n, &f, T0);
	cleanup_ynode struct ynode *before = ynode_clone(n);
	node_object_apply(n, &f, T0 + 10);
	char t0[RFC3339_SIZE], t1[RFC3339_SIZE];
	rfc3339_format(T0, t0);
	rfc3339_format(T0 + 10, t1);
	const struct ynode *conds = ynode_path(n, "status.conditions");
	for (size_t i = 0; i < conds->n; i++) {
		assert_string_equal(str(ynode_item(conds, i), "lastTransitionTime"), t0);
		assert_string_equal(str(ynode_item(conds, i), "lastHeartbeatTime"), t1);
	}
	/* nothing but the heartbeat times changed: spec and metadata alike */
	assert_true(ynode_equal(ynode_get(n, "spec"), ynode_get(before, "spec")));
	assert_true(ynode_equal(ynode_get(n, "metadata"), ynode_get(before, "metadata")));

	/* the runtime stops being ready: Ready turns False, a transition */
	f.ready = false;
	f.ready_reason = "KubeletNotReady";
	f.ready_message = "container runtime is not ready";
	node_object_apply(n, &f, T0 + 20);
	char t2[RFC3339_SIZE];
	rfc3339_format(T0 + 20, t2);
	const struct ynode *ready = condition_find(ynode_path(n, "status.conditions"), "Ready");
	assert_string_equal(str(ready, "status"), "False");
	assert_string_equal(str(ready, "reason"), "KubeletNotReady");
	assert_string_equal(str(ready, "lastTransitionTime"), t2);
	const struct ynode *mem =
	    condition_find(ynode_path(n, "status.conditions"), "MemoryPressure");
	assert_string_equal(str(mem, "lastTransitionTime"), t0);
}

static void test_node_object__keeps_what_others_wrote(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *n =
	    y("apiVersion: v1\n"
	      "kind: Node\n"
	      "metadata:\n"
	      "  name: hollow-1\n"
	      "  uid: u-1\n"
	      "  resourceVersion: '42'\n"
	      "  labels: {zone: a, kubernetes.io/hostname: old}\n"
	      "spec:\n"
	      "  podCIDR: 10.244.3.0/24\n"
	      "  podCIDRs: [10.244.3.0/24]\n"
	      "  unschedulable: true\n"
	      "  taints: [{key: k, effect: NoSchedule}]\n"
	      "status:\n"
	      "  images: [{names: [x]}]\n"
	      "  conditions:\n"
	      "  - {type: NetworkUnavailable, status: 'False', lastTransitionTime: T}\n"
	      "  - {type: Ready, status: Unknown, lastTransitionTime: T,\n"
	      "     lastHeartbeatTime: T, reason: NodeStatusUnknown}\n");
	struct node_facts f = facts();
	node_object_apply(n, &f, T0);
	assert_string_equal(str(n, "metadata.uid"), "u-1");
	assert_string_equal(str(n, "metadata.resourceVersion"), "42");
	assert_string_equal(str(n, "metadata.labels.zone"), "a");
	assert_string_equal(
	    ynode_str(ynode_get(ynode_path(n, "metadata.labels"), "kubernetes.io/hostname")),
	    "hollow-1");
	/* a podCIDR is immutable: the stored one stays */
	assert_string_equal(str(n, "spec.podCIDR"), "10.244.3.0/24");
	assert_string_equal(str(n, "spec.podCIDRs[0]"), "10.244.3.0/24");
	assert_string_equal(str(n, "spec.unschedulable"), "true");
	assert_string_equal(str(n, "spec.taints[0].key"), "k");
	assert_string_equal(str(n, "status.images[0].names[0]"), "x");
	const struct ynode *conds = ynode_path(n, "status.conditions");
	assert_int_equal(conds->n, 5);
	const struct ynode *net = condition_find(conds, "NetworkUnavailable");
	assert_non_null(net);
	assert_string_equal(str(net, "lastTransitionTime"), "T");
	/* Unknown (the controller's verdict) to True is a transition */
	const struct ynode *ready = condition_find(conds, "Ready");
	char now[RFC3339_SIZE];
	rfc3339_format(T0, now);
	assert_string_equal(str(ready, "status"), "True");
	assert_string_equal(str(ready, "lastTransitionTime"), now);
}

static void test_node_object__real_node_without_pod_cidr(void **state)
{
	(void)state;
	struct node_facts f = facts();
	f.hollow = false;
	f.pod_cidr = NULL;
	cleanup_ynode struct ynode *n = ynode_new_map();
	node_object_apply(n, &f, T0);
	assert_null(ynode_path(n, "spec.podCIDR"));
	assert_null(ynode_get(ynode_path(n, "metadata.labels"), "corral.io/hollow"));
}

/* A node that serves its logs says where (remotelogs.h reads it); one
 * that stopped serving says so by leaving the field out. */
static void test_node_object__daemon_endpoint_only_when_served(void **state)
{
	(void)state;
	struct node_facts f = facts();
	cleanup_ynode struct ynode *n = ynode_new_map();
	node_object_apply(n, &f, T0);
	assert_null(ynode_path(n, "status.daemonEndpoints"));
	f.daemon_port = 10250;
	node_object_apply(n, &f, T0);
	assert_string_equal(str(n, "status.daemonEndpoints.kubeletEndpoint.Port"), "10250");
	f.daemon_port = 0;
	node_object_apply(n, &f, T0 + 10);
	assert_null(ynode_path(n, "status.daemonEndpoints"));
}

static void test_node_lease__claim_and_owner(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *l = node_lease_build("n1", "10.244.5.0/24", NULL, 40, T0);
	assert_string_equal(str(l, "apiVersion"), "coordination.k8s.io/v1");
	assert_string_equal(str(l, "kind"), "Lease");
	assert_string_equal(str(l, "metadata.name"), "n1");
	assert_string_equal(str(l, "metadata.namespace"), NODE_LEASE_NAMESPACE);
	assert_string_equal(
	    ynode_str(ynode_get(ynode_path(l, "metadata.annotations"), NODE_CLAIM_ANNOTATION)),
	    "10.244.5.0/24");
	assert_null(ynode_path(l, "metadata.ownerReferences"));
	assert_string_equal(str(l, "spec.holderIdentity"), "n1");
	assert_string_equal(str(l, "spec.leaseDurationSeconds"), "40");
	char renew[RFC3339_MICRO_SIZE];
	rfc3339_format_micro((int64_t)T0 * 1000000, renew);
	assert_string_equal(str(l, "spec.renewTime"), renew);

	cleanup_ynode struct ynode *owned = node_lease_build("n1", NULL, "u-1", 40, T0);
	assert_null(ynode_path(owned, "metadata.annotations"));
	assert_string_equal(str(owned, "metadata.ownerReferences[0].kind"), "Node");
	assert_string_equal(str(owned, "metadata.ownerReferences[0].uid"), "u-1");
	assert_string_equal(str(owned, "metadata.ownerReferences[0].name"), "n1");
}

static void test_node_cidrs__held_and_claimed(void **state)
{
	(void)state;
	cleanup_free struct cidr *v = NULL;
	size_t n = 0;
	cleanup_ynode struct ynode *a =
	    y("spec: {podCIDR: 10.244.1.0/24, podCIDRs: [10.244.1.0/24, 10.245.0.0/24]}\n");
	cleanup_ynode struct ynode *b = y("spec: {podCIDR: not-a-cidr}\n");
	cleanup_ynode struct ynode *c = y("spec: {}\n");
	node_cidrs_held(a, &v, &n);
	node_cidrs_held(b, &v, &n);
	node_cidrs_held(c, &v, &n);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].addr, 0x0af40100);
	assert_int_equal(v[1].addr, 0x0af50000);

	cleanup_ynode struct ynode *fresh = node_lease_build("x", "10.244.9.0/24", NULL, 40, T0);
	cleanup_ynode struct ynode *stale =
	    node_lease_build("y", "10.244.8.0/24", NULL, 40, T0 - 81);
	cleanup_ynode struct ynode *none = node_lease_build("z", NULL, NULL, 40, T0);
	node_cidr_claimed(fresh, T0 + 5, &v, &n);
	node_cidr_claimed(stale, T0, &v, &n);
	node_cidr_claimed(none, T0, &v, &n);
	assert_int_equal(n, 3);
	assert_int_equal(v[2].addr, 0x0af40900);
	/* a claim without a renewTime is taken as fresh */
	cleanup_ynode struct ynode *bare =
	    y("metadata: {annotations: {corral.io/pod-cidr-claim: 10.244.10.0/24}}\n");
	node_cidr_claimed(bare, T0, &v, &n);
	assert_int_equal(n, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_node_object__new_node),
	    cmocka_unit_test(test_node_object__heartbeat_moves_only_heartbeat_times),
	    cmocka_unit_test(test_node_object__keeps_what_others_wrote),
	    cmocka_unit_test(test_node_object__real_node_without_pod_cidr),
	    cmocka_unit_test(test_node_object__daemon_endpoint_only_when_served),
	    cmocka_unit_test(test_node_lease__claim_and_owner),
	    cmocka_unit_test(test_node_cidrs__held_and_claimed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
