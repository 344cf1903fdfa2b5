/* container.c: a container's command, environment, mounts and security
 * context. */
#include "container.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *container_expand(const char *s, const struct strv *env)
{
	size_t cap = strlen(s) + 1, n = 0;
	char *out = xmalloc(cap);
	while (*s) {
		const char *add = s;
		size_t len = 1;
		if (s[0] == '$' && s[1] == '$') {
			len = 1;
			s += 2;
		} else if (s[0] == '$' && s[1] == '(') {
			const char *end = strchr(s + 2, ')');
			if (end) {
				cleanup_free char *name = xstrndup(s + 2, (size_t)(end - s - 2));
				const char *v = strv_getenv(env, name);
				if (v) {
					add = v;
					len = strlen(v);
				} else {
					len = (size_t)(end - s) + 1;
				}
				s = end + 1;
			} else {
				s++;
			}
		} else {
			s++;
		}
		if (n + len + 1 > cap) {
			cap = (n + len + 1) * 2;
			out = xrealloc(out, cap);
		}
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return out;
}

/* metadata.labels['app'] */
static const char *container__field(const struct ynode *pod, const char *path,
				    const struct container_env *ce)
{
	static const char *const plain[] = {"metadata.name", "metadata.namespace", "metadata.uid",
					    "spec.nodeName", "spec.serviceAccountName"};
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
		if (strcmp(path, plain[i]) == 0) {
			const char *v = ynode_path_str(pod, path);
			return v ? v : "";
		}
	}
	if (strcmp(path, "status.podIP") == 0)
		return ce->pod_ip ? ce->pod_ip : "";
	if (strcmp(path, "status.hostIP") == 0)
		return ce->host_ip ? ce->host_ip : "";
	static const char *const maps[] = {"metadata.labels", "metadata.annotations"};
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++) {
		size_t len = strlen(maps[i]);
		if (strncmp(path, maps[i], len) != 0 || strncmp(path + len, "['", 2) != 0)
			continue;
		const char *key = path + len + 2;
		const char *end = strstr(key, "']");
		if (!end || end[2])
			return NULL;
		cleanup_free char *k = xstrndup(key, (size_t)(end - key));
		const struct ynode *m = ynode_path(pod, maps[i]);
		const char *v = m ? ynode_str(ynode_get(m, k)) : NULL;
		return v ? v : "";
	}
	return NULL;
}

/* A key of a ConfigMap (data, binaryData) or Secret (data, base64; or
 * stringData) as text. */
static char *container__key(const struct ynode *obj, bool secret, const char *key)
{
	const char *v = ynode_str(ynode_get(ynode_get(obj, "data"), key));
	if (v && secret) {
		size_t len;
		char *dec = util_base64_decode(v, &len, NULL);
		return dec;
	}
	if (v)
		return xstrdup(v);
	v = ynode_str(ynode_get(ynode_get(obj, secret ? "stringData" : "binaryData"), key));
	if (v && !secret)
		return util_base64_decode(v, NULL, NULL);
	return v ? xstrdup(v) : NULL;
}

static int container__ref(const struct container_env *ce, const struct ynode *ref, bool secret,
			  const char *what, struct ynode **obj, bool *optional, struct error **err)
{
	const char *name = ynode_path_str(ref, "name");
	*optional = false;
	ynode_bool(ynode_get(ref, "optional"), optional);
	const char *plural = secret ? "secrets" : "configmaps";
	const char *kind = secret ? "secret" : "configmap";
	if (!name)
		return error_set(err, EINVAL, "%s: no %s name", what, kind);
	int r = ce->lookup(ce->data, plural, name, obj, err);
	if (r == -ENOENT) {
		if (*optional)
			return 1;
		return error_set(err, ENOENT, "%s \"%s\" not found", kind, name);
	}
	if (r < 0)
		error_prefix(err, "%s", what);
	return r;
}

static int container__env(const struct ynode *pod, const struct ynode *c,
			  const struct container_env *ce, struct strv *env, struct error **err)
{
	const struct ynode *from = ynode_get(c, "envFrom");
	for (size_t i = 0; from && from->type == YNODE_SEQ && i < from->n; i++) {
		const struct ynode *f = ynode_item(from, i);
		const char *prefix = ynode_path_str(f, "prefix");
		bool secret = ynode_get(f, "secretRef") != NULL;
		const struct ynode *ref = ynode_get(f, secret ? "secretRef" : "configMapRef");
		if (!ref)
			continue;
		struct ynode *obj = NULL;
		bool optional;
		int r = container__ref(ce, ref, secret, "envFrom", &obj, &optional, err);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		static const char *const sections[] = {"data", "stringData", "binaryData"};
		for (size_t s = 0; s < ARRAY_SIZE(sections); s++) {
			const struct ynode *m = ynode_get(obj, sections[s]);
			for (size_t k = 0; m && m->type == YNODE_MAP && k < m->n; k++) {
				const char *key = ynode_str(ynode_map_key(m, k));
				cleanup_free char *v = container__key(obj, secret, key);
				cleanup_free char *name =
				    xasprintf("%s%s", prefix ? prefix : "", key);
				if (v)
					strv_setenv(env, name, v);
			}
		}
		ynode_free(obj);
	}
	const struct ynode *list = ynode_get(c, "env");
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *e = ynode_item(list, i);
		const char *name = ynode_path_str(e, "name");
		if (!name)
			continue;
		const struct ynode *vf = ynode_get(e, "valueFrom");
		if (!vf) {
			const char *v = ynode_path_str(e, "value");
			cleanup_free char *x = container_expand(v ? v : "", env);
			strv_setenv(env, name, x);
			continue;
		}
		const char *field = ynode_path_str(vf, "fieldRef.fieldPath");
		if (field) {
			const char *v = container__field(pod, field, ce);
			if (!v)
				return error_set(err, EINVAL,
						 "env %s: fieldRef %s is not supported", name,
						 field);
			strv_setenv(env, name, v);
			continue;
		}
		bool secret = ynode_get(vf, "secretKeyRef") != NULL;
		const struct ynode *ref =
		    ynode_get(vf, secret ? "secretKeyRef" : "configMapKeyRef");
		if (!ref) {
			if (ynode_get(vf, "resourceFieldRef"))
				continue; /* limits as env: not yet */
			return error_set(err, EINVAL, "env %s: valueFrom names no source", name);
		}
		cleanup_free char *what = xasprintf("env %s", name);
		struct ynode *obj = NULL;
		bool optional;
		int r = container__ref(ce, ref, secret, what, &obj, &optional, err);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		const char *key = ynode_path_str(ref, "key");
		cleanup_free char *v = key ? container__key(obj, secret, key) : NULL;
		const char *oname = ynode_path_str(ref, "name");
		ynode_free(obj);
		if (!v) {
			if (optional)
				continue;
			return error_set(err, ENOENT, "%s: couldn't find key %s in %s %s", what,
					 key ? key : "(none)", secret ? "Secret" : "ConfigMap",
					 oname);
		}
		strv_setenv(env, name, v);
	}
	return 0;
}

static int container__mounts(const struct ynode *c, const struct container_env *ce,
			     struct container_plan *out, struct error **err)
{
	const struct ynode *list = ynode_get(c, "volumeMounts");
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *m = ynode_item(list, i);
		const char *name = ynode_path_str(m, "name");
		const char *target = ynode_path_str(m, "mountPath");
		const char *sub = ynode_path_str(m, "subPath");
		bool ro = false;
		ynode_bool(ynode_get(m, "readOnly"), &ro);
		if (!name || !target || target[0] != '/')
			return error_set(err, EINVAL,
					 "volumeMounts[%zu]: needs a name and an "
					 "absolute mountPath",
					 i);
		const char *src = ce->volume ? ce->volume(ce->data, name) : NULL;
		if (!src)
			return error_set(err, EINVAL,
					 "volumeMounts[%zu]: no volume \"%s\" in the pod", i, name);
		if (sub && *sub && (sub[0] == '/' || strstr(sub, "..")))
			return error_set(err, EINVAL,
					 "volumeMounts[%zu]: subPath \"%s\" must be a relative "
					 "path without ..",
					 i, sub);
		if (strchr(src, ':') || strchr(target, ':') || (sub && strchr(sub, ':')))
			return error_set(err, EINVAL,
					 "volumeMounts[%zu]: paths with ':' are not supported", i);
		if (sub && *sub)
			strv_addf(ro ? &out->binds_ro : &out->binds, "%s/%s:%s", src, sub, target);
		else
			strv_addf(ro ? &out->binds_ro : &out->binds, "%s:%s", src, target);
	}
	return 0;
}

/* capabilities.add or .drop of sc as a mask; *all when it names ALL. */
static int container__caps(const struct ynode *sc, const char *key, uint64_t *mask, bool *all,
			   struct error **err)
{
	*mask = 0;
	*all = false;
	const struct ynode *list = ynode_get(ynode_get(sc, "capabilities"), key);
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const char *name = ynode_str(ynode_item(list, i));
		if (name && strcasecmp(name, "ALL") == 0) {
			*all = true;
			continue;
		}
		int cap = capability_from_name(name);
		if (cap < 0)
			return error_set(err, EINVAL,
					 "securityContext.capabilities.%s[%zu]: unknown capability "
					 "\"%s\"",
					 key, i, name ? name : "");
		*mask |= CAPABILITY_BIT(cap);
	}
	return 0;
}

/* An id of the container's securityContext, else its pod's: -1 unset. */
static int container__id(const struct ynode *sc, const struct ynode *psc, const char *key,
			 long long *out, struct error **err)
{
	const struct ynode *n = ynode_get(sc, key);
	if (ynode_is_null(n))
		n = ynode_get(psc, key);
	*out = -1;
	if (ynode_is_null(n))
		return 0;
	if (ynode_int(n, out) < 0 || *out < 0 || *out > 2147483647LL)
		return error_set(err, EINVAL,
				 "securityContext.%s: must be between 0 and 2147483647, inclusive",
				 key);
	return 0;
}

static bool container__flag(const struct ynode *sc, const struct ynode *psc, const char *key,
			    bool dflt)
{
	bool v = dflt;
	if (ynode_bool(ynode_get(sc, key), &v) == 0)
		return v;
	if (psc && ynode_bool(ynode_get(psc, key), &v) == 0)
		return v;
	return dflt;
}

int container_security(const struct ynode *pod, const struct ynode *c,
		       struct container_security *out, struct error **err)
{
	*out = (struct container_security){.uid = -1, .gid = -1};
	const struct ynode *sc = ynode_get(c, "securityContext");
	const struct ynode *psc = ynode_path(pod, "spec.securityContext");
	if (container__flag(sc, NULL, "privileged", false))
		return error_set(err, EINVAL,
				 "securityContext.privileged: privileged containers are not "
				 "supported by corral-noded; add the capabilities the container "
				 "needs instead");
	/* as containerd: ALL first, then each name; a drop wins */
	uint64_t add, drop;
	bool add_all, drop_all;
	if (container__caps(sc, "add", &add, &add_all, err) < 0 ||
	    container__caps(sc, "drop", &drop, &drop_all, err) < 0)
		return -1;
	uint64_t caps = CONTAINER_DEFAULT_CAPS;
	if (add_all)
		caps = CAPABILITY_ALL;
	if (drop_all)
		caps = 0;
	out->caps = (caps | add) & ~drop;
	if (container__id(sc, psc, "runAsUser", &out->uid, err) < 0 ||
	    container__id(sc, psc, "runAsGroup", &out->gid, err) < 0)
		return -1;
	const struct ynode *groups = ynode_get(psc, "supplementalGroups");
	for (size_t i = 0; groups && groups->type == YNODE_SEQ && i < groups->n; i++) {
		long long g;
		if (ynode_int(ynode_item(groups, i), &g) < 0 || g < 0 || g > 2147483647LL) {
			container_security_clear(out);
			return error_set(err, EINVAL,
					 "securityContext.supplementalGroups[%zu]: must be between "
					 "0 and 2147483647, inclusive",
					 i);
		}
		out->groups = xrealloc(out->groups, (out->ngroups + 1) * sizeof(*out->groups));
		out->groups[out->ngroups++] = g;
	}
	out->read_only_root = container__flag(sc, NULL, "readOnlyRootFilesystem", false);
	out->no_new_privs = !container__flag(sc, NULL, "allowPrivilegeEscalation", true);
	if (container__flag(sc, psc, "runAsNonRoot", false) && out->uid <= 0) {
		/* corral's images carry no user: without runAsUser, root */
		const char *name = ynode_path_str(c, "name");
		const char *what = out->uid == 0 ? "container's runAsUser breaks non-root policy"
						 : "container has runAsNonRoot and image will run "
						   "as root";
		error_set(err, EINVAL, "%s (pod: \"%s_%s(%s)\", container: %s)", what,
			  ynode_path_str(pod, "metadata.name") ?: "",
			  ynode_path_str(pod, "metadata.namespace") ?: "",
			  ynode_path_str(pod, "metadata.uid") ?: "", name ? name : "");
		container_security_clear(out);
		return -1;
	}
	return 0;
}

void container_security_clear(struct container_security *s)
{
	free(s->groups);
	*s = (struct container_security){.uid = -1, .gid = -1};
}

long long container_passwd_gid(const char *passwd, long long uid)
{
	/* name:password:UID:GID:gecos:home:shell */
	for (const char *line = passwd; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *f = line;
		for (int i = 0; i < 2 && f; i++) {
			f = strpbrk(f, ":\n");
			f = f && *f == ':' ? f + 1 : NULL;
		}
		if (!f)
			continue;
		char *end;
		long long u = strtoll(f, &end, 10);
		if (end == f || *end != ':' || u != uid)
			continue;
		f = end + 1;
		long long g = strtoll(f, &end, 10);
		if (end != f && (*end == ':' || *end == '\n' || !*end) && g >= 0)
			return g;
	}
	return 0;
}

int container_plan(const struct ynode *pod, const struct ynode *c, const struct image *img,
		   const struct container_env *ce, struct container_plan *out, struct error **err)
{
	*out = (struct container_plan){.sec = {.uid = -1, .gid = -1}};
	out->reason = "CreateContainerConfigError";
	for (size_t i = 0; i < img->env.n; i++) {
		const char *eq = strchr(img->env.v[i], '=');
		if (!eq)
			continue;
		cleanup_free char *name = xstrndup(img->env.v[i], (size_t)(eq - img->env.v[i]));
		strv_setenv(&out->env, name, eq + 1);
	}
	if (!strv_getenv(&out->env, "PATH"))
		strv_setenv(&out->env, "PATH",
			    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	const char *host = ynode_path_str(pod, "spec.hostname");
	if (!host)
		host = ynode_path_str(pod, "metadata.name");
	if (host)
		strv_setenv(&out->env, "HOSTNAME", host);
	if (container__env(pod, c, ce, &out->env, err) < 0 ||
	    container__mounts(c, ce, out, err) < 0 ||
	    container_security(pod, c, &out->sec, err) < 0)
		goto fail;

	const struct ynode *command = ynode_get(c, "command");
	const struct ynode *args = ynode_get(c, "args");
	bool has_command = command && command->type == YNODE_SEQ && command->n;
	bool has_args = args && args->type == YNODE_SEQ && args->n;
	const struct ynode *lists[2] = {has_command ? command : NULL, has_args ? args : NULL};
	if (!has_command)
		for (size_t i = 0; i < img->entrypoint.n; i++)
			strv_add(&out->argv, img->entrypoint.v[i]);
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; lists[l] && i < lists[l]->n; i++) {
			const char *s = ynode_str(ynode_item(lists[l], i));
			strv_take(&out->argv, container_expand(s ? s : "", &out->env));
		}
	}
	if (!has_command && !has_args)
		for (size_t i = 0; i < img->cmd.n; i++)
			strv_add(&out->argv, img->cmd.v[i]);
	if (out->argv.n == 0) {
		out->reason = "CreateContainerError";
		error_set(err, EINVAL,
			  "no command specified: the container has no command and "
			  "image %s no entrypoint or cmd",
			  img->ref);
		goto fail;
	}
	const char *wd = ynode_path_str(c, "workingDir");
	if (wd && *wd)
		out->working_dir = xstrdup(wd);
	else if (img->working_dir)
		out->working_dir = xstrdup(img->working_dir);
	return 0;
fail : {
	const char *reason = out->reason;
	container_plan_clear(out);
	out->reason = reason;
	return -1;
}
}

void container_plan_clear(struct container_plan *p)
{
	strv_clear(&p->argv);
	strv_clear(&p->env);
	strv_clear(&p->binds);
	strv_clear(&p->binds_ro);
	free(p->working_dir);
	container_security_clear(&p->sec);
	*p = (struct container_plan){.sec = {.uid = -1, .gid = -1}};
}
