/* proxy.h: the service proxy of corral-noded (kube-proxy's role).
 *
 * Services (namespaces/<ns>/services/<name>.yaml) and their Endpoints
 * (namespaces/<ns>/endpoints/<name>.yaml) become ONE nftables table of
 * corral's own, family ip, which DNATs ClusterIP:port and NodePort traffic
 * to the endpoints. The table is rendered as text, deterministically (an
 * unchanged world renders byte-identical text), and replaced whole in one
 * `nft -f -` transaction, so packets see either the old rules or the new.
 * Nothing else of the host's ruleset is touched.
 *
 * It must never make traffic leave the machine: endpoints outside the
 * cluster's pod range and ClusterIPs outside the service range are skipped,
 * so every DNAT lands on a pod address (see corral-noded(8), PROXY). */
#ifndef CORRAL_NODED_PROXY_H
#define CORRAL_NODED_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "loop.h"
#include "ynode.h"

#define PROXY_MASQ_MARK	    0x4000u /* kube-proxy's masquerade bit */
#define PROXY_DEBOUNCE_MS   5	    /* changes within this of the first share one apply */
#define PROXY_RETRY_MS	    1000    /* after a failed apply */
#define PROXY_NODEPORT_MIN  30000   /* Kubernetes' service-node-port-range */
#define PROXY_NODEPORT_MAX  32767
#define PROXY_MAX_ADDRESSES 16 /* node addresses for NodePort */

struct proxy_opts {
	const char *table;		   /* the nft table (family ip), e.g. "corral-proxy-node1";
					      letters, digits, '_' and '-', at most 64 */
	const char *bridge;		   /* the node's bridge, pods' veths on it; NULL: none */
	const char *pod_cidr;		   /* the node's podCIDR (the pods on bridge); NULL: none */
	const char *cluster_cidr;	   /* every pod's range; NULL: "10.244.0.0/16" */
	const char *service_cidr;	   /* the ClusterIP range; NULL: "10.96.0.0/16" */
	const char *const *node_addresses; /* NodePort is served on these (IPv4) */
	size_t n_node_addresses;	   /* 0: no NodePort rules */
	uint32_t masq_mark;		   /* 0: PROXY_MASQ_MARK */
	const char *nft;		   /* nft binary; NULL: "nft" from PATH */
	uint64_t debounce_ms;		   /* 0: PROXY_DEBOUNCE_MS */
};

/* "corral-proxy-<node>", a table name for a node name (a DNS subdomain):
 * '.' and anything else nft would not take become '-'; a name too long is
 * cut and ends in a hash of the whole. malloc'd. */
char *proxy_table_for_node(const char *node);

/* One object of the world: key "ns/name" (as the informer keys them). */
struct proxy_object {
	const char *key;
	const struct ynode *obj;
};

/* The text of the table, `table ip <table> { ... }`, for these services and
 * endpoints (any order; endpoints matched to services by key). Objects that
 * make no sense are skipped and named in a comment at the table's top,
 * never an error. Fails (-EINVAL) only for bad options. *text is malloc'd. */
int proxy_render(const struct proxy_opts *o, const struct proxy_object *services, size_t n_services,
		 const struct proxy_object *endpoints, size_t n_endpoints, char **text,
		 struct error **err);

/* Replaces table `table` with text (as proxy_render() made it; NULL: deletes
 * the table) in one `nft -f -` transaction; `check` runs nft -c (validates,
 * changes nothing). nft's own message is in the error. Blocks until nft is
 * done (milliseconds; a thousand services take ~0.1 s). */
int proxy_apply(const char *nft, const char *table, const char *text, bool check,
		struct error **err);

/* The commands that turn table `table` as old_text into new_text (both as
 * proxy_render() wrote them): chains added, flushed and refilled, deleted,
 * set and map elements deleted and added, for proxy_apply_changes(). 0 with
 * *changes malloc'd; 1 (*changes NULL) when replacing the whole table is
 * the better way: texts not of proxy_render(), a base chain, set or map of
 * another shape, or changes at least half the size of the table. */
int proxy_diff(const char *table, const char *old_text, const char *new_text, char **changes);
/* Runs changes (from proxy_diff()) as one `nft -f -` transaction. */
int proxy_apply_changes(const char *nft, const char *table, const char *changes, bool check,
			struct error **err);

/* The running proxy: two informers (services, endpoints) on loop, a debounce
 * timer, the text last applied. */
struct proxy;

struct proxy_stats {
	uint64_t renders;     /* times the world was rendered */
	uint64_t applies;     /* times nft ran and succeeded */
	uint64_t incremental; /* ... of which with changes only (proxy_diff()) */
	uint64_t failures;    /* times nft failed */
	uint64_t last_render_us;
	uint64_t last_apply_us;
};

/* Checks and copies o; nothing is read or applied until proxy_start().
 * NULL with *err for bad options. The proxy hangs on loop (two informers,
 * a timer): free it before the loop. nft runs as a child that the proxy
 * waits for at once, on the loop's thread (tens of milliseconds; a table of
 * a thousand services replaced whole, about half a second). */
struct proxy *proxy_new(struct loop *loop, const char *mount, const struct proxy_opts *o,
			struct error **err);
/* Lists services and endpoints, applies the table (live when this returns
 * 0), then follows the mount: a change is applied debounce_ms after it
 * came, with every other change that came meanwhile, as the changes between the text applied and
 * the new one (proxy_diff()) in one transaction, or by replacing the table whole (the first time,
 * after any failure, and when that is cheaper); a failed apply is logged and retried. */
int proxy_start(struct proxy *p, struct error **err);
/* Renders and applies now if the text changed (0), -errno on failure. */
int proxy_sync(struct proxy *p, struct error **err);
/* The text last applied (NULL before the first apply). */
const char *proxy_text(const struct proxy *p);
void proxy_get_stats(const struct proxy *p, struct proxy_stats *out);
/* proxy_free() will leave the table in place (a hand-over to a successor
 * that replaces it, or a look at it after the fact). */
void proxy_keep_table(struct proxy *p);
/* Deletes the table (if this proxy ever applied it) and frees. NULL is fine. */
void proxy_free(struct proxy *p);
void proxy_freep(struct proxy **p);
#define cleanup_proxy __attribute__((cleanup(proxy_freep)))

#endif
