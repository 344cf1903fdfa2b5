/* workpool.c: threads that take jobs from two FIFOs (normal and low
 * priority) under one mutex, and the eventfd that brings their ends back
 * to the loop.
 *
 * This file must never call a done() from a worker when the pool has a
 * loop. */
#include "workpool.h"
#include "log.h"
#include "loop.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct workpool__job {
	struct workpool__job *next;
	workpool_fn run, done;
	void *data;
};

/* A FIFO of jobs. */
struct workpool__list {
	struct workpool__job *head, *tail;
};

struct workpool {
	struct loop *loop; /* NULL: done()s on the workers */
	int efd;	   /* a job ended; -1 without a loop */
	unsigned max, nthreads, idle;
	bool on_demand, started;
	size_t stack_size;
	uint64_t low_pause_ms;
	pthread_t *threads;
	pthread_mutex_t lock;
	pthread_cond_t work;			/* a job was queued, or stop */
	pthread_cond_t ended_cond;		/* a job ended */
	struct workpool__list high, low, ended; /* under lock */
	unsigned running, nqueued;		/* under lock */
	uint64_t last_high_ms;			/* under lock: the last normal job submitted */
	bool stop;				/* under lock */
	atomic_size_t pending;			/* submitted, done() not run */
};

static void workpool__push(struct workpool__list *l, struct workpool__job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct workpool__job *workpool__pop(struct workpool__list *l)
{
	struct workpool__job *j = l->head;
	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = NULL;
	}
	return j;
}

/* The next job to run, waiting for one (under lock); NULL: stop. */
static struct workpool__job *workpool__next(struct workpool *w)
{
	for (;;) {
		struct workpool__job *j = workpool__pop(&w->high);
		if (j)
			return j;
		if (w->low.head) {
			/* low-priority jobs wait for a pause in the others, so
			 * that a burst of them never slows a burst of real work */
			uint64_t now = loop_now_ms();
			if (w->stop || now >= w->last_high_ms + w->low_pause_ms)
				return workpool__pop(&w->low);
			struct timespec ts =
			    util_deadline(CLOCK_MONOTONIC, w->last_high_ms + w->low_pause_ms - now);
			pthread_cond_timedwait(&w->work, &w->lock, &ts);
			continue;
		}
		if (w->stop)
			return NULL;
		pthread_cond_wait(&w->work, &w->lock);
	}
}

static void *workpool__thread(void *arg)
{
	struct workpool *w = arg;
	pthread_mutex_lock(&w->lock);
	struct workpool__job *j;
	while ((j = workpool__next(w))) {
		w->nqueued--;
		w->running++;
		w->idle--;
		pthread_mutex_unlock(&w->lock);
		j->run(j->data);
		if (!w->loop) {
			if (j->done)
				j->done(j->data);
			free(j);
			j = NULL;
			atomic_fetch_sub(&w->pending, 1);
		}
		pthread_mutex_lock(&w->lock);
		w->running--;
		w->idle++;
		if (j) {
			workpool__push(&w->ended, j);
			uint64_t one = 1;
			if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
				log_warn("workpool: eventfd: %s", strerror(errno));
		}
		pthread_cond_broadcast(&w->ended_cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Runs the done() of every job that has ended, in order (on the loop). */
static void workpool__finish(struct workpool *w)
{
	pthread_mutex_lock(&w->lock);
	struct workpool__job *j = w->ended.head;
	w->ended.head = w->ended.tail = NULL;
	pthread_mutex_unlock(&w->lock);
	while (j) {
		struct workpool__job *next = j->next;
		if (j->done)
			j->done(j->data);
		free(j);
		atomic_fetch_sub(&w->pending, 1);
		j = next;
	}
}

static void workpool__on_event(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	uint64_t n;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("workpool: eventfd: %s", strerror(errno));
	workpool__finish(data);
}

struct workpool *workpool_new(const struct workpool_opts *o, struct error **err)
{
	struct workpool *w = xcalloc(1, sizeof(*w));
	w->loop = o->loop;
	w->efd = -1;
	w->max = o->threads ? o->threads : 1;
	w->on_demand = o->on_demand;
	w->stack_size = o->stack_size;
	w->low_pause_ms = o->low_pause_ms;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->work, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&w->ended_cond, NULL);
	if (w->loop) {
		w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->efd < 0) {
			error_set(err, errno, "eventfd: %s", strerror(errno));
			workpool_free(w);
			return NULL;
		}
		if (loop_add_fd(w->loop, w->efd, LOOP_READ, workpool__on_event, w, err) < 0) {
			close(w->efd);
			w->efd = -1;
			workpool_free(w);
			return NULL;
		}
	}
	return w;
}

/* One more thread (under lock). */
static int workpool__add_thread(struct workpool *w)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (w->stack_size)
		pthread_attr_setstacksize(&attr, w->stack_size);
	/* the thread starts with every signal blocked */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&w->threads[w->nthreads], &attr, workpool__thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0)
		return r;
	w->nthreads++;
	w->idle++;
	return 0;
}

/* On demand: one more thread if the idle ones are fewer than the jobs
 * waiting (under lock). */
static void workpool__grow(struct workpool *w)
{
	if (!w->started || !w->on_demand || w->nqueued <= w->idle || w->nthreads >= w->max)
		return;
	int r = workpool__add_thread(w);
	if (r == 0)
		return;
	/* the threads there are take the job; with none, nothing would */
	if (w->nthreads == 0)
		abort(); /* as for memory: no half-handled path */
	log_warn("workpool: cannot start a thread: %s", strerror(r));
}

int workpool_start(struct workpool *w, unsigned threads, struct error **err)
{
	pthread_mutex_lock(&w->lock);
	if (threads && !w->started)
		w->max = threads;
	w->threads = xrealloc(w->threads, w->max * sizeof(*w->threads));
	w->started = true;
	int r = 0;
	if (w->on_demand) {
		while (r == 0 && w->nqueued > w->idle && w->nthreads < w->max)
			r = workpool__add_thread(w);
	} else {
		while (r == 0 && w->nthreads < w->max)
			r = workpool__add_thread(w);
	}
	pthread_mutex_unlock(&w->lock);
	if (r != 0)
		return error_set(err, r, "cannot start a worker: %s", strerror(r));
	return 0;
}

void workpool_submit(struct workpool *w, workpool_fn run, workpool_fn done, void *data,
		     unsigned flags)
{
	struct workpool__job *j = xcalloc(1, sizeof(*j));
	j->run = run;
	j->done = done;
	j->data = data;
	atomic_fetch_add(&w->pending, 1);
	pthread_mutex_lock(&w->lock);
	if (flags & WORKPOOL_LOW) {
		workpool__push(&w->low, j);
	} else {
		workpool__push(&w->high, j);
		w->last_high_ms = loop_now_ms();
	}
	w->nqueued++;
	workpool__grow(w);
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
}

void workpool_drain(struct workpool *w)
{
	while (atomic_load(&w->pending)) {
		pthread_mutex_lock(&w->lock);
		while (!w->ended.head && (w->running || w->nqueued))
			pthread_cond_wait(&w->ended_cond, &w->lock);
		bool idle = !w->ended.head && !w->running && !w->nqueued;
		pthread_mutex_unlock(&w->lock);
		if (idle && !w->loop)
			break;
		workpool__finish(w);
		if (idle)
			break;
	}
}

size_t workpool_pending(const struct workpool *w)
{
	return atomic_load(&((struct workpool *)w)->pending);
}

unsigned workpool_max(const struct workpool *w)
{
	return w->max;
}

void workpool_free(struct workpool *w)
{
	if (!w)
		return;
	if (w->started)
		workpool_drain(w);
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	/* never started: no job can run, and none of theirs is waited for */
	struct workpool__list *lists[] = {&w->high, &w->low, &w->ended};
	for (size_t i = 0; i < 3; i++) {
		struct workpool__job *j;
		while ((j = workpool__pop(lists[i])))
			free(j);
	}
	if (w->efd >= 0) {
		loop_del_fd(w->loop, w->efd);
		close(w->efd);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->ended_cond);
	free(w->threads);
	free(w);
}
