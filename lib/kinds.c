/* kinds.c: the table of object kinds corral knows. It only describes kinds;
 * it never validates objects (fs/validate.c does) and holds no state.
 *
 * Old apiVersions are accepted where Kubernetes served the kind under them
 * and seed manifests still carry them. kind_info.api_versions holds three
 * versions and a NULL, so each kind keeps its canonical version plus the two
 * old ones most often met in the wild:
 *   Deployment        apps/v1, apps/v1beta1 (1.6-1.15), extensions/v1beta1
 *                     (1.2-1.15); apps/v1beta2 (1.8-1.15, rarely written by
 *                     hand) does not fit and is refused.
 *   ReplicaSet,
 *   DaemonSet         apps/v1, apps/v1beta2, extensions/v1beta1
 *   StatefulSet       apps/v1, apps/v1beta1, apps/v1beta2
 *   ControllerRevision apps/v1, apps/v1beta2, apps/v1beta1
 *   CronJob           batch/v1, batch/v1beta1 (1.8-1.24)
 *   HPA               autoscaling/v1, autoscaling/v2, autoscaling/v2beta2
 *   PDB               policy/v1, policy/v1beta1
 *   NetworkPolicy     networking.k8s.io/v1, extensions/v1beta1
 *   Ingress           networking.k8s.io/v1, networking.k8s.io/v1beta1,
 *                     extensions/v1beta1 (the old backend shape)
 *   Lease             coordination.k8s.io/v1, coordination.k8s.io/v1beta1
 *   Event             v1, events.k8s.io/v1, events.k8s.io/v1beta1
 *   IngressClass      networking.k8s.io/v1, networking.k8s.io/v1beta1
 *   PriorityClass     scheduling.k8s.io/v1, scheduling.k8s.io/v1beta1,
 *                     scheduling.k8s.io/v1alpha1
 *   PodMetrics,
 *   NodeMetrics       metrics.k8s.io/v1beta1 (metrics-server's only version)
 *   MetricValue       custom.metrics.k8s.io/v1beta2, custom.metrics.k8s.io/v1beta1
 * An object keeps the apiVersion it was written with; validate.c applies the
 * rules of that version where they differ (an optional selector before
 * apps/v1, the Ingress backend shape, HPA v1 against v2). */
#include "kinds.h"
#include "util.h"

#include <string.h>

static const struct kind_info kinds__table[] = {
    /* cluster-scoped */
    [KIND_NAMESPACE] = {"Namespace", "namespaces", {"v1"}, false, true, 0644, true},
    [KIND_NODE] = {"Node", "nodes", {"v1"}, false, true, 0644, false},
    [KIND_PERSISTENT_VOLUME] =
	{"PersistentVolume", "persistentvolumes", {"v1"}, false, true, 0644, false},

    /* core, namespaced */
    [KIND_POD] = {"Pod", "pods", {"v1"}, true, true, 0644, false},
    [KIND_REPLICATION_CONTROLLER] =
	{"ReplicationController", "replicationcontrollers", {"v1"}, true, true, 0644, false},
    [KIND_SERVICE] = {"Service", "services", {"v1"}, true, true, 0644, false},
    [KIND_ENDPOINTS] = {"Endpoints", "endpoints", {"v1"}, true, false, 0644, false},
    [KIND_CONFIG_MAP] = {"ConfigMap", "configmaps", {"v1"}, true, true, 0644, false},
    [KIND_SECRET] = {"Secret", "secrets", {"v1"}, true, true, 0600, false},
    [KIND_PERSISTENT_VOLUME_CLAIM] =
	{"PersistentVolumeClaim", "persistentvolumeclaims", {"v1"}, true, true, 0644, false},
    [KIND_RESOURCE_QUOTA] = {"ResourceQuota", "resourcequotas", {"v1"}, true, true, 0644, false},
    [KIND_SERVICE_ACCOUNT] = {"ServiceAccount", "serviceaccounts", {"v1"}, true, true, 0644, false},
    [KIND_LIMIT_RANGE] = {"LimitRange", "limitranges", {"v1"}, true, true, 0644, false},
    [KIND_EVENT] = {"Event",
		    "events",
		    {"v1", "events.k8s.io/v1", "events.k8s.io/v1beta1"},
		    true,
		    false,
		    0644,
		    false},

    /* apps */
    [KIND_REPLICA_SET] = {"ReplicaSet",
			  "replicasets",
			  {"apps/v1", "apps/v1beta2", "extensions/v1beta1"},
			  true,
			  true,
			  0644,
			  false},
    [KIND_DEPLOYMENT] = {"Deployment",
			 "deployments",
			 {"apps/v1", "apps/v1beta1", "extensions/v1beta1"},
			 true,
			 true,
			 0644,
			 false},
    [KIND_DAEMON_SET] = {"DaemonSet",
			 "daemonsets",
			 {"apps/v1", "apps/v1beta2", "extensions/v1beta1"},
			 true,
			 true,
			 0644,
			 false},
    [KIND_STATEFUL_SET] = {"StatefulSet",
			   "statefulsets",
			   {"apps/v1", "apps/v1beta1", "apps/v1beta2"},
			   true,
			   true,
			   0644,
			   false},
    [KIND_CONTROLLER_REVISION] = {"ControllerRevision",
				  "controllerrevisions",
				  {"apps/v1", "apps/v1beta2", "apps/v1beta1"},
				  true,
				  true,
				  0644,
				  false},

    /* batch, autoscaling, policy, networking, coordination */
    [KIND_JOB] = {"Job", "jobs", {"batch/v1"}, true, true, 0644, false},
    [KIND_CRON_JOB] =
	{"CronJob", "cronjobs", {"batch/v1", "batch/v1beta1"}, true, true, 0644, false},
    [KIND_HORIZONTAL_POD_AUTOSCALER] = {"HorizontalPodAutoscaler",
					"horizontalpodautoscalers",
					{"autoscaling/v1", "autoscaling/v2", "autoscaling/v2beta2"},
					true,
					true,
					0644,
					false},
    [KIND_POD_DISRUPTION_BUDGET] = {"PodDisruptionBudget",
				    "poddisruptionbudgets",
				    {"policy/v1", "policy/v1beta1"},
				    true,
				    true,
				    0644,
				    false},
    [KIND_NETWORK_POLICY] = {"NetworkPolicy",
			     "networkpolicies",
			     {"networking.k8s.io/v1", "extensions/v1beta1"},
			     true,
			     true,
			     0644,
			     false},
    [KIND_INGRESS] = {"Ingress",
		      "ingresses",
		      {"networking.k8s.io/v1", "networking.k8s.io/v1beta1", "extensions/v1beta1"},
		      true,
		      true,
		      0644,
		      false},
    [KIND_LEASE] = {"Lease",
		    "leases",
		    {"coordination.k8s.io/v1", "coordination.k8s.io/v1beta1"},
		    true,
		    false,
		    0644,
		    false},

    /* networking, scheduling: cluster-scoped */
    [KIND_INGRESS_CLASS] = {"IngressClass",
			    "ingressclasses",
			    {"networking.k8s.io/v1", "networking.k8s.io/v1beta1"},
			    false,
			    true,
			    0644,
			    false},
    [KIND_PRIORITY_CLASS] = {"PriorityClass",
			     "priorityclasses",
			     {"scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1",
			      "scheduling.k8s.io/v1alpha1"},
			     false,
			     true,
			     0644,
			     false},
    [KIND_STORAGE_CLASS] = {"StorageClass",
			    "storageclasses",
			    {"storage.k8s.io/v1", "storage.k8s.io/v1beta1"},
			    false,
			    true,
			    0644,
			    false},

    /* metrics: live state written by the nodes (PodMetrics, NodeMetrics)
     * and by anyone (MetricValue, for the HPA's Pods and Object metrics);
     * never in the history */
    [KIND_POD_METRICS] =
	{"PodMetrics", "podmetrics", {"metrics.k8s.io/v1beta1"}, true, false, 0644, false},
    [KIND_NODE_METRICS] =
	{"NodeMetrics", "nodemetrics", {"metrics.k8s.io/v1beta1"}, false, false, 0644, false},
    [KIND_METRIC_VALUE] = {"MetricValue",
			   "metrics",
			   {"custom.metrics.k8s.io/v1beta2", "custom.metrics.k8s.io/v1beta1"},
			   true,
			   false,
			   0644,
			   false},
};

_Static_assert(ARRAY_SIZE(kinds__table) == KIND_COUNT, "a row for every kind_id");

const struct kind_info *kinds_by_plural(const char *plural)
{
	if (!plural)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(kinds__table); i++)
		if (strcmp(kinds__table[i].plural, plural) == 0)
			return &kinds__table[i];
	return NULL;
}

const struct kind_info *kinds_by_kind(const char *kind)
{
	if (!kind)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(kinds__table); i++)
		if (strcmp(kinds__table[i].kind, kind) == 0)
			return &kinds__table[i];
	return NULL;
}

bool kinds_api_version_ok(const struct kind_info *k, const char *api_version)
{
	if (!k || !api_version)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(k->api_versions) && k->api_versions[i]; i++)
		if (strcmp(k->api_versions[i], api_version) == 0)
			return true;
	return false;
}

size_t kinds_count(void)
{
	return ARRAY_SIZE(kinds__table);
}

const struct kind_info *kinds_at(size_t i)
{
	return i < ARRAY_SIZE(kinds__table) ? &kinds__table[i] : NULL;
}

enum kind_id kinds_id(const struct kind_info *k)
{
	return (enum kind_id)(k - kinds__table);
}
