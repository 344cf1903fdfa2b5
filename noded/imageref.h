/* imageref.h: image references as Kubernetes and docker resolve them.
 *
 *   nginx                         docker.io/library/nginx:latest
 *   team/app:2.1                  docker.io/team/app:2.1
 *   127.0.0.1:5000/team/app       127.0.0.1:5000/team/app:latest
 *   localhost/app@sha256:HEX      localhost/app@sha256:HEX (no tag added)
 *
 * The first component is a registry when it has a '.' or a ':' or is
 * "localhost"; otherwise the registry is docker.io, and a one-component
 * name gets "library/". index.docker.io is docker.io. Pure. */
#ifndef CORRAL_NODED_IMAGEREF_H
#define CORRAL_NODED_IMAGEREF_H

#include <stdbool.h>

#include "error.h"

#define IMAGEREF_NAME_MAX 255 /* domain/path, as docker's reference package */

struct imageref {
	char *domain; /* "docker.io", "127.0.0.1:5000" */
	char *path;   /* "library/nginx" */
	char *tag;    /* "latest", or NULL with a digest and no tag */
	char *digest; /* "sha256:<64 hex>", or NULL */
};

/* Parses ref; -EINVAL with a message saying what is wrong. */
int imageref_parse(const char *ref, struct imageref *out, struct error **err);
void imageref_clear(struct imageref *r);

/* "domain/path" (the repository). */
char *imageref_repo(const struct imageref *r);
/* The whole normalized reference: "domain/path:tag", "domain/path@digest"
 * or "domain/path:tag@digest". */
char *imageref_string(const struct imageref *r);
/* Kubernetes' default imagePullPolicy for it: "Always" for a :latest or
 * untagged reference without a digest, "IfNotPresent" otherwise. */
const char *imageref_default_policy(const struct imageref *r);
/* Whether s is "sha256:" and 64 lower-case hex digits. */
bool imageref_is_digest(const char *s);

#endif
