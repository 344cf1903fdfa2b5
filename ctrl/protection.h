/* protection.h: the pvc-protection and pv-protection controllers (rows
 * "pvc-protection" and "pv-protection", Kubernetes' controllers of those
 * names). corral-fs gives every new claim the finalizer
 * kubernetes.io/pvc-protection and every new PersistentVolume
 * kubernetes.io/pv-protection (fs/storage.c), so that `rm` only marks them
 * deleted (metadata.deletionTimestamp). These remove the finalizer, which
 * lets the deletion finish:
 *
 *   pvc-protection  from a claim being deleted once no pod that is not
 *                   terminated (Succeeded or Failed) names it in
 *                   spec.volumes[].persistentVolumeClaim.claimName;
 *   pv-protection   from a volume being deleted once it is not Bound.
 *
 * The decisions are pure (protection_claim_in_use(),
 * protection_volume_in_use()); the removal is a write of the object with
 * only the finalizer gone, re-checked on what the write read. */
#ifndef CORRAL_CTRL_PROTECTION_H
#define CORRAL_CTRL_PROTECTION_H

#include <stdbool.h>
#include <stddef.h>

#include "ynode.h"

#define PROTECTION_PVC_FINALIZER "kubernetes.io/pvc-protection"
#define PROTECTION_PV_FINALIZER	 "kubernetes.io/pv-protection"

/* Whether the pod (not terminated) uses the claim named claim. */
bool protection_pod_uses_claim(const struct ynode *pod, const char *claim);
/* Whether the volume is in use: status.phase Bound. */
bool protection_volume_in_use(const struct ynode *pv);
/* Whether o has the finalizer fin. */
bool protection_has_finalizer(const struct ynode *o, const char *fin);
/* Removes fin from o's finalizers (the list goes when it empties); 1 if
 * it was there. */
int protection_remove_finalizer(struct ynode *o, const char *fin);

struct ctrl;
struct protection;
/* volumes: the pv-protection controller, else pvc-protection. */
struct protection *protection_new(struct ctrl *c, bool volumes);
void protection_free(struct protection *p);

#endif
