/* obj.c: helpers over objects for the controllers. Pure: no I/O but the
 * random bytes of generated names. */
#include "obj.h"
#include "ownerref.h"
#include "timefmt.h"
#include "treepath.h"
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
	return treepath_object(plural, ns, name);
}

const struct ynode *obj_controller_ref(const struct ynode *o)
{
	return ownerref_controller(o);
}

struct ynode *obj_owner_ref_new(const char *api_version, const char *kind, const char *name,
				const char *uid, bool controller)
{
	return ownerref_new(api_version, kind, name, uid, controller);
}

void obj_add_owner_ref(struct ynode *o, struct ynode *ref)
{
	ownerref_add(o, ref);
}

int obj_remove_owner_refs(struct ynode *o, const char *uid)
{
	return ownerref_remove(o, uid);
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
