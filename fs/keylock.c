/* keylock.c: the key locks of keylock.h: one entry per key that some
 * writer holds or waits for, served in ticket order. */
#include "keylock.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct keylocks__one {
	char *key;
	unsigned refs;		/* holder and waiters */
	uint64_t next, serving; /* tickets: first come, first served */
	pthread_cond_t cond;
	struct keylocks__one *next_lock;
};

struct keylocks {
	pthread_mutex_t lock;
	struct keylocks__one *keys; /* as many as writers */
};

struct keylocks *keylocks_new(void)
{
	struct keylocks *k = xcalloc(1, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	return k;
}

void keylocks_free(struct keylocks *k)
{
	if (!k)
		return;
	pthread_mutex_destroy(&k->lock);
	free(k);
}

void keylocks_lock(struct keylocks *k, const char *key)
{
	pthread_mutex_lock(&k->lock);
	struct keylocks__one *l = k->keys;
	while (l && strcmp(l->key, key) != 0)
		l = l->next_lock;
	if (!l) {
		l = xcalloc(1, sizeof(*l));
		l->key = xstrdup(key);
		pthread_cond_init(&l->cond, NULL);
		l->next_lock = k->keys;
		k->keys = l;
	}
	l->refs++;
	uint64_t ticket = l->next++;
	while (l->serving != ticket)
		pthread_cond_wait(&l->cond, &k->lock);
	pthread_mutex_unlock(&k->lock);
}

void keylocks_unlock(struct keylocks *k, const char *key)
{
	pthread_mutex_lock(&k->lock);
	struct keylocks__one **p = &k->keys;
	while (*p && strcmp((*p)->key, key) != 0)
		p = &(*p)->next_lock;
	struct keylocks__one *l = *p;
	if (l) {
		l->serving++;
		if (--l->refs > 0) {
			pthread_cond_broadcast(&l->cond);
		} else {
			*p = l->next_lock;
			pthread_cond_destroy(&l->cond);
			free(l->key);
			free(l);
		}
	}
	pthread_mutex_unlock(&k->lock);
}
