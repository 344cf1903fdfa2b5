/* validate.c: per-kind validation and defaulting of the objects written to
 * the tree, with Kubernetes' rules and wording: the engine every kind
 * shares, the registry of rules by kind, and validate_object. The kinds
 * themselves are in fs/kinds_<group>.c, one API group per file; how the two
 * fit is written down in validate_impl.h.
 *
 * Checks only read the document; defaults are applied once every check has
 * passed, so that a rejected write leaves the document exactly as written.
 * An update is checked on a defaulted copy, so that a document that leaves
 * out what defaulting would add compares equal to the stored object. This
 * file must never do I/O or consult other objects: checks that need the rest
 * of the cluster (quota, admission, name clashes) belong to the caller.
 * Label selectors are checked here, field by field, and then read and
 * matched with lib/selector, so that what is accepted is what the
 * controllers read. */
#include "validate.h"
#include "names.h"
#include "quantity.h"
#include "selector.h"
#include "strmap.h"
#include "util.h"
#include "validate_impl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- field paths ------------------------------------------------------ */

/* Appends ".key" (or "[i]"-style keys as they are) to the current path and
 * returns the mark to pop back to. */
size_t v_path_push(struct vctx *c, const char *key)
{
	size_t mark = c->plen;
	if (!key || !*key)
		return mark;
	size_t room = sizeof(c->path) - c->plen;
	const char *dot = (key[0] == '[' || c->plen == 0) ? "" : ".";
	int n = snprintf(c->path + c->plen, room, "%s%s", dot, key);
	if (n < 0)
		n = 0;
	c->plen += (size_t)n < room ? (size_t)n : room - 1;
	return mark;
}

static size_t path_index(struct vctx *c, size_t i)
{
	char b[32];
	snprintf(b, sizeof(b), "[%zu]", i);
	return v_path_push(c, b);
}

void v_path_pop(struct vctx *c, size_t mark)
{
	c->plen = mark;
	c->path[mark] = '\0';
}

/* "[key]" for an entry of a map such as data or resources.limits. */
char *v_path_entry(const char *key)
{
	return xasprintf("[%s]", key);
}

/* ---- showing values in messages --------------------------------------- */

static void sb_addn(struct sbuf *b, const char *s, size_t n)
{
	if (b->full)
		return;
	if (b->len + n > VALIDATE_SHOW_MAX) {
		n = VALIDATE_SHOW_MAX > b->len ? VALIDATE_SHOW_MAX - b->len : 0;
		b->full = true;
	}
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->buf = xrealloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void v_sb_add(struct sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

void v_sb_quote(struct sbuf *b, const char *s)
{
	v_sb_add(b, "\"");
	for (; *s && !b->full; s++) {
		char e[8];
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			e[0] = '\\';
			e[1] = (char)ch;
			e[2] = '\0';
		} else if (ch == '\n') {
			strcpy(e, "\\n");
		} else if (ch == '\t') {
			strcpy(e, "\\t");
		} else if (ch < 0x20 || ch == 0x7f) {
			snprintf(e, sizeof(e), "\\x%02x", ch);
		} else {
			e[0] = (char)ch;
			e[1] = '\0';
		}
		v_sb_add(b, e);
	}
	v_sb_add(b, "\"");
}

static bool scalar_is_number(const struct ynode *n);
static bool scalar_is_bool(const struct ynode *n);

static void sb_node(struct sbuf *b, const struct ynode *n)
{
	if (!n || ynode_is_null(n)) {
		v_sb_add(b, "null");
		return;
	}
	switch (n->type) {
	case YNODE_SCALAR:
		if (scalar_is_number(n) || scalar_is_bool(n))
			v_sb_add(b, n->str);
		else
			v_sb_quote(b, n->str);
		break;
	case YNODE_SEQ:
		v_sb_add(b, "[");
		for (size_t i = 0; i < n->n && !b->full; i++) {
			if (i)
				v_sb_add(b, ", ");
			sb_node(b, ynode_item(n, i));
		}
		v_sb_add(b, "]");
		break;
	case YNODE_MAP:
		v_sb_add(b, "{");
		for (size_t i = 0; i < n->n && !b->full; i++) {
			if (i)
				v_sb_add(b, ", ");
			v_sb_quote(b, ynode_map_key(n, i)->str);
			v_sb_add(b, ": ");
			sb_node(b, ynode_map_val(n, i));
		}
		v_sb_add(b, "}");
		break;
	}
}

char *v_sb_finish(struct sbuf *b)
{
	if (b->full) {
		b->full = false;
		b->len = b->len > VALIDATE_SHOW_MAX ? VALIDATE_SHOW_MAX : b->len;
		v_sb_add(b, "...");
	}
	return b->buf ? b->buf : xstrdup("");
}

static char *show_node(const struct ynode *n)
{
	struct sbuf b = {0};
	sb_node(&b, n);
	return v_sb_finish(&b);
}

static char *show_str(const char *s)
{
	struct sbuf b = {0};
	v_sb_quote(&b, s);
	return v_sb_finish(&b);
}

/* ---- errors ----------------------------------------------------------- */

static void err_addv(struct vctx *c, const char *key, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void err_addv(struct vctx *c, const char *key, const char *fmt, va_list ap)
{
	if (c->nmsgs >= VALIDATE_MAX_ERRORS) {
		c->nmore++;
		return;
	}
	size_t mark = v_path_push(c, key);
	cleanup_free char *detail = xvasprintf(fmt, ap);
	c->msgs[c->nmsgs++] = xasprintf("%s: %s", c->plen ? c->path : "<object>", detail);
	v_path_pop(c, mark);
}

static void err_add(struct vctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void err_add(struct vctx *c, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_addv(c, key, fmt, ap);
	va_end(ap);
}

void v_err_required(struct vctx *c, const char *key, const char *detail)
{
	if (detail)
		err_add(c, key, "Required value: %s", detail);
	else
		err_add(c, key, "Required value");
}

static void err_invalid_shown(struct vctx *c, const char *key, const char *shown, const char *fmt,
			      va_list ap) __attribute__((format(printf, 4, 0)));
static void err_invalid_shown(struct vctx *c, const char *key, const char *shown, const char *fmt,
			      va_list ap)
{
	cleanup_free char *detail = xvasprintf(fmt, ap);
	err_add(c, key, "Invalid value: %s: %s", shown, detail);
}

void v_err_invalid_str(struct vctx *c, const char *key, const char *s, const char *fmt, ...)
{
	cleanup_free char *shown = show_str(s);
	va_list ap;
	va_start(ap, fmt);
	err_invalid_shown(c, key, shown, fmt, ap);
	va_end(ap);
}

void v_err_invalid_int(struct vctx *c, const char *key, long long v, const char *fmt, ...)
{
	cleanup_free char *shown = xasprintf("%lld", v);
	va_list ap;
	va_start(ap, fmt);
	err_invalid_shown(c, key, shown, fmt, ap);
	va_end(ap);
}

void v_err_invalid_node(struct vctx *c, const char *key, const struct ynode *n, const char *fmt,
			...)
{
	cleanup_free char *shown = show_node(n);
	va_list ap;
	va_start(ap, fmt);
	err_invalid_shown(c, key, shown, fmt, ap);
	va_end(ap);
}

void v_err_duplicate(struct vctx *c, const char *key, const char *s)
{
	cleanup_free char *shown = show_str(s);
	err_add(c, key, "Duplicate value: %s", shown);
}

void v_err_not_found(struct vctx *c, const char *key, const char *s)
{
	cleanup_free char *shown = show_str(s);
	err_add(c, key, "Not found: %s", shown);
}

void v_err_forbidden(struct vctx *c, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *detail = xvasprintf(fmt, ap);
	va_end(ap);
	err_add(c, key, "Forbidden: %s", detail);
}

void v_err_too_long(struct vctx *c, const char *key, size_t max)
{
	err_add(c, key, "Too long: must have at most %zu bytes", max);
}

void v_err_unsupported(struct vctx *c, const char *key, const char *s, const char *const *allowed)
{
	struct sbuf b = {0};
	for (size_t i = 0; allowed[i]; i++) {
		if (i)
			v_sb_add(&b, ", ");
		v_sb_quote(&b, allowed[i]);
	}
	cleanup_free char *list = v_sb_finish(&b);
	cleanup_free char *shown = show_str(s);
	err_add(c, key, "Unsupported value: %s: supported values: %s", shown, list);
}

/* ---- scalar types ----------------------------------------------------- */

bool v_node_unset(const struct ynode *n)
{
	return !n || ynode_is_null(n);
}

/* Unset, an empty string, or an empty list or map: what Kubernetes'
 * omitempty makes of a field, and what defaulting fills in. */
bool v_node_empty(const struct ynode *n)
{
	if (v_node_unset(n))
		return true;
	if (n->type == YNODE_SCALAR)
		return n->len == 0;
	return n->n == 0;
}

/* YAML 1.1 octal ("0644"), which Kubernetes' YAML reader honours and which
 * mode fields are commonly written in. */
bool v_plain_octal(const char *s, long long *out)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (p[0] != '0' || !p[1])
		return false;
	for (const char *q = p + 1; *q; q++)
		if (*q < '0' || *q > '7')
			return false;
	long long v = strtoll(p + 1, NULL, 8);
	*out = s[0] == '-' ? -v : v;
	return true;
}

static bool plain_float(const char *s)
{
	const char *p = s;
	bool digits = false;
	if (*p == '+' || *p == '-')
		p++;
	if (strcasecmp(p, ".inf") == 0 || (p == s && strcasecmp(p, ".nan") == 0))
		return true;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (digits && (*p == 'e' || *p == 'E')) {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return digits && !*p;
}

bool v_scalar_int(const struct ynode *n, long long *out)
{
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return false;
	if (v_plain_octal(n->str, out))
		return true;
	return ynode_int(n, out) == 0;
}

static bool scalar_is_number(const struct ynode *n)
{
	long long v = 0;
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return false;
	return v_scalar_int(n, &v) || plain_float(n->str);
}

static bool scalar_is_bool(const struct ynode *n)
{
	bool b = false;
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return false;
	return ynode_bool(n, &b) == 0;
}

bool v_scalar_is_string(const struct ynode *n)
{
	return n && n->type == YNODE_SCALAR && !scalar_is_number(n) && !scalar_is_bool(n);
}

/* ---- typed field access ----------------------------------------------- */

/* Each getter reads key from the mapping m (NULL: an absent parent) and
 * returns NULL (false) when the field is unset; it records "Required value"
 * when req and unset, and a type error when the value has the wrong type. */

struct ynode *v_get_any(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct ynode *v = m ? ynode_get(m, key) : NULL;
	if (v_node_unset(v)) {
		if (req)
			v_err_required(c, key, NULL);
		return NULL;
	}
	return v;
}

struct ynode *v_get_map(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct ynode *v = v_get_any(c, m, key, req);
	if (v && v->type != YNODE_MAP) {
		v_err_invalid_node(c, key, v, "must be a map");
		return NULL;
	}
	return v;
}

struct ynode *v_get_seq(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct ynode *v = v_get_any(c, m, key, req);
	if (!v)
		return NULL;
	if (v->type != YNODE_SEQ) {
		v_err_invalid_node(c, key, v, "must be a list");
		return NULL;
	}
	if (req && v->n == 0) {
		v_err_required(c, key, NULL);
		return NULL;
	}
	return v;
}

const char *v_get_str(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct ynode *v = v_get_any(c, m, key, req);
	if (!v)
		return NULL;
	if (!v_scalar_is_string(v)) {
		v_err_invalid_node(c, key, v, "must be a string");
		return NULL;
	}
	if (req && v->len == 0) {
		v_err_required(c, key, NULL);
		return NULL;
	}
	return v->str;
}

bool v_get_int(struct vctx *c, const struct ynode *m, const char *key, int req, long long *out)
{
	struct ynode *v = v_get_any(c, m, key, req);
	if (!v)
		return false;
	if (!v_scalar_int(v, out)) {
		v_err_invalid_node(c, key, v, "must be an integer");
		return false;
	}
	return true;
}

/* An int32 field: out of range is a type error in Kubernetes. */
bool v_get_i32(struct vctx *c, const struct ynode *m, const char *key, int req, long long *out)
{
	if (!v_get_int(c, m, key, req, out))
		return false;
	if (*out > INT32_LIMIT || *out < -INT32_LIMIT - 1) {
		v_err_invalid_int(c, key, *out, "must be a 32-bit integer");
		return false;
	}
	return true;
}

bool v_get_bool(struct vctx *c, const struct ynode *m, const char *key, int req, bool *out)
{
	struct ynode *v = v_get_any(c, m, key, req);
	if (!v)
		return false;
	if (v->type != YNODE_SCALAR || v->quoted || ynode_bool(v, out) != 0) {
		v_err_invalid_node(c, key, v, "must be a boolean");
		return false;
	}
	return true;
}

static bool get_intstr(struct vctx *c, const struct ynode *m, const char *key, int req,
		       struct intstr *out)
{
	struct ynode *v = v_get_any(c, m, key, req);
	if (!v)
		return false;
	out->is_int = false;
	out->s = NULL;
	if (v_scalar_int(v, &out->i)) {
		out->is_int = true;
		return true;
	}
	if (!v_scalar_is_string(v)) {
		v_err_invalid_node(c, key, v, "must be an integer or a string");
		return false;
	}
	if (req && v->len == 0) {
		v_err_required(c, key, NULL);
		return false;
	}
	out->s = v->str;
	return true;
}

bool v_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

bool v_in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* A string field with a fixed set of values; "" counts as unset. */
const char *v_get_enum(struct vctx *c, const struct ynode *m, const char *key, int req,
		       const char *const *allowed)
{
	const char *s = v_get_str(c, m, key, req);
	if (!s || !*s)
		return NULL;
	if (!v_in_list(s, allowed)) {
		v_err_unsupported(c, key, s, allowed);
		return NULL;
	}
	return s;
}

/* ---- value rules ------------------------------------------------------ */

bool v_check_name(struct vctx *c, const char *key, const char *s, name_rule rule)
{
	cleanup_error struct error *e = NULL;
	if (rule(s, &e) == 0)
		return true;
	v_err_invalid_str(c, key, s, "%s", e && e->msg ? e->msg : "invalid name");
	return false;
}

bool v_check_range(struct vctx *c, const char *key, long long v, long long lo, long long hi)
{
	if (v >= lo && v <= hi)
		return true;
	v_err_invalid_int(c, key, v, "must be between %lld and %lld, inclusive", lo, hi);
	return false;
}

bool v_check_min(struct vctx *c, const char *key, long long v, long long lo)
{
	if (v >= lo)
		return true;
	if (lo == 1)
		v_err_invalid_int(c, key, v, "must be greater than 0");
	else
		v_err_invalid_int(c, key, v, "must be greater than or equal to %lld", lo);
	return false;
}

/* An optional int32 field that must be at least lo. */
bool v_get_i32_min(struct vctx *c, const struct ynode *m, const char *key, long long lo,
		   long long *out)
{
	long long v = 0;
	if (!v_get_i32(c, m, key, OPT, &v) || !v_check_min(c, key, v, lo))
		return false;
	if (out)
		*out = v;
	return true;
}

bool v_check_quantity(struct vctx *c, const char *key, const struct ynode *v, int64_t *milli)
{
	if (!v || v->type != YNODE_SCALAR || scalar_is_bool(v) || v->len == 0) {
		v_err_invalid_node(c, key, v, "must be a quantity (e.g. 500m, 1, 128Mi)");
		return false;
	}
	cleanup_error struct error *e = NULL;
	if (quantity_parse(v->str, milli, &e) < 0) {
		v_err_invalid_str(c, key, v->str, "%s", e && e->msg ? e->msg : "invalid quantity");
		return false;
	}
	return true;
}

bool v_is_ipv4(const char *s)
{
	struct in_addr a;
	return inet_pton(AF_INET, s, &a) == 1;
}

bool v_is_ip(const char *s)
{
	struct in6_addr a;
	return v_is_ipv4(s) || inet_pton(AF_INET6, s, &a) == 1;
}

/* "10.0.0.0/8" or an IPv6 prefix. */
static bool is_cidr(const char *s)
{
	const char *slash = strchr(s, '/');
	if (!slash || !slash[1])
		return false;
	cleanup_free char *ip = xstrndup(s, (size_t)(slash - s));
	char *end;
	long bits = strtol(slash + 1, &end, 10);
	if (*end || !isdigit((unsigned char)slash[1]))
		return false;
	if (v_is_ipv4(ip))
		return bits >= 0 && bits <= 32;
	struct in6_addr a;
	return inet_pton(AF_INET6, ip, &a) == 1 && bits >= 0 && bits <= 128;
}

bool v_check_ip(struct vctx *c, const char *key, const char *s)
{
	if (v_is_ip(s))
		return true;
	v_err_invalid_str(c, key, s,
			  "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
	return false;
}

bool v_check_cidr(struct vctx *c, const char *key, const char *s)
{
	if (is_cidr(s))
		return true;
	v_err_invalid_str(c, key, s,
			  "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)");
	return false;
}

/* A port given as a number or as the name of a container port. */
void v_check_port_ref(struct vctx *c, const struct ynode *m, const char *key, int req)
{
	struct intstr p;
	if (!get_intstr(c, m, key, req, &p))
		return;
	if (p.is_int)
		v_check_range(c, key, p.i, 1, 65535);
	else
		v_check_name(c, key, p.s, names_port_name);
}

/* "25%" or an integer; percent_max bounds the percentage (0: none). Kubernetes
 * calls these IntOrPercent. Returns the value and whether it is a percentage
 * through out/pct when valid. */
bool v_check_int_or_percent(struct vctx *c, const struct ynode *m, const char *key,
			    long long percent_max, long long *out, bool *pct)
{
	struct intstr v;
	if (!get_intstr(c, m, key, OPT, &v))
		return false;
	if (v.is_int) {
		if (!v_check_min(c, key, v.i, 0))
			return false;
		*out = v.i;
		*pct = false;
		return true;
	}
	size_t len = strlen(v.s);
	bool ok = len >= 2 && v.s[len - 1] == '%';
	for (size_t i = 0; ok && i + 1 < len; i++)
		ok = isdigit((unsigned char)v.s[i]);
	if (!ok) {
		v_err_invalid_str(
		    c, key, v.s,
		    "a valid percent string must be a numeric string followed by an ending '%%' "
		    "(e.g. '1%%',  or '93%%', regex used for validation is '[0-9]+%%')");
		return false;
	}
	long long p = strtoll(v.s, NULL, 10);
	if (percent_max && p > percent_max) {
		v_err_invalid_str(c, key, v.s, "must not be greater than %lld%%", percent_max);
		return false;
	}
	*out = p;
	*pct = true;
	return true;
}

/* A list whose items are strings. */
struct ynode *v_check_str_list(struct vctx *c, const struct ynode *m, const char *key, int req,
			       name_rule rule)
{
	struct ynode *l = v_get_seq(c, m, key, req);
	if (!l)
		return NULL;
	size_t mark = v_path_push(c, key);
	for (size_t i = 0; i < l->n; i++) {
		struct ynode *it = ynode_item(l, i);
		char idx[32];
		snprintf(idx, sizeof(idx), "[%zu]", i);
		if (!v_scalar_is_string(it))
			v_err_invalid_node(c, idx, it, "must be a string");
		else if (rule)
			v_check_name(c, idx, it->str, rule);
	}
	v_path_pop(c, mark);
	return l;
}

/* ---- string sets ------------------------------------------------------ */

bool v_strset_has(const struct strset *set, const char *s)
{
	return set->m && strmap_has(set->m, s);
}

/* Returns false when s was already there. */
bool v_strset_add(struct strset *set, const char *s)
{
	if (v_strset_has(set, s))
		return false;
	if (!set->m)
		set->m = strmap_new();
	strmap_set(set->m, s, NULL);
	return true;
}

/* Like v_strset_add, for a malloc'd s the set frees (the map keeps a copy). */
bool v_strset_add_owned(struct strset *set, char *s)
{
	bool added = v_strset_add(set, s);
	free(s);
	return added;
}

void v_strset_free(struct strset *set)
{
	strmap_free(set->m, NULL);
	set->m = NULL;
}

/* ---- maps of strings: labels, annotations, selectors, data ----------- */

static int names_lower_qualified(const char *s, struct error **err)
{
	cleanup_free char *low = xstrdup(s);
	for (char *p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return names_qualified_name(low, err);
}

/* Checks that key of m is a map of strings, each key by keyrule, each value
 * by valrule (either may be NULL). Returns the map when every entry is good. */
static struct ynode *check_str_map(struct vctx *c, const struct ynode *m, const char *key,
				   name_rule keyrule, name_rule valrule)
{
	struct ynode *map = v_get_map(c, m, key, OPT);
	if (!map)
		return NULL;
	size_t before = c->nmsgs + c->nmore;
	size_t mark = v_path_push(c, key);
	for (size_t i = 0; i < map->n; i++) {
		const char *k = ynode_map_key(map, i)->str;
		struct ynode *v = ynode_map_val(map, i);
		if (keyrule)
			v_check_name(c, NULL, k, keyrule);
		cleanup_free char *entry = v_path_entry(k);
		if (v_node_unset(v))
			continue; /* null reads as "" */
		if (!v_scalar_is_string(v))
			v_err_invalid_node(c, entry, v, "must be a string");
		else if (valrule)
			v_check_name(c, NULL, v->str, valrule);
	}
	v_path_pop(c, mark);
	return c->nmsgs + c->nmore == before ? map : NULL;
}

struct ynode *v_check_labels(struct vctx *c, const struct ynode *m, const char *key)
{
	return check_str_map(c, m, key, names_qualified_name, names_label_value);
}

void v_check_annotations(struct vctx *c, const struct ynode *m)
{
	struct ynode *a = check_str_map(c, m, "annotations", names_lower_qualified, NULL);
	if (!a)
		return;
	size_t total = 0;
	for (size_t i = 0; i < a->n; i++) {
		total += ynode_map_key(a, i)->len;
		struct ynode *v = ynode_map_val(a, i);
		if (v->type == YNODE_SCALAR)
			total += v->len;
	}
	if (total > ANNOTATIONS_MAX)
		v_err_too_long(c, "annotations", ANNOTATIONS_MAX);
}

/* ---- label selectors -------------------------------------------------- */

static const char *const selector_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};

/* A metav1.LabelSelector at key of m. */
struct ynode *v_check_label_selector(struct vctx *c, const struct ynode *m, const char *key,
				     int req)
{
	struct ynode *sel = v_get_map(c, m, key, req);
	if (!sel)
		return NULL;
	size_t before = c->nmsgs + c->nmore;
	size_t mark = v_path_push(c, key);
	v_check_labels(c, sel, "matchLabels");
	struct ynode *exprs = v_get_seq(c, sel, "matchExpressions", OPT);
	size_t em = v_path_push(c, "matchExpressions");
	for (size_t i = 0; exprs && i < exprs->n; i++) {
		struct ynode *e = ynode_item(exprs, i);
		size_t im = path_index(c, i);
		if (e->type != YNODE_MAP) {
			v_err_invalid_node(c, NULL, e, "must be a map");
			v_path_pop(c, im);
			continue;
		}
		const char *k = v_get_str(c, e, "key", REQ);
		if (k)
			v_check_name(c, "key", k, names_qualified_name);
		const char *op = v_get_enum(c, e, "operator", REQ, selector_ops);
		struct ynode *vals = v_check_str_list(c, e, "values", OPT, names_label_value);
		if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn")) && (!vals || vals->n == 0))
			v_err_required(c, "values",
				       "must be specified when `operator` is 'In' or 'NotIn'");
		if (op && (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) && vals &&
		    vals->n > 0)
			v_err_forbidden(
			    c, "values",
			    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
		v_path_pop(c, im);
	}
	v_path_pop(c, em);
	v_path_pop(c, mark);
	if (c->nmsgs + c->nmore != before)
		return NULL;
	/* What the checks above let through must also be what the
	 * controllers can read (lib/selector refuses unknown fields). */
	cleanup_error struct error *e = NULL;
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_labelselector(sel, &s, &e) < 0) {
		err_add(c, key, "Invalid value: %s", e && e->msg ? e->msg : "bad selector");
		return NULL;
	}
	return sel;
}

bool v_sel_empty(const struct ynode *sel)
{
	return !sel || (v_node_empty(ynode_get(sel, "matchLabels")) &&
			v_node_empty(ynode_get(sel, "matchExpressions")));
}

/* Whether a checked LabelSelector selects the labels (lib/selector, the
 * matcher the controllers use). */
bool v_sel_matches(const struct ynode *sel, const struct ynode *labels)
{
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_labelselector(sel, &s, NULL) < 0)
		return true; /* already reported by v_check_label_selector */
	return selector_matches(s, labels);
}

/* A workload's checked spec.selector sel must not be empty (what names the
 * kind in the message) and must select the labels of its pod template t,
 * when it has one. */
void v_check_selector_selects(struct vctx *c, const struct ynode *sel, const struct ynode *t,
			      const char *what)
{
	struct ynode *labels = t ? ynode_path(t, "metadata.labels") : NULL;
	if (v_sel_empty(sel))
		v_err_invalid_node(c, "selector", sel, "empty selector is invalid for %s", what);
	else if (t && !v_sel_matches(sel, labels))
		v_err_invalid_node(c, "template.metadata.labels", labels,
				   "`selector` does not match template `labels`");
}

/* Whether every pair of an equality selector (a ReplicationController's)
 * is among the labels. */
bool v_map_selects(const struct ynode *sel, const struct ynode *labels)
{
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_map(sel, &s, NULL) < 0)
		return true; /* already reported by v_check_labels */
	return selector_matches(s, labels);
}

/* ---- comparing trees -------------------------------------------------- */

/* Appends to path the first place where a and b differ and returns true, or
 * returns false when they are equal. A null, an empty string and an empty
 * list or map equal an absent field (Kubernetes' omitempty); map key order
 * does not matter; scalars compare by text. */
bool v_tree_diff(const struct ynode *a, const struct ynode *b, struct sbuf *path)
{
	if (v_node_empty(a) || v_node_empty(b))
		return v_node_empty(a) != v_node_empty(b);
	if (a->type != b->type)
		return true;
	switch (a->type) {
	case YNODE_SCALAR:
		return strcmp(a->str, b->str) != 0;
	case YNODE_SEQ:
		if (a->n != b->n)
			return true;
		for (size_t i = 0; i < a->n; i++) {
			size_t len = path->len;
			char idx[32];
			snprintf(idx, sizeof(idx), "[%zu]", i);
			v_sb_add(path, idx);
			if (v_tree_diff(ynode_item(a, i), ynode_item(b, i), path))
				return true;
			path->len = len;
			if (path->buf)
				path->buf[len] = '\0';
		}
		return false;
	case YNODE_MAP:
		for (int pass = 0; pass < 2; pass++) {
			const struct ynode *x = pass ? b : a, *y = pass ? a : b;
			for (size_t i = 0; i < x->n; i++) {
				const char *k = ynode_map_key(x, i)->str;
				struct ynode *yv = ynode_get(y, k);
				if (pass && yv)
					continue; /* compared in the first pass
						   */
				size_t len = path->len;
				if (len)
					v_sb_add(path, ".");
				v_sb_add(path, k);
				if (v_tree_diff(ynode_map_val(x, i), yv, path))
					return true;
				path->len = len;
				if (path->buf)
					path->buf[len] = '\0';
			}
		}
		return false;
	}
	return false;
}

bool v_tree_equal(const struct ynode *a, const struct ynode *b)
{
	struct sbuf p = {0};
	bool d = v_tree_diff(a, b, &p);
	free(p.buf);
	return !d;
}

/* Records "field is immutable" when the field at path (from the object's
 * root) differs between the new and the stored object. */
void v_check_immutable(struct vctx *c, const struct ynode *obj, const struct ynode *old,
		       const char *path)
{
	const struct ynode *a = ynode_path(obj, path);
	if (!v_tree_equal(a, ynode_path(old, path)))
		v_err_invalid_node(c, path, a, "field is immutable");
}

/* ---- defaulting helpers ----------------------------------------------- */

static void set_default(struct ynode *m, const char *key, struct ynode *v)
{
	if (m && m->type == YNODE_MAP && v_node_empty(ynode_get(m, key)))
		ynode_set(m, key, v);
	else
		ynode_free(v);
}

void v_default_str(struct ynode *m, const char *key, const char *s)
{
	set_default(m, key, ynode_new_str(s));
}

void v_default_int(struct ynode *m, const char *key, long long v)
{
	set_default(m, key, ynode_new_int(v));
}

void v_default_bool(struct ynode *m, const char *key, bool v)
{
	set_default(m, key, ynode_new_bool(v));
}

/* Returns the map at key, creating it when unset. */
struct ynode *v_default_map(struct ynode *m, const char *key)
{
	struct ynode *v = ynode_get(m, key);
	if (v && v->type == YNODE_MAP)
		return v;
	if (!v_node_unset(v))
		return NULL; /* not ours to replace */
	ynode_set(m, key, ynode_new_map());
	return ynode_get(m, key);
}

/* ---- object metadata -------------------------------------------------- */

/* The list item i as a map, or NULL with an error at the current path
 * (which the caller has already indexed). */
static struct ynode *item_map(struct vctx *c, const struct ynode *list, size_t i)
{
	struct ynode *it = ynode_item(list, i);
	if (it->type != YNODE_MAP) {
		v_err_invalid_node(c, NULL, it, "must be a map");
		return NULL;
	}
	return it;
}

/* Calls fn(c, item, arg) on each item of the list at key of m, with the
 * path at "key[i]". Returns the list. */
struct ynode *v_check_each(struct vctx *c, const struct ynode *m, const char *key, int req,
			   void (*fn)(struct vctx *c, struct ynode *it, void *arg), void *arg)
{
	struct ynode *list = v_get_seq(c, m, key, req);
	if (!list)
		return NULL;
	size_t mark = v_path_push(c, key);
	for (size_t i = 0; i < list->n; i++) {
		size_t im = path_index(c, i);
		struct ynode *it = item_map(c, list, i);
		if (it)
			fn(c, it, arg);
		v_path_pop(c, im);
	}
	v_path_pop(c, mark);
	return list;
}

struct owner_count {
	size_t controllers;
};

static void check_owner_ref(struct vctx *c, struct ynode *ref, void *arg)
{
	struct owner_count *oc = arg;
	bool ctl = false;
	const char *kind = v_get_str(c, ref, "kind", REQ);
	v_get_str(c, ref, "apiVersion", REQ);
	v_get_str(c, ref, "name", REQ);
	v_get_str(c, ref, "uid", REQ);
	v_get_bool(c, ref, "blockOwnerDeletion", OPT, &ctl);
	if (kind && strcmp(kind, "List") == 0)
		v_err_invalid_str(c, "kind", kind, "kind must not be List");
	if (v_get_bool(c, ref, "controller", OPT, &ctl) && ctl)
		oc->controllers++;
}

static void check_meta(struct vctx *c, const struct ynode *obj, name_rule rule)
{
	struct ynode *md = v_get_map(c, obj, "metadata", REQ);
	if (!md)
		return;
	size_t mark = v_path_push(c, "metadata");
	const char *name = v_get_str(c, md, "name", REQ);
	if (name && rule)
		v_check_name(c, "name", name, rule);
	v_get_str(c, md, "generateName", OPT);
	if (c->kind->namespaced) {
		const char *ns = v_get_str(c, md, "namespace", OPT);
		if (ns && *ns)
			v_check_name(c, "namespace", ns, names_dns1123_label);
	}
	v_check_labels(c, md, "labels");
	v_check_annotations(c, md);
	struct owner_count oc = {0};
	struct ynode *refs = v_check_each(c, md, "ownerReferences", OPT, check_owner_ref, &oc);
	if (oc.controllers > 1)
		v_err_invalid_node(c, "ownerReferences", refs,
				   "Only one reference can have Controller set to true");
	v_check_str_list(c, md, "finalizers", OPT, names_qualified_name);
	v_path_pop(c, mark);
}

void v_del_if(struct ynode *m, const char *key)
{
	if (m && m->type == YNODE_MAP && ynode_get(m, key))
		ynode_del(m, key);
}

/* The metadata of a template t (a pod's, a job's, a claim's), required
 * when req: its name by rule (unchecked when rule is NULL), its labels and
 * its annotations, under the path "metadata". */
void v_check_template_metadata(struct vctx *c, const struct ynode *t, int req, name_rule rule)
{
	struct ynode *md = v_get_map(c, t, "metadata", req);
	if (!md)
		return;
	size_t mark = v_path_push(c, "metadata");
	if (rule) {
		const char *name = v_get_str(c, md, "name", REQ);
		if (name)
			v_check_name(c, "name", name, rule);
	}
	v_check_labels(c, md, "labels");
	v_check_annotations(c, md);
	v_path_pop(c, mark);
}

/* The required spec of obj, checked by fn under the path "spec". */
void v_check_required_spec(struct vctx *c, struct ynode *obj,
			   void (*fn)(struct vctx *c, const struct ynode *spec))
{
	struct ynode *spec = v_get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	fn(c, spec);
	v_path_pop(c, mark);
}

/* ---- the kinds -------------------------------------------------------- */

/* Indexed by lib's kind_id: see validate_impl.h. */
static const struct kind_rules *const validate__rules[KIND_COUNT] = {
    [KIND_NAMESPACE] = &v_rules_namespace,
    [KIND_NODE] = &v_rules_node,
    [KIND_PERSISTENT_VOLUME] = &v_rules_persistent_volume,
    [KIND_POD] = &v_rules_pod,
    [KIND_REPLICATION_CONTROLLER] = &v_rules_replication_controller,
    [KIND_SERVICE] = &v_rules_service,
    [KIND_ENDPOINTS] = &v_rules_endpoints,
    [KIND_CONFIG_MAP] = &v_rules_config_map,
    [KIND_SECRET] = &v_rules_secret,
    [KIND_PERSISTENT_VOLUME_CLAIM] = &v_rules_persistent_volume_claim,
    [KIND_RESOURCE_QUOTA] = &v_rules_resource_quota,
    [KIND_SERVICE_ACCOUNT] = &v_rules_service_account,
    [KIND_LIMIT_RANGE] = &v_rules_limit_range,
    [KIND_EVENT] = &v_rules_event,
    [KIND_REPLICA_SET] = &v_rules_replica_set,
    [KIND_DEPLOYMENT] = &v_rules_deployment,
    [KIND_DAEMON_SET] = &v_rules_daemon_set,
    [KIND_STATEFUL_SET] = &v_rules_stateful_set,
    [KIND_CONTROLLER_REVISION] = &v_rules_controller_revision,
    [KIND_JOB] = &v_rules_job,
    [KIND_CRON_JOB] = &v_rules_cron_job,
    [KIND_HORIZONTAL_POD_AUTOSCALER] = &v_rules_horizontal_pod_autoscaler,
    [KIND_POD_DISRUPTION_BUDGET] = &v_rules_pod_disruption_budget,
    [KIND_NETWORK_POLICY] = &v_rules_network_policy,
    [KIND_INGRESS] = &v_rules_ingress,
    [KIND_LEASE] = &v_rules_lease,
    [KIND_INGRESS_CLASS] = &v_rules_ingress_class,
    [KIND_PRIORITY_CLASS] = &v_rules_priority_class,
    [KIND_STORAGE_CLASS] = &v_rules_storage_class,
    [KIND_POD_METRICS] = &v_rules_pod_metrics,
    [KIND_NODE_METRICS] = &v_rules_node_metrics,
    [KIND_METRIC_VALUE] = &v_rules_metric_value,
};

const struct kind_rules *v_rules_for(const struct kind_info *k)
{
	return validate__rules[kinds_id(k)];
}

/* A null value in a map of strings is the empty string (how Kubernetes
 * decodes `key:`); written out as "" it reads back the same. */
void v_default_null_strings(struct ynode *map)
{
	for (size_t i = 0; map && map->type == YNODE_MAP && i < map->n; i++)
		if (v_node_unset(ynode_map_val(map, i)))
			ynode_set(map, ynode_map_key(map, i)->str, ynode_new_str(""));
}

static void apply_defaults(struct vctx *c, const struct kind_rules *r, struct ynode *obj)
{
	struct ynode *md = ynode_get(obj, "metadata");
	v_default_null_strings(ynode_get(md, "labels"));
	v_default_null_strings(ynode_get(md, "annotations"));
	/* A cluster-scoped object has no namespace; Kubernetes drops one
	 * given. */
	if (!c->kind->namespaced)
		v_del_if(ynode_get(obj, "metadata"), "namespace");
	if (r && r->defaults)
		r->defaults(c, obj);
}

static void check_type_meta(struct vctx *c, const struct ynode *obj)
{
	const struct kind_info *k = c->kind;
	const char *kind = v_get_str(c, obj, "kind", REQ);
	if (kind && strcmp(kind, k->kind) != 0)
		v_err_invalid_str(c, "kind", kind, "must be %s in %s/", k->kind, k->plural);
	const char *av = v_get_str(c, obj, "apiVersion", REQ);
	if (av && !kinds_api_version_ok(k, av)) {
		const char *versions[ARRAY_SIZE(k->api_versions) + 1] = {0};
		for (size_t i = 0; i < ARRAY_SIZE(k->api_versions) && k->api_versions[i]; i++)
			versions[i] = k->api_versions[i];
		v_err_unsupported(c, "apiVersion", av, versions);
	}
}

static char *join_messages(struct vctx *c, const char *kind, const char *name)
{
	struct sbuf b = {0};
	cleanup_free char *head = xasprintf("%s \"%s\" is invalid: ", kind, name ? name : "");
	size_t total = c->nmsgs + c->nmore;
	cleanup_free char *tail = c->nmore ? xasprintf(", and %zu more", c->nmore) : xstrdup("");
	/* sbuf caps its length for showing values; build this one by hand */
	size_t len = strlen(head) + strlen(tail) + 3;
	for (size_t i = 0; i < c->nmsgs; i++)
		len += strlen(c->msgs[i]) + 2;
	b.buf = xmalloc(len);
	b.buf[0] = '\0';
	strcat(b.buf, head);
	if (total > 1)
		strcat(b.buf, "[");
	for (size_t i = 0; i < c->nmsgs; i++) {
		if (i)
			strcat(b.buf, ", ");
		strcat(b.buf, c->msgs[i]);
	}
	strcat(b.buf, tail);
	if (total > 1)
		strcat(b.buf, "]");
	return b.buf;
}

int validate_object(const struct kind_info *k, struct ynode *obj, const struct ynode *old,
		    struct error **err)
{
	if (!k || !obj)
		return error_set(err, EINVAL, "validate: no kind or no object");
	if (obj->type != YNODE_MAP)
		return error_set(
		    err, EINVAL,
		    "%s is invalid: the document must be a map with apiVersion, kind and metadata",
		    k->kind);
	struct vctx c = {.kind = k, .api_version = ynode_path_str(obj, "apiVersion")};
	const struct kind_rules *r = v_rules_for(k);

	check_type_meta(&c, obj);
	check_meta(&c, obj, r ? r->name : names_dns1123_subdomain);
	if (r && r->check)
		r->check(&c, obj);

	/* Update rules compare defaulted objects, as Kubernetes does, on a
	 * copy so that a refusal leaves obj as written. The stored object is
	 * defaulted too, in case it was stored before a default existed. */
	if (!c.nmsgs && !c.nmore && old && old->type == YNODE_MAP && r && r->update) {
		cleanup_ynode struct ynode *copy = ynode_clone(obj);
		cleanup_ynode struct ynode *was = ynode_clone(old);
		struct vctx oc = {.kind = k, .api_version = ynode_path_str(old, "apiVersion")};
		if (oc.api_version)
			apply_defaults(&oc, r, was);
		if (r->carry)
			r->carry(copy, was);
		apply_defaults(&c, r, copy);
		r->update(&c, copy, was);
	}

	if (c.nmsgs || c.nmore) {
		cleanup_free char *msg =
		    join_messages(&c, k->kind, ynode_path_str(obj, "metadata.name"));
		for (size_t i = 0; i < c.nmsgs; i++)
			free(c.msgs[i]);
		return error_set(err, EINVAL, "%s", msg);
	}
	if (old && old->type == YNODE_MAP && r && r->carry)
		r->carry(obj, old);
	apply_defaults(&c, r, obj);
	return 0;
}