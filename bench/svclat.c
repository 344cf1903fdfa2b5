/* svclat.c: from a pod's status change to the service's endpoints, the DNS
 * answer and the proxy's rules all showing it (issue 6's second target).
 *
 *   svclat PODFILE EPFILE NAME PORT TABLE N
 *
 * N times: writes PODFILE (a pod of a node no agent runs, Ready, whose
 * podIP is 10.244.250.k), takes the time when close() returns, then polls
 * until EPFILE names the address, corral-dns (127.0.0.1:PORT) answers NAME
 * (a headless service of the pod) with it, and `nft list table ip TABLE`
 * holds it (polled only once the first two hold: an nft run costs more
 * than they do). Prints the median and p90 of each, in ms from the close().
 * Built by bench/svclat.sh: cc -O2 -Idns -Ilib bench/svclat.c dns/wire.c. */
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

static int file_has(const char *path, const char *needle)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static int nft_has(const char *table, const char *needle)
{
	char cmd[256], line[4096];
	snprintf(cmd, sizeof(cmd), "nft list table ip %s 2>/dev/null", table);
	FILE *f = popen(cmd, "r");
	if (!f)
		return 0;
	int found = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			found = 1;
	pclose(f);
	return found;
}

static int dns_has(int fd, const uint8_t *qname, uint32_t want)
{
	uint8_t q[512], p[4096];
	struct dns_builder b;
	dns_build_init(&b, q, sizeof(q), (uint16_t)rand(), DNS_F_RD);
	dns_build_question(&b, qname, DNS_T_A, DNS_C_IN);
	size_t ql = dns_build_finish(&b);
	if (send(fd, q, ql, 0) < 0)
		return 0;
	ssize_t rl = recv(fd, p, sizeof(p), 0);
	return rl > 0 && answer_has(p, (size_t)rl, want);
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("%s_median_ms=%.1f %s_p90_ms=%.1f ", what, v[n / 2], what,
	       v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1]);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: svclat PODFILE EPFILE NAME PORT TABLE N\n");
		return 2;
	}
	const char *podfile = argv[1], *epfile = argv[2], *table = argv[5];
	int n = atoi(argv[6]);
	uint8_t qname[DNS_MAX_NAME];
	if (dns_name_from_text(argv[3], qname) < 0 || n < 1)
		return 2;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[4]))};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 1;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	double *ep = calloc((size_t)n, sizeof(double)), *dns = calloc((size_t)n, sizeof(double));
	double *nft = calloc((size_t)n, sizeof(double)), *all = calloc((size_t)n, sizeof(double));
	for (int k = 0; k < n; k++) {
		char text[1024], ip[32], needle[64];
		snprintf(ip, sizeof(ip), "10.244.250.%d", k % 200 + 2);
		snprintf(needle, sizeof(needle), "ip: %s", ip);
		int len = snprintf(
		    text, sizeof(text),
		    "apiVersion: v1\nkind: Pod\nmetadata: {name: lat, labels: {app: lat}}\n"
		    "spec:\n  nodeName: ghost\n  containers: [{name: c, image: busybox}]\n"
		    "status:\n  phase: Running\n  podIP: %s\n"
		    "  conditions: [{type: Ready, status: 'True'}]\n",
		    ip);
		uint32_t want;
		inet_pton(AF_INET, ip, &want);
		int wfd = open(podfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (wfd < 0 || write(wfd, text, (size_t)len) != len || close(wfd) < 0) {
			perror(podfile);
			return 1;
		}
		double t0 = now_ms();
		ep[k] = dns[k] = nft[k] = 0;
		while (!ep[k] || !dns[k] || !nft[k]) {
			if (!ep[k] && file_has(epfile, needle))
				ep[k] = now_ms() - t0;
			if (!dns[k] && dns_has(fd, qname, want))
				dns[k] = now_ms() - t0;
			/* one nft run costs ~15 ms: only once the cheap checks
			 * are through, so that they are not slowed down by it */
			if (ep[k] && dns[k] && !nft[k] && nft_has(table, ip))
				nft[k] = now_ms() - t0;
			if (now_ms() - t0 > 10000) {
				fprintf(stderr,
					"svclat: change %d not seen everywhere in 10 s "
					"(endpoints %s, dns %s, rules %s)\n",
					k, ep[k] ? "yes" : "no", dns[k] ? "yes" : "no",
					nft[k] ? "yes" : "no");
				return 1;
			}
		}
		all[k] = dns[k] > nft[k] ? dns[k] : nft[k];
		usleep(50000);
	}
	report("endpoints", ep, n);
	report("dns", dns, n);
	report("rules", nft, n);
	report("all", all, n);
	printf("\n");
	return 0;
}
