/* node.c: registers this node, chooses its podCIDR, and heartbeats.
 *
 * This file writes only this node's object and its Lease, and only through
 * the mount. It never changes a node's spec but to give it a podCIDR it
 * does not have (Kubernetes' podCIDR is immutable once set). */
#include "node.h"
#include "conditions.h"
#include "fnv.h"
#include "log.h"
#include "objio.h"
#include "quantity.h"
#include "timefmt.h"
#include "treepath.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NODE__CLAIM_TRIES 64
#define NODED_VERSION	  "v0.1.0-corral"

struct node_agent {
	struct loop *loop;
	struct node_opts o; /* strings below are our copies */
	char *mount;
	char *name;
	char *pod_cidr_opt;
	char *storage_path;
	char host_ip[CIDR_IP_SIZE + 32];
	struct runtime *rt;
	struct machine_info info;
	struct cidr pod_cidr;
	bool has_pod_cidr;
	char *node_path;		/* MOUNT/nodes/NAME.yaml */
	char *lease_dir;		/* MOUNT/namespaces/kube-node-lease/leases */
	char *lease_path;		/* lease_dir/NAME.yaml */
	char *node_uid;			/* for the Lease's owner reference */
	struct loop_timer *timer;	/* the heartbeat */
	struct loop_timer *lease_timer; /* the Lease's renewal */
	unsigned seed;			/* rand_r: choices after a collision */
};

/* ---- the objects, pure ----------------------------------------------------- */

static struct ynode *node__resources(const struct machine_resources *r)
{
	char buf[64];
	struct ynode *m = ynode_new_map();
	quantity_format(r->cpu, buf, sizeof(buf));
	ynode_set(m, "cpu", ynode_new_str(buf));
	quantity_format(r->ephemeral_storage, buf, sizeof(buf));
	ynode_set(m, "ephemeral-storage", ynode_new_str(buf));
	quantity_format(r->memory, buf, sizeof(buf));
	ynode_set(m, "memory", ynode_new_str(buf));
	quantity_format(r->pods, buf, sizeof(buf));
	ynode_set(m, "pods", ynode_new_str(buf));
	return m;
}

static struct ynode *node__address(const char *type, const char *address)
{
	struct ynode *m = ynode_new_map();
	ynode_set(m, "type", ynode_new_str(type));
	ynode_set(m, "address", ynode_new_str(address));
	return m;
}

static struct ynode *node__node_info(const struct node_facts *f)
{
	const struct machine_info *mi = f->info;
	struct ynode *m = ynode_new_map();
	ynode_set(m, "architecture", ynode_new_str(mi && mi->architecture ? mi->architecture : ""));
	ynode_set(m, "bootID", ynode_new_str(mi && mi->boot_id ? mi->boot_id : ""));
	ynode_set(m, "containerRuntimeVersion",
		  ynode_new_str(f->runtime_version ? f->runtime_version : ""));
	ynode_set(m, "kernelVersion",
		  ynode_new_str(mi && mi->kernel_version ? mi->kernel_version : ""));
	ynode_set(m, "kubeProxyVersion", ynode_new_str(NODED_VERSION));
	ynode_set(m, "kubeletVersion", ynode_new_str(NODED_VERSION));
	ynode_set(m, "machineID", ynode_new_str(mi && mi->machine_id ? mi->machine_id : ""));
	ynode_set(m, "operatingSystem", ynode_new_str("linux"));
	ynode_set(m, "osImage", ynode_new_str(mi && mi->os_image ? mi->os_image : ""));
	ynode_set(m, "systemUUID", ynode_new_str(mi && mi->system_uuid ? mi->system_uuid : ""));
	return m;
}

static struct ynode *node__conditions(const struct node_facts *f, const struct ynode *old,
				      const char *now)
{
	const struct machine_pressure *p = &f->pressure;
	const struct condition conds[] = {
	    {"MemoryPressure", p->memory ? "True" : "False",
	     p->memory ? "KubeletHasInsufficientMemory" : "KubeletHasSufficientMemory",
	     p->memory ? "kubelet has insufficient memory available"
		       : "kubelet has sufficient memory available"},
	    {"DiskPressure", p->disk ? "True" : "False",
	     p->disk ? "KubeletHasDiskPressure" : "KubeletHasNoDiskPressure",
	     p->disk ? "kubelet has disk pressure" : "kubelet has no disk pressure"},
	    {"PIDPressure", p->pids ? "True" : "False",
	     p->pids ? "KubeletHasInsufficientPID" : "KubeletHasSufficientPID",
	     p->pids ? "kubelet has insufficient PID available"
		     : "kubelet has sufficient PID available"},
	    {"Ready", f->ready ? "True" : "False",
	     f->ready_reason ? f->ready_reason
	     : f->ready	     ? "KubeletReady"
			     : "KubeletNotReady",
	     f->ready_message ? f->ready_message
	     : f->ready	      ? "kubelet is posting ready status"
			      : NULL},
	};
	struct ynode *seq = ynode_new_seq();
	for (size_t i = 0; i < ARRAY_SIZE(conds); i++)
		ynode_append(seq, condition_build(&conds[i], condition_find(old, conds[i].type),
						  now, CONDITION_HEARTBEAT));
	/* conditions others set (NetworkUnavailable, ...) stay */
	for (size_t i = 0; old && old->type == YNODE_SEQ && i < old->n; i++) {
		const char *t = ynode_path_str(ynode_item(old, i), "type");
		bool ours = false;
		for (size_t k = 0; t && k < ARRAY_SIZE(conds); k++)
			ours = ours || strcmp(t, conds[k].type) == 0;
		if (!ours)
			ynode_append(seq, ynode_clone(ynode_item(old, i)));
	}
	return seq;
}

void node_object_apply(struct ynode *obj, const struct node_facts *f, time_t now)
{
	char nowbuf[RFC3339_SIZE];
	rfc3339_format(now, nowbuf);
	if (!ynode_get(obj, "apiVersion"))
		ynode_set(obj, "apiVersion", ynode_new_str("v1"));
	if (!ynode_get(obj, "kind"))
		ynode_set(obj, "kind", ynode_new_str("Node"));
	struct ynode *md = ynode_get_map(obj, "metadata");
	ynode_set(md, "name", ynode_new_str(f->name));
	struct ynode *labels = ynode_get_map(md, "labels");
	ynode_set(
	    labels, "kubernetes.io/arch",
	    ynode_new_str(f->info && f->info->architecture ? f->info->architecture : "unknown"));
	ynode_set(labels, "kubernetes.io/hostname", ynode_new_str(f->name));
	ynode_set(labels, "kubernetes.io/os", ynode_new_str("linux"));
	if (f->hollow)
		ynode_set(labels, "corral.io/hollow", ynode_new_str("true"));
	/* where corral-ctrl's local-path provisioner puts this node's volumes */
	if (f->volumes_dir)
		ynode_set(ynode_get_map(md, "annotations"), "corral.io/volumes-dir",
			  ynode_new_str(f->volumes_dir));

	struct ynode *spec = ynode_get_map(obj, "spec");
	const char *have = ynode_path_str(spec, "podCIDR");
	if (f->pod_cidr && (!have || !*have)) {
		ynode_set(spec, "podCIDR", ynode_new_str(f->pod_cidr));
		struct ynode *list = ynode_new_seq();
		ynode_append(list, ynode_new_str(f->pod_cidr));
		ynode_set(spec, "podCIDRs", list);
	}

	struct ynode *st = ynode_get_map(obj, "status");
	ynode_set(st, "capacity", node__resources(&f->capacity));
	ynode_set(st, "allocatable", node__resources(&f->allocatable));
	ynode_set(st, "conditions", node__conditions(f, ynode_get(st, "conditions"), nowbuf));
	struct ynode *addrs = ynode_new_seq();
	if (f->host_ip)
		ynode_append(addrs, node__address("InternalIP", f->host_ip));
	ynode_append(addrs, node__address("Hostname", f->name));
	ynode_set(st, "addresses", addrs);
	/* where other hosts read this node's logs (corral-fs, serve.h) */
	if (f->daemon_port) {
		struct ynode *ep = ynode_new_map();
		ynode_set(ep, "Port", ynode_new_int(f->daemon_port));
		struct ynode *de = ynode_new_map();
		ynode_set(de, "kubeletEndpoint", ep);
		ynode_set(st, "daemonEndpoints", de);
	} else {
		ynode_del(st, "daemonEndpoints");
	}
	ynode_set(st, "nodeInfo", node__node_info(f));
}

struct ynode *node_lease_build(const char *name, const char *claim, const char *node_uid,
			       unsigned duration_s, time_t now)
{
	char renew[RFC3339_MICRO_SIZE];
	rfc3339_format_micro((int64_t)now * 1000000, renew);
	struct ynode *l = ynode_new_map();
	ynode_set(l, "apiVersion", ynode_new_str("coordination.k8s.io/v1"));
	ynode_set(l, "kind", ynode_new_str("Lease"));
	struct ynode *md = ynode_get_map(l, "metadata");
	ynode_set(md, "name", ynode_new_str(name));
	ynode_set(md, "namespace", ynode_new_str(NODE_LEASE_NAMESPACE));
	if (claim)
		ynode_set(ynode_get_map(md, "annotations"), NODE_CLAIM_ANNOTATION,
			  ynode_new_str(claim));
	if (node_uid) {
		struct ynode *refs = ynode_new_seq();
		struct ynode *ref = ynode_new_map();
		ynode_set(ref, "apiVersion", ynode_new_str("v1"));
		ynode_set(ref, "kind", ynode_new_str("Node"));
		ynode_set(ref, "name", ynode_new_str(name));
		ynode_set(ref, "uid", ynode_new_str(node_uid));
		ynode_append(refs, ref);
		ynode_set(md, "ownerReferences", refs);
	}
	struct ynode *spec = ynode_get_map(l, "spec");
	ynode_set(spec, "holderIdentity", ynode_new_str(name));
	ynode_set(spec, "leaseDurationSeconds", ynode_new_int(duration_s));
	ynode_set(spec, "renewTime", ynode_new_str(renew));
	return l;
}

static void node__push(struct cidr **v, size_t *n, const struct cidr *c)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = *c;
}

void node_cidrs_held(const struct ynode *node, struct cidr **v, size_t *n)
{
	struct cidr c;
	const char *one = ynode_path_str(node, "spec.podCIDR");
	if (one && cidr_parse_loose(one, &c) == 0)
		node__push(v, n, &c);
	const struct ynode *list = ynode_path(node, "spec.podCIDRs");
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const char *s = ynode_str(ynode_item(list, i));
		if (s && cidr_parse_loose(s, &c) == 0 && (!one || strcmp(s, one) != 0))
			node__push(v, n, &c);
	}
}

void node_cidr_claimed(const struct ynode *lease, time_t now, struct cidr **v, size_t *n)
{
	const struct ynode *ann = ynode_path(lease, "metadata.annotations");
	const char *claim = ynode_str(ynode_get(ann, NODE_CLAIM_ANNOTATION));
	struct cidr c;
	if (!claim || cidr_parse_loose(claim, &c) < 0)
		return;
	/* a claim whose Lease ran out twice over belongs to an agent that
	 * died before it registered: its slice is free again */
	time_t renewed;
	long long dur = NODE_LEASE_SECONDS;
	ynode_int(ynode_path(lease, "spec.leaseDurationSeconds"), &dur);
	if (rfc3339_parse(ynode_path_str(lease, "spec.renewTime"), &renewed) == 0 &&
	    renewed + 2 * dur < now)
		return;
	node__push(v, n, &c);
}

/* ---- the agent -------------------------------------------------------------- */

/* What other nodes hold and claim, read fresh from the mount. */
static int node__scan(struct node_agent *na, bool leases, struct cidr **v, size_t *n,
		      struct error **err)
{
	*v = NULL;
	*n = 0;
	cleanup_free char *nodes_dir = xasprintf("%s/nodes", na->mount);
	cleanup_free char *self = xasprintf("%s.yaml", na->name);
	const char *dirs[] = {nodes_dir, na->lease_dir};
	time_t now = time(NULL);
	for (size_t d = 0; d < (leases ? 2u : 1u); d++) {
		char **names = NULL;
		size_t count = 0;
		struct error *lerr = NULL;
		if (objio_list(dirs[d], &names, &count, &lerr) < 0) {
			if (d == 1 && lerr->status == ENOENT) { /* no Leases yet */
				error_free(lerr);
				continue;
			}
			free(*v);
			*v = NULL;
			*err = lerr;
			return -1;
		}
		for (size_t i = 0; i < count; i++) {
			if (strcmp(names[i], self) == 0)
				continue;
			cleanup_free char *path = xasprintf("%s/%s", dirs[d], names[i]);
			cleanup_ynode struct ynode *obj = NULL;
			struct error *rerr = NULL;
			if (objio_read(path, &obj, &rerr) < 0) {
				/* gone meanwhile, or unreadable: not a holder */
				log_debug("%s", rerr->msg);
				error_free(rerr);
				continue;
			}
			if (d == 0)
				node_cidrs_held(obj, v, n);
			else
				node_cidr_claimed(obj, now, v, n);
		}
		objio_list_free(names, count);
	}
	return 0;
}

static bool node__overlaps_any(const struct cidr *c, const struct cidr *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cidr_overlaps(c, &v[i]))
			return true;
	return false;
}

static int node__write_lease(struct node_agent *na, const char *claim, struct error **err)
{
	unsigned duration = na->o.lease_duration_s ? na->o.lease_duration_s : NODE_LEASE_SECONDS;
	cleanup_ynode struct ynode *lease =
	    node_lease_build(na->name, claim, na->node_uid, duration, time(NULL));
	int r = objio_write(na->mount, na->lease_path, lease, err);
	if (r == -ENOENT) {
		/* kube-node-lease was removed: make it again, as the API
		 * server keeps its system namespaces */
		error_free(*err);
		*err = NULL;
		cleanup_free char *folder = treepath_folder(NULL, NODE_LEASE_NAMESPACE);
		cleanup_free char *ns = xasprintf("%s/%s", na->mount, folder);
		if (mkdir(ns, 0755) < 0 && errno != EEXIST)
			return error_set(err, errno, "mkdir %s: %s", ns, strerror(errno));
		r = objio_write(na->mount, na->lease_path, lease, err);
	}
	return r;
}

/* The claim this node's Lease made before (a restart before registering). */
static bool node__own_claim(struct node_agent *na, struct cidr *out)
{
	cleanup_ynode struct ynode *lease = NULL;
	struct error *err = NULL;
	if (objio_read(na->lease_path, &lease, &err) < 0) {
		error_free(err);
		return false;
	}
	const char *claim =
	    ynode_str(ynode_get(ynode_path(lease, "metadata.annotations"), NODE_CLAIM_ANNOTATION));
	return claim && cidr_parse(claim, out, NULL) == 0 && out->prefix == na->o.node_cidr_mask &&
	       cidr_overlaps(out, &na->o.cluster_cidr) && out->prefix >= na->o.cluster_cidr.prefix;
}

static int node__claim_cidr(struct node_agent *na, struct error **err)
{
	struct cidr prev;
	bool have_prev = node__own_claim(na, &prev);
	for (unsigned attempt = 0; attempt < NODE__CLAIM_TRIES; attempt++) {
		cleanup_free struct cidr *taken = NULL;
		size_t ntaken = 0;
		if (node__scan(na, true, &taken, &ntaken, err) < 0)
			return -1;
		struct cidr cand;
		if (attempt == 0 && have_prev && !node__overlaps_any(&prev, taken, ntaken)) {
			cand = prev;
		} else {
			uint64_t nfree = cidr_free_slices(&na->o.cluster_cidr, na->o.node_cidr_mask,
							  taken, ntaken);
			/* the lowest first; after a collision, any, so that
			 * nodes that collided part ways */
			uint64_t nth =
			    attempt == 0 || nfree == 0 ? 0 : (uint64_t)rand_r(&na->seed) % nfree;
			if (cidr_pick_slice(&na->o.cluster_cidr, na->o.node_cidr_mask, taken,
					    ntaken, nth, &cand, err) < 0) {
				error_prefix(err,
					     "cannot choose a podCIDR (set pod-cidr, or a wider "
					     "cluster-cidr or longer node-cidr-mask-size)");
				return -1;
			}
		}
		char shown[CIDR_STR_SIZE];
		cidr_format(&cand, shown);
		if (node__write_lease(na, shown, err) < 0) {
			error_prefix(err, "claiming podCIDR %s", shown);
			return -1;
		}
		/* look again, now that our claim is visible to all */
		cleanup_free struct cidr *again = NULL;
		size_t nagain = 0;
		if (node__scan(na, true, &again, &nagain, err) < 0)
			return -1;
		if (!node__overlaps_any(&cand, again, nagain)) {
			na->pod_cidr = cand;
			na->has_pod_cidr = true;
			return 0;
		}
		log_debug("podCIDR %s claimed by another node too; choosing again", shown);
		/* back off a little, differently on each node */
		usleep((useconds_t)(1000 * (5 + rand_r(&na->seed) %
						    (20 * (attempt < 5 ? attempt + 1 : 5)))));
	}
	return error_set(err, EBUSY,
			 "could not claim a podCIDR in %u attempts (too many nodes "
			 "starting at once?)",
			 NODE__CLAIM_TRIES);
}

static int node__choose_cidr(struct node_agent *na, const struct ynode *existing,
			     struct error **err)
{
	const char *have = ynode_path_str(existing, "spec.podCIDR");
	if (have && *have) {
		if (cidr_parse_loose(have, &na->pod_cidr) < 0)
			return error_set(err, EINVAL, "node %s has a podCIDR that is not IPv4: %s",
					 na->name, have);
		if (na->pod_cidr_opt && *na->pod_cidr_opt && strcmp(na->pod_cidr_opt, have) != 0)
			log_warn("node %s already has podCIDR %s, which cannot change; %s is "
				 "not used",
				 na->name, have, na->pod_cidr_opt);
		na->has_pod_cidr = true;
		return 0;
	}
	if (na->pod_cidr_opt && *na->pod_cidr_opt) {
		if (cidr_parse(na->pod_cidr_opt, &na->pod_cidr, err) < 0) {
			error_prefix(err, "pod-cidr");
			return -1;
		}
		cleanup_free struct cidr *held = NULL;
		size_t nheld = 0;
		if (node__scan(na, false, &held, &nheld, err) < 0)
			return -1;
		if (node__overlaps_any(&na->pod_cidr, held, nheld))
			return error_set(err, EEXIST,
					 "pod-cidr %s overlaps the podCIDR of another node",
					 na->pod_cidr_opt);
		na->has_pod_cidr = true;
		return 0;
	}
	return node__claim_cidr(na, err);
}

static void node__facts(struct node_agent *na, struct node_facts *f)
{
	*f = (struct node_facts){
	    .name = na->name,
	    .hollow = na->o.hollow,
	    .info = &na->info,
	    .runtime_version = na->rt->version,
	    .host_ip = na->host_ip,
	    .volumes_dir = na->o.volumes_dir,
	    .daemon_port = na->o.daemon_port,
	};
	if (na->o.hollow) {
		f->capacity = na->o.hollow_capacity;
	} else {
		struct error *err = NULL;
		if (machine_read_capacity(na->storage_path, na->o.max_pods, &f->capacity, &err) <
		    0) {
			log_warn("reading the machine's capacity: %s", err->msg);
			error_free(err);
		}
		machine_pressure_read(na->storage_path, na->o.eviction_memory, &f->pressure);
	}
	machine_allocatable(&f->capacity, na->o.hollow ? 0 : na->o.eviction_memory,
			    &f->allocatable);
	f->ready = runtime_ready(na->rt, &f->ready_reason, &f->ready_message);
}

struct node__change {
	struct node_agent *na;
	const char *pod_cidr;
};

static int node__change(void *data, struct ynode *obj, struct error **err)
{
	(void)err;
	struct node__change *c = data;
	struct node_facts f;
	node__facts(c->na, &f);
	f.pod_cidr = c->pod_cidr;
	node_object_apply(obj, &f, time(NULL));
	return 0;
}

/* Reads the node's uid back for the Lease's owner reference. */
static void node__learn_uid(struct node_agent *na)
{
	cleanup_ynode struct ynode *obj = NULL;
	struct error *err = NULL;
	if (objio_read(na->node_path, &obj, &err) < 0) {
		error_free(err);
		return;
	}
	const char *uid = ynode_path_str(obj, "metadata.uid");
	if (uid && (!na->node_uid || strcmp(uid, na->node_uid) != 0)) {
		free(na->node_uid);
		na->node_uid = xstrdup(uid);
	}
}

/* Writes the node: an update of the stored one, or a new one. */
static int node__write(struct node_agent *na, struct error **err)
{
	char cidr[CIDR_STR_SIZE];
	if (na->has_pod_cidr)
		cidr_format(&na->pod_cidr, cidr);
	struct node__change c = {na, na->has_pod_cidr ? cidr : NULL};
	int r = objio_update(na->mount, na->node_path, node__change, &c, OBJIO_TRIES, err);
	if (r != -ENOENT)
		return r < 0 ? r : 0;
	error_free(*err);
	*err = NULL;
	cleanup_ynode struct ynode *obj = ynode_new_map();
	node__change(&c, obj, err);
	r = objio_write(na->mount, na->node_path, obj, err);
	if (r == 0)
		log_info("registered node %s (podCIDR %s)", na->name,
			 na->has_pod_cidr ? cidr : "none");
	return r;
}

int node_agent_heartbeat(struct node_agent *na, struct error **err)
{
	bool had_uid = na->node_uid != NULL;
	if (node__write(na, err) < 0) {
		error_prefix(err, "heartbeat of node %s", na->name);
		return -1;
	}
	if (!had_uid)
		node__learn_uid(na);
	return 0;
}

int node_agent_renew_lease(struct node_agent *na, struct error **err)
{
	char cidr[CIDR_STR_SIZE];
	if (na->has_pod_cidr)
		cidr_format(&na->pod_cidr, cidr);
	if (node__write_lease(na, na->has_pod_cidr ? cidr : NULL, err) < 0) {
		error_prefix(err, "renewing the Lease of node %s", na->name);
		return -1;
	}
	return 0;
}

static void node__on_lease_tick(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct node_agent *na = data;
	struct error *err = NULL;
	if (node_agent_renew_lease(na, &err) < 0) {
		log_warn("%s", err->msg);
		error_free(err);
	}
}

static void node__on_tick(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct node_agent *na = data;
	struct error *err = NULL;
	if (node_agent_heartbeat(na, &err) < 0) {
		log_warn("%s", err->msg);
		error_free(err);
	}
}

int node_agent_register(struct node_agent *na, struct error **err)
{
	cleanup_ynode struct ynode *existing = NULL;
	struct error *rerr = NULL;
	int r = objio_read(na->node_path, &existing, &rerr);
	if (r < 0 && r != -ENOENT) {
		*err = rerr;
		return r;
	}
	error_free(rerr);
	if (node__choose_cidr(na, existing, err) < 0)
		return -1;
	if (na->has_pod_cidr && na->pod_cidr.prefix > CIDR_MAX_PREFIX) {
		char shown[CIDR_STR_SIZE];
		cidr_format(&na->pod_cidr, shown);
		return error_set(err, EINVAL, "podCIDR %s is too small for pods (at most /%d)",
				 shown, CIDR_MAX_PREFIX);
	}
	if (existing)
		log_info("node %s exists; taking it over", na->name);
	if (node__write(na, err) < 0) {
		error_prefix(err, "registering node %s", na->name);
		return -1;
	}
	node__learn_uid(na);
	char cidr[CIDR_STR_SIZE];
	if (na->has_pod_cidr)
		cidr_format(&na->pod_cidr, cidr);
	if (node__write_lease(na, na->has_pod_cidr ? cidr : NULL, err) < 0) {
		error_prefix(err, "writing the Lease of node %s", na->name);
		return -1;
	}
	/* the first beat a little early and different on each node, so that
	 * many nodes started together do not all beat at once */
	uint64_t period = na->o.heartbeat_ms;
	uint64_t jitter = period / 4 ? (uint64_t)rand_r(&na->seed) % (period / 4) : 0;
	loop_timer_start(na->timer, period - jitter, period);
	uint64_t renew = na->o.lease_renew_ms ? na->o.lease_renew_ms : NODE_LEASE_RENEW_MS;
	loop_timer_start(na->lease_timer, renew, renew);
	return 0;
}

void node_agent_stop(struct node_agent *na)
{
	loop_timer_stop(na->timer);
	loop_timer_stop(na->lease_timer);
}

const struct cidr *node_agent_pod_cidr(const struct node_agent *na)
{
	return na->has_pod_cidr ? &na->pod_cidr : NULL;
}

const char *node_agent_host_ip(const struct node_agent *na)
{
	return na->host_ip;
}

struct node_agent *node_agent_new(struct loop *loop, const struct node_opts *o, struct runtime *rt)
{
	struct node_agent *na = xcalloc(1, sizeof(*na));
	na->loop = loop;
	na->o = *o;
	na->mount = xstrdup(o->mount);
	na->name = xstrdup(o->name);
	na->pod_cidr_opt = o->pod_cidr ? xstrdup(o->pod_cidr) : NULL;
	na->storage_path = xstrdup(o->storage_path ? o->storage_path : "/");
	na->o.mount = na->mount;
	na->o.name = na->name;
	na->o.pod_cidr = na->pod_cidr_opt;
	na->o.storage_path = na->storage_path;
	na->o.node_ip = NULL;
	na->rt = rt;
	if (o->node_ip && *o->node_ip)
		snprintf(na->host_ip, sizeof(na->host_ip), "%s", o->node_ip);
	else
		machine_host_ip(na->host_ip, sizeof(na->host_ip));
	machine_info_read(&na->info);
	cleanup_free char *node_rel = treepath_object("nodes", NULL, na->name);
	cleanup_free char *lease_rel = treepath_object("leases", NODE_LEASE_NAMESPACE, na->name);
	cleanup_free char *lease_folder = treepath_folder("leases", NODE_LEASE_NAMESPACE);
	na->node_path = xasprintf("%s/%s", na->mount, node_rel);
	na->lease_dir = xasprintf("%s/%s", na->mount, lease_folder);
	na->lease_path = xasprintf("%s/%s", na->mount, lease_rel);
	na->timer = loop_timer_new(loop, node__on_tick, na);
	na->lease_timer = loop_timer_new(loop, node__on_lease_tick, na);
	na->seed = fnv1a32(na->name, strlen(na->name)) ^ (unsigned)getpid() ^ (unsigned)time(NULL);
	return na;
}

void node_agent_free(struct node_agent *na)
{
	if (!na)
		return;
	loop_timer_free(na->timer);
	loop_timer_free(na->lease_timer);
	machine_info_clear(&na->info);
	free(na->mount);
	free(na->name);
	free(na->pod_cidr_opt);
	free(na->storage_path);
	free(na->node_path);
	free(na->lease_dir);
	free(na->lease_path);
	free(na->node_uid);
	free(na);
}

void node_agent_freep(struct node_agent **na)
{
	node_agent_free(*na);
	*na = NULL;
}
