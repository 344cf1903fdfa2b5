/* test_fs_store.c: the LMDB live store, each test in its own mkdtemp folder:
 * put, get and delete; resourceVersion conflicts; the revision (monotonic,
 * gapless, persisted across close and reopen); the outbox (written in the
 * change's transaction, read, trimmed, waited on); group commit under
 * concurrent writers; store_foreach's order. No assertion depends on
 * timing: a wait that never wakes hangs the suite, which the runner's
 * timeout turns into a failure. */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "store.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

#define NEVER_MS (10 * 60 * 1000) /* "forever": longer than the runner allows */

struct fixture {
	char dir[64];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	if (testlib_store_temp(f->dir, sizeof(f->dir), "corral-store", &f->s) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	testlib_store_remove(f->dir, f->s);
	free(f);
	return 0;
}

static void reopen(struct fixture *f)
{
	store_close(f->s);
	f->s = NULL;
	struct error *err = NULL;
	if (store_open(f->dir, &f->s, &err) < 0)
		fail_msg("reopen: %s", err->msg);
}

static struct ynode *config_map(const char *name, const char *value)
{
	cleanup_free char *text = xasprintf("apiVersion: v1\n"
					    "kind: ConfigMap\n"
					    "metadata:\n"
					    "  name: %s\n"
					    "  namespace: dev\n"
					    "data:\n"
					    "  value: \"%s\"\n",
					    name, value);
	struct ynode *obj = NULL;
	if (yaml_parse_one(text, strlen(text), &obj, NULL) < 0)
		abort();
	return obj;
}

/* Writes key (obj NULL deletes) expecting success; returns the revision. */
static uint64_t apply_ok(struct store *s, const char *key, struct ynode *obj, uint64_t expect)
{
	struct store_change c = {.key = key, .obj = obj, .expect_rv = expect};
	struct error *err = NULL;
	if (store_apply(s, &c, &err) < 0)
		fail_msg("store_apply(%s): %s", key, err->msg);
	assert_null(err);
	assert_true(c.rv > 0);
	free(c.yaml);
	ynode_free(obj);
	return c.rv;
}

static uint64_t put_ok(struct store *s, const char *key, const char *value, uint64_t expect)
{
	const char *slash = strrchr(key, '/');
	return apply_ok(s, key, config_map(slash ? slash + 1 : key, value), expect);
}

/* Applies a change expecting status; checks the error and that nothing
 * was reported as written. */
static void apply_fails(struct store *s, struct store_change *c, int status, const char *want)
{
	cleanup_error struct error *err = NULL;
	assert_int_equal(store_apply(s, c, &err), -status);
	assert_non_null(err);
	assert_int_equal(err->status, status);
	if (want && !strstr(err->msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err->msg, want);
	assert_int_equal(c->rv, 0);
	assert_null(c->yaml);
}

static char *get_value(struct store *s, const char *key, uint64_t *rv)
{
	struct store_record rec = {0};
	struct error *err = NULL;
	if (store_get(s, key, &rec, &err) < 0)
		fail_msg("store_get(%s): %s", key, err->msg);
	cleanup_ynode struct ynode *obj = NULL;
	assert_int_equal(yaml_parse_one(rec.yaml, rec.len, &obj, NULL), 0);
	if (rv)
		*rv = rec.rv;
	char *v = xstrdup(ynode_path_str(obj, "data.value"));
	store_record_clear(&rec);
	return v;
}

static void assert_absent(struct store *s, const char *key)
{
	struct store_record rec = {0};
	cleanup_error struct error *err = NULL;
	assert_int_equal(store_get(s, key, &rec, &err), -ENOENT);
	assert_int_equal(err->status, ENOENT);
	assert_non_null(strstr(err->msg, key));
	assert_null(rec.yaml);
}

/* ---- put, get, delete ---- */

static void test_store__opens_empty_at_revision_zero(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(store_revision(f->s), 0);
	assert_true(store_is_empty(f->s));
	assert_absent(f->s, "namespaces/dev/pods/web");
}

static void test_store__put_then_get_returns_the_stored_text(void **state)
{
	struct fixture *f = *state;
	struct ynode *obj = config_map("cfg", "hello");
	struct store_change c = {.key = "namespaces/dev/configmaps/cfg", .obj = obj};
	struct error *err = NULL;
	assert_int_equal(store_apply(f->s, &c, &err), 0);
	assert_null(err);
	assert_int_equal(c.rv, 1);
	assert_non_null(c.yaml);
	assert_int_equal(c.yaml_len, strlen(c.yaml));
	assert_true(c.mtime_ns > 0);

	struct store_record rec = {0};
	assert_int_equal(store_get(f->s, c.key, &rec, &err), 0);
	assert_int_equal(rec.rv, 1);
	assert_int_equal(rec.mtime_ns, c.mtime_ns);
	assert_int_equal(rec.len, c.yaml_len);
	assert_string_equal(rec.yaml, c.yaml);
	assert_false(store_is_empty(f->s));
	assert_int_equal(store_revision(f->s), 1);
	store_record_clear(&rec);
	assert_null(rec.yaml);
	assert_int_equal(rec.rv, 0);
	free(c.yaml);
	ynode_free(obj);
}

static void test_store__sets_resource_version_in_the_emitted_yaml(void **state)
{
	struct fixture *f = *state;
	put_ok(f->s, "namespaces/dev/configmaps/a", "x", 0);
	struct ynode *obj = config_map("b", "y");
	struct store_change c = {.key = "namespaces/dev/configmaps/b", .obj = obj};
	assert_int_equal(store_apply(f->s, &c, NULL), 0);
	assert_int_equal(c.rv, 2);
	/* In the change's object, and in the text, as a string. */
	assert_string_equal(ynode_path_str(obj, "metadata.resourceVersion"), "2");
	cleanup_ynode struct ynode *stored = NULL;
	assert_int_equal(yaml_parse_one(c.yaml, c.yaml_len, &stored, NULL), 0);
	struct ynode *rv = ynode_path(stored, "metadata.resourceVersion");
	assert_non_null(rv);
	assert_string_equal(rv->str, "2");
	assert_true(rv->quoted);
	assert_non_null(strstr(c.yaml, "resourceVersion: '2'\n"));
	assert_string_equal(ynode_path_str(stored, "data.value"), "y");
	free(c.yaml);
	ynode_free(obj);
}

static void test_store__replaces_a_stale_resource_version(void **state)
{
	struct fixture *f = *state;
	struct ynode *obj = config_map("a", "x");
	ynode_set(ynode_get(obj, "metadata"), "resourceVersion", ynode_new_str("999"));
	struct store_change c = {.key = "namespaces/dev/configmaps/a", .obj = obj};
	assert_int_equal(store_apply(f->s, &c, NULL), 0);
	assert_non_null(strstr(c.yaml, "resourceVersion: '1'\n"));
	assert_null(strstr(c.yaml, "999"));
	free(c.yaml);
	ynode_free(obj);
}

static void test_store__adds_metadata_to_an_object_without_it(void **state)
{
	struct fixture *f = *state;
	cleanup_ynode struct ynode *obj = NULL;
	assert_int_equal(yaml_parse_one("kind: Thing\n", 12, &obj, NULL), 0);
	struct store_change c = {.key = "things/t", .obj = obj};
	assert_int_equal(store_apply(f->s, &c, NULL), 0);
	assert_non_null(strstr(c.yaml, "metadata:\n  resourceVersion: '1'\n"));
	free(c.yaml);
}

static void test_store__update_on_the_current_revision_succeeds(void **state)
{
	struct fixture *f = *state;
	const char *key = "namespaces/dev/configmaps/cfg";
	uint64_t rv1 = put_ok(f->s, key, "one", 0);
	uint64_t rv2 = put_ok(f->s, key, "two", rv1);
	assert_int_equal(rv2, rv1 + 1);
	uint64_t got = 0;
	cleanup_free char *v = get_value(f->s, key, &got);
	assert_string_equal(v, "two");
	assert_int_equal(got, rv2);
}

static void test_store__conflict_on_stale_revision(void **state)
{
	struct fixture *f = *state;
	const char *key = "namespaces/dev/configmaps/cfg";
	uint64_t rv1 = put_ok(f->s, key, "one", 0);
	put_ok(f->s, key, "two", rv1);
	cleanup_ynode struct ynode *obj = config_map("cfg", "three");
	struct store_change c = {.key = key, .obj = obj, .expect_rv = rv1};
	apply_fails(f->s, &c, EAGAIN,
		    "namespaces/dev/configmaps/cfg: changed meanwhile (revision 2, expected 1)");
	assert_int_equal(store_revision(f->s), 2);
	cleanup_free char *v = get_value(f->s, key, NULL);
	assert_string_equal(v, "two");
}

static void test_store__conflict_on_create_of_an_existing_key(void **state)
{
	struct fixture *f = *state;
	const char *key = "namespaces/dev/configmaps/cfg";
	put_ok(f->s, key, "one", 0);
	cleanup_ynode struct ynode *obj = config_map("cfg", "again");
	struct store_change c = {.key = key, .obj = obj, .expect_rv = 0};
	apply_fails(f->s, &c, EAGAIN, "expected 0");
	cleanup_free char *v = get_value(f->s, key, NULL);
	assert_string_equal(v, "one");
}

static void test_store__conflict_on_update_of_a_missing_key(void **state)
{
	struct fixture *f = *state;
	cleanup_ynode struct ynode *obj = config_map("gone", "x");
	struct store_change c = {
	    .key = "namespaces/dev/configmaps/gone", .obj = obj, .expect_rv = 5};
	apply_fails(f->s, &c, EAGAIN, "revision 0, expected 5");
	assert_absent(f->s, c.key);
	assert_int_equal(store_revision(f->s), 0);
}

static void test_store__delete_removes_the_object(void **state)
{
	struct fixture *f = *state;
	const char *key = "namespaces/dev/configmaps/cfg";
	uint64_t rv1 = put_ok(f->s, key, "one", 0);
	struct store_change c = {.key = key, .obj = NULL, .expect_rv = rv1};
	assert_int_equal(store_apply(f->s, &c, NULL), 0);
	assert_int_equal(c.rv, rv1 + 1);
	assert_null(c.yaml);
	assert_absent(f->s, key);
	assert_true(store_is_empty(f->s));
	assert_int_equal(store_revision(f->s), 2);
	/* The key can be created again. */
	assert_int_equal(put_ok(f->s, key, "again", 0), 3);
}

static void test_store__delete_of_a_missing_key_is_enoent(void **state)
{
	struct fixture *f = *state;
	put_ok(f->s, "namespaces/dev/configmaps/other", "x", 0);
	struct store_change c = {.key = "namespaces/dev/configmaps/gone"};
	apply_fails(f->s, &c, ENOENT, "namespaces/dev/configmaps/gone: no such object");
	assert_int_equal(store_revision(f->s), 1);
}

static void test_store__delete_on_a_stale_revision_conflicts(void **state)
{
	struct fixture *f = *state;
	const char *key = "namespaces/dev/configmaps/cfg";
	uint64_t rv1 = put_ok(f->s, key, "one", 0);
	put_ok(f->s, key, "two", rv1);
	struct store_change c = {.key = key, .expect_rv = rv1};
	apply_fails(f->s, &c, EAGAIN, "changed meanwhile");
	cleanup_free char *v = get_value(f->s, key, NULL);
	assert_string_equal(v, "two");
}

static void test_store__apply_without_an_error_pointer_reports_by_status(void **state)
{
	struct fixture *f = *state;
	struct store_change c = {.key = "x"};
	assert_int_equal(store_apply(f->s, &c, NULL), -ENOENT);
	put_ok(f->s, "x", "1", 0);
	cleanup_ynode struct ynode *obj = config_map("x", "2");
	struct store_change d = {.key = "x", .obj = obj, .expect_rv = 7};
	assert_int_equal(store_apply(f->s, &d, NULL), -EAGAIN);
}

/* ---- revisions ---- */

static void test_store__revision_counts_every_change_and_only_changes(void **state)
{
	struct fixture *f = *state;
	uint64_t a = put_ok(f->s, "k/a", "1", 0);
	uint64_t b = put_ok(f->s, "k/b", "1", 0);
	struct store_change bad = {.key = "k/c"};
	apply_fails(f->s, &bad, ENOENT, NULL);
	uint64_t a2 = put_ok(f->s, "k/a", "2", a);
	uint64_t del = apply_ok(f->s, "k/b", NULL, b);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(a2, 3);
	assert_int_equal(del, 4);
	assert_int_equal(store_revision(f->s), 4);
}

static int snapshot_keys(void *data, const char *key, const struct store_record *rec)
{
	assert_non_null(rec->yaml);
	char *keys = data;
	strcat(keys, key);
	strcat(keys, " ");
	return 0;
}

static void test_store__snapshot_reads_every_object_at_the_revision_it_names(void **state)
{
	struct fixture *f = *state;
	uint64_t a = put_ok(f->s, "k/a", "1", 0);
	put_ok(f->s, "k/b", "1", 0);
	apply_ok(f->s, "k/a", NULL, a);
	uint64_t c = put_ok(f->s, "k/c", "1", 0);
	char keys[64] = "";
	uint64_t rev = 0;
	assert_int_equal(store_snapshot(f->s, snapshot_keys, keys, &rev, NULL), 0);
	assert_string_equal(keys, "k/b k/c ");
	assert_int_equal(rev, c);
	assert_int_equal(rev, store_revision(f->s));
}

static void test_store__revision_persists_after_reopen(void **state)
{
	struct fixture *f = *state;
	uint64_t rv = 0;
	for (int i = 0; i < 5; i++)
		rv = put_ok(f->s, "k/a", i % 2 ? "odd" : "even", rv);
	uint64_t b = put_ok(f->s, "k/b", "b", 0);
	apply_ok(f->s, "k/b", NULL, b); /* the last change is a delete */
	assert_int_equal(store_revision(f->s), 7);
	reopen(f);
	assert_int_equal(store_revision(f->s), 7);
	uint64_t got = 0;
	cleanup_free char *v = get_value(f->s, "k/a", &got);
	assert_string_equal(v, "even");
	assert_int_equal(got, 5);
	assert_absent(f->s, "k/b");
	assert_int_equal(put_ok(f->s, "k/c", "c", 0), 8);
	reopen(f);
	assert_int_equal(store_revision(f->s), 8);
}

static void test_store__raise_revision_continues_the_numbering(void **state)
{
	struct fixture *f = *state;
	put_ok(f->s, "k/a", "1", 0);
	struct error *err = NULL;
	assert_int_equal(store_raise_revision(f->s, 100, &err), 0);
	assert_null(err);
	assert_int_equal(store_revision(f->s), 100);
	assert_int_equal(put_ok(f->s, "k/b", "1", 0), 101);
	/* Never lowers it. */
	assert_int_equal(store_raise_revision(f->s, 50, NULL), 0);
	assert_int_equal(store_raise_revision(f->s, 101, NULL), 0);
	assert_int_equal(store_revision(f->s), 101);
	/* Objects keep the revision that wrote them. */
	uint64_t rv = 0;
	cleanup_free char *v = get_value(f->s, "k/a", &rv);
	assert_int_equal(rv, 1);
	assert_int_equal(put_ok(f->s, "k/a", "2", 1), 102);
}

static void test_store__raised_revision_persists_after_reopen(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(store_raise_revision(f->s, 41, NULL), 0);
	reopen(f);
	assert_int_equal(store_revision(f->s), 41);
	assert_int_equal(put_ok(f->s, "k/a", "1", 0), 42);
}

/* ---- outbox ---- */

static uint64_t apply_history(struct store *s, const char *key, struct ynode *obj, uint64_t expect,
			      const char *path, const char *declared, const char *message,
			      const char *author)
{
	struct store_change c = {.key = key,
				 .obj = obj,
				 .expect_rv = expect,
				 .history_path = path,
				 .history_yaml = declared,
				 .message = message,
				 .author = author};
	struct error *err = NULL;
	if (store_apply(s, &c, &err) < 0)
		fail_msg("store_apply(%s): %s", key, err->msg);
	free(c.yaml);
	ynode_free(obj);
	return c.rv;
}

static void test_store__outbox_holds_history_changes_in_order(void **state)
{
	struct fixture *f = *state;
	const char *key = "namespaces/dev/configmaps/cfg";
	const char *path = "namespaces/dev/configmaps/cfg.yaml";
	uint64_t rv1 = apply_history(f->s, key, config_map("cfg", "1"), 0, path, "declared: 1\n",
				     "create configmap dev/cfg", "Ann <ann@example.com>");
	/* Not for the history: no entry. */
	uint64_t rv2 = put_ok(f->s, key, "status only", rv1);
	uint64_t rv3 =
	    apply_history(f->s, key, NULL, rv2, path, NULL, "delete configmap dev/cfg", NULL);

	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	struct error *err = NULL;
	assert_int_equal(store_outbox_read(f->s, 0, 100, &e, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].rv, rv1);
	assert_string_equal(e[0].path, path);
	assert_string_equal(e[0].yaml, "declared: 1\n");
	assert_string_equal(e[0].message, "create configmap dev/cfg");
	assert_string_equal(e[0].author, "Ann <ann@example.com>");
	assert_true(e[0].when_ns > 0);
	assert_int_equal(e[1].rv, rv3);
	assert_string_equal(e[1].path, path);
	assert_null(e[1].yaml); /* a deletion */
	assert_string_equal(e[1].message, "delete configmap dev/cfg");
	assert_string_equal(e[1].author, "corral <corral@localhost>");
	assert_true(e[1].when_ns >= e[0].when_ns);
	store_outbox_free(e, n);
}

static void test_store__outbox_entry_time_is_the_change_time(void **state)
{
	struct fixture *f = *state;
	struct ynode *obj = config_map("cfg", "1");
	struct store_change c = {
	    .key = "k/cfg", .obj = obj, .history_path = "k/cfg.yaml", .history_yaml = "x: 1\n"};
	assert_int_equal(store_apply(f->s, &c, NULL), 0);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(f->s, 0, 10, &e, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].when_ns, c.mtime_ns);
	assert_string_equal(e[0].message, "");
	store_outbox_free(e, n);
	free(c.yaml);
	ynode_free(obj);
}

static void test_store__failed_change_queues_no_outbox_entry(void **state)
{
	struct fixture *f = *state;
	cleanup_ynode struct ynode *obj = config_map("cfg", "1");
	struct store_change c = {.key = "k/cfg",
				 .obj = obj,
				 .expect_rv = 3,
				 .history_path = "k/cfg.yaml",
				 .history_yaml = "x: 1\n",
				 .message = "update"};
	apply_fails(f->s, &c, EAGAIN, NULL);
	struct store_change d = {.key = "k/none", .history_path = "k/none.yaml"};
	apply_fails(f->s, &d, ENOENT, NULL);
	struct store_outbox_entry *e = NULL;
	size_t n = 99;
	assert_int_equal(store_outbox_read(f->s, 0, 10, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
}

static void fill_outbox(struct store *s, int count)
{
	for (int i = 0; i < count; i++) {
		char key[32], path[40], msg[32];
		snprintf(key, sizeof(key), "k/o%d", i);
		snprintf(path, sizeof(path), "k/o%d.yaml", i);
		snprintf(msg, sizeof(msg), "create %d", i);
		apply_history(s, key, config_map(key + 2, "v"), 0, path, "d: 1\n", msg, NULL);
	}
}

static void test_store__outbox_read_returns_at_most_max_oldest_first(void **state)
{
	struct fixture *f = *state;
	fill_outbox(f->s, 5);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(f->s, 0, 3, &e, &n, NULL), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(e[i].rv, i + 1);
	assert_string_equal(e[2].message, "create 2");
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_read(f->s, 0, 0, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
}

static void test_store__outbox_trim_removes_entries_up_to_a_revision(void **state)
{
	struct fixture *f = *state;
	fill_outbox(f->s, 5);
	struct error *err = NULL;
	assert_int_equal(store_outbox_trim(f->s, 2, &err), 0);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(f->s, 0, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].rv, 3);
	assert_int_equal(e[2].rv, 5);
	store_outbox_free(e, n);
	/* Trimming what is already gone, or below it, changes nothing. */
	assert_int_equal(store_outbox_trim(f->s, 1, NULL), 0);
	assert_int_equal(store_outbox_read(f->s, 0, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 3);
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_trim(f->s, 100, NULL), 0);
	assert_int_equal(store_outbox_read(f->s, 0, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_trim(f->s, 100, NULL), 0);
	/* Trimming leaves the objects and the revision alone. */
	assert_int_equal(store_revision(f->s), 5);
	cleanup_free char *v = get_value(f->s, "k/o4", NULL);
	assert_string_equal(v, "v");
}

static void test_store__outbox_read_starts_after_a_revision(void **state)
{
	struct fixture *f = *state;
	fill_outbox(f->s, 5);
	put_ok(f->s, "k/plain", "x", 0); /* rv 6: no entry */
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(f->s, 2, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].rv, 3);
	assert_string_equal(e[0].path, "k/o2.yaml");
	assert_int_equal(e[2].rv, 5);
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_read(f->s, 3, 1, &e, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].rv, 4);
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_read(f->s, 5, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_read(f->s, UINT64_MAX - 1, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
}

/* A trim need not be durable on its own; what a reader after the trimmed
 * revision sees survives a reopen. */
static void test_store__outbox_survives_reopen(void **state)
{
	struct fixture *f = *state;
	fill_outbox(f->s, 3);
	assert_int_equal(store_outbox_trim(f->s, 1, NULL), 0);
	reopen(f);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(f->s, 1, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].rv, 2);
	assert_string_equal(e[0].path, "k/o1.yaml");
	assert_string_equal(e[1].yaml, "d: 1\n");
	store_outbox_free(e, n);
}

static void test_store__outbox_wait_returns_at_once_when_past_the_revision(void **state)
{
	struct fixture *f = *state;
	put_ok(f->s, "k/a", "1", 0);
	store_outbox_wait(f->s, 0, NEVER_MS);
	/* Nothing new and no time to wait: returns too. */
	store_outbox_wait(f->s, 1, 0);
}

struct waiter {
	struct store *s;
	uint64_t after;
	bool done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	store_outbox_wait(w->s, w->after, NEVER_MS);
	__atomic_store_n(&w->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_store__outbox_wait_wakes_on_a_commit(void **state)
{
	struct fixture *f = *state;
	put_ok(f->s, "k/a", "1", 0);
	struct waiter w = {.s = f->s, .after = 1};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
	put_ok(f->s, "k/b", "1", 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(w.done);
	assert_true(store_revision(f->s) > w.after);
}

static void test_store__outbox_kick_wakes_every_waiter(void **state)
{
	struct fixture *f = *state;
	struct waiter w[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){.s = f->s, .after = 0};
		assert_int_equal(pthread_create(&t[i], NULL, wait_thread, &w[i]), 0);
	}
	store_outbox_kick(f->s);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_true(w[i].done);
	}
	assert_int_equal(store_revision(f->s), 0);
	/* Once kicked, waits return at once (shutdown). */
	store_outbox_wait(f->s, 0, NEVER_MS);
}

/* ---- group commit ---- */

#define WRITERS 8
#define WRITES	200

struct writer {
	struct store *s;
	int id;
	uint64_t rv[WRITES];
	int failures;
	char first_error[200];
};

static void *write_thread(void *arg)
{
	struct writer *w = arg;
	for (int i = 0; i < WRITES; i++) {
		char key[48], path[56], value[16];
		snprintf(key, sizeof(key), "namespaces/dev/configmaps/w%d-%03d", w->id, i);
		snprintf(path, sizeof(path), "%s.yaml", key);
		snprintf(value, sizeof(value), "%d/%d", w->id, i);
		struct ynode *obj = config_map(strrchr(key, '/') + 1, value);
		struct store_change c = {.key = key,
					 .obj = obj,
					 .history_path = path,
					 .history_yaml = value,
					 .message = key};
		struct error *err = NULL;
		if (store_apply(w->s, &c, &err) < 0) {
			if (!w->failures++)
				snprintf(w->first_error, sizeof(w->first_error), "%s", err->msg);
			error_free(err);
		}
		w->rv[i] = c.rv;
		free(c.yaml);
		ynode_free(obj);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int count_and_check(void *data, const char *key, const struct store_record *rec)
{
	size_t *count = data;
	cleanup_ynode struct ynode *obj = NULL;
	if (yaml_parse_one(rec->yaml, rec->len, &obj, NULL) < 0)
		return -EIO;
	/* The record's revision is the one written into its text. */
	char rv[24];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)rec->rv);
	const char *name = ynode_path_str(obj, "metadata.name");
	const char *stored_rv = ynode_path_str(obj, "metadata.resourceVersion");
	const char *slash = strrchr(key, '/');
	if (!name || !slash || strcmp(name, slash + 1) != 0 || !stored_rv ||
	    strcmp(stored_rv, rv) != 0)
		return -EINVAL;
	(*count)++;
	return 0;
}

static void test_store__concurrent_applies_all_succeed_with_distinct_revisions(void **state)
{
	struct fixture *f = *state;
	static struct writer w[WRITERS];
	pthread_t t[WRITERS];
	for (int i = 0; i < WRITERS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].s = f->s;
		w[i].id = i;
		assert_int_equal(pthread_create(&t[i], NULL, write_thread, &w[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);

	static uint64_t all[WRITERS * WRITES];
	size_t n = 0;
	for (int i = 0; i < WRITERS; i++) {
		if (w[i].failures)
			fail_msg("writer %d: %d failures, first: %s", i, w[i].failures,
				 w[i].first_error);
		/* Each writer's own changes are in its order. */
		for (int j = 1; j < WRITES; j++)
			assert_true(w[i].rv[j] > w[i].rv[j - 1]);
		for (int j = 0; j < WRITES; j++)
			all[n++] = w[i].rv[j];
	}
	/* Together: exactly 1..N, each once. */
	qsort(all, n, sizeof(all[0]), cmp_u64);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(all[i], i + 1);
	assert_int_equal(store_revision(f->s), WRITERS * WRITES);

	size_t count = 0;
	assert_int_equal(store_foreach(f->s, true, count_and_check, &count, NULL), 0);
	assert_int_equal(count, WRITERS * WRITES);

	/* The outbox has every change once, in revision order, each entry
	 * matching its change. */
	struct store_outbox_entry *e = NULL;
	size_t ne = 0;
	assert_int_equal(store_outbox_read(f->s, 0, 2 * WRITERS * WRITES, &e, &ne, NULL), 0);
	assert_int_equal(ne, WRITERS * WRITES);
	for (size_t i = 0; i < ne; i++) {
		assert_int_equal(e[i].rv, i + 1);
		int id, j;
		assert_int_equal(sscanf(e[i].message, "namespaces/dev/configmaps/w%d-%d", &id, &j),
				 2);
		assert_int_equal(w[id].rv[j], e[i].rv);
		char value[16];
		snprintf(value, sizeof(value), "%d/%d", id, j);
		assert_string_equal(e[i].yaml, value);
	}
	store_outbox_free(e, ne);

	reopen(f);
	assert_int_equal(store_revision(f->s), WRITERS * WRITES);
}

#define INCREMENTS 25

struct incrementer {
	struct store *s;
	bool lock_key; /* hold the key from the read to the commit */
	int conflicts;
	int errors;
};

/* Read, add one, write on the revision read; retry on a conflict. */
static void *increment_thread(void *arg)
{
	struct incrementer *inc = arg;
	for (int i = 0; i < INCREMENTS; i++) {
		if (inc->lock_key)
			store_lock_key(inc->s, "k/counter");
		for (;;) {
			struct store_record rec = {0};
			if (store_get(inc->s, "k/counter", &rec, NULL) < 0) {
				inc->errors++;
				break;
			}
			cleanup_ynode struct ynode *obj = NULL;
			long long v = -1;
			if (yaml_parse_one(rec.yaml, rec.len, &obj, NULL) < 0 ||
			    ynode_int(ynode_get(obj, "count"), &v) < 0) {
				store_record_clear(&rec);
				inc->errors++;
				break;
			}
			ynode_set(obj, "count", ynode_new_int(v + 1));
			struct store_change c = {
			    .key = "k/counter", .obj = obj, .expect_rv = rec.rv};
			store_record_clear(&rec);
			int r = store_apply(inc->s, &c, NULL);
			free(c.yaml);
			if (r == 0)
				break;
			if (r != -EAGAIN) {
				inc->errors++;
				break;
			}
			inc->conflicts++;
		}
		if (inc->lock_key)
			store_unlock_key(inc->s, "k/counter");
	}
	return NULL;
}

static void test_store__concurrent_read_modify_write_loses_no_update(void **state)
{
	struct fixture *f = *state;
	cleanup_ynode struct ynode *obj = NULL;
	assert_int_equal(yaml_parse_one("count: 0\n", 9, &obj, NULL), 0);
	apply_ok(f->s, "k/counter", steal_pointer(&obj), 0);

	struct incrementer inc[WRITERS] = {0};
	pthread_t t[WRITERS];
	for (int i = 0; i < WRITERS; i++) {
		inc[i].s = f->s;
		assert_int_equal(pthread_create(&t[i], NULL, increment_thread, &inc[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(inc[i].errors, 0);
	}
	struct store_record rec = {0};
	assert_int_equal(store_get(f->s, "k/counter", &rec, NULL), 0);
	cleanup_ynode struct ynode *final = NULL;
	assert_int_equal(yaml_parse_one(rec.yaml, rec.len, &final, NULL), 0);
	long long v = 0;
	assert_int_equal(ynode_int(ynode_get(final, "count"), &v), 0);
	assert_int_equal(v, WRITERS * INCREMENTS);
	/* Conflicts consume no revision. */
	assert_int_equal(rec.rv, 1 + WRITERS * INCREMENTS);
	assert_int_equal(store_revision(f->s), 1 + WRITERS * INCREMENTS);
	store_record_clear(&rec);
}

/* Writers that hold the key build on the revision their commit finds:
 * none of them ever has to build again. */
static void test_store__writers_holding_their_key_never_conflict(void **state)
{
	struct fixture *f = *state;
	cleanup_ynode struct ynode *obj = NULL;
	assert_int_equal(yaml_parse_one("count: 0\n", 9, &obj, NULL), 0);
	apply_ok(f->s, "k/counter", steal_pointer(&obj), 0);

	struct incrementer inc[WRITERS] = {0};
	pthread_t t[WRITERS];
	for (int i = 0; i < WRITERS; i++) {
		inc[i] = (struct incrementer){.s = f->s, .lock_key = true};
		assert_int_equal(pthread_create(&t[i], NULL, increment_thread, &inc[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(inc[i].errors, 0);
		assert_int_equal(inc[i].conflicts, 0);
	}
	struct store_record rec = {0};
	assert_int_equal(store_get(f->s, "k/counter", &rec, NULL), 0);
	assert_int_equal(rec.rv, 1 + WRITERS * INCREMENTS);
	store_record_clear(&rec);
}

/* A held key keeps only its own writers waiting; a key is free again
 * once every holder has let go. */
static void test_store__a_held_key_leaves_other_keys_free(void **state)
{
	struct fixture *f = *state;
	store_lock_key(f->s, "k/a");
	store_lock_key(f->s, "k/b"); /* would wait forever if it shared k/a's turn */
	put_ok(f->s, "k/c", "1", 0);
	store_unlock_key(f->s, "k/b");
	store_unlock_key(f->s, "k/a");
	store_lock_key(f->s, "k/a");
	store_unlock_key(f->s, "k/a");
	/* Unlocking a key nobody holds is harmless. */
	store_unlock_key(f->s, "k/none");
}

/* ---- foreach ---- */

struct visit {
	char keys[16][64];
	uint64_t rvs[16];
	bool had_yaml[16];
	size_t lens[16];
	size_t n;
	int stop_after; /* return this after so many; 0: never */
	int stop_value;
};

static int visit_fn(void *data, const char *key, const struct store_record *rec)
{
	struct visit *v = data;
	if (v->n < 16) {
		snprintf(v->keys[v->n], sizeof(v->keys[0]), "%s", key);
		v->rvs[v->n] = rec->rv;
		v->had_yaml[v->n] = rec->yaml != NULL;
		v->lens[v->n] = rec->len;
	}
	v->n++;
	if (v->stop_after && (int)v->n == v->stop_after)
		return v->stop_value;
	return 0;
}

static void put_unsorted(struct store *s)
{
	put_ok(s, "nodes/n2", "x", 0);
	put_ok(s, "namespaces/dev/pods/b", "x", 0);
	put_ok(s, "namespaces/dev", "x", 0);
	put_ok(s, "namespaces/dev/pods/a", "x", 0);
	put_ok(s, "nodes/n1", "x", 0);
	put_ok(s, "namespaces/dev-2", "x", 0);
}

static void test_store__foreach_visits_keys_in_byte_order(void **state)
{
	struct fixture *f = *state;
	put_unsorted(f->s);
	struct visit v = {0};
	assert_int_equal(store_foreach(f->s, true, visit_fn, &v, NULL), 0);
	static const char *const want[] = {
	    "namespaces/dev",	     "namespaces/dev-2", "namespaces/dev/pods/a",
	    "namespaces/dev/pods/b", "nodes/n1",	 "nodes/n2"};
	static const uint64_t want_rv[] = {3, 6, 4, 2, 5, 1};
	assert_int_equal(v.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		assert_string_equal(v.keys[i], want[i]);
		assert_int_equal(v.rvs[i], want_rv[i]);
		assert_true(v.had_yaml[i]);
	}
}

static void test_store__foreach_without_yaml_gives_lengths_only(void **state)
{
	struct fixture *f = *state;
	put_unsorted(f->s);
	struct visit v = {0};
	assert_int_equal(store_foreach(f->s, false, visit_fn, &v, NULL), 0);
	assert_int_equal(v.n, 6);
	struct store_record rec = {0};
	assert_int_equal(store_get(f->s, "namespaces/dev", &rec, NULL), 0);
	assert_false(v.had_yaml[0]);
	assert_int_equal(v.lens[0], rec.len);
	store_record_clear(&rec);
}

static void test_store__foreach_stops_when_fn_returns_non_zero(void **state)
{
	struct fixture *f = *state;
	put_unsorted(f->s);
	struct visit v = {.stop_after = 2, .stop_value = 1};
	assert_int_equal(store_foreach(f->s, false, visit_fn, &v, NULL), 0);
	assert_int_equal(v.n, 2);
	struct visit neg = {.stop_after = 3, .stop_value = -ECANCELED};
	assert_int_equal(store_foreach(f->s, false, visit_fn, &neg, NULL), -ECANCELED);
	assert_int_equal(neg.n, 3);
}

static void test_store__foreach_of_an_empty_store_visits_nothing(void **state)
{
	struct fixture *f = *state;
	struct visit v = {0};
	assert_int_equal(store_foreach(f->s, true, visit_fn, &v, NULL), 0);
	assert_int_equal(v.n, 0);
}

/* ---- opening ---- */

static void test_store__open_creates_missing_folders(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *dir = xasprintf("%s/a/b", f->dir);
	struct store *s = NULL;
	struct error *err = NULL;
	if (store_open(dir, &s, &err) < 0)
		fail_msg("%s", err->msg);
	assert_int_equal(store_revision(s), 0);
	store_close(s);
}

static void test_store__open_fails_on_a_file(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *path = xasprintf("%s/file", f->dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	struct store *s = NULL;
	cleanup_error struct error *err = NULL;
	assert_true(store_open(path, &s, &err) < 0);
	assert_non_null(err);
	assert_true(err->status > 0);
	assert_non_null(strstr(err->msg, path));
	store_close(NULL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_store__opens_empty_at_revision_zero),
	    T(test_store__put_then_get_returns_the_stored_text),
	    T(test_store__sets_resource_version_in_the_emitted_yaml),
	    T(test_store__replaces_a_stale_resource_version),
	    T(test_store__adds_metadata_to_an_object_without_it),
	    T(test_store__update_on_the_current_revision_succeeds),
	    T(test_store__conflict_on_stale_revision),
	    T(test_store__conflict_on_create_of_an_existing_key),
	    T(test_store__conflict_on_update_of_a_missing_key),
	    T(test_store__delete_removes_the_object),
	    T(test_store__delete_of_a_missing_key_is_enoent),
	    T(test_store__delete_on_a_stale_revision_conflicts),
	    T(test_store__apply_without_an_error_pointer_reports_by_status),
	    T(test_store__revision_counts_every_change_and_only_changes),
	    T(test_store__snapshot_reads_every_object_at_the_revision_it_names),
	    T(test_store__revision_persists_after_reopen),
	    T(test_store__raise_revision_continues_the_numbering),
	    T(test_store__raised_revision_persists_after_reopen),
	    T(test_store__outbox_holds_history_changes_in_order),
	    T(test_store__outbox_entry_time_is_the_change_time),
	    T(test_store__failed_change_queues_no_outbox_entry),
	    T(test_store__outbox_read_returns_at_most_max_oldest_first),
	    T(test_store__outbox_trim_removes_entries_up_to_a_revision),
	    T(test_store__outbox_read_starts_after_a_revision),
	    T(test_store__outbox_survives_reopen),
	    T(test_store__outbox_wait_returns_at_once_when_past_the_revision),
	    T(test_store__outbox_wait_wakes_on_a_commit),
	    T(test_store__outbox_kick_wakes_every_waiter),
	    T(test_store__concurrent_applies_all_succeed_with_distinct_revisions),
	    T(test_store__concurrent_read_modify_write_loses_no_update),
	    T(test_store__writers_holding_their_key_never_conflict),
	    T(test_store__a_held_key_leaves_other_keys_free),
	    T(test_store__foreach_visits_keys_in_byte_order),
	    T(test_store__foreach_without_yaml_gives_lengths_only),
	    T(test_store__foreach_stops_when_fn_returns_non_zero),
	    T(test_store__foreach_of_an_empty_store_visits_nothing),
	    T(test_store__open_creates_missing_folders),
	    T(test_store__open_fails_on_a_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
