/* cidr.c: IPv4 CIDRs, podCIDR slices and the pod address manager. */
#include "cidr.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t cidr_mask(unsigned prefix)
{
	return prefix == 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

int cidr_ip_parse(const char *s, uint32_t *ip)
{
	struct in_addr a;
	if (!s || inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

void cidr_ip_format(uint32_t ip, char buf[CIDR_IP_SIZE])
{
	snprintf(buf, CIDR_IP_SIZE, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff,
		 ip & 0xff);
}

static int cidr__parse(const char *s, struct cidr *out, bool strict, struct error **err)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	if (!slash || slash == s || slash - s >= CIDR_IP_SIZE)
		return error_set(err, EINVAL, "\"%s\" is not an IPv4 CIDR (want a.b.c.d/n)",
				 s ? s : "");
	char ip[CIDR_IP_SIZE];
	memcpy(ip, s, (size_t)(slash - s));
	ip[slash - s] = '\0';
	uint32_t addr;
	if (cidr_ip_parse(ip, &addr) < 0)
		return error_set(err, EINVAL, "\"%s\" is not an IPv4 CIDR: bad address \"%s\"", s,
				 ip);
	char *end = NULL;
	const char *p = slash + 1;
	if (*p < '0' || *p > '9')
		return error_set(err, EINVAL, "\"%s\" is not an IPv4 CIDR: bad prefix length", s);
	unsigned long prefix = strtoul(p, &end, 10);
	if (*end || prefix > 32 || end - p > 2)
		return error_set(err, EINVAL, "\"%s\" is not an IPv4 CIDR: bad prefix length", s);
	uint32_t net = addr & cidr_mask((unsigned)prefix);
	if (strict && net != addr) {
		char want[CIDR_STR_SIZE];
		cidr_format(&(struct cidr){net, (unsigned)prefix}, want);
		return error_set(err, EINVAL, "\"%s\" has host bits set (the network is %s)", s,
				 want);
	}
	out->addr = net;
	out->prefix = (unsigned)prefix;
	return 0;
}

int cidr_parse(const char *s, struct cidr *out, struct error **err)
{
	return cidr__parse(s, out, true, err);
}

int cidr_parse_loose(const char *s, struct cidr *out)
{
	return cidr__parse(s, out, false, NULL);
}

void cidr_format(const struct cidr *c, char buf[CIDR_STR_SIZE])
{
	char ip[CIDR_IP_SIZE];
	cidr_ip_format(c->addr, ip);
	snprintf(buf, CIDR_STR_SIZE, "%s/%u", ip, c->prefix);
}

bool cidr_contains(const struct cidr *c, uint32_t ip)
{
	return (ip & cidr_mask(c->prefix)) == c->addr;
}

bool cidr_overlaps(const struct cidr *a, const struct cidr *b)
{
	unsigned p = a->prefix < b->prefix ? a->prefix : b->prefix;
	return (a->addr & cidr_mask(p)) == (b->addr & cidr_mask(p));
}

uint64_t cidr_slice_count(const struct cidr *cluster, unsigned prefix)
{
	if (prefix < cluster->prefix || prefix > CIDR_MAX_PREFIX)
		return 0;
	return 1ull << (prefix - cluster->prefix);
}

struct cidr cidr_slice(const struct cidr *cluster, unsigned prefix, uint64_t i)
{
	struct cidr c = {cluster->addr + (uint32_t)(i << (32 - prefix)), prefix};
	return c;
}

static bool cidr__taken(const struct cidr *c, const struct cidr *taken, size_t ntaken)
{
	for (size_t i = 0; i < ntaken; i++)
		if (cidr_overlaps(c, &taken[i]))
			return true;
	return false;
}

uint64_t cidr_free_slices(const struct cidr *cluster, unsigned prefix, const struct cidr *taken,
			  size_t ntaken)
{
	uint64_t n = cidr_slice_count(cluster, prefix), free = 0;
	for (uint64_t i = 0; i < n; i++) {
		struct cidr c = cidr_slice(cluster, prefix, i);
		if (!cidr__taken(&c, taken, ntaken))
			free++;
	}
	return free;
}

int cidr_pick_slice(const struct cidr *cluster, unsigned prefix, const struct cidr *taken,
		    size_t ntaken, uint64_t nth, struct cidr *out, struct error **err)
{
	uint64_t n = cidr_slice_count(cluster, prefix);
	char range[CIDR_STR_SIZE];
	cidr_format(cluster, range);
	if (n == 0)
		return error_set(err, EINVAL, "cannot cut /%u slices out of %s", prefix, range);
	for (uint64_t i = 0; i < n; i++) {
		struct cidr c = cidr_slice(cluster, prefix, i);
		if (cidr__taken(&c, taken, ntaken))
			continue;
		if (nth-- == 0) {
			*out = c;
			return 0;
		}
	}
	return error_set(err, ENOSPC, "no free /%u left in %s (%llu, all taken)", prefix, range,
			 (unsigned long long)n);
}

/* ---- the address manager ------------------------------------------------ */

struct ipam__owner {
	char *owner; /* first: the tree compares by it */
	uint32_t index;
};

struct ipam {
	struct cidr range;
	uint32_t first;	 /* the lowest pod address */
	size_t size;	 /* pod addresses: first .. first + size - 1 */
	char **by_index; /* owner of each pod address, NULL when free */
	void *owners;	 /* tree of struct ipam__owner */
	size_t used;
};

static int ipam__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct ipam *ipam_new(const struct cidr *range)
{
	struct ipam *ipam = xcalloc(1, sizeof(*ipam));
	ipam->range = *range;
	ipam->first = range->addr + 2;
	/* network, gateway, broadcast; a range too small for them has none */
	if (range->prefix <= CIDR_MAX_PREFIX)
		ipam->size = (size_t)((1ull << (32 - range->prefix)) - 3);
	ipam->by_index = xcalloc(ipam->size, sizeof(char *));
	return ipam;
}

static void ipam__free_owner(void *p)
{
	struct ipam__owner *o = p;
	free(o->owner);
	free(o);
}

void ipam_free(struct ipam *ipam)
{
	if (!ipam)
		return;
	tdestroy(ipam->owners, ipam__free_owner);
	free(ipam->by_index); /* the strings are the owners' */
	free(ipam);
}

void ipam_freep(struct ipam **ipam)
{
	ipam_free(*ipam);
	*ipam = NULL;
}

static struct ipam__owner *ipam__find(const struct ipam *ipam, const char *owner)
{
	const char *probe = owner;
	void *const *found = tfind(&probe, &ipam->owners, ipam__cmp);
	return found ? *(struct ipam__owner *const *)found : NULL;
}

static void ipam__take(struct ipam *ipam, const char *owner, uint32_t index)
{
	struct ipam__owner *o = xcalloc(1, sizeof(*o));
	o->owner = xstrdup(owner);
	o->index = index;
	if (!tsearch(o, &ipam->owners, ipam__cmp))
		abort(); /* out of memory */
	ipam->by_index[index] = o->owner;
	ipam->used++;
}

bool ipam_lookup(const struct ipam *ipam, const char *owner, uint32_t *ip)
{
	struct ipam__owner *o = ipam__find(ipam, owner);
	if (o && ip)
		*ip = ipam->first + o->index;
	return o != NULL;
}

int ipam_allocate(struct ipam *ipam, const char *owner, uint32_t *ip, struct error **err)
{
	if (ipam_lookup(ipam, owner, ip))
		return 0;
	for (size_t i = 0; i < ipam->size; i++) {
		if (ipam->by_index[i])
			continue;
		ipam__take(ipam, owner, (uint32_t)i);
		*ip = ipam->first + (uint32_t)i;
		return 0;
	}
	char range[CIDR_STR_SIZE];
	cidr_format(&ipam->range, range);
	return error_set(err, ENOSPC, "no free pod IP left in %s (%zu in use)", range, ipam->used);
}

int ipam_claim(struct ipam *ipam, const char *owner, uint32_t ip, struct error **err)
{
	char shown[CIDR_IP_SIZE];
	cidr_ip_format(ip, shown);
	if (ip < ipam->first || ip - ipam->first >= ipam->size) {
		char range[CIDR_STR_SIZE];
		cidr_format(&ipam->range, range);
		return error_set(err, EINVAL, "%s is not a pod address of %s", shown, range);
	}
	uint32_t index = ip - ipam->first;
	const char *holder = ipam->by_index[index];
	if (holder && strcmp(holder, owner) == 0)
		return 0;
	if (holder)
		return error_set(err, EEXIST, "%s is held by %s", shown, holder);
	ipam_release(ipam, owner);
	ipam__take(ipam, owner, index);
	return 0;
}

bool ipam_release(struct ipam *ipam, const char *owner)
{
	struct ipam__owner *o = ipam__find(ipam, owner);
	if (!o)
		return false;
	ipam->by_index[o->index] = NULL;
	tdelete(o, &ipam->owners, ipam__cmp);
	ipam__free_owner(o);
	ipam->used--;
	return true;
}

const char *ipam_owner(const struct ipam *ipam, uint32_t ip)
{
	if (ip < ipam->first || ip - ipam->first >= ipam->size)
		return NULL;
	return ipam->by_index[ip - ipam->first];
}

size_t ipam_used(const struct ipam *ipam)
{
	return ipam->used;
}

size_t ipam_size(const struct ipam *ipam)
{
	return ipam->size;
}

uint32_t ipam_gateway(const struct ipam *ipam)
{
	return ipam->range.addr + 1;
}
