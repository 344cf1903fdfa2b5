/* main.c: corral-exec, `kubectl exec` for corral (corral-exec(8)).
 *
 *   corral-exec [-i] [-t] [--mount DIR] [--state DIR] [-n NS] POD [-c NAME] -- CMD [ARG]...
 *
 * Finds the pod in the mount (its node and uid), the container's first
 * process from the node agent's state on this machine, and runs CMD in
 * that container (lib/enter.h). -i passes standard input on (else the
 * command reads /dev/null); -t gives the command a pseudo-terminal whose
 * other side this process relays to its own terminal, put in raw mode,
 * with window size changes passed on. Exit status: the command's (128 +
 * the signal when one ended it), and as kubectl does, a message
 * "command terminated with exit code N" on standard error when it is not
 * 0; 1 when the pod or container cannot be found. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "enter.h"
#include "error.h"
#include "util.h"
#include "ynode.h"

#define PROG "corral-exec"

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-i] [-t] [--mount DIR] [--state DIR] [-n NAMESPACE] POD "
		   "[-c CONTAINER] -- COMMAND [ARG]...\n"
		   "  -i, --stdin          pass standard input to the command\n"
		   "  -t, --tty            give the command a terminal\n"
		   "  -n, --namespace NS   the pod's namespace (default: default)\n"
		   "  -c, --container NAME the container (default: the pod's "
		   "kubectl.kubernetes.io/default-container, else its first)\n"
		   "  --mount DIR          the cluster's mount (default: /cluster)\n"
		   "  --state DIR          the node agent's state folder (default: "
		   "/var/lib/corral)\n");
}

/* The container's name: -c, else the default-container annotation, else
 * the first container. NULL with a message when the pod has no such one. */
static const char *exec__container(const struct ynode *pod, const char *want, const char *podname)
{
	const struct ynode *list = ynode_path(pod, "spec.containers");
	if (!want) {
		const struct ynode *ann = ynode_path(pod, "metadata.annotations");
		want = ynode_str(ynode_get(ann, "kubectl.kubernetes.io/default-container"));
		if (!want && list && list->type == YNODE_SEQ && list->n > 0)
			want = ynode_path_str(ynode_item(list, 0), "name");
		if (!want) {
			fprintf(stderr, "error: pod %s has no containers\n", podname);
			return NULL;
		}
	}
	static const char *const lists[] = {"spec.containers", "spec.initContainers",
					    "spec.ephemeralContainers"};
	for (size_t l = 0; l < 3; l++) {
		const struct ynode *cs = ynode_path(pod, lists[l]);
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n; i++) {
			const char *n = ynode_path_str(ynode_item(cs, i), "name");
			if (n && strcmp(n, want) == 0)
				return n;
		}
	}
	fprintf(stderr, "error: container %s is not valid for pod %s\n", want, podname);
	return NULL;
}

static volatile sig_atomic_t exec__winch;

static void exec__on_winch(int signo)
{
	(void)signo;
	exec__winch = 1;
}

static int exec__status(int status)
{
	int code = WIFEXITED(status)	 ? WEXITSTATUS(status)
		   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					 : 1;
	if (code)
		fprintf(stderr, "command terminated with exit code %d\n", code);
	return code;
}

static bool exec__write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		n -= (size_t)w;
	}
	return true;
}

/* -t: the command on a pseudo-terminal, relayed to ours. */
static int exec__tty(pid_t target, char **argv, bool in)
{
	int master, slave;
	struct termios saved;
	bool raw = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	struct winsize ws;
	bool have_ws = isatty(STDIN_FILENO) && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0;
	if (openpty(&master, &slave, NULL, raw ? &saved : NULL, have_ws ? &ws : NULL) < 0) {
		fprintf(stderr, PROG ": openpty: %s\n", strerror(errno));
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(master);
		dup2(slave, STDIN_FILENO);
		dup2(slave, STDOUT_FILENO);
		dup2(slave, STDERR_FILENO);
		if (slave > STDERR_FILENO)
			close(slave);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* goes with us, the command too */
		struct error *err = NULL;
		enter_exec(target, argv, true, &err);
		fprintf(stderr, PROG ": %s\n", err ? err->msg : "cannot enter the container");
		_exit(126);
	}
	close(slave);
	if (raw) {
		struct termios t = saved;
		cfmakeraw(&t);
		tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
	struct sigaction sa = {.sa_handler = exec__on_winch};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	char buf[8192];
	bool in_open = in;
	for (;;) {
		if (exec__winch) {
			exec__winch = 0;
			if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
				ioctl(master, TIOCSWINSZ, &ws);
		}
		struct pollfd p[2] = {{master, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
		int n = poll(p, in_open ? 2 : 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents) {
			ssize_t r = read(master, buf, sizeof(buf));
			if (r <= 0)
				break; /* EIO: the command and its children closed it */
			exec__write_all(STDOUT_FILENO, buf, (size_t)r);
		}
		if (in_open && p[1].revents) {
			ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
			if (r <= 0) {
				in_open = false;
				/* end of input: the terminal's end-of-file character */
				char eof = 4;
				exec__write_all(master, &eof, 1);
			} else {
				exec__write_all(master, buf, (size_t)r);
			}
		}
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	close(master);
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return exec__status(status);
}

/* Without -t: the command on our standard output and error. */
static int exec__plain(pid_t target, char **argv, bool in)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (!in) {
			int null = open("/dev/null", O_RDONLY);
			if (null >= 0)
				dup2(null, STDIN_FILENO);
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* goes with us, the command too */
		struct error *err = NULL;
		enter_exec(target, argv, false, &err);
		fprintf(stderr, PROG ": %s\n", err ? err->msg : "cannot enter the container");
		_exit(126);
	}
	return exec__status(enter_wait(pid));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"stdin", no_argument, NULL, 'i'},
					     {"tty", no_argument, NULL, 't'},
					     {"namespace", required_argument, NULL, 'n'},
					     {"container", required_argument, NULL, 'c'},
					     {"mount", required_argument, NULL, 'M'},
					     {"state", required_argument, NULL, 'S'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	bool in = false, tty = false;
	const char *ns = "default", *want = NULL, *mount = "/cluster", *state = "/var/lib/corral";
	int o;
	while ((o = getopt_long(argc, argv, "+itn:c:h", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			in = true;
			break;
		case 't':
			tty = true;
			break;
		case 'n':
			ns = optarg;
			break;
		case 'c':
			want = optarg;
			break;
		case 'M':
			mount = optarg;
			break;
		case 'S':
			state = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	const char *podname = argv[optind++];
	/* kubectl's form: POD [-c NAME] -- CMD */
	while (optind < argc && strcmp(argv[optind], "--") != 0) {
		if (strcmp(argv[optind], "-c") == 0 && optind + 1 < argc) {
			want = argv[optind + 1];
			optind += 2;
		} else if (strcmp(argv[optind], "-i") == 0) {
			in = true;
			optind++;
		} else if (strcmp(argv[optind], "-t") == 0) {
			tty = true;
			optind++;
		} else {
			break;
		}
	}
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc) {
		fprintf(stderr, "error: you must specify at least one command for the container\n");
		return 2;
	}
	cleanup_free char *path = xasprintf("%s/namespaces/%s/pods/%s.yaml", mount, ns, podname);
	size_t len = 0;
	cleanup_free char *text = util_read_file(path, &len);
	if (!text) {
		fprintf(stderr, "Error from server (NotFound): pods \"%s\" not found (%s: %s)\n",
			podname, path, strerror(errno));
		return 1;
	}
	struct ynode *pod = NULL;
	struct error *err = NULL;
	if (yaml_parse_one(text, len, &pod, &err) < 0) {
		fprintf(stderr, "error: %s: %s\n", path, err->msg);
		error_free(err);
		return 1;
	}
	const char *cname = exec__container(pod, want, podname);
	const char *node = ynode_path_str(pod, "spec.nodeName");
	const char *uid = ynode_path_str(pod, "metadata.uid");
	if (!cname) {
		ynode_free(pod);
		return 1;
	}
	if (!node || !*node || !uid) {
		fprintf(stderr,
			"error: unable to upgrade connection: pod %s is not on a node yet\n",
			podname);
		ynode_free(pod);
		return 1;
	}
	cleanup_free char *piddir = xasprintf("%s/nodes/%s/pods/%s/c/%s", state, node, uid, cname);
	pid_t target = enter_target(piddir);
	if (!target) {
		fprintf(stderr,
			"error: unable to upgrade connection: container %s of pod %s is not "
			"running on this machine (no process under %s)\n",
			cname, podname, piddir);
		ynode_free(pod);
		return 1;
	}
	ynode_free(pod);
	char **cmd = argv + optind;
	return tty ? exec__tty(target, cmd, in) : exec__plain(target, cmd, in);
}
