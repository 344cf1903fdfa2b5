/* errors.h: the ring of the most recent rejected writes that corral-fs
 * shows read-only as /cluster/.errors, one line each:
 *   2026-01-02T03:04:05Z namespaces/dev/pods/web.yaml: Pod "web" is invalid: ...
 * Thread-safe: writes are refused on many workers at once. It never logs
 * anything but the rejection it is given. */
#ifndef CORRAL_FS_ERRORS_H
#define CORRAL_FS_ERRORS_H

#include <stddef.h>

#include "error.h"

#define ERRORS_MAX 100 /* lines kept; the oldest goes first */

struct errors;

struct errors *errors_new(void);
void errors_free(struct errors *x);
/* Records that the write of path (below the mount) was refused because of
 * e (NULL: "rejected"); returns the bytes the ring now holds, .errors'
 * size. */
size_t errors_add(struct errors *x, const char *path, const struct error *e);
/* The ring's text, oldest line first (malloc'd, NUL-terminated). */
char *errors_text(struct errors *x, size_t *len);

#endif
