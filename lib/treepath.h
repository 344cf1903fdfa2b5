/* treepath.h: where an object lives in the tree, and back (DESIGN.md, "The
 * tree"): a namespaced object at namespaces/NS/PLURAL/NAME.yaml, a
 * cluster-scoped one at PLURAL/NAME.yaml, a Namespace at
 * namespaces/NAME.yaml. corral-fs's store keys are the same paths without
 * ".yaml". Paths are relative to the mount. */
#ifndef CORRAL_TREEPATH_H
#define CORRAL_TREEPATH_H

#include "error.h"

/* The parts of an object's path. */
struct treepath {
	char *ns;     /* NULL for a cluster-scoped object (a Namespace too) */
	char *plural; /* the kind's folder, "namespaces" for a Namespace */
	char *name;
};

/* The path of an object ("namespaces/dev/pods/web.yaml"); ns NULL or ""
 * for a cluster-scoped one; malloc'd. */
char *treepath_object(const char *plural, const char *ns, const char *name);
/* The store key of an object: its path without ".yaml"; malloc'd. */
char *treepath_key(const char *plural, const char *ns, const char *name);
/* The folder of a kind's objects: "namespaces/NS/PLURAL", or "PLURAL"
 * when ns is NULL or ""; plural NULL for the namespace's own folder
 * "namespaces/NS"; malloc'd. */
char *treepath_folder(const char *plural, const char *ns);
/* Splits a store key (treepath_parse_key) or an object's path
 * (treepath_parse, which wants NAME.yaml) into *tp: 0, or -EINVAL when it
 * is no object's (too few or many parts, an empty one). Free the parts with
 * treepath_clear(). */
int treepath_parse_key(const char *key, struct treepath *tp, struct error **err);
int treepath_parse(const char *path, struct treepath *tp, struct error **err);
void treepath_clear(struct treepath *tp);

#endif
