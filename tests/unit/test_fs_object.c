/* test_fs_object.c: object_build(), from what a user wrote to what the store
 * keeps. The folder's rules (kind, apiVersion, name from the file name,
 * namespace), optimistic concurrency (resourceVersion, uid), the server's
 * fields carried over from the stored object, generation, the declared
 * form and its commit message, controller-owned objects, the size limit;
 * and the small helpers beside it. Validation itself is test_validate's;
 * here only that its refusals come through. */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "error.h"
#include "kinds.h"
#include "object.h"
#include "util.h"
#include "ynode.h"

/* A pod's manifest in two halves, so that metadata can go between. */
#define POD_META                                                                                   \
	"apiVersion: v1\n"                                                                         \
	"kind: Pod\n"                                                                              \
	"metadata:\n"                                                                              \
	"  name: web\n"                                                                            \
	"  labels:\n"                                                                              \
	"    app: web\n"
#define POD_SPEC(image)                                                                            \
	"spec:\n"                                                                                  \
	"  containers:\n"                                                                          \
	"  - name: web\n"                                                                          \
	"    image: " image "\n"

#define POD_IMAGE(image) POD_META POD_SPEC(image)
#define POD		 POD_IMAGE("nginx:1.25")

#define OWNED_BY(controller)                                                                       \
	"  ownerReferences:\n"                                                                     \
	"  - apiVersion: apps/v1\n"                                                                \
	"    kind: ReplicaSet\n"                                                                   \
	"    name: web-5d4f\n"                                                                     \
	"    uid: 4013c0ef-be33-4dd1-a835-d09be2750abf\n"                                          \
	"    controller: " controller "\n"
#define OWNED_POD(controller) POD_META OWNED_BY(controller) POD_SPEC("nginx:1.25")

#define CONFIG_MAP(data)                                                                           \
	"apiVersion: v1\n"                                                                         \
	"kind: ConfigMap\n"                                                                        \
	"metadata:\n"                                                                              \
	"  name: cfg\n"                                                                            \
	"data:\n" data

static const struct kind_info *kind(const char *plural)
{
	const struct kind_info *k = kinds_by_plural(plural);
	if (!k)
		fail_msg("no kind for folder %s", plural);
	return k;
}

/* Builds text in plural's folder; old is the stored text or NULL. */
static int build(const char *plural, const char *ns, const char *name, const char *text,
		 const char *old, struct object_build *b, struct error **err)
{
	*b = (struct object_build){.kind = kind(plural),
				   .ns = ns,
				   .name = name,
				   .text = text,
				   .len = strlen(text),
				   .old_yaml = old,
				   .old_len = old ? strlen(old) : 0};
	return object_build(b, err);
}

static void build_ok(const char *plural, const char *ns, const char *name, const char *text,
		     const char *old, struct object_build *b)
{
	struct error *err = NULL;
	if (build(plural, ns, name, text, old, b, &err) < 0)
		fail_msg("object_build failed: %s\n--- input\n%s", err->msg, text);
	assert_null(err);
	assert_non_null(b->obj);
}

/* Expects a refusal with status whose message contains every want (a
 * NULL-ended list); checks that nothing was handed out. */
static void build_fails(const char *plural, const char *ns, const char *name, const char *text,
			const char *old, int status, ...)
{
	struct object_build b;
	cleanup_error struct error *err = NULL;
	int r = build(plural, ns, name, text, old, &b, &err);
	if (r >= 0) {
		cleanup_free char *got = yaml_emit(b.obj, NULL);
		object_build_clear(&b);
		fail_msg("object_build accepted:\n%s--- giving\n%s", text, got);
	}
	assert_non_null(err);
	assert_int_equal(r, -status);
	assert_int_equal(err->status, status);
	assert_null(b.obj);
	assert_null(b.declared);
	assert_null(b.message);
	va_list ap;
	va_start(ap, status);
	for (const char *want; (want = va_arg(ap, const char *));)
		if (!strstr(err->msg, want))
			fail_msg("message \"%s\" lacks \"%s\"", err->msg, want);
	va_end(ap);
}

/* What the store would hold after creating text: built, with a
 * resourceVersion. */
static char *stored(const char *plural, const char *ns, const char *name, const char *text,
		    const char *rv)
{
	struct object_build b;
	build_ok(plural, ns, name, text, NULL, &b);
	ynode_set(ynode_get(b.obj, "metadata"), "resourceVersion", ynode_new_str(rv));
	char *yaml = yaml_emit(b.obj, NULL);
	object_build_clear(&b);
	return yaml;
}

static const char *md(const struct object_build *b, const char *field)
{
	cleanup_free char *path = xasprintf("metadata.%s", field);
	return ynode_path_str(b->obj, path);
}

static void assert_uid_form(const char *uid)
{
	assert_non_null(uid);
	assert_int_equal(strlen(uid), 36);
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(uid[i], '-');
		else if (!isxdigit((unsigned char)uid[i]) || isupper((unsigned char)uid[i]))
			fail_msg("uid %s: not lower-case hex at %d", uid, i);
	}
	assert_int_equal(uid[14], '4');		  /* version 4 */
	assert_non_null(strchr("89ab", uid[19])); /* RFC 4122 variant */
}

static void assert_timestamp_form(const char *t)
{
	assert_non_null(t);
	assert_int_equal(strlen(t), 20);
	for (int i = 0; i < 20; i++) {
		const char *want = i == 4 || i == 7	? "-"
				   : i == 10		? "T"
				   : i == 13 || i == 16 ? ":"
				   : i == 19		? "Z"
							: "0123456789";
		if (!strchr(want, t[i]))
			fail_msg("timestamp %s: unexpected '%c' at %d", t, t[i], i);
	}
}

/* ---- creating ---- */

static void test_object__create_fills_the_server_fields(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("pods", "dev", "web", POD, NULL, &b);
	assert_string_equal(md(&b, "name"), "web");
	assert_string_equal(md(&b, "namespace"), "dev");
	assert_uid_form(md(&b, "uid"));
	assert_timestamp_form(md(&b, "creationTimestamp"));
	/* A placeholder the store replaces. */
	assert_string_equal(md(&b, "resourceVersion"), "0");
	long long gen = 0;
	assert_int_equal(ynode_int(ynode_path(b.obj, "metadata.generation"), &gen), 0);
	assert_int_equal(gen, 1);
	assert_non_null(b.declared);
	assert_string_equal(b.message, "create pod dev/web");
	object_build_clear(&b);
}

static void test_object__create_takes_the_name_from_the_file(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("configmaps", "dev", "settings",
		 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\ndata: {k: v}\n",
		 NULL, &b);
	assert_string_equal(md(&b, "name"), "settings");
	assert_string_equal(b.message, "create configmap dev/settings");
	object_build_clear(&b);
	build_ok("configmaps", "dev", "settings", "apiVersion: v1\nkind: ConfigMap\n", NULL, &b);
	assert_string_equal(md(&b, "name"), "settings");
	assert_string_equal(md(&b, "namespace"), "dev");
	object_build_clear(&b);
}

static void test_object__accepts_null_metadata(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("configmaps", "dev", "cfg", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n", NULL,
		 &b);
	assert_string_equal(md(&b, "name"), "cfg");
	object_build_clear(&b);
}

static void test_object__stored_form_is_sorted_and_keeps_the_uid_plain(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("pods", "dev", "web",
		 "spec:\n  containers:\n  - {name: web, image: nginx}\nkind: Pod\n"
		 "metadata: {name: web}\napiVersion: v1\n",
		 NULL, &b);
	static const char *const order[] = {"apiVersion", "kind", "metadata", "spec"};
	assert_int_equal(b.obj->n, ARRAY_SIZE(order));
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		assert_string_equal(ynode_map_key(b.obj, i)->str, order[i]);
	cleanup_free char *text = yaml_emit(b.obj, NULL);
	cleanup_free char *uid_line = xasprintf("\n  uid: %s\n", md(&b, "uid"));
	if (!strstr(text, uid_line))
		fail_msg("no plain uid line in\n%s", text);
	assert_non_null(strstr(text, "\n  resourceVersion: '0'\n"));
	assert_non_null(strstr(text, "\n  generation: 1\n"));
	object_build_clear(&b);
}

static void test_object__ignores_server_fields_in_a_write(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("configmaps", "dev", "cfg",
		 "apiVersion: v1\n"
		 "kind: ConfigMap\n"
		 "metadata:\n"
		 "  name: cfg\n"
		 "  uid: 11111111-2222-4333-8444-555555555555\n"
		 "  creationTimestamp: \"1999-01-01T00:00:00Z\"\n"
		 "  generation: 99\n"
		 "  selfLink: /api/v1/namespaces/dev/configmaps/cfg\n"
		 "  managedFields: [{manager: kubectl}]\n"
		 "  deletionTimestamp: \"2000-01-01T00:00:00Z\"\n"
		 "  deletionGracePeriodSeconds: 30\n"
		 "data: {k: v}\n",
		 NULL, &b);
	assert_uid_form(md(&b, "uid"));
	assert_string_not_equal(md(&b, "uid"), "11111111-2222-4333-8444-555555555555");
	assert_string_not_equal(md(&b, "creationTimestamp"), "1999-01-01T00:00:00Z");
	/* No spec: no generation. */
	assert_null(md(&b, "generation"));
	assert_null(md(&b, "selfLink"));
	assert_null(md(&b, "managedFields"));
	assert_null(md(&b, "deletionTimestamp"));
	assert_null(md(&b, "deletionGracePeriodSeconds"));
	object_build_clear(&b);
}

/* ---- the folder's rules ---- */

static void test_object__refuses_a_name_unlike_the_file(void **state)
{
	(void)state;
	build_fails("pods", "dev", "api", POD, NULL, EINVAL,
		    "metadata.name: Invalid value: \"web\"", "api.yaml", NULL);
	build_fails("configmaps", "dev", "cfg",
		    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [cfg]\n", NULL, EINVAL,
		    "metadata.name", "(not a string)", NULL);
}

static void test_object__refuses_a_namespace_other_than_the_folder(void **state)
{
	(void)state;
	build_fails("configmaps", "dev", "cfg",
		    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: prod\n",
		    NULL, EINVAL, "metadata.namespace: Invalid value: \"prod\"", "\"dev\"", NULL);
	build_fails(
	    "configmaps", "dev", "cfg",
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: {a: b}\n", NULL,
	    EINVAL, "metadata.namespace", NULL);
}

static void test_object__accepts_the_folder_namespace_or_none(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: dev\n",
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace:\n",
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: ~\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct object_build b;
		build_ok("configmaps", "dev", "cfg", texts[i], NULL, &b);
		assert_string_equal(md(&b, "namespace"), "dev");
		object_build_clear(&b);
	}
}

static void test_object__cluster_scoped_objects_refuse_a_namespace(void **state)
{
	(void)state;
	build_fails("namespaces", NULL, "dev",
		    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev\n  namespace: dev\n",
		    NULL, EINVAL,
		    "metadata.namespace: Forbidden: Namespace objects are not namespaced", NULL);
}

static void test_object__cluster_scoped_objects_drop_an_empty_namespace(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev\n  namespace: \"\"\n",
	    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev\n  namespace:\n",
	    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct object_build b;
		build_ok("namespaces", NULL, "dev", texts[i], NULL, &b);
		assert_null(ynode_path(b.obj, "metadata.namespace"));
		assert_string_equal(b.message, "create namespace dev");
		object_build_clear(&b);
	}
}

static void test_object__refuses_another_kind(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
		    NULL, EINVAL, "kind: Invalid value: \"Service\"", "Pod objects", NULL);
	build_fails("pods", "dev", "web", "apiVersion: v1\nkind: pod\nmetadata: {name: web}\n",
		    NULL, EINVAL, "kind: Invalid value: \"pod\"", NULL);
}

static void test_object__refuses_a_missing_kind(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", "apiVersion: v1\nmetadata: {name: web}\n", NULL, EINVAL,
		    "kind: Required value", NULL);
	build_fails("pods", "dev", "web", "apiVersion: v1\nkind: ''\n", NULL, EINVAL,
		    "kind: Required value", NULL);
	build_fails("pods", "dev", "web", "apiVersion: v1\nkind: [Pod]\n", NULL, EINVAL,
		    "kind: Required value", NULL);
}

static void test_object__refuses_a_missing_api_version(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", "kind: Pod\nmetadata: {name: web}\n", NULL, EINVAL,
		    "apiVersion: Required value", "v1", NULL);
}

static void test_object__refuses_an_unsupported_api_version(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", "apiVersion: apps/v1\nkind: Pod\n", NULL, EINVAL,
		    "apiVersion: Unsupported value: \"apps/v1\"", "Pod is served as v1", NULL);
	build_fails("deployments", "dev", "api", "apiVersion: apps/v1beta2\nkind: Deployment\n",
		    NULL, EINVAL, "apiVersion: Unsupported value: \"apps/v1beta2\"", "apps/v1",
		    NULL);
}

static void test_object__accepts_older_api_versions_of_a_kind(void **state)
{
	(void)state;
	static const char *const versions[] = {"apps/v1", "apps/v1beta1", "extensions/v1beta1"};
	for (size_t i = 0; i < ARRAY_SIZE(versions); i++) {
		cleanup_free char *text = xasprintf("apiVersion: %s\n"
						    "kind: Deployment\n"
						    "metadata: {name: api}\n"
						    "spec:\n"
						    "  replicas: 2\n"
						    "  selector:\n"
						    "    matchLabels: {app: api}\n"
						    "  template:\n"
						    "    metadata:\n"
						    "      labels: {app: api}\n"
						    "    spec:\n"
						    "      containers:\n"
						    "      - {name: api, image: api:1}\n",
						    versions[i]);
		struct object_build b;
		build_ok("deployments", "dev", "api", text, NULL, &b);
		/* Kept as written. */
		assert_string_equal(ynode_path_str(b.obj, "apiVersion"), versions[i]);
		assert_string_equal(b.message, "create deployment dev/api");
		object_build_clear(&b);
	}
}

/* ---- what is not an object ---- */

static void test_object__refuses_what_is_not_a_mapping(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", "- a\n- b\n", NULL, EINVAL, "not a mapping", NULL);
	build_fails("pods", "dev", "web", "hello\n", NULL, EINVAL, "not a mapping", NULL);
}

static void test_object__refuses_malformed_yaml(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", "apiVersion: v1\nkind: [Pod\n", NULL, EINVAL, "line",
		    NULL);
	build_fails("pods", "dev", "web", "kind: Pod\nkind: Pod\n", NULL, EINVAL,
		    "duplicate key \"kind\"", NULL);
}

static void test_object__refuses_several_documents_or_none(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", POD "---\n" POD, NULL, EINVAL, "2 documents", NULL);
	build_fails("pods", "dev", "web", "# nothing\n", NULL, EINVAL, "empty", NULL);
	build_fails("pods", "dev", "web", "", NULL, EINVAL, "empty", NULL);
}

static void test_object__refuses_metadata_that_is_not_a_mapping(void **state)
{
	(void)state;
	build_fails("configmaps", "dev", "cfg", "apiVersion: v1\nkind: ConfigMap\nmetadata: cfg\n",
		    NULL, EINVAL, "metadata: Invalid value: must be a mapping", NULL);
	build_fails("configmaps", "dev", "cfg", "apiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n",
		    NULL, EINVAL, "metadata: Invalid value", NULL);
}

/* A document of exactly n bytes: a ConfigMap padded with a comment. */
static char *config_map_of_size(size_t n)
{
	static const char head[] = "apiVersion: v1\nkind: ConfigMap\ndata: {k: v}\n#";
	char *text = xmalloc(n + 1);
	memcpy(text, head, sizeof(head) - 1);
	memset(text + sizeof(head) - 1, 'x', n - sizeof(head));
	text[n - 1] = '\n';
	text[n] = '\0';
	return text;
}

static void test_object__refuses_a_document_over_the_size_limit(void **state)
{
	(void)state;
	cleanup_free char *big = config_map_of_size(OBJECT_MAX_BYTES + 1);
	build_fails("configmaps", "dev", "cfg", big, NULL, EFBIG, "over the limit of 1572864",
		    NULL);
	cleanup_free char *fits = config_map_of_size(OBJECT_MAX_BYTES);
	struct object_build b;
	build_ok("configmaps", "dev", "cfg", fits, NULL, &b);
	object_build_clear(&b);
}

/* Peak resident memory of this process so far, in kB. */
static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A ConfigMap whose data.a is an anchored string of s bytes that
 * data.list aliases n times. */
static char *config_map_aliasing(size_t s, size_t n)
{
	size_t cap = s + 4 * n + 128;
	char *t = xmalloc(cap);
	size_t len = (size_t)snprintf(t, cap, "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: &a ");
	memset(t + len, 'x', s);
	len += s;
	len += (size_t)snprintf(t + len, cap - len, "\nlist: [");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, i ? ", *a" : "*a");
	snprintf(t + len, cap - len, "]\n");
	return t;
}

static void test_object__refuses_an_alias_bomb_before_expanding_it(void **state)
{
	(void)state;
	/* The issue's case: 120 kB written, 500 MB once expanded. */
	cleanup_free char *bomb = config_map_aliasing(100 * 1024, 5000);
	assert_true(strlen(bomb) < 125 * 1024);
	long before = max_rss_kb();
	build_fails("configmaps", "dev", "cfg", bomb, NULL, EINVAL, "line 5: alias *a expands",
		    "more than 4194304 bytes of text (alias expansion limit)", NULL);
	long grown = max_rss_kb() - before;
	if (grown > 32 * 1024)
		fail_msg("refusing the alias bomb took %ld kB more memory", grown);
	/* 1.45 MB written: refused as soon as the second copy goes over. */
	cleanup_free char *big = config_map_aliasing(1400 * 1024, 1000);
	build_fails("configmaps", "dev", "cfg", big, NULL, EINVAL, "alias *a expands", NULL);
	assert_true(max_rss_kb() - before < 32 * 1024);
}

/* A ConfigMap with a field x holding two copies of an s-byte string and
 * an unaliased one of pad bytes (outside data, whose size is limited). */
static char *config_map_copies(size_t s, size_t pad)
{
	size_t cap = s + pad + 128;
	char *t = xmalloc(cap);
	size_t len = (size_t)snprintf(t, cap, "apiVersion: v1\nkind: ConfigMap\nx:\n  a: &a ");
	memset(t + len, 'x', s);
	len += s;
	len += (size_t)snprintf(t + len, cap - len, "\n  b: *a\n  c: ");
	memset(t + len, 'z', pad);
	len += pad;
	snprintf(t + len, cap - len, "\n");
	return t;
}

static size_t built_size(const char *text)
{
	struct object_build b;
	build_ok("configmaps", "dev", "cfg", text, NULL, &b);
	size_t len = 0;
	free(yaml_emit(b.obj, &len));
	object_build_clear(&b);
	return len;
}

static void test_object__refuses_an_object_stored_over_the_size_limit(void **state)
{
	(void)state;
	/* Two copies of 700 kB (within the parser's budget) and a pad: the
	 * stored object is exactly the limit, then a byte over it. */
	size_t s = 700 * 1024;
	cleanup_free char *probe = config_map_copies(s, 1);
	size_t base = built_size(probe);
	assert_true(base < OBJECT_MAX_BYTES);
	size_t pad = 1 + OBJECT_MAX_BYTES - base;
	cleanup_free char *fits = config_map_copies(s, pad);
	assert_true(strlen(fits) < OBJECT_MAX_BYTES);
	assert_int_equal(built_size(fits), OBJECT_MAX_BYTES);
	cleanup_free char *over = config_map_copies(s, pad + 1);
	build_fails("configmaps", "dev", "cfg", over, NULL, EFBIG,
		    "the object as stored would be over the limit of 1572864 bytes", NULL);
	/* The same over an existing object. */
	cleanup_free char *old = stored("configmaps", "dev", "cfg", probe, "3");
	build_fails("configmaps", "dev", "cfg", over, old, EFBIG, "as stored would be over", NULL);
}

static void test_object__refuses_an_object_that_grows_by_indentation(void **state)
{
	(void)state;
	/* 1.2 MB written in flow style, one short line of text a line in
	 * each of 300,000 keys nested 16 deep: the stored object indents
	 * them all. */
	size_t cap = 1536 * 1024;
	cleanup_free char *t = xmalloc(cap);
	size_t len = (size_t)snprintf(t, cap, "apiVersion: v1\nkind: ConfigMap\nx: ");
	for (int i = 0; i < 16; i++)
		len += (size_t)snprintf(t + len, cap - len, "{a: ");
	len += (size_t)snprintf(t + len, cap - len, "\"");
	for (int i = 0; i < 300000 && len + 64 < cap; i++)
		len += (size_t)snprintf(t + len, cap - len, "x\\n");
	len += (size_t)snprintf(t + len, cap - len, "\"");
	for (int i = 0; i < 16; i++)
		len += (size_t)snprintf(t + len, cap - len, "}");
	snprintf(t + len, cap - len, "\n");
	build_fails("configmaps", "dev", "cfg", t, NULL, EFBIG,
		    "the object as stored would be over the limit", NULL);
}

/* Builds len bytes of raw as object_build gets them from a writer whose
 * bytes were copied as a string (cut at the first NUL). */
static void build_fails_with_nul(const char *raw, size_t len, const char *want)
{
	cleanup_free char *text = xstrndup(raw, len);
	struct object_build b = {
	    .kind = kind("pods"), .ns = "dev", .name = "web", .text = text, .len = len};
	cleanup_error struct error *err = NULL;
	assert_int_equal(object_build(&b, &err), -EINVAL);
	assert_non_null(err);
	assert_int_equal(err->status, EINVAL);
	assert_null(b.obj);
	if (!strstr(err->msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err->msg, want);
}

static void test_object__refuses_nul_bytes_saying_where(void **state)
{
	(void)state;
	char raw[sizeof(POD) + 8];
	size_t n = strlen(POD);
	/* At the start, in the middle (line 3), at the end. */
	raw[0] = '\0';
	memcpy(raw + 1, POD, n);
	build_fails_with_nul(raw, n + 1, "line 1 column 1 (byte offset 0): NUL byte");
	memcpy(raw, POD, n);
	const char *l3 = strstr(POD, "metadata:");
	size_t at = (size_t)(l3 - POD) + 4;
	raw[at] = '\0';
	cleanup_free char *want = xasprintf("line 3 column 5 (byte offset %zu): NUL byte", at);
	build_fails_with_nul(raw, n, want);
	memcpy(raw, POD, n);
	raw[n] = '\0';
	build_fails_with_nul(raw, n + 1, "column 1 (byte offset");
	/* UTF-16 (NUL bytes by nature) is refused too: the text may be cut
	 * at its first NUL byte. */
	static const char u16[] = "\xff\xfe"
				  "a\0:\0 \0b\0\n\0";
	build_fails_with_nul(u16, sizeof(u16) - 1, "(byte offset 3): NUL byte");
}

static void drop_refused(void *data, const struct error *e)
{
	char **msg = data;
	free(*msg);
	*msg = xstrdup(e->msg);
}

static void test_object__check_drop_refuses_nul_bytes_and_oversized_documents(void **state)
{
	(void)state;
	static const char nul[] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\0\n";
	cleanup_free char *cut = xstrndup(nul, sizeof(nul) - 1);
	cleanup_error struct error *err = NULL;
	assert_int_equal(object_check_drop("dev", cut, sizeof(nul) - 1, NULL, NULL, &err), -EINVAL);
	assert_non_null(strstr(err->msg, "line 3 column 20 (byte offset 50): NUL byte"));

	/* A document whose stored form is over the limit cannot be filed. */
	cleanup_free char *big = config_map_copies(700 * 1024, 300 * 1024);
	cleanup_free char *named =
	    xasprintf("metadata: {name: big}\n%s---\napiVersion: v1\nkind: ConfigMap\n"
		      "metadata: {name: small}\n",
		      big);
	cleanup_free char *msg = NULL;
	cleanup_error struct error *derr = NULL;
	assert_int_equal(object_check_drop("dev", named, strlen(named), drop_refused, &msg, &derr),
			 1);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "document 1 (ConfigMap big, line 1)"));
	assert_non_null(strstr(msg, "as stored would be over the limit"));
}

/* ---- concurrency ---- */

static void test_object__conflict_on_a_stale_resource_version(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	build_fails("pods", "dev", "web",
		    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  resourceVersion: \"6\"\n"
		    "spec:\n  containers:\n  - {name: web, image: nginx:1.26}\n",
		    old, EAGAIN, "metadata.resourceVersion: Conflict", "stored 7, written 6", NULL);
}

static void test_object__conflict_on_a_resource_version_of_a_missing_object(void **state)
{
	(void)state;
	build_fails("configmaps", "dev", "cfg",
		    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  resourceVersion: \"5\"\n", NULL,
		    EAGAIN, "metadata.resourceVersion: Conflict: \"5\"", "no longer exists", NULL);
}

static void test_object__accepts_the_current_resource_version_or_none(void **state)
{
	(void)state;
	cleanup_free char *old = stored("configmaps", "dev", "cfg", CONFIG_MAP("  a: '1'\n"), "7");
	static const char *const texts[] = {
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  resourceVersion: \"7\"\ndata: {a: "
	    "'2'}\n",
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  resourceVersion: \"\"\ndata: {a: '2'}\n",
	    "apiVersion: v1\nkind: ConfigMap\ndata: {a: '2'}\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct object_build b;
		build_ok("configmaps", "dev", "cfg", texts[i], old, &b);
		assert_string_equal(ynode_path_str(b.obj, "data.a"), "2");
		assert_string_equal(b.message, "update configmap dev/cfg: data.a");
		object_build_clear(&b);
	}
}

static void test_object__conflict_on_another_uid(void **state)
{
	(void)state;
	cleanup_free char *old = stored("configmaps", "dev", "cfg", CONFIG_MAP("  a: '1'\n"), "7");
	cleanup_ynode struct ynode *o = NULL;
	assert_int_equal(yaml_parse_one(old, strlen(old), &o, NULL), 0);
	const char *uid = ynode_path_str(o, "metadata.uid");
	build_fails("configmaps", "dev", "cfg",
		    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
		    "  uid: 11111111-2222-4333-8444-555555555555\n",
		    old, EAGAIN, "metadata.uid: Conflict", "11111111-2222-4333-8444-555555555555",
		    uid, NULL);
	/* The stored uid itself is fine. */
	cleanup_free char *same = xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
					    "  uid: %s\ndata: {a: '1'}\n",
					    uid);
	struct object_build b;
	build_ok("configmaps", "dev", "cfg", same, old, &b);
	assert_string_equal(md(&b, "uid"), uid);
	object_build_clear(&b);
}

static void test_object__refuses_a_stored_object_that_does_not_parse(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web", POD, "kind: [broken\n", EIO,
		    "the stored object does not parse", NULL);
}

/* ---- carried over from the stored object ---- */

static void test_object__update_carries_uid_creation_time_and_status(void **state)
{
	(void)state;
	cleanup_free char *created = stored("pods", "dev", "web", POD, "7");
	/* As the kubelet would have it: a status and a known time. */
	cleanup_ynode struct ynode *o = NULL;
	assert_int_equal(yaml_parse_one(created, strlen(created), &o, NULL), 0);
	ynode_set(ynode_get(o, "metadata"), "creationTimestamp",
		  ynode_new_str("2026-01-01T00:00:00Z"));
	ynode_set(ynode_get_map(o, "status"), "phase", ynode_new_str("Running"));
	cleanup_free char *old = yaml_emit(o, NULL);
	const char *uid = ynode_path_str(o, "metadata.uid");

	struct object_build b;
	build_ok("pods", "dev", "web", POD_IMAGE("nginx:1.26"), old, &b);
	assert_string_equal(md(&b, "uid"), uid);
	assert_string_equal(md(&b, "creationTimestamp"), "2026-01-01T00:00:00Z");
	assert_string_equal(ynode_path_str(b.obj, "status.phase"), "Running");
	assert_string_equal(ynode_path_str(b.obj, "spec.containers[0].image"), "nginx:1.26");
	object_build_clear(&b);
}

static void test_object__written_status_is_kept_and_is_not_declared(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	struct object_build b;
	build_ok("pods", "dev", "web", POD "status:\n  phase: Pending\n", old, &b);
	assert_string_equal(ynode_path_str(b.obj, "status.phase"), "Pending");
	/* A status change is no change of what was declared. */
	assert_null(b.declared);
	assert_null(b.message);
	object_build_clear(&b);
}

/* ---- generation, declared form, message ---- */

static long long generation(const struct object_build *b)
{
	long long gen = -1;
	assert_int_equal(ynode_int(ynode_path(b->obj, "metadata.generation"), &gen), 0);
	return gen;
}

static void test_object__generation_bumps_when_the_spec_changes(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	struct object_build b;
	build_ok("pods", "dev", "web", POD_IMAGE("nginx:1.26"), old, &b);
	assert_int_equal(generation(&b), 2);
	assert_string_equal(b.message, "update pod dev/web: spec.containers[0].image");
	assert_non_null(b.declared);
	assert_non_null(strstr(b.declared, "image: nginx:1.26\n"));

	/* And again from there. */
	ynode_set(ynode_get(b.obj, "metadata"), "resourceVersion", ynode_new_str("8"));
	cleanup_free char *old2 = yaml_emit(b.obj, NULL);
	object_build_clear(&b);
	build_ok("pods", "dev", "web", POD_IMAGE("nginx:1.27"), old2, &b);
	assert_int_equal(generation(&b), 3);
	object_build_clear(&b);
}

static void test_object__generation_stays_on_a_metadata_change(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	struct object_build b;
	build_ok("pods", "dev", "web",
		 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    app: web\n"
		 "    tier: front\nspec:\n  containers:\n  - name: web\n    image: nginx:1.25\n",
		 old, &b);
	assert_int_equal(generation(&b), 1);
	assert_string_equal(b.message, "update pod dev/web: metadata.labels.tier");
	object_build_clear(&b);
}

static void test_object__rewriting_the_same_content_declares_nothing(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	struct object_build b;
	build_ok("pods", "dev", "web", POD, old, &b);
	assert_null(b.declared);
	assert_null(b.message);
	assert_int_equal(generation(&b), 1);
	object_build_clear(&b);
	/* Nor does writing back the stored text itself. */
	build_ok("pods", "dev", "web", old, old, &b);
	assert_null(b.declared);
	assert_null(b.message);
	assert_int_equal(generation(&b), 1);
	object_build_clear(&b);
}

/* `key:` is stored as `key: null`; writing the manifest again is no change. */
static void test_object__reapplying_empty_values_declares_nothing(void **state)
{
	(void)state;
	const char *text = CONFIG_MAP("  a: x\n") "extra:\n";
	cleanup_free char *old = stored("configmaps", "dev", "cfg", text, "3");
	assert_non_null(strstr(old, "extra: null\n"));
	struct object_build b;
	build_ok("configmaps", "dev", "cfg", text, old, &b);
	assert_null(b.declared);
	assert_null(b.message);
	object_build_clear(&b);
}

static void test_object__message_lists_at_most_four_fields(void **state)
{
	(void)state;
	cleanup_free char *old =
	    stored("configmaps", "dev", "cfg",
		   CONFIG_MAP("  a: '1'\n  b: '1'\n  c: '1'\n  d: '1'\n  e: '1'\n  f: '1'\n"), "3");
	struct object_build b;
	build_ok("configmaps", "dev", "cfg",
		 CONFIG_MAP("  a: '2'\n  b: '2'\n  c: '2'\n  d: '2'\n  e: '2'\n  f: '2'\n"), old,
		 &b);
	assert_string_equal(b.message,
			    "update configmap dev/cfg: data.a, data.b, data.c, data.d and 2 more");
	object_build_clear(&b);
}

static void test_object__message_names_added_and_removed_fields(void **state)
{
	(void)state;
	cleanup_free char *old =
	    stored("configmaps", "dev", "cfg", CONFIG_MAP("  a: '1'\n  b: '1'\n"), "3");
	struct object_build b;
	build_ok("configmaps", "dev", "cfg", CONFIG_MAP("  b: '1'\n  z: '1'\n"), old, &b);
	assert_string_equal(b.message, "update configmap dev/cfg: data.a, data.z");
	object_build_clear(&b);
	build_ok("configmaps", "dev", "cfg",
		 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n", old, &b);
	assert_string_equal(b.message, "update configmap dev/cfg: data");
	object_build_clear(&b);
}

static void test_object__declared_form_has_no_status_or_server_fields(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	struct object_build b;
	build_ok("pods", "dev", "web", POD_IMAGE("nginx:1.26") "status:\n  phase: Running\n", old,
		 &b);
	assert_non_null(b.declared);
	cleanup_ynode struct ynode *d = NULL;
	assert_int_equal(yaml_parse_one(b.declared, strlen(b.declared), &d, NULL), 0);
	assert_null(ynode_get(d, "status"));
	static const char *const server[] = {"uid",	   "resourceVersion",
					     "generation", "creationTimestamp",
					     "selfLink",   "managedFields"};
	for (size_t i = 0; i < ARRAY_SIZE(server); i++)
		if (ynode_get(ynode_get(d, "metadata"), server[i]))
			fail_msg("declared form has metadata.%s:\n%s", server[i], b.declared);
	assert_string_equal(ynode_path_str(d, "metadata.name"), "web");
	assert_string_equal(ynode_path_str(d, "metadata.namespace"), "dev");
	assert_string_equal(ynode_path_str(d, "metadata.labels.app"), "web");
	assert_string_equal(ynode_path_str(d, "spec.containers[0].image"), "nginx:1.26");
	object_build_clear(&b);
}

/* ---- controller-owned objects and kinds outside the history ---- */

static void test_object__controller_owned_objects_are_never_declared(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("pods", "dev", "web", OWNED_POD("true"), NULL, &b);
	assert_null(b.declared);
	assert_null(b.message);
	/* Still a full object for the store. */
	assert_uid_form(md(&b, "uid"));
	ynode_set(ynode_get(b.obj, "metadata"), "resourceVersion", ynode_new_str("4"));
	cleanup_free char *old = yaml_emit(b.obj, NULL);
	object_build_clear(&b);

	build_ok("pods", "dev", "web", POD_META OWNED_BY("true") POD_SPEC("nginx:1.26"), old, &b);
	assert_null(b.declared);
	assert_null(b.message);
	assert_int_equal(generation(&b), 2);
	object_build_clear(&b);
}

static void test_object__taken_over_by_a_controller_leaves_the_history(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	struct object_build b;
	build_ok("pods", "dev", "web", OWNED_POD("true"), old, &b);
	assert_null(b.declared);
	assert_string_equal(b.message, "delete pod dev/web");
	object_build_clear(&b);
}

static void test_object__released_by_its_controller_enters_the_history(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", OWNED_POD("true"), "7");
	struct object_build b;
	build_ok("pods", "dev", "web", POD, old, &b);
	assert_non_null(b.declared);
	assert_string_equal(b.message, "create pod dev/web");
	object_build_clear(&b);
}

static void test_object__an_owner_that_is_not_the_controller_is_declared(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("pods", "dev", "web", OWNED_POD("false"), NULL, &b);
	assert_non_null(b.declared);
	assert_non_null(strstr(b.declared, "ownerReferences"));
	assert_string_equal(b.message, "create pod dev/web");
	object_build_clear(&b);
}

static void test_object__kinds_outside_the_history_are_never_declared(void **state)
{
	(void)state;
	const struct kind_info *lease = kind("leases");
	assert_false(lease->history);
	const char *text = "apiVersion: coordination.k8s.io/v1\nkind: Lease\n"
			   "spec:\n  holderIdentity: a\n";
	struct object_build b;
	build_ok("leases", "dev", "lock", text, NULL, &b);
	assert_null(b.declared);
	assert_null(b.message);
	ynode_set(ynode_get(b.obj, "metadata"), "resourceVersion", ynode_new_str("2"));
	cleanup_free char *old = yaml_emit(b.obj, NULL);
	object_build_clear(&b);
	build_ok("leases", "dev", "lock",
		 "apiVersion: coordination.k8s.io/v1\nkind: Lease\nspec:\n  holderIdentity: b\n",
		 old, &b);
	assert_null(b.declared);
	assert_null(b.message);
	assert_int_equal(generation(&b), 2);
	object_build_clear(&b);
}

/* ---- validation comes through ---- */

static void test_object__validation_errors_name_the_field(void **state)
{
	(void)state;
	build_fails("pods", "dev", "web",
		    "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: web\n", NULL,
		    EINVAL, "Pod \"web\" is invalid", "spec.containers[0].image", NULL);
	build_fails("pods", "dev", "web", "apiVersion: v1\nkind: Pod\n", NULL, EINVAL, "spec",
		    NULL);
}

/* ---- helpers beside object_build ---- */

static void test_object__declared_of_a_stored_object(void **state)
{
	(void)state;
	cleanup_free char *old = stored("pods", "dev", "web", POD, "7");
	cleanup_ynode struct ynode *o = NULL;
	assert_int_equal(yaml_parse_one(old, strlen(old), &o, NULL), 0);
	ynode_set(ynode_get_map(o, "status"), "phase", ynode_new_str("Running"));
	cleanup_free char *d = object_declared(kind("pods"), o);
	assert_non_null(d);
	assert_null(strstr(d, "status"));
	assert_null(strstr(d, "uid:"));
	assert_null(strstr(d, "resourceVersion"));
	assert_non_null(strstr(d, "name: web"));

	cleanup_free char *owned = stored("pods", "dev", "web", OWNED_POD("true"), "7");
	cleanup_ynode struct ynode *ow = NULL;
	assert_int_equal(yaml_parse_one(owned, strlen(owned), &ow, NULL), 0);
	assert_null(object_declared(kind("pods"), ow));
	assert_null(object_declared(kind("leases"), o));
}

static void test_object__in_history_knows_kinds_and_owners(void **state)
{
	(void)state;
	cleanup_free char *pod = stored("pods", "dev", "web", POD, "7");
	cleanup_free char *owned = stored("pods", "dev", "web", OWNED_POD("true"), "7");
	assert_true(object_in_history(kind("pods"), pod, strlen(pod)));
	assert_false(object_in_history(kind("pods"), owned, strlen(owned)));
	assert_false(object_in_history(kind("leases"), pod, strlen(pod)));
	assert_false(object_in_history(kind("pods"), NULL, 0));
	assert_false(object_in_history(kind("pods"), "a: [", 4));
}

static void test_object__delete_message_names_kind_and_place(void **state)
{
	(void)state;
	cleanup_free char *pod = object_delete_message(kind("pods"), "dev", "web");
	cleanup_free char *node = object_delete_message(kind("nodes"), NULL, "n1");
	cleanup_free char *pvc =
	    object_delete_message(kind("persistentvolumeclaims"), "dev", "data");
	assert_string_equal(pod, "delete pod dev/web");
	assert_string_equal(node, "delete node n1");
	assert_string_equal(pvc, "delete persistentvolumeclaim dev/data");
}

static void test_object__new_uids_are_random_version_4(void **state)
{
	(void)state;
	char a[37], b[37];
	object_new_uid(a);
	object_new_uid(b);
	assert_uid_form(a);
	assert_uid_form(b);
	assert_string_not_equal(a, b);
}

static void test_object__build_clear_is_idempotent(void **state)
{
	(void)state;
	struct object_build b;
	build_ok("pods", "dev", "web", POD, NULL, &b);
	object_build_clear(&b);
	assert_null(b.obj);
	assert_null(b.declared);
	assert_null(b.message);
	object_build_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_object__create_fills_the_server_fields),
	    cmocka_unit_test(test_object__create_takes_the_name_from_the_file),
	    cmocka_unit_test(test_object__accepts_null_metadata),
	    cmocka_unit_test(test_object__stored_form_is_sorted_and_keeps_the_uid_plain),
	    cmocka_unit_test(test_object__ignores_server_fields_in_a_write),
	    cmocka_unit_test(test_object__refuses_a_name_unlike_the_file),
	    cmocka_unit_test(test_object__refuses_a_namespace_other_than_the_folder),
	    cmocka_unit_test(test_object__accepts_the_folder_namespace_or_none),
	    cmocka_unit_test(test_object__cluster_scoped_objects_refuse_a_namespace),
	    cmocka_unit_test(test_object__cluster_scoped_objects_drop_an_empty_namespace),
	    cmocka_unit_test(test_object__refuses_another_kind),
	    cmocka_unit_test(test_object__refuses_a_missing_kind),
	    cmocka_unit_test(test_object__refuses_a_missing_api_version),
	    cmocka_unit_test(test_object__refuses_an_unsupported_api_version),
	    cmocka_unit_test(test_object__accepts_older_api_versions_of_a_kind),
	    cmocka_unit_test(test_object__refuses_what_is_not_a_mapping),
	    cmocka_unit_test(test_object__refuses_malformed_yaml),
	    cmocka_unit_test(test_object__refuses_several_documents_or_none),
	    cmocka_unit_test(test_object__refuses_metadata_that_is_not_a_mapping),
	    cmocka_unit_test(test_object__refuses_a_document_over_the_size_limit),
	    cmocka_unit_test(test_object__refuses_an_alias_bomb_before_expanding_it),
	    cmocka_unit_test(test_object__refuses_an_object_stored_over_the_size_limit),
	    cmocka_unit_test(test_object__refuses_an_object_that_grows_by_indentation),
	    cmocka_unit_test(test_object__refuses_nul_bytes_saying_where),
	    cmocka_unit_test(test_object__check_drop_refuses_nul_bytes_and_oversized_documents),
	    cmocka_unit_test(test_object__conflict_on_a_stale_resource_version),
	    cmocka_unit_test(test_object__conflict_on_a_resource_version_of_a_missing_object),
	    cmocka_unit_test(test_object__accepts_the_current_resource_version_or_none),
	    cmocka_unit_test(test_object__conflict_on_another_uid),
	    cmocka_unit_test(test_object__refuses_a_stored_object_that_does_not_parse),
	    cmocka_unit_test(test_object__update_carries_uid_creation_time_and_status),
	    cmocka_unit_test(test_object__written_status_is_kept_and_is_not_declared),
	    cmocka_unit_test(test_object__generation_bumps_when_the_spec_changes),
	    cmocka_unit_test(test_object__generation_stays_on_a_metadata_change),
	    cmocka_unit_test(test_object__rewriting_the_same_content_declares_nothing),
	    cmocka_unit_test(test_object__reapplying_empty_values_declares_nothing),
	    cmocka_unit_test(test_object__message_lists_at_most_four_fields),
	    cmocka_unit_test(test_object__message_names_added_and_removed_fields),
	    cmocka_unit_test(test_object__declared_form_has_no_status_or_server_fields),
	    cmocka_unit_test(test_object__controller_owned_objects_are_never_declared),
	    cmocka_unit_test(test_object__taken_over_by_a_controller_leaves_the_history),
	    cmocka_unit_test(test_object__released_by_its_controller_enters_the_history),
	    cmocka_unit_test(test_object__an_owner_that_is_not_the_controller_is_declared),
	    cmocka_unit_test(test_object__kinds_outside_the_history_are_never_declared),
	    cmocka_unit_test(test_object__validation_errors_name_the_field),
	    cmocka_unit_test(test_object__declared_of_a_stored_object),
	    cmocka_unit_test(test_object__in_history_knows_kinds_and_owners),
	    cmocka_unit_test(test_object__delete_message_names_kind_and_place),
	    cmocka_unit_test(test_object__new_uids_are_random_version_4),
	    cmocka_unit_test(test_object__build_clear_is_idempotent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
