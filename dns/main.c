/* main.c: corral-dns, the cluster's DNS server.
 *
 *   corral-dns [--mount DIR] [--config FILE] [--port N] [--upstream LIST] ...
 *
 * Reads top to bottom: options (flags over the [dns] section of the config
 * file), the zone, the kube-dns registrar (a child that stays root, when
 * privileges are to be dropped), the loop and its signals, the sockets
 * (DNS, health, metrics), privileges dropped if asked, the informers
 * (which fill the zone, register kube-dns unless the registrar does, and
 * add each node's gateway to the DNS sockets), the loop until SIGTERM,
 * then undo in reverse order.
 *
 * The part that answers the network never needs root after binding; the
 * mount's folders are root's (0755), so writing kube-dns's Service and
 * Endpoints does, and only the registrar does it: it has no socket, reads
 * nodes and writes those two objects (kubedns.c), and dies with its
 * parent. */
#include "config.h"
#include "http.h"
#include "informer.h"
#include "kubedns.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "server.h"
#include "util.h"
#include "watch.h"
#include "zone.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CORRAL_VERSION "0.1.0"

struct dns_config {
	char *mount;
	char *log_level;
	char *listen;
	int port;
	int health_port;
	int metrics_port;
	char *domain;
	int ttl;
	char *upstream;
	uint64_t forward_timeout_ms;
	uint64_t tcp_idle_ms;
	int tcp_max;
	int threads;
	bool register_service;
	char *cluster_ip;
	char *user;
	uint64_t resync_ms;
};

struct dns_ctx {
	struct metrics metrics;
	struct zone *zone;
	struct server *server;
	int port;
};

/* The word of --listen that stands for every node's gateway. */
#define LISTEN_GATEWAYS "gateways"

static void usage(const char *prog)
{
	printf(
	    "usage: %s [--mount DIR] [--config FILE] [options]\n"
	    "\n"
	    "Serves DNS for the services and pods of the cluster mounted at DIR\n"
	    "(default /cluster): <svc>.<ns>.svc.cluster.local and the rest of kube-dns's names.\n"
	    "  --mount DIR               the cluster's mount (default /cluster)\n"
	    "  --config FILE             the [dns] section (default /etc/corral/corral.conf)\n"
	    "  --listen LIST             addresses, comma-separated; \"gateways\": every\n"
	    "                            node's (default 127.0.0.1,gateways)\n"
	    "  --port N                  DNS over UDP and TCP (default 10053)\n"
	    "  --health-port N           GET /healthz (default 8081)\n"
	    "  --metrics-port N          GET /metrics, Prometheus (default 10055)\n"
	    "  --domain NAME             the cluster's domain (default cluster.local)\n"
	    "  --ttl N                   seconds, of every answer (default 5)\n"
	    "  --upstream LIST           addr[:port],... for other names (default: refuse)\n"
	    "  --forward-timeout D       an upstream's time to answer (default 2s)\n"
	    "  --tcp-idle-timeout D      close idle TCP connections (default 10s)\n"
	    "  --tcp-connections N       TCP connections at once (default 128)\n"
	    "  --threads N               UDP threads, 0: one per CPU (default 1)\n"
	    "  --register-service[=BOOL] keep kube-system/kube-dns (default true)\n"
	    "  --cluster-ip IP           kube-dns's ClusterIP (default 10.96.0.10)\n"
	    "  --user NAME               run as NAME once the sockets are bound\n"
	    "  --resync-period D         relist every D (default 0: never)\n"
	    "  --log-level LEVEL         debug, info, warn, error (default info)\n"
	    "  -v, --verbose             log at the debug level\n"
	    "  -V, --version             print the version\n"
	    "  -h, --help                this help\n"
	    "See corral-dns(8).\n",
	    prog);
}

static void on_signal(struct loop *loop, int signo, void *data)
{
	(void)data;
	log_info("%s: stopping", strsignal(signo));
	loop_stop(loop);
}

static int on_http(void *data, const char *path, char **body, size_t *len, const char **type)
{
	struct dns_ctx *ctx = data;
	if (!strcmp(path, "/healthz")) {
		*body = xstrdup("ok\n");
		*len = 3;
		return 200;
	}
	if (!strcmp(path, "/metrics")) {
		struct metrics sum;
		server_metrics(ctx->server, &sum);
		*body = metrics_render(&sum, ctx->zone, len);
		*type = "text/plain; version=0.0.4; charset=utf-8";
		return 200;
	}
	return 404;
}

/* Runs as user from now on: its groups, then its gid and uid. */
static int drop_privileges(const char *user, struct error **err)
{
	struct passwd *pw = getpwnam(user);
	if (!pw)
		return error_set(err, ENOENT, "user: no user \"%s\"", user);
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
	    setuid(pw->pw_uid) < 0)
		return error_set(err, errno, "user %s: %s", user, strerror(errno));
	if (setuid(0) == 0)
		return error_set(err, EPERM, "user %s: root could be regained", user);
	return 0;
}

/* A node's podCIDR came or changed: corral-dns listens on its gateway, the
 * address kube-dns's Endpoints give for it. A gateway whose node goes
 * stays bound until corral-dns stops. */
static void on_node(void *data, const char *key, const struct ynode *obj)
{
	struct dns_ctx *ctx = data;
	const char *cidr = ynode_path_str(obj, "spec.podCIDR");
	char gw[16];
	if (!cidr || kubedns_gateway(cidr, gw) < 0)
		return;
	cleanup_error struct error *err = NULL;
	int r = server_listen(ctx->server, gw, &err);
	if (r < 0)
		log_warn("node %s's gateway: %s", key, err->msg);
	else if (r > 0)
		log_info("listening on %s port %d too (node %s's gateway)", gw, ctx->port, key);
}

static void on_node_update(void *data, const char *key, const struct ynode *old,
			   const struct ynode *obj)
{
	(void)old;
	on_node(data, key, obj);
}

/* --threads 0: one per CPU this process may run on. */
static int udp_threads(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* "127.0.0.1,gateways" -> "127.0.0.1" and gateways true. */
static char *listen_addresses(const char *list, bool *gateways)
{
	cleanup_free char *copy = xstrdup(list);
	char *out = xstrdup("");
	*gateways = false;
	for (char *save, *a = strtok_r(copy, ", ", &save); a; a = strtok_r(NULL, ", ", &save)) {
		if (strcmp(a, LISTEN_GATEWAYS) == 0) {
			*gateways = true;
			continue;
		}
		char *next = xasprintf("%s%s%s", out, *out ? "," : "", a);
		free(out);
		out = next;
	}
	return out;
}

/* The registrar's end of the pipe from its parent: end of file, the parent
 * has gone or stops it. (Not PR_SET_PDEATHSIG: a parent that is no longer
 * root may not signal a root child, even as it dies.) */
static void registrar_on_parent(struct loop *loop, int fd, unsigned events, void *data)
{
	(void)events;
	(void)data;
	char c;
	if (read(fd, &c, 1) <= 0 && errno != EAGAIN && errno != EINTR) {
		log_info("corral-dns stopped: stopping");
		loop_stop(loop);
	}
}

/* The registrar's life: kube-dns's Service and Endpoints kept, as root,
 * until its parent closes the pipe (parent: the read end) or it is
 * signalled. Returns the exit status. */
static int registrar_run(const struct dns_config *cfg, int parent)
{
	log_set_ident("corral-dns-registrar");
	struct error *err = NULL;
	struct dns_ctx ctx = {0};
	struct loop *loop = NULL;
	struct watch *watch = NULL;
	int ret = 1;
	if (!(ctx.zone = zone_new(cfg->domain, (uint32_t)cfg->ttl, cfg->cluster_ip, &err)) ||
	    !(loop = loop_new(&err)) ||
	    loop_add_fd(loop, parent, LOOP_READ, registrar_on_parent, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGTERM, on_signal, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, on_signal, NULL, &err) < 0)
		goto done;
	struct watch_config wcfg = {
	    .mount = cfg->mount,
	    .resync_ms = cfg->resync_ms,
	    .register_service = true,
	    .cluster_ip = cfg->cluster_ip,
	    .port = cfg->port,
	};
	watch = watch_new(loop, &wcfg, ctx.zone, &ctx.metrics);
	if (watch_start(watch, &err) < 0 || loop_run(loop, &err) < 0)
		goto done;
	ret = 0;
done:
	watch_free(watch);
	loop_free(loop);
	zone_free(ctx.zone);
	if (err) {
		log_error("%s", err->msg);
		error_free(err);
	}
	return ret;
}

/* Starts the registrar: -1 on failure, its pid otherwise, with *pipe_fd
 * the write end of the pipe that keeps it running. */
static pid_t registrar_start(const struct dns_config *cfg, int *pipe_fd, struct error **err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return error_set(err, e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(p[1]);
		_exit(registrar_run(cfg, p[0]));
	}
	close(p[0]);
	*pipe_fd = p[1];
	log_info("kube-dns registrar: pid %d, as root (writes kube-dns's Service and Endpoints)",
		 (int)pid);
	return pid;
}

/* Closes the pipe (a parent that is no longer root may not signal it) and
 * waits for the registrar to end. */
static void registrar_stop(pid_t pid, int pipe_fd)
{
	if (pid <= 0)
		return;
	close(pipe_fd);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct dns_config cfg = {0};
	const struct config_key keys[] = {
	    {.name = "mount", .type = CONFIG_STRING, .ptr = &cfg.mount, .def = "/cluster"},
	    {.name = "log-level", .type = CONFIG_STRING, .ptr = &cfg.log_level, .def = "info"},
	    {.name = "listen",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.listen,
	     .def = "127.0.0.1," LISTEN_GATEWAYS},
	    {.name = "port",
	     .type = CONFIG_INT,
	     .ptr = &cfg.port,
	     .def = "10053",
	     .min = 1,
	     .max = 65535},
	    {.name = "health-port",
	     .type = CONFIG_INT,
	     .ptr = &cfg.health_port,
	     .def = "8081",
	     .min = 0,
	     .max = 65535},
	    {.name = "metrics-port",
	     .type = CONFIG_INT,
	     .ptr = &cfg.metrics_port,
	     .def = "10055",
	     .min = 0,
	     .max = 65535},
	    {.name = "domain", .type = CONFIG_STRING, .ptr = &cfg.domain, .def = "cluster.local"},
	    {.name = "ttl",
	     .type = CONFIG_INT,
	     .ptr = &cfg.ttl,
	     .def = "5",
	     .min = 0,
	     .max = 86400},
	    {.name = "upstream", .type = CONFIG_STRING, .ptr = &cfg.upstream, .def = ""},
	    {.name = "forward-timeout",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.forward_timeout_ms,
	     .def = "2s",
	     .min = 10,
	     .max = 60000},
	    {.name = "tcp-idle-timeout",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.tcp_idle_ms,
	     .def = "10s",
	     .min = 100,
	     .max = 3600000},
	    {.name = "tcp-connections",
	     .type = CONFIG_INT,
	     .ptr = &cfg.tcp_max,
	     .def = "128",
	     .min = 1,
	     .max = 65535},
	    {.name = "threads",
	     .type = CONFIG_INT,
	     .ptr = &cfg.threads,
	     .def = "1",
	     .min = 0,
	     .max = 256},
	    {.name = "register-service",
	     .type = CONFIG_BOOL,
	     .ptr = &cfg.register_service,
	     .def = "true"},
	    {.name = "cluster-ip",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.cluster_ip,
	     .def = "10.96.0.10"},
	    {.name = "user", .type = CONFIG_STRING, .ptr = &cfg.user, .def = ""},
	    {.name = "resync-period", .type = CONFIG_DURATION, .ptr = &cfg.resync_ms, .def = "0"},
	    CONFIG_KEYS_END,
	};
	static const struct option opts[] = {
	    {"mount", required_argument, NULL, 'K'},
	    {"config", required_argument, NULL, 'c'},
	    {"listen", required_argument, NULL, 'K'},
	    {"port", required_argument, NULL, 'K'},
	    {"health-port", required_argument, NULL, 'K'},
	    {"metrics-port", required_argument, NULL, 'K'},
	    {"domain", required_argument, NULL, 'K'},
	    {"ttl", required_argument, NULL, 'K'},
	    {"upstream", required_argument, NULL, 'K'},
	    {"forward-timeout", required_argument, NULL, 'K'},
	    {"tcp-idle-timeout", required_argument, NULL, 'K'},
	    {"tcp-connections", required_argument, NULL, 'K'},
	    {"threads", required_argument, NULL, 'K'},
	    {"register-service", optional_argument, NULL, 'B'},
	    {"cluster-ip", required_argument, NULL, 'K'},
	    {"user", required_argument, NULL, 'K'},
	    {"resync-period", required_argument, NULL, 'K'},
	    {"log-level", required_argument, NULL, 'K'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *config_path = NULL;
	struct config_flags flags = {0};
	bool verbose = false;
	int c, idx = 0;

	log_set_ident("corral-dns");
	while ((c = getopt_long(argc, argv, "vVh", opts, &idx)) != -1) {
		switch (c) {
		case 'K':
		case 'B':
			config_flags_add(&flags, opts[idx].name, optarg);
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'V':
			printf("corral-dns %s\n", CORRAL_VERSION);
			return 0;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "corral-dns: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	struct error *err = NULL;
	int ret = 2; /* the configuration is wrong, until it is read */
	struct dns_ctx ctx = {0};
	struct loop *loop = NULL;
	struct server *server = NULL;
	struct http_server *health = NULL, *metrics = NULL;
	struct watch *watch = NULL;
	struct informer *nodes = NULL;
	pid_t registrar = -1;
	int registrar_pipe = -1;
	bool gateways = false;
	cleanup_free char *nsdir = NULL, *addrs = NULL, *http_addr = NULL;
	if (config_load(config_path, "dns", keys, &err) < 0)
		goto out_config;
	if (config_flags_apply(&flags, keys, &err) < 0)
		goto out_config;
	if (log_parse_level(cfg.log_level) < 0) {
		error_set(&err, EINVAL,
			  "log-level: unknown level \"%s\" (debug, info, warn, error)",
			  cfg.log_level);
		goto out_config;
	}
	log_set_level(verbose ? LOG_DEBUG : (enum log_level)log_parse_level(cfg.log_level));
	if (!(ctx.zone = zone_new(cfg.domain, (uint32_t)cfg.ttl, cfg.cluster_ip, &err)))
		goto out_config;
	ret = 1;

	nsdir = xasprintf("%s/namespaces", cfg.mount);
	struct stat st;
	if (stat(nsdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error_set(&err, ENOENT, "no cluster is mounted at %s (no %s)", cfg.mount, nsdir);
		goto out;
	}
	addrs = listen_addresses(cfg.listen, &gateways);
	/* The health and metrics servers: on the first address, or loopback. */
	http_addr = *addrs ? xstrndup(addrs, strcspn(addrs, ",")) : xstrdup("127.0.0.1");
	bool registrar_needed = *cfg.user && cfg.register_service;
	if (registrar_needed && (registrar = registrar_start(&cfg, &registrar_pipe, &err)) < 0)
		goto out;
	if (!(loop = loop_new(&err)))
		goto out;
	if (loop_on_signal(loop, SIGTERM, on_signal, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, on_signal, NULL, &err) < 0)
		goto out;
	signal(SIGPIPE, SIG_IGN);
	struct server_config scfg = {
	    .listen = addrs,
	    .port = cfg.port,
	    .tcp_idle_ms = cfg.tcp_idle_ms,
	    .tcp_max = cfg.tcp_max,
	    .threads = cfg.threads ? cfg.threads : udp_threads(),
	    .upstreams = cfg.upstream,
	    .forward_timeout_ms = cfg.forward_timeout_ms,
	};
	if (!(server = server_new(loop, &scfg, ctx.zone, &ctx.metrics, &err)))
		goto out;
	ctx.server = server;
	ctx.port = cfg.port;
	/* Both paths on both ports; one server when the ports are the same. */
	if (cfg.health_port &&
	    !(health = http_new(loop, http_addr, cfg.health_port, on_http, &ctx, &err)))
		goto out;
	if (cfg.metrics_port && cfg.metrics_port != cfg.health_port &&
	    !(metrics = http_new(loop, http_addr, cfg.metrics_port, on_http, &ctx, &err)))
		goto out;
	if (*cfg.user && drop_privileges(cfg.user, &err) < 0)
		goto out;
	struct watch_config wcfg = {
	    .mount = cfg.mount,
	    .resync_ms = cfg.resync_ms,
	    .register_service = cfg.register_service && !registrar_needed,
	    .cluster_ip = cfg.cluster_ip,
	    .port = cfg.port,
	};
	watch = watch_new(loop, &wcfg, ctx.zone, &ctx.metrics);
	if (watch_start(watch, &err) < 0)
		goto out;
	if (gateways) {
		nodes = informer_new(loop, cfg.mount, "nodes", false);
		static const struct informer_handlers nh = {.on_add = on_node,
							    .on_update = on_node_update};
		informer_add_handlers(nodes, &nh, &ctx);
		if (informer_start(nodes, &err) < 0)
			goto out;
	}
	log_info("corral-dns %s on %s: %s port %d for %s, %zu services%s%s", CORRAL_VERSION,
		 cfg.mount, cfg.listen, cfg.port, cfg.domain, zone_service_count(ctx.zone),
		 *cfg.upstream ? ", forwarding to " : "", cfg.upstream);
	if (loop_run(loop, &err) < 0)
		goto out;
	if (server_failed(server)) { /* it said why */
		error_set(&err, EIO, "no UDP thread is left to answer");
		goto out;
	}
	ret = 0;

out:
	informer_free(nodes);
	watch_free(watch);
	http_free(metrics);
	http_free(health);
	server_free(server);
	loop_free(loop);
	registrar_stop(registrar, registrar_pipe);
	zone_free(ctx.zone);
out_config:
	if (err) {
		log_error("%s", err->msg);
		error_free(err);
	}
	config_flags_clear(&flags);
	config_free(keys);
	if (ret == 0)
		log_info("stopped");
	return ret;
}
