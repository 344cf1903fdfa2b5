/* capability.h: Linux capabilities by name, as a securityContext's
 * capabilities.add and .drop write them: "NET_RAW" (Kubernetes' form),
 * "CAP_NET_RAW", in any case. "ALL" is not a capability: callers take it
 * themselves. Shared by corral-fs (which refuses unknown names at the write)
 * and corral-noded (which turns them into the set a container keeps). */
#ifndef CORRAL_CAPABILITY_H
#define CORRAL_CAPABILITY_H

#include <stdint.h>

#define CAPABILITY_LAST	  40 /* CAP_CHECKPOINT_RESTORE, Linux 5.9 */
#define CAPABILITY_ALL	  ((UINT64_C(1) << (CAPABILITY_LAST + 1)) - 1)
#define CAPABILITY_BIT(n) (UINT64_C(1) << (n))

/* The capability's number, or -1 for a name that is none. */
int capability_from_name(const char *name);
/* "CAP_NET_RAW" for 13; NULL beyond CAPABILITY_LAST. */
const char *capability_name(int cap);

#endif
