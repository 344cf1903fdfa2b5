/* test_fs_priority.c: the admission hook "priority" (fs/priority.c), run
 * by the write path (write.c) with corral-fs's hook table against a
 * temporary LMDB store, each test in its own mkdtemp folder: a pod gets
 * its class's value and policy, or the default class's (and its name); a
 * pod naming no class, or setting another priority, is refused with
 * Kubernetes' message and leaves the store as it was; an update keeps
 * what the create gave; only one class can be the default, also across a
 * restart (load) and while a write making one is in flight. */
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
#include "priority.h"
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
	if (testlib_store_temp(f->dir, sizeof(f->dir), "corral-prio", &f->s) < 0) {
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

struct target {
	char ns[32], name[64], key[160];
	struct write_target w;
};

static void pod_target(struct target *t, const char *name)
{
	snprintf(t->ns, sizeof(t->ns), "dev");
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->key, sizeof(t->key), "namespaces/dev/pods/%s", name);
	t->w = (struct write_target){
	    .kind = kinds_by_kind("Pod"), .ns = t->ns, .name = t->name, .key = t->key};
}

static void class_target(struct target *t, const char *name)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->key, sizeof(t->key), "priorityclasses/%s", name);
	t->w = (struct write_target){
	    .kind = kinds_by_kind("PriorityClass"), .name = t->name, .key = t->key};
}

/* Writes text; *msg gets the refusal's message (or NULL). */
static int put(struct fixture *f, const struct target *t, const char *text, char **msg)
{
	struct error *err = NULL;
	struct write_result res = {0};
	int r = write_object(f->s, f->a, &t->w, text, strlen(text), AUTHOR, &res, &err);
	if (msg)
		*msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	write_result_clear(&res);
	return r;
}

static int put_class(struct fixture *f, const char *name, int value, bool global, char **msg)
{
	struct target t;
	class_target(&t, name);
	cleanup_free char *text =
	    xasprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		      "metadata: {name: %s}\nvalue: %d\nglobalDefault: %s\n",
		      name, value, global ? "true" : "false");
	return put(f, &t, text, msg);
}

/* A pod; class and extra (more of spec, "" for none) may be NULL. */
static char *pod_text(const char *name, const char *class, const char *extra)
{
	return xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n"
			 "  containers: [{name: c, image: nginx:1.25}]\n%s%s%s%s",
			 name, class ? "  priorityClassName: " : "", class ? class : "",
			 class ? "\n" : "", extra ? extra : "");
}

static int put_pod(struct fixture *f, const char *name, const char *class, const char *extra,
		   char **msg)
{
	struct target t;
	pod_target(&t, name);
	cleanup_free char *text = pod_text(name, class, extra);
	return put(f, &t, text, msg);
}

/* The stored object of key, parsed, or NULL. */
static struct ynode *stored(struct store *s, const char *key)
{
	struct store_record rec = {0};
	if (store_get(s, key, &rec, NULL) < 0)
		return NULL;
	struct ynode *o = NULL;
	assert_int_equal(yaml_parse_one(rec.yaml, rec.len, &o, NULL), 0);
	store_record_clear(&rec);
	return o;
}

static long long stored_priority(struct store *s, const char *pod)
{
	cleanup_free char *key = xasprintf("namespaces/dev/pods/%s", pod);
	cleanup_ynode struct ynode *o = stored(s, key);
	assert_non_null(o);
	long long v = -1;
	assert_int_equal(ynode_int(ynode_path(o, "spec.priority"), &v), 0);
	return v;
}

static const char *stored_str(const struct ynode *o, const char *path)
{
	const char *s = ynode_path_str(o, path);
	return s ? s : "(none)";
}

/* ---- tests ---- */

static void test_priority__hook_follows_service_addresses_for_pods_and_classes(void **state)
{
	(void)state;
	size_t n;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	/* Right after service-addresses (other rows, such as LimitRanger
	 * before and ResourceQuota after, come and go around them). */
	size_t row = 0;
	while (row < n && strcmp(hooks[row].name, "priority"))
		row++;
	assert_true(row > 0 && row < n);
	assert_string_equal(hooks[row - 1].name, "service-addresses");
	struct admission *a = admission_new(&hooks[row], 1, NULL);
	assert_true(admission_applies(a, kinds_by_kind("Pod")));
	assert_true(admission_applies(a, kinds_by_kind("PriorityClass")));
	assert_false(admission_applies(a, kinds_by_kind("Deployment")));
	/* At start it wants the classes, not every pod. */
	assert_true(admission_wants_load(a, kinds_by_kind("PriorityClass")));
	assert_false(admission_wants_load(a, kinds_by_kind("Pod")));
	admission_free(a);
}

static void test_priority__pod_gets_its_class_value(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_class(f, "gold", 1000000, false, NULL), 0);
	assert_int_equal(put_pod(f, "web", "gold", NULL, NULL), 0);
	cleanup_ynode struct ynode *o = stored(f->s, "namespaces/dev/pods/web");
	assert_int_equal(stored_priority(f->s, "web"), 1000000);
	assert_string_equal(stored_str(o, "spec.preemptionPolicy"), "PreemptLowerPriority");
	assert_string_equal(stored_str(o, "spec.priorityClassName"), "gold");

	/* A class's policy comes with it; a system class needs no object. */
	struct target t;
	class_target(&t, "polite");
	assert_int_equal(put(f, &t,
			     "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
			     "metadata: {name: polite}\nvalue: 5\npreemptionPolicy: Never\n",
			     NULL),
			 0);
	assert_int_equal(put_pod(f, "meek", "polite", NULL, NULL), 0);
	cleanup_ynode struct ynode *m = stored(f->s, "namespaces/dev/pods/meek");
	assert_string_equal(stored_str(m, "spec.preemptionPolicy"), "Never");
	assert_int_equal(stored_priority(f->s, "meek"), 5);
	assert_int_equal(put_pod(f, "dns", "system-cluster-critical", NULL, NULL), 0);
	assert_int_equal(stored_priority(f->s, "dns"), 2000000000);

	/* Without a class and without a default: 0. */
	assert_int_equal(put_pod(f, "plain", NULL, NULL, NULL), 0);
	cleanup_ynode struct ynode *p = stored(f->s, "namespaces/dev/pods/plain");
	assert_int_equal(stored_priority(f->s, "plain"), 0);
	assert_string_equal(stored_str(p, "spec.priorityClassName"), "(none)");
}

static void test_priority__pod_without_class_gets_the_default(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_class(f, "low", 10, false, NULL), 0);
	assert_int_equal(put_class(f, "standard", 100, true, NULL), 0);
	assert_int_equal(put_pod(f, "web", NULL, NULL, NULL), 0);
	cleanup_ynode struct ynode *o = stored(f->s, "namespaces/dev/pods/web");
	assert_int_equal(stored_priority(f->s, "web"), 100);
	assert_string_equal(stored_str(o, "spec.priorityClassName"), "standard");
	/* A pod naming a class is not given the default's. */
	assert_int_equal(put_pod(f, "batch", "low", NULL, NULL), 0);
	assert_int_equal(stored_priority(f->s, "batch"), 10);

	/* A deleted default no longer applies. */
	struct target t;
	class_target(&t, "standard");
	struct error *err = NULL;
	assert_int_equal(write_delete(f->s, f->a, &t.w, AUTHOR, &err), 0);
	assert_int_equal(put_pod(f, "later", NULL, NULL, NULL), 0);
	assert_int_equal(stored_priority(f->s, "later"), 0);
}

static void test_priority__missing_class_is_refused_and_store_unchanged(void **state)
{
	struct fixture *f = *state;
	uint64_t rev = store_revision(f->s);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "web", "gold", NULL, &msg), -EACCES);
	assert_string_equal(msg, "pods \"web\" is forbidden: no PriorityClass with name gold was "
				 "found");
	assert_null(stored(f->s, "namespaces/dev/pods/web"));
	assert_int_equal(store_revision(f->s), rev);

	/* A deleted class is missing too. */
	assert_int_equal(put_class(f, "gold", 7, false, NULL), 0);
	assert_int_equal(put_pod(f, "web", "gold", NULL, NULL), 0);
	struct target t;
	class_target(&t, "gold");
	struct error *err = NULL;
	assert_int_equal(write_delete(f->s, f->a, &t.w, AUTHOR, &err), 0);
	assert_int_equal(put_pod(f, "web2", "gold", NULL, NULL), -EACCES);
	assert_null(stored(f->s, "namespaces/dev/pods/web2"));
}

static void test_priority__pod_setting_another_priority_is_refused(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_class(f, "gold", 1000, false, NULL), 0);
	uint64_t rev = store_revision(f->s);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_pod(f, "web", "gold", "  priority: 5\n", &msg), -EACCES);
	assert_string_equal(msg,
			    "pods \"web\" is forbidden: the integer value of priority (5) must "
			    "not be provided in pod spec; priority admission controller "
			    "computed 1000 from the given PriorityClass name");
	free(msg);
	msg = NULL;
	assert_int_equal(put_pod(f, "web", "gold", "  preemptionPolicy: Never\n", &msg), -EACCES);
	assert_non_null(strstr(msg, "PreemptionPolicy (Never) must not be provided"));
	assert_null(stored(f->s, "namespaces/dev/pods/web"));
	assert_int_equal(store_revision(f->s), rev);

	/* The value it would get anyway is no refusal. */
	assert_int_equal(put_pod(f, "web", "gold", "  priority: 1000\n", NULL), 0);
	assert_int_equal(stored_priority(f->s, "web"), 1000);
}

static void test_priority__update_keeps_the_admitted_values(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_class(f, "standard", 100, true, NULL), 0);
	assert_int_equal(put_pod(f, "web", NULL, NULL, NULL), 0);
	assert_int_equal(stored_priority(f->s, "web"), 100);

	/* The default changes; the pod's original manifest is written again
	 * with a new image: no spec change is refused, the values stay. */
	struct target t;
	class_target(&t, "standard");
	struct error *err = NULL;
	assert_int_equal(write_delete(f->s, f->a, &t.w, AUTHOR, &err), 0);
	assert_int_equal(put_class(f, "newer", 200, true, NULL), 0);
	struct target pt;
	pod_target(&pt, "web");
	cleanup_free char *again = pod_text("web", NULL, NULL);
	char *img = strstr(again, "1.25");
	memcpy(img, "1.26", 4);
	cleanup_free char *msg = NULL;
	assert_int_equal(put(f, &pt, again, &msg), 0);
	cleanup_ynode struct ynode *o = stored(f->s, pt.key);
	assert_int_equal(stored_priority(f->s, "web"), 100);
	assert_string_equal(stored_str(o, "spec.priorityClassName"), "standard");
	assert_string_equal(stored_str(o, "spec.preemptionPolicy"), "PreemptLowerPriority");
	assert_string_equal(stored_str(ynode_item(ynode_path(o, "spec.containers"), 0), "image"),
			    "nginx:1.26");

	/* Changing the priority of a pod is still a change of its spec. */
	assert_int_equal(put_pod(f, "web", NULL, "  priority: 200\n", &msg), -EINVAL);
	assert_int_equal(stored_priority(f->s, "web"), 100);
}

static void test_priority__admitted_pod_is_stored_normalized(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_class(f, "gold", 1000, false, NULL), 0);
	assert_int_equal(put_pod(f, "web", "gold", NULL, NULL), 0);
	struct store_record rec = {0};
	assert_int_equal(store_get(f->s, "namespaces/dev/pods/web", &rec, NULL), 0);
	/* The keys the hook set are in their sorted place. */
	const char *pp = strstr(rec.yaml, "  preemptionPolicy:");
	const char *pr = strstr(rec.yaml, "  priority:");
	const char *pn = strstr(rec.yaml, "  priorityClassName:");
	const char *rp = strstr(rec.yaml, "  restartPolicy:");
	assert_true(pp && pr && pn && rp);
	assert_true(pp < pr && pr < pn && pn < rp);
	store_record_clear(&rec);

	/* So writing the same manifest again changes nothing declared. */
	assert_int_equal(put_pod(f, "web", "gold", NULL, NULL), 0);
	cleanup_ynode struct ynode *o = stored(f->s, "namespaces/dev/pods/web");
	assert_string_equal(stored_str(o, "metadata.generation"), "1");
}

static void test_priority__second_default_is_refused(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(put_class(f, "a", 10, true, NULL), 0);
	uint64_t rev = store_revision(f->s);
	cleanup_free char *msg = NULL;
	assert_int_equal(put_class(f, "b", 20, true, &msg), -EACCES);
	assert_string_equal(msg, "priorityclasses.scheduling.k8s.io \"b\" is forbidden: "
				 "PriorityClass a is already marked as default. Only one default "
				 "can exist");
	assert_null(stored(f->s, "priorityclasses/b"));
	assert_int_equal(store_revision(f->s), rev);

	/* Not the default: fine; made the default later: refused too. */
	assert_int_equal(put_class(f, "b", 20, false, NULL), 0);
	assert_int_equal(put_class(f, "b", 20, true, NULL), -EACCES);
	/* The default itself may be written again. */
	assert_int_equal(put_class(f, "a", 10, true, NULL), 0);
	/* Once a is no longer the default, b may be. */
	assert_int_equal(put_class(f, "a", 10, false, NULL), 0);
	assert_int_equal(put_class(f, "b", 20, true, NULL), 0);

	/* After a restart the loaded classes count: a cannot be the default. */
	admission_free(f->a);
	f->a = default_admission();
	const char *names[] = {"a", "b"};
	for (size_t i = 0; i < 2; i++) {
		cleanup_free char *key = xasprintf("priorityclasses/%s", names[i]);
		cleanup_ynode struct ynode *o = stored(f->s, key);
		struct admission_request rq = {.kind = kinds_by_kind("PriorityClass"),
					       .name = names[i],
					       .owner = names[i],
					       .obj = o};
		admission_load(f->a, &rq);
	}
	assert_int_equal(put_class(f, "a", 10, true, NULL), -EACCES);
	assert_int_equal(put_pod(f, "web", NULL, NULL, NULL), 0);
	assert_int_equal(stored_priority(f->s, "web"), 20);
}

static void test_priority__default_in_flight_is_held(void **state)
{
	struct fixture *f = *state;
	/* Two writes making a class the default, reserved together: the
	 * second is refused until the first gives the default back. */
	void *st = priority_hook_init(NULL);
	cleanup_ynode struct ynode *a = NULL, *b = NULL;
	const char *ta = "metadata: {name: a}\nvalue: 1\nglobalDefault: true\n";
	const char *tb = "metadata: {name: b}\nvalue: 2\nglobalDefault: true\n";
	assert_int_equal(yaml_parse_one(ta, strlen(ta), &a, NULL), 0);
	assert_int_equal(yaml_parse_one(tb, strlen(tb), &b, NULL), 0);
	const struct kind_info *k = kinds_by_kind("PriorityClass");
	struct admission_request ra = {.kind = k, .name = "a", .owner = "/a", .obj = a};
	struct admission_request rb = {.kind = k, .name = "b", .owner = "/b", .obj = b};
	void *ca = NULL, *cb = NULL;
	struct error *err = NULL;
	assert_int_equal(priority_hook_reserve(st, &ra, &ca, &err), 0);
	assert_int_equal(priority_hook_reserve(st, &rb, &cb, &err), -EACCES);
	assert_non_null(strstr(err->msg, "PriorityClass a is already marked as default"));
	error_free(err);
	err = NULL;
	priority_hook_unreserve(st, &ra, ca);
	assert_int_equal(priority_hook_reserve(st, &rb, &cb, &err), 0);
	priority_hook_settle(st, &rb, cb);
	assert_int_equal(priority_hook_reserve(st, &ra, &ca, &err), -EACCES);
	error_free(err);
	priority_hook_fini(st);
	(void)f;
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_priority__hook_follows_service_addresses_for_pods_and_classes),
	    T(test_priority__pod_gets_its_class_value),
	    T(test_priority__pod_without_class_gets_the_default),
	    T(test_priority__missing_class_is_refused_and_store_unchanged),
	    T(test_priority__pod_setting_another_priority_is_refused),
	    T(test_priority__update_keeps_the_admitted_values),
	    T(test_priority__admitted_pod_is_stored_normalized),
	    T(test_priority__second_default_is_refused),
	    T(test_priority__default_in_flight_is_held),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
