/* history.h: the git history of the declared cluster.
 *
 * A writer thread turns the store's outbox into commits on refs/heads/main
 * of a bare repository: one commit per change when it keeps up, several
 * changes per commit when they come faster. Each commit's message ends with
 * a trailer "Corral-Revision: N", the last store revision it holds, so that
 * a restart resumes exactly where the history stopped (an entry is removed
 * from the outbox only after its commit exists). The repository is repacked
 * with the git CLI as it grows. */
#ifndef CORRAL_FS_HISTORY_H
#define CORRAL_FS_HISTORY_H

#include <stdint.h>

#include "error.h"
#include "store.h"

struct history;

int history_open(const char *gitdir, struct store *store, struct history **out, struct error **err);
/* Starts the writer thread. */
int history_start(struct history *h, struct error **err);
/* Stops the writer (after the commit in progress) and frees h. */
void history_close(struct history *h);
/* The revision the history has reached (from HEAD's trailer). */
uint64_t history_revision(struct history *h);
/* Calls fn for every object file in HEAD's tree. */
int history_foreach_head(struct history *h,
			 int (*fn)(void *data, const char *path, const char *yaml, size_t len),
			 void *data, struct error **err);

#endif
