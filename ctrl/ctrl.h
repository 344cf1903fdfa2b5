/* ctrl.h: corral-ctrl's context: the configuration, the writer, the shared
 * informers, and the controllers that run while this process leads.
 *
 * The controllers are the rows of ctrl_controllers[] (ctrl.c): a name for
 * --controllers, a start and a stop. Adding one is one row there plus its
 * own file. ctrl_start() starts the rows that --controllers leaves on and
 * then the informers (every object is listed before it returns);
 * ctrl_stop() lets the writes in flight finish and frees them all, so that
 * a process that loses the lease stops acting and can lead again later. */
#ifndef CORRAL_CTRL_CTRL_H
#define CORRAL_CTRL_CTRL_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "informer.h"
#include "loop.h"
#include "ynode.h"

struct writer;
struct events;
struct keymap;
struct owners;
struct ctrl;

/* [ctrl] in corral.conf, and the flags of the same names. */
struct ctrl_config {
	char *mount;
	char *log_level;
	bool leader_elect;
	uint64_t lease_duration_ms;
	uint64_t renew_deadline_ms;
	uint64_t retry_period_ms;
	char *lease_name;
	char *lease_namespace;
	char *lease_lock;  /* "leases", the only kind of lock */
	char *controllers; /* "*", or names, "-name" to leave one out */
	uint64_t event_ttl_ms;
	int writers;		       /* threads writing through the mount */
	int burst_replicas;	       /* most pods one sync creates or deletes */
	uint64_t status_interval_ms;   /* least time between two status-only
					* writes of one Deployment */
	uint64_t resync_ms;	       /* relist every period; 0: never */
	char *service_cidr;	       /* ClusterIPs come from it ([cluster]) */
	char *node_port_range;	       /* "30000-32767" ([cluster]) */
	int pod_gc_threshold;	       /* terminated pods podgc keeps; 0: all */
	uint64_t pod_gc_quarantine_ms; /* how long a gone node stays missing first */
	/* the node lifecycle controller (nodelifecycle.h) */
	uint64_t node_monitor_grace_ms;
	double node_eviction_rate;	     /* nodes a second */
	double secondary_node_eviction_rate; /* in a large partially disrupted zone */
	double unhealthy_zone_threshold;     /* fraction of a zone's nodes not ready */
	int large_cluster_size_threshold;    /* nodes */
	char *root_ca_file;		     /* the cluster CA's certificate (PEM) for
					      * kube-root-ca.crt; "": none */
	uint64_t hpa_sync_ms;		     /* horizontal-pod-autoscaler-sync-period */
	uint64_t hpa_downscale_ms;	     /* -downscale-stabilization */
	char *hpa_tolerance;		     /* -tolerance, a fraction ("0.1") */
};

struct ctrl {
	struct loop *loop;
	const struct ctrl_config *cfg;
	const char *mount;
	char *identity; /* host_uuid, for leases and events */
	char *host;
	struct writer *writer; /* while running */
	struct events *events;
	struct keymap *informers;     /* plural -> struct informer */
	struct keymap *owner_indexes; /* plural -> struct owners */
	void **state;		      /* per row of ctrl_controllers, while running */
	bool running;
};

/* One controller: a row of ctrl_controllers[]. */
struct ctrl_controller {
	const char *name; /* for --controllers */
	/* Makes the controller (*state: what stop gets back) and adds its
	 * handlers to the shared informers; negative with *err if it cannot
	 * run, and ctrl_start() fails. */
	int (*start)(struct ctrl *c, void **state, struct error **err);
	/* Frees what start made (state may be NULL); the informers are gone
	 * by then unless `listed`. NULL: nothing to free. */
	void (*stop)(void *state);
	/* Started after every informer has listed its kind, and stopped
	 * before the informers (the drop boxes, which read the tree). */
	bool listed;
};

/* Every controller, in the order --help names them. */
extern const struct ctrl_controller ctrl_controllers[];
extern const size_t ctrl_ncontrollers;

/* The names --controllers knows, ", "-separated, from the table. */
const char *ctrl_names(void);

/* Whether the controller name is on (cfg->controllers). */
bool ctrl_enabled(const struct ctrl *c, const char *name);
/* Checks a --controllers list. */
int ctrl_check_controllers(const char *list, struct error **err);
/* The shared informer of a kind folder ("pods"), made on first use. */
struct informer *ctrl_informer(struct ctrl *c, const char *plural);
/* The shared index by controller of that informer (owners.h). */
struct owners *ctrl_owners(struct ctrl *c, const char *plural);

/* A writer_mutate_fn that sets the object's status to arg (a ynode);
 * nothing to write when it is that already. */
int ctrl_mutate_status(struct ynode *obj, void *arg, struct error **err);
/* ynode_free() for a void * argument. */
void ctrl_ynode_free(void *p);

int ctrl_start(struct ctrl *c, struct error **err);
void ctrl_stop(struct ctrl *c);

#endif
