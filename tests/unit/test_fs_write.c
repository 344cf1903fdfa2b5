/* test_fs_write.c: corral-fs's write path (write.c) and its admission
 * hooks (admission.c) against a temporary LMDB store, each test in its own
 * mkdtemp folder: an accepted write is stored and revisioned; a write that
 * validation refuses, or that a hook refuses, leaves the store as it was
 * and the hook's message reaches the error; hooks run in table order, only
 * for their kinds, are unreserved last first when a later one refuses and
 * when the store asks for a rebuild; a deletion reaches them; and the
 * Service address index, the first hook, keeps two Services off one
 * address until the first is deleted. */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
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
#include "store.h"
#include "testlib.h"
#include "util.h"
#include "write.h"

#define AUTHOR "test <test@localhost>"

struct fixture {
	char dir[64];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	if (testlib_store_temp(f->dir, sizeof(f->dir), "corral-write", &f->s) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	testlib_store_remove(f->dir, f->s);
	free(f);
	return 0;
}

/* ---- a recording hook ---- */

/* What the recording hooks did, in order: "a.reserve b.reserve a.settle". */
static char journal[1024];

static void note(const char *hook, const char *what, const struct admission_request *rq)
{
	size_t l = strlen(journal);
	snprintf(journal + l, sizeof(journal) - l, "%s%s.%s%s", l ? " " : "", hook, what,
		 rq->obj ? "" : "(delete)");
}

struct rec_state {
	const char *name;
	int refuse;	 /* reserve refuses with -refuse */
	int calls;	 /* reserves so far */
	struct store *s; /* set: the first reserve writes the key itself */
};

static struct rec_state rec_states[3];

static void *rec_init_a(const struct admission_config *cfg)
{
	(void)cfg;
	return &rec_states[0];
}

static void *rec_init_b(const struct admission_config *cfg)
{
	(void)cfg;
	return &rec_states[1];
}

static void *rec_init_c(const struct admission_config *cfg)
{
	(void)cfg;
	return &rec_states[2];
}

static int rec_reserve(void *state, struct admission_request *rq, void **claim, struct error **err)
{
	struct rec_state *st = state;
	note(st->name, "reserve", rq);
	st->calls++;
	*claim = xstrdup(st->name);
	if (st->s && st->calls == 1) {
		/* Another writer gets in between the read and the commit. */
		cleanup_ynode struct ynode *obj = NULL;
		const char *t =
		    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: other}\n";
		assert_int_equal(yaml_parse_one(t, strlen(t), &obj, NULL), 0);
		struct store_record rec = {0};
		bool have = store_get(st->s, "namespaces/dev/configmaps/cm", &rec, NULL) == 0;
		struct store_change c = {.key = "namespaces/dev/configmaps/cm",
					 .obj = obj,
					 .expect_rv = have ? rec.rv : 0};
		store_record_clear(&rec);
		assert_int_equal(store_apply(st->s, &c, NULL), 0);
		free(c.yaml);
	}
	if (st->refuse) {
		free(*claim);
		*claim = NULL;
		return error_set(err, st->refuse, "%s says no: exceeded quota", st->name);
	}
	return 0;
}

static void rec_settle(void *state, const struct admission_request *rq, void *claim)
{
	struct rec_state *st = state;
	assert_string_equal(claim, st->name); /* its own claim comes back */
	note(st->name, "settle", rq);
	free(claim);
}

static void rec_unreserve(void *state, const struct admission_request *rq, void *claim)
{
	struct rec_state *st = state;
	assert_string_equal(claim, st->name);
	note(st->name, "unreserve", rq);
	free(claim);
}

static const enum kind_id rec_services[] = {KIND_SERVICE, KIND_COUNT};

/* n recording hooks "a", "b", "c", for every kind (the last one, when
 * services_only, for Services only). */
static struct admission *rec_admission(size_t n, bool services_only)
{
	static struct admission_hook hooks[3];
	static const char *names[] = {"a", "b", "c"};
	static void *(*inits[])(const struct admission_config *) = {rec_init_a, rec_init_b,
								    rec_init_c};
	journal[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		rec_states[i] = (struct rec_state){.name = names[i]};
		hooks[i] = (struct admission_hook){
		    .name = names[i],
		    .kinds = services_only && i == n - 1 ? rec_services : NULL,
		    .init = inits[i],
		    .reserve = rec_reserve,
		    .settle = rec_settle,
		    .unreserve = rec_unreserve};
	}
	return admission_new(hooks, n, NULL);
}

/* ---- helpers ---- */

static const struct write_target cm_target = {
    .ns = "dev", .name = "cm", .key = "namespaces/dev/configmaps/cm"};

static struct write_target target(const char *kind, const char *ns, const char *name,
				  const char *key)
{
	return (struct write_target){
	    .kind = kinds_by_kind(kind), .ns = ns, .name = name, .key = key};
}

static int put(struct store *s, struct admission *a, const struct write_target *t, const char *text,
	       struct write_result *res, char **msg)
{
	struct error *err = NULL;
	struct write_result tmp = {0};
	int r = write_object(s, a, t, text, strlen(text), AUTHOR, res ? res : &tmp, &err);
	if (msg)
		*msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	write_result_clear(&tmp);
	return r;
}

/* The stored text of key, or NULL. */
static char *stored(struct store *s, const char *key, uint64_t *rv)
{
	struct store_record rec = {0};
	if (store_get(s, key, &rec, NULL) < 0)
		return NULL;
	char *t = xstrdup(rec.yaml);
	if (rv)
		*rv = rec.rv;
	store_record_clear(&rec);
	return t;
}

static const char *cm_v1 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v1}\n";
static const char *cm_v2 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v2}\n";

/* ---- tests ---- */

static void test_write__accepted_write_is_stored_and_revisioned(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct write_result r1 = {0}, r2 = {0};
	assert_int_equal(put(f->s, NULL, &t, cm_v1, &r1, NULL), 0);
	uint64_t rv = 0;
	cleanup_free char *text = stored(f->s, t.key, &rv);
	assert_non_null(text);
	assert_int_equal(rv, r1.rv);
	assert_string_equal(text, r1.yaml); /* what the writer sees is what is stored */
	assert_non_null(strstr(text, "k: v1"));
	cleanup_free char *rvline = xasprintf("resourceVersion: '%llu'", (unsigned long long)rv);
	assert_non_null(strstr(text, rvline));
	assert_non_null(strstr(text, "uid:"));

	assert_int_equal(put(f->s, NULL, &t, cm_v2, &r2, NULL), 0);
	assert_true(r2.rv > r1.rv);
	assert_int_equal(store_revision(f->s), r2.rv);
	cleanup_free char *text2 = stored(f->s, t.key, NULL);
	assert_non_null(strstr(text2, "k: v2"));
	write_result_clear(&r1);
	write_result_clear(&r2);
}

static void test_write__refused_validation_leaves_the_store(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	assert_int_equal(put(f->s, NULL, &t, cm_v1, NULL, NULL), 0);
	uint64_t rv0 = 0, rv1 = 0;
	cleanup_free char *before = stored(f->s, t.key, &rv0);
	uint64_t rev0 = store_revision(f->s);

	cleanup_free char *msg = NULL;
	const char *other =
	    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {k: x}\n";
	assert_int_equal(put(f->s, NULL, &t, other, NULL, &msg), -EINVAL);
	assert_non_null(strstr(msg, "metadata.name"));
	free(msg);
	msg = NULL;
	assert_int_equal(put(f->s, NULL, &t, "kind: [", NULL, &msg), -EINVAL);

	cleanup_free char *after = stored(f->s, t.key, &rv1);
	assert_string_equal(before, after);
	assert_int_equal(rv0, rv1);
	assert_int_equal(store_revision(f->s), rev0);
}

static void test_write__hook_refusal_leaves_the_store_and_says_why(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct admission *a = rec_admission(2, false);
	assert_int_equal(put(f->s, a, &t, cm_v1, NULL, NULL), 0);
	uint64_t rv0 = 0, rv1 = 0;
	cleanup_free char *before = stored(f->s, t.key, &rv0);
	uint64_t rev0 = store_revision(f->s);

	rec_states[1].refuse = EINVAL;
	journal[0] = '\0';
	cleanup_free char *msg = NULL;
	assert_int_equal(put(f->s, a, &t, cm_v2, NULL, &msg), -EINVAL);
	assert_string_equal(msg, "b says no: exceeded quota");
	cleanup_free char *after = stored(f->s, t.key, &rv1);
	assert_string_equal(before, after);
	assert_int_equal(rv0, rv1);
	assert_int_equal(store_revision(f->s), rev0);
	/* a took its share before b refused: it gives it back. */
	assert_string_equal(journal, "a.reserve b.reserve a.unreserve");

	/* A refused create stores nothing at all. */
	struct write_target t2 =
	    target("ConfigMap", "dev", "fresh", "namespaces/dev/configmaps/fresh");
	const char *fresh = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\n";
	assert_int_equal(put(f->s, a, &t2, fresh, NULL, NULL), -EINVAL);
	assert_null(stored(f->s, t2.key, NULL));
	admission_free(a);
}

static void test_write__hooks_run_in_table_order(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct admission *a = rec_admission(3, false);
	assert_int_equal(put(f->s, a, &t, cm_v1, NULL, NULL), 0);
	assert_string_equal(journal, "a.reserve b.reserve c.reserve a.settle b.settle c.settle");

	journal[0] = '\0';
	rec_states[2].refuse = EACCES;
	assert_int_equal(put(f->s, a, &t, cm_v2, NULL, NULL), -EACCES);
	assert_string_equal(journal, "a.reserve b.reserve c.reserve b.unreserve a.unreserve");
	admission_free(a);
}

static void test_write__hooks_apply_to_their_kinds(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct admission *a = rec_admission(2, true); /* b: Services only */
	assert_true(admission_applies(a, kinds_by_kind("Pod")));
	assert_int_equal(put(f->s, a, &t, cm_v1, NULL, NULL), 0);
	assert_string_equal(journal, "a.reserve a.settle");
	admission_free(a);

	/* The table's service-addresses row: Services only (resource-quota,
	 * another row, applies to every kind). */
	size_t n;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	size_t i = 0;
	while (i < n && strcmp(hooks[i].name, "service-addresses"))
		i++;
	assert_true(i < n);
	a = admission_new(&hooks[i], 1, NULL);
	assert_true(admission_applies(a, kinds_by_kind("Service")));
	assert_false(admission_applies(a, kinds_by_kind("ConfigMap")));
	assert_true(admission_wants_load(a, kinds_by_kind("Service")));
	admission_free(a);
	/* namespace-lifecycle sees every kind, and loads only Namespaces */
	i = 0;
	while (i < n && strcmp(hooks[i].name, "namespace-lifecycle"))
		i++;
	assert_true(i < n);
	a = admission_new(&hooks[i], 1, NULL);
	assert_true(admission_applies(a, kinds_by_kind("ConfigMap")));
	assert_false(admission_wants_load(a, kinds_by_kind("ConfigMap")));
	assert_true(admission_wants_load(a, kinds_by_kind("Namespace")));
	admission_free(a);
}

static void test_write__a_retried_write_is_unreserved_then_reserved_again(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	assert_int_equal(put(f->s, NULL, &t, cm_v1, NULL, NULL), 0);
	struct admission *a = rec_admission(1, false);
	rec_states[0].s = f->s; /* its first reserve writes the object itself */
	struct write_result res = {0};
	assert_int_equal(put(f->s, a, &t, cm_v2, &res, NULL), 0);
	assert_string_equal(journal, "a.reserve a.unreserve a.reserve a.settle");
	/* Built again on what the other writer stored, then stored. */
	cleanup_free char *text = stored(f->s, t.key, NULL);
	assert_non_null(strstr(text, "k: v2"));
	write_result_clear(&res);
	admission_free(a);
}

static void test_write__a_deletion_reaches_the_hooks(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct admission *a = rec_admission(2, false);
	assert_int_equal(put(f->s, a, &t, cm_v1, NULL, NULL), 0);
	journal[0] = '\0';
	struct error *err = NULL;
	assert_int_equal(write_delete(f->s, a, &t, AUTHOR, &err), 0);
	assert_null(err);
	assert_string_equal(
	    journal, "a.reserve(delete) b.reserve(delete) a.settle(delete) b.settle(delete)");
	assert_null(stored(f->s, t.key, NULL));

	/* A hook may refuse a deletion too: the object stays. */
	assert_int_equal(put(f->s, a, &t, cm_v1, NULL, NULL), 0);
	rec_states[0].refuse = EPERM;
	assert_int_equal(write_delete(f->s, a, &t, AUTHOR, &err), -EPERM);
	error_free(err);
	err = NULL;
	cleanup_free char *kept = stored(f->s, t.key, NULL);
	assert_non_null(kept);
	rec_states[0].refuse = 0;

	/* Deleting what is not stored: -ENOENT, no hook called. */
	assert_int_equal(write_delete(f->s, a, &t, AUTHOR, &err), 0);
	journal[0] = '\0';
	assert_int_equal(write_delete(f->s, a, &t, AUTHOR, &err), -ENOENT);
	error_free(err);
	assert_string_equal(journal, "");
	admission_free(a);
}

static const char *svc(const char *name, const char *ip)
{
	static char buf[256];
	snprintf(buf, sizeof(buf),
		 "apiVersion: v1\nkind: Service\nmetadata: {name: %s}\n"
		 "spec: {clusterIP: %s, ports: [{port: 80}]}\n",
		 name, ip);
	return buf;
}

static void test_write__service_addresses_hook_keeps_services_apart(void **state)
{
	struct fixture *f = *state;
	size_t n;
	const struct admission_hook *hooks = admission_default_hooks(&n);
	size_t i = 0;
	while (i < n && strcmp(hooks[i].name, "service-addresses") != 0)
		i++;
	assert_true(i < n);
	struct admission *a = admission_new(hooks, n, NULL);
	struct write_target ta = target("Service", "dev", "a", "namespaces/dev/services/a");
	struct write_target tb = target("Service", "dev", "b", "namespaces/dev/services/b");
	assert_int_equal(put(f->s, a, &ta, svc("a", "10.96.0.50"), NULL, NULL), 0);

	cleanup_free char *msg = NULL;
	assert_int_equal(put(f->s, a, &tb, svc("b", "10.96.0.50"), NULL, &msg), -EINVAL);
	assert_non_null(strstr(msg, "provided IP is already allocated"));
	assert_null(stored(f->s, tb.key, NULL));
	free(msg);
	msg = NULL;
	assert_int_equal(put(f->s, a, &tb, svc("b", "10.97.0.1"), NULL, &msg), -EINVAL);
	assert_non_null(strstr(msg, "range"));

	/* Deleting a frees its address. */
	struct error *err = NULL;
	assert_int_equal(write_delete(f->s, a, &ta, AUTHOR, &err), 0);
	assert_int_equal(put(f->s, a, &tb, svc("b", "10.96.0.50"), NULL, NULL), 0);
	admission_free(a);

	/* At start the hook is loaded from the store: b holds the address. */
	a = admission_new(hooks, n, NULL);
	cleanup_ynode struct ynode *bobj = NULL;
	cleanup_free char *btext = stored(f->s, tb.key, NULL);
	assert_int_equal(yaml_parse_one(btext, strlen(btext), &bobj, NULL), 0);
	struct admission_request rq = {
	    .kind = tb.kind, .ns = "dev", .name = "b", .owner = "dev/b", .obj = bobj};
	admission_load(a, &rq);
	assert_int_equal(put(f->s, a, &ta, svc("a", "10.96.0.50"), NULL, NULL), -EINVAL);
	admission_free(a);
}

/* ---- contention ---- */

#define LWW_WRITERS 16
#define LWW_WRITES  25

struct lww_writer {
	struct store *s;
	int id;
	int failures;
	char first_error[200];
};

static void *lww_thread(void *arg)
{
	struct lww_writer *w = arg;
	struct write_target t = target("ConfigMap", "dev", "hot", "namespaces/dev/configmaps/hot");
	for (int i = 0; i < LWW_WRITES; i++) {
		cleanup_free char *text =
		    xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hot}\n"
			      "data: {a: \"%d-%d\", b: \"%d-%d\"}\n",
			      w->id, i, w->id, i);
		cleanup_free char *msg = NULL;
		if (put(w->s, NULL, &t, text, NULL, &msg) < 0 && !w->failures++)
			snprintf(w->first_error, sizeof(w->first_error), "%s", msg);
	}
	return NULL;
}

/* Writes without a resourceVersion always win: many writers of one
 * object at once, none refused for contention ("changed meanwhile"), and
 * the object is one whole write. */
static void test_write__last_writer_wins_never_fails_for_contention(void **state)
{
	struct fixture *f = *state;
	struct lww_writer w[LWW_WRITERS];
	pthread_t th[LWW_WRITERS];
	for (int i = 0; i < LWW_WRITERS; i++) {
		w[i] = (struct lww_writer){.s = f->s, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, lww_thread, &w[i]), 0);
	}
	for (int i = 0; i < LWW_WRITERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < LWW_WRITERS; i++) {
		if (w[i].failures)
			fail_msg("writer %d: %d failed: %s", i, w[i].failures, w[i].first_error);
	}
	uint64_t rv = 0;
	cleanup_free char *text = stored(f->s, "namespaces/dev/configmaps/hot", &rv);
	assert_non_null(text);
	assert_int_equal(rv, LWW_WRITERS * LWW_WRITES);
	const char *a = strstr(text, "a: "), *b = strstr(text, "b: ");
	assert_non_null(a);
	assert_non_null(b);
	size_t al = strcspn(a + 3, "\n"), bl = strcspn(b + 3, "\n");
	assert_int_equal(al, bl);
	assert_memory_equal(a + 3, b + 3, al);
}

/* A write with a resourceVersion still conflicts with what was stored
 * after the revision it names. */
static void test_write__a_stale_resource_version_still_conflicts(void **state)
{
	struct fixture *f = *state;
	struct write_target t = target("ConfigMap", "dev", "cm", cm_target.key);
	struct write_result r1 = {0};
	assert_int_equal(put(f->s, NULL, &t, cm_v1, &r1, NULL), 0);
	assert_int_equal(put(f->s, NULL, &t, cm_v2, NULL, NULL), 0);
	cleanup_free char *stale = xasprintf(
	    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, resourceVersion: \"%llu\"}\n"
	    "data: {k: v3}\n",
	    (unsigned long long)r1.rv);
	cleanup_free char *msg = NULL;
	assert_true(put(f->s, NULL, &t, stale, NULL, &msg) < 0);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "Conflict"));
	cleanup_free char *text = stored(f->s, t.key, NULL);
	assert_non_null(strstr(text, "k: v2"));
	write_result_clear(&r1);
}

static void test_write__a_create_only_write_leaves_a_stored_object(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	t.create_only = true;
	assert_int_equal(put(f->s, NULL, &t, cm_v1, NULL, NULL), 0);
	uint64_t rv = 0, rv2 = 0;
	cleanup_free char *before = stored(f->s, t.key, &rv);
	cleanup_free char *msg = NULL;
	assert_int_equal(put(f->s, NULL, &t, cm_v2, NULL, &msg), -EEXIST);
	assert_non_null(strstr(msg, "already exists"));
	cleanup_free char *after = stored(f->s, t.key, &rv2);
	assert_int_equal(rv2, rv);
	assert_string_equal(after, before);
}

/* A writer whose tree held no such object (a new file) guesses wrong when
 * another writer stored one meanwhile: the store's compare refuses the
 * guess, and the write builds on the stored object instead (its uid kept,
 * its revision the next). */
static void test_write__expecting_no_object_builds_on_one_stored_meanwhile(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct write_result r1 = {0}, r2 = {0};
	assert_int_equal(put(f->s, NULL, &t, cm_v1, &r1, NULL), 0);
	const char *u = strstr(r1.yaml, "uid:");
	assert_non_null(u);
	cleanup_free char *uid = xstrndup(u, strcspn(u, "\n"));
	t.expect_absent = true;
	assert_int_equal(put(f->s, NULL, &t, cm_v2, &r2, NULL), 0);
	assert_true(r2.rv > r1.rv);
	cleanup_free char *text = stored(f->s, t.key, NULL);
	assert_non_null(strstr(text, "k: v2"));
	assert_non_null(strstr(text, uid));
	write_result_clear(&r1);
	write_result_clear(&r2);
}

/* An editor's backup-rename save: the object is stored, its file renamed
 * away, and a new file carries the text read from the backup, with the
 * object's resourceVersion. The guess that a new file has no object must
 * not refuse it as a conflict with an object that "no longer exists". */
static void test_write__expecting_no_object_takes_the_stored_resource_version(void **state)
{
	struct fixture *f = *state;
	struct write_target t = cm_target;
	t.kind = kinds_by_kind("ConfigMap");
	struct write_result r1 = {0}, r2 = {0};
	assert_int_equal(put(f->s, NULL, &t, cm_v1, &r1, NULL), 0);
	cleanup_free char *v2 = xasprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, "
					  "resourceVersion: '%llu'}\ndata: {k: v2}\n",
					  (unsigned long long)r1.rv);
	t.expect_absent = true;
	assert_int_equal(put(f->s, NULL, &t, v2, &r2, NULL), 0);
	assert_true(r2.rv > r1.rv);
	cleanup_free char *text = stored(f->s, t.key, NULL);
	assert_non_null(strstr(text, "k: v2"));
	write_result_clear(&r1);
	write_result_clear(&r2);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_write__accepted_write_is_stored_and_revisioned),
	    T(test_write__refused_validation_leaves_the_store),
	    T(test_write__hook_refusal_leaves_the_store_and_says_why),
	    T(test_write__hooks_run_in_table_order),
	    T(test_write__hooks_apply_to_their_kinds),
	    T(test_write__a_retried_write_is_unreserved_then_reserved_again),
	    T(test_write__a_deletion_reaches_the_hooks),
	    T(test_write__service_addresses_hook_keeps_services_apart),
	    T(test_write__last_writer_wins_never_fails_for_contention),
	    T(test_write__a_stale_resource_version_still_conflicts),
	    T(test_write__a_create_only_write_leaves_a_stored_object),
	    T(test_write__expecting_no_object_builds_on_one_stored_meanwhile),
	    T(test_write__expecting_no_object_takes_the_stored_resource_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
