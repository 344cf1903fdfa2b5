/* servicerange.c: parsing the service ranges, and addresses in them. */
#include "servicerange.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int servicerange_parse(const char *s, struct servicerange *r, struct error **err)
{
	char buf[32];
	const char *slash = s ? strchr(s, '/') : NULL;
	struct in_addr in;
	char *end = NULL;
	long prefix = slash ? strtol(slash + 1, &end, 10) : -1;
	if (!slash || (size_t)(slash - s) >= sizeof(buf) || !end || *end || end == slash + 1)
		return error_set(err, EINVAL,
				 "service-cidr: \"%s\" is not an IPv4 CIDR (10.96.0.0/16)",
				 s ? s : "");
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (inet_pton(AF_INET, buf, &in) != 1)
		return error_set(err, EINVAL,
				 "service-cidr: \"%s\" is not an IPv4 CIDR (10.96.0.0/16)", s);
	if (prefix < 12 || prefix > 28)
		return error_set(err, EINVAL,
				 "service-cidr: \"%s\": the prefix must be from /12 to /28", s);
	uint32_t size = 1u << (32 - prefix);
	uint32_t base = ntohl(in.s_addr);
	if (base & (size - 1))
		return error_set(err, EINVAL,
				 "service-cidr: \"%s\" is not a network address (host bits set)",
				 s);
	r->base = base;
	r->size = size;
	snprintf(r->text, sizeof(r->text), "%s", s);
	return 0;
}

int servicerange_parse_ports(const char *s, int *lo, int *hi, struct error **err)
{
	char *end = NULL;
	long a = s ? strtol(s, &end, 10) : 0;
	long b = 0;
	if (end && *end == '-')
		b = strtol(end + 1, &end, 10);
	else
		end = NULL;
	if (!end || *end || a < 1 || b > 65535 || a > b)
		return error_set(
		    err, EINVAL,
		    "service-node-port-range: \"%s\" is not a port range (30000-32767)",
		    s ? s : "");
	*lo = (int)a;
	*hi = (int)b;
	return 0;
}

int servicerange_offset(const struct servicerange *r, const char *ip, uint32_t *off)
{
	struct in_addr in;
	if (!ip || inet_pton(AF_INET, ip, &in) != 1)
		return -EINVAL;
	uint32_t v = ntohl(in.s_addr);
	if (v < r->base || v - r->base >= r->size || v == r->base || v - r->base == r->size - 1)
		return -ERANGE;
	*off = v - r->base;
	return 0;
}

void servicerange_format(const struct servicerange *r, uint32_t off, char *buf)
{
	struct in_addr in = {.s_addr = htonl(r->base + off)};
	inet_ntop(AF_INET, &in, buf, 16);
}
