/* test_sdnotify.c: the notification socket's receiving end: a message sent
 * to the name it gives arrives with the sender's pid; exact lines only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sdnotify.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Sends msg to the socket named name ("@..."), as systemd-nspawn does. */
static void send_to(const char *name, const char *msg)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(sa.sun_path, name, n);
	sa.sun_path[0] = '\0'; /* abstract */
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	assert_int_equal(sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa, len),
			 (ssize_t)strlen(msg));
	close(fd);
}

static void test_sdnotify__receives_with_sender(void **state)
{
	(void)state;
	char name[108], buf[256];
	pid_t from = -1;
	int fd = sdnotify_open(name, sizeof(name));
	assert_true(fd >= 0);
	assert_int_equal(name[0], '@');
	assert_int_equal(sdnotify_recv(fd, buf, sizeof(buf), &from), -1); /* nothing yet */
	send_to(name, "X_NSPAWN_LEADER_PID=4242\nREADY=1\n");
	assert_int_equal(sdnotify_recv(fd, buf, sizeof(buf), &from), 33);
	assert_int_equal(from, getpid());
	assert_true(sdnotify_has(buf, "READY=1"));
	size_t len = 0;
	const char *v = sdnotify_value(buf, "X_NSPAWN_LEADER_PID", &len);
	assert_non_null(v);
	assert_int_equal(len, 4);
	assert_memory_equal(v, "4242", 4);
	/* a message longer than the buffer is cut, not overrun */
	send_to(name, "STATUS=a long status line\nREADY=1");
	char small[8];
	assert_int_equal(sdnotify_recv(fd, small, sizeof(small), &from), 7);
	assert_string_equal(small, "STATUS=");
	close(fd);
	assert_int_equal(sdnotify_open(name, 4), -1); /* no room for the name */
}

static void test_sdnotify__exact_lines(void **state)
{
	(void)state;
	assert_true(sdnotify_has("READY=1", "READY=1"));
	assert_true(sdnotify_has("STATUS=x\nREADY=1\n", "READY=1"));
	assert_false(sdnotify_has("READY=10", "READY=1"));
	assert_false(sdnotify_has("NOTREADY=1", "READY=1"));
	assert_false(sdnotify_has("STATUS=READY=1", "READY=1"));
	assert_false(sdnotify_has("", "READY=1"));
	size_t len;
	assert_null(sdnotify_value("READY=1", "X_NSPAWN_LEADER_PID", &len));
	assert_non_null(sdnotify_value("A=\n", "A", &len));
	assert_int_equal(len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sdnotify__receives_with_sender),
	    cmocka_unit_test(test_sdnotify__exact_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
