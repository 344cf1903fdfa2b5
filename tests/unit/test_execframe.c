/* test_execframe.c: the frames of remote exec (lib/execframe.h): a frame
 * read whole, in parts or not at all (unknown stream, length over the
 * limit), the status and resize payloads, and the head of an HTTP answer
 * that the client reads before the upgraded stream; and the request path
 * the client builds (lib/rexec.h), every part escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "execframe.h"
#include "rexec.h"
#include "util.h"

static void test_execframe_parse__header_then_payload(void **state)
{
	(void)state;
	uint8_t buf[2 * EXECFRAME_HEADER + 3];
	execframe_header(buf, EXECFRAME_STDERR, 3);
	memcpy(buf + EXECFRAME_HEADER, "abc", 3);
	execframe_header(buf + 8, EXECFRAME_STDIN, 0); /* of which 2 bytes are read */
	assert_memory_equal(buf, "\x02\x00\x00\x00\x03", 5);
	struct execframe f;
	assert_int_equal(execframe_parse(buf, 10, &f), 8);
	assert_int_equal(f.stream, EXECFRAME_STDERR);
	assert_int_equal(f.len, 3);
	assert_memory_equal(f.payload, "abc", 3);
	assert_int_equal(execframe_parse(buf + 8, 2, &f), 0);
}

static void test_execframe_parse__waits_for_a_whole_frame(void **state)
{
	(void)state;
	uint8_t buf[EXECFRAME_HEADER + 4];
	execframe_header(buf, EXECFRAME_STDOUT, 4);
	memcpy(buf + EXECFRAME_HEADER, "wxyz", 4);
	struct execframe f;
	for (size_t n = 0; n < sizeof(buf); n++)
		assert_int_equal(execframe_parse(buf, n, &f), 0);
	assert_int_equal(execframe_parse(buf, sizeof(buf), &f), sizeof(buf));
}

static void test_execframe_parse__empty_frame_is_an_end(void **state)
{
	(void)state;
	uint8_t buf[EXECFRAME_HEADER];
	execframe_header(buf, EXECFRAME_STDIN, 0);
	struct execframe f;
	assert_int_equal(execframe_parse(buf, sizeof(buf), &f), EXECFRAME_HEADER);
	assert_int_equal(f.stream, EXECFRAME_STDIN);
	assert_int_equal(f.len, 0);
}

static void test_execframe_parse__rejects_unknown_streams_and_huge_lengths(void **state)
{
	(void)state;
	struct execframe f;
	uint8_t bad_stream[] = {5, 0, 0, 0, 0};
	assert_int_equal(execframe_parse(bad_stream, 1, &f), -1); /* known from its first byte */
	assert_int_equal(execframe_parse(bad_stream, sizeof(bad_stream), &f), -1);
	uint8_t big[EXECFRAME_HEADER];
	execframe_header(big, EXECFRAME_STDOUT, EXECFRAME_MAX + 1);
	assert_int_equal(execframe_parse(big, sizeof(big), &f), -1);
	uint8_t huge[] = {1, 0xff, 0xff, 0xff, 0xff};
	assert_int_equal(execframe_parse(huge, sizeof(huge), &f), -1);
	uint8_t max[EXECFRAME_HEADER];
	execframe_header(max, EXECFRAME_STDOUT, EXECFRAME_MAX);
	assert_int_equal(execframe_parse(max, sizeof(max), &f), 0); /* legal, not whole */
}

static int status(const char *s, int *code, char **msg)
{
	return execframe_status_parse((const uint8_t *)s, strlen(s), code, msg);
}

static void test_execframe_status_parse__exit_codes_and_errors(void **state)
{
	(void)state;
	int code = -1;
	char *msg = NULL;
	assert_int_equal(status("exit 0", &code, &msg), 0);
	assert_int_equal(code, 0);
	assert_int_equal(status("exit 127", &code, &msg), 0);
	assert_int_equal(code, 127);
	assert_int_equal(status("exit 255", &code, &msg), 0);
	assert_int_equal(code, 255);
	assert_int_equal(status("error the node agent is stopping", &code, &msg), 1);
	assert_string_equal(msg, "the node agent is stopping");
	free(msg);
	static const char *const bad[] = {"exit 256",  "exit -1", "exit ", "exit 1x", "exit 007",
					  "exit 1000", "exi",	  "",	   "error",   "EXIT 1"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		msg = NULL;
		if (status(bad[i], &code, &msg) != -1)
			fail_msg("\"%s\" taken", bad[i]);
		assert_null(msg);
	}
}

static void test_execframe_resize__round_trip(void **state)
{
	(void)state;
	uint8_t p[4];
	execframe_resize(p, 300, 40);
	uint16_t cols = 0, rows = 0;
	assert_int_equal(execframe_resize_parse(p, 4, &cols, &rows), 0);
	assert_int_equal(cols, 300);
	assert_int_equal(rows, 40);
	assert_int_equal(execframe_resize_parse(p, 3, &cols, &rows), -1);
	assert_int_equal(execframe_resize_parse(p, 5, &cols, &rows), -1);
}

static long head(const char *s, int *st, long *cl)
{
	return execframe_http_head(s, strlen(s), st, cl);
}

static void test_execframe_http_head__status_and_length(void **state)
{
	(void)state;
	int st = 0;
	long cl = 0;
	const char *up = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: corral.exec.v1\r\n"
			 "Connection: Upgrade\r\n\r\n\x01\x02";
	assert_int_equal(head(up, &st, &cl), (long)strlen(up) - 2);
	assert_int_equal(st, 101);
	assert_int_equal(cl, -1);
	assert_int_equal(
	    head("HTTP/1.1 404 Not Found\r\ncontent-length: 12\r\n\r\nno such pod\n", &st, &cl),
	    46);
	assert_int_equal(st, 404);
	assert_int_equal(cl, 12);
	assert_true(head("HTTP/1.0 200\r\n\r\n", &st, &cl) > 0);
	assert_int_equal(st, 200);
}

static void test_execframe_http_head__partial_and_bad(void **state)
{
	(void)state;
	int st = 0;
	long cl = 0;
	assert_int_equal(head("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n", &st, &cl), 0);
	assert_int_equal(head("", &st, &cl), 0);
	static const char *const bad[] = {
	    "SSH-2.0-OpenSSH\r\n\r\n",
	    "HTTP/1.1 1O1 x\r\n\r\n",
	    "HTTP/1.1 101x\r\n\r\n",
	    "HTTP/2 200 OK\r\n\r\n",
	    "HTTP/1.1 404 x\r\nContent-Length: -1\r\n\r\n",
	    "HTTP/1.1 404 x\r\nContent-Length: 99999999999999999999\r\n\r\n",
	    "HTTP/1.1 404 x\r\nContent-Length:\r\n\r\n",
	    "HTTP/1.1 404 x\r\nContent-Length: 1x\r\n\r\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (head(bad[i], &st, &cl) != -1)
			fail_msg("\"%s\" taken", bad[i]);
}

static void test_rexec_request_path__escapes_every_part(void **state)
{
	(void)state;
	char *argv[] = {"sh", "-c", "echo a b&c=d/e?f", NULL};
	struct rexec_opts o = {.ns = "dev",
			       .pod = "web-0",
			       .container = "app",
			       .argv = argv,
			       .in = true,
			       .tty = false};
	cleanup_free char *p = rexec_request_path(&o, 80, 24); /* no terminal: no size */
	assert_string_equal(p, "/exec/dev/web-0/app?command=sh&command=-c&command=echo%20a%20b%26c%"
			       "3Dd%2Fe%3Ff&stdout=1&stderr=1&stdin=1");
	o.pod = "../x";
	o.in = false;
	o.tty = true;
	cleanup_free char *q = rexec_request_path(&o, 91, 33);
	assert_non_null(strstr(q, "/exec/dev/..%2Fx/app?"));
	assert_non_null(strstr(q, "&tty=1&cols=91&rows=33"));
	assert_null(strstr(q, "stdin"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_execframe_parse__header_then_payload),
	    cmocka_unit_test(test_execframe_parse__waits_for_a_whole_frame),
	    cmocka_unit_test(test_execframe_parse__empty_frame_is_an_end),
	    cmocka_unit_test(test_execframe_parse__rejects_unknown_streams_and_huge_lengths),
	    cmocka_unit_test(test_execframe_status_parse__exit_codes_and_errors),
	    cmocka_unit_test(test_execframe_resize__round_trip),
	    cmocka_unit_test(test_execframe_http_head__status_and_length),
	    cmocka_unit_test(test_execframe_http_head__partial_and_bad),
	    cmocka_unit_test(test_rexec_request_path__escapes_every_part),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
