/* object.h: from what a user wrote to what the store keeps.
 *
 * object_build() parses a write, checks it belongs where it was written,
 * validates and defaults it for its kind, carries the server-set metadata
 * (uid, creationTimestamp, generation) and the status over from the stored
 * object, and works out the declared form and a commit message for the
 * history. An object being deleted keeps its deletionTimestamp, and may
 * only lose finalizers (finalizers.h). It does no I/O: the caller reads the old object and stores
 * the new one. */
#ifndef CORRAL_FS_OBJECT_H
#define CORRAL_FS_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kinds.h"
#include "ynode.h"

#define OBJECT_MAX_BYTES (1536 * 1024) /* as etcd's request limit */

struct object_build {
	/* In. */
	const struct kind_info *kind;
	const char *ns;	  /* NULL for cluster-scoped kinds */
	const char *name; /* from the file name */
	const char *text; /* what was written */
	size_t len;
	const char *old_yaml; /* the stored object, NULL on create */
	size_t old_len;
	uint64_t old_decl_rv;	 /* revision of its last declared change (0: unknown) */
	struct ynode *text_tree; /* text parsed already, or NULL (taken) */
	struct ynode *old_tree;	 /* old_yaml parsed already, or NULL (taken) */
	/* Out. */
	struct ynode *obj; /* to store (resourceVersion set by the store) */
	struct ynode *old; /* old_yaml parsed (NULL on create), for the hooks */
	char *declared;	   /* declared form for the history, or NULL */
	char *message;	   /* commit message, when declared is set */
	bool decl_changed; /* the declared part differs from the stored one */
	bool gone;	   /* the write removed the last finalizer of an object
			      being deleted: it is to be deleted (finalizers.h) */
};

int object_build(struct object_build *b, struct error **err);
void object_build_clear(struct object_build *b);

/* Checks a drop box file (one or many documents, each a whole object of a
 * known kind with its metadata.name) written at a namespace's top (ns) or at
 * the mount's top (ns NULL), document by document, as corral-ctrl will file
 * it (as `kubectl apply -f` applies the documents it can). Each refused
 * document's error, prefixed "document N (Kind name, line L)", goes to
 * refused (may be NULL). Returns how many documents are valid; -EINVAL
 * when none is (or there are none), as for YAML that does not parse;
 * -EFBIG over OBJECT_MAX_BYTES. */
int object_check_drop(const char *ns, const char *text, size_t len,
		      void (*refused)(void *data, const struct error *e), void *data,
		      struct error **err);

/* The declared form of a stored object, or NULL when the object is not the
 * history's (status-only kinds, controller-owned objects). */
char *object_declared(const struct kind_info *k, const struct ynode *obj);
/* "delete pod dev/web" */
char *object_delete_message(const struct kind_info *k, const char *ns, const char *name);
/* Whether an object with this text belongs to the history. */
bool object_in_history(const struct kind_info *k, const char *yaml, size_t len);
/* A new random UUID (version 4) in its text form, 36 characters + NUL. */
void object_new_uid(char out[37]);

#endif
