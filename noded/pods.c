/* pods.c: reconciles the pods bound to this node.
 *
 * The informer's handlers only note keys (and, while the first listing is
 * reported, take back the addresses pods show); the work queue's handler
 * does the work: look the pod up in the cache, sync it with the runtime,
 * build its status and write it if it changed. Writing the status raises an
 * update of our own, which builds the same status and stops there.
 *
 * This file must never write a pod's spec or metadata: it writes back what
 * it read with only status changed. */
#include "pods.h"
#include "informer.h"
#include "log.h"
#include "objio.h"
#include "podstatus.h"
#include "strmap.h"
#include "util.h"
#include "workqueue.h"

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A pod of this node that the agent runs. */
struct pods__entry {
	char *key; /* first: the tree compares by it; "ns/name" */
	char *uid;
};

struct pods {
	struct loop *loop;
	char *mount;
	char *node;
	char *host_ip;
	struct runtime *rt;
	struct ipam *ipam; /* NULL: no podCIDR */
	struct informer *inf;
	struct informer *configmaps, *secrets; /* NULL: not followed */
	struct informer *claims;	       /* a claim's binding starts its pods */
	struct workqueue *q;
	struct loop_timer *resync;
	uint64_t resync_ms;
	void *tracked; /* tree of struct pods__entry */
	size_t ntracked;
	struct strmap *statics; /* key -> the static pod (struct ynode *) */
};

#define POD_MIRROR_ANNOTATION "kubernetes.io/config.mirror"

/* The config.mirror annotation of a mirror pod, else NULL. */
static const char *pods__mirror_of(const struct ynode *pod)
{
	return ynode_str(ynode_get(ynode_path(pod, "metadata.annotations"), POD_MIRROR_ANNOTATION));
}

static const struct ynode *pods__static(const struct pods *p, const char *key)
{
	return strmap_get(p->statics, key);
}

static int pods__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct pods__entry *pods__find(const struct pods *p, const char *key)
{
	const char *probe = key;
	void *const *found = tfind(&probe, &p->tracked, pods__cmp);
	return found ? *(struct pods__entry *const *)found : NULL;
}

static struct pods__entry *pods__track(struct pods *p, const char *key, const char *uid)
{
	struct pods__entry *e = pods__find(p, key);
	if (e) {
		if (strcmp(e->uid, uid) != 0) {
			free(e->uid);
			e->uid = xstrdup(uid);
		}
		return e;
	}
	e = xcalloc(1, sizeof(*e));
	e->key = xstrdup(key);
	e->uid = xstrdup(uid);
	if (!tsearch(e, &p->tracked, pods__cmp))
		abort(); /* out of memory */
	p->ntracked++;
	return e;
}

static void pods__free_entry(void *v)
{
	struct pods__entry *e = v;
	free(e->key);
	free(e->uid);
	free(e);
}

static void pods__untrack(struct pods *p, struct pods__entry *e)
{
	tdelete(e, &p->tracked, pods__cmp);
	pods__free_entry(e);
	p->ntracked--;
}

/* A pod of the mount this node runs: bound here, and not a mirror. */
static bool pods__ours(const struct pods *p, const struct ynode *pod)
{
	const char *node = ynode_path_str(pod, "spec.nodeName");
	return node && strcmp(node, p->node) == 0 && !pods__mirror_of(pod);
}

/* Takes back the address a pod of ours shows, if it is one of ours and
 * free: after a restart, pods keep their IPs. */
static void pods__adopt(struct pods *p, const char *key, const struct ynode *pod)
{
	const char *uid = ynode_path_str(pod, "metadata.uid");
	const char *ip = ynode_path_str(pod, "status.podIP");
	if (pods__mirror_of(pod))
		uid = pods__mirror_of(pod); /* the static pod's, which runs */
	uint32_t addr;
	if (!p->ipam || !uid || !ip || cidr_ip_parse(ip, &addr) < 0 || pods__find(p, key))
		return;
	struct error *err = NULL;
	if (ipam_claim(p->ipam, key, addr, &err) == 0) {
		pods__track(p, key, uid);
		log_debug("pod %s: keeps its address %s", key, ip);
	} else {
		log_warn("pod %s: cannot keep its address: %s; it gets another", key, err->msg);
		error_free(err);
	}
}

/* A mirror pod of this node: it shows a static pod of ours (or one that
 * is gone, to be deleted). */
static bool pods__our_mirror(const struct pods *p, const struct ynode *pod)
{
	const char *node = ynode_path_str(pod, "spec.nodeName");
	return node && strcmp(node, p->node) == 0 && pods__mirror_of(pod);
}

static void pods__on_add(void *data, const char *key, const struct ynode *obj)
{
	struct pods *p = data;
	if (!pods__ours(p, obj) && !pods__our_mirror(p, obj))
		return;
	pods__adopt(p, key, obj);
	workqueue_add(p->q, key);
}

static void pods__on_update(void *data, const char *key, const struct ynode *old,
			    const struct ynode *obj)
{
	(void)old;
	struct pods *p = data;
	if (pods__ours(p, obj) || pods__our_mirror(p, obj) || pods__find(p, key))
		workqueue_add(p->q, key);
}

static void pods__on_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct pods *p = data;
	if (pods__find(p, key) || pods__static(p, key))
		workqueue_add(p->q, key);
}

/* The pod is no longer ours to run (deleted, replaced, or never ours). */
static void pods__forget(struct pods *p, struct pods__entry *e, const char *why)
{
	uint32_t ip = 0;
	bool had = p->ipam && ipam_lookup(p->ipam, e->key, &ip);
	if (had) {
		char shown[CIDR_IP_SIZE];
		cidr_ip_format(ip, shown);
		ipam_release(p->ipam, e->key);
		if (p->rt->async_kill) {
			/* the address stays taken, under the uid, until the
			 * runtime says the pod has left the host: a pod still
			 * in its grace period keeps its veth and address */
			cleanup_free char *held = xasprintf("~%s", e->uid);
			struct error *err = NULL;
			if (ipam_claim(p->ipam, held, ip, &err) < 0) {
				log_warn("pod %s: %s", e->key, err->msg);
				error_free(err);
			}
			log_info("pod %s %s: %s given back once it has stopped", e->key, why,
				 shown);
		} else {
			log_info("pod %s %s: released %s", e->key, why, shown);
		}
	} else {
		log_info("pod %s %s", e->key, why);
	}
	/* after the address is held under the uid: the runtime may say the
	 * pod is gone from inside this call */
	runtime_kill_pod(p->rt, e->key, e->uid);
	pods__untrack(p, e);
}

struct pods__write {
	struct pods *p;
	const char *uid;
	const struct pod_report *report;
	const char *pod_ip;
};

/* objio_update's change: the pod as stored now, with the status built
 * again from it (someone else may have written it since the cache). */
static int pods__change(void *data, struct ynode *obj, struct error **err)
{
	(void)err;
	struct pods__write *w = data;
	const char *uid = ynode_path_str(obj, "metadata.uid");
	if (!uid || strcmp(uid, w->uid) != 0 || !pods__ours(w->p, obj))
		return 1; /* replaced meanwhile: its own event brings it */
	struct ynode *status =
	    podstatus_build(obj, w->report, w->p->host_ip, w->pod_ip, time(NULL));
	if (ynode_equal(status, ynode_get(obj, "status"))) {
		ynode_free(status);
		return 1;
	}
	ynode_set(obj, "status", status);
	return 0;
}

static char *pods__path(const struct pods *p, const char *key)
{
	const char *slash = strchr(key, '/');
	return xasprintf("%s/namespaces/%.*s/pods/%s.yaml", p->mount,
			 (int)(slash ? slash - key : 0), key, slash ? slash + 1 : key);
}

/* Deletes the mirror pod at key, whose static pod is gone. */
static int pods__mirror_delete(struct pods *p, const char *key)
{
	cleanup_free char *path = pods__path(p, key);
	if (unlink(path) < 0 && errno != ENOENT) {
		log_warn("mirror pod %s: cannot delete it: %s", key, strerror(errno));
		return 0;
	}
	log_info("mirror pod %s: deleted (its static pod is gone)", key);
	return 0;
}

/* The mirror of static pod pod, with status. */
static struct ynode *pods__mirror_new(const struct ynode *pod, const struct ynode *status)
{
	struct ynode *m = ynode_clone(pod);
	struct ynode *meta = ynode_get_map(m, "metadata");
	ynode_del(meta, "uid"); /* the mount gives the mirror its own */
	const char *hash = ynode_path_str(pod, "metadata.uid");
	ynode_set(ynode_get_map(meta, "annotations"), POD_MIRROR_ANNOTATION,
		  ynode_new_str(hash ? hash : ""));
	ynode_set(m, "status", ynode_clone(status));
	return m;
}

struct pods__mirror_write {
	const char *hash;
	const struct ynode *status;
};

/* objio_update's change of a mirror: its status, if it is still the
 * mirror of this static pod. */
static int pods__mirror_change(void *data, struct ynode *obj, struct error **err)
{
	struct pods__mirror_write *w = data;
	const char *of = pods__mirror_of(obj);
	if (!of)
		return error_set(err, EEXIST,
				 "a pod of that name that is not a mirror is in the way"),
		       -EEXIST;
	if (strcmp(of, w->hash) != 0)
		return -ESTALE; /* the mirror of an older version: made anew */
	if (ynode_equal(w->status, ynode_get(obj, "status")))
		return 1;
	ynode_set(obj, "status", ynode_clone(w->status));
	return 0;
}

/* Shows a static pod's status in its mirror, making the mirror when it is
 * missing or shows another version of the pod. */
static int pods__mirror_show(struct pods *p, const char *key, const struct ynode *pod,
			     const struct ynode *shown, const struct ynode *status,
			     struct error **err)
{
	const char *hash = ynode_path_str(pod, "metadata.uid");
	if (!hash)
		return 0;
	if (shown && pods__mirror_of(shown) && strcmp(pods__mirror_of(shown), hash) == 0 &&
	    ynode_equal(status, ynode_get(shown, "status")))
		return 0;
	cleanup_free char *path = pods__path(p, key);
	struct pods__mirror_write w = {hash, status};
	struct error *uerr = NULL;
	int r = objio_update(p->mount, path, pods__mirror_change, &w, OBJIO_TRIES, &uerr);
	if (r >= 0) {
		error_free(uerr);
		return 0;
	}
	if (r == -EEXIST) {
		log_warn("static pod %s: %s; its status is not shown", key, uerr->msg);
		error_free(uerr);
		return 0;
	}
	error_free(uerr);
	if (r == -ESTALE && unlink(path) < 0 && errno != ENOENT)
		return error_set(err, errno, "mirror pod %s: %s", key, strerror(errno));
	if (r != -ENOENT && r != -ESTALE)
		return error_set(err, -r, "mirror pod %s: %s", key, strerror(-r));
	cleanup_ynode struct ynode *m = pods__mirror_new(pod, status);
	r = objio_write(p->mount, path, m, err);
	if (r == 0)
		log_info("static pod %s: mirror pod made", key);
	return r;
}

static int pods__sync(void *data, const char *key, struct error **err)
{
	struct pods *p = data;
	const struct ynode *pod = pods__static(p, key);
	const struct ynode *shown = informer_get(p->inf, key); /* where its status is */
	bool is_static = pod != NULL;
	if (!is_static)
		pod = shown;
	struct pods__entry *e = pods__find(p, key);
	if (!is_static && pod && pods__our_mirror(p, pod)) {
		/* its static pod is gone */
		if (e)
			pods__forget(p, e, "gone from its static source");
		return pods__mirror_delete(p, key);
	}
	if (!pod || (!is_static && !pods__ours(p, pod))) {
		if (e)
			pods__forget(p, e, pod ? "left this node" : "deleted");
		return 0;
	}
	const char *uid = ynode_path_str(pod, "metadata.uid");
	if (!uid)
		return error_set(err, EINVAL, "pod has no metadata.uid");
	if (e && strcmp(e->uid, uid) != 0)
		pods__forget(p, e, "replaced by a new pod of the same name");
	bool fresh = !pods__find(p, key);
	pods__track(p, key, uid);
	if (fresh)
		log_debug("pod %s: first sync", key);

	char ipbuf[CIDR_IP_SIZE];
	const char *pod_ip = NULL;
	struct error *iperr = NULL;
	if (p->rt->wants_ip && p->ipam) {
		uint32_t ip;
		if (ipam_allocate(p->ipam, key, &ip, &iperr) == 0) {
			cidr_ip_format(ip, ipbuf);
			pod_ip = ipbuf;
		}
	}

	struct pod_report report = {0};
	int r = runtime_sync_pod(p->rt, key, pod, pod_ip, &report, err);
	if (r < 0) {
		pod_report_clear(&report);
		error_free(iperr);
		return r;
	}
	if (iperr) {
		/* no address: the sandbox cannot be made; say so and retry */
		report.sandbox_ready = false;
		for (size_t i = 0; i < report.ncontainers; i++) {
			struct pod_container_report *c = &report.containers[i];
			if (c->state != POD_CONTAINER_WAITING) {
				free(c->reason);
				free(c->message);
				c->state = POD_CONTAINER_WAITING;
				c->ready = c->started = false;
				c->reason = xstrdup("ContainerCreating");
				c->message = xstrdup(iperr->msg);
			}
		}
	}

	cleanup_ynode struct ynode *status =
	    podstatus_build(pod, &report, p->host_ip, pod_ip, time(NULL));
	if (report.settling) {
		/* written once the runtime is through: the pod's news comes then */
		r = 0;
	} else if (is_static) {
		r = pods__mirror_show(p, key, pod, shown, status, err);
	} else if (!ynode_equal(status, ynode_get(pod, "status"))) {
		cleanup_free char *path = pods__path(p, key);
		struct pods__write w = {p, uid, &report, pod_ip};
		uint64_t t0 = loop_now_ms();
		r = objio_update(p->mount, path, pods__change, &w, OBJIO_TRIES, err);
		log_debug("pod %s: status %s written in %llu ms", key,
			  ynode_str(ynode_get(status, "phase")),
			  (unsigned long long)(loop_now_ms() - t0));
		if (r == -ENOENT) {
			/* deleted meanwhile: the informer reports it */
			error_free(*err);
			*err = NULL;
			r = 0;
		} else if (r == 0 && fresh) {
			log_info("pod %s: %s%s%s", key, ynode_str(ynode_get(status, "phase")),
				 pod_ip ? ", IP " : "", pod_ip ? pod_ip : "");
		} else if (r > 0) {
			r = 0;
		}
	}
	pod_report_clear(&report);
	if (r == 0 && iperr) {
		*err = iperr;
		return -ENOSPC;
	}
	error_free(iperr);
	return r;
}

/* Syncs every pod of ours again: what runs may have changed on its own. */
static int pods__requeue(void *data, const char *key, const struct ynode *obj)
{
	struct pods *p = data;
	if (pods__ours(p, obj) || pods__find(p, key))
		workqueue_add(p->q, key);
	return 0;
}

/* A ConfigMap, Secret or PersistentVolumeClaim changed: the pods of this
 * node in its namespace are synced again, which rewrites their volumes'
 * files (and mounts a claim that has just been bound). */
static void pods__on_config(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct pods *p = data;
	const char *slash = strchr(key, '/');
	if (!slash)
		return;
	cleanup_free char *ns = xstrndup(key, (size_t)(slash - key));
	informer_foreach(p->inf, ns, pods__requeue, p);
}

static void pods__on_config_update(void *data, const char *key, const struct ynode *old,
				   const struct ynode *obj)
{
	(void)old;
	pods__on_config(data, key, obj);
}

static void pods__on_resync(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct pods *p = data;
	informer_foreach(p->inf, NULL, pods__requeue, p);
	const char *key;
	for (size_t i = 0; strmap_next(p->statics, &i, &key, NULL);)
		workqueue_add(p->q, key);
}

/* A pod the runtime killed has left the host: its address is free. */
static void pods__gone(void *data, const char *uid)
{
	struct pods *p = data;
	cleanup_free char *held = xasprintf("~%s", uid);
	uint32_t ip;
	if (p->ipam && ipam_lookup(p->ipam, held, &ip)) {
		char shown[CIDR_IP_SIZE];
		cidr_ip_format(ip, shown);
		ipam_release(p->ipam, held);
		log_info("pod %s has stopped: released %s", uid, shown);
	}
}

/* The runtime wants a ConfigMap or Secret: from the caches that follow
 * them, when they are followed. */
static int pods__cached(void *data, const char *plural, const char *ns, const char *name,
			struct ynode **out)
{
	struct pods *p = data;
	struct informer *inf = !p->configmaps			   ? NULL
			       : strcmp(plural, "configmaps") == 0 ? p->configmaps
			       : strcmp(plural, "secrets") == 0	   ? p->secrets
								   : NULL;
	if (!inf)
		return 1;
	cleanup_free char *key = xasprintf("%s/%s", ns, name);
	const struct ynode *obj = informer_get(inf, key);
	if (!obj)
		return -ENOENT;
	*out = ynode_clone(obj);
	return 0;
}

/* The runtime learnt that a pod changed on its own. */
static void pods__notify(void *data, const char *key)
{
	struct pods *p = data;
	workqueue_add(p->q, key);
}

struct pods *pods_new(struct loop *loop, const struct pods_opts *o, struct runtime *rt)
{
	struct pods *p = xcalloc(1, sizeof(*p));
	p->loop = loop;
	p->mount = xstrdup(o->mount);
	p->node = xstrdup(o->node_name);
	p->host_ip = xstrdup(o->host_ip);
	p->rt = rt;
	p->ipam = o->pod_cidr ? ipam_new(o->pod_cidr) : NULL;
	p->resync_ms = o->resync_ms;
	p->inf = informer_new(loop, o->mount, "pods", true);
	p->statics = strmap_new();
	static const struct workqueue_opts qo = {.base_delay_ms = 5, .max_delay_ms = 30000};
	p->q = workqueue_new(loop, "pods", &qo);
	static const struct informer_handlers h = {
	    .on_add = pods__on_add,
	    .on_update = pods__on_update,
	    .on_delete = pods__on_delete,
	};
	informer_add_handlers(p->inf, &h, p);
	workqueue_set_handler(p->q, pods__sync, p);
	if (o->follow_config) {
		static const struct informer_handlers ch = {
		    .on_add = pods__on_config,
		    .on_update = pods__on_config_update,
		    .on_delete = pods__on_config,
		};
		p->configmaps = informer_new(loop, o->mount, "configmaps", true);
		p->secrets = informer_new(loop, o->mount, "secrets", true);
		informer_add_handlers(p->configmaps, &ch, p);
		informer_add_handlers(p->secrets, &ch, p);
		p->claims = informer_new(loop, o->mount, "persistentvolumeclaims", true);
		informer_add_handlers(p->claims, &ch, p);
	}
	rt->notify = pods__notify;
	rt->gone = pods__gone;
	rt->cached = pods__cached;
	rt->notify_data = p;
	return p;
}

int pods_start(struct pods *p, struct error **err)
{
	/* No relists: every agent relisting every pod would read the whole
	 * cluster once per node and period. inotify and the informer's
	 * relist on overflow keep the cache; the timer re-syncs from it. */
	if (informer_start(p->inf, err) < 0) {
		error_prefix(err, "pods");
		return -1;
	}
	if (p->configmaps &&
	    (informer_start(p->configmaps, err) < 0 || informer_start(p->secrets, err) < 0 ||
	     informer_start(p->claims, err) < 0)) {
		error_prefix(err, "configmaps, secrets and claims");
		return -1;
	}
	if (p->resync_ms) {
		p->resync = loop_timer_new(p->loop, pods__on_resync, p);
		loop_timer_start(p->resync, p->resync_ms, p->resync_ms);
	}
	log_info("following %zu pods of this node (%zu in the cluster)", p->ntracked,
		 informer_count(p->inf));
	return 0;
}

struct pods__visit {
	const struct pods *p;
	int (*cb)(void *data, const char *key, const struct ynode *pod);
	void *data;
};

static int pods__visit_ours(void *data, const char *key, const struct ynode *pod)
{
	struct pods__visit *v = data;
	return pods__ours(v->p, pod) ? v->cb(v->data, key, pod) : 0;
}

int pods_foreach(const struct pods *p,
		 int (*cb)(void *data, const char *key, const struct ynode *pod), void *data)
{
	struct pods__visit v = {p, cb, data};
	return informer_foreach(p->inf, NULL, pods__visit_ours, &v);
}

void pods_static_set(struct pods *p, const char *key, struct ynode *pod)
{
	ynode_free(pod ? strmap_set(p->statics, key, pod) : strmap_del(p->statics, key));
	workqueue_add(p->q, key);
}

size_t pods_count(const struct pods *p)
{
	return p->ntracked;
}

void pods_free(struct pods *p)
{
	if (!p)
		return;
	loop_timer_free(p->resync);
	p->rt->notify = NULL;
	p->rt->gone = NULL;
	p->rt->cached = NULL;
	p->rt->notify_data = NULL;
	workqueue_set_handler(p->q, NULL, NULL);
	informer_free(p->inf);
	informer_free(p->configmaps);
	informer_free(p->secrets);
	informer_free(p->claims);
	workqueue_free(p->q);
	tdestroy(p->tracked, pods__free_entry);
	strmap_free(p->statics, (void (*)(void *))ynode_free);
	ipam_free(p->ipam);
	free(p->mount);
	free(p->node);
	free(p->host_ip);
	free(p);
}

void pods_freep(struct pods **p)
{
	pods_free(*p);
	*p = NULL;
}
