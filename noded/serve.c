/* serve.c: see serve.h. The HTTP and TLS are libmicrohttpd's; the
 * client's certificate is checked here, on the GnuTLS session it gives,
 * because libmicrohttpd only asks for one. */
#include "serve.h"
#include "log.h"
#include "names.h"
#include "podlogs.h"
#include "util.h"

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
#define SERVE__FOLLOW_WAIT_MS 200 /* how often a followed log is looked at */

struct serve {
	struct MHD_Daemon *daemon;
	char *log_dir;
	char *cert, *key, *ca; /* PEM text: libmicrohttpd keeps pointers */
	atomic_bool stopping;
};

void serve_log_ref_clear(struct serve_log_ref *ref)
{
	free(ref->ns);
	free(ref->pod);
	free(ref->container);
	*ref = (struct serve_log_ref){0};
}

int serve_parse_log_path(const char *path, struct serve_log_ref *ref, struct error **err)
{
	*ref = (struct serve_log_ref){0};
	if (!path || strncmp(path, SERVE__PREFIX, strlen(SERVE__PREFIX)) != 0)
		return error_set(err, EINVAL, "not a log: only %s<namespace>/<pod>/<container>",
				 SERVE__PREFIX);
	const char *p = path + strlen(SERVE__PREFIX);
	char *part[3] = {NULL, NULL, NULL};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (i < 2 && p[n] != '/') || (i == 2 && p[n] != '\0')) {
			for (size_t k = 0; k < i; k++)
				free(part[k]);
			return error_set(err, EINVAL,
					 "not a log: want %s<namespace>/<pod>/<container>",
					 SERVE__PREFIX);
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

static enum MHD_Result serve__handle(void *cls, struct MHD_Connection *conn, const char *url,
				     const char *method, const char *version,
				     const char *upload_data, size_t *upload_data_size,
				     void **con_cls)
{
	(void)version;
	(void)upload_data;
	(void)con_cls;
	struct serve *s = cls;
	if (*upload_data_size)
		return MHD_NO; /* a GET has no body */
	if (!serve__client_ok(conn))
		return serve__reply_text(conn, MHD_HTTP_UNAUTHORIZED,
					 "a client certificate of the cluster CA is needed");
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
	if (!(s->cert = serve__read_pem("tls-cert-file", o->cert_file, err)) ||
	    !(s->key = serve__read_pem("tls-private-key-file", o->key_file, err)) ||
	    !(s->ca = serve__read_pem("client-ca-file", o->client_ca_file, err))) {
		serve_stop(s);
		return NULL;
	}
	s->daemon = MHD_start_daemon(
	    MHD_USE_TLS | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_ERROR_LOG,
	    (uint16_t)o->port, NULL, NULL, serve__handle, s, MHD_OPTION_SOCK_ADDR, &sin,
	    MHD_OPTION_HTTPS_MEM_CERT, s->cert, MHD_OPTION_HTTPS_MEM_KEY, s->key,
	    MHD_OPTION_HTTPS_MEM_TRUST, s->ca, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)SERVE_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
	    MHD_OPTION_EXTERNAL_LOGGER, serve__log, s, MHD_OPTION_END);
	if (!s->daemon) {
		error_set(err, EADDRINUSE,
			  "cannot serve logs on %s:%u (port in use, or a certificate or key "
			  "libmicrohttpd cannot read)",
			  o->address && *o->address ? o->address : "0.0.0.0", o->port);
		serve_stop(s);
		return NULL;
	}
	log_info("serving container logs on https://%s:%u%s (client certificates of %s)",
		 o->address && *o->address ? o->address : "0.0.0.0", o->port, SERVE__PREFIX,
		 o->client_ca_file);
	return s;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, true);
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	free(s->log_dir);
	free(s->cert);
	if (s->key) {
		explicit_bzero(s->key, strlen(s->key));
		free(s->key);
	}
	free(s->ca);
	free(s);
}
