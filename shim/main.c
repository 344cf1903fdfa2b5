/* main.c: corral-shim, the parent of one container's systemd-nspawn (the
 * role of CRI-O's conmon).
 *
 *   corral-shim [--ready-fd N] DIR LOG -- COMMAND [ARG]...
 *
 * Starts COMMAND in a session of its own, with standard input /dev/null and
 * standard output and error appended to LOG, writes its pid to DIR/pid,
 * passes SIGTERM, SIGINT and SIGHUP on to it, and when it ends writes
 * "CODE SIGNAL FINISHED\n" to DIR/exit (exit code or 0, terminating signal
 * or 0, end time in seconds since the epoch), by rename, then exits.
 *
 * COMMAND is a systemd-nspawn: it tells the shim when the container's first
 * process starts by sending READY=1 to the NOTIFY_SOCKET the shim gives it
 * (an autobound abstract socket; only a message whose sender is that
 * nspawn counts, by its SCM_CREDENTIALS). The shim then writes DIR/started
 * and a byte to fd N. An nspawn that never says so is watched the old way:
 * every POLL_MS the shim looks for a child of it that runs another program.
 * Either wait ends with the child, and after 30 s at most.
 *
 * corral-noded starts one per container. Because the exit is written to a
 * file by a process that outlives corral-noded, a restarted agent still
 * learns how a container it did not see end ended. */
#include "sdnotify.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define START_WAIT_MS 30000 /* how long the container may take to start */
#define POLL_MS	      50    /* the /proc look's period, for an nspawn that never notifies */

static volatile sig_atomic_t child;

static void forward(int signo)
{
	if (child > 0)
		kill(child, signo);
}

/* Writes text to dir/name through a temporary file and a rename. */
static int write_file(const char *dir, const char *name, const char *text)
{
	char tmp[4096], path[4096];
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	int r = write(fd, text, len) == (ssize_t)len ? 0 : -1;
	if (close(fd) < 0)
		r = -1;
	if (r == 0)
		r = rename(tmp, path);
	return r;
}

/* Whether a child of pid runs another program than pid does. */
static int payload_started(pid_t pid)
{
	char path[64], self[4096], exe[4096], kids[4096];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, self, sizeof(self) - 1);
	if (n <= 0)
		return 0;
	self[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, kids, sizeof(kids) - 1);
	close(fd);
	if (k <= 0)
		return 0;
	kids[k] = '\0';
	for (char *save, *t = strtok_r(kids, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
		snprintf(path, sizeof(path), "/proc/%s/exe", t);
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, self) != 0)
				return 1;
		}
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reads what is queued on the notify socket (sdnotify.h): whether pid
 * (and no one else) said READY=1. */
static int notify_ready(int fd, pid_t pid)
{
	int ready = 0;
	char buf[4096];
	pid_t from;
	while (sdnotify_recv(fd, buf, sizeof(buf), &from) >= 0)
		if (from == pid && sdnotify_has(buf, "READY=1"))
			ready = 1;
	return ready;
}

/* Waits (up to START_WAIT_MS) for the container's first process, then says
 * so. Returns 1 with the child's status when it ended meanwhile. */
static int wait_started(const char *dir, pid_t pid, int ready_fd, int notify_fd, int *status)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	uint64_t deadline = now_ms() + START_WAIT_MS;
	int ended = 0, started = 0;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid) {
			ended = 1;
			break;
		}
		if (notify_fd >= 0 && notify_ready(notify_fd, pid)) {
			started = 1;
			break;
		}
		if (payload_started(pid)) {
			started = 1;
			break;
		}
		uint64_t now = now_ms();
		if (now >= deadline)
			break;
		/* the child's end, a message, or the next look */
		struct pollfd fds[2] = {{.fd = pidfd, .events = POLLIN},
					{.fd = notify_fd, .events = POLLIN}};
		int wait = (int)(deadline - now < POLL_MS ? deadline - now : POLL_MS);
		if (pidfd < 0 && wait > 2)
			wait = 2; /* no pidfd: the child's end is looked for too */
		if (poll(fds, 2, wait) < 0 && errno != EINTR)
			break;
	}
	if (started) {
		write_file(dir, "started", "1\n");
		if (ready_fd >= 0 && write(ready_fd, "1", 1) < 0)
			perror("corral-shim: ready fd");
	}
	if (pidfd >= 0)
		close(pidfd);
	if (ready_fd >= 0)
		close(ready_fd);
	return ended;
}

int main(int argc, char **argv)
{
	int ready_fd = -1;
	if (argc > 2 && strcmp(argv[1], "--ready-fd") == 0) {
		ready_fd = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: corral-shim [--ready-fd N] DIR LOG -- COMMAND [ARG]...\n");
		return 2;
	}
	if (ready_fd >= 0)
		fcntl(ready_fd, F_SETFD, FD_CLOEXEC);
	const char *dir = argv[1], *log = argv[2];
	int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (out < 0 || in < 0) {
		fprintf(stderr, "corral-shim: %s: %s\n", out < 0 ? log : "/dev/null",
			strerror(errno));
		return 1;
	}
	struct sigaction sa = {.sa_handler = forward};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char notify_name[128];
	int notify_fd = sdnotify_open(notify_name, sizeof(notify_name));
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "corral-shim: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		setsid();
		if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
		    dup2(out, STDERR_FILENO) < 0)
			_exit(127);
		/* ours, never one the agent was given (systemd's) */
		if (notify_fd >= 0)
			setenv("NOTIFY_SOCKET", notify_name, 1);
		else
			unsetenv("NOTIFY_SOCKET");
		execvp(argv[4], argv + 4);
		dprintf(out, "corral-shim: %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	child = pid;
	close(in);
	close(out);
	char text[64];
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	if (write_file(dir, "pid", text) < 0)
		fprintf(stderr, "corral-shim: %s/pid: %s\n", dir, strerror(errno));

	int status;
	int ended = wait_started(dir, pid, ready_fd, notify_fd, &status);
	if (notify_fd >= 0)
		close(notify_fd);
	while (!ended && waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "corral-shim: waitpid: %s\n", strerror(errno));
			return 1;
		}
	}
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	snprintf(text, sizeof(text), "%d %d %lld\n", code, sig, (long long)time(NULL));
	if (write_file(dir, "exit", text) < 0) {
		fprintf(stderr, "corral-shim: %s/exit: %s\n", dir, strerror(errno));
		return 1;
	}
	return 0;
}
