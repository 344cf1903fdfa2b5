/* kubedns.c: writing the kube-dns Service and Endpoints (kubedns.h).
 *
 * This file must never overwrite a kube-dns Service that exists, nor
 * write anything but those two objects. */
#include "kubedns.h"
#include "log.h"
#include "treepath.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int kubedns_gateway(const char *cidr, char *out)
{
	char ip[32];
	const char *slash = strchr(cidr, '/');
	if (!slash || (size_t)(slash - cidr) >= sizeof(ip))
		return -1;
	memcpy(ip, cidr, (size_t)(slash - cidr));
	ip[slash - cidr] = '\0';
	char *end;
	errno = 0;
	long prefix = strtol(slash + 1, &end, 10);
	struct in_addr a;
	if (errno || *end || end == slash + 1 || prefix < 0 || prefix > 30 ||
	    inet_pton(AF_INET, ip, &a) != 1)
		return -1;
	uint32_t mask = prefix ? 0xffffffffu << (32 - prefix) : 0;
	a.s_addr = htonl((ntohl(a.s_addr) & mask) + 1);
	inet_ntop(AF_INET, &a, out, 16);
	return 0;
}

/* Writes text to path below mount: into a scratch name, renamed into
 * place, so that a reader never sees half of it. */
static int kubedns__put(const char *mount, const char *path, const char *text, int excl,
			struct error **err)
{
	cleanup_free char *full = xasprintf("%s/%s", mount, path);
	if (excl) {
		int fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return errno == EEXIST
				   ? 0
				   : error_set(err, errno, "%s: %s", path, strerror(errno));
		int r = util_write_all(fd, text, strlen(text));
		int e = errno;
		if (close(fd) < 0 && r == 0) {
			r = -1;
			e = errno;
		}
		if (r < 0)
			return error_set(err, e, "%s: %s (see %s/.errors)", path, strerror(e),
					 mount);
		return 1;
	}
	/* The scratch name is this process's own: every host's registrar
	 * writes the same object through one shared store. */
	char host[64] = "";
	gethostname(host, sizeof(host) - 1);
	cleanup_free char *tmp = xasprintf("%s.corral-dns-%s-%ld.tmp", full, host, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	int r = util_write_all(fd, text, strlen(text));
	close(fd);
	if (r < 0 || rename(tmp, full) < 0) {
		int e = errno;
		unlink(tmp);
		return error_set(err, e, "%s: %s (see %s/.errors)", path, strerror(e), mount);
	}
	return 1;
}

static void kubedns__mkns(const char *mount)
{
	cleanup_free char *folder = treepath_folder(NULL, KUBEDNS_NAMESPACE);
	cleanup_free char *dir = xasprintf("%s/%s", mount, folder);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		log_warn("%s: %s", dir, strerror(errno));
}

int kubedns_ensure_service(const char *mount, const char *cluster_ip, int port, struct error **err)
{
	kubedns__mkns(mount);
	cleanup_free char *text = xasprintf("apiVersion: v1\n"
					    "kind: Service\n"
					    "metadata:\n"
					    "  name: " KUBEDNS_NAME "\n"
					    "  namespace: " KUBEDNS_NAMESPACE "\n"
					    "  labels:\n"
					    "    k8s-app: kube-dns\n"
					    "    kubernetes.io/name: corral-dns\n"
					    "spec:\n"
					    "  clusterIP: %s\n"
					    "  ports:\n"
					    "  - name: dns\n"
					    "    port: 53\n"
					    "    protocol: UDP\n"
					    "    targetPort: %d\n"
					    "  - name: dns-tcp\n"
					    "    port: 53\n"
					    "    protocol: TCP\n"
					    "    targetPort: %d\n",
					    cluster_ip, port, port);
	int r = kubedns__put(
	    mount, "namespaces/" KUBEDNS_NAMESPACE "/services/" KUBEDNS_NAME ".yaml", text, 1, err);
	if (r > 0)
		log_info("created service %s/%s (%s)", KUBEDNS_NAMESPACE, KUBEDNS_NAME, cluster_ip);
	return r < 0 ? r : 0;
}

struct kubedns__gw {
	struct ynode *addrs;
};

static int kubedns__node(void *data, const char *key, const struct ynode *obj)
{
	(void)key;
	struct kubedns__gw *g = data;
	char gw[16];
	const char *cidr = ynode_path_str(obj, "spec.podCIDR");
	if (!cidr || kubedns_gateway(cidr, gw) < 0)
		return 0;
	for (size_t i = 0; i < g->addrs->n; i++)
		if (!strcmp(ynode_path_str(ynode_item(g->addrs, i), "ip"), gw))
			return 0;
	struct ynode *a = ynode_new_map();
	ynode_set(a, "ip", ynode_new_str(gw));
	ynode_append(g->addrs, a);
	return 0;
}

static struct ynode *kubedns__port(const char *name, int port, const char *proto)
{
	struct ynode *p = ynode_new_map();
	ynode_set(p, "name", ynode_new_str(name));
	ynode_set(p, "port", ynode_new_int(port));
	ynode_set(p, "protocol", ynode_new_str(proto));
	return p;
}

struct ynode *kubedns_endpoints(const struct informer *nodes, int port)
{
	struct ynode *obj = ynode_new_map();
	ynode_set(obj, "apiVersion", ynode_new_str("v1"));
	ynode_set(obj, "kind", ynode_new_str("Endpoints"));
	struct ynode *md = ynode_get_map(obj, "metadata");
	ynode_set(md, "name", ynode_new_str(KUBEDNS_NAME));
	ynode_set(md, "namespace", ynode_new_str(KUBEDNS_NAMESPACE));
	ynode_set(ynode_get_map(md, "labels"), "k8s-app", ynode_new_str("kube-dns"));
	struct kubedns__gw g = {.addrs = ynode_new_seq()};
	if (nodes)
		informer_foreach(nodes, NULL, kubedns__node, &g);
	if (!g.addrs->n) {
		ynode_free(g.addrs);
		return obj;
	}
	struct ynode *subset = ynode_new_map();
	ynode_set(subset, "addresses", g.addrs);
	struct ynode *ports = ynode_new_seq();
	ynode_append(ports, kubedns__port("dns", port, "UDP"));
	ynode_append(ports, kubedns__port("dns-tcp", port, "TCP"));
	ynode_set(subset, "ports", ports);
	struct ynode *subsets = ynode_new_seq();
	ynode_append(subsets, subset);
	ynode_set(obj, "subsets", subsets);
	return obj;
}

/* The same addresses and ports, whatever the stored object's defaults. */
static bool kubedns__same(const struct ynode *want, const struct ynode *have)
{
	if (!have)
		return false;
	const struct ynode *w = ynode_get(want, "subsets"), *h = ynode_get(have, "subsets");
	size_t wn = w ? w->n : 0, hn = h && h->type == YNODE_SEQ ? h->n : 0;
	if (wn != hn)
		return false;
	if (!wn)
		return true;
	const struct ynode *wa = ynode_path(want, "subsets[0].addresses");
	const struct ynode *ha = ynode_path(have, "subsets[0].addresses");
	if (!ha || ha->type != YNODE_SEQ || ha->n != wa->n)
		return false;
	for (size_t i = 0; i < wa->n; i++) {
		const char *a = ynode_path_str(ynode_item(wa, i), "ip");
		const char *b = ynode_path_str(ynode_item(ha, i), "ip");
		if (!b || strcmp(a, b))
			return false;
	}
	const struct ynode *wp = ynode_path(want, "subsets[0].ports");
	const struct ynode *hp = ynode_path(have, "subsets[0].ports");
	if (!hp || hp->type != YNODE_SEQ || hp->n != wp->n)
		return false;
	for (size_t i = 0; i < wp->n; i++) {
		const char *a = ynode_path_str(ynode_item(wp, i), "port");
		const char *b = ynode_path_str(ynode_item(hp, i), "port");
		if (!b || strcmp(a, b))
			return false;
	}
	return true;
}

int kubedns_sync_endpoints(const char *mount, const struct informer *nodes, int port,
			   const struct ynode *current, struct error **err)
{
	cleanup_ynode struct ynode *want = kubedns_endpoints(nodes, port);
	if (kubedns__same(want, current))
		return 0;
	kubedns__mkns(mount);
	size_t len;
	cleanup_free char *text = yaml_emit(want, &len);
	int r =
	    kubedns__put(mount, "namespaces/" KUBEDNS_NAMESPACE "/endpoints/" KUBEDNS_NAME ".yaml",
			 text, 0, err);
	if (r > 0) {
		const struct ynode *a = ynode_path(want, "subsets[0].addresses");
		log_info("endpoints %s/%s: %zu address(es)", KUBEDNS_NAMESPACE, KUBEDNS_NAME,
			 a ? a->n : 0);
	}
	return r < 0 ? r : 0;
}
