/* validate_impl.h: what corral-fs's per-kind rules share, internal to
 * fs/validate.c and fs/kinds_*.c (nothing else includes it; the API is
 * validate.h's validate_object).
 *
 * fs/validate.c holds the engine every kind uses: the error collector and
 * field paths (struct vctx), typed field access, names, labels, selectors,
 * quantities, metadata, tree comparison and defaulting helpers. Each
 * fs/kinds_<group>.c holds one API group's kinds, each kind as one
 * `const struct kind_rules v_rules_<kind>` beside its check, defaults and
 * update functions.
 *
 * The join with lib/kinds.c: lib's table is built by enum kind_id, and
 * validate.c's registry is an array of rules indexed by the same enum, so
 * the rules of a write into k's folder are registry[kinds_id(k)] -- no
 * lookup by name, and a rule for an id lib does not have is a compile error
 * (the array has KIND_COUNT slots). Each rules value names its own id, so a
 * unit test (test_kinds__every_kind_has_rules) fails when a kind
 * in lib's table has no rules or a slot holds another kind's rules. Adding
 * a kind: an enum id and a row in lib/kinds.c, a kind_rules in its group's
 * file, one line in the registry, and its tests.
 *
 * Engine names carry the v_ prefix (they are extern across these files and
 * must not clash with the rest of corral-fs or libcorral). Checks only read
 * the document; defaults run once every check has passed. Nothing here does
 * I/O or looks at another object: that is the write path's admission
 * hooks' work. */
#ifndef CORRAL_VALIDATE_IMPL_H
#define CORRAL_VALIDATE_IMPL_H

#include "error.h"
#include "kinds.h"
#include "ynode.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VALIDATE_PATH_MAX   512		  /* longest field path kept in a message */
#define VALIDATE_MAX_ERRORS 16		  /* errors listed; the rest are counted */
#define VALIDATE_SHOW_MAX   120		  /* longest rendering of a value */
#define ANNOTATIONS_MAX	    (256 * 1024)  /* total size of keys and values */
#define CONFIG_DATA_MAX	    (1024 * 1024) /* ConfigMap and Secret payload */
#define INT32_LIMIT	    2147483647LL

enum { OPT = 0, REQ = 1 };

typedef int (*name_rule)(const char *s, struct error **err);

struct vctx {
	const struct kind_info *kind;
	const char *api_version;	 /* the document's apiVersion */
	bool host_network;		 /* the pod spec under check has hostNetwork */
	char path[VALIDATE_PATH_MAX];	 /* field under check */
	size_t plen;			 /* strlen(path) */
	char *msgs[VALIDATE_MAX_ERRORS]; /* "path: rule" */
	size_t nmsgs;
	size_t nmore; /* errors beyond VALIDATE_MAX_ERRORS */
};

struct sbuf {
	char *buf;
	size_t len, cap;
	bool full; /* stopped at VALIDATE_SHOW_MAX */
};

/* Kubernetes' IntOrString: a plain integer, or any string. */
struct intstr {
	bool is_int;
	long long i;
	const char *s;
};

/* A set of strings for duplicate checks that must stay linear however
 * long the list a document carries: lib's strmap (which copies its keys),
 * made on the first add so that a zeroed set is an empty one. */
struct strmap;
struct strset {
	struct strmap *m;
};

#define cleanup_strset __attribute__((cleanup(v_strset_free)))

/* Each map item of the list at key. */
#define for_each_map_item(list, i, it)                                                             \
	for (size_t i = 0; (list) && (list)->type == YNODE_SEQ && i < (list)->n; i++)              \
		if (((it) = ynode_item((list), i))->type == YNODE_MAP)

/* One kind's rules: what validate_object applies to a write into the
 * kind's folder. */
struct kind_rules {
	enum kind_id kind; /* the lib/kinds.c row these rules are for */
	name_rule name;	   /* metadata.name */
	void (*check)(struct vctx *c, struct ynode *obj);
	void (*defaults)(struct vctx *c, struct ynode *obj); /* may be NULL */
	/* carries what the server set and an update left out; may be NULL */
	void (*carry)(struct ynode *obj, const struct ynode *old);
	/* update rules on the defaulted new object; may be NULL */
	void (*update)(struct vctx *c, const struct ynode *obj, const struct ynode *old);
};

/* The rules for k (a row of lib's table), or NULL if it has none. */
const struct kind_rules *v_rules_for(const struct kind_info *k);

/* ---- the kinds, one per row of lib/kinds.c ---------------------------- */

/* kinds_core.c */
extern const struct kind_rules v_rules_namespace, v_rules_node, v_rules_persistent_volume,
    v_rules_pod, v_rules_service, v_rules_endpoints, v_rules_config_map, v_rules_secret,
    v_rules_persistent_volume_claim, v_rules_resource_quota, v_rules_service_account,
    v_rules_limit_range, v_rules_event;
/* kinds_apps.c */
extern const struct kind_rules v_rules_replication_controller, v_rules_replica_set,
    v_rules_deployment, v_rules_daemon_set, v_rules_stateful_set, v_rules_controller_revision;
/* kinds_batch.c */
extern const struct kind_rules v_rules_job, v_rules_cron_job;
/* kinds_autoscaling.c */
extern const struct kind_rules v_rules_horizontal_pod_autoscaler;
/* kinds_policy.c */
extern const struct kind_rules v_rules_pod_disruption_budget;
/* kinds_networking.c */
extern const struct kind_rules v_rules_network_policy, v_rules_ingress, v_rules_ingress_class;
/* kinds_coordination.c */
extern const struct kind_rules v_rules_lease;
/* kinds_scheduling.c */
extern const struct kind_rules v_rules_priority_class;
/* kinds_storage.c */
extern const struct kind_rules v_rules_storage_class;
/* kinds_metrics.c */
extern const struct kind_rules v_rules_pod_metrics, v_rules_node_metrics, v_rules_metric_value;

/* ---- the shared engine (validate.c) ----------------------------------- */

/* Field paths: push a key (or "[i]"), pop back to the mark it returned. */
size_t v_path_push(struct vctx *c, const char *key);
void v_path_pop(struct vctx *c, size_t mark);
char *v_path_entry(const char *key);
/* Growing strings capped at VALIDATE_SHOW_MAX, for values in messages. */
void v_sb_add(struct sbuf *b, const char *s);
void v_sb_quote(struct sbuf *b, const char *s);
char *v_sb_finish(struct sbuf *b);
/* Errors in Kubernetes' wording, each at the current path plus key (NULL:
 * the path itself): "spec.replicas: Invalid value: -1: must be ...". */
void v_err_required(struct vctx *c, const char *key, const char *detail);
void v_err_invalid_str(struct vctx *c, const char *key, const char *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void v_err_invalid_int(struct vctx *c, const char *key, long long v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void v_err_invalid_node(struct vctx *c, const char *key, const struct ynode *n, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));
void v_err_duplicate(struct vctx *c, const char *key, const char *s);
void v_err_not_found(struct vctx *c, const char *key, const char *s);
void v_err_forbidden(struct vctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void v_err_too_long(struct vctx *c, const char *key, size_t max);
void v_err_unsupported(struct vctx *c, const char *key, const char *s, const char *const *allowed);
/* Scalars: unset is absent or null; empty is unset, "" or an empty map or list. */
bool v_node_unset(const struct ynode *n);
bool v_node_empty(const struct ynode *n);
bool v_plain_octal(const char *s, long long *out);
bool v_scalar_int(const struct ynode *n, long long *out);
bool v_scalar_is_string(const struct ynode *n);
/* Typed field access: the value at key of map m, NULL (false) and an
 * error when it has the wrong type, or when it is missing and req is REQ. */
struct ynode *v_get_any(struct vctx *c, const struct ynode *m, const char *key, int req);
struct ynode *v_get_map(struct vctx *c, const struct ynode *m, const char *key, int req);
struct ynode *v_get_seq(struct vctx *c, const struct ynode *m, const char *key, int req);
const char *v_get_str(struct vctx *c, const struct ynode *m, const char *key, int req);
bool v_get_int(struct vctx *c, const struct ynode *m, const char *key, int req, long long *out);
bool v_get_i32(struct vctx *c, const struct ynode *m, const char *key, int req, long long *out);
bool v_get_bool(struct vctx *c, const struct ynode *m, const char *key, int req, bool *out);
bool v_streq(const char *a, const char *b);
bool v_in_list(const char *s, const char *const *list);
const char *v_get_enum(struct vctx *c, const struct ynode *m, const char *key, int req,
		       const char *const *allowed);
/* Value rules: each reports at key and returns whether the value passed. */
bool v_check_name(struct vctx *c, const char *key, const char *s, name_rule rule);
bool v_check_range(struct vctx *c, const char *key, long long v, long long lo, long long hi);
bool v_check_min(struct vctx *c, const char *key, long long v, long long lo);
bool v_get_i32_min(struct vctx *c, const struct ynode *m, const char *key, long long lo,
		   long long *out);
bool v_check_quantity(struct vctx *c, const char *key, const struct ynode *v, int64_t *milli);
bool v_is_ipv4(const char *s);
bool v_is_ip(const char *s);
bool v_check_ip(struct vctx *c, const char *key, const char *s);
bool v_check_cidr(struct vctx *c, const char *key, const char *s);
void v_check_port_ref(struct vctx *c, const struct ynode *m, const char *key, int req);
bool v_check_int_or_percent(struct vctx *c, const struct ynode *m, const char *key,
			    long long percent_max, long long *out, bool *pct);
struct ynode *v_check_str_list(struct vctx *c, const struct ynode *m, const char *key, int req,
			       name_rule rule);
/* Sets of strings for duplicate checks (cleanup_strset frees one). */
bool v_strset_has(const struct strset *set, const char *s);
bool v_strset_add(struct strset *set, const char *s);
bool v_strset_add_owned(struct strset *set, char *s);
void v_strset_free(struct strset *set);
/* Labels, annotations and label selectors, checked and matched. */
struct ynode *v_check_labels(struct vctx *c, const struct ynode *m, const char *key);
void v_check_annotations(struct vctx *c, const struct ynode *m);
struct ynode *v_check_label_selector(struct vctx *c, const struct ynode *m, const char *key,
				     int req);
bool v_sel_empty(const struct ynode *sel);
bool v_sel_matches(const struct ynode *sel, const struct ynode *labels);
bool v_map_selects(const struct ynode *sel, const struct ynode *labels);
void v_check_selector_selects(struct vctx *c, const struct ynode *sel, const struct ynode *t,
			      const char *what);
/* Comparing trees, for immutable fields and update rules. */
bool v_tree_diff(const struct ynode *a, const struct ynode *b, struct sbuf *path);
bool v_tree_equal(const struct ynode *a, const struct ynode *b);
void v_check_immutable(struct vctx *c, const struct ynode *obj, const struct ynode *old,
		       const char *path);
/* Defaulting: each sets key only where it is empty (v_node_empty). */
void v_default_str(struct ynode *m, const char *key, const char *s);
void v_default_int(struct ynode *m, const char *key, long long v);
void v_default_bool(struct ynode *m, const char *key, bool v);
struct ynode *v_default_map(struct ynode *m, const char *key);
/* Lists and nested specs. */
struct ynode *v_check_each(struct vctx *c, const struct ynode *m, const char *key, int req,
			   void (*fn)(struct vctx *c, struct ynode *it, void *arg), void *arg);
void v_del_if(struct ynode *m, const char *key);
void v_default_null_strings(struct ynode *map);
void v_check_template_metadata(struct vctx *c, const struct ynode *t, int req, name_rule rule);
void v_check_required_spec(struct vctx *c, struct ynode *obj,
			   void (*fn)(struct vctx *c, const struct ynode *spec));

/* ---- the pod spec (kinds_podspec.c), shared by Pod and the workloads ---- */
extern const char *const v_pv_sources[];
void v_check_volume_source(struct vctx *c, const struct ynode *v, const char *kind);
const char *v_check_one_source(struct vctx *c, const struct ynode *m, const char *const *sources);
extern const char *const v_restart_any[];
extern const char *const v_restart_always[];
extern const char *const v_restart_job[];
extern const char *const v_protocols[];
extern const char *const v_taint_effects[];
size_t v_count_present(const struct ynode *m, const char *const *keys, const char **first);
struct ynode *v_check_resource_list(struct vctx *c, const struct ynode *m, const char *key,
				    bool (*names)(const char *r), const char *what);
bool v_resource_of(const struct ynode *list, const char *r, int64_t *q);
void v_check_name_ref(struct vctx *c, struct ynode *r, void *arg);
void v_check_pod_spec(struct vctx *c, const struct ynode *spec, const char *const *restart,
		      bool restart_req);
struct ynode *v_check_pod_template(struct vctx *c, const struct ynode *m, const char *key,
				   const char *const *restart, bool restart_req);
/* The same, with claims (volumeClaimTemplates, may be NULL) naming volumes. */
struct ynode *v_check_pod_template_claims(struct vctx *c, const struct ynode *m, const char *key,
					  const char *const *restart, bool restart_req,
					  const struct ynode *claims);
void v_default_hostpath(struct ynode *owner);
void v_default_pod_spec(struct ynode *spec, bool pod);
void v_default_pod_template(struct ynode *owner, const char *path);

/* ---- core (kinds_core.c): PVC spec, shared with StatefulSet's claims ---- */
void v_check_pvc_spec(struct vctx *c, const struct ynode *spec);
void v_default_pvc_spec(struct ynode *spec);

#endif
