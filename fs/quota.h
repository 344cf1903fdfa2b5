/* quota.h: the admission hook "resource-quota", Kubernetes' ResourceQuota
 * admission plugin at corral-fs's write (admission.h), last in the table.
 * It applies to every namespaced kind:
 *
 *   - what an object charges is quotacalc_usage() (lib/quotacalc.h):
 *     count/<plural>[.<group>] for every object; pods, requests.cpu,
 *     requests.memory, limits.cpu, limits.memory, cpu, memory (and
 *     ephemeral-storage, extended requests.*) for a pod that is not
 *     terminal; services, services.nodeports, services.loadbalancers;
 *     persistentvolumeclaims, requests.storage and the per-class
 *     <class>.storageclass.storage.k8s.io/{requests.storage,
 *     persistentvolumeclaims}; configmaps, secrets, replicationcontrollers,
 *     resourcequotas;
 *   - a quota's scopes (BestEffort, NotBestEffort, Terminating,
 *     NotTerminating, PriorityClass, and scopeSelector with In, NotIn,
 *     Exists, DoesNotExist) select pods; a scoped quota charges nothing
 *     else (quotacalc_matches());
 *   - a create (and an update of a Service or PVC) that would take any
 *     quota of its namespace past spec.hard is refused (EACCES):
 *       pods "web" is forbidden: exceeded quota: q1, requested:
 *       requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2
 *     and a pod without a request or limit that a quota constrains:
 *       pods "web" is forbidden: failed quota: q1: must specify
 *       limits.cpu for: app; requests.cpu for: app
 *
 * Its state is, per namespace, what every stored object charges and each
 * quota's sums (used, and reserved by writes in flight). A write's reserve
 * takes its share of every quota under the hook's lock, so that
 * concurrent writers are never admitted past a quota; settle makes the
 * share used, unreserve gives it back. A quota written later is summed
 * from what is stored. quota_hook_used() is what the resourcequota
 * controller would compute (for tests). */
#ifndef CORRAL_FS_QUOTA_H
#define CORRAL_FS_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "error.h"
#include "quotacalc.h"

void *quota_hook_init(const struct admission_config *cfg);
void quota_hook_fini(void *state);
void quota_hook_load(void *state, const struct admission_request *rq);
int quota_hook_reserve(void *state, struct admission_request *rq, void **claim, struct error **err);
void quota_hook_settle(void *state, const struct admission_request *rq, void *claim);
void quota_hook_unreserve(void *state, const struct admission_request *rq, void *claim);
/* The used sums of quota name in ns as the hook keeps them (settled
 * writes only), masked to its hard; false if there is no such quota. */
bool quota_hook_used(void *state, const char *ns, const char *name, struct quotacalc_list *out);

#endif
