/* main.c: corral-ctrl, the controllers of a corral cluster.
 *
 *   corral-ctrl [--mount DIR] [--config FILE] [--leader-elect[=BOOL]] ...
 *
 * Reads top to bottom: options (flags over the [ctrl] section of the
 * config file), the loop and its signals, the writer, leadership (which
 * starts the controllers), the loop until SIGTERM, then undo in reverse
 * order: stop the controllers, hand the lease over, stop the writer. */
#include "config.h"
#include "ctrl.h"
#include "leader.h"
#include "leaderelect.h"
#include "log.h"
#include "loop.h"
#include "servicerange.h"
#include "util.h"
#include "write.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CORRAL_VERSION "0.1.0"

static void usage(const char *prog)
{
	printf(
	    "usage: %s [--mount DIR] [--config FILE] [--leader-elect[=BOOL]] [options]\n"
	    "\n"
	    "Runs the controllers of the cluster mounted at DIR (default /cluster):\n"
	    "ReplicaSets, ReplicationControllers, Deployments, the garbage collector,\n"
	    "drop boxes, the expiry of events, Services' ClusterIPs and nodePorts,\n"
	    "Endpoints, Jobs, the TTL after a Job finishes, the pod garbage collector,\n"
	    "DaemonSets, CronJobs, the deletion of namespaces, the PersistentVolume\n"
	    "binder with the local-path provisioner, PVC and PV protection, StatefulSets,\n"
	    "node lifecycle and taint eviction, and PodDisruptionBudgets.\n"
	    "  --mount DIR                           the cluster's mount (default /cluster)\n"
	    "  --config FILE                         the [ctrl] section (default "
	    "/etc/corral/corral.conf)\n"
	    "  --leader-elect[=BOOL]                 run only while holding the lease (default "
	    "true)\n"
	    "  --leader-elect-lease-duration D       lease duration (default 15s)\n"
	    "  --leader-elect-renew-deadline D       stop leading without a renewal for D (default "
	    "10s)\n"
	    "  --leader-elect-retry-period D         renew every D (default 2s)\n"
	    "  --leader-elect-resource-name NAME     the Lease (default corral-ctrl)\n"
	    "  --leader-elect-resource-namespace NS  its namespace (default kube-system)\n"
	    "  --leader-elect-resource-lock leases   the kind of lock (only leases)\n"
	    "  --controllers LIST                    '*', names, '-name' to leave one out\n"
	    "                                        (%s)\n"
	    "  --event-ttl D                         delete events older than D (default 1h, 0: "
	    "keep)\n"
	    "  --concurrent-writes N                 writes in flight through the mount (default "
	    "16)\n"
	    "  --burst-replicas N                    most pods one sync creates or deletes "
	    "(default 500)\n"
	    "  --status-interval D                   least time between status-only writes of a\n"
	    "                                        Deployment or of a set no one owns (default "
	    "1s)\n"
	    "  --resync-period D                     relist every D (default 0: never)\n"
	    "  --terminated-pod-gc-threshold N       podgc keeps at most N terminated pods\n"
	    "                                        (default 12500, 0: no limit)\n"
	    "  --pod-gc-quarantine D                 podgc deletes the pods of a node missing\n"
	    "                                        for D (default 40s)\n"
	    "  --node-monitor-grace-period D         a node without a heartbeat for D is Unknown\n"
	    "                                        (default 40s)\n"
	    "  --node-eviction-rate R                nodes a second tainted for eviction (0.1)\n"
	    "  --secondary-node-eviction-rate R      the same in a large disrupted zone (0.01)\n"
	    "  --unhealthy-zone-threshold F          a zone with F of its nodes not ready is\n"
	    "                                        partially disrupted (0.55)\n"
	    "  --large-cluster-size-threshold N      zones of more nodes keep evicting (50)\n"
	    "  --horizontal-pod-autoscaler-sync-period D  how often HPAs are looked at (15s)\n"
	    "  --horizontal-pod-autoscaler-downscale-stabilization D\n"
	    "                                        the window of scale-down recommendations "
	    "(5m)\n"
	    "  --horizontal-pod-autoscaler-tolerance F  the ratio's dead band (0.1)\n"
	    "  --service-cidr CIDR                   ClusterIPs come from it (default "
	    "10.96.0.0/16)\n"
	    "  --service-node-port-range A-B         nodePorts come from it (default "
	    "30000-32767)\n"
	    "  --root-ca-file FILE                   the cluster CA's certificate, published as\n"
	    "                                        kube-root-ca.crt (default none: empty)\n"
	    "  -v, --verbose                         log at the debug level\n"
	    "  -V, --version                         print the version\n"
	    "  -h, --help                            this help\n"
	    "See corral-ctrl(8).\n",
	    prog, ctrl_names());
}

static void on_signal(struct loop *loop, int signo, void *data)
{
	(void)data;
	log_info("%s: stopping", strsignal(signo));
	loop_stop(loop);
}

/* A flag's value, applied over the config file. */
int main(int argc, char **argv)
{
	/* Declared here: the gotos below must never skip a cleanup variable. */
	cleanup_free char *nsdir = NULL;
	struct ctrl_config cfg = {0};
	const struct config_key keys[] = {
	    {.name = "mount", .type = CONFIG_STRING, .ptr = &cfg.mount, .def = "/cluster"},
	    {.name = "log-level", .type = CONFIG_STRING, .ptr = &cfg.log_level, .def = "info"},
	    LEADER_CONFIG_KEYS(&cfg.leader_elect, &cfg.lease_duration_ms, &cfg.renew_deadline_ms,
			       &cfg.retry_period_ms, &cfg.lease_name, "corral-ctrl",
			       &cfg.lease_namespace),
	    {.name = "leader-elect-resource-lock",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.lease_lock,
	     .def = "leases"},
	    {.name = "controllers", .type = CONFIG_STRING, .ptr = &cfg.controllers, .def = "*"},
	    {.name = "event-ttl", .type = CONFIG_DURATION, .ptr = &cfg.event_ttl_ms, .def = "1h"},
	    {.name = "concurrent-writes",
	     .type = CONFIG_INT,
	     .ptr = &cfg.writers,
	     .def = "16",
	     .min = 1,
	     .max = 256},
	    {.name = "burst-replicas",
	     .type = CONFIG_INT,
	     .ptr = &cfg.burst_replicas,
	     .def = "500",
	     .min = 1,
	     .max = 100000},
	    {.name = "status-interval",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.status_interval_ms,
	     .def = "1s"},
	    {.name = "terminated-pod-gc-threshold",
	     .type = CONFIG_INT,
	     .ptr = &cfg.pod_gc_threshold,
	     .def = "12500",
	     .min = 0,
	     .max = 100000000},
	    {.name = "pod-gc-quarantine",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.pod_gc_quarantine_ms,
	     .def = "40s",
	     .min = 0,
	     .max = 86400000},
	    {.name = "resync-period", .type = CONFIG_DURATION, .ptr = &cfg.resync_ms, .def = "0"},
	    {.name = "node-monitor-grace-period",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.node_monitor_grace_ms,
	     .def = "40s",
	     .min = 100,
	     .max = 86400000},
	    {.name = "node-eviction-rate",
	     .type = CONFIG_DOUBLE,
	     .ptr = &cfg.node_eviction_rate,
	     .def = "0.1",
	     .min = 0,
	     .max = 1000000},
	    {.name = "secondary-node-eviction-rate",
	     .type = CONFIG_DOUBLE,
	     .ptr = &cfg.secondary_node_eviction_rate,
	     .def = "0.01",
	     .min = 0,
	     .max = 1000000},
	    {.name = "unhealthy-zone-threshold",
	     .type = CONFIG_DOUBLE,
	     .ptr = &cfg.unhealthy_zone_threshold,
	     .def = "0.55",
	     .min = 0,
	     .max = 1},
	    {.name = "large-cluster-size-threshold",
	     .type = CONFIG_INT,
	     .ptr = &cfg.large_cluster_size_threshold,
	     .def = "50",
	     .min = 0,
	     .max = 1000000},
	    {.name = "horizontal-pod-autoscaler-sync-period",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.hpa_sync_ms,
	     .def = "15s",
	     .min = 100,
	     .max = 86400000},
	    {.name = "horizontal-pod-autoscaler-downscale-stabilization",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.hpa_downscale_ms,
	     .def = "5m",
	     .min = 0,
	     .max = 86400000},
	    {.name = "horizontal-pod-autoscaler-tolerance",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.hpa_tolerance,
	     .def = "0.1"},
	    /* Shared with corral-noded and corral-dns: set them in [cluster]. */
	    {.name = "service-cidr",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.service_cidr,
	     .def = SERVICERANGE_DEFAULT_CIDR},
	    {.name = "service-node-port-range",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.node_port_range,
	     .def = SERVICERANGE_DEFAULT_PORTS},
	    {.name = "root-ca-file", .type = CONFIG_STRING, .ptr = &cfg.root_ca_file, .def = ""},
	    CONFIG_KEYS_END,
	};
	static const struct option opts[] = {
	    {"mount", required_argument, NULL, 'm'},
	    {"config", required_argument, NULL, 'c'},
	    LEADER_LONG_OPTIONS('L', 'K'),
	    {"leader-elect-resource-lock", required_argument, NULL, 'K'},
	    {"controllers", required_argument, NULL, 'K'},
	    {"event-ttl", required_argument, NULL, 'K'},
	    {"concurrent-writes", required_argument, NULL, 'K'},
	    {"burst-replicas", required_argument, NULL, 'K'},
	    {"status-interval", required_argument, NULL, 'K'},
	    {"resync-period", required_argument, NULL, 'K'},
	    {"terminated-pod-gc-threshold", required_argument, NULL, 'K'},
	    {"pod-gc-quarantine", required_argument, NULL, 'K'},
	    {"node-monitor-grace-period", required_argument, NULL, 'K'},
	    {"node-eviction-rate", required_argument, NULL, 'K'},
	    {"secondary-node-eviction-rate", required_argument, NULL, 'K'},
	    {"unhealthy-zone-threshold", required_argument, NULL, 'K'},
	    {"large-cluster-size-threshold", required_argument, NULL, 'K'},
	    {"horizontal-pod-autoscaler-sync-period", required_argument, NULL, 'K'},
	    {"horizontal-pod-autoscaler-downscale-stabilization", required_argument, NULL, 'K'},
	    {"horizontal-pod-autoscaler-tolerance", required_argument, NULL, 'K'},
	    {"service-cidr", required_argument, NULL, 'K'},
	    {"service-node-port-range", required_argument, NULL, 'K'},
	    {"root-ca-file", required_argument, NULL, 'K'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *config_path = NULL;
	struct config_flags flags = {0};
	bool verbose = false;
	int c, idx = 0;

	log_set_ident("corral-ctrl");
	while ((c = getopt_long(argc, argv, "vVh", opts, &idx)) != -1) {
		switch (c) {
		case 'm':
		case 'L':
		case 'K':
			config_flags_add(&flags, c == 'm' ? "mount" : opts[idx].name, optarg);
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'V':
			printf("corral-ctrl %s\n", CORRAL_VERSION);
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
		fprintf(stderr, "corral-ctrl: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	struct error *err = NULL;
	int ret = 2; /* the configuration is wrong, until it is read */
	if (config_load(config_path, "ctrl", keys, &err) < 0)
		goto out_config;
	if (config_flags_apply(&flags, keys, &err) < 0)
		goto out_config;
	if (log_parse_level(cfg.log_level) < 0) {
		error_set(&err, EINVAL,
			  "log-level: unknown level \"%s\" (debug, info, warn, error)",
			  cfg.log_level);
		goto out_config;
	}
	if (strcmp(cfg.lease_lock, "leases") != 0) {
		error_set(&err, EINVAL,
			  "leader-elect-resource-lock: Unsupported value \"%s\": supported: leases",
			  cfg.lease_lock);
		goto out_config;
	}
	if (ctrl_check_controllers(cfg.controllers, &err) < 0)
		goto out_config;
	{
		char *end = NULL;
		double tol = strtod(cfg.hpa_tolerance, &end);
		if (!*cfg.hpa_tolerance || *end || !(tol >= 0 && tol < 1)) {
			error_set(&err, EINVAL,
				  "horizontal-pod-autoscaler-tolerance: \"%s\" is not a fraction "
				  "from 0 to 1",
				  cfg.hpa_tolerance);
			goto out_config;
		}
	}
	struct servicerange svc_range;
	int np_lo, np_hi;
	if (servicerange_parse(cfg.service_cidr, &svc_range, &err) < 0 ||
	    servicerange_parse_ports(cfg.node_port_range, &np_lo, &np_hi, &err) < 0)
		goto out_config;
	if (np_lo < SERVICERANGE_PORT_MIN || np_hi > SERVICERANGE_PORT_MAX) {
		/* corral-fs refuses any other nodePort at write time. */
		error_set(&err, EINVAL,
			  "service-node-port-range: \"%s\" must lie within 30000-32767, the "
			  "nodePorts corral-fs accepts",
			  cfg.node_port_range);
		goto out_config;
	}
	if (cfg.leader_elect && !(cfg.retry_period_ms < cfg.renew_deadline_ms &&
				  cfg.renew_deadline_ms < cfg.lease_duration_ms)) {
		error_set(&err, EINVAL,
			  "leader election: want retry period < renew deadline < lease duration");
		goto out_config;
	}
	log_set_level(verbose ? LOG_DEBUG : (enum log_level)log_parse_level(cfg.log_level));
	ret = 1;

	struct ctrl ctx = {.cfg = &cfg, .mount = cfg.mount};
	struct ctrl_leader *leader = NULL;
	nsdir = xasprintf("%s/namespaces", cfg.mount);
	struct stat st;
	if (stat(nsdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error_set(&err, ENOENT, "no cluster is mounted at %s (no %s)", cfg.mount, nsdir);
		goto out;
	}
	char host[256] = "localhost";
	gethostname(host, sizeof(host) - 1);
	ctx.host = xstrdup(host);
	ctx.identity = leader_identity();
	if (!(ctx.loop = loop_new(&err)))
		goto out;
	if (loop_on_signal(ctx.loop, SIGTERM, on_signal, NULL, &err) < 0 ||
	    loop_on_signal(ctx.loop, SIGINT, on_signal, NULL, &err) < 0)
		goto out;
	if (!(ctx.writer = writer_new(ctx.loop, cfg.mount, (unsigned)cfg.writers, &err)))
		goto out;
	if (!(leader = ctrl_leader_new(&ctx, &err)))
		goto out;
	log_info("corral-ctrl %s on %s as %s%s", CORRAL_VERSION, cfg.mount, ctx.identity,
		 cfg.leader_elect ? "" : " (no leader election)");
	if (ctrl_leader_start(leader, &err) < 0)
		goto out;
	if (!ctrl_leader_failed(leader) && loop_run(ctx.loop, &err) < 0)
		goto out;
	ret = ctrl_leader_failed(leader) ? 1 : 0;

out:
	ctrl_leader_free(leader);
	writer_free(ctx.writer);
	loop_free(ctx.loop);
	free(ctx.identity);
	free(ctx.host);
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
