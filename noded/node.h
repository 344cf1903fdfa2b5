/* node.h: this node's object, nodes/<name>.yaml, and its heartbeat.
 *
 * At start the agent registers the node: capacity and allocatable (the
 * machine's, or a hollow node's fixed sizes), labels, addresses, nodeInfo,
 * conditions, and a podCIDR that no other node has. The podCIDR is the one
 * the node already has, else the one configured, else a free slice of the
 * cluster range, chosen so that nodes starting together never pick the same
 * one: each claims its candidate in its Lease (kube-node-lease/<name>,
 * annotation corral.io/pod-cidr-claim) and then looks again; whoever then
 * sees another claim or holder of it picks again. Of two nodes that claim
 * one slice at once at least one sees the other, so no two keep it.
 *
 * Then, every heartbeat period, the node's status (conditions with
 * lastHeartbeatTime) is written back through the mount with the
 * resourceVersion read, conflicts retried; and on its own timer, every
 * lease renew interval (10 s, as the kubelet's: a quarter of the Lease's
 * 40 s), the Lease is renewed (spec.renewTime, holderIdentity the node's
 * name, leaseDurationSeconds). corral-ctrl's node lifecycle controller
 * reads either as the node's heartbeat. Status
 * and Leases never enter the history, so heartbeats make no commits. A
 * node object deleted by someone is registered again. On stop the node is
 * left as it is, as Kubernetes keeps nodes: it turns NotReady when others
 * see its heartbeat stop. */
#ifndef CORRAL_NODED_NODE_H
#define CORRAL_NODED_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cidr.h"
#include "error.h"
#include "loop.h"
#include "machine.h"
#include "runtime.h"
#include "ynode.h"

#define NODE_CLAIM_ANNOTATION "corral.io/pod-cidr-claim"
#define NODE_LEASE_NAMESPACE  "kube-node-lease"
#define NODE_LEASE_SECONDS    40    /* Kubernetes' default (nodeLeaseDurationSeconds) */
#define NODE_LEASE_RENEW_MS   10000 /* the kubelet's: a quarter of the 40 s */

struct node_opts {
	const char *mount;
	const char *name;
	bool hollow;
	const char *pod_cidr;	  /* NULL or "": choose one */
	struct cidr cluster_cidr; /* where podCIDRs are cut from */
	unsigned node_cidr_mask;  /* their prefix length */
	uint64_t heartbeat_ms;
	uint64_t lease_renew_ms;   /* 0: NODE_LEASE_RENEW_MS */
	unsigned lease_duration_s; /* 0: NODE_LEASE_SECONDS */
	const char *node_ip;	   /* NULL or "": the machine's */
	const char *storage_path;  /* its filesystem is ephemeral-storage */
	int max_pods;
	int64_t eviction_memory; /* bytes kept free: memory pressure below */
	struct machine_resources hollow_capacity;
	const char *volumes_dir; /* local-path volumes' folder: the node's
				  * corral.io/volumes-dir annotation; NULL none */
	unsigned daemon_port;	 /* where its logs are served (serve.h); 0 none */
};

/* Everything the node object says, gathered. */
struct node_facts {
	const char *name;
	bool hollow;
	struct machine_resources capacity;
	struct machine_resources allocatable;
	const struct machine_info *info;
	const char *runtime_version;
	const char *host_ip;
	const char *pod_cidr; /* NULL: none yet */
	bool ready;
	const char *ready_reason;
	const char *ready_message;
	struct machine_pressure pressure;
	const char *volumes_dir; /* NULL: no corral.io/volumes-dir annotation */
	unsigned daemon_port;	 /* status.daemonEndpoints.kubeletEndpoint.Port; 0: none */
};

/* Brings obj (the stored node, or an empty map for a new one) to f:
 * apiVersion and kind, metadata.name, our labels (others kept), the
 * podCIDR if the node has none, and status (capacity, allocatable,
 * conditions with lastHeartbeatTime now, addresses, daemonEndpoints,
 * nodeInfo; fields of others kept). Pure. */
void node_object_apply(struct ynode *obj, const struct node_facts *f, time_t now);
/* This node's Lease, held for duration_s seconds from now; claim and
 * node_uid may be NULL. Pure. */
struct ynode *node_lease_build(const char *name, const char *claim, const char *node_uid,
			       unsigned duration_s, time_t now);
/* The podCIDRs a node object holds (spec.podCIDR and spec.podCIDRs), and
 * the claim a Lease makes if it is still fresh at now; appended to *v. */
void node_cidrs_held(const struct ynode *node, struct cidr **v, size_t *n);
void node_cidr_claimed(const struct ynode *lease, time_t now, struct cidr **v, size_t *n);

struct node_agent;

struct node_agent *node_agent_new(struct loop *loop, const struct node_opts *o, struct runtime *rt);
void node_agent_free(struct node_agent *na);
void node_agent_freep(struct node_agent **na);
#define cleanup_node_agent __attribute__((cleanup(node_agent_freep)))

/* Registers the node (choosing its podCIDR) and starts the heartbeat and
 * the Lease's renewal. */
int node_agent_register(struct node_agent *na, struct error **err);
/* One heartbeat (the node's status) now. */
int node_agent_heartbeat(struct node_agent *na, struct error **err);
/* Renews the Lease now. */
int node_agent_renew_lease(struct node_agent *na, struct error **err);
/* Stops heartbeating and renewing; the node object and Lease stay. */
void node_agent_stop(struct node_agent *na);

const struct cidr *node_agent_pod_cidr(const struct node_agent *na);
const char *node_agent_host_ip(const struct node_agent *na);

#endif
