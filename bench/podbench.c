/* podbench.c: pod start latency through the mount, and the bare
 * systemd-nspawn it is compared with (bench/pods.sh builds and runs it).
 *
 *   podbench pods DIR NODE IMAGE N     N pods in a row: each written, then
 *                                      timed from its close() until the file
 *                                      says phase Running with a podIP
 *   podbench burst DIR NODE IMAGE N    N pods written at once: time until
 *                                      all are Running
 *   podbench nspawn ROOT N             N runs of a bare
 *                                      systemd-nspawn -D ROOT /bin/true
 *   podbench nspawn-burst ROOT N       N bare systemd-nspawn -D ROOT
 *                                      /bin/sleep started at once: time
 *                                      until all have started (each says
 *                                      READY=1 on its NOTIFY_SOCKET, as
 *                                      corral-shim hears it), the floor of
 *                                      "burst"; then all are killed
 * Prints "median_ms=.. p99_ms=.. max_ms=.." (or "secs=..") on one line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* struct ucred, SCM_CREDENTIALS */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "sdnotify.h"

static void report(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	int p99 = (int)(n * 0.99);
	if (p99 >= n)
		p99 = n - 1;
	printf("median_ms=%.1f p99_ms=%.1f max_ms=%.1f\n", v[n / 2], v[p99], v[n - 1]);
}

static void write_pod(const char *dir, const char *node, const char *image, int i)
{
	char path[4096], text[1024];
	snprintf(path, sizeof(path), "%s/bench-%d.yaml", dir, i);
	int len = snprintf(text, sizeof(text),
			   "apiVersion: v1\nkind: Pod\nmetadata: {name: bench-%d}\nspec:\n"
			   "  nodeName: %s\n  terminationGracePeriodSeconds: 0\n"
			   "  containers: [{name: c, image: %s, command: [\"sleep\", \"3600\"]}]\n",
			   i, node, image);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, (size_t)len) != len || close(fd) < 0) {
		fprintf(stderr, "podbench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static int running(const char *dir, int i)
{
	char path[4096], buf[65536];
	snprintf(path, sizeof(path), "%s/bench-%d.yaml", dir, i);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "\n  phase: Running") && strstr(buf, "\n  podIP: ");
}

/* Waits for an event in the folder (or 100 ms). */
static void wait_event(int ino)
{
	char ev[8192];
	fd_set fds;
	FD_ZERO(&fds);
	FD_SET(ino, &fds);
	struct timeval tv = {0, 100000};
	if (select(ino + 1, &fds, NULL, NULL, &tv) > 0 && read(ino, ev, sizeof(ev)) < 0)
		perror("inotify");
}

/* Starts one bare nspawn running sleep, telling notify of its start. */
static pid_t start_bare(const char *root, const char *notify, int i)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	setenv("NOTIFY_SOCKET", notify, 1);
	char dir[4096], mach[64];
	snprintf(dir, sizeof(dir), "--directory=%s", root);
	snprintf(mach, sizeof(mach), "--machine=benchburst-%d-%d", (int)getppid(), i);
	execlp("systemd-nspawn", "systemd-nspawn", "--quiet", "--register=no", "--keep-unit",
	       "--read-only", "--console=pipe", "--resolv-conf=off", "--timezone=off",
	       "--link-journal=no", mach, dir, "/bin/sleep", "600", (char *)NULL);
	_exit(127);
}

/* N bare nspawns at once: seconds until every one said READY=1. Each is
 * ended by SIGKILL to its container's first process (a sleep that is PID 1
 * ignores SIGTERM), then to the nspawn itself; every wait is bounded. */
static int nspawn_burst(const char *root, int n)
{
	char sock[108];
	int fd = sdnotify_open(sock, sizeof(sock));
	if (fd < 0) {
		perror("podbench: notify socket");
		return 1;
	}
	pid_t *pids = calloc(n, sizeof(*pids)), *leaders = calloc(n, sizeof(*leaders));
	char *ready = calloc(n, 1);
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		pids[i] = start_bare(root, sock, i);
	int done = 0, rc = 0;
	while (done < n) {
		if (now_ms() - t0 > 300000) {
			fprintf(stderr, "podbench: %d of %d bare nspawn started after 300 s\n",
				done, n);
			rc = 1;
			break;
		}
		fd_set fds;
		FD_ZERO(&fds);
		FD_SET(fd, &fds);
		struct timeval tv = {0, 100000};
		if (select(fd + 1, &fds, NULL, NULL, &tv) <= 0)
			continue;
		/* everything queued: the socket holds few datagrams, and a
		 * sender to a full one waits */
		char buf[4096];
		pid_t from;
		while (sdnotify_recv(fd, buf, sizeof(buf), &from) >= 0) {
			for (int i = 0; i < n; i++) {
				if (pids[i] != from)
					continue;
				size_t len;
				const char *leader =
				    sdnotify_value(buf, "X_NSPAWN_LEADER_PID", &len);
				if (leader)
					leaders[i] = atoi(leader);
				if (!ready[i] && sdnotify_has(buf, "READY=1")) {
					ready[i] = 1;
					done++;
				}
			}
		}
	}
	double secs = (now_ms() - t0) / 1e3;
	/* closed first: an nspawn sending to a full socket would block */
	close(fd);
	for (int i = 0; i < n; i++)
		if (leaders[i] > 0)
			kill(leaders[i], SIGKILL);
	int left = n;
	double t1 = now_ms();
	while (left > 0 && now_ms() - t1 < 20000) {
		pid_t w = waitpid(-1, NULL, WNOHANG);
		if (w > 0) {
			left--;
			continue;
		}
		if (w < 0)
			break;
		usleep(10000);
		if (now_ms() - t1 > 2000) /* whatever did not end with its container */
			for (int i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
	}
	if (rc == 0)
		printf("secs=%.2f\n", secs);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "nspawn-burst") == 0)
		return nspawn_burst(argv[2], atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "nspawn") == 0) {
		int n = atoi(argv[3]);
		double *v = calloc(n, sizeof(*v));
		for (int i = 0; i < n; i++) {
			double t0 = now_ms();
			pid_t pid = fork();
			if (pid == 0) {
				int null = open("/dev/null", O_RDWR);
				dup2(null, 0);
				dup2(null, 1);
				dup2(null, 2);
				char dir[4096];
				snprintf(dir, sizeof(dir), "--directory=%s", argv[2]);
				char mach[64];
				snprintf(mach, sizeof(mach), "--machine=bench-%d-%d", (int)getpid(),
					 i);
				execlp("systemd-nspawn", "systemd-nspawn", "--quiet",
				       "--register=no", "--keep-unit", "--read-only",
				       "--console=pipe", "--resolv-conf=off", "--timezone=off",
				       "--link-journal=no", mach, dir, "/bin/true", (char *)NULL);
				_exit(127);
			}
			int st;
			waitpid(pid, &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				fprintf(stderr, "podbench: systemd-nspawn /bin/true failed (%d)\n",
					st);
				return 1;
			}
			v[i] = now_ms() - t0;
		}
		report(v, n);
		return 0;
	}
	if (argc != 6) {
		fprintf(
		    stderr,
		    "usage: podbench pods|burst DIR NODE IMAGE N | nspawn|nspawn-burst ROOT N\n");
		return 2;
	}
	const char *dir = argv[2], *node = argv[3], *image = argv[4];
	int n = atoi(argv[5]);
	int ino = inotify_init1(IN_CLOEXEC);
	if (ino < 0 || inotify_add_watch(ino, dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		fprintf(stderr, "podbench: watching %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (strcmp(argv[1], "pods") == 0) {
		double *v = calloc(n, sizeof(*v));
		for (int i = 0; i < n; i++) {
			write_pod(dir, node, image, i);
			double t0 = now_ms();
			while (!running(dir, i)) {
				wait_event(ino);
				if (now_ms() - t0 > 60000) {
					fprintf(stderr,
						"podbench: bench-%d not Running after 60 s\n", i);
					return 1;
				}
			}
			v[i] = now_ms() - t0;
		}
		report(v, n);
		return 0;
	}
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		write_pod(dir, node, image, i);
	int done = 0;
	char *seen = calloc(n, 1);
	while (done < n) {
		wait_event(ino);
		for (int i = 0; i < n; i++) {
			if (!seen[i] && running(dir, i)) {
				seen[i] = 1;
				done++;
			}
		}
		if (now_ms() - t0 > 300000) {
			fprintf(stderr, "podbench: %d of %d Running after 300 s\n", done, n);
			return 1;
		}
	}
	printf("secs=%.2f\n", (now_ms() - t0) / 1e3);
	return 0;
}
