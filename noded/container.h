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
 *   - the working directory: workingDir, else the image's;
 *   - the security context: the container's securityContext over its
 *     pod's (runAsUser, runAsGroup, runAsNonRoot: the container's wins;
 *     supplementalGroups: the pod's; capabilities, readOnlyRootFilesystem,
 *     allowPrivilegeEscalation, privileged: the container's), worked out
 *     into the capability set the process keeps, its ids, and whether its
 *     root is read-only and no_new_privs is set (corral-noded(8),
 *     SECURITY CONTEXTS).
 *
 * Pure apart from the lookups it is given. A failure names its Kubernetes
 * waiting reason: CreateContainerConfigError for a missing object or key
 * or a bad mount, a security context that cannot be honoured (an unknown
 * capability, privileged, runAsNonRoot with user 0), CreateContainerError
 * for no command at all. */
#ifndef CORRAL_NODED_CONTAINER_H
#define CORRAL_NODED_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capability.h"
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

/* The capabilities a container keeps when its securityContext adds and
 * drops none: containerd's default set without CAP_NET_RAW (a pod that
 * may forge packets can spoof addresses and ARP on the node's bridge). */
#define CONTAINER_DEFAULT_CAPS                                                                     \
	(CAPABILITY_BIT(0) /* CHOWN */ | CAPABILITY_BIT(1) /* DAC_OVERRIDE */ |                    \
	 CAPABILITY_BIT(3) /* FOWNER */ | CAPABILITY_BIT(4) /* FSETID */ |                         \
	 CAPABILITY_BIT(5) /* KILL */ | CAPABILITY_BIT(6) /* SETGID */ |                           \
	 CAPABILITY_BIT(7) /* SETUID */ | CAPABILITY_BIT(8) /* SETPCAP */ |                        \
	 CAPABILITY_BIT(10) /* NET_BIND_SERVICE */ | CAPABILITY_BIT(18) /* SYS_CHROOT */ |         \
	 CAPABILITY_BIT(27) /* MKNOD */ | CAPABILITY_BIT(29) /* AUDIT_WRITE */ |                   \
	 CAPABILITY_BIT(31) /* SETFCAP */)

/* What the security context asks of the runtime. */
struct container_security {
	uint64_t caps;	    /* CAPABILITY_BIT(n): capability n is kept */
	long long uid, gid; /* runAsUser, runAsGroup; -1: unset (the image's root) */
	long long *groups;  /* supplementalGroups */
	size_t ngroups;
	bool read_only_root; /* readOnlyRootFilesystem */
	bool no_new_privs;   /* allowPrivilegeEscalation: false */
};

struct container_plan {
	struct strv argv;  /* what runs */
	struct strv env;   /* NAME=VALUE */
	struct strv binds; /* nspawn's --bind / --bind-ro values: "SRC:DST" */
	struct strv binds_ro;
	char *working_dir; /* NULL: the image's root */
	struct container_security sec;
	const char *reason; /* on failure: the waiting reason */
};

/* c is one item of pod's spec.containers or spec.initContainers. */
int container_plan(const struct ynode *pod, const struct ynode *c, const struct image *img,
		   const struct container_env *ce, struct container_plan *out, struct error **err);
void container_plan_clear(struct container_plan *p);

/* The security context of c (an item of pod's containers lists) alone;
 * container_plan calls it. Fails (EINVAL, the message as the kubelet
 * words it where it has one) on what cannot be honoured. */
int container_security(const struct ynode *pod, const struct ynode *c,
		       struct container_security *out, struct error **err);
void container_security_clear(struct container_security *s);

/* The primary group of uid in the text of an /etc/passwd, or 0 (as
 * containerd gives a runAsUser without runAsGroup). */
long long container_passwd_gid(const char *passwd, long long uid);

/* "$(A)-$$(B)" with env A=x: "x-$(B)". */
char *container_expand(const char *s, const struct strv *env);

#endif
