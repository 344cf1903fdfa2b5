/* hpa.h: the HorizontalPodAutoscaler controller (Kubernetes'
 * podautoscaler: its replica calculator and its normalization by
 * behavior).
 *
 * Every sync period (horizontal-pod-autoscaler-sync-period, 15 s) and on
 * every change of an HPA, the controller reads its target's scale
 * (spec.replicas and selector of a Deployment, ReplicaSet,
 * ReplicationController or StatefulSet), the target's pods, their
 * PodMetrics (metrics.k8s.io, written by corral-noded) and the
 * MetricValues (custom.metrics.k8s.io, namespaces/NS/metrics/, written by
 * anyone) its Pods and Object metrics name; computes the replica count
 * each metric proposes, takes the largest, stabilizes and limits it as
 * Kubernetes does, writes the target's spec.replicas when it changes
 * (with the annotation HPA_ANNOTATION, so that the history leaves the
 * autoscaler's counts out: corral-tree(5)), records SuccessfulRescale, and
 * writes the HPA's status: currentReplicas, desiredReplicas,
 * lastScaleTime, currentMetrics (v2) or currentCPUUtilizationPercentage
 * (v1), and the conditions AbleToScale, ScalingActive and ScalingLimited.
 * An autoscaling/v1 object is read as Kubernetes converts it to v2 (its
 * targetCPUUtilizationPercentage is one Resource cpu Utilization metric,
 * 80% when absent).
 *
 * The arithmetic is pure functions, below, for the tests; values are
 * milli-units (quantity.h) and times seconds since the epoch. This file
 * must never write a target's anything but spec.replicas and that
 * annotation. */
#ifndef CORRAL_CTRL_HPA_H
#define CORRAL_CTRL_HPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kinds.h"
#include "ynode.h"

/* On a target the autoscaler scales: the HPA's name. */
#define HPA_ANNOTATION KINDS_AUTOSCALED_ANNOTATION

#define HPA_TOLERANCE		0.1
#define HPA_CPU_INIT_PERIOD_S	300 /* --horizontal-pod-autoscaler-cpu-initialization-period */
#define HPA_READINESS_DELAY_S	30  /* --horizontal-pod-autoscaler-initial-readiness-delay */
#define HPA_DOWNSCALE_WINDOW_S	300
#define HPA_MAX_POLICIES	8
#define HPA_MAX_RECOMMENDATIONS 64
#define HPA_MAX_SCALE_EVENTS	64

struct ctrl;
struct hpac;

struct hpac *hpac_new(struct ctrl *c);
void hpac_free(struct hpac *h);

/* ---- the replica calculator ---------------------------------------------- */

/* The calculator's settings and clock. */
struct hpa_calc {
	double tolerance;	   /* 0.1 */
	int64_t cpu_init_s;	   /* 300 */
	int64_t readiness_delay_s; /* 30 */
	int64_t now;
};

/* One pod of the target, as the calculator sees it. */
struct hpa_pod {
	const char *name;
	bool deleting;	     /* metadata.deletionTimestamp */
	const char *phase;   /* status.phase; NULL: Pending */
	bool has_ready;	     /* a Ready condition */
	bool ready;	     /* it is True */
	int64_t ready_since; /* its lastTransitionTime, -1 unknown */
	int64_t start;	     /* status.startTime, -1 none */
	bool has_metric;
	int64_t value;		     /* the metric (milli) */
	int64_t metric_time;	     /* its timestamp */
	int64_t metric_window;	     /* its window, seconds */
	bool has_request;	     /* every container counted asks for the resource */
	int64_t request;	     /* their sum (milli) */
	const char *missing_request; /* the container that asks for none */
};

/* A resource Utilization target (Kubernetes' GetResourceReplicas): the
 * replica count, the current utilization (percent of requests) and the
 * average value. cpu: the CPU readiness rules apply. Negative with *err
 * when no count can be computed. */
int hpa_resource_replicas(const struct hpa_calc *c, int current, const struct hpa_pod *pods,
			  size_t n, const char *resource, bool cpu, long long target_util,
			  int *replicas, long long *util, int64_t *avg, struct error **err);
/* An AverageValue target over the pods (Resource AverageValue, Pods
 * metrics: calcPlainMetricReplicas): count and the average value. */
int hpa_plain_replicas(const struct hpa_calc *c, int current, const struct hpa_pod *pods, size_t n,
		       bool cpu, int64_t target_avg, int *replicas, int64_t *avg,
		       struct error **err);
/* An Object metric: a Value target against the ready pods
 * (GetObjectMetricReplicas), or an AverageValue one per replica
 * (GetObjectPerPodMetricReplicas, *usage the per-replica value). */
int hpa_object_replicas(const struct hpa_calc *c, int current, int ready_pods, int64_t value,
			int64_t target);
int hpa_object_avg_replicas(const struct hpa_calc *c, int current, int64_t value,
			    int64_t target_avg, int64_t *usage);

/* ---- behavior, stabilization and limits ---------------------------------- */

enum hpa_select { HPA_SELECT_MAX, HPA_SELECT_MIN, HPA_SELECT_DISABLED };
enum hpa_policy_type { HPA_POLICY_PODS, HPA_POLICY_PERCENT };

struct hpa_policy {
	enum hpa_policy_type type;
	int value;
	int period_s;
};

/* HPAScalingRules, defaulted as Kubernetes defaults them. */
struct hpa_rules {
	enum hpa_select select;
	int64_t window_s;
	struct hpa_policy policies[HPA_MAX_POLICIES];
	size_t npolicies;
};

struct hpa_behavior {
	struct hpa_rules up, down;
};

/* spec.behavior (a mapping) defaulted: scale up at once by the larger of
 * 4 pods or 100% per 15 s, scale down by up to 100% per 15 s after a
 * window of down_window_s (the controller's downscale stabilization). */
void hpa_behavior_parse(const struct ynode *behavior, int64_t down_window_s,
			struct hpa_behavior *out);

/* What the controller remembers of one HPA between syncs. */
struct hpa_memory {
	struct {
		int64_t t;
		int replicas;
	} recs[HPA_MAX_RECOMMENDATIONS]; /* recommendations */
	size_t nrecs;
	struct {
		int64_t t;
		int change;
	} up[HPA_MAX_SCALE_EVENTS], down[HPA_MAX_SCALE_EVENTS];
	size_t nup, ndown;
};

/* The conditions a normalization sets. */
struct hpa_verdict {
	const char *able_reason; /* AbleToScale True */
	const char *able_message;
	bool limited; /* ScalingLimited */
	const char *limited_reason;
	const char *limited_message;
};

/* Kubernetes' normalizeDesiredReplicas (b NULL: the HPA has no
 * behavior; down_window_s is then the stabilization window) or
 * normalizeDesiredReplicasWithBehaviors: the stabilized and limited
 * count. Records the recommendation in m. */
int hpa_normalize(struct hpa_memory *m, const struct hpa_behavior *b, int64_t down_window_s,
		  int64_t now, int current, int desired, int min, int max, struct hpa_verdict *v);
/* Remembers a rescale from prev to next for the behavior's rate limits. */
void hpa_record_scale(struct hpa_memory *m, const struct hpa_behavior *b, int64_t now, int prev,
		      int next);

#endif
