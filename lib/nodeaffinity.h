/* nodeaffinity.h: whether a NodeSelector (a PersistentVolume's
 * spec.nodeAffinity.required, a pod's requiredDuringScheduling... terms)
 * allows a node, read straight from the YAML tree, as Kubernetes'
 * component-helpers' MatchNodeSelectorTerms: the terms are ORed, each
 * term's matchExpressions (on labels) and matchFields (metadata.name)
 * ANDed, an empty term matches nothing; In, NotIn, Exists, DoesNotExist,
 * Gt and Lt. Pure. */
#ifndef CORRAL_NODEAFFINITY_H
#define CORRAL_NODEAFFINITY_H

#include <stdbool.h>

#include "ynode.h"

/* required: a map with nodeSelectorTerms (NULL or null: every node). */
bool nodeaffinity_allows(const struct ynode *required, const char *node_name,
			 const struct ynode *labels);

#endif
