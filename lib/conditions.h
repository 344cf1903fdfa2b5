/* conditions.h: an object's status.conditions as Kubernetes keeps them.
 *
 * A condition is a mapping in the status's `conditions` list, one per type.
 * Setting one keeps its lastTransitionTime while its status holds (that is
 * what the time means); reason and message are absent when NULL. Reading
 * treats an absent or null reason or message as "", as Go's omitempty
 * strings do. Pure functions over ynode trees. */
#ifndef CORRAL_CONDITIONS_H
#define CORRAL_CONDITIONS_H

#include <stdbool.h>

#include "ynode.h"

/* One condition as its writer wants it to be. */
struct condition {
	const char *type;    /* "Ready" */
	const char *status;  /* "True", "False", "Unknown" */
	const char *reason;  /* may be NULL: absent */
	const char *message; /* may be NULL: absent */
};

enum condition_flags {
	CONDITION_HEARTBEAT = 1 << 0,	/* a Node's: lastHeartbeatTime = now */
	CONDITION_PROBE_TIME = 1 << 1,	/* a Pod's: lastProbeTime: null */
	CONDITION_UPDATE_TIME = 1 << 2, /* a Deployment's: lastUpdateTime = now */
	CONDITION_LAST = 1 << 3,	/* condition_set(): move it to the list's end */
};

/* The item of the conditions list (a sequence, may be NULL) whose type is
 * type, or NULL. */
struct ynode *condition_find(const struct ynode *conditions, const char *type);
/* The text of field of a condition, "" when absent or null. */
const char *condition_field(const struct ynode *cond, const char *field);
/* Whether cond's field reads value (NULL counts as ""). */
bool condition_field_is(const struct ynode *cond, const char *field, const char *value);
/* Whether cond (may be NULL) already says c: status, reason and message. */
bool condition_is(const struct ynode *cond, const struct condition *c);

/* A new condition node for c: lastTransitionTime is old's (a condition of
 * the same type, may be NULL) while the status holds, else now. */
struct ynode *condition_build(const struct condition *c, const struct ynode *old, const char *now,
			      unsigned flags);
/* Sets c in status (a mapping) .conditions, creating the list: the
 * condition of its type is replaced where it stands (at the end with
 * CONDITION_LAST) or appended. */
void condition_set(struct ynode *status, const struct condition *c, const char *now,
		   unsigned flags);
/* Removes the conditions of type from status.conditions. */
void condition_remove(struct ynode *status, const char *type);

#endif
