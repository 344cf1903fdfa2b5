/* volumes.c: emptyDir, hostPath, configMap, secret, downwardAPI, projected
 * (serviceAccountToken, configMap, secret, downwardAPI sources),
 * persistentVolumeClaim. */
#include "volumes.h"
#include "quantity.h"
#include "token.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct volumes__one {
	char *name;
	char *path;
};

struct volumes {
	struct volumes__one *v;
	size_t n;
	int64_t refresh_at; /* the first token due, Unix seconds; 0: none */
};

int64_t volumes_refresh_at(const struct volumes *v)
{
	return v ? v->refresh_at : 0;
}

const char *volumes_path(const struct volumes *v, const char *name)
{
	for (size_t i = 0; v && i < v->n; i++) {
		if (strcmp(v->v[i].name, name) == 0)
			return v->v[i].path;
	}
	return NULL;
}

void volumes_free(struct volumes *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].path);
	}
	free(v->v);
	free(v);
}

static void volumes__add(struct volumes *v, const char *name, char *path)
{
	v->v = xrealloc(v->v, (v->n + 1) * sizeof(*v->v));
	v->v[v->n].name = xstrdup(name);
	v->v[v->n].path = path;
	v->n++;
}

static bool volumes__is_mount(const char *path)
{
	struct stat a, b;
	cleanup_free char *parent = xasprintf("%s/..", path);
	return stat(path, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

static int volumes__empty_dir(const struct ynode *spec, const char *dir, struct error **err)
{
	int r = util_mkdir_p(dir, 0777);
	if (r < 0)
		return error_set(err, -r, "%s: %s", dir, strerror(-r));
	const char *medium = ynode_path_str(spec, "medium");
	if (!medium || strcmp(medium, "Memory") != 0 || volumes__is_mount(dir))
		return 0;
	cleanup_free char *opts = NULL;
	const char *limit = ynode_path_str(spec, "sizeLimit");
	int64_t milli;
	if (limit && quantity_parse(limit, &milli, NULL) == 0 && milli > 0)
		opts = xasprintf("mode=1777,size=%lld", (long long)(milli / 1000));
	else
		opts = xstrdup("mode=1777");
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return error_set(err, errno, "tmpfs on %s: %s", dir, strerror(errno));
	return 0;
}

static int volumes__host_path(const struct ynode *spec, struct error **err)
{
	const char *path = ynode_path_str(spec, "path");
	const char *type = ynode_path_str(spec, "type");
	if (!path || path[0] != '/')
		return error_set(err, EINVAL, "hostPath.path must be an absolute path");
	if (!type)
		type = "";
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (!exists && strcmp(type, "DirectoryOrCreate") == 0) {
		int r = util_mkdir_p(path, 0755);
		if (r < 0)
			return error_set(err, -r, "cannot create %s: %s", path, strerror(-r));
		return 0;
	}
	if (!exists && strcmp(type, "FileOrCreate") == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return error_set(err, errno, "cannot create %s: %s", path, strerror(errno));
		close(fd);
		return 0;
	}
	if (!exists)
		return error_set(err, ENOENT, "hostPath %s does not exist", path);
	static const struct {
		const char *type;
		mode_t mode;
	} want[] = {
	    {"Directory", S_IFDIR},    {"DirectoryOrCreate", S_IFDIR}, {"File", S_IFREG},
	    {"FileOrCreate", S_IFREG}, {"Socket", S_IFSOCK},	       {"CharDevice", S_IFCHR},
	    {"BlockDevice", S_IFBLK},
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		if (strcmp(type, want[i].type) == 0 && (st.st_mode & S_IFMT) != want[i].mode)
			return error_set(err, EINVAL, "hostPath type check failed: %s is not a %s",
					 path, want[i].type);
	}
	return 0;
}

/* Writes name under dir by a temporary file and a rename, unless it holds
 * that already. */
static int volumes__file(const char *dir, const char *name, const char *data, size_t len,
			 mode_t mode, struct error **err)
{
	if (!*name || name[0] == '/' || strstr(name, ".."))
		return error_set(err, EINVAL, "key path \"%s\" must be relative, without ..", name);
	cleanup_free char *path = xasprintf("%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	util_mkdir_p(path, 0755);
	*slash = '/';
	size_t oldlen;
	cleanup_free char *old = util_read_file(path, &oldlen);
	struct stat st;
	if (old && oldlen == len && memcmp(old, data, len) == 0 && stat(path, &st) == 0 &&
	    (st.st_mode & 07777) == mode)
		return 0;
	cleanup_free char *tmpdir = xstrdup(path);
	*strrchr(tmpdir, '/') = '\0';
	cleanup_free char *tmp = xasprintf("%s/.corral.tmp", tmpdir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return error_set(err, errno, "%s: %s", tmp, strerror(errno));
	int r = util_write_all(fd, data, len);
	fchmod(fd, mode);
	close(fd);
	if (r < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_set(err, e, "%s: %s", path, strerror(e));
	}
	return 0;
}

static int volumes__mode(const struct ynode *n, mode_t def)
{
	long long m;
	return n && ynode_int(n, &m) == 0 && m >= 0 && m <= 0777 ? (int)m : (int)def;
}

/* configMap or secret: one file per key (or per item), mode def unless an
 * item says otherwise. name_key: "name", or "secretName" for a secret
 * volume (a projected secret source says "name"). */
static int volumes__keys(const struct ynode *spec, bool secret, const char *name_key, mode_t def,
			 const char *dir, container_lookup_fn lookup, void *data,
			 struct error **err)
{
	const char *name = ynode_path_str(spec, name_key);
	bool optional = false;
	ynode_bool(ynode_get(spec, "optional"), &optional);
	int r = util_mkdir_p(dir, 0755);
	if (r < 0)
		return error_set(err, -r, "%s: %s", dir, strerror(-r));
	if (!name)
		return error_set(err, EINVAL, "no %s", name_key);
	struct ynode *obj = NULL;
	r = lookup(data, secret ? "secrets" : "configmaps", name, &obj, err);
	if (r == -ENOENT) {
		if (optional)
			return 0;
		return error_set(err, ENOENT, "%s \"%s\" not found",
				 secret ? "secret" : "configmap", name);
	}
	if (r < 0)
		return r;
	const struct ynode *items = ynode_get(spec, "items");
	static const char *const sections[] = {"data", "binaryData", "stringData"};
	r = 0;
	for (size_t s = 0; r == 0 && s < ARRAY_SIZE(sections); s++) {
		const struct ynode *m = ynode_get(obj, sections[s]);
		bool b64 = strcmp(sections[s], "binaryData") == 0 ||
			   (secret && strcmp(sections[s], "data") == 0);
		for (size_t k = 0; r == 0 && m && m->type == YNODE_MAP && k < m->n; k++) {
			const char *key = ynode_str(ynode_map_key(m, k));
			const char *val = ynode_str(ynode_map_val(m, k));
			const char *path = key;
			mode_t mode = def;
			if (items && items->type == YNODE_SEQ) {
				path = NULL;
				for (size_t i = 0; i < items->n; i++) {
					const struct ynode *it = ynode_item(items, i);
					const char *ik = ynode_path_str(it, "key");
					if (ik && strcmp(ik, key) == 0) {
						path = ynode_path_str(it, "path");
						mode = (mode_t)volumes__mode(ynode_get(it, "mode"),
									     def);
					}
				}
			}
			if (!path || !key || !val)
				continue;
			size_t len = strlen(val);
			cleanup_free char *dec = b64 ? util_base64_decode(val, &len, NULL) : NULL;
			if (b64 && !dec) {
				r = error_set(err, EINVAL, "key %s is not base64", key);
				break;
			}
			r = volumes__file(dir, path, b64 ? dec : val, len, mode, err);
		}
	}
	ynode_free(obj);
	return r;
}

/* configMap or secret volumes. */
static int volumes__projected(const struct ynode *spec, bool secret, const char *dir,
			      container_lookup_fn lookup, void *data, struct error **err)
{
	mode_t def = (mode_t)volumes__mode(ynode_get(spec, "defaultMode"), secret ? 0400 : 0644);
	return volumes__keys(spec, secret, secret ? "secretName" : "name", def, dir, lookup, data,
			     err);
}

/* ---- the downward API ---------------------------------------------------- */

/* s quoted as Go's %q does (the kubelet's FormatMap), onto f. */
static void volumes__quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
		case '\\':
			fprintf(f, "\\%c", *p);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static int volumes__cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *volumes_format_map(const struct ynode *m)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		abort(); /* out of memory: as xmalloc */
	size_t n = m && m->type == YNODE_MAP ? m->n : 0;
	const char **keys = xcalloc(n ? n : 1, sizeof(*keys));
	size_t nk = 0;
	for (size_t i = 0; i < n; i++)
		if (ynode_str(ynode_map_key(m, i)))
			keys[nk++] = ynode_str(ynode_map_key(m, i));
	qsort(keys, nk, sizeof(*keys), volumes__cmp_str);
	for (size_t i = 0; i < nk; i++) {
		const char *v = ynode_str(ynode_get(m, keys[i]));
		fprintf(f, "%s%s=", i ? "\n" : "", keys[i]);
		volumes__quote(f, v ? v : "");
	}
	free(keys);
	if (fclose(f) != 0)
		abort();
	return out;
}

/* `metadata.labels['k']` -> k (malloc'd) when path is that of field. */
static char *volumes__subscript(const char *path, const char *field)
{
	size_t n = strlen(field);
	if (strncmp(path, field, n) || strncmp(path + n, "['", 2))
		return NULL;
	const char *k = path + n + 2;
	size_t kl = strlen(k);
	if (kl < 2 || strcmp(k + kl - 2, "']"))
		return NULL;
	return xstrndup(k, kl - 2);
}

static int volumes__field(const struct ynode *pod, const char *path, char **out, struct error **err)
{
	static const char *const plain[] = {"metadata.name", "metadata.namespace", "metadata.uid"};
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (!strcmp(path, plain[i])) {
			const char *v = ynode_path_str(pod, path);
			*out = xstrdup(v ? v : "");
			return 0;
		}
	static const char *const maps[] = {"metadata.labels", "metadata.annotations"};
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++) {
		if (!strcmp(path, maps[i])) {
			*out = volumes_format_map(ynode_path(pod, path));
			return 0;
		}
		cleanup_free char *key = volumes__subscript(path, maps[i]);
		if (key) {
			const char *v = ynode_str(ynode_get(ynode_path(pod, maps[i]), key));
			*out = xstrdup(v ? v : "");
			return 0;
		}
	}
	return error_set(err, EINVAL,
			 "fieldRef %s is not supported in a volume (metadata.name, "
			 "metadata.namespace, metadata.uid, metadata.labels, "
			 "metadata.annotations)",
			 path);
}

/* The container of pod named name (containers, then init containers). */
static const struct ynode *volumes__container(const struct ynode *pod, const char *name)
{
	static const char *const lists[] = {"spec.containers", "spec.initContainers"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; name && cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const char *n = ynode_path_str(ynode_item(cs, i), "name");
			if (n && !strcmp(n, name))
				return ynode_item(cs, i);
		}
	}
	return NULL;
}

int volumes_resource_value(const struct ynode *pod, const struct ynode *ref,
			   const struct ynode *node, char **out, struct error **err)
{
	const char *cname = ynode_path_str(ref, "containerName");
	const char *res = ynode_path_str(ref, "resource");
	const char *div = ynode_path_str(ref, "divisor");
	const struct ynode *c = volumes__container(pod, cname);
	if (!c)
		return error_set(err, EINVAL, "resourceFieldRef: no container \"%s\"",
				 cname ? cname : "");
	static const char *const known[] = {
	    "limits.cpu",   "limits.memory",   "limits.ephemeral-storage",
	    "requests.cpu", "requests.memory", "requests.ephemeral-storage"};
	bool ok = false;
	for (size_t i = 0; res && i < ARRAY_SIZE(known); i++)
		ok = ok || !strcmp(res, known[i]);
	if (!ok)
		return error_set(err, EINVAL, "resourceFieldRef: unsupported resource \"%s\"",
				 res ? res : "");
	bool limit = !strncmp(res, "limits.", 7);
	const char *rname = strchr(res, '.') + 1;
	cleanup_free char *lpath = xasprintf("resources.limits.%s", rname);
	cleanup_free char *rpath = xasprintf("resources.requests.%s", rname);
	/* a limit not set is the node's allocatable; a request not set is
	 * its limit, else 0 (as Kubernetes defaults them) */
	const char *q = limit ? ynode_path_str(c, lpath) : ynode_path_str(c, rpath);
	if (!q && !limit)
		q = ynode_path_str(c, lpath);
	if (!q && limit)
		q = ynode_str(ynode_get(ynode_path(node, "status.allocatable"), rname));
	int64_t v = 0, d = 1000;
	if (q && quantity_parse(q, &v, err) < 0)
		return -1;
	if (div && *div && (quantity_parse(div, &d, err) < 0 || d <= 0)) {
		if (!*err)
			error_set(err, EINVAL, "resourceFieldRef: divisor %s must be positive",
				  div);
		return -1;
	}
	/* ceil(v / d), both in thousandths */
	int64_t n = v <= 0 ? 0 : (v + d - 1) / d;
	*out = xasprintf("%lld", (long long)n);
	return 0;
}

/* downwardAPI items (a volume, or a projected source) under dir. */
static int volumes__downward(const struct ynode *pod, const struct ynode *items, mode_t def,
			     const char *dir, container_lookup_fn lookup, void *data,
			     struct error **err)
{
	int r = util_mkdir_p(dir, 0755);
	if (r < 0)
		return error_set(err, -r, "%s: %s", dir, strerror(-r));
	cleanup_ynode struct ynode *node = NULL;
	bool looked = false;
	for (size_t i = 0; items && items->type == YNODE_SEQ && i < items->n; i++) {
		const struct ynode *it = ynode_item(items, i);
		const char *path = ynode_path_str(it, "path");
		if (!path)
			return error_set(err, EINVAL, "downwardAPI item %zu: no path", i);
		mode_t mode = (mode_t)volumes__mode(ynode_get(it, "mode"), def);
		cleanup_free char *val = NULL;
		const char *field = ynode_path_str(it, "fieldRef.fieldPath");
		const struct ynode *ref = ynode_get(it, "resourceFieldRef");
		if (field) {
			r = volumes__field(pod, field, &val, err);
		} else if (ref) {
			const char *lp = ynode_path_str(ref, "resource");
			if (!looked && lp && !strncmp(lp, "limits.", 7)) {
				const char *nn = ynode_path_str(pod, "spec.nodeName");
				struct error *e = NULL;
				if (nn && lookup(data, "nodes", nn, &node, &e) < 0)
					node = NULL;
				error_free(e);
				looked = true;
			}
			r = volumes_resource_value(pod, ref, node, &val, err);
		} else {
			r = error_set(err, EINVAL,
				      "downwardAPI item %s: needs fieldRef or resourceFieldRef",
				      path);
		}
		if (r < 0)
			return r;
		r = volumes__file(dir, path, val, strlen(val), mode, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- projected ----------------------------------------------------------- */

/* A serviceAccountToken source: the token at path, signed again once due. */
static int volumes__token(struct volumes *v, const struct ynode *pod, const struct ynode *src,
			  mode_t def, const char *dir, container_lookup_fn lookup, void *data,
			  const struct volumes_tokens *tk, struct error **err)
{
	const char *path = ynode_path_str(src, "path");
	if (!path)
		return error_set(err, EINVAL, "serviceAccountToken: no path");
	if (!tk || !tk->signer)
		return 0; /* no key on this node: see volumes.h */
	long long secs = 3600;
	ynode_int(ynode_get(src, "expirationSeconds"), &secs);
	if (secs < 600)
		return error_set(err, EINVAL,
				 "serviceAccountToken: expirationSeconds %lld is under 600", secs);
	int64_t now = tk->now ? tk->now : (int64_t)time(NULL);
	cleanup_free char *file = xasprintf("%s/%s", dir, path);
	cleanup_free char *have = util_read_file(file, NULL);
	int64_t iat, exp;
	if (have && !token_due(have, now) && token_times(have, &iat, &exp) == 0) {
		int64_t at = token_refresh_at(iat, exp);
		if (!v->refresh_at || at < v->refresh_at)
			v->refresh_at = at;
		return 0;
	}
	const char *sa = ynode_path_str(pod, "spec.serviceAccountName");
	if (!sa || !*sa)
		sa = "default";
	struct ynode *account = NULL;
	int r = lookup(data, "serviceaccounts", sa, &account, err);
	if (r == -ENOENT)
		return error_set(err, ENOENT, "serviceaccount \"%s\" not found", sa);
	if (r < 0)
		return r;
	cleanup_free char *sa_uid = xstrdup(ynode_path_str(account, "metadata.uid") ?: "");
	ynode_free(account);
	struct token_claims c = {
	    .issuer = tk->issuer && *tk->issuer ? tk->issuer : TOKEN_DEFAULT_ISSUER,
	    .audience = ynode_path_str(src, "audience"),
	    .ns = ynode_path_str(pod, "metadata.namespace"),
	    .pod_name = ynode_path_str(pod, "metadata.name"),
	    .pod_uid = ynode_path_str(pod, "metadata.uid"),
	    .sa_name = sa,
	    .sa_uid = sa_uid,
	    .iat = now,
	    .exp = now + secs,
	};
	cleanup_free char *jwt = token_sign(tk->signer, &c, err);
	if (!jwt)
		return -1;
	r = volumes__file(dir, path, jwt, strlen(jwt), def, err);
	if (r < 0)
		return r;
	int64_t at = token_refresh_at(c.iat, c.exp);
	if (!v->refresh_at || at < v->refresh_at)
		v->refresh_at = at;
	return 0;
}

static int volumes__projected_all(struct volumes *v, const struct ynode *pod,
				  const struct ynode *spec, const char *dir,
				  container_lookup_fn lookup, void *data,
				  const struct volumes_tokens *tk, struct error **err)
{
	mode_t def = (mode_t)volumes__mode(ynode_get(spec, "defaultMode"), 0644);
	int r = util_mkdir_p(dir, 0755);
	if (r < 0)
		return error_set(err, -r, "%s: %s", dir, strerror(-r));
	const struct ynode *sources = ynode_get(spec, "sources");
	for (size_t i = 0; sources && sources->type == YNODE_SEQ && i < sources->n; i++) {
		const struct ynode *src = ynode_item(sources, i), *s;
		if ((s = ynode_get(src, "serviceAccountToken")))
			r = volumes__token(v, pod, s, def, dir, lookup, data, tk, err);
		else if ((s = ynode_get(src, "configMap")))
			r = volumes__keys(s, false, "name", def, dir, lookup, data, err);
		else if ((s = ynode_get(src, "secret")))
			r = volumes__keys(s, true, "name", def, dir, lookup, data, err);
		else if ((s = ynode_get(src, "downwardAPI")))
			r = volumes__downward(pod, ynode_get(s, "items"), def, dir, lookup, data,
					      err);
		else
			r = error_set(err, ENOTSUP,
				      "projected source %zu is not one this node mounts "
				      "(serviceAccountToken, configMap, secret, downwardAPI)",
				      i);
		if (r < 0)
			return r;
	}
	return 0;
}

static int volumes__claim(const struct ynode *spec, container_lookup_fn lookup, void *data,
			  char **path, struct error **err)
{
	const char *claim = ynode_path_str(spec, "claimName");
	if (!claim)
		return error_set(err, EINVAL, "no claimName");
	struct ynode *pvc = NULL, *pv = NULL;
	int r = lookup(data, "persistentvolumeclaims", claim, &pvc, err);
	if (r == -ENOENT)
		return error_set(err, ENOENT, "persistentvolumeclaim \"%s\" not found", claim);
	if (r < 0)
		return r;
	const char *pvname = ynode_path_str(pvc, "spec.volumeName");
	if (!pvname || !*pvname) {
		ynode_free(pvc);
		return error_set(err, EAGAIN, "persistentvolumeclaim \"%s\" is not bound", claim);
	}
	r = lookup(data, "persistentvolumes", pvname, &pv, err);
	if (r == -ENOENT)
		r = error_set(err, ENOENT,
			      "persistentvolume \"%s\" (bound to claim \"%s\") not found", pvname,
			      claim);
	const struct ynode *hp = r == 0 ? ynode_path(pv, "spec.hostPath") : NULL;
	if (hp && ynode_path_str(hp, "path")) {
		/* a hostPath PV's type is checked (and a folder or file made)
		 * as a pod's hostPath volume's is */
		r = volumes__host_path(hp, err);
		if (r < 0)
			error_prefix(err, "persistentvolume \"%s\"", pvname);
		else
			*path = xstrdup(ynode_path_str(hp, "path"));
	} else if (r == 0) {
		const char *p = ynode_path_str(pv, "spec.local.path");
		struct stat st;
		if (!p)
			r = error_set(err, EINVAL,
				      "persistentvolume \"%s\" has no hostPath or local path "
				      "(the only kinds this node mounts)",
				      pvname);
		else if (stat(p, &st) != 0)
			r = error_set(err, ENOENT, "persistentvolume \"%s\": %s does not exist",
				      pvname, p);
		else
			*path = xstrdup(p);
	}
	ynode_free(pvc);
	ynode_free(pv);
	return r;
}

int volumes_prepare(const struct ynode *pod, const char *pod_dir, container_lookup_fn lookup,
		    void *data, const struct volumes_tokens *tokens, struct volumes **out,
		    struct error **err)
{
	struct volumes *v = xcalloc(1, sizeof(*v));
	const struct ynode *list = ynode_path(pod, "spec.volumes");
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *vol = ynode_item(list, i);
		const char *name = ynode_path_str(vol, "name");
		if (!name || strchr(name, '/'))
			continue;
		cleanup_free char *dir = xasprintf("%s/volumes/%s", pod_dir, name);
		const struct ynode *spec;
		int r = 0;
		char *path = NULL;
		if ((spec = ynode_get(vol, "emptyDir"))) {
			r = volumes__empty_dir(spec, dir, err);
			path = xstrdup(dir);
		} else if ((spec = ynode_get(vol, "hostPath"))) {
			r = volumes__host_path(spec, err);
			path = xstrdup(ynode_path_str(spec, "path") ? ynode_path_str(spec, "path")
								    : "");
		} else if ((spec = ynode_get(vol, "configMap"))) {
			r = volumes__projected(spec, false, dir, lookup, data, err);
			path = xstrdup(dir);
		} else if ((spec = ynode_get(vol, "secret"))) {
			r = volumes__projected(spec, true, dir, lookup, data, err);
			path = xstrdup(dir);
		} else if ((spec = ynode_get(vol, "persistentVolumeClaim"))) {
			r = volumes__claim(spec, lookup, data, &path, err);
		} else if ((spec = ynode_get(vol, "downwardAPI"))) {
			mode_t def = (mode_t)volumes__mode(ynode_get(spec, "defaultMode"), 0644);
			r = volumes__downward(pod, ynode_get(spec, "items"), def, dir, lookup, data,
					      err);
			path = xstrdup(dir);
		} else if ((spec = ynode_get(vol, "projected"))) {
			r = volumes__projected_all(v, pod, spec, dir, lookup, data, tokens, err);
			path = xstrdup(dir);
		} else {
			r = error_set(err, ENOTSUP,
				      "its type is not one this node mounts (emptyDir, "
				      "hostPath, configMap, secret, downwardAPI, projected, "
				      "persistentVolumeClaim)");
		}
		if (r < 0) {
			free(path);
			volumes_free(v);
			error_prefix(err, "MountVolume.SetUp failed for volume \"%s\"", name);
			return -1;
		}
		volumes__add(v, name, path);
	}
	*out = v;
	return 0;
}

void volumes_teardown(const char *pod_dir)
{
	cleanup_free char *dir = xasprintf("%s/volumes", pod_dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		cleanup_free char *p = xasprintf("%s/%s", dir, de->d_name);
		if (volumes__is_mount(p))
			umount2(p, MNT_DETACH);
	}
	closedir(d);
}
