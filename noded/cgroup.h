/* cgroup.h: one cgroup per container, where its limits apply and from
 * which nothing of it escapes a kill (DESIGN.md: "limits become cgroup
 * limits").
 *
 * A container's cgroup is corral/NODE/POD-UID/CONTAINER in every hierarchy
 * that matters: on cgroup v1 (this project's machines) memory, cpu and
 * pids, each mounted under /sys/fs/cgroup/; on a v2 machine (a
 * cgroup.controllers file at /sys/fs/cgroup) the one unified tree, with the
 * memory, cpu and pids controllers enabled down the path. On v1 the
 * cpuacct hierarchy holds the container too, for its CPU time (where cpu
 * and cpuacct are mounted apart).
 *
 * The usage readers (cgroup_usage_v1/_v2) read the accounting files of one
 * container's folders, as cadvisor does for the kubelet: CPU time is
 * cpuacct.usage (v1) or cpu.stat's usage_usec (v2); the memory working
 * set is the usage (memory.usage_in_bytes, memory.current) less the
 * inactive file pages of memory.stat (total_inactive_file on v1,
 * inactive_file on v2), never below 0. They take folders, so that tests
 * read fixtures. */
#ifndef CORRAL_NODED_CGROUP_H
#define CORRAL_NODED_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct cgroup_limits {
	int64_t memory_bytes;	   /* 0: none */
	int64_t cpu_milli;	   /* limit; 0: none */
	int64_t cpu_request_milli; /* shares / weight; 0: the default */
};

/* Makes the container's cgroup (relative path "corral/...") and writes its
 * limits. */
int cgroup_create(const char *rel, const struct cgroup_limits *l, struct error **err);
/* Moves the calling process in (called in a child between fork and exec). */
int cgroup_enter(const char *rel);
/* SIGKILLs every process in it until none is left (or tries run out):
 * true when it is empty. */
bool cgroup_kill(const char *rel);
/* Removes it, and its parents up to corral/ when they are empty. */
void cgroup_remove(const char *rel);
/* How many times the kernel's OOM killer struck in it. */
uint64_t cgroup_oom_kills(const char *rel);
/* Memory in use (bytes), or -1. */
int64_t cgroup_memory_usage(const char *rel);
/* Whether it has processes. */
bool cgroup_populated(const char *rel);

/* What a container has used. */
struct cgroup_usage {
	uint64_t cpu_ns;	    /* CPU time since it started, nanoseconds */
	int64_t memory_working_set; /* bytes */
};

/* From a v1 machine's memory and cpuacct folders of one cgroup. */
int cgroup_usage_v1(const char *memory_dir, const char *cpuacct_dir, struct cgroup_usage *u,
		    struct error **err);
/* From a v2 cgroup's folder. */
int cgroup_usage_v2(const char *dir, struct cgroup_usage *u, struct error **err);
/* The container's (rel: "corral/..."), on this machine's hierarchy. */
int cgroup_usage(const char *rel, struct cgroup_usage *u, struct error **err);

#endif
