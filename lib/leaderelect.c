/* leaderelect.c: Lease-based leader election over the mount.
 *
 * State: the record last read (holder, renewTime, resourceVersion) and the
 * monotonic time it was first seen in that form. One timer: while leading
 * it fires every retry period to renew; while following it fires when the
 * observed record would expire. The lease's folder is watched so that a
 * release or a takeover is seen at once.
 *
 * This file must never write anything but its own Lease, and never keep
 * leading past the renew deadline without a successful renewal. */
#include "leaderelect.h"
#include "log.h"
#include "timefmt.h"
#include "treepath.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct leader {
	struct loop *loop;
	char *mount, *ns, *name, *identity;
	uint64_t lease_ms, renew_ms, retry_ms;
	void (*on_started)(void *data);
	void (*on_stopped)(void *data);
	void *data;
	char *path; /* the lease file */
	char *file; /* its name in the folder: NAME.yaml */
	int ifd;
	struct loop_timer *timer;
	bool started;
	bool leading;
	uint64_t last_renew_ms; /* monotonic: the last successful write */
	/* The record as last seen. */
	char *holder;
	char *renew_time;
	char *rv;
	char *acquire_time;
	long long transitions;
	long long duration_s;
	uint64_t observed_ms; /* monotonic: when it was first seen so */
	bool have_record;
};

static void leader__microtime(char buf[static RFC3339_MICRO_SIZE])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	rfc3339_format_micro((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, buf);
}

char *leader_identity(void)
{
	char host[256] = "localhost";
	gethostname(host, sizeof(host) - 1);
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)rand();
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	return xasprintf("%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 host, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
			 b[11], b[12], b[13], b[14], b[15]);
}

static void leader__set(char **field, const char *v)
{
	free(*field);
	*field = v ? xstrdup(v) : NULL;
}

static bool leader__same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

enum leader__read { LEADER__FOUND, LEADER__MISSING, LEADER__FAILED };

/* Reads the lease; a change since the last read restarts its clock. */
static enum leader__read leader__observe(struct leader *l)
{
	size_t len;
	cleanup_free char *text = util_read_file(l->path, &len);
	if (!text) {
		if (errno == ENOENT) {
			if (l->have_record)
				l->observed_ms = loop_now_ms();
			l->have_record = false;
			leader__set(&l->holder, NULL);
			leader__set(&l->rv, NULL);
			return LEADER__MISSING;
		}
		log_warn("leader: %s: %s", l->path, strerror(errno));
		return LEADER__FAILED;
	}
	cleanup_ynode struct ynode *doc = NULL;
	cleanup_error struct error *err = NULL;
	if (yaml_parse_one(text, len, &doc, &err) < 0) {
		log_warn("leader: %s: %s", l->path, err->msg);
		return LEADER__FAILED;
	}
	const char *holder = ynode_path_str(doc, "spec.holderIdentity");
	const char *renew = ynode_path_str(doc, "spec.renewTime");
	const char *rv = ynode_path_str(doc, "metadata.resourceVersion");
	if (holder && !*holder)
		holder = NULL;
	if (!l->have_record || !leader__same(holder, l->holder) ||
	    !leader__same(renew, l->renew_time) || !leader__same(rv, l->rv))
		l->observed_ms = loop_now_ms();
	l->have_record = true;
	leader__set(&l->holder, holder);
	leader__set(&l->renew_time, renew);
	leader__set(&l->rv, rv);
	leader__set(&l->acquire_time, ynode_path_str(doc, "spec.acquireTime"));
	long long v = 0;
	l->transitions = ynode_int(ynode_path(doc, "spec.leaseTransitions"), &v) == 0 ? v : 0;
	l->duration_s = ynode_int(ynode_path(doc, "spec.leaseDurationSeconds"), &v) == 0 && v > 0
			    ? v
			    : (long long)((l->lease_ms + 999) / 1000);
	return LEADER__FOUND;
}

/* Writes a record; 0, or -errno (EAGAIN: lost a race). */
static int leader__write(struct leader *l, const char *holder, long long duration_s,
			 const char *acquire, long long transitions, bool create)
{
	char now[RFC3339_MICRO_SIZE];
	leader__microtime(now);
	struct ynode *doc = ynode_new_map();
	ynode_set(doc, "apiVersion", ynode_new_str("coordination.k8s.io/v1"));
	ynode_set(doc, "kind", ynode_new_str("Lease"));
	struct ynode *md = ynode_get_map(doc, "metadata");
	ynode_set(md, "name", ynode_new_str(l->name));
	ynode_set(md, "namespace", ynode_new_str(l->ns));
	if (!create && l->rv)
		ynode_set(md, "resourceVersion", ynode_new_str(l->rv));
	struct ynode *spec = ynode_get_map(doc, "spec");
	ynode_set(spec, "holderIdentity", ynode_new_str(holder));
	ynode_set(spec, "leaseDurationSeconds", ynode_new_int(duration_s));
	ynode_set(spec, "acquireTime", ynode_new_str(acquire ? acquire : now));
	ynode_set(spec, "renewTime", ynode_new_str(now));
	ynode_set(spec, "leaseTransitions", ynode_new_int(transitions));
	size_t len;
	cleanup_free char *text = yaml_emit(doc, &len);
	ynode_free(doc);
	int fd = open(l->path, O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_EXCL : O_TRUNC), 0644);
	if (fd < 0)
		return -errno;
	int r = util_write_all(fd, text, len) < 0 ? -errno : 0;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

/* client-go's tryAcquireOrRenew. */
static bool leader__try(struct leader *l)
{
	long long duration_s = (long long)((l->lease_ms + 999) / 1000);
	enum leader__read rd = leader__observe(l);
	if (rd == LEADER__FAILED)
		return false;
	if (rd == LEADER__MISSING) {
		int r = leader__write(l, l->identity, duration_s, NULL, 0, true);
		if (r < 0) {
			if (r != -EEXIST)
				log_warn("leader: cannot create %s: %s", l->path, strerror(-r));
			return false;
		}
		l->last_renew_ms = loop_now_ms();
		leader__observe(l);
		return true;
	}
	bool mine = l->holder && !strcmp(l->holder, l->identity);
	uint64_t now = loop_now_ms();
	if (l->holder && !mine && l->observed_ms + (uint64_t)l->duration_s * 1000 > now)
		return false; /* held, and not expired */
	int r = leader__write(l, l->identity, duration_s, mine ? l->acquire_time : NULL,
			      mine ? l->transitions : l->transitions + 1, false);
	if (r < 0) {
		if (r != -EAGAIN && r != -ENOENT)
			log_warn("leader: cannot write %s: %s", l->path, strerror(-r));
		return false;
	}
	l->last_renew_ms = loop_now_ms();
	leader__observe(l);
	return true;
}

/* Arms the timer: a renewal, or the moment the observed lease expires. */
static void leader__arm(struct leader *l)
{
	if (l->leading) {
		loop_timer_start(l->timer, l->retry_ms, 0);
		return;
	}
	uint64_t now = loop_now_ms();
	uint64_t delay = l->retry_ms;
	if (l->have_record && l->holder) {
		uint64_t expires = l->observed_ms + (uint64_t)l->duration_s * 1000;
		/* a little after, so that the holder's last renewal is seen;
		 * once expired, a failed attempt waits a retry period */
		if (expires > now)
			delay = expires - now + 50;
	} else if (now < l->observed_ms + l->retry_ms) {
		delay = 0; /* just released or deleted: take it */
	}
	loop_timer_start(l->timer, delay, 0);
}

static void leader__become(struct leader *l)
{
	l->leading = true;
	log_info("leader: %s now leads %s/%s", l->identity, l->ns, l->name);
	if (l->on_started)
		l->on_started(l->data);
}

static void leader__lose(struct leader *l, const char *why)
{
	l->leading = false;
	log_warn("leader: %s stops leading %s/%s: %s", l->identity, l->ns, l->name, why);
	if (l->on_stopped)
		l->on_stopped(l->data);
}

static void leader__on_timer(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	struct leader *l = data;
	if (l->leading) {
		if (!leader__try(l)) {
			if (l->holder && strcmp(l->holder, l->identity) != 0) {
				leader__lose(l, "another candidate holds the lease");
			} else if (loop_now_ms() >= l->last_renew_ms + l->renew_ms) {
				leader__lose(l,
					     "could not renew the lease within the renew deadline");
			}
		}
		leader__arm(l);
		return;
	}
	if (leader__try(l))
		leader__become(l);
	if (l->started)
		leader__arm(l);
}

static void leader__on_inotify(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct leader *l = data;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool ours = false;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if ((ev->len && !strcmp(ev->name, l->file)) || (ev->mask & IN_Q_OVERFLOW))
				ours = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (!ours || !l->started)
		return;
	if (leader__observe(l) == LEADER__FAILED)
		return;
	if (l->leading) {
		if (l->holder && strcmp(l->holder, l->identity) != 0) {
			leader__lose(l, "another candidate took the lease");
			leader__arm(l);
		}
		return;
	}
	leader__arm(l);
}

struct leader *leader_new(struct loop *loop, const struct leader_config *cfg, struct error **err)
{
	if (!cfg->mount || !cfg->ns || !cfg->name || !*cfg->name)
		return error_set(err, EINVAL, "leader election: mount, namespace and name needed"),
		       NULL;
	if (!(cfg->retry_ms < cfg->renew_ms && cfg->renew_ms < cfg->lease_ms))
		return error_set(err, EINVAL,
				 "leader election: want retry period < renew deadline < lease "
				 "duration (%llu ms, %llu ms, %llu ms)",
				 (unsigned long long)cfg->retry_ms,
				 (unsigned long long)cfg->renew_ms,
				 (unsigned long long)cfg->lease_ms),
		       NULL;
	struct leader *l = xcalloc(1, sizeof(*l));
	l->loop = loop;
	l->mount = xstrdup(cfg->mount);
	l->ns = xstrdup(cfg->ns);
	l->name = xstrdup(cfg->name);
	l->identity = cfg->identity ? xstrdup(cfg->identity) : leader_identity();
	l->lease_ms = cfg->lease_ms;
	l->renew_ms = cfg->renew_ms;
	l->retry_ms = cfg->retry_ms;
	l->on_started = cfg->on_started;
	l->on_stopped = cfg->on_stopped;
	l->data = cfg->data;
	l->file = xasprintf("%s.yaml", l->name);
	cleanup_free char *folder = treepath_folder("leases", l->ns);
	cleanup_free char *dir = xasprintf("%s/%s", l->mount, folder);
	l->path = xasprintf("%s/%s", dir, l->file);
	l->timer = loop_timer_new(loop, leader__on_timer, l);
	l->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (l->ifd < 0 || inotify_add_watch(l->ifd, dir,
					    IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE |
						IN_MOVED_FROM | IN_ONLYDIR) < 0) {
		error_set(err, errno, "leader election: cannot watch %s: %s", dir, strerror(errno));
		leader_free(l);
		return NULL;
	}
	if (loop_add_fd(loop, l->ifd, LOOP_READ, leader__on_inotify, l, err) < 0) {
		leader_free(l);
		return NULL;
	}
	return l;
}

int leader_start(struct leader *l, struct error **err)
{
	(void)err;
	l->started = true;
	if (leader__try(l))
		leader__become(l);
	else if (l->holder)
		log_info("leader: %s/%s is held by %s; waiting", l->ns, l->name, l->holder);
	leader__arm(l);
	return 0;
}

bool leader_is_leader(const struct leader *l)
{
	return l && l->leading;
}

const char *leader_identity_of(const struct leader *l)
{
	return l->identity;
}

const char *leader_holder(const struct leader *l)
{
	return l->holder;
}

void leader_release(struct leader *l)
{
	if (!l || !l->leading)
		return;
	l->leading = false;
	loop_timer_stop(l->timer);
	if (leader__observe(l) != LEADER__FOUND || !l->holder || strcmp(l->holder, l->identity))
		return;
	int r = leader__write(l, "", 1, NULL, l->transitions, false);
	if (r < 0)
		log_warn("leader: cannot release %s: %s", l->path, strerror(-r));
	else
		log_info("leader: released %s/%s", l->ns, l->name);
}

void leader_free(struct leader *l)
{
	if (!l)
		return;
	leader_release(l);
	loop_timer_free(l->timer);
	if (l->ifd >= 0) {
		loop_del_fd(l->loop, l->ifd);
		close(l->ifd);
	}
	free(l->mount);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l->path);
	free(l->file);
	free(l->holder);
	free(l->renew_time);
	free(l->rv);
	free(l->acquire_time);
	free(l);
}
