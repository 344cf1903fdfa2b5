/* leaderelect.h: leader election through a Lease object in the mount, as
 * client-go's leaderelection does it with a LeaseLock.
 *
 * The lock is namespaces/NS/leases/NAME.yaml (coordination.k8s.io/v1). A
 * candidate takes it when it is missing, released (no holderIdentity), or
 * expired: not seen to change for its leaseDurationSeconds. Writes carry
 * the resourceVersion read, so of two candidates that race exactly one
 * wins (the other's close fails with EAGAIN). The leader renews every
 * retry period; if it cannot renew for the renew deadline it stops leading
 * (on_stopped), which is before any other candidate can take the lease
 * (the lease duration is longer than the renew deadline).
 *
 * Followers do not poll: they watch the lease file with inotify, and a
 * timer waits for the moment the lease would expire if it were not
 * renewed; every renewal they see moves that moment. Loop thread only. */
#ifndef CORRAL_LEADERELECT_H
#define CORRAL_LEADERELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "loop.h"

/* Kubernetes' defaults for its controller manager and scheduler. */
#define LEADER_LEASE_DURATION_MS 15000
#define LEADER_RENEW_DEADLINE_MS 10000
#define LEADER_RETRY_PERIOD_MS	 2000

struct leader_config {
	const char *mount;		/* "/cluster" */
	const char *ns;			/* "kube-system" */
	const char *name;		/* "corral-ctrl" */
	const char *identity;		/* this candidate; NULL: leader_identity() */
	uint64_t lease_ms;		/* lease duration */
	uint64_t renew_ms;		/* renew deadline, < lease_ms */
	uint64_t retry_ms;		/* retry period, < renew_ms */
	void (*on_started)(void *data); /* this candidate now leads */
	void (*on_stopped)(void *data); /* it no longer does */
	void *data;
};

struct leader;

/* Checks the durations (retry < renew < lease) and watches the lease's
 * folder; nothing is written until leader_start(). */
struct leader *leader_new(struct loop *loop, const struct leader_config *cfg, struct error **err);
/* Gives the lease up if held (leader_release), then frees. */
void leader_free(struct leader *l);

/* Tries to take the lease now (on_started may run before this returns),
 * then follows it on the loop. */
int leader_start(struct leader *l, struct error **err);
bool leader_is_leader(const struct leader *l);
const char *leader_identity_of(const struct leader *l);
/* The holder last seen, or NULL. */
const char *leader_holder(const struct leader *l);
/* Hands the lease over at once (a clean stop): holderIdentity emptied,
 * leaseDurationSeconds 1. Does not call on_stopped. */
void leader_release(struct leader *l);

/* The config keys of leader election, named as Kubernetes' flags, for a
 * daemon's table in lib/config.h; the arguments point at its fields. */
#define LEADER_CONFIG_KEYS(elect_, lease_, renew_, retry_, name_, name_def_, ns_)                  \
	{.name = "leader-elect", .type = CONFIG_BOOL, .ptr = (elect_), .def = "true"},             \
	    {.name = "leader-elect-lease-duration",                                                \
	     .type = CONFIG_DURATION,                                                              \
	     .ptr = (lease_),                                                                      \
	     .def = "15s",                                                                         \
	     .min = 1000,                                                                          \
	     .max = 3600000},                                                                      \
	    {.name = "leader-elect-renew-deadline",                                                \
	     .type = CONFIG_DURATION,                                                              \
	     .ptr = (renew_),                                                                      \
	     .def = "10s",                                                                         \
	     .min = 100,                                                                           \
	     .max = 3600000},                                                                      \
	    {.name = "leader-elect-retry-period",                                                  \
	     .type = CONFIG_DURATION,                                                              \
	     .ptr = (retry_),                                                                      \
	     .def = "2s",                                                                          \
	     .min = 50,                                                                            \
	     .max = 3600000},                                                                      \
	    {.name = "leader-elect-resource-name",                                                 \
	     .type = CONFIG_STRING,                                                                \
	     .ptr = (name_),                                                                       \
	     .def = (name_def_)},                                                                  \
	{                                                                                          \
		.name = "leader-elect-resource-namespace", .type = CONFIG_STRING, .ptr = (ns_),    \
		.def = "kube-system"                                                               \
	}

/* The matching getopt_long entries: --leader-elect[=BOOL] returns
 * flag_bool, the others take a value and return flag_value. */
#define LEADER_LONG_OPTIONS(flag_bool, flag_value)                                                 \
	{"leader-elect", optional_argument, NULL, (flag_bool)},                                    \
	    {"leader-elect-lease-duration", required_argument, NULL, (flag_value)},                \
	    {"leader-elect-renew-deadline", required_argument, NULL, (flag_value)},                \
	    {"leader-elect-retry-period", required_argument, NULL, (flag_value)},                  \
	    {"leader-elect-resource-name", required_argument, NULL, (flag_value)},                 \
	{                                                                                          \
		"leader-elect-resource-namespace", required_argument, NULL, (flag_value)           \
	}

/* "<hostname>_<random uuid>", as Kubernetes makes identities; malloc'd. */
char *leader_identity(void);

#endif
