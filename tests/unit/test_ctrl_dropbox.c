/* test_ctrl_dropbox.c: where a drop box document goes, how it is applied
 * onto a stored object (JSON merge patch), and a whole drop file filed on
 * a plain folder laid out like the mount (no FUSE, so nothing refuses the
 * file at close): every document that can be filed is, each one that
 * cannot is a Warning event, and the file goes once all were tried. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctrl.h"
#include "dropbox.h"
#include "events.h"
#include "loop.h"
#include "testlib.h"
#include "util.h"
#include "write.h"
#include "ynode.h"

static void target(const char *ns, const char *doc, const char *want)
{
	cleanup_ynode struct ynode *d = y(doc);
	cleanup_error struct error *err = NULL;
	cleanup_free char *got = dropbox_target(ns, d, &err);
	if (!want) {
		assert_null(got);
		assert_non_null(err);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void test_dropbox__targets(void **state)
{
	(void)state;
	target("dev", "{kind: Deployment, metadata: {name: web}}",
	       "namespaces/dev/deployments/web.yaml");
	target(NULL, "{kind: Deployment, metadata: {name: web, namespace: prod}}",
	       "namespaces/prod/deployments/web.yaml");
	target(NULL, "{kind: ConfigMap, metadata: {name: c}}",
	       "namespaces/default/configmaps/c.yaml");
	target(NULL, "{kind: Node, metadata: {name: n1}}", "nodes/n1.yaml");
	target("dev", "{kind: PersistentVolume, metadata: {name: pv}}",
	       "persistentvolumes/pv.yaml");
	target(NULL, "{kind: Namespace, metadata: {name: made}}", "namespaces/made.yaml");
	target(NULL, "{kind: Nope, metadata: {name: x}}", NULL);
	target(NULL, "{kind: Pod, metadata: {}}", NULL);
}

static void merge(const char *stored, const char *patch, const char *want)
{
	cleanup_ynode struct ynode *s = y(stored);
	cleanup_ynode struct ynode *p = y(patch);
	cleanup_ynode struct ynode *w = y(want);
	dropbox_merge(s, p);
	if (!ynode_equal(s, w)) {
		cleanup_free char *got = yaml_emit(s, NULL);
		fail_msg("merged:\n%s", got);
	}
}

static void test_dropbox__written_fields_win_others_stay(void **state)
{
	(void)state;
	merge("{data: {a: '1', b: '1'}, status: {x: 1}}", "{data: {b: '2', c: '3'}}",
	      "{data: {a: '1', b: '2', c: '3'}, status: {x: 1}}");
	/* sequences are replaced whole */
	merge("{spec: {containers: [{name: a}, {name: b}]}}", "{spec: {containers: [{name: c}]}}",
	      "{spec: {containers: [{name: c}]}}");
	/* a mapping replaces a scalar and the other way round */
	merge("{a: 1, b: {c: 1}}", "{a: {x: 1}, b: 2}", "{a: {x: 1}, b: 2}");
}

static void test_dropbox__null_removes(void **state)
{
	(void)state;
	merge("{spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}}",
	      "{spec: {strategy: {type: Recreate, rollingUpdate: null}}}",
	      "{spec: {strategy: {type: Recreate}}}");
	merge("{metadata: {labels: {a: b}}}", "{metadata: {labels: {a: ~}}}",
	      "{metadata: {labels: {}}}");
}

/* ---- a whole drop file ------------------------------------------------------ */

struct box {
	char dir[64];
	struct ctrl c;
	struct ctrl_config cfg;
	struct dropbox *db;
};

static void mkdirs(const char *dir, const char *sub)
{
	cleanup_free char *path = xasprintf("%s/%s", dir, sub);
	assert_int_equal(util_mkdir_p(path, 0755), 0);
}

static void put_file(const char *dir, const char *path, const char *text)
{
	cleanup_free char *full = xasprintf("%s/%s", dir, path);
	FILE *fp = fopen(full, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static bool exists(const char *dir, const char *path)
{
	cleanup_free char *full = xasprintf("%s/%s", dir, path);
	struct stat st;
	return stat(full, &st) == 0;
}

/* The text of every event file of namespace ns, one after the other. */
static char *events_text(const char *dir, const char *ns)
{
	cleanup_free char *edir = xasprintf("%s/namespaces/%s/events", dir, ns);
	char *all = xstrdup("");
	cleanup_dir DIR *d = opendir(edir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		cleanup_free char *path = xasprintf("%s/%s", edir, de->d_name);
		size_t len;
		cleanup_free char *text = util_read_file(path, &len);
		char *more = xasprintf("%s%s\n", all, text ? text : "");
		free(all);
		all = more;
	}
	return all;
}

static void box_start(struct box *b)
{
	memset(b, 0, sizeof(*b));
	strcpy(b->dir, "/tmp/test_ctrl_dropbox.XXXXXX");
	assert_non_null(mkdtemp(b->dir));
	mkdirs(b->dir, "namespaces/dev/configmaps");
	mkdirs(b->dir, "namespaces/dev/events");
	mkdirs(b->dir, "namespaces/default/events");
	b->cfg.controllers = "*";
	b->c.cfg = &b->cfg;
	b->c.mount = b->dir;
	b->c.loop = loop_new(NULL);
	assert_non_null(b->c.loop);
	b->c.writer = writer_new(b->c.loop, b->dir, 2, NULL);
	assert_non_null(b->c.writer);
	b->c.events = events_new(b->c.loop, b->c.writer, NULL, "test", 0);
}

static void box_stop(struct box *b)
{
	writer_drain(b->c.writer);
	dropbox_free(b->db);
	events_free(b->c.events);
	writer_free(b->c.writer);
	loop_free(b->c.loop);
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", b->dir);
	assert_int_equal(system(cmd), 0);
}

struct wanted {
	struct box *b;
	const char *gone; /* a drop file that must be gone */
	const char *ns;	  /* whose events ... */
	const char *say;  /* ... must say this */
};

static bool wanted(const struct wanted *w)
{
	if (exists(w->b->dir, w->gone))
		return false;
	cleanup_free char *ev = events_text(w->b->dir, w->ns);
	return strstr(ev, w->say) != NULL;
}

/* Runs the loop until w holds, or about five seconds passed. */
static void run_until(struct box *b, const struct wanted *w)
{
	for (int i = 0; i < 500 && !wanted(w); i++)
		loop_run_once(b->c.loop, 10, NULL);
}

static void test_dropbox__files_the_good_and_reports_the_rest(void **state)
{
	(void)state;
	struct box b;
	box_start(&b);
	/* The write of document 3 is refused: its file is a folder. */
	mkdirs(b.dir, "namespaces/dev/configmaps/blocked.yaml");
	put_file(b.dir, "namespaces/dev/mixed.yaml",
		 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\ndata: {a: '1'}\n"
		 "---\n"
		 "apiVersion: networking.example.com/v1\nkind: Widget\nmetadata: {name: odd}\n"
		 "---\n"
		 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: blocked}\ndata: {a: '1'}\n"
		 "---\n"
		 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\ndata: {b: '2'}\n");
	cleanup_error struct error *err = NULL;
	b.db = dropbox_new(&b.c, &err);
	assert_non_null(b.db);
	struct wanted w = {.b = &b,
			   .gone = "namespaces/dev/mixed.yaml",
			   .ns = "dev",
			   .say = "document 3 (ConfigMap blocked)"};
	run_until(&b, &w);
	assert_false(exists(b.dir, "namespaces/dev/mixed.yaml"));
	/* Before and after the bad ones, filed. */
	assert_true(exists(b.dir, "namespaces/dev/configmaps/good.yaml"));
	assert_true(exists(b.dir, "namespaces/dev/configmaps/after.yaml"));
	cleanup_ynode struct ynode *after = NULL;
	assert_int_equal(
	    write_read_object(b.dir, "namespaces/dev/configmaps/after.yaml", &after, NULL), 0);
	assert_string_equal(ynode_path_str(after, "data.b"), "2");
	/* Each bad one is a Warning event naming the file, the document's
	 * index, its kind and name, and why. */
	cleanup_free char *ev = events_text(b.dir, "dev");
	assert_non_null(strstr(ev, "reason: FailedApply"));
	assert_non_null(strstr(ev, "type: Warning"));
	assert_non_null(strstr(ev, "drop box namespaces/dev/mixed.yaml, document 2 (Widget odd): "
				   "kind: Unsupported value: \"Widget\""));
	assert_non_null(strstr(ev, "kind: Widget"));
	assert_non_null(strstr(ev, "drop box namespaces/dev/mixed.yaml, document 3 "
				   "(ConfigMap blocked): "));
	assert_null(strstr(ev, "document 1 "));
	assert_null(strstr(ev, "document 4 "));
	box_stop(&b);
}

static void test_dropbox__a_file_of_bad_documents_goes_too(void **state)
{
	(void)state;
	struct box b;
	box_start(&b);
	put_file(b.dir, "lost.yaml",
		 "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: dev}\n"
		 "---\n"
		 "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: dev}\n");
	cleanup_error struct error *err = NULL;
	b.db = dropbox_new(&b.c, &err);
	assert_non_null(b.db);
	struct wanted w = {.b = &b,
			   .gone = "lost.yaml",
			   .ns = "dev",
			   .say = "document 2 (ConfigMap ?): metadata.name: Required value"};
	run_until(&b, &w);
	assert_false(exists(b.dir, "lost.yaml"));
	cleanup_free char *ev = events_text(b.dir, "dev");
	assert_non_null(strstr(ev, "drop box lost.yaml, document 1 (Widget w)"));
	assert_non_null(strstr(ev, "drop box lost.yaml, document 2 (ConfigMap ?)"));
	box_stop(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dropbox__targets),
	    cmocka_unit_test(test_dropbox__written_fields_win_others_stay),
	    cmocka_unit_test(test_dropbox__null_removes),
	    cmocka_unit_test(test_dropbox__files_the_good_and_reports_the_rest),
	    cmocka_unit_test(test_dropbox__a_file_of_bad_documents_goes_too),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
