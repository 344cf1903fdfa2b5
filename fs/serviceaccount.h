/* serviceaccount.h: the admission hook "serviceaccount", Kubernetes'
 * ServiceAccount admission plugin at corral-fs's write (admission.h). It
 * applies to Pods and ServiceAccounts; only the ServiceAccounts are its
 * state (an index of the stored ones, loaded at start and kept by the
 * settle of every ServiceAccount write and deletion, as priority.c keeps
 * its PriorityClasses). On a new pod (not a mirror pod):
 *
 *   - spec.serviceAccountName (and the old spec.serviceAccount) become
 *     the serviceAccount the pod names, or `default`;
 *   - a ServiceAccount that is not stored is refused (EACCES):
 *       pods "web" is forbidden: error looking up service account
 *       dev/robot: serviceaccount "robot" not found
 *     but only once the namespace has its `default` ServiceAccount: until
 *     the serviceaccount controller has made it (a namespace just made, a
 *     cluster without corral-ctrl) a pod is taken as it is, with no token
 *     volume, where Kubernetes would refuse it until the controller runs;
 *   - unless automountServiceAccountToken is false (the pod's, else the
 *     ServiceAccount's), the pod gets the projected volume
 *     kube-api-access-XXXXX (a serviceAccountToken of 3607 s at `token`,
 *     ca.crt of the ConfigMap kube-root-ca.crt, the namespace from the
 *     downward API) and every container and init container that mounts
 *     nothing at /var/run/secrets/kubernetes.io/serviceaccount mounts it
 *     there read-only, exactly as Kubernetes' plugin adds them.
 *
 * An updated pod keeps what its create was given (serviceaccount_carry()). */
#ifndef CORRAL_FS_SERVICEACCOUNT_H
#define CORRAL_FS_SERVICEACCOUNT_H

#include <stdbool.h>

#include "admission.h"
#include "error.h"
#include "ynode.h"

#define SA_TOKEN_MOUNT_PATH  "/var/run/secrets/kubernetes.io/serviceaccount"
#define SA_VOLUME_PREFIX     "kube-api-access-"
#define SA_TOKEN_SECONDS     3607
#define SA_ROOT_CA_CONFIGMAP "kube-root-ca.crt"

void *serviceaccount_hook_init(const struct admission_config *cfg);
void serviceaccount_hook_fini(void *state);
void serviceaccount_hook_load(void *state, const struct admission_request *rq);
int serviceaccount_hook_reserve(void *state, struct admission_request *rq, void **claim,
				struct error **err);
void serviceaccount_hook_settle(void *state, const struct admission_request *rq, void *claim);

/* The pure part, for a new pod's spec: names the service account and, when
 * automount, adds the token volume (its name's suffix from suffix, five
 * characters) and the mounts. Returns whether spec changed. */
bool serviceaccount_admit_spec(struct ynode *spec, bool automount, const char *suffix);
/* Whether a pod with spec mounts the token, given the ServiceAccount's
 * automountServiceAccountToken (sa_automount: -1 unset, 0, 1). */
bool serviceaccount_automount(const struct ynode *spec, int sa_automount);
/* An updated pod (the stored old) keeps the service account names, the
 * kube-api-access volume and its mounts when the new document lacks them
 * (a manifest written again). Returns whether pod changed. */
bool serviceaccount_carry(struct ynode *pod, const struct ynode *old);

#endif
