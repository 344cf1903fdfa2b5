/* test_workqueue.c: de-duplication, processing/dirty, delayed adds, back-off,
 * and the drain helpers. Delays are only ever awaited, never measured; a
 * guard timer keeps a broken queue from hanging the suite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "workqueue.h"

#define GUARD_MS 10000

struct fixture {
	struct loop *loop;
	struct workqueue *q;
	struct loop_timer *guard;
	bool guard_fired;
};

static void on_guard(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)t;
	((struct fixture *)data)->guard_fired = true;
	loop_stop(loop);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	fx->loop = loop_new(NULL);
	assert_non_null(fx->loop);
	fx->q = workqueue_new(fx->loop, "test", NULL);
	fx->guard = loop_timer_new(fx->loop, on_guard, fx);
	loop_timer_start(fx->guard, GUARD_MS, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	workqueue_free(fx->q);
	loop_timer_free(fx->guard);
	loop_free(fx->loop);
	free(fx);
	return 0;
}

static void run_until_len(struct fixture *fx, size_t len)
{
	while (workqueue_len(fx->q) < len && !fx->guard_fired)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	assert_false(fx->guard_fired);
}

static void expect_get(struct workqueue *q, const char *key)
{
	const char *got = workqueue_get(q);
	assert_non_null(got);
	assert_string_equal(got, key);
}

static void test_workqueue_add__deduplicates_and_keeps_fifo_order(void **state)
{
	struct fixture *fx = *state;
	workqueue_add(fx->q, "dev/a");
	workqueue_add(fx->q, "dev/b");
	workqueue_add(fx->q, "dev/a");
	workqueue_add(fx->q, "prod/c");
	assert_int_equal(workqueue_len(fx->q), 3);
	expect_get(fx->q, "dev/a");
	expect_get(fx->q, "dev/b");
	expect_get(fx->q, "prod/c");
	assert_null(workqueue_get(fx->q));
	assert_int_equal(workqueue_len(fx->q), 0);
	workqueue_done(fx->q, "dev/a");
	workqueue_done(fx->q, "dev/b");
	workqueue_done(fx->q, "prod/c");
	assert_null(workqueue_get(fx->q));
}

static void test_workqueue_add__while_processing_requeues_after_done(void **state)
{
	struct fixture *fx = *state;
	workqueue_add(fx->q, "dev/a");
	const char *key = workqueue_get(fx->q);
	assert_string_equal(key, "dev/a");
	workqueue_add(fx->q, "dev/a");
	workqueue_add(fx->q, "dev/a");
	/* Never handed out twice at once. */
	assert_int_equal(workqueue_len(fx->q), 0);
	assert_null(workqueue_get(fx->q));
	assert_string_equal(key, "dev/a"); /* still valid before done */
	workqueue_done(fx->q, key);
	assert_int_equal(workqueue_len(fx->q), 1);
	expect_get(fx->q, "dev/a");
	workqueue_done(fx->q, "dev/a");
	assert_int_equal(workqueue_len(fx->q), 0);
	assert_null(workqueue_get(fx->q));
}

static void test_workqueue_done__unknown_key_is_harmless(void **state)
{
	struct fixture *fx = *state;
	workqueue_done(fx->q, "nobody/here");
	workqueue_add(fx->q, "dev/a");
	workqueue_done(fx->q, "dev/a"); /* queued, not processing: no effect */
	assert_int_equal(workqueue_len(fx->q), 1);
	workqueue_forget(fx->q, "nobody/here");
	assert_int_equal(workqueue_num_requeues(fx->q, "nobody/here"), 0);
}

static void test_workqueue_add_after__waits_for_its_timer(void **state)
{
	struct fixture *fx = *state;
	workqueue_add_after(fx->q, "dev/a", 1);
	/* The loop has not run, so no timer can have fired. */
	assert_int_equal(workqueue_len(fx->q), 0);
	run_until_len(fx, 1);
	expect_get(fx->q, "dev/a");
	workqueue_done(fx->q, "dev/a");
	/* Zero delay is a plain add. */
	workqueue_add_after(fx->q, "dev/b", 0);
	assert_int_equal(workqueue_len(fx->q), 1);
}

static void test_workqueue_add_after__keeps_the_earlier_time(void **state)
{
	struct fixture *fx = *state;
	workqueue_add_after(fx->q, "dev/late", 1000000);
	workqueue_add_after(fx->q, "dev/late", 1); /* sooner: replaces */
	workqueue_add_after(fx->q, "dev/soon", 1);
	workqueue_add_after(fx->q, "dev/soon", 1000000); /* later: ignored */
	run_until_len(fx, 2);
	const char *a = workqueue_get(fx->q), *b = workqueue_get(fx->q);
	assert_non_null(a);
	assert_non_null(b);
	assert_true((!strcmp(a, "dev/late") && !strcmp(b, "dev/soon")) ||
		    (!strcmp(a, "dev/soon") && !strcmp(b, "dev/late")));
	workqueue_done(fx->q, "dev/late");
	workqueue_done(fx->q, "dev/soon");
}

static void test_workqueue_add_after__deduplicates_with_queued_key(void **state)
{
	struct fixture *fx = *state;
	workqueue_add(fx->q, "dev/a");
	workqueue_add_after(fx->q, "dev/a", 1);
	workqueue_add_after(fx->q, "dev/b", 2);
	run_until_len(fx, 2);
	expect_get(fx->q, "dev/a");
	expect_get(fx->q, "dev/b");
	assert_null(workqueue_get(fx->q));
}

static void test_workqueue_rate_limit__doubles_to_the_cap_and_forget_resets(void **state)
{
	struct fixture *fx = *state;
	struct workqueue_opts opts = {.base_delay_ms = 5, .max_delay_ms = 40};
	struct workqueue *q = workqueue_new(fx->loop, "backoff", &opts);
	uint64_t want[] = {5, 10, 20, 40, 40, 40};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(workqueue_add_rate_limited(q, "dev/a"), want[i]);
		assert_int_equal(workqueue_num_requeues(q, "dev/a"), i + 1);
	}
	/* Per key. */
	assert_int_equal(workqueue_add_rate_limited(q, "dev/b"), 5);
	workqueue_forget(q, "dev/a");
	assert_int_equal(workqueue_num_requeues(q, "dev/a"), 0);
	assert_int_equal(workqueue_add_rate_limited(q, "dev/a"), 5);
	workqueue_free(q); /* with timers still armed */
}

static void test_workqueue_rate_limit__defaults_and_no_overflow(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(workqueue_add_rate_limited(fx->q, "k"), WORKQUEUE_BASE_DELAY_MS);
	uint64_t d = 0;
	for (int i = 0; i < 200; i++)
		d = workqueue_add_rate_limited(fx->q, "k");
	assert_int_equal(d, WORKQUEUE_MAX_DELAY_MS);

	struct workqueue_opts opts = {.base_delay_ms = 3, .max_delay_ms = UINT64_MAX};
	struct workqueue *q = workqueue_new(fx->loop, "huge", &opts);
	for (int i = 0; i < 100; i++)
		d = workqueue_add_rate_limited(q, "k");
	assert_true(d == UINT64_MAX);
	workqueue_free(q);
}

static void test_workqueue_rate_limit__retry_is_delivered(void **state)
{
	struct fixture *fx = *state;
	struct workqueue_opts opts = {.base_delay_ms = 1, .max_delay_ms = 2};
	struct workqueue *q = workqueue_new(fx->loop, "retry", &opts);
	workqueue_add(q, "dev/a");
	expect_get(q, "dev/a");
	workqueue_add_rate_limited(q, "dev/a"); /* from inside processing */
	workqueue_done(q, "dev/a");
	assert_int_equal(workqueue_len(q), 0); /* waits for the back-off */
	while (workqueue_len(q) == 0 && !fx->guard_fired)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	expect_get(q, "dev/a");
	workqueue_done(q, "dev/a");
	workqueue_free(q);
}

/* The handler helpers. */

struct handled {
	char keys[64][32];
	int n;
	int fail_first; /* fail this many calls for "dev/flaky" */
	int readd;	/* re-add the key this many times */
	struct workqueue *q;
	struct loop *stop; /* stopped after a success, if set */
};

static int handler(void *data, const char *key, struct error **err)
{
	struct handled *h = data;
	assert_true(h->n < 64);
	strncpy(h->keys[h->n], key, sizeof(h->keys[0]) - 1);
	h->n++;
	if (!strcmp(key, "dev/flaky") && h->fail_first > 0) {
		h->fail_first--;
		return error_set(err, EIO, "pretend failure");
	}
	if (h->readd > 0) {
		h->readd--;
		workqueue_add(h->q, key);
	}
	if (h->stop)
		loop_stop(h->stop);
	return 0;
}

static void test_workqueue_drain__handles_up_to_max(void **state)
{
	struct fixture *fx = *state;
	struct handled h = {.q = fx->q};
	workqueue_add(fx->q, "a");
	workqueue_add(fx->q, "b");
	workqueue_add(fx->q, "c");
	assert_int_equal(workqueue_drain(fx->q, 2, handler, &h), 2);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.keys[0], "a");
	assert_string_equal(h.keys[1], "b");
	assert_int_equal(workqueue_drain(fx->q, 10, handler, &h), 1);
	assert_int_equal(workqueue_drain(fx->q, 10, handler, &h), 0);
}

static void test_workqueue_drain__failure_retries_then_success_forgets(void **state)
{
	struct fixture *fx = *state;
	struct workqueue_opts opts = {.base_delay_ms = 1, .max_delay_ms = 4};
	struct workqueue *q = workqueue_new(fx->loop, "flaky", &opts);
	struct handled h = {.q = q, .fail_first = 2, .stop = fx->loop};
	workqueue_add(q, "dev/flaky");
	workqueue_set_handler(q, handler, &h);
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	assert_false(fx->guard_fired);
	assert_int_equal(h.n, 3);
	assert_int_equal(workqueue_num_requeues(q, "dev/flaky"), 0);
	assert_int_equal(workqueue_len(q), 0);
	workqueue_free(q);
}

static void test_workqueue_set_handler__keys_added_while_draining_wait_a_turn(void **state)
{
	struct fixture *fx = *state;
	struct handled h = {.q = fx->q, .readd = 5};
	workqueue_set_handler(fx->q, handler, &h);
	workqueue_add(fx->q, "dev/again");
	/* The re-adding handler must not keep one turn forever, and the hook
	 * reports leftover work so that no turn sleeps: without that, the first
	 * wait would last until the guard. */
	for (int turn = 1; turn <= 5; turn++) {
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
		assert_int_equal(h.n, turn);
	}
	assert_false(fx->guard_fired);
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(h.n, 6);
	assert_int_equal(workqueue_len(fx->q), 0);
	workqueue_set_handler(fx->q, NULL, NULL);
	workqueue_add(fx->q, "dev/later");
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(h.n, 6); /* no handler any more */
	assert_int_equal(workqueue_len(fx->q), 1);
}

static void test_workqueue_set_handler__delayed_key_reaches_the_handler(void **state)
{
	struct fixture *fx = *state;
	struct handled h = {.q = fx->q, .stop = fx->loop};
	workqueue_set_handler(fx->q, handler, &h);
	workqueue_add_after(fx->q, "dev/delayed", 1);
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	assert_false(fx->guard_fired);
	assert_int_equal(h.n, 1);
	assert_string_equal(h.keys[0], "dev/delayed");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_workqueue_add__deduplicates_and_keeps_fifo_order),
	    T(test_workqueue_add__while_processing_requeues_after_done),
	    T(test_workqueue_done__unknown_key_is_harmless),
	    T(test_workqueue_add_after__waits_for_its_timer),
	    T(test_workqueue_add_after__keeps_the_earlier_time),
	    T(test_workqueue_add_after__deduplicates_with_queued_key),
	    T(test_workqueue_rate_limit__doubles_to_the_cap_and_forget_resets),
	    T(test_workqueue_rate_limit__defaults_and_no_overflow),
	    T(test_workqueue_rate_limit__retry_is_delivered),
	    T(test_workqueue_drain__handles_up_to_max),
	    T(test_workqueue_drain__failure_retries_then_success_forgets),
	    T(test_workqueue_set_handler__keys_added_while_draining_wait_a_turn),
	    T(test_workqueue_set_handler__delayed_key_reaches_the_handler),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
