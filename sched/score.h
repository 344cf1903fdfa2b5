/* score.h: the scores, which rank the nodes that passed the filters.
 *
 * Each score gives a node 0 to 100 (higher is better); a node's total is
 * the sum of the scores times their weights, and the highest total wins,
 * ties broken at random. As in kube-scheduler:
 *
 *   least-allocated       the free share of cpu and memory once the pod is
 *                         on the node, counting 100m and 200Mi for what a
 *                         container does not request (weight 1)
 *   balanced-allocation   how evenly cpu and memory would be used: 100 times
 *                         one minus the standard deviation of the two used
 *                         shares (weight 1)
 *   node-affinity         the sum of the weights of the preferred node
 *                         affinity terms the node matches, scaled so that
 *                         the best node gets 100 (weight 2)
 *   taint-toleration      fewer untolerated PreferNoSchedule taints is
 *                         better: 100 for none, scaled against the node
 *                         with most (weight 3)
 *   spread                replicas of one owner (the controller in
 *                         ownerReferences) on as many nodes as possible:
 *                         100 times (max - here) / max, max the most replicas
 *                         on any candidate node (weight 2) */
#ifndef CORRAL_SCHED_SCORE_H
#define CORRAL_SCHED_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "objects.h"

#define SCHED_MAX_SCORE 100

struct sched_weights {
	int least_allocated;
	int balanced_allocation;
	int node_affinity;
	int taint_toleration;
	int spread;
};

#define SCHED_WEIGHTS_DEFAULT                                                                      \
	((struct sched_weights){.least_allocated = 1,                                              \
				.balanced_allocation = 1,                                          \
				.node_affinity = 2,                                                \
				.taint_toleration = 3,                                             \
				.spread = 2})

/* Scores already on the 0..100 scale. */
int64_t sched_score_least_allocated(const struct sched_pod *p, const struct sched_node *n);
int64_t sched_score_balanced_allocation(const struct sched_pod *p, const struct sched_node *n);
/* Raw counts, put on the scale by sched_score_normalize(). */
int64_t sched_score_node_affinity_raw(const struct sched_pod *p, const struct sched_node *n);
int64_t sched_score_taint_raw(const struct sched_pod *p, const struct sched_node *n);
int64_t sched_score_spread_raw(const struct sched_pod *p, const struct sched_node *n);
/* Kubernetes' DefaultNormalizeScore: s * 100 / max, or 100 - that when
 * reverse (all 100 when every raw count is 0 and reverse). */
void sched_score_normalize(int64_t *scores, size_t n, bool reverse);

/* The weighted totals of the n nodes into totals[]. */
void sched_score_nodes(const struct sched_pod *p, struct sched_node *const *nodes, size_t n,
		       const struct sched_weights *w, int64_t *totals);

#endif
