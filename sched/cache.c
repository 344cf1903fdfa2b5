/* cache.c: nodes and the pods that hold their resources, with per-node sums
 * (requests, non-zero requests, host-port pods, pods per owner) updated as
 * pods come and go, so that a decision never walks a node's pods for
 * resources. It must never read or write the mount. */
#include "cache.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sched_cache {
	struct strmap *nodes;	  /* name -> struct sched_node, placeholders too */
	struct sched_node **live; /* nodes with info */
	size_t nlive, caplive;
	struct strmap *pods;	 /* key -> struct sched_pod */
	struct sched_pod **anti; /* pods with required anti-affinity */
	size_t nanti, capanti;
};

struct sched_cache *sched_cache_new(void)
{
	struct sched_cache *c = xcalloc(1, sizeof(*c));
	c->nodes = strmap_new();
	c->pods = strmap_new();
	return c;
}

static void sched_cache__node_free(void *p)
{
	struct sched_node *n = p;
	sched_nodeinfo_free(n->info);
	sched_res_clear(&n->requested);
	free(n->pods);
	strmap_free(n->owners, NULL);
	free(n->name);
	free(n);
}

static void sched_cache__pod_free(void *p)
{
	sched_pod_free(p);
}

void sched_cache_free(struct sched_cache *c)
{
	if (!c)
		return;
	strmap_free(c->pods, sched_cache__pod_free);
	strmap_free(c->nodes, sched_cache__node_free);
	free(c->live);
	free(c->anti);
	free(c);
}

static struct sched_node *sched_cache__node_get(struct sched_cache *c, const char *name)
{
	struct sched_node *n = strmap_get(c->nodes, name);
	if (n)
		return n;
	n = xcalloc(1, sizeof(*n));
	n->name = xstrdup(name);
	n->owners = strmap_new();
	strmap_set(c->nodes, name, n);
	return n;
}

/* Forgets a node that neither is known nor holds pods. */
static void sched_cache__node_gc(struct sched_cache *c, struct sched_node *n)
{
	if (n->info || n->npods)
		return;
	strmap_del(c->nodes, n->name);
	sched_cache__node_free(n);
}

bool sched_cache_set_node(struct sched_cache *c, struct sched_nodeinfo *info)
{
	struct sched_node *n = sched_cache__node_get(c, info->name);
	if (n->info) {
		bool same = sched_nodeinfo_equal(n->info, info);
		sched_nodeinfo_free(n->info);
		n->info = info;
		return !same;
	}
	n->info = info;
	if (c->nlive == c->caplive) {
		c->caplive = c->caplive ? 2 * c->caplive : 64;
		c->live = xrealloc(c->live, c->caplive * sizeof(*c->live));
	}
	n->idx = c->nlive;
	c->live[c->nlive++] = n;
	return true;
}

bool sched_cache_remove_node(struct sched_cache *c, const char *name)
{
	struct sched_node *n = strmap_get(c->nodes, name);
	if (!n || !n->info)
		return false;
	sched_nodeinfo_free(n->info);
	n->info = NULL;
	struct sched_node *last = c->live[--c->nlive];
	c->live[n->idx] = last;
	last->idx = n->idx;
	sched_cache__node_gc(c, n);
	return true;
}

size_t sched_cache_node_count(const struct sched_cache *c)
{
	return c->nlive;
}

struct sched_node *sched_cache_node_at(const struct sched_cache *c, size_t i)
{
	return i < c->nlive ? c->live[i] : NULL;
}

struct sched_node *sched_cache_node(const struct sched_cache *c, const char *name)
{
	return strmap_get(c->nodes, name);
}

size_t sched_node_owner_pods(const struct sched_node *n, const struct sched_pod *p)
{
	if (!p->owner || !strmap_count(n->owners))
		return 0;
	return (size_t)(uintptr_t)strmap_get_hashed(n->owners, p->owner, p->owner_hash);
}

static void sched_cache__owner_add(struct sched_node *n, const char *owner, long delta)
{
	if (!owner)
		return;
	uintptr_t v = (uintptr_t)strmap_get(n->owners, owner);
	v += (uintptr_t)delta;
	if (v)
		strmap_set(n->owners, owner, (void *)v);
	else
		strmap_del(n->owners, owner);
}

/* Counts p on the node named node. */
static void sched_cache__link(struct sched_cache *c, struct sched_pod *p, const char *node)
{
	struct sched_node *n = sched_cache__node_get(c, node);
	if (n->npods == n->cap) {
		n->cap = n->cap ? 2 * n->cap : 8;
		n->pods = xrealloc(n->pods, n->cap * sizeof(*n->pods));
	}
	p->node = n;
	p->slot = n->npods;
	n->pods[n->npods++] = p;
	sched_res_add(&n->requested, &p->req);
	n->nz_cpu += p->nz_cpu;
	n->nz_mem += p->nz_mem;
	if (p->nports)
		n->nports++;
	sched_cache__owner_add(n, p->owner, 1);
	if (p->nanti_affinity) {
		if (c->nanti == c->capanti) {
			c->capanti = c->capanti ? 2 * c->capanti : 8;
			c->anti = xrealloc(c->anti, c->capanti * sizeof(*c->anti));
		}
		c->anti[c->nanti++] = p;
	}
	strmap_set(c->pods, p->key, p);
}

/* Takes p out of the cache and its node's sums; the caller frees it. */
static void sched_cache__unlink(struct sched_cache *c, struct sched_pod *p)
{
	struct sched_node *n = p->node;
	struct sched_pod *last = n->pods[--n->npods];
	n->pods[p->slot] = last;
	last->slot = p->slot;
	sched_res_sub(&n->requested, &p->req);
	n->nz_cpu -= p->nz_cpu;
	n->nz_mem -= p->nz_mem;
	if (p->nports)
		n->nports--;
	sched_cache__owner_add(n, p->owner, -1);
	if (p->nanti_affinity) {
		for (size_t i = 0; i < c->nanti; i++) {
			if (c->anti[i] == p) {
				c->anti[i] = c->anti[--c->nanti];
				break;
			}
		}
	}
	strmap_del(c->pods, p->key);
	p->node = NULL;
	sched_cache__node_gc(c, n);
}

bool sched_cache_remove_pod(struct sched_cache *c, const char *key)
{
	struct sched_pod *p = strmap_get(c->pods, key);
	if (!p)
		return false;
	sched_cache__unlink(c, p);
	sched_pod_free(p);
	return true;
}

void sched_cache_add_pod(struct sched_cache *c, struct sched_pod *p)
{
	sched_cache_remove_pod(c, p->key);
	if (p->terminal || !p->node_name) {
		sched_pod_free(p);
		return;
	}
	p->assumed = false;
	sched_cache__link(c, p, p->node_name);
}

void sched_cache_assume(struct sched_cache *c, struct sched_pod *p, const char *node)
{
	sched_cache_remove_pod(c, p->key);
	p->assumed = true;
	sched_cache__link(c, p, node);
}

bool sched_cache_forget(struct sched_cache *c, const char *key)
{
	struct sched_pod *p = strmap_get(c->pods, key);
	if (!p || !p->assumed)
		return false;
	return sched_cache_remove_pod(c, key);
}

const struct sched_pod *sched_cache_pod(const struct sched_cache *c, const char *key)
{
	return strmap_get(c->pods, key);
}

size_t sched_cache_pod_count(const struct sched_cache *c)
{
	return strmap_count(c->pods);
}

size_t sched_cache_anti_count(const struct sched_cache *c)
{
	return c->nanti;
}

const struct sched_pod *sched_cache_anti_at(const struct sched_cache *c, size_t i)
{
	return i < c->nanti ? c->anti[i] : NULL;
}
