/* expect.h: what a controller waits to see before it syncs a key again
 * (client-go's ControllerExpectations, by resourceVersion).
 *
 * A controller that writes on behalf of an owner ("dev/web") notes the
 * write when it submits it and notes the result when it is done: the
 * object's key in an informer and the least resourceVersion that shows the
 * write (write.h), or that the object must be gone. The owner is ready to sync again once
 * no write is in flight and each informer shows every such object at that
 * version or later (or gone). Until then a sync would read a cache older
 * than its own writes and do them again.
 *
 * A result that the informer never shows (the object was deleted before it
 * was read) is given up after EXPECT_TTL_MS. Loop thread only. */
#ifndef CORRAL_CTRL_EXPECT_H
#define CORRAL_CTRL_EXPECT_H

#include <stdbool.h>
#include <stdint.h>

#include "informer.h"

#define EXPECT_TTL_MS 30000

struct expect;

struct expect *expect_new(void);
void expect_free(struct expect *e);

/* A write for owner is submitted. */
void expect_write(struct expect *e, const char *owner);
/* It is done. ok false (it failed): nothing to wait for. Otherwise inf
 * must show key at resourceVersion min_rv or later, or not at all when
 * gone. */
void expect_written(struct expect *e, const char *owner, bool ok, const struct informer *inf,
		    const char *key, unsigned long long min_rv, bool gone, uint64_t now_ms);
/* Whether owner may sync now. When not, and only waiting for informers,
 * *recheck_ms (may be NULL) gets when the oldest wait expires. */
bool expect_ready(struct expect *e, const char *owner, uint64_t now_ms, uint64_t *recheck_ms);
/* Writes still in flight for owner. */
unsigned expect_in_flight(const struct expect *e, const char *owner);
void expect_forget(struct expect *e, const char *owner);

#endif
