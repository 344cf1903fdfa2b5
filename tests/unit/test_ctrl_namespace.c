/* test_ctrl_namespace.c: the namespace controller's pure parts: the order
 * it deletes a namespace's kinds in (those that make objects before what
 * they make, Events last) and the five conditions it keeps, in
 * Kubernetes' words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conditions.h"
#include "kinds.h"
#include "namespace.h"
#include "testlib.h"
#include "util.h"

static size_t pos(const struct kind_info **kinds, size_t n, const char *plural)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kinds[i]->plural, plural))
			return i;
	fail_msg("no %s", plural);
	return n;
}

static void test_nsc_delete_order__owners_before_what_they_own(void **state)
{
	(void)state;
	const struct kind_info **kinds = xcalloc(kinds_count(), sizeof(*kinds));
	size_t n = 0;
	for (size_t i = 0; i < kinds_count(); i++)
		if (kinds_at(i)->namespaced)
			kinds[n++] = kinds_at(i);
	nsc_delete_order(kinds, n);
	assert_true(pos(kinds, n, "deployments") < pos(kinds, n, "replicasets"));
	assert_true(pos(kinds, n, "replicasets") < pos(kinds, n, "pods"));
	assert_true(pos(kinds, n, "cronjobs") < pos(kinds, n, "jobs"));
	assert_true(pos(kinds, n, "jobs") < pos(kinds, n, "pods"));
	assert_true(pos(kinds, n, "statefulsets") < pos(kinds, n, "pods"));
	assert_true(pos(kinds, n, "daemonsets") < pos(kinds, n, "pods"));
	assert_true(pos(kinds, n, "replicationcontrollers") < pos(kinds, n, "pods"));
	assert_true(pos(kinds, n, "pods") < pos(kinds, n, "services"));
	assert_int_equal(pos(kinds, n, "events"), n - 1);
	/* The rest keep the table's order (stable). */
	assert_true(pos(kinds, n, "services") < pos(kinds, n, "configmaps"));
	assert_true(pos(kinds, n, "configmaps") < pos(kinds, n, "secrets"));
	free(kinds);
}

static const char *field_of(const struct ynode *status, const char *type, const char *field)
{
	return condition_field(condition_find(ynode_get(status, "conditions"), type), field);
}

static void test_nsc_conditions__all_clear(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *st = ynode_new_map();
	struct nsc_totals t = {0};
	nsc_set_conditions(st, &t, "2026-12-01T10:00:00Z");
	assert_int_equal(ynode_get(st, "conditions")->n, 5);
	assert_string_equal(field_of(st, "NamespaceDeletionDiscoveryFailure", "reason"),
			    "ResourcesDiscovered");
	assert_string_equal(field_of(st, "NamespaceDeletionGroupVersionParsingFailure", "message"),
			    "All legacy kube types successfully parsed");
	assert_string_equal(field_of(st, "NamespaceDeletionContentFailure", "message"),
			    "All content successfully deleted, may be waiting on finalization");
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "status"), "False");
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "reason"), "ContentRemoved");
	assert_string_equal(field_of(st, "NamespaceFinalizersRemaining", "message"),
			    "All content-preserving finalizers finished");
}

static void test_nsc_conditions__what_remains_sorted(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *st = ynode_new_map();
	const char *res[] = {"pods.", "deployments.apps"};
	size_t counts[] = {3, 1};
	const char *fins[] = {"z.io/b", "kubernetes.io/pvc-protection"};
	size_t fcounts[] = {1, 2};
	struct nsc_totals t = {.nkinds = 2,
			       .resources = res,
			       .counts = counts,
			       .nfinalizers = 2,
			       .finalizers = fins,
			       .fcounts = fcounts,
			       .failed = 1,
			       .failure = "namespaces/dev/pods/web.yaml: Permission denied"};
	nsc_set_conditions(st, &t, "2026-12-01T10:00:00Z");
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "status"), "True");
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "reason"),
			    "SomeResourcesRemain");
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "message"),
			    "Some resources are remaining: deployments.apps has 1 resource "
			    "instances, pods. has 3 resource instances");
	assert_string_equal(field_of(st, "NamespaceFinalizersRemaining", "reason"),
			    "SomeFinalizersRemain");
	assert_string_equal(field_of(st, "NamespaceFinalizersRemaining", "message"),
			    "Some content in the namespace has finalizers remaining: "
			    "kubernetes.io/pvc-protection in 2 resource instances, z.io/b in 1 "
			    "resource instances");
	assert_string_equal(field_of(st, "NamespaceDeletionContentFailure", "status"), "True");
	assert_string_equal(field_of(st, "NamespaceDeletionContentFailure", "reason"),
			    "ContentDeletionFailed");
	assert_string_equal(field_of(st, "NamespaceDeletionContentFailure", "message"),
			    "Failed to delete all resource types, 1 remaining: "
			    "namespaces/dev/pods/web.yaml: Permission denied");
	/* Set again with nothing left: the same five, now clear, in place. */
	struct nsc_totals none = {0};
	nsc_set_conditions(st, &none, "2026-12-01T10:00:05Z");
	assert_int_equal(ynode_get(st, "conditions")->n, 5);
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "status"), "False");
	assert_string_equal(field_of(st, "NamespaceContentRemaining", "lastTransitionTime"),
			    "2026-12-01T10:00:05Z");
	assert_string_equal(field_of(st, "NamespaceDeletionDiscoveryFailure", "lastTransitionTime"),
			    "2026-12-01T10:00:00Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nsc_delete_order__owners_before_what_they_own),
	    cmocka_unit_test(test_nsc_conditions__all_clear),
	    cmocka_unit_test(test_nsc_conditions__what_remains_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
