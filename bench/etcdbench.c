/* etcdbench.c: the figures of bench/etcd.sh.
 *
 *   etcdbench mount DIR WRITERS SECONDS   ConfigMaps created through a
 *                                         mount's folder DIR, each write
 *                                         durable at close; prints writes/s
 *                                         and the writes made
 *   etcdbench store ENDPOINTS WRITERS SECONDS
 *                                         the same objects put straight into
 *                                         etcd through corral-fs's own etcd
 *                                         client (store_apply); the same
 *   etcdbench latency ADIR BDIR COUNT     a write in ADIR (one mount) until
 *                                         inotify on BDIR (another mount)
 *                                         reports it: p50 and p99 in ms from
 *                                         the write's open, then from its
 *                                         close's return (acknowledged)
 *
 * Built by bench/etcd.sh against corral-fs's objects. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "util.h"
#include "ynode.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct job {
	int id;
	const char *dir;
	struct store *store;
	double until;
	long done;
	long failed;
};

/* Names differ between runs (their writer counts) and writers. */
static int runs;

static char *cm_text(int w, long i)
{
	return xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b%d-%d-%ld\n"
			 "data:\n  a: \"%ld\"\n",
			 runs, w, i, i);
}

static void *mount_writer(void *arg)
{
	struct job *j = arg;
	for (long i = 0; now_s() < j->until; i++) {
		char *text = cm_text(j->id, i);
		char *path = xasprintf("%s/b%d-%d-%ld.yaml", j->dir, runs, j->id, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		bool ok = fd >= 0 && util_write_all(fd, text, strlen(text)) == 0;
		if (fd >= 0 && close(fd) != 0)
			ok = false;
		if (ok)
			j->done++;
		else
			j->failed++;
		free(path);
		free(text);
	}
	return NULL;
}

static void *store_writer(void *arg)
{
	struct job *j = arg;
	for (long i = 0; now_s() < j->until; i++) {
		char *text = cm_text(j->id, i);
		char *key =
		    xasprintf("namespaces/bench-base/configmaps/b%d-%d-%ld", runs, j->id, i);
		char *hpath = xasprintf("%s.yaml", key);
		struct ynode *obj = NULL;
		yaml_parse_one(text, strlen(text), &obj, NULL);
		/* As corral-fs writes a create: the object and its history. */
		struct store_change c = {.key = key,
					 .obj = obj,
					 .history_path = hpath,
					 .history_yaml = text,
					 .message = "bench",
					 .decl_changed = true};
		struct error *err = NULL;
		if (store_apply(j->store, &c, &err) == 0)
			j->done++;
		else
			j->failed++;
		error_free(err);
		free(c.yaml);
		ynode_free(obj);
		free(hpath);
		free(key);
		free(text);
	}
	return NULL;
}

static int run(void *(*fn)(void *), const char *dir, struct store *s, int writers, double secs)
{
	pthread_t t[64];
	struct job jobs[64];
	if (writers < 1 || writers > 64)
		return 2;
	runs = writers;
	double start = now_s();
	for (int i = 0; i < writers; i++) {
		jobs[i] = (struct job){.id = i, .dir = dir, .store = s, .until = start + secs};
		pthread_create(&t[i], NULL, fn, &jobs[i]);
	}
	long done = 0, failed = 0;
	for (int i = 0; i < writers; i++) {
		pthread_join(t[i], NULL);
		done += jobs[i].done;
		failed += jobs[i].failed;
	}
	double took = now_s() - start;
	printf("%.1f %ld\n", (double)done / took, done);
	if (failed)
		fprintf(stderr, "etcdbench: %ld writes failed\n", failed);
	return done > 0 ? 0 : 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int latency(const char *adir, const char *bdir, int count)
{
	int in = inotify_init1(IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, bdir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		perror("etcdbench: inotify");
		return 1;
	}
	double *ms = xcalloc((size_t)count, sizeof(*ms));
	double *ack = xcalloc((size_t)count, sizeof(*ack));
	int got = 0;
	for (int i = 0; i < count; i++) {
		char name[64];
		snprintf(name, sizeof(name), "lat-%d.yaml", i);
		char *path = xasprintf("%s/%s", adir, name);
		char *text =
		    xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lat-%d\n", i);
		double t0 = now_s();
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		bool ok = fd >= 0 && util_write_all(fd, text, strlen(text)) == 0;
		if (fd >= 0 && close(fd) != 0)
			ok = false;
		double t1 = now_s();
		free(path);
		free(text);
		if (!ok)
			continue;
		/* Until B names the file, 5 s at most. */
		bool seen = false;
		while (!seen && now_s() - t0 < 5) {
			fd_set rd;
			FD_ZERO(&rd);
			FD_SET(in, &rd);
			struct timeval tv = {0, 100000};
			if (select(in + 1, &rd, NULL, NULL, &tv) <= 0)
				continue;
			char buf[4096] __attribute__((aligned(8)));
			ssize_t n = read(in, buf, sizeof(buf));
			for (ssize_t off = 0; off < n;) {
				struct inotify_event *ev = (struct inotify_event *)(buf + off);
				if (ev->len && strcmp(ev->name, name) == 0)
					seen = true;
				off += (ssize_t)sizeof(*ev) + ev->len;
			}
		}
		if (seen) {
			double t2 = now_s();
			ack[got] = (t2 - t1) * 1000;
			ms[got++] = (t2 - t0) * 1000;
		}
	}
	if (got == 0) {
		fprintf(stderr, "etcdbench: no write was seen on the other mount\n");
		return 1;
	}
	qsort(ms, (size_t)got, sizeof(*ms), cmp_double);
	qsort(ack, (size_t)got, sizeof(*ack), cmp_double);
	size_t p99 = (size_t)got * 99 / 100;
	printf("%.1f %.1f %.1f %.1f %d\n", ms[got / 2], ms[p99], ack[got / 2], ack[p99], got);
	free(ms);
	free(ack);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "mount") == 0)
		return run(mount_writer, argv[2], NULL, atoi(argv[3]), atof(argv[4]));
	if (argc == 5 && strcmp(argv[1], "store") == 0) {
		struct store *s = NULL;
		struct error *err = NULL;
		char *where = xasprintf("etcd://%s", argv[2]);
		if (store_open(where, &s, &err) < 0) {
			fprintf(stderr, "etcdbench: %s\n", err->msg);
			return 1;
		}
		int r = run(store_writer, NULL, s, atoi(argv[3]), atof(argv[4]));
		store_close(s);
		free(where);
		return r;
	}
	if (argc == 5 && strcmp(argv[1], "latency") == 0)
		return latency(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: etcdbench mount DIR WRITERS SECONDS | store ENDPOINTS WRITERS "
			"SECONDS | latency ADIR BDIR COUNT\n");
	return 2;
}
