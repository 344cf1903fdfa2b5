/* execserve.h: the node's side of remote exec (corral-noded(8), EXEC
 * PROTOCOL): a command run in a container of this node for a client of
 * the log server (serve.h), over the socket an HTTP Upgrade left, in the
 * frames of lib/execframe.h.
 *
 * The container is entered by lib/enter.h, as corral-exec(8) and the exec
 * probes do. Each session runs on a thread of its own; the command's
 * standard output and error (or its terminal) go out as frames as they
 * come, standard input and terminal sizes come in, and its exit status
 * ends the session. A client that leaves, or a node agent that stops,
 * kills the command. Never touches the agent's loop. */
#ifndef CORRAL_NODED_EXECSERVE_H
#define CORRAL_NODED_EXECSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* What to run: a request's command, already checked. */
struct execserve_req {
	pid_t target;	     /* the container's first process (enter_target) */
	char **argv;	     /* NULL-terminated, allocated with each string */
	bool in;	     /* the client sends standard input */
	bool tty;	     /* the command gets a terminal */
	uint16_t cols, rows; /* its size from the start; 0: unknown */
};

void execserve_req_clear(struct execserve_req *req);

/* The live sessions of one server. */
struct execserve;

struct execserve *execserve_new(void);
/* Kills every session's command and waits for the sessions to end; a
 * session started after this ends at once. */
void execserve_stop(struct execserve *es);
/* Stops (if not yet) and frees. */
void execserve_free(struct execserve *es);

/* Runs req (taken over, cleared) over sock on a thread of its own. The
 * first extra_len bytes of the stream, already read, are in extra. peer
 * (or -1) is the client's own TCP socket, under the TLS that sock is
 * relayed from: only watched for the client's leaving, which the relay
 * does not pass on. done
 * is called once at the session's end, from its thread, after which sock
 * is never touched again (the server closes it). On failure (no thread)
 * nothing is taken and done is not called. */
int execserve_start(struct execserve *es, int sock, int peer, const uint8_t *extra,
		    size_t extra_len, struct execserve_req *req, void (*done)(void *cls), void *cls,
		    struct error **err);

#endif
