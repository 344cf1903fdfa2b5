/* binding.c: see binding.h. It only turns a Binding into the pod it
 * makes: validation, admission and the store are the write path's, as for
 * any pod written whole. It never reads or writes the store itself. */
#include "binding.h"
#include "conditions.h"
#include "object.h"
#include "timefmt.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* Whether text may be a Binding: spares parsing every pod twice. */
static bool binding__maybe(const char *text, size_t len)
{
	return memmem(text, len, "Binding", 7) != NULL;
}

static bool binding__empty(const char *s)
{
	return !s || !*s;
}

/* The checks of the Binding itself, Kubernetes' messages. */
static int binding__check(const struct write_target *t, const struct ynode *b, const char **node,
			  struct error **err)
{
	const char *api = ynode_str(ynode_get(b, "apiVersion"));
	if (!binding__empty(api) && strcmp(api, "v1") != 0)
		return error_set(err, EINVAL,
				 "apiVersion: Unsupported value: \"%s\": a Binding is v1", api);
	const struct ynode *md = ynode_get(b, "metadata");
	const char *name = ynode_str(ynode_get(md, "name"));
	if (!binding__empty(name) && strcmp(name, t->name) != 0)
		return error_set(err, EINVAL,
				 "metadata.name: Invalid value: \"%s\": a Binding written to "
				 "pods/%s.yaml binds pod %s",
				 name, t->name, t->name);
	const char *ns = ynode_str(ynode_get(md, "namespace"));
	if (!binding__empty(ns) && t->ns && strcmp(ns, t->ns) != 0)
		return error_set(err, EINVAL,
				 "metadata.namespace: Invalid value: \"%s\": does not match the "
				 "namespace of the pod, \"%s\"",
				 ns, t->ns);
	const struct ynode *target = ynode_get(b, "target");
	const char *kind = ynode_str(ynode_get(target, "kind"));
	if (!binding__empty(kind) && strcmp(kind, "Node") != 0)
		return error_set(
		    err, EINVAL,
		    "target.kind: Unsupported value: \"%s\": supported values: \"Node\"", kind);
	*node = ynode_str(ynode_get(target, "name"));
	if (binding__empty(*node))
		return error_set(err, EINVAL, "target.name: Required value");
	return 0;
}

/* The pod's preconditions: the one given, not bound, not going. */
static int binding__precheck(const struct write_target *t, const struct ynode *b,
			     const struct ynode *pod, struct error **err)
{
	const char *uid = ynode_path_str(b, "metadata.uid");
	const char *pod_uid = ynode_path_str(pod, "metadata.uid");
	if (!binding__empty(uid) && (!pod_uid || strcmp(uid, pod_uid) != 0))
		return error_set(err, EAGAIN,
				 "Operation cannot be fulfilled on pods/binding \"%s\": "
				 "Precondition failed: UID in precondition: %s, UID in object "
				 "meta: %s",
				 t->name, uid, pod_uid ? pod_uid : "");
	const char *rv = ynode_path_str(b, "metadata.resourceVersion");
	const char *pod_rv = ynode_path_str(pod, "metadata.resourceVersion");
	if (!binding__empty(rv) && (!pod_rv || strcmp(rv, pod_rv) != 0))
		return error_set(err, EAGAIN,
				 "Operation cannot be fulfilled on pods/binding \"%s\": the "
				 "object has been modified (stored %s, written %s); please apply "
				 "your changes to the latest version and try again",
				 t->name, pod_rv ? pod_rv : "", rv);
	const char *bound = ynode_path_str(pod, "spec.nodeName");
	if (!binding__empty(bound))
		return error_set(err, EAGAIN,
				 "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is "
				 "already assigned to node \"%s\"",
				 t->name, t->name, bound);
	if (ynode_path(pod, "metadata.deletionTimestamp"))
		return error_set(err, EAGAIN,
				 "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is "
				 "being deleted, cannot be assigned to a host",
				 t->name, t->name);
	return 0;
}

int binding_apply(const struct write_target *t, const char *text, size_t len, const char *old_yaml,
		  size_t old_len, struct ynode **pod, struct ynode **old, struct error **err)
{
	/* too long for any object: object_build refuses it, unparsed */
	if (!t->kind || strcmp(t->kind->kind, "Pod") != 0 || len > OBJECT_MAX_BYTES ||
	    !binding__maybe(text, len))
		return 0;
	cleanup_ynode struct ynode *b = NULL;
	if (yaml_refuse_nul(text, len, NULL) < 0 || yaml_parse_one(text, len, &b, NULL) < 0 || !b ||
	    b->type != YNODE_MAP)
		return 0; /* not ours to judge: the pod's checks say what is wrong */
	const char *kind = ynode_str(ynode_get(b, "kind"));
	if (!kind || strcmp(kind, "Binding") != 0)
		return 0;
	const char *node = NULL;
	if (binding__check(t, b, &node, err) < 0)
		return -EINVAL;
	if (!old_yaml)
		return error_set(err, ENOENT, "pods \"%s\" not found: a Binding binds a pod",
				 t->name);
	cleanup_ynode struct ynode *stored = NULL;
	if (yaml_parse_one(old_yaml, old_len, &stored, err) < 0) {
		if (err && *err)
			(*err)->status = EIO; /* the stored pod: not the writer's fault */
		return -EIO;
	}
	int r = binding__precheck(t, b, stored, err);
	if (r < 0)
		return r;
	char now[RFC3339_SIZE];
	rfc3339_format(time(NULL), now);
	struct ynode *bound = ynode_clone(stored);
	ynode_set(ynode_get_map(bound, "spec"), "nodeName", ynode_new_str(node));
	const struct condition c = {"PodScheduled", "True", NULL, NULL};
	condition_set(ynode_get_map(bound, "status"), &c, now, CONDITION_PROBE_TIME);
	*pod = bound;
	*old = steal_pointer(&stored);
	return 1;
}
