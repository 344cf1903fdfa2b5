/* podstatus.h: a pod's status as the kubelet writes it, built from what the
 * runtime reports about the pod's containers.
 *
 * The builder starts from the stored status, so that what others wrote
 * there (nominatedNodeName, conditions of other types) stays, and keeps the
 * stored times of whatever did not change (startTime, a condition's
 * lastTransitionTime while its status holds, a container's startedAt while
 * it is the same container): building twice from the same report gives the
 * same status, and the agent writes only when something changed. Pure, no
 * I/O: the caller passes the time. */
#ifndef CORRAL_NODED_PODSTATUS_H
#define CORRAL_NODED_PODSTATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ynode.h"

enum pod_container_state {
	POD_CONTAINER_WAITING,
	POD_CONTAINER_RUNNING,
	POD_CONTAINER_TERMINATED,
};

/* What the runtime knows of one container. Strings are malloc'd. */
struct pod_container_report {
	char *name;
	char *image;
	char *image_id;	    /* NULL or "": not pulled yet */
	char *container_id; /* NULL: not created yet */
	enum pod_container_state state;
	char *reason;	    /* waiting, terminated; may be NULL */
	char *message;	    /* may be NULL */
	time_t started_at;  /* running, terminated; 0: at the build's now */
	time_t finished_at; /* terminated; 0: at the build's now */
	int exit_code;	    /* terminated */
	bool ready;
	bool started;
	int restart_count;
	/* lastState.terminated, when the container ended before */
	bool has_last;
	int last_exit_code;
	char *last_reason;
	time_t last_started_at, last_finished_at;
};

struct pod_report {
	bool sandbox_ready; /* the pod has its network: report its IP */
	/* The runtime is setting the pod up off the loop and will say when
	 * that is over: the status need not be written before then. */
	bool settling;
	/* The pod is over (evicted): phase Failed with this reason and
	 * message, whatever its containers say. */
	char *pod_reason;
	char *pod_message;
	struct pod_container_report *init;
	size_t ninit;
	struct pod_container_report *containers;
	size_t ncontainers;
};

void pod_report_clear(struct pod_report *r);
/* Fills r with one report per container (and init container) of pod's
 * spec, each with its name and image and the given state. */
void pod_report_from_spec(struct pod_report *r, const struct ynode *pod);

/* The phase the kubelet derives: Pending until the init containers have
 * all succeeded and no container waits for its first start; then Running
 * while one runs (or all stopped but restartPolicy restarts them);
 * Succeeded when all exited 0, Failed when one failed and none restarts. */
const char *podstatus_phase(const struct pod_report *r, const char *restart_policy);
/* Guaranteed, Burstable or BestEffort, from the containers' resources. */
const char *podstatus_qos_class(const struct ynode *pod);

/* The status to store for pod (whose .status is the stored one). pod_ip
 * may be NULL (no address yet); host_ip is the node's. */
struct ynode *podstatus_build(const struct ynode *pod, const struct pod_report *r,
			      const char *host_ip, const char *pod_ip, time_t now);

#endif
