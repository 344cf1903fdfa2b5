/* ops.h: corral-fs's FUSE operations (low-level API) over the tree, the
 * store and the history.
 *
 * Caching: entries and attributes are cached by the kernel for FS_TTL
 * seconds, and object contents in its page cache (keep_cache), under
 * these rules (corral-fs(8), Caching):
 * - Every change of an object's text (a writer's commit, a rename over
 *   it, a truncation by path, an rm that leaves it being deleted, a
 *   namespace turning Terminating, another host's change through the
 *   shared store, remote.c) goes through fs__replace_text (fs.h): it
 *   waits for the page cache's readers, sets the node's text, then
 *   invalidates the inode (pages and attributes) before the request is
 *   answered: a reader told by inotify reads the new version and size.
 * - The kernel shares one page cache and one i_size among all openers,
 *   and a direct write beyond i_size grows it for every reader. So a
 *   node's "changing" counts the changes under way (a writer from open
 *   to release); readers that open while it is non-zero get direct I/O
 *   and their own snapshot. Those that read through the page cache are
 *   counted in "cached", and a change first waits until it is zero
 *   (fs__wait_quiet, FS_QUIET_WAIT_MS at most, then it goes ahead and
 *   logs it); a writer's open waits in a worker, never in the loop. The
 *   readers a wait gave up on are marked (per handle) and never waited
 *   for again: one held open costs its object's writers one wait.
 * - A READ through the page cache serves the node's current text, so
 *   the cache never holds a version older than the node.
 * - No atomic O_TRUNC: open(O_TRUNC)'s truncation arrives as a setattr
 *   naming no handle, from the opening thread; it is applied to the
 *   writer that thread has just opened (and that has done nothing yet),
 *   never to another's buffer, and the reply keeps the stored size.
 * - Inode invalidations are sent without the tree lock, and from the
 *   loop's threads only through the notifier thread: the kernel may be
 *   waiting in the invalidation for a READ of a page cache page that only
 *   a loop thread answers, and every one of them could be waiting.
 *   Entry invalidations that need a folder lock the kernel holds during
 *   the current request (a namespace's folder and its Namespace file
 *   leave together) go through the notifier too.
 * Every size is checked against its limit before it is allocated.
 * .errors and container logs are read with direct I/O.
 *
 * Threads: the session loop runs on [fs] loop-threads threads (default 1,
 * at most FS_LOOP_THREADS_MAX). Each handler holds the tree lock only
 * around memory work and a handle's own lock around its buffer, so two
 * loop threads may serve any two requests at once. Two threads let one
 * serve the (asynchronous) release of a read while the other serves the
 * next open: one reader then reads about twice as many files a second.
 * But the kernel hands each request to the thread that has waited
 * longest, so a writer's requests, which come one after another, likely
 * each wake a thread that has gone cold: one writer's durable writes were
 * 7 to 10% fewer a second with two threads on these virtual machines. So
 * one is the default, and more gain nothing on two cores. Every request
 * that writes the store (a flush or fsync with something to commit,
 * rename, unlink, mkdir, rmdir, a truncation by path) is handed to one of
 * FS_WORKERS workers, which reply themselves; a truncation of a writer's
 * buffer (open(O_TRUNC), ftruncate) is memory work, done in the loop. So
 * a slow fsync never stalls readers, and concurrent writers share one
 * commit. */
#ifndef CORRAL_FS_OPS_H
#define CORRAL_FS_OPS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "error.h"
#include "servicerange.h"
#include "store.h"

#define FS_TTL		     3600.0
#define FS_WORKERS	     16	  /* requests that write the store at once */
#define FS_LOOP_THREADS_MAX  16	  /* [fs] loop-threads */
#define FS_QUIET_WAIT_MS     1000 /* how long a change waits for page cache readers */
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
/* Pods' logs on other hosts are read through rl (remotelogs.h), which the
 * caller keeps until fs_free(); NULL (the default): not shown. */
struct remotelogs;
void fs_set_remote_logs(struct fs *fs, struct remotelogs *rl);
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
