/* machine.h: what the node agent reports about the machine it runs on:
 * capacity (cpu, memory, ephemeral storage), identity (machine-id, boot-id,
 * kernel, OS image, architecture), its address, and pressure (memory, disk,
 * pids). The parsers are pure, for tests; the readers look at /proc, /sys,
 * /etc and statvfs(3), and never change anything. */
#ifndef CORRAL_NODED_MACHINE_H
#define CORRAL_NODED_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Kubernetes' resource list of a node, in milli-units as lib/quantity. */
struct machine_resources {
	int64_t cpu;		   /* milli-cpus */
	int64_t memory;		   /* milli-bytes */
	int64_t ephemeral_storage; /* milli-bytes */
	int64_t pods;		   /* milli-pods */
};

/* The value of "Field:" in /proc/meminfo text, in bytes (the file says kB). */
int machine_meminfo_field(const char *meminfo, const char *field, int64_t *bytes);
/* PRETTY_NAME of /etc/os-release text, unquoted; "Linux" when missing.
 * Returns malloc'd text. */
char *machine_os_image(const char *os_release);
/* Go's GOARCH for a uname(2) machine: x86_64 -> amd64, aarch64 -> arm64. */
const char *machine_go_arch(const char *uname_machine);

/* Reads the machine: online cpus, MemTotal, and the size of the filesystem
 * that holds storage_path (the first of its ancestors that exists). */
int machine_read_capacity(const char *storage_path, int max_pods, struct machine_resources *cap,
			  struct error **err);
/* What pods may use, as the kubelet computes it with no reservations and
 * its default hard eviction thresholds: memory less eviction_memory bytes,
 * ephemeral storage less 10%. */
void machine_allocatable(const struct machine_resources *cap, int64_t eviction_memory,
			 struct machine_resources *alloc);

struct machine_info {
	char *machine_id;
	char *system_uuid;
	char *boot_id;
	char *kernel_version;
	char *os_image;
	const char *architecture; /* static */
};

/* Never fails: what cannot be read is left empty. */
void machine_info_read(struct machine_info *mi);
void machine_info_clear(struct machine_info *mi);

/* The address other nodes reach this one at: the IPv4 address of the
 * interface that holds the default route, else the first address of an
 * interface that is up and not a loopback, else 127.0.0.1. */
void machine_host_ip(char *buf, size_t size);

struct machine_pressure {
	bool memory; /* MemAvailable below the eviction threshold */
	bool disk;   /* under 10% of the storage filesystem's blocks, or 5% of
		      * its inodes, free */
	bool pids;   /* under 5% of pid_max left */
};

/* Pure: from /proc/meminfo text, statvfs numbers and /proc/loadavg text
 * (its fourth field, running/total threads) with pid_max. */
struct machine_pressure machine_pressure_compute(const char *meminfo, int64_t eviction_memory,
						 uint64_t blocks, uint64_t blocks_avail,
						 uint64_t files, uint64_t files_free,
						 const char *loadavg, long pid_max);
void machine_pressure_read(const char *storage_path, int64_t eviction_memory,
			   struct machine_pressure *p);

#endif
