/* finalizers.c: see finalizers.h. Messages are the apiserver's
 * (ValidateObjectMetaUpdate, ValidateNoNewFinalizers, ValidateFinalizers,
 * ValidateImmutableField). */
#include "finalizers.h"
#include "pod.h"
#include "timefmt.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct ynode *finalizers__list(const struct ynode *obj, const char *path)
{
	const struct ynode *l = ynode_path(obj, path);
	return l && l->type == YNODE_SEQ ? l : NULL;
}

static bool finalizers__in(const struct ynode *list, const char *name)
{
	for (size_t i = 0; list && i < list->n; i++) {
		const char *s = ynode_str(ynode_item(list, i));
		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

static bool finalizers__nonempty(const struct ynode *obj, const char *path)
{
	const struct ynode *l = finalizers__list(obj, path);
	return l && l->n > 0;
}

bool finalizers_any(const struct kind_info *k, const struct ynode *obj)
{
	if (finalizers__nonempty(obj, "metadata.finalizers"))
		return true;
	return k->namespace_object && finalizers__nonempty(obj, "spec.finalizers");
}

bool finalizers_has(const struct ynode *obj, const char *name)
{
	return finalizers__in(finalizers__list(obj, "metadata.finalizers"), name);
}

static int finalizers__cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The finalizers of list at path that old's does not hold, sorted and
 * deduplicated, in Go's %#v of a []string: []string{"a", "b"}; NULL when
 * there are none. */
static char *finalizers__new(const struct ynode *old, const struct ynode *obj, const char *path)
{
	const struct ynode *was = finalizers__list(old, path);
	const struct ynode *now = finalizers__list(obj, path);
	if (!now)
		return NULL;
	const char **extra = xcalloc(now->n + 1, sizeof(*extra));
	size_t n = 0;
	for (size_t i = 0; i < now->n; i++) {
		const char *s = ynode_str(ynode_item(now, i));
		if (s && !finalizers__in(was, s))
			extra[n++] = s;
	}
	char *out = NULL;
	if (n) {
		qsort(extra, n, sizeof(*extra), finalizers__cmp);
		size_t cap = 16, len = 0;
		out = xcalloc(1, cap);
		len += (size_t)snprintf(out, cap, "[]string{");
		for (size_t i = 0; i < n; i++) {
			if (i && !strcmp(extra[i], extra[i - 1]))
				continue;
			out = xrealloc(out, cap += strlen(extra[i]) + 5);
			len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"",
						len > 9 ? ", " : "", extra[i]);
		}
		out = xrealloc(out, cap += 2);
		snprintf(out + len, cap - len, "}");
	}
	free(extra);
	return out;
}

/* A metadata field the server owns, once set, as written: present (even
 * null) and different from the stored value is a change. */
static int finalizers__immutable(const struct ynode *old, const struct ynode *obj, const char *key,
				 struct error **err)
{
	const struct ynode *md = ynode_get(obj, "metadata");
	if (!md || md->type != YNODE_MAP)
		return 0;
	const struct ynode *now = ynode_get(md, key);
	if (!now)
		return 0; /* left out: kept, as the apiserver keeps it */
	const struct ynode *was = ynode_get(ynode_get(old, "metadata"), key);
	const char *a = ynode_str(now), *b = ynode_str(was);
	if (a && b && !strcmp(a, b))
		return 0;
	return error_set(err, EINVAL, "metadata.%s: Invalid value: \"%s\": field is immutable", key,
			 ynode_is_null(now) ? "null"
			 : a		    ? a
					    : "(not a string)");
}

int finalizers_decide(const struct kind_info *k, const struct ynode *old, const struct ynode *obj,
		      enum finalizers_verdict *v, struct error **err)
{
	bool deleting = old && object_is_deleting(old);
	if (!obj) {
		/* A Namespace always has the kubernetes finalizer until it is
		 * being deleted (Kubernetes gives it one at its create). */
		if (deleting)
			*v = FINALIZERS_KEEP;
		else if (old && (finalizers_any(k, old) || k->namespace_object))
			*v = FINALIZERS_MARK;
		else
			*v = FINALIZERS_DELETE;
		return 0;
	}
	const struct ynode *fin = finalizers__list(obj, "metadata.finalizers");
	if (finalizers__in(fin, FINALIZER_ORPHAN) && finalizers__in(fin, FINALIZER_FOREGROUND))
		return error_set(err, EINVAL,
				 "metadata.finalizers: Invalid value: finalizer %s and %s cannot "
				 "be both set",
				 FINALIZER_ORPHAN, FINALIZER_FOREGROUND);
	*v = FINALIZERS_STORE;
	if (!deleting)
		return 0;
	static const char *paths[] = {"metadata.finalizers", "spec.finalizers"};
	for (size_t i = 0; i < (k->namespace_object ? 2u : 1u); i++) {
		cleanup_free char *extra = finalizers__new(old, obj, paths[i]);
		if (extra)
			return error_set(err, EINVAL,
					 "%s: Forbidden: no new finalizers can be added if the "
					 "object is being deleted, found new finalizers %s",
					 paths[i], extra);
	}
	int r;
	if ((r = finalizers__immutable(old, obj, "deletionTimestamp", err)) < 0 ||
	    (r = finalizers__immutable(old, obj, "deletionGracePeriodSeconds", err)) < 0)
		return r;
	if (!finalizers_any(k, obj))
		*v = FINALIZERS_DELETE;
	return 0;
}

void finalizers_mark(const struct kind_info *k, struct ynode *obj, time_t now)
{
	char ts[RFC3339_SIZE];
	rfc3339_format(now, ts);
	struct ynode *md = ynode_get_map(obj, "metadata");
	ynode_set(md, "deletionTimestamp", ynode_new_str(ts));
	ynode_set(md, "deletionGracePeriodSeconds", ynode_new_int(0));
	ynode_sort(md);
	if (k->namespace_object) {
		struct ynode *spec = ynode_get_map(obj, "spec");
		struct ynode *fin = ynode_get(spec, "finalizers");
		if (!fin || fin->type != YNODE_SEQ) {
			fin = ynode_new_seq();
			ynode_set(spec, "finalizers", fin);
		}
		if (!finalizers__in(fin, FINALIZER_NAMESPACE))
			ynode_append(fin, ynode_new_str(FINALIZER_NAMESPACE));
		ynode_set(ynode_get_map(obj, "status"), "phase", ynode_new_str("Terminating"));
		ynode_sort(obj);
	}
}

void finalizers_carry(const struct ynode *old, struct ynode *obj)
{
	static const char *keys[] = {"deletionTimestamp", "deletionGracePeriodSeconds"};
	const struct ynode *omd = ynode_get(old, "metadata");
	struct ynode *md = ynode_get_map(obj, "metadata");
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const struct ynode *val = ynode_get(omd, keys[i]);
		if (val)
			ynode_set(md, keys[i], ynode_clone(val));
	}
	ynode_sort(md);
}
