/* test_config.c: corral.conf loading — defaults, [cluster] then the daemon's
 * section, errors that name file:line and key, flags through config_set, and
 * the value parsers. Each test writes its file in a private temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

struct dns_conf {
	char *mount;
	char *domain;
	int port;
	bool verbose;
	uint64_t resync_ms;
};

struct fixture {
	char dir[64];
	char path[128];
	struct dns_conf conf;
	struct config_key keys[6];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	strcpy(fx->dir, "/tmp/corral-test-config-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/corral.conf", fx->dir);
	struct dns_conf *c = &fx->conf;
	struct config_key keys[] = {
	    {"mount", CONFIG_STRING, &c->mount, "/cluster", 0, 0},
	    {"cluster-domain", CONFIG_STRING, &c->domain, "cluster.local", 0, 0},
	    {"port", CONFIG_INT, &c->port, "10053", 1, 65535},
	    {"verbose", CONFIG_BOOL, &c->verbose, "no", 0, 0},
	    {"resync-period", CONFIG_DURATION, &c->resync_ms, "10m", 0, 0},
	    CONFIG_KEYS_END,
	};
	memcpy(fx->keys, keys, sizeof(keys));
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	config_free(fx->keys);
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void write_conf(struct fixture *fx, const char *text)
{
	FILE *f = fopen(fx->path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads and expects failure whose message contains want. */
static void expect_error(struct fixture *fx, const char *want)
{
	struct error *err = NULL;
	assert_true(config_load(fx->path, "dns", fx->keys, &err) < 0);
	assert_non_null(err);
	if (!strstr(err->msg, want))
		fail_msg("message '%s' lacks '%s'", err->msg, want);
	error_free(err);
}

static void test_config_flags__win_over_the_file_in_order(void **state)
{
	struct fixture *fx = *state;
	write_conf(fx, "[dns]\nport = 53\nverbose = no\n");
	struct config_flags flags = {0};
	config_flags_add(&flags, "port", "5353");
	config_flags_add(&flags, "verbose", NULL); /* --verbose alone */
	config_flags_add(&flags, "port", "5354");  /* the last one wins */
	assert_int_equal(config_load(fx->path, "dns", fx->keys, NULL), 0);
	assert_int_equal(config_flags_apply(&flags, fx->keys, NULL), 0);
	assert_int_equal(fx->conf.port, 5354);
	assert_true(fx->conf.verbose);
	config_flags_add(&flags, "port", "70000");
	struct error *err = NULL;
	assert_int_equal(config_flags_apply(&flags, fx->keys, &err), -1);
	assert_non_null(strstr(err->msg, "--port"));
	error_free(err);
	config_flags_clear(&flags);
	assert_int_equal(flags.n, 0);
}

static void test_config_load__defaults_without_a_file(void **state)
{
	struct fixture *fx = *state;
	if (access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		skip(); /* this machine has one; the rule is tested below anyway */
	assert_int_equal(config_load(NULL, "dns", fx->keys, NULL), 0);
	assert_string_equal(fx->conf.mount, "/cluster");
	assert_string_equal(fx->conf.domain, "cluster.local");
	assert_int_equal(fx->conf.port, 10053);
	assert_false(fx->conf.verbose);
	assert_int_equal(fx->conf.resync_ms, 600000);
}

static void test_config_load__explicit_missing_file_is_an_error(void **state)
{
	struct fixture *fx = *state;
	struct error *err = NULL;
	assert_int_equal(config_load(fx->path, "dns", fx->keys, &err), -ENOENT);
	assert_non_null(strstr(err->msg, fx->path));
	error_free(err);
}

static void test_config_load__cluster_then_own_section_whatever_the_order(void **state)
{
	struct fixture *fx = *state;
	write_conf(fx, "# corral.conf\n"
		       "[dns]\n"
		       "port = 5353\n"
		       "cluster-domain = dns.example ; inline comment\n"
		       "\n"
		       "[cluster]\n"
		       "mount = /srv/cluster\n"
		       "cluster-domain = shared.example\n"
		       "service-cidr = 10.96.0.0/16\n" /* not ours: ignored */
		       "[sched]\n"
		       "whatever = 1\n" /* another daemon's: ignored */
		       "; a comment\n");
	assert_int_equal(config_load(fx->path, "dns", fx->keys, NULL), 0);
	assert_string_equal(fx->conf.mount, "/srv/cluster");
	assert_string_equal(fx->conf.domain, "dns.example");
	assert_int_equal(fx->conf.port, 5353);
	assert_false(fx->conf.verbose);		      /* default */
	assert_int_equal(fx->conf.resync_ms, 600000); /* default */
}

static void test_config_load__every_type(void **state)
{
	struct fixture *fx = *state;
	write_conf(fx, "[dns]\nverbose = YES\nresync-period = 1m30s\nmount = \n");
	assert_int_equal(config_load(fx->path, "dns", fx->keys, NULL), 0);
	assert_true(fx->conf.verbose);
	assert_int_equal(fx->conf.resync_ms, 90000);
	assert_string_equal(fx->conf.mount, "");
}

static void test_config_load__unknown_key_names_file_line_and_key(void **state)
{
	struct fixture *fx = *state;
	write_conf(fx, "[cluster]\nunknown-here = fine\n[dns]\nport = 53\nprot = 53\n");
	char want[256];
	snprintf(want, sizeof(want), "%s:5: unknown key 'prot' in [dns]", fx->path);
	expect_error(fx, want);
}

static void test_config_load__bad_value_names_file_line_and_key(void **state)
{
	struct fixture *fx = *state;
	char want[256];
	write_conf(fx, "[dns]\n\nport = 99999\n");
	snprintf(want, sizeof(want), "%s:3: port: 99999 is out of range 1..65535", fx->path);
	expect_error(fx, want);

	write_conf(fx, "[cluster]\nverbose = perhaps\n");
	snprintf(want, sizeof(want), "%s:2: verbose: 'perhaps' is not a boolean", fx->path);
	expect_error(fx, want);

	write_conf(fx, "[dns]\nresync-period = 10\n");
	snprintf(want, sizeof(want), "%s:2: resync-period: '10' is not a duration", fx->path);
	expect_error(fx, want);
}

static void test_config_load__syntax_errors(void **state)
{
	struct fixture *fx = *state;
	char want[256];
	write_conf(fx, "[dns]\nport = 53\njust words\n");
	snprintf(want, sizeof(want), "%s:3: expected", fx->path);
	expect_error(fx, want);

	write_conf(fx, "port = 53\n[dns]\n");
	snprintf(want, sizeof(want), "%s:1: key 'port' outside any section", fx->path);
	expect_error(fx, want);

	/* Longer than inih's line buffer: refused, not split into pieces. */
	char text[1024] = "[dns]\nmount = ";
	memset(text + strlen(text), 'x', 600);
	strcat(text, "\nport = 53\n");
	write_conf(fx, text);
	snprintf(want, sizeof(want), "%s:2: line longer than", fx->path);
	expect_error(fx, want);
}

static void test_config_load__last_line_without_newline(void **state)
{
	struct fixture *fx = *state;
	write_conf(fx, "[dns]\nport = 54");
	assert_int_equal(config_load(fx->path, "dns", fx->keys, NULL), 0);
	assert_int_equal(fx->conf.port, 54);
}

static void test_config_load__bad_default_is_reported(void **state)
{
	(void)state;
	int port = 0;
	struct config_key keys[] = {
	    {"port", CONFIG_INT, &port, "lots", 0, 0},
	    CONFIG_KEYS_END,
	};
	struct error *err = NULL;
	assert_true(config_load(NULL, "dns", keys, &err) < 0);
	assert_non_null(strstr(err->msg, "default: port"));
	error_free(err);
}

static void test_config_set__flags_win(void **state)
{
	struct fixture *fx = *state;
	write_conf(fx, "[dns]\nport = 5353\nmount = /from/file\n");
	assert_int_equal(config_load(fx->path, "dns", fx->keys, NULL), 0);
	assert_int_equal(config_set(fx->keys, "port", "6000", NULL), 0);
	assert_int_equal(config_set(fx->keys, "mount", "/from/flag", NULL), 0);
	assert_int_equal(fx->conf.port, 6000);
	assert_string_equal(fx->conf.mount, "/from/flag");

	struct error *err = NULL;
	assert_int_equal(config_set(fx->keys, "nope", "1", &err), -ENOENT);
	error_free(err);
	err = NULL;
	assert_true(config_set(fx->keys, "port", "0", &err) < 0);
	assert_non_null(strstr(err->msg, "port: 0 is out of range"));
	error_free(err);
	assert_int_equal(fx->conf.port, 6000); /* unchanged by a refused value */
}

static void test_config_parse_duration__spellings(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		uint64_t ms;
	} good[] = {
	    {"0", 0},	    {"0s", 0},	     {"250ms", 250},	 {"30s", 30000},
	    {"5m", 300000}, {"2h", 7200000}, {"1h30m", 5400000}, {"1m30s500ms", 90500},
	};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint64_t ms = 1;
		assert_int_equal(config_parse_duration(good[i].text, &ms, NULL), 0);
		assert_int_equal(ms, good[i].ms);
	}
	static const char *bad[] = {
	    "", "10", "s", "1x", "-1s", "1.5s", "1 s", "1sm", "99999999999999999999999s"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t ms = 7;
		struct error *err = NULL;
		if (config_parse_duration(bad[i], &ms, &err) == 0)
			fail_msg("'%s' parsed as a duration", bad[i]);
		assert_int_equal(ms, 7);
		error_free(err);
	}
}

static void test_config_parse_bool_and_int(void **state)
{
	(void)state;
	bool b;
	const char *yes[] = {"true", "Yes", "ON", "1"}, *no[] = {"false", "no", "Off", "0"};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(config_parse_bool(yes[i], &b, NULL), 0);
		assert_true(b);
		assert_int_equal(config_parse_bool(no[i], &b, NULL), 0);
		assert_false(b);
	}
	assert_true(config_parse_bool("maybe", &b, NULL) < 0);
	assert_true(config_parse_bool("", &b, NULL) < 0);

	long long v;
	assert_int_equal(config_parse_int("-12", 0, 0, &v, NULL), 0);
	assert_int_equal(v, -12);
	assert_true(config_parse_int("12a", 0, 0, &v, NULL) < 0);
	assert_true(config_parse_int("", 0, 0, &v, NULL) < 0);
	assert_true(config_parse_int("99999999999999999999", 0, 0, &v, NULL) < 0);
	assert_true(config_parse_int("11", 1, 10, &v, NULL) < 0);
}

static void test_config_load__int_outside_int_range_is_refused(void **state)
{
	(void)state;
	int n = 0;
	struct config_key keys[] = {
	    {"n", CONFIG_INT, &n, "3000000000", 0, 0},
	    CONFIG_KEYS_END,
	};
	assert_true(config_load(NULL, "dns", keys, NULL) < 0);
}

static void test_config_parse_double__numbers_and_ranges(void **state)
{
	(void)state;
	double v = 0;
	assert_int_equal(config_parse_double("0.55", 0, 1, &v, NULL), 0);
	assert_true(v > 0.5499 && v < 0.5501);
	assert_int_equal(config_parse_double("3", 0, 0, &v, NULL), 0);
	assert_true(v == 3.0);
	assert_true(config_parse_double("", 0, 0, &v, NULL) < 0);
	assert_true(config_parse_double("0.1x", 0, 0, &v, NULL) < 0);
	assert_true(config_parse_double("inf", 0, 0, &v, NULL) < 0);
	assert_true(config_parse_double("1.5", 0, 1, &v, NULL) < 0);
	double d = 0;
	struct config_key keys[] = {
	    {"rate", CONFIG_DOUBLE, &d, "0.1", 0, 1000},
	    CONFIG_KEYS_END,
	};
	assert_int_equal(config_load(NULL, "ctrl", keys, NULL), 0);
	assert_true(d > 0.0999 && d < 0.1001);
	assert_int_equal(config_set(keys, "rate", "2.5", NULL), 0);
	assert_true(d == 2.5);
	assert_true(config_set(keys, "rate", "-1", NULL) < 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_config_load__defaults_without_a_file),
	    T(test_config_load__explicit_missing_file_is_an_error),
	    T(test_config_load__cluster_then_own_section_whatever_the_order),
	    T(test_config_load__every_type),
	    T(test_config_load__unknown_key_names_file_line_and_key),
	    T(test_config_load__bad_value_names_file_line_and_key),
	    T(test_config_load__syntax_errors),
	    T(test_config_load__last_line_without_newline),
	    T(test_config_load__bad_default_is_reported),
	    T(test_config_set__flags_win),
	    T(test_config_parse_duration__spellings),
	    T(test_config_parse_bool_and_int),
	    T(test_config_load__int_outside_int_range_is_refused),
	    T(test_config_parse_double__numbers_and_ranges),
	    T(test_config_flags__win_over_the_file_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
