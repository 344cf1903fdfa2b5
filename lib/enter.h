/* enter.h: running a command inside a running container, the way `kubectl
 * exec` and the kubelet's exec probes do: in the container's cgroup and
 * namespaces (cgroup, IPC, UTS, network, PID, mount), under its root and in
 * its working directory, with its environment, its user, groups and
 * capabilities, and no_new_privs when it has it. All of that is read from
 * the container's first process (its /proc entry), so whatever started
 * the container, the command gets what the container got.
 *
 * Used by corral-noded's exec probes and by corral-exec(8). */
#ifndef CORRAL_ENTER_H
#define CORRAL_ENTER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* The first process of a container whose systemd-nspawn wrote its pid to
 * piddir/pid (corral-shim does): that nspawn's child. 0 when there is
 * none (not running). */
pid_t enter_target(const char *piddir);

/* To be called in a process made to become the command (a fresh child):
 * joins the container of process target and executes argv[0] (looked up
 * in the container's PATH) with argv. Because a new PID namespace holds
 * only the children of who joins it, this forks once more: the calling
 * process stays outside, passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on,
 * and ends as the command ends (its exit code, or its signal). With tty,
 * the command gets standard input as its controlling terminal (a new
 * session). Returns only on failure, before any fork: -errno and *err. */
int enter_exec(pid_t target, char *const argv[], bool tty, struct error **err);

/* Waits for child pid, passing SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
 * this process on to it; returns its wait status. One child at a time. */
int enter_wait(pid_t pid);

#endif
