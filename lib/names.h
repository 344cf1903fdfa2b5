/* names.h: Kubernetes name rules. Each check returns 0 when s is valid and
 * otherwise -EINVAL with a message in Kubernetes' wording, e.g.
 * "a lowercase RFC 1123 label must consist of lower case alphanumeric
 * characters or '-', and must start and end with an alphanumeric character". */
#ifndef CORRAL_NAMES_H
#define CORRAL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63. */
int names_dns1123_label(const char *s, struct error **err);
/* DNS-1123 subdomain: labels joined by '.', at most 253. */
int names_dns1123_subdomain(const char *s, struct error **err);
/* DNS-1035 label (Service names): starts with a letter, at most 63. */
int names_dns1035_label(const char *s, struct error **err);
/* Label (and annotation) key: [prefix/]name, prefix a DNS-1123 subdomain of
 * at most 253, name at most 63 of [A-Za-z0-9._-] starting and ending with an
 * alphanumeric. */
int names_qualified_name(const char *s, struct error **err);
/* Label value: empty, or at most 63 of [A-Za-z0-9._-] starting and ending
 * with an alphanumeric. */
int names_label_value(const char *s, struct error **err);
/* An IANA service name (named ports): at most 15, [a-z0-9-], at least one
 * letter, no leading/trailing/double '-'. */
int names_port_name(const char *s, struct error **err);
/* C identifier-like environment variable name as Kubernetes allows:
 * [-._a-zA-Z][-._a-zA-Z0-9]*. */
int names_env_var(const char *s, struct error **err);
/* ConfigMap/Secret key: [-._a-zA-Z0-9]+, at most 253, not "." or "..". */
int names_config_key(const char *s, struct error **err);

/* Whether a file name in a folder of objects names an object: "NAME.yaml"
 * with a non-empty NAME, not beginning with '.' or '#' (those are editors'
 * and tools' temporaries: vim's .x.yaml.swp and 4913, emacs's #x.yaml#
 * and .#x.yaml, sed's sedXXXXXX, x.yaml~ backups). *namelen (may be NULL)
 * gets the length of NAME. */
bool names_object_file(const char *file, size_t *namelen);

#endif
