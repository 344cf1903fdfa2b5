/* test_fs_store_etcd.c: the etcd store. Without an etcd: the key layout,
 * the value encoding and its revision <-> resourceVersion mapping, the
 * member list. With one (etcd on PATH; a member started on loopback, on a
 * port below the ephemeral range, its data in a mkdtemp folder, killed and
 * removed at the end): put, get, conflicts, delete, the outbox, and a
 * second store's watch seeing the first's changes but not its own, and
 * listing everything again when compacted past; a snapshot at one revision
 * and the outbox after it, which a replica counted in keeps. Every wait is
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

#include "error.h"
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
	bool done = false;
	for (int i = 0; i < 100 && !done; i++) { /* 10 s at most */
		pthread_mutex_lock(&w.lock);
		done = w.n >= 2;
		pthread_mutex_unlock(&w.lock);
		if (!done) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	}
	assert_int_equal(w.n, 2);
	assert_string_equal(w.keys[0], "namespaces/w/configmaps/x");
	assert_false(w.deleted[0]);
	assert_string_equal(w.keys[1], "namespaces/w/configmaps/x");
	assert_true(w.deleted[1]);
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
	    cmocka_unit_test(test_store_etcd_live__snapshot_at_one_revision_outbox_after_it),
	    cmocka_unit_test(test_store_etcd_live__a_replica_counted_in_at_0_keeps_the_outbox),
	    cmocka_unit_test(test_store_etcd_live__a_watch_sees_others_changes_not_its_own),
	    cmocka_unit_test(test_store_etcd_live__a_watch_compacted_past_lists_again),
	};
	return cmocka_run_group_tests_name("store_etcd", tests, etcd_start, etcd_stop);
}
