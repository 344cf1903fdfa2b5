/* throttle.h: the status-write throttle (status-interval): the least time
 * between two status-only writes of one object.
 *
 * A controller rewrites an object's status as its counts move; an object
 * a person edits by hand (a Deployment, a ReplicaSet no one owns) then
 * meets a conflict on every `sed -i` that races a status write. Writes
 * that only move counts therefore go at most once per interval; an urgent
 * one (no status yet, a new observedGeneration: a person is waiting for
 * it) goes at once, and counts as the last write. Loop thread only. */
#ifndef CORRAL_CTRL_THROTTLE_H
#define CORRAL_CTRL_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ynode.h"

struct throttle;

/* interval_ms 0: never waits. */
struct throttle *throttle_new(uint64_t interval_ms);
void throttle_free(struct throttle *t);

/* Whether the status write of key may go at now_ms (a monotonic clock,
 * loop_now_ms()): true, and now is its last write, if it is urgent or
 * the interval since the last one has passed; else false with *wait_ms
 * (may be NULL) the time until it may. */
bool throttle_take(struct throttle *t, const char *key, bool urgent, uint64_t now_ms,
		   uint64_t *wait_ms);
/* Forgets key (the object is gone). */
void throttle_forget(struct throttle *t, const char *key);

/* Whether going from the stored status to st is urgent: there is none
 * stored, or observedGeneration changes. */
bool throttle_status_urgent(const struct ynode *stored, const struct ynode *st);

#endif
