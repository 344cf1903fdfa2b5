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
 * The folder is never written: every container gets an overlay over it. */
#ifndef CORRAL_NODED_IMAGE_H
#define CORRAL_NODED_IMAGE_H

#include "error.h"
#include "strv.h"

struct image {
	char *ref;  /* as the pod names it */
	char *root; /* the folder */
	char *id;   /* imageID for the status: "corral-image://<root>" */
	struct strv entrypoint;
	struct strv cmd;
	struct strv env;
	char *working_dir; /* NULL: "/" */
};

/* Finds ref under dir. -ENOENT with a message naming the folders looked
 * for when there is no such image; -EINVAL for a reference that cannot
 * name one, or a configuration that does not parse. */
int image_resolve(const char *dir, const char *ref, struct image *out, struct error **err);
void image_clear(struct image *img);

#endif
