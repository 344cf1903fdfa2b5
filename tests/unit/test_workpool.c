/* test_workpool.c: the pool of threads (lib/workpool.h) runs every job
 * once, on no more threads than it may, several at a time, and brings each
 * end back to the loop's thread; draining leaves nothing unfinished; low
 * jobs come after the others; a pool without a loop ends jobs on its
 * threads; a pool never started drops its jobs.
 * Every wait is bounded: a job that never ends fails the test instead of
 * hanging it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "util.h"
#include "workpool.h"

#define JOBS 40

struct shared {
	atomic_int running, most, ran;
	atomic_int release; /* jobs wait until this is set (bounded) */
	pthread_t loop_thread;
	int done;	    /* done()s seen, on the loop */
	bool done_off_loop; /* a done() ran on another thread */
	int order[JOBS];
};

struct job {
	struct shared *s;
	int n;
	bool ran;
	pthread_t ran_on;
};

static void job_run(void *data)
{
	struct job *j = data;
	struct shared *s = j->s;
	int now = atomic_fetch_add(&s->running, 1) + 1;
	int most = atomic_load(&s->most);
	while (now > most && !atomic_compare_exchange_weak(&s->most, &most, now))
		;
	/* at most 5 s: the test thread sets release */
	for (int i = 0; i < 5000 && !atomic_load(&s->release); i++)
		usleep(1000);
	j->ran = true;
	j->ran_on = pthread_self();
	atomic_fetch_add(&s->ran, 1);
	atomic_fetch_sub(&s->running, 1);
}

static void job_done(void *data)
{
	struct job *j = data;
	struct shared *s = j->s;
	if (!pthread_equal(pthread_self(), s->loop_thread))
		s->done_off_loop = true;
	s->order[s->done++] = j->n;
}

/* A pool of max threads, on a loop of its own, given n jobs. */
static struct workpool *submit_all(struct loop **loop, unsigned max, struct shared *s,
				   struct job *jobs, int n)
{
	*loop = loop_new(NULL);
	assert_non_null(*loop);
	const struct workpool_opts o = {.loop = *loop, .threads = max, .on_demand = true};
	struct workpool *w = workpool_new(&o, NULL);
	assert_non_null(w);
	assert_int_equal(workpool_start(w, 0, NULL), 0);
	s->loop_thread = pthread_self();
	for (int i = 0; i < n; i++) {
		jobs[i] = (struct job){.s = s, .n = i};
		workpool_submit(w, job_run, job_done, &jobs[i], 0);
	}
	return w;
}

static void run_until(struct loop *loop, struct shared *s, int want)
{
	for (int i = 0; i < 500 && s->done < want; i++)
		assert_int_equal(loop_run_once(loop, 10, NULL), 0);
}

static void test_workpool__runs_each_job_once_off_the_loop(void **state)
{
	(void)state;
	cleanup_loop struct loop *loop = NULL;
	struct shared s = {0};
	struct job jobs[JOBS];
	struct workpool *w = submit_all(&loop, 3, &s, jobs, JOBS);
	assert_int_equal(workpool_max(w), 3);
	assert_int_equal(workpool_pending(w), JOBS);
	/* the first jobs hold their threads: more than one runs at once */
	for (int i = 0; i < 2000 && atomic_load(&s.running) < 3; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&s.running), 3);
	assert_int_equal(s.done, 0); /* done()s only on the loop */
	atomic_store(&s.release, 1);
	run_until(loop, &s, JOBS);
	assert_int_equal(s.done, JOBS);
	assert_int_equal(atomic_load(&s.ran), JOBS);
	assert_int_equal(atomic_load(&s.most), 3); /* never more threads than allowed */
	assert_false(s.done_off_loop);
	assert_int_equal(workpool_pending(w), 0);
	for (int i = 0; i < JOBS; i++) {
		assert_true(jobs[i].ran);
		assert_false(pthread_equal(jobs[i].ran_on, s.loop_thread));
	}
	workpool_free(w);
}

static void test_workpool__drain_finishes_everything(void **state)
{
	(void)state;
	cleanup_loop struct loop *loop = NULL;
	struct shared s = {.release = 1};
	struct job jobs[JOBS];
	struct workpool *w = submit_all(&loop, 2, &s, jobs, JOBS);
	workpool_drain(w); /* no loop turn: drain runs the done()s itself */
	assert_int_equal(s.done, JOBS);
	assert_int_equal(workpool_pending(w), 0);
	/* one thread at most per job, started in order: with one thread
	 * they would end in order; with two, every job still ended once */
	int seen[JOBS] = {0};
	for (int i = 0; i < JOBS; i++)
		seen[s.order[i]]++;
	for (int i = 0; i < JOBS; i++)
		assert_int_equal(seen[i], 1);
	workpool_free(w);
}

static void test_workpool__one_thread_keeps_order(void **state)
{
	(void)state;
	cleanup_loop struct loop *loop = NULL;
	struct shared s = {.release = 1};
	struct job jobs[JOBS];
	struct workpool *w = submit_all(&loop, 1, &s, jobs, JOBS);
	run_until(loop, &s, JOBS);
	assert_int_equal(s.done, JOBS);
	for (int i = 0; i < JOBS; i++)
		assert_int_equal(s.order[i], i);
	assert_int_equal(atomic_load(&s.most), 1);
	workpool_free(w);
}

static void test_workpool__free_with_jobs_queued_runs_them(void **state)
{
	(void)state;
	cleanup_loop struct loop *loop = NULL;
	struct shared s = {.release = 1};
	struct job jobs[8];
	struct workpool *w = submit_all(&loop, 2, &s, jobs, 8);
	workpool_free(w);
	assert_int_equal(s.done, 8);
	assert_int_equal(atomic_load(&s.ran), 8);
}

static void low_run(void *data)
{
	struct job *j = data;
	j->ran = true;
}

static void low_done(void *data)
{
	struct job *j = data;
	j->s->order[j->s->done++] = j->n;
}

static void test_workpool__low_jobs_come_after_the_others(void **state)
{
	(void)state;
	cleanup_loop struct loop *loop = loop_new(NULL);
	const struct workpool_opts o = {.loop = loop, .threads = 1, .low_pause_ms = 20};
	struct workpool *w = workpool_new(&o, NULL);
	assert_non_null(w);
	struct shared s = {.loop_thread = pthread_self()};
	struct job jobs[6];
	/* submitted before the thread starts: low ones first */
	for (int i = 0; i < 6; i++) {
		jobs[i] = (struct job){.s = &s, .n = i};
		workpool_submit(w, low_run, low_done, &jobs[i], i < 3 ? WORKPOOL_LOW : 0);
	}
	assert_int_equal(workpool_start(w, 0, NULL), 0);
	workpool_drain(w);
	assert_int_equal(s.done, 6);
	static const int want[] = {3, 4, 5, 0, 1, 2};
	for (int i = 0; i < 6; i++)
		assert_int_equal(s.order[i], want[i]);
	workpool_free(w);
}

static void test_workpool__without_a_loop_ends_jobs_on_its_threads(void **state)
{
	(void)state;
	const struct workpool_opts o = {.threads = 2};
	struct workpool *w = workpool_new(&o, NULL);
	assert_non_null(w);
	assert_int_equal(workpool_start(w, 3, NULL), 0);
	assert_int_equal(workpool_max(w), 3);
	struct shared s = {.release = 1, .loop_thread = pthread_self()};
	struct job jobs[JOBS];
	for (int i = 0; i < JOBS; i++) {
		jobs[i] = (struct job){.s = &s, .n = i};
		workpool_submit(w, job_run, NULL, &jobs[i], 0);
	}
	workpool_drain(w);
	assert_int_equal(atomic_load(&s.ran), JOBS);
	assert_int_equal(workpool_pending(w), 0);
	workpool_free(w);
}

static void test_workpool__never_started_drops_its_jobs(void **state)
{
	(void)state;
	const struct workpool_opts o = {.threads = 2};
	struct workpool *w = workpool_new(&o, NULL);
	assert_non_null(w);
	struct shared s = {.release = 1};
	struct job jobs[4];
	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct job){.s = &s, .n = i};
		workpool_submit(w, job_run, job_done, &jobs[i], 0);
	}
	workpool_free(w);
	assert_int_equal(atomic_load(&s.ran), 0);
	assert_int_equal(s.done, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_workpool__runs_each_job_once_off_the_loop),
	    cmocka_unit_test(test_workpool__drain_finishes_everything),
	    cmocka_unit_test(test_workpool__one_thread_keeps_order),
	    cmocka_unit_test(test_workpool__free_with_jobs_queued_runs_them),
	    cmocka_unit_test(test_workpool__low_jobs_come_after_the_others),
	    cmocka_unit_test(test_workpool__without_a_loop_ends_jobs_on_its_threads),
	    cmocka_unit_test(test_workpool__never_started_drops_its_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
