/* test_fs_finalizers.c: metadata.finalizers and deletionTimestamp in
 * corral-fs (finalizers.c, and the write path that carries its verdicts
 * out, write.c, against a temporary store): what a deletion and a write do
 * given the stored object and the written one, Kubernetes' refusals, and
 * the NamespaceLifecycle hook (nslifecycle.c) refusing creates in a
 * Terminating namespace and the deletion of the cluster's own. */
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
#include "finalizers.h"
#include "kinds.h"
#include "pod.h"
#include "store.h"
#include "testlib.h"
#include "util.h"
#include "write.h"

#define AUTHOR "test <test@localhost>"

#define CM(meta)                                                                                   \
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: dev\n" meta          \
	"data: {a: '1'}\n"
#define DELETING "  deletionTimestamp: '2026-12-01T10:00:00Z'\n  deletionGracePeriodSeconds: 0\n"

static const struct kind_info *cm_kind(void)
{
	return kinds_by_kind("ConfigMap");
}

static enum finalizers_verdict decide(const char *old, const char *obj, int want_r, char **msg)
{
	cleanup_ynode struct ynode *o = old ? y(old) : NULL;
	cleanup_ynode struct ynode *n = obj ? y(obj) : NULL;
	enum finalizers_verdict v = FINALIZERS_STORE;
	struct error *err = NULL;
	int r = finalizers_decide(cm_kind(), o, n, &v, &err);
	assert_int_equal(r, want_r);
	if (msg)
		*msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	return v;
}

/* ---- the pure decision ---- */

static void test_finalizers_decide__deletions(void **state)
{
	(void)state;
	assert_int_equal(decide(CM(""), NULL, 0, NULL), FINALIZERS_DELETE);
	assert_int_equal(decide(CM("  finalizers: []\n"), NULL, 0, NULL), FINALIZERS_DELETE);
	assert_int_equal(decide(CM("  finalizers: [example.com/keep]\n"), NULL, 0, NULL),
			 FINALIZERS_MARK);
	/* A second rm changes nothing. */
	assert_int_equal(decide(CM("  finalizers: [example.com/keep]\n" DELETING), NULL, 0, NULL),
			 FINALIZERS_KEEP);
}

static void test_finalizers_decide__a_namespace_is_always_marked(void **state)
{
	(void)state;
	const struct kind_info *ns = kinds_by_kind("Namespace");
	cleanup_ynode struct ynode *o =
	    y("apiVersion: v1\nkind: Namespace\nmetadata: {name: dev}\n");
	enum finalizers_verdict v;
	assert_int_equal(finalizers_decide(ns, o, NULL, &v, NULL), 0);
	assert_int_equal(v, FINALIZERS_MARK);
	finalizers_mark(ns, o, 1764583200);
	assert_string_equal(str(o, "status.phase"), "Terminating");
	assert_string_equal(str(o, "spec.finalizers[0]"), "kubernetes");
	assert_string_equal(str(o, "metadata.deletionTimestamp"), "2025-12-01T10:00:00Z");
	assert_string_equal(str(o, "metadata.deletionGracePeriodSeconds"), "0");
	assert_true(finalizers_any(ns, o));
	/* The namespace controller's write without the finalizer deletes it. */
	cleanup_ynode struct ynode *w = ynode_clone(o);
	ynode_set(ynode_get(w, "spec"), "finalizers", ynode_new_seq());
	assert_int_equal(finalizers_decide(ns, o, w, &v, NULL), 0);
	assert_int_equal(v, FINALIZERS_DELETE);
	/* ... and one that adds to spec.finalizers is refused. */
	ynode_append(ynode_path(w, "spec.finalizers"), ynode_new_str("example.com/x"));
	struct error *err = NULL;
	assert_int_equal(finalizers_decide(ns, o, w, &v, &err), -EINVAL);
	assert_non_null(strstr(err->msg, "spec.finalizers: Forbidden: no new finalizers"));
	error_free(err);
}

static void test_finalizers_decide__writes(void **state)
{
	(void)state;
	char *msg = NULL;
	/* Not being deleted: any finalizers may come and go. */
	assert_int_equal(decide(CM(""), CM("  finalizers: [a.io/x]\n"), 0, NULL), FINALIZERS_STORE);
	assert_int_equal(decide(NULL, CM("  finalizers: [a.io/x]\n"), 0, NULL), FINALIZERS_STORE);
	/* A deletionTimestamp written on an object not being deleted is
	 * ignored (the server's field), not a deletion. */
	assert_int_equal(decide(CM(""), CM(DELETING), 0, NULL), FINALIZERS_STORE);
	/* Being deleted: one removed of two is stored, the last deletes. */
	const char *two = CM("  finalizers: [a.io/x, b.io/y]\n" DELETING);
	assert_int_equal(decide(two, CM("  finalizers: [b.io/y]\n"), 0, NULL), FINALIZERS_STORE);
	assert_int_equal(decide(two, CM("  finalizers: [b.io/y, a.io/x]\n" DELETING), 0, NULL),
			 FINALIZERS_STORE);
	assert_int_equal(decide(two, CM("  finalizers: []\n"), 0, NULL), FINALIZERS_DELETE);
	assert_int_equal(decide(two, CM(""), 0, NULL), FINALIZERS_DELETE);
	/* No new finalizer, in Kubernetes' words. */
	decide(two, CM("  finalizers: [b.io/y, z.io/z, c.io/c]\n"), -EINVAL, &msg);
	assert_string_equal(msg, "metadata.finalizers: Forbidden: no new finalizers can be added "
				 "if the object is being deleted, found new finalizers "
				 "[]string{\"c.io/c\", \"z.io/z\"}");
	free(msg);
	/* The timestamp may be left out (kept) but not changed or cleared. */
	decide(two, CM("  finalizers: [a.io/x]\n  deletionTimestamp: '2030-01-01T00:00:00Z'\n"),
	       -EINVAL, &msg);
	assert_string_equal(msg, "metadata.deletionTimestamp: Invalid value: "
				 "\"2030-01-01T00:00:00Z\": field is immutable");
	free(msg);
	decide(two, CM("  finalizers: [a.io/x]\n  deletionTimestamp: null\n"), -EINVAL, &msg);
	assert_string_equal(msg, "metadata.deletionTimestamp: Invalid value: \"null\": field is "
				 "immutable");
	free(msg);
	decide(two, CM("  finalizers: [a.io/x]\n  deletionGracePeriodSeconds: 30\n"), -EINVAL,
	       &msg);
	assert_non_null(strstr(msg, "metadata.deletionGracePeriodSeconds: Invalid value"));
	free(msg);
	/* orphan and foregroundDeletion together, never. */
	decide(NULL, CM("  finalizers: [orphan, foregroundDeletion]\n"), -EINVAL, &msg);
	assert_string_equal(msg, "metadata.finalizers: Invalid value: finalizer orphan and "
				 "foregroundDeletion cannot be both set");
	free(msg);
}

static void test_finalizers_carry__keeps_the_timestamp(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *old = y(CM("  finalizers: [a.io/x]\n" DELETING));
	cleanup_ynode struct ynode *obj = y(CM("  finalizers: [a.io/x]\n"));
	finalizers_carry(old, obj);
	assert_string_equal(str(obj, "metadata.deletionTimestamp"), "2026-12-01T10:00:00Z");
	assert_true(object_is_deleting(obj));
	assert_true(finalizers_has(obj, "a.io/x"));
	assert_false(finalizers_has(obj, "b.io/y"));
}

/* ---- the write path ---- */

struct fixture {
	char dir[64];
	struct store *s;
	struct admission *a;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	if (testlib_store_temp(f->dir, sizeof(f->dir), "corral-fin", &f->s) < 0) {
		free(f);
		return -1;
	}
	size_t n;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	f->a = admission_new(hooks, n, NULL);
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

static struct write_target target(const char *kind, const char *ns, const char *name,
				  const char *key)
{
	return (struct write_target){
	    .kind = kinds_by_kind(kind), .ns = ns, .name = name, .key = key};
}

static int put(struct fixture *f, const struct write_target *t, const char *text, char **msg)
{
	struct error *err = NULL;
	struct write_result res = {0};
	int r = write_object(f->s, f->a, t, text, strlen(text), AUTHOR, &res, &err);
	if (msg)
		*msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	write_result_clear(&res);
	return r;
}

static int del(struct fixture *f, const struct write_target *t)
{
	struct error *err = NULL;
	int r = write_delete(f->s, f->a, t, AUTHOR, &err);
	error_free(err);
	return r;
}

static struct ynode *get(struct fixture *f, const char *key)
{
	struct store_record rec = {0};
	if (store_get(f->s, key, &rec, NULL) < 0)
		return NULL;
	struct ynode *o = y(rec.yaml);
	store_record_clear(&rec);
	return o;
}

static void test_write__rm_marks_then_the_last_finalizer_deletes(void **state)
{
	struct fixture *f = *state;
	struct write_target t = target("ConfigMap", "dev", "cm", "namespaces/dev/configmaps/cm");
	assert_int_equal(put(f, &t, CM("  finalizers: [a.io/x, b.io/y]\n"), NULL), 0);
	assert_int_equal(del(f, &t), WRITE_KEPT);
	cleanup_ynode struct ynode *o = get(f, t.key);
	assert_non_null(o);
	assert_true(object_is_deleting(o));
	cleanup_free char *ts = xstrdup(str(o, "metadata.deletionTimestamp"));
	assert_string_equal(str(o, "metadata.deletionGracePeriodSeconds"), "0");
	/* A second rm: nothing changes. */
	assert_int_equal(del(f, &t), WRITE_KEPT);
	cleanup_ynode struct ynode *o2 = get(f, t.key);
	assert_string_equal(str(o2, "metadata.resourceVersion"),
			    str(o, "metadata.resourceVersion"));
	/* A write without the timestamp keeps it; one adding a finalizer is
	 * refused. */
	assert_int_equal(put(f, &t, CM("  finalizers: [b.io/y]\n"), NULL), 0);
	cleanup_ynode struct ynode *o3 = get(f, t.key);
	assert_string_equal(str(o3, "metadata.deletionTimestamp"), ts);
	cleanup_free char *msg = NULL;
	assert_int_equal(put(f, &t, CM("  finalizers: [b.io/y, c.io/z]\n"), &msg), -EINVAL);
	assert_non_null(strstr(msg, "no new finalizers can be added"));
	/* The last one goes: so does the object. */
	assert_int_equal(put(f, &t, CM("  finalizers: []\n"), NULL), WRITE_GONE);
	assert_null(get(f, t.key));
	assert_int_equal(del(f, &t), -ENOENT);
}

static void test_write__without_finalizers_rm_deletes(void **state)
{
	struct fixture *f = *state;
	struct write_target t = target("ConfigMap", "dev", "cm", "namespaces/dev/configmaps/cm");
	assert_int_equal(put(f, &t, CM(""), NULL), 0);
	assert_int_equal(del(f, &t), 0);
	assert_null(get(f, t.key));
}

static const char *nsdoc(const char *name)
{
	static char buf[128];
	snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", name);
	return buf;
}

static void test_write__terminating_namespace_refuses_creates(void **state)
{
	struct fixture *f = *state;
	struct write_target ns = target("Namespace", NULL, "dev", "namespaces/dev");
	struct write_target t = target("ConfigMap", "dev", "cm", "namespaces/dev/configmaps/cm");
	struct write_target t2 = target("ConfigMap", "dev", "c2", "namespaces/dev/configmaps/c2");
	assert_int_equal(put(f, &ns, nsdoc("dev"), NULL), 0);
	assert_int_equal(put(f, &t, CM(""), NULL), 0);
	assert_int_equal(del(f, &ns), WRITE_KEPT);
	cleanup_ynode struct ynode *o = get(f, ns.key);
	assert_string_equal(str(o, "status.phase"), "Terminating");
	cleanup_free char *msg = NULL;
	const char *c2 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c2}\n";
	assert_int_equal(put(f, &t2, c2, &msg), -EACCES);
	assert_string_equal(msg, "configmaps \"c2\" is forbidden: unable to create new content in "
				 "namespace dev because it is being terminated");
	/* Updates and deletions still pass. */
	assert_int_equal(put(f, &t, CM("  labels: {app: web}\n"), NULL), 0);
	assert_int_equal(del(f, &t), 0);
	/* Other namespaces are not concerned. */
	struct write_target t3 = target("ConfigMap", "prod", "c2", "namespaces/prod/configmaps/c2");
	assert_int_equal(put(f, &t3, c2, NULL), 0);
	/* The namespace controller's status write (its conditions) is kept. */
	cleanup_ynode struct ynode *w = ynode_clone(o);
	struct ynode *cond = ynode_new_map();
	ynode_set(cond, "type", ynode_new_str("NamespaceContentRemaining"));
	ynode_set(cond, "status", ynode_new_str("True"));
	struct ynode *conds = ynode_new_seq();
	ynode_append(conds, cond);
	ynode_set(ynode_get(w, "status"), "conditions", conds);
	cleanup_free char *wtext = yaml_emit(w, NULL);
	assert_int_equal(put(f, &ns, wtext, NULL), 0);
	cleanup_ynode struct ynode *o4 = get(f, ns.key);
	assert_string_equal(str(o4, "status.conditions[0].type"), "NamespaceContentRemaining");
	assert_string_equal(str(o4, "status.phase"), "Terminating");
	/* The finalizer removed, the namespace goes, and creates pass again
	 * once it is made anew. */
	ynode_set(ynode_get(o, "spec"), "finalizers", ynode_new_seq());
	cleanup_free char *text = yaml_emit(o, NULL);
	assert_int_equal(put(f, &ns, text, NULL), WRITE_GONE);
	assert_null(get(f, ns.key));
	assert_int_equal(put(f, &ns, nsdoc("dev"), NULL), 0);
	assert_int_equal(put(f, &t2, c2, NULL), 0);
}

static void test_write__protected_namespaces_are_not_deleted(void **state)
{
	struct fixture *f = *state;
	static const char *names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		cleanup_free char *key = xasprintf("namespaces/%s", names[i]);
		struct write_target ns = target("Namespace", NULL, names[i], key);
		assert_int_equal(put(f, &ns, nsdoc(names[i]), NULL), 0);
		struct error *err = NULL;
		assert_int_equal(write_delete(f->s, f->a, &ns, AUTHOR, &err), -EACCES);
		cleanup_free char *want = xasprintf(
		    "namespaces \"%s\" is forbidden: this namespace may not be deleted", names[i]);
		assert_string_equal(err->msg, want);
		error_free(err);
		cleanup_ynode struct ynode *o = get(f, key);
		assert_false(object_is_deleting(o));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_finalizers_decide__deletions),
	    cmocka_unit_test(test_finalizers_decide__a_namespace_is_always_marked),
	    cmocka_unit_test(test_finalizers_decide__writes),
	    cmocka_unit_test(test_finalizers_carry__keeps_the_timestamp),
	    cmocka_unit_test_setup_teardown(test_write__rm_marks_then_the_last_finalizer_deletes,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write__without_finalizers_rm_deletes, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_write__terminating_namespace_refuses_creates,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write__protected_namespaces_are_not_deleted, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
