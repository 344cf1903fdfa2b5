/* image.c: image references to folders, and their configuration. */
#include "image.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The folder names a reference may have: "name_tag" and "name". */
static int image__names(const char *ref, char **name, char **tag, struct error **err)
{
	cleanup_free char *r = xstrdup(ref);
	char *at = strchr(r, '@');
	if (at)
		*at = '\0';
	char *last = strrchr(r, '/');
	last = last ? last + 1 : r;
	char *colon = strchr(last, ':');
	if (colon)
		*colon = '\0';
	const char *t = colon ? colon + 1 : "latest";
	if (!*last || strcmp(last, ".") == 0 || strcmp(last, "..") == 0 || !*t || strchr(t, '/'))
		return error_set(err, EINVAL, "\"%s\" is not an image reference", ref);
	for (const char *p = last; *p; p++) {
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", *p))
			return error_set(err, EINVAL,
					 "\"%s\" is not an image reference (its name has '%c')",
					 ref, *p);
	}
	for (const char *p = t; *p; p++) {
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    *p))
			return error_set(err, EINVAL,
					 "\"%s\" is not an image reference (its tag has '%c')", ref,
					 *p);
	}
	*name = xstrdup(last);
	*tag = xstrdup(t);
	return 0;
}

static bool image__is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static const struct ynode *image__key(const struct ynode *cfg, const char *lower, const char *upper)
{
	const struct ynode *v = ynode_get(cfg, lower);
	return v ? v : ynode_get(cfg, upper);
}

static int image__list(const struct ynode *v, const char *what, struct strv *out,
		       struct error **err)
{
	if (!v || ynode_is_null(v))
		return 0;
	if (v->type != YNODE_SEQ)
		return error_set(err, EINVAL, "%s must be a list of strings", what);
	for (size_t i = 0; i < v->n; i++) {
		const char *s = ynode_str(ynode_item(v, i));
		if (!s)
			return error_set(err, EINVAL, "%s[%zu] must be a string", what, i);
		strv_add(out, s);
	}
	return 0;
}

static int image__config(const char *path, struct image *img, struct error **err)
{
	size_t len;
	cleanup_free char *text = util_read_file(path, &len);
	if (!text)
		return errno == ENOENT ? 0 : error_set(err, errno, "%s: %s", path, strerror(errno));
	struct ynode *cfg = NULL;
	if (yaml_parse_one(text, len, &cfg, err) < 0)
		goto bad;
	if (cfg->type != YNODE_MAP) {
		error_set(err, EINVAL, "not a mapping");
		goto bad;
	}
	if (image__list(image__key(cfg, "entrypoint", "Entrypoint"), "entrypoint", &img->entrypoint,
			err) < 0 ||
	    image__list(image__key(cfg, "cmd", "Cmd"), "cmd", &img->cmd, err) < 0 ||
	    image__list(image__key(cfg, "env", "Env"), "env", &img->env, err) < 0)
		goto bad;
	const char *wd = ynode_str(image__key(cfg, "workingDir", "WorkingDir"));
	if (wd && *wd)
		img->working_dir = xstrdup(wd);
	ynode_free(cfg);
	return 0;
bad:
	ynode_free(cfg);
	error_prefix(err, "image configuration %s", path);
	return -EINVAL;
}

int image_resolve(const char *dir, const char *ref, struct image *out, struct error **err)
{
	*out = (struct image){0};
	cleanup_free char *name = NULL, *tag = NULL;
	if (image__names(ref, &name, &tag, err) < 0)
		return -EINVAL;
	cleanup_free char *tagged = xasprintf("%s/%s_%s", dir, name, tag);
	cleanup_free char *plain = xasprintf("%s/%s", dir, name);
	const char *root = image__is_dir(tagged) ? tagged : image__is_dir(plain) ? plain : NULL;
	if (!root) {
		error_set(err, ENOENT,
			  "image \"%s\" is not on this node: neither %s/ nor %s/ exists "
			  "(corral image build-busybox, corral image import)",
			  ref, tagged, plain);
		return -ENOENT;
	}
	out->ref = xstrdup(ref);
	out->root = xstrdup(root);
	out->id = xasprintf("corral-image://%s", root);
	cleanup_free char *cfg = xasprintf("%s.yaml", root);
	if (image__config(cfg, out, err) < 0) {
		image_clear(out);
		return -EINVAL;
	}
	return 0;
}

void image_clear(struct image *img)
{
	free(img->ref);
	free(img->root);
	free(img->id);
	strv_clear(&img->entrypoint);
	strv_clear(&img->cmd);
	strv_clear(&img->env);
	free(img->working_dir);
	*img = (struct image){0};
}
