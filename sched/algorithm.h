/* algorithm.h: one scheduling decision: which node a pod goes to, or why
 * it fits nowhere.
 *
 * As kube-scheduler: the filters run over the nodes, starting where the last
 * decision stopped, until enough feasible nodes are found (all of them below
 * 100 nodes; else percentage-of-nodes-to-score of them, at least 100, the
 * percentage 50 - nodes/125 but at least 5 when not configured); those are
 * scored and the best wins, ties broken at random. When none is feasible,
 * every node is filtered again to count the reasons. */
#ifndef CORRAL_SCHED_ALGORITHM_H
#define CORRAL_SCHED_ALGORITHM_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "objects.h"
#include "score.h"

struct sched_algo_opts {
	struct sched_weights weights;
	int percentage; /* of nodes to find feasible, 1..100; 0: adaptive */
};

struct sched_decision {
	struct sched_node *node; /* the winner, or NULL */
	char *message;		 /* when node is NULL: why (malloc'd) */
	size_t evaluated;	 /* nodes filtered */
	size_t feasible;	 /* nodes that passed */
};

struct sched_algo;
/* seed 0: seed from the kernel's random numbers. */
struct sched_algo *sched_algo_new(const struct sched_algo_opts *o, uint64_t seed);
void sched_algo_free(struct sched_algo *a);

void sched_algo_decide(struct sched_algo *a, const struct sched_cache *c, const struct sched_pod *p,
		       struct sched_decision *out);
void sched_decision_clear(struct sched_decision *d);

/* How many feasible nodes a decision looks for among nnodes. */
size_t sched_algo_nodes_to_find(const struct sched_algo *a, size_t nnodes);

#endif
