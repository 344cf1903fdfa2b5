/* errors.c: see errors.h. */
#include "errors.h"
#include "log.h"
#include "timefmt.h"
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct errors {
	pthread_mutex_t lock;
	char *lines[ERRORS_MAX]; /* a ring of rejection lines */
	size_t next;		 /* where the next line goes */
	size_t len;		 /* bytes in the ring */
};

struct errors *errors_new(void)
{
	struct errors *x = xcalloc(1, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

void errors_free(struct errors *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < ERRORS_MAX; i++)
		free(x->lines[i]);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

size_t errors_add(struct errors *x, const char *path, const struct error *e)
{
	char ts[RFC3339_SIZE];
	rfc3339_format(time(NULL), ts);
	char *line = xasprintf("%s %s: %s\n", ts, path, e ? e->msg : "rejected");
	log_warn("rejected %s: %s", path, e ? e->msg : "?");
	pthread_mutex_lock(&x->lock);
	if (x->lines[x->next])
		x->len -= strlen(x->lines[x->next]);
	free(x->lines[x->next]);
	x->lines[x->next] = line;
	x->len += strlen(line);
	x->next = (x->next + 1) % ERRORS_MAX;
	size_t len = x->len;
	pthread_mutex_unlock(&x->lock);
	return len;
}

char *errors_text(struct errors *x, size_t *len)
{
	pthread_mutex_lock(&x->lock);
	char *buf = xmalloc(x->len + 1), *p = buf;
	*p = '\0';
	for (size_t i = 0; i < ERRORS_MAX; i++) {
		const char *l = x->lines[(x->next + i) % ERRORS_MAX];
		if (l)
			p = stpcpy(p, l);
	}
	*len = (size_t)(p - buf);
	pthread_mutex_unlock(&x->lock);
	return buf;
}
