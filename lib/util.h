/* util.h: allocation that aborts on failure, and cleanup attributes.
 * Nothing here may fail softly: out of memory ends the process. */
#ifndef CORRAL_UTIL_H
#define CORRAL_UTIL_H

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* The n bytes at p, NUL bytes included, and a NUL after them. */
char *xmemdup0(const void *p, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

void cleanup_freep(void *p);
void cleanup_closep(int *fd);
void cleanup_fclosep(FILE **f);
void cleanup_closedirp(DIR **d);

#define cleanup_free   __attribute__((cleanup(cleanup_freep)))
#define cleanup_close  __attribute__((cleanup(cleanup_closep)))
#define cleanup_fclose __attribute__((cleanup(cleanup_fclosep)))
#define cleanup_dir    __attribute__((cleanup(cleanup_closedirp)))

/* Hand ownership out of a cleanup variable. */
#define steal_pointer(pp)                                                                          \
	({                                                                                         \
		__typeof__(*(pp)) steal__tmp = *(pp);                                              \
		*(pp) = NULL;                                                                      \
		steal__tmp;                                                                        \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Read a whole file; returns NULL with errno set on failure. */
char *util_read_file(const char *path, size_t *len);
/* The same for an object file of the mount (or any regular file), without
 * fstat() for its size: a short read is its end, as the mount serves an
 * object whole from one snapshot. Spares the mount a GETATTR round trip
 * for every file changed since it was last read. */
char *util_read_object_file(const char *path, size_t *len);
/* Write all of buf to fd, retrying on EINTR and short writes. */
int util_write_all(int fd, const void *buf, size_t len);
/* Standard base64 with padding, as Go decodes a []byte from JSON (line
 * breaks ignored): a malloc'd, NUL-terminated buffer (*len, if not NULL,
 * its length), or NULL if s is not base64, with the offset of the first
 * bad byte in *bad (if not NULL). */
char *util_base64_decode(const char *s, size_t *len, size_t *bad);
/* mkdir -p; returns 0 or -errno. */
int util_mkdir_p(const char *path, unsigned mode);
/* The time ms milliseconds after now on clock, for the timed waits
 * (pthread_cond_timedwait: CLOCK_REALTIME unless the condition was set to
 * another clock). */
struct timespec util_deadline(clockid_t clock, uint64_t ms);
/* ms milliseconds after start: its nanoseconds carried into seconds. */
struct timespec util_timespec_add_ms(struct timespec start, uint64_t ms);

#endif
