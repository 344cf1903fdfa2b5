/* main.c: corral-exec, `kubectl exec` for corral (corral-exec(8)).
 *
 *   corral-exec [-i] [-t] [--mount DIR] [--state DIR] [-n NS] POD [-c NAME] -- CMD [ARG]...
 *
 * Finds the pod in the mount (its node and uid), the container's first
 * process from the node agent's state on this machine, and runs CMD in
 * that container (lib/enter.h). When the pod's node keeps no state on
 * this machine, the node's own server runs CMD instead (lib/rexec.h,
 * corral-noded(8)), reached at the address its Node object reports with a
 * client certificate of the cluster CA. -i passes standard input on (else the
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "enter.h"
#include "error.h"
#include "nodeaddr.h"
#include "pod.h"
#include "rexec.h"
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
		   "/var/lib/corral)\n"
		   "for a pod whose node is on another machine:\n"
		   "  --ca-file FILE       the cluster CA (default: STATE/pki/ca.crt)\n"
		   "  --client-cert FILE   our certificate (default: STATE/pki/admin.crt)\n"
		   "  --client-key FILE    its key (default: STATE/pki/admin.key)\n"
		   "  --connect-timeout S  seconds to reach the node (default: 10)\n");
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
	const struct ynode *c = pod_container(pod, want);
	if (c)
		return ynode_path_str(c, "name");
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
			util_write_all(STDOUT_FILENO, buf, (size_t)r);
		}
		if (in_open && p[1].revents) {
			ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
			if (r <= 0) {
				in_open = false;
				/* end of input: the terminal's end-of-file character */
				char eof = 4;
				util_write_all(master, &eof, 1);
			} else {
				util_write_all(master, buf, (size_t)r);
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

/* The pod's node is elsewhere: through its server (lib/rexec.h). */
static int exec__remote(struct rexec_opts *o, const char *mount)
{
	cleanup_free char *path = xasprintf("%s/nodes/%s.yaml", mount, o->node);
	size_t len = 0;
	cleanup_free char *text = util_read_file(path, &len);
	struct ynode *nobj = NULL;
	if (!text || yaml_parse_one(text, len, &nobj, NULL) < 0) {
		fprintf(stderr, "error: unable to upgrade connection: node %s (of pod %s) %s\n",
			o->node, o->pod, text ? "does not parse" : "is not in the cluster");
		return 1;
	}
	cleanup_free char *base = nodeaddr_kubelet_base(nobj);
	ynode_free(nobj);
	if (!base) {
		fprintf(stderr,
			"error: unable to upgrade connection: node %s, which runs pod %s, is "
			"not on this machine and reports no InternalIP and port to reach it "
			"(corral-noded --serve-port)\n",
			o->node, o->pod);
		return 1;
	}
	o->base = base;
	struct error *err = NULL;
	int code = rexec_run(o, &err);
	if (code < 0) {
		fprintf(stderr, "error: unable to upgrade connection: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	if (code)
		fprintf(stderr, "command terminated with exit code %d\n", code);
	return code;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"stdin", no_argument, NULL, 'i'},
					     {"tty", no_argument, NULL, 't'},
					     {"namespace", required_argument, NULL, 'n'},
					     {"container", required_argument, NULL, 'c'},
					     {"mount", required_argument, NULL, 'M'},
					     {"state", required_argument, NULL, 'S'},
					     {"ca-file", required_argument, NULL, 'A'},
					     {"client-cert", required_argument, NULL, 'C'},
					     {"client-key", required_argument, NULL, 'K'},
					     {"connect-timeout", required_argument, NULL, 'T'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	bool in = false, tty = false;
	const char *ns = "default", *want = NULL, *mount = "/cluster", *state = "/var/lib/corral";
	const char *ca = NULL, *cert = NULL, *key = NULL;
	long timeout_ms = 10000;
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
		case 'A':
			ca = optarg;
			break;
		case 'C':
			cert = optarg;
			break;
		case 'K':
			key = optarg;
			break;
		case 'T': {
			char *end;
			double secs = strtod(optarg, &end);
			if (*end || !(secs > 0) || secs > 3600) {
				fprintf(stderr, PROG ": --connect-timeout wants seconds, not %s\n",
					optarg);
				return 2;
			}
			timeout_ms = (long)(secs * 1000);
			break;
		}
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
	char **cmd = argv + optind;
	cleanup_free char *nodedir = xasprintf("%s/nodes/%s", state, node);
	struct stat st;
	if (stat(nodedir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		/* not a node of this machine: its server runs the command */
		cleanup_free char *ca_d = xasprintf("%s/pki/ca.crt", state);
		cleanup_free char *cert_d = xasprintf("%s/pki/admin.crt", state);
		cleanup_free char *key_d = xasprintf("%s/pki/admin.key", state);
		int code = exec__remote(
		    &(struct rexec_opts){
			.node = node,
			.ns = ns,
			.pod = podname,
			.container = cname,
			.argv = cmd,
			.in = in,
			.tty = tty,
			.ca_file = ca ? ca : ca_d,
			.cert_file = cert ? cert : cert_d,
			.key_file = key ? key : key_d,
			.timeout_ms = timeout_ms,
		    },
		    mount);
		ynode_free(pod);
		return code;
	}
	cleanup_free char *piddir = xasprintf("%s/pods/%s/c/%s", nodedir, uid, cname);
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
	return tty ? exec__tty(target, cmd, in) : exec__plain(target, cmd, in);
}
