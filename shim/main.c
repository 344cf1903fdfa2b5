/* main.c: corral-shim, the parent of one container's systemd-nspawn (the
 * role of CRI-O's conmon).
 *
 *   corral-shim DIR LOG -- COMMAND [ARG]...
 *
 * Starts COMMAND in a session of its own, with standard input /dev/null and
 * standard output and error appended to LOG, writes its pid to DIR/pid,
 * passes SIGTERM, SIGINT and SIGHUP on to it, and when it ends writes
 * "CODE SIGNAL FINISHED\n" to DIR/exit (exit code or 0, terminating signal
 * or 0, end time in seconds since the epoch), by rename, then exits.
 *
 * corral-noded starts one per container. Because the exit is written to a
 * file by a process that outlives corral-noded, a restarted agent still
 * learns how a container it did not see end ended. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: corral-shim DIR LOG -- COMMAND [ARG]...\n");
		return 2;
	}
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
	while (waitpid(pid, &status, 0) < 0) {
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
