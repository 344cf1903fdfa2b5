/*
 * fsbench.c: the load generator of bench/run.sh. Writes or reads many small
 * object files in one folder with a number of threads and prints one line of
 * key=value figures (rate in operations per second).
 *
 * A write is what a client of the mount does: open(O_CREAT|O_TRUNC), one
 * write of a small valid ConfigMap or Pod document, close. Only a close that
 * succeeds counts: corral-fs takes (and makes durable) a document at close.
 * A read is open, read to end of file, close, over existing *.yaml files in a
 * shuffled order. It must never judge the figures: benchmarks assert nothing.
 *
 *   fsbench write -d DIR -n N [-t T] [-s SEC] [-r RANGE] [-p PREFIX] [-k KIND]
 *   fsbench read  -d DIR -n N [-t T] [-s SEC]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_WRITE, MODE_READ };
enum kind { KIND_CONFIGMAP, KIND_POD };

struct bench {
	enum mode mode;
	enum kind kind;
	const char *dir;    /* folder the files live in */
	const char *prefix; /* object names are PREFIX-NNNNN */
	const char *ns;	    /* metadata.namespace written, or NULL */
	long count;	    /* operations to do (upper bound with -s) */
	long range;	    /* writes cycle over this many names */
	int threads;
	double seconds; /* stop after this long, 0 = no limit */
	char **names;	/* read mode: the files found, shuffled */
	long nnames;
	struct timespec start;
	long seq_base;	     /* microseconds since the epoch at the start: no two runs
				write the same sequence numbers */
	atomic_long next;    /* next operation index to take */
	atomic_long done;    /* operations that succeeded */
	atomic_long errors;  /* operations that failed */
	atomic_long last;    /* index of the last successful write */
	atomic_int reported; /* first error printed already */
};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void report_error(struct bench *b, const char *what, const char *name, int err)
{
	atomic_fetch_add(&b->errors, 1);
	if (atomic_exchange(&b->reported, 1) == 0)
		fprintf(stderr, "fsbench: %s %s/%s: %s (further errors counted, not shown)\n", what,
			b->dir, name, strerror(err));
}

/* A valid document of about 300 bytes whose content differs per sequence
 * number, so that every write is a real change (of the declared part too,
 * so that each one reaches the history: a settle waits for it). */
static int render(const struct bench *b, const char *name, long seq, int writer, char *buf,
		  size_t len)
{
	char nsline[160] = "";
	if (b->ns)
		snprintf(nsline, sizeof(nsline), "  namespace: %s\n", b->ns);
	if (b->kind == KIND_POD)
		return snprintf(buf, len,
				"apiVersion: v1\n"
				"kind: Pod\n"
				"metadata:\n"
				"  name: %s\n"
				"%s"
				"  labels:\n"
				"    app: fsbench\n"
				"    writer: \"%d\"\n"
				"  annotations:\n"
				"    fsbench/seq: \"%ld\"\n"
				"spec:\n"
				"  containers:\n"
				"  - name: main\n"
				"    image: busybox\n"
				"    command: [sleep, \"3600\"]\n"
				"    resources:\n"
				"      requests: {cpu: 10m, memory: 16Mi}\n"
				"  terminationGracePeriodSeconds: 5\n",
				name, nsline, writer, seq);
	return snprintf(buf, len,
			"apiVersion: v1\n"
			"kind: ConfigMap\n"
			"metadata:\n"
			"  name: %s\n"
			"%s"
			"  labels:\n"
			"    app: fsbench\n"
			"    writer: \"%d\"\n"
			"data:\n"
			"  seq: \"%ld\"\n"
			"  note: a small object written by the corral benchmark\n"
			"  payload: \"0123456789abcdef0123456789abcdef0123456789abcdef\"\n"
			"  padding: \"fedcba9876543210fedcba9876543210fedcba9876543210\"\n",
			name, nsline, writer, seq);
}

static bool take(struct bench *b, long *idx)
{
	if (b->seconds > 0 && since(&b->start) >= b->seconds)
		return false;
	*idx = atomic_fetch_add(&b->next, 1);
	return *idx < b->count;
}

static void write_one(struct bench *b, long idx, int writer)
{
	char name[256], path[4096], doc[1024];
	snprintf(name, sizeof(name), "%s-%05ld", b->prefix, idx % b->range);
	snprintf(path, sizeof(path), "%s/%s.yaml", b->dir, name);
	int len = render(b, name, b->seq_base + idx, writer, doc, sizeof(doc));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		report_error(b, "open", name, errno);
		return;
	}
	ssize_t n = write(fd, doc, (size_t)len);
	if (n != len) {
		report_error(b, "write", name, n < 0 ? errno : EIO);
		close(fd);
		return;
	}
	if (close(fd) != 0) {
		report_error(b, "close", name, errno);
		return;
	}
	atomic_fetch_add(&b->done, 1);
	atomic_store(&b->last, idx % b->range);
}

static void read_one(struct bench *b, long idx)
{
	char path[4096], buf[65536];
	const char *name = b->names[idx % b->nnames];
	snprintf(path, sizeof(path), "%s/%s", b->dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		report_error(b, "open", name, errno);
		return;
	}
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	int err = n < 0 ? errno : 0;
	close(fd);
	if (err) {
		report_error(b, "read", name, err);
		return;
	}
	atomic_fetch_add(&b->done, 1);
}

struct worker {
	struct bench *bench;
	int id;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	long idx;
	while (take(w->bench, &idx)) {
		if (w->bench->mode == MODE_WRITE)
			write_one(w->bench, idx, w->id);
		else
			read_one(w->bench, idx);
	}
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists DIR's *.yaml files and shuffles them with a fixed seed, so that two
 * folders holding the same names are read in the same order. */
static int list_files(struct bench *b)
{
	DIR *d = opendir(b->dir);
	if (!d) {
		fprintf(stderr, "fsbench: %s: %s\n", b->dir, strerror(errno));
		return -1;
	}
	long cap = 1024;
	b->names = malloc((size_t)cap * sizeof(*b->names));
	struct dirent *e;
	while (b->names && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 5 || strcmp(e->d_name + l - 5, ".yaml") != 0)
			continue;
		if (b->nnames == cap) {
			cap *= 2;
			b->names = realloc(b->names, (size_t)cap * sizeof(*b->names));
			if (!b->names)
				break;
		}
		b->names[b->nnames++] = strdup(e->d_name);
	}
	closedir(d);
	if (!b->names) {
		fprintf(stderr, "fsbench: out of memory\n");
		exit(1);
	}
	if (b->nnames == 0) {
		fprintf(stderr, "fsbench: no *.yaml files in %s\n", b->dir);
		return -1;
	}
	qsort(b->names, (size_t)b->nnames, sizeof(*b->names), by_name);
	srandom(42);
	for (long i = b->nnames - 1; i > 0; i--) {
		long j = random() % (i + 1);
		char *t = b->names[i];
		b->names[i] = b->names[j];
		b->names[j] = t;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fsbench write -d DIR -n N [-t THREADS] [-s SECONDS] [-r RANGE]\n"
		   "                     [-p PREFIX] [-k configmap|pod] [-N NAMESPACE]\n"
		   "       fsbench read  -d DIR -n N [-t THREADS] [-s SECONDS]\n"
		   "Writes name PREFIX-NNNNN.yaml for index %% RANGE (default RANGE = N).\n"
		   "Prints: op= threads= ok= errors= secs= rate= end_ns= [last=]\n");
}

int main(int argc, char **argv)
{
	static struct bench b = {.prefix = "obj", .threads = 1};
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "write") == 0)
		b.mode = MODE_WRITE;
	else if (strcmp(argv[1], "read") == 0)
		b.mode = MODE_READ;
	else {
		usage(stderr);
		return 2;
	}
	int c;
	optind = 2;
	while ((c = getopt(argc, argv, "d:n:t:s:r:p:k:N:")) != -1) {
		switch (c) {
		case 'd':
			b.dir = optarg;
			break;
		case 'n':
			b.count = atol(optarg);
			break;
		case 't':
			b.threads = atoi(optarg);
			break;
		case 's':
			b.seconds = atof(optarg);
			break;
		case 'r':
			b.range = atol(optarg);
			break;
		case 'p':
			b.prefix = optarg;
			break;
		case 'N':
			b.ns = optarg;
			break;
		case 'k':
			if (strcmp(optarg, "pod") == 0)
				b.kind = KIND_POD;
			else if (strcmp(optarg, "configmap") == 0)
				b.kind = KIND_CONFIGMAP;
			else {
				usage(stderr);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!b.dir || b.count <= 0 || b.threads <= 0 || b.threads > 1024) {
		usage(stderr);
		return 2;
	}
	if (b.range <= 0)
		b.range = b.count;
	if (b.mode == MODE_READ && list_files(&b) < 0)
		return 1;
	atomic_store(&b.last, -1);

	pthread_t tid[1024];
	struct worker w[1024];
	clock_gettime(CLOCK_MONOTONIC, &b.start);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	b.seq_base = (long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
	for (int i = 0; i < b.threads; i++) {
		w[i] = (struct worker){.bench = &b, .id = i};
		int rc = pthread_create(&tid[i], NULL, work, &w[i]);
		if (rc != 0) {
			fprintf(stderr, "fsbench: pthread_create: %s\n", strerror(rc));
			return 1;
		}
	}
	for (int i = 0; i < b.threads; i++)
		pthread_join(tid[i], NULL);
	double secs = since(&b.start);
	struct timespec end;
	clock_gettime(CLOCK_REALTIME, &end);

	long ok = atomic_load(&b.done);
	printf("op=%s threads=%d ok=%ld errors=%ld secs=%.6f rate=%.1f end_ns=%lld",
	       b.mode == MODE_WRITE ? "write" : "read", b.threads, ok, atomic_load(&b.errors), secs,
	       secs > 0 ? (double)ok / secs : 0.0,
	       (long long)end.tv_sec * 1000000000LL + end.tv_nsec);
	long last = atomic_load(&b.last);
	if (b.mode == MODE_WRITE && last >= 0)
		printf(" last=%s-%05ld.yaml", b.prefix, last);
	printf("\n");
	return ok > 0 ? 0 : 1;
}
