/* main.c: corral-pause, the process that holds a pod's namespaces (the role
 * of Kubernetes' pause container).
 *
 *   corral-pause HOSTNAME
 *
 * Moves itself into new network, IPC and UTS namespaces, names the UTS one
 * HOSTNAME, brings its loopback up, turns IPv6 off in the network one (the
 * node's nftables table is IPv4's alone: a pod gets no IPv6, not even a
 * link-local address), writes "ready\n" to its standard output
 * and closes it (corral-noded waits for that line before it joins
 * containers to the namespaces), then sleeps until SIGTERM or SIGINT,
 * reaping whatever children it inherits. Everything else of a pod
 * (addresses, veth, routes) is set up from outside by corral-noded, through
 * /proc/PID/ns/net. The pause is the pod's last process: it dies after its
 * containers, and with it the namespaces and the pod's end of the veth. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int signo)
{
	if (signo != SIGCHLD)
		stop = 1;
}

static int loopback_up(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct ifreq ifr = {0};
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	int r = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return r;
}

/* IPv6 off in the new network namespace, where /proc/sys/net is the
 * pod's: "all" takes lo's ::1 away, "default" is what the eth0 to come
 * gets. Nothing to do on a kernel without IPv6. */
static int ipv6_off(void)
{
	static const char *const files[] = {"/proc/sys/net/ipv6/conf/all/disable_ipv6",
					    "/proc/sys/net/ipv6/conf/default/disable_ipv6"};
	if (access("/proc/sys/net/ipv6", F_OK) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = open(files[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "1", 1) != 1) {
			fprintf(stderr, "corral-pause: %s: %s\n", files[i], strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 || strlen(argv[1]) == 0 || strlen(argv[1]) > 64) {
		fprintf(stderr, "usage: corral-pause HOSTNAME\n");
		return 2;
	}
	if (unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0) {
		fprintf(stderr, "corral-pause: unshare: %s\n", strerror(errno));
		return 1;
	}
	if (sethostname(argv[1], strlen(argv[1])) < 0 || loopback_up() < 0) {
		fprintf(stderr, "corral-pause: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (ipv6_off() < 0)
		return 1;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);

	if (write(STDOUT_FILENO, "ready\n", 6) != 6)
		return 1;
	close(STDOUT_FILENO);

	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	while (!stop) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sigsuspend(&old);
	}
	return 0;
}
