/* test_fs_svcindex.c: corral-fs's index of the addresses and node ports that
 * Services hold: a clash or an address outside the range refused with
 * Kubernetes' message, updates that keep what they hold, reservations
 * given back, deletes, the load at start, and the claims a write names for
 * a shared store (taken and given back by canonical address and port). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "svcindex.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static struct svcindex *index16(void)
{
	struct servicerange r;
	assert_int_equal(servicerange_parse("10.96.0.0/16", &r, NULL), 0);
	return svcindex_new(&r);
}

/* Reserves and settles, as a successful write does; returns reserve's
 * result and leaves its message in *msg (may be NULL). */
static int store(struct svcindex *x, const char *owner, const char *name, const struct ynode *svc,
		 const struct ynode *old, char **msg)
{
	struct svcindex_claim got;
	struct error *err = NULL;
	int r = svcindex_reserve(x, owner, name, svc, old, &got, &err);
	if (r == 0)
		svcindex_settle(x, owner, svc, old, &got);
	if (msg)
		*msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	return r;
}

static void test_svcindex__clash_refused(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *a = y("{spec: {clusterIP: 10.96.0.50, ports: [{port: 80}]}}");
	cleanup_ynode struct ynode *b = y("{spec: {clusterIP: 10.96.0.50, ports: [{port: 81}]}}");
	assert_int_equal(store(x, "dev/a", "a", a, NULL, NULL), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(store(x, "dev/b", "b", b, NULL, &msg), -EINVAL);
	assert_string_equal(msg, "Service \"b\" is invalid: spec.clusterIP: Invalid value: "
				 "\"10.96.0.50\": provided IP is already allocated (to service "
				 "dev/a)");
	/* The holder writes itself again: no clash with itself. */
	assert_int_equal(store(x, "dev/a", "a", a, a, NULL), 0);
	/* Another namespace's b is another Service. */
	assert_int_equal(store(x, "prod/a", "a", a, NULL, NULL), -EINVAL);
	svcindex_free(x);
}

static void test_svcindex__out_of_range_refused(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *far = y("{spec: {clusterIP: 10.97.0.5}}");
	cleanup_ynode struct ynode *net = y("{spec: {clusterIP: 10.96.0.0}}");
	cleanup_ynode struct ynode *none = y("{spec: {clusterIP: None}}");
	cleanup_ynode struct ynode *empty = y("{spec: {ports: [{port: 80}]}}");
	cleanup_ynode struct ynode *ext =
	    y("{spec: {type: ExternalName, externalName: example.com, clusterIP: 10.97.0.5}}");
	cleanup_free char *msg = NULL;
	assert_int_equal(store(x, "dev/far", "far", far, NULL, &msg), -EINVAL);
	assert_non_null(strstr(msg,
			       "spec.clusterIP: Invalid value: \"10.97.0.5\": provided IP is "
			       "not in the valid range. The range of valid IPs is 10.96.0.0/16"));
	assert_int_equal(store(x, "dev/net", "net", net, NULL, NULL), -EINVAL);
	assert_int_equal(store(x, "dev/none", "none", none, NULL, NULL), 0);
	assert_int_equal(store(x, "dev/none2", "none2", none, NULL, NULL), 0);
	assert_int_equal(store(x, "dev/empty", "empty", empty, NULL, NULL), 0);
	assert_int_equal(store(x, "dev/ext", "ext", ext, NULL, NULL), 0);
	/* One stored before the range changed keeps its address on update. */
	assert_int_equal(store(x, "dev/far", "far", far, far, NULL), 0);
	svcindex_free(x);
}

static void test_svcindex__node_ports(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *a =
	    y("{spec: {type: NodePort, ports: [{port: 80, nodePort: 31002}, {port: 81, nodePort: "
	      "31003}]}}");
	cleanup_ynode struct ynode *b =
	    y("{spec: {type: NodePort, ports: [{port: 80, nodePort: 31004}, {port: 81, nodePort: "
	      "31003}]}}");
	cleanup_ynode struct ynode *both = y(
	    "{spec: {clusterIP: 10.96.0.7, type: NodePort, ports: [{port: 80, nodePort: 31002}]}}");
	cleanup_ynode struct ynode *first = y("{spec: {clusterIP: 10.96.0.7}}");
	assert_int_equal(store(x, "dev/a", "a", a, NULL, NULL), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(store(x, "dev/b", "b", b, NULL, &msg), -EINVAL);
	assert_string_equal(msg, "Service \"b\" is invalid: spec.ports[1].nodePort: Invalid value: "
				 "31003: provided port is already allocated (to service dev/a)");
	/* b was refused whole: its free port 31004 is not kept for it. */
	cleanup_ynode struct ynode *c =
	    y("{spec: {type: NodePort, ports: [{port: 80, nodePort: 31004}]}}");
	assert_int_equal(store(x, "dev/c", "c", c, NULL, NULL), 0);
	/* Two refusals at once are listed together. */
	assert_int_equal(store(x, "dev/f", "f", first, NULL, NULL), 0);
	cleanup_free char *two = NULL;
	assert_int_equal(store(x, "dev/g", "g", both, NULL, &two), -EINVAL);
	assert_non_null(strstr(two, "Service \"g\" is invalid: [spec.clusterIP: "));
	assert_non_null(strstr(two, ", spec.ports[0].nodePort: Invalid value: 31002"));
	svcindex_free(x);
}

static void test_svcindex__update_frees_and_delete_drops(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *np = y(
	    "{spec: {clusterIP: 10.96.0.9, type: NodePort, ports: [{port: 80, nodePort: 31002}]}}");
	cleanup_ynode struct ynode *cip = y("{spec: {clusterIP: 10.96.0.9, ports: [{port: 80}]}}");
	cleanup_ynode struct ynode *other_np =
	    y("{spec: {type: NodePort, ports: [{port: 80, nodePort: 31002}]}}");
	cleanup_ynode struct ynode *other_ip = y("{spec: {clusterIP: 10.96.0.9}}");
	assert_int_equal(store(x, "dev/a", "a", np, NULL, NULL), 0);
	assert_int_equal(store(x, "dev/b", "b", other_np, NULL, NULL), -EINVAL);
	/* a turns into a ClusterIP service: its node port is free. */
	assert_int_equal(store(x, "dev/a", "a", cip, np, NULL), 0);
	assert_int_equal(store(x, "dev/b", "b", other_np, NULL, NULL), 0);
	assert_int_equal(store(x, "dev/c", "c", other_ip, NULL, NULL), -EINVAL);
	svcindex_drop(x, "dev/a", cip);
	assert_int_equal(store(x, "dev/c", "c", other_ip, NULL, NULL), 0);
	svcindex_free(x);
}

static void test_svcindex__unreserve_gives_back(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *a = y("{spec: {clusterIP: 10.96.0.20, type: NodePort, ports: "
					  "[{port: 80, nodePort: 31000}]}}");
	struct svcindex_claim got;
	assert_int_equal(svcindex_reserve(x, "dev/a", "a", a, NULL, &got, NULL), 0);
	assert_int_equal(got.ip, 20);
	assert_int_equal(got.nports, 1);
	/* Reserved: a concurrent write of another is refused... */
	assert_int_equal(store(x, "dev/b", "b", a, NULL, NULL), -EINVAL);
	/* ... until the first write fails and gives it back. */
	svcindex_unreserve(x, "dev/a", &got);
	assert_int_equal(store(x, "dev/b", "b", a, NULL, NULL), 0);
	svcindex_free(x);
}

static void test_svcindex__load(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *a = y("{spec: {clusterIP: 10.96.0.30, type: NodePort, ports: "
					  "[{port: 80, nodePort: 31000}]}}");
	cleanup_ynode struct ynode *dup = y("{spec: {clusterIP: 10.96.0.30}}");
	svcindex_load(x, "dev/a", a);
	svcindex_load(x, "dev/dup", dup); /* stored before the index: the first keeps it */
	assert_int_equal(store(x, "dev/b", "b", a, NULL, NULL), -EINVAL);
	svcindex_drop(x, "dev/dup", dup); /* not the holder: nothing freed */
	assert_int_equal(store(x, "dev/b", "b", dup, NULL, NULL), -EINVAL);
	svcindex_drop(x, "dev/a", a);
	assert_int_equal(store(x, "dev/b", "b", a, NULL, NULL), 0);
	svcindex_free(x);
}

/* The hook's claims for a write of svc over old, as "+name holder" or
 * "-name holder" joined by spaces. */
static char *hook_claims(struct svcindex *x, const char *name, struct ynode *svc,
			 const struct ynode *old)
{
	struct admission_request rq = {.name = name, .owner = "dev/b", .obj = svc, .old = old};
	void *claim = NULL;
	assert_int_equal(svcindex_hook_reserve(x, &rq, &claim, NULL), 0);
	char *out = xstrdup("");
	for (size_t i = 0; i < rq.nclaims; i++) {
		char *next =
		    xasprintf("%s%s%c%s %s", out, i ? " " : "", rq.claims[i].take ? '+' : '-',
			      rq.claims[i].name, rq.claims[i].holder);
		free(out);
		out = next;
	}
	if (rq.nclaims && rq.claims[0].take)
		assert_non_null(strstr(rq.claims[0].refusal, "is already allocated"));
	svcindex_hook_unreserve(x, &rq, claim);
	admission_claims_clear(&rq);
	return out;
}

static void test_svcindex__claims_name_what_changes_hands(void **state)
{
	(void)state;
	struct svcindex *x = index16();
	cleanup_ynode struct ynode *a =
	    y("{spec: {clusterIP: 10.96.0.30, type: NodePort, ports: "
	      "[{port: 80, nodePort: 31000}, {port: 81, nodePort: 31001}]}}");
	cleanup_ynode struct ynode *b = y("{spec: {clusterIP: 10.96.0.31, type: NodePort, ports: "
					  "[{port: 80, nodePort: 31000}]}}");
	cleanup_ynode struct ynode *none = y("{spec: {clusterIP: None}}");
	cleanup_free char *create = hook_claims(x, "b", a, NULL);
	cleanup_free char *update = hook_claims(x, "b", b, a);
	cleanup_free char *same = hook_claims(x, "b", b, b);
	cleanup_free char *gone = hook_claims(x, "b", NULL, b);
	cleanup_free char *headless = hook_claims(x, "b", none, NULL);
	assert_string_equal(create, "+svcip/10.96.0.30 service dev/b +nodeport/31000 service dev/b "
				    "+nodeport/31001 service dev/b");
	assert_string_equal(update, "+svcip/10.96.0.31 service dev/b -svcip/10.96.0.30 service "
				    "dev/b -nodeport/31001 service dev/b");
	assert_string_equal(same, "");
	assert_string_equal(gone, "-svcip/10.96.0.31 service dev/b -nodeport/31000 service dev/b");
	assert_string_equal(headless, "");
	svcindex_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_svcindex__clash_refused),
	    cmocka_unit_test(test_svcindex__out_of_range_refused),
	    cmocka_unit_test(test_svcindex__node_ports),
	    cmocka_unit_test(test_svcindex__update_frees_and_delete_drops),
	    cmocka_unit_test(test_svcindex__unreserve_gives_back),
	    cmocka_unit_test(test_svcindex__load),
	    cmocka_unit_test(test_svcindex__claims_name_what_changes_hands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
