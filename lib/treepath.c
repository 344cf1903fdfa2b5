/* treepath.c: object paths and store keys (see treepath.h). */
#include "treepath.h"
#include "names.h"
#include "util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TREEPATH__NSROOT "namespaces"

char *treepath_key(const char *plural, const char *ns, const char *name)
{
	if (!strcmp(plural, TREEPATH__NSROOT))
		return xasprintf(TREEPATH__NSROOT "/%s", name);
	if (ns && *ns)
		return xasprintf(TREEPATH__NSROOT "/%s/%s/%s", ns, plural, name);
	return xasprintf("%s/%s", plural, name);
}

char *treepath_folder(const char *plural, const char *ns)
{
	if (!ns || !*ns)
		return xstrdup(plural ? plural : TREEPATH__NSROOT);
	if (!plural)
		return xasprintf(TREEPATH__NSROOT "/%s", ns);
	return xasprintf(TREEPATH__NSROOT "/%s/%s", ns, plural);
}

char *treepath_object(const char *plural, const char *ns, const char *name)
{
	cleanup_free char *key = treepath_key(plural, ns, name);
	return xasprintf("%s.yaml", key);
}

int treepath_parse_key(const char *key, struct treepath *tp, struct error **err)
{
	*tp = (struct treepath){0};
	const char *parts[4];
	size_t lens[4], n = 0;
	for (const char *p = key;; n++) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 4 || !len)
			return error_set(err, EINVAL, "%s: not an object's path", key);
		parts[n] = p;
		lens[n] = len;
		if (!slash)
			break;
		p = slash + 1;
	}
	n++;
	bool nsroot =
	    lens[0] == strlen(TREEPATH__NSROOT) && !memcmp(parts[0], TREEPATH__NSROOT, lens[0]);
	if (n == 2) {
		tp->plural = xstrndup(parts[0], lens[0]);
		tp->name = xstrndup(parts[1], lens[1]);
	} else if (n == 4 && nsroot) {
		tp->ns = xstrndup(parts[1], lens[1]);
		tp->plural = xstrndup(parts[2], lens[2]);
		tp->name = xstrndup(parts[3], lens[3]);
	} else {
		return error_set(err, EINVAL, "%s: not an object's path", key);
	}
	return 0;
}

int treepath_parse(const char *path, struct treepath *tp, struct error **err)
{
	*tp = (struct treepath){0};
	const char *slash = strrchr(path, '/');
	size_t len;
	if (!names_object_file(slash ? slash + 1 : path, &len))
		return error_set(err, EINVAL, "%s: not an object's file (NAME.yaml)", path);
	cleanup_free char *key = xstrndup(path, (size_t)((slash ? slash + 1 : path) - path) + len);
	return treepath_parse_key(key, tp, err);
}

void treepath_clear(struct treepath *tp)
{
	free(tp->ns);
	free(tp->plural);
	free(tp->name);
	*tp = (struct treepath){0};
}
