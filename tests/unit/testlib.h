/* testlib.h: the helpers many unit tests share, so that each is written
 * once: a YAML document from a test's string, a string field a test needs
 * to be there, and (for the tests that include fs's store.h first) a store
 * in a private temporary folder. Header-only
 * (static inline) so that every test binary builds from its own .c; it
 * must never hold a test's assertions about the code under test. */
#ifndef CORRAL_TESTLIB_H
#define CORRAL_TESTLIB_H

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "error.h"
#include "ynode.h"

/* The one document in text; a text that does not parse fails the test. */
static inline struct ynode *y(const char *text)
{
	struct ynode *doc = NULL;
	cleanup_error struct error *err = NULL;
	if (yaml_parse_one(text, strlen(text), &doc, &err) < 0)
		fail_msg("bad test YAML \"%s\": %s", text, err->msg);
	return doc;
}

/* The string at path in n; none there fails the test. */
static inline const char *str(const struct ynode *n, const char *path)
{
	const char *s = ynode_path_str(n, path);
	if (!s)
		fail_msg("no %s", path);
	return s;
}

static inline int testlib__rm_entry(const char *path, const struct stat *st, int flag,
				    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes the folder dir and everything in it. */
static inline void testlib_rm_tree(const char *dir)
{
	nftw(dir, testlib__rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#ifdef CORRAL_FS_STORE_H

/* Makes a fresh folder $TMPDIR/<prefix>-XXXXXX (/tmp without TMPDIR) into
 * dir (size bytes) and opens a store in it; -1 (said on stderr, nothing
 * left behind) when either fails. */
static inline int testlib_store_temp(char *dir, size_t size, const char *prefix, struct store **s)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
	if (!mkdtemp(dir))
		return -1;
	struct error *err = NULL;
	if (store_open(dir, s, &err) < 0) {
		fprintf(stderr, "store_open: %s\n", err->msg);
		error_free(err);
		testlib_rm_tree(dir);
		return -1;
	}
	return 0;
}

/* Closes s and removes the folder testlib_store_temp made. */
static inline void testlib_store_remove(const char *dir, struct store *s)
{
	store_close(s);
	testlib_rm_tree(dir);
}

/* A cmocka fixture of one temporary store: setup and teardown. */
struct testlib_store_fixture {
	char dir[64];
	struct store *s;
};

static inline int testlib_store_setup(void **state, const char *prefix)
{
	struct testlib_store_fixture *f = calloc(1, sizeof(*f));
	if (!f || testlib_store_temp(f->dir, sizeof(f->dir), prefix, &f->s) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static inline int testlib_store_teardown(void **state)
{
	struct testlib_store_fixture *f = *state;
	testlib_store_remove(f->dir, f->s);
	free(f);
	return 0;
}

#endif /* CORRAL_FS_STORE_H */

#endif
