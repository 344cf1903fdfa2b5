/* main.c: corral-sched, the scheduler: binds pending pods to nodes by
 * writing spec.nodeName through the mount.
 *
 *   corral-sched [--mount DIR] [--config FILE] [--scheduler-name NAME]
 *                [--leader-elect[=BOOL]] ... [--verbose]
 *
 * Reads top to bottom: options, the [sched] section of the config file
 * (flags win), the loop and its signals, the scheduler, leadership (which
 * starts it), run until SIGTERM or SIGINT (or until the lease is lost),
 * then undo in reverse order: stop the scheduler, hand the lease over. */
#include "config.h"
#include "leader.h"
#include "leaderelect.h"
#include "log.h"
#include "loop.h"
#include "scheduler.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CORRAL_VERSION "0.1.0"

/* The [sched] section. */
struct sched_config {
	char *mount;
	char *scheduler_name;
	char *log_level;
	bool leader_elect;
	uint64_t lease_duration_ms;
	uint64_t renew_deadline_ms;
	uint64_t retry_period_ms;
	char *lease_name;
	char *lease_namespace;
	int workers;
	int percentage;
	uint64_t initial_backoff_ms;
	uint64_t max_backoff_ms;
	uint64_t max_unschedulable_ms;
	uint64_t resync_ms;
	int w_least, w_balanced, w_affinity, w_taint, w_spread;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(
	    f,
	    "usage: %s [--mount DIR] [--config FILE] [--scheduler-name NAME]\n"
	    "       [--leader-elect[=BOOL]] [options] [--verbose]\n"
	    "\n"
	    "Binds the pending pods of the cluster mounted at DIR to its nodes.\n"
	    "  --mount DIR                           the cluster's mount (default: mount in "
	    "[sched],\n"
	    "                                        else /cluster)\n"
	    "  --config FILE                         the [sched] section (default "
	    "/etc/corral/corral.conf)\n"
	    "  --scheduler-name NAME                 schedule the pods whose spec.schedulerName "
	    "is\n"
	    "                                        NAME (default default-scheduler)\n"
	    "  --leader-elect[=BOOL]                 schedule only while holding the lease "
	    "(default\n"
	    "                                        true)\n"
	    "  --leader-elect-lease-duration D       lease duration (default 15s)\n"
	    "  --leader-elect-renew-deadline D       stop leading without a renewal for D "
	    "(default 10s)\n"
	    "  --leader-elect-retry-period D         renew every D (default 2s)\n"
	    "  --leader-elect-resource-name NAME     the Lease (default corral-sched)\n"
	    "  --leader-elect-resource-namespace NS  its namespace (default kube-system)\n"
	    "  --verbose                             log at the debug level\n"
	    "  -h, --help                            print this and exit\n"
	    "  -V, --version                         print the version and exit\n"
	    "See corral-sched(8).\n",
	    prog);
}

static bool has_cluster(const char *mount)
{
	cleanup_free char *nsdir = xasprintf("%s/namespaces", mount);
	struct stat st;
	return stat(nsdir, &st) == 0 && S_ISDIR(st.st_mode);
}

static void on_stop(struct loop *loop, int signo, void *data)
{
	(void)data;
	log_info("SIG%s: stopping", sigabbrev_np(signo));
	loop_stop(loop);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"mount", required_argument, NULL, 'm'},
	    {"config", required_argument, NULL, 'c'},
	    {"scheduler-name", required_argument, NULL, 'n'},
	    LEADER_LONG_OPTIONS('L', 'K'),
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *opt_mount = NULL, *opt_config = NULL, *opt_name = NULL;
	/* The leader-elect flags, applied over the config file in order. */
	struct config_flags flags = {0};
	bool verbose = false;
	int c, idx = 0;
	log_set_ident("corral-sched");
	while ((c = getopt_long(argc, argv, "hV", longopts, &idx)) != -1) {
		switch (c) {
		case 'L':
		case 'K':
			config_flags_add(&flags, longopts[idx].name, optarg);
			break;
		case 'm':
			opt_mount = optarg;
			break;
		case 'c':
			opt_config = optarg;
			break;
		case 'n':
			opt_name = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		case 'V':
			printf("corral-sched %s\n", CORRAL_VERSION);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "corral-sched: unexpected argument '%s'\n", argv[optind]);
		usage(stderr, argv[0]);
		return 2;
	}

	struct sched_config cfg = {0};
	const struct config_key keys[] = {
	    {.name = "mount", .type = CONFIG_STRING, .ptr = &cfg.mount, .def = "/cluster"},
	    {.name = "scheduler-name",
	     .type = CONFIG_STRING,
	     .ptr = &cfg.scheduler_name,
	     .def = "default-scheduler"},
	    {.name = "log-level", .type = CONFIG_STRING, .ptr = &cfg.log_level, .def = "info"},
	    LEADER_CONFIG_KEYS(&cfg.leader_elect, &cfg.lease_duration_ms, &cfg.renew_deadline_ms,
			       &cfg.retry_period_ms, &cfg.lease_name, "corral-sched",
			       &cfg.lease_namespace),
	    {.name = "bind-workers",
	     .type = CONFIG_INT,
	     .ptr = &cfg.workers,
	     .def = "16",
	     .min = 1,
	     .max = 256},
	    {.name = "percentage-of-nodes-to-score",
	     .type = CONFIG_INT,
	     .ptr = &cfg.percentage,
	     .def = "0",
	     .min = 0,
	     .max = 100},
	    {.name = "pod-initial-backoff",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.initial_backoff_ms,
	     .def = "1s",
	     .min = 1,
	     .max = 3600000},
	    {.name = "pod-max-backoff",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.max_backoff_ms,
	     .def = "10s",
	     .min = 1,
	     .max = 3600000},
	    {.name = "max-unschedulable-time",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg.max_unschedulable_ms,
	     .def = "5m",
	     .min = 1000,
	     .max = 86400000},
	    {.name = "resync-period", .type = CONFIG_DURATION, .ptr = &cfg.resync_ms, .def = "0"},
	    {.name = "weight-least-allocated",
	     .type = CONFIG_INT,
	     .ptr = &cfg.w_least,
	     .def = "1",
	     .min = 0,
	     .max = 100},
	    {.name = "weight-balanced-allocation",
	     .type = CONFIG_INT,
	     .ptr = &cfg.w_balanced,
	     .def = "1",
	     .min = 0,
	     .max = 100},
	    {.name = "weight-node-affinity",
	     .type = CONFIG_INT,
	     .ptr = &cfg.w_affinity,
	     .def = "2",
	     .min = 0,
	     .max = 100},
	    {.name = "weight-taint-toleration",
	     .type = CONFIG_INT,
	     .ptr = &cfg.w_taint,
	     .def = "3",
	     .min = 0,
	     .max = 100},
	    {.name = "weight-spread",
	     .type = CONFIG_INT,
	     .ptr = &cfg.w_spread,
	     .def = "2",
	     .min = 0,
	     .max = 100},
	    CONFIG_KEYS_END,
	};
	struct error *err = NULL;
	if (config_load(opt_config, "sched", keys, &err) < 0 ||
	    (opt_mount && config_set(keys, "mount", opt_mount, &err) < 0) ||
	    (opt_name && config_set(keys, "scheduler-name", opt_name, &err) < 0))
		goto out_config;
	if (config_flags_apply(&flags, keys, &err) < 0)
		goto out_config;
	if (cfg.leader_elect && !(cfg.retry_period_ms < cfg.renew_deadline_ms &&
				  cfg.renew_deadline_ms < cfg.lease_duration_ms)) {
		error_set(&err, EINVAL,
			  "leader election: want retry period < renew deadline < lease duration");
		goto out_config;
	}
	int level = log_parse_level(cfg.log_level);
	if (level < 0) {
		fprintf(
		    stderr,
		    "corral-sched: log-level: unknown level \"%s\" (debug, info, warn, error)\n",
		    cfg.log_level);
		config_flags_clear(&flags);
		config_free(keys);
		return 2;
	}
	log_set_level(verbose ? LOG_DEBUG : (enum log_level)level);
	if (!*cfg.scheduler_name) {
		fprintf(stderr, "corral-sched: scheduler-name: must not be empty\n");
		config_flags_clear(&flags);
		config_free(keys);
		return 2;
	}

	int ret = 1;
	struct scheduler *s = NULL;
	struct sched_leader *leader = NULL;
	char *identity = leader_identity();
	struct loop *loop = loop_new(&err);
	if (!loop)
		goto out;
	if (loop_on_signal(loop, SIGTERM, on_stop, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, on_stop, NULL, &err) < 0)
		goto out;
	signal(SIGPIPE, SIG_IGN);

	struct scheduler_opts o = {
	    .mount = cfg.mount,
	    .name = cfg.scheduler_name,
	    .workers = (unsigned)cfg.workers,
	    .resync_ms = cfg.resync_ms,
	    .algo =
		{
		    .weights =
			{
			    .least_allocated = cfg.w_least,
			    .balanced_allocation = cfg.w_balanced,
			    .node_affinity = cfg.w_affinity,
			    .taint_toleration = cfg.w_taint,
			    .spread = cfg.w_spread,
			},
		    .percentage = cfg.percentage,
		},
	    .queue =
		{
		    .initial_backoff_ms = cfg.initial_backoff_ms,
		    .max_backoff_ms = cfg.max_backoff_ms,
		    .max_unschedulable_ms = cfg.max_unschedulable_ms,
		},
	};
	s = scheduler_new(loop, &o);
	/* Checked here, as a follower reads nothing of the cluster but its lease. */
	if (!has_cluster(cfg.mount)) {
		error_set(&err, ENOENT, "no cluster is mounted at %s (no %s/namespaces)", cfg.mount,
			  cfg.mount);
		goto out;
	}
	struct leader_config lc = {
	    .mount = cfg.mount,
	    .ns = cfg.lease_namespace,
	    .name = cfg.lease_name,
	    .identity = identity,
	    .lease_ms = cfg.lease_duration_ms,
	    .renew_ms = cfg.renew_deadline_ms,
	    .retry_ms = cfg.retry_period_ms,
	};
	if (!(leader = sched_leader_new(loop, s, cfg.leader_elect ? &lc : NULL, &err)))
		goto out;
	log_info("corral-sched %s on %s as %s%s", CORRAL_VERSION, cfg.mount, identity,
		 cfg.leader_elect ? "" : " (no leader election)");
	if (sched_leader_start(leader, &err) < 0)
		goto out;
	if (!sched_leader_failed(leader) && loop_run(loop, &err) < 0)
		goto out;
	if (sched_leader_failed(leader))
		goto out;
	const struct scheduler_stats *st = scheduler_stats(s);
	log_info("stopped: %zu pods bound, %zu binding conflicts, %zu failed bindings, %zu "
		 "unschedulable attempts",
		 st->bound, st->conflicts, st->failures, st->unschedulable);
	ret = 0;
out:
	if (err) {
		log_error("%s", err->msg);
		error_free(err);
	}
	/* The binder's writes in flight finish before the lease is handed over. */
	scheduler_free(s);
	sched_leader_free(leader);
	loop_free(loop);
	free(identity);
	config_flags_clear(&flags);
	config_free(keys);
	return ret;

out_config:
	fprintf(stderr, "corral-sched: %s\n", err->msg);
	error_free(err);
	config_flags_clear(&flags);
	config_free(keys);
	return 2;
}
