/* fs.h: corral-fs's context, shared by the files that serve the mount
 * (ops.c: the FUSE handlers; namespace.c: namespace lifecycle). Nothing
 * outside fs/ includes it, and nothing in it does I/O under the tree
 * lock. */
#ifndef CORRAL_FS_FS_H
#define CORRAL_FS_FS_H

#include "ops.h"

#include <stdatomic.h>
#include <sys/types.h>

#include "admission.h"
#include "errors.h"
#include "notifier.h"
#include "tree.h"
#include "workpool.h"
#include "write.h"

struct fs {
	struct tree *tree;
	struct store *store;
	struct fuse_session *se;
	char *gitdir;
	char *log_dir;		       /* where containers' output is: /var/log/pods */
	struct remotelogs *remotelogs; /* logs on other hosts; NULL: not shown */
	struct servicerange range;     /* Services' addresses */
	struct admission *admission;   /* the write path's hooks */
	long long toleration_s[2];     /* DefaultTolerationSeconds: not-ready, unreachable */
	struct errors *errors;	       /* .errors */
	uint64_t errors_ino;
	struct notifier *notifier; /* invalidations outside the request */
	struct workpool *workers;  /* requests that write the store: a job
				    * replies to its request itself */
	struct remote *remote;	   /* other writers' changes (remote.h) */
	atomic_size_t scratch_bytes;
	char hostname[256];

	/* A change of an object waits for its page cache readers to close:
	 * quiet_gen counts their last closes, under quiet_lock. */
	pthread_mutex_t quiet_lock;
	pthread_cond_t quiet_cond;
	unsigned long quiet_gen;

	pthread_mutex_t author_lock;
	char *author; /* the last writer's name, and uid */
	uid_t author_uid;
};

#define FS_LOCK_R(fs) pthread_rwlock_rdlock(tree_lock((fs)->tree))
#define FS_LOCK_W(fs) pthread_rwlock_wrlock(tree_lock((fs)->tree))
#define FS_UNLOCK(fs) pthread_rwlock_unlock(tree_lock((fs)->tree))

/* Takes the tree lock for writing and looks ino up afresh: after work
 * done without the lock (the store, the disk), the node may have gone
 * (NULL) or moved meanwhile. The caller unlocks, found or not. */
struct node *fs__relock(struct fs *fs, uint64_t ino);

/* What a change of object ino's text does once it may: sets the node's
 * text (taking the tree lock itself). Returns 0 or a positive errno. */
typedef int fs__text_change(struct fs *fs, uint64_t ino, void *data);

/* Every change of an object's text goes through here (ops.h, Caching): a
 * writer's commit, a truncation by path, a rename over it, an rm that
 * leaves it being deleted, a namespace turning Terminating, another
 * host's change (remote.c). Unless held (a writer's handle, counted from
 * its open, where it waited), it keeps new readers off the page cache and
 * waits (up to FS_QUIET_WAIT_MS) until those reading through it have
 * closed; then change runs; then the kernel's copy of ino is invalidated,
 * before the request is answered and so before its inotify event; then
 * readers may use the page cache again. From a worker or a thread of its
 * own, never the loop, and without the tree lock. Returns change's
 * result. */
int fs__replace_text(struct fs *fs, uint64_t ino, bool held, fs__text_change *change, void *data);

/* "name <name@host>" of the request's user, for the history. */
char *fs__author(fuse_req_t req, struct fs *fs);
/* Records a refused write of path in .errors. */
void fs__reject(struct fs *fs, const char *path, const struct error *e);
/* The errno a refusal gives the writer. */
int fs__errno(const struct error *e);

/* Fills e for n and counts the kernel's new reference; needs the lock. */
void fs__entry(struct node *n, struct fuse_entry_param *e);
mode_t fs__object_mode(const struct kind_info *k);
/* Sets an object node's text after a write; write lock. Takes b. */
void fs__set_content(struct node *n, struct blob *b, uint64_t rv);

/* The write path (write.h) with this mount's store and hooks. */
int fs__write(struct fs *fs, const struct write_target *t, const char *text, size_t len,
	      const char *author, struct blob **out, uint64_t *rv, struct error **err);
int fs__delete(struct fs *fs, const struct write_target *t, const char *author, struct error **err);

#endif
