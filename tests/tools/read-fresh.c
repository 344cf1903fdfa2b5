/* read-fresh: what an informer relies on. A writer rewrites one ConfigMap
 * (open O_TRUNC, write, close) ROUNDS times, each version with a number
 * of its own and a length of its own (some span several pages); after
 * each close it tells a reader in another process, which opens and reads
 * the file at once, twice (the second read may come from the kernel's
 * cache), and must find that version whole, with a resourceVersion above
 * every one it saw before. Exits 1 on any stale or torn read. Used by
 * tests/integration/fs.sh.
 *   read-fresh PATH ROUNDS */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FRESH_MAX (6 * 4096)

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

/* Whether buf is version seq whole; sets *rv to its resourceVersion. */
static int fresh__check(const char *buf, ssize_t n, int seq, unsigned long long *rv)
{
	char want1[64], want2[64];
	snprintf(want1, sizeof(want1), "seq: '%d'\n", seq);
	snprintf(want2, sizeof(want2), "seq: \"%d\"\n", seq);
	if (n <= 0 || strlen(buf) != (size_t)n || buf[n - 1] != '\n' ||
	    !strstr(buf, "kind: ConfigMap") || (!strstr(buf, want1) && !strstr(buf, want2)))
		return 0;
	const char *p = strstr(buf, "resourceVersion: ");
	if (!p)
		return 0;
	p += strlen("resourceVersion: ");
	while (*p == '\'' || *p == '"')
		p++;
	*rv = strtoull(p, NULL, 10);
	return *rv > 0;
}

static int fresh__reader(const char *path, int in, int out)
{
	static char buf[FRESH_MAX * 2];
	unsigned long long last = 0;
	long bad = 0, rounds = 0;
	int seq;
	while (read(in, &seq, sizeof(seq)) == sizeof(seq)) {
		for (int k = 0; k < 2; k++) {
			unsigned long long rv = 0;
			ssize_t n = fresh__read(path, buf, sizeof(buf));
			if (!fresh__check(buf, n, seq, &rv) || rv < last) {
				if (bad++ < 5)
					fprintf(stderr,
						"read-fresh: read %d of version %d: stale or torn "
						"(%zd bytes, rv %llu after %llu)\n",
						k + 1, seq, n, rv, last);
			} else {
				last = rv;
			}
		}
		rounds++;
		if (write(out, &seq, sizeof(seq)) != sizeof(seq))
			break;
	}
	printf("read-fresh: %ld versions, %ld bad reads\n", rounds, bad);
	fflush(stdout);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: read-fresh PATH ROUNDS\n");
		return 2;
	}
	const char *path = argv[1];
	int rounds = atoi(argv[2]);
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
		_exit(fresh__reader(path, to[0], back[1]));
	}
	close(to[0]);
	close(back[1]);
	static char doc[FRESH_MAX + 512];
	int failed = 0;
	for (int i = 1; i <= rounds; i++) {
		/* Lengths that cross page boundaries both ways. */
		int pad = (i * 1361) % FRESH_MAX;
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n"
			 "  seq: \"%d\"\n  pad: \"%0*d\"\n",
			 name, i, pad, 0);
		int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);
		if (fd < 0 || write(fd, doc, strlen(doc)) < 0 || close(fd) < 0) {
			perror("read-fresh: write");
			failed = 1;
			break;
		}
		int ack;
		if (write(to[1], &i, sizeof(i)) != sizeof(i) ||
		    read(back[0], &ack, sizeof(ack)) != sizeof(ack))
			break;
	}
	close(to[1]);
	int st;
	waitpid(pid, &st, 0);
	free(copy);
	return failed || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}
