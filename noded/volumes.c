/* volumes.c: emptyDir, hostPath, configMap, secret, persistentVolumeClaim. */
#include "volumes.h"
#include "quantity.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

struct volumes__one {
	char *name;
	char *path;
};

struct volumes {
	struct volumes__one *v;
	size_t n;
};

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

/* configMap or secret: one file per key (or per item). */
static int volumes__projected(const struct ynode *spec, bool secret, const char *dir,
			      container_lookup_fn lookup, void *data, struct error **err)
{
	const char *name = ynode_path_str(spec, secret ? "secretName" : "name");
	bool optional = false;
	ynode_bool(ynode_get(spec, "optional"), &optional);
	int r = util_mkdir_p(dir, 0755);
	if (r < 0)
		return error_set(err, -r, "%s: %s", dir, strerror(-r));
	if (!name)
		return error_set(err, EINVAL, "no %s", secret ? "secretName" : "name");
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
	mode_t def = (mode_t)volumes__mode(ynode_get(spec, "defaultMode"), secret ? 0400 : 0644);
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
		    void *data, struct volumes **out, struct error **err)
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
		} else {
			r = error_set(err, ENOTSUP,
				      "its type is not one this node mounts (emptyDir, "
				      "hostPath, configMap, secret, "
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
