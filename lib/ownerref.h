/* ownerref.h: metadata.ownerReferences, and the controller reference among
 * them (the one with controller: true, at most one per object), which says
 * who manages an object: the garbage collector follows every reference,
 * controllers adopt and release by the controller reference, and an object
 * with one is kept out of the history. */
#ifndef CORRAL_OWNERREF_H
#define CORRAL_OWNERREF_H

#include <stdbool.h>

#include "ynode.h"

/* The ownerReferences entry with controller: true, or NULL. */
const struct ynode *ownerref_controller(const struct ynode *o);
/* An ownerReferences entry for owner, with controller and
 * blockOwnerDeletion set when controller is true. */
struct ynode *ownerref_new(const char *api_version, const char *kind, const char *name,
			   const char *uid, bool controller);
/* Adds ref (taken) to o's ownerReferences. */
void ownerref_add(struct ynode *o, struct ynode *ref);
/* Removes o's ownerReferences whose uid is uid (the list too when it is
 * left empty); returns how many. */
int ownerref_remove(struct ynode *o, const char *uid);

#endif
