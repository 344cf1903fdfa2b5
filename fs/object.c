/* object.c: see object.h. */
#include "object.h"
#include "finalizers.h"
#include "names.h"
#include "ownerref.h"
#include "timefmt.h"
#include "util.h"
#include "validate.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* metadata fields the server owns: never declared, never taken from a
 * write. */
static const char *object__server_fields[] = {
    "uid",	"resourceVersion", "generation",	"creationTimestamp",
    "selfLink", "managedFields",   "deletionTimestamp", "deletionGracePeriodSeconds",
};

void object_new_uid(char out[37])
{
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		/* getrandom on Linux does not fail for 16 bytes once the pool
		 * is up; fall back to something unique enough. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)((uint64_t)ts.tv_nsec >> (i % 8) ^ (uint64_t)rand());
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static bool object__controller_owned(const struct ynode *obj)
{
	return ownerref_controller(obj) != NULL;
}

/* The object as declared: no status, no server-set metadata. */
static struct ynode *object__declared_tree(const struct ynode *obj)
{
	struct ynode *d = ynode_clone(obj);
	ynode_del(d, "status");
	struct ynode *md = ynode_get(d, "metadata");
	if (md && md->type == YNODE_MAP)
		for (size_t i = 0; i < ARRAY_SIZE(object__server_fields); i++)
			ynode_del(md, object__server_fields[i]);
	return d;
}

/* Whether obj is a scalable object that a HorizontalPodAutoscaler
 * scales: its spec.replicas is then the autoscaler's, not declared. */
static bool object__autoscaled(const struct kind_info *k, const struct ynode *obj)
{
	enum kind_id id = kinds_id(k);
	if (id != KIND_DEPLOYMENT && id != KIND_REPLICA_SET && id != KIND_REPLICATION_CONTROLLER &&
	    id != KIND_STATEFUL_SET)
		return false;
	const char *hpa = ynode_str(
	    ynode_get(ynode_path(obj, "metadata.annotations"), KINDS_AUTOSCALED_ANNOTATION));
	return hpa && *hpa;
}

/* The declared tree as the history keeps it: an autoscaled object's
 * replica count is left out, so that the autoscaler's changes make no
 * commits and `git show REV:path > path` keeps the current count. */
static struct ynode *object__history_tree(const struct kind_info *k, const struct ynode *obj)
{
	struct ynode *d = object__declared_tree(obj);
	if (object__autoscaled(k, obj))
		ynode_del(ynode_get(d, "spec"), "replicas");
	return d;
}

/* The history tree of obj from its declared tree decl: decl itself (*own
 * left NULL) unless obj is autoscaled, so that the usual write clones its
 * tree once, not twice. */
static const struct ynode *object__history_of(const struct kind_info *k, const struct ynode *obj,
					      const struct ynode *decl, struct ynode **own)
{
	*own = NULL;
	if (!object__autoscaled(k, obj))
		return decl;
	*own = ynode_clone(decl);
	ynode_del(ynode_get(*own, "spec"), "replicas");
	return *own;
}

/* Whether mappings a and b are equal but for their metadata. */
static bool object__equal_beyond_metadata(const struct ynode *a, const struct ynode *b)
{
	if (a->type != YNODE_MAP || b->type != YNODE_MAP)
		return ynode_equal(a, b);
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < a->n; i++) {
		const char *key = ynode_map_key(a, i)->str;
		if (strcmp(key, "metadata") == 0)
			continue;
		na++;
		const struct ynode *bv = ynode_get(b, key);
		if (!bv || !ynode_equal(ynode_map_val(a, i), bv))
			return false;
	}
	for (size_t i = 0; i < b->n; i++)
		nb += strcmp(ynode_map_key(b, i)->str, "metadata") != 0;
	return na == nb;
}

char *object_declared(const struct kind_info *k, const struct ynode *obj)
{
	if (!k->history || object__controller_owned(obj))
		return NULL;
	cleanup_ynode struct ynode *d = object__history_tree(k, obj);
	return yaml_emit(d, NULL);
}

bool object_in_history(const struct kind_info *k, const char *yaml, size_t len)
{
	if (!k->history)
		return false;
	cleanup_ynode struct ynode *obj = NULL;
	if (!yaml || yaml_parse_one(yaml, len, &obj, NULL) < 0)
		return false;
	return !object__controller_owned(obj);
}

static char *object__lower(const char *s)
{
	char *l = xstrdup(s);
	for (char *p = l; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return l;
}

static char *object__where(const char *ns, const char *name)
{
	return ns ? xasprintf("%s/%s", ns, name) : xstrdup(name);
}

char *object_delete_message(const struct kind_info *k, const char *ns, const char *name)
{
	cleanup_free char *kind = object__lower(k->kind);
	cleanup_free char *where = object__where(ns, name);
	return xasprintf("delete %s %s", kind, where);
}

/* Collects up to max paths where a and b differ. */
static void object__diff(const struct ynode *a, const struct ynode *b, const char *prefix,
			 char **paths, size_t *n, size_t max, size_t *more)
{
	if (ynode_equal(a, b))
		return;
	if (a && b && a->type == YNODE_MAP && b->type == YNODE_MAP) {
		for (int pass = 0; pass < 2; pass++) {
			const struct ynode *x = pass ? b : a, *y = pass ? a : b;
			for (size_t i = 0; i < x->n; i++) {
				const char *key = ynode_map_key(x, i)->str;
				if (pass && ynode_get(y, key))
					continue; /* seen in the first pass */
				cleanup_free char *p =
				    *prefix ? xasprintf("%s.%s", prefix, key) : xstrdup(key);
				object__diff(ynode_get(a, key), ynode_get(b, key), p, paths, n, max,
					     more);
			}
		}
		return;
	}
	if (a && b && a->type == YNODE_SEQ && b->type == YNODE_SEQ && a->n == b->n) {
		for (size_t i = 0; i < a->n; i++) {
			cleanup_free char *p = xasprintf("%s[%zu]", prefix, i);
			object__diff(a->items[i], b->items[i], p, paths, n, max, more);
		}
		return;
	}
	if (*n < max)
		paths[(*n)++] = xstrdup(prefix);
	else
		(*more)++;
}

static char *object__message(const struct kind_info *k, const char *ns, const char *name,
			     const struct ynode *old_decl, const struct ynode *new_decl)
{
	cleanup_free char *kind = object__lower(k->kind);
	cleanup_free char *where = object__where(ns, name);
	if (!old_decl)
		return xasprintf("create %s %s", kind, where);
	char *paths[4];
	size_t n = 0, more = 0;
	object__diff(old_decl, new_decl, "", paths, &n, ARRAY_SIZE(paths), &more);
	size_t cap = 64, len = 0;
	char *fields = xcalloc(1, cap);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(paths[i]);
		fields = xrealloc(fields, cap += l + 4);
		len += (size_t)sprintf(fields + len, "%s%s", i ? ", " : "", paths[i]);
		free(paths[i]);
	}
	char *msg = more ? xasprintf("update %s %s: %s and %zu more", kind, where, fields, more)
			 : xasprintf("update %s %s: %s", kind, where, fields);
	free(fields);
	return msg;
}

/* The object as the store will emit it must be within the limit too:
 * aliases (within the parser's budget) and indentation can make it larger
 * than what was written. */
static int object__check_size(const struct ynode *obj, size_t written, struct error **err)
{
	if (yaml_emit_within(obj, OBJECT_MAX_BYTES))
		return 0;
	return error_set(err, EFBIG,
			 "the object as stored would be over the limit of %d bytes (the %zu "
			 "bytes written grow through aliases or nesting)",
			 OBJECT_MAX_BYTES, written);
}

int object_build(struct object_build *b, struct error **err)
{
	const struct kind_info *k = b->kind;
	cleanup_ynode struct ynode *obj = NULL;
	cleanup_ynode struct ynode *old = NULL;
	int r;

	if (b->len > OBJECT_MAX_BYTES)
		return error_set(err, EFBIG, "the document is %zu bytes, over the limit of %d",
				 b->len, OBJECT_MAX_BYTES);
	old = steal_pointer(&b->old_tree);
	if ((obj = steal_pointer(&b->text_tree))) {
		/* Parsed by the caller (a Binding's pod, binding.h). */
	} else if ((r = yaml_refuse_nul(b->text, b->len, err)) < 0) {
		/* Whatever its encoding: the text may be a string copy that
		 * ends at its first NUL byte, so nothing may read past one. */
		return r;
	} else if ((r = yaml_parse_one(b->text, b->len, &obj, err)) < 0) {
		return r;
	}
	if (obj->type != YNODE_MAP)
		return error_set(err, EINVAL,
				 "the document is not a mapping (an object needs apiVersion, kind "
				 "and metadata)");
	if (!old && b->old_yaml && yaml_parse_one(b->old_yaml, b->old_len, &old, err) < 0) {
		error_prefix(err, "the stored object does not parse");
		if (err && *err)
			(*err)->status = EIO; /* as returned: not the writer's fault */
		return -EIO;
	}

	const char *kind = ynode_str(ynode_get(obj, "kind"));
	const char *api = ynode_str(ynode_get(obj, "apiVersion"));
	if (!kind || !*kind)
		return error_set(err, EINVAL, "kind: Required value (this folder holds %s objects)",
				 k->kind);
	if (strcmp(kind, k->kind) != 0)
		return error_set(err, EINVAL,
				 "kind: Invalid value: \"%s\": this folder holds %s objects", kind,
				 k->kind);
	if (!api || !*api)
		return error_set(err, EINVAL, "apiVersion: Required value (%s is %s)", k->kind,
				 k->api_versions[0]);
	if (!kinds_api_version_ok(k, api))
		return error_set(err, EINVAL,
				 "apiVersion: Unsupported value: \"%s\": %s is served as %s", api,
				 k->kind, k->api_versions[0]);

	struct ynode *md = ynode_get(obj, "metadata");
	if (md && md->type != YNODE_MAP && !ynode_is_null(md))
		return error_set(err, EINVAL, "metadata: Invalid value: must be a mapping");
	md = ynode_get_map(obj, "metadata");
	const struct ynode *name = ynode_get(md, "name");
	if (name && (name->type != YNODE_SCALAR || strcmp(name->str, b->name) != 0))
		return error_set(err, EINVAL,
				 "metadata.name: Invalid value: \"%s\": does not match the file "
				 "name \"%s.yaml\"",
				 name->type == YNODE_SCALAR ? name->str : "(not a string)",
				 b->name);
	if (!name)
		ynode_set(md, "name", ynode_new_str(b->name));
	const struct ynode *ns = ynode_get(md, "namespace");
	if (k->namespaced) {
		if (ns && !ynode_is_null(ns) &&
		    (ns->type != YNODE_SCALAR || strcmp(ns->str, b->ns) != 0))
			return error_set(err, EINVAL,
					 "metadata.namespace: Invalid value: \"%s\": the file is "
					 "in namespace \"%s\"",
					 ns->type == YNODE_SCALAR ? ns->str : "(not a string)",
					 b->ns);
		ynode_set(md, "namespace", ynode_new_str(b->ns));
	} else if (ns && !ynode_is_null(ns) && !(ns->type == YNODE_SCALAR && ns->len == 0)) {
		return error_set(err, EINVAL,
				 "metadata.namespace: Forbidden: %s objects are not namespaced",
				 k->kind);
	} else {
		ynode_del(md, "namespace");
	}

	/* Optimistic concurrency: a written resourceVersion or uid must be the
	 * stored one. */
	const char *rv = ynode_str(ynode_get(md, "resourceVersion"));
	cleanup_free char *stale_rv = NULL; /* decided once the change is known */
	const char *old_rv = old ? ynode_path_str(old, "metadata.resourceVersion") : NULL;
	if (rv && *rv) {
		if (!old_rv)
			return error_set(err, EAGAIN,
					 "metadata.resourceVersion: Conflict: \"%s\" was given but "
					 "the object no longer exists",
					 rv);
		if (strcmp(rv, old_rv) != 0) {
			/* Written over an older version: a conflict at once if
			 * what is declared changed since (so a lost race is
			 * EAGAIN, not the validation error it would meet). */
			char *end;
			unsigned long long seen = strtoull(rv, &end, 10);
			unsigned long long cur = strtoull(old_rv, NULL, 10);
			unsigned long long decl = b->old_decl_rv ? b->old_decl_rv : cur;
			if (*end || seen > cur || seen < decl)
				return error_set(
				    err, EAGAIN,
				    "metadata.resourceVersion: Conflict: the object has been "
				    "modified (stored %s, written %s); read it again and apply "
				    "your change to the latest version",
				    old_rv, rv);
			stale_rv = xstrdup(rv);
		}
	}
	const char *uid = ynode_str(ynode_get(md, "uid"));
	const char *old_uid = old ? ynode_path_str(old, "metadata.uid") : NULL;
	if (uid && *uid && old_uid && strcmp(uid, old_uid) != 0)
		return error_set(err, EAGAIN,
				 "metadata.uid: Conflict: written %s but the stored object is %s "
				 "(it was replaced)",
				 uid, old_uid);

	/* An autoscaled object written without spec.replicas (a rollback
	 * from the history, which leaves them out) keeps the autoscaler's. */
	struct ynode *spec = ynode_get(obj, "spec");
	const struct ynode *old_replicas = old ? ynode_path(old, "spec.replicas") : NULL;
	if (old && object__autoscaled(k, old) && spec && spec->type == YNODE_MAP &&
	    !ynode_get(spec, "replicas") && old_replicas)
		ynode_set(spec, "replicas", ynode_clone(old_replicas));

	if ((r = validate_object(k, obj, old, err)) < 0)
		return r;
	enum finalizers_verdict verdict;
	if ((r = finalizers_decide(k, old, obj, &verdict, err)) < 0)
		return r;

	/* Server-set fields come from the stored object, or are made now. */
	md = ynode_get_map(obj, "metadata");
	for (size_t i = 0; i < ARRAY_SIZE(object__server_fields); i++)
		ynode_del(md, object__server_fields[i]);
	char ubuf[37], tbuf[32];
	if (old_uid) {
		ynode_set(md, "uid", ynode_new_str(old_uid));
	} else {
		object_new_uid(ubuf);
		ynode_set(md, "uid", ynode_new_str(ubuf));
	}
	const char *ctime = old ? ynode_path_str(old, "metadata.creationTimestamp") : NULL;
	if (!ctime) {
		rfc3339_format(time(NULL), tbuf);
		ctime = tbuf;
	}
	ynode_set(md, "creationTimestamp", ynode_new_str(ctime));
	if (old)
		finalizers_carry(old, obj);
	/* A placeholder, so that the store sets it in its sorted place. */
	ynode_set(md, "resourceVersion", ynode_new_str("0"));
	if (!ynode_get(obj, "status") && old && ynode_get(old, "status"))
		ynode_set(obj, "status", ynode_clone(ynode_get(old, "status")));
	ynode_sort(obj);

	/* generation counts changes of what was declared beyond metadata. */
	cleanup_ynode struct ynode *new_decl = object__declared_tree(obj);
	cleanup_ynode struct ynode *old_decl = old ? object__declared_tree(old) : NULL;
	if (ynode_get(obj, "spec")) {
		long long gen = 1;
		if (old && ynode_int(ynode_path(old, "metadata.generation"), &gen) < 0)
			gen = 1;
		if (old && !object__equal_beyond_metadata(new_decl, old_decl))
			gen++;
		ynode_set(md, "generation", ynode_new_int(gen));
		ynode_sort(md);
	}

	b->decl_changed = !old || !ynode_equal(old_decl, new_decl);
	b->gone = verdict == FINALIZERS_DELETE;
	if (stale_rv) {
		/* Written over a version that is no longer the stored one, but
		 * nothing declared changed since it was read (checked above):
		 * only status moved meanwhile (a controller's). An edit of the
		 * declared part, such as `sed -i` of the spec, then stands,
		 * keeping the stored status, as a status subresource keeps
		 * spec and status apart; a status write is still a conflict. */
		if (!b->decl_changed)
			return error_set(err, EAGAIN,
					 "metadata.resourceVersion: Conflict: the object has been "
					 "modified (stored %s, written %s); read it again and "
					 "apply your change to the latest version",
					 old_rv, stale_rv);
		ynode_del(obj, "status");
		if (ynode_get(old, "status"))
			ynode_set(obj, "status", ynode_clone(ynode_get(old, "status")));
		ynode_sort(obj);
	}
	if ((r = object__check_size(obj, b->len, err)) < 0)
		return r;
	bool declared = k->history && !object__controller_owned(obj);
	bool was_declared = old && k->history && !object__controller_owned(old);
	cleanup_ynode struct ynode *new_own = NULL;
	cleanup_ynode struct ynode *old_own = NULL;
	const struct ynode *new_hist = object__history_of(k, obj, new_decl, &new_own);
	const struct ynode *old_hist = old ? object__history_of(k, old, old_decl, &old_own) : NULL;
	if (declared && !(was_declared && ynode_equal(old_hist, new_hist))) {
		b->declared = yaml_emit(new_hist, NULL);
		b->message =
		    object__message(k, b->ns, b->name, was_declared ? old_hist : NULL, new_hist);
	} else if (!declared && was_declared) {
		/* Taken over by a controller: it leaves the declared tree. */
		b->message = object_delete_message(k, b->ns, b->name);
	}
	b->obj = steal_pointer(&obj);
	b->old = steal_pointer(&old);
	return 0;
}

void object_build_clear(struct object_build *b)
{
	ynode_free(steal_pointer(&b->text_tree));
	ynode_free(steal_pointer(&b->old_tree));
	ynode_free(b->obj);
	ynode_free(b->old);
	b->old = NULL;
	free(b->declared);
	free(b->message);
	b->obj = NULL;
	b->declared = NULL;
	b->message = NULL;
}

/* An Eviction (policy/v1) in a drop box: corral-ctrl evicts the pod it
 * names (ctrl/disruption.h) instead of filing it; no folder holds it. */
static int object__check_eviction(const char *ns, const struct ynode *doc, const char *api,
				  const char *name, struct error **err)
{
	if (!api || (strcmp(api, "policy/v1") && strcmp(api, "policy/v1beta1")))
		return error_set(err, EINVAL,
				 "apiVersion: Unsupported value: \"%s\": Eviction is served as "
				 "policy/v1",
				 api ? api : "");
	if (!name || !*name)
		return error_set(err, EINVAL, "metadata.name: Required value (the pod to evict)");
	const char *dns = ynode_path_str(doc, "metadata.namespace");
	if (ns && dns && *dns && strcmp(dns, ns) != 0)
		return error_set(
		    err, EINVAL,
		    "metadata.namespace: Invalid value: \"%s\": dropped into namespace \"%s\"", dns,
		    ns);
	return names_dns1123_subdomain(name, err);
}

/* One document of a drop box. */
static int object__check_drop_doc(const char *ns, struct ynode *doc, struct error **err)
{
	if (doc->type != YNODE_MAP)
		return error_set(err, EINVAL,
				 "not a mapping (an object needs apiVersion, kind and metadata)");
	const char *kind = ynode_str(ynode_get(doc, "kind"));
	const char *api = ynode_str(ynode_get(doc, "apiVersion"));
	const char *name = ynode_path_str(doc, "metadata.name");
	if (!kind || !*kind)
		return error_set(err, EINVAL, "kind: Required value");
	if (!strcmp(kind, "Eviction"))
		return object__check_eviction(ns, doc, api, name, err);
	const struct kind_info *k = kinds_by_kind(kind);
	if (!k)
		return error_set(err, EINVAL,
				 "kind: Unsupported value: \"%s\": corral has no folder for it",
				 kind);
	if (!api || !kinds_api_version_ok(k, api))
		return error_set(err, EINVAL,
				 "apiVersion: Unsupported value: \"%s\": %s is served as %s",
				 api ? api : "", k->kind, k->api_versions[0]);
	if (!name || !*name)
		return error_set(
		    err, EINVAL,
		    "metadata.name: Required value (a drop box has no file name to take it from)");
	const char *dns = ynode_path_str(doc, "metadata.namespace");
	if (k->namespaced && ns && dns && *dns && strcmp(dns, ns) != 0)
		return error_set(
		    err, EINVAL,
		    "metadata.namespace: Invalid value: \"%s\": dropped into namespace \"%s\"", dns,
		    ns);
	if (!k->namespaced && dns && *dns)
		return error_set(err, EINVAL,
				 "metadata.namespace: Forbidden: %s objects are not namespaced",
				 k->kind);
	cleanup_ynode struct ynode *copy = ynode_clone(doc);
	int r = validate_object(k, copy, NULL, err);
	if (r < 0)
		return r;
	return object__check_size(doc, 0, err);
}

int object_check_drop(const char *ns, const char *text, size_t len,
		      void (*refused)(void *data, const struct error *e), void *data,
		      struct error **err)
{
	struct ynode **docs = NULL;
	size_t n = 0;
	if (len > OBJECT_MAX_BYTES)
		return error_set(err, EFBIG, "the file is %zu bytes, over the limit of %d", len,
				 OBJECT_MAX_BYTES);
	int r = yaml_refuse_nul(text, len, err); /* as object_build */
	if (r < 0)
		return r;
	r = yaml_parse(text, len, &docs, &n, err);
	if (r < 0)
		return r;
	size_t valid = 0;
	for (size_t i = 0; i < n; i++) {
		struct error *derr = NULL;
		if (object__check_drop_doc(ns, docs[i], &derr) == 0) {
			valid++;
			continue;
		}
		const char *kind = ynode_str(ynode_get(docs[i], "kind"));
		const char *name = ynode_path_str(docs[i], "metadata.name");
		error_prefix(&derr, "document %zu (%s %s, line %d)", i + 1, kind ? kind : "?",
			     name ? name : "?", docs[i]->line);
		if (refused)
			refused(data, derr);
		error_free(derr);
	}
	for (size_t i = 0; i < n; i++)
		ynode_free(docs[i]);
	free(docs);
	if (n == 0)
		return error_set(err, EINVAL, "no documents");
	if (valid == 0)
		return error_set(err, EINVAL, "no document can be filed (%zu refused)", n);
	return (int)valid;
}
