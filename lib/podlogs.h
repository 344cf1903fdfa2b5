/* podlogs.h: the layout of containers' output on a node, shared by the
 * node agent that writes and serves it and by corral-fs that shows it:
 * <log_dir>/<ns>_<pod>_<uid>/<container>/<restarts>.log (Kubernetes'
 * /var/log/pods). Nothing here reads outside the folder it is given. */
#ifndef CORRAL_PODLOGS_H
#define CORRAL_PODLOGS_H

#include <dirent.h>
#include <stdbool.h>
#include <time.h>

/* Whether the folder name dirname is a log folder of a pod of namespace
 * ns ("<ns>_<pod>_<uid>": names and namespaces hold no '_'); *pod (may be
 * NULL) gets the pod's name, malloc'd. */
bool podlogs_instance(const char *dirname, const char *ns, char **pod);
/* Whether pod instance folder a, modified at ma, is newer than b,
 * modified at mb (the pod's log folder to show or serve): the later
 * modification, to the nanosecond; on a tie, the name that sorts last, so
 * that the choice never depends on the order of readdir(). b NULL: none
 * yet, a wins. */
bool podlogs_newer(const char *a, const struct timespec *ma, const char *b,
		   const struct timespec *mb);
/* The restart count of the newest "<n>.log" in the container log folder
 * d (read from its start), or -1 when it holds none. */
long podlogs_newest_restart(DIR *d);

#endif
