/* fuzz_noded.c: corral-noded's parsers of what users write: image
 * references, $(VAR) expansion, an image's /etc/passwd, and a pod's
 * containers worked out into a command, an environment, mounts and a
 * security context (with lookups that find one ConfigMap and one Secret). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "image.h"
#include "util.h"

static int lookup(void *data, const char *plural, const char *name, struct ynode **out,
		  struct error **err)
{
	(void)data;
	(void)err;
	const char *text = strcmp(plural, "secrets") == 0
			       ? "data: {k: aGVsbG8=, bad: '*'}\nstringData: {s: x}\n"
			       : "data: {k: v, e: ''}\nbinaryData: {b: '!!'}\n";
	if (strcmp(name, "gone") == 0)
		return -2; /* -ENOENT */
	return yaml_parse_one(text, strlen(text), out, NULL);
}

static const char *volume(void *data, const char *name)
{
	(void)data;
	return strcmp(name, "v") == 0 ? "/volumes/v" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	struct image img;
	struct error *err = NULL;
	if (image_resolve("/nonexistent-corral-images", s, &img, &err) == 0)
		image_clear(&img);
	error_free(err);
	err = NULL;

	struct strv env = {0};
	strv_setenv(&env, "A", "1");
	strv_setenv(&env, "LONG", "a fairly long value to grow the buffer");
	free(container_expand(s, &env));
	strv_clear(&env);
	(void)container_passwd_gid(s, 1000);

	struct ynode *pod = NULL;
	if (yaml_parse_one(s, strlen(s), &pod, NULL) == 0) {
		const struct ynode *cs = ynode_path(pod, "spec.containers");
		struct image base = {0};
		base.ref = "fuzz";
		strv_add(&base.cmd, "sh");
		strv_add(&base.env, "PATH=/bin");
		strv_add(&base.env, "NOEQUALS");
		const struct container_env ce = {
		    .pod_ip = "10.244.0.2", .lookup = lookup, .volume = volume};
		for (size_t i = 0; cs && cs->type == YNODE_SEQ && i < cs->n && i < 4; i++) {
			struct container_plan p;
			if (container_plan(pod, ynode_item(cs, i), &base, &ce, &p, &err) == 0)
				container_plan_clear(&p);
			error_free(err);
			err = NULL;
		}
		strv_clear(&base.cmd);
		strv_clear(&base.env);
		ynode_free(pod);
	}
	free(s);
	return 0;
}
