/* kinds_networking.c: the rules of the networking.k8s.io API group's
 * kinds: NetworkPolicy, Ingress (with the old extensions/v1beta1 backend
 * shape) and the cluster-scoped IngressClass. */
#include "names.h"
#include "util.h"
#include "validate_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- NetworkPolicy and Ingress ---------------------------------------- */

static const char *const policy_types[] = {"Ingress", "Egress", NULL};
static const char *const path_types[] = {"Exact", "Prefix", "ImplementationSpecific", NULL};

static void check_netpol_port(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	v_get_enum(c, p, "protocol", OPT, v_protocols);
	struct intstr port = {0};
	bool have = !v_node_unset(ynode_get(p, "port"));
	if (have) {
		v_check_port_ref(c, p, "port", OPT);
		have = v_scalar_int(ynode_get(p, "port"), &port.i);
		port.is_int = have;
	}
	long long end = 0;
	if (v_get_i32(c, p, "endPort", OPT, &end)) {
		if (v_node_unset(ynode_get(p, "port")))
			v_err_required(c, "port", "must be specified when `endPort` is specified");
		else if (!port.is_int)
			v_err_forbidden(c, "endPort",
					"may not be specified when `port` is non-numeric");
		else if (end < port.i)
			v_err_invalid_int(c, "endPort", end,
					  "must be greater than or equal to `port`");
	}
}

static void check_netpol_peer(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	static const char *const kinds[] = {"podSelector", "namespaceSelector", "ipBlock", NULL};
	size_t n = v_count_present(p, kinds, NULL);
	if (n == 0)
		v_err_required(c, NULL, "must specify a peer");
	else if (ynode_get(p, "ipBlock") && n > 1)
		v_err_forbidden(c, NULL, "may not specify both ipBlock and another peer");
	v_check_label_selector(c, p, "podSelector", OPT);
	v_check_label_selector(c, p, "namespaceSelector", OPT);
	struct ynode *ib = v_get_map(c, p, "ipBlock", OPT);
	if (!ib)
		return;
	size_t mark = v_path_push(c, "ipBlock");
	const char *cidr = v_get_str(c, ib, "cidr", REQ);
	if (cidr)
		v_check_cidr(c, "cidr", cidr);
	struct ynode *ex = v_check_str_list(c, ib, "except", OPT, NULL);
	for (size_t i = 0; ex && i < ex->n; i++) {
		char key[32];
		snprintf(key, sizeof(key), "except[%zu]", i);
		if (ynode_str(ynode_item(ex, i)))
			v_check_cidr(c, key, ynode_str(ynode_item(ex, i)));
	}
	v_path_pop(c, mark);
}

static void check_netpol_rule(struct vctx *c, struct ynode *r, void *arg)
{
	const char *peers = arg;
	v_check_each(c, r, "ports", OPT, check_netpol_port, NULL);
	v_check_each(c, r, peers, OPT, check_netpol_peer, NULL);
}

static void check_network_policy(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	v_check_label_selector(c, spec, "podSelector", OPT);
	v_check_each(c, spec, "ingress", OPT, check_netpol_rule, "from");
	v_check_each(c, spec, "egress", OPT, check_netpol_rule, "to");
	struct ynode *types = v_check_str_list(c, spec, "policyTypes", OPT, NULL);
	for (size_t i = 0; types && i < types->n; i++) {
		const char *s = ynode_str(ynode_item(types, i));
		char key[40];
		snprintf(key, sizeof(key), "policyTypes[%zu]", i);
		if (s && v_scalar_is_string(ynode_item(types, i)) && !v_in_list(s, policy_types))
			v_err_unsupported(c, key, s, policy_types);
	}
	if (types && types->n > 2)
		v_err_invalid_node(c, "policyTypes", types, "may not have more than 2 items");
	v_path_pop(c, mark);
}

static void default_network_policy(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = v_default_map(obj, "spec");
	if (!spec)
		return;
	static const char *const rules[] = {"ingress", "egress"};
	for (size_t r = 0; r < ARRAY_SIZE(rules); r++) {
		struct ynode *rule, *port;
		struct ynode *list = ynode_get(spec, rules[r]);
		for_each_map_item(list, i, rule)
		{
			struct ynode *ports = ynode_get(rule, "ports");
			for_each_map_item(ports, j, port) v_default_str(port, "protocol", "TCP");
		}
	}
	v_default_map(spec, "podSelector");
	if (v_node_empty(ynode_get(spec, "policyTypes"))) {
		struct ynode *types = ynode_new_seq();
		ynode_append(types, ynode_new_str("Ingress"));
		if (!v_node_empty(ynode_get(spec, "egress")))
			ynode_append(types, ynode_new_str("Egress"));
		ynode_set(spec, "policyTypes", types);
	}
}

/* NetworkPolicy */
const struct kind_rules v_rules_network_policy = {
    .kind = KIND_NETWORK_POLICY,
    .name = names_dns1123_subdomain,
    .check = check_network_policy,
    .defaults = default_network_policy,
};

static bool ingress_v1(const struct vctx *c)
{
	return c->api_version && !strcmp(c->api_version, "networking.k8s.io/v1");
}

static void check_ingress_backend(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct ynode *b = v_get_map(c, m, key, req);
	if (!b)
		return;
	size_t mark = v_path_push(c, key);
	if (!ingress_v1(c)) {
		const char *svc = v_get_str(c, b, "serviceName", REQ);
		if (svc)
			v_check_name(c, "serviceName", svc, names_dns1035_label);
		v_check_port_ref(c, b, "servicePort", REQ);
		v_path_pop(c, mark);
		return;
	}
	static const char *const kinds[] = {"service", "resource", NULL};
	size_t n = v_count_present(b, kinds, NULL);
	if (n == 0)
		v_err_invalid_node(c, NULL, b,
				   "one backend (`service` or `resource`) must be specified");
	else if (n > 1)
		v_err_invalid_node(c, NULL, b, "cannot set both `resource` and `service` backends");
	struct ynode *svc = v_get_map(c, b, "service", OPT);
	if (svc) {
		size_t sm = v_path_push(c, "service");
		const char *name = v_get_str(c, svc, "name", REQ);
		if (name)
			v_check_name(c, "name", name, names_dns1035_label);
		struct ynode *port = v_get_map(c, svc, "port", REQ);
		if (port) {
			size_t pm = v_path_push(c, "port");
			long long num = 0;
			bool hnum = v_get_i32(c, port, "number", OPT, &num);
			const char *pname = v_get_str(c, port, "name", OPT);
			if (hnum)
				v_check_range(c, "number", num, 1, 65535);
			if (pname && *pname)
				v_check_name(c, "name", pname, names_port_name);
			if (hnum && pname && *pname)
				v_err_invalid_node(c, NULL, port,
						   "cannot set both port name & port number");
			else if (!hnum && (!pname || !*pname) &&
				 v_node_unset(ynode_get(port, "number")))
				v_err_required(c, NULL, "port name or number is required");
			v_path_pop(c, pm);
		}
		v_path_pop(c, sm);
	}
	struct ynode *res = v_get_map(c, b, "resource", OPT);
	if (res) {
		size_t rm = v_path_push(c, "resource");
		v_get_str(c, res, "kind", REQ);
		v_get_str(c, res, "name", REQ);
		v_get_str(c, res, "apiGroup", OPT);
		v_path_pop(c, rm);
	}
	v_path_pop(c, mark);
}

static void check_ingress_path(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	const char *path = v_get_str(c, p, "path", OPT);
	const char *type = v_get_enum(c, p, "pathType", ingress_v1(c) ? REQ : OPT, path_types);
	if (type && strcmp(type, "ImplementationSpecific") != 0 && (!path || path[0] != '/'))
		v_err_invalid_str(c, "path", path ? path : "", "must be an absolute path");
	check_ingress_backend(c, p, "backend", REQ);
}

static void check_ingress_host(struct vctx *c, const char *key, const char *h)
{
	if (v_is_ip(h)) {
		v_err_invalid_str(c, key, h, "must be a DNS name, not an IP address");
		return;
	}
	const char *name = strncmp(h, "*.", 2) == 0 ? h + 2 : h;
	cleanup_error struct error *e = NULL;
	if (names_dns1123_subdomain(name, &e) < 0)
		v_err_invalid_str(c, key, h, "%s", e && e->msg ? e->msg : "invalid host");
}

static void check_ingress_rule(struct vctx *c, struct ynode *r, void *arg)
{
	(void)arg;
	const char *host = v_get_str(c, r, "host", OPT);
	if (host && *host)
		check_ingress_host(c, "host", host);
	struct ynode *http = v_get_map(c, r, "http", OPT);
	if (!http)
		return;
	size_t mark = v_path_push(c, "http");
	v_check_each(c, http, "paths", REQ, check_ingress_path, NULL);
	v_path_pop(c, mark);
}

static void check_ingress_tls(struct vctx *c, struct ynode *t, void *arg)
{
	(void)arg;
	struct ynode *hosts = v_check_str_list(c, t, "hosts", OPT, NULL);
	for (size_t i = 0; hosts && i < hosts->n; i++) {
		char key[32];
		snprintf(key, sizeof(key), "hosts[%zu]", i);
		const char *h = ynode_str(ynode_item(hosts, i));
		if (h && *h && v_scalar_is_string(ynode_item(hosts, i)))
			check_ingress_host(c, key, h);
	}
	v_get_str(c, t, "secretName", OPT);
}

static void check_ingress(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	size_t mark = v_path_push(c, "spec");
	const char *backend = ingress_v1(c) ? "defaultBackend" : "backend";
	const char *cls = v_get_str(c, spec, "ingressClassName", OPT);
	if (cls && *cls)
		v_check_name(c, "ingressClassName", cls, names_dns1123_subdomain);
	check_ingress_backend(c, spec, backend, OPT);
	struct ynode *rules = v_check_each(c, spec, "rules", OPT, check_ingress_rule, NULL);
	v_check_each(c, spec, "tls", OPT, check_ingress_tls, NULL);
	if ((!rules || rules->n == 0) && v_node_unset(ynode_get(spec, backend)) &&
	    (!spec || !ynode_get(spec, "rules")))
		v_err_invalid_node(c, NULL, spec, "either `%s` or `rules` must be specified",
				   backend);
	v_path_pop(c, mark);
}

static void default_ingress(struct vctx *c, struct ynode *obj)
{
	struct ynode *r, *p;
	if (ingress_v1(c))
		return;
	struct ynode *rules = ynode_path(obj, "spec.rules");
	for_each_map_item(rules, i, r)
	{
		struct ynode *paths = ynode_path(r, "http.paths");
		for_each_map_item(paths, j, p)
		    v_default_str(p, "pathType", "ImplementationSpecific");
	}
}

/* Ingress */
const struct kind_rules v_rules_ingress = {
    .kind = KIND_INGRESS,
    .name = names_dns1123_subdomain,
    .check = check_ingress,
    .defaults = default_ingress,
};

/* ---- IngressClass ----------------------------------------------------- */

#define INGRESS_CLASS_CONTROLLER_MAX 250
/* RFC 3986 path characters: Kubernetes' httpPathFmt. */
#define HTTP_PATH_FMT "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
#define HTTP_PATH_CHARS                                                                            \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:"

static const char *const param_scopes[] = {"Cluster", "Namespace", NULL};

/* Kubernetes' IsDomainPrefixedPath: "host/path", the host a DNS-1123
 * subdomain, the path made of RFC 3986 path characters. */
static void check_domain_prefixed_path(struct vctx *c, const char *key, const char *s)
{
	if (!s || !*s) {
		v_err_required(c, key, NULL);
		return;
	}
	const char *slash = strchr(s, '/');
	if (!slash || slash == s || !slash[1]) {
		v_err_invalid_str(c, key, s,
				  "must be a domain-prefixed path (such as \"acme.io/foo\")");
		return;
	}
	cleanup_free char *host = xstrndup(s, (size_t)(slash - s));
	v_check_name(c, key, host, names_dns1123_subdomain);
	const char *path = slash + 1;
	if (strspn(path, HTTP_PATH_CHARS) != strlen(path))
		v_err_invalid_str(c, key, path, "Invalid path (regex used for validation is '%s')",
				  HTTP_PATH_FMT);
}

/* Kubernetes' IsValidPathSegmentName: what may name an object in a URL. */
static void check_path_segment(struct vctx *c, const char *key, const char *s)
{
	if (!strcmp(s, ".") || !strcmp(s, "..")) {
		v_err_invalid_str(c, key, s, "may not be '%s'", s);
		return;
	}
	if (strchr(s, '/'))
		v_err_invalid_str(c, key, s, "may not contain '/'");
	if (strchr(s, '%'))
		v_err_invalid_str(c, key, s, "may not contain '%%'");
}

static void check_ingress_class_params(struct vctx *c, const struct ynode *p)
{
	const char *group = v_get_str(c, p, "apiGroup", OPT);
	if (group)
		v_check_name(c, "apiGroup", group, names_dns1123_subdomain);
	static const char *const refs[] = {"kind", "name"};
	for (size_t i = 0; i < ARRAY_SIZE(refs); i++) {
		const char *s = v_get_str(c, p, refs[i], OPT);
		if (s && *s) {
			check_path_segment(c, refs[i], s);
			continue;
		}
		cleanup_free char *why = xasprintf("%s is required", refs[i]);
		v_err_required(c, refs[i], why);
	}
	/* an unset scope is Cluster (defaulted) */
	const char *scope = v_get_str(c, p, "scope", OPT);
	if (scope && !v_in_list(scope, param_scopes)) {
		v_err_unsupported(c, "scope", scope, param_scopes);
		return;
	}
	const char *ns = v_get_str(c, p, "namespace", OPT);
	if (v_streq(scope, "Namespace")) {
		if (!ns)
			v_err_required(c, "namespace", "`parameters.scope` is set to 'Namespace'");
		else
			v_check_name(c, "namespace", ns, names_dns1123_label);
	} else if (ns) {
		v_err_forbidden(c, "namespace", "`parameters.scope` is set to 'Cluster'");
	}
}

static void check_ingress_class(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = v_get_map(c, obj, "spec", OPT);
	size_t mark = v_path_push(c, "spec");
	const char *ctl = v_get_str(c, spec, "controller", OPT);
	if (ctl && strlen(ctl) > INGRESS_CLASS_CONTROLLER_MAX)
		v_err_too_long(c, "controller", INGRESS_CLASS_CONTROLLER_MAX);
	check_domain_prefixed_path(c, "controller", ctl);
	struct ynode *params = v_get_map(c, spec, "parameters", OPT);
	if (params) {
		size_t pm = v_path_push(c, "parameters");
		check_ingress_class_params(c, params);
		v_path_pop(c, pm);
	}
	v_path_pop(c, mark);
}

static void default_ingress_class(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *params = ynode_path(obj, "spec.parameters");
	if (params && params->type == YNODE_MAP)
		v_default_str(params, "scope", "Cluster");
}

/* The controller is fixed once the class exists (parameters may change). */
static void update_ingress_class(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	v_check_immutable(c, obj, old, "spec.controller");
}

const struct kind_rules v_rules_ingress_class = {
    .kind = KIND_INGRESS_CLASS,
    .name = names_dns1123_subdomain,
    .check = check_ingress_class,
    .defaults = default_ingress_class,
    .update = update_ingress_class,
};
