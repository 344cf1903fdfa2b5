/* execserve.c: see execserve.h. */
#include "execserve.h"
#include "enter.h"
#include "execframe.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXECSERVE__INBUF (2 * (EXECFRAME_HEADER + EXECFRAME_MAX))

struct execserve {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* live reached 0 */
	size_t live;	     /* sessions whose thread runs, under lock */
	int stop[2];	     /* a pipe whose read end turns readable at stop */
};

struct execserve__session {
	struct execserve *es;
	int sock;
	int peer; /* the client's TCP socket, for POLLRDHUP; -1: none */
	struct execserve_req req;
	uint8_t *in; /* what came from the client, not yet taken */
	size_t in_len;
	void (*done)(void *cls);
	void *cls;
};

void execserve_req_clear(struct execserve_req *req)
{
	for (size_t i = 0; req->argv && req->argv[i]; i++)
		free(req->argv[i]);
	free(req->argv);
	*req = (struct execserve_req){0};
}

struct execserve *execserve_new(void)
{
	struct execserve *es = xcalloc(1, sizeof(*es));
	pthread_mutex_init(&es->lock, NULL);
	pthread_cond_init(&es->idle, NULL);
	if (pipe2(es->stop, O_CLOEXEC | O_NONBLOCK) < 0)
		abort(); /* out of descriptors at start-up */
	return es;
}

void execserve_stop(struct execserve *es)
{
	if (!es)
		return;
	/* the pipe stays readable: every session, present or to come, sees it */
	if (write(es->stop[1], "x", 1) < 0 && errno != EAGAIN)
		log_warn("exec: cannot tell the sessions to stop: %s", strerror(errno));
	pthread_mutex_lock(&es->lock);
	while (es->live)
		pthread_cond_wait(&es->idle, &es->lock);
	pthread_mutex_unlock(&es->lock);
}

void execserve_free(struct execserve *es)
{
	if (!es)
		return;
	execserve_stop(es);
	close(es->stop[0]);
	close(es->stop[1]);
	pthread_cond_destroy(&es->idle);
	pthread_mutex_destroy(&es->lock);
	free(es);
}

/* Sends all of buf on the client's socket (non-blocking), unless the
 * server stops first. */
static bool execserve__send(struct execserve__session *x, const uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t w = send(x->sock, buf, n, MSG_NOSIGNAL);
		if (w > 0) {
			buf += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return false;
		struct pollfd p[3] = {
		    {x->sock, POLLOUT, 0}, {x->es->stop[0], POLLIN, 0}, {x->peer, POLLRDHUP, 0}};
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			return false;
		if (p[1].revents || p[2].revents)
			return false;
	}
	return true;
}

static bool execserve__frame(struct execserve__session *x, unsigned stream, const void *payload,
			     size_t len)
{
	uint8_t h[EXECFRAME_HEADER];
	execframe_header(h, stream, len);
	return execserve__send(x, h, sizeof(h)) && execserve__send(x, payload, len);
}

/* The command's process, before it becomes the command: its standard
 * input, output and error are the given descriptors. */
static void execserve__child(const struct execserve_req *req, int in, int out, int errfd)
{
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(errfd, STDERR_FILENO) < 0)
		_exit(126);
	/* Nothing of the agent's reaches the command, nor the process that
	 * stays to wait for it (enter.h), which never executes anything: the
	 * other end of the command's input pipe held there would keep the
	 * command from ever seeing its end. */
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* goes with the session's thread (the agent) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(126);
	struct error *err = NULL;
	enter_exec(req->target, req->argv, req->tty, &err);
	dprintf(STDERR_FILENO, "corral-noded: %s\n", err ? err->msg : "cannot enter the container");
	_exit(126);
}

/* Forks the command with its descriptors: the terminal's master in *out
 * (and *errfd = -1, *in = *out) with req->tty; else pipes (and *in = -1
 * without req->in). Returns its pid, or -errno. */
static pid_t execserve__spawn(const struct execserve_req *req, int *in, int *out, int *errfd)
{
	int cin = -1, cout = -1, cerr = -1, p[2];
	*in = *out = *errfd = -1;
	if (req->tty) {
		struct winsize ws = {.ws_row = req->rows, .ws_col = req->cols};
		if (openpty(out, &cout, NULL, NULL, req->cols && req->rows ? &ws : NULL) < 0)
			return -errno;
		fcntl(*out, F_SETFD, FD_CLOEXEC);
		fcntl(cout, F_SETFD, FD_CLOEXEC);
		*in = *out;
		cin = cerr = cout;
	} else {
		if (req->in) {
			if (pipe2(p, O_CLOEXEC) < 0)
				goto fail;
			cin = p[0];
			*in = p[1];
		} else if ((cin = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
			goto fail;
		}
		if (pipe2(p, O_CLOEXEC) < 0)
			goto fail;
		*out = p[0];
		cout = p[1];
		if (pipe2(p, O_CLOEXEC) < 0)
			goto fail;
		*errfd = p[0];
		cerr = p[1];
	}
	pid_t pid = fork();
	if (pid == 0)
		execserve__child(req, cin, cout, cerr);
	int e = errno;
	close(cin);
	if (cout != cin)
		close(cout);
	if (cerr != cout)
		close(cerr);
	if (pid < 0) {
		errno = e;
		goto fail_parent;
	}
	fcntl(*out, F_SETFL, O_NONBLOCK);
	if (*errfd >= 0)
		fcntl(*errfd, F_SETFL, O_NONBLOCK);
	if (*in >= 0 && *in != *out)
		fcntl(*in, F_SETFL, O_NONBLOCK);
	return pid;
fail:
	e = errno;
	if (cin >= 0)
		close(cin);
	if (cout >= 0)
		close(cout);
	errno = e;
fail_parent:
	e = errno;
	if (*in >= 0 && *in != *out)
		close(*in);
	if (*out >= 0)
		close(*out);
	if (*errfd >= 0)
		close(*errfd);
	*in = *out = *errfd = -1;
	return -e;
}

/* Reads what the command wrote on fd and sends it as frames of stream;
 * false once fd has nothing more (end of file, or the terminal's EIO). */
static bool execserve__relay_out(struct execserve__session *x, int fd, unsigned stream,
				 bool *sent_ok)
{
	uint8_t buf[EXECFRAME_MAX];
	ssize_t r = read(fd, buf, sizeof(buf));
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (r <= 0)
		return false;
	if (!execserve__frame(x, stream, buf, (size_t)r))
		*sent_ok = false;
	return true;
}

/* The session: relays until the command's output ends, then sends its
 * exit status. */
static void execserve__run(struct execserve__session *x)
{
	struct execserve_req *req = &x->req;
	int in = -1, out = -1, errfd = -1;
	uint8_t *pending = NULL; /* standard input not yet taken by the command */
	size_t npending = 0, pending_off = 0;
	bool in_open, client = true, stopping = false, bad = false;
	int fl = fcntl(x->sock, F_GETFL);
	if (fl < 0 || fcntl(x->sock, F_SETFL, fl | O_NONBLOCK) < 0) {
		log_warn("exec: the client's socket: %s", strerror(errno));
		return;
	}
	pid_t pid = execserve__spawn(req, &in, &out, &errfd);
	if (pid < 0) {
		cleanup_free char *msg =
		    xasprintf("error cannot start the command: %s", strerror((int)-pid));
		execserve__frame(x, EXECFRAME_STATUS, msg, strlen(msg));
		return;
	}
	in_open = in >= 0;
	bool out_open = true, err_open = errfd >= 0;
	bool eof_pending = false; /* a terminal's end of input, after pending */
	while ((out_open || err_open) && client && !stopping && !bad) {
		if (in_open && npending == 0 && eof_pending) {
			eof_pending = false;
			if (req->tty) {
				pending = xrealloc(pending, 1);
				pending[0] = 4; /* the terminal's end-of-file character */
				npending = 1;
				pending_off = 0;
			} else {
				close(in);
				in = -1;
				in_open = false;
			}
		}
		struct pollfd p[6] = {
		    {x->sock, (short)(npending == 0 ? POLLIN : 0), 0},
		    {out_open ? out : -1, POLLIN, 0},
		    {err_open ? errfd : -1, POLLIN, 0},
		    {in_open && npending ? in : -1, POLLOUT, 0},
		    {x->es->stop[0], POLLIN, 0},
		    {x->peer, POLLRDHUP, 0},
		};
		if (poll(p, 6, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[4].revents) {
			stopping = true;
			break;
		}
		if (p[5].revents) {
			client = false; /* gone (the TLS relay does not say so) */
			break;
		}
		if (p[1].revents)
			out_open = execserve__relay_out(x, out, EXECFRAME_STDOUT, &client);
		if (p[2].revents)
			err_open = execserve__relay_out(x, errfd, EXECFRAME_STDERR, &client);
		if (p[3].revents) {
			ssize_t w = write(in, pending + pending_off, npending);
			if (w > 0) {
				pending_off += (size_t)w;
				npending -= (size_t)w;
			} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				npending = 0; /* the command closed its input */
				in_open = false;
			}
		}
		if (!p[0].revents || npending)
			continue;
		ssize_t r = recv(x->sock, x->in + x->in_len, EXECSERVE__INBUF - x->in_len, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0) {
			client = false; /* gone: its command goes too */
			break;
		}
		x->in_len += (size_t)r;
		size_t off = 0;
		struct execframe f;
		long n;
		pending_off = 0;
		while ((n = execframe_parse(x->in + off, x->in_len - off, &f)) > 0) {
			off += (size_t)n;
			if (f.stream == EXECFRAME_STDIN && in_open && !eof_pending) {
				if (f.len == 0) {
					eof_pending = true;
					continue;
				}
				pending = xrealloc(pending, npending + f.len);
				memcpy(pending + npending, f.payload, f.len);
				npending += f.len;
			} else if (f.stream == EXECFRAME_RESIZE) {
				uint16_t cols, rows;
				if (execframe_resize_parse(f.payload, f.len, &cols, &rows) < 0) {
					bad = true;
					break;
				}
				struct winsize ws = {.ws_row = rows, .ws_col = cols};
				if (req->tty)
					ioctl(out, TIOCSWINSZ, &ws);
			} else if (f.stream != EXECFRAME_STDIN) {
				bad = true; /* output streams go the other way */
				break;
			}
		}
		if (n < 0)
			bad = true;
		memmove(x->in, x->in + off, x->in_len - off);
		x->in_len -= off;
	}
	if (!client || stopping || bad)
		kill(pid, SIGKILL); /* the command dies with it (enter.h) */
	if (in >= 0 && in != out)
		close(in);
	close(out);
	if (errfd >= 0)
		close(errfd);
	free(pending);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!client)
		return;
	cleanup_free char *msg =
	    stopping ? xstrdup("error the node agent is stopping")
	    : bad    ? xstrdup("error the client sent a frame that is not one of the protocol")
	    : WIFEXITED(status)
		? xasprintf("exit %d", WEXITSTATUS(status))
		: xasprintf("exit %d", WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 126);
	execserve__frame(x, EXECFRAME_STATUS, msg, strlen(msg));
}

static void *execserve__thread(void *arg)
{
	struct execserve__session *x = arg;
	struct execserve *es = x->es;
	execserve__run(x);
	x->done(x->cls);
	execserve_req_clear(&x->req);
	free(x->in);
	free(x);
	pthread_mutex_lock(&es->lock);
	if (--es->live == 0)
		pthread_cond_broadcast(&es->idle);
	pthread_mutex_unlock(&es->lock);
	return NULL;
}

int execserve_start(struct execserve *es, int sock, int peer, const uint8_t *extra,
		    size_t extra_len, struct execserve_req *req, void (*done)(void *cls), void *cls,
		    struct error **err)
{
	struct execserve__session *x = xcalloc(1, sizeof(*x));
	*x = (struct execserve__session){
	    .es = es, .sock = sock, .peer = peer, .req = *req, .done = done, .cls = cls};
	x->in = xmalloc(EXECSERVE__INBUF);
	if (extra_len > EXECSERVE__INBUF)
		extra_len = EXECSERVE__INBUF; /* the client sent before it was answered */
	memcpy(x->in, extra, extra_len);
	x->in_len = extra_len;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&es->lock);
	es->live++;
	pthread_t t;
	int r = pthread_create(&t, &attr, execserve__thread, x);
	if (r)
		es->live--;
	pthread_mutex_unlock(&es->lock);
	pthread_attr_destroy(&attr);
	if (r) {
		free(x->in);
		free(x);
		return error_set(err, r, "exec: no thread: %s", strerror(r));
	}
	*req = (struct execserve_req){0};
	return 0;
}
