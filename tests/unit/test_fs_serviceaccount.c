/* test_fs_serviceaccount.c: the admission hook "serviceaccount"
 * (fs/serviceaccount.c), run by the write path (write.c) with corral-fs's
 * hook table against a temporary LMDB store in its own mkdtemp folder: a
 * pod gets serviceAccountName default and the kube-api-access volume and
 * mounts exactly as Kubernetes' plugin adds them; automount false on the
 * pod or its ServiceAccount is honoured; a ServiceAccount that does not
 * exist is refused with Kubernetes' message once the namespace has its
 * default (and not before); a mount of the pod's own at the token's path
 * is left alone; an update written without what the create added keeps
 * it; ServiceAccounts loaded at a restart count. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admission.h"
#include "error.h"
#include "kinds.h"
#include "serviceaccount.h"
#include "store.h"
#include "testlib.h"
#include "util.h"
#include "write.h"
#include "ynode.h"

#define AUTHOR "test <test@localhost>"

struct fixture {
	char dir[64];
	struct store *s;
	struct admission *a;
};

static struct admission *default_admission(void)
{
	size_t n;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	return admission_new(hooks, n, NULL);
}

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	if (testlib_store_temp(f->dir, sizeof(f->dir), "corral-sa", &f->s) < 0) {
		free(f);
		return -1;
	}
	f->a = default_admission();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	admission_free(f->a);
	testlib_store_remove(f->dir, f->s);
	free(f);
	return 0;
}

/* Writes text as plural/name in namespace dev; *msg gets the refusal's
 * message (or NULL). */
static int put(struct fixture *f, const char *kind, const char *name, const char *text, char **msg)
{
	const struct kind_info *k = kinds_by_kind(kind);
	cleanup_free char *key = xasprintf("namespaces/dev/%s/%s", k->plural, name);
	struct write_target t = {.kind = k, .ns = "dev", .name = name, .key = key};
	struct error *err = NULL;
	struct write_result res = {0};
	int r = write_object(f->s, f->a, &t, text, strlen(text), AUTHOR, &res, &err);
	if (msg)
		*msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	write_result_clear(&res);
	return r;
}

static int put_sa(struct fixture *f, const char *name, const char *extra)
{
	cleanup_free char *text = xasprintf("apiVersion: v1\nkind: ServiceAccount\n"
					    "metadata: {name: %s, namespace: dev}\n%s",
					    name, extra ? extra : "");
	return put(f, "ServiceAccount", name, text, NULL);
}

/* A pod of one container c and one init container i; spec_extra is more
 * of spec (indented two spaces), c_extra more of the container. */
static int put_pod(struct fixture *f, const char *name, const char *spec_extra, const char *c_extra,
		   char **msg)
{
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: Pod\n"
		      "metadata: {name: %s, namespace: dev}\n"
		      "spec:\n%s"
		      "  initContainers:\n  - {name: i, image: busybox}\n"
		      "  containers:\n  - name: c\n    image: busybox\n%s",
		      name, spec_extra ? spec_extra : "", c_extra ? c_extra : "");
	return put(f, "Pod", name, text, msg);
}

static struct ynode *get(struct fixture *f, const char *plural, const char *name)
{
	cleanup_free char *key = xasprintf("namespaces/dev/%s/%s", plural, name);
	struct store_record rec = {0};
	struct error *err = NULL;
	if (store_get(f->s, key, &rec, &err) < 0) {
		error_free(err);
		return NULL;
	}
	struct ynode *obj = NULL;
	assert_int_equal(yaml_parse_one(rec.yaml, rec.len, &obj, NULL), 0);
	store_record_clear(&rec);
	return obj;
}

/* The mount at the token's path of container path ("spec.containers[0]"). */
static const struct ynode *token_mount(const struct ynode *pod, const char *path)
{
	const struct ynode *mounts = ynode_get(ynode_path(pod, path), "volumeMounts");
	for (size_t i = 0; mounts && i < mounts->n; i++)
		if (!strcmp(ynode_path_str(ynode_item(mounts, i), "mountPath") ?: "",
			    SA_TOKEN_MOUNT_PATH))
			return ynode_item(mounts, i);
	return NULL;
}

static const struct ynode *token_volume(const struct ynode *pod)
{
	const struct ynode *vols = ynode_path(pod, "spec.volumes");
	for (size_t i = 0; vols && i < vols->n; i++)
		if (!strncmp(ynode_path_str(ynode_item(vols, i), "name") ?: "", SA_VOLUME_PREFIX,
			     strlen(SA_VOLUME_PREFIX)))
			return ynode_item(vols, i);
	return NULL;
}

/* ---- tests ---- */

static void test_sa_hook__default_account_and_kubernetes_volume(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_sa(f, "default", NULL), 0);
	assert_int_equal(put_pod(f, "web", NULL, NULL, NULL), 0);
	cleanup_ynode struct ynode *pod = get(f, "pods", "web");
	assert_string_equal(ynode_path_str(pod, "spec.serviceAccountName"), "default");
	assert_string_equal(ynode_path_str(pod, "spec.serviceAccount"), "default");
	const struct ynode *vol = token_volume(pod);
	assert_non_null(vol);
	const char *vname = ynode_path_str(vol, "name");
	assert_int_equal(strlen(vname), strlen(SA_VOLUME_PREFIX) + 5);
	for (const char *p = vname + strlen(SA_VOLUME_PREFIX); *p; p++)
		assert_non_null(strchr("bcdfghjklmnpqrstvwxz2456789", *p));
	/* as Kubernetes stores it */
	cleanup_free char *got = yaml_emit(ynode_get(vol, "projected"), NULL);
	assert_string_equal(got, "defaultMode: 420\n"
				 "sources:\n"
				 "- serviceAccountToken:\n"
				 "    expirationSeconds: 3607\n"
				 "    path: token\n"
				 "- configMap:\n"
				 "    items:\n"
				 "    - key: ca.crt\n"
				 "      path: ca.crt\n"
				 "    name: kube-root-ca.crt\n"
				 "- downwardAPI:\n"
				 "    items:\n"
				 "    - fieldRef:\n"
				 "        apiVersion: v1\n"
				 "        fieldPath: metadata.namespace\n"
				 "      path: namespace\n");
	static const char *const ctrs[] = {"spec.containers[0]", "spec.initContainers[0]"};
	for (size_t i = 0; i < ARRAY_SIZE(ctrs); i++) {
		const struct ynode *m = token_mount(pod, ctrs[i]);
		assert_non_null(m);
		assert_string_equal(ynode_path_str(m, "name"), vname);
		assert_string_equal(ynode_path_str(m, "readOnly"), "true");
	}
}

static void test_sa_hook__automount_false_honoured(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_sa(f, "default", NULL), 0);
	assert_int_equal(put_sa(f, "quiet", "automountServiceAccountToken: false\n"), 0);
	/* the pod's false */
	assert_int_equal(put_pod(f, "a", "  automountServiceAccountToken: false\n", NULL, NULL), 0);
	/* the ServiceAccount's false */
	assert_int_equal(put_pod(f, "b", "  serviceAccountName: quiet\n", NULL, NULL), 0);
	/* the pod's true wins over the ServiceAccount's false */
	assert_int_equal(
	    put_pod(f, "c", "  serviceAccountName: quiet\n  automountServiceAccountToken: true\n",
		    NULL, NULL),
	    0);
	cleanup_ynode struct ynode *a = get(f, "pods", "a");
	cleanup_ynode struct ynode *b = get(f, "pods", "b");
	cleanup_ynode struct ynode *c = get(f, "pods", "c");
	assert_null(token_volume(a));
	assert_null(token_mount(a, "spec.containers[0]"));
	assert_string_equal(ynode_path_str(a, "spec.serviceAccountName"), "default");
	assert_null(token_volume(b));
	assert_string_equal(ynode_path_str(b, "spec.serviceAccount"), "quiet");
	assert_non_null(token_volume(c));
	assert_non_null(token_mount(c, "spec.containers[0]"));
}

static void test_sa_hook__missing_account_refused_once_default_exists(void **state)
{
	struct fixture *f = *state;
	char *msg = NULL;
	/* no default yet: taken as it is, without a token */
	assert_int_equal(put_pod(f, "early", "  serviceAccountName: robot\n", NULL, &msg), 0);
	cleanup_ynode struct ynode *early = get(f, "pods", "early");
	assert_string_equal(ynode_path_str(early, "spec.serviceAccountName"), "robot");
	assert_null(token_volume(early));
	assert_int_equal(put_sa(f, "default", NULL), 0);
	assert_int_equal(put_pod(f, "web", "  serviceAccountName: robot\n", NULL, &msg), -EACCES);
	assert_string_equal(msg, "pods \"web\" is forbidden: error looking up service account "
				 "dev/robot: serviceaccount \"robot\" not found");
	free(msg);
	cleanup_ynode struct ynode *none = get(f, "pods", "web");
	assert_null(none);
	/* the old field names it too */
	assert_int_equal(put_pod(f, "old", "  serviceAccount: robot\n", NULL, &msg), -EACCES);
	free(msg);
	assert_int_equal(put_sa(f, "robot", NULL), 0);
	assert_int_equal(put_pod(f, "web", "  serviceAccountName: robot\n", NULL, NULL), 0);
	/* a deleted ServiceAccount leaves the index */
	cleanup_free char *key = xasprintf("namespaces/dev/serviceaccounts/robot");
	struct write_target t = {
	    .kind = kinds_by_kind("ServiceAccount"), .ns = "dev", .name = "robot", .key = key};
	struct error *err = NULL;
	assert_int_equal(write_delete(f->s, f->a, &t, AUTHOR, &err), 0);
	assert_int_equal(put_pod(f, "web2", "  serviceAccountName: robot\n", NULL, &msg), -EACCES);
	free(msg);
}

static void test_sa_hook__own_mount_at_the_path_left_alone(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_sa(f, "default", NULL), 0);
	assert_int_equal(put_pod(f, "own", "  volumes:\n  - {name: mine, emptyDir: {}}\n",
				 "    volumeMounts:\n"
				 "    - {name: mine, mountPath: " SA_TOKEN_MOUNT_PATH "}\n",
				 NULL),
			 0);
	cleanup_ynode struct ynode *pod = get(f, "pods", "own");
	/* the init container still mounts the token */
	const struct ynode *vol = token_volume(pod);
	assert_non_null(vol);
	assert_string_equal(ynode_path_str(token_mount(pod, "spec.containers[0]"), "name"), "mine");
	assert_string_equal(ynode_path_str(token_mount(pod, "spec.initContainers[0]"), "name"),
			    ynode_path_str(vol, "name"));
	assert_int_equal(ynode_path(pod, "spec.containers[0].volumeMounts")->n, 1);
}

static void test_sa_hook__update_keeps_what_the_create_added(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_sa(f, "default", NULL), 0);
	assert_int_equal(put_pod(f, "web", NULL, NULL, NULL), 0);
	cleanup_ynode struct ynode *before = get(f, "pods", "web");
	/* the manifest again, a label added: no spec change refused */
	const char *text = "apiVersion: v1\nkind: Pod\n"
			   "metadata: {name: web, namespace: dev, labels: {a: b}}\n"
			   "spec:\n"
			   "  initContainers:\n  - {name: i, image: busybox}\n"
			   "  containers:\n  - name: c\n    image: busybox\n";
	char *msg = NULL;
	assert_int_equal(put(f, "Pod", "web", text, &msg), 0);
	assert_null(msg);
	cleanup_ynode struct ynode *after = get(f, "pods", "web");
	assert_string_equal(ynode_path_str(after, "metadata.labels.a"), "b");
	assert_true(ynode_equal(ynode_get(before, "spec"), ynode_get(after, "spec")));
}

static void test_sa_hook__accounts_loaded_at_start(void **state)
{
	struct fixture *f = *state;
	const struct kind_info *k = kinds_by_kind("ServiceAccount");
	cleanup_ynode struct ynode *d = ynode_new_map();
	struct admission_request rq = {.kind = k, .ns = "dev", .name = "default", .obj = d};
	admission_load(f->a, &rq);
	/* its row loads the accounts, not every pod (resource-quota, another
	 * row, loads every kind) */
	size_t n, i = 0;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	while (i < n && strcmp(hooks[i].name, "serviceaccount"))
		i++;
	assert_true(i < n);
	struct admission *row = admission_new(&hooks[i], 1, NULL);
	assert_true(admission_wants_load(row, k));
	assert_false(admission_wants_load(row, kinds_by_kind("Pod")));
	admission_free(row);
	char *msg = NULL;
	assert_int_equal(put_pod(f, "web", "  serviceAccountName: robot\n", NULL, &msg), -EACCES);
	free(msg);
	assert_int_equal(put_pod(f, "ok", NULL, NULL, NULL), 0);
	cleanup_ynode struct ynode *pod = get(f, "pods", "ok");
	assert_non_null(token_volume(pod));
}

static void test_sa_admit_spec__pure(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *spec = ynode_new_map();
	struct ynode *cs = ynode_new_seq();
	struct ynode *c = ynode_new_map();
	ynode_set(c, "name", ynode_new_str("c"));
	ynode_append(cs, c);
	ynode_set(spec, "containers", cs);
	assert_true(serviceaccount_admit_spec(spec, true, "abcde"));
	assert_string_equal(ynode_path_str(spec, "volumes[0].name"), "kube-api-access-abcde");
	/* twice is once */
	assert_false(serviceaccount_admit_spec(spec, true, "zzzzz"));
	assert_int_equal(ynode_get(spec, "volumes")->n, 1);
	assert_true(serviceaccount_automount(spec, -1));
	assert_false(serviceaccount_automount(spec, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_sa_hook__default_account_and_kubernetes_volume,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sa_hook__automount_false_honoured, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		test_sa_hook__missing_account_refused_once_default_exists, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sa_hook__own_mount_at_the_path_left_alone, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_sa_hook__update_keeps_what_the_create_added, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_sa_hook__accounts_loaded_at_start, setup,
					    teardown),
	    cmocka_unit_test(test_sa_admit_spec__pure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
