/* test_selector.c: label selectors from LabelSelector, equality maps and
 * kubectl strings; what they match, how they print, what they refuse. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"
#include "selector.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

/* One YAML document from text (flow style keeps the tests short). */
enum form { LABELSELECTOR, MAP, STRING };

static struct selector *parse_ok(enum form form, const char *text)
{
	cleanup_error struct error *err = NULL;
	cleanup_ynode struct ynode *node = NULL;
	struct selector *sel = NULL;
	int rc;
	if (form == STRING) {
		rc = selector_parse_string(text, &sel, &err);
	} else {
		node = y(text);
		rc = form == MAP ? selector_parse_map(node, &sel, &err)
				 : selector_parse_labelselector(node, &sel, &err);
	}
	if (rc < 0)
		fail_msg("\"%s\" rejected: %s", text, err ? err->msg : "?");
	assert_null(err);
	assert_non_null(sel);
	return sel;
}

/* Expects text to be refused with exactly the message want (or, when want
 * ends with '*', a message starting with the rest). */
static void parse_fails(enum form form, const char *text, const char *want)
{
	cleanup_error struct error *err = NULL;
	cleanup_ynode struct ynode *node = NULL;
	struct selector *sel = NULL;
	int rc;
	if (form == STRING) {
		rc = selector_parse_string(text, &sel, &err);
	} else {
		node = y(text);
		rc = form == MAP ? selector_parse_map(node, &sel, &err)
				 : selector_parse_labelselector(node, &sel, &err);
	}
	if (rc >= 0) {
		selector_free(sel);
		fail_msg("\"%s\" accepted", text);
	}
	assert_null(sel);
	assert_non_null(err);
	assert_int_equal(rc, -err->status);
	assert_int_equal(err->status, EINVAL);
	size_t n = strlen(want);
	bool prefix = n > 0 && want[n - 1] == '*';
	if (prefix ? strncmp(err->msg, want, n - 1) != 0 : strcmp(err->msg, want) != 0)
		fail_msg("\"%s\": message\n  \"%s\"\nwanted\n  \"%s\"", text, err->msg, want);
}

/* Does sel match the labels written as a YAML flow map ("~" for none)? */
static bool matches(const struct selector *sel, const char *labels)
{
	cleanup_ynode struct ynode *l = strcmp(labels, "~") ? y(labels) : NULL;
	return selector_matches(sel, l);
}

static void assert_format(const struct selector *sel, const char *want)
{
	cleanup_free char *s = selector_format(sel);
	assert_string_equal(s, want);
}

#define QNAME_MSG                                                                                  \
	"must consist of alphanumeric characters, '-', '_' or "                                    \
	"'.', and must start and end with an alphanumeric character"
#define VALUE_MSG                                                                                  \
	"a valid label must be an empty string or consist of "                                     \
	"alphanumeric characters, '-', '_' or '.', and must start and end "                        \
	"with an alphanumeric character"

/* ---- LabelSelector ---- */

static void test_selector__empty_labelselector_matches_everything(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = parse_ok(LABELSELECTOR, "{}");
	assert_true(selector_is_empty(sel));
	assert_false(selector_is_nothing(sel));
	assert_true(matches(sel, "~"));
	assert_true(matches(sel, "{}"));
	assert_true(matches(sel, "{app: web}"));
	assert_format(sel, "");

	/* Both fields present but null or empty is still empty. */
	cleanup_selector struct selector *sel2 =
	    parse_ok(LABELSELECTOR, "{matchLabels: {}, matchExpressions: []}");
	assert_true(selector_is_empty(sel2));
	cleanup_selector struct selector *sel3 =
	    parse_ok(LABELSELECTOR, "{matchLabels: ~, matchExpressions: }");
	assert_true(selector_is_empty(sel3));
}

static void test_selector__absent_labelselector_matches_nothing(void **state)
{
	(void)state;
	struct selector *sel = NULL;
	assert_int_equal(selector_parse_labelselector(NULL, &sel, NULL), 0);
	assert_true(selector_is_nothing(sel));
	assert_false(selector_is_empty(sel));
	assert_false(matches(sel, "~"));
	assert_false(matches(sel, "{app: web}"));
	assert_format(sel, "<none>");
	selector_free(sel);

	cleanup_ynode struct ynode *obj = y("{spec: {selector: null}}");
	cleanup_selector struct selector *sel2 = NULL;
	assert_int_equal(
	    selector_parse_labelselector(ynode_path(obj, "spec.selector"), &sel2, NULL), 0);
	assert_true(selector_is_nothing(sel2));
	assert_false(matches(sel2, "{}"));
}

static void test_selector__null_selector_pointer_matches_nothing(void **state)
{
	(void)state;
	assert_false(matches(NULL, "~"));
	assert_false(matches(NULL, "{a: b}"));
	assert_true(selector_is_nothing(NULL));
	assert_false(selector_is_empty(NULL));
	selector_free(NULL);
}

static void test_selector__match_labels_require_every_pair(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(LABELSELECTOR, "{matchLabels: {app: web, tier: frontend}}");
	assert_false(selector_is_empty(sel));
	assert_true(matches(sel, "{app: web, tier: frontend}"));
	assert_true(matches(sel, "{tier: frontend, x: y, app: web}"));
	assert_false(matches(sel, "{app: web}"));
	assert_false(matches(sel, "{app: db, tier: frontend}"));
	assert_false(matches(sel, "{}"));
	assert_false(matches(sel, "~"));
	assert_format(sel, "app=web,tier=frontend");
}

static void test_selector__match_expressions_in(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(LABELSELECTOR, "{matchExpressions: [{key: env, operator: In, values: [prod, "
				    "staging, prod]}]}");
	assert_true(matches(sel, "{env: prod}"));
	assert_true(matches(sel, "{env: staging, x: y}"));
	assert_false(matches(sel, "{env: dev}"));
	assert_false(matches(sel, "{}"));
	assert_false(matches(sel, "{env: }")); /* null reads as "" */
	assert_format(sel, "env in (prod,staging)");
}

static void test_selector__match_expressions_notin_matches_absent_key(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(LABELSELECTOR, "{matchExpressions: [{key: env, operator: NotIn, "
				    "values: [prod]}]}");
	assert_true(matches(sel, "{env: dev}"));
	assert_true(matches(sel, "{}"));
	assert_true(matches(sel, "~"));
	assert_false(matches(sel, "{env: prod}"));
	assert_format(sel, "env notin (prod)");
}

static void test_selector__match_expressions_exists_and_does_not_exist(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(LABELSELECTOR, "{matchExpressions: [{key: gpu, operator: Exists}, {key: "
				    "spot, operator: DoesNotExist, values: []}]}");
	assert_true(matches(sel, "{gpu: nvidia}"));
	assert_true(matches(sel, "{gpu: ''}"));
	assert_true(matches(sel, "{gpu: }"));
	assert_false(matches(sel, "{gpu: nvidia, spot: 'true'}"));
	assert_false(matches(sel, "{}"));
	assert_format(sel, "gpu,!spot");
}

static void test_selector__labels_and_expressions_are_anded_and_sorted(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(LABELSELECTOR, "{matchLabels: {zone: a, app: web}, matchExpressions: [{key: "
				    "tier, operator: NotIn, values: [db]}, {key: app, operator: "
				    "Exists}]}");
	assert_true(matches(sel, "{app: web, zone: a}"));
	assert_true(matches(sel, "{app: web, zone: a, tier: fe}"));
	assert_false(matches(sel, "{app: web, zone: a, tier: db}"));
	assert_false(matches(sel, "{app: web, zone: b}"));
	/* Sorted by key, stable: app=web was written before app exists. */
	assert_format(sel, "app=web,app,tier notin (db),zone=a");
}

static void test_selector__qualified_keys_and_odd_values(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(LABELSELECTOR, "{matchLabels: {app.kubernetes.io/name: web, version: 1.0, "
				    "canary: 'true', empty: ''}}");
	/* Unquoted scalars are taken as written. */
	assert_true(matches(sel, "{app.kubernetes.io/name: web, version: "
				 "'1.0', canary: 'true', empty: ''}"));
	assert_true(matches(sel, "{app.kubernetes.io/name: web, version: "
				 "1.0, canary: true, empty: }"));
	assert_false(matches(sel, "{app.kubernetes.io/name: web, version: "
				  "'1', canary: 'true', empty: ''}"));
}

static void test_selector__non_string_label_values_never_equal(void **state)
{
	(void)state;
	cleanup_selector struct selector *in = parse_ok(STRING, "a in (x)");
	cleanup_selector struct selector *notin = parse_ok(STRING, "a notin (x)");
	cleanup_selector struct selector *exists = parse_ok(STRING, "a");
	assert_false(matches(in, "{a: [x]}"));
	assert_true(matches(notin, "{a: {x: y}}"));
	assert_true(matches(exists, "{a: [x]}"));
	/* Labels that are not a mapping at all are no labels. */
	assert_false(matches(exists, "just-a-string"));
	assert_true(matches(notin, "[a, b]"));
}

static void test_selector__rejects_unsupported_operator(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: Exists}, {key: b, "
		    "operator: Foo, values: [x]}]}",
		    "matchExpressions[1].operator: Unsupported value: \"Foo\": "
		    "supported values: \"DoesNotExist\", \"Exists\", \"In\", "
		    "\"NotIn\"");
	/* Operators are case-sensitive, as in Kubernetes. */
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a, operator: in, values: [x]}]}",
		    "matchExpressions[0].operator: Unsupported value: \"in\"*");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a, operator: '', values: [x]}]}",
		    "matchExpressions[0].operator: Unsupported value: \"\"*");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a, operator: [In]}]}",
		    "matchExpressions[0].operator: must be a string");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a}]}",
		    "matchExpressions[0].operator: Required value");
}

static void test_selector__rejects_in_and_notin_without_values(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a, operator: In}]}",
		    "matchExpressions[0].values: Required value: must be "
		    "specified when `operator` is 'In' or 'NotIn'");
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: NotIn, values: "
		    "[]}]}",
		    "matchExpressions[0].values: Required value: must be "
		    "specified when `operator` is 'In' or 'NotIn'");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a, operator: In, values: ~}]}",
		    "matchExpressions[0].values: Required value*");
}

static void test_selector__rejects_exists_with_values(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: Exists, values: "
		    "[x]}]}",
		    "matchExpressions[0].values: Forbidden: may not be "
		    "specified when `operator` is 'Exists' or 'DoesNotExist'");
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: In, values: [x]}, "
		    "{key: b, operator: DoesNotExist, values: ['']}]}",
		    "matchExpressions[1].values: Forbidden*");
}

static void test_selector__rejects_invalid_expression_key(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: 'bad key', operator: Exists}]}",
		    "matchExpressions[0].key: Invalid value: \"bad key\": name "
		    "part " QNAME_MSG "*");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: 'a/b/c', operator: Exists}]}",
		    "matchExpressions[0].key: Invalid value: \"a/b/c\": a "
		    "qualified name*");
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: 'Bad.Prefix/a', operator: "
		    "Exists}]}",
		    "matchExpressions[0].key: Invalid value: "
		    "\"Bad.Prefix/a\": prefix part a lowercase RFC 1123*");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{operator: Exists}]}",
		    "matchExpressions[0].key: Required value");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: '', operator: Exists}]}",
		    "matchExpressions[0].key: Invalid value: \"\": name part "
		    "must be non-empty");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: {a: b}, operator: Exists}]}",
		    "matchExpressions[0].key: must be a string");
}

static void test_selector__rejects_invalid_expression_values(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: In, values: [ok, "
		    "'not ok']}]}",
		    "matchExpressions[0].values[1]: Invalid value: \"not "
		    "ok\": " VALUE_MSG "*");
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: In, values: [ok, "
		    "[x]]}]}",
		    "matchExpressions[0].values[1]: must be a string");
	parse_fails(LABELSELECTOR, "{matchExpressions: [{key: a, operator: In, values: x}]}",
		    "matchExpressions[0].values: must be a list of strings");
	char long_value[200];
	memset(long_value, 'v', 64);
	long_value[64] = '\0';
	cleanup_free char *text =
	    xasprintf("{matchExpressions: [{key: a, operator: NotIn, values: [%s]}]}", long_value);
	cleanup_free char *want =
	    xasprintf("matchExpressions[0].values[0]: Invalid value: \"%s\": must be "
		      "no more than 63 characters",
		      long_value);
	parse_fails(LABELSELECTOR, text, want);
}

static void test_selector__rejects_invalid_match_labels(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR, "{matchLabels: {'a b': x}}",
		    "matchLabels: Invalid value: \"a b\": name part " QNAME_MSG "*");
	parse_fails(LABELSELECTOR, "{matchLabels: {a: 'x y'}}",
		    "matchLabels: Invalid value: \"x y\": " VALUE_MSG "*");
	parse_fails(LABELSELECTOR, "{matchLabels: {a: [x]}}",
		    "matchLabels: Invalid value: the value of \"a\" must be a "
		    "string");
	parse_fails(LABELSELECTOR, "{matchLabels: [a, b]}",
		    "matchLabels: must be a map of label keys to values");
	parse_fails(LABELSELECTOR, "{matchLabels: app=web}",
		    "matchLabels: must be a map of label keys to values");
}

static void test_selector__rejects_malformed_structure(void **state)
{
	(void)state;
	parse_fails(LABELSELECTOR, "[a]",
		    "must be a mapping with matchLabels and/or "
		    "matchExpressions");
	parse_fails(LABELSELECTOR, "app=web",
		    "must be a mapping with matchLabels and/or "
		    "matchExpressions");
	parse_fails(LABELSELECTOR, "{matchLabel: {a: b}}", "unknown field \"matchLabel\"");
	parse_fails(LABELSELECTOR, "{matchExpressions: {key: a}}",
		    "matchExpressions: must be a list");
	parse_fails(LABELSELECTOR, "{matchExpressions: [a]}",
		    "matchExpressions[0]: must be a mapping with key, operator "
		    "and values");
	parse_fails(LABELSELECTOR,
		    "{matchExpressions: [{key: a, operator: Exists, value: "
		    "x}]}",
		    "matchExpressions[0]: unknown field \"value\"");
}

static void test_selector__failed_parse_leaves_out_alone(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *node = y("{matchLabels: {'-': x}}");
	struct selector *sel = NULL;
	assert_int_equal(selector_parse_labelselector(node, &sel, NULL), -EINVAL);
	assert_null(sel);
	assert_int_equal(selector_parse_string("a in", &sel, NULL), -EINVAL);
	assert_null(sel);
}

/* ---- equality maps (ReplicationController, Service) ---- */

static void test_selector__map_requires_every_pair(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = parse_ok(MAP, "{app: web, tier: fe}");
	assert_false(selector_is_empty(sel));
	assert_false(selector_is_nothing(sel));
	assert_true(matches(sel, "{app: web, tier: fe, pod-template-hash: x}"));
	assert_false(matches(sel, "{app: web}"));
	assert_false(matches(sel, "~"));
	assert_format(sel, "app=web,tier=fe");
}

static void test_selector__absent_or_empty_map_matches_nothing(void **state)
{
	(void)state;
	struct selector *sel = NULL;
	assert_int_equal(selector_parse_map(NULL, &sel, NULL), 0);
	assert_true(selector_is_nothing(sel));
	assert_false(matches(sel, "{}"));
	selector_free(sel);

	cleanup_selector struct selector *empty = parse_ok(MAP, "{}");
	assert_true(selector_is_nothing(empty));
	assert_false(selector_is_empty(empty));
	assert_false(matches(empty, "{app: web}"));
	assert_false(matches(empty, "~"));

	cleanup_selector struct selector *null = parse_ok(MAP, "~");
	assert_true(selector_is_nothing(null));
}

static void test_selector__map_rejects_invalid_keys_and_values(void **state)
{
	(void)state;
	parse_fails(MAP, "{'a b': x}", "Invalid value: \"a b\": name part " QNAME_MSG "*");
	parse_fails(MAP, "{app: 'web-'}", "Invalid value: \"web-\": " VALUE_MSG "*");
	parse_fails(MAP, "{app: {x: y}}", "Invalid value: the value of \"app\" must be a string");
	parse_fails(MAP, "[app, web]", "must be a map of label keys to values");
	parse_fails(MAP, "app=web", "must be a map of label keys to values");
}

static void test_selector__map_key_and_value_length_boundaries(void **state)
{
	(void)state;
	char name63[64], name64[65], prefix253[254];
	memset(name63, 'k', 63);
	name63[63] = '\0';
	memset(name64, 'k', 64);
	name64[64] = '\0';
	for (int i = 0; i < 253; i++)
		prefix253[i] = i % 64 == 63 ? '.' : 'p';
	prefix253[253] = '\0';

	cleanup_free char *ok_text = xasprintf("{%s/%s: %s}", prefix253, name63, name63);
	cleanup_selector struct selector *sel = parse_ok(MAP, ok_text);
	cleanup_free char *labels = xasprintf("{%s/%s: %s}", prefix253, name63, name63);
	assert_true(matches(sel, labels));

	cleanup_free char *long_name = xasprintf("{%s: v}", name64);
	parse_fails(MAP, long_name, "Invalid value: \"kkk*");
	cleanup_free char *long_value = xasprintf("{k: %s}", name64);
	cleanup_free char *want =
	    xasprintf("Invalid value: \"%s\": must be no more than 63 characters", name64);
	parse_fails(MAP, long_value, want);
	cleanup_free char *long_prefix = xasprintf("{%sp/k: v}", prefix253);
	parse_fails(MAP, long_prefix, "Invalid value: \"ppp*");
}

/* ---- the string form ---- */

static void test_selector__string_empty_matches_everything(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = parse_ok(STRING, "");
	assert_true(selector_is_empty(sel));
	assert_true(matches(sel, "~"));
	assert_true(matches(sel, "{a: b}"));
	cleanup_selector struct selector *blank = parse_ok(STRING, "  \t ");
	assert_true(selector_is_empty(blank));
}

static void test_selector__string_equality_and_inequality(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = parse_ok(STRING, "a=b,c!=d");
	assert_true(matches(sel, "{a: b}"));
	assert_true(matches(sel, "{a: b, c: x}"));
	assert_false(matches(sel, "{a: b, c: d}"));
	assert_false(matches(sel, "{a: x}"));
	assert_format(sel, "a=b,c!=d");

	cleanup_selector struct selector *dbl = parse_ok(STRING, "a==b");
	assert_true(matches(dbl, "{a: b}"));
	assert_format(dbl, "a=b");

	/* "a=" asks for the empty value. */
	cleanup_selector struct selector *empty = parse_ok(STRING, "a=");
	assert_true(matches(empty, "{a: ''}"));
	assert_false(matches(empty, "{a: x}"));
	assert_false(matches(empty, "{}"));
	assert_format(empty, "a=");
}

static void test_selector__string_set_operators(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = parse_ok(STRING, "e in (x,y),f notin (z)");
	assert_true(matches(sel, "{e: x}"));
	assert_true(matches(sel, "{e: y, f: w}"));
	assert_false(matches(sel, "{e: y, f: z}"));
	assert_false(matches(sel, "{e: w}"));
	assert_false(matches(sel, "{f: w}"));
	assert_format(sel, "e in (x,y),f notin (z)");

	/* Values come out sorted and once; "()" is the one value "". */
	cleanup_selector struct selector *set = parse_ok(STRING, "e in (y, x, y,),g in ()");
	assert_format(set, "e in (,x,y),g in ()");
	assert_true(matches(set, "{e: '', g: ''}"));
	assert_false(matches(set, "{e: x, g: v}"));
}

static void test_selector__string_existence(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel = parse_ok(STRING, "g,!h");
	assert_true(matches(sel, "{g: ''}"));
	assert_true(matches(sel, "{g: x, i: y}"));
	assert_false(matches(sel, "{g: x, h: y}"));
	assert_false(matches(sel, "{h: y}"));
	assert_format(sel, "g,!h");
}

static void test_selector__string_full_kubectl_example(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(STRING, "a=b,c!=d,e in (x,y),f notin (z),g,!h");
	assert_true(matches(sel, "{a: b, e: x, g: ''}"));
	assert_true(matches(sel, "{a: b, c: q, e: y, f: q, g: q}"));
	assert_false(matches(sel, "{a: b, e: x, g: '', h: ''}"));
	assert_false(matches(sel, "{a: b, c: d, e: x, g: ''}"));
	assert_format(sel, "a=b,c!=d,e in (x,y),f notin (z),g,!h");
}

static void test_selector__string_allows_whitespace(void **state)
{
	(void)state;
	cleanup_selector struct selector *sel =
	    parse_ok(STRING, "  a = b ,  c != d,e in(x ,y ),f notin ( z ), g , ! h ");
	assert_format(sel, "a=b,c!=d,e in (x,y),f notin (z),g,!h");
}

static void test_selector__string_format_round_trips(void **state)
{
	(void)state;
	static const char *const inputs[] = {
	    "a=b",
	    "z,!y,x in (3,1,2),w notin (q),v!=u,t==s,r=",
	    "example.com/app=web,app.kubernetes.io/name in (a,b)",
	    "k in (),a,a!=b,a=c",
	};
	for (size_t i = 0; i < ARRAY_SIZE(inputs); i++) {
		cleanup_selector struct selector *a = parse_ok(STRING, inputs[i]);
		cleanup_free char *sa = selector_format(a);
		cleanup_selector struct selector *b = parse_ok(STRING, sa);
		cleanup_free char *sb = selector_format(b);
		assert_string_equal(sa, sb);
	}
	cleanup_selector struct selector *sorted =
	    parse_ok(STRING, "z,!y,x in (3,1,2),w notin (q),v!=u,t==s,r=");
	assert_format(sorted, "r=,t=s,v!=u,w notin (q),x in (1,2,3),!y,z");
}

static void test_selector__string_rejects_syntax_errors(void **state)
{
	(void)state;
	parse_fails(STRING, "a=b,",
		    "label selector \"a=b,\": found end of string, expected a "
		    "requirement after ','");
	parse_fails(STRING, ",a",
		    "label selector \",a\": found ',' at column 1, expected a "
		    "label key or '!'");
	parse_fails(STRING, "a,,b",
		    "label selector \"a,,b\": found ',' at column 3, expected a "
		    "label key or '!'");
	parse_fails(STRING, "a in x",
		    "label selector \"a in x\": found 'x' at column 6, "
		    "expected '('");
	parse_fails(STRING, "a in (x",
		    "label selector \"a in (x\": found end of string, expected "
		    "',' or ')'");
	parse_fails(STRING, "a in",
		    "label selector \"a in\": found end of string, expected "
		    "'('");
	parse_fails(STRING, "!a=b",
		    "label selector \"!a=b\": found '=' at column 3, expected "
		    "',' or end of string");
	parse_fails(STRING, "!",
		    "label selector \"!\": found end of string, expected a "
		    "label key after '!'");
	parse_fails(STRING, "a=b=c",
		    "label selector \"a=b=c\": found '=' at column 4, expected "
		    "',' or end of string");
	parse_fails(STRING, "a b",
		    "label selector \"a b\": found 'b' at column 3, expected "
		    "'=', '==', '!=', 'in', 'notin', ',' or end of string");
	parse_fails(STRING, "a>1",
		    "label selector \"a>1\": found '>' at column 2, expected "
		    "'=', '==', '!=', 'in', 'notin', ',' or end of string");
	parse_fails(STRING, "a=(x)",
		    "label selector \"a=(x)\": found '(' at column 3, expected "
		    "',' or end of string");
	parse_fails(STRING, "a in (x) y",
		    "label selector \"a in (x) y\": found 'y' at column 10, "
		    "expected ',' or end of string");
}

static void test_selector__string_rejects_invalid_keys_and_values(void **state)
{
	(void)state;
	parse_fails(STRING, "a/b/c=x",
		    "label selector \"a/b/c=x\": key: Invalid value: \"a/b/c\": "
		    "a qualified name*");
	parse_fails(STRING, "-a",
		    "label selector \"-a\": key: Invalid value: \"-a\": name "
		    "part " QNAME_MSG "*");
	parse_fails(STRING, "!Bad_/k",
		    "label selector \"!Bad_/k\": key: Invalid value: "
		    "\"Bad_/k\": prefix part*");
	parse_fails(STRING, "a=-x",
		    "label selector \"a=-x\": values[0]: Invalid value: "
		    "\"-x\": " VALUE_MSG "*");
	parse_fails(STRING, "a in (x,y_)",
		    "label selector \"a in (x,y_)\": values[1]: Invalid value: "
		    "\"y_\": " VALUE_MSG "*");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_selector__empty_labelselector_matches_everything),
	    cmocka_unit_test(test_selector__absent_labelselector_matches_nothing),
	    cmocka_unit_test(test_selector__null_selector_pointer_matches_nothing),
	    cmocka_unit_test(test_selector__match_labels_require_every_pair),
	    cmocka_unit_test(test_selector__match_expressions_in),
	    cmocka_unit_test(test_selector__match_expressions_notin_matches_absent_key),
	    cmocka_unit_test(test_selector__match_expressions_exists_and_does_not_exist),
	    cmocka_unit_test(test_selector__labels_and_expressions_are_anded_and_sorted),
	    cmocka_unit_test(test_selector__qualified_keys_and_odd_values),
	    cmocka_unit_test(test_selector__non_string_label_values_never_equal),
	    cmocka_unit_test(test_selector__rejects_unsupported_operator),
	    cmocka_unit_test(test_selector__rejects_in_and_notin_without_values),
	    cmocka_unit_test(test_selector__rejects_exists_with_values),
	    cmocka_unit_test(test_selector__rejects_invalid_expression_key),
	    cmocka_unit_test(test_selector__rejects_invalid_expression_values),
	    cmocka_unit_test(test_selector__rejects_invalid_match_labels),
	    cmocka_unit_test(test_selector__rejects_malformed_structure),
	    cmocka_unit_test(test_selector__failed_parse_leaves_out_alone),
	    cmocka_unit_test(test_selector__map_requires_every_pair),
	    cmocka_unit_test(test_selector__absent_or_empty_map_matches_nothing),
	    cmocka_unit_test(test_selector__map_rejects_invalid_keys_and_values),
	    cmocka_unit_test(test_selector__map_key_and_value_length_boundaries),
	    cmocka_unit_test(test_selector__string_empty_matches_everything),
	    cmocka_unit_test(test_selector__string_equality_and_inequality),
	    cmocka_unit_test(test_selector__string_set_operators),
	    cmocka_unit_test(test_selector__string_existence),
	    cmocka_unit_test(test_selector__string_full_kubectl_example),
	    cmocka_unit_test(test_selector__string_allows_whitespace),
	    cmocka_unit_test(test_selector__string_format_round_trips),
	    cmocka_unit_test(test_selector__string_rejects_syntax_errors),
	    cmocka_unit_test(test_selector__string_rejects_invalid_keys_and_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
