/* daemonset.h: the DaemonSet controller (Kubernetes' daemonset controller).
 *
 * A DaemonSet runs one pod on every node its pod template may run on: the
 * template's nodeSelector and required node affinity match the node, and
 * the pod tolerates the node's NoSchedule and NoExecute taints, with the
 * tolerations Kubernetes adds to every daemon pod (not-ready and
 * unreachable NoExecute; disk-, memory- and pid-pressure and unschedulable
 * NoSchedule; network-unavailable NoSchedule for hostNetwork pods). A
 * pod is bound to its node by a required node affinity on metadata.name
 * (matchFields), which corral-sched honours, so that the scheduler places
 * it as any other pod. Pods on nodes that no longer want them (a label
 * changed, an untolerated NoExecute taint, a node deleted) are deleted.
 *
 * Each template the DaemonSet has had is a ControllerRevision
 * <name>-<hash> (controllerrevisions/), numbered in the order the templates
 * were current; a template that comes back (a rollback through git) takes
 * its old revision with a new number. Pods carry the revision's hash in
 * their controller-revision-hash label. updateStrategy RollingUpdate
 * replaces old pods node by node within maxUnavailable (delete, then
 * create) or maxSurge (create, then delete once available); OnDelete
 * replaces a pod only once someone deletes it. Old revisions beyond
 * revisionHistoryLimit that no pod uses are deleted.
 *
 * The status: desiredNumberScheduled, currentNumberScheduled, numberReady,
 * numberAvailable, updatedNumberScheduled, numberMisscheduled,
 * numberUnavailable, observedGeneration; events SuccessfulCreate and
 * SuccessfulDelete (FailedCreate, FailedDelete). */
#ifndef CORRAL_CTRL_DAEMONSET_H
#define CORRAL_CTRL_DAEMONSET_H

#include <stdbool.h>
#include <stddef.h>

#include "ynode.h"

struct ctrl;
struct dsc;

#define DSC_HASH_LABEL	     "controller-revision-hash"
#define DSC_GENERATION_LABEL "pod-template-generation"

struct dsc *dsc_new(struct ctrl *c);
void dsc_free(struct dsc *d);

/* Decision logic, pure, for the tests. */

/* Adds the tolerations of a daemon pod to a pod spec (replacing an equal
 * key/operator/effect one). */
void dsc_add_daemon_tolerations(struct ynode *spec);
/* Replaces the spec's required node affinity with one term matching
 * metadata.name In [node] (Kubernetes'
 * ReplaceDaemonSetPodNodeNameNodeAffinity). */
void dsc_set_node_affinity(struct ynode *spec, const char *node);
/* The node a daemon pod is for: spec.nodeName, else the node its
 * required affinity's matchFields name; NULL if none. */
const char *dsc_pod_node(const struct ynode *pod);

/* Whether a pod of spec (the template's, tolerations added) should run on
 * node (*run) and, if one is there, may stay (*stay): the node's labels
 * and name match spec.nodeName, nodeSelector and the required node
 * affinity, and every NoSchedule (for *run) and NoExecute taint (for
 * both) is tolerated; spec.unschedulable counts as the taint
 * node.kubernetes.io/unschedulable:NoSchedule. */
void dsc_node_should_run(const struct ynode *spec, const struct ynode *node, bool *run, bool *stay);

/* maxSurge and maxUnavailable of a RollingUpdate DaemonSet for desired
 * nodes, both rounded up; 1 unavailable when both are 0 and there are
 * nodes. Both 0 for OnDelete. */
void dsc_rolling_bounds(const struct ynode *ds, int desired, int *max_surge, int *max_unavailable);

/* One node of a rolling update: its daemon pods of the current revision
 * (new) and of an older one (old), at most one each. */
struct dsc_slot {
	bool has_new, has_old;
	bool new_available, old_available;
	bool delete_old; /* the plan deletes the old pod */
	bool create_new; /* the plan creates a new pod (maxSurge) */
};

/* One step of Kubernetes' rollingUpdate over the slots (in order): with
 * max_surge 0, old pods are deleted while fewer than max_unavailable
 * nodes are unavailable (an unavailable old pod always); with max_surge,
 * new pods are created beside old ones on at most max_surge nodes at a
 * time (beside an unavailable old pod always), and an old pod is deleted
 * once the new one beside it is available; a node counts as surging until
 * its old pod is gone. Returns the number of writes planned. */
size_t dsc_rolling_update(struct dsc_slot *s, size_t n, int max_surge, int max_unavailable);

#endif
