/* wire.c: parsing and building DNS messages; see wire.h for the rules. */
#include "wire.h"

#include <stdio.h>
#include <string.h>

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* ---- names ------------------------------------------------------------ */

int dns_name_read(const uint8_t *pkt, size_t len, size_t *off, uint8_t *out)
{
	size_t pos = *off, outlen = 0, end = 0;
	/* A pointer must go before the start of the labels being read, so the
	 * places jumped to strictly decrease: no loop, whatever the hops. */
	size_t floor = pos;
	bool jumped = false;
	int hops = 0;
	for (;;) {
		if (pos >= len)
			return -1;
		uint8_t c = pkt[pos];
		if ((c & 0xC0) == 0xC0) {
			if (pos + 1 >= len)
				return -1;
			size_t target = (size_t)(c & 0x3F) << 8 | pkt[pos + 1];
			if (target >= floor || ++hops > DNS_MAX_HOPS)
				return -1;
			if (!jumped)
				end = pos + 2;
			jumped = true;
			pos = floor = target;
			continue;
		}
		if (c & 0xC0) /* 0x40 and 0x80: extended and reserved label types */
			return -1;
		if (outlen + 1 + c > DNS_MAX_NAME)
			return -1;
		if (c == 0) {
			out[outlen++] = 0;
			if (!jumped)
				end = pos + 1;
			break;
		}
		if (pos + 1 + c > len)
			return -1;
		out[outlen] = c;
		memcpy(out + outlen + 1, pkt + pos + 1, c);
		outlen += 1 + (size_t)c;
		pos += 1 + (size_t)c;
	}
	*off = end;
	return (int)outlen;
}

size_t dns_name_len(const uint8_t *name)
{
	const uint8_t *p = name;
	while (*p)
		p += *p + 1;
	return (size_t)(p - name) + 1;
}

int dns_name_labels(const uint8_t *name)
{
	int n = 0;
	for (const uint8_t *p = name; *p; p += *p + 1)
		n++;
	return n;
}

void dns_name_lower(uint8_t *name)
{
	for (uint8_t *p = name; *p; p += *p + 1)
		for (unsigned i = 1; i <= *p; i++)
			p[i] = lower(p[i]);
}

/* Length bytes are under 64, below 'A': comparing whole wire names byte
 * for byte with ASCII case folding compares labels and their bounds. */
bool dns_name_equal(const uint8_t *a, const uint8_t *b)
{
	size_t la = dns_name_len(a), lb = dns_name_len(b);
	if (la != lb)
		return false;
	for (size_t i = 0; i < la; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

const uint8_t *dns_name_parent(const uint8_t *name)
{
	return *name ? name + *name + 1 : name;
}

bool dns_name_is_under(const uint8_t *name, const uint8_t *suffix)
{
	int n = dns_name_labels(name), s = dns_name_labels(suffix);
	if (n < s)
		return false;
	const uint8_t *p = name;
	for (int i = 0; i < n - s; i++)
		p = dns_name_parent(p);
	return dns_name_equal(p, suffix);
}

int dns_name_from_text(const char *text, uint8_t *out)
{
	size_t n = strlen(text), o = 0;
	if (n && text[n - 1] == '.')
		n--;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && text[j] != '.') {
			if (text[j] == '\\')
				return -1;
			j++;
		}
		size_t l = j - i;
		if (l == 0 || l > DNS_MAX_LABEL || o + 1 + l + 1 > DNS_MAX_NAME)
			return -1;
		out[o] = (uint8_t)l;
		memcpy(out + o + 1, text + i, l);
		o += 1 + l;
		i = j + 1;
		if (j < n && i == n) /* "a..": a trailing empty label */
			return -1;
	}
	out[o++] = 0;
	return (int)o;
}

void dns_name_to_text(const uint8_t *name, char *out)
{
	char *o = out;
	if (!*name) {
		strcpy(out, ".");
		return;
	}
	for (const uint8_t *p = name; *p; p += *p + 1) {
		if (p != name)
			*o++ = '.';
		for (unsigned i = 1; i <= *p; i++) {
			uint8_t c = p[i];
			if (c <= ' ' || c >= 127 || c == '.' || c == '\\')
				o += sprintf(o, "\\%03u", c);
			else
				*o++ = (char)c;
		}
	}
	*o = '\0';
}

/* ---- queries ---------------------------------------------------------- */

/* The options of an OPT record must fill its rdata exactly. */
static bool opt_options_ok(const uint8_t *p, size_t len)
{
	size_t off = 0;
	while (off < len) {
		if (len - off < 4)
			return false;
		size_t ol = get16(p + off + 2);
		if (len - off - 4 < ol)
			return false;
		off += 4 + ol;
	}
	return true;
}

enum dns_parse_result dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q)
{
	memset(q, 0, offsetof(struct dns_query, qname));
	q->qname_len = 0;
	q->udp_size = DNS_UDP_MIN;
	q->edns = false;
	q->edns_version = 0;
	q->edns_do = false;
	if (len < DNS_HEADER_LEN)
		return DNS_PARSE_SHORT;
	q->id = get16(pkt);
	q->flags = get16(pkt + 2);
	if (q->flags & DNS_F_QR)
		return DNS_PARSE_RESPONSE;
	if (DNS_OPCODE(q->flags) != DNS_OPCODE_QUERY)
		return DNS_PARSE_NOTIMP;
	unsigned qd = get16(pkt + 4), an = get16(pkt + 6), ns = get16(pkt + 8),
		 ar = get16(pkt + 10);
	if (qd != 1)
		return DNS_PARSE_FORMERR;
	/* The least room these counts need: a question of 5 bytes, records
	 * of 11 (root name, type, class, ttl, rdlength). */
	if (5 + 11 * ((size_t)an + ns + ar) > len - DNS_HEADER_LEN)
		return DNS_PARSE_FORMERR;
	size_t off = DNS_HEADER_LEN;
	int n = dns_name_read(pkt, len, &off, q->qname);
	if (n < 0 || len - off < 4)
		return DNS_PARSE_FORMERR;
	q->qname_len = (size_t)n;
	memcpy(q->lname, q->qname, (size_t)n);
	dns_name_lower(q->lname);
	q->qtype = get16(pkt + off);
	q->qclass = get16(pkt + off + 2);
	off += 4;
	uint8_t tmp[DNS_MAX_NAME];
	unsigned total = an + ns + ar;
	for (unsigned i = 0; i < total; i++) {
		int tl = dns_name_read(pkt, len, &off, tmp);
		if (tl < 0 || len - off < 10)
			return DNS_PARSE_FORMERR;
		uint16_t type = get16(pkt + off), klass = get16(pkt + off + 2);
		uint32_t ttl = get32(pkt + off + 4);
		size_t rdlen = get16(pkt + off + 8);
		off += 10;
		if (len - off < rdlen)
			return DNS_PARSE_FORMERR;
		if (type == DNS_T_OPT) {
			/* One OPT, in the additional section, owned by the root. */
			if (i < an + ns || q->edns || tl != 1 || !opt_options_ok(pkt + off, rdlen))
				return DNS_PARSE_FORMERR;
			q->edns = true;
			q->udp_size = klass < DNS_UDP_MIN ? DNS_UDP_MIN : klass;
			q->edns_version = (uint8_t)(ttl >> 16);
			q->edns_do = (ttl & 0x8000) != 0;
		}
		off += rdlen;
	}
	if (off != len)
		return DNS_PARSE_FORMERR;
	return DNS_PARSE_OK;
}

/* ---- building --------------------------------------------------------- */

void dns_build_init(struct dns_builder *b, uint8_t *buf, size_t limit, uint16_t id, uint16_t flags)
{
	b->buf = buf;
	b->limit = limit < DNS_HEADER_LEN ? DNS_HEADER_LEN : limit;
	b->len = DNS_HEADER_LEN;
	memset(b->counts, 0, sizeof(b->counts));
	b->section = 0;
	b->ncomp = 0;
	memset(buf, 0, DNS_HEADER_LEN);
	put16(buf, id);
	put16(buf + 2, flags);
}

void dns_build_set_rcode(struct dns_builder *b, unsigned rcode)
{
	b->buf[3] = (uint8_t)((b->buf[3] & 0xf0) | (rcode & 0xf));
}

void dns_build_set_flag(struct dns_builder *b, uint16_t flag, bool on)
{
	uint16_t f = get16(b->buf + 2);
	put16(b->buf + 2, on ? (uint16_t)(f | flag) : (uint16_t)(f & ~flag));
}

void dns_build_section(struct dns_builder *b, int section)
{
	if (section > b->section && section <= 3)
		b->section = section;
}

/* Writes name, pointing at the longest suffix already in the message. */
static int build_name(struct dns_builder *b, const uint8_t *name)
{
	const uint8_t *s;
	long ptr = -1;
	for (s = name; *s && ptr < 0; s += *s + 1) {
		for (size_t i = 0; i < b->ncomp && ptr < 0; i++) {
			const uint8_t *e = b->comp[i].name;
			for (const uint8_t *t = e; *t && t - e < b->comp[i].lit; t += *t + 1)
				if (dns_name_equal(s, t)) {
					ptr = b->comp[i].off + (t - e);
					break;
				}
		}
		if (ptr >= 0)
			break;
	}
	size_t lit = (size_t)(s - name);
	size_t need = lit + (ptr >= 0 ? 2 : 1);
	if (need > b->limit - b->len)
		return -1;
	uint8_t *o = b->buf + b->len;
	memcpy(o, name, lit);
	if (ptr >= 0)
		put16(o + lit, (uint16_t)(0xC000 | ptr));
	else
		o[lit] = 0;
	/* Only the literal part can be pointed at, and only below 0x4000. A
	 * name whose literal part is a suffix of it stays pointable through
	 * the entry of the name written before. */
	if (lit && b->ncomp < DNS_COMP_ENTRIES && b->len < 0x3FFF) {
		b->comp[b->ncomp].off = (uint16_t)b->len;
		b->comp[b->ncomp].name = name;
		b->comp[b->ncomp].lit = (uint8_t)lit;
		b->ncomp++;
	}
	b->len += need;
	return 0;
}

int dns_build_question(struct dns_builder *b, const uint8_t *name, uint16_t type, uint16_t klass)
{
	size_t len = b->len, ncomp = b->ncomp;
	if (build_name(b, name) < 0 || b->limit - b->len < 4) {
		b->len = len;
		b->ncomp = ncomp;
		return -1;
	}
	put16(b->buf + b->len, type);
	put16(b->buf + b->len + 2, klass);
	b->len += 4;
	b->counts[0]++;
	return 0;
}

int dns_build_rr(struct dns_builder *b, const uint8_t *owner, uint16_t type, uint16_t klass,
		 uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
	size_t len = b->len, ncomp = b->ncomp;
	if (b->section == 0 || build_name(b, owner) < 0 || b->limit - b->len < 10u + rdlen) {
		b->len = len;
		b->ncomp = ncomp;
		return -1;
	}
	uint8_t *o = b->buf + b->len;
	put16(o, type);
	put16(o + 2, klass);
	put32(o + 4, ttl);
	put16(o + 8, rdlen);
	if (rdlen)
		memcpy(o + 10, rdata, rdlen);
	b->len += 10u + rdlen;
	b->counts[b->section]++;
	return 0;
}

int dns_build_opt(struct dns_builder *b, uint16_t udp_size, unsigned rcode, bool dnssec_ok)
{
	static const uint8_t root[1] = {0};
	int saved = b->section;
	b->section = 3;
	uint32_t ttl = (uint32_t)((rcode >> 4) & 0xff) << 24 | (dnssec_ok ? 0x8000u : 0);
	int r = dns_build_rr(b, root, DNS_T_OPT, udp_size, ttl, NULL, 0);
	if (r < 0)
		b->section = saved;
	return r;
}

size_t dns_build_finish(struct dns_builder *b)
{
	for (int i = 0; i < 4; i++)
		put16(b->buf + 4 + 2 * i, b->counts[i]);
	return b->len;
}

size_t dns_rdata_srv(uint8_t *out, uint16_t prio, uint16_t weight, uint16_t port,
		     const uint8_t *target)
{
	put16(out, prio);
	put16(out + 2, weight);
	put16(out + 4, port);
	size_t n = dns_name_len(target);
	memcpy(out + 6, target, n);
	return 6 + n;
}

size_t dns_rdata_soa(uint8_t *out, const uint8_t *mname, const uint8_t *rname, uint32_t serial,
		     uint32_t refresh, uint32_t retry, uint32_t expire, uint32_t minimum)
{
	size_t m = dns_name_len(mname), r = dns_name_len(rname);
	memcpy(out, mname, m);
	memcpy(out + m, rname, r);
	uint8_t *p = out + m + r;
	put32(p, serial);
	put32(p + 4, refresh);
	put32(p + 8, retry);
	put32(p + 12, expire);
	put32(p + 16, minimum);
	return m + r + 20;
}

const char *dns_type_name(uint16_t type)
{
	switch (type) {
	case DNS_T_A:
		return "A";
	case DNS_T_NS:
		return "NS";
	case DNS_T_CNAME:
		return "CNAME";
	case DNS_T_SOA:
		return "SOA";
	case DNS_T_PTR:
		return "PTR";
	case DNS_T_MX:
		return "MX";
	case DNS_T_TXT:
		return "TXT";
	case DNS_T_AAAA:
		return "AAAA";
	case DNS_T_SRV:
		return "SRV";
	case DNS_T_AXFR:
		return "AXFR";
	case DNS_T_ANY:
		return "ANY";
	default:
		return "other";
	}
}

int dns_type_index(uint16_t type)
{
	switch (type) {
	case DNS_T_A:
		return 0;
	case DNS_T_AAAA:
		return 1;
	case DNS_T_SRV:
		return 2;
	case DNS_T_PTR:
		return 3;
	case DNS_T_SOA:
		return 4;
	case DNS_T_NS:
		return 5;
	case DNS_T_ANY:
		return 6;
	default:
		return DNS_TYPE_INDEX_OTHER;
	}
}

const char *dns_rcode_name(unsigned rcode)
{
	switch (rcode) {
	case DNS_R_NOERROR:
		return "NOERROR";
	case DNS_R_FORMERR:
		return "FORMERR";
	case DNS_R_SERVFAIL:
		return "SERVFAIL";
	case DNS_R_NXDOMAIN:
		return "NXDOMAIN";
	case DNS_R_NOTIMP:
		return "NOTIMP";
	case DNS_R_REFUSED:
		return "REFUSED";
	case DNS_R_BADVERS:
		return "BADVERS";
	default:
		return "other";
	}
}
