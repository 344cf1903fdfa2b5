/* test_ctrl_statefulset.c: the StatefulSet controller's decisions on
 * hand-built objects: ordinals from names, the pod's identity, labels and
 * claim volumes, the claims' names, labels and ownerReferences under each
 * retention policy, and the plan: ordered and parallel creation, repair of
 * failed pods, scale-down from the highest ordinal, rolling updates with
 * a partition and maxUnavailable, OnDelete. Also revision.c's split by
 * template and history excess. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "revision.h"
#include "statefulset.h"
#include "testlib.h"
#include "util.h"
#include "ynode.h"

static const char *set_yaml =
    "{metadata: {name: web, namespace: dev, uid: u-set},"
    " spec: {replicas: 3, serviceName: nginx,"
    "  selector: {matchLabels: {app: nginx}},"
    "  template: {metadata: {labels: {app: nginx}, annotations: {a: b}},"
    "   spec: {containers: [{name: c, image: busybox,"
    "     volumeMounts: [{name: www, mountPath: /w}]}],"
    "    volumes: [{name: www, emptyDir: {}}, {name: tmp, emptyDir: {}}]}},"
    "  volumeClaimTemplates: [{metadata: {name: www, labels: {tier: data}},"
    "   spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]%s}}";

static struct ynode *set_with(const char *extra)
{
	cleanup_free char *t = xasprintf(set_yaml, extra);
	return y(t);
}

/* ---- names -------------------------------------------------------------- */

static void test_statefulset__ordinals_and_names(void **state)
{
	(void)state;
	assert_int_equal(ssc_pod_ordinal("web", "web-0"), 0);
	assert_int_equal(ssc_pod_ordinal("web", "web-12"), 12);
	assert_int_equal(ssc_pod_ordinal("web", "web-"), -1);
	assert_int_equal(ssc_pod_ordinal("web", "web-01"), -1);
	assert_int_equal(ssc_pod_ordinal("web", "web-x"), -1);
	assert_int_equal(ssc_pod_ordinal("web", "webb-1"), -1);
	assert_int_equal(ssc_pod_ordinal("web", "web-a-1"), -1);
	assert_int_equal(ssc_pod_ordinal("web", "other-1"), -1);
	cleanup_free char *c = ssc_claim_name("www", "web", 2);
	assert_string_equal(c, "www-web-2");
}

/* ---- the pod -------------------------------------------------------------- */

static void test_statefulset__new_pod(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *set = set_with("");
	cleanup_ynode struct ynode *pod =
	    ssc_new_pod(set, ynode_path(set, "spec.template"), 1, "web-abc");
	assert_string_equal(str(pod, "metadata.name"), "web-1");
	assert_string_equal(str(pod, "metadata.namespace"), "dev");
	const struct ynode *labels = ynode_path(pod, "metadata.labels");
	assert_string_equal(ynode_str(ynode_get(labels, "app")), "nginx");
	assert_string_equal(ynode_str(ynode_get(labels, SSC_POD_NAME_LABEL)), "web-1");
	assert_string_equal(ynode_str(ynode_get(labels, SSC_POD_INDEX_LABEL)), "1");
	assert_string_equal(ynode_str(ynode_get(labels, REVISION_HASH_LABEL)), "web-abc");
	assert_string_equal(str(pod, "metadata.annotations.a"), "b");
	assert_string_equal(str(pod, "spec.hostname"), "web-1");
	assert_string_equal(str(pod, "spec.subdomain"), "nginx");
	const struct ynode *ref = ynode_item(ynode_path(pod, "metadata.ownerReferences"), 0);
	assert_string_equal(str(ref, "kind"), "StatefulSet");
	assert_string_equal(str(ref, "uid"), "u-set");
	assert_string_equal(str(ref, "controller"), "true");
	/* the claim's volume replaces the template's of that name */
	const struct ynode *vols = ynode_path(pod, "spec.volumes");
	assert_int_equal(vols->n, 2);
	assert_string_equal(str(ynode_item(vols, 0), "name"), "tmp");
	assert_string_equal(str(ynode_item(vols, 1), "name"), "www");
	assert_string_equal(str(ynode_item(vols, 1), "persistentVolumeClaim.claimName"),
			    "www-web-1");
	assert_null(ynode_get(ynode_item(vols, 1), "emptyDir"));
	/* the set itself is left as it was */
	assert_int_equal(ynode_path(set, "spec.template.spec.volumes")->n, 2);

	/* no serviceName: no subdomain */
	cleanup_ynode struct ynode *bare =
	    y("{metadata: {name: db, uid: u}, spec: {template: {spec: {containers: []}}}}");
	cleanup_ynode struct ynode *p2 =
	    ssc_new_pod(bare, ynode_path(bare, "spec.template"), 0, "db-1");
	assert_null(ynode_path(p2, "spec.subdomain"));
	assert_null(ynode_path(p2, "spec.volumes"));
	assert_string_equal(str(p2, "spec.hostname"), "db-0");
}

/* ---- claims ------------------------------------------------------------- */

static size_t count_refs(const struct ynode *o, const char *uid)
{
	const struct ynode *refs = ynode_path(o, "metadata.ownerReferences");
	size_t n = 0;
	for (size_t i = 0; refs && i < refs->n; i++)
		if (!strcmp(str(ynode_item(refs, i), "uid"), uid))
			n++;
	return n;
}

static void test_statefulset__new_claim(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *set = set_with("");
	const struct ynode *ct = ynode_item(ynode_path(set, "spec.volumeClaimTemplates"), 0);
	cleanup_ynode struct ynode *claim = ssc_new_claim(set, ct, 2);
	assert_string_equal(str(claim, "kind"), "PersistentVolumeClaim");
	assert_string_equal(str(claim, "metadata.name"), "www-web-2");
	assert_string_equal(str(claim, "metadata.namespace"), "dev");
	assert_string_equal(str(claim, "metadata.labels.tier"), "data");
	assert_string_equal(str(claim, "metadata.labels.app"), "nginx");
	assert_string_equal(str(claim, "spec.resources.requests.storage"), "1Gi");
	/* Retain/Retain (the default): nobody owns it */
	assert_null(ynode_path(claim, "metadata.ownerReferences"));

	cleanup_ynode struct ynode *del =
	    set_with(", persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}");
	cleanup_ynode struct ynode *c2 = ssc_new_claim(del, ct, 0);
	assert_int_equal(count_refs(c2, "u-set"), 1);
	const struct ynode *ref = ynode_item(ynode_path(c2, "metadata.ownerReferences"), 0);
	assert_string_equal(str(ref, "kind"), "StatefulSet");
	assert_null(ynode_get(ref, "controller"));
}

static void test_statefulset__claim_owners_by_policy(void **state)
{
	(void)state;
	static const struct {
		const char *policy;
		bool in_range;
		size_t set_refs, pod_refs;
	} cases[] = {
	    {"{whenDeleted: Retain, whenScaled: Retain}", true, 0, 0},
	    {"{whenDeleted: Retain, whenScaled: Retain}", false, 0, 0},
	    {"{whenDeleted: Delete, whenScaled: Retain}", true, 1, 0},
	    {"{whenDeleted: Delete, whenScaled: Retain}", false, 1, 0},
	    {"{whenDeleted: Retain, whenScaled: Delete}", true, 0, 0},
	    {"{whenDeleted: Retain, whenScaled: Delete}", false, 0, 1},
	    {"{whenDeleted: Delete, whenScaled: Delete}", true, 1, 0},
	    {"{whenDeleted: Delete, whenScaled: Delete}", false, 0, 1},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *extra =
		    xasprintf(", persistentVolumeClaimRetentionPolicy: %s", cases[i].policy);
		cleanup_ynode struct ynode *set = set_with(extra);
		/* from a claim with both references and from one with none */
		cleanup_ynode struct ynode *full =
		    y("{metadata: {name: www-web-1, ownerReferences: ["
		      "{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: u-set},"
		      "{apiVersion: v1, kind: Pod, name: web-1, uid: u-pod},"
		      "{apiVersion: v1, kind: ConfigMap, name: other, uid: u-other}]}}");
		cleanup_ynode struct ynode *bare = y("{metadata: {name: www-web-1}}");
		ssc_claim_owners(full, set, "web-1", "u-pod", cases[i].in_range);
		ssc_claim_owners(bare, set, "web-1", "u-pod", cases[i].in_range);
		assert_int_equal(count_refs(full, "u-set"), cases[i].set_refs);
		assert_int_equal(count_refs(full, "u-pod"), cases[i].pod_refs);
		assert_int_equal(count_refs(full, "u-other"), 1);
		assert_int_equal(count_refs(bare, "u-set"), cases[i].set_refs);
		assert_int_equal(count_refs(bare, "u-pod"), cases[i].pod_refs);
		/* again: nothing more to change */
		assert_false(ssc_claim_owners(full, set, "web-1", "u-pod", cases[i].in_range));
		assert_false(ssc_claim_owners(bare, set, "web-1", "u-pod", cases[i].in_range));
	}
}

/* ---- the plan ------------------------------------------------------------- */

/* Slots from a picture: one letter per ordinal from start:
 * '.' missing, 'R' ready (and available) updated, 'r' ready old,
 * 'P' pending (not ready) updated, 'p' pending old, 'T' terminating,
 * 'F' failed, 'W' ready but not available yet (minReadySeconds). */
static size_t slots(const char *pic, long start, struct ssc_slot *out)
{
	size_t n = strlen(pic);
	for (size_t i = 0; i < n; i++) {
		struct ssc_slot *s = &out[i];
		memset(s, 0, sizeof(*s));
		s->ordinal = start + (long)i;
		char c = pic[i];
		if (c == '.')
			continue;
		s->exists = true;
		s->updated = c == 'R' || c == 'P' || c == 'W' || c == 'T' || c == 'F';
		s->ready = c == 'R' || c == 'r' || c == 'W';
		s->available = c == 'R' || c == 'r';
		s->terminating = c == 'T';
		s->failed = c == 'F';
	}
	return n;
}

/* What the plan does, as a picture: 'c' create, 'd' delete, '-' nothing. */
static void acts(const struct ssc_slot *s, size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = s[i].create ? 'c' : s[i].remove ? 'd' : '-';
	buf[n] = 0;
}

static void plan(const char *rep_pic, const char *cond_pic, const struct ssc_policy *p,
		 const char *want_rep, const char *want_cond)
{
	struct ssc_slot rep[32], cond[32];
	size_t nr = slots(rep_pic, 0, rep);
	size_t nc = slots(cond_pic, (long)nr, cond);
	ssc_plan(rep, nr, cond, nc, p);
	char got_r[33], got_c[33];
	acts(rep, nr, got_r);
	acts(cond, nc, got_c);
	if (strcmp(got_r, want_rep) || strcmp(got_c, want_cond))
		print_message("plan %s|%s: got %s|%s, want %s|%s\n", rep_pic, cond_pic, got_r,
			      got_c, want_rep, want_cond);
	assert_string_equal(got_r, want_rep);
	assert_string_equal(got_c, want_cond);
}

static const struct ssc_policy ordered = {.rolling = true, .max_unavailable = 1};
static const struct ssc_policy parallel = {.parallel = true, .rolling = true, .max_unavailable = 1};

static void test_statefulset__plan_ordered_creation(void **state)
{
	(void)state;
	plan("...", "", &ordered, "c--", "");
	plan("P..", "", &ordered, "---", ""); /* web-0 not ready: wait */
	plan("W..", "", &ordered, "---", ""); /* ready, not available yet: wait */
	plan("R..", "", &ordered, "-c-", ""); /* then web-1 */
	plan("RR.", "", &ordered, "--c", "");
	plan("RRR", "", &ordered, "---", "");
	plan("R.R", "", &ordered, "-c-", "");  /* a deleted pod comes back */
	plan("T.R", "", &ordered, "---", "");  /* terminating: wait for it to go */
	plan("RFR", "", &ordered, "-d-", "");  /* failed: deleted, to be recreated */
	plan("...", "", &parallel, "ccc", ""); /* Parallel: all at once */
	plan("P.T", "", &parallel, "-c-", "");
	plan("F.R", "", &parallel, "dc-", "");
}

static void test_statefulset__plan_scale_down(void **state)
{
	(void)state;
	/* from the highest ordinal, one at a time, once it has gone */
	plan("RR", "RRR", &ordered, "--", "--d");
	plan("RR", "RRT", &ordered, "--", "---");
	plan("RR", "RR.", &ordered, "--", "-d-");
	/* nothing goes while a replica is not ready */
	plan("RP", "RR", &ordered, "--", "--");
	/* an unready condemned pod goes only if it is the lowest unready one */
	plan("RR", "RPR", &ordered, "--", "--d");
	plan("RR", "RPP", &ordered, "--", "---");
	plan("RR", "RRP", &ordered, "--", "--d");
	/* Parallel: all of them */
	plan("RR", "RRR", &parallel, "--", "ddd");
	plan("RP", "RTR", &parallel, "--", "d-d");
	/* to zero */
	plan("", "RRR", &ordered, "", "--d");
}

static void test_statefulset__plan_rolling_update(void **state)
{
	(void)state;
	/* highest ordinal first, one at a time, each ready before the next */
	plan("rrr", "", &ordered, "--d", "");
	plan("rr.", "", &ordered, "--c", "");
	plan("rrP", "", &ordered, "---", "");
	plan("rrR", "", &ordered, "-d-", "");
	plan("RRR", "", &ordered, "---", "");
	/* partition 2: ordinals 0 and 1 stay at the old revision */
	struct ssc_policy part = ordered;
	part.partition = 2;
	plan("rrr", "", &part, "--d", "");
	plan("rrR", "", &part, "---", "");
	part.partition = 5;
	plan("rrr", "", &part, "---", "");
	/* maxUnavailable 2: two at a time, counting those unavailable */
	struct ssc_policy mu = parallel;
	mu.max_unavailable = 2;
	plan("rrrr", "", &mu, "--dd", "");
	plan("rrP.", "", &mu, "---c", "");
	plan("rrPR", "", &mu, "-d--", "");
	/* OnDelete: old pods stay */
	struct ssc_policy od = ordered;
	od.rolling = false;
	plan("rrr", "", &od, "---", "");
	plan("r.r", "", &od, "-c-", "");
}

static void test_statefulset__policy_of(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *set =
	    set_with(", podManagementPolicy: Parallel,"
		     " updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2,"
		     " maxUnavailable: 50%}}");
	struct ssc_policy p;
	ssc_policy_of(set, 4, &p);
	assert_true(p.parallel);
	assert_true(p.rolling);
	assert_int_equal(p.partition, 2);
	assert_int_equal(p.max_unavailable, 2);
	cleanup_ynode struct ynode *od = set_with(", updateStrategy: {type: OnDelete}");
	ssc_policy_of(od, 3, &p);
	assert_false(p.parallel);
	assert_false(p.rolling);
	assert_int_equal(p.partition, 0);
	assert_int_equal(p.max_unavailable, 1);
}

/* ---- revisions ---------------------------------------------------------- */

static void test_statefulset__revisions(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *set = set_with("");
	cleanup_ynode struct ynode *data = revision_data(set);
	assert_string_equal(str(data, "spec.template.$patch"), "replace");
	struct ynode *r1 = revision_new(set, "StatefulSet", "h1", 1, ynode_clone(data));
	assert_string_equal(str(r1, "metadata.name"), "web-h1");
	assert_string_equal(str(r1, "metadata.labels." REVISION_HASH_LABEL), "h1");
	assert_string_equal(str(r1, "metadata.labels.app"), "nginx");
	cleanup_ynode struct ynode *tmpl = revision_template(r1);
	assert_null(ynode_get(tmpl, "$patch"));
	assert_true(ynode_equal(tmpl, ynode_path(set, "spec.template")));

	cleanup_ynode struct ynode *other = y("{spec: {template: {metadata: {labels: {v: '2'}}}}}");
	struct ynode *r2 = revision_new(set, "StatefulSet", "h2", 2, revision_data(other));
	struct ynode *r3 = revision_new(set, "StatefulSet", "h3", 3, ynode_clone(data));
	const struct ynode *v[] = {r1, r2, r3};
	struct revision_list list = {.v = xcalloc(3, sizeof(*list.v)), .n = 3, .cap = 3};
	memcpy(list.v, v, sizeof(v));
	const struct ynode *dups[3];
	size_t nd = 0;
	long long max_old = 0;
	const struct ynode *cur = revision_split(&list, data, dups, &nd, &max_old);
	assert_ptr_equal(cur, r3); /* the newest of the equal ones */
	assert_int_equal(nd, 1);
	assert_ptr_equal(dups[0], r1);
	assert_int_equal(list.n, 1);
	assert_ptr_equal(list.v[0], r2);
	assert_int_equal(max_old, 2);
	/* excess: over a limit of 0, the old one goes */
	const struct ynode *gone[3];
	assert_int_equal(revision_excess(&list, 0, NULL, NULL, gone), 1);
	assert_ptr_equal(gone[0], r2);
	assert_int_equal(revision_excess(&list, 1, NULL, NULL, gone), 0);
	free(list.v);
	ynode_free(r1);
	ynode_free(r2);
	ynode_free(r3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_statefulset__ordinals_and_names),
	    cmocka_unit_test(test_statefulset__new_pod),
	    cmocka_unit_test(test_statefulset__new_claim),
	    cmocka_unit_test(test_statefulset__claim_owners_by_policy),
	    cmocka_unit_test(test_statefulset__plan_ordered_creation),
	    cmocka_unit_test(test_statefulset__plan_scale_down),
	    cmocka_unit_test(test_statefulset__plan_rolling_update),
	    cmocka_unit_test(test_statefulset__policy_of),
	    cmocka_unit_test(test_statefulset__revisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
