/* podevents.h: the Events corral-noded records about a pod's containers,
 * as the kubelet's recorder does (source.component kubelet, the node as
 * host, involvedObject the pod with fieldPath spec.containers{NAME}).
 * One write of a new Event through the mount per call (blocking, on the
 * loop's thread, as objio.h); a failure is logged, never fatal. */
#ifndef CORRAL_NODED_PODEVENTS_H
#define CORRAL_NODED_PODEVENTS_H

#include <stdbool.h>

#include "ynode.h"

/* type "Normal" or "Warning"; init: the container is an init container. */
void podevents_record(const char *mount, const char *node, const struct ynode *pod,
		      const char *container, bool init, const char *type, const char *reason,
		      const char *message);

#endif
