/* rexec.h: the client of remote exec (corral-exec(8) on a host that is not
 * the pod's node): an HTTPS connection to the node's server
 * (corral-noded(8)) with a client certificate of the cluster CA, upgraded
 * to the framed protocol of execframe.h, relaying this process's
 * standard input, output and error (or its terminal) to the command.
 *
 * TLS and the connection are libcurl's (CURLOPT_CONNECT_ONLY, then
 * curl_easy_send and curl_easy_recv); only the request's head and the
 * answer's status line and length are read here. */
#ifndef CORRAL_REXEC_H
#define CORRAL_REXEC_H

#include <stdbool.h>

#include "error.h"

struct rexec_opts {
	const char *base; /* https://HOST:PORT, the node's server */
	const char *node; /* its name, for messages */
	const char *ns, *pod, *container;
	char *const *argv;     /* the command, NULL-terminated */
	bool in;	       /* pass standard input */
	bool tty;	       /* a terminal (ours in raw mode when it is one) */
	const char *ca_file;   /* PEM: the cluster CA */
	const char *cert_file; /* PEM: our client certificate */
	const char *key_file;  /* PEM: its key */
	long timeout_ms;       /* to connect and to be answered */
};

/* The request's path and query: /exec/<ns>/<pod>/<container>?command=...
 * with every part escaped, and with a terminal of cols x rows (both not
 * 0), its size from the start. Pure. */
char *rexec_request_path(const struct rexec_opts *o, unsigned cols, unsigned rows);

/* Runs the command; returns its exit status (0..255; 128 + N when signal
 * N ended it, or when signal N made us leave), or a negative errno with
 * *err: EACCES (no certificate, or refused), ETIMEDOUT or ECONNREFUSED
 * (the node does not answer), ENOENT (no such pod or container, or it
 * does not run), EPROTO (the node broke the protocol), EIO. */
int rexec_run(const struct rexec_opts *o, struct error **err);

#endif
