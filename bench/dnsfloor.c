/* dnsfloor.c: the floor of bench/dns.sh's query rows. A minimal UDP DNS
 * responder that answers every query of one question with the same A
 * record (ADDR, TTL 30) behind the question as it came (its case kept),
 * and does nothing else: no zone, no lookup, no EDNS (an OPT record is
 * dropped), no metrics. Each of THREADS threads has its own socket
 * (SO_REUSEPORT) and reads and answers in batches (blocking recvmmsg with
 * MSG_WAITFORONE, one sendmmsg per batch): what any UDP DNS server on
 * this kernel pays per query, and nothing of corral-dns's own.
 *   dnsfloor PORT THREADS ADDR      (127.0.0.1:PORT; stays in front)
 * Built by bench/dns.sh: cc -O2 -pthread bench/dnsfloor.c. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define FLOOR_BATCH 32
#define FLOOR_BUF   512
#define FLOOR_RR    16 /* pointer to the question, A, IN, TTL, rdlength, address */

static uint8_t floor_rr[FLOOR_RR];
static int floor_port;

/* The length of the query's header and question, 0 if it is not one
 * query with one question (it then gets no answer). */
static size_t floor_question_end(const uint8_t *q, size_t len)
{
	if (len < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1)
		return 0;
	size_t off = 12;
	while (off < len && q[off] != 0) {
		if (q[off] > 63)
			return 0;
		off += 1 + (size_t)q[off];
	}
	off += 5; /* the root label, type, class */
	return off <= len ? off : 0;
}

static void *floor_serve(void *data)
{
	(void)data;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1, size = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)floor_port)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		perror("dnsfloor: bind");
		exit(1);
	}
	static __thread struct mmsghdr in[FLOOR_BATCH], out[FLOOR_BATCH];
	static __thread struct iovec iin[FLOOR_BATCH], iout[FLOOR_BATCH];
	static __thread struct sockaddr_in from[FLOOR_BATCH];
	static __thread uint8_t buf[FLOOR_BATCH][FLOOR_BUF + FLOOR_RR];
	for (int i = 0; i < FLOOR_BATCH; i++) {
		iin[i] = (struct iovec){.iov_base = buf[i], .iov_len = FLOOR_BUF};
		in[i].msg_hdr = (struct msghdr){.msg_iov = &iin[i], .msg_iovlen = 1};
		out[i].msg_hdr = (struct msghdr){.msg_iovlen = 1};
	}
	for (;;) {
		for (int i = 0; i < FLOOR_BATCH; i++) {
			in[i].msg_hdr.msg_name = &from[i];
			in[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		int n = recvmmsg(fd, in, FLOOR_BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		int nr = 0;
		for (int i = 0; i < n; i++) {
			uint8_t *q = buf[i];
			size_t end = floor_question_end(q, in[i].msg_len);
			if (!end || (in[i].msg_hdr.msg_flags & MSG_TRUNC))
				continue;
			q[2] = (uint8_t)(0x84 | (q[2] & 0x01)); /* QR, AA, RD as asked */
			q[3] = 0;
			q[6] = 0, q[7] = 1;		 /* one answer */
			q[8] = q[9] = q[10] = q[11] = 0; /* no authority, no OPT */
			memcpy(q + end, floor_rr, FLOOR_RR);
			iout[nr] = (struct iovec){.iov_base = q, .iov_len = end + FLOOR_RR};
			out[nr].msg_hdr.msg_iov = &iout[nr];
			out[nr].msg_hdr.msg_name = &from[i];
			out[nr].msg_hdr.msg_namelen = in[i].msg_hdr.msg_namelen;
			nr++;
		}
		for (int sent = 0; sent < nr;) {
			int r = sendmmsg(fd, out + sent, (unsigned)(nr - sent), 0);
			if (r <= 0)
				break;
			sent += r;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct in_addr addr;
	if (argc != 4 || (floor_port = atoi(argv[1])) <= 0 || atoi(argv[2]) <= 0 ||
	    inet_pton(AF_INET, argv[3], &addr) != 1) {
		fprintf(stderr, "usage: dnsfloor PORT THREADS ADDR\n");
		return 2;
	}
	const uint8_t rr[FLOOR_RR - 4] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4};
	memcpy(floor_rr, rr, sizeof(rr));
	memcpy(floor_rr + sizeof(rr), &addr, 4);
	int threads = atoi(argv[2]);
	for (int t = 1; t < threads; t++) {
		pthread_t th;
		if (pthread_create(&th, NULL, floor_serve, NULL) != 0) {
			perror("dnsfloor: pthread_create");
			return 1;
		}
	}
	floor_serve(NULL);
	return 0;
}
