/* test_noded_serve.c: what corral-noded's log server (noded/serve.h) takes
 * from a request: /containerLogs/<ns>/<pod>/<container> with every name
 * checked (no "..", "/", "_" or empty part reaches the disk), one byte
 * range, and the newest log of the newest pod instance, found without
 * following symbolic links out of the log folder. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "podlogs.h"
#include "serve.h"
#include "util.h"

static void test_serve_parse_log_path__takes_the_three_names(void **state)
{
	(void)state;
	struct serve_log_ref r;
	assert_int_equal(serve_parse_log_path("/containerLogs/dev/web-0.a/app", &r, NULL), 0);
	assert_string_equal(r.ns, "dev");
	assert_string_equal(r.pod, "web-0.a");
	assert_string_equal(r.container, "app");
	serve_log_ref_clear(&r);
}

static void test_serve_parse_exec_path__takes_the_three_names_after_exec(void **state)
{
	(void)state;
	struct serve_log_ref r;
	assert_int_equal(serve_parse_exec_path("/exec/dev/web-0/app", &r, NULL), 0);
	assert_string_equal(r.ns, "dev");
	assert_string_equal(r.pod, "web-0");
	assert_string_equal(r.container, "app");
	serve_log_ref_clear(&r);
	static const char *const bad[] = {"/containerLogs/dev/web/app", "/exec/dev/web",
					  "/exec/dev/../app",		"/exec/dev/web/app/x",
					  "/exec/dev/web/..",		"/exec//web/app",
					  "/exec/dev/web_1/app",	"/execs/dev/web/app"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_error struct error *err = NULL;
		if (serve_parse_exec_path(bad[i], &r, &err) != -EINVAL)
			fail_msg("%s taken", bad[i]);
		assert_non_null(err);
		assert_null(r.ns);
	}
	/* and a log's path takes no exec */
	assert_int_equal(serve_parse_log_path("/exec/dev/web/app", &r, NULL), -EINVAL);
}

static void test_serve_parse_log_path__rejects_escapes_and_bad_names(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    NULL,
	    "",
	    "/",
	    "/containerLogs",
	    "/containerLogs/",
	    "/containerLogs/dev",
	    "/containerLogs/dev/web",
	    "/containerLogs/dev/web/",
	    "/containerLogs/dev//app",
	    "/containerLogs//web/app",
	    "/containerLogs/dev/web/app/",
	    "/containerLogs/dev/web/app/x",
	    "/containerLogs/../web/app",
	    "/containerLogs/dev/../app",
	    "/containerLogs/dev/web/..",
	    "/containerLogs/dev/./app",
	    "/containerLogs/dev/web/.",
	    "/containerLogs/dev/web_x_1/app",
	    "/containerLogs/dev/Web/app",
	    "/containerLogs/dev/web/a.b",
	    "/containerLogs/d.v/web/app",
	    "/containerLogs/dev/web/app\n",
	    "/containerLogs/dev/web/-app",
	    "/containerLogs/dev/.web/app",
	    "/containerLogs/dev/web/app?x",
	    "/containerlogs/dev/web/app",
	    "/containerLogs/dev/web\\..\\x/app",
	    "//containerLogs/dev/web/app",
	    "/etc/passwd",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct serve_log_ref r;
		cleanup_error struct error *err = NULL;
		if (serve_parse_log_path(bad[i], &r, &err) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i] ? bad[i] : "(null)");
		assert_non_null(err);
		assert_int_equal(err->status, EINVAL);
		assert_null(r.ns);
		assert_null(r.pod);
		assert_null(r.container);
	}
}

/* Every byte string up to length 3 after the prefix, and random longer
 * ones: whatever is accepted holds only names that are safe on a disk. */
static void test_serve_parse_log_path__fuzz_never_accepts_unsafe_parts(void **state)
{
	(void)state;
	static const char alphabet[] = "a-._/%\\0\n";
	char path[128];
	unsigned seed = 7;
	for (int round = 0; round < 200000; round++) {
		int n = snprintf(path, sizeof(path), "/containerLogs/");
		int len = 1 + (int)(rand_r(&seed) % 24);
		for (int i = 0; i < len; i++)
			path[n++] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		path[n] = '\0';
		struct serve_log_ref r;
		if (serve_parse_log_path(path, &r, NULL) < 0)
			continue;
		const char *parts[] = {r.ns, r.pod, r.container};
		for (size_t k = 0; k < 3; k++) {
			if (!*parts[k] || strchr(parts[k], '/') || strchr(parts[k], '_') ||
			    strchr(parts[k], '\\') || strchr(parts[k], '%') ||
			    strcmp(parts[k], ".") == 0 || strcmp(parts[k], "..") == 0 ||
			    parts[k][0] == '.' || parts[k][0] == '-')
				fail_msg("\"%s\" accepted with part \"%s\"", path, parts[k]);
		}
		serve_log_ref_clear(&r);
	}
}

static void test_serve_parse_range__one_range_within_the_file(void **state)
{
	(void)state;
	uint64_t start = 9, len = 9;
	assert_int_equal(serve_parse_range("bytes=0-9", 100, &start, &len), 0);
	assert_int_equal(start, 0);
	assert_int_equal(len, 10);
	assert_int_equal(serve_parse_range("bytes=90-", 100, &start, &len), 0);
	assert_int_equal(start, 90);
	assert_int_equal(len, 10);
	assert_int_equal(serve_parse_range("bytes=95-200", 100, &start, &len), 0);
	assert_int_equal(start, 95);
	assert_int_equal(len, 5);
	assert_int_equal(serve_parse_range("bytes=99-99", 100, &start, &len), 0);
	assert_int_equal(len, 1);
	/* at or past the end: 416 */
	assert_int_equal(serve_parse_range("bytes=100-", 100, &start, &len), -1);
	assert_int_equal(serve_parse_range("bytes=0-", 0, &start, &len), -1);
	/* none, or one not served: the whole file */
	static const char *const whole[] = {
	    NULL,
	    "",
	    "bytes=",
	    "bytes=-5",
	    "bytes=5-2",
	    "bytes=1-2,4-5",
	    "items=1-2",
	    "bytes=x-1",
	    "bytes=1-x",
	    "bytes=1",
	    "bytes=99999999999999999999999-",
	};
	for (size_t i = 0; i < ARRAY_SIZE(whole); i++)
		if (serve_parse_range(whole[i], 100, &start, &len) != 1)
			fail_msg("\"%s\" taken as a range", whole[i] ? whole[i] : "(null)");
}

static void test_podlogs_instance__splits_the_folder_name(void **state)
{
	(void)state;
	cleanup_free char *pod = NULL;
	assert_true(podlogs_instance("dev_web_0001", "dev", &pod));
	assert_string_equal(pod, "web");
	assert_false(podlogs_instance("dev_web_", "dev", NULL));
	assert_false(podlogs_instance("dev__0001", "dev", NULL));
	assert_false(podlogs_instance("devx_web_1", "dev", NULL));
	assert_false(podlogs_instance("other_web_1", "dev", NULL));
	assert_false(podlogs_instance("dev_web", "dev", NULL));
	assert_false(podlogs_instance("dev_web_1", "", NULL));
}

/* ---- the newest log, on a disk ---- */

static char root[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test-serve-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	return nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void put(const char *rel, const char *text)
{
	cleanup_free char *path = xasprintf("%s/%s", root, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(util_mkdir_p(path, 0755), 0);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_ref(const char *ns, const char *pod, const char *container, int *status)
{
	struct serve_log_ref r = {(char *)ns, (char *)pod, (char *)container};
	cleanup_error struct error *err = NULL;
	int fd = serve_open_log(root, &r, &err);
	if (fd < 0) {
		*status = err->status;
		return NULL;
	}
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	*status = 0;
	return xstrndup(buf, (size_t)n);
}

static void test_serve_open_log__newest_restart_of_newest_instance(void **state)
{
	(void)state;
	put("dev_web_old/app/0.log", "old instance\n");
	put("dev_web_new/app/0.log", "first run\n");
	put("dev_web_new/app/2.log", "third run\n");
	put("dev_web_new/app/10.log", "eleventh run\n");
	put("dev_web_new/app/x.log", "not a log\n");
	/* the newer instance: a later mtime on its folder */
	cleanup_free char *old = xasprintf("%s/dev_web_old", root);
	struct timespec past[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
	assert_int_equal(utimensat(AT_FDCWD, old, past, 0), 0);
	int st;
	cleanup_free char *text = read_ref("dev", "web", "app", &st);
	assert_int_equal(st, 0);
	assert_string_equal(text, "eleventh run\n");
	assert_null(read_ref("dev", "web", "side", &st));
	assert_int_equal(st, ENOENT);
	assert_null(read_ref("dev", "db", "app", &st));
	assert_int_equal(st, ENOENT);
	assert_null(read_ref("other", "web", "app", &st));
	assert_int_equal(st, ENOENT);
}

static void test_serve_open_log__follows_no_symbolic_link_opens_no_fifo(void **state)
{
	(void)state;
	put("outside/secret/0.log", "secret\n");
	cleanup_free char *out = xasprintf("%s/outside", root);
	cleanup_free char *link1 = xasprintf("%s/dev_evil_1", root);
	assert_int_equal(symlink(out, link1), 0);
	put("dev_sneaky_1/keep", "");
	cleanup_free char *sec = xasprintf("%s/outside/secret", root);
	cleanup_free char *link2 = xasprintf("%s/dev_sneaky_1/app", root);
	assert_int_equal(symlink(sec, link2), 0);
	put("dev_file_1/app/keep", "");
	cleanup_free char *tgt = xasprintf("%s/outside/secret/0.log", root);
	cleanup_free char *link3 = xasprintf("%s/dev_file_1/app/0.log", root);
	assert_int_equal(symlink(tgt, link3), 0);
	int st;
	assert_null(read_ref("dev", "evil", "secret", &st));
	assert_int_equal(st, ENOENT);
	assert_null(read_ref("dev", "sneaky", "app", &st));
	assert_int_equal(st, ENOENT);
	assert_null(read_ref("dev", "file", "app", &st));
	assert_int_equal(st, ENOENT);
	/* a FIFO in a log's place is refused, not waited on */
	put("dev_pipe_1/app/keep", "");
	cleanup_free char *fifo = xasprintf("%s/dev_pipe_1/app/0.log", root);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(read_ref("dev", "pipe", "app", &st));
	assert_int_equal(st, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_serve_parse_log_path__takes_the_three_names),
	    cmocka_unit_test(test_serve_parse_log_path__rejects_escapes_and_bad_names),
	    cmocka_unit_test(test_serve_parse_exec_path__takes_the_three_names_after_exec),
	    cmocka_unit_test(test_serve_parse_log_path__fuzz_never_accepts_unsafe_parts),
	    cmocka_unit_test(test_serve_parse_range__one_range_within_the_file),
	    cmocka_unit_test(test_podlogs_instance__splits_the_folder_name),
	    cmocka_unit_test_setup_teardown(test_serve_open_log__newest_restart_of_newest_instance,
					    setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(
		test_serve_open_log__follows_no_symbolic_link_opens_no_fifo, setup_dir,
		teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
