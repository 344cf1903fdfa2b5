/* events.h: v1 Event objects for what the controllers do, and their expiry.
 *
 * An event is written (at low priority, after every other write) as
 * namespaces/NS/events/<object>.<hex nanoseconds>.yaml, with the involved
 * object, reason, message, type, source, count and first/last timestamps,
 * so that `ls -t namespaces/NS/events | head` tells what happened. The same
 * event (object, type, reason and message) again within ten minutes
 * updates the first one's count and lastTimestamp instead, as Kubernetes'
 * event correlator does.
 *
 * Every Event in the cluster (whoever wrote it) is deleted once its last
 * timestamp is older than the TTL (kube-apiserver's --event-ttl, an hour);
 * one timer waits for the earliest such deadline. Loop thread only. */
#ifndef CORRAL_CTRL_EVENTS_H
#define CORRAL_CTRL_EVENTS_H

#include <stdint.h>

#include "informer.h"
#include "write.h"
#include "ynode.h"

#define EVENTS_AGGREGATE_S 600

struct events;

/* host names the reporting instance. inf: an informer of "events" to
 * expire (may be NULL: no expiry); ttl_ms 0 keeps events forever. */
struct events *events_new(struct loop *loop, struct writer *w, struct informer *inf,
			  const char *host, uint64_t ttl_ms);
void events_free(struct events *ev);
/* Expires the Events of inf (an informer of "events", not started yet)
 * from now on; nothing if ttl_ms is 0 or it expires some already. */
void events_expire(struct events *ev, struct informer *inf);

/* An event about obj (its apiVersion, kind, namespace, name and uid);
 * type "Normal" or "Warning". Objects without a namespace report into
 * "default". */
void events_record(struct events *ev, const char *component, const struct ynode *obj,
		   const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The same, for an object known only by reference (uid may be NULL). */
void events_record_ref(struct events *ev, const char *component, const char *api_version,
		       const char *kind, const char *ns, const char *name, const char *uid,
		       const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 10, 11)));

/* The time an Event last happened: lastTimestamp, else eventTime or
 * series.lastObservedTime, else creationTimestamp; -1 if none parses. */
int64_t events_last_time(const struct ynode *event);

#endif
