/* server.h: corral-dns's DNS sockets: UDP and TCP on each of its
 * addresses, all on one port; addresses may be added while it runs.
 *
 * UDP queries are read and answered in batches (recvmmsg, sendmmsg): one
 * wake-up serves many queries. Each of `threads` threads has its own UDP
 * socket on every address (SO_REUSEPORT: the kernel spreads the clients
 * over them) and answers from the zone under its read lock; TCP, the
 * forwarder and its answers stay on the loop's thread. TCP follows RFC 7766: length-prefixed
 * messages, several queries per connection answered in order of their
 * answers, a connection closed after an idle timeout, a bounded number of
 * connections. Names outside the zone go to the forwarder; its answers and
 * failures come back here. */
#ifndef CORRAL_DNS_SERVER_H
#define CORRAL_DNS_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "forward.h"
#include "loop.h"
#include "metrics.h"
#include "zone.h"

struct server;

struct server_config {
	const char *listen; /* IPv4 or IPv6 addresses, comma-separated (may be empty) */
	int port;
	uint64_t tcp_idle_ms;  /* close a TCP connection idle this long */
	int tcp_max;	       /* connections at once */
	int threads;	       /* UDP threads, at least 1 */
	const char *upstreams; /* forwarder's list, may be empty */
	uint64_t forward_timeout_ms;
};

/* Binds the sockets (the caller may drop privileges afterwards). zone and
 * metrics stay the caller's and must outlive the server. */
struct server *server_new(struct loop *loop, const struct server_config *cfg,
			  const struct zone *zone, struct metrics *metrics, struct error **err);
void server_free(struct server *s);
/* Whether the server can no longer answer UDP (every thread stopped on
 * an error); it has stopped the loop then. A thread that stops while
 * others run closes its sockets, so that theirs take its clients. */
bool server_failed(const struct server *s);
/* The UDP threads that run. */
int server_udp_threads(struct server *s);
/* For tests: UDP thread i stops as on an error. */
void server_fail_thread(struct server *s, int i);
/* The loop's counters and every UDP thread's, summed into sum. */
void server_metrics(const struct server *s, struct metrics *sum);
/* Listens on addr too (UDP and TCP, the same port), unless it does
 * already: 1 if it was added, 0 if it was there. An address that is not
 * the host's yet (a gateway whose bridge is not up) binds anyway. */
int server_listen(struct server *s, const char *addr, struct error **err);

#endif
