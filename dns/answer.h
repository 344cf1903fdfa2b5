/* answer.h: one DNS query in, one response out, from the zone.
 *
 * No sockets, no clock; the server, the tests and the fuzzer call it
 * alike. It allocates only the ready answers it keeps in the zone's nodes
 * (zone.h): a name and type asked again is answered by copying one and
 * patching its id, flags, question and SOA serial, the same bytes the
 * building would give. Answers for the zone are authoritative; a name
 * outside it is handed back to be forwarded (when upstreams are set) or
 * refused. A response that does not fit (512 bytes without EDNS0, the
 * advertised size up to DNS_UDP_MAX with it, 65535 over TCP) keeps its
 * question, loses its records and has TC set. */
#ifndef CORRAL_DNS_ANSWER_H
#define CORRAL_DNS_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"
#include "zone.h"

enum answer_action {
	ANSWER_REPLY,	/* send out[0..*outlen) */
	ANSWER_FORWARD, /* send the query upstream */
	ANSWER_DROP,	/* say nothing (too short, or a response) */
};

/* What the query was and what it got, for the metrics. */
struct answer_info {
	uint16_t qtype; /* 0 when the question could not be read */
	unsigned rcode; /* extended: BADVERS is 16 */
	bool truncated;
};

/* out must hold DNS_MSG_MAX bytes for TCP, DNS_UDP_MAX for UDP (the most
 * an answer can be). */
enum answer_action answer_query(const struct zone *z, bool can_forward, bool tcp,
				const uint8_t *pkt, size_t len, uint8_t *out, size_t *outlen,
				struct answer_info *info);

/* answer_query() in two steps, for a caller that parses a batch of
 * queries before it answers them: parsed is what dns_parse_query() said
 * of the packet, q what it filled in. */
enum answer_action answer_parsed(const struct zone *z, bool can_forward, bool tcp,
				 enum dns_parse_result parsed, const struct dns_query *q,
				 uint8_t *out, size_t *outlen, struct answer_info *info);

/* A response with rcode and no records to the query pkt (SERVFAIL when an
 * upstream does not answer); 0 if pkt is no query. */
size_t answer_error(const uint8_t *pkt, size_t len, bool tcp, unsigned rcode, uint8_t *out);

#endif
