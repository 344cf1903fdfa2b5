/* test_noded_cidr.c: corral-noded's IPv4 ranges — parsing and printing
 * CIDRs, podCIDR slices of the cluster range chosen around those taken, and
 * the pod address manager (lowest free first, one per owner, release,
 * claims after a restart, exhaustion). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cidr.h"

static struct cidr parse(const char *s)
{
	struct cidr c;
	assert_int_equal(cidr_parse(s, &c, NULL), 0);
	return c;
}

static void assert_cidr(const struct cidr *c, const char *want)
{
	char buf[CIDR_STR_SIZE];
	cidr_format(c, buf);
	assert_string_equal(buf, want);
}

static void assert_ip(uint32_t ip, const char *want)
{
	char buf[CIDR_IP_SIZE];
	cidr_ip_format(ip, buf);
	assert_string_equal(buf, want);
}

static void test_cidr_parse__round_trips(void **state)
{
	(void)state;
	struct cidr c = parse("10.244.0.0/16");
	assert_int_equal(c.addr, 0x0af40000);
	assert_int_equal(c.prefix, 16);
	assert_cidr(&c, "10.244.0.0/16");
	c = parse("0.0.0.0/0");
	assert_cidr(&c, "0.0.0.0/0");
	c = parse("192.168.7.9/32");
	assert_cidr(&c, "192.168.7.9/32");
}

static void test_cidr_parse__refuses_malformed_and_host_bits(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "10.244.0.0",
	    "10.244.0.0/",
	    "10.244.0.0/33",
	    "/24",
	    "a.b.c.d/24",
	    "10.244.0/24",
	    "10.244.0.0/x",
	    "10.244.0.0/-1",
	    "10.244.0.0/24 ",
	    "10.244.1.5/24",
	    "10.244.0.0/024",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cidr c;
		struct error *err = NULL;
		if (cidr_parse(bad[i], &c, &err) == 0)
			fail_msg("\"%s\" parsed", bad[i]);
		assert_non_null(err);
		assert_int_equal(err->status, EINVAL);
		error_free(err);
	}
	struct error *err = NULL;
	struct cidr c;
	assert_true(cidr_parse("10.244.1.5/24", &c, &err) < 0);
	assert_non_null(strstr(err->msg, "10.244.1.0/24"));
	error_free(err);
	assert_int_equal(cidr_parse_loose("10.244.1.5/24", &c), 0);
	assert_cidr(&c, "10.244.1.0/24");
}

static void test_cidr_contains_and_overlaps(void **state)
{
	(void)state;
	struct cidr cluster = parse("10.244.0.0/16");
	struct cidr a = parse("10.244.3.0/24");
	struct cidr b = parse("10.244.4.0/24");
	struct cidr wide = parse("10.244.0.0/22");
	uint32_t ip;
	assert_int_equal(cidr_ip_parse("10.244.3.77", &ip), 0);
	assert_true(cidr_contains(&a, ip));
	assert_false(cidr_contains(&b, ip));
	assert_true(cidr_contains(&cluster, ip));
	assert_true(cidr_overlaps(&cluster, &a));
	assert_true(cidr_overlaps(&a, &cluster));
	assert_false(cidr_overlaps(&a, &b));
	assert_true(cidr_overlaps(&wide, &a));
	assert_false(cidr_overlaps(&wide, &b));
	assert_true(cidr_ip_parse("10.244.3", &ip) < 0);
}

static void test_cidr_slices__count_and_index(void **state)
{
	(void)state;
	struct cidr cluster = parse("10.244.0.0/16");
	assert_int_equal(cidr_slice_count(&cluster, 24), 256);
	assert_int_equal(cidr_slice_count(&cluster, 16), 1);
	assert_int_equal(cidr_slice_count(&cluster, 15), 0);
	assert_int_equal(cidr_slice_count(&cluster, 31), 0);
	struct cidr s = cidr_slice(&cluster, 24, 0);
	assert_cidr(&s, "10.244.0.0/24");
	s = cidr_slice(&cluster, 24, 255);
	assert_cidr(&s, "10.244.255.0/24");
	s = cidr_slice(&cluster, 26, 5);
	assert_cidr(&s, "10.244.1.64/26");
}

static void test_cidr_pick_slice__lowest_free_around_taken(void **state)
{
	(void)state;
	struct cidr cluster = parse("10.244.0.0/16");
	struct cidr out;
	assert_int_equal(cidr_pick_slice(&cluster, 24, NULL, 0, 0, &out, NULL), 0);
	assert_cidr(&out, "10.244.0.0/24");

	struct cidr taken[] = {parse("10.244.0.0/24"), parse("10.244.1.0/24"),
			       parse("10.244.3.0/24")};
	assert_int_equal(cidr_pick_slice(&cluster, 24, taken, 3, 0, &out, NULL), 0);
	assert_cidr(&out, "10.244.2.0/24");
	assert_int_equal(cidr_pick_slice(&cluster, 24, taken, 3, 1, &out, NULL), 0);
	assert_cidr(&out, "10.244.4.0/24");
	assert_int_equal(cidr_free_slices(&cluster, 24, taken, 3), 253);

	/* a wider range someone holds covers all of its slices; one outside
	 * the cluster range takes none */
	struct cidr wide[] = {parse("10.244.0.0/22"), parse("192.168.0.0/24")};
	assert_int_equal(cidr_pick_slice(&cluster, 24, wide, 2, 0, &out, NULL), 0);
	assert_cidr(&out, "10.244.4.0/24");
	assert_int_equal(cidr_free_slices(&cluster, 24, wide, 2), 252);
}

static void test_cidr_pick_slice__full_range_is_enospc(void **state)
{
	(void)state;
	struct cidr cluster = parse("10.244.0.0/23");
	struct cidr taken[] = {parse("10.244.0.0/24"), parse("10.244.1.0/24")};
	struct cidr out;
	struct error *err = NULL;
	assert_int_equal(cidr_pick_slice(&cluster, 24, taken, 2, 0, &out, &err), -ENOSPC);
	assert_non_null(strstr(err->msg, "10.244.0.0/23"));
	error_free(err);
	err = NULL;
	assert_int_equal(cidr_pick_slice(&cluster, 24, taken, 1, 1, &out, &err), -ENOSPC);
	error_free(err);
	err = NULL;
	assert_int_equal(cidr_pick_slice(&cluster, 22, NULL, 0, 0, &out, &err), -EINVAL);
	error_free(err);
}

static void test_ipam__lowest_free_one_per_owner(void **state)
{
	(void)state;
	struct cidr range = parse("10.244.3.0/24");
	cleanup_ipam struct ipam *ipam = ipam_new(&range);
	assert_int_equal(ipam_size(ipam), 253);
	assert_ip(ipam_gateway(ipam), "10.244.3.1");
	uint32_t a, b, again;
	assert_int_equal(ipam_allocate(ipam, "dev/a", &a, NULL), 0);
	assert_ip(a, "10.244.3.2");
	assert_int_equal(ipam_allocate(ipam, "dev/b", &b, NULL), 0);
	assert_ip(b, "10.244.3.3");
	assert_int_equal(ipam_allocate(ipam, "dev/a", &again, NULL), 0);
	assert_int_equal(again, a);
	assert_int_equal(ipam_used(ipam), 2);
	assert_string_equal(ipam_owner(ipam, b), "dev/b");
	assert_true(ipam_lookup(ipam, "dev/a", &again));
	assert_int_equal(again, a);
	assert_false(ipam_lookup(ipam, "dev/c", NULL));
}

static void test_ipam__released_address_is_handed_out_again(void **state)
{
	(void)state;
	struct cidr range = parse("10.244.3.0/24");
	cleanup_ipam struct ipam *ipam = ipam_new(&range);
	uint32_t a, b, c;
	assert_int_equal(ipam_allocate(ipam, "dev/a", &a, NULL), 0);
	assert_int_equal(ipam_allocate(ipam, "dev/b", &b, NULL), 0);
	assert_true(ipam_release(ipam, "dev/a"));
	assert_false(ipam_release(ipam, "dev/a"));
	assert_null(ipam_owner(ipam, a));
	assert_int_equal(ipam_used(ipam), 1);
	assert_int_equal(ipam_allocate(ipam, "dev/c", &c, NULL), 0);
	assert_int_equal(c, a);
}

static void test_ipam_claim__after_a_restart(void **state)
{
	(void)state;
	struct cidr range = parse("10.244.3.0/24");
	cleanup_ipam struct ipam *ipam = ipam_new(&range);
	uint32_t ip, other, got;
	assert_int_equal(cidr_ip_parse("10.244.3.10", &ip), 0);
	assert_int_equal(ipam_claim(ipam, "dev/a", ip, NULL), 0);
	assert_int_equal(ipam_claim(ipam, "dev/a", ip, NULL), 0);
	struct error *err = NULL;
	assert_int_equal(ipam_claim(ipam, "dev/b", ip, &err), -EEXIST);
	assert_non_null(strstr(err->msg, "dev/a"));
	error_free(err);
	/* a claimed address is not handed out; the lowest free still is */
	assert_int_equal(ipam_allocate(ipam, "dev/b", &got, NULL), 0);
	assert_ip(got, "10.244.3.2");
	/* claiming another address moves the owner */
	assert_int_equal(cidr_ip_parse("10.244.3.11", &other), 0);
	assert_int_equal(ipam_claim(ipam, "dev/a", other, NULL), 0);
	assert_null(ipam_owner(ipam, ip));
	assert_int_equal(ipam_used(ipam), 2);

	static const char *const not_pod[] = {"10.244.3.0", "10.244.3.1", "10.244.3.255",
					      "10.244.4.2"};
	for (size_t i = 0; i < 4; i++) {
		err = NULL;
		assert_int_equal(cidr_ip_parse(not_pod[i], &ip), 0);
		assert_int_equal(ipam_claim(ipam, "dev/c", ip, &err), -EINVAL);
		error_free(err);
	}
}

static void test_ipam__exhaustion(void **state)
{
	(void)state;
	struct cidr range = parse("10.244.3.0/30");
	cleanup_ipam struct ipam *ipam = ipam_new(&range);
	assert_int_equal(ipam_size(ipam), 1);
	uint32_t ip;
	assert_int_equal(ipam_allocate(ipam, "dev/a", &ip, NULL), 0);
	assert_ip(ip, "10.244.3.2");
	struct error *err = NULL;
	assert_int_equal(ipam_allocate(ipam, "dev/b", &ip, &err), -ENOSPC);
	assert_non_null(strstr(err->msg, "10.244.3.0/30"));
	error_free(err);
	ipam_release(ipam, "dev/a");
	assert_int_equal(ipam_allocate(ipam, "dev/b", &ip, NULL), 0);

	struct cidr tiny = parse("10.244.3.0/31");
	cleanup_ipam struct ipam *none = ipam_new(&tiny);
	assert_int_equal(ipam_size(none), 0);
	err = NULL;
	assert_int_equal(ipam_allocate(none, "dev/a", &ip, &err), -ENOSPC);
	error_free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cidr_parse__round_trips),
	    cmocka_unit_test(test_cidr_parse__refuses_malformed_and_host_bits),
	    cmocka_unit_test(test_cidr_contains_and_overlaps),
	    cmocka_unit_test(test_cidr_slices__count_and_index),
	    cmocka_unit_test(test_cidr_pick_slice__lowest_free_around_taken),
	    cmocka_unit_test(test_cidr_pick_slice__full_range_is_enospc),
	    cmocka_unit_test(test_ipam__lowest_free_one_per_owner),
	    cmocka_unit_test(test_ipam__released_address_is_handed_out_again),
	    cmocka_unit_test(test_ipam_claim__after_a_restart),
	    cmocka_unit_test(test_ipam__exhaustion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
