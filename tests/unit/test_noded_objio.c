/* test_noded_objio.c: the object files corral-noded lists in a folder of
 * the mount are the ones corral-fs stores: editors' temporaries (#x.yaml,
 * .x.yaml.swp, x.yaml~, 4913) are never objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objio.h"
#include "util.h"

static void touch(const char *dir, const char *name)
{
	cleanup_free char *path = xasprintf("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void test_objio_list__skips_editors_temporaries(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_noded_objio.XXXXXX";
	assert_non_null(mkdtemp(dir));
	static const char *const files[] = {
	    "web.yaml",	    "#web.yaml", "#web.yaml#", ".#web.yaml", ".web.yaml.swp", "web.yaml~",
	    "web.yaml.tmp", "4913",	 ".yaml",      "api.yaml",   "sedAbC123"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		touch(dir, files[i]);
	char **names = NULL;
	size_t n = 0;
	assert_int_equal(objio_list(dir, &names, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "api.yaml");
	assert_string_equal(names[1], "web.yaml");
	objio_list_free(names, n);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		cleanup_free char *path = xasprintf("%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_objio_list__skips_editors_temporaries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
