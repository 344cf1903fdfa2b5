/* validate.c: per-kind validation and defaulting of the objects written to
 * the tree, with Kubernetes' rules and wording.
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
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VALIDATE_PATH_MAX   512 /* longest field path kept in a message */
#define VALIDATE_MAX_ERRORS 16	/* errors listed; the rest are counted */
#define VALIDATE_SHOW_MAX   120 /* longest rendering of a value */
#define ANNOTATIONS_MAX	    (256 * 1024)  /* total size of keys and values */
#define CONFIG_DATA_MAX	    (1024 * 1024) /* ConfigMap and Secret payload */
#define INT32_LIMIT	    2147483647LL

enum { OPT = 0, REQ = 1 };

typedef int (*name_rule)(const char *s, struct error **err);

struct vctx {
	const struct kind_info *kind;
	const char *api_version; /* the document's apiVersion */
	bool host_network;	 /* the pod spec under check has hostNetwork */
	char path[VALIDATE_PATH_MAX];	 /* field under check */
	size_t plen;			 /* strlen(path) */
	char *msgs[VALIDATE_MAX_ERRORS]; /* "path: rule" */
	size_t nmsgs;
	size_t nmore; /* errors beyond VALIDATE_MAX_ERRORS */
};

/* ---- field paths ------------------------------------------------------ */

/* Appends ".key" (or "[i]"-style keys as they are) to the current path and
 * returns the mark to pop back to. */
static size_t path_push(struct vctx *c, const char *key)
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
	return path_push(c, b);
}

static void path_pop(struct vctx *c, size_t mark)
{
	c->plen = mark;
	c->path[mark] = '\0';
}

/* "[key]" for an entry of a map such as data or resources.limits. */
static char *path_entry(const char *key)
{
	return xasprintf("[%s]", key);
}

/* ---- showing values in messages --------------------------------------- */

struct sbuf {
	char *buf;
	size_t len, cap;
	bool full; /* stopped at VALIDATE_SHOW_MAX */
};

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

static void sb_add(struct sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

static void sb_quote(struct sbuf *b, const char *s)
{
	sb_add(b, "\"");
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
		sb_add(b, e);
	}
	sb_add(b, "\"");
}

static bool scalar_is_number(const struct ynode *n);
static bool scalar_is_bool(const struct ynode *n);

static void sb_node(struct sbuf *b, const struct ynode *n)
{
	if (!n || ynode_is_null(n)) {
		sb_add(b, "null");
		return;
	}
	switch (n->type) {
	case YNODE_SCALAR:
		if (scalar_is_number(n) || scalar_is_bool(n))
			sb_add(b, n->str);
		else
			sb_quote(b, n->str);
		break;
	case YNODE_SEQ:
		sb_add(b, "[");
		for (size_t i = 0; i < n->n && !b->full; i++) {
			if (i)
				sb_add(b, ", ");
			sb_node(b, ynode_item(n, i));
		}
		sb_add(b, "]");
		break;
	case YNODE_MAP:
		sb_add(b, "{");
		for (size_t i = 0; i < n->n && !b->full; i++) {
			if (i)
				sb_add(b, ", ");
			sb_quote(b, ynode_map_key(n, i)->str);
			sb_add(b, ": ");
			sb_node(b, ynode_map_val(n, i));
		}
		sb_add(b, "}");
		break;
	}
}

static char *sb_finish(struct sbuf *b)
{
	if (b->full) {
		b->full = false;
		b->len =
		    b->len > VALIDATE_SHOW_MAX ? VALIDATE_SHOW_MAX : b->len;
		sb_add(b, "...");
	}
	return b->buf ? b->buf : xstrdup("");
}

static char *show_node(const struct ynode *n)
{
	struct sbuf b = {0};
	sb_node(&b, n);
	return sb_finish(&b);
}

static char *show_str(const char *s)
{
	struct sbuf b = {0};
	sb_quote(&b, s);
	return sb_finish(&b);
}

/* ---- errors ----------------------------------------------------------- */

static void err_addv(struct vctx *c, const char *key, const char *fmt,
		     va_list ap) __attribute__((format(printf, 3, 0)));
static void err_addv(struct vctx *c, const char *key, const char *fmt,
		     va_list ap)
{
	if (c->nmsgs >= VALIDATE_MAX_ERRORS) {
		c->nmore++;
		return;
	}
	size_t mark = path_push(c, key);
	cleanup_free char *detail = xvasprintf(fmt, ap);
	c->msgs[c->nmsgs++] =
	    xasprintf("%s: %s", c->plen ? c->path : "<object>", detail);
	path_pop(c, mark);
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

static void err_required(struct vctx *c, const char *key, const char *detail)
{
	if (detail)
		err_add(c, key, "Required value: %s", detail);
	else
		err_add(c, key, "Required value");
}

static void err_invalid_shown(struct vctx *c, const char *key,
			      const char *shown, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void err_invalid_shown(struct vctx *c, const char *key,
			      const char *shown, const char *fmt, va_list ap)
{
	cleanup_free char *detail = xvasprintf(fmt, ap);
	err_add(c, key, "Invalid value: %s: %s", shown, detail);
}

static void err_invalid_str(struct vctx *c, const char *key, const char *s,
			    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err_invalid_str(struct vctx *c, const char *key, const char *s,
			    const char *fmt, ...)
{
	cleanup_free char *shown = show_str(s);
	va_list ap;
	va_start(ap, fmt);
	err_invalid_shown(c, key, shown, fmt, ap);
	va_end(ap);
}

static void err_invalid_int(struct vctx *c, const char *key, long long v,
			    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err_invalid_int(struct vctx *c, const char *key, long long v,
			    const char *fmt, ...)
{
	cleanup_free char *shown = xasprintf("%lld", v);
	va_list ap;
	va_start(ap, fmt);
	err_invalid_shown(c, key, shown, fmt, ap);
	va_end(ap);
}

static void err_invalid_node(struct vctx *c, const char *key,
			     const struct ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err_invalid_node(struct vctx *c, const char *key,
			     const struct ynode *n, const char *fmt, ...)
{
	cleanup_free char *shown = show_node(n);
	va_list ap;
	va_start(ap, fmt);
	err_invalid_shown(c, key, shown, fmt, ap);
	va_end(ap);
}

static void err_duplicate(struct vctx *c, const char *key, const char *s)
{
	cleanup_free char *shown = show_str(s);
	err_add(c, key, "Duplicate value: %s", shown);
}

static void err_not_found(struct vctx *c, const char *key, const char *s)
{
	cleanup_free char *shown = show_str(s);
	err_add(c, key, "Not found: %s", shown);
}

static void err_forbidden(struct vctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void err_forbidden(struct vctx *c, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cleanup_free char *detail = xvasprintf(fmt, ap);
	va_end(ap);
	err_add(c, key, "Forbidden: %s", detail);
}

static void err_too_long(struct vctx *c, const char *key, size_t max)
{
	err_add(c, key, "Too long: must have at most %zu bytes", max);
}

static void err_unsupported(struct vctx *c, const char *key, const char *s,
			    const char *const *allowed)
{
	struct sbuf b = {0};
	for (size_t i = 0; allowed[i]; i++) {
		if (i)
			sb_add(&b, ", ");
		sb_quote(&b, allowed[i]);
	}
	cleanup_free char *list = sb_finish(&b);
	cleanup_free char *shown = show_str(s);
	err_add(c, key, "Unsupported value: %s: supported values: %s", shown,
		list);
}

/* ---- scalar types ----------------------------------------------------- */

static bool node_unset(const struct ynode *n)
{
	return !n || ynode_is_null(n);
}

/* Unset, an empty string, or an empty list or map: what Kubernetes'
 * omitempty makes of a field, and what defaulting fills in. */
static bool node_empty(const struct ynode *n)
{
	if (node_unset(n))
		return true;
	if (n->type == YNODE_SCALAR)
		return n->len == 0;
	return n->n == 0;
}

/* YAML 1.1 octal ("0644"), which Kubernetes' YAML reader honours and which
 * mode fields are commonly written in. */
static bool plain_octal(const char *s, long long *out)
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
	if (strcasecmp(p, ".inf") == 0 ||
	    (p == s && strcasecmp(p, ".nan") == 0))
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

static bool scalar_int(const struct ynode *n, long long *out)
{
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return false;
	if (plain_octal(n->str, out))
		return true;
	return ynode_int(n, out) == 0;
}

static bool scalar_is_number(const struct ynode *n)
{
	long long v = 0;
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return false;
	return scalar_int(n, &v) || plain_float(n->str);
}

static bool scalar_is_bool(const struct ynode *n)
{
	bool b = false;
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return false;
	return ynode_bool(n, &b) == 0;
}

static bool scalar_is_string(const struct ynode *n)
{
	return n && n->type == YNODE_SCALAR && !scalar_is_number(n) &&
	       !scalar_is_bool(n);
}

/* ---- typed field access ----------------------------------------------- */

/* Each getter reads key from the mapping m (NULL: an absent parent) and
 * returns NULL (false) when the field is unset; it records "Required value"
 * when req and unset, and a type error when the value has the wrong type. */

static struct ynode *get_any(struct vctx *c, const struct ynode *m,
			     const char *key, int req)
{
	struct ynode *v = m ? ynode_get(m, key) : NULL;
	if (node_unset(v)) {
		if (req)
			err_required(c, key, NULL);
		return NULL;
	}
	return v;
}

static struct ynode *get_map(struct vctx *c, const struct ynode *m,
			     const char *key, int req)
{
	struct ynode *v = get_any(c, m, key, req);
	if (v && v->type != YNODE_MAP) {
		err_invalid_node(c, key, v, "must be a map");
		return NULL;
	}
	return v;
}

static struct ynode *get_seq(struct vctx *c, const struct ynode *m,
			     const char *key, int req)
{
	struct ynode *v = get_any(c, m, key, req);
	if (!v)
		return NULL;
	if (v->type != YNODE_SEQ) {
		err_invalid_node(c, key, v, "must be a list");
		return NULL;
	}
	if (req && v->n == 0) {
		err_required(c, key, NULL);
		return NULL;
	}
	return v;
}

static const char *get_str(struct vctx *c, const struct ynode *m,
			   const char *key, int req)
{
	struct ynode *v = get_any(c, m, key, req);
	if (!v)
		return NULL;
	if (!scalar_is_string(v)) {
		err_invalid_node(c, key, v, "must be a string");
		return NULL;
	}
	if (req && v->len == 0) {
		err_required(c, key, NULL);
		return NULL;
	}
	return v->str;
}

static bool get_int(struct vctx *c, const struct ynode *m, const char *key,
		    int req, long long *out)
{
	struct ynode *v = get_any(c, m, key, req);
	if (!v)
		return false;
	if (!scalar_int(v, out)) {
		err_invalid_node(c, key, v, "must be an integer");
		return false;
	}
	return true;
}

/* An int32 field: out of range is a type error in Kubernetes. */
static bool get_i32(struct vctx *c, const struct ynode *m, const char *key,
		    int req, long long *out)
{
	if (!get_int(c, m, key, req, out))
		return false;
	if (*out > INT32_LIMIT || *out < -INT32_LIMIT - 1) {
		err_invalid_int(c, key, *out, "must be a 32-bit integer");
		return false;
	}
	return true;
}

static bool get_bool(struct vctx *c, const struct ynode *m, const char *key,
		     int req, bool *out)
{
	struct ynode *v = get_any(c, m, key, req);
	if (!v)
		return false;
	if (v->type != YNODE_SCALAR || v->quoted || ynode_bool(v, out) != 0) {
		err_invalid_node(c, key, v, "must be a boolean");
		return false;
	}
	return true;
}

/* Kubernetes' IntOrString: a plain integer, or any string. */
struct intstr {
	bool is_int;
	long long i;
	const char *s;
};

static bool get_intstr(struct vctx *c, const struct ynode *m, const char *key,
		       int req, struct intstr *out)
{
	struct ynode *v = get_any(c, m, key, req);
	if (!v)
		return false;
	out->is_int = false;
	out->s = NULL;
	if (scalar_int(v, &out->i)) {
		out->is_int = true;
		return true;
	}
	if (!scalar_is_string(v)) {
		err_invalid_node(c, key, v, "must be an integer or a string");
		return false;
	}
	if (req && v->len == 0) {
		err_required(c, key, NULL);
		return false;
	}
	out->s = v->str;
	return true;
}

static bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* A string field with a fixed set of values; "" counts as unset. */
static const char *get_enum(struct vctx *c, const struct ynode *m,
			    const char *key, int req,
			    const char *const *allowed)
{
	const char *s = get_str(c, m, key, req);
	if (!s || !*s)
		return NULL;
	if (!in_list(s, allowed)) {
		err_unsupported(c, key, s, allowed);
		return NULL;
	}
	return s;
}

/* ---- value rules ------------------------------------------------------ */

static bool check_name(struct vctx *c, const char *key, const char *s,
		       name_rule rule)
{
	cleanup_error struct error *e = NULL;
	if (rule(s, &e) == 0)
		return true;
	err_invalid_str(c, key, s, "%s", e && e->msg ? e->msg : "invalid name");
	return false;
}

static bool check_range(struct vctx *c, const char *key, long long v,
			long long lo, long long hi)
{
	if (v >= lo && v <= hi)
		return true;
	err_invalid_int(c, key, v, "must be between %lld and %lld, inclusive",
			lo, hi);
	return false;
}

static bool check_min(struct vctx *c, const char *key, long long v,
		      long long lo)
{
	if (v >= lo)
		return true;
	if (lo == 1)
		err_invalid_int(c, key, v, "must be greater than 0");
	else
		err_invalid_int(c, key, v,
				"must be greater than or equal to %lld", lo);
	return false;
}

/* An optional int32 field that must be at least lo. */
static bool get_i32_min(struct vctx *c, const struct ynode *m, const char *key,
			long long lo, long long *out)
{
	long long v = 0;
	if (!get_i32(c, m, key, OPT, &v) || !check_min(c, key, v, lo))
		return false;
	if (out)
		*out = v;
	return true;
}

static bool check_quantity(struct vctx *c, const char *key,
			   const struct ynode *v, int64_t *milli)
{
	if (!v || v->type != YNODE_SCALAR || scalar_is_bool(v) || v->len == 0) {
		err_invalid_node(c, key, v,
				 "must be a quantity (e.g. 500m, 1, 128Mi)");
		return false;
	}
	cleanup_error struct error *e = NULL;
	if (quantity_parse(v->str, milli, &e) < 0) {
		err_invalid_str(c, key, v->str, "%s",
				e && e->msg ? e->msg : "invalid quantity");
		return false;
	}
	return true;
}

static bool is_ipv4(const char *s)
{
	struct in_addr a;
	return inet_pton(AF_INET, s, &a) == 1;
}

static bool is_ip(const char *s)
{
	struct in6_addr a;
	return is_ipv4(s) || inet_pton(AF_INET6, s, &a) == 1;
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
	if (is_ipv4(ip))
		return bits >= 0 && bits <= 32;
	struct in6_addr a;
	return inet_pton(AF_INET6, ip, &a) == 1 && bits >= 0 && bits <= 128;
}

static bool check_ip(struct vctx *c, const char *key, const char *s)
{
	if (is_ip(s))
		return true;
	err_invalid_str(
	    c, key, s,
	    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
	return false;
}

static bool check_cidr(struct vctx *c, const char *key, const char *s)
{
	if (is_cidr(s))
		return true;
	err_invalid_str(
	    c, key, s,
	    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)");
	return false;
}

/* A port given as a number or as the name of a container port. */
static void check_port_ref(struct vctx *c, const struct ynode *m,
			   const char *key, int req)
{
	struct intstr p;
	if (!get_intstr(c, m, key, req, &p))
		return;
	if (p.is_int)
		check_range(c, key, p.i, 1, 65535);
	else
		check_name(c, key, p.s, names_port_name);
}

/* "25%" or an integer; percent_max bounds the percentage (0: none). Kubernetes
 * calls these IntOrPercent. Returns the value and whether it is a percentage
 * through out/pct when valid. */
static bool check_int_or_percent(struct vctx *c, const struct ynode *m,
				 const char *key, long long percent_max,
				 long long *out, bool *pct)
{
	struct intstr v;
	if (!get_intstr(c, m, key, OPT, &v))
		return false;
	if (v.is_int) {
		if (!check_min(c, key, v.i, 0))
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
		err_invalid_str(
		    c, key, v.s,
		    "a valid percent string must be a numeric string followed by an ending '%%' (e.g. '1%%',  or '93%%', regex used for validation is '[0-9]+%%')");
		return false;
	}
	long long p = strtoll(v.s, NULL, 10);
	if (percent_max && p > percent_max) {
		err_invalid_str(c, key, v.s, "must not be greater than %lld%%",
				percent_max);
		return false;
	}
	*out = p;
	*pct = true;
	return true;
}

/* A list whose items are strings. */
static struct ynode *check_str_list(struct vctx *c, const struct ynode *m,
				    const char *key, int req, name_rule rule)
{
	struct ynode *l = get_seq(c, m, key, req);
	if (!l)
		return NULL;
	size_t mark = path_push(c, key);
	for (size_t i = 0; i < l->n; i++) {
		struct ynode *it = ynode_item(l, i);
		char idx[32];
		snprintf(idx, sizeof(idx), "[%zu]", i);
		if (!scalar_is_string(it))
			err_invalid_node(c, idx, it, "must be a string");
		else if (rule)
			check_name(c, idx, it->str, rule);
	}
	path_pop(c, mark);
	return l;
}

/* ---- string sets ------------------------------------------------------ */

/* Open-addressing set of borrowed strings, for duplicate checks that must
 * stay linear however long the list a document carries. */
struct strset {
	const char **slot;
	size_t cap, n;
	char **owned; /* strings the set was given to keep */
	size_t nowned;
};

static size_t strset_hash(const char *s)
{
	size_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static bool strset_has(const struct strset *set, const char *s)
{
	if (!set->cap)
		return false;
	for (size_t i = strset_hash(s) & (set->cap - 1);;
	     i = (i + 1) & (set->cap - 1)) {
		if (!set->slot[i])
			return false;
		if (strcmp(set->slot[i], s) == 0)
			return true;
	}
}

/* Returns false when s was already there. */
static bool strset_add(struct strset *set, const char *s)
{
	if (strset_has(set, s))
		return false;
	if (2 * (set->n + 1) > set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		const char **slot = xcalloc(cap, sizeof(char *));
		for (size_t i = 0; i < set->cap; i++) {
			if (!set->slot[i])
				continue;
			size_t j = strset_hash(set->slot[i]) & (cap - 1);
			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = set->slot[i];
		}
		free(set->slot);
		set->slot = slot;
		set->cap = cap;
	}
	size_t i = strset_hash(s) & (set->cap - 1);
	while (set->slot[i])
		i = (i + 1) & (set->cap - 1);
	set->slot[i] = s;
	set->n++;
	return true;
}

/* Like strset_add, but the set takes s (malloc'd) and frees it. */
static bool strset_add_owned(struct strset *set, char *s)
{
	if (strset_has(set, s)) {
		free(s);
		return false;
	}
	set->owned = xrealloc(set->owned, (set->nowned + 1) * sizeof(char *));
	set->owned[set->nowned++] = s;
	return strset_add(set, s);
}

static void strset_free(struct strset *set)
{
	for (size_t i = 0; i < set->nowned; i++)
		free(set->owned[i]);
	free(set->owned);
	free(set->slot);
	memset(set, 0, sizeof(*set));
}

#define cleanup_strset __attribute__((cleanup(strset_free)))

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
static struct ynode *check_str_map(struct vctx *c, const struct ynode *m,
				   const char *key, name_rule keyrule,
				   name_rule valrule)
{
	struct ynode *map = get_map(c, m, key, OPT);
	if (!map)
		return NULL;
	size_t before = c->nmsgs + c->nmore;
	size_t mark = path_push(c, key);
	for (size_t i = 0; i < map->n; i++) {
		const char *k = ynode_map_key(map, i)->str;
		struct ynode *v = ynode_map_val(map, i);
		if (keyrule)
			check_name(c, NULL, k, keyrule);
		cleanup_free char *entry = path_entry(k);
		if (node_unset(v))
			continue; /* null reads as "" */
		if (!scalar_is_string(v))
			err_invalid_node(c, entry, v, "must be a string");
		else if (valrule)
			check_name(c, NULL, v->str, valrule);
	}
	path_pop(c, mark);
	return c->nmsgs + c->nmore == before ? map : NULL;
}

static struct ynode *check_labels(struct vctx *c, const struct ynode *m,
				  const char *key)
{
	return check_str_map(c, m, key, names_qualified_name,
			     names_label_value);
}

static void check_annotations(struct vctx *c, const struct ynode *m)
{
	struct ynode *a =
	    check_str_map(c, m, "annotations", names_lower_qualified, NULL);
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
		err_too_long(c, "annotations", ANNOTATIONS_MAX);
}

/* ---- label selectors -------------------------------------------------- */

static const char *const selector_ops[] = {"In", "NotIn", "Exists",
					   "DoesNotExist", NULL};

/* A metav1.LabelSelector at key of m. */
static struct ynode *check_label_selector(struct vctx *c, const struct ynode *m,
					  const char *key, int req)
{
	struct ynode *sel = get_map(c, m, key, req);
	if (!sel)
		return NULL;
	size_t before = c->nmsgs + c->nmore;
	size_t mark = path_push(c, key);
	check_labels(c, sel, "matchLabels");
	struct ynode *exprs = get_seq(c, sel, "matchExpressions", OPT);
	size_t em = path_push(c, "matchExpressions");
	for (size_t i = 0; exprs && i < exprs->n; i++) {
		struct ynode *e = ynode_item(exprs, i);
		size_t im = path_index(c, i);
		if (e->type != YNODE_MAP) {
			err_invalid_node(c, NULL, e, "must be a map");
			path_pop(c, im);
			continue;
		}
		const char *k = get_str(c, e, "key", REQ);
		if (k)
			check_name(c, "key", k, names_qualified_name);
		const char *op = get_enum(c, e, "operator", REQ, selector_ops);
		struct ynode *vals =
		    check_str_list(c, e, "values", OPT, names_label_value);
		if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn")) &&
		    (!vals || vals->n == 0))
			err_required(
			    c, "values",
			    "must be specified when `operator` is 'In' or 'NotIn'");
		if (op &&
		    (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) &&
		    vals && vals->n > 0)
			err_forbidden(
			    c, "values",
			    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
		path_pop(c, im);
	}
	path_pop(c, em);
	path_pop(c, mark);
	if (c->nmsgs + c->nmore != before)
		return NULL;
	/* What the checks above let through must also be what the
	 * controllers can read (lib/selector refuses unknown fields). */
	cleanup_error struct error *e = NULL;
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_labelselector(sel, &s, &e) < 0) {
		err_add(c, key, "Invalid value: %s",
			e && e->msg ? e->msg : "bad selector");
		return NULL;
	}
	return sel;
}

static bool sel_empty(const struct ynode *sel)
{
	return !sel || (node_empty(ynode_get(sel, "matchLabels")) &&
			node_empty(ynode_get(sel, "matchExpressions")));
}

/* Whether a checked LabelSelector selects the labels (lib/selector, the
 * matcher the controllers use). */
static bool sel_matches(const struct ynode *sel, const struct ynode *labels)
{
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_labelselector(sel, &s, NULL) < 0)
		return true; /* already reported by check_label_selector */
	return selector_matches(s, labels);
}

/* Whether every pair of an equality selector (a ReplicationController's)
 * is among the labels. */
static bool map_selects(const struct ynode *sel, const struct ynode *labels)
{
	cleanup_selector struct selector *s = NULL;
	if (selector_parse_map(sel, &s, NULL) < 0)
		return true; /* already reported by check_labels */
	return selector_matches(s, labels);
}

/* ---- comparing trees -------------------------------------------------- */

/* Appends to path the first place where a and b differ and returns true, or
 * returns false when they are equal. A null, an empty string and an empty
 * list or map equal an absent field (Kubernetes' omitempty); map key order
 * does not matter; scalars compare by text. */
static bool tree_diff(const struct ynode *a, const struct ynode *b,
		      struct sbuf *path)
{
	if (node_empty(a) || node_empty(b))
		return node_empty(a) != node_empty(b);
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
			sb_add(path, idx);
			if (tree_diff(ynode_item(a, i), ynode_item(b, i), path))
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
					sb_add(path, ".");
				sb_add(path, k);
				if (tree_diff(ynode_map_val(x, i), yv, path))
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

static bool tree_equal(const struct ynode *a, const struct ynode *b)
{
	struct sbuf p = {0};
	bool d = tree_diff(a, b, &p);
	free(p.buf);
	return !d;
}

/* Records "field is immutable" when the field at path (from the object's
 * root) differs between the new and the stored object. */
static void check_immutable(struct vctx *c, const struct ynode *obj,
			    const struct ynode *old, const char *path)
{
	const struct ynode *a = ynode_path(obj, path);
	if (!tree_equal(a, ynode_path(old, path)))
		err_invalid_node(c, path, a, "field is immutable");
}

/* ---- defaulting helpers ----------------------------------------------- */

static void set_default(struct ynode *m, const char *key, struct ynode *v)
{
	if (m && m->type == YNODE_MAP && node_empty(ynode_get(m, key)))
		ynode_set(m, key, v);
	else
		ynode_free(v);
}

static void default_str(struct ynode *m, const char *key, const char *s)
{
	set_default(m, key, ynode_new_str(s));
}

static void default_int(struct ynode *m, const char *key, long long v)
{
	set_default(m, key, ynode_new_int(v));
}

static void default_bool(struct ynode *m, const char *key, bool v)
{
	set_default(m, key, ynode_new_bool(v));
}

/* Returns the map at key, creating it when unset. */
static struct ynode *default_map(struct ynode *m, const char *key)
{
	struct ynode *v = ynode_get(m, key);
	if (v && v->type == YNODE_MAP)
		return v;
	if (!node_unset(v))
		return NULL; /* not ours to replace */
	ynode_set(m, key, ynode_new_map());
	return ynode_get(m, key);
}

/* Each map item of the list at key. */
#define for_each_map_item(list, i, it)                                         \
	for (size_t i = 0;                                                     \
	     (list) && (list)->type == YNODE_SEQ && i < (list)->n; i++)        \
		if (((it) = ynode_item((list), i))->type == YNODE_MAP)

/* ---- object metadata -------------------------------------------------- */

/* The list item i as a map, or NULL with an error at the current path
 * (which the caller has already indexed). */
static struct ynode *item_map(struct vctx *c, const struct ynode *list,
			      size_t i)
{
	struct ynode *it = ynode_item(list, i);
	if (it->type != YNODE_MAP) {
		err_invalid_node(c, NULL, it, "must be a map");
		return NULL;
	}
	return it;
}

/* Calls fn(c, item, arg) on each item of the list at key of m, with the
 * path at "key[i]". Returns the list. */
static struct ynode *
check_each(struct vctx *c, const struct ynode *m, const char *key, int req,
	   void (*fn)(struct vctx *c, struct ynode *it, void *arg), void *arg)
{
	struct ynode *list = get_seq(c, m, key, req);
	if (!list)
		return NULL;
	size_t mark = path_push(c, key);
	for (size_t i = 0; i < list->n; i++) {
		size_t im = path_index(c, i);
		struct ynode *it = item_map(c, list, i);
		if (it)
			fn(c, it, arg);
		path_pop(c, im);
	}
	path_pop(c, mark);
	return list;
}

struct owner_count {
	size_t controllers;
};

static void check_owner_ref(struct vctx *c, struct ynode *ref, void *arg)
{
	struct owner_count *oc = arg;
	bool ctl = false;
	const char *kind = get_str(c, ref, "kind", REQ);
	get_str(c, ref, "apiVersion", REQ);
	get_str(c, ref, "name", REQ);
	get_str(c, ref, "uid", REQ);
	get_bool(c, ref, "blockOwnerDeletion", OPT, &ctl);
	if (kind && strcmp(kind, "List") == 0)
		err_invalid_str(c, "kind", kind, "kind must not be List");
	if (get_bool(c, ref, "controller", OPT, &ctl) && ctl)
		oc->controllers++;
}

static void check_meta(struct vctx *c, const struct ynode *obj, name_rule rule)
{
	struct ynode *md = get_map(c, obj, "metadata", REQ);
	if (!md)
		return;
	size_t mark = path_push(c, "metadata");
	const char *name = get_str(c, md, "name", REQ);
	if (name && rule)
		check_name(c, "name", name, rule);
	get_str(c, md, "generateName", OPT);
	if (c->kind->namespaced) {
		const char *ns = get_str(c, md, "namespace", OPT);
		if (ns && *ns)
			check_name(c, "namespace", ns, names_dns1123_label);
	}
	check_labels(c, md, "labels");
	check_annotations(c, md);
	struct owner_count oc = {0};
	struct ynode *refs =
	    check_each(c, md, "ownerReferences", OPT, check_owner_ref, &oc);
	if (oc.controllers > 1)
		err_invalid_node(
		    c, "ownerReferences", refs,
		    "Only one reference can have Controller set to true");
	check_str_list(c, md, "finalizers", OPT, names_qualified_name);
	path_pop(c, mark);
}

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

static const char *const pv_sources[] = {"gcePersistentDisk",
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

static const char *const hostpath_types[] = {"DirectoryOrCreate",
					     "Directory",
					     "FileOrCreate",
					     "File",
					     "Socket",
					     "CharDevice",
					     "BlockDevice",
					     NULL};

static bool check_rel_path(struct vctx *c, const char *key, const char *s)
{
	if (s[0] == '/') {
		err_invalid_str(c, key, s, "must be a relative path");
		return false;
	}
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			err_invalid_str(c, key, s, "must not contain '..'");
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
	if (get_i32(c, m, key, OPT, &v) && (v < 0 || v > 0777))
		err_invalid_int(
		    c, key, v,
		    "must be a number between 0 and 0777 (octal), both inclusive");
}

static void check_key_to_path(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	get_str(c, it, "key", REQ);
	const char *p = get_str(c, it, "path", REQ);
	if (p)
		check_rel_path(c, "path", p);
	check_mode(c, it, "mode");
}

static void check_field_ref(struct vctx *c, const struct ynode *m,
			    const char *key)
{
	struct ynode *f = get_map(c, m, key, OPT);
	if (!f)
		return;
	size_t mark = path_push(c, key);
	get_str(c, f, "fieldPath", REQ);
	get_str(c, f, "apiVersion", OPT);
	path_pop(c, mark);
}

static void check_resource_field_ref(struct vctx *c, const struct ynode *m,
				     const char *key)
{
	struct ynode *f = get_map(c, m, key, OPT);
	if (!f)
		return;
	size_t mark = path_push(c, key);
	get_str(c, f, "resource", REQ);
	get_str(c, f, "containerName", OPT);
	struct ynode *d = get_any(c, f, "divisor", OPT);
	int64_t q = 0;
	if (d)
		check_quantity(c, "divisor", d, &q);
	path_pop(c, mark);
}

static void check_downward_item(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	const char *p = get_str(c, it, "path", REQ);
	if (p)
		check_rel_path(c, "path", p);
	check_field_ref(c, it, "fieldRef");
	check_resource_field_ref(c, it, "resourceFieldRef");
	check_mode(c, it, "mode");
}

static void check_hostpath(struct vctx *c, const struct ynode *src)
{
	get_str(c, src, "path", REQ);
	get_enum(c, src, "type", OPT, hostpath_types);
}

static void check_volume_source(struct vctx *c, const struct ynode *v,
				const char *kind)
{
	struct ynode *src = get_map(c, v, kind, OPT);
	int64_t q = 0;
	if (!src && strcmp(kind, "emptyDir") != 0) {
		/* present but null: the fields it needs are missing */
		if (!ynode_get(v, kind) || node_unset(ynode_get(v, kind)))
			src = NULL;
		else
			return; /* wrong type, already reported */
	}
	size_t mark = path_push(c, kind);
	if (!strcmp(kind, "hostPath")) {
		check_hostpath(c, src);
	} else if (!strcmp(kind, "emptyDir")) {
		const char *medium = get_str(c, src, "medium", OPT);
		if (medium && *medium && strcmp(medium, "Memory") &&
		    strncmp(medium, "HugePages", 9)) {
			static const char *const media[] = {"", "Memory",
							    "HugePages", NULL};
			err_unsupported(c, "medium", medium, media);
		}
		struct ynode *sl = get_any(c, src, "sizeLimit", OPT);
		if (sl)
			check_quantity(c, "sizeLimit", sl, &q);
	} else if (!strcmp(kind, "secret") || !strcmp(kind, "configMap")) {
		get_str(c, src, !strcmp(kind, "secret") ? "secretName" : "name",
			REQ);
		check_mode(c, src, "defaultMode");
		check_each(c, src, "items", OPT, check_key_to_path, NULL);
		bool b = false;
		get_bool(c, src, "optional", OPT, &b);
	} else if (!strcmp(kind, "persistentVolumeClaim")) {
		bool b = false;
		get_str(c, src, "claimName", REQ);
		get_bool(c, src, "readOnly", OPT, &b);
	} else if (!strcmp(kind, "nfs")) {
		get_str(c, src, "server", REQ);
		const char *p = get_str(c, src, "path", REQ);
		if (p && p[0] != '/')
			err_invalid_str(c, "path", p,
					"must be an absolute path");
	} else if (!strcmp(kind, "csi")) {
		get_str(c, src, "driver", REQ);
	} else if (!strcmp(kind, "local")) {
		get_str(c, src, "path", REQ);
	} else if (!strcmp(kind, "downwardAPI")) {
		check_mode(c, src, "defaultMode");
		check_each(c, src, "items", OPT, check_downward_item, NULL);
	} else if (!strcmp(kind, "projected")) {
		check_mode(c, src, "defaultMode");
		get_seq(c, src, "sources", OPT);
	}
	path_pop(c, mark);
}

/* Exactly one of sources must be present in m; returns it or NULL. */
static const char *check_one_source(struct vctx *c, const struct ynode *m,
				    const char *const *sources)
{
	const char *first = NULL;
	for (size_t i = 0; sources[i]; i++) {
		if (!ynode_get(m, sources[i]))
			continue;
		if (!first)
			first = sources[i];
		else
			err_forbidden(
			    c, sources[i],
			    "may not specify more than 1 volume type");
	}
	if (!first)
		err_required(c, NULL, "must specify a volume type");
	return first;
}

static void check_volume(struct vctx *c, struct ynode *v, void *arg)
{
	struct strset *names = arg;
	const char *name = get_str(c, v, "name", REQ);
	if (name && check_name(c, "name", name, names_dns1123_label) &&
	    !strset_add(names, name))
		err_duplicate(c, "name", name);
	else if (name)
		strset_add(names, name); /* mounts then find it: one error */
	const char *src = check_one_source(c, v, volume_sources);
	if (src)
		check_volume_source(c, v, src);
}

/* ---- pod spec: containers --------------------------------------------- */

static const char *const restart_any[] = {"Always", "OnFailure", "Never", NULL};
static const char *const restart_always[] = {"Always", NULL};
static const char *const restart_job[] = {"OnFailure", "Never", NULL};
static const char *const protocols[] = {"TCP", "UDP", "SCTP", NULL};
static const char *const pull_policies[] = {"Always", "IfNotPresent", "Never",
					    NULL};
static const char *const message_policies[] = {"File", "FallbackToLogsOnError",
					       NULL};
static const char *const propagations[] = {"None", "HostToContainer",
					   "Bidirectional", NULL};
static const char *const dns_policies[] = {
    "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", NULL};
static const char *const uri_schemes[] = {"HTTP", "HTTPS", NULL};
static const char *const toleration_ops[] = {"Exists", "Equal", NULL};
static const char *const taint_effects[] = {"NoSchedule", "PreferNoSchedule",
					    "NoExecute", NULL};
static const char *const env_sources[] = {
    "fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", NULL};
static const char *const env_from_sources[] = {"configMapRef", "secretRef",
					       NULL};
static const char *const probe_handlers[] = {"exec", "httpGet", "tcpSocket",
					     "grpc", NULL};
static const char *const lifecycle_handlers[] = {"exec", "httpGet", "tcpSocket",
						 "sleep", NULL};
static const char *const container_resources[] = {"cpu", "memory",
						  "ephemeral-storage", NULL};

/* How many of keys m carries; the first through first. */
static size_t count_present(const struct ynode *m, const char *const *keys,
			    const char **first)
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
	bool have_cp = get_i32(c, p, "containerPort", REQ, &cp) &&
		       check_range(c, "containerPort", cp, 1, 65535);
	if (get_i32(c, p, "hostPort", OPT, &hp) && hp != 0 &&
	    check_range(c, "hostPort", hp, 1, 65535) && c->host_network &&
	    have_cp && hp != cp)
		err_invalid_int(
		    c, "hostPort", hp,
		    "must match `containerPort` when `hostNetwork` is true");
	get_enum(c, p, "protocol", OPT, protocols);
	const char *name = get_str(c, p, "name", OPT);
	if (name && *name && check_name(c, "name", name, names_port_name) &&
	    !strset_add(names, name))
		err_duplicate(c, "name", name);
	const char *ip = get_str(c, p, "hostIP", OPT);
	if (ip && *ip)
		check_ip(c, "hostIP", ip);
}

static void check_key_ref(struct vctx *c, const struct ynode *m,
			  const char *key)
{
	struct ynode *r = get_map(c, m, key, OPT);
	if (!r)
		return;
	size_t mark = path_push(c, key);
	const char *k = get_str(c, r, "key", REQ);
	if (k)
		check_name(c, "key", k, names_config_key);
	get_str(c, r, "name", OPT);
	bool b = false;
	get_bool(c, r, "optional", OPT, &b);
	path_pop(c, mark);
}

static void check_env_var(struct vctx *c, struct ynode *e, void *arg)
{
	(void)arg;
	const char *name = get_str(c, e, "name", REQ);
	if (name)
		check_name(c, "name", name, names_env_var);
	const char *value = get_str(c, e, "value", OPT);
	struct ynode *vf = get_map(c, e, "valueFrom", OPT);
	if (!vf)
		return;
	if (value && *value)
		err_invalid_str(
		    c, "valueFrom", "",
		    "may not be specified when `value` is not empty");
	size_t mark = path_push(c, "valueFrom");
	size_t n = count_present(vf, env_sources, NULL);
	if (n == 0)
		err_required(
		    c, NULL,
		    "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`");
	else if (n > 1)
		err_invalid_node(
		    c, NULL, vf,
		    "may not have more than one field specified at a time");
	check_field_ref(c, vf, "fieldRef");
	check_resource_field_ref(c, vf, "resourceFieldRef");
	check_key_ref(c, vf, "configMapKeyRef");
	check_key_ref(c, vf, "secretKeyRef");
	path_pop(c, mark);
}

static void check_env_from(struct vctx *c, struct ynode *e, void *arg)
{
	(void)arg;
	const char *prefix = get_str(c, e, "prefix", OPT);
	if (prefix && *prefix)
		check_name(c, "prefix", prefix, names_env_var);
	const char *src = NULL;
	size_t n = count_present(e, env_from_sources, &src);
	if (n == 0) {
		err_required(
		    c, NULL,
		    "must specify one of: `configMapRef` or `secretRef`");
		return;
	}
	if (n > 1) {
		err_invalid_node(
		    c, NULL, e,
		    "may not have more than one field specified at a time");
		return;
	}
	struct ynode *ref = get_map(c, e, src, REQ);
	if (!ref)
		return;
	size_t mark = path_push(c, src);
	get_str(c, ref, "name", REQ);
	bool b = false;
	get_bool(c, ref, "optional", OPT, &b);
	path_pop(c, mark);
}

static bool resource_name_ok(const char *r)
{
	if (in_list(r, container_resources) ||
	    strncmp(r, "hugepages-", 10) == 0)
		return true;
	return strchr(r, '/') && names_qualified_name(r, NULL) == 0;
}

/* A map of resource quantities (limits, requests, hard, ...) at key of m.
 * Each value must be a quantity of at least 0. names (may be NULL) says
 * which resource names are allowed. */
static struct ynode *check_resource_list(struct vctx *c, const struct ynode *m,
					 const char *key,
					 bool (*names)(const char *r),
					 const char *what)
{
	struct ynode *list = get_map(c, m, key, OPT);
	if (!list)
		return NULL;
	size_t mark = path_push(c, key);
	for (size_t i = 0; i < list->n; i++) {
		const char *r = ynode_map_key(list, i)->str;
		struct ynode *v = ynode_map_val(list, i);
		cleanup_free char *entry = path_entry(r);
		int64_t q = 0;
		if (names && !names(r))
			err_invalid_str(c, entry, r,
					"must be a standard resource %s", what);
		else if (check_quantity(c, entry, v, &q) && q < 0)
			err_invalid_str(c, entry, v->str,
					"must be greater than or equal to 0");
	}
	path_pop(c, mark);
	return list;
}

/* The quantity of resource r in the (checked) list, if it parses. */
static bool resource_of(const struct ynode *list, const char *r, int64_t *q)
{
	const char *s = list ? ynode_str(ynode_get(list, r)) : NULL;
	return s && quantity_parse(s, q, NULL) == 0;
}

static void check_container_resources(struct vctx *c, const struct ynode *ct)
{
	struct ynode *res = get_map(c, ct, "resources", OPT);
	if (!res)
		return;
	size_t mark = path_push(c, "resources");
	struct ynode *lim = check_resource_list(
	    c, res, "limits", resource_name_ok, "for containers");
	struct ynode *req = check_resource_list(
	    c, res, "requests", resource_name_ok, "for containers");
	for (size_t i = 0; req && lim && i < req->n; i++) {
		const char *r = ynode_map_key(req, i)->str;
		int64_t rq = 0, lq = 0;
		if (!resource_of(req, r, &rq) || !resource_of(lim, r, &lq) ||
		    rq <= lq)
			continue;
		cleanup_free char *entry = xasprintf("requests[%s]", r);
		err_invalid_str(c, entry, ynode_str(ynode_map_val(req, i)),
				"must be less than or equal to %s limit of %s",
				r, ynode_str(ynode_get(lim, r)));
	}
	path_pop(c, mark);
}

struct mount_ctx {
	const struct strset *volumes;
	struct strset paths;
};

static void check_mount(struct vctx *c, struct ynode *m, void *arg)
{
	struct mount_ctx *mc = arg;
	const char *name = get_str(c, m, "name", REQ);
	if (name && !strset_has(mc->volumes, name))
		err_not_found(c, "name", name);
	const char *mp = get_str(c, m, "mountPath", REQ);
	if (mp && !strset_add(&mc->paths, mp))
		err_invalid_str(c, "mountPath", mp, "must be unique");
	bool b = false;
	get_bool(c, m, "readOnly", OPT, &b);
	const char *sp = get_str(c, m, "subPath", OPT);
	if (sp && *sp)
		check_rel_path(c, "subPath", sp);
	const char *spe = get_str(c, m, "subPathExpr", OPT);
	if (sp && *sp && spe && *spe)
		err_invalid_str(
		    c, "subPathExpr", spe,
		    "subPathExpr and subPath are mutually exclusive");
	get_enum(c, m, "mountPropagation", OPT, propagations);
}

static void check_http_header(struct vctx *c, struct ynode *h, void *arg)
{
	(void)arg;
	get_str(c, h, "name", REQ);
	get_str(c, h, "value", OPT);
}

/* Exactly one handler of kinds in p (a probe or a lifecycle hook). */
static void check_handler(struct vctx *c, const struct ynode *p,
			  const char *const *kinds)
{
	const char *first = NULL;
	for (size_t i = 0; kinds[i]; i++) {
		if (!ynode_get(p, kinds[i]))
			continue;
		if (!first)
			first = kinds[i];
		else
			err_forbidden(
			    c, kinds[i],
			    "may not specify more than 1 handler type");
	}
	if (!first) {
		err_required(c, NULL, "must specify a handler type");
		return;
	}
	struct ynode *h = get_map(c, p, first, REQ);
	if (!h)
		return;
	size_t mark = path_push(c, first);
	long long v = 0;
	if (!strcmp(first, "exec")) {
		check_str_list(c, h, "command", REQ, NULL);
	} else if (!strcmp(first, "httpGet")) {
		check_port_ref(c, h, "port", REQ);
		get_str(c, h, "path", OPT);
		get_str(c, h, "host", OPT);
		get_enum(c, h, "scheme", OPT, uri_schemes);
		check_each(c, h, "httpHeaders", OPT, check_http_header, NULL);
	} else if (!strcmp(first, "tcpSocket")) {
		check_port_ref(c, h, "port", REQ);
	} else if (!strcmp(first, "grpc")) {
		if (get_i32(c, h, "port", REQ, &v))
			check_range(c, "port", v, 1, 65535);
		get_str(c, h, "service", OPT);
	} else if (!strcmp(first, "sleep")) {
		if (get_int(c, h, "seconds", REQ, &v))
			check_min(c, "seconds", v, 0);
	}
	path_pop(c, mark);
}

static void check_probe(struct vctx *c, const struct ynode *ct, const char *key,
			bool once)
{
	struct ynode *p = get_map(c, ct, key, OPT);
	if (!p)
		return;
	size_t mark = path_push(c, key);
	check_handler(c, p, probe_handlers);
	long long v = 0;
	get_i32_min(c, p, "initialDelaySeconds", 0, NULL);
	get_i32_min(c, p, "timeoutSeconds", 0, NULL);
	get_i32_min(c, p, "periodSeconds", 0, NULL);
	get_i32_min(c, p, "failureThreshold", 0, NULL);
	if (get_i32_min(c, p, "successThreshold", 0, &v) && once && v != 1)
		err_invalid_int(c, "successThreshold", v, "must be 1");
	if (get_int(c, p, "terminationGracePeriodSeconds", OPT, &v))
		check_min(c, "terminationGracePeriodSeconds", v, 1);
	path_pop(c, mark);
}

static void check_lifecycle(struct vctx *c, const struct ynode *ct)
{
	struct ynode *lc = get_map(c, ct, "lifecycle", OPT);
	if (!lc)
		return;
	size_t mark = path_push(c, "lifecycle");
	static const char *const hooks[] = {"postStart", "preStop"};
	for (size_t i = 0; i < ARRAY_SIZE(hooks); i++) {
		struct ynode *h = get_map(c, lc, hooks[i], OPT);
		if (!h)
			continue;
		size_t hm = path_push(c, hooks[i]);
		check_handler(c, h, lifecycle_handlers);
		path_pop(c, hm);
	}
	path_pop(c, mark);
}

struct containers_ctx {
	struct strset *names;	      /* across containers and initContainers */
	const struct strset *volumes; /* the pod's volume names */
	bool init;
};

static void check_container(struct vctx *c, struct ynode *ct, void *arg)
{
	struct containers_ctx *cc = arg;
	const char *name = get_str(c, ct, "name", REQ);
	if (name && check_name(c, "name", name, names_dns1123_label) &&
	    !strset_add(cc->names, name))
		err_duplicate(c, "name", name);
	const char *image = get_str(c, ct, "image", REQ);
	if (image && (isspace((unsigned char)image[0]) ||
		      isspace((unsigned char)image[strlen(image) - 1])))
		err_invalid_str(c, "image", image,
				"must not have leading or trailing whitespace");
	get_enum(c, ct, "imagePullPolicy", OPT, pull_policies);
	check_str_list(c, ct, "command", OPT, NULL);
	check_str_list(c, ct, "args", OPT, NULL);
	get_str(c, ct, "workingDir", OPT);

	cleanup_strset struct strset port_names = {0};
	check_each(c, ct, "ports", OPT, check_container_port, &port_names);
	check_each(c, ct, "env", OPT, check_env_var, NULL);
	check_each(c, ct, "envFrom", OPT, check_env_from, NULL);
	check_container_resources(c, ct);
	struct mount_ctx mc = {cc->volumes, {0}};
	check_each(c, ct, "volumeMounts", OPT, check_mount, &mc);
	strset_free(&mc.paths);

	check_probe(c, ct, "livenessProbe", true);
	check_probe(c, ct, "readinessProbe", false);
	check_probe(c, ct, "startupProbe", true);
	check_lifecycle(c, ct);
	get_str(c, ct, "terminationMessagePath", OPT);
	get_enum(c, ct, "terminationMessagePolicy", OPT, message_policies);
	bool b = false;
	get_bool(c, ct, "stdin", OPT, &b);
	get_bool(c, ct, "stdinOnce", OPT, &b);
	get_bool(c, ct, "tty", OPT, &b);
	get_map(c, ct, "securityContext", OPT);

	const char *rp = get_str(c, ct, "restartPolicy", OPT);
	bool sidecar = false;
	if (rp && *rp) {
		if (!cc->init)
			err_forbidden(c, "restartPolicy",
				      "may not be set for non-init containers");
		else if (strcmp(rp, "Always") != 0)
			err_unsupported(c, "restartPolicy", rp, restart_always);
		else
			sidecar = true;
	}
	if (cc->init && !sidecar) {
		static const char *const no_init[] = {
		    "lifecycle", "livenessProbe", "readinessProbe",
		    "startupProbe"};
		for (size_t i = 0; i < ARRAY_SIZE(no_init); i++)
			if (!node_unset(ynode_get(ct, no_init[i])))
				err_forbidden(
				    c, no_init[i],
				    "may not be set for init containers without restartPolicy=Always");
	}
}

static void check_toleration(struct vctx *c, struct ynode *t, void *arg)
{
	(void)arg;
	const char *key = get_str(c, t, "key", OPT);
	if (key && *key)
		check_name(c, "key", key, names_qualified_name);
	const char *op = get_enum(c, t, "operator", OPT, toleration_ops);
	const char *value = get_str(c, t, "value", OPT);
	const char *effect = get_enum(c, t, "effect", OPT, taint_effects);
	long long secs = 0;
	if (get_int(c, t, "tolerationSeconds", OPT, &secs) &&
	    (!effect || strcmp(effect, "NoExecute") != 0))
		err_invalid_str(
		    c, "effect", effect ? effect : "",
		    "effect must be 'NoExecute' when `tolerationSeconds` is set");
	if ((!key || !*key) && (!op || strcmp(op, "Exists") != 0))
		err_invalid_str(
		    c, "operator", op ? op : "",
		    "operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
	if (op && !strcmp(op, "Exists") && value && *value)
		err_invalid_str(
		    c, "operator", value,
		    "value must be empty when `operator` is 'Exists'");
	else if (value && *value)
		check_name(c, "value", value, names_label_value);
}

static void check_host_alias(struct vctx *c, struct ynode *h, void *arg)
{
	(void)arg;
	const char *ip = get_str(c, h, "ip", REQ);
	if (ip)
		check_ip(c, "ip", ip);
	check_str_list(c, h, "hostnames", OPT, names_dns1123_subdomain);
}

static void check_name_ref(struct vctx *c, struct ynode *r, void *arg)
{
	(void)arg;
	get_str(c, r, "name", OPT);
}

static void check_dns_option(struct vctx *c, struct ynode *o, void *arg)
{
	(void)arg;
	get_str(c, o, "name", REQ);
	get_str(c, o, "value", OPT);
}

/* Checks a PodSpec at the current path. restart lists the restartPolicy
 * values the owner allows; restart_req makes the field required (Jobs). */
static void check_pod_spec(struct vctx *c, const struct ynode *spec,
			   const char *const *restart, bool restart_req)
{
	bool b = false;
	c->host_network = get_bool(c, spec, "hostNetwork", OPT, &b) && b;
	cleanup_strset struct strset volumes = {0};
	cleanup_strset struct strset names = {0};
	check_each(c, spec, "volumes", OPT, check_volume, &volumes);
	struct containers_ctx init = {&names, &volumes, true};
	struct containers_ctx main = {&names, &volumes, false};
	check_each(c, spec, "initContainers", OPT, check_container, &init);
	check_each(c, spec, "containers", REQ, check_container, &main);
	c->host_network = false;

	const char *rp = get_str(c, spec, "restartPolicy", OPT);
	if (!rp || !*rp) {
		if (restart_req) {
			struct sbuf vb = {0};
			sb_add(&vb, "valid values: ");
			for (size_t i = 0; restart[i]; i++) {
				if (i)
					sb_add(&vb, ", ");
				sb_quote(&vb, restart[i]);
			}
			cleanup_free char *valid = sb_finish(&vb);
			err_required(c, "restartPolicy", valid);
		}
	} else if (!in_list(rp, restart)) {
		err_unsupported(c, "restartPolicy", rp, restart);
	}
	const char *dp = get_enum(c, spec, "dnsPolicy", OPT, dns_policies);
	struct ynode *dc = get_map(c, spec, "dnsConfig", OPT);
	if (dp && !strcmp(dp, "None") && !dc)
		err_required(
		    c, "dnsConfig",
		    "must provide `dnsConfig` when `dnsPolicy` is None");
	if (dc) {
		size_t mark = path_push(c, "dnsConfig");
		check_str_list(c, dc, "nameservers", OPT, NULL);
		struct ynode *ns = ynode_get(dc, "nameservers");
		for (size_t i = 0; ns && ns->type == YNODE_SEQ && i < ns->n;
		     i++) {
			const char *ip = ynode_str(ynode_item(ns, i));
			char idx[48];
			snprintf(idx, sizeof(idx), "nameservers[%zu]", i);
			if (ip && scalar_is_string(ynode_item(ns, i)))
				check_ip(c, idx, ip);
		}
		check_str_list(c, dc, "searches", OPT, NULL);
		check_each(c, dc, "options", OPT, check_dns_option, NULL);
		path_pop(c, mark);
	}

	long long v = 0;
	if (get_int(c, spec, "terminationGracePeriodSeconds", OPT, &v))
		check_min(c, "terminationGracePeriodSeconds", v, 0);
	if (get_int(c, spec, "activeDeadlineSeconds", OPT, &v))
		check_range(c, "activeDeadlineSeconds", v, 1, INT32_LIMIT);
	check_labels(c, spec, "nodeSelector");
	static const char *const subdomains[] = {
	    "nodeName", "serviceAccountName", "serviceAccount",
	    "priorityClassName"};
	for (size_t i = 0; i < ARRAY_SIZE(subdomains); i++) {
		const char *s = get_str(c, spec, subdomains[i], OPT);
		if (s && *s)
			check_name(c, subdomains[i], s,
				   names_dns1123_subdomain);
	}
	static const char *const labels[] = {"hostname", "subdomain"};
	for (size_t i = 0; i < ARRAY_SIZE(labels); i++) {
		const char *s = get_str(c, spec, labels[i], OPT);
		if (s && *s)
			check_name(c, labels[i], s, names_dns1123_label);
	}
	static const char *const bools[] = {"hostPID",
					    "hostIPC",
					    "shareProcessNamespace",
					    "automountServiceAccountToken",
					    "enableServiceLinks",
					    "setHostnameAsFQDN"};
	for (size_t i = 0; i < ARRAY_SIZE(bools); i++)
		get_bool(c, spec, bools[i], OPT, &b);
	get_str(c, spec, "schedulerName", OPT);
	get_i32(c, spec, "priority", OPT, &v);
	check_each(c, spec, "tolerations", OPT, check_toleration, NULL);
	check_each(c, spec, "imagePullSecrets", OPT, check_name_ref, NULL);
	check_each(c, spec, "hostAliases", OPT, check_host_alias, NULL);
	get_map(c, spec, "securityContext", OPT);
	get_map(c, spec, "affinity", OPT);
}

/* A PodTemplateSpec at key of m; returns it when present. */
static struct ynode *check_pod_template(struct vctx *c, const struct ynode *m,
					const char *key,
					const char *const *restart,
					bool restart_req)
{
	struct ynode *t = get_map(c, m, key, REQ);
	if (!t)
		return NULL;
	size_t mark = path_push(c, key);
	struct ynode *md = get_map(c, t, "metadata", OPT);
	if (md) {
		size_t mm = path_push(c, "metadata");
		check_labels(c, md, "labels");
		check_annotations(c, md);
		path_pop(c, mm);
	}
	struct ynode *spec = get_map(c, t, "spec", REQ);
	if (spec) {
		size_t sm = path_push(c, "spec");
		check_pod_spec(c, spec, restart, restart_req);
		path_pop(c, sm);
	}
	path_pop(c, mark);
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
	default_str(ct, "imagePullPolicy", policy);
}

static void default_http_get(struct ynode *handler)
{
	struct ynode *hg = ynode_get(handler, "httpGet");
	if (hg && hg->type == YNODE_MAP) {
		default_str(hg, "path", "/");
		default_str(hg, "scheme", "HTTP");
	}
}

static void default_probe(struct ynode *p)
{
	if (!p || p->type != YNODE_MAP)
		return;
	default_int(p, "timeoutSeconds", 1);
	default_int(p, "periodSeconds", 10);
	default_int(p, "successThreshold", 1);
	default_int(p, "failureThreshold", 3);
	default_http_get(p);
}

static void default_container(struct ynode *ct, bool pod)
{
	struct ynode *it;
	default_pull_policy(ct);
	default_str(ct, "terminationMessagePath", "/dev/termination-log");
	default_str(ct, "terminationMessagePolicy", "File");
	struct ynode *res = default_map(ct, "resources");
	struct ynode *ports = ynode_get(ct, "ports");
	for_each_map_item(ports, i, it) default_str(it, "protocol", "TCP");
	struct ynode *env = ynode_get(ct, "env");
	for_each_map_item(env, i, it)
	{
		struct ynode *fr = ynode_path(it, "valueFrom.fieldRef");
		if (fr && fr->type == YNODE_MAP)
			default_str(fr, "apiVersion", "v1");
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
		struct ynode *req = default_map(res, "requests");
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
	if (v && v->type == YNODE_SCALAR && !v->quoted &&
	    plain_octal(v->str, &x))
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
	default_int(src, "defaultMode", mode);
	struct ynode *items = ynode_get(src, "items");
	for_each_map_item(items, i, it) normalize_mode(it, "mode");
}

static void default_hostpath(struct ynode *owner)
{
	struct ynode *hp = ynode_get(owner, "hostPath");
	if (hp && hp->type == YNODE_MAP && !ynode_get(hp, "type"))
		ynode_set(hp, "type", ynode_new_str(""));
}

static void default_pod_spec(struct ynode *spec, bool pod)
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
			default_map(it, "emptyDir");
		default_hostpath(it);
		default_volume_modes(ynode_get(it, "secret"), 0400);
		default_volume_modes(ynode_get(it, "configMap"), 0644);
		default_volume_modes(ynode_get(it, "downwardAPI"), 0644);
		default_volume_modes(ynode_get(it, "projected"), 0644);
	}
	default_str(spec, "restartPolicy", "Always");
	default_str(spec, "dnsPolicy", "ClusterFirst");
	default_int(spec, "terminationGracePeriodSeconds", 30);
	default_str(spec, "schedulerName", "default-scheduler");
	default_map(spec, "securityContext");
}

static void default_pod_template(struct ynode *owner, const char *path)
{
	default_pod_spec(ynode_path(owner, path), false);
}

/* ---- Pod -------------------------------------------------------------- */

static void check_pod(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_pod_spec(c, spec, restart_any, false);
	path_pop(c, mark);
}

static void default_pod(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_pod_spec(ynode_get(obj, "spec"), true);
}

static void del_if(struct ynode *m, const char *key)
{
	if (m && m->type == YNODE_MAP && ynode_get(m, key))
		ynode_del(m, key);
}

/* A pod's spec is fixed once created, but for what Kubernetes lets change:
 * images, a shorter active deadline, added tolerations, and the node name
 * while it is empty (the scheduler binds by writing it). The rest is
 * compared on copies with those fields masked out. */
static void update_pod(struct vctx *c, const struct ynode *obj,
		       const struct ynode *old)
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
		if (!la || !lb || la->type != YNODE_SEQ ||
		    lb->type != YNODE_SEQ)
			continue;
		for (size_t i = 0; i < la->n && i < lb->n; i++) {
			struct ynode *ia = ynode_item(la, i);
			struct ynode *ib = ynode_item(lb, i);
			if (ia->type != YNODE_MAP || ib->type != YNODE_MAP)
				continue;
			/* A new image may bring a new defaulted pull policy
			 * (latest against a tag); let it follow the image. */
			if (!tree_equal(ynode_get(ia, "image"),
					ynode_get(ib, "image"))) {
				del_if(ia, "imagePullPolicy");
				del_if(ib, "imagePullPolicy");
			}
			del_if(ia, "image");
			del_if(ib, "image");
		}
	}

	long long na = 0, oa = 0;
	bool hn = scalar_int(ynode_get(a, "activeDeadlineSeconds"), &na);
	bool ho = scalar_int(ynode_get(b, "activeDeadlineSeconds"), &oa);
	if (ho && !hn)
		err_invalid_node(
		    c, "spec.activeDeadlineSeconds", NULL,
		    "must not update from a positive integer to nil value");
	else if (ho && hn && na > oa)
		err_invalid_int(c, "spec.activeDeadlineSeconds", na,
				"must be less than or equal to previous value");
	del_if(a, "activeDeadlineSeconds");
	del_if(b, "activeDeadlineSeconds");

	struct ynode *ta = ynode_get(a, "tolerations");
	struct ynode *tb = ynode_get(b, "tolerations");
	for (size_t i = 0; tb && tb->type == YNODE_SEQ && i < tb->n; i++) {
		bool found = false;
		for (size_t j = 0;
		     !found && ta && ta->type == YNODE_SEQ && j < ta->n; j++)
			found =
			    tree_equal(ynode_item(tb, i), ynode_item(ta, j));
		if (!found) {
			err_forbidden(
			    c, "spec.tolerations",
			    "existing toleration can not be modified or removed, only new ones added");
			break;
		}
	}
	del_if(a, "tolerations");
	del_if(b, "tolerations");

	if (node_empty(ynode_get(b, "nodeName"))) {
		del_if(a, "nodeName");
		del_if(b, "nodeName");
	}

	struct sbuf p = {0};
	if (tree_diff(a, b, &p))
		err_forbidden(
		    c, "spec",
		    "pod updates may not change fields other than `spec.containers[*].image` (and its `imagePullPolicy`), `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.nodeName` (only to bind an unscheduled pod); changed: spec%s%s",
		    p.len ? "." : "", p.len ? p.buf : "");
	free(p.buf);
}

/* ---- workload controllers --------------------------------------------- */

static const char *const deploy_strategies[] = {"Recreate", "RollingUpdate",
						NULL};
static const char *const ds_strategies[] = {"RollingUpdate", "OnDelete", NULL};
static const char *const pod_management[] = {"OrderedReady", "Parallel", NULL};
static const char *const retention_policies[] = {"Retain", "Delete", NULL};
static const char *const completion_modes[] = {"NonIndexed", "Indexed", NULL};
static const char *const replacement_policies[] = {"TerminatingOrFailed",
						   "Failed", NULL};
static const char *const concurrency_policies[] = {"Allow", "Forbid", "Replace",
						   NULL};

/* Before apps/v1 a selector could be left out and was taken from the
 * template's labels (extensions/v1beta1, apps/v1beta1). */
static bool selector_defaulted(const struct vctx *c)
{
	return c->api_version &&
	       (!strcmp(c->api_version, "extensions/v1beta1") ||
		!strcmp(c->api_version, "apps/v1beta1"));
}

/* spec.selector (a LabelSelector) must select the pod template t. */
static void check_selector_template(struct vctx *c, const struct ynode *spec,
				    const struct ynode *t, const char *what)
{
	struct ynode *labels = t ? ynode_path(t, "metadata.labels") : NULL;
	if (selector_defaulted(c) && node_unset(ynode_get(spec, "selector"))) {
		if (t && node_empty(labels))
			err_required(c, "selector", NULL);
		return;
	}
	struct ynode *sel = check_label_selector(c, spec, "selector", REQ);
	if (!sel)
		return;
	if (sel_empty(sel)) {
		err_invalid_node(c, "selector", sel,
				 "empty selector is invalid for %s", what);
		return;
	}
	if (t && !sel_matches(sel, labels))
		err_invalid_node(c, "template.metadata.labels", labels,
				 "`selector` does not match template `labels`");
}

/* rollingUpdate.maxSurge and maxUnavailable: an integer or a percentage,
 * not both 0 (counting an absent one as its default). */
static void check_rolling_update(struct vctx *c, const struct ynode *ru,
				 bool surge_default_zero,
				 bool unavailable_default_zero)
{
	size_t mark = path_push(c, "rollingUpdate");
	long long v = 0;
	bool pct = false, zero_s = surge_default_zero,
	     zero_u = unavailable_default_zero;
	if (!node_unset(ynode_get(ru, "maxSurge")))
		zero_s = check_int_or_percent(c, ru, "maxSurge", 0, &v, &pct) &&
			 v == 0;
	if (!node_unset(ynode_get(ru, "maxUnavailable")))
		zero_u = check_int_or_percent(c, ru, "maxUnavailable", 100, &v,
					      &pct) &&
			 v == 0;
	if (zero_s && zero_u)
		err_invalid_int(c, "maxUnavailable", 0,
				"may not be 0 when `maxSurge` is 0");
	path_pop(c, mark);
}

static void check_replicas_common(struct vctx *c, const struct ynode *spec)
{
	get_i32_min(c, spec, "replicas", 0, NULL);
	get_i32_min(c, spec, "minReadySeconds", 0, NULL);
}

static void check_replication_controller(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_replicas_common(c, spec);
	struct ynode *t =
	    check_pod_template(c, spec, "template", restart_always, false);
	struct ynode *labels = t ? ynode_path(t, "metadata.labels") : NULL;
	if (node_empty(ynode_get(spec, "selector"))) {
		if (t && node_empty(labels))
			err_required(c, "selector", NULL);
	} else {
		struct ynode *sel = check_labels(c, spec, "selector");
		if (sel && t && !map_selects(sel, labels))
			err_invalid_node(
			    c, "template.metadata.labels", labels,
			    "`selector` does not match template `labels`");
	}
	path_pop(c, mark);
}

/* The selector, and the object's own labels when it has none, from the
 * template's labels (a ReplicationController, and apps kinds before
 * apps/v1). */
static void default_selector_from_template(struct ynode *obj, bool label_sel)
{
	struct ynode *spec = ynode_get(obj, "spec");
	struct ynode *labels = ynode_path(spec, "template.metadata.labels");
	if (!spec || spec->type != YNODE_MAP || !labels ||
	    labels->type != YNODE_MAP || labels->n == 0)
		return;
	if (node_empty(ynode_get(spec, "selector"))) {
		if (label_sel) {
			struct ynode *sel = ynode_new_map();
			ynode_set(sel, "matchLabels", ynode_clone(labels));
			ynode_set(spec, "selector", sel);
		} else {
			ynode_set(spec, "selector", ynode_clone(labels));
		}
	}
	struct ynode *md = ynode_get(obj, "metadata");
	if (md && md->type == YNODE_MAP && node_empty(ynode_get(md, "labels")))
		ynode_set(md, "labels", ynode_clone(labels));
}

static void default_replication_controller(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_selector_from_template(obj, false);
	struct ynode *spec = ynode_get(obj, "spec");
	default_int(spec, "replicas", 1);
	default_pod_template(spec, "template.spec");
}

static void check_replica_set(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_replicas_common(c, spec);
	struct ynode *t =
	    check_pod_template(c, spec, "template", restart_always, false);
	check_selector_template(c, spec, t, "replicaset");
	path_pop(c, mark);
}

static void default_replica_set(struct vctx *c, struct ynode *obj)
{
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	default_int(spec, "replicas", 1);
	default_pod_template(spec, "template.spec");
}

static void update_selector(struct vctx *c, const struct ynode *obj,
			    const struct ynode *old)
{
	check_immutable(c, obj, old, "spec.selector");
}

/* A Deployment's strategy or a DaemonSet's updateStrategy: a type from
 * types, and rollingUpdate only with a type other than no_rolling. */
static void check_update_strategy(struct vctx *c, struct ynode *spec, const char *field,
				  const char *const *types, const char *no_rolling,
				  bool daemon_set)
{
	struct ynode *st = get_map(c, spec, field, OPT);
	if (!st)
		return;
	size_t sm = path_push(c, field);
	const char *type = get_enum(c, st, "type", OPT, types);
	struct ynode *ru = get_map(c, st, "rollingUpdate", OPT);
	if (ru && type && !strcmp(type, no_rolling))
		err_forbidden(c, "rollingUpdate",
			      "may not be specified when strategy `type` is '%s'", no_rolling);
	else if (ru)
		check_rolling_update(c, ru, daemon_set, false);
	path_pop(c, sm);
}

static void check_deployment(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_replicas_common(c, spec);
	struct ynode *t =
	    check_pod_template(c, spec, "template", restart_always, false);
	check_selector_template(c, spec, t, "deployment");
	long long mrs = 0, pds = 600;
	get_i32_min(c, spec, "minReadySeconds", 0, &mrs);
	get_i32_min(c, spec, "revisionHistoryLimit", 0, NULL);
	get_i32_min(c, spec, "progressDeadlineSeconds", 0, &pds);
	if (pds <= mrs)
		err_invalid_int(c, "progressDeadlineSeconds", pds,
				"must be greater than minReadySeconds");
	bool paused = false;
	get_bool(c, spec, "paused", OPT, &paused);
	check_update_strategy(c, spec, "strategy", deploy_strategies, "Recreate", false);
	path_pop(c, mark);
}

static void default_deployment(struct vctx *c, struct ynode *obj)
{
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	default_int(spec, "replicas", 1);
	struct ynode *st = default_map(spec, "strategy");
	default_str(st, "type", "RollingUpdate");
	if (st && streq(ynode_path_str(st, "type"), "RollingUpdate")) {
		struct ynode *ru = default_map(st, "rollingUpdate");
		default_str(ru, "maxUnavailable", "25%");
		default_str(ru, "maxSurge", "25%");
	}
	default_int(spec, "revisionHistoryLimit", 10);
	default_int(spec, "progressDeadlineSeconds", 600);
	default_pod_template(spec, "template.spec");
}

static void check_daemon_set(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	struct ynode *t =
	    check_pod_template(c, spec, "template", restart_always, false);
	check_selector_template(c, spec, t, "daemonset");
	get_i32_min(c, spec, "minReadySeconds", 0, NULL);
	get_i32_min(c, spec, "revisionHistoryLimit", 0, NULL);
	check_update_strategy(c, spec, "updateStrategy", ds_strategies, "OnDelete", true);
	path_pop(c, mark);
}

static void default_daemon_set(struct vctx *c, struct ynode *obj)
{
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	struct ynode *st = default_map(spec, "updateStrategy");
	default_str(st, "type", "RollingUpdate");
	if (st && streq(ynode_path_str(st, "type"), "RollingUpdate")) {
		struct ynode *ru = default_map(st, "rollingUpdate");
		default_int(ru, "maxUnavailable", 1);
		default_int(ru, "maxSurge", 0);
	}
	default_int(spec, "revisionHistoryLimit", 10);
	default_pod_template(spec, "template.spec");
}

static void check_pvc_spec(struct vctx *c, const struct ynode *spec);
static void default_pvc_spec(struct ynode *spec);

static void check_claim_template(struct vctx *c, struct ynode *t, void *arg)
{
	(void)arg;
	struct ynode *md = get_map(c, t, "metadata", REQ);
	if (md) {
		size_t mm = path_push(c, "metadata");
		const char *name = get_str(c, md, "name", REQ);
		if (name)
			check_name(c, "name", name, names_dns1123_subdomain);
		check_labels(c, md, "labels");
		check_annotations(c, md);
		path_pop(c, mm);
	}
	struct ynode *spec = get_map(c, t, "spec", REQ);
	if (spec) {
		size_t sm = path_push(c, "spec");
		check_pvc_spec(c, spec);
		path_pop(c, sm);
	}
}

static void check_stateful_set(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_replicas_common(c, spec);
	get_str(c, spec, "serviceName", OPT);
	struct ynode *t =
	    check_pod_template(c, spec, "template", restart_always, false);
	check_selector_template(c, spec, t, "statefulset");
	get_enum(c, spec, "podManagementPolicy", OPT, pod_management);
	get_i32_min(c, spec, "revisionHistoryLimit", 0, NULL);
	struct ynode *st = get_map(c, spec, "updateStrategy", OPT);
	if (st) {
		size_t sm = path_push(c, "updateStrategy");
		const char *type = get_enum(c, st, "type", OPT, ds_strategies);
		struct ynode *ru = get_map(c, st, "rollingUpdate", OPT);
		if (ru && type && !strcmp(type, "OnDelete")) {
			err_forbidden(
			    c, "rollingUpdate",
			    "only allowed for updateStrategy 'RollingUpdate'");
		} else if (ru) {
			size_t rm = path_push(c, "rollingUpdate");
			long long v = 0;
			bool pct = false;
			get_i32_min(c, ru, "partition", 0, NULL);
			if (check_int_or_percent(c, ru, "maxUnavailable", 100,
						 &v, &pct) &&
			    v == 0)
				err_invalid_int(c, "maxUnavailable", 0,
						"must be greater than 0");
			path_pop(c, rm);
		}
		path_pop(c, sm);
	}
	check_each(c, spec, "volumeClaimTemplates", OPT, check_claim_template,
		   NULL);
	struct ynode *rp =
	    get_map(c, spec, "persistentVolumeClaimRetentionPolicy", OPT);
	if (rp) {
		size_t rm =
		    path_push(c, "persistentVolumeClaimRetentionPolicy");
		get_enum(c, rp, "whenDeleted", OPT, retention_policies);
		get_enum(c, rp, "whenScaled", OPT, retention_policies);
		path_pop(c, rm);
	}
	struct ynode *ord = get_map(c, spec, "ordinals", OPT);
	if (ord) {
		size_t om = path_push(c, "ordinals");
		get_i32_min(c, ord, "start", 0, NULL);
		path_pop(c, om);
	}
	path_pop(c, mark);
}

static void default_stateful_set(struct vctx *c, struct ynode *obj)
{
	struct ynode *it;
	if (selector_defaulted(c))
		default_selector_from_template(obj, true);
	struct ynode *spec = ynode_get(obj, "spec");
	default_int(spec, "replicas", 1);
	default_str(spec, "podManagementPolicy", "OrderedReady");
	struct ynode *st = default_map(spec, "updateStrategy");
	default_str(st, "type", "RollingUpdate");
	if (st && streq(ynode_path_str(st, "type"), "RollingUpdate")) {
		struct ynode *ru = default_map(st, "rollingUpdate");
		default_int(ru, "partition", 0);
	}
	default_int(spec, "revisionHistoryLimit", 10);
	struct ynode *rp =
	    default_map(spec, "persistentVolumeClaimRetentionPolicy");
	default_str(rp, "whenDeleted", "Retain");
	default_str(rp, "whenScaled", "Retain");
	struct ynode *vcts = ynode_get(spec, "volumeClaimTemplates");
	for_each_map_item(vcts, i, it) default_pvc_spec(ynode_get(it, "spec"));
	default_pod_template(spec, "template.spec");
}

/* Kubernetes lets a StatefulSet change only these; the rest is fixed. */
static void update_stateful_set(struct vctx *c, const struct ynode *obj,
				const struct ynode *old)
{
	check_immutable(c, obj, old, "spec.selector");
	const struct ynode *ns = ynode_get(obj, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!ns || !os || ns->type != YNODE_MAP || os->type != YNODE_MAP)
		return;
	cleanup_ynode struct ynode *a = ynode_clone(ns);
	cleanup_ynode struct ynode *b = ynode_clone(os);
	static const char *const mutable[] = {
	    "replicas",
	    "ordinals",
	    "template",
	    "updateStrategy",
	    "persistentVolumeClaimRetentionPolicy",
	    "minReadySeconds",
	    "selector" /* reported above */
	};
	for (size_t i = 0; i < ARRAY_SIZE(mutable); i++) {
		del_if(a, mutable[i]);
		del_if(b, mutable[i]);
	}
	if (!tree_equal(a, b))
		err_forbidden(
		    c, "spec",
		    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
}

/* ---- Job and CronJob -------------------------------------------------- */

static void check_job_spec(struct vctx *c, const struct ynode *spec)
{
	long long v = 0;
	get_i32_min(c, spec, "parallelism", 0, NULL);
	bool has_completions = get_i32_min(c, spec, "completions", 0, NULL);
	get_i32_min(c, spec, "backoffLimit", 0, NULL);
	get_i32_min(c, spec, "backoffLimitPerIndex", 0, NULL);
	get_i32_min(c, spec, "maxFailedIndexes", 0, NULL);
	get_i32_min(c, spec, "ttlSecondsAfterFinished", 0, NULL);
	if (get_int(c, spec, "activeDeadlineSeconds", OPT, &v))
		check_min(c, "activeDeadlineSeconds", v, 1);
	const char *mode =
	    get_enum(c, spec, "completionMode", OPT, completion_modes);
	if (mode && !strcmp(mode, "Indexed") && !has_completions &&
	    node_unset(ynode_get(spec, "completions")))
		err_required(c, "completions",
			     "when completion mode is Indexed");
	get_enum(c, spec, "podReplacementPolicy", OPT, replacement_policies);
	bool manual = false, b;
	get_bool(c, spec, "manualSelector", OPT, &manual);
	get_bool(c, spec, "suspend", OPT, &b);
	get_map(c, spec, "podFailurePolicy", OPT);
	struct ynode *t =
	    check_pod_template(c, spec, "template", restart_job, true);
	struct ynode *sel =
	    check_label_selector(c, spec, "selector", manual ? REQ : OPT);
	if (sel && t) {
		struct ynode *labels = ynode_path(t, "metadata.labels");
		if (sel_empty(sel))
			err_invalid_node(c, "selector", sel,
					 "empty selector is invalid for job");
		else if (!sel_matches(sel, labels))
			err_invalid_node(
			    c, "template.metadata.labels", labels,
			    "`selector` does not match template `labels`");
	}
}

/* The required spec of obj, checked by fn under the path "spec". */
static void check_required_spec(struct vctx *c, struct ynode *obj,
				void (*fn)(struct vctx *c, const struct ynode *spec))
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	fn(c, spec);
	path_pop(c, mark);
}

static void check_job(struct vctx *c, struct ynode *obj)
{
	check_required_spec(c, obj, check_job_spec);
}

static void default_job(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = ynode_get(obj, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return;
	if (node_unset(ynode_get(spec, "completions")) &&
	    node_unset(ynode_get(spec, "parallelism")))
		default_int(spec, "completions", 1);
	default_int(spec, "parallelism", 1);
	default_int(spec, "backoffLimit", 6);
	default_str(spec, "completionMode", "NonIndexed");
	default_bool(spec, "suspend", false);
	default_pod_template(spec, "template.spec");
}

static void update_job(struct vctx *c, const struct ynode *obj,
		       const struct ynode *old)
{
	check_immutable(c, obj, old, "spec.selector");
	check_immutable(c, obj, old, "spec.template");
	check_immutable(c, obj, old, "spec.completions");
	check_immutable(c, obj, old, "spec.completionMode");
}

static const char *const cron_months[] = {"jan", "feb", "mar", "apr", "may",
					  "jun", "jul", "aug", "sep", "oct",
					  "nov", "dec", NULL};
static const char *const cron_days[] = {"sun", "mon", "tue", "wed",
					"thu", "fri", "sat", NULL};

struct cron_field {
	int lo, hi;
	const char *const *names; /* names[i] means lo + i */
};

static const struct cron_field cron_fields[5] = {
    {0, 59, NULL},	  /* minute */
    {0, 23, NULL},	  /* hour */
    {1, 31, NULL},	  /* day of month */
    {1, 12, cron_months}, /* month */
    {0, 6, cron_days},	  /* day of week */
};

/* One value of a cron field, by number or by name; returns -1 if neither. */
static int cron_value(const char *s, size_t n, const struct cron_field *f)
{
	for (size_t i = 0; f->names && f->names[i]; i++)
		if (n == 3 && strncasecmp(s, f->names[i], 3) == 0)
			return f->lo + (int)i;
	if (n == 0 || n > 6)
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* One comma-separated part of a field: "*", "?", "a", "a-b", each with an
 * optional "/step". Returns a malloc'd complaint in robfig/cron's words (the
 * parser Kubernetes uses), or NULL. */
static char *cron_part(const char *p, size_t n, const struct cron_field *f)
{
	cleanup_free char *part = xstrndup(p, n);
	char *slash = strchr(part, '/');
	if (slash && strchr(slash + 1, '/'))
		return xasprintf("too many slashes: %s", part);
	if (slash) {
		*slash = '\0';
		int step = cron_value(slash + 1, strlen(slash + 1),
				      &(struct cron_field){0, 0, NULL});
		if (step <= 0)
			return xasprintf(
			    "step of range should be a positive number: %s/%s",
			    part, slash + 1);
	}
	if (!strcmp(part, "*") || !strcmp(part, "?"))
		return NULL;
	char *dash = strchr(part, '-');
	if (dash && strchr(dash + 1, '-'))
		return xasprintf("too many hyphens: %s", part);
	const char *a = part, *b = dash ? dash + 1 : part;
	size_t an = dash ? (size_t)(dash - part) : strlen(part);
	int lo = cron_value(a, an, f), hi = cron_value(b, strlen(b), f);
	if (lo < 0)
		return xasprintf("failed to parse int from %.*s", (int)an, a);
	if (hi < 0)
		return xasprintf("failed to parse int from %s", b);
	if (lo < f->lo)
		return xasprintf(
		    "beginning of range (%d) below minimum (%d): %s", lo, f->lo,
		    part);
	if (hi > f->hi)
		return xasprintf("end of range (%d) above maximum (%d): %s", hi,
				 f->hi, part);
	if (lo > hi)
		return xasprintf(
		    "beginning of range (%d) beyond end of range (%d): %s", lo,
		    hi, part);
	return NULL;
}

static char *cron_check(const char *s)
{
	static const char *const macros[] = {
	    "@yearly", "@annually", "@monthly", "@weekly",
	    "@daily",  "@midnight", "@hourly",	NULL};
	while (isspace((unsigned char)*s))
		s++;
	if (!strncmp(s, "TZ=", 3) || !strncmp(s, "CRON_TZ=", 8))
		return xstrdup(
		    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
	if (s[0] == '@') {
		if (in_list(s, macros))
			return NULL;
		if (!strncmp(s, "@every ", 7) && s[7])
			return NULL;
		return xasprintf("unrecognized descriptor: %s", s);
	}
	const char *fields[6];
	size_t lens[6], n = 0;
	for (const char *p = s; *p;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		size_t len = 0;
		while (p[len] && !isspace((unsigned char)p[len]))
			len++;
		if (n < 6) {
			fields[n] = p;
			lens[n] = len;
		}
		n++;
		p += len;
	}
	if (n != 5)
		return xasprintf("Expected exactly 5 fields, found %zu: %s", n,
				 s);
	for (size_t i = 0; i < 5; i++) {
		const char *p = fields[i], *end = fields[i] + lens[i];
		while (p <= end) {
			size_t plen = strcspn(p, ",");
			if (p + plen > end)
				plen = (size_t)(end - p);
			char *why = cron_part(p, plen, &cron_fields[i]);
			if (why)
				return why;
			p += plen + 1;
		}
	}
	return NULL;
}

static void check_cron_job(struct vctx *c, struct ynode *obj)
{
	const char *name = ynode_path_str(obj, "metadata.name");
	if (name && strlen(name) > 52)
		err_invalid_str(c, "metadata.name", name,
				"must be no more than 52 characters");
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	const char *sched = get_str(c, spec, "schedule", REQ);
	cleanup_free char *why = sched ? cron_check(sched) : NULL;
	if (why)
		err_invalid_str(c, "schedule", sched, "%s", why);
	get_str(c, spec, "timeZone", OPT);
	long long v = 0;
	if (get_int(c, spec, "startingDeadlineSeconds", OPT, &v))
		check_min(c, "startingDeadlineSeconds", v, 0);
	get_enum(c, spec, "concurrencyPolicy", OPT, concurrency_policies);
	bool b = false;
	get_bool(c, spec, "suspend", OPT, &b);
	get_i32_min(c, spec, "successfulJobsHistoryLimit", 0, NULL);
	get_i32_min(c, spec, "failedJobsHistoryLimit", 0, NULL);
	struct ynode *jt = get_map(c, spec, "jobTemplate", REQ);
	if (jt) {
		size_t jm = path_push(c, "jobTemplate");
		struct ynode *md = get_map(c, jt, "metadata", OPT);
		if (md) {
			size_t mm = path_push(c, "metadata");
			check_labels(c, md, "labels");
			check_annotations(c, md);
			path_pop(c, mm);
		}
		struct ynode *js = get_map(c, jt, "spec", REQ);
		if (js) {
			size_t sm = path_push(c, "spec");
			check_job_spec(c, js);
			path_pop(c, sm);
		}
		path_pop(c, jm);
	}
	path_pop(c, mark);
}

static void default_cron_job(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = ynode_get(obj, "spec");
	default_str(spec, "concurrencyPolicy", "Allow");
	default_bool(spec, "suspend", false);
	default_int(spec, "successfulJobsHistoryLimit", 3);
	default_int(spec, "failedJobsHistoryLimit", 1);
	default_pod_template(spec, "jobTemplate.spec.template.spec");
}

/* ---- HorizontalPodAutoscaler ------------------------------------------ */

static const char *const metric_types[] = {
    "Object", "Pods", "Resource", "ContainerResource", "External", NULL};
static const char *const metric_fields[] = {
    "object", "pods", "resource", "containerResource", "external", NULL};
static const char *const target_types[] = {"Utilization", "Value",
					   "AverageValue", NULL};

static void check_metric_target(struct vctx *c, const struct ynode *m)
{
	struct ynode *t = get_map(c, m, "target", REQ);
	if (!t)
		return;
	size_t mark = path_push(c, "target");
	const char *type = get_enum(c, t, "type", REQ, target_types);
	long long v = 0;
	int64_t q = 0;
	if (get_i32(c, t, "averageUtilization", OPT, &v))
		check_min(c, "averageUtilization", v, 1);
	static const char *const qs[] = {"value", "averageValue"};
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++) {
		struct ynode *qv = get_any(c, t, qs[i], OPT);
		if (qv && check_quantity(c, qs[i], qv, &q) && q <= 0)
			err_invalid_str(c, qs[i], qv->str, "must be positive");
	}
	if (type && !strcmp(type, "Utilization") &&
	    node_unset(ynode_get(t, "averageUtilization")))
		err_required(
		    c, "averageUtilization",
		    "must set `averageUtilization` when `type` is 'Utilization'");
	if (type && !strcmp(type, "Value") && node_unset(ynode_get(t, "value")))
		err_required(c, "value",
			     "must set `value` when `type` is 'Value'");
	if (type && !strcmp(type, "AverageValue") &&
	    node_unset(ynode_get(t, "averageValue")))
		err_required(
		    c, "averageValue",
		    "must set `averageValue` when `type` is 'AverageValue'");
	path_pop(c, mark);
}

static void check_metric(struct vctx *c, struct ynode *m, void *arg)
{
	(void)arg;
	const char *type = get_enum(c, m, "type", REQ, metric_types);
	if (!type)
		return;
	size_t i = 0;
	while (strcmp(metric_types[i], type) != 0)
		i++;
	const char *field = metric_fields[i];
	struct ynode *src = get_map(c, m, field, REQ);
	if (!src)
		return;
	size_t mark = path_push(c, field);
	if (!strcmp(field, "resource") || !strcmp(field, "containerResource")) {
		get_str(c, src, "name", REQ);
		if (!strcmp(field, "containerResource"))
			get_str(c, src, "container", REQ);
	} else {
		struct ynode *metric = get_map(c, src, "metric", REQ);
		if (metric) {
			size_t mm = path_push(c, "metric");
			get_str(c, metric, "name", REQ);
			path_pop(c, mm);
		}
		if (!strcmp(field, "object")) {
			struct ynode *d =
			    get_map(c, src, "describedObject", REQ);
			size_t dm = path_push(c, "describedObject");
			get_str(c, d, "kind", d ? REQ : OPT);
			get_str(c, d, "name", d ? REQ : OPT);
			path_pop(c, dm);
		}
	}
	check_metric_target(c, src);
	path_pop(c, mark);
}

static bool hpa_v1(const struct vctx *c)
{
	return c->api_version && !strcmp(c->api_version, "autoscaling/v1");
}

static void check_hpa(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	struct ynode *ref = get_map(c, spec, "scaleTargetRef", REQ);
	if (ref) {
		size_t rm = path_push(c, "scaleTargetRef");
		get_str(c, ref, "kind", REQ);
		const char *name = get_str(c, ref, "name", REQ);
		if (name)
			check_name(c, "name", name, names_dns1123_subdomain);
		get_str(c, ref, "apiVersion", OPT);
		path_pop(c, rm);
	}
	long long minr = 1, maxr;
	if (get_i32(c, spec, "minReplicas", OPT, &minr) && minr < 1) {
		err_invalid_int(c, "minReplicas", minr,
				"must be greater than or equal to 1");
		minr = 1;
	}
	if (get_i32(c, spec, "maxReplicas", REQ, &maxr)) {
		if (maxr < 1)
			err_invalid_int(c, "maxReplicas", maxr,
					"must be greater than 0");
		else if (maxr < minr)
			err_invalid_int(
			    c, "maxReplicas", maxr,
			    "must be greater than or equal to `minReplicas`");
	}
	if (hpa_v1(c)) {
		long long v = 0;
		if (get_i32(c, spec, "targetCPUUtilizationPercentage", OPT, &v))
			check_min(c, "targetCPUUtilizationPercentage", v, 1);
	} else {
		check_each(c, spec, "metrics", OPT, check_metric, NULL);
		get_map(c, spec, "behavior", OPT);
	}
	path_pop(c, mark);
}

static void default_hpa(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = ynode_get(obj, "spec");
	default_int(spec, "minReplicas", 1);
	if (hpa_v1(c) || !spec || !node_empty(ynode_get(spec, "metrics")))
		return;
	struct ynode *target = ynode_new_map();
	ynode_set(target, "type", ynode_new_str("Utilization"));
	ynode_set(target, "averageUtilization", ynode_new_int(80));
	struct ynode *res = ynode_new_map();
	ynode_set(res, "name", ynode_new_str("cpu"));
	ynode_set(res, "target", target);
	struct ynode *metric = ynode_new_map();
	ynode_set(metric, "type", ynode_new_str("Resource"));
	ynode_set(metric, "resource", res);
	struct ynode *metrics = ynode_new_seq();
	ynode_append(metrics, metric);
	ynode_set(spec, "metrics", metrics);
}

/* ---- Service and Endpoints -------------------------------------------- */

static const char *const service_types[] = {
    "ClusterIP", "NodePort", "LoadBalancer", "ExternalName", NULL};
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
	const char *name = get_str(c, p, "name", sp->count > 1 ? REQ : OPT);
	if (name && *name && check_name(c, "name", name, names_dns1123_label) &&
	    !strset_add(&sp->names, name))
		err_duplicate(c, "name", name);
	long long port = 0, np;
	bool have_port = get_i32(c, p, "port", REQ, &port) &&
			 check_range(c, "port", port, 1, 65535);
	const char *proto = get_enum(c, p, "protocol", OPT, protocols);
	if (have_port) {
		char *key = xasprintf("%lld/%s", port, proto ? proto : "TCP");
		cleanup_free char *shown = xstrdup(key);
		if (!strset_add_owned(&sp->port_protos, key))
			err_duplicate(c, NULL, shown);
	}
	long long tp = 0;
	/* targetPort 0 means unset, as in Kubernetes: it becomes port */
	if (!scalar_int(ynode_get(p, "targetPort"), &tp) || tp != 0)
		check_port_ref(c, p, "targetPort", OPT);
	get_str(c, p, "appProtocol", OPT);
	if (get_i32(c, p, "nodePort", OPT, &np) && np != 0) {
		if (strcmp(sp->type, "NodePort") &&
		    strcmp(sp->type, "LoadBalancer")) {
			err_forbidden(c, "nodePort",
				      "may not be used when `type` is '%s'",
				      sp->type);
		} else if (np < NODE_PORT_MIN || np > NODE_PORT_MAX) {
			err_invalid_int(
			    c, "nodePort", np,
			    "provided port is not in the valid range. The range of valid ports is %d-%d",
			    NODE_PORT_MIN, NODE_PORT_MAX);
		} else {
			char *key =
			    xasprintf("%lld/%s", np, proto ? proto : "TCP");
			cleanup_free char *shown = xasprintf("%lld", np);
			if (!strset_add_owned(&sp->node_ports, key))
				err_duplicate(c, "nodePort", shown);
		}
	}
}

static void check_service(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (!spec && !node_unset(ynode_get(obj, "spec")))
		return;
	size_t mark = path_push(c, "spec");
	const char *type = get_enum(c, spec, "type", OPT, service_types);
	if (!type) {
		const char *raw = ynode_path_str(spec, "type");
		if (raw && *raw) {
			path_pop(c, mark);
			return; /* reported; the rest depends on it */
		}
		type = "ClusterIP";
	}
	bool external = !strcmp(type, "ExternalName");
	const char *ip = get_str(c, spec, "clusterIP", OPT);
	bool headless = ip && !strcmp(ip, "None");
	if (ip && *ip && !headless) {
		if (!is_ipv4(ip))
			err_invalid_str(
			    c, "clusterIP", ip,
			    is_ip(ip)
				? "IPv6 cluster IPs are not supported"
				: "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
	}
	if (headless && strcmp(type, "ClusterIP") != 0 && !external)
		err_invalid_str(c, "clusterIP", ip,
				"may not be set to 'None' for %s services",
				type);
	struct ynode *ips = check_str_list(c, spec, "clusterIPs", OPT, NULL);
	if (ips && ips->n && ip && *ip &&
	    strcmp(ynode_str(ynode_item(ips, 0)) ? ynode_str(ynode_item(ips, 0))
						 : "",
		   ip) != 0)
		err_invalid_node(
		    c, "clusterIPs", ips,
		    "must match `clusterIP` when both are specified");
	if (external) {
		const char *en = get_str(c, spec, "externalName", REQ);
		if (en) {
			cleanup_free char *name = xstrdup(en);
			size_t n = strlen(name);
			if (n && name[n - 1] == '.')
				name[n - 1] = '\0';
			check_name(c, "externalName", name,
				   names_dns1123_subdomain);
		}
		if (ip && *ip)
			err_forbidden(
			    c, "clusterIP",
			    "may not be set for ExternalName services");
	}

	struct ynode *ports = get_seq(c, spec, "ports", OPT);
	if (!ports && !headless && !external)
		err_required(c, "ports", NULL);
	struct service_ports sp = {.type = type, .count = ports ? ports->n : 0};
	check_each(c, spec, "ports", OPT, check_service_port, &sp);
	strset_free(&sp.names);
	strset_free(&sp.node_ports);
	strset_free(&sp.port_protos);

	check_labels(c, spec, "selector");
	const char *aff =
	    get_enum(c, spec, "sessionAffinity", OPT, session_affinities);
	struct ynode *affc = get_map(c, spec, "sessionAffinityConfig", OPT);
	if (affc) {
		long long t = 0;
		if (get_i32(c, ynode_get(affc, "clientIP"), "timeoutSeconds",
			    OPT, &t) &&
		    (t < 1 || t > 86400)) {
			size_t am =
			    path_push(c, "sessionAffinityConfig.clientIP");
			check_range(c, "timeoutSeconds", t, 1, 86400);
			path_pop(c, am);
		}
		if (!aff || strcmp(aff, "ClientIP") != 0)
			err_forbidden(
			    c, "sessionAffinityConfig",
			    "must not be set when `sessionAffinity` is None");
	}
	const char *etp =
	    get_enum(c, spec, "externalTrafficPolicy", OPT, traffic_policies);
	if (etp && strcmp(type, "NodePort") && strcmp(type, "LoadBalancer"))
		err_invalid_str(
		    c, "externalTrafficPolicy", etp,
		    "may only be set when `type` is 'NodePort' or 'LoadBalancer'");
	get_enum(c, spec, "internalTrafficPolicy", OPT, traffic_policies);
	struct ynode *eips = check_str_list(c, spec, "externalIPs", OPT, NULL);
	for (size_t i = 0; eips && i < eips->n; i++) {
		char key[48];
		snprintf(key, sizeof(key), "externalIPs[%zu]", i);
		if (ynode_str(ynode_item(eips, i)))
			check_ip(c, key, ynode_str(ynode_item(eips, i)));
	}
	const char *lbip = get_str(c, spec, "loadBalancerIP", OPT);
	if (lbip && *lbip)
		check_ip(c, "loadBalancerIP", lbip);
	struct ynode *ranges =
	    check_str_list(c, spec, "loadBalancerSourceRanges", OPT, NULL);
	for (size_t i = 0; ranges && i < ranges->n; i++) {
		char key[64];
		snprintf(key, sizeof(key), "loadBalancerSourceRanges[%zu]", i);
		if (ynode_str(ynode_item(ranges, i)))
			check_cidr(c, key, ynode_str(ynode_item(ranges, i)));
	}
	bool b = false;
	get_bool(c, spec, "publishNotReadyAddresses", OPT, &b);
	path_pop(c, mark);
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
	if ((type && !strcmp(type, "ExternalName")) ||
	    (otype && !strcmp(otype, "ExternalName")))
		return;
	if (node_empty(ynode_get(spec, "clusterIP")) &&
	    !node_empty(ynode_get(os, "clusterIP"))) {
		ynode_set(spec, "clusterIP",
			  ynode_clone(ynode_get(os, "clusterIP")));
		if (node_empty(ynode_get(spec, "clusterIPs")) &&
		    !node_empty(ynode_get(os, "clusterIPs")))
			ynode_set(spec, "clusterIPs",
				  ynode_clone(ynode_get(os, "clusterIPs")));
	}
	struct ynode *ports = ynode_get(spec, "ports");
	struct ynode *oports = ynode_get(os, "ports");
	struct ynode *p, *op;
	for_each_map_item(ports, i, p)
	{
		if (!node_empty(ynode_get(p, "nodePort")))
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
			    !node_empty(ynode_get(op, "nodePort"))) {
				ynode_set(
				    p, "nodePort",
				    ynode_clone(ynode_get(op, "nodePort")));
				break;
			}
		}
	}
}

static void default_service(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *p;
	struct ynode *spec = default_map(obj, "spec");
	if (!spec)
		return;
	default_str(spec, "type", "ClusterIP");
	const char *type = ynode_path_str(spec, "type");
	default_str(spec, "sessionAffinity", "None");
	if (streq(ynode_path_str(spec, "sessionAffinity"), "ClientIP")) {
		struct ynode *cfg = default_map(spec, "sessionAffinityConfig");
		struct ynode *cip = cfg ? default_map(cfg, "clientIP") : NULL;
		default_int(cip, "timeoutSeconds", 10800);
	}
	struct ynode *ports = ynode_get(spec, "ports");
	for_each_map_item(ports, i, p)
	{
		default_str(p, "protocol", "TCP");
		struct ynode *port = ynode_get(p, "port");
		long long tp = -1;
		if (port &&
		    (node_empty(ynode_get(p, "targetPort")) ||
		     (scalar_int(ynode_get(p, "targetPort"), &tp) && tp == 0)))
			ynode_set(p, "targetPort", ynode_clone(port));
	}
	if (!streq(type, "ExternalName"))
		default_str(spec, "internalTrafficPolicy", "Cluster");
	if (streq(type, "NodePort") || streq(type, "LoadBalancer"))
		default_str(spec, "externalTrafficPolicy", "Cluster");
}

static void update_service(struct vctx *c, const struct ynode *obj,
			   const struct ynode *old)
{
	const char *type = ynode_path_str(obj, "spec.type");
	const char *otype = ynode_path_str(old, "spec.type");
	if (streq(type, "ExternalName") || streq(otype, "ExternalName"))
		return;
	const char *oip = ynode_path_str(old, "spec.clusterIP");
	if (oip && *oip)
		check_immutable(c, obj, old, "spec.clusterIP");
}

static void check_endpoint_address(struct vctx *c, struct ynode *a, void *arg)
{
	(void)arg;
	const char *ip = get_str(c, a, "ip", REQ);
	if (ip)
		check_ip(c, "ip", ip);
	const char *h = get_str(c, a, "hostname", OPT);
	if (h && *h)
		check_name(c, "hostname", h, names_dns1123_label);
	get_str(c, a, "nodeName", OPT);
	get_map(c, a, "targetRef", OPT);
}

static void check_endpoint_port(struct vctx *c, struct ynode *p, void *arg)
{
	size_t *count = arg;
	const char *name = get_str(c, p, "name", *count > 1 ? REQ : OPT);
	if (name && *name)
		check_name(c, "name", name, names_dns1123_label);
	long long port = 0;
	if (get_i32(c, p, "port", REQ, &port))
		check_range(c, "port", port, 1, 65535);
	get_enum(c, p, "protocol", OPT, protocols);
}

static void check_endpoint_subset(struct vctx *c, struct ynode *s, void *arg)
{
	(void)arg;
	check_each(c, s, "addresses", OPT, check_endpoint_address, NULL);
	check_each(c, s, "notReadyAddresses", OPT, check_endpoint_address,
		   NULL);
	struct ynode *ports = ynode_get(s, "ports");
	size_t count = ports && ports->type == YNODE_SEQ ? ports->n : 0;
	check_each(c, s, "ports", OPT, check_endpoint_port, &count);
}

static void check_endpoints(struct vctx *c, struct ynode *obj)
{
	check_each(c, obj, "subsets", OPT, check_endpoint_subset, NULL);
}

static void default_endpoints(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *s, *p;
	struct ynode *subsets = ynode_get(obj, "subsets");
	for_each_map_item(subsets, i, s)
	{
		struct ynode *ports = ynode_get(s, "ports");
		for_each_map_item(ports, j, p)
		    default_str(p, "protocol", "TCP");
	}
}

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
static struct ynode *check_data(struct vctx *c, const struct ynode *obj,
				const char *key, bool base64, bool secret,
				struct strset *keys, size_t *size)
{
	struct ynode *data = get_map(c, obj, key, OPT);
	for (size_t i = 0; data && i < data->n; i++) {
		const char *k = ynode_map_key(data, i)->str;
		struct ynode *v = ynode_map_val(data, i);
		cleanup_free char *entry = xasprintf("%s[%s]", key, k);
		check_name(c, entry, k, names_config_key);
		if (!strset_add(keys, k))
			err_invalid_str(
			    c, entry, k, "duplicate of key present in %s",
			    !strcmp(key, "data")
				? (secret ? "stringData" : "binaryData")
				: "data");
		if (node_unset(v))
			continue;
		if (!scalar_is_string(v)) {
			if (secret)
				err_invalid_str(c, entry, "<secret data>",
						"must be a string");
			else
				err_invalid_node(c, entry, v,
						 "must be a string");
			continue;
		}
		if (!base64) {
			*size += v->len;
			continue;
		}
		size_t bad = 0, n = 0;
		cleanup_free char *dec = util_base64_decode(v->str, &n, &bad);
		if (!dec)
			err_invalid_str(
			    c, entry, secret ? "<secret data>" : v->str,
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
	get_bool(c, obj, "immutable", OPT, &b);
	check_data(c, obj, "binaryData", true, false, &keys, &size);
	check_data(c, obj, "data", false, false, &keys, &size);
	if (size > CONFIG_DATA_MAX)
		err_too_long(c, "data", CONFIG_DATA_MAX);
}

/* An object marked immutable keeps its data and stays immutable. */
static void update_immutable_data(struct vctx *c, const struct ynode *obj,
				  const struct ynode *old)
{
	bool was = false, is = false;
	if (ynode_bool(ynode_get(old, "immutable"), &was) != 0 || !was)
		return;
	if (ynode_bool(ynode_get(obj, "immutable"), &is) != 0 || !is)
		err_forbidden(c, "immutable",
			      "field is immutable when `immutable` is set");
	static const char *const fields[] = {"data", "binaryData"};
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!tree_equal(ynode_get(obj, fields[i]),
				ynode_get(old, fields[i])))
			err_forbidden(
			    c, fields[i],
			    "field is immutable when `immutable` is set");
}

static void update_config_map(struct vctx *c, const struct ynode *obj,
			      const struct ynode *old)
{
	update_immutable_data(c, obj, old);
}

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
	get_bool(c, obj, "immutable", OPT, &b);
	const char *type = get_str(c, obj, "type", OPT);
	check_data(c, obj, "stringData", false, true, &keys, &size);
	check_data(c, obj, "data", true, true, &keys, &size);
	if (size > CONFIG_DATA_MAX)
		err_too_long(c, "data", CONFIG_DATA_MAX);
	if (!type)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(secret_keys); i++) {
		if (strcmp(type, secret_keys[i].type) != 0)
			continue;
		bool any = false;
		for (size_t k = 0; k < 2 && secret_keys[i].keys[k]; k++) {
			bool has = strset_has(&keys, secret_keys[i].keys[k]);
			any |= has;
			if (!has && !secret_keys[i].any) {
				cleanup_free char *entry = xasprintf(
				    "data[%s]", secret_keys[i].keys[k]);
				err_required(c, entry, NULL);
			}
		}
		if (secret_keys[i].any && !any)
			err_required(c, "data[username]",
				     "must specify `username` or `password`");
	}
	if (!strcmp(type, "kubernetes.io/service-account-token")) {
		struct ynode *ann = ynode_path(obj, "metadata.annotations");
		if (node_empty(
			ann ? ynode_get(ann,
					"kubernetes.io/service-account.name")
			    : NULL))
			err_required(
			    c,
			    "metadata.annotations[kubernetes.io/service-account.name]",
			    NULL);
	}
}

/* stringData is write-only: merged into data, base64-encoded, as
 * Kubernetes stores a Secret. */
static void default_secret(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_str(obj, "type", "Opaque");
	struct ynode *sd = ynode_get(obj, "stringData");
	if (sd && sd->type == YNODE_MAP && sd->n) {
		struct ynode *data = default_map(obj, "data");
		for (size_t i = 0; data && i < sd->n; i++) {
			struct ynode *v = ynode_map_val(sd, i);
			const char *s = node_unset(v) ? "" : v->str;
			size_t len = node_unset(v) ? 0 : v->len;
			cleanup_free char *enc = b64_encode(s, len);
			ynode_set(data, ynode_map_key(sd, i)->str,
				  ynode_new_str(enc));
		}
	}
	if (sd)
		ynode_del(obj, "stringData");
}

static void update_secret(struct vctx *c, const struct ynode *obj,
			  const struct ynode *old)
{
	check_immutable(c, obj, old, "type");
	update_immutable_data(c, obj, old);
}

/* ---- Namespace, Node, ServiceAccount ---------------------------------- */

static void check_namespace(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (spec) {
		size_t mark = path_push(c, "spec");
		check_str_list(c, spec, "finalizers", OPT,
			       names_qualified_name);
		path_pop(c, mark);
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
	struct ynode *labels = default_map(md, "labels");
	if (labels)
		ynode_set(labels, "kubernetes.io/metadata.name",
			  ynode_new_str(name));
}

static void check_taint(struct vctx *c, struct ynode *t, void *arg)
{
	struct strset *seen = arg;
	const char *key = get_str(c, t, "key", REQ);
	if (key)
		check_name(c, "key", key, names_qualified_name);
	const char *value = get_str(c, t, "value", OPT);
	if (value && *value)
		check_name(c, "value", value, names_label_value);
	const char *effect = get_enum(c, t, "effect", REQ, taint_effects);
	get_str(c, t, "timeAdded", OPT);
	if (key && effect) {
		char *pair = xasprintf("%s:%s", key, effect);
		cleanup_free char *shown = xstrdup(pair);
		if (!strset_add_owned(seen, pair))
			err_duplicate(c, NULL, shown);
	}
}

static void check_node(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	const char *cidr = get_str(c, spec, "podCIDR", OPT);
	if (cidr && *cidr)
		check_cidr(c, "podCIDR", cidr);
	struct ynode *cidrs = check_str_list(c, spec, "podCIDRs", OPT, NULL);
	for (size_t i = 0; cidrs && i < cidrs->n; i++) {
		char key[40];
		snprintf(key, sizeof(key), "podCIDRs[%zu]", i);
		if (ynode_str(ynode_item(cidrs, i)))
			check_cidr(c, key, ynode_str(ynode_item(cidrs, i)));
	}
	cleanup_strset struct strset seen = {0};
	check_each(c, spec, "taints", OPT, check_taint, &seen);
	bool b = false;
	get_bool(c, spec, "unschedulable", OPT, &b);
	get_str(c, spec, "providerID", OPT);
	path_pop(c, mark);
}

static void update_node(struct vctx *c, const struct ynode *obj,
			const struct ynode *old)
{
	const char *ocidr = ynode_path_str(old, "spec.podCIDR");
	if (ocidr && *ocidr)
		check_immutable(c, obj, old, "spec.podCIDR");
}

static void check_service_account(struct vctx *c, struct ynode *obj)
{
	bool b = false;
	check_each(c, obj, "secrets", OPT, check_name_ref, NULL);
	check_each(c, obj, "imagePullSecrets", OPT, check_name_ref, NULL);
	get_bool(c, obj, "automountServiceAccountToken", OPT, &b);
}

/* ---- PersistentVolume and PersistentVolumeClaim ----------------------- */

static const char *const access_modes[] = {
    "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod", NULL};
static const char *const volume_modes[] = {"Block", "Filesystem", NULL};
static const char *const reclaim_policies[] = {"Recycle", "Delete", "Retain",
					       NULL};

static void check_access_modes(struct vctx *c, const struct ynode *spec)
{
	struct ynode *modes = get_seq(c, spec, "accessModes", OPT);
	if (!modes || modes->n == 0) {
		if (!modes && !node_unset(ynode_get(spec, "accessModes")))
			return; /* wrong type, reported */
		err_required(c, "accessModes",
			     "at least 1 access mode is required");
		return;
	}
	for (size_t i = 0; i < modes->n; i++) {
		char key[40];
		snprintf(key, sizeof(key), "accessModes[%zu]", i);
		struct ynode *m = ynode_item(modes, i);
		if (!scalar_is_string(m))
			err_invalid_node(c, key, m, "must be a string");
		else if (!in_list(m->str, access_modes))
			err_unsupported(c, key, m->str, access_modes);
	}
}

static bool storage_only(const char *r)
{
	return !strcmp(r, "storage");
}

static void check_pvc_spec(struct vctx *c, const struct ynode *spec)
{
	check_access_modes(c, spec);
	struct ynode *res = get_map(c, spec, "resources", OPT);
	size_t mark = path_push(c, "resources");
	struct ynode *req =
	    check_resource_list(c, res, "requests", NULL, "for claims");
	check_resource_list(c, res, "limits", NULL, "for claims");
	path_pop(c, mark);
	struct ynode *storage = req ? ynode_get(req, "storage") : NULL;
	int64_t q = 0;
	if (!storage)
		err_required(c, "resources[storage]", NULL);
	else if (resource_of(req, "storage", &q) && q <= 0)
		err_invalid_str(c, "resources[storage]", storage->str,
				"must be greater than zero");
	get_enum(c, spec, "volumeMode", OPT, volume_modes);
	const char *sc = get_str(c, spec, "storageClassName", OPT);
	if (sc && *sc)
		check_name(c, "storageClassName", sc, names_dns1123_subdomain);
	get_str(c, spec, "volumeName", OPT);
	check_label_selector(c, spec, "selector", OPT);
	get_map(c, spec, "dataSource", OPT);
	get_map(c, spec, "dataSourceRef", OPT);
}

static void default_pvc_spec(struct ynode *spec)
{
	if (spec && spec->type == YNODE_MAP)
		default_str(spec, "volumeMode", "Filesystem");
}

static void check_pvc(struct vctx *c, struct ynode *obj)
{
	check_required_spec(c, obj, check_pvc_spec);
}

static void default_pvc(struct vctx *c, struct ynode *obj)
{
	(void)c;
	default_pvc_spec(ynode_get(obj, "spec"));
}

/* A claim's spec is fixed but for its size (which may only grow) and the
 * volume it binds to while unbound. */
static void update_pvc(struct vctx *c, const struct ynode *obj,
		       const struct ynode *old)
{
	const struct ynode *ns = ynode_get(obj, "spec");
	const struct ynode *os = ynode_get(old, "spec");
	if (!ns || !os || ns->type != YNODE_MAP || os->type != YNODE_MAP)
		return;
	int64_t nq = 0, oq = 0;
	if (resource_of(ynode_path(ns, "resources.requests"), "storage", &nq) &&
	    resource_of(ynode_path(os, "resources.requests"), "storage", &oq) &&
	    nq < oq)
		err_forbidden(c, "spec.resources.requests.storage",
			      "field can not be less than previous value");
	cleanup_ynode struct ynode *a = ynode_clone(ns);
	cleanup_ynode struct ynode *b = ynode_clone(os);
	del_if(a, "resources");
	del_if(b, "resources");
	static const char *const once[] = {"volumeName", "storageClassName"};
	for (size_t i = 0; i < ARRAY_SIZE(once); i++)
		if (node_empty(ynode_get(b, once[i]))) {
			del_if(a, once[i]);
			del_if(b, once[i]);
		}
	if (!tree_equal(a, b))
		err_forbidden(
		    c, "spec",
		    "spec is immutable after creation except resources.requests and volumeName (to bind)");
}

static void check_pv(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	struct ynode *cap = check_resource_list(
	    c, spec, "capacity", storage_only, "for persistent volumes");
	if (!cap && node_unset(ynode_get(spec, "capacity")))
		err_required(c, "capacity", NULL);
	else if (cap && !ynode_get(cap, "storage"))
		err_required(c, "capacity[storage]", NULL);
	check_access_modes(c, spec);
	const char *src = check_one_source(c, spec, pv_sources);
	if (src)
		check_volume_source(c, spec, src);
	if (src && !strcmp(src, "local") &&
	    node_unset(ynode_get(spec, "nodeAffinity")))
		err_required(c, "nodeAffinity",
			     "Local volume requires node affinity");
	get_enum(c, spec, "persistentVolumeReclaimPolicy", OPT,
		 reclaim_policies);
	get_enum(c, spec, "volumeMode", OPT, volume_modes);
	const char *sc = get_str(c, spec, "storageClassName", OPT);
	if (sc && *sc)
		check_name(c, "storageClassName", sc, names_dns1123_subdomain);
	get_map(c, spec, "claimRef", OPT);
	get_map(c, spec, "nodeAffinity", OPT);
	check_str_list(c, spec, "mountOptions", OPT, NULL);
	path_pop(c, mark);
}

static void default_pv(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = ynode_get(obj, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return;
	default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
	default_str(spec, "volumeMode", "Filesystem");
	default_hostpath(spec);
}

/* ---- ResourceQuota, LimitRange, PodDisruptionBudget ------------------- */

static const char *const quota_scopes[] = {"Terminating",
					   "NotTerminating",
					   "BestEffort",
					   "NotBestEffort",
					   "PriorityClass",
					   "CrossNamespacePodAffinity",
					   NULL};
static const char *const limit_types[] = {"Pod", "Container",
					  "PersistentVolumeClaim", NULL};
static const char *const eviction_policies[] = {"IfHealthyBudget",
						"AlwaysAllow", NULL};

static bool quota_name_ok(const char *r)
{
	return names_qualified_name(r, NULL) == 0;
}

static void check_resource_quota(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_resource_list(c, spec, "hard", quota_name_ok, "for quota");
	struct ynode *scopes = check_str_list(c, spec, "scopes", OPT, NULL);
	for (size_t i = 0; scopes && i < scopes->n; i++) {
		const char *s = ynode_str(ynode_item(scopes, i));
		char key[32];
		snprintf(key, sizeof(key), "scopes[%zu]", i);
		if (s && scalar_is_string(ynode_item(scopes, i)) &&
		    !in_list(s, quota_scopes))
			err_unsupported(c, key, s, quota_scopes);
	}
	get_map(c, spec, "scopeSelector", OPT);
	path_pop(c, mark);
}

/* The quantity of r in a LimitRange item's list, with its text. */
static bool limit_of(const struct ynode *item, const char *list, const char *r,
		     int64_t *q, const char **text)
{
	struct ynode *l = ynode_get(item, list);
	if (!l || l->type != YNODE_MAP || !resource_of(l, r, q))
		return false;
	*text = ynode_str(ynode_get(l, r));
	return true;
}

static void check_limit_item(struct vctx *c, struct ynode *it, void *arg)
{
	(void)arg;
	const char *type = get_enum(c, it, "type", REQ, limit_types);
	static const char *const lists[] = {
	    "min", "max", "default", "defaultRequest", "maxLimitRequestRatio"};
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++)
		check_resource_list(c, it, lists[i], NULL, "");
	bool container = type && !strcmp(type, "Container");
	if (type && !container) {
		if (!node_empty(ynode_get(it, "default")))
			err_forbidden(
			    c, "default",
			    "may not be specified when `type` is '%s'", type);
		if (!node_empty(ynode_get(it, "defaultRequest")))
			err_forbidden(
			    c, "defaultRequest",
			    "may not be specified when `type` is '%s'", type);
	}
	/* Compare each resource's bounds, with the defaults Kubernetes would
	 * fill in for a Container item. */
	cleanup_strset struct strset seen = {0};
	for (size_t l = 0; l < 4; l++) {
		struct ynode *list = ynode_get(it, lists[l]);
		for (size_t i = 0;
		     list && list->type == YNODE_MAP && i < list->n; i++) {
			const char *r = ynode_map_key(list, i)->str;
			if (!strset_add(&seen, r))
				continue;
			int64_t mn = 0, mx = 0, df = 0, dr = 0;
			const char *smn = NULL, *smx = NULL, *sdf = NULL,
				   *sdr = NULL;
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
			cleanup_free char *kreq =
			    xasprintf("defaultRequest[%s]", r);
			if (hmn && hmx && mn > mx)
				err_invalid_str(
				    c, kmin, smn,
				    "min value %s is greater than max value %s",
				    smn, smx);
			if (hmn && hdr && mn > dr)
				err_invalid_str(
				    c, kmin, smn,
				    "min value %s is greater than default request value %s",
				    smn, sdr);
			if (hdr && hmx && dr > mx)
				err_invalid_str(
				    c, kreq, sdr,
				    "default request value %s is greater than max value %s",
				    sdr, smx);
			if (hdf && hmx && df > mx)
				err_invalid_str(
				    c, kdef, sdf,
				    "default value %s is greater than max value %s",
				    sdf, smx);
			if (hdr && hdf && dr > df)
				err_invalid_str(
				    c, kreq, sdr,
				    "default request value %s is greater than default limit value %s",
				    sdr, sdf);
		}
	}
}

static void check_limit_range(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_each(c, spec, "limits", REQ, check_limit_item, NULL);
	path_pop(c, mark);
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
		if (!streq(ynode_path_str(it, "type"), "Container"))
			continue;
		static const char *const from[] = {"max", "default", "min"};
		static const char *const to[] = {"default", "defaultRequest",
						 "defaultRequest"};
		for (size_t s = 0; s < ARRAY_SIZE(from); s++) {
			struct ynode *src = ynode_get(it, from[s]);
			if (!src || src->type != YNODE_MAP || src->n == 0)
				continue;
			struct ynode *dst = default_map(it, to[s]);
			for (size_t k = 0; dst && k < src->n; k++)
				if (!ynode_get(dst, ynode_map_key(src, k)->str))
					ynode_set(
					    dst, ynode_map_key(src, k)->str,
					    ynode_clone(ynode_map_val(src, k)));
		}
	}
}

static void check_pdb(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	long long v = 0;
	bool pct = false;
	check_int_or_percent(c, spec, "minAvailable", 100, &v, &pct);
	check_int_or_percent(c, spec, "maxUnavailable", 100, &v, &pct);
	if (!node_unset(ynode_get(spec, "minAvailable")) &&
	    !node_unset(ynode_get(spec, "maxUnavailable")))
		err_invalid_node(
		    c, NULL, spec,
		    "minAvailable and maxUnavailable cannot be both set");
	check_label_selector(c, spec, "selector", OPT);
	get_enum(c, spec, "unhealthyPodEvictionPolicy", OPT, eviction_policies);
	path_pop(c, mark);
}

/* ---- NetworkPolicy and Ingress ---------------------------------------- */

static const char *const policy_types[] = {"Ingress", "Egress", NULL};
static const char *const path_types[] = {"Exact", "Prefix",
					 "ImplementationSpecific", NULL};

static void check_netpol_port(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	get_enum(c, p, "protocol", OPT, protocols);
	struct intstr port = {0};
	bool have = !node_unset(ynode_get(p, "port"));
	if (have) {
		check_port_ref(c, p, "port", OPT);
		have = scalar_int(ynode_get(p, "port"), &port.i);
		port.is_int = have;
	}
	long long end = 0;
	if (get_i32(c, p, "endPort", OPT, &end)) {
		if (node_unset(ynode_get(p, "port")))
			err_required(
			    c, "port",
			    "must be specified when `endPort` is specified");
		else if (!port.is_int)
			err_forbidden(
			    c, "endPort",
			    "may not be specified when `port` is non-numeric");
		else if (end < port.i)
			err_invalid_int(
			    c, "endPort", end,
			    "must be greater than or equal to `port`");
	}
}

static void check_netpol_peer(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	static const char *const kinds[] = {"podSelector", "namespaceSelector",
					    "ipBlock", NULL};
	size_t n = count_present(p, kinds, NULL);
	if (n == 0)
		err_required(c, NULL, "must specify a peer");
	else if (ynode_get(p, "ipBlock") && n > 1)
		err_forbidden(c, NULL,
			      "may not specify both ipBlock and another peer");
	check_label_selector(c, p, "podSelector", OPT);
	check_label_selector(c, p, "namespaceSelector", OPT);
	struct ynode *ib = get_map(c, p, "ipBlock", OPT);
	if (!ib)
		return;
	size_t mark = path_push(c, "ipBlock");
	const char *cidr = get_str(c, ib, "cidr", REQ);
	if (cidr)
		check_cidr(c, "cidr", cidr);
	struct ynode *ex = check_str_list(c, ib, "except", OPT, NULL);
	for (size_t i = 0; ex && i < ex->n; i++) {
		char key[32];
		snprintf(key, sizeof(key), "except[%zu]", i);
		if (ynode_str(ynode_item(ex, i)))
			check_cidr(c, key, ynode_str(ynode_item(ex, i)));
	}
	path_pop(c, mark);
}

static void check_netpol_rule(struct vctx *c, struct ynode *r, void *arg)
{
	const char *peers = arg;
	check_each(c, r, "ports", OPT, check_netpol_port, NULL);
	check_each(c, r, peers, OPT, check_netpol_peer, NULL);
}

static void check_network_policy(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	check_label_selector(c, spec, "podSelector", OPT);
	check_each(c, spec, "ingress", OPT, check_netpol_rule, "from");
	check_each(c, spec, "egress", OPT, check_netpol_rule, "to");
	struct ynode *types = check_str_list(c, spec, "policyTypes", OPT, NULL);
	for (size_t i = 0; types && i < types->n; i++) {
		const char *s = ynode_str(ynode_item(types, i));
		char key[40];
		snprintf(key, sizeof(key), "policyTypes[%zu]", i);
		if (s && scalar_is_string(ynode_item(types, i)) &&
		    !in_list(s, policy_types))
			err_unsupported(c, key, s, policy_types);
	}
	if (types && types->n > 2)
		err_invalid_node(c, "policyTypes", types,
				 "may not have more than 2 items");
	path_pop(c, mark);
}

static void default_network_policy(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = default_map(obj, "spec");
	if (!spec)
		return;
	static const char *const rules[] = {"ingress", "egress"};
	for (size_t r = 0; r < ARRAY_SIZE(rules); r++) {
		struct ynode *rule, *port;
		struct ynode *list = ynode_get(spec, rules[r]);
		for_each_map_item(list, i, rule)
		{
			struct ynode *ports = ynode_get(rule, "ports");
			for_each_map_item(ports, j, port)
			    default_str(port, "protocol", "TCP");
		}
	}
	default_map(spec, "podSelector");
	if (node_empty(ynode_get(spec, "policyTypes"))) {
		struct ynode *types = ynode_new_seq();
		ynode_append(types, ynode_new_str("Ingress"));
		if (!node_empty(ynode_get(spec, "egress")))
			ynode_append(types, ynode_new_str("Egress"));
		ynode_set(spec, "policyTypes", types);
	}
}

static bool ingress_v1(const struct vctx *c)
{
	return c->api_version &&
	       !strcmp(c->api_version, "networking.k8s.io/v1");
}

static void check_ingress_backend(struct vctx *c, const struct ynode *m,
				  const char *key, int req)
{
	struct ynode *b = get_map(c, m, key, req);
	if (!b)
		return;
	size_t mark = path_push(c, key);
	if (!ingress_v1(c)) {
		const char *svc = get_str(c, b, "serviceName", REQ);
		if (svc)
			check_name(c, "serviceName", svc, names_dns1035_label);
		check_port_ref(c, b, "servicePort", REQ);
		path_pop(c, mark);
		return;
	}
	static const char *const kinds[] = {"service", "resource", NULL};
	size_t n = count_present(b, kinds, NULL);
	if (n == 0)
		err_invalid_node(
		    c, NULL, b,
		    "one backend (`service` or `resource`) must be specified");
	else if (n > 1)
		err_invalid_node(
		    c, NULL, b,
		    "cannot set both `resource` and `service` backends");
	struct ynode *svc = get_map(c, b, "service", OPT);
	if (svc) {
		size_t sm = path_push(c, "service");
		const char *name = get_str(c, svc, "name", REQ);
		if (name)
			check_name(c, "name", name, names_dns1035_label);
		struct ynode *port = get_map(c, svc, "port", REQ);
		if (port) {
			size_t pm = path_push(c, "port");
			long long num = 0;
			bool hnum = get_i32(c, port, "number", OPT, &num);
			const char *pname = get_str(c, port, "name", OPT);
			if (hnum)
				check_range(c, "number", num, 1, 65535);
			if (pname && *pname)
				check_name(c, "name", pname, names_port_name);
			if (hnum && pname && *pname)
				err_invalid_node(
				    c, NULL, port,
				    "cannot set both port name & port number");
			else if (!hnum && (!pname || !*pname) &&
				 node_unset(ynode_get(port, "number")))
				err_required(c, NULL,
					     "port name or number is required");
			path_pop(c, pm);
		}
		path_pop(c, sm);
	}
	struct ynode *res = get_map(c, b, "resource", OPT);
	if (res) {
		size_t rm = path_push(c, "resource");
		get_str(c, res, "kind", REQ);
		get_str(c, res, "name", REQ);
		get_str(c, res, "apiGroup", OPT);
		path_pop(c, rm);
	}
	path_pop(c, mark);
}

static void check_ingress_path(struct vctx *c, struct ynode *p, void *arg)
{
	(void)arg;
	const char *path = get_str(c, p, "path", OPT);
	const char *type =
	    get_enum(c, p, "pathType", ingress_v1(c) ? REQ : OPT, path_types);
	if (type && strcmp(type, "ImplementationSpecific") != 0 &&
	    (!path || path[0] != '/'))
		err_invalid_str(c, "path", path ? path : "",
				"must be an absolute path");
	check_ingress_backend(c, p, "backend", REQ);
}

static void check_ingress_host(struct vctx *c, const char *key, const char *h)
{
	if (is_ip(h)) {
		err_invalid_str(c, key, h,
				"must be a DNS name, not an IP address");
		return;
	}
	const char *name = strncmp(h, "*.", 2) == 0 ? h + 2 : h;
	cleanup_error struct error *e = NULL;
	if (names_dns1123_subdomain(name, &e) < 0)
		err_invalid_str(c, key, h, "%s",
				e && e->msg ? e->msg : "invalid host");
}

static void check_ingress_rule(struct vctx *c, struct ynode *r, void *arg)
{
	(void)arg;
	const char *host = get_str(c, r, "host", OPT);
	if (host && *host)
		check_ingress_host(c, "host", host);
	struct ynode *http = get_map(c, r, "http", OPT);
	if (!http)
		return;
	size_t mark = path_push(c, "http");
	check_each(c, http, "paths", REQ, check_ingress_path, NULL);
	path_pop(c, mark);
}

static void check_ingress_tls(struct vctx *c, struct ynode *t, void *arg)
{
	(void)arg;
	struct ynode *hosts = check_str_list(c, t, "hosts", OPT, NULL);
	for (size_t i = 0; hosts && i < hosts->n; i++) {
		char key[32];
		snprintf(key, sizeof(key), "hosts[%zu]", i);
		const char *h = ynode_str(ynode_item(hosts, i));
		if (h && *h && scalar_is_string(ynode_item(hosts, i)))
			check_ingress_host(c, key, h);
	}
	get_str(c, t, "secretName", OPT);
}

static void check_ingress(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	size_t mark = path_push(c, "spec");
	const char *backend = ingress_v1(c) ? "defaultBackend" : "backend";
	const char *cls = get_str(c, spec, "ingressClassName", OPT);
	if (cls && *cls)
		check_name(c, "ingressClassName", cls, names_dns1123_subdomain);
	check_ingress_backend(c, spec, backend, OPT);
	struct ynode *rules =
	    check_each(c, spec, "rules", OPT, check_ingress_rule, NULL);
	check_each(c, spec, "tls", OPT, check_ingress_tls, NULL);
	if ((!rules || rules->n == 0) && node_unset(ynode_get(spec, backend)) &&
	    (!spec || !ynode_get(spec, "rules")))
		err_invalid_node(c, NULL, spec,
				 "either `%s` or `rules` must be specified",
				 backend);
	path_pop(c, mark);
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
		    default_str(p, "pathType", "ImplementationSpecific");
	}
}

/* ---- Lease and Event -------------------------------------------------- */

static const char *const event_types[] = {"Normal", "Warning", NULL};

static void check_lease(struct vctx *c, struct ynode *obj)
{
	struct ynode *spec = get_map(c, obj, "spec", OPT);
	if (!spec)
		return;
	size_t mark = path_push(c, "spec");
	get_str(c, spec, "holderIdentity", OPT);
	long long v = 0;
	if (get_i32(c, spec, "leaseDurationSeconds", OPT, &v))
		check_min(c, "leaseDurationSeconds", v, 1);
	get_i32_min(c, spec, "leaseTransitions", 0, NULL);
	get_str(c, spec, "acquireTime", OPT);
	get_str(c, spec, "renewTime", OPT);
	path_pop(c, mark);
}

static void check_event(struct vctx *c, struct ynode *obj)
{
	if (c->api_version && !strcmp(c->api_version, "v1")) {
		struct ynode *io = get_map(c, obj, "involvedObject", REQ);
		const char *ens = ynode_path_str(obj, "metadata.namespace");
		const char *ons = io ? ynode_path_str(io, "namespace") : NULL;
		if (ons && *ons && ens && *ens && strcmp(ons, ens) != 0)
			err_invalid_str(c, "involvedObject.namespace", ons,
					"does not match event.namespace");
		get_str(c, obj, "reason", OPT);
		get_str(c, obj, "message", OPT);
		get_enum(c, obj, "type", OPT, event_types);
		get_i32_min(c, obj, "count", 0, NULL);
		return;
	}
	get_str(c, obj, "eventTime", REQ);
	get_str(c, obj, "reportingController", REQ);
	const char *inst = get_str(c, obj, "reportingInstance", REQ);
	const char *action = get_str(c, obj, "action", REQ);
	const char *reason = get_str(c, obj, "reason", REQ);
	get_enum(c, obj, "type", REQ, event_types);
	const char *note = get_str(c, obj, "note", OPT);
	if (inst && strlen(inst) > 128)
		err_too_long(c, "reportingInstance", 128);
	if (action && strlen(action) > 128)
		err_too_long(c, "action", 128);
	if (reason && strlen(reason) > 128)
		err_too_long(c, "reason", 128);
	if (note && strlen(note) > 1024)
		err_too_long(c, "note", 1024);
	get_map(c, obj, "regarding", OPT);
}

/* ---- the kinds -------------------------------------------------------- */

struct kind_rules {
	const char *kind;
	name_rule name; /* metadata.name */
	void (*check)(struct vctx *c, struct ynode *obj);
	void (*defaults)(struct vctx *c, struct ynode *obj);
	/* carries what the server set and an update left out; may be NULL */
	void (*carry)(struct ynode *obj, const struct ynode *old);
	/* update rules on the defaulted new object; may be NULL */
	void (*update)(struct vctx *c, const struct ynode *obj,
		       const struct ynode *old);
};

#define SUBDOMAIN names_dns1123_subdomain

static const struct kind_rules kind_rules[] = {
    {"Namespace", names_dns1123_label, check_namespace, default_namespace, NULL,
     NULL},
    {"Node", SUBDOMAIN, check_node, NULL, NULL, update_node},
    {"PersistentVolume", SUBDOMAIN, check_pv, default_pv, NULL, NULL},
    {"Pod", SUBDOMAIN, check_pod, default_pod, NULL, update_pod},
    {"ReplicationController", SUBDOMAIN, check_replication_controller,
     default_replication_controller, NULL, NULL},
    {"Service", names_dns1035_label, check_service, default_service,
     carry_service, update_service},
    {"Endpoints", SUBDOMAIN, check_endpoints, default_endpoints, NULL, NULL},
    {"ConfigMap", SUBDOMAIN, check_config_map, NULL, NULL, update_config_map},
    {"Secret", SUBDOMAIN, check_secret, default_secret, NULL, update_secret},
    {"PersistentVolumeClaim", SUBDOMAIN, check_pvc, default_pvc, NULL,
     update_pvc},
    {"ResourceQuota", SUBDOMAIN, check_resource_quota, NULL, NULL, NULL},
    {"ServiceAccount", SUBDOMAIN, check_service_account, NULL, NULL, NULL},
    {"LimitRange", SUBDOMAIN, check_limit_range, default_limit_range, NULL,
     NULL},
    {"Event", SUBDOMAIN, check_event, NULL, NULL, NULL},
    {"ReplicaSet", SUBDOMAIN, check_replica_set, default_replica_set, NULL,
     update_selector},
    {"Deployment", SUBDOMAIN, check_deployment, default_deployment, NULL,
     update_selector},
    {"DaemonSet", SUBDOMAIN, check_daemon_set, default_daemon_set, NULL,
     update_selector},
    {"StatefulSet", SUBDOMAIN, check_stateful_set, default_stateful_set, NULL,
     update_stateful_set},
    {"Job", SUBDOMAIN, check_job, default_job, NULL, update_job},
    {"CronJob", SUBDOMAIN, check_cron_job, default_cron_job, NULL, NULL},
    {"HorizontalPodAutoscaler", SUBDOMAIN, check_hpa, default_hpa, NULL, NULL},
    {"PodDisruptionBudget", SUBDOMAIN, check_pdb, NULL, NULL, NULL},
    {"NetworkPolicy", SUBDOMAIN, check_network_policy, default_network_policy,
     NULL, NULL},
    {"Ingress", SUBDOMAIN, check_ingress, default_ingress, NULL, NULL},
    {"Lease", SUBDOMAIN, check_lease, NULL, NULL, NULL},
};

static const struct kind_rules *rules_for(const char *kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(kind_rules); i++)
		if (!strcmp(kind_rules[i].kind, kind))
			return &kind_rules[i];
	return NULL;
}

/* A null value in a map of strings is the empty string (how Kubernetes
 * decodes `key:`); written out as "" it reads back the same. */
static void default_null_strings(struct ynode *map)
{
	for (size_t i = 0; map && map->type == YNODE_MAP && i < map->n; i++)
		if (node_unset(ynode_map_val(map, i)))
			ynode_set(map, ynode_map_key(map, i)->str,
				  ynode_new_str(""));
}

static void apply_defaults(struct vctx *c, const struct kind_rules *r,
			   struct ynode *obj)
{
	struct ynode *md = ynode_get(obj, "metadata");
	default_null_strings(ynode_get(md, "labels"));
	default_null_strings(ynode_get(md, "annotations"));
	if (!strcmp(c->kind->kind, "ConfigMap") ||
	    !strcmp(c->kind->kind, "Secret")) {
		default_null_strings(ynode_get(obj, "data"));
		default_null_strings(ynode_get(obj, "binaryData"));
	}
	/* A cluster-scoped object has no namespace; Kubernetes drops one
	 * given. */
	if (!c->kind->namespaced)
		del_if(ynode_get(obj, "metadata"), "namespace");
	if (r && r->defaults)
		r->defaults(c, obj);
}

static void check_type_meta(struct vctx *c, const struct ynode *obj)
{
	const struct kind_info *k = c->kind;
	const char *kind = get_str(c, obj, "kind", REQ);
	if (kind && strcmp(kind, k->kind) != 0)
		err_invalid_str(c, "kind", kind, "must be %s in %s/", k->kind,
				k->plural);
	const char *av = get_str(c, obj, "apiVersion", REQ);
	if (av && !kinds_api_version_ok(k, av)) {
		const char *versions[ARRAY_SIZE(k->api_versions) + 1] = {0};
		for (size_t i = 0;
		     i < ARRAY_SIZE(k->api_versions) && k->api_versions[i]; i++)
			versions[i] = k->api_versions[i];
		err_unsupported(c, "apiVersion", av, versions);
	}
}

static char *join_messages(struct vctx *c, const char *kind, const char *name)
{
	struct sbuf b = {0};
	cleanup_free char *head =
	    xasprintf("%s \"%s\" is invalid: ", kind, name ? name : "");
	size_t total = c->nmsgs + c->nmore;
	cleanup_free char *tail =
	    c->nmore ? xasprintf(", and %zu more", c->nmore) : xstrdup("");
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

int validate_object(const struct kind_info *k, struct ynode *obj,
		    const struct ynode *old, struct error **err)
{
	if (!k || !obj)
		return error_set(err, EINVAL, "validate: no kind or no object");
	if (obj->type != YNODE_MAP)
		return error_set(
		    err, EINVAL,
		    "%s is invalid: the document must be a map with apiVersion, kind and metadata",
		    k->kind);
	struct vctx c = {.kind = k,
			 .api_version = ynode_path_str(obj, "apiVersion")};
	const struct kind_rules *r = rules_for(k->kind);

	check_type_meta(&c, obj);
	check_meta(&c, obj, r ? r->name : SUBDOMAIN);
	if (r && r->check)
		r->check(&c, obj);

	/* Update rules compare defaulted objects, as Kubernetes does, on a
	 * copy so that a refusal leaves obj as written. The stored object is
	 * defaulted too, in case it was stored before a default existed. */
	if (!c.nmsgs && !c.nmore && old && old->type == YNODE_MAP && r &&
	    r->update) {
		cleanup_ynode struct ynode *copy = ynode_clone(obj);
		cleanup_ynode struct ynode *was = ynode_clone(old);
		struct vctx oc = {.kind = k,
				  .api_version =
				      ynode_path_str(old, "apiVersion")};
		if (oc.api_version)
			apply_defaults(&oc, r, was);
		if (r->carry)
			r->carry(copy, was);
		apply_defaults(&c, r, copy);
		r->update(&c, copy, was);
	}

	if (c.nmsgs || c.nmore) {
		cleanup_free char *msg = join_messages(
		    &c, k->kind, ynode_path_str(obj, "metadata.name"));
		for (size_t i = 0; i < c.nmsgs; i++)
			free(c.msgs[i]);
		return error_set(err, EINVAL, "%s", msg);
	}
	if (old && old->type == YNODE_MAP && r && r->carry)
		r->carry(obj, old);
	apply_defaults(&c, r, obj);
	return 0;
}
