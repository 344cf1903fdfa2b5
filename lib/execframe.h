/* execframe.h: the framed protocol of remote exec (corral-noded(8),
 * EXEC PROTOCOL), on the byte stream an HTTP Upgrade to
 * EXECFRAME_UPGRADE leaves between corral-exec and a node's server.
 *
 * A frame is 1 byte of stream id, 4 bytes of payload length (big-endian,
 * at most EXECFRAME_MAX) and the payload. The streams are Kubernetes'
 * channel.k8s.io ones: 0 standard input (client to node; an empty frame is
 * its end), 1 standard output and 2 standard error (node to client), 3 the
 * status (node to client, last: "exit N" or "error MESSAGE"), 4 a terminal
 * size (client to node: columns and rows, 2 bytes each, big-endian).
 *
 * Pure code, shared by both ends; it never reads or writes a socket. */
#ifndef CORRAL_EXECFRAME_H
#define CORRAL_EXECFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXECFRAME_UPGRADE "corral.exec.v1" /* the Upgrade header's token */
#define EXECFRAME_HEADER  5
#define EXECFRAME_MAX	  (64 * 1024) /* the largest payload */

enum execframe_stream {
	EXECFRAME_STDIN = 0,
	EXECFRAME_STDOUT = 1,
	EXECFRAME_STDERR = 2,
	EXECFRAME_STATUS = 3,
	EXECFRAME_RESIZE = 4,
};

/* A frame found in a buffer; payload points into that buffer. */
struct execframe {
	unsigned stream;
	const uint8_t *payload;
	size_t len;
};

/* Writes the header of a frame of stream with len bytes of payload. */
void execframe_header(uint8_t out[EXECFRAME_HEADER], unsigned stream, size_t len);

/* The first frame of buf[0..n): the bytes it takes (header and payload),
 * 0 when buf holds only part of one, -1 when it is no frame (an unknown
 * stream, or a length over EXECFRAME_MAX): the peer is to be dropped. */
long execframe_parse(const uint8_t *buf, size_t n, struct execframe *f);

/* A status payload: "exit N" (0..255) sets *code and returns 0; "error
 * MESSAGE" sets *msg (allocated) and returns 1; anything else is -1. */
int execframe_status_parse(const uint8_t *p, size_t n, int *code, char **msg);

/* A resize payload: 0 with *cols and *rows, -1 when it is not 4 bytes. */
int execframe_resize_parse(const uint8_t *p, size_t n, uint16_t *cols, uint16_t *rows);
void execframe_resize(uint8_t out[4], uint16_t cols, uint16_t rows);

/* The head of an HTTP/1.1 response in buf[0..n): its length up to and
 * with the blank line (> 0), with *status and *content_length (-1 when
 * absent); 0 when the head is not whole yet; -1 when it is no response
 * (a bad status line or Content-Length). */
long execframe_http_head(const char *buf, size_t n, int *status, long *content_length);

#endif
