/* sdnotify.h: the receiving end of systemd's notification protocol, as
 * systemd-nspawn speaks it to whoever set NOTIFY_SOCKET (READY=1 once the
 * container's first process runs, X_NSPAWN_LEADER_PID=...). corral-shim
 * waits on it for a container's start; bench/podbench on many at once.
 * Plain libc: it never logs and never allocates. */
#ifndef CORRAL_SDNOTIFY_H
#define CORRAL_SDNOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A datagram socket in the abstract namespace, its name chosen by the
 * kernel, that receives its senders' credentials; non-blocking. name gets
 * what NOTIFY_SOCKET must say ("@..."). -1 with errno when it cannot be
 * made, or when size is too small for the name. */
int sdnotify_open(char *name, size_t size);

/* The next queued message, NUL-terminated in buf (longer ones are cut),
 * and the pid that sent it (0: the kernel gave none). Its length, or -1
 * when nothing is queued (or on an error: errno). */
ssize_t sdnotify_recv(int fd, char *buf, size_t size, pid_t *sender);

/* Whether msg (newline-separated assignments) holds the line assignment
 * ("READY=1") exactly. */
bool sdnotify_has(const char *msg, const char *assignment);

/* The value of NAME= in msg (a pointer into msg, up to its line's end
 * excluded), or NULL. len gets its length. */
const char *sdnotify_value(const char *msg, const char *name, size_t *len);

#endif
