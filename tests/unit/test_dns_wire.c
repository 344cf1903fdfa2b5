/* test_dns_wire.c: the DNS wire format: names, queries parsed (and the
 * malformed ones refused), responses built with compression and limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire.h"

/* A query for name/type; edns_size 0: no OPT. */
static size_t make_query(uint8_t *buf, const char *name, uint16_t type, uint16_t edns_size)
{
	uint8_t wire[DNS_MAX_NAME];
	assert_true(dns_name_from_text(name, wire) > 0);
	struct dns_builder b;
	dns_build_init(&b, buf, 512, 0x1234, DNS_F_RD);
	assert_int_equal(dns_build_question(&b, wire, type, DNS_C_IN), 0);
	if (edns_size)
		assert_int_equal(dns_build_opt(&b, edns_size, 0, false), 0);
	return dns_build_finish(&b);
}

static void test_wire__name_text_round_trip(void **state)
{
	(void)state;
	uint8_t w[DNS_MAX_NAME];
	char t[4 * DNS_MAX_NAME];
	assert_int_equal(dns_name_from_text("web.dev.svc.cluster.local", w), 27);
	assert_memory_equal(w, "\3web\3dev\3svc\7cluster\5local", 27);
	dns_name_to_text(w, t);
	assert_string_equal(t, "web.dev.svc.cluster.local");
	assert_int_equal(dns_name_from_text("web.", w), 5);
	assert_int_equal(dns_name_from_text("", w), 1);
	dns_name_to_text(w, t);
	assert_string_equal(t, ".");
	assert_int_equal(dns_name_labels((const uint8_t *)"\3web\3dev"), 2);
	const uint8_t odd[] = "\3a.b";
	dns_name_to_text(odd, t);
	assert_string_equal(t, "a\\046b");
}

static void test_wire__name_text_limits(void **state)
{
	(void)state;
	uint8_t w[DNS_MAX_NAME];
	char label[70], name[400];
	memset(label, 'a', 63);
	label[63] = '\0';
	assert_int_equal(dns_name_from_text(label, w), 65);
	memset(label, 'a', 64);
	label[64] = '\0';
	assert_int_equal(dns_name_from_text(label, w), -1);
	assert_int_equal(dns_name_from_text("a..b", w), -1);
	assert_int_equal(dns_name_from_text(".a", w), -1);
	assert_int_equal(dns_name_from_text("a\\.b", w), -1);
	/* 4 labels of 63 and one of 1: 4 * 64 + 2 + 1 = 259 > 255 */
	snprintf(name, sizeof(name), "%.63s.%.63s.%.63s.%.63s.a", label, label, label, label);
	assert_int_equal(dns_name_from_text(name, w), -1);
	/* 3 labels of 63 and one of 61: 3 * 64 + 62 + 1 = 255 */
	snprintf(name, sizeof(name), "%.63s.%.63s.%.63s.%.61s", label, label, label, label);
	assert_int_equal(dns_name_from_text(name, w), 255);
}

static void test_wire__name_compare(void **state)
{
	(void)state;
	uint8_t a[DNS_MAX_NAME], b[DNS_MAX_NAME], apex[DNS_MAX_NAME];
	dns_name_from_text("WeB.Dev.svc.Cluster.LOCAL", a);
	dns_name_from_text("web.dev.svc.cluster.local", b);
	dns_name_from_text("cluster.local", apex);
	assert_true(dns_name_equal(a, b));
	assert_true(dns_name_is_under(a, apex));
	assert_false(dns_name_is_under(apex, a));
	dns_name_from_text("xcluster.local", b);
	assert_false(dns_name_is_under(b, apex));
	dns_name_lower(a);
	assert_memory_equal(a, "\3web\3dev\3svc\7cluster\5local", 27);
	assert_memory_equal(dns_name_parent(a), "\3dev", 4);
	const uint8_t root[1] = {0};
	assert_ptr_equal(dns_name_parent(root), root);
}

static void test_wire__parse_query(void **state)
{
	(void)state;
	uint8_t buf[512];
	struct dns_query q;
	size_t n = make_query(buf, "WEB.dev.svc.cluster.local", DNS_T_A, 0);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.qtype, DNS_T_A);
	assert_int_equal(q.qclass, DNS_C_IN);
	assert_false(q.edns);
	assert_int_equal(q.udp_size, 512);
	assert_memory_equal(q.qname, "\3WEB\3dev", 8);
	assert_memory_equal(q.lname, "\3web\3dev", 8);
	assert_int_equal(q.qname_len, 27);
}

static void test_wire__parse_edns(void **state)
{
	(void)state;
	uint8_t buf[512];
	struct dns_query q;
	size_t n = make_query(buf, "a.b", DNS_T_SRV, 1232);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
	assert_true(q.edns);
	assert_int_equal(q.udp_size, 1232);
	assert_int_equal(q.edns_version, 0);
	assert_false(q.edns_do);
	/* a size under 512 counts as 512; version and DO bit are read */
	n = make_query(buf, "a.b", DNS_T_A, 100);
	buf[n - 5] = 1;	   /* version (ttl byte 2) */
	buf[n - 4] = 0x80; /* DO */
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
	assert_int_equal(q.udp_size, 512);
	assert_int_equal(q.edns_version, 1);
	assert_true(q.edns_do);
}

static void test_wire__refuses_short_and_responses(void **state)
{
	(void)state;
	uint8_t buf[512];
	struct dns_query q;
	size_t n = make_query(buf, "a.b", DNS_T_A, 0);
	for (size_t l = 0; l < DNS_HEADER_LEN; l++)
		assert_int_equal(dns_parse_query(buf, l, &q), DNS_PARSE_SHORT);
	/* every cut inside the question is malformed */
	for (size_t l = DNS_HEADER_LEN; l < n; l++)
		assert_int_equal(dns_parse_query(buf, l, &q), DNS_PARSE_FORMERR);
	buf[2] |= 0x80;
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_RESPONSE);
	buf[2] = (uint8_t)((2 << 3) | 1); /* opcode STATUS, RD */
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_NOTIMP);
	assert_int_equal(q.id, 0x1234);
}

static void test_wire__refuses_bad_counts(void **state)
{
	(void)state;
	uint8_t buf[600];
	struct dns_query q;
	size_t n = make_query(buf, "a.b", DNS_T_A, 0);
	buf[5] = 0; /* no question */
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	buf[5] = 2; /* two questions, one present */
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	buf[5] = 1;
	buf[7] = 1; /* an answer record that is not there */
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	buf[7] = 0;
	buf[10] = 0xff; /* 65280 additional records */
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	buf[10] = 0;
	buf[n] = 0; /* trailing garbage */
	assert_int_equal(dns_parse_query(buf, n + 1, &q), DNS_PARSE_FORMERR);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
}

/* A packet with header counts and raw bytes after the header. */
static size_t raw(uint8_t *buf, unsigned qd, unsigned an, unsigned ar, const void *body, size_t len)
{
	memset(buf, 0, DNS_HEADER_LEN);
	buf[0] = 0xab;
	buf[1] = 0xcd;
	buf[5] = (uint8_t)qd;
	buf[7] = (uint8_t)an;
	buf[11] = (uint8_t)ar;
	memcpy(buf + DNS_HEADER_LEN, body, len);
	return DNS_HEADER_LEN + len;
}

static void test_wire__refuses_bad_labels(void **state)
{
	(void)state;
	uint8_t buf[1024], body[600];
	struct dns_query q;
	/* label types 0x40 and 0x80 */
	size_t n = raw(buf, 1, 0, 0,
		       "\x41"
		       "a\0\0\1\0\1",
		       8);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	n = raw(buf, 1, 0, 0,
		"\x81"
		"a\0\0\1\0\1",
		8);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* a label of 63 is fine */
	size_t o = 0;
	body[o++] = 63;
	memset(body + o, 'x', 63);
	o += 63;
	memcpy(body + o, "\0\0\1\0\1", 5);
	o += 5;
	n = raw(buf, 1, 0, 0, body, o);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
	/* a name over 255: 5 labels of 63 */
	o = 0;
	for (int i = 0; i < 5; i++) {
		body[o++] = 63;
		memset(body + o, 'x', 63);
		o += 63;
	}
	memcpy(body + o, "\0\0\1\0\1", 5);
	o += 5;
	n = raw(buf, 1, 0, 0, body, o);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* a label longer than what is left */
	n = raw(buf, 1, 0, 0,
		"\x20"
		"abc",
		4);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
}

static void test_wire__refuses_pointer_loops(void **state)
{
	(void)state;
	uint8_t buf[1024];
	struct dns_query q;
	/* the question's name points at itself */
	size_t n = raw(buf, 1, 0, 0, "\xc0\x0c\0\1\0\1", 6);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* ... forward, at the record after it */
	n = raw(buf, 1, 0, 0, "\xc0\x12\0\1\0\1\1a\0", 9);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* two pointers pointing at each other, in an additional record:
	 * question "a." at 12; record name at 19: 1 'b' then pointer to 22,
	 * which points back to 19 */
	static const uint8_t loop[] = {1, 'a', 0, 0, 1, 0, 1, 1, 'b', 0xc0, 21, 0xc0, 19};
	n = raw(buf, 1, 0, 1, loop, sizeof(loop));
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* a pointer backwards to the question is fine */
	static const uint8_t back[] = {1, 'a', 0, 0, 1, 0, 1, 0xc0, 12, 0,
				       1, 0,   1, 0, 0, 0, 5, 0,    0};
	n = raw(buf, 1, 0, 1, back, sizeof(back));
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
}

static void test_wire__pointer_hop_limit(void **state)
{
	(void)state;
	/* a chain: the root at 0, then pointers each to the one before */
	uint8_t pkt[200];
	uint8_t out[DNS_MAX_NAME];
	pkt[0] = 0;
	size_t pos = 1;
	for (int i = 0; i < 40; i++) {
		size_t prev = i == 0 ? 0 : pos - 2;
		pkt[pos] = (uint8_t)(0xc0 | (prev >> 8));
		pkt[pos + 1] = (uint8_t)prev;
		pos += 2;
	}
	size_t off = 1 + 2 * (DNS_MAX_HOPS - 1); /* DNS_MAX_HOPS pointers to follow */
	assert_int_equal(dns_name_read(pkt, pos, &off, out), 1);
	assert_int_equal(off, 1 + 2 * DNS_MAX_HOPS);
	off = 1 + 2 * DNS_MAX_HOPS; /* one more */
	assert_int_equal(dns_name_read(pkt, pos, &off, out), -1);
	/* a pointer forward, to a name that is fine: refused all the same */
	static const uint8_t fwd[] = {0xc0, 2, 1, 'a', 0};
	off = 0;
	assert_int_equal(dns_name_read(fwd, sizeof(fwd), &off, out), -1);
	off = 2;
	assert_int_equal(dns_name_read(fwd, sizeof(fwd), &off, out), 3);
	/* nor to the labels the pointer ends: "b" + pointer back to "b" */
	static const uint8_t self[] = {1, 'a', 0, 1, 'b', 0xc0, 3};
	off = 3;
	assert_int_equal(dns_name_read(self, sizeof(self), &off, out), -1);
	/* a pointer cut in half */
	off = 0;
	uint8_t half[1] = {0xc0};
	assert_int_equal(dns_name_read(half, 1, &off, out), -1);
}

static void test_wire__refuses_bad_opt(void **state)
{
	(void)state;
	uint8_t buf[1024];
	struct dns_query q;
	static const uint8_t two[] = {1, 'a', 0, 0, 1, 0,  1, 0, 0, 41, 2, 0, 0, 0, 0,
				      0, 0,   0, 0, 0, 41, 2, 0, 0, 0,	0, 0, 0, 0};
	size_t n = raw(buf, 1, 0, 2, two, sizeof(two));
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	n = raw(buf, 1, 0, 1, two, sizeof(two) - 11);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_OK);
	/* an OPT in the answer section */
	n = raw(buf, 1, 1, 0, two, sizeof(two) - 11);
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* an OPT not owned by the root */
	static const uint8_t named[] = {1,  'a', 0, 0, 1, 0, 1, 0xc0, 12, 0,
					41, 2,	 0, 0, 0, 0, 0, 0,    0};
	n = raw(buf, 1, 0, 1, named, sizeof(named));
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* an option longer than the rdata */
	static const uint8_t opt[] = {1, 'a', 0, 0, 1, 0, 1, 0,	 0, 41, 2, 0,
				      0, 0,   0, 0, 0, 6, 0, 10, 0, 8,	1, 2};
	n = raw(buf, 1, 0, 1, opt, sizeof(opt));
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
	/* rdlength past the end */
	static const uint8_t rd[] = {1, 'a', 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 9, 1};
	n = raw(buf, 1, 0, 1, rd, sizeof(rd));
	assert_int_equal(dns_parse_query(buf, n, &q), DNS_PARSE_FORMERR);
}

static void test_wire__build_compresses(void **state)
{
	(void)state;
	uint8_t buf[512], name[DNS_MAX_NAME], upper[DNS_MAX_NAME], apex[DNS_MAX_NAME];
	dns_name_from_text("web.dev.svc.cluster.local", name);
	dns_name_from_text("WEB.DEV.svc.cluster.local", upper);
	dns_name_from_text("cluster.local", apex);
	struct dns_builder b;
	dns_build_init(&b, buf, sizeof(buf), 7, DNS_F_QR | DNS_F_AA);
	assert_int_equal(dns_build_question(&b, name, DNS_T_A, DNS_C_IN), 0);
	assert_int_equal(b.len, 12 + 27 + 4);
	dns_build_section(&b, 1);
	const uint8_t ip[4] = {10, 96, 0, 1};
	assert_int_equal(dns_build_rr(&b, upper, DNS_T_A, DNS_C_IN, 5, ip, 4), 0);
	/* the whole name is a pointer to the question */
	assert_int_equal(buf[43], 0xc0);
	assert_int_equal(buf[44], 12);
	assert_int_equal(b.len, 43 + 2 + 10 + 4);
	dns_build_section(&b, 2);
	size_t at = b.len;
	assert_int_equal(dns_build_rr(&b, apex, DNS_T_NS, DNS_C_IN, 5, apex, 15), 0);
	/* the apex: a pointer into the question, past web.dev.svc */
	assert_int_equal(buf[at], 0xc0);
	assert_int_equal(buf[at + 1], 12 + 12);
	size_t n = dns_build_finish(&b);
	assert_int_equal(buf[5], 1);
	assert_int_equal(buf[7], 1);
	assert_int_equal(buf[9], 1);
	assert_int_equal(buf[11], 0);
	/* and a parser follows them back */
	size_t off = at;
	uint8_t out[DNS_MAX_NAME];
	assert_int_equal(dns_name_read(buf, n, &off, out), 15);
	assert_true(dns_name_equal(out, apex));
	off = 43;
	assert_int_equal(dns_name_read(buf, n, &off, out), 27);
	assert_true(dns_name_equal(out, name));
}

static void test_wire__build_limit(void **state)
{
	(void)state;
	uint8_t buf[64], name[DNS_MAX_NAME], other[DNS_MAX_NAME];
	dns_name_from_text("a.example", name);
	dns_name_from_text("b.other.test", other);
	struct dns_builder b;
	dns_build_init(&b, buf, 48, 1, DNS_F_QR);
	assert_int_equal(dns_build_question(&b, name, DNS_T_A, DNS_C_IN), 0);
	size_t len = b.len;
	dns_build_section(&b, 1);
	uint8_t rdata[40] = {0};
	/* 12 + 15 = 27; a pointer (2) + 10 + 20 = 32 more: over 48 */
	assert_int_equal(dns_build_rr(&b, name, DNS_T_TXT, DNS_C_IN, 5, rdata, 20), -1);
	assert_int_equal(b.len, len);
	assert_int_equal(b.counts[1], 0);
	assert_int_equal(dns_build_rr(&b, name, DNS_T_A, DNS_C_IN, 5, rdata, 4), 0);
	assert_int_equal(b.len, len + 16);
	/* a failed name leaves no compression entry behind */
	size_t ncomp = b.ncomp;
	assert_int_equal(dns_build_rr(&b, other, DNS_T_A, DNS_C_IN, 5, rdata, 4), -1);
	assert_int_equal(b.ncomp, ncomp);
	/* no records before a section is chosen */
	dns_build_init(&b, buf, 64, 1, DNS_F_QR);
	assert_int_equal(dns_build_rr(&b, name, DNS_T_A, DNS_C_IN, 5, rdata, 4), -1);
}

static void test_wire__build_opt_and_rcode(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct dns_builder b;
	dns_build_init(&b, buf, sizeof(buf), 0xbeef, DNS_F_QR);
	dns_build_set_rcode(&b, DNS_R_NXDOMAIN);
	dns_build_set_flag(&b, DNS_F_TC, true);
	assert_int_equal(dns_build_opt(&b, 4096, DNS_R_BADVERS, true), 0);
	size_t n = dns_build_finish(&b);
	assert_int_equal(n, 12 + 11);
	assert_int_equal(buf[0], 0xbe);
	assert_int_equal(buf[3] & 0xf, DNS_R_NXDOMAIN);
	assert_true(buf[2] & 0x02); /* TC */
	assert_int_equal(buf[11], 1);
	assert_int_equal(buf[12], 0);		      /* root */
	assert_int_equal(buf[13] << 8 | buf[14], 41); /* OPT */
	assert_int_equal(buf[15] << 8 | buf[16], 4096);
	assert_int_equal(buf[17], 1);	 /* BADVERS >> 4 */
	assert_int_equal(buf[19], 0x80); /* DO */
}

static void test_wire__rdata(void **state)
{
	(void)state;
	uint8_t out[DNS_MAX_NAME * 2 + 20], t[DNS_MAX_NAME], r[DNS_MAX_NAME];
	dns_name_from_text("web.dev", t);
	size_t n = dns_rdata_srv(out, 0, 100, 8080, t);
	assert_int_equal(n, 6 + 9);
	static const uint8_t srv[] = {0,   0,	0, 100, 0x1f, 0x90, 3, 'w',
				      'e', 'b', 3, 'd', 'e',  'v',  0};
	assert_memory_equal(out, srv, sizeof(srv));
	dns_name_from_text("h.dev", r);
	n = dns_rdata_soa(out, t, r, 1, 2, 3, 4, 5);
	assert_int_equal(n, 9 + 7 + 20);
	assert_int_equal(out[16 + 3], 1);
	assert_int_equal(out[16 + 19], 5);
	assert_string_equal(dns_type_name(DNS_T_SRV), "SRV");
	assert_string_equal(dns_type_name(999), "other");
	assert_string_equal(dns_rcode_name(DNS_R_REFUSED), "REFUSED");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wire__name_text_round_trip),
	    cmocka_unit_test(test_wire__name_text_limits),
	    cmocka_unit_test(test_wire__name_compare),
	    cmocka_unit_test(test_wire__parse_query),
	    cmocka_unit_test(test_wire__parse_edns),
	    cmocka_unit_test(test_wire__refuses_short_and_responses),
	    cmocka_unit_test(test_wire__refuses_bad_counts),
	    cmocka_unit_test(test_wire__refuses_bad_labels),
	    cmocka_unit_test(test_wire__refuses_pointer_loops),
	    cmocka_unit_test(test_wire__pointer_hop_limit),
	    cmocka_unit_test(test_wire__refuses_bad_opt),
	    cmocka_unit_test(test_wire__build_compresses),
	    cmocka_unit_test(test_wire__build_limit),
	    cmocka_unit_test(test_wire__build_opt_and_rcode),
	    cmocka_unit_test(test_wire__rdata),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
