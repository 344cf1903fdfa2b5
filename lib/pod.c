/* pod.c: a Pod's state as its status says it (see pod.h). */
#include "pod.h"
#include "conditions.h"
#include "timefmt.h"

#include <string.h>

bool object_is_deleting(const struct ynode *o)
{
	const struct ynode *dt = ynode_path(o, "metadata.deletionTimestamp");
	return !ynode_is_null(dt) && dt->type == YNODE_SCALAR && dt->len;
}

bool pod_is_terminal(const struct ynode *pod)
{
	const char *phase = ynode_path_str(pod, "status.phase");
	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

bool pod_is_active(const struct ynode *pod)
{
	return !pod_is_terminal(pod) && !object_is_deleting(pod);
}

bool pod_is_ready(const struct ynode *pod, int64_t *since)
{
	if (since)
		*since = -1;
	const struct ynode *c = condition_find(ynode_path(pod, "status.conditions"), "Ready");
	if (!c)
		return false;
	time_t t;
	if (since && rfc3339_parse(ynode_str(ynode_get(c, "lastTransitionTime")), &t) == 0)
		*since = (int64_t)t;
	return condition_field_is(c, "status", "True");
}

bool pod_is_available(const struct ynode *pod, long long min_ready, int64_t now, int64_t *wait_s)
{
	int64_t since;
	if (wait_s)
		*wait_s = 0;
	if (!pod_is_ready(pod, &since))
		return false;
	if (min_ready <= 0)
		return true;
	if (since < 0)
		return false; /* ready, but since when is unknown: wait for a status that says */
	int64_t left = since + min_ready - now;
	if (left <= 0)
		return true;
	if (wait_s)
		*wait_s = left;
	return false;
}

const struct ynode *pod_container(const struct ynode *pod, const char *name)
{
	static const char *const lists[] = {"spec.containers", "spec.initContainers",
					    "spec.ephemeralContainers"};
	for (size_t l = 0; name && l < sizeof(lists) / sizeof(lists[0]); l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const char *n = ynode_path_str(ynode_item(cs, i), "name");
			if (n && strcmp(n, name) == 0)
				return ynode_item(cs, i);
		}
	}
	return NULL;
}
