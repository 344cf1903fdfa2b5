/* workers.c: see workers.h. */
#include "workers.h"
#include "util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct workers__job {
	void (*fn)(void *arg);
	void *arg;
	struct workers__job *next;
};

struct workers {
	pthread_t *threads;
	size_t n;
	bool stopping;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct workers__job *head, **tail; /* first in, first out */
};

struct workers *workers_new(void)
{
	struct workers *w = xcalloc(1, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->tail = &w->head;
	return w;
}

void workers_queue(struct workers *w, void (*fn)(void *arg), void *arg)
{
	struct workers__job *j = xcalloc(1, sizeof(*j));
	j->fn = fn;
	j->arg = arg;
	pthread_mutex_lock(&w->lock);
	*w->tail = j;
	w->tail = &j->next;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void *workers__run(void *arg)
{
	struct workers *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->head)
			break;
		struct workers__job *j = w->head;
		w->head = j->next;
		if (!w->head)
			w->tail = &w->head;
		pthread_mutex_unlock(&w->lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int workers_start(struct workers *w, size_t n, struct error **err)
{
	w->threads = xcalloc(n, sizeof(*w->threads));
	for (; w->n < n; w->n++) {
		int rc = pthread_create(&w->threads[w->n], NULL, workers__run, w);
		if (rc != 0)
			return error_set(err, rc, "cannot start a worker: %s", strerror(rc));
	}
	return 0;
}

void workers_free(struct workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < w->n; i++)
		pthread_join(w->threads[i], NULL);
	free(w->threads);
	/* With no thread started, jobs are left: the session is gone, no
	 * request of theirs can be answered. */
	while (w->head) {
		struct workers__job *j = w->head;
		w->head = j->next;
		free(j);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}
