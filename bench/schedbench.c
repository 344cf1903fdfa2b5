/*
 * schedbench.c: the load generator of bench/sched.sh. Writes hollow nodes
 * and pending pods through a corral mount, watches the pods get bound, and
 * checks that no node is oversubscribed. Prints one line of key=value
 * figures per run; it never judges them (benchmarks assert nothing).
 *
 *   schedbench nodes -m MOUNT -n N [-t THREADS]
 *   schedbench pods  -m MOUNT -N NS -n M [-t THREADS] [-o OWNERS] [-s SECONDS]
 *                    [-p SCHED_PID] [-P FS_PID]
 *   schedbench check -m MOUNT -N NS
 *
 * nodes: N Ready nodes node-00001.. of 4, 8 or 16 cpus (2 GiB of memory a
 * cpu, 110 pods), written by THREADS threads.
 * pods: M pods pod-000001.. in NS, requests mixed (cpu 100m to 1, memory
 * 128Mi to 1Gi), each owned by one of OWNERS ReplicaSets (0: no owner, so
 * every pod enters the history), written by THREADS threads while an
 * inotify watch on the pods' folder reads every file closed there and
 * records when each pod is first seen with spec.nodeName (the first close
 * of each file is its writer's, and is not read). The clock starts
 * just before the first pod is written and stops when the last is seen
 * bound (or after SECONDS). With -p/-P, the CPU time of those processes
 * over the same span is reported (from /proc/PID/stat).
 * check: reads every node and pod back and sums the bound pods' requests
 * (containers summed, init containers as Kubernetes counts them) per node.
 *
 * Built by bench/sched.sh against libcorral.a (YAML and quantities).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "quantity.h"
#include "util.h"
#include "ynode.h"

struct bench {
	const char *mount;
	const char *ns;
	long count;
	long first; /* the number of the first node written (nodes) */
	int threads;
	long owners;
	double seconds;
	int sched_pid, fs_pid;
	char dir[PATH_MAX];
	atomic_long next;
	atomic_long errors;
	atomic_long written;
	atomic_int reported;
	uint64_t start_ns;
	atomic_uint_fast64_t write_end_ns;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void report(struct bench *b, const char *what, const char *path, int err)
{
	atomic_fetch_add(&b->errors, 1);
	if (atomic_exchange(&b->reported, 1) == 0)
		fprintf(stderr, "schedbench: %s %s: %s\n", what, path, strerror(err));
}

static int write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	int e = 0;
	if (util_write_all(fd, text, len) < 0)
		e = errno ? errno : EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

/* ---- nodes ---------------------------------------------------------------- */

static void *node_writer(void *arg)
{
	struct bench *b = arg;
	char path[PATH_MAX + 64], text[1024];
	for (;;) {
		long i = atomic_fetch_add(&b->next, 1);
		if (i >= b->count)
			return NULL;
		int cpus = (int[]){4, 8, 8, 16}[i % 4];
		long k = i + b->first; /* the node's number */
		snprintf(path, sizeof(path), "%s/nodes/node-%05ld.yaml", b->mount, k);
		int n = snprintf(text, sizeof(text),
				 "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-%05ld\n"
				 "  labels: {kubernetes.io/hostname: node-%05ld, bench: hollow}\n"
				 "spec: {}\nstatus:\n"
				 "  capacity: {cpu: \"%d\", memory: %dGi, pods: \"110\"}\n"
				 "  allocatable: {cpu: \"%d\", memory: %dGi, pods: \"110\"}\n"
				 "  conditions: [{type: Ready, status: \"True\"}]\n",
				 k, k, cpus, 2 * cpus, cpus, 2 * cpus);
		int e = write_file(path, text, (size_t)n);
		if (e)
			report(b, "write", path, e);
		else
			atomic_fetch_add(&b->written, 1);
	}
}

/* ---- pods ----------------------------------------------------------------- */

static const char *const cpus[] = {"100m", "250m", "500m", "1"};
static const char *const mems[] = {"128Mi", "256Mi", "512Mi", "1Gi"};

static void *pod_writer(void *arg)
{
	struct bench *b = arg;
	char path[PATH_MAX + 64], text[2048], owner[512];
	for (;;) {
		long i = atomic_fetch_add(&b->next, 1);
		if (i >= b->count)
			break;
		long o = b->owners ? i % b->owners : 0;
		owner[0] = '\0';
		if (b->owners)
			snprintf(
			    owner, sizeof(owner),
			    "  labels: {app: rs-%04ld}\n"
			    "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: "
			    "rs-%04ld, uid: 00000000-0000-4000-8000-%012ld, controller: true}]\n",
			    o, o, o);
		snprintf(path, sizeof(path), "%s/pod-%06ld.yaml", b->dir, i + 1);
		/* Mixed requests; the multipliers keep cpu and memory apart. */
		int n = snprintf(text, sizeof(text),
				 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%06ld\n%s"
				 "spec:\n  containers:\n  - name: c\n    image: busybox\n"
				 "    resources: {requests: {cpu: %s, memory: %s}}\n",
				 i + 1, owner, cpus[(i * 7) % 4], mems[(i * 3 / 4) % 4]);
		int e = write_file(path, text, (size_t)n);
		if (e)
			report(b, "write", path, e);
		else
			atomic_fetch_add(&b->written, 1);
	}
	uint64_t t = now_ns();
	uint64_t prev = atomic_load(&b->write_end_ns);
	while (t > prev && !atomic_compare_exchange_weak(&b->write_end_ns, &prev, t))
		;
	return NULL;
}

/* "pod-000123.yaml" -> 122, or -1. */
static long pod_index(const struct bench *b, const char *name)
{
	char *end = NULL;
	if (strncmp(name, "pod-", 4) != 0)
		return -1;
	long i = strtol(name + 4, &end, 10);
	if (!end || strcmp(end, ".yaml") != 0 || i < 1 || i > b->count)
		return -1;
	return i - 1;
}

static bool is_bound(const char *path)
{
	size_t len;
	char *text = util_read_file(path, &len);
	if (!text)
		return false;
	bool bound = strstr(text, "\n  nodeName: ") != NULL;
	free(text);
	return bound;
}

struct watch {
	uint64_t *bound_ns;    /* per pod, 0 until seen bound */
	unsigned char *closes; /* per pod, IN_CLOSE_WRITE events seen */
	uint64_t *order;       /* bound times in the order seen */
	long nbound;
};

static void seen(struct bench *b, struct watch *w, long i)
{
	char path[PATH_MAX + 64];
	if (w->bound_ns[i])
		return;
	snprintf(path, sizeof(path), "%s/pod-%06ld.yaml", b->dir, i + 1);
	if (!is_bound(path))
		return;
	w->bound_ns[i] = now_ns();
	w->order[w->nbound++] = w->bound_ns[i];
}

static void rescan(struct bench *b, struct watch *w)
{
	for (long i = 0; i < b->count; i++)
		seen(b, w, i);
}

/* utime + stime of a process, in seconds, or -1; *sys gets stime. */
static double cpu_secs(int pid, double *sys)
{
	*sys = 0;
	if (pid <= 0)
		return -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	size_t len;
	char *text = util_read_file(path, &len);
	if (!text)
		return -1;
	char *p = strrchr(text, ')');
	unsigned long ut = 0, st = 0;
	/* Fields after the command: state is 3; utime 14, stime 15. */
	int n =
	    p ? sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) : 0;
	free(text);
	if (n != 2)
		return -1;
	*sys = (double)st / (double)sysconf(_SC_CLK_TCK);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double rate(long n, uint64_t from, uint64_t to)
{
	return to > from ? (double)n / ((double)(to - from) / 1e9) : 0;
}

static int run_pods(struct bench *b)
{
	snprintf(b->dir, sizeof(b->dir), "%s/namespaces/%s/pods", b->mount, b->ns);
	int ifd = inotify_init1(IN_CLOEXEC);
	if (ifd < 0 || inotify_add_watch(ifd, b->dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		fprintf(stderr, "schedbench: inotify on %s: %s\n", b->dir, strerror(errno));
		return 1;
	}
	struct watch w = {
	    .bound_ns = xcalloc((size_t)b->count, sizeof(uint64_t)),
	    .order = xcalloc((size_t)b->count, sizeof(uint64_t)),
	    .closes = xcalloc((size_t)b->count, 1),
	};
	double ssys0, fsys0, ssys1, fsys1;
	double sched0 = cpu_secs(b->sched_pid, &ssys0), fs0 = cpu_secs(b->fs_pid, &fsys0);
	pthread_t *th = xcalloc((size_t)b->threads, sizeof(*th));
	b->start_ns = now_ns();
	for (int i = 0; i < b->threads; i++)
		pthread_create(&th[i], NULL, pod_writer, b);
	uint64_t deadline = b->start_ns + (uint64_t)(b->seconds * 1e9);
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	int flags = fcntl(ifd, F_GETFL);
	fcntl(ifd, F_SETFL, flags | O_NONBLOCK);
	long overflows = 0;
	while (w.nbound < b->count && now_ns() < deadline) {
		ssize_t n = read(ifd, buf, sizeof(buf));
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				break;
			usleep(1000);
			continue;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				overflows++;
				rescan(b, &w);
				continue;
			}
			long i = ev->len ? pod_index(b, ev->name) : -1;
			if (i < 0)
				continue;
			/* The first close is our own writer's: nothing to read. */
			if ((ev->mask & IN_CLOSE_WRITE) && w.closes[i] < 2 && w.closes[i]++ == 0)
				continue;
			seen(b, &w, i);
		}
	}
	uint64_t end = w.nbound ? w.order[w.nbound - 1] : now_ns();
	double sched1 = cpu_secs(b->sched_pid, &ssys1), fs1 = cpu_secs(b->fs_pid, &fsys1);
	for (int i = 0; i < b->threads; i++)
		pthread_join(th[i], NULL);
	free(th);
	if (w.nbound < b->count)
		rescan(b, &w); /* a last look, for the count only */
	long k = b->count < 1000 ? b->count : 1000;
	double first = w.nbound >= k && k ? rate(k, b->start_ns, w.order[k - 1]) : 0;
	double last = w.nbound >= b->count && b->count > k
			  ? rate(k, w.order[b->count - k - 1], w.order[b->count - 1])
			  : first;
	uint64_t write_end = atomic_load(&b->write_end_ns);
	printf("op=pods written=%ld errors=%ld bound=%ld secs=%.3f rate=%.1f first_rate=%.1f "
	       "last_rate=%.1f window=%ld write_secs=%.3f write_rate=%.1f sched_cpu=%.3f "
	       "fs_cpu=%.3f sched_sys=%.3f fs_sys=%.3f overflows=%ld\n",
	       atomic_load(&b->written), atomic_load(&b->errors), w.nbound,
	       (double)(end - b->start_ns) / 1e9, rate(w.nbound, b->start_ns, end), first, last, k,
	       write_end ? (double)(write_end - b->start_ns) / 1e9 : 0,
	       rate(atomic_load(&b->written), b->start_ns, write_end), sched1 - sched0, fs1 - fs0,
	       ssys1 - ssys0, fsys1 - fsys0, overflows);
	free(w.bound_ns);
	free(w.order);
	free(w.closes);
	close(ifd);
	return 0;
}

static int run_nodes(struct bench *b)
{
	pthread_t *th = xcalloc((size_t)b->threads, sizeof(*th));
	uint64_t t0 = now_ns();
	for (int i = 0; i < b->threads; i++)
		pthread_create(&th[i], NULL, node_writer, b);
	for (int i = 0; i < b->threads; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = now_ns();
	free(th);
	printf("op=nodes written=%ld errors=%ld secs=%.3f rate=%.1f\n", atomic_load(&b->written),
	       atomic_load(&b->errors), (double)(t1 - t0) / 1e9,
	       rate(atomic_load(&b->written), t0, t1));
	return atomic_load(&b->errors) ? 1 : 0;
}

/* ---- check ---------------------------------------------------------------- */

struct node_use {
	char *name;
	int64_t cpu, mem, pods;	   /* allocatable */
	int64_t ucpu, umem, upods; /* used by bound pods */
};

static struct ynode *read_doc(const char *path)
{
	size_t len;
	char *text = util_read_file(path, &len);
	if (!text)
		return NULL;
	struct ynode *doc = NULL;
	struct error *err = NULL;
	if (yaml_parse_one(text, len, &doc, &err) < 0) {
		fprintf(stderr, "schedbench: %s: %s\n", path, err->msg);
		error_free(err);
	}
	free(text);
	return doc;
}

static int64_t qty(const struct ynode *n)
{
	int64_t v = 0;
	const char *s = ynode_str(n);
	struct error *err = NULL;
	if (s && quantity_parse(s, &v, &err) < 0) {
		error_free(err);
		v = 0;
	}
	return v;
}

/* Sum of the containers' requests, or the largest init container's. */
static void pod_requests(const struct ynode *spec, int64_t *cpu, int64_t *mem)
{
	int64_t c = 0, m = 0, ic = 0, im = 0;
	const struct ynode *cs = ynode_get(spec, "containers");
	for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
		const struct ynode *r = ynode_path(ynode_item(cs, i), "resources.requests");
		c += qty(ynode_get(r, "cpu"));
		m += qty(ynode_get(r, "memory"));
	}
	cs = ynode_get(spec, "initContainers");
	for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
		const struct ynode *r = ynode_path(ynode_item(cs, i), "resources.requests");
		int64_t x = qty(ynode_get(r, "cpu")), y = qty(ynode_get(r, "memory"));
		ic = x > ic ? x : ic;
		im = y > im ? y : im;
	}
	*cpu = c > ic ? c : ic;
	*mem = m > im ? m : im;
}

static int run_check(struct bench *b)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	snprintf(dir, sizeof(dir), "%s/nodes", b->mount);
	struct node_use *nodes = NULL;
	size_t nnodes = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		struct ynode *doc = read_doc(path);
		if (!doc)
			continue;
		const struct ynode *a = ynode_path(doc, "status.allocatable");
		nodes = xrealloc(nodes, (nnodes + 1) * sizeof(*nodes));
		struct node_use *n = &nodes[nnodes++];
		memset(n, 0, sizeof(*n));
		n->name = xstrdup(ynode_path_str(doc, "metadata.name"));
		n->cpu = qty(ynode_get(a, "cpu"));
		n->mem = qty(ynode_get(a, "memory"));
		n->pods = qty(ynode_get(a, "pods")) / 1000;
		ynode_free(doc);
	}
	if (d)
		closedir(d);
	snprintf(dir, sizeof(dir), "%s/namespaces/%s/pods", b->mount, b->ns);
	long pods = 0, bound = 0, unknown = 0;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		struct ynode *doc = read_doc(path);
		if (!doc)
			continue;
		pods++;
		const char *node = ynode_path_str(doc, "spec.nodeName");
		const char *phase = ynode_path_str(doc, "status.phase");
		bool done = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
		if (node && *node) {
			bound++;
			struct node_use *n = NULL;
			for (size_t i = 0; i < nnodes && !n; i++)
				if (!strcmp(nodes[i].name, node))
					n = &nodes[i];
			if (!n) {
				unknown++;
			} else if (!done) {
				int64_t c, m;
				pod_requests(ynode_get(doc, "spec"), &c, &m);
				n->ucpu += c;
				n->umem += m;
				n->upods++;
			}
		}
		ynode_free(doc);
	}
	if (d)
		closedir(d);
	long over = 0, minp = -1, maxp = 0;
	double ucpu = 0, acpu = 0, umem = 0, amem = 0;
	for (size_t i = 0; i < nnodes; i++) {
		struct node_use *n = &nodes[i];
		if (n->ucpu > n->cpu || n->umem > n->mem || n->upods > n->pods) {
			over++;
			fprintf(stderr,
				"schedbench: node %s oversubscribed: cpu %lldm of %lldm, memory "
				"%lld of %lld bytes, %lld of %lld pods\n",
				n->name, (long long)n->ucpu, (long long)n->cpu,
				(long long)(n->umem / 1000), (long long)(n->mem / 1000),
				(long long)n->upods, (long long)n->pods);
		}
		minp = minp < 0 || n->upods < minp ? n->upods : minp;
		maxp = n->upods > maxp ? n->upods : maxp;
		ucpu += (double)n->ucpu;
		acpu += (double)n->cpu;
		umem += (double)n->umem;
		amem += (double)n->mem;
		free(n->name);
	}
	free(nodes);
	printf("op=check nodes=%zu pods=%ld bound=%ld unbound=%ld on_unknown_nodes=%ld "
	       "oversubscribed=%ld cpu_used=%.1f mem_used=%.1f min_pods=%ld max_pods=%ld\n",
	       nnodes, pods, bound, pods - bound, unknown, over, acpu ? 100 * ucpu / acpu : 0,
	       amem ? 100 * umem / amem : 0, minp < 0 ? 0 : minp, maxp);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: schedbench nodes|pods|check -m MOUNT [-N NS] [-n COUNT] [-t THREADS] "
		"[-o OWNERS] [-s SECONDS] [-p SCHED_PID] [-P FS_PID] [-f FIRST_NODE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	const char *op = argv[1];
	struct bench b = {
	    .ns = "bench", .count = 1000, .threads = 16, .owners = 100, .seconds = 180, .first = 1};
	int c;
	optind = 2;
	while ((c = getopt(argc, argv, "m:N:n:t:o:s:p:P:f:")) != -1) {
		switch (c) {
		case 'm':
			b.mount = optarg;
			break;
		case 'N':
			b.ns = optarg;
			break;
		case 'n':
			b.count = atol(optarg);
			break;
		case 't':
			b.threads = atoi(optarg);
			break;
		case 'o':
			b.owners = atol(optarg);
			break;
		case 's':
			b.seconds = atof(optarg);
			break;
		case 'p':
			b.sched_pid = atoi(optarg);
			break;
		case 'P':
			b.fs_pid = atoi(optarg);
			break;
		case 'f':
			b.first = atol(optarg);
			break;
		default:
			usage();
		}
	}
	if (!b.mount || b.count < 1 || b.threads < 1 || b.first < 1)
		usage();
	if (!strcmp(op, "nodes"))
		return run_nodes(&b);
	if (!strcmp(op, "pods"))
		return run_pods(&b);
	if (!strcmp(op, "check"))
		return run_check(&b);
	usage();
	return 2;
}
