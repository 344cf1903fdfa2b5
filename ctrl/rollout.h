/* rollout.h: the plan of a Deployment's rollout, as pure functions over
 * views of its ReplicaSets (see deployment.h for what the controller does
 * with it). */
#ifndef CORRAL_CTRL_ROLLOUT_H
#define CORRAL_CTRL_ROLLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ynode.h"

/* ROLLOUT_NONE: no such ReplicaSet. */
#define ROLLOUT_NONE ((size_t)-1)

/* An int-or-percent (3, "3", "25%") of total; percentages round up or
 * down. -EINVAL when v is neither. */
int rollout_scaled_value(const struct ynode *v, int total, bool round_up, int *out);
/* Kubernetes' ResolveFenceposts: maxSurge rounded up, maxUnavailable
 * down, and 1 unavailable when both come to 0. */
void rollout_resolve_fenceposts(const struct ynode *surge, const struct ynode *unavailable,
				int desired, int *max_surge, int *max_unavailable);

struct rollout_params {
	int replicas;
	bool recreate;
	int max_surge;		 /* resolved; 0 for Recreate */
	int max_unavailable;	 /* resolved, at most replicas; 0 for Recreate */
	long long history_limit; /* revisionHistoryLimit, -1: keep all */
	bool paused;
	long long min_ready;
	long long progress_deadline; /* seconds, -1: none */
	long long generation;
};
void rollout_params_init(struct rollout_params *p, const struct ynode *d);

/* A ReplicaSet of the Deployment as the plan sees it. */
struct rollout_rs {
	const struct ynode *obj;
	const char *name;
	int64_t created;
	long long revision; /* 0: none */
	int replicas;	    /* spec.replicas as the plan leaves it */
	int orig;	    /* spec.replicas as found */
	int status_replicas, ready, available;
	long long desired, max; /* the replica annotations, -1: absent */
	long long generation, observed;
	bool fresh;    /* the plan creates it */
	bool remove;   /* the plan deletes it */
	bool annotate; /* the plan sets desired and max */
	long long set_desired, set_max;
	long long set_revision; /* -1: leave */
};
void rollout_rs_init(struct rollout_rs *r, const struct ynode *rs);

/* Sets r's size (and replica annotations) if it changes; true if so. */
bool rollout_scale_rs(const struct rollout_params *p, struct rollout_rs *r, int to);
/* What the new ReplicaSet may grow to now (NewRSNewReplicas). */
int rollout_new_rs_new_replicas(const struct rollout_params *p, const struct rollout_rs *rs,
				size_t n, size_t newi);
/* One step of a rolling update; true if it changed a size. */
bool rollout_reconcile_new(const struct rollout_params *p, struct rollout_rs *rs, size_t n,
			   size_t newi);
bool rollout_reconcile_old(const struct rollout_params *p, struct rollout_rs *rs, size_t n,
			   size_t newi);
/* Recreate: every old set to 0; true if one changed. */
bool rollout_scale_down_old_for_recreate(const struct rollout_params *p, struct rollout_rs *rs,
					 size_t n, size_t newi);
/* A change of spec.replicas: the sets' desired annotation disagrees. */
bool rollout_is_scaling_event(const struct rollout_params *p, const struct rollout_rs *rs,
			      size_t n);
/* Proportional scaling; status_replicas: the Deployment's status.replicas. */
void rollout_scale(const struct rollout_params *p, struct rollout_rs *rs, size_t n, size_t newi,
		   int status_replicas);
/* Marks the oldest empty sets beyond revisionHistoryLimit for removal. */
void rollout_cleanup(const struct rollout_params *p, struct rollout_rs *rs, size_t n, size_t newi);

/* The pod-template-hash of a template (without its own hash label):
 * FNV-1a over a canonical form, collisionCount mixed in when >= 0,
 * printed in decimal through Kubernetes' SafeEncodeString. malloc'd. */
char *rollout_template_hash(const struct ynode *tmpl, long long collision);
/* Templates equal but for the pod-template-hash label. */
bool rollout_templates_equal(const struct ynode *a, const struct ynode *b);

#endif
