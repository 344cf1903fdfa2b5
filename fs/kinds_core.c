/* kinds_core.c: the rules of the core API group's kinds (apiVersion v1):
 * Pod, Service, Endpoints, ConfigMap, Secret, PersistentVolumeClaim,
 * ResourceQuota, ServiceAccount, LimitRange, Event (also served as
 * events.k8s.io), and the cluster-scoped Namespace, Node and
 * PersistentVolume. ReplicationController is core too but sits with the
 * other workload controllers in kinds_apps.c. Checks and defaults only:
 * no I/O, no other object (see validate_impl.h). */
#include "kinds_scheduling.h"
#include "names.h"
#include "quantity.h"
#include "serviceaccount.h"
#include "tolerations.h"
#include "util.h"
#include "validate_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- Pod -------------------------------------------------------------- */

static void check_pod(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	v_check_pod_spec(c, spec, v_restart_any, false);
	const struct ynode *gates = ynode_get(spec, "schedulingGates");
	if (gates && gates->type == YNODE_SEQ && gates->n > 0 &&
	    !v_node_empty(ynode_get(spec, "nodeName")))
		v_err_forbidden(c, "nodeName",
				"cannot be set until all schedulingGates have been "
				"cleared");
	v_path_pop(c, mark);
}

static void default_pod(struct vctx *c, struct ynode *obj)
{
	(void)c;
	v_default_pod_spec(ynode_get(obj, "spec"), true);
}

/* A pod's spec is fixed once created, but for what Kubernetes lets change:
 * images, a shorter active deadline, added tolerations, and the node name
 * while it is empty (the scheduler binds by writing it). The rest is
 * compared on copies with those fields masked out. */
static void update_pod(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	const struct ynode *ns = ynode_get(obj, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!ns || !os || ns->type != YNODE_MAP || os->type != YNODE_MAP)
		return;
	cleanup_ynode struct ynode *a = ynode_clone(ns);
	cleanup_ynode struct ynode *b = ynode_clone(os);

	static const char *const lists[] = {"containers", "initContainers"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		struct ynode *la = ynode_get(a, lists[l]);
		struct ynode *lb = ynode_get(b, lists[l]);
		if (!la || !lb || la->type != YNODE_SEQ || lb->type != YNODE_SEQ)
			continue;
		for (size_t i = 0; i < la->n && i < lb->n; i++) {
			struct ynode *ia = ynode_item(la, i);
			struct ynode *ib = ynode_item(lb, i);
			if (ia->type != YNODE_MAP || ib->type != YNODE_MAP)
				continue;
			/* A new image may bring a new defaulted pull policy
			 * (latest against a tag); let it follow the image. */
			if (!v_tree_equal(ynode_get(ia, "image"), ynode_get(ib, "image"))) {
				v_del_if(ia, "imagePullPolicy");
				v_del_if(ib, "imagePullPolicy");
			}
			v_del_if(ia, "image");
			v_del_if(ib, "image");
		}
	}

	long long na = 0, oa = 0;
	bool hn = v_scalar_int(ynode_get(a, "activeDeadlineSeconds"), &na);
	bool ho = v_scalar_int(ynode_get(b, "activeDeadlineSeconds"), &oa);
	if (ho && !hn)
		v_err_invalid_node(c, "spec.activeDeadlineSeconds", NULL,
				   "must not update from a positive integer to nil value");
	else if (ho && hn && na > oa)
		v_err_invalid_int(c, "spec.activeDeadlineSeconds", na,
				  "must be less than or equal to previous value");
	v_del_if(a, "activeDeadlineSeconds");
	v_del_if(b, "activeDeadlineSeconds");

	struct ynode *ta = ynode_get(a, "tolerations");
	struct ynode *tb = ynode_get(b, "tolerations");
	for (size_t i = 0; tb && tb->type == YNODE_SEQ && i < tb->n; i++) {
		bool found = false;
		for (size_t j = 0; !found && ta && ta->type == YNODE_SEQ && j < ta->n; j++)
			found = v_tree_equal(ynode_item(tb, i), ynode_item(ta, j));
		if (!found) {
			v_err_forbidden(c, "spec.tolerations",
					"existing toleration can not be modified or removed, only "
					"new ones added");
			break;
		}
	}
	v_del_if(a, "tolerations");
	v_del_if(b, "tolerations");

	/* Gates may only go (Kubernetes' validateOnlyDeletedSchedulingGates). */
	struct ynode *ga = ynode_get(a, "schedulingGates");
	struct ynode *gb = ynode_get(b, "schedulingGates");
	for (size_t i = 0; ga && ga->type == YNODE_SEQ && i < ga->n; i++) {
		const char *name = ynode_path_str(ynode_item(ga, i), "name");
		bool found = false;
		for (size_t j = 0; !found && gb && gb->type == YNODE_SEQ && j < gb->n; j++)
			found = v_streq(name, ynode_path_str(ynode_item(gb, j), "name"));
		if (!found) {
			v_err_forbidden(
			    c, "spec.schedulingGates",
			    "only deletion is allowed, but found new scheduling gate '%s'",
			    name ? name : "");
			break;
		}
	}
	v_del_if(a, "schedulingGates");
	v_del_if(b, "schedulingGates");

	if (v_node_empty(ynode_get(b, "nodeName"))) {
		v_del_if(a, "nodeName");
		v_del_if(b, "nodeName");
	}

	struct sbuf p = {0};
	if (v_tree_diff(a, b, &p))
		v_err_forbidden(
		    c, "spec",
		    "pod updates may not change fields other than `spec.containers[*].image` (and "
		    "its `imagePullPolicy`), `spec.initContainers[*].image`, "
		    "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing "
		    "tolerations) or `spec.nodeName` (only to bind an unscheduled pod); changed: "
		    "spec%s%s",
		    p.len ? "." : "", p.len ? p.buf : "");
	free(p.buf);
}

/* What the Priority and ServiceAccount admission hooks gave the pod at
 * its create. */
static void carry_pod(struct ynode *obj, const struct ynode *old)
{
	priority_carry(obj, old);
	tolerations_carry(obj, old); /* and DefaultTolerationSeconds' */
	serviceaccount_carry(obj, old);
}

/* Pod */
const struct kind_rules v_rules_pod = {
    .kind = KIND_POD,
    .name = names_dns1123_subdomain,
    .check = check_pod,
    .defaults = default_pod,
    .carry = carry_pod,
    .update = update_pod,
};

/* ---- Service and Endpoints -------------------------------------------- */

static const char *const service_types[] = {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName",
					    NULL};
static const char *const session_affinities[] = {"ClientIP", "None", NULL};
static const char *const traffic_policies[] = {"Cluster", "Local", NULL};

#define NODE_PORT_MIN 30000
#define NODE_PORT_MAX 32767

struct service_ports {
	const char *type; /* the Service's type, defaulted */
	size_t count;	  /* ports in the list */
	struct strset names, node_ports, port_protos;
};

static void check_service_port(struct vctx *c, struct ynode *p, void *arg)
{
	struct service_ports *sp = arg;
	const char *name = v_get_str(c, p, "name", sp->count > 1 ? REQ : OPT);
	if (name && *name && v_check_name(c, "name", name, names_dns1123_label) &&
	    !v_strset_add(&sp->names, name))
		v_err_duplicate(c, "name", name);
	long long port = 0, np;
	bool have_port =
	    v_get_i32(c, p, "port", REQ, &port) && v_check_range(c, "port", port, 1, 65535);
	const char *proto = v_get_enum(c, p, "protocol", OPT, v_protocols);
	if (have_port) {
		char *key = xasprintf("%lld/%s", port, proto ? proto : "TCP");
		cleanup_free char *shown = xstrdup(key);
		if (!v_strset_add_owned(&sp->port_protos, key))
			v_err_duplicate(c, NULL, shown);
	}
	long long tp = 0;
	/* targetPort 0 means unset, as in Kubernetes: it becomes port */
	if (!v_scalar_int(ynode_get(p, "targetPort"), &tp) || tp != 0)
		v_check_port_ref(c, p, "targetPort", OPT);
	v_get_str(c, p, "appProtocol", OPT);
	if (v_get_i32(c, p, "nodePort", OPT, &np) && np != 0) {
		if (strcmp(sp->type, "NodePort") && strcmp(sp->type, "LoadBalancer")) {
			v_err_forbidden(c, "nodePort", "may not be used when `type` is '%s'",
					sp->type);
		} else if (np < NODE_PORT_MIN || np > NODE_PORT_MAX) {
			v_err_invalid_int(c, "nodePort", np,
					  "provided port is not in the valid range. The range of "
					  "valid ports is %d-%d",
					  NODE_PORT_MIN, NODE_PORT_MAX);
		} else {
			char *key = xasprintf("%lld/%s", np, proto ? proto : "TCP");
			cleanup_free char *shown = xasprintf("%lld", np);
			if (!v_strset_add_owned(&sp->node_ports, key))
				v_err_duplicate(c, "nodePort", shown);
		}
	}
}

static void check_service(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (!spec && !v_node_unset(ynode_get(obj, "spec")))
		return;
	size_t mark = v_path_push(c, "spec");
	const char *type = v_get_enum(c, spec, "type", OPT, service_types);
	if (!type) {
		const char *raw = ynode_path_str(spec, "type");
		if (raw && *raw) {
			v_path_pop(c, mark);
			return; /* reported; the rest depends on it */
		}
		type = "ClusterIP";
	}
	bool external = !strcmp(type, "ExternalName");
	const char *ip = v_get_str(c, spec, "clusterIP", OPT);
	bool headless = ip && !strcmp(ip, "None");
	if (ip && *ip && !headless) {
		if (!v_is_ipv4(ip))
			v_err_invalid_str(
			    c, "clusterIP", ip,
			    v_is_ip(ip)
				? "IPv6 cluster IPs are not supported"
				: "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
	}
	if (headless && strcmp(type, "ClusterIP") != 0 && !external)
		v_err_invalid_str(c, "clusterIP", ip, "may not be set to 'None' for %s services",
				  type);
	struct ynode *ips = v_check_str_list(c, spec, "clusterIPs", OPT, NULL);
	if (ips && ips->n && ip && *ip &&
	    strcmp(ynode_str(ynode_item(ips, 0)) ? ynode_str(ynode_item(ips, 0)) : "", ip) != 0)
		v_err_invalid_node(c, "clusterIPs", ips,
				   "must match `clusterIP` when both are specified");
	if (external) {
		const char *en = v_get_str(c, spec, "externalName", REQ);
		if (en) {
			cleanup_free char *name = xstrdup(en);
			size_t n = strlen(name);
			if (n && name[n - 1] == '.')
				name[n - 1] = '\0';
			v_check_name(c, "externalName", name, names_dns1123_subdomain);
		}
		if (ip && *ip)
			v_err_forbidden(c, "clusterIP", "may not be set for ExternalName services");
	}

	struct ynode *ports = v_get_seq(c, spec, "ports", OPT);
	if (!ports && !headless && !external)
		v_err_required(c, "ports", NULL);
	struct service_ports sp = {.type = type, .count = ports ? ports->n : 0};
	v_check_each(c, spec, "ports", OPT, check_service_port, &sp);
	v_strset_free(&sp.names);
	v_strset_free(&sp.node_ports);
	v_strset_free(&sp.port_protos);

	v_check_labels(c, spec, "selector");
	const char *aff = v_get_enum(c, spec, "sessionAffinity", OPT, session_affinities);
	struct ynode *affc = v_get_map(c, spec, "sessionAffinityConfig", OPT);
	if (affc) {
		long long t = 0;
		if (v_get_i32(c, ynode_get(affc, "clientIP"), "timeoutSeconds", OPT, &t) &&
		    (t < 1 || t > 86400)) {
			size_t am = v_path_push(c, "sessionAffinityConfig.clientIP");
			v_check_range(c, "timeoutSeconds", t, 1, 86400);
			v_path_pop(c, am);
		}
		if (!aff || strcmp(aff, "ClientIP") != 0)
			v_err_forbidden(c, "sessionAffinityConfig",
					"must not be set when `sessionAffinity` is None");
	}
	const char *etp = v_get_enum(c, spec, "externalTrafficPolicy", OPT, traffic_policies);
	if (etp && strcmp(type, "NodePort") && strcmp(type, "LoadBalancer"))
		v_err_invalid_str(c, "externalTrafficPolicy", etp,
				  "may only be set when `type` is 'NodePort' or 'LoadBalancer'");
	v_get_enum(c, spec, "internalTrafficPolicy", OPT, traffic_policies);
	struct ynode *eips = v_check_str_list(c, spec, "externalIPs", OPT, NULL);
	for (size_t i = 0; eips && i < eips->n; i++) {
		char key[48];
		snprintf(key, sizeof(key), "externalIPs[%zu]", i);
		if (ynode_str(ynode_item(eips, i)))
			v_check_ip(c, key, ynode_str(ynode_item(eips, i)));
	}
	const char *lbip = v_get_str(c, spec, "loadBalancerIP", OPT);
	if (lbip && *lbip)
		v_check_ip(c, "loadBalancerIP", lbip);
	struct ynode *ranges = v_check_str_list(c, spec, "loadBalancerSourceRanges", OPT, NULL);
	for (size_t i = 0; ranges && i < ranges->n; i++) {
		char key[64];
		snprintf(key, sizeof(key), "loadBalancerSourceRanges[%zu]", i);
		if (ynode_str(ynode_item(ranges, i)))
			v_check_cidr(c, key, ynode_str(ynode_item(ranges, i)));
	}
	bool b = false;
	v_get_bool(c, spec, "publishNotReadyAddresses", OPT, &b);
	v_path_pop(c, mark);
}

/* What the server allocated (clusterIP, nodePorts) and an update leaves
 * out is kept, as Kubernetes does, so that writing the original manifest
 * again is not an attempt to change an immutable field. */
static void carry_service(struct ynode *obj, const struct ynode *old)
{
	struct ynode *spec = ynode_get(obj, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!spec || spec->type != YNODE_MAP || !os || os->type != YNODE_MAP)
		return;
	const char *type = ynode_path_str(spec, "type");
	const char *otype = ynode_path_str(os, "type");
	if ((type && !strcmp(type, "ExternalName")) || (otype && !strcmp(otype, "ExternalName")))
		return;
	if (v_node_empty(ynode_get(spec, "clusterIP")) &&
	    !v_node_empty(ynode_get(os, "clusterIP"))) {
		ynode_set(spec, "clusterIP", ynode_clone(ynode_get(os, "clusterIP")));
		if (v_node_empty(ynode_get(spec, "clusterIPs")) &&
		    !v_node_empty(ynode_get(os, "clusterIPs")))
			ynode_set(spec, "clusterIPs", ynode_clone(ynode_get(os, "clusterIPs")));
	}
	struct ynode *ports = ynode_get(spec, "ports");
	struct ynode *oports = ynode_get(os, "ports");
	struct ynode *p, *op;
	for_each_map_item(ports, i, p)
	{
		if (!v_node_empty(ynode_get(p, "nodePort")))
			continue;
		const char *port = ynode_path_str(p, "port");
		const char *proto = ynode_path_str(p, "protocol");
		for_each_map_item(oports, j, op)
		{
			const char *oport = ynode_path_str(op, "port");
			const char *oproto = ynode_path_str(op, "protocol");
			if (port && oport && !strcmp(port, oport) &&
			    !strcmp(proto && *proto ? proto : "TCP",
				    oproto && *oproto ? oproto : "TCP") &&
			    !v_node_empty(ynode_get(op, "nodePort"))) {
				ynode_set(p, "nodePort", ynode_clone(ynode_get(op, "nodePort")));
				break;
			}
		}
	}
}

static void default_service(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *p;
	struct ynode *spec = v_default_map(obj, "spec");
	if (!spec)
		return;
	v_default_str(spec, "type", "ClusterIP");
	const char *type = ynode_path_str(spec, "type");
	v_default_str(spec, "sessionAffinity", "None");
	if (v_streq(ynode_path_str(spec, "sessionAffinity"), "ClientIP")) {
		struct ynode *cfg = v_default_map(spec, "sessionAffinityConfig");
		struct ynode *cip = cfg ? v_default_map(cfg, "clientIP") : NULL;
		v_default_int(cip, "timeoutSeconds", 10800);
	}
	struct ynode *ports = ynode_get(spec, "ports");
	for_each_map_item(ports, i, p)
	{
		v_default_str(p, "protocol", "TCP");
		struct ynode *port = ynode_get(p, "port");
		long long tp = -1;
		if (port && (v_node_empty(ynode_get(p, "targetPort")) ||
			     (v_scalar_int(ynode_get(p, "targetPort"), &tp) && tp == 0)))
			ynode_set(p, "targetPort", ynode_clone(port));
	}
	if (!v_streq(type, "ExternalName"))
		v_default_str(spec, "internalTrafficPolicy", "Cluster");
	if (v_streq(type, "NodePort") || v_streq(type, "LoadBalancer"))
		v_default_str(spec, "externalTrafficPolicy", "Cluster");
}

static void update_service(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	const char *type = ynode_path_str(obj, "spec.type");
	const char *otype = ynode_path_str(old, "spec.type");
	if (v_streq(type, "ExternalName") || v_streq(otype, "ExternalName"))
		return;
	const char *oip = ynode_path_str(old, "spec.clusterIP");
	if (oip && *oip)
		v_check_immutable(c, obj, old, "spec.clusterIP");
}

/* Service */
const struct kind_rules v_rules_service = {
    .kind = KIND_SERVICE,
    .name = names_dns1035_label,
    .check = check_service,
    .defaults = default_service,
    .carry = carry_service,
    .update = update_service,
};

static void check_endpoint_address(struct vctx *c, struct ynode *a, void *arg)
{
	(void)arg;
	const char *ip = v_get_str(c, a, "ip", REQ);
	if (ip)
		v_check_ip(c, "ip", ip);
	const char *h = v_get_str(c, a, "hostname", OPT);
	if (h && *h)
		v_check_name(c, "hostname", h, names_dns1123_label);
	v_get_str(c, a, "nodeName", OPT);
	v_get_map(c, a, "targetRef", OPT);
}

static void check_endpoint_port(struct vctx *c, struct ynode *p, void *arg)
{
	size_t *count = arg;
	const char *name = v_get_str(c, p, "name", *count > 1 ? REQ : OPT);
	if (name && *name)
		v_check_name(c, "name", name, names_dns1123_label);
	long long port = 0;
	if (v_get_i32(c, p, "port", REQ, &port))
		v_check_range(c, "port", port, 1, 65535);
	v_get_enum(c, p, "protocol", OPT, v_protocols);
}

static void check_endpoint_subset(struct vctx *c, struct ynode *s, void *arg)
{
	(void)arg;
	v_check_each(c, s, "addresses", OPT, check_endpoint_address, NULL);
	v_check_each(c, s, "notReadyAddresses", OPT, check_endpoint_address, NULL);
	struct ynode *ports = ynode_get(s, "ports");
	size_t count = ports && ports->type == YNODE_SEQ ? ports->n : 0;
	v_check_each(c, s, "ports", OPT, check_endpoint_port, &count);
}

static void check_endpoints(struct vctx *c, struct ynode *obj)
{
	v_check_each(c, obj, "subsets", OPT, check_endpoint_subset, NULL);
}

static void default_endpoints(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *s, *p;
	struct ynode *subsets = ynode_get(obj, "subsets");
	for_each_map_item(subsets, i, s)
	{
		struct ynode *ports = ynode_get(s, "ports");
		for_each_map_item(ports, j, p) v_default_str(p, "protocol", "TCP");
	}
}

/* Endpoints */
const struct kind_rules v_rules_endpoints = {
    .kind = KIND_ENDPOINTS,
    .name = names_dns1123_subdomain,
    .check = check_endpoints,
    .defaults = default_endpoints,
};

/* ---- ConfigMap and Secret --------------------------------------------- */

static char *b64_encode(const char *s, size_t len)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc((len + 2) / 3 * 4 + 1), *o = out;
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = abc[(v >> 18) & 63];
		*o++ = abc[(v >> 12) & 63];
		*o++ = i + 1 < len ? abc[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? abc[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* Keys of a data map; base64 says whether values must be base64 (Secret
 * data, ConfigMap binaryData). Adds the payload to *size. */
static struct ynode *check_data(struct vctx *c, const struct ynode *obj, const char *key,
				bool base64, bool secret, struct strset *keys, size_t *size)
{
	struct ynode *data = v_get_map(c, obj, key, OPT);
	for (size_t i = 0; data && i < data->n; i++) {
		const char *k = ynode_map_key(data, i)->str;
		struct ynode *v = ynode_map_val(data, i);
		cleanup_free char *entry = xasprintf("%s[%s]", key, k);
		v_check_name(c, entry, k, names_config_key);
		if (!v_strset_add(keys, k))
			v_err_invalid_str(
			    c, entry, k, "duplicate of key present in %s",
			    !strcmp(key, "data") ? (secret ? "stringData" : "binaryData") : "data");
		if (v_node_unset(v))
			continue;
		if (!v_scalar_is_string(v)) {
			if (secret)
				v_err_invalid_str(c, entry, "<secret data>", "must be a string");
			else
				v_err_invalid_node(c, entry, v, "must be a string");
			continue;
		}
		if (!base64) {
			*size += v->len;
			continue;
		}
		size_t bad = 0, n = 0;
		cleanup_free char *dec = util_base64_decode(v->str, &n, &bad);
		if (!dec)
			v_err_invalid_str(c, entry, secret ? "<secret data>" : v->str,
					  "illegal base64 data at input byte %zu", bad);
		else
			*size += n;
	}
	return data;
}

static void check_config_map(struct vctx *c, struct ynode *obj)
{
	cleanup_strset struct strset keys = {0};
	size_t size = 0;
	bool b = false;
	v_get_bool(c, obj, "immutable", OPT, &b);
	check_data(c, obj, "binaryData", true, false, &keys, &size);
	check_data(c, obj, "data", false, false, &keys, &size);
	if (size > CONFIG_DATA_MAX)
		v_err_too_long(c, "data", CONFIG_DATA_MAX);
}

/* An object marked immutable keeps its data and stays immutable. */
static void update_immutable_data(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	bool was = false, is = false;
	if (ynode_bool(ynode_get(old, "immutable"), &was) != 0 || !was)
		return;
	if (ynode_bool(ynode_get(obj, "immutable"), &is) != 0 || !is)
		v_err_forbidden(c, "immutable", "field is immutable when `immutable` is set");
	static const char *const fields[] = {"data", "binaryData"};
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!v_tree_equal(ynode_get(obj, fields[i]), ynode_get(old, fields[i])))
			v_err_forbidden(c, fields[i], "field is immutable when `immutable` is set");
}

static void update_config_map(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	update_immutable_data(c, obj, old);
}

/* ConfigMap */
/* A ConfigMap's or Secret's `key:` is the empty string, as in labels. */
static void default_data(struct ynode *obj)
{
	v_default_null_strings(ynode_get(obj, "data"));
	v_default_null_strings(ynode_get(obj, "binaryData"));
}

static void default_config_map(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_data(obj);
}

const struct kind_rules v_rules_config_map = {
    .kind = KIND_CONFIG_MAP,
    .name = names_dns1123_subdomain,
    .check = check_config_map,
    .defaults = default_config_map,
    .update = update_config_map,
};

/* Keys a Secret of a given type must carry: type, then keys (any one of
 * them for basic-auth). */
static const struct {
	const char *type;
	const char *keys[2];
	bool any;
} secret_keys[] = {
    {"kubernetes.io/dockercfg", {".dockercfg"}, false},
    {"kubernetes.io/dockerconfigjson", {".dockerconfigjson"}, false},
    {"kubernetes.io/basic-auth", {"username", "password"}, true},
    {"kubernetes.io/ssh-auth", {"ssh-privatekey"}, false},
    {"kubernetes.io/tls", {"tls.crt", "tls.key"}, false},
};

static void check_secret(struct vctx *c, struct ynode *obj)
{
	cleanup_strset struct strset keys = {0};
	size_t size = 0;
	bool b = false;
	v_get_bool(c, obj, "immutable", OPT, &b);
	const char *type = v_get_str(c, obj, "type", OPT);
	check_data(c, obj, "stringData", false, true, &keys, &size);
	check_data(c, obj, "data", true, true, &keys, &size);
	if (size > CONFIG_DATA_MAX)
		v_err_too_long(c, "data", CONFIG_DATA_MAX);
	if (!type)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(secret_keys); i++) {
		if (strcmp(type, secret_keys[i].type) != 0)
			continue;
		bool any = false;
		for (size_t k = 0; k < 2 && secret_keys[i].keys[k]; k++) {
			bool has = v_strset_has(&keys, secret_keys[i].keys[k]);
			any |= has;
			if (!has && !secret_keys[i].any) {
				cleanup_free char *entry =
				    xasprintf("data[%s]", secret_keys[i].keys[k]);
				v_err_required(c, entry, NULL);
			}
		}
		if (secret_keys[i].any && !any)
			v_err_required(c, "data[username]",
				       "must specify `username` or `password`");
	}
	if (!strcmp(type, "kubernetes.io/service-account-token")) {
		struct ynode *ann = ynode_path(obj, "metadata.annotations");
		if (v_node_empty(ann ? ynode_get(ann, "kubernetes.io/service-account.name") : NULL))
			v_err_required(
			    c, "metadata.annotations[kubernetes.io/service-account.name]", NULL);
	}
}

/* stringData is write-only: merged into data, base64-encoded, as
 * Kubernetes stores a Secret. */
static void default_secret(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_data(obj);
	v_default_str(obj, "type", "Opaque");
	struct ynode *sd = ynode_get(obj, "stringData");
	if (sd && sd->type == YNODE_MAP && sd->n) {
		struct ynode *data = v_default_map(obj, "data");
		for (size_t i = 0; data && i < sd->n; i++) {
			struct ynode *v = ynode_map_val(sd, i);
			const char *s = v_node_unset(v) ? "" : v->str;
			size_t len = v_node_unset(v) ? 0 : v->len;
			cleanup_free char *enc = b64_encode(s, len);
			ynode_set(data, ynode_map_key(sd, i)->str, ynode_new_str(enc));
		}
	}
	if (sd)
		ynode_del(obj, "stringData");
}

static void update_secret(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	v_check_immutable(c, obj, old, "type");
	update_immutable_data(c, obj, old);
}

/* Secret */
const struct kind_rules v_rules_secret = {
    .kind = KIND_SECRET,
    .name = names_dns1123_subdomain,
    .check = check_secret,
    .defaults = default_secret,
    .update = update_secret,
};

/* ---- Namespace, Node, ServiceAccount ---------------------------------- */

static void check_namespace(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (spec) {
		size_t mark = v_path_push(c, "spec");
		v_check_str_list(c, spec, "finalizers", OPT, names_qualified_name);
		v_path_pop(c, mark);
	}
}

/* Kubernetes labels every namespace with its own name, so that a
 * namespaceSelector can pick one. */
static void default_namespace(struct vctx *c, struct ynode *obj)
{
	(void)c;
	const char *name = ynode_path_str(obj, "metadata.name");
	struct ynode *md = ynode_get(obj, "metadata");
	if (!name || !md || md->type != YNODE_MAP)
		return;
	struct ynode *labels = v_default_map(md, "labels");
	if (labels)
		ynode_set(labels, "kubernetes.io/metadata.name", ynode_new_str(name));
}

/* Namespace */
const struct kind_rules v_rules_namespace = {
    .kind = KIND_NAMESPACE,
    .name = names_dns1123_label,
    .check = check_namespace,
    .defaults = default_namespace,
};

static void check_taint(struct vctx *c, struct ynode *t, void *arg)
{
	struct strset *seen = arg;
	const char *key = v_get_str(c, t, "key", REQ);
	if (key)
		v_check_name(c, "key", key, names_qualified_name);
	const char *value = v_get_str(c, t, "value", OPT);
	if (value && *value)
		v_check_name(c, "value", value, names_label_value);
	const char *effect = v_get_enum(c, t, "effect", REQ, v_taint_effects);
	v_get_str(c, t, "timeAdded", OPT);
	if (key && effect) {
		char *pair = xasprintf("%s:%s", key, effect);
		cleanup_free char *shown = xstrdup(pair);
		if (!v_strset_add_owned(seen, pair))
			v_err_duplicate(c, NULL, shown);
	}
}

static void check_node(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	const char *cidr = v_get_str(c, spec, "podCIDR", OPT);
	if (cidr && *cidr)
		v_check_cidr(c, "podCIDR", cidr);
	struct ynode *cidrs = v_check_str_list(c, spec, "podCIDRs", OPT, NULL);
	for (size_t i = 0; cidrs && i < cidrs->n; i++) {
		char key[40];
		snprintf(key, sizeof(key), "podCIDRs[%zu]", i);
		if (ynode_str(ynode_item(cidrs, i)))
			v_check_cidr(c, key, ynode_str(ynode_item(cidrs, i)));
	}
	cleanup_strset struct strset seen = {0};
	v_check_each(c, spec, "taints", OPT, check_taint, &seen);
	bool b = false;
	v_get_bool(c, spec, "unschedulable", OPT, &b);
	v_get_str(c, spec, "providerID", OPT);
	v_path_pop(c, mark);
}

static void update_node(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	const char *ocidr = ynode_path_str(old, "spec.podCIDR");
	if (ocidr && *ocidr)
		v_check_immutable(c, obj, old, "spec.podCIDR");
}

/* Node */
const struct kind_rules v_rules_node = {
    .kind = KIND_NODE,
    .name = names_dns1123_subdomain,
    .check = check_node,
    .update = update_node,
};

static void check_service_account(struct vctx *c, struct ynode *obj)
{
	bool b = false;
	v_check_each(c, obj, "secrets", OPT, v_check_name_ref, NULL);
	v_check_each(c, obj, "imagePullSecrets", OPT, v_check_name_ref, NULL);
	v_get_bool(c, obj, "automountServiceAccountToken", OPT, &b);
}

/* ServiceAccount */
const struct kind_rules v_rules_service_account = {
    .kind = KIND_SERVICE_ACCOUNT,
    .name = names_dns1123_subdomain,
    .check = check_service_account,
};

/* ---- PersistentVolume and PersistentVolumeClaim ----------------------- */

static const char *const access_modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
					   "ReadWriteOncePod", NULL};
static const char *const volume_modes[] = {"Block", "Filesystem", NULL};
static const char *const reclaim_policies[] = {"Recycle", "Delete", "Retain", NULL};

static void check_access_modes(struct vctx *c, const struct ynode *spec)
{
	struct ynode *modes = v_get_seq(c, spec, "accessModes", OPT);
	if (!modes || modes->n == 0) {
		if (!modes && !v_node_unset(ynode_get(spec, "accessModes")))
			return; /* wrong type, reported */
		v_err_required(c, "accessModes", "at least 1 access mode is required");
		return;
	}
	for (size_t i = 0; i < modes->n; i++) {
		char key[40];
		snprintf(key, sizeof(key), "accessModes[%zu]", i);
		struct ynode *m = ynode_item(modes, i);
		if (!v_scalar_is_string(m))
			v_err_invalid_node(c, key, m, "must be a string");
		else if (!v_in_list(m->str, access_modes))
			v_err_unsupported(c, key, m->str, access_modes);
	}
}

static bool storage_only(const char *r)
{
	return !strcmp(r, "storage");
}

void v_check_pvc_spec(struct vctx *c, const struct ynode *spec)
{
	check_access_modes(c, spec);
	struct ynode *res = v_get_map(c, spec, "resources", OPT);
	size_t mark = v_path_push(c, "resources");
	struct ynode *req = v_check_resource_list(c, res, "requests", NULL, "for claims");
	v_check_resource_list(c, res, "limits", NULL, "for claims");
	v_path_pop(c, mark);
	struct ynode *storage = req ? ynode_get(req, "storage") : NULL;
	int64_t q = 0;
	if (!storage)
		v_err_required(c, "resources[storage]", NULL);
	else if (v_resource_of(req, "storage", &q) && q <= 0)
		v_err_invalid_str(c, "resources[storage]", storage->str,
				  "must be greater than zero");
	v_get_enum(c, spec, "volumeMode", OPT, volume_modes);
	const char *sc = v_get_str(c, spec, "storageClassName", OPT);
	if (sc && *sc)
		v_check_name(c, "storageClassName", sc, names_dns1123_subdomain);
	v_get_str(c, spec, "volumeName", OPT);
	v_check_label_selector(c, spec, "selector", OPT);
	v_get_map(c, spec, "dataSource", OPT);
	v_get_map(c, spec, "dataSourceRef", OPT);
}

void v_default_pvc_spec(struct ynode *spec)
{
	if (spec && spec->type == YNODE_MAP)
		v_default_str(spec, "volumeMode", "Filesystem");
}

static void check_pvc(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, v_check_pvc_spec);
}

static void default_pvc(struct vctx *c, struct ynode *obj)
{
	(void)c;
	v_default_pvc_spec(ynode_get(obj, "spec"));
}

/* A claim's spec is fixed but for its size (which may only grow) and the
 * volume it binds to while unbound. */
static void update_pvc(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	const struct ynode *ns = ynode_get(obj, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!ns || !os || ns->type != YNODE_MAP || os->type != YNODE_MAP)
		return;
	int64_t nq = 0, oq = 0;
	if (v_resource_of(ynode_path(ns, "resources.requests"), "storage", &nq) &&
	    v_resource_of(ynode_path(os, "resources.requests"), "storage", &oq) && nq < oq)
		v_err_forbidden(c, "spec.resources.requests.storage",
				"field can not be less than previous value");
	cleanup_ynode struct ynode *a = ynode_clone(ns);
	cleanup_ynode struct ynode *b = ynode_clone(os);
	v_del_if(a, "resources");
	v_del_if(b, "resources");
	static const char *const once[] = {"volumeName", "storageClassName"};
	for (size_t i = 0; i < ARRAY_SIZE(once); i++)
		if (v_node_empty(ynode_get(b, once[i]))) {
			v_del_if(a, once[i]);
			v_del_if(b, once[i]);
		}
	if (!v_tree_equal(a, b))
		v_err_forbidden(c, "spec",
				"spec is immutable after creation except resources.requests and "
				"volumeName (to bind)");
}

/* PersistentVolumeClaim */
const struct kind_rules v_rules_persistent_volume_claim = {
    .kind = KIND_PERSISTENT_VOLUME_CLAIM,
    .name = names_dns1123_subdomain,
    .check = check_pvc,
    .defaults = default_pvc,
    .update = update_pvc,
};

static void check_pv(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	struct ynode *cap =
	    v_check_resource_list(c, spec, "capacity", storage_only, "for persistent volumes");
	if (!cap && v_node_unset(ynode_get(spec, "capacity")))
		v_err_required(c, "capacity", NULL);
	else if (cap && !ynode_get(cap, "storage"))
		v_err_required(c, "capacity[storage]", NULL);
	check_access_modes(c, spec);
	const char *src = v_check_one_source(c, spec, v_pv_sources);
	if (src)
		v_check_volume_source(c, spec, src);
	if (src && !strcmp(src, "local") && v_node_unset(ynode_get(spec, "nodeAffinity")))
		v_err_required(c, "nodeAffinity", "Local volume requires node affinity");
	v_get_enum(c, spec, "persistentVolumeReclaimPolicy", OPT, reclaim_policies);
	v_get_enum(c, spec, "volumeMode", OPT, volume_modes);
	const char *sc = v_get_str(c, spec, "storageClassName", OPT);
	if (sc && *sc)
		v_check_name(c, "storageClassName", sc, names_dns1123_subdomain);
	v_get_map(c, spec, "claimRef", OPT);
	v_get_map(c, spec, "nodeAffinity", OPT);
	v_check_str_list(c, spec, "mountOptions", OPT, NULL);
	v_path_pop(c, mark);
}

static void default_pv(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = ynode_get(obj, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return;
	v_default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
	v_default_str(spec, "volumeMode", "Filesystem");
	v_default_hostpath(spec);
}

/* PersistentVolume */
const struct kind_rules v_rules_persistent_volume = {
    .kind = KIND_PERSISTENT_VOLUME,
    .name = names_dns1123_subdomain,
    .check = check_pv,
    .defaults = default_pv,
};

/* ---- ResourceQuota, LimitRange, PodDisruptionBudget ------------------- */

static const char *const quota_scopes[] = {"Terminating",
					   "NotTerminating",
					   "BestEffort",
					   "NotBestEffort",
					   "PriorityClass",
					   "CrossNamespacePodAffinity",
					   NULL};
static const char *const limit_types[] = {"Pod", "Container", "PersistentVolumeClaim", NULL};

static bool quota_name_ok(const char *r)
{
	return names_qualified_name(r, NULL) == 0;
}

static const char *const scope_operators[] = {"DoesNotExist", "Exists", "In", "NotIn", NULL};

/* One scopeSelector.matchExpressions item: In and NotIn take values and
 * only PriorityClass may use them; Exists and DoesNotExist take none. */
static void check_scope_requirement(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	const char *scope = v_get_enum(c, it, "scopeName", REQ, quota_scopes);
	const char *op = v_get_enum(c, it, "operator", REQ, scope_operators);
	struct ynode *values = v_check_str_list(c, it, "values", OPT, NULL);
	bool with_values = op && (!strcmp(op, "In") || !strcmp(op, "NotIn"));
	size_t nv = values ? values->n : 0;
	if (op && with_values && nv == 0)
		v_err_invalid_node(c, "values", values,
				   "must be at least one value when `operator` is 'In' or 'NotIn' "
				   "for scope selector");
	if (op && !with_values && nv)
		v_err_invalid_node(c, "values", values,
				   "must be no value when `operator` is 'Exist' or 'DoesNotExist' "
				   "for scope selector");
	if (scope && op && strcmp(scope, "PriorityClass") && with_values)
		v_err_invalid_str(
		    c, "operator", op,
		    "must be 'Exist' when scope is any of "
		    "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
		    "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
		    "ResourceQuotaScopeCrossNamespacePodAffinity");
}

/* Whether spec names scope in scopes or (as Exists) its scopeSelector. */
static bool quota_has_scope(const struct ynode *spec, const char *scope)
{
	const struct ynode *scopes = ynode_get(spec, "scopes");
	for (size_t i = 0; scopes && scopes->type == YNODE_SEQ && i < scopes->n; i++)
		if (v_streq(ynode_str(ynode_item(scopes, i)), scope))
			return true;
	const struct ynode *ex = ynode_path(spec, "scopeSelector.matchExpressions");
	for (size_t i = 0; ex && ex->type == YNODE_SEQ && i < ex->n; i++)
		if (v_streq(ynode_path_str(ynode_item(ex, i), "scopeName"), scope) &&
		    v_streq(ynode_path_str(ynode_item(ex, i), "operator"), "Exists"))
			return true;
	return false;
}

static void check_resource_quota(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	v_check_resource_list(c, spec, "hard", quota_name_ok, "for quota");
	struct ynode *scopes = v_check_str_list(c, spec, "scopes", OPT, NULL);
	for (size_t i = 0; scopes && i < scopes->n; i++) {
		const char *s = ynode_str(ynode_item(scopes, i));
		char key[32];
		snprintf(key, sizeof(key), "scopes[%zu]", i);
		if (s && v_scalar_is_string(ynode_item(scopes, i)) && !v_in_list(s, quota_scopes))
			v_err_unsupported(c, key, s, quota_scopes);
	}
	/* Kubernetes' ValidateResourceQuotaSpec: opposite scopes conflict. */
	struct ynode *sel = v_get_map(c, spec, "scopeSelector", OPT);
	if (sel) {
		size_t smark = v_path_push(c, "scopeSelector");
		v_check_each(c, sel, "matchExpressions", OPT, check_scope_requirement, NULL);
		v_path_pop(c, smark);
	}
	static const char *const opposite[][2] = {{"Terminating", "NotTerminating"},
						  {"BestEffort", "NotBestEffort"}};
	for (size_t o = 0; o < ARRAY_SIZE(opposite); o++) {
		if (quota_has_scope(spec, opposite[o][0]) && quota_has_scope(spec, opposite[o][1]))
			v_err_invalid_str(c, "scopes", opposite[o][0], "conflicting scopes");
	}
	v_path_pop(c, mark);
}

/* ResourceQuota */
const struct kind_rules v_rules_resource_quota = {
    .kind = KIND_RESOURCE_QUOTA,
    .name = names_dns1123_subdomain,
    .check = check_resource_quota,
};

/* The quantity of r in a LimitRange item's list, with its text. */
static bool limit_of(const struct ynode *item, const char *list, const char *r, int64_t *q,
		     const char **text)
{
	struct ynode *l = ynode_get(item, list);
	if (!l || l->type != YNODE_MAP || !v_resource_of(l, r, q))
		return false;
	*text = ynode_str(ynode_get(l, r));
	return true;
}

static void check_limit_item(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	const char *type = v_get_enum(c, it, "type", REQ, limit_types);
	static const char *const lists[] = {"min", "max", "default", "defaultRequest",
					    "maxLimitRequestRatio"};
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++)
		v_check_resource_list(c, it, lists[i], NULL, "");
	bool container = type && !strcmp(type, "Container");
	if (type && !container) {
		if (!v_node_empty(ynode_get(it, "default")))
			v_err_forbidden(c, "default", "may not be specified when `type` is '%s'",
					type);
		if (!v_node_empty(ynode_get(it, "defaultRequest")))
			v_err_forbidden(c, "defaultRequest",
					"may not be specified when `type` is '%s'", type);
	}
	/* Compare each resource's bounds, with the defaults Kubernetes would
	 * fill in for a Container item. */
	cleanup_strset struct strset seen = {0};
	for (size_t l = 0; l < 4; l++) {
		struct ynode *list = ynode_get(it, lists[l]);
		for (size_t i = 0; list && list->type == YNODE_MAP && i < list->n; i++) {
			const char *r = ynode_map_key(list, i)->str;
			if (!v_strset_add(&seen, r))
				continue;
			int64_t mn = 0, mx = 0, df = 0, dr = 0;
			const char *smn = NULL, *smx = NULL, *sdf = NULL, *sdr = NULL;
			bool hmn = limit_of(it, "min", r, &mn, &smn);
			bool hmx = limit_of(it, "max", r, &mx, &smx);
			bool hdf = limit_of(it, "default", r, &df, &sdf);
			bool hdr = limit_of(it, "defaultRequest", r, &dr, &sdr);
			if (container && !hdf && hmx) {
				hdf = true;
				df = mx;
				sdf = smx;
			}
			if (container && !hdr && (hdf || hmn)) {
				hdr = true;
				dr = hdf ? df : mn;
				sdr = hdf ? sdf : smn;
			}
			cleanup_free char *kmin = xasprintf("min[%s]", r);
			cleanup_free char *kdef = xasprintf("default[%s]", r);
			cleanup_free char *kreq = xasprintf("defaultRequest[%s]", r);
			if (hmn && hmx && mn > mx)
				v_err_invalid_str(c, kmin, smn,
						  "min value %s is greater than max value %s", smn,
						  smx);
			if (hmn && hdr && mn > dr)
				v_err_invalid_str(
				    c, kmin, smn,
				    "min value %s is greater than default request value %s", smn,
				    sdr);
			if (hdr && hmx && dr > mx)
				v_err_invalid_str(
				    c, kreq, sdr,
				    "default request value %s is greater than max value %s", sdr,
				    smx);
			if (hdf && hmx && df > mx)
				v_err_invalid_str(c, kdef, sdf,
						  "default value %s is greater than max value %s",
						  sdf, smx);
			if (hdr && hdf && dr > df)
				v_err_invalid_str(c, kreq, sdr,
						  "default request value %s is greater than "
						  "default limit value %s",
						  sdr, sdf);
		}
	}
}

static void check_limit_range(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	v_check_each(c, spec, "limits", REQ, check_limit_item, NULL);
	v_path_pop(c, mark);
}

/* Fill in what Kubernetes does for a Container item: default from max,
 * defaultRequest from default, then from min. */
static void default_limit_range(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *it;
	struct ynode *limits = ynode_path(obj, "spec.limits");
	for_each_map_item(limits, i, it)
	{
		if (!v_streq(ynode_path_str(it, "type"), "Container"))
			continue;
		static const char *const from[] = {"max", "default", "min"};
		static const char *const to[] = {"default", "defaultRequest", "defaultRequest"};
		for (size_t s = 0; s < ARRAY_SIZE(from); s++) {
			struct ynode *src = ynode_get(it, from[s]);
			if (!src || src->type != YNODE_MAP || src->n == 0)
				continue;
			struct ynode *dst = v_default_map(it, to[s]);
			for (size_t k = 0; dst && k < src->n; k++)
				if (!ynode_get(dst, ynode_map_key(src, k)->str))
					ynode_set(dst, ynode_map_key(src, k)->str,
						  ynode_clone(ynode_map_val(src, k)));
		}
	}
}

/* LimitRange */
const struct kind_rules v_rules_limit_range = {
    .kind = KIND_LIMIT_RANGE,
    .name = names_dns1123_subdomain,
    .check = check_limit_range,
    .defaults = default_limit_range,
};

/* ---- Event -------------------------------------------------------------- */

static const char *const event_types[] = {"Normal", "Warning", NULL};

static void check_event(struct vctx *c, struct ynode *obj)
{
	if (c->api_version && !strcmp(c->api_version, "v1")) {
		struct ynode *io = v_get_map(c, obj, "involvedObject", REQ);
		const char *ens = ynode_path_str(obj, "metadata.namespace");
		const char *ons = io ? ynode_path_str(io, "namespace") : NULL;
		if (ons && *ons && ens && *ens && strcmp(ons, ens) != 0)
			v_err_invalid_str(c, "involvedObject.namespace", ons,
					  "does not match event.namespace");
		v_get_str(c, obj, "reason", OPT);
		v_get_str(c, obj, "message", OPT);
		v_get_enum(c, obj, "type", OPT, event_types);
		v_get_i32_min(c, obj, "count", 0, NULL);
		return;
	}
	v_get_str(c, obj, "eventTime", REQ);
	v_get_str(c, obj, "reportingController", REQ);
	const char *inst = v_get_str(c, obj, "reportingInstance", REQ);
	const char *action = v_get_str(c, obj, "action", REQ);
	const char *reason = v_get_str(c, obj, "reason", REQ);
	v_get_enum(c, obj, "type", REQ, event_types);
	const char *note = v_get_str(c, obj, "note", OPT);
	if (inst && strlen(inst) > 128)
		v_err_too_long(c, "reportingInstance", 128);
	if (action && strlen(action) > 128)
		v_err_too_long(c, "action", 128);
	if (reason && strlen(reason) > 128)
		v_err_too_long(c, "reason", 128);
	if (note && strlen(note) > 1024)
		v_err_too_long(c, "note", 1024);
	v_get_map(c, obj, "regarding", OPT);
}

/* Event */
const struct kind_rules v_rules_event = {
    .kind = KIND_EVENT,
    .name = names_dns1123_subdomain,
    .check = check_event,
};
