/* hollow.c: the runtime of a hollow node. Nothing runs: a bound pod's init
 * containers are reported completed and its containers running and ready
 * from the first sync, as kubemark's hollow kubelet does. A container that
 * would exit (restartPolicy Never or OnFailure, a command that ends) stays
 * running: hollow nodes measure the scheduler and controllers, not
 * lifecycles. Container IDs derive from the pod's uid and the container's
 * name, so that a restarted agent reports the same containers. */
#include "fnv.h"
#include "runtime.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOLLOW_VERSION "hollow://0.1.0"

static bool hollow__ready(struct runtime *rt, const char **reason, const char **message)
{
	(void)rt;
	*reason = "KubeletReady";
	*message = "kubelet is posting ready status";
	return true;
}

static uint64_t hollow__fnv(const char *a, const char *b)
{
	uint64_t h = fnv1a_add(FNV1A_BASIS, a, strlen(a));
	h = fnv1a_add(h, "/", 1);
	return fnv1a_add(h, b, strlen(b));
}

static void hollow__fill(struct pod_container_report *c, const char *uid, bool init)
{
	c->container_id =
	    xasprintf("hollow://%016llx%016llx", (unsigned long long)hollow__fnv(uid, c->name),
		      (unsigned long long)hollow__fnv(c->name, uid));
	c->image_id = xasprintf("hollow://%s", c->image);
	/* started and finished "now", as the status is built */
	if (init) {
		c->state = POD_CONTAINER_TERMINATED;
		c->exit_code = 0;
		c->reason = xstrdup("Completed");
		c->ready = true;
	} else {
		c->state = POD_CONTAINER_RUNNING;
		c->ready = true;
		c->started = true;
	}
}

static int hollow__sync_pod(struct runtime *rt, const char *key, const struct ynode *pod,
			    const char *pod_ip, struct pod_report *out, struct error **err)
{
	(void)rt;
	(void)key;
	(void)pod_ip;
	(void)err;
	const char *uid = ynode_path_str(pod, "metadata.uid");
	pod_report_from_spec(out, pod);
	out->sandbox_ready = true;
	for (size_t i = 0; i < out->ninit; i++)
		hollow__fill(&out->init[i], uid ? uid : "", true);
	for (size_t i = 0; i < out->ncontainers; i++)
		hollow__fill(&out->containers[i], uid ? uid : "", false);
	return 0;
}

static void hollow__kill_pod(struct runtime *rt, const char *key, const char *uid)
{
	(void)rt;
	(void)key;
	(void)uid;
}

static void hollow__free(struct runtime *rt)
{
	free(rt);
}

static const struct runtime_ops hollow_ops = {
    .ready = hollow__ready,
    .sync_pod = hollow__sync_pod,
    .kill_pod = hollow__kill_pod,
    .free = hollow__free,
};

struct runtime *runtime_hollow_new(void)
{
	struct runtime *rt = xcalloc(1, sizeof(*rt));
	rt->ops = &hollow_ops;
	rt->name = "hollow";
	rt->version = HOLLOW_VERSION;
	rt->wants_ip = true;
	return rt;
}

void runtime_free(struct runtime *rt)
{
	if (rt)
		rt->ops->free(rt);
}

void runtime_freep(struct runtime **rt)
{
	runtime_free(*rt);
	*rt = NULL;
}
