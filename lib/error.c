/* error.c: see error.h for the contract. */
#include "error.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>

int error_set(struct error **err, int status, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		char *msg = xvasprintf(fmt, ap);
		va_end(ap);
		if (*err) {
			/* Keep the first error; it is the cause. */
			free(msg);
		} else {
			*err = xmalloc(sizeof(**err));
			(*err)->status = status;
			(*err)->msg = msg;
		}
	}
	return status > 0 ? -status : -1;
}

void error_prefix(struct error **err, const char *fmt, ...)
{
	if (!err || !*err)
		return;
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *ctx = xvasprintf(fmt, ap);
	va_end(ap);
	char *msg = xasprintf("%s: %s", ctx, (*err)->msg);
	free((*err)->msg);
	(*err)->msg = msg;
}

void error_free(struct error *e)
{
	if (!e)
		return;
	free(e->msg);
	free(e);
}

void error_freep(struct error **e)
{
	error_free(*e);
	*e = NULL;
}
