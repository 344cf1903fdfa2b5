/* b64url.c: base64url without padding (b64url.h). */
#include "b64url.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>

static const char b64url__alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *b64url_encode(const void *p, size_t n)
{
	const unsigned char *in = p;
	char *out = xmalloc(n / 3 * 4 + 5);
	size_t o = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64url__alphabet[v >> 18 & 63];
		out[o++] = b64url__alphabet[v >> 12 & 63];
		out[o++] = b64url__alphabet[v >> 6 & 63];
		out[o++] = b64url__alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;
		out[o++] = b64url__alphabet[v >> 18 & 63];
		out[o++] = b64url__alphabet[v >> 12 & 63];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64url__alphabet[v >> 18 & 63];
		out[o++] = b64url__alphabet[v >> 12 & 63];
		out[o++] = b64url__alphabet[v >> 6 & 63];
	}
	out[o] = '\0';
	return out;
}

static int b64url__value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

char *b64url_decode(const char *s, size_t len, size_t *out_len)
{
	if (len % 4 == 1)
		return NULL;
	char *out = xmalloc(len / 4 * 3 + 3);
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < len; i++) {
		int v = b64url__value(s[i]);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(acc >> bits & 0xff);
		}
	}
	/* the bits left over must be zero (one spelling per value) */
	if (bits && (acc & ((1u << bits) - 1))) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}
