/* storage.h: the storage admission hooks of corral-fs's write path
 * (admission.h), Kubernetes' DefaultStorageClass, PersistentVolumeClaimResize
 * and StorageObjectInUseProtection plugins:
 *
 *   "default-storage-class" (PersistentVolumeClaims and StorageClasses)
 *     - a new claim without spec.storageClassName (absent or null; "" is
 *       "no class" and stays) gets the default class: the StorageClass
 *       annotated storageclass.kubernetes.io/is-default-class: "true" (or
 *       the beta annotation); of several, the newest (creationTimestamp,
 *       then name), as Kubernetes >= 1.26 picks; none: it stays unset;
 *     - an update that grows spec.resources.requests.storage is refused
 *       (EACCES) unless the claim's class exists and allows expansion:
 *         persistentvolumeclaims "c" is forbidden: only dynamically
 *         provisioned pvc can be resized and the storageclass that
 *         provisions the pvc must support resize
 *       (shrinking is the kind's rule: kinds_core.c).
 *   "storage-object-in-use-protection" (claims and PersistentVolumes)
 *     - a new claim gets the finalizer kubernetes.io/pvc-protection, a new
 *       PersistentVolume kubernetes.io/pv-protection; corral-ctrl's
 *       pvc-protection and pv-protection controllers remove them.
 *
 * The state of the first is an index of the stored StorageClasses, loaded
 * at start and kept by settle, as priority.c keeps PriorityClasses. */
#ifndef CORRAL_FS_STORAGE_H
#define CORRAL_FS_STORAGE_H

#include "admission.h"
#include "error.h"

#define STORAGE_DEFAULT_CLASS_ANNOTATION      "storageclass.kubernetes.io/is-default-class"
#define STORAGE_BETA_DEFAULT_CLASS_ANNOTATION "storageclass.beta.kubernetes.io/is-default-class"
#define STORAGE_PVC_PROTECTION_FINALIZER      "kubernetes.io/pvc-protection"
#define STORAGE_PV_PROTECTION_FINALIZER	      "kubernetes.io/pv-protection"

void *storage_class_hook_init(const struct admission_config *cfg);
void storage_class_hook_fini(void *state);
void storage_class_hook_load(void *state, const struct admission_request *rq);
int storage_class_hook_reserve(void *state, struct admission_request *rq, void **claim,
			       struct error **err);
void storage_class_hook_settle(void *state, const struct admission_request *rq, void *claim);

int storage_protection_hook_reserve(void *state, struct admission_request *rq, void **claim,
				    struct error **err);

/* The pure part: the default class among n classes, or NULL. */
const struct ynode *storage_default_class(const struct ynode *const *classes, size_t n);

#endif
