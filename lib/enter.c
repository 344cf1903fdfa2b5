/* enter.c: a command inside a running container (enter.h). */
#include "enter.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "util.h"

extern char **environ;

/* What the container's first process has, from /proc/PID/status. */
struct enter__creds {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	uint64_t cap_bnd, cap_eff, cap_prm;
	bool no_new_privs;
};

pid_t enter_target(const char *piddir)
{
	cleanup_free char *pidf = xasprintf("%s/pid", piddir);
	cleanup_free char *text = util_read_file(pidf, NULL);
	int nspawn;
	if (!text || sscanf(text, "%d", &nspawn) != 1 || nspawn <= 0)
		return 0;
	cleanup_free char *kids = xasprintf("/proc/%d/task/%d/children", nspawn, nspawn);
	cleanup_free char *list = util_read_file(kids, NULL);
	int child;
	return list && sscanf(list, "%d", &child) == 1 && child > 0 ? child : 0;
}

static int enter__creds(pid_t pid, struct enter__creds *c, struct error **err)
{
	cleanup_free char *path = xasprintf("/proc/%d/status", (int)pid);
	cleanup_free char *text = util_read_file(path, NULL);
	if (!text)
		return error_set(err, errno ? errno : ESRCH, "%s: %s", path,
				 strerror(errno ? errno : ESRCH));
	bool uid = false, gid = false;
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		if (sscanf(l, "Uid: %llu", &v) == 1) {
			c->uid = (uid_t)v;
			uid = true;
		} else if (sscanf(l, "Gid: %llu", &v) == 1) {
			c->gid = (gid_t)v;
			gid = true;
		} else if (strncmp(l, "Groups:", 7) == 0) {
			char *p = l + 7, *end;
			for (;;) {
				errno = 0;
				unsigned long g = strtoul(p, &end, 10);
				if (end == p || errno)
					break;
				c->groups =
				    xrealloc(c->groups, (c->ngroups + 1) * sizeof(*c->groups));
				c->groups[c->ngroups++] = (gid_t)g;
				p = end;
			}
		} else if (sscanf(l, "CapBnd: %llx", &v) == 1) {
			c->cap_bnd = v;
		} else if (sscanf(l, "CapEff: %llx", &v) == 1) {
			c->cap_eff = v;
		} else if (sscanf(l, "CapPrm: %llx", &v) == 1) {
			c->cap_prm = v;
		} else if (sscanf(l, "NoNewPrivs: %llu", &v) == 1) {
			c->no_new_privs = v != 0;
		}
	}
	if (!uid || !gid)
		return error_set(err, EINVAL, "%s: no Uid or Gid line", path);
	return 0;
}

/* The environment of pid, as a NULL-ended array of its own. */
static char **enter__environ(pid_t pid)
{
	cleanup_free char *path = xasprintf("/proc/%d/environ", (int)pid);
	size_t len = 0;
	char *text = util_read_file(path, &len);
	size_t n = 0;
	char **env = xcalloc(1, sizeof(*env));
	for (size_t i = 0; text && i < len;) {
		size_t l = strnlen(text + i, len - i);
		if (l) {
			env = xrealloc(env, (n + 2) * sizeof(*env));
			env[n++] = xstrndup(text + i, l);
			env[n] = NULL;
		}
		i += l + 1;
	}
	free(text);
	return env;
}

/* Joins pid's cgroups (best effort: a hierarchy we cannot write to is
 * left as it is). Paths in /proc/PID/cgroup are the host's, so this runs
 * before the cgroup and mount namespaces change. */
static void enter__cgroups(pid_t pid)
{
	cleanup_free char *path = xasprintf("/proc/%d/cgroup", (int)pid);
	cleanup_free char *text = util_read_file(path, NULL);
	if (!text)
		return;
	struct statfs fs;
	bool unified = statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
	char self[32];
	snprintf(self, sizeof(self), "%d", (int)getpid());
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrl = c1 + 1, *cg = c2 + 1;
		cleanup_free char *dir = NULL;
		if (!*ctrl)
			dir = unified ? xasprintf("/sys/fs/cgroup%s", cg)
				      : xasprintf("/sys/fs/cgroup/unified%s", cg);
		else if (strncmp(ctrl, "name=", 5) == 0)
			dir = xasprintf("/sys/fs/cgroup/%s%s", ctrl + 5, cg);
		else
			dir = xasprintf("/sys/fs/cgroup/%s%s", ctrl, cg);
		cleanup_free char *procs = xasprintf("%s/cgroup.procs", dir);
		int fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, self, strlen(self)) < 0) {
			/* a hierarchy that refuses us: the command runs outside it */
		}
		close(fd);
	}
}

static void enter__die(const char *what)
{
	fprintf(stderr, "corral-exec: %s: %s\n", what, strerror(errno));
	_exit(126);
}

/* In the container: takes the first process's ids and capabilities. */
static void enter__become(const struct enter__creds *c)
{
	if (c->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		enter__die("no_new_privs");
	for (int cap = 0; cap < 64; cap++) {
		if (c->cap_bnd & (UINT64_C(1) << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break; /* past the kernel's last capability */
			enter__die("dropping a capability from the bounding set");
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		enter__die("clearing the ambient capabilities");
	if (setgroups(c->ngroups, c->groups) < 0)
		enter__die("setgroups");
	if (setresgid(c->gid, c->gid, c->gid) < 0)
		enter__die("setresgid");
	if (setresuid(c->uid, c->uid, c->uid) < 0)
		enter__die("setresuid");
	if (c->uid != 0)
		return; /* the kernel cleared them leaving uid 0 */
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	for (int i = 0; i < 2; i++) {
		d[i].permitted = (uint32_t)(c->cap_prm >> (32 * i));
		d[i].effective = (uint32_t)(c->cap_eff >> (32 * i));
	}
	if (syscall(SYS_capset, &h, d) < 0)
		enter__die("capset");
}

static volatile sig_atomic_t enter__child;

static void enter__forward(int signo)
{
	if (enter__child > 0)
		kill(enter__child, signo);
}

int enter_wait(pid_t pid)
{
	enter__child = pid;
	struct sigaction sa = {.sa_handler = enter__forward};
	sigemptyset(&sa.sa_mask);
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	enter__child = 0;
	return status;
}

int enter_exec(pid_t target, char *const argv[], bool tty, struct error **err)
{
	if (target <= 0 || !argv || !argv[0])
		return error_set(err, EINVAL, "no container process, or no command");
	struct enter__creds creds = {0};
	int r = enter__creds(target, &creds, err);
	if (r < 0)
		return r;
	static const char *const spaces[] = {"cgroup", "ipc", "uts", "net", "pid", "mnt"};
	int fds[sizeof(spaces) / sizeof(spaces[0])];
	size_t nfds = 0;
	int rootfd = -1, cwdfd = -1;
	char **env = NULL;
	char path[64];
	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)target, spaces[i]);
		fds[nfds] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[nfds] < 0) {
			r = error_set(err, errno, "%s: %s", path, strerror(errno));
			goto fail;
		}
		nfds++;
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)target);
	rootfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)target);
	cwdfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		r = error_set(err, errno, "/proc/%d/root: %s", (int)target, strerror(errno));
		goto fail;
	}
	env = enter__environ(target);
	enter__cgroups(target);
	for (size_t i = 0; i < nfds; i++) {
		if (setns(fds[i], 0) < 0) {
			r = error_set(err, errno, "joining the container's %s namespace: %s",
				      spaces[i], strerror(errno));
			goto fail;
		}
	}
	if (fchdir(rootfd) < 0 || chroot(".") < 0) {
		r = error_set(err, errno, "entering the container's root: %s", strerror(errno));
		goto fail;
	}
	if (cwdfd < 0 || fchdir(cwdfd) < 0) {
		if (chdir("/") < 0) {
			r = error_set(err, errno, "chdir /: %s", strerror(errno));
			goto fail;
		}
	}
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	close(rootfd);
	if (cwdfd >= 0)
		close(cwdfd);

	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "corral-exec: fork: %s\n", strerror(errno));
		_exit(126);
	}
	if (pid == 0) {
		if (tty) {
			setsid();
			ioctl(STDIN_FILENO, TIOCSCTTY, 0);
		}
		enter__become(&creds);
		/* Dies with whoever waits for it (a probe's time-out kills that
		 * one); set after the ids, whose change clears it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() == 1)
			_exit(126);
		environ = env;
		execvp(argv[0], argv);
		if (errno == ENOENT) {
			fprintf(stderr, "exec: \"%s\": executable file not found in $PATH\n",
				argv[0]);
			_exit(127);
		}
		fprintf(stderr, "exec: \"%s\": %s\n", argv[0], strerror(errno));
		_exit(126);
	}
	/* Outside the new PID namespace: wait, pass signals on, end alike. */
	int status = enter_wait(pid);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		_exit(128 + WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 126);

fail:
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (rootfd >= 0)
		close(rootfd);
	if (cwdfd >= 0)
		close(cwdfd);
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
	free(creds.groups);
	return r;
}
