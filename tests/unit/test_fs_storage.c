/* test_fs_storage.c: the storage admission hooks (fs/storage.c), called
 * as the write path calls them: the default StorageClass (newest of
 * several defaults, then the lower name; "" kept; none: unset), the class
 * index kept by settle, the resize rule, and the protection finalizers at
 * create only; and the StorageClass kind's rules (fs/kinds_storage.c)
 * through validate_object. */
#include <errno.h>

#include "testlib.h"

#include "admission.h"
#include "kinds.h"
#include "storage.h"
#include "util.h"
#include "validate.h"

static struct ynode *sc(const char *name, bool dflt, const char *created, const char *more)
{
	cleanup_free char *text = xasprintf(
	    "{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: %s, "
	    "creationTimestamp: '%s'%s}, provisioner: corral.io/local-path%s%s}",
	    name, created,
	    dflt ? ", annotations: {storageclass.kubernetes.io/is-default-class: 'true'}" : "",
	    more ? ", " : "", more ? more : "");
	return y(text);
}

static void test_storage__newest_default_wins(void **state)
{
	(void)state;
	struct ynode *a = sc("old", true, "2026-01-01T00:00:00Z", NULL);
	struct ynode *b = sc("new", true, "2026-01-02T00:00:00Z", NULL);
	struct ynode *c = sc("plain", false, "2026-01-03T00:00:00Z", NULL);
	struct ynode *d = sc("another", true, "2026-01-02T00:00:00Z", NULL);
	const struct ynode *set[] = {a, b, c};
	assert_ptr_equal(storage_default_class(set, 3), b);
	/* the same time: the lower name */
	const struct ynode *set2[] = {a, b, d};
	assert_ptr_equal(storage_default_class(set2, 3), d);
	const struct ynode *none[] = {c};
	assert_null(storage_default_class(none, 1));
	ynode_free(a);
	ynode_free(b);
	ynode_free(c);
	ynode_free(d);
}

static struct admission_request rq(const char *kind, const char *name, struct ynode *obj,
				   const struct ynode *old)
{
	struct admission_request r = {
	    .kind = kinds_by_kind(kind), .ns = "dev", .name = name, .obj = obj, .old = old};
	return r;
}

static void settle_class(void *st, struct ynode *cls)
{
	struct admission_request r = rq("StorageClass", str(cls, "metadata.name"), cls, NULL);
	storage_class_hook_settle(st, &r, NULL);
}

static void test_storage__claim_gets_the_default_class(void **state)
{
	(void)state;
	void *st = storage_class_hook_init(NULL);
	struct ynode *pvc =
	    y("{metadata: {name: c}, spec: {resources: {requests: {storage: 1Gi}}}}");
	struct admission_request r = rq("PersistentVolumeClaim", "c", pvc, NULL);
	void *claim = NULL;
	/* no default: left unset */
	assert_int_equal(storage_class_hook_reserve(st, &r, &claim, NULL), 0);
	assert_false(r.changed);
	assert_null(ynode_path(pvc, "spec.storageClassName"));
	struct ynode *d = sc("local-path", true, "2026-01-01T00:00:00Z", NULL);
	settle_class(st, d);
	assert_int_equal(storage_class_hook_reserve(st, &r, &claim, NULL), 0);
	assert_true(r.changed);
	assert_string_equal(str(pvc, "spec.storageClassName"), "local-path");
	ynode_free(pvc);
	/* "" asks for no class */
	pvc =
	    y("{metadata: {name: c}, spec: {storageClassName: '', resources: {requests: {storage: "
	      "1Gi}}}}");
	r = rq("PersistentVolumeClaim", "c", pvc, NULL);
	assert_int_equal(storage_class_hook_reserve(st, &r, &claim, NULL), 0);
	assert_false(r.changed);
	assert_string_equal(str(pvc, "spec.storageClassName"), "");
	ynode_free(pvc);
	/* a deleted class leaves the index */
	struct admission_request del = rq("StorageClass", "local-path", NULL, d);
	storage_class_hook_settle(st, &del, NULL);
	pvc = y("{metadata: {name: c}, spec: {resources: {requests: {storage: 1Gi}}}}");
	r = rq("PersistentVolumeClaim", "c", pvc, NULL);
	assert_int_equal(storage_class_hook_reserve(st, &r, &claim, NULL), 0);
	assert_null(ynode_path(pvc, "spec.storageClassName"));
	ynode_free(pvc);
	ynode_free(d);
	storage_class_hook_fini(st);
}

static void test_storage__resize_needs_allow_volume_expansion(void **state)
{
	(void)state;
	void *st = storage_class_hook_init(NULL);
	struct ynode *grow =
	    sc("grow", false, "2026-01-01T00:00:00Z", "allowVolumeExpansion: true");
	struct ynode *fixed = sc("fixed", false, "2026-01-01T00:00:00Z", NULL);
	settle_class(st, grow);
	settle_class(st, fixed);
	static const char *const cls[] = {"grow", "fixed", "missing"};
	for (size_t i = 0; i < ARRAY_SIZE(cls); i++) {
		cleanup_free char *o = xasprintf(
		    "{spec: {storageClassName: %s, resources: {requests: {storage: 1Gi}}}}",
		    cls[i]);
		cleanup_free char *n = xasprintf(
		    "{spec: {storageClassName: %s, resources: {requests: {storage: 2Gi}}}}",
		    cls[i]);
		cleanup_ynode struct ynode *old = y(o);
		cleanup_ynode struct ynode *obj = y(n);
		struct admission_request r = rq("PersistentVolumeClaim", "c", obj, old);
		void *claim = NULL;
		cleanup_error struct error *err = NULL;
		int ret = storage_class_hook_reserve(st, &r, &claim, &err);
		if (i == 0) {
			assert_int_equal(ret, 0);
			continue;
		}
		assert_int_equal(ret, -EACCES);
		assert_string_equal(err->msg,
				    "persistentvolumeclaims \"c\" is forbidden: only dynamically "
				    "provisioned pvc can be resized and the storageclass that "
				    "provisions the pvc must support resize");
		/* the same size again is no resize */
		struct admission_request same = rq("PersistentVolumeClaim", "c", old, old);
		assert_int_equal(storage_class_hook_reserve(st, &same, &claim, NULL), 0);
	}
	ynode_free(grow);
	ynode_free(fixed);
	storage_class_hook_fini(st);
}

static void test_storage__protection_finalizers_at_create(void **state)
{
	(void)state;
	struct ynode *pvc = y("{metadata: {name: c, finalizers: [example.com/x]}, spec: {}}");
	struct admission_request r = rq("PersistentVolumeClaim", "c", pvc, NULL);
	void *claim = NULL;
	assert_int_equal(storage_protection_hook_reserve(NULL, &r, &claim, NULL), 0);
	assert_true(r.changed);
	const struct ynode *f = ynode_path(pvc, "metadata.finalizers");
	assert_int_equal(f->n, 2);
	assert_string_equal(ynode_str(ynode_item(f, 1)), "kubernetes.io/pvc-protection");
	/* twice: no second copy */
	r.changed = false;
	assert_int_equal(storage_protection_hook_reserve(NULL, &r, &claim, NULL), 0);
	assert_false(r.changed);
	/* an update is left alone (a finalizer removed stays removed) */
	struct ynode *upd = y("{metadata: {name: c}, spec: {}}");
	struct admission_request u = rq("PersistentVolumeClaim", "c", upd, pvc);
	assert_int_equal(storage_protection_hook_reserve(NULL, &u, &claim, NULL), 0);
	assert_null(ynode_path(upd, "metadata.finalizers"));
	ynode_free(upd);
	ynode_free(pvc);
	struct ynode *pv = y("{metadata: {name: v}, spec: {}}");
	struct admission_request p = rq("PersistentVolume", "v", pv, NULL);
	p.ns = NULL;
	assert_int_equal(storage_protection_hook_reserve(NULL, &p, &claim, NULL), 0);
	assert_string_equal(ynode_str(ynode_item(ynode_path(pv, "metadata.finalizers"), 0)),
			    "kubernetes.io/pv-protection");
	ynode_free(pv);
}

static void test_storage__hooks_are_in_the_table_before_the_others(void **state)
{
	(void)state;
	size_t n;
	const struct admission_hook *h = admission_default_hooks(&n);
	size_t dflt = n, prot = n, svc = n;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(h[i].name, "default-storage-class"))
			dflt = i;
		if (!strcmp(h[i].name, "storage-object-in-use-protection"))
			prot = i;
		if (!strcmp(h[i].name, "service-addresses"))
			svc = i;
	}
	assert_true(dflt < prot && prot < svc && svc < n);
}

/* The StorageClass rules: the write refused with Kubernetes' field errors. */
static char *refusal(const char *text, const char *old_text)
{
	cleanup_ynode struct ynode *obj = y(text);
	cleanup_ynode struct ynode *old = old_text ? y(old_text) : NULL;
	struct error *err = NULL;
	if (validate_object(kinds_by_kind("StorageClass"), obj, old, &err) == 0)
		return NULL;
	char *msg = xstrdup(err->msg);
	error_free(err);
	return msg;
}

static void test_storage__class_rules(void **state)
{
	(void)state;
	const char *ok = "{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: s}, "
			 "provisioner: corral.io/local-path}";
	char *m = refusal(ok, NULL);
	assert_null(m);
	m = refusal("{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: s}}",
		    NULL);
	assert_non_null(m);
	assert_non_null(strstr(m, "provisioner: Required value"));
	free(m);
	m = refusal("{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: s}, "
		    "provisioner: a, reclaimPolicy: Recycle, volumeBindingMode: Later}",
		    NULL);
	assert_non_null(strstr(m, "reclaimPolicy: Unsupported value: \"Recycle\""));
	assert_non_null(strstr(m, "volumeBindingMode: Unsupported value: \"Later\""));
	free(m);
	m = refusal("{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: s}, "
		    "provisioner: other.io/x, parameters: {a: b}, reclaimPolicy: Retain, "
		    "volumeBindingMode: WaitForFirstConsumer}",
		    "{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: s}, "
		    "provisioner: corral.io/local-path, reclaimPolicy: Delete, "
		    "volumeBindingMode: Immediate}");
	assert_non_null(m);
	assert_non_null(strstr(m, "provisioner: Forbidden: updates to provisioner are forbidden."));
	assert_non_null(strstr(m, "parameters: Forbidden: updates to parameters are forbidden."));
	assert_non_null(
	    strstr(m, "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden."));
	assert_non_null(strstr(m, "volumeBindingMode: Invalid value"));
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_storage__newest_default_wins),
	    cmocka_unit_test(test_storage__claim_gets_the_default_class),
	    cmocka_unit_test(test_storage__resize_needs_allow_volume_expansion),
	    cmocka_unit_test(test_storage__protection_finalizers_at_create),
	    cmocka_unit_test(test_storage__hooks_are_in_the_table_before_the_others),
	    cmocka_unit_test(test_storage__class_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
