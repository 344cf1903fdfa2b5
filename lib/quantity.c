/* quantity.c: Kubernetes resource quantities as exact int64 milli-units.
 *
 * Grammar (as Kubernetes' resource.Quantity reads it):
 *   quantity ::= [+-] number suffix
 *   number   ::= digits | digits '.' [digits] | '.' digits
 *   suffix   ::= '' | n u m k M G T P E | Ki Mi Gi Ti Pi Ei
 *              | (e|E) [+-] digits          ("E" alone is exa)
 * The value is computed on the decimal digits themselves, never through a
 * double, so "0.1" is exactly 100m and a 30-digit mantissa with a matching
 * negative exponent still comes out exact. Never allocate per character of
 * input beyond one copy of the digits: the fuzzer feeds long strings. */
#include "quantity.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kubernetes' own wording, so that users recognise the message. */
#define QUANTITY__FORMAT_MSG                                                                       \
	"quantities must match the regular expression "                                            \
	"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define QUANTITY__SUFFIX_MSG "unable to parse quantity's suffix"
#define QUANTITY__RANGE_MSG  "quantity out of range (beyond 9223372036854775807 milli-units)"

/* Any exponent beyond this acts like infinity: no input can carry enough
 * digits to bring it back into range, so clamping keeps the arithmetic in
 * int64 without changing any result. */
#define QUANTITY__EXP_CLAMP 1000000000000000LL

static bool quantity__digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads the suffix at s: sets *pow10 and *pow1024 (value = number *
 * 10^pow10 * 1024^pow1024). Returns 0, or -1 if s is not one suffix. */
static int quantity__suffix(const char *s, int64_t *pow10, int *pow1024)
{
	/* Index 3 is the empty suffix: n is 10^-9, E is 10^18. */
	static const char dec[] = "num kMGTPE";
	*pow10 = 0;
	*pow1024 = 0;
	if (s[0] == '\0')
		return 0;
	if (s[1] == '\0') {
		/* One letter: a decimal prefix; "E" is exa, not exponent. */
		const char *p = strchr(dec, s[0]);
		if (!p || s[0] == ' ')
			return -1;
		*pow10 = 3 * ((p - dec) - 3);
		return 0;
	}
	if (s[1] == 'i' && s[2] == '\0') {
		const char *p = strchr("KMGTPE", s[0]);
		if (!p)
			return -1;
		*pow1024 = (int)(p - "KMGTPE") + 1;
		return 0;
	}
	if (s[0] != 'e' && s[0] != 'E')
		return -1;
	const char *p = s + 1;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return -1;
	int64_t e = 0;
	for (; *p; p++) {
		if (!quantity__digit(*p))
			return -1;
		if (e < QUANTITY__EXP_CLAMP)
			e = e * 10 + (*p - '0');
	}
	*pow10 = neg ? -e : e;
	return 0;
}

/* Multiplies the big-endian decimal digits in d[0..*n) by 1024, in place;
 * d has room for 4 more digits. */
static void quantity__mul1024(char *d, size_t *n)
{
	unsigned carry = 0;
	for (size_t i = *n; i-- > 0;) {
		unsigned v = (unsigned)d[i] * 1024 + carry;
		d[i] = (char)(v % 10);
		carry = v / 10;
	}
	size_t extra = 0;
	char head[4];
	while (carry) {
		head[extra++] = (char)(carry % 10);
		carry /= 10;
	}
	if (extra) {
		memmove(d + extra, d, *n);
		for (size_t i = 0; i < extra; i++)
			d[i] = head[extra - 1 - i];
		*n += extra;
	}
}

int quantity_parse(const char *s, int64_t *milli, struct error **err)
{
	if (!s)
		return error_set(err, EINVAL, QUANTITY__FORMAT_MSG);
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';

	const char *int_start = p;
	while (quantity__digit(*p))
		p++;
	size_t int_len = (size_t)(p - int_start);
	const char *frac_start = p;
	size_t frac_len = 0;
	if (*p == '.') {
		frac_start = ++p;
		while (quantity__digit(*p))
			p++;
		frac_len = (size_t)(p - frac_start);
	}
	if (int_len + frac_len == 0)
		return error_set(err, EINVAL, QUANTITY__FORMAT_MSG);

	/* What follows the number may only look like a suffix; anything else
	 * (a second '.', a space, a letter Kubernetes never uses) is a format
	 * error, and a suffix-like tail that is no suffix is a suffix error. */
	for (const char *q = p; *q; q++) {
		if (!strchr("eEinumkKMGTP+-0123456789", *q))
			return error_set(err, EINVAL, QUANTITY__FORMAT_MSG);
	}
	int64_t pow10;
	int pow1024;
	if (quantity__suffix(p, &pow10, &pow1024) < 0)
		return error_set(err, EINVAL, QUANTITY__SUFFIX_MSG);

	/* The mantissa's significant digits, as values 0..9, with room for
	 * up to six multiplications by 1024 (at most 4 digits each). */
	size_t cap = int_len + frac_len + 4 * 6 + 1;
	cleanup_free char *d = xmalloc(cap);
	size_t n = 0;
	for (size_t i = 0; i < int_len; i++) {
		if (n == 0 && int_start[i] == '0')
			continue;
		d[n++] = (char)(int_start[i] - '0');
	}
	for (size_t i = 0; i < frac_len; i++) {
		if (n == 0 && frac_start[i] == '0')
			continue;
		d[n++] = (char)(frac_start[i] - '0');
	}
	/* The digits kept stand for d * 10^scale milli-units. */
	int64_t scale = pow10 + 3 - (int64_t)frac_len;
	while (n > 0 && d[n - 1] == 0) {
		n--;
		scale++;
	}
	if (n == 0) {
		*milli = 0;
		return 0;
	}
	for (int i = 0; i < pow1024; i++)
		quantity__mul1024(d, &n);
	while (n > 0 && d[n - 1] == 0) {
		n--;
		scale++;
	}

	/* Integer digits of the milli value, then whether anything nonzero
	 * is left below 1m (there is, whenever scale < 0: the last digit is
	 * not a zero). 10^19 exceeds int64, so more than 19 digits is out. */
	int64_t int_digits = (int64_t)n + scale;
	if (int_digits > 19)
		return error_set(err, ERANGE, QUANTITY__RANGE_MSG);
	uint64_t mag = 0;
	size_t take = 0;
	if (int_digits > 0)
		take = int_digits < (int64_t)n ? (size_t)int_digits : n;
	for (size_t i = 0; i < take; i++) {
		if (__builtin_mul_overflow(mag, 10, &mag) ||
		    __builtin_add_overflow(mag, (uint64_t)d[i], &mag))
			return error_set(err, ERANGE, QUANTITY__RANGE_MSG);
	}
	for (int64_t i = (int64_t)take; i < int_digits; i++) {
		if (__builtin_mul_overflow(mag, 10, &mag))
			return error_set(err, ERANGE, QUANTITY__RANGE_MSG);
	}
	/* Finer than 1m rounds away from zero, as Kubernetes' ScaledValue
	 * does: a request of 0.1m is 1m, never zero. */
	if (scale < 0 && __builtin_add_overflow(mag, 1, &mag))
		return error_set(err, ERANGE, QUANTITY__RANGE_MSG);

	uint64_t limit = (uint64_t)INT64_MAX + (neg ? 1 : 0);
	if (mag > limit)
		return error_set(err, ERANGE, QUANTITY__RANGE_MSG);
	*milli = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

/* Length of the decimal form of v. */
static unsigned quantity__ulen(uint64_t v)
{
	unsigned len = 1;
	while (v >= 10) {
		v /= 10;
		len++;
	}
	return len;
}

void quantity_format(int64_t milli, char *buf, unsigned size)
{
	if (size == 0)
		return;
	const char *sign = milli < 0 ? "-" : "";
	uint64_t mag = milli < 0 ? 0 - (uint64_t)milli : (uint64_t)milli;

	/* Fractions stay in milli-units, as Kubernetes prints 1.5 as 1500m. */
	if (mag % 1000 != 0) {
		snprintf(buf, size, "%s%" PRIu64 "m", sign, mag);
		return;
	}
	uint64_t whole = mag / 1000;
	if (whole == 0) {
		snprintf(buf, size, "0");
		return;
	}

	static const char *const dec_suffix[] = {"", "k", "M", "G", "T", "P", "E"};
	uint64_t dec = whole;
	unsigned di = 0;
	while (di < 6 && dec % 1000 == 0) {
		dec /= 1000;
		di++;
	}
	static const char *const bin_suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	uint64_t bin = whole;
	unsigned bi = 0;
	while (bi < 6 && bin % 1024 == 0) {
		bin /= 1024;
		bi++;
	}
	/* The shorter spelling wins; on a tie the binary one, since an exact
	 * power-of-two multiple is almost always a memory size. */
	unsigned dec_len = quantity__ulen(dec) + (unsigned)strlen(dec_suffix[di]);
	unsigned bin_len = quantity__ulen(bin) + (unsigned)strlen(bin_suffix[bi]);
	if (bi > 0 && bin_len <= dec_len)
		snprintf(buf, size, "%s%" PRIu64 "%s", sign, bin, bin_suffix[bi]);
	else
		snprintf(buf, size, "%s%" PRIu64 "%s", sign, dec, dec_suffix[di]);
}

enum quantity_fmt quantity_fmt_of(const char *s)
{
	if (!s)
		return QUANTITY_DECIMAL_SI;
	size_t n = strlen(s);
	if (n >= 2 && s[n - 1] == 'i')
		return QUANTITY_BINARY_SI;
	/* An exponent is e/E followed by digits; "E" alone (or "1E") is exa. */
	const char *e = strpbrk(s, "eE");
	if (e && e[1] != '\0')
		return QUANTITY_DECIMAL_EXPONENT;
	return QUANTITY_DECIMAL_SI;
}

void quantity_format_in(int64_t milli, enum quantity_fmt f, char *buf, unsigned size)
{
	if (size == 0)
		return;
	const char *sign = milli < 0 ? "-" : "";
	uint64_t mag = milli < 0 ? 0 - (uint64_t)milli : (uint64_t)milli;
	if (mag == 0) {
		snprintf(buf, size, "0");
		return;
	}
	uint64_t whole = mag / 1000;
	/* Binary needs a whole number of at least 1024, as Kubernetes'
	 * CanonicalizeBytes: below that, or with a fraction, it is decimal. */
	if (f == QUANTITY_BINARY_SI && mag % 1000 == 0 && whole >= 1024) {
		static const char *const bin_suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
		unsigned bi = 0;
		while (bi < 6 && whole % 1024 == 0) {
			whole /= 1024;
			bi++;
		}
		snprintf(buf, size, "%s%" PRIu64 "%s", sign, whole, bin_suffix[bi]);
		return;
	}
	if (mag % 1000 != 0) {
		snprintf(buf, size, "%s%" PRIu64 "m", sign, mag);
		return;
	}
	static const char *const dec_suffix[] = {"", "k", "M", "G", "T", "P", "E"};
	unsigned di = 0;
	while (di < 6 && whole % 1000 == 0) {
		whole /= 1000;
		di++;
	}
	if (f == QUANTITY_DECIMAL_EXPONENT && di > 0)
		snprintf(buf, size, "%s%" PRIu64 "e%u", sign, whole, 3 * di);
	else
		snprintf(buf, size, "%s%" PRIu64 "%s", sign, whole, dec_suffix[di]);
}
