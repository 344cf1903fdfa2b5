/* podgc.h: the pod garbage collector (Kubernetes' podgc controller).
 *
 * Once more than terminated-pod-gc-threshold pods (default 12,500; 0
 * turns it off) have terminated (phase Succeeded or Failed), the oldest
 * by creation are deleted until that many are left. A pod bound to a node
 * that no longer exists (its nodes/NAME.yaml was deleted) is deleted once
 * the node has stayed missing for a quarantine (pod-gc-quarantine, 40 s
 * by default: Kubernetes' quarantineTime), so that a node re-registering is not taken for a gone
 * one. Both wait for
 * events and one delayed add each: nothing polls. */
#ifndef CORRAL_CTRL_PODGC_H
#define CORRAL_CTRL_PODGC_H

#include <stddef.h>
#include <stdint.h>

#include "ynode.h"

struct ctrl;
struct podgc;

struct podgc *podgc_new(struct ctrl *c);
void podgc_free(struct podgc *g);

/* Sorts terminated pods oldest first (creationTimestamp, then name): the
 * first n - threshold of them are the ones to delete. */
void podgc_sort_oldest(const struct ynode **pods, size_t n);

#endif
