/* objio.c: objects read and written whole through the mount. */
#include "objio.h"
#include "names.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int objio_read(const char *path, struct ynode **out, struct error **err)
{
	size_t len = 0;
	cleanup_free char *text = util_read_file(path, &len);
	if (!text)
		return error_set(err, errno ? errno : EIO, "%s: %s", path, strerror(errno));
	if (yaml_parse_one(text, len, out, err) < 0) {
		error_prefix(err, "%s", path);
		return -EINVAL;
	}
	return 0;
}

/* The reason corral-fs gave for refusing the write of path: the last line
 * of MOUNT/.errors that names it ("TIME REL: reason"). */
static char *objio__reason(const char *mount, const char *path)
{
	size_t mlen = strlen(mount);
	while (mlen > 1 && mount[mlen - 1] == '/')
		mlen--;
	if (strncmp(path, mount, mlen) != 0 || path[mlen] != '/')
		return NULL;
	cleanup_free char *needle = xasprintf(" %s: ", path + mlen + 1);
	cleanup_free char *errors_path = xasprintf("%.*s/.errors", (int)mlen, mount);
	cleanup_free char *text = util_read_file(errors_path, NULL);
	if (!text)
		return NULL;
	char *found = NULL;
	for (char *p = text; (p = strstr(p, needle)); p++)
		found = p;
	if (!found)
		return NULL;
	found += strlen(needle);
	return xstrndup(found, strcspn(found, "\n"));
}

static int objio__write(const char *mount, const char *path, const struct ynode *obj, int flags,
			struct error **err)
{
	size_t len = 0;
	cleanup_free char *text = yaml_emit(obj, &len);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | flags, 0644);
	if (fd < 0)
		return error_set(err, errno, "open %s: %s", path, strerror(errno));
	if (util_write_all(fd, text, len) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, e, "write %s: %s", path, strerror(e));
	}
	/* corral-fs judges the document here */
	if (close(fd) != 0) {
		int e = errno;
		if (e == EAGAIN)
			return error_set(err, e, "%s: conflict (written by someone else meanwhile)",
					 path);
		cleanup_free char *why = e == EINVAL ? objio__reason(mount, path) : NULL;
		return error_set(err, e, "%s refused: %s", path, why ? why : strerror(e));
	}
	return 0;
}

int objio_write(const char *mount, const char *path, const struct ynode *obj, struct error **err)
{
	return objio__write(mount, path, obj, O_CREAT, err);
}

int objio_update(const char *mount, const char *path, objio_change_fn fn, void *data,
		 unsigned tries, struct error **err)
{
	for (unsigned i = 0;; i++) {
		cleanup_ynode struct ynode *obj = NULL;
		struct error *rerr = NULL;
		int r = objio_read(path, &obj, &rerr);
		if (r < 0) {
			*err = rerr;
			return r;
		}
		r = fn(data, obj, err);
		if (r != 0)
			return r;
		struct error *werr = NULL;
		/* never O_CREAT: an update must not bring a deleted object back */
		r = objio__write(mount, path, obj, 0, &werr);
		if (r == 0)
			return 0;
		/* conflict: someone wrote since we read; read again. ENOENT: it
		 * went while we wrote, which is a conflict too (the uid or
		 * resourceVersion no longer exists), and the read says which. */
		if ((r != -EAGAIN && r != -ENOENT) || i + 1 >= tries) {
			*err = werr;
			return r;
		}
		error_free(werr);
	}
}

static int objio__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int objio_list(const char *dir, char ***names, size_t *n, struct error **err)
{
	cleanup_dir DIR *d = opendir(dir);
	if (!d)
		return error_set(err, errno, "%s: %s", dir, strerror(errno));
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!names_object_file(e->d_name, NULL))
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[cnt++] = xstrdup(e->d_name);
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), objio__cmp);
	*names = v;
	*n = cnt;
	return 0;
}

void objio_list_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
