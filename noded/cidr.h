/* cidr.h: IPv4 ranges for pods. Parsing and printing CIDRs, carving a
 * node's slice (its podCIDR) out of the cluster range, and the address
 * manager that hands out a node's pod IPs.
 *
 * Addresses are host-order uint32_t. A podCIDR's first address is the
 * network, the second the node's gateway (its bridge), the last the
 * broadcast: pods get the ones between, lowest free first, so that an
 * address given back is the next one handed out. Pure, no I/O. */
#ifndef CORRAL_NODED_CIDR_H
#define CORRAL_NODED_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CIDR_IP_SIZE	16 /* "255.255.255.255" */
#define CIDR_STR_SIZE	20 /* "255.255.255.255/32" */
#define CIDR_MAX_PREFIX 30 /* a podCIDR needs a gateway and one pod */

struct cidr {
	uint32_t addr;	 /* the network address, host order */
	unsigned prefix; /* 0..32 */
};

/* "10.244.0.0/16". Host bits are an error ("10.244.1.5/24"). */
int cidr_parse(const char *s, struct cidr *out, struct error **err);
/* Like cidr_parse, but clears host bits instead (what others wrote). */
int cidr_parse_loose(const char *s, struct cidr *out);
void cidr_format(const struct cidr *c, char buf[CIDR_STR_SIZE]);
int cidr_ip_parse(const char *s, uint32_t *ip);
void cidr_ip_format(uint32_t ip, char buf[CIDR_IP_SIZE]);

uint32_t cidr_mask(unsigned prefix);
bool cidr_contains(const struct cidr *c, uint32_t ip);
bool cidr_overlaps(const struct cidr *a, const struct cidr *b);

/* The slices of prefix length `prefix` in cluster: how many (0 if prefix is
 * shorter than the cluster's or longer than CIDR_MAX_PREFIX), and the i-th. */
uint64_t cidr_slice_count(const struct cidr *cluster, unsigned prefix);
struct cidr cidr_slice(const struct cidr *cluster, unsigned prefix, uint64_t i);
/* How many slices overlap none of taken[0..ntaken). */
uint64_t cidr_free_slices(const struct cidr *cluster, unsigned prefix, const struct cidr *taken,
			  size_t ntaken);
/* The nth (0: the lowest) slice that overlaps none of taken; -ENOSPC with
 * a message when there are not that many. */
int cidr_pick_slice(const struct cidr *cluster, unsigned prefix, const struct cidr *taken,
		    size_t ntaken, uint64_t nth, struct cidr *out, struct error **err);

/* The pod addresses of one podCIDR, each held by an owner (a string, the
 * pod's "ns/name"). One address per owner. */
struct ipam;

struct ipam *ipam_new(const struct cidr *range);
void ipam_free(struct ipam *ipam);
void ipam_freep(struct ipam **ipam);
#define cleanup_ipam __attribute__((cleanup(ipam_freep)))

/* The owner's address, or the lowest free one for it; -ENOSPC when none. */
int ipam_allocate(struct ipam *ipam, const char *owner, uint32_t *ip, struct error **err);
/* Gives ip to owner (an address read back from a pod after a restart):
 * -EINVAL if it is not a pod address of the range, -EEXIST if another owner
 * holds it. An owner that held another address gives that one back. */
int ipam_claim(struct ipam *ipam, const char *owner, uint32_t ip, struct error **err);
/* Gives the owner's address back; false if it held none. */
bool ipam_release(struct ipam *ipam, const char *owner);
bool ipam_lookup(const struct ipam *ipam, const char *owner, uint32_t *ip);
/* The owner of ip, or NULL. */
const char *ipam_owner(const struct ipam *ipam, uint32_t ip);
size_t ipam_used(const struct ipam *ipam);
/* How many pod addresses the range has in all. */
size_t ipam_size(const struct ipam *ipam);
uint32_t ipam_gateway(const struct ipam *ipam);

#endif
