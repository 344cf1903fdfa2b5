/* namespace.h: namespace lifecycle in corral-fs: `mkdir namespaces/NAME`
 * declares the Namespace NAME and makes its folder with one folder per
 * namespaced kind; rmdir (or rm of namespaces/NAME.yaml, or rm -r) puts
 * the Namespace in Terminating, as Kubernetes' deletion does, and the
 * namespace controller (corral-ctrl) deletes what it holds, then the
 * Namespace; the namespaces every cluster has cannot go. A Namespace
 * object and its folder always come and go together. */
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
/* Deletes namespace name (rm -r or rmdir of its folder, rm of its file;
 * rmdir set when its folder is what goes): the Namespace goes Terminating
 * (deletionTimestamp, the kubernetes finalizer, phase Terminating) and
 * stays, folder and file, until the namespace controller has emptied it;
 * one already empty goes at once. Returns 0 or an errno, the refusal
 * recorded (the namespaces every cluster has). No lock held. */
int namespace_delete(fuse_req_t req, struct fs *fs, uint64_t nsroot_ino, const char *name,
		     bool rmdir);
/* rmdir of a namespace's kind folder: 0, always. An empty one goes (it
 * comes back when looked up); one that holds objects stays, with a new
 * inode, its objects untouched, so that rm -r of a namespace is never
 * stopped by what controllers write meanwhile. Write lock. */
int namespace_rmdir_kind(struct fs *fs, struct node *kdir);
/* The namespace's folder and file leave the tree (its object is gone from
 * the store). No lock held. */
void namespace_forget(struct fs *fs, const char *name);
/* default, kube-system, kube-public, kube-node-lease: never deleted. */
bool namespace_protected(const char *name);

#endif
