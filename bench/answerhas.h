/* answerhas.h: whether a DNS answer holds an A record of an address; for
 * the benchmarks' clients (dnslat.c, svclat.c), over dns/wire.h. */
#ifndef CORRAL_BENCH_ANSWERHAS_H
#define CORRAL_BENCH_ANSWERHAS_H

#include <stdint.h>
#include <string.h>

#include "wire.h"

/* True when the answer to our query holds the address want. */
static inline int answer_has(const uint8_t *p, size_t len, uint32_t want)
{
	uint8_t name[DNS_MAX_NAME];
	size_t off = DNS_HEADER_LEN;
	if (len < DNS_HEADER_LEN || dns_name_read(p, len, &off, name) < 0 || len - off < 4)
		return 0;
	off += 4;
	unsigned an = (unsigned)(p[6] << 8 | p[7]);
	for (unsigned i = 0; i < an; i++) {
		if (dns_name_read(p, len, &off, name) < 0 || len - off < 10)
			return 0;
		unsigned type = (unsigned)(p[off] << 8 | p[off + 1]);
		size_t rdlen = (size_t)(p[off + 8] << 8 | p[off + 9]);
		off += 10;
		if (len - off < rdlen)
			return 0;
		if (type == DNS_T_A && rdlen == 4 && !memcmp(p + off, &want, 4))
			return 1;
		off += rdlen;
	}
	return 0;
}

#endif
