/* http.c: a minimal HTTP server for /healthz and /metrics (http.h).
 *
 * This file must never block on a client: every socket is non-blocking and
 * a response is small enough for one socket buffer (a client that does not
 * take it loses it). */
#include "http.h"
#include "forward.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct http__conn {
	struct http_server *h;
	int fd;
	int slot;
	size_t len;
	char buf[HTTP_MAX_REQUEST + 1];
	struct loop_timer *timer;
	char *out; /* the response once made */
	size_t outlen, outoff;
	bool draining; /* answered before reading all: read the rest, then close */
};

struct http_server {
	struct loop *loop;
	int fd;
	http_handler_fn handler;
	void *data;
	struct http__conn *conns[HTTP_MAX_CONNS];
};

int http_parse_request(const char *req, size_t len, char *out, size_t n, int *head)
{
	const char *eol = memchr(req, '\n', len);
	if (!eol)
		return 400;
	size_t l = (size_t)(eol - req);
	if (l && req[l - 1] == '\r')
		l--;
	char line[HTTP_MAX_REQUEST + 1];
	memcpy(line, req, l);
	line[l] = '\0';
	char *sp1 = strchr(line, ' ');
	char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return 400;
	*sp1 = *sp2 = '\0';
	*head = !strcmp(line, "HEAD");
	if (strcmp(line, "GET") && !*head)
		return 405;
	char *path = sp1 + 1;
	if (path[0] != '/')
		return 400;
	path[strcspn(path, "?#")] = '\0';
	if (strlen(path) >= n)
		return 404;
	strcpy(out, path);
	return 0;
}

static void http__close(struct http__conn *c)
{
	c->h->conns[c->slot] = NULL;
	loop_del_fd(c->h->loop, c->fd);
	close(c->fd);
	loop_timer_free(c->timer);
	free(c->out);
	free(c);
}

static const char *http__reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Request Entity Too Large";
	default:
		return "Error";
	}
}

static void http__respond(struct http__conn *c, int status, int head)
{
	char path[256];
	char *body = NULL;
	size_t blen = 0;
	const char *type = "text/plain; charset=utf-8";
	if (status == 0) {
		int h = 0;
		status = http_parse_request(c->buf, c->len, path, sizeof(path), &h);
		head = h;
		if (status == 0)
			status = c->h->handler(c->h->data, path, &body, &blen, &type);
	}
	if (!body) {
		body = xasprintf("%s\n", http__reason(status));
		blen = strlen(body);
	}
	cleanup_free char *hdr =
	    xasprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		      "Connection: close\r\n\r\n",
		      status, http__reason(status), type, blen);
	size_t hl = strlen(hdr);
	c->outlen = hl + (head ? 0 : blen);
	c->out = xmalloc(c->outlen);
	memcpy(c->out, hdr, hl);
	if (!head)
		memcpy(c->out + hl, body, blen);
	free(body);
	loop_mod_fd(c->h->loop, c->fd, LOOP_WRITE, NULL);
}

static void http__on_conn(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct http__conn *c = data;
	if (c->draining) {
		/* closing with unread input would reset the connection and
		 * could lose the answer: read until the client is done */
		char sink[4096];
		ssize_t n = read(fd, sink, sizeof(sink));
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			http__close(c);
		return;
	}
	if (c->out) {
		while (c->outoff < c->outlen) {
			ssize_t n = write(fd, c->out + c->outoff, c->outlen - c->outoff);
			if (n < 0 && errno == EAGAIN)
				return;
			if (n <= 0)
				break;
			c->outoff += (size_t)n;
		}
		if (c->outoff == c->outlen && c->len == HTTP_MAX_REQUEST) {
			shutdown(fd, SHUT_WR);
			c->draining = true;
			loop_mod_fd(c->h->loop, fd, LOOP_READ, NULL);
			return;
		}
		http__close(c);
		return;
	}
	ssize_t n = read(fd, c->buf + c->len, HTTP_MAX_REQUEST - c->len);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		http__close(c);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (strstr(c->buf, "\r\n\r\n") || strstr(c->buf, "\n\n"))
		http__respond(c, 0, 0);
	else if (c->len == HTTP_MAX_REQUEST)
		http__respond(c, 413, 0);
}

static void http__on_timeout(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	http__close(data);
}

static void http__on_accept(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	struct http_server *h = data;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		int slot = 0;
		while (slot < HTTP_MAX_CONNS && h->conns[slot])
			slot++;
		if (slot == HTTP_MAX_CONNS) {
			close(cfd);
			continue;
		}
		struct http__conn *c = xcalloc(1, sizeof(*c));
		c->h = h;
		c->fd = cfd;
		c->slot = slot;
		if (loop_add_fd(loop, cfd, LOOP_READ, http__on_conn, c, NULL) < 0) {
			close(cfd);
			free(c);
			continue;
		}
		c->timer = loop_timer_new(loop, http__on_timeout, c);
		loop_timer_start(c->timer, HTTP_TIMEOUT_MS, 0);
		h->conns[slot] = c;
	}
}

struct http_server *http_new(struct loop *loop, const char *addr, int port, http_handler_fn handler,
			     void *data, struct error **err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char spec[160];
	snprintf(spec, sizeof(spec), strchr(addr, ':') ? "[%s]:%d" : "%s:%d", addr, port);
	if (forward_parse_addr(spec, &ss, &len, err) < 0)
		return NULL;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, errno, "socket: %s", strerror(errno)), NULL;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, e, "http %s: %s", spec, strerror(e)), NULL;
	}
	struct http_server *h = xcalloc(1, sizeof(*h));
	h->loop = loop;
	h->fd = fd;
	h->handler = handler;
	h->data = data;
	if (loop_add_fd(loop, fd, LOOP_READ, http__on_accept, h, err) < 0) {
		close(fd);
		free(h);
		return NULL;
	}
	return h;
}

void http_free(struct http_server *h)
{
	if (!h)
		return;
	for (int i = 0; i < HTTP_MAX_CONNS; i++)
		if (h->conns[i])
			http__close(h->conns[i]);
	loop_del_fd(h->loop, h->fd);
	close(h->fd);
	free(h);
}
