/* zone.h: the records corral-dns serves, indexed by name.
 *
 * The zone is built from Services and Endpoints: each Service (key
 * "ns/name") owns the records made from it and its Endpoints, and
 * zone_set_service() replaces them all at once, so a change costs the
 * records of one service, never a rebuild. Names are lower-cased wire
 * names in one hash table; every name between a record and the apex
 * exists too (an empty non-terminal answers NODATA, not NXDOMAIN).
 *
 * What a Service gives, under <svc>.<ns>.svc.<domain> (its "base"):
 *   ClusterIP:     A base; PTR of the IP; SRV _<port>._<proto>.base for
 *                  named ports, targeting base.
 *   headless:      A base for every ready address; SRV per ready address
 *                  and named endpoint port, targeting its host name.
 *   ExternalName:  CNAME base.
 *   every ready endpoint address: A <host>.base and its PTR, where host
 *                  is the address's hostname, else its IP with dashes.
 * Pods: <a-b-c-d>.<ns>.pod.<domain> answers A a.b.c.d (as kube-dns's
 * "pods insecure"), synthesized, not stored.
 *
 * This file must never keep a pointer into an informer's objects. */
#ifndef CORRAL_DNS_ZONE_H
#define CORRAL_DNS_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "wire.h"
#include "ynode.h"

struct zone;
struct zone_owner;

struct zone_rr {
	uint16_t type;
	uint16_t rdlen;
	const struct zone_owner *owner; /* the service that made it */
	uint8_t rdata[];		/* wire form, names uncompressed */
};

struct zone_node {
	uint8_t *name; /* lower-cased wire form */
	size_t refs;   /* records here and below (the node lives while > 0) */
	size_t nrr, cap;
	struct zone_rr **rrs; /* records at this name, in the order made */
};

enum zone_status {
	ZONE_NOT_AUTH, /* not ours: forward or refuse */
	ZONE_FOUND,    /* the name exists (its records may not hold the type) */
	ZONE_NXDOMAIN, /* ours, and no such name */
};

struct zone_result {
	enum zone_status status;
	const struct zone_node *node; /* FOUND, unless synthesized */
	bool pod;		      /* FOUND: a pod name, address in pod_ip */
	uint8_t pod_ip[4];
};

/* domain: "cluster.local"; ttl: of every answer; ns_ip: the address the
 * apex's NS (ns.dns.<domain>) has, the kube-dns ClusterIP. */
struct zone *zone_new(const char *domain, uint32_t ttl, const char *ns_ip, struct error **err);
void zone_free(struct zone *z);

/* Replaces every record of service ns/name with those made from svc and
 * its endpoints eps (either may be NULL: no service, no endpoints). */
void zone_set_service(struct zone *z, const char *ns, const char *name, const struct ynode *svc,
		      const struct ynode *eps);

/* lname: a lower-cased wire name. */
void zone_lookup(const struct zone *z, const uint8_t *lname, struct zone_result *res);
/* The node of lname, or NULL (for additional records). */
const struct zone_node *zone_find(const struct zone *z, const uint8_t *lname);

const uint8_t *zone_apex(const struct zone *z); /* wire form */
uint32_t zone_ttl(const struct zone *z);
/* The apex's SOA rdata into out (DNS_MAX_NAME * 2 + 20 bytes); its length. */
size_t zone_soa(const struct zone *z, uint8_t *out);

size_t zone_service_count(const struct zone *z);
size_t zone_record_count(const struct zone *z);
size_t zone_name_count(const struct zone *z);

#endif
