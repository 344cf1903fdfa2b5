/* workers.c: threads that run jobs, and the eventfd that brings their ends
 * back to the loop. */
#include "workers.h"
#include "log.h"
#include "loop.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define WORKERS_STACK (512 * 1024) /* forks, execs, small buffers */

struct workers__job {
	struct workers__job *next;
	workers_fn run, done;
	void *data;
};

/* A FIFO of jobs. */
struct workers__list {
	struct workers__job *head, *tail;
};

struct workers {
	struct loop *loop;
	int efd; /* a job ended */
	unsigned max, nthreads, idle;
	pthread_t *threads;
	pthread_mutex_t lock;
	pthread_cond_t work;		    /* a job was queued, or stop */
	pthread_cond_t quiet;		    /* nothing queued and nothing running */
	struct workers__list queued, ended; /* under lock */
	unsigned running, nqueued;	    /* under lock */
	size_t pending;			    /* the loop's: submitted, done() not run */
	bool stop;
};

static void workers__push(struct workers__list *l, struct workers__job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct workers__job *workers__take_all(struct workers__list *l)
{
	struct workers__job *all = l->head;
	l->head = l->tail = NULL;
	return all;
}

static void *workers__thread(void *arg)
{
	struct workers *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && !w->queued.head)
			pthread_cond_wait(&w->work, &w->lock);
		if (!w->queued.head)
			break; /* stopping, and nothing left */
		struct workers__job *j = w->queued.head;
		w->queued.head = j->next;
		if (!w->queued.head)
			w->queued.tail = NULL;
		w->nqueued--;
		w->running++;
		w->idle--;
		pthread_mutex_unlock(&w->lock);
		j->run(j->data);
		pthread_mutex_lock(&w->lock);
		w->running--;
		w->idle++;
		workers__push(&w->ended, j);
		uint64_t one = 1;
		if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_warn("workers: eventfd: %s", strerror(errno));
		if (!w->running && !w->queued.head)
			pthread_cond_broadcast(&w->quiet);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Runs the done() of every job that has ended, in order. */
static void workers__finish(struct workers *w)
{
	pthread_mutex_lock(&w->lock);
	struct workers__job *j = workers__take_all(&w->ended);
	pthread_mutex_unlock(&w->lock);
	while (j) {
		struct workers__job *next = j->next;
		w->pending--;
		if (j->done)
			j->done(j->data);
		free(j);
		j = next;
	}
}

static void workers__on_event(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	uint64_t n;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("workers: eventfd: %s", strerror(errno));
	workers__finish(data);
}

struct workers *workers_new(struct loop *loop, unsigned max_threads, struct error **err)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return error_set(err, errno, "eventfd: %s", strerror(errno)), NULL;
	struct workers *w = xcalloc(1, sizeof(*w));
	w->loop = loop;
	w->efd = efd;
	w->max = max_threads ? max_threads : 1;
	w->threads = xcalloc(w->max, sizeof(*w->threads));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->quiet, NULL);
	if (loop_add_fd(loop, efd, LOOP_READ, workers__on_event, w, err) < 0) {
		workers_free(w);
		return NULL;
	}
	return w;
}

/* One more thread, if the pool may grow and the idle ones are fewer than
 * the jobs queued (under lock). */
static void workers__grow(struct workers *w)
{
	if (w->nqueued <= w->idle || w->nthreads >= w->max)
		return;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKERS_STACK);
	/* the thread starts with every signal blocked */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&w->threads[w->nthreads], &attr, workers__thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		/* the threads there are take the job; with none, this one */
		if (w->nthreads == 0)
			abort(); /* as for memory: no half-handled path */
		log_warn("workers: cannot start a thread: %s", strerror(r));
		return;
	}
	w->nthreads++;
	w->idle++;
}

void workers_submit(struct workers *w, workers_fn run, workers_fn done, void *data)
{
	struct workers__job *j = xcalloc(1, sizeof(*j));
	j->run = run;
	j->done = done;
	j->data = data;
	w->pending++;
	pthread_mutex_lock(&w->lock);
	workers__push(&w->queued, j);
	w->nqueued++;
	workers__grow(w);
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
}

void workers_drain(struct workers *w)
{
	pthread_mutex_lock(&w->lock);
	while (w->running || w->queued.head)
		pthread_cond_wait(&w->quiet, &w->lock);
	pthread_mutex_unlock(&w->lock);
	workers__finish(w);
}

size_t workers_pending(const struct workers *w)
{
	return w->pending;
}

unsigned workers_max(const struct workers *w)
{
	return w->max;
}

void workers_free(struct workers *w)
{
	if (!w)
		return;
	workers_drain(w);
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	loop_del_fd(w->loop, w->efd);
	close(w->efd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->quiet);
	free(w->threads);
	free(w);
}
