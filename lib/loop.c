/* loop.c: epoll event loop with timers, signals and before-sleep hooks.
 *
 * Timers: one timerfd for the whole loop, armed (absolute, CLOCK_MONOTONIC)
 * for the earliest deadline of a binary min-heap. One timerfd per timer would
 * cost an fd each, and a work queue backing off thousands of keys would run
 * into RLIMIT_NOFILE; the heap makes start and stop O(log n) and re-arms the
 * timerfd at most once per turn, only when the earliest deadline changed.
 *
 * This file must never call back into a callback's owner except through the
 * callback, and never block anywhere but in epoll_wait(). */
#include "loop.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define LOOP__MAX_EVENTS 64
#define LOOP__NOT_ARMED	 SIZE_MAX

struct loop__fd {
	unsigned mask; /* LOOP_READ | LOOP_WRITE; 0: not registered */
	loop_fd_cb cb;
	void *data;
};

struct loop__sig {
	loop_signal_cb cb;
	void *data;
	bool was_blocked; /* blocked before the loop took it over */
};

struct loop_timer {
	struct loop *loop;
	loop_timer_cb cb;
	void *data;
	uint64_t deadline_ns; /* monotonic, > 0 */
	uint64_t period_ns;   /* 0: one-shot */
	uint64_t seq;	      /* start order: breaks deadline ties, bounds a turn */
	size_t idx;	      /* position in the heap, LOOP__NOT_ARMED if stopped */
};

struct loop_hook {
	loop_hook_cb cb;
	void *data;
	bool removed; /* removed while hooks were running; freed afterwards */
};

struct loop {
	int epfd;
	int timerfd;
	int sigfd;		  /* -1 until the first loop_on_signal() */
	bool stop;		  /* set by loop_stop(), cleared when loop_run returns */
	struct loop__fd *fds;	  /* indexed by fd */
	size_t nfds;		  /* length of fds */
	struct loop_timer **heap; /* min-heap on (deadline_ns, seq) */
	size_t nheap, capheap;
	uint64_t timer_seq; /* next timer start number */
	uint64_t armed_ns;  /* deadline the timerfd is set for, 0: none */
	struct loop_hook **hooks;
	size_t nhooks;
	bool in_hooks;	  /* hooks are running: removal only marks */
	sigset_t sigmask; /* signals read through sigfd */
	struct loop__sig sigs[NSIG];
};

static uint64_t loop__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t loop_now_ms(void)
{
	return loop__now_ns() / 1000000u;
}

/* Timer heap. */

static bool loop__timer_before(const struct loop_timer *a, const struct loop_timer *b)
{
	if (a->deadline_ns != b->deadline_ns)
		return a->deadline_ns < b->deadline_ns;
	return a->seq < b->seq;
}

static void loop__heap_place(struct loop *loop, size_t i, struct loop_timer *t)
{
	loop->heap[i] = t;
	t->idx = i;
}

static void loop__heap_up(struct loop *loop, size_t i)
{
	struct loop_timer *t = loop->heap[i];
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!loop__timer_before(t, loop->heap[parent]))
			break;
		loop__heap_place(loop, i, loop->heap[parent]);
		i = parent;
	}
	loop__heap_place(loop, i, t);
}

static void loop__heap_down(struct loop *loop, size_t i)
{
	struct loop_timer *t = loop->heap[i];
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= loop->nheap)
			break;
		if (child + 1 < loop->nheap &&
		    loop__timer_before(loop->heap[child + 1], loop->heap[child]))
			child++;
		if (!loop__timer_before(loop->heap[child], t))
			break;
		loop__heap_place(loop, i, loop->heap[child]);
		i = child;
	}
	loop__heap_place(loop, i, t);
}

static void loop__heap_push(struct loop *loop, struct loop_timer *t)
{
	if (loop->nheap == loop->capheap) {
		loop->capheap = loop->capheap ? 2 * loop->capheap : 16;
		loop->heap = xrealloc(loop->heap, loop->capheap * sizeof(*loop->heap));
	}
	t->seq = loop->timer_seq++;
	loop->heap[loop->nheap] = t;
	t->idx = loop->nheap++;
	loop__heap_up(loop, t->idx);
}

static void loop__heap_remove(struct loop *loop, struct loop_timer *t)
{
	size_t i = t->idx;
	t->idx = LOOP__NOT_ARMED;
	struct loop_timer *last = loop->heap[--loop->nheap];
	if (last == t)
		return;
	loop__heap_place(loop, i, last);
	loop__heap_down(loop, i);
	loop__heap_up(loop, last->idx);
}

struct loop_timer *loop_timer_new(struct loop *loop, loop_timer_cb cb, void *data)
{
	struct loop_timer *t = xcalloc(1, sizeof(*t));
	t->loop = loop;
	t->cb = cb;
	t->data = data;
	t->idx = LOOP__NOT_ARMED;
	return t;
}

static uint64_t loop__ms_to_ns(uint64_t ms)
{
	/* Anything past ~290 years is "never" in practice; avoid overflow. */
	const uint64_t max_ms = UINT64_MAX / 4 / 1000000u;
	return (ms > max_ms ? max_ms : ms) * 1000000u;
}

void loop_timer_start(struct loop_timer *t, uint64_t delay_ms, uint64_t period_ms)
{
	struct loop *loop = t->loop;
	if (t->idx != LOOP__NOT_ARMED)
		loop__heap_remove(loop, t);
	t->deadline_ns = loop__now_ns() + loop__ms_to_ns(delay_ms);
	if (t->deadline_ns == 0)
		t->deadline_ns = 1; /* 0 would disarm the timerfd */
	t->period_ns = loop__ms_to_ns(period_ms);
	loop__heap_push(loop, t);
}

void loop_timer_stop(struct loop_timer *t)
{
	if (t->idx != LOOP__NOT_ARMED)
		loop__heap_remove(t->loop, t);
}

bool loop_timer_armed(const struct loop_timer *t)
{
	return t->idx != LOOP__NOT_ARMED;
}

void loop_timer_free(struct loop_timer *t)
{
	if (!t)
		return;
	loop_timer_stop(t);
	free(t);
}

static int loop__arm_timerfd(struct loop *loop, struct error **err)
{
	uint64_t want = loop->nheap ? loop->heap[0]->deadline_ns : 0;
	if (want == loop->armed_ns)
		return 0;
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)(want / 1000000000u),
			 .tv_nsec = (long)(want % 1000000000u)},
	};
	/* A deadline already past fires at once, which is what we want. */
	if (timerfd_settime(loop->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return error_set(err, errno, "timerfd_settime: %s", strerror(errno));
	loop->armed_ns = want;
	return 0;
}

static void loop__on_timerfd(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	(void)data;
	uint64_t expirations;
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return;
	loop->armed_ns = 0; /* a one-shot timerfd disarms when it expires */

	/* Fire what was due when we looked, and only timers started before
	 * this turn: a callback that restarts a timer with no delay must not
	 * keep us here forever. Those left over fire on the next turn. */
	uint64_t now = loop__now_ns();
	uint64_t limit = loop->timer_seq;
	while (loop->nheap > 0) {
		struct loop_timer *t = loop->heap[0];
		if (t->deadline_ns > now || t->seq >= limit)
			break;
		loop__heap_remove(loop, t);
		if (t->period_ns) {
			/* Re-arm before the callback, which may stop or free. */
			uint64_t next = t->deadline_ns + t->period_ns;
			t->deadline_ns = next > now ? next : now + t->period_ns;
			loop__heap_push(loop, t);
		}
		t->cb(loop, t, t->data);
	}
}

/* File events. */

static uint32_t loop__epoll_events(unsigned mask)
{
	uint32_t ev = 0;
	if (mask & LOOP_READ)
		ev |= EPOLLIN;
	if (mask & LOOP_WRITE)
		ev |= EPOLLOUT;
	return ev;
}

int loop_add_fd(struct loop *loop, int fd, unsigned mask, loop_fd_cb cb, void *data,
		struct error **err)
{
	if (fd < 0 || !cb || mask == 0 || (mask & ~(unsigned)(LOOP_READ | LOOP_WRITE)))
		return error_set(err, EINVAL, "loop_add_fd: bad arguments for fd %d", fd);
	if ((size_t)fd < loop->nfds && loop->fds[fd].mask)
		return error_set(err, EEXIST, "loop_add_fd: fd %d is already registered", fd);
	struct epoll_event ev = {.events = loop__epoll_events(mask), .data.fd = fd};
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return error_set(err, errno, "epoll_ctl add fd %d: %s", fd, strerror(errno));
	if ((size_t)fd >= loop->nfds) {
		size_t n = loop->nfds ? loop->nfds : 16;
		while (n <= (size_t)fd)
			n *= 2;
		loop->fds = xrealloc(loop->fds, n * sizeof(*loop->fds));
		memset(loop->fds + loop->nfds, 0, (n - loop->nfds) * sizeof(*loop->fds));
		loop->nfds = n;
	}
	loop->fds[fd] = (struct loop__fd){.mask = mask, .cb = cb, .data = data};
	return 0;
}

int loop_mod_fd(struct loop *loop, int fd, unsigned mask, struct error **err)
{
	if (fd < 0 || (size_t)fd >= loop->nfds || !loop->fds[fd].mask)
		return error_set(err, ENOENT, "loop_mod_fd: fd %d is not registered", fd);
	if (mask == 0 || (mask & ~(unsigned)(LOOP_READ | LOOP_WRITE)))
		return error_set(err, EINVAL, "loop_mod_fd: bad mask %#x for fd %d", mask, fd);
	struct epoll_event ev = {.events = loop__epoll_events(mask), .data.fd = fd};
	if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return error_set(err, errno, "epoll_ctl mod fd %d: %s", fd, strerror(errno));
	loop->fds[fd].mask = mask;
	return 0;
}

void loop_del_fd(struct loop *loop, int fd)
{
	if (fd < 0 || (size_t)fd >= loop->nfds || !loop->fds[fd].mask)
		return;
	/* Fails only if the fd was closed first, which removed it anyway. */
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
	loop->fds[fd] = (struct loop__fd){0};
}

/* Signals. */

static void loop__on_signalfd(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	(void)data;
	struct signalfd_siginfo si[16];
	for (;;) {
		ssize_t n = read(fd, si, sizeof(si));
		if (n <= 0)
			return; /* EAGAIN: drained */
		for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
			int signo = (int)si[i].ssi_signo;
			if (signo > 0 && signo < NSIG && loop->sigs[signo].cb)
				loop->sigs[signo].cb(loop, signo, loop->sigs[signo].data);
		}
	}
}

static void loop__set_blocked(int signo, bool blocked)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, signo);
	pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

int loop_on_signal(struct loop *loop, int signo, loop_signal_cb cb, void *data, struct error **err)
{
	if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP)
		return error_set(err, EINVAL, "loop_on_signal: cannot handle signal %d", signo);
	bool had = sigismember(&loop->sigmask, signo) == 1;
	if (!cb) {
		if (!had)
			return 0;
		sigdelset(&loop->sigmask, signo);
		signalfd(loop->sigfd, &loop->sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
		if (!loop->sigs[signo].was_blocked)
			loop__set_blocked(signo, false);
		loop->sigs[signo] = (struct loop__sig){0};
		return 0;
	}
	if (!had) {
		sigset_t old;
		pthread_sigmask(SIG_SETMASK, NULL, &old);
		loop->sigs[signo].was_blocked = sigismember(&old, signo) == 1;
		/* Block first: a signal in between stays pending for the fd. */
		loop__set_blocked(signo, true);
		sigaddset(&loop->sigmask, signo);
		int fd = signalfd(loop->sigfd, &loop->sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			sigdelset(&loop->sigmask, signo);
			if (!loop->sigs[signo].was_blocked)
				loop__set_blocked(signo, false);
			return error_set(err, e, "signalfd: %s", strerror(e));
		}
		if (loop->sigfd < 0) {
			loop->sigfd = fd;
			int r = loop_add_fd(loop, fd, LOOP_READ, loop__on_signalfd, NULL, err);
			if (r < 0)
				return r;
		}
	}
	loop->sigs[signo].cb = cb;
	loop->sigs[signo].data = data;
	return 0;
}

/* Hooks. */

struct loop_hook *loop_add_before_sleep(struct loop *loop, loop_hook_cb cb, void *data)
{
	struct loop_hook *h = xcalloc(1, sizeof(*h));
	h->cb = cb;
	h->data = data;
	loop->hooks = xrealloc(loop->hooks, (loop->nhooks + 1) * sizeof(*loop->hooks));
	loop->hooks[loop->nhooks++] = h;
	return h;
}

void loop_remove_hook(struct loop *loop, struct loop_hook *hook)
{
	if (!hook)
		return;
	if (loop->in_hooks) {
		hook->removed = true;
		return;
	}
	for (size_t i = 0; i < loop->nhooks; i++) {
		if (loop->hooks[i] == hook) {
			memmove(&loop->hooks[i], &loop->hooks[i + 1],
				(loop->nhooks - i - 1) * sizeof(*loop->hooks));
			loop->nhooks--;
			break;
		}
	}
	free(hook);
}

static bool loop__run_hooks(struct loop *loop)
{
	bool busy = false;
	size_t n = loop->nhooks; /* hooks added now run from the next turn */
	loop->in_hooks = true;
	for (size_t i = 0; i < n; i++) {
		struct loop_hook *h = loop->hooks[i];
		if (!h->removed && h->cb(loop, h->data))
			busy = true;
	}
	loop->in_hooks = false;
	size_t kept = 0;
	for (size_t i = 0; i < loop->nhooks; i++) {
		if (loop->hooks[i]->removed)
			free(loop->hooks[i]);
		else
			loop->hooks[kept++] = loop->hooks[i];
	}
	loop->nhooks = kept;
	return busy;
}

/* The loop. */

struct loop *loop_new(struct error **err)
{
	struct loop *loop = xcalloc(1, sizeof(*loop));
	loop->sigfd = -1;
	loop->timerfd = -1;
	sigemptyset(&loop->sigmask);
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		error_set(err, errno, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	loop->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (loop->timerfd < 0) {
		error_set(err, errno, "timerfd_create: %s", strerror(errno));
		goto fail;
	}
	if (loop_add_fd(loop, loop->timerfd, LOOP_READ, loop__on_timerfd, NULL, err) < 0)
		goto fail;
	return loop;
fail:
	loop_free(loop);
	return NULL;
}

void loop_free(struct loop *loop)
{
	if (!loop)
		return;
	/* Timers outliving the loop may still be stopped and freed. */
	for (size_t i = 0; i < loop->nheap; i++)
		loop->heap[i]->idx = LOOP__NOT_ARMED;
	for (int signo = 1; signo < NSIG; signo++)
		if (sigismember(&loop->sigmask, signo) == 1 && !loop->sigs[signo].was_blocked)
			loop__set_blocked(signo, false);
	for (size_t i = 0; i < loop->nhooks; i++)
		free(loop->hooks[i]);
	if (loop->sigfd >= 0)
		close(loop->sigfd);
	if (loop->timerfd >= 0)
		close(loop->timerfd);
	if (loop->epfd >= 0)
		close(loop->epfd);
	free(loop->hooks);
	free(loop->heap);
	free(loop->fds);
	free(loop);
}

void loop_freep(struct loop **loop)
{
	loop_free(*loop);
	*loop = NULL;
}

int loop_run_once(struct loop *loop, int timeout_ms, struct error **err)
{
	/* Work left by a hook, or a stop asked for by one: do not sleep. */
	if (loop__run_hooks(loop) || loop->stop)
		timeout_ms = 0;
	int r = loop__arm_timerfd(loop, err);
	if (r < 0)
		return r;
	struct epoll_event evs[LOOP__MAX_EVENTS];
	int n = epoll_wait(loop->epfd, evs, LOOP__MAX_EVENTS, timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		return error_set(err, errno, "epoll_wait: %s", strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;
		/* Re-read the table: an earlier callback may have changed it. */
		if ((size_t)fd >= loop->nfds || !loop->fds[fd].mask)
			continue;
		struct loop__fd *f = &loop->fds[fd];
		unsigned events = 0;
		if (evs[i].events & EPOLLIN)
			events |= LOOP_READ;
		if (evs[i].events & EPOLLOUT)
			events |= LOOP_WRITE;
		if (evs[i].events & (EPOLLERR | EPOLLHUP))
			events |= LOOP_READ | LOOP_WRITE;
		events &= f->mask;
		if (events)
			f->cb(loop, fd, events, f->data);
	}
	return 0;
}

int loop_run(struct loop *loop, struct error **err)
{
	int r = 0;
	while (!loop->stop) {
		r = loop_run_once(loop, -1, err);
		if (r < 0)
			break;
	}
	loop->stop = false;
	return r;
}

void loop_stop(struct loop *loop)
{
	loop->stop = true;
}
