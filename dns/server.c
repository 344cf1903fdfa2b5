/* server.c: the UDP and TCP DNS listeners (server.h).
 *
 * The loop's thread owns TCP, the forwarder and every change to the zone;
 * the UDP threads own their sockets, batches and counters, read the zone
 * under its read lock, one batch at a time, and hand the queries to
 * forward to the loop's thread through a queue.
 *
 * This file must never block the loop: sockets are non-blocking, a TCP
 * client that does not read its answers has them buffered up to a bound,
 * then is dropped. */
#include "server.h"
#include "answer.h"
#include "log.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define SERVER__BATCH	      32
#define SERVER__UDP_BUF	      DNS_UDP_MAX /* longer queries are dropped; answers fit */
#define SERVER__TCP_OUT_MAX   (1 << 20)	  /* answers a client has not read yet */
#define SERVER__FWD_QUEUE_MAX 4096	  /* UDP queries waiting for the forwarder */

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

/* One address's sockets: a UDP socket per thread (SO_REUSEPORT spreads
 * the clients over them), one TCP listener. */
struct server__listener {
	char addr[INET6_ADDRSTRLEN];
	int *udp; /* nworkers */
	int tcp;
};

union server__cmsg {
	char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct cmsghdr align;
};

/* A UDP query for the forwarder, from a UDP thread to the loop's. */
struct server__fwd_query {
	struct server__fwd_query *next;
	struct forward_client fc;
	size_t len;
	uint8_t query[];
};

/* One UDP thread. */
struct server__worker {
	struct server *s;
	int index; /* its socket in every listener's udp[] */
	pthread_t thread;
	bool started;
	bool dead;		/* it stopped on an error: no sockets (ls_lock) */
	atomic_bool fail;	/* server_fail_thread(): stop as on an error */
	int ep;			/* epoll: its UDP sockets and stop */
	int stop;		/* eventfd: the server stops */
	struct metrics metrics; /* its own, summed by server_metrics() */
	/* batches */
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
	/* the batch's queries, parsed before they are answered */
	struct dns_query q[SERVER__BATCH];
	enum dns_parse_result parsed[SERVER__BATCH];
	struct mmsghdr replies[SERVER__BATCH];
	struct iovec riov[SERVER__BATCH];
	uint8_t out[SERVER__BATCH][SERVER__UDP_BUF];
};

struct server {
	struct loop *loop;
	const struct zone *zone;
	struct metrics *metrics; /* the loop's thread's */
	struct forwarder *fwd;
	bool can_forward;
	const struct server_config *cfg;
	/* every address's sockets, closed at the end but for a dead thread's;
	 * ls_lock: the loop adding one, a thread dying */
	struct server__listener *ls;
	size_t nls;
	pthread_mutex_t ls_lock;
	atomic_bool failed;	     /* no UDP thread is left: the loop stops */
	struct server__conn **conns; /* tcp_max slots */
	uint64_t generation;
	struct server__worker **workers;
	int nworkers;
	/* the UDP threads' queries for the forwarder */
	pthread_mutex_t fwd_lock;
	struct server__fwd_query *fwd_head, **fwd_tail;
	size_t fwd_queued;
	int fwd_wake;		  /* eventfd, on the loop */
	uint8_t big[DNS_MSG_MAX]; /* TCP and forwarded answers */
};

static void server__worker_died(struct server__worker *w);

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
	switch (answer_query(s->zone, s->can_forward, true, q, len, s->big, &outlen, &info)) {
	case ANSWER_DROP:
		metrics_bump(&s->metrics->dropped);
		return true;
	case ANSWER_FORWARD: {
		struct forward_client fc = {.tcp = true, .conn = c->id, .start_ns = start};
		metrics_bump(&s->metrics->forwarded);
		if (forwarder_send(s->fwd, q, len, &fc) == 0) {
			c->pending++;
			return true;
		}
		metrics_bump(&s->metrics->forward_failed);
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

static void server__on_forwarded(void *data, const struct forward_client *fc, const uint8_t *query,
				 size_t qlen, const uint8_t *reply, size_t len);

/* ---- UDP -------------------------------------------------------------- */

/* m: one buffer, to or from name. */
static void server__msg(struct msghdr *m, struct iovec *iov, void *buf, size_t len,
			struct sockaddr_storage *name, socklen_t namelen)
{
	iov->iov_base = buf;
	iov->iov_len = len;
	memset(m, 0, sizeof(*m));
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	m->msg_name = name;
	m->msg_namelen = namelen;
}

/* A UDP thread's query for the forwarder: queued for the loop's thread;
 * false if the queue is full. */
static bool server__fwd_push(struct server *s, const uint8_t *q, size_t len,
			     const struct forward_client *fc)
{
	pthread_mutex_lock(&s->fwd_lock);
	bool room = s->fwd_queued < SERVER__FWD_QUEUE_MAX;
	if (room) {
		struct server__fwd_query *f = xmalloc(sizeof(*f) + len);
		f->next = NULL;
		f->fc = *fc;
		f->len = len;
		memcpy(f->query, q, len);
		*s->fwd_tail = f;
		s->fwd_tail = &f->next;
		if (s->fwd_queued++ == 0) {
			uint64_t one = 1;
			if (write(s->fwd_wake, &one, sizeof(one)) < 0) {
				/* the counter is already non-zero: the loop wakes */
			}
		}
	}
	pthread_mutex_unlock(&s->fwd_lock);
	return room;
}

static void server__on_fwd_wake(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	struct server *s = data;
	uint64_t n;
	if (read(fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing new, the queue says */
	}
	if (atomic_load(&s->failed)) {
		log_error("no UDP thread is left: stopping");
		loop_stop(loop);
		return;
	}
	pthread_mutex_lock(&s->fwd_lock);
	struct server__fwd_query *f = s->fwd_head;
	s->fwd_head = NULL;
	s->fwd_tail = &s->fwd_head;
	s->fwd_queued = 0;
	pthread_mutex_unlock(&s->fwd_lock);
	while (f) {
		struct server__fwd_query *next = f->next;
		if (forwarder_send(s->fwd, f->query, f->len, &f->fc) < 0)
			server__on_forwarded(s, &f->fc, f->query, f->len, NULL, 0);
		free(f);
		f = next;
	}
}

/* Parses a batch's queries before they are answered and, for more than
 * one, prefetches the memory each one's answer will read, a pass per step
 * (the index's slot, the node it holds, the node's ready answer): the
 * misses overlap across the batch instead of following one another; they
 * were most of an answer's time in user space (a zone of 10,000 services
 * is larger than the caches). */
static void server__parse(struct server__worker *w, int n)
{
	for (int i = 0; i < n; i++)
		w->parsed[i] = dns_parse_query(w->in[i], w->msgs[i].msg_len, &w->q[i]);
	for (int stage = 0; n > 1 && stage < 3; stage++)
		for (int i = 0; i < n; i++)
			if (w->parsed[i] == DNS_PARSE_OK)
				zone_prefetch(w->s->zone, w->q[i].lname, w->q[i].qtype, stage);
}

/* One batch: read, answer under the zone's read lock, send. Returns the
 * number of queries read. */
static int server__udp_batch(struct server__worker *w, int fd)
{
	struct server *s = w->s;
	for (int i = 0; i < SERVER__BATCH; i++) {
		server__msg(&w->msgs[i].msg_hdr, &w->iov[i], w->in[i], SERVER__UDP_BUF,
			    &w->addrs[i], sizeof(w->addrs[i]));
		w->msgs[i].msg_hdr.msg_control = w->cmsg[i].buf;
		w->msgs[i].msg_hdr.msg_controllen = sizeof(w->cmsg[i].buf);
	}
	int n = recvmmsg(fd, w->msgs, SERVER__BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0)
		return 0;
	uint64_t start = server__now_ns();
	int nr = 0;
	unsigned rcodes[SERVER__BATCH];
	uint16_t qtypes[SERVER__BATCH];
	bool tcs[SERVER__BATCH];
	zone_read_lock(s->zone);
	server__parse(w, n);
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &w->msgs[i].msg_hdr;
		size_t len = w->msgs[i].msg_len, outlen = 0;
		if (h->msg_flags & MSG_TRUNC) {
			metrics_bump(&w->metrics.dropped);
			continue;
		}
		struct answer_info info;
		enum answer_action a = answer_parsed(s->zone, s->can_forward, false, w->parsed[i],
						     &w->q[i], w->out[nr], &outlen, &info);
		if (a == ANSWER_DROP) {
			metrics_bump(&w->metrics.dropped);
			continue;
		}
		if (a == ANSWER_FORWARD) {
			/* conn: the socket the answer leaves from */
			struct forward_client fc = {
			    .tcp = false, .conn = (uint64_t)fd, .start_ns = start};
			fc.has_local = server__local_addr(h, &fc.local);
			memcpy(&fc.addr, &w->addrs[i], h->msg_namelen);
			fc.addrlen = h->msg_namelen;
			metrics_bump(&w->metrics.forwarded);
			if (server__fwd_push(s, w->in[i], len, &fc))
				continue;
			metrics_bump(&w->metrics.forward_failed);
			outlen = answer_error(w->in[i], len, false, DNS_R_SERVFAIL, w->out[nr]);
			info.rcode = DNS_R_SERVFAIL;
			if (!outlen)
				continue;
		}
		server__msg(&w->replies[nr].msg_hdr, &w->riov[nr], w->out[nr], outlen, &w->addrs[i],
			    h->msg_namelen);
		struct in_addr local;
		if (server__local_addr(h, &local))
			server__reply_from(&w->replies[nr].msg_hdr, &w->rcmsg[nr], local);
		rcodes[nr] = info.rcode;
		qtypes[nr] = info.qtype;
		tcs[nr] = info.truncated;
		nr++;
	}
	zone_read_unlock(s->zone);
	for (int sent = 0; sent < nr;) {
		int r = sendmmsg(fd, w->replies + sent, (unsigned)(nr - sent), MSG_DONTWAIT);
		if (r <= 0)
			break; /* a full socket buffer: the client asks again */
		sent += r;
	}
	uint64_t end = server__now_ns();
	for (int i = 0; i < nr; i++) {
		metrics_query(&w->metrics, false, qtypes[i], rcodes[i], tcs[i]);
		metrics_latency(&w->metrics, end - start);
	}
	return n;
}

/* A UDP thread: batches from whichever of its sockets has queries, until
 * stop is written. */
static void *server__worker_run(void *data)
{
	struct server__worker *w = data;
	for (;;) {
		struct epoll_event ev[16];
		int n = epoll_wait(w->ep, ev, (int)ARRAY_SIZE(ev), -1);
		if (n < 0 && errno != EINTR) {
			log_error("udp thread %d: epoll_wait: %s", w->index, strerror(errno));
			server__worker_died(w);
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == w->stop) {
				if (atomic_load(&w->fail)) {
					log_error("udp thread %d: made to fail", w->index);
					server__worker_died(w);
				}
				return NULL;
			}
			/* Batches while they come by the handful (at most 64,
			 * then the other sockets' turn): under load the next
			 * queries have come while these were answered, and
			 * reading them at once spares a system call (each
			 * costs, more so in a VM) over epoll_wait() first; a
			 * few queries, and the socket is likely empty. */
			for (int round = 0; round < 64; round++)
				if (server__udp_batch(w, ev[i].data.fd) < SERVER__BATCH / 8)
					break;
		}
	}
}

/* A UDP thread that cannot go on closes its sockets: SO_REUSEPORT would
 * go on giving it its share of the clients, whose queries nobody would
 * read; the other threads' sockets take them. The last one left stops
 * the daemon instead (server_failed()). */
static void server__worker_died(struct server__worker *w)
{
	struct server *s = w->s;
	int alive = 0;
	pthread_mutex_lock(&s->ls_lock);
	w->dead = true;
	for (size_t k = 0; k < s->nls; k++) {
		int *fd = &s->ls[k].udp[w->index];
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	for (int i = 0; i < s->nworkers; i++)
		alive += !s->workers[i]->dead;
	pthread_mutex_unlock(&s->ls_lock);
	if (alive > 0) {
		log_error("udp thread %d stopped: its sockets are closed, %d thread(s) answer",
			  w->index, alive);
		return;
	}
	atomic_store(&s->failed, true);
	uint64_t one = 1;
	if (write(s->fwd_wake, &one, sizeof(one)) < 0)
		abort(); /* an eventfd at 1 cannot be full */
}

bool server_failed(const struct server *s)
{
	return atomic_load(&s->failed);
}

int server_udp_threads(struct server *s)
{
	int alive = 0;
	pthread_mutex_lock(&s->ls_lock);
	for (int i = 0; i < s->nworkers; i++)
		alive += s->workers[i]->started && !s->workers[i]->dead;
	pthread_mutex_unlock(&s->ls_lock);
	return alive;
}

void server_fail_thread(struct server *s, int i)
{
	struct server__worker *w = s->workers[i];
	atomic_store(&w->fail, true);
	uint64_t one = 1;
	if (write(w->stop, &one, sizeof(one)) < 0)
		abort();
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
		metrics_bump(&s->metrics->forward_failed);
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
 * before its agent makes the bridge) binds now and receives once it is.
 * UDP sockets share their address with the other threads' (SO_REUSEPORT);
 * only a wildcard address needs to learn where each query came to
 * (IP_PKTINFO), a socket bound to one address answers from it. */
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
	if (type == SOCK_DGRAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
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
		if (ss.ss_family == AF_INET &&
		    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY))
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		int size = 4 << 20;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	}
	return fd;
}

static void server__listener_close(struct server *s, struct server__listener *l)
{
	for (int i = 0; i < s->nworkers; i++)
		if (l->udp[i] >= 0)
			close(l->udp[i]); /* leaves the thread's epoll set with it */
	free(l->udp);
	if (l->tcp >= 0) {
		loop_del_fd(s->loop, l->tcp);
		close(l->tcp);
	}
}

int server_listen(struct server *s, const char *addr, struct error **err)
{
	for (size_t i = 0; i < s->nls; i++)
		if (strcmp(s->ls[i].addr, addr) == 0)
			return 0;
	if (strlen(addr) >= sizeof(s->ls->addr))
		return error_set(err, EINVAL, "listen: \"%s\" is not an address", addr);
	struct server__listener l = {.tcp = -1};
	snprintf(l.addr, sizeof(l.addr), "%s", addr);
	l.udp = xmalloc((size_t)s->nworkers * sizeof(*l.udp));
	for (int i = 0; i < s->nworkers; i++)
		l.udp[i] = -1;
	/* A thread that died meanwhile gets no socket (server__worker_died). */
	pthread_mutex_lock(&s->ls_lock);
	for (int i = 0; i < s->nworkers; i++) {
		if (s->workers[i]->dead)
			continue;
		if ((l.udp[i] = server__socket(addr, s->cfg->port, SOCK_DGRAM, err)) < 0)
			goto fail;
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = l.udp[i]};
		if (epoll_ctl(s->workers[i]->ep, EPOLL_CTL_ADD, l.udp[i], &ev) < 0) {
			error_set(err, errno, "epoll_ctl: %s", strerror(errno));
			goto fail;
		}
	}
	int tcp = server__socket(addr, s->cfg->port, SOCK_STREAM, err);
	if (tcp < 0)
		goto fail;
	if (loop_add_fd(s->loop, tcp, LOOP_READ, server__on_accept, s, err) < 0) {
		close(tcp);
		goto fail;
	}
	l.tcp = tcp;
	s->ls = xrealloc(s->ls, (s->nls + 1) * sizeof(*s->ls));
	s->ls[s->nls++] = l;
	pthread_mutex_unlock(&s->ls_lock);
	return 1;
fail:
	pthread_mutex_unlock(&s->ls_lock);
	server__listener_close(s, &l);
	return -1;
}

static int server__worker_start(struct server *s, struct server__worker *w, struct error **err)
{
	w->s = s;
	w->stop = -1;
	if ((w->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (w->stop = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		return error_set(err, errno, "udp thread: %s", strerror(errno));
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = w->stop};
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->stop, &ev) < 0)
		return error_set(err, errno, "udp thread: epoll_ctl: %s", strerror(errno));
	/* the loop's thread takes the signals */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&w->thread, NULL, server__worker_run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return error_set(err, r, "udp thread: %s", strerror(r));
	w->started = true;
	return 0;
}

static void server__worker_stop(struct server__worker *w)
{
	if (w->started) {
		uint64_t one = 1;
		if (write(w->stop, &one, sizeof(one)) < 0)
			abort(); /* an eventfd at 1 cannot be full */
		pthread_join(w->thread, NULL);
	}
	if (w->stop >= 0)
		close(w->stop);
	if (w->ep >= 0)
		close(w->ep);
	free(w);
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
	pthread_mutex_init(&s->fwd_lock, NULL);
	pthread_mutex_init(&s->ls_lock, NULL);
	s->fwd_tail = &s->fwd_head;
	s->fwd_wake = -1;
	if (!(s->fwd = forwarder_new(loop, cfg->upstreams, cfg->forward_timeout_ms,
				     server__on_forwarded, s, err)))
		goto fail;
	s->can_forward = forwarder_enabled(s->fwd);
	if ((s->fwd_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		error_set(err, errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (loop_add_fd(loop, s->fwd_wake, LOOP_READ, server__on_fwd_wake, s, err) < 0) {
		close(s->fwd_wake);
		s->fwd_wake = -1;
		goto fail;
	}
	int n = cfg->threads > 0 ? cfg->threads : 1;
	s->workers = xcalloc((size_t)n, sizeof(*s->workers));
	for (; s->nworkers < n; s->nworkers++) {
		s->workers[s->nworkers] = xcalloc(1, sizeof(**s->workers));
		s->workers[s->nworkers]->ep = -1;
		s->workers[s->nworkers]->index = s->nworkers;
		if (server__worker_start(s, s->workers[s->nworkers], err) < 0) {
			server__worker_stop(s->workers[s->nworkers]);
			goto fail;
		}
	}
	for (char *save, *a = strtok_r(list, ", ", &save); a; a = strtok_r(NULL, ", ", &save))
		if (server_listen(s, a, err) < 0)
			goto fail;
	return s;
fail:
	server_free(s);
	return NULL;
}

void server_metrics(const struct server *s, struct metrics *sum)
{
	*sum = (struct metrics){0};
	metrics_add(sum, s->metrics);
	for (int i = 0; i < s->nworkers; i++)
		metrics_add(sum, &s->workers[i]->metrics);
}

void server_free(struct server *s)
{
	if (!s)
		return;
	/* the threads first: they use the sockets and the queue */
	for (int i = 0; i < s->nworkers; i++)
		server__worker_stop(s->workers[i]);
	for (int i = 0; i < s->cfg->tcp_max; i++)
		if (s->conns[i])
			server__conn_close(s->conns[i]);
	free(s->conns);
	forwarder_free(s->fwd);
	for (size_t i = 0; i < s->nls; i++)
		server__listener_close(s, &s->ls[i]);
	free(s->ls);
	free(s->workers);
	while (s->fwd_head) {
		struct server__fwd_query *f = s->fwd_head;
		s->fwd_head = f->next;
		free(f);
	}
	if (s->fwd_wake >= 0) {
		loop_del_fd(s->loop, s->fwd_wake);
		close(s->fwd_wake);
	}
	pthread_mutex_destroy(&s->fwd_lock);
	pthread_mutex_destroy(&s->ls_lock);
	free(s);
}
