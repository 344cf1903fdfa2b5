/* test_fs_quota.c: the admission hooks "resource-quota" (fs/quota.c) and
 * "limit-ranger" (fs/limitrange.c). The arithmetic on its own: what every
 * kind charges (pods' sums, init containers, terminal pods, Services'
 * node ports, PVCs per class, count/<resource>), the scopes, the formats
 * of used values. Then through the write path (write.c) with corral-fs's
 * hook table against a temporary LMDB store, each test in its own mkdtemp
 * folder: refusals with Kubernetes' messages, several quotas, a quota
 * written later summing what exists, shares held by writes in flight,
 * sums after a restart (load), and LimitRange defaults filled in before
 * the quota is checked. */
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
#include "limitrange.h"
#include "quantity.h"
#include "quota.h"
#include "quotacalc.h"
#include "store.h"
#include "testlib.h"
#include "util.h"
#include "write.h"

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
	if (testlib_store_temp(f->dir, sizeof(f->dir), "corral-quota", &f->s) < 0) {
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

/* ---- helpers ---- */

static struct ynode *parse(const char *text)
{
	struct ynode *o = NULL;
	struct error *err = NULL;
	if (yaml_parse_one(text, strlen(text), &o, &err) < 0)
		fail_msg("parse: %s", err->msg);
	return o;
}

/* The usage of an object of kind (text), formatted. */
static char *usage_of(const char *kind, const char *text)
{
	cleanup_ynode struct ynode *o = parse(text);
	struct quotacalc_list l = {0};
	quotacalc_usage(kinds_by_kind(kind), o, &l);
	char *s = quotacalc_list_format(&l);
	quotacalc_list_clear(&l);
	return s;
}

/* Writes text into namespace dev as kind/name; *msg gets the refusal. */
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
	else if (err)
		print_message("refused: %s\n", err->msg);
	error_free(err);
	write_result_clear(&res);
	return r;
}

static int del(struct fixture *f, const char *kind, const char *name)
{
	const struct kind_info *k = kinds_by_kind(kind);
	cleanup_free char *key = xasprintf("namespaces/dev/%s/%s", k->plural, name);
	struct write_target t = {.kind = k, .ns = "dev", .name = name, .key = key};
	struct error *err = NULL;
	int r = write_delete(f->s, f->a, &t, AUTHOR, &err);
	error_free(err);
	return r;
}

/* A pod of one container "app" with resources (a flow mapping's body,
 * "" for none); extra is more of spec. */
static char *pod(const char *name, const char *resources, const char *extra)
{
	return xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n"
			 "  containers: [{name: app, image: nginx:1.25, resources: {%s}}]\n%s",
			 name, resources, extra ? extra : "");
}

static int put_pod(struct fixture *f, const char *name, const char *resources, char **msg)
{
	cleanup_free char *text = pod(name, resources, NULL);
	return put(f, "Pod", name, text, msg);
}

static int put_quota(struct fixture *f, const char *name, const char *spec)
{
	cleanup_free char *text = xasprintf(
	    "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: %s}\nspec: %s\n", name, spec);
	return put(f, "ResourceQuota", name, text, NULL);
}

/* The stored object of kind/name in dev, parsed, or NULL. */
static struct ynode *stored(struct store *s, const char *plural, const char *name)
{
	cleanup_free char *key = xasprintf("namespaces/dev/%s/%s", plural, name);
	struct store_record rec = {0};
	if (store_get(s, key, &rec, NULL) < 0)
		return NULL;
	struct ynode *o = NULL;
	assert_int_equal(yaml_parse_one(rec.yaml, rec.len, &o, NULL), 0);
	store_record_clear(&rec);
	return o;
}

/* ---- quantities ---- */

static void test_quota__used_values_print_as_kubernetes_does(void **state)
{
	(void)state;
	char b[64];
	quantity_format_in(1800, QUANTITY_DECIMAL_SI, b, sizeof(b));
	assert_string_equal(b, "1800m");
	quantity_format_in(2000, QUANTITY_DECIMAL_SI, b, sizeof(b));
	assert_string_equal(b, "2");
	quantity_format_in(2000000, QUANTITY_DECIMAL_SI, b, sizeof(b));
	assert_string_equal(b, "2k");
	quantity_format_in(1024000, QUANTITY_DECIMAL_SI, b, sizeof(b));
	assert_string_equal(b, "1024");
	quantity_format_in(2LL * 1073741824 * 1000, QUANTITY_BINARY_SI, b, sizeof(b));
	assert_string_equal(b, "2Gi");
	quantity_format_in(1536LL * 1048576 * 1000, QUANTITY_BINARY_SI, b, sizeof(b));
	assert_string_equal(b, "1536Mi");
	/* Binary below 1024, or with a fraction, prints as decimal. */
	quantity_format_in(500000, QUANTITY_BINARY_SI, b, sizeof(b));
	assert_string_equal(b, "500");
	quantity_format_in(1500, QUANTITY_BINARY_SI, b, sizeof(b));
	assert_string_equal(b, "1500m");
	quantity_format_in(2000000, QUANTITY_DECIMAL_EXPONENT, b, sizeof(b));
	assert_string_equal(b, "2e3");
	quantity_format_in(0, QUANTITY_BINARY_SI, b, sizeof(b));
	assert_string_equal(b, "0");
	quantity_format_in(-1800, QUANTITY_DECIMAL_SI, b, sizeof(b));
	assert_string_equal(b, "-1800m");
	assert_int_equal(quantity_fmt_of("128Mi"), QUANTITY_BINARY_SI);
	assert_int_equal(quantity_fmt_of("1e3"), QUANTITY_DECIMAL_EXPONENT);
	assert_int_equal(quantity_fmt_of("1E"), QUANTITY_DECIMAL_SI);
	assert_int_equal(quantity_fmt_of("500m"), QUANTITY_DECIMAL_SI);
}

static void test_quota__a_sum_keeps_the_format_of_what_was_added(void **state)
{
	(void)state;
	struct quotacalc_list l = {0};
	quotacalc_list_add(&l, "requests.memory", 512LL * 1048576 * 1000, QUANTITY_BINARY_SI);
	quotacalc_list_add(&l, "requests.memory", 1536LL * 1048576 * 1000, QUANTITY_BINARY_SI);
	quotacalc_list_add(&l, "requests.cpu", 900, QUANTITY_DECIMAL_SI);
	quotacalc_list_add(&l, "requests.cpu", 900, QUANTITY_DECIMAL_SI);
	cleanup_free char *s = quotacalc_list_format(&l);
	assert_string_equal(s, "requests.cpu=1800m,requests.memory=2Gi");
	quotacalc_list_clear(&l);
}

/* ---- what objects charge ---- */

static void test_quota__a_pod_charges_its_containers_sums(void **state)
{
	(void)state;
	cleanup_free char *u = usage_of(
	    "Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
		   "  containers:\n"
		   "  - {name: a, image: x, resources: {requests: {cpu: 250m, memory: 64Mi},"
		   " limits: {cpu: 500m, memory: 128Mi}}}\n"
		   "  - {name: b, image: x, resources: {requests: {cpu: 250m, memory: 64Mi,"
		   " example.com/gpu: 1}, limits: {cpu: '1', memory: 128Mi, example.com/gpu: 1}}}\n"
		   "  initContainers:\n"
		   "  - {name: i, image: x, resources: {requests: {cpu: '2'}}}\n");
	assert_string_equal(u, "count/pods=1,cpu=2,limits.cpu=1500m,limits.memory=256Mi,"
			       "memory=128Mi,pods=1,requests.cpu=2,requests.example.com/gpu=1,"
			       "requests.memory=128Mi");
}

static void test_quota__a_terminal_pod_charges_only_its_count(void **state)
{
	(void)state;
	static const char *const phases[] = {"Succeeded", "Failed"};
	for (size_t i = 0; i < 2; i++) {
		cleanup_free char *text = xasprintf(
		    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
		    "  containers: [{name: a, image: x, resources: {requests: {cpu: 1}}}]\n"
		    "status: {phase: %s}\n",
		    phases[i]);
		cleanup_free char *u = usage_of("Pod", text);
		assert_string_equal(u, "count/pods=1");
	}
	cleanup_free char *running =
	    usage_of("Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
			    "  containers: [{name: a, image: x}]\nstatus: {phase: Running}\n");
	assert_string_equal(running, "count/pods=1,pods=1");
}

static void test_quota__services_claims_and_other_kinds(void **state)
{
	(void)state;
	cleanup_free char *np = usage_of(
	    "Service", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: NodePort,"
		       " ports: [{port: 80}, {port: 443}]}\n");
	assert_string_equal(np, "count/services=1,services=1,services.nodeports=2");
	cleanup_free char *lb =
	    usage_of("Service", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type:"
				" LoadBalancer, ports: [{port: 80}]}\n");
	assert_string_equal(lb, "count/services=1,services=1,services.loadbalancers=1,"
				"services.nodeports=1");
	cleanup_free char *cip = usage_of(
	    "Service",
	    "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n");
	assert_string_equal(cip, "count/services=1,services=1");
	cleanup_free char *pvc =
	    usage_of("PersistentVolumeClaim",
		     "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec:"
		     " {storageClassName: gold, resources: {requests: {storage: 5Gi}}}\n");
	assert_string_equal(pvc, "count/persistentvolumeclaims=1,"
				 "gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,"
				 "gold.storageclass.storage.k8s.io/requests.storage=5Gi,"
				 "persistentvolumeclaims=1,requests.storage=5Gi");
	cleanup_free char *dep = usage_of("Deployment", "metadata: {name: d}\n");
	assert_string_equal(dep, "count/deployments.apps=1");
	cleanup_free char *cm = usage_of("ConfigMap", "metadata: {name: d}\n");
	assert_string_equal(cm, "configmaps=1,count/configmaps=1");
	cleanup_free char *sec = usage_of("Secret", "metadata: {name: d}\n");
	assert_string_equal(sec, "count/secrets=1,secrets=1");
	cleanup_free char *rc = usage_of("ReplicationController", "metadata: {name: d}\n");
	assert_string_equal(rc, "count/replicationcontrollers=1,replicationcontrollers=1");
	cleanup_free char *rq = usage_of("ResourceQuota", "metadata: {name: d}\n");
	assert_string_equal(rq, "count/resourcequotas=1,resourcequotas=1");
	cleanup_free char *job = usage_of("Job", "metadata: {name: d}\n");
	assert_string_equal(job, "count/jobs.batch=1");
}

/* ---- scopes ---- */

static bool selects(const char *quota_spec, const char *pod_spec)
{
	cleanup_free char *qt = xasprintf("metadata: {name: q}\nspec: %s\n", quota_spec);
	cleanup_free char *pt = xasprintf("metadata: {name: p}\nspec: %s\n", pod_spec);
	cleanup_ynode struct ynode *q = parse(qt);
	cleanup_ynode struct ynode *p = parse(pt);
	return quotacalc_matches(q, kinds_by_kind("Pod"), p);
}

static void test_quota__scopes_select_pods(void **state)
{
	(void)state;
	const char *be = "{containers: [{name: a, image: x}]}";
	const char *burst = "{containers: [{name: a, image: x, resources: {requests: {cpu: 1}}}]}";
	const char *term = "{activeDeadlineSeconds: 30, containers: [{name: a, image: x}]}";
	const char *gold = "{priorityClassName: gold, containers: [{name: a, image: x}]}";
	assert_true(selects("{hard: {pods: 1}}", burst));
	assert_true(selects("{scopes: [BestEffort]}", be));
	assert_false(selects("{scopes: [BestEffort]}", burst));
	assert_true(selects("{scopes: [NotBestEffort]}", burst));
	assert_false(selects("{scopes: [NotBestEffort]}", be));
	assert_true(selects("{scopes: [Terminating]}", term));
	assert_false(selects("{scopes: [Terminating]}", be));
	assert_true(selects("{scopes: [NotTerminating]}", be));
	assert_false(selects("{scopes: [NotTerminating, BestEffort]}", term));
	assert_true(selects("{scopes: [PriorityClass]}", gold));
	assert_false(selects("{scopes: [PriorityClass]}", be));
	const char *in = "{scopeSelector: {matchExpressions: [{scopeName: PriorityClass,"
			 " operator: In, values: [gold, silver]}]}}";
	const char *notin = "{scopeSelector: {matchExpressions: [{scopeName: PriorityClass,"
			    " operator: NotIn, values: [gold]}]}}";
	const char *exists = "{scopeSelector: {matchExpressions: [{scopeName: PriorityClass,"
			     " operator: Exists}]}}";
	const char *dne = "{scopeSelector: {matchExpressions: [{scopeName: PriorityClass,"
			  " operator: DoesNotExist}]}}";
	assert_true(selects(in, gold));
	assert_false(selects(in, be));
	assert_false(selects(notin, gold));
	assert_true(selects(notin, be));
	assert_true(selects(exists, gold));
	assert_false(selects(exists, be));
	assert_true(selects(dne, be));
	assert_false(selects(dne, gold));
	/* A scoped quota charges nothing but pods. */
	cleanup_ynode struct ynode *q =
	    parse("metadata: {name: q}\nspec: {scopes: [BestEffort]}\n");
	cleanup_ynode struct ynode *cm = parse("metadata: {name: c}\n");
	assert_false(quotacalc_matches(q, kinds_by_kind("ConfigMap"), cm));
}

static void test_quota__constraints_name_what_is_missing(void **state)
{
	(void)state;
	struct quotacalc_list hard = {0};
	quotacalc_list_add(&hard, "limits.cpu", 2000, QUANTITY_DECIMAL_SI);
	quotacalc_list_add(&hard, "requests.memory", 2000, QUANTITY_DECIMAL_SI);
	quotacalc_list_add(&hard, "pods", 2000, QUANTITY_DECIMAL_SI);
	cleanup_ynode struct ynode *p =
	    parse("spec:\n  containers:\n  - {name: b, image: x}\n"
		  "  - {name: a, image: x, resources: {requests: {memory: 1Gi}}}\n");
	struct error *err = NULL;
	assert_int_equal(quotacalc_pod_constraints(&hard, p, &err), -EACCES);
	assert_string_equal(err->msg, "must specify limits.cpu for: a,b; requests.memory for: b");
	error_free(err);
	cleanup_ynode struct ynode *ok = parse(
	    "spec:\n  containers:\n  - {name: a, image: x, resources: {requests: {memory: 1Gi},"
	    " limits: {cpu: 1}}}\n");
	assert_int_equal(quotacalc_pod_constraints(&hard, ok, NULL), 0);
	quotacalc_list_clear(&hard);
}

/* ---- through the write path ---- */

static void test_quota__pod_past_the_quota_is_refused_with_its_message(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "q1", "{hard: {requests.cpu: '2'}}"), 0);
	assert_int_equal(put_pod(f, "p1", "requests: {cpu: 900m}", NULL), 0);
	assert_int_equal(put_pod(f, "p2", "requests: {cpu: 900m}", NULL), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "p3", "requests: {cpu: 500m}", &msg), -EACCES);
	assert_string_equal(msg, "pods \"p3\" is forbidden: exceeded quota: q1, requested: "
				 "requests.cpu=500m, used: requests.cpu=1800m, limited: "
				 "requests.cpu=2");
	cleanup_ynode struct ynode *none = stored(f->s, "pods", "p3");
	assert_null(none);
	/* What still fits is admitted; then nothing more. */
	assert_int_equal(put_pod(f, "p4", "requests: {cpu: 200m}", NULL), 0);
	assert_int_equal(put_pod(f, "p5", "requests: {cpu: 1m}", NULL), -EACCES);
	/* A deletion gives its share back. */
	assert_int_equal(del(f, "Pod", "p1"), 0);
	assert_int_equal(put_pod(f, "p3", "requests: {cpu: 500m}", NULL), 0);
}

static void test_quota__pod_lacking_a_constrained_field_is_refused(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "compute", "{hard: {limits.cpu: '4', pods: '10'}}"), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "p", "requests: {cpu: 1}", &msg), -EACCES);
	assert_string_equal(
	    msg, "pods \"p\" is forbidden: failed quota: compute: must specify limits.cpu "
		 "for: app");
	assert_int_equal(put_pod(f, "p", "limits: {cpu: 1}", NULL), 0);
}

static void test_quota__every_quota_of_the_namespace_is_checked(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "a-wide", "{hard: {pods: '10'}}"), 0);
	assert_int_equal(put_quota(f, "b-narrow", "{hard: {pods: '1', configmaps: '1'}}"), 0);
	assert_int_equal(put_pod(f, "p1", "", NULL), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "p2", "", &msg), -EACCES);
	assert_string_equal(msg, "pods \"p2\" is forbidden: exceeded quota: b-narrow, requested: "
				 "pods=1, used: pods=1, limited: pods=1");
	/* Other namespaces are not this one's business. */
	const struct kind_info *k = kinds_by_kind("Pod");
	cleanup_free char *text = pod("p2", "", NULL);
	struct write_target t = {
	    .kind = k, .ns = "other", .name = "p2", .key = "namespaces/other/pods/p2"};
	struct write_result res = {0};
	assert_int_equal(write_object(f->s, f->a, &t, text, strlen(text), AUTHOR, &res, NULL), 0);
	write_result_clear(&res);
	/* Object counts of another kind. */
	const char *cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n";
	cleanup_free char *c1 = xasprintf(cm, "c1");
	cleanup_free char *c2 = xasprintf(cm, "c2");
	assert_int_equal(put(f, "ConfigMap", "c1", c1, NULL), 0);
	free(msg);
	msg = NULL;
	assert_int_equal(put(f, "ConfigMap", "c2", c2, &msg), -EACCES);
	assert_string_equal(msg, "configmaps \"c2\" is forbidden: exceeded quota: b-narrow, "
				 "requested: configmaps=1, used: configmaps=1, limited: "
				 "configmaps=1");
	/* An update of a counted object is not a new one. */
	cleanup_free char *c1b = xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "
					   "c1}\ndata: {a: b}\n");
	assert_int_equal(put(f, "ConfigMap", "c1", c1b, NULL), 0);
}

static void test_quota__scoped_quota_counts_only_what_it_selects(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "be", "{hard: {pods: '1'}, scopes: [BestEffort]}"), 0);
	assert_int_equal(put_pod(f, "be1", "", NULL), 0);
	assert_int_equal(put_pod(f, "burst1", "requests: {cpu: 100m}", NULL), 0);
	assert_int_equal(put_pod(f, "burst2", "requests: {cpu: 100m}", NULL), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "be2", "", &msg), -EACCES);
	assert_non_null(strstr(msg, "exceeded quota: be, requested: pods=1"));
	assert_int_equal(put_quota(f, "gold",
				   "{hard: {pods: '1'}, scopeSelector: {matchExpressions: "
				   "[{scopeName: PriorityClass, operator: In, values: [gold]}]}}"),
			 0);
	/* Priority's hook refuses a class that does not exist: create it. */
	const char *pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
			 "metadata: {name: gold}\nvalue: 1000\n";
	struct write_target t = {
	    .kind = kinds_by_kind("PriorityClass"), .name = "gold", .key = "priorityclasses/gold"};
	struct write_result res = {0};
	assert_int_equal(write_object(f->s, f->a, &t, pc, strlen(pc), AUTHOR, &res, NULL), 0);
	write_result_clear(&res);
	cleanup_free char *g1 = pod("g1", "requests: {cpu: 1m}", "  priorityClassName: gold\n");
	cleanup_free char *g2 = pod("g2", "requests: {cpu: 1m}", "  priorityClassName: gold\n");
	assert_int_equal(put(f, "Pod", "g1", g1, NULL), 0);
	assert_int_equal(put(f, "Pod", "g2", g2, NULL), -EACCES);
}

static void test_quota__a_terminal_pod_stops_counting(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "q", "{hard: {pods: '1', count/pods: '5'}}"), 0);
	assert_int_equal(put_pod(f, "p1", "", NULL), 0);
	assert_int_equal(put_pod(f, "p2", "", NULL), -EACCES);
	/* p1 finishes (its status written, as corral-noded does). */
	cleanup_free char *done = pod("p1", "", "status: {phase: Succeeded}\n");
	assert_int_equal(put(f, "Pod", "p1", done, NULL), 0);
	assert_int_equal(put_pod(f, "p2", "", NULL), 0);
}

static void test_quota__a_changed_or_deleted_quota_counts_from_then_on(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "q", "{hard: {pods: '1'}}"), 0);
	assert_int_equal(put_pod(f, "p1", "", NULL), 0);
	assert_int_equal(put_pod(f, "p2", "", NULL), -EACCES);
	/* Raised: the pods already there still count. */
	assert_int_equal(put_quota(f, "q", "{hard: {pods: '2'}}"), 0);
	assert_int_equal(put_pod(f, "p2", "", NULL), 0);
	assert_int_equal(put_pod(f, "p3", "", NULL), -EACCES);
	/* Its own status, as the controller writes it, changes nothing. */
	assert_int_equal(put_quota(f, "q",
				   "{hard: {pods: '2'}}\nstatus: {hard: {pods: '2'}, used: "
				   "{pods: '2'}}"),
			 0);
	assert_int_equal(put_pod(f, "p3", "", NULL), -EACCES);
	assert_int_equal(del(f, "ResourceQuota", "q"), 0);
	assert_int_equal(put_pod(f, "p3", "", NULL), 0);
}

/* The hook's state for tests: the resource-quota row of a. */
static void *quota_state(struct admission *a);

static void test_quota__a_quota_written_later_counts_what_exists(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_pod(f, "p1", "requests: {cpu: 1, memory: 1Gi}", NULL), 0);
	assert_int_equal(put_pod(f, "p2", "requests: {cpu: 500m, memory: 1Gi}", NULL), 0);
	assert_int_equal(
	    put_quota(f, "late", "{hard: {requests.cpu: '2', requests.memory: 4Gi, pods: '9'}}"),
	    0);
	struct quotacalc_list used = {0};
	assert_true(quota_hook_used(quota_state(f->a), "dev", "late", &used));
	cleanup_free char *s = quotacalc_list_format(&used);
	assert_string_equal(s, "pods=2,requests.cpu=1500m,requests.memory=2Gi");
	quotacalc_list_clear(&used);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "p3", "requests: {cpu: 600m, memory: 1Gi}", &msg), -EACCES);
	assert_non_null(strstr(msg, "requested: requests.cpu=600m, used: requests.cpu=1500m, "
				    "limited: requests.cpu=2"));

	/* After a restart the sums are the store's (load). */
	struct admission *b = default_admission();
	static const char *const kinds[] = {"Pod", "ResourceQuota"};
	for (size_t k = 0; k < 2; k++) {
		const struct kind_info *ki = kinds_by_kind(kinds[k]);
		static const char *const names[][3] = {{"p1", "p2", NULL}, {"late", NULL, NULL}};
		for (size_t i = 0; names[k][i]; i++) {
			cleanup_ynode struct ynode *o = stored(f->s, ki->plural, names[k][i]);
			struct admission_request rq = {.kind = ki,
						       .ns = "dev",
						       .name = names[k][i],
						       .owner = "dev/x",
						       .obj = o};
			admission_load(b, &rq);
		}
	}
	struct quotacalc_list again = {0};
	assert_true(quota_hook_used(quota_state(b), "dev", "late", &again));
	cleanup_free char *s2 = quotacalc_list_format(&again);
	assert_string_equal(s2, "pods=2,requests.cpu=1500m,requests.memory=2Gi");
	quotacalc_list_clear(&again);
	admission_free(b);
}

/* Over a shared store, other hosts' writes reach the quota through
 * admission_follow (remote.c): what they create is charged here, what
 * they delete is given back. */
static void test_quota__other_hosts_changes_are_followed(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_quota(f, "q", "{hard: {pods: '2'}}"), 0);
	const struct kind_info *k = kinds_by_kind("Pod");
	assert_true(admission_wants_follow(f->a, k));
	static const char *const names[] = {"far1", "far2"};
	for (size_t i = 0; i < 2; i++) {
		cleanup_free char *text = pod(names[i], "", NULL);
		cleanup_ynode struct ynode *o = NULL;
		assert_int_equal(yaml_parse_one(text, strlen(text), &o, NULL), 0);
		struct admission_request rq = {
		    .kind = k, .ns = "dev", .name = names[i], .owner = "dev/x", .obj = o};
		admission_follow(f->a, &rq);
	}
	assert_int_equal(put_pod(f, "near", "", NULL), -EACCES);
	struct admission_request gone = {.kind = k, .ns = "dev", .name = "far1", .owner = "dev/x"};
	admission_follow(f->a, &gone);
	assert_int_equal(put_pod(f, "near", "", NULL), 0);
}

static void test_quota__a_share_in_flight_is_held(void **state)
{
	(void)state;
	void *st = quota_hook_init(NULL);
	const struct kind_info *kq = kinds_by_kind("ResourceQuota");
	const struct kind_info *kp = kinds_by_kind("Pod");
	cleanup_ynode struct ynode *q = parse("metadata: {name: q}\nspec: {hard: {pods: '1'}}\n");
	struct admission_request rq = {.kind = kq, .ns = "dev", .name = "q", .obj = q};
	quota_hook_load(st, &rq);
	cleanup_ynode struct ynode *a = parse("metadata: {name: a}\nspec: {containers: []}\n");
	cleanup_ynode struct ynode *b = parse("metadata: {name: b}\nspec: {containers: []}\n");
	struct admission_request ra = {.kind = kp, .ns = "dev", .name = "a", .obj = a};
	struct admission_request rb = {.kind = kp, .ns = "dev", .name = "b", .obj = b};
	void *ca = NULL, *cb = NULL;
	struct error *err = NULL;
	assert_int_equal(quota_hook_reserve(st, &ra, &ca, &err), 0);
	/* a's write is not committed yet: b still cannot have the last pod. */
	assert_int_equal(quota_hook_reserve(st, &rb, &cb, &err), -EACCES);
	assert_non_null(strstr(err->msg, "used: pods=1, limited: pods=1"));
	error_free(err);
	err = NULL;
	quota_hook_unreserve(st, &ra, ca);
	assert_int_equal(quota_hook_reserve(st, &rb, &cb, &err), 0);
	quota_hook_settle(st, &rb, cb);
	assert_int_equal(quota_hook_reserve(st, &ra, &ca, &err), -EACCES);
	error_free(err);
	quota_hook_fini(st);
}

static void test_quota__scope_selectors_are_validated(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *spec, *msg;
	} bad[] = {
	    {"{hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, "
	     "operator: In}]}}",
	     "spec.scopeSelector.matchExpressions[0].values: Invalid value: null: must be at least "
	     "one value when `operator` is 'In' or 'NotIn' for scope selector"},
	    {"{hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: BestEffort, "
	     "operator: In, values: [a]}]}}",
	     "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating"},
	    {"{hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, "
	     "operator: Exists, values: [a]}]}}",
	     "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"},
	    {"{hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: Nope, operator: "
	     "Exists}]}}",
	     "scopeName: Unsupported value: \"Nope\""},
	    {"{hard: {pods: '1'}, scopes: [BestEffort, NotBestEffort]}", "conflicting scopes"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_free char *text = xasprintf(
		    "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: %s\n",
		    bad[i].spec);
		cleanup_free char *msg = NULL;
		assert_int_equal(put(f, "ResourceQuota", "q", text, &msg), -EINVAL);
		if (!strstr(msg, bad[i].msg))
			fail_msg("%s\n  wanted: %s", msg, bad[i].msg);
	}
	assert_int_equal(
	    put_quota(f, "q",
		      "{hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: "
		      "PriorityClass, operator: NotIn, values: [a]}]}}"),
	    0);
}

/* ---- LimitRange ---- */

static int put_limits(struct fixture *f, const char *name, const char *limits)
{
	cleanup_free char *text = xasprintf(
	    "apiVersion: v1\nkind: LimitRange\nmetadata: {name: %s}\nspec: {limits: %s}\n", name,
	    limits);
	return put(f, "LimitRange", name, text, NULL);
}

static void test_quota__limitrange_defaults_are_filled_in_before_the_quota(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_limits(f, "lr",
				    "[{type: Container, default: {cpu: 500m, memory: 256Mi},"
				    " defaultRequest: {cpu: 250m}}]"),
			 0);
	assert_int_equal(
	    put_quota(f, "q", "{hard: {requests.cpu: 500m, limits.cpu: '2', limits.memory: 1Gi}}"),
	    0);
	/* No resources: the quota would refuse it (must specify), but the
	 * LimitRange's defaults come first. */
	assert_int_equal(put_pod(f, "p1", "", NULL), 0);
	cleanup_ynode struct ynode *o = stored(f->s, "pods", "p1");
	assert_non_null(o);
	const struct ynode *c = ynode_item(ynode_path(o, "spec.containers"), 0);
	assert_string_equal(ynode_path_str(c, "resources.limits.cpu"), "500m");
	assert_string_equal(ynode_path_str(c, "resources.limits.memory"), "256Mi");
	assert_string_equal(ynode_path_str(c, "resources.requests.cpu"), "250m");
	/* The LimitRange's own defaulting made defaultRequest memory from
	 * default. */
	assert_string_equal(ynode_path_str(c, "resources.requests.memory"), "256Mi");
	const struct ynode *ann = ynode_path(o, "metadata.annotations");
	assert_string_equal(ynode_str(ynode_get(ann, "kubernetes.io/limit-ranger")),
			    "LimitRanger plugin set: cpu, memory request for container app; "
			    "cpu, memory limit for container app");
	/* What a container sets stays. */
	assert_int_equal(put_pod(f, "p2", "requests: {cpu: 100m}, limits: {cpu: 200m}", NULL), 0);
	cleanup_ynode struct ynode *o2 = stored(f->s, "pods", "p2");
	const struct ynode *c2 = ynode_item(ynode_path(o2, "spec.containers"), 0);
	assert_string_equal(ynode_path_str(c2, "resources.requests.cpu"), "100m");
	assert_string_equal(ynode_path_str(c2, "resources.limits.cpu"), "200m");
	/* 250m + 100m used of 500m: another defaulted pod does not fit. */
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "p3", "", &msg), -EACCES);
	assert_string_equal(msg, "pods \"p3\" is forbidden: exceeded quota: q, requested: "
				 "requests.cpu=250m, used: requests.cpu=350m, limited: "
				 "requests.cpu=500m");
}

static void test_quota__limitrange_bounds_are_refused_with_their_messages(void **state)
{
	struct fixture *f = *state;
	/* Each LimitRange refuses on its own: the first one (by name) that
	 * does gives the message. */
	assert_int_equal(
	    put_limits(
		f, "a-containers",
		"[{type: Container, max: {cpu: '1'}, min: {cpu: 100m},"
		" maxLimitRequestRatio: {cpu: '4'}},"
		" {type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 10Gi}}]"),
	    0);
	assert_int_equal(put_limits(f, "b-pods", "[{type: Pod, max: {memory: 1Gi}}]"), 0);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "big", "limits: {cpu: '2'}", &msg), -EACCES);
	assert_string_equal(msg, "pods \"big\" is forbidden: maximum cpu usage per Container is 1, "
				 "but limit is 2");
	free(msg);
	msg = NULL;
	assert_int_equal(put_pod(f, "tiny", "requests: {cpu: 50m}, limits: {cpu: 100m}", &msg),
			 -EACCES);
	assert_string_equal(msg, "pods \"tiny\" is forbidden: minimum cpu usage per Container is "
				 "100m, but request is 50m");
	free(msg);
	msg = NULL;
	assert_int_equal(put_pod(f, "bursty", "requests: {cpu: 100m}, limits: {cpu: 500m}", &msg),
			 -EACCES);
	assert_string_equal(msg, "pods \"bursty\" is forbidden: cpu max limit to request ratio per "
				 "Container is 4, but provided ratio is 5.000000");
	free(msg);
	msg = NULL;
	assert_int_equal(
	    put_pod(f, "fat",
		    "requests: {cpu: 200m, memory: 2Gi}, limits: {cpu: 200m, memory: 2Gi}", &msg),
	    -EACCES);
	assert_string_equal(msg, "pods \"fat\" is forbidden: maximum memory usage per Pod is 1Gi, "
				 "but limit is 2Gi");
	free(msg);
	msg = NULL;
	/* Several errors of one LimitRange, as Kubernetes' aggregate. */
	assert_int_equal(put_pod(f, "two", "requests: {cpu: 100m}, limits: {cpu: '2'}", &msg),
			 -EACCES);
	assert_string_equal(msg,
			    "pods \"two\" is forbidden: [maximum cpu usage per Container is 1, "
			    "but limit is 2, cpu max limit to request ratio per Container is "
			    "4, but provided ratio is 20.000000]");
	free(msg);
	msg = NULL;
	/* A pod setting nothing gets a-containers' defaults (its default
	 * and defaultRequest from max): only the Pod bound is left. */
	assert_int_equal(put_pod(f, "none", "", &msg), -EACCES);
	assert_string_equal(msg,
			    "pods \"none\" is forbidden: maximum memory usage per Pod is 1Gi.  "
			    "No limit is specified");
	assert_int_equal(
	    put_pod(f, "fits",
		    "requests: {cpu: 200m, memory: 1Gi}, limits: {cpu: 400m, memory: 1Gi}", NULL),
	    0);
	const char *pvc =
	    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s}\n"
	    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: %s}}}\n";
	cleanup_free char *small = xasprintf(pvc, "small", "500Mi");
	cleanup_free char *huge = xasprintf(pvc, "huge", "20Gi");
	cleanup_free char *ok = xasprintf(pvc, "ok", "5Gi");
	free(msg);
	msg = NULL;
	assert_int_equal(put(f, "PersistentVolumeClaim", "small", small, &msg), -EACCES);
	assert_string_equal(msg, "persistentvolumeclaims \"small\" is forbidden: minimum storage "
				 "usage per PersistentVolumeClaim is 1Gi, but request is 500Mi");
	free(msg);
	msg = NULL;
	assert_int_equal(put(f, "PersistentVolumeClaim", "huge", huge, &msg), -EACCES);
	assert_string_equal(msg, "persistentvolumeclaims \"huge\" is forbidden: maximum storage "
				 "usage per PersistentVolumeClaim is 10Gi, but request is 20Gi");
	assert_int_equal(put(f, "PersistentVolumeClaim", "ok", ok, NULL), 0);
	/* Deleting the LimitRange lifts its bounds. */
	assert_int_equal(del(f, "LimitRange", "a-containers"), 0);
	assert_int_equal(put_pod(f, "big", "limits: {cpu: '2', memory: 1Gi}", NULL), 0);
}

static void *quota_state(struct admission *a)
{
	void *st = admission_hook_state(a, "resource-quota");
	assert_non_null(st);
	return st;
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_quota__used_values_print_as_kubernetes_does),
	    T(test_quota__a_sum_keeps_the_format_of_what_was_added),
	    T(test_quota__a_pod_charges_its_containers_sums),
	    T(test_quota__a_terminal_pod_charges_only_its_count),
	    T(test_quota__services_claims_and_other_kinds),
	    T(test_quota__scopes_select_pods),
	    T(test_quota__constraints_name_what_is_missing),
	    T(test_quota__pod_past_the_quota_is_refused_with_its_message),
	    T(test_quota__pod_lacking_a_constrained_field_is_refused),
	    T(test_quota__every_quota_of_the_namespace_is_checked),
	    T(test_quota__scoped_quota_counts_only_what_it_selects),
	    T(test_quota__a_terminal_pod_stops_counting),
	    T(test_quota__a_quota_written_later_counts_what_exists),
	    T(test_quota__other_hosts_changes_are_followed),
	    T(test_quota__a_share_in_flight_is_held),
	    T(test_quota__a_changed_or_deleted_quota_counts_from_then_on),
	    T(test_quota__scope_selectors_are_validated),
	    T(test_quota__limitrange_defaults_are_filled_in_before_the_quota),
	    T(test_quota__limitrange_bounds_are_refused_with_their_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
