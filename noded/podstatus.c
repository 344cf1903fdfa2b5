/* podstatus.c: pod phase, conditions and container statuses, as the kubelet
 * writes them. */
#include "podstatus.h"
#include "conditions.h"
#include "quantity.h"
#include "timefmt.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void pod__container_clear(struct pod_container_report *c)
{
	free(c->name);
	free(c->image);
	free(c->image_id);
	free(c->container_id);
	free(c->reason);
	free(c->message);
	free(c->last_reason);
}

void pod_report_clear(struct pod_report *r)
{
	for (size_t i = 0; i < r->ninit; i++)
		pod__container_clear(&r->init[i]);
	for (size_t i = 0; i < r->ncontainers; i++)
		pod__container_clear(&r->containers[i]);
	free(r->init);
	free(r->containers);
	free(r->pod_reason);
	free(r->pod_message);
	*r = (struct pod_report){0};
}

static struct pod_container_report *pod__from_list(const struct ynode *list, size_t *n)
{
	*n = list && list->type == YNODE_SEQ ? list->n : 0;
	struct pod_container_report *v = *n ? xcalloc(*n, sizeof(*v)) : NULL;
	for (size_t i = 0; i < *n; i++) {
		const char *name = ynode_path_str(ynode_item(list, i), "name");
		const char *image = ynode_path_str(ynode_item(list, i), "image");
		v[i].name = xstrdup(name ? name : "");
		v[i].image = xstrdup(image ? image : "");
	}
	return v;
}

void pod_report_from_spec(struct pod_report *r, const struct ynode *pod)
{
	*r = (struct pod_report){0};
	r->init = pod__from_list(ynode_path(pod, "spec.initContainers"), &r->ninit);
	r->containers = pod__from_list(ynode_path(pod, "spec.containers"), &r->ncontainers);
}

static bool pod__succeeded(const struct pod_container_report *c)
{
	return c->state == POD_CONTAINER_TERMINATED && c->exit_code == 0;
}

const char *podstatus_phase(const struct pod_report *r, const char *restart_policy)
{
	bool always = !restart_policy || strcmp(restart_policy, "Always") == 0;
	bool never = restart_policy && strcmp(restart_policy, "Never") == 0;
	for (size_t i = 0; i < r->ninit; i++) {
		const struct pod_container_report *c = &r->init[i];
		if (pod__succeeded(c))
			continue;
		if (c->state == POD_CONTAINER_TERMINATED && never)
			return "Failed";
		return "Pending";
	}
	size_t waiting_first = 0, running = 0, stopped = 0, succeeded = 0;
	for (size_t i = 0; i < r->ncontainers; i++) {
		const struct pod_container_report *c = &r->containers[i];
		switch (c->state) {
		case POD_CONTAINER_WAITING:
			/* one waiting to restart counts as stopped */
			if (c->restart_count == 0)
				waiting_first++;
			else
				stopped++;
			break;
		case POD_CONTAINER_RUNNING:
			running++;
			break;
		case POD_CONTAINER_TERMINATED:
			stopped++;
			if (c->exit_code == 0)
				succeeded++;
			break;
		}
	}
	if (waiting_first || r->ncontainers == 0)
		return "Pending";
	if (running)
		return "Running";
	if (always)
		return "Running"; /* restarting */
	if (succeeded == stopped)
		return "Succeeded";
	return never ? "Failed" : "Running";
}

/* ---- QoS class ------------------------------------------------------------ */

static bool pod__quantity(const struct ynode *list, const char *res, int64_t *milli)
{
	const char *s = ynode_path_str(list, res);
	return s && quantity_parse(s, milli, NULL) == 0;
}

const char *podstatus_qos_class(const struct ynode *pod)
{
	static const char *const lists[] = {"spec.initContainers", "spec.containers"};
	static const char *const resources[] = {"cpu", "memory"};
	bool any = false, guaranteed = true;
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const struct ynode *req =
			    ynode_path(ynode_item(cs, i), "resources.requests");
			const struct ynode *lim = ynode_path(ynode_item(cs, i), "resources.limits");
			for (size_t k = 0; k < ARRAY_SIZE(resources); k++) {
				int64_t q = 0, m = 0;
				bool hq = pod__quantity(req, resources[k], &q);
				bool hl = pod__quantity(lim, resources[k], &m);
				if ((hq && q != 0) || (hl && m != 0))
					any = true;
				/* a request left out defaults to the limit */
				if (!hl || m == 0 || (hq && q != m))
					guaranteed = false;
			}
		}
	}
	if (!any)
		return "BestEffort";
	return guaranteed ? "Guaranteed" : "Burstable";
}

/* ---- the status ------------------------------------------------------------ */

/* The stored status of the container named name, in the list at key. */
static const struct ynode *pod__old_container(const struct ynode *old_status, const char *key,
					      const char *name)
{
	const struct ynode *list = ynode_get(old_status, key);
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const char *n = ynode_path_str(ynode_item(list, i), "name");
		if (n && strcmp(n, name) == 0)
			return ynode_item(list, i);
	}
	return NULL;
}

/* The stored time at path of the container's state, if it is the same
 * container (same containerID) in the same state; else t (0: now). */
static struct ynode *pod__time(const struct ynode *old, const char *container_id, const char *path,
			       time_t t, time_t now)
{
	const char *oid = ynode_path_str(old, "containerID");
	const char *ot = ynode_path_str(old, path);
	if (ot && oid && container_id && strcmp(oid, container_id) == 0)
		return ynode_new_str(ot);
	char buf[RFC3339_SIZE];
	rfc3339_format(t ? t : now, buf);
	return ynode_new_str(buf);
}

static struct ynode *pod__container_status(const struct pod_container_report *c,
					   const struct ynode *old, time_t now)
{
	struct ynode *m = ynode_new_map();
	ynode_set(m, "name", ynode_new_str(c->name));
	ynode_set(m, "image", ynode_new_str(c->image ? c->image : ""));
	ynode_set(m, "imageID", ynode_new_str(c->image_id ? c->image_id : ""));
	if (c->container_id)
		ynode_set(m, "containerID", ynode_new_str(c->container_id));
	ynode_set(m, "ready", ynode_new_bool(c->ready));
	ynode_set(m, "started", ynode_new_bool(c->started));
	ynode_set(m, "restartCount", ynode_new_int(c->restart_count));
	if (c->has_last) {
		struct ynode *t = ynode_new_map();
		char buf[RFC3339_SIZE];
		ynode_set(t, "exitCode", ynode_new_int(c->last_exit_code));
		ynode_set(t, "reason",
			  ynode_new_str(c->last_reason		 ? c->last_reason
					: c->last_exit_code == 0 ? "Completed"
								 : "Error"));
		rfc3339_format(c->last_started_at ? c->last_started_at : now, buf);
		ynode_set(t, "startedAt", ynode_new_str(buf));
		rfc3339_format(c->last_finished_at ? c->last_finished_at : now, buf);
		ynode_set(t, "finishedAt", ynode_new_str(buf));
		struct ynode *last = ynode_new_map();
		ynode_set(last, "terminated", t);
		ynode_set(m, "lastState", last);
	} else {
		/* a runtime that does not know keeps what was stored */
		const struct ynode *last = ynode_get(old, "lastState");
		ynode_set(m, "lastState", last ? ynode_clone(last) : ynode_new_map());
	}

	struct ynode *state = ynode_new_map();
	struct ynode *s = ynode_new_map();
	switch (c->state) {
	case POD_CONTAINER_WAITING:
		if (c->reason)
			ynode_set(s, "reason", ynode_new_str(c->reason));
		if (c->message)
			ynode_set(s, "message", ynode_new_str(c->message));
		ynode_set(state, "waiting", s);
		break;
	case POD_CONTAINER_RUNNING:
		ynode_set(
		    s, "startedAt",
		    pod__time(old, c->container_id, "state.running.startedAt", c->started_at, now));
		ynode_set(state, "running", s);
		break;
	case POD_CONTAINER_TERMINATED:
		ynode_set(s, "exitCode", ynode_new_int(c->exit_code));
		ynode_set(s, "reason",
			  ynode_new_str(c->reason	    ? c->reason
					: c->exit_code == 0 ? "Completed"
							    : "Error"));
		if (c->message)
			ynode_set(s, "message", ynode_new_str(c->message));
		ynode_set(s, "startedAt",
			  pod__time(old, c->container_id, "state.terminated.startedAt",
				    c->started_at, now));
		ynode_set(s, "finishedAt",
			  pod__time(old, c->container_id, "state.terminated.finishedAt",
				    c->finished_at, now));
		if (c->container_id)
			ynode_set(s, "containerID", ynode_new_str(c->container_id));
		ynode_set(state, "terminated", s);
		break;
	}
	ynode_set(m, "state", state);
	return m;
}

static struct ynode *pod__statuses(const struct pod_container_report *v, size_t n,
				   const struct ynode *old_status, const char *key, time_t now)
{
	struct ynode *seq = ynode_new_seq();
	for (size_t i = 0; i < n; i++)
		ynode_append(seq, pod__container_status(
				      &v[i], pod__old_container(old_status, key, v[i].name), now));
	return seq;
}

/* "containers with unready status: [a b]", or NULL when all are ready. */
static char *pod__unready(const struct pod_container_report *v, size_t n, bool init,
			  const char *what)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		if (init ? !pod__succeeded(&v[i]) : !v[i].ready)
			len += strlen(v[i].name) + 1;
	if (!len)
		return NULL;
	char *names = xcalloc(1, len + 1);
	for (size_t i = 0; i < n; i++) {
		if (init ? pod__succeeded(&v[i]) : v[i].ready)
			continue;
		if (*names)
			strcat(names, " ");
		strcat(names, v[i].name);
	}
	char *msg = xasprintf("containers with %s status: [%s]", what, names);
	free(names);
	return msg;
}

static struct ynode *pod__ips(const char *ip)
{
	struct ynode *seq = ynode_new_seq();
	struct ynode *m = ynode_new_map();
	ynode_set(m, "ip", ynode_new_str(ip));
	ynode_append(seq, m);
	return seq;
}

struct ynode *podstatus_build(const struct ynode *pod, const struct pod_report *r,
			      const char *host_ip, const char *pod_ip, time_t now)
{
	const struct ynode *old = ynode_get(pod, "status");
	struct ynode *st = old && old->type == YNODE_MAP ? ynode_clone(old) : ynode_new_map();
	char nowbuf[RFC3339_SIZE];
	rfc3339_format(now, nowbuf);

	const char *phase = r->pod_reason
				? "Failed"
				: podstatus_phase(r, ynode_path_str(pod, "spec.restartPolicy"));
	ynode_set(st, "phase", ynode_new_str(phase));
	if (r->pod_reason) {
		ynode_set(st, "reason", ynode_new_str(r->pod_reason));
		ynode_set(st, "message", ynode_new_str(r->pod_message ? r->pod_message : ""));
	}
	if (host_ip) {
		ynode_set(st, "hostIP", ynode_new_str(host_ip));
		ynode_set(st, "hostIPs", pod__ips(host_ip));
	}
	if (pod_ip && r->sandbox_ready) {
		ynode_set(st, "podIP", ynode_new_str(pod_ip));
		ynode_set(st, "podIPs", pod__ips(pod_ip));
	} else {
		ynode_del(st, "podIP");
		ynode_del(st, "podIPs");
	}
	if (!ynode_path_str(old, "startTime"))
		ynode_set(st, "startTime", ynode_new_str(nowbuf));
	ynode_set(st, "qosClass", ynode_new_str(podstatus_qos_class(pod)));

	/* conditions: ours replaced, others' kept in place */
	cleanup_free char *uninit = pod__unready(r->init, r->ninit, true, "incomplete");
	cleanup_free char *unready = pod__unready(r->containers, r->ncontainers, false, "unready");
	const struct condition ours[] = {
	    {"Initialized", uninit ? "False" : "True", uninit ? "ContainersNotInitialized" : NULL,
	     uninit},
	    {"Ready", unready ? "False" : "True", unready ? "ContainersNotReady" : NULL, unready},
	    {"ContainersReady", unready ? "False" : "True", unready ? "ContainersNotReady" : NULL,
	     unready},
	    {"PodScheduled", "True", NULL, NULL},
	};
	const struct ynode *oldc = ynode_get(old, "conditions");
	struct ynode *conds = ynode_new_seq();
	for (size_t i = 0; i < ARRAY_SIZE(ours); i++)
		ynode_append(conds, condition_build(&ours[i], condition_find(oldc, ours[i].type),
						    nowbuf, CONDITION_PROBE_TIME));
	for (size_t i = 0; oldc && oldc->type == YNODE_SEQ && i < oldc->n; i++) {
		const char *t = ynode_path_str(ynode_item(oldc, i), "type");
		bool mine = false;
		for (size_t k = 0; t && k < ARRAY_SIZE(ours); k++)
			mine = mine || strcmp(t, ours[k].type) == 0;
		if (!mine)
			ynode_append(conds, ynode_clone(ynode_item(oldc, i)));
	}
	ynode_set(st, "conditions", conds);

	if (r->ninit)
		ynode_set(st, "initContainerStatuses",
			  pod__statuses(r->init, r->ninit, old, "initContainerStatuses", now));
	else
		ynode_del(st, "initContainerStatuses");
	ynode_set(st, "containerStatuses",
		  pod__statuses(r->containers, r->ncontainers, old, "containerStatuses", now));
	/* Pending pods say why in their containers; a phase-level reason
	 * (Evicted, ...) belongs to lifecycle handling, which sets it */
	return st;
}
