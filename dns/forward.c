/* forward.c: relaying queries outside the zone to upstreams (forward.h). */
#include "forward.h"
#include "log.h"
#include "util.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define FORWARD__MAX_INFLIGHT  4096
#define FORWARD__MAX_UPSTREAMS 8
#define FORWARD__TICK_MS       50 /* how late a timeout may be noticed */

struct forward__pending {
	struct forward__pending *prev, *next; /* by deadline */
	uint16_t our_id, client_id;
	int upstream;
	bool retried;
	uint64_t deadline_ms;
	struct forward_client client;
	size_t len;
	uint8_t query[]; /* as the client sent it */
};

struct forward__upstream {
	int fd;
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

struct forwarder {
	struct loop *loop;
	struct forward__upstream up[FORWARD__MAX_UPSTREAMS];
	int nup;
	int next; /* round-robin */
	uint64_t timeout_ms;
	forward_done_fn done;
	void *data;
	struct forward__pending *by_id[65536];
	struct forward__pending *head, *tail; /* oldest first */
	size_t inflight;
	struct loop_timer *timer;
};

int forward_parse_addr(const char *text, struct sockaddr_storage *ss, socklen_t *len,
		       struct error **err)
{
	char host[128];
	unsigned long port = 53;
	const char *p = text;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, " \t");
	if (n == 0 || n >= sizeof(host))
		return error_set(err, EINVAL, "upstream \"%s\": not an address", text);
	memcpy(host, p, n);
	host[n] = '\0';
	char *addr = host, *colon = NULL;
	if (host[0] == '[') {
		char *close = strchr(host, ']');
		if (!close)
			return error_set(err, EINVAL, "upstream \"%s\": no ']'", text);
		*close = '\0';
		addr = host + 1;
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon)
			return error_set(err, EINVAL, "upstream \"%s\": junk after ']'", text);
	} else if ((colon = strchr(host, ':'))) {
		if (strchr(colon + 1, ':'))
			return error_set(err, EINVAL, "upstream \"%s\": IPv6 needs [addr]:port",
					 text);
	}
	if (colon) {
		*colon = '\0';
		char *end;
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (errno || *end || port < 1 || port > 65535)
			return error_set(err, EINVAL, "upstream \"%s\": bad port", text);
	}
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
	} else {
		return error_set(err, EINVAL, "upstream \"%s\": not an IP address", text);
	}
	return 0;
}

static void forward__unlink(struct forwarder *f, struct forward__pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		f->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		f->tail = p->prev;
	f->by_id[p->our_id] = NULL;
	f->inflight--;
}

static void forward__append(struct forwarder *f, struct forward__pending *p)
{
	p->next = NULL;
	p->prev = f->tail;
	if (f->tail)
		f->tail->next = p;
	else
		f->head = p;
	f->tail = p;
	f->by_id[p->our_id] = p;
	f->inflight++;
	/* the timer runs only while queries are in flight */
	if (!loop_timer_armed(f->timer))
		loop_timer_start(f->timer, FORWARD__TICK_MS, FORWARD__TICK_MS);
}

static uint16_t forward__free_id(const struct forwarder *f)
{
	for (;;) {
		uint16_t id;
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint16_t)rand();
		if (!f->by_id[id])
			return id;
	}
}

/* Sends p to upstream i with a fresh id; -1 on a send error. */
static int forward__transmit(struct forwarder *f, struct forward__pending *p, int i)
{
	uint8_t buf[FORWARD_MAX_QUERY];
	memcpy(buf, p->query, p->len);
	p->our_id = forward__free_id(f);
	p->upstream = i;
	buf[0] = (uint8_t)(p->our_id >> 8);
	buf[1] = (uint8_t)p->our_id;
	if (send(f->up[i].fd, buf, p->len, MSG_DONTWAIT) < 0)
		return -1;
	p->deadline_ms = loop_now_ms() + f->timeout_ms;
	forward__append(f, p);
	return 0;
}

static void forward__fail(struct forwarder *f, struct forward__pending *p)
{
	f->done(f->data, &p->client, p->query, p->len, NULL, 0);
	free(p);
}

static void forward__on_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct forwarder *f = data;
	uint64_t now = loop_now_ms();
	while (f->head && f->head->deadline_ms <= now) {
		struct forward__pending *p = f->head;
		forward__unlink(f, p);
		if (!p->retried && f->nup > 1) {
			p->retried = true;
			if (forward__transmit(f, p, (p->upstream + 1) % f->nup) == 0)
				continue;
		}
		forward__fail(f, p);
	}
	if (!f->head)
		loop_timer_stop(f->timer);
}

/* The question of a reply must be the one we asked. */
static bool forward__same_question(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	uint8_t na[DNS_MAX_NAME], nb[DNS_MAX_NAME];
	size_t oa = DNS_HEADER_LEN, ob = DNS_HEADER_LEN;
	if (alen < DNS_HEADER_LEN || blen < DNS_HEADER_LEN || a[4] != 0 || a[5] != 1 || b[4] != 0 ||
	    b[5] != 1)
		return false;
	if (dns_name_read(a, alen, &oa, na) < 0 || dns_name_read(b, blen, &ob, nb) < 0 ||
	    alen - oa < 4 || blen - ob < 4)
		return false;
	return dns_name_equal(na, nb) && !memcmp(a + oa, b + ob, 4);
}

static void forward__on_reply(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct forwarder *f = data;
	int i = 0;
	while (i < f->nup && f->up[i].fd != fd)
		i++;
	uint8_t buf[DNS_MSG_MAX];
	for (int n = 0; n < 64; n++) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0)
			return;
		if ((size_t)r < DNS_HEADER_LEN || !(buf[2] & 0x80))
			continue;
		uint16_t id = (uint16_t)(buf[0] << 8 | buf[1]);
		struct forward__pending *p = f->by_id[id];
		if (!p || p->upstream != i ||
		    !forward__same_question(buf, (size_t)r, p->query, p->len))
			continue;
		forward__unlink(f, p);
		buf[0] = p->query[0];
		buf[1] = p->query[1];
		f->done(f->data, &p->client, p->query, p->len, buf, (size_t)r);
		free(p);
	}
}

struct forwarder *forwarder_new(struct loop *loop, const char *upstreams, uint64_t timeout_ms,
				forward_done_fn done, void *data, struct error **err)
{
	struct forwarder *f = xcalloc(1, sizeof(*f));
	f->loop = loop;
	f->timeout_ms = timeout_ms ? timeout_ms : 2000;
	f->done = done;
	f->data = data;
	for (int i = 0; i < FORWARD__MAX_UPSTREAMS; i++)
		f->up[i].fd = -1;
	cleanup_free char *list = xstrdup(upstreams ? upstreams : "");
	char *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strspn(tok, " \t") == strlen(tok))
			continue;
		if (f->nup == FORWARD__MAX_UPSTREAMS) {
			error_set(err, EINVAL, "upstream: at most %d", FORWARD__MAX_UPSTREAMS);
			goto fail;
		}
		struct forward__upstream *u = &f->up[f->nup];
		if (forward_parse_addr(tok, &u->addr, &u->addrlen, err) < 0)
			goto fail;
		u->fd = socket(u->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (u->fd < 0 || connect(u->fd, (struct sockaddr *)&u->addr, u->addrlen) < 0) {
			error_set(err, errno, "upstream \"%s\": %s", tok, strerror(errno));
			goto fail;
		}
		f->nup++;
		if (loop_add_fd(loop, u->fd, LOOP_READ, forward__on_reply, f, err) < 0)
			goto fail;
	}
	f->timer = loop_timer_new(loop, forward__on_timer, f);
	return f;
fail:
	forwarder_free(f);
	return NULL;
}

void forwarder_free(struct forwarder *f)
{
	if (!f)
		return;
	while (f->head) {
		struct forward__pending *p = f->head;
		forward__unlink(f, p);
		free(p);
	}
	loop_timer_free(f->timer);
	for (int i = 0; i < FORWARD__MAX_UPSTREAMS; i++)
		if (f->up[i].fd >= 0) {
			loop_del_fd(f->loop, f->up[i].fd);
			close(f->up[i].fd);
		}
	free(f);
}

bool forwarder_enabled(const struct forwarder *f)
{
	return f && f->nup > 0;
}

int forwarder_send(struct forwarder *f, const uint8_t *query, size_t len,
		   const struct forward_client *c)
{
	if (!forwarder_enabled(f) || len > FORWARD_MAX_QUERY || len < DNS_HEADER_LEN ||
	    f->inflight >= FORWARD__MAX_INFLIGHT)
		return -1;
	struct forward__pending *p = xcalloc(1, sizeof(*p) + len);
	p->client = *c;
	p->len = len;
	memcpy(p->query, query, len);
	int first = f->next;
	f->next = (f->next + 1) % f->nup;
	if (forward__transmit(f, p, first) < 0) {
		free(p);
		return -1;
	}
	return 0;
}
