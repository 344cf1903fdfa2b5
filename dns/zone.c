/* zone.c: the records of the cluster's services, indexed by name (zone.h). */
#include "zone.h"
#include "strmap.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What one service made: the names its records sit at (with repeats). */
struct zone_owner {
	char *key; /* "ns/name" */
	uint8_t **names;
	size_t n, cap;
};

struct zone {
	uint8_t apex[DNS_MAX_NAME];
	uint8_t svc[DNS_MAX_NAME]; /* svc.<domain> */
	uint8_t pod[DNS_MAX_NAME]; /* pod.<domain> */
	uint8_t ns_name[DNS_MAX_NAME];
	uint8_t hostmaster[DNS_MAX_NAME];
	int apex_labels;
	uint32_t ttl;
	uint32_t serial;
	struct strmap *nodes;	/* lower-cased wire name (the node's) -> struct zone_node */
	struct strmap *owners;	/* "ns/name" -> struct zone_owner */
	struct zone_owner self; /* the apex's own records */
	size_t nrecords;
	bool keep_answers;     /* zone_keep_answers() */
	pthread_rwlock_t lock; /* the loop's thread writes, other threads read */
};

static const uint8_t in_addr_arpa[] = "\7in-addr\4arpa";

/* The node's records change: its ready answers are wrong from now on. The
 * writer holds the lock, so no reader holds one of them. */
static void zone__node_forget(struct zone_node *n)
{
	for (int i = 0; i < ZONE_ANSWER_TYPES; i++) {
		free(n->answers[i]);
		n->answers[i] = NULL;
	}
}

static void zone__node_free(void *p)
{
	struct zone_node *n = p;
	zone__node_forget(n);
	for (size_t i = 0; i < n->nrr; i++)
		free(n->rrs[i]);
	free(n->rrs);
	free(n);
}

static void zone__owner_clear(struct zone_owner *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->names[i]);
	free(o->names);
	o->names = NULL;
	o->n = o->cap = 0;
}

static void zone__owner_free(void *p)
{
	struct zone_owner *o = p;
	zone__owner_clear(o);
	free(o->key);
	free(o);
}

static bool zone__is_reverse(const uint8_t *name)
{
	return dns_name_is_under(name, in_addr_arpa);
}

/* Adds delta to the refs of name and of every name up to the apex (a
 * reverse name has no parents of ours); drops nodes that fall to 0. */
static void zone__ref(struct zone *z, const uint8_t *name, long delta)
{
	bool reverse = zone__is_reverse(name);
	int depth = dns_name_labels(name) - z->apex_labels;
	for (const uint8_t *p = name;; p = dns_name_parent(p), depth--) {
		size_t len = dns_name_len(p);
		struct zone_node *n = strmap_getn(z->nodes, p, len);
		if (!n) {
			if (delta < 0)
				return;
			n = xcalloc(1, sizeof(*n) + len);
			memcpy(n->name, p, len);
			strmap_setn(z->nodes, n->name, len, n);
		}
		n->refs = (size_t)((long)n->refs + delta);
		if (n->refs == 0) {
			strmap_deln(z->nodes, p, len);
			zone__node_free(n);
		}
		if (reverse || depth <= 0)
			return;
	}
}

static void zone__add(struct zone *z, struct zone_owner *o, const uint8_t *name, uint16_t type,
		      const uint8_t *rdata, size_t rdlen)
{
	size_t len = dns_name_len(name);
	zone__ref(z, name, 1);
	struct zone_node *n = strmap_getn(z->nodes, name, len);
	if (n->nrr == n->cap) {
		n->cap = n->cap ? 2 * n->cap : 2;
		n->rrs = xrealloc(n->rrs, n->cap * sizeof(*n->rrs));
	}
	zone__node_forget(n);
	struct zone_rr *rr = xmalloc(sizeof(*rr) + rdlen);
	rr->type = type;
	rr->rdlen = (uint16_t)rdlen;
	rr->owner = o;
	memcpy(rr->rdata, rdata, rdlen);
	n->rrs[n->nrr++] = rr;
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 4;
		o->names = xrealloc(o->names, o->cap * sizeof(*o->names));
	}
	o->names[o->n] = xmalloc(len);
	memcpy(o->names[o->n++], name, len);
	z->nrecords++;
}

/* Removes every record o made. */
static void zone__drop(struct zone *z, struct zone_owner *o)
{
	for (size_t i = 0; i < o->n; i++) {
		const uint8_t *name = o->names[i];
		struct zone_node *n = strmap_getn(z->nodes, name, dns_name_len(name));
		if (!n)
			continue;
		size_t kept = 0;
		for (size_t j = 0; j < n->nrr; j++) {
			if (n->rrs[j]->owner == o)
				free(n->rrs[j]);
			else
				n->rrs[kept++] = n->rrs[j];
		}
		size_t removed = n->nrr - kept;
		n->nrr = kept;
		if (removed) {
			zone__node_forget(n);
			z->nrecords -= removed;
			zone__ref(z, name, -(long)removed);
		}
	}
	zone__owner_clear(o);
}

/* text + "." + apex, lower-cased, into out; -1 if it is no valid name. */
static int zone__name(const struct zone *z, const char *text, uint8_t *out)
{
	char buf[4 * DNS_MAX_NAME];
	char apex[4 * DNS_MAX_NAME];
	dns_name_to_text(z->apex, apex);
	if ((size_t)snprintf(buf, sizeof(buf), "%s.%s", text, apex) >= sizeof(buf))
		return -1;
	if (dns_name_from_text(buf, out) < 0)
		return -1;
	dns_name_lower(out);
	return 0;
}

static void zone__reverse(const uint8_t ip[4], uint8_t *out)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%u.%u.%u.%u.in-addr.arpa", ip[3], ip[2], ip[1], ip[0]);
	dns_name_from_text(buf, out);
}

static bool zone__ipv4(const char *s, uint8_t ip[4])
{
	return s && inet_pton(AF_INET, s, ip) == 1;
}

static void zone__lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s + 32);
}

/* _<port>._<proto>.<base> */
static int zone__srv_name(const char *port, const char *proto, const uint8_t *base, uint8_t *out)
{
	char text[4 * DNS_MAX_NAME], b[4 * DNS_MAX_NAME];
	dns_name_to_text(base, b);
	if ((size_t)snprintf(text, sizeof(text), "_%s._%s.%s", port, proto ? proto : "TCP", b) >=
	    sizeof(text))
		return -1;
	zone__lower(text);
	return dns_name_from_text(text, out) < 0 ? -1 : 0;
}

/* The name of an endpoint address under base: hostname, or the IP with
 * dashes. */
static int zone__host_name(const struct ynode *addr, const uint8_t ip[4], const uint8_t *base,
			   uint8_t *out)
{
	char text[4 * DNS_MAX_NAME], b[4 * DNS_MAX_NAME];
	const char *host = ynode_path_str(addr, "hostname");
	dns_name_to_text(base, b);
	int n;
	if (host && *host)
		n = snprintf(text, sizeof(text), "%s.%s", host, b);
	else
		n = snprintf(text, sizeof(text), "%u-%u-%u-%u.%s", ip[0], ip[1], ip[2], ip[3], b);
	if ((size_t)n >= sizeof(text) || dns_name_from_text(text, out) < 0)
		return -1;
	dns_name_lower(out);
	return 0;
}

static void zone__add_srv(struct zone *z, struct zone_owner *o, const char *port_name,
			  const char *proto, long long port, const uint8_t *base,
			  const uint8_t *target)
{
	uint8_t name[DNS_MAX_NAME], rdata[DNS_MAX_NAME + 8];
	if (!port_name || !*port_name || port < 1 || port > 65535 ||
	    zone__srv_name(port_name, proto, base, name) < 0)
		return;
	size_t n = dns_rdata_srv(rdata, 0, 100, (uint16_t)port, target);
	zone__add(z, o, name, DNS_T_SRV, rdata, n);
}

/* SRV records for the named ones of a list of ports (a Service's or an
 * endpoint subset's), all pointing at target. */
static void zone__add_srvs(struct zone *z, struct zone_owner *o, const struct ynode *ports,
			   const uint8_t *base, const uint8_t *target)
{
	for (size_t p = 0; ports && ports->type == YNODE_SEQ && p < ports->n; p++) {
		const struct ynode *port = ynode_item(ports, p);
		long long num = 0;
		if (ynode_int(ynode_get(port, "port"), &num) < 0)
			continue;
		zone__add_srv(z, o, ynode_path_str(port, "name"), ynode_path_str(port, "protocol"),
			      num, base, target);
	}
}

/* Ready addresses of the endpoints: A and PTR of their host names; for a
 * headless service also A at base and SRV per named port. */
static void zone__add_endpoints(struct zone *z, struct zone_owner *o, const uint8_t *base,
				const struct ynode *eps, bool headless)
{
	struct ynode *subsets = ynode_get(eps, "subsets");
	if (!subsets || subsets->type != YNODE_SEQ)
		return;
	for (size_t s = 0; s < subsets->n; s++) {
		const struct ynode *sub = ynode_item(subsets, s);
		struct ynode *addrs = ynode_get(sub, "addresses");
		struct ynode *ports = ynode_get(sub, "ports");
		if (!addrs || addrs->type != YNODE_SEQ)
			continue;
		for (size_t a = 0; a < addrs->n; a++) {
			const struct ynode *addr = ynode_item(addrs, a);
			uint8_t ip[4], host[DNS_MAX_NAME], rev[DNS_MAX_NAME];
			if (!zone__ipv4(ynode_path_str(addr, "ip"), ip) ||
			    zone__host_name(addr, ip, base, host) < 0)
				continue;
			zone__add(z, o, host, DNS_T_A, ip, 4);
			zone__reverse(ip, rev);
			zone__add(z, o, rev, DNS_T_PTR, host, dns_name_len(host));
			if (!headless)
				continue;
			zone__add(z, o, base, DNS_T_A, ip, 4);
			zone__add_srvs(z, o, ports, base, host);
		}
	}
}

static void zone__set_service(struct zone *z, const char *ns, const char *name,
			      const struct ynode *svc, const struct ynode *eps)
{
	cleanup_free char *key = xasprintf("%s/%s", ns, name);
	size_t klen = strlen(key);
	struct zone_owner *o = strmap_getn(z->owners, key, klen);
	if (o)
		zone__drop(z, o);
	z->serial++;
	cleanup_free char *rel = xasprintf("%s.%s.svc", name, ns);
	uint8_t base[DNS_MAX_NAME];
	if (!svc || zone__name(z, rel, base) < 0) {
		if (o)
			zone__owner_free(strmap_deln(z->owners, key, klen));
		return;
	}
	if (!o) {
		o = xcalloc(1, sizeof(*o));
		o->key = xstrdup(key);
		strmap_setn(z->owners, key, klen, o);
	}
	const char *type = ynode_path_str(svc, "spec.type");
	const char *cip = ynode_path_str(svc, "spec.clusterIP");
	if (type && !strcmp(type, "ExternalName")) {
		uint8_t target[DNS_MAX_NAME];
		const char *ext = ynode_path_str(svc, "spec.externalName");
		if (ext && dns_name_from_text(ext, target) > 0)
			zone__add(z, o, base, DNS_T_CNAME, target, dns_name_len(target));
		return;
	}
	uint8_t ip[4];
	bool headless = cip && !strcmp(cip, "None");
	if (!headless && zone__ipv4(cip, ip)) {
		uint8_t rev[DNS_MAX_NAME];
		zone__add(z, o, base, DNS_T_A, ip, 4);
		zone__reverse(ip, rev);
		zone__add(z, o, rev, DNS_T_PTR, base, dns_name_len(base));
		zone__add_srvs(z, o, ynode_path(svc, "spec.ports"), base, base);
	}
	if (eps)
		zone__add_endpoints(z, o, base, eps, headless);
}

void zone_set_service(struct zone *z, const char *ns, const char *name, const struct ynode *svc,
		      const struct ynode *eps)
{
	pthread_rwlock_wrlock(&z->lock);
	zone__set_service(z, ns, name, svc, eps);
	pthread_rwlock_unlock(&z->lock);
}

void zone_read_lock(const struct zone *z)
{
	pthread_rwlock_rdlock(&((struct zone *)z)->lock);
}

void zone_read_unlock(const struct zone *z)
{
	pthread_rwlock_unlock(&((struct zone *)z)->lock);
}

struct zone *zone_new(const char *domain, uint32_t ttl, const char *ns_ip, struct error **err)
{
	struct zone *z = xcalloc(1, sizeof(*z));
	uint8_t ip[4];
	if (dns_name_from_text(domain, z->apex) <= 1) {
		free(z);
		return error_set(err, EINVAL, "domain: \"%s\" is not a domain name", domain), NULL;
	}
	if (!zone__ipv4(ns_ip, ip)) {
		free(z);
		return error_set(err, EINVAL, "cluster-ip: \"%s\" is not an IPv4 address", ns_ip),
		       NULL;
	}
	/* A change waits for the readers' batches in progress, never for a
	 * stream of them. */
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&z->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	z->keep_answers = true;
	dns_name_lower(z->apex);
	z->apex_labels = dns_name_labels(z->apex);
	z->ttl = ttl;
	z->serial = (uint32_t)time(NULL);
	z->nodes = strmap_new_borrowing();
	z->owners = strmap_new();
	z->self.key = (char *)"";
	if (zone__name(z, "svc", z->svc) < 0 || zone__name(z, "pod", z->pod) < 0 ||
	    zone__name(z, "ns.dns", z->ns_name) < 0 ||
	    zone__name(z, "hostmaster", z->hostmaster) < 0) {
		zone_free(z);
		return error_set(err, EINVAL, "domain: \"%s\" is too long", domain), NULL;
	}
	/* The apex, svc. and pod. always exist; the name server has the
	 * kube-dns ClusterIP. */
	zone__add(z, &z->self, z->apex, DNS_T_NS, z->ns_name, dns_name_len(z->ns_name));
	zone__add(z, &z->self, z->ns_name, DNS_T_A, ip, 4);
	zone__ref(z, z->svc, 1);
	zone__ref(z, z->pod, 1);
	return z;
}

void zone_free(struct zone *z)
{
	if (!z)
		return;
	strmap_free(z->nodes, zone__node_free);
	strmap_free(z->owners, zone__owner_free);
	zone__owner_clear(&z->self);
	pthread_rwlock_destroy(&z->lock);
	free(z);
}

/* "a-b-c-d" as an IPv4 address: four decimal parts 0..255, no leading
 * zeros or signs. */
static bool zone__dashed_ip(const uint8_t *label, uint8_t ip[4])
{
	size_t len = label[0], i = 1;
	for (int part = 0; part < 4; part++) {
		unsigned v = 0, digits = 0;
		while (i <= len && label[i] >= '0' && label[i] <= '9' && digits < 4) {
			if (digits == 1 && v == 0)
				return false;
			v = v * 10 + (unsigned)(label[i] - '0');
			digits++;
			i++;
		}
		if (!digits || v > 255)
			return false;
		ip[part] = (uint8_t)v;
		if (part < 3) {
			if (i > len || label[i] != '-')
				return false;
			i++;
		}
	}
	return i == len + 1;
}

void zone_prefetch(const struct zone *z, const uint8_t *lname, uint16_t qtype, int stage)
{
	size_t len = dns_name_len(lname);
	if (stage < 2) {
		strmap_prefetchn(z->nodes, lname, len, stage == 1);
		return;
	}
	const struct zone_node *n = strmap_getn(z->nodes, lname, len);
	int slot = zone_answer_slot(z, qtype);
	const struct zone_answer *a = n && slot >= 0 ? zone_answer_get(n, slot) : NULL;
	if (a)
		__builtin_prefetch(a);
}

const struct zone_node *zone_find(const struct zone *z, const uint8_t *lname)
{
	return strmap_getn(z->nodes, lname, dns_name_len(lname));
}

void zone_lookup(const struct zone *z, const uint8_t *lname, struct zone_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!dns_name_is_under(lname, z->apex)) {
		if (zone__is_reverse(lname) && (res->node = zone_find(z, lname)))
			res->status = ZONE_FOUND;
		else
			res->status = ZONE_NOT_AUTH;
		return;
	}
	if ((res->node = zone_find(z, lname))) {
		res->status = ZONE_FOUND;
		return;
	}
	/* <ip>.<ns>.pod.<domain>, and <ns>.pod.<domain> as a name that exists */
	int rel = dns_name_labels(lname) - z->apex_labels;
	res->status = ZONE_NXDOMAIN;
	if (rel == 2 && dns_name_equal(dns_name_parent(lname), z->pod)) {
		res->status = ZONE_FOUND;
	} else if (rel == 3 && dns_name_equal(dns_name_parent(dns_name_parent(lname)), z->pod) &&
		   zone__dashed_ip(lname, res->pod_ip)) {
		res->status = ZONE_FOUND;
		res->pod = true;
	}
}

int zone_answer_slot(const struct zone *z, uint16_t qtype)
{
	int i = dns_type_index(qtype);
	return z->keep_answers && i < ZONE_ANSWER_TYPES ? i : -1;
}

const struct zone_answer *zone_answer_get(const struct zone_node *n, int slot)
{
	return __atomic_load_n(&n->answers[slot], __ATOMIC_ACQUIRE);
}

/* Readers may add to a node they were given as const: the ready answers
 * are not the zone's content, and the first one kept wins. */
const struct zone_answer *zone_answer_put(const struct zone_node *n, int slot,
					  struct zone_answer *a)
{
	struct zone_answer *expected = NULL;
	if (__atomic_compare_exchange_n(&((struct zone_node *)n)->answers[slot], &expected, a,
					false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return a;
	free(a);
	return expected;
}

void zone_keep_answers(struct zone *z, bool on)
{
	z->keep_answers = on;
}

const uint8_t *zone_apex(const struct zone *z)
{
	return z->apex;
}

uint32_t zone_ttl(const struct zone *z)
{
	return z->ttl;
}

size_t zone_soa(const struct zone *z, uint8_t *out)
{
	/* refresh, retry, expire as CoreDNS's kubernetes plugin; the minimum
	 * (negative caching) is the answers' TTL */
	return dns_rdata_soa(out, z->ns_name, z->hostmaster, z->serial, 7200, 1800, 86400, z->ttl);
}

uint32_t zone_serial(const struct zone *z)
{
	return z->serial;
}

size_t zone_service_count(const struct zone *z)
{
	return strmap_count(z->owners);
}

size_t zone_record_count(const struct zone *z)
{
	return z->nrecords;
}

size_t zone_name_count(const struct zone *z)
{
	return strmap_count(z->nodes);
}
