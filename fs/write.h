/* write.h: corral-fs's one write path. Every change of an object, from
 * any request (a close, a rename, mkdir of a namespace, a truncate, rm),
 * goes through here:
 *
 *   parse -> validate -> default   object_build() (object.h, validate.h)
 *   -> admission hooks             reserve (admission.h)
 *   -> store                       store_apply(): durable, revisioned
 *   -> settle, or unreserve        and build again when another write
 *                                  got in between (-EAGAIN from the store)
 *
 * A write that is refused anywhere leaves the store exactly as it was, and
 * its error (a Kubernetes message naming the field and the rule, or the
 * refusing hook's) is the caller's to show in .errors. No FUSE, no tree:
 * the handlers in ops.c call this and reply. */
#ifndef CORRAL_FS_WRITE_H
#define CORRAL_FS_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "error.h"
#include "kinds.h"
#include "store.h"

/* Where a write goes. */
struct write_target {
	const struct kind_info *kind;
	const char *ns;	    /* NULL: cluster-scoped */
	const char *name;   /* from the file name */
	const char *key;    /* the store key: "namespaces/dev/pods/web" */
	bool create_only;   /* a stored object is not replaced: EEXIST */
	bool expect_absent; /* the caller's tree holds no such object (a new
			       file): the first attempt builds on that
			       without reading the store, whose compare
			       refuses a wrong guess (then it reads) */
};

/* What was stored. */
struct write_result {
	char *yaml; /* the stored text, normalized (malloc'd) */
	size_t len;
	uint64_t rv; /* its resourceVersion */
};

/* What a write or deletion did besides the plain case (finalizers.h). */
enum {
	WRITE_GONE = 1, /* write_object: the write removed the last finalizer
			   of an object being deleted: it is deleted, out is
			   empty */
	WRITE_KEPT = 1, /* write_delete: the object has finalizers: it stays,
			   being deleted (deletionTimestamp set now or before) */
};

/* Writes text as the object t on behalf of author ("name <email>"). adm
 * may be NULL (no hooks). 0 or WRITE_GONE, or -errno. */
int write_object(struct store *s, struct admission *adm, const struct write_target *t,
		 const char *text, size_t len, const char *author, struct write_result *out,
		 struct error **err);
/* Deletes the object t; -ENOENT when it is not stored. The hooks see the
 * deletion (request obj NULL). An object with finalizers is not removed:
 * it gets its deletionTimestamp (the hooks see that update) and
 * WRITE_KEPT is returned, as it is for one being deleted already. */
int write_delete(struct store *s, struct admission *adm, const struct write_target *t,
		 const char *author, struct error **err);
void write_result_clear(struct write_result *r);

#endif
