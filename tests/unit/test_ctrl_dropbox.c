/* test_ctrl_dropbox.c: where a drop box document goes, and how it is
 * applied onto a stored object (JSON merge patch). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dropbox.h"
#include "util.h"
#include "ynode.h"

static struct ynode *y(const char *text)
{
	struct ynode *doc = NULL;
	cleanup_error struct error *err = NULL;
	if (yaml_parse_one(text, strlen(text), &doc, &err) < 0)
		fail_msg("bad test YAML \"%s\": %s", text, err->msg);
	return doc;
}

static void target(const char *ns, const char *doc, const char *want)
{
	cleanup_ynode struct ynode *d = y(doc);
	cleanup_error struct error *err = NULL;
	cleanup_free char *got = dropbox_target(ns, d, &err);
	if (!want) {
		assert_null(got);
		assert_non_null(err);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void test_dropbox__targets(void **state)
{
	(void)state;
	target("dev", "{kind: Deployment, metadata: {name: web}}",
	       "namespaces/dev/deployments/web.yaml");
	target(NULL, "{kind: Deployment, metadata: {name: web, namespace: prod}}",
	       "namespaces/prod/deployments/web.yaml");
	target(NULL, "{kind: ConfigMap, metadata: {name: c}}",
	       "namespaces/default/configmaps/c.yaml");
	target(NULL, "{kind: Node, metadata: {name: n1}}", "nodes/n1.yaml");
	target("dev", "{kind: PersistentVolume, metadata: {name: pv}}",
	       "persistentvolumes/pv.yaml");
	target(NULL, "{kind: Namespace, metadata: {name: made}}", "namespaces/made.yaml");
	target(NULL, "{kind: Nope, metadata: {name: x}}", NULL);
	target(NULL, "{kind: Pod, metadata: {}}", NULL);
}

static void merge(const char *stored, const char *patch, const char *want)
{
	cleanup_ynode struct ynode *s = y(stored);
	cleanup_ynode struct ynode *p = y(patch);
	cleanup_ynode struct ynode *w = y(want);
	dropbox_merge(s, p);
	if (!ynode_equal(s, w)) {
		cleanup_free char *got = yaml_emit(s, NULL);
		fail_msg("merged:\n%s", got);
	}
}

static void test_dropbox__written_fields_win_others_stay(void **state)
{
	(void)state;
	merge("{data: {a: '1', b: '1'}, status: {x: 1}}", "{data: {b: '2', c: '3'}}",
	      "{data: {a: '1', b: '2', c: '3'}, status: {x: 1}}");
	/* sequences are replaced whole */
	merge("{spec: {containers: [{name: a}, {name: b}]}}", "{spec: {containers: [{name: c}]}}",
	      "{spec: {containers: [{name: c}]}}");
	/* a mapping replaces a scalar and the other way round */
	merge("{a: 1, b: {c: 1}}", "{a: {x: 1}, b: 2}", "{a: {x: 1}, b: 2}");
}

static void test_dropbox__null_removes(void **state)
{
	(void)state;
	merge("{spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}}",
	      "{spec: {strategy: {type: Recreate, rollingUpdate: null}}}",
	      "{spec: {strategy: {type: Recreate}}}");
	merge("{metadata: {labels: {a: b}}}", "{metadata: {labels: {a: ~}}}",
	      "{metadata: {labels: {}}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dropbox__targets),
	    cmocka_unit_test(test_dropbox__written_fields_win_others_stay),
	    cmocka_unit_test(test_dropbox__null_removes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
