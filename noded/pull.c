/* pull.c: image pulls with skopeo into the layer store, checked by digest,
 * and the serialized worker that runs them off corral-noded's loop.
 * Manifests and configs are read with jansson (Debian's libjansson: a
 * small, strict JSON parser; corral writes no JSON by hand). Never writes
 * to the cluster's mount. */
#include "pull.h"
#include "imageref.h"
#include "layers.h"
#include "log.h"
#include "loop.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PULL__MEDIA_OCI_INDEX	   "application/vnd.oci.image.index.v1+json"
#define PULL__MEDIA_DOCKER_LIST	   "application/vnd.docker.distribution.manifest.list.v2+json"
#define PULL__MEDIA_DOCKER_SCHEMA1 "application/vnd.docker.distribution.manifest.v1"
#define PULL__MAX_OUTPUT	   (64 << 20)

void pull_report_clear(struct pull_report *r)
{
	free(r->name);
	free(r->digest);
	free(r->image_id);
	*r = (struct pull_report){0};
}

void pull_result_clear(struct pull_result *r)
{
	free(r->message);
	pull_report_clear(&r->report);
	*r = (struct pull_result){0};
}

static uint64_t pull__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Go's GOARCH for this machine. */
static const char *pull__arch(void)
{
	static char arch[sizeof(((struct utsname *)0)->machine)];
	struct utsname u;
	if (uname(&u) < 0)
		return "amd64";
	static const char *const map[][2] = {
	    {"x86_64", "amd64"}, {"aarch64", "arm64"},	 {"armv7l", "arm"},  {"i686", "386"},
	    {"i386", "386"},	 {"ppc64le", "ppc64le"}, {"s390x", "s390x"}, {"riscv64", "riscv64"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
		if (strcmp(u.machine, map[i][0]) == 0)
			return map[i][1];
	}
	snprintf(arch, sizeof(arch), "%s", u.machine);
	return arch;
}

/* ---- running skopeo ------------------------------------------------------ */

/* skopeo's logrus quotes its msg: \" back to " */
static void pull__unquote(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] == '"')
			r++;
		*w++ = *r;
	}
	*w = '\0';
}

/* Runs argv; its stdout into *out (NUL-terminated, *len bytes). A failure
 * says skopeo's last line of stderr. */
static int pull__run(const struct strv *argv, char **out, size_t *len, struct error **err)
{
	*out = NULL;
	*len = 0;
	int op[2], ep[2];
	if (pipe2(op, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(op[0]);
		close(op[1]);
		return error_set(err, errno, "pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(op[0]);
		close(op[1]);
		close(ep[0]);
		close(ep[1]);
		return error_set(err, e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, STDIN_FILENO);
		dup2(op[1], STDOUT_FILENO);
		dup2(ep[1], STDERR_FILENO);
		execvp(argv->v[0], argv->v);
		dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv->v[0], strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	/* both pipes at once: skopeo may fill either first */
	char *bufs[2] = {NULL, NULL};
	size_t lens[2] = {0, 0}, caps[2] = {0, 0};
	int fds[2] = {op[0], ep[0]};
	int open_fds = 2;
	while (open_fds) {
		fd_set rs;
		FD_ZERO(&rs);
		int maxfd = -1;
		for (int i = 0; i < 2; i++) {
			if (fds[i] >= 0) {
				FD_SET(fds[i], &rs);
				if (fds[i] > maxfd)
					maxfd = fds[i];
			}
		}
		if (select(maxfd + 1, &rs, NULL, NULL, NULL) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0 || !FD_ISSET(fds[i], &rs))
				continue;
			if (caps[i] - lens[i] < 65536) {
				caps[i] = caps[i] ? caps[i] * 2 : 65536 * 2;
				bufs[i] = xrealloc(bufs[i], caps[i] + 1);
			}
			ssize_t n = read(fds[i], bufs[i] + lens[i], caps[i] - lens[i]);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || lens[i] + (size_t)n > PULL__MAX_OUTPUT) {
				close(fds[i]);
				fds[i] = -1;
				open_fds--;
				continue;
			}
			lens[i] += (size_t)n;
		}
	}
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		if (!bufs[i])
			bufs[i] = xmalloc(1);
		bufs[i][lens[i]] = '\0';
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		/* skopeo's message is its last line: `time="..." level=fatal msg="..."` */
		char *e = bufs[1];
		while (lens[1] && (e[lens[1] - 1] == '\n' || e[lens[1] - 1] == '\r'))
			e[--lens[1]] = '\0';
		char *last = strrchr(e, '\n');
		last = last ? last + 1 : e;
		char *msg = strstr(last, "msg=\"");
		if (msg) {
			msg += 5;
			size_t n = strlen(msg);
			if (n && msg[n - 1] == '"')
				msg[n - 1] = '\0';
		} else {
			msg = last;
		}
		pull__unquote(msg);
		error_set(err, EIO, "%s", *msg ? msg : "skopeo failed without a message");
		free(bufs[0]);
		free(bufs[1]);
		return -EIO;
	}
	free(bufs[1]);
	*out = bufs[0];
	*len = lens[0];
	return 0;
}

/* ---- what to ask, and how ------------------------------------------------ */

/* One place to pull from: the registry, or a mirror of docker.io. */
struct pull__source {
	char *repo; /* "127.0.0.1:5000/team/app" */
	bool plain_http;
	const char *archive; /* instead: "docker-archive:FILE", "oci-archive:FILE" */
};

static bool pull__listed(const struct strv *l, const char *host)
{
	for (size_t i = 0; l && i < l->n; i++) {
		if (strcmp(l->v[i], host) == 0)
			return true;
	}
	return false;
}

struct pull__ctx {
	const struct pull_opts *o;
	char *authfile; /* a temporary 0600 merge of the credentials, or NULL */
	char *tmpdir;
};

static void pull__common(const struct pull__ctx *cx, struct strv *argv)
{
	strv_add(argv, cx->o->skopeo ? cx->o->skopeo : "skopeo");
	strv_add(argv, "--insecure-policy");
	strv_add(argv, "--override-os=linux");
	strv_addf(argv, "--override-arch=%s", cx->o->arch ? cx->o->arch : pull__arch());
	strv_addf(argv, "--tmpdir=%s", cx->tmpdir);
}

static void pull__src_opts(const struct pull__ctx *cx, const struct pull__source *s,
			   struct strv *argv, const char *prefix)
{
	if (s->plain_http)
		strv_addf(argv, "--%stls-verify=false", prefix);
	if (cx->authfile)
		strv_addf(argv, "--%sauthfile=%s", prefix, cx->authfile);
}

/* skopeo inspect --raw [--config] docker://REPO@DIGEST or :TAG. */
static int pull__inspect(const struct pull__ctx *cx, const struct pull__source *s, const char *what,
			 bool config, char **out, size_t *len, struct error **err)
{
	struct strv argv = {0};
	pull__common(cx, &argv);
	strv_add(&argv, "inspect");
	strv_add(&argv, "--raw");
	if (config)
		strv_add(&argv, "--config");
	pull__src_opts(cx, s, &argv, "");
	if (s->archive)
		strv_add(&argv, s->archive);
	else
		strv_addf(&argv, "docker://%s%s", s->repo, what);
	int r = pull__run(&argv, out, len, err);
	strv_clear(&argv);
	return r;
}

/* Merges the auths of every dockerconfigjson document (the file's first,
 * then the pod's secrets, which win) into a temporary 0600 file. */
static int pull__authfile(struct pull__ctx *cx, const struct strv *auths, struct error **err)
{
	const struct pull_opts *o = cx->o;
	if (!o->auth_file && (!auths || !auths->n))
		return 0;
	json_t *merged = json_object();
	json_t *all = json_object();
	json_object_set_new(merged, "auths", all);
	if (o->auth_file) {
		json_error_t je;
		json_t *f = json_load_file(o->auth_file, 0, &je);
		if (!f) {
			json_decref(merged);
			return error_set(err, EINVAL, "registry-auth-file %s: %s", o->auth_file,
					 je.text);
		}
		json_object_update(all, json_object_get(f, "auths"));
		json_decref(f);
	}
	for (size_t i = 0; auths && i < auths->n; i++) {
		json_t *d = json_loads(auths->v[i], 0, NULL);
		if (!d)
			continue; /* an unreadable secret is skipped, as the kubelet does */
		json_t *a = json_object_get(d, "auths");
		if (json_is_object(a))
			json_object_update(all, a);
		json_decref(d);
	}
	cx->authfile = xasprintf("%s/auth.json", cx->tmpdir);
	int r = json_dump_file(merged, cx->authfile, JSON_COMPACT);
	json_decref(merged);
	chmod(cx->authfile, 0600);
	if (r < 0)
		return error_set(err, EIO, "cannot write %s", cx->authfile);
	return 0;
}

/* ---- manifests ----------------------------------------------------------- */

struct pull__manifest {
	char *config;
	long long config_size;
	struct strv layers; /* blob digests */
	long long size;	    /* config and layers */
};

static void pull__manifest_clear(struct pull__manifest *m)
{
	free(m->config);
	strv_clear(&m->layers);
	*m = (struct pull__manifest){0};
}

static bool pull__is_index(json_t *doc)
{
	const char *mt = json_string_value(json_object_get(doc, "mediaType"));
	if (mt)
		return strcmp(mt, PULL__MEDIA_OCI_INDEX) == 0 ||
		       strcmp(mt, PULL__MEDIA_DOCKER_LIST) == 0;
	return json_is_array(json_object_get(doc, "manifests"));
}

/* The index entry of linux/arch. */
static int pull__choose(json_t *index, const char *ref, const char *arch, char **digest,
			struct error **err)
{
	json_t *list = json_object_get(index, "manifests");
	size_t i;
	json_t *m;
	cleanup_free char *seen = xstrdup("");
	json_array_foreach(list, i, m)
	{
		json_t *p = json_object_get(m, "platform");
		const char *os = json_string_value(json_object_get(p, "os"));
		const char *a = json_string_value(json_object_get(p, "architecture"));
		const char *d = json_string_value(json_object_get(m, "digest"));
		if (os && a && d && strcmp(os, "linux") == 0 && strcmp(a, arch) == 0 &&
		    imageref_is_digest(d)) {
			*digest = xstrdup(d);
			return 0;
		}
		char *next =
		    xasprintf("%s%s%s/%s", seen, *seen ? ", " : "", os ? os : "?", a ? a : "?");
		free(seen);
		seen = next;
	}
	return error_set(err, ENOENT,
			 "no image for linux/%s in the manifest list of %s (it has: %s)", arch, ref,
			 *seen ? seen : "nothing");
}

static int pull__manifest_parse(json_t *doc, const char *ref, struct pull__manifest *out,
				struct error **err)
{
	*out = (struct pull__manifest){0};
	const char *mt = json_string_value(json_object_get(doc, "mediaType"));
	json_int_t sv = json_integer_value(json_object_get(doc, "schemaVersion"));
	if (sv == 1 || (mt && strncmp(mt, PULL__MEDIA_DOCKER_SCHEMA1,
				      strlen(PULL__MEDIA_DOCKER_SCHEMA1)) == 0))
		return error_set(err, ENOTSUP,
				 "%s is a Docker v2 schema 1 image, which corral does not pull "
				 "(push it again with a current client)",
				 ref);
	json_t *cfg = json_object_get(doc, "config");
	const char *cd = json_string_value(json_object_get(cfg, "digest"));
	json_t *layers = json_object_get(doc, "layers");
	if (!cd || !imageref_is_digest(cd) || !json_is_array(layers))
		return error_set(err, EINVAL, "the manifest of %s has no config or no layers", ref);
	out->config = xstrdup(cd);
	out->config_size = json_integer_value(json_object_get(cfg, "size"));
	out->size = out->config_size;
	size_t i;
	json_t *l;
	json_array_foreach(layers, i, l)
	{
		const char *d = json_string_value(json_object_get(l, "digest"));
		if (!d || !imageref_is_digest(d)) {
			pull__manifest_clear(out);
			return error_set(err, EINVAL, "the manifest of %s: layer %zu has no digest",
					 ref, i);
		}
		strv_add(&out->layers, d);
		out->size += json_integer_value(json_object_get(l, "size"));
	}
	return 0;
}

static void pull__json_strv(json_t *a, struct strv *out)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (json_is_string(v))
			strv_add(out, json_string_value(v));
	}
}

/* The image config into the record; its diffIDs must pair with layers. */
static int pull__config_parse(const char *text, size_t len, const char *ref, size_t nlayers,
			      struct layers_record *r, struct error **err)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, 0, &je);
	if (!doc)
		return error_set(err, EINVAL, "the config of %s is not JSON: %s", ref, je.text);
	json_t *c = json_object_get(doc, "config");
	pull__json_strv(json_object_get(c, "Entrypoint"), &r->entrypoint);
	pull__json_strv(json_object_get(c, "Cmd"), &r->cmd);
	pull__json_strv(json_object_get(c, "Env"), &r->env);
	const char *wd = json_string_value(json_object_get(c, "WorkingDir"));
	if (wd && *wd)
		r->working_dir = xstrdup(wd);
	const char *user = json_string_value(json_object_get(c, "User"));
	if (user && *user)
		r->user = xstrdup(user);
	const char *port;
	json_t *v;
	json_object_foreach(json_object_get(c, "ExposedPorts"), port, v) strv_add(&r->ports, port);
	json_t *ids = json_object_get(json_object_get(doc, "rootfs"), "diff_ids");
	size_t i;
	json_array_foreach(ids, i, v)
	{
		const char *d = json_string_value(v);
		if (!d || !imageref_is_digest(d)) {
			json_decref(doc);
			return error_set(err, EINVAL,
					 "the config of %s: diff_ids[%zu] is no digest", ref, i);
		}
		strv_add(&r->layers, d);
	}
	json_decref(doc);
	if (r->layers.n != nlayers)
		return error_set(err, EINVAL, "the config of %s names %zu layers, its manifest %zu",
				 ref, r->layers.n, nlayers);
	return 0;
}

/* Writes bytes whose digest was checked into the store's blobs. */
static int pull__keep_blob(const char *store, const char *digest, const char *p, size_t n,
			   struct error **err)
{
	cleanup_free char *path = layers_blob_path(store, digest);
	cleanup_free char *tmp = xasprintf("%s.%d", path, (int)getpid());
	cleanup_free char *dir = xasprintf("%s/blobs/sha256", store);
	util_mkdir_p(dir, 0755);
	cleanup_close int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || util_write_all(fd, p, n) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_set(err, e, "%s: %s", path, strerror(e));
	}
	return 0;
}

static bool pull__exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* ---- unpacking while skopeo fetches -------------------------------------- */

/* Starts argv, its stdout to /dev/null and its stderr to errpath. */
static pid_t pull__spawn(const struct strv *argv, const char *errpath, struct error **err)
{
	pid_t pid = fork();
	if (pid < 0)
		return error_set(err, errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(e >= 0 ? e : null, STDERR_FILENO);
		execvp(argv->v[0], argv->v);
		dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv->v[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* skopeo's message from its stderr file: the last line's msg="...". */
static char *pull__skopeo_msg(const char *errpath)
{
	cleanup_free char *text = util_read_file(errpath, NULL);
	if (!text || !*text)
		return xstrdup("skopeo failed without a message");
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	char *last = strrchr(text, '\n');
	last = last ? last + 1 : text;
	char *msg = strstr(last, "msg=\"");
	if (!msg)
		return xstrdup(last);
	msg += 5;
	n = strlen(msg);
	if (n && msg[n - 1] == '"')
		msg[n - 1] = '\0';
	pull__unquote(msg);
	return xstrdup(msg);
}

struct pull__unpacker {
	pid_t pid;
	int fd; /* its error message */
	size_t layer;
};

static int pull__unpack_wait(struct pull__unpacker *u, struct error **err)
{
	char msg[1024];
	ssize_t n = read(u->fd, msg, sizeof(msg) - 1);
	close(u->fd);
	int st = 0;
	while (waitpid(u->pid, &st, 0) < 0 && errno == EINTR)
		;
	u->pid = 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	msg[n > 0 ? n : 0] = '\0';
	return error_set(err, EBADMSG, "%s", *msg ? msg : "a layer did not unpack");
}

static bool pull__listed_in(const struct strv *l, const char *s)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

/* Unpacks every layer not yet unpacked, up to one process per CPU, each
 * as soon as its blob is in the store (copy: the skopeo fetching them, or
 * -1); blobs in fresh are checked against their digest as they unpack. */
static int pull__unpack_all(const char *store, const struct strv *blobs, const struct strv *diffids,
			    const struct strv *fresh, pid_t copy, const char *copy_err,
			    struct error **err)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t max = cpus > 0 ? (size_t)cpus : 1;
	size_t n = blobs->n;
	bool *started = xcalloc(n ? n : 1, sizeof(bool));
	struct pull__unpacker *run = xcalloc(max, sizeof(*run));
	size_t nrun = 0;
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *lp = layers_layer_path(store, diffids->v[i]);
		started[i] = pull__exists(lp);
	}
	for (;;) {
		bool copying = copy > 0;
		if (copying) {
			int st;
			pid_t w = waitpid(copy, &st, WNOHANG);
			if (w == copy) {
				copy = -1;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
					char *m = pull__skopeo_msg(copy_err);
					r = error_set(err, EIO, "copying the layers: %s", m);
					free(m);
					break;
				}
			}
		}
		/* start what can start */
		bool pending = false;
		for (size_t i = 0; i < n && r == 0; i++) {
			if (started[i])
				continue;
			cleanup_free char *bp = layers_blob_path(store, blobs->v[i]);
			if (!pull__exists(bp)) {
				if (copy <= 0) {
					r = error_set(err, ENOENT, "layer %s was not fetched",
						      blobs->v[i]);
					break;
				}
				pending = true;
				continue;
			}
			if (nrun == max) {
				pending = true;
				continue;
			}
			int fds[2];
			if (pipe2(fds, O_CLOEXEC) < 0) {
				r = error_set(err, errno, "pipe: %s", strerror(errno));
				break;
			}
			pid_t pid = fork();
			if (pid == 0) {
				close(fds[0]);
				struct error *e = NULL;
				const char *check =
				    pull__listed_in(fresh, blobs->v[i]) ? blobs->v[i] : NULL;
				if (layers_unpack(store, bp, check, diffids->v[i], &e) < 0) {
					util_write_all(fds[1], e->msg, strlen(e->msg));
					_exit(1);
				}
				_exit(0);
			}
			close(fds[1]);
			if (pid < 0) {
				close(fds[0]);
				r = error_set(err, errno, "fork: %s", strerror(errno));
				break;
			}
			run[nrun++] = (struct pull__unpacker){pid, fds[0], i};
			started[i] = true;
		}
		if (r < 0)
			break;
		if (!nrun && !pending && copy <= 0)
			break;
		/* wait for an unpacker to end, or a blob to come */
		struct pollfd pfd[64];
		size_t np = 0;
		for (size_t k = 0; k < nrun && np < 64; k++)
			pfd[np++] = (struct pollfd){.fd = run[k].fd, .events = POLLIN};
		poll(pfd, np, copy > 0 || pending ? 20 : -1);
		for (size_t k = 0; k < nrun;) {
			struct pollfd one = {.fd = run[k].fd, .events = POLLIN};
			if (poll(&one, 1, 0) <= 0) {
				k++;
				continue;
			}
			r = pull__unpack_wait(&run[k], err);
			run[k] = run[--nrun];
			if (r < 0)
				break;
		}
		if (r < 0)
			break;
	}
	for (size_t k = 0; k < nrun; k++) {
		kill(run[k].pid, SIGKILL);
		pull__unpack_wait(&run[k], NULL);
	}
	if (copy > 0) {
		kill(copy, SIGKILL);
		waitpid(copy, NULL, 0);
	}
	free(run);
	free(started);
	return r;
}

/* ---- a pull -------------------------------------------------------------- */

static void pull__say(const struct pull_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void pull__say(const struct pull_opts *o, const char *fmt, ...)
{
	if (o->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static int pull__from(struct pull__ctx *cx, const struct imageref *ir, const char *name,
		      const struct pull__source *src, bool always, struct pull_report *out,
		      struct error **err)
{
	const struct pull_opts *o = cx->o;
	const char *store = o->store;
	uint64_t t0 = pull__now_ms();
	const char *arch = o->arch ? o->arch : pull__arch();
	/* 1. the manifest the reference names, checked */
	cleanup_free char *what =
	    ir->digest ? xasprintf("@%s", ir->digest) : xasprintf(":%s", ir->tag);
	cleanup_free char *top = NULL;
	size_t toplen;
	(void)always; /* the caller asks only when the policy says to */
	if (pull__inspect(cx, src, what, false, &top, &toplen, err) < 0) {
		error_prefix(err, "reading the manifest of %s", name);
		return -1;
	}
	char digest[LAYERS_DIGEST_SIZE];
	layers_sha256(top, toplen, digest);
	if (ir->digest && strcmp(digest, ir->digest) != 0)
		return error_set(err, EBADMSG,
				 "manifest digest mismatch for %s: the registry sent %s", name,
				 digest);
	/* an unchanged image that is all here: nothing to fetch */
	struct layers_record have;
	if (layers_record_read(store, name, &have, NULL) == 0) {
		bool same =
		    strcmp(have.digest, digest) == 0 && layers_record_complete(store, &have);
		if (same) {
			have.last_used = time(NULL);
			layers_record_write(store, &have, NULL);
			out->name = xstrdup(name);
			out->digest = xstrdup(digest);
			out->size = have.size;
			out->fetched = false;
			out->took_ms = pull__now_ms() - t0;
			out->image_id = xasprintf("%s/%s@%s", ir->domain, ir->path, digest);
			layers_record_clear(&have);
			pull__say(o, "%s: up to date (%s)", name, digest);
			return 0;
		}
		layers_record_clear(&have);
	}
	json_error_t je;
	json_t *doc = json_loadb(top, toplen, 0, &je);
	if (!doc)
		return error_set(err, EINVAL, "the manifest of %s is not JSON: %s", name, je.text);
	cleanup_free char *mdigest = xstrdup(digest);
	cleanup_free char *mtext = NULL;
	size_t mlen = 0;
	if (pull__is_index(doc) && src->archive) {
		json_decref(doc);
		return error_set(
		    err, ENOTSUP,
		    "%s holds a manifest list: import one platform's image (skopeo copy "
		    "--override-arch)",
		    src->archive);
	}
	if (pull__is_index(doc)) {
		cleanup_free char *chosen = NULL;
		int r = pull__choose(doc, name, arch, &chosen, err);
		json_decref(doc);
		if (r < 0)
			return -1;
		cleanup_free char *at = xasprintf("@%s", chosen);
		if (pull__inspect(cx, src, at, false, &mtext, &mlen, err) < 0) {
			error_prefix(err, "reading the linux/%s manifest of %s", arch, name);
			return -1;
		}
		char md[LAYERS_DIGEST_SIZE];
		layers_sha256(mtext, mlen, md);
		if (strcmp(md, chosen) != 0)
			return error_set(err, EBADMSG,
					 "manifest digest mismatch for %s: the list names %s, the "
					 "registry sent %s",
					 name, chosen, md);
		free(mdigest);
		mdigest = xstrdup(chosen);
		doc = json_loadb(mtext, mlen, 0, &je);
		if (!doc)
			return error_set(err, EINVAL, "the manifest of %s is not JSON: %s", name,
					 je.text);
		if (pull__is_index(doc)) {
			json_decref(doc);
			return error_set(err, EINVAL, "%s: a manifest list inside a manifest list",
					 name);
		}
	}
	struct pull__manifest m;
	int r = pull__manifest_parse(doc, name, &m, err);
	json_decref(doc);
	if (r < 0)
		return -1;
	struct layers_record rec = {0};
	/* 2. the config, checked, kept */
	cleanup_free char *ctext = NULL;
	size_t clen = 0;
	cleanup_free char *at = xasprintf("@%s", mdigest);
	if (pull__inspect(cx, src, at, true, &ctext, &clen, err) < 0) {
		error_prefix(err, "reading the config of %s", name);
		goto fail;
	}
	char cd[LAYERS_DIGEST_SIZE];
	layers_sha256(ctext, clen, cd);
	if (strcmp(cd, m.config) != 0) {
		error_set(err, EBADMSG,
			  "config digest mismatch for %s: the manifest names %s, the registry "
			  "sent %s",
			  name, m.config, cd);
		goto fail;
	}
	if (pull__config_parse(ctext, clen, name, m.layers.n, &rec, err) < 0 ||
	    pull__keep_blob(store, m.config, ctext, clen, err) < 0)
		goto fail;
	/* 3. the layer blobs it lacks (neither unpacked nor downloaded) */
	bool need = false;
	for (size_t i = 0; i < m.layers.n && !need; i++) {
		cleanup_free char *lp = layers_layer_path(store, rec.layers.v[i]);
		cleanup_free char *bp = layers_blob_path(store, m.layers.v[i]);
		need = !pull__exists(lp) && !pull__exists(bp);
	}
	struct strv fresh = {0}; /* blobs this pull brought: checked below */
	if (need) {
		for (size_t i = 0; i < m.layers.n; i++) {
			cleanup_free char *bp = layers_blob_path(store, m.layers.v[i]);
			if (!pull__exists(bp))
				strv_add(&fresh, m.layers.v[i]);
		}
		pull__say(o, "%s: fetching %zu of %zu layers", name, fresh.n, m.layers.n);
	}
	if (need && src->archive) {
		/* dir: keeps an archive's layers as they are (uncompressed),
		 * as its manifest names them; then into the store */
		cleanup_free char *dir = xasprintf("%s/dir", cx->tmpdir);
		struct strv argv = {0};
		pull__common(cx, &argv);
		strv_add(&argv, "copy");
		strv_add(&argv, "--quiet");
		strv_add(&argv, src->archive);
		strv_addf(&argv, "dir:%s", dir);
		char *junk = NULL;
		size_t jl;
		r = pull__run(&argv, &junk, &jl, err);
		free(junk);
		strv_clear(&argv);
		for (size_t i = 0; r == 0 && i < fresh.n; i++) {
			cleanup_free char *from = xasprintf("%s/%s", dir, fresh.v[i] + 7);
			cleanup_free char *to = layers_blob_path(store, fresh.v[i]);
			if (rename(from, to) < 0)
				r = error_set(err, errno, "%s: %s", from, strerror(errno));
		}
		if (r < 0) {
			strv_clear(&fresh);
			error_prefix(err, "copying the layers of %s", name);
			goto fail;
		}
	}
	pid_t copy = -1;
	cleanup_free char *copy_err = xasprintf("%s/copy.err", cx->tmpdir);
	cleanup_free char *index = xasprintf("%s/index.json", store);
	if (need && !src->archive) {
		/* skopeo keeps one index.json; the store never reads it */
		unlink(index);
		struct strv argv = {0};
		pull__common(cx, &argv);
		strv_add(&argv, "copy");
		strv_add(&argv, "--quiet");
		pull__src_opts(cx, src, &argv, "src-");
		strv_addf(&argv, "docker://%s@%s", src->repo, mdigest);
		strv_addf(&argv, "oci:%s:corral-pull", store);
		copy = pull__spawn(&argv, copy_err, err);
		strv_clear(&argv);
		if (copy < 0) {
			strv_clear(&fresh);
			goto fail;
		}
	}
	/* 4. each layer unpacked once, as soon as its blob is there: while
	 * skopeo still fetches the others */
	r = pull__unpack_all(store, &m.layers, &rec.layers, &fresh, copy, copy_err, err);
	if (copy > 0)
		unlink(index);
	if (r < 0) {
		strv_clear(&fresh);
		error_prefix(err, "%s", name);
		goto fail;
	}
	/* fresh blobs of layers that were already unpacked: checked apart */
	for (size_t i = 0; i < fresh.n; i++) {
		cleanup_free char *bp = layers_blob_path(store, fresh.v[i]);
		char got[LAYERS_DIGEST_SIZE];
		if (!pull__exists(bp))
			continue;
		if (layers_sha256_file(bp, got, err) < 0) {
			strv_clear(&fresh);
			goto fail;
		}
		if (strcmp(got, fresh.v[i]) != 0) {
			unlink(bp);
			error_set(err, EBADMSG,
				  "layer digest mismatch for %s: the manifest names %s, the "
				  "registry sent %s",
				  name, fresh.v[i], got);
			strv_clear(&fresh);
			goto fail;
		}
	}
	strv_clear(&fresh);
	/* 5. the record */
	rec.name = xstrdup(name);
	rec.digest = xstrdup(digest);
	rec.manifest = xstrdup(mdigest);
	rec.config = xstrdup(m.config);
	for (size_t i = 0; i < m.layers.n; i++)
		strv_add(&rec.blobs, m.layers.v[i]);
	rec.size = m.size;
	rec.pulled = rec.last_used = time(NULL);
	if (layers_record_write(store, &rec, err) < 0)
		goto fail;
	out->name = xstrdup(name);
	out->digest = xstrdup(digest);
	out->size = m.size;
	out->fetched = true;
	out->took_ms = pull__now_ms() - t0;
	out->image_id = xasprintf("%s/%s@%s", ir->domain, ir->path, digest);
	pull__say(o, "%s: pulled %s (%lld bytes, %zu layers)", name, digest, m.size, m.layers.n);
	layers_record_clear(&rec);
	pull__manifest_clear(&m);
	return 0;
fail:
	layers_record_clear(&rec);
	pull__manifest_clear(&m);
	return -1;
}

/* Strips a mirror's scheme and trailing '/': whether it said http://. */
static char *pull__mirror_host(const char *m, bool *plain)
{
	*plain = strncmp(m, "http://", 7) == 0;
	const char *h = *plain ? m + 7 : strncmp(m, "https://", 8) == 0 ? m + 8 : m;
	char *s = xstrdup(h);
	size_t n = strlen(s);
	while (n && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static void pull__rm_tmp(const char *dir)
{
	cleanup_free char *a = xasprintf("%s/auth.json", dir);
	unlink(a);
	struct strv argv = {0};
	strv_add(&argv, "rm");
	strv_add(&argv, "-rf");
	strv_add(&argv, dir);
	char *o = NULL;
	size_t n;
	pull__run(&argv, &o, &n, NULL);
	free(o);
	strv_clear(&argv);
}

int pull_run(const struct pull_opts *o, const char *ref, const struct strv *auths, bool always,
	     struct pull_report *out, struct error **err)
{
	*out = (struct pull_report){0};
	struct imageref ir;
	if (imageref_parse(ref, &ir, err) < 0)
		return -1;
	cleanup_free char *name = imageref_string(&ir);
	struct pull__ctx cx = {.o = o};
	cleanup_free char *tmpbase = xasprintf("%s/tmp", o->store);
	util_mkdir_p(tmpbase, 0700);
	cx.tmpdir = xasprintf("%s/pull-XXXXXX", tmpbase);
	if (!mkdtemp(cx.tmpdir)) {
		int e = errno;
		free(cx.tmpdir);
		imageref_clear(&ir);
		return error_set(err, e, "%s: %s", tmpbase, strerror(e));
	}
	int r = pull__authfile(&cx, auths, err);
	/* docker.io's mirrors first, as docker's registry-mirrors */
	bool hub = strcmp(ir.domain, "docker.io") == 0;
	for (size_t i = 0; r == 0 && hub && o->mirrors && i < o->mirrors->n; i++) {
		bool plain;
		cleanup_free char *host = pull__mirror_host(o->mirrors->v[i], &plain);
		struct pull__source s = {xasprintf("%s/%s", host, ir.path),
					 plain || pull__listed(o->insecure, host), NULL};
		struct error *merr = NULL;
		int mr = pull__from(&cx, &ir, name, &s, always, out, &merr);
		free(s.repo);
		if (mr == 0)
			goto done;
		pull__say(o, "%s: mirror %s: %s", name, host, merr->msg);
		log_info("pull %s: mirror %s: %s", name, host, merr->msg);
		error_free(merr);
	}
	if (r == 0) {
		struct pull__source s = {imageref_repo(&ir), pull__listed(o->insecure, ir.domain),
					 NULL};
		r = pull__from(&cx, &ir, name, &s, always, out, err);
		free(s.repo);
	}
done:
	pull__rm_tmp(cx.tmpdir);
	free(cx.tmpdir);
	free(cx.authfile);
	imageref_clear(&ir);
	return r;
}

/* The name an archive carries: docker save's RepoTags[0], or an OCI
 * archive's image name annotation. NULL if none. */
static char *pull__archive_name(const char *file, bool oci)
{
	struct strv argv = {0};
	strv_add(&argv, "tar");
	strv_add(&argv, "-xOf");
	strv_add(&argv, file);
	strv_add(&argv, oci ? "index.json" : "manifest.json");
	char *text = NULL;
	size_t len = 0;
	int r = pull__run(&argv, &text, &len, NULL);
	strv_clear(&argv);
	if (r < 0)
		return NULL;
	json_t *doc = json_loadb(text, len, 0, NULL);
	free(text);
	const char *name = NULL;
	if (!oci) {
		name = json_string_value(
		    json_array_get(json_object_get(json_array_get(doc, 0), "RepoTags"), 0));
	} else {
		json_t *a = json_object_get(json_array_get(json_object_get(doc, "manifests"), 0),
					    "annotations");
		name = json_string_value(json_object_get(a, "io.containerd.image.name"));
		if (!name)
			name = json_string_value(
			    json_object_get(a, "org.opencontainers.image.ref.name"));
	}
	char *out = name ? xstrdup(name) : NULL;
	json_decref(doc);
	return out;
}

int pull_import(const struct pull_opts *o, const char *file, const char *name,
		struct pull_report *out, struct error **err)
{
	*out = (struct pull_report){0};
	struct strv argv = {0};
	strv_add(&argv, "tar");
	strv_add(&argv, "-tf");
	strv_add(&argv, file);
	cleanup_free char *members = NULL;
	size_t mlen = 0;
	int tr = pull__run(&argv, &members, &mlen, err);
	strv_clear(&argv);
	if (tr < 0) {
		error_prefix(err, "%s is no tar", file);
		return -1;
	}
	bool oci = strncmp(members, "oci-layout\n", 11) == 0 || strstr(members, "\noci-layout\n") ||
		   strstr(members, "./oci-layout\n");
	cleanup_free char *carried = name ? NULL : pull__archive_name(file, oci);
	if (!name && !carried)
		return error_set(err, EINVAL,
				 "%s names no image: say which (corral image import %s NAME)", file,
				 file);
	struct imageref ir;
	if (imageref_parse(name ? name : carried, &ir, err) < 0)
		return -1;
	if (ir.digest) {
		imageref_clear(&ir);
		return error_set(err, EINVAL,
				 "an imported image is named with a tag, not a digest");
	}
	cleanup_free char *norm = imageref_string(&ir);
	cleanup_free char *abs = realpath(file, NULL);
	if (!abs) {
		imageref_clear(&ir);
		return error_set(err, errno, "%s: %s", file, strerror(errno));
	}
	cleanup_free char *src_ref =
	    xasprintf("%s:%s", oci ? "oci-archive" : "docker-archive", abs);
	struct pull__ctx cx = {.o = o};
	cleanup_free char *tmpbase = xasprintf("%s/tmp", o->store);
	util_mkdir_p(tmpbase, 0700);
	cx.tmpdir = xasprintf("%s/import-XXXXXX", tmpbase);
	if (!mkdtemp(cx.tmpdir)) {
		int e = errno;
		free(cx.tmpdir);
		imageref_clear(&ir);
		return error_set(err, e, "%s: %s", tmpbase, strerror(e));
	}
	struct pull__source s = {imageref_repo(&ir), false, src_ref};
	int r = pull__from(&cx, &ir, norm, &s, true, out, err);
	free(s.repo);
	pull__rm_tmp(cx.tmpdir);
	free(cx.tmpdir);
	imageref_clear(&ir);
	return r;
}

/* ---- the worker on the loop ---------------------------------------------- */

struct pull__job {
	uint64_t id;
	char *ref;
	char *key; /* ref, always, credentials: what makes two requests one */
	struct strv auths;
	bool always;
	bool gc; /* not a pull: the image GC */
	struct strv in_use;
};

struct pull__req {
	uint64_t id;
	uint64_t job;	  /* the job's id while it waits or runs */
	uint64_t asked;	  /* loop_now_ms() */
	uint64_t done_at; /* 0: not yet */
	struct pull_result res;
};

struct puller {
	struct loop *loop;
	struct pull_opts o;
	char *store, *state, *skopeo, *auth_file;
	struct strv insecure, mirrors;
	void (*done)(void *data);
	void *data;
	struct pull__job **queue; /* queue[0] runs when worker > 0 */
	size_t nqueue;
	struct pull__req *reqs;
	size_t nreqs;
	uint64_t next_id;
	pid_t worker;
	int fd; /* the worker's result pipe */
	char *buf;
	size_t len;
};

static void pull__job_free(struct pull__job *j)
{
	if (!j)
		return;
	free(j->ref);
	free(j->key);
	strv_clear(&j->auths);
	strv_clear(&j->in_use);
	free(j);
}

struct puller *puller_new(struct loop *loop, const struct pull_opts *o, void (*done)(void *data),
			  void *data)
{
	struct puller *p = xcalloc(1, sizeof(*p));
	p->loop = loop;
	p->o = *o;
	p->store = xstrdup(o->store);
	p->state = o->state ? xstrdup(o->state) : NULL;
	p->o.state = p->state;
	p->skopeo = o->skopeo ? xstrdup(o->skopeo) : NULL;
	p->auth_file = o->auth_file ? xstrdup(o->auth_file) : NULL;
	for (size_t i = 0; o->insecure && i < o->insecure->n; i++)
		strv_add(&p->insecure, o->insecure->v[i]);
	for (size_t i = 0; o->mirrors && i < o->mirrors->n; i++)
		strv_add(&p->mirrors, o->mirrors->v[i]);
	p->o.store = p->store;
	p->o.skopeo = p->skopeo;
	p->o.auth_file = p->auth_file;
	p->o.insecure = &p->insecure;
	p->o.mirrors = &p->mirrors;
	p->o.quiet = true;
	p->done = done;
	p->data = data;
	p->fd = -1;
	p->next_id = 1;
	return p;
}

void puller_free(struct puller *p)
{
	if (!p)
		return;
	if (p->worker > 0) {
		kill(p->worker, SIGKILL);
		waitpid(p->worker, NULL, 0);
	}
	if (p->fd >= 0) {
		loop_del_fd(p->loop, p->fd);
		close(p->fd);
	}
	for (size_t i = 0; i < p->nqueue; i++)
		pull__job_free(p->queue[i]);
	free(p->queue);
	for (size_t i = 0; i < p->nreqs; i++)
		pull_result_clear(&p->reqs[i].res);
	free(p->reqs);
	free(p->buf);
	free(p->store);
	free(p->state);
	free(p->skopeo);
	free(p->auth_file);
	strv_clear(&p->insecure);
	strv_clear(&p->mirrors);
	free(p);
}

/* The worker: one job, its result as JSON on fd. */
static void __attribute__((noreturn)) pull__work(struct puller *p, struct pull__job *j, int fd)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	json_t *res = json_object();
	struct error *err = NULL;
	if (j->gc) {
		int removed = 0;
		long long freed = 0;
		if (p->o.state)
			layers_in_use(p->o.state, &j->in_use);
		int r = layers_gc(p->store, p->o.gc_high, p->o.gc_low, p->o.gc_min_age_s,
				  &j->in_use, &removed, &err);
		json_object_set_new(res, "ok", json_boolean(r == 0));
		json_object_set_new(res, "removed", json_integer(removed));
		json_object_set_new(res, "freed", json_integer(freed));
	} else {
		struct pull_report rep;
		int r = pull_run(&p->o, j->ref, &j->auths, j->always, &rep, &err);
		json_object_set_new(res, "ok", json_boolean(r == 0));
		if (r == 0) {
			json_object_set_new(res, "name", json_string(rep.name));
			json_object_set_new(res, "digest", json_string(rep.digest));
			json_object_set_new(res, "imageID", json_string(rep.image_id));
			json_object_set_new(res, "size", json_integer(rep.size));
			json_object_set_new(res, "fetched", json_boolean(rep.fetched));
			json_object_set_new(res, "tookMs", json_integer((json_int_t)rep.took_ms));
			pull_report_clear(&rep);
		}
	}
	if (err)
		json_object_set_new(res, "error", json_string(err->msg));
	char *text = json_dumps(res, JSON_COMPACT);
	if (text)
		util_write_all(fd, text, strlen(text));
	_exit(0);
}

static void pull__next(struct puller *p);

static void pull__finish(struct puller *p, json_t *res, const char *fallback)
{
	struct pull__job *j = p->queue[0];
	memmove(p->queue, p->queue + 1, (p->nqueue - 1) * sizeof(*p->queue));
	p->nqueue--;
	bool ok = res && json_is_true(json_object_get(res, "ok"));
	const char *msg = res ? json_string_value(json_object_get(res, "error")) : NULL;
	if (j->gc) {
		json_int_t removed = res ? json_integer_value(json_object_get(res, "removed")) : 0;
		if (!ok)
			log_warn("image GC: %s", msg ? msg : fallback);
		else if (removed)
			log_info("image GC removed %lld unused images", (long long)removed);
	}
	uint64_t now = loop_now_ms();
	for (size_t i = 0; i < p->nreqs; i++) {
		struct pull__req *q = &p->reqs[i];
		if (q->job != j->id || q->done_at)
			continue;
		q->done_at = now ? now : 1;
		q->res.waited_ms = now - q->asked;
		if (ok) {
			q->res.state = PULL_OK;
			struct pull_report *r = &q->res.report;
			const char *s;
			r->name = (s = json_string_value(json_object_get(res, "name"))) ? xstrdup(s)
											: NULL;
			r->digest = (s = json_string_value(json_object_get(res, "digest")))
					? xstrdup(s)
					: NULL;
			r->image_id = (s = json_string_value(json_object_get(res, "imageID")))
					  ? xstrdup(s)
					  : NULL;
			r->size = (long long)json_integer_value(json_object_get(res, "size"));
			r->fetched = json_is_true(json_object_get(res, "fetched"));
			r->took_ms = (uint64_t)json_integer_value(json_object_get(res, "tookMs"));
		} else {
			q->res.state = PULL_FAILED;
			q->res.message = xstrdup(msg ? msg : fallback);
		}
	}
	bool gc = j->gc;
	if (!gc)
		log_info("pull %s: %s", j->ref, ok ? "done" : msg ? msg : fallback);
	pull__job_free(j);
	/* what a pull brought may fill the image file system: the GC looks */
	if (!gc && ok && json_is_true(json_object_get(res, "fetched")))
		puller_gc(p);
	pull__next(p);
	if (!gc && p->done)
		p->done(p->data);
}

static void pull__on_result(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct puller *p = data;
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof(chunk));
	if (n < 0 && errno == EINTR)
		return;
	if (n > 0) {
		p->buf = xrealloc(p->buf, p->len + (size_t)n + 1);
		memcpy(p->buf + p->len, chunk, (size_t)n);
		p->len += (size_t)n;
		return;
	}
	loop_del_fd(p->loop, fd);
	close(fd);
	p->fd = -1;
	int st = 0;
	waitpid(p->worker, &st, 0);
	p->worker = 0;
	json_t *res = p->buf ? json_loadb(p->buf, p->len, 0, NULL) : NULL;
	cleanup_free char *why =
	    xasprintf("the pull worker ended without a result (status %d)", st);
	free(p->buf);
	p->buf = NULL;
	p->len = 0;
	pull__finish(p, res, why);
	json_decref(res);
}

static void pull__next(struct puller *p)
{
	if (p->worker > 0 || !p->nqueue)
		return;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		pull__finish(p, NULL, strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		pull__finish(p, NULL, strerror(errno));
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		pull__work(p, p->queue[0], fds[1]);
	}
	close(fds[1]);
	p->worker = pid;
	p->fd = fds[0];
	struct error *err = NULL;
	if (loop_add_fd(p->loop, p->fd, LOOP_READ, pull__on_result, p, &err) < 0) {
		log_error("pull worker: %s", err->msg);
		error_free(err);
	}
}

/* Forgets requests finished long ago. */
static void pull__forget(struct puller *p)
{
	uint64_t now = loop_now_ms();
	size_t k = 0;
	for (size_t i = 0; i < p->nreqs; i++) {
		if (p->reqs[i].done_at && now - p->reqs[i].done_at > PULL_KEEP_MS) {
			pull_result_clear(&p->reqs[i].res);
			continue;
		}
		p->reqs[k++] = p->reqs[i];
	}
	p->nreqs = k;
}

static void pull__enqueue(struct puller *p, struct pull__job *j)
{
	p->queue = xrealloc(p->queue, (p->nqueue + 1) * sizeof(*p->queue));
	p->queue[p->nqueue++] = j;
	pull__next(p);
}

uint64_t puller_request(struct puller *p, const char *ref, const struct strv *auths, bool always)
{
	pull__forget(p);
	cleanup_free char *key = xasprintf("%s\n%d", ref, always);
	for (size_t i = 0; auths && i < auths->n; i++) {
		char *next = xasprintf("%s\n%s", key, auths->v[i]);
		free(key);
		key = next;
	}
	uint64_t job = 0;
	for (size_t i = 0; i < p->nqueue && !job; i++) {
		if (!p->queue[i]->gc && strcmp(p->queue[i]->key, key) == 0)
			job = p->queue[i]->id;
	}
	if (!job) {
		struct pull__job *j = xcalloc(1, sizeof(*j));
		j->id = job = p->next_id++;
		j->ref = xstrdup(ref);
		j->key = xstrdup(key);
		j->always = always;
		for (size_t i = 0; auths && i < auths->n; i++)
			strv_add(&j->auths, auths->v[i]);
		pull__enqueue(p, j);
	}
	p->reqs = xrealloc(p->reqs, (p->nreqs + 1) * sizeof(*p->reqs));
	struct pull__req *q = &p->reqs[p->nreqs++];
	*q = (struct pull__req){.id = p->next_id++, .job = job, .asked = loop_now_ms()};
	return q->id;
}

int puller_result(struct puller *p, uint64_t id, struct pull_result *out)
{
	*out = (struct pull_result){0};
	for (size_t i = 0; i < p->nreqs; i++) {
		struct pull__req *q = &p->reqs[i];
		if (q->id != id)
			continue;
		out->state = q->done_at ? q->res.state : PULL_RUNNING;
		out->waited_ms = q->done_at ? q->res.waited_ms : loop_now_ms() - q->asked;
		if (q->res.message)
			out->message = xstrdup(q->res.message);
		const struct pull_report *r = &q->res.report;
		out->report.name = r->name ? xstrdup(r->name) : NULL;
		out->report.digest = r->digest ? xstrdup(r->digest) : NULL;
		out->report.image_id = r->image_id ? xstrdup(r->image_id) : NULL;
		out->report.size = r->size;
		out->report.fetched = r->fetched;
		out->report.took_ms = r->took_ms;
		return 0;
	}
	return -ENOENT;
}

void puller_gc(struct puller *p)
{
	for (size_t i = 0; i < p->nqueue; i++) {
		if (p->queue[i]->gc)
			return; /* one is enough */
	}
	struct pull__job *j = xcalloc(1, sizeof(*j));
	j->id = p->next_id++;
	j->gc = true;
	pull__enqueue(p, j);
}

/* ---- corral image -------------------------------------------------------- */

void pull_split_list(const char *s, struct strv *out)
{
	cleanup_free char *copy = xstrdup(s ? s : "");
	for (char *save, *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save))
		strv_add(out, t);
}

static void pull__size(long long b, char out[32])
{
	if (b >= 1000LL * 1000 * 1000)
		snprintf(out, 32, "%.1fGB", (double)b / 1e9);
	else if (b >= 1000LL * 1000)
		snprintf(out, 32, "%.1fMB", (double)b / 1e6);
	else if (b >= 1000)
		snprintf(out, 32, "%.1fkB", (double)b / 1e3);
	else
		snprintf(out, 32, "%lldB", b);
}

static int pull__cli_list(const struct pull_opts *o)
{
	struct layers_record *v;
	size_t n;
	struct error *err = NULL;
	if (layers_record_list(o->store, &v, &n, &err) < 0) {
		fprintf(stderr, "corral image list: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	printf("%-50s %-19s %8s %s\n", "IMAGE", "DIGEST", "SIZE", "LAST USED");
	for (size_t i = 0; i < n; i++) {
		char size[32], used[32] = "-";
		pull__size(v[i].size, size);
		struct tm tm;
		if (v[i].last_used && gmtime_r(&v[i].last_used, &tm))
			strftime(used, sizeof(used), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%-50s %-19.19s %8s %s\n", v[i].name, v[i].digest, size, used);
	}
	layers_record_list_free(v, n);
	return 0;
}

static int pull__cli_rm(const struct pull_opts *o, int argc, char **argv)
{
	int status = 0;
	for (int i = 0; i < argc; i++) {
		struct imageref ir;
		struct error *err = NULL;
		if (imageref_parse(argv[i], &ir, &err) < 0) {
			fprintf(stderr, "corral image rm: %s\n", err->msg);
			error_free(err);
			status = 1;
			continue;
		}
		cleanup_free char *name = imageref_string(&ir);
		imageref_clear(&ir);
		if (layers_record_remove(o->store, name, &err) < 0) {
			fprintf(stderr, "corral image rm: %s\n",
				err->status == ENOENT ? "no such image" : err->msg);
			if (err->status == ENOENT)
				fprintf(stderr, "corral image rm: %s is not in %s\n", name,
					o->store);
			error_free(err);
			status = 1;
			continue;
		}
		printf("Deleted: %s\n", name);
	}
	long long freed = 0;
	struct error *err = NULL;
	if (layers_prune(o->store, &freed, &err) < 0) {
		fprintf(stderr, "corral image rm: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	return status;
}

int pull_cli(const struct pull_opts *o, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "";
	if (strcmp(cmd, "list") == 0)
		return pull__cli_list(o);
	if (strcmp(cmd, "rm") == 0 && argc > 1)
		return pull__cli_rm(o, argc - 1, argv + 1);
	if (strcmp(cmd, "prune") == 0) {
		/* every image no container of this machine names, as crictl
		 * rmi --prune; then the layers no image has */
		struct strv in_use = {0};
		if (o->state)
			layers_in_use(o->state, &in_use);
		int removed = 0;
		long long freed = 0;
		struct error *err = NULL;
		if (layers_gc(o->store, 0, 0, 0, &in_use, &removed, &err) < 0 ||
		    layers_prune(o->store, &freed, &err) < 0) {
			strv_clear(&in_use);
			fprintf(stderr, "corral image prune: %s\n", err->msg);
			error_free(err);
			return 1;
		}
		strv_clear(&in_use);
		printf("Deleted %d images\n", removed);
		return 0;
	}
	if (strcmp(cmd, "pull") == 0 && argc == 2) {
		struct pull_opts po = *o;
		po.quiet = false;
		struct pull_report rep;
		struct error *err = NULL;
		uint64_t t0 = pull__now_ms();
		if (pull_run(&po, argv[1], NULL, true, &rep, &err) < 0) {
			fprintf(stderr, "corral image pull: %s\n", err->msg);
			error_free(err);
			return 1;
		}
		char size[32];
		pull__size(rep.size, size);
		printf("Digest: %s\nStatus: %s %s (%s in %.1fs)\n%s\n", rep.digest,
		       rep.fetched ? "Downloaded newer image for" : "Image is up to date for",
		       rep.name, size, (double)(pull__now_ms() - t0) / 1000, rep.image_id);
		pull_report_clear(&rep);
		return 0;
	}
	if (strcmp(cmd, "import") == 0 && (argc == 2 || argc == 3)) {
		struct pull_opts po = *o;
		po.quiet = false;
		struct pull_report rep;
		struct error *err = NULL;
		if (pull_import(&po, argv[1], argc == 3 ? argv[2] : NULL, &rep, &err) < 0) {
			fprintf(stderr, "corral image import: %s\n", err->msg);
			error_free(err);
			return 1;
		}
		printf("Loaded image: %s (%s)\n", rep.name, rep.digest);
		pull_report_clear(&rep);
		return 0;
	}
	fprintf(stderr, "usage: corral-noded image pull REF | list | rm REF... | prune | import "
			"ARCHIVE [NAME]\n");
	return 2;
}
