/* limitrange.h: the admission hook "limit-ranger", Kubernetes' LimitRanger
 * admission plugin at corral-fs's write (admission.h), early in the table
 * so that ResourceQuota (quota.h) sees the defaults it fills in. It
 * applies to Pods and PersistentVolumeClaims, and keeps the LimitRanges:
 *
 *   - a new pod's containers and init containers get the default limits
 *     and defaultRequest requests of every Container item of the
 *     LimitRanges of its namespace, where they set none, and the
 *     annotation kubernetes.io/limit-ranger says what was set;
 *   - then each LimitRange's Container items (min, max,
 *     maxLimitRequestRatio, per container) and Pod items (the same over
 *     the pod's sums) are enforced, and a PVC's (created or resized)
 *     spec.resources.requests against PersistentVolumeClaim items' min and
 *     max; a pod or claim outside them is refused (EACCES):
 *       pods "web" is forbidden: maximum cpu usage per Container is 1, but
 *       limit is 2
 *     (several errors of one LimitRange as "[a, b]", as Kubernetes'
 *     aggregate prints them).
 *
 * Pod updates are not looked at (their containers' resources cannot
 * change), nor objects being deleted. limitrange_apply() is the pure part:
 * one pod or claim against a set of LimitRanges. */
#ifndef CORRAL_FS_LIMITRANGE_H
#define CORRAL_FS_LIMITRANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "admission.h"
#include "error.h"
#include "ynode.h"

/* Defaults (a pod, when is_pod: *changed set when any was filled in) and
 * enforcement of the n LimitRanges against obj, in order. 0, or -EACCES
 * with the first refusing LimitRange's message (without the "is
 * forbidden" prefix) in *err. */
int limitrange_apply(const struct ynode *const *ranges, size_t n, struct ynode *obj, bool is_pod,
		     bool *changed, struct error **err);

void *limitrange_hook_init(const struct admission_config *cfg);
void limitrange_hook_fini(void *state);
void limitrange_hook_load(void *state, const struct admission_request *rq);
int limitrange_hook_reserve(void *state, struct admission_request *rq, void **claim,
			    struct error **err);
void limitrange_hook_settle(void *state, const struct admission_request *rq, void *claim);
void limitrange_hook_unreserve(void *state, const struct admission_request *rq, void *claim);

#endif
