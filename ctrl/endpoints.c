/* endpoints.c: the Endpoints controller.
 *
 * One sync per service key: the pods of its namespace that its selector
 * matches (a scan of the namespace's pods; parsed selectors are cached per
 * service), built into an Endpoints object and compared with the cached
 * one; only a difference is written. A pod's change enqueues the services
 * whose selectors match its old or new labels. A service with a write in
 * flight waits until its informer shows it (expect.h), so that writes for
 * one service never overtake each other.
 *
 * This file must never write anything but the Endpoints of services that
 * have a selector, and never delete Endpoints whose service exists. */
#include "endpoints.h"
#include "ctrl.h"
#include "expect.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "selector.h"
#include "treepath.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ----------------------------------------------------------- */

static bool ep__empty(const char *s)
{
	return !s || !*s;
}

static const char *ep__protocol(const struct ynode *port)
{
	const char *p = ynode_str(ynode_get(port, "protocol"));
	return ep__empty(p) ? "TCP" : p;
}

int endpoints_target_port(const struct ynode *svc_port, const struct ynode *pod, long long *out)
{
	const struct ynode *tp = ynode_get(svc_port, "targetPort");
	if (ynode_is_null(tp) || (!tp->quoted && ynode_int(tp, out) == 0 && *out == 0))
		return ynode_int(ynode_get(svc_port, "port"), out) == 0 ? 0 : -1;
	if (!tp->quoted && ynode_int(tp, out) == 0)
		return 0;
	const char *name = ynode_str(tp);
	const char *proto = ep__protocol(svc_port);
	const struct ynode *cs = ynode_path(pod, "spec.containers");
	for (size_t i = 0; name && cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
		const struct ynode *ports = ynode_get(ynode_item(cs, i), "ports");
		for (size_t j = 0; ports && ports->type == YNODE_SEQ && j < ports->n; j++) {
			const struct ynode *p = ynode_item(ports, j);
			const char *pn = ynode_str(ynode_get(p, "name"));
			if (pn && !strcmp(pn, name) && !strcmp(ep__protocol(p), proto) &&
			    ynode_int(ynode_get(p, "containerPort"), out) == 0)
				return 0;
		}
	}
	return -1;
}

bool endpoints_pod_eligible(const struct ynode *pod, bool tolerate_unready)
{
	if (ep__empty(ynode_path_str(pod, "status.podIP")))
		return false;
	if (!tolerate_unready && object_is_deleting(pod))
		return false;
	return !pod_is_terminal(pod);
}

/* Addresses of one port set. */
struct ep__subset {
	char *sig; /* the ports, as text: the grouping key */
	struct ynode *ports;
	struct ynode **ready, **unready;
	size_t nready, nunready, cap_ready, cap_unready;
};

static void ep__push(struct ynode ***v, size_t *n, size_t *cap, struct ynode *x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = x;
}

static int ep__port_cmp(const void *pa, const void *pb)
{
	const struct ynode *a = *(const struct ynode *const *)pa;
	const struct ynode *b = *(const struct ynode *const *)pb;
	const char *an = ynode_str(ynode_get(a, "name")), *bn = ynode_str(ynode_get(b, "name"));
	int c = strcmp(an ? an : "", bn ? bn : "");
	if (c)
		return c;
	long long ap = 0, bp = 0;
	ynode_int(ynode_get(a, "port"), &ap);
	ynode_int(ynode_get(b, "port"), &bp);
	if (ap != bp)
		return ap < bp ? -1 : 1;
	return strcmp(ep__protocol(a), ep__protocol(b));
}

/* By address, numerically, then by pod name. */
static int ep__addr_cmp(const void *pa, const void *pb)
{
	const struct ynode *a = *(const struct ynode *const *)pa;
	const struct ynode *b = *(const struct ynode *const *)pb;
	unsigned a1 = 0, a2 = 0, a3 = 0, a4 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0;
	const char *ai = ynode_str(ynode_get(a, "ip")), *bi = ynode_str(ynode_get(b, "ip"));
	int na = ai ? sscanf(ai, "%u.%u.%u.%u", &a1, &a2, &a3, &a4) : 0;
	int nb = bi ? sscanf(bi, "%u.%u.%u.%u", &b1, &b2, &b3, &b4) : 0;
	if (na == 4 && nb == 4) {
		unsigned long va = ((unsigned long)a1 << 24) | (a2 << 16) | (a3 << 8) | a4;
		unsigned long vb = ((unsigned long)b1 << 24) | (b2 << 16) | (b3 << 8) | b4;
		if (va != vb)
			return va < vb ? -1 : 1;
	} else {
		int c = strcmp(ai ? ai : "", bi ? bi : "");
		if (c)
			return c;
	}
	const char *an = ynode_path_str(a, "targetRef.name");
	const char *bn = ynode_path_str(b, "targetRef.name");
	return strcmp(an ? an : "", bn ? bn : "");
}

static int ep__subset_cmp(const void *pa, const void *pb)
{
	const struct ep__subset *a = pa, *b = pb;
	return strcmp(a->sig, b->sig);
}

static struct ynode *ep__address(const struct ynode *svc, const struct ynode *pod)
{
	struct ynode *a = ynode_new_map();
	ynode_set(a, "ip", ynode_new_str(ynode_path_str(pod, "status.podIP")));
	const char *host = ynode_path_str(pod, "spec.hostname");
	const char *sub = ynode_path_str(pod, "spec.subdomain");
	if (!ep__empty(host) && sub && obj_name(svc) && !strcmp(sub, obj_name(svc)))
		ynode_set(a, "hostname", ynode_new_str(host));
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (!ep__empty(node))
		ynode_set(a, "nodeName", ynode_new_str(node));
	struct ynode *ref = ynode_new_map();
	ynode_set(ref, "kind", ynode_new_str("Pod"));
	if (obj_namespace(pod))
		ynode_set(ref, "namespace", ynode_new_str(obj_namespace(pod)));
	if (obj_name(pod))
		ynode_set(ref, "name", ynode_new_str(obj_name(pod)));
	if (obj_uid(pod))
		ynode_set(ref, "uid", ynode_new_str(obj_uid(pod)));
	ynode_set(a, "targetRef", ref);
	return a;
}

/* The ports svc reaches on pod, sorted, and their text form. */
static struct ynode *ep__pod_ports(const struct ynode *svc_ports, const struct ynode *pod,
				   char **sig)
{
	struct ynode *out = ynode_new_seq();
	for (size_t i = 0; svc_ports && svc_ports->type == YNODE_SEQ && i < svc_ports->n; i++) {
		const struct ynode *sp = ynode_item(svc_ports, i);
		long long port = 0;
		if (endpoints_target_port(sp, pod, &port) < 0 || port < 1 || port > 65535)
			continue;
		struct ynode *p = ynode_new_map();
		const char *name = ynode_str(ynode_get(sp, "name"));
		if (!ep__empty(name))
			ynode_set(p, "name", ynode_new_str(name));
		ynode_set(p, "port", ynode_new_int(port));
		ynode_set(p, "protocol", ynode_new_str(ep__protocol(sp)));
		const char *app = ynode_str(ynode_get(sp, "appProtocol"));
		if (!ep__empty(app))
			ynode_set(p, "appProtocol", ynode_new_str(app));
		ynode_append(out, p);
	}
	if (out->n > 1)
		qsort(out->items, out->n, sizeof(*out->items), ep__port_cmp);
	size_t len = 1;
	char *s = xcalloc(1, 1);
	for (size_t i = 0; i < out->n; i++) {
		const struct ynode *p = ynode_item(out, i);
		const char *name = ynode_str(ynode_get(p, "name"));
		cleanup_free char *part = xasprintf("%s/%s/%s;", name ? name : "",
						    ynode_path_str(p, "port"), ep__protocol(p));
		len += strlen(part);
		s = xrealloc(s, len);
		strcat(s, part);
	}
	*sig = s;
	return out;
}

static struct ynode *ep__seq_of(struct ynode **v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), ep__addr_cmp);
	struct ynode *seq = ynode_new_seq();
	for (size_t i = 0; i < n; i++)
		ynode_append(seq, v[i]);
	return seq;
}

struct ynode *endpoints_build(const struct ynode *svc, const struct ynode *const *pods, size_t n)
{
	const struct ynode *spec = ynode_get(svc, "spec");
	const struct ynode *svc_ports = ynode_get(spec, "ports");
	bool have_ports = svc_ports && svc_ports->type == YNODE_SEQ && svc_ports->n;
	const char *cip = ynode_path_str(spec, "clusterIP");
	bool headless = cip && !strcmp(cip, "None");
	bool tolerate = false;
	ynode_bool(ynode_get(spec, "publishNotReadyAddresses"), &tolerate);

	struct ep__subset *subs = NULL;
	size_t nsubs = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ynode *pod = pods[i];
		if (!endpoints_pod_eligible(pod, tolerate))
			continue;
		if (!have_ports && !headless)
			continue;
		char *sig = NULL;
		struct ynode *ports = ep__pod_ports(svc_ports, pod, &sig);
		if (have_ports && !ports->n) {
			ynode_free(ports);
			free(sig);
			continue;
		}
		struct ep__subset *s = NULL;
		for (size_t j = 0; j < nsubs && !s; j++)
			if (!strcmp(subs[j].sig, sig))
				s = &subs[j];
		if (s) {
			ynode_free(ports);
			free(sig);
		} else {
			subs = xrealloc(subs, (nsubs + 1) * sizeof(*subs));
			s = &subs[nsubs++];
			memset(s, 0, sizeof(*s));
			s->sig = sig;
			s->ports = ports;
		}
		struct ynode *addr = ep__address(svc, pod);
		if (tolerate || pod_is_ready(pod, NULL))
			ep__push(&s->ready, &s->nready, &s->cap_ready, addr);
		else
			ep__push(&s->unready, &s->nunready, &s->cap_unready, addr);
	}
	if (nsubs > 1)
		qsort(subs, nsubs, sizeof(*subs), ep__subset_cmp);

	struct ynode *ep = ynode_new_map();
	ynode_set(ep, "apiVersion", ynode_new_str("v1"));
	ynode_set(ep, "kind", ynode_new_str("Endpoints"));
	struct ynode *md = ynode_get_map(ep, "metadata");
	if (obj_name(svc))
		ynode_set(md, "name", ynode_new_str(obj_name(svc)));
	if (obj_namespace(svc))
		ynode_set(md, "namespace", ynode_new_str(obj_namespace(svc)));
	const struct ynode *labels = ynode_path(svc, "metadata.labels");
	struct ynode *l =
	    labels && labels->type == YNODE_MAP ? ynode_clone(labels) : ynode_new_map();
	if (headless)
		ynode_set(l, ENDPOINTS_HEADLESS_LABEL, ynode_new_str(""));
	if (l->n)
		ynode_set(md, "labels", l);
	else
		ynode_free(l);
	if (nsubs) {
		struct ynode *seq = ynode_new_seq();
		for (size_t j = 0; j < nsubs; j++) {
			struct ep__subset *s = &subs[j];
			struct ynode *sub = ynode_new_map();
			if (s->nready)
				ynode_set(sub, "addresses", ep__seq_of(s->ready, s->nready));
			if (s->nunready)
				ynode_set(sub, "notReadyAddresses",
					  ep__seq_of(s->unready, s->nunready));
			if (s->ports->n)
				ynode_set(sub, "ports", s->ports);
			else
				ynode_free(s->ports);
			ynode_append(seq, sub);
			free(s->ready);
			free(s->unready);
			free(s->sig);
		}
		ynode_set(ep, "subsets", seq);
	}
	free(subs);
	return ep;
}

/* ---- the controller ----------------------------------------------------- */

struct endpointsc {
	struct ctrl *c;
	struct informer *svcs, *pods, *eps;
	struct workqueue *q;
	struct expect *exp;
	struct keymap *sels; /* service key -> struct selector, for those with one */
	bool synced;	     /* the first sync ran: everything was listed */
};

struct ep__op {
	struct endpointsc *e;
	char *key;
	bool del;
};

static void ep__sel_free(void *p)
{
	selector_free(p);
}

static void ep__written(void *data, const struct writer_result *res)
{
	struct ep__op *op = data;
	struct endpointsc *e = op->e;
	bool ok = res->status == 0;
	expect_written(e->exp, op->key, ok, e->eps, op->key, res->min_rv, op->del, loop_now_ms());
	if (ok || res->status == ENOENT) {
		workqueue_add(e->q, op->key);
	} else {
		log_warn("Endpoints %s: cannot %s: %s", op->key, op->del ? "delete" : "write",
			 res->msg);
		workqueue_add_rate_limited(e->q, op->key);
	}
	free(op->key);
	free(op);
}

static void ep__submit_op(struct endpointsc *e, const char *key, bool del, struct ep__op **out)
{
	struct ep__op *op = xcalloc(1, sizeof(*op));
	op->e = e;
	op->key = xstrdup(key);
	op->del = del;
	expect_write(e->exp, key);
	*out = op;
}

/* Sets what the controller owns in an existing Endpoints object. */
static int ep__mutate(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const struct ynode *want = arg;
	int changed = 0;
	const struct ynode *wl = ynode_path(want, "metadata.labels");
	struct ynode *md = ynode_get_map(obj, "metadata");
	if (!ynode_equal(ynode_get(md, "labels"), wl)) {
		if (wl)
			ynode_set(md, "labels", ynode_clone(wl));
		else
			ynode_del(md, "labels");
		changed = 1;
	}
	const struct ynode *ws = ynode_get(want, "subsets");
	if (!ynode_equal(ynode_get(obj, "subsets"), ws)) {
		if (ws)
			ynode_set(obj, "subsets", ynode_clone(ws));
		else
			ynode_del(obj, "subsets");
		changed = 1;
	}
	return changed;
}

struct ep__collect {
	const struct selector *sel;
	const struct ynode **pods;
	size_t n, cap;
};

static int ep__collect_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	struct ep__collect *cl = data;
	if (!selector_matches(cl->sel, ynode_path(pod, "metadata.labels")))
		return 0;
	if (cl->n == cl->cap) {
		cl->cap = cl->cap ? 2 * cl->cap : 16;
		cl->pods = xrealloc(cl->pods, cl->cap * sizeof(*cl->pods));
	}
	cl->pods[cl->n++] = pod;
	return 0;
}

static int ep__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct endpointsc *e = data;
	e->synced = true;
	uint64_t recheck = 0;
	if (!expect_ready(e->exp, key, loop_now_ms(), &recheck)) {
		if (recheck)
			workqueue_add_after(e->q, key, recheck);
		return 0;
	}
	const struct ynode *svc = informer_get(e->svcs, key);
	const struct ynode *cur = informer_get(e->eps, key);
	char ns[256];
	const char *name = obj_key_split(key, ns, sizeof(ns));
	if (!name)
		return 0;
	if (!svc) {
		expect_forget(e->exp, key);
		if (!cur)
			return 0;
		cleanup_free char *path = obj_path("endpoints", ns, name);
		struct ep__op *op;
		ep__submit_op(e, key, true, &op);
		writer_delete(e->c->writer, path, NULL, 0, ep__written, op);
		return 0;
	}
	const struct selector *sel = keymap_get(e->sels, key);
	if (!sel)
		return 0; /* no selector: not ours */
	struct ep__collect cl = {.sel = sel};
	informer_foreach(e->pods, ns, ep__collect_pod, &cl);
	struct ynode *want = endpoints_build(svc, cl.pods, cl.n);
	free(cl.pods);
	if (cur && ynode_equal(ynode_get(cur, "subsets"), ynode_get(want, "subsets")) &&
	    ynode_equal(ynode_path(cur, "metadata.labels"), ynode_path(want, "metadata.labels"))) {
		ynode_free(want);
		return 0;
	}
	struct ep__op *op;
	ep__submit_op(e, key, false, &op);
	if (cur) {
		cleanup_free char *path = obj_path("endpoints", ns, name);
		writer_update(e->c->writer, path, ep__mutate, want, ctrl_ynode_free, 0, ep__written,
			      op);
	} else {
		cleanup_free char *dir = treepath_folder("endpoints", ns);
		writer_create(e->c->writer, dir, want, 0, ep__written, op);
	}
	return 0;
}

/* ---- events from the informers ------------------------------------------ */

static void ep__cache_selector(struct endpointsc *e, const char *key, const struct ynode *svc)
{
	const char *type = ynode_path_str(svc, "spec.type");
	const struct ynode *s = ynode_path(svc, "spec.selector");
	struct selector *sel = NULL;
	if ((type && !strcmp(type, "ExternalName")) || !s || s->type != YNODE_MAP || !s->n ||
	    selector_parse_map(s, &sel, NULL) < 0 || selector_is_nothing(sel)) {
		selector_free(sel);
		keymap_del(e->sels, key);
		return;
	}
	keymap_set(e->sels, key, sel);
}

static void ep__on_svc(void *data, const char *key, const struct ynode *svc)
{
	struct endpointsc *e = data;
	ep__cache_selector(e, key, svc);
	workqueue_add(e->q, key);
}

static void ep__on_svc_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *svc)
{
	(void)old;
	ep__on_svc(data, key, svc);
}

static void ep__on_svc_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct endpointsc *e = data;
	keymap_del(e->sels, key);
	workqueue_add(e->q, key);
}

struct ep__match {
	struct endpointsc *e;
	const struct ynode *labels, *old_labels;
};

static int ep__match_svc(void *data, const char *key, const struct ynode *svc)
{
	(void)svc;
	struct ep__match *m = data;
	const struct selector *sel = keymap_get(m->e->sels, key);
	if (sel && (selector_matches(sel, m->labels) ||
		    (m->old_labels && selector_matches(sel, m->old_labels))))
		workqueue_add(m->e->q, key);
	return 0;
}

static void ep__enqueue_for_pod(struct endpointsc *e, const struct ynode *pod,
				const struct ynode *old)
{
	struct ep__match m = {.e = e,
			      .labels = ynode_path(pod, "metadata.labels"),
			      .old_labels = old ? ynode_path(old, "metadata.labels") : NULL};
	informer_foreach(e->svcs, obj_namespace(pod), ep__match_svc, &m);
}

static void ep__on_pod(void *data, const char *key, const struct ynode *pod)
{
	(void)key;
	ep__enqueue_for_pod(data, pod, NULL);
}

/* Whether a pod's change can change an Endpoints object. */
static bool ep__pod_changed(const struct ynode *a, const struct ynode *b)
{
	static const char *const paths[] = {
	    "metadata.labels", "metadata.deletionTimestamp",
	    "metadata.uid",    "status.podIP",
	    "status.phase",    "spec.nodeName",
	    "spec.hostname",   "spec.subdomain",
	    "spec.containers",
	};
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		if (!ynode_equal(ynode_path(a, paths[i]), ynode_path(b, paths[i])))
			return true;
	return pod_is_ready(a, NULL) != pod_is_ready(b, NULL);
}

static void ep__on_pod_update(void *data, const char *key, const struct ynode *old,
			      const struct ynode *pod)
{
	(void)key;
	if (ep__pod_changed(old, pod))
		ep__enqueue_for_pod(data, pod, old);
}

/* Someone else changed or removed endpoints of ours: put them back. */
static void ep__on_ep_update(void *data, const char *key, const struct ynode *old,
			     const struct ynode *obj)
{
	(void)old;
	(void)obj;
	struct endpointsc *e = data;
	if (keymap_has(e->sels, key))
		workqueue_add(e->q, key);
}

/* At start, endpoints whose service went while no controller ran. */
static void ep__on_ep_add(void *data, const char *key, const struct ynode *obj)
{
	(void)obj;
	struct endpointsc *e = data;
	if (!e->synced)
		workqueue_add(e->q, key);
}

static void ep__on_ep_delete(void *data, const char *key, const struct ynode *old)
{
	ep__on_ep_update(data, key, old, NULL);
}

struct endpointsc *endpointsc_new(struct ctrl *c)
{
	struct endpointsc *e = xcalloc(1, sizeof(*e));
	e->c = c;
	e->svcs = ctrl_informer(c, "services");
	e->pods = ctrl_informer(c, "pods");
	e->eps = ctrl_informer(c, "endpoints");
	e->q = workqueue_new(c->loop, "endpoints", NULL);
	e->exp = expect_new();
	e->sels = keymap_new(ep__sel_free);
	struct informer_handlers sh = {
	    .on_add = ep__on_svc,
	    .on_update = ep__on_svc_update,
	    .on_delete = ep__on_svc_delete,
	};
	informer_add_handlers(e->svcs, &sh, e);
	struct informer_handlers ph = {
	    .on_add = ep__on_pod,
	    .on_update = ep__on_pod_update,
	    .on_delete = ep__on_pod,
	};
	informer_add_handlers(e->pods, &ph, e);
	struct informer_handlers eh = {
	    .on_add = ep__on_ep_add,
	    .on_update = ep__on_ep_update,
	    .on_delete = ep__on_ep_delete,
	};
	informer_add_handlers(e->eps, &eh, e);
	workqueue_set_handler(e->q, ep__sync, e);
	return e;
}

void endpointsc_free(struct endpointsc *e)
{
	if (!e)
		return;
	workqueue_free(e->q);
	expect_free(e->exp);
	keymap_free(e->sels);
	free(e);
}
