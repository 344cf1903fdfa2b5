/* test_ynode.c: the YAML object model. Parsing (every accepted form and
 * every rejection class), emitting (block style, quoting only what would
 * read back as another type, literal blocks), round trips, and the node
 * API: paths, typed readers, set/take/del, sort, equal, clone. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"
#include "util.h"
#include "ynode.h"

/* ---- helpers ---- */

static struct ynode *parse_ok(const char *text)
{
	struct error *err = NULL;
	struct ynode *doc = NULL;
	if (yaml_parse_one(text, strlen(text), &doc, &err) < 0)
		fail_msg("yaml_parse_one failed: %s\n--- input\n%s", err ? err->msg : "(no error)",
			 text);
	assert_null(err);
	assert_non_null(doc);
	return doc;
}

/* Parses a stream expecting failure: checks the error contract (status,
 * -status returned, nothing handed out) and that the message holds want. */
static void parse_fails_len(const char *text, size_t len, const char *want)
{
	cleanup_error struct error *err = NULL;
	struct ynode **docs = (struct ynode **)&err; /* must be reset */
	size_t n = 99;
	int r = yaml_parse(text, len, &docs, &n, &err);
	if (r >= 0)
		fail_msg("yaml_parse accepted (%zu documents):\n%s", n, text);
	assert_non_null(err);
	assert_int_equal(err->status, EINVAL);
	assert_int_equal(r, -EINVAL);
	assert_null(docs);
	assert_int_equal(n, 0);
	if (!strstr(err->msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err->msg, want);
}

static void parse_fails(const char *text, const char *want)
{
	parse_fails_len(text, strlen(text), want);
}

static void free_docs(struct ynode **docs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ynode_free(docs[i]);
	free(docs);
}

/* The emitted form of a one-key mapping {k: v}, e.g. "k: '80'\n". */
static char *emit_pair(struct ynode *v)
{
	cleanup_ynode struct ynode *m = ynode_new_map();
	ynode_set(m, "k", v);
	return yaml_emit(m, NULL);
}

static void assert_emits_as(struct ynode *v, const char *want)
{
	cleanup_free char *got = emit_pair(v);
	if (strcmp(got, want) != 0)
		fail_msg("emitted \"%s\", want \"%s\"", got, want);
}

/* Parse, emit, parse again: the trees must be equal, and the second
 * emission must be the first (emitting is stable). */
static void assert_round_trip(const char *text)
{
	cleanup_ynode struct ynode *a = parse_ok(text);
	size_t len = 0;
	cleanup_free char *out = yaml_emit(a, &len);
	assert_int_equal(len, strlen(out));
	cleanup_ynode struct ynode *b = parse_ok(out);
	if (!ynode_equal(a, b))
		fail_msg("round trip differs\n--- input\n%s--- emitted\n%s", text, out);
	cleanup_free char *again = yaml_emit(b, NULL);
	assert_string_equal(again, out);
}

/* ---- parsing: accepted forms ---- */

static void test_ynode__parses_block_mapping_in_document_order(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("zeta: 1\n"
						 "alpha: two\n"
						 "mid:\n"
						 "  - a\n"
						 "  - b\n");
	assert_int_equal(d->type, YNODE_MAP);
	assert_int_equal(d->n, 3);
	assert_string_equal(ynode_map_key(d, 0)->str, "zeta");
	assert_string_equal(ynode_map_key(d, 1)->str, "alpha");
	assert_string_equal(ynode_map_key(d, 2)->str, "mid");
	struct ynode *mid = ynode_get(d, "mid");
	assert_int_equal(mid->type, YNODE_SEQ);
	assert_int_equal(mid->n, 2);
	assert_string_equal(ynode_item(mid, 1)->str, "b");
	assert_int_equal(ynode_get(d, "alpha")->len, 3);
}

static void test_ynode__records_source_lines(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: 1\n"
						 "# comment\n"
						 "b:\n"
						 "  c: x\n");
	assert_int_equal(d->line, 1);
	assert_int_equal(ynode_get(d, "a")->line, 1);
	assert_int_equal(ynode_path(d, "b.c")->line, 4);
	cleanup_ynode struct ynode *built = ynode_new_str("x");
	assert_int_equal(built->line, 0);
}

static void test_ynode__parses_flow_style(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d =
	    parse_ok("{a: [1, \"2\", {b: c}], d: {}, e: [], 'f g': null}\n");
	assert_int_equal(d->n, 4);
	assert_string_equal(ynode_path_str(d, "a[0]"), "1");
	assert_false(ynode_path(d, "a[0]")->quoted);
	assert_true(ynode_path(d, "a[1]")->quoted);
	assert_string_equal(ynode_path_str(d, "a[2].b"), "c");
	assert_int_equal(ynode_get(d, "d")->type, YNODE_MAP);
	assert_int_equal(ynode_get(d, "d")->n, 0);
	assert_int_equal(ynode_get(d, "e")->type, YNODE_SEQ);
	assert_int_equal(ynode_get(d, "e")->n, 0);
	assert_true(ynode_is_null(ynode_get(d, "f g")));
}

static void test_ynode__flow_and_block_forms_are_equal(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = parse_ok("{x: [1, 2], y: {z: w}}");
	cleanup_ynode struct ynode *b = parse_ok("x:\n- 1\n- 2\ny:\n  z: w\n");
	assert_true(ynode_equal(a, b));
}

static void test_ynode__remembers_quoting(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("plain: 80\n"
						 "double: \"80\"\n"
						 "single: '80'\n"
						 "tagged: !!str 80\n"
						 "literal: |\n"
						 "  80\n"
						 "word: web\n");
	assert_false(ynode_get(d, "plain")->quoted);
	assert_true(ynode_get(d, "double")->quoted);
	assert_true(ynode_get(d, "single")->quoted);
	assert_true(ynode_get(d, "tagged")->quoted);
	assert_true(ynode_get(d, "literal")->quoted);
	assert_string_equal(ynode_get(d, "literal")->str, "80\n");
	assert_false(ynode_get(d, "word")->quoted);
}

static void test_ynode__ignores_comments(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = parse_ok("# head\n"
						 "a: 1 # trailing\n"
						 "# between\n"
						 "b: 'x # not a comment'\n"
						 "c: x#y\n");
	assert_int_equal(a->n, 3);
	assert_string_equal(ynode_get(a, "a")->str, "1");
	assert_string_equal(ynode_get(a, "b")->str, "x # not a comment");
	assert_string_equal(ynode_get(a, "c")->str, "x#y");
}

static void test_ynode__parses_crlf_like_lf(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *crlf = parse_ok("kind: ConfigMap\r\n"
						    "data:\r\n"
						    "  script: |\r\n"
						    "    echo one\r\n"
						    "    echo two\r\n"
						    "  port: \"80\"\r\n");
	cleanup_ynode struct ynode *lf = parse_ok("kind: ConfigMap\n"
						  "data:\n"
						  "  script: |\n"
						  "    echo one\n"
						  "    echo two\n"
						  "  port: \"80\"\n");
	assert_true(ynode_equal(crlf, lf));
	/* Line breaks inside a block scalar come out as \n. */
	assert_string_equal(ynode_path_str(crlf, "data.script"), "echo one\necho two\n");
	assert_string_equal(ynode_path_str(crlf, "kind"), "ConfigMap");
}

static void test_ynode__parses_multiline_scalars(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("lit: |\n"
						 "  a\n"
						 "   b\n"
						 "strip: |-\n"
						 "  a\n"
						 "fold: >\n"
						 "  a\n"
						 "  b\n"
						 "plain: one\n"
						 "  two\n");
	assert_string_equal(ynode_get(d, "lit")->str, "a\n b\n");
	assert_string_equal(ynode_get(d, "strip")->str, "a");
	assert_string_equal(ynode_get(d, "fold")->str, "a b\n");
	assert_string_equal(ynode_get(d, "plain")->str, "one two");
}

static void test_ynode__parses_multiple_documents_skipping_empty_ones(void **state)
{
	(void)state;
	const char *text = "# leading comment\n"
			   "---\n"
			   "---\n"
			   "a: 1\n"
			   "---\n"
			   "# only a comment\n"
			   "---\n"
			   "b: 2\n"
			   "...\n"
			   "---\n"
			   "- c\n";
	struct ynode **docs = NULL;
	size_t n = 0;
	struct error *err = NULL;
	assert_int_equal(yaml_parse(text, strlen(text), &docs, &n, &err), 0);
	assert_null(err);
	assert_int_equal(n, 3);
	assert_string_equal(ynode_path_str(docs[0], "a"), "1");
	assert_string_equal(ynode_path_str(docs[1], "b"), "2");
	assert_string_equal(ynode_path_str(docs[2], "[0]"), "c");
	free_docs(docs, n);
}

static void test_ynode__parses_an_empty_stream_as_no_documents(void **state)
{
	(void)state;
	static const char *const empties[] = {"", "\n", "# nothing\n", "---\n", "---\n...\n"};
	for (size_t i = 0; i < ARRAY_SIZE(empties); i++) {
		struct ynode **docs = NULL;
		size_t n = 7;
		assert_int_equal(yaml_parse(empties[i], strlen(empties[i]), &docs, &n, NULL), 0);
		assert_int_equal(n, 0);
		free(docs);
	}
}

static void test_ynode__keeps_a_quoted_empty_document(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("''\n");
	assert_int_equal(d->type, YNODE_SCALAR);
	assert_true(d->quoted);
	assert_int_equal(d->len, 0);
}

static void test_ynode__parse_one_refuses_zero_documents(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	struct ynode *doc = (struct ynode *)&err;
	assert_int_equal(yaml_parse_one("# empty\n", 8, &doc, &err), -EINVAL);
	assert_null(doc);
	assert_non_null(err);
	assert_int_equal(err->status, EINVAL);
	assert_non_null(strstr(err->msg, "empty"));
}

static void test_ynode__parse_one_refuses_two_documents(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	struct ynode *doc = NULL;
	const char *text = "a: 1\n---\nb: 2\n";
	assert_int_equal(yaml_parse_one(text, strlen(text), &doc, &err), -EINVAL);
	assert_null(doc);
	assert_non_null(strstr(err->msg, "2 documents"));
}

static void test_ynode__parse_one_accepts_one_document_among_empty_ones(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("---\n---\n# x\n---\na: 1\n---\n");
	assert_string_equal(ynode_path_str(d, "a"), "1");
}

static void test_ynode__parses_only_len_bytes(void **state)
{
	(void)state;
	const char *text = "a: 1\nb: [unclosed";
	cleanup_ynode struct ynode *d = NULL;
	assert_int_equal(yaml_parse_one(text, 5, &d, NULL), 0);
	assert_int_equal(d->n, 1);
}

/* ---- parsing: anchors, aliases, merge keys ---- */

static void test_ynode__expands_aliases_as_copies(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("base: &b {image: nginx, ports: [80]}\n"
						 "one: *b\n"
						 "two: *b\n"
						 "s: &s text\n"
						 "t: *s\n");
	struct ynode *one = ynode_get(d, "one"), *two = ynode_get(d, "two");
	assert_true(ynode_equal(one, ynode_get(d, "base")));
	assert_true(ynode_equal(one, two));
	assert_ptr_not_equal(one, two);
	/* Copies, not shared: changing one leaves the others. */
	ynode_set(one, "image", ynode_new_str("busybox"));
	assert_string_equal(ynode_path_str(d, "two.image"), "nginx");
	assert_string_equal(ynode_path_str(d, "base.image"), "nginx");
	assert_string_equal(ynode_path_str(d, "t"), "text");
}

static void test_ynode__alias_refers_to_the_latest_anchor_of_its_name(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: &x 1\nb: &x 2\nc: *x\n");
	assert_string_equal(ynode_path_str(d, "c"), "2");
}

static void test_ynode__anchors_do_not_cross_documents(void **state)
{
	(void)state;
	const char *text = "a: &x 1\n---\nb: *x\n";
	struct ynode **docs = NULL;
	size_t n = 0;
	cleanup_error struct error *err = NULL;
	assert_int_equal(yaml_parse(text, strlen(text), &docs, &n, &err), -EINVAL);
	assert_non_null(strstr(err->msg, "unknown alias *x"));
}

static void test_ynode__applies_merge_keys(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("base: &base\n"
						 "  cpu: 100m\n"
						 "  memory: 64Mi\n"
						 "small:\n"
						 "  <<: *base\n"
						 "  cpu: 50m\n");
	struct ynode *small = ynode_get(d, "small");
	assert_int_equal(small->n, 2);
	/* An explicit key wins over the merged one, wherever it stands. */
	assert_string_equal(ynode_path_str(small, "cpu"), "50m");
	assert_string_equal(ynode_path_str(small, "memory"), "64Mi");
	assert_null(ynode_get(small, "<<"));
}

static void test_ynode__merges_a_list_of_mappings_first_one_winning(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: &a {x: 1, y: 1}\n"
						 "b: &b {y: 2, z: 2}\n"
						 "c:\n"
						 "  <<: [*a, *b]\n"
						 "  w: 0\n");
	struct ynode *c = ynode_get(d, "c");
	assert_int_equal(c->n, 4);
	assert_string_equal(ynode_path_str(c, "x"), "1");
	assert_string_equal(ynode_path_str(c, "y"), "1");
	assert_string_equal(ynode_path_str(c, "z"), "2");
	assert_string_equal(ynode_path_str(c, "w"), "0");
}

static void test_ynode__merges_an_inline_mapping(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("c:\n  <<: {x: 1}\n  y: 2\n");
	assert_string_equal(ynode_path_str(d, "c.x"), "1");
	assert_string_equal(ynode_path_str(d, "c.y"), "2");
}

static void test_ynode__quoted_merge_key_is_an_ordinary_key(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("c:\n  '<<': {x: 1}\n");
	assert_non_null(ynode_path(d, "c.<<"));
	assert_null(ynode_path(d, "c.x"));
}

static void test_ynode__refuses_merge_of_a_scalar(void **state)
{
	(void)state;
	parse_fails("c:\n  <<: text\n", "merge key '<<' needs a mapping");
}

/* An anchor set inside a merge value (or on the `<<` key) stays usable
 * after the mapping is done, though the merge value itself is dropped. */
static void test_ynode__anchor_inside_a_merge_value_outlives_it(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("m:\n"
						 "  <<: &a {x: 1}\n"
						 "  y: 2\n"
						 "n: *a\n"
						 "o:\n"
						 "  <<: [&b {z: 3}]\n"
						 "p: *b\n");
	assert_string_equal(ynode_path_str(d, "n.x"), "1");
	assert_null(ynode_path(d, "n.y"));
	assert_string_equal(ynode_path_str(d, "p.z"), "3");
	assert_string_equal(ynode_path_str(d, "o.z"), "3");
}

static void test_ynode__anchor_on_a_merge_key_outlives_it(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("m:\n  &k <<: {x: 1}\nn: *k\n");
	assert_string_equal(ynode_path_str(d, "m.x"), "1");
	assert_string_equal(ynode_path_str(d, "n"), "<<");
}

static void test_ynode__alias_within_the_budget_expands(void **state)
{
	(void)state;
	/* 10 x 10 x 10 = 1000 leaves: well within YAML_MAX_NODES. */
	cleanup_ynode struct ynode *d = parse_ok("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
						 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
						 "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n");
	assert_int_equal(ynode_get(d, "c")->n, 10);
	assert_string_equal(ynode_path_str(d, "c[9][9][9]"), "x");
}

/* ---- parsing: rejections ---- */

static void test_ynode__refuses_malformed_yaml_naming_the_line(void **state)
{
	(void)state;
	parse_fails("a: [1, 2\n", "line ");
	parse_fails("a: 1\nb: \"unterminated\n", "line ");
	parse_fails("a:\n  b: 1\n c: 2\n", "line 3");
	parse_fails("a: b: c\n", "line 1");
	parse_fails("- a\nb: c\n", "line 2");
	parse_fails("\ta: 1\n", "line 1");
	parse_fails("key: @reserved\n", "line 1");
}

static void test_ynode__refuses_invalid_utf8(void **state)
{
	(void)state;
	parse_fails("a: \xff\xfe\n", "UTF-8");
}

static void test_ynode__refuses_duplicate_keys(void **state)
{
	(void)state;
	parse_fails("a: 1\nb: 2\na: 3\n", "line 3 column 1: duplicate key \"a\"");
	parse_fails("x:\n  c: 1\n  c: 1\n", "duplicate key \"c\"");
	parse_fails("{a: 1, a: 2}\n", "duplicate key \"a\"");
	/* Quoting does not make a key another key. */
	parse_fails("a: 1\n'a': 2\n", "duplicate key \"a\"");
}

static void test_ynode__refuses_an_alias_bomb(void **state)
{
	(void)state;
	parse_fails("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
		    "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
		    "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n",
		    "alias expansion limit");
}

/* l0..l4 hold about 53,000 nodes (l4 alone 46,811); a merge of four
 * copies of l4 stays within the budget, of five does not. */
static char *merge_bomb(int copies)
{
	char text[4096];
	size_t len =
	    (size_t)snprintf(text, sizeof(text), "l0: &l0 {a: [x, x, x, x, x, x, x, x]}\n");
	for (int i = 1; i < 5; i++)
		len += (size_t)snprintf(
		    text + len, sizeof(text) - len,
		    "l%d: &l%d {a: [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]}\n", i, i,
		    i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	len += (size_t)snprintf(text + len, sizeof(text) - len, "m:\n  <<: [*l4");
	for (int i = 1; i < copies; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, ", *l4");
	snprintf(text + len, sizeof(text) - len, "]\n");
	return xstrdup(text);
}

static void test_ynode__refuses_an_alias_bomb_through_merge_keys(void **state)
{
	(void)state;
	cleanup_free char *fits = merge_bomb(4);
	cleanup_ynode struct ynode *d = parse_ok(fits);
	assert_true(ynode_equal(ynode_path(d, "m.a"), ynode_path(d, "l4.a")));
	cleanup_free char *bomb = merge_bomb(5);
	parse_fails(bomb, "line 7: document expands to more than 262144 nodes");
}

static void test_ynode__budgets_hold_for_the_whole_stream(void **state)
{
	(void)state;
	/* ~123k nodes per document: two documents fit the budget, three do
	 * not (a drop box holds many documents, each may alias). */
	const char *doc = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			  "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
	cleanup_free char *two = xasprintf("%s---\n%s", doc, doc);
	struct ynode **docs = NULL;
	size_t n = 0;
	struct error *err = NULL;
	if (yaml_parse(two, strlen(two), &docs, &n, &err) < 0)
		fail_msg("%s", err->msg);
	assert_int_equal(n, 2);
	free_docs(docs, n);
	cleanup_free char *three = xasprintf("%s---\n%s---\n%s", doc, doc, doc);
	parse_fails(three, "line 17: document expands to more than 262144 nodes");

	/* Bytes too: 2.1 MB of aliased text a document, two documents. */
	cleanup_free char *s = xmalloc(700 * 1024 + 1);
	memset(s, 'x', 700 * 1024);
	s[700 * 1024] = '\0';
	cleanup_free char *bytes =
	    xasprintf("a: &a %s\nb: [*a, *a]\n---\na: &a %s\nb: [*a, *a]\n", s, s);
	parse_fails(bytes, "line 5: alias *a expands the document to more than 4194304 bytes");
}

/* "c: <pad>\na: &a <s>\nb: [*a, ...]\n": 3 + pad + (aliases + 1) * s bytes
 * of scalar text. */
static char *aliased_text(size_t pad, size_t s, size_t aliases)
{
	size_t cap = pad + s + 4 * aliases + 64;
	char *t = xmalloc(cap);
	size_t len = 0;
	memcpy(t + len, "c: ", 3), len += 3;
	memset(t + len, 'y', pad), len += pad;
	memcpy(t + len, "\na: &a ", 7), len += 7;
	memset(t + len, 'x', s), len += s;
	memcpy(t + len, "\nb: [", 5), len += 5;
	for (size_t i = 0; i < aliases; i++) {
		memcpy(t + len, i ? ", *a" : "*a", i ? 4 : 2);
		len += i ? 4 : 2;
	}
	memcpy(t + len, "]\n", 3);
	return t;
}

static void test_ynode__byte_budget_just_under_and_just_over(void **state)
{
	(void)state;
	/* 3 + 65533 + 63 * 65536 = YAML_MAX_BYTES exactly. */
	assert_int_equal(3 + 65533 + 63 * 65536, YAML_MAX_BYTES);
	cleanup_free char *fits = aliased_text(65533, 65536, 62);
	cleanup_ynode struct ynode *d = parse_ok(fits);
	assert_int_equal(ynode_get(d, "b")->n, 62);
	assert_int_equal(ynode_path(d, "b[61]")->len, 65536);
	cleanup_free char *over = aliased_text(65534, 65536, 62);
	/* Refused at the alias that goes over, before it is copied. */
	parse_fails(over, "line 3: alias *a expands the document to more than 4194304 bytes of "
			  "text (alias expansion limit)");
}

static void test_ynode__byte_budget_counts_aliases_of_aliases(void **state)
{
	(void)state;
	/* 10,000 copies of a 1,000-byte string through four levels of
	 * anchors: 10 MB of text in 11,111 nodes. */
	char s[1001];
	memset(s, 'x', 1000);
	s[1000] = '\0';
	cleanup_free char *text = xasprintf("s: &s %s\n"
					    "a: &a [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n"
					    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
					    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
					    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
					    s);
	parse_fails(text, "line 5: alias *c expands the document to more than 4194304 bytes");
}

static void test_ynode__byte_budget_counts_keys_and_values_of_mappings(void **state)
{
	(void)state;
	cleanup_free char *big = xmalloc(200001);
	memset(big, 'k', 200000);
	big[200000] = '\0';
	/* The key's bytes count: 25 copies of a 200 kB key (explicit: an
	 * implicit key is at most 1024 characters). */
	cleanup_free char *keys = xasprintf(
	    "m: &m\n  ? %s\n  : v\nl: [*m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, "
	    "*m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m]\n",
	    big);
	parse_fails(keys, "line 4: alias *m expands the document to more than 4194304 bytes");
	/* And a value's, nested in a mapping of a mapping. */
	cleanup_free char *vals = xasprintf(
	    "m: &m {a: {b: %s}}\nl: [*m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, *m, "
	    "*m, *m, *m, *m, *m, *m, *m, *m, *m, *m]\n",
	    big);
	parse_fails(vals, "line 2: alias *m expands");
}

static void test_ynode__byte_budget_counts_merge_keys(void **state)
{
	(void)state;
	cleanup_free char *big = xmalloc(400001);
	memset(big, 'v', 400000);
	big[400000] = '\0';
	size_t cap = 400000 + 64 + 20 * 16;
	cleanup_free char *text = xmalloc(cap);
	size_t len = (size_t)snprintf(text, cap, "m: &m {a: %s}\nl:\n", big);
	for (int i = 0; i < 16; i++)
		len += (size_t)snprintf(text + len, cap - len, "- <<: *m\n");
	/* The tenth copy goes over: 11 x 400 kB > 4 MiB. */
	parse_fails(text, "line 12: alias *m expands the document to more than 4194304 bytes");
	/* Merged into a list of mappings, too. */
	cleanup_free char *seq = xasprintf("m: &m {a: %s}\nn: &n {b: %s}\nl:\n"
					   "- <<: [*m, *n]\n- <<: [*m, *n]\n- <<: [*m, *n]\n"
					   "- <<: [*m, *n]\n- <<: [*m, *n]\n",
					   big, big);
	parse_fails(seq, "alias *");
}

static void test_ynode__refuses_nul_bytes_saying_where(void **state)
{
	(void)state;
	parse_fails_len("\0a: b\n", 6, "line 1 column 1 (byte offset 0): NUL byte");
	parse_fails_len("a: b\nc: d\0e\n", 12, "line 2 column 5 (byte offset 9): NUL byte");
	parse_fails_len("a: b\n\0", 6, "line 2 column 1 (byte offset 5): NUL byte");
	parse_fails_len("a: b\r\nc: d\r\0", 12, "line 3 column 1 (byte offset 11)");
	/* Columns count characters, as libyaml's do. */
	parse_fails_len("\xc3\xa9: \0", 5, "line 1 column 4 (byte offset 4)");
	/* Nothing past the NUL is read: a string copy of the bytes ends
	 * there (valgrind and ASan see the over-read otherwise). */
	cleanup_free char *cut = xstrndup("kind: Pod\0 and more", 19);
	parse_fails_len(cut, 19, "line 1 column 10 (byte offset 9): NUL byte");
	/* A NUL within a document of several. */
	parse_fails_len("a: 1\n---\nb: 2\0\n", 15, "line 3 column 5");
}

static void test_ynode__utf16_text_still_parses(void **state)
{
	(void)state;
	static const char le[] = "\xff\xfe"
				 "a\0:\0 \0b\0\n\0";
	cleanup_ynode struct ynode *d = NULL;
	assert_int_equal(yaml_parse_one(le, sizeof(le) - 1, &d, NULL), 0);
	assert_string_equal(ynode_path_str(d, "a"), "b");
	/* A NUL character in UTF-16 is libyaml's to refuse. */
	static const char nul[] = "\xff\xfe"
				  "a\0:\0 \0\0\0\n\0";
	parse_fails_len(nul, sizeof(nul) - 1, "line 1");
}

static void test_ynode__refuses_a_recursive_alias(void **state)
{
	(void)state;
	parse_fails("a: &x\n  b: *x\n", "alias *x refers to a node that contains it");
	parse_fails("&s [1, [2, *s]]\n", "refers to a node that contains it");
}

static void test_ynode__refuses_an_unknown_alias(void **state)
{
	(void)state;
	parse_fails("a: *nope\n", "line 1: unknown alias *nope");
	/* An alias before its anchor is unknown too. */
	parse_fails("a: *later\nb: &later 1\n", "unknown alias *later");
}

static char *nested_seqs(int depth)
{
	char *s = xmalloc(2 * (size_t)depth + 2);
	memset(s, '[', (size_t)depth);
	memset(s + depth, ']', (size_t)depth);
	s[2 * depth] = '\n';
	s[2 * depth + 1] = '\0';
	return s;
}

static void test_ynode__refuses_nesting_deeper_than_the_limit(void **state)
{
	(void)state;
	cleanup_free char *ok = nested_seqs(YAML_MAX_DEPTH);
	cleanup_ynode struct ynode *d = parse_ok(ok);
	assert_int_equal(d->type, YNODE_SEQ);
	cleanup_free char *deep = nested_seqs(YAML_MAX_DEPTH + 1);
	parse_fails(deep, "nesting deeper than 128");
	cleanup_free char *deeper = nested_seqs(5000);
	parse_fails(deeper, "nesting deeper than");
}

static void test_ynode__refuses_alias_copies_nested_past_the_limit(void **state)
{
	(void)state;
	/* The anchor is 127 levels under a root mapping: 128, the limit. A
	 * copy of it directly under the root fits; one level lower does not
	 * (and could not be read back once emitted). */
	cleanup_free char *seqs = nested_seqs(YAML_MAX_DEPTH - 1);
	seqs[strlen(seqs) - 1] = '\0';
	cleanup_free char *fits = xasprintf("a: &a %s\nb: *a\n", seqs);
	cleanup_ynode struct ynode *d = parse_ok(fits);
	assert_true(ynode_equal(ynode_get(d, "a"), ynode_get(d, "b")));
	cleanup_free char *too_deep = xasprintf("a: &a %s\nb: [*a]\n", seqs);
	parse_fails(too_deep, "line 2: alias *a: nesting deeper than 128");
}

static void test_ynode__refuses_nul_in_a_scalar(void **state)
{
	(void)state;
	parse_fails("a: \"x\\0y\"\n", "line 1: NUL character in a scalar");
	parse_fails("\"k\\0\": v\n", "NUL character");
	/* A raw NUL byte is refused by the reader. */
	parse_fails_len("a: x\0y\n", 7, "line");
}

static void test_ynode__refuses_non_scalar_keys(void **state)
{
	(void)state;
	parse_fails("? [a, b]\n: 1\n", "line 1 column 3: mapping keys must be scalars");
	parse_fails("{[a]: 1}\n", "mapping keys must be scalars");
	parse_fails("? {a: b}\n: 1\n", "mapping keys must be scalars");
}

static void test_ynode__an_error_in_a_later_document_drops_the_earlier_ones(void **state)
{
	(void)state;
	parse_fails("a: 1\n---\nb: 2\n---\nc: [\n", "line");
}

/* ---- emitting ---- */

static void test_ynode__emits_block_style_with_sequences_not_indented(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d =
	    parse_ok("{apiVersion: v1, kind: Pod, metadata: {name: web, "
		     "labels: {app: web}}, spec: {containers: [{name: web, "
		     "image: 'nginx:1.25', ports: [{containerPort: 80}]}]}}");
	cleanup_free char *out = yaml_emit(d, NULL);
	assert_string_equal(out, "apiVersion: v1\n"
				 "kind: Pod\n"
				 "metadata:\n"
				 "  name: web\n"
				 "  labels:\n"
				 "    app: web\n"
				 "spec:\n"
				 "  containers:\n"
				 "  - name: web\n"
				 "    image: nginx:1.25\n"
				 "    ports:\n"
				 "    - containerPort: 80\n");
}

static void test_ynode__emits_empty_collections_in_flow_style(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: {}\nb: []\n");
	cleanup_free char *out = yaml_emit(d, NULL);
	assert_string_equal(out, "a: {}\nb: []\n");
}

static void test_ynode__emits_plain_empty_as_null(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a:\nb: ~\n");
	cleanup_free char *out = yaml_emit(d, NULL);
	assert_string_equal(out, "a: null\nb: ~\n");
	/* ... and that reads back as an equal tree. */
	cleanup_ynode struct ynode *back = parse_ok(out);
	assert_true(ynode_equal(d, back));
}

static void test_ynode__quotes_strings_that_would_read_back_as_another_type(void **state)
{
	(void)state;
	static const char *const typed[] = {
	    "80",
	    "-1",
	    "+7",
	    "0",
	    "08",
	    "1_000",
	    "0x1F",
	    "0o17",
	    "0b101",
	    "017",
	    "1.5",
	    ".5",
	    "1e3",
	    "1E+3",
	    "-2.5e-3",
	    "1:30",
	    "190:20:30",
	    "true",
	    "True",
	    "TRUE",
	    "false",
	    "yes",
	    "Yes",
	    "no",
	    "NO",
	    "on",
	    "off",
	    "y",
	    "N",
	    "null",
	    "Null",
	    "NULL",
	    "~",
	    "",
	    ".inf",
	    "-.Inf",
	    "+.INF",
	    ".nan",
	    ".NaN",
	    "2026-01-01",
	    "2026-1-1",
	    "2026-01-01T10:00:00Z",
	    "2026-01-01 10:00:00",
	    "2026-01-01t1",
	    "2026-12-3",
	    "<<",
	    "=",
	};
	for (size_t i = 0; i < ARRAY_SIZE(typed); i++) {
		cleanup_free char *want = xasprintf("k: '%s'\n", typed[i]);
		assert_emits_as(ynode_new_str(typed[i]), want);
	}
}

static void test_ynode__does_not_quote_ordinary_strings(void **state)
{
	(void)state;
	static const char *const plain[] = {
	    "ef4013c0-be33-4dd1-a835-d09be2750abf", /* uid */
	    "4013c0ef-be33-4dd1-a835-d09be2750abf", /* uid starting with digits */
	    "12345678-1234-4234-8234-123456789012", /* uid of digits only */
	    "nginx:1.25",
	    "registry.local:5000/app:2026-01-01",
	    "v1",
	    "apps/v1",
	    "10.0.0.1",
	    "1.2.3",
	    "100m",
	    "1Gi",
	    "500Mi",
	    "80/TCP",
	    "web-0",
	    "a b",
	    "yesterday",
	    "nullable",
	    "truely",
	    "0xZZ",
	    "1e",
	    "2026-01-01x",
	    "2026-123-01",
	    "2026-01-123",
	    "12026-01-01",
	    "2026-01-",
	    "café",
	};
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
		cleanup_free char *want = xasprintf("k: %s\n", plain[i]);
		assert_emits_as(ynode_new_str(plain[i]), want);
	}
}

static void test_ynode__quotes_strings_yaml_syntax_needs_quoted(void **state)
{
	(void)state;
	/* Not typed, but not writable plain either: libyaml quotes them, and
	 * they read back as the same text. */
	static const char *const special[] = {"- x", "x: y", "#",   "a #b",  "@x",     "*x", "&x",
					      "!x",  "{a}",  "[a]", " lead", "trail ", "'",  "\""};
	for (size_t i = 0; i < ARRAY_SIZE(special); i++) {
		cleanup_ynode struct ynode *m = ynode_new_map();
		ynode_set(m, "k", ynode_new_str(special[i]));
		cleanup_free char *out = yaml_emit(m, NULL);
		cleanup_ynode struct ynode *back = parse_ok(out);
		assert_string_equal(ynode_path_str(back, "k"), special[i]);
		assert_true(ynode_get(back, "k")->quoted);
	}
}

static void test_ynode__keeps_plain_scalars_plain(void **state)
{
	(void)state;
	assert_emits_as(ynode_new_plain("80"), "k: 80\n");
	assert_emits_as(ynode_new_int(-42), "k: -42\n");
	assert_emits_as(ynode_new_int(LLONG_MIN), "k: -9223372036854775808\n");
	assert_emits_as(ynode_new_bool(true), "k: true\n");
	assert_emits_as(ynode_new_bool(false), "k: false\n");
	assert_emits_as(ynode_new_plain("2026-01-01"), "k: 2026-01-01\n");
}

static void test_ynode__quoted_number_stays_a_string_through_a_round_trip(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d =
	    parse_ok("port: \"80\"\nreplicas: 3\nflag: 'true'\nday: \"2026-01-01\"\n");
	cleanup_free char *out = yaml_emit(d, NULL);
	assert_string_equal(out, "port: '80'\nreplicas: 3\nflag: 'true'\nday: '2026-01-01'\n");
	cleanup_ynode struct ynode *back = parse_ok(out);
	long long v;
	assert_int_equal(ynode_int(ynode_get(back, "port"), &v), -1);
	assert_int_equal(ynode_int(ynode_get(back, "replicas"), &v), 0);
	assert_int_equal(v, 3);
	bool b;
	assert_int_equal(ynode_bool(ynode_get(back, "flag"), &b), -1);
}

static void test_ynode__emits_multiline_strings_as_literal_blocks(void **state)
{
	(void)state;
	assert_emits_as(ynode_new_str("echo one\necho two\n"), "k: |\n  echo one\n  echo two\n");
	assert_emits_as(ynode_new_str("a\nb"), "k: |-\n  a\n  b\n");
	cleanup_ynode struct ynode *d = parse_ok("script: |\n  #!/bin/sh\n  exec app --port 80\n");
	cleanup_free char *out = yaml_emit(d, NULL);
	assert_string_equal(out, "script: |\n  #!/bin/sh\n  exec app --port 80\n");
}

static void test_ynode__multiline_strings_round_trip(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "a\nb\n",	  "a\n\n\nb\n",	 "  indented\nnext\n", "trailing \nspace\n",
	    "keep\n\n\n", "\nleading\n", "tab\there\n",	       "x\r\ny\n"};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		cleanup_ynode struct ynode *m = ynode_new_map();
		ynode_set(m, "k", ynode_new_str(texts[i]));
		cleanup_free char *out = yaml_emit(m, NULL);
		cleanup_ynode struct ynode *back = parse_ok(out);
		if (strcmp(ynode_path_str(back, "k"), texts[i]) != 0)
			fail_msg("\"%s\" came back as \"%s\" from\n%s", texts[i],
				 ynode_path_str(back, "k"), out);
	}
}

static void test_ynode__emit_reports_its_length(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: [1, 2]\n");
	size_t len = 0;
	cleanup_free char *out = yaml_emit(d, &len);
	assert_int_equal(len, strlen(out));
	cleanup_free char *again = yaml_emit(d, NULL);
	assert_string_equal(out, again);
}

/* yaml_emit_within(d, n) holds exactly for n >= the emitted length. */
static void emit_within_is_exact(const struct ynode *d)
{
	size_t len = 0;
	cleanup_free char *out = yaml_emit(d, &len);
	if (!yaml_emit_within(d, len))
		fail_msg("yaml_emit_within(%zu) refuses what emits in %zu bytes:\n%s", len, len,
			 out);
	if (yaml_emit_within(d, len - 1))
		fail_msg("yaml_emit_within(%zu) accepts what emits in %zu bytes:\n%s", len - 1, len,
			 out);
	assert_true(yaml_emit_within(d, SIZE_MAX));
}

static void test_ynode__emit_within_is_exact_at_the_limit(void **state)
{
	(void)state;
	static const char *docs[] = {
	    "a: [1, 2]\n",
	    "{}\n",
	    "[]\n",
	    "a: {b: {c: {d: [[[[{e: \"x\\ny\\nz\\n\"}]]]]}}}\n",
	    "a: {b: {c: \"\\x01\\x02\\t\\x7f\\u0085\\u2028x\\u2029\"}}\n",
	    "a: {b: [\"it's\", 'x''y', '', \"\\r\\r\\r\", \" lead\", \"trail \"]}\n",
	    "? "
	    "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
	    "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: v\n",
	    "a: [null, ~, '', \"\", {}, [], true, '1', 1, 1.5, \"\\n\\n\"]\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
		cleanup_ynode struct ynode *d = parse_ok(docs[i]);
		emit_within_is_exact(d);
	}
	/* Large enough that the bound does not decide, but the emit: every
	 * line of a literal block indented. */
	cleanup_free char *lines = xmalloc(2 * 50000 + 1);
	for (size_t i = 0; i < 50000; i++)
		memcpy(lines + 2 * i, "x\n", 2);
	lines[2 * 50000] = '\0';
	cleanup_ynode struct ynode *d = ynode_new_map();
	ynode_set(ynode_get_map(ynode_get_map(d, "a"), "b"), "c", ynode_new_str(lines));
	emit_within_is_exact(d);
	size_t len = 0;
	cleanup_free char *out = yaml_emit(d, &len);
	assert_true(len > 4 * 50000); /* "      x\n" a line */
	assert_false(yaml_emit_within(d, 2 * 50000 + 64));
}

static void test_ynode__emits_scalar_and_sequence_documents(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *s = ynode_new_str("hello");
	cleanup_free char *out = yaml_emit(s, NULL);
	cleanup_ynode struct ynode *back = parse_ok(out);
	assert_string_equal(back->str, "hello");
	cleanup_ynode struct ynode *seq = ynode_new_seq();
	ynode_append(seq, ynode_new_int(1));
	ynode_append(seq, ynode_new_str("1"));
	cleanup_free char *sout = yaml_emit(seq, NULL);
	assert_string_equal(sout, "- 1\n- '1'\n");
}

static void test_ynode__round_trips_kubernetes_objects(void **state)
{
	(void)state;
	assert_round_trip("apiVersion: apps/v1\n"
			  "kind: Deployment\n"
			  "metadata:\n"
			  "  name: api\n"
			  "  namespace: dev\n"
			  "  uid: ef4013c0-be33-4dd1-a835-d09be2750abf\n"
			  "  resourceVersion: \"12\"\n"
			  "  annotations:\n"
			  "    deployment.kubernetes.io/revision: \"3\"\n"
			  "spec:\n"
			  "  replicas: 3\n"
			  "  selector:\n"
			  "    matchLabels: {app: api}\n"
			  "  strategy:\n"
			  "    rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}\n"
			  "  template:\n"
			  "    metadata:\n"
			  "      labels: {app: api}\n"
			  "    spec:\n"
			  "      containers:\n"
			  "      - name: api\n"
			  "        image: registry.local/api:2026-01-01\n"
			  "        args: [\"--port\", \"8080\", --verbose=true]\n"
			  "        env:\n"
			  "        - {name: MODE, value: \"on\"}\n"
			  "        - name: EMPTY\n"
			  "          value: \"\"\n"
			  "        - name: UNSET\n"
			  "          value:\n"
			  "        command:\n"
			  "        - sh\n"
			  "        - -c\n"
			  "        - |\n"
			  "          echo start\n"
			  "          exec api\n");
}

static void test_ynode__round_trips_odd_scalars(void **state)
{
	(void)state;
	assert_round_trip("a: \"tab\\there\"\n"
			  "b: \"bell\\a\"\n"
			  "c: \"caf\\u00e9\"\n"
			  "d: \"line\\u2028sep\"\n"
			  "e: \"cr\\rlf\"\n"
			  "f: 'it''s'\n"
			  "g: \"\\\"q\\\"\"\n"
			  "h: \"\\\\\"\n"
			  "i: plain with  two spaces\n"
			  "j: ''\n"
			  "? |\n"
			  "  multi\n"
			  "  line key\n"
			  ": v\n"
			  "? ''\n"
			  ": empty key\n");
}

static void test_ynode__round_trips_anchors_merges_and_flow(void **state)
{
	(void)state;
	assert_round_trip("base: &b {cpu: 100m}\n"
			  "x:\n"
			  "  <<: *b\n"
			  "  mem: 1Gi\n"
			  "list: [*b, *b, [1, [2, [3]]]]\n"
			  "~: null key\n");
}

/* ---- node API ---- */

static void test_ynode__constructors_set_quoting(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *s = ynode_new_str("80");
	cleanup_ynode struct ynode *p = ynode_new_plain("80");
	cleanup_ynode struct ynode *n = ynode_new_strn("abcdef", 3);
	cleanup_ynode struct ynode *i = ynode_new_int(1234567890123LL);
	cleanup_ynode struct ynode *b = ynode_new_bool(true);
	assert_true(s->quoted);
	assert_false(p->quoted);
	assert_string_equal(n->str, "abc");
	assert_int_equal(n->len, 3);
	assert_string_equal(i->str, "1234567890123");
	assert_false(i->quoted);
	assert_string_equal(b->str, "true");
	assert_false(b->quoted);
	cleanup_ynode struct ynode *m = ynode_new_map();
	cleanup_ynode struct ynode *q = ynode_new_seq();
	assert_int_equal(m->type, YNODE_MAP);
	assert_int_equal(q->type, YNODE_SEQ);
	assert_int_equal(m->n + q->n, 0);
}

static void test_ynode__set_replaces_in_place_and_appends_new_keys(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *m = parse_ok("a: 1\nb: 2\nc: 3\n");
	ynode_set(m, "b", ynode_new_str("two"));
	ynode_set(m, "d", ynode_new_int(4));
	assert_int_equal(m->n, 4);
	assert_string_equal(ynode_map_key(m, 1)->str, "b");
	assert_string_equal(ynode_map_val(m, 1)->str, "two");
	assert_string_equal(ynode_map_key(m, 3)->str, "d");
	/* Many keys: the mapping grows. */
	for (int i = 0; i < 100; i++) {
		char key[16];
		snprintf(key, sizeof(key), "k%d", i);
		ynode_set(m, key, ynode_new_int(i));
	}
	assert_int_equal(m->n, 104);
	assert_string_equal(ynode_path_str(m, "k99"), "99");
}

static void test_ynode__take_hands_out_the_value_and_del_frees_it(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *m = parse_ok("a: 1\nb: {x: y}\nc: 3\n");
	cleanup_ynode struct ynode *b = ynode_take(m, "b");
	assert_non_null(b);
	assert_string_equal(ynode_path_str(b, "x"), "y");
	assert_int_equal(m->n, 2);
	assert_string_equal(ynode_map_key(m, 0)->str, "a");
	assert_string_equal(ynode_map_key(m, 1)->str, "c");
	assert_null(ynode_take(m, "b"));
	ynode_del(m, "a");
	ynode_del(m, "missing");
	assert_int_equal(m->n, 1);
	assert_string_equal(ynode_map_key(m, 0)->str, "c");
	ynode_del(m, "c");
	assert_int_equal(m->n, 0);
}

static void test_ynode__get_refuses_non_mappings(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *s = parse_ok("[a, b]\n");
	assert_null(ynode_get(s, "a"));
	assert_null(ynode_get(NULL, "a"));
	cleanup_ynode struct ynode *m = parse_ok("a: 1\n");
	assert_null(ynode_get(m, "A"));
}

static void test_ynode__get_map_creates_or_replaces(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *m = parse_ok("meta: {name: x}\nspec: text\n");
	struct ynode *meta = ynode_get_map(m, "meta");
	assert_ptr_equal(meta, ynode_get(m, "meta"));
	assert_string_equal(ynode_path_str(meta, "name"), "x");
	struct ynode *spec = ynode_get_map(m, "spec");
	assert_int_equal(spec->type, YNODE_MAP);
	assert_int_equal(spec->n, 0);
	assert_string_equal(ynode_map_key(m, 1)->str, "spec");
	struct ynode *status = ynode_get_map(m, "status");
	assert_int_equal(status->type, YNODE_MAP);
	assert_int_equal(m->n, 3);
}

static void test_ynode__append_grows_a_sequence(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *s = ynode_new_seq();
	for (int i = 0; i < 50; i++)
		ynode_append(s, ynode_new_int(i));
	assert_int_equal(s->n, 50);
	assert_string_equal(ynode_item(s, 0)->str, "0");
	assert_string_equal(ynode_item(s, 49)->str, "49");
}

static void test_ynode__clone_is_deep_and_equal(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: {b: [1, \"2\", {c: d}]}\nq: 'x'\n");
	cleanup_ynode struct ynode *c = ynode_clone(d);
	assert_true(ynode_equal(d, c));
	assert_ptr_not_equal(ynode_get(d, "a"), ynode_get(c, "a"));
	assert_true(ynode_path(c, "a.b[1]")->quoted);
	assert_int_equal(ynode_path(c, "a.b[2].c")->line, 1);
	ynode_set(ynode_path(c, "a.b[2]"), "c", ynode_new_str("changed"));
	assert_string_equal(ynode_path_str(d, "a.b[2].c"), "d");
	assert_false(ynode_equal(d, c));
	assert_null(ynode_clone(NULL));
	/* An empty collection clones too. */
	cleanup_ynode struct ynode *e = ynode_new_map();
	cleanup_ynode struct ynode *ec = ynode_clone(e);
	ynode_set(ec, "x", ynode_new_int(1));
	assert_int_equal(e->n, 0);
}

static void test_ynode__path_walks_mappings_and_sequences(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a:\n"
						 "  b:\n"
						 "  - c: one\n"
						 "  - c: two\n"
						 "    d: [x, [y, z]]\n"
						 "dotted.key: no\n");
	assert_string_equal(ynode_path_str(d, "a.b[0].c"), "one");
	assert_string_equal(ynode_path_str(d, "a.b[1].c"), "two");
	assert_string_equal(ynode_path_str(d, "a.b[1].d[1][0]"), "y");
	assert_string_equal(ynode_path_str(d, "a.b[1].d[1][1]"), "z");
	assert_ptr_equal(ynode_path(d, "a"), ynode_get(d, "a"));
	assert_ptr_equal(ynode_path(d, ""), d);
	cleanup_ynode struct ynode *seq = parse_ok("[[a, b], c]\n");
	assert_string_equal(ynode_path_str(seq, "[0][1]"), "b");
	assert_string_equal(ynode_path_str(seq, "[1]"), "c");
}

static void test_ynode__path_is_null_when_a_step_is_missing_or_wrong(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a:\n  b: [x]\n  s: text\n");
	assert_null(ynode_path(d, "missing"));
	assert_null(ynode_path(d, "a.missing.deeper"));
	assert_null(ynode_path(d, "a.b[1]")); /* out of range */
	assert_null(ynode_path(d, "a.b[x]")); /* not an index */
	assert_null(ynode_path(d, "a.b[0"));  /* unclosed */
	assert_null(ynode_path(d, "a[0]"));   /* a mapping, not a list */
	assert_null(ynode_path(d, "a.s.x"));  /* into a scalar */
	assert_null(ynode_path(d, "a.b.x"));  /* key of a list */
	assert_null(ynode_path(NULL, "a"));
	assert_null(ynode_path_str(d, "a.b")); /* not a scalar */
	assert_null(ynode_path_str(d, "nope"));
	char long_key[400];
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	assert_null(ynode_path(d, long_key));
}

static void test_ynode__str_reads_scalars_only(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("a: x\nb: [1]\n");
	assert_string_equal(ynode_str(ynode_get(d, "a")), "x");
	assert_null(ynode_str(ynode_get(d, "b")));
	assert_null(ynode_str(d));
	assert_null(ynode_str(NULL));
}

static long long int_ok(const char *yaml_value)
{
	cleanup_free char *text = xasprintf("v: %s\n", yaml_value);
	cleanup_ynode struct ynode *d = parse_ok(text);
	long long v = 0;
	if (ynode_int(ynode_get(d, "v"), &v) < 0)
		fail_msg("ynode_int refused %s", yaml_value);
	return v;
}

static void int_refused(const char *yaml_value)
{
	cleanup_free char *text = xasprintf("v: %s\n", yaml_value);
	cleanup_ynode struct ynode *d = parse_ok(text);
	long long v = 4242;
	if (ynode_int(ynode_get(d, "v"), &v) == 0)
		fail_msg("ynode_int accepted %s as %lld", yaml_value, v);
	assert_int_equal(v, 4242);
}

static void test_ynode__int_reads_decimal_hex_and_octal(void **state)
{
	(void)state;
	assert_int_equal(int_ok("0"), 0);
	assert_int_equal(int_ok("80"), 80);
	assert_int_equal(int_ok("-5"), -5);
	assert_int_equal(int_ok("+5"), 5);
	assert_int_equal(int_ok("1_000"), 1000);
	assert_int_equal(int_ok("0x1F"), 31);
	assert_int_equal(int_ok("0xff"), 255);
	assert_int_equal(int_ok("-0x10"), -16);
	assert_int_equal(int_ok("0o17"), 15);
	assert_int_equal(int_ok("9223372036854775807"), LLONG_MAX);
	assert_int_equal(int_ok("-9223372036854775808"), LLONG_MIN);
}

static void test_ynode__int_refuses_what_is_not_an_integer(void **state)
{
	(void)state;
	int_refused("\"80\"");
	int_refused("'80'");
	int_refused("1.5");
	int_refused("1e3");
	int_refused("abc");
	int_refused("12abc");
	int_refused("0x");
	int_refused("0xZZ");
	int_refused("0o8");
	int_refused("\"\"");
	int_refused("9223372036854775808");
	int_refused("-9223372036854775809");
	int_refused("99999999999999999999999");
	int_refused("[1]");
	long long v;
	assert_int_equal(ynode_int(NULL, &v), -1);
	static const char *const signs[] = {"-", "+", "_", "-_", "0x_"};
	for (size_t i = 0; i < ARRAY_SIZE(signs); i++) {
		cleanup_ynode struct ynode *n = ynode_new_plain(signs[i]);
		assert_int_equal(ynode_int(n, &v), -1);
	}
}

static void test_ynode__bool_reads_yaml_spellings(void **state)
{
	(void)state;
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
					  "on",	  "On",	  "ON",	  "y",	 "Y"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO",
					 "off",	  "Off",   "OFF",   "n",  "N"};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		cleanup_ynode struct ynode *t = ynode_new_plain(yes[i]);
		cleanup_ynode struct ynode *f = ynode_new_plain(no[i]);
		bool bt = false, bf = true;
		assert_int_equal(ynode_bool(t, &bt), 0);
		assert_int_equal(ynode_bool(f, &bf), 0);
		assert_true(bt);
		assert_false(bf);
	}
}

static void test_ynode__bool_refuses_strings_and_others(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d =
	    parse_ok("q: \"true\"\nw: maybe\none: 1\nm: {}\ntrue_: tRuE\n");
	bool b = true;
	assert_int_equal(ynode_bool(ynode_get(d, "q"), &b), -1);
	assert_int_equal(ynode_bool(ynode_get(d, "w"), &b), -1);
	assert_int_equal(ynode_bool(ynode_get(d, "one"), &b), -1);
	assert_int_equal(ynode_bool(ynode_get(d, "m"), &b), -1);
	assert_int_equal(ynode_bool(ynode_get(d, "true_"), &b), -1);
	assert_int_equal(ynode_bool(NULL, &b), -1);
	assert_true(b);
}

static void test_ynode__is_null_knows_every_spelling(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok(
	    "a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: \"null\"\ng: ''\nh: nil\ni: {}\nj: []\n");
	assert_true(ynode_is_null(NULL));
	assert_true(ynode_is_null(ynode_get(d, "a")));
	assert_true(ynode_is_null(ynode_get(d, "b")));
	assert_true(ynode_is_null(ynode_get(d, "c")));
	assert_true(ynode_is_null(ynode_get(d, "d")));
	assert_true(ynode_is_null(ynode_get(d, "e")));
	assert_false(ynode_is_null(ynode_get(d, "f")));
	assert_false(ynode_is_null(ynode_get(d, "g")));
	assert_false(ynode_is_null(ynode_get(d, "h")));
	assert_false(ynode_is_null(ynode_get(d, "i")));
	assert_false(ynode_is_null(ynode_get(d, "j")));
	assert_true(ynode_is_null(ynode_get(d, "absent")));
}

static void test_ynode__sort_orders_keys_at_every_level(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *d = parse_ok("spec:\n"
						 "  z: 1\n"
						 "  a: 2\n"
						 "  list:\n"
						 "  - {y: 1, b: 2}\n"
						 "  - c\n"
						 "  - {}\n"
						 "Kind: x\n"
						 "apiVersion: v1\n"
						 "empty: {}\n");
	cleanup_ynode struct ynode *before = ynode_clone(d);
	ynode_sort(d);
	assert_true(ynode_equal(d, before));
	cleanup_free char *out = yaml_emit(d, NULL);
	/* Byte order: upper case first, as Go's encoding sorts. */
	assert_string_equal(out, "Kind: x\n"
				 "apiVersion: v1\n"
				 "empty: {}\n"
				 "spec:\n"
				 "  a: 2\n"
				 "  list:\n"
				 "  - b: 2\n"
				 "    y: 1\n"
				 "  - c\n"
				 "  - {}\n"
				 "  z: 1\n");
	ynode_sort(NULL);
}

static void test_ynode__equal_ignores_mapping_order(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = parse_ok("x: 1\ny: {p: 1, q: 2}\n");
	cleanup_ynode struct ynode *b = parse_ok("y: {q: 2, p: 1}\nx: 1\n");
	assert_true(ynode_equal(a, b));
	assert_true(ynode_equal(b, a));
}

static void test_ynode__equal_sees_every_difference(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = parse_ok("x: 1\nl: [1, 2]\n");
	cleanup_ynode struct ynode *order = parse_ok("x: 1\nl: [2, 1]\n");
	cleanup_ynode struct ynode *value = parse_ok("x: 2\nl: [1, 2]\n");
	cleanup_ynode struct ynode *extra = parse_ok("x: 1\nl: [1, 2]\nz: 0\n");
	cleanup_ynode struct ynode *key = parse_ok("X: 1\nl: [1, 2]\n");
	cleanup_ynode struct ynode *type = parse_ok("x: [1]\nl: [1, 2]\n");
	cleanup_ynode struct ynode *shorter = parse_ok("x: 1\nl: [1]\n");
	assert_false(ynode_equal(a, order));
	assert_false(ynode_equal(a, value));
	assert_false(ynode_equal(a, extra));
	assert_false(ynode_equal(extra, a));
	assert_false(ynode_equal(a, key));
	assert_false(ynode_equal(a, type));
	assert_false(ynode_equal(a, shorter));
	assert_false(ynode_equal(a, NULL));
	assert_false(ynode_equal(NULL, a));
	assert_true(ynode_equal(NULL, NULL));
	assert_true(ynode_equal(a, a));
}

static void test_ynode__equal_treats_null_spellings_alike(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *a = parse_ok("x:\n");
	cleanup_ynode struct ynode *b = parse_ok("x: null\n");
	cleanup_ynode struct ynode *c = parse_ok("x: ~\n");
	cleanup_ynode struct ynode *s = parse_ok("x: 'null'\n");
	assert_true(ynode_equal(a, b));
	assert_true(ynode_equal(b, c));
	/* An empty plain scalar is a null, a quoted "null" a string. */
	assert_false(ynode_equal(a, s));
}

static void test_ynode__seq_remove_str_removes_every_copy(void **state)
{
	(void)state;
	struct ynode *doc = NULL;
	assert_int_equal(
	    yaml_parse_one("[a, kubernetes, b, kubernetes, [kubernetes]]", 44, &doc, NULL), 0);
	assert_int_equal(ynode_seq_remove_str(doc, "kubernetes"), 2);
	assert_int_equal(doc->n, 3);
	assert_string_equal(ynode_str(ynode_item(doc, 0)), "a");
	assert_string_equal(ynode_str(ynode_item(doc, 1)), "b");
	assert_int_equal(ynode_item(doc, 2)->type, YNODE_SEQ);
	assert_int_equal(ynode_seq_remove_str(doc, "z"), 0);
	assert_int_equal(ynode_seq_remove_str(NULL, "a"), 0);
	assert_int_equal(ynode_seq_remove_str(ynode_item(doc, 0), "a"), 0); /* a scalar */
	ynode_free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ynode__parses_block_mapping_in_document_order),
	    cmocka_unit_test(test_ynode__records_source_lines),
	    cmocka_unit_test(test_ynode__parses_flow_style),
	    cmocka_unit_test(test_ynode__flow_and_block_forms_are_equal),
	    cmocka_unit_test(test_ynode__remembers_quoting),
	    cmocka_unit_test(test_ynode__ignores_comments),
	    cmocka_unit_test(test_ynode__parses_crlf_like_lf),
	    cmocka_unit_test(test_ynode__parses_multiline_scalars),
	    cmocka_unit_test(test_ynode__parses_multiple_documents_skipping_empty_ones),
	    cmocka_unit_test(test_ynode__parses_an_empty_stream_as_no_documents),
	    cmocka_unit_test(test_ynode__keeps_a_quoted_empty_document),
	    cmocka_unit_test(test_ynode__parse_one_refuses_zero_documents),
	    cmocka_unit_test(test_ynode__parse_one_refuses_two_documents),
	    cmocka_unit_test(test_ynode__parse_one_accepts_one_document_among_empty_ones),
	    cmocka_unit_test(test_ynode__parses_only_len_bytes),
	    cmocka_unit_test(test_ynode__expands_aliases_as_copies),
	    cmocka_unit_test(test_ynode__alias_refers_to_the_latest_anchor_of_its_name),
	    cmocka_unit_test(test_ynode__anchors_do_not_cross_documents),
	    cmocka_unit_test(test_ynode__applies_merge_keys),
	    cmocka_unit_test(test_ynode__merges_a_list_of_mappings_first_one_winning),
	    cmocka_unit_test(test_ynode__merges_an_inline_mapping),
	    cmocka_unit_test(test_ynode__quoted_merge_key_is_an_ordinary_key),
	    cmocka_unit_test(test_ynode__refuses_merge_of_a_scalar),
	    cmocka_unit_test(test_ynode__anchor_inside_a_merge_value_outlives_it),
	    cmocka_unit_test(test_ynode__anchor_on_a_merge_key_outlives_it),
	    cmocka_unit_test(test_ynode__alias_within_the_budget_expands),
	    cmocka_unit_test(test_ynode__refuses_malformed_yaml_naming_the_line),
	    cmocka_unit_test(test_ynode__refuses_invalid_utf8),
	    cmocka_unit_test(test_ynode__refuses_duplicate_keys),
	    cmocka_unit_test(test_ynode__refuses_an_alias_bomb),
	    cmocka_unit_test(test_ynode__refuses_an_alias_bomb_through_merge_keys),
	    cmocka_unit_test(test_ynode__budgets_hold_for_the_whole_stream),
	    cmocka_unit_test(test_ynode__byte_budget_just_under_and_just_over),
	    cmocka_unit_test(test_ynode__byte_budget_counts_aliases_of_aliases),
	    cmocka_unit_test(test_ynode__byte_budget_counts_keys_and_values_of_mappings),
	    cmocka_unit_test(test_ynode__byte_budget_counts_merge_keys),
	    cmocka_unit_test(test_ynode__refuses_nul_bytes_saying_where),
	    cmocka_unit_test(test_ynode__utf16_text_still_parses),
	    cmocka_unit_test(test_ynode__refuses_a_recursive_alias),
	    cmocka_unit_test(test_ynode__refuses_an_unknown_alias),
	    cmocka_unit_test(test_ynode__refuses_nesting_deeper_than_the_limit),
	    cmocka_unit_test(test_ynode__refuses_alias_copies_nested_past_the_limit),
	    cmocka_unit_test(test_ynode__refuses_nul_in_a_scalar),
	    cmocka_unit_test(test_ynode__refuses_non_scalar_keys),
	    cmocka_unit_test(test_ynode__an_error_in_a_later_document_drops_the_earlier_ones),
	    cmocka_unit_test(test_ynode__emits_block_style_with_sequences_not_indented),
	    cmocka_unit_test(test_ynode__emits_empty_collections_in_flow_style),
	    cmocka_unit_test(test_ynode__emits_plain_empty_as_null),
	    cmocka_unit_test(test_ynode__quotes_strings_that_would_read_back_as_another_type),
	    cmocka_unit_test(test_ynode__does_not_quote_ordinary_strings),
	    cmocka_unit_test(test_ynode__quotes_strings_yaml_syntax_needs_quoted),
	    cmocka_unit_test(test_ynode__keeps_plain_scalars_plain),
	    cmocka_unit_test(test_ynode__quoted_number_stays_a_string_through_a_round_trip),
	    cmocka_unit_test(test_ynode__emits_multiline_strings_as_literal_blocks),
	    cmocka_unit_test(test_ynode__multiline_strings_round_trip),
	    cmocka_unit_test(test_ynode__emit_reports_its_length),
	    cmocka_unit_test(test_ynode__emit_within_is_exact_at_the_limit),
	    cmocka_unit_test(test_ynode__emits_scalar_and_sequence_documents),
	    cmocka_unit_test(test_ynode__round_trips_kubernetes_objects),
	    cmocka_unit_test(test_ynode__round_trips_odd_scalars),
	    cmocka_unit_test(test_ynode__round_trips_anchors_merges_and_flow),
	    cmocka_unit_test(test_ynode__constructors_set_quoting),
	    cmocka_unit_test(test_ynode__set_replaces_in_place_and_appends_new_keys),
	    cmocka_unit_test(test_ynode__take_hands_out_the_value_and_del_frees_it),
	    cmocka_unit_test(test_ynode__get_refuses_non_mappings),
	    cmocka_unit_test(test_ynode__get_map_creates_or_replaces),
	    cmocka_unit_test(test_ynode__append_grows_a_sequence),
	    cmocka_unit_test(test_ynode__clone_is_deep_and_equal),
	    cmocka_unit_test(test_ynode__path_walks_mappings_and_sequences),
	    cmocka_unit_test(test_ynode__path_is_null_when_a_step_is_missing_or_wrong),
	    cmocka_unit_test(test_ynode__str_reads_scalars_only),
	    cmocka_unit_test(test_ynode__int_reads_decimal_hex_and_octal),
	    cmocka_unit_test(test_ynode__int_refuses_what_is_not_an_integer),
	    cmocka_unit_test(test_ynode__bool_reads_yaml_spellings),
	    cmocka_unit_test(test_ynode__bool_refuses_strings_and_others),
	    cmocka_unit_test(test_ynode__is_null_knows_every_spelling),
	    cmocka_unit_test(test_ynode__sort_orders_keys_at_every_level),
	    cmocka_unit_test(test_ynode__equal_ignores_mapping_order),
	    cmocka_unit_test(test_ynode__equal_sees_every_difference),
	    cmocka_unit_test(test_ynode__equal_treats_null_spellings_alike),
	    cmocka_unit_test(test_ynode__seq_remove_str_removes_every_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
