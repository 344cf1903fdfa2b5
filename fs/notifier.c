/* notifier.c: see notifier.h. */
#include "notifier.h"
#include "util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct notifier__inval {
	uint64_t parent; /* the folder, or the inode when name is NULL */
	char *name;
	struct notifier__inval *next;
};

struct notifier {
	struct fuse_session *se;
	pthread_t thread;
	bool started, stopping;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct notifier__inval *head; /* queued, newest first */
};

struct notifier *notifier_new(void)
{
	struct notifier *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->cond, NULL);
	return x;
}

static void notifier__queue(struct notifier *x, uint64_t parent, const char *name)
{
	struct notifier__inval *iv = xcalloc(1, sizeof(*iv));
	iv->parent = parent;
	iv->name = name ? xstrdup(name) : NULL;
	pthread_mutex_lock(&x->lock);
	iv->next = x->head;
	x->head = iv;
	pthread_cond_signal(&x->cond);
	pthread_mutex_unlock(&x->lock);
}

void notifier_inval_entry(struct notifier *x, uint64_t parent, const char *name)
{
	notifier__queue(x, parent, name);
}

void notifier_inval_inode(struct notifier *x, uint64_t ino)
{
	notifier__queue(x, ino, NULL);
}

static void notifier__free_list(struct notifier__inval *list)
{
	while (list) {
		struct notifier__inval *next = list->next;
		free(list->name);
		free(list);
		list = next;
	}
}

static void *notifier__run(void *arg)
{
	struct notifier *x = arg;
	pthread_mutex_lock(&x->lock);
	while (!x->stopping) {
		if (!x->head) {
			pthread_cond_wait(&x->cond, &x->lock);
			continue;
		}
		struct notifier__inval *list = x->head;
		x->head = NULL;
		pthread_mutex_unlock(&x->lock);
		for (struct notifier__inval *iv = list; iv; iv = iv->next)
			if (iv->name)
				fuse_lowlevel_notify_inval_entry(x->se, iv->parent, iv->name,
								 strlen(iv->name));
			else
				fuse_lowlevel_notify_inval_inode(x->se, iv->parent, 0, 0);
		notifier__free_list(list);
		pthread_mutex_lock(&x->lock);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

int notifier_start(struct notifier *x, struct fuse_session *se, struct error **err)
{
	x->se = se;
	int rc = pthread_create(&x->thread, NULL, notifier__run, x);
	if (rc != 0)
		return error_set(err, rc, "cannot start the notifier: %s", strerror(rc));
	x->started = true;
	return 0;
}

void notifier_free(struct notifier *x)
{
	if (!x)
		return;
	if (x->started) {
		pthread_mutex_lock(&x->lock);
		x->stopping = true;
		pthread_cond_signal(&x->cond);
		pthread_mutex_unlock(&x->lock);
		pthread_join(x->thread, NULL);
	}
	notifier__free_list(x->head);
	pthread_mutex_destroy(&x->lock);
	pthread_cond_destroy(&x->cond);
	free(x);
}
