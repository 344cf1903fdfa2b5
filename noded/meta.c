/* meta.c: times and conditions as Kubernetes writes them. */
#include "meta.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void meta_time_format(time_t t, char buf[META_TIME_SIZE])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, META_TIME_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void meta_micro_time_format(time_t t, char buf[META_TIME_SIZE])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, META_TIME_SIZE, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
}

int meta_time_parse(const char *s, time_t *out)
{
	struct tm tm = {0};
	if (!s)
		return -1;
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	long offset = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
		   isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
		   isdigit((unsigned char)p[5])) {
		long h = (p[1] - '0') * 10 + (p[2] - '0');
		long m = (p[4] - '0') * 10 + (p[5] - '0');
		offset = (h * 3600 + m * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	*out = timegm(&tm) - offset;
	return 0;
}

const struct ynode *meta_condition_find(const struct ynode *conditions, const char *type)
{
	if (!conditions || conditions->type != YNODE_SEQ)
		return NULL;
	for (size_t i = 0; i < conditions->n; i++) {
		const char *t = ynode_path_str(ynode_item(conditions, i), "type");
		if (t && strcmp(t, type) == 0)
			return ynode_item(conditions, i);
	}
	return NULL;
}

struct ynode *meta_condition_build(const struct meta_condition *c, const struct ynode *old,
				   const char *now, unsigned flags)
{
	struct ynode *m = ynode_new_map();
	ynode_set(m, "type", ynode_new_str(c->type));
	ynode_set(m, "status", ynode_new_str(c->status));
	if (flags & META_COND_HEARTBEAT)
		ynode_set(m, "lastHeartbeatTime", ynode_new_str(now));
	if (flags & META_COND_PROBE_TIME)
		ynode_set(m, "lastProbeTime", ynode_new_plain("null"));
	const char *old_status = ynode_path_str(old, "status");
	const char *old_time = ynode_path_str(old, "lastTransitionTime");
	bool held = old_status && old_time && strcmp(old_status, c->status) == 0;
	ynode_set(m, "lastTransitionTime", ynode_new_str(held ? old_time : now));
	if (c->reason)
		ynode_set(m, "reason", ynode_new_str(c->reason));
	if (c->message)
		ynode_set(m, "message", ynode_new_str(c->message));
	return m;
}
