/* static.c: static pods from a folder and from a URL (static.h). */
#include "static.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fnv.h"
#include "log.h"
#include "names.h"
#include "strmap.h"
#include "timefmt.h"
#include "util.h"

#define STATIC_FETCH_MAX (4u << 20) /* bytes of a URL's answer */
#define STATIC_FILE_MAX	 (4u << 20)

/* What one source runs now: key -> uid. */
struct static__source {
	const char *kind; /* "file", "http" */
	struct strmap *uids;
	char *last_error; /* the last one logged, so that a rescan does not repeat it */
};

struct static_pods {
	struct loop *loop;
	struct pods *pods;
	char *path, *url, *node;
	uint64_t file_ms, http_ms;
	struct static__source file, http;
	int ino, wd;
	struct loop_timer *file_timer, *http_timer;
	/* the fetch under way */
	pid_t curl;
	int curl_fd;
	char *body;
	size_t body_len;
	bool body_over;
};

/* ---- building ------------------------------------------------------------------ */

size_t static_pods_of(const struct ynode *doc, const struct ynode **out, size_t max)
{
	const char *kind = ynode_path_str(doc, "kind");
	if (!kind)
		return 0;
	if (strcmp(kind, "Pod") == 0) {
		if (max)
			out[0] = doc;
		return max ? 1 : 0;
	}
	if (strcmp(kind, "PodList") != 0 && strcmp(kind, "List") != 0)
		return 0;
	const struct ynode *items = ynode_get(doc, "items");
	size_t n = 0;
	for (size_t i = 0; items && items->type == YNODE_SEQ && i < items->n && n < max; i++) {
		const struct ynode *it = ynode_item(items, i);
		const char *k = ynode_path_str(it, "kind");
		if (!k || strcmp(k, "Pod") == 0) /* a PodList's items need not say */
			out[n++] = it;
	}
	return n;
}

struct ynode *static_pod_build(const struct ynode *manifest, const char *node, const char *source,
			       const char *origin, time_t now, struct error **err)
{
	const char *kind = ynode_path_str(manifest, "kind");
	const char *api = ynode_path_str(manifest, "apiVersion");
	if (kind && strcmp(kind, "Pod") != 0)
		return error_set(err, EINVAL, "kind %s: a static pod must be a Pod", kind), NULL;
	if (api && strcmp(api, "v1") != 0)
		return error_set(err, EINVAL, "apiVersion %s: a static pod is v1", api), NULL;
	const char *name = ynode_path_str(manifest, "metadata.name");
	if (!name || !*name)
		return error_set(err, EINVAL, "metadata.name: Required value"), NULL;
	const char *ns = ynode_path_str(manifest, "metadata.namespace");
	if (!ns || !*ns)
		ns = "default";
	if (!ynode_path(manifest, "spec.containers"))
		return error_set(err, EINVAL, "spec.containers: Required value"), NULL;
	cleanup_free char *full = xasprintf("%s-%s", name, node);
	for (char *c = full; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	if (names_dns1123_subdomain(full, err) < 0 || names_dns1123_subdomain(ns, err) < 0) {
		error_prefix(err, "metadata.name");
		return NULL;
	}
	struct ynode *pod = ynode_clone(manifest);
	ynode_del(pod, "status");
	ynode_set(pod, "apiVersion", ynode_new_str("v1"));
	ynode_set(pod, "kind", ynode_new_str("Pod"));
	struct ynode *meta = ynode_get_map(pod, "metadata");
	static const char *const drop[] = {"uid",
					   "resourceVersion",
					   "generation",
					   "creationTimestamp",
					   "deletionTimestamp",
					   "managedFields",
					   "ownerReferences"};
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		ynode_del(meta, drop[i]);
	ynode_set(meta, "name", ynode_new_str(full));
	ynode_set(meta, "namespace", ynode_new_str(ns));
	ynode_set(ynode_get_map(pod, "spec"), "nodeName", ynode_new_str(node));
	/* The uid: what the pod is, where it comes from, where it runs. */
	/* (sorted: a Pod and the same pod as a PodList's item hash alike) */
	cleanup_ynode struct ynode *sorted = ynode_clone(pod);
	ynode_sort(sorted);
	size_t len = 0;
	cleanup_free char *text = yaml_emit(sorted, &len);
	uint64_t h1 = fnv1a_add(fnv1a_add(fnv1a(origin, strlen(origin)), node, strlen(node)),
				text ? text : "", len);
	uint64_t h2 = fnv1a_add(h1, source, strlen(source));
	char uid[33];
	snprintf(uid, sizeof(uid), "%016llx%016llx", (unsigned long long)h1,
		 (unsigned long long)h2);
	ynode_set(meta, "uid", ynode_new_str(uid));
	struct ynode *ann = ynode_get_map(meta, "annotations");
	char seen[RFC3339_SIZE];
	rfc3339_format(now, seen);
	ynode_set(ann, "kubernetes.io/config.source", ynode_new_str(source));
	ynode_set(ann, "kubernetes.io/config.hash", ynode_new_str(uid));
	ynode_set(ann, "kubernetes.io/config.seen", ynode_new_str(seen));
	return pod;
}

/* ---- applying a source's pods ---------------------------------------------------- */

static void static__say(struct static__source *src, const char *origin, const char *msg)
{
	cleanup_free char *line = xasprintf("%s: %s", origin, msg);
	if (src->last_error && strcmp(src->last_error, line) == 0)
		return;
	log_warn("static pods: %s", line);
	free(src->last_error);
	src->last_error = xstrdup(line);
}

/* found: key -> the static pod (taken). Pods the source no longer has
 * stop; new and changed ones (another uid) start. */
static void static__apply(struct static_pods *s, struct static__source *src, struct strmap *found)
{
	const char *key;
	void *val;
	/* gone */
	for (size_t i = 0; strmap_next(src->uids, &i, &key, &val);) {
		if (strmap_has(found, key))
			continue;
		log_info("static pod %s (%s): gone from its source", key, src->kind);
		cleanup_free char *k = xstrdup(key);
		pods_static_set(s->pods, k, NULL);
		free(strmap_del(src->uids, k));
		i = 0; /* the table changed: start again */
	}
	for (size_t i = 0; strmap_next(found, &i, &key, &val);) {
		struct ynode *pod = val;
		const char *uid = ynode_path_str(pod, "metadata.uid");
		const char *had = strmap_get(src->uids, key);
		if (had && uid && strcmp(had, uid) == 0) {
			ynode_free(pod);
			continue;
		}
		log_info("static pod %s (%s): %s", key, src->kind, had ? "changed" : "found");
		free(strmap_set(src->uids, key, xstrdup(uid ? uid : "")));
		pods_static_set(s->pods, key, pod);
	}
	strmap_free(found, NULL);
}

/* Adds the Pods of text (from origin) to found. */
static void static__parse(struct static_pods *s, struct static__source *src, const char *origin,
			  const char *text, size_t len, struct strmap *found)
{
	struct ynode **docs = NULL;
	size_t ndocs = 0;
	struct error *err = NULL;
	if (yaml_parse(text, len, &docs, &ndocs, &err) < 0) {
		static__say(src, origin, err->msg);
		error_free(err);
		return;
	}
	time_t now = time(NULL);
	for (size_t d = 0; d < ndocs; d++) {
		const struct ynode *list[256];
		size_t n = static_pods_of(docs[d], list, 256);
		if (!n && !ynode_is_null(docs[d])) {
			list[0] = docs[d]; /* static_pod_build says what it is */
			n = 1;
		}
		for (size_t i = 0; i < n; i++) {
			struct ynode *pod =
			    static_pod_build(list[i], s->node, src->kind, origin, now, &err);
			if (!pod) {
				static__say(src, origin, err->msg);
				error_free(err);
				err = NULL;
				continue;
			}
			cleanup_free char *key =
			    xasprintf("%s/%s", ynode_path_str(pod, "metadata.namespace"),
				      ynode_path_str(pod, "metadata.name"));
			ynode_free(strmap_set(found, key, pod));
		}
	}
	for (size_t d = 0; d < ndocs; d++)
		ynode_free(docs[d]);
	free(docs);
}

/* ---- the folder ----------------------------------------------------------------- */

static void static__watch(struct static_pods *s)
{
	if (s->ino < 0 || s->wd >= 0)
		return;
	s->wd = inotify_add_watch(s->ino, s->path,
				  IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
				      IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
}

static void static__scan(struct static_pods *s)
{
	static__watch(s);
	struct strmap *found = strmap_new();
	DIR *d = opendir(s->path);
	if (!d) {
		if (errno != ENOENT)
			static__say(&s->file, s->path, strerror(errno));
	}
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue; /* the kubelet ignores hidden files */
		cleanup_free char *p = xasprintf("%s/%s", s->path, de->d_name);
		struct stat st;
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if ((size_t)st.st_size > STATIC_FILE_MAX) {
			static__say(&s->file, p, "larger than 4 MiB: skipped");
			continue;
		}
		size_t len = 0;
		cleanup_free char *text = util_read_file(p, &len);
		if (text)
			static__parse(s, &s->file, p, text, len, found);
	}
	if (d)
		closedir(d);
	static__apply(s, &s->file, found);
}

static void static__on_inotify(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct static_pods *s = data;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool gone = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
				gone = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (gone && s->wd >= 0) {
		inotify_rm_watch(s->ino, s->wd);
		s->wd = -1;
	}
	static__scan(s);
}

static void static__on_file_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	static__scan(data);
}

/* ---- the URL -------------------------------------------------------------------- */

static void static__fetch_end(struct static_pods *s)
{
	loop_del_fd(s->loop, s->curl_fd);
	close(s->curl_fd);
	s->curl_fd = -1;
	int status = 0;
	while (waitpid(s->curl, &status, 0) < 0 && errno == EINTR)
		;
	s->curl = 0;
	if (s->body_over) {
		static__say(&s->http, s->url, "the answer is larger than 4 MiB: ignored");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		cleanup_free char *why =
		    xasprintf("curl failed (exit %d): the pods it gave before are kept",
			      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		static__say(&s->http, s->url, why);
	} else {
		struct strmap *found = strmap_new();
		static__parse(s, &s->http, s->url, s->body ? s->body : "", s->body_len, found);
		static__apply(s, &s->http, found);
	}
	free(s->body);
	s->body = NULL;
	s->body_len = 0;
	s->body_over = false;
}

static void static__on_curl(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct static_pods *s = data;
	char buf[16384];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		static__fetch_end(s);
		return;
	}
	if (s->body_len + (size_t)n > STATIC_FETCH_MAX) {
		s->body_over = true;
		return;
	}
	s->body = xrealloc(s->body, s->body_len + (size_t)n + 1);
	memcpy(s->body + s->body_len, buf, (size_t)n);
	s->body_len += (size_t)n;
	s->body[s->body_len] = '\0';
}

static void static__on_http_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)t;
	struct static_pods *s = data;
	if (s->curl)
		return; /* the last one is still under way */
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(p[1], STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execlp("curl", "curl", "--silent", "--fail", "--location", "--max-time", "10",
		       "--max-filesize", "4194304", "--", s->url, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	struct error *err = NULL;
	if (loop_add_fd(loop, p[0], LOOP_READ, static__on_curl, s, &err) < 0) {
		log_warn("static pods: %s", err->msg);
		error_free(err);
		close(p[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	s->curl = pid;
	s->curl_fd = p[0];
}

/* ---- the API ------------------------------------------------------------------------- */

struct static_pods *static_pods_new(struct loop *loop, const struct static_pods_opts *o,
				    struct pods *pods)
{
	struct static_pods *s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->pods = pods;
	s->path = o->path && *o->path ? xstrdup(o->path) : NULL;
	s->url = o->url && *o->url ? xstrdup(o->url) : NULL;
	s->node = xstrdup(o->node);
	s->file_ms = o->file_ms ? o->file_ms : 20000;
	s->http_ms = o->http_ms ? o->http_ms : 20000;
	s->file = (struct static__source){"file", strmap_new(), NULL};
	s->http = (struct static__source){"http", strmap_new(), NULL};
	s->ino = -1;
	s->wd = -1;
	s->curl_fd = -1;
	return s;
}

int static_pods_start(struct static_pods *s, struct error **err)
{
	if (s->path) {
		s->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (s->ino < 0)
			return error_set(err, errno, "inotify: %s", strerror(errno));
		if (loop_add_fd(s->loop, s->ino, LOOP_READ, static__on_inotify, s, err) < 0)
			return -1;
		static__scan(s);
		s->file_timer = loop_timer_new(s->loop, static__on_file_timer, s);
		loop_timer_start(s->file_timer, s->file_ms, s->file_ms);
		log_info("static pods: following %s (%zu pods)", s->path,
			 strmap_count(s->file.uids));
	}
	if (s->url) {
		s->http_timer = loop_timer_new(s->loop, static__on_http_timer, s);
		loop_timer_start(s->http_timer, 0, s->http_ms);
		log_info("static pods: fetching %s every %llu ms", s->url,
			 (unsigned long long)s->http_ms);
	}
	return 0;
}

static void static__free_source(struct static__source *src)
{
	strmap_free(src->uids, free);
	free(src->last_error);
}

void static_pods_free(struct static_pods *s)
{
	if (!s)
		return;
	loop_timer_free(s->file_timer);
	loop_timer_free(s->http_timer);
	if (s->ino >= 0) {
		loop_del_fd(s->loop, s->ino);
		close(s->ino);
	}
	if (s->curl) {
		loop_del_fd(s->loop, s->curl_fd);
		close(s->curl_fd);
		kill(s->curl, SIGKILL);
		waitpid(s->curl, NULL, 0);
	}
	free(s->body);
	static__free_source(&s->file);
	static__free_source(&s->http);
	free(s->path);
	free(s->url);
	free(s->node);
	free(s);
}
