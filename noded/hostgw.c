/* hostgw.c: routes to other hosts' podCIDRs through their InternalIPs
 * (hostgw.h). The decision is pure; the rest reads the nodes, the host's
 * addresses and its routes of protocol 204, and runs ip(8).
 *
 * It must never add a route outside the cluster range, nor one through a
 * next hop that is not on a subnet of this host, nor remove a route it did
 * not make (another protocol, or the cluster range's unreachable route). */
#include "hostgw.h"
#include "exec.h"
#include "informer.h"
#include "log.h"
#include "strmap.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const hostgw__verdicts[] = {
    [HOSTGW_ROUTE] = "routed",
    [HOSTGW_LOCAL] = "on this host",
    [HOSTGW_NO_CIDR] = "no podCIDR",
    [HOSTGW_OUTSIDE] = "podCIDR outside the cluster range",
    [HOSTGW_NO_IP] = "no InternalIP",
    [HOSTGW_BAD_HOP] = "InternalIP is no next hop (pod or service range, or not unicast)",
    [HOSTGW_UNCONNECTED] = "InternalIP on no subnet of this host",
    [HOSTGW_OVERLAP] = "podCIDR overlaps another node's",
};

const char *hostgw_verdict_str(enum hostgw_verdict v)
{
	return (unsigned)v < ARRAY_SIZE(hostgw__verdicts) ? hostgw__verdicts[v] : "?";
}

static bool hostgw__ours(const struct hostgw_host *h, uint32_t ip)
{
	for (size_t i = 0; i < h->n_addrs; i++)
		if (h->addrs[i].ip == ip)
			return true;
	return false;
}

/* An address of the host whose subnet can hold next hops: not loopback,
 * not a bridge's gateway (pod range) nor in the service range. */
static bool hostgw__uplink(const struct hostgw_host *h, const struct hostgw_addr *a)
{
	if ((a->ip >> 24) == 127 || a->prefix == 0 || a->prefix > 31)
		return false;
	struct cidr sub = {a->ip & cidr_mask(a->prefix), a->prefix};
	return !cidr_overlaps(&sub, &h->cluster) && !cidr_overlaps(&sub, &h->service);
}

static bool hostgw__unicast(uint32_t ip)
{
	uint8_t first = (uint8_t)(ip >> 24);
	return first != 0 && first != 127 && first < 224;
}

enum hostgw_verdict hostgw_decide(const struct hostgw_host *h, const char *pod_cidr,
				  const char *internal_ip, struct hostgw_route *route)
{
	struct cidr dst;
	if (!pod_cidr || cidr_parse_loose(pod_cidr, &dst) < 0)
		return HOSTGW_NO_CIDR;
	/* strictly longer than the range: a replace of the range itself would
	 * take the unreachable route's place */
	if (dst.prefix <= h->cluster.prefix || !cidr_contains(&h->cluster, dst.addr))
		return HOSTGW_OUTSIDE;
	route->dst = dst;
	uint32_t ip;
	if (!internal_ip || cidr_ip_parse(internal_ip, &ip) < 0)
		return HOSTGW_NO_IP;
	if (hostgw__ours(h, ip))
		return HOSTGW_LOCAL;
	if (!hostgw__unicast(ip) || cidr_contains(&h->cluster, ip) ||
	    cidr_contains(&h->service, ip))
		return HOSTGW_BAD_HOP;
	for (size_t i = 0; i < h->n_addrs; i++) {
		const struct hostgw_addr *a = &h->addrs[i];
		uint32_t mask = cidr_mask(a->prefix);
		if (!hostgw__uplink(h, a) || (ip & mask) != (a->ip & mask))
			continue;
		if (a->prefix <= 30 && ((ip & ~mask) == 0 || (ip & ~mask) == ~mask))
			return HOSTGW_BAD_HOP; /* the subnet's network or broadcast */
		route->via = ip;
		return HOSTGW_ROUTE;
	}
	return HOSTGW_UNCONNECTED;
}

static int hostgw__cmp_route(const void *a, const void *b)
{
	const struct hostgw_route *x = a, *y = b;
	if (x->dst.addr != y->dst.addr)
		return x->dst.addr < y->dst.addr ? -1 : 1;
	if (x->dst.prefix != y->dst.prefix)
		return x->dst.prefix < y->dst.prefix ? -1 : 1;
	return x->via < y->via ? -1 : x->via > y->via;
}

size_t hostgw_plan(const struct hostgw_host *h, struct hostgw_node *nodes, size_t n,
		   struct hostgw_route **out)
{
	struct hostgw_route *r = xcalloc(n ? n : 1, sizeof(*r));
	for (size_t i = 0; i < n; i++)
		nodes[i].verdict = hostgw_decide(h, nodes[i].pod_cidr, nodes[i].internal_ip, &r[i]);
	bool *overlap = xcalloc(n ? n : 1, sizeof(*overlap));
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].verdict != HOSTGW_ROUTE)
			continue;
		for (size_t j = 0; j < n && !overlap[i]; j++)
			overlap[i] = j != i &&
				     (nodes[j].verdict == HOSTGW_ROUTE ||
				      nodes[j].verdict == HOSTGW_LOCAL) &&
				     cidr_overlaps(&r[i].dst, &r[j].dst);
	}
	for (size_t i = 0; i < n; i++)
		if (overlap[i])
			nodes[i].verdict = HOSTGW_OVERLAP;
	free(overlap);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (nodes[i].verdict == HOSTGW_ROUTE)
			r[k++] = r[i];
	qsort(r, k, sizeof(*r), hostgw__cmp_route);
	*out = r;
	return k;
}

int hostgw_parse_route(const char *line, struct hostgw_route *r)
{
	char dst[CIDR_STR_SIZE + 1], via[CIDR_IP_SIZE + 1];
	if (sscanf(line, "%19s via %15s", dst, via) != 2)
		return -1;
	/* ip(8) prints a /32 without its length */
	char full[CIDR_STR_SIZE + 4];
	snprintf(full, sizeof(full), strchr(dst, '/') ? "%s" : "%s/32", dst);
	if (cidr_parse(full, &r->dst, NULL) < 0 || cidr_ip_parse(via, &r->via) < 0)
		return -1;
	return 0;
}

bool hostgw_owned(const struct cidr *cluster, const struct cidr *dst)
{
	return dst->prefix > cluster->prefix && cidr_contains(cluster, dst->addr);
}

char *hostgw_changes(const struct cidr *cluster, const struct hostgw_route *have, size_t n_have,
		     const struct hostgw_route *want, size_t n_want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	char dst[CIDR_STR_SIZE], via[CIDR_IP_SIZE];
	for (size_t i = 0; i < n_have; i++) {
		if (!hostgw_owned(cluster, &have[i].dst))
			continue;
		bool wanted = false;
		for (size_t j = 0; j < n_want && !wanted; j++)
			wanted = have[i].dst.addr == want[j].dst.addr &&
				 have[i].dst.prefix == want[j].dst.prefix;
		if (wanted)
			continue; /* replaced below if it must change */
		cidr_format(&have[i].dst, dst);
		fprintf(f, "route del %s proto %d\n", dst, HOSTGW_PROTO);
	}
	for (size_t j = 0; j < n_want; j++) {
		bool same = false;
		for (size_t i = 0; i < n_have && !same; i++)
			same = have[i].dst.addr == want[j].dst.addr &&
			       have[i].dst.prefix == want[j].dst.prefix &&
			       have[i].via == want[j].via;
		if (same)
			continue;
		cidr_format(&want[j].dst, dst);
		cidr_ip_format(want[j].via, via);
		fprintf(f, "route replace %s via %s proto %d\n", dst, via, HOSTGW_PROTO);
	}
	fclose(f);
	if (!len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the running part ---- */

struct hostgw {
	struct loop *loop;
	struct hostgw_opts o;
	char *mount, *node;
	struct informer *nodes;
	struct loop_timer *debounce, *resync;
	struct strmap *verdicts; /* node name -> verdict + 1, as last logged */
	struct strmap *warned;	 /* devices said to forward nothing */
};

/* The host's IPv4 addresses, every one (loopback and gateways too: a node
 * whose InternalIP is any of them is on this host). */
static size_t hostgw__addrs(struct hostgw_addr **out)
{
	struct ifaddrs *ifs = NULL;
	size_t n = 0, cap = 8;
	struct hostgw_addr *v = xcalloc(cap, sizeof(*v));
	if (getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
				continue;
			if (n == cap)
				v = xrealloc(v, (cap *= 2) * sizeof(*v));
			const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
			const struct sockaddr_in *m = (const struct sockaddr_in *)i->ifa_netmask;
			v[n].ip = ntohl(a->sin_addr.s_addr);
			v[n].prefix = (unsigned)__builtin_popcount(m->sin_addr.s_addr);
			snprintf(v[n].dev, sizeof(v[n].dev), "%s", i->ifa_name);
			n++;
		}
		freeifaddrs(ifs);
	}
	*out = v;
	return n;
}

/* Our routes as the kernel has them. */
static int hostgw__read(struct hostgw_route **out, size_t *n, struct error **err)
{
	char proto[16];
	snprintf(proto, sizeof(proto), "%d", HOSTGW_PROTO);
	char *argv[] = {"ip", "-4", "route", "show", "table", "main", "proto", proto, NULL};
	cleanup_free char *text = NULL;
	*out = NULL;
	*n = 0;
	if (exec_output(argv, 0, &text, err) < 0)
		return -1;
	size_t cap = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		struct hostgw_route r;
		if (hostgw_parse_route(line, &r) < 0)
			continue;
		if (*n == cap)
			*out = xrealloc(*out, (cap = cap ? cap * 2 : 8) * sizeof(**out));
		(*out)[(*n)++] = r;
	}
	return 0;
}

static int hostgw__apply(const char *changes, struct error **err)
{
	char *argv[] = {"ip", "-force", "-batch", "-", NULL};
	return exec_run(argv, changes, 0, err);
}

struct hostgw__collect {
	struct hostgw_node *v;
	size_t n, cap;
};

static const char *hostgw__internal_ip(const struct ynode *obj)
{
	const struct ynode *addrs = ynode_path(obj, "status.addresses");
	if (!addrs || addrs->type != YNODE_SEQ)
		return NULL;
	for (size_t i = 0; i < addrs->n; i++) {
		const struct ynode *a = ynode_item(addrs, i);
		const char *type = ynode_path_str(a, "type");
		if (type && strcmp(type, "InternalIP") == 0)
			return ynode_path_str(a, "address");
	}
	return NULL;
}

static int hostgw__collect_cb(void *data, const char *key, const struct ynode *obj)
{
	struct hostgw__collect *c = data;
	if (c->n == c->cap)
		c->v = xrealloc(c->v, (c->cap = c->cap ? c->cap * 2 : 16) * sizeof(*c->v));
	c->v[c->n++] = (struct hostgw_node){
	    .name = key,
	    .pod_cidr = ynode_path_str(obj, "spec.podCIDR"),
	    .internal_ip = hostgw__internal_ip(obj),
	};
	return 0;
}

/* Says what changed for a node since it was last looked at; a node seen
 * for the first time is named only if it gets a route or is refused one. */
static void hostgw__log_verdict(struct hostgw *g, const struct hostgw_node *nd)
{
	uintptr_t was = (uintptr_t)strmap_get(g->verdicts, nd->name);
	if (was == (uintptr_t)nd->verdict + 1)
		return;
	strmap_set(g->verdicts, nd->name, (void *)((uintptr_t)nd->verdict + 1));
	switch (nd->verdict) {
	case HOSTGW_LOCAL:
	case HOSTGW_NO_CIDR:
	case HOSTGW_NO_IP:
		log_debug("host-gw: node %s: %s", nd->name, hostgw_verdict_str(nd->verdict));
		break;
	case HOSTGW_ROUTE:
		log_info("host-gw: node %s (%s via %s): routed", nd->name, nd->pod_cidr,
			 nd->internal_ip);
		break;
	default:
		log_warn("host-gw: node %s (podCIDR %s, InternalIP %s): no route: %s", nd->name,
			 nd->pod_cidr ? nd->pod_cidr : "none",
			 nd->internal_ip ? nd->internal_ip : "none",
			 hostgw_verdict_str(nd->verdict));
	}
}

/* A next hop's device must forward what comes in from the other hosts for
 * our pods; corral never turns that on itself (see corral-noded(8)). */
static void hostgw__check_forwarding(struct hostgw *g, const struct hostgw_addr *addrs, size_t n,
				     const struct hostgw_route *r)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t mask = cidr_mask(addrs[i].prefix);
		if (addrs[i].prefix == 0 || (addrs[i].ip & mask) != (r->via & mask) ||
		    strmap_has(g->warned, addrs[i].dev))
			continue;
		cleanup_free char *path =
		    xasprintf("/proc/sys/net/ipv4/conf/%s/forwarding", addrs[i].dev);
		cleanup_fclose FILE *f = fopen(path, "re");
		if (f && fgetc(f) == '0') {
			log_warn("host-gw: %s does not forward (%s is 0): pods of other hosts "
				 "cannot reach this host's pods",
				 addrs[i].dev, path);
			strmap_set(g->warned, addrs[i].dev, g);
		}
		return;
	}
}

int hostgw_sync(struct hostgw *g, struct error **err)
{
	struct hostgw__collect c = {0};
	informer_foreach(g->nodes, NULL, hostgw__collect_cb, &c);
	struct hostgw_addr *addrs = NULL;
	size_t n_addrs = hostgw__addrs(&addrs);
	const struct hostgw_host h = {
	    .cluster = g->o.cluster_cidr,
	    .service = g->o.service_cidr,
	    .addrs = addrs,
	    .n_addrs = n_addrs,
	};
	struct hostgw_route *want = NULL, *have = NULL;
	size_t n_want = hostgw_plan(&h, c.v, c.n, &want), n_have = 0;
	for (size_t i = 0; i < c.n; i++)
		hostgw__log_verdict(g, &c.v[i]);
	for (size_t i = 0; i < n_want; i++)
		hostgw__check_forwarding(g, addrs, n_addrs, &want[i]);
	int r = hostgw__read(&have, &n_have, err);
	if (r == 0) {
		cleanup_free char *changes =
		    hostgw_changes(&g->o.cluster_cidr, have, n_have, want, n_want);
		if (changes) {
			r = hostgw__apply(changes, err);
			size_t len = strlen(changes);
			log_info("host-gw: %.*s%s", (int)(len - 1), changes,
				 r < 0 ? " (failed)" : "");
		}
	}
	if (r < 0)
		error_prefix(err, "host-gw routes");
	free(have);
	free(want);
	free(addrs);
	free(c.v);
	return r;
}

static void hostgw__on_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct hostgw *g = data;
	struct error *err = NULL;
	if (hostgw_sync(g, &err) < 0) {
		log_warn("%s", err->msg);
		error_free(err);
		loop_timer_start(g->debounce, 1000, 0); /* again soon */
	}
}

static void hostgw__changed(struct hostgw *g)
{
	if (!loop_timer_armed(g->debounce))
		loop_timer_start(g->debounce, HOSTGW_DEBOUNCE_MS, 0);
}

static void hostgw__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	(void)obj;
	hostgw__changed(data);
}

static void hostgw__on_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *obj)
{
	(void)key;
	/* heartbeats rewrite the status every period: only a new podCIDR or
	 * InternalIP matters */
	const char *a = ynode_path_str(old, "spec.podCIDR"),
		   *b = ynode_path_str(obj, "spec.podCIDR");
	const char *x = hostgw__internal_ip(old), *y = hostgw__internal_ip(obj);
	if ((a && b ? strcmp(a, b) != 0 : a != b) || (x && y ? strcmp(x, y) != 0 : x != y))
		hostgw__changed(data);
}

static void hostgw__on_delete(void *data, const char *key, const struct ynode *old)
{
	struct hostgw *g = data;
	(void)old;
	strmap_del(g->verdicts, key);
	hostgw__changed(g);
}

struct hostgw *hostgw_new(struct loop *loop, const struct hostgw_opts *o)
{
	struct hostgw *g = xcalloc(1, sizeof(*g));
	g->loop = loop;
	g->o = *o;
	g->mount = xstrdup(o->mount);
	g->node = xstrdup(o->node ? o->node : "");
	g->o.mount = g->mount;
	g->o.node = g->node;
	g->nodes = informer_new(loop, g->mount, "nodes", false);
	static const struct informer_handlers h = {
	    .on_add = hostgw__on_add,
	    .on_update = hostgw__on_update,
	    .on_delete = hostgw__on_delete,
	};
	informer_add_handlers(g->nodes, &h, g);
	/* a deleted node's route goes at once, not after an editor's grace */
	informer_set_delete_grace(g->nodes, 0);
	g->debounce = loop_timer_new(loop, hostgw__on_timer, g);
	g->resync = loop_timer_new(loop, hostgw__on_timer, g);
	g->verdicts = strmap_new();
	g->warned = strmap_new();
	return g;
}

int hostgw_start(struct hostgw *g, struct error **err)
{
	if (informer_start(g->nodes, err) < 0) {
		error_prefix(err, "host-gw");
		return -1;
	}
	loop_timer_stop(g->debounce); /* the list's adds: synced here */
	loop_timer_start(g->resync, HOSTGW_RESYNC_MS, HOSTGW_RESYNC_MS);
	return hostgw_sync(g, err);
}

void hostgw_remove_all(const struct cidr *cluster)
{
	struct hostgw_route *have = NULL;
	size_t n = 0;
	struct error *err = NULL;
	if (hostgw__read(&have, &n, &err) == 0) {
		cleanup_free char *changes = hostgw_changes(cluster, have, n, NULL, 0);
		if (changes && hostgw__apply(changes, &err) == 0)
			log_info("host-gw: routes removed");
	}
	if (err) {
		log_warn("host-gw: %s", err->msg);
		error_free(err);
	}
	free(have);
}

void hostgw_free(struct hostgw *g)
{
	if (!g)
		return;
	informer_free(g->nodes);
	loop_timer_free(g->debounce);
	loop_timer_free(g->resync);
	strmap_free(g->verdicts, NULL);
	strmap_free(g->warned, NULL);
	free(g->mount);
	free(g->node);
	free(g);
}
