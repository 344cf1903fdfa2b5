/* metrics.c: PodMetrics and NodeMetrics from the cgroups; see metrics.h.
 * Runs on the loop's thread: one reading of every container and one write
 * per pod each interval (blocking writes through the mount, as the
 * agent's other writes). */
#include "metrics.h"
#include "cgroup.h"
#include "log.h"
#include "objio.h"
#include "ownerref.h"
#include "pods.h"
#include "quantity.h"
#include "runtime.h"
#include "strmap.h"
#include "timefmt.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The last reading of one container's CPU counter. */
struct metrics__sample {
	uint64_t cpu_ns;
	uint64_t at_ns; /* monotonic */
	unsigned round;
};

struct metrics {
	struct loop *loop;
	struct loop_timer *timer;
	char *mount;
	char *node;
	uint64_t interval_ms;
	bool hollow;
	struct pods *pods;
	struct runtime *rt;
	struct strmap *samples; /* "uid/container" -> struct metrics__sample */
	struct strmap *written; /* "ns/name" of the PodMetrics we wrote -> round */
	unsigned round;
	/* the node's own last reading */
	uint64_t node_cpu_ns, node_at_ns;
	uint64_t node_nanocores;
	int64_t node_memory;
	/* this round's sums, for a hollow node */
	uint64_t sum_nanocores;
	int64_t sum_memory;
	uint64_t round_at_ns;
	int64_t round_wall;
};

/* ---- pure helpers -------------------------------------------------------- */

uint64_t metrics_nanocores(uint64_t before_ns, uint64_t after_ns, uint64_t dt_ns)
{
	if (!dt_ns || after_ns < before_ns)
		return 0;
	/* (after - before) / dt in cores, x 1e9, without overflowing */
	unsigned __int128 d = (unsigned __int128)(after_ns - before_ns) * 1000000000u;
	return (uint64_t)(d / dt_ns);
}

void metrics_format_cpu(uint64_t nanocores, char buf[static METRICS_BUF])
{
	snprintf(buf, METRICS_BUF, "%" PRIu64 "n", nanocores);
}

void metrics_format_memory(int64_t bytes, char buf[static METRICS_BUF])
{
	static const struct {
		int64_t unit;
		const char *suffix;
	} units[] = {{1LL << 40, "Ti"}, {1LL << 30, "Gi"}, {1LL << 20, "Mi"}, {1LL << 10, "Ki"}};
	if (bytes < 0)
		bytes = 0;
	for (size_t i = 0; bytes && i < ARRAY_SIZE(units); i++)
		if (bytes % units[i].unit == 0) {
			snprintf(buf, METRICS_BUF, "%" PRId64 "%s", bytes / units[i].unit,
				 units[i].suffix);
			return;
		}
	snprintf(buf, METRICS_BUF, "%" PRId64, bytes);
}

void metrics_format_window(uint64_t ms, char buf[static METRICS_BUF])
{
	uint64_t s = ms / 1000, frac = ms % 1000;
	char secs[24];
	if (frac) {
		snprintf(secs, sizeof(secs), "%" PRIu64 ".%03" PRIu64, s % 60, frac);
		size_t n = strlen(secs);
		while (secs[n - 1] == '0')
			secs[--n] = '\0';
	} else {
		snprintf(secs, sizeof(secs), "%" PRIu64, s % 60);
	}
	if (s >= 3600)
		snprintf(buf, METRICS_BUF, "%" PRIu64 "h%" PRIu64 "m%ss", s / 3600, s / 60 % 60,
			 secs);
	else if (s >= 60)
		snprintf(buf, METRICS_BUF, "%" PRIu64 "m%ss", s / 60, secs);
	else
		snprintf(buf, METRICS_BUF, "%ss", secs);
}

static void metrics__stamp(struct ynode *obj, int64_t t, uint64_t window_ms)
{
	char ts[RFC3339_SIZE], w[METRICS_BUF];
	rfc3339_format((time_t)t, ts);
	metrics_format_window(window_ms, w);
	ynode_set(obj, "timestamp", ynode_new_str(ts));
	ynode_set(obj, "window", ynode_new_str(w));
}

static struct ynode *metrics__usage(uint64_t nanocores, int64_t memory)
{
	char cpu[METRICS_BUF], mem[METRICS_BUF];
	metrics_format_cpu(nanocores, cpu);
	metrics_format_memory(memory, mem);
	struct ynode *u = ynode_new_map();
	ynode_set(u, "cpu", ynode_new_str(cpu));
	ynode_set(u, "memory", ynode_new_str(mem));
	return u;
}

static struct ynode *metrics__head(const char *kind, const char *name)
{
	struct ynode *obj = ynode_new_map();
	ynode_set(obj, "apiVersion", ynode_new_str("metrics.k8s.io/v1beta1"));
	ynode_set(obj, "kind", ynode_new_str(kind));
	struct ynode *md = ynode_get_map(obj, "metadata");
	ynode_set(md, "name", ynode_new_str(name));
	return obj;
}

struct ynode *metrics_pod_object(const struct ynode *pod, const struct metrics_container *c,
				 size_t n, int64_t t, uint64_t window_ms)
{
	const char *name = ynode_path_str(pod, "metadata.name");
	const char *ns = ynode_path_str(pod, "metadata.namespace");
	const char *uid = ynode_path_str(pod, "metadata.uid");
	struct ynode *obj = metrics__head("PodMetrics", name ? name : "");
	struct ynode *md = ynode_get(obj, "metadata");
	if (ns)
		ynode_set(md, "namespace", ynode_new_str(ns));
	const struct ynode *labels = ynode_path(pod, "metadata.labels");
	if (labels && labels->type == YNODE_MAP && labels->n)
		ynode_set(md, "labels", ynode_clone(labels));
	if (uid)
		ownerref_add(obj, ownerref_new("v1", "Pod", name ? name : "", uid, false));
	metrics__stamp(obj, t, window_ms);
	struct ynode *cs = ynode_new_seq();
	for (size_t i = 0; i < n; i++) {
		struct ynode *it = ynode_new_map();
		ynode_set(it, "name", ynode_new_str(c[i].name));
		ynode_set(it, "usage", metrics__usage(c[i].nanocores, c[i].memory));
		ynode_append(cs, it);
	}
	ynode_set(obj, "containers", cs);
	return obj;
}

struct ynode *metrics_node_object(const char *node, const char *uid, uint64_t nanocores,
				  int64_t memory, int64_t t, uint64_t window_ms)
{
	struct ynode *obj = metrics__head("NodeMetrics", node);
	if (uid)
		ownerref_add(obj, ownerref_new("v1", "Node", node, uid, false));
	metrics__stamp(obj, t, window_ms);
	ynode_set(obj, "usage", metrics__usage(nanocores, memory));
	return obj;
}

int metrics_parse_proc_stat(const char *text, uint64_t *cpu_ns, struct error **err)
{
	unsigned long long v[8] = {0};
	/* cpu  user nice system idle iowait irq softirq steal ... */
	int n = text ? sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			      &v[2], &v[3], &v[4], &v[5], &v[6], &v[7])
		     : 0;
	if (n < 4)
		return error_set(err, EINVAL, "/proc/stat: no cpu line");
	unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	*cpu_ns = busy * (1000000000ULL / (unsigned long long)hz);
	return 0;
}

static bool metrics__meminfo_key(const char *text, const char *key, long long *kb)
{
	size_t klen = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return sscanf(p + klen + 1, "%lld", kb) == 1;
	return false;
}

int metrics_parse_meminfo(const char *text, int64_t *working_set, struct error **err)
{
	long long total, free_kb, inactive = 0;
	if (!text || !metrics__meminfo_key(text, "MemTotal", &total) ||
	    !metrics__meminfo_key(text, "MemFree", &free_kb))
		return error_set(err, EINVAL, "/proc/meminfo: no MemTotal or MemFree");
	metrics__meminfo_key(text, "Inactive(file)", &inactive);
	long long ws = total - free_kb - inactive;
	*working_set = ws > 0 ? ws * 1024 : 0;
	return 0;
}

/* ---- the readings --------------------------------------------------------- */

static uint64_t metrics__mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A hollow pod's annotation, as a share of each of its n containers. */
static int64_t metrics__hollow(const struct ynode *pod, const char *key, size_t n)
{
	const struct ynode *ann = ynode_path(pod, "metadata.annotations");
	const char *v = ynode_str(ynode_get(ann, key));
	int64_t milli = 0;
	if (!v || quantity_parse(v, &milli, NULL) < 0 || milli < 0 || !n)
		return 0;
	return milli / (int64_t)n;
}

/* One container's rate from its counter; false until it has two
 * readings. */
static bool metrics__rate(struct metrics *m, const char *uid, const char *name, uint64_t cpu_ns,
			  uint64_t *nanocores, uint64_t *window_ms)
{
	cleanup_free char *key = xasprintf("%s/%s", uid, name);
	struct metrics__sample *s = strmap_get(m->samples, key);
	bool have = false;
	if (s && s->at_ns < m->round_at_ns) {
		uint64_t dt = m->round_at_ns - s->at_ns;
		*nanocores = metrics_nanocores(s->cpu_ns, cpu_ns, dt);
		*window_ms = dt / 1000000u;
		have = true;
	}
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		strmap_set(m->samples, key, s);
	}
	s->cpu_ns = cpu_ns;
	s->at_ns = m->round_at_ns;
	s->round = m->round;
	return have;
}

static void metrics__write(struct metrics *m, const char *path, const struct ynode *obj)
{
	cleanup_error struct error *err = NULL;
	if (objio_write(m->mount, path, obj, &err) < 0 && err->status != ENOENT)
		log_warn("metrics: %s: %s", path, err->msg);
}

static int metrics__visit_pod(void *data, const char *key, const struct ynode *pod)
{
	struct metrics *m = data;
	const char *phase = ynode_path_str(pod, "status.phase");
	const char *uid = ynode_path_str(pod, "metadata.uid");
	const struct ynode *cs = ynode_path(pod, "spec.containers");
	if (!phase || strcmp(phase, "Running") || !uid || !cs || cs->type != YNODE_SEQ || !cs->n)
		return 0;
	struct metrics_container *c = xcalloc(cs->n, sizeof(*c));
	size_t n = 0;
	uint64_t window_ms = m->interval_ms;
	for (size_t i = 0; i < cs->n; i++) {
		const char *name = ynode_str(ynode_get(ynode_item(cs, i), "name"));
		if (!name)
			continue;
		if (m->hollow) {
			c[n].name = name;
			/* milli-cores to nanocores; milli-bytes to bytes */
			c[n].nanocores =
			    (uint64_t)metrics__hollow(pod, METRICS_HOLLOW_CPU, cs->n) * 1000000u;
			c[n].memory = metrics__hollow(pod, METRICS_HOLLOW_MEMORY, cs->n) / 1000;
			n++;
			continue;
		}
		if (!m->rt->cgroup_root)
			continue;
		cleanup_free char *rel = xasprintf("%s/%s/%s", m->rt->cgroup_root, uid, name);
		struct cgroup_usage u;
		if (cgroup_usage(rel, &u, NULL) < 0)
			continue; /* not started, or gone */
		uint64_t w = 0;
		if (!metrics__rate(m, uid, name, u.cpu_ns, &c[n].nanocores, &w))
			continue;
		window_ms = w;
		c[n].name = name;
		c[n].memory = u.memory_working_set;
		n++;
	}
	if (n) {
		for (size_t i = 0; i < n; i++) {
			m->sum_nanocores += c[i].nanocores;
			m->sum_memory += c[i].memory;
		}
		cleanup_ynode struct ynode *obj =
		    metrics_pod_object(pod, c, n, m->round_wall, window_ms);
		const char *slash = strchr(key, '/');
		cleanup_free char *path =
		    slash ? xasprintf("%s/namespaces/%.*s/podmetrics/%s.yaml", m->mount,
				      (int)(slash - key), key, slash + 1)
			  : NULL;
		if (path) {
			metrics__write(m, path, obj);
			strmap_set(m->written, key, (void *)(uintptr_t)m->round);
		}
	}
	free(c);
	return 0;
}

/* Removes the PodMetrics of pods no longer run here, and the samples of
 * containers gone. */
static void metrics__prune(struct metrics *m)
{
	const char *key;
	void *v;
	for (size_t i = 0; strmap_next(m->written, &i, &key, &v);) {
		if ((unsigned)(uintptr_t)v == m->round)
			continue;
		const char *slash = strchr(key, '/');
		if (slash) {
			cleanup_free char *path =
			    xasprintf("%s/namespaces/%.*s/podmetrics/%s.yaml", m->mount,
				      (int)(slash - key), key, slash + 1);
			if (unlink(path) < 0 && errno != ENOENT)
				log_warn("metrics: cannot remove %s: %s", path, strerror(errno));
		}
		cleanup_free char *k = xstrdup(key);
		strmap_del(m->written, k);
		i = 0; /* the map changed: start over (few go at once) */
	}
	for (size_t i = 0; strmap_next(m->samples, &i, &key, &v);) {
		struct metrics__sample *s = v;
		if (s->round + 1 >= m->round)
			continue;
		cleanup_free char *k = xstrdup(key);
		free(strmap_del(m->samples, k));
		i = 0;
	}
}

static void metrics__node(struct metrics *m)
{
	uint64_t nanocores = m->sum_nanocores, window_ms = m->interval_ms;
	int64_t memory = m->sum_memory;
	if (!m->hollow) {
		cleanup_free char *stat = util_read_file("/proc/stat", NULL);
		cleanup_free char *mem = util_read_file("/proc/meminfo", NULL);
		uint64_t cpu_ns = 0;
		if (metrics_parse_proc_stat(stat, &cpu_ns, NULL) < 0 ||
		    metrics_parse_meminfo(mem, &memory, NULL) < 0)
			return;
		bool have = m->node_at_ns && m->node_at_ns < m->round_at_ns;
		if (have) {
			window_ms = (m->round_at_ns - m->node_at_ns) / 1000000u;
			nanocores = metrics_nanocores(m->node_cpu_ns, cpu_ns,
						      m->round_at_ns - m->node_at_ns);
		}
		m->node_cpu_ns = cpu_ns;
		m->node_at_ns = m->round_at_ns;
		if (!have)
			return;
	}
	cleanup_free char *node_path = xasprintf("%s/nodes/%s.yaml", m->mount, m->node);
	cleanup_ynode struct ynode *node = NULL;
	objio_read(node_path, &node, NULL);
	cleanup_ynode struct ynode *obj =
	    metrics_node_object(m->node, ynode_path_str(node, "metadata.uid"), nanocores, memory,
				m->round_wall, window_ms);
	cleanup_free char *path = xasprintf("%s/nodemetrics/%s.yaml", m->mount, m->node);
	metrics__write(m, path, obj);
}

void metrics_collect(struct metrics *m)
{
	m->round++;
	m->round_at_ns = metrics__mono_ns();
	m->round_wall = (int64_t)time(NULL);
	m->sum_nanocores = 0;
	m->sum_memory = 0;
	pods_foreach(m->pods, metrics__visit_pod, m);
	metrics__prune(m);
	metrics__node(m);
}

static void metrics__tick(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	metrics_collect(data);
}

struct metrics *metrics_new(struct loop *loop, const struct metrics_opts *o, struct pods *pods,
			    struct runtime *rt)
{
	struct metrics *m = xcalloc(1, sizeof(*m));
	m->loop = loop;
	m->mount = xstrdup(o->mount);
	m->node = xstrdup(o->node);
	m->interval_ms = o->interval_ms ? o->interval_ms : 15000;
	m->hollow = o->hollow;
	m->pods = pods;
	m->rt = rt;
	m->samples = strmap_new();
	m->written = strmap_new();
	m->timer = loop_timer_new(loop, metrics__tick, m);
	return m;
}

void metrics_start(struct metrics *m)
{
	loop_timer_start(m->timer, 1, m->interval_ms);
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	loop_timer_free(m->timer);
	strmap_free(m->samples, free);
	strmap_free(m->written, NULL);
	free(m->mount);
	free(m->node);
	free(m);
}
