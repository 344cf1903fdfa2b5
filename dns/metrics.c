/* metrics.c: counting queries and rendering them for Prometheus. */
#include "metrics.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metrics__types[] = {"A",   "AAAA", "SRV", "PTR",
					     "SOA", "NS",   "ANY", "other"};
static const char *const metrics__rcodes[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					      "NOTIMP",	 "REFUSED", "BADVERS"};
/* Upper bounds in seconds, from 25 µs to 2.5 s. */
static const double metrics__bounds[METRICS_BUCKETS] = {0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
							0.001,	  0.0025,  0.005,  0.01,    0.025,
							0.05,	  0.1,	   0.5,	   2.5};

void metrics_query(struct metrics *m, bool tcp, uint16_t qtype, unsigned rcode, bool truncated)
{
	metrics_bump(&m->by_type[dns_type_index(qtype)]);
	metrics_bump(&m->by_rcode[rcode == DNS_R_BADVERS ? 6 : rcode <= 5 ? rcode : 2]);
	metrics_bump(&m->by_proto[tcp]);
	if (truncated)
		metrics_bump(&m->truncated);
}

void metrics_latency(struct metrics *m, uint64_t ns)
{
	double s = (double)ns / 1e9;
	size_t i = 0;
	while (i < METRICS_BUCKETS && s > metrics__bounds[i])
		i++;
	metrics_bump(&m->buckets[i]);
	__atomic_store_n(&m->latency_ns, m->latency_ns + ns, __ATOMIC_RELAXED);
	metrics_bump(&m->latency_count);
}

static void metrics__add(uint64_t *sum, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sum[i] += __atomic_load_n(&v[i], __ATOMIC_RELAXED);
}

void metrics_add(struct metrics *sum, const struct metrics *m)
{
	metrics__add(sum->by_type, m->by_type, ARRAY_SIZE(m->by_type));
	metrics__add(sum->by_rcode, m->by_rcode, ARRAY_SIZE(m->by_rcode));
	metrics__add(sum->by_proto, m->by_proto, ARRAY_SIZE(m->by_proto));
	metrics__add(&sum->truncated, &m->truncated, 1);
	metrics__add(&sum->forwarded, &m->forwarded, 1);
	metrics__add(&sum->forward_failed, &m->forward_failed, 1);
	metrics__add(&sum->dropped, &m->dropped, 1);
	metrics__add(sum->buckets, m->buckets, ARRAY_SIZE(m->buckets));
	metrics__add(&sum->latency_ns, &m->latency_ns, 1);
	metrics__add(&sum->latency_count, &m->latency_count, 1);
	metrics__add(&sum->zone_updates, &m->zone_updates, 1);
}

/* An open_memstream with the lines appended. */
char *metrics_render(const struct metrics *m, const struct zone *z, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		abort();
	fprintf(f, "# HELP corral_dns_requests_total DNS queries received, by query type.\n"
		   "# TYPE corral_dns_requests_total counter\n");
	for (size_t i = 0; i < ARRAY_SIZE(metrics__types); i++)
		fprintf(f, "corral_dns_requests_total{type=\"%s\"} %llu\n", metrics__types[i],
			(unsigned long long)m->by_type[i]);
	fprintf(f, "# HELP corral_dns_responses_total DNS responses sent, by rcode.\n"
		   "# TYPE corral_dns_responses_total counter\n");
	for (size_t i = 0; i < ARRAY_SIZE(metrics__rcodes); i++)
		fprintf(f, "corral_dns_responses_total{rcode=\"%s\"} %llu\n", metrics__rcodes[i],
			(unsigned long long)m->by_rcode[i]);
	fprintf(f,
		"# HELP corral_dns_requests_proto_total DNS queries, by transport.\n"
		"# TYPE corral_dns_requests_proto_total counter\n"
		"corral_dns_requests_proto_total{proto=\"udp\"} %llu\n"
		"corral_dns_requests_proto_total{proto=\"tcp\"} %llu\n"
		"# HELP corral_dns_truncated_total Responses sent with TC set.\n"
		"# TYPE corral_dns_truncated_total counter\n"
		"corral_dns_truncated_total %llu\n"
		"# HELP corral_dns_forward_requests_total Queries sent to an upstream.\n"
		"# TYPE corral_dns_forward_requests_total counter\n"
		"corral_dns_forward_requests_total %llu\n"
		"# HELP corral_dns_forward_failures_total Forwarded queries without an answer.\n"
		"# TYPE corral_dns_forward_failures_total counter\n"
		"corral_dns_forward_failures_total %llu\n"
		"# HELP corral_dns_dropped_total Packets not answered (short, or responses).\n"
		"# TYPE corral_dns_dropped_total counter\n"
		"corral_dns_dropped_total %llu\n",
		(unsigned long long)m->by_proto[0], (unsigned long long)m->by_proto[1],
		(unsigned long long)m->truncated, (unsigned long long)m->forwarded,
		(unsigned long long)m->forward_failed, (unsigned long long)m->dropped);
	fprintf(f, "# HELP corral_dns_request_duration_seconds Time from a query's arrival to its "
		   "answer's departure.\n"
		   "# TYPE corral_dns_request_duration_seconds histogram\n");
	uint64_t cum = 0;
	for (size_t i = 0; i < METRICS_BUCKETS; i++) {
		cum += m->buckets[i];
		fprintf(f, "corral_dns_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
			metrics__bounds[i], (unsigned long long)cum);
	}
	cum += m->buckets[METRICS_BUCKETS];
	fprintf(f,
		"corral_dns_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
		"corral_dns_request_duration_seconds_sum %.9f\n"
		"corral_dns_request_duration_seconds_count %llu\n",
		(unsigned long long)cum, (double)m->latency_ns / 1e9,
		(unsigned long long)m->latency_count);
	fprintf(f,
		"# HELP corral_dns_zone_services Services in the zone.\n"
		"# TYPE corral_dns_zone_services gauge\n"
		"corral_dns_zone_services %zu\n"
		"# HELP corral_dns_zone_records Records in the zone.\n"
		"# TYPE corral_dns_zone_records gauge\n"
		"corral_dns_zone_records %zu\n"
		"# HELP corral_dns_zone_updates_total Services re-indexed after a change.\n"
		"# TYPE corral_dns_zone_updates_total counter\n"
		"corral_dns_zone_updates_total %llu\n",
		zone_service_count(z), zone_record_count(z), (unsigned long long)m->zone_updates);
	fclose(f);
	*len = n;
	return buf;
}
