/* tree.h: the in-memory tree of inodes that corral-fs serves.
 *
 * The tree mirrors the live store (objects) and holds what the store never
 * sees (folders, scratch files, symlinks). Every node has an inode number
 * that is never reused, so the kernel can cache entries and attributes for
 * long and a stale handle can never reach another file. One rwlock guards
 * the whole tree; callers hold it only for memory work, never across I/O.
 * Nodes stay allocated while the kernel knows them (lookup count > 0), even
 * after they leave the tree. */
#ifndef CORRAL_FS_TREE_H
#define CORRAL_FS_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "kinds.h"

enum node_type {
	NODE_ROOT,    /* the mount's top */
	NODE_NSROOT,  /* namespaces/: namespace folders and Namespace objects */
	NODE_NS,      /* namespaces/<ns>/ */
	NODE_KIND,    /* a kind folder: pods/, nodes/, ... */
	NODE_OBJECT,  /* <name>.yaml: an object in the store */
	NODE_SCRATCH, /* any other file: kept in memory, never committed */
	NODE_SYMLINK, /* a symlink (emacs locks); .git */
	NODE_ERRORS,  /* .errors */
	NODE_LOGS,    /* namespaces/<ns>/logs/: read-only */
	NODE_LOGPOD,  /* logs/<pod>/ */
	NODE_LOGFILE, /* logs/<pod>/<container>.log: a container's output */
};

/* Immutable, reference-counted bytes: readers keep a snapshot while the
 * node moves on. */
struct blob {
	atomic_int ref;
	size_t len;
	char data[];
};

struct blob *blob_new(const char *data, size_t len);
struct blob *blob_ref(struct blob *b);
void blob_unref(struct blob *b);

struct node {
	uint64_t ino;
	enum node_type type;
	struct node *parent; /* NULL once unlinked */
	char *name;
	const struct kind_info *kind; /* NODE_KIND, NODE_OBJECT */
	char *ns;		      /* namespace, for nodes inside one */
	mode_t mode;		      /* type bits and permissions */
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
	uint64_t nlookup; /* the kernel's references */
	int open_count;	  /* open handles */

	/* Objects: the stored text (NULL: not loaded yet) and revision. */
	struct blob *content;
	size_t size;
	uint64_t rv;
	bool pending; /* created, not yet committed */

	/* Scratch files and symlinks: their bytes. */
	char *data;
	size_t cap;
	char *moved_from; /* scratch: the key of an object renamed to it */
	bool drop;	  /* scratch: a drop box file, checked when closed */
	char *source;	  /* NODE_LOGPOD, NODE_LOGFILE: the folder or file on disk */
	void *writers;	  /* objects: the open handles that write them (ops.c's) */
	void *readers;	  /* objects: the handles counted in cached (ops.c's) */
	int cached;	  /* objects: open readers served through the page cache
			     that a change still waits for */
	int changing;	  /* objects: writers and changes under way (keep new
			     readers off the page cache; see ops.h) */

	/* Folder children, in insertion order. */
	struct node *first, *last, *prev, *next;
	size_t nkids;
	struct node *ino_next;	/* hash chain by ino */
	struct node *name_next; /* hash chain by (parent, name) */
};

struct tree;

struct tree *tree_new(void);
void tree_free(struct tree *t);
pthread_rwlock_t *tree_lock(struct tree *t);

/* All below need the lock (read for lookups, write for changes). */
struct node *tree_root(struct tree *t);
struct node *tree_by_ino(struct tree *t, uint64_t ino);
struct node *tree_child(struct tree *t, struct node *dir, const char *name);
/* Makes a node under dir (which must not hold name). */
struct node *tree_add(struct tree *t, struct node *dir, const char *name, enum node_type type,
		      mode_t mode);
/* Takes n (and, for a folder, all it holds) out of its folder; frees what
 * the kernel no longer knows. */
void tree_unlink(struct tree *t, struct node *n);
/* Moves n to dir/name (which must be free). */
void tree_move(struct tree *t, struct node *n, struct node *dir, const char *name);
/* The kernel forgot n nlookup times; frees an unlinked node at zero. */
void tree_forget(struct tree *t, struct node *n, uint64_t nlookup);
/* The store key of an object node ("namespaces/dev/pods/web"), malloc'd. */
char *tree_object_key(const struct node *n);
/* The store key of the file name in folder dir, which need not exist yet. */
char *tree_key(const struct node *dir, const char *name);
size_t tree_count(struct tree *t);

#endif
