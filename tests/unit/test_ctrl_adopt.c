/* test_ctrl_adopt.c: the claims every controller makes on the objects
 * its selector matches (adopt an orphan, keep its own, release what no
 * longer matches, never touch another controller's, nothing while the
 * owner is being deleted), the writes that adopt and release, and the
 * owner an object's controller reference resolves to, on a plain folder
 * laid out like the mount. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adopt.h"
#include "informer.h"
#include "loop.h"
#include "obj.h"
#include "selector.h"
#include "testlib.h"
#include "util.h"
#include "write.h"

static struct selector *web(void)
{
	struct selector *sel = NULL;
	cleanup_ynode struct ynode *s = y("{matchLabels: {app: web}}");
	assert_int_equal(selector_parse_labelselector(s, &sel, NULL), 0);
	return sel;
}

/* The ReplicaSet dev/web, uid U1; deleting: with a deletionTimestamp. */
static void owner(struct adopt_owner *o, struct ynode **obj, bool deleting)
{
	*obj = y(deleting ? "{metadata: {name: web, namespace: dev, uid: U1, "
			    "deletionTimestamp: '2026-12-01T08:00:00Z'}}"
			  : "{metadata: {name: web, namespace: dev, uid: U1}}");
	adopt_owner_init(o, *obj, "apps/v1", "ReplicaSet");
}

#define OURS                                                                                       \
	"ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: U1, "           \
	"controller: true}]"
#define THEIRS                                                                                     \
	"ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: x, uid: U2, "             \
	"controller: true}]"

static void test_adopt__owner_from_its_object(void **state)
{
	(void)state;
	struct adopt_owner o;
	cleanup_ynode struct ynode *rs = NULL;
	owner(&o, &rs, false);
	assert_string_equal(o.name, "web");
	assert_string_equal(o.ns, "dev");
	assert_string_equal(o.uid, "U1");
	assert_string_equal(o.kind, "ReplicaSet");
	assert_false(o.deleting);
	cleanup_ynode struct ynode *gone = NULL;
	owner(&o, &gone, true);
	assert_true(o.deleting);
}

static void test_adopt__adopts_a_matching_orphan(void **state)
{
	(void)state;
	struct adopt_owner o;
	cleanup_ynode struct ynode *rs = NULL;
	owner(&o, &rs, false);
	cleanup_selector struct selector *sel = web();
	cleanup_ynode struct ynode *orphan =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}}}");
	cleanup_ynode struct ynode *not_controller =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}, ownerReferences: "
	      "[{apiVersion: v1, kind: ConfigMap, name: c, uid: U3}]}}");
	cleanup_ynode struct ynode *stranger =
	    y("{metadata: {name: p, namespace: dev, labels: {app: db}}}");
	assert_int_equal(adopt_claim(&o, sel, orphan), ADOPT_ADOPT);
	assert_int_equal(adopt_claim(&o, sel, not_controller), ADOPT_ADOPT);
	assert_int_equal(adopt_claim(&o, sel, stranger), ADOPT_IGNORE);

	assert_int_equal(adopt_apply(orphan, &o, ADOPT_ADOPT, NULL), 1);
	const struct ynode *ref = obj_controller_ref(orphan);
	assert_non_null(ref);
	assert_string_equal(ynode_str(ynode_get(ref, "uid")), "U1");
	assert_string_equal(ynode_str(ynode_get(ref, "kind")), "ReplicaSet");
	assert_string_equal(ynode_str(ynode_get(ref, "name")), "web");
	assert_string_equal(ynode_str(ynode_get(ref, "apiVersion")), "apps/v1");
	/* Now it is ours; adopting again changes nothing. */
	assert_int_equal(adopt_claim(&o, sel, orphan), ADOPT_KEEP);
	assert_int_equal(adopt_apply(orphan, &o, ADOPT_ADOPT, NULL), 0);
	/* The other owner's reference stays beside ours. */
	assert_int_equal(adopt_apply(not_controller, &o, ADOPT_ADOPT, NULL), 1);
	assert_int_equal(ynode_path(not_controller, "metadata.ownerReferences")->n, 2);
}

static void test_adopt__never_touches_another_controllers(void **state)
{
	(void)state;
	struct adopt_owner o;
	cleanup_ynode struct ynode *rs = NULL;
	owner(&o, &rs, false);
	cleanup_selector struct selector *sel = web();
	cleanup_ynode struct ynode *theirs =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}, " THEIRS "}}");
	cleanup_ynode struct ynode *theirs_other =
	    y("{metadata: {name: p, namespace: dev, labels: {app: db}, " THEIRS "}}");
	assert_int_equal(adopt_claim(&o, sel, theirs), ADOPT_IGNORE);
	assert_int_equal(adopt_claim(&o, sel, theirs_other), ADOPT_IGNORE);
	/* A write that finds it taken meanwhile leaves it as it is. */
	cleanup_ynode struct ynode *before = ynode_clone(theirs);
	assert_int_equal(adopt_apply(theirs, &o, ADOPT_ADOPT, NULL), 0);
	assert_int_equal(adopt_apply(theirs, &o, ADOPT_RELEASE, NULL), 0);
	assert_true(ynode_equal(theirs, before));
}

static void test_adopt__releases_its_own_that_no_longer_match(void **state)
{
	(void)state;
	struct adopt_owner o;
	cleanup_ynode struct ynode *rs = NULL;
	owner(&o, &rs, false);
	cleanup_selector struct selector *sel = web();
	cleanup_ynode struct ynode *ours =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}, " OURS "}}");
	cleanup_ynode struct ynode *relabelled =
	    y("{metadata: {name: p, namespace: dev, labels: {app: db}, " OURS "}}");
	assert_int_equal(adopt_claim(&o, sel, ours), ADOPT_KEEP);
	assert_int_equal(adopt_claim(&o, sel, relabelled), ADOPT_RELEASE);
	assert_int_equal(adopt_apply(relabelled, &o, ADOPT_RELEASE, NULL), 1);
	assert_null(obj_controller_ref(relabelled));
	assert_int_equal(adopt_claim(&o, sel, relabelled), ADOPT_IGNORE);
	assert_int_equal(adopt_apply(relabelled, &o, ADOPT_RELEASE, NULL), 0);
}

static void test_adopt__nothing_while_the_owner_is_deleted(void **state)
{
	(void)state;
	struct adopt_owner o;
	cleanup_ynode struct ynode *rs = NULL;
	owner(&o, &rs, true);
	cleanup_selector struct selector *sel = web();
	cleanup_ynode struct ynode *orphan =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}}}");
	cleanup_ynode struct ynode *ours =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}, " OURS "}}");
	cleanup_ynode struct ynode *relabelled =
	    y("{metadata: {name: p, namespace: dev, labels: {app: db}, " OURS "}}");
	assert_int_equal(adopt_claim(&o, sel, orphan), ADOPT_IGNORE);
	assert_int_equal(adopt_claim(&o, sel, ours), ADOPT_KEEP);
	assert_int_equal(adopt_claim(&o, sel, relabelled), ADOPT_IGNORE);
}

static bool never(const struct ynode *obj)
{
	(void)obj;
	return false;
}

static void test_adopt__no_orphan_being_deleted_or_elsewhere(void **state)
{
	(void)state;
	struct adopt_owner o;
	cleanup_ynode struct ynode *rs = NULL;
	owner(&o, &rs, false);
	cleanup_selector struct selector *sel = web();
	cleanup_ynode struct ynode *going =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}, "
	      "deletionTimestamp: '2026-12-01T08:00:00Z'}}");
	cleanup_ynode struct ynode *elsewhere =
	    y("{metadata: {name: p, namespace: prod, labels: {app: web}}}");
	cleanup_ynode struct ynode *orphan =
	    y("{metadata: {name: p, namespace: dev, labels: {app: web}}}");
	assert_int_equal(adopt_claim(&o, sel, going), ADOPT_IGNORE);
	assert_int_equal(adopt_claim(&o, sel, elsewhere), ADOPT_IGNORE);
	assert_int_equal(adopt_apply(going, &o, ADOPT_ADOPT, NULL), 0);
	/* The caller's own condition, checked on what the write reads. */
	assert_int_equal(adopt_apply(orphan, &o, ADOPT_ADOPT, never), 0);
	assert_null(obj_controller_ref(orphan));
	/* An owner without a uid claims nothing. */
	struct adopt_owner nouid = {.api_version = "v1", .kind = "ReplicationController"};
	assert_int_equal(adopt_claim(&nouid, sel, orphan), ADOPT_IGNORE);
	assert_int_equal(adopt_apply(orphan, &nouid, ADOPT_ADOPT, NULL), 0);
}

/* ---- through the writer ---------------------------------------------------- */

struct done {
	int calls;
	int status;
	bool changed;
};

static void on_done(void *data, const struct writer_result *res)
{
	struct done *d = data;
	d->calls++;
	d->status = res->status;
	d->changed = res->changed;
}

static struct ynode *written(struct loop *loop, const char *dir, struct done *d)
{
	for (int i = 0; i < 500 && !d->calls; i++)
		loop_run_once(loop, 10, NULL);
	assert_int_equal(d->calls, 1);
	assert_int_equal(d->status, 0);
	struct ynode *obj = NULL;
	assert_int_equal(write_read_object(dir, "namespaces/dev/pods/p.yaml", &obj, NULL), 0);
	return obj;
}

static void test_adopt__writes_adopt_then_release(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_ctrl_adopt.XXXXXX";
	assert_non_null(mkdtemp(dir));
	cleanup_free char *pods = xasprintf("%s/namespaces/dev/pods", dir);
	assert_int_equal(util_mkdir_p(pods, 0755), 0);
	cleanup_free char *file = xasprintf("%s/p.yaml", pods);
	FILE *fp = fopen(file, "w");
	assert_non_null(fp);
	fputs("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: dev\n"
	      "  labels:\n    app: web\n",
	      fp);
	fclose(fp);
	struct loop *loop = loop_new(NULL);
	struct writer *w = writer_new(loop, dir, 2, NULL);
	assert_non_null(w);

	struct adopt_owner o;
	struct ynode *rs = NULL;
	owner(&o, &rs, false);
	struct done d = {0};
	adopt_write(w, "namespaces/dev/pods/p.yaml", &o, ADOPT_ADOPT, NULL, on_done, &d);
	ynode_free(rs); /* the job copied what it needs */
	struct ynode *pod = written(loop, dir, &d);
	assert_true(d.changed);
	const struct ynode *ref = obj_controller_ref(pod);
	assert_non_null(ref);
	assert_string_equal(ynode_str(ynode_get(ref, "uid")), "U1");
	assert_string_equal(ynode_str(ynode_get(ref, "name")), "web");
	ynode_free(pod);

	owner(&o, &rs, false);
	d = (struct done){0};
	adopt_write(w, "namespaces/dev/pods/p.yaml", &o, ADOPT_RELEASE, NULL, on_done, &d);
	pod = written(loop, dir, &d);
	assert_true(d.changed);
	assert_null(obj_controller_ref(pod));
	ynode_free(pod);
	ynode_free(rs);

	writer_free(w);
	loop_free(loop);
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_adopt__resolves_the_owner_to_sync(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_ctrl_adopt.XXXXXX";
	assert_non_null(mkdtemp(dir));
	cleanup_free char *sets = xasprintf("%s/namespaces/dev/replicasets", dir);
	assert_int_equal(util_mkdir_p(sets, 0755), 0);
	cleanup_free char *file = xasprintf("%s/web.yaml", sets);
	FILE *fp = fopen(file, "w");
	assert_non_null(fp);
	fputs("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web\n"
	      "  namespace: dev\n  uid: U1\n",
	      fp);
	fclose(fp);
	struct loop *loop = loop_new(NULL);
	struct informer *inf = informer_new(loop, dir, "replicasets", true);
	assert_int_equal(informer_start(inf, NULL), 0);
	assert_non_null(informer_get(inf, "dev/web"));

	bool controlled = false;
	cleanup_ynode struct ynode *ours = y("{metadata: {name: p, namespace: dev, " OURS "}}");
	cleanup_free char *key = adopt_resolve_owner(inf, "ReplicaSet", ours, &controlled);
	assert_non_null(key);
	assert_string_equal(key, "dev/web");
	assert_true(controlled);
	/* Another set's (not in the informer), another kind's, a stale uid. */
	cleanup_ynode struct ynode *theirs = y("{metadata: {name: p, namespace: dev, " THEIRS "}}");
	assert_null(adopt_resolve_owner(inf, "ReplicaSet", theirs, &controlled));
	assert_true(controlled);
	assert_null(adopt_resolve_owner(inf, "Deployment", ours, &controlled));
	assert_true(controlled);
	cleanup_ynode struct ynode *stale =
	    y("{metadata: {name: p, namespace: dev, ownerReferences: [{apiVersion: apps/v1, "
	      "kind: ReplicaSet, name: web, uid: OLD, controller: true}]}}");
	assert_null(adopt_resolve_owner(inf, "ReplicaSet", stale, NULL));
	cleanup_ynode struct ynode *orphan = y("{metadata: {name: p, namespace: dev}}");
	assert_null(adopt_resolve_owner(inf, "ReplicaSet", orphan, &controlled));
	assert_false(controlled);

	informer_free(inf);
	loop_free(loop);
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_adopt__owner_from_its_object),
	    cmocka_unit_test(test_adopt__adopts_a_matching_orphan),
	    cmocka_unit_test(test_adopt__never_touches_another_controllers),
	    cmocka_unit_test(test_adopt__releases_its_own_that_no_longer_match),
	    cmocka_unit_test(test_adopt__nothing_while_the_owner_is_deleted),
	    cmocka_unit_test(test_adopt__no_orphan_being_deleted_or_elsewhere),
	    cmocka_unit_test(test_adopt__writes_adopt_then_release),
	    cmocka_unit_test(test_adopt__resolves_the_owner_to_sync),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
