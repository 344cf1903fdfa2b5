/* test_noded_container.c: what a container runs (command, environment,
 * mounts, security context), images as folders, and the volumes made for a pod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backoff.h"
#include "container.h"
#include "image.h"
#include "net.h"
#include "strv.h"
#include "util.h"
#include "volumes.h"

static struct ynode *parse(const char *text)
{
	struct ynode *n = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &n, NULL), 0);
	return n;
}

/* The objects the lookups find: a ConfigMap and a Secret. */
static const char *cm_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"
			     "data: {greeting: hello, mode: fast}\n";
static const char *sec_yaml = "apiVersion: v1\nkind: Secret\nmetadata: {name: sec}\n"
			      "data: {password: czNjcmV0}\n"; /* s3cret */

static int lookups;

static int lookup(void *data, const char *plural, const char *name, struct ynode **out,
		  struct error **err)
{
	(void)data;
	(void)err;
	lookups++;
	if (strcmp(plural, "configmaps") == 0 && strcmp(name, "cfg") == 0) {
		*out = parse(cm_yaml);
		return 0;
	}
	if (strcmp(plural, "secrets") == 0 && strcmp(name, "sec") == 0) {
		*out = parse(sec_yaml);
		return 0;
	}
	return -ENOENT;
}

static const char *volume(void *data, const char *name)
{
	(void)data;
	if (strcmp(name, "data") == 0)
		return "/var/lib/corral/x/volumes/data";
	return NULL;
}

static const struct container_env ce = {
    .pod_ip = "10.244.0.5",
    .host_ip = "192.0.2.2",
    .lookup = lookup,
    .volume = volume,
};

static const char *pod_yaml = "apiVersion: v1\nkind: Pod\n"
			      "metadata: {name: web, namespace: dev, uid: u-1, labels: {app: w}}\n"
			      "spec: {nodeName: n1, containers: [{name: c, image: busybox}]}\n";

static void image_with(struct image *img, const char *entry, const char *cmd)
{
	*img = (struct image){0};
	img->ref = xstrdup("busybox");
	if (entry)
		strv_add(&img->entrypoint, entry);
	if (cmd)
		strv_add(&img->cmd, cmd);
	strv_add(&img->env, "PATH=/bin");
	strv_add(&img->env, "IMG=1");
}

/* Plans the container given as YAML against an image. */
static int plan(const char *c_yaml, const struct image *img, struct container_plan *out,
		struct error **err)
{
	struct ynode *pod = parse(pod_yaml);
	struct ynode *c = parse(c_yaml);
	int r = container_plan(pod, c, img, &ce, out, err);
	ynode_free(pod);
	ynode_free(c);
	return r;
}

static void assert_argv(const struct strv *v, const char *const *want, size_t n)
{
	assert_int_equal(v->n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(v->v[i], want[i]);
}

static void test_command__kubernetes_rules(void **state)
{
	(void)state;
	struct image img;
	image_with(&img, "/entry", "default-cmd");
	struct container_plan p;
	/* neither: entrypoint + cmd */
	assert_int_equal(plan("{name: c, image: busybox}", &img, &p, NULL), 0);
	assert_argv(&p.argv, (const char *[]){"/entry", "default-cmd"}, 2);
	container_plan_clear(&p);
	/* args only: entrypoint + args */
	assert_int_equal(plan("{name: c, image: busybox, args: [a, b]}", &img, &p, NULL), 0);
	assert_argv(&p.argv, (const char *[]){"/entry", "a", "b"}, 3);
	container_plan_clear(&p);
	/* command only: command, the image's cmd dropped */
	assert_int_equal(plan("{name: c, image: busybox, command: [sh]}", &img, &p, NULL), 0);
	assert_argv(&p.argv, (const char *[]){"sh"}, 1);
	container_plan_clear(&p);
	/* both */
	assert_int_equal(
	    plan("{name: c, image: busybox, command: [sh, -c], args: [echo]}", &img, &p, NULL), 0);
	assert_argv(&p.argv, (const char *[]){"sh", "-c", "echo"}, 3);
	container_plan_clear(&p);
	image_clear(&img);
}

static void test_command__none_at_all_is_create_container_error(void **state)
{
	(void)state;
	struct image img;
	image_with(&img, NULL, NULL);
	struct container_plan p;
	struct error *err = NULL;
	assert_int_equal(plan("{name: c, image: busybox}", &img, &p, &err), -1);
	assert_string_equal(p.reason, "CreateContainerError");
	assert_non_null(strstr(err->msg, "no command"));
	error_free(err);
	image_clear(&img);
}

static void test_env__sources_and_expansion(void **state)
{
	(void)state;
	struct image img;
	image_with(&img, NULL, "sh");
	struct container_plan p;
	struct error *err = NULL;
	int r =
	    plan("name: c\nimage: busybox\n"
		 "envFrom: [{configMapRef: {name: cfg}, prefix: CM_}]\n"
		 "env:\n"
		 "- {name: A, value: x}\n"
		 "- {name: B, value: '$(A)-$(NOPE)-$$(A)'}\n"
		 "- {name: NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n"
		 "- {name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}\n"
		 "- {name: IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}\n"
		 "- {name: HOST, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}\n"
		 "- {name: APP, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['app']\"}}}\n"
		 "- {name: G, valueFrom: {configMapKeyRef: {name: cfg, key: greeting}}}\n"
		 "- {name: P, valueFrom: {secretKeyRef: {name: sec, key: password}}}\n"
		 "- {name: O, valueFrom: {configMapKeyRef: {name: gone, key: k, optional: true}}}\n"
		 "command: [echo, '$(A)']\n",
		 &img, &p, &err);
	assert_int_equal(r, 0);
	assert_string_equal(strv_getenv(&p.env, "IMG"), "1");
	assert_string_equal(strv_getenv(&p.env, "PATH"), "/bin");
	assert_string_equal(strv_getenv(&p.env, "HOSTNAME"), "web");
	assert_string_equal(strv_getenv(&p.env, "CM_greeting"), "hello");
	assert_string_equal(strv_getenv(&p.env, "CM_mode"), "fast");
	assert_string_equal(strv_getenv(&p.env, "B"), "x-$(NOPE)-$(A)");
	assert_string_equal(strv_getenv(&p.env, "NAME"), "web");
	assert_string_equal(strv_getenv(&p.env, "NS"), "dev");
	assert_string_equal(strv_getenv(&p.env, "IP"), "10.244.0.5");
	assert_string_equal(strv_getenv(&p.env, "HOST"), "192.0.2.2");
	assert_string_equal(strv_getenv(&p.env, "APP"), "w");
	assert_string_equal(strv_getenv(&p.env, "G"), "hello");
	assert_string_equal(strv_getenv(&p.env, "P"), "s3cret");
	assert_null(strv_getenv(&p.env, "O"));
	assert_argv(&p.argv, (const char *[]){"echo", "x"}, 2);
	container_plan_clear(&p);
	image_clear(&img);
}

static void test_env__missing_objects_and_keys(void **state)
{
	(void)state;
	struct image img;
	image_with(&img, NULL, "sh");
	static const struct {
		const char *yaml, *want;
	} cases[] = {
	    {"{name: c, env: [{name: X, valueFrom: {configMapKeyRef: {name: gone, key: k}}}]}",
	     "configmap \"gone\" not found"},
	    {"{name: c, env: [{name: X, valueFrom: {secretKeyRef: {name: gone, key: k}}}]}",
	     "secret \"gone\" not found"},
	    {"{name: c, env: [{name: X, valueFrom: {configMapKeyRef: {name: cfg, key: nokey}}}]}",
	     "couldn't find key nokey in ConfigMap cfg"},
	    {"{name: c, env: [{name: X, valueFrom: {fieldRef: {fieldPath: spec.nope}}}]}",
	     "fieldRef spec.nope is not supported"},
	    {"{name: c, envFrom: [{secretRef: {name: gone}}]}", "secret \"gone\" not found"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct container_plan p;
		struct error *err = NULL;
		assert_int_equal(plan(cases[i].yaml, &img, &p, &err), -1);
		assert_string_equal(p.reason, "CreateContainerConfigError");
		if (!strstr(err->msg, cases[i].want))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err->msg,
				 cases[i].want);
		error_free(err);
	}
	image_clear(&img);
}

static void test_mounts__binds_subpaths_and_errors(void **state)
{
	(void)state;
	struct image img;
	image_with(&img, NULL, "sh");
	struct container_plan p;
	assert_int_equal(plan("name: c\nvolumeMounts:\n"
			      "- {name: data, mountPath: /data}\n"
			      "- {name: data, mountPath: /ro, readOnly: true}\n"
			      "- {name: data, mountPath: /sub, subPath: a/b}\n"
			      "workingDir: /work\n",
			      &img, &p, NULL),
			 0);
	assert_argv(&p.binds,
		    (const char *[]){"/var/lib/corral/x/volumes/data:/data",
				     "/var/lib/corral/x/volumes/data/a/b:/sub"},
		    2);
	assert_argv(&p.binds_ro, (const char *[]){"/var/lib/corral/x/volumes/data:/ro"}, 1);
	assert_string_equal(p.working_dir, "/work");
	container_plan_clear(&p);
	static const char *const bad[] = {
	    "{name: c, volumeMounts: [{name: nope, mountPath: /x}]}",
	    "{name: c, volumeMounts: [{name: data, mountPath: relative}]}",
	    "{name: c, volumeMounts: [{name: data, mountPath: /x, subPath: ../../etc}]}",
	    "{name: c, volumeMounts: [{name: data, mountPath: /x, subPath: /abs}]}",
	    "{name: c, volumeMounts: [{name: data, mountPath: '/a:b'}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct error *err = NULL;
		assert_int_equal(plan(bad[i], &img, &p, &err), -1);
		assert_non_null(strstr(err->msg, "volumeMounts[0]"));
		error_free(err);
	}
	image_clear(&img);
}

/* The security context of the container given as YAML in a pod whose
 * spec.securityContext is pod_sc. */
static int security(const char *pod_sc, const char *c_yaml, struct container_security *out,
		    struct error **err)
{
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: dev, uid: u-1}\n"
		      "spec: {securityContext: %s, containers: [{name: c, image: busybox}]}\n",
		      pod_sc);
	struct ynode *pod = parse(text);
	struct ynode *c = parse(c_yaml);
	int r = container_security(pod, c, out, err);
	ynode_free(pod);
	ynode_free(c);
	return r;
}

#define BIT(n) CAPABILITY_BIT(n)

static void test_security__capabilities(void **state)
{
	(void)state;
	struct container_security s;
	/* none asked: containerd's default set without NET_RAW (13) */
	assert_int_equal(security("{}", "{name: c}", &s, NULL), 0);
	assert_true(s.caps == CONTAINER_DEFAULT_CAPS);
	assert_false(s.caps & BIT(13));
	assert_true(s.caps & BIT(0));	/* CHOWN */
	assert_true(s.caps & BIT(29));	/* AUDIT_WRITE */
	assert_false(s.caps & BIT(21)); /* SYS_ADMIN: nspawn's default has it */
	assert_int_equal(s.uid, -1);
	assert_int_equal(s.gid, -1);
	assert_int_equal(s.ngroups, 0);
	assert_false(s.read_only_root);
	assert_false(s.no_new_privs);
	container_security_clear(&s);
	/* add, with or without CAP_, any case */
	assert_int_equal(
	    security("{}",
		     "{name: c, securityContext: {capabilities: {add: [NET_RAW, cap_sys_time]}}}",
		     &s, NULL),
	    0);
	assert_true(s.caps == (CONTAINER_DEFAULT_CAPS | BIT(13) | BIT(25)));
	container_security_clear(&s);
	/* drop wins over add; ALL first, then the names (as containerd) */
	assert_int_equal(security("{}",
				  "{name: c, securityContext: {capabilities: {add: [KILL, CHOWN], "
				  "drop: [ALL]}}}",
				  &s, NULL),
			 0);
	assert_true(s.caps == (BIT(5) | BIT(0)));
	container_security_clear(&s);
	assert_int_equal(security("{}",
				  "{name: c, securityContext: {capabilities: {add: [ALL], drop: "
				  "[NET_RAW, CAP_KILL]}}}",
				  &s, NULL),
			 0);
	assert_true(s.caps == (CAPABILITY_ALL & ~(BIT(13) | BIT(5))));
	container_security_clear(&s);
	assert_int_equal(
	    security("{}",
		     "{name: c, securityContext: {capabilities: {add: [KILL], drop: [KILL]}}}", &s,
		     NULL),
	    0);
	assert_false(s.caps & BIT(5));
	container_security_clear(&s);
	/* an unknown name is an error naming it */
	struct error *err = NULL;
	assert_true(security("{}",
			     "{name: c, securityContext: {capabilities: {drop: [CHOWN, NET_FOO]}}}",
			     &s, &err) < 0);
	assert_non_null(strstr(err->msg, "capabilities.drop[1]: unknown capability \"NET_FOO\""));
	error_free(err);
}

static void test_security__ids_and_flags(void **state)
{
	(void)state;
	struct container_security s;
	/* the pod's ids and groups; the container's ids win */
	assert_int_equal(security("{runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [4, 5]}",
				  "{name: c}", &s, NULL),
			 0);
	assert_int_equal(s.uid, 1000);
	assert_int_equal(s.gid, 3000);
	assert_int_equal(s.ngroups, 2);
	assert_int_equal(s.groups[0], 4);
	assert_int_equal(s.groups[1], 5);
	container_security_clear(&s);
	assert_int_equal(security("{runAsUser: 1000, runAsGroup: 3000}",
				  "{name: c, securityContext: {runAsUser: 2000}}", &s, NULL),
			 0);
	assert_int_equal(s.uid, 2000);
	assert_int_equal(s.gid, 3000);
	container_security_clear(&s);
	/* the container's alone */
	assert_int_equal(security("{}",
				  "{name: c, securityContext: {readOnlyRootFilesystem: true, "
				  "allowPrivilegeEscalation: false, runAsGroup: 0}}",
				  &s, NULL),
			 0);
	assert_true(s.read_only_root);
	assert_true(s.no_new_privs);
	assert_int_equal(s.uid, -1);
	assert_int_equal(s.gid, 0);
	container_security_clear(&s);
	/* readOnlyRootFilesystem and the like are not pod fields */
	assert_int_equal(security("{readOnlyRootFilesystem: true, allowPrivilegeEscalation: false}",
				  "{name: c}", &s, NULL),
			 0);
	assert_false(s.read_only_root);
	assert_false(s.no_new_privs);
	container_security_clear(&s);
	struct error *err = NULL;
	assert_true(security("{runAsUser: -5}", "{name: c}", &s, &err) < 0);
	assert_non_null(strstr(err->msg, "runAsUser: must be between 0 and 2147483647"));
	error_free(err);
	err = NULL;
	assert_true(security("{supplementalGroups: [1, x]}", "{name: c}", &s, &err) < 0);
	assert_non_null(strstr(err->msg, "supplementalGroups[1]"));
	assert_null(s.groups);
	error_free(err);
	err = NULL;
	assert_true(security("{}", "{name: c, securityContext: {privileged: true}}", &s, &err) < 0);
	assert_non_null(strstr(err->msg, "privileged containers are not supported"));
	error_free(err);
}

static void test_security__run_as_non_root(void **state)
{
	(void)state;
	struct container_security s;
	struct error *err = NULL;
	/* the image runs as root (corral's images name no user) */
	assert_true(security("{runAsNonRoot: true}", "{name: c}", &s, &err) < 0);
	assert_string_equal(err->msg, "container has runAsNonRoot and image will run as root "
				      "(pod: \"web_dev(u-1)\", container: c)");
	error_free(err);
	err = NULL;
	assert_true(security("{}", "{name: c, securityContext: {runAsNonRoot: true, runAsUser: 0}}",
			     &s, &err) < 0);
	assert_string_equal(err->msg, "container's runAsUser breaks non-root policy "
				      "(pod: \"web_dev(u-1)\", container: c)");
	error_free(err);
	/* a user other than 0, from the pod or the container, passes */
	assert_int_equal(security("{runAsNonRoot: true, runAsUser: 10}", "{name: c}", &s, NULL), 0);
	container_security_clear(&s);
	assert_int_equal(security("{runAsNonRoot: true, runAsUser: 0}",
				  "{name: c, securityContext: {runAsUser: 7}}", &s, NULL),
			 0);
	container_security_clear(&s);
	/* the container's false overrides the pod's true */
	assert_int_equal(security("{runAsNonRoot: true}",
				  "{name: c, securityContext: {runAsNonRoot: false}}", &s, NULL),
			 0);
	container_security_clear(&s);
}

static void test_security__in_the_plan(void **state)
{
	(void)state;
	struct image img;
	image_with(&img, "/entry", NULL);
	struct container_plan p;
	assert_int_equal(plan("{name: c, image: busybox, securityContext: {runAsUser: 5, "
			      "capabilities: {add: [NET_RAW]}}}",
			      &img, &p, NULL),
			 0);
	assert_int_equal(p.sec.uid, 5);
	assert_true(p.sec.caps & BIT(13));
	container_plan_clear(&p);
	assert_int_equal(p.sec.uid, -1);
	struct error *err = NULL;
	assert_int_equal(
	    plan("{name: c, image: busybox, securityContext: {privileged: true}}", &img, &p, &err),
	    -1);
	assert_string_equal(p.reason, "CreateContainerConfigError");
	error_free(err);
	image_clear(&img);
}

static void test_security__passwd_gid(void **state)
{
	(void)state;
	const char *pw = "root:x:0:0:root:/root:/bin/sh\n"
			 "broken line\n"
			 "www:x:33:44:www:/var/www:/bin/false\n"
			 "odd:x:1000x:5:::\n"
			 "last:x:1001:1002::/:";
	assert_int_equal(container_passwd_gid(pw, 0), 0);
	assert_int_equal(container_passwd_gid(pw, 33), 44);
	assert_int_equal(container_passwd_gid(pw, 1001), 1002);
	assert_int_equal(container_passwd_gid(pw, 1000), 0); /* not a number: not that user */
	assert_int_equal(container_passwd_gid(pw, 12345), 0);
	assert_int_equal(container_passwd_gid(NULL, 33), 0);
	assert_int_equal(container_passwd_gid("", 33), 0);
}

#undef BIT

static void test_expand__edge_cases(void **state)
{
	(void)state;
	struct strv env = {0};
	strv_setenv(&env, "A", "1");
	strv_setenv(&env, "A", "2"); /* replaced */
	assert_int_equal(env.n, 1);
	static const char *const cases[][2] = {
	    {"$(A)", "2"},     {"$$(A)", "$(A)"}, {"$(A", "$(A"}, {"$", "$"},
	    {"a$(A)b", "a2b"}, {"$(B)", "$(B)"},  {"$$$$", "$$"}, {"", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = container_expand(cases[i][0], &env);
		assert_string_equal(got, cases[i][1]);
		free(got);
	}
	strv_clear(&env);
}

/* ---- images ---------------------------------------------------------------- */

static char tmpdir[] = "/tmp/corral-image-test.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_image__references_and_config(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	char *p = xasprintf("%s/busybox", tmpdir);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/busybox_1.36", tmpdir);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/busybox_1.36.yaml", tmpdir);
	write_file(p, "Entrypoint: [/bin/sh, -c]\nCmd: [echo hi]\nEnv: [A=1]\nWorkingDir: /w\n");
	free(p);
	struct image img;
	assert_int_equal(image_resolve(tmpdir, "busybox", &img, NULL), 0);
	assert_non_null(strstr(img.root, "/busybox"));
	assert_int_equal(img.entrypoint.n, 0);
	image_clear(&img);
	assert_int_equal(
	    image_resolve(tmpdir, "docker.io/library/busybox:1.36@sha256:ab", &img, NULL), 0);
	assert_non_null(strstr(img.root, "busybox_1.36"));
	assert_int_equal(img.entrypoint.n, 2);
	assert_string_equal(img.cmd.v[0], "echo hi");
	assert_string_equal(img.env.v[0], "A=1");
	assert_string_equal(img.working_dir, "/w");
	image_clear(&img);
	/* an unknown tag falls back to the plain folder */
	assert_int_equal(image_resolve(tmpdir, "busybox:9", &img, NULL), 0);
	image_clear(&img);
	struct error *err = NULL;
	assert_int_equal(image_resolve(tmpdir, "nginx", &img, &err), -ENOENT);
	assert_non_null(strstr(err->msg, "image \"nginx\" is not on this node"));
	error_free(err);
	err = NULL;
	static const char *const bad[] = {"",	  "busybox:", "Busybox",
					  "a/..", "bad name", "busy!box"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(image_resolve(tmpdir, bad[i], &img, &err), -EINVAL);
		error_free(err);
		err = NULL;
	}
	p = xasprintf("%s/busybox.yaml", tmpdir);
	write_file(p, "entrypoint: notalist\n");
	free(p);
	assert_int_equal(image_resolve(tmpdir, "busybox", &img, &err), -EINVAL);
	assert_non_null(strstr(err->msg, "entrypoint must be a list"));
	error_free(err);
}

/* ---- volumes ---------------------------------------------------------------- */

static void test_volumes__projected_files_and_checks(void **state)
{
	(void)state;
	char *dir = xasprintf("%s/pod", tmpdir);
	mkdir(dir, 0755);
	char *host = xasprintf("%s/hostdir", tmpdir);
	mkdir(host, 0755);
	char *yaml = xasprintf(
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: dev}\nspec:\n"
	    "  volumes:\n"
	    "  - {name: e, emptyDir: {}}\n"
	    "  - {name: c, configMap: {name: cfg, items: [{key: greeting, path: sub/g.txt}]}}\n"
	    "  - {name: s, secret: {secretName: sec, defaultMode: 256}}\n"
	    "  - {name: h, hostPath: {path: %s, type: Directory}}\n",
	    host);
	struct ynode *pod = parse(yaml);
	struct volumes *v = NULL;
	assert_int_equal(volumes_prepare(pod, dir, lookup, NULL, NULL, &v, NULL), 0);
	char *e = xasprintf("%s/volumes/e", dir);
	assert_string_equal(volumes_path(v, "e"), e);
	assert_string_equal(volumes_path(v, "h"), host);
	assert_null(volumes_path(v, "nope"));
	char *g = xasprintf("%s/volumes/c/sub/g.txt", dir);
	char *text = util_read_file(g, NULL);
	assert_string_equal(text, "hello");
	free(text);
	char *mode = xasprintf("%s/volumes/c/mode", dir);
	assert_int_not_equal(access(mode, F_OK), 0); /* not among the items */
	char *pw = xasprintf("%s/volumes/s/password", dir);
	text = util_read_file(pw, NULL);
	assert_string_equal(text, "s3cret");
	free(text);
	struct stat st;
	assert_int_equal(stat(pw, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0400);
	volumes_free(v);
	ynode_free(pod);

	static const struct {
		const char *vol, *want;
	} bad[] = {
	    {"{name: h, hostPath: {path: /no/such/dir, type: Directory}}", "does not exist"},
	    {"{name: h, hostPath: {path: /etc/hostname, type: Directory}}", "is not a Directory"},
	    {"{name: c, configMap: {name: gone}}", "configmap \"gone\" not found"},
	    {"{name: p, persistentVolumeClaim: {claimName: gone}}", "not found"},
	    {"{name: d, gitRepo: {repository: x}}", "not one this node mounts"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *y = xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: w}\n"
				    "spec: {volumes: [%s]}\n",
				    bad[i].vol);
		pod = parse(y);
		struct error *err = NULL;
		v = NULL;
		assert_int_equal(volumes_prepare(pod, dir, lookup, NULL, NULL, &v, &err), -1);
		assert_null(v);
		assert_non_null(strstr(err->msg, "MountVolume.SetUp failed for volume"));
		if (!strstr(err->msg, bad[i].want))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err->msg, bad[i].want);
		error_free(err);
		ynode_free(pod);
		free(y);
	}
	/* an optional configMap that is missing is an empty folder */
	pod = parse("apiVersion: v1\nkind: Pod\nmetadata: {name: w}\n"
		    "spec: {volumes: [{name: o, configMap: {name: gone, optional: true}}]}\n");
	assert_int_equal(volumes_prepare(pod, dir, lookup, NULL, NULL, &v, NULL), 0);
	volumes_free(v);
	ynode_free(pod);
	char *cmd = xasprintf("rm -rf %s", tmpdir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
	free(host);
	free(yaml);
	free(e);
	free(g);
	free(mode);
	free(pw);
}

static void test_net__names_fit_interfaces(void **state)
{
	(void)state;
	char h[9], veth[NET_IFNAME_SIZE];
	net_hash("", h);
	assert_string_equal(h, "811c9dc5"); /* FNV-1a's offset basis */
	net_hash("a", h);
	assert_string_equal(h, "e40c292c");
	net_veth_name("0b7d6a1c-1f5e-4a7e-9c57-2f1d9c3b1a00", veth);
	assert_int_equal(strlen(veth), 11);
	assert_memory_equal(veth, "crv", 3);
}

static void test_base64__decodes_and_refuses(void **state)
{
	(void)state;
	size_t len;
	char *s = util_base64_decode("aGVsbG8=", &len, NULL);
	assert_string_equal(s, "hello");
	assert_int_equal(len, 5);
	free(s);
	s = util_base64_decode("aGVs\nbG8h", &len, NULL);
	assert_string_equal(s, "hello!");
	free(s);
	size_t bad = 99;
	assert_null(util_base64_decode("a*==", NULL, &bad));
	assert_int_equal(bad, 1);
	assert_null(util_base64_decode("aGVsbG8=x", NULL, &bad));
	assert_int_equal(bad, 8);
	assert_null(util_base64_decode("aGVsbG8", NULL, &bad)); /* a group short */
	assert_int_equal(bad, 7);
	assert_null(util_base64_decode("a===", NULL, &bad)); /* padding too early */
	assert_int_equal(bad, 1);
	s = util_base64_decode("", &len, NULL);
	assert_int_equal(len, 0);
	free(s);
}

static void test_backoff__doubles_caps_and_resets(void **state)
{
	(void)state;
	uint64_t b = 0;
	assert_int_equal(backoff_next(&b, 0), 0); /* the first restart at once */
	assert_int_equal(backoff_next(&b, 1), 10000);
	assert_int_equal(backoff_next(&b, 1), 20000);
	assert_int_equal(backoff_next(&b, 1), 40000);
	assert_int_equal(backoff_next(&b, 1), 80000);
	assert_int_equal(backoff_next(&b, 1), 160000);
	assert_int_equal(backoff_next(&b, 1), 300000); /* capped at 5 min */
	assert_int_equal(backoff_next(&b, 599), 300000);
	assert_int_equal(backoff_next(&b, 600), 0); /* ten minutes up: over */
	assert_int_equal(backoff_next(&b, 3), 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_command__kubernetes_rules),
	    cmocka_unit_test(test_command__none_at_all_is_create_container_error),
	    cmocka_unit_test(test_env__sources_and_expansion),
	    cmocka_unit_test(test_env__missing_objects_and_keys),
	    cmocka_unit_test(test_mounts__binds_subpaths_and_errors),
	    cmocka_unit_test(test_security__capabilities),
	    cmocka_unit_test(test_security__ids_and_flags),
	    cmocka_unit_test(test_security__run_as_non_root),
	    cmocka_unit_test(test_security__in_the_plan),
	    cmocka_unit_test(test_security__passwd_gid),
	    cmocka_unit_test(test_expand__edge_cases),
	    cmocka_unit_test(test_image__references_and_config),
	    cmocka_unit_test(test_volumes__projected_files_and_checks),
	    cmocka_unit_test(test_net__names_fit_interfaces),
	    cmocka_unit_test(test_base64__decodes_and_refuses),
	    cmocka_unit_test(test_backoff__doubles_caps_and_resets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
