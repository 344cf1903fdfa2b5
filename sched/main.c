/* main.c: corral-sched, the scheduler: binds pending pods to nodes by
 * writing spec.nodeName through the mount.
 *
 *   corral-sched [--mount DIR] [--config FILE] [--scheduler-name NAME] [--verbose]
 *
 * Reads top to bottom: options, the [sched] section of the config file
 * (flags win), the loop and its signals, the scheduler, run until SIGTERM or
 * SIGINT, then undo in reverse order. */
#include "config.h"
#include "log.h"
#include "loop.h"
#include "scheduler.h"
#include "util.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORRAL_VERSION "0.1.0"

/* The [sched] section. */
struct sched_config {
	char *mount;
	char *scheduler_name;
	char *log_level;
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
	fprintf(f,
		"usage: %s [--mount DIR] [--config FILE] [--scheduler-name NAME] [--verbose]\n"
		"\n"
		"Binds the pending pods of the cluster mounted at DIR to its nodes.\n"
		"  --mount DIR            the cluster's mount (default: mount in [sched], else "
		"/cluster)\n"
		"  --config FILE          the [sched] section (default /etc/corral/corral.conf)\n"
		"  --scheduler-name NAME  schedule the pods whose spec.schedulerName is NAME\n"
		"                         (default default-scheduler)\n"
		"  --verbose              log at the debug level\n"
		"  -h, --help             print this and exit\n"
		"  -V, --version          print the version and exit\n"
		"See corral-sched(8).\n",
		prog);
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
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *opt_mount = NULL, *opt_config = NULL, *opt_name = NULL;
	bool verbose = false;
	int c;
	log_set_ident("corral-sched");
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
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
	    (opt_name && config_set(keys, "scheduler-name", opt_name, &err) < 0)) {
		fprintf(stderr, "corral-sched: %s\n", err->msg);
		error_free(err);
		config_free(keys);
		return 2;
	}
	int level = log_parse_level(cfg.log_level);
	if (level < 0) {
		fprintf(
		    stderr,
		    "corral-sched: log-level: unknown level \"%s\" (debug, info, warn, error)\n",
		    cfg.log_level);
		config_free(keys);
		return 2;
	}
	log_set_level(verbose ? LOG_DEBUG : (enum log_level)level);
	if (!*cfg.scheduler_name) {
		fprintf(stderr, "corral-sched: scheduler-name: must not be empty\n");
		config_free(keys);
		return 2;
	}

	int ret = 1;
	struct scheduler *s = NULL;
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
	if (scheduler_start(s, &err) < 0)
		goto out;
	if (loop_run(loop, &err) < 0)
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
	scheduler_free(s);
	loop_free(loop);
	config_free(keys);
	return ret;
}
