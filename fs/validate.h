/* validate.h: per-kind validation and defaulting of the objects written to
 * the tree (the part of kube-apiserver's registry that checks and defaults
 * a create or update). Pure functions over a YAML tree: no I/O, no store. */
#ifndef CORRAL_VALIDATE_H
#define CORRAL_VALIDATE_H

#include "error.h"
#include "kinds.h"
#include "ynode.h"

/* Validates obj, the document written into k's folder, then defaults it in
 * place (what `kubectl get -o yaml` shows: restartPolicy, imagePullPolicy,
 * Service targetPort, Deployment strategy, ...). old is the stored object on
 * an update, NULL on a create; update rules (immutable fields, a pod's spec)
 * compare against it, and values the server allocated that the new document
 * leaves out (a Service's clusterIP and nodePorts, a Job's generated
 * selector) are carried over from it as Kubernetes does.
 *
 * Returns 0, or -EINVAL with a message in Kubernetes' wording, each error
 * naming the field and the rule:
 *   Pod "web" is invalid: spec.containers[0].image: Required value
 *   Pod "web" is invalid: [spec.containers[1].name: Duplicate value: "a", ...]
 * On failure obj is left exactly as written. Server-set metadata (uid,
 * resourceVersion, creationTimestamp, generation) and status are the
 * caller's; unknown fields are kept. */
int validate_object(const struct kind_info *k, struct ynode *obj, const struct ynode *old,
		    struct error **err);

#endif
