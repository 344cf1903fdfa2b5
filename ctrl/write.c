/* write.c: writes of objects through the mount, on a pool of threads
 * (lib's workpool.h, two priorities) whose ends come back to the loop,
 * which runs the done callbacks on its own thread. Jobs own copies of
 * everything they use, so a worker never touches the caller's state.
 *
 * This file must never call a done callback from a worker thread, and
 * never write anything but the path it was given. */
#include "write.h"
#include "log.h"
#include "obj.h"
#include "util.h"
#include "workpool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Low-priority jobs wait until no other job was submitted for this long. */
#define WRITER__LOW_PAUSE_MS 200

enum writer__type { WRITER__CREATE, WRITER__UPDATE, WRITER__DELETE, WRITER__CALL };

struct writer__job {
	struct writer *w;
	enum writer__type type;
	unsigned flags;
	char *path;	   /* create: the folder; others: the file */
	struct ynode *obj; /* create: the object */
	writer_mutate_fn mutate;
	writer_call_fn call;
	void *arg;
	void (*arg_free)(void *);
	char *uid; /* delete: precondition */
	writer_done_fn done;
	void *data;
	/* What the worker found. */
	int status;
	char *msg;
	char *res_path;
	char *name;
	unsigned long long min_rv;
	bool changed;
};

struct writer {
	char *mount;
	struct workpool *pool;
};

static void writer__job_free(struct writer__job *j)
{
	if (j->arg_free)
		j->arg_free(j->arg);
	ynode_free(j->obj);
	free(j->path);
	free(j->uid);
	free(j->msg);
	free(j->res_path);
	free(j->name);
	free(j);
}

/* Synchronous helpers. */

int write_read_object(const char *mount, const char *path, struct ynode **out, struct error **err)
{
	cleanup_free char *full = xasprintf("%s/%s", mount, path);
	size_t len = 0;
	cleanup_free char *text = NULL;
	/* An object is never empty; corral-fs can show one empty to a reader
	 * while another process has it open with O_TRUNC: read again. */
	for (int attempt = 0; attempt < 50; attempt++) {
		free(text);
		text = util_read_file(full, &len);
		if (!text)
			return error_set(err, errno, "%s: %s", path, strerror(errno));
		if (len)
			break;
		usleep(2000);
	}
	struct ynode *doc = NULL;
	if (yaml_parse_one(text, len, &doc, err) < 0) {
		error_prefix(err, "%s", path);
		return -EINVAL;
	}
	if (doc->type != YNODE_MAP) {
		ynode_free(doc);
		return error_set(err, EINVAL, "%s: not a mapping", path);
	}
	*out = doc;
	return 0;
}

/* The reason corral-fs gave in .errors for the last refusal of path: an
 * invalid object (EINVAL) or one an admission hook forbids (EACCES, a
 * quota exceeded). */
static char *write__reason(const char *mount, const char *path)
{
	cleanup_free char *errors = xasprintf("%s/.errors", mount);
	cleanup_free char *text = util_read_file(errors, NULL);
	if (!text)
		return NULL;
	cleanup_free char *needle = xasprintf(" %s: ", path);
	char *found = NULL;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *p = strstr(line, needle);
		if (p)
			found = p + strlen(needle);
		line = nl ? nl + 1 : NULL;
	}
	return found ? xstrdup(found) : NULL;
}

int write_put(const char *mount, const char *path, const char *text, size_t len, int oflags,
	      struct error **err)
{
	cleanup_free char *full = xasprintf("%s/%s", mount, path);
	int fd = open(full, O_WRONLY | O_CLOEXEC | oflags, 0644);
	if (fd < 0)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	if (util_write_all(fd, text, len) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, e, "%s: write: %s", path, strerror(e));
	}
	if (close(fd) < 0) {
		int e = errno;
		cleanup_free char *why =
		    e == EINVAL || e == EACCES ? write__reason(mount, path) : NULL;
		if (why)
			return error_set(err, e, "%s: %s", path, why);
		return error_set(err, e, "%s: %s", path, strerror(e));
	}
	return 0;
}

int write_put_object(const char *mount, const char *path, const struct ynode *obj, int oflags,
		     struct error **err)
{
	size_t len;
	cleanup_free char *text = yaml_emit(obj, &len);
	return write_put(mount, path, text, len, oflags, err);
}

/* Jobs, on a worker. */

static void writer__fail(struct writer__job *j, struct error *e)
{
	j->status = e ? e->status : EIO;
	j->msg = xstrdup(e && e->msg ? e->msg : strerror(j->status));
	error_free(e);
}

static void writer__run_create(const char *mount, struct writer__job *j)
{
	struct error *e = NULL;
	for (int attempt = 0;; attempt++) {
		const char *name = obj_name(j->obj);
		if (!name) {
			writer__fail(j, NULL);
			return;
		}
		free(j->res_path);
		j->res_path = xasprintf("%s/%s.yaml", j->path, name);
		int oflags = O_CREAT | ((j->flags & WRITER_REPLACE) ? O_TRUNC : O_EXCL);
		int r = write_put_object(mount, j->res_path, j->obj, oflags, &e);
		if (r == -EEXIST && (j->flags & WRITER_GENERATE) && attempt < WRITER_RETRIES) {
			error_free(e);
			e = NULL;
			size_t len = strlen(name);
			cleanup_free char *fresh = xstrdup(name);
			if (len >= 5)
				obj_random_suffix(fresh + len - 5, 5);
			ynode_set(ynode_get_map(j->obj, "metadata"), "name", ynode_new_str(fresh));
			continue;
		}
		if (r < 0) {
			writer__fail(j, e);
			return;
		}
		break;
	}
	j->name = xstrdup(obj_name(j->obj));
	j->changed = true;
	j->min_rv = 1;
}

static void writer__run_update(const char *mount, struct writer__job *j)
{
	j->res_path = xstrdup(j->path);
	for (int attempt = 0;; attempt++) {
		struct error *e = NULL;
		cleanup_ynode struct ynode *o = NULL;
		if (write_read_object(mount, j->path, &o, &e) < 0) {
			writer__fail(j, e);
			return;
		}
		const char *rv = obj_rv(o);
		cleanup_free char *read_rv = rv ? xstrdup(rv) : NULL;
		int r = j->mutate(o, j->arg, &e);
		if (r < 0) {
			writer__fail(j, e);
			return;
		}
		if (r == 0) {
			j->name = xstrdup(obj_name(o) ? obj_name(o) : "");
			j->min_rv = obj_rv_num(read_rv);
			return;
		}
		/* The version read is the lock, whatever mutate did. */
		if (read_rv)
			ynode_set(ynode_get_map(o, "metadata"), "resourceVersion",
				  ynode_new_str(read_rv));
		r = write_put_object(mount, j->path, o, O_TRUNC, &e);
		if (r == -EAGAIN && attempt < WRITER_RETRIES) {
			error_free(e);
			continue;
		}
		if (r < 0) {
			writer__fail(j, e);
			return;
		}
		j->name = xstrdup(obj_name(o) ? obj_name(o) : "");
		j->changed = true;
		j->min_rv = obj_rv_num(read_rv) + 1;
		return;
	}
}

static void writer__run_delete(const char *mount, struct writer__job *j)
{
	j->res_path = xstrdup(j->path);
	struct error *e = NULL;
	if (j->uid) {
		cleanup_ynode struct ynode *o = NULL;
		if (write_read_object(mount, j->path, &o, &e) < 0) {
			writer__fail(j, e);
			return;
		}
		const char *uid = obj_uid(o);
		if (!uid || strcmp(uid, j->uid) != 0) {
			error_set(&e, ESTALE, "%s: uid %s is not %s any more", j->path,
				  uid ? uid : "(none)", j->uid);
			writer__fail(j, e);
			return;
		}
	}
	cleanup_free char *full = xasprintf("%s/%s", mount, j->path);
	if (unlink(full) < 0) {
		error_set(&e, errno, "%s: %s", j->path, strerror(errno));
		writer__fail(j, e);
		return;
	}
	j->changed = true;
}

static void writer__run(const char *mount, struct writer__job *j)
{
	switch (j->type) {
	case WRITER__CREATE:
		writer__run_create(mount, j);
		break;
	case WRITER__UPDATE:
		writer__run_update(mount, j);
		break;
	case WRITER__DELETE:
		writer__run_delete(mount, j);
		break;
	case WRITER__CALL: {
		struct error *e = NULL;
		if (j->call(mount, j->arg, &e) < 0)
			writer__fail(j, e);
		break;
	}
	}
}

/* On a worker. */
static void writer__job_run(void *data)
{
	struct writer__job *j = data;
	writer__run(j->w->mount, j);
}

/* On the loop: the job's done callback. */
static void writer__job_done(void *data)
{
	struct writer__job *j = data;
	if (j->done) {
		struct writer_result res = {
		    .status = j->status,
		    .msg = j->msg,
		    .path = j->res_path ? j->res_path : j->path,
		    .name = j->name,
		    .min_rv = j->min_rv,
		    .changed = j->changed,
		};
		j->done(j->data, &res);
	}
	writer__job_free(j);
}

struct writer *writer_new(struct loop *loop, const char *mount, unsigned threads,
			  struct error **err)
{
	const struct workpool_opts o = {
	    .loop = loop,
	    .threads = threads ? threads : 1,
	    .low_pause_ms = WRITER__LOW_PAUSE_MS,
	};
	struct workpool *pool = workpool_new(&o, err);
	if (!pool)
		return NULL;
	if (workpool_start(pool, 0, err) < 0)
		log_fatal("writer: %s", (*err)->msg);
	struct writer *w = xcalloc(1, sizeof(*w));
	w->mount = xstrdup(mount);
	w->pool = pool;
	return w;
}

void writer_drain(struct writer *w)
{
	workpool_drain(w->pool);
}

void writer_free(struct writer *w)
{
	if (!w)
		return;
	workpool_free(w->pool);
	free(w->mount);
	free(w);
}

unsigned writer_pending(const struct writer *w)
{
	return (unsigned)workpool_pending(w->pool);
}

static void writer__submit(struct writer *w, struct writer__job *j)
{
	j->w = w;
	workpool_submit(w->pool, writer__job_run, writer__job_done, j,
			(j->flags & WRITER_LOW) ? WORKPOOL_LOW : 0);
}

static struct writer__job *writer__job_new(enum writer__type type, unsigned flags,
					   writer_done_fn done, void *data)
{
	struct writer__job *j = xcalloc(1, sizeof(*j));
	j->type = type;
	j->flags = flags;
	j->done = done;
	j->data = data;
	return j;
}

void writer_create(struct writer *w, const char *dir, struct ynode *obj, unsigned flags,
		   writer_done_fn done, void *data)
{
	struct writer__job *j = writer__job_new(WRITER__CREATE, flags, done, data);
	j->path = xstrdup(dir);
	j->obj = obj;
	writer__submit(w, j);
}

void writer_update(struct writer *w, const char *path, writer_mutate_fn mutate, void *arg,
		   void (*arg_free)(void *), unsigned flags, writer_done_fn done, void *data)
{
	struct writer__job *j = writer__job_new(WRITER__UPDATE, flags, done, data);
	j->path = xstrdup(path);
	j->mutate = mutate;
	j->arg = arg;
	j->arg_free = arg_free;
	writer__submit(w, j);
}

void writer_delete(struct writer *w, const char *path, const char *uid, unsigned flags,
		   writer_done_fn done, void *data)
{
	struct writer__job *j = writer__job_new(WRITER__DELETE, flags, done, data);
	j->path = xstrdup(path);
	j->uid = uid ? xstrdup(uid) : NULL;
	writer__submit(w, j);
}

void writer_call(struct writer *w, writer_call_fn fn, void *arg, void (*arg_free)(void *),
		 unsigned flags, writer_done_fn done, void *data)
{
	struct writer__job *j = writer__job_new(WRITER__CALL, flags, done, data);
	j->path = xstrdup("");
	j->call = fn;
	j->arg = arg;
	j->arg_free = arg_free;
	writer__submit(w, j);
}
