/* score.c: the scores (see score.h). Integer arithmetic as Kubernetes',
 * with 128-bit products so that memory in milli-bytes cannot overflow.
 * Scores read the cache and never change it. */
#include "score.h"
#include "filter.h"
#include "util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int64_t sched_score__least(int64_t requested, int64_t capacity)
{
	if (capacity <= 0 || requested > capacity)
		return 0;
	return (int64_t)((__int128)(capacity - requested) * SCHED_MAX_SCORE / capacity);
}

int64_t sched_score_least_allocated(const struct sched_pod *p, const struct sched_node *n)
{
	const struct sched_res *alloc = &n->info->alloc;
	int64_t cpu = sched_score__least(n->nz_cpu + p->nz_cpu, alloc->cpu);
	int64_t mem = sched_score__least(n->nz_mem + p->nz_mem, alloc->mem);
	return (cpu + mem) / 2;
}

int64_t sched_score_balanced_allocation(const struct sched_pod *p, const struct sched_node *n)
{
	const struct sched_res *alloc = &n->info->alloc;
	double f[2];
	size_t k = 0;
	if (alloc->cpu > 0) {
		double x = (double)(n->requested.cpu + p->req.cpu) / (double)alloc->cpu;
		f[k++] = x > 1 ? 1 : x;
	}
	if (alloc->mem > 0) {
		double x = (double)(n->requested.mem + p->req.mem) / (double)alloc->mem;
		f[k++] = x > 1 ? 1 : x;
	}
	double std = k == 2 ? (f[0] > f[1] ? f[0] - f[1] : f[1] - f[0]) / 2 : 0;
	return (int64_t)((1 - std) * SCHED_MAX_SCORE);
}

int64_t sched_score_node_affinity_raw(const struct sched_pod *p, const struct sched_node *n)
{
	int64_t sum = 0;
	for (size_t i = 0; i < p->npreferred; i++)
		if (sched_node_term_matches(&p->preferred[i].term, n->info->labels, n->name))
			sum += p->preferred[i].weight;
	return sum;
}

int64_t sched_score_taint_raw(const struct sched_pod *p, const struct sched_node *n)
{
	int64_t count = 0;
	const struct sched_nodeinfo *info = n->info;
	for (size_t i = 0; i < info->ntaints; i++) {
		const struct sched_taint *t = &info->taints[i];
		if (t->effect != SCHED_EFFECT_PREFER_NO_SCHEDULE)
			continue;
		/* Only tolerations for PreferNoSchedule (or every effect) count. */
		bool tolerated = false;
		for (size_t j = 0; j < p->ntolerations && !tolerated; j++) {
			const struct sched_toleration *tol = &p->tolerations[j];
			if (tol->effect != SCHED_EFFECT_ALL &&
			    tol->effect != SCHED_EFFECT_PREFER_NO_SCHEDULE)
				continue;
			tolerated = sched_tolerates(tol, 1, t->key, t->value, t->effect);
		}
		if (!tolerated)
			count++;
	}
	return count;
}

int64_t sched_score_spread_raw(const struct sched_pod *p, const struct sched_node *n)
{
	return (int64_t)sched_node_owner_pods(n, p);
}

void sched_score_normalize(int64_t *scores, size_t n, bool reverse)
{
	int64_t max = 0;
	for (size_t i = 0; i < n; i++)
		if (scores[i] > max)
			max = scores[i];
	for (size_t i = 0; i < n; i++) {
		if (max == 0) {
			scores[i] = reverse ? SCHED_MAX_SCORE : 0;
			continue;
		}
		int64_t s = SCHED_MAX_SCORE * scores[i] / max;
		scores[i] = reverse ? SCHED_MAX_SCORE - s : s;
	}
}

typedef int64_t (*sched_score_fn)(const struct sched_pod *, const struct sched_node *);

static void sched_score__add(const struct sched_pod *p, struct sched_node *const *nodes, size_t n,
			     sched_score_fn fn, int weight, int normalize, bool reverse,
			     int64_t *raw, int64_t *totals)
{
	if (!weight)
		return;
	for (size_t i = 0; i < n; i++)
		raw[i] = fn(p, nodes[i]);
	if (normalize)
		sched_score_normalize(raw, n, reverse);
	for (size_t i = 0; i < n; i++)
		totals[i] += raw[i] * weight;
}

void sched_score_nodes(const struct sched_pod *p, struct sched_node *const *nodes, size_t n,
		       const struct sched_weights *w, int64_t *totals)
{
	cleanup_free int64_t *raw = xcalloc(n ? n : 1, sizeof(*raw));
	memset(totals, 0, n * sizeof(*totals));
	sched_score__add(p, nodes, n, sched_score_least_allocated, w->least_allocated, 0, false,
			 raw, totals);
	sched_score__add(p, nodes, n, sched_score_balanced_allocation, w->balanced_allocation, 0,
			 false, raw, totals);
	sched_score__add(p, nodes, n, sched_score_node_affinity_raw, w->node_affinity, 1, false,
			 raw, totals);
	sched_score__add(p, nodes, n, sched_score_taint_raw, w->taint_toleration, 1, true, raw,
			 totals);
	sched_score__add(p, nodes, n, sched_score_spread_raw, w->spread, 1, true, raw, totals);
}
