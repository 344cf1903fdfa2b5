/* proxy.c: the service proxy: Services and Endpoints rendered into one
 * nftables table, replaced whole by `nft -f -` when the text changes.
 *
 * The table (names are nft identifiers; nft 1.0.6 takes no quoted chain
 * names, so every chain name holds a '-' and can never be a keyword):
 *
 *   map services         ClusterIP . proto . port  : goto svc-<ns>/<name>/<proto>/<port>
 *   map nodeports        proto . nodePort          : goto ext-<ns>/<name>/<proto>/<port>
 *   set node-addresses   where NodePort is served
 *   set no-endpoints, no-endpoint-nodeports        : refused (reject) before routing
 *   chain svc-...        numgen random (or jhash ip saddr for ClientIP
 *                        affinity) picks an endpoint and DNATs to it, marking
 *                        hairpin traffic (the source is the endpoint picked)
 *   chain ext-...        marks NodePort traffic from outside the pod range
 *   nat-postrouting      masquerades marked traffic, and traffic DNATed back
 *                        out of the bridge it came from (a pod's reply to
 *                        another pod of its bridge would otherwise go
 *                        straight back over the bridge, never un-NATed)
 *
 * Never an error for what the mount holds: an object that makes no sense is
 * skipped and named in a comment. Never a DNAT to an address outside the
 * cluster's pod range, never a ClusterIP outside the service range. */
#include "proxy.h"

#include "cidr.h"
#include "fnv.h"
#include "informer.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum proxy_proto { PROTO_TCP, PROTO_UDP };
static const char *const proto_nft[] = {"tcp", "udp"};

#define TABLE_MAX   64
#define IFNAME_MAX  15
#define NFT_ERR_MAX 4000 /* of nft's complaint kept in the error */

/* The options, checked and parsed. */
struct params {
	char table[TABLE_MAX + 1];
	char bridge[IFNAME_MAX + 1]; /* "" when none */
	bool has_pod_cidr;
	struct cidr pod;
	struct cidr cluster;
	struct cidr service;
	uint32_t addrs[PROXY_MAX_ADDRESSES]; /* sorted, no duplicates */
	size_t naddrs;
	uint32_t mark;
};

struct ep {
	uint32_t ip;
	uint16_t port;
};

/* One port of one service: what one svc- chain serves. */
struct svcport {
	const char *key; /* "ns/name", the caller's */
	size_t seq;	 /* order of appearance: services by key, ports as declared */
	uint32_t cluster_ip;
	enum proxy_proto proto;
	uint16_t port;
	uint16_t node_port; /* 0: none */
	bool affinity;	    /* sessionAffinity ClientIP */
	struct ep *eps;
	size_t neps;
};

struct world {
	const struct params *pa;
	struct svcport *v;
	size_t n, cap;
	FILE *notes; /* "# skipped ..." lines */
	char *notes_buf;
	size_t notes_len;
};

/* ---- options ------------------------------------------------------------ */

static bool ident_ok(const char *s, size_t max, bool dots)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return false;
	for (const char *c = s; *c; c++) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			  (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || (dots && *c == '.');
		if (!ok)
			return false;
	}
	return true;
}

/* qsort() that takes an empty array at NULL, as the arrays here may be. */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int params_parse(const struct proxy_opts *o, struct params *pa, struct error **err)
{
	memset(pa, 0, sizeof(*pa));
	if (!o->table || !ident_ok(o->table, TABLE_MAX, false) ||
	    !((o->table[0] >= 'a' && o->table[0] <= 'z') ||
	      (o->table[0] >= 'A' && o->table[0] <= 'Z')))
		return error_set(err, EINVAL,
				 "table \"%s\": want a letter, then letters, digits, '_' or '-' "
				 "(at most %d)",
				 o->table ? o->table : "", TABLE_MAX);
	snprintf(pa->table, sizeof(pa->table), "%s", o->table);
	if (o->bridge && *o->bridge) {
		if (!ident_ok(o->bridge, IFNAME_MAX, true))
			return error_set(err, EINVAL, "bridge \"%s\" is not an interface name",
					 o->bridge);
		snprintf(pa->bridge, sizeof(pa->bridge), "%s", o->bridge);
	}
	if (o->pod_cidr && *o->pod_cidr) {
		if (cidr_parse(o->pod_cidr, &pa->pod, err) < 0) {
			error_prefix(err, "pod-cidr");
			return -EINVAL;
		}
		pa->has_pod_cidr = true;
	}
	if (cidr_parse(o->cluster_cidr && *o->cluster_cidr ? o->cluster_cidr : "10.244.0.0/16",
		       &pa->cluster, err) < 0) {
		error_prefix(err, "cluster-cidr");
		return -EINVAL;
	}
	if (cidr_parse(o->service_cidr && *o->service_cidr ? o->service_cidr : "10.96.0.0/16",
		       &pa->service, err) < 0) {
		error_prefix(err, "service-cidr");
		return -EINVAL;
	}
	if (o->n_node_addresses > PROXY_MAX_ADDRESSES)
		return error_set(err, EINVAL, "%zu node addresses: at most %d", o->n_node_addresses,
				 PROXY_MAX_ADDRESSES);
	for (size_t i = 0; i < o->n_node_addresses; i++) {
		uint32_t ip;
		if (cidr_ip_parse(o->node_addresses[i], &ip) < 0 || ip == 0 || ip == 0xffffffffu)
			return error_set(err, EINVAL, "node address \"%s\" is not an IPv4 address",
					 o->node_addresses[i] ? o->node_addresses[i] : "");
		pa->addrs[pa->naddrs++] = ip;
	}
	sort(pa->addrs, pa->naddrs, sizeof(pa->addrs[0]), cmp_u32);
	size_t k = 0;
	for (size_t i = 0; i < pa->naddrs; i++)
		if (k == 0 || pa->addrs[k - 1] != pa->addrs[i])
			pa->addrs[k++] = pa->addrs[i];
	pa->naddrs = k;
	pa->mark = o->masq_mark ? o->masq_mark : PROXY_MASQ_MARK;
	return 0;
}

/* ---- reading the world -------------------------------------------------- */

/* A note in the table's header comment; user text is kept to printable
 * ASCII so that it can never end the comment line. */
__attribute__((format(printf, 3, 4))) static void note(struct world *w, const char *key,
						       const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("\t# skipped ", w->notes);
	for (const char *s = key; s && *s; s++)
		fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', w->notes);
	fputs(": ", w->notes);
	for (const char *s = buf; *s; s++)
		fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', w->notes);
	fputc('\n', w->notes);
}

static bool label_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* "ns/name", both DNS labels: safe inside an nft identifier. */
static bool key_ok(const char *key)
{
	const char *slash = key ? strchr(key, '/') : NULL;
	return slash && label_ok(key, (size_t)(slash - key)) &&
	       label_ok(slash + 1, strlen(slash + 1));
}

/* A port number 1..65535 from a scalar, or 0. */
static uint16_t port_of(const struct ynode *n)
{
	long long v;
	if (!n || ynode_int(n, &v) < 0 || v < 1 || v > 65535)
		return 0;
	return (uint16_t)v;
}

/* protocol: absent is TCP; -1 for what the proxy does not serve. */
static int proto_of(const struct ynode *port_map)
{
	const struct ynode *p = ynode_get(port_map, "protocol");
	if (!p)
		return PROTO_TCP;
	const char *s = ynode_str(p);
	if (s && strcmp(s, "TCP") == 0)
		return PROTO_TCP;
	if (s && strcmp(s, "UDP") == 0)
		return PROTO_UDP;
	return -1;
}

static const char *name_of(const struct ynode *port_map)
{
	const char *s = ynode_str(ynode_get(port_map, "name"));
	return s ? s : "";
}

static int cmp_ep(const void *a, const void *b)
{
	const struct ep *x = a, *y = b;
	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* The endpoints of one service port: for each subset, the port of the same
 * name and protocol (a service of one unnamed port takes a subset's only
 * port), times its ready addresses. */
static void collect_eps(struct world *w, struct svcport *sp, const char *port_name, bool single,
			const struct ynode *eobj)
{
	const struct ynode *subsets = ynode_get(eobj, "subsets");
	if (!subsets || subsets->type != YNODE_SEQ)
		return;
	size_t cap = 0;
	for (size_t i = 0; i < subsets->n; i++) {
		const struct ynode *sub = ynode_item(subsets, i);
		const struct ynode *ports = ynode_get(sub, "ports");
		const struct ynode *addrs = ynode_get(sub, "addresses");
		if (!ports || ports->type != YNODE_SEQ || !addrs || addrs->type != YNODE_SEQ)
			continue;
		const struct ynode *match = NULL;
		for (size_t j = 0; j < ports->n && !match; j++) {
			const struct ynode *pm = ynode_item(ports, j);
			if (pm->type == YNODE_MAP && proto_of(pm) == (int)sp->proto &&
			    strcmp(name_of(pm), port_name) == 0)
				match = pm;
		}
		if (!match && single && ports->n == 1 && ynode_item(ports, 0)->type == YNODE_MAP &&
		    proto_of(ynode_item(ports, 0)) == (int)sp->proto)
			match = ynode_item(ports, 0);
		if (!match)
			continue;
		uint16_t port = port_of(ynode_get(match, "port"));
		if (!port) {
			note(w, sp->key, "endpoints port \"%s\" has no port number 1-65535",
			     port_name);
			continue;
		}
		for (size_t j = 0; j < addrs->n; j++) {
			const char *s = ynode_str(ynode_get(ynode_item(addrs, j), "ip"));
			uint32_t ip;
			if (!s || cidr_ip_parse(s, &ip) < 0) {
				note(w, sp->key, "endpoint address \"%s\" is not IPv4", s ? s : "");
				continue;
			}
			if (!cidr_contains(&w->pa->cluster, ip)) {
				note(w, sp->key, "endpoint %s is outside the pod range", s);
				continue;
			}
			if (sp->neps == cap) {
				cap = cap ? 2 * cap : 4;
				sp->eps = xrealloc(sp->eps, cap * sizeof(*sp->eps));
			}
			sp->eps[sp->neps++] = (struct ep){ip, port};
		}
	}
	sort(sp->eps, sp->neps, sizeof(*sp->eps), cmp_ep);
	size_t k = 0;
	for (size_t i = 0; i < sp->neps; i++)
		if (k == 0 || cmp_ep(&sp->eps[k - 1], &sp->eps[i]) != 0)
			sp->eps[k++] = sp->eps[i];
	sp->neps = k;
	/* An endpoint at this node's gateway is this host itself (kube-dns:
	 * corral-dns listens on every node's gateway on its host); it is
	 * taken alone, so that the query never crosses to another host,
	 * whose gateway is closed to pods that are not its own. */
	if (!w->pa->has_pod_cidr)
		return;
	uint32_t gw = w->pa->pod.addr + 1;
	k = 0;
	for (size_t i = 0; i < sp->neps; i++)
		if (sp->eps[i].ip == gw)
			sp->eps[k++] = sp->eps[i];
	if (k)
		sp->neps = k;
}

static void add_service(struct world *w, const char *key, const struct ynode *svc,
			const struct ynode *eobj)
{
	if (!key_ok(key)) {
		note(w, key, "not a namespace/name of DNS labels");
		return;
	}
	const struct ynode *spec = ynode_get(svc, "spec");
	if (!spec || spec->type != YNODE_MAP) {
		note(w, key, "no spec");
		return;
	}
	const char *type = ynode_str(ynode_get(spec, "type"));
	if (!type)
		type = "ClusterIP";
	if (strcmp(type, "ExternalName") == 0)
		return; /* a DNS name only */
	bool nodeports = strcmp(type, "NodePort") == 0 || strcmp(type, "LoadBalancer") == 0;
	const char *cip = ynode_str(ynode_get(spec, "clusterIP"));
	if (!cip || !*cip || strcmp(cip, "None") == 0)
		return; /* headless, or not allocated yet */
	uint32_t ip;
	if (cidr_ip_parse(cip, &ip) < 0) {
		note(w, key, "clusterIP \"%s\" is not IPv4", cip);
		return;
	}
	if (!cidr_contains(&w->pa->service, ip)) {
		note(w, key, "clusterIP %s is outside the service range", cip);
		return;
	}
	const char *aff = ynode_str(ynode_get(spec, "sessionAffinity"));
	const struct ynode *ports = ynode_get(spec, "ports");
	if (!ports || ports->type != YNODE_SEQ || ports->n == 0) {
		note(w, key, "no ports");
		return;
	}
	for (size_t i = 0; i < ports->n; i++) {
		const struct ynode *pm = ynode_item(ports, i);
		if (pm->type != YNODE_MAP) {
			note(w, key, "port %zu is not a mapping", i);
			continue;
		}
		int proto = proto_of(pm);
		uint16_t port = port_of(ynode_get(pm, "port"));
		if (proto < 0 || !port) {
			note(w, key, "port %zu: want port 1-65535 and protocol TCP or UDP", i);
			continue;
		}
		struct svcport sp = {
		    .key = key,
		    .seq = w->n,
		    .cluster_ip = ip,
		    .proto = (enum proxy_proto)proto,
		    .port = port,
		    .affinity = aff && strcmp(aff, "ClientIP") == 0,
		};
		if (nodeports && ynode_get(pm, "nodePort")) {
			uint16_t np = port_of(ynode_get(pm, "nodePort"));
			if (np >= PROXY_NODEPORT_MIN && np <= PROXY_NODEPORT_MAX)
				sp.node_port = np;
			else
				note(w, key, "nodePort of port %u is outside %d-%d", port,
				     PROXY_NODEPORT_MIN, PROXY_NODEPORT_MAX);
		}
		if (eobj)
			collect_eps(w, &sp, name_of(pm), ports->n == 1, eobj);
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 16;
			w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
		}
		w->v[w->n++] = sp;
	}
}

static int cmp_object(const void *a, const void *b)
{
	const struct proxy_object *x = a, *y = b;
	return strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

static int cmp_by_service(const void *a, const void *b)
{
	const struct svcport *x = a, *y = b;
	if (x->cluster_ip != y->cluster_ip)
		return x->cluster_ip < y->cluster_ip ? -1 : 1;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_by_nodeport(const void *a, const void *b)
{
	const struct svcport *x = a, *y = b;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->node_port != y->node_port)
		return x->node_port < y->node_port ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_by_seq(const void *a, const void *b)
{
	const struct svcport *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Two services on one ClusterIP:port, or two on one nodePort: the first by
 * key keeps it (nft refuses a map with a key twice). */
static void drop_conflicts(struct world *w)
{
	char ipb[CIDR_IP_SIZE];
	sort(w->v, w->n, sizeof(*w->v), cmp_by_service);
	size_t k = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct svcport *prev = k ? &w->v[k - 1] : NULL, *cur = &w->v[i];
		if (prev && prev->cluster_ip == cur->cluster_ip && prev->proto == cur->proto &&
		    prev->port == cur->port) {
			cidr_ip_format(cur->cluster_ip, ipb);
			note(w, cur->key, "%s %s %u is already %s's", ipb, proto_nft[cur->proto],
			     cur->port, prev->key);
			free(cur->eps);
			continue;
		}
		w->v[k++] = *cur;
	}
	w->n = k;
	sort(w->v, w->n, sizeof(*w->v), cmp_by_nodeport);
	const struct svcport *kept = NULL;
	for (size_t i = 0; i < w->n; i++) {
		struct svcport *cur = &w->v[i];
		if (!cur->node_port)
			continue;
		if (kept && kept->proto == cur->proto && kept->node_port == cur->node_port) {
			note(w, cur->key, "nodePort %s %u is already %s's", proto_nft[cur->proto],
			     cur->node_port, kept->key);
			cur->node_port = 0;
			continue;
		}
		kept = cur;
	}
	sort(w->v, w->n, sizeof(*w->v), cmp_by_seq);
}

/* ---- writing the table -------------------------------------------------- */

static void put_ip(FILE *f, uint32_t ip)
{
	char b[CIDR_IP_SIZE];
	cidr_ip_format(ip, b);
	fputs(b, f);
}

static void put_cidr(FILE *f, const struct cidr *c)
{
	char b[CIDR_STR_SIZE];
	cidr_format(c, b);
	fputs(b, f);
}

/* svc-dev/web/tcp/80, ext-dev/web/tcp/80 */
static void put_chain(FILE *f, const char *kind, const struct svcport *sp)
{
	fprintf(f, "%s-%s/%s/%u", kind, sp->key, proto_nft[sp->proto], sp->port);
}

/* A spread of one service port's endpoints: its seed makes services that
 * share endpoints spread differently, and is a function of the key alone
 * so that the text stays the same from one render to the next. */
static uint32_t seed_of(const struct svcport *sp)
{
	uint32_t h = fnv1a32(sp->key, strlen(sp->key));
	h = (h ^ (uint32_t)sp->proto) * FNV1A32_PRIME;
	h = (h ^ sp->port) * FNV1A32_PRIME;
	return h;
}

static void put_set_open(FILE *f, const char *what, const char *name, const char *type)
{
	fprintf(f, "\t%s %s {\n\t\ttype %s\n", what, name, type);
}

static void put_elements_open(FILE *f, bool *first)
{
	if (*first)
		fputs("\t\telements = {\n", f);
	else
		fputs(",\n", f);
	*first = false;
	fputs("\t\t\t", f);
}

static void put_set_close(FILE *f, bool first)
{
	if (!first)
		fputs("\n\t\t}\n", f);
	fputs("\t}\n", f);
}

static void put_sets(FILE *f, const struct world *w)
{
	const struct params *pa = w->pa;
	bool first = true;

	put_set_open(f, "set", "node-addresses", "ipv4_addr");
	for (size_t i = 0; i < pa->naddrs; i++) {
		put_elements_open(f, &first);
		put_ip(f, pa->addrs[i]);
	}
	put_set_close(f, first);

	/* sorted by address, protocol, port (w->v is in key order) */
	struct svcport *v = xmalloc((w->n ? w->n : 1) * sizeof(*v));
	if (w->n)
		memcpy(v, w->v, w->n * sizeof(*v));
	sort(v, w->n, sizeof(*v), cmp_by_service);
	put_set_open(f, "map", "services", "ipv4_addr . inet_proto . inet_service : verdict");
	first = true;
	for (size_t i = 0; i < w->n; i++) {
		if (!v[i].neps)
			continue;
		put_elements_open(f, &first);
		put_ip(f, v[i].cluster_ip);
		fprintf(f, " . %s . %u : goto ", proto_nft[v[i].proto], v[i].port);
		put_chain(f, "svc", &v[i]);
	}
	put_set_close(f, first);
	put_set_open(f, "set", "no-endpoints", "ipv4_addr . inet_proto . inet_service");
	first = true;
	for (size_t i = 0; i < w->n; i++) {
		if (v[i].neps)
			continue;
		put_elements_open(f, &first);
		put_ip(f, v[i].cluster_ip);
		fprintf(f, " . %s . %u", proto_nft[v[i].proto], v[i].port);
	}
	put_set_close(f, first);

	sort(v, w->n, sizeof(*v), cmp_by_nodeport);
	put_set_open(f, "map", "nodeports", "inet_proto . inet_service : verdict");
	first = true;
	for (size_t i = 0; i < w->n; i++) {
		if (!v[i].node_port || !v[i].neps)
			continue;
		put_elements_open(f, &first);
		fprintf(f, "%s . %u : goto ", proto_nft[v[i].proto], v[i].node_port);
		put_chain(f, "ext", &v[i]);
	}
	put_set_close(f, first);
	put_set_open(f, "set", "no-endpoint-nodeports", "inet_proto . inet_service");
	first = true;
	for (size_t i = 0; i < w->n; i++) {
		if (!v[i].node_port || v[i].neps)
			continue;
		put_elements_open(f, &first);
		fprintf(f, "%s . %u", proto_nft[v[i].proto], v[i].node_port);
	}
	put_set_close(f, first);
	free(v);
}

static void put_base_chains(FILE *f, const struct params *pa)
{
	static const char *const filter_hooks[] = {"prerouting", "output"};
	static const char *const nat_hooks[] = {"prerouting", "output"};
	for (size_t i = 0; i < ARRAY_SIZE(filter_hooks); i++)
		fprintf(f,
			"\tchain filter-%s {\n"
			"\t\ttype filter hook %s priority -110; policy accept;\n"
			"\t\tip daddr . meta l4proto . th dport @no-endpoints goto refuse-conn\n"
			"\t\tip daddr @node-addresses meta l4proto . th dport "
			"@no-endpoint-nodeports goto refuse-conn\n"
			"\t}\n",
			filter_hooks[i], filter_hooks[i]);
	fputs("\tchain refuse-conn {\n"
	      "\t\tmeta l4proto tcp reject with tcp reset\n"
	      "\t\treject with icmp port-unreachable\n"
	      "\t}\n",
	      f);
	for (size_t i = 0; i < ARRAY_SIZE(nat_hooks); i++)
		fprintf(f,
			"\tchain nat-%s {\n"
			"\t\ttype nat hook %s priority -100; policy accept;\n"
			"\t\tjump svc-dispatch\n"
			"\t}\n",
			nat_hooks[i], nat_hooks[i]);
	fputs("\tchain svc-dispatch {\n"
	      "\t\tip daddr . meta l4proto . th dport vmap @services\n"
	      "\t\tip daddr @node-addresses meta l4proto . th dport vmap @nodeports\n"
	      "\t}\n",
	      f);
	fputs("\tchain nat-postrouting {\n"
	      "\t\ttype nat hook postrouting priority 100; policy accept;\n",
	      f);
	if (pa->bridge[0] && pa->has_pod_cidr) {
		/* marked traffic for another host's pod leaves from the
		 * gateway, an address of the pod range: the other host
		 * forwards nothing to its pods from outside the range */
		fprintf(f, "\t\tmeta mark & 0x%x == 0x%x oifname != \"%s\" ip daddr ", pa->mark,
			pa->mark, pa->bridge);
		put_cidr(f, &pa->cluster);
		fprintf(f, " meta mark set meta mark ^ 0x%x snat to ", pa->mark);
		put_ip(f, pa->pod.addr + 1);
		fputc('\n', f);
	}
	fprintf(f, "\t\tmeta mark & 0x%x == 0x%x meta mark set meta mark ^ 0x%x masquerade\n",
		pa->mark, pa->mark, pa->mark);
	if (pa->bridge[0] && pa->has_pod_cidr) {
		fprintf(f, "\t\tct status dnat oifname \"%s\" ip saddr ", pa->bridge);
		put_cidr(f, &pa->pod);
		fputs(" masquerade\n", f);
	}
	fputs("\t}\n", f);
}

/* How endpoint i is chosen: of n, it takes what the ones before it left
 * with probability 1/(n-i), so that each gets 1/n; with affinity one hash
 * of the client's address picks. The last takes what is left. */
static void put_choice(FILE *f, const struct svcport *sp, size_t i)
{
	if (i + 1 == sp->neps)
		return;
	if (sp->affinity)
		fprintf(f, "jhash ip saddr mod %zu seed 0x%08x == %zu ", sp->neps, seed_of(sp), i);
	else
		fprintf(f, "numgen random mod %zu == 0 ", sp->neps - i);
}

static void put_dnat(FILE *f, const struct svcport *sp, const struct ep *ep)
{
	fprintf(f, "meta l4proto %s dnat to ", proto_nft[sp->proto]);
	put_ip(f, ep->ip);
	fprintf(f, ":%u\n", ep->port);
}

/* One chain per service port, two rules per endpoint: the endpoint's own
 * packets (hairpin: marked for masquerade), everyone else's. Each packet
 * meets one draw per endpoint, whichever rule of the pair it takes. No
 * chain per endpoint and no anonymous vmap: nft reads every chain and set
 * of the table before each change, so their number is its cost. */
static void put_service_chains(FILE *f, const struct world *w, const struct svcport *sp)
{
	if (!sp->neps)
		return;
	fputs("\tchain ", f);
	put_chain(f, "svc", sp);
	fputs(" {\n", f);
	for (size_t i = 0; i < sp->neps; i++) {
		const struct ep *ep = &sp->eps[i];
		fputs("\t\tip saddr ", f);
		put_ip(f, ep->ip);
		fputc(' ', f);
		put_choice(f, sp, i);
		fprintf(f, "meta mark set meta mark | 0x%x ", w->pa->mark);
		put_dnat(f, sp, ep);
		fputs("\t\t", f);
		if (i + 1 < sp->neps) {
			fputs("ip saddr != ", f);
			put_ip(f, ep->ip);
			fputc(' ', f);
		}
		put_choice(f, sp, i);
		put_dnat(f, sp, ep);
	}
	fputs("\t}\n", f);
	if (sp->node_port) {
		fputs("\tchain ", f);
		put_chain(f, "ext", sp);
		fputs(" {\n\t\tip saddr != ", f);
		put_cidr(f, &w->pa->cluster);
		fprintf(f, " meta mark set meta mark | 0x%x\n\t\tgoto ", w->pa->mark);
		put_chain(f, "svc", sp);
		fputs("\n\t}\n", f);
	}
}

int proxy_render(const struct proxy_opts *o, const struct proxy_object *services, size_t n_services,
		 const struct proxy_object *endpoints, size_t n_endpoints, char **text,
		 struct error **err)
{
	struct params pa;
	*text = NULL;
	if (params_parse(o, &pa, err) < 0)
		return -EINVAL;

	struct proxy_object *svcs = xmalloc((n_services ? n_services : 1) * sizeof(*svcs));
	struct proxy_object *eps = xmalloc((n_endpoints ? n_endpoints : 1) * sizeof(*eps));
	if (n_services)
		memcpy(svcs, services, n_services * sizeof(*svcs));
	if (n_endpoints)
		memcpy(eps, endpoints, n_endpoints * sizeof(*eps));
	sort(svcs, n_services, sizeof(*svcs), cmp_object);
	sort(eps, n_endpoints, sizeof(*eps), cmp_object);

	struct world w = {.pa = &pa};
	w.notes = open_memstream(&w.notes_buf, &w.notes_len);
	if (!w.notes)
		abort();
	for (size_t i = 0; i < n_services; i++) {
		if (!svcs[i].key || !svcs[i].obj || svcs[i].obj->type != YNODE_MAP) {
			note(&w, svcs[i].key, "not a mapping");
			continue;
		}
		if (i > 0 && svcs[i - 1].key && strcmp(svcs[i - 1].key, svcs[i].key) == 0)
			continue; /* the caller's duplicate: the first stands */
		struct proxy_object want = {.key = svcs[i].key}, *e;
		e = bsearch(&want, eps, n_endpoints, sizeof(*eps), cmp_object);
		add_service(&w, svcs[i].key, svcs[i].obj, e ? e->obj : NULL);
	}
	drop_conflicts(&w);
	fclose(w.notes);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	fprintf(f,
		"table ip %s {\n"
		"\t# corral-noded's service proxy: rendered from the mount and replaced\n"
		"\t# whole on every change; edits here do not last.\n",
		pa.table);
	fputs(w.notes_buf, f);
	put_sets(f, &w);
	put_base_chains(f, &pa);
	for (size_t i = 0; i < w.n; i++)
		put_service_chains(f, &w, &w.v[i]);
	fputs("}\n", f);
	fclose(f);

	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].eps);
	free(w.v);
	free(w.notes_buf);
	free(svcs);
	free(eps);
	*text = buf;
	return 0;
}

/* ---- nft ---------------------------------------------------------------- */

static int memfd_with(const char *name, const char *a, const char *b, struct error **err)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "memfd_create: %s", strerror(errno));
	if ((a && util_write_all(fd, a, strlen(a)) < 0) ||
	    (b && util_write_all(fd, b, strlen(b)) < 0) || lseek(fd, 0, SEEK_SET) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, e, "memfd: %s", strerror(e));
	}
	return fd;
}

/* Runs `nft [-c] -f -` with input a then b on its stdin; nft's output is
 * the error's message when it fails. */
static int nft_run(const char *nft, const char *what, const char *a, const char *b, bool check,
		   struct error **err)
{
	if (!nft || !*nft)
		nft = "nft";
	cleanup_close int in = memfd_with("corral-proxy-in", a, b, err);
	if (in < 0)
		return in;
	cleanup_close int out = memfd_with("corral-proxy-out", NULL, NULL, err);
	if (out < 0)
		return out;

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, out, 2);
	posix_spawnattr_init(&attr);
	/* the agent's loop blocks signals for its signalfd: nft gets none */
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGCHLD);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	char *argv[] = {(char *)nft, check ? "-c" : "-f", check ? "-f" : "-", check ? "-" : NULL,
			NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, nft, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0)
		return error_set(err, rc, "%s: %s", nft, strerror(rc));
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return error_set(err, errno, "waitpid %s: %s", nft, strerror(errno));
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;

	char msg[NFT_ERR_MAX + 1];
	ssize_t n = pread(out, msg, NFT_ERR_MAX, 0);
	if (n < 0)
		n = 0;
	msg[n] = '\0';
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (WIFEXITED(st))
		return error_set(err, EIO, "%s%s -f of %s exited %d: %s", nft, check ? " -c" : "",
				 what, WEXITSTATUS(st), n ? msg : "(no output)");
	return error_set(err, EIO, "%s of %s died of signal %d", nft, what, WTERMSIG(st));
}

int proxy_apply(const char *nft, const char *table, const char *text, bool check,
		struct error **err)
{
	if (!table || !ident_ok(table, TABLE_MAX, false))
		return error_set(err, EINVAL, "table \"%s\" is not an nft identifier",
				 table ? table : "");
	/* "table" first makes "delete" safe when there is no such table yet;
	 * all three are one transaction: the old rules or the new, never none */
	cleanup_free char *head = xasprintf("table ip %s {}\ndelete table ip %s\n", table, table);
	cleanup_free char *what = xasprintf("table %s", table);
	return nft_run(nft, what, head, text, check, err);
}

int proxy_apply_changes(const char *nft, const char *table, const char *changes, bool check,
			struct error **err)
{
	cleanup_free char *what = xasprintf("changes to table %s", table ? table : "");
	return nft_run(nft, what, changes, NULL, check, err);
}

/* ---- changes between two renderings ------------------------------------- */

struct slice {
	const char *s;
	size_t n;
};

struct block {
	char kind; /* 'c' chain, 's' set, 'm' map */
	struct slice name;
	struct slice *lines; /* chain: its rules; set or map: "type ..." */
	size_t nlines, caplines;
	struct slice *elems; /* set or map: its elements, sorted */
	size_t nelems, capelems;
};

struct blocks {
	struct block *v;
	size_t n, cap;
};

static void blocks_free(struct blocks *bs)
{
	for (size_t i = 0; i < bs->n; i++) {
		free(bs->v[i].lines);
		free(bs->v[i].elems);
	}
	free(bs->v);
}

static bool starts(struct slice l, const char *p)
{
	size_t n = strlen(p);
	return l.n >= n && memcmp(l.s, p, n) == 0;
}

static int cmp_slice(const struct slice *a, const struct slice *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->s, b->s, n);
	return c ? c : (a->n > b->n) - (a->n < b->n);
}

static int cmp_slice_v(const void *a, const void *b)
{
	return cmp_slice(a, b);
}

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return cmp_slice(&x->name, &y->name);
}

static void push(struct slice **v, size_t *n, size_t *cap, struct slice l)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = l;
}

/* Splits a table as proxy_render() writes it into its blocks, sorted by
 * kind and name; -1 for anything else. */
static int parse_blocks(const char *text, struct blocks *bs)
{
	const char *p = strchr(text, '\n');
	struct block *b = NULL;
	bool in_elems = false, ended = false;
	if (!p || strncmp(text, "table ip ", 9) != 0)
		return -1;
	for (p++; *p;) {
		const char *e = strchr(p, '\n');
		if (!e)
			return -1;
		struct slice l = {p, (size_t)(e - p)};
		p = e + 1;
		if (ended)
			return -1;
		if (!b) {
			if (starts(l, "\t#"))
				continue;
			if (l.n == 1 && l.s[0] == '}') {
				ended = true;
				continue;
			}
			char kind = starts(l, "\tchain ") ? 'c'
				    : starts(l, "\tset ") ? 's'
				    : starts(l, "\tmap ") ? 'm'
							  : 0;
			if (!kind || l.n < 3 || memcmp(l.s + l.n - 2, " {", 2) != 0)
				return -1;
			size_t skip = kind == 'c' ? 7 : kind == 's' ? 5 : 5;
			if (bs->n == bs->cap) {
				bs->cap = bs->cap ? 2 * bs->cap : 64;
				bs->v = xrealloc(bs->v, bs->cap * sizeof(*bs->v));
			}
			b = &bs->v[bs->n++];
			memset(b, 0, sizeof(*b));
			b->kind = kind;
			b->name = (struct slice){l.s + skip, l.n - skip - 2};
			continue;
		}
		if (l.n == 2 && l.s[0] == '\t' && l.s[1] == '}') {
			if (in_elems)
				return -1;
			b = NULL;
			continue;
		}
		if (!starts(l, "\t\t"))
			return -1;
		if (b->kind == 'c') {
			push(&b->lines, &b->nlines, &b->caplines, (struct slice){l.s + 2, l.n - 2});
		} else if (in_elems) {
			if (l.n == 3 && l.s[2] == '}') {
				in_elems = false;
				continue;
			}
			if (!starts(l, "\t\t\t"))
				return -1;
			struct slice el = {l.s + 3, l.n - 3};
			if (el.n && el.s[el.n - 1] == ',')
				el.n--;
			push(&b->elems, &b->nelems, &b->capelems, el);
		} else if (starts(l, "\t\telements = {") && l.n == 14) {
			in_elems = true;
		} else {
			push(&b->lines, &b->nlines, &b->caplines, (struct slice){l.s + 2, l.n - 2});
		}
	}
	if (b || !ended)
		return -1;
	sort(bs->v, bs->n, sizeof(*bs->v), cmp_block);
	for (size_t i = 0; i < bs->n; i++) {
		if (i && cmp_block(&bs->v[i - 1], &bs->v[i]) == 0)
			return -1;
		sort(bs->v[i].elems, bs->v[i].nelems, sizeof(struct slice), cmp_slice_v);
	}
	return 0;
}

static bool same_lines(const struct slice *a, size_t na, const struct slice *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (cmp_slice(&a[i], &b[i]) != 0)
			return false;
	return true;
}

static bool is_base(const struct block *b)
{
	return b->kind == 'c' && b->nlines && starts(b->lines[0], "type ");
}

/* ext- chains go to svc- chains: delete in that order, so that no chain
 * is deleted while another still jumps to it. */
static int delete_rank(const struct block *b)
{
	return starts(b->name, "ext-") ? 0 : starts(b->name, "svc-") ? 1 : 2;
}

static void put_rules(FILE *f, const char *table, const struct block *b)
{
	for (size_t i = 0; i < b->nlines; i++)
		fprintf(f, "add rule ip %s %.*s %.*s\n", table, (int)b->name.n, b->name.s,
			(int)b->lines[i].n, b->lines[i].s);
}

/* The element's key: a map's element up to " : ". */
static struct slice elem_key(const struct block *b, struct slice el)
{
	if (b->kind == 'm') {
		for (size_t i = 0; i + 3 <= el.n; i++)
			if (memcmp(el.s + i, " : ", 3) == 0)
				return (struct slice){el.s, i};
	}
	return el;
}

/* The elements of a (sorted) that b (sorted) lacks, as one command. */
static void put_elements_missing(FILE *f, const char *verb, const char *table,
				 const struct block *a, const struct block *b, bool keys)
{
	bool any = false;
	size_t j = 0;
	if (!a)
		return;
	for (size_t i = 0; i < a->nelems; i++) {
		while (b && j < b->nelems && cmp_slice(&b->elems[j], &a->elems[i]) < 0)
			j++;
		if (b && j < b->nelems && cmp_slice(&b->elems[j], &a->elems[i]) == 0)
			continue;
		struct slice el = keys ? elem_key(a, a->elems[i]) : a->elems[i];
		if (!any)
			fprintf(f, "%s ip %s %.*s { ", verb, table, (int)a->name.n, a->name.s);
		else
			fputs(", ", f);
		fprintf(f, "%.*s", (int)el.n, el.s);
		any = true;
	}
	if (any)
		fputs(" }\n", f);
}

int proxy_diff(const char *table, const char *old_text, const char *new_text, char **changes)
{
	struct blocks o = {0}, n = {0};
	char *buf = NULL;
	size_t len = 0;
	int rc = 1;
	*changes = NULL;
	if (!old_text || !new_text || parse_blocks(old_text, &o) < 0 ||
	    parse_blocks(new_text, &n) < 0)
		goto out;

	/* pair the blocks up: pair[i] is o's block for n's block i, or NULL */
	const struct block **pair = xcalloc(n.n + 1, sizeof(*pair));
	bool *kept = xcalloc(o.n + 1, sizeof(*kept));
	for (size_t i = 0, j = 0; i < n.n; i++) {
		while (j < o.n && cmp_block(&o.v[j], &n.v[i]) < 0)
			j++;
		if (j < o.n && cmp_block(&o.v[j], &n.v[i]) == 0) {
			pair[i] = &o.v[j];
			kept[j] = true;
		}
	}
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	bool full = false;
	/* base chains, sets and maps are the same shape in both or all is
	 * replaced (they follow the options, which do not change) */
	for (size_t i = 0; i < n.n && !full; i++) {
		const struct block *b = &n.v[i], *a = pair[i];
		if ((b->kind != 'c' || is_base(b)) &&
		    (!a || !same_lines(a->lines, a->nlines, b->lines, b->nlines)))
			full = true;
	}
	for (size_t j = 0; j < o.n && !full; j++)
		if (!kept[j] && (o.v[j].kind != 'c' || is_base(&o.v[j])))
			full = true;
	if (!full) {
		/* 1. new chains, empty, then their rules: elements may go to them */
		for (size_t i = 0; i < n.n; i++)
			if (n.v[i].kind == 'c' && !pair[i])
				fprintf(f, "add chain ip %s %.*s\n", table, (int)n.v[i].name.n,
					n.v[i].name.s);
		for (size_t i = 0; i < n.n; i++)
			if (n.v[i].kind == 'c' && !pair[i])
				put_rules(f, table, &n.v[i]);
		/* 2. chains whose rules changed: flushed and written again */
		for (size_t i = 0; i < n.n; i++) {
			const struct block *b = &n.v[i], *a = pair[i];
			if (b->kind == 'c' && a &&
			    !same_lines(a->lines, a->nlines, b->lines, b->nlines)) {
				fprintf(f, "flush chain ip %s %.*s\n", table, (int)b->name.n,
					b->name.s);
				put_rules(f, table, b);
			}
		}
		/* 3. elements gone, then elements new (a key whose verdict changed
		 * is both) */
		for (size_t i = 0; i < n.n; i++)
			if (n.v[i].kind != 'c')
				put_elements_missing(f, "delete element", table, pair[i], &n.v[i],
						     true);
		for (size_t i = 0; i < n.n; i++)
			if (n.v[i].kind != 'c')
				put_elements_missing(f, "add element", table, &n.v[i], pair[i],
						     false);
		/* 4. chains gone, now that nothing goes to them */
		for (int rank = 0; rank < 3; rank++)
			for (size_t j = 0; j < o.n; j++)
				if (!kept[j] && o.v[j].kind == 'c' && delete_rank(&o.v[j]) == rank)
					fprintf(f, "delete chain ip %s %.*s\n", table,
						(int)o.v[j].name.n, o.v[j].name.s);
	}
	fclose(f);
	free(pair);
	free(kept);
	/* a change as big as the table is better made by replacing it */
	if (!full && len < strlen(new_text) / 2) {
		*changes = steal_pointer(&buf);
		rc = 0;
	}
out:
	free(buf);
	blocks_free(&o);
	blocks_free(&n);
	return rc;
}

/* ---- the running proxy -------------------------------------------------- */

struct proxy {
	struct loop *loop;
	char *mount;
	struct proxy_opts o; /* strings below are our copies */
	char *table, *bridge, *pod_cidr, *cluster_cidr, *service_cidr, *nft;
	char **addrs;
	struct informer *services;
	struct informer *endpoints;
	struct loop_timer *timer;
	bool started;
	bool touched; /* this proxy wrote the table: free deletes it */
	char *applied;
	struct proxy_stats stats;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct proxy *proxy_new(struct loop *loop, const char *mount, const struct proxy_opts *o,
			struct error **err)
{
	struct params pa;
	if (params_parse(o, &pa, err) < 0)
		return NULL;
	struct proxy *p = xcalloc(1, sizeof(*p));
	p->loop = loop;
	p->mount = xstrdup(mount);
	p->o = *o;
	p->o.table = p->table = xstrdup(o->table);
	p->o.bridge = p->bridge = dup_or_null(o->bridge);
	p->o.pod_cidr = p->pod_cidr = dup_or_null(o->pod_cidr);
	p->o.cluster_cidr = p->cluster_cidr = dup_or_null(o->cluster_cidr);
	p->o.service_cidr = p->service_cidr = dup_or_null(o->service_cidr);
	p->o.nft = p->nft = xstrdup(o->nft && *o->nft ? o->nft : "nft");
	p->addrs = xcalloc(o->n_node_addresses + 1, sizeof(char *));
	for (size_t i = 0; i < o->n_node_addresses; i++)
		p->addrs[i] = xstrdup(o->node_addresses[i]);
	p->o.node_addresses = (const char *const *)p->addrs;
	if (!p->o.debounce_ms)
		p->o.debounce_ms = PROXY_DEBOUNCE_MS;
	return p;
}

struct collect {
	struct proxy_object *v;
	size_t n, cap;
};

static int collect_cb(void *data, const char *key, const struct ynode *obj)
{
	struct collect *c = data;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	c->v[c->n++] = (struct proxy_object){key, obj};
	return 0;
}

char *proxy_table_for_node(const char *node)
{
	static const char prefix[] = "corral-proxy-";
	char buf[TABLE_MAX + 1];
	size_t n = snprintf(buf, sizeof(buf), "%s", prefix);
	uint32_t h = node ? fnv1a32(node, strlen(node)) : FNV1A32_BASIS;
	for (const char *c = node ? node : ""; *c; c++) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			  (*c >= '0' && *c <= '9') || *c == '-' || *c == '_';
		if (n < TABLE_MAX)
			buf[n++] = ok ? *c : '-';
	}
	buf[n] = '\0';
	if (node && strlen(node) > TABLE_MAX - (sizeof(prefix) - 1))
		snprintf(buf + TABLE_MAX - 9, 10, "-%08x", h); /* long names stay apart */
	return xstrdup(buf);
}

int proxy_sync(struct proxy *p, struct error **err)
{
	if (!p->services)
		return error_set(err, EINVAL, "proxy: not started");
	struct collect s = {0}, e = {0};
	informer_foreach(p->services, NULL, collect_cb, &s);
	informer_foreach(p->endpoints, NULL, collect_cb, &e);
	char *text = NULL;
	uint64_t t0 = now_us();
	int rc = proxy_render(&p->o, s.v, s.n, e.v, e.n, &text, err);
	p->stats.last_render_us = now_us() - t0;
	p->stats.renders++;
	free(s.v);
	free(e.v);
	if (rc < 0)
		return rc;
	if (p->applied && strcmp(p->applied, text) == 0) {
		free(text);
		return 0;
	}
	t0 = now_us();
	p->touched = true;
	cleanup_free char *changes = NULL;
	uint64_t diff_us = 0;
	if (p->applied && proxy_diff(p->table, p->applied, text, &changes) == 0) {
		struct error *e2 = NULL;
		diff_us = now_us() - t0;
		if (proxy_apply_changes(p->nft, p->table, changes, false, &e2) == 0) {
			p->stats.incremental++;
			goto applied;
		}
		/* replacing the table whole is the way back to a known state */
		log_warn("proxy: %s; replacing table %s whole", e2->msg, p->table);
		error_free(e2);
		free(steal_pointer(&changes));
	}
	rc = proxy_apply(p->nft, p->table, text, false, err);
	if (rc < 0) {
		p->stats.failures++;
		free(p->applied); /* what the kernel holds is now unknown */
		p->applied = NULL;
		free(text);
		return rc;
	}
applied:
	p->stats.last_apply_us = now_us() - t0;
	p->stats.applies++;
	log_debug("proxy: table %s %s (%zu bytes; render %llu us, diff %llu us, nft %llu us)",
		  p->table, changes ? "changed" : "replaced",
		  changes ? strlen(changes) : strlen(text),
		  (unsigned long long)p->stats.last_render_us, (unsigned long long)diff_us,
		  (unsigned long long)(p->stats.last_apply_us - diff_us));
	for (const char *l = strstr(text, "\t# skipped "); l; l = strstr(l + 1, "\t# skipped ")) {
		const char *e = strchr(l, '\n');
		log_debug("proxy: %.*s", (int)(e ? e - l - 3 : 0), l + 3);
	}
	free(p->applied);
	p->applied = text;
	return 0;
}

static void proxy__on_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	struct proxy *p = data;
	struct error *err = NULL;
	if (proxy_sync(p, &err) < 0) {
		log_error("proxy: %s (again in %d ms)", err->msg, PROXY_RETRY_MS);
		error_free(err);
		loop_timer_start(t, PROXY_RETRY_MS, 0);
	}
}

static void proxy__changed(struct proxy *p)
{
	if (p->started && !loop_timer_armed(p->timer))
		loop_timer_start(p->timer, p->o.debounce_ms, 0);
}

static void proxy__on_add(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	(void)obj;
	proxy__changed(data);
}

static void proxy__on_update(void *data, const char *key, const struct ynode *old,
			     const struct ynode *obj)
{
	(void)key;
	(void)old;
	(void)obj;
	proxy__changed(data);
}

static void proxy__on_delete(void *data, const char *key, const struct ynode *old)
{
	(void)key;
	(void)old;
	proxy__changed(data);
}

int proxy_start(struct proxy *p, struct error **err)
{
	static const struct informer_handlers h = {
	    .on_add = proxy__on_add,
	    .on_update = proxy__on_update,
	    .on_delete = proxy__on_delete,
	};
	p->services = informer_new(p->loop, p->mount, "services", true);
	p->endpoints = informer_new(p->loop, p->mount, "endpoints", true);
	informer_add_handlers(p->services, &h, p);
	informer_add_handlers(p->endpoints, &h, p);
	p->timer = loop_timer_new(p->loop, proxy__on_timer, p);
	if (informer_start(p->services, err) < 0 || informer_start(p->endpoints, err) < 0) {
		error_prefix(err, "proxy");
		return -1;
	}
	p->started = true;
	if (proxy_sync(p, err) < 0) {
		error_prefix(err, "proxy");
		return -1;
	}
	log_info("proxy: table ip %s live (%zu services, %zu endpoints)", p->table,
		 informer_count(p->services), informer_count(p->endpoints));
	return 0;
}

const char *proxy_text(const struct proxy *p)
{
	return p->applied;
}

void proxy_get_stats(const struct proxy *p, struct proxy_stats *out)
{
	*out = p->stats;
}

void proxy_keep_table(struct proxy *p)
{
	p->touched = false;
}

void proxy_free(struct proxy *p)
{
	if (!p)
		return;
	if (p->touched) {
		struct error *err = NULL;
		if (proxy_apply(p->nft, p->table, NULL, false, &err) < 0) {
			log_error("proxy: deleting table %s: %s", p->table, err->msg);
			error_free(err);
		}
	}
	loop_timer_free(p->timer);
	informer_free(p->services);
	informer_free(p->endpoints);
	free(p->applied);
	free(p->mount);
	free(p->table);
	free(p->bridge);
	free(p->pod_cidr);
	free(p->cluster_cidr);
	free(p->service_cidr);
	free(p->nft);
	for (size_t i = 0; i < p->o.n_node_addresses; i++)
		free(p->addrs[i]);
	free(p->addrs);
	free(p);
}

void proxy_freep(struct proxy **p)
{
	proxy_free(*p);
	*p = NULL;
}
