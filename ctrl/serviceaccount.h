/* serviceaccount.h: two controllers that give every namespace an object
 * of its own, as kube-controller-manager's do:
 *
 *   serviceaccount          ServiceAccount `default` in every namespace,
 *                           existing and new, made again when deleted;
 *   root-ca-cert-publisher  ConfigMap `kube-root-ca.crt` with `ca.crt`, the
 *                           cluster CA's certificate (corral-ctrl's
 *                           root-ca-file; empty without one), kept equal to
 *                           it.
 *
 * Namespaces are the folders of namespaces/ (watched with inotify: a
 * mkdir there makes no event on the Namespace's own file). An object
 * deleted in a namespace that is still there is made again after
 * SAC_RECREATE_MS, not at once, and not in a namespace that is going
 * (Terminating, or its folder gone), so that `rm -r` of a namespace is
 * not raced by its own controller. */
#ifndef CORRAL_CTRL_SERVICEACCOUNT_H
#define CORRAL_CTRL_SERVICEACCOUNT_H

#include <stdbool.h>

#include "ctrl.h"
#include "ynode.h"

#define SAC_RECREATE_MS	 2000
#define SAC_ROOT_CA_NAME "kube-root-ca.crt"

struct sac;

/* The serviceaccount controller. */
struct sac *sac_new_serviceaccounts(struct ctrl *c);
/* The root-ca-cert-publisher, publishing ca_pem (copied; "" for none). */
struct sac *sac_new_root_ca(struct ctrl *c, const char *ca_pem);
void sac_free(struct sac *s);

/* The objects they make (pure): the default ServiceAccount of ns, and the
 * kube-root-ca.crt ConfigMap of ns holding ca_pem. */
struct ynode *sac_default_account(const char *ns);
struct ynode *sac_root_ca_configmap(const char *ns, const char *ca_pem);
/* Whether the stored ConfigMap cm holds ca_pem as its ca.crt. */
bool sac_root_ca_current(const struct ynode *cm, const char *ca_pem);

#endif
