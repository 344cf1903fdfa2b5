/* answer.c: answering a query from the zone (answer.h). */
#include "answer.h"
#include "util.h"

#include <string.h>

/* The OPT record we add: root name, type, class, ttl, rdlength. */
#define ANSWER__OPT_LEN 11

static size_t answer__limit(const struct dns_query *q, bool tcp)
{
	if (tcp)
		return DNS_MSG_MAX;
	if (!q->edns)
		return DNS_UDP_MIN;
	return q->udp_size > DNS_UDP_MAX ? DNS_UDP_MAX : q->udp_size;
}

/* Header-only answers to what could not be parsed: id, opcode and RD
 * echoed. */
static size_t answer__bare(uint16_t id, uint16_t qflags, unsigned rcode, uint8_t *out)
{
	struct dns_builder b;
	dns_build_init(&b, out, DNS_HEADER_LEN, id,
		       (uint16_t)(DNS_F_QR | (qflags & (0x7800 | DNS_F_RD))));
	dns_build_set_rcode(&b, rcode);
	return dns_build_finish(&b);
}

static void answer__finish_opt(struct dns_builder *b, const struct dns_query *q, unsigned rcode)
{
	if (!q->edns)
		return;
	b->limit += ANSWER__OPT_LEN;
	dns_build_opt(b, DNS_UDP_MAX, rcode, q->edns_do);
}

/* The SOA of the apex, in the authority section. */
static int answer__soa(struct dns_builder *b, const struct zone *z)
{
	uint8_t rdata[2 * DNS_MAX_NAME + 20];
	size_t n = zone_soa(z, rdata);
	dns_build_section(b, 2);
	return dns_build_rr(b, zone_apex(z), DNS_T_SOA, DNS_C_IN, zone_ttl(z), rdata, (uint16_t)n);
}

/* A records of SRV targets that the zone holds, as additional records
 * (they need not fit). */
static void answer__additional(struct dns_builder *b, const struct zone *z,
			       const struct zone_node *node, uint16_t qtype)
{
	dns_build_section(b, 3);
	for (size_t i = 0; i < node->nrr; i++) {
		const struct zone_rr *rr = node->rrs[i];
		if (rr->type != DNS_T_SRV || (qtype != DNS_T_SRV && qtype != DNS_T_ANY))
			continue;
		const uint8_t *target = rr->rdata + 6;
		const struct zone_node *t = zone_find(z, target);
		for (size_t j = 0; t && j < t->nrr; j++)
			if (t->rrs[j]->type == DNS_T_A &&
			    dns_build_rr(b, t->name, DNS_T_A, DNS_C_IN, zone_ttl(z),
					 t->rrs[j]->rdata, t->rrs[j]->rdlen) < 0)
				return;
	}
}

/* Answer records for the question; -1 if they did not all fit. Sets
 * *found to the number of records that match. */
static int answer__records(struct dns_builder *b, const struct zone *z, const struct dns_query *q,
			   const struct zone_result *res, size_t *found)
{
	*found = 0;
	dns_build_section(b, 1);
	if (res->pod) {
		if (q->qtype != DNS_T_A && q->qtype != DNS_T_ANY)
			return 0;
		*found = 1;
		return dns_build_rr(b, q->qname, DNS_T_A, DNS_C_IN, zone_ttl(z), res->pod_ip, 4);
	}
	const struct zone_node *node = res->node;
	for (size_t i = 0; node && i < node->nrr; i++) {
		const struct zone_rr *rr = node->rrs[i];
		if (rr->type != q->qtype && q->qtype != DNS_T_ANY && rr->type != DNS_T_CNAME)
			continue;
		++*found;
		if (dns_build_rr(b, q->qname, rr->type, DNS_C_IN, zone_ttl(z), rr->rdata,
				 rr->rdlen) < 0)
			return -1;
	}
	/* The apex's SOA is made when asked (its serial moves with every
	 * change), not stored. */
	if (node && (q->qtype == DNS_T_SOA || q->qtype == DNS_T_ANY) &&
	    dns_name_equal(node->name, zone_apex(z))) {
		uint8_t rdata[2 * DNS_MAX_NAME + 20];
		size_t n = zone_soa(z, rdata);
		++*found;
		if (dns_build_rr(b, q->qname, DNS_T_SOA, DNS_C_IN, zone_ttl(z), rdata,
				 (uint16_t)n) < 0)
			return -1;
	}
	return 0;
}

/* The response to q into out, at most limit bytes before the OPT record;
 * its length. res is the lookup's result (status ZONE_NOT_AUTH when
 * refused), rcode and aa what it makes of it. */
static size_t answer__build(const struct zone *z, bool can_forward, const struct dns_query *q,
			    const struct zone_result *res, unsigned rcode, bool aa, size_t limit,
			    uint8_t *out, bool *truncated)
{
	struct dns_builder b;
	uint16_t flags = (uint16_t)(DNS_F_QR | (q->flags & (DNS_F_RD | DNS_F_CD)));
	if (aa)
		flags |= DNS_F_AA;
	if (can_forward)
		flags |= DNS_F_RA;
	dns_build_init(&b, out, limit, q->id, flags);
	dns_build_question(&b, q->qname, q->qtype, q->qclass);
	size_t after_question = b.len;

	bool fits = true;
	if (res->status == ZONE_FOUND) {
		size_t found = 0;
		if (answer__records(&b, z, q, res, &found) < 0)
			fits = false;
		else if (found == 0)
			fits = answer__soa(&b, z) == 0;
		else if (res->node)
			answer__additional(&b, z, res->node, q->qtype);
	} else if (res->status == ZONE_NXDOMAIN) {
		fits = answer__soa(&b, z) == 0;
	}
	*truncated = !fits;
	if (!fits) {
		/* Truncated: the question alone, TC set; the client asks
		 * again over TCP. */
		b.len = after_question;
		b.counts[1] = b.counts[2] = b.counts[3] = 0;
		dns_build_set_flag(&b, DNS_F_TC, true);
	}
	dns_build_set_rcode(&b, rcode & 0xf);
	answer__finish_opt(&b, q, rcode);
	return dns_build_finish(&b);
}

static uint16_t answer__get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void answer__put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The ready answer of node res->node to q's name and type: built as the
 * answer to the lower-case question without EDNS, at the largest UDP size,
 * and kept if it holds the node's records alone (no additional records) or
 * its NODATA (the SOA last, its serial 20 bytes from the end). */
static const struct zone_answer *answer__keep(const struct zone *z, const struct dns_query *q,
					      const struct zone_result *res, int slot)
{
	struct dns_query lq = *q;
	memcpy(lq.qname, q->lname, q->qname_len);
	lq.id = 0;
	lq.flags = 0;
	lq.edns = false;
	uint8_t buf[DNS_UDP_MAX];
	bool truncated;
	size_t len = answer__build(z, false, &lq, res, DNS_R_NOERROR, true,
				   DNS_UDP_MAX - ANSWER__OPT_LEN, buf, &truncated);
	unsigned an = answer__get16(buf + 6), ns = answer__get16(buf + 8),
		 ar = answer__get16(buf + 10);
	bool keep = !truncated && ar == 0 && ((an > 0 && ns == 0) || (an == 0 && ns == 1));
	struct zone_answer *a = xcalloc(1, sizeof(*a) + (keep ? len : 0));
	a->none = !keep;
	if (keep) {
		a->len = (uint16_t)len;
		a->serial_off = an == 0 ? (uint16_t)(len - 20) : 0;
		memcpy(a->msg, buf, len);
	}
	return zone_answer_put(res->node, slot, a);
}

/* q's answer from the ready one a: its id, flags, question (in its case,
 * the same length as the lower-case one, so that every pointer to it still
 * holds), the SOA's serial of now, and an OPT record if it had one. false
 * if it does not fit q's limit (the answer is then built, truncated). */
static bool answer__from_ready(const struct zone *z, const struct zone_answer *a, bool can_forward,
			       bool tcp, const struct dns_query *q, uint8_t *out, size_t *outlen)
{
	size_t opt = q->edns ? ANSWER__OPT_LEN : 0;
	if (a->len + opt > answer__limit(q, tcp))
		return false;
	memcpy(out, a->msg, a->len);
	answer__put16(out, q->id);
	answer__put16(out + 2, (uint16_t)(DNS_F_QR | DNS_F_AA | (can_forward ? DNS_F_RA : 0) |
					  (q->flags & (DNS_F_RD | DNS_F_CD))));
	memcpy(out + DNS_HEADER_LEN, q->qname, q->qname_len);
	answer__put16(out + DNS_HEADER_LEN + q->qname_len + 2, q->qclass);
	if (a->serial_off) {
		uint32_t serial = zone_serial(z);
		answer__put16(out + a->serial_off, (uint16_t)(serial >> 16));
		answer__put16(out + a->serial_off + 2, (uint16_t)serial);
	}
	if (opt) {
		/* root, OPT, our UDP size, extended rcode 0, version 0, DO */
		uint8_t *o = out + a->len;
		memset(o, 0, ANSWER__OPT_LEN);
		answer__put16(o + 1, DNS_T_OPT);
		answer__put16(o + 3, DNS_UDP_MAX);
		o[7] = q->edns_do ? 0x80 : 0;
		answer__put16(out + 10, 1);
	}
	*outlen = a->len + opt;
	return true;
}

enum answer_action answer_query(const struct zone *z, bool can_forward, bool tcp,
				const uint8_t *pkt, size_t len, uint8_t *out, size_t *outlen,
				struct answer_info *info)
{
	struct dns_query q;
	enum dns_parse_result parsed = dns_parse_query(pkt, len, &q);
	return answer_parsed(z, can_forward, tcp, parsed, &q, out, outlen, info);
}

enum answer_action answer_parsed(const struct zone *z, bool can_forward, bool tcp,
				 enum dns_parse_result parsed, const struct dns_query *q,
				 uint8_t *out, size_t *outlen, struct answer_info *info)
{
	memset(info, 0, sizeof(*info));
	switch (parsed) {
	case DNS_PARSE_SHORT:
	case DNS_PARSE_RESPONSE:
		return ANSWER_DROP;
	case DNS_PARSE_NOTIMP:
		info->rcode = DNS_R_NOTIMP;
		*outlen = answer__bare(q->id, q->flags, DNS_R_NOTIMP, out);
		return ANSWER_REPLY;
	case DNS_PARSE_FORMERR:
		info->rcode = DNS_R_FORMERR;
		*outlen = answer__bare(q->id, q->flags, DNS_R_FORMERR, out);
		return ANSWER_REPLY;
	case DNS_PARSE_OK:
		break;
	}
	info->qtype = q->qtype;

	struct zone_result res;
	unsigned rcode = DNS_R_NOERROR;
	bool aa = true;
	if (q->edns && q->edns_version != 0) {
		rcode = DNS_R_BADVERS;
		aa = false;
		res.status = ZONE_NOT_AUTH;
	} else {
		zone_lookup(z, q->lname, &res);
		if (res.status == ZONE_NOT_AUTH) {
			if (can_forward)
				return ANSWER_FORWARD;
			rcode = DNS_R_REFUSED;
			aa = false;
		} else if ((q->qclass != DNS_C_IN && q->qclass != DNS_C_ANY) ||
			   q->qtype == DNS_T_AXFR || q->qtype == 251 /* IXFR */) {
			rcode = DNS_R_REFUSED;
			res.status = ZONE_NOT_AUTH;
		}
	}

	if (res.status == ZONE_NXDOMAIN)
		rcode = DNS_R_NXDOMAIN;
	int slot = res.status == ZONE_FOUND && res.node ? zone_answer_slot(z, q->qtype) : -1;
	if (slot >= 0) {
		const struct zone_answer *a = zone_answer_get(res.node, slot);
		if (!a)
			a = answer__keep(z, q, &res, slot);
		if (!a->none && answer__from_ready(z, a, can_forward, tcp, q, out, outlen))
			return ANSWER_REPLY;
	}
	*outlen = answer__build(z, can_forward, q, &res, rcode, aa,
				answer__limit(q, tcp) - (q->edns ? ANSWER__OPT_LEN : 0), out,
				&info->truncated);
	info->rcode = rcode;
	return ANSWER_REPLY;
}

size_t answer_error(const uint8_t *pkt, size_t len, bool tcp, unsigned rcode, uint8_t *out)
{
	struct dns_query q;
	if (dns_parse_query(pkt, len, &q) != DNS_PARSE_OK)
		return 0;
	struct dns_builder b;
	dns_build_init(&b, out, answer__limit(&q, tcp) - (q.edns ? ANSWER__OPT_LEN : 0), q.id,
		       (uint16_t)(DNS_F_QR | DNS_F_RA | (q.flags & (DNS_F_RD | DNS_F_CD))));
	dns_build_question(&b, q.qname, q.qtype, q.qclass);
	dns_build_set_rcode(&b, rcode);
	answer__finish_opt(&b, &q, rcode);
	return dns_build_finish(&b);
}
