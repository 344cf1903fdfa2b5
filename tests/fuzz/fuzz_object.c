/* fuzz_object.c: libFuzzer harness for object_build() in a Pod folder
 * (namespace "dev", file "web.yaml"), as a create and as an update of a
 * fixed stored pod.
 *
 * Besides memory errors it checks the contract: a failure sets an error
 * whose status is the negated result and leaves no outputs; a success keeps
 * the name and namespace of the file, the stored uid and creationTimestamp
 * on an update, emits YAML that parses back equal and within
 * OBJECT_MAX_BYTES, and a declared form without status or server-set
 * metadata; text with a NUL byte is never accepted. Writing back what was built must
 * be accepted and make no change to the history. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kinds.h"
#include "object.h"
#include "util.h"
#include "ynode.h"

#define FUZZ_UID   "ef4013c0-be33-4dd1-a835-d09be2750abf"
#define FUZZ_CTIME "2026-01-01T00:00:00Z"

static const char fuzz_object__old_pod[] = "apiVersion: v1\n"
					   "kind: Pod\n"
					   "metadata:\n"
					   "  name: web\n"
					   "  namespace: dev\n"
					   "  labels:\n"
					   "    app: web\n"
					   "spec:\n"
					   "  containers:\n"
					   "  - name: web\n"
					   "    image: nginx:1.25\n"
					   "    ports:\n"
					   "    - containerPort: 80\n";

static const struct kind_info *fuzz_object__kind;
static char *fuzz_object__old; /* the stored pod, resourceVersion 7 */
static size_t fuzz_object__old_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_object__kind = kinds_by_plural("pods");
	struct object_build b = {.kind = fuzz_object__kind,
				 .ns = "dev",
				 .name = "web",
				 .text = fuzz_object__old_pod,
				 .len = sizeof(fuzz_object__old_pod) - 1};
	struct error *err = NULL;
	if (!fuzz_object__kind || object_build(&b, &err) < 0) {
		fprintf(stderr, "fuzz_object: the stored pod does not build: %s\n",
			err ? err->msg : "(no kind)");
		abort();
	}
	struct ynode *md = ynode_get(b.obj, "metadata");
	ynode_set(md, "uid", ynode_new_str(FUZZ_UID));
	ynode_set(md, "creationTimestamp", ynode_new_str(FUZZ_CTIME));
	ynode_set(md, "resourceVersion", ynode_new_str("7"));
	ynode_set(b.obj, "status", ynode_new_map());
	ynode_set(ynode_get(b.obj, "status"), "phase", ynode_new_str("Running"));
	fuzz_object__old = yaml_emit(b.obj, &fuzz_object__old_len);
	object_build_clear(&b);
	return 0;
}

static void fuzz_object__check_declared(const struct object_build *b)
{
	if (!b->declared) {
		/* Nothing for the history, or a take-over by a controller. */
		if (b->message && strcmp(b->message, "delete pod dev/web") != 0)
			abort();
		return;
	}
	if (!b->message || (strncmp(b->message, "create pod dev/web", 18) != 0 &&
			    strncmp(b->message, "update pod dev/web: ", 20) != 0))
		abort();
	cleanup_ynode struct ynode *d = NULL;
	if (yaml_parse_one(b->declared, strlen(b->declared), &d, NULL) < 0)
		abort();
	static const char *const server[] = {"status", "metadata.uid", "metadata.resourceVersion",
					     "metadata.generation", "metadata.creationTimestamp"};
	for (size_t i = 0; i < ARRAY_SIZE(server); i++)
		if (ynode_path(d, server[i]))
			abort();
}

/* Builds text as a create (old NULL) or an update; returns whether it was
 * accepted. On success *out holds what would be stored. */
static bool fuzz_object__build(const char *text, size_t len, const char *old, size_t old_len,
			       struct object_build *out)
{
	struct object_build b = {.kind = fuzz_object__kind,
				 .ns = "dev",
				 .name = "web",
				 .text = text,
				 .len = len,
				 .old_yaml = old,
				 .old_len = old_len};
	struct error *err = NULL;
	int r = object_build(&b, &err);
	if (r < 0) {
		if (!err || !err->msg || r != -err->status || b.obj || b.declared || b.message)
			abort();
		if (err->status != EINVAL && err->status != EAGAIN && err->status != EFBIG)
			abort();
		error_free(err);
		return false;
	}
	if (err || !b.obj || b.obj->type != YNODE_MAP)
		abort();
	const char *name = ynode_path_str(b.obj, "metadata.name");
	const char *ns = ynode_path_str(b.obj, "metadata.namespace");
	const char *uid = ynode_path_str(b.obj, "metadata.uid");
	const char *ctime = ynode_path_str(b.obj, "metadata.creationTimestamp");
	if (!name || strcmp(name, "web") != 0 || !ns || strcmp(ns, "dev") != 0 || !uid ||
	    strlen(uid) != 36 || !ctime)
		abort();
	if (old == fuzz_object__old &&
	    (strcmp(uid, FUZZ_UID) != 0 || strcmp(ctime, FUZZ_CTIME) != 0))
		abort();
	fuzz_object__check_declared(&b);

	size_t elen;
	cleanup_free char *emitted = yaml_emit(b.obj, &elen);
	cleanup_ynode struct ynode *back = NULL;
	if (yaml_parse_one(emitted, elen, &back, NULL) < 0 || !ynode_equal(back, b.obj))
		abort();
	if (elen > OBJECT_MAX_BYTES || memchr(text, '\0', len)) {
		fprintf(stderr, "accepted: %zu bytes stored from %zu written\n", elen, len);
		abort();
	}
	*out = b;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	for (int update = 0; update < 2; update++) {
		struct object_build b = {0};
		if (!fuzz_object__build(text, size, update ? fuzz_object__old : NULL,
					update ? fuzz_object__old_len : 0, &b))
			continue;
		/* What was stored, written back unchanged over itself (as after
		 * `cat web.yaml > web.yaml`), is accepted and changes nothing. */
		size_t len;
		cleanup_free char *stored = yaml_emit(b.obj, &len);
		struct object_build again = {0};
		if (!fuzz_object__build(stored, len, stored, len, &again)) {
			fprintf(stderr, "writing back the stored object is refused:\n%s", stored);
			abort();
		}
		if (again.declared || again.message || !ynode_equal(again.obj, b.obj)) {
			fprintf(stderr, "writing back the stored object changes it:\n%s", stored);
			abort();
		}
		object_build_clear(&again);
		object_build_clear(&b);
	}
	return 0;
}
