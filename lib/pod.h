/* pod.h: what a Pod's status says, as Kubernetes' podutil and controller
 * helpers read it: terminal, active, ready, available. Pure functions over
 * ynode trees. */
#ifndef CORRAL_POD_H
#define CORRAL_POD_H

#include <stdbool.h>
#include <stdint.h>

#include "ynode.h"

/* metadata.deletionTimestamp is set (not absent, null or empty): the
 * object is being deleted. Any kind. */
bool object_is_deleting(const struct ynode *o);
/* Phase Succeeded or Failed (podutil.IsPodTerminal): it runs no more. */
bool pod_is_terminal(const struct ynode *pod);
/* Not terminal and not being deleted (controller.IsPodActive): it counts
 * towards its controller's replicas. */
bool pod_is_active(const struct ynode *pod);
/* The Ready condition is True (podutil.IsPodReady); *since (may be NULL)
 * gets its lastTransitionTime in seconds since the epoch (or -1). */
bool pod_is_ready(const struct ynode *pod, int64_t *since);
/* Ready for at least min_ready seconds at now (podutil.IsPodAvailable);
 * when ready but not yet long enough, *wait_s (may be NULL) gets the
 * seconds left. */
bool pod_is_available(const struct ynode *pod, long long min_ready, int64_t now, int64_t *wait_s);
/* The container called name among spec.containers, spec.initContainers
 * and spec.ephemeralContainers (kubectl exec takes any of them); NULL when
 * there is none. */
const struct ynode *pod_container(const struct ynode *pod, const char *name);

#endif
