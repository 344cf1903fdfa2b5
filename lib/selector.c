/* selector.c: label selectors (see selector.h for what matches what).
 *
 * All three spellings become one list of requirements, each a key, an
 * operator and a sorted set of values, so that matching and printing never
 * care where a selector came from. A selector owns copies of its strings:
 * it outlives the YAML tree it was read from. */
#include "selector.h"
#include "names.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum selector__op {
	SELECTOR__EQ,	      /* k=v: present with that value */
	SELECTOR__NE,	      /* k!=v: absent, or another value */
	SELECTOR__IN,	      /* k in (a,b): present with one of them */
	SELECTOR__NOT_IN,     /* k notin (a,b): absent, or none of them */
	SELECTOR__EXISTS,     /* k */
	SELECTOR__NOT_EXISTS, /* !k */
};

struct selector__req {
	char *key;
	enum selector__op op;
	size_t nvalues;
	char **values; /* sorted by strcmp, no duplicates */
};

struct selector {
	bool nothing; /* matches no object, whatever the requirements */
	size_t n, cap;
	struct selector__req *reqs; /* sorted by key once parsed */
};

static struct selector *selector__new(bool nothing)
{
	struct selector *sel = xcalloc(1, sizeof(*sel));
	sel->nothing = nothing;
	return sel;
}

void selector_free(struct selector *sel)
{
	if (!sel)
		return;
	for (size_t i = 0; i < sel->n; i++) {
		struct selector__req *r = &sel->reqs[i];
		for (size_t j = 0; j < r->nvalues; j++)
			free(r->values[j]);
		free(r->values);
		free(r->key);
	}
	free(sel->reqs);
	free(sel);
}

void selector_freep(struct selector **sel)
{
	selector_free(*sel);
	*sel = NULL;
}

static struct selector__req *selector__add(struct selector *sel, const char *key,
					   enum selector__op op)
{
	if (sel->n == sel->cap) {
		sel->cap = sel->cap ? 2 * sel->cap : 4;
		sel->reqs = xrealloc(sel->reqs, sel->cap * sizeof(*sel->reqs));
	}
	struct selector__req *r = &sel->reqs[sel->n++];
	r->key = xstrdup(key);
	r->op = op;
	r->nvalues = 0;
	r->values = NULL;
	return r;
}

/* Inserts value into r's sorted set (a set: "in (a,a)" is "in (a)"). */
static void selector__add_value(struct selector__req *r, const char *value)
{
	size_t lo = 0, hi = r->nvalues;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->values[mid], value);
		if (c == 0)
			return;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	r->values = xrealloc(r->values, (r->nvalues + 1) * sizeof(*r->values));
	memmove(r->values + lo + 1, r->values + lo, (r->nvalues - lo) * sizeof(*r->values));
	r->values[lo] = xstrdup(value);
	r->nvalues++;
}

static bool selector__has_value(const struct selector__req *r, const char *v)
{
	size_t lo = 0, hi = r->nvalues;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->values[mid], v);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Stable, so that requirements on one key keep the order they were
 * written in; selectors are small, insertion sort is enough. */
static void selector__sort(struct selector *sel)
{
	for (size_t i = 1; i < sel->n; i++) {
		struct selector__req r = sel->reqs[i];
		size_t j = i;
		while (j > 0 && strcmp(sel->reqs[j - 1].key, r.key) > 0) {
			sel->reqs[j] = sel->reqs[j - 1];
			j--;
		}
		sel->reqs[j] = r;
	}
}

/* The text of a label value node: null (`k:` or `k: ~`) reads as "", as
 * it does when Kubernetes decodes it into a string; other scalars are
 * taken as written. Returns NULL for a sequence or a mapping. */
static const char *selector__value_str(const struct ynode *v)
{
	if (ynode_is_null(v))
		return "";
	return ynode_str(v);
}

/* Checks that map is a mapping of valid label keys to valid label values
 * and adds k=v for each pair. path names the map in messages ("" for the
 * map itself, as Kubernetes' ValidateLabels names the field, not the
 * key). */
static int selector__add_map(struct selector *sel, const struct ynode *map, const char *path,
			     struct error **err)
{
	const char *sep = *path ? ": " : "";
	if (map->type != YNODE_MAP)
		return error_set(err, EINVAL, "%s%smust be a map of label keys to values", path,
				 sep);
	for (size_t i = 0; i < map->n; i++) {
		const char *key = ynode_str(ynode_map_key(map, i));
		if (!key)
			return error_set(err, EINVAL, "%s%slabel keys must be strings", path, sep);
		const char *value = selector__value_str(ynode_map_val(map, i));
		if (!value)
			return error_set(err, EINVAL,
					 "%s%sInvalid value: the value of \"%s\" "
					 "must be a string",
					 path, sep, key);
		struct error *why = NULL;
		const char *bad = key;
		if (names_qualified_name(key, &why) == 0) {
			bad = value;
			names_label_value(value, &why);
		}
		if (why) {
			int rc = error_set(err, why->status, "%s%sInvalid value: \"%s\": %s", path,
					   sep, bad, why->msg);
			error_free(why);
			return rc;
		}
		selector__add_value(selector__add(sel, key, SELECTOR__EQ), value);
	}
	return 0;
}

int selector_parse_map(const struct ynode *map, struct selector **out, struct error **err)
{
	if (ynode_is_null(map) || (map->type == YNODE_MAP && map->n == 0)) {
		*out = selector__new(true);
		return 0;
	}
	cleanup_selector struct selector *sel = selector__new(false);
	int rc = selector__add_map(sel, map, "", err);
	if (rc < 0)
		return rc;
	selector__sort(sel);
	*out = steal_pointer(&sel);
	return 0;
}

static const struct {
	const char *name;
	enum selector__op op;
} selector__ops[] = {
    {"In", SELECTOR__IN},
    {"NotIn", SELECTOR__NOT_IN},
    {"Exists", SELECTOR__EXISTS},
    {"DoesNotExist", SELECTOR__NOT_EXISTS},
};

/* One matchExpressions item; p is its path ("matchExpressions[1]"). */
static int selector__add_expression(struct selector *sel, const struct ynode *item, const char *p,
				    struct error **err)
{
	if (item->type != YNODE_MAP)
		return error_set(err, EINVAL,
				 "%s: must be a mapping with key, operator "
				 "and values",
				 p);
	for (size_t i = 0; i < item->n; i++) {
		const char *field = ynode_str(ynode_map_key(item, i));
		if (!field || (strcmp(field, "key") != 0 && strcmp(field, "operator") != 0 &&
			       strcmp(field, "values") != 0))
			return error_set(err, EINVAL, "%s: unknown field \"%s\"", p,
					 field ? field : "?");
	}

	const struct ynode *opn = ynode_get(item, "operator");
	if (ynode_is_null(opn))
		return error_set(err, EINVAL, "%s.operator: Required value", p);
	const char *opname = ynode_str(opn);
	if (!opname)
		return error_set(err, EINVAL, "%s.operator: must be a string", p);
	int op = -1;
	for (size_t i = 0; i < ARRAY_SIZE(selector__ops); i++) {
		if (strcmp(opname, selector__ops[i].name) == 0)
			op = (int)selector__ops[i].op;
	}
	if (op < 0)
		return error_set(err, EINVAL,
				 "%s.operator: Unsupported value: \"%s\": "
				 "supported values: \"DoesNotExist\", "
				 "\"Exists\", \"In\", \"NotIn\"",
				 p, opname);

	const struct ynode *values = ynode_get(item, "values");
	if (ynode_is_null(values))
		values = NULL;
	if (values && values->type != YNODE_SEQ)
		return error_set(err, EINVAL, "%s.values: must be a list of strings", p);
	size_t nvalues = values ? values->n : 0;
	bool set_op = op == SELECTOR__IN || op == SELECTOR__NOT_IN;
	if (set_op && nvalues == 0)
		return error_set(err, EINVAL,
				 "%s.values: Required value: must be specified "
				 "when `operator` is 'In' or 'NotIn'",
				 p);
	if (!set_op && nvalues > 0)
		return error_set(err, EINVAL,
				 "%s.values: Forbidden: may not be specified "
				 "when `operator` is 'Exists' or "
				 "'DoesNotExist'",
				 p);

	const struct ynode *keyn = ynode_get(item, "key");
	if (ynode_is_null(keyn))
		return error_set(err, EINVAL, "%s.key: Required value", p);
	const char *key = ynode_str(keyn);
	if (!key)
		return error_set(err, EINVAL, "%s.key: must be a string", p);
	struct error *why = NULL;
	if (names_qualified_name(key, &why) < 0) {
		int rc = error_set(err, why->status, "%s.key: Invalid value: \"%s\": %s", p, key,
				   why->msg);
		error_free(why);
		return rc;
	}
	for (size_t j = 0; j < nvalues; j++) {
		const char *v = selector__value_str(ynode_item(values, j));
		if (!v)
			return error_set(err, EINVAL, "%s.values[%zu]: must be a string", p, j);
		if (names_label_value(v, &why) < 0) {
			int rc = error_set(err, why->status,
					   "%s.values[%zu]: Invalid value: "
					   "\"%s\": %s",
					   p, j, v, why->msg);
			error_free(why);
			return rc;
		}
	}

	struct selector__req *r = selector__add(sel, key, (enum selector__op)op);
	for (size_t j = 0; j < nvalues; j++)
		selector__add_value(r, selector__value_str(ynode_item(values, j)));
	return 0;
}

int selector_parse_labelselector(const struct ynode *node, struct selector **out,
				 struct error **err)
{
	if (ynode_is_null(node)) {
		*out = selector__new(true);
		return 0;
	}
	if (node->type != YNODE_MAP)
		return error_set(err, EINVAL,
				 "must be a mapping with matchLabels and/or "
				 "matchExpressions");
	for (size_t i = 0; i < node->n; i++) {
		const char *field = ynode_str(ynode_map_key(node, i));
		if (!field ||
		    (strcmp(field, "matchLabels") != 0 && strcmp(field, "matchExpressions") != 0))
			return error_set(err, EINVAL, "unknown field \"%s\"", field ? field : "?");
	}

	cleanup_selector struct selector *sel = selector__new(false);
	const struct ynode *labels = ynode_get(node, "matchLabels");
	if (!ynode_is_null(labels)) {
		int rc = selector__add_map(sel, labels, "matchLabels", err);
		if (rc < 0)
			return rc;
	}
	const struct ynode *exprs = ynode_get(node, "matchExpressions");
	if (!ynode_is_null(exprs)) {
		if (exprs->type != YNODE_SEQ)
			return error_set(err, EINVAL, "matchExpressions: must be a list");
		for (size_t i = 0; i < exprs->n; i++) {
			char path[64];
			snprintf(path, sizeof(path), "matchExpressions[%zu]", i);
			int rc = selector__add_expression(sel, ynode_item(exprs, i), path, err);
			if (rc < 0)
				return rc;
		}
	}
	selector__sort(sel);
	*out = steal_pointer(&sel);
	return 0;
}

/* ---- the string form ---- */

struct selector__lexer {
	const char *s; /* the whole selector, for messages */
	const char *p; /* the next character */
	struct error **err;
};

static void selector__skip_space(struct selector__lexer *lx)
{
	while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r')
		lx->p++;
}

/* Everything up to whitespace or an operator character is one word, as in
 * Kubernetes' lexer; the names.h checks then say what is wrong with it. */
static char *selector__word(struct selector__lexer *lx)
{
	const char *start = lx->p;
	while (*lx->p && !strchr(" \t\n\r!=,()<>", *lx->p))
		lx->p++;
	return xstrndup(start, (size_t)(lx->p - start));
}

/* "found X at column N": what the lexer sees instead of what it wants. */
static int selector__unexpected(struct selector__lexer *lx, const char *expected)
{
	size_t col = (size_t)(lx->p - lx->s) + 1;
	if (!*lx->p)
		return error_set(lx->err, EINVAL,
				 "label selector \"%s\": found end of string, "
				 "expected %s",
				 lx->s, expected);
	return error_set(lx->err, EINVAL,
			 "label selector \"%s\": found '%c' at column %zu, "
			 "expected %s",
			 lx->s, *lx->p, col, expected);
}

static int selector__check_key(struct selector__lexer *lx, const char *key)
{
	struct error *why = NULL;
	if (names_qualified_name(key, &why) == 0)
		return 0;
	int rc = error_set(lx->err, why->status,
			   "label selector \"%s\": key: Invalid value: "
			   "\"%s\": %s",
			   lx->s, key, why->msg);
	error_free(why);
	return rc;
}

static int selector__check_value(struct selector__lexer *lx, const char *value, size_t i)
{
	struct error *why = NULL;
	if (names_label_value(value, &why) == 0)
		return 0;
	int rc = error_set(lx->err, why->status,
			   "label selector \"%s\": values[%zu]: Invalid "
			   "value: \"%s\": %s",
			   lx->s, i, value, why->msg);
	error_free(why);
	return rc;
}

/* "(a, b, c)" after in/notin. An empty item is the empty value, as in
 * Kubernetes, where "()" means the one value "". */
static int selector__value_list(struct selector__lexer *lx, struct selector__req *r)
{
	selector__skip_space(lx);
	if (*lx->p != '(')
		return selector__unexpected(lx, "'('");
	lx->p++;
	for (size_t i = 0;; i++) {
		selector__skip_space(lx);
		cleanup_free char *v = selector__word(lx);
		int rc = selector__check_value(lx, v, i);
		if (rc < 0)
			return rc;
		selector__add_value(r, v);
		selector__skip_space(lx);
		if (*lx->p == ')') {
			lx->p++;
			return 0;
		}
		if (*lx->p != ',')
			return selector__unexpected(lx, "',' or ')'");
		lx->p++;
	}
}

static int selector__requirement(struct selector__lexer *lx, struct selector *sel)
{
	selector__skip_space(lx);
	if (*lx->p == '!') {
		lx->p++;
		selector__skip_space(lx);
		cleanup_free char *key = selector__word(lx);
		if (!*key)
			return selector__unexpected(lx, "a label key after '!'");
		int rc = selector__check_key(lx, key);
		if (rc < 0)
			return rc;
		selector__add(sel, key, SELECTOR__NOT_EXISTS);
		return 0;
	}

	cleanup_free char *key = selector__word(lx);
	if (!*key)
		return selector__unexpected(lx, "a label key or '!'");
	int rc = selector__check_key(lx, key);
	if (rc < 0)
		return rc;
	selector__skip_space(lx);

	enum selector__op op;
	if (*lx->p == '\0' || *lx->p == ',') {
		selector__add(sel, key, SELECTOR__EXISTS);
		return 0;
	} else if (lx->p[0] == '=' && lx->p[1] == '=') {
		op = SELECTOR__EQ;
		lx->p += 2;
	} else if (lx->p[0] == '=') {
		op = SELECTOR__EQ;
		lx->p += 1;
	} else if (lx->p[0] == '!' && lx->p[1] == '=') {
		op = SELECTOR__NE;
		lx->p += 2;
	} else {
		const char *at = lx->p;
		cleanup_free char *word = selector__word(lx);
		if (strcmp(word, "in") == 0 || strcmp(word, "notin") == 0) {
			struct selector__req *r = selector__add(
			    sel, key, word[0] == 'i' ? SELECTOR__IN : SELECTOR__NOT_IN);
			return selector__value_list(lx, r);
		}
		lx->p = at;
		return selector__unexpected(lx, "'=', '==', '!=', 'in', 'notin', ',' or end of "
						"string");
	}

	selector__skip_space(lx);
	cleanup_free char *value = selector__word(lx);
	rc = selector__check_value(lx, value, 0);
	if (rc < 0)
		return rc;
	selector__add_value(selector__add(sel, key, op), value);
	return 0;
}

int selector_parse_string(const char *s, struct selector **out, struct error **err)
{
	struct selector__lexer lx = {.s = s, .p = s, .err = err};
	cleanup_selector struct selector *sel = selector__new(false);
	selector__skip_space(&lx);
	while (*lx.p) {
		int rc = selector__requirement(&lx, sel);
		if (rc < 0)
			return rc;
		selector__skip_space(&lx);
		if (!*lx.p)
			break;
		if (*lx.p != ',')
			return selector__unexpected(&lx, "',' or end of string");
		lx.p++;
		selector__skip_space(&lx);
		/* "a=b," is a mistake, not a selector with an empty term. */
		if (!*lx.p)
			return selector__unexpected(&lx, "a requirement after ','");
	}
	selector__sort(sel);
	*out = steal_pointer(&sel);
	return 0;
}

/* ---- matching and printing ---- */

static bool selector__req_matches(const struct selector__req *r, const struct ynode *labels)
{
	const struct ynode *v = NULL;
	if (labels && labels->type == YNODE_MAP)
		v = ynode_get(labels, r->key);
	/* A label whose value is a list or a map is present but equals no
	 * string; validation keeps such labels out of the store anyway. */
	const char *value = v ? selector__value_str(v) : NULL;
	switch (r->op) {
	case SELECTOR__EXISTS:
		return v != NULL;
	case SELECTOR__NOT_EXISTS:
		return v == NULL;
	case SELECTOR__EQ:
	case SELECTOR__IN:
		return value && selector__has_value(r, value);
	case SELECTOR__NE:
	case SELECTOR__NOT_IN:
		return !value || !selector__has_value(r, value);
	}
	return false;
}

bool selector_matches(const struct selector *sel, const struct ynode *labels)
{
	if (!sel || sel->nothing)
		return false;
	for (size_t i = 0; i < sel->n; i++) {
		if (!selector__req_matches(&sel->reqs[i], labels))
			return false;
	}
	return true;
}

bool selector_is_empty(const struct selector *sel)
{
	return sel && !sel->nothing && sel->n == 0;
}

bool selector_is_nothing(const struct selector *sel)
{
	return !sel || sel->nothing;
}

char *selector_format(const struct selector *sel)
{
	if (selector_is_nothing(sel))
		return xstrdup("<none>");
	size_t len = 1;
	for (size_t i = 0; i < sel->n; i++) {
		const struct selector__req *r = &sel->reqs[i];
		len += strlen(r->key) + sizeof(" notin ()");
		for (size_t j = 0; j < r->nvalues; j++)
			len += strlen(r->values[j]) + 1;
	}
	char *buf = xmalloc(len);
	char *p = buf;
	for (size_t i = 0; i < sel->n; i++) {
		const struct selector__req *r = &sel->reqs[i];
		if (i > 0)
			*p++ = ',';
		if (r->op == SELECTOR__NOT_EXISTS)
			*p++ = '!';
		p = stpcpy(p, r->key);
		switch (r->op) {
		case SELECTOR__EQ:
			p = stpcpy(stpcpy(p, "="), r->values[0]);
			break;
		case SELECTOR__NE:
			p = stpcpy(stpcpy(p, "!="), r->values[0]);
			break;
		case SELECTOR__IN:
		case SELECTOR__NOT_IN:
			p = stpcpy(p, r->op == SELECTOR__IN ? " in (" : " notin (");
			for (size_t j = 0; j < r->nvalues; j++) {
				if (j > 0)
					*p++ = ',';
				p = stpcpy(p, r->values[j]);
			}
			*p++ = ')';
			break;
		case SELECTOR__EXISTS:
		case SELECTOR__NOT_EXISTS:
			break;
		}
	}
	*p = '\0';
	return buf;
}
