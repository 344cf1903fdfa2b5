/* volumes.h: a pod's volumes on the host, each a folder (or file) that
 * every container mounting it gets bound in (DESIGN.md, "Nodes and pods"):
 *
 *   emptyDir               POD_DIR/volumes/NAME/, removed with the pod;
 *                          medium: Memory makes it a tmpfs (sizeLimit its
 *                          size)
 *   hostPath               the path itself, after the check its type asks
 *                          for (Directory, File, DirectoryOrCreate,
 *                          FileOrCreate, Socket, ...; "" checks nothing
 *                          but that it exists)
 *   configMap, secret      POD_DIR/volumes/NAME/ with one file per key (or
 *                          per items[]), written again on every sync, so
 *                          that a changed object reaches the files within
 *                          the agent's resync period; secret files 0400
 *                          unless defaultMode says otherwise
 *   persistentVolumeClaim  the bound PersistentVolume's hostPath.path (its
 *                          type checked as a pod's hostPath's) or
 *                          local.path
 *
 * A volume that cannot be set up fails the pod's containers with reason
 * FailedMount and a message naming the volume and the cause. */
#ifndef CORRAL_NODED_VOLUMES_H
#define CORRAL_NODED_VOLUMES_H

#include "container.h"
#include "error.h"
#include "ynode.h"

struct volumes;

/* Sets up (or refreshes) every volume of pod under pod_dir. lookup reads
 * objects: configmaps, secrets, persistentvolumeclaims of the pod's
 * namespace and persistentvolumes. */
int volumes_prepare(const struct ynode *pod, const char *pod_dir, container_lookup_fn lookup,
		    void *data, struct volumes **out, struct error **err);
/* The host path of volume name, or NULL. */
const char *volumes_path(const struct volumes *v, const char *name);
void volumes_free(struct volumes *v);
/* Unmounts the tmpfs emptyDirs under pod_dir (before it is removed). */
void volumes_teardown(const char *pod_dir);

#endif
