/* cgroup.c: cgroup v1 and v2, by their files. */
#include "cgroup.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CGROUP_ROOT	  "/sys/fs/cgroup"
#define CGROUP_CPU_PERIOD 100000

static bool cgroup__v2(void)
{
	return access(CGROUP_ROOT "/cgroup.controllers", F_OK) == 0;
}

/* The hierarchies' roots: v1 per controller, v2 the one. */
static size_t cgroup__roots(const char **roots)
{
	if (cgroup__v2()) {
		roots[0] = CGROUP_ROOT;
		return 1;
	}
	/* cpuacct for the CPU time metrics read (where it is cpu's
	 * hierarchy too, the folder is made once and seen twice) */
	static const char *const v1[] = {CGROUP_ROOT "/memory", CGROUP_ROOT "/cpu",
					 CGROUP_ROOT "/pids", CGROUP_ROOT "/cpuacct"};
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(v1); i++)
		if (access(v1[i], F_OK) == 0)
			roots[n++] = v1[i];
	return n;
}

static int cgroup__write(const char *dir, const char *file, const char *value)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, value, strlen(value));
	int e = errno;
	close(fd);
	return w == (ssize_t)strlen(value) ? 0 : -e;
}

static int cgroup__fail(struct error **err, const char *dir, const char *file, int r)
{
	return error_set(err, -r, "cgroup %s/%s: %s", dir, file, strerror(-r));
}

int cgroup_create(const char *rel, const struct cgroup_limits *l, struct error **err)
{
	const char *roots[4];
	size_t n = cgroup__roots(roots);
	if (n == 0)
		return error_set(err, ENOENT, "no cgroup hierarchy under " CGROUP_ROOT);
	bool v2 = cgroup__v2();
	char buf[64];
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *dir = xasprintf("%s/%s", roots[i], rel);
		if (v2) {
			/* enable the controllers on every level above the leaf */
			cleanup_free char *p = xstrdup(rel);
			char *s = p;
			cgroup__write(CGROUP_ROOT, "cgroup.subtree_control", "+memory +cpu +pids");
			while ((s = strchr(s, '/'))) {
				*s = '\0';
				cleanup_free char *lvl = xasprintf("%s/%s", CGROUP_ROOT, p);
				mkdir(lvl, 0755);
				cgroup__write(lvl, "cgroup.subtree_control", "+memory +cpu +pids");
				*s++ = '/';
			}
		}
		int r = util_mkdir_p(dir, 0755);
		if (r < 0)
			return cgroup__fail(err, dir, "", r);
		const char *base = strrchr(roots[i], '/') + 1;
		if (v2 || strcmp(base, "memory") == 0) {
			if (l->memory_bytes > 0) {
				snprintf(buf, sizeof(buf), "%" PRId64, l->memory_bytes);
				const char *f = v2 ? "memory.max" : "memory.limit_in_bytes";
				if ((r = cgroup__write(dir, f, buf)) < 0)
					return cgroup__fail(err, dir, f, r);
				if (v2)
					cgroup__write(dir, "memory.swap.max", "0");
				else
					cgroup__write(dir, "memory.memsw.limit_in_bytes", buf);
			}
		}
		if (v2 || strcmp(base, "cpu") == 0) {
			if (l->cpu_milli > 0) {
				int64_t quota = l->cpu_milli * CGROUP_CPU_PERIOD / 1000;
				if (quota < 1000)
					quota = 1000;
				if (v2) {
					snprintf(buf, sizeof(buf), "%" PRId64 " %d", quota,
						 CGROUP_CPU_PERIOD);
					r = cgroup__write(dir, "cpu.max", buf);
				} else {
					snprintf(buf, sizeof(buf), "%d", CGROUP_CPU_PERIOD);
					cgroup__write(dir, "cpu.cfs_period_us", buf);
					snprintf(buf, sizeof(buf), "%" PRId64, quota);
					r = cgroup__write(dir, "cpu.cfs_quota_us", buf);
				}
				if (r < 0)
					return cgroup__fail(err, dir, "cpu quota", r);
			}
			if (l->cpu_request_milli > 0) {
				int64_t shares = l->cpu_request_milli * 1024 / 1000;
				if (shares < 2)
					shares = 2;
				if (v2)
					snprintf(buf, sizeof(buf), "%" PRId64,
						 1 + (shares - 2) * 9999 / 262142);
				else
					snprintf(buf, sizeof(buf), "%" PRId64, shares);
				cgroup__write(dir, v2 ? "cpu.weight" : "cpu.shares", buf);
			}
		}
	}
	return 0;
}

int cgroup_enter(const char *rel)
{
	const char *roots[4];
	size_t n = cgroup__roots(roots);
	char pid[32], dir[512];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	int ret = 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", roots[i], rel);
		if (cgroup__write(dir, "cgroup.procs", pid) < 0)
			ret = -1;
	}
	return ret;
}

/* The pids in the cgroup's first hierarchy; count returned. */
static size_t cgroup__pids(const char *rel, pid_t *pids, size_t max)
{
	const char *roots[4];
	if (cgroup__roots(roots) == 0)
		return 0;
	cleanup_free char *path = xasprintf("%s/%s/cgroup.procs", roots[0], rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = 0;
	int pid;
	while (n < max && fscanf(f, "%d", &pid) == 1)
		pids[n++] = pid;
	fclose(f);
	return n;
}

bool cgroup_populated(const char *rel)
{
	pid_t one;
	return cgroup__pids(rel, &one, 1) > 0;
}

bool cgroup_kill(const char *rel)
{
	pid_t pids[256];
	for (int tries = 0; tries < 50; tries++) {
		size_t n = cgroup__pids(rel, pids, ARRAY_SIZE(pids));
		if (n == 0)
			return true;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		usleep(tries < 10 ? 2000 : 20000);
	}
	return !cgroup_populated(rel);
}

void cgroup_remove(const char *rel)
{
	const char *roots[4];
	size_t n = cgroup__roots(roots);
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *p = xstrdup(rel);
		for (;;) {
			cleanup_free char *dir = xasprintf("%s/%s", roots[i], p);
			if (rmdir(dir) < 0 && errno != ENOENT)
				break;
			char *slash = strrchr(p, '/');
			if (!slash || strcmp(p, "corral") == 0)
				break;
			*slash = '\0';
			if (!strchr(p, '/'))
				break; /* keep corral/ itself */
		}
	}
}

static uint64_t cgroup__stat_key(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char name[64];
	unsigned long long v, found = 0;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (strcmp(name, key) == 0)
			found = v;
	}
	fclose(f);
	return found;
}

uint64_t cgroup_oom_kills(const char *rel)
{
	cleanup_free char *path = cgroup__v2()
				      ? xasprintf(CGROUP_ROOT "/%s/memory.events", rel)
				      : xasprintf(CGROUP_ROOT "/memory/%s/memory.oom_control", rel);
	return cgroup__stat_key(path, "oom_kill");
}

int64_t cgroup_memory_usage(const char *rel)
{
	cleanup_free char *path =
	    cgroup__v2() ? xasprintf(CGROUP_ROOT "/%s/memory.current", rel)
			 : xasprintf(CGROUP_ROOT "/memory/%s/memory.usage_in_bytes", rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long long v = -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* ---- usage --------------------------------------------------------------- */

/* The one unsigned number of dir/file. */
static int cgroup__read_u64(const char *dir, const char *file, uint64_t *out, struct error **err)
{
	cleanup_free char *path = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	if (!f)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	unsigned long long v;
	int n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return error_set(err, EINVAL, "%s: not a number", path);
	*out = v;
	return 0;
}

/* The value of key in a flat keyed file (memory.stat, cpu.stat). */
static int cgroup__read_key(const char *dir, const char *file, const char *key, uint64_t *out,
			    struct error **err)
{
	cleanup_free char *path = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	if (!f)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	char name[64];
	unsigned long long v;
	int found = 0;
	while (fscanf(f, "%63s %llu", name, &v) == 2)
		if (strcmp(name, key) == 0) {
			*out = v;
			found = 1;
			break;
		}
	fclose(f);
	if (!found)
		return error_set(err, ENOENT, "%s: no %s", path, key);
	return 0;
}

static int64_t cgroup__working_set(uint64_t usage, uint64_t inactive_file)
{
	return usage > inactive_file ? (int64_t)(usage - inactive_file) : 0;
}

int cgroup_usage_v1(const char *memory_dir, const char *cpuacct_dir, struct cgroup_usage *u,
		    struct error **err)
{
	uint64_t usage, inactive = 0;
	if (cgroup__read_u64(cpuacct_dir, "cpuacct.usage", &u->cpu_ns, err) < 0 ||
	    cgroup__read_u64(memory_dir, "memory.usage_in_bytes", &usage, err) < 0)
		return -1;
	/* a kernel without the total_ line has the cgroup's own */
	if (cgroup__read_key(memory_dir, "memory.stat", "total_inactive_file", &inactive, NULL) < 0)
		cgroup__read_key(memory_dir, "memory.stat", "inactive_file", &inactive, NULL);
	u->memory_working_set = cgroup__working_set(usage, inactive);
	return 0;
}

int cgroup_usage_v2(const char *dir, struct cgroup_usage *u, struct error **err)
{
	uint64_t usec, usage, inactive = 0;
	if (cgroup__read_key(dir, "cpu.stat", "usage_usec", &usec, err) < 0 ||
	    cgroup__read_u64(dir, "memory.current", &usage, err) < 0)
		return -1;
	cgroup__read_key(dir, "memory.stat", "inactive_file", &inactive, NULL);
	u->cpu_ns = usec * 1000;
	u->memory_working_set = cgroup__working_set(usage, inactive);
	return 0;
}

int cgroup_usage(const char *rel, struct cgroup_usage *u, struct error **err)
{
	if (cgroup__v2()) {
		cleanup_free char *dir = xasprintf(CGROUP_ROOT "/%s", rel);
		return cgroup_usage_v2(dir, u, err);
	}
	cleanup_free char *mem = xasprintf(CGROUP_ROOT "/memory/%s", rel);
	cleanup_free char *acct = xasprintf(CGROUP_ROOT "/cpuacct/%s", rel);
	return cgroup_usage_v1(mem, acct, u, err);
}
