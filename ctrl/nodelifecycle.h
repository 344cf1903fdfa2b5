/* nodelifecycle.h: the node lifecycle controller (row "nodelifecycle"), as
 * Kubernetes' pkg/controller/nodelifecycle.
 *
 * A node's heartbeat is its Lease in kube-node-lease (spec.renewTime) and
 * its Ready condition's lastHeartbeatTime: the controller notes, on its own
 * monotonic clock, when either last changed (clock skew between nodes does
 * not count), and a node that has shown neither for
 * [ctrl] node-monitor-grace-period (40 s) gets its conditions Unknown
 * (reason NodeStatusUnknown, "Kubelet stopped posting node status.") and
 * the pods on it the Ready condition False, so that Endpoints drop them at
 * once. A node's grace is never less than one and a half of the interval
 * between its last two Lease renewals (nodelc_grace_ms()).
 *
 * Taints follow the node's conditions. NoSchedule ones at once
 * (TaintNodesByCondition): node.kubernetes.io/not-ready (Ready False),
 * unreachable (Ready Unknown), memory-pressure, disk-pressure, pid-pressure,
 * network-unavailable, and unschedulable while spec.unschedulable is true.
 * The NoExecute not-ready and unreachable taints, which make the taint
 * manager (taint.h) evict, are added through a queue per zone (the
 * topology.kubernetes.io region and zone labels) drained at the zone's rate:
 * [ctrl] node-eviction-rate (0.1 nodes a second) while fewer than
 * unhealthy-zone-threshold (0.55) of the zone's nodes, or no more than two,
 * are not ready (Normal); secondary-node-eviction-rate (0.01) in a
 * partially disrupted zone of more than large-cluster-size-threshold (50)
 * nodes, 0 in a smaller one; and when every zone is fully disrupted (no
 * node ready) nothing is tainted and the NoExecute taints are taken off,
 * as Kubernetes does when it must be the one that is cut off. A node that
 * is Ready again loses the taints at once. Every taint is written with
 * timeAdded; taints of others are kept. */
#ifndef CORRAL_CTRL_NODELIFECYCLE_H
#define CORRAL_CTRL_NODELIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ynode.h"

#define NODELC_TAINT_NOT_READY		 "node.kubernetes.io/not-ready"
#define NODELC_TAINT_UNREACHABLE	 "node.kubernetes.io/unreachable"
#define NODELC_TAINT_UNSCHEDULABLE	 "node.kubernetes.io/unschedulable"
#define NODELC_TAINT_MEMORY_PRESSURE	 "node.kubernetes.io/memory-pressure"
#define NODELC_TAINT_DISK_PRESSURE	 "node.kubernetes.io/disk-pressure"
#define NODELC_TAINT_PID_PRESSURE	 "node.kubernetes.io/pid-pressure"
#define NODELC_TAINT_NETWORK_UNAVAILABLE "node.kubernetes.io/network-unavailable"
#define NODELC_LEASE_NAMESPACE		 "kube-node-lease"
#define NODELC_UNKNOWN_REASON		 "NodeStatusUnknown"
#define NODELC_UNKNOWN_MESSAGE		 "Kubelet stopped posting node status."
#define NODELC_NEVER_REASON		 "NodeStatusNeverUpdated"
#define NODELC_NEVER_MESSAGE		 "Kubelet never posted node status."

struct ctrl;
struct nodelc;

/* What a node's Ready condition says. */
enum nodelc_ready {
	NODELC_READY,
	NODELC_NOT_READY, /* False */
	NODELC_UNKNOWN,	  /* Unknown, or no Ready condition */
};

enum nodelc_zone_state {
	NODELC_ZONE_INITIAL,
	NODELC_ZONE_NORMAL,
	NODELC_ZONE_PARTIAL, /* PartialDisruption */
	NODELC_ZONE_FULL,    /* FullDisruption */
};

/* The rates and thresholds of [ctrl]. */
struct nodelc_rates {
	double eviction_rate;		/* nodes a second, in a Normal zone */
	double secondary_eviction_rate; /* in a large partially disrupted one */
	double unhealthy_threshold;	/* fraction of nodes not ready */
	int large_cluster_threshold;	/* nodes */
};

/* A token bucket of burst 1 (client-go's token bucket limiter as the
 * controller makes it): a full bucket at first and after a change of
 * rate; rate 0 never gives one. */
struct nodelc_bucket {
	double rate;	  /* tokens a second */
	double tokens;	  /* 0..1 */
	uint64_t last_ms; /* when tokens was computed */
};

/* What the taint manager and the tests read from a node. */
enum nodelc_ready nodelc_node_ready(const struct ynode *node);
/* The zone key of a node: "region\x1fzone" from the topology labels
 * (failure-domain.beta.kubernetes.io ones as well); "" without them.
 * malloc'd. */
char *nodelc_zone_key(const struct ynode *node);

/* ComputeZoneState: no node ready of some: Full; more than two not ready
 * and at least threshold of them: Partial; else Normal. */
enum nodelc_zone_state nodelc_zone_state(int ready, int not_ready, double threshold);
const char *nodelc_zone_state_name(enum nodelc_zone_state s);
/* The rate of a zone of size nodes in state s, every zone being fully
 * disrupted or not. */
double nodelc_zone_rate(enum nodelc_zone_state s, int size, bool all_full,
			const struct nodelc_rates *r);

void nodelc_bucket_init(struct nodelc_bucket *b, double rate, uint64_t now_ms);
/* A token now (true), or false and *wait_ms (may be NULL) till the next
 * one (UINT64_MAX: never, rate 0). */
bool nodelc_bucket_take(struct nodelc_bucket *b, uint64_t now_ms, uint64_t *wait_ms);

/* The grace period a node gets: grace_ms, or one and a half of the
 * interval between its last two Lease renewals when that is longer (a
 * grace shorter than the heartbeat, which would take every node for gone
 * between two renewals). */
uint64_t nodelc_grace_ms(uint64_t grace_ms, uint64_t renew_interval_ms);
/* Which NoExecute taint a node should have: NULL (none: Ready), or one of
 * NODELC_TAINT_NOT_READY and NODELC_TAINT_UNREACHABLE. */
const char *nodelc_noexecute_key(const struct ynode *node);
/* Whether node's spec.taints has key with effect. */
bool nodelc_has_taint(const struct ynode *node, const char *key, const char *effect);

/* What to do to a node's NoExecute taints. */
enum nodelc_noexec {
	NODELC_NOEXEC_KEEP,	 /* leave them */
	NODELC_NOEXEC_SET,	 /* the one nodelc_noexecute_key() names, not the other */
	NODELC_NOEXEC_CLEAR,	 /* neither */
	NODELC_NOEXEC_SWAP_ONLY, /* SET, but only if it has the other one already */
};
/* Brings node's spec.taints to what its conditions and spec.unschedulable
 * ask for: the NoSchedule ones above, the NoExecute ones as noexec says;
 * taints the controller does not own are kept, ones it keeps keep their
 * timeAdded, new ones get now (RFC 3339). Returns whether it changed
 * anything. Pure. */
bool nodelc_apply_taints(struct ynode *node, enum nodelc_noexec noexec, const char *now);
/* Sets node's conditions Unknown, as the controller does to a node whose
 * heartbeat is older than the grace period: Ready (made when missing,
 * "never posted"), MemoryPressure, DiskPressure and PIDPressure, with
 * lastTransitionTime now where the status changes; heartbeat times kept.
 * Returns whether it changed anything. Pure. */
bool nodelc_mark_unknown(struct ynode *node, const char *now);
/* Sets a pod's Ready condition False (lastTransitionTime now), as
 * MarkPodsNotReady does; whether it changed. Pure. */
bool nodelc_mark_pod_not_ready(struct ynode *pod, const char *now);

struct nodelc *nodelc_new(struct ctrl *c);
void nodelc_free(struct nodelc *n);

#endif
