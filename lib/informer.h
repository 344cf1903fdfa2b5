/* informer.h: a cache of one kind of object, kept in step with the mount.
 *
 * The informer lists <mount>/namespaces/<ns>/<plural>/ (namespaced kinds) or
 * <mount>/<plural>/ (cluster-scoped ones), parses every <name>.yaml, then
 * follows inotify: files closed after writing or renamed into place, files
 * deleted or renamed away, namespaces appearing and disappearing. It relists
 * when the inotify queue overflows and, if asked, on a resync period. A name
 * that does not end in ".yaml" or starts with '.' is a scratch file, not an
 * object; a file that does not parse is logged and skipped, and the cache
 * keeps the last version of it that did.
 *
 * Keys are "ns/name" for namespaced kinds and "name" for cluster-scoped ones.
 * Objects belong to the cache: a handler that wants to keep one clones it.
 * An informer with a transform keeps no trees at all: only what the
 * transform draws from each object (a compact struct, say), which its
 * item handlers and informer_get_item() see.
 * The cache changes before handlers hear of it, so informer_get() inside a
 * handler sees the new state. Handlers must not free the informer or call
 * informer_resync(). Single-threaded: the loop's thread only. */
#ifndef CORRAL_INFORMER_H
#define CORRAL_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "loop.h"
#include "workqueue.h"
#include "ynode.h"

struct informer;

/* Any of these may be NULL. */
struct informer_handlers {
	void (*on_add)(void *data, const char *key, const struct ynode *obj);
	void (*on_update)(void *data, const char *key, const struct ynode *old,
			  const struct ynode *obj);
	void (*on_delete)(void *data, const char *key, const struct ynode *old);
};

/* With a transform (set before informer_start()), each object read is
 * handed to make(), whose result (never NULL) is kept instead of the tree;
 * the tree is freed at once. Only item handlers and queues may listen then:
 * informer_get() and informer_foreach() see nothing. An object whose bytes
 * changed is an update even if make() draws the same from it. */
struct informer_transform {
	void *(*make)(void *data, const char *key, const struct ynode *obj);
	void (*free)(void *item);
	void *data;
};

/* What item handlers hear: the items make() returned. Any may be NULL. */
struct informer_item_handlers {
	void (*on_add)(void *data, const char *key, void *item);
	void (*on_update)(void *data, const char *key, void *old, void *item);
	void (*on_delete)(void *data, const char *key, void *old);
};

/* mount: "/cluster"; plural: the folder's name, "pods", "nodes". Nothing is
 * read until informer_start(). */
struct informer *informer_new(struct loop *loop, const char *mount, const char *plural,
			      bool namespaced);
void informer_free(struct informer *inf);
void informer_freep(struct informer **inf);
#define cleanup_informer __attribute__((cleanup(informer_freep)))

/* Several sets of handlers and queues may listen to one informer. One added
 * after informer_start() first hears every cached object as an add. */
void informer_add_handlers(struct informer *inf, const struct informer_handlers *h, void *data);
/* Every add, update and delete adds the object's key to q. */
void informer_add_queue(struct informer *inf, struct workqueue *q);
void informer_set_transform(struct informer *inf, const struct informer_transform *t);
void informer_add_item_handlers(struct informer *inf, const struct informer_item_handlers *h,
				void *data);
/* Relist every period_ms (0: never, the default); changes found that way are
 * reported like any other. */
void informer_set_resync(struct informer *inf, uint64_t period_ms);
/* How long a file seen going must stay gone to be a delete (default 250 ms,
 * so that an editor's rename-away save is an update); 0: at once, for
 * observers that must see every delete before what follows it. */
void informer_set_delete_grace(struct informer *inf, uint64_t ms);

/* Watches, then lists (every object is reported as an add before this
 * returns), then follows the mount on the loop. Fails if the kind's folder
 * (or namespaces/) is missing: the cluster is not mounted there. */
int informer_start(struct informer *inf, struct error **err);
/* Relists now: re-reads every object and reports what changed. */
void informer_resync(struct informer *inf);

/* The cached object, or NULL. */
const struct ynode *informer_get(const struct informer *inf, const char *key);
/* With a transform: the cached item, or NULL. Its owner may change what
 * the informer never looks at (it only keeps and frees items). */
void *informer_get_item(const struct informer *inf, const char *key);
/* Calls cb for every cached object of namespace ns (NULL: all) in key order
 * until cb returns non-zero, which is then returned. cb must not change the
 * cache (do not run the loop from it). */
typedef int (*informer_visit_cb)(void *data, const char *key, const struct ynode *obj);
int informer_foreach(const struct informer *inf, const char *ns, informer_visit_cb cb, void *data);
size_t informer_count(const struct informer *inf);

#endif
