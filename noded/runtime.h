/* runtime.h: what runs a node's pods, behind one small interface, so that
 * pods.c reconciles the same way whatever runs them.
 *
 *   hollow (hollow.c)  runs nothing: every container of a bound pod is
 *                      reported running and ready at once (kubemark's
 *                      hollow kubelet), for scale tests.
 *   nspawn (nspawn.c)  a pause process per pod holding its namespaces and
 *                      one systemd-nspawn per container (DESIGN.md, "Nodes
 *                      and pods").
 *
 * pods.c calls sync_pod() whenever a pod of the node changes (and on
 * resync); the runtime brings the pod to its spec as far as it can without
 * blocking and reports each container. kill_pod() removes everything of a
 * pod that is gone. Both run on the loop's thread; the real runtime hands
 * what blocks (a pod's sandbox, its containers' starts) to a pool of
 * worker threads (lib's workpool.h) and says when that is over with notify(). */
#ifndef CORRAL_NODED_RUNTIME_H
#define CORRAL_NODED_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "podstatus.h"
#include "ynode.h"

struct runtime;

struct runtime_ops {
	/* Whether the runtime can run pods now; if not, why, for the node's
	 * Ready condition (reason, message: static strings). */
	bool (*ready)(struct runtime *rt, const char **reason, const char **message);
	/* Brings pod (key "ns/name") to its spec; fills out. pod_ip is the
	 * address pods.c gave the pod (NULL if the runtime wants none). */
	int (*sync_pod)(struct runtime *rt, const char *key, const struct ynode *pod,
			const char *pod_ip, struct pod_report *out, struct error **err);
	/* Stops and removes what runs for the pod with this uid. */
	void (*kill_pod)(struct runtime *rt, const char *key, const char *uid);
	void (*free)(struct runtime *rt);
};

/* Every runtime starts with this. */
struct runtime {
	const struct runtime_ops *ops;
	const char *name;    /* "hollow", "nspawn" */
	const char *version; /* nodeInfo.containerRuntimeVersion: "hollow://0.1.0" */
	bool wants_ip;	     /* pods get an address from the podCIDR */
	void (*notify)(void *data, const char *key); /* set by pods.c */
	/* A pod killed by kill_pod() has left the host (its address is free
	 * again); set by pods.c. Runtimes whose kill_pod() finishes at once
	 * (async_kill false) never call it. */
	void (*gone)(void *data, const char *uid);
	/* An object of kind folder plural in namespace ns from the agent's
	 * caches: 0 with *out (a copy), -ENOENT, or 1 when that kind is not
	 * cached (read it from the mount); set by pods.c, may be NULL. */
	int (*cached)(void *data, const char *plural, const char *ns, const char *name,
		      struct ynode **out);
	void *notify_data;
	bool async_kill;
	/* Where its containers' cgroups are: ROOT/POD-UID/CONTAINER
	 * ("corral/NODEHASH"); NULL when nothing runs (hollow). */
	const char *cgroup_root;
};

struct loop;
struct net;
struct pull_opts;

/* What the real runtime needs to know of its node. */
struct token_signer;

struct nspawn_opts {
	struct loop *loop;
	const char *mount;	     /* the cluster's, for configMaps and secrets */
	const char *node;	     /* the node's name */
	const char *state_dir;	     /* /var/lib/corral */
	const char *images_dir;	     /* /var/lib/corral/images */
	const char *log_dir;	     /* /var/log/pods */
	const char *bin_dir;	     /* where corral-pause and corral-shim are */
	const char *dns_ip;	     /* pods' nameserver (dnsPolicy ClusterFirst) */
	const char *domain;	     /* cluster.local */
	struct net *net;	     /* the node's bridge */
	long long eviction_bytes;    /* evict below this much available memory */
	uint64_t eviction_period_ms; /* how often to look; 0: 2 s */
	/* service-account tokens (volumes.h): the node's signer (NULL: no
	 * key, no token files), kept by the caller, and their issuer */
	const struct token_signer *token_signer;
	const char *token_issuer;
	struct pull_opts *pull; /* registries, the image store (pull.h) */
	unsigned workers;	/* pods set up at once, off the loop; 0: 4 */
};

struct runtime *runtime_hollow_new(void);
/* The real runtime (systemd-nspawn). It takes over the pods a previous
 * agent of this node left running (their state is under
 * STATE/nodes/NODE/pods/), and removes those no pod claims soon after. */
struct runtime *runtime_nspawn_new(const struct nspawn_opts *o, struct error **err);
/* Gives the real runtime its node's network once the node is registered
 * (its podCIDR known) and takes over the pods found on the host. */
int runtime_nspawn_attach(struct runtime *rt, struct net *net, const char *host_ip);
/* Waits for the pods being set up and records them (their done()s run,
 * which reach the pods' records, the network and the mount): before any
 * of those is freed at the agent's end. Setups queued but not begun are
 * called off (a restarted agent makes them). */
void runtime_nspawn_drain(struct runtime *rt);
/* Stops and removes every pod of the node (corral-noded --cleanup-on-exit). */
void runtime_nspawn_stop_all(struct runtime *rt);

static inline bool runtime_ready(struct runtime *rt, const char **reason, const char **message)
{
	return rt->ops->ready(rt, reason, message);
}

static inline int runtime_sync_pod(struct runtime *rt, const char *key, const struct ynode *pod,
				   const char *pod_ip, struct pod_report *out, struct error **err)
{
	return rt->ops->sync_pod(rt, key, pod, pod_ip, out, err);
}

static inline void runtime_kill_pod(struct runtime *rt, const char *key, const char *uid)
{
	rt->ops->kill_pod(rt, key, uid);
}

void runtime_free(struct runtime *rt);
void runtime_freep(struct runtime **rt);
#define cleanup_runtime __attribute__((cleanup(runtime_freep)))

#endif
