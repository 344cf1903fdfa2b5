/* test_noded_layers.c: the layer store — a fixture layer tar (gzip'd, made
 * here with tar(1)) unpacked with its OCI whiteout and opaque folder turned
 * into overlayfs's, a layer whose content is not its diffID refused and
 * not kept, image records written, read, listed, and the garbage
 * collector removing the unused image and its unshared layer only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "layers.h"
#include "util.h"

struct fixture {
	char dir[64];
	char *store;
	char *blob;
	char diffid[LAYERS_DIGEST_SIZE];
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("fixture command failed: %s", cmd);
}

/* A layer: a/keep, a/.wh.gone (hides a/gone), b/.wh..wh..opq, b/new. */
static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/corral-layers-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	fx->store = xasprintf("%s/store", fx->dir);
	fx->blob = xasprintf("%s/layer.tar.gz", fx->dir);
	cleanup_free char *cmd = xasprintf(
	    "set -e; cd %s; mkdir -p src/a src/b store; echo k >src/a/keep; : >src/a/.wh.gone; "
	    ": >src/b/.wh..wh..opq; echo n >src/b/new; tar --numeric-owner -C src -cf layer.tar .; "
	    "gzip -n -c layer.tar >layer.tar.gz",
	    fx->dir);
	sh(cmd);
	cleanup_free char *tar = xasprintf("%s/layer.tar", fx->dir);
	assert_int_equal(layers_sha256_file(tar, fx->diffid, NULL), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx->store);
	free(fx->blob);
	free(fx);
	return 0;
}

static void test_layers_unpack__whiteouts_become_overlayfs(void **state)
{
	struct fixture *fx = *state;
	struct error *err = NULL;
	if (layers_unpack(fx->store, fx->blob, NULL, fx->diffid, &err) < 0)
		fail_msg("unpack: %s", err->msg);
	cleanup_free char *l = layers_layer_path(fx->store, fx->diffid);
	cleanup_free char *keep = xasprintf("%s/a/keep", l);
	cleanup_free char *gone = xasprintf("%s/a/gone", l);
	cleanup_free char *wh = xasprintf("%s/a/.wh.gone", l);
	cleanup_free char *b = xasprintf("%s/b", l);
	cleanup_free char *opq = xasprintf("%s/b/.wh..wh..opq", l);
	cleanup_free char *bnew = xasprintf("%s/b/new", l);
	struct stat st;
	assert_int_equal(stat(keep, &st), 0);
	assert_int_equal(stat(bnew, &st), 0);
	assert_int_equal(lstat(gone, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 0);
	assert_int_equal(minor(st.st_rdev), 0);
	assert_int_equal(lstat(wh, &st), -1);
	assert_int_equal(lstat(opq, &st), -1);
	char v[4] = "";
	assert_int_equal(getxattr(b, "trusted.overlay.opaque", v, sizeof(v)), 1);
	assert_int_equal(v[0], 'y');
	/* a second unpack of the same diffID keeps the folder there */
	assert_int_equal(layers_unpack(fx->store, fx->blob, NULL, fx->diffid, NULL), 0);
}

static void test_layers_unpack__refuses_wrong_diffid(void **state)
{
	struct fixture *fx = *state;
	const char *wrong =
	    "sha256:0000000000000000000000000000000000000000000000000000000000000000";
	struct error *err = NULL;
	assert_int_equal(layers_unpack(fx->store, fx->blob, NULL, wrong, &err), -EBADMSG);
	assert_non_null(strstr(err->msg, "not the diffID"));
	error_free(err);
	cleanup_free char *l = layers_layer_path(fx->store, wrong);
	struct stat st;
	assert_int_equal(stat(l, &st), -1);
	/* no temporary folder left behind either */
	cleanup_free char *ld = xasprintf("%s/layers", fx->store);
	cleanup_dir DIR *d = opendir(ld);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)))
		assert_true(strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0);
}

static void test_layers_unpack__checks_the_blob_digest(void **state)
{
	struct fixture *fx = *state;
	char bd[LAYERS_DIGEST_SIZE];
	assert_int_equal(layers_sha256_file(fx->blob, bd, NULL), 0);
	const char *wrong =
	    "sha256:1111111111111111111111111111111111111111111111111111111111111111";
	struct error *err = NULL;
	assert_int_equal(layers_unpack(fx->store, fx->blob, wrong, fx->diffid, &err), -EBADMSG);
	assert_non_null(strstr(err->msg, "digest mismatch"));
	error_free(err);
	cleanup_free char *l = layers_layer_path(fx->store, fx->diffid);
	struct stat st;
	assert_int_equal(stat(l, &st), -1);
	assert_int_equal(layers_unpack(fx->store, fx->blob, bd, fx->diffid, NULL), 0);
	assert_int_equal(stat(l, &st), 0);
}

static void record(struct layers_record *r, const char *name, const char *layer, time_t used)
{
	*r = (struct layers_record){0};
	r->name = xstrdup(name);
	r->digest =
	    xstrdup("sha256:1111111111111111111111111111111111111111111111111111111111111111");
	strv_add(&r->layers, layer);
	strv_add(&r->blobs, layer);
	strv_add(&r->cmd, "sh");
	strv_add(&r->env, "A=b");
	r->user = xstrdup("1000:1000");
	r->size = 1234567890123LL;
	r->last_used = used;
}

static void test_layers_records__round_trip_and_gc(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(layers_unpack(fx->store, fx->blob, NULL, fx->diffid, NULL), 0);
	const char *other =
	    "sha256:2222222222222222222222222222222222222222222222222222222222222222";
	cleanup_free char *od = layers_layer_path(fx->store, other);
	assert_int_equal(util_mkdir_p(od, 0755), 0);
	struct layers_record a, b, got;
	record(&a, "docker.io/library/a:1", fx->diffid, 100);
	record(&b, "docker.io/library/b:1", other, 50);
	assert_int_equal(layers_record_write(fx->store, &a, NULL), 0);
	assert_int_equal(layers_record_write(fx->store, &b, NULL), 0);
	assert_int_equal(layers_record_read(fx->store, "docker.io/library/a:1", &got, NULL), 0);
	assert_string_equal(got.name, a.name);
	assert_int_equal(got.size, a.size);
	assert_string_equal(got.user, "1000:1000");
	assert_string_equal(got.cmd.v[0], "sh");
	assert_string_equal(got.layers.v[0], fx->diffid);
	assert_true(layers_record_complete(fx->store, &got));
	layers_record_clear(&got);
	assert_int_equal(layers_record_read(fx->store, "nope", &got, NULL), -ENOENT);
	struct layers_record *v;
	size_t n;
	assert_int_equal(layers_record_list(fx->store, &v, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "docker.io/library/a:1");
	layers_record_list_free(v, n);
	/* thresholds of 0: collect down to nothing, but never what is in
	 * use: a, the more recently used, is named in use; b goes */
	struct strv in_use = {0};
	strv_add(&in_use, "docker.io/library/a:1");
	int removed = -1;
	assert_int_equal(layers_gc(fx->store, 0, 0, 0, &in_use, &removed, NULL), 0);
	assert_int_equal(removed, 1);
	struct stat st;
	assert_int_equal(stat(od, &st), -1);
	cleanup_free char *ad = layers_layer_path(fx->store, fx->diffid);
	assert_int_equal(stat(ad, &st), 0);
	assert_int_equal(layers_record_read(fx->store, "docker.io/library/b:1", &got, NULL),
			 -ENOENT);
	/* thresholds of 100: nothing to do */
	assert_int_equal(layers_gc(fx->store, 101, 100, 0, NULL, &removed, NULL), 0);
	assert_int_equal(removed, 0);
	strv_clear(&in_use);
	layers_record_clear(&a);
	layers_record_clear(&b);
}

static void test_layers_sha256__known_value(void **state)
{
	(void)state;
	char d[LAYERS_DIGEST_SIZE];
	layers_sha256("abc", 3, d);
	assert_string_equal(
	    d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_layers_unpack__whiteouts_become_overlayfs, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_layers_unpack__refuses_wrong_diffid, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_layers_unpack__checks_the_blob_digest, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_layers_records__round_trip_and_gc, setup,
					    teardown),
	    cmocka_unit_test(test_layers_sha256__known_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
