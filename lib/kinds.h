/* kinds.h: the table of object kinds corral knows: kind name, folder
 * (lower-case plural), accepted apiVersions, scope, whether declared
 * changes of the kind enter the git history, and how corral-fs shows its
 * files. */
#ifndef CORRAL_KINDS_H
#define CORRAL_KINDS_H

#include <stdbool.h>
#include <stddef.h>

struct kind_info {
	const char *kind;	   /* "Pod" */
	const char *plural;	   /* "pods": the folder name */
	const char *api_versions[4]; /* accepted, first is canonical; NULL-ended */
	bool namespaced;	   /* lives under namespaces/<ns>/ */
	bool history;		   /* declared changes become commits */
	unsigned int file_mode;	   /* permission bits of its object files */
	bool namespace_object;	   /* an object is a namespace: namespaces/<name>.yaml
				      and the folder namespaces/<name>/ go together */
};

const struct kind_info *kinds_by_plural(const char *plural);
const struct kind_info *kinds_by_kind(const char *kind);
/* Whether apiVersion is one the kind accepts. */
bool kinds_api_version_ok(const struct kind_info *k, const char *api_version);
size_t kinds_count(void);
const struct kind_info *kinds_at(size_t i);

#endif
