/* ctrl.h: corral-ctrl's context: the configuration, the writer, the shared
 * informers, and the controllers that run while this process leads.
 *
 * ctrl_start() makes the informers and controllers and starts them (every
 * object is listed before it returns); ctrl_stop() lets the writes in
 * flight finish and frees them all, so that a process that loses the lease
 * stops acting and can lead again later. */
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
struct rsc;
struct depc;
struct gc;
struct dropbox;
struct keymap;
struct owners;
struct svcip;
struct endpointsc;

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
	int writers;		     /* threads writing through the mount */
	int burst_replicas;	     /* most pods one sync creates or deletes */
	uint64_t status_interval_ms; /* least time between two status-only
				      * writes of one Deployment */
	uint64_t resync_ms;	     /* relist every period; 0: never */
	char *service_cidr;	     /* ClusterIPs come from it ([cluster]) */
	char *node_port_range;	     /* "30000-32767" ([cluster]) */
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
	struct rsc *rs, *rc;
	struct depc *deploy;
	struct gc *gc;
	struct dropbox *drop;
	struct svcip *svcip;
	struct endpointsc *endpoints;
	bool running;
};

/* The names --controllers knows. */
#define CTRL_NAMES                                                                                 \
	"replicaset, replicationcontroller, deployment, garbagecollector, dropbox, eventttl, "     \
	"serviceip, endpoints"

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
