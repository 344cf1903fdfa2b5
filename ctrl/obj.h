/* obj.h: what the controllers read from objects and build into them:
 * names and keys, owner references, times, random name
 * suffixes. Pure functions over ynode trees; nothing here touches the
 * mount. */
#ifndef CORRAL_CTRL_OBJ_H
#define CORRAL_CTRL_OBJ_H

#include <stdbool.h>
#include <stdint.h>

#include "pod.h" /* pod_is_active(), pod_is_ready(), pod_is_available() */
#include "ynode.h"

/* The annotation on an owner that asks the garbage collector to orphan its
 * dependents (drop their ownerReferences) instead of deleting them. */
#define CTRL_ORPHAN_ANNOTATION "corral.io/orphan"
/* Kubernetes' label on a Deployment's ReplicaSets and pods. */
#define CTRL_HASH_LABEL			 "pod-template-hash"
#define CTRL_REVISION_ANNOTATION	 "deployment.kubernetes.io/revision"
#define CTRL_REVISION_HISTORY_ANNOTATION "deployment.kubernetes.io/revision-history"
#define CTRL_DESIRED_ANNOTATION		 "deployment.kubernetes.io/desired-replicas"
#define CTRL_MAX_ANNOTATION		 "deployment.kubernetes.io/max-replicas"
#define CTRL_DELETION_COST_ANNOTATION	 "controller.kubernetes.io/pod-deletion-cost"
/* Kubernetes' alphabet for generated names: no vowels, no 0, 1, 3. */
#define CTRL_NAME_ALPHABET "bcdfghjklmnpqrstvwxz2456789"

const char *obj_name(const struct ynode *o);
const char *obj_namespace(const struct ynode *o);
const char *obj_uid(const struct ynode *o);
const char *obj_rv(const struct ynode *o);
/* The integer at path, or def when absent or not an integer. */
long long obj_int(const struct ynode *o, const char *path, long long def);
/* metadata.annotations[key] / metadata.labels[key], or NULL. */
const char *obj_annotation(const struct ynode *o, const char *key);
const char *obj_label(const struct ynode *o, const char *key);
/* Whether the annotation's value reads as true. */
bool obj_annotation_true(const struct ynode *o, const char *key);
/* resourceVersion as a number (0 when missing). */
unsigned long long obj_rv_num(const char *rv);

/* "ns/name" (or "name" when ns is NULL or empty); malloc'd. */
char *obj_key(const char *ns, const char *name);
/* Splits "ns/name"; writes the namespace into ns (size bytes) and returns
 * the name, or NULL if key has no '/'. */
const char *obj_key_split(const char *key, char *ns, size_t size);
/* The path of an object below the mount: "namespaces/NS/PLURAL/NAME.yaml",
 * "PLURAL/NAME.yaml", or "namespaces/NAME.yaml" for a Namespace (lib's
 * treepath_object()). */
char *obj_path(const char *plural, const char *ns, const char *name);

/* Owner references: lib's ownerref_controller(), ownerref_new(),
 * ownerref_add() and ownerref_remove() (ownerref.h) by the names the
 * controllers know them by. */
const struct ynode *obj_controller_ref(const struct ynode *o);
struct ynode *obj_owner_ref_new(const char *api_version, const char *kind, const char *name,
				const char *uid, bool controller);
void obj_add_owner_ref(struct ynode *o, struct ynode *ref);
int obj_remove_owner_refs(struct ynode *o, const char *uid);

/* Times, with lib's rfc3339_parse() and rfc3339_format() (timefmt.h):
 * seconds since the epoch, -1 when s is not RFC 3339; buf holds at least
 * RFC3339_SIZE (21) bytes. */
int64_t obj_time_parse(const char *s);
void obj_time_format(int64_t t, char *buf);
/* Wall clock, seconds; tests may set it (0: the real clock). */
int64_t obj_now(void);
void obj_set_now(int64_t t);

/* Every label of want is on labels with the same value. */
bool labels_contain(const struct ynode *labels, const struct ynode *want);

/* n random characters of CTRL_NAME_ALPHABET into buf, NUL-terminated. */
void obj_random_suffix(char *buf, size_t n);
/* Kubernetes' generateName: base truncated to 58 characters, then 5
 * random ones; malloc'd. */
char *obj_generate_name(const char *base);

#endif
