/* static.h: the kubelet's other two pod sources (seed 001): a folder of
 * manifests (static-pod-path, /etc/corral/manifests by default) followed
 * with inotify and rescanned every file-check-frequency, and a URL
 * (manifest-url) fetched with curl(1) every http-check-frequency. Each
 * Pod found there runs on this node as if bound to it (pods.h,
 * pods_static_set()), whether or not the mount answers; a manifest changed
 * replaces its pod, one removed stops it.
 *
 * A static pod is named NAME-NODE in its namespace ("default" when the
 * manifest names none), gets spec.nodeName, a uid that is a hash of its
 * source, node and manifest, and the annotations kubernetes.io/config.source
 * ("file" or "http"), kubernetes.io/config.hash (its uid) and
 * kubernetes.io/config.seen, as the kubelet gives them. */
#ifndef CORRAL_NODED_STATIC_H
#define CORRAL_NODED_STATIC_H

#include <stdint.h>
#include <time.h>

#include "error.h"
#include "loop.h"
#include "pods.h"
#include "ynode.h"

struct static_pods_opts {
	const char *path; /* the folder; NULL or "": none */
	const char *url;  /* NULL or "": none */
	const char *node; /* this node's name */
	uint64_t file_ms; /* rescan period of the folder */
	uint64_t http_ms; /* fetch period of the URL */
};

struct static_pods;

/* pods stays the caller's and must outlive the sources. */
struct static_pods *static_pods_new(struct loop *loop, const struct static_pods_opts *o,
				    struct pods *pods);
/* Reads the sources once and follows them. */
int static_pods_start(struct static_pods *s, struct error **err);
void static_pods_free(struct static_pods *s);

/* The static pod of manifest (a Pod) from source ("file", "http") at
 * origin (its path or URL), for node, seen at now; NULL with *err when the
 * manifest is not a Pod with a valid name. */
struct ynode *static_pod_build(const struct ynode *manifest, const char *node, const char *source,
			       const char *origin, time_t now, struct error **err);
/* The Pods of a fetched or read document: a Pod, or a List / PodList's
 * items; each one a borrowed pointer into doc. Returns how many (up to
 * max). */
size_t static_pods_of(const struct ynode *doc, const struct ynode **out, size_t max);

#endif
