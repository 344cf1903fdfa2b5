/* answer.c: answering a query from the zone (answer.h). */
#include "answer.h"

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

enum answer_action answer_query(const struct zone *z, bool can_forward, bool tcp,
				const uint8_t *pkt, size_t len, uint8_t *out, size_t *outlen,
				struct answer_info *info)
{
	struct dns_query q;
	memset(info, 0, sizeof(*info));
	switch (dns_parse_query(pkt, len, &q)) {
	case DNS_PARSE_SHORT:
	case DNS_PARSE_RESPONSE:
		return ANSWER_DROP;
	case DNS_PARSE_NOTIMP:
		info->rcode = DNS_R_NOTIMP;
		*outlen = answer__bare(q.id, q.flags, DNS_R_NOTIMP, out);
		return ANSWER_REPLY;
	case DNS_PARSE_FORMERR:
		info->rcode = DNS_R_FORMERR;
		*outlen = answer__bare(q.id, q.flags, DNS_R_FORMERR, out);
		return ANSWER_REPLY;
	case DNS_PARSE_OK:
		break;
	}
	info->qtype = q.qtype;

	struct zone_result res;
	unsigned rcode = DNS_R_NOERROR;
	bool aa = true;
	if (q.edns && q.edns_version != 0) {
		rcode = DNS_R_BADVERS;
		aa = false;
		res.status = ZONE_NOT_AUTH;
	} else {
		zone_lookup(z, q.lname, &res);
		if (res.status == ZONE_NOT_AUTH) {
			if (can_forward)
				return ANSWER_FORWARD;
			rcode = DNS_R_REFUSED;
			aa = false;
		} else if ((q.qclass != DNS_C_IN && q.qclass != DNS_C_ANY) ||
			   q.qtype == DNS_T_AXFR || q.qtype == 251 /* IXFR */) {
			rcode = DNS_R_REFUSED;
			res.status = ZONE_NOT_AUTH;
		}
	}

	struct dns_builder b;
	uint16_t flags = (uint16_t)(DNS_F_QR | (q.flags & (DNS_F_RD | DNS_F_CD)));
	if (aa)
		flags |= DNS_F_AA;
	if (can_forward)
		flags |= DNS_F_RA;
	dns_build_init(&b, out, answer__limit(&q, tcp) - (q.edns ? ANSWER__OPT_LEN : 0), q.id,
		       flags);
	dns_build_question(&b, q.qname, q.qtype, q.qclass);
	size_t after_question = b.len;

	bool fits = true;
	if (res.status == ZONE_FOUND) {
		size_t found = 0;
		if (answer__records(&b, z, &q, &res, &found) < 0)
			fits = false;
		else if (found == 0)
			fits = answer__soa(&b, z) == 0;
		else if (res.node)
			answer__additional(&b, z, res.node, q.qtype);
	} else if (res.status == ZONE_NXDOMAIN) {
		rcode = DNS_R_NXDOMAIN;
		fits = answer__soa(&b, z) == 0;
	}
	if (!fits) {
		/* Truncated: the question alone, TC set; the client asks
		 * again over TCP. */
		b.len = after_question;
		b.counts[1] = b.counts[2] = b.counts[3] = 0;
		dns_build_set_flag(&b, DNS_F_TC, true);
		info->truncated = true;
	}
	dns_build_set_rcode(&b, rcode & 0xf);
	answer__finish_opt(&b, &q, rcode);
	info->rcode = rcode;
	*outlen = dns_build_finish(&b);
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
