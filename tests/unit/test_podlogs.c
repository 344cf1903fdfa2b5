/* test_podlogs.c: the choice of a pod's newest log folder, which
 * corral-noded serves and corral-fs shows: the later modification to the
 * nanosecond, the same whatever order readdir() gives; and the restart
 * count of a container's newest log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "podlogs.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_podlogs_newer__first_wins_over_none(void **state)
{
	(void)state;
	struct timespec t = {0, 0};
	assert_true(podlogs_newer("dev_web_1", &t, NULL, NULL));
}

static void test_podlogs_newer__later_second(void **state)
{
	(void)state;
	struct timespec old = {100, 999999999}, new = {101, 0};
	assert_true(podlogs_newer("dev_web_a", &new, "dev_web_b", &old));
	assert_false(podlogs_newer("dev_web_b", &old, "dev_web_a", &new));
}

static void test_podlogs_newer__nanoseconds_count(void **state)
{
	(void)state;
	/* Two instances in one second: a restart's new folder must win, as
	 * corral-noded serves it (seconds alone would keep the old one). */
	struct timespec old = {100, 5}, new = {100, 6};
	assert_true(podlogs_newer("dev_web_a", &new, "dev_web_b", &old));
	assert_false(podlogs_newer("dev_web_b", &old, "dev_web_a", &new));
}

static void test_podlogs_newer__a_tie_does_not_depend_on_order(void **state)
{
	(void)state;
	struct timespec t = {100, 5};
	assert_true(podlogs_newer("dev_web_b", &t, "dev_web_a", &t));
	assert_false(podlogs_newer("dev_web_a", &t, "dev_web_b", &t));
	/* Same scan, either order: the same winner. */
	const char *names[2][2] = {{"dev_web_a", "dev_web_b"}, {"dev_web_b", "dev_web_a"}};
	for (int o = 0; o < 2; o++) {
		const char *best = NULL;
		struct timespec bt = {0, 0};
		for (int i = 0; i < 2; i++)
			if (podlogs_newer(names[o][i], &t, best, &bt)) {
				best = names[o][i];
				bt = t;
			}
		assert_string_equal(best, "dev_web_b");
	}
}

static void test_podlogs_newest_restart__highest_count(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_podlogs.XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *files[] = {"0.log", "2.log", "10.log", "11.txt", "x.log"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		cleanup_free char *p = xasprintf("%s/%s", dir, files[i]);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
	DIR *d = opendir(dir);
	assert_non_null(d);
	assert_int_equal(podlogs_newest_restart(d), 10);
	closedir(d);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		cleanup_free char *p = xasprintf("%s/%s", dir, files[i]);
		unlink(p);
	}
	d = opendir(dir);
	assert_non_null(d);
	assert_int_equal(podlogs_newest_restart(d), -1);
	closedir(d);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_podlogs_newer__first_wins_over_none),
	    cmocka_unit_test(test_podlogs_newer__later_second),
	    cmocka_unit_test(test_podlogs_newer__nanoseconds_count),
	    cmocka_unit_test(test_podlogs_newer__a_tie_does_not_depend_on_order),
	    cmocka_unit_test(test_podlogs_newest_restart__highest_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
