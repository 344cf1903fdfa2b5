/* log.h: levelled logging to stderr. fatal is for start-up only. */
#ifndef CORRAL_LOG_H
#define CORRAL_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level level);
/* Parses "debug", "info", "warn", "error"; returns -1 if unknown. */
int log_parse_level(const char *s);
void log_set_ident(const char *ident);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
