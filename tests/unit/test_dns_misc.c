/* test_dns_misc.c: corral-dns's small parsers: podCIDR gateways, upstream
 * addresses, HTTP request lines, the metrics text; the server's addresses,
 * and its UDP threads answering and forwarding on loopback. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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
#include "wire.h"
#include "ynode.h"
#include "zone.h"

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

/* A UDP socket on loopback, its port in *port. */
static int udp_socket(int *port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Turns the loop until fd has something to read (at most 5 s). */
static void wait_readable(struct loop *loop, int fd)
{
	for (int i = 0; i < 250; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 0) == 1)
			return;
		assert_int_equal(loop_run_once(loop, 20, NULL), 0);
	}
	fail_msg("nothing came on fd %d", fd);
}

/* Asks name's A from client, to port, with id. */
static void send_query(int client, int port, const char *name, uint16_t id)
{
	uint8_t q[512], wire[DNS_MAX_NAME];
	assert_true(dns_name_from_text(name, wire) > 0);
	struct dns_builder b;
	dns_build_init(&b, q, sizeof(q), id, DNS_F_RD);
	dns_build_question(&b, wire, DNS_T_A, DNS_C_IN);
	size_t n = dns_build_finish(&b);
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(sendto(client, q, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
}

/* The descriptors this process has open. */
static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

/* A zone with one Service: dev/web at 10.96.1.5. */
static struct zone *web_zone(void)
{
	struct error *err = NULL;
	struct zone *z = zone_new("cluster.local", 5, "10.96.0.10", &err);
	assert_non_null(z);
	struct ynode *svc = NULL;
	const char *web = "{spec: {clusterIP: 10.96.1.5}}";
	assert_int_equal(yaml_parse_one(web, strlen(web), &svc, &err), 0);
	zone_set_service(z, "dev", "web", svc, NULL);
	ynode_free(svc);
	return z;
}

/* 3 UDP threads on 127.0.0.1:port (the server keeps a pointer to it:
 * the caller's copy must outlive the server). */
static struct server_config three_threads(int port, const char *upstreams)
{
	return (struct server_config){.listen = "127.0.0.1",
				      .port = port,
				      .tcp_idle_ms = 1000,
				      .tcp_max = 4,
				      .threads = 3,
				      .upstreams = upstreams,
				      .forward_timeout_ms = 2000};
}

static void test_misc__server_udp_threads(void **state)
{
	(void)state;
	int fds = open_fds();
	struct error *err = NULL;
	struct loop *loop = loop_new(&err);
	struct zone *z = web_zone();
	int up_port, port = free_port();
	int upstream = udp_socket(&up_port);
	cleanup_free char *ups = xasprintf("127.0.0.1:%d", up_port);
	struct metrics m = {0};
	struct server_config cfg = three_threads(port, ups);
	struct server *s = server_new(loop, &cfg, z, &m, &err);
	assert_non_null(s);
	/* clients on many ports, spread over the threads' sockets */
	for (int i = 0; i < 12; i++) {
		int client_port, client = udp_socket(&client_port);
		send_query(client, port, "Web.dev.svc.cluster.local", (uint16_t)(100 + i));
		wait_readable(loop, client);
		uint8_t r[512];
		ssize_t n = recv(client, r, sizeof(r), 0);
		assert_true(n >= 16);
		assert_int_equal(r[0] << 8 | r[1], 100 + i);
		assert_int_equal(r[3] & 0xf, DNS_R_NOERROR);
		assert_int_equal(r[7], 1); /* one answer, 10.96.1.5, last */
		assert_memory_equal(r + n - 4, "\x0a\x60\x01\x05", 4);
		close(client);
	}
	/* outside the zone: from a thread to the loop's forwarder, to the
	 * upstream, back to the client */
	int client_port, client = udp_socket(&client_port);
	send_query(client, port, "example.com", 7);
	wait_readable(loop, upstream);
	uint8_t q[512];
	struct sockaddr_storage from;
	socklen_t fromlen = sizeof(from);
	ssize_t n = recvfrom(upstream, q, sizeof(q), 0, (struct sockaddr *)&from, &fromlen);
	assert_true(n > 12);
	q[2] |= 0x80; /* QR */
	q[3] = (uint8_t)((q[3] & 0xf0) | DNS_R_NXDOMAIN);
	assert_int_equal(sendto(upstream, q, (size_t)n, 0, (struct sockaddr *)&from, fromlen), n);
	wait_readable(loop, client);
	uint8_t r[512];
	assert_true(recv(client, r, sizeof(r), 0) >= 12);
	assert_int_equal(r[0] << 8 | r[1], 7);
	assert_int_equal(r[3] & 0xf, DNS_R_NXDOMAIN);
	close(client);
	/* every thread's counters, summed */
	struct metrics sum;
	server_metrics(s, &sum);
	assert_int_equal(sum.by_type[0], 13);
	assert_int_equal(sum.by_rcode[DNS_R_NOERROR], 12);
	assert_int_equal(sum.by_rcode[DNS_R_NXDOMAIN], 1);
	assert_int_equal(sum.forwarded, 1);
	assert_int_equal(sum.latency_count, 13);
	server_free(s);
	close(upstream);
	zone_free(z);
	loop_free(loop);
	assert_int_equal(open_fds(), fds); /* every socket, epoll set, eventfd closed */
}

/* Asks port from a new client (a new source port, so SO_REUSEPORT may
 * pick any thread's socket) and checks web's answer. */
static void ask_web(struct loop *loop, int port, uint16_t id)
{
	int client_port, client = udp_socket(&client_port);
	send_query(client, port, "web.dev.svc.cluster.local", id);
	wait_readable(loop, client);
	uint8_t r[512];
	ssize_t n = recv(client, r, sizeof(r), 0);
	assert_true(n >= 16);
	assert_int_equal(r[0] << 8 | r[1], id);
	assert_int_equal(r[3] & 0xf, DNS_R_NOERROR);
	close(client);
}

static void test_misc__server_udp_thread_dies(void **state)
{
	(void)state;
	int fds = open_fds();
	struct error *err = NULL;
	struct loop *loop = loop_new(&err);
	struct zone *z = web_zone();
	int port = free_port();
	struct metrics m = {0};
	struct server_config cfg = three_threads(port, "");
	struct server *s = server_new(loop, &cfg, z, &m, &err);
	assert_non_null(s);
	assert_int_equal(server_udp_threads(s), 3);
	server_fail_thread(s, 1);
	for (int i = 0; i < 250 && server_udp_threads(s) != 2; i++)
		assert_int_equal(loop_run_once(loop, 20, NULL), 0);
	assert_int_equal(server_udp_threads(s), 2);
	assert_false(server_failed(s));
	/* Its socket is closed: every client, whatever its port, is answered
	 * by the two left (a socket left bound would take a share of them,
	 * unread, and wait_readable would fail). */
	for (int i = 0; i < 24; i++)
		ask_web(loop, port, (uint16_t)(200 + i));
	/* An address added later has no socket for it, and is answered. */
	assert_int_equal(server_listen(s, "127.0.0.2", &err), 1);
	/* The last ones gone, the server says so and stops the loop. */
	server_fail_thread(s, 0);
	server_fail_thread(s, 2);
	for (int i = 0; i < 250 && !server_failed(s); i++)
		assert_int_equal(loop_run_once(loop, 20, NULL), 0);
	assert_true(server_failed(s));
	assert_int_equal(server_udp_threads(s), 0);
	assert_int_equal(loop_run(loop, &err), 0); /* stopped: returns at once */
	server_free(s);
	zone_free(z);
	loop_free(loop);
	assert_int_equal(open_fds(), fds); /* nothing closed twice or left open */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_misc__gateway),
	    cmocka_unit_test(test_misc__upstream_addr),
	    cmocka_unit_test(test_misc__http_request),
	    cmocka_unit_test(test_misc__metrics),
	    cmocka_unit_test(test_misc__server_listen),
	    cmocka_unit_test(test_misc__server_udp_threads),
	    cmocka_unit_test(test_misc__server_udp_thread_dies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
