/* namespace.h: namespace lifecycle in corral-fs: `mkdir namespaces/NAME`
 * declares the Namespace NAME and makes its folder with one folder per
 * namespaced kind; rmdir (or rm of namespaces/NAME.yaml) deletes the
 * Namespace once its folder holds nothing but empty kind folders (rm -r
 * empties it first); the namespaces every cluster has cannot go. A
 * Namespace object and its folder always come and go together. */
#ifndef CORRAL_FS_NAMESPACE_H
#define CORRAL_FS_NAMESPACE_H

#include "fs.h"

/* The folder of namespace name, made with its kind folders if missing;
 * write lock. */
struct node *namespace_add(struct fs *fs, const char *name);
/* Makes the kind folders (and logs/) of a namespace folder that are
 * missing (one removed comes back when looked up); write lock. */
void namespace_ensure_kinds(struct fs *fs, struct node *nsdir);
/* mkdir NAME in folder parent, from a worker: in namespaces/, declares
 * the Namespace NAME; in a namespace's folder, brings back a kind folder.
 * Returns 0 with the new folder's entry in e, or an errno. */
int namespace_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		    struct fuse_entry_param *e);
/* Deletes namespace name (its object and its folder, which must hold
 * nothing but empty kind folders); returns 0 or an errno, the refusal
 * recorded. The caller invalidates the entry the kernel is not removing
 * itself. No lock held. */
int namespace_delete(fuse_req_t req, struct fs *fs, uint64_t nsroot_ino, const char *name);

#endif
