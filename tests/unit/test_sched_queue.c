/* test_sched_queue.c: corral-sched's scheduling queue: priority order,
 * unschedulable pods that wait for a cluster event, back-off, retries and
 * the periodic flush. Timers run on a real loop; nothing is timed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loop.h"
#include "queue.h"
#include "util.h"

struct fixture {
	struct loop *loop;
	struct sched_queue *q;
};

static int setup_with(void **state, uint64_t max_unschedulable_ms)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	cleanup_error struct error *err = NULL;
	f->loop = loop_new(&err);
	assert_non_null(f->loop);
	struct sched_queue_opts o = {
	    .initial_backoff_ms = 1,
	    .max_backoff_ms = 8,
	    .max_unschedulable_ms = max_unschedulable_ms,
	};
	f->q = sched_queue_new(f->loop, &o);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 3600 * 1000);
}

static int setup_flush(void **state)
{
	return setup_with(state, 20);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	sched_queue_free(f->q);
	loop_free(f->loop);
	free(f);
	return 0;
}

/* Runs the loop until a pod is active (timers must be armed for it). */
static void until_active(struct fixture *f)
{
	while (!sched_queue_active_len(f->q))
		assert_int_equal(loop_run_once(f->loop, -1, NULL), 0);
}

/* A few turns of the loop that must not make anything active. */
static void some_turns(struct fixture *f)
{
	for (int i = 0; i < 5; i++)
		loop_run_once(f->loop, 5, NULL);
}

static void pop_is(struct fixture *f, const char *want)
{
	const char *key = sched_queue_pop(f->q);
	if (!want) {
		assert_null(key);
		return;
	}
	assert_non_null(key);
	assert_string_equal(key, want);
}

static void test_queue__priority_then_arrival(void **state)
{
	struct fixture *f = *state;
	sched_queue_add(f->q, "dev/a", 0, true);
	sched_queue_add(f->q, "dev/b", 5, true);
	sched_queue_add(f->q, "dev/c", 0, true);
	sched_queue_add(f->q, "dev/d", 10, true);
	sched_queue_add(f->q, "dev/a", 0, true); /* once only */
	assert_int_equal(sched_queue_active_len(f->q), 4);
	pop_is(f, "dev/d");
	sched_queue_done(f->q, "dev/d");
	pop_is(f, "dev/b");
	sched_queue_done(f->q, "dev/b");
	pop_is(f, "dev/a");
	sched_queue_done(f->q, "dev/a");
	pop_is(f, "dev/c");
	sched_queue_done(f->q, "dev/c");
	pop_is(f, NULL);
	assert_int_equal(sched_queue_len(f->q), 0);
}

static void test_queue__unschedulable_waits_for_its_events(void **state)
{
	struct fixture *f = *state;
	sched_queue_add(f->q, "dev/p", 0, true);
	pop_is(f, "dev/p");
	sched_queue_unschedulable(f->q, "dev/p", SCHED_EVENT_NODE | SCHED_EVENT_POD_GONE);
	assert_int_equal(sched_queue_unschedulable_len(f->q), 1);
	some_turns(f);
	pop_is(f, NULL); /* no busy loop: nothing happened */
	sched_queue_move(f->q, SCHED_EVENT_POD_BOUND);
	some_turns(f);
	pop_is(f, NULL); /* not an event it waits for */
	sched_queue_add(f->q, "dev/p", 0, false);
	some_turns(f);
	pop_is(f, NULL); /* its status only changed */
	sched_queue_move(f->q, SCHED_EVENT_NODE);
	assert_int_equal(sched_queue_unschedulable_len(f->q), 0);
	until_active(f);
	pop_is(f, "dev/p");
	sched_queue_done(f->q, "dev/p");
}

static void test_queue__a_change_of_the_pod_brings_it_back(void **state)
{
	struct fixture *f = *state;
	sched_queue_add(f->q, "dev/p", 0, true);
	pop_is(f, "dev/p");
	sched_queue_unschedulable(f->q, "dev/p", 0);
	sched_queue_move(f->q, ~0u);
	some_turns(f);
	pop_is(f, NULL); /* waits for no event */
	sched_queue_add(f->q, "dev/p", 0, true);
	until_active(f);
	pop_is(f, "dev/p");
}

static void test_queue__retry_after_backoff(void **state)
{
	struct fixture *f = *state;
	sched_queue_retry(f->q, "dev/p", 3); /* done() before: comes back */
	assert_int_equal(sched_queue_len(f->q), 1);
	until_active(f);
	pop_is(f, "dev/p");
	sched_queue_retry(f->q, "dev/p", 3);
	until_active(f);
	pop_is(f, "dev/p");
	sched_queue_done(f->q, "dev/p");
	assert_int_equal(sched_queue_len(f->q), 0);
}

static void test_queue__backoff_doubles_up_to_max(void **state)
{
	struct fixture *f = *state;
	sched_queue_add(f->q, "dev/p", 0, true);
	assert_int_equal(sched_queue_backoff_ms(f->q, "dev/p"), 1);
	uint64_t want[] = {2, 4, 8, 8, 8};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		until_active(f);
		pop_is(f, "dev/p");
		sched_queue_unschedulable(f->q, "dev/p", SCHED_EVENT_NODE);
		assert_int_equal(sched_queue_backoff_ms(f->q, "dev/p"), want[i]);
		sched_queue_move(f->q, SCHED_EVENT_NODE);
	}
	assert_int_equal(sched_queue_backoff_ms(f->q, "dev/nope"), 0);
}

static void test_queue__delete_from_anywhere(void **state)
{
	struct fixture *f = *state;
	sched_queue_add(f->q, "dev/active", 0, true);
	sched_queue_add(f->q, "dev/unsched", 0, true);
	sched_queue_add(f->q, "dev/backoff", 0, true);
	pop_is(f, "dev/active");
	sched_queue_add(f->q, "dev/active", 0, true); /* popped: not queued twice */
	pop_is(f, "dev/unsched");
	sched_queue_unschedulable(f->q, "dev/unsched", SCHED_EVENT_NODE);
	pop_is(f, "dev/backoff");
	sched_queue_retry(f->q, "dev/backoff", 0);
	sched_queue_delete(f->q, "dev/unsched");
	sched_queue_delete(f->q, "dev/backoff");
	sched_queue_delete(f->q, "dev/active");
	sched_queue_delete(f->q, "dev/never");
	assert_int_equal(sched_queue_len(f->q), 0);
	sched_queue_move(f->q, ~0u);
	some_turns(f);
	pop_is(f, NULL);
}

static void test_queue__flush_of_long_unschedulable(void **state)
{
	struct fixture *f = *state;
	sched_queue_add(f->q, "dev/p", 0, true);
	pop_is(f, "dev/p");
	sched_queue_unschedulable(f->q, "dev/p", 0);
	/* No event ever comes; the flush tries it again. */
	until_active(f);
	pop_is(f, "dev/p");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	    T(test_queue__priority_then_arrival),
	    T(test_queue__unschedulable_waits_for_its_events),
	    T(test_queue__a_change_of_the_pod_brings_it_back),
	    T(test_queue__retry_after_backoff),
	    T(test_queue__backoff_doubles_up_to_max),
	    T(test_queue__delete_from_anywhere),
	    cmocka_unit_test_setup_teardown(test_queue__flush_of_long_unschedulable, setup_flush,
					    teardown),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
