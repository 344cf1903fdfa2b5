/* backoff.h: the kubelet's restart back-off for a container that ended:
 * the first restart at once, then 10 s doubling up to 5 min, starting over
 * after a run of 10 minutes or more. Pure. */
#ifndef CORRAL_NODED_BACKOFF_H
#define CORRAL_NODED_BACKOFF_H

#include <stdint.h>

#define BACKOFF_BASE_MS 10000
#define BACKOFF_MAX_MS	300000
#define BACKOFF_RESET_S 600

/* The wait before restarting a container whose run lasted ran_s seconds;
 * *state_ms is the container's back-off (0 at first) and moves on. */
static inline uint64_t backoff_next(uint64_t *state_ms, long long ran_s)
{
	if (ran_s >= BACKOFF_RESET_S)
		*state_ms = 0;
	uint64_t delay = *state_ms;
	*state_ms = *state_ms ? *state_ms * 2 : BACKOFF_BASE_MS;
	if (*state_ms > BACKOFF_MAX_MS)
		*state_ms = BACKOFF_MAX_MS;
	return delay;
}

#endif
