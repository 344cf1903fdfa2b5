/* remote.h: changes that other corral-fs made to a shared store (etcd),
 * shown on this mount as if they had been written through it.
 *
 * FUSE raises no inotify event for a change the kernel did not see, and
 * every informer, controller and agent waits on inotify. So each remote
 * change is applied to the tree and then replayed through this mount by
 * the store's watch thread, with the system calls a local writer would
 * make: open(O_WRONLY) and close of the object's file (IN_CLOSE_WRITE) for
 * a create or an update, unlink (IN_DELETE) for a delete, mkdir of the
 * namespace's folder (IN_CREATE) for a new Namespace. The handlers know
 * the replay by the calling thread (remote_replaying()) and neither
 * validate nor store it: it is stored already. Cost: a handful of FUSE
 * round trips per remote change (lookup, open, flush, release), served
 * by this daemon, and one watch thread that replays changes one at a time
 * in revision order. */
#ifndef CORRAL_FS_REMOTE_H
#define CORRAL_FS_REMOTE_H

#include "fs.h"

/* Follows the store's other writers (nothing to do for LMDB); mountpoint
 * is where the replays go. */
int remote_start(struct fs *fs, const char *mountpoint, struct error **err);
/* Whether req is a replay of the watch thread's. */
bool remote_replaying(struct fs *fs, fuse_req_t req);
/* mkdir of a replayed new namespace (in folder parent): its folder
 * appears, nothing is stored. 0 with the entry in e, or an errno. */
int remote_mkdir(struct fs *fs, fuse_ino_t parent, const char *name, struct fuse_entry_param *e);
void remote_stop(struct fs *fs);

#endif
