/* serviceaccount.c: the serviceaccount and root-ca-cert-publisher
 * controllers (serviceaccount.h). One struct serves both: each keeps one
 * object per namespace, named and built by its mode, from a work queue of
 * namespace names fed by its informer (the object changed or went) and by
 * its own inotify watch on namespaces/ (a namespace came). */
#include "serviceaccount.h"
#include "log.h"
#include "obj.h"
#include "strmap.h"
#include "util.h"
#include "workqueue.h"
#include "write.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define SAC__RELIST_MS 60000 /* namespaces listed again, without resync-period */

enum sac__mode { SAC__ACCOUNT, SAC__ROOT_CA };

struct sac {
	struct ctrl *c;
	enum sac__mode mode;
	const char *name;	 /* the controller's, for the log */
	const char *plural;	 /* the kind folder of the object kept */
	const char *object;	 /* its name */
	char *ca_pem;		 /* root CA: what ca.crt holds */
	struct informer *inf;	 /* of plural */
	struct workqueue *q;	 /* namespace names */
	struct strmap *inflight; /* namespaces with a write of ours in flight */
	int ifd;		 /* inotify on namespaces/ */
	struct loop_timer *relist;
};

/* ---- the objects --------------------------------------------------------- */

struct ynode *sac_default_account(const char *ns)
{
	struct ynode *o = ynode_new_map();
	ynode_set(o, "apiVersion", ynode_new_str("v1"));
	ynode_set(o, "kind", ynode_new_str("ServiceAccount"));
	struct ynode *md = ynode_get_map(o, "metadata");
	ynode_set(md, "name", ynode_new_str("default"));
	ynode_set(md, "namespace", ynode_new_str(ns));
	return o;
}

struct ynode *sac_root_ca_configmap(const char *ns, const char *ca_pem)
{
	struct ynode *o = ynode_new_map();
	ynode_set(o, "apiVersion", ynode_new_str("v1"));
	ynode_set(o, "kind", ynode_new_str("ConfigMap"));
	struct ynode *md = ynode_get_map(o, "metadata");
	ynode_set(md, "name", ynode_new_str(SAC_ROOT_CA_NAME));
	ynode_set(md, "namespace", ynode_new_str(ns));
	/* Kubernetes' publisher says what it is for */
	struct ynode *ann = ynode_get_map(md, "annotations");
	ynode_set(ann, "kubernetes.io/description",
		  ynode_new_str("Contains a CA bundle that can be used to verify the "
				"kube-apiserver when using internal endpoints such as the "
				"internal service IP or kubernetes.default.svc. No other usage "
				"is guaranteed across distributions of Kubernetes clusters."));
	struct ynode *data = ynode_get_map(o, "data");
	ynode_set(data, "ca.crt", ynode_new_str(ca_pem ? ca_pem : ""));
	return o;
}

bool sac_root_ca_current(const struct ynode *cm, const char *ca_pem)
{
	const char *have = ynode_str(ynode_get(ynode_get(cm, "data"), "ca.crt"));
	return have && !strcmp(have, ca_pem ? ca_pem : "");
}

/* ---- namespaces ------------------------------------------------------- */

/* Whether namespace ns is there and not going: its folder exists and its
 * object is not Terminating nor being deleted. */
static bool sac__namespace_live(struct sac *s, const char *ns)
{
	cleanup_free char *dir = xasprintf("%s/namespaces/%s", s->c->mount, ns);
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	cleanup_free char *path = xasprintf("namespaces/%s.yaml", ns);
	cleanup_ynode struct ynode *obj = NULL;
	struct error *err = NULL;
	if (write_read_object(s->c->mount, path, &obj, &err) < 0) {
		error_free(err);
		return true; /* the folder is what counts */
	}
	const char *phase = ynode_path_str(obj, "status.phase");
	if (phase && !strcmp(phase, "Terminating"))
		return false;
	return !ynode_path(obj, "metadata.deletionTimestamp");
}

static void sac__list_namespaces(struct sac *s)
{
	cleanup_free char *root = xasprintf("%s/namespaces", s->c->mount);
	cleanup_dir DIR *d = opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		workqueue_add(s->q, de->d_name);
	}
}

static void sac__on_inotify(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)loop;
	(void)events;
	struct sac *s = data;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW)
				sac__list_namespaces(s);
			else if ((ev->mask & IN_ISDIR) && ev->len && ev->name[0] != '.')
				workqueue_add(s->q, ev->name);
			p += sizeof(*ev) + ev->len;
		}
	}
}

static void sac__on_relist(struct loop *loop, struct loop_timer *t, void *data)
{
	(void)loop;
	(void)t;
	sac__list_namespaces(data);
}

/* ---- the sync ---------------------------------------------------------- */

struct sac__done {
	struct sac *s;
	char *ns;
};

static void sac__done(void *data, const struct writer_result *res)
{
	struct sac__done *d = data;
	strmap_del(d->s->inflight, d->ns);
	if (res->status && res->status != EEXIST && res->status != ENOENT) {
		/* a namespace going refuses creates: nothing to do there */
		log_debug("%s: %s: %s", d->s->name, res->path, res->msg);
		if (sac__namespace_live(d->s, d->ns))
			workqueue_add_rate_limited(d->s->q, d->ns);
	}
	free(d->ns);
	free(d);
}

static int sac__set_ca(struct ynode *obj, void *arg, struct error **err)
{
	(void)err;
	const char *pem = arg;
	if (sac_root_ca_current(obj, pem))
		return 0;
	ynode_set(ynode_get_map(obj, "data"), "ca.crt", ynode_new_str(pem));
	return 1;
}

static int sac__sync(void *data, const char *ns, struct error **err)
{
	(void)err;
	struct sac *s = data;
	if (strmap_has(s->inflight, ns))
		return 0; /* its done callback looks again */
	cleanup_free char *key = obj_key(ns, s->object);
	const struct ynode *have = informer_get(s->inf, key);
	if (have && (s->mode == SAC__ACCOUNT || sac_root_ca_current(have, s->ca_pem)))
		return 0;
	if (!sac__namespace_live(s, ns))
		return 0;
	struct sac__done *d = xcalloc(1, sizeof(*d));
	d->s = s;
	d->ns = xstrdup(ns);
	strmap_set(s->inflight, ns, d);
	if (have) {
		cleanup_free char *path = obj_path(s->plural, ns, s->object);
		log_info("%s: updating %s", s->name, path);
		writer_update(s->c->writer, path, sac__set_ca, xstrdup(s->ca_pem), free, 0,
			      sac__done, d);
		return 0;
	}
	cleanup_free char *dir = xasprintf("namespaces/%s/%s", ns, s->plural);
	log_info("%s: creating %s/%s", s->name, dir, s->object);
	struct ynode *obj = s->mode == SAC__ACCOUNT ? sac_default_account(ns)
						    : sac_root_ca_configmap(ns, s->ca_pem);
	writer_create(s->c->writer, dir, obj, 0, sac__done, d);
	return 0;
}

/* The namespace of an informer key "ns/name" of our object, or NULL. */
static char *sac__ns_of(const struct sac *s, const char *key)
{
	const char *slash = strchr(key, '/');
	if (!slash || strcmp(slash + 1, s->object))
		return NULL;
	return xstrndup(key, (size_t)(slash - key));
}

static void sac__on_add(void *data, const char *key, const struct ynode *obj)
{
	struct sac *s = data;
	(void)obj;
	cleanup_free char *ns = sac__ns_of(s, key);
	if (ns && s->mode == SAC__ROOT_CA)
		workqueue_add(s->q, ns);
}

static void sac__on_update(void *data, const char *key, const struct ynode *old,
			   const struct ynode *obj)
{
	(void)old;
	sac__on_add(data, key, obj);
}

static void sac__on_delete(void *data, const char *key, const struct ynode *old)
{
	struct sac *s = data;
	(void)old;
	cleanup_free char *ns = sac__ns_of(s, key);
	if (ns)
		workqueue_add_after(s->q, ns, SAC_RECREATE_MS);
}

static struct sac *sac__new(struct ctrl *c, enum sac__mode mode)
{
	struct sac *s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->mode = mode;
	s->name = mode == SAC__ACCOUNT ? "serviceaccount" : "root-ca-cert-publisher";
	s->plural = mode == SAC__ACCOUNT ? "serviceaccounts" : "configmaps";
	s->object = mode == SAC__ACCOUNT ? "default" : SAC_ROOT_CA_NAME;
	s->inflight = strmap_new();
	s->inf = ctrl_informer(c, s->plural);
	s->q = workqueue_new(c->loop, s->name, NULL);
	workqueue_set_handler(s->q, sac__sync, s);
	struct informer_handlers h = {
	    .on_add = sac__on_add, .on_update = sac__on_update, .on_delete = sac__on_delete};
	informer_add_handlers(s->inf, &h, s);
	/* namespaces: watched first, then listed, so that none slips between */
	s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	cleanup_free char *root = xasprintf("%s/namespaces", c->mount);
	if (s->ifd < 0 ||
	    inotify_add_watch(s->ifd, root, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0 ||
	    loop_add_fd(c->loop, s->ifd, LOOP_READ, sac__on_inotify, s, NULL) < 0)
		log_warn("%s: cannot watch %s (%s): new namespaces are found every %d s", s->name,
			 root, strerror(errno), SAC__RELIST_MS / 1000);
	s->relist = loop_timer_new(c->loop, sac__on_relist, s);
	uint64_t every = c->cfg && c->cfg->resync_ms ? c->cfg->resync_ms : SAC__RELIST_MS;
	loop_timer_start(s->relist, every, every);
	sac__list_namespaces(s);
	return s;
}

struct sac *sac_new_serviceaccounts(struct ctrl *c)
{
	return sac__new(c, SAC__ACCOUNT);
}

struct sac *sac_new_root_ca(struct ctrl *c, const char *ca_pem)
{
	struct sac *s = sac__new(c, SAC__ROOT_CA);
	s->ca_pem = xstrdup(ca_pem ? ca_pem : "");
	return s;
}

static void sac__free_done(void *p)
{
	(void)p; /* the writer frees it in its done callback */
}

void sac_free(struct sac *s)
{
	if (!s)
		return;
	if (s->ifd >= 0) {
		loop_del_fd(s->c->loop, s->ifd);
		close(s->ifd);
	}
	loop_timer_free(s->relist);
	workqueue_free(s->q);
	strmap_free(s->inflight, sac__free_done);
	free(s->ca_pem);
	free(s);
}
