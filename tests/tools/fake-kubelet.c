/* fake-kubelet: test scaffolding for corral-ctrl's tests and benchmark,
 * standing in for corral-sched and a hollow corral-noded. It binds every
 * pod without spec.nodeName to --node and marks it Running with a Ready
 * condition, --delay milliseconds after it first sees it, through the
 * mount (a read, a change, a write with the resourceVersion read; a
 * conflict reads again). Pods labelled --hold KEY (any value) are bound but
 * never made ready. Stops on SIGTERM or SIGINT. */
#include "informer.h"
#include "log.h"
#include "loop.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct fk__item {
	struct fk__item *next;
	char *key;
};

struct fk {
	const char *mount, *node, *hold;
	uint64_t delay_ms;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fk__item *head, *tail;
	bool stop;
	unsigned ip;
	struct informer *inf;
	struct loop *loop;
};

static void fk__push(struct fk *f, const char *key)
{
	struct fk__item *it = xcalloc(1, sizeof(*it));
	it->key = xstrdup(key);
	pthread_mutex_lock(&f->lock);
	if (f->tail)
		f->tail->next = it;
	else
		f->head = it;
	f->tail = it;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

static bool fk__done(const struct ynode *pod, const char *hold)
{
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (!node || !*node)
		return false;
	if (hold && ynode_get(ynode_path(pod, "metadata.labels"), hold))
		return true;
	const char *phase = ynode_path_str(pod, "status.phase");
	return phase && !strcmp(phase, "Running");
}

static void fk__now(char *buf)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static struct ynode *fk__cond(const char *type, const char *ts)
{
	struct ynode *c = ynode_new_map();
	ynode_set(c, "type", ynode_new_str(type));
	ynode_set(c, "status", ynode_new_str("True"));
	ynode_set(c, "lastTransitionTime", ynode_new_str(ts));
	return c;
}

/* One pod: bind it and make it ready; retried on conflicts. */
static void fk__handle(struct fk *f, const char *key, unsigned ip)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return;
	cleanup_free char *path = xasprintf("%s/namespaces/%.*s/pods/%s.yaml", f->mount,
					    (int)(slash - key), key, slash + 1);
	for (int attempt = 0; attempt < 16; attempt++) {
		size_t len;
		cleanup_free char *text = util_read_file(path, &len);
		if (!text)
			return;
		cleanup_ynode struct ynode *pod = NULL;
		if (yaml_parse_one(text, len, &pod, NULL) < 0)
			return;
		if (fk__done(pod, f->hold))
			return;
		char ts[32];
		fk__now(ts);
		const char *node = ynode_path_str(pod, "spec.nodeName");
		if (!node || !*node)
			ynode_set(ynode_get_map(pod, "spec"), "nodeName", ynode_new_str(f->node));
		bool hold = f->hold && ynode_get(ynode_path(pod, "metadata.labels"), f->hold);
		struct ynode *st = ynode_new_map();
		ynode_set(st, "phase", ynode_new_str(hold ? "Pending" : "Running"));
		struct ynode *conds = ynode_new_seq();
		ynode_append(conds, fk__cond("PodScheduled", ts));
		if (!hold) {
			ynode_append(conds, fk__cond("Initialized", ts));
			ynode_append(conds, fk__cond("ContainersReady", ts));
			ynode_append(conds, fk__cond("Ready", ts));
			char ipbuf[32];
			snprintf(ipbuf, sizeof(ipbuf), "10.244.%u.%u", (ip >> 8) & 255, ip & 255);
			ynode_set(st, "podIP", ynode_new_str(ipbuf));
			ynode_set(st, "hostIP", ynode_new_str("127.0.0.1"));
			ynode_set(st, "startTime", ynode_new_str(ts));
		}
		ynode_set(st, "conditions", conds);
		ynode_set(pod, "status", st);
		size_t olen;
		cleanup_free char *out = yaml_emit(pod, &olen);
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0)
			return;
		int r = util_write_all(fd, out, olen);
		if (close(fd) == 0 && r == 0)
			return;
		if (errno != EAGAIN)
			return;
	}
}

static void *fk__worker(void *p)
{
	struct fk *f = p;
	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->head && !f->stop)
			pthread_cond_wait(&f->cond, &f->lock);
		if (f->stop)
			break;
		struct fk__item *it = f->head;
		f->head = it->next;
		if (!f->head)
			f->tail = NULL;
		unsigned ip = ++f->ip;
		pthread_mutex_unlock(&f->lock);
		fk__handle(f, it->key, ip);
		free(it->key);
		free(it);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

struct fk__later {
	struct fk *f;
	char *key;
	struct loop_timer *t;
};

static void fk__fire(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	struct fk__later *l = data;
	fk__push(l->f, l->key);
	free(l->key);
	free(l);
	loop_timer_free(t);
}

static void fk__seen(void *data, const char *key, const struct ynode *pod)
{
	struct fk *f = data;
	if (fk__done(pod, f->hold))
		return;
	if (!f->delay_ms) {
		fk__push(f, key);
		return;
	}
	struct fk__later *l = xcalloc(1, sizeof(*l));
	l->f = f;
	l->key = xstrdup(key);
	l->t = loop_timer_new(f->loop, fk__fire, l);
	loop_timer_start(l->t, f->delay_ms, 0);
}

static void fk__updated(void *data, const char *key, const struct ynode *old,
			const struct ynode *pod)
{
	(void)old;
	fk__seen(data, key, pod);
}

static void fk__stop(struct loop *loop, int signo, void *data)
{
	(void)signo;
	(void)data;
	loop_stop(loop);
}

int main(int argc, char **argv)
{
	struct fk f = {.node = "fake-node"};
	int threads = 8, c;
	static const struct option opts[] = {
	    {"node", required_argument, NULL, 'n'},
	    {"delay", required_argument, NULL, 'd'},
	    {"threads", required_argument, NULL, 't'},
	    {"hold", required_argument, NULL, 'H'},
	    {NULL, 0, NULL, 0},
	};
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			f.node = optarg;
			break;
		case 'd':
			f.delay_ms = strtoull(optarg, NULL, 10);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'H':
			f.hold = optarg;
			break;
		default:
			fprintf(stderr, "usage: fake-kubelet [--node N] [--delay MS] [--threads N] "
					"[--hold LABEL] MOUNT\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: fake-kubelet [options] MOUNT\n");
		return 2;
	}
	f.mount = argv[optind];
	log_set_ident("fake-kubelet");
	pthread_mutex_init(&f.lock, NULL);
	pthread_cond_init(&f.cond, NULL);
	struct error *err = NULL;
	f.loop = loop_new(&err);
	if (!f.loop)
		log_fatal("%s", err->msg);
	if (loop_on_signal(f.loop, SIGTERM, fk__stop, NULL, &err) < 0 ||
	    loop_on_signal(f.loop, SIGINT, fk__stop, NULL, &err) < 0)
		log_fatal("%s", err->msg);
	pthread_t *tids = xcalloc((size_t)threads, sizeof(*tids));
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, fk__worker, &f);
	f.inf = informer_new(f.loop, f.mount, "pods", true);
	struct informer_handlers h = {.on_add = fk__seen, .on_update = fk__updated};
	informer_add_handlers(f.inf, &h, &f);
	if (informer_start(f.inf, &err) < 0)
		log_fatal("%s", err->msg);
	int r = loop_run(f.loop, &err);
	pthread_mutex_lock(&f.lock);
	f.stop = true;
	pthread_cond_broadcast(&f.cond);
	pthread_mutex_unlock(&f.lock);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	informer_free(f.inf);
	loop_free(f.loop);
	return r < 0 ? 1 : 0;
}
