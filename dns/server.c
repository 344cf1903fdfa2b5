/* server.c: the UDP and TCP DNS listeners (server.h).
 *
 * This file must never block: sockets are non-blocking, a TCP client that
 * does not read its answers has them buffered up to a bound, then is
 * dropped. */
#include "server.h"
#include "answer.h"
#include "log.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SERVER__BATCH	    32
#define SERVER__UDP_BUF	    DNS_UDP_MAX /* longer queries are dropped; answers fit */
#define SERVER__TCP_OUT_MAX (1 << 20)	/* answers a client has not read yet */

struct server__conn {
	struct server *s;
	int fd;
	uint64_t id; /* slot | generation << 16: forwarded answers find it */
	uint8_t *in;
	size_t inlen;
	uint8_t *out;
	size_t outlen, outcap;
	unsigned pending; /* forwarded queries not answered yet */
	struct loop_timer *idle;
	bool want_write;
};

/* One address's sockets. */
struct server__listener {
	char addr[INET6_ADDRSTRLEN];
	int udp, tcp;
};

union server__cmsg {
	char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct cmsghdr align;
};

struct server {
	struct loop *loop;
	const struct zone *zone;
	struct metrics *metrics;
	struct forwarder *fwd;
	const struct server_config *cfg;
	struct server__listener *ls; /* every address's sockets, never closed before the end */
	size_t nls;
	struct server__conn **conns; /* tcp_max slots */
	uint64_t generation;
	/* UDP batches */
	struct mmsghdr msgs[SERVER__BATCH];
	struct iovec iov[SERVER__BATCH];
	struct sockaddr_storage addrs[SERVER__BATCH];
	uint8_t in[SERVER__BATCH][SERVER__UDP_BUF];
	/* the address each query was sent to (IP_PKTINFO), so that the answer
	 * leaves from it: on a machine with several addresses (every node's
	 * gateway) a reply from another one would not match the DNAT that
	 * brought the query, and the client would drop it */
	union server__cmsg cmsg[SERVER__BATCH];
	union server__cmsg rcmsg[SERVER__BATCH];
	struct mmsghdr replies[SERVER__BATCH];
	struct iovec riov[SERVER__BATCH];
	uint8_t out[SERVER__BATCH][SERVER__UDP_BUF];
	uint8_t big[DNS_MSG_MAX]; /* TCP answers */
};

/* The address a query was sent to, from its IP_PKTINFO. */
static bool server__local_addr(struct msghdr *h, struct in_addr *out)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			*out = pi.ipi_addr;
			return true;
		}
	}
	return false;
}

/* Makes m leave from local. */
static void server__reply_from(struct msghdr *m, union server__cmsg *cm, struct in_addr local)
{
	memset(cm, 0, sizeof(*cm));
	m->msg_control = cm->buf;
	m->msg_controllen = sizeof(cm->buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(m);
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = IP_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
	struct in_pktinfo pi = {.ipi_spec_dst = local};
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
}

static uint64_t server__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- TCP connections -------------------------------------------------- */

static void server__conn_close(struct server__conn *c)
{
	struct server *s = c->s;
	s->conns[c->id & 0xffff] = NULL;
	loop_del_fd(s->loop, c->fd);
	close(c->fd);
	loop_timer_free(c->idle);
	free(c->in);
	free(c->out);
	free(c);
}

static void server__conn_flush(struct server__conn *c)
{
	while (c->outlen) {
		ssize_t n = write(c->fd, c->out, c->outlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			server__conn_close(c);
			return;
		}
		memmove(c->out, c->out + n, c->outlen - (size_t)n);
		c->outlen -= (size_t)n;
	}
	bool want = c->outlen > 0;
	if (want != c->want_write) {
		c->want_write = want;
		loop_mod_fd(c->s->loop, c->fd, LOOP_READ | (want ? LOOP_WRITE : 0), NULL);
	}
}

/* Queues one message with its length in front; false if the client is
 * too far behind (the connection is then closed). */
static bool server__conn_queue(struct server__conn *c, const uint8_t *msg, size_t len)
{
	if (c->outlen + len + 2 > SERVER__TCP_OUT_MAX) {
		server__conn_close(c);
		return false;
	}
	if (c->outlen + len + 2 > c->outcap) {
		c->outcap = (c->outlen + len + 2) * 2;
		c->out = xrealloc(c->out, c->outcap);
	}
	c->out[c->outlen] = (uint8_t)(len >> 8);
	c->out[c->outlen + 1] = (uint8_t)len;
	memcpy(c->out + c->outlen + 2, msg, len);
	c->outlen += len + 2;
	return true;
}

static bool server__handle_tcp_query(struct server__conn *c, const uint8_t *q, size_t len)
{
	struct server *s = c->s;
	uint64_t start = server__now_ns();
	size_t outlen = 0;
	struct answer_info info;
	switch (answer_query(s->zone, forwarder_enabled(s->fwd), true, q, len, s->big, &outlen,
			     &info)) {
	case ANSWER_DROP:
		s->metrics->dropped++;
		return true;
	case ANSWER_FORWARD: {
		struct forward_client fc = {.tcp = true, .conn = c->id, .start_ns = start};
		s->metrics->forwarded++;
		if (forwarder_send(s->fwd, q, len, &fc) == 0) {
			c->pending++;
			return true;
		}
		s->metrics->forward_failed++;
		outlen = answer_error(q, len, true, DNS_R_SERVFAIL, s->big);
		info.rcode = DNS_R_SERVFAIL;
		break;
	}
	case ANSWER_REPLY:
		break;
	}
	metrics_query(s->metrics, true, info.qtype, info.rcode, info.truncated);
	metrics_latency(s->metrics, server__now_ns() - start);
	return server__conn_queue(c, s->big, outlen);
}

static void server__on_conn(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)fd;
	struct server__conn *c = data;
	if (events & LOOP_WRITE) {
		uint64_t id = c->id;
		struct server *s = c->s;
		server__conn_flush(c);
		if (s->conns[id & 0xffff] != c)
			return;
	}
	if (!(events & LOOP_READ))
		return;
	for (;;) {
		ssize_t n = read(c->fd, c->in + c->inlen, 2 + DNS_MSG_MAX - c->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			server__conn_close(c);
			return;
		}
		c->inlen += (size_t)n;
		loop_timer_start(c->idle, c->s->cfg->tcp_idle_ms, 0);
		size_t off = 0;
		while (c->inlen - off >= 2) {
			size_t len = (size_t)c->in[off] << 8 | c->in[off + 1];
			if (c->inlen - off - 2 < len)
				break;
			if (!server__handle_tcp_query(c, c->in + off + 2, len))
				return; /* closed */
			off += 2 + len;
		}
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
	server__conn_flush(c);
}

static void server__on_idle(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct server__conn *c = data;
	if (c->pending || c->outlen) { /* still owes or sends answers */
		loop_timer_start(c->idle, c->s->cfg->tcp_idle_ms, 0);
		return;
	}
	server__conn_close(c);
}

static void server__on_accept(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	struct server *s = data;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		int slot = 0;
		while (slot < s->cfg->tcp_max && s->conns[slot])
			slot++;
		if (slot == s->cfg->tcp_max) {
			close(cfd); /* full: RFC 7766 lets a server refuse */
			continue;
		}
		int one = 1;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct server__conn *c = xcalloc(1, sizeof(*c));
		c->s = s;
		c->fd = cfd;
		c->id = (uint64_t)slot | ++s->generation << 16;
		c->in = xmalloc(2 + DNS_MSG_MAX);
		c->idle = loop_timer_new(loop, server__on_idle, c);
		if (loop_add_fd(loop, cfd, LOOP_READ, server__on_conn, c, NULL) < 0) {
			loop_timer_free(c->idle);
			free(c->in);
			free(c);
			close(cfd);
			continue;
		}
		s->conns[slot] = c;
		loop_timer_start(c->idle, s->cfg->tcp_idle_ms, 0);
	}
}

/* ---- UDP -------------------------------------------------------------- */

static void server__on_udp(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct server *s = data;
	bool fwd = forwarder_enabled(s->fwd);
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < SERVER__BATCH; i++) {
			s->iov[i].iov_base = s->in[i];
			s->iov[i].iov_len = SERVER__UDP_BUF;
			memset(&s->msgs[i].msg_hdr, 0, sizeof(s->msgs[i].msg_hdr));
			s->msgs[i].msg_hdr.msg_iov = &s->iov[i];
			s->msgs[i].msg_hdr.msg_iovlen = 1;
			s->msgs[i].msg_hdr.msg_name = &s->addrs[i];
			s->msgs[i].msg_hdr.msg_namelen = sizeof(s->addrs[i]);
			s->msgs[i].msg_hdr.msg_control = s->cmsg[i].buf;
			s->msgs[i].msg_hdr.msg_controllen = sizeof(s->cmsg[i].buf);
		}
		int n = recvmmsg(fd, s->msgs, SERVER__BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		uint64_t start = server__now_ns();
		int nr = 0;
		unsigned rcodes[SERVER__BATCH];
		uint16_t qtypes[SERVER__BATCH];
		bool tcs[SERVER__BATCH];
		for (int i = 0; i < n; i++) {
			struct msghdr *h = &s->msgs[i].msg_hdr;
			size_t len = s->msgs[i].msg_len, outlen = 0;
			if (h->msg_flags & MSG_TRUNC) {
				s->metrics->dropped++;
				continue;
			}
			struct answer_info info;
			enum answer_action a = answer_query(s->zone, fwd, false, s->in[i], len,
							    s->out[nr], &outlen, &info);
			if (a == ANSWER_DROP) {
				s->metrics->dropped++;
				continue;
			}
			if (a == ANSWER_FORWARD) {
				/* conn: the socket the answer leaves from */
				struct forward_client fc = {
				    .tcp = false, .conn = (uint64_t)fd, .start_ns = start};
				fc.has_local = server__local_addr(h, &fc.local);
				memcpy(&fc.addr, &s->addrs[i], h->msg_namelen);
				fc.addrlen = h->msg_namelen;
				s->metrics->forwarded++;
				if (forwarder_send(s->fwd, s->in[i], len, &fc) == 0)
					continue;
				s->metrics->forward_failed++;
				outlen =
				    answer_error(s->in[i], len, false, DNS_R_SERVFAIL, s->out[nr]);
				info.rcode = DNS_R_SERVFAIL;
				if (!outlen)
					continue;
			}
			s->riov[nr].iov_base = s->out[nr];
			s->riov[nr].iov_len = outlen;
			memset(&s->replies[nr].msg_hdr, 0, sizeof(s->replies[nr].msg_hdr));
			s->replies[nr].msg_hdr.msg_iov = &s->riov[nr];
			s->replies[nr].msg_hdr.msg_iovlen = 1;
			s->replies[nr].msg_hdr.msg_name = &s->addrs[i];
			s->replies[nr].msg_hdr.msg_namelen = h->msg_namelen;
			struct in_addr local;
			if (server__local_addr(h, &local))
				server__reply_from(&s->replies[nr].msg_hdr, &s->rcmsg[nr], local);
			rcodes[nr] = info.rcode;
			qtypes[nr] = info.qtype;
			tcs[nr] = info.truncated;
			nr++;
		}
		for (int sent = 0; sent < nr;) {
			int r =
			    sendmmsg(fd, s->replies + sent, (unsigned)(nr - sent), MSG_DONTWAIT);
			if (r <= 0)
				break; /* a full socket buffer: the client asks again */
			sent += r;
		}
		uint64_t end = server__now_ns();
		for (int i = 0; i < nr; i++) {
			metrics_query(s->metrics, false, qtypes[i], rcodes[i], tcs[i]);
			metrics_latency(s->metrics, end - start);
		}
		if (n < SERVER__BATCH)
			return;
	}
}

/* ---- forwarded answers ------------------------------------------------ */

static void server__on_forwarded(void *data, const struct forward_client *fc, const uint8_t *query,
				 size_t qlen, const uint8_t *reply, size_t len)
{
	struct server *s = data;
	uint8_t *buf = s->big;
	unsigned rcode = DNS_R_SERVFAIL;
	uint16_t qtype = 0;
	if (reply) {
		rcode = reply[3] & 0xf;
	} else {
		s->metrics->forward_failed++;
		len = answer_error(query, qlen, fc->tcp, DNS_R_SERVFAIL, buf);
		reply = buf;
		if (!len)
			return;
	}
	struct dns_query q;
	if (dns_parse_query(query, qlen, &q) == DNS_PARSE_OK)
		qtype = q.qtype;
	metrics_query(s->metrics, fc->tcp, qtype, rcode, false);
	metrics_latency(s->metrics, server__now_ns() - fc->start_ns);
	if (!fc->tcp) {
		struct iovec iov = {.iov_base = (void *)reply, .iov_len = len};
		struct msghdr m = {
		    .msg_name = (void *)&fc->addr,
		    .msg_namelen = fc->addrlen,
		    .msg_iov = &iov,
		    .msg_iovlen = 1,
		};
		union server__cmsg cm;
		if (fc->has_local)
			server__reply_from(&m, &cm, fc->local);
		sendmsg((int)fc->conn, &m, MSG_DONTWAIT);
		return;
	}
	struct server__conn *c = s->conns[fc->conn & 0xffff];
	if (!c || c->id != fc->conn)
		return; /* the client has gone */
	c->pending--;
	if (server__conn_queue(c, reply, len))
		server__conn_flush(c);
}

/* ---- set-up ----------------------------------------------------------- */

/* IP_FREEBIND: an address of a bridge that is not up yet (a node's gateway
 * before its agent makes the bridge) binds now and receives once it is. */
static int server__socket(const char *addr, int port, int type, struct error **err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char spec[160];
	snprintf(spec, sizeof(spec), strchr(addr, ':') ? "[%s]:%d" : "%s:%d", addr, port);
	if (forward_parse_addr(spec, &ss, &len, err) < 0) {
		error_prefix(err, "listen");
		return -1;
	}
	int fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, errno, "socket: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 128) < 0)) {
		int e = errno;
		close(fd);
		return error_set(err, e, "%s %s: %s", type == SOCK_STREAM ? "tcp" : "udp", spec,
				 strerror(e));
	}
	if (type == SOCK_DGRAM) {
		if (ss.ss_family == AF_INET)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		int size = 4 << 20;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	}
	return fd;
}

static void server__close(struct server *s, int fd)
{
	if (fd < 0)
		return;
	loop_del_fd(s->loop, fd);
	close(fd);
}

int server_listen(struct server *s, const char *addr, struct error **err)
{
	for (size_t i = 0; i < s->nls; i++)
		if (strcmp(s->ls[i].addr, addr) == 0)
			return 0;
	if (strlen(addr) >= sizeof(s->ls->addr))
		return error_set(err, EINVAL, "listen: \"%s\" is not an address", addr);
	int udp = server__socket(addr, s->cfg->port, SOCK_DGRAM, err);
	if (udp < 0)
		return -1;
	int tcp = server__socket(addr, s->cfg->port, SOCK_STREAM, err);
	if (tcp < 0) {
		close(udp);
		return -1;
	}
	if (loop_add_fd(s->loop, udp, LOOP_READ, server__on_udp, s, err) < 0) {
		close(udp);
		close(tcp);
		return -1;
	}
	if (loop_add_fd(s->loop, tcp, LOOP_READ, server__on_accept, s, err) < 0) {
		server__close(s, udp);
		close(tcp);
		return -1;
	}
	s->ls = xrealloc(s->ls, (s->nls + 1) * sizeof(*s->ls));
	struct server__listener *l = &s->ls[s->nls++];
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	l->udp = udp;
	l->tcp = tcp;
	return 1;
}

struct server *server_new(struct loop *loop, const struct server_config *cfg,
			  const struct zone *zone, struct metrics *metrics, struct error **err)
{
	cleanup_free char *list = xstrdup(cfg->listen ? cfg->listen : "");
	struct server *s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->zone = zone;
	s->metrics = metrics;
	s->cfg = cfg;
	s->conns = xcalloc((size_t)cfg->tcp_max, sizeof(*s->conns));
	if (!(s->fwd = forwarder_new(loop, cfg->upstreams, cfg->forward_timeout_ms,
				     server__on_forwarded, s, err)))
		goto fail;
	for (char *save, *a = strtok_r(list, ", ", &save); a; a = strtok_r(NULL, ", ", &save))
		if (server_listen(s, a, err) < 0)
			goto fail;
	return s;
fail:
	server_free(s);
	return NULL;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->cfg->tcp_max; i++)
		if (s->conns[i])
			server__conn_close(s->conns[i]);
	free(s->conns);
	forwarder_free(s->fwd);
	for (size_t i = 0; i < s->nls; i++) {
		server__close(s, s->ls[i].udp);
		server__close(s, s->ls[i].tcp);
	}
	free(s->ls);
	free(s);
}
