/* test_noded_volumes.c: corral-noded's downwardAPI and projected volumes
 * (noded/volumes.c), each test in its own mkdtemp folder: the files of
 * fieldRef items (name, namespace, uid, labels and annotations as the
 * kubelet writes them, one label), of resourceFieldRef items (divisors,
 * rounding up, a limit not set taken from the node), a changed label
 * rewriting its file; a projected volume's configMap, secret, downwardAPI
 * and serviceAccountToken sources, the token verifying with the public key
 * and naming the pod, kept until 80% of its lifetime and signed again
 * after, no token file on a node without a key, and the refusals. */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "token.h"
#include "util.h"
#include "volumes.h"
#include "ynode.h"

static struct ynode *parse(const char *text)
{
	struct ynode *doc = NULL;
	struct error *err = NULL;
	if (yaml_parse_one(text, strlen(text), &doc, &err) < 0)
		fail_msg("bad test YAML: %s", err->msg);
	return doc;
}

static int lookup(void *data, const char *plural, const char *name, struct ynode **out,
		  struct error **err)
{
	(void)data;
	(void)err;
	if (!strcmp(plural, "configmaps") && !strcmp(name, "kube-root-ca.crt")) {
		*out = parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-root-ca.crt}\n"
			     "data: {ca.crt: \"-----BEGIN CERTIFICATE-----\\n\"}\n");
		return 0;
	}
	if (!strcmp(plural, "secrets") && !strcmp(name, "sec")) {
		*out = parse("apiVersion: v1\nkind: Secret\nmetadata: {name: sec}\n"
			     "data: {password: czNjcmV0}\n");
		return 0;
	}
	if (!strcmp(plural, "serviceaccounts") && !strcmp(name, "default")) {
		*out = parse("apiVersion: v1\nkind: ServiceAccount\n"
			     "metadata: {name: default, namespace: dev, uid: sa-uid-1}\n");
		return 0;
	}
	if (!strcmp(plural, "nodes") && !strcmp(name, "n1")) {
		*out = parse("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
			     "status: {allocatable: {cpu: '4', memory: 8Gi}}\n");
		return 0;
	}
	return -ENOENT;
}

static char tmpdir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_noded_volumes.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* The file's text; none fails the test. */
static char *slurp(const char *vol, const char *file)
{
	cleanup_free char *p = xasprintf("%s/volumes/%s/%s", tmpdir, vol, file);
	char *t = util_read_file(p, NULL);
	if (!t)
		fail_msg("no %s", p);
	return t;
}

static unsigned mode_of(const char *vol, const char *file)
{
	cleanup_free char *p = xasprintf("%s/volumes/%s/%s", tmpdir, vol, file);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return st.st_mode & 07777;
}

static const char *pod_head = "apiVersion: v1\nkind: Pod\n"
			      "metadata:\n  name: web\n  namespace: dev\n  uid: pod-uid-1\n";

static struct ynode *pod_with(const char *labels, const char *volumes)
{
	cleanup_free char *y = xasprintf(
	    "%s  labels: %s\n  annotations: {note: \"say \\\"hi\\\"\\n\"}\n"
	    "spec:\n  nodeName: n1\n  serviceAccountName: default\n"
	    "  containers:\n  - name: c\n    image: busybox\n"
	    "    resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {memory: 128Mi}}\n"
	    "  volumes:\n%s",
	    pod_head, labels, volumes);
	return parse(y);
}

static const char *downward =
    "  - name: d\n    downwardAPI:\n      defaultMode: 420\n      items:\n"
    "      - {path: name, fieldRef: {fieldPath: metadata.name}}\n"
    "      - {path: ns, fieldRef: {fieldPath: metadata.namespace}}\n"
    "      - {path: uid, fieldRef: {fieldPath: metadata.uid}}\n"
    "      - {path: labels, fieldRef: {fieldPath: metadata.labels}, mode: 256}\n"
    "      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}\n"
    "      - {path: app, fieldRef: {fieldPath: \"metadata.labels['app']\"}}\n"
    "      - {path: cpu-req, resourceFieldRef: {containerName: c, resource: requests.cpu}}\n"
    "      - {path: cpu-req-m, resourceFieldRef: {containerName: c, resource: requests.cpu, "
    "divisor: 1m}}\n"
    "      - {path: mem-lim-mi, resourceFieldRef: {containerName: c, resource: "
    "limits.memory, divisor: 1Mi}}\n"
    "      - {path: cpu-lim, resourceFieldRef: {containerName: c, resource: limits.cpu}}\n";

static void test_volumes_downward__fields_and_resources(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *pod = pod_with("{app: web, tier: \"a b\"}", downward);
	struct volumes *v = NULL;
	struct error *err = NULL;
	if (volumes_prepare(pod, tmpdir, lookup, NULL, NULL, &v, &err) < 0)
		fail_msg("%s", err->msg);
	static const struct {
		const char *file, *want;
	} files[] = {
	    {"name", "web"},
	    {"ns", "dev"},
	    {"uid", "pod-uid-1"},
	    {"labels", "app=\"web\"\ntier=\"a b\""},
	    {"annotations", "note=\"say \\\"hi\\\"\\n\""},
	    {"app", "web"},
	    {"cpu-req", "1"},
	    {"cpu-req-m", "250"},
	    {"mem-lim-mi", "128"},
	    {"cpu-lim", "4"}, /* no limit: the node's allocatable */
	};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		cleanup_free char *t = slurp("d", files[i].file);
		if (strcmp(t, files[i].want))
			fail_msg("%s: \"%s\", not \"%s\"", files[i].file, t, files[i].want);
	}
	assert_int_equal(mode_of("d", "labels"), 0400);
	assert_int_equal(mode_of("d", "name"), 0644);
	volumes_free(v);

	/* a label changed: its file follows at the next sync */
	cleanup_ynode struct ynode *pod2 = pod_with("{app: api}", downward);
	assert_int_equal(volumes_prepare(pod2, tmpdir, lookup, NULL, NULL, &v, NULL), 0);
	cleanup_free char *labels = slurp("d", "labels");
	assert_string_equal(labels, "app=\"api\"");
	cleanup_free char *app = slurp("d", "app");
	assert_string_equal(app, "api");
	volumes_free(v);
}

static void test_volumes_downward__refusals(void **state)
{
	(void)state;
	static const struct {
		const char *item, *want;
	} bad[] = {
	    {"{path: x, fieldRef: {fieldPath: spec.nodeName}}", "not supported in a volume"},
	    {"{path: x, resourceFieldRef: {containerName: nope, resource: limits.cpu}}",
	     "no container \"nope\""},
	    {"{path: x, resourceFieldRef: {containerName: c, resource: limits.gpu}}",
	     "unsupported resource"},
	    {"{path: x}", "needs fieldRef or resourceFieldRef"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_free char *vols =
		    xasprintf("  - name: d\n    downwardAPI: {items: [%s]}\n", bad[i].item);
		cleanup_ynode struct ynode *pod = pod_with("{}", vols);
		struct volumes *v = NULL;
		struct error *err = NULL;
		assert_int_equal(volumes_prepare(pod, tmpdir, lookup, NULL, NULL, &v, &err), -1);
		if (!strstr(err->msg, bad[i].want) ||
		    !strstr(err->msg, "MountVolume.SetUp failed for volume \"d\""))
			fail_msg("case %zu: \"%s\"", i, err->msg);
		error_free(err);
	}
}

static void test_volumes_format_map__as_the_kubelet(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *m = parse("{b: \"2\", a: \"x\\ty\", c: \"\"}");
	cleanup_free char *s = volumes_format_map(m);
	assert_string_equal(s, "a=\"x\\ty\"\nb=\"2\"\nc=\"\"");
	cleanup_free char *none = volumes_format_map(NULL);
	assert_string_equal(none, "");
}

static const char *projected =
    "  - name: kube-api-access-abcde\n    projected:\n      defaultMode: 420\n      sources:\n"
    "      - serviceAccountToken: {expirationSeconds: 3607, path: token}\n"
    "      - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}\n"
    "      - downwardAPI: {items: [{path: namespace, fieldRef: {apiVersion: v1, fieldPath: "
    "metadata.namespace}}]}\n"
    "      - secret: {name: sec, items: [{key: password, path: pw, mode: 384}]}\n";

struct keys {
	char *priv, *pub;
};

static struct keys make_keys(void)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);
	assert_non_null(k);
	BIO *a = BIO_new(BIO_s_mem()), *b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(a, k, NULL, NULL, 0, NULL, NULL);
	PEM_write_bio_PUBKEY(b, k);
	char *pa = NULL, *pb = NULL;
	long na = BIO_get_mem_data(a, &pa), nb = BIO_get_mem_data(b, &pb);
	struct keys out = {xmemdup0(pa, (size_t)na), xmemdup0(pb, (size_t)nb)};
	BIO_free(a);
	BIO_free(b);
	EVP_PKEY_free(k);
	return out;
}

static void test_volumes_projected__sources_and_token(void **state)
{
	(void)state;
	struct keys k = make_keys();
	cleanup_error struct error *err = NULL;
	cleanup_token_signer struct token_signer *s =
	    token_signer_from_pem(k.priv, strlen(k.priv), &err);
	assert_non_null(s);
	struct volumes_tokens tk = {.signer = s, .issuer = "https://corral.test", .now = 1000};
	cleanup_ynode struct ynode *pod = pod_with("{app: web}", projected);
	struct volumes *v = NULL;
	if (volumes_prepare(pod, tmpdir, lookup, NULL, &tk, &v, &err) < 0)
		fail_msg("%s", err->msg);
	const char *vol = "kube-api-access-abcde";
	cleanup_free char *ca = slurp(vol, "ca.crt");
	assert_string_equal(ca, "-----BEGIN CERTIFICATE-----\n");
	cleanup_free char *ns = slurp(vol, "namespace");
	assert_string_equal(ns, "dev");
	cleanup_free char *pw = slurp(vol, "pw");
	assert_string_equal(pw, "s3cret");
	assert_int_equal(mode_of(vol, "pw"), 0600);
	assert_int_equal(mode_of(vol, "token"), 0644);
	cleanup_free char *jwt = slurp(vol, "token");
	cleanup_free char *claims = NULL;
	assert_int_equal(token_verify(k.pub, strlen(k.pub), jwt, &claims, &err), 0);
	assert_non_null(strstr(claims, "\"aud\":[\"https://corral.test\"]"));
	assert_non_null(strstr(claims, "\"iss\":\"https://corral.test\""));
	assert_non_null(strstr(claims, "\"exp\":4607,\"iat\":1000,"));
	assert_non_null(strstr(claims, "\"pod\":{\"name\":\"web\",\"uid\":\"pod-uid-1\"}"));
	assert_non_null(
	    strstr(claims, "\"serviceaccount\":{\"name\":\"default\",\"uid\":\"sa-uid-1\"}"));
	assert_non_null(strstr(claims, "\"sub\":\"system:serviceaccount:dev:default\""));
	assert_int_equal(volumes_refresh_at(v), 1000 + 3607 * 8 / 10);
	volumes_free(v);

	/* before 80% of its lifetime the token stays */
	tk.now = 1000 + 2885 - 1;
	assert_int_equal(volumes_prepare(pod, tmpdir, lookup, NULL, &tk, &v, NULL), 0);
	cleanup_free char *same = slurp(vol, "token");
	assert_string_equal(same, jwt);
	assert_int_equal(volumes_refresh_at(v), 1000 + 2885);
	volumes_free(v);
	/* at it, a new one */
	tk.now = 1000 + 2885;
	assert_int_equal(volumes_prepare(pod, tmpdir, lookup, NULL, &tk, &v, NULL), 0);
	cleanup_free char *fresh = slurp(vol, "token");
	assert_string_not_equal(fresh, jwt);
	int64_t iat = 0, exp = 0;
	assert_int_equal(token_times(fresh, &iat, &exp), 0);
	assert_int_equal(iat, 1000 + 2885);
	assert_int_equal(exp, 1000 + 2885 + 3607);
	volumes_free(v);
	free(k.priv);
	free(k.pub);
}

static void test_volumes_projected__no_key_no_token(void **state)
{
	(void)state;
	cleanup_ynode struct ynode *pod = pod_with("{app: web}", projected);
	struct volumes *v = NULL;
	assert_int_equal(volumes_prepare(pod, tmpdir, lookup, NULL, NULL, &v, NULL), 0);
	cleanup_free char *p = xasprintf("%s/volumes/kube-api-access-abcde/token", tmpdir);
	assert_int_not_equal(access(p, F_OK), 0);
	cleanup_free char *ns = slurp("kube-api-access-abcde", "namespace");
	assert_string_equal(ns, "dev");
	assert_int_equal(volumes_refresh_at(v), 0);
	volumes_free(v);
}

static void test_volumes_projected__refusals(void **state)
{
	(void)state;
	struct keys k = make_keys();
	struct error *err = NULL;
	struct token_signer *s = token_signer_from_pem(k.priv, strlen(k.priv), &err);
	struct volumes_tokens tk = {.signer = s, .now = 1000};
	static const struct {
		const char *src, *want;
	} bad[] = {
	    {"{serviceAccountToken: {path: token, expirationSeconds: 60}}", "under 600"},
	    {"{configMap: {name: gone}}", "configmap \"gone\" not found"},
	    {"{secret: {name: gone, optional: true}}", NULL},
	    {"{clusterTrustBundle: {path: x}}", "not one this node mounts"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_free char *vols =
		    xasprintf("  - name: p\n    projected: {sources: [%s]}\n", bad[i].src);
		cleanup_ynode struct ynode *pod = pod_with("{}", vols);
		struct volumes *v = NULL;
		err = NULL;
		int r = volumes_prepare(pod, tmpdir, lookup, NULL, &tk, &v, &err);
		if (!bad[i].want) {
			assert_int_equal(r, 0);
			volumes_free(v);
			continue;
		}
		assert_int_equal(r, -1);
		if (!strstr(err->msg, bad[i].want))
			fail_msg("case %zu: \"%s\"", i, err->msg);
		error_free(err);
	}
	/* a pod whose ServiceAccount is gone gets no token */
	cleanup_free char *y = xasprintf(
	    "%sspec:\n  serviceAccountName: robot\n  containers: [{name: c, image: busybox}]\n"
	    "  volumes:\n  - name: p\n    projected: {sources: [{serviceAccountToken: {path: "
	    "t}}]}\n",
	    pod_head);
	cleanup_ynode struct ynode *pod = parse(y);
	struct volumes *v = NULL;
	err = NULL;
	assert_int_equal(volumes_prepare(pod, tmpdir, lookup, NULL, &tk, &v, &err), -1);
	assert_non_null(strstr(err->msg, "serviceaccount \"robot\" not found"));
	error_free(err);
	token_signer_free(s);
	free(k.priv);
	free(k.pub);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_volumes_downward__fields_and_resources),
	    T(test_volumes_downward__refusals),
	    T(test_volumes_format_map__as_the_kubelet),
	    T(test_volumes_projected__sources_and_token),
	    T(test_volumes_projected__no_key_no_token),
	    T(test_volumes_projected__refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
