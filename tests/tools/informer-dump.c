/* informer-dump: runs lib's informer on a real mount and prints each event
 * as one line ("add dev/web", "update dev/web image=...", "delete dev/web"),
 * for tests/integration/informer.sh. Stops on SIGTERM or SIGINT. */
#include "informer.h"
#include "log.h"
#include "loop.h"
#include "ynode.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void dump__print(const char *what, const char *key, const struct ynode *obj)
{
	const char *image = ynode_path_str(obj, "spec.containers[0].image");
	printf("%s %s%s%s\n", what, key, image ? " image=" : "", image ? image : "");
	fflush(stdout);
}

static void dump__add(void *data, const char *key, const struct ynode *obj)
{
	(void)data;
	dump__print("add", key, obj);
}

static void dump__update(void *data, const char *key, const struct ynode *old,
			 const struct ynode *obj)
{
	(void)data;
	(void)old;
	dump__print("update", key, obj);
}

static void dump__delete(void *data, const char *key, const struct ynode *old)
{
	(void)data;
	(void)old;
	dump__print("delete", key, NULL);
}

static void dump__stop(struct loop *loop, int signo, void *data)
{
	(void)signo;
	(void)data;
	loop_stop(loop);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: informer-dump MOUNT PLURAL\n");
		return 2;
	}
	log_set_ident("informer-dump");
	struct error *err = NULL;
	struct loop *loop = loop_new(&err);
	if (!loop)
		log_fatal("%s", err->msg);
	if (loop_on_signal(loop, SIGTERM, dump__stop, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, dump__stop, NULL, &err) < 0)
		log_fatal("%s", err->msg);
	bool namespaced =
	    strcmp(argv[2], "nodes") != 0 && strcmp(argv[2], "persistentvolumes") != 0;
	struct informer *inf = informer_new(loop, argv[1], argv[2], namespaced);
	static const struct informer_handlers h = {dump__add, dump__update, dump__delete};
	informer_add_handlers(inf, &h, NULL);
	informer_set_resync(inf, 2000);
	if (informer_start(inf, &err) < 0)
		log_fatal("%s", err->msg);
	printf("synced %zu\n", informer_count(inf));
	fflush(stdout);
	int r = loop_run(loop, &err);
	if (r < 0)
		log_error("%s", err->msg);
	informer_free(inf);
	loop_free(loop);
	return r < 0 ? 1 : 0;
}
