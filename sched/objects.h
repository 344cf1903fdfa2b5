/* objects.h: Pods and Nodes as the scheduler sees them.
 *
 * A Pod or Node object (a ynode read through the mount) is read once into a
 * flat struct: quantities parsed into milli-units, the pod's effective
 * requests computed as Kubernetes does (init containers included), labels
 * kept for selectors, affinity terms and tolerations parsed. Filters and
 * scores then never touch YAML. Parsing never fails: what a pod gets wrong
 * (an affinity operator Kubernetes does not know, a quantity that does not
 * parse) is kept in sched_pod.error, and the scheduler reports it on the pod
 * instead of placing it. */
#ifndef CORRAL_SCHED_OBJECTS_H
#define CORRAL_SCHED_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ynode.h"

struct selector;
struct sched_node;

#define SCHED_DEFAULT_SCHEDULER "default-scheduler"
/* What a container that requests no cpu (memory) counts for when nodes are
 * scored, as Kubernetes' non-zero requests: 100m and 200Mi. */
#define SCHED_DEFAULT_MILLI_CPU 100LL
#define SCHED_DEFAULT_MEMORY	(200LL * 1024 * 1024 * 1000) /* milli-bytes */

/* Resource amounts in milli-units: cpu in millicores, memory and
 * ephemeral-storage in thousandths of bytes (exact for every quantity), and
 * extended resources (nvidia.com/gpu, hugepages-2Mi) by name. */
struct sched_ext {
	char *name;
	int64_t v;
};

struct sched_res {
	int64_t cpu;
	int64_t mem;
	int64_t eph;
	size_t next;
	struct sched_ext *ext;
};

void sched_res_clear(struct sched_res *r);
void sched_res_copy(struct sched_res *dst, const struct sched_res *src);
void sched_res_add(struct sched_res *a, const struct sched_res *b);
void sched_res_sub(struct sched_res *a, const struct sched_res *b);
/* a = max(a, b), resource by resource. */
void sched_res_max(struct sched_res *a, const struct sched_res *b);
int64_t sched_res_ext(const struct sched_res *r, const char *name);
bool sched_res_is_zero(const struct sched_res *r);
/* Adds one amount by resource name ("cpu", "memory", ...). */
void sched_res_add_named(struct sched_res *r, const char *name, int64_t v);

enum sched_effect {
	SCHED_EFFECT_ALL = 0, /* a toleration without effect: every effect */
	SCHED_EFFECT_NO_SCHEDULE,
	SCHED_EFFECT_PREFER_NO_SCHEDULE,
	SCHED_EFFECT_NO_EXECUTE,
	SCHED_EFFECT_OTHER,
};

struct sched_taint {
	char *key;
	char *value; /* "" when absent */
	enum sched_effect effect;
};

struct sched_toleration {
	char *key;   /* "" with exists: every key */
	bool exists; /* operator Exists; else Equal */
	char *value; /* "" when absent */
	enum sched_effect effect;
};

enum sched_op {
	SCHED_OP_IN,
	SCHED_OP_NOT_IN,
	SCHED_OP_EXISTS,
	SCHED_OP_DOES_NOT_EXIST,
	SCHED_OP_GT,
	SCHED_OP_LT
};

/* One NodeSelectorRequirement. */
struct sched_node_req {
	char *key;
	enum sched_op op;
	char **values;
	size_t nvalues;
	long long num; /* Gt, Lt */
};

/* One NodeSelectorTerm: every requirement must hold; a term without any
 * matches no node. */
struct sched_node_term {
	struct sched_node_req *exprs; /* on labels */
	size_t nexprs;
	struct sched_node_req *fields; /* on metadata.name */
	size_t nfields;
};

struct sched_pref_term {
	long long weight;
	struct sched_node_term term;
};

/* One required PodAffinityTerm. */
struct sched_pod_term {
	struct selector *sel; /* labelSelector; NULL matches nothing */
	char **namespaces;    /* empty and !all_namespaces: the pod's own */
	size_t nnamespaces;
	bool all_namespaces; /* namespaceSelector: {} */
	char *topology_key;
};

struct sched_host_port {
	long port;
	char *proto; /* TCP, UDP, SCTP */
	char *ip;    /* "0.0.0.0" when absent */
};

/* What a pod's PodScheduled condition says ("" for a field absent). */
struct sched_pod_cond {
	char *status, *reason, *message; /* status NULL: no such condition */
};

/* A pod as the scheduler keeps it: the pods informer's item (its transform
 * makes one of every pod read, and no tree is kept), shared with the cache
 * while the pod holds a node's resources. */
struct sched_pod {
	unsigned refs; /* holders: the informer, the cache, a decision */
	char *key;     /* "ns/name" */
	char *ns, *name, *uid;
	char *rv;		    /* metadata.resourceVersion; NULL: unknown */
	struct sched_pod_cond cond; /* PodScheduled, as read */
	uint64_t fit_hash;	    /* of spec and labels: where it may fit */
	char *node_name;	    /* spec.nodeName, NULL while unbound */
	char *scheduler_name;	    /* spec.schedulerName, defaulted */
	bool deleting;		    /* metadata.deletionTimestamp is set */
	bool terminal;		    /* status.phase Succeeded or Failed */
	bool gated;		    /* spec.schedulingGates is not empty */
	long long priority;
	struct sched_res req;	/* effective requests */
	int64_t nz_cpu, nz_mem; /* the same with defaults for what is missing */
	struct sched_host_port *ports;
	size_t nports;
	struct ynode *labels;	     /* metadata.labels, or NULL */
	char *owner;		     /* uid of the controller ownerReference, or NULL */
	uint64_t owner_hash;	     /* strmap_hash(owner), looked up on every node */
	struct ynode *node_selector; /* spec.nodeSelector, or NULL */
	bool has_required;	     /* required node affinity present */
	struct sched_node_term *required;
	size_t nrequired;
	struct sched_pref_term *preferred;
	size_t npreferred;
	struct sched_toleration *tolerations;
	size_t ntolerations;
	struct sched_pod_term *affinity; /* required pod affinity */
	size_t naffinity;
	struct sched_pod_term *anti_affinity; /* required pod anti-affinity */
	size_t nanti_affinity;
	char **claims; /* spec.volumes[].persistentVolumeClaim.claimName */
	size_t nclaims;
	/* The nodeAffinity.required of the volumes its claims are bound to,
	 * set before each decision (volumes.c); owned copies. */
	struct ynode **volume_affinity;
	size_t nvolume_affinity;
	char *error; /* why the pod cannot be scheduled as written, or NULL */

	/* Owned by the cache (cache.c) while the pod is in it. */
	struct sched_node *node;
	size_t slot;  /* index in node's pod list */
	bool assumed; /* placed by us, not yet seen bound */
};

/* Reads a Pod object (one reference). Never NULL. */
struct sched_pod *sched_pod_parse(const struct ynode *obj);
/* Another reference to p; sched_pod_free() drops one, the last frees. */
struct sched_pod *sched_pod_ref(struct sched_pod *p);
void sched_pod_free(struct sched_pod *p);
/* Whether the pod's PodScheduled condition already says exactly that. */
bool sched_pod_condition_is(const struct sched_pod *p, const char *status, const char *reason,
			    const char *message);
void sched_pod_freep(struct sched_pod **p);
#define cleanup_sched_pod __attribute__((cleanup(sched_pod_freep)))

enum sched_ready {
	SCHED_READY,
	SCHED_NOT_READY,   /* Ready False, or no Ready condition */
	SCHED_UNREACHABLE, /* Ready Unknown */
};

struct sched_nodeinfo {
	char *name;
	struct ynode *labels; /* metadata.labels, or NULL */
	struct sched_taint *taints;
	size_t ntaints;
	bool unschedulable; /* spec.unschedulable (cordoned) */
	enum sched_ready ready;
	struct sched_res alloc; /* status.allocatable (else capacity) */
	int64_t alloc_pods;	/* allocatable pods, a count */
	char *error;		/* a quantity that did not parse, or NULL */
};

/* Reads a Node object. Never NULL. */
struct sched_nodeinfo *sched_nodeinfo_parse(const struct ynode *obj);
struct sched_nodeinfo *sched_nodeinfo_clone(const struct sched_nodeinfo *n);
void sched_nodeinfo_free(struct sched_nodeinfo *n);
/* Whether two readings differ in anything the scheduler looks at (a
 * heartbeat changes nothing). */
bool sched_nodeinfo_equal(const struct sched_nodeinfo *a, const struct sched_nodeinfo *b);

/* The label's value, or NULL when labels lack it. */
const char *sched_label(const struct ynode *labels, const char *key);

#endif
