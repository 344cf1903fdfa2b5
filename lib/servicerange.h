/* servicerange.h: the range of Service addresses ([cluster] service-cidr)
 * and of node ports ([cluster] service-node-port-range), as corral-fs
 * (which refuses a Service asking for what another holds) and corral-ctrl
 * (which allocates) both read them.
 *
 * Addresses are IPv4 only; an address is known by its offset in the range.
 * The network and broadcast addresses are outside the usable range. */
#ifndef CORRAL_SERVICERANGE_H
#define CORRAL_SERVICERANGE_H

#include <stdint.h>

#include "error.h"

#define SERVICERANGE_DEFAULT_CIDR  "10.96.0.0/16"
#define SERVICERANGE_DEFAULT_PORTS "30000-32767"
#define SERVICERANGE_PORT_MIN	   30000 /* what corral-fs accepts as a nodePort */
#define SERVICERANGE_PORT_MAX	   32767

struct servicerange {
	uint32_t base; /* the network's address, host order */
	uint32_t size; /* addresses in it: 2^(32 - prefix) */
	char text[24]; /* as written: "10.96.0.0/16" */
};

/* "10.96.0.0/16": prefixes from /12 to /28, no host bits set. */
int servicerange_parse(const char *s, struct servicerange *r, struct error **err);
/* "30000-32767" (inclusive, within 1-65535). */
int servicerange_parse_ports(const char *s, int *lo, int *hi, struct error **err);
/* ip's offset in r: 0; -EINVAL not an IPv4 address; -ERANGE outside r or
 * its network or broadcast address. */
int servicerange_offset(const struct servicerange *r, const char *ip, uint32_t *off);
/* The address at off, into buf (at least 16 bytes). */
void servicerange_format(const struct servicerange *r, uint32_t off, char *buf);

#endif
