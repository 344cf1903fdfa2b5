/* error.h: the one error contract of corral.
 *
 * A fallible function takes `struct error **err` last. On failure it returns
 * a negative value (usually -status) and, when err is not NULL, leaves a
 * status (an errno value) and a message that says what and where. A caller
 * may add its own context in front with error_prefix(). Only the top of a
 * daemon's loop logs an error and frees it. *err must be NULL on entry. */
#ifndef CORRAL_ERROR_H
#define CORRAL_ERROR_H

struct error {
	int status; /* errno-style: EINVAL, ENOENT, EEXIST, ... */
	char *msg;  /* human-readable, no trailing newline */
};

/* Sets *err (if err is not NULL) and returns -status. */
int error_set(struct error **err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "context: " to the message. */
void error_prefix(struct error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_free(struct error *e);
void error_freep(struct error **e);

#define cleanup_error __attribute__((cleanup(error_freep)))

#endif
