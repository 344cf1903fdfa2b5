/* loop.h: the event loop every corral daemon runs on (after redis's ae).
 *
 * One thread, one epoll set: file events (inotify, sockets, pipes), timers on
 * the monotonic clock, signals through a signalfd, and before-sleep hooks.
 * Callbacks run on the loop's thread, one at a time, and must not block.
 * Nothing here may be called from another thread or from a signal handler.
 *
 * Teardown order: free what hangs on the loop (timers, hooks, the owners of
 * registered fds) before the loop itself. */
#ifndef CORRAL_LOOP_H
#define CORRAL_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct loop;
struct loop_timer;
struct loop_hook;

/* File event mask. An error or hang-up on the fd is reported as whatever of
 * READ and WRITE is registered, so that the next read() or write() sees it. */
enum {
	LOOP_READ = 1 << 0,
	LOOP_WRITE = 1 << 1,
};

typedef void (*loop_fd_cb)(struct loop *loop, int fd, unsigned events, void *data);
typedef void (*loop_timer_cb)(struct loop *loop, struct loop_timer *timer, void *data);
typedef void (*loop_signal_cb)(struct loop *loop, int signo, void *data);
/* Runs before each wait. Returns true when it left work undone: the loop then
 * polls without blocking and calls it again on the next turn. */
typedef bool (*loop_hook_cb)(struct loop *loop, void *data);

struct loop *loop_new(struct error **err);
/* Restores the signal mask that loop_on_signal() changed. */
void loop_free(struct loop *loop);
void loop_freep(struct loop **loop);
#define cleanup_loop __attribute__((cleanup(loop_freep)))

/* Runs until loop_stop(); returns 0, or negative if waiting failed. */
int loop_run(struct loop *loop, struct error **err);
/* One turn: hooks, a wait of at most timeout_ms (-1: until something
 * happens), then every callback due. For tests and embedding. */
int loop_run_once(struct loop *loop, int timeout_ms, struct error **err);
/* loop_run() returns once the current turn is over. */
void loop_stop(struct loop *loop);

/* Milliseconds on the monotonic clock (CLOCK_MONOTONIC). */
uint64_t loop_now_ms(void);

/* File events: one callback per fd, mask of LOOP_READ | LOOP_WRITE (not 0;
 * remove the fd instead). The caller keeps owning the fd and must remove it
 * before closing it. A callback may add, change or remove any fd; an fd that
 * is removed and reused within one turn may see one spurious callback, so
 * fds must be non-blocking. */
int loop_add_fd(struct loop *loop, int fd, unsigned mask, loop_fd_cb cb, void *data,
		struct error **err);
int loop_mod_fd(struct loop *loop, int fd, unsigned mask, struct error **err);
void loop_del_fd(struct loop *loop, int fd); /* no-op if not registered */

/* Timers belong to their creator, who frees them; a stopped timer costs
 * nothing but its memory. loop_timer_start() (re)arms: first expiry after
 * delay_ms, then every period_ms (0: one-shot, disarmed before the callback
 * runs). A periodic timer that falls behind skips the ticks it missed. A
 * callback may start, stop or free any timer, itself included. */
struct loop_timer *loop_timer_new(struct loop *loop, loop_timer_cb cb, void *data);
void loop_timer_start(struct loop_timer *t, uint64_t delay_ms, uint64_t period_ms);
void loop_timer_stop(struct loop_timer *t);
bool loop_timer_armed(const struct loop_timer *t);
void loop_timer_free(struct loop_timer *t); /* NULL is fine */

/* Delivers signo to cb on the loop (cb NULL: stop delivering it). The signal
 * is blocked in the calling thread, so call this from the main thread before
 * starting other threads. Signals of one kind that arrive together are
 * reported once: a SIGCHLD callback must reap every child that has exited. */
int loop_on_signal(struct loop *loop, int signo, loop_signal_cb cb, void *data, struct error **err);

/* Before-sleep hooks run in the order added. A hook may remove any hook,
 * itself included. */
struct loop_hook *loop_add_before_sleep(struct loop *loop, loop_hook_cb cb, void *data);
void loop_remove_hook(struct loop *loop, struct loop_hook *hook); /* NULL is fine */

#endif
