/* b64url.h: base64url without padding (RFC 4648 §5), as JSON Web Tokens
 * write their header, claims and signature (RFC 7515 §2). */
#ifndef CORRAL_B64URL_H
#define CORRAL_B64URL_H

#include <stddef.h>

/* The n bytes at p as base64url, unpadded: malloc'd, NUL-terminated. */
char *b64url_encode(const void *p, size_t n);
/* Decodes len bytes of s (no padding, no line breaks; a trailing '=' is
 * refused): a malloc'd buffer with a NUL after its *out_len bytes, or NULL
 * if s is not base64url. */
char *b64url_decode(const char *s, size_t len, size_t *out_len);

#endif
