/* layers.c: the image store's blobs, unpacked layers and image records.
 * Records are JSON (jansson: Debian's, small, with a strict parser that
 * keeps integer sizes exact), written whole to a temporary file and
 * renamed. This file never runs a registry client. */
#include "layers.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zlib.h>

static void layers__hex(const unsigned char *md, char out[LAYERS_DIGEST_SIZE])
{
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

void layers_sha256(const void *p, size_t n, char out[LAYERS_DIGEST_SIZE])
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
	layers__hex(md, out);
}

int layers_sha256_file(const char *path, char out[LAYERS_DIGEST_SIZE], struct error **err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	static char buf[1 << 16];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	int saved = errno;
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(ctx, md, &len);
	EVP_MD_CTX_free(ctx);
	if (n < 0)
		return error_set(err, saved, "%s: %s", path, strerror(saved));
	layers__hex(md, out);
	return 0;
}

static const char *layers__hexpart(const char *digest)
{
	return strncmp(digest, "sha256:", 7) == 0 ? digest + 7 : digest;
}

char *layers_blob_path(const char *store, const char *digest)
{
	return xasprintf("%s/blobs/sha256/%s", store, layers__hexpart(digest));
}

char *layers_layer_path(const char *store, const char *diffid)
{
	return xasprintf("%s/layers/%s", store, layers__hexpart(diffid));
}

static bool layers__is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- removing trees, sizing them ----------------------------------------- */

static long long layers__bytes;

static int layers__rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	layers__bytes += (long long)st->st_blocks * 512;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* rm -rf; the bytes it freed. */
static long long layers__rm_rf(const char *path)
{
	layers__bytes = 0;
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return (long long)st.st_blocks * 512;
	}
	nftw(path, layers__rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return layers__bytes;
}

/* ---- whiteouts ----------------------------------------------------------- */

static struct strv layers__found;

static int layers__find_wh(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	if (flag != FTW_D && strncmp(path + f->base, ".wh.", 4) == 0)
		strv_add(&layers__found, path);
	return 0;
}

int layers_whiteouts(const char *dir, struct error **err)
{
	strv_clear(&layers__found);
	if (nftw(dir, layers__find_wh, 32, FTW_PHYS | FTW_MOUNT) < 0)
		return error_set(err, errno, "%s: %s", dir, strerror(errno));
	int ret = 0;
	for (size_t i = 0; i < layers__found.n && ret == 0; i++) {
		char *path = layers__found.v[i];
		char *slash = strrchr(path, '/');
		const char *base = slash + 1;
		*slash = '\0'; /* path is now the folder */
		if (strcmp(base, ".wh..wh..opq") == 0) {
			cleanup_free char *marker = xasprintf("%s/%s", path, base);
			if (setxattr(path, "trusted.overlay.opaque", "y", 1, 0) < 0)
				ret = error_set(err, errno, "opaque folder %s: %s", path,
						strerror(errno));
			unlink(marker);
			continue;
		}
		cleanup_free char *marker = xasprintf("%s/%s", path, base);
		cleanup_free char *target = xasprintf("%s/%s", path, base + 4);
		unlink(marker);
		if (strncmp(base + 4, ".wh.", 4) == 0 || !base[4])
			continue; /* the OCI spec's reserved names: nothing to hide */
		layers__rm_rf(target);
		if (mknod(target, S_IFCHR | 0000, makedev(0, 0)) < 0)
			ret = error_set(err, errno, "whiteout %s: %s", target, strerror(errno));
	}
	strv_clear(&layers__found);
	return ret;
}

/* ---- unpacking ----------------------------------------------------------- */

static pid_t layers__spawn(const char *const *argv, int in, int out, int errfd)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	dup2(in, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(errfd, STDERR_FILENO);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], (char *const *)argv);
	_exit(127);
}

static int layers__status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int layers_unpack(const char *store, const char *blob, const char *blob_digest, const char *diffid,
		  struct error **err)
{
	cleanup_free char *dest = layers_layer_path(store, diffid);
	if (layers__is_dir(dest))
		return 0;
	cleanup_free char *tmp =
	    xasprintf("%s/layers/.tmp-%s-%d", store, layers__hexpart(diffid), (int)getpid());
	cleanup_free char *errf = xasprintf("%s.err", tmp);
	layers__rm_rf(tmp);
	int r = util_mkdir_p(tmp, 0755);
	if (r < 0)
		return error_set(err, -r, "%s: %s", tmp, strerror(-r));
	cleanup_close int in = open(blob, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return error_set(err, errno, "layer %s: %s", blob, strerror(errno));
	unsigned char magic[4] = {0};
	ssize_t got = pread(in, magic, sizeof(magic), 0);
	const char *zst[] = {"zstd", "-dcq", NULL};
	const char *const *dec = NULL;
	bool gzip = got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (got == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f &&
	    magic[3] == 0xfd)
		dec = zst;
	if (dec && blob_digest) {
		/* zstd runs apart: the blob is checked on its own first */
		char bd[LAYERS_DIGEST_SIZE];
		if ((r = layers_sha256_file(blob, bd, err)) < 0)
			return r;
		if (strcmp(bd, blob_digest) != 0)
			return error_set(
			    err, EBADMSG,
			    "layer digest mismatch: the manifest names %s, the blob is %s",
			    blob_digest, bd);
		blob_digest = NULL;
	}
	const char *tar[] = {"tar",
			     "-x",
			     "-p",
			     "--numeric-owner",
			     "--same-owner",
			     "--xattrs",
			     "--xattrs-include=*",
			     "-C",
			     tmp,
			     "-f",
			     "-",
			     NULL};
	cleanup_close int errfd = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int dp[2] = {-1, -1}, tp[2] = {-1, -1};
	pid_t dpid = -1, tpid = -1;
	int src = in;
	if (dec) {
		if (pipe2(dp, O_CLOEXEC) < 0)
			return error_set(err, errno, "pipe: %s", strerror(errno));
		dpid = layers__spawn(dec, in, dp[1], errfd);
		close(dp[1]);
		src = dp[0];
	}
	if (pipe2(tp, O_CLOEXEC) < 0) {
		r = error_set(err, errno, "pipe: %s", strerror(errno));
		goto out;
	}
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	tpid = layers__spawn(tar, tp[0], null, errfd);
	close(null);
	close(tp[0]);
	/* one pass over the blob: its digest, gzip inflated here (zlib),
	 * the diffID of what comes out, and tar fed with it */
	EVP_MD_CTX *ctx = EVP_MD_CTX_new(), *bctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestInit_ex(bctx, EVP_sha256(), NULL);
	static unsigned char buf[1 << 17], out[1 << 17];
	ssize_t n;
	bool wr_ok = true, bad_gzip = false;
	z_stream zs = {0};
	if (gzip && inflateInit2(&zs, 15 + 16) != Z_OK)
		bad_gzip = true;
	while (!bad_gzip && ((n = read(src, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))) {
		if (n < 0)
			continue;
		EVP_DigestUpdate(bctx, buf, (size_t)n);
		if (!gzip) {
			EVP_DigestUpdate(ctx, buf, (size_t)n);
			if (wr_ok && util_write_all(tp[1], buf, (size_t)n) < 0)
				wr_ok = false; /* tar gave up: its status says why */
			continue;
		}
		zs.next_in = buf;
		zs.avail_in = (uInt)n;
		while (zs.avail_in && !bad_gzip) {
			zs.next_out = out;
			zs.avail_out = sizeof(out);
			int zr = inflate(&zs, Z_NO_FLUSH);
			size_t have = sizeof(out) - zs.avail_out;
			EVP_DigestUpdate(ctx, out, have);
			if (have && wr_ok && util_write_all(tp[1], out, have) < 0)
				wr_ok = false;
			if (zr == Z_STREAM_END)
				inflateReset(&zs); /* a next gzip member, if any */
			else if (zr != Z_OK && zr != Z_BUF_ERROR)
				bad_gzip = true;
		}
	}
	if (gzip)
		inflateEnd(&zs);
	close(tp[1]);
	unsigned char md[32];
	unsigned int mdlen = 0;
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	char got_id[LAYERS_DIGEST_SIZE], got_blob[LAYERS_DIGEST_SIZE];
	layers__hex(md, got_id);
	EVP_DigestFinal_ex(bctx, md, &mdlen);
	layers__hex(md, got_blob);
	EVP_MD_CTX_free(ctx);
	EVP_MD_CTX_free(bctx);
	int ds = dpid > 0 ? layers__status(dpid) : 0;
	int ts = layers__status(tpid);
	dpid = -1;
	if (blob_digest && strcmp(got_blob, blob_digest) != 0) {
		r = error_set(err, EBADMSG,
			      "layer digest mismatch: the manifest names %s, the registry sent %s",
			      blob_digest, got_blob);
		goto out;
	}
	if (bad_gzip) {
		r = error_set(err, EBADMSG, "layer %s is not valid gzip", blob);
		goto out;
	}
	if (ds != 0 || ts != 0) {
		cleanup_free char *why = util_read_file(errf, NULL);
		if (why) {
			char *nl = strchr(why, '\n');
			if (nl)
				*nl = '\0';
		}
		r = error_set(err, EIO, "layer %s does not unpack (%s exited %d%s%s)", blob,
			      ds ? dec[0] : "tar", ds ? ds : ts, why && *why ? ": " : "",
			      why ? why : "");
		goto out;
	}
	if (strcmp(got_id, diffid) != 0) {
		r = error_set(err, EBADMSG,
			      "layer %s: its uncompressed content is %s, not the diffID %s of "
			      "the image config",
			      blob, got_id, diffid);
		goto out;
	}
	if ((r = layers_whiteouts(tmp, err)) < 0)
		goto out;
	if (rename(tmp, dest) < 0 && !layers__is_dir(dest)) {
		r = error_set(err, errno, "%s: %s", dest, strerror(errno));
		goto out;
	}
	r = 0;
out:
	if (dp[0] >= 0)
		close(dp[0]);
	if (dpid > 0) {
		kill(dpid, SIGKILL);
		layers__status(dpid);
	}
	unlink(errf);
	layers__rm_rf(tmp); /* failed, or lost the race to another pull */
	return r;
}

/* ---- records ------------------------------------------------------------- */

static char *layers__record_path(const char *store, const char *name)
{
	char d[LAYERS_DIGEST_SIZE];
	layers_sha256(name, strlen(name), d);
	return xasprintf("%s/records/%s.json", store, d + 7);
}

static json_t *layers__strv_json(const struct strv *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(a, json_string(s->v[i]));
	return a;
}

static void layers__json_strv(json_t *a, struct strv *out)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (json_is_string(v))
			strv_add(out, json_string_value(v));
	}
}

static char *layers__json_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? xstrdup(s) : NULL;
}

int layers_record_write(const char *store, const struct layers_record *r, struct error **err)
{
	cleanup_free char *dir = xasprintf("%s/records", store);
	util_mkdir_p(dir, 0700);
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "digest", json_string(r->digest));
	json_object_set_new(o, "manifest", json_string(r->manifest ? r->manifest : r->digest));
	json_object_set_new(o, "config", json_string(r->config ? r->config : ""));
	json_object_set_new(o, "layers", layers__strv_json(&r->layers));
	json_object_set_new(o, "blobs", layers__strv_json(&r->blobs));
	json_object_set_new(o, "size", json_integer(r->size));
	json_object_set_new(o, "pulled", json_integer((json_int_t)r->pulled));
	json_object_set_new(o, "lastUsed", json_integer((json_int_t)r->last_used));
	json_object_set_new(o, "entrypoint", layers__strv_json(&r->entrypoint));
	json_object_set_new(o, "cmd", layers__strv_json(&r->cmd));
	json_object_set_new(o, "env", layers__strv_json(&r->env));
	json_object_set_new(o, "exposedPorts", layers__strv_json(&r->ports));
	if (r->working_dir)
		json_object_set_new(o, "workingDir", json_string(r->working_dir));
	if (r->user)
		json_object_set_new(o, "user", json_string(r->user));
	cleanup_free char *text = json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(o);
	cleanup_free char *path = layers__record_path(store, r->name);
	cleanup_free char *tmp = xasprintf("%s.%d", path, (int)getpid());
	cleanup_close int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || util_write_all(fd, text, strlen(text)) < 0 ||
	    util_write_all(fd, "\n", 1) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_set(err, e, "image record %s: %s", path, strerror(e));
	}
	return 0;
}

static int layers__record_load(const char *path, struct layers_record *out, struct error **err)
{
	*out = (struct layers_record){0};
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je);
	if (!o) {
		if (access(path, F_OK) < 0)
			return error_set(err, ENOENT, "%s: %s", path, strerror(ENOENT));
		return error_set(err, EINVAL, "image record %s: %s (line %d)", path, je.text,
				 je.line);
	}
	out->name = layers__json_str(o, "name");
	out->digest = layers__json_str(o, "digest");
	out->manifest = layers__json_str(o, "manifest");
	out->config = layers__json_str(o, "config");
	if (!out->name || !out->digest) {
		json_decref(o);
		layers_record_clear(out);
		return error_set(err, EINVAL, "image record %s has no name or digest", path);
	}
	layers__json_strv(json_object_get(o, "layers"), &out->layers);
	layers__json_strv(json_object_get(o, "blobs"), &out->blobs);
	out->size = (long long)json_integer_value(json_object_get(o, "size"));
	out->pulled = (time_t)json_integer_value(json_object_get(o, "pulled"));
	out->last_used = (time_t)json_integer_value(json_object_get(o, "lastUsed"));
	layers__json_strv(json_object_get(o, "entrypoint"), &out->entrypoint);
	layers__json_strv(json_object_get(o, "cmd"), &out->cmd);
	layers__json_strv(json_object_get(o, "env"), &out->env);
	layers__json_strv(json_object_get(o, "exposedPorts"), &out->ports);
	out->working_dir = layers__json_str(o, "workingDir");
	out->user = layers__json_str(o, "user");
	json_decref(o);
	return 0;
}

int layers_record_read(const char *store, const char *name, struct layers_record *out,
		       struct error **err)
{
	cleanup_free char *path = layers__record_path(store, name);
	return layers__record_load(path, out, err);
}

int layers_record_remove(const char *store, const char *name, struct error **err)
{
	cleanup_free char *path = layers__record_path(store, name);
	if (unlink(path) < 0)
		return error_set(err, errno, "image %s: %s", name, strerror(errno));
	return 0;
}

static int layers__by_name(const void *a, const void *b)
{
	return strcmp(((const struct layers_record *)a)->name,
		      ((const struct layers_record *)b)->name);
}

int layers_record_list(const char *store, struct layers_record **out, size_t *n, struct error **err)
{
	*out = NULL;
	*n = 0;
	cleanup_free char *dir = xasprintf("%s/records", store);
	cleanup_dir DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : error_set(err, errno, "%s: %s", dir, strerror(errno));
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		cleanup_free char *path = xasprintf("%s/%s", dir, de->d_name);
		struct layers_record r;
		if (layers__record_load(path, &r, NULL) < 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = r;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), layers__by_name);
	return 0;
}

void layers_record_clear(struct layers_record *r)
{
	free(r->name);
	free(r->digest);
	free(r->manifest);
	free(r->config);
	strv_clear(&r->layers);
	strv_clear(&r->blobs);
	strv_clear(&r->entrypoint);
	strv_clear(&r->cmd);
	strv_clear(&r->env);
	strv_clear(&r->ports);
	free(r->working_dir);
	free(r->user);
	*r = (struct layers_record){0};
}

void layers_record_list_free(struct layers_record *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		layers_record_clear(&v[i]);
	free(v);
}

bool layers_record_complete(const char *store, const struct layers_record *r)
{
	for (size_t i = 0; i < r->layers.n; i++) {
		cleanup_free char *p = layers_layer_path(store, r->layers.v[i]);
		if (!layers__is_dir(p))
			return false;
	}
	return true;
}

void layers_touch(const char *store, const char *name)
{
	struct layers_record r;
	if (layers_record_read(store, name, &r, NULL) < 0)
		return;
	r.last_used = time(NULL);
	layers_record_write(store, &r, NULL);
	layers_record_clear(&r);
}

/* ---- pruning and GC ------------------------------------------------------ */

static bool layers__listed(const struct layers_record *v, size_t n, const char *hex, bool layer)
{
	for (size_t i = 0; i < n; i++) {
		const struct strv *s = layer ? &v[i].layers : &v[i].blobs;
		for (size_t j = 0; j < s->n; j++) {
			if (strcmp(layers__hexpart(s->v[j]), hex) == 0)
				return true;
		}
		const char *own[] = {v[i].config, v[i].digest, v[i].manifest};
		for (size_t k = 0; !layer && k < ARRAY_SIZE(own); k++) {
			if (own[k] && strcmp(layers__hexpart(own[k]), hex) == 0)
				return true;
		}
	}
	return false;
}

static long long layers__prune_dir(const char *dir, const struct layers_record *v, size_t n,
				   bool layer)
{
	long long freed = 0;
	cleanup_dir DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		/* dot names: a pull's temporary files, being written */
		if (de->d_name[0] == '.' || layers__listed(v, n, de->d_name, layer))
			continue;
		cleanup_free char *p = xasprintf("%s/%s", dir, de->d_name);
		freed += layers__rm_rf(p);
	}
	return freed;
}

int layers_prune(const char *store, long long *freed, struct error **err)
{
	struct layers_record *v;
	size_t n;
	if (layers_record_list(store, &v, &n, err) < 0)
		return -1;
	cleanup_free char *ld = xasprintf("%s/layers", store);
	cleanup_free char *bd = xasprintf("%s/blobs/sha256", store);
	long long f = layers__prune_dir(ld, v, n, true) + layers__prune_dir(bd, v, n, false);
	layers_record_list_free(v, n);
	if (freed)
		*freed = f;
	return 0;
}

int layers_usage_percent(const char *store, int *percent, struct error **err)
{
	struct statvfs sv;
	if (statvfs(store, &sv) < 0)
		return error_set(err, errno, "%s: %s", store, strerror(errno));
	if (sv.f_blocks == 0) {
		*percent = 0;
		return 0;
	}
	*percent = (int)(((sv.f_blocks - sv.f_bavail) * 100 + sv.f_blocks - 1) / sv.f_blocks);
	return 0;
}

static int layers__by_use(const void *a, const void *b)
{
	const struct layers_record *x = a, *y = b;
	return x->last_used < y->last_used ? -1 : x->last_used > y->last_used ? 1 : 0;
}

void layers_in_use(const char *state, struct strv *out)
{
	cleanup_free char *pattern = xasprintf("%s/nodes/*/pods/*/c/*/image", state);
	glob_t g;
	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		cleanup_free char *name = util_read_file(g.gl_pathv[i], NULL);
		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (*name)
			strv_add(out, name);
	}
	globfree(&g);
}

int layers_gc(const char *store, int high, int low, long long min_age_s, const struct strv *in_use,
	      int *removed, struct error **err)
{
	time_t now = time(NULL);
	*removed = 0;
	int usage;
	if (layers_usage_percent(store, &usage, err) < 0)
		return -1;
	if (usage < high)
		return 0;
	struct layers_record *v;
	size_t n;
	if (layers_record_list(store, &v, &n, err) < 0)
		return -1;
	if (n)
		qsort(v, n, sizeof(*v), layers__by_use);
	for (size_t i = 0; i < n && usage >= low; i++) {
		bool used = false;
		for (size_t j = 0; in_use && j < in_use->n && !used; j++)
			used = strcmp(in_use->v[j], v[i].name) == 0;
		if (used || now - v[i].last_used < min_age_s ||
		    layers_record_remove(store, v[i].name, NULL) < 0)
			continue;
		(*removed)++;
		if (layers_prune(store, NULL, err) < 0 ||
		    layers_usage_percent(store, &usage, err) < 0) {
			layers_record_list_free(v, n);
			return -1;
		}
	}
	layers_record_list_free(v, n);
	return 0;
}
