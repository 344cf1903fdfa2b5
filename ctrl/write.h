/* write.h: writing objects through the mount, off the loop's thread.
 *
 * Every write corral-ctrl makes is one a person could make: open, write the
 * whole object, close (where corral-fs validates and commits it), or
 * unlink. A close takes one of corral-fs's fsyncs, so writes run on a pool
 * of threads: writers that wait together share one fsync (group commit),
 * and the loop never blocks on the store. Each job reports back on the
 * loop's thread through its done callback, with the resourceVersion an
 * informer shows once it has seen the write (a created object at all, an
 * updated one above the version the update read), so that a controller can
 * wait until its informer has seen what it wrote without reading it back.
 *
 * Updates are read-modify-write with the resourceVersion read as the lock:
 * a conflict (EAGAIN) reads the object again and re-applies the change, up
 * to WRITER_RETRIES times. A mutate function runs on a worker thread and
 * must touch nothing but the object and its own argument.
 *
 * Low-priority jobs (events) run only when no other job waits and none was
 * submitted for a moment, so that they never slow a burst of real work. */
#ifndef CORRAL_CTRL_WRITE_H
#define CORRAL_CTRL_WRITE_H

#include <stdbool.h>

#include "error.h"
#include "loop.h"
#include "ynode.h"

#define WRITER_RETRIES 8

struct writer;

struct writer_result {
	int status;		   /* 0, or an errno: EINVAL refused, EAGAIN conflict, ENOENT ... */
	const char *msg;	   /* why, when status != 0 */
	const char *path;	   /* below the mount */
	const char *name;	   /* the object's name (a generated one may have changed) */
	unsigned long long min_rv; /* an informer that has seen the write shows at
				    * least this resourceVersion (1 after a
				    * create, the version read + 1 after an
				    * update); 0 after a delete */
	bool changed;		   /* false: the update found nothing to change */
};

/* Runs on the loop's thread; res and its strings live until it returns. */
typedef void (*writer_done_fn)(void *data, const struct writer_result *res);
/* Runs on a worker: changes obj; returns 1 if it changed something, 0 to
 * leave the object as it is (nothing is written), negative with *err to
 * give up. */
typedef int (*writer_mutate_fn)(struct ynode *obj, void *arg, struct error **err);
/* A job of one's own, on a worker (drop boxes). */
typedef int (*writer_call_fn)(const char *mount, void *arg, struct error **err);

enum {
	WRITER_LOW = 1 << 0,	  /* after every other job */
	WRITER_GENERATE = 1 << 1, /* create: a taken name gets new random last 5 characters */
	WRITER_REPLACE = 1 << 2,  /* create: overwrite an object of that name */
};

/* threads: workers (at least 1). Fails only if the eventfd cannot be made. */
struct writer *writer_new(struct loop *loop, const char *mount, unsigned threads,
			  struct error **err);
/* Waits for the jobs in flight (their done callbacks run), then stops. */
void writer_free(struct writer *w);

/* Creates the object obj (taken) in dir ("namespaces/dev/pods"), named by
 * its metadata.name; EEXIST if it exists, unless WRITER_GENERATE or
 * WRITER_REPLACE. */
void writer_create(struct writer *w, const char *dir, struct ynode *obj, unsigned flags,
		   writer_done_fn done, void *data);
/* Reads path, applies mutate, writes it back with the resourceVersion read;
 * arg is freed with arg_free (may be NULL) when the job is over. */
void writer_update(struct writer *w, const char *path, writer_mutate_fn mutate, void *arg,
		   void (*arg_free)(void *), unsigned flags, writer_done_fn done, void *data);
/* Removes path, if uid is NULL or still the object's uid (else ESTALE). */
void writer_delete(struct writer *w, const char *path, const char *uid, unsigned flags,
		   writer_done_fn done, void *data);
/* Runs fn(mount, arg) on a worker. */
void writer_call(struct writer *w, writer_call_fn fn, void *arg, void (*arg_free)(void *),
		 unsigned flags, writer_done_fn done, void *data);

/* Runs every done callback of the jobs submitted so far, waiting for
 * them; for a clean stop. */
void writer_drain(struct writer *w);
/* Jobs submitted whose done callback has not run yet. */
unsigned writer_pending(const struct writer *w);

/* Synchronous helpers, usable from any thread (the jobs use them). */
/* Reads and parses the object at path (below mount); ENOENT if missing. */
int write_read_object(const char *mount, const char *path, struct ynode **out, struct error **err);
/* Writes text to path (below mount): open with oflags | O_WRONLY, write,
 * close. A refusal's reason is taken from .errors when it can be found. */
int write_put(const char *mount, const char *path, const char *text, size_t len, int oflags,
	      struct error **err);
/* Emits obj and writes it to path with oflags. */
int write_put_object(const char *mount, const char *path, const struct ynode *obj, int oflags,
		     struct error **err);

#endif
