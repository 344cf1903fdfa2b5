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
 * Answers ready to send: a node keeps, per query type of a few (A, AAAA,
 * SRV, PTR), the answer it gets over UDP, built the first time it is asked
 * (answer.c) and dropped when the node's records change, so that the next
 * query of that name and type is a copy and a few patched bytes. Such an
 * answer holds the node's own records only (or its NODATA with the SOA,
 * whose serial is patched at each use), never another node's.
 *
 * Threads: the loop's thread alone changes the zone (zone_set_service()
 * takes the write lock); other threads read it between zone_read_lock()
 * and zone_read_unlock(). Ready answers are added by readers (atomically,
 * the first one wins) and freed by the writer only.
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

/* An answer ready to send (zone.h's header comment). */
struct zone_answer {
	bool none;	     /* this name and type's answer cannot be kept: build it */
	uint16_t len;	     /* of msg */
	uint16_t serial_off; /* where the SOA's serial sits in msg, 0: no SOA */
	uint8_t msg[];	     /* id 0, lower-case question, no OPT record */
};

#define ZONE_ANSWER_TYPES 4 /* A, AAAA, SRV, PTR: dns_type_index() 0 to 3 */

/* A name's records and ready answers. The name is the node's own bytes,
 * and the index's key (not a copy of it): a query's lookup compares it and
 * reads the ready answer's pointer beside it in one place. */
struct zone_node {
	size_t refs; /* records here and below (the node lives while > 0) */
	size_t nrr, cap;
	struct zone_rr **rrs; /* records at this name, in the order made */
	/* by zone_answer_slot(): read with zone_answer_get() */
	struct zone_answer *answers[ZONE_ANSWER_TYPES];
	uint8_t name[]; /* lower-cased wire form */
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

/* The readers' side of the lock (zone.h's header comment). */
void zone_read_lock(const struct zone *z);
void zone_read_unlock(const struct zone *z);

/* Replaces every record of service ns/name with those made from svc and
 * its endpoints eps (either may be NULL: no service, no endpoints). */
void zone_set_service(struct zone *z, const char *ns, const char *name, const struct ynode *svc,
		      const struct ynode *eps);

/* lname: a lower-cased wire name. */
void zone_lookup(const struct zone *z, const uint8_t *lname, struct zone_result *res);
/* Prefetches what answering a query of lname and qtype will read, without
 * waiting for it: stage 0 its index slot, 1 the node that slot holds
 * (strmap_prefetchn()), 2 the node's ready answer. For a batch: a pass of
 * each stage over its names, then the answers, whose misses then overlap
 * instead of following one another. */
void zone_prefetch(const struct zone *z, const uint8_t *lname, uint16_t qtype, int stage);
/* The node of lname, or NULL (for additional records). */
const struct zone_node *zone_find(const struct zone *z, const uint8_t *lname);

/* Ready answers: the slot of a query type, -1 if its answers are never
 * kept; the node's answer in a slot, or NULL; zone_answer_put() keeps a
 * (malloc'd) and returns it, or frees it and returns the one another thread
 * kept first. Turned off (zone_keep_answers(z, false)), answers are built
 * for every query: for tests that compare both. */
int zone_answer_slot(const struct zone *z, uint16_t qtype);
const struct zone_answer *zone_answer_get(const struct zone_node *n, int slot);
const struct zone_answer *zone_answer_put(const struct zone_node *n, int slot,
					  struct zone_answer *a);
void zone_keep_answers(struct zone *z, bool on);

const uint8_t *zone_apex(const struct zone *z); /* wire form */
uint32_t zone_ttl(const struct zone *z);
/* The apex's SOA rdata into out (DNS_MAX_NAME * 2 + 20 bytes); its length. */
size_t zone_soa(const struct zone *z, uint8_t *out);
/* The SOA's serial, which moves with every change. */
uint32_t zone_serial(const struct zone *z);

size_t zone_service_count(const struct zone *z);
size_t zone_record_count(const struct zone *z);
size_t zone_name_count(const struct zone *z);

#endif
