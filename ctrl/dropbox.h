/* dropbox.h: corral's `kubectl apply -f`: manifests written at the top of
 * a namespace's folder (namespaces/NS/x.yaml) or of the mount (x.yaml).
 *
 * corral-fs checks a drop box file when it is closed (it lists the
 * documents it refuses in .errors). corral-ctrl then tries every document,
 * in order, as `kubectl apply -f` does: each is filed under its kind and
 * name through the mount: in the namespace of the folder, or at the top in
 * metadata.namespace (else default), or in the folder of a cluster-scoped
 * kind. An object that does not exist is created as written; one that
 * exists is updated with the written fields winning and the stored
 * object's other fields (status among them) kept: a mapping merges key by
 * key, anything else is replaced, and a key written as null is removed
 * (JSON merge patch, RFC 7386). A document that cannot be filed (a kind
 * corral has no folder for, no name, a write refused, a conflict that
 * outlasts the retries) is in the log and a Warning event (FailedApply,
 * naming the drop file, the document's index, kind and name, and why; a
 * refused write is in .errors too); the others are filed all the same.
 * Once every document was tried the drop file is removed, unless it was
 * written again meanwhile (it is filed again).
 *
 * The folders are watched with inotify (the informers do not see drop
 * files); files already there at start are filed then. */
#ifndef CORRAL_CTRL_DROPBOX_H
#define CORRAL_CTRL_DROPBOX_H

#include "error.h"
#include "ynode.h"

struct ctrl;
struct dropbox;

struct dropbox *dropbox_new(struct ctrl *c, struct error **err);
void dropbox_free(struct dropbox *db);

/* JSON merge patch of patch onto target (changed in place): for
 * mappings key by key, null removes, anything else replaces. */
void dropbox_merge(struct ynode *target, const struct ynode *patch);

/* Where a document of a drop box goes, below the mount; ns is the
 * namespace folder it was dropped in (NULL at the top). NULL with *err if
 * the kind is unknown or a name is missing. malloc'd. */
char *dropbox_target(const char *ns, const struct ynode *doc, struct error **err);

#endif
