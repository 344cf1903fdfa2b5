/* svcindex.h: the addresses and node ports that stored Services hold, so
 * that corral-fs refuses at the write a Service asking for an address or a
 * node port another Service holds, or an address outside the service range
 * ([cluster] service-cidr), as kube-apiserver refuses it at create. Handing
 * out addresses is corral-ctrl's; this only keeps two Services off one.
 *
 * One slot per address of the range and one per port, each naming its
 * holder ("ns/name"), so that a check costs the same with 10 or 10,000
 * Services. Built at start from the store. A write reserves what its
 * object holds and the stored version did not before the commit (two
 * concurrent writes cannot both take one address), then either settles
 * (frees what the stored version held and the new one does not) or gives
 * the reservation back. Thread-safe: writes run on many workers.
 *
 * corral-fs runs it as its first admission hook (admission.h): the
 * svcindex_hook_* functions below are that hook's callbacks. */
#ifndef CORRAL_FS_SVCINDEX_H
#define CORRAL_FS_SVCINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "error.h"
#include "servicerange.h"
#include "ynode.h"

#define SVCINDEX_MAX_RANGE (1u << 20) /* a /12 */

struct svcindex;

/* What a reservation took, to give back. */
struct svcindex_claim {
	int64_t ip; /* offset, -1: none */
	int *ports;
	size_t nports;
};

struct svcindex *svcindex_new(const struct servicerange *range);
void svcindex_free(struct svcindex *x);

/* A stored Service, at start: what it holds becomes owner's ("ns/name"),
 * unchecked; a slot already held stays its first holder's. */
void svcindex_load(struct svcindex *x, const char *owner, const struct ynode *svc);
/* Before svc (named name) replaces old (NULL on create): reserves what svc
 * holds that old did not, into got. -EINVAL with Kubernetes' message when
 * an address or port is another's, or the address is outside the range:
 *   Service "b" is invalid: spec.clusterIP: Invalid value: "10.96.0.50":
 *   provided IP is already allocated (to service dev/a)
 * and nothing is reserved. */
int svcindex_reserve(struct svcindex *x, const char *owner, const char *name,
		     const struct ynode *svc, const struct ynode *old, struct svcindex_claim *got,
		     struct error **err);
/* The write failed: gives back what got holds, and clears it. */
void svcindex_unreserve(struct svcindex *x, const char *owner, struct svcindex_claim *got);
/* The write is stored: frees what old held that svc does not; clears got. */
void svcindex_settle(struct svcindex *x, const char *owner, const struct ynode *svc,
		     const struct ynode *old, struct svcindex_claim *got);
/* The Service old was deleted: frees what it held. */
void svcindex_drop(struct svcindex *x, const char *owner, const struct ynode *old);

/* The admission hook "service-addresses": its state is a struct svcindex
 * over cfg's service range (the default range without one); a deletion
 * frees what the deleted Service held when it settles. */
void *svcindex_hook_init(const struct admission_config *cfg);
void svcindex_hook_fini(void *state);
void svcindex_hook_load(void *state, const struct admission_request *rq);
int svcindex_hook_reserve(void *state, struct admission_request *rq, void **claim,
			  struct error **err);
void svcindex_hook_settle(void *state, const struct admission_request *rq, void *claim);
void svcindex_hook_unreserve(void *state, const struct admission_request *rq, void *claim);

#endif
