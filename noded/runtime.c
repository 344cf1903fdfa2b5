/* runtime.c: the real runtime, pods as a pause process and systemd-nspawn
 * containers (DESIGN.md, "Nodes and pods"; issue 3).
 *
 * Not built yet. Until it is, this runtime says so instead of pretending:
 * the node reports Ready=False (KubeletNotReady) and every container of a
 * bound pod waits with reason ContainerRuntimeNotReady, so that the pod
 * stays Pending with a clear reason and no address. It must never touch the
 * host's network: when it grows, it follows DESIGN.md's "Networking rules
 * for tests" (corral's own bridge and veths, unreachable routes for the pod
 * and service ranges, forwarded pod traffic dropped, all of it removed on
 * stop). */
#include "runtime.h"
#include "util.h"

#include <stdlib.h>

#define NSPAWN_NOT_READY_MESSAGE                                                                   \
	"corral-noded cannot run containers on this node yet: its systemd-nspawn runtime is "      \
	"not built; run hollow nodes (--hollow) meanwhile"

static bool nspawn__ready(struct runtime *rt, const char **reason, const char **message)
{
	(void)rt;
	*reason = "KubeletNotReady";
	*message = "container runtime is not ready: " NSPAWN_NOT_READY_MESSAGE;
	return false;
}

static int nspawn__sync_pod(struct runtime *rt, const char *key, const struct ynode *pod,
			    const char *pod_ip, struct pod_report *out, struct error **err)
{
	(void)rt;
	(void)key;
	(void)pod_ip;
	(void)err;
	pod_report_from_spec(out, pod);
	out->sandbox_ready = false;
	struct pod_container_report *lists[] = {out->init, out->containers};
	size_t counts[] = {out->ninit, out->ncontainers};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			struct pod_container_report *c = &lists[l][i];
			c->state = POD_CONTAINER_WAITING;
			c->reason = xstrdup("ContainerRuntimeNotReady");
			c->message = xstrdup(NSPAWN_NOT_READY_MESSAGE);
		}
	}
	return 0;
}

static void nspawn__kill_pod(struct runtime *rt, const char *key, const char *uid)
{
	(void)rt;
	(void)key;
	(void)uid;
}

static void nspawn__free(struct runtime *rt)
{
	free(rt);
}

static const struct runtime_ops nspawn_ops = {
    .ready = nspawn__ready,
    .sync_pod = nspawn__sync_pod,
    .kill_pod = nspawn__kill_pod,
    .free = nspawn__free,
};

struct runtime *runtime_nspawn_new(void)
{
	struct runtime *rt = xcalloc(1, sizeof(*rt));
	rt->ops = &nspawn_ops;
	rt->name = "nspawn";
	rt->version = "systemd-nspawn://not-ready";
	rt->wants_ip = false;
	return rt;
}
