/* exec.c: fork, exec, feed, wait. */
#include "exec.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXEC_ERR_MAX 1024

static void exec__child(char *const argv[], int in, int outfd, int errfd, pid_t netns_pid)
{
	if (netns_pid > 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)netns_pid);
		int ns = open(path, O_RDONLY | O_CLOEXEC);
		if (ns < 0 || setns(ns, CLONE_NEWNET) < 0) {
			dprintf(errfd, "cannot enter the network namespace of pid %d: %s\n",
				(int)netns_pid, strerror(errno));
			_exit(126);
		}
	}
	if (outfd < 0)
		outfd = open("/dev/null", O_WRONLY);
	if (dup2(in, STDIN_FILENO) < 0 || dup2(outfd, STDOUT_FILENO) < 0 ||
	    dup2(errfd, STDERR_FILENO) < 0)
		_exit(126);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "%s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The last non-empty line of text, trimmed, in place. */
static const char *exec__last_line(char *text)
{
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = '\0';
	char *nl = strrchr(text, '\n');
	return nl ? nl + 1 : text;
}

/* Reads fd to its end into a malloc'd string. */
static char *exec__slurp(int fd)
{
	size_t cap = 4096, got = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (got + 1 == cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + got, cap - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return buf;
}

/* exec_run() and exec_output(): with out, standard output is read into
 * *out before standard error (what ip(8) prints is small enough that it
 * never waits on a full error pipe meanwhile). */
static int exec__run(char *const argv[], const char *input, pid_t netns_pid, char **out,
		     struct error **err)
{
	int inp[2], errp[2], outp[2] = {-1, -1};
	if (out)
		*out = NULL;
	if (pipe2(inp, O_CLOEXEC) < 0)
		return error_set(err, errno, "%s: pipe: %s", argv[0], strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0) {
		int e = errno;
		close(inp[0]);
		close(inp[1]);
		return error_set(err, e, "%s: pipe: %s", argv[0], strerror(e));
	}
	if (out && pipe2(outp, O_CLOEXEC) < 0) {
		int e = errno;
		close(inp[0]);
		close(inp[1]);
		close(errp[0]);
		close(errp[1]);
		return error_set(err, e, "%s: pipe: %s", argv[0], strerror(e));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(inp[0]);
		close(inp[1]);
		close(errp[0]);
		close(errp[1]);
		if (out) {
			close(outp[0]);
			close(outp[1]);
		}
		return error_set(err, e, "%s: fork: %s", argv[0], strerror(e));
	}
	if (pid == 0)
		exec__child(argv, inp[0], outp[1], errp[1], netns_pid);
	close(inp[0]);
	close(errp[1]);
	if (out)
		close(outp[1]);
	/* Inputs are small (a pod's few commands, one nft table): a pipe's
	 * buffer holds them, but write in a loop all the same. */
	size_t len = input ? strlen(input) : 0, off = 0;
	while (off < len) {
		ssize_t w = write(inp[1], input + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(inp[1]);
	if (out) {
		*out = exec__slurp(outp[0]);
		close(outp[0]);
	}
	char text[EXEC_ERR_MAX];
	size_t got = 0;
	for (;;) {
		ssize_t r = read(errp[0], text + got, sizeof(text) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == sizeof(text) - 1) {
			char sink[256];
			while (read(errp[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	text[got] = '\0';
	close(errp[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return error_set(err, errno, "%s: waitpid: %s", argv[0], strerror(errno));
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (out) {
		free(*out);
		*out = NULL;
	}
	const char *line = exec__last_line(text);
	if (WIFEXITED(status))
		return error_set(err, EIO, "%s exited %d%s%s", argv[0], WEXITSTATUS(status),
				 *line ? ": " : "", line);
	return error_set(err, EIO, "%s killed by signal %d", argv[0], WTERMSIG(status));
}

int exec_run(char *const argv[], const char *input, pid_t netns_pid, struct error **err)
{
	return exec__run(argv, input, netns_pid, NULL, err);
}

int exec_output(char *const argv[], pid_t netns_pid, char **out, struct error **err)
{
	return exec__run(argv, NULL, netns_pid, out, err);
}
