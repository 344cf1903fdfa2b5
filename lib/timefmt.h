/* timefmt.h: RFC 3339 times as Kubernetes writes and reads them.
 *
 * metav1.Time is UTC to the second ("2026-11-30T09:12:04Z"); metav1.MicroTime
 * (a Lease's renewTime) carries microseconds. The parser is strict: a
 * complete date and time, an optional fraction of at least one digit, then
 * 'Z' or a numeric offset, every field in range, nothing after. */
#ifndef CORRAL_TIMEFMT_H
#define CORRAL_TIMEFMT_H

#include <stdint.h>
#include <time.h>

#define RFC3339_SIZE	   21 /* "2026-11-30T09:12:04Z" and its NUL */
#define RFC3339_MICRO_SIZE 28 /* "2026-11-30T09:12:04.123456Z" and its NUL */

/* t in UTC to the second (years 0 to 9999; others are clamped to them). */
void rfc3339_format(time_t t, char buf[static RFC3339_SIZE]);
/* usec (microseconds since the epoch) as a MicroTime. */
void rfc3339_format_micro(int64_t usec, char buf[static RFC3339_MICRO_SIZE]);
/* Seconds since the epoch of s into *out (a fraction is dropped); 0, or -1
 * if s is NULL or not an RFC 3339 date-time (then *out is untouched). */
int rfc3339_parse(const char *s, time_t *out);

#endif
