/* fuzz_yaml.c: libFuzzer harness for yaml_parse() and yaml_emit().
 *
 * Besides memory errors and undefined behaviour it checks the contract:
 * a failure sets an error (and leaves no documents behind); every document
 * that parses emits to text of the length reported, that text parses back
 * to exactly one document equal to the first, and a clone and a sorted
 * clone compare equal to the original (mapping order does not matter);
 * yaml_emit_within holds at the emitted length and not a byte below it;
 * text with a NUL byte (but UTF-16) is never accepted, and the budgets of
 * nodes and bytes hold over the stream. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"
#include "ynode.h"

static void fuzz_yaml__measure(const struct ynode *n, size_t *nodes, size_t *bytes)
{
	(*nodes)++;
	if (n->type == YNODE_SCALAR)
		*bytes += n->len;
	else
		for (size_t i = 0; i < (n->type == YNODE_MAP ? 2 * n->n : n->n); i++)
			fuzz_yaml__measure(n->items[i], nodes, bytes);
}

static void fuzz_yaml__check_doc(const struct ynode *doc)
{
	cleanup_ynode struct ynode *copy = ynode_clone(doc);
	if (!ynode_equal(doc, copy) || !ynode_equal(copy, doc))
		abort();
	ynode_sort(copy);
	if (!ynode_equal(doc, copy))
		abort();

	size_t len = 0;
	cleanup_free char *text = yaml_emit(doc, &len);
	if (!text || strlen(text) != len)
		abort();
	if (!yaml_emit_within(doc, len) || (len && yaml_emit_within(doc, len - 1))) {
		fprintf(stderr, "yaml_emit_within is wrong at %zu bytes:\n%s", len, text);
		abort();
	}
	cleanup_ynode struct ynode *back = NULL;
	struct error *err = NULL;
	if (yaml_parse_one(text, len, &back, &err) < 0) {
		fprintf(stderr, "emitted text does not parse back: %s\n---\n%s\n---\n",
			err ? err->msg : "(no error)", text);
		abort();
	}
	if (!ynode_equal(doc, back)) {
		cleanup_free char *again = yaml_emit(back, NULL);
		fprintf(
		    stderr,
		    "emitted text parses to another tree\n--- emitted\n%s--- re-emitted\n%s---\n",
		    text, again);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ynode **docs = (struct ynode **)&docs; /* must be reset */
	size_t n = 12345;
	struct error *err = NULL;
	int r = yaml_parse((const char *)data, size, &docs, &n, &err);
	if (r < 0) {
		if (!err || !err->msg || r != -err->status || docs || n)
			abort();
		error_free(err);
		return 0;
	}
	if (err || (n && !docs))
		abort();
	bool utf16 = size >= 2 &&
		     ((data[0] == 0xff && data[1] == 0xfe) || (data[0] == 0xfe && data[1] == 0xff));
	if (!utf16 && size && memchr(data, '\0', size))
		abort();
	size_t nodes = 0, bytes = 0;
	for (size_t i = 0; i < n; i++)
		fuzz_yaml__measure(docs[i], &nodes, &bytes);
	if (nodes > YAML_MAX_NODES || bytes > YAML_MAX_BYTES)
		abort();
	for (size_t i = 0; i < n; i++) {
		fuzz_yaml__check_doc(docs[i]);
		ynode_free(docs[i]);
	}
	free(docs);
	return 0;
}
