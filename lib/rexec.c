/* rexec.c: see rexec.h. */
#include "rexec.h"
#include "execframe.h"
#include "nodeaddr.h"
#include "util.h"

#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define REXEC__HEAD_MAX 16384 /* an answer's head */
#define REXEC__BODY_MAX 4096  /* the part of an error's text we show */

static volatile sig_atomic_t rexec__signal; /* one that makes us leave */
static volatile sig_atomic_t rexec__winch;

static void rexec__on_signal(int signo)
{
	rexec__signal = signo;
}

static void rexec__on_winch(int signo)
{
	(void)signo;
	rexec__winch = 1;
}

char *rexec_request_path(const struct rexec_opts *o, unsigned cols, unsigned rows)
{
	CURL *c = curl_easy_init();
	if (!c)
		abort();
	char *ns = curl_easy_escape(c, o->ns, 0), *pod = curl_easy_escape(c, o->pod, 0),
	     *ctr = curl_easy_escape(c, o->container, 0);
	if (!ns || !pod || !ctr)
		abort();
	char *path = xasprintf("/exec/%s/%s/%s?", ns, pod, ctr);
	curl_free(ns);
	curl_free(pod);
	curl_free(ctr);
	for (size_t i = 0; o->argv[i]; i++) {
		char *a = curl_easy_escape(c, o->argv[i], 0);
		if (!a)
			abort();
		char *next = xasprintf("%scommand=%s&", path, a);
		curl_free(a);
		free(path);
		path = next;
	}
	char *full = xasprintf("%sstdout=1&stderr=1%s%s", path, o->in ? "&stdin=1" : "",
			       o->tty ? "&tty=1" : "");
	free(path);
	if (o->tty && cols && rows && cols <= UINT16_MAX && rows <= UINT16_MAX) {
		path = full;
		full = xasprintf("%s&cols=%u&rows=%u", path, cols, rows);
		free(path);
	}
	curl_easy_cleanup(c);
	return full;
}

/* Milliseconds on a steady clock. */
static long long rexec__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct rexec__conn {
	CURL *c;
	curl_socket_t sock;
	const struct rexec_opts *o;
};

/* Waits until sock is ready for events, at most until deadline (ms on
 * rexec__now_ms's clock; 0: no limit): 1 ready, 0 time out, -EINTR when a
 * signal that makes us leave came. */
static int rexec__wait(struct rexec__conn *k, short events, long long deadline)
{
	for (;;) {
		if (rexec__signal)
			return -EINTR;
		long long left = deadline ? deadline - rexec__now_ms() : -1;
		if (deadline && left <= 0)
			return 0;
		struct pollfd p = {(int)k->sock, events, 0};
		int r = poll(&p, 1, deadline ? (int)left : -1);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int rexec__send(struct rexec__conn *k, const void *buf, size_t n, struct error **err)
{
	const char *p = buf;
	while (n) {
		size_t sent = 0;
		CURLcode rc = curl_easy_send(k->c, p, n, &sent);
		if (rc == CURLE_OK) {
			p += sent;
			n -= sent;
			continue;
		}
		if (rc != CURLE_AGAIN)
			return error_set(err, EIO, "sending to node %s: %s", k->o->node,
					 curl_easy_strerror(rc));
		int w = rexec__wait(k, POLLOUT, 0);
		if (w < 0)
			return w == -EINTR ? -EINTR : error_set(err, -w, "poll: %s", strerror(-w));
	}
	return 0;
}

/* Up to n bytes: > 0 read, 0 the node closed, -EAGAIN nothing yet, -EIO. */
static long rexec__recv(struct rexec__conn *k, void *buf, size_t n)
{
	size_t got = 0;
	CURLcode rc = curl_easy_recv(k->c, buf, n, &got);
	if (rc == CURLE_AGAIN)
		return -EAGAIN;
	if (rc != CURLE_OK)
		return -EIO;
	return (long)got;
}

/* Reads the answer's head into buf (REXEC__HEAD_MAX + 1 bytes); its
 * length, *status, *clen, and in *have all bytes read so far. */
static long rexec__read_head(struct rexec__conn *k, char *buf, size_t *have, int *status,
			     long *clen, struct error **err)
{
	long long deadline = rexec__now_ms() + k->o->timeout_ms;
	*have = 0;
	for (;;) {
		long r = rexec__recv(k, buf + *have, REXEC__HEAD_MAX - *have);
		if (r == -EAGAIN) {
			int w = rexec__wait(k, POLLIN, deadline);
			if (w == 0)
				return error_set(
				    err, ETIMEDOUT,
				    "node %s (%s) does not answer: nothing within %ld ms",
				    k->o->node, k->o->base, k->o->timeout_ms);
			if (w < 0)
				return w;
			continue;
		}
		if (r <= 0)
			return error_set(err, EACCES,
					 "node %s (%s) closed the connection without an answer "
					 "(does it take our client certificate %s?)",
					 k->o->node, k->o->base, k->o->cert_file);
		*have += (size_t)r;
		long h = execframe_http_head(buf, *have, status, clen);
		if (h > 0)
			return h;
		if (h < 0 || *have >= REXEC__HEAD_MAX)
			return error_set(err, EPROTO, "node %s (%s) gave an answer that is no HTTP",
					 k->o->node, k->o->base);
	}
}

/* An answer other than 101: its text (what the server says) as the error. */
static int rexec__refused(struct rexec__conn *k, int status, long clen, const char *body,
			  size_t have, struct error **err)
{
	char text[REXEC__BODY_MAX + 1];
	size_t n = have < REXEC__BODY_MAX ? have : REXEC__BODY_MAX;
	memcpy(text, body, n);
	long long deadline = rexec__now_ms() + k->o->timeout_ms;
	while (n < REXEC__BODY_MAX && (clen < 0 || (long)n < clen)) {
		long r = rexec__recv(k, text + n, REXEC__BODY_MAX - n);
		if (r == -EAGAIN) {
			if (rexec__wait(k, POLLIN, deadline) <= 0)
				break;
			continue;
		}
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (clen >= 0 && (long)n > clen)
		n = (size_t)clen;
	text[n] = '\0';
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	int e = status == 401 || status == 403	 ? EACCES
		: status == 404 || status == 409 ? ENOENT
						 : EIO;
	return error_set(err, e, "%s%s(node %s answered %d)", text, *text ? " " : "", k->o->node,
			 status);
}

/* Frames for the node not yet taken by the connection. The relay never
 * blocks on sending: the node may be sending to us at the same time. */
struct rexec__out {
	uint8_t *buf;
	size_t len;
};

static void rexec__queue(struct rexec__out *q, unsigned stream, const void *payload, size_t len)
{
	q->buf = xrealloc(q->buf, q->len + EXECFRAME_HEADER + len);
	execframe_header(q->buf + q->len, stream, len);
	if (len)
		memcpy(q->buf + q->len + EXECFRAME_HEADER, payload, len);
	q->len += EXECFRAME_HEADER + len;
}

static void rexec__queue_resize(struct rexec__out *q)
{
	struct winsize ws;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
		return;
	uint8_t p[4];
	execframe_resize(p, ws.ws_col, ws.ws_row);
	rexec__queue(q, EXECFRAME_RESIZE, p, sizeof(p));
}

/* What the node sent, in buf[0..*have): output written out, the status
 * taken. 1 when the status came (*code set), 0 for more, or -errno. */
static int rexec__take(const struct rexec_opts *o, uint8_t *buf, size_t *have, int *code,
		       struct error **err)
{
	size_t off = 0;
	struct execframe f;
	long n;
	while ((n = execframe_parse(buf + off, *have - off, &f)) > 0) {
		off += (size_t)n;
		if (f.stream == EXECFRAME_STDOUT || f.stream == EXECFRAME_STDERR) {
			util_write_all(f.stream == EXECFRAME_STDOUT ? STDOUT_FILENO : STDERR_FILENO,
				       f.payload, f.len);
			continue;
		}
		if (f.stream != EXECFRAME_STATUS)
			return error_set(err, EPROTO, "node %s sent a frame of stream %u", o->node,
					 f.stream);
		cleanup_free char *msg = NULL;
		int s = execframe_status_parse(f.payload, f.len, code, &msg);
		if (s == 0)
			return 1;
		return error_set(err, s == 1 ? EIO : EPROTO, "node %s: %s", o->node,
				 s == 1 ? msg : "a status that is none");
	}
	if (n < 0)
		return error_set(err, EPROTO, "node %s sent something not a frame", o->node);
	memmove(buf, buf + off, *have - off);
	*have -= off;
	return 0;
}

/* The upgraded stream: frames both ways until the status comes. buf holds
 * have bytes already read. */
static int rexec__relay(struct rexec__conn *k, uint8_t *buf, size_t cap, size_t have,
			struct error **err)
{
	const struct rexec_opts *o = k->o;
	bool in_open = o->in;
	struct rexec__out q = {0};
	int code = 0, r;
	for (;;) {
		/* whatever libcurl holds, then whatever the socket brings */
		for (;;) {
			if ((r = rexec__take(o, buf, &have, &code, err)) != 0)
				goto out;
			long got = rexec__recv(k, buf + have, cap - have);
			if (got == -EAGAIN)
				break;
			if (got <= 0) {
				r = error_set(err, EPIPE,
					      "node %s closed the connection before the command's "
					      "exit status",
					      o->node);
				goto out;
			}
			have += (size_t)got;
		}
		while (q.len) {
			size_t sent = 0;
			CURLcode rc = curl_easy_send(k->c, q.buf, q.len, &sent);
			if (rc == CURLE_AGAIN)
				break;
			if (rc != CURLE_OK) {
				r = error_set(err, EIO, "sending to node %s: %s", o->node,
					      curl_easy_strerror(rc));
				goto out;
			}
			memmove(q.buf, q.buf + sent, q.len - sent);
			q.len -= sent;
		}
		if (rexec__signal) {
			r = -EINTR;
			goto out;
		}
		if (rexec__winch) {
			rexec__winch = 0;
			rexec__queue_resize(&q);
			continue;
		}
		struct pollfd p[2] = {{(int)k->sock, (short)(POLLIN | (q.len ? POLLOUT : 0)), 0},
				      {STDIN_FILENO, POLLIN, 0}};
		/* standard input is read only as fast as the node takes it */
		if (poll(p, in_open && !q.len ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = error_set(err, errno, "poll: %s", strerror(errno));
			goto out;
		}
		if (in_open && !q.len && p[1].revents) {
			uint8_t ib[32768];
			ssize_t n = read(STDIN_FILENO, ib, sizeof(ib));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				in_open = false; /* an empty frame: its end */
			rexec__queue(&q, EXECFRAME_STDIN, ib, n > 0 ? (size_t)n : 0);
		}
	}
out:
	free(q.buf);
	return r == 1 ? code : r;
}

int rexec_run(const struct rexec_opts *o, struct error **err)
{
	static const struct {
		const char *what;
		size_t off;
	} files[] = {{"cluster CA", offsetof(struct rexec_opts, ca_file)},
		     {"client certificate", offsetof(struct rexec_opts, cert_file)},
		     {"client key", offsetof(struct rexec_opts, key_file)}};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		const char *f = *(const char *const *)((const char *)o + files[i].off);
		if (!f || access(f, R_OK) < 0)
			return error_set(
			    err, EACCES,
			    "pod %s runs on node %s, which is not on this machine, and "
			    "reaching it needs a %s of the cluster: %s: %s",
			    o->pod, o->node, files[i].what, f ? f : "(none given)",
			    f ? strerror(errno) : "none");
	}
	if (strncmp(o->base, "https://", 8) != 0)
		return error_set(err, EINVAL, "node %s: %s is no https:// address", o->node,
				 o->base);
	struct winsize ws = {0};
	if (o->tty && isatty(STDIN_FILENO) && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
		ws = (struct winsize){0};
	cleanup_free char *path = rexec_request_path(o, ws.ws_col, ws.ws_row);
	cleanup_free char *url = xasprintf("%s%s", o->base, path);
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *c = curl_easy_init();
	if (!c)
		abort();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
	nodeaddr_curl_tls(c, o->ca_file, o->cert_file, o->key_file);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->timeout_ms);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	struct rexec__conn k = {.c = c, .o = o};
	uint8_t *buf = NULL;
	char *req = NULL; /* declared before the first goto: freed at out */
	struct termios saved;
	bool raw = false;
	int r;
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		int e = rc == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT
			: rc == CURLE_COULDNT_CONNECT  ? ECONNREFUSED
			: rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_PEER_FAILED_VERIFICATION ||
				rc == CURLE_SSL_CACERT_BADFILE
			    ? EACCES
			    : EIO;
		if (e == ETIMEDOUT)
			r = error_set(err, e,
				      "node %s (%s) does not answer: nothing within %ld ms (%s)",
				      o->node, o->base, o->timeout_ms,
				      *errbuf ? errbuf : curl_easy_strerror(rc));
		else
			r = error_set(err, e, "cannot reach node %s at %s: %s", o->node, o->base,
				      *errbuf ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	if (curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &k.sock) != CURLE_OK ||
	    k.sock == CURL_SOCKET_BAD) {
		r = error_set(err, EIO, "node %s: no connection", o->node);
		goto out;
	}
	struct sigaction sa = {.sa_handler = rexec__on_signal},
			 wa = {.sa_handler = rexec__on_winch};
	sigemptyset(&sa.sa_mask);
	sigemptyset(&wa.sa_mask);
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	const char *host = o->base + 8;
	req = xasprintf("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\n"
			"Upgrade: " EXECFRAME_UPGRADE "\r\n\r\n",
			path, host);
	if ((r = rexec__send(&k, req, strlen(req), err)) < 0)
		goto out;
	size_t cap = 2 * (EXECFRAME_HEADER + EXECFRAME_MAX);
	buf = xmalloc(cap > REXEC__HEAD_MAX + 1 ? cap : REXEC__HEAD_MAX + 1);
	size_t have = 0;
	int status = 0;
	long clen = -1;
	long head = rexec__read_head(&k, (char *)buf, &have, &status, &clen, err);
	if (head < 0) {
		r = (int)head;
		goto out;
	}
	if (status != 101) {
		r = rexec__refused(&k, status, clen, (const char *)buf + head, have - (size_t)head,
				   err);
		goto out;
	}
	memmove(buf, buf + head, have - (size_t)head);
	have -= (size_t)head;
	if (o->tty && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
		struct termios t = saved;
		cfmakeraw(&t);
		raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
		sigaction(SIGWINCH, &wa, NULL);
	}
	r = rexec__relay(&k, buf, cap, have, err);
out:
	if (r == -EINTR)
		r = 128 + rexec__signal;
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	free(buf);
	free(req);
	curl_easy_cleanup(c);
	return r;
}
