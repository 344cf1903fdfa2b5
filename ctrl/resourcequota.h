/* resourcequota.h: the resourcequota controller (Kubernetes' of that
 * name): each ResourceQuota's status.hard (its spec.hard) and status.used
 * (what the objects of its namespace that it selects charge, summed over
 * the names it limits), as Kubernetes writes them:
 *
 *   status: {hard: {pods: "10", requests.cpu: "2"},
 *            used: {pods: "3", requests.cpu: 1800m}}
 *
 * A quota is counted again when it is written, when an object of a kind it
 * charges changes in its namespace (a pod created, finished, deleted), and
 * every RESOURCEQUOTA_RESYNC_MS in any case (Kubernetes' full recount).
 * The arithmetic is lib/quotacalc.h, the same as corral-fs's admission,
 * which enforces the quota at the write whatever status says. Every
 * namespaced kind but Events is watched for count/<resource>. */
#ifndef CORRAL_CTRL_RESOURCEQUOTA_H
#define CORRAL_CTRL_RESOURCEQUOTA_H

#include <stddef.h>

#include "kinds.h"
#include "ynode.h"

#define RESOURCEQUOTA_RESYNC_MS (5ULL * 60 * 1000)

struct ctrl;
struct resourcequota;

struct resourcequota *resourcequota_new(struct ctrl *c);
void resourcequota_free(struct resourcequota *r);

/* The status of quota rq over n objects (objs[i] of kinds[i], all of its
 * namespace): a new mapping {hard, used}. */
struct ynode *resourcequota_status(const struct ynode *rq, const struct ynode *const *objs,
				   const struct kind_info *const *kinds, size_t n);

#endif
