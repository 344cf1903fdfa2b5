/* ynode.c: YAML text <-> struct ynode trees, over libyaml's event API.
 *
 * Parsing expands aliases by copying (so a tree never shares nodes) and
 * charges every node and every byte of scalar text to the stream's budgets
 * before it is made: an alias bomb stops at YAML_MAX_NODES or YAML_MAX_BYTES
 * with an error instead of exhausting memory, however few bytes it is
 * written in. This file never interprets Kubernetes semantics; that is
 * fs/validate.c's job. */
#include "ynode.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- nodes ---- */

static struct ynode *ynode__new(enum ynode_type type)
{
	struct ynode *n = xcalloc(1, sizeof(*n));
	n->type = type;
	return n;
}

struct ynode *ynode_new_map(void)
{
	return ynode__new(YNODE_MAP);
}

struct ynode *ynode_new_seq(void)
{
	return ynode__new(YNODE_SEQ);
}

/* A scalar and its text in one allocation (str points just past the
 * node; ynode_free frees both at once): a write's trees are mostly
 * scalars, and this halves their allocations and frees. The text stops
 * at its first NUL, as a string copy would. */
static struct ynode *ynode__new_scalar(const char *s, size_t len)
{
	len = strnlen(s, len);
	struct ynode *n = xmalloc(sizeof(*n) + len + 1);
	memset(n, 0, sizeof(*n));
	n->type = YNODE_SCALAR;
	n->str = (char *)(n + 1);
	memcpy(n->str, s, len);
	n->str[len] = '\0';
	n->len = len;
	return n;
}

struct ynode *ynode_new_strn(const char *s, size_t len)
{
	struct ynode *n = ynode__new_scalar(s, len);
	n->quoted = true;
	return n;
}

struct ynode *ynode_new_str(const char *s)
{
	return ynode_new_strn(s, strlen(s));
}

struct ynode *ynode_new_plain(const char *s)
{
	struct ynode *n = ynode_new_str(s);
	n->quoted = false;
	return n;
}

struct ynode *ynode_new_int(long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	return ynode_new_plain(buf);
}

struct ynode *ynode_new_bool(bool v)
{
	return ynode_new_plain(v ? "true" : "false");
}

static size_t ynode__slots(const struct ynode *n)
{
	return n->type == YNODE_MAP ? 2 * n->n : n->n;
}

struct ynode *ynode_clone(const struct ynode *n)
{
	if (!n)
		return NULL;
	struct ynode *c =
	    n->type == YNODE_SCALAR ? ynode__new_scalar(n->str, n->len) : ynode__new(n->type);
	c->quoted = n->quoted;
	c->line = n->line;
	if (n->type == YNODE_SCALAR)
		return c;
	size_t slots = ynode__slots(n);
	c->n = n->n;
	c->cap = slots;
	c->items = xmalloc(sizeof(*c->items) * (slots ? slots : 1));
	for (size_t i = 0; i < slots; i++)
		c->items[i] = ynode_clone(n->items[i]);
	return c;
}

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	size_t slots = n->type == YNODE_SCALAR ? 0 : ynode__slots(n);
	for (size_t i = 0; i < slots; i++)
		ynode_free(n->items[i]);
	free(n->items);
	free(n); /* and a scalar's text (ynode__new_scalar) */
}

void ynode_freep(struct ynode **n)
{
	ynode_free(*n);
	*n = NULL;
}

bool ynode_equal(const struct ynode *a, const struct ynode *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->type != b->type || a->n != b->n)
		return false;
	if (a->type == YNODE_SCALAR)
		return (a->len == b->len && memcmp(a->str, b->str, a->len) == 0) ||
		       /* `a:` and `a: null` (what yaml_emit writes for it) */
		       (ynode_is_null(a) && ynode_is_null(b));
	if (a->type == YNODE_SEQ) {
		for (size_t i = 0; i < a->n; i++)
			if (!ynode_equal(a->items[i], b->items[i]))
				return false;
		return true;
	}
	/* Mappings are equal regardless of key order. */
	for (size_t i = 0; i < a->n; i++) {
		const struct ynode *bv = ynode_get(b, ynode_map_key(a, i)->str);
		if (!bv || !ynode_equal(ynode_map_val(a, i), bv))
			return false;
	}
	return true;
}

struct ynode__pair {
	struct ynode *key, *val;
};

static int ynode__pair_cmp(const void *a, const void *b)
{
	const struct ynode__pair *x = a, *y = b;
	return strcmp(x->key->str, y->key->str);
}

void ynode_sort(struct ynode *n)
{
	if (!n || n->type == YNODE_SCALAR)
		return;
	if (n->type == YNODE_SEQ) {
		for (size_t i = 0; i < n->n; i++)
			ynode_sort(n->items[i]);
		return;
	}
	/* items is key, value, key, value...: sort it as pairs. (An empty
	 * mapping may have no items array, which qsort must not get.) */
	if (n->n > 1)
		qsort(n->items, n->n, sizeof(struct ynode__pair), ynode__pair_cmp);
	for (size_t i = 0; i < n->n; i++)
		ynode_sort(ynode_map_val(n, i));
}

static void ynode__grow(struct ynode *n, size_t slots)
{
	if (slots <= n->cap)
		return;
	size_t cap = n->cap ? n->cap * 2 : 8;
	while (cap < slots)
		cap *= 2;
	n->items = xrealloc(n->items, sizeof(*n->items) * cap);
	n->cap = cap;
}

static ssize_t ynode__find(const struct ynode *map, const char *key)
{
	if (!map || map->type != YNODE_MAP)
		return -1;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(ynode_map_key(map, i)->str, key) == 0)
			return (ssize_t)i;
	return -1;
}

struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	ssize_t i = ynode__find(map, key);
	return i < 0 ? NULL : ynode_map_val(map, i);
}

void ynode_set(struct ynode *map, const char *key, struct ynode *val)
{
	ssize_t i = ynode__find(map, key);
	if (i >= 0) {
		ynode_free(ynode_map_val(map, i));
		ynode_map_val(map, i) = val;
		return;
	}
	ynode__grow(map, 2 * map->n + 2);
	map->items[2 * map->n] = ynode_new_str(key);
	map->items[2 * map->n + 1] = val;
	map->n++;
}

struct ynode *ynode_take(struct ynode *map, const char *key)
{
	ssize_t i = ynode__find(map, key);
	if (i < 0)
		return NULL;
	struct ynode *val = ynode_map_val(map, i);
	ynode_free(ynode_map_key(map, i));
	memmove(&map->items[2 * i], &map->items[2 * i + 2],
		sizeof(*map->items) * 2 * (map->n - (size_t)i - 1));
	map->n--;
	return val;
}

void ynode_del(struct ynode *map, const char *key)
{
	ynode_free(ynode_take(map, key));
}

struct ynode *ynode_get_map(struct ynode *map, const char *key)
{
	struct ynode *v = ynode_get(map, key);
	if (v && v->type == YNODE_MAP)
		return v;
	v = ynode_new_map();
	ynode_set(map, key, v);
	return v;
}

void ynode_append(struct ynode *seq, struct ynode *item)
{
	ynode__grow(seq, seq->n + 1);
	seq->items[seq->n++] = item;
}

size_t ynode_seq_remove_str(struct ynode *seq, const char *s)
{
	size_t removed = 0, j = 0;
	if (!seq || seq->type != YNODE_SEQ)
		return 0;
	for (size_t i = 0; i < seq->n; i++) {
		const char *t = ynode_str(seq->items[i]);
		if (t && !strcmp(t, s)) {
			ynode_free(seq->items[i]);
			removed++;
		} else {
			seq->items[j++] = seq->items[i];
		}
	}
	seq->n = j;
	return removed;
}

struct ynode *ynode_path(const struct ynode *root, const char *path)
{
	const struct ynode *cur = root;
	const char *p = path;
	char key[256];
	while (cur && *p) {
		if (*p == '[') {
			char *end;
			unsigned long idx = strtoul(p + 1, &end, 10);
			if (*end != ']' || cur->type != YNODE_SEQ || idx >= cur->n)
				return NULL;
			cur = cur->items[idx];
			p = end + 1;
			if (*p == '.')
				p++;
			continue;
		}
		size_t k = strcspn(p, ".[");
		if (k >= sizeof(key))
			return NULL;
		memcpy(key, p, k);
		key[k] = '\0';
		cur = ynode_get(cur, key);
		p += k;
		if (*p == '.')
			p++;
	}
	return (struct ynode *)cur;
}

const char *ynode_str(const struct ynode *n)
{
	return n && n->type == YNODE_SCALAR ? n->str : NULL;
}

const char *ynode_path_str(const struct ynode *root, const char *path)
{
	return ynode_str(ynode_path(root, path));
}

int ynode_int(const struct ynode *n, long long *out)
{
	if (!n || n->type != YNODE_SCALAR || n->quoted || n->len == 0)
		return -1;
	const char *s = n->str;
	int base = 10;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	else if (s[0] == '0' && s[1] == 'o')
		base = 8, s += 2;
	if (!*s)
		return -1;
	/* strtoull stops at the '_' of 1_000: hand it the digits alone. */
	char digits[72];
	size_t nd = 0;
	for (const char *c = s; *c; c++) {
		bool ok = base == 16 ? strchr("0123456789abcdefABCDEF", *c) != NULL
				     : (*c >= '0' && *c < '0' + base);
		if (!ok && !(*c == '_' && base == 10 && c != s))
			return -1;
		if (ok && nd + 1 >= sizeof(digits))
			return -1;
		if (ok)
			digits[nd++] = *c;
	}
	digits[nd] = '\0';
	errno = 0;
	char *end;
	unsigned long long v = strtoull(digits, &end, base);
	if (errno || *end || v > (unsigned long long)LLONG_MAX + (neg ? 1 : 0))
		return -1;
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

int ynode_bool(const struct ynode *n, bool *out)
{
	static const char *yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
				    "on",   "On",   "ON",   "y",   "Y"};
	static const char *no[] = {"false", "False", "FALSE", "no", "No", "NO",
				   "off",   "Off",   "OFF",   "n",  "N"};
	if (!n || n->type != YNODE_SCALAR || n->quoted)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcmp(n->str, yes[i]) == 0)
			return *out = true, 0;
		if (strcmp(n->str, no[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

bool ynode_is_null(const struct ynode *n)
{
	if (!n)
		return true;
	if (n->type != YNODE_SCALAR || n->quoted)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

/* ---- parsing ---- */

struct yaml__anchor {
	char *name;
	struct ynode *node; /* points into the document being built */
	bool open;	    /* still being filled: an alias to it recurses */
};

struct yaml__parser {
	yaml_parser_t p;
	struct yaml__anchor *anchors;
	size_t nanchors;
	size_t budget; /* nodes left for this stream */
	size_t bytes;  /* bytes of scalar text left for this stream */
	int depth;
	/* Nodes dropped from the tree (merge values, `<<` keys) that anchors
	 * may still point into: freed with the anchors. */
	struct ynode **dropped;
	size_t ndropped;
};

/* What a copy of n costs: its nodes and the bytes of its scalars. */
static void ynode__measure(const struct ynode *n, size_t *nodes, size_t *bytes)
{
	(*nodes)++;
	if (n->type == YNODE_SCALAR) {
		*bytes += n->len;
		return;
	}
	for (size_t i = 0; i < ynode__slots(n); i++)
		ynode__measure(n->items[i], nodes, bytes);
}

/* Levels of sequences and mappings in n (0 for a scalar). */
static int ynode__height(const struct ynode *n)
{
	int h = 0;
	if (n->type == YNODE_SCALAR)
		return 0;
	for (size_t i = 0; i < ynode__slots(n); i++) {
		int c = ynode__height(n->items[i]);
		if (c > h)
			h = c;
	}
	return h + 1;
}

static void yaml__anchors_reset(struct yaml__parser *yp)
{
	for (size_t i = 0; i < yp->nanchors; i++)
		free(yp->anchors[i].name);
	free(yp->anchors);
	yp->anchors = NULL;
	yp->nanchors = 0;
	for (size_t i = 0; i < yp->ndropped; i++)
		ynode_free(yp->dropped[i]);
	free(yp->dropped);
	yp->dropped = NULL;
	yp->ndropped = 0;
}

/* Frees n once no alias can refer to it any more (at the document's end). */
static void yaml__drop(struct yaml__parser *yp, struct ynode *n)
{
	yp->dropped = xrealloc(yp->dropped, sizeof(*yp->dropped) * (yp->ndropped + 1));
	yp->dropped[yp->ndropped++] = n;
}

static void yaml__anchor_add(struct yaml__parser *yp, const yaml_char_t *name, struct ynode *node)
{
	if (!name)
		return;
	yp->anchors = xrealloc(yp->anchors, sizeof(*yp->anchors) * (yp->nanchors + 1));
	yp->anchors[yp->nanchors].name = xstrdup((const char *)name);
	yp->anchors[yp->nanchors].node = node;
	yp->anchors[yp->nanchors].open = node->type != YNODE_SCALAR;
	yp->nanchors++;
}

static int yaml__next(struct yaml__parser *yp, yaml_event_t *ev, struct error **err)
{
	if (!yaml_parser_parse(&yp->p, ev)) {
		const yaml_mark_t *m = yp->p.problem_mark.line || yp->p.problem_mark.column
					   ? &yp->p.problem_mark
					   : &yp->p.context_mark;
		return error_set(err, EINVAL, "line %zu column %zu: %s%s%s", m->line + 1,
				 m->column + 1, yp->p.problem ? yp->p.problem : "malformed YAML",
				 yp->p.context ? " " : "", yp->p.context ? yp->p.context : "");
	}
	return 0;
}

/* Takes nodes and bytes from the budgets, or refuses them (alias: the
 * alias being expanded, NULL for a node of the text itself). */
static int yaml__charge(struct yaml__parser *yp, size_t nodes, size_t bytes, size_t line,
			const char *alias, struct error **err)
{
	if (nodes > yp->budget)
		return error_set(
		    err, EINVAL,
		    "line %zu: document expands to more than %d nodes (alias expansion limit)",
		    line, YAML_MAX_NODES);
	if (bytes > yp->bytes && alias)
		return error_set(err, EINVAL,
				 "line %zu: alias *%s expands the document to more than %d bytes "
				 "of text (alias expansion limit)",
				 line, alias, YAML_MAX_BYTES);
	if (bytes > yp->bytes)
		return error_set(err, EINVAL,
				 "line %zu: the text holds more than %d bytes of scalars", line,
				 YAML_MAX_BYTES);
	yp->budget -= nodes;
	yp->bytes -= bytes;
	return 0;
}

static int yaml__node(struct yaml__parser *yp, yaml_event_t *ev, struct ynode **out,
		      struct error **err);

/* Merges the pairs of src (a mapping) into dst where dst lacks the key. */
static void yaml__merge(struct ynode *dst, const struct ynode *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const char *k = ynode_map_key(src, i)->str;
		if (!ynode_get(dst, k))
			ynode_set(dst, k, ynode_clone(ynode_map_val(src, i)));
	}
}

static int yaml__mapping(struct yaml__parser *yp, struct ynode *map, struct error **err)
{
	struct ynode **merges = NULL;
	size_t nmerges = 0;
	int r = 0;
	for (;;) {
		yaml_event_t ev;
		if ((r = yaml__next(yp, &ev, err)) < 0)
			break;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		size_t line = ev.start_mark.line + 1, col = ev.start_mark.column + 1;
		struct ynode *key = NULL, *val = NULL;
		r = yaml__node(yp, &ev, &key, err);
		yaml_event_delete(&ev);
		if (r < 0)
			break;
		if (key->type != YNODE_SCALAR) {
			ynode_free(key);
			r = error_set(err, EINVAL,
				      "line %zu column %zu: mapping keys must be scalars", line,
				      col);
			break;
		}
		if ((r = yaml__next(yp, &ev, err)) < 0) {
			ynode_free(key);
			break;
		}
		r = yaml__node(yp, &ev, &val, err);
		yaml_event_delete(&ev);
		if (r < 0) {
			ynode_free(key);
			break;
		}
		if (!key->quoted && strcmp(key->str, "<<") == 0) {
			/* YAML 1.1 merge key: applied after the explicit keys. */
			yaml__drop(yp, key);
			if (val->type != YNODE_MAP && val->type != YNODE_SEQ) {
				ynode_free(val);
				r = error_set(err, EINVAL,
					      "line %zu column %zu: merge key '<<' needs a mapping",
					      line, col);
				break;
			}
			merges = xrealloc(merges, sizeof(*merges) * (nmerges + 1));
			merges[nmerges++] = val;
			continue;
		}
		if (ynode__find(map, key->str) >= 0) {
			r = error_set(err, EINVAL, "line %zu column %zu: duplicate key \"%s\"",
				      line, col, key->str);
			ynode_free(key);
			ynode_free(val);
			break;
		}
		ynode__grow(map, 2 * map->n + 2);
		map->items[2 * map->n] = key;
		map->items[2 * map->n + 1] = val;
		map->n++;
	}
	for (size_t i = 0; i < nmerges; i++) {
		if (r == 0) {
			if (merges[i]->type == YNODE_MAP)
				yaml__merge(map, merges[i]);
			else
				for (size_t j = 0; j < merges[i]->n; j++)
					if (merges[i]->items[j]->type == YNODE_MAP)
						yaml__merge(map, merges[i]->items[j]);
		}
		yaml__drop(yp, merges[i]);
	}
	free(merges);
	return r;
}

static int yaml__sequence(struct yaml__parser *yp, struct ynode *seq, struct error **err)
{
	for (;;) {
		yaml_event_t ev;
		int r = yaml__next(yp, &ev, err);
		if (r < 0)
			return r;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		struct ynode *item = NULL;
		r = yaml__node(yp, &ev, &item, err);
		yaml_event_delete(&ev);
		if (r < 0)
			return r;
		ynode_append(seq, item);
	}
}

/* Builds the node that starts with ev (which the caller deletes). */
static int yaml__node(struct yaml__parser *yp, yaml_event_t *ev, struct ynode **out,
		      struct error **err)
{
	size_t line = ev->start_mark.line + 1;
	struct ynode *n = NULL;
	int r;
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		if ((r = yaml__charge(yp, 1, ev->data.scalar.length, line, NULL, err)) < 0)
			return r;
		n = ynode_new_strn((const char *)ev->data.scalar.value, ev->data.scalar.length);
		/* A NUL inside a scalar would be cut short; refuse it. */
		if (n->len != ev->data.scalar.length) {
			ynode_free(n);
			return error_set(err, EINVAL, "line %zu: NUL character in a scalar", line);
		}
		const char *tag = (const char *)ev->data.scalar.tag;
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
			    (tag && strcmp(tag, YAML_STR_TAG) == 0);
		n->line = (int)line;
		yaml__anchor_add(yp, ev->data.scalar.anchor, n);
		*out = n;
		return 0;
	}
	case YAML_ALIAS_EVENT: {
		const char *name = (const char *)ev->data.alias.anchor;
		for (size_t i = yp->nanchors; i-- > 0;) {
			if (strcmp(yp->anchors[i].name, name) != 0)
				continue;
			if (yp->anchors[i].open)
				return error_set(
				    err, EINVAL,
				    "line %zu: alias *%s refers to a node that contains it", line,
				    name);
			/* Charged whole before the copy is made. */
			size_t nodes = 0, bytes = 0;
			ynode__measure(yp->anchors[i].node, &nodes, &bytes);
			if ((r = yaml__charge(yp, nodes, bytes, line, name, err)) < 0)
				return r;
			/* A copy nests as deep as its anchor, below where it lands. */
			if (yp->depth + ynode__height(yp->anchors[i].node) > YAML_MAX_DEPTH)
				return error_set(err, EINVAL,
						 "line %zu: alias *%s: nesting deeper than %d",
						 line, name, YAML_MAX_DEPTH);
			*out = ynode_clone(yp->anchors[i].node);
			return 0;
		}
		return error_set(err, EINVAL, "line %zu: unknown alias *%s", line, name);
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool is_map = ev->type == YAML_MAPPING_START_EVENT;
		if ((r = yaml__charge(yp, 1, 0, line, NULL, err)) < 0)
			return r;
		if (++yp->depth > YAML_MAX_DEPTH) {
			yp->depth--;
			return error_set(err, EINVAL, "line %zu: nesting deeper than %d", line,
					 YAML_MAX_DEPTH);
		}
		n = is_map ? ynode_new_map() : ynode_new_seq();
		n->line = (int)line;
		const yaml_char_t *anchor =
		    is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
		size_t slot = yp->nanchors;
		yaml__anchor_add(yp, anchor, n);
		r = is_map ? yaml__mapping(yp, n, err) : yaml__sequence(yp, n, err);
		yp->depth--;
		if (r == 0 && anchor)
			yp->anchors[slot].open = false;
		if (r < 0) {
			/* Anchors may point into n: drop them with it. */
			for (size_t i = 0; i < yp->nanchors; i++)
				yp->anchors[i].node = NULL;
			yaml__anchors_reset(yp);
			ynode_free(n);
			return r;
		}
		*out = n;
		return 0;
	}
	default:
		return error_set(err, EINVAL, "line %zu: unexpected YAML event", line);
	}
}

int yaml_parse(const char *buf, size_t len, struct ynode ***docs, size_t *ndocs, struct error **err)
{
	struct yaml__parser yp = {0};
	struct ynode **out = NULL;
	size_t nout = 0;
	int r = 0;
	bool done = false;

	*docs = NULL;
	*ndocs = 0;
	/* libyaml reads on past a NUL byte in UTF-8 (where it may be past the
	 * end of a buffer copied as a string); UTF-16 text has NUL bytes. */
	bool utf16 =
	    len >= 2 && (((unsigned char)buf[0] == 0xff && (unsigned char)buf[1] == 0xfe) ||
			 ((unsigned char)buf[0] == 0xfe && (unsigned char)buf[1] == 0xff));
	if (!utf16 && (r = yaml_refuse_nul(buf, len, err)) < 0)
		return r;
	yp.budget = YAML_MAX_NODES;
	yp.bytes = YAML_MAX_BYTES;
	if (!yaml_parser_initialize(&yp.p))
		return error_set(err, ENOMEM, "cannot initialize the YAML parser");
	yaml_parser_set_input_string(&yp.p, (const unsigned char *)buf, len);
	while (!done && r == 0) {
		yaml_event_t ev;
		if ((r = yaml__next(&yp, &ev, err)) < 0)
			break;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT: {
			yaml_event_t root_ev;
			struct ynode *root = NULL;
			yp.depth = 0;
			if ((r = yaml__next(&yp, &root_ev, err)) < 0)
				break;
			r = yaml__node(&yp, &root_ev, &root, err);
			yaml_event_delete(&root_ev);
			yaml__anchors_reset(&yp);
			if (r < 0)
				break;
			yaml_event_t end_ev;
			if ((r = yaml__next(&yp, &end_ev, err)) < 0) {
				ynode_free(root);
				break;
			}
			yaml_event_delete(&end_ev);
			if (root->type == YNODE_SCALAR && !root->quoted && root->len == 0) {
				ynode_free(root); /* an empty document */
				break;
			}
			out = xrealloc(out, sizeof(*out) * (nout + 1));
			out[nout++] = root;
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml__anchors_reset(&yp);
	yaml_parser_delete(&yp.p);
	if (r < 0) {
		for (size_t i = 0; i < nout; i++)
			ynode_free(out[i]);
		free(out);
		return r;
	}
	*docs = out;
	*ndocs = nout;
	return 0;
}

int yaml_refuse_nul(const char *buf, size_t len, struct error **err)
{
	const char *nul = len ? memchr(buf, '\0', len) : NULL;
	if (!nul)
		return 0;
	/* Lines and columns as libyaml counts them: CR LF, CR or LF ends a
	 * line; a column is a character (UTF-8 continuation bytes are not). */
	size_t line = 1, col = 1;
	for (const char *p = buf; p < nul; p++) {
		if (*p == '\n' || (*p == '\r' && (p + 1 == nul || p[1] != '\n'))) {
			line++;
			col = 1;
		} else if (*p != '\r' && ((unsigned char)*p & 0xc0) != 0x80) {
			col++;
		}
	}
	return error_set(err, EINVAL,
			 "line %zu column %zu (byte offset %zu): NUL byte (YAML text cannot "
			 "hold NUL bytes)",
			 line, col, (size_t)(nul - buf));
}

int yaml_parse_one(const char *buf, size_t len, struct ynode **doc, struct error **err)
{
	struct ynode **docs;
	size_t n;
	*doc = NULL;
	int r = yaml_parse(buf, len, &docs, &n, err);
	if (r < 0)
		return r;
	if (n != 1) {
		for (size_t i = 0; i < n; i++)
			ynode_free(docs[i]);
		free(docs);
		return error_set(
		    err, EINVAL,
		    n == 0 ? "the document is empty" : "%zu documents where one is expected", n);
	}
	*doc = docs[0];
	free(docs);
	return 0;
}

/* ---- emitting ---- */

struct yaml__buf {
	char *data;
	size_t len, cap;
	size_t max; /* stop past this many bytes (yaml_emit_within) */
	bool over;  /* stopped */
};

static int yaml__write(void *data, unsigned char *chunk, size_t size)
{
	struct yaml__buf *b = data;
	if (size > b->max - b->len) {
		b->over = true;
		return 0; /* the emitter stops with a write error */
	}
	if (b->len + size + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (cap < b->len + size + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, chunk, size);
	b->len += size;
	b->data[b->len] = '\0';
	return 1;
}

/* Whether a plain scalar with this text would read back as something other
 * than a string: YAML 1.1 booleans and nulls, and the int, float and
 * timestamp forms of YAML 1.1 and 1.2 (what Kubernetes' decoders accept). */
static const char *yaml__typed_patterns[] = {
    "^[-+]?[0-9][0-9_]*$", /* 1.2's ints; 08 is a float to Go's yaml.v2 */
    "^[-+]?0b[01_]+$",
    "^[-+]?0[0-7_]+$",
    "^[-+]?0o[0-7]+$",
    "^[-+]?0x[0-9a-fA-F_]+$",
    "^[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+$",
    "^[-+]?([0-9][0-9_]*)?\\.[0-9_]*([eE][-+]?[0-9]+)?$",
    "^[-+]?[0-9][0-9_]*([eE][-+]?[0-9]+)$",
    "^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*$",
    "^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?([Tt ].*)?$",
};
static regex_t yaml__typed_re[ARRAY_SIZE(yaml__typed_patterns)];
static pthread_once_t yaml__typed_once = PTHREAD_ONCE_INIT;

static void yaml__typed_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(yaml__typed_patterns); i++)
		if (regcomp(&yaml__typed_re[i], yaml__typed_patterns[i], REG_EXTENDED | REG_NOSUB))
			abort();
}

static bool yaml__looks_typed(const char *s)
{
	static const char *words[] = {"",      "~",	"null",	 "Null",  "NULL", "true",  "True",
				      "TRUE",  "false", "False", "FALSE", "yes",  "Yes",   "YES",
				      "no",    "No",	"NO",	 "on",	  "On",	  "ON",	   "off",
				      "Off",   "OFF",	"y",	 "Y",	  "n",	  "N",	   ".nan",
				      ".NaN",  ".NAN",	".inf",	 ".Inf",  ".INF", "-.inf", "-.Inf",
				      "-.INF", "+.inf", "+.Inf", "+.INF", "<<",	  "="};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcmp(s, words[i]) == 0)
			return true;
	/* Only text that starts like a number can be one. */
	if (!strchr("0123456789+-.", s[0]))
		return false;
	/* The forms a written object holds most (a resourceVersion, a
	 * number in quotes, a timestamp) without the expressions: digits
	 * alone match the first, digits-dash at the start only the last. */
	size_t digits = strspn(s, "0123456789");
	if (digits > 0 && s[digits] == '\0')
		return true;
	if (digits == 4 && s[4] == '-' && isdigit((unsigned char)s[5])) {
		size_t m = strspn(s + 5, "0123456789");
		const char *d = s + 5 + m;
		size_t dd = d[0] == '-' ? strspn(d + 1, "0123456789") : 0;
		if (m <= 2 && (dd == 1 || dd == 2))
			return d[1 + dd] == '\0' || strchr("Tt ", d[1 + dd]);
	}
	pthread_once(&yaml__typed_once, yaml__typed_init);
	for (size_t i = 0; i < ARRAY_SIZE(yaml__typed_patterns); i++)
		if (regexec(&yaml__typed_re[i], s, 0, NULL, 0) == 0)
			return true;
	return false;
}

static int yaml__emit_node(yaml_emitter_t *em, const struct ynode *n, bool is_key)
{
	yaml_event_t ev;
	if (n->type == YNODE_SCALAR) {
		yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
		const char *text = n->str;
		size_t len = n->len;
		if (n->quoted) {
			if (yaml__looks_typed(n->str))
				style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
			else if (strchr(n->str, '\n'))
				style = YAML_LITERAL_SCALAR_STYLE;
			else
				style = YAML_ANY_SCALAR_STYLE;
		} else if (len == 0 && !is_key) {
			/* (An empty key stays empty; libyaml quotes it.) */
			text = "null";
			len = 4;
		}
		yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
					     style);
		return yaml_emitter_emit(em, &ev);
	}
	if (n->type == YNODE_SEQ) {
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			return 0;
		for (size_t i = 0; i < n->n; i++)
			if (!yaml__emit_node(em, n->items[i], false))
				return 0;
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev);
	}
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	if (!yaml_emitter_emit(em, &ev))
		return 0;
	for (size_t i = 0; i < 2 * n->n; i++)
		if (!yaml__emit_node(em, n->items[i], i % 2 == 0))
			return 0;
	yaml_mapping_end_event_initialize(&ev);
	return yaml_emitter_emit(em, &ev);
}

/* Emits doc into b (its max set); whether libyaml got to the end. */
static bool yaml__emit(const struct ynode *doc, struct yaml__buf *b)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int ok;

	if (!yaml_emitter_initialize(&em))
		abort();
	yaml_emitter_set_output(&em, yaml__write, b);
	yaml_emitter_set_indent(&em, 2);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_unicode(&em, 1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = yaml_emitter_emit(&em, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	ok = ok && yaml__emit_node(&em, doc, false);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_emitter_delete(&em);
	return ok;
}

char *yaml_emit(const struct ynode *doc, size_t *len)
{
	struct yaml__buf b = {.max = SIZE_MAX};
	if (!yaml__emit(doc, &b)) {
		/* Only invalid UTF-8 from a caller can get here; the parser
		 * never produces it. Fall back to an empty mapping. */
		free(b.data);
		b.data = xstrdup("{}\n");
		b.len = 3;
	}
	if (!b.data)
		b.data = xstrdup("");
	if (len)
		*len = b.len;
	return b.data;
}

/* An upper bound of what yaml__emit_node writes for n at depth (enclosing
 * collections): every node on a line of its own, indented two spaces a
 * level, with its "- ", ": " or "? " and a null or empty {} or [];
 * a scalar's bytes escaped (\xXX at most four bytes a byte) and quoted; a
 * line break in a scalar as two, each indented (literal blocks indent every
 * line, single quotes double a break). */
static size_t ynode__emit_bound(const struct ynode *n, size_t depth)
{
	size_t indent = 2 * depth + 2;
	size_t b = indent + 16;
	if (n->type == YNODE_SCALAR) {
		size_t breaks = 0;
		/* (\xc2 and \xe2 start U+0085 and U+2028, U+2029.) */
		for (size_t i = 0; i < n->len; i++)
			breaks += n->str[i] == '\n' || n->str[i] == '\r' || n->str[i] == '\xc2' ||
				  n->str[i] == '\xe2';
		return b + 4 * n->len + 2 * breaks * (indent + 2);
	}
	for (size_t i = 0; i < ynode__slots(n); i++)
		b += ynode__emit_bound(n->items[i], depth + 1);
	return b;
}

bool yaml_emit_within(const struct ynode *doc, size_t max)
{
	if (ynode__emit_bound(doc, 0) + 16 <= max)
		return true;
	struct yaml__buf b = {.max = max};
	bool ok = yaml__emit(doc, &b);
	free(b.data);
	return ok && !b.over;
}
