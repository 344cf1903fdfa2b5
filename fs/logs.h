/* logs.h: the read-only view of containers' output under
 * namespaces/<ns>/logs/<pod>/<container>.log: the file
 * <log_dir>/<ns>_<pod>_<uid>/<container>/<restarts>.log of the newest pod
 * instance and the newest restart. The folders are read from the disk
 * when listed or looked up, never under the tree lock; logs never enter
 * the store. A pod with no logs on this machine whose node serves them is
 * shown too, read from its node (remotelogs.h). */
#ifndef CORRAL_FS_LOGS_H
#define CORRAL_FS_LOGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "remotelogs.h"
#include "tree.h"

/* Whether n is part of a logs/ view. */
bool logs_node(const struct node *n);
/* Brings the children of the logs folder (pods) or pod folder (containers)
 * ino in line with the disk, and with the remote logs of rl (NULL: none);
 * does nothing for other nodes. Takes the tree lock itself: call it
 * without. */
void logs_refresh(struct tree *t, const char *log_dir, struct remotelogs *rl, uint64_t ino);
/* The URL of the container log ino when it is on another host (malloc'd),
 * else NULL. Takes the lock itself. */
char *logs_remote_url(struct tree *t, uint64_t ino);
/* Sets st's size and times from the disk for the container log ino. Takes
 * the lock itself. */
void logs_file_stat(struct tree *t, uint64_t ino, struct stat *st);

#endif
