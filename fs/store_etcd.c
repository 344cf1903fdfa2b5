/* store_etcd.c: the live store over etcd v3, shared by every corral-fs
 * that names the same members (corral-fs --store etcd://HOST:PORT,...).
 *
 * etcd is reached through its v3 JSON gateway (/v3/kv/range, /v3/kv/txn,
 * /v3/watch, /v3/lease/...) with libcurl and jansson, both already
 * corral's: no gRPC stack to add, and the gateway is part of every etcd
 * 3.4 member. Keys and values travel base64-encoded, as the gateway wants.
 *
 * Key layout (all under STORE_ETCD_PREFIX, "/corral/"):
 *   o/<key>          an object; its mod revision is its resourceVersion
 *   d/<key>          empty; its mod revision is the object's last change of
 *                    the declared part (decl_rv)
 *   h/<writer>-<seq> a history outbox entry (JSON), written in the same
 *                    transaction as its change; its revision is the change's
 *   c/<claim>        a claim (store.h): "svcip/10.96.0.5"; its value is
 *                    the holder; taken (it must not exist) and given back
 *                    in the transaction of the change that does so
 *   r/<writer>       the revision a replica's history has reached (leased)
 *   l/<writer>       a watcher's liveness probe, written only when its
 *                    watch has to be shown a revision of ours (leased)
 *   history-trimmer  the elected trimmer of the outbox (leased)
 *
 * An object's value is one header line "corral1 <mtime ns> <offset>\n" and
 * the YAML text, whose metadata.resourceVersion holds STORE_ETCD_RV_MARK at
 * <offset>: the revision a transaction gets is known only once it is
 * committed, so the text is stored with a placeholder that every read
 * replaces with the key's mod revision (store_etcd_fill_rv()).
 *
 * A write is one transaction compared on the object's mod revision (0: the
 * key must not exist): success puts (or deletes) the object, its declared
 * revision key, its claims and the outbox entry; failure reads the key
 * and the claims back to say why. Nothing is retried on another member
 * once a request may have reached one (a transaction whose outcome is
 * unknown fails with EIO); reads and connection failures move on to the
 * next member.
 *
 * Own changes: the watch reports every change but this process's own, and
 * it knows them by the revisions its transactions got from etcd's
 * answers. A change whose answer was lost (EIO to its writer) is then
 * reported like another writer's, so the tree catches up with it. An
 * event that arrives while a transaction begun before it is unanswered
 * waits for that answer (at most a request's timeout).
 *
 * Liveness: a keeper thread renews the lease and, while watching, asks a
 * member for the current revision every STORE_ETCD_PROBE_MS; once the
 * watch has delivered up to that revision, what the tree shows is at
 * least as fresh as the moment the question left. Past STORE_ETCD_STALE_MS
 * without such proof, store_check_fresh() fails (reads get EIO) and a
 * watch that is connected but behind is moved to the next member. When
 * the store's revision moves on keys outside our prefix, the probe writes
 * its own key under l/ so that the watch has a revision to reach. */
#include "store_etcd.h"
#include "keylock.h"
#include "log.h"
#include "store.h"
#include "store_impl.h"
#include "util.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ETCD__POOL_MAX	       32   /* idle HTTP handles kept */
#define ETCD__TIMEOUT_MS       5000 /* one request */
#define ETCD__CONNECT_MS       1000
#define ETCD__PAGE	       1000 /* objects per range while listing */
#define ETCD__TXN_OPS	       100  /* etcd's default limit is 128 */
#define ETCD__STREAM_MAX       (64 << 20)
#define ETCD__RETRY_MIN_MS     50
#define ETCD__RETRY_MAX_MS     1000
#define ETCD__LEASE_TTL_S      10
#define ETCD__RESPONSE_MAX     (256 << 20)
#define ETCD__PROBE_TIMEOUT_MS 1000  /* one probe request */
#define ETCD__OWN_WAIT_MS      12000 /* an event waiting for an answer */
#define ETCD__BOX_MAX	       16384 /* outbox entries the watch keeps */
#define ETCD__TROUBLE_MS       10000 /* writes look for a leader first */

struct store_etcd {
	const struct store_ops *ops; /* first: store_impl.h */
	char **endpoints;	     /* "HOST:PORT" */
	size_t nendpoints;
	atomic_size_t current;	 /* the member tried first */
	atomic_llong trouble_ms; /* a member was lost then (etcd__barrier) */
	char writer[64];	 /* this process's id (outbox, replica, probe keys) */
	atomic_uint_least64_t seq;
	struct keylocks *keys;

	pthread_mutex_t lock;
	pthread_cond_t rev_cond; /* rev grew, or kicked */
	uint64_t rev;		 /* the newest revision seen */
	bool kicked;

	pthread_mutex_t pool_lock;
	CURL *pool[ETCD__POOL_MAX];
	size_t npool;

	/* The watch. */
	pthread_t watch_thread;
	atomic_bool watching; /* read by the keeper */
	atomic_bool stop;
	store_watch_fn fn;
	void *fn_data;
	uint64_t seen; /* every other writer's change up to here is delivered */

	/* The outbox as the watch saw it go by (under lock): every entry
	 * after box_from up to seen, oldest first; the history reads it here
	 * instead of ranging over the outbox's keys in etcd (see
	 * etcd__outbox_read). */
	struct store_outbox_entry *box;
	size_t nbox, box_cap;
	uint64_t box_from;
	uint64_t box_read; /* seen, when the history last read the box */
	bool box_used;	   /* the history's last read was the box's */

	/* Own changes (under lock): the write transactions not answered
	 * yet, by ticket, and the revisions of those committed that the
	 * watch has not reached. */
	pthread_cond_t txn_cond; /* a transaction was answered */
	uint64_t next_ticket;
	uint64_t *inflight;
	size_t ninflight, inflight_cap;
	uint64_t *own; /* ascending */
	size_t nown, own_cap;
	atomic_uint lose_replies; /* tests: store_etcd_lose_replies() */

	/* Liveness (under lock). */
	int64_t fresh_ms;	     /* the watch had everything up to then */
	uint64_t probe_rev;	     /* 0, or the revision a probe waits for */
	int64_t probe_ms;	     /* when that probe asked */
	bool stale_logged;	     /* the staleness was reported */
	atomic_llong watch_since_ms; /* the watch's stream began (0: none) */
	atomic_bool watch_reset;     /* the keeper asks for another member */

	/* The keeper thread: the lease's renewal and the probe. */
	pthread_t keeper;
	bool keeping;
	bool keeper_stop;	    /* under lock */
	pthread_cond_t keeper_cond; /* keeper_stop was set */

	/* The history's outbox trimmer: this replica's lease (lease_lock). */
	pthread_mutex_t lease_lock;
	int64_t lease;
	int64_t lease_until_ms;
};

static int64_t etcd__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t etcd__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void etcd__sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* ---- the key layout (store_etcd.h) ---- */

char *store_etcd_key(enum store_etcd_space space, const char *key)
{
	static const char *const spaces[] = {
	    [STORE_ETCD_OBJECT] = "o/",	 [STORE_ETCD_DECL] = "d/",  [STORE_ETCD_OUTBOX] = "h/",
	    [STORE_ETCD_REPLICA] = "r/", [STORE_ETCD_CLAIM] = "c/", [STORE_ETCD_LIVE] = "l/",
	};
	return xasprintf("%s%s%s", STORE_ETCD_PREFIX, spaces[space], key ? key : "");
}

char *store_etcd_range_end(const char *prefix)
{
	size_t n = strlen(prefix);
	char *end = xstrdup(prefix);
	/* The prefixes are ASCII and end in '/': one more than the last byte. */
	end[n - 1] = (char)(end[n - 1] + 1);
	return end;
}

char *store_etcd_encode_value(int64_t mtime_ns, const char *yaml, size_t len, size_t *out_len)
{
	const char *mark = NULL;
	const char *meta = NULL;
	if (len >= 10 && strncmp(yaml, "metadata:\n", 10) == 0)
		meta = yaml;
	else
		meta = memmem(yaml, len, "\nmetadata:\n", 11);
	if (meta) {
		static const char needle[] = "\n  resourceVersion: '" STORE_ETCD_RV_MARK "'";
		mark = memmem(meta, len - (size_t)(meta - yaml), needle, sizeof(needle) - 1);
		if (mark)
			mark += strlen("\n  resourceVersion: '");
	}
	long long off = mark ? (long long)(mark - yaml) : -1;
	char head[64];
	int hl = snprintf(head, sizeof(head), "corral1 %lld %lld\n", (long long)mtime_ns, off);
	char *v = xmalloc((size_t)hl + len + 1);
	memcpy(v, head, (size_t)hl);
	memcpy(v + hl, yaml, len);
	v[hl + len] = '\0';
	*out_len = (size_t)hl + len;
	return v;
}

int store_etcd_decode_value(const char *v, size_t len, uint64_t rv, struct store_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	const char *nl = memchr(v, '\n', len);
	long long mtime = 0, off = -1;
	if (!nl || sscanf(v, "corral1 %lld %lld", &mtime, &off) != 2)
		return -EINVAL;
	const char *yaml = nl + 1;
	size_t ylen = len - (size_t)(yaml - v);
	size_t mlen = strlen(STORE_ETCD_RV_MARK);
	rec->rv = rv;
	rec->mtime_ns = mtime;
	if (off >= 0 && (size_t)off + mlen <= ylen &&
	    memcmp(yaml + off, STORE_ETCD_RV_MARK, mlen) == 0) {
		char num[24];
		int nn = snprintf(num, sizeof(num), "%llu", (unsigned long long)rv);
		rec->len = ylen - mlen + (size_t)nn;
		rec->yaml = xmalloc(rec->len + 1);
		memcpy(rec->yaml, yaml, (size_t)off);
		memcpy(rec->yaml + off, num, (size_t)nn);
		memcpy(rec->yaml + off + nn, yaml + off + mlen, ylen - (size_t)off - mlen);
		rec->yaml[rec->len] = '\0';
	} else {
		rec->yaml = xmemdup0(yaml, ylen);
		rec->len = ylen;
	}
	return 0;
}

/* ---- JSON and base64 ---- */

static char *etcd__b64(const void *p, size_t n)
{
	char *out = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
	return out;
}

static json_t *etcd__b64_json_n(const char *s, size_t n)
{
	cleanup_free char *b = etcd__b64(s, n);
	return json_string(b);
}

static json_t *etcd__b64_json(const char *s)
{
	return etcd__b64_json_n(s, strlen(s));
}

/* A field etcd sends as a string (int64) or, in a request, as a number. */
static uint64_t etcd__u64(const json_t *o, const char *key)
{
	const json_t *v = o ? json_object_get(o, key) : NULL;
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	return 0;
}

/* A base64 field, decoded: malloc'd, NUL-terminated ("" when absent). */
static char *etcd__bytes(const json_t *o, const char *key, size_t *len)
{
	const char *s = json_string_value(json_object_get(o, key));
	size_t n = 0;
	char *p = s ? util_base64_decode(s, &n, NULL) : NULL;
	if (!p) {
		p = xstrdup("");
		n = 0;
	}
	if (len)
		*len = n;
	return p;
}

static uint64_t etcd__header_rev(const json_t *resp)
{
	return etcd__u64(json_object_get(resp, "header"), "revision");
}

/* ---- HTTP ---- */

struct etcd__buf {
	char *p;
	size_t len, cap;
};

static size_t etcd__collect(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct etcd__buf *b = ud;
	size_t n = size * nmemb;
	if (b->len + n > ETCD__RESPONSE_MAX)
		return 0;
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, ptr, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* A POST of payload (JSON) to url, the answer to write(data). */
static void etcd__curl_setup(CURL *h, const char *url, const char *payload, struct curl_slist *hdrs,
			     size_t (*write)(char *, size_t, size_t, void *), void *data)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, data);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)ETCD__CONNECT_MS);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
}

static CURL *etcd__handle(struct store_etcd *s)
{
	CURL *h = NULL;
	pthread_mutex_lock(&s->pool_lock);
	if (s->npool > 0)
		h = s->pool[--s->npool];
	pthread_mutex_unlock(&s->pool_lock);
	if (!h && !(h = curl_easy_init()))
		abort(); /* out of memory, as xmalloc */
	return h;
}

static void etcd__handle_done(struct store_etcd *s, CURL *h)
{
	pthread_mutex_lock(&s->pool_lock);
	if (s->npool < ETCD__POOL_MAX) {
		s->pool[s->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&s->pool_lock);
	if (h)
		curl_easy_cleanup(h);
}

static void etcd__note_rev(struct store_etcd *s, uint64_t rev)
{
	pthread_mutex_lock(&s->lock);
	if (rev > s->rev) {
		s->rev = rev;
		pthread_cond_broadcast(&s->rev_cond);
	}
	pthread_mutex_unlock(&s->lock);
}

/* Every change up to seen is delivered (or listed): a probe waiting for
 * it has its proof. */
static void etcd__note_seen(struct store_etcd *s, uint64_t seen)
{
	pthread_mutex_lock(&s->lock);
	if (seen > s->seen) {
		s->seen = seen;
		pthread_cond_broadcast(&s->rev_cond); /* the box grew (outbox_wait) */
	}
	if (s->probe_rev && s->seen >= s->probe_rev) {
		if (s->probe_ms > s->fresh_ms)
			s->fresh_ms = s->probe_ms;
		s->probe_rev = 0;
	}
	pthread_mutex_unlock(&s->lock);
	etcd__note_rev(s, seen);
}

static int etcd__barrier(struct store_etcd *s, size_t *at);

/* POSTs body to path on a member and parses the answer. A request that
 * could not connect goes to the next member; one that may have reached a
 * member goes to the next only when retry is set (reads). A transaction
 * sent while a member was lost less than ETCD__TROUBLE_MS ago goes to
 * the member that etcd__barrier() finds. Errors: EIO, the message naming
 * the member and what failed. */
static int etcd__post_within(struct store_etcd *s, const char *path, json_t *body, bool retry,
			     long timeout_ms, json_t **out, struct error **err)
{
	cleanup_free char *payload = json_dumps(body, JSON_COMPACT);
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	CURL *h = etcd__handle(s);
	int r = -EIO;
	bool write = !retry && strcmp(path, "/v3/kv/txn") == 0;
	size_t at = 0;
	if (write && etcd__now_ms() - atomic_load(&s->trouble_ms) < ETCD__TROUBLE_MS &&
	    etcd__barrier(s, &at) == 0)
		atomic_store(&s->current, at);
	size_t first = atomic_load(&s->current), idx = first, n = s->nendpoints;
	char why[256] = "no member";
	for (size_t i = 0; i < n; i++, idx = (idx + 1) % n) {
		cleanup_free char *url = xasprintf("http://%s%s", s->endpoints[idx], path);
		struct etcd__buf b = {0};
		etcd__curl_setup(h, url, payload, hdrs, etcd__collect, &b);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
		CURLcode rc = curl_easy_perform(h);
		long code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (rc != CURLE_OK) {
			snprintf(why, sizeof(why), "%s: %s", s->endpoints[idx],
				 curl_easy_strerror(rc));
			free(b.p);
			if (rc == CURLE_COULDNT_CONNECT)
				atomic_store(&s->trouble_ms, etcd__now_ms());
			if (rc == CURLE_COULDNT_CONNECT && write && etcd__barrier(s, &at) == 0 &&
			    at != idx)
				idx = (at + n - 1) % n; /* the next try goes to at */
			if (rc == CURLE_COULDNT_CONNECT || retry)
				continue;
			break;
		}
		json_error_t jerr;
		json_t *resp = json_loadb(b.p ? b.p : "", b.len, 0, &jerr);
		free(b.p);
		if (code != 200 || !resp) {
			const char *msg = json_string_value(json_object_get(resp, "message"));
			if (!msg)
				msg = json_string_value(json_object_get(resp, "error"));
			snprintf(why, sizeof(why), "%s: HTTP %ld: %s", s->endpoints[idx], code,
				 msg	? msg
				 : resp ? "?"
					: jerr.text);
			json_decref(resp);
			/* etcd said no (no leader, a timeout): tell it by
			 * moving on when the request may be repeated. */
			if (retry)
				continue;
			break;
		}
		if (idx != first)
			atomic_store(&s->current, idx);
		*out = resp;
		r = 0;
		break;
	}
	curl_slist_free_all(hdrs);
	etcd__handle_done(s, h);
	if (r < 0) {
		/* The next request starts at the next member. */
		atomic_store(&s->current, (first + 1) % s->nendpoints);
		error_set(err, EIO, "etcd: %s", why);
	} else {
		etcd__note_rev(s, etcd__header_rev(*out));
	}
	return r;
}

static int etcd__post(struct store_etcd *s, const char *path, json_t *body, bool retry,
		      json_t **out, struct error **err)
{
	return etcd__post_within(s, path, body, retry, ETCD__TIMEOUT_MS, out, err);
}

/* ---- requests ---- */

static json_t *etcd__range_req(const char *key, const char *end)
{
	json_t *q = json_object();
	json_object_set_new(q, "key", etcd__b64_json(key));
	if (end)
		json_object_set_new(q, "range_end", etcd__b64_json(end));
	return q;
}

/* After a member could not be reached (perhaps the leader, killed): a
 * transaction sent on to a follower that has not noticed yet would be
 * forwarded to the dead leader and lost, its outcome unknown until the
 * request times out. A read, which may be repeated on every member,
 * finds one that has a leader (a linearizable read needs one): the
 * write goes there. *at: that member; -1 when none answers. */
static int etcd__barrier(struct store_etcd *s, size_t *at)
{
	cleanup_free char *key = store_etcd_key(STORE_ETCD_LIVE, s->writer);
	json_t *req = etcd__range_req(key, NULL);
	json_object_set_new(req, "count_only", json_true());
	json_t *resp = NULL;
	struct error *err = NULL;
	int r = etcd__post_within(s, "/v3/kv/range", req, true, ETCD__TIMEOUT_MS, &resp, &err);
	json_decref(req);
	if (r < 0) {
		error_free(err);
		return -1;
	}
	json_decref(resp);
	*at = atomic_load(&s->current);
	return 0;
}

static json_t *etcd__put_op(const char *key, const char *val, size_t len)
{
	json_t *put = json_object();
	json_object_set_new(put, "key", etcd__b64_json(key));
	cleanup_free char *v = etcd__b64(val, len);
	json_object_set_new(put, "value", json_string(v));
	json_t *op = json_object();
	json_object_set_new(op, "request_put", put);
	return op;
}

static json_t *etcd__put_lease_op(const char *key, const char *val, int64_t lease)
{
	json_t *op = etcd__put_op(key, val, strlen(val));
	json_object_set_new(json_object_get(op, "request_put"), "lease",
			    json_integer((json_int_t)lease));
	return op;
}

static json_t *etcd__delete_op(const char *key)
{
	json_t *op = json_object();
	json_object_set_new(op, "request_delete_range", etcd__range_req(key, NULL));
	return op;
}

static json_t *etcd__range_op(const char *key)
{
	json_t *op = json_object();
	json_object_set_new(op, "request_range", etcd__range_req(key, NULL));
	return op;
}

static json_t *etcd__compare_mod(const char *key, uint64_t rev)
{
	json_t *c = json_object();
	json_object_set_new(c, "key", etcd__b64_json(key));
	json_object_set_new(c, "target", json_string("MOD"));
	json_object_set_new(c, "result", json_string("EQUAL"));
	json_object_set_new(c, "mod_revision", json_integer((json_int_t)rev));
	return c;
}

/* A compare that key does not exist. */
static json_t *etcd__compare_absent(const char *key)
{
	json_t *c = json_object();
	json_object_set_new(c, "key", etcd__b64_json(key));
	json_object_set_new(c, "target", json_string("CREATE"));
	json_object_set_new(c, "result", json_string("EQUAL"));
	json_object_set_new(c, "create_revision", json_integer(0));
	return c;
}

/* One transaction: if every compare of cmps holds (NULL: none), success's
 * operations, else failure's (NULL: nothing). Takes all three. */
static int etcd__txn_ops(struct store_etcd *s, json_t *cmps, json_t *success, json_t *failure,
			 bool retry, json_t **resp, struct error **err)
{
	json_t *req = json_object();
	if (cmps)
		json_object_set_new(req, "compare", cmps);
	json_object_set_new(req, "success", success);
	if (failure)
		json_object_set_new(req, "failure", failure);
	int r = etcd__post(s, "/v3/kv/txn", req, retry, resp, err);
	json_decref(req);
	return r;
}

/* etcd__txn_ops() with one compare (cmp NULL: none) and a read of
 * fail_key (NULL: nothing) on failure. Takes cmp and success. */
static int etcd__txn(struct store_etcd *s, json_t *cmp, json_t *success, const char *fail_key,
		     bool retry, json_t **resp, struct error **err)
{
	json_t *cmps = NULL, *fail = NULL;
	if (cmp) {
		cmps = json_array();
		json_array_append_new(cmps, cmp);
	}
	if (fail_key) {
		fail = json_array();
		json_array_append_new(fail, etcd__range_op(fail_key));
	}
	return etcd__txn_ops(s, cmps, success, fail, retry, resp, err);
}

/* A read (req: a RangeRequest, taken), tried on every member. */
static int etcd__range(struct store_etcd *s, json_t *req, json_t **resp, struct error **err)
{
	int r = etcd__post(s, "/v3/kv/range", req, true, resp, err);
	json_decref(req);
	return r;
}

/* The kvs of a range answer (of a txn's i-th answer when i >= 0). */
static json_t *etcd__kvs(json_t *resp, int i)
{
	if (i >= 0) {
		json_t *r = json_array_get(json_object_get(resp, "responses"), (size_t)i);
		resp = json_object_get(r, "response_range");
	}
	return json_object_get(resp, "kvs");
}

static int etcd__record(const json_t *kv, bool with_yaml, struct store_record *rec)
{
	size_t len;
	cleanup_free char *v = etcd__bytes(kv, "value", &len);
	int r = store_etcd_decode_value(v, len, etcd__u64(kv, "mod_revision"), rec);
	if (r == 0 && !with_yaml) {
		free(rec->yaml);
		rec->yaml = NULL;
	}
	return r;
}

/* ---- own changes ---- */

/* A write transaction is about to be sent: its ticket. */
static uint64_t etcd__txn_begin(struct store_etcd *s)
{
	pthread_mutex_lock(&s->lock);
	uint64_t t = ++s->next_ticket;
	if (s->ninflight == s->inflight_cap) {
		s->inflight_cap = s->inflight_cap ? s->inflight_cap * 2 : 16;
		s->inflight = xrealloc(s->inflight, s->inflight_cap * sizeof(*s->inflight));
	}
	s->inflight[s->ninflight++] = t;
	pthread_mutex_unlock(&s->lock);
	return t;
}

/* The transaction of ticket t was answered: committed at rev (0: not
 * committed, or its answer lost). */
static void etcd__txn_end(struct store_etcd *s, uint64_t t, uint64_t rev)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->ninflight; i++)
		if (s->inflight[i] == t) {
			s->inflight[i] = s->inflight[--s->ninflight];
			break;
		}
	/* What the watch has passed it will not report: nothing to filter. */
	if (rev && rev > s->seen) {
		if (s->nown == s->own_cap) {
			s->own_cap = s->own_cap ? s->own_cap * 2 : 16;
			s->own = xrealloc(s->own, s->own_cap * sizeof(*s->own));
		}
		size_t i = s->nown;
		while (i > 0 && s->own[i - 1] > rev) {
			s->own[i] = s->own[i - 1];
			i--;
		}
		s->own[i] = rev;
		s->nown++;
	}
	pthread_cond_broadcast(&s->txn_cond);
	pthread_mutex_unlock(&s->lock);
}

/* Whether the change at rev (just received by the watch) is this
 * process's: waits for the answers of the transactions sent before it
 * arrived, then forgets every own revision up to rev. */
static bool etcd__own(struct store_etcd *s, uint64_t rev)
{
	struct timespec until = util_deadline(CLOCK_REALTIME, ETCD__OWN_WAIT_MS);
	pthread_mutex_lock(&s->lock);
	uint64_t arrived = s->next_ticket;
	for (;;) {
		bool found = false, waiting = false;
		for (size_t i = 0; i < s->nown && !found; i++)
			found = s->own[i] == rev;
		for (size_t i = 0; i < s->ninflight && !found && !waiting; i++)
			waiting = s->inflight[i] <= arrived;
		if (found || !waiting ||
		    pthread_cond_timedwait(&s->txn_cond, &s->lock, &until) == ETIMEDOUT)
			break;
	}
	bool own = false;
	size_t keep = 0;
	for (size_t i = 0; i < s->nown; i++) {
		if (s->own[i] == rev)
			own = true;
		if (s->own[i] > rev)
			s->own[keep++] = s->own[i];
	}
	s->nown = keep;
	pthread_mutex_unlock(&s->lock);
	return own;
}

void store_etcd_lose_replies(struct store *ss, unsigned n)
{
	atomic_store(&((struct store_etcd *)ss)->lose_replies, n);
}

/* ---- store.h over etcd ---- */

static struct store_etcd *etcd__of(struct store *s)
{
	return (struct store_etcd *)s;
}

/* The outbox entry of c, as a put. */
static json_t *etcd__outbox_op(struct store_etcd *s, const struct store_change *c, int64_t mtime)
{
	json_t *e = json_object();
	json_object_set_new(e, "path", json_string(c->history_path));
	json_object_set_new(e, "author",
			    json_string(c->author ? c->author : "corral <corral@localhost>"));
	json_object_set_new(e, "message", json_string(c->message ? c->message : ""));
	json_object_set_new(e, "when", json_integer((json_int_t)mtime));
	if (c->history_yaml)
		json_object_set_new(e, "yaml", json_string(c->history_yaml));
	cleanup_free char *text = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	char id[96];
	snprintf(id, sizeof(id), "%s-%016llx", s->writer,
		 (unsigned long long)atomic_fetch_add(&s->seq, 1));
	cleanup_free char *hkey = store_etcd_key(STORE_ETCD_OUTBOX, id);
	return etcd__put_op(hkey, text, strlen(text));
}

/* Why c's transaction failed, from its failure reads (the object, then
 * each claim taken): EAGAIN, ENOENT or the refusal of a claim held. */
static int etcd__apply_refused(const struct store_change *c, json_t *resp, struct error **err)
{
	json_t *kv = json_array_get(etcd__kvs(resp, 0), 0);
	uint64_t cur = kv ? etcd__u64(kv, "mod_revision") : 0;
	if (!c->obj && !kv)
		return error_set(err, ENOENT, "%s: no such object", c->key);
	if (cur == c->expect_rv) {
		size_t at = 1;
		for (size_t i = 0; i < c->nclaims; i++) {
			if (!c->claims[i].take)
				continue;
			json_t *ckv = json_array_get(etcd__kvs(resp, (int)at++), 0);
			if (!ckv)
				continue;
			cleanup_free char *holder = etcd__bytes(ckv, "value", NULL);
			return error_set(err, EINVAL, "%s (to %s)", c->claims[i].refusal, holder);
		}
	}
	return error_set(err, EAGAIN, "%s: changed meanwhile (revision %llu, expected %llu)",
			 c->key, (unsigned long long)cur, (unsigned long long)c->expect_rv);
}

static int etcd__apply(struct store *ss, struct store_change *c, struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	cleanup_free char *okey = store_etcd_key(STORE_ETCD_OBJECT, c->key);
	cleanup_free char *dkey = store_etcd_key(STORE_ETCD_DECL, c->key);
	cleanup_free char *value = NULL;
	size_t vlen = 0;
	int64_t mtime = etcd__now_ns();
	json_t *ops = json_array();
	json_t *cmps = json_array();
	json_t *fail = json_array();
	json_array_append_new(cmps, etcd__compare_mod(okey, c->expect_rv));
	json_array_append_new(fail, etcd__range_op(okey));
	if (c->obj) {
		ynode_set(ynode_get_map(c->obj, "metadata"), "resourceVersion",
			  ynode_new_str(STORE_ETCD_RV_MARK));
		size_t ylen;
		cleanup_free char *yaml = yaml_emit(c->obj, &ylen);
		value = store_etcd_encode_value(mtime, yaml, ylen, &vlen);
		json_array_append_new(ops, etcd__put_op(okey, value, vlen));
		if (c->decl_changed)
			json_array_append_new(ops, etcd__put_op(dkey, "", 0));
	} else {
		json_array_append_new(ops, etcd__delete_op(okey));
		json_array_append_new(ops, etcd__delete_op(dkey));
	}
	for (size_t i = 0; i < c->nclaims; i++) {
		const struct store_claim *cl = &c->claims[i];
		cleanup_free char *ckey = store_etcd_key(STORE_ETCD_CLAIM, cl->name);
		if (cl->take) {
			json_array_append_new(cmps, etcd__compare_absent(ckey));
			json_array_append_new(fail, etcd__range_op(ckey));
			json_array_append_new(ops,
					      etcd__put_op(ckey, cl->holder, strlen(cl->holder)));
		} else {
			json_array_append_new(ops, etcd__delete_op(ckey));
		}
	}
	if (c->history_path)
		json_array_append_new(ops, etcd__outbox_op(s, c, mtime));
	json_t *resp = NULL;
	uint64_t ticket = etcd__txn_begin(s);
	int r = etcd__txn_ops(s, cmps, ops, fail, false, &resp, err);
	bool committed = r == 0 && json_is_true(json_object_get(resp, "succeeded"));
	uint64_t rev = committed ? etcd__header_rev(resp) : 0;
	unsigned lose = atomic_load(&s->lose_replies);
	bool lost = committed && lose > 0 &&
		    atomic_compare_exchange_strong(&s->lose_replies, &lose, lose - 1);
	etcd__txn_end(s, ticket, lost ? 0 : rev);
	if (r < 0)
		return r;
	if (lost) {
		json_decref(resp);
		return error_set(err, EIO, "etcd: the answer to the write of %s was lost", c->key);
	}
	if (!committed) {
		r = etcd__apply_refused(c, resp, err);
		json_decref(resp);
		return r;
	}
	c->rv = rev;
	c->mtime_ns = mtime;
	json_decref(resp);
	if (c->obj) {
		char rvbuf[24];
		snprintf(rvbuf, sizeof(rvbuf), "%llu", (unsigned long long)c->rv);
		ynode_set(ynode_get_map(c->obj, "metadata"), "resourceVersion",
			  ynode_new_str(rvbuf));
		struct store_record rec;
		store_etcd_decode_value(value, vlen, c->rv, &rec);
		free(c->yaml);
		c->yaml = rec.yaml;
		c->yaml_len = rec.len;
	}
	return 0;
}

static void etcd__lock_key(struct store *ss, const char *key)
{
	keylocks_lock(etcd__of(ss)->keys, key);
}

static void etcd__unlock_key(struct store *ss, const char *key)
{
	keylocks_unlock(etcd__of(ss)->keys, key);
}

static int etcd__get(struct store *ss, const char *key, struct store_record *rec,
		     struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	cleanup_free char *okey = store_etcd_key(STORE_ETCD_OBJECT, key);
	cleanup_free char *dkey = store_etcd_key(STORE_ETCD_DECL, key);
	json_t *ops = json_array();
	json_array_append_new(ops, etcd__range_op(okey));
	json_array_append_new(ops, etcd__range_op(dkey));
	json_t *resp = NULL;
	int r = etcd__txn(s, NULL, ops, NULL, true, &resp, err);
	if (r < 0)
		return r;
	json_t *kv = json_array_get(etcd__kvs(resp, 0), 0);
	json_t *dkv = json_array_get(etcd__kvs(resp, 1), 0);
	if (!kv)
		r = error_set(err, ENOENT, "%s: no such object", key);
	else if (etcd__record(kv, true, rec) < 0)
		r = error_set(err, EIO, "%s: not corral's value in etcd", key);
	else if (dkv)
		rec->decl_rv = etcd__u64(dkv, "mod_revision");
	json_decref(resp);
	return r;
}

/* Every object, one page at a time, at one revision; *rev_out: that
 * revision. */
static int etcd__list(struct store_etcd *s, bool with_yaml,
		      int (*fn)(void *data, const char *key, const struct store_record *rec),
		      void *data, uint64_t *rev_out, struct error **err)
{
	cleanup_free char *prefix = store_etcd_key(STORE_ETCD_OBJECT, NULL);
	cleanup_free char *end = store_etcd_range_end(prefix);
	cleanup_free char *from = xstrdup(prefix);
	size_t from_len = strlen(from);
	uint64_t at = 0;
	size_t plen = strlen(prefix);
	for (;;) {
		json_t *req = etcd__range_req(prefix, end);
		json_object_set_new(req, "key", etcd__b64_json_n(from, from_len));
		json_object_set_new(req, "limit", json_integer(ETCD__PAGE));
		if (at)
			json_object_set_new(req, "revision", json_integer((json_int_t)at));
		json_t *resp = NULL;
		int r = etcd__range(s, req, &resp, err);
		if (r < 0)
			return r;
		if (!at)
			at = etcd__header_rev(resp);
		json_t *kvs = etcd__kvs(resp, -1);
		size_t i;
		json_t *kv;
		cleanup_free char *last = NULL;
		json_array_foreach(kvs, i, kv)
		{
			size_t klen;
			free(last);
			last = etcd__bytes(kv, "key", &klen);
			struct store_record rec;
			if (klen <= plen || etcd__record(kv, with_yaml, &rec) < 0)
				continue;
			r = fn(data, last + plen, &rec);
			store_record_clear(&rec);
			if (r != 0)
				break;
		}
		bool more = json_is_true(json_object_get(resp, "more"));
		json_decref(resp);
		if (r != 0)
			return r < 0 ? r : 0;
		if (!more || !last)
			break;
		/* The next page starts just after last: last and a NUL byte. */
		free(from);
		from_len = strlen(last) + 1;
		from = xmemdup0(last, from_len - 1);
	}
	if (rev_out)
		*rev_out = at;
	return 0;
}

static int etcd__foreach(struct store *ss, bool with_yaml,
			 int (*fn)(void *data, const char *key, const struct store_record *rec),
			 void *data, struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	uint64_t at = 0;
	int r = etcd__list(s, with_yaml, fn, data, &at, err);
	/* The watch starts after the last full listing. */
	if (r == 0 && !s->watching)
		etcd__note_seen(s, at);
	return r;
}

static int etcd__snapshot(struct store *ss,
			  int (*fn)(void *data, const char *key, const struct store_record *rec),
			  void *data, uint64_t *rev, struct error **err)
{
	*rev = 0;
	return etcd__list(etcd__of(ss), true, fn, data, rev, err);
}

static uint64_t etcd__revision(struct store *ss)
{
	struct store_etcd *s = etcd__of(ss);
	pthread_mutex_lock(&s->lock);
	uint64_t r = s->rev;
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int etcd__raise_revision(struct store *ss, uint64_t rev, struct error **err)
{
	if (rev <= etcd__revision(ss))
		return 0;
	return error_set(err, EOPNOTSUPP,
			 "etcd: cannot raise the revision to %llu (etcd counts its own): "
			 "--restore needs the LMDB store",
			 (unsigned long long)rev);
}

static bool etcd__is_empty(struct store *ss)
{
	struct store_etcd *s = etcd__of(ss);
	cleanup_free char *prefix = store_etcd_key(STORE_ETCD_OBJECT, NULL);
	cleanup_free char *end = store_etcd_range_end(prefix);
	json_t *req = etcd__range_req(prefix, end);
	json_object_set_new(req, "count_only", json_true());
	json_t *resp = NULL;
	struct error *err = NULL;
	int r = etcd__range(s, req, &resp, &err);
	if (r < 0) {
		log_warn("%s", err->msg);
		error_free(err);
		return false;
	}
	bool empty = etcd__u64(resp, "count") == 0;
	json_decref(resp);
	return empty;
}

/* The outbox entry of kv (an h/ key's), into x: whether it is one. */
static bool etcd__outbox_entry(const json_t *kv, struct store_outbox_entry *x)
{
	size_t len;
	cleanup_free char *v = etcd__bytes(kv, "value", &len);
	json_t *o = json_loadb(v, len, 0, NULL);
	const char *path = json_string_value(json_object_get(o, "path"));
	if (path) {
		const char *yaml = json_string_value(json_object_get(o, "yaml"));
		const char *author = json_string_value(json_object_get(o, "author"));
		const char *msg = json_string_value(json_object_get(o, "message"));
		x->rv = etcd__u64(kv, "mod_revision");
		x->path = xstrdup(path);
		x->author = xstrdup(author ? author : "corral <corral@localhost>");
		x->message = xstrdup(msg ? msg : "");
		x->when_ns = (int64_t)etcd__u64(o, "when");
		x->yaml = yaml ? xstrdup(yaml) : NULL;
	}
	json_decref(o);
	return path != NULL;
}

static void etcd__outbox_copy(struct store_outbox_entry *to, const struct store_outbox_entry *e)
{
	*to = (struct store_outbox_entry){.rv = e->rv,
					  .path = xstrdup(e->path),
					  .yaml = e->yaml ? xstrdup(e->yaml) : NULL,
					  .message = xstrdup(e->message),
					  .author = xstrdup(e->author),
					  .when_ns = e->when_ns};
}

/* Forgets the box's first n entries: the box now begins after the last
 * of them. lock held. */
static void etcd__box_drop(struct store_etcd *s, size_t n)
{
	if (n == 0)
		return;
	if (s->box[n - 1].rv > s->box_from)
		s->box_from = s->box[n - 1].rv;
	for (size_t i = 0; i < n; i++) {
		free(s->box[i].path);
		free(s->box[i].yaml);
		free(s->box[i].message);
		free(s->box[i].author);
	}
	memmove(s->box, s->box + n, (s->nbox - n) * sizeof(*s->box));
	s->nbox -= n;
}

/* The entries of the box after after_rv (at most max), when the box has
 * every one of them: whether it had. lock held. */
static bool etcd__box_read(struct store_etcd *s, uint64_t after_rv, size_t max,
			   struct store_outbox_entry **out, size_t *n)
{
	s->box_used = false;
	if (!s->watching || after_rv < s->box_from)
		return false;
	/* The one reader (the history) asks from where its HEAD is: what it
	 * has passed is not asked for again. */
	size_t had = 0;
	while (had < s->nbox && s->box[had].rv <= after_rv)
		had++;
	etcd__box_drop(s, had);
	s->box_from = after_rv;
	size_t cnt = s->nbox < max ? s->nbox : max;
	*out = xcalloc(cnt + 1, sizeof(**out));
	for (size_t i = 0; i < cnt; i++)
		etcd__outbox_copy(&(*out)[i], &s->box[i]);
	*n = cnt;
	s->box_read = s->seen;
	s->box_used = true;
	return true;
}

/* The history's reads come from the box, which the watch fills, as long
 * as it holds everything after after_rv; from etcd otherwise (before the
 * watch, after a compaction, or a history far behind). A range over the
 * outbox makes etcd read all of its keys, however few come back. */
static int etcd__outbox_read(struct store *ss, uint64_t after_rv, size_t max,
			     struct store_outbox_entry **out, size_t *n, struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	*out = NULL;
	*n = 0;
	if (after_rv == UINT64_MAX)
		return 0;
	pthread_mutex_lock(&s->lock);
	bool boxed = etcd__box_read(s, after_rv, max, out, n);
	pthread_mutex_unlock(&s->lock);
	if (boxed)
		return 0;
	cleanup_free char *prefix = store_etcd_key(STORE_ETCD_OUTBOX, NULL);
	cleanup_free char *end = store_etcd_range_end(prefix);
	json_t *req = etcd__range_req(prefix, end);
	json_object_set_new(req, "min_mod_revision", json_integer((json_int_t)after_rv + 1));
	json_object_set_new(req, "sort_order", json_string("ASCEND"));
	json_object_set_new(req, "sort_target", json_string("MOD"));
	json_object_set_new(req, "limit", json_integer((json_int_t)max));
	json_t *resp = NULL;
	int r = etcd__range(s, req, &resp, err);
	if (r < 0)
		return r;
	json_t *kvs = etcd__kvs(resp, -1);
	struct store_outbox_entry *e = xcalloc(json_array_size(kvs) + 1, sizeof(*e));
	size_t cnt = 0, i;
	json_t *kv;
	json_array_foreach(kvs, i, kv)
	{
		if (cnt < max && etcd__outbox_entry(kv, &e[cnt]))
			cnt++;
	}
	json_decref(resp);
	*out = e;
	*n = cnt;
	return 0;
}

/* Holds this replica's lease (granted, or kept alive when a third of its
 * time has passed); 0 or an error. lease_lock held. */
static int etcd__keep_lease_locked(struct store_etcd *s, struct error **err)
{
	int64_t now = etcd__now_ms();
	if (s->lease && now < s->lease_until_ms - ETCD__LEASE_TTL_S * 1000 * 2 / 3)
		return 0;
	json_t *resp = NULL;
	if (s->lease) {
		json_t *req = json_object();
		json_object_set_new(req, "ID", json_integer((json_int_t)s->lease));
		int r = etcd__post(s, "/v3/lease/keepalive", req, true, &resp, err);
		json_decref(req);
		if (r < 0)
			return r;
		json_t *res = json_object_get(resp, "result");
		bool alive = etcd__u64(res ? res : resp, "TTL") > 0;
		json_decref(resp);
		if (alive) {
			s->lease_until_ms = now + ETCD__LEASE_TTL_S * 1000;
			return 0;
		}
		s->lease = 0; /* expired: a new one */
	}
	json_t *req = json_object();
	json_object_set_new(req, "TTL", json_integer(ETCD__LEASE_TTL_S));
	int r = etcd__post(s, "/v3/lease/grant", req, true, &resp, err);
	json_decref(req);
	if (r < 0)
		return r;
	s->lease = (int64_t)etcd__u64(resp, "ID");
	json_decref(resp);
	if (!s->lease)
		return error_set(err, EIO, "etcd: no lease granted");
	s->lease_until_ms = now + ETCD__LEASE_TTL_S * 1000;
	return 0;
}

/* etcd__keep_lease_locked(), and the lease held in *lease. */
static int etcd__keep_lease(struct store_etcd *s, int64_t *lease, struct error **err)
{
	pthread_mutex_lock(&s->lease_lock);
	int r = etcd__keep_lease_locked(s, err);
	*lease = s->lease;
	pthread_mutex_unlock(&s->lease_lock);
	return r;
}

/* Renews the lease if there is one (the keeper's). */
static void etcd__renew_lease(struct store_etcd *s)
{
	pthread_mutex_lock(&s->lease_lock);
	struct error *err = NULL;
	if (s->lease && etcd__keep_lease_locked(s, &err) < 0) {
		log_warn("%s (renewing the history's lease)", err->msg);
		error_free(err);
	}
	pthread_mutex_unlock(&s->lease_lock);
}

/* Whether this replica is the outbox's trimmer: it holds
 * STORE_ETCD_TRIMMER_KEY, or takes it when no live lease holds it. */
static int etcd__elect_trimmer(struct store_etcd *s, int64_t lease, bool *leader,
			       struct error **err)
{
	json_t *c = etcd__compare_absent(STORE_ETCD_TRIMMER_KEY);
	json_t *ops = json_array();
	json_array_append_new(ops, etcd__put_lease_op(STORE_ETCD_TRIMMER_KEY, s->writer, lease));
	json_t *resp = NULL;
	int r = etcd__txn(s, c, ops, STORE_ETCD_TRIMMER_KEY, false, &resp, err);
	if (r < 0)
		return r;
	if (json_is_true(json_object_get(resp, "succeeded"))) {
		*leader = true;
	} else {
		json_t *kv = json_array_get(etcd__kvs(resp, 0), 0);
		cleanup_free char *holder = kv ? etcd__bytes(kv, "value", NULL) : NULL;
		*leader = holder && strcmp(holder, s->writer) == 0;
	}
	json_decref(resp);
	return 0;
}

/* Deletes ops (delete operations, taken) in one transaction. */
static int etcd__delete_batch(struct store_etcd *s, json_t *ops, struct error **err)
{
	json_t *resp = NULL;
	int r = etcd__txn(s, NULL, ops, NULL, false, &resp, err);
	if (r == 0)
		json_decref(resp);
	return r;
}

/* Deletes the outbox entries up to rv, ETCD__TXN_OPS a transaction, in
 * one pass over the outbox's keys by pages: a filter on the revision
 * would make etcd read the whole outbox for every page. */
static int etcd__outbox_delete(struct store_etcd *s, uint64_t rv, struct error **err)
{
	cleanup_free char *prefix = store_etcd_key(STORE_ETCD_OUTBOX, NULL);
	cleanup_free char *end = store_etcd_range_end(prefix);
	cleanup_free char *from = xstrdup(prefix);
	size_t from_len = strlen(from);
	json_t *ops = json_array();
	int r = 0;
	for (bool more = true; more && r == 0;) {
		json_t *req = etcd__range_req(prefix, end);
		json_object_set_new(req, "key", etcd__b64_json_n(from, from_len));
		json_object_set_new(req, "keys_only", json_true());
		json_object_set_new(req, "limit", json_integer(ETCD__PAGE));
		json_t *resp = NULL;
		if ((r = etcd__range(s, req, &resp, err)) < 0)
			break;
		size_t i;
		json_t *kv;
		cleanup_free char *last = NULL;
		json_array_foreach(etcd__kvs(resp, -1), i, kv)
		{
			free(last);
			last = etcd__bytes(kv, "key", NULL);
			if (etcd__u64(kv, "mod_revision") > rv)
				continue;
			json_array_append_new(ops, etcd__delete_op(last));
			if (json_array_size(ops) == ETCD__TXN_OPS && r == 0) {
				r = etcd__delete_batch(s, ops, err);
				ops = json_array();
			}
		}
		more = json_is_true(json_object_get(resp, "more")) && last;
		json_decref(resp);
		if (more) {
			/* The next page starts just after last. */
			free(from);
			from_len = strlen(last) + 1;
			from = xmemdup0(last, from_len - 1);
		}
	}
	if (r == 0 && json_array_size(ops) > 0)
		return etcd__delete_batch(s, ops, err);
	json_decref(ops);
	return r;
}

/* The history's outbox is shared by every replica: each records the
 * revision its history reached (leased, so that a replica gone stops
 * counting); the elected trimmer deletes what all of them hold. */
static int etcd__outbox_trim(struct store *ss, uint64_t rv, struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	int64_t lease = 0;
	int r = etcd__keep_lease(s, &lease, err);
	if (r < 0)
		return r;
	cleanup_free char *mine = store_etcd_key(STORE_ETCD_REPLICA, s->writer);
	char val[24];
	snprintf(val, sizeof(val), "%llu", (unsigned long long)rv);
	json_t *ops = json_array();
	json_array_append_new(ops, etcd__put_lease_op(mine, val, lease));
	json_t *resp = NULL;
	if ((r = etcd__txn(s, NULL, ops, NULL, false, &resp, err)) < 0)
		return r;
	json_decref(resp);
	bool leader = false;
	if ((r = etcd__elect_trimmer(s, lease, &leader, err)) < 0 || !leader)
		return r;
	cleanup_free char *prefix = store_etcd_key(STORE_ETCD_REPLICA, NULL);
	cleanup_free char *end = store_etcd_range_end(prefix);
	json_t *req = etcd__range_req(prefix, end);
	r = etcd__range(s, req, &resp, err);
	if (r < 0)
		return r;
	uint64_t low = rv;
	size_t i;
	json_t *kv;
	json_array_foreach(etcd__kvs(resp, -1), i, kv)
	{
		cleanup_free char *v = etcd__bytes(kv, "value", NULL);
		uint64_t reached = strtoull(v, NULL, 10);
		if (reached < low)
			low = reached;
	}
	json_decref(resp);
	return low ? etcd__outbox_delete(s, low, err) : 0;
}

static void etcd__outbox_wait(struct store *ss, uint64_t after_rv, int timeout_ms)
{
	struct store_etcd *s = etcd__of(ss);
	struct timespec ts = util_deadline(CLOCK_REALTIME, (uint64_t)timeout_ms);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		/* after_rv is the revision the history saw before its read;
		 * read from the box, the read had what the watch had then,
		 * and what comes next comes through the watch. */
		uint64_t bar = after_rv, at = s->rev;
		if (s->box_used) {
			at = s->seen;
			if (after_rv < UINT64_MAX - 1 && s->box_read < bar)
				bar = s->box_read;
		}
		if (at > bar || s->kicked ||
		    pthread_cond_timedwait(&s->rev_cond, &s->lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&s->lock);
}

static void etcd__outbox_kick(struct store *ss)
{
	struct store_etcd *s = etcd__of(ss);
	pthread_mutex_lock(&s->lock);
	s->kicked = true;
	pthread_cond_broadcast(&s->rev_cond);
	pthread_mutex_unlock(&s->lock);
}

/* ---- the watch ---- */

struct etcd__stream {
	struct store_etcd *s;
	struct etcd__buf buf;
	bool relist;  /* compacted past us: list again */
	bool restart; /* canceled or broken: watch again */
};

/* Whether the etcd key k is an object's. */
static bool etcd__object_key(const char *k)
{
	size_t plen = strlen(STORE_ETCD_PREFIX "o/");
	return strncmp(k, STORE_ETCD_PREFIX "o/", plen) == 0 && k[plen];
}

/* The outbox entries among one revision's events go into the box, this
 * process's too. */
static void etcd__box_add(struct store_etcd *s, json_t *events, size_t from, size_t to)
{
	static const char hprefix[] = STORE_ETCD_PREFIX "h/";
	for (size_t i = from; i < to; i++) {
		json_t *ev = json_array_get(events, i);
		json_t *kv = json_object_get(ev, "kv");
		const char *type = json_string_value(json_object_get(ev, "type"));
		if (type && strcmp(type, "DELETE") == 0)
			continue;
		cleanup_free char *k = etcd__bytes(kv, "key", NULL);
		struct store_outbox_entry x = {0};
		if (strncmp(k, hprefix, sizeof(hprefix) - 1) != 0 || !etcd__outbox_entry(kv, &x))
			continue;
		pthread_mutex_lock(&s->lock);
		if (s->nbox == ETCD__BOX_MAX)
			etcd__box_drop(s, ETCD__BOX_MAX / 2); /* a history far behind reads etcd */
		if (s->nbox == s->box_cap) {
			s->box_cap = s->box_cap ? s->box_cap * 2 : 64;
			s->box = xrealloc(s->box, s->box_cap * sizeof(*s->box));
		}
		s->box[s->nbox++] = x;
		pthread_mutex_unlock(&s->lock);
	}
}

/* One revision's events (events[from, to), of revision rev): delivered
 * unless this process wrote them. */
static void etcd__deliver(struct store_etcd *s, json_t *events, size_t from, size_t to,
			  uint64_t rev)
{
	size_t plen = strlen(STORE_ETCD_PREFIX "o/");
	bool objects = false;
	for (size_t i = from; i < to && !objects; i++) {
		json_t *kv = json_object_get(json_array_get(events, i), "kv");
		cleanup_free char *k = etcd__bytes(kv, "key", NULL);
		objects = etcd__object_key(k);
	}
	if (!objects || etcd__own(s, rev))
		return;
	for (size_t i = from; i < to; i++) {
		json_t *ev = json_array_get(events, i);
		json_t *kv = json_object_get(ev, "kv");
		cleanup_free char *k = etcd__bytes(kv, "key", NULL);
		if (!etcd__object_key(k))
			continue;
		const char *type = json_string_value(json_object_get(ev, "type"));
		if (type && strcmp(type, "DELETE") == 0) {
			s->fn(s->fn_data, k + plen, NULL, rev);
			continue;
		}
		struct store_record rec;
		if (etcd__record(kv, true, &rec) == 0) {
			s->fn(s->fn_data, k + plen, &rec, rev);
			store_record_clear(&rec);
		}
	}
}

static void etcd__watch_message(struct etcd__stream *st, json_t *msg)
{
	struct store_etcd *s = st->s;
	json_t *res = json_object_get(msg, "result");
	if (!res) {
		st->restart = true;
		return;
	}
	if (etcd__u64(res, "compact_revision") > 0) {
		st->relist = true;
		return;
	}
	if (json_is_true(json_object_get(res, "canceled"))) {
		st->restart = true;
		return;
	}
	json_t *events = json_object_get(res, "events");
	size_t n = json_array_size(events);
	uint64_t seen = 0;
	for (size_t i = 0; i < n;) {
		uint64_t rev =
		    etcd__u64(json_object_get(json_array_get(events, i), "kv"), "mod_revision");
		size_t j = i + 1;
		while (j < n && etcd__u64(json_object_get(json_array_get(events, j), "kv"),
					  "mod_revision") == rev)
			j++;
		etcd__box_add(s, events, i, j);
		etcd__deliver(s, events, i, j, rev);
		seen = rev;
		i = j;
	}
	/* A response without events (created, progress) is only a
	 * heartbeat; its header counts for progress notices alone. */
	if (n == 0 && !json_is_true(json_object_get(res, "created")))
		seen = etcd__header_rev(res);
	if (seen)
		etcd__note_seen(s, seen);
}

static size_t etcd__watch_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct etcd__stream *st = ud;
	size_t n = size * nmemb;
	if (st->buf.len + n > ETCD__STREAM_MAX || etcd__collect(ptr, size, nmemb, &st->buf) != n)
		return 0;
	size_t used = 0;
	while (used < st->buf.len && !st->relist && !st->restart) {
		const char *p = st->buf.p + used;
		size_t left = st->buf.len - used;
		size_t ws = strspn(p, " \r\n\t");
		if (ws >= left) {
			used = st->buf.len;
			break;
		}
		json_error_t jerr;
		json_t *msg = json_loadb(p + ws, left - ws, JSON_DISABLE_EOF_CHECK, &jerr);
		if (!msg)
			break; /* incomplete: wait for the rest */
		used += ws + (size_t)jerr.position;
		etcd__watch_message(st, msg);
		json_decref(msg);
	}
	memmove(st->buf.p, st->buf.p + used, st->buf.len - used);
	st->buf.len -= used;
	return st->relist || st->restart ? 0 : n;
}

static int etcd__watch_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	struct store_etcd *s = ud;
	return atomic_load(&s->stop) || atomic_load(&s->watch_reset) ? 1 : 0;
}

/* Lists every object again through the callback, then says what the list
 * did not name is gone. */
static int etcd__relist_one(void *data, const char *key, const struct store_record *rec)
{
	struct store_etcd *s = data;
	s->fn(s->fn_data, key, rec, rec->rv);
	return 0;
}

static int etcd__relist(struct store_etcd *s, struct error **err)
{
	uint64_t at = 0;
	s->fn(s->fn_data, NULL, NULL, 0);
	int r = etcd__list(s, true, etcd__relist_one, s, &at, err);
	if (r < 0)
		return r;
	s->fn(s->fn_data, NULL, NULL, at);
	/* The box missed what was compacted away: it begins again here. */
	pthread_mutex_lock(&s->lock);
	etcd__box_drop(s, s->nbox);
	if (at > s->box_from)
		s->box_from = at;
	pthread_mutex_unlock(&s->lock);
	etcd__note_seen(s, at);
	return 0;
}

static void *etcd__watch_run(void *arg)
{
	struct store_etcd *s = arg;
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	int backoff = ETCD__RETRY_MIN_MS;
	bool relist = false, failing = false;
	while (h && !atomic_load(&s->stop)) {
		if (relist) {
			struct error *err = NULL;
			if (etcd__relist(s, &err) < 0) {
				log_warn("%s (listing again)", err->msg);
				error_free(err);
				etcd__sleep_ms(backoff);
				continue;
			}
			log_info("etcd: listed again after a compaction");
			relist = false;
		}
		pthread_mutex_lock(&s->lock);
		uint64_t from = s->seen + 1;
		pthread_mutex_unlock(&s->lock);
		json_t *create = etcd__range_req(STORE_ETCD_PREFIX, NULL);
		cleanup_free char *end = store_etcd_range_end(STORE_ETCD_PREFIX);
		json_object_set_new(create, "range_end", etcd__b64_json(end));
		json_object_set_new(create, "start_revision", json_integer((json_int_t)from));
		json_object_set_new(create, "progress_notify", json_true());
		json_t *body = json_object();
		json_object_set_new(body, "create_request", create);
		cleanup_free char *payload = json_dumps(body, JSON_COMPACT);
		json_decref(body);
		size_t idx = atomic_load(&s->current);
		cleanup_free char *url = xasprintf("http://%s/v3/watch", s->endpoints[idx]);
		struct etcd__stream st = {.s = s};
		etcd__curl_setup(h, url, payload, hdrs, etcd__watch_data, &st);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, etcd__watch_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, s);
		curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 2L);
		curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 1L);
		int64_t started = etcd__now_ms();
		atomic_store(&s->watch_since_ms, started);
		CURLcode rc = curl_easy_perform(h);
		atomic_store(&s->watch_since_ms, 0);
		free(st.buf.p);
		if (atomic_load(&s->stop))
			break;
		if (st.relist) {
			relist = true;
			continue;
		}
		atomic_store(&s->trouble_ms, etcd__now_ms()); /* writes: etcd__barrier */
		if (atomic_exchange(&s->watch_reset, false)) {
			log_warn("etcd: the watch on %s is more than %d ms behind: watching "
				 "the next member",
				 s->endpoints[idx], STORE_ETCD_STALE_MS);
			atomic_store(&s->current, (idx + 1) % s->nendpoints);
			continue;
		}
		if (!failing)
			log_warn("etcd: the watch on %s ended (%s): watching again",
				 s->endpoints[idx],
				 rc == CURLE_OK ? "closed" : curl_easy_strerror(rc));
		/* Another member next time, unless this one served a while. */
		if (etcd__now_ms() - started < 2000) {
			failing = true;
			atomic_store(&s->current, (idx + 1) % s->nendpoints);
			etcd__sleep_ms(backoff);
			backoff =
			    backoff * 2 > ETCD__RETRY_MAX_MS ? ETCD__RETRY_MAX_MS : backoff * 2;
		} else {
			failing = false;
			backoff = ETCD__RETRY_MIN_MS;
		}
	}
	curl_slist_free_all(hdrs);
	if (h)
		curl_easy_cleanup(h);
	return NULL;
}

/* ---- liveness: the keeper thread ---- */

/* Writes this process's probe key, so that the watch has a revision of
 * our prefix to reach: that revision, or 0. */
static uint64_t etcd__probe_push(struct store_etcd *s)
{
	int64_t lease = 0;
	struct error *err = NULL;
	json_t *resp = NULL;
	cleanup_free char *key = store_etcd_key(STORE_ETCD_LIVE, s->writer);
	if (etcd__keep_lease(s, &lease, &err) < 0) {
		log_debug("%s (probe)", err->msg);
		error_free(err);
		return 0;
	}
	json_t *op = etcd__put_lease_op(key, "", lease);
	int r = etcd__post_within(s, "/v3/kv/put", json_object_get(op, "request_put"), false,
				  ETCD__PROBE_TIMEOUT_MS, &resp, &err);
	json_decref(op);
	if (r < 0) {
		log_debug("%s (probe)", err->msg);
		error_free(err);
		return 0;
	}
	uint64_t rev = etcd__header_rev(resp);
	json_decref(resp);
	return rev;
}

/* One probe: the store's current revision, asked at t0, becomes what the
 * watch must reach for the tree to be as fresh as t0. A probe still
 * waiting keeps its place (a newer one would move the goal on a busy
 * store) until it has waited two periods: then revisions other than ours
 * may be all there is to wait for, and the probe writes one of ours. */
static void etcd__probe(struct store_etcd *s)
{
	int64_t t0 = etcd__now_ms();
	pthread_mutex_lock(&s->lock);
	bool waiting = s->probe_rev != 0;
	/* Only a connected watch can be shown a revision. */
	bool push = waiting && t0 - s->probe_ms >= 2 * STORE_ETCD_PROBE_MS &&
		    atomic_load(&s->watch_since_ms) != 0;
	pthread_mutex_unlock(&s->lock);
	if (waiting && !push)
		return;
	uint64_t rev = 0;
	if (push) {
		rev = etcd__probe_push(s);
	} else {
		cleanup_free char *key = store_etcd_key(STORE_ETCD_LIVE, s->writer);
		json_t *req = etcd__range_req(key, NULL);
		json_object_set_new(req, "count_only", json_true());
		json_t *resp = NULL;
		struct error *err = NULL;
		if (etcd__post_within(s, "/v3/kv/range", req, true, ETCD__PROBE_TIMEOUT_MS, &resp,
				      &err) == 0) {
			rev = etcd__header_rev(resp);
			json_decref(resp);
		} else {
			log_debug("%s (probe)", err->msg);
			error_free(err);
		}
		json_decref(req);
	}
	if (!rev)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->seen >= rev) {
		if (t0 > s->fresh_ms)
			s->fresh_ms = t0;
		s->probe_rev = 0;
	} else {
		s->probe_rev = rev;
		s->probe_ms = t0;
	}
	pthread_mutex_unlock(&s->lock);
}

/* How long ago the tree was last known to be current (0 when no watch). */
static int64_t etcd__staleness_ms(struct store_etcd *s)
{
	if (!s->watching)
		return 0;
	pthread_mutex_lock(&s->lock);
	int64_t age = etcd__now_ms() - s->fresh_ms;
	pthread_mutex_unlock(&s->lock);
	return age;
}

/* Says once when reads begin and stop failing; moves a watch that is
 * connected but stays behind to the next member. */
static void etcd__check_watch(struct store_etcd *s)
{
	int64_t age = etcd__staleness_ms(s);
	bool stale = age > STORE_ETCD_STALE_MS;
	pthread_mutex_lock(&s->lock);
	bool said = s->stale_logged;
	s->stale_logged = stale;
	pthread_mutex_unlock(&s->lock);
	if (stale && !said)
		log_warn("etcd: no member has shown this mount current for %lld ms: reads fail "
			 "with EIO until the watch catches up",
			 (long long)age);
	else if (!stale && said)
		log_info("etcd: the watch has caught up: reads are served again");
	int64_t since = atomic_load(&s->watch_since_ms);
	if (stale && since && etcd__now_ms() - since > STORE_ETCD_STALE_MS && s->nendpoints > 1)
		atomic_store(&s->watch_reset, true);
}

static void *etcd__keeper_run(void *arg)
{
	struct store_etcd *s = arg;
	for (;;) {
		struct timespec until = util_deadline(CLOCK_REALTIME, STORE_ETCD_PROBE_MS);
		pthread_mutex_lock(&s->lock);
		while (!s->keeper_stop &&
		       pthread_cond_timedwait(&s->keeper_cond, &s->lock, &until) != ETIMEDOUT)
			;
		bool stop = s->keeper_stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
		/* The lease first: the history writer may be busy for long
		 * (a repack) and no longer renews it itself. */
		etcd__renew_lease(s);
		if (s->watching) {
			etcd__probe(s);
			etcd__check_watch(s);
		}
	}
	return NULL;
}

static int etcd__check_fresh(struct store *ss, struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	int64_t age = etcd__staleness_ms(s);
	if (age <= STORE_ETCD_STALE_MS)
		return 0;
	return error_set(err, EIO,
			 "etcd: this mount was last known current %lld ms ago (more than %d ms): "
			 "no member answers, or the watch has not caught up",
			 (long long)age, STORE_ETCD_STALE_MS);
}

static int etcd__watch(struct store *ss, store_watch_fn fn, void *data, struct error **err)
{
	struct store_etcd *s = etcd__of(ss);
	if (s->watching)
		return error_set(err, EBUSY, "etcd: already watching");
	s->fn = fn;
	s->fn_data = data;
	/* What the tree holds was listed just now (store_foreach()). */
	pthread_mutex_lock(&s->lock);
	s->fresh_ms = etcd__now_ms();
	s->box_from = s->seen; /* the watch begins after it */
	pthread_mutex_unlock(&s->lock);
	int rc = pthread_create(&s->watch_thread, NULL, etcd__watch_run, s);
	if (rc != 0)
		return error_set(err, rc, "etcd: cannot start the watch: %s", strerror(rc));
	s->watching = true;
	return 0;
}

static void etcd__unwatch(struct store *ss)
{
	struct store_etcd *s = etcd__of(ss);
	if (s->watching) {
		atomic_store(&s->stop, true);
		pthread_join(s->watch_thread, NULL);
		s->watching = false;
	}
}

static void etcd__close(struct store *ss)
{
	struct store_etcd *s = etcd__of(ss);
	if (s->keeping) {
		pthread_mutex_lock(&s->lock);
		s->keeper_stop = true;
		pthread_cond_broadcast(&s->keeper_cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->keeper, NULL);
	}
	etcd__unwatch(ss);
	if (s->lease) {
		/* The replica's mark and a trimmer's election go at once. */
		json_t *req = json_object();
		json_object_set_new(req, "ID", json_integer((json_int_t)s->lease));
		json_t *resp = NULL;
		struct error *err = NULL;
		if (etcd__post(s, "/v3/kv/lease/revoke", req, false, &resp, &err) == 0)
			json_decref(resp);
		error_free(err);
		json_decref(req);
	}
	for (size_t i = 0; i < s->npool; i++)
		curl_easy_cleanup(s->pool[i]);
	for (size_t i = 0; i < s->nendpoints; i++)
		free(s->endpoints[i]);
	free(s->endpoints);
	keylocks_free(s->keys);
	free(s->inflight);
	free(s->own);
	etcd__box_drop(s, s->nbox);
	free(s->box);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->rev_cond);
	pthread_cond_destroy(&s->txn_cond);
	pthread_cond_destroy(&s->keeper_cond);
	pthread_mutex_destroy(&s->pool_lock);
	pthread_mutex_destroy(&s->lease_lock);
	free(s);
}

static const struct store_ops store_etcd_ops = {
    .close = etcd__close,
    .apply = etcd__apply,
    .lock_key = etcd__lock_key,
    .unlock_key = etcd__unlock_key,
    .get = etcd__get,
    .foreach = etcd__foreach,
    .snapshot = etcd__snapshot,
    .revision = etcd__revision,
    .raise_revision = etcd__raise_revision,
    .is_empty = etcd__is_empty,
    .outbox_read = etcd__outbox_read,
    .outbox_trim = etcd__outbox_trim,
    .outbox_wait = etcd__outbox_wait,
    .outbox_kick = etcd__outbox_kick,
    .watch = etcd__watch,
    .unwatch = etcd__unwatch,
    .check_fresh = etcd__check_fresh,
};

static void etcd__global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int store_etcd_parse_endpoints(const char *list, char ***out, size_t *n, struct error **err)
{
	*out = NULL;
	*n = 0;
	cleanup_free char *copy = xstrdup(list);
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const char *colon = strrchr(t, ':');
		char *endp = NULL;
		long port = colon ? strtol(colon + 1, &endp, 10) : 0;
		if (!colon || colon == t || !endp || *endp || endp == colon + 1 || port < 1 ||
		    port > 65535 || strpbrk(t, "/?#@ ")) {
			for (size_t i = 0; i < *n; i++)
				free((*out)[i]);
			free(*out);
			*out = NULL;
			*n = 0;
			return error_set(err, EINVAL,
					 "etcd://%s: \"%s\" is not HOST:PORT (the store is "
					 "etcd://HOST:PORT[,HOST:PORT...])",
					 list, t);
		}
		*out = xrealloc(*out, sizeof(**out) * (*n + 1));
		(*out)[(*n)++] = xstrdup(t);
	}
	if (*n == 0)
		return error_set(err, EINVAL, "etcd://%s: no member named", list);
	return 0;
}

int store_etcd_open(const char *endpoints, struct store **out, struct error **err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, etcd__global_init);
	struct store_etcd *s = xcalloc(1, sizeof(*s));
	s->ops = &store_etcd_ops;
	int r = store_etcd_parse_endpoints(endpoints, &s->endpoints, &s->nendpoints, err);
	if (r < 0) {
		free(s);
		return r;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->rev_cond, NULL);
	pthread_cond_init(&s->txn_cond, NULL);
	pthread_cond_init(&s->keeper_cond, NULL);
	pthread_mutex_init(&s->pool_lock, NULL);
	pthread_mutex_init(&s->lease_lock, NULL);
	s->keys = keylocks_new();
	char host[64] = "host";
	gethostname(host, sizeof(host) - 1);
	unsigned char rnd[6] = {0};
	FILE *f = fopen("/dev/urandom", "re");
	if (f) {
		if (fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd))
			memset(rnd, 0, sizeof(rnd));
		fclose(f);
	}
	snprintf(s->writer, sizeof(s->writer), "%.24s-%d-%02x%02x%02x%02x%02x%02x", host,
		 (int)getpid(), rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	/* One request to know that a member answers, and the revision. */
	cleanup_free char *probe = store_etcd_key(STORE_ETCD_LIVE, s->writer);
	json_t *req = etcd__range_req(probe, NULL);
	json_object_set_new(req, "count_only", json_true());
	json_t *resp = NULL;
	r = etcd__range(s, req, &resp, err);
	if (r < 0) {
		etcd__close((struct store *)s);
		return r;
	}
	json_decref(resp);
	if ((r = pthread_create(&s->keeper, NULL, etcd__keeper_run, s)) != 0) {
		etcd__close((struct store *)s);
		return error_set(err, r, "etcd: cannot start the keeper: %s", strerror(r));
	}
	s->keeping = true;
	log_info("store: etcd at %s (writer %s)", endpoints, s->writer);
	*out = (struct store *)s;
	return 0;
}
