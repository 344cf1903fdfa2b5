/* execframe.c: see execframe.h. */
#include "execframe.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void execframe_header(uint8_t out[EXECFRAME_HEADER], unsigned stream, size_t len)
{
	out[0] = (uint8_t)stream;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

long execframe_parse(const uint8_t *buf, size_t n, struct execframe *f)
{
	if (n < 1)
		return 0;
	if (buf[0] > EXECFRAME_RESIZE)
		return -1;
	if (n < EXECFRAME_HEADER)
		return 0;
	uint32_t len = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 |
		       (uint32_t)buf[4];
	if (len > EXECFRAME_MAX)
		return -1;
	if (n - EXECFRAME_HEADER < len)
		return 0;
	*f = (struct execframe){.stream = buf[0], .payload = buf + EXECFRAME_HEADER, .len = len};
	return (long)(EXECFRAME_HEADER + len);
}

int execframe_status_parse(const uint8_t *p, size_t n, int *code, char **msg)
{
	if (n > 5 && n <= 8 && memcmp(p, "exit ", 5) == 0) {
		int v = 0;
		for (size_t i = 5; i < n; i++) {
			if (p[i] < '0' || p[i] > '9')
				return -1;
			v = v * 10 + (p[i] - '0');
		}
		if (v > 255 || (p[5] == '0' && n > 6))
			return -1;
		*code = v;
		return 0;
	}
	if (n >= 6 && memcmp(p, "error ", 6) == 0 && !memchr(p, '\0', n)) {
		*msg = xstrndup((const char *)p + 6, n - 6);
		return 1;
	}
	return -1;
}

int execframe_resize_parse(const uint8_t *p, size_t n, uint16_t *cols, uint16_t *rows)
{
	if (n != 4)
		return -1;
	*cols = (uint16_t)(p[0] << 8 | p[1]);
	*rows = (uint16_t)(p[2] << 8 | p[3]);
	return 0;
}

void execframe_resize(uint8_t out[4], uint16_t cols, uint16_t rows)
{
	out[0] = (uint8_t)(cols >> 8);
	out[1] = (uint8_t)cols;
	out[2] = (uint8_t)(rows >> 8);
	out[3] = (uint8_t)rows;
}

/* The value of a header line "Name: value" whose name is name, or NULL. */
static const char *execframe__header_value(const char *line, const char *end, const char *name)
{
	size_t nl = strlen(name);
	if ((size_t)(end - line) <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return NULL;
	const char *v = line + nl + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	return v;
}

long execframe_http_head(const char *buf, size_t n, int *status, long *content_length)
{
	const char *end = memmem(buf, n, "\r\n\r\n", 4);
	if (!end)
		return 0;
	/* "HTTP/1.x NNN reason" */
	if (end - buf < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)buf[7]) ||
	    buf[8] != ' ' || !isdigit((unsigned char)buf[9]) || !isdigit((unsigned char)buf[10]) ||
	    !isdigit((unsigned char)buf[11]) || (end - buf > 12 && buf[12] != ' '))
		return -1;
	*status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	*content_length = -1;
	const char *line = memmem(buf, (size_t)(end - buf) + 2, "\r\n", 2) + 2;
	while (line < end + 2) {
		const char *eol = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
		const char *v = execframe__header_value(line, eol, "Content-Length");
		if (v) {
			long len = 0;
			if (v == eol)
				return -1;
			for (; v < eol && *v != ' ' && *v != '\t'; v++) {
				if (!isdigit((unsigned char)*v) || len > 100000000L)
					return -1;
				len = len * 10 + (*v - '0');
			}
			*content_length = len;
		}
		line = eol + 2;
	}
	return (long)(end - buf) + 4;
}
