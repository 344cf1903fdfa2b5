/* exec.h: running the few host tools the node agent drives (ip, nft) and
 * waiting for them, with what they print on error turned into the error's
 * message. Blocking: these tools answer in milliseconds. */
#ifndef CORRAL_NODED_EXEC_H
#define CORRAL_NODED_EXEC_H

#include <sys/types.h>

#include "error.h"

/* Runs argv (argv[0] looked up in PATH) with input (may be NULL) on its
 * standard input, inside the network namespace of netns_pid when it is
 * positive. Returns 0 when it exits 0; otherwise -1 with *err saying what
 * it printed on standard error (its last line), or how it ended. */
int exec_run(char *const argv[], const char *input, pid_t netns_pid, struct error **err);

/* Like exec_run() with no input, and what argv prints on standard output
 * in *out (malloc'd; NULL on failure). */
int exec_output(char *const argv[], pid_t netns_pid, char **out, struct error **err);

#endif
