/* podlogs.c: see podlogs.h. */
#include "podlogs.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

bool podlogs_instance(const char *dirname, const char *ns, char **pod)
{
	size_t nl = strlen(ns);
	if (nl == 0 || strncmp(dirname, ns, nl) != 0 || dirname[nl] != '_')
		return false;
	const char *name = dirname + nl + 1;
	const char *us = strchr(name, '_');
	if (!us || us == name || !us[1])
		return false;
	if (pod)
		*pod = xstrndup(name, (size_t)(us - name));
	return true;
}

bool podlogs_newer(const char *a, const struct timespec *ma, const char *b,
		   const struct timespec *mb)
{
	if (!b)
		return true;
	if (ma->tv_sec != mb->tv_sec)
		return ma->tv_sec > mb->tv_sec;
	if (ma->tv_nsec != mb->tv_nsec)
		return ma->tv_nsec > mb->tv_nsec;
	return strcmp(a, b) > 0;
}

long podlogs_newest_restart(DIR *d)
{
	long best = -1;
	struct dirent *de;
	rewinddir(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char *end;
		long r = strtol(de->d_name, &end, 10);
		if (strcmp(end, ".log") == 0 && r > best)
			best = r;
	}
	return best;
}
