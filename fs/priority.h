/* priority.h: the admission hook "priority", Kubernetes' Priority
 * admission plugin at corral-fs's write (admission.h). It applies to Pods
 * and PriorityClasses, as the plugin does:
 *
 *   - a new pod gets spec.priority and spec.preemptionPolicy from the
 *     class its spec.priorityClassName names, or from the globalDefault
 *     class (whose name it then gets too), or 0 and PreemptLowerPriority;
 *     a name that is no class's, or a priority or policy the pod sets to
 *     other values, is refused (EACCES):
 *       pods "web" is forbidden: no PriorityClass with name gold was found
 *   - an updated pod keeps what its create was given (priority_carry());
 *   - a PriorityClass written with globalDefault: true while another class
 *     is the default is refused (EACCES):
 *       priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a
 *       is already marked as default. Only one default can exist
 *
 * Its state is an index of the stored PriorityClasses, loaded at start and
 * kept by the settle of every PriorityClass write and deletion (see
 * priority.c for why an index and not a read of the store). The pure part,
 * which value a pod gets, is priority_resolve() (kinds_scheduling.h). */
#ifndef CORRAL_FS_PRIORITY_H
#define CORRAL_FS_PRIORITY_H

#include "admission.h"
#include "error.h"

void *priority_hook_init(const struct admission_config *cfg);
void priority_hook_fini(void *state);
void priority_hook_load(void *state, const struct admission_request *rq);
int priority_hook_reserve(void *state, struct admission_request *rq, void **claim,
			  struct error **err);
void priority_hook_settle(void *state, const struct admission_request *rq, void *claim);
void priority_hook_unreserve(void *state, const struct admission_request *rq, void *claim);

#endif
