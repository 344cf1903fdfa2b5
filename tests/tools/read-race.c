/* read-race: while writers rewrite one object in place (open O_TRUNC,
 * write, close), readers must only ever read a whole stored version: never
 * an empty file, a NUL byte, or a text cut short. Exits 1 if any read was
 * bad. Used by tests/integration/fs.sh.
 *   read-race PATH SECONDS [PAGES [rename]]
 * With PAGES, the versions' lengths also vary by up to PAGES pages, so
 * that a version spans several pages of the page cache and the next one
 * ends on another. With rename, the writers write each version to a
 * scratch file beside PATH and rename it over PATH, as sed -i and editors
 * do. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RACE_TAIL "image: busybox}]\n"

#define RACE_PAGE      4096
#define RACE_MAX_PAGES 8

static void race__writer(const char *path, int secs, int id, int pages, int rename_over)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.race-%d", path, id);
	time_t end = time(NULL) + secs;
	for (int i = 0; time(NULL) < end; i++) {
		char buf[(RACE_MAX_PAGES + 1) * RACE_PAGE];
		int pad = (i * 37 + id * 11) % 60 & 63;
		int big =
		    pages ? (i + id) % (pages + 1) * RACE_PAGE % (RACE_MAX_PAGES * RACE_PAGE + 1)
			  : 0;
		snprintf(
		    buf, sizeof(buf),
		    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: race\n  labels: {pad: x%0*d}\n"
		    "  annotations: {big: y%0*d}\n"
		    "spec:\n  containers: [{name: a, " RACE_TAIL,
		    pad, i, big, i);
		int fd = rename_over ? open(tmp, O_WRONLY | O_TRUNC | O_CREAT, 0644)
				     : open(path, O_WRONLY | O_TRUNC);
		if (fd < 0)
			continue;
		if (write(fd, buf, strlen(buf)) < 0)
			perror("write");
		close(fd);
		if (rename_over && rename(tmp, path) < 0)
			perror("rename");
	}
}

static int race__reader(const char *path, int secs)
{
	time_t end = time(NULL) + secs;
	long reads = 0, bad = 0;
	while (time(NULL) < end) {
		static char buf[(RACE_MAX_PAGES + 2) * RACE_PAGE];
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = 0, r;
		while ((r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
			n += r;
		close(fd);
		buf[n] = '\0';
		reads++;
		/* The stored text is normalized (keys sorted, block style),
		 * so a whole version is one that holds the pod's kind and its
		 * image, ends in a newline and has no NUL byte. */
		if (n == 0 || strlen(buf) != (size_t)n || !strstr(buf, "image: busybox") ||
		    !strstr(buf, "kind: Pod") || buf[n - 1] != '\n')
			bad++;
	}
	printf("reader: %ld reads, %ld bad\n", reads, bad);
	fflush(stdout);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5 || (argc == 5 && strcmp(argv[4], "rename") != 0)) {
		fprintf(stderr, "usage: read-race PATH SECONDS [PAGES [rename]]\n");
		return 2;
	}
	int secs = atoi(argv[2]);
	int pages = argc >= 4 ? atoi(argv[3]) : 0;
	int rename_over = argc == 5;
	if (pages < 0 || pages > RACE_MAX_PAGES) {
		fprintf(stderr, "read-race: PAGES is 0 to %d\n", RACE_MAX_PAGES);
		return 2;
	}
	for (int w = 0; w < 2; w++)
		if (fork() == 0) {
			race__writer(argv[1], secs, w, pages, rename_over);
			_exit(0);
		}
	for (int r = 0; r < 3; r++)
		if (fork() == 0)
			_exit(race__reader(argv[1], secs));
	int st, failed = 0;
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	return failed;
}
