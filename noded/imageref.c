/* imageref.c: image references parsed and normalized (docker's grammar:
 * distribution/reference). Never touches the file system. */
#include "imageref.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool imageref_is_digest(const char *s)
{
	if (strncmp(s, "sha256:", 7) != 0)
		return false;
	s += 7;
	size_t n = 0;
	for (; s[n]; n++) {
		if (!strchr("0123456789abcdef", s[n]))
			return false;
	}
	return n == 64;
}

/* A path component: [a-z0-9]+ joined by '.', '_', "__" or any run of '-'. */
static bool imageref__component(const char *s, size_t n)
{
	if (n == 0 || (!islower((unsigned char)s[0]) && !isdigit((unsigned char)s[0])))
		return false;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (islower(c) || isdigit(c))
			continue;
		if (c == '.' || c == '_') {
			/* one '.', one '_' or "__", then an alphanumeric */
			size_t j = i + 1;
			if (c == '_' && j < n && s[j] == '_')
				j++;
			if (j >= n ||
			    !(islower((unsigned char)s[j]) || isdigit((unsigned char)s[j])))
				return false;
			i = j;
			continue;
		}
		if (c == '-') {
			size_t j = i;
			while (j < n && s[j] == '-')
				j++;
			if (j >= n ||
			    !(islower((unsigned char)s[j]) || isdigit((unsigned char)s[j])))
				return false;
			i = j;
			continue;
		}
		return false;
	}
	return true;
}

/* A registry: host labels of [A-Za-z0-9-] joined by '.', or a bracketed
 * IPv6 address, then an optional :port of digits. */
static bool imageref__domain(const char *s, size_t n)
{
	size_t host = n;
	const char *colon = NULL;
	if (n && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close || close == s + 1)
			return false;
		for (const char *p = s + 1; p < close; p++)
			if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
				return false;
		host = (size_t)(close - s) + 1;
		if (host < n && s[host] != ':')
			return false;
		colon = host < n ? s + host : NULL;
	} else {
		colon = memchr(s, ':', n);
		if (colon)
			host = (size_t)(colon - s);
		if (host == 0)
			return false;
		size_t label = 0;
		for (size_t i = 0; i < host; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c == '.') {
				if (label == 0 || s[i - 1] == '-')
					return false;
				label = 0;
				continue;
			}
			if (!isalnum(c) && c != '-')
				return false;
			if (c == '-' && label == 0)
				return false;
			label++;
		}
		if (label == 0 || s[host - 1] == '-')
			return false;
	}
	if (colon) {
		size_t digits = n - (size_t)(colon - s) - 1;
		if (digits == 0 || digits > 5)
			return false;
		for (const char *p = colon + 1; p < s + n; p++)
			if (!isdigit((unsigned char)*p))
				return false;
	}
	return true;
}

/* A tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}. */
static bool imageref__tag(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}

int imageref_parse(const char *ref, struct imageref *out, struct error **err)
{
	*out = (struct imageref){0};
	if (!ref || !*ref)
		return error_set(err, EINVAL, "an image reference must not be empty");
	cleanup_free char *r = xstrdup(ref);
	char *at = strchr(r, '@');
	if (at) {
		*at = '\0';
		if (!imageref_is_digest(at + 1))
			return error_set(err, EINVAL,
					 "\"%s\" is not an image reference: the digest after '@' "
					 "must be sha256: and 64 lower-case hex digits",
					 ref);
	}
	/* the tag: after the last ':' that follows the last '/' */
	char *slash = strrchr(r, '/');
	char *colon = strrchr(slash ? slash : r, ':');
	if (colon) {
		*colon = '\0';
		if (!imageref__tag(colon + 1))
			return error_set(err, EINVAL,
					 "\"%s\" is not an image reference: \"%s\" is not a tag",
					 ref, colon + 1);
	}
	char *name = r;
	cleanup_free char *domain = NULL;
	char *first = strchr(name, '/');
	if (first && (memchr(name, '.', (size_t)(first - name)) ||
		      memchr(name, ':', (size_t)(first - name)) ||
		      (first - name == 9 && strncmp(name, "localhost", 9) == 0))) {
		if (!imageref__domain(name, (size_t)(first - name)))
			return error_set(
			    err, EINVAL,
			    "\"%s\" is not an image reference: \"%.*s\" is not a registry", ref,
			    (int)(first - name), name);
		domain = xstrndup(name, (size_t)(first - name));
		name = first + 1;
	}
	if (!*name)
		return error_set(err, EINVAL, "\"%s\" is not an image reference: it names no image",
				 ref);
	for (char *p = name;;) {
		char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (!imageref__component(p, n))
			return error_set(
			    err, EINVAL,
			    "\"%s\" is not an image reference: \"%.*s\" must be lower-case "
			    "letters and digits, joined by '.', '_', '__' or '-'",
			    ref, (int)n, p);
		if (!end)
			break;
		p = end + 1;
	}
	if (!domain || strcmp(domain, "index.docker.io") == 0) {
		free(domain);
		domain = xstrdup("docker.io");
	}
	bool hub = strcmp(domain, "docker.io") == 0;
	char *path = hub && !strchr(name, '/') ? xasprintf("library/%s", name) : xstrdup(name);
	if (strlen(domain) + 1 + strlen(path) > IMAGEREF_NAME_MAX) {
		free(path);
		return error_set(err, EINVAL,
				 "\"%s\" is not an image reference: its name is longer than %d "
				 "characters",
				 ref, IMAGEREF_NAME_MAX);
	}
	out->domain = domain;
	domain = NULL;
	out->path = path;
	out->tag = colon ? xstrdup(colon + 1) : at ? NULL : xstrdup("latest");
	out->digest = at ? xstrdup(at + 1) : NULL;
	return 0;
}

void imageref_clear(struct imageref *r)
{
	free(r->domain);
	free(r->path);
	free(r->tag);
	free(r->digest);
	*r = (struct imageref){0};
}

char *imageref_repo(const struct imageref *r)
{
	return xasprintf("%s/%s", r->domain, r->path);
}

char *imageref_string(const struct imageref *r)
{
	return xasprintf("%s/%s%s%s%s%s", r->domain, r->path, r->tag ? ":" : "",
			 r->tag ? r->tag : "", r->digest ? "@" : "", r->digest ? r->digest : "");
}

const char *imageref_default_policy(const struct imageref *r)
{
	if (!r->digest && (!r->tag || strcmp(r->tag, "latest") == 0))
		return "Always";
	return "IfNotPresent";
}
