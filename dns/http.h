/* http.h: the smallest HTTP/1.0-1.1 server that Prometheus and a health
 * probe need, on the daemon's loop.
 *
 * One GET per connection (Connection: close), a request of at most
 * HTTP_MAX_REQUEST bytes, read within HTTP_TIMEOUT_MS; anything else gets
 * 400, 404, 405 or 413 and the connection closes. */
#ifndef CORRAL_DNS_HTTP_H
#define CORRAL_DNS_HTTP_H

#include <stddef.h>

#include "error.h"
#include "loop.h"

#define HTTP_MAX_REQUEST 4096
#define HTTP_TIMEOUT_MS	 5000
#define HTTP_MAX_CONNS	 32

/* Fills a response for path: returns the status (200, 404), *body a
 * malloc'd body of *len bytes, *type its Content-Type. */
typedef int (*http_handler_fn)(void *data, const char *path, char **body, size_t *len,
			       const char **type);

struct http_server;

struct http_server *http_new(struct loop *loop, const char *addr, int port, http_handler_fn handler,
			     void *data, struct error **err);
void http_free(struct http_server *h);

/* Parses a request's first line; returns the status to answer with when
 * it is not a GET or HEAD of an absolute path (0 when it is), path
 * copied into out (size n, query string dropped). For the tests. */
int http_parse_request(const char *req, size_t len, char *out, size_t n, int *head);

#endif
