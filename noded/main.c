/* main.c: corral-noded, the node agent (the kubelet's role).
 *
 *   corral-noded [--mount DIR] [--name NAME] [--hollow] [--config FILE]
 *                [--pod-cidr CIDR] [--node-ip ADDRESS] [--heartbeat-period DURATION]
 *                [--verbose]
 *   corral-noded [--config FILE] image pull REF | list | rm REF... | prune
 *
 * Reads top to bottom: options and the [noded] section, the loop and its
 * signals, the runtime, the node (registered, then heartbeating), the pods,
 * then the loop until SIGTERM or SIGINT, and everything undone in reverse.
 * Stopping leaves the node object and the pods' status as they are. */
#include "config.h"
#include "hostgw.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "names.h"
#include "net.h"
#include "node.h"
#include "pods.h"
#include "provision.h"
#include "proxy.h"
#include "pull.h"
#include "quantity.h"
#include "runtime.h"
#include "serve.h"
#include "static.h"
#include "token.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NODED_VERSION "0.1.0"

/* The [noded] section; flags are applied on top with config_set(). */
struct noded_conf {
	char *mount;
	char *name;
	bool hollow;
	char *pod_cidr;
	char *cluster_cidr;
	int node_cidr_mask;
	uint64_t heartbeat_ms;
	uint64_t lease_renew_ms;
	int lease_duration_s;
	uint64_t resync_ms;
	char *node_ip;
	char *state;
	int max_pods;
	char *eviction_memory;
	char *hollow_cpu;
	char *hollow_memory;
	char *hollow_storage;
	char *log_level;
	char *service_cidr;
	char *cluster_dns;
	char *cluster_domain;
	char *images;
	char *pod_log_dir;
	char *volumes; /* local-path volumes' folder; "": <state>/volumes */
	bool cleanup_on_exit;
	bool proxy;
	uint64_t eviction_period_ms;
	char *sa_key_file; /* signs service-account tokens; "": none */
	char *sa_issuer;
	uint64_t metrics_interval_ms;
	char *image_store;
	char *insecure_registries;
	char *registry_mirrors;
	char *registry_auth_file;
	int image_gc_high;
	int image_gc_low;
	uint64_t image_gc_min_age_ms;
	uint64_t image_gc_period_ms;
	char *static_pod_path;
	char *manifest_url;
	uint64_t file_check_ms;
	uint64_t http_check_ms;
	int serve_port; /* logs for other hosts (serve.h); 0: not served */
	char *serve_address;
	char *tls_cert_file;
	char *tls_key_file;
	char *client_ca_file;
	int pod_workers; /* pods set up at once, off the loop */
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: corral-noded [--mount DIR] [--name NAME] [--hollow] [--config FILE]\n"
	    "                    [--pod-cidr CIDR] [--heartbeat-period DURATION] [--verbose]\n"
	    "\n"
	    "Registers this node in the cluster mounted at DIR, heartbeats, and runs the\n"
	    "pods bound to it.\n"
	    "  --mount DIR                 the cluster's mount (default /cluster)\n"
	    "  --name NAME                 the node's name (default: the host name)\n"
	    "  --hollow                    run nothing: report bound pods Running (scale tests)\n"
	    "  --config FILE               the [noded] section (default /etc/corral/corral.conf)\n"
	    "  --pod-cidr CIDR             this node's pod range (default: a free /24 of\n"
	    "                              10.244.0.0/16)\n"
	    "  --heartbeat-period DURATION how often the node's status is written (default 10s)\n"
	    "  --node-ip ADDRESS           the node's InternalIP, where other hosts route its\n"
	    "                              pods (default: the machine's address)\n"
	    "  --cleanup-on-exit           stop and remove this node's pods, bridge and rules\n"
	    "                              when stopping (default: pods keep running)\n"
	    "  --service-account-key-file FILE  the private key (PEM, RSA or EC P-256) that\n"
	    "                              signs pods' service-account tokens (default none)\n"
	    "  --serve-port PORT           serve this node's container logs over HTTPS to\n"
	    "                              clients of the cluster CA (0: not, the default)\n"
	    "  --tls-cert-file FILE, --tls-private-key-file FILE, --client-ca-file FILE\n"
	    "                              the server's certificate and key, and the CA\n"
	    "                              whose clients it serves (PEM)\n"
	    "  --verbose                   log at the debug level\n"
	    "  -V, --version               print the version\n"
	    "   or: corral-noded [--config FILE] image pull REF | list | rm REF... | prune\n"
	    "See corral-noded(8).\n");
}

static void on_stop(struct loop *loop, int signo, void *data)
{
	(void)data;
	log_info("%s: stopping", strsignal(signo));
	loop_stop(loop);
}

/* The folder this program is in (corral-pause and corral-shim are there). */
static char *self_dir(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return xstrdup(".");
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
	return xstrdup(buf);
}

/* Kubernetes lower-cases host names into node names. */
static char *default_name(void)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) != 0 || !*host)
		snprintf(host, sizeof(host), "localhost");
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return xstrdup(host);
}

static int parse_bytes(const char *key, const char *s, int64_t *bytes, struct error **err)
{
	int64_t milli;
	if (quantity_parse(s, &milli, err) < 0 || milli < 0) {
		if (!*err)
			error_set(err, EINVAL, "must not be negative");
		error_prefix(err, "%s", key);
		return -1;
	}
	*bytes = milli / 1000;
	return 0;
}

int main(int argc, char **argv)
{
	/* Declared here: the gotos below must never skip a cleanup variable. */
	cleanup_free char *nodes_dir = NULL, *images = NULL, *volumes = NULL, *bin_dir = NULL,
			  *proxy_table = NULL;
	cleanup_token_signer struct token_signer *signer = NULL;
	cleanup_free char *image_store = NULL;
	struct strv insecure = {0}, mirrors = {0};
	static const struct option longopts[] = {
	    {"mount", required_argument, NULL, 'm'},
	    {"name", required_argument, NULL, 'n'},
	    {"hollow", no_argument, NULL, 'H'},
	    {"config", required_argument, NULL, 'c'},
	    {"pod-cidr", required_argument, NULL, 'p'},
	    {"heartbeat-period", required_argument, NULL, 'b'},
	    {"node-ip", required_argument, NULL, 'I'},
	    {"cleanup-on-exit", no_argument, NULL, 'C'},
	    {"service-account-key-file", required_argument, NULL, 'k'},
	    {"serve-port", required_argument, NULL, 'P'},
	    {"tls-cert-file", required_argument, NULL, 'T'},
	    {"tls-private-key-file", required_argument, NULL, 'K'},
	    {"client-ca-file", required_argument, NULL, 'A'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *flag_mount = NULL, *flag_name = NULL, *flag_config = NULL;
	const char *flag_cidr = NULL, *flag_beat = NULL, *flag_sa_key = NULL;
	const char *flag_serve_port = NULL, *flag_tls_cert = NULL, *flag_tls_key = NULL;
	const char *flag_client_ca = NULL, *flag_node_ip = NULL;
	bool flag_hollow = false, verbose = false, flag_cleanup = false;
	int c;

	log_set_ident("corral-noded");
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			flag_mount = optarg;
			break;
		case 'n':
			flag_name = optarg;
			break;
		case 'H':
			flag_hollow = true;
			break;
		case 'c':
			flag_config = optarg;
			break;
		case 'p':
			flag_cidr = optarg;
			break;
		case 'b':
			flag_beat = optarg;
			break;
		case 'I':
			flag_node_ip = optarg;
			break;
		case 'C':
			flag_cleanup = true;
			break;
		case 'k':
			flag_sa_key = optarg;
			break;
		case 'P':
			flag_serve_port = optarg;
			break;
		case 'T':
			flag_tls_cert = optarg;
			break;
		case 'K':
			flag_tls_key = optarg;
			break;
		case 'A':
			flag_client_ca = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'V':
			printf("corral-noded %s\n", NODED_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	bool image_cmd = optind < argc && strcmp(argv[optind], "image") == 0;
	if (optind < argc && !image_cmd) {
		fprintf(stderr, "corral-noded: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	struct noded_conf cf = {0};
	const struct config_key keys[] = {
	    {"mount", CONFIG_STRING, &cf.mount, "/cluster", 0, 0},
	    {"name", CONFIG_STRING, &cf.name, "", 0, 0},
	    {"hollow", CONFIG_BOOL, &cf.hollow, "false", 0, 0},
	    {"pod-cidr", CONFIG_STRING, &cf.pod_cidr, "", 0, 0},
	    {"cluster-cidr", CONFIG_STRING, &cf.cluster_cidr, "10.244.0.0/16", 0, 0},
	    {"node-cidr-mask-size", CONFIG_INT, &cf.node_cidr_mask, "24", 1, CIDR_MAX_PREFIX},
	    {"heartbeat-period", CONFIG_DURATION, &cf.heartbeat_ms, "10s", 100, 3600000},
	    {"node-lease-renew-interval", CONFIG_DURATION, &cf.lease_renew_ms, "10s", 100, 3600000},
	    {"node-lease-duration-seconds", CONFIG_INT, &cf.lease_duration_s, "40", 1, 3600},
	    {"resync-period", CONFIG_DURATION, &cf.resync_ms, "1m", 0, 86400000},
	    {"node-ip", CONFIG_STRING, &cf.node_ip, "", 0, 0},
	    {"state", CONFIG_STRING, &cf.state, "/var/lib/corral", 0, 0},
	    {"max-pods", CONFIG_INT, &cf.max_pods, "110", 1, 100000},
	    {"eviction-memory-available", CONFIG_STRING, &cf.eviction_memory, "100Mi", 0, 0},
	    {"hollow-cpu", CONFIG_STRING, &cf.hollow_cpu, "1", 0, 0},
	    {"hollow-memory", CONFIG_STRING, &cf.hollow_memory, "3840Mi", 0, 0},
	    {"hollow-ephemeral-storage", CONFIG_STRING, &cf.hollow_storage, "0", 0, 0},
	    {"log-level", CONFIG_STRING, &cf.log_level, "info", 0, 0},
	    {"service-cidr", CONFIG_STRING, &cf.service_cidr, "10.96.0.0/16", 0, 0},
	    {"cluster-dns", CONFIG_STRING, &cf.cluster_dns, "10.96.0.10", 0, 0},
	    {"cluster-domain", CONFIG_STRING, &cf.cluster_domain, "cluster.local", 0, 0},
	    {"images", CONFIG_STRING, &cf.images, "", 0, 0},
	    {"pod-log-dir", CONFIG_STRING, &cf.pod_log_dir, "/var/log/pods", 0, 0},
	    {"volumes", CONFIG_STRING, &cf.volumes, "", 0, 0},
	    {"cleanup-on-exit", CONFIG_BOOL, &cf.cleanup_on_exit, "false", 0, 0},
	    {"proxy", CONFIG_BOOL, &cf.proxy, "true", 0, 0},
	    {"eviction-period", CONFIG_DURATION, &cf.eviction_period_ms, "2s", 100, 3600000},
	    {"service-account-key-file", CONFIG_STRING, &cf.sa_key_file, "", 0, 0},
	    {"service-account-issuer", CONFIG_STRING, &cf.sa_issuer, TOKEN_DEFAULT_ISSUER, 0, 0},
	    {"metrics-interval", CONFIG_DURATION, &cf.metrics_interval_ms, "15s", 1000, 3600000},
	    {"image-store", CONFIG_STRING, &cf.image_store, "", 0, 0},
	    {"insecure-registries", CONFIG_STRING, &cf.insecure_registries, "", 0, 0},
	    {"registry-mirrors", CONFIG_STRING, &cf.registry_mirrors, "", 0, 0},
	    {"registry-auth-file", CONFIG_STRING, &cf.registry_auth_file, "", 0, 0},
	    {"image-gc-high-threshold", CONFIG_INT, &cf.image_gc_high, "85", 0, 100},
	    {"image-gc-low-threshold", CONFIG_INT, &cf.image_gc_low, "80", 0, 100},
	    {"image-minimum-gc-age", CONFIG_DURATION, &cf.image_gc_min_age_ms, "2m", 0, 86400000},
	    {"image-gc-period", CONFIG_DURATION, &cf.image_gc_period_ms, "5m", 100, 86400000},
	    {"static-pod-path", CONFIG_STRING, &cf.static_pod_path, "/etc/corral/manifests", 0, 0},
	    {"manifest-url", CONFIG_STRING, &cf.manifest_url, "", 0, 0},
	    {"file-check-frequency", CONFIG_DURATION, &cf.file_check_ms, "20s", 100, 86400000},
	    {"http-check-frequency", CONFIG_DURATION, &cf.http_check_ms, "20s", 100, 86400000},
	    {"serve-port", CONFIG_INT, &cf.serve_port, "0", 0, 65535},
	    {"serve-address", CONFIG_STRING, &cf.serve_address, "", 0, 0},
	    {"tls-cert-file", CONFIG_STRING, &cf.tls_cert_file, "", 0, 0},
	    {"tls-private-key-file", CONFIG_STRING, &cf.tls_key_file, "", 0, 0},
	    {"client-ca-file", CONFIG_STRING, &cf.client_ca_file, "", 0, 0},
	    {"pod-workers", CONFIG_INT, &cf.pod_workers, "4", 1, 64},
	    CONFIG_KEYS_END,
	};
	struct error *err = NULL;
	int ret = 2;
	if (config_load(flag_config, "noded", keys, &err) < 0)
		goto out_conf;
	if ((flag_mount && config_set(keys, "mount", flag_mount, &err) < 0) ||
	    (flag_name && config_set(keys, "name", flag_name, &err) < 0) ||
	    (flag_hollow && config_set(keys, "hollow", "true", &err) < 0) ||
	    (flag_cidr && config_set(keys, "pod-cidr", flag_cidr, &err) < 0) ||
	    (flag_beat && config_set(keys, "heartbeat-period", flag_beat, &err) < 0) ||
	    (flag_node_ip && config_set(keys, "node-ip", flag_node_ip, &err) < 0) ||
	    (flag_cleanup && config_set(keys, "cleanup-on-exit", "true", &err) < 0) ||
	    (flag_sa_key && config_set(keys, "service-account-key-file", flag_sa_key, &err) < 0) ||
	    (flag_serve_port && config_set(keys, "serve-port", flag_serve_port, &err) < 0) ||
	    (flag_tls_cert && config_set(keys, "tls-cert-file", flag_tls_cert, &err) < 0) ||
	    (flag_tls_key && config_set(keys, "tls-private-key-file", flag_tls_key, &err) < 0) ||
	    (flag_client_ca && config_set(keys, "client-ca-file", flag_client_ca, &err) < 0))
		goto out_conf;
	if (log_parse_level(cf.log_level) < 0) {
		error_set(&err, EINVAL,
			  "log-level: unknown level \"%s\" (debug, info, warn, error)",
			  cf.log_level);
		goto out_conf;
	}
	log_set_level(verbose ? LOG_DEBUG : (enum log_level)log_parse_level(cf.log_level));

	if (cf.image_gc_low > cf.image_gc_high) {
		error_set(&err, EINVAL,
			  "image-gc-low-threshold %d is above image-gc-high-threshold %d",
			  cf.image_gc_low, cf.image_gc_high);
		goto out_conf;
	}
	image_store = *cf.image_store ? xstrdup(cf.image_store) : xasprintf("%s/images", cf.state);
	pull_split_list(cf.insecure_registries, &insecure);
	pull_split_list(cf.registry_mirrors, &mirrors);
	struct pull_opts pull_o = {
	    .store = image_store,
	    .state = cf.state,
	    .insecure = &insecure,
	    .mirrors = &mirrors,
	    .auth_file = *cf.registry_auth_file ? cf.registry_auth_file : NULL,
	    .gc_high = cf.image_gc_high,
	    .gc_low = cf.image_gc_low,
	    .gc_min_age_s = (long long)(cf.image_gc_min_age_ms / 1000),
	    .gc_period_ms = cf.image_gc_period_ms,
	};
	if (image_cmd) {
		ret = pull_cli(&pull_o, argc - optind - 1, argv + optind + 1);
		goto out_conf;
	}
	if (!*cf.name) {
		free(cf.name);
		cf.name = default_name();
	}
	if (names_dns1123_subdomain(cf.name, &err) < 0) {
		error_prefix(&err, "node name \"%s\"", cf.name);
		goto out_conf;
	}
	volumes = *cf.volumes ? xstrdup(cf.volumes) : xasprintf("%s/volumes", cf.state);
	struct node_opts no = {
	    .mount = cf.mount,
	    .name = cf.name,
	    .hollow = cf.hollow,
	    .pod_cidr = cf.pod_cidr,
	    .node_cidr_mask = (unsigned)cf.node_cidr_mask,
	    .heartbeat_ms = cf.heartbeat_ms,
	    .lease_renew_ms = cf.lease_renew_ms,
	    .lease_duration_s = (unsigned)cf.lease_duration_s,
	    .node_ip = cf.node_ip,
	    .storage_path = cf.state,
	    .max_pods = cf.max_pods,
	    .volumes_dir = volumes,
	    .daemon_port = (unsigned)cf.serve_port,
	};
	if (cidr_parse(cf.cluster_cidr, &no.cluster_cidr, &err) < 0) {
		error_prefix(&err, "cluster-cidr");
		goto out_conf;
	}
	if ((unsigned)cf.node_cidr_mask < no.cluster_cidr.prefix) {
		error_set(&err, EINVAL, "node-cidr-mask-size %d is shorter than cluster-cidr %s",
			  cf.node_cidr_mask, cf.cluster_cidr);
		goto out_conf;
	}
	int64_t hollow_cpu_milli;
	if (*cf.node_ip) {
		uint32_t ip;
		if (cidr_ip_parse(cf.node_ip, &ip) < 0) {
			error_set(&err, EINVAL, "node-ip: \"%s\" is not an IPv4 address",
				  cf.node_ip);
			goto out_conf;
		}
	}
	if (parse_bytes("eviction-memory-available", cf.eviction_memory, &no.eviction_memory,
			&err) < 0 ||
	    parse_bytes("hollow-memory", cf.hollow_memory, &no.hollow_capacity.memory, &err) < 0 ||
	    parse_bytes("hollow-ephemeral-storage", cf.hollow_storage,
			&no.hollow_capacity.ephemeral_storage, &err) < 0)
		goto out_conf;
	if (quantity_parse(cf.hollow_cpu, &hollow_cpu_milli, &err) < 0 || hollow_cpu_milli <= 0) {
		if (!err)
			error_set(&err, EINVAL, "must be positive");
		error_prefix(&err, "hollow-cpu");
		goto out_conf;
	}
	no.hollow_capacity.cpu = hollow_cpu_milli;
	no.hollow_capacity.memory *= 1000;
	no.hollow_capacity.ephemeral_storage *= 1000;
	no.hollow_capacity.pods = (int64_t)cf.max_pods * 1000;

	ret = 1;
	nodes_dir = xasprintf("%s/nodes", cf.mount);
	struct stat stn;
	if (stat(nodes_dir, &stn) != 0 || !S_ISDIR(stn.st_mode)) {
		error_set(&err, ENOENT, "%s is not a corral mount (no nodes/ folder there)",
			  cf.mount);
		goto out_conf;
	}
	signal(SIGPIPE, SIG_IGN);

	struct loop *loop = loop_new(&err);
	if (!loop)
		goto out_conf;
	if (loop_on_signal(loop, SIGTERM, on_stop, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, on_stop, NULL, &err) < 0) {
		loop_free(loop);
		goto out_conf;
	}
	struct cidr service_cidr;
	if (cidr_parse(cf.service_cidr, &service_cidr, &err) < 0) {
		error_prefix(&err, "service-cidr");
		loop_free(loop);
		goto out_conf;
	}
	images = *cf.images ? xstrdup(cf.images) : xasprintf("%s/images", cf.state);
	if (!cf.hollow && *cf.sa_key_file) {
		/* the key is the cluster's: only root may read it (corral up
		 * makes it 0600); say so when it is not kept that way */
		struct stat sk;
		if (stat(cf.sa_key_file, &sk) == 0 && (sk.st_mode & 077))
			log_warn("service-account-key-file %s is readable by others (mode %04o): "
				 "it should be 0600",
				 cf.sa_key_file, (unsigned)(sk.st_mode & 07777));
		if (!(signer = token_signer_load(cf.sa_key_file, &err))) {
			error_prefix(&err, "service-account-key-file");
			loop_free(loop);
			goto out_conf;
		}
		log_info("service-account tokens signed %s with %s", token_signer_alg(signer),
			 cf.sa_key_file);
	} else if (!cf.hollow) {
		log_info("no service-account-key-file: pods get no service-account token");
	}
	bin_dir = self_dir();
	struct runtime *rt = NULL;
	if (cf.hollow) {
		rt = runtime_hollow_new();
	} else {
		const struct nspawn_opts ro = {
		    .loop = loop,
		    .mount = cf.mount,
		    .node = cf.name,
		    .state_dir = cf.state,
		    .images_dir = images,
		    .log_dir = cf.pod_log_dir,
		    .bin_dir = bin_dir,
		    .dns_ip = cf.cluster_dns,
		    .domain = cf.cluster_domain,
		    .eviction_bytes = no.eviction_memory,
		    .eviction_period_ms = cf.eviction_period_ms,
		    .token_signer = signer,
		    .token_issuer = cf.sa_issuer,
		    .pull = &pull_o,
		    .workers = (unsigned)cf.pod_workers,
		};
		rt = runtime_nspawn_new(&ro, &err);
		if (!rt) {
			loop_free(loop);
			goto out_conf;
		}
	}
	struct node_agent *na = node_agent_new(loop, &no, rt);
	struct pods *pods = NULL;
	struct provision *prov = NULL;
	struct metrics *metrics = NULL;
	struct static_pods *statics = NULL;
	struct net *net = NULL;
	struct hostgw *hostgw = NULL;
	struct proxy *proxy = NULL;
	struct serve *serve = NULL;
	log_info("node %s on %s (%s mode, runtime %s)", cf.name, cf.mount,
		 cf.hollow ? "hollow" : "real", rt->version);
	if (node_agent_register(na, &err) < 0)
		goto out_node;
	if (!cf.hollow) {
		const struct cidr *pc = node_agent_pod_cidr(na);
		if (!pc) {
			error_set(&err, EINVAL,
				  "the node has no podCIDR: pods cannot get addresses");
			goto out_node;
		}
		const struct net_opts nopts = {
		    .node = cf.name,
		    .pod_cidr = *pc,
		    .cluster_cidr = no.cluster_cidr,
		    .service_cidr = service_cidr,
		};
		net = net_new(&nopts);
		if (net_up(net, &err) < 0)
			goto out_node;
		runtime_nspawn_attach(rt, net, node_agent_host_ip(na));
		const struct hostgw_opts gopts = {
		    .mount = cf.mount,
		    .node = cf.name,
		    .cluster_cidr = no.cluster_cidr,
		    .service_cidr = service_cidr,
		};
		hostgw = hostgw_new(loop, &gopts);
		if (hostgw_start(hostgw, &err) < 0)
			goto out_node;
	}
	if (!cf.hollow && cf.proxy) {
		char pod_cidr[CIDR_STR_SIZE], cluster_cidr[CIDR_STR_SIZE];
		cidr_format(node_agent_pod_cidr(na), pod_cidr);
		cidr_format(&no.cluster_cidr, cluster_cidr);
		const char *addrs[] = {node_agent_host_ip(na)};
		proxy_table = proxy_table_for_node(cf.name);
		const struct proxy_opts popts = {
		    .table = proxy_table,
		    .bridge = net_bridge(net),
		    .pod_cidr = pod_cidr,
		    .cluster_cidr = cluster_cidr,
		    .service_cidr = cf.service_cidr,
		    .node_addresses = addrs,
		    .n_node_addresses = addrs[0] ? 1 : 0,
		};
		proxy = proxy_new(loop, cf.mount, &popts, &err);
		if (!proxy || proxy_start(proxy, &err) < 0)
			goto out_node;
	}
	if (!cf.hollow) {
		/* Ready now that the network is up, not at the next beat: the
		 * scheduler does not bind pods to a node that is not ready */
		struct error *berr = NULL;
		if (node_agent_heartbeat(na, &berr) < 0) {
			log_warn("heartbeat: %s", berr->msg);
			error_free(berr);
		}
	}
	const struct pods_opts po = {
	    .mount = cf.mount,
	    .node_name = cf.name,
	    .pod_cidr = node_agent_pod_cidr(na),
	    .host_ip = node_agent_host_ip(na),
	    .resync_ms = cf.resync_ms,
	    .follow_config = !cf.hollow,
	};
	pods = pods_new(loop, &po, rt);
	if (pods_start(pods, &err) < 0)
		goto out_node;
	prov = provision_new(loop, cf.mount, cf.name, volumes);
	if (provision_start(prov, &err) < 0)
		goto out_node;
	const struct metrics_opts mo = {
	    .mount = cf.mount,
	    .node = cf.name,
	    .interval_ms = cf.metrics_interval_ms,
	    .hollow = cf.hollow,
	};
	metrics = metrics_new(loop, &mo, pods, rt);
	metrics_start(metrics);
	if (!cf.hollow) {
		/* a hollow node runs nothing: it has no static pods either */
		const struct static_pods_opts so = {
		    .path = cf.static_pod_path,
		    .url = cf.manifest_url,
		    .node = cf.name,
		    .file_ms = cf.file_check_ms,
		    .http_ms = cf.http_check_ms,
		};
		statics = static_pods_new(loop, &so, pods);
		if (static_pods_start(statics, &err) < 0)
			goto out_node;
	}
	if (cf.serve_port) {
		const struct serve_opts so = {
		    .address = *cf.serve_address ? cf.serve_address : node_agent_host_ip(na),
		    .port = (unsigned)cf.serve_port,
		    .log_dir = cf.pod_log_dir,
		    .cert_file = cf.tls_cert_file,
		    .key_file = cf.tls_key_file,
		    .client_ca_file = cf.client_ca_file,
		    .mount = cf.mount,
		    .node = cf.name,
		    .state_dir = cf.state,
		};
		if (!(serve = serve_start(&so, &err)))
			goto out_node;
	}
	const char *why_not = NULL, *msg = NULL;
	if (!runtime_ready(rt, &why_not, &msg))
		log_warn("node %s is not ready: %s", cf.name, msg);

	if (loop_run(loop, &err) < 0)
		goto out_node;
	ret = 0;

out_node:
	/* a stopped node stops heartbeating and leaves its object behind;
	 * its pods run on (a restarted agent adopts them) unless asked */
	node_agent_stop(na);
	if (net) /* a real node: its setups use what is freed below */
		runtime_nspawn_drain(rt);
	serve_stop(serve);
	provision_free(prov);
	metrics_free(metrics);
	static_pods_free(statics);
	pods_free(pods);
	if (proxy && !cf.cleanup_on_exit)
		proxy_keep_table(proxy); /* services keep working meanwhile */
	proxy_free(proxy);
	hostgw_free(hostgw);
	if (net && cf.cleanup_on_exit) {
		runtime_nspawn_stop_all(rt);
		/* the host's last node: no agent of it wants routes any more */
		if (net_down(net))
			hostgw_remove_all(&no.cluster_cidr);
	}
	net_free(net);
	node_agent_free(na);
	runtime_free(rt);
	loop_free(loop);
out_conf:
	if (err) {
		if (ret == 2)
			fprintf(stderr, "corral-noded: %s\n", err->msg);
		else
			log_error("%s", err->msg);
		error_free(err);
	}
	config_free(keys);
	strv_clear(&insecure);
	strv_clear(&mirrors);
	return ret;
}
