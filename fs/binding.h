/* binding.h: the pods/binding subresource over the pod's own file.
 *
 * A Binding (apiVersion v1, kind Binding, as Kubernetes' scheduler POSTs to
 * pods/<name>/binding) written to namespaces/<ns>/pods/<name>.yaml binds
 * that pod instead of replacing it: the write path takes the stored pod,
 * sets spec.nodeName to target.name and its PodScheduled condition to
 * True, and goes on with that pod as if it had been written whole. So a
 * scheduler sends a few lines instead of the pod, and every watcher of
 * the pod's file sees the close of that file as for any other change. As
 * in Kubernetes, metadata.uid and metadata.resourceVersion, when given,
 * must be the pod's, and a pod that is bound already or being deleted
 * cannot be bound: each of those is a conflict (EAGAIN). */
#ifndef CORRAL_FS_BINDING_H
#define CORRAL_FS_BINDING_H

#include <stddef.h>

#include "error.h"
#include "write.h"

/* If text is a Binding written to a pod, *pod is the pod it makes of the
 * stored one (old_yaml, NULL when there is none) and *old the stored one as
 * parsed, both the caller's, and 1 is returned; 0 (nothing set) when it is
 * anything else; -errno with err set when it cannot bind. */
int binding_apply(const struct write_target *t, const char *text, size_t len, const char *old_yaml,
		  size_t old_len, struct ynode **pod, struct ynode **old, struct error **err);

#endif
