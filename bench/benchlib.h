/* benchlib.h: what the benchmarks' C programs share (a monotonic clock in
 * milliseconds, an order of doubles for qsort); header-only, so that each
 * bench script still builds its program from one .c with plain cc. */
#ifndef CORRAL_BENCH_BENCHLIB_H
#define CORRAL_BENCH_BENCHLIB_H

#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC, for durations. */
static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qsort's comparison of two doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif
