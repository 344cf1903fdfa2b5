/* serve.c: see serve.h. The HTTP and TLS are libmicrohttpd's; the
 * client's certificate is checked here, on the GnuTLS session it gives,
 * because libmicrohttpd only asks for one. */
#include "serve.h"
#include "enter.h"
#include "execframe.h"
#include "execserve.h"
#include "log.h"
#include "names.h"
#include "pod.h"
#include "podlogs.h"
#include "util.h"
#include "ynode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SERVE__PREFIX	      "/containerLogs/"
#define SERVE__EXEC_PREFIX    "/exec/"
#define SERVE__MAX_ARGS	      4096 /* a command's words */
#define SERVE__FOLLOW_WAIT_MS 200  /* how often a followed log is looked at */

struct serve {
	struct MHD_Daemon *daemon;
	char *log_dir;
	char *cert, *key, *ca; /* PEM text: libmicrohttpd keeps pointers */
	atomic_bool stopping;
	char *mount, *node, *state; /* for exec; mount NULL: none */
	struct execserve *exec;	    /* the live exec sessions */
};

void serve_log_ref_clear(struct serve_log_ref *ref)
{
	free(ref->ns);
	free(ref->pod);
	free(ref->container);
	*ref = (struct serve_log_ref){0};
}

/* prefix<namespace>/<pod>/<container>, each part one name. */
static int serve__parse_path(const char *prefix, const char *what, const char *path,
			     struct serve_log_ref *ref, struct error **err)
{
	*ref = (struct serve_log_ref){0};
	if (!path || strncmp(path, prefix, strlen(prefix)) != 0)
		return error_set(err, EINVAL, "not %s: only %s<namespace>/<pod>/<container>", what,
				 prefix);
	const char *p = path + strlen(prefix);
	char *part[3] = {NULL, NULL, NULL};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (i < 2 && p[n] != '/') || (i == 2 && p[n] != '\0')) {
			for (size_t k = 0; k < i; k++)
				free(part[k]);
			return error_set(err, EINVAL,
					 "not %s: want %s<namespace>/<pod>/<container>", what,
					 prefix);
		}
		part[i] = xstrndup(p, n);
		p += n + (p[n] == '/');
	}
	ref->ns = part[0];
	ref->pod = part[1];
	ref->container = part[2];
	if (names_dns1123_label(ref->ns, err) < 0) {
		error_prefix(err, "namespace");
		goto bad;
	}
	if (names_dns1123_subdomain(ref->pod, err) < 0) {
		error_prefix(err, "pod");
		goto bad;
	}
	if (names_dns1123_label(ref->container, err) < 0) {
		error_prefix(err, "container");
		goto bad;
	}
	return 0;
bad:
	serve_log_ref_clear(ref);
	return -EINVAL;
}

int serve_parse_log_path(const char *path, struct serve_log_ref *ref, struct error **err)
{
	return serve__parse_path(SERVE__PREFIX, "a log", path, ref, err);
}

int serve_parse_exec_path(const char *path, struct serve_log_ref *ref, struct error **err)
{
	return serve__parse_path(SERVE__EXEC_PREFIX, "an exec", path, ref, err);
}

int serve_parse_range(const char *header, uint64_t size, uint64_t *start, uint64_t *len)
{
	if (!header || strncmp(header, "bytes=", 6) != 0)
		return 1;
	const char *p = header + 6;
	if (*p < '0' || *p > '9')
		return 1; /* a suffix range ("-500"): the whole file */
	char *end;
	errno = 0;
	unsigned long long a = strtoull(p, &end, 10);
	if (errno || *end != '-')
		return 1;
	p = end + 1;
	unsigned long long b = UINT64_MAX;
	if (*p) {
		if (*p < '0' || *p > '9')
			return 1;
		errno = 0;
		b = strtoull(p, &end, 10);
		if (errno || *end || b < a)
			return 1; /* several ranges, or none that makes sense */
	}
	if (a >= size)
		return -1;
	*start = a;
	*len = (b >= size ? size - 1 : b) - a + 1;
	return 0;
}

/* The folder of the newest instance of the pod under log_dir, opened. */
static int serve__open_instance(int root, const struct serve_log_ref *ref)
{
	int fd = dup(root);
	if (fd < 0)
		return -errno;
	cleanup_dir DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	cleanup_free char *best = NULL;
	struct timespec best_mtime = {0};
	struct dirent *de;
	while ((de = readdir(d))) {
		cleanup_free char *pod = NULL;
		struct stat st;
		if (!podlogs_instance(de->d_name, ref->ns, &pod) || strcmp(pod, ref->pod) != 0 ||
		    fstatat(root, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (podlogs_newer(de->d_name, &st.st_mtim, best, &best_mtime)) {
			free(best);
			best = xstrdup(de->d_name);
			best_mtime = st.st_mtim;
		}
	}
	if (!best)
		return -ENOENT;
	int r = openat(root, best, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

int serve_open_log(const char *log_dir, const struct serve_log_ref *ref, struct error **err)
{
	cleanup_close int root = open(log_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_set(err, errno, "%s: %s", log_dir, strerror(errno));
	cleanup_close int inst = serve__open_instance(root, ref);
	if (inst < 0) {
		int e = -inst;
		inst = -1;
		return error_set(err, e, "no logs of pod %s/%s", ref->ns, ref->pod);
	}
	int cfd = openat(inst, ref->container, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0)
		return error_set(err, ENOENT, "no logs of container %s of pod %s/%s",
				 ref->container, ref->ns, ref->pod);
	cleanup_dir DIR *cd = fdopendir(cfd);
	if (!cd) {
		close(cfd);
		return error_set(err, errno, "%s: %s", ref->container, strerror(errno));
	}
	long n = podlogs_newest_restart(cd);
	if (n < 0)
		return error_set(err, ENOENT, "container %s of pod %s/%s has no log yet",
				 ref->container, ref->ns, ref->pod);
	char name[32];
	snprintf(name, sizeof(name), "%ld.log", n);
	/* O_NONBLOCK: a FIFO put there must not hold the thread */
	int fd = openat(dirfd(cd), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return error_set(err, ENOENT, "the log of container %s of pod %s/%s is no file",
				 ref->container, ref->ns, ref->pod);
	}
	return fd;
}

/* ---- the server ---- */

/* A followed log: what it gains, until the client leaves or the server
 * stops. */
struct serve__stream {
	struct serve *s;
	int fd;
	int sock; /* the client's socket, watched for its leaving */
	uint64_t off;
};

static ssize_t serve__stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct serve__stream *st = cls;
	for (;;) {
		ssize_t r = pread(st->fd, buf, max, (off_t)st->off);
		if (r > 0) {
			st->off += (uint64_t)r;
			return r;
		}
		if (r < 0 && errno != EINTR)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		struct stat fst;
		if (atomic_load(&st->s->stopping) || fstat(st->fd, &fst) < 0 || fst.st_nlink == 0)
			return MHD_CONTENT_READER_END_OF_STREAM; /* stopping, or the log is gone */
		/* Nothing new: wait a little, unless the client has gone. */
		struct pollfd pfd = {.fd = st->sock, .events = POLLRDHUP};
		int pr = poll(&pfd, 1, SERVE__FOLLOW_WAIT_MS);
		if (pr > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
}

static void serve__stream_free(void *cls)
{
	struct serve__stream *st = cls;
	close(st->fd);
	free(st);
}

static enum MHD_Result serve__reply_text(struct MHD_Connection *conn, unsigned status,
					 const char *text)
{
	cleanup_free char *body = xasprintf("%s\n", text);
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Whether the client showed a certificate the cluster CA signed, valid
 * now. */
static bool serve__client_ok(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	gnutls_session_t session = (gnutls_session_t)ci->tls_session;
	unsigned n = 0;
	if (gnutls_certificate_type_get(session) != GNUTLS_CRT_X509 ||
	    !gnutls_certificate_get_peers(session, &n) || n == 0)
		return false;
	unsigned status = 0;
	return gnutls_certificate_verify_peers2(session, &status) == GNUTLS_E_SUCCESS &&
	       status == 0;
}

static bool serve__follow_asked(struct MHD_Connection *conn)
{
	const char *f = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "follow");
	return f && (strcmp(f, "true") == 0 || strcmp(f, "1") == 0);
}

/* ---- exec ---- */

/* One exec request, from its reply to its session's end. Two references:
 * the connection's, dropped when libmicrohttpd says the request is over,
 * and the session's, dropped at its end; a request that is never upgraded
 * (its client left first) has both dropped at once. */
struct serve__exec {
	atomic_int refs;
	bool upgraded; /* set on the connection's thread, read there */
	struct serve *s;
	struct execserve_req req;
	struct MHD_UpgradeResponseHandle *urh;
};

static void serve__exec_unref(struct serve__exec *x)
{
	if (atomic_fetch_sub(&x->refs, 1) == 1) {
		execserve_req_clear(&x->req);
		free(x);
	}
}

static void serve__exec_done(void *cls)
{
	struct serve__exec *x = cls;
	MHD_upgrade_action(x->urh, MHD_UPGRADE_ACTION_CLOSE);
	serve__exec_unref(x);
}

static void serve__upgraded(void *cls, struct MHD_Connection *conn, void *con_cls,
			    const char *extra_in, size_t extra_in_size, MHD_socket sock,
			    struct MHD_UpgradeResponseHandle *urh)
{
	(void)con_cls;
	struct serve__exec *x = cls;
	x->upgraded = true;
	x->urh = urh;
	struct error *err = NULL;
	if (atomic_load(&x->s->stopping)) {
		serve__exec_done(x);
		return;
	}
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (execserve_start(x->s->exec, sock, ci ? ci->connect_fd : -1, (const uint8_t *)extra_in,
			    extra_in_size, &x->req, serve__exec_done, x, &err) < 0) {
		log_warn("%s", err->msg);
		error_free(err);
		serve__exec_done(x);
	}
}

static void serve__completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			     enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	struct serve__exec *x = *con_cls;
	if (!x)
		return;
	*con_cls = NULL;
	if (!x->upgraded)
		serve__exec_unref(x); /* the session's, never taken */
	serve__exec_unref(x);
}

/* A request's arguments: the command's words in order, and the flags. */
struct serve__args {
	char **argv;
	size_t argc;
	bool bad;
};

static enum MHD_Result serve__arg(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	(void)kind;
	struct serve__args *a = cls;
	if (!key || strcmp(key, "command") != 0)
		return MHD_YES;
	if (a->argc >= SERVE__MAX_ARGS) {
		a->bad = true;
		return MHD_NO;
	}
	a->argv = xrealloc(a->argv, sizeof(char *) * (a->argc + 2));
	a->argv[a->argc++] = xstrdup(value ? value : "");
	a->argv[a->argc] = NULL;
	return MHD_YES;
}

/* A terminal's width or height from the query; 0 when absent or bad. */
static uint16_t serve__size(struct MHD_Connection *conn, const char *name)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
	char *end;
	unsigned long n = v && *v >= '0' && *v <= '9' ? strtoul(v, &end, 10) : 0;
	return n && !*end && n <= UINT16_MAX ? (uint16_t)n : 0;
}

static bool serve__flag(struct MHD_Connection *conn, const char *name)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
	return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

/* The first process of the container ref names, when it is a container
 * of a pod of this node and runs; else 0 with an HTTP status and why. */
static pid_t serve__exec_target(struct serve *s, const struct serve_log_ref *ref, unsigned *status,
				char **why)
{
	cleanup_free char *path =
	    xasprintf("%s/namespaces/%s/pods/%s.yaml", s->mount, ref->ns, ref->pod);
	size_t len = 0;
	cleanup_free char *text = util_read_file(path, &len);
	cleanup_ynode struct ynode *pod = NULL;
	*status = MHD_HTTP_NOT_FOUND;
	if (!text) {
		*why = xasprintf("pods \"%s\" not found in namespace %s", ref->pod, ref->ns);
		return 0;
	}
	if (yaml_parse_one(text, len, &pod, NULL) < 0) {
		*status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		*why = xasprintf("pod %s/%s does not parse", ref->ns, ref->pod);
		return 0;
	}
	const char *node = ynode_path_str(pod, "spec.nodeName");
	const char *uid = ynode_path_str(pod, "metadata.uid");
	if (!node || strcmp(node, s->node) != 0 || !uid || strchr(uid, '/') || uid[0] == '.') {
		*why = xasprintf("pod %s/%s is not on node %s", ref->ns, ref->pod, s->node);
		return 0;
	}
	if (!pod_container(pod, ref->container)) {
		*why = xasprintf("container %s is not valid for pod %s", ref->container, ref->pod);
		return 0;
	}
	cleanup_free char *piddir =
	    xasprintf("%s/nodes/%s/pods/%s/c/%s", s->state, s->node, uid, ref->container);
	pid_t target = enter_target(piddir);
	if (!target) {
		*status = MHD_HTTP_CONFLICT;
		*why = xasprintf("container %s of pod %s/%s is not running", ref->container,
				 ref->ns, ref->pod);
	}
	return target;
}

static enum MHD_Result serve__exec(struct serve *s, struct MHD_Connection *conn, const char *url,
				   const char *method, void **con_cls)
{
	if (!s->mount)
		return serve__reply_text(conn, MHD_HTTP_NOT_FOUND, "this node serves no exec");
	if (atomic_load(&s->stopping))
		return serve__reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					 "the node agent stops");
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_POST) != 0)
		return serve__reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and POST");
	struct serve_log_ref ref;
	struct error *err = NULL;
	if (serve_parse_exec_path(url, &ref, &err) < 0) {
		enum MHD_Result r = serve__reply_text(conn, MHD_HTTP_BAD_REQUEST, err->msg);
		error_free(err);
		return r;
	}
	const char *up =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
	struct serve__args a = {0};
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, serve__arg, &a);
	struct execserve_req req = {.argv = a.argv,
				    .in = serve__flag(conn, "stdin"),
				    .tty = serve__flag(conn, "tty"),
				    .cols = serve__size(conn, "cols"),
				    .rows = serve__size(conn, "rows")};
	unsigned status = MHD_HTTP_BAD_REQUEST;
	cleanup_free char *why = NULL;
	if (!up || strcasecmp(up, EXECFRAME_UPGRADE) != 0)
		why = xstrdup("exec wants a connection upgraded to " EXECFRAME_UPGRADE
			      " (corral-noded(8), EXEC PROTOCOL)");
	else if (a.bad)
		why = xasprintf("a command of more than %d words", SERVE__MAX_ARGS);
	else if (!a.argc || !*a.argv[0])
		why = xstrdup("you must specify at least one command for the container");
	else
		req.target = serve__exec_target(s, &ref, &status, &why);
	if (why) {
		log_debug("exec %s: %s", url, why);
		serve_log_ref_clear(&ref);
		execserve_req_clear(&req);
		return serve__reply_text(conn, status, why);
	}
	log_info("exec in %s/%s/%s: %s%s%s", ref.ns, ref.pod, ref.container, req.argv[0],
		 req.in ? " (stdin)" : "", req.tty ? " (tty)" : "");
	serve_log_ref_clear(&ref);
	struct serve__exec *x = xcalloc(1, sizeof(*x));
	atomic_init(&x->refs, 2);
	x->s = s;
	x->req = req;
	struct MHD_Response *resp = MHD_create_response_for_upgrade(serve__upgraded, x);
	if (!resp) {
		execserve_req_clear(&x->req);
		free(x);
		return MHD_NO;
	}
	*con_cls = x;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, EXECFRAME_UPGRADE);
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result serve__handle(void *cls, struct MHD_Connection *conn, const char *url,
				     const char *method, const char *version,
				     const char *upload_data, size_t *upload_data_size,
				     void **con_cls)
{
	(void)version;
	(void)upload_data;
	struct serve *s = cls;
	if (*upload_data_size)
		return MHD_NO; /* a GET has no body */
	if (!serve__client_ok(conn))
		return serve__reply_text(conn, MHD_HTTP_UNAUTHORIZED,
					 "a client certificate of the cluster CA is needed");
	if (strncmp(url, SERVE__EXEC_PREFIX, strlen(SERVE__EXEC_PREFIX)) == 0)
		return serve__exec(s, conn, url, method, con_cls);
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	if (!head && strcmp(method, MHD_HTTP_METHOD_GET) != 0)
		return serve__reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
	struct serve_log_ref ref;
	struct error *err = NULL;
	if (serve_parse_log_path(url, &ref, &err) < 0) {
		enum MHD_Result r = serve__reply_text(
		    conn,
		    strncmp(url, SERVE__PREFIX, strlen(SERVE__PREFIX)) == 0 ? MHD_HTTP_BAD_REQUEST
									    : MHD_HTTP_NOT_FOUND,
		    err->msg);
		error_free(err);
		return r;
	}
	int fd = serve_open_log(s->log_dir, &ref, &err);
	serve_log_ref_clear(&ref);
	if (fd < 0) {
		enum MHD_Result r = serve__reply_text(
		    conn,
		    err->status == ENOENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
		    err->msg);
		error_free(err);
		return r;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return serve__reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, strerror(errno));
	}
	uint64_t size = (uint64_t)st.st_size;
	struct MHD_Response *resp = NULL;
	unsigned status = MHD_HTTP_OK;
	if (serve__follow_asked(conn) && !head) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct serve__stream *fs = xcalloc(1, sizeof(*fs));
		*fs = (struct serve__stream){.s = s, .fd = fd, .sock = ci ? ci->connect_fd : -1};
		resp = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, 64 * 1024, serve__stream_read, fs, serve__stream_free);
		if (!resp)
			serve__stream_free(fs); /* closes fd */
		fd = -1;
	} else {
		uint64_t start = 0, len = size;
		const char *range =
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
		int rr = serve_parse_range(range, size, &start, &len);
		if (rr < 0) {
			close(fd);
			fd = -1;
			resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
			char cr[64];
			snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
			if (resp)
				MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
			status = MHD_HTTP_RANGE_NOT_SATISFIABLE;
		} else {
			resp = MHD_create_response_from_fd_at_offset64(len, fd, start);
			if (resp)
				fd = -1; /* the response owns it from here */
			if (resp && rr == 0) {
				char cr[96];
				snprintf(cr, sizeof(cr), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64,
					 start, start + len - 1, size);
				MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
				status = MHD_HTTP_PARTIAL_CONTENT;
			}
		}
	}
	if (!resp) {
		if (fd >= 0)
			close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	enum MHD_Result ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void serve__log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	cleanup_free char *msg = xvasprintf(fmt, ap);
	size_t n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_warn("serve: %s", msg);
}

static char *serve__read_pem(const char *what, const char *path, struct error **err)
{
	if (!path || !*path) {
		error_set(err, EINVAL, "%s: no file given", what);
		return NULL;
	}
	size_t len;
	char *pem = util_read_file(path, &len);
	if (!pem)
		error_set(err, errno, "%s %s: %s", what, path, strerror(errno));
	return pem;
}

struct serve *serve_start(const struct serve_opts *o, struct error **err)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
	if (o->address && *o->address && inet_pton(AF_INET, o->address, &sin.sin_addr) != 1) {
		error_set(err, EINVAL, "serve-address: \"%s\" is not an IPv4 address", o->address);
		return NULL;
	}
	struct serve *s = xcalloc(1, sizeof(*s));
	s->log_dir = xstrdup(o->log_dir);
	if (o->mount && *o->mount) {
		s->mount = xstrdup(o->mount);
		s->node = xstrdup(o->node);
		s->state = xstrdup(o->state_dir);
		s->exec = execserve_new();
	}
	if (!(s->cert = serve__read_pem("tls-cert-file", o->cert_file, err)) ||
	    !(s->key = serve__read_pem("tls-private-key-file", o->key_file, err)) ||
	    !(s->ca = serve__read_pem("client-ca-file", o->client_ca_file, err))) {
		serve_stop(s);
		return NULL;
	}
	s->daemon = MHD_start_daemon(
	    MHD_USE_TLS | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE,
	    (uint16_t)o->port, NULL, NULL, serve__handle, s, MHD_OPTION_SOCK_ADDR, &sin,
	    MHD_OPTION_HTTPS_MEM_CERT, s->cert, MHD_OPTION_HTTPS_MEM_KEY, s->key,
	    MHD_OPTION_HTTPS_MEM_TRUST, s->ca, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)SERVE_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
	    MHD_OPTION_EXTERNAL_LOGGER, serve__log, s, MHD_OPTION_NOTIFY_COMPLETED,
	    serve__completed, s, MHD_OPTION_END);
	if (!s->daemon) {
		error_set(err, EADDRINUSE,
			  "cannot serve logs on %s:%u (port in use, or a certificate or key "
			  "libmicrohttpd cannot read)",
			  o->address && *o->address ? o->address : "0.0.0.0", o->port);
		serve_stop(s);
		return NULL;
	}
	log_info("serving container logs%s on https://%s:%u%s (client certificates of %s)",
		 s->exec ? " and exec" : "", o->address && *o->address ? o->address : "0.0.0.0",
		 o->port, SERVE__PREFIX, o->client_ca_file);
	return s;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, true);
	execserve_stop(s->exec); /* its sessions end their upgraded connections */
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	execserve_free(s->exec);
	free(s->log_dir);
	free(s->mount);
	free(s->node);
	free(s->state);
	free(s->cert);
	if (s->key) {
		explicit_bzero(s->key, strlen(s->key));
		free(s->key);
	}
	free(s->ca);
	free(s);
}
