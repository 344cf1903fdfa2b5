/* provision.h: the node's half of corral-ctrl's local-path provisioner
 * (corral.io/local-path). corral-ctrl writes a PersistentVolume
 * pvc-<claim uid> whose hostPath is <volumes dir>/pvc-<uid> of one node
 * (the node's corral.io/volumes-dir annotation) and whose nodeAffinity
 * names that node; the folder is on the node, so only the node's agent
 * makes and removes it:
 *
 *   - a local-path volume of this node that is not going away gets its
 *     folder (mode 0777, as Kubernetes' local-path-provisioner makes it),
 *     before any pod mounts it;
 *   - one with reclaim policy Delete whose claim is gone (phase
 *     Released), which is being deleted, or which was deleted, loses its
 *     folder and everything in it.
 *
 * Only folders named pvc-* directly inside the volumes dir are ever made
 * or removed, whatever a volume's path says. A folder whose volume was
 * deleted while this agent was not running stays (the agent cannot tell
 * a Retain volume deleted by hand from a Delete one). */
#ifndef CORRAL_NODED_PROVISION_H
#define CORRAL_NODED_PROVISION_H

#include <stdbool.h>

#include "error.h"
#include "loop.h"
#include "ynode.h"

#define PROVISION_PROVISIONER	  "corral.io/local-path"
#define PROVISION_ANN_PROVISIONER "pv.kubernetes.io/provisioned-by"

/* What to do with a volume's folder. */
enum provision_action {
	PROVISION_NOTHING,
	PROVISION_CREATE,
	PROVISION_REMOVE,
};

/* The folder of pv if it is a local-path volume of node under dir
 * (malloc'd, NULL otherwise). Pure. */
char *provision_folder(const struct ynode *pv, const char *node, const char *dir);
/* What the volume (still stored: deleted false; or just deleted) asks
 * for. Pure. */
enum provision_action provision_decide(const struct ynode *pv, bool deleted);

struct provision;
struct provision *provision_new(struct loop *loop, const char *mount, const char *node,
				const char *dir);
/* Lists the volumes and follows them. */
int provision_start(struct provision *p, struct error **err);
void provision_free(struct provision *p);

#endif
