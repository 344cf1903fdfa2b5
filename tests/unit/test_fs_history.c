/* test_fs_history.c: the history writer over an LMDB store in a temporary
 * folder, its repository beside it: a repository that begins after its
 * store (a host that joins, a history lost) begins with the store at one
 * revision and goes on after it, the outbox's older entries applied once
 * (in the snapshot) and not again; one over an empty store does not; its
 * commits are packs (histpack.h) that git's fsck and verify-pack take
 * whole, with no loose object beside them. Every wait is bounded. */
#include <errno.h>
#include <git2.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "store.h"

#include "history.h"
#include "testlib.h"
#include "util.h"

static int setup(void **state)
{
	return testlib_store_setup(state, "corral-history");
}

static int teardown(void **state)
{
	return testlib_store_teardown(state);
}

/* A ConfigMap in dev, queued for the history with the declared text hist
 * (which a test can tell from the snapshot's); returns its revision. */
static uint64_t put(struct store *s, const char *name, uint64_t expect, const char *hist)
{
	cleanup_free char *key = xasprintf("namespaces/dev/configmaps/%s", name);
	cleanup_free char *path = xasprintf("%s.yaml", key);
	cleanup_free char *msg = xasprintf("create configmap dev/%s", name);
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: dev\n"
		      "data:\n  a: \"1\"\n",
		      name);
	struct store_change c = {.key = key,
				 .obj = y(text),
				 .expect_rv = expect,
				 .history_path = path,
				 .history_yaml = hist,
				 .message = msg,
				 .author = "t <t@example.com>",
				 .decl_changed = true};
	struct error *err = NULL;
	if (store_apply(s, &c, &err) < 0)
		fail_msg("apply %s: %s", key, err->msg);
	free(c.yaml);
	ynode_free(c.obj);
	return c.rv;
}

/* The history in gitdir over s, its writer started. */
static struct history *start(const char *gitdir, struct store *s)
{
	struct history *h = NULL;
	struct error *err = NULL;
	if (history_open(gitdir, s, &h, &err) < 0 || history_start(h, &err) < 0)
		fail_msg("history: %s", err->msg);
	return h;
}

static void wait_reached(struct history *h, uint64_t rev)
{
	for (int i = 0; i < 200 && history_revision(h) < rev; i++)
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	assert_true(history_revision(h) >= rev);
}

/* The commits on HEAD, newest first: their messages, '\x1e'-separated, and
 * HEAD's file at path (NULL: none) into *blob. */
static size_t head_log(const char *gitdir, char **messages, const char *path, char **blob)
{
	git_libgit2_init();
	git_repository *repo = NULL;
	assert_int_equal(git_repository_open_bare(&repo, gitdir), 0);
	git_revwalk *walk = NULL;
	assert_int_equal(git_revwalk_new(&walk, repo), 0);
	assert_int_equal(git_revwalk_push_head(walk), 0);
	git_oid oid;
	size_t n = 0;
	*messages = xstrdup("");
	while (git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL;
		assert_int_equal(git_commit_lookup(&c, repo, &oid), 0);
		char *m = xasprintf("%s%s\x1e", *messages, git_commit_message(c));
		free(*messages);
		*messages = m;
		git_commit_free(c);
		n++;
	}
	git_revwalk_free(walk);
	*blob = NULL;
	git_object *o = NULL;
	cleanup_free char *spec = xasprintf("HEAD:%s", path);
	if (git_revparse_single(&o, repo, spec) == 0) {
		git_blob *b = (git_blob *)o;
		*blob = xstrndup(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b));
		git_object_free(o);
	}
	git_repository_free(repo);
	git_libgit2_shutdown();
	return n;
}

static void test_history__a_late_history_begins_with_the_store_and_goes_on_after_it(void **state)
{
	struct testlib_store_fixture *f = *state;
	/* Three changes still in the outbox, queued with a text the
	 * snapshot's is not: were they applied after it, HEAD would show
	 * it. */
	put(f->s, "a", 0, "stale: a\n");
	put(f->s, "b", 0, "stale: b\n");
	uint64_t r3 = put(f->s, "c", 0, "stale: c\n");
	cleanup_free char *gitdir = xasprintf("%s/history.git", f->dir);
	struct history *h = start(gitdir, f->s);
	wait_reached(h, r3);
	assert_int_equal(history_revision(h), r3);
	uint64_t r4 = put(f->s, "d", 0, "kind: ConfigMap\nd: after\n");
	wait_reached(h, r4);
	history_close(h);

	cleanup_free char *msgs = NULL, *blob = NULL, *dblob = NULL;
	assert_int_equal(head_log(gitdir, &msgs, "namespaces/dev/configmaps/a.yaml", &blob), 2);
	cleanup_free char *first =
	    xasprintf("corral: the cluster at revision %llu, when this host's history began\n",
		      (unsigned long long)r3);
	const char *root = strchr(msgs, '\x1e') + 1;
	assert_memory_equal(root, first, strlen(first));
	cleanup_free char *trailer = xasprintf("\nCorral-Revision: %llu\n", (unsigned long long)r3);
	assert_non_null(strstr(root, trailer));
	assert_non_null(strstr(msgs, "create configmap dev/d"));
	/* The snapshot holds the declared form of the stored object. */
	assert_non_null(blob);
	assert_non_null(strstr(blob, "kind: ConfigMap"));
	assert_null(strstr(blob, "stale"));
	free(msgs);
	msgs = NULL;
	head_log(gitdir, &msgs, "namespaces/dev/configmaps/d.yaml", &dblob);
	assert_string_equal(dblob, "kind: ConfigMap\nd: after\n");
}

static void test_history__a_history_over_an_empty_store_takes_each_change(void **state)
{
	struct testlib_store_fixture *f = *state;
	cleanup_free char *gitdir = xasprintf("%s/history.git", f->dir);
	struct history *h = start(gitdir, f->s);
	uint64_t r1 = put(f->s, "a", 0, "kind: ConfigMap\na: 1\n");
	wait_reached(h, r1);
	history_close(h);
	/* Opened again over a store with objects: it has a history. */
	h = start(gitdir, f->s);
	uint64_t r2 = put(f->s, "b", 0, "kind: ConfigMap\nb: 1\n");
	wait_reached(h, r2);
	history_close(h);
	cleanup_free char *msgs = NULL, *blob = NULL;
	assert_int_equal(head_log(gitdir, &msgs, "namespaces/dev/configmaps/a.yaml", &blob), 2);
	assert_null(strstr(msgs, "the cluster at revision"));
	assert_string_equal(blob, "kind: ConfigMap\na: 1\n");
}

/* Files under objects/ that are not in objects/pack or objects/info:
 * loose objects. */
static int loose_objects(const char *gitdir)
{
	cleanup_free char *cmd = xasprintf("find %s/objects -path '*/pack' -prune -o -path "
					   "'*/info' -prune -o -type f -print | grep -c .",
					   gitdir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int n = -1;
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_history__commits_are_packs_that_git_reads_whole(void **state)
{
	struct testlib_store_fixture *f = *state;
	cleanup_free char *gitdir = xasprintf("%s/history.git", f->dir);
	struct history *h = start(gitdir, f->s);
	/* One change alone, then 300 at once (commits of many objects: a
	 * pack whose index spans every first byte). */
	uint64_t r = put(f->s, "first", 0, "kind: ConfigMap\nfirst: 1\n");
	wait_reached(h, r);
	for (int i = 0; i < 300; i++) {
		cleanup_free char *name = xasprintf("cm-%03d", i);
		cleanup_free char *text = xasprintf("kind: ConfigMap\nn: %d\n", i);
		r = put(f->s, name, 0, text);
	}
	wait_reached(h, r);
	history_close(h);
	assert_int_equal(loose_objects(gitdir), 0);
	cleanup_free char *fsck =
	    xasprintf("git --git-dir=%s fsck --full --strict --no-dangling --no-progress", gitdir);
	assert_int_equal(system(fsck), 0);
	cleanup_free char *verify = xasprintf(
	    "for i in %s/objects/pack/pack-*.idx; do git verify-pack \"$i\" || exit 1; done",
	    gitdir);
	assert_int_equal(system(verify), 0);
	cleanup_free char *msgs = NULL, *blob = NULL;
	assert_true(head_log(gitdir, &msgs, "namespaces/dev/configmaps/cm-299.yaml", &blob) >= 2);
	assert_string_equal(blob, "kind: ConfigMap\nn: 299\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_history__a_late_history_begins_with_the_store_and_goes_on_after_it, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_history__a_history_over_an_empty_store_takes_each_change, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_history__commits_are_packs_that_git_reads_whole,
					    setup, teardown),
	};
	return cmocka_run_group_tests_name("history", tests, NULL, NULL);
}
