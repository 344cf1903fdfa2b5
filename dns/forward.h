/* forward.h: queries for names outside the zone, sent to upstream resolvers.
 *
 * Upstreams come from the config ("addr[:port], ..."; IPv4, or [IPv6]:port).
 * Each has its own connected UDP socket, so only it can answer; an answer
 * must carry the id we chose (random, unused) and the question we asked,
 * or it is dropped. Queries go round-robin; one without an answer in time
 * is tried once on the next upstream, then reported as failed (the server
 * answers SERVFAIL). */
#ifndef CORRAL_DNS_FORWARD_H
#define CORRAL_DNS_FORWARD_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "error.h"
#include "loop.h"

#define FORWARD_MAX_QUERY 4096 /* longer queries are not forwarded */

/* Who asked, to answer them when the upstream does. */
struct forward_client {
	bool tcp;
	uint64_t conn;		      /* TCP: the connection's id */
	struct sockaddr_storage addr; /* UDP: the client's address */
	socklen_t addrlen;
	bool has_local; /* UDP: local, the address the query was sent to */
	struct in_addr local;
	uint64_t start_ns; /* when the query came */
};

/* reply NULL: no upstream answered (query, qlen: the client's query). The
 * reply carries the client's id. */
typedef void (*forward_done_fn)(void *data, const struct forward_client *c, const uint8_t *query,
				size_t qlen, const uint8_t *reply, size_t len);

struct forwarder;

/* upstreams: "" or NULL for none. */
struct forwarder *forwarder_new(struct loop *loop, const char *upstreams, uint64_t timeout_ms,
				forward_done_fn done, void *data, struct error **err);
void forwarder_free(struct forwarder *f);
bool forwarder_enabled(const struct forwarder *f);
/* Sends the query (copied); -1 if it cannot be sent at all (too long,
 * too many in flight), then the caller answers SERVFAIL itself. */
int forwarder_send(struct forwarder *f, const uint8_t *query, size_t len,
		   const struct forward_client *c);
/* Parses one "addr[:port]" (port 53 by default). */
int forward_parse_addr(const char *text, struct sockaddr_storage *ss, socklen_t *len,
		       struct error **err);

#endif
