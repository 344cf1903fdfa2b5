/* kinds_scheduling.h: the pure part of a pod's priority (Kubernetes'
 * Priority admission plugin): which value and preemption policy a new pod
 * gets from the PriorityClasses. The admission hook that calls it supplies
 * the classes and writes the result into the pod; nothing here reads the
 * store. */
#ifndef CORRAL_KINDS_SCHEDULING_H
#define CORRAL_KINDS_SCHEDULING_H

#include "error.h"
#include "ynode.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIORITY_USER_MAX	1000000000 /* HighestUserDefinablePriority */
#define PRIORITY_POLICY_DEFAULT "PreemptLowerPriority"

struct priority_resolved {
	const char *class_name; /* the class named, or the global default; NULL: none */
	int32_t value;		/* what spec.priority becomes */
	const char *policy;	/* what spec.preemptionPolicy becomes */
};

/* Resolves a new pod's priority from pod_spec and the PriorityClass objects
 * classes[0..n) (as stored; entries that are not maps are skipped):
 *   - spec.priorityClassName names a class: its value and preemptionPolicy;
 *     the two system classes (system-node-critical, system-cluster-critical)
 *     resolve even when absent from classes, as Kubernetes' API server
 *     creates them at start-up;
 *   - no name: the globalDefault class (the lowest value if several, as
 *     Kubernetes picks after a race), and class_name is set to it; with none,
 *     0 and PreemptLowerPriority.
 * Returns 0, or -EINVAL with Kubernetes' message when the name is no
 * class's ("no PriorityClass with name X was found") or the pod sets
 * spec.priority or spec.preemptionPolicy to other values than resolved.
 * The strings in out point into pod_spec or classes, or are static. On an
 * update Kubernetes keeps the old pod's values instead; that is the hook's
 * part. */
int priority_resolve(const struct ynode *pod_spec, const struct ynode *const *classes, size_t n,
		     struct priority_resolved *out, struct error **err);

/* On a pod update, what the create's admission gave the pod and the new
 * document leaves out (spec.priority, spec.preemptionPolicy,
 * spec.priorityClassName) comes back from the stored pod old, as
 * Kubernetes keeps it; a value the document sets is left for the pod's
 * update rules to judge. Returns whether pod changed. Pod's carry rule
 * (kinds_core.c) calls it, so that writing the original manifest again is
 * no change of the pod's fixed spec. */
bool priority_carry(struct ynode *pod, const struct ynode *old);

#endif
