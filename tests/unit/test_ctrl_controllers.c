/* test_ctrl_controllers.c: the table of controllers: the names
 * --controllers knows (and --help prints), and which ones a list turns on. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ctrl.h"
#include "util.h"

static void test_controllers__names_come_from_the_table(void **state)
{
	(void)state;
	assert_string_equal(
	    ctrl_names(),
	    "replicaset, replicationcontroller, deployment, "
	    "garbagecollector, dropbox, eventttl, serviceip, "
	    "endpoints, job, ttl-after-finished, podgc, daemonset, cronjob, namespace, "
	    "persistentvolume-binder, pvc-protection, pv-protection, statefulset, "
	    "nodelifecycle, taint-eviction-controller, disruption, resourcequota, "
	    "serviceaccount, root-ca-cert-publisher, horizontalpodautoscaling");
	assert_int_equal(ctrl_ncontrollers, 25);
	for (size_t i = 0; i < ctrl_ncontrollers; i++) {
		assert_non_null(ctrl_controllers[i].name);
		assert_non_null(ctrl_controllers[i].start);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(ctrl_controllers[i].name, ctrl_controllers[j].name);
	}
}

static void test_controllers__check_accepts_names_star_and_minus(void **state)
{
	(void)state;
	assert_int_equal(ctrl_check_controllers("*", NULL), 0);
	assert_int_equal(ctrl_check_controllers(NULL, NULL), 0);
	assert_int_equal(ctrl_check_controllers("*,-dropbox", NULL), 0);
	assert_int_equal(ctrl_check_controllers("replicaset, endpoints", NULL), 0);
	for (size_t i = 0; i < ctrl_ncontrollers; i++)
		assert_int_equal(ctrl_check_controllers(ctrl_controllers[i].name, NULL), 0);
}

static void test_controllers__check_names_the_unknown_one(void **state)
{
	(void)state;
	cleanup_error struct error *err = NULL;
	assert_true(ctrl_check_controllers("replicaset,-nope", &err) < 0);
	assert_non_null(err);
	assert_int_equal(err->status, EINVAL);
	assert_string_equal(err->msg,
			    "controllers: unknown controller \"nope\" (known: "
			    "replicaset, replicationcontroller, deployment, "
			    "garbagecollector, dropbox, eventttl, serviceip, endpoints, "
			    "job, ttl-after-finished, podgc, daemonset, cronjob, namespace, "
			    "persistentvolume-binder, pvc-protection, pv-protection, statefulset, "
			    "nodelifecycle, taint-eviction-controller, disruption, resourcequota, "
			    "serviceaccount, root-ca-cert-publisher, horizontalpodautoscaling)");
}

static bool enabled(const char *list, const char *name)
{
	struct ctrl_config cfg = {.controllers = (char *)list};
	struct ctrl c = {.cfg = &cfg};
	return ctrl_enabled(&c, name);
}

static void test_controllers__enabled(void **state)
{
	(void)state;
	assert_true(enabled("*", "deployment"));
	assert_true(enabled(NULL, "deployment"));
	assert_false(enabled("*,-deployment", "deployment"));
	assert_true(enabled("*,-deployment", "replicaset"));
	assert_true(enabled("replicaset,endpoints", "endpoints"));
	assert_false(enabled("replicaset,endpoints", "deployment"));
	/* A leave-out wins wherever it stands. */
	assert_false(enabled("-dropbox,*", "dropbox"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_controllers__names_come_from_the_table),
	    cmocka_unit_test(test_controllers__check_accepts_names_star_and_minus),
	    cmocka_unit_test(test_controllers__check_names_the_unknown_one),
	    cmocka_unit_test(test_controllers__enabled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
