/* remotelogs.c: see remotelogs.h. Requests go through a small pool of
 * libcurl easy handles, so that connections (and TLS sessions) to a node
 * are kept between the reads of one file. */
#include "remotelogs.h"
#include "log.h"
#include "nodeaddr.h"
#include "treepath.h"
#include "util.h"
#include "workpool.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REMOTELOGS__POOL 8 /* easy handles kept for reuse */

struct remotelogs {
	struct store *store;
	char *ca_file, *cert_file, *key_file;
	long timeout_ms;
	struct workpool *workers;
	pthread_mutex_t lock;
	CURL *pool[REMOTELOGS__POOL]; /* idle handles, under lock */
	size_t npool;
};

bool remotelogs_is_url(const char *source)
{
	return source && strncmp(source, "https://", 8) == 0;
}

/* Whether one containerStatuses entry says its container has output. */
static bool remotelogs__status_started(const struct ynode *cs)
{
	long long restarts = 0;
	return ynode_path(cs, "state.running") || ynode_path(cs, "state.terminated") ||
	       ynode_path(cs, "lastState.terminated") ||
	       (ynode_int(ynode_get(cs, "restartCount"), &restarts) == 0 && restarts > 0);
}

bool remotelogs_container_started(const struct ynode *pod, const char *container)
{
	static const char *const lists[] = {"status.initContainerStatuses",
					    "status.containerStatuses"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *seq = ynode_path(pod, lists[l]);
		for (size_t i = 0; seq && seq->type == YNODE_SEQ && i < seq->n; i++) {
			const char *name = ynode_path_str(ynode_item(seq, i), "name");
			if (name && strcmp(name, container) == 0 &&
			    remotelogs__status_started(ynode_item(seq, i)))
				return true;
		}
	}
	return false;
}

void remotelogs_ents_free(struct remotelogs_ent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].source);
	}
	free(v);
}

static void remotelogs__put(struct remotelogs_ent **v, size_t *n, char *name, char *source)
{
	*v = xrealloc(*v, sizeof(**v) * (*n + 1));
	(*v)[(*n)++] = (struct remotelogs_ent){name, source};
}

/* The stored object at key, parsed; NULL when absent or unreadable. */
static struct ynode *remotelogs__load(struct remotelogs *rl, const char *key)
{
	struct store_record rec = {0};
	struct ynode *obj = NULL;
	if (store_get(rl->store, key, &rec, NULL) == 0 &&
	    yaml_parse_one(rec.yaml, rec.len, &obj, NULL) < 0)
		obj = NULL;
	store_record_clear(&rec);
	return obj;
}

/* Whether any container of the pod has started. */
static bool remotelogs__any_started(const struct ynode *pod)
{
	static const char *const lists[] = {"status.initContainerStatuses",
					    "status.containerStatuses"};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		const struct ynode *seq = ynode_path(pod, lists[l]);
		for (size_t i = 0; seq && seq->type == YNODE_SEQ && i < seq->n; i++)
			if (remotelogs__status_started(ynode_item(seq, i)))
				return true;
	}
	return false;
}

struct remotelogs_ent *remotelogs_pods(struct remotelogs *rl, const char *ns, char *const *names,
				       size_t n, size_t *nout)
{
	struct remotelogs_ent *v = NULL;
	*nout = 0;
	/* nodes seen in this call: many pods share one */
	char **node_names = NULL, **node_bases = NULL;
	size_t nnodes = 0;
	for (size_t i = 0; rl && i < n; i++) {
		cleanup_free char *key = treepath_key("pods", ns, names[i]);
		cleanup_ynode struct ynode *pod = remotelogs__load(rl, key);
		const char *node = pod ? ynode_path_str(pod, "spec.nodeName") : NULL;
		if (!node || !*node || !remotelogs__any_started(pod))
			continue;
		const char *base = NULL;
		size_t k = 0;
		while (k < nnodes && strcmp(node_names[k], node) != 0)
			k++;
		if (k == nnodes) {
			cleanup_free char *nkey = treepath_key("nodes", NULL, node);
			cleanup_ynode struct ynode *nobj = remotelogs__load(rl, nkey);
			node_names = xrealloc(node_names, sizeof(char *) * (nnodes + 1));
			node_bases = xrealloc(node_bases, sizeof(char *) * (nnodes + 1));
			node_names[nnodes] = xstrdup(node);
			node_bases[nnodes] = nobj ? nodeaddr_kubelet_base(nobj) : NULL;
			nnodes++;
		}
		base = node_bases[k];
		if (base)
			remotelogs__put(&v, nout, xstrdup(names[i]),
					xasprintf("%s/containerLogs/%s/%s", base, ns, names[i]));
	}
	for (size_t k = 0; k < nnodes; k++) {
		free(node_names[k]);
		free(node_bases[k]);
	}
	free(node_names);
	free(node_bases);
	return v;
}

struct remotelogs_ent *remotelogs_containers(struct remotelogs *rl, const char *ns, const char *pod,
					     const char *url, size_t *nout)
{
	struct remotelogs_ent *v = NULL;
	*nout = 0;
	if (!rl)
		return NULL;
	cleanup_free char *key = treepath_key("pods", ns, pod);
	cleanup_ynode struct ynode *obj = remotelogs__load(rl, key);
	static const char *const lists[] = {"spec.initContainers", "spec.containers"};
	for (size_t l = 0; obj && l < ARRAY_SIZE(lists); l++) {
		const struct ynode *seq = ynode_path(obj, lists[l]);
		for (size_t i = 0; seq && seq->type == YNODE_SEQ && i < seq->n; i++) {
			const char *c = ynode_path_str(ynode_item(seq, i), "name");
			if (c && *c && !strchr(c, '/') && remotelogs_container_started(obj, c))
				remotelogs__put(&v, nout, xasprintf("%s.log", c),
						xasprintf("%s/%s", url, c));
		}
	}
	return v;
}

/* ---- requests ---- */

static CURL *remotelogs__handle(struct remotelogs *rl)
{
	pthread_mutex_lock(&rl->lock);
	CURL *c = rl->npool ? rl->pool[--rl->npool] : NULL;
	pthread_mutex_unlock(&rl->lock);
	if (!c && !(c = curl_easy_init()))
		abort(); /* out of memory */
	curl_easy_reset(c);
	nodeaddr_curl_tls(c, rl->ca_file, rl->cert_file, rl->key_file);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, rl->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 rl->timeout_ms < REMOTELOGS_CONNECT_MS ? rl->timeout_ms
								: (long)REMOTELOGS_CONNECT_MS);
	return c;
}

static void remotelogs__handle_done(struct remotelogs *rl, CURL *c)
{
	pthread_mutex_lock(&rl->lock);
	if (rl->npool < REMOTELOGS__POOL) {
		rl->pool[rl->npool++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&rl->lock);
	if (c)
		curl_easy_cleanup(c);
}

/* The errno an HTTP status (or a transport failure) gives a reader. */
static int remotelogs__errno(CURLcode rc, long status)
{
	if (rc != CURLE_OK)
		return EIO;
	if (status == 404)
		return ENOENT;
	return status >= 200 && status < 300 ? 0 : EIO;
}

/* The size of the log at url, or -errno. */
static int64_t remotelogs__size(struct remotelogs *rl, const char *url)
{
	CURL *c = remotelogs__handle(rl);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_off_t len = -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	int e = remotelogs__errno(rc, status);
	if (e)
		log_debug("HEAD %s: %s (HTTP %ld)", url, curl_easy_strerror(rc), status);
	remotelogs__handle_done(rl, c);
	return e ? -e : len < 0 ? 0 : (int64_t)len;
}

/* What a ranged GET brings back: at most want bytes from off on. */
struct remotelogs__buf {
	CURL *c;
	char *data;
	size_t len, want;
	uint64_t off;
	bool started;  /* the first bytes came */
	uint64_t skip; /* a server that ignored the range: bytes to drop */
};

static size_t remotelogs__write(char *p, size_t size, size_t nmemb, void *cls)
{
	struct remotelogs__buf *b = cls;
	size_t n = size * nmemb, take = n;
	if (!b->started) {
		long status = 0;
		curl_easy_getinfo(b->c, CURLINFO_RESPONSE_CODE, &status);
		b->skip = status == 200 ? b->off : 0; /* the whole log came */
		b->started = true;
	}
	if (b->skip) {
		size_t drop = b->skip < take ? (size_t)b->skip : take;
		b->skip -= drop;
		p += drop;
		take -= drop;
	}
	if (take > b->want - b->len)
		take = b->want - b->len;
	memcpy(b->data + b->len, p, take);
	b->len += take;
	return n;
}

/* ---- jobs: one request each, replying to its FUSE request ---- */

struct remotelogs__job {
	struct remotelogs *rl;
	fuse_req_t req;
	char *url;
	int kind; /* 0 entry, 1 attr, 2 read */
	struct fuse_entry_param e;
	struct stat st;
	double ttl;
	size_t size;
	off_t off;
};

static void remotelogs__run(void *arg)
{
	struct remotelogs__job *j = arg;
	struct remotelogs *rl = j->rl;
	if (j->kind == 0 || j->kind == 1) {
		int64_t size = remotelogs__size(rl, j->url);
		struct stat *st = j->kind == 0 ? &j->e.attr : &j->st;
		st->st_size = size > 0 ? size : 0;
		st->st_blocks = (st->st_size + 511) / 512;
		if (j->kind == 0)
			fuse_reply_entry(j->req, &j->e);
		else
			fuse_reply_attr(j->req, st, j->ttl);
	} else {
		CURL *c = remotelogs__handle(rl);
		struct remotelogs__buf b = {
		    .c = c, .data = xmalloc(j->size ? j->size : 1), .want = j->size, .off = j->off};
		char range[64];
		snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, (uint64_t)j->off,
			 (uint64_t)j->off + j->size - 1);
		curl_easy_setopt(c, CURLOPT_URL, j->url);
		curl_easy_setopt(c, CURLOPT_RANGE, range);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, remotelogs__write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
		CURLcode rc = j->size ? curl_easy_perform(c) : CURLE_OK;
		long status = 206;
		if (j->size)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		remotelogs__handle_done(rl, c);
		/* 416: the range starts at the end: nothing more, yet */
		int e = rc == CURLE_OK && status == 416 ? 0 : remotelogs__errno(rc, status);
		if (e) {
			log_warn("reading %s: %s (HTTP %ld)", j->url,
				 rc != CURLE_OK ? curl_easy_strerror(rc) : "refused", status);
			fuse_reply_err(j->req, e);
		} else {
			fuse_reply_buf(j->req, b.data, status == 416 ? 0 : b.len);
		}
		free(b.data);
	}
	free(j->url);
	free(j);
}

static void remotelogs__queue(struct remotelogs *rl, struct remotelogs__job *j, const char *url)
{
	j->rl = rl;
	j->url = xstrdup(url);
	workpool_submit(rl->workers, remotelogs__run, NULL, j, 0);
}

void remotelogs_reply_entry(struct remotelogs *rl, fuse_req_t req, const struct fuse_entry_param *e,
			    const char *url)
{
	struct remotelogs__job *j = xcalloc(1, sizeof(*j));
	*j = (struct remotelogs__job){.req = req, .kind = 0, .e = *e};
	remotelogs__queue(rl, j, url);
}

void remotelogs_reply_attr(struct remotelogs *rl, fuse_req_t req, const struct stat *st, double ttl,
			   const char *url)
{
	struct remotelogs__job *j = xcalloc(1, sizeof(*j));
	*j = (struct remotelogs__job){.req = req, .kind = 1, .st = *st, .ttl = ttl};
	remotelogs__queue(rl, j, url);
}

void remotelogs_read(struct remotelogs *rl, fuse_req_t req, const char *url, size_t size, off_t off)
{
	struct remotelogs__job *j = xcalloc(1, sizeof(*j));
	*j = (struct remotelogs__job){.req = req, .kind = 2, .size = size, .off = off};
	remotelogs__queue(rl, j, url);
}

/* ---- life ---- */

struct remotelogs *remotelogs_new(struct store *store, const struct remotelogs_opts *o,
				  struct error **err)
{
	const char *files[] = {o->ca_file, o->cert_file, o->key_file};
	const char *what[] = {"ca-file", "client-cert", "client-key"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (!files[i] || !*files[i]) {
			error_set(err, EINVAL, "%s: needed with the other two for remote logs",
				  what[i]);
			return NULL;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f = fopen(files[i], "r");
		if (!f) {
			error_set(err, errno, "%s %s: %s", what[i], files[i], strerror(errno));
			return NULL;
		}
		fclose(f);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		error_set(err, EIO, "libcurl cannot start");
		return NULL;
	}
	struct remotelogs *rl = xcalloc(1, sizeof(*rl));
	rl->store = store;
	rl->ca_file = xstrdup(o->ca_file);
	rl->cert_file = xstrdup(o->cert_file);
	rl->key_file = xstrdup(o->key_file);
	rl->timeout_ms = o->timeout_ms ? (long)o->timeout_ms : REMOTELOGS_TIMEOUT_MS;
	pthread_mutex_init(&rl->lock, NULL);
	rl->workers =
	    workpool_new(&(const struct workpool_opts){0}, NULL); /* no loop: cannot fail */
	return rl;
}

int remotelogs_start(struct remotelogs *rl, struct error **err)
{
	return rl ? workpool_start(rl->workers, REMOTELOGS_THREADS, err) : 0;
}

void remotelogs_free(struct remotelogs *rl)
{
	if (!rl)
		return;
	workpool_free(rl->workers);
	for (size_t i = 0; i < rl->npool; i++)
		curl_easy_cleanup(rl->pool[i]);
	pthread_mutex_destroy(&rl->lock);
	free(rl->ca_file);
	free(rl->cert_file);
	free(rl->key_file);
	free(rl);
	curl_global_cleanup();
}
