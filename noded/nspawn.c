/* nspawn.c: the systemd-nspawn runtime. A pod is a corral-pause process holding its
 * network, IPC and UTS namespaces (with a veth on the node's bridge, see
 * net.h) and one systemd-nspawn per container, joined to the pause's
 * network namespace, its root an overlay of its own over the image folder
 * or the image's layers (pulled as image.h's image_get() decides),
 * each started by a corral-shim that writes down how it ended (DESIGN.md,
 * "Nodes and pods").
 *
 * State on the host, so that a restarted agent adopts what runs instead of
 * starting it twice (STATE = /var/lib/corral/nodes/NODE/pods/UID):
 *   STATE/key              "ns/name"
 *   STATE/pause            "PID STARTTIME" of the pause
 *   STATE/c/NAME/shim      "PID STARTTIME" of the running container's shim
 *   STATE/c/NAME/exit      how the last run ended (written by the shim)
 *   STATE/c/NAME/count     "RESTARTS STARTED-AT"
 *   STATE/c/NAME/{root,upper,work}   the overlay
 *   STATE/c/NAME/image     the store image it runs (the image GC keeps it)
 *   STATE/volumes/NAME     emptyDir, configMap and secret volumes
 * Output goes to /var/log/pods/NS_NAME_UID/CONTAINER/RESTARTS.log.
 *
 * Lifecycle as the kubelet's: init containers one by one, then the
 * containers; restartPolicy Always, OnFailure, Never; a restart waits a
 * back-off of 10 s doubling to 5 min (the first restart is at once), reset
 * after 10 min of running; exit reasons Completed, Error, OOMKilled (the
 * container's cgroup saw the OOM killer), StartError (no such command);
 * a deleted pod gets SIGTERM, then SIGKILL after its grace period.
 *
 * A container's security context (container.h) becomes nspawn's
 * --capability and --drop-capability (the container keeps exactly its
 * set), --no-new-privileges and --read-only; a user, group or supplementary
 * groups make corral-runas, bound read-only into the container's /run, its
 * first process (see shim/runas.c). */
#include "backoff.h"
#include "capability.h"
#include "cgroup.h"
#include "container.h"
#include "exec.h"
#include "image.h"
#include "kinds.h"
#include "layers.h"
#include "log.h"
#include "loop.h"
#include "net.h"
#include "objio.h"
#include "podevents.h"
#include "probe.h"
#include "pull.h"
#include "quantity.h"
#include "runtime.h"
#include "treepath.h"
#include "util.h"
#include "volumes.h"
#include "workpool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#define NSPAWN_ADOPT_GRACE_MS 15000
#define NSPAWN_RETRY_MS	      5000
#define NSPAWN_RUNAS	      "/run/.corral-runas" /* in the container */
#define NSPAWN_IMAGE_GC_MS    300000		   /* the kubelet's ImageGCPeriod */
#define NSPAWN_WORKERS	      4			   /* pods set up at once (pod-workers) */
#define NSPAWN_WORKER_STACK   (512 * 1024)	   /* forks, execs, small buffers */
#define NSPAWN_START_WAIT_S   30		   /* corral-shim's wait for a container's start */
#define NSPAWN_START_POLL_MS  200
#define NSPAWN_QUIET_START_MS 5000 /* a start this short is reported when over */

struct nspawn;
struct rpod;

/* One container of a pod (init containers first). */
struct rctr {
	struct rpod *pod;
	char *name;
	bool init;
	size_t index;	       /* in the pod's spec list */
	char *dir;	       /* STATE/c/NAME */
	char *cgroup;	       /* corral/NODE/UID/NAME */
	pid_t shim;	       /* running: its shim; 0: not running */
	int pidfd;	       /* the shim's, on the loop */
	int readyfd;	       /* the shim says the container's process started */
	bool started;	       /* it did: the container runs */
	bool adopted_starting; /* adopted before it started: its pipe was the last agent's */
	bool ever;	       /* started at least once */
	bool done;	       /* terminated and not to be restarted (for now) */
	int restarts;
	time_t started_at;
	uint64_t oom_before;
	uint64_t launched_ms; /* loop_now_ms() when its shim was recorded */
	/* how the last run ended */
	bool has_term;
	int exit_code;
	char *term_reason;
	char *term_message;
	time_t term_started, term_finished;
	/* back-off */
	uint64_t backoff_ms;
	uint64_t not_before_ms; /* loop_now_ms() */
	/* waiting (not running, not terminated) */
	char *wait_reason;
	char *wait_message;
	char *image_id;
	char *image_name; /* status image of a store image */
	struct image_pull_state pull;
	struct probes *probes;
};

struct rpod {
	struct nspawn *rt;
	char *key, *uid, *ns, *name;
	char *dir;    /* STATE */
	char *logdir; /* /var/log/pods/NS_NAME_UID */
	char *ip;
	pid_t pause;
	int pause_fd;
	struct rctr **c; /* init containers and containers, as met */
	size_t nc, ninit;
	struct volumes *vols;
	long long grace_s;
	bool synced;		   /* claimed by a pod since the agent started */
	bool busy;		   /* a worker sets it up (struct nspawn__job): hands off */
	struct nspawn__job *job;   /* busy: that setup (to call it off) */
	char *sandbox_error;	   /* why the last sandbox failed; NULL: it did not */
	uint64_t sandbox_retry_ms; /* loop_now_ms() of the next try */
	bool dying;		   /* deleted: being stopped */
	bool evicted;
	char *evict_message;
	struct loop_timer *timer; /* retries, back-offs, the grace period */
	uint64_t timer_at;
	uint64_t deadline_ms;	/* dying: the end of the grace period */
	struct ynode *spec_pod; /* the pod as last synced (for probes, eviction) */
};

struct nspawn {
	struct runtime base;
	struct loop *loop;
	char *mount, *node, *state, *images, *logs, *pause_bin, *shim_bin, *runas_bin, *dns_ip,
	    *domain;
	char *host_ip;
	struct net *net;
	const struct token_signer *token_signer; /* service-account tokens; NULL: none */
	char *token_issuer;
	long long eviction_bytes;
	uint64_t eviction_period_ms;
	struct rpod **pods;
	size_t npods;
	struct loop_timer *adopt_timer;
	struct loop_timer *evict_timer;
	char *cg_node;	       /* corral/NODEHASH */
	struct puller *puller; /* NULL: folder images only */
	char *store;	       /* the layer store */
	struct loop_timer *gc_timer;
	struct workpool *workers; /* set pods up off the loop */
	atomic_bool stopping;	  /* the agent stops: setups not begun are called off */
	/* cgroup folders are made by workers and removed on the loop: a
	 * parent removed as empty between a worker's mkdirs fails its start */
	pthread_mutex_t cg_lock;
};

/* One container to start: worked out on the loop (nspawn__start), started
 * by a worker (nspawn__launch_run), recorded on the loop again. The worker
 * reads only these copies and the runtime's fixed settings. */
struct nspawn__launch {
	struct rctr *c; /* the loop's: the worker never touches it */
	char *dir, *cgroup, *lower, *logdir, *machine, *hostname;
	char *resolv, *hosts, *hostline; /* its /etc files */
	struct cgroup_limits lim;
	struct container_plan plan;
	int restarts; /* this run's number */
	/* what the worker did */
	pid_t shim; /* 0: it failed (error says why) */
	int readyfd;
	uint64_t oom_before;
	char *error;
};

/* A pod's setup on a worker: its sandbox (when it has none) and the
 * containers due to start. */
struct nspawn__job {
	struct rpod *p; /* the loop's, busy meanwhile */
	struct nspawn *rt;
	bool sandbox;			       /* make one */
	char *dir, *key, *uid, *ip, *hostname; /* for the sandbox */
	pid_t pause;			       /* the pod's (made, or the one it had) */
	char *sandbox_error;
	struct nspawn__launch **l;
	size_t nl;
	atomic_bool cancel; /* the pod was deleted: do not begin */
	bool skipped;	    /* called off before it began: nothing was made */
	/* loop_now_ms() as it went, for the debug log's phases */
	uint64_t at_submit, at_run, at_spawned, at_prepared, at_paused, at_net, at_end;
};

/* ---- small helpers ------------------------------------------------------- */

static int nspawn__pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Field 22 of /proc/PID/stat: when the process started (clock ticks). */
static unsigned long long nspawn__starttime(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	cleanup_free char *text = util_read_file(path, NULL);
	if (!text)
		return 0;
	char *p = strrchr(text, ')');
	if (!p)
		return 0;
	unsigned long long v = 0;
	int field = 2;
	char *save;
	for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (++field == 22) {
			v = strtoull(tok, NULL, 10);
			break;
		}
	}
	return v;
}

static int nspawn__write(const char *path, const char *text)
{
	cleanup_free char *tmp = xasprintf("%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = util_write_all(fd, text, strlen(text));
	close(fd);
	if (r < 0 || rename(tmp, path) < 0)
		return -errno;
	return 0;
}

/* Records "PID STARTTIME". */
static void nspawn__write_pid(const char *path, pid_t pid)
{
	char text[64];
	snprintf(text, sizeof(text), "%d %llu\n", (int)pid, nspawn__starttime(pid));
	nspawn__write(path, text);
}

/* The pid recorded at path if that process still runs (same start time). */
static pid_t nspawn__read_pid(const char *path)
{
	cleanup_free char *text = util_read_file(path, NULL);
	int pid;
	unsigned long long st;
	if (!text || sscanf(text, "%d %llu", &pid, &st) != 2 || pid <= 0)
		return 0;
	return nspawn__starttime(pid) == st ? pid : 0;
}

static int nspawn__rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* rm -rf that stays on one file system. */
static void nspawn__rm_rf(const char *path)
{
	nftw(path, nspawn__rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	rmdir(path);
}

static void nspawn__set(char **field, const char *value)
{
	free(*field);
	*field = value ? xstrdup(value) : NULL;
}

static void nspawn__notify(struct nspawn *rt, const char *key)
{
	if (rt->base.notify)
		rt->base.notify(rt->base.notify_data, key);
}

/* ---- pods ---------------------------------------------------------------- */

static void nspawn__pod_timer(struct loop *loop, struct loop_timer *t, void *data);
static void nspawn__close_ready(struct rctr *c);
static const struct ynode *nspawn__spec(const struct ynode *pod, const struct rctr *c);
static void nspawn__stop_all(struct rpod *p, int signo);

/* Wakes the pod's sync after ms (the earliest of the asked times wins). */
static void nspawn__wake(struct rpod *p, uint64_t ms)
{
	if (p->dying)
		return;
	uint64_t at = loop_now_ms() + ms;
	if (loop_timer_armed(p->timer) && p->timer_at <= at)
		return;
	p->timer_at = at;
	loop_timer_start(p->timer, ms ? ms : 1, 0);
}

static struct rpod *nspawn__find(struct nspawn *rt, const char *uid)
{
	for (size_t i = 0; i < rt->npods; i++)
		if (strcmp(rt->pods[i]->uid, uid) == 0)
			return rt->pods[i];
	return NULL;
}

static struct rpod *nspawn__pod_new(struct nspawn *rt, const char *key, const char *uid)
{
	struct rpod *p = xcalloc(1, sizeof(*p));
	p->rt = rt;
	p->key = xstrdup(key);
	p->uid = xstrdup(uid);
	const char *slash = strchr(key, '/');
	p->ns = slash ? xstrndup(key, (size_t)(slash - key)) : xstrdup("");
	p->name = xstrdup(slash ? slash + 1 : key);
	p->dir = xasprintf("%s/nodes/%s/pods/%s", rt->state, rt->node, uid);
	p->logdir = xasprintf("%s/%s_%s_%s", rt->logs, p->ns, p->name, uid);
	p->pause_fd = -1;
	p->grace_s = 30;
	p->timer = loop_timer_new(rt->loop, nspawn__pod_timer, p);
	rt->pods = xrealloc(rt->pods, (rt->npods + 1) * sizeof(*rt->pods));
	rt->pods[rt->npods++] = p;
	return p;
}

static struct rctr *nspawn__ctr(struct rpod *p, const char *name, bool init)
{
	for (size_t i = 0; i < p->nc; i++)
		if (p->c[i]->init == init && strcmp(p->c[i]->name, name) == 0)
			return p->c[i];
	return NULL;
}

static void nspawn__ctr_clear(struct rctr *c)
{
	probes_free(c->probes);
	free(c->name);
	free(c->dir);
	free(c->cgroup);
	free(c->term_reason);
	free(c->term_message);
	free(c->wait_reason);
	free(c->wait_message);
	free(c->image_id);
	free(c->image_name);
	image_pull_state_clear(&c->pull);
}

static void nspawn__pod_free(struct rpod *p)
{
	struct nspawn *rt = p->rt;
	for (size_t i = 0; i < rt->npods; i++) {
		if (rt->pods[i] == p) {
			rt->pods[i] = rt->pods[--rt->npods];
			break;
		}
	}
	for (size_t i = 0; i < p->nc; i++) {
		if (p->c[i]->pidfd >= 0) {
			loop_del_fd(rt->loop, p->c[i]->pidfd);
			close(p->c[i]->pidfd);
		}
		nspawn__close_ready(p->c[i]);
		nspawn__ctr_clear(p->c[i]);
		free(p->c[i]);
	}
	if (p->pause_fd >= 0) {
		loop_del_fd(rt->loop, p->pause_fd);
		close(p->pause_fd);
	}
	loop_timer_free(p->timer);
	volumes_free(p->vols);
	ynode_free(p->spec_pod);
	free(p->c);
	free(p->key);
	free(p->uid);
	free(p->ns);
	free(p->name);
	free(p->dir);
	free(p->logdir);
	free(p->ip);
	free(p->evict_message);
	free(p->sandbox_error);
	free(p);
}

/* A container adopted while it started: its shim said so into the last
 * agent's pipe, so its "started" file is looked at on every sync instead,
 * as long as the shim itself waits for the start. */
static void nspawn__adopted_start(struct rctr *c)
{
	if (!c->adopted_starting)
		return;
	cleanup_free char *startedf = xasprintf("%s/started", c->dir);
	if (c->shim && access(startedf, F_OK) == 0) {
		c->started = true;
		log_info("pod %s: container %s (adopted) has started", c->pod->key, c->name);
	} else if (c->shim && time(NULL) - c->started_at <= NSPAWN_START_WAIT_S) {
		nspawn__wake(c->pod, NSPAWN_START_POLL_MS);
		return;
	}
	c->adopted_starting = false;
}

/* Makes sure the pod has an entry per container of its spec (entries of
 * containers no longer in it stay until the pod goes: a pod's containers
 * cannot change). */
static void nspawn__ctrs_from_spec(struct rpod *p, const struct ynode *pod)
{
	static const char *const lists[] = {"spec.initContainers", "spec.containers"};
	for (size_t l = 0; l < 2; l++) {
		const struct ynode *list = ynode_path(pod, lists[l]);
		for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
			const char *name = ynode_path_str(ynode_item(list, i), "name");
			if (!name || strchr(name, '/') || nspawn__ctr(p, name, l == 0))
				continue;
			p->c = xrealloc(p->c, (p->nc + 1) * sizeof(*p->c));
			struct rctr *c = xcalloc(1, sizeof(*c));
			p->c[p->nc++] = c;
			c->name = xstrdup(name);
			c->init = l == 0;
			c->index = i;
			c->pidfd = -1;
			c->readyfd = -1;
			c->dir = xasprintf("%s/c/%s", p->dir, name);
			c->cgroup = xasprintf("%s/%s/%s", p->rt->cg_node, p->uid, name);
			if (l == 0)
				p->ninit++;
		}
	}
	for (size_t i = 0; i < p->nc; i++)
		p->c[i]->pod = p;
}

/* ---- containers ending --------------------------------------------------- */

static void nspawn__cgroup_remove(struct nspawn *rt, const char *rel)
{
	pthread_mutex_lock(&rt->cg_lock);
	cgroup_remove(rel);
	pthread_mutex_unlock(&rt->cg_lock);
}

static void nspawn__unmount_root(struct rctr *c)
{
	cleanup_free char *root = xasprintf("%s/root", c->dir);
	umount2(root, MNT_DETACH);
}

static void nspawn__close_ready(struct rctr *c)
{
	if (c->readyfd < 0)
		return;
	loop_del_fd(c->pod->rt->loop, c->readyfd);
	close(c->readyfd);
	c->readyfd = -1;
}

static void nspawn__on_ready(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct rctr *c = data;
	char b;
	bool started = read(fd, &b, 1) == 1;
	nspawn__close_ready(c);
	if (started && c->shim) {
		c->started = true;
		log_debug("pod %s: container %s runs, %llu ms after its shim was recorded",
			  c->pod->key, c->name,
			  (unsigned long long)(loop_now_ms() - c->launched_ms));
		nspawn__notify(c->pod->rt, c->pod->key);
	}
}

/* The shim ended: how did the container end? */
static void nspawn__reap(struct rctr *c)
{
	struct rpod *p = c->pod;
	struct nspawn *rt = p->rt;
	if (c->pidfd >= 0) {
		loop_del_fd(rt->loop, c->pidfd);
		close(c->pidfd);
		c->pidfd = -1;
	}
	waitpid(c->shim, NULL, WNOHANG);
	c->shim = 0;
	c->started = false;
	nspawn__close_ready(c);
	probes_stop(c->probes);
	cleanup_free char *exitf = xasprintf("%s/exit", c->dir);
	cleanup_free char *text = util_read_file(exitf, NULL);
	int code = 0, sig = 0;
	long long fin = 0;
	if (!text || sscanf(text, "%d %d %lld", &code, &sig, &fin) != 3) {
		code = 137;
		sig = 0;
		fin = time(NULL);
	}
	if (sig)
		code = 128 + sig;
	uint64_t ooms = cgroup_oom_kills(c->cgroup);
	const char *reason = code == 0 ? "Completed" : "Error";
	if (ooms > c->oom_before) {
		reason = "OOMKilled";
		if (code == 0 || code == 1)
			code = 137;
	}
	cgroup_kill(c->cgroup);
	nspawn__cgroup_remove(rt, c->cgroup);
	nspawn__unmount_root(c);
	c->has_term = true;
	c->exit_code = code;
	nspawn__set(&c->term_reason, reason);
	nspawn__set(&c->term_message, NULL);
	c->term_started = c->started_at;
	c->term_finished = (time_t)fin;
	log_info("pod %s: container %s exited %d (%s)", p->key, c->name, code, reason);
	nspawn__notify(rt, p->key);
}

static bool nspawn__all_stopped(const struct rpod *p);

static void nspawn__on_shim(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)fd;
	(void)events;
	struct rctr *c = data;
	struct rpod *p = c->pod;
	nspawn__reap(c);
	if (p->dying && nspawn__all_stopped(p))
		loop_timer_start(p->timer, 1, 0);
}

static void nspawn__watch_shim(struct rctr *c)
{
	struct nspawn *rt = c->pod->rt;
	c->pidfd = nspawn__pidfd_open(c->shim);
	struct error *err = NULL;
	if (c->pidfd < 0 ||
	    loop_add_fd(rt->loop, c->pidfd, LOOP_READ, nspawn__on_shim, c, &err) < 0) {
		log_warn("pod %s: container %s: cannot watch its shim %d: %s", c->pod->key, c->name,
			 (int)c->shim, err ? err->msg : strerror(errno));
		error_free(err);
		if (c->pidfd >= 0)
			close(c->pidfd);
		c->pidfd = -1;
	}
}

/* ---- the sandbox --------------------------------------------------------- */

static void nspawn__on_pause(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)fd;
	(void)events;
	struct rpod *p = data;
	loop_del_fd(p->rt->loop, p->pause_fd);
	close(p->pause_fd);
	p->pause_fd = -1;
	waitpid(p->pause, NULL, WNOHANG);
	if (!p->dying)
		log_warn("pod %s: its pause %d ended; the pod's network is gone", p->key,
			 (int)p->pause);
	p->pause = 0;
	nspawn__wake(p, 0);
	nspawn__notify(p->rt, p->key);
}

static void nspawn__watch_pause(struct rpod *p)
{
	p->pause_fd = nspawn__pidfd_open(p->pause);
	struct error *err = NULL;
	if (p->pause_fd < 0 ||
	    loop_add_fd(p->rt->loop, p->pause_fd, LOOP_READ, nspawn__on_pause, p, &err) < 0) {
		log_warn("pod %s: cannot watch its pause: %s", p->key,
			 err ? err->msg : strerror(errno));
		error_free(err);
		if (p->pause_fd >= 0)
			close(p->pause_fd);
		p->pause_fd = -1;
	}
}

/* Starts the pod's pause (on a worker: the job's copies only); its
 * "ready" line is read by nspawn__sandbox_finish() from *readfd, so that
 * the containers' roots are made meanwhile. */
static int nspawn__sandbox_spawn(struct nspawn__job *j, pid_t *out, int *readfd, struct error **err)
{
	const struct nspawn *rt = j->rt;
	int r = util_mkdir_p(j->dir, 0700);
	if (r < 0)
		return error_set(err, -r, "%s: %s", j->dir, strerror(-r));
	cleanup_free char *keyf = xasprintf("%s/key", j->dir);
	nspawn__write(keyf, j->key);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return error_set(err, errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		setsid();
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(fds[1], STDOUT_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execl(rt->pause_bin, "corral-pause", j->hostname, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	*out = pid;
	*readfd = fds[0];
	return 0;
}

/* Waits (5 s at most) for the pause's "ready", then gives the pod its
 * network and records both. */
static int nspawn__sandbox_finish(struct nspawn__job *j, pid_t pid, int readfd, struct error **err)
{
	const struct nspawn *rt = j->rt;
	struct pollfd pfd = {.fd = readfd, .events = POLLIN};
	char buf[16] = {0};
	ssize_t got = 0;
	if (poll(&pfd, 1, 5000) == 1)
		got = read(readfd, buf, sizeof(buf) - 1);
	close(readfd);
	if (got < 6 || strncmp(buf, "ready\n", 6) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return error_set(err, EIO, "%s did not start (see the agent's log)", rt->pause_bin);
	}
	j->at_paused = loop_now_ms();
	cleanup_free char *pausef = xasprintf("%s/pause", j->dir);
	nspawn__write_pid(pausef, pid);
	if (net_pod_up(rt->net, j->uid, pid, j->ip, err) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		unlink(pausef);
		return -1;
	}
	cleanup_free char *ipf = xasprintf("%s/ip", j->dir);
	nspawn__write(ipf, j->ip);
	j->pause = pid;
	return 0;
}

/* ---- starting a container ------------------------------------------------ */

struct nspawn__lookup {
	struct nspawn *rt;
	const char *ns;
	struct rpod *p;
};

static int nspawn__lookup(void *data, const char *plural, const char *name, struct ynode **out,
			  struct error **err)
{
	struct nspawn__lookup *l = data;
	/* ConfigMaps and Secrets from the agent's caches (every sync reads
	 * them, to keep volumes' files current); the rest from the mount */
	const struct runtime *base = &l->rt->base;
	if (base->cached) {
		int r = base->cached(base->notify_data, plural, l->ns, name, out);
		if (r <= 0)
			return r;
	}
	const struct kind_info *k = kinds_by_plural(plural);
	cleanup_free char *rel = treepath_object(plural, k && !k->namespaced ? NULL : l->ns, name);
	cleanup_free char *path = xasprintf("%s/%s", l->rt->mount, rel);
	if (objio_read(path, out, err) == 0)
		return 0;
	if ((*err)->status == ENOENT) {
		error_free(*err);
		*err = NULL;
		return -ENOENT;
	}
	return -1;
}

static const char *nspawn__volume(void *data, const char *name)
{
	struct nspawn__lookup *l = data;
	return volumes_path(l->p->vols, name);
}

/* Whether argv0 names a program in the image (through PATH). */
static bool nspawn__has_command(const struct image *img, const char *argv0, const struct strv *env)
{
	if (strchr(argv0, '/')) {
		cleanup_free char *p = xasprintf("%s%s", argv0[0] == '/' ? "" : "/", argv0);
		return image_has(img, p);
	}
	const char *path = strv_getenv(env, "PATH");
	cleanup_free char *copy = xstrdup(path ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		cleanup_free char *p = xasprintf("%s%s/%s", d[0] == '/' ? "" : "/", d, argv0);
		if (image_has(img, p))
			return true;
	}
	return false;
}

/* spec.hostAliases as the kubelet appends them to /etc/hosts: a blank
 * line, a comment, then one line per entry, its address and its names
 * (corral-fs validated both). */
static char *nspawn__host_aliases(const struct ynode *list)
{
	if (!list || list->type != YNODE_SEQ || list->n == 0)
		return xstrdup("");
	char *out = xstrdup("\n# Entries added by HostAliases.\n");
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *a = ynode_item(list, i);
		const char *ip = ynode_path_str(a, "ip");
		const struct ynode *names = ynode_get(a, "hostnames");
		if (!ip || !names || names->type != YNODE_SEQ || names->n == 0)
			continue;
		char *line = xstrdup(ip);
		for (size_t k = 0; k < names->n; k++) {
			const char *h = ynode_str(ynode_item(names, k));
			char *next = xasprintf("%s\t%s", line, h ? h : "");
			free(line);
			line = next;
		}
		char *next = xasprintf("%s%s\n", out, line);
		free(line);
		free(out);
		out = next;
	}
	return out;
}

/* The container's /etc/resolv.conf, /etc/hosts and /etc/hostname, as the
 * kubelet makes them, into l (on the loop). */
static void nspawn__etc_text(struct rpod *p, const struct ynode *pod, struct nspawn__launch *l)
{
	struct nspawn *rt = p->rt;
	const char *policy = ynode_path_str(pod, "spec.dnsPolicy");
	if (!policy)
		policy = "ClusterFirst";
	char *resolv = NULL;
	const struct ynode *cfg = ynode_path(pod, "spec.dnsConfig");
	if (strcmp(policy, "None") != 0 && strcmp(policy, "Default") != 0) {
		resolv = xasprintf("nameserver %s\nsearch %s.svc.%s svc.%s %s\noptions ndots:5\n",
				   rt->dns_ip, p->ns, rt->domain, rt->domain, rt->domain);
	} else if (strcmp(policy, "Default") == 0) {
		resolv = util_read_file("/etc/resolv.conf", NULL);
		if (!resolv)
			resolv = xstrdup("");
	} else {
		resolv = xstrdup("");
	}
	static const char *const keys[] = {"nameservers", "searches"};
	static const char *const words[] = {"nameserver", "search"};
	for (size_t k = 0; cfg && k < 2; k++) {
		const struct ynode *list = ynode_get(cfg, keys[k]);
		for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
			const char *v = ynode_str(ynode_item(list, i));
			char *next = xasprintf("%s%s %s\n", resolv, words[k], v ? v : "");
			free(resolv);
			resolv = next;
		}
	}
	const char *host = ynode_path_str(pod, "spec.hostname");
	if (!host)
		host = p->name;
	const char *sub = ynode_path_str(pod, "spec.subdomain");
	cleanup_free char *fqdn =
	    sub ? xasprintf("%s.%s.%s.svc.%s\t%s", host, sub, p->ns, rt->domain, host)
		: xstrdup(host);
	cleanup_free char *aliases = nspawn__host_aliases(ynode_path(pod, "spec.hostAliases"));
	l->resolv = resolv;
	l->hosts = xasprintf("# Kubernetes-managed hosts file (corral-noded).\n"
			     "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
			     "%s\t%s\n%s",
			     p->ip ? p->ip : "127.0.1.1", fqdn, aliases);
	l->hostline = xasprintf("%s\n", host);
}

/* Writes them into the container's root (on a worker). */
static int nspawn__etc_write(const struct nspawn__launch *l, const char *root, struct error **err)
{
	cleanup_free char *etc = xasprintf("%s/etc", root);
	util_mkdir_p(etc, 0755);
	cleanup_free char *rp = xasprintf("%s/resolv.conf", etc);
	cleanup_free char *hp = xasprintf("%s/hosts", etc);
	cleanup_free char *hn = xasprintf("%s/hostname", etc);
	unlink(rp);
	unlink(hp);
	int r = nspawn__write(rp, l->resolv);
	if (r == 0)
		r = nspawn__write(hp, l->hosts);
	if (r == 0)
		r = nspawn__write(hn, l->hostline);
	if (r < 0)
		return error_set(err, -r, "writing /etc of the container: %s", strerror(-r));
	return 0;
}

static int nspawn__overlay(const char *dir, const char *lower, struct error **err)
{
	cleanup_free char *root = xasprintf("%s/root", dir);
	cleanup_free char *upper = xasprintf("%s/upper", dir);
	cleanup_free char *work = xasprintf("%s/work", dir);
	umount2(root, MNT_DETACH);
	nspawn__rm_rf(upper);
	nspawn__rm_rf(work);
	int r;
	if ((r = util_mkdir_p(root, 0755)) < 0 || (r = util_mkdir_p(upper, 0755)) < 0 ||
	    (r = util_mkdir_p(work, 0755)) < 0)
		return error_set(err, -r, "%s: %s", dir, strerror(-r));
	cleanup_free char *opts =
	    xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("overlay", root, "overlay", 0, opts) < 0)
		return error_set(err, errno, "overlay over %s: %s", lower, strerror(errno));
	/* systemd-nspawn takes no root without /usr, which images built
	 * FROM scratch may lack */
	cleanup_free char *usr = xasprintf("%s/usr", root);
	mkdir(usr, 0755);
	return 0;
}

static void nspawn__limits(const struct ynode *spec, struct cgroup_limits *l)
{
	*l = (struct cgroup_limits){0};
	int64_t v;
	const char *s;
	if ((s = ynode_path_str(spec, "resources.limits.memory")) &&
	    quantity_parse(s, &v, NULL) == 0)
		l->memory_bytes = v / 1000;
	if ((s = ynode_path_str(spec, "resources.limits.cpu")) && quantity_parse(s, &v, NULL) == 0)
		l->cpu_milli = v;
	if ((s = ynode_path_str(spec, "resources.requests.cpu")) &&
	    quantity_parse(s, &v, NULL) == 0)
		l->cpu_request_milli = v;
	else
		l->cpu_request_milli = l->cpu_milli;
}

/* nspawn's --capability and --drop-capability for a process that keeps
 * exactly caps (nspawn's own default set is wider: it has CAP_NET_RAW,
 * CAP_SYS_ADMIN, and CAP_NET_ADMIN with a network namespace). */
static void nspawn__caps_args(struct strv *argv, uint64_t caps)
{
	cleanup_free char *keep = NULL, *drop = NULL;
	for (int cap = 0; cap <= CAPABILITY_LAST; cap++) {
		char **list = caps & CAPABILITY_BIT(cap) ? &keep : &drop;
		char *next =
		    xasprintf("%s%s%s", *list ? *list : "", *list ? "," : "", capability_name(cap));
		free(*list);
		*list = next;
	}
	if (keep)
		strv_addf(argv, "--capability=%s", keep);
	if (drop)
		strv_addf(argv, "--drop-capability=%s", drop);
}

/* The mount points of the binds in a root nspawn mounts read-only: it
 * cannot make them itself then. A bind of a file gets a file. */
static void nspawn__mount_points(const char *root, const struct strv *binds)
{
	for (size_t i = 0; i < binds->n; i++) {
		const char *colon = strchr(binds->v[i], ':');
		if (!colon)
			continue;
		cleanup_free char *src = xstrndup(binds->v[i], (size_t)(colon - binds->v[i]));
		cleanup_free char *dst = xasprintf("%s%s", root, colon + 1);
		struct stat st;
		if (lstat(dst, &st) == 0)
			continue;
		if (stat(src, &st) == 0 && !S_ISDIR(st.st_mode)) {
			cleanup_free char *parent = xstrdup(dst);
			char *slash = strrchr(parent, '/');
			if (slash)
				*slash = '\0';
			util_mkdir_p(parent, 0755);
			int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		} else {
			util_mkdir_p(dst, 0755);
		}
	}
}

/* Whether systemd-nspawn's --setenv takes the variable NAME=VALUE: its
 * name must be a shell's (letters, digits, '_', not a digit first).
 * Kubernetes also allows '.' and '-'; corral-runas sets those. */
static bool nspawn__env_name_ok(const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	if (!eq || eq == assignment || isdigit((unsigned char)assignment[0]))
		return false;
	for (const char *c = assignment; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	return true;
}

/* The security context's part of nspawn's command line; *runas: the
 * command must start with it (its ids), NULL when nspawn starts the
 * command itself. */
static void nspawn__security_args(const struct nspawn *rt, const struct container_plan *plan,
				  const char *root, const struct strv *odd_env, struct strv *argv,
				  struct strv *runas)
{
	const struct container_security *sec = &plan->sec;
	bool ids = sec->uid >= 0 || sec->gid >= 0 || sec->ngroups || odd_env->n;
	/* corral-runas needs to change ids and drop capabilities itself */
	uint64_t helper = CAPABILITY_BIT(6) | CAPABILITY_BIT(7) | CAPABILITY_BIT(8);
	nspawn__caps_args(argv, ids ? sec->caps | helper : sec->caps);
	if (sec->no_new_privs)
		strv_add(argv, "--no-new-privileges=yes");
	if (sec->read_only_root) {
		strv_add(argv, "--read-only");
		nspawn__mount_points(root, &plan->binds);
		nspawn__mount_points(root, &plan->binds_ro);
	}
	if (!ids)
		return;
	long long uid = sec->uid >= 0 ? sec->uid : 0;
	long long gid = sec->gid;
	if (gid < 0) {
		cleanup_free char *pwf = xasprintf("%s/etc/passwd", root);
		cleanup_free char *pw = util_read_file(pwf, NULL);
		gid = container_passwd_gid(pw, uid);
	}
	strv_addf(argv, "--bind-ro=%s:" NSPAWN_RUNAS, rt->runas_bin);
	strv_add(runas, NSPAWN_RUNAS);
	strv_addf(runas, "%lld", uid);
	strv_addf(runas, "%lld", gid);
	cleanup_free char *groups = NULL;
	for (size_t i = 0; i < sec->ngroups; i++) {
		char *next =
		    xasprintf("%s%s%lld", groups ? groups : "", groups ? "," : "", sec->groups[i]);
		free(groups);
		groups = next;
	}
	strv_add(runas, groups ? groups : "-");
	strv_addf(runas, "%llx", (unsigned long long)sec->caps);
	for (size_t i = 0; i < odd_env->n; i++)
		strv_add(runas, odd_env->v[i]);
	strv_add(runas, "--");
}

static void nspawn__wait(struct rctr *c, const char *reason, const char *message)
{
	nspawn__set(&c->wait_reason, reason);
	nspawn__set(&c->wait_message, message);
}

/* A run that failed before its process: terminated with reason (and a
 * back-off before the next). */
static void nspawn__start_failed(struct rctr *c, int code, const char *reason, const char *msg)
{
	nspawn__wait(c, NULL, NULL);
	c->has_term = true;
	c->exit_code = code;
	nspawn__set(&c->term_reason, reason);
	nspawn__set(&c->term_message, msg);
	c->term_started = c->term_finished = time(NULL);
	c->started_at = c->term_started;
	c->ever = true;
}

static void nspawn__save_count(struct rctr *c)
{
	char text[64];
	snprintf(text, sizeof(text), "%d %lld\n", c->restarts, (long long)c->started_at);
	cleanup_free char *path = xasprintf("%s/count", c->dir);
	nspawn__write(path, text);
}

/* ---- the container's image ----------------------------------------------- */

/* The .dockerconfigjson of the pod's imagePullSecrets (those that exist
 * and have one; the kubelet goes on without the others). */
static void nspawn__pull_secrets(struct rpod *p, const struct ynode *pod, struct strv *out)
{
	const struct ynode *list = ynode_path(pod, "spec.imagePullSecrets");
	struct nspawn__lookup lk = {p->rt, p->ns, p};
	for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
		const char *name = ynode_path_str(ynode_item(list, i), "name");
		struct ynode *sec = NULL;
		struct error *err = NULL;
		if (!name || nspawn__lookup(&lk, "secrets", name, &sec, &err) < 0) {
			error_free(err);
			continue;
		}
		const char *type = ynode_path_str(sec, "type");
		bool legacy = type && strcmp(type, "kubernetes.io/dockercfg") == 0;
		const struct ynode *data = ynode_get(sec, "data");
		const char *b64 =
		    data ? ynode_str(ynode_get(data, legacy ? ".dockercfg" : ".dockerconfigjson"))
			 : NULL;
		size_t len;
		cleanup_free char *doc = b64 ? util_base64_decode(b64, &len, NULL) : NULL;
		if (doc)
			strv_take(out, legacy ? xasprintf("{\"auths\": %s}", doc) : xstrdup(doc));
		ynode_free(sec);
	}
}

/* The image of c, pulled if its policy says so: 0 with *img, or -1 when
 * it waits (the reason set, the pod woken when there is news). */
static int nspawn__image(struct rctr *c, const struct ynode *pod, const struct ynode *cs,
			 const char *ref, struct image *img)
{
	struct rpod *p = c->pod;
	struct nspawn *rt = p->rt;
	struct strv auths = {0};
	if (rt->puller && ynode_path(pod, "spec.imagePullSecrets"))
		nspawn__pull_secrets(p, pod, &auths);
	const struct image_wanted w = {
	    .folders = rt->images,
	    .store = rt->store,
	    .puller = rt->puller,
	    .ref = ref,
	    .policy = ynode_path_str(cs, "imagePullPolicy"),
	    .auths = &auths,
	    .now_ms = loop_now_ms(),
	};
	struct image_outcome out;
	int r = image_get(&w, &c->pull, img, &out);
	strv_clear(&auths);
	for (size_t i = 0; i < out.nev; i++)
		podevents_record(rt->mount, rt->node, pod, c->name, c->init, out.ev[i].type,
				 out.ev[i].reason, out.ev[i].message);
	if (r != 0) {
		nspawn__wait(c, out.reason, out.message);
		if (out.wake_ms)
			nspawn__wake(p, out.wake_ms);
		image_outcome_clear(&out);
		return -1;
	}
	image_outcome_clear(&out);
	/* the image GC keeps what a container runs */
	cleanup_free char *used = xasprintf("%s/image", c->dir);
	if (img->name) {
		util_mkdir_p(c->dir, 0755);
		cleanup_free char *line = xasprintf("%s\n", img->name);
		nspawn__write(used, line);
		layers_touch(rt->store, img->name);
	} else {
		unlink(used);
	}
	c->pull.pulled = false; /* Always: the next start pulls again */
	return 0;
}

/* The image config's User when the pod sets no runAsUser. */
static int nspawn__image_user(const struct image *img, struct container_plan *plan,
			      struct error **err)
{
	long long uid, gid;
	if (image_user_ids(img, &uid, &gid, err) < 0)
		return -1;
	plan->sec.uid = uid;
	if (plan->sec.gid < 0)
		plan->sec.gid = gid;
	return 0;
}

static struct nspawn__job *nspawn__job_for(struct rpod *p, struct nspawn__job **job)
{
	if (!*job) {
		*job = xcalloc(1, sizeof(**job));
		(*job)->p = p;
		(*job)->rt = p->rt;
		(*job)->pause = p->pause;
	}
	return *job;
}

static void nspawn__launch_free(struct nspawn__launch *l)
{
	free(l->dir);
	free(l->cgroup);
	free(l->lower);
	free(l->logdir);
	free(l->machine);
	free(l->hostname);
	free(l->resolv);
	free(l->hosts);
	free(l->hostline);
	free(l->error);
	container_plan_clear(&l->plan);
	free(l);
}

static void nspawn__job_free(struct nspawn__job *j)
{
	for (size_t i = 0; i < j->nl; i++)
		nspawn__launch_free(j->l[i]);
	free(j->l);
	free(j->dir);
	free(j->key);
	free(j->uid);
	free(j->ip);
	free(j->hostname);
	free(j->sandbox_error);
	free(j);
}

/* Works out how c (the spec item cs of pod) starts, for a worker to start
 * it (added to *job). Returns 0 when it is on its way, -1 when it waits
 * (wait_reason set), -2 when it failed at start: a run that ended at once
 * (has_term set, StartError). */
static int nspawn__start(struct rctr *c, const struct ynode *pod, const struct ynode *cs,
			 struct nspawn__job **job)
{
	struct rpod *p = c->pod;
	struct nspawn *rt = p->rt;
	struct error *err = NULL;
	const char *ref = ynode_path_str(cs, "image");
	struct image img;
	if (nspawn__image(c, pod, cs, ref, &img) < 0)
		return -1;
	nspawn__set(&c->image_id, img.id);
	nspawn__set(&c->image_name, img.name);
	struct nspawn__lookup lk = {rt, p->ns, p};
	const struct container_env ce = {
	    .pod_ip = p->ip,
	    .host_ip = rt->host_ip,
	    .lookup = nspawn__lookup,
	    .volume = nspawn__volume,
	    .data = &lk,
	};
	struct container_plan plan;
	int r = container_plan(pod, cs, &img, &ce, &plan, &err);
	if (r < 0) {
		nspawn__wait(c, plan.reason, err->msg);
		error_free(err);
		image_clear(&img);
		return -1;
	}
	if (img.user && plan.sec.uid < 0 && nspawn__image_user(&img, &plan, &err) < 0) {
		nspawn__wait(c, "CreateContainerError", err->msg);
		error_free(err);
		container_plan_clear(&plan);
		image_clear(&img);
		return -1;
	}
	if (!nspawn__has_command(&img, plan.argv.v[0], &plan.env)) {
		cleanup_free char *msg = xasprintf(
		    "failed to create containerd task: exec: \"%s\": executable file not found "
		    "in $PATH of image %s",
		    plan.argv.v[0], ref);
		nspawn__start_failed(c, 128, "StartError", msg);
		container_plan_clear(&plan);
		image_clear(&img);
		return -2;
	}
	const struct container_security *sec = &plan.sec;
	if ((sec->uid >= 0 || sec->gid >= 0 || sec->ngroups) && access(rt->runas_bin, X_OK) < 0) {
		cleanup_free char *msg = xasprintf(
		    "runAsUser, runAsGroup and supplementalGroups need %s (it is built with "
		    "corral-noded): %s",
		    rt->runas_bin, strerror(errno));
		nspawn__wait(c, "CreateContainerConfigError", msg);
		container_plan_clear(&plan);
		image_clear(&img);
		return -1;
	}
	struct nspawn__launch *l = xcalloc(1, sizeof(*l));
	l->c = c;
	l->dir = xstrdup(c->dir);
	l->cgroup = xstrdup(c->cgroup);
	l->lower = xstrdup(img.lower);
	l->logdir = xasprintf("%s/%s", p->logdir, c->name);
	l->restarts = c->ever ? c->restarts + 1 : 0;
	char hash[9];
	net_hash(p->uid, hash);
	l->machine = xasprintf("p%s-%s%zu-%d", hash, c->init ? "i" : "c", c->index, l->restarts);
	const char *host = ynode_path_str(pod, "spec.hostname");
	l->hostname = xstrndup(host ? host : p->name, 63);
	l->plan = plan;
	l->readyfd = -1;
	nspawn__limits(cs, &l->lim);
	nspawn__etc_text(p, pod, l);
	image_clear(&img);
	struct nspawn__job *j = nspawn__job_for(p, job);
	j->l = xrealloc(j->l, (j->nl + 1) * sizeof(*j->l));
	j->l[j->nl++] = l;
	nspawn__wait(c, NULL, NULL); /* ContainerCreating meanwhile */
	return 0;
}

/* Makes one container's cgroup, root and /etc (on a worker); l->error
 * says why not. */
static void nspawn__launch_prepare(struct nspawn *rt, struct nspawn__launch *l)
{
	struct error *err = NULL;
	cleanup_free char *root = xasprintf("%s/root", l->dir);
	pthread_mutex_lock(&rt->cg_lock);
	int r = cgroup_create(l->cgroup, &l->lim, &err);
	pthread_mutex_unlock(&rt->cg_lock);
	if (r < 0 || nspawn__overlay(l->dir, l->lower, &err) < 0 ||
	    nspawn__etc_write(l, root, &err) < 0) {
		l->error = xstrdup(err->msg);
		error_free(err);
		return;
	}
	l->oom_before = cgroup_oom_kills(l->cgroup);
	util_mkdir_p(l->logdir, 0755);
}

/* Then starts its shim running systemd-nspawn in the pod's network. */
static void nspawn__launch_run(struct nspawn *rt, struct nspawn__launch *l, pid_t pause)
{
	cleanup_free char *root = xasprintf("%s/root", l->dir);
	cleanup_free char *logf = xasprintf("%s/%d.log", l->logdir, l->restarts);
	int ready[2] = {-1, -1};
	if (pipe2(ready, O_CLOEXEC) < 0) {
		l->error = xstrdup(strerror(errno));
		return;
	}
	const struct container_plan *plan = &l->plan;
	struct strv argv = {0};
	strv_add(&argv, rt->shim_bin);
	strv_add(&argv, "--ready-fd");
	strv_addf(&argv, "%d", ready[1]);
	strv_add(&argv, l->dir);
	strv_add(&argv, logf);
	strv_add(&argv, "--");
	strv_add(&argv, "systemd-nspawn");
	strv_add(&argv, "--quiet");
	strv_add(&argv, "--register=no");
	strv_add(&argv, "--keep-unit");
	strv_add(&argv, "--console=pipe");
	strv_add(&argv, "--resolv-conf=off");
	strv_add(&argv, "--timezone=off");
	strv_add(&argv, "--link-journal=no");
	strv_add(&argv, "--kill-signal=SIGTERM");
	strv_addf(&argv, "--machine=%s", l->machine);
	strv_addf(&argv, "--hostname=%s", l->hostname);
	strv_addf(&argv, "--directory=%s", root);
	strv_addf(&argv, "--network-namespace-path=/proc/%d/ns/net", (int)pause);
	if (plan->working_dir)
		strv_addf(&argv, "--chdir=%s", plan->working_dir);
	struct strv odd_env = {0};
	for (size_t i = 0; i < plan->env.n; i++) {
		if (nspawn__env_name_ok(plan->env.v[i]))
			strv_addf(&argv, "--setenv=%s", plan->env.v[i]);
		else
			strv_add(&odd_env, plan->env.v[i]);
	}
	for (size_t i = 0; i < plan->binds.n; i++)
		strv_addf(&argv, "--bind=%s", plan->binds.v[i]);
	for (size_t i = 0; i < plan->binds_ro.n; i++)
		strv_addf(&argv, "--bind-ro=%s", plan->binds_ro.v[i]);
	struct strv runas = {0};
	nspawn__security_args(rt, plan, root, &odd_env, &argv, &runas);
	strv_clear(&odd_env);
	strv_add(&argv, "--");
	for (size_t i = 0; i < runas.n; i++)
		strv_add(&argv, runas.v[i]);
	strv_clear(&runas);
	for (size_t i = 0; i < plan->argv.n; i++)
		strv_add(&argv, plan->argv.v[i]);

	cleanup_free char *exitf = xasprintf("%s/exit", l->dir);
	cleanup_free char *startedf = xasprintf("%s/started", l->dir);
	unlink(exitf);
	unlink(startedf);
	pid_t pid = fork();
	if (pid < 0) {
		l->error = xstrdup(strerror(errno));
		strv_clear(&argv);
		close(ready[0]);
		close(ready[1]);
		return;
	}
	if (pid == 0) {
		cgroup_enter(l->cgroup);
		setsid();
		int null = open("/dev/null", O_RDWR);
		fcntl(ready[1], F_SETFD, 0); /* the shim's, across exec */
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(argv.v[0], argv.v);
		_exit(127);
	}
	strv_clear(&argv);
	close(ready[1]);
	l->shim = pid;
	l->readyfd = ready[0];
	/* at once: an agent restarted from here on adopts it */
	cleanup_free char *shimf = xasprintf("%s/shim", l->dir);
	nspawn__write_pid(shimf, pid);
}

/* The job, on a worker: the pause starts while the containers' roots are
 * made, then the pod's network, then the containers. */
static void nspawn__job_run(void *data)
{
	struct nspawn__job *j = data;
	struct error *err = NULL;
	pid_t pause = 0;
	int readfd = -1;
	j->at_run = loop_now_ms();
	/* a setup still queued when its pod was deleted, or when the agent
	 * stops, makes nothing: a deleted pod's would be torn down at once,
	 * and a restarted agent sets the others up */
	if (atomic_load(&j->cancel) || atomic_load(&j->rt->stopping)) {
		j->skipped = true;
		return;
	}
	if (j->sandbox && nspawn__sandbox_spawn(j, &pause, &readfd, &err) < 0) {
		j->sandbox_error = xstrdup(err->msg);
		error_free(err);
		err = NULL;
	}
	j->at_spawned = loop_now_ms();
	for (size_t i = 0; i < j->nl; i++)
		nspawn__launch_prepare(j->rt, j->l[i]);
	j->at_prepared = loop_now_ms();
	if (pause && nspawn__sandbox_finish(j, pause, readfd, &err) < 0) {
		j->sandbox_error = xstrdup(err->msg);
		error_free(err);
	}
	j->at_net = loop_now_ms();
	for (size_t i = 0; i < j->nl; i++) {
		if (j->l[i]->error)
			continue;
		if (j->pause)
			nspawn__launch_run(j->rt, j->l[i], j->pause);
		else
			j->l[i]->error =
			    xstrdup(j->sandbox_error ? j->sandbox_error : "the pod has no sandbox");
	}
	j->at_end = loop_now_ms();
}

/* Records a container the worker started (on the loop). */
static void nspawn__launched(struct rctr *c, struct nspawn__launch *l)
{
	struct rpod *p = c->pod;
	struct nspawn *rt = p->rt;
	c->shim = l->shim;
	c->started = false;
	c->readyfd = l->readyfd;
	l->readyfd = -1;
	c->oom_before = l->oom_before;
	struct error *lerr = NULL;
	if (loop_add_fd(rt->loop, c->readyfd, LOOP_READ, nspawn__on_ready, c, &lerr) < 0) {
		log_warn("pod %s: container %s: %s", p->key, c->name, lerr->msg);
		error_free(lerr);
		close(c->readyfd);
		c->readyfd = -1;
		c->started = true;
	}
	if (c->ever)
		c->restarts++;
	c->ever = true;
	c->done = false;
	c->started_at = time(NULL);
	c->launched_ms = loop_now_ms();
	nspawn__wait(c, NULL, NULL);
	nspawn__save_count(c);
	nspawn__watch_shim(c);
	probes_start(c->probes, nspawn__spec(p->spec_pod, c), p->ip, c->dir);
	log_info("pod %s: container %s started (shim %d, restart %d)", p->key, c->name,
		 (int)c->shim, c->restarts);
}

static void nspawn__stop_pod(struct rpod *p);

/* A job is over (on the loop): what it made becomes the pod's. */
static void nspawn__job_done(void *data)
{
	struct nspawn__job *j = data;
	struct rpod *p = j->p;
	struct nspawn *rt = j->rt;
	p->busy = false;
	p->job = NULL;
	if (j->skipped) {
		log_info("pod %s: its setup was called off before it began", p->key);
		nspawn__job_free(j);
		if (p->dying)
			nspawn__stop_pod(p); /* may free p */
		return;
	}
	if (j->sandbox)
		log_debug("pod %s: set up in %llu ms: queued %llu, pause forked %llu, roots %llu, "
			  "pause ready %llu, network %llu, shims %llu, back on the loop %llu",
			  p->key, (unsigned long long)(loop_now_ms() - j->at_submit),
			  (unsigned long long)(j->at_run - j->at_submit),
			  (unsigned long long)(j->at_spawned - j->at_run),
			  (unsigned long long)(j->at_prepared - j->at_spawned),
			  (unsigned long long)(j->at_paused ? j->at_paused - j->at_prepared : 0),
			  (unsigned long long)(j->at_paused ? j->at_net - j->at_paused : 0),
			  (unsigned long long)(j->at_end - j->at_net),
			  (unsigned long long)(loop_now_ms() - j->at_end));
	if (j->sandbox && j->pause) {
		p->pause = j->pause;
		nspawn__set(&p->sandbox_error, NULL);
		nspawn__watch_pause(p);
		log_info("pod %s: sandbox up, pause %d, %s", p->key, (int)p->pause, j->ip);
	} else if (j->sandbox) {
		log_warn("pod %s: %s", p->key, j->sandbox_error);
		nspawn__set(&p->sandbox_error, j->sandbox_error);
		p->sandbox_retry_ms = loop_now_ms() + NSPAWN_RETRY_MS;
		nspawn__wake(p, NSPAWN_RETRY_MS);
	}
	for (size_t i = 0; i < j->nl; i++) {
		struct nspawn__launch *l = j->l[i];
		if (l->shim > 0) {
			nspawn__launched(l->c, l);
		} else if (j->pause) {
			nspawn__wait(l->c, "CreateContainerError", l->error);
			nspawn__wake(p, NSPAWN_RETRY_MS);
		} /* else the sandbox failed: the pod says why, and tries again */
	}
	nspawn__job_free(j);
	if (p->dying) {
		nspawn__stop_pod(p); /* may free p */
		return;
	}
	if (p->evicted)
		nspawn__stop_all(p, SIGKILL);
	nspawn__notify(rt, p->key);
}

/* ---- syncing a pod ------------------------------------------------------- */

static uint64_t nspawn__backoff_next(struct rctr *c)
{
	long long ran = c->has_term ? (long long)(c->term_finished - c->term_started) : 0;
	return backoff_next(&c->backoff_ms, ran);
}

static bool nspawn__restarts(const char *policy, bool init, int code)
{
	if (init)
		return strcmp(policy, "Never") != 0 && code != 0;
	if (strcmp(policy, "Always") == 0)
		return true;
	return strcmp(policy, "OnFailure") == 0 && code != 0;
}

static const struct ynode *nspawn__spec(const struct ynode *pod, const struct rctr *c)
{
	const struct ynode *list =
	    ynode_path(pod, c->init ? "spec.initContainers" : "spec.containers");
	return list && list->type == YNODE_SEQ && c->index < list->n ? ynode_item(list, c->index)
								     : NULL;
}

/* Brings one container along; true when it is "through" (an init
 * container that succeeded, or any container that runs or is done). */
static bool nspawn__step(struct rctr *c, const struct ynode *pod, const char *policy,
			 struct nspawn__job **job)
{
	struct rpod *p = c->pod;
	if (c->shim)
		return !c->init;
	if (c->ever && c->has_term && !c->wait_reason) {
		if (!nspawn__restarts(policy, c->init, c->exit_code)) {
			c->done = true;
			return c->exit_code == 0 || !c->init;
		}
	}
	uint64_t now = loop_now_ms();
	if (c->ever && c->has_term && c->not_before_ms == 0) {
		uint64_t delay = nspawn__backoff_next(c);
		c->not_before_ms = now + delay;
	}
	if (c->not_before_ms > now) {
		cleanup_free char *msg =
		    xasprintf("back-off %llus restarting failed container=%s pod=%s_%s(%s)",
			      (unsigned long long)(c->not_before_ms - now + 999) / 1000, c->name,
			      p->name, p->ns, p->uid);
		nspawn__wait(c, "CrashLoopBackOff", msg);
		nspawn__wake(p, c->not_before_ms - now);
		return false;
	}
	const struct ynode *cs = nspawn__spec(pod, c);
	if (!cs)
		return true;
	bool was_ever = c->ever;
	int r = nspawn__start(c, pod, cs, job);
	if (r == 0) {
		c->not_before_ms = 0;
		return !c->init;
	}
	if (r == -2) {
		/* a run that ended at once: the next step decides about a
		 * restart and its back-off */
		c->not_before_ms = 0;
		if (was_ever)
			c->restarts++;
		nspawn__save_count(c);
		nspawn__wake(p, 0);
	} else {
		nspawn__wake(p, NSPAWN_RETRY_MS);
	}
	return false;
}

static void nspawn__report_one(const struct rctr *c, struct pod_container_report *r)
{
	free(r->container_id);
	char hash[9];
	net_hash(c->pod->uid, hash);
	if (c->ever)
		r->container_id = xasprintf("nspawn://p%s-%s%zu-%d", hash, c->init ? "i" : "c",
					    c->index, c->restarts);
	nspawn__set(&r->image_id, c->image_id);
	if (c->image_name)
		nspawn__set(&r->image, c->image_name);
	r->restart_count = c->restarts;
	if (c->shim && !c->started) {
		r->state = POD_CONTAINER_WAITING;
		r->reason = xstrdup("ContainerCreating");
	} else if (c->shim) {
		r->state = POD_CONTAINER_RUNNING;
		r->started_at = c->started_at;
		r->started = true;
		r->ready = probes_ready(c->probes);
	} else if (c->wait_reason) {
		r->state = POD_CONTAINER_WAITING;
		r->reason = xstrdup(c->wait_reason);
		r->message = c->wait_message ? xstrdup(c->wait_message) : NULL;
	} else if (c->has_term && (c->done || c->pod->dying || c->pod->evicted)) {
		r->state = POD_CONTAINER_TERMINATED;
		r->exit_code = c->exit_code;
		r->reason = c->term_reason ? xstrdup(c->term_reason) : NULL;
		r->message = c->term_message ? xstrdup(c->term_message) : NULL;
		r->started_at = c->term_started;
		r->finished_at = c->term_finished;
	} else {
		r->state = POD_CONTAINER_WAITING;
		r->reason = xstrdup("ContainerCreating");
	}
	if (c->has_term && r->state != POD_CONTAINER_TERMINATED) {
		r->has_last = true;
		r->last_exit_code = c->exit_code;
		r->last_reason = c->term_reason ? xstrdup(c->term_reason) : NULL;
		r->last_started_at = c->term_started;
		r->last_finished_at = c->term_finished;
	}
}

static void nspawn__report(const struct rpod *p, struct pod_report *out)
{
	struct pod_container_report *lists[] = {out->init, out->containers};
	size_t counts[] = {out->ninit, out->ncontainers};
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			struct pod_container_report *r = &lists[l][i];
			const struct rctr *c = nspawn__ctr((struct rpod *)p, r->name, l == 0);
			if (c)
				nspawn__report_one(c, r);
		}
	}
	if (p->evicted) {
		out->pod_reason = xstrdup("Evicted");
		out->pod_message = xstrdup(p->evict_message ? p->evict_message : "");
	}
}

static void nspawn__all_wait(struct pod_report *out, const char *reason, const char *message)
{
	struct pod_container_report *lists[] = {out->init, out->containers};
	size_t counts[] = {out->ninit, out->ncontainers};
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			struct pod_container_report *r = &lists[l][i];
			if (r->state == POD_CONTAINER_RUNNING)
				continue;
			free(r->reason);
			free(r->message);
			r->state = POD_CONTAINER_WAITING;
			r->reason = xstrdup(reason);
			r->message = message ? xstrdup(message) : NULL;
		}
	}
}

static void nspawn__place(struct rpod *p, const struct ynode *pod);

static void nspawn__probe_changed(void *data)
{
	struct rctr *c = data;
	log_info("pod %s: container %s is %s", c->pod->key, c->name,
		 probes_ready(c->probes) ? "ready" : "not ready");
	nspawn__notify(c->pod->rt, c->pod->key);
}

static void nspawn__probe_unhealthy(void *data, const char *why)
{
	struct rctr *c = data;
	log_info("pod %s: container %s failed its liveness probe (%s), will be restarted",
		 c->pod->key, c->name, why);
	if (c->shim)
		kill(c->shim, SIGTERM);
}

/* A container whose shim runs but whose start its shim has not yet told
 * is usually running a moment later: its status waits for that
 * (settling), up to NSPAWN_QUIET_START_MS, so that a pod that starts at
 * once is written once, Running, and not first as ContainerCreating (a
 * write through the mount and a wake-up of every watcher, per pod). A
 * start that takes longer is reported as ContainerCreating then. */
static void nspawn__quiet_start(struct rpod *p, struct pod_report *out)
{
	uint64_t now = loop_now_ms(), until = 0;
	for (size_t i = 0; i < p->nc; i++) {
		const struct rctr *c = p->c[i];
		if (c->shim && !c->started && c->readyfd >= 0 &&
		    now < c->launched_ms + NSPAWN_QUIET_START_MS &&
		    c->launched_ms + NSPAWN_QUIET_START_MS > until)
			until = c->launched_ms + NSPAWN_QUIET_START_MS;
	}
	if (!until)
		return;
	out->settling = true;
	nspawn__wake(p, until - now);
}

/* Hands the pod's job (if it has one) to a worker: the pod is busy until
 * it is over. */
static void nspawn__submit(struct rpod *p, struct nspawn__job *job, struct pod_report *out)
{
	if (!job)
		return;
	p->busy = true;
	p->job = job;
	out->settling = true;
	job->at_submit = loop_now_ms();
	workpool_submit(p->rt->workers, nspawn__job_run, nspawn__job_done, job, 0);
	log_debug("pod %s: setup queued (%zu on the pool)", p->key,
		  workpool_pending(p->rt->workers));
}

static int nspawn__sync_pod(struct runtime *base, const char *key, const struct ynode *pod,
			    const char *pod_ip, struct pod_report *out, struct error **err)
{
	(void)err;
	struct nspawn *rt = (struct nspawn *)base;
	pod_report_from_spec(out, pod);
	const char *uid = ynode_path_str(pod, "metadata.uid");
	if (!uid)
		return 0;
	struct rpod *p = nspawn__find(rt, uid);
	if (!p)
		p = nspawn__pod_new(rt, key, uid);
	p->synced = true;
	ynode_free(p->spec_pod);
	p->spec_pod = ynode_clone(pod);
	long long grace;
	if (ynode_int(ynode_path(pod, "spec.terminationGracePeriodSeconds"), &grace) == 0 &&
	    grace >= 0)
		p->grace_s = grace;
	nspawn__place(p, pod);
	nspawn__ctrs_from_spec(p, pod);
	for (size_t i = 0; i < p->nc; i++)
		nspawn__adopted_start(p->c[i]);
	for (size_t i = 0; i < p->nc; i++) {
		static const struct probes_hooks hooks = {0};
		struct probes_hooks h = hooks;
		h.changed = nspawn__probe_changed;
		h.unhealthy = nspawn__probe_unhealthy;
		h.data = p->c[i];
		if (!p->c[i]->probes)
			p->c[i]->probes = probes_new(rt->loop, &h);
	}
	if (p->busy || p->dying || p->evicted) {
		/* a worker sets it up: its end brings the pod back here */
		nspawn__report(p, out);
		out->sandbox_ready = p->pause != 0;
		out->settling = p->busy;
		return 0;
	}
	bool host_network = false;
	ynode_bool(ynode_path(pod, "spec.hostNetwork"), &host_network);
	if (host_network) {
		nspawn__all_wait(out, "CreateContainerConfigError",
				 "hostNetwork pods are not supported by corral-noded: every pod "
				 "has a network namespace of its own");
		return 0;
	}
	/* the sandbox: a pause whose network is up, made by the job below
	 * along with the containers due to start */
	struct nspawn__job *job = NULL;
	if (!p->pause) {
		bool any = false;
		for (size_t i = 0; i < p->nc; i++)
			any = any || p->c[i]->shim;
		if (any) {
			/* containers outlived their sandbox: start over */
			nspawn__stop_all(p, SIGKILL);
			nspawn__report(p, out);
			return 0;
		}
		if (!pod_ip) {
			nspawn__all_wait(out, "ContainerCreating",
					 "waiting for an address from the node's podCIDR");
			return 0;
		}
		if (p->sandbox_error && loop_now_ms() < p->sandbox_retry_ms) {
			nspawn__all_wait(out, "ContainerCreating", p->sandbox_error);
			nspawn__wake(p, p->sandbox_retry_ms - loop_now_ms());
			return 0;
		}
		struct nspawn__job *j = nspawn__job_for(p, &job);
		j->sandbox = true;
		j->dir = xstrdup(p->dir);
		j->key = xstrdup(p->key);
		j->uid = xstrdup(p->uid);
		j->ip = xstrdup(pod_ip);
		const char *host = ynode_path_str(pod, "spec.hostname");
		j->hostname = xstrndup(host ? host : p->name, 63);
		nspawn__set(&p->ip, pod_ip); /* its containers' env and /etc/hosts */
	}
	out->sandbox_ready = p->pause != 0;
	/* volumes, again on every sync: configMaps and secrets change */
	struct volumes *vols = NULL;
	struct nspawn__lookup lk = {rt, p->ns, p};
	struct error *e = NULL;
	struct volumes_tokens tokens = {.signer = rt->token_signer, .issuer = rt->token_issuer};
	if (volumes_prepare(pod, p->dir, nspawn__lookup, &lk, &tokens, &vols, &e) < 0) {
		nspawn__submit(p, job, out);
		nspawn__report(p, out);
		nspawn__all_wait(out, "FailedMount", e->msg);
		error_free(e);
		nspawn__wake(p, NSPAWN_RETRY_MS * 2);
		return 0;
	}
	volumes_free(p->vols);
	p->vols = vols;
	/* a token is signed again when due: sync then */
	int64_t due = volumes_refresh_at(vols), now_s = (int64_t)time(NULL);
	if (due)
		nspawn__wake(p, due > now_s ? (uint64_t)(due - now_s) * 1000 : 1);

	const char *policy = ynode_path_str(pod, "spec.restartPolicy");
	if (!policy)
		policy = "Always";
	bool through = true;
	for (size_t i = 0; i < p->nc && through; i++) {
		if (!p->c[i]->init)
			continue;
		through = nspawn__step(p->c[i], pod, policy, &job) && p->c[i]->done &&
			  p->c[i]->exit_code == 0;
	}
	if (through) {
		for (size_t i = 0; i < p->nc; i++) {
			if (!p->c[i]->init)
				nspawn__step(p->c[i], pod, policy, &job);
		}
	}
	nspawn__submit(p, job, out);
	nspawn__report(p, out);
	nspawn__quiet_start(p, out);
	return 0;
}

/* ---- stopping a pod ------------------------------------------------------ */

static void nspawn__stop_all(struct rpod *p, int signo)
{
	for (size_t i = 0; i < p->nc; i++) {
		struct rctr *c = p->c[i];
		probes_stop(c->probes);
		if (!c->shim)
			continue;
		if (signo == SIGKILL)
			cgroup_kill(c->cgroup);
		else
			kill(c->shim, signo);
	}
}

static bool nspawn__all_stopped(const struct rpod *p)
{
	for (size_t i = 0; i < p->nc; i++)
		if (p->c[i]->shim)
			return false;
	return true;
}

/* Everything of the pod off the host: pause, veth, overlays, volumes,
 * cgroups, state, logs. */
static void nspawn__teardown(struct rpod *p)
{
	struct nspawn *rt = p->rt;
	for (size_t i = 0; i < p->nc; i++) {
		struct rctr *c = p->c[i];
		if (c->shim) {
			cgroup_kill(c->cgroup);
			waitpid(c->shim, NULL, 0);
		}
		nspawn__unmount_root(c);
		nspawn__cgroup_remove(rt, c->cgroup);
	}
	if (p->pause) {
		kill(p->pause, SIGKILL);
		waitpid(p->pause, NULL, 0);
		p->pause = 0;
	}
	net_pod_down(rt->net, p->uid);
	volumes_teardown(p->dir);
	nspawn__rm_rf(p->dir);
	nspawn__rm_rf(p->logdir);
	cleanup_free char *cg = xasprintf("%s/%s/x", rt->cg_node, p->uid);
	nspawn__cgroup_remove(rt, cg);
	log_info("pod %s: removed from the host", p->key);
	if (rt->base.gone)
		rt->base.gone(rt->base.notify_data, p->uid);
}

static void nspawn__pod_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct rpod *p = data;
	if (!p->dying) {
		nspawn__notify(p->rt, p->key);
		return;
	}
	uint64_t now = loop_now_ms();
	if (!nspawn__all_stopped(p) && now < p->deadline_ms) {
		loop_timer_start(p->timer, p->deadline_ms - now, 0);
		return;
	}
	if (!nspawn__all_stopped(p))
		log_info("pod %s: grace period over, killing what is left", p->key);
	nspawn__teardown(p);
	nspawn__pod_free(p);
}

static void nspawn__kill_pod(struct runtime *base, const char *key, const char *uid)
{
	(void)key;
	struct nspawn *rt = (struct nspawn *)base;
	struct rpod *p = nspawn__find(rt, uid);
	if (!p) {
		if (rt->base.gone)
			rt->base.gone(rt->base.notify_data, uid);
		return;
	}
	if (p->dying)
		return;
	p->dying = true;
	if (p->busy) {
		atomic_store(&p->job->cancel, true);
		log_info("pod %s: stopping once its setup is over", p->key);
		return; /* nspawn__job_done() goes on */
	}
	nspawn__stop_pod(p);
}

/* Stops a dying pod: SIGTERM, and what is left is killed at the end of
 * its grace period; removed at once when nothing runs. */
static void nspawn__stop_pod(struct rpod *p)
{
	nspawn__stop_all(p, SIGTERM);
	if (nspawn__all_stopped(p)) {
		nspawn__teardown(p);
		nspawn__pod_free(p);
		return;
	}
	log_info("pod %s: stopping (grace period %llds)", p->key, p->grace_s);
	/* the timer fires at the end of the grace period; the shims' ends
	 * bring it forward (nspawn__on_shim) */
	loop_timer_stop(p->timer);
	p->deadline_ms = loop_now_ms() + (uint64_t)p->grace_s * 1000;
	loop_timer_start(p->timer, (uint64_t)p->grace_s * 1000 + 1, 0);
}

/* ---- adoption after a restart -------------------------------------------- */

static void nspawn__adopt_one(struct nspawn *rt, const char *uid)
{
	cleanup_free char *dir = xasprintf("%s/nodes/%s/pods/%s", rt->state, rt->node, uid);
	cleanup_free char *keyf = xasprintf("%s/key", dir);
	cleanup_free char *key = util_read_file(keyf, NULL);
	if (!key || !*key) {
		nspawn__rm_rf(dir);
		return;
	}
	struct rpod *p = nspawn__pod_new(rt, key, uid);
	cleanup_free char *pausef = xasprintf("%s/pause", dir);
	cleanup_free char *ipf = xasprintf("%s/ip", dir);
	p->pause = nspawn__read_pid(pausef);
	p->ip = util_read_file(ipf, NULL);
	if (p->pause)
		nspawn__watch_pause(p);
	cleanup_free char *cdir = xasprintf("%s/c", dir);
	DIR *d = opendir(cdir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* the container's place in the spec is learnt at the first
		 * sync; until then it is a regular container */
		p->c = xrealloc(p->c, (p->nc + 1) * sizeof(*p->c));
		struct rctr *c = xcalloc(1, sizeof(*c));
		p->c[p->nc++] = c;
		c->name = xstrdup(de->d_name);
		c->pidfd = -1;
		c->readyfd = -1;
		c->dir = xasprintf("%s/%s", cdir, de->d_name);
		c->cgroup = xasprintf("%s/%s/%s", rt->cg_node, uid, de->d_name);
		cleanup_free char *countf = xasprintf("%s/count", c->dir);
		cleanup_free char *count = util_read_file(countf, NULL);
		long long started = 0;
		if (count && sscanf(count, "%d %lld", &c->restarts, &started) == 2) {
			c->ever = true;
			c->started_at = (time_t)started;
		}
		cleanup_free char *shimf = xasprintf("%s/shim", c->dir);
		c->shim = nspawn__read_pid(shimf);
		cleanup_free char *startedf = xasprintf("%s/started", c->dir);
		c->started = c->shim && access(startedf, F_OK) == 0;
		c->adopted_starting = c->shim && !c->started;
		cleanup_free char *exitf = xasprintf("%s/exit", c->dir);
		cleanup_free char *exit = util_read_file(exitf, NULL);
		int code, sig;
		long long fin;
		if (!c->shim && exit && sscanf(exit, "%d %d %lld", &code, &sig, &fin) == 3) {
			c->has_term = true;
			c->exit_code = sig ? 128 + sig : code;
			c->term_reason = xstrdup(c->exit_code == 0 ? "Completed" : "Error");
			c->term_started = c->started_at;
			c->term_finished = (time_t)fin;
		}
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < p->nc; i++) {
		p->c[i]->pod = p;
		if (p->c[i]->shim)
			nspawn__watch_shim(p->c[i]);
	}
	log_info("pod %s: adopted (pause %d, %zu containers)", p->key, (int)p->pause, p->nc);
}

/* Fixes up the adopted containers' places once the pod is known. */
static void nspawn__place(struct rpod *p, const struct ynode *pod)
{
	static const char *const lists[] = {"spec.initContainers", "spec.containers"};
	for (size_t l = 0; l < 2; l++) {
		const struct ynode *list = ynode_path(pod, lists[l]);
		for (size_t i = 0; list && list->type == YNODE_SEQ && i < list->n; i++) {
			const char *name = ynode_path_str(ynode_item(list, i), "name");
			for (size_t k = 0; name && k < p->nc; k++) {
				if (strcmp(p->c[k]->name, name) == 0) {
					p->c[k]->init = l == 0;
					p->c[k]->index = i;
				}
			}
		}
	}
}

static void nspawn__adopt_all(struct nspawn *rt)
{
	cleanup_free char *dir = xasprintf("%s/nodes/%s/pods", rt->state, rt->node);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.')
			nspawn__adopt_one(rt, de->d_name);
	}
	closedir(d);
}

/* Pods adopted but claimed by no pod of the cluster: theirs are gone. */
static void nspawn__on_adopt_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct nspawn *rt = data;
	for (size_t i = rt->npods; i-- > 0;) {
		struct rpod *p = rt->pods[i];
		if (!p->synced && !p->dying) {
			log_info("pod %s (%s): no longer in the cluster; removing what it left",
				 p->key, p->uid);
			nspawn__kill_pod(&rt->base, p->key, p->uid);
		}
	}
}

/* ---- eviction ------------------------------------------------------------ */

static long long nspawn__mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	char name[64];
	long long kb, found = -1;
	while (fscanf(f, "%63s %lld kB\n", name, &kb) == 2) {
		if (strcmp(name, "MemAvailable:") == 0)
			found = kb * 1024;
	}
	fclose(f);
	return found;
}

/* The eviction rank: BestEffort first, then Burstable by usage above
 * request, then Guaranteed (each the larger usage first). */
static void nspawn__rank(const struct rpod *p, int *cls, int64_t *over)
{
	const char *qos = podstatus_qos_class(p->spec_pod);
	*cls = strcmp(qos, "BestEffort") == 0 ? 0 : strcmp(qos, "Burstable") == 0 ? 1 : 2;
	int64_t usage = 0, request = 0;
	for (size_t i = 0; i < p->nc; i++) {
		int64_t u = cgroup_memory_usage(p->c[i]->cgroup);
		if (u > 0)
			usage += u;
		const struct ynode *cs = nspawn__spec(p->spec_pod, p->c[i]);
		const char *req = ynode_path_str(cs, "resources.requests.memory");
		int64_t milli;
		if (req && quantity_parse(req, &milli, NULL) == 0)
			request += milli / 1000;
	}
	*over = usage - request;
}

static void nspawn__on_evict_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct nspawn *rt = data;
	long long avail = nspawn__mem_available();
	if (avail < 0 || avail >= rt->eviction_bytes)
		return;
	struct rpod *victim = NULL;
	int vcls = 3;
	int64_t vover = 0;
	for (size_t i = 0; i < rt->npods; i++) {
		struct rpod *p = rt->pods[i];
		if (p->busy || p->dying || p->evicted || !p->spec_pod || nspawn__all_stopped(p))
			continue;
		int cls;
		int64_t over;
		nspawn__rank(p, &cls, &over);
		if (cls < vcls || (cls == vcls && over > vover)) {
			victim = p;
			vcls = cls;
			vover = over;
		}
	}
	if (!victim)
		return;
	victim->evicted = true;
	victim->evict_message = xasprintf(
	    "The node was low on resource: memory. Threshold quantity: %lld, available: %lldKi. ",
	    rt->eviction_bytes, avail / 1024);
	log_warn("pod %s: evicted (%lld bytes available, threshold %lld)", victim->key, avail,
		 rt->eviction_bytes);
	nspawn__stop_all(victim, SIGKILL);
	nspawn__notify(rt, victim->key);
}

/* ---- the runtime --------------------------------------------------------- */

static bool nspawn__ready(struct runtime *base, const char **reason, const char **message)
{
	struct nspawn *rt = (struct nspawn *)base;
	if (!rt->net) {
		*reason = "KubeletNotReady";
		*message = "container runtime network not ready: the node's bridge is not up yet";
		return false;
	}
	*reason = "KubeletReady";
	*message = "kubelet is posting ready status";
	return true;
}

static void nspawn__free(struct runtime *base)
{
	struct nspawn *rt = (struct nspawn *)base;
	/* what the workers are starting is recorded first (the state files
	 * are written already); then, as pods keep running when the agent
	 * stops (a restarted agent adopts them), only the agent's own memory
	 * goes */
	workpool_free(rt->workers);
	while (rt->npods)
		nspawn__pod_free(rt->pods[rt->npods - 1]);
	loop_timer_free(rt->adopt_timer);
	loop_timer_free(rt->evict_timer);
	loop_timer_free(rt->gc_timer);
	puller_free(rt->puller);
	free(rt->store);
	free(rt->pods);
	free(rt->mount);
	free(rt->node);
	free(rt->state);
	free(rt->images);
	free(rt->logs);
	free(rt->pause_bin);
	free(rt->shim_bin);
	free(rt->runas_bin);
	free(rt->dns_ip);
	free(rt->domain);
	free(rt->token_issuer);
	free(rt->host_ip);
	free(rt->cg_node);
	pthread_mutex_destroy(&rt->cg_lock);
	free(rt);
}

static const struct runtime_ops nspawn_ops = {
    .ready = nspawn__ready,
    .sync_pod = nspawn__sync_pod,
    .kill_pod = nspawn__kill_pod,
    .free = nspawn__free,
};

/* A pull ended: the pods waiting for one look again, and the image GC
 * sees whether the image file system is now too full. */
static void nspawn__pulled(void *data)
{
	struct nspawn *rt = data;
	for (size_t i = 0; i < rt->npods; i++) {
		struct rpod *p = rt->pods[i];
		for (size_t j = 0; j < p->nc; j++) {
			if (p->c[j]->pull.pull_id) {
				nspawn__wake(p, 0);
				break;
			}
		}
	}
}

static void nspawn__on_gc_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct nspawn *rt = data;
	puller_gc(rt->puller);
}

static char *nspawn__find_bin(const char *dir, const char *name, struct error **err)
{
	char *path = xasprintf("%s/%s", dir, name);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	error_set(err, ENOENT, "%s not found in %s (it is built with corral-noded)", name, dir);
	return NULL;
}

#define NSPAWN_PROPAGATE "/run/systemd/nspawn/propagate"

/* systemd-nspawn makes a folder per machine under NSPAWN_PROPAGATE and,
 * at the machine's end, removes it only from a tmpfs: where /run is on a
 * disk it leaves the folder behind and prints "Attempted to remove disk
 * file system ..." into the container's output, its log. A tmpfs of our
 * own there keeps both from happening; it stays for every nspawn after
 * us (corral-noded(8), FILES). */
static void nspawn__propagate_tmpfs(void)
{
	struct statfs fs;
	util_mkdir_p(NSPAWN_PROPAGATE, 0700);
	if (statfs(NSPAWN_PROPAGATE, &fs) < 0 || fs.f_type == TMPFS_MAGIC ||
	    fs.f_type == RAMFS_MAGIC)
		return;
	if (mount("tmpfs", NSPAWN_PROPAGATE, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0700,size=4m") < 0)
		log_warn("%s: cannot mount a tmpfs (%s): systemd-nspawn will leave a folder there "
			 "per container",
			 NSPAWN_PROPAGATE, strerror(errno));
	else
		log_info("%s is not on a tmpfs: mounted one, for systemd-nspawn", NSPAWN_PROPAGATE);
}

struct runtime *runtime_nspawn_new(const struct nspawn_opts *o, struct error **err)
{
	cleanup_free char *pause = nspawn__find_bin(o->bin_dir, "corral-pause", err);
	if (!pause)
		return NULL;
	cleanup_free char *shim = nspawn__find_bin(o->bin_dir, "corral-shim", err);
	if (!shim)
		return NULL;
	const struct workpool_opts wo = {
	    .loop = o->loop,
	    .threads = o->workers ? o->workers : NSPAWN_WORKERS,
	    .on_demand = true,
	    .stack_size = NSPAWN_WORKER_STACK,
	};
	struct workpool *workers = workpool_new(&wo, err);
	if (!workers)
		return NULL;
	if (workpool_start(workers, 0, err) < 0) {
		workpool_free(workers);
		return NULL;
	}
	struct nspawn *rt = xcalloc(1, sizeof(*rt));
	rt->workers = workers;
	pthread_mutex_init(&rt->cg_lock, NULL);
	rt->base.ops = &nspawn_ops;
	rt->base.name = "nspawn";
	rt->base.version = "systemd-nspawn://252";
	rt->base.wants_ip = true;
	rt->base.async_kill = true;
	rt->loop = o->loop;
	rt->mount = xstrdup(o->mount);
	rt->node = xstrdup(o->node);
	rt->state = xstrdup(o->state_dir);
	rt->images = xstrdup(o->images_dir);
	rt->logs = xstrdup(o->log_dir);
	rt->pause_bin = xstrdup(pause);
	rt->shim_bin = xstrdup(shim);
	/* looked for when a container needs it (few do) */
	rt->runas_bin = xasprintf("%s/corral-runas", o->bin_dir);
	rt->dns_ip = xstrdup(o->dns_ip);
	rt->domain = xstrdup(o->domain);
	rt->eviction_bytes = o->eviction_bytes;
	rt->token_signer = o->token_signer;
	rt->token_issuer = xstrdup(o->token_issuer ? o->token_issuer : "");
	rt->eviction_period_ms = o->eviction_period_ms ? o->eviction_period_ms : 2000;
	char hash[9];
	net_hash(o->node, hash);
	rt->cg_node = xasprintf("corral/%s", hash);
	rt->base.cgroup_root = rt->cg_node;
	if (o->pull) {
		rt->store = xstrdup(o->pull->store);
		rt->puller = puller_new(rt->loop, o->pull, nspawn__pulled, rt);
		rt->gc_timer = loop_timer_new(rt->loop, nspawn__on_gc_timer, rt);
		uint64_t period =
		    o->pull->gc_period_ms ? o->pull->gc_period_ms : NSPAWN_IMAGE_GC_MS;
		loop_timer_start(rt->gc_timer, period, period);
	} else {
		rt->store = xasprintf("%s/images", o->state_dir);
	}
	nspawn__propagate_tmpfs();
	return &rt->base;
}

int runtime_nspawn_attach(struct runtime *base, struct net *net, const char *host_ip)
{
	struct nspawn *rt = (struct nspawn *)base;
	rt->net = net;
	rt->host_ip = xstrdup(host_ip ? host_ip : "");
	nspawn__adopt_all(rt);
	rt->adopt_timer = loop_timer_new(rt->loop, nspawn__on_adopt_timer, rt);
	loop_timer_start(rt->adopt_timer, NSPAWN_ADOPT_GRACE_MS, 0);
	rt->evict_timer = loop_timer_new(rt->loop, nspawn__on_evict_timer, rt);
	loop_timer_start(rt->evict_timer, rt->eviction_period_ms, rt->eviction_period_ms);
	return 0;
}

void runtime_nspawn_drain(struct runtime *base)
{
	struct nspawn *rt = (struct nspawn *)base;
	atomic_store(&rt->stopping, true);
	workpool_drain(rt->workers);
}

void runtime_nspawn_stop_all(struct runtime *base)
{
	struct nspawn *rt = (struct nspawn *)base;
	atomic_store(&rt->stopping, true);
	workpool_drain(rt->workers); /* nothing half set up is left behind */
	for (size_t i = rt->npods; i-- > 0;) {
		struct rpod *p = rt->pods[i];
		p->dying = true;
		nspawn__stop_all(p, SIGKILL);
		nspawn__teardown(p);
		nspawn__pod_free(p);
	}
}
