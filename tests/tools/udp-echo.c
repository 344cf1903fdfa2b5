/* udp-echo: the smallest UDP server and client, for tests of the service
 * proxy's UDP rules (busybox's nc has no UDP).
 *
 *   udp-echo serve PORT REPLY   answers every datagram on PORT with REPLY
 *   udp-echo ask ADDR PORT      sends one datagram, prints the answer;
 *                               exit 1 when none comes within a second
 *                               (or an ICMP error says no one listens) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: udp-echo serve PORT REPLY | udp-echo ask ADDR PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return usage();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udp-echo: socket");
		return 1;
	}
	struct sockaddr_in a = {.sin_family = AF_INET};
	char buf[512];
	if (strcmp(argv[1], "serve") == 0) {
		a.sin_port = htons((uint16_t)atoi(argv[2]));
		a.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("udp-echo: bind");
			return 1;
		}
		for (;;) {
			struct sockaddr_in from;
			socklen_t len = sizeof(from);
			if (recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len) < 0)
				continue;
			sendto(fd, argv[3], strlen(argv[3]), 0, (struct sockaddr *)&from, len);
		}
	}
	if (strcmp(argv[1], "ask") != 0)
		return usage();
	a.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1)
		return usage();
	struct timeval tv = {.tv_sec = 1};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* connected, so that an ICMP port unreachable ends the wait at once */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || send(fd, "?", 1, 0) < 0) {
		perror("udp-echo: send");
		return 1;
	}
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0) {
		perror("udp-echo: recv");
		return 1;
	}
	buf[n] = '\0';
	printf("%s\n", buf);
	return 0;
}
