/* notifier.h: corral-fs's notifier thread, which tells the kernel to
 * drop cached entries and inodes that a handler cannot invalidate itself:
 * the kernel holds the folder's lock during the request that causes them
 * (a namespace's folder and its Namespace file leave together), and
 * fuse_lowlevel_notify_inval_entry() from inside it would deadlock; an
 * inode's pages cannot be dropped from the session loop while a read of
 * them waits for that loop. */
#ifndef CORRAL_FS_NOTIFIER_H
#define CORRAL_FS_NOTIFIER_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdint.h>

#include "error.h"

struct notifier;

struct notifier *notifier_new(void);
/* Starts the thread once the session exists. */
int notifier_start(struct notifier *x, struct fuse_session *se, struct error **err);
/* Queues the invalidation of the entry parent/name; never blocks on the
 * kernel. */
void notifier_inval_entry(struct notifier *x, uint64_t parent, const char *name);
/* Queues the invalidation of inode ino's attributes and pages, for a
 * caller in the session loop: the kernel may be waiting there for a read
 * of the same inode, which only the loop would answer. */
void notifier_inval_inode(struct notifier *x, uint64_t ino);
/* Stops the thread (queued invalidations are dropped) and frees x. */
void notifier_free(struct notifier *x);

#endif
