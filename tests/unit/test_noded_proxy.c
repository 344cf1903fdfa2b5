/* test_noded_proxy.c: the service proxy's renderer — ClusterIP, multi-port
 * and named ports, UDP, NodePort, ClientIP affinity, no endpoints refused,
 * hairpin marks, the same text whatever the order, what is skipped and why —
 * and that nft takes the text: applied, replaced and deleted inside a
 * network namespace of the test's own (skipped when not root or no nft). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proxy.h"
#include "util.h"
#include "ynode.h"

static const char *const node_addrs[] = {"192.0.2.1", "10.244.0.1"};

static const struct proxy_opts opts = {
    .table = "corral-proxy-test",
    .bridge = "crl-test",
    .pod_cidr = "10.244.0.0/24",
    .node_addresses = node_addrs,
    .n_node_addresses = 2,
};

/* A small world of parsed objects. */
struct world {
	struct proxy_object svc[16], eps[16];
	size_t nsvc, neps;
};

static struct ynode *parse(const char *yaml)
{
	struct ynode *n = NULL;
	assert_int_equal(yaml_parse_one(yaml, strlen(yaml), &n, NULL), 0);
	return n;
}

static void add_svc(struct world *w, const char *key, const char *yaml)
{
	w->svc[w->nsvc++] = (struct proxy_object){key, parse(yaml)};
}

static void add_eps(struct world *w, const char *key, const char *yaml)
{
	w->eps[w->neps++] = (struct proxy_object){key, parse(yaml)};
}

static void world_free(struct world *w)
{
	for (size_t i = 0; i < w->nsvc; i++)
		ynode_free((struct ynode *)w->svc[i].obj);
	for (size_t i = 0; i < w->neps; i++)
		ynode_free((struct ynode *)w->eps[i].obj);
}

static char *render_with(const struct proxy_opts *o, const struct world *w)
{
	char *text = NULL;
	assert_int_equal(proxy_render(o, w->svc, w->nsvc, w->eps, w->neps, &text, NULL), 0);
	assert_non_null(text);
	return text;
}

static char *render(const struct world *w)
{
	return render_with(&opts, w);
}

#define assert_has(text, s)                                                                        \
	do {                                                                                       \
		if (!strstr((text), (s)))                                                          \
			fail_msg("missing \"%s\" in:\n%s", (s), (text));                           \
	} while (0)
#define assert_lacks(text, s)                                                                      \
	do {                                                                                       \
		if (strstr((text), (s)))                                                           \
			fail_msg("unexpected \"%s\" in:\n%s", (s), (text));                        \
	} while (0)

static const char *const web_svc = "spec:\n"
				   "  clusterIP: 10.96.0.20\n"
				   "  ports: [{name: http, port: 80, targetPort: 8080}]\n";
static const char *const web_eps = "subsets:\n"
				   "- addresses: [{ip: 10.244.0.3}, {ip: 10.244.0.2}]\n"
				   "  ports: [{name: http, port: 8080, protocol: TCP}]\n";

static void test_proxy_render__cluster_ip_to_endpoints(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web", web_svc);
	add_eps(&w, "dev/web", web_eps);
	cleanup_free char *t = render(&w);
	assert_true(strncmp(t, "table ip corral-proxy-test {\n", 29) == 0);
	assert_has(t, "\t\t\t10.96.0.20 . tcp . 80 : goto svc-dev/web/tcp/80\n");
	/* per endpoint: its own packets (marked), then everyone else's, each
	 * with the same draw */
	assert_has(t,
		   "\tchain svc-dev/web/tcp/80 {\n"
		   "\t\tip saddr 10.244.0.2 numgen random mod 2 == 0 meta mark set meta mark | "
		   "0x4000 meta l4proto tcp dnat to 10.244.0.2:8080\n"
		   "\t\tip saddr != 10.244.0.2 numgen random mod 2 == 0 meta l4proto tcp dnat to "
		   "10.244.0.2:8080\n"
		   "\t\tip saddr 10.244.0.3 meta mark set meta mark | 0x4000 meta l4proto tcp dnat "
		   "to 10.244.0.3:8080\n"
		   "\t\tmeta l4proto tcp dnat to 10.244.0.3:8080\n\t}\n");
	assert_lacks(t, "chain ep-");
	assert_has(t, "type nat hook prerouting priority -100");
	assert_has(t, "type nat hook output priority -100");
	assert_lacks(t, "# skipped");
	world_free(&w);
}

static void test_proxy_render__one_endpoint_no_draw(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web", web_svc);
	add_eps(&w, "dev/web",
		"subsets: [{addresses: [{ip: 10.244.1.7}], ports: [{name: http, port: 9000}]}]\n");
	cleanup_free char *t = render(&w);
	assert_has(t,
		   "\tchain svc-dev/web/tcp/80 {\n"
		   "\t\tip saddr 10.244.1.7 meta mark set meta mark | 0x4000 meta l4proto tcp dnat "
		   "to 10.244.1.7:9000\n"
		   "\t\tmeta l4proto tcp dnat to 10.244.1.7:9000\n\t}\n");
	assert_lacks(t, "numgen");
	world_free(&w);
}

static void test_proxy_render__multi_port_by_name(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/app",
		"spec:\n  clusterIP: 10.96.1.1\n  ports:\n"
		"  - {name: http, port: 80}\n  - {name: admin, port: 81}\n"
		"  - {name: metrics, port: 9100}\n");
	/* ports listed in another order; two subsets with different ports */
	add_eps(&w, "dev/app",
		"subsets:\n"
		"- addresses: [{ip: 10.244.0.5}]\n"
		"  ports: [{name: admin, port: 8081}, {name: http, port: 8080}]\n"
		"- addresses: [{ip: 10.244.0.6}]\n"
		"  ports: [{name: http, port: 7070}]\n");
	cleanup_free char *t = render(&w);
	char *c80 = strstr(t, "\tchain svc-dev/app/tcp/80 {\n");
	char *c81 = strstr(t, "\tchain svc-dev/app/tcp/81 {\n");
	assert_true(c80 && c81 && c80 < c81);
	char *e5 = strstr(c80, "dnat to 10.244.0.5:8080\n"),
	     *e6 = strstr(c80, "dnat to 10.244.0.6:7070\n");
	assert_true(e5 && e6 && e5 < c81 && e6 < c81);
	assert_has(c81, "\t\tmeta l4proto tcp dnat to 10.244.0.5:8081\n\t}\n");
	assert_lacks(c81, "10.244.0.6");
	/* metrics has no endpoint port of that name: refused */
	assert_has(t, "\t\t\t10.96.1.1 . tcp . 9100\n");
	assert_lacks(t, "svc-dev/app/tcp/9100");
	world_free(&w);
}

static void test_proxy_render__unnamed_single_port(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/one", "spec: {clusterIP: 10.96.0.30, ports: [{port: 80}]}\n");
	add_eps(&w, "dev/one",
		"subsets: [{addresses: [{ip: 10.244.0.9}], ports: [{name: web, port: 8000}]}]\n");
	cleanup_free char *t = render(&w);
	assert_has(t, "dnat to 10.244.0.9:8000");
	world_free(&w);
}

static void test_proxy_render__udp(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "kube-system/kube-dns",
		"spec:\n  clusterIP: 10.96.0.10\n  ports:\n"
		"  - {name: dns, port: 53, protocol: UDP}\n"
		"  - {name: dns-tcp, port: 53, protocol: TCP}\n");
	add_eps(&w, "kube-system/kube-dns",
		"subsets:\n- addresses: [{ip: 10.244.0.10}]\n"
		"  ports: [{name: dns-tcp, port: 10053, protocol: TCP},"
		" {name: dns, port: 10053, protocol: UDP}]\n");
	cleanup_free char *t = render(&w);
	assert_has(t, "10.96.0.10 . tcp . 53 : goto svc-kube-system/kube-dns/tcp/53,\n");
	assert_has(t, "10.96.0.10 . udp . 53 : goto svc-kube-system/kube-dns/udp/53\n");
	assert_has(t, "\t\tmeta l4proto udp dnat to 10.244.0.10:10053\n");
	assert_has(t, "\t\tmeta l4proto tcp dnat to 10.244.0.10:10053\n");
	world_free(&w);
}

static void test_proxy_render__nodeport(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web",
		"spec:\n  type: NodePort\n  clusterIP: 10.96.0.20\n"
		"  ports: [{name: http, port: 80, nodePort: 31002}]\n");
	add_eps(&w, "dev/web", web_eps);
	/* a ClusterIP service's nodePort means nothing */
	add_svc(
	    &w, "dev/plain",
	    "spec: {clusterIP: 10.96.0.21, ports: [{name: http, port: 80, nodePort: 31003}]}\n");
	add_eps(&w, "dev/plain", web_eps);
	cleanup_free char *t = render(&w);
	assert_has(t, "\tset node-addresses {\n\t\ttype ipv4_addr\n\t\telements = {\n"
		      "\t\t\t10.244.0.1,\n\t\t\t192.0.2.1\n\t\t}\n");
	assert_has(t, "\t\t\ttcp . 31002 : goto ext-dev/web/tcp/80\n");
	assert_has(t, "\tchain ext-dev/web/tcp/80 {\n"
		      "\t\tip saddr != 10.244.0.0/16 meta mark set meta mark | 0x4000\n"
		      "\t\tgoto svc-dev/web/tcp/80\n\t}\n");
	assert_has(t, "ip daddr @node-addresses meta l4proto . th dport vmap @nodeports");
	assert_lacks(t, "31003");
	world_free(&w);
}

static void test_proxy_render__nodeport_out_of_range_skipped(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web",
		"spec:\n  type: NodePort\n  clusterIP: 10.96.0.20\n"
		"  ports: [{name: http, port: 80, nodePort: 22}]\n");
	add_eps(&w, "dev/web", web_eps);
	cleanup_free char *t = render(&w);
	assert_has(t, "# skipped dev/web: nodePort of port 80 is outside 30000-32767\n");
	assert_lacks(t, "tcp . 22 ");
	assert_has(t, "10.96.0.20 . tcp . 80 : goto"); /* the ClusterIP stays */
	world_free(&w);
}

static void test_proxy_render__client_ip_affinity(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web",
		"spec:\n  clusterIP: 10.96.0.20\n  sessionAffinity: ClientIP\n"
		"  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}\n"
		"  ports: [{name: http, port: 80}]\n");
	add_eps(&w, "dev/web", web_eps);
	cleanup_free char *t = render(&w);
	assert_has(t, " jhash ip saddr mod 2 seed 0x");
	/* the same hash in both rules of an endpoint */
	char *j = strstr(t, "\t\tip saddr 10.244.0.2 jhash ip saddr mod 2 seed 0x");
	assert_non_null(j);
	char seed[11];
	memcpy(seed, j + strlen("\t\tip saddr 10.244.0.2 jhash ip saddr mod 2 seed "), 10);
	seed[10] = '\0';
	char want[160];
	snprintf(want, sizeof(want),
		 "\t\tip saddr != 10.244.0.2 jhash ip saddr mod 2 seed %s == 0 meta l4proto tcp "
		 "dnat to 10.244.0.2:8080\n",
		 seed);
	assert_has(t, want);
	assert_lacks(t, "numgen");
	world_free(&w);
}

static void test_proxy_render__no_endpoints_refused(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web",
		"spec:\n  type: NodePort\n  clusterIP: 10.96.0.20\n"
		"  ports: [{name: http, port: 80, nodePort: 31002}]\n");
	add_svc(&w, "dev/none",
		"spec: {clusterIP: 10.96.0.22, ports: [{port: 53, protocol: UDP}]}\n");
	add_eps(&w, "dev/web", "subsets: []\n");
	cleanup_free char *t = render(&w);
	assert_has(t,
		   "\tset no-endpoints {\n\t\ttype ipv4_addr . inet_proto . inet_service\n"
		   "\t\telements = {\n\t\t\t10.96.0.20 . tcp . 80,\n\t\t\t10.96.0.22 . udp . 53\n");
	assert_has(t, "\tset no-endpoint-nodeports {\n\t\ttype inet_proto . inet_service\n"
		      "\t\telements = {\n\t\t\ttcp . 31002\n");
	assert_has(t, "ip daddr . meta l4proto . th dport @no-endpoints goto refuse-conn\n");
	assert_has(t, "\tchain refuse-conn {\n\t\tmeta l4proto tcp reject with tcp reset\n"
		      "\t\treject with icmp port-unreachable\n");
	assert_has(t, "type filter hook prerouting priority -110");
	assert_has(t, "type filter hook output priority -110");
	assert_lacks(t, "chain svc-dev");
	assert_lacks(t, "dnat to");
	world_free(&w);
}

static void test_proxy_render__hairpin_and_bridge_masquerade(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/web", web_svc);
	add_eps(&w, "dev/web", web_eps);
	cleanup_free char *t = render(&w);
	assert_has(t, "\t\tip saddr 10.244.0.3 meta mark set meta mark | 0x4000 meta l4proto tcp "
		      "dnat to 10.244.0.3:8080\n");
	assert_has(t,
		   "\tchain nat-postrouting {\n\t\ttype nat hook postrouting priority 100; "
		   "policy accept;\n"
		   "\t\tmeta mark & 0x4000 == 0x4000 oifname != \"crl-test\" ip daddr "
		   "10.244.0.0/16 meta mark set meta mark ^ 0x4000 snat to 10.244.0.1\n"
		   "\t\tmeta mark & 0x4000 == 0x4000 meta mark set meta mark ^ 0x4000 "
		   "masquerade\n"
		   "\t\tct status dnat oifname \"crl-test\" ip saddr 10.244.0.0/24 masquerade\n");

	/* another mark; no bridge: no bridge rule */
	struct proxy_opts o = opts;
	o.masq_mark = 0x10000;
	o.bridge = NULL;
	cleanup_free char *t2 = render_with(&o, &w);
	assert_has(t2, "\t\tip saddr 10.244.0.3 meta mark set meta mark | 0x10000 meta");
	assert_lacks(t2, "oifname");
	world_free(&w);
}

/* An endpoint at this node's gateway is the host (corral-dns on every
 * node's gateway): it is taken alone, so that DNS never crosses to another
 * host; a service without it keeps every endpoint. */
static void test_proxy_render__own_gateway_taken_alone(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "kube-system/kube-dns",
		"spec: {clusterIP: 10.96.0.10, ports: [{name: dns, port: 53, protocol: UDP, "
		"targetPort: 10053}]}\n");
	add_eps(&w, "kube-system/kube-dns",
		"subsets: [{addresses: [{ip: 10.244.0.1}, {ip: 10.244.1.1}, {ip: 10.244.2.1}],"
		" ports: [{name: dns, port: 10053, protocol: UDP}]}]\n");
	add_svc(&w, "dev/web", web_svc);
	add_eps(&w, "dev/web", web_eps);
	cleanup_free char *t = render(&w);
	assert_has(t, "\tchain svc-kube-system/kube-dns/udp/53 {\n"
		      "\t\tip saddr 10.244.0.1 meta mark set meta mark | 0x4000 meta l4proto udp "
		      "dnat to 10.244.0.1:10053\n"
		      "\t\tmeta l4proto udp dnat to 10.244.0.1:10053\n\t}\n");
	assert_lacks(t, "10.244.1.1:10053");
	assert_lacks(t, "10.244.2.1:10053");
	/* a node whose gateway is none of them spreads over all */
	struct proxy_opts o = opts;
	o.pod_cidr = "10.244.9.0/24";
	cleanup_free char *t2 = render_with(&o, &w);
	assert_has(t2, "dnat to 10.244.0.1:10053");
	assert_has(t2, "dnat to 10.244.1.1:10053");
	assert_has(t2, "dnat to 10.244.2.1:10053");
	assert_has(t2, "snat to 10.244.9.1\n");
	world_free(&w);
}

static void test_proxy_render__sorted_and_deterministic(void **state)
{
	(void)state;
	static const char *const svcs[][2] = {
	    {"b/web", "spec: {clusterIP: 10.96.0.3, ports: [{port: 80}]}\n"},
	    {"a/web", "spec: {clusterIP: 10.96.0.9, ports: [{port: 80}]}\n"},
	    {"a/api", "spec: {type: NodePort, clusterIP: 10.96.0.1, ports: [{port: 443, nodePort: "
		      "30443}]}\n"},
	};
	static const char *const eps[][2] = {
	    {"a/web",
	     "subsets: [{addresses: [{ip: 10.244.0.7}, {ip: 10.244.0.5}, {ip: 10.244.0.6}],"
	     " ports: [{port: 80}]}]\n"},
	    {"b/web", "subsets: [{addresses: [{ip: 10.244.0.2}], ports: [{port: 80}]},"
		      " {addresses: [{ip: 10.244.0.8}], ports: [{port: 80}]}]\n"},
	    {"a/api", "subsets: [{addresses: [{ip: 10.244.0.4}], ports: [{port: 8443}]}]\n"},
	};
	static const char *const eps_shuffled[][2] = {
	    {"b/web", "subsets: [{addresses: [{ip: 10.244.0.8}], ports: [{port: 80}]},"
		      " {addresses: [{ip: 10.244.0.2}, {ip: 10.244.0.2}], ports: [{port: 80}]}]\n"},
	    {"a/api", "subsets: [{addresses: [{ip: 10.244.0.4}], ports: [{port: 8443}]}]\n"},
	    {"a/web",
	     "subsets: [{addresses: [{ip: 10.244.0.6}, {ip: 10.244.0.5}, {ip: 10.244.0.7}],"
	     " ports: [{port: 80}]}]\n"},
	};
	struct world w1 = {0}, w2 = {0};
	for (size_t i = 0; i < 3; i++) {
		add_svc(&w1, svcs[i][0], svcs[i][1]);
		add_eps(&w1, eps[i][0], eps[i][1]);
		add_svc(&w2, svcs[2 - i][0], svcs[2 - i][1]);
		add_eps(&w2, eps_shuffled[i][0], eps_shuffled[i][1]);
	}
	cleanup_free char *t1 = render(&w1);
	cleanup_free char *t1b = render(&w1);
	cleanup_free char *t2 = render(&w2);
	assert_string_equal(t1, t1b);
	assert_string_equal(t1, t2);
	/* map elements by address; chains by namespace/name */
	char *e1 = strstr(t1, "10.96.0.1 . tcp . 443"), *e3 = strstr(t1, "10.96.0.3 . tcp . 80"),
	     *e9 = strstr(t1, "10.96.0.9 . tcp . 80");
	assert_true(e1 && e3 && e9 && e1 < e3 && e3 < e9);
	char *c1 = strstr(t1, "chain svc-a/api/"), *c2 = strstr(t1, "chain svc-a/web/"),
	     *c3 = strstr(t1, "chain svc-b/web/");
	assert_true(c1 && c2 && c3 && c1 < c2 && c2 < c3);
	/* each of three endpoints: 1/3, then 1/2 of the rest, then the rest */
	assert_has(t1, "\t\tip saddr != 10.244.0.5 numgen random mod 3 == 0 meta l4proto tcp dnat "
		       "to 10.244.0.5:80\n");
	assert_has(t1, "\t\tip saddr != 10.244.0.6 numgen random mod 2 == 0 meta l4proto tcp dnat "
		       "to 10.244.0.6:80\n");
	assert_has(t1, "\t\tmeta l4proto tcp dnat to 10.244.0.7:80\n\t}\n");
	char *a5 = strstr(t1, "dnat to 10.244.0.5:80\n"),
	     *a6 = strstr(t1, "dnat to 10.244.0.6:80\n"),
	     *a7 = strstr(t1, "dnat to 10.244.0.7:80\n");
	assert_true(a5 && a6 && a7 && a5 < a6 && a6 < a7);
	assert_has(t1, "\t\tip saddr != 10.244.0.2 numgen random mod 2 == 0 meta l4proto tcp dnat "
		       "to 10.244.0.2:80\n");
	world_free(&w1);
	world_free(&w2);
}

static void test_proxy_render__headless_and_unallocated_ignored(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/headless", "spec: {clusterIP: None, ports: [{port: 80}]}\n");
	add_svc(&w, "dev/pending", "spec: {ports: [{port: 80}]}\n");
	add_svc(&w, "dev/empty", "spec: {clusterIP: '', ports: [{port: 80}]}\n");
	add_svc(&w, "dev/ext", "spec: {type: ExternalName, externalName: example.org}\n");
	for (size_t i = 0; i < w.nsvc; i++)
		add_eps(&w, w.svc[i].key, web_eps);
	cleanup_free char *t = render(&w);
	assert_lacks(t, "chain svc-dev");
	assert_lacks(t, "# skipped");
	assert_lacks(t, "10.96.");
	world_free(&w);
}

static void test_proxy_render__garbage_skipped_without_harm(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/scalar", "just a string\n");
	add_svc(&w, "dev/list", "[1, 2]\n");
	add_svc(&w, "dev/nospec", "metadata: {name: nospec}\n");
	add_svc(&w, "dev/specseq", "spec: [1]\n");
	add_svc(&w, "dev/portsmap", "spec: {clusterIP: 10.96.0.40, ports: {port: 80}}\n");
	add_svc(&w, "dev/badports",
		"spec: {clusterIP: 10.96.0.41, ports: [7, {port: 0}, {port: 70000},"
		" {port: http}, {port: 80, protocol: SCTP}, {port: [1]}, {port: 81}]}\n");
	add_svc(&w, "dev/v6", "spec: {clusterIP: 'fd00::1', ports: [{port: 80}]}\n");
	add_svc(&w, "dev/outside", "spec: {clusterIP: 8.8.8.8, ports: [{port: 53}]}\n");
	add_svc(&w, "dev/inject",
		"spec: {clusterIP: \"10.96.0.1\\n}\\nchain x {\", ports: [{port: 80}]}\n");
	add_svc(&w, "Dev/upper", "spec: {clusterIP: 10.96.0.42, ports: [{port: 80}]}\n");
	add_svc(&w, "dev/a/b", "spec: {clusterIP: 10.96.0.43, ports: [{port: 80}]}\n");
	add_svc(&w, "dev/eps", "spec: {clusterIP: 10.96.0.44, ports: [{port: 80}]}\n");
	add_eps(&w, "dev/badports",
		"subsets: [{addresses: [{ip: 10.244.0.2}], ports: [{port: 99999}]}]\n");
	add_eps(&w, "dev/eps",
		"subsets:\n"
		"- addresses: [{ip: 8.8.8.8}, {ip: 'fd00::2'}, {ip: x}, {}, 7, {ip: 10.244.0.2}]\n"
		"  ports: [{port: 80}]\n"
		"- addresses: {ip: 10.244.0.3}\n  ports: [{port: 80}]\n"
		"- 12\n- {addresses: [{ip: 10.244.0.4}]}\n");
	add_eps(&w, "dev/nosuchservice",
		"subsets: [{addresses: [{ip: 10.244.0.8}], ports: [{port: 1}]}]\n");
	cleanup_free char *t = render(&w);
	assert_has(t, "# skipped dev/scalar: not a mapping\n");
	assert_has(t, "# skipped dev/nospec: no spec\n");
	assert_has(t, "# skipped dev/portsmap: no ports\n");
	assert_has(t, "# skipped dev/v6: clusterIP \"fd00::1\" is not IPv4\n");
	assert_has(t, "# skipped dev/outside: clusterIP 8.8.8.8 is outside the service range\n");
	assert_has(t, "# skipped dev/inject: clusterIP \"10.96.0.1?}?chain x {\" is not IPv4\n");
	assert_has(t, "# skipped Dev/upper: not a namespace/name of DNS labels\n");
	assert_has(t, "# skipped dev/a/b: not a namespace/name of DNS labels\n");
	assert_has(t, "# skipped dev/eps: endpoint 8.8.8.8 is outside the pod range\n");
	assert_has(t, "# skipped dev/badports: endpoints port \"\" has no port number 1-65535\n");
	/* of badports, port 81 alone stands, with no endpoints */
	assert_has(t, "\t\t\t10.96.0.41 . tcp . 81\n");
	assert_lacks(t, "10.96.0.41 . sctp");
	assert_has(
	    t, "\tchain svc-dev/eps/tcp/80 {\n\t\tip saddr 10.244.0.2 meta mark set meta mark | "
	       "0x4000 meta l4proto tcp dnat to 10.244.0.2:80\n");
	assert_lacks(t, "dnat to 8.8.8.8");
	assert_lacks(t, "8.8.8.8 . ");
	assert_lacks(t, "\nchain x");
	assert_lacks(t, "10.244.0.8");
	world_free(&w);
}

static void test_proxy_render__conflicts_first_key_wins(void **state)
{
	(void)state;
	struct world w = {0};
	add_svc(&w, "dev/b",
		"spec: {type: NodePort, clusterIP: 10.96.0.50, ports: [{port: 80, nodePort: "
		"30001}]}\n");
	add_svc(&w, "dev/a",
		"spec: {type: NodePort, clusterIP: 10.96.0.50, ports: [{port: 80, nodePort: "
		"30002}]}\n");
	add_svc(&w, "dev/c",
		"spec: {type: NodePort, clusterIP: 10.96.0.51, ports: [{port: 80, nodePort: "
		"30002}]}\n");
	cleanup_free char *t = render(&w);
	assert_has(t, "# skipped dev/b: 10.96.0.50 tcp 80 is already dev/a's\n");
	assert_has(t, "# skipped dev/c: nodePort tcp 30002 is already dev/a's\n");
	assert_lacks(t, "30001");
	world_free(&w);
}

static void test_proxy_render__refuses_bad_options(void **state)
{
	(void)state;
	struct world w = {0};
	char *t = NULL;
	struct error *err = NULL;
	struct proxy_opts o = opts;
	static const char *const bad_tables[] = {
	    NULL,
	    "",
	    "1abc",
	    "a b",
	    "a;b",
	    "a\"b",
	    "x23456789012345678901234567890123456789012345678901234567890123456"};
	for (size_t i = 0; i < ARRAY_SIZE(bad_tables); i++) {
		o.table = bad_tables[i];
		assert_int_equal(proxy_render(&o, w.svc, 0, w.eps, 0, &t, &err), -EINVAL);
		assert_null(t);
		assert_non_null(err);
		error_free(err);
		err = NULL;
	}
	o = opts;
	o.bridge = "br\"0";
	assert_int_equal(proxy_render(&o, NULL, 0, NULL, 0, &t, NULL), -EINVAL);
	o = opts;
	o.cluster_cidr = "10.244.0.1/16";
	assert_int_equal(proxy_render(&o, NULL, 0, NULL, 0, &t, NULL), -EINVAL);
	o = opts;
	static const char *const bad_addr[] = {"192.0.2.300"};
	o.node_addresses = bad_addr;
	o.n_node_addresses = 1;
	assert_int_equal(proxy_render(&o, NULL, 0, NULL, 0, &t, NULL), -EINVAL);
	o = opts;
	o.n_node_addresses = 0;
	o.bridge = NULL;
	o.pod_cidr = NULL;
	assert_int_equal(proxy_render(&o, NULL, 0, NULL, 0, &t, NULL), 0);
	assert_has(t, "\tset node-addresses {\n\t\ttype ipv4_addr\n\t}\n");
	free(t);
}

static void test_proxy_table_for_node__is_a_table_name(void **state)
{
	(void)state;
	cleanup_free char *a = proxy_table_for_node("node1");
	cleanup_free char *b = proxy_table_for_node("worker-3.example.org");
	char long1[300], long2[300];
	memset(long1, 'a', 299);
	long1[299] = '\0';
	memcpy(long2, long1, 300);
	long2[298] = 'b';
	cleanup_free char *c = proxy_table_for_node(long1);
	cleanup_free char *d = proxy_table_for_node(long2);
	assert_string_equal(a, "corral-proxy-node1");
	assert_string_equal(b, "corral-proxy-worker-3-example-org");
	assert_int_equal(strlen(c), 64);
	assert_string_not_equal(c, d);
	struct proxy_opts o = opts;
	char *t = NULL;
	for (const char *x[] = {a, b, c, d, NULL}, **y = x; *y; y++) {
		o.table = *y;
		assert_int_equal(proxy_render(&o, NULL, 0, NULL, 0, &t, NULL), 0);
		free(t);
	}
}

/* ---- changes ------------------------------------------------------------ */

static void web_world(struct world *w, const char *eps_yaml)
{
	add_svc(w, "dev/web",
		"spec:\n  type: NodePort\n  clusterIP: 10.96.0.20\n"
		"  ports: [{name: http, port: 80, nodePort: 31002}]\n");
	if (eps_yaml)
		add_eps(w, "dev/web", eps_yaml);
	for (int i = 0; i < 8; i++) {
		char key[32], yaml[128];
		snprintf(key, sizeof(key), "dev/other%d", i);
		snprintf(yaml, sizeof(yaml), "spec: {clusterIP: 10.96.1.%d, ports: [{port: 80}]}\n",
			 i);
		add_svc(w, xstrdup(key), yaml);
		add_eps(w, xstrdup(key),
			"subsets: [{addresses: [{ip: 10.244.0.9}], ports: [{port: 80}]}]\n");
	}
}

static void web_world_free(struct world *w)
{
	for (size_t i = 0; i < w->nsvc; i++)
		if (strncmp(w->svc[i].key, "dev/other", 9) == 0)
			free((char *)w->svc[i].key);
	for (size_t i = 0; i < w->neps; i++)
		if (strncmp(w->eps[i].key, "dev/other", 9) == 0)
			free((char *)w->eps[i].key);
	world_free(w);
}

static const char *const eps_12 = "subsets: [{addresses: [{ip: 10.244.0.2}, {ip: 10.244.0.3}], "
				  "ports: [{name: http, port: 8080}]}]\n";
static const char *const eps_23 = "subsets: [{addresses: [{ip: 10.244.0.3}, {ip: 10.244.0.4}], "
				  "ports: [{name: http, port: 8080}]}]\n";

static char *render_web(const char *eps_yaml)
{
	struct world w = {0};
	web_world(&w, eps_yaml);
	char *t = render(&w);
	web_world_free(&w);
	return t;
}

static void test_proxy_diff__endpoints_change_touches_one_service(void **state)
{
	(void)state;
	cleanup_free char *a = render_web(eps_12);
	cleanup_free char *b = render_web(eps_23);
	cleanup_free char *c = NULL;
	assert_int_equal(proxy_diff(opts.table, a, b, &c), 0);
	/* the one chain is written again, nothing else */
	assert_true(strncmp(c, "flush chain ip corral-proxy-test svc-dev/web/tcp/80\n", 51) == 0);
	assert_has(c, "add rule ip corral-proxy-test svc-dev/web/tcp/80 meta l4proto tcp dnat to "
		      "10.244.0.4:8080\n");
	assert_lacks(c, "10.244.0.2");
	assert_lacks(c, "element");
	assert_lacks(c, "other");
	assert_lacks(c, "table ip");
	assert_lacks(c, "add chain");
	assert_lacks(c, "delete chain");

	cleanup_free char *same = NULL;
	assert_int_equal(proxy_diff(opts.table, a, a, &same), 0);
	assert_string_equal(same, "");
}

static void test_proxy_diff__endpoints_gone_and_back(void **state)
{
	(void)state;
	cleanup_free char *a = render_web(eps_12);
	cleanup_free char *b = render_web(NULL);
	cleanup_free char *c = NULL, *back = NULL;
	assert_int_equal(proxy_diff(opts.table, a, b, &c), 0);
	assert_has(c, "delete element ip corral-proxy-test services { 10.96.0.20 . tcp . 80 }\n");
	assert_has(c, "delete element ip corral-proxy-test nodeports { tcp . 31002 }\n");
	assert_has(c, "add element ip corral-proxy-test no-endpoints { 10.96.0.20 . tcp . 80 }\n");
	assert_has(c, "add element ip corral-proxy-test no-endpoint-nodeports { tcp . 31002 }\n");
	char *ext = strstr(c, "delete chain ip corral-proxy-test ext-dev/web/tcp/80\n");
	char *svc = strstr(c, "delete chain ip corral-proxy-test svc-dev/web/tcp/80\n");
	assert_true(ext && svc && ext < svc);
	assert_true(strstr(c, "delete element") < ext);
	assert_int_equal(proxy_diff(opts.table, b, a, &back), 0);
	assert_has(back, "add element ip corral-proxy-test services { 10.96.0.20 . tcp . 80 : goto "
			 "svc-dev/web/tcp/80 }\n");
	assert_true(strstr(back, "add chain ip corral-proxy-test svc-dev/web/tcp/80") <
		    strstr(back, "add element"));
}

static void test_proxy_diff__replaces_whole_when_better(void **state)
{
	(void)state;
	struct world empty = {0};
	cleanup_free char *e = render(&empty);
	cleanup_free char *a = render_web(eps_12);
	char *c = NULL;
	/* from nothing to everything: the changes are the table */
	assert_int_equal(proxy_diff(opts.table, e, a, &c), 1);
	assert_null(c);
	/* not our text */
	assert_int_equal(proxy_diff(opts.table, "table ip x {\n\tfoo\n}\n", a, &c), 1);
	assert_int_equal(proxy_diff(opts.table, a, "garbage", &c), 1);
	assert_int_equal(proxy_diff(opts.table, NULL, a, &c), 1);
	/* other options: another base chain */
	struct proxy_opts o = opts;
	o.masq_mark = 0x8000;
	struct world w = {0};
	web_world(&w, eps_12);
	cleanup_free char *m = render_with(&o, &w);
	web_world_free(&w);
	assert_int_equal(proxy_diff(opts.table, a, m, &c), 1);
	assert_null(c);
}

/* ---- nft ---------------------------------------------------------------- */

static bool nft_usable(void)
{
	return geteuid() == 0 && system("command -v nft >/dev/null 2>&1") == 0;
}

/* Runs fn in a child inside a network namespace of its own; its status. */
static int in_private_netns(int (*fn)(void *), void *data)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) != 0)
			_exit(77);
		_exit(fn(data));
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void big_world(struct world *w)
{
	add_svc(w, "dev/web",
		"spec:\n  type: NodePort\n  clusterIP: 10.96.0.20\n  sessionAffinity: ClientIP\n"
		"  ports:\n  - {name: http, port: 80, nodePort: 31002}\n"
		"  - {name: dns, port: 53, protocol: UDP, nodePort: 31002}\n");
	add_eps(w, "dev/web",
		"subsets:\n- addresses: [{ip: 10.244.0.2}, {ip: 10.244.0.3}]\n"
		"  ports: [{name: http, port: 8080}, {name: dns, port: 5353, protocol: UDP}]\n");
	add_svc(w, "dev/api", web_svc);
	add_eps(w, "dev/api", web_eps);
	add_svc(w, "dev/none",
		"spec: {type: NodePort, clusterIP: 10.96.0.22, ports: [{port: 80, nodePort: "
		"30080}]}\n");
}

static int apply_child(void *data)
{
	const char *text = data;
	struct error *err = NULL;
	if (proxy_apply(NULL, opts.table, text, true, &err) < 0) {
		fprintf(stderr, "check: %s\n", err->msg);
		return 1;
	}
	if (proxy_apply(NULL, opts.table, text, false, &err) < 0) {
		fprintf(stderr, "apply: %s\n", err->msg);
		return 2;
	}
	/* replaced whole, a second time */
	if (proxy_apply("nft", opts.table, text, false, &err) < 0) {
		fprintf(stderr, "replace: %s\n", err->msg);
		return 3;
	}
	if (system("nft list table ip corral-proxy-test | grep -q 'jhash ip saddr mod 2'") != 0)
		return 4;
	if (proxy_apply(NULL, opts.table, NULL, false, &err) < 0) {
		fprintf(stderr, "delete: %s\n", err->msg);
		return 5;
	}
	if (system("nft list table ip corral-proxy-test >/dev/null 2>&1") == 0)
		return 6;
	/* deleting what is not there is fine too */
	if (proxy_apply(NULL, opts.table, NULL, false, &err) < 0)
		return 7;
	return 0;
}

static void test_proxy_apply__nft_takes_the_text(void **state)
{
	(void)state;
	if (!nft_usable())
		skip();
	struct world w = {0};
	big_world(&w);
	cleanup_free char *t = render(&w);
	int rc = in_private_netns(apply_child, t);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
	world_free(&w);
}

static int bad_text_child(void *data)
{
	(void)data;
	struct error *err = NULL;
	int rc =
	    proxy_apply(NULL, opts.table, "table ip corral-proxy-test { chain x { nonsense\n}\n}\n",
			false, &err);
	if (rc >= 0 || !err || !strstr(err->msg, "nonsense") || err->status != EIO)
		return 1;
	error_free(err);
	err = NULL;
	if (proxy_apply("/nonexistent/nft", opts.table, "", false, &err) >= 0 || !err)
		return 2;
	error_free(err);
	return 0;
}

/* The table as nft lists it, one token of rules and elements a line,
 * sorted: the same rules and elements whatever order they were made in. */
static char *listing(void)
{
	FILE *f = popen("nft list table ip corral-proxy-test | tr ',{}' '\\n\\n\\n' | "
			"sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | grep . | LC_ALL=C sort",
			"r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	pclose(f);
	fclose(m);
	return buf;
}

/* data: three texts; applies the first whole, then the changes to the
 * second and to the third; each time the kernel must hold what applying
 * that text whole gives. */
static int changes_child(void *data)
{
	char **texts = data;
	struct error *err = NULL;
	if (proxy_apply(NULL, opts.table, texts[0], false, &err) < 0)
		return 1;
	for (int i = 1; i < 3; i++) {
		cleanup_free char *c = NULL;
		if (proxy_diff(opts.table, texts[i - 1], texts[i], &c) != 0)
			return 10 + i;
		if (proxy_apply_changes(NULL, opts.table, c, false, &err) < 0) {
			fprintf(stderr, "changes %d: %s\n%s", i, err->msg, c);
			return 20 + i;
		}
		cleanup_free char *got = listing();
		if (proxy_apply(NULL, opts.table, texts[i], false, &err) < 0)
			return 30 + i;
		cleanup_free char *want = listing();
		if (!got || !want || strlen(want) < 500 || strcmp(got, want) != 0) {
			fprintf(stderr, "after changes %d:\n%s\nwhole:\n%s", i, got, want);
			return 40 + i;
		}
	}
	return 0;
}

static void test_proxy_apply__changes_equal_replacing(void **state)
{
	(void)state;
	if (!nft_usable())
		skip();
	char *texts[3] = {render_web(eps_12), render_web(eps_23), render_web(NULL)};
	int rc = in_private_netns(changes_child, texts);
	for (int i = 0; i < 3; i++)
		free(texts[i]);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

static void test_proxy_apply__reports_nft_errors(void **state)
{
	(void)state;
	if (!nft_usable())
		skip();
	int rc = in_private_netns(bad_text_child, NULL);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_proxy_render__cluster_ip_to_endpoints),
	    cmocka_unit_test(test_proxy_render__one_endpoint_no_draw),
	    cmocka_unit_test(test_proxy_render__multi_port_by_name),
	    cmocka_unit_test(test_proxy_render__unnamed_single_port),
	    cmocka_unit_test(test_proxy_render__udp),
	    cmocka_unit_test(test_proxy_render__nodeport),
	    cmocka_unit_test(test_proxy_render__nodeport_out_of_range_skipped),
	    cmocka_unit_test(test_proxy_render__client_ip_affinity),
	    cmocka_unit_test(test_proxy_render__no_endpoints_refused),
	    cmocka_unit_test(test_proxy_render__hairpin_and_bridge_masquerade),
	    cmocka_unit_test(test_proxy_render__own_gateway_taken_alone),
	    cmocka_unit_test(test_proxy_render__sorted_and_deterministic),
	    cmocka_unit_test(test_proxy_render__headless_and_unallocated_ignored),
	    cmocka_unit_test(test_proxy_render__garbage_skipped_without_harm),
	    cmocka_unit_test(test_proxy_render__conflicts_first_key_wins),
	    cmocka_unit_test(test_proxy_render__refuses_bad_options),
	    cmocka_unit_test(test_proxy_table_for_node__is_a_table_name),
	    cmocka_unit_test(test_proxy_diff__endpoints_change_touches_one_service),
	    cmocka_unit_test(test_proxy_diff__endpoints_gone_and_back),
	    cmocka_unit_test(test_proxy_diff__replaces_whole_when_better),
	    cmocka_unit_test(test_proxy_apply__nft_takes_the_text),
	    cmocka_unit_test(test_proxy_apply__changes_equal_replacing),
	    cmocka_unit_test(test_proxy_apply__reports_nft_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
