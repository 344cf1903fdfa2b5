/* algorithm.c: filter, score, pick (see algorithm.h). A decision reads the
 * cache and never changes it: the caller assumes the pod on the winner. */
#include "algorithm.h"
#include "filter.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define SCHED_ALGO_MIN_FEASIBLE	  100
#define SCHED_ALGO_MIN_PERCENTAGE 5

struct sched_algo {
	struct sched_algo_opts opts;
	uint64_t rng;		      /* xorshift64* state, never 0 */
	size_t next_start;	      /* where the next decision starts filtering */
	struct sched_node **feasible; /* scratch, one slot per node */
	int64_t *totals;
	size_t cap;
};

static uint64_t sched_algo__random(struct sched_algo *a)
{
	a->rng ^= a->rng >> 12;
	a->rng ^= a->rng << 25;
	a->rng ^= a->rng >> 27;
	return a->rng * 2685821657736338717ULL;
}

struct sched_algo *sched_algo_new(const struct sched_algo_opts *o, uint64_t seed)
{
	struct sched_algo *a = xcalloc(1, sizeof(*a));
	a->opts = *o;
	if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)(uintptr_t)a ^ 0x9e3779b97f4a7c15ULL;
	a->rng = seed ? seed : 1;
	return a;
}

void sched_algo_free(struct sched_algo *a)
{
	if (!a)
		return;
	free(a->feasible);
	free(a->totals);
	free(a);
}

void sched_decision_clear(struct sched_decision *d)
{
	free(d->message);
	memset(d, 0, sizeof(*d));
}

size_t sched_algo_nodes_to_find(const struct sched_algo *a, size_t nnodes)
{
	if (nnodes < SCHED_ALGO_MIN_FEASIBLE)
		return nnodes;
	long pct = a->opts.percentage;
	if (pct <= 0) {
		pct = 50 - (long)(nnodes / 125);
		if (pct < SCHED_ALGO_MIN_PERCENTAGE)
			pct = SCHED_ALGO_MIN_PERCENTAGE;
	}
	if (pct >= 100)
		return nnodes;
	size_t n = nnodes * (size_t)pct / 100;
	return n < SCHED_ALGO_MIN_FEASIBLE ? SCHED_ALGO_MIN_FEASIBLE : n;
}

void sched_algo_decide(struct sched_algo *a, const struct sched_cache *c, const struct sched_pod *p,
		       struct sched_decision *out)
{
	memset(out, 0, sizeof(*out));
	size_t nnodes = sched_cache_node_count(c);
	if (!nnodes) {
		out->message = xstrdup(SCHED_NO_NODES);
		return;
	}
	if (a->cap < nnodes) {
		a->cap = nnodes;
		a->feasible = xrealloc(a->feasible, a->cap * sizeof(*a->feasible));
		a->totals = xrealloc(a->totals, a->cap * sizeof(*a->totals));
	}
	struct sched_cycle *cy = sched_cycle_new(c, p);
	size_t want = sched_algo_nodes_to_find(a, nnodes);
	size_t start = a->next_start % nnodes, nf = 0, i;
	for (i = 0; i < nnodes && nf < want; i++) {
		struct sched_node *n = sched_cache_node_at(c, (start + i) % nnodes);
		if (sched_filter_node(cy, n, NULL))
			a->feasible[nf++] = n;
	}
	a->next_start = (start + i) % nnodes;
	out->evaluated = i;
	out->feasible = nf;
	if (!nf) {
		/* Count every node's reasons, as the message names them all. */
		struct sched_diag *d = sched_diag_new();
		for (size_t j = 0; j < nnodes; j++)
			sched_filter_node(cy, sched_cache_node_at(c, j), d);
		out->message = sched_diag_message(d, nnodes);
		sched_diag_free(d);
		sched_cycle_free(cy);
		return;
	}
	sched_cycle_free(cy);
	if (nf == 1) {
		out->node = a->feasible[0];
		return;
	}
	sched_score_nodes(p, a->feasible, nf, &a->opts.weights, a->totals);
	/* The best total; among equals, each has the same chance (reservoir). */
	size_t best = 0, ties = 1;
	for (size_t j = 1; j < nf; j++) {
		if (a->totals[j] > a->totals[best]) {
			best = j;
			ties = 1;
		} else if (a->totals[j] == a->totals[best]) {
			ties++;
			if (sched_algo__random(a) % ties == 0)
				best = j;
		}
	}
	out->node = a->feasible[best];
}
