/* tolerations.h: the admission hook "default-toleration-seconds",
 * Kubernetes' DefaultTolerationSeconds plugin at corral-fs's write
 * (admission.h). A new pod that does not already tolerate the NoExecute
 * taints node.kubernetes.io/not-ready and node.kubernetes.io/unreachable
 * gets a toleration of each (operator Exists, effect NoExecute,
 * tolerationSeconds from [fs] default-not-ready-toleration-seconds and
 * default-unreachable-toleration-seconds, 300 each), so that corral-ctrl's
 * taint manager evicts it from a node that failed only after that long.
 * Updates are left as they are, as the plugin leaves them, but for
 * keeping what the create was given (tolerations_carry()). The hook never
 * refuses a write. */
#ifndef CORRAL_FS_TOLERATIONS_H
#define CORRAL_FS_TOLERATIONS_H

#include <stdbool.h>

#include "admission.h"
#include "error.h"
#include "ynode.h"

#define TOLERATIONS_NOT_READY	"node.kubernetes.io/not-ready"
#define TOLERATIONS_UNREACHABLE "node.kubernetes.io/unreachable"
#define TOLERATIONS_DEFAULT_S	300

/* Adds the two default tolerations to pod (a Pod object) where it has
 * none that tolerates the taint; returns whether it added one. Pure. */
bool tolerations_add_defaults(struct ynode *pod, long long not_ready_s, long long unreachable_s);

/* An update of pod that leaves out the tolerations the create was given
 * (the same manifest written again) keeps old's: every toleration of old
 * for the two keys with effect NoExecute that pod does not tolerate is
 * added back, so that the update is not refused for removing it. Returns
 * whether it added one. Pure. */
bool tolerations_carry(struct ynode *pod, const struct ynode *old);

void *tolerations_hook_init(const struct admission_config *cfg);
void tolerations_hook_fini(void *state);
int tolerations_hook_reserve(void *state, struct admission_request *rq, void **claim,
			     struct error **err);

#endif
