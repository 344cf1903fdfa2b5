/* serve.h: this node's containers' output for other hosts, the kubelet's
 * GET /containerLogs/<ns>/<pod>/<container> over HTTPS (libmicrohttpd
 * with GnuTLS), so that a corral-fs on another host can show
 * namespaces/<ns>/logs/<pod>/<container>.log; and the kubelet's
 * /exec/<ns>/<pod>/<container>?command=...: an HTTP Upgrade to the framed
 * protocol of lib/execframe.h, the session run by execserve.h.
 *
 * Mutual TLS: the server presents a certificate of the cluster CA and
 * takes only clients whose certificate that CA signed (401 otherwise).
 * A request names a namespace, a pod and a container, each checked by
 * Kubernetes' name rules; the file served is the newest restart's log of
 * the newest instance of that pod under the log folder, opened one folder
 * at a time without following symbolic links: nothing outside the log
 * folder is ever read. Range requests (bytes=START-[END]) read part of a
 * log, HEAD gives its size, ?follow=true streams what it gains until the
 * client leaves. An exec names a pod of this node (its object read from
 * the mount) and a running container of it (its process found under the
 * agent's state folder). The server runs on threads of its own (one per
 * connection, at most SERVE_MAX_CONNECTIONS) and never touches the
 * agent's loop. */
#ifndef CORRAL_NODED_SERVE_H
#define CORRAL_NODED_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define SERVE_MAX_CONNECTIONS 64

struct serve_opts {
	const char *address;	    /* IPv4 to listen on; NULL or "": every one */
	unsigned port;		    /* the kubelet's is 10250 */
	const char *log_dir;	    /* /var/log/pods */
	const char *cert_file;	    /* PEM: the server's certificate */
	const char *key_file;	    /* PEM: its private key */
	const char *client_ca_file; /* PEM: the CA that signs clients */
	const char *mount;	    /* the cluster's mount; NULL: no exec */
	const char *node;	    /* this node's name */
	const char *state_dir;	    /* the agent's state (nodes/<node>/pods/...) */
};

/* What a request asks for: /containerLogs/<ns>/<pod>/<container> or
 * /exec/<ns>/<pod>/<container>. */
struct serve_log_ref {
	char *ns;
	char *pod;
	char *container;
};

/* Parses a request's (already unescaped) path; -EINVAL with a message for
 * anything else: another prefix, a missing or extra part, a name that
 * breaks its rule (so no "..", "/" or "_" can reach the disk). Pure. */
int serve_parse_log_path(const char *path, struct serve_log_ref *ref, struct error **err);
void serve_log_ref_clear(struct serve_log_ref *ref);
/* The same for /exec/<ns>/<pod>/<container>. Pure. */
int serve_parse_exec_path(const char *path, struct serve_log_ref *ref, struct error **err);

/* A Range header's one byte range within a file of size bytes: 0 with
 * *start and *len set; 1 when there is none or it is not one we serve (the
 * whole file is sent, as RFC 9110 allows); -1 when it starts at or past
 * the end (416). Pure. */
int serve_parse_range(const char *header, uint64_t size, uint64_t *start, uint64_t *len);

/* Opens the newest log of ref under log_dir (O_RDONLY, no symbolic link
 * followed); -ENOENT when there is none. */
int serve_open_log(const char *log_dir, const struct serve_log_ref *ref, struct error **err);

struct serve;

/* Reads the certificates and starts listening. */
struct serve *serve_start(const struct serve_opts *o, struct error **err);
/* Stops listening, ends the streams and waits for their threads. */
void serve_stop(struct serve *s);

#endif
