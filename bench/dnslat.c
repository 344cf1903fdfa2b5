/* dnslat.c: from an Endpoints file's close to corral-dns answering with the
 * address it names.
 *
 *   dnslat FILE NAME PORT N
 *
 * N times: writes FILE (an Endpoints object whose one ready address is
 * 10.244.200.k), takes the time when close() returns, then asks NAME (A)
 * of 127.0.0.1:PORT over UDP, again and again, until the answer holds
 * 10.244.200.k. Prints one line: n=, median_ms=, p90_ms=, max_ms=.
 * Built by bench/dns.sh: cc -O2 -Idns -Ilib bench/dnslat.c dns/wire.c. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "answerhas.h"
#include "benchlib.h"
#include "wire.h"

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: dnslat FILE NAME PORT N\n");
		return 2;
	}
	const char *file = argv[1];
	int n = atoi(argv[4]);
	uint8_t qname[DNS_MAX_NAME], q[512], r[4096];
	if (dns_name_from_text(argv[2], qname) < 0 || n < 1)
		return 2;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3]))};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 1;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	double *lat = calloc((size_t)n, sizeof(double));
	int done = 0;
	for (int k = 0; k < n; k++) {
		char text[512], ip[32];
		snprintf(ip, sizeof(ip), "10.244.200.%d", k % 250 + 1);
		int len = snprintf(text, sizeof(text),
				   "apiVersion: v1\nkind: Endpoints\nmetadata: {name: lat}\n"
				   "subsets:\n- addresses: [{ip: %s}]\n  ports: [{port: 80}]\n",
				   ip);
		uint32_t want;
		inet_pton(AF_INET, ip, &want);
		int wfd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (wfd < 0 || write(wfd, text, (size_t)len) != len) {
			perror(file);
			return 1;
		}
		if (close(wfd) < 0) {
			perror("close");
			return 1;
		}
		double t0 = now_ms(), t1 = 0;
		for (int tries = 0; tries < 100000 && !t1; tries++) {
			struct dns_builder b;
			dns_build_init(&b, q, sizeof(q), (uint16_t)tries, DNS_F_RD);
			dns_build_question(&b, qname, DNS_T_A, DNS_C_IN);
			size_t ql = dns_build_finish(&b);
			if (send(fd, q, ql, 0) < 0)
				continue;
			ssize_t rl = recv(fd, r, sizeof(r), 0);
			if (rl > 0 && answer_has(r, (size_t)rl, want))
				t1 = now_ms();
			if (now_ms() - t0 > 5000)
				break;
		}
		if (t1)
			lat[done++] = t1 - t0;
		usleep(20000);
	}
	if (!done) {
		printf("n=0\n");
		return 1;
	}
	qsort(lat, (size_t)done, sizeof(double), cmp_double);
	printf("n=%d median_ms=%.3f p90_ms=%.3f max_ms=%.3f\n", done, lat[done / 2],
	       lat[(done * 9) / 10 < done ? (done * 9) / 10 : done - 1], lat[done - 1]);
	return done == n ? 0 : 1;
}
