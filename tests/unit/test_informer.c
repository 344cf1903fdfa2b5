/* test_informer.c: the informer over a tree laid out as the mount is, in a
 * private temporary folder: list, create, rename-over, delete, editors'
 * scratch files, files that do not parse, namespaces that come and go,
 * resync, queue overflow, cluster-scoped kinds, bound work queues.
 *
 * No test waits for time to pass: a "barrier" object written after the
 * changes under test must come out after them (inotify keeps order), so
 * anything not reported before it was not reported at all. A guard timer
 * only keeps a broken informer from hanging the suite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "informer.h"
#include "loop.h"
#include "util.h"
#include "workqueue.h"

#define GUARD_MS 20000
#define MAX_RECS 256

struct rec {
	char type; /* 'A'dd, 'U'pdate, 'D'elete */
	char key[128];
	char val[64]; /* spec.v of the new object (add, update) or the old (delete) */
	char old[64]; /* update: spec.v of the old object */
};

struct fixture {
	char dir[64];
	struct loop *loop;
	struct informer *inf;
	struct loop_timer *guard;
	bool guard_fired;
	struct rec recs[MAX_RECS];
	size_t nrecs, next; /* recorded, and consumed by expect_next() */
	int barriers;
};

static void on_guard(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)t;
	((struct fixture *)data)->guard_fired = true;
	loop_stop(loop);
}

/* The tree. */

static void path_of(struct fixture *fx, char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/%s", fx->dir, rel);
}

static void mkdir_rel(struct fixture *fx, const char *rel)
{
	char p[512];
	path_of(fx, p, sizeof(p), rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void write_rel(struct fixture *fx, const char *rel, const char *text)
{
	char p[512];
	path_of(fx, p, sizeof(p), rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(util_write_all(fd, text, strlen(text)), 0);
	close(fd);
}

/* A manifest whose spec.v says which version it is. */
static void write_obj(struct fixture *fx, const char *rel, const char *v)
{
	char text[256];
	snprintf(text, sizeof(text),
		 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  v: \"%s\"\n", v);
	write_rel(fx, rel, text);
}

static void rename_rel(struct fixture *fx, const char *from, const char *to)
{
	char a[512], b[512];
	path_of(fx, a, sizeof(a), from);
	path_of(fx, b, sizeof(b), to);
	assert_int_equal(rename(a, b), 0);
}

/* As sed -i and most editors save: a scratch file renamed over the target. */
static void replace_obj(struct fixture *fx, const char *dir, const char *name, const char *v)
{
	char tmp[256], dst[256];
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	write_obj(fx, tmp, v);
	rename_rel(fx, tmp, dst);
}

static void unlink_rel(struct fixture *fx, const char *rel)
{
	char p[512];
	path_of(fx, p, sizeof(p), rel);
	assert_int_equal(unlink(p), 0);
}

static void rmdir_rel(struct fixture *fx, const char *rel)
{
	char p[512];
	path_of(fx, p, sizeof(p), rel);
	assert_int_equal(rmdir(p), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Recording handlers. */

static void copy_v(char *dst, const struct ynode *obj)
{
	const char *v = ynode_path_str(obj, "spec.v");
	snprintf(dst, 64, "%s", v ? v : "?");
}

static struct rec *new_rec(struct fixture *fx, char type, const char *key)
{
	assert_true(fx->nrecs < MAX_RECS);
	struct rec *r = &fx->recs[fx->nrecs++];
	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->key, sizeof(r->key), "%s", key);
	return r;
}

static void on_add(void *data, const char *key, const struct ynode *obj)
{
	struct fixture *fx = data;
	copy_v(new_rec(fx, 'A', key)->val, obj);
	/* The cache is updated before handlers run. */
	assert_ptr_equal(informer_get(fx->inf, key), obj);
}

static void on_update(void *data, const char *key, const struct ynode *old, const struct ynode *obj)
{
	struct fixture *fx = data;
	struct rec *r = new_rec(fx, 'U', key);
	copy_v(r->val, obj);
	copy_v(r->old, old);
	assert_ptr_equal(informer_get(fx->inf, key), obj);
}

static void on_delete(void *data, const char *key, const struct ynode *old)
{
	struct fixture *fx = data;
	copy_v(new_rec(fx, 'D', key)->val, old);
	assert_null(informer_get(fx->inf, key));
}

static const struct informer_handlers handlers = {on_add, on_update, on_delete};

/* Expectations. */

static void run_until_recs(struct fixture *fx, size_t n)
{
	while (fx->nrecs < n && !fx->guard_fired)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	if (fx->guard_fired)
		fail_msg("timed out waiting for event %zu", n);
}

static void expect_next(struct fixture *fx, char type, const char *key, const char *val)
{
	run_until_recs(fx, fx->next + 1);
	struct rec *r = &fx->recs[fx->next++];
	if (r->type != type || strcmp(r->key, key) != 0 || (val && strcmp(r->val, val) != 0))
		fail_msg("expected %c %s %s, got %c %s %s", type, key, val ? val : "*", r->type,
			 r->key, r->val);
}

/* Nothing else was reported: a fresh object, written now, is the next event. */
static void expect_quiet(struct fixture *fx)
{
	char rel[64], key[64];
	int n = ++fx->barriers;
	snprintf(rel, sizeof(rel), "namespaces/dev/pods/zz-barrier-%d.yaml", n);
	snprintf(key, sizeof(key), "dev/zz-barrier-%d", n);
	write_obj(fx, rel, "barrier");
	expect_next(fx, 'A', key, "barrier");
	unlink_rel(fx, rel);
	expect_next(fx, 'D', key, "barrier");
}

/* Sorted check of what the initial list reported (readdir has no order). */
static int cmp_rec(const void *a, const void *b)
{
	return strcmp(((const struct rec *)a)->key, ((const struct rec *)b)->key);
}

/* Fixture. */

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	strcpy(fx->dir, "/tmp/corral-test-informer-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	mkdir_rel(fx, "namespaces");
	mkdir_rel(fx, "namespaces/dev");
	mkdir_rel(fx, "namespaces/dev/pods");
	mkdir_rel(fx, "namespaces/dev/services");
	mkdir_rel(fx, "nodes");
	fx->loop = loop_new(NULL);
	assert_non_null(fx->loop);
	fx->guard = loop_timer_new(fx->loop, on_guard, fx);
	loop_timer_start(fx->guard, GUARD_MS, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	informer_free(fx->inf);
	loop_timer_free(fx->guard);
	loop_free(fx->loop);
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static void start_pods(struct fixture *fx)
{
	fx->inf = informer_new(fx->loop, fx->dir, "pods", true);
	informer_add_handlers(fx->inf, &handlers, fx);
	struct error *err = NULL;
	if (informer_start(fx->inf, &err) < 0)
		fail_msg("informer_start: %s", err->msg);
}

/* Tests. */

static void test_informer_start__lists_objects_and_skips_the_rest(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/a.yaml", "1");
	write_obj(fx, "namespaces/dev/pods/b.yaml", "1");
	write_obj(fx, "namespaces/dev/services/s.yaml", "1"); /* another kind */
	write_obj(fx, "namespaces/dev/pods/.a.yaml.swp", "1");
	write_obj(fx, "namespaces/dev/pods/a.yaml~", "1");
	write_obj(fx, "namespaces/dev/pods/notes.txt", "1");
	write_obj(fx, "namespaces/dev/pods/.yaml", "1");
	write_rel(fx, "namespaces/dev/pods/broken.yaml", "spec: [unclosed\n");
	write_rel(fx, "namespaces/dev/pods/list.yaml", "- not\n- an object\n");
	write_obj(fx, "namespaces/dev.yaml", "1"); /* a drop-box file, not a namespace */
	mkdir_rel(fx, "namespaces/prod");
	mkdir_rel(fx, "namespaces/prod/pods");
	write_obj(fx, "namespaces/prod/pods/a.yaml", "2");

	start_pods(fx);
	/* Reported before informer_start() returned. */
	assert_int_equal(fx->nrecs, 3);
	qsort(fx->recs, fx->nrecs, sizeof(fx->recs[0]), cmp_rec);
	assert_string_equal(fx->recs[0].key, "dev/a");
	assert_string_equal(fx->recs[1].key, "dev/b");
	assert_string_equal(fx->recs[2].key, "prod/a");
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(fx->recs[i].type, 'A');
	fx->next = fx->nrecs;
	assert_int_equal(informer_count(fx->inf), 3);
	assert_string_equal(ynode_path_str(informer_get(fx->inf, "prod/a"), "spec.v"), "2");
	assert_null(informer_get(fx->inf, "dev/broken"));
	assert_null(informer_get(fx->inf, "dev/list"));
	assert_null(informer_get(fx->inf, "dev/s"));
	assert_null(informer_get(fx->inf, "a"));
	assert_null(informer_get(fx->inf, "nope/a"));
	expect_quiet(fx);
}

static void test_informer_watch__create_rename_over_delete(void **state)
{
	struct fixture *fx = *state;
	start_pods(fx);
	write_obj(fx, "namespaces/dev/pods/web.yaml", "1");
	expect_next(fx, 'A', "dev/web", "1");

	replace_obj(fx, "namespaces/dev/pods", "web.yaml", "2");
	expect_next(fx, 'U', "dev/web", "2");
	assert_string_equal(fx->recs[fx->next - 1].old, "1");
	assert_string_equal(ynode_path_str(informer_get(fx->inf, "dev/web"), "spec.v"), "2");

	/* Written again, same content: no update. */
	write_obj(fx, "namespaces/dev/pods/web.yaml", "2");
	replace_obj(fx, "namespaces/dev/pods", "web.yaml", "2");
	expect_quiet(fx);

	unlink_rel(fx, "namespaces/dev/pods/web.yaml");
	expect_next(fx, 'D', "dev/web", "2");
	assert_null(informer_get(fx->inf, "dev/web"));
	assert_int_equal(informer_count(fx->inf), 0);
	expect_quiet(fx);
}

static void test_informer_watch__delete_grace_zero_reports_deletes_at_once(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/old.yaml", "1");
	fx->inf = informer_new(fx->loop, fx->dir, "pods", true);
	informer_set_delete_grace(fx->inf, 0);
	informer_add_handlers(fx->inf, &handlers, fx);
	assert_int_equal(informer_start(fx->inf, NULL), 0);
	expect_next(fx, 'A', "dev/old", "1");
	/* both happen before the informer looks: the delete comes first, as
	 * it happened (with the default grace it would come 250 ms later) */
	unlink_rel(fx, "namespaces/dev/pods/old.yaml");
	write_obj(fx, "namespaces/dev/pods/new.yaml", "1");
	expect_next(fx, 'D', "dev/old", "1");
	expect_next(fx, 'A', "dev/new", "1");
	expect_quiet(fx);
}

static void test_informer_watch__scratch_files_are_ignored(void **state)
{
	struct fixture *fx = *state;
	start_pods(fx);
	write_obj(fx, "namespaces/dev/pods/.web.yaml.swp", "1");
	write_obj(fx, "namespaces/dev/pods/web.yaml~", "1");
	write_obj(fx, "namespaces/dev/pods/4913", "1"); /* vim's probe */
	write_obj(fx, "namespaces/dev/pods/sedAbc123", "1");
	rename_rel(fx, "namespaces/dev/pods/sedAbc123", "namespaces/dev/pods/.hidden.yaml");
	unlink_rel(fx, "namespaces/dev/pods/.web.yaml.swp");
	mkdir_rel(fx, "namespaces/dev/pods/dir.yaml");
	expect_quiet(fx);
	assert_int_equal(informer_count(fx->inf), 0);
}

static void test_informer_watch__editor_backup_rename_is_an_update(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/web.yaml", "1");
	start_pods(fx);
	expect_next(fx, 'A', "dev/web", "1");
	/* vim with backups: the file is renamed away, then written anew. Both
	 * happen before the informer looks, as they may on a busy machine. */
	rename_rel(fx, "namespaces/dev/pods/web.yaml", "namespaces/dev/pods/web.yaml~");
	write_obj(fx, "namespaces/dev/pods/web.yaml", "2");
	expect_next(fx, 'U', "dev/web", "2");
	expect_quiet(fx);
}

static void test_informer_watch__unparsable_file_is_skipped(void **state)
{
	struct fixture *fx = *state;
	start_pods(fx);
	write_rel(fx, "namespaces/dev/pods/bad.yaml", "metadata: {name: [\n");
	expect_quiet(fx);
	assert_null(informer_get(fx->inf, "dev/bad"));
	/* Fixed: now it is an object. */
	replace_obj(fx, "namespaces/dev/pods", "bad.yaml", "1");
	expect_next(fx, 'A', "dev/bad", "1");
	/* Broken again: the cache keeps the last version that parsed. */
	write_rel(fx, "namespaces/dev/pods/bad.yaml", "::: nope\n\t- [\n");
	expect_quiet(fx);
	assert_string_equal(ynode_path_str(informer_get(fx->inf, "dev/bad"), "spec.v"), "1");
	/* And deleting it reports the version the cache had. */
	unlink_rel(fx, "namespaces/dev/pods/bad.yaml");
	expect_next(fx, 'D', "dev/bad", "1");
	/* A broken file that never parsed is deleted silently. */
	write_rel(fx, "namespaces/dev/pods/never.yaml", "[");
	unlink_rel(fx, "namespaces/dev/pods/never.yaml");
	expect_quiet(fx);
}

static void test_informer_namespace__created_after_start(void **state)
{
	struct fixture *fx = *state;
	start_pods(fx);
	/* The namespace first, its kind folder later: the informer has seen the
	 * namespace (the barrier says so) before the folder exists. */
	mkdir_rel(fx, "namespaces/prod");
	expect_quiet(fx);
	mkdir_rel(fx, "namespaces/prod/pods");
	write_obj(fx, "namespaces/prod/pods/api.yaml", "1");
	expect_next(fx, 'A', "prod/api", "1");
	replace_obj(fx, "namespaces/prod/pods", "api.yaml", "2");
	expect_next(fx, 'U', "prod/api", "2");

	/* All at once, before the informer looks. */
	mkdir_rel(fx, "namespaces/qa");
	mkdir_rel(fx, "namespaces/qa/pods");
	write_obj(fx, "namespaces/qa/pods/db.yaml", "1");
	expect_next(fx, 'A', "qa/db", "1");

	/* Built elsewhere and moved in whole, as a file system that creates
	 * the kind folders itself would show it. */
	mkdir_rel(fx, "staging");
	mkdir_rel(fx, "staging/pods");
	write_obj(fx, "staging/pods/cache.yaml", "1");
	rename_rel(fx, "staging", "namespaces/staging");
	expect_next(fx, 'A', "staging/cache", "1");

	/* The kind folder moved into an existing namespace. */
	mkdir_rel(fx, "namespaces/late");
	mkdir_rel(fx, "elsewhere");
	write_obj(fx, "elsewhere/job.yaml", "1");
	expect_quiet(fx);
	rename_rel(fx, "elsewhere", "namespaces/late/pods");
	expect_next(fx, 'A', "late/job", "1");
	expect_quiet(fx);
	assert_int_equal(informer_count(fx->inf), 4);
}

static void test_informer_namespace__deleted(void **state)
{
	struct fixture *fx = *state;
	mkdir_rel(fx, "namespaces/prod");
	mkdir_rel(fx, "namespaces/prod/pods");
	write_obj(fx, "namespaces/prod/pods/a.yaml", "1");
	write_obj(fx, "namespaces/prod/pods/b.yaml", "1");
	start_pods(fx);
	fx->next = fx->nrecs;
	assert_int_equal(informer_count(fx->inf), 2);
	/* rm -r namespaces/prod */
	unlink_rel(fx, "namespaces/prod/pods/a.yaml");
	unlink_rel(fx, "namespaces/prod/pods/b.yaml");
	rmdir_rel(fx, "namespaces/prod/pods");
	rmdir_rel(fx, "namespaces/prod");
	run_until_recs(fx, fx->next + 2);
	qsort(fx->recs + fx->next, 2, sizeof(fx->recs[0]), cmp_rec);
	expect_next(fx, 'D', "prod/a", "1");
	expect_next(fx, 'D', "prod/b", "1");
	expect_quiet(fx);
	assert_int_equal(informer_count(fx->inf), 0);

	/* Back under the same name: a new namespace. */
	mkdir_rel(fx, "namespaces/prod");
	mkdir_rel(fx, "namespaces/prod/pods");
	write_obj(fx, "namespaces/prod/pods/a.yaml", "2");
	expect_next(fx, 'A', "prod/a", "2");
}

static void test_informer_namespace__moved_away_with_its_objects(void **state)
{
	struct fixture *fx = *state;
	mkdir_rel(fx, "namespaces/prod");
	mkdir_rel(fx, "namespaces/prod/pods");
	write_obj(fx, "namespaces/prod/pods/a.yaml", "1");
	start_pods(fx);
	fx->next = fx->nrecs;
	rename_rel(fx, "namespaces/prod", "gone");
	expect_next(fx, 'D', "prod/a", "1");
	/* What happens in the old folder is no longer ours. */
	write_obj(fx, "gone/pods/b.yaml", "1");
	expect_quiet(fx);
}

static void test_informer_resync__finds_what_events_did_not_say(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/web.yaml", "1");
	write_obj(fx, "outside.yaml", "1");
	start_pods(fx);
	expect_next(fx, 'A', "dev/web", "1");

	/* Changed on disk; the events are queued but not read yet. The relist
	 * reports the update, and the queued events then find nothing new. */
	replace_obj(fx, "namespaces/dev/pods", "web.yaml", "2");
	informer_resync(fx->inf);
	expect_next(fx, 'U', "dev/web", "2");
	expect_quiet(fx);

	/* A hard link makes an object without any event the informer follows:
	 * only a (timed) resync can find it. */
	char from[512], to[512];
	path_of(fx, from, sizeof(from), "outside.yaml");
	path_of(fx, to, sizeof(to), "namespaces/dev/pods/linked.yaml");
	assert_int_equal(link(from, to), 0);
	informer_set_resync(fx->inf, 5);
	expect_next(fx, 'A', "dev/linked", "1");
	informer_set_resync(fx->inf, 0);
	expect_quiet(fx);
}

static void test_informer_overflow__relists(void **state)
{
	struct fixture *fx = *state;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
	long max = 16384;
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 16384;
		fclose(f);
	}
	if (max > 200000)
		skip(); /* too many files to overflow it quickly */
	write_obj(fx, "namespaces/dev/pods/old.yaml", "1");
	start_pods(fx);
	expect_next(fx, 'A', "dev/old", "1");
	/* Fill the queue with scratch-file events (two per round, never two
	 * alike in a row, so the kernel cannot merge them)... */
	char scratch[512];
	path_of(fx, scratch, sizeof(scratch), "namespaces/dev/pods/.scratch");
	for (long i = 0; i < max / 2 + 16; i++) {
		int fd = open(scratch, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
		unlink(scratch);
	}
	/* ...so that these changes are lost from it. */
	write_obj(fx, "namespaces/dev/pods/new.yaml", "1");
	unlink_rel(fx, "namespaces/dev/pods/old.yaml");
	run_until_recs(fx, fx->next + 2);
	qsort(fx->recs + fx->next, 2, sizeof(fx->recs[0]), cmp_rec);
	expect_next(fx, 'A', "dev/new", "1");
	expect_next(fx, 'D', "dev/old", "1");
	expect_quiet(fx);
}

struct visit {
	char keys[16][64];
	int n;
	int stop_at;
};

static int visit(void *data, const char *key, const struct ynode *obj)
{
	struct visit *v = data;
	assert_non_null(obj);
	snprintf(v->keys[v->n++], 64, "%s", key);
	return v->n == v->stop_at ? 42 : 0;
}

static void test_informer_foreach__by_namespace_in_key_order(void **state)
{
	struct fixture *fx = *state;
	mkdir_rel(fx, "namespaces/prod");
	mkdir_rel(fx, "namespaces/prod/pods");
	write_obj(fx, "namespaces/dev/pods/b.yaml", "1");
	write_obj(fx, "namespaces/dev/pods/a.yaml", "1");
	write_rel(fx, "namespaces/dev/pods/c.yaml", "bad: [");
	write_obj(fx, "namespaces/prod/pods/z.yaml", "1");
	start_pods(fx);

	struct visit v = {0};
	assert_int_equal(informer_foreach(fx->inf, "dev", visit, &v), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.keys[0], "dev/a");
	assert_string_equal(v.keys[1], "dev/b");

	memset(&v, 0, sizeof(v));
	assert_int_equal(informer_foreach(fx->inf, NULL, visit, &v), 0);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.keys[2], "prod/z");

	memset(&v, 0, sizeof(v));
	v.stop_at = 2;
	assert_int_equal(informer_foreach(fx->inf, NULL, visit, &v), 42);
	assert_int_equal(v.n, 2);

	memset(&v, 0, sizeof(v));
	assert_int_equal(informer_foreach(fx->inf, "nope", visit, &v), 0);
	assert_int_equal(v.n, 0);
}

static void test_informer_cluster_scoped__nodes(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "nodes/n1.yaml", "1");
	fx->inf = informer_new(fx->loop, fx->dir, "nodes", false);
	informer_add_handlers(fx->inf, &handlers, fx);
	assert_int_equal(informer_start(fx->inf, NULL), 0);
	expect_next(fx, 'A', "n1", "1");
	write_obj(fx, "nodes/n2.yaml", "1");
	expect_next(fx, 'A', "n2", "1");
	replace_obj(fx, "nodes", "n1.yaml", "2");
	expect_next(fx, 'U', "n1", "2");
	unlink_rel(fx, "nodes/n2.yaml");
	expect_next(fx, 'D', "n2", "1");
	assert_non_null(informer_get(fx->inf, "n1"));
	assert_null(informer_get(fx->inf, "dev/n1"));
	struct visit v = {0};
	assert_int_equal(informer_foreach(fx->inf, NULL, visit, &v), 0);
	assert_int_equal(v.n, 1);
	/* A pod elsewhere is not a node. */
	write_obj(fx, "namespaces/dev/pods/n3.yaml", "1");
	write_obj(fx, "nodes/zz.yaml", "1");
	expect_next(fx, 'A', "zz", "1");
}

static void test_informer_start__fails_without_the_tree(void **state)
{
	struct fixture *fx = *state;
	char missing[512];
	path_of(fx, missing, sizeof(missing), "not-mounted");
	struct error *err = NULL;
	fx->inf = informer_new(fx->loop, missing, "pods", true);
	assert_int_equal(informer_start(fx->inf, &err), -ENOENT);
	assert_non_null(strstr(err->msg, "not-mounted/namespaces"));
	error_free(err);
	informer_free(fx->inf);
	err = NULL;
	fx->inf = informer_new(fx->loop, fx->dir, "persistentvolumes", false);
	assert_int_equal(informer_start(fx->inf, &err), -ENOENT);
	error_free(err);
}

static void test_informer_queue__fed_with_keys(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/a.yaml", "1");
	struct workqueue *q = workqueue_new(fx->loop, "pods", NULL);
	fx->inf = informer_new(fx->loop, fx->dir, "pods", true);
	informer_add_queue(fx->inf, q);
	assert_int_equal(informer_start(fx->inf, NULL), 0);
	assert_int_equal(workqueue_len(q), 1);
	/* A listener added late hears the cache first. */
	informer_add_handlers(fx->inf, &handlers, fx);
	expect_next(fx, 'A', "dev/a", "1");

	replace_obj(fx, "namespaces/dev/pods", "a.yaml", "2");
	write_obj(fx, "namespaces/dev/pods/b.yaml", "1");
	expect_next(fx, 'U', "dev/a", "2");
	expect_next(fx, 'A', "dev/b", "1");
	/* dev/a was already queued: once only. */
	assert_int_equal(workqueue_len(q), 2);
	const char *k = workqueue_get(q);
	assert_string_equal(k, "dev/a");
	workqueue_done(q, k);
	k = workqueue_get(q);
	assert_string_equal(k, "dev/b");
	workqueue_done(q, k);
	unlink_rel(fx, "namespaces/dev/pods/b.yaml");
	expect_next(fx, 'D', "dev/b", "1");
	k = workqueue_get(q);
	assert_string_equal(k, "dev/b");
	assert_null(informer_get(fx->inf, k)); /* how a handler sees a delete */
	workqueue_done(q, k);
	informer_free(fx->inf);
	fx->inf = NULL;
	workqueue_free(q);
}

static void test_informer_root__lost_and_back(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/a.yaml", "1");
	start_pods(fx);
	expect_next(fx, 'A', "dev/a", "1");
	/* rm -r namespaces: the objects go as their files do. */
	char root[512];
	path_of(fx, root, sizeof(root), "namespaces");
	assert_int_equal(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	expect_next(fx, 'D', "dev/a", "1");
	/* The folder comes back (a remount): found again by the retry timer. */
	mkdir_rel(fx, "namespaces");
	mkdir_rel(fx, "namespaces/dev");
	mkdir_rel(fx, "namespaces/dev/pods");
	write_obj(fx, "namespaces/dev/pods/b.yaml", "1");
	expect_next(fx, 'A', "dev/b", "1");
	expect_quiet(fx);
}

static void test_informer_cluster_scoped__folder_lost_and_back(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "nodes/n1.yaml", "1");
	fx->inf = informer_new(fx->loop, fx->dir, "nodes", false);
	informer_add_handlers(fx->inf, &handlers, fx);
	assert_int_equal(informer_start(fx->inf, NULL), 0);
	expect_next(fx, 'A', "n1", "1");
	unlink_rel(fx, "nodes/n1.yaml");
	rmdir_rel(fx, "nodes");
	expect_next(fx, 'D', "n1", "1");
	mkdir_rel(fx, "nodes");
	write_obj(fx, "nodes/n2.yaml", "1");
	expect_next(fx, 'A', "n2", "1");
	write_obj(fx, "nodes/n3.yaml", "1");
	expect_next(fx, 'A', "n3", "1");
}

/* A transform: the informer keeps each object's spec.v as a string. */
static int items_alive;

static void *make_v(void *data, const char *key, const struct ynode *obj)
{
	(void)data;
	(void)key;
	const char *v = ynode_path_str(obj, "spec.v");
	items_alive++;
	return xstrdup(v ? v : "?");
}

static void free_v(void *item)
{
	items_alive--;
	free(item);
}

static void on_item_add(void *data, const char *key, void *item)
{
	struct fixture *fx = data;
	snprintf(new_rec(fx, 'A', key)->val, 64, "%s", (char *)item);
	assert_ptr_equal(informer_get_item(fx->inf, key), item);
	assert_null(informer_get(fx->inf, key)); /* no trees */
}

static void on_item_update(void *data, const char *key, void *old, void *item)
{
	struct fixture *fx = data;
	struct rec *r = new_rec(fx, 'U', key);
	snprintf(r->val, 64, "%s", (char *)item);
	snprintf(r->old, 64, "%s", (char *)old);
	assert_ptr_equal(informer_get_item(fx->inf, key), item);
}

static void on_item_delete(void *data, const char *key, void *old)
{
	struct fixture *fx = data;
	snprintf(new_rec(fx, 'D', key)->val, 64, "%s", (char *)old);
	assert_null(informer_get_item(fx->inf, key));
}

static void test_informer_transform__keeps_items(void **state)
{
	struct fixture *fx = *state;
	write_obj(fx, "namespaces/dev/pods/a.yaml", "1");
	fx->inf = informer_new(fx->loop, fx->dir, "pods", true);
	const struct informer_transform xf = {make_v, free_v, NULL};
	const struct informer_item_handlers h = {on_item_add, on_item_update, on_item_delete};
	informer_set_transform(fx->inf, &xf);
	informer_add_item_handlers(fx->inf, &h, fx);
	struct error *err = NULL;
	if (informer_start(fx->inf, &err) < 0)
		fail_msg("informer_start: %s", err->msg);
	expect_next(fx, 'A', "dev/a", "1");
	assert_string_equal(informer_get_item(fx->inf, "dev/a"), "1");
	write_obj(fx, "namespaces/dev/pods/a.yaml", "2");
	expect_next(fx, 'U', "dev/a", "2");
	assert_string_equal(fx->recs[fx->next - 1].old, "1");
	unlink_rel(fx, "namespaces/dev/pods/a.yaml");
	expect_next(fx, 'D', "dev/a", "2");
	informer_free(fx->inf);
	fx->inf = NULL;
	assert_int_equal(items_alive, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_informer_start__lists_objects_and_skips_the_rest),
	    T(test_informer_watch__create_rename_over_delete),
	    T(test_informer_watch__delete_grace_zero_reports_deletes_at_once),
	    T(test_informer_watch__scratch_files_are_ignored),
	    T(test_informer_watch__editor_backup_rename_is_an_update),
	    T(test_informer_watch__unparsable_file_is_skipped),
	    T(test_informer_namespace__created_after_start),
	    T(test_informer_namespace__deleted),
	    T(test_informer_namespace__moved_away_with_its_objects),
	    T(test_informer_resync__finds_what_events_did_not_say),
	    T(test_informer_overflow__relists),
	    T(test_informer_foreach__by_namespace_in_key_order),
	    T(test_informer_cluster_scoped__nodes),
	    T(test_informer_start__fails_without_the_tree),
	    T(test_informer_queue__fed_with_keys),
	    T(test_informer_root__lost_and_back),
	    T(test_informer_cluster_scoped__folder_lost_and_back),
	    T(test_informer_transform__keeps_items),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
