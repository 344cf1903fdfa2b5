/* cgroup.h: one cgroup per container, where its limits apply and from
 * which nothing of it escapes a kill (DESIGN.md: "limits become cgroup
 * limits").
 *
 * A container's cgroup is corral/NODE/POD-UID/CONTAINER in every hierarchy
 * that matters: on cgroup v1 (this project's machines) memory, cpu and
 * pids, each mounted under /sys/fs/cgroup/; on a v2 machine (a
 * cgroup.controllers file at /sys/fs/cgroup) the one unified tree, with the
 * memory, cpu and pids controllers enabled down the path. */
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

#endif
