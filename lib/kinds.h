/* kinds.h: the table of object kinds corral knows: kind name, folder
 * (lower-case plural), accepted apiVersions, scope, whether declared
 * changes of the kind enter the git history, and how corral-fs shows its
 * files.
 *
 * Each row has a fixed position, named by enum kind_id (the table is built
 * with designated initializers, so a position always names its row). Code
 * that means one kind says so with the id (kinds_id(k) == KIND_SECRET), not
 * by comparing names, and tables kept beside this one by other modules (the
 * validation rules in corral-fs) are arrays indexed by kind_id, joined to
 * this one at compile time. */
#ifndef CORRAL_KINDS_H
#define CORRAL_KINDS_H

#include <stdbool.h>
#include <stddef.h>

enum kind_id {
	KIND_NAMESPACE,
	KIND_NODE,
	KIND_PERSISTENT_VOLUME,
	KIND_POD,
	KIND_REPLICATION_CONTROLLER,
	KIND_SERVICE,
	KIND_ENDPOINTS,
	KIND_CONFIG_MAP,
	KIND_SECRET,
	KIND_PERSISTENT_VOLUME_CLAIM,
	KIND_RESOURCE_QUOTA,
	KIND_SERVICE_ACCOUNT,
	KIND_LIMIT_RANGE,
	KIND_EVENT,
	KIND_REPLICA_SET,
	KIND_DEPLOYMENT,
	KIND_DAEMON_SET,
	KIND_STATEFUL_SET,
	KIND_CONTROLLER_REVISION,
	KIND_JOB,
	KIND_CRON_JOB,
	KIND_HORIZONTAL_POD_AUTOSCALER,
	KIND_POD_DISRUPTION_BUDGET,
	KIND_NETWORK_POLICY,
	KIND_INGRESS,
	KIND_LEASE,
	KIND_INGRESS_CLASS,
	KIND_PRIORITY_CLASS,
	KIND_STORAGE_CLASS,
	KIND_POD_METRICS,
	KIND_NODE_METRICS,
	KIND_METRIC_VALUE,
	KIND_COUNT /* not a kind: the number of rows */
};

struct kind_info {
	const char *kind;	     /* "Pod" */
	const char *plural;	     /* "pods": the folder name */
	const char *api_versions[4]; /* accepted, first is canonical; NULL-ended */
	bool namespaced;	     /* lives under namespaces/<ns>/ */
	bool history;		     /* declared changes become commits */
	unsigned int file_mode;	     /* permission bits of its object files */
	bool namespace_object;	     /* an object is a namespace: namespaces/<name>.yaml
				      * and the folder namespaces/<name>/ go together */
};

/* On an object a HorizontalPodAutoscaler scales (a Deployment,
 * ReplicaSet, ReplicationController or StatefulSet): the HPA's name. The
 * history then leaves its spec.replicas out (corral-tree(5)). */
#define KINDS_AUTOSCALED_ANNOTATION "autoscaling.corral.io/horizontal-pod-autoscaler"

const struct kind_info *kinds_by_plural(const char *plural);
const struct kind_info *kinds_by_kind(const char *kind);
/* Whether apiVersion is one the kind accepts. */
bool kinds_api_version_ok(const struct kind_info *k, const char *api_version);
size_t kinds_count(void); /* KIND_COUNT */
/* The row at position i (a kind_id), or NULL past the end. */
const struct kind_info *kinds_at(size_t i);
/* k's position in the table; k must be a row of it. */
enum kind_id kinds_id(const struct kind_info *k);

#endif
