/*
 * svcbench.c: the load generator of bench/services.sh. Prints one line of
 * key=value figures per run; it never judges them.
 *
 *   svcbench flip -m MOUNT -N NS -n N
 *	A pod (on a node no agent runs) and a Service selecting it in NS;
 *	then N times: write the pod with its Ready condition flipped, and
 *	wait (inotify on the endpoints folder) until endpoints/flip.yaml
 *	shows the pod on the matching side. A latency runs from the return of
 *	the pod's close() (the status change is stored and visible) to the
 *	IN_CLOSE_WRITE of the endpoints file that shows it. Prints the
 *	median, p99 and max, and the median of the pod writes themselves.
 *   svcbench roundtrip -m MOUNT -N NS -n N
 *	The baseline: N times, write a ConfigMap (open, write, close) and
 *	read it back (open, read, close); the time of each pair.
 *   svcbench services -m MOUNT -N NS -n N [-t T] [-w]
 *	Writes N Services (svc-NNNNN, no clusterIP) with T threads; with -w,
 *	then waits until every one carries its clusterIP and the Allocated
 *	condition (inotify on the services folder, and a look at every
 *	file not seen allocated whenever the events stop for half a second,
 *	as the inotify queue may overflow). secs= is from the first
 *	write to the last service allocated (or written, without -w).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"

static const char *mount_dir, *ns = "bench";
static long count = 100;
static int threads = 8;
static bool wait_alloc;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		off += (size_t)w;
	}
	return close(fd) < 0 ? -errno : 0;
}

static char *get(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static double pct(double *v, long n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	long i = (long)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static void die(const char *what)
{
	fprintf(stderr, "svcbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static const char *pod_fmt =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: flip, labels: {app: flip}}\n"
    "spec:\n  nodeName: nowhere\n  containers: [{name: c, image: busybox}]\n"
    "status:\n  phase: Running\n  podIP: 10.244.251.9\n"
    "  conditions: [{type: Ready, status: '%s'}]\n";

/* Whether the endpoints text shows the pod ready (1), unready (0), or
 * not at all (-1). */
static int ep_state(const char *text)
{
	if (!text || !strstr(text, "10.244.251.9"))
		return -1;
	return strstr(text, "notReadyAddresses") ? 0 : 1;
}

static int run_flip(void)
{
	char nsdir[4096], pod[4096], svc[4096], epdir[4096], ep[4096], text[1024];
	snprintf(nsdir, sizeof(nsdir), "%s/namespaces/%s", mount_dir, ns);
	mkdir(nsdir, 0755);
	snprintf(pod, sizeof(pod), "%s/pods/flip.yaml", nsdir);
	snprintf(svc, sizeof(svc), "%s/services/flip.yaml", nsdir);
	snprintf(epdir, sizeof(epdir), "%s/endpoints", nsdir);
	snprintf(ep, sizeof(ep), "%s/flip.yaml", epdir);
	int in = inotify_init1(IN_NONBLOCK);
	if (in < 0 || inotify_add_watch(in, epdir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0)
		die("inotify on the endpoints folder");
	snprintf(text, sizeof(text), pod_fmt, "True");
	if (put(pod, text) < 0)
		die("writing the pod");
	if (put(svc, "apiVersion: v1\nkind: Service\nmetadata: {name: flip}\n"
		     "spec: {selector: {app: flip}, ports: [{port: 80}]}\n") < 0)
		die("writing the service");
	for (int i = 0; i < 200; i++) {
		char *t = get(ep);
		int st = ep_state(t);
		free(t);
		if (st == 1)
			break;
		usleep(50000);
	}
	double *lat = calloc((size_t)count, sizeof(double));
	double *wr = calloc((size_t)count, sizeof(double));
	long ok = 0, timeouts = 0;
	char buf[64 * 1024];
	for (long i = 0; i < count; i++) {
		int want = (int)(i % 2 == 0 ? 0 : 1);
		while (read(in, buf, sizeof(buf)) > 0) {
		}
		snprintf(text, sizeof(text), pod_fmt, want ? "True" : "False");
		double t0 = now_s();
		if (put(pod, text) < 0)
			die("writing the pod");
		double t1 = now_s();
		wr[i] = t1 - t0;
		bool seen = false;
		while (!seen && now_s() - t1 < 5.0) {
			struct pollfd p = {.fd = in, .events = POLLIN};
			if (poll(&p, 1, 100) <= 0)
				continue;
			double t2 = now_s();
			ssize_t n = read(in, buf, sizeof(buf));
			bool ours = false;
			for (char *q = buf; n > 0 && q < buf + n;) {
				struct inotify_event *ev = (struct inotify_event *)q;
				if (ev->len && !strcmp(ev->name, "flip.yaml"))
					ours = true;
				q += sizeof(*ev) + ev->len;
			}
			if (!ours)
				continue;
			char *t = get(ep);
			if (ep_state(t) == want) {
				lat[ok++] = t2 - t1;
				seen = true;
			}
			free(t);
		}
		if (!seen)
			timeouts++;
	}
	double wmed = pct(wr, count, 0.5);
	if (!ok) {
		printf("ok=0 timeouts=%ld\n", timeouts);
		return 1;
	}
	double med = pct(lat, ok, 0.5), p99 = pct(lat, ok, 0.99), max = lat[ok - 1];
	printf("ok=%ld timeouts=%ld median_ms=%.3f p99_ms=%.3f max_ms=%.3f write_median_ms=%.3f\n",
	       ok, timeouts, med * 1e3, p99 * 1e3, max * 1e3, wmed * 1e3);
	free(lat);
	free(wr);
	return timeouts ? 1 : 0;
}

static int run_roundtrip(void)
{
	char nsdir[4096], path[4096], text[512];
	snprintf(nsdir, sizeof(nsdir), "%s/namespaces/%s", mount_dir, ns);
	mkdir(nsdir, 0755);
	snprintf(path, sizeof(path), "%s/configmaps/roundtrip.yaml", nsdir);
	double *v = calloc((size_t)count, sizeof(double));
	for (long i = 0; i < count; i++) {
		snprintf(text, sizeof(text),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roundtrip}\n"
			 "data: {seq: '%ld'}\n",
			 i);
		double t0 = now_s();
		if (put(path, text) < 0)
			die("writing the configmap");
		char *t = get(path);
		if (!t || !strstr(t, "seq:"))
			die("reading the configmap back");
		free(t);
		v[i] = now_s() - t0;
	}
	printf("ok=%ld median_ms=%.3f p99_ms=%.3f\n", count, pct(v, count, 0.5) * 1e3,
	       pct(v, count, 0.99) * 1e3);
	free(v);
	return 0;
}

static atomic_long next_svc, written_svc, failed_svc;
static char svc_dir[4096];

static void *svc_writer(void *arg)
{
	(void)arg;
	char path[4200], text[512];
	for (long i; (i = atomic_fetch_add(&next_svc, 1)) < count;) {
		snprintf(path, sizeof(path), "%s/svc-%05ld.yaml", svc_dir, i);
		snprintf(text, sizeof(text),
			 "apiVersion: v1\nkind: Service\nmetadata: {name: svc-%05ld}\n"
			 "spec: {selector: {app: svc-%05ld}, ports: [{name: http, port: 80}]}\n",
			 i, i);
		if (put(path, text) < 0)
			atomic_fetch_add(&failed_svc, 1);
		else
			atomic_fetch_add(&written_svc, 1);
	}
	return NULL;
}

static bool allocated(const char *name)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", svc_dir, name);
	char *t = get(path);
	bool ok = t && strstr(t, "\n  clusterIP: 10.") && strstr(t, "reason: Allocated");
	free(t);
	return ok;
}

static int run_services(void)
{
	char nsdir[4096];
	snprintf(nsdir, sizeof(nsdir), "%s/namespaces/%s", mount_dir, ns);
	mkdir(nsdir, 0755);
	snprintf(svc_dir, sizeof(svc_dir), "%s/services", nsdir);
	int in = inotify_init1(IN_NONBLOCK);
	if (in < 0 || inotify_add_watch(in, svc_dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0)
		die("inotify on the services folder");
	bool *done = calloc((size_t)count, sizeof(bool));
	long ndone = 0;
	double t0 = now_s();
	pthread_t *th = calloc((size_t)threads, sizeof(*th));
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, svc_writer, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	double t_written = now_s() - t0;
	if (!wait_alloc) {
		printf("written=%ld failed=%ld secs=%.3f\n", (long)written_svc, (long)failed_svc,
		       t_written);
		return failed_svc ? 1 : 0;
	}
	/* Events may have come before the wait: check every file once, then
	 * follow the events. */
	char buf[64 * 1024];
	double last = now_s();
	bool rescan = true;
	for (; ndone < count && now_s() - last < 60.0;) {
		if (rescan) {
			/* At first, and when the events stop (the inotify queue
			 * may have overflowed under this many writes): look at
			 * every one not seen allocated yet. */
			rescan = false;
			long before = ndone;
			for (long i = 0; i < count; i++) {
				char name[32];
				snprintf(name, sizeof(name), "svc-%05ld.yaml", i);
				if (!done[i] && allocated(name)) {
					done[i] = true;
					ndone++;
				}
			}
			if (ndone > before)
				last = now_s();
			continue;
		}
		struct pollfd p = {.fd = in, .events = POLLIN};
		if (poll(&p, 1, 500) <= 0) {
			rescan = true;
			continue;
		}
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) > 0) {
			for (char *q = buf; q < buf + n;) {
				struct inotify_event *ev = (struct inotify_event *)q;
				long i = -1;
				if (ev->len && sscanf(ev->name, "svc-%05ld.yaml", &i) == 1 &&
				    i >= 0 && i < count && !done[i] && allocated(ev->name)) {
					done[i] = true;
					ndone++;
					last = now_s();
				}
				q += sizeof(*ev) + ev->len;
			}
		}
	}
	printf("written=%ld failed=%ld allocated=%ld written_secs=%.3f secs=%.3f\n",
	       (long)written_svc, (long)failed_svc, ndone, t_written, last - t0);
	return ndone == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: svcbench flip|roundtrip|services -m MOUNT [-N NS] [-n N] "
				"[-t T] [-w]\n");
		return 2;
	}
	const char *mode = argv[1];
	int c;
	optind = 2;
	while ((c = getopt(argc, argv, "m:N:n:t:w")) != -1) {
		switch (c) {
		case 'm':
			mount_dir = optarg;
			break;
		case 'N':
			ns = optarg;
			break;
		case 'n':
			count = atol(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'w':
			wait_alloc = true;
			break;
		default:
			return 2;
		}
	}
	if (!mount_dir || count < 1 || threads < 1)
		return 2;
	if (!strcmp(mode, "flip"))
		return run_flip();
	if (!strcmp(mode, "roundtrip"))
		return run_roundtrip();
	if (!strcmp(mode, "services"))
		return run_services();
	fprintf(stderr, "svcbench: unknown mode %s\n", mode);
	return 2;
}
