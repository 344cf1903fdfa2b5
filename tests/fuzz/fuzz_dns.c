/* fuzz_dns.c: libFuzzer harness for corral-dns's packet handling: the query
 * parser, the answer built from a small fixed zone (UDP and TCP limits),
 * and dns_name_read() at every offset.
 *
 * Besides memory errors it checks the contract: a reply is never longer
 * than the limit of its transport, always a response (QR) with the query's
 * id, and parses back; a query that parses is answered (or forwarded),
 * never dropped; a name read is at most 255 bytes and ends at the root;
 * an answer from the zone's ready answers is the one built, byte for
 * byte, and so is that of a query parsed first and its memory prefetched
 * (a UDP thread's way: answer_parsed(), zone_prefetch()). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "util.h"
#include "wire.h"
#include "ynode.h"
#include "zone.h"

static struct zone *fuzz_dns__zone;

static void fuzz_dns__add(const char *name, const char *svc, const char *eps)
{
	struct ynode *s = NULL, *e = NULL;
	if (yaml_parse_one(svc, strlen(svc), &s, NULL) < 0 ||
	    (eps && yaml_parse_one(eps, strlen(eps), &e, NULL) < 0))
		abort();
	zone_set_service(fuzz_dns__zone, "dev", name, s, e);
	ynode_free(s);
	ynode_free(e);
}

static void fuzz_dns__init(void)
{
	if (fuzz_dns__zone)
		return;
	fuzz_dns__zone = zone_new("cluster.local", 5, "10.96.0.10", NULL);
	fuzz_dns__add("web", "{spec: {clusterIP: 10.96.1.5, ports: [{name: http, port: 80}]}}",
		      NULL);
	char eps[4096] = "{subsets: [{ports: [{name: pg, port: 5432}], addresses: [";
	for (int i = 0; i < 40; i++)
		snprintf(eps + strlen(eps), sizeof(eps) - strlen(eps),
			 "%s{ip: 10.244.0.%d, hostname: h%d}", i ? ", " : "", i + 1, i);
	strcat(eps, "]}]}");
	fuzz_dns__add("db", "{spec: {clusterIP: None}}", eps);
}

static void fuzz_dns__check_reply(const uint8_t *q, const uint8_t *out, size_t len, size_t limit)
{
	if (len > limit || len < DNS_HEADER_LEN)
		abort();
	if (!(out[2] & 0x80) || out[0] != q[0] || out[1] != q[1])
		abort();
	/* every record of the reply must be readable */
	size_t off = DNS_HEADER_LEN;
	uint8_t name[DNS_MAX_NAME];
	unsigned qd = (unsigned)(out[4] << 8 | out[5]);
	unsigned rr = (unsigned)(out[6] << 8 | out[7]) + (unsigned)(out[8] << 8 | out[9]) +
		      (unsigned)(out[10] << 8 | out[11]);
	for (unsigned i = 0; i < qd; i++) {
		if (dns_name_read(out, len, &off, name) < 0 || len - off < 4)
			abort();
		off += 4;
	}
	for (unsigned i = 0; i < rr; i++) {
		if (dns_name_read(out, len, &off, name) < 0 || len - off < 10)
			abort();
		size_t rdlen = (size_t)(out[off + 8] << 8 | out[off + 9]);
		off += 10;
		if (len - off < rdlen)
			abort();
		off += rdlen;
	}
	if (off != len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answer built (ready answers off) and the one from a ready answer
 * (kept by the first call, used by the second) are the same. */
static void fuzz_dns__same_answers(const uint8_t *data, size_t size, bool tcp)
{
	static uint8_t want[DNS_MSG_MAX], got[DNS_MSG_MAX];
	size_t wlen = 0, glen = 0;
	struct answer_info wi, gi;
	zone_keep_answers(fuzz_dns__zone, false);
	enum answer_action wa =
	    answer_query(fuzz_dns__zone, tcp, tcp, data, size, want, &wlen, &wi);
	zone_keep_answers(fuzz_dns__zone, true);
	for (int i = 0; i < 2; i++) {
		enum answer_action ga =
		    answer_query(fuzz_dns__zone, tcp, tcp, data, size, got, &glen, &gi);
		if (ga != wa)
			abort();
		if (wa == ANSWER_REPLY && (glen != wlen || memcmp(got, want, wlen) ||
					   gi.rcode != wi.rcode || gi.truncated != wi.truncated))
			abort();
	}
	/* A UDP thread's way: parsed first, its memory prefetched, then
	 * answered; the same bytes. */
	struct dns_query q;
	enum dns_parse_result pr = dns_parse_query(data, size, &q);
	for (int stage = 0; pr == DNS_PARSE_OK && stage < 3; stage++)
		zone_prefetch(fuzz_dns__zone, q.lname, q.qtype, stage);
	enum answer_action pa = answer_parsed(fuzz_dns__zone, tcp, tcp, pr, &q, got, &glen, &gi);
	if (pa != wa || (wa == ANSWER_REPLY && (glen != wlen || memcmp(got, want, wlen))))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[DNS_MSG_MAX];
	fuzz_dns__init();
	if (size > DNS_MSG_MAX)
		return 0;
	struct dns_query q;
	enum dns_parse_result pr = dns_parse_query(data, size, &q);
	for (int tcp = 0; tcp < 2; tcp++) {
		size_t outlen = 0;
		struct answer_info info;
		enum answer_action a =
		    answer_query(fuzz_dns__zone, tcp, tcp, data, size, out, &outlen, &info);
		if (a == ANSWER_DROP && pr != DNS_PARSE_SHORT && pr != DNS_PARSE_RESPONSE)
			abort();
		if (a == ANSWER_FORWARD && (pr != DNS_PARSE_OK || !tcp))
			abort();
		if (a == ANSWER_REPLY) {
			size_t limit = tcp			  ? DNS_MSG_MAX
				       : !q.edns		  ? DNS_UDP_MIN
				       : q.udp_size > DNS_UDP_MAX ? DNS_UDP_MAX
								  : q.udp_size;
			fuzz_dns__check_reply(data, out, outlen, pr == DNS_PARSE_OK ? limit : 12);
		}
		fuzz_dns__same_answers(data, size, tcp);
		if (pr == DNS_PARSE_OK) {
			size_t n = answer_error(data, size, tcp, DNS_R_SERVFAIL, out);
			if (!n)
				abort();
			fuzz_dns__check_reply(data, out, n, DNS_MSG_MAX);
		}
	}
	uint8_t name[DNS_MAX_NAME];
	for (size_t off = 0; off < size && off < 64; off++) {
		size_t o = off;
		int n = dns_name_read(data, size, &o, name);
		if (n >= 0 && (n > DNS_MAX_NAME || name[n - 1] != 0 ||
			       (size_t)n != dns_name_len(name) || o > size))
			abort();
	}
	return 0;
}
