/* namespace.h: the namespace controller (Kubernetes' namespace controller,
 * pkg/controller/namespace/deletion). A Namespace being deleted (phase
 * Terminating, the kubernetes finalizer in spec.finalizers, which
 * corral-fs gives it at its deletion) has everything in it deleted, kind
 * by kind, owners before what they own (nsc_delete_order()); an object
 * with finalizers is waited for, not forced. Its status conditions say
 * how far it is, as Kubernetes' do: NamespaceDeletionDiscoveryFailure,
 * NamespaceDeletionGroupVersionParsingFailure,
 * NamespaceDeletionContentFailure, NamespaceContentRemaining and
 * NamespaceFinalizersRemaining. Once nothing is left, the kubernetes
 * finalizer is removed and corral-fs deletes the Namespace and its
 * folder.
 *
 * It reads the shared informers of every namespaced kind, and hears of
 * every deletion in a Terminating namespace, so it waits without
 * polling. */
#ifndef CORRAL_CTRL_NAMESPACE_H
#define CORRAL_CTRL_NAMESPACE_H

#include <stddef.h>

#include "kinds.h"
#include "ynode.h"

struct ctrl;
struct nsc;

struct nsc *nsc_new(struct ctrl *c);
void nsc_free(struct nsc *n);

/* Pure parts, for the tests. */

/* The order a namespace's kinds are deleted in: those that make others
 * first (Deployments, StatefulSets, DaemonSets, CronJobs,
 * ReplicationControllers), then ReplicaSets and Jobs, then Pods, then
 * the rest in table order, Events last (they tell of the deletion).
 * Sorts kinds (n of them) in place, stable. */
void nsc_delete_order(const struct kind_info **kinds, size_t n);

/* What one pass over a namespace found. */
struct nsc_totals {
	size_t nkinds;		/* kinds with objects left */
	const char **resources; /* their "plural.group" ("pods.", "deployments.apps") */
	size_t *counts;		/* objects left of each */
	size_t nfinalizers;	/* finalizers that objects left still carry */
	const char **finalizers;
	size_t *fcounts;     /* objects carrying each */
	size_t failed;	     /* deletions refused this pass */
	const char *failure; /* the first refusal's message */
};

/* Sets the five conditions of status (a mapping) from t, at now, as
 * Kubernetes' deletion's conditionUpdater does. */
void nsc_set_conditions(struct ynode *status, const struct nsc_totals *t, const char *now);

#endif
