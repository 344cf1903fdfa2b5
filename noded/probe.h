/* probe.h: a container's liveness and readiness probes, as the kubelet runs
 * them: exec (the command inside the container's namespaces, by
 * nsenter(1); success is exit 0), httpGet (a GET to the pod's address;
 * success is a status of 200-399), tcpSocket (a connection that opens), each
 * after initialDelaySeconds, every periodSeconds, failing after
 * timeoutSeconds, and counted against successThreshold and
 * failureThreshold. All of it on the agent's loop: nothing blocks.
 *
 * Readiness starts false when there is a readiness probe (true without
 * one); a change calls changed(). failureThreshold liveness failures in a
 * row call unhealthy(), which restarts the container. */
#ifndef CORRAL_NODED_PROBE_H
#define CORRAL_NODED_PROBE_H

#include <stdbool.h>

#include "ynode.h"

struct loop;
struct probes;

struct probes_hooks {
	void (*changed)(void *data);
	void (*unhealthy)(void *data, const char *why);
	void *data;
};

struct probes *probes_new(struct loop *loop, const struct probes_hooks *h);
void probes_free(struct probes *pr); /* NULL is fine */
/* Starts the container's probes (spec: its item of spec.containers) for a
 * run whose shim wrote the nspawn pid to piddir/pid. */
void probes_start(struct probes *pr, const struct ynode *spec, const char *pod_ip,
		  const char *piddir);
void probes_stop(struct probes *pr);
bool probes_ready(const struct probes *pr);

#endif
