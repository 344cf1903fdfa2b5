/* snapshot.h: the declared cluster, as the history holds it, read from the
 * live store at one revision: the first commit of a history that begins
 * after its cluster (history.c). Reads the store; writes nothing. */
#ifndef CORRAL_FS_SNAPSHOT_H
#define CORRAL_FS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "store.h"

/* The history's file of every declared object (object_declared()) as the
 * store was at revision *rev, as outbox entries of that revision, in path
 * order; free them with store_outbox_free(). Objects that are not the
 * history's, or have no place in the tree, are left out. */
int snapshot_declared(struct store *s, struct store_outbox_entry **out, size_t *n, uint64_t *rev,
		      struct error **err);

#endif
