/* image.c: image references to folders or to the layer store, their
 * configuration, and each container's pull policy and back-off. Never
 * writes the cluster's mount: the caller records the events. */
#include "image.h"
#include "backoff.h"
#include "imageref.h"
#include "layers.h"
#include "pull.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <stdio.h>
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
	out->lower = xstrdup(root);
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
	free(img->lower);
	free(img->name);
	free(img->user);
	strv_clear(&img->ports);
	*img = (struct image){0};
}

int image_from_store(const char *store, const char *ref, struct image *out, struct error **err)
{
	*out = (struct image){0};
	struct layers_record r;
	if (layers_record_read(store, ref, &r, err) < 0)
		return -ENOENT;
	if (!layers_record_complete(store, &r) || r.layers.n == 0) {
		layers_record_clear(&r);
		return error_set(err, ENOENT, "image %s is not whole in %s", ref, store);
	}
	struct imageref ir;
	if (imageref_parse(ref, &ir, err) < 0) {
		layers_record_clear(&r);
		return -EINVAL;
	}
	out->ref = xstrdup(ref);
	out->name = xstrdup(ref);
	out->id = xasprintf("%s/%s@%s", ir.domain, ir.path, r.digest);
	imageref_clear(&ir);
	/* overlayfs's lowerdir: the uppermost first */
	for (size_t i = r.layers.n; i-- > 0;) {
		cleanup_free char *l = layers_layer_path(store, r.layers.v[i]);
		char *next = out->lower ? xasprintf("%s:%s", out->lower, l) : xstrdup(l);
		free(out->lower);
		out->lower = next;
	}
	out->root = layers_layer_path(store, r.layers.v[r.layers.n - 1]);
	out->entrypoint = r.entrypoint;
	out->cmd = r.cmd;
	out->env = r.env;
	out->ports = r.ports;
	r.entrypoint = r.cmd = r.env = r.ports = (struct strv){0};
	out->working_dir = steal_pointer(&r.working_dir);
	out->user = steal_pointer(&r.user);
	layers_record_clear(&r);
	return 0;
}

bool image_has(const struct image *img, const char *path)
{
	cleanup_free char *dirs = xstrdup(img->lower ? img->lower : img->root ? img->root : "");
	struct stat st;
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		cleanup_free char *p = xasprintf("%s%s", d, path);
		if (lstat(p, &st) == 0)
			/* a whiteout hides what is below it */
			return !(S_ISCHR(st.st_mode) && st.st_rdev == 0);
	}
	return false;
}

/* The file of the image at path, from its uppermost folder that has it. */
static char *image__read(const struct image *img, const char *path)
{
	cleanup_free char *dirs = xstrdup(img->lower ? img->lower : img->root ? img->root : "");
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		cleanup_free char *p = xasprintf("%s%s", d, path);
		struct stat st;
		if (lstat(p, &st) == 0)
			return S_ISREG(st.st_mode) ? util_read_file(p, NULL) : NULL;
	}
	return NULL;
}

/* The third field of the line of /etc/passwd or /etc/group named name,
 * or (passwd) the fourth: the primary group. */
static int image__lookup(const char *text, const char *name, int field, long long *out)
{
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		cleanup_free char *line = xstrndup(l, len);
		char *save = NULL;
		char *f = strtok_r(line, ":", &save);
		if (f && strcmp(f, name) == 0) {
			char *v = NULL;
			strtok_r(NULL, ":", &save); /* the password */
			for (int i = 2; i <= field; i++)
				v = strtok_r(NULL, ":", &save);
			if (v) {
				*out = strtoll(v, NULL, 10);
				return 0;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

static bool image__numeric(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int image_user_ids(const struct image *img, long long *uid, long long *gid, struct error **err)
{
	*uid = -1;
	*gid = -1;
	if (!img->user || !*img->user)
		return 0;
	cleanup_free char *u = xstrdup(img->user);
	char *g = strchr(u, ':');
	if (g)
		*g++ = '\0';
	cleanup_free char *passwd = image__read(img, "/etc/passwd");
	if (image__numeric(u)) {
		*uid = strtoll(u, NULL, 10);
	} else if (image__lookup(passwd, u, 2, uid) < 0) {
		return error_set(err, ENOENT,
				 "unable to find user %s: no matching entries in passwd file", u);
	}
	if (g && *g) {
		if (image__numeric(g)) {
			*gid = strtoll(g, NULL, 10);
		} else {
			cleanup_free char *group = image__read(img, "/etc/group");
			if (image__lookup(group, g, 2, gid) < 0)
				return error_set(err, ENOENT,
						 "unable to find group %s: no matching entries in "
						 "group file",
						 g);
		}
	} else if (!image__numeric(u)) {
		image__lookup(passwd, u, 3, gid);
	}
	return 0;
}

/* ---- the image manager --------------------------------------------------- */

void image_pull_state_clear(struct image_pull_state *s)
{
	free(s->error);
	*s = (struct image_pull_state){0};
}

void image_outcome_clear(struct image_outcome *o)
{
	free(o->reason);
	free(o->message);
	for (size_t i = 0; i < o->nev; i++)
		free(o->ev[i].message);
	*o = (struct image_outcome){0};
}

static void image__event(struct image_outcome *o, const char *type, const char *reason,
			 char *message)
{
	if (o->nev == IMAGE_EVENTS_MAX) {
		free(message);
		return;
	}
	o->ev[o->nev++] = (struct image_event){type, reason, message};
}

static int image__wait(struct image_outcome *o, const char *reason, char *message)
{
	free(o->reason);
	free(o->message);
	o->reason = xstrdup(reason);
	o->message = message;
	return 1;
}

void image_go_duration(uint64_t ms, char out[32])
{
	if (ms == 0) {
		snprintf(out, 32, "0s");
		return;
	}
	if (ms < 1000) {
		snprintf(out, 32, "%llums", (unsigned long long)ms);
		return;
	}
	unsigned long long h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60,
			   frac = ms % 1000;
	char sec[16];
	if (frac) {
		snprintf(sec, sizeof(sec), "%llu.%03llu", s, frac);
		size_t n = strlen(sec);
		while (sec[n - 1] == '0')
			sec[--n] = '\0';
	} else {
		snprintf(sec, sizeof(sec), "%llu", s);
	}
	/* Fits (h < 2^64 / 3.6e6 has at most 13 digits, m and s 2, the
	 * fraction 3): the length is looked at only so that compilers that
	 * cannot bound the values (-O1, make asan) do not warn. */
	int len;
	if (h)
		len = snprintf(out, 32, "%lluh%llum%ss", h, m, sec);
	else if (m)
		len = snprintf(out, 32, "%llum%ss", m, sec);
	else
		len = snprintf(out, 32, "%ss", sec);
	if (len >= 32)
		out[31] = '\0';
}

int image_get(const struct image_wanted *w, struct image_pull_state *st, struct image *img,
	      struct image_outcome *out)
{
	*out = (struct image_outcome){0};
	struct error *err = NULL;
	if (!w->ref || !*w->ref)
		return image__wait(out, "InvalidImageName",
				   xstrdup("the container names no image"));
	/* a folder of the images folder first: as before there were pulls */
	int r = image_resolve(w->folders, w->ref, img, &err);
	if (r == 0)
		return 0;
	struct imageref ir;
	if (imageref_parse(w->ref, &ir, NULL) < 0) {
		if (r == -EINVAL && err) {
			char *m = steal_pointer(&err->msg);
			error_free(err);
			return image__wait(out, "InvalidImageName", m);
		}
		error_free(err);
		return image__wait(out, "InvalidImageName",
				   xasprintf("Failed to apply default image tag \"%s\": couldn't "
					     "parse image name \"%s\": invalid reference format",
					     w->ref, w->ref));
	}
	cleanup_free char *folder_msg = err ? xstrdup(err->msg) : NULL;
	error_free(err);
	err = NULL;
	cleanup_free char *name = imageref_string(&ir);
	const char *policy = w->policy && *w->policy ? w->policy : imageref_default_policy(&ir);
	imageref_clear(&ir);
	bool present = image_from_store(w->store, name, img, NULL) == 0;
	bool always = strcmp(policy, "Always") == 0;
	if (st->pull_id && w->puller) {
		struct pull_result res;
		if (puller_result(w->puller, st->pull_id, &res) < 0) {
			st->pull_id = 0; /* forgotten: ask again */
		} else if (res.state == PULL_RUNNING) {
			pull_result_clear(&res);
			if (present)
				image_clear(img);
			return image__wait(out, "ContainerCreating", NULL);
		} else if (res.state == PULL_OK) {
			st->pull_id = 0;
			st->backoff_ms = 0;
			st->not_before_ms = 0;
			st->pulled = true;
			char took[32], waited[32];
			image_go_duration(res.report.took_ms, took);
			image_go_duration(res.waited_ms, waited);
			image__event(
			    out, "Normal", "Pulled",
			    xasprintf("Successfully pulled image \"%s\" in %s (%s including "
				      "waiting). Image size: %lld bytes.",
				      w->ref, took, waited, res.report.size));
			pull_result_clear(&res);
			if (present)
				image_clear(img);
			if (image_from_store(w->store, name, img, &err) < 0) {
				char *m = xstrdup(err->msg);
				error_free(err);
				return image__wait(out, "ErrImagePull", m);
			}
			return 0;
		} else {
			st->pull_id = 0;
			/* the kubelet's image back-off: 10 s doubling to 5 min */
			st->backoff_ms = st->backoff_ms ? st->backoff_ms * 2 : BACKOFF_BASE_MS;
			if (st->backoff_ms > BACKOFF_MAX_MS)
				st->backoff_ms = BACKOFF_MAX_MS;
			st->not_before_ms = w->now_ms + st->backoff_ms;
			st->said_backoff = false;
			free(st->error);
			st->error = xstrdup(res.message ? res.message : "");
			image__event(
			    out, "Warning", "Failed",
			    xasprintf("Failed to pull image \"%s\": %s", w->ref, st->error));
			image__event(out, "Warning", "Failed", xstrdup("Error: ErrImagePull"));
			pull_result_clear(&res);
			if (present)
				image_clear(img);
			out->wake_ms = st->backoff_ms;
			return image__wait(out, "ErrImagePull", xstrdup(st->error));
		}
	}
	if (strcmp(policy, "Never") == 0) {
		if (present) {
			image__event(
			    out, "Normal", "Pulled",
			    xasprintf("Container image \"%s\" already present on machine", w->ref));
			return 0;
		}
		image__event(out, "Warning", "ErrImageNeverPull",
			     xasprintf("Container image \"%s\" is not present with pull policy "
				       "of Never",
				       w->ref));
		return image__wait(out, "ErrImageNeverPull",
				   xasprintf("Container image \"%s\" is not present with pull "
					     "policy of Never",
					     w->ref));
	}
	if (present && (!always || st->pulled)) {
		if (!always)
			image__event(
			    out, "Normal", "Pulled",
			    xasprintf("Container image \"%s\" already present on machine", w->ref));
		return 0;
	}
	if (present)
		image_clear(img);
	if (!w->puller)
		return image__wait(out, "ErrImagePull",
				   folder_msg
				       ? steal_pointer(&folder_msg)
				       : xasprintf("image \"%s\" is not on this node", w->ref));
	if (st->not_before_ms > w->now_ms) {
		out->wake_ms = st->not_before_ms - w->now_ms;
		/* the first failure shows until its retry, as the kubelet's
		 * (its status-only updates do not sync the pod again) */
		if (st->backoff_ms <= BACKOFF_BASE_MS)
			return image__wait(out, "ErrImagePull",
					   xstrdup(st->error ? st->error : ""));
		if (!st->said_backoff)
			image__event(out, "Normal", "BackOff",
				     xasprintf("Back-off pulling image \"%s\"", w->ref));
		st->said_backoff = true;
		return image__wait(out, "ImagePullBackOff",
				   xasprintf("Back-off pulling image \"%s\": ErrImagePull: %s",
					     w->ref, st->error ? st->error : ""));
	}
	st->pull_id = puller_request(w->puller, name, w->auths, always);
	image__event(out, "Normal", "Pulling", xasprintf("Pulling image \"%s\"", w->ref));
	return image__wait(out, "ContainerCreating", NULL);
}
