/* names.c: Kubernetes name rules, checked by hand (no regex engine) and
 * explained in Kubernetes' own words, so that a manifest rejected here is
 * rejected for the reason kubectl users already know.
 *
 * Where Kubernetes would list several problems, the first one in its order
 * is reported: one error carries one message. */
#include "names.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define NAMES__DNS1123_LABEL_FMT     "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define NAMES__DNS1123_SUBDOMAIN_FMT NAMES__DNS1123_LABEL_FMT "(\\." NAMES__DNS1123_LABEL_FMT ")*"
#define NAMES__DNS1035_LABEL_FMT     "[a-z]([-a-z0-9]*[a-z0-9])?"
#define NAMES__QUALIFIED_FMT	     "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define NAMES__LABEL_VALUE_FMT	     "(" NAMES__QUALIFIED_FMT ")?"
#define NAMES__ENV_VAR_FMT	     "[-._a-zA-Z][-._a-zA-Z0-9]*"
#define NAMES__CONFIG_KEY_FMT	     "[-._a-zA-Z0-9]+"

/* Kubernetes' RegexError() spelling, double spaces included. */
#define NAMES__EG1(a)	    " (e.g. '" a "', "
#define NAMES__EG2(a, b)    " (e.g. '" a "',  or '" b "', "
#define NAMES__EG3(a, b, c) " (e.g. '" a "',  or '" b "',  or '" c "', "
#define NAMES__REGEX(fmt)   "regex used for validation is '" fmt "')"

#define NAMES__DNS1123_LABEL_MSG                                                                   \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric "                      \
	"characters or '-', and must start and end with an alphanumeric "                          \
	"character" NAMES__EG2("my-name", "123-abc") NAMES__REGEX(NAMES__DNS1123_LABEL_FMT)
#define NAMES__DNS1123_SUBDOMAIN_MSG                                                               \
	"a lowercase RFC 1123 subdomain must consist of lower case "                               \
	"alphanumeric characters, '-' or '.', and must start and end with an "                     \
	"alphanumeric character" NAMES__EG1("example.com")                                         \
	    NAMES__REGEX(NAMES__DNS1123_SUBDOMAIN_FMT)
#define NAMES__DNS1035_LABEL_MSG                                                                   \
	"a DNS-1035 label must consist of lower case alphanumeric characters "                     \
	"or '-', start with an alphabetic character, and end with an "                             \
	"alphanumeric character" NAMES__EG2("my-name", "abc-123")                                  \
	    NAMES__REGEX(NAMES__DNS1035_LABEL_FMT)
#define NAMES__QUALIFIED_MSG                                                                       \
	"must consist of alphanumeric characters, '-', '_' or '.', and must "                      \
	"start and end with an alphanumeric character" NAMES__EG3("MyName", "my.name", "123-abc")  \
	    NAMES__REGEX(NAMES__QUALIFIED_FMT)
#define NAMES__LABEL_VALUE_MSG                                                                     \
	"a valid label must be an empty string or consist of alphanumeric "                        \
	"characters, '-', '_' or '.', and must start and end with an "                             \
	"alphanumeric character" NAMES__EG3("MyValue", "my_value", "12345")                        \
	    NAMES__REGEX(NAMES__LABEL_VALUE_FMT)
#define NAMES__ENV_VAR_MSG                                                                         \
	"a valid environment variable name must consist of alphabetic "                            \
	"characters, digits, '_', '-', or '.', and must not start with a "                         \
	"digit" NAMES__EG3("my.env-name", "MY_ENV.NAME", "MyEnvName1")                             \
	    NAMES__REGEX(NAMES__ENV_VAR_FMT)
#define NAMES__CONFIG_KEY_MSG                                                                      \
	"a valid config key must consist of alphanumeric characters, '-', "                        \
	"'_' or '.'" NAMES__EG3("key.name", "KEY_NAME", "key-name")                                \
	    NAMES__REGEX(NAMES__CONFIG_KEY_FMT)

static bool names__lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool names__alnum(char c)
{
	return names__lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool names__alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* '-', '.' or '_'; never the terminating NUL, which strchr() would find. */
static bool names__punct(char c)
{
	return c != '\0' && strchr("-._", c);
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n). */
static bool names__is_dns1123_label(const char *s, size_t n)
{
	if (n == 0 || !names__lower_alnum(s[0]) || !names__lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!names__lower_alnum(s[i]) && s[i] != '-')
			return false;
	}
	return true;
}

/* Labels joined by single dots over s[0..n). */
static bool names__is_dns1123_subdomain(const char *s, size_t n)
{
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (!names__is_dns1123_label(s + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n). */
static bool names__is_qualified(const char *s, size_t n)
{
	if (n == 0 || !names__alnum(s[0]) || !names__alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!names__alnum(s[i]) && !names__punct(s[i]))
			return false;
	}
	return true;
}

/* Kubernetes' hasChDirPrefix(): such a key would name a directory when
 * projected into a volume. */
static int names__chdir_prefix(const char *s, struct error **err)
{
	if (strcmp(s, ".") == 0)
		return error_set(err, EINVAL, "must not be '.'");
	if (strcmp(s, "..") == 0)
		return error_set(err, EINVAL, "must not be '..'");
	if (strncmp(s, "..", 2) == 0)
		return error_set(err, EINVAL, "must not start with '..'");
	return 0;
}

int names_dns1123_label(const char *s, struct error **err)
{
	size_t n = strlen(s);
	if (n > 63)
		return error_set(err, EINVAL, "must be no more than 63 characters");
	if (names__is_dns1123_label(s, n))
		return 0;
	/* A valid subdomain that is no label can only be one with dots. */
	if (names__is_dns1123_subdomain(s, n))
		return error_set(err, EINVAL, "must not contain dots");
	return error_set(err, EINVAL, NAMES__DNS1123_LABEL_MSG);
}

int names_dns1123_subdomain(const char *s, struct error **err)
{
	size_t n = strlen(s);
	if (n > 253)
		return error_set(err, EINVAL, "must be no more than 253 characters");
	if (!names__is_dns1123_subdomain(s, n))
		return error_set(err, EINVAL, NAMES__DNS1123_SUBDOMAIN_MSG);
	return 0;
}

int names_dns1035_label(const char *s, struct error **err)
{
	size_t n = strlen(s);
	if (n > 63)
		return error_set(err, EINVAL, "must be no more than 63 characters");
	if (n == 0 || !(s[0] >= 'a' && s[0] <= 'z') || !names__is_dns1123_label(s, n))
		return error_set(err, EINVAL, NAMES__DNS1035_LABEL_MSG);
	return 0;
}

int names_qualified_name(const char *s, struct error **err)
{
	const char *slash = strchr(s, '/');
	const char *name = s;
	if (slash) {
		if (strchr(slash + 1, '/'))
			return error_set(err, EINVAL,
					 "a qualified name " NAMES__QUALIFIED_MSG
					 " with an optional DNS subdomain prefix "
					 "and '/' (e.g. 'example.com/MyName')");
		size_t plen = (size_t)(slash - s);
		if (plen == 0)
			return error_set(err, EINVAL, "prefix part must be non-empty");
		if (plen > 253)
			return error_set(err, EINVAL,
					 "prefix part must be no more than 253 "
					 "characters");
		if (!names__is_dns1123_subdomain(s, plen))
			return error_set(err, EINVAL, "prefix part " NAMES__DNS1123_SUBDOMAIN_MSG);
		name = slash + 1;
	}
	size_t n = strlen(name);
	if (n == 0)
		return error_set(err, EINVAL, "name part must be non-empty");
	if (n > 63)
		return error_set(err, EINVAL, "name part must be no more than 63 characters");
	if (!names__is_qualified(name, n))
		return error_set(err, EINVAL, "name part " NAMES__QUALIFIED_MSG);
	return 0;
}

int names_label_value(const char *s, struct error **err)
{
	size_t n = strlen(s);
	if (n > 63)
		return error_set(err, EINVAL, "must be no more than 63 characters");
	if (n > 0 && !names__is_qualified(s, n))
		return error_set(err, EINVAL, NAMES__LABEL_VALUE_MSG);
	return 0;
}

int names_port_name(const char *s, struct error **err)
{
	size_t n = strlen(s);
	if (n > 15)
		return error_set(err, EINVAL, "must be no more than 15 characters");
	bool charset = n > 0, letter = false;
	for (size_t i = 0; i < n; i++) {
		if (!names__lower_alnum(s[i]) && s[i] != '-')
			charset = false;
		else if (s[i] >= 'a' && s[i] <= 'z')
			letter = true;
	}
	if (!charset)
		return error_set(err, EINVAL,
				 "must contain only alpha-numeric characters "
				 "(a-z, 0-9), and hyphens (-)");
	if (!letter)
		return error_set(err, EINVAL, "must contain at least one letter (a-z)");
	if (strstr(s, "--"))
		return error_set(err, EINVAL, "must not contain consecutive hyphens");
	if (s[0] == '-' || s[n - 1] == '-')
		return error_set(err, EINVAL, "must not begin or end with a hyphen");
	return 0;
}

int names_env_var(const char *s, struct error **err)
{
	bool ok = names__alpha(s[0]) || names__punct(s[0]);
	for (size_t i = 1; ok && s[i]; i++)
		ok = names__alnum(s[i]) || names__punct(s[i]);
	if (!ok)
		return error_set(err, EINVAL, NAMES__ENV_VAR_MSG);
	return names__chdir_prefix(s, err);
}

int names_config_key(const char *s, struct error **err)
{
	size_t n = strlen(s);
	if (n > 253)
		return error_set(err, EINVAL, "must be no more than 253 characters");
	bool ok = n > 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = names__alnum(s[i]) || names__punct(s[i]);
	if (!ok)
		return error_set(err, EINVAL, NAMES__CONFIG_KEY_MSG);
	return names__chdir_prefix(s, err);
}

bool names_object_file(const char *file, size_t *namelen)
{
	size_t len = strlen(file);
	if (file[0] == '.' || file[0] == '#' || len <= 5 || strcmp(file + len - 5, ".yaml") != 0)
		return false;
	if (namelen)
		*namelen = len - 5;
	return true;
}
