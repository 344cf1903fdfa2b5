/* volumes.h: what a pod's PersistentVolumeClaims ask of its node, worked
 * out once before each decision (kube-scheduler's VolumeBinding PreFilter,
 * in part), from informers of claims, volumes and StorageClasses:
 *
 *   - a claim that does not exist, or is being deleted, makes the pod
 *     unschedulable:  persistentvolumeclaim "data" not found
 *                     persistentvolumeclaim "data" is being deleted
 *   - an unbound claim whose class binds Immediately (or that has no
 *     class) too:     pod has unbound immediate PersistentVolumeClaims
 *   - an unbound claim of a WaitForFirstConsumer class is bound after the
 *     pod is placed (corral-ctrl's binder reads the pod's spec.nodeName and
 *     provisions or binds a volume there): no constraint;
 *   - a bound claim's volume's spec.nodeAffinity.required goes into the
 *     pod's volume_affinity, which the volumes filter (filter.c) checks on
 *     every node.
 *
 * A change of any claim, volume or class is a cluster event for the pods
 * waiting (SCHED_EVENT_NODE). Loop thread only. */
#ifndef CORRAL_SCHED_VOLUMES_H
#define CORRAL_SCHED_VOLUMES_H

#include "error.h"
#include "loop.h"
#include "objects.h"

#define SCHED_VOLUMES_UNBOUND_IMMEDIATE "pod has unbound immediate PersistentVolumeClaims"

struct sched_volumes;
/* on_change(data) runs on every change of a claim, volume or class. */
struct sched_volumes *sched_volumes_new(struct loop *loop, const char *mount,
					void (*on_change)(void *data), void *data);
int sched_volumes_start(struct sched_volumes *v, struct error **err);
void sched_volumes_free(struct sched_volumes *v);

/* Fills p->volume_affinity; -1 with *why (malloc'd: the reason, without
 * the "0/N nodes are available: " prefix) when no node can take the pod
 * until its claims change. */
int sched_volumes_prepare(const struct sched_volumes *v, struct sched_pod *p, char **why);

#endif
