/* ops.h: corral-fs's FUSE operations (low-level API) over the tree, the
 * store and the history.
 *
 * Caching: entries and attributes are cached by the kernel for FS_TTL
 * seconds. Object contents are never in the page cache (direct I/O): the
 * kernel shares one page cache and one i_size among all openers, so a
 * writer's bytes or truncation would reach readers before the write is
 * taken. Without atomic O_TRUNC, open(O_TRUNC)'s truncation arrives as a
 * setattr naming no handle, from the opening thread; it is applied to the
 * writer that thread has just opened (and that has done nothing yet),
 * never to another's buffer. Every size is checked against its limit
 * before it is allocated. Caching entries and attributes is safe
 * because every change reaches the store through this mount: the kernel
 * sees each create, unlink and rename itself, and where the stored result
 * differs from what the kernel saw (a write is normalized when it is
 * committed, a rename commits the file it moves), the handler invalidates
 * the inode before it replies, so that no reader sees stale bytes after
 * the inotify event. Invalidations that would need a folder lock the
 * kernel holds during the current request (a namespace's folder and its
 * Namespace file leave together) go through a notifier thread instead.
 * .errors is read with direct I/O and no attribute cache.
 *
 * Threads: the session loop is single-threaded (on these virtual machines a
 * hand-over between threads costs more than serving a lookup or a read),
 * and every request that writes the store (a flush or fsync with something
 * to commit, rename, unlink, mkdir, rmdir, truncate) is handed to one of
 * FS_WORKERS workers, which reply themselves. So a slow fsync never stalls
 * readers, and concurrent writers share one commit. */
#ifndef CORRAL_FS_OPS_H
#define CORRAL_FS_OPS_H

#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>

#include "error.h"
#include "servicerange.h"
#include "store.h"

#define FS_TTL		     3600.0
#define FS_WORKERS	     16 /* requests that write the store at once */
#define FS_SCRATCH_FILE_MAX  (16 << 20)
#define FS_SCRATCH_TOTAL_MAX (256 << 20)

struct fs;

struct fs *fs_new(struct store *store, const char *gitdir);
/* Builds the tree from the store; on an empty store, makes the default
 * namespaces. */
int fs_load(struct fs *fs, struct error **err);
const struct fuse_lowlevel_ops *fs_ops(void);
/* Where containers' output lives (default /var/log/pods), shown read-only
 * under namespaces/<ns>/logs/. */
void fs_set_log_dir(struct fs *fs, const char *dir);
/* The range of Service addresses ([cluster] service-cidr; default
 * 10.96.0.0/16) that a Service's requested clusterIP must lie in; before
 * fs_load(). */
void fs_set_service_range(struct fs *fs, const struct servicerange *range);
/* DefaultTolerationSeconds' two durations ([fs] keys; 0: 300), before
 * fs_load(). */
void fs_set_default_tolerations(struct fs *fs, long long not_ready_s, long long unreachable_s);
/* Starts the notifier once the session exists, and the replay of other
 * writers' changes through mountpoint (remote.h) on a shared store. */
int fs_start(struct fs *fs, struct fuse_session *se, const char *mountpoint, struct error **err);
void fs_free(struct fs *fs);

#endif
