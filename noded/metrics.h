/* metrics.h: the node's resource metrics, as metrics-server serves them
 * (metrics.k8s.io/v1beta1), written as files.
 *
 * Every metrics-interval (15 s) the agent reads each running container's
 * cgroup (cgroup.h: CPU time and memory working set), turns the CPU time
 * since the last reading into a rate (nanocores) and writes one PodMetrics
 * per pod, namespaces/NS/podmetrics/POD.yaml, and the node's NodeMetrics,
 * nodemetrics/NODE.yaml: timestamp (the reading), window (the time the
 * rate is over), usage cpu "312345678n" and memory "9240Ki", as
 * metrics-server prints them. A pod's first reading has no rate yet: its
 * PodMetrics appears at the second. Each object has an ownerReference to
 * its pod or node, so the garbage collector removes it with them; the
 * agent removes the PodMetrics of a pod it stops running at once.
 *
 * A hollow node runs nothing: its containers use what the pod's
 * annotations hollow.corral.io/cpu and hollow.corral.io/memory say (a
 * quantity for the whole pod, shared by its containers), 0 without them,
 * so that tests and benchmarks can drive an autoscaler without load. The
 * node's own usage is then the sum of its pods'; a real node's is the
 * machine's (/proc/stat, /proc/meminfo).
 *
 * The pure helpers below are what the tests check. */
#ifndef CORRAL_NODED_METRICS_H
#define CORRAL_NODED_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "loop.h"
#include "ynode.h"

#define METRICS_HOLLOW_CPU    "hollow.corral.io/cpu"
#define METRICS_HOLLOW_MEMORY "hollow.corral.io/memory"
#define METRICS_BUF	      48

struct pods;
struct runtime;

struct metrics_opts {
	const char *mount;
	const char *node;
	uint64_t interval_ms; /* 15000 */
	bool hollow;
};

struct metrics;

/* pods and rt stay the caller's and outlive the metrics. */
struct metrics *metrics_new(struct loop *loop, const struct metrics_opts *o, struct pods *pods,
			    struct runtime *rt);
/* Starts the timer; the first reading is at once. */
void metrics_start(struct metrics *m);
/* One reading and its writes now (the timer's work). */
void metrics_collect(struct metrics *m);
void metrics_free(struct metrics *m);

/* ---- pure helpers -------------------------------------------------------- */

/* The CPU rate between two readings of a counter in nanoseconds taken
 * dt_ns apart: nanocores (1e9 = one core); 0 when dt_ns is 0 or the
 * counter went back (a restarted container). */
uint64_t metrics_nanocores(uint64_t before_ns, uint64_t after_ns, uint64_t dt_ns);
/* "312345678n" */
void metrics_format_cpu(uint64_t nanocores, char buf[static METRICS_BUF]);
/* The largest binary unit that is exact, as Kubernetes' BinarySI:
 * "9Mi", "9240Ki", "1000" */
void metrics_format_memory(int64_t bytes, char buf[static METRICS_BUF]);
/* A Go duration as metrics-server's window: "15s", "1.5s", "1m0s" */
void metrics_format_window(uint64_t ms, char buf[static METRICS_BUF]);

/* One container's reading, for the objects below. */
struct metrics_container {
	const char *name;
	uint64_t nanocores;
	int64_t memory;
};

/* A PodMetrics for pod (its name, namespace, labels and uid) at time t
 * over window_ms. */
struct ynode *metrics_pod_object(const struct ynode *pod, const struct metrics_container *c,
				 size_t n, int64_t t, uint64_t window_ms);
/* A NodeMetrics for node (its uid may be NULL). */
struct ynode *metrics_node_object(const char *node, const char *uid, uint64_t nanocores,
				  int64_t memory, int64_t t, uint64_t window_ms);

/* The machine's CPU time (the busy jiffies of /proc/stat's cpu line, in
 * nanoseconds) and memory working set (MemTotal less MemFree and
 * Inactive(file) of /proc/meminfo) from those files' text. */
int metrics_parse_proc_stat(const char *text, uint64_t *cpu_ns, struct error **err);
int metrics_parse_meminfo(const char *text, int64_t *working_set, struct error **err);

#endif
