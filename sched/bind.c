/* bind.c: the write workers (see bind.h). A job is one open(O_WRONLY |
 * O_TRUNC), one write of the whole document, one close(), whose result is
 * the store's verdict; a status write reads the pod first. Jobs are taken
 * in order; results go back in a list that the loop swaps out when the
 * eventfd fires. */
#include "bind.h"
#include "conditions.h"
#include "log.h"
#include "timefmt.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define SCHED_CONDITION "PodScheduled"

struct sched_bind__job {
	struct sched_bind__job *next;
	enum sched_write what;
	char *key, *uid, *rv, *path, *node, *reason, *message;
	long long priority;
	int status;
};

struct sched_binder {
	struct loop *loop;
	char *mount;
	sched_binder_cb cb;
	void *data;
	int efd;
	pthread_t *threads;
	unsigned nthreads;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct sched_bind__job *head, *tail; /* to do */
	struct sched_bind__job *done;	     /* results, newest first */
	size_t pending;			     /* queued or in progress */
};

/* ---- document edits ------------------------------------------------------ */

bool sched_bind_condition_is(const struct ynode *pod, const char *status, const char *reason,
			     const char *message)
{
	const struct condition c = {SCHED_CONDITION, status, reason, message};
	return condition_is(condition_find(ynode_path(pod, "status.conditions"), SCHED_CONDITION),
			    &c);
}

void sched_bind_set_condition(struct ynode *pod, const char *status, const char *reason,
			      const char *message, const char *now)
{
	const struct condition c = {SCHED_CONDITION, status, reason, message};
	condition_set(ynode_get_map(pod, "status"), &c, now, CONDITION_PROBE_TIME);
}

char *sched_bind_document(const struct sched_bind_pod *p, const char *node, size_t *len)
{
	const char *slash = strchr(p->key, '/');
	cleanup_ynode struct ynode *doc = ynode_new_map();
	ynode_set(doc, "apiVersion", ynode_new_str("v1"));
	ynode_set(doc, "kind", ynode_new_str("Binding"));
	struct ynode *md = ynode_get_map(doc, "metadata");
	ynode_set(md, "name", ynode_new_str(slash ? slash + 1 : p->key));
	if (slash)
		ynode_set(md, "namespace", ynode_new_strn(p->key, (size_t)(slash - p->key)));
	if (p->uid && *p->uid)
		ynode_set(md, "uid", ynode_new_str(p->uid));
	if (p->rv && *p->rv)
		ynode_set(md, "resourceVersion", ynode_new_str(p->rv));
	struct ynode *target = ynode_get_map(doc, "target");
	ynode_set(target, "apiVersion", ynode_new_str("v1"));
	ynode_set(target, "kind", ynode_new_str("Node"));
	ynode_set(target, "name", ynode_new_str(node));
	return yaml_emit(doc, len);
}

/* ---- the workers ------------------------------------------------------------ */

static void sched_bind__job_free(struct sched_bind__job *j)
{
	free(j->key);
	free(j->uid);
	free(j->path);
	free(j->node);
	free(j->reason);
	free(j->message);
	free(j->rv);
	free(j);
}

/* The pod as it is now, with PodScheduled=False: NULL and *status set when
 * it is no longer the pod the decision was made on (EAGAIN: its update
 * event brings it back) or cannot be read. */
static char *sched_bind__status_text(struct sched_bind__job *j, size_t *len, int *status)
{
	size_t n = 0;
	cleanup_free char *text = util_read_object_file(j->path, &n);
	if (!text) {
		*status = errno ? errno : EIO;
		return NULL;
	}
	cleanup_ynode struct ynode *doc = NULL;
	if (yaml_parse_one(text, n, &doc, NULL) < 0 || doc->type != YNODE_MAP) {
		*status = EAGAIN; /* being written: its event tells */
		return NULL;
	}
	const char *uid = ynode_path_str(doc, "metadata.uid");
	const char *rv = ynode_path_str(doc, "metadata.resourceVersion");
	const char *node = ynode_path_str(doc, "spec.nodeName");
	if (strcmp(uid ? uid : "", j->uid) != 0 || (j->rv && strcmp(rv ? rv : "", j->rv) != 0) ||
	    (node && *node)) {
		*status = EAGAIN;
		return NULL;
	}
	char now[RFC3339_SIZE];
	rfc3339_format(time(NULL), now);
	sched_bind_set_condition(doc, "False", j->reason, j->message, now);
	return yaml_emit(doc, len);
}

/* Rewrites the pod's file in place: a Binding, or the pod with its
 * condition. No O_CREAT: a pod deleted meanwhile must not come back.
 * corral-fs takes the document at close(), whose result is the store's
 * verdict. */
static int sched_bind__write(struct sched_bind__job *j)
{
	size_t len = 0;
	int status = 0;
	cleanup_free char *text = NULL;
	if (j->what == SCHED_WRITE_BIND) {
		struct sched_bind_pod p = {.key = j->key, .uid = j->uid, .rv = j->rv};
		text = sched_bind_document(&p, j->node, &len);
	} else if (!(text = sched_bind__status_text(j, &len, &status))) {
		return status;
	}
	int fd = open(j->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (util_write_all(fd, text, len) < 0)
		status = errno ? errno : EIO;
	if (close(fd) < 0 && !status)
		status = errno;
	return status;
}

static void *sched_bind__worker(void *arg)
{
	struct sched_binder *b = arg;
	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->head && !b->stop)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->stop)
			break;
		struct sched_bind__job *j = b->head;
		b->head = j->next;
		if (!b->head)
			b->tail = NULL;
		pthread_mutex_unlock(&b->lock);

		j->status = sched_bind__write(j);

		pthread_mutex_lock(&b->lock);
		j->next = b->done;
		b->done = j;
		uint64_t one = 1;
		if (write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_error("sched: eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static void sched_bind__on_results(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct sched_binder *b = data;
	uint64_t v;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_error("sched: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&b->lock);
	struct sched_bind__job *list = b->done;
	b->done = NULL;
	pthread_mutex_unlock(&b->lock);
	/* Oldest first. */
	struct sched_bind__job *rev = NULL;
	while (list) {
		struct sched_bind__job *next = list->next;
		list->next = rev;
		rev = list;
		list = next;
	}
	while (rev) {
		struct sched_bind__job *j = rev;
		rev = j->next;
		pthread_mutex_lock(&b->lock);
		b->pending--;
		pthread_mutex_unlock(&b->lock);
		struct sched_write_result r = {
		    .what = j->what,
		    .key = j->key,
		    .uid = j->uid,
		    .rv = j->rv,
		    .node = j->node,
		    .priority = j->priority,
		    .status = j->status,
		};
		b->cb(b->data, &r);
		sched_bind__job_free(j);
	}
}

struct sched_binder *sched_binder_new(struct loop *loop, const char *mount, unsigned workers,
				      sched_binder_cb cb, void *data, struct error **err)
{
	struct sched_binder *b = xcalloc(1, sizeof(*b));
	b->loop = loop;
	b->mount = xstrdup(mount);
	b->cb = cb;
	b->data = data;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		error_set(err, errno, "eventfd: %s", strerror(errno));
		sched_binder_free(b);
		return NULL;
	}
	if (loop_add_fd(loop, b->efd, LOOP_READ, sched_bind__on_results, b, err) < 0) {
		sched_binder_free(b);
		return NULL;
	}
	b->threads = xcalloc(workers ? workers : 1, sizeof(*b->threads));
	for (unsigned i = 0; i < workers; i++) {
		int r = pthread_create(&b->threads[i], NULL, sched_bind__worker, b);
		if (r) {
			error_set(err, r, "cannot start a write worker: %s", strerror(r));
			sched_binder_free(b);
			return NULL;
		}
		b->nthreads++;
	}
	return b;
}

void sched_binder_free(struct sched_binder *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	for (unsigned i = 0; i < b->nthreads; i++)
		pthread_join(b->threads[i], NULL);
	free(b->threads);
	if (b->efd >= 0) {
		loop_del_fd(b->loop, b->efd);
		close(b->efd);
	}
	for (struct sched_bind__job *j = b->head, *next; j; j = next) {
		next = j->next;
		sched_bind__job_free(j);
	}
	for (struct sched_bind__job *j = b->done, *next; j; j = next) {
		next = j->next;
		sched_bind__job_free(j);
	}
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cond);
	free(b->mount);
	free(b);
}

static void sched_bind__queue(struct sched_binder *b, struct sched_bind__job *j,
			      const struct sched_bind_pod *p)
{
	j->key = xstrdup(p->key);
	j->uid = xstrdup(p->uid ? p->uid : "");
	j->rv = p->rv ? xstrdup(p->rv) : NULL;
	j->priority = p->priority;
	const char *slash = strchr(j->key, '/');
	j->path = slash ? xasprintf("%s/namespaces/%.*s/pods/%s.yaml", b->mount,
				    (int)(slash - j->key), j->key, slash + 1)
			: xasprintf("%s/namespaces/default/pods/%s.yaml", b->mount, j->key);
	pthread_mutex_lock(&b->lock);
	if (b->tail)
		b->tail->next = j;
	else
		b->head = j;
	b->tail = j;
	b->pending++;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void sched_binder_bind(struct sched_binder *b, const struct sched_bind_pod *p, const char *node)
{
	struct sched_bind__job *j = xcalloc(1, sizeof(*j));
	j->what = SCHED_WRITE_BIND;
	j->node = xstrdup(node);
	sched_bind__queue(b, j, p);
}

void sched_binder_status(struct sched_binder *b, const struct sched_bind_pod *p, const char *reason,
			 const char *message)
{
	struct sched_bind__job *j = xcalloc(1, sizeof(*j));
	j->what = SCHED_WRITE_STATUS;
	j->reason = xstrdup(reason);
	j->message = xstrdup(message);
	sched_bind__queue(b, j, p);
}

size_t sched_binder_pending(struct sched_binder *b)
{
	pthread_mutex_lock(&b->lock);
	size_t n = b->pending;
	pthread_mutex_unlock(&b->lock);
	return n;
}
