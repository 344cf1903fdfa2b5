/* read-fresh: what an informer relies on. A changer changes one object's
 * text ROUNDS times; after each change it tells a reader in another
 * process, which waits for the change's inotify event, then opens and
 * reads the file at once, twice (the second read may come from the
 * kernel's cache), and must find the new text whole, with a
 * resourceVersion above every one it saw before. Before each change the
 * reader reads the file once, so that the kernel's page cache holds the
 * old text. Exits 1 on any stale or torn read. Used by
 * tests/integration/fs.sh and finalizers.sh.
 *   read-fresh PATH ROUNDS [MODE]
 * MODE is how the text changes:
 *   write      open O_TRUNC, write, close (the default); IN_CLOSE_WRITE
 *   truncate   truncate(2) by path of what a write stored, cutting its
 *              last line (metadata.uid); IN_MODIFY
 *   rename     a scratch file written beside it, renamed over it;
 *              IN_MOVED_TO
 *   rm         rm of a ConfigMap with a finalizer, which stays being
 *              deleted; IN_DELETE. Then the finalizer is removed.
 *   terminate  rm of PATH-N.yaml, a Namespace that holds a ConfigMap, in
 *              namespaces/, which stays Terminating; IN_DELETE. Its
 *              ConfigMap and namespace stay. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FRESH_MAX (6 * 4096)

enum fresh_mode { FRESH_WRITE, FRESH_TRUNCATE, FRESH_RENAME, FRESH_RM, FRESH_TERMINATE };

/* What the changer tells the reader: read path (prime: to fill the page
 * cache; else: check the change). */
struct fresh_msg {
	int seq;
	int prime;
	char path[512];
};

/* Reads all of path into buf (NUL-terminated); returns its length or -1. */
static ssize_t fresh__read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r;
	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

static unsigned long long fresh__rv(const char *buf)
{
	const char *p = strstr(buf, "resourceVersion: ");
	if (!p)
		return 0;
	p += strlen("resourceVersion: ");
	while (*p == '\'' || *p == '"')
		p++;
	return strtoull(p, NULL, 10);
}

/* Whether buf is a whole object: one NUL-free text that ends a line. */
static int fresh__whole(const char *buf, ssize_t n)
{
	return n > 0 && strlen(buf) == (size_t)n && buf[n - 1] == '\n' && strstr(buf, "kind: ");
}

/* Whether buf is what round seq's change made; sets *rv. */
static int fresh__check(enum fresh_mode mode, const char *buf, ssize_t n, int seq,
			unsigned long long *rv)
{
	char want1[64], want2[64];
	snprintf(want1, sizeof(want1), "seq: '%d'\n", seq);
	snprintf(want2, sizeof(want2), "seq: \"%d\"\n", seq);
	if (!fresh__whole(buf, n))
		return 0;
	*rv = fresh__rv(buf);
	switch (mode) {
	case FRESH_WRITE:
	case FRESH_RENAME:
	case FRESH_TRUNCATE: /* the uid cut away, and stored again */
		return (strstr(buf, want1) || strstr(buf, want2)) && *rv > 0;
	case FRESH_RM:
		return (strstr(buf, want1) || strstr(buf, want2)) &&
		       strstr(buf, "deletionTimestamp: ") && *rv > 0;
	case FRESH_TERMINATE:
		return strstr(buf, "phase: Terminating") && *rv > 0;
	}
	return 0;
}

static uint32_t fresh__event(enum fresh_mode mode)
{
	switch (mode) {
	case FRESH_WRITE:
		return IN_CLOSE_WRITE;
	case FRESH_TRUNCATE:
		return IN_MODIFY;
	case FRESH_RENAME:
		return IN_MOVED_TO;
	case FRESH_RM:
	case FRESH_TERMINATE:
		return IN_DELETE;
	}
	return 0;
}

/* Reads the inotify events queued on ino; returns whether one of mask
 * named name. With wait, waits up to 10 s for it. */
static int fresh__events(int ino, uint32_t mask, const char *name, int wait)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	int seen = 0;
	for (;;) {
		struct pollfd p = {ino, POLLIN, 0};
		int r = poll(&p, 1, seen || !wait ? 0 : 10000);
		if (r <= 0)
			return seen;
		ssize_t len = read(ino, buf, sizeof(buf));
		if (len <= 0)
			return seen;
		for (char *q = buf; q < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)q;
			if ((ev->mask & mask) && ev->len && strcmp(ev->name, name) == 0)
				seen = 1;
			q += sizeof(*ev) + ev->len;
		}
	}
}

static int fresh__reader(enum fresh_mode mode, int in, int out)
{
	static char buf[FRESH_MAX * 2];
	unsigned long long last = 0, primed = 0;
	long bad = 0, rounds = 0;
	struct fresh_msg m;
	int ino = inotify_init1(IN_CLOEXEC);
	int wd = -1;
	char watched[512] = "";
	while (read(in, &m, sizeof(m)) == sizeof(m)) {
		char dcopy[512], ncopy[512];
		snprintf(dcopy, sizeof(dcopy), "%s", m.path);
		snprintf(ncopy, sizeof(ncopy), "%s", m.path);
		const char *dir = dirname(dcopy), *name = basename(ncopy);
		if (strcmp(watched, dir) != 0) {
			if (wd >= 0)
				inotify_rm_watch(ino, wd);
			wd = inotify_add_watch(
			    ino, dir, IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_DELETE);
			snprintf(watched, sizeof(watched), "%s", dir);
		}
		if (m.prime) {
			/* The old text in the page cache, and the events so far
			 * read. */
			ssize_t n = fresh__read(m.path, buf, sizeof(buf));
			primed = fresh__whole(buf, n) ? fresh__rv(buf) : 0;
			if (primed > last)
				last = primed;
			fresh__events(ino, 0, name, 0);
		} else {
			if (!fresh__events(ino, fresh__event(mode), name, 1)) {
				if (bad++ < 5)
					fprintf(stderr, "read-fresh: round %d: no inotify event\n",
						m.seq);
			}
			for (int k = 0; k < 2; k++) {
				unsigned long long rv = 0;
				ssize_t n = fresh__read(m.path, buf, sizeof(buf));
				/* Above the text the change replaced, and never
				 * below one seen before. */
				if (!fresh__check(mode, buf, n, m.seq, &rv) || rv <= primed ||
				    rv < last) {
					if (bad++ < 5)
						fprintf(stderr,
							"read-fresh: read %d of round %d: stale or "
							"torn (%zd bytes, rv %llu after %llu)\n",
							k + 1, m.seq, n, rv, last);
				} else {
					last = rv;
				}
			}
			rounds++;
		}
		if (write(out, &m.seq, sizeof(m.seq)) != sizeof(m.seq))
			break;
	}
	printf("read-fresh: %ld changes, %ld bad reads\n", rounds, bad);
	fflush(stdout);
	return bad ? 1 : 0;
}

static int fresh__put(const char *path, const char *doc)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, doc, strlen(doc)) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Tells the reader and waits for its answer. */
static int fresh__tell(int to, int back, int seq, int prime, const char *path)
{
	struct fresh_msg m = {seq, prime, ""};
	snprintf(m.path, sizeof(m.path), "%s", path);
	int ack;
	return write(to, &m, sizeof(m)) == sizeof(m) && read(back, &ack, sizeof(ack)) == sizeof(ack)
		   ? 0
		   : -1;
}

/* Round i's change of path (named name); 0 or -1. */
static int fresh__change(enum fresh_mode mode, const char *path, const char *name, int i, int to,
			 int back, char *target, size_t tcap)
{
	static char doc[FRESH_MAX + 512];
	static char cur[FRESH_MAX * 2];
	/* Lengths that cross page boundaries both ways. */
	int pad = (i * 1361) % FRESH_MAX;
	snprintf(target, tcap, "%s", path);
	switch (mode) {
	case FRESH_WRITE:
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n"
			 "  seq: \"%d\"\n  pad: \"%0*d\"\n",
			 name, i, pad, 0);
		if (i == 1 && fresh__put(path, doc) < 0) /* something to prime with */
			return -1;
		if (fresh__tell(to, back, i, 1, path) < 0)
			return -1;
		return fresh__put(path, doc);
	case FRESH_TRUNCATE: {
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n"
			 "  seq: \"%d\"\n  pad: \"%0*d\"\n",
			 name, i, pad, 0);
		if (fresh__put(path, doc) < 0 || fresh__tell(to, back, i, 1, path) < 0)
			return -1;
		ssize_t n = fresh__read(path, cur, sizeof(cur));
		if (n < 2)
			return -1;
		ssize_t cut = n - 1;
		while (cut > 0 && cur[cut - 1] != '\n')
			cut--;
		if (strncmp(cur + cut, "  uid: ", 7) != 0) {
			fprintf(stderr, "read-fresh: the last line is no uid: %s\n", cur + cut);
			return -1;
		}
		return truncate(path, cut);
	}
	case FRESH_RENAME: {
		char tmp[600];
		snprintf(tmp, sizeof(tmp), "%s.fresh-tmp", path);
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n"
			 "  seq: \"%d\"\n  pad: \"%0*d\"\n",
			 name, i, pad, 0);
		if (i == 1 && fresh__put(path, doc) < 0)
			return -1;
		if (fresh__tell(to, back, i, 1, path) < 0 || fresh__put(tmp, doc) < 0)
			return -1;
		return rename(tmp, path);
	}
	case FRESH_RM:
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"
			 "  finalizers: [example.com/hold]\ndata:\n"
			 "  seq: \"%d\"\n  pad: \"%0*d\"\n",
			 name, i, pad, 0);
		if (fresh__put(path, doc) < 0 || fresh__tell(to, back, i, 1, path) < 0)
			return -1;
		return unlink(path);
	case FRESH_TERMINATE: {
		/* PATH is namespaces/NAME.yaml: this round's is NAME-i. */
		char base[600], dir[700], cm[800];
		snprintf(base, sizeof(base), "%.*s-%d", (int)(strlen(path) - 5), path, i);
		snprintf(target, tcap, "%s.yaml", base);
		snprintf(dir, sizeof(dir), "%s/configmaps", base);
		snprintf(cm, sizeof(cm), "%s/keep.yaml", dir);
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata:\n"
			 "  pad: \"%0*d\"\n",
			 pad, 0);
		if ((mkdir(base, 0755) < 0 && errno != EEXIST) || fresh__put(cm, doc) < 0 ||
		    fresh__tell(to, back, i, 1, target) < 0)
			return -1;
		return unlink(target);
	}
	}
	return -1;
}

/* After round i's check: what the next round needs. */
static int fresh__after(enum fresh_mode mode, const char *path, const char *name)
{
	static char doc[512];
	if (mode != FRESH_RM)
		return 0;
	/* The finalizer removed: the ConfigMap goes. */
	snprintf(doc, sizeof(doc),
		 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  finalizers: []\n",
		 name);
	if (fresh__put(path, doc) < 0 && errno != ENOENT)
		return -1;
	/* The file leaves once the kernel's entry is dropped, which the
	 * notifier does after the close: wait for that state. */
	struct stat st;
	for (int k = 0; k < 1000; k++) {
		if (stat(path, &st) < 0)
			return errno == ENOENT ? 0 : -1;
		usleep(10000);
	}
	errno = EEXIST;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr,
			"usage: read-fresh PATH ROUNDS [write|truncate|rename|rm|terminate]\n");
		return 2;
	}
	const char *path = argv[1];
	int rounds = atoi(argv[2]);
	static const char *const modes[] = {"write", "truncate", "rename", "rm", "terminate"};
	enum fresh_mode mode = FRESH_WRITE;
	if (argc == 4) {
		size_t k = 0;
		while (k < sizeof(modes) / sizeof(modes[0]) && strcmp(argv[3], modes[k]) != 0)
			k++;
		if (k == sizeof(modes) / sizeof(modes[0])) {
			fprintf(stderr, "read-fresh: no mode %s\n", argv[3]);
			return 2;
		}
		mode = (enum fresh_mode)k;
	}
	char *copy = strdup(path);
	char *name = basename(copy);
	char *dot = strstr(name, ".yaml");
	if (dot)
		*dot = '\0';
	int to[2], back[2];
	if (pipe(to) < 0 || pipe(back) < 0) {
		perror("pipe");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(to[1]);
		close(back[0]);
		_exit(fresh__reader(mode, to[0], back[1]));
	}
	close(to[0]);
	close(back[1]);
	int failed = 0;
	for (int i = 1; i <= rounds && !failed; i++) {
		char target[700];
		if (fresh__change(mode, path, name, i, to[1], back[0], target, sizeof(target)) <
		    0) {
			fprintf(stderr, "read-fresh: round %d: %s %s: %s\n", i, modes[mode], target,
				strerror(errno));
			failed = 1;
			break;
		}
		if (fresh__tell(to[1], back[0], i, 0, target) < 0)
			break;
		if (fresh__after(mode, path, name) < 0) {
			fprintf(stderr, "read-fresh: round %d: removing the finalizer: %s\n", i,
				strerror(errno));
			failed = 1;
		}
	}
	close(to[1]);
	int st;
	waitpid(pid, &st, 0);
	free(copy);
	return failed || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}
