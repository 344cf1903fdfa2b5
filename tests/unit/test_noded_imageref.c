/* test_noded_imageref.c: image references normalized as Kubernetes and
 * docker do (docker.io, library/, :latest, registries with ports,
 * digests), the references refused, and the default pull policies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imageref.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void assert_norm(const char *ref, const char *want)
{
	struct imageref r;
	struct error *err = NULL;
	if (imageref_parse(ref, &r, &err) < 0)
		fail_msg("\"%s\" refused: %s", ref, err->msg);
	char *s = imageref_string(&r);
	assert_string_equal(s, want);
	free(s);
	imageref_clear(&r);
}

static void assert_refused(const char *ref, const char *why)
{
	struct imageref r;
	struct error *err = NULL;
	assert_int_equal(imageref_parse(ref, &r, &err), -EINVAL);
	assert_non_null(err);
	if (!strstr(err->msg, why))
		fail_msg("\"%s\": \"%s\" does not say \"%s\"", ref, err->msg, why);
	error_free(err);
}

static void test_imageref_parse__docker_hub_defaults(void **state)
{
	(void)state;
	assert_norm("nginx", "docker.io/library/nginx:latest");
	assert_norm("nginx:1.14.2", "docker.io/library/nginx:1.14.2");
	assert_norm("team/app", "docker.io/team/app:latest");
	assert_norm("docker.io/nginx", "docker.io/library/nginx:latest");
	assert_norm("index.docker.io/library/nginx:1", "docker.io/library/nginx:1");
	assert_norm("a/b/c:x_y.z-1", "docker.io/a/b/c:x_y.z-1");
}

static void test_imageref_parse__registries(void **state)
{
	(void)state;
	assert_norm("127.0.0.1:5000/team/app:2.1", "127.0.0.1:5000/team/app:2.1");
	assert_norm("localhost/app", "localhost/app:latest");
	assert_norm("localhost:5000/app", "localhost:5000/app:latest");
	assert_norm("registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9");
	assert_norm("quay.io/a/b", "quay.io/a/b:latest");
	assert_norm("[::1]:5000/app:1", "[::1]:5000/app:1");
	/* one component without '.', ':' or localhost is a path, not a host */
	assert_norm("myhost/app", "docker.io/myhost/app:latest");
}

static void test_imageref_parse__digests(void **state)
{
	(void)state;
	assert_norm("nginx@sha256:" D64, "docker.io/library/nginx@sha256:" D64);
	assert_norm("nginx:1.2@sha256:" D64, "docker.io/library/nginx:1.2@sha256:" D64);
	assert_norm("127.0.0.1:5000/a@sha256:" D64, "127.0.0.1:5000/a@sha256:" D64);
	struct imageref r;
	assert_int_equal(imageref_parse("x@sha256:" D64, &r, NULL), 0);
	assert_null(r.tag);
	assert_string_equal(r.digest, "sha256:" D64);
	char *repo = imageref_repo(&r);
	assert_string_equal(repo, "docker.io/library/x");
	free(repo);
	imageref_clear(&r);
}

static void test_imageref_parse__refuses(void **state)
{
	(void)state;
	assert_refused("", "empty");
	assert_refused("Nginx", "lower-case");
	assert_refused("nginx:", "not a tag");
	assert_refused("nginx:-x", "not a tag");
	assert_refused("nginx@sha256:abc", "digest");
	assert_refused("nginx@md5:" D64, "digest");
	assert_refused("a//b", "lower-case");
	assert_refused("a/b/", "lower-case");
	assert_refused("a..b", "lower-case");
	assert_refused("a-", "lower-case");
	assert_refused("host:99999999/app", "registry");
	assert_refused("-bad.io/app", "registry");
	assert_refused("reg.io/", "names no image");
	assert_refused("nginx:a/b", "registry");
	char long_name[300];
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_refused(long_name, "longer than");
}

static void test_imageref_default_policy__as_kubernetes(void **state)
{
	(void)state;
	static const struct {
		const char *ref, *policy;
	} cases[] = {
	    {"nginx", "Always"},
	    {"nginx:latest", "Always"},
	    {"nginx:1.14.2", "IfNotPresent"},
	    {"127.0.0.1:5000/a", "Always"},
	    {"127.0.0.1:5000/a:1", "IfNotPresent"},
	    {"nginx@sha256:" D64, "IfNotPresent"},
	    {"nginx:latest@sha256:" D64, "IfNotPresent"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct imageref r;
		assert_int_equal(imageref_parse(cases[i].ref, &r, NULL), 0);
		if (strcmp(imageref_default_policy(&r), cases[i].policy) != 0)
			fail_msg("%s: %s, want %s", cases[i].ref, imageref_default_policy(&r),
				 cases[i].policy);
		imageref_clear(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_imageref_parse__docker_hub_defaults),
	    cmocka_unit_test(test_imageref_parse__registries),
	    cmocka_unit_test(test_imageref_parse__digests),
	    cmocka_unit_test(test_imageref_parse__refuses),
	    cmocka_unit_test(test_imageref_default_policy__as_kubernetes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
