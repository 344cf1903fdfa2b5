/* namespace.c: the namespace controller (see namespace.h).
 *
 * One work queue of namespace names. A sync looks at every namespaced
 * kind's informer for what is left in the namespace, deletes (through the
 * mount, with the uid it saw) what is not being deleted yet and counts
 * what is, then writes the conditions, or, once nothing is left, removes
 * the kubernetes finalizer. Deletions in a Terminating namespace bring
 * its name back to the queue; a slow backstop requeue covers a deletion
 * the informers could not tell of.
 *
 * This file never removes a finalizer but the namespace's own. */
#include "namespace.h"
#include "conditions.h"
#include "ctrl.h"
#include "keymap.h"
#include "log.h"
#include "obj.h"
#include "timefmt.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NSC__BATCH_MS	 100  /* deletions heard of within this are one sync */
#define NSC__BACKSTOP_MS 5000 /* a Terminating namespace is looked at again */
#define NSC__RETRY_MS	 1000 /* after a refused deletion */
#define NSC__FINALIZER	 "kubernetes"

struct nsc__kind {
	struct nsc *n;
	const struct kind_info *k;
	struct informer *inf;
};

struct nsc {
	struct ctrl *c;
	struct informer *namespaces;
	struct nsc__kind *kinds; /* namespaced kinds, in nsc_delete_order() */
	size_t nkinds;
	struct keymap *terminating; /* namespace -> NULL */
	struct keymap *inflight;    /* object path -> NULL: a deletion in flight */
	struct keymap *failures;    /* namespace -> char * (a refusal's message) */
	struct keymap *left;	    /* namespace -> (uintptr_t) objects left + 1, last said */
	struct workqueue *q;
};

/* ---- pure parts ---- */

static int nsc__rank(const struct kind_info *k)
{
	static const char *makers[] = {"deployments", "statefulsets", "daemonsets", "cronjobs",
				       "replicationcontrollers"};
	for (size_t i = 0; i < ARRAY_SIZE(makers); i++)
		if (!strcmp(k->plural, makers[i]))
			return 0;
	if (!strcmp(k->plural, "replicasets") || !strcmp(k->plural, "jobs"))
		return 1;
	if (!strcmp(k->plural, "pods"))
		return 2;
	if (!strcmp(k->plural, "events"))
		return 4;
	return 3;
}

void nsc_delete_order(const struct kind_info **kinds, size_t n)
{
	/* Insertion sort: stable, and n is the number of kinds. */
	for (size_t i = 1; i < n; i++) {
		const struct kind_info *k = kinds[i];
		size_t j = i;
		while (j > 0 && nsc__rank(kinds[j - 1]) > nsc__rank(k)) {
			kinds[j] = kinds[j - 1];
			j--;
		}
		kinds[j] = k;
	}
}

static int nsc__cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "a, b, c" of n strings made by fmt from each (sorted). */
static char *nsc__join(char **items, size_t n)
{
	qsort(items, n, sizeof(*items), nsc__cmp_str);
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(items[i]) + 2;
	char *out = xcalloc(1, len);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, items[i]);
	}
	return out;
}

void nsc_set_conditions(struct ynode *status, const struct nsc_totals *t, const char *now)
{
	struct condition discovery = {"NamespaceDeletionDiscoveryFailure", "False",
				      "ResourcesDiscovered",
				      "All resources successfully discovered"};
	struct condition parsing = {"NamespaceDeletionGroupVersionParsingFailure", "False",
				    "ParsedGroupVersions",
				    "All legacy kube types successfully parsed"};
	struct condition content = {
	    "NamespaceDeletionContentFailure", "False", "ContentDeleted",
	    "All content successfully deleted, may be waiting on finalization"};
	struct condition remaining = {"NamespaceContentRemaining", "False", "ContentRemoved",
				      "All content successfully removed"};
	struct condition finalizers = {"NamespaceFinalizersRemaining", "False",
				       "ContentHasNoFinalizers",
				       "All content-preserving finalizers finished"};
	cleanup_free char *content_msg = NULL, *remaining_msg = NULL, *finalizers_msg = NULL;
	if (t->failed) {
		content_msg = xasprintf("Failed to delete all resource types, %zu remaining: %s",
					t->failed, t->failure ? t->failure : "");
		content = (struct condition){"NamespaceDeletionContentFailure", "True",
					     "ContentDeletionFailed", content_msg};
	}
	if (t->nkinds) {
		char **items = xcalloc(t->nkinds, sizeof(*items));
		for (size_t i = 0; i < t->nkinds; i++)
			items[i] = xasprintf("%s has %zu resource instances", t->resources[i],
					     t->counts[i]);
		cleanup_free char *list = nsc__join(items, t->nkinds);
		for (size_t i = 0; i < t->nkinds; i++)
			free(items[i]);
		free(items);
		remaining_msg = xasprintf("Some resources are remaining: %s", list);
		remaining = (struct condition){"NamespaceContentRemaining", "True",
					       "SomeResourcesRemain", remaining_msg};
	}
	if (t->nfinalizers) {
		char **items = xcalloc(t->nfinalizers, sizeof(*items));
		for (size_t i = 0; i < t->nfinalizers; i++)
			items[i] = xasprintf("%s in %zu resource instances", t->finalizers[i],
					     t->fcounts[i]);
		cleanup_free char *list = nsc__join(items, t->nfinalizers);
		for (size_t i = 0; i < t->nfinalizers; i++)
			free(items[i]);
		free(items);
		finalizers_msg =
		    xasprintf("Some content in the namespace has finalizers remaining: %s", list);
		finalizers = (struct condition){"NamespaceFinalizersRemaining", "True",
						"SomeFinalizersRemain", finalizers_msg};
	}
	condition_set(status, &discovery, now, 0);
	condition_set(status, &parsing, now, 0);
	condition_set(status, &content, now, 0);
	condition_set(status, &remaining, now, 0);
	condition_set(status, &finalizers, now, 0);
}

/* ---- the controller ---- */

static bool nsc__has_finalizer(const struct ynode *ns)
{
	const struct ynode *fin = ynode_path(ns, "spec.finalizers");
	for (size_t i = 0; fin && fin->type == YNODE_SEQ && i < fin->n; i++) {
		const char *s = ynode_str(ynode_item(fin, i));
		if (s && !strcmp(s, NSC__FINALIZER))
			return true;
	}
	return false;
}

static void nsc__on_namespace(void *data, const char *key, const struct ynode *obj)
{
	struct nsc *n = data;
	if (object_is_deleting(obj) && nsc__has_finalizer(obj)) {
		if (!keymap_has(n->terminating, key))
			log_info("namespace controller: %s is Terminating", key);
		keymap_set(n->terminating, key, NULL);
		workqueue_add(n->q, key);
	}
}

static void nsc__on_namespace_update(void *data, const char *key, const struct ynode *old,
				     const struct ynode *obj)
{
	(void)old;
	nsc__on_namespace(data, key, obj);
}

static void nsc__on_namespace_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct nsc *n = data;
	keymap_del(n->terminating, key);
	keymap_del(n->failures, key);
	keymap_del(n->left, key);
}

/* Something changed or went in a namespace: if it is Terminating, look
 * again soon. */
static void nsc__poke(struct nsc *n, const char *key)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return;
	cleanup_free char *ns = xstrndup(key, (size_t)(slash - key));
	if (keymap_has(n->terminating, ns))
		workqueue_add_after(n->q, ns, NSC__BATCH_MS);
}

static void nsc__on_object_update(void *data, const char *key, const struct ynode *old,
				  const struct ynode *obj)
{
	(void)old;
	struct nsc__kind *nk = data;
	if (object_is_deleting(obj))
		nsc__poke(nk->n, key);
}

static void nsc__on_object_delete(void *data, const char *key, const struct ynode *old)
{
	(void)old;
	struct nsc__kind *nk = data;
	nsc__poke(nk->n, key);
}

struct nsc__op {
	struct nsc *n;
	char *ns;
	char *path;
};

static void nsc__deleted(void *data, const struct writer_result *res)
{
	struct nsc__op *op = data;
	struct nsc *n = op->n;
	keymap_del(n->inflight, op->path);
	if (res->status && res->status != ENOENT && res->status != ESTALE) {
		log_warn("namespace controller: cannot delete %s: %s", op->path, res->msg);
		keymap_set(n->failures, op->ns, xasprintf("%s: %s", op->path, res->msg));
		workqueue_add_after(n->q, op->ns, NSC__RETRY_MS);
	}
	free(op->ns);
	free(op->path);
	free(op);
}

/* One pass's tallies, as they are gathered. */
struct nsc__pass {
	struct nsc *n;
	struct nsc__kind *nk;
	const char *ns;
	size_t left;		   /* objects of nk left */
	struct keymap *finalizers; /* name -> (uintptr_t) count */
	size_t deleted;
};

static int nsc__visit(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	struct nsc__pass *p = data;
	p->left++;
	if (object_is_deleting(obj)) {
		const struct ynode *fin = ynode_path(obj, "metadata.finalizers");
		for (size_t i = 0; fin && fin->type == YNODE_SEQ && i < fin->n; i++) {
			const char *f = ynode_str(ynode_item(fin, i));
			if (!f)
				continue;
			uintptr_t c = (uintptr_t)keymap_get(p->finalizers, f);
			keymap_set(p->finalizers, f, (void *)(c + 1));
		}
		return 0;
	}
	char *path = obj_path(p->nk->k->plural, p->ns, obj_name(obj));
	if (keymap_has(p->n->inflight, path)) {
		free(path);
		return 0;
	}
	keymap_set(p->n->inflight, path, NULL);
	struct nsc__op *op = xcalloc(1, sizeof(*op));
	op->n = p->n;
	op->ns = xstrdup(p->ns);
	op->path = path;
	writer_delete(p->n->c->writer, path, obj_uid(obj), 0, nsc__deleted, op);
	p->deleted++;
	return 0;
}

struct nsc__status {
	struct ynode *conditions; /* the conditions to write */
	bool finalize;		  /* and remove the kubernetes finalizer */
};

static void nsc__status_free(void *p)
{
	struct nsc__status *s = p;
	ynode_free(s->conditions);
	free(s);
}

static int nsc__mutate(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	struct nsc__status *s = arg;
	int changed = 0;
	struct ynode *status = ynode_get_map(obj, "status");
	if (!ynode_equal(ynode_get(status, "conditions"), s->conditions)) {
		ynode_set(status, "conditions", ynode_clone(s->conditions));
		changed = 1;
	}
	if (s->finalize && ynode_seq_remove_str(ynode_path(obj, "spec.finalizers"), NSC__FINALIZER))
		changed = 1;
	return changed;
}

static void nsc__written(void *data, const struct writer_result *res)
{
	char *ns = data;
	if (res->status)
		log_warn("namespace controller: cannot update namespace %s: %s", ns, res->msg);
	else
		log_debug("namespace controller: namespace %s %s", ns,
			  res->changed ? "updated" : "as it was");
	free(ns);
}

/* "pods." or "deployments.apps": Kubernetes' resource.group. */
static char *nsc__resource(const struct kind_info *k)
{
	const char *av = k->api_versions[0];
	const char *slash = strchr(av, '/');
	return slash ? xasprintf("%s.%.*s", k->plural, (int)(slash - av), av)
		     : xasprintf("%s.", k->plural);
}

static int nsc__sync(void *data, const char *ns, struct error **err)
{
	(void)err;
	struct nsc *n = data;
	const struct ynode *obj = informer_get(n->namespaces, ns);
	if (!obj || !object_is_deleting(obj) || !nsc__has_finalizer(obj))
		return 0;
	struct nsc_totals t = {0};
	t.resources = xcalloc(n->nkinds, sizeof(*t.resources));
	t.counts = xcalloc(n->nkinds, sizeof(*t.counts));
	char **owned = xcalloc(n->nkinds, sizeof(*owned));
	cleanup_keymap struct keymap *fins = keymap_new(NULL);
	size_t deleted = 0, left = 0;
	for (size_t i = 0; i < n->nkinds; i++) {
		struct nsc__pass p = {.n = n, .nk = &n->kinds[i], .ns = ns, .finalizers = fins};
		informer_foreach(n->kinds[i].inf, ns, nsc__visit, &p);
		deleted += p.deleted;
		left += p.left;
		if (p.left) {
			owned[t.nkinds] = nsc__resource(n->kinds[i].k);
			t.resources[t.nkinds] = owned[t.nkinds];
			t.counts[t.nkinds++] = p.left;
		}
	}
	size_t nf = keymap_count(fins);
	t.finalizers = xcalloc(nf ? nf : 1, sizeof(*t.finalizers));
	t.fcounts = xcalloc(nf ? nf : 1, sizeof(*t.fcounts));
	const char *fk;
	void *fv;
	for (size_t i = 0; keymap_next(fins, &i, &fk, &fv);) {
		t.finalizers[t.nfinalizers] = fk;
		t.fcounts[t.nfinalizers++] = (uintptr_t)fv;
	}
	const char *failure = keymap_get(n->failures, ns);
	if (failure) {
		t.failed = 1;
		t.failure = failure;
	}
	if (deleted)
		log_info("namespace controller: %s: deleting %zu objects", ns, deleted);

	char now[RFC3339_SIZE];
	obj_time_format(obj_now(), now);
	cleanup_ynode struct ynode *status = ynode_clone(ynode_get(obj, "status"));
	if (!status || status->type != YNODE_MAP) {
		ynode_free(status);
		status = ynode_new_map();
	}
	nsc_set_conditions(status, &t, now);
	bool finalize = left == 0 && !failure;
	struct nsc__status *s = xcalloc(1, sizeof(*s));
	s->conditions = ynode_clone(ynode_get(status, "conditions"));
	s->finalize = finalize;
	if (finalize)
		log_info("namespace controller: %s is empty: removing its %s finalizer", ns,
			 NSC__FINALIZER);
	else if (!deleted && (uintptr_t)keymap_get(n->left, ns) != left + 1)
		log_info("namespace controller: %s: %zu objects left, waiting (%zu finalizers)", ns,
			 left, nf);
	keymap_set(n->left, ns, (void *)(uintptr_t)(left + 1));
	cleanup_free char *path = obj_path("namespaces", NULL, ns);
	writer_update(n->c->writer, path, nsc__mutate, s, nsc__status_free, 0, nsc__written,
		      xstrdup(ns));
	keymap_del(n->failures, ns);
	if (!finalize)
		workqueue_add_after(n->q, ns, NSC__BACKSTOP_MS);

	for (size_t i = 0; i < t.nkinds; i++)
		free(owned[i]);
	free(owned);
	free(t.resources);
	free(t.counts);
	free(t.finalizers);
	free(t.fcounts);
	return 0;
}

struct nsc *nsc_new(struct ctrl *c)
{
	struct nsc *n = xcalloc(1, sizeof(*n));
	n->c = c;
	n->terminating = keymap_new(NULL);
	n->inflight = keymap_new(NULL);
	n->failures = keymap_new(free);
	n->left = keymap_new(NULL);
	n->q = workqueue_new(c->loop, "namespace", NULL);
	const struct kind_info **order = xcalloc(kinds_count(), sizeof(*order));
	size_t m = 0;
	for (size_t i = 0; i < kinds_count(); i++)
		if (kinds_at(i)->namespaced)
			order[m++] = kinds_at(i);
	nsc_delete_order(order, m);
	n->kinds = xcalloc(m ? m : 1, sizeof(*n->kinds));
	for (size_t i = 0; i < m; i++) {
		struct nsc__kind *nk = &n->kinds[n->nkinds++];
		nk->n = n;
		nk->k = order[i];
		nk->inf = ctrl_informer(c, order[i]->plural);
		struct informer_handlers h = {.on_update = nsc__on_object_update,
					      .on_delete = nsc__on_object_delete};
		informer_add_handlers(nk->inf, &h, nk);
	}
	free(order);
	n->namespaces = ctrl_informer(c, "namespaces");
	struct informer_handlers h = {.on_add = nsc__on_namespace,
				      .on_update = nsc__on_namespace_update,
				      .on_delete = nsc__on_namespace_delete};
	informer_add_handlers(n->namespaces, &h, n);
	workqueue_set_handler(n->q, nsc__sync, n);
	return n;
}

void nsc_free(struct nsc *n)
{
	if (!n)
		return;
	workqueue_free(n->q);
	keymap_free(n->terminating);
	keymap_free(n->inflight);
	keymap_free(n->failures);
	keymap_free(n->left);
	free(n->kinds);
	free(n);
}
