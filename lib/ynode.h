/* ynode.h: YAML documents as a tree of nodes, parsed and emitted with libyaml.
 *
 * A node is a scalar, a sequence or a mapping. Mappings keep their keys in
 * document order (Kubernetes objects read back in a stable order) and refuse
 * duplicate keys. Anchors and aliases are expanded on parse, within a budget
 * of nodes (YAML_MAX_NODES) and of scalar text (YAML_MAX_BYTES) per stream,
 * charged before an alias is copied, so that an alias bomb is an error, not
 * an OOM.
 * Scalars stay text: a scalar remembers whether it was quoted, so that "80"
 * stays a string and 80 stays a number when emitted again. */
#ifndef CORRAL_YAML_H
#define CORRAL_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define YAML_MAX_NODES 262144	     /* per stream, after alias expansion */
#define YAML_MAX_BYTES (4096 * 1024) /* scalar text per stream, after alias expansion */
#define YAML_MAX_DEPTH 128	     /* nesting of sequences and mappings */

enum ynode_type { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };

struct ynode {
	enum ynode_type type;
	bool quoted; /* scalar: written quoted or block, so always a string */
	int line;    /* 1-based line in the source, 0 when built in code */
	char *str;   /* scalar: NUL-terminated text */
	size_t len;  /* scalar: length of str */
	size_t n;    /* seq: items; map: pairs */
	size_t cap;
	struct ynode **items; /* seq: n items; map: 2n (key, value, key, ...) */
};

/* Constructors. ynode_new_str() makes a string that emits quoted when it
 * would otherwise read back as a number, bool or null; ynode_new_plain()
 * makes a plain scalar (numbers, booleans). */
struct ynode *ynode_new_map(void);
struct ynode *ynode_new_seq(void);
struct ynode *ynode_new_str(const char *s);
struct ynode *ynode_new_strn(const char *s, size_t len);
struct ynode *ynode_new_plain(const char *s);
struct ynode *ynode_new_int(long long v);
struct ynode *ynode_new_bool(bool v);
struct ynode *ynode_clone(const struct ynode *n);
void ynode_free(struct ynode *n);
void ynode_freep(struct ynode **n);
#define cleanup_ynode __attribute__((cleanup(ynode_freep)))

bool ynode_equal(const struct ynode *a, const struct ynode *b);
/* Sorts the keys of every mapping under n by byte order, as kubectl prints
 * objects (Go's JSON encoding of maps). */
void ynode_sort(struct ynode *n);

/* Mapping access. ynode_get() returns NULL if map is not a mapping or has no
 * such key. ynode_set() takes ownership of val and replaces an existing value
 * in place (keeping the key's position) or appends. ynode_take() removes the
 * pair and hands the value to the caller; ynode_del() frees it. */
struct ynode *ynode_get(const struct ynode *map, const char *key);
void ynode_set(struct ynode *map, const char *key, struct ynode *val);
struct ynode *ynode_take(struct ynode *map, const char *key);
void ynode_del(struct ynode *map, const char *key);
/* Returns the mapping under key, creating an empty one if absent (or if the
 * present value is not a mapping, which is then replaced). */
struct ynode *ynode_get_map(struct ynode *map, const char *key);
#define ynode_map_key(map, i) ((map)->items[2 * (i)])
#define ynode_map_val(map, i) ((map)->items[2 * (i) + 1])

/* Sequences. ynode_append() takes ownership of item. */
void ynode_append(struct ynode *seq, struct ynode *item);
/* Removes (and frees) every scalar item of seq whose text is s; returns how
 * many. seq may be NULL or not a sequence: 0. */
size_t ynode_seq_remove_str(struct ynode *seq, const char *s);
#define ynode_item(seq, i) ((seq)->items[(i)])

/* Path access: "spec.template.spec.containers", "spec.containers[0].name".
 * Returns NULL when any step is missing or of the wrong type. */
struct ynode *ynode_path(const struct ynode *root, const char *path);
/* The text of a scalar at path, or NULL. */
const char *ynode_path_str(const struct ynode *root, const char *path);
/* The text of a scalar node, or NULL if n is NULL or not a scalar. */
const char *ynode_str(const struct ynode *n);

/* Typed reading of scalars. Return 0 on success, -1 if n is not a scalar of
 * that type (YAML 1.1 and 1.2 spellings: true/false/yes/no/on/off; decimal,
 * 0x, 0o integers). A quoted scalar is never a number or a bool. */
int ynode_int(const struct ynode *n, long long *out);
int ynode_bool(const struct ynode *n, bool *out);
bool ynode_is_null(const struct ynode *n); /* ~, null, empty plain, or NULL */

/* Parse a stream of one or more documents. Empty documents (only comments,
 * or `---` alone) are skipped. On success *docs is an array of *ndocs roots
 * (free each, then the array). Errors name the line and column. The budgets
 * (YAML_MAX_NODES, YAML_MAX_BYTES) hold for the whole stream. A NUL byte
 * is refused (yaml_refuse_nul) unless the text starts with a UTF-16 byte
 * order mark. */
int yaml_parse(const char *buf, size_t len, struct ynode ***docs, size_t *ndocs,
	       struct error **err);
/* Refuses (EINVAL) text holding a NUL byte, naming where the first one is:
 * line, column and byte offset. Looks no further than that byte, so a buffer
 * cut short after a NUL (a string copy of the bytes) is never read past its
 * end. 0 when there is none. */
int yaml_refuse_nul(const char *buf, size_t len, struct error **err);
/* Parse exactly one document; zero or several is an error. */
int yaml_parse_one(const char *buf, size_t len, struct ynode **doc, struct error **err);

/* Emit one document in block style, two-space indent, sequences inside
 * mappings not indented (as kubectl prints them). Returns a malloc'd,
 * NUL-terminated buffer; *len (if not NULL) gets its length. */
char *yaml_emit(const struct ynode *doc, size_t *len);
/* Whether yaml_emit(doc) is at most max bytes long. Decided from an upper
 * bound of the emitted size when that is within max, else by emitting into
 * a buffer that stops at max bytes: never holds more than max. */
bool yaml_emit_within(const struct ynode *doc, size_t max);

#endif
