/* ttl.h: the TTL-after-finished controller (Kubernetes'
 * ttl-after-finished controller): a Job with spec.ttlSecondsAfterFinished
 * is deleted that many seconds after it finished (its Complete or Failed
 * condition's lastTransitionTime, else status.completionTime); its pods
 * go with it through the garbage collector. One delayed add of the Job's
 * key waits for each deadline: nothing polls. */
#ifndef CORRAL_CTRL_TTL_H
#define CORRAL_CTRL_TTL_H

#include <stdint.h>

#include "ynode.h"

struct ctrl;
struct ttlc;

struct ttlc *ttlc_new(struct ctrl *c);
void ttlc_free(struct ttlc *t);

/* When job is to be deleted (seconds since the epoch), or -1: it has no
 * TTL or has not finished. */
int64_t ttl_expires_at(const struct ynode *job);

#endif
