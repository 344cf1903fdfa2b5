/* image.h: container images as folders (DESIGN.md, "Nodes and pods").
 *
 * An image reference ("busybox", "busybox:1.36", "docker.io/library/
 * busybox:latest@sha256:...") names a root folder under the images folder
 * (/var/lib/corral/images): its last path component, with the tag, as
 * NAME_TAG/, else as NAME/. Beside the folder, NAME_TAG.yaml or NAME.yaml
 * may hold the image's configuration, the part of an OCI image config that
 * running it needs:
 *
 *   entrypoint: ["/bin/sh", "-c"]     # or Entrypoint, as docker writes it
 *   cmd: ["echo hello"]               # or Cmd
 *   env: ["PATH=/usr/bin:/bin"]       # or Env
 *   workingDir: /                     # or WorkingDir
 *
 * The folder is never written: every container gets an overlay over it.
 *
 * An image that is no folder comes from the layer store (layers.h), pulled
 * from its registry (pull.h) as the container's imagePullPolicy says:
 * image_get() is the kubelet's image manager for one container, Always /
 * IfNotPresent / Never, the pull back-off (10 s doubling to 5 min) and the
 * events and waiting reasons Kubernetes shows. */
#ifndef CORRAL_NODED_IMAGE_H
#define CORRAL_NODED_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "strv.h"

struct puller;

struct image {
	char *ref;  /* as the pod names it */
	char *root; /* the folder */
	char *id;   /* imageID for the status: "corral-image://<root>" */
	struct strv entrypoint;
	struct strv cmd;
	struct strv env;
	char *working_dir; /* NULL: "/" */
	char *lower;	   /* overlayfs lowerdir: the root, or layers top first */
	char *name;	   /* status image: the normalized reference (store) */
	char *user;	   /* the config's User, NULL: unset (root) */
	struct strv ports; /* ExposedPorts: "80/tcp" */
};

/* Finds ref under dir. -ENOENT with a message naming the folders looked
 * for when there is no such image; -EINVAL for a reference that cannot
 * name one, or a configuration that does not parse. */
int image_resolve(const char *dir, const char *ref, struct image *out, struct error **err);
void image_clear(struct image *img);
/* The image of the store named ref (normalized): -ENOENT when it is not
 * there whole. */
int image_from_store(const char *store, const char *ref, struct image *out, struct error **err);
/* Whether path (absolute) is in one of the image's folders. */
bool image_has(const struct image *img, const char *path);
/* The config's User as ids (a name looked up in the image's /etc/passwd
 * and /etc/group): 0, or -ENOENT for a name not there. *gid -1: unset. */
int image_user_ids(const struct image *img, long long *uid, long long *gid, struct error **err);

/* One container's image manager state (zeroed at first). */
struct image_pull_state {
	uint64_t pull_id;	/* a pull asked for and not yet seen ending */
	uint64_t backoff_ms;	/* the pull back-off; 0: none */
	uint64_t not_before_ms; /* no pull before (loop_now_ms()) */
	bool pulled;		/* pulled for the coming start (Always) */
	bool said_backoff;	/* the BackOff event of this back-off is out */
	char *error;		/* the last pull's failure */
};

void image_pull_state_clear(struct image_pull_state *s);

/* An event image_get() asks for (about the container). */
struct image_event {
	const char *type;   /* "Normal", "Warning" */
	const char *reason; /* "Pulling", "Pulled", "Failed", "BackOff", ... */
	char *message;
};

#define IMAGE_EVENTS_MAX 2

struct image_wanted {
	const char *folders;	  /* the images folder */
	const char *store;	  /* the layer store */
	struct puller *puller;	  /* NULL: no pulls (only folders, the store) */
	const char *ref;	  /* the container's image */
	const char *policy;	  /* imagePullPolicy; NULL: Kubernetes' default */
	const struct strv *auths; /* imagePullSecrets' .dockerconfigjson */
	uint64_t now_ms;	  /* loop_now_ms() */
};

struct image_outcome {
	char *reason, *message; /* waiting: why (ContainerCreating while pulling) */
	uint64_t wake_ms;	/* waiting: look again after this; 0: when told */
	struct image_event ev[IMAGE_EVENTS_MAX];
	size_t nev;
};

void image_outcome_clear(struct image_outcome *o);

/* 0 with *img when the container can start now; 1 when it waits
 * (out->reason). Events to record in out->ev either way. */
int image_get(const struct image_wanted *w, struct image_pull_state *st, struct image *img,
	      struct image_outcome *out);
/* Go's time.Duration.String() of ms, truncated to milliseconds: "3.2s",
 * "512ms", "1m2.5s" (the kubelet's Pulled message). */
void image_go_duration(uint64_t ms, char out[32]);

#endif
