/* test_ctrl_pvbinder.c: the PersistentVolume binder's matcher
 * (ctrl/pvbinder.c: smallest fit, access modes, class, volumeMode,
 * selector, node affinity, pre-binding both ways, held volumes) and the
 * protection controllers' decisions (ctrl/protection.c). */
#include "testlib.h"

#include "nodeaffinity.h"
#include "protection.h"
#include "pvbinder.h"
#include "util.h"

#define MAXV 8

struct vols {
	struct ynode *objs[MAXV];
	struct pvb_volume v[MAXV];
	size_t n;
};

static void vols_free(struct vols *vs)
{
	for (size_t i = 0; i < vs->n; i++)
		ynode_free(vs->objs[i]);
	vs->n = 0;
}

/* A volume: name, size, class; extra is more YAML under spec (may be ""). */
static void vol(struct vols *vs, const char *name, const char *size, const char *cls,
		const char *extra)
{
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: PersistentVolume\n"
		      "metadata: {name: %s, labels: {tier: %s}}\n"
		      "spec:\n  capacity: {storage: %s}\n"
		      "  accessModes: [ReadWriteOnce, ReadOnlyMany]\n"
		      "  storageClassName: \"%s\"\n"
		      "  volumeMode: Filesystem\n  hostPath: {path: /tmp/%s}\n%s",
		      name, name, size, cls, name, extra);
	vs->objs[vs->n] = y(text);
	assert_true(pvb_volume_parse(vs->objs[vs->n], &vs->v[vs->n]));
	vs->n++;
}

struct claim {
	struct ynode *obj;
	struct pvb_claim c;
};

static void claim(struct claim *cl, const char *size, const char *cls, const char *extra)
{
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: PersistentVolumeClaim\n"
		      "metadata: {name: data, namespace: dev, uid: u-1}\n"
		      "spec:\n  accessModes: [ReadWriteOnce]\n"
		      "  resources: {requests: {storage: %s}}\n"
		      "  storageClassName: \"%s\"\n  volumeMode: Filesystem\n%s",
		      size, cls, extra);
	cl->obj = y(text);
	assert_true(pvb_claim_parse(cl->obj, &cl->c));
}

static void claim_free(struct claim *cl)
{
	selector_free((struct selector *)cl->c.selector);
	ynode_free(cl->obj);
}

static const char *matched(const struct claim *cl, const struct vols *vs,
			   const struct pvb_node *nodes, size_t nn)
{
	const struct pvb_volume *m = pvb_match(&cl->c, vs->v, vs->n, nodes, nn);
	return m ? m->name : NULL;
}

static void test_pvbinder__smallest_fit(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "pv10", "10Gi", "manual", "");
	vol(&vs, "pv1", "1Gi", "manual", "");
	vol(&vs, "pv5", "5Gi", "manual", "");
	vol(&vs, "pv4", "4Gi", "manual", "");
	struct claim cl;
	claim(&cl, "4Gi", "manual", "");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "pv4");
	claim_free(&cl);
	claim(&cl, "4097Mi", "manual", "");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "pv5");
	claim_free(&cl);
	claim(&cl, "11Gi", "manual", "");
	assert_null(matched(&cl, &vs, NULL, 0));
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__equal_sizes_take_the_lower_name(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "pvb", "2Gi", "", "");
	vol(&vs, "pva", "2Gi", "", "");
	struct claim cl;
	claim(&cl, "1Gi", "", "");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "pva");
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__access_modes_class_and_mode(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "fast", "1Gi", "fast", "");
	vol(&vs, "block", "1Gi", "", "");
	vs.v[1].block = true; /* as volumeMode: Block parses */
	struct claim cl;
	/* a class must be equal; "" is no class */
	claim(&cl, "1Gi", "slow", "");
	assert_null(matched(&cl, &vs, NULL, 0));
	claim_free(&cl);
	claim(&cl, "1Gi", "fast", "");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "fast");
	claim_free(&cl);
	/* Filesystem claims never take a Block volume */
	claim(&cl, "1Gi", "", "");
	assert_null(matched(&cl, &vs, NULL, 0));
	claim_free(&cl);
	/* modes: the volume's must include every one of the claim's */
	claim(&cl, "1Gi", "fast", "");
	cl.c.modes = PVB_RWX;
	assert_null(matched(&cl, &vs, NULL, 0));
	cl.c.modes = PVB_RWO | PVB_ROX;
	assert_string_equal(matched(&cl, &vs, NULL, 0), "fast");
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__selector(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "small", "1Gi", "", "");
	vol(&vs, "big", "9Gi", "", "");
	struct claim cl;
	claim(&cl, "1Gi", "", "  selector: {matchLabels: {tier: big}}\n");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "big");
	claim_free(&cl);
	claim(&cl, "1Gi", "",
	      "  selector: {matchExpressions: [{key: tier, operator: NotIn, values: [small]}]}\n");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "big");
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__node_affinity(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "on-a", "1Gi", "",
	    "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: "
	    "[{key: kubernetes.io/hostname, operator: In, values: [a]}]}]}}\n");
	vol(&vs, "on-b", "2Gi", "",
	    "  nodeAffinity: {required: {nodeSelectorTerms: [{matchFields: "
	    "[{key: metadata.name, operator: In, values: [b]}]}]}}\n");
	struct ynode *la = y("{kubernetes.io/hostname: a}");
	struct ynode *lb = y("{kubernetes.io/hostname: b}");
	struct pvb_node nodes[] = {{"a", la}, {"b", lb}};
	struct claim cl;
	claim(&cl, "1Gi", "", "");
	/* no node known: a volume with affinity allows none */
	assert_null(matched(&cl, &vs, NULL, 0));
	assert_string_equal(matched(&cl, &vs, nodes, 2), "on-a");
	assert_string_equal(matched(&cl, &vs, &nodes[1], 1), "on-b");
	/* the claim's node (WaitForFirstConsumer) decides */
	cl.c.node = "b";
	assert_string_equal(matched(&cl, &vs, nodes, 2), "on-b");
	cl.c.node = "c";
	assert_null(matched(&cl, &vs, nodes, 2));
	claim_free(&cl);
	ynode_free(la);
	ynode_free(lb);
	vols_free(&vs);
}

static void test_pvbinder__affinity_operators(void **state)
{
	(void)state;
	struct ynode *labels = y("{zone: z1, disks: '3'}");
	struct pvb_node n = {"a", labels};
	static const struct {
		const char *req;
		bool ok;
	} cases[] = {
	    {"{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [z1]}]}]}",
	     true},
	    {"{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: NotIn, values: "
	     "[z1]}]}]}",
	     false},
	    {"{nodeSelectorTerms: [{matchExpressions: [{key: ssd, operator: DoesNotExist}]}]}",
	     true},
	    {"{nodeSelectorTerms: [{matchExpressions: [{key: ssd, operator: Exists}]}]}", false},
	    {"{nodeSelectorTerms: [{matchExpressions: [{key: disks, operator: Gt, values: "
	     "['2']}]}]}",
	     true},
	    {"{nodeSelectorTerms: [{matchExpressions: [{key: disks, operator: Lt, values: "
	     "['2']}]}]}",
	     false},
	    /* terms are ORed, an empty term matches nothing */
	    {"{nodeSelectorTerms: [{}, {matchExpressions: [{key: zone, operator: Exists}]}]}",
	     true},
	    {"{nodeSelectorTerms: [{}]}", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ynode *r = y(cases[i].req);
		assert_int_equal(nodeaffinity_allows(r, n.name, n.labels), cases[i].ok);
		ynode_free(r);
	}
	ynode_free(labels);
}

static void test_pvbinder__prebound_volume_wins_and_others_are_skipped(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "small", "1Gi", "", "");
	vol(&vs, "mine", "8Gi", "", "  claimRef: {namespace: dev, name: data}\n");
	vol(&vs, "theirs", "1Gi", "", "  claimRef: {namespace: dev, name: other, uid: u-2}\n");
	struct claim cl;
	claim(&cl, "1Gi", "", "");
	/* the volume pre-bound to this claim beats the smaller free one */
	assert_string_equal(matched(&cl, &vs, NULL, 0), "mine");
	claim_free(&cl);
	vols_free(&vs);
	vol(&vs, "stale", "1Gi", "", "  claimRef: {namespace: dev, name: data, uid: old}\n");
	claim(&cl, "1Gi", "", "");
	/* a claimRef to an older claim of the same name is not this claim's */
	assert_null(matched(&cl, &vs, NULL, 0));
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__volume_name_prebinds_the_claim(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "small", "1Gi", "", "");
	vol(&vs, "named", "5Gi", "", "");
	struct claim cl;
	claim(&cl, "1Gi", "", "  volumeName: named\n");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "named");
	claim_free(&cl);
	claim(&cl, "6Gi", "", "  volumeName: named\n");
	assert_null(matched(&cl, &vs, NULL, 0));
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__held_released_failed_and_deleting_are_skipped(void **state)
{
	(void)state;
	struct vols vs = {0};
	vol(&vs, "held", "1Gi", "", "");
	vol(&vs, "released", "1Gi", "", "status: {phase: Released}\n");
	vol(&vs, "failed", "1Gi", "", "status: {phase: Failed}\n");
	vol(&vs, "going", "1Gi", "", "");
	vs.v[3].deleting = true;
	vol(&vs, "free", "2Gi", "", "status: {phase: Available}\n");
	vs.v[0].held_for = "dev/another";
	struct claim cl;
	claim(&cl, "1Gi", "", "");
	assert_string_equal(matched(&cl, &vs, NULL, 0), "free");
	/* held for this very claim: it may take it */
	vs.v[0].held_for = "dev/data";
	assert_string_equal(matched(&cl, &vs, NULL, 0), "held");
	claim_free(&cl);
	vols_free(&vs);
}

static void test_pvbinder__access_modes_parse(void **state)
{
	(void)state;
	struct ynode *m = y("[ReadWriteOnce, ReadWriteMany, Bogus, ReadWriteOncePod]");
	assert_int_equal(pvb_access_modes(m), PVB_RWO | PVB_RWX | PVB_RWOP);
	ynode_free(m);
	assert_int_equal(pvb_access_modes(NULL), 0);
}

static void test_protection__claim_in_use_by_live_pods_only(void **state)
{
	(void)state;
	struct ynode *pod = y("{metadata: {name: p}, spec: {volumes: [{name: d, "
			      "persistentVolumeClaim: {claimName: data}}]}, "
			      "status: {phase: Running}}");
	assert_true(protection_pod_uses_claim(pod, "data"));
	assert_false(protection_pod_uses_claim(pod, "other"));
	ynode_set(ynode_get(pod, "status"), "phase", ynode_new_str("Succeeded"));
	assert_false(protection_pod_uses_claim(pod, "data"));
	ynode_free(pod);
	struct ynode *pv = y("{status: {phase: Bound}}");
	assert_true(protection_volume_in_use(pv));
	ynode_set(ynode_get(pv, "status"), "phase", ynode_new_str("Released"));
	assert_false(protection_volume_in_use(pv));
	ynode_free(pv);
}

static void test_protection__finalizer_removal(void **state)
{
	(void)state;
	struct ynode *o =
	    y("{metadata: {name: c, finalizers: [a/b, kubernetes.io/pvc-protection]}}");
	assert_true(protection_has_finalizer(o, PROTECTION_PVC_FINALIZER));
	assert_int_equal(protection_remove_finalizer(o, PROTECTION_PVC_FINALIZER), 1);
	assert_false(protection_has_finalizer(o, PROTECTION_PVC_FINALIZER));
	assert_true(protection_has_finalizer(o, "a/b"));
	assert_int_equal(protection_remove_finalizer(o, PROTECTION_PVC_FINALIZER), 0);
	assert_int_equal(protection_remove_finalizer(o, "a/b"), 1);
	assert_null(ynode_path(o, "metadata.finalizers"));
	ynode_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pvbinder__smallest_fit),
	    cmocka_unit_test(test_pvbinder__equal_sizes_take_the_lower_name),
	    cmocka_unit_test(test_pvbinder__access_modes_class_and_mode),
	    cmocka_unit_test(test_pvbinder__selector),
	    cmocka_unit_test(test_pvbinder__node_affinity),
	    cmocka_unit_test(test_pvbinder__affinity_operators),
	    cmocka_unit_test(test_pvbinder__prebound_volume_wins_and_others_are_skipped),
	    cmocka_unit_test(test_pvbinder__volume_name_prebinds_the_claim),
	    cmocka_unit_test(test_pvbinder__held_released_failed_and_deleting_are_skipped),
	    cmocka_unit_test(test_pvbinder__access_modes_parse),
	    cmocka_unit_test(test_protection__claim_in_use_by_live_pods_only),
	    cmocka_unit_test(test_protection__finalizer_removal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
