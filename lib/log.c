/* log.c: one line per message on stderr, with time, ident and level. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static enum log_level log__level = LOG_INFO;
static const char *log__ident = "corral";

void log_set_level(enum log_level level)
{
	log__level = level;
}

int log_parse_level(const char *s)
{
	static const char *names[] = {"debug", "info", "warn", "error"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

void log_set_ident(const char *ident)
{
	log__ident = ident;
}

static void log__vmsg(const char *lvl, const char *fmt, va_list ap)
{
	char stamp[32];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	char line[2048];
	int n = snprintf(line, sizeof(line), "%s.%03ldZ %s %s: ", stamp, ts.tv_nsec / 1000000,
			 log__ident, lvl);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = {"debug", "info", "warn", "error"};
	if (level < log__level)
		return;
	va_list ap;
	va_start(ap, fmt);
	log__vmsg(names[level], fmt, ap);
	va_end(ap);
}

void log_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log__vmsg("fatal", fmt, ap);
	va_end(ap);
	exit(1);
}
