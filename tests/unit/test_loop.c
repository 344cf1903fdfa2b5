/* test_loop.c: the event loop — fds, timers, signals, hooks, stop.
 * Nothing here asserts on how long anything took; a guard timer only keeps
 * a broken loop from hanging the suite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"

#define GUARD_MS 10000

struct fixture {
	struct loop *loop;
	struct loop_timer *guard; /* fires only if a test hangs */
	bool guard_fired;
};

static void on_guard(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)t;
	struct fixture *fx = data;
	fx->guard_fired = true;
	loop_stop(loop);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	fx->loop = loop_new(NULL);
	assert_non_null(fx->loop);
	fx->guard = loop_timer_new(fx->loop, on_guard, fx);
	loop_timer_start(fx->guard, GUARD_MS, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	loop_timer_free(fx->guard);
	loop_free(fx->loop);
	free(fx);
	return 0;
}

/* Runs turns until *flag is set or the guard fires. */
static void run_until(struct fixture *fx, const bool *flag)
{
	while (!*flag && !fx->guard_fired)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	assert_false(fx->guard_fired);
}

static void make_pipe(int p[2])
{
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
}

/* File events. */

struct fd_rec {
	int calls;
	unsigned events;
	int fd;
	void *data;
	bool done;
};

static void on_fd(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	struct fd_rec *r = data;
	r->calls++;
	r->events = events;
	r->fd = fd;
	r->data = data;
	r->done = true;
	char buf[64];
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void test_loop_fd__read_event_carries_fd_mask_and_data(void **state)
{
	struct fixture *fx = *state;
	int p[2];
	make_pipe(p);
	struct fd_rec r = {0};
	assert_int_equal(loop_add_fd(fx->loop, p[0], LOOP_READ, on_fd, &r, NULL), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	run_until(fx, &r.done);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.events, LOOP_READ);
	assert_int_equal(r.fd, p[0]);
	assert_ptr_equal(r.data, &r);
	loop_del_fd(fx->loop, p[0]);
	close(p[0]);
	close(p[1]);
}

static void on_writable(struct loop *loop, int fd, unsigned events, void *data)
{
	struct fd_rec *r = data;
	r->calls++;
	r->events = events;
	r->done = true;
	/* Stop asking, or a writable pipe would report on every turn. */
	loop_del_fd(loop, fd);
}

static void test_loop_fd__write_event_and_modify(void **state)
{
	struct fixture *fx = *state;
	int p[2];
	make_pipe(p);
	struct fd_rec r = {0};
	assert_int_equal(loop_add_fd(fx->loop, p[1], LOOP_READ, on_writable, &r, NULL), 0);
	assert_int_equal(loop_mod_fd(fx->loop, p[1], LOOP_WRITE, NULL), 0);
	run_until(fx, &r.done);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.events, LOOP_WRITE);
	close(p[0]);
	close(p[1]);
}

static void test_loop_fd__rejects_bad_registrations(void **state)
{
	struct fixture *fx = *state;
	int p[2];
	make_pipe(p);
	struct fd_rec r = {0};
	struct error *err = NULL;
	assert_int_equal(loop_add_fd(fx->loop, p[0], LOOP_READ, on_fd, &r, NULL), 0);
	assert_int_equal(loop_add_fd(fx->loop, p[0], LOOP_READ, on_fd, &r, &err), -EEXIST);
	assert_int_equal(err->status, EEXIST);
	error_free(err);
	err = NULL;
	assert_int_equal(loop_add_fd(fx->loop, p[1], 0, on_fd, &r, &err), -EINVAL);
	error_free(err);
	err = NULL;
	assert_int_equal(loop_mod_fd(fx->loop, p[1], LOOP_READ, &err), -ENOENT);
	error_free(err);
	err = NULL;
	assert_int_equal(loop_mod_fd(fx->loop, p[0], 0, &err), -EINVAL);
	error_free(err);
	loop_del_fd(fx->loop, p[0]);
	loop_del_fd(fx->loop, p[0]); /* twice is harmless */
	loop_del_fd(fx->loop, 4242);
	close(p[0]);
	close(p[1]);
}

static void test_loop_fd__hangup_reports_readable(void **state)
{
	struct fixture *fx = *state;
	int p[2];
	make_pipe(p);
	struct fd_rec r = {0};
	assert_int_equal(loop_add_fd(fx->loop, p[0], LOOP_READ, on_fd, &r, NULL), 0);
	close(p[1]);
	run_until(fx, &r.done);
	assert_true(r.events & LOOP_READ);
	loop_del_fd(fx->loop, p[0]);
	close(p[0]);
}

struct pair {
	int fds[2];
	int calls;
};

static void on_remove_other(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	struct pair *pr = data;
	pr->calls++;
	loop_del_fd(loop, pr->fds[0] == fd ? pr->fds[1] : pr->fds[0]);
	loop_del_fd(loop, fd);
}

static void test_loop_fd__callback_may_remove_another_ready_fd(void **state)
{
	struct fixture *fx = *state;
	int a[2], b[2];
	make_pipe(a);
	make_pipe(b);
	struct pair pr = {.fds = {a[0], b[0]}};
	assert_int_equal(loop_add_fd(fx->loop, a[0], LOOP_READ, on_remove_other, &pr, NULL), 0);
	assert_int_equal(loop_add_fd(fx->loop, b[0], LOOP_READ, on_remove_other, &pr, NULL), 0);
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	/* Both are ready in the same turn; whichever runs first removes the
	 * other, which must then not be called. */
	while (pr.calls == 0 && !fx->guard_fired)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(pr.calls, 1);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* Timers. */

struct tick {
	int fired;
	int stop_after; /* periodic: stop itself after this many */
	bool free_self;
	bool done;
	int *order; /* shared log of firing order */
	int *norder;
	int id;
};

static void on_tick(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	struct tick *k = data;
	k->fired++;
	if (k->order)
		k->order[(*k->norder)++] = k->id;
	if (k->stop_after && k->fired >= k->stop_after) {
		loop_timer_stop(t);
		k->done = true;
	}
	if (k->free_self) {
		loop_timer_free(t);
		k->done = true;
	}
	if (!k->stop_after && !k->free_self)
		k->done = true;
}

static void test_loop_timer__one_shot_fires_once_and_disarms(void **state)
{
	struct fixture *fx = *state;
	struct tick k = {0};
	struct loop_timer *t = loop_timer_new(fx->loop, on_tick, &k);
	assert_false(loop_timer_armed(t));
	loop_timer_start(t, 1, 0);
	assert_true(loop_timer_armed(t));
	run_until(fx, &k.done);
	assert_int_equal(k.fired, 1);
	assert_false(loop_timer_armed(t));
	/* Restart works, and nothing fires without it. */
	k.done = false;
	loop_timer_start(t, 0, 0);
	run_until(fx, &k.done);
	assert_int_equal(k.fired, 2);
	loop_timer_free(t);
}

static void test_loop_timer__periodic_repeats_until_stopped(void **state)
{
	struct fixture *fx = *state;
	struct tick k = {.stop_after = 3};
	struct loop_timer *t = loop_timer_new(fx->loop, on_tick, &k);
	loop_timer_start(t, 0, 1);
	run_until(fx, &k.done);
	assert_int_equal(k.fired, 3);
	assert_false(loop_timer_armed(t));
	loop_timer_free(t);
}

static void test_loop_timer__may_free_itself(void **state)
{
	struct fixture *fx = *state;
	struct tick k = {.free_self = true};
	struct loop_timer *t = loop_timer_new(fx->loop, on_tick, &k);
	loop_timer_start(t, 0, 5); /* periodic: re-armed before the callback */
	run_until(fx, &k.done);
	assert_int_equal(k.fired, 1);
}

static void test_loop_timer__stopped_never_fires(void **state)
{
	struct fixture *fx = *state;
	struct tick stopped = {0}, sentinel = {0};
	struct loop_timer *a = loop_timer_new(fx->loop, on_tick, &stopped);
	struct loop_timer *b = loop_timer_new(fx->loop, on_tick, &sentinel);
	loop_timer_start(a, 0, 0);
	loop_timer_start(b, 2, 0);
	loop_timer_stop(a);
	run_until(fx, &sentinel.done);
	assert_int_equal(stopped.fired, 0);
	loop_timer_free(a);
	loop_timer_free(b);
}

static void test_loop_timer__far_deadline_waits_near_one_fires(void **state)
{
	struct fixture *fx = *state;
	struct tick far = {0}, near = {0};
	struct loop_timer *a = loop_timer_new(fx->loop, on_tick, &far);
	struct loop_timer *b = loop_timer_new(fx->loop, on_tick, &near);
	loop_timer_start(a, 1000000, 0);
	loop_timer_start(b, 0, 0);
	run_until(fx, &near.done);
	assert_int_equal(far.fired, 0);
	/* Re-arming moves it to the front. */
	loop_timer_start(a, 0, 0);
	run_until(fx, &far.done);
	assert_int_equal(far.fired, 1);
	loop_timer_free(a);
	loop_timer_free(b);
}

static void on_restart_now(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	int *fired = data;
	if (++*fired < 100)
		loop_timer_start(t, 0, 0);
}

static void test_loop_timer__restart_from_callback_does_not_starve_the_turn(void **state)
{
	struct fixture *fx = *state;
	int fired = 0;
	struct loop_timer *t = loop_timer_new(fx->loop, on_restart_now, &fired);
	loop_timer_start(t, 0, 0);
	while (fired < 100 && !fx->guard_fired) {
		int before = fired;
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
		assert_true(fired - before <= 1); /* at most once per turn */
	}
	assert_int_equal(fired, 100);
	loop_timer_free(t);
}

/* All due at once: they fire in order of deadline, ties in start order, which
 * exercises the heap through many starts, stops and restarts. */
static void test_loop_timer__heap_keeps_deadline_order(void **state)
{
	struct fixture *fx = *state;
	enum { N = 500 };
	static struct tick ticks[N];
	static struct loop_timer *timers[N];
	static int order[N];
	int norder = 0, expected[N], nexpected = 0;
	bool started[N] = {0};
	srand(7);
	for (int i = 0; i < N; i++) {
		ticks[i] = (struct tick){.order = order, .norder = &norder, .id = i};
		timers[i] = loop_timer_new(fx->loop, on_tick, &ticks[i]);
		loop_timer_start(timers[i], 1000000 + (uint64_t)(rand() % 1000), 0);
	}
	/* Stop a third, then start the rest again in a shuffled order with no
	 * delay: firing order must be exactly that start order. */
	int perm[N];
	for (int i = 0; i < N; i++)
		perm[i] = i;
	for (int i = N - 1; i > 0; i--) {
		int j = rand() % (i + 1), tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (int i = 0; i < N; i++)
		if (rand() % 3 == 0)
			loop_timer_stop(timers[i]);
	for (int i = 0; i < N; i++) {
		int id = perm[i];
		if (loop_timer_armed(timers[id]) && rand() % 2) {
			loop_timer_start(timers[id], 0, 0);
			started[id] = true;
			expected[nexpected++] = id;
		}
	}
	while (norder < nexpected && !fx->guard_fired)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	assert_int_equal(norder, nexpected);
	for (int i = 0; i < nexpected; i++)
		assert_int_equal(order[i], expected[i]);
	for (int i = 0; i < N; i++) {
		assert_int_equal(ticks[i].fired, started[i] ? 1 : 0);
		loop_timer_free(timers[i]);
	}
}

/* Signals. */

struct sig_rec {
	int signo;
	int calls;
	bool done;
};

static void on_signal(struct loop *loop, int signo, void *data)
{
	(void)loop;
	struct sig_rec *r = data;
	r->signo = signo;
	r->calls++;
	r->done = true;
}

static bool is_blocked(int signo)
{
	sigset_t cur;
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	return sigismember(&cur, signo) == 1;
}

static void test_loop_signal__delivered_through_the_loop(void **state)
{
	struct fixture *fx = *state;
	struct sig_rec r = {0};
	assert_false(is_blocked(SIGUSR1));
	assert_int_equal(loop_on_signal(fx->loop, SIGUSR1, on_signal, &r, NULL), 0);
	assert_true(is_blocked(SIGUSR1));
	assert_int_equal(raise(SIGUSR1), 0); /* would kill us if not blocked */
	run_until(fx, &r.done);
	assert_int_equal(r.signo, SIGUSR1);
	assert_int_equal(r.calls, 1);
	/* Removing the handler gives the signal back. */
	assert_int_equal(loop_on_signal(fx->loop, SIGUSR1, NULL, NULL, NULL), 0);
	assert_false(is_blocked(SIGUSR1));
}

static void test_loop_signal__free_restores_the_mask(void **state)
{
	(void)state;
	struct sig_rec r = {0};
	struct loop *loop = loop_new(NULL);
	assert_int_equal(loop_on_signal(loop, SIGUSR2, on_signal, &r, NULL), 0);
	assert_int_equal(loop_on_signal(loop, SIGHUP, on_signal, &r, NULL), 0);
	assert_true(is_blocked(SIGUSR2));
	loop_free(loop);
	assert_false(is_blocked(SIGUSR2));
	assert_false(is_blocked(SIGHUP));
}

static void test_loop_signal__rejects_sigkill(void **state)
{
	struct fixture *fx = *state;
	struct error *err = NULL;
	assert_int_equal(loop_on_signal(fx->loop, SIGKILL, on_signal, NULL, &err), -EINVAL);
	assert_non_null(err);
	error_free(err);
}

static void on_term_stop(struct loop *loop, int signo, void *data)
{
	(void)signo;
	*(bool *)data = true;
	loop_stop(loop);
}

static void test_loop_run__sigterm_stops_the_loop(void **state)
{
	struct fixture *fx = *state;
	bool stopped = false;
	assert_int_equal(loop_on_signal(fx->loop, SIGTERM, on_term_stop, &stopped, NULL), 0);
	assert_int_equal(raise(SIGTERM), 0);
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	assert_true(stopped);
	assert_false(fx->guard_fired);
	assert_int_equal(loop_on_signal(fx->loop, SIGTERM, NULL, NULL, NULL), 0);
}

/* Hooks and stop. */

struct hook_rec {
	int calls;
	int busy_for; /* return true this many times */
	bool remove_self;
	struct loop_hook *self;
};

static bool on_hook(struct loop *loop, void *data)
{
	struct hook_rec *h = data;
	h->calls++;
	if (h->remove_self)
		loop_remove_hook(loop, h->self);
	return h->calls <= h->busy_for;
}

static void test_loop_hook__busy_hook_keeps_the_loop_from_sleeping(void **state)
{
	struct fixture *fx = *state;
	struct hook_rec h = {.busy_for = 3};
	struct loop_hook *hook = loop_add_before_sleep(fx->loop, on_hook, &h);
	/* Nothing else is pending: without the hook these turns would sleep
	 * until the guard. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(loop_run_once(fx->loop, -1, NULL), 0);
	assert_int_equal(h.calls, 3);
	assert_false(fx->guard_fired);
	/* An idle hook lets the loop wait; a zero timeout returns anyway. */
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(h.calls, 4);
	loop_remove_hook(fx->loop, hook);
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(h.calls, 4);
}

static void test_loop_hook__may_remove_itself(void **state)
{
	struct fixture *fx = *state;
	struct hook_rec a = {.remove_self = true}, b = {0};
	a.self = loop_add_before_sleep(fx->loop, on_hook, &a);
	struct loop_hook *hb = loop_add_before_sleep(fx->loop, on_hook, &b);
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(loop_run_once(fx->loop, 0, NULL), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 2);
	loop_remove_hook(fx->loop, hb);
}

static bool on_hook_stop(struct loop *loop, void *data)
{
	(*(int *)data)++;
	loop_stop(loop);
	return false;
}

static void test_loop_hook__stop_from_a_hook_does_not_sleep(void **state)
{
	struct fixture *fx = *state;
	int calls = 0;
	struct loop_hook *h = loop_add_before_sleep(fx->loop, on_hook_stop, &calls);
	/* Nothing is pending: a turn that slept would last until the guard. */
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	assert_int_equal(calls, 1);
	assert_false(fx->guard_fired);
	loop_remove_hook(fx->loop, h);
}

static void on_stop_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)t;
	(*(int *)data)++;
	loop_stop(loop);
}

static void test_loop_run__stop_from_a_callback_and_run_again(void **state)
{
	struct fixture *fx = *state;
	int stops = 0;
	struct loop_timer *t = loop_timer_new(fx->loop, on_stop_timer, &stops);
	loop_timer_start(t, 0, 0);
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	assert_int_equal(stops, 1);
	loop_timer_start(t, 1, 0);
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	assert_int_equal(stops, 2);
	assert_false(fx->guard_fired);
	/* A stop before run makes run return at once. */
	loop_stop(fx->loop);
	assert_int_equal(loop_run(fx->loop, NULL), 0);
	loop_timer_free(t);
}

static void test_loop_now__is_monotonic(void **state)
{
	(void)state;
	uint64_t a = loop_now_ms(), b = loop_now_ms();
	assert_true(b >= a);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_loop_fd__read_event_carries_fd_mask_and_data),
	    T(test_loop_fd__write_event_and_modify),
	    T(test_loop_fd__rejects_bad_registrations),
	    T(test_loop_fd__hangup_reports_readable),
	    T(test_loop_fd__callback_may_remove_another_ready_fd),
	    T(test_loop_timer__one_shot_fires_once_and_disarms),
	    T(test_loop_timer__periodic_repeats_until_stopped),
	    T(test_loop_timer__may_free_itself),
	    T(test_loop_timer__stopped_never_fires),
	    T(test_loop_timer__far_deadline_waits_near_one_fires),
	    T(test_loop_timer__restart_from_callback_does_not_starve_the_turn),
	    T(test_loop_timer__heap_keeps_deadline_order),
	    T(test_loop_signal__delivered_through_the_loop),
	    T(test_loop_signal__free_restores_the_mask),
	    T(test_loop_signal__rejects_sigkill),
	    T(test_loop_run__sigterm_stops_the_loop),
	    T(test_loop_hook__busy_hook_keeps_the_loop_from_sleeping),
	    T(test_loop_hook__may_remove_itself),
	    T(test_loop_hook__stop_from_a_hook_does_not_sleep),
	    T(test_loop_run__stop_from_a_callback_and_run_again),
	    T(test_loop_now__is_monotonic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
