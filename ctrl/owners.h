/* owners.h: an index of one informer's objects by their controller: which
 * objects a controller uid owns, and which objects of a namespace have no
 * controller at all. A ReplicaSet then looks at its own pods and the
 * namespace's orphans instead of every pod of the namespace, which keeps a
 * sync's cost independent of how many other sets share the namespace.
 *
 * The index listens to its informer; made before a controller adds its own
 * handlers, it is up to date when they run. Loop thread only. */
#ifndef CORRAL_CTRL_OWNERS_H
#define CORRAL_CTRL_OWNERS_H

#include "informer.h"

struct owners;

/* Adds handlers to inf; free the index before the informer. */
struct owners *owners_new(struct informer *inf);
void owners_free(struct owners *o);

/* cb for each object whose controller reference has uid, until cb
 * returns non-zero (returned). */
int owners_foreach_owned(const struct owners *o, const char *uid, informer_visit_cb cb, void *data);
/* cb for each object of namespace ns (NULL or "": cluster-scoped) with no
 * controller reference. */
int owners_foreach_orphan(const struct owners *o, const char *ns, informer_visit_cb cb, void *data);

#endif
