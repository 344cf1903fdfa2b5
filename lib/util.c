/* util.c: allocation that aborts, cleanup helpers, small file helpers. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void util__oom(void)
{
	fputs("corral: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		util__oom();
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		util__oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		util__oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		util__oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		util__oom();
	return p;
}

char *xmemdup0(const void *p, size_t n)
{
	char *q = xmalloc(n + 1);
	if (n)
		memcpy(q, p, n);
	q[n] = '\0';
	return q;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *p = NULL;
	if (vasprintf(&p, fmt, ap) < 0)
		util__oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void cleanup_freep(void *p)
{
	free(*(void **)p);
}

void cleanup_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

void cleanup_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* Reads fd to its end and closes it. A short read once min bytes are in
 * is the end (SIZE_MAX: only a read of 0 is); cap: the first buffer. */
static char *util__read_fd(int fd, size_t cap, size_t min, size_t *len)
{
	size_t n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		size_t want = cap - n - 1;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			free(buf);
			errno = e;
			return NULL;
		}
		n += (size_t)r;
		if (r == 0 || (n >= min && (size_t)r < want))
			break;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *util_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	bool sized = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	/* A regular file with a size ends at a short read: spares a last
	 * read (a FUSE round trip) to learn of the end. Files that say size
	 * 0 (/proc) are read until read returns 0. */
	return util__read_fd(fd, sized ? (size_t)st.st_size + 4096 : 4096,
			     sized ? (size_t)st.st_size : SIZE_MAX, len);
}

char *util_read_object_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	return util__read_fd(fd, 16384, 0, len);
}

int util_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int util_mkdir_p(const char *path, unsigned mode)
{
	cleanup_free char *copy = xstrdup(path);
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(copy, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int util__b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

char *util_base64_decode(const char *s, size_t *len, size_t *bad)
{
	size_t slen = strlen(s), n = 0, chars = 0, pad = 0;
	char *out = xmalloc(slen / 4 * 3 + 4);
	unsigned acc = 0, bits = 0;
	for (size_t i = 0; i < slen; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n' || ch == '\r')
			continue;
		if (ch == '=') {
			/* padding only ends a group of 2 or 3 characters */
			if (chars % 4 < 2 || pad >= 2)
				goto fail_at_i;
			pad++;
			chars++;
			continue;
		}
		int v = util__b64_value(ch);
		if (v < 0 || pad)
			goto fail_at_i;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		chars++;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
		continue;
	fail_at_i:
		free(out);
		if (bad)
			*bad = i;
		return NULL;
	}
	if (chars % 4) {
		free(out);
		if (bad)
			*bad = slen;
		return NULL;
	}
	out[n] = '\0';
	if (len)
		*len = n;
	return out;
}

struct timespec util_timespec_add_ms(struct timespec start, uint64_t ms)
{
	start.tv_sec += (time_t)(ms / 1000);
	start.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (start.tv_nsec >= 1000000000L) {
		start.tv_sec++;
		start.tv_nsec -= 1000000000L;
	}
	return start;
}

struct timespec util_deadline(clockid_t clock, uint64_t ms)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return util_timespec_add_ms(now, ms);
}
