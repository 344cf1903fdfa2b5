/* podevents.c: v1 Events about pods' containers, written through the
 * mount. Never writes anything but new Event objects. */
#include "podevents.h"
#include "log.h"
#include "objio.h"
#include "timefmt.h"
#include "treepath.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void podevents_record(const char *mount, const char *node, const struct ynode *pod,
		      const char *container, bool init, const char *type, const char *reason,
		      const char *message)
{
	const char *ns = ynode_path_str(pod, "metadata.namespace");
	const char *name = ynode_path_str(pod, "metadata.name");
	const char *uid = ynode_path_str(pod, "metadata.uid");
	if (!ns || !name || !mount)
		return;
	static unsigned seq;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* as client-go names events: the object's name, a dot, a unique hex */
	unsigned long long u =
	    ((unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec) ^
	    (unsigned long long)(++seq);
	cleanup_free char *ename = xasprintf("%.200s.%llx", name, u);
	char now[RFC3339_SIZE];
	rfc3339_format(ts.tv_sec, now);
	struct ynode *e = ynode_new_map();
	ynode_set(e, "apiVersion", ynode_new_str("v1"));
	ynode_set(e, "kind", ynode_new_str("Event"));
	struct ynode *md = ynode_new_map();
	ynode_set(md, "name", ynode_new_str(ename));
	ynode_set(md, "namespace", ynode_new_str(ns));
	ynode_set(e, "metadata", md);
	struct ynode *io = ynode_new_map();
	ynode_set(io, "apiVersion", ynode_new_str("v1"));
	ynode_set(io, "kind", ynode_new_str("Pod"));
	ynode_set(io, "name", ynode_new_str(name));
	ynode_set(io, "namespace", ynode_new_str(ns));
	if (uid)
		ynode_set(io, "uid", ynode_new_str(uid));
	if (container) {
		cleanup_free char *fp =
		    xasprintf("spec.%s{%s}", init ? "initContainers" : "containers", container);
		ynode_set(io, "fieldPath", ynode_new_str(fp));
	}
	ynode_set(e, "involvedObject", io);
	ynode_set(e, "reason", ynode_new_str(reason));
	ynode_set(e, "message", ynode_new_str(message ? message : ""));
	ynode_set(e, "type", ynode_new_str(type));
	struct ynode *src = ynode_new_map();
	ynode_set(src, "component", ynode_new_str("kubelet"));
	if (node)
		ynode_set(src, "host", ynode_new_str(node));
	ynode_set(e, "source", src);
	ynode_set(e, "firstTimestamp", ynode_new_str(now));
	ynode_set(e, "lastTimestamp", ynode_new_str(now));
	ynode_set(e, "count", ynode_new_int(1));
	ynode_set(e, "reportingComponent", ynode_new_str("kubelet"));
	if (node)
		ynode_set(e, "reportingInstance", ynode_new_str(node));
	cleanup_free char *rel = treepath_object("events", ns, ename);
	cleanup_free char *path = xasprintf("%s/%s", mount, rel);
	struct error *err = NULL;
	if (objio_write(mount, path, e, &err) < 0) {
		log_warn("event %s %s for pod %s/%s: %s", reason, ename, ns, name, err->msg);
		error_free(err);
	}
	ynode_free(e);
}
