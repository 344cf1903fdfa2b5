/* test_names.c: the Kubernetes name rules of names.h, their length limits
 * and their messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"
#include "names.h"
#include "util.h"

typedef int (*check_fn)(const char *, struct error **);

static void ok(check_fn fn, const char *s)
{
	struct error *err = NULL;
	if (fn(s, &err) != 0)
		fail_msg("\"%s\" rejected: %s", s, err ? err->msg : "?");
	assert_null(err);
}

/* Expects rejection with a message that contains want. */
static void bad(check_fn fn, const char *s, const char *want)
{
	cleanup_error struct error *err = NULL;
	int rc = fn(s, &err);
	if (rc == 0)
		fail_msg("\"%s\" accepted", s);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(err);
	assert_int_equal(err->status, EINVAL);
	if (!strstr(err->msg, want))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", s, err->msg, want);
}

/* A string of n copies of c (n < 1024), in one of a few static buffers so
 * that a test can hold several at once. */
static const char *rep(char c, size_t n)
{
	static char bufs[4][1024];
	static unsigned next;
	char *b = bufs[next++ % 4];
	memset(b, c, n);
	b[n] = '\0';
	return b;
}

/* Labels of 63 joined by dots, exactly n characters (n % 64 != 0, so
 * that it does not end with a dot). */
static char *subdomain_of_len(size_t n)
{
	char *s = xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		s[i] = (i % 64 == 63) ? '.' : 'a';
	s[n] = '\0';
	return s;
}

#define LABEL_MSG                                                                                  \
	"a lowercase RFC 1123 label must consist of lower case "                                   \
	"alphanumeric characters or '-', and must start and end with an "                          \
	"alphanumeric character"
#define SUBDOMAIN_MSG                                                                              \
	"a lowercase RFC 1123 subdomain must consist of "                                          \
	"lower case alphanumeric characters, '-' or '.', and must start "                          \
	"and end with an alphanumeric character"
#define DNS1035_MSG                                                                                \
	"a DNS-1035 label must consist of lower case "                                             \
	"alphanumeric characters or '-', start with an alphabetic "                                \
	"character, and end with an alphanumeric character"
#define QNAME_MSG                                                                                  \
	"must consist of alphanumeric characters, '-', '_' or "                                    \
	"'.', and must start and end with an alphanumeric character"
#define VALUE_MSG                                                                                  \
	"a valid label must be an empty string or consist of "                                     \
	"alphanumeric characters, '-', '_' or '.', and must start and end "                        \
	"with an alphanumeric character"
#define ENV_MSG                                                                                    \
	"a valid environment variable name must consist of "                                       \
	"alphabetic characters, digits, '_', '-', or '.', and must not "                           \
	"start with a digit"
#define KEY_MSG                                                                                    \
	"a valid config key must consist of alphanumeric "                                         \
	"characters, '-', '_' or '.'"
#define MAX63  "must be no more than 63 characters"
#define MAX253 "must be no more than 253 characters"

static void test_names__dns1123_label_accepts_valid(void **state)
{
	(void)state;
	ok(names_dns1123_label, "a");
	ok(names_dns1123_label, "0");
	ok(names_dns1123_label, "my-name");
	ok(names_dns1123_label, "123-abc");
	ok(names_dns1123_label, "a--b");
	ok(names_dns1123_label, rep('a', 63));
}

static void test_names__dns1123_label_rejects_invalid(void **state)
{
	(void)state;
	bad(names_dns1123_label, "", LABEL_MSG);
	bad(names_dns1123_label, "-a", LABEL_MSG);
	bad(names_dns1123_label, "a-", LABEL_MSG);
	bad(names_dns1123_label, "A", LABEL_MSG);
	bad(names_dns1123_label, "a_b", LABEL_MSG);
	bad(names_dns1123_label, "a b", LABEL_MSG);
	bad(names_dns1123_label, "caf\xc3\xa9", LABEL_MSG);
	bad(names_dns1123_label, "a.b", "must not contain dots");
	bad(names_dns1123_label, ".a", LABEL_MSG);
	bad(names_dns1123_label, rep('a', 64), MAX63);
}

static void test_names__dns1123_label_message_is_kubernetes(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	assert_int_equal(names_dns1123_label("Foo", &err), -EINVAL);
	assert_string_equal(err->msg, LABEL_MSG " (e.g. 'my-name',  or '123-abc', regex used for "
						"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
}

static void test_names__dns1123_subdomain_accepts_valid(void **state)
{
	(void)state;
	ok(names_dns1123_subdomain, "example.com");
	ok(names_dns1123_subdomain, "a");
	ok(names_dns1123_subdomain, "a.b.c");
	ok(names_dns1123_subdomain, "kube-system");
	ok(names_dns1123_subdomain, "0.0");
	cleanup_free char *max = subdomain_of_len(253);
	assert_int_equal(strlen(max), 253);
	ok(names_dns1123_subdomain, max);
}

static void test_names__dns1123_subdomain_rejects_invalid(void **state)
{
	(void)state;
	bad(names_dns1123_subdomain, "", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, ".a", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "a.", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "a..b", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "a.-b", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "a-.b", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "Example.com", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "a_b", SUBDOMAIN_MSG);
	bad(names_dns1123_subdomain, "a/b", SUBDOMAIN_MSG);
	cleanup_free char *over = subdomain_of_len(254);
	bad(names_dns1123_subdomain, over, MAX253);
}

static void test_names__dns1123_subdomain_message_is_kubernetes(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	names_dns1123_subdomain("A", &err);
	assert_string_equal(err->msg,
			    SUBDOMAIN_MSG " (e.g. 'example.com', regex used for validation "
					  "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
					  "([-a-z0-9]*[a-z0-9])?)*')");
}

static void test_names__dns1035_label(void **state)
{
	(void)state;
	ok(names_dns1035_label, "my-name");
	ok(names_dns1035_label, "abc-123");
	ok(names_dns1035_label, "a");
	ok(names_dns1035_label, rep('z', 63));
	bad(names_dns1035_label, "", DNS1035_MSG);
	bad(names_dns1035_label, "1abc", DNS1035_MSG);
	bad(names_dns1035_label, "-abc", DNS1035_MSG);
	bad(names_dns1035_label, "abc-", DNS1035_MSG);
	bad(names_dns1035_label, "a.b", DNS1035_MSG);
	bad(names_dns1035_label, "Abc", DNS1035_MSG);
	bad(names_dns1035_label, rep('z', 64), MAX63);
	cleanup_error struct error *err = NULL;
	names_dns1035_label("9", &err);
	assert_string_equal(err->msg, DNS1035_MSG " (e.g. 'my-name',  or 'abc-123', "
						  "regex used for validation is "
						  "'[a-z]([-a-z0-9]*[a-z0-9])?')");
}

static void test_names__qualified_name_accepts_valid(void **state)
{
	(void)state;
	ok(names_qualified_name, "app");
	ok(names_qualified_name, "MyName");
	ok(names_qualified_name, "my.name");
	ok(names_qualified_name, "123-abc");
	ok(names_qualified_name, "a_b");
	ok(names_qualified_name, "app.kubernetes.io/name");
	ok(names_qualified_name, "example.com/MyName");
	ok(names_qualified_name, "k8s.io/a");
	ok(names_qualified_name, rep('x', 63));
	/* Largest of both parts: 253 + '/' + 63. */
	cleanup_free char *prefix = subdomain_of_len(253);
	cleanup_free char *full = xasprintf("%s/%s", prefix, rep('n', 63));
	ok(names_qualified_name, full);
}

static void test_names__qualified_name_rejects_bad_name_part(void **state)
{
	(void)state;
	bad(names_qualified_name, "", "name part must be non-empty");
	bad(names_qualified_name, "a/", "name part must be non-empty");
	bad(names_qualified_name, rep('x', 64), "name part must be no more than 63 characters");
	bad(names_qualified_name, "-app", "name part " QNAME_MSG);
	bad(names_qualified_name, "app_", "name part " QNAME_MSG);
	bad(names_qualified_name, "a b", "name part " QNAME_MSG);
	bad(names_qualified_name, "a:b", "name part " QNAME_MSG);
	bad(names_qualified_name, "example.com/.x", "name part " QNAME_MSG);
	cleanup_error struct error *err = NULL;
	names_qualified_name("_x", &err);
	assert_string_equal(err->msg, "name part " QNAME_MSG " (e.g. 'MyName',  or 'my.name',  or "
				      "'123-abc', regex used for validation is "
				      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
}

static void test_names__qualified_name_rejects_bad_prefix(void **state)
{
	(void)state;
	bad(names_qualified_name, "/a", "prefix part must be non-empty");
	bad(names_qualified_name, "Example.com/a", "prefix part " SUBDOMAIN_MSG);
	bad(names_qualified_name, "a_b/c", "prefix part " SUBDOMAIN_MSG);
	bad(names_qualified_name, "a./c", "prefix part " SUBDOMAIN_MSG);
	cleanup_free char *prefix = subdomain_of_len(254);
	cleanup_free char *full = xasprintf("%s/a", prefix);
	bad(names_qualified_name, full, "prefix part must be no more than 253 characters");
}

static void test_names__qualified_name_rejects_two_slashes(void **state)
{
	(void)state;
	bad(names_qualified_name, "a/b/c", "a qualified name " QNAME_MSG);
	bad(names_qualified_name, "a/b/c",
	    "with an optional DNS subdomain prefix and '/' (e.g. "
	    "'example.com/MyName')");
	bad(names_qualified_name, "//", "a qualified name");
}

static void test_names__label_value(void **state)
{
	(void)state;
	ok(names_label_value, "");
	ok(names_label_value, "MyValue");
	ok(names_label_value, "my_value");
	ok(names_label_value, "12345");
	ok(names_label_value, "v1.2.3-rc_1");
	ok(names_label_value, "a");
	ok(names_label_value, rep('v', 63));
	bad(names_label_value, rep('v', 64), MAX63);
	bad(names_label_value, "-v", VALUE_MSG);
	bad(names_label_value, "v.", VALUE_MSG);
	bad(names_label_value, "a/b", VALUE_MSG);
	bad(names_label_value, "a b", VALUE_MSG);
	bad(names_label_value, "_", VALUE_MSG);
	cleanup_error struct error *err = NULL;
	names_label_value("x y", &err);
	assert_string_equal(err->msg,
			    VALUE_MSG " (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
				      "used for validation is "
				      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
}

static void test_names__port_name(void **state)
{
	(void)state;
	ok(names_port_name, "http");
	ok(names_port_name, "h2c");
	ok(names_port_name, "metrics-1");
	ok(names_port_name, "a");
	ok(names_port_name, rep('p', 15));
	bad(names_port_name, rep('p', 16), "must be no more than 15 characters");
	bad(names_port_name, "",
	    "must contain only alpha-numeric characters (a-z, 0-9), and "
	    "hyphens (-)");
	bad(names_port_name, "HTTP", "must contain only alpha-numeric");
	bad(names_port_name, "my_port", "must contain only alpha-numeric");
	bad(names_port_name, "8080", "must contain at least one letter (a-z)");
	bad(names_port_name, "1-2", "must contain at least one letter (a-z)");
	bad(names_port_name, "a--b", "must not contain consecutive hyphens");
	bad(names_port_name, "-http", "must not begin or end with a hyphen");
	bad(names_port_name, "http-", "must not begin or end with a hyphen");
}

static void test_names__env_var(void **state)
{
	(void)state;
	ok(names_env_var, "HOME");
	ok(names_env_var, "my.env-name");
	ok(names_env_var, "MY_ENV.NAME");
	ok(names_env_var, "MyEnvName1");
	ok(names_env_var, "_");
	ok(names_env_var, "-x");
	ok(names_env_var, ".a");
	bad(names_env_var, "", ENV_MSG);
	bad(names_env_var, "1ABC", ENV_MSG);
	bad(names_env_var, "A B", ENV_MSG);
	bad(names_env_var, "A=B", ENV_MSG);
	bad(names_env_var, "A$", ENV_MSG);
	bad(names_env_var, ".", "must not be '.'");
	bad(names_env_var, "..", "must not be '..'");
	bad(names_env_var, "..a", "must not start with '..'");
	cleanup_error struct error *err = NULL;
	names_env_var("9", &err);
	assert_string_equal(err->msg, ENV_MSG " (e.g. 'my.env-name',  or 'MY_ENV.NAME', "
					      " or 'MyEnvName1', regex used for "
					      "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')");
}

static void test_names__config_key(void **state)
{
	(void)state;
	ok(names_config_key, "key.name");
	ok(names_config_key, "KEY_NAME");
	ok(names_config_key, "key-name");
	ok(names_config_key, "1");
	ok(names_config_key, ".hidden");
	ok(names_config_key, "a..b");
	ok(names_config_key, rep('k', 253));
	bad(names_config_key, rep('k', 254), MAX253);
	bad(names_config_key, "", KEY_MSG);
	bad(names_config_key, "a/b", KEY_MSG);
	bad(names_config_key, "a b", KEY_MSG);
	bad(names_config_key, ".", "must not be '.'");
	bad(names_config_key, "..", "must not be '..'");
	bad(names_config_key, "..data", "must not start with '..'");
	cleanup_error struct error *err = NULL;
	names_config_key("a:b", &err);
	assert_string_equal(err->msg, KEY_MSG " (e.g. 'key.name',  or 'KEY_NAME',  or "
					      "'key-name', regex used for validation is "
					      "'[-._a-zA-Z0-9]+')");
}

static void test_names__ignores_null_err(void **state)
{
	(void)state;
	assert_int_equal(names_dns1123_label("A", NULL), -EINVAL);
	assert_int_equal(names_qualified_name("a/b/c", NULL), -EINVAL);
	assert_int_equal(names_config_key("..", NULL), -EINVAL);
	assert_int_equal(names_label_value("", NULL), 0);
}

/* The files of a folder that are objects, and editors' and tools'
 * temporaries that are not (vim, emacs, sed -i, backups). */
static void test_names__object_file(void **state)
{
	(void)state;
	size_t len = 0;
	assert_true(names_object_file("x.yaml", &len));
	assert_int_equal(len, 1);
	assert_true(names_object_file("web-1.yaml", NULL));
	assert_true(names_object_file("a.b.yaml", &len));
	assert_int_equal(len, 3);
	static const char *const scratch[] = {
	    "#x.yaml",	   "#x.yaml#",	 ".#x.yaml", ".x.yaml",	  "x.yaml~", ".x.yaml.swp",
	    ".x.yaml.swx", "x.yaml.tmp", "4913",     "sedAbC123", ".yaml",   "yaml",
	    "x.yml",	   "x.YAML",	 "x.yaml.",  "",	  "x.json",
	};
	for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++) {
		len = 99;
		if (names_object_file(scratch[i], &len))
			fail_msg("\"%s\" taken for an object", scratch[i]);
		assert_int_equal(len, 99);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names__dns1123_label_accepts_valid),
	    cmocka_unit_test(test_names__dns1123_label_rejects_invalid),
	    cmocka_unit_test(test_names__dns1123_label_message_is_kubernetes),
	    cmocka_unit_test(test_names__dns1123_subdomain_accepts_valid),
	    cmocka_unit_test(test_names__dns1123_subdomain_rejects_invalid),
	    cmocka_unit_test(test_names__dns1123_subdomain_message_is_kubernetes),
	    cmocka_unit_test(test_names__dns1035_label),
	    cmocka_unit_test(test_names__qualified_name_accepts_valid),
	    cmocka_unit_test(test_names__qualified_name_rejects_bad_name_part),
	    cmocka_unit_test(test_names__qualified_name_rejects_bad_prefix),
	    cmocka_unit_test(test_names__qualified_name_rejects_two_slashes),
	    cmocka_unit_test(test_names__label_value),
	    cmocka_unit_test(test_names__port_name),
	    cmocka_unit_test(test_names__env_var),
	    cmocka_unit_test(test_names__config_key),
	    cmocka_unit_test(test_names__ignores_null_err),
	    cmocka_unit_test(test_names__object_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
