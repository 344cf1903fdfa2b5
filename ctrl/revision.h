/* revision.h: ControllerRevisions, the history of a DaemonSet's or a
 * StatefulSet's pod templates (Kubernetes' controller history).
 *
 * A revision <owner>-<hash> holds {spec: {template: T}} (with Kubernetes'
 * "$patch: replace"), the template's labels and the hash in its
 * controller-revision-hash label, an ownerReference (controller) to its
 * owner, and a number: the order in which the templates were current. A
 * template that comes back (a rollback through git) takes its old
 * revision, renumbered above the others. These are the pieces both
 * controllers share; each makes its own writes. */
#ifndef CORRAL_CTRL_REVISION_H
#define CORRAL_CTRL_REVISION_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "ynode.h"

struct owners;

#define REVISION_HASH_LABEL "controller-revision-hash"

/* An owner's revisions, sorted by number (lowest first). */
struct revision_list {
	const struct ynode **v;
	size_t n, cap;
};

/* The revisions owner_uid controls (owners index of controllerrevisions),
 * sorted by number; free list->v. */
void revision_collect(const struct owners *owned, const char *owner_uid,
		      struct revision_list *list);

/* The data of a revision of owner's spec.template (sorted keys). */
struct ynode *revision_data(const struct ynode *owner);
/* A revision's template: its data's spec.template without "$patch"
 * (malloc'd copy; an empty map if it has none). */
struct ynode *revision_template(const struct ynode *rev);

/* A new revision of owner (kind, apps/v1): named <owner>-<hash>, number,
 * data (taken). */
struct ynode *revision_new(const struct ynode *owner, const char *kind, const char *hash,
			   long long number, struct ynode *data);

/* Splits list (sorted) by data: returns the revision of the current
 * template (the highest-numbered of those with that data, or NULL), puts
 * the other ones with that data into dups (room for list->n; *ndups) and
 * leaves in list only the revisions of other templates; *max_old gets
 * their highest number (0: none). */
const struct ynode *revision_split(struct revision_list *list, const struct ynode *data,
				   const struct ynode **dups, size_t *ndups, long long *max_old);

/* A writer_mutate_fn: raises the revision's number to (intptr_t)arg. */
int revision_mutate_number(struct ynode *obj, void *arg, struct error **err);

/* The old revisions (list) to delete to keep limit of them: the lowest
 * numbers first, skipping those whose hash in_use(arg, hash) says a pod
 * still has. Fills out (room for list->n); returns how many. */
size_t revision_excess(const struct revision_list *list, long long limit,
		       bool (*in_use)(void *arg, const char *hash), void *arg,
		       const struct ynode **out);

#endif
