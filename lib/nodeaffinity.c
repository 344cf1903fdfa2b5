/* nodeaffinity.c: NodeSelector terms over the YAML tree (nodeaffinity.h). */
#include "nodeaffinity.h"

#include <stdlib.h>
#include <string.h>

static const char *nodeaffinity__str_or(const char *s, const char *def)
{
	return s ? s : def;
}

static const char *nodeaffinity__label(const struct ynode *labels, const char *key)
{
	return labels && labels->type == YNODE_MAP ? ynode_str(ynode_get(labels, key)) : NULL;
}

static bool nodeaffinity__in_values(const char *v, const struct ynode *values)
{
	for (size_t i = 0; v && values && values->type == YNODE_SEQ && i < values->n; i++) {
		const char *s = ynode_str(ynode_item(values, i));
		if (s && !strcmp(s, v))
			return true;
	}
	return false;
}

/* One requirement (matchExpressions or matchFields item) on the value v
 * (NULL: the node has no such label). */
static bool nodeaffinity__requirement(const struct ynode *req, const char *v)
{
	const char *op = nodeaffinity__str_or(ynode_path_str(req, "operator"), "");
	const struct ynode *values = ynode_get(req, "values");
	if (!strcmp(op, "In"))
		return nodeaffinity__in_values(v, values);
	if (!strcmp(op, "NotIn"))
		return !nodeaffinity__in_values(v, values);
	if (!strcmp(op, "Exists"))
		return v != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return v == NULL;
	if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
		const char *w = values && values->n == 1 ? ynode_str(ynode_item(values, 0)) : NULL;
		char *e1 = NULL, *e2 = NULL;
		if (!v || !w)
			return false;
		long long a = strtoll(v, &e1, 10), b = strtoll(w, &e2, 10);
		if (*e1 || *e2)
			return false;
		return !strcmp(op, "Gt") ? a > b : a < b;
	}
	return false;
}

/* A term: every requirement holds; an empty term matches nothing. */
static bool nodeaffinity__term(const struct ynode *term, const char *name,
			       const struct ynode *labels)
{
	const struct ynode *exprs = ynode_get(term, "matchExpressions");
	const struct ynode *fields = ynode_get(term, "matchFields");
	size_t n = 0;
	for (size_t i = 0; exprs && exprs->type == YNODE_SEQ && i < exprs->n; i++, n++) {
		const struct ynode *r = ynode_item(exprs, i);
		if (!nodeaffinity__requirement(
			r, nodeaffinity__label(labels, ynode_path_str(r, "key"))))
			return false;
	}
	for (size_t i = 0; fields && fields->type == YNODE_SEQ && i < fields->n; i++, n++) {
		const struct ynode *r = ynode_item(fields, i);
		const char *key = ynode_path_str(r, "key");
		if (!nodeaffinity__requirement(r,
					       key && !strcmp(key, "metadata.name") ? name : NULL))
			return false;
	}
	return n > 0;
}

bool nodeaffinity_allows(const struct ynode *required, const char *node_name,
			 const struct ynode *labels)
{
	if (!required || ynode_is_null(required))
		return true;
	const struct ynode *terms = ynode_get(required, "nodeSelectorTerms");
	for (size_t i = 0; terms && terms->type == YNODE_SEQ && i < terms->n; i++)
		if (nodeaffinity__term(ynode_item(terms, i), node_name, labels))
			return true;
	return false;
}
