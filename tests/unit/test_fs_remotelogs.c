/* test_fs_remotelogs.c: which pods' logs corral-fs reads from another
 * node (fs/remotelogs.h): the node's address and port from its status,
 * the containers that have output, and the pods of a store that qualify. */
#include <errno.h>
#include <unistd.h>

#include "store.h"
#include "testlib.h"

#include "nodeaddr.h"
#include "remotelogs.h"
#include "util.h"

static void test_nodeaddr_kubelet_base__internal_ip_and_port(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *n =
	    y("status: {addresses: [{type: Hostname, address: far}, {type: InternalIP, address: "
	      "10.0.0.7}], daemonEndpoints: {kubeletEndpoint: {Port: 10250}}}");
	cleanup_free char *base = nodeaddr_kubelet_base(n);
	assert_string_equal(base, "https://10.0.0.7:10250");
	cleanup_ynode struct ynode *v6 =
	    y("status: {addresses: [{type: InternalIP, address: 'fd00::7'}], daemonEndpoints: "
	      "{kubeletEndpoint: {Port: 10250}}}");
	cleanup_free char *b6 = nodeaddr_kubelet_base(v6);
	assert_string_equal(b6, "https://[fd00::7]:10250");
}

static void test_nodeaddr_kubelet_base__none_without_address_or_port(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "status: {addresses: [{type: InternalIP, address: 10.0.0.7}]}",
	    "status: {daemonEndpoints: {kubeletEndpoint: {Port: 10250}}}",
	    "status: {addresses: [{type: Hostname, address: far}], daemonEndpoints: "
	    "{kubeletEndpoint: {Port: 10250}}}",
	    "status: {addresses: [{type: InternalIP, address: 10.0.0.7}], daemonEndpoints: "
	    "{kubeletEndpoint: {Port: 0}}}",
	    "status: {addresses: [{type: InternalIP, address: 10.0.0.7}], daemonEndpoints: "
	    "{kubeletEndpoint: {Port: 70000}}}",
	    "status: {addresses: [{type: InternalIP, address: 10.0.0.7}], daemonEndpoints: "
	    "{kubeletEndpoint: {Port: x}}}",
	    "status: {addresses: [{type: InternalIP, address: 'evil@host/x'}], daemonEndpoints: "
	    "{kubeletEndpoint: {Port: 1}}}",
	    "status: {addresses: [{type: InternalIP, address: ''}], daemonEndpoints: "
	    "{kubeletEndpoint: {Port: 1}}}",
	    "status: {addresses: x}",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_ynode struct ynode *n = y(bad[i]);
		cleanup_free char *base = nodeaddr_kubelet_base(n);
		if (base)
			fail_msg("%s gave %s", bad[i], base);
	}
}

static void test_remotelogs_container_started__running_or_ran(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *p =
	    y("status: {initContainerStatuses: [{name: init, state: {terminated: {exitCode: 0}}}], "
	      "containerStatuses: [{name: run, state: {running: {}}}, {name: wait, state: "
	      "{waiting: {reason: ContainerCreating}}}, {name: again, restartCount: 2, state: "
	      "{waiting: {reason: CrashLoopBackOff}}}, {name: died, state: {waiting: {}}, "
	      "lastState: {terminated: {exitCode: 1}}}]}");
	assert_true(remotelogs_container_started(p, "init"));
	assert_true(remotelogs_container_started(p, "run"));
	assert_true(remotelogs_container_started(p, "again"));
	assert_true(remotelogs_container_started(p, "died"));
	assert_false(remotelogs_container_started(p, "wait"));
	assert_false(remotelogs_container_started(p, "absent"));
}

static void put(struct store *s, const char *key, const char *text)
{
	struct ynode *obj = y(text);
	struct store_change c = {.key = key, .obj = obj};
	cleanup_error struct error *err = NULL;
	if (store_apply(s, &c, &err) < 0)
		fail_msg("%s: %s", key, err->msg);
	free(c.yaml);
	ynode_free(obj);
}

static void test_remotelogs_pods__only_started_pods_of_serving_nodes(void **state)
{
	(void)state;
	char dir[256];
	struct store *s = NULL;
	assert_int_equal(testlib_store_temp(dir, sizeof(dir), "test-remotelogs", &s), 0);
	put(s, "nodes/far",
	    "apiVersion: v1\nkind: Node\nmetadata: {name: far}\nstatus: {addresses: [{type: "
	    "InternalIP, address: 10.0.0.7}], daemonEndpoints: {kubeletEndpoint: {Port: 10250}}}");
	put(s, "nodes/quiet",
	    "apiVersion: v1\nkind: Node\nmetadata: {name: quiet}\nstatus: {addresses: [{type: "
	    "InternalIP, address: 10.0.0.8}]}");
	const char *running = "status: {containerStatuses: [{name: app, state: {running: {}}}, "
			      "{name: side, state: {waiting: {}}}]}";
	cleanup_free char *web = xasprintf(
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: dev}\nspec: {nodeName: "
	    "far, containers: [{name: app}, {name: side}]}\n%s",
	    running);
	cleanup_free char *calm = xasprintf(
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: calm, namespace: dev}\nspec: {nodeName: "
	    "quiet, containers: [{name: app}]}\n%s",
	    running);
	put(s, "namespaces/dev/pods/web", web);
	put(s, "namespaces/dev/pods/calm", calm);
	put(s, "namespaces/dev/pods/new",
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: dev}\nspec: {nodeName: "
	    "far, containers: [{name: app}]}\nstatus: {phase: Pending}");
	put(s, "namespaces/dev/pods/free",
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: free, namespace: dev}\nspec: "
	    "{containers: [{name: app}]}");
	char tmp[] = "/tmp/test-remotelogs-pki-XXXXXX";
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	const struct remotelogs_opts o = {.ca_file = tmp, .cert_file = tmp, .key_file = tmp};
	struct remotelogs *rl = remotelogs_new(s, &o, NULL);
	assert_non_null(rl);
	char *names[] = {"web", "calm", "new", "free", "absent"};
	size_t n = 0;
	struct remotelogs_ent *v = remotelogs_pods(rl, "dev", names, ARRAY_SIZE(names), &n);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "web");
	assert_string_equal(v[0].source, "https://10.0.0.7:10250/containerLogs/dev/web");
	size_t nc = 0;
	struct remotelogs_ent *c = remotelogs_containers(rl, "dev", "web", v[0].source, &nc);
	assert_int_equal(nc, 1);
	assert_string_equal(c[0].name, "app.log");
	assert_string_equal(c[0].source, "https://10.0.0.7:10250/containerLogs/dev/web/app");
	assert_true(remotelogs_is_url(c[0].source));
	assert_false(remotelogs_is_url("/var/log/pods/dev_web_1/app/0.log"));
	assert_false(remotelogs_is_url(NULL));
	remotelogs_ents_free(c, nc);
	remotelogs_ents_free(v, n);
	remotelogs_free(rl);
	unlink(tmp);
	testlib_store_remove(dir, s);
}

static void test_remotelogs_new__wants_all_three_files(void **state)
{
	(void)state;
	const struct remotelogs_opts o = {.ca_file = "/nonexistent/ca.crt", .cert_file = "x"};
	cleanup_error struct error *err = NULL;
	assert_null(remotelogs_new(NULL, &o, &err));
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "client-key"));
	const struct remotelogs_opts o2 = {
	    .ca_file = "/nonexistent/ca.crt", .cert_file = "x", .key_file = "y"};
	cleanup_error struct error *err2 = NULL;
	assert_null(remotelogs_new(NULL, &o2, &err2));
	assert_int_equal(err2->status, ENOENT);
	assert_non_null(strstr(err2->msg, "/nonexistent/ca.crt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nodeaddr_kubelet_base__internal_ip_and_port),
	    cmocka_unit_test(test_nodeaddr_kubelet_base__none_without_address_or_port),
	    cmocka_unit_test(test_remotelogs_container_started__running_or_ran),
	    cmocka_unit_test(test_remotelogs_pods__only_started_pods_of_serving_nodes),
	    cmocka_unit_test(test_remotelogs_new__wants_all_three_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
