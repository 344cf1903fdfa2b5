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
 *   downwardAPI            POD_DIR/volumes/NAME/ with one file per item:
 *                          fieldRef metadata.name, .namespace, .uid,
 *                          .labels, .annotations (key="value" lines,
 *                          sorted, as the kubelet writes them) or one
 *                          label or annotation (metadata.labels['k']);
 *                          resourceFieldRef limits.* and requests.* (cpu,
 *                          memory, ephemeral-storage) of a container, in
 *                          divisor units rounded up (a limit not set: the
 *                          node's allocatable); written again on every
 *                          sync, so a changed label reaches its file
 *   projected              POD_DIR/volumes/NAME/ with the files of its
 *                          sources: configMap, secret (as above, mode
 *                          defaultMode), downwardAPI, serviceAccountToken
 *                          (the pod's token, token.h, signed again once
 *                          80% of its lifetime has passed; on a node
 *                          without a service-account key no token file
 *                          is written and the rest of the volume is)
 *   persistentVolumeClaim  the bound PersistentVolume's hostPath.path (its
 *                          type checked as a pod's hostPath's) or
 *                          local.path
 *
 * A volume that cannot be set up fails the pod's containers with reason
 * FailedMount and a message naming the volume and the cause. */
#ifndef CORRAL_NODED_VOLUMES_H
#define CORRAL_NODED_VOLUMES_H

#include <stdint.h>

#include "container.h"
#include "error.h"
#include "token.h"
#include "ynode.h"

struct volumes;

/* How this node signs service-account tokens. */
struct volumes_tokens {
	const struct token_signer *signer; /* NULL: no key, no token files */
	const char *issuer;		   /* NULL or "": TOKEN_DEFAULT_ISSUER */
	int64_t now;			   /* Unix seconds; 0: the clock's */
};

/* Sets up (or refreshes) every volume of pod under pod_dir. lookup reads
 * objects: configmaps, secrets, serviceaccounts, persistentvolumeclaims of
 * the pod's namespace, nodes and persistentvolumes. tokens may be NULL. */
int volumes_prepare(const struct ynode *pod, const char *pod_dir, container_lookup_fn lookup,
		    void *data, const struct volumes_tokens *tokens, struct volumes **out,
		    struct error **err);
/* When the first token of v is due to be signed again (Unix seconds), or 0
 * if v has none: the agent syncs the pod again then. */
int64_t volumes_refresh_at(const struct volumes *v);
/* A label or annotation map as the kubelet writes it to a downwardAPI
 * file: key="value" (Go's %q) lines sorted by key, no newline at the end. */
char *volumes_format_map(const struct ynode *m);
/* The value of a downwardAPI resourceFieldRef ref of pod (node: the pod's
 * node object, for a limit not set; may be NULL) in *out. */
int volumes_resource_value(const struct ynode *pod, const struct ynode *ref,
			   const struct ynode *node, char **out, struct error **err);
/* The host path of volume name, or NULL. */
const char *volumes_path(const struct volumes *v, const char *name);
void volumes_free(struct volumes *v);
/* Unmounts the tmpfs emptyDirs under pod_dir (before it is removed). */
void volumes_teardown(const char *pod_dir);

#endif
