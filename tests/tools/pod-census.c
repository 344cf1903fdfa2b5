/* pod-census: prints "<pods> <ready>" for the pods of a namespace that a
 * label selector matches, each time the count changes, as seen through
 * lib's informer (every inotify event of the mount), for the rolling
 * update bounds of tests/integration/ctrl.sh and bench/ctrl.sh.
 *   pod-census [--image IMAGE] [--bound] [--time] MOUNT NAMESPACE SELECTOR
 * --image adds a column: the pods whose first container runs IMAGE;
 * --bound one more: the pods with a spec.nodeName; --time puts the wall
 * clock in milliseconds first. Stops on SIGTERM or SIGINT. */
#include "informer.h"
#include "log.h"
#include "loop.h"
#include "selector.h"
#include "ynode.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct census {
	struct informer *inf;
	const char *ns;
	struct selector *sel;
	const char *image;
	bool bound, time;
	bool started; /* the initial listing is over: print changes */
	long total, ready, nimage, nbound;
	long last_total, last_ready, last_image, last_bound;
};

static bool census__ready(const struct ynode *pod)
{
	const struct ynode *conds = ynode_path(pod, "status.conditions");
	for (size_t i = 0; conds && conds->type == YNODE_SEQ && i < conds->n; i++) {
		const struct ynode *c = ynode_item(conds, i);
		const char *t = ynode_str(ynode_get(c, "type"));
		const char *s = ynode_str(ynode_get(c, "status"));
		if (t && s && !strcmp(t, "Ready"))
			return !strcmp(s, "True");
	}
	return false;
}

/* Counts change by each event's old and new object: O(1) per event. */
static void census__count(struct census *c, const struct ynode *pod, long sign)
{
	if (!pod || !selector_matches(c->sel, ynode_path(pod, "metadata.labels")))
		return;
	c->total += sign;
	if (census__ready(pod))
		c->ready += sign;
	const char *img = ynode_path_str(pod, "spec.containers[0].image");
	if (c->image && img && !strcmp(img, c->image))
		c->nimage += sign;
	const char *node = ynode_path_str(pod, "spec.nodeName");
	if (node && *node)
		c->nbound += sign;
}

static bool census__ns(const struct census *c, const char *key)
{
	size_t n = strlen(c->ns);
	return !strncmp(key, c->ns, n) && key[n] == '/';
}

static void census__print(struct census *c)
{
	if (!c->started)
		return;
	if (c->total == c->last_total && c->ready == c->last_ready && c->nimage == c->last_image &&
	    c->nbound == c->last_bound)
		return;
	c->last_total = c->total;
	c->last_ready = c->ready;
	c->last_image = c->nimage;
	c->last_bound = c->nbound;
	if (c->time) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("%lld ", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	}
	printf("%ld %ld", c->total, c->ready);
	if (c->image)
		printf(" %ld", c->nimage);
	if (c->bound)
		printf(" %ld", c->nbound);
	printf("\n");
	fflush(stdout);
}

static void census__add(void *data, const char *key, const struct ynode *obj)
{
	struct census *c = data;
	if (!census__ns(c, key))
		return;
	census__count(c, obj, 1);
	census__print(c);
}

static void census__update(void *data, const char *key, const struct ynode *old,
			   const struct ynode *obj)
{
	struct census *c = data;
	if (!census__ns(c, key))
		return;
	census__count(c, old, -1);
	census__count(c, obj, 1);
	census__print(c);
}

static void census__delete(void *data, const char *key, const struct ynode *old)
{
	struct census *c = data;
	if (!census__ns(c, key))
		return;
	census__count(c, old, -1);
	census__print(c);
}

static void census__stop(struct loop *loop, int signo, void *data)
{
	(void)signo;
	(void)data;
	loop_stop(loop);
}

int main(int argc, char **argv)
{
	struct census c = {.last_total = -1};
	static const struct option opts[] = {
	    {"image", required_argument, NULL, 'i'},
	    {"bound", no_argument, NULL, 'b'},
	    {"time", no_argument, NULL, 't'},
	    {NULL, 0, NULL, 0},
	};
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			c.image = optarg;
			break;
		case 'b':
			c.bound = true;
			break;
		case 't':
			c.time = true;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: pod-census [--image IMAGE] [--bound] [--time] MOUNT "
				"NAMESPACE SELECTOR\n");
		return 2;
	}
	argv += optind;
	log_set_ident("pod-census");
	c.ns = argv[1];
	struct error *err = NULL;
	if (selector_parse_string(argv[2], &c.sel, &err) < 0)
		log_fatal("%s", err->msg);
	struct loop *loop = loop_new(&err);
	if (!loop)
		log_fatal("%s", err->msg);
	if (loop_on_signal(loop, SIGTERM, census__stop, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, census__stop, NULL, &err) < 0)
		log_fatal("%s", err->msg);
	c.inf = informer_new(loop, argv[0], "pods", true);
	/* the controllers see a delete 250 ms late (an editor's save is not a
	 * delete): the census must see it before they can act on it */
	informer_set_delete_grace(c.inf, 0);
	struct informer_handlers h = {census__add, census__update, census__delete};
	informer_add_handlers(c.inf, &h, &c);
	if (informer_start(c.inf, &err) < 0)
		log_fatal("%s", err->msg);
	c.last_total = -1;
	c.started = true;
	census__print(&c);
	int r = loop_run(loop, &err);
	informer_free(c.inf);
	selector_free(c.sel);
	loop_free(loop);
	return r < 0 ? 1 : 0;
}
