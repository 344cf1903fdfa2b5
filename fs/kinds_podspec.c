/* kinds_podspec.c: the pod spec -- containers, volumes, probes, env,
 * resources, tolerations -- checked and defaulted for a Pod and for the pod
 * template of every workload (ReplicationController, ReplicaSet,
 * Deployment, DaemonSet, StatefulSet, Job, CronJob). Not a kind of its own:
 * the Pod kind is in kinds_core.c. */
#include "capability.h"
#include "names.h"
#include "quantity.h"
#include "util.h"
#include "validate_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- pod spec: volumes ------------------------------------------------ */

static const char *const volume_sources[] = {"hostPath",
					     "emptyDir",
					     "gcePersistentDisk",
					     "awsElasticBlockStore",
					     "gitRepo",
					     "secret",
					     "nfs",
					     "iscsi",
					     "glusterfs",
					     "persistentVolumeClaim",
					     "rbd",
					     "flexVolume",
					     "cinder",
					     "cephfs",
					     "flocker",
					     "downwardAPI",
					     "fc",
					     "azureFile",
					     "configMap",
					     "vsphereVolume",
					     "quobyte",
					     "azureDisk",
					     "photonPersistentDisk",
					     "projected",
					     "portworxVolume",
					     "scaleIO",
					     "storageos",
					     "csi",
					     "ephemeral",
					     "image",
					     NULL};

const char *const v_pv_sources[] = {"gcePersistentDisk",
				    "awsElasticBlockStore",
				    "hostPath",
				    "glusterfs",
				    "nfs",
				    "rbd",
				    "iscsi",
				    "cinder",
				    "cephfs",
				    "fc",
				    "flocker",
				    "flexVolume",
				    "azureFile",
				    "vsphereVolume",
				    "quobyte",
				    "azureDisk",
				    "photonPersistentDisk",
				    "portworxVolume",
				    "scaleIO",
				    "local",
				    "storageos",
				    "csi",
				    NULL};

static const char *const hostpath_types[] = {
    "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice",
    "BlockDevice",	 NULL};

static bool check_rel_path(struct vctx *c, const char *key, const char *s)
{
	if (s[0] == '/') {
		v_err_invalid_str(c, key, s, "must be a relative path");
		return false;
	}
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			v_err_invalid_str(c, key, s, "must not contain '..'");
			return false;
		}
		p += n;
		if (*p)
			p++;
	}
	return true;
}

static void check_mode(struct vctx *c, const struct ynode *m, const char *key)
{
	long long v = 0;
	if (v_get_i32(c, m, key, OPT, &v) && (v < 0 || v > 0777))
		v_err_invalid_int(c, key, v,
				  "must be a number between 0 and 0777 (octal), both inclusive");
}

static void check_key_to_path(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	v_get_str(c, it, "key", REQ);
	const char *p = v_get_str(c, it, "path", REQ);
	if (p)
		check_rel_path(c, "path", p);
	check_mode(c, it, "mode");
}

static void check_field_ref(struct vctx *c, const struct ynode *m, const char *key)
{
	struct ynode *f = v_get_map(c, m, key, OPT);
	if (!f)
		return;
	size_t mark = v_path_push(c, key);
	v_get_str(c, f, "fieldPath", REQ);
	v_get_str(c, f, "apiVersion", OPT);
	v_path_pop(c, mark);
}

static void check_resource_field_ref(struct vctx *c, const struct ynode *m, const char *key)
{
	struct ynode *f = v_get_map(c, m, key, OPT);
	if (!f)
		return;
	size_t mark = v_path_push(c, key);
	v_get_str(c, f, "resource", REQ);
	v_get_str(c, f, "containerName", OPT);
	struct ynode *d = v_get_any(c, f, "divisor", OPT);
	int64_t q = 0;
	if (d)
		v_check_quantity(c, "divisor", d, &q);
	v_path_pop(c, mark);
}

static void check_downward_item(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	const char *p = v_get_str(c, it, "path", REQ);
	if (p)
		check_rel_path(c, "path", p);
	check_field_ref(c, it, "fieldRef");
	check_resource_field_ref(c, it, "resourceFieldRef");
	check_mode(c, it, "mode");
}

static void check_hostpath(struct vctx *c, const struct ynode *src)
{
	v_get_str(c, src, "path", REQ);
	v_get_enum(c, src, "type", OPT, hostpath_types);
}

void v_check_volume_source(struct vctx *c, const struct ynode *v, const char *kind)
{
	struct ynode *src = v_get_map(c, v, kind, OPT);
	int64_t q = 0;
	if (!src && strcmp(kind, "emptyDir") != 0) {
		/* present but null: the fields it needs are missing */
		if (!ynode_get(v, kind) || v_node_unset(ynode_get(v, kind)))
			src = NULL;
		else
			return; /* wrong type, already reported */
	}
	size_t mark = v_path_push(c, kind);
	if (!strcmp(kind, "hostPath")) {
		check_hostpath(c, src);
	} else if (!strcmp(kind, "emptyDir")) {
		const char *medium = v_get_str(c, src, "medium", OPT);
		if (medium && *medium && strcmp(medium, "Memory") &&
		    strncmp(medium, "HugePages", 9)) {
			static const char *const media[] = {"", "Memory", "HugePages", NULL};
			v_err_unsupported(c, "medium", medium, media);
		}
		struct ynode *sl = v_get_any(c, src, "sizeLimit", OPT);
		if (sl)
			v_check_quantity(c, "sizeLimit", sl, &q);
	} else if (!strcmp(kind, "secret") || !strcmp(kind, "configMap")) {
		v_get_str(c, src, !strcmp(kind, "secret") ? "secretName" : "name", REQ);
		check_mode(c, src, "defaultMode");
		v_check_each(c, src, "items", OPT, check_key_to_path, NULL);
		bool b = false;
		v_get_bool(c, src, "optional", OPT, &b);
	} else if (!strcmp(kind, "persistentVolumeClaim")) {
		bool b = false;
		v_get_str(c, src, "claimName", REQ);
		v_get_bool(c, src, "readOnly", OPT, &b);
	} else if (!strcmp(kind, "nfs")) {
		v_get_str(c, src, "server", REQ);
		const char *p = v_get_str(c, src, "path", REQ);
		if (p && p[0] != '/')
			v_err_invalid_str(c, "path", p, "must be an absolute path");
	} else if (!strcmp(kind, "csi")) {
		v_get_str(c, src, "driver", REQ);
	} else if (!strcmp(kind, "local")) {
		v_get_str(c, src, "path", REQ);
	} else if (!strcmp(kind, "downwardAPI")) {
		check_mode(c, src, "defaultMode");
		v_check_each(c, src, "items", OPT, check_downward_item, NULL);
	} else if (!strcmp(kind, "projected")) {
		check_mode(c, src, "defaultMode");
		v_get_seq(c, src, "sources", OPT);
	}
	v_path_pop(c, mark);
}

/* Exactly one of sources must be present in m; returns it or NULL. */
const char *v_check_one_source(struct vctx *c, const struct ynode *m, const char *const *sources)
{
	const char *first = NULL;
	for (size_t i = 0; sources[i]; i++) {
		if (!ynode_get(m, sources[i]))
			continue;
		if (!first)
			first = sources[i];
		else
			v_err_forbidden(c, sources[i], "may not specify more than 1 volume type");
	}
	if (!first)
		v_err_required(c, NULL, "must specify a volume type");
	return first;
}

static void check_volume(struct vctx *c, struct ynode *v, void *arg)
{
	struct strset *names = arg;
	const char *name = v_get_str(c, v, "name", REQ);
	if (name && v_check_name(c, "name", name, names_dns1123_label) &&
	    !v_strset_add(names, name))
		v_err_duplicate(c, "name", name);
	else if (name)
		v_strset_add(names, name); /* mounts then find it: one error */
	const char *src = v_check_one_source(c, v, volume_sources);
	if (src)
		v_check_volume_source(c, v, src);
}

/* ---- pod spec: containers --------------------------------------------- */

const char *const v_restart_any[] = {"Always", "OnFailure", "Never", NULL};
const char *const v_restart_always[] = {"Always", NULL};
const char *const v_restart_job[] = {"OnFailure", "Never", NULL};
const char *const v_protocols[] = {"TCP", "UDP", "SCTP", NULL};
static const char *const pull_policies[] = {"Always", "IfNotPresent", "Never", NULL};
static const char *const message_policies[] = {"File", "FallbackToLogsOnError", NULL};
static const char *const propagations[] = {"None", "HostToContainer", "Bidirectional", NULL};
static const char *const dns_policies[] = {"ClusterFirstWithHostNet", "ClusterFirst", "Default",
					   "None", NULL};
static const char *const uri_schemes[] = {"HTTP", "HTTPS", NULL};
static const char *const toleration_ops[] = {"Exists", "Equal", NULL};
const char *const v_taint_effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
static const char *const env_sources[] = {"fieldRef", "resourceFieldRef", "configMapKeyRef",
					  "secretKeyRef", NULL};
static const char *const env_from_sources[] = {"configMapRef", "secretRef", NULL};
static const char *const probe_handlers[] = {"exec", "httpGet", "tcpSocket", "grpc", NULL};
static const char *const lifecycle_handlers[] = {"exec", "httpGet", "tcpSocket", "sleep", NULL};
static const char *const container_resources[] = {"cpu", "memory", "ephemeral-storage", NULL};

/* How many of keys m carries; the first through first. */
size_t v_count_present(const struct ynode *m, const char *const *keys, const char **first)
{
	size_t n = 0;
	for (size_t i = 0; keys[i]; i++)
		if (ynode_get(m, keys[i]) && n++ == 0 && first)
			*first = keys[i];
	return n;
}

static void check_container_port(struct vctx *c, struct ynode *p, void *arg)
{
	struct strset *names = arg;
	long long cp = 0, hp = 0;
	bool have_cp = v_get_i32(c, p, "containerPort", REQ, &cp) &&
		       v_check_range(c, "containerPort", cp, 1, 65535);
	if (v_get_i32(c, p, "hostPort", OPT, &hp) && hp != 0 &&
	    v_check_range(c, "hostPort", hp, 1, 65535) && c->host_network && have_cp && hp != cp)
		v_err_invalid_int(c, "hostPort", hp,
				  "must match `containerPort` when `hostNetwork` is true");
	v_get_enum(c, p, "protocol", OPT, v_protocols);
	const char *name = v_get_str(c, p, "name", OPT);
	if (name && *name && v_check_name(c, "name", name, names_port_name) &&
	    !v_strset_add(names, name))
		v_err_duplicate(c, "name", name);
	const char *ip = v_get_str(c, p, "hostIP", OPT);
	if (ip && *ip)
		v_check_ip(c, "hostIP", ip);
}

static void check_key_ref(struct vctx *c, const struct ynode *m, const char *key)
{
	struct ynode *r = v_get_map(c, m, key, OPT);
	if (!r)
		return;
	size_t mark = v_path_push(c, key);
	const char *k = v_get_str(c, r, "key", REQ);
	if (k)
		v_check_name(c, "key", k, names_config_key);
	v_get_str(c, r, "name", OPT);
	bool b = false;
	v_get_bool(c, r, "optional", OPT, &b);
	v_path_pop(c, mark);
}

static void check_env_var(struct vctx *c, struct ynode *e, void *arg)
{
	(void)arg;
	const char *name = v_get_str(c, e, "name", REQ);
	if (name)
		v_check_name(c, "name", name, names_env_var);
	const char *value = v_get_str(c, e, "value", OPT);
	struct ynode *vf = v_get_map(c, e, "valueFrom", OPT);
	if (!vf)
		return;
	if (value && *value)
		v_err_invalid_str(c, "valueFrom", "",
				  "may not be specified when `value` is not empty");
	size_t mark = v_path_push(c, "valueFrom");
	size_t n = v_count_present(vf, env_sources, NULL);
	if (n == 0)
		v_err_required(c, NULL,
			       "must specify one of: `fieldRef`, `resourceFieldRef`, "
			       "`configMapKeyRef` or `secretKeyRef`");
	else if (n > 1)
		v_err_invalid_node(c, NULL, vf,
				   "may not have more than one field specified at a time");
	check_field_ref(c, vf, "fieldRef");
	check_resource_field_ref(c, vf, "resourceFieldRef");
	check_key_ref(c, vf, "configMapKeyRef");
	check_key_ref(c, vf, "secretKeyRef");
	v_path_pop(c, mark);
}

static void check_env_from(struct vctx *c, struct ynode *e, void *arg)
{
	(void)arg;
	const char *prefix = v_get_str(c, e, "prefix", OPT);
	if (prefix && *prefix)
		v_check_name(c, "prefix", prefix, names_env_var);
	const char *src = NULL;
	size_t n = v_count_present(e, env_from_sources, &src);
	if (n == 0) {
		v_err_required(c, NULL, "must specify one of: `configMapRef` or `secretRef`");
		return;
	}
	if (n > 1) {
		v_err_invalid_node(c, NULL, e,
				   "may not have more than one field specified at a time");
		return;
	}
	struct ynode *ref = v_get_map(c, e, src, REQ);
	if (!ref)
		return;
	size_t mark = v_path_push(c, src);
	v_get_str(c, ref, "name", REQ);
	bool b = false;
	v_get_bool(c, ref, "optional", OPT, &b);
	v_path_pop(c, mark);
}

static bool resource_name_ok(const char *r)
{
	if (v_in_list(r, container_resources) || strncmp(r, "hugepages-", 10) == 0)
		return true;
	return strchr(r, '/') && names_qualified_name(r, NULL) == 0;
}

/* A map of resource quantities (limits, requests, hard, ...) at key of m.
 * Each value must be a quantity of at least 0. names (may be NULL) says
 * which resource names are allowed. */
struct ynode *v_check_resource_list(struct vctx *c, const struct ynode *m, const char *key,
				    bool (*names)(const char *r), const char *what)
{
	struct ynode *list = v_get_map(c, m, key, OPT);
	if (!list)
		return NULL;
	size_t mark = v_path_push(c, key);
	for (size_t i = 0; i < list->n; i++) {
		const char *r = ynode_map_key(list, i)->str;
		struct ynode *v = ynode_map_val(list, i);
		cleanup_free char *entry = v_path_entry(r);
		int64_t q = 0;
		if (names && !names(r))
			v_err_invalid_str(c, entry, r, "must be a standard resource %s", what);
		else if (v_check_quantity(c, entry, v, &q) && q < 0)
			v_err_invalid_str(c, entry, v->str, "must be greater than or equal to 0");
	}
	v_path_pop(c, mark);
	return list;
}

/* The quantity of resource r in the (checked) list, if it parses. */
bool v_resource_of(const struct ynode *list, const char *r, int64_t *q)
{
	const char *s = list ? ynode_str(ynode_get(list, r)) : NULL;
	return s && quantity_parse(s, q, NULL) == 0;
}

static void check_container_resources(struct vctx *c, const struct ynode *ct)
{
	struct ynode *res = v_get_map(c, ct, "resources", OPT);
	if (!res)
		return;
	size_t mark = v_path_push(c, "resources");
	struct ynode *lim =
	    v_check_resource_list(c, res, "limits", resource_name_ok, "for containers");
	struct ynode *req =
	    v_check_resource_list(c, res, "requests", resource_name_ok, "for containers");
	for (size_t i = 0; req && lim && i < req->n; i++) {
		const char *r = ynode_map_key(req, i)->str;
		int64_t rq = 0, lq = 0;
		if (!v_resource_of(req, r, &rq) || !v_resource_of(lim, r, &lq) || rq <= lq)
			continue;
		cleanup_free char *entry = xasprintf("requests[%s]", r);
		v_err_invalid_str(c, entry, ynode_str(ynode_map_val(req, i)),
				  "must be less than or equal to %s limit of %s", r,
				  ynode_str(ynode_get(lim, r)));
	}
	v_path_pop(c, mark);
}

struct mount_ctx {
	const struct strset *volumes;
	struct strset paths;
};

static void check_mount(struct vctx *c, struct ynode *m, void *arg)
{
	struct mount_ctx *mc = arg;
	const char *name = v_get_str(c, m, "name", REQ);
	if (name && !v_strset_has(mc->volumes, name))
		v_err_not_found(c, "name", name);
	const char *mp = v_get_str(c, m, "mountPath", REQ);
	if (mp && !v_strset_add(&mc->paths, mp))
		v_err_invalid_str(c, "mountPath", mp, "must be unique");
	bool b = false;
	v_get_bool(c, m, "readOnly", OPT, &b);
	const char *sp = v_get_str(c, m, "subPath", OPT);
	if (sp && *sp)
		check_rel_path(c, "subPath", sp);
	const char *spe = v_get_str(c, m, "subPathExpr", OPT);
	if (sp && *sp && spe && *spe)
		v_err_invalid_str(c, "subPathExpr", spe,
				  "subPathExpr and subPath are mutually exclusive");
	v_get_enum(c, m, "mountPropagation", OPT, propagations);
}

static void check_http_header(struct vctx *c, struct ynode *h, void *arg)
{
	(void)arg;
	v_get_str(c, h, "name", REQ);
	v_get_str(c, h, "value", OPT);
}

/* Exactly one handler of kinds in p (a probe or a lifecycle hook). */
static void check_handler(struct vctx *c, const struct ynode *p, const char *const *kinds)
{
	const char *first = NULL;
	for (size_t i = 0; kinds[i]; i++) {
		if (!ynode_get(p, kinds[i]))
			continue;
		if (!first)
			first = kinds[i];
		else
			v_err_forbidden(c, kinds[i], "may not specify more than 1 handler type");
	}
	if (!first) {
		v_err_required(c, NULL, "must specify a handler type");
		return;
	}
	struct ynode *h = v_get_map(c, p, first, REQ);
	if (!h)
		return;
	size_t mark = v_path_push(c, first);
	long long v = 0;
	if (!strcmp(first, "exec")) {
		v_check_str_list(c, h, "command", REQ, NULL);
	} else if (!strcmp(first, "httpGet")) {
		v_check_port_ref(c, h, "port", REQ);
		v_get_str(c, h, "path", OPT);
		v_get_str(c, h, "host", OPT);
		v_get_enum(c, h, "scheme", OPT, uri_schemes);
		v_check_each(c, h, "httpHeaders", OPT, check_http_header, NULL);
	} else if (!strcmp(first, "tcpSocket")) {
		v_check_port_ref(c, h, "port", REQ);
	} else if (!strcmp(first, "grpc")) {
		if (v_get_i32(c, h, "port", REQ, &v))
			v_check_range(c, "port", v, 1, 65535);
		v_get_str(c, h, "service", OPT);
	} else if (!strcmp(first, "sleep")) {
		if (v_get_int(c, h, "seconds", REQ, &v))
			v_check_min(c, "seconds", v, 0);
	}
	v_path_pop(c, mark);
}

static void check_probe(struct vctx *c, const struct ynode *ct, const char *key, bool once)
{
	struct ynode *p = v_get_map(c, ct, key, OPT);
	if (!p)
		return;
	size_t mark = v_path_push(c, key);
	check_handler(c, p, probe_handlers);
	long long v = 0;
	v_get_i32_min(c, p, "initialDelaySeconds", 0, NULL);
	v_get_i32_min(c, p, "timeoutSeconds", 0, NULL);
	v_get_i32_min(c, p, "periodSeconds", 0, NULL);
	v_get_i32_min(c, p, "failureThreshold", 0, NULL);
	if (v_get_i32_min(c, p, "successThreshold", 0, &v) && once && v != 1)
		v_err_invalid_int(c, "successThreshold", v, "must be 1");
	if (v_get_int(c, p, "terminationGracePeriodSeconds", OPT, &v))
		v_check_min(c, "terminationGracePeriodSeconds", v, 1);
	v_path_pop(c, mark);
}

static void check_lifecycle(struct vctx *c, const struct ynode *ct)
{
	struct ynode *lc = v_get_map(c, ct, "lifecycle", OPT);
	if (!lc)
		return;
	size_t mark = v_path_push(c, "lifecycle");
	static const char *const hooks[] = {"postStart", "preStop"};
	for (size_t i = 0; i < ARRAY_SIZE(hooks); i++) {
		struct ynode *h = v_get_map(c, lc, hooks[i], OPT);
		if (!h)
			continue;
		size_t hm = v_path_push(c, hooks[i]);
		check_handler(c, h, lifecycle_handlers);
		v_path_pop(c, hm);
	}
	v_path_pop(c, mark);
}

struct containers_ctx {
	struct strset *names;	      /* across containers and initContainers */
	const struct strset *volumes; /* the pod's volume names */
	bool init;
};

/* An id of a securityContext (runAsUser, runAsGroup, fsGroup). */
static void check_sc_id(struct vctx *c, const struct ynode *sc, const char *key)
{
	long long v;
	if (v_get_int(c, sc, key, OPT, &v))
		v_check_range(c, key, v, 0, INT32_LIMIT);
}

/* capabilities.add or .drop: Linux capability names (with or without
 * CAP_, any case) or ALL; corral-noded could not apply another. *sys_admin:
 * the list adds CAP_SYS_ADMIN. */
static void check_cap_list(struct vctx *c, const struct ynode *caps, const char *key,
			   bool *sys_admin)
{
	struct ynode *l = v_check_str_list(c, caps, key, OPT, NULL);
	size_t mark = v_path_push(c, key);
	for (size_t i = 0; l && i < l->n; i++) {
		const char *name = ynode_item(l, i)->str;
		if (!v_scalar_is_string(ynode_item(l, i)) || strcasecmp(name, "ALL") == 0)
			continue;
		char idx[32];
		snprintf(idx, sizeof(idx), "[%zu]", i);
		int cap = capability_from_name(name);
		if (cap < 0)
			v_err_invalid_str(
			    c, idx, name,
			    "must be a Linux capability (NET_RAW or CAP_NET_RAW) or ALL");
		else if (strcmp(capability_name(cap), "CAP_SYS_ADMIN") == 0)
			*sys_admin = true;
	}
	v_path_pop(c, mark);
}

/* A container's securityContext, as Kubernetes checks it, and what
 * corral-noded cannot honour (corral-noded(8), SECURITY CONTEXTS). */
static void check_container_security(struct vctx *c, const struct ynode *ct)
{
	struct ynode *sc = v_get_map(c, ct, "securityContext", OPT);
	if (!sc)
		return;
	size_t mark = v_path_push(c, "securityContext");
	check_sc_id(c, sc, "runAsUser");
	check_sc_id(c, sc, "runAsGroup");
	bool b = false, privileged = false, escalation = true, sys_admin = false;
	v_get_bool(c, sc, "runAsNonRoot", OPT, &b);
	v_get_bool(c, sc, "readOnlyRootFilesystem", OPT, &b);
	v_get_bool(c, sc, "allowPrivilegeEscalation", OPT, &escalation);
	if (v_get_bool(c, sc, "privileged", OPT, &privileged) && privileged)
		v_err_forbidden(c, "privileged",
				"privileged containers are not supported by corral: add the "
				"capabilities the container needs instead");
	struct ynode *caps = v_get_map(c, sc, "capabilities", OPT);
	if (caps) {
		size_t cm = v_path_push(c, "capabilities");
		bool dropped = false;
		check_cap_list(c, caps, "add", &sys_admin);
		check_cap_list(c, caps, "drop", &dropped);
		v_path_pop(c, cm);
	}
	if (!escalation && sys_admin)
		v_err_invalid_node(c, NULL, sc,
				   "cannot set `allowPrivilegeEscalation` to false and "
				   "`capabilities.Add` CAP_SYS_ADMIN");
	v_path_pop(c, mark);
}

/* The pod's securityContext: its ids. */
static void check_pod_security(struct vctx *c, const struct ynode *spec)
{
	struct ynode *sc = v_get_map(c, spec, "securityContext", OPT);
	if (!sc)
		return;
	size_t mark = v_path_push(c, "securityContext");
	check_sc_id(c, sc, "runAsUser");
	check_sc_id(c, sc, "runAsGroup");
	check_sc_id(c, sc, "fsGroup");
	bool b = false;
	v_get_bool(c, sc, "runAsNonRoot", OPT, &b);
	struct ynode *groups = v_get_seq(c, sc, "supplementalGroups", OPT);
	size_t gm = v_path_push(c, "supplementalGroups");
	for (size_t i = 0; groups && i < groups->n; i++) {
		char idx[32];
		snprintf(idx, sizeof(idx), "[%zu]", i);
		long long g;
		if (!v_scalar_int(ynode_item(groups, i), &g))
			v_err_invalid_node(c, idx, ynode_item(groups, i), "must be an integer");
		else
			v_check_range(c, idx, g, 0, INT32_LIMIT);
	}
	v_path_pop(c, gm);
	v_path_pop(c, mark);
}

static void check_container(struct vctx *c, struct ynode *ct, void *arg)
{
	struct containers_ctx *cc = arg;
	const char *name = v_get_str(c, ct, "name", REQ);
	if (name && v_check_name(c, "name", name, names_dns1123_label) &&
	    !v_strset_add(cc->names, name))
		v_err_duplicate(c, "name", name);
	const char *image = v_get_str(c, ct, "image", REQ);
	if (image &&
	    (isspace((unsigned char)image[0]) || isspace((unsigned char)image[strlen(image) - 1])))
		v_err_invalid_str(c, "image", image,
				  "must not have leading or trailing whitespace");
	v_get_enum(c, ct, "imagePullPolicy", OPT, pull_policies);
	v_check_str_list(c, ct, "command", OPT, NULL);
	v_check_str_list(c, ct, "args", OPT, NULL);
	v_get_str(c, ct, "workingDir", OPT);

	cleanup_strset struct strset port_names = {0};
	v_check_each(c, ct, "ports", OPT, check_container_port, &port_names);
	v_check_each(c, ct, "env", OPT, check_env_var, NULL);
	v_check_each(c, ct, "envFrom", OPT, check_env_from, NULL);
	check_container_resources(c, ct);
	struct mount_ctx mc = {cc->volumes, {0}};
	v_check_each(c, ct, "volumeMounts", OPT, check_mount, &mc);
	v_strset_free(&mc.paths);

	check_probe(c, ct, "livenessProbe", true);
	check_probe(c, ct, "readinessProbe", false);
	check_probe(c, ct, "startupProbe", true);
	check_lifecycle(c, ct);
	v_get_str(c, ct, "terminationMessagePath", OPT);
	v_get_enum(c, ct, "terminationMessagePolicy", OPT, message_policies);
	bool b = false;
	v_get_bool(c, ct, "stdin", OPT, &b);
	v_get_bool(c, ct, "stdinOnce", OPT, &b);
	v_get_bool(c, ct, "tty", OPT, &b);
	check_container_security(c, ct);

	const char *rp = v_get_str(c, ct, "restartPolicy", OPT);
	bool sidecar = false;
	if (rp && *rp) {
		if (!cc->init)
			v_err_forbidden(c, "restartPolicy",
					"may not be set for non-init containers");
		else if (strcmp(rp, "Always") != 0)
			v_err_unsupported(c, "restartPolicy", rp, v_restart_always);
		else
			sidecar = true;
	}
	if (cc->init && !sidecar) {
		static const char *const no_init[] = {"lifecycle", "livenessProbe",
						      "readinessProbe", "startupProbe"};
		for (size_t i = 0; i < ARRAY_SIZE(no_init); i++)
			if (!v_node_unset(ynode_get(ct, no_init[i])))
				v_err_forbidden(c, no_init[i],
						"may not be set for init containers without "
						"restartPolicy=Always");
	}
}

static void check_toleration(struct vctx *c, struct ynode *t, void *arg)
{
	(void)arg;
	const char *key = v_get_str(c, t, "key", OPT);
	if (key && *key)
		v_check_name(c, "key", key, names_qualified_name);
	const char *op = v_get_enum(c, t, "operator", OPT, toleration_ops);
	const char *value = v_get_str(c, t, "value", OPT);
	const char *effect = v_get_enum(c, t, "effect", OPT, v_taint_effects);
	long long secs = 0;
	if (v_get_int(c, t, "tolerationSeconds", OPT, &secs) &&
	    (!effect || strcmp(effect, "NoExecute") != 0))
		v_err_invalid_str(c, "effect", effect ? effect : "",
				  "effect must be 'NoExecute' when `tolerationSeconds` is set");
	if ((!key || !*key) && (!op || strcmp(op, "Exists") != 0))
		v_err_invalid_str(c, "operator", op ? op : "",
				  "operator must be Exists when `key` is empty, which means "
				  "\"match all values and all keys\"");
	if (op && !strcmp(op, "Exists") && value && *value)
		v_err_invalid_str(c, "operator", value,
				  "value must be empty when `operator` is 'Exists'");
	else if (value && *value)
		v_check_name(c, "value", value, names_label_value);
}

static void check_host_alias(struct vctx *c, struct ynode *h, void *arg)
{
	(void)arg;
	const char *ip = v_get_str(c, h, "ip", REQ);
	if (ip)
		v_check_ip(c, "ip", ip);
	v_check_str_list(c, h, "hostnames", OPT, names_dns1123_subdomain);
}

/* One of spec.schedulingGates: a qualified name, once. */
static void check_scheduling_gate(struct vctx *c, struct ynode *g, void *arg)
{
	struct strset *seen = arg;
	const char *name = v_get_str(c, g, "name", REQ);
	if (!name)
		return;
	if (!v_check_name(c, "name", name, names_qualified_name))
		return;
	if (!v_strset_add(seen, name))
		v_err_duplicate(c, NULL, name);
}

void v_check_name_ref(struct vctx *c, struct ynode *r, void *arg)
{
	(void)arg;
	v_get_str(c, r, "name", OPT);
}

static void check_dns_option(struct vctx *c, struct ynode *o, void *arg)
{
	(void)arg;
	v_get_str(c, o, "name", REQ);
	v_get_str(c, o, "value", OPT);
}

/* Checks a PodSpec at the current path. restart lists the restartPolicy
 * values the owner allows; restart_req makes the field required (Jobs).
 * claims (a StatefulSet's volumeClaimTemplates, or NULL) name volumes too:
 * the controller adds one per template to each pod. */
static void check_pod_spec(struct vctx *c, const struct ynode *spec, const char *const *restart,
			   bool restart_req, const struct ynode *claims)
{
	bool b = false;
	c->host_network = v_get_bool(c, spec, "hostNetwork", OPT, &b) && b;
	cleanup_strset struct strset volumes = {0};
	cleanup_strset struct strset names = {0};
	v_check_each(c, spec, "volumes", OPT, check_volume, &volumes);
	for (size_t i = 0; claims && claims->type == YNODE_SEQ && i < claims->n; i++) {
		const char *name = ynode_path_str(ynode_item(claims, i), "metadata.name");
		if (name && *name)
			v_strset_add(&volumes, name);
	}
	struct containers_ctx init = {&names, &volumes, true};
	struct containers_ctx main = {&names, &volumes, false};
	v_check_each(c, spec, "initContainers", OPT, check_container, &init);
	v_check_each(c, spec, "containers", REQ, check_container, &main);
	c->host_network = false;

	const char *rp = v_get_str(c, spec, "restartPolicy", OPT);
	if (!rp || !*rp) {
		if (restart_req) {
			struct sbuf vb = {0};
			v_sb_add(&vb, "valid values: ");
			for (size_t i = 0; restart[i]; i++) {
				if (i)
					v_sb_add(&vb, ", ");
				v_sb_quote(&vb, restart[i]);
			}
			cleanup_free char *valid = v_sb_finish(&vb);
			v_err_required(c, "restartPolicy", valid);
		}
	} else if (!v_in_list(rp, restart)) {
		v_err_unsupported(c, "restartPolicy", rp, restart);
	}
	const char *dp = v_get_enum(c, spec, "dnsPolicy", OPT, dns_policies);
	struct ynode *dc = v_get_map(c, spec, "dnsConfig", OPT);
	if (dp && !strcmp(dp, "None") && !dc)
		v_err_required(c, "dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None");
	if (dc) {
		size_t mark = v_path_push(c, "dnsConfig");
		v_check_str_list(c, dc, "nameservers", OPT, NULL);
		struct ynode *ns = ynode_get(dc, "nameservers");
		for (size_t i = 0; ns && ns->type == YNODE_SEQ && i < ns->n; i++) {
			const char *ip = ynode_str(ynode_item(ns, i));
			char idx[48];
			snprintf(idx, sizeof(idx), "nameservers[%zu]", i);
			if (ip && v_scalar_is_string(ynode_item(ns, i)))
				v_check_ip(c, idx, ip);
		}
		v_check_str_list(c, dc, "searches", OPT, NULL);
		v_check_each(c, dc, "options", OPT, check_dns_option, NULL);
		v_path_pop(c, mark);
	}

	long long v = 0;
	if (v_get_int(c, spec, "terminationGracePeriodSeconds", OPT, &v))
		v_check_min(c, "terminationGracePeriodSeconds", v, 0);
	if (v_get_int(c, spec, "activeDeadlineSeconds", OPT, &v))
		v_check_range(c, "activeDeadlineSeconds", v, 1, INT32_LIMIT);
	v_check_labels(c, spec, "nodeSelector");
	static const char *const subdomains[] = {"nodeName", "serviceAccountName", "serviceAccount",
						 "priorityClassName"};
	for (size_t i = 0; i < ARRAY_SIZE(subdomains); i++) {
		const char *s = v_get_str(c, spec, subdomains[i], OPT);
		if (s && *s)
			v_check_name(c, subdomains[i], s, names_dns1123_subdomain);
	}
	static const char *const labels[] = {"hostname", "subdomain"};
	for (size_t i = 0; i < ARRAY_SIZE(labels); i++) {
		const char *s = v_get_str(c, spec, labels[i], OPT);
		if (s && *s)
			v_check_name(c, labels[i], s, names_dns1123_label);
	}
	static const char *const bools[] = {"hostPID",
					    "hostIPC",
					    "shareProcessNamespace",
					    "automountServiceAccountToken",
					    "enableServiceLinks",
					    "setHostnameAsFQDN"};
	for (size_t i = 0; i < ARRAY_SIZE(bools); i++)
		v_get_bool(c, spec, bools[i], OPT, &b);
	v_get_str(c, spec, "schedulerName", OPT);
	v_get_i32(c, spec, "priority", OPT, &v);
	v_check_each(c, spec, "tolerations", OPT, check_toleration, NULL);
	v_check_each(c, spec, "imagePullSecrets", OPT, v_check_name_ref, NULL);
	v_check_each(c, spec, "hostAliases", OPT, check_host_alias, NULL);
	cleanup_strset struct strset gates = {0};
	v_check_each(c, spec, "schedulingGates", OPT, check_scheduling_gate, &gates);
	check_pod_security(c, spec);
	v_get_map(c, spec, "affinity", OPT);
}

void v_check_pod_spec(struct vctx *c, const struct ynode *spec, const char *const *restart,
		      bool restart_req)
{
	check_pod_spec(c, spec, restart, restart_req, NULL);
}

/* A PodTemplateSpec at key of m; returns it when present. */
struct ynode *v_check_pod_template(struct vctx *c, const struct ynode *m, const char *key,
				   const char *const *restart, bool restart_req)
{
	return v_check_pod_template_claims(c, m, key, restart, restart_req, NULL);
}

struct ynode *v_check_pod_template_claims(struct vctx *c, const struct ynode *m, const char *key,
					  const char *const *restart, bool restart_req,
					  const struct ynode *claims)
{
	struct ynode *t = v_get_map(c, m, key, REQ);
	if (!t)
		return NULL;
	size_t mark = v_path_push(c, key);
	v_check_template_metadata(c, t, OPT, NULL);
	struct ynode *spec = v_get_map(c, t, "spec", REQ);
	if (spec) {
		size_t sm = v_path_push(c, "spec");
		check_pod_spec(c, spec, restart, restart_req, claims);
		v_path_pop(c, sm);
	}
	v_path_pop(c, mark);
	return t;
}

/* ---- pod spec: defaults ----------------------------------------------- */

/* Always for an image without a tag or tagged latest (unless pinned by
 * digest), IfNotPresent otherwise, as Kubernetes decides. */
static void default_pull_policy(struct ynode *ct)
{
	const char *image = ynode_path_str(ct, "image");
	if (!image)
		return;
	const char *policy = "IfNotPresent";
	if (!strchr(image, '@')) {
		const char *slash = strrchr(image, '/');
		const char *colon = strrchr(slash ? slash : image, ':');
		if (!colon || strcmp(colon + 1, "latest") == 0)
			policy = "Always";
	}
	v_default_str(ct, "imagePullPolicy", policy);
}

static void default_http_get(struct ynode *handler)
{
	struct ynode *hg = ynode_get(handler, "httpGet");
	if (hg && hg->type == YNODE_MAP) {
		v_default_str(hg, "path", "/");
		v_default_str(hg, "scheme", "HTTP");
	}
}

static void default_probe(struct ynode *p)
{
	if (!p || p->type != YNODE_MAP)
		return;
	v_default_int(p, "timeoutSeconds", 1);
	v_default_int(p, "periodSeconds", 10);
	v_default_int(p, "successThreshold", 1);
	v_default_int(p, "failureThreshold", 3);
	default_http_get(p);
}

static void default_container(struct ynode *ct, bool pod)
{
	struct ynode *it;
	default_pull_policy(ct);
	v_default_str(ct, "terminationMessagePath", "/dev/termination-log");
	v_default_str(ct, "terminationMessagePolicy", "File");
	struct ynode *res = v_default_map(ct, "resources");
	struct ynode *ports = ynode_get(ct, "ports");
	for_each_map_item(ports, i, it) v_default_str(it, "protocol", "TCP");
	struct ynode *env = ynode_get(ct, "env");
	for_each_map_item(env, i, it)
	{
		struct ynode *fr = ynode_path(it, "valueFrom.fieldRef");
		if (fr && fr->type == YNODE_MAP)
			v_default_str(fr, "apiVersion", "v1");
	}
	default_probe(ynode_get(ct, "livenessProbe"));
	default_probe(ynode_get(ct, "readinessProbe"));
	default_probe(ynode_get(ct, "startupProbe"));
	struct ynode *lc = ynode_get(ct, "lifecycle");
	if (lc && lc->type == YNODE_MAP) {
		struct ynode *h = ynode_get(lc, "postStart");
		if (h && h->type == YNODE_MAP)
			default_http_get(h);
		h = ynode_get(lc, "preStop");
		if (h && h->type == YNODE_MAP)
			default_http_get(h);
	}
	/* A pod (not a template) requests what it limits unless it says
	 * otherwise. */
	struct ynode *lim = res ? ynode_get(res, "limits") : NULL;
	if (pod && lim && lim->type == YNODE_MAP && lim->n) {
		struct ynode *req = v_default_map(res, "requests");
		for (size_t i = 0; req && i < lim->n; i++)
			if (!ynode_get(req, ynode_map_key(lim, i)->str))
				ynode_set(req, ynode_map_key(lim, i)->str,
					  ynode_clone(ynode_map_val(lim, i)));
	}
}

/* Rewrites a YAML 1.1 octal mode ("0644") as the integer it means, so that
 * every later reader sees 420 as Kubernetes shows it. */
static void normalize_mode(struct ynode *m, const char *key)
{
	struct ynode *v = ynode_get(m, key);
	long long x = 0;
	if (v && v->type == YNODE_SCALAR && !v->quoted && v_plain_octal(v->str, &x))
		ynode_set(m, key, ynode_new_int(x));
}

/* Kubernetes defaults every projected volume to 0644 (420); corral gives
 * secret volumes 0400 (256), so that a secret's files are readable by
 * their owner alone unless the pod asks otherwise (corral-tree(5)). */
static void default_volume_modes(struct ynode *src, long long mode)
{
	struct ynode *it;
	if (!src || src->type != YNODE_MAP)
		return;
	normalize_mode(src, "defaultMode");
	v_default_int(src, "defaultMode", mode);
	struct ynode *items = ynode_get(src, "items");
	for_each_map_item(items, i, it) normalize_mode(it, "mode");
}

void v_default_hostpath(struct ynode *owner)
{
	struct ynode *hp = ynode_get(owner, "hostPath");
	if (hp && hp->type == YNODE_MAP && !ynode_get(hp, "type"))
		ynode_set(hp, "type", ynode_new_str(""));
}

void v_default_pod_spec(struct ynode *spec, bool pod)
{
	struct ynode *it;
	if (!spec || spec->type != YNODE_MAP)
		return;
	struct ynode *list = ynode_get(spec, "initContainers");
	for_each_map_item(list, i, it) default_container(it, pod);
	list = ynode_get(spec, "containers");
	for_each_map_item(list, i, it) default_container(it, pod);
	list = ynode_get(spec, "volumes");
	for_each_map_item(list, i, it)
	{
		if (ynode_get(it, "emptyDir"))
			v_default_map(it, "emptyDir");
		v_default_hostpath(it);
		default_volume_modes(ynode_get(it, "secret"), 0400);
		default_volume_modes(ynode_get(it, "configMap"), 0644);
		default_volume_modes(ynode_get(it, "downwardAPI"), 0644);
		default_volume_modes(ynode_get(it, "projected"), 0644);
	}
	v_default_str(spec, "restartPolicy", "Always");
	v_default_str(spec, "dnsPolicy", "ClusterFirst");
	v_default_int(spec, "terminationGracePeriodSeconds", 30);
	v_default_str(spec, "schedulerName", "default-scheduler");
	v_default_map(spec, "securityContext");
}

void v_default_pod_template(struct ynode *owner, const char *path)
{
	v_default_pod_spec(ynode_path(owner, path), false);
}
