/* test_ctrl_serviceaccount.c: what the serviceaccount and
 * root-ca-cert-publisher controllers write (ctrl/serviceaccount.c): the
 * default ServiceAccount of a namespace, the kube-root-ca.crt ConfigMap
 * with the CA's certificate and Kubernetes' description, and when a stored
 * ConfigMap is out of date. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "serviceaccount.h"
#include "util.h"
#include "ynode.h"

static const char *const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

static void test_sac_default_account__named_default_in_its_namespace(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *sa = sac_default_account("dev");
	cleanup_free char *text = yaml_emit(sa, NULL);
	assert_string_equal(text, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n"
				  "  name: default\n  namespace: dev\n");
}

static void test_sac_root_ca__configmap_holds_the_certificate(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *cm = sac_root_ca_configmap("dev", pem);
	assert_string_equal(ynode_path_str(cm, "kind"), "ConfigMap");
	assert_string_equal(ynode_path_str(cm, "metadata.name"), "kube-root-ca.crt");
	assert_string_equal(ynode_path_str(cm, "metadata.namespace"), "dev");
	assert_string_equal(ynode_str(ynode_get(ynode_get(cm, "data"), "ca.crt")), pem);
	const char *desc = ynode_str(
	    ynode_get(ynode_path(cm, "metadata.annotations"), "kubernetes.io/description"));
	assert_non_null(desc);
	assert_non_null(strstr(desc, "kubernetes.default.svc"));
	assert_true(sac_root_ca_current(cm, pem));
	assert_false(sac_root_ca_current(cm, ""));
	/* the certificate survives being written out and read back */
	cleanup_free char *text = yaml_emit(cm, NULL);
	cleanup_ynode struct ynode *back = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &back, NULL), 0);
	assert_true(sac_root_ca_current(back, pem));
}

static void test_sac_root_ca__none_is_empty(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *cm = sac_root_ca_configmap("dev", NULL);
	assert_true(sac_root_ca_current(cm, ""));
	assert_true(sac_root_ca_current(cm, NULL));
	cleanup_ynode struct ynode *nodata = ynode_new_map();
	assert_false(sac_root_ca_current(nodata, ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sac_default_account__named_default_in_its_namespace),
	    cmocka_unit_test(test_sac_root_ca__configmap_holds_the_certificate),
	    cmocka_unit_test(test_sac_root_ca__none_is_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
