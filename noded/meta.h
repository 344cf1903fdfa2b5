/* meta.h: small pieces of the Kubernetes object model that the node agent
 * writes: RFC 3339 times and condition lists. Pure functions, no I/O. */
#ifndef CORRAL_NODED_META_H
#define CORRAL_NODED_META_H

#include <stdbool.h>
#include <time.h>

#include "ynode.h"

#define META_TIME_SIZE 32

/* "2026-11-30T09:12:04Z" (metav1.Time: UTC, to the second). */
void meta_time_format(time_t t, char buf[META_TIME_SIZE]);
/* "2026-11-30T09:12:04.000000Z" (metav1.MicroTime, as Lease.spec.renewTime). */
void meta_micro_time_format(time_t t, char buf[META_TIME_SIZE]);
/* Parses either form (and an offset "+01:00" in place of "Z"); fractions are
 * dropped. Returns 0, or -1 if s is not a time. */
int meta_time_parse(const char *s, time_t *out);

/* One condition as the agent wants it to be. */
struct meta_condition {
	const char *type;    /* "Ready" */
	const char *status;  /* "True", "False", "Unknown" */
	const char *reason;  /* may be NULL */
	const char *message; /* may be NULL */
};

enum meta_condition_flags {
	META_COND_HEARTBEAT = 1 << 0,  /* a Node's: lastHeartbeatTime = now */
	META_COND_PROBE_TIME = 1 << 1, /* a Pod's: lastProbeTime: null */
};

/* Builds the condition for status.conditions: lastTransitionTime is the one
 * of old (a condition of the same type, may be NULL) while the status holds,
 * else now. */
struct ynode *meta_condition_build(const struct meta_condition *c, const struct ynode *old,
				   const char *now, unsigned flags);
/* The item of the conditions list whose type is type, or NULL. */
const struct ynode *meta_condition_find(const struct ynode *conditions, const char *type);

#endif
