/* bind.h: writing the scheduler's decisions through the mount.
 *
 * A binding is a small Binding document (Kubernetes' pods/binding
 * subresource) written over the pod's own file: corral-fs sets the pod's
 * spec.nodeName and its PodScheduled=True condition (corral-tree(5)). An
 * unschedulable pod gets its file read afresh and written back whole with
 * PodScheduled=False and the reason. Either carries the uid and the
 * metadata.resourceVersion the decision was made on, so that corral-fs
 * refuses it with EAGAIN at close() if anyone changed the pod since, another
 * scheduler's binding included: at most one binding of a pod is ever
 * accepted.
 *
 * Every write is durable before close() returns, so writes run on a pool of
 * worker threads: corral-fs commits writes that wait together in one
 * transaction, and decisions on the loop thread never wait for a disk. Each
 * result comes back to the loop through an eventfd. The workers touch only
 * their job's document and file: no cache, no informer, no loop. */
#ifndef CORRAL_SCHED_BIND_H
#define CORRAL_SCHED_BIND_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "loop.h"
#include "ynode.h"

enum sched_write {
	SCHED_WRITE_BIND,   /* spec.nodeName and PodScheduled=True */
	SCHED_WRITE_STATUS, /* PodScheduled=False, reason and message */
};

struct sched_write_result {
	enum sched_write what;
	const char *key;  /* "ns/name" */
	const char *uid;  /* the pod's metadata.uid as written */
	const char *rv;	  /* the resourceVersion it was checked against */
	const char *node; /* SCHED_WRITE_BIND: the node */
	long long priority;
	int status; /* 0, or the errno of open/write/close: EAGAIN for a
		       conflict, ENOENT for a pod gone, EINVAL refused */
};

typedef void (*sched_binder_cb)(void *data, const struct sched_write_result *r);

struct sched_binder;
/* Starts workers threads; cb runs on the loop for every result. */
struct sched_binder *sched_binder_new(struct loop *loop, const char *mount, unsigned workers,
				      sched_binder_cb cb, void *data, struct error **err);
/* Lets the writes in progress finish, drops those not started, joins. */
void sched_binder_free(struct sched_binder *b);

/* What a write is checked against: the pod as the decision saw it. */
struct sched_bind_pod {
	const char *key; /* "ns/name" */
	const char *uid;
	const char *rv; /* NULL: unchecked */
	long long priority;
};

/* Queues the binding of the pod to node. */
void sched_binder_bind(struct sched_binder *b, const struct sched_bind_pod *p, const char *node);
/* Queues the PodScheduled=False condition with reason and message. */
void sched_binder_status(struct sched_binder *b, const struct sched_bind_pod *p, const char *reason,
			 const char *message);
/* Writes queued or in progress. */
size_t sched_binder_pending(struct sched_binder *b);

/* The Binding document of p to node (malloc'd, *len its length). */
char *sched_bind_document(const struct sched_bind_pod *p, const char *node, size_t *len);
/* The edit of a status write, on the pod's document (now:
 * "2026-11-30T09:12:04Z"). */
void sched_bind_set_condition(struct ynode *pod, const char *status, const char *reason,
			      const char *message, const char *now);
/* Whether the pod's PodScheduled condition already says exactly that. */
bool sched_bind_condition_is(const struct ynode *pod, const char *status, const char *reason,
			     const char *message);

#endif
