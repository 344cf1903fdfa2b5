/* container.h: what one container of a pod runs, worked out from the pod,
 * its image and the objects it refers to, as the kubelet does:
 *
 *   - the command: `command` replaces the image's entrypoint, `args` its
 *     cmd (command alone drops the image's cmd too); $(VAR) in command,
 *     args and env values is replaced by VAR of the container's
 *     environment, $$ is a literal $, an unknown $(VAR) stays as it is;
 *   - the environment: the image's, then envFrom (configMapRef, secretRef,
 *     with prefix), then env (value, or valueFrom fieldRef: metadata.name,
 *     .namespace, .uid, .labels['k'], .annotations['k'], spec.nodeName,
 *     spec.serviceAccountName, status.podIP, status.hostIP; configMapKeyRef,
 *     secretKeyRef, with optional), then KUBERNETES-style HOSTNAME;
 *   - the mounts: each volumeMount as SOURCE:TARGET, from the folder the
 *     pod's volume has on the host (see volumes.h), with subPath;
 *   - the working directory: workingDir, else the image's.
 *
 * Pure apart from the lookups it is given. A failure names its Kubernetes
 * waiting reason: CreateContainerConfigError for a missing object or key
 * or a bad mount, CreateContainerError for no command at all. */
#ifndef CORRAL_NODED_CONTAINER_H
#define CORRAL_NODED_CONTAINER_H

#include <stdbool.h>

#include "error.h"
#include "image.h"
#include "strv.h"
#include "ynode.h"

/* Reads an object of the pod's namespace: kind folder "configmaps" or
 * "secrets". Returns 0 with *out (the caller frees it), -ENOENT, or
 * another negative error. */
typedef int (*container_lookup_fn)(void *data, const char *plural, const char *name,
				   struct ynode **out, struct error **err);
/* The host folder (or file) of the pod's volume `name`, or NULL if the pod
 * has no such volume. */
typedef const char *(*container_volume_fn)(void *data, const char *name);

struct container_env {
	const char *pod_ip;  /* may be NULL */
	const char *host_ip; /* may be NULL */
	container_lookup_fn lookup;
	container_volume_fn volume;
	void *data;
};

struct container_plan {
	struct strv argv;  /* what runs */
	struct strv env;   /* NAME=VALUE */
	struct strv binds; /* nspawn's --bind / --bind-ro values: "SRC:DST" */
	struct strv binds_ro;
	char *working_dir;  /* NULL: the image's root */
	const char *reason; /* on failure: the waiting reason */
};

/* c is one item of pod's spec.containers or spec.initContainers. */
int container_plan(const struct ynode *pod, const struct ynode *c, const struct image *img,
		   const struct container_env *ce, struct container_plan *out, struct error **err);
void container_plan_clear(struct container_plan *p);

/* "$(A)-$$(B)" with env A=x: "x-$(B)". */
char *container_expand(const char *s, const struct strv *env);

#endif
