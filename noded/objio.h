/* objio.h: reading and writing objects through the mount, as every corral
 * process must (DESIGN.md, "Watching").
 *
 * A write is one open(O_TRUNC), the whole document, one close(): corral-fs
 * takes it at close() and answers there, EAGAIN for a stale
 * metadata.resourceVersion, EINVAL for a refused document (whose reason is
 * then read back from MOUNT/.errors into the error). objio_update() is the
 * read, change, write-back loop that retries conflicts.
 *
 * These are blocking system calls on the mount; callers run them on the
 * loop's thread, which is what the agent's few writes per event afford. */
#ifndef CORRAL_NODED_OBJIO_H
#define CORRAL_NODED_OBJIO_H

#include <stddef.h>

#include "error.h"
#include "ynode.h"

#define OBJIO_TRIES 8 /* conflicts retried by objio_update() */

/* Reads and parses path: 0, or -ENOENT when there is no such object. */
int objio_read(const char *path, struct ynode **out, struct error **err);
/* Writes obj whole to path (mount is where .errors is). */
int objio_write(const char *mount, const char *path, const struct ynode *obj, struct error **err);

/* Changes obj in place. Returns 0 to write it back, 1 when there is
 * nothing to write, negative (with *err) to give up. */
typedef int (*objio_change_fn)(void *data, struct ynode *obj, struct error **err);
/* Reads path, calls fn, writes the result with the resourceVersion it was
 * read with; on a conflict reads again and calls fn again, up to tries
 * times. Returns 0 (written), 1 (fn said nothing to write), or negative
 * with *err set: -ENOENT when there is no such object (any more). */
int objio_update(const char *mount, const char *path, objio_change_fn fn, void *data,
		 unsigned tries, struct error **err);

/* The object files of a folder (names_object_file()), sorted;
 * *names is a malloc'd array of malloc'd names. -ENOENT if no folder. */
int objio_list(const char *dir, char ***names, size_t *n, struct error **err);
void objio_list_free(char **names, size_t n);

#endif
