/* histpack.h: the history writer's new objects, written as one pack.
 *
 * An object database backend (libgit2's git_odb_backend) that keeps the
 * objects written to it in memory, serves them back, and writes them all
 * at once as one pack and its index into the repository's objects/pack
 * folder: one commit's blobs, trees and commit cost two files, where
 * loose objects cost a file (an inode, a rename) each. The pack is plain:
 * every object whole (no deltas), at zlib's fastest level; the repack
 * (git repack) compresses again. The index is written last, through a
 * rename: git and libgit2 see a pack only by its index, so a pack is
 * there whole or not at all. It never moves a ref: the caller does, once
 * histpack_write() has returned. */
#ifndef CORRAL_FS_HISTPACK_H
#define CORRAL_FS_HISTPACK_H

#include <git2.h>
#include <stddef.h>

#include "error.h"

struct histpack;

/* A backend for the repository whose objects folder is objects_dir. The
 * odb it is added to owns it (frees it with itself). */
struct histpack *histpack_new(const char *objects_dir);
git_odb_backend *histpack_backend(struct histpack *p);

/* Keeps one object (hashed here; *id set) without a look in the rest of
 * the object database. */
void histpack_add(struct histpack *p, git_oid *id, git_object_t type, const void *data, size_t len);
/* How many objects are kept. */
size_t histpack_count(const struct histpack *p);
/* Writes every kept object as one pack and forgets them; nothing when none
 * is kept. On failure nothing is left in objects/pack but a temporary
 * file, and the objects are forgotten all the same. */
int histpack_write(struct histpack *p, struct error **err);
/* Forgets the kept objects (a commit given up). */
void histpack_reset(struct histpack *p);

#endif
