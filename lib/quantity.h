/* quantity.h: Kubernetes resource quantities ("250m", "0.5", "128Mi", "1G",
 * "1e3"), held exactly as a count of milli-units. */
#ifndef CORRAL_QUANTITY_H
#define CORRAL_QUANTITY_H

#include <stdint.h>

#include "error.h"

/* Parses s into milli-units (1 = 1m, 1000 = 1). Suffixes: m, k, M, G, T, P,
 * E (decimal), Ki, Mi, Gi, Ti, Pi, Ei (binary), e/E exponents; an optional
 * sign; a fraction. A value finer than 1m is rounded up, as Kubernetes does.
 * Out of range (beyond int64 milli) or malformed input is an error. */
int quantity_parse(const char *s, int64_t *milli, struct error **err);
/* Formats milli-units canonically ("250m", "2", "128Mi" when exact, else
 * the shortest decimal form). Writes at most size bytes including NUL. */
void quantity_format(int64_t milli, char *buf, unsigned size);

/* The formats of Kubernetes' resource.Quantity: which one a text is
 * written in (its suffix says), and the canonical text of a value in one,
 * as Kubernetes prints a sum (a quota's used) in the format of what was
 * added: "1800m", "2", "2k" (decimal), "1536Mi" (binary, which falls back
 * to decimal below 1024 or for a fraction), "2e3" (exponent). */
enum quantity_fmt { QUANTITY_DECIMAL_SI, QUANTITY_BINARY_SI, QUANTITY_DECIMAL_EXPONENT };
enum quantity_fmt quantity_fmt_of(const char *s);
void quantity_format_in(int64_t milli, enum quantity_fmt f, char *buf, unsigned size);

#endif
