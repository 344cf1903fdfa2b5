/* test_noded_rtnl.c: corral-noded's rtnetlink requests (noded/rtnl.c):
 * errors that say what and where, a missing link on delete, the thread
 * back in its own namespace after rtnl_open(pid), and, as root, a pod's
 * whole network made in throwaway namespaces of a forked child (a bridge,
 * the veth with its peer moved into a second process's namespace,
 * hairpin, the address and default route there). The host's namespace is
 * never changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtnl.h"

#define NO_SUCH_LINK "crvnosuch0"

/* The pid of a process that has come and gone. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static ino_t thread_netns(void)
{
	struct stat st;
	assert_int_equal(stat("/proc/thread-self/ns/net", &st), 0);
	return st.st_ino;
}

static void test_rtnl_open__socket_in_own_namespace(void **state)
{
	(void)state;
	struct error *err = NULL;
	struct mnl_socket *nl = rtnl_open(0, &err);
	assert_non_null(nl);
	assert_null(err);
	rtnl_close(nl);
}

static void test_rtnl_open__missing_process_names_its_namespace(void **state)
{
	(void)state;
	pid_t pid = gone_pid();
	char want[64];
	snprintf(want, sizeof(want), "/proc/%d/ns/net: ", (int)pid);
	struct error *err = NULL;
	assert_true(rtnl_open(pid, &err) == NULL);
	assert_non_null(err);
	assert_int_equal(err->status, ENOENT);
	assert_memory_equal(err->msg, want, strlen(want));
	error_free(err);
}

static void test_rtnl_open__thread_stays_in_its_namespace(void **state)
{
	(void)state;
	ino_t before = thread_netns();
	struct error *err = NULL;
	struct mnl_socket *nl = rtnl_open(getpid(), &err);
	assert_non_null(nl);
	assert_int_equal(thread_netns(), before);
	rtnl_close(nl);
}

/* A request that failed with -status and said msg. */
static void assert_refused(int got, struct error *err, int status, const char *msg)
{
	assert_int_equal(got, -status);
	assert_non_null(err);
	assert_int_equal(err->status, status);
	assert_string_equal(err->msg, msg);
	error_free(err);
}

static void test_rtnl__missing_link_or_bridge_says_which(void **state)
{
	(void)state;
	struct error *err = NULL;
	struct mnl_socket *nl = rtnl_open(0, &err);
	assert_non_null(nl);
	int r = rtnl_addr_add(nl, NO_SUCH_LINK, htonl(0x0a090002), 24, &err);
	assert_refused(r, err, ENODEV, NO_SUCH_LINK ": No such device");
	err = NULL;
	r = rtnl_veth_add(nl, "crvnosuch1", NO_SUCH_LINK, "eth0", getpid(), &err);
	assert_refused(r, err, ENODEV, NO_SUCH_LINK ": No such device");
	rtnl_close(nl);
}

static void test_rtnl_link_del__missing_link_is_enodev_without_error(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* the kernel refuses the request itself: EPERM */
	struct error *err = NULL;
	struct mnl_socket *nl = rtnl_open(0, &err);
	assert_non_null(nl);
	assert_int_equal(rtnl_link_del(nl, NO_SUCH_LINK, &err), -ENODEV);
	assert_null(err);
	rtnl_close(nl);
}

/* Steps of the sandbox below; the child exits with the one that failed. */
enum sandbox_step {
	SANDBOX_OK,
	SANDBOX_UNSHARE,
	SANDBOX_PAUSE,
	SANDBOX_BRIDGE,
	SANDBOX_OPEN,
	SANDBOX_VETH,
	SANDBOX_HOST_UP,
	SANDBOX_HAIRPIN,
	SANDBOX_OPEN_POD,
	SANDBOX_ADDR,
	SANDBOX_POD_UP,
	SANDBOX_ROUTE,
	SANDBOX_ADDR_AGAIN,
	SANDBOX_ROUTE_AGAIN,
	SANDBOX_VETH_AGAIN,
	SANDBOX_DEL,
	SANDBOX_DEL_AGAIN,
};

/* A stand-in for the pause: a process in a network namespace of its own,
 * killed with its parent. */
static pid_t sandbox_pause(void)
{
	int ready[2];
	if (pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		if (unshare(CLONE_NEWNET) < 0)
			_exit(1);
		if (write(ready[1], "", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	ssize_t n = pid > 0 ? read(ready[0], &c, 1) : -1;
	close(ready[0]);
	return n == 1 ? pid : -1;
}

static int sandbox_failed(int step, struct error *err)
{
	fprintf(stderr, "sandbox step %d: %s\n", step, err ? err->msg : "(no message)");
	return step;
}

/* net_pod_up()'s requests, in the order it makes them, in the caller's
 * (new) namespace and the pause stand-in's. */
static int sandbox_pod_network(pid_t pause)
{
	struct error *err = NULL;
	if (system("ip link add crtbr0 type bridge && ip link set crtbr0 up") != 0)
		return sandbox_failed(SANDBOX_BRIDGE, NULL);
	struct mnl_socket *nl = rtnl_open(0, &err);
	if (!nl)
		return sandbox_failed(SANDBOX_OPEN, err);
	if (rtnl_veth_add(nl, "crvtest0", "crtbr0", "eth0", pause, &err) < 0)
		return sandbox_failed(SANDBOX_VETH, err);
	const struct rtnl_link_change host = {.up = true, .bridge_hairpin = true};
	if (rtnl_link_set(nl, "crvtest0", &host, &err) < 0)
		return sandbox_failed(SANDBOX_HOST_UP, err);
	if (system("ip -d link show dev crvtest0 | grep -q 'hairpin on'") != 0)
		return sandbox_failed(SANDBOX_HAIRPIN, NULL);
	struct mnl_socket *pod = rtnl_open(pause, &err);
	if (!pod)
		return sandbox_failed(SANDBOX_OPEN_POD, err);
	const struct rtnl_link_change up = {.up = true};
	if (rtnl_addr_add(pod, "eth0", htonl(0x0a090002), 24, &err) < 0)
		return sandbox_failed(SANDBOX_ADDR, err);
	if (rtnl_link_set(pod, "eth0", &up, &err) < 0)
		return sandbox_failed(SANDBOX_POD_UP, err);
	if (rtnl_route_default(pod, htonl(0x0a090001), &err) < 0)
		return sandbox_failed(SANDBOX_ROUTE, err);
	/* made, and where asked: doing it again is refused */
	if (rtnl_addr_add(pod, "eth0", htonl(0x0a090002), 24, &err) != -EEXIST ||
	    strcmp(err->msg, "address on eth0: File exists") != 0)
		return sandbox_failed(SANDBOX_ADDR_AGAIN, err);
	error_free(err);
	err = NULL;
	if (rtnl_route_default(pod, htonl(0x0a090001), &err) != -EEXIST)
		return sandbox_failed(SANDBOX_ROUTE_AGAIN, err);
	error_free(err);
	err = NULL;
	if (rtnl_veth_add(nl, "crvtest0", "crtbr0", "eth0", pause, &err) != -EEXIST ||
	    strcmp(err->msg, "veth crvtest0: File exists") != 0)
		return sandbox_failed(SANDBOX_VETH_AGAIN, err);
	error_free(err);
	err = NULL;
	if (rtnl_link_del(nl, "crvtest0", &err) != 0)
		return sandbox_failed(SANDBOX_DEL, err);
	if (rtnl_link_del(nl, "crvtest0", &err) != -ENODEV || err)
		return sandbox_failed(SANDBOX_DEL_AGAIN, err);
	rtnl_close(pod);
	rtnl_close(nl);
	return SANDBOX_OK;
}

static void test_rtnl__pod_network_in_throwaway_namespaces(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* new network namespaces need root */
	fflush(NULL);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWNET) < 0)
			_exit(SANDBOX_UNSHARE);
		pid_t pause = sandbox_pause();
		if (pause < 0)
			_exit(SANDBOX_PAUSE);
		int r = sandbox_pod_network(pause);
		kill(pause, SIGKILL);
		waitpid(pause, NULL, 0);
		_exit(r);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), SANDBOX_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rtnl_open__socket_in_own_namespace),
	    cmocka_unit_test(test_rtnl_open__missing_process_names_its_namespace),
	    cmocka_unit_test(test_rtnl_open__thread_stays_in_its_namespace),
	    cmocka_unit_test(test_rtnl__missing_link_or_bridge_says_which),
	    cmocka_unit_test(test_rtnl_link_del__missing_link_is_enodev_without_error),
	    cmocka_unit_test(test_rtnl__pod_network_in_throwaway_namespaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
