/* wire.h: the DNS wire format (RFC 1035, 6891), parsed and built.
 *
 * Parsing is for untrusted packets: every length is checked against the
 * packet, compression pointers may only point backwards (before the label
 * that holds them) and are followed at most DNS_MAX_HOPS times, labels are
 * at most 63 bytes and names at most 255 bytes on the wire, and the counts
 * of the header must be matched exactly by the records that follow.
 *
 * Names are kept in wire form (length-prefixed labels ending with the root
 * label 0), uncompressed: unambiguous whatever bytes a label holds, and a
 * lower-cased copy is a hash key as it is.
 *
 * This file must never read outside the packet it was given nor write
 * beyond the limit of the buffer it builds into. */
#ifndef CORRAL_DNS_WIRE_H
#define CORRAL_DNS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN 12
#define DNS_MAX_NAME   255 /* wire length, root label included */
#define DNS_MAX_LABEL  63
#define DNS_MAX_HOPS   32   /* compression pointers followed in one name */
#define DNS_UDP_MIN    512  /* without EDNS0 */
#define DNS_UDP_MAX    4096 /* the most we answer over UDP, whatever is advertised */
#define DNS_MSG_MAX    65535

enum dns_type {
	DNS_T_A = 1,
	DNS_T_NS = 2,
	DNS_T_CNAME = 5,
	DNS_T_SOA = 6,
	DNS_T_PTR = 12,
	DNS_T_MX = 15,
	DNS_T_TXT = 16,
	DNS_T_AAAA = 28,
	DNS_T_SRV = 33,
	DNS_T_OPT = 41,
	DNS_T_AXFR = 252,
	DNS_T_ANY = 255,
};

enum { DNS_C_IN = 1, DNS_C_ANY = 255 };

enum dns_rcode {
	DNS_R_NOERROR = 0,
	DNS_R_FORMERR = 1,
	DNS_R_SERVFAIL = 2,
	DNS_R_NXDOMAIN = 3,
	DNS_R_NOTIMP = 4,
	DNS_R_REFUSED = 5,
	DNS_R_BADVERS = 16, /* extended: needs an OPT record */
};

/* Header flag bits (the second 16-bit word). */
enum {
	DNS_F_QR = 0x8000,
	DNS_F_AA = 0x0400,
	DNS_F_TC = 0x0200,
	DNS_F_RD = 0x0100,
	DNS_F_RA = 0x0080,
	DNS_F_AD = 0x0020,
	DNS_F_CD = 0x0010,
};
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
#define DNS_OPCODE_QUERY  0

/* Why a packet is refused (dns_parse_query()'s result). */
enum dns_parse_result {
	DNS_PARSE_OK = 0,
	DNS_PARSE_SHORT = -1,	 /* under 12 bytes: nothing to answer to */
	DNS_PARSE_RESPONSE = -2, /* QR set: never answer a response */
	DNS_PARSE_NOTIMP = -3,	 /* opcode other than QUERY */
	DNS_PARSE_FORMERR = -4,	 /* malformed */
};

/* A parsed query. */
struct dns_query {
	uint16_t id;
	uint16_t flags;
	uint8_t qname[DNS_MAX_NAME]; /* wire form, the question's own case */
	uint8_t lname[DNS_MAX_NAME]; /* the same, lower-cased */
	size_t qname_len;
	uint16_t qtype, qclass;
	bool edns;	   /* an OPT record came with it */
	uint16_t udp_size; /* advertised by the OPT record (512 without) */
	uint8_t edns_version;
	bool edns_do; /* DNSSEC OK */
};

/* Reads the name at *off in pkt into out (uncompressed wire form, at most
 * DNS_MAX_NAME bytes), moving *off past it in the packet. Returns its
 * length, or -1 if the name is malformed. */
int dns_name_read(const uint8_t *pkt, size_t len, size_t *off, uint8_t *out);
/* Parses a query. On DNS_PARSE_FORMERR and DNS_PARSE_NOTIMP the id and
 * flags are filled in when the header could be read. */
enum dns_parse_result dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q);

/* Names as text: "web.dev.svc.cluster.local" (a trailing dot is allowed).
 * Returns the wire length, or -1 for an empty label, a label over 63 or a
 * name over 255 bytes. Labels may not hold '.' or '\\' (no escapes). */
int dns_name_from_text(const char *text, uint8_t *out);
/* Writes the name as dotted text into out (size at least 4 * 255);
 * bytes outside printable ASCII, '.' and '\\' are escaped as \DDD. */
void dns_name_to_text(const uint8_t *name, char *out);
/* Lower-cases a wire name in place (ASCII only, as RFC 4343 asks). */
void dns_name_lower(uint8_t *name);
size_t dns_name_len(const uint8_t *name);
/* Number of labels, the root not counted. */
int dns_name_labels(const uint8_t *name);
/* True when name ends with the labels of suffix (case-insensitive). */
bool dns_name_is_under(const uint8_t *name, const uint8_t *suffix);
bool dns_name_equal(const uint8_t *a, const uint8_t *b);
/* The name with its first label dropped (the root stays the root). */
const uint8_t *dns_name_parent(const uint8_t *name);

/* A response being built. Owner names are compressed against the names
 * written before them; a write that would pass `limit` fails and leaves
 * the message as it was before it. */
#define DNS_COMP_ENTRIES 32
struct dns_builder {
	uint8_t *buf;
	size_t len;
	size_t limit;
	uint16_t counts[4]; /* question, answer, authority, additional */
	int section;	    /* the section records go to now (0..3) */
	size_t ncomp;
	struct {
		uint16_t off;	     /* where the name starts in buf */
		uint8_t lit;	     /* bytes of it written as labels, not a pointer */
		const uint8_t *name; /* its wire form (lives as long as the build) */
	} comp[DNS_COMP_ENTRIES];
};

/* Starts a message in buf, at most limit bytes long (buf holds limit). */
void dns_build_init(struct dns_builder *b, uint8_t *buf, size_t limit, uint16_t id, uint16_t flags);
void dns_build_set_rcode(struct dns_builder *b, unsigned rcode);
void dns_build_set_flag(struct dns_builder *b, uint16_t flag, bool on);
int dns_build_question(struct dns_builder *b, const uint8_t *name, uint16_t type, uint16_t klass);
/* Sections: 1 answer, 2 authority, 3 additional; they only move forward. */
void dns_build_section(struct dns_builder *b, int section);
/* One resource record with its rdata as given (names in rdata are written
 * uncompressed by the caller). Returns 0 or -1 if it does not fit. */
int dns_build_rr(struct dns_builder *b, const uint8_t *owner, uint16_t type, uint16_t klass,
		 uint32_t ttl, const uint8_t *rdata, uint16_t rdlen);
/* The OPT pseudo-record: our UDP size, the extended rcode's upper bits. */
int dns_build_opt(struct dns_builder *b, uint16_t udp_size, unsigned rcode, bool dnssec_ok);
/* The message's length (the header's counts are written as it goes). */
size_t dns_build_finish(struct dns_builder *b);

/* rdata helpers: they write into out (at least DNS_MAX_NAME + 20 bytes)
 * and return the rdata's length. */
size_t dns_rdata_srv(uint8_t *out, uint16_t prio, uint16_t weight, uint16_t port,
		     const uint8_t *target);
size_t dns_rdata_soa(uint8_t *out, const uint8_t *mname, const uint8_t *rname, uint32_t serial,
		     uint32_t refresh, uint32_t retry, uint32_t expire, uint32_t minimum);

const char *dns_type_name(uint16_t type); /* "A", "SRV", ... "other" */
/* The usual query types numbered from 0: A, AAAA, SRV, PTR, SOA, NS, ANY,
 * and DNS_TYPE_INDEX_OTHER for any other (the metrics' and the zone's
 * ready answers' index). */
#define DNS_TYPE_INDEX_OTHER 7
int dns_type_index(uint16_t type);
const char *dns_rcode_name(unsigned rcode); /* "NOERROR", ... */

#endif
