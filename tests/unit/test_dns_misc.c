/* test_dns_misc.c: corral-dns's small parsers: podCIDR gateways, upstream
 * addresses, HTTP request lines, the metrics text; the server's addresses. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "forward.h"
#include "http.h"
#include "kubedns.h"
#include "loop.h"
#include "metrics.h"
#include "server.h"
#include "util.h"

static void test_misc__gateway(void **state)
{
	(void)state;
	char gw[16];
	assert_int_equal(kubedns_gateway("10.244.0.0/24", gw), 0);
	assert_string_equal(gw, "10.244.0.1");
	assert_int_equal(kubedns_gateway("10.244.3.7/24", gw), 0); /* host bits cleared */
	assert_string_equal(gw, "10.244.3.1");
	assert_int_equal(kubedns_gateway("10.244.0.0/16", gw), 0);
	assert_string_equal(gw, "10.244.0.1");
	assert_int_equal(kubedns_gateway("10.244.0.0/31", gw), -1);
	assert_int_equal(kubedns_gateway("10.244.0.0", gw), -1);
	assert_int_equal(kubedns_gateway("10.244.0.0/", gw), -1);
	assert_int_equal(kubedns_gateway("10.244.0.0/2x", gw), -1);
	assert_int_equal(kubedns_gateway("fd00::/64", gw), -1);
}

static void test_misc__upstream_addr(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len;
	struct error *err = NULL;
	assert_int_equal(forward_parse_addr("127.0.0.1", &ss, &len, &err), 0);
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(in->sin_port), 53);
	assert_int_equal(forward_parse_addr(" 127.0.0.1:5353", &ss, &len, &err), 0);
	assert_int_equal(ntohs(in->sin_port), 5353);
	assert_int_equal(forward_parse_addr("[::1]:54", &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 54);
	const char *bad[] = {"",       "dns.google", "127.0.0.1:0", "127.0.0.1:70000",
			     "::1:53", "[::1",	     "[::1]x",	    "1.2.3.4:x"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_true(forward_parse_addr(bad[i], &ss, &len, &err) < 0);
		assert_non_null(err);
		error_free(err);
		err = NULL;
	}
}

static void test_misc__http_request(void **state)
{
	(void)state;
	char path[64];
	int head = 0;
	const char *r = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 0);
	assert_string_equal(path, "/healthz");
	assert_int_equal(head, 0);
	r = "HEAD /metrics?x=1 HTTP/1.0\n\n";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 0);
	assert_string_equal(path, "/metrics");
	assert_int_equal(head, 1);
	r = "POST /metrics HTTP/1.1\r\n\r\n";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 405);
	r = "GET metrics HTTP/1.1\r\n\r\n";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 400);
	r = "GET /metrics\r\n\r\n";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 400);
	r = "GET /metrics SPDY/3\r\n\r\n";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 400);
	r = "GET /metrics HTTP/1.1";
	assert_int_equal(http_parse_request(r, strlen(r), path, sizeof(path), &head), 400);
}

static void test_misc__metrics(void **state)
{
	(void)state;
	struct metrics m = {0};
	struct error *err = NULL;
	struct zone *z = zone_new("cluster.local", 5, "10.96.0.10", &err);
	metrics_query(&m, false, DNS_T_A, DNS_R_NOERROR, false);
	metrics_query(&m, true, DNS_T_SRV, DNS_R_NXDOMAIN, true);
	metrics_query(&m, false, 999, DNS_R_BADVERS, false);
	metrics_latency(&m, 30000);	 /* 30 µs */
	metrics_latency(&m, 9000000000); /* 9 s: +Inf only */
	size_t len;
	cleanup_free char *text = metrics_render(&m, z, &len);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "corral_dns_requests_total{type=\"A\"} 1\n"));
	assert_non_null(strstr(text, "corral_dns_requests_total{type=\"other\"} 1\n"));
	assert_non_null(strstr(text, "corral_dns_responses_total{rcode=\"NXDOMAIN\"} 1\n"));
	assert_non_null(strstr(text, "corral_dns_responses_total{rcode=\"BADVERS\"} 1\n"));
	assert_non_null(strstr(text, "corral_dns_requests_proto_total{proto=\"tcp\"} 1\n"));
	assert_non_null(strstr(text, "corral_dns_truncated_total 1\n"));
	assert_non_null(
	    strstr(text, "corral_dns_request_duration_seconds_bucket{le=\"2.5e-05\"} 0\n"));
	assert_non_null(
	    strstr(text, "corral_dns_request_duration_seconds_bucket{le=\"5e-05\"} 1\n"));
	assert_non_null(strstr(text, "corral_dns_request_duration_seconds_bucket{le=\"2.5\"} 1\n"));
	assert_non_null(
	    strstr(text, "corral_dns_request_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(text, "corral_dns_request_duration_seconds_count 2\n"));
	zone_free(z);
}

/* A loopback port free for both UDP and TCP, as the kernel picks it. */
static int free_port(void)
{
	for (int tries = 0; tries < 20; tries++) {
		int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof(a);
		int port = -1;
		if (bind(t, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    getsockname(t, (struct sockaddr *)&a, &len) == 0 &&
		    bind(u, (struct sockaddr *)&a, sizeof(a)) == 0)
			port = ntohs(a.sin_port);
		close(t);
		close(u);
		if (port > 0)
			return port;
	}
	return -1;
}

static void test_misc__server_listen(void **state)
{
	(void)state;
	struct error *err = NULL;
	struct loop *loop = loop_new(&err);
	assert_non_null(loop);
	struct zone *z = zone_new("cluster.local", 5, "10.96.0.10", &err);
	assert_non_null(z);
	struct metrics m = {0};
	int port = free_port();
	assert_true(port > 0);
	struct server_config cfg = {.listen = "127.0.0.1",
				    .port = port,
				    .tcp_idle_ms = 1000,
				    .tcp_max = 4,
				    .upstreams = "",
				    .forward_timeout_ms = 100};
	struct server *s = server_new(loop, &cfg, z, &m, &err);
	assert_non_null(s);
	/* an address it has already: nothing new */
	assert_int_equal(server_listen(s, "127.0.0.1", &err), 0);
	/* not an address of this host yet (a gateway before its bridge): it
	 * binds all the same, once */
	assert_int_equal(server_listen(s, "10.255.254.1", &err), 1);
	assert_int_equal(server_listen(s, "10.255.254.1", &err), 0);
	assert_true(server_listen(s, "gateways", &err) < 0);
	assert_non_null(err);
	error_free(err);
	err = NULL;
	server_free(s);
	/* no address but the ones to come: a server with no socket yet */
	cfg.listen = "";
	s = server_new(loop, &cfg, z, &m, &err);
	assert_non_null(s);
	assert_int_equal(server_listen(s, "127.0.0.1", &err), 1);
	server_free(s);
	zone_free(z);
	loop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_misc__gateway),	cmocka_unit_test(test_misc__upstream_addr),
	    cmocka_unit_test(test_misc__http_request),	cmocka_unit_test(test_misc__metrics),
	    cmocka_unit_test(test_misc__server_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
