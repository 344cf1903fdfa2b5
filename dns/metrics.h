/* metrics.h: what corral-dns counts, in Prometheus' text format.
 *
 * Counters of queries by type and by rcode and transport, of forwarded
 * queries and upstream failures, a histogram of the time from a query's
 * arrival to its answer's departure, and gauges of the zone's size. Each
 * thread that answers has its own struct metrics, which it alone writes
 * (with relaxed atomic stores: another thread sums them, metrics_add()). */
#ifndef CORRAL_DNS_METRICS_H
#define CORRAL_DNS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone.h"

#define METRICS_BUCKETS 14

struct metrics {
	uint64_t by_type[8];  /* A, AAAA, SRV, PTR, SOA, NS, ANY, other */
	uint64_t by_rcode[7]; /* NOERROR .. REFUSED, BADVERS */
	uint64_t by_proto[2]; /* udp, tcp */
	uint64_t truncated;
	uint64_t forwarded;		       /* sent upstream */
	uint64_t forward_failed;	       /* no answer in time, or a send error */
	uint64_t dropped;		       /* not answered: too short, responses */
	uint64_t buckets[METRICS_BUCKETS + 1]; /* the last is +Inf */
	uint64_t latency_ns;		       /* their sum */
	uint64_t latency_count;
	uint64_t zone_updates; /* services re-indexed */
};

/* One more, written so that metrics_add() may read it from elsewhere. */
static inline void metrics_bump(uint64_t *counter)
{
	__atomic_store_n(counter, *counter + 1, __ATOMIC_RELAXED);
}

void metrics_query(struct metrics *m, bool tcp, uint16_t qtype, unsigned rcode, bool truncated);
void metrics_latency(struct metrics *m, uint64_t ns);
/* Adds the counters of m (another thread's) to sum's. */
void metrics_add(struct metrics *sum, const struct metrics *m);
/* The exposition text, malloc'd. */
char *metrics_render(const struct metrics *m, const struct zone *z, size_t *len);

#endif
