/* test_fs_store_etcd.c: the etcd store. Without an etcd: the key layout,
 * the value encoding and its revision <-> resourceVersion mapping, the
 * member list. With one (etcd on PATH; a member started on loopback, on a
 * port below the ephemeral range, its data in a mkdtemp folder, killed and
 * removed at the end): put, get, conflicts, delete, the outbox, and a
 * second store's watch seeing the first's changes but not its own, and
 * listing everything again when compacted past; a write whose answer was
 * lost reported by its own store's watch; claims taken by one store
 * refused to another; reads refused past the staleness bound while the
 * member is stopped (SIGSTOP) and served again once it answers; the
 * history's lease renewed with no history writer asking; a snapshot at
 * one revision and the outbox after it, which a replica counted in keeps.
 * Every wait is
 * bounded. */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "error.h"
#include "loop.h"
#include "snapshot.h"
#include "store.h"
#include "store_etcd.h"
#include "util.h"
#include "ynode.h"

/* ---- without etcd ---- */

static void test_store_etcd__keys_live_under_one_prefix_per_space(void **state)
{
	(void)state;
	cleanup_free char *o = store_etcd_key(STORE_ETCD_OBJECT, "namespaces/dev/pods/web");
	cleanup_free char *d = store_etcd_key(STORE_ETCD_DECL, "nodes/n1");
	cleanup_free char *h = store_etcd_key(STORE_ETCD_OUTBOX, NULL);
	cleanup_free char *r = store_etcd_key(STORE_ETCD_REPLICA, "a");
	assert_string_equal(o, "/corral/o/namespaces/dev/pods/web");
	assert_string_equal(d, "/corral/d/nodes/n1");
	assert_string_equal(h, "/corral/h/");
	assert_string_equal(r, "/corral/r/a");
}

static void test_store_etcd__range_end_covers_exactly_the_prefix(void **state)
{
	(void)state;
	cleanup_free char *end = store_etcd_range_end("/corral/o/");
	assert_string_equal(end, "/corral/o0");
	assert_true(strcmp("/corral/o/zzz", end) < 0);
	assert_true(strcmp("/corral/p", end) > 0);
}

static char *emit_with_mark(const char *text)
{
	struct ynode *obj = NULL;
	assert_int_equal(yaml_parse_one(text, strlen(text), &obj, NULL), 0);
	ynode_set(ynode_get_map(obj, "metadata"), "resourceVersion",
		  ynode_new_str(STORE_ETCD_RV_MARK));
	size_t len;
	char *yaml = yaml_emit(obj, &len);
	ynode_free(obj);
	return yaml;
}

static void test_store_etcd__resource_version_is_the_revision_read(void **state)
{
	(void)state;
	cleanup_free char *yaml = emit_with_mark("apiVersion: v1\nkind: ConfigMap\n"
						 "metadata:\n  name: c1\ndata:\n  a: '1'\n");
	size_t vlen;
	cleanup_free char *v = store_etcd_encode_value(1234, yaml, strlen(yaml), &vlen);
	struct store_record rec;
	assert_int_equal(store_etcd_decode_value(v, vlen, 42, &rec), 0);
	assert_int_equal(rec.rv, 42);
	assert_int_equal(rec.mtime_ns, 1234);
	assert_non_null(strstr(rec.yaml, "\n  resourceVersion: '42'\n"));
	assert_null(strstr(rec.yaml, STORE_ETCD_RV_MARK));
	assert_int_equal(rec.len, strlen(rec.yaml));
	store_record_clear(&rec);
	/* The same value read at another revision says that one. */
	assert_int_equal(store_etcd_decode_value(v, vlen, 18446744073709551614ULL, &rec), 0);
	assert_non_null(strstr(rec.yaml, "resourceVersion: '18446744073709551614'"));
	store_record_clear(&rec);
}

static void test_store_etcd__a_mark_elsewhere_in_the_object_is_left_alone(void **state)
{
	(void)state;
	/* spec's own resourceVersion, with the mark's digits, comes first. */
	cleanup_free char *yaml = emit_with_mark("apiVersion: v1\nkind: ConfigMap\n"
						 "data:\n  resourceVersion: '" STORE_ETCD_RV_MARK
						 "'\nmetadata:\n  name: c1\n");
	size_t vlen;
	cleanup_free char *v = store_etcd_encode_value(1, yaml, strlen(yaml), &vlen);
	struct store_record rec;
	assert_int_equal(store_etcd_decode_value(v, vlen, 7, &rec), 0);
	assert_non_null(strstr(rec.yaml, "data:\n  resourceVersion: '" STORE_ETCD_RV_MARK "'"));
	assert_non_null(strstr(rec.yaml, "metadata:\n  name: c1\n  resourceVersion: '7'"));
	store_record_clear(&rec);
}

static void test_store_etcd__a_value_not_ours_is_refused(void **state)
{
	(void)state;
	struct store_record rec;
	assert_int_equal(store_etcd_decode_value("hello\n", 6, 1, &rec), -EINVAL);
	assert_int_equal(store_etcd_decode_value("corral1 x\n", 10, 1, &rec), -EINVAL);
	assert_int_equal(store_etcd_decode_value("no newline", 10, 1, &rec), -EINVAL);
}

static void test_store_etcd__a_text_without_metadata_keeps_its_bytes(void **state)
{
	(void)state;
	size_t vlen;
	cleanup_free char *v = store_etcd_encode_value(5, "a: 1\n", 5, &vlen);
	struct store_record rec;
	assert_int_equal(store_etcd_decode_value(v, vlen, 9, &rec), 0);
	assert_string_equal(rec.yaml, "a: 1\n");
	store_record_clear(&rec);
}

static void test_store_etcd__members_are_host_port_pairs(void **state)
{
	(void)state;
	char **eps = NULL;
	size_t n = 0;
	struct error *err = NULL;
	assert_int_equal(store_etcd_parse_endpoints("127.0.0.1:2379,h2:22379", &eps, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(eps[0], "127.0.0.1:2379");
	assert_string_equal(eps[1], "h2:22379");
	for (size_t i = 0; i < n; i++)
		free(eps[i]);
	free(eps);
	const char *bad[] = {"",	"host",	 "host:",      ":2379", "h:0",
			     "h:70000", "h:12x", "http://h:1", "h:1/x"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_true(store_etcd_parse_endpoints(bad[i], &eps, &n, &err) < 0);
		assert_int_equal(err->status, EINVAL);
		assert_null(eps);
		error_free(err);
		err = NULL;
	}
}

/* ---- with a real etcd on loopback ---- */

struct etcd {
	pid_t pid;
	char dir[64];
	char url[64];
};

static struct etcd etcd_member = {.pid = -1};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static bool etcd_healthy(const char *host_port)
{
	cleanup_free char *cmd =
	    xasprintf("curl -sf -m 1 http://%s/health >/dev/null 2>&1", host_port);
	return system(cmd) == 0;
}

static bool port_free(int port)
{
	cleanup_free char *cmd =
	    xasprintf("ss -Htln 'sport = :%d' 2>/dev/null | grep -q . && exit 1; exit 0", port);
	return system(cmd) == 0;
}

static int etcd_start(void **state)
{
	(void)state;
	/* A test that cannot run fails: scripts/deps.sh installs etcd. */
	if (system("command -v etcd >/dev/null 2>&1") != 0) {
		fprintf(stderr, "no etcd in PATH (apt-get install etcd-server)\n");
		return -1;
	}
	strcpy(etcd_member.dir, "/tmp/corral-etcd-test.XXXXXX");
	if (!mkdtemp(etcd_member.dir))
		return -1;
	/* Below the ephemeral range (32768 on), where no redial takes it. */
	int port = 0;
	for (int tries = 0; tries < 50 && !port; tries++) {
		int p = 20000 + (int)((getpid() * 7 + tries * 131) % 6000) * 2;
		if (port_free(p) && port_free(p + 1))
			port = p;
	}
	if (!port)
		return -1;
	snprintf(etcd_member.url, sizeof(etcd_member.url), "127.0.0.1:%d", port);
	pid_t pid = fork();
	if (pid == 0) {
		char data[96], client[64], peer[64], cluster[96];
		snprintf(data, sizeof(data), "%s/data", etcd_member.dir);
		snprintf(client, sizeof(client), "http://127.0.0.1:%d", port);
		snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", port + 1);
		snprintf(cluster, sizeof(cluster), "t=%s", peer);
		/* Gone with this test, even if it crashes. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execlp("etcd", "etcd", "--name", "t", "--data-dir", data, "--listen-client-urls",
		       client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
		       "--initial-advertise-peer-urls", peer, "--initial-cluster", cluster,
		       (char *)NULL);
		_exit(127);
	}
	etcd_member.pid = pid;
	for (int i = 0; i < 200; i++) { /* 20 s at most */
		if (etcd_healthy(etcd_member.url))
			return 0;
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int etcd_stop(void **state)
{
	(void)state;
	if (etcd_member.pid > 0) {
		kill(etcd_member.pid, SIGKILL);
		waitpid(etcd_member.pid, NULL, 0);
	}
	if (etcd_member.dir[0])
		nftw(etcd_member.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static struct store *open_store(void)
{
	if (etcd_member.pid <= 0)
		fail_msg("no etcd member");
	cleanup_free char *where = xasprintf("etcd://%s", etcd_member.url);
	struct store *s = NULL;
	struct error *err = NULL;
	if (store_open(where, &s, &err) < 0)
		fail_msg("open: %s", err->msg);
	return s;
}

static struct ynode *config_map(const char *name, const char *value)
{
	cleanup_free char *text =
	    xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: dev\n"
		      "data:\n  value: \"%s\"\n",
		      name, value);
	struct ynode *obj = NULL;
	if (yaml_parse_one(text, strlen(text), &obj, NULL) < 0)
		abort();
	return obj;
}

static int apply(struct store *s, const char *key, struct ynode *obj, uint64_t expect,
		 const char *history, uint64_t *rv)
{
	struct store_change c = {.key = key,
				 .obj = obj,
				 .expect_rv = expect,
				 .history_path = history,
				 .history_yaml = obj && history ? "kind: ConfigMap\n" : NULL,
				 .message = "m",
				 .decl_changed = true};
	struct error *err = NULL;
	int r = store_apply(s, &c, &err);
	int status = r < 0 ? err->status : 0;
	error_free(err);
	if (rv)
		*rv = c.rv;
	free(c.yaml);
	ynode_free(obj);
	return r < 0 ? -status : 0;
}

static void test_store_etcd_live__put_get_and_resource_version(void **state)
{
	(void)state;
	struct store *s = open_store();
	uint64_t rv = 0;
	assert_int_equal(
	    apply(s, "namespaces/dev/configmaps/a", config_map("a", "1"), 0, NULL, &rv), 0);
	assert_true(rv > 0);
	struct store_record rec = {0};
	assert_int_equal(store_get(s, "namespaces/dev/configmaps/a", &rec, NULL), 0);
	assert_int_equal(rec.rv, rv);
	assert_int_equal(rec.decl_rv, rv);
	cleanup_free char *want = xasprintf("resourceVersion: '%llu'", (unsigned long long)rv);
	assert_non_null(strstr(rec.yaml, want));
	store_record_clear(&rec);
	assert_true(store_revision(s) >= rv);
	store_close(s);
}

static void test_store_etcd_live__conflicts_are_eagain_and_enoent(void **state)
{
	(void)state;
	struct store *s = open_store();
	uint64_t rv = 0, rv2 = 0;
	assert_int_equal(
	    apply(s, "namespaces/dev/configmaps/b", config_map("b", "1"), 0, NULL, &rv), 0);
	/* Made again: it exists. */
	assert_int_equal(
	    apply(s, "namespaces/dev/configmaps/b", config_map("b", "2"), 0, NULL, NULL), -EAGAIN);
	assert_int_equal(
	    apply(s, "namespaces/dev/configmaps/b", config_map("b", "2"), rv, NULL, &rv2), 0);
	/* The old revision once more: exactly one of two wins. */
	assert_int_equal(
	    apply(s, "namespaces/dev/configmaps/b", config_map("b", "3"), rv, NULL, NULL), -EAGAIN);
	assert_int_equal(apply(s, "namespaces/dev/configmaps/b", NULL, rv, NULL, NULL), -EAGAIN);
	assert_int_equal(apply(s, "namespaces/dev/configmaps/b", NULL, rv2, NULL, NULL), 0);
	assert_int_equal(apply(s, "namespaces/dev/configmaps/b", NULL, rv2, NULL, NULL), -ENOENT);
	struct store_record rec = {0};
	struct error *err = NULL;
	assert_int_equal(store_get(s, "namespaces/dev/configmaps/b", &rec, &err), -ENOENT);
	error_free(err);
	store_close(s);
}

static int count_one(void *data, const char *key, const struct store_record *rec)
{
	(void)rec;
	if (strncmp(key, "namespaces/list/", 16) == 0)
		(*(int *)data)++;
	return 0;
}

static void test_store_etcd_live__foreach_sees_every_object(void **state)
{
	(void)state;
	struct store *s = open_store();
	for (int i = 0; i < 5; i++) {
		cleanup_free char *key = xasprintf("namespaces/list/configmaps/c%d", i);
		assert_int_equal(apply(s, key, config_map("c", "1"), 0, NULL, NULL), 0);
	}
	int n = 0;
	assert_int_equal(store_foreach(s, true, count_one, &n, NULL), 0);
	assert_int_equal(n, 5);
	assert_false(store_is_empty(s));
	store_close(s);
}

static void test_store_etcd_live__outbox_is_written_with_the_change(void **state)
{
	(void)state;
	struct store *s = open_store();
	uint64_t base = store_revision(s), rv1 = 0, rv2 = 0;
	assert_int_equal(apply(s, "namespaces/dev/configmaps/h", config_map("h", "1"), 0,
			       "namespaces/dev/configmaps/h.yaml", &rv1),
			 0);
	/* A refused change queues nothing. */
	assert_int_equal(apply(s, "namespaces/dev/configmaps/h", config_map("h", "x"), 0,
			       "namespaces/dev/configmaps/h.yaml", NULL),
			 -EAGAIN);
	assert_int_equal(apply(s, "namespaces/dev/configmaps/h", NULL, rv1,
			       "namespaces/dev/configmaps/h.yaml", &rv2),
			 0);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(s, base, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].rv, rv1);
	assert_string_equal(e[0].path, "namespaces/dev/configmaps/h.yaml");
	assert_non_null(e[0].yaml);
	assert_int_equal(e[1].rv, rv2);
	assert_null(e[1].yaml);
	store_outbox_free(e, n);
	/* Trimmed by the only replica, which is then the trimmer. */
	assert_int_equal(store_outbox_trim(s, rv1, NULL), 0);
	assert_int_equal(store_outbox_read(s, base, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].rv, rv2);
	store_outbox_free(e, n);
	store_close(s);
}

static void test_store_etcd_live__a_trim_deletes_exactly_what_is_held(void **state)
{
	(void)state;
	struct store *s = open_store();
	uint64_t base = store_revision(s), rv = 0, cut = 0;
	/* More than two transactions' worth of deletions, and some kept. */
	for (int i = 0; i < 250; i++) {
		cleanup_free char *key = xasprintf("namespaces/trim/configmaps/c%d", i);
		cleanup_free char *path = xasprintf("%s.yaml", key);
		assert_int_equal(apply(s, key, config_map("c", "1"), 0, path, &rv), 0);
		if (i == 209)
			cut = rv;
	}
	assert_int_equal(store_outbox_trim(s, cut, NULL), 0);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(s, base, 1000, &e, &n, NULL), 0);
	assert_int_equal(n, 40);
	assert_true(e[0].rv > cut);
	assert_string_equal(e[0].path, "namespaces/trim/configmaps/c210.yaml");
	store_outbox_free(e, n);
	assert_int_equal(store_outbox_trim(s, rv, NULL), 0);
	assert_int_equal(store_outbox_read(s, base, 1000, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
	store_close(s);
}

struct snap_count {
	struct store *s;
	int n;
	bool wrote; /* one write made from inside the snapshot's scan */
};

static int snap_one(void *data, const char *key, const struct store_record *rec)
{
	struct snap_count *c = data;
	if (strncmp(key, "namespaces/snap/", 16) != 0)
		return 0;
	assert_non_null(rec->yaml);
	c->n++;
	if (!c->wrote) {
		c->wrote = true;
		assert_int_equal(apply(c->s, "namespaces/snap/configmaps/late",
				       config_map("late", "1"), 0,
				       "namespaces/snap/configmaps/late.yaml", NULL),
				 0);
	}
	return 0;
}

static void test_store_etcd_live__snapshot_at_one_revision_outbox_after_it(void **state)
{
	(void)state;
	struct store *s = open_store();
	uint64_t rv = 0;
	for (int i = 0; i < 3; i++) {
		cleanup_free char *key = xasprintf("namespaces/snap/configmaps/c%d", i);
		cleanup_free char *path = xasprintf("%s.yaml", key);
		assert_int_equal(apply(s, key, config_map("c", "1"), 0, path, &rv), 0);
	}
	/* A write made while the snapshot is read is not in it: it is after
	 * the snapshot's revision, in the outbox. */
	struct snap_count c = {.s = s};
	uint64_t at = 0;
	assert_int_equal(store_snapshot(s, snap_one, &c, &at, NULL), 0);
	assert_int_equal(c.n, 3);
	assert_true(at >= rv);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(s, at, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].path, "namespaces/snap/configmaps/late.yaml");
	store_outbox_free(e, n);
	/* As the history's files: each object's declared form, at one
	 * revision, now with the late one. */
	assert_int_equal(snapshot_declared(s, &e, &n, &at, NULL), 0);
	size_t mine = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(e[i].path, "namespaces/snap/", 16) != 0)
			continue;
		mine++;
		assert_int_equal(e[i].rv, at);
		assert_non_null(strstr(e[i].yaml, "kind: ConfigMap"));
		assert_null(strstr(e[i].yaml, "resourceVersion"));
	}
	assert_int_equal(mine, 4);
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(e[i - 1].path, e[i].path) < 0);
	store_outbox_free(e, n);
	store_close(s);
}

static void test_store_etcd_live__a_replica_counted_in_at_0_keeps_the_outbox(void **state)
{
	(void)state;
	struct store *a = open_store(), *b = open_store();
	uint64_t rv1 = 0, rv2 = 0;
	assert_int_equal(apply(a, "namespaces/keep/configmaps/k", config_map("k", "1"), 0,
			       "namespaces/keep/configmaps/k.yaml", &rv1),
			 0);
	/* A is the trimmer (it trims first); B, joining, counts itself in. */
	assert_int_equal(store_outbox_trim(a, rv1 - 1, NULL), 0);
	assert_int_equal(store_outbox_trim(b, 0, NULL), 0);
	assert_int_equal(apply(a, "namespaces/keep/configmaps/k", config_map("k", "2"), rv1,
			       "namespaces/keep/configmaps/k.yaml", &rv2),
			 0);
	assert_int_equal(store_outbox_trim(a, rv2, NULL), 0);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(store_outbox_read(b, rv1 - 1, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 2);
	store_outbox_free(e, n);
	/* B gone (its lease revoked), A trims them. */
	store_close(b);
	assert_int_equal(store_outbox_trim(a, rv2, NULL), 0);
	assert_int_equal(store_outbox_read(a, rv1 - 1, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 0);
	store_outbox_free(e, n);
	store_close(a);
}

struct seen {
	pthread_mutex_t lock;
	char keys[16][96];
	bool deleted[16];
	int n;
};

static void seen_fn(void *data, const char *key, const struct store_record *rec, uint64_t rv)
{
	(void)rv;
	struct seen *w = data;
	if (!key)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->n < 16) {
		snprintf(w->keys[w->n], sizeof(w->keys[0]), "%s", key);
		w->deleted[w->n++] = rec == NULL;
	}
	pthread_mutex_unlock(&w->lock);
}

/* Waits (timeout_ms at most) until pred(arg). */
static bool wait_until(bool (*pred)(void *), void *arg, int timeout_ms)
{
	uint64_t end = loop_now_ms() + (uint64_t)timeout_ms;
	while (!pred(arg)) {
		if (loop_now_ms() >= end)
			return false;
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	return true;
}

struct seen_goal {
	struct seen *w;
	int n;
};

static bool seen_reached(void *arg)
{
	struct seen_goal *g = arg;
	pthread_mutex_lock(&g->w->lock);
	bool done = g->w->n >= g->n;
	pthread_mutex_unlock(&g->w->lock);
	return done;
}

/* Waits (10 s at most) until w has seen n changes. */
static bool seen_wait(struct seen *w, int n)
{
	return wait_until(seen_reached, &(struct seen_goal){w, n}, 10000);
}

static void test_store_etcd_live__a_watch_sees_others_changes_not_its_own(void **state)
{
	(void)state;
	struct store *a = open_store(), *b = open_store();
	struct seen w = {.lock = PTHREAD_MUTEX_INITIALIZER};
	assert_int_equal(store_foreach(b, false, count_one, &(int){0}, NULL), 0);
	assert_int_equal(store_watch(b, seen_fn, &w, NULL), 0);
	uint64_t rv = 0;
	assert_int_equal(
	    apply(b, "namespaces/w/configmaps/own", config_map("o", "1"), 0, NULL, NULL), 0);
	assert_int_equal(apply(a, "namespaces/w/configmaps/x", config_map("x", "1"), 0, NULL, &rv),
			 0);
	assert_int_equal(apply(a, "namespaces/w/configmaps/x", NULL, rv, NULL, NULL), 0);
	assert_true(seen_wait(&w, 2));
	assert_int_equal(w.n, 2);
	assert_string_equal(w.keys[0], "namespaces/w/configmaps/x");
	assert_false(w.deleted[0]);
	assert_string_equal(w.keys[1], "namespaces/w/configmaps/x");
	assert_true(w.deleted[1]);
	store_close(b);
	store_close(a);
}

/* A watching store's history reads the outbox entries its watch brought,
 * its own and another's, without ranging over the outbox in etcd: they
 * are read even once the keys are gone from etcd behind its back. */
static void test_store_etcd_live__a_watching_store_reads_the_outbox_from_its_watch(void **state)
{
	(void)state;
	struct store *a = open_store(), *b = open_store();
	struct seen w = {.lock = PTHREAD_MUTEX_INITIALIZER};
	assert_int_equal(store_foreach(b, false, count_one, &(int){0}, NULL), 0);
	assert_int_equal(store_watch(b, seen_fn, &w, NULL), 0);
	uint64_t base = store_revision(b), rv1 = 0, rv2 = 0;
	assert_int_equal(apply(a, "namespaces/box/configmaps/x", config_map("x", "1"), 0,
			       "namespaces/box/configmaps/x.yaml", &rv1),
			 0);
	assert_int_equal(apply(b, "namespaces/box/configmaps/y", config_map("y", "1"), 0,
			       "namespaces/box/configmaps/y.yaml", &rv2),
			 0);
	/* Both in b's watch (a's is reported, so b's, after it, went by). */
	assert_true(seen_wait(&w, 1));
	cleanup_free char *cmd =
	    xasprintf("curl -sf -m 5 -X POST http://%s/v3/kv/deleterange -d "
		      "'{\"key\": \"L2NvcnJhbC9oLw==\", \"range_end\": \"L2NvcnJhbC9oMA==\"}' "
		      ">/dev/null",
		      etcd_member.url);
	assert_int_equal(system(cmd), 0);
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	for (int i = 0; i < 100 && n < 2; i++) { /* until the watch has rv2 */
		store_outbox_free(e, n);
		uint64_t seen = store_revision(b);
		assert_int_equal(store_outbox_read(b, base, 100, &e, &n, NULL), 0);
		if (n < 2)
			store_outbox_wait(b, seen, 100);
	}
	assert_int_equal(n, 2);
	assert_int_equal(e[0].rv, rv1);
	assert_string_equal(e[0].path, "namespaces/box/configmaps/x.yaml");
	assert_int_equal(e[1].rv, rv2);
	assert_string_equal(e[1].path, "namespaces/box/configmaps/y.yaml");
	store_outbox_free(e, n);
	/* What the history has passed is not read again. */
	assert_int_equal(store_outbox_read(b, rv1, 100, &e, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].rv, rv2);
	store_outbox_free(e, n);
	store_close(b);
	store_close(a);
}

struct relist {
	pthread_mutex_t lock;
	int begins, ends, named;
	uint64_t end_rev;
};

static void relist_fn(void *data, const char *key, const struct store_record *rec, uint64_t rv)
{
	struct relist *w = data;
	pthread_mutex_lock(&w->lock);
	if (!key && rv == 0)
		w->begins++;
	else if (!key)
		w->ends++, w->end_rev = rv;
	else if (rec && strcmp(key, "namespaces/rl/configmaps/kept") == 0)
		w->named++;
	pthread_mutex_unlock(&w->lock);
}

static void test_store_etcd_live__a_watch_compacted_past_lists_again(void **state)
{
	(void)state;
	struct store *a = open_store(), *b = open_store();
	/* b lists now, then falls behind a compaction before it watches. */
	assert_int_equal(store_foreach(b, false, count_one, &(int){0}, NULL), 0);
	uint64_t rv = 0;
	assert_int_equal(
	    apply(a, "namespaces/rl/configmaps/kept", config_map("k", "1"), 0, NULL, &rv), 0);
	assert_int_equal(
	    apply(a, "namespaces/rl/configmaps/gone", config_map("g", "1"), 0, NULL, &rv), 0);
	assert_int_equal(apply(a, "namespaces/rl/configmaps/gone", NULL, rv, NULL, &rv), 0);
	cleanup_free char *cmd = xasprintf("curl -sf -m 5 -X POST http://%s/v3/kv/compaction "
					   "-d '{\"revision\": %llu}' >/dev/null",
					   etcd_member.url, (unsigned long long)rv);
	assert_int_equal(system(cmd), 0);
	struct relist w = {.lock = PTHREAD_MUTEX_INITIALIZER};
	assert_int_equal(store_watch(b, relist_fn, &w, NULL), 0);
	bool done = false;
	for (int i = 0; i < 100 && !done; i++) { /* 10 s at most */
		pthread_mutex_lock(&w.lock);
		done = w.ends > 0;
		pthread_mutex_unlock(&w.lock);
		if (!done) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	}
	assert_int_equal(w.begins, 1);
	assert_int_equal(w.ends, 1);
	assert_int_equal(w.named, 1);
	assert_true(w.end_rev >= rv);
	store_close(b);
	store_close(a);
}

static void test_store_etcd_live__a_write_whose_answer_was_lost_is_seen_as_anothers(void **state)
{
	(void)state;
	struct store *a = open_store(), *b = open_store();
	struct seen w = {.lock = PTHREAD_MUTEX_INITIALIZER};
	assert_int_equal(store_foreach(a, false, count_one, &(int){0}, NULL), 0);
	assert_int_equal(store_watch(a, seen_fn, &w, NULL), 0);
	/* Committed, but a is told EIO: a's watch must report it. */
	store_etcd_lose_replies(a, 1);
	assert_int_equal(
	    apply(a, "namespaces/lost/configmaps/lost", config_map("l", "1"), 0, NULL, NULL), -EIO);
	/* Answered: never reported to a. */
	assert_int_equal(
	    apply(a, "namespaces/lost/configmaps/kept", config_map("k", "1"), 0, NULL, NULL), 0);
	/* b's write comes after both: once a sees it, a has passed them. */
	assert_int_equal(
	    apply(b, "namespaces/lost/configmaps/last", config_map("z", "1"), 0, NULL, NULL), 0);
	assert_true(seen_wait(&w, 2));
	assert_int_equal(w.n, 2);
	assert_string_equal(w.keys[0], "namespaces/lost/configmaps/lost");
	assert_false(w.deleted[0]);
	assert_string_equal(w.keys[1], "namespaces/lost/configmaps/last");
	struct store_record rec = {0};
	assert_int_equal(store_get(b, "namespaces/lost/configmaps/lost", &rec, NULL), 0);
	store_record_clear(&rec);
	store_close(b);
	store_close(a);
}

/* A Service-like change of key taking (or giving back) claim name. */
static int apply_claim(struct store *s, const char *key, bool put, uint64_t expect,
		       const char *name, bool take, const char *holder, char **msg, uint64_t *rv)
{
	struct store_claim cl = {.name = (char *)name,
				 .holder = (char *)holder,
				 .refusal = (char *)"provided IP is already allocated",
				 .take = take};
	struct store_change c = {.key = key,
				 .obj = put ? config_map("s", "1") : NULL,
				 .expect_rv = expect,
				 .claims = &cl,
				 .nclaims = 1};
	struct error *err = NULL;
	int r = store_apply(s, &c, &err);
	int status = r < 0 ? err->status : 0;
	if (msg)
		*msg = r < 0 ? xstrdup(err->msg) : NULL;
	if (rv)
		*rv = c.rv;
	error_free(err);
	free(c.yaml);
	ynode_free(c.obj);
	return r < 0 ? -status : 0;
}

static void test_store_etcd_live__a_claim_is_held_by_one_object_of_any_store(void **state)
{
	(void)state;
	struct store *a = open_store(), *b = open_store();
	uint64_t rv = 0;
	cleanup_free char *msg = NULL;
	assert_int_equal(apply_claim(a, "namespaces/cl/services/x", true, 0, "svcip/10.96.0.9",
				     true, "service cl/x", NULL, &rv),
			 0);
	assert_int_equal(apply_claim(b, "namespaces/cl/services/y", true, 0, "svcip/10.96.0.9",
				     true, "service cl/y", &msg, NULL),
			 -EINVAL);
	assert_string_equal(msg, "provided IP is already allocated (to service cl/x)");
	/* Refused whole: y is not stored. */
	struct store_record rec = {0};
	struct error *err = NULL;
	assert_int_equal(store_get(b, "namespaces/cl/services/y", &rec, &err), -ENOENT);
	error_free(err);
	/* x's deletion gives it back; then y takes it. */
	assert_int_equal(apply_claim(a, "namespaces/cl/services/x", false, rv, "svcip/10.96.0.9",
				     false, "service cl/x", NULL, NULL),
			 0);
	assert_int_equal(apply_claim(b, "namespaces/cl/services/y", true, 0, "svcip/10.96.0.9",
				     true, "service cl/y", NULL, NULL),
			 0);
	/* A conflict on the object itself is still a conflict. */
	assert_int_equal(apply_claim(a, "namespaces/cl/services/y", true, 0, "svcip/10.96.0.10",
				     true, "service cl/y", NULL, NULL),
			 -EAGAIN);
	store_close(b);
	store_close(a);
}

struct fresh_goal {
	struct store *s;
	int want;
};

static bool fresh_reached(void *arg)
{
	struct fresh_goal *g = arg;
	struct error *err = NULL;
	int r = store_check_fresh(g->s, &err);
	error_free(err);
	return r == g->want;
}

/* Waits (timeout_ms at most) until store_check_fresh(s) is want. */
static bool fresh_wait(struct store *s, int want, int timeout_ms)
{
	return wait_until(fresh_reached, &(struct fresh_goal){s, want}, timeout_ms);
}

static void test_store_etcd_live__reads_fail_past_the_staleness_bound(void **state)
{
	(void)state;
	struct store *s = open_store();
	struct seen w = {.lock = PTHREAD_MUTEX_INITIALIZER};
	assert_int_equal(store_foreach(s, false, count_one, &(int){0}, NULL), 0);
	assert_int_equal(store_watch(s, seen_fn, &w, NULL), 0);
	assert_true(fresh_wait(s, 0, 10000));
	/* A member that hangs answers nothing: not even "no". */
	assert_int_equal(kill(etcd_member.pid, SIGSTOP), 0);
	int64_t stopped = (int64_t)loop_now_ms();
	bool stale = fresh_wait(s, -EIO, STORE_ETCD_STALE_MS + 5000);
	int64_t took = (int64_t)loop_now_ms() - stopped;
	assert_int_equal(kill(etcd_member.pid, SIGCONT), 0);
	assert_true(stale);
	/* Served up to the bound: the last proof is at most a probe old. */
	assert_true(took >= STORE_ETCD_STALE_MS - 2 * STORE_ETCD_PROBE_MS);
	struct error *err = NULL;
	assert_int_equal(store_check_fresh(s, &err), -EIO);
	assert_int_equal(err->status, EIO);
	error_free(err);
	assert_true(fresh_wait(s, 0, 15000));
	store_close(s);
}

/* POSTs body (JSON without single quotes) to path on the member: its
 * answer, or NULL. */
static json_t *etcd_call(const char *path, const char *body)
{
	cleanup_free char *cmd =
	    xasprintf("curl -sf -m 2 http://%s%s -d '%s'", etcd_member.url, path, body);
	FILE *f = popen(cmd, "r");
	if (!f)
		return NULL;
	json_t *out = json_loadf(f, 0, NULL);
	pclose(f);
	return out;
}

struct probe_goal {
	const char *body; /* a range request */
};

static bool probe_key_written(void *arg)
{
	json_t *r = etcd_call("/v3/kv/range", ((struct probe_goal *)arg)->body);
	bool there = json_array_size(json_object_get(r, "kvs")) > 0;
	json_decref(r);
	return there;
}

static void test_store_etcd_live__revisions_not_ours_do_not_leave_the_watch_stale(void **state)
{
	(void)state;
	struct store *s = open_store();
	struct seen w = {.lock = PTHREAD_MUTEX_INITIALIZER};
	assert_int_equal(store_foreach(s, false, count_one, &(int){0}, NULL), 0);
	assert_int_equal(store_watch(s, seen_fn, &w, NULL), 0);
	/* A key outside /corral/ moves the revision past anything the watch
	 * will ever deliver: the probe has to write one of ours. */
	json_decref(
	    etcd_call("/v3/kv/put", "{\"key\": \"L2ZvcmVpZ24veA==\", \"value\": \"eA==\"}"));
	/* The range /corral/l/ to /corral/l0, base64. */
	struct probe_goal g = {
	    "{\"key\": \"L2NvcnJhbC9sLw==\", \"range_end\": \"L2NvcnJhbC9sMA==\"}"};
	assert_true(wait_until(probe_key_written, &g, 10000));
	assert_true(fresh_wait(s, 0, 10000));
	store_close(s);
}

/* The lease of the first history replica's mark (0: none). */
static long long replica_lease(void)
{
	/* The range /corral/r/ to /corral/r0, base64. */
	json_t *r = etcd_call(
	    "/v3/kv/range", "{\"key\": \"L2NvcnJhbC9yLw==\", \"range_end\": \"L2NvcnJhbC9yMA==\"}");
	json_t *kv = json_array_get(json_object_get(r, "kvs"), 0);
	const char *id = json_string_value(json_object_get(kv, "lease"));
	long long lease = id ? strtoll(id, NULL, 10) : 0;
	json_decref(r);
	return lease;
}

/* The TTL etcd has left on lease (-1: gone). */
static long lease_ttl(long long lease)
{
	cleanup_free char *body = xasprintf("{\"ID\": %lld}", lease);
	json_t *r = etcd_call("/v3/kv/lease/timetolive", body);
	const char *ttl = json_string_value(json_object_get(r, "TTL"));
	long t = ttl ? strtol(ttl, NULL, 10) : -1;
	json_decref(r);
	return t;
}

static void test_store_etcd_live__the_lease_is_renewed_without_the_history(void **state)
{
	(void)state;
	struct store *s = open_store();
	/* The first trim takes the lease: the replica's mark lives under it. */
	assert_int_equal(store_outbox_trim(s, 1, NULL), 0);
	long long lease = replica_lease();
	assert_true(lease != 0);
	/* Nobody trims again: the TTL only goes down unless the store's own
	 * thread renews it. Wait (15 s at most: past the 10 s TTL) until it
	 * goes back up. */
	long low = lease_ttl(lease);
	assert_true(low > 0);
	bool renewed = false;
	for (int64_t end = (int64_t)loop_now_ms() + 15000;
	     (int64_t)loop_now_ms() < end && !renewed;) {
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
		long ttl = lease_ttl(lease);
		assert_true(ttl > 0); /* expired */
		renewed = ttl > low;
		if (ttl < low)
			low = ttl;
	}
	assert_true(renewed);
	store_close(s);
}

static void test_store_etcd_live__no_member_is_eio(void **state)
{
	(void)state;
	struct store *s = NULL;
	struct error *err = NULL;
	/* Port 1 on loopback: nothing listens (connection refused). */
	assert_true(store_open("etcd://127.0.0.1:1", &s, &err) < 0);
	assert_int_equal(err->status, EIO);
	error_free(err);
}

int main(void)
{
	/* One group (the runner counts the last summary): the member starts
	 * once for all; the tests that need none ignore it. */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_etcd__keys_live_under_one_prefix_per_space),
	    cmocka_unit_test(test_store_etcd__range_end_covers_exactly_the_prefix),
	    cmocka_unit_test(test_store_etcd__resource_version_is_the_revision_read),
	    cmocka_unit_test(test_store_etcd__a_mark_elsewhere_in_the_object_is_left_alone),
	    cmocka_unit_test(test_store_etcd__a_value_not_ours_is_refused),
	    cmocka_unit_test(test_store_etcd__a_text_without_metadata_keeps_its_bytes),
	    cmocka_unit_test(test_store_etcd__members_are_host_port_pairs),
	    cmocka_unit_test(test_store_etcd_live__no_member_is_eio),
	    cmocka_unit_test(test_store_etcd_live__put_get_and_resource_version),
	    cmocka_unit_test(test_store_etcd_live__conflicts_are_eagain_and_enoent),
	    cmocka_unit_test(test_store_etcd_live__foreach_sees_every_object),
	    cmocka_unit_test(test_store_etcd_live__outbox_is_written_with_the_change),
	    cmocka_unit_test(test_store_etcd_live__a_trim_deletes_exactly_what_is_held),
	    cmocka_unit_test(test_store_etcd_live__snapshot_at_one_revision_outbox_after_it),
	    cmocka_unit_test(test_store_etcd_live__a_replica_counted_in_at_0_keeps_the_outbox),
	    cmocka_unit_test(test_store_etcd_live__a_watch_sees_others_changes_not_its_own),
	    cmocka_unit_test(test_store_etcd_live__a_watch_compacted_past_lists_again),
	    cmocka_unit_test(
		test_store_etcd_live__a_watching_store_reads_the_outbox_from_its_watch),
	    cmocka_unit_test(
		test_store_etcd_live__a_write_whose_answer_was_lost_is_seen_as_anothers),
	    cmocka_unit_test(test_store_etcd_live__a_claim_is_held_by_one_object_of_any_store),
	    cmocka_unit_test(test_store_etcd_live__reads_fail_past_the_staleness_bound),
	    cmocka_unit_test(test_store_etcd_live__the_lease_is_renewed_without_the_history),
	    cmocka_unit_test(test_store_etcd_live__revisions_not_ours_do_not_leave_the_watch_stale),
	};
	return cmocka_run_group_tests_name("store_etcd", tests, etcd_start, etcd_stop);
}
