/* test_noded_pvvolumes.c: a persistentVolumeClaim volume on the host: a
 * bound hostPath PV's type honoured as a pod's hostPath's
 * (DirectoryOrCreate makes the folder, FileOrCreate the file, Directory
 * refuses a file), an unbound or missing claim refused with FailedMount's
 * message naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "util.h"
#include "volumes.h"
#include "ynode.h"

struct objs {
	struct ynode *pvc, *pv;
};

static int lookup(void *data, const char *plural, const char *name, struct ynode **out,
		  struct error **err)
{
	(void)err;
	struct objs *o = data;
	struct ynode *obj = !strcmp(plural, "persistentvolumeclaims") ? o->pvc
			    : !strcmp(plural, "persistentvolumes")    ? o->pv
								      : NULL;
	if (!obj || strcmp(ynode_path_str(obj, "metadata.name"), name) != 0)
		return -ENOENT;
	*out = ynode_clone(obj);
	return 0;
}

static const char *pod_yaml = "{metadata: {name: web-0}, spec: {volumes: [{name: www,"
			      " persistentVolumeClaim: {claimName: www-web-0}}]}}";

/* Prepares the pod's volumes with pv's hostPath at path (type); returns
 * the error message or NULL, and the volume's path in *got. */
static char *prepare(const char *path, const char *type, bool bound, char **got)
{
	cleanup_free char *pvc =
	    xasprintf("{metadata: {name: www-web-0}, spec: {%s}}", bound ? "volumeName: pv0" : "");
	cleanup_free char *pv =
	    xasprintf("{metadata: {name: pv0}, spec: {hostPath: {path: '%s'%s%s}}}", path,
		      type ? ", type: " : "", type ? type : "");
	struct objs o = {y(pvc), y(pv)};
	cleanup_ynode struct ynode *pod = y(pod_yaml);
	struct volumes *v = NULL;
	struct error *e = NULL;
	char *msg = NULL;
	if (volumes_prepare(pod, "/nonexistent-pod-dir", lookup, &o, NULL, &v, &e) < 0) {
		msg = xstrdup(e->msg);
		error_free(e);
	} else {
		*got = xstrdup(volumes_path(v, "www"));
		volumes_free(v);
	}
	ynode_free(o.pvc);
	ynode_free(o.pv);
	return msg;
}

static void test_volumes__pv_host_path_type(void **state)
{
	(void)state;
	char dir[] = "/tmp/corral-volumes-XXXXXX";
	assert_non_null(mkdtemp(dir));
	cleanup_free char *d = xasprintf("%s/data/www", dir);
	cleanup_free char *f = xasprintf("%s/file", dir);
	char *got = NULL;
	struct stat st;

	/* DirectoryOrCreate: made (with its parents) */
	char *msg = prepare(d, "DirectoryOrCreate", true, &got);
	assert_null(msg);
	assert_string_equal(got, d);
	assert_int_equal(stat(d, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(got);
	got = NULL;
	/* Directory: there now */
	assert_null(prepare(d, "Directory", true, &got));
	free(got);
	got = NULL;
	/* FileOrCreate: made; then Directory refuses it */
	assert_null(prepare(f, "FileOrCreate", true, &got));
	assert_int_equal(stat(f, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	free(got);
	got = NULL;
	msg = prepare(f, "Directory", true, &got);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "persistentvolume \"pv0\""));
	assert_non_null(strstr(msg, "is not a Directory"));
	free(msg);
	/* no type: it must exist */
	cleanup_free char *missing = xasprintf("%s/missing", dir);
	msg = prepare(missing, NULL, true, &got);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "does not exist"));
	free(msg);
	/* not bound: waits, naming the claim */
	msg = prepare(d, "Directory", false, &got);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "MountVolume.SetUp failed for volume \"www\""));
	assert_non_null(strstr(msg, "persistentvolumeclaim \"www-web-0\" is not bound"));
	free(msg);

	unlink(f);
	rmdir(d);
	cleanup_free char *dd = xasprintf("%s/data", dir);
	rmdir(dd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_volumes__pv_host_path_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
