/* probe.c: exec, httpGet and tcpSocket probes on the loop. */
#include "probe.h"
#include "enter.h"
#include "log.h"
#include "loop.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum probe_kind { PROBE_NONE, PROBE_EXEC, PROBE_HTTP, PROBE_TCP };

struct probe {
	struct probes *owner;
	bool liveness;
	enum probe_kind kind;
	struct ynode *spec;
	long long delay_s, period_s, timeout_s, success_th, failure_th;
	int successes, failures;
	struct loop_timer *tick;    /* the next attempt */
	struct loop_timer *timeout; /* the running attempt's end */
	int fd;			    /* socket or pidfd of the running attempt */
	pid_t pid;		    /* exec */
	char buf[64];
	size_t got;
	bool sent;
};

struct probes {
	struct loop *loop;
	struct probes_hooks h;
	struct probe p[2]; /* liveness, readiness */
	char *ip;
	char *piddir;
	bool ready;
	bool has_readiness;
};

struct probes *probes_new(struct loop *loop, const struct probes_hooks *h)
{
	struct probes *pr = xcalloc(1, sizeof(*pr));
	pr->loop = loop;
	pr->h = *h;
	pr->ready = true;
	for (int i = 0; i < 2; i++) {
		pr->p[i].owner = pr;
		pr->p[i].liveness = i == 0;
		pr->p[i].fd = -1;
	}
	return pr;
}

static void probe__end_attempt(struct probe *p)
{
	struct loop *loop = p->owner->loop;
	if (p->timeout)
		loop_timer_stop(p->timeout);
	if (p->fd >= 0) {
		loop_del_fd(loop, p->fd);
		close(p->fd);
		p->fd = -1;
	}
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	p->got = 0;
	p->sent = false;
}

static void probe__result(struct probe *p, bool ok, const char *why)
{
	struct probes *pr = p->owner;
	probe__end_attempt(p);
	if (ok) {
		p->failures = 0;
		p->successes++;
	} else {
		p->successes = 0;
		p->failures++;
	}
	if (p->liveness) {
		if (!ok && p->failures >= p->failure_th) {
			p->failures = 0;
			if (pr->h.unhealthy)
				pr->h.unhealthy(pr->h.data, why);
		}
		return;
	}
	bool ready = pr->ready;
	if (ok && p->successes >= p->success_th)
		ready = true;
	if (!ok && p->failures >= p->failure_th)
		ready = false;
	if (ready != pr->ready) {
		pr->ready = ready;
		if (pr->h.changed)
			pr->h.changed(pr->h.data);
	}
}

static void probe__on_timeout(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct probe *p = data;
	probe__result(p, false, "the probe timed out");
}

static int probe__port(const struct ynode *spec, const char *key)
{
	long long port;
	const struct ynode *n = ynode_path(spec, key);
	if (ynode_int(n, &port) == 0 && port > 0 && port < 65536)
		return (int)port;
	return -1; /* named ports are resolved by the caller's spec: not yet */
}

static void probe__on_socket(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct probe *p = data;
	int soerr = 0;
	socklen_t len = sizeof(soerr);
	if (!p->sent) {
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr) {
			probe__result(p, false, "connection refused");
			return;
		}
		if (p->kind == PROBE_TCP) {
			probe__result(p, true, NULL);
			return;
		}
		const char *path = ynode_path_str(p->spec, "httpGet.path");
		cleanup_free char *req =
		    xasprintf("GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: kube-probe/corral\r\n"
			      "Accept: */*\r\nConnection: close\r\n\r\n",
			      path && *path ? path : "/", p->owner->ip);
		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
			probe__result(p, false, "cannot send the request");
			return;
		}
		p->sent = true;
		struct error *err = NULL;
		if (loop_mod_fd(p->owner->loop, fd, LOOP_READ, &err) < 0) {
			error_free(err);
			probe__result(p, false, "loop");
		}
		return;
	}
	ssize_t r = read(fd, p->buf + p->got, sizeof(p->buf) - 1 - p->got);
	if (r > 0)
		p->got += (size_t)r;
	p->buf[p->got] = '\0';
	int status = 0;
	if (sscanf(p->buf, "HTTP/%*s %d", &status) == 1 || r <= 0 || p->got == sizeof(p->buf) - 1) {
		bool ok = status >= 200 && status < 400;
		cleanup_free char *why = xasprintf("HTTP probe failed with statuscode: %d", status);
		probe__result(p, ok, why);
	}
}

static void probe__on_exec(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)fd;
	(void)events;
	struct probe *p = data;
	int status = 0;
	waitpid(p->pid, &status, 0);
	p->pid = 0;
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	probe__result(p, ok, "the exec probe failed");
}

static void probe__attempt(struct probe *p)
{
	struct probes *pr = p->owner;
	struct error *err = NULL;
	if (p->kind == PROBE_EXEC) {
		const struct ynode *cmd = ynode_path(p->spec, "exec.command");
		pid_t target = enter_target(pr->piddir);
		if (!target || !cmd || cmd->type != YNODE_SEQ || cmd->n == 0) {
			probe__result(p, false, "no process to run the probe in");
			return;
		}
		size_t n = cmd->n;
		char **argv = xcalloc(n + 1, sizeof(*argv));
		for (size_t i = 0; i < n; i++) {
			const char *s = ynode_str(ynode_item(cmd, i));
			argv[i] = (char *)(s ? s : "");
		}
		/* In the container as kubectl exec would be (lib/enter.h): its
		 * user, capabilities and environment, not the agent's. */
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			enter_exec(target, argv, false, NULL);
			_exit(126);
		}
		free(argv);
		if (pid < 0) {
			probe__result(p, false, "fork");
			return;
		}
		p->pid = pid;
		p->fd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (p->fd < 0 ||
		    loop_add_fd(pr->loop, p->fd, LOOP_READ, probe__on_exec, p, &err) < 0) {
			error_free(err);
			probe__result(p, false, "pidfd");
			return;
		}
	} else {
		int port =
		    probe__port(p->spec, p->kind == PROBE_HTTP ? "httpGet.port" : "tcpSocket.port");
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		if (port < 0 || !pr->ip || inet_pton(AF_INET, pr->ip, &sa.sin_addr) != 1) {
			probe__result(p, false, "no address or port to probe");
			return;
		}
		p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (p->fd < 0 || (connect(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
				  errno != EINPROGRESS)) {
			probe__result(p, false, "connection refused");
			return;
		}
		if (loop_add_fd(pr->loop, p->fd, LOOP_WRITE, probe__on_socket, p, &err) < 0) {
			error_free(err);
			probe__result(p, false, "loop");
			return;
		}
	}
	loop_timer_start(p->timeout, (uint64_t)p->timeout_s * 1000, 0);
}

static void probe__on_tick(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct probe *p = data;
	if (p->fd >= 0 || p->pid > 0)
		return; /* the previous attempt still runs */
	probe__attempt(p);
}

static long long probe__int(const struct ynode *spec, const char *key, long long def, long long min)
{
	long long v;
	if (ynode_int(ynode_get(spec, key), &v) == 0 && v >= min)
		return v;
	return def;
}

void probes_start(struct probes *pr, const struct ynode *spec, const char *pod_ip,
		  const char *piddir)
{
	if (!pr)
		return;
	probes_stop(pr);
	free(pr->ip);
	free(pr->piddir);
	pr->ip = pod_ip ? xstrdup(pod_ip) : NULL;
	pr->piddir = xstrdup(piddir);
	static const char *const keys[] = {"livenessProbe", "readinessProbe"};
	pr->has_readiness = false;
	for (int i = 0; i < 2; i++) {
		struct probe *p = &pr->p[i];
		ynode_free(p->spec);
		p->spec = NULL;
		p->kind = PROBE_NONE;
		const struct ynode *s = ynode_get(spec, keys[i]);
		if (!s || s->type != YNODE_MAP)
			continue;
		p->kind = ynode_get(s, "exec")	      ? PROBE_EXEC
			  : ynode_get(s, "httpGet")   ? PROBE_HTTP
			  : ynode_get(s, "tcpSocket") ? PROBE_TCP
						      : PROBE_NONE;
		if (p->kind == PROBE_NONE)
			continue;
		p->spec = ynode_clone(s);
		p->delay_s = probe__int(s, "initialDelaySeconds", 0, 0);
		p->period_s = probe__int(s, "periodSeconds", 10, 1);
		p->timeout_s = probe__int(s, "timeoutSeconds", 1, 1);
		p->success_th = probe__int(s, "successThreshold", 1, 1);
		p->failure_th = probe__int(s, "failureThreshold", 3, 1);
		p->successes = p->failures = 0;
		if (!p->tick) {
			p->tick = loop_timer_new(pr->loop, probe__on_tick, p);
			p->timeout = loop_timer_new(pr->loop, probe__on_timeout, p);
		}
		/* the first attempt right after the initial delay (a little
		 * later without one, for the process to start) */
		uint64_t first = p->delay_s ? (uint64_t)p->delay_s * 1000 : 200;
		loop_timer_start(p->tick, first, (uint64_t)p->period_s * 1000);
		if (i == 1)
			pr->has_readiness = true;
	}
	pr->ready = !pr->has_readiness;
}

void probes_stop(struct probes *pr)
{
	if (!pr)
		return;
	for (int i = 0; i < 2; i++) {
		struct probe *p = &pr->p[i];
		if (p->tick)
			loop_timer_stop(p->tick);
		probe__end_attempt(p);
	}
	pr->ready = !pr->has_readiness;
}

bool probes_ready(const struct probes *pr)
{
	return !pr || pr->ready;
}

void probes_free(struct probes *pr)
{
	if (!pr)
		return;
	probes_stop(pr);
	for (int i = 0; i < 2; i++) {
		loop_timer_free(pr->p[i].tick);
		loop_timer_free(pr->p[i].timeout);
		ynode_free(pr->p[i].spec);
	}
	free(pr->ip);
	free(pr->piddir);
	free(pr);
}
