/* test_dns_zone.c: the zone built from Services and Endpoints, and the
 * answers given from it: every record type, NXDOMAIN and NODATA with the
 * SOA, every rcode, EDNS0 and truncation, changes and removals. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "answer.h"
#include "testlib.h"
#include "util.h"
#include "wire.h"
#include "ynode.h"
#include "zone.h"

static const char *web_svc = "{kind: Service, metadata: {name: web, namespace: dev},"
			     " spec: {clusterIP: 10.96.1.5, ports: [{name: http, port: 80,"
			     " protocol: TCP}, {name: dns, port: 53, protocol: UDP}, {port: 81}]}}";
static const char *web_eps = "{kind: Endpoints, metadata: {name: web, namespace: dev},"
			     " subsets: [{addresses: [{ip: 10.244.0.9}], ports: [{name: http,"
			     " port: 8080}]}]}";
static const char *db_svc = "{kind: Service, metadata: {name: db, namespace: dev},"
			    " spec: {clusterIP: None, ports: [{name: pg, port: 5432}]}}";
static const char *db_eps =
    "{kind: Endpoints, metadata: {name: db, namespace: dev},"
    " subsets: [{addresses: [{ip: 10.244.0.5, hostname: db-0}, {ip: 10.244.0.6}],"
    " notReadyAddresses: [{ip: 10.244.0.7, hostname: db-2}],"
    " ports: [{name: pg, port: 5432, protocol: TCP}]}]}";
static const char *ext_svc = "{kind: Service, metadata: {name: ext, namespace: dev},"
			     " spec: {type: ExternalName, externalName: db.example.com}}";

static void set(struct zone *z, const char *ns, const char *name, const char *svc, const char *eps)
{
	cleanup_ynode struct ynode *s = svc ? y(svc) : NULL;
	cleanup_ynode struct ynode *e = eps ? y(eps) : NULL;
	zone_set_service(z, ns, name, s, e);
}

static int setup(void **state)
{
	cleanup_error struct error *err = NULL;
	struct zone *z = zone_new("cluster.local", 5, "10.96.0.10", &err);
	assert_non_null(z);
	set(z, "dev", "web", web_svc, web_eps);
	set(z, "dev", "db", db_svc, db_eps);
	set(z, "dev", "ext", ext_svc, NULL);
	*state = z;
	return 0;
}

static int teardown(void **state)
{
	zone_free(*state);
	return 0;
}

/* A response read back. */
struct rr {
	char name[1024];
	uint16_t type;
	uint32_t ttl;
	char data[1100];
};

struct resp {
	uint16_t id, flags;
	unsigned rcode; /* with the OPT's upper bits */
	unsigned counts[4];
	struct rr rrs[128];
	size_t nrr;
	char qname[1024];
	bool opt;
	uint16_t opt_size;
	size_t len;
};

static void read_name(const uint8_t *p, size_t len, size_t *off, char *out)
{
	uint8_t n[DNS_MAX_NAME];
	assert_true(dns_name_read(p, len, off, n) > 0);
	dns_name_to_text(n, out);
}

static void parse_resp(const uint8_t *p, size_t len, struct resp *r)
{
	memset(r, 0, sizeof(*r));
	r->len = len;
	assert_true(len >= 12);
	r->id = (uint16_t)(p[0] << 8 | p[1]);
	r->flags = (uint16_t)(p[2] << 8 | p[3]);
	r->rcode = p[3] & 0xf;
	for (int i = 0; i < 4; i++)
		r->counts[i] = (unsigned)(p[4 + 2 * i] << 8 | p[5 + 2 * i]);
	size_t off = 12;
	if (r->counts[0]) {
		read_name(p, len, &off, r->qname);
		off += 4;
	}
	unsigned total = r->counts[1] + r->counts[2] + r->counts[3];
	for (unsigned i = 0; i < total; i++) {
		struct rr *rr = &r->rrs[r->nrr++];
		read_name(p, len, &off, rr->name);
		assert_true(off + 10 <= len);
		rr->type = (uint16_t)(p[off] << 8 | p[off + 1]);
		rr->ttl = (uint32_t)p[off + 4] << 24 | (uint32_t)p[off + 5] << 16 |
			  (uint32_t)p[off + 6] << 8 | p[off + 7];
		size_t rdlen = (size_t)(p[off + 8] << 8 | p[off + 9]);
		uint16_t klass = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
		off += 10;
		assert_true(off + rdlen <= len);
		size_t o = off;
		char name[1024];
		switch (rr->type) {
		case DNS_T_A:
			assert_int_equal(rdlen, 4);
			inet_ntop(AF_INET, p + off, rr->data, sizeof(rr->data));
			break;
		case DNS_T_SRV:
			o += 6;
			read_name(p, len, &o, name);
			snprintf(rr->data, sizeof(rr->data), "%u %u %u %s",
				 p[off] << 8 | p[off + 1], p[off + 2] << 8 | p[off + 3],
				 p[off + 4] << 8 | p[off + 5], name);
			break;
		case DNS_T_PTR:
		case DNS_T_NS:
		case DNS_T_CNAME:
			read_name(p, len, &o, rr->data);
			break;
		case DNS_T_SOA:
			read_name(p, len, &o, rr->data);
			break;
		case DNS_T_OPT:
			r->opt = true;
			r->opt_size = klass;
			r->rcode |= (rr->ttl >> 24) << 4;
			break;
		}
		off += rdlen;
	}
	assert_int_equal(off, len);
}

/* Asks z; fills r. */
static enum answer_action ask(const struct zone *z, const char *name, uint16_t type, uint16_t edns,
			      bool tcp, bool fwd, struct resp *r)
{
	uint8_t q[512], out[DNS_MSG_MAX], wire[DNS_MAX_NAME];
	assert_true(dns_name_from_text(name, wire) > 0);
	struct dns_builder b;
	dns_build_init(&b, q, sizeof(q), 0x4242, DNS_F_RD);
	dns_build_question(&b, wire, type, DNS_C_IN);
	if (edns)
		dns_build_opt(&b, edns, 0, false);
	size_t n = dns_build_finish(&b), outlen = 0;
	struct answer_info info;
	enum answer_action a = answer_query(z, fwd, tcp, q, n, out, &outlen, &info);
	if (a == ANSWER_REPLY) {
		parse_resp(out, outlen, r);
		assert_int_equal(info.rcode, r->rcode);
		assert_int_equal(info.qtype, type);
		assert_int_equal(r->id, 0x4242);
		assert_true(r->flags & DNS_F_QR);
		assert_true(r->flags & DNS_F_RD);
		char bare[1024];
		snprintf(bare, sizeof(bare), "%s", name);
		if (bare[0] && bare[strlen(bare) - 1] == '.')
			bare[strlen(bare) - 1] = '\0';
		assert_string_equal(r->qname, bare);
	}
	return a;
}

/* The answer records' data, sorted and joined with ' | '. */
static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void answers(const struct resp *r, uint16_t type, char *out, size_t n)
{
	const char *v[128];
	size_t k = 0;
	for (size_t i = 0; i < r->counts[1]; i++)
		if (r->rrs[i].type == type)
			v[k++] = r->rrs[i].data;
	qsort(v, k, sizeof(*v), cmp);
	out[0] = '\0';
	for (size_t i = 0; i < k; i++)
		snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " | " : "", v[i]);
}

static void expect(const struct zone *z, const char *name, uint16_t type, const char *want)
{
	struct resp r;
	char got[4096];
	assert_int_equal(ask(z, name, type, 0, false, false, &r), ANSWER_REPLY);
	assert_int_equal(r.rcode, DNS_R_NOERROR);
	assert_true(r.flags & DNS_F_AA);
	answers(&r, type, got, sizeof(got));
	assert_string_equal(got, want);
	for (size_t i = 0; i < r.counts[1]; i++) {
		assert_string_equal(r.rrs[i].name, r.qname); /* the question's case */
		assert_int_equal(r.rrs[i].ttl, 5);
	}
}

/* NXDOMAIN or NODATA: no answers, the apex's SOA as authority. */
static void expect_negative(const struct zone *z, const char *name, uint16_t type, unsigned rcode)
{
	struct resp r;
	assert_int_equal(ask(z, name, type, 0, false, false, &r), ANSWER_REPLY);
	assert_int_equal(r.rcode, rcode);
	assert_true(r.flags & DNS_F_AA);
	assert_int_equal(r.counts[1], 0);
	assert_int_equal(r.counts[2], 1);
	assert_int_equal(r.rrs[0].type, DNS_T_SOA);
	assert_string_equal(r.rrs[0].name, "cluster.local");
	assert_string_equal(r.rrs[0].data, "ns.dns.cluster.local");
}

static void test_zone__a(void **state)
{
	expect(*state, "web.dev.svc.cluster.local", DNS_T_A, "10.96.1.5");
	expect(*state, "WeB.DEV.svc.Cluster.local", DNS_T_A, "10.96.1.5");
	expect(*state, "web.dev.svc.cluster.local.", DNS_T_A, "10.96.1.5");
}

static void test_zone__headless_a(void **state)
{
	/* ready addresses only, not 10.244.0.7 */
	expect(*state, "db.dev.svc.cluster.local", DNS_T_A, "10.244.0.5 | 10.244.0.6");
}

static void test_zone__hostname_a(void **state)
{
	expect(*state, "db-0.db.dev.svc.cluster.local", DNS_T_A, "10.244.0.5");
	expect(*state, "10-244-0-6.db.dev.svc.cluster.local", DNS_T_A, "10.244.0.6");
	expect_negative(*state, "db-2.db.dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
}

static void test_zone__srv(void **state)
{
	expect(*state, "_http._tcp.web.dev.svc.cluster.local", DNS_T_SRV,
	       "0 100 80 web.dev.svc.cluster.local");
	expect(*state, "_dns._udp.web.dev.svc.cluster.local", DNS_T_SRV,
	       "0 100 53 web.dev.svc.cluster.local");
	expect_negative(*state, "_dns._tcp.web.dev.svc.cluster.local", DNS_T_SRV, DNS_R_NXDOMAIN);
	expect(*state, "_pg._tcp.db.dev.svc.cluster.local", DNS_T_SRV,
	       "0 100 5432 10-244-0-6.db.dev.svc.cluster.local | "
	       "0 100 5432 db-0.db.dev.svc.cluster.local");
	/* the targets' addresses come as additional records */
	struct resp r;
	ask(*state, "_pg._tcp.db.dev.svc.cluster.local", DNS_T_SRV, 0, false, false, &r);
	assert_int_equal(r.counts[3], 2);
	assert_int_equal(r.rrs[2].type, DNS_T_A);
	/* _tcp below a service is a name that exists, without records */
	expect_negative(*state, "_tcp.web.dev.svc.cluster.local", DNS_T_SRV, DNS_R_NOERROR);
}

static void test_zone__ptr(void **state)
{
	expect(*state, "5.1.96.10.in-addr.arpa", DNS_T_PTR, "web.dev.svc.cluster.local");
	expect(*state, "5.0.244.10.in-addr.arpa", DNS_T_PTR, "db-0.db.dev.svc.cluster.local");
	expect(*state, "6.0.244.10.in-addr.arpa", DNS_T_PTR, "10-244-0-6.db.dev.svc.cluster.local");
	expect(*state, "9.0.244.10.in-addr.arpa", DNS_T_PTR,
	       "10-244-0-9.web.dev.svc.cluster.local");
	struct resp r;
	/* a reverse name we do not know is not ours */
	assert_int_equal(ask(*state, "7.0.244.10.in-addr.arpa", DNS_T_PTR, 0, false, true, &r),
			 ANSWER_FORWARD);
}

static void test_zone__pod_a(void **state)
{
	expect(*state, "10-244-1-7.dev.pod.cluster.local", DNS_T_A, "10.244.1.7");
	expect(*state, "10-244-1-7.any.pod.cluster.local", DNS_T_A, "10.244.1.7");
	expect_negative(*state, "10-244-1-7.dev.pod.cluster.local", DNS_T_AAAA, DNS_R_NOERROR);
	expect_negative(*state, "10-244-1-300.dev.pod.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "10-244-01-7.dev.pod.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "10-244-1.dev.pod.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "10-244-1-7-8.dev.pod.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "x.10-244-1-7.dev.pod.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "dev.pod.cluster.local", DNS_T_A, DNS_R_NOERROR);
}

static void test_zone__cname(void **state)
{
	expect(*state, "ext.dev.svc.cluster.local", DNS_T_A, "");
	struct resp r;
	ask(*state, "ext.dev.svc.cluster.local", DNS_T_A, 0, false, false, &r);
	assert_int_equal(r.counts[1], 1);
	assert_int_equal(r.rrs[0].type, DNS_T_CNAME);
	assert_string_equal(r.rrs[0].data, "db.example.com");
}

static void test_zone__apex(void **state)
{
	expect(*state, "cluster.local", DNS_T_NS, "ns.dns.cluster.local");
	expect(*state, "ns.dns.cluster.local", DNS_T_A, "10.96.0.10");
	struct resp r;
	ask(*state, "Cluster.Local", DNS_T_SOA, 0, false, false, &r);
	assert_int_equal(r.rcode, DNS_R_NOERROR);
	assert_int_equal(r.counts[1], 1);
	assert_int_equal(r.counts[2], 0);
	assert_int_equal(r.rrs[0].type, DNS_T_SOA);
	assert_string_equal(r.rrs[0].name, "Cluster.Local");
	assert_string_equal(r.rrs[0].data, "ns.dns.cluster.local");
	/* ANY at the apex: NS and SOA */
	ask(*state, "cluster.local", DNS_T_ANY, 0, false, false, &r);
	assert_int_equal(r.counts[1], 2);
	/* below the apex, SOA is NODATA */
	expect_negative(*state, "svc.cluster.local", DNS_T_SOA, DNS_R_NOERROR);
}

static void test_zone__nxdomain_and_nodata(void **state)
{
	expect_negative(*state, "nope.dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "web.nope.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "x.web.dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(*state, "web.dev.svc.cluster.local", DNS_T_AAAA, DNS_R_NOERROR);
	expect_negative(*state, "web.dev.svc.cluster.local", DNS_T_MX, DNS_R_NOERROR);
	expect_negative(*state, "dev.svc.cluster.local", DNS_T_A, DNS_R_NOERROR);
	expect_negative(*state, "svc.cluster.local", DNS_T_A, DNS_R_NOERROR);
	expect_negative(*state, "cluster.local", DNS_T_A, DNS_R_NOERROR);
}

static void test_zone__changes(void **state)
{
	struct zone *z = *state;
	size_t records = zone_record_count(z), names = zone_name_count(z);
	/* a pod leaves the endpoints */
	set(z, "dev", "db", db_svc,
	    "{kind: Endpoints, subsets: [{addresses: [{ip: 10.244.0.6}], ports: [{name: pg,"
	    " port: 5432}]}]}");
	expect(z, "db.dev.svc.cluster.local", DNS_T_A, "10.244.0.6");
	expect_negative(z, "db-0.db.dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	struct resp r;
	assert_int_equal(ask(z, "5.0.244.10.in-addr.arpa", DNS_T_PTR, 0, false, false, &r),
			 ANSWER_REPLY);
	assert_int_equal(r.rcode, DNS_R_REFUSED);
	/* the service goes: its names and the empty namespace with it */
	set(z, "dev", "db", NULL, NULL);
	set(z, "dev", "web", NULL, NULL);
	set(z, "dev", "ext", NULL, NULL);
	expect_negative(z, "db.dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(z, "web.dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(z, "dev.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	expect_negative(z, "svc.cluster.local", DNS_T_A, DNS_R_NOERROR);
	assert_int_equal(zone_service_count(z), 0);
	assert_int_equal(zone_record_count(z), 2); /* NS and its A */
	/* and back: the same records as before, nothing left over */
	set(z, "dev", "web", web_svc, web_eps);
	set(z, "dev", "db", db_svc, db_eps);
	set(z, "dev", "ext", ext_svc, NULL);
	assert_int_equal(zone_record_count(z), records);
	assert_int_equal(zone_name_count(z), names);
	/* a ClusterIP set anew moves its PTR */
	set(z, "dev", "web",
	    "{kind: Service, spec: {clusterIP: 10.96.1.6, ports: [{name: http, port: 80}]}}", NULL);
	expect(z, "web.dev.svc.cluster.local", DNS_T_A, "10.96.1.6");
	expect(z, "6.1.96.10.in-addr.arpa", DNS_T_PTR, "web.dev.svc.cluster.local");
	assert_int_equal(ask(z, "5.1.96.10.in-addr.arpa", DNS_T_PTR, 0, false, true, &r),
			 ANSWER_FORWARD);
}

static void test_zone__many_services(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	struct zone *z = zone_new("cluster.local", 5, "10.96.0.10", &err);
	char name[32], svc[256];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		snprintf(svc, sizeof(svc), "{spec: {clusterIP: 10.96.%d.%d, ports: [{port: 80}]}}",
			 i / 250, i % 250 + 1);
		set(z, i % 2 ? "a" : "b", name, svc, NULL);
	}
	assert_int_equal(zone_service_count(z), 5000);
	expect(z, "s4999.a.svc.cluster.local", DNS_T_A, "10.96.19.250");
	expect(z, "s0.b.svc.cluster.local", DNS_T_A, "10.96.0.1");
	expect_negative(z, "s0.a.svc.cluster.local", DNS_T_A, DNS_R_NXDOMAIN);
	zone_free(z);
}

static void test_zone__rcodes(void **state)
{
	struct zone *z = *state;
	struct resp r;
	uint8_t out[DNS_MSG_MAX];
	size_t outlen;
	struct answer_info info;
	/* outside the zone: REFUSED without upstreams, forwarded with */
	assert_int_equal(ask(z, "example.com", DNS_T_A, 0, false, false, &r), ANSWER_REPLY);
	assert_int_equal(r.rcode, DNS_R_REFUSED);
	assert_false(r.flags & DNS_F_AA);
	assert_int_equal(ask(z, "example.com", DNS_T_A, 0, false, true, &r), ANSWER_FORWARD);
	assert_int_equal(ask(z, "web.dev.svc.cluster.local", DNS_T_A, 0, false, true, &r),
			 ANSWER_REPLY);
	assert_true(r.flags & DNS_F_RA);
	/* zone transfers are refused */
	assert_int_equal(ask(z, "cluster.local", DNS_T_AXFR, 0, true, false, &r), ANSWER_REPLY);
	assert_int_equal(r.rcode, DNS_R_REFUSED);
	/* FORMERR: two questions; the id comes back */
	uint8_t q[512];
	uint8_t wire[DNS_MAX_NAME];
	dns_name_from_text("web.dev.svc.cluster.local", wire);
	struct dns_builder b;
	dns_build_init(&b, q, sizeof(q), 0x7777, DNS_F_RD);
	dns_build_question(&b, wire, DNS_T_A, DNS_C_IN);
	dns_build_question(&b, wire, DNS_T_A, DNS_C_IN);
	size_t n = dns_build_finish(&b);
	assert_int_equal(answer_query(z, false, false, q, n, out, &outlen, &info), ANSWER_REPLY);
	parse_resp(out, outlen, &r);
	assert_int_equal(r.rcode, DNS_R_FORMERR);
	assert_int_equal(r.id, 0x7777);
	assert_int_equal(info.rcode, DNS_R_FORMERR);
	/* NOTIMP: opcode UPDATE */
	dns_build_init(&b, q, sizeof(q), 0x7778, (uint16_t)(5 << 11));
	dns_build_question(&b, wire, DNS_T_SOA, DNS_C_IN);
	n = dns_build_finish(&b);
	assert_int_equal(answer_query(z, false, false, q, n, out, &outlen, &info), ANSWER_REPLY);
	parse_resp(out, outlen, &r);
	assert_int_equal(r.rcode, DNS_R_NOTIMP);
	assert_int_equal(DNS_OPCODE(r.flags), 5);
	/* class CH in the zone: REFUSED */
	dns_build_init(&b, q, sizeof(q), 0x7779, 0);
	dns_build_question(&b, wire, DNS_T_A, 3);
	n = dns_build_finish(&b);
	answer_query(z, false, false, q, n, out, &outlen, &info);
	parse_resp(out, outlen, &r);
	assert_int_equal(r.rcode, DNS_R_REFUSED);
	/* BADVERS: EDNS version 1, the rcode's upper bits in the OPT */
	dns_build_init(&b, q, sizeof(q), 0x777a, 0);
	dns_build_question(&b, wire, DNS_T_A, DNS_C_IN);
	dns_build_opt(&b, 1232, 0, false);
	n = dns_build_finish(&b);
	q[n - 5] = 1;
	answer_query(z, false, false, q, n, out, &outlen, &info);
	parse_resp(out, outlen, &r);
	assert_true(r.opt);
	assert_int_equal(r.rcode, DNS_R_BADVERS);
	assert_int_equal(out[3] & 0xf, 0);
	assert_int_equal(r.counts[1], 0);
	/* SERVFAIL when an upstream fails */
	dns_build_init(&b, q, sizeof(q), 0x777b, DNS_F_RD);
	dns_build_question(&b, wire, DNS_T_A, DNS_C_IN);
	n = dns_build_finish(&b);
	outlen = answer_error(q, n, false, DNS_R_SERVFAIL, out);
	parse_resp(out, outlen, &r);
	assert_int_equal(r.rcode, DNS_R_SERVFAIL);
	assert_int_equal(r.id, 0x777b);
	assert_string_equal(r.qname, "web.dev.svc.cluster.local");
	/* responses and runts get no answer */
	q[2] |= 0x80;
	assert_int_equal(answer_query(z, false, false, q, n, out, &outlen, &info), ANSWER_DROP);
	assert_int_equal(answer_query(z, false, false, q, 11, out, &outlen, &info), ANSWER_DROP);
}

static void test_zone__edns(void **state)
{
	struct resp r;
	ask(*state, "web.dev.svc.cluster.local", DNS_T_A, 0, false, false, &r);
	assert_false(r.opt);
	ask(*state, "web.dev.svc.cluster.local", DNS_T_A, 1232, false, false, &r);
	assert_true(r.opt);
	assert_int_equal(r.opt_size, DNS_UDP_MAX);
	assert_int_equal(r.counts[1], 1);
	assert_int_equal(r.counts[3], 1);
}

/* dev/big: headless, 60 ready addresses (60 * 16 bytes of answers, over
 * 512), with ports ("ports: [...], " or ""). */
static void set_big(struct zone *z, const char *ports)
{
	char eps[8192];
	snprintf(eps, sizeof(eps), "{subsets: [{%saddresses: [", ports);
	for (int i = 0; i < 60; i++)
		snprintf(eps + strlen(eps), sizeof(eps) - strlen(eps), "%s{ip: 10.244.9.%d}",
			 i ? ", " : "", i + 1);
	strcat(eps, "]}]}");
	set(z, "dev", "big", "{spec: {clusterIP: None}}", eps);
}

static void test_zone__truncation(void **state)
{
	struct zone *z = *state;
	set_big(z, "");
	struct resp r;
	/* without EDNS: 512 bytes, TC, the question alone */
	ask(z, "big.dev.svc.cluster.local", DNS_T_A, 0, false, false, &r);
	assert_true(r.flags & DNS_F_TC);
	assert_int_equal(r.counts[1], 0);
	assert_true(r.len <= 512);
	/* an advertised 600 bytes: still too small, and the OPT stays */
	ask(z, "big.dev.svc.cluster.local", DNS_T_A, 600, false, false, &r);
	assert_true(r.flags & DNS_F_TC);
	assert_true(r.opt);
	assert_true(r.len <= 600);
	/* 1232: it fits */
	ask(z, "big.dev.svc.cluster.local", DNS_T_A, 1232, false, false, &r);
	assert_false(r.flags & DNS_F_TC);
	assert_int_equal(r.counts[1], 60);
	assert_true(r.len <= 1232);
	/* TCP: always whole */
	ask(z, "big.dev.svc.cluster.local", DNS_T_A, 0, true, false, &r);
	assert_false(r.flags & DNS_F_TC);
	assert_int_equal(r.counts[1], 60);
	set(z, "dev", "big", NULL, NULL);
}

/* Answers q three times: built (ready answers off), then twice with them
 * (the first keeps one, the second uses it); all three the same bytes. */
static void same_answers(struct zone *z, const uint8_t *q, size_t n, bool tcp, bool fwd)
{
	static uint8_t want[DNS_MSG_MAX], got[DNS_MSG_MAX];
	size_t wlen = 0, glen = 0;
	struct answer_info wi, gi;
	zone_keep_answers(z, false);
	enum answer_action wa = answer_query(z, fwd, tcp, q, n, want, &wlen, &wi);
	zone_keep_answers(z, true);
	for (int i = 0; i < 2; i++) {
		enum answer_action ga = answer_query(z, fwd, tcp, q, n, got, &glen, &gi);
		assert_int_equal(ga, wa);
		if (wa != ANSWER_REPLY)
			continue;
		assert_int_equal(glen, wlen);
		assert_memory_equal(got, want, wlen);
		assert_int_equal(gi.rcode, wi.rcode);
		assert_int_equal(gi.qtype, wi.qtype);
		assert_int_equal(gi.truncated, wi.truncated);
	}
}

/* Every name of the zone (and a few it has not), in odd cases, of every
 * kept type and some others, with and without EDNS (sizes around the
 * answers' lengths, DO), RD and CD, classes IN and ANY, UDP and TCP. */
static void same_answers_all(struct zone *z)
{
	static const char *const names[] = {"web.dev.svc.cluster.local",
					    "WeB.Dev.svc.CLUSTER.local",
					    "_http._tcp.web.dev.svc.cluster.local",
					    "_HTTP._Tcp.web.dev.svc.cluster.local",
					    "db.dev.svc.cluster.local",
					    "DB-0.db.dev.svc.cluster.local",
					    "10-244-0-6.db.dev.svc.cluster.local",
					    "_pg._tcp.db.dev.svc.cluster.local",
					    "ext.dev.svc.cluster.local",
					    "big.dev.svc.cluster.local",
					    "BIG.dev.svc.cluster.local",
					    "dev.svc.cluster.local",
					    "svc.cluster.local",
					    "Cluster.Local",
					    "ns.dns.cluster.local",
					    "5.1.96.10.in-addr.arpa",
					    "9.0.244.10.IN-ADDR.ARPA",
					    "5.0.244.10.in-addr.arpa",
					    "nope.dev.svc.cluster.local",
					    "10-1-2-3.dev.pod.cluster.local",
					    "example.com"};
	static const uint16_t types[] = {DNS_T_A,   DNS_T_AAAA,	 DNS_T_SRV, DNS_T_PTR,
					 DNS_T_TXT, DNS_T_CNAME, DNS_T_ANY, DNS_T_SOA};
	static const uint16_t sizes[] = {0, 512, 600, 1232, 4096, 65000};
	static const uint16_t flags[] = {0, DNS_F_RD, DNS_F_RD | DNS_F_CD};
	for (size_t ni = 0; ni < ARRAY_SIZE(names); ni++) {
		uint8_t wire[DNS_MAX_NAME];
		assert_true(dns_name_from_text(names[ni], wire) > 0);
		for (size_t ti = 0; ti < ARRAY_SIZE(types); ti++)
			for (size_t si = 0; si < ARRAY_SIZE(sizes); si++)
				for (size_t fi = 0; fi < ARRAY_SIZE(flags); fi++) {
					uint8_t q[512];
					struct dns_builder b;
					dns_build_init(&b, q, sizeof(q), (uint16_t)(ni * 977 + si),
						       flags[fi]);
					dns_build_question(&b, wire, types[ti],
							   fi == 2 ? DNS_C_ANY : DNS_C_IN);
					if (sizes[si])
						dns_build_opt(&b, sizes[si], 0, si % 2);
					size_t n = dns_build_finish(&b);
					same_answers(z, q, n, false, fi == 1);
					same_answers(z, q, n, true, fi == 1);
				}
	}
}

static void test_zone__ready_answers(void **state)
{
	struct zone *z = *state;
	set_big(z, "ports: [{name: p, port: 1}], ");
	same_answers_all(z);
	/* changes: the answers kept for the names they touch are dropped,
	 * the SOA's serial of the others' NODATA moves */
	set(z, "dev", "db", db_svc,
	    "{subsets: [{addresses: [{ip: 10.244.0.9, hostname: db-0}], ports: [{name: pg,"
	    " port: 5433}]}]}");
	set(z, "dev", "web", "{spec: {clusterIP: 10.96.1.6, ports: [{name: http, port: 81}]}}",
	    NULL);
	set(z, "dev", "big", "{spec: {clusterIP: None}}",
	    "{subsets: [{addresses: [{ip: 10.244.9.1}]}]}");
	same_answers_all(z);
	/* a name that loses one of its records and stays: the PTR of an
	 * address two services share */
	set(z, "dev", "ext", "{spec: {clusterIP: None}}",
	    "{subsets: [{addresses: [{ip: 10.244.0.9, hostname: e}]}]}");
	same_answers_all(z);
	set(z, "dev", "db", NULL, NULL);
	same_answers_all(z);
	set(z, "dev", "ext", "{spec: {clusterIP: 10.96.1.7}}", NULL);
	same_answers_all(z);
	/* a kept answer is the built one, with the asked name's case */
	struct resp r;
	expect(z, "ext.dev.svc.cluster.local", DNS_T_A, "10.96.1.7");
	ask(z, "EXT.dev.svc.cluster.local", DNS_T_A, 0, false, false, &r);
	assert_string_equal(r.qname, "EXT.dev.svc.cluster.local");
	assert_string_equal(r.rrs[0].name, "EXT.dev.svc.cluster.local");
}

static void test_zone__bad_config(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	assert_null(zone_new("", 5, "10.96.0.10", &err));
	error_free(err);
	err = NULL;
	assert_null(zone_new("cluster..local", 5, "10.96.0.10", &err));
	error_free(err);
	err = NULL;
	assert_null(zone_new("cluster.local", 5, "10.96.0", &err));
	assert_non_null(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_zone__a, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__headless_a, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__hostname_a, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__srv, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__ptr, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__pod_a, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__cname, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__apex, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__nxdomain_and_nodata, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__changes, setup, teardown),
	    cmocka_unit_test(test_zone__many_services),
	    cmocka_unit_test_setup_teardown(test_zone__rcodes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__edns, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__truncation, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_zone__ready_answers, setup, teardown),
	    cmocka_unit_test(test_zone__bad_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
