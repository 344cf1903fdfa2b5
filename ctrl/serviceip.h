/* serviceip.h: ClusterIPs and nodePorts for Services (kube-apiserver's
 * service IP and node port allocators, run as a controller).
 *
 * Every Service but an ExternalName one gets an address from the service
 * range ([cluster] service-cidr, 10.96.0.0/16) in spec.clusterIP and
 * spec.clusterIPs, unless it is headless (clusterIP: None); NodePort and
 * LoadBalancer services get a spec.ports[].nodePort from
 * service-node-port-range (30000-32767) for each port that has none. An
 * address or port the service asks for is honoured when it is free and in
 * range; otherwise the service is left without it, with a condition
 * `Allocated` False in its status (reason ClusterIPAlreadyAllocated,
 * ClusterIPOutOfRange, NodePortAlreadyAllocated, NodePortOutOfRange or
 * RangeFull) and a Warning event; it is retried whenever something is
 * released. A service that has what it asked for carries `Allocated` True.
 *
 * Automatic allocation never hands out the range's network and broadcast
 * addresses, its first address (.1, the `kubernetes` service's) nor its
 * tenth (.10, the DNS service's): those two go only to a service that asks
 * for them by name. Nothing is kept on disk: at start the allocator is
 * rebuilt from the services themselves, those marked Allocated first.
 *
 * The allocator (svcip_alloc_*) is pure, for the tests; the controller
 * around it is svcip_new(). */
#ifndef CORRAL_CTRL_SERVICEIP_H
#define CORRAL_CTRL_SERVICEIP_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "servicerange.h"
#include "ynode.h"

#define SVCIP_MAX_RANGE (1u << 20) /* a /12, Kubernetes' own limit */
#define SVCIP_CONDITION "Allocated"

struct ctrl;
struct svcip;
struct svcip_alloc;

struct svcip_alloc *svcip_alloc_new(const struct servicerange *range, int port_lo, int port_hi);
void svcip_alloc_free(struct svcip_alloc *a);

/* Gives owner ("ns/name") the address ip. 0 (also when owner has it
 * already; an owner holds one address, so any other it held is freed);
 * 1 when it was taken from another owner to whom svcip_allocate_ip() gave
 * it and who has not claimed it since (its write is in flight, and
 * corral-fs will refuse it: owner's service is stored asking for it), named
 * in *holder; -EINVAL not an IPv4 address; -ERANGE outside the range or
 * its network or broadcast address; -EEXIST held by another owner, named
 * in *holder (may be NULL; valid until the allocator changes). */
int svcip_claim_ip(struct svcip_alloc *a, const char *ip, const char *owner, const char **holder);
/* The address owner holds, or the next free one it now holds, into buf
 * (at least 16 bytes). 0, or -ENOSPC when the range is full. */
int svcip_allocate_ip(struct svcip_alloc *a, const char *owner, char *buf);
/* The address owner holds (into buf), 0; -ENOENT when none. */
int svcip_ip_of(const struct svcip_alloc *a, const char *owner, char *buf);
void svcip_release_ip(struct svcip_alloc *a, const char *owner);

/* nodePorts: an owner may hold several. Same results as for addresses. */
int svcip_claim_port(struct svcip_alloc *a, int port, const char *owner, const char **holder);
int svcip_allocate_port(struct svcip_alloc *a, const char *owner, int *port);
/* Frees the ports owner holds but the n in keep. */
void svcip_release_ports_except(struct svcip_alloc *a, const char *owner, const int *keep,
				size_t n);
/* Frees all owner holds. */
void svcip_release(struct svcip_alloc *a, const char *owner);
size_t svcip_ips_in_use(const struct svcip_alloc *a);
size_t svcip_ports_in_use(const struct svcip_alloc *a);

/* What a service should get. */
struct svcip_port {
	long long port;
	char protocol[16];
	int node_port; /* 0: none */
};

struct svcip_plan {
	char ip[16]; /* the clusterIP to write ("" nothing to write) */
	struct svcip_port *ports;
	size_t nports;
	const char *status; /* of the Allocated condition: "True", "False" */
	const char *reason;
	char *message;
	char *evicted; /* a service that lost an unwritten allocation to this one */
};

/* Decides for the service svc (key "ns/name") against the allocator,
 * claiming and freeing as it goes; the caller writes what the plan says. */
void svcip_plan_service(struct svcip_alloc *a, const char *key, const struct ynode *svc,
			struct svcip_plan *plan);
void svcip_plan_clear(struct svcip_plan *plan);
/* Claims what a service marked Allocated True holds, without deciding
 * anything (the start-up pass). */
void svcip_claim_existing(struct svcip_alloc *a, const char *key, const struct ynode *svc);
/* Applies a plan to a service object (writer_mutate_fn's contract):
 * returns 1 if it changed it. */
int svcip_apply_plan(struct ynode *svc, const struct svcip_plan *plan, int64_t now);

/* The controller; NULL (logged) when the configured ranges do not parse. */
struct svcip *svcip_new(struct ctrl *c);
void svcip_free(struct svcip *s);

#endif
