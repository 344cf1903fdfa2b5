/* nslifecycle.h: the admission hook "namespace-lifecycle", Kubernetes'
 * NamespaceLifecycle plugin at corral-fs's write (admission.h), the first
 * of the table. It applies to every kind:
 *
 *   - a create in a namespace being deleted (Terminating) is refused
 *     (EACCES); updates and deletions still pass, so that controllers and
 *     finalizers can finish:
 *       pods "web" is forbidden: unable to create new content in namespace
 *       dev because it is being terminated
 *   - the deletion of default, kube-system, kube-public or kube-node-lease
 *     is refused (EACCES):
 *       namespaces "default" is forbidden: this namespace may not be
 *       deleted
 *
 * Its state is the set of Terminating namespaces, loaded from the stored
 * Namespaces at start and kept by the settle of every Namespace write. */
#ifndef CORRAL_FS_NSLIFECYCLE_H
#define CORRAL_FS_NSLIFECYCLE_H

#include "admission.h"
#include "error.h"

void *nslifecycle_hook_init(const struct admission_config *cfg);
void nslifecycle_hook_fini(void *state);
void nslifecycle_hook_load(void *state, const struct admission_request *rq);
int nslifecycle_hook_reserve(void *state, struct admission_request *rq, void **claim,
			     struct error **err);
void nslifecycle_hook_settle(void *state, const struct admission_request *rq, void *claim);

#endif
