/* ttl.c: the TTL-after-finished controller: deletes finished Jobs once
 * their ttlSecondsAfterFinished has passed. It deletes the Job only if it
 * is still the one it read (its uid), so that a Job made again under the
 * same name is never taken for the old one. */
#include "ttl.h"
#include "conditions.h"
#include "ctrl.h"
#include "job.h"
#include "log.h"
#include "obj.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ttlc {
	struct ctrl *c;
	struct informer *jobs;
	struct workqueue *q;
};

int64_t ttl_expires_at(const struct ynode *job)
{
	long long ttl = obj_int(job, "spec.ttlSecondsAfterFinished", -1);
	const char *type = NULL;
	if (ttl < 0 || !job_finished(job, &type))
		return -1;
	const struct ynode *c = condition_find(ynode_path(job, "status.conditions"), type);
	int64_t at = obj_time_parse(condition_field(c, "lastTransitionTime"));
	if (at < 0)
		at = obj_time_parse(ynode_path_str(job, "status.completionTime"));
	if (at < 0)
		return -1;
	return at + ttl;
}

static void ttlc__deleted(void *data, const struct writer_result *res)
{
	char *key = data;
	if (res->status && res->status != ENOENT && res->status != ESTALE)
		log_warn("ttl-after-finished: cannot delete Job %s: %s", key, res->msg);
	free(key);
}

static int ttlc__sync(void *data, const char *key, struct error **err)
{
	(void)err;
	struct ttlc *t = data;
	const struct ynode *job = informer_get(t->jobs, key);
	if (!job || object_is_deleting(job))
		return 0;
	int64_t at = ttl_expires_at(job);
	if (at < 0)
		return 0;
	int64_t now = obj_now();
	if (now < at) {
		workqueue_add_after(t->q, key, (uint64_t)(at - now) * 1000 + 50);
		return 0;
	}
	log_info("ttl-after-finished: deleting Job %s", key);
	cleanup_free char *path = obj_path("jobs", obj_namespace(job), obj_name(job));
	writer_delete(t->c->writer, path, obj_uid(job), 0, ttlc__deleted, xstrdup(key));
	return 0;
}

static void ttlc__on_job(void *data, const char *key, const struct ynode *obj)
{
	struct ttlc *t = data;
	if (ttl_expires_at(obj) >= 0)
		workqueue_add(t->q, key);
}

static void ttlc__on_job_update(void *data, const char *key, const struct ynode *old,
				const struct ynode *obj)
{
	(void)old;
	ttlc__on_job(data, key, obj);
}

struct ttlc *ttlc_new(struct ctrl *c)
{
	struct ttlc *t = xcalloc(1, sizeof(*t));
	t->c = c;
	t->jobs = ctrl_informer(c, "jobs");
	t->q = workqueue_new(c->loop, "ttl-after-finished", NULL);
	struct informer_handlers h = {.on_add = ttlc__on_job, .on_update = ttlc__on_job_update};
	informer_add_handlers(t->jobs, &h, t);
	workqueue_set_handler(t->q, ttlc__sync, t);
	return t;
}

void ttlc_free(struct ttlc *t)
{
	if (!t)
		return;
	workqueue_free(t->q);
	free(t);
}
