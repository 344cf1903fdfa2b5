/* obj.c: helpers over objects for the controllers. Pure: no I/O but the
 * random bytes of generated names. */
#include "obj.h"
#include "timefmt.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static int64_t obj__fake_now;

const char *obj_name(const struct ynode *o)
{
	return ynode_path_str(o, "metadata.name");
}

const char *obj_namespace(const struct ynode *o)
{
	return ynode_path_str(o, "metadata.namespace");
}

const char *obj_uid(const struct ynode *o)
{
	return ynode_path_str(o, "metadata.uid");
}

const char *obj_rv(const struct ynode *o)
{
	return ynode_path_str(o, "metadata.resourceVersion");
}

long long obj_int(const struct ynode *o, const char *path, long long def)
{
	long long v;
	const struct ynode *n = ynode_path(o, path);
	if (!n)
		return def;
	if (ynode_int(n, &v) == 0)
		return v;
	/* a quoted number ("3"), as an annotation holds it */
	const char *s = ynode_str(n);
	char *end = NULL;
	if (s && *s) {
		v = strtoll(s, &end, 10);
		if (end && !*end)
			return v;
	}
	return def;
}

const char *obj_annotation(const struct ynode *o, const char *key)
{
	return ynode_str(ynode_get(ynode_path(o, "metadata.annotations"), key));
}

const char *obj_label(const struct ynode *o, const char *key)
{
	return ynode_str(ynode_get(ynode_path(o, "metadata.labels"), key));
}

bool obj_annotation_true(const struct ynode *o, const char *key)
{
	const char *v = obj_annotation(o, key);
	return v && (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"));
}

unsigned long long obj_rv_num(const char *rv)
{
	return rv ? strtoull(rv, NULL, 10) : 0;
}

char *obj_key(const char *ns, const char *name)
{
	if (!ns || !*ns)
		return xstrdup(name);
	return xasprintf("%s/%s", ns, name);
}

const char *obj_key_split(const char *key, char *ns, size_t size)
{
	const char *slash = strchr(key, '/');
	if (!slash || (size_t)(slash - key) >= size)
		return NULL;
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = '\0';
	return slash + 1;
}

char *obj_path(const char *plural, const char *ns, const char *name)
{
	if (!strcmp(plural, "namespaces"))
		return xasprintf("namespaces/%s.yaml", name);
	if (ns && *ns)
		return xasprintf("namespaces/%s/%s/%s.yaml", ns, plural, name);
	return xasprintf("%s/%s.yaml", plural, name);
}

const struct ynode *obj_controller_ref(const struct ynode *o)
{
	const struct ynode *refs = ynode_path(o, "metadata.ownerReferences");
	if (!refs || refs->type != YNODE_SEQ)
		return NULL;
	for (size_t i = 0; i < refs->n; i++) {
		bool ctl = false;
		const struct ynode *ref = ynode_item(refs, i);
		if (ref->type == YNODE_MAP && ynode_bool(ynode_get(ref, "controller"), &ctl) == 0 &&
		    ctl)
			return ref;
	}
	return NULL;
}

struct ynode *obj_owner_ref_new(const char *api_version, const char *kind, const char *name,
				const char *uid, bool controller)
{
	struct ynode *ref = ynode_new_map();
	ynode_set(ref, "apiVersion", ynode_new_str(api_version));
	ynode_set(ref, "kind", ynode_new_str(kind));
	ynode_set(ref, "name", ynode_new_str(name));
	ynode_set(ref, "uid", ynode_new_str(uid));
	if (controller) {
		ynode_set(ref, "controller", ynode_new_bool(true));
		ynode_set(ref, "blockOwnerDeletion", ynode_new_bool(true));
	}
	return ref;
}

void obj_add_owner_ref(struct ynode *o, struct ynode *ref)
{
	struct ynode *md = ynode_get_map(o, "metadata");
	struct ynode *refs = ynode_get(md, "ownerReferences");
	if (!refs || refs->type != YNODE_SEQ) {
		refs = ynode_new_seq();
		ynode_set(md, "ownerReferences", refs);
	}
	ynode_append(refs, ref);
}

int obj_remove_owner_refs(struct ynode *o, const char *uid)
{
	struct ynode *md = ynode_get(o, "metadata");
	struct ynode *refs = ynode_get(md, "ownerReferences");
	if (!refs || refs->type != YNODE_SEQ)
		return 0;
	int removed = 0;
	size_t j = 0;
	for (size_t i = 0; i < refs->n; i++) {
		struct ynode *ref = refs->items[i];
		const char *u = ynode_str(ynode_get(ref, "uid"));
		if (u && !strcmp(u, uid)) {
			ynode_free(ref);
			removed++;
		} else {
			refs->items[j++] = ref;
		}
	}
	refs->n = j;
	if (j == 0)
		ynode_del(md, "ownerReferences");
	return removed;
}

/* Times. */

int64_t obj_time_parse(const char *s)
{
	time_t t;
	return rfc3339_parse(s, &t) < 0 ? -1 : (int64_t)t;
}

void obj_time_format(int64_t t, char *buf)
{
	rfc3339_format((time_t)t, buf);
}

int64_t obj_now(void)
{
	return obj__fake_now ? obj__fake_now : (int64_t)time(NULL);
}

void obj_set_now(int64_t t)
{
	obj__fake_now = t;
}

/* Pods. */

bool pod_is_active(const struct ynode *pod)
{
	const char *phase = ynode_path_str(pod, "status.phase");
	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return false;
	const char *del = ynode_path_str(pod, "metadata.deletionTimestamp");
	return !del || !*del;
}

bool pod_is_ready(const struct ynode *pod, int64_t *since)
{
	if (since)
		*since = -1;
	const struct ynode *conds = ynode_path(pod, "status.conditions");
	if (!conds || conds->type != YNODE_SEQ)
		return false;
	for (size_t i = 0; i < conds->n; i++) {
		const struct ynode *c = ynode_item(conds, i);
		const char *type = ynode_str(ynode_get(c, "type"));
		if (!type || strcmp(type, "Ready") != 0)
			continue;
		const char *status = ynode_str(ynode_get(c, "status"));
		if (since)
			*since = obj_time_parse(ynode_str(ynode_get(c, "lastTransitionTime")));
		return status && !strcmp(status, "True");
	}
	return false;
}

bool pod_is_available(const struct ynode *pod, long long min_ready, int64_t now, int64_t *wait_s)
{
	int64_t since;
	if (wait_s)
		*wait_s = 0;
	if (!pod_is_ready(pod, &since))
		return false;
	if (min_ready <= 0)
		return true;
	if (since < 0)
		return false; /* ready, but since when is unknown: wait for a status that says */
	int64_t left = since + min_ready - now;
	if (left <= 0)
		return true;
	if (wait_s)
		*wait_s = left;
	return false;
}

bool labels_contain(const struct ynode *labels, const struct ynode *want)
{
	if (!want || want->type != YNODE_MAP)
		return true;
	for (size_t i = 0; i < want->n; i++) {
		const char *v = ynode_str(ynode_get(labels, ynode_map_key(want, i)->str));
		const char *w = ynode_str(ynode_map_val(want, i));
		if (!v || !w || strcmp(v, w) != 0)
			return false;
	}
	return true;
}

void obj_random_suffix(char *buf, size_t n)
{
	static const char alphabet[] = CTRL_NAME_ALPHABET;
	unsigned char r[64];
	if (n > sizeof(r))
		n = sizeof(r);
	if (getrandom(r, n, 0) != (ssize_t)n)
		for (size_t i = 0; i < n; i++)
			r[i] = (unsigned char)rand();
	for (size_t i = 0; i < n; i++)
		buf[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
	buf[n] = '\0';
}

char *obj_generate_name(const char *base)
{
	char suffix[6];
	obj_random_suffix(suffix, 5);
	size_t len = strlen(base);
	if (len > 58)
		len = 58;
	return xasprintf("%.*s%s", (int)len, base, suffix);
}
