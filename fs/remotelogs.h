/* remotelogs.h: the logs/ view of pods whose output is on another host.
 *
 * A pod with no log folder on this machine, at least one container that
 * its status says has started, and a spec.nodeName whose Node reports
 * where its agent serves (status.addresses InternalIP and
 * status.daemonEndpoints.kubeletEndpoint.Port) is listed under
 * namespaces/<ns>/logs/<pod>/ with those containers; its files are read
 * from that node's corral-noded, GET /containerLogs/<ns>/<pod>/<container>
 * over HTTPS (libcurl), with the cluster CA and a client certificate.
 *
 * Nothing here runs on the session loop: the network requests (HEAD for a
 * size, a byte range for a read) run on threads of their own, each bounded
 * by a timeout, and reply to their FUSE request themselves. A node that
 * does not answer gives EIO (a read) or a size of 0 (a stat) within the
 * timeout; a log that is not there (any more) gives ENOENT. */
#ifndef CORRAL_FS_REMOTELOGS_H
#define CORRAL_FS_REMOTELOGS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "store.h"
#include "ynode.h"

#define REMOTELOGS_THREADS    4
#define REMOTELOGS_TIMEOUT_MS 5000 /* default: a whole request */
#define REMOTELOGS_CONNECT_MS 2000 /* at most: its connection */

struct remotelogs_opts {
	const char *ca_file;   /* PEM: the cluster CA, that signs the nodes */
	const char *cert_file; /* PEM: this client's certificate */
	const char *key_file;  /* PEM: its private key */
	uint64_t timeout_ms;   /* one request; 0: REMOTELOGS_TIMEOUT_MS */
};

struct remotelogs;

/* Remote logs read through store (pods and nodes looked up there); NULL
 * with *err when the files cannot be read. Call before any thread
 * starts (libcurl's global set-up). */
struct remotelogs *remotelogs_new(struct store *store, const struct remotelogs_opts *o,
				  struct error **err);
int remotelogs_start(struct remotelogs *rl, struct error **err);
void remotelogs_free(struct remotelogs *rl);

/* Whether a logs/ node's source is a remote log's URL. */
bool remotelogs_is_url(const char *source);

/* Whether the pod's status says container has started (it runs, or ran:
 * it has output). Pure. */
bool remotelogs_container_started(const struct ynode *pod, const char *container);

/* A remote pod's log folder or a container's log. */
struct remotelogs_ent {
	char *name;   /* "<pod>" or "<container>.log" */
	char *source; /* the URL */
};
void remotelogs_ents_free(struct remotelogs_ent *v, size_t n);

/* The pods among names[n] (pods of namespace ns with no local logs) whose
 * logs are on another node, with their URLs. Reads the store, not the
 * network. */
struct remotelogs_ent *remotelogs_pods(struct remotelogs *rl, const char *ns, char *const *names,
				       size_t n, size_t *nout);
/* The started containers of the remote pod ns/pod, whose folder is at
 * url. */
struct remotelogs_ent *remotelogs_containers(struct remotelogs *rl, const char *ns, const char *pod,
					     const char *url, size_t *nout);

/* Replies to a lookup (e) or getattr (st, ttl) of the remote log at url
 * from a thread, with its size from the node (0 if it does not answer). */
void remotelogs_reply_entry(struct remotelogs *rl, fuse_req_t req, const struct fuse_entry_param *e,
			    const char *url);
void remotelogs_reply_attr(struct remotelogs *rl, fuse_req_t req, const struct stat *st, double ttl,
			   const char *url);
/* Replies to a read of size bytes at off of the remote log at url from a
 * thread: the bytes, 0 past the end, or an errno (EIO: the node did not
 * answer in time or refused us; ENOENT: no such log there). */
void remotelogs_read(struct remotelogs *rl, fuse_req_t req, const char *url, size_t size,
		     off_t off);

#endif
