/* test_noded_hostgw.c: corral-noded's host-gw routes — which node gets a
 * route from this host (another host's, on a connected subnet, its podCIDR
 * a slice of the cluster range), which does not and why, overlaps, the
 * routes read back from ip(8), and the changes between what is installed
 * and what is wanted (idempotent, never removing what is not ours). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hostgw.h"

static uint32_t ip(const char *s)
{
	uint32_t v;
	assert_int_equal(cidr_ip_parse(s, &v), 0);
	return v;
}

/* Host 1 of the lab: eth0 10.77.0.1/24, loopback, and the gateway of its
 * own node's bridge. */
static const struct hostgw_addr *lab_addrs(size_t *n)
{
	static struct hostgw_addr a[3];
	a[0] = (struct hostgw_addr){.ip = 0x7f000001, .prefix = 8, .dev = "lo"};
	a[1] = (struct hostgw_addr){.ip = 0x0a4d0001, .prefix = 24, .dev = "eth0"};
	a[2] = (struct hostgw_addr){.ip = 0x0af40101, .prefix = 24, .dev = "crl01234567"};
	*n = 3;
	return a;
}

static struct hostgw_host lab_host(void)
{
	struct hostgw_host h = {0};
	assert_int_equal(cidr_parse("10.244.0.0/16", &h.cluster, NULL), 0);
	assert_int_equal(cidr_parse("10.96.0.0/16", &h.service, NULL), 0);
	h.addrs = lab_addrs(&h.n_addrs);
	return h;
}

static void test_hostgw_decide__routes_another_hosts_node(void **state)
{
	(void)state;
	struct hostgw_host h = lab_host();
	struct hostgw_route r = {0};
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.77.0.2", &r), HOSTGW_ROUTE);
	assert_int_equal(r.dst.addr, ip("10.244.2.0"));
	assert_int_equal(r.dst.prefix, 24);
	assert_int_equal(r.via, ip("10.77.0.2"));
}

static void test_hostgw_decide__nothing_for_nodes_of_this_host(void **state)
{
	(void)state;
	struct hostgw_host h = lab_host();
	struct hostgw_route r = {0};
	/* our own InternalIP: another agent of this host, its bridge is here */
	assert_int_equal(hostgw_decide(&h, "10.244.3.0/24", "10.77.0.1", &r), HOSTGW_LOCAL);
	assert_int_equal(r.dst.addr, ip("10.244.3.0"));
	/* any address of ours, loopback too (a node that fell back to it) */
	assert_int_equal(hostgw_decide(&h, "10.244.4.0/24", "127.0.0.1", &r), HOSTGW_LOCAL);
}

static void test_hostgw_decide__podcidr_must_be_a_slice_of_the_range(void **state)
{
	(void)state;
	struct hostgw_host h = lab_host();
	struct hostgw_route r;
	assert_int_equal(hostgw_decide(&h, NULL, "10.77.0.2", &r), HOSTGW_NO_CIDR);
	assert_int_equal(hostgw_decide(&h, "", "10.77.0.2", &r), HOSTGW_NO_CIDR);
	assert_int_equal(hostgw_decide(&h, "nonsense", "10.77.0.2", &r), HOSTGW_NO_CIDR);
	assert_int_equal(hostgw_decide(&h, "10.245.0.0/24", "10.77.0.2", &r), HOSTGW_OUTSIDE);
	assert_int_equal(hostgw_decide(&h, "0.0.0.0/0", "10.77.0.2", &r), HOSTGW_OUTSIDE);
	assert_int_equal(hostgw_decide(&h, "10.96.0.0/24", "10.77.0.2", &r), HOSTGW_OUTSIDE);
	/* wider than the range, or the range itself: its unreachable route
	 * must never be replaced */
	assert_int_equal(hostgw_decide(&h, "10.244.0.0/16", "10.77.0.2", &r), HOSTGW_OUTSIDE);
	assert_int_equal(hostgw_decide(&h, "10.0.0.0/8", "10.77.0.2", &r), HOSTGW_OUTSIDE);
	/* host bits are cleared, as others may write them */
	assert_int_equal(hostgw_decide(&h, "10.244.9.7/24", "10.77.0.2", &r), HOSTGW_ROUTE);
	assert_int_equal(r.dst.addr, ip("10.244.9.0"));
}

static void test_hostgw_decide__next_hop_must_be_connected_unicast(void **state)
{
	(void)state;
	struct hostgw_host h = lab_host();
	struct hostgw_route r;
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", NULL, &r), HOSTGW_NO_IP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "not-an-ip", &r), HOSTGW_NO_IP);
	/* off every subnet of the host: would need a gateway beyond it */
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.78.0.2", &r), HOSTGW_UNCONNECTED);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "8.8.8.8", &r), HOSTGW_UNCONNECTED);
	/* a bridge's subnet is no uplink, nor are the pod and service ranges */
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.244.1.7", &r), HOSTGW_BAD_HOP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.96.0.10", &r), HOSTGW_BAD_HOP);
	/* loopback of another host, multicast, broadcast, the subnet's own
	 * network and broadcast addresses */
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "127.0.0.2", &r), HOSTGW_BAD_HOP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "224.0.0.1", &r), HOSTGW_BAD_HOP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "255.255.255.255", &r), HOSTGW_BAD_HOP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.77.0.0", &r), HOSTGW_BAD_HOP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.77.0.255", &r), HOSTGW_BAD_HOP);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "0.0.0.0", &r), HOSTGW_BAD_HOP);
}

static void test_hostgw_decide__no_uplink_no_route(void **state)
{
	(void)state;
	struct hostgw_host h = lab_host();
	h.n_addrs = 1; /* loopback alone */
	struct hostgw_route r;
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "10.77.0.2", &r), HOSTGW_UNCONNECTED);
	assert_int_equal(hostgw_decide(&h, "10.244.2.0/24", "127.0.0.5", &r), HOSTGW_BAD_HOP);
}

static void test_hostgw_plan__routes_sorted_overlaps_dropped(void **state)
{
	(void)state;
	struct hostgw_host h = lab_host();
	struct hostgw_node nodes[] = {
	    {.name = "lab-3", .pod_cidr = "10.244.3.0/24", .internal_ip = "10.77.0.3"},
	    {.name = "lab-1", .pod_cidr = "10.244.1.0/24", .internal_ip = "10.77.0.1"},
	    {.name = "lab-2", .pod_cidr = "10.244.2.0/24", .internal_ip = "10.77.0.2"},
	    /* two nodes claiming one range: neither is reached */
	    {.name = "twin-a", .pod_cidr = "10.244.8.0/24", .internal_ip = "10.77.0.8"},
	    {.name = "twin-b", .pod_cidr = "10.244.8.0/23", .internal_ip = "10.77.0.9"},
	    /* a remote claim on our own bridge's range */
	    {.name = "thief", .pod_cidr = "10.244.1.128/25", .internal_ip = "10.77.0.7"},
	    {.name = "far", .pod_cidr = "10.244.5.0/24", .internal_ip = "192.168.1.5"},
	    {.name = "new", .pod_cidr = NULL, .internal_ip = "10.77.0.6"},
	};
	struct hostgw_route *r = NULL;
	size_t n = hostgw_plan(&h, nodes, 8, &r);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].dst.addr, ip("10.244.2.0"));
	assert_int_equal(r[0].via, ip("10.77.0.2"));
	assert_int_equal(r[1].dst.addr, ip("10.244.3.0"));
	assert_int_equal(r[1].via, ip("10.77.0.3"));
	assert_int_equal(nodes[0].verdict, HOSTGW_ROUTE);
	assert_int_equal(nodes[1].verdict, HOSTGW_LOCAL);
	assert_int_equal(nodes[3].verdict, HOSTGW_OVERLAP);
	assert_int_equal(nodes[4].verdict, HOSTGW_OVERLAP);
	assert_int_equal(nodes[5].verdict, HOSTGW_OVERLAP);
	assert_int_equal(nodes[6].verdict, HOSTGW_UNCONNECTED);
	assert_int_equal(nodes[7].verdict, HOSTGW_NO_CIDR);
	free(r);
	n = hostgw_plan(&h, NULL, 0, &r);
	assert_int_equal(n, 0);
	free(r);
}

static void test_hostgw_plan__same_on_every_agent_of_a_host(void **state)
{
	(void)state;
	/* two agents of host 1 see the same nodes: whatever their order,
	 * they want the same routes, so neither undoes the other's */
	struct hostgw_host h = lab_host();
	struct hostgw_node a[] = {
	    {.name = "lab-1a", .pod_cidr = "10.244.1.0/24", .internal_ip = "10.77.0.1"},
	    {.name = "lab-1b", .pod_cidr = "10.244.4.0/24", .internal_ip = "10.77.0.1"},
	    {.name = "lab-2", .pod_cidr = "10.244.2.0/24", .internal_ip = "10.77.0.2"},
	};
	struct hostgw_node b[] = {a[2], a[1], a[0]};
	struct hostgw_route *ra = NULL, *rb = NULL;
	size_t na = hostgw_plan(&h, a, 3, &ra), nb = hostgw_plan(&h, b, 3, &rb);
	assert_int_equal(na, 1);
	assert_int_equal(nb, 1);
	assert_memory_equal(ra, rb, sizeof(*ra));
	free(ra);
	free(rb);
}

static void test_hostgw_parse_route__reads_ip_output(void **state)
{
	(void)state;
	struct hostgw_route r;
	assert_int_equal(hostgw_parse_route("10.244.2.0/24 via 10.77.0.2 dev eth0 proto 204 ", &r),
			 0);
	assert_int_equal(r.dst.addr, ip("10.244.2.0"));
	assert_int_equal(r.dst.prefix, 24);
	assert_int_equal(r.via, ip("10.77.0.2"));
	assert_int_equal(hostgw_parse_route("10.244.7.9 via 10.77.0.3 dev eth0", &r), 0);
	assert_int_equal(r.dst.prefix, 32);
	assert_int_equal(hostgw_parse_route("unreachable 10.244.0.0/16", &r), -1);
	assert_int_equal(hostgw_parse_route("10.244.1.0/24 dev crl0 scope link", &r), -1);
	assert_int_equal(hostgw_parse_route("", &r), -1);
}

static struct hostgw_route route(const char *dst, const char *via)
{
	struct hostgw_route r;
	assert_int_equal(cidr_parse(dst, &r.dst, NULL), 0);
	r.via = ip(via);
	return r;
}

static void test_hostgw_changes__adds_moves_and_removes_only_ours(void **state)
{
	(void)state;
	struct cidr cluster;
	assert_int_equal(cidr_parse("10.244.0.0/16", &cluster, NULL), 0);
	struct hostgw_route want[] = {route("10.244.2.0/24", "10.77.0.2"),
				      route("10.244.3.0/24", "10.77.0.3")};
	/* nothing installed: both added */
	char *c = hostgw_changes(&cluster, NULL, 0, want, 2);
	assert_string_equal(c, "route replace 10.244.2.0/24 via 10.77.0.2 proto 204\n"
			       "route replace 10.244.3.0/24 via 10.77.0.3 proto 204\n");
	free(c);
	/* as wanted: nothing to do (a second agent of the host changes nothing) */
	assert_null(hostgw_changes(&cluster, want, 2, want, 2));
	/* a node moved to another host; one gone; one outside the range
	 * (someone else's, or the range itself) is never touched */
	struct hostgw_route have[] = {
	    route("10.244.2.0/24", "10.77.0.9"),
	    route("10.244.6.0/24", "10.77.0.6"),
	    route("10.244.0.0/16", "10.77.0.6"),
	    route("192.168.0.0/24", "10.77.0.6"),
	};
	c = hostgw_changes(&cluster, have, 4, want, 2);
	assert_string_equal(c, "route del 10.244.6.0/24 proto 204\n"
			       "route replace 10.244.2.0/24 via 10.77.0.2 proto 204\n"
			       "route replace 10.244.3.0/24 via 10.77.0.3 proto 204\n");
	free(c);
	/* nothing wanted any more (the last agent of the host stops) */
	c = hostgw_changes(&cluster, want, 2, NULL, 0);
	assert_string_equal(c, "route del 10.244.2.0/24 proto 204\n"
			       "route del 10.244.3.0/24 proto 204\n");
	free(c);
}

static void test_hostgw_owned__slices_only(void **state)
{
	(void)state;
	struct cidr cluster, c;
	assert_int_equal(cidr_parse("10.244.0.0/16", &cluster, NULL), 0);
	assert_int_equal(cidr_parse("10.244.5.0/24", &c, NULL), 0);
	assert_true(hostgw_owned(&cluster, &c));
	assert_int_equal(cidr_parse("10.244.0.0/16", &c, NULL), 0);
	assert_false(hostgw_owned(&cluster, &c));
	assert_int_equal(cidr_parse("10.0.0.0/8", &c, NULL), 0);
	assert_false(hostgw_owned(&cluster, &c));
	assert_int_equal(cidr_parse("10.245.1.0/24", &c, NULL), 0);
	assert_false(hostgw_owned(&cluster, &c));
}

static void test_hostgw_verdict_str__names_every_verdict(void **state)
{
	(void)state;
	for (int v = HOSTGW_ROUTE; v <= HOSTGW_OVERLAP; v++)
		assert_string_not_equal(hostgw_verdict_str((enum hostgw_verdict)v), "?");
	assert_string_equal(hostgw_verdict_str((enum hostgw_verdict)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostgw_decide__routes_another_hosts_node),
	    cmocka_unit_test(test_hostgw_decide__nothing_for_nodes_of_this_host),
	    cmocka_unit_test(test_hostgw_decide__podcidr_must_be_a_slice_of_the_range),
	    cmocka_unit_test(test_hostgw_decide__next_hop_must_be_connected_unicast),
	    cmocka_unit_test(test_hostgw_decide__no_uplink_no_route),
	    cmocka_unit_test(test_hostgw_plan__routes_sorted_overlaps_dropped),
	    cmocka_unit_test(test_hostgw_plan__same_on_every_agent_of_a_host),
	    cmocka_unit_test(test_hostgw_parse_route__reads_ip_output),
	    cmocka_unit_test(test_hostgw_changes__adds_moves_and_removes_only_ours),
	    cmocka_unit_test(test_hostgw_owned__slices_only),
	    cmocka_unit_test(test_hostgw_verdict_str__names_every_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
