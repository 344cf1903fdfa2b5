/* main.c: corral-fs, the cluster as a FUSE filesystem.
 *
 *   corral-fs [-f] [-o OPTIONS] [--state DIR] [--store etcd://HOST:PORT,...]
 *             [--config FILE] [--restore] [--loop-threads N] MOUNTPOINT
 *
 * Reads top to bottom: options, mount, (daemonize), open the store and the
 * history, build the tree, serve until unmounted or signalled, then undo
 * in reverse order. */
#include "config.h"
#include "history.h"
#include "log.h"
#include "ops.h"
#include "remotelogs.h"
#include "restore.h"
#include "store.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CORRAL_VERSION "0.1.0"

struct options {
	const char *state;
	const char *store;
	const char *config;
	const char *logs;
	const char *ca_file;
	const char *client_cert;
	const char *client_key;
	const char *loop_threads;
	int restore;
	int version;
	int help;
	int debug;
};

#define OPT(t, p)                                                                                  \
	{                                                                                          \
		t, offsetof(struct options, p), 1                                                  \
	}
/* fuse_opt_parse() takes every template that matches, in order, and
 * "--state %s" matches "--state=DIR" too (with "=DIR"): the "=" form comes
 * last, so that it wins. */
static const struct fuse_opt option_spec[] = {
    {"--state %s", offsetof(struct options, state), 0},
    {"--state=%s", offsetof(struct options, state), 0},
    {"--store %s", offsetof(struct options, store), 0},
    {"--store=%s", offsetof(struct options, store), 0},
    {"--config %s", offsetof(struct options, config), 0},
    {"--config=%s", offsetof(struct options, config), 0},
    {"--pod-log-dir %s", offsetof(struct options, logs), 0},
    {"--pod-log-dir=%s", offsetof(struct options, logs), 0},
    {"--ca-file %s", offsetof(struct options, ca_file), 0},
    {"--ca-file=%s", offsetof(struct options, ca_file), 0},
    {"--client-cert %s", offsetof(struct options, client_cert), 0},
    {"--client-cert=%s", offsetof(struct options, client_cert), 0},
    {"--client-key %s", offsetof(struct options, client_key), 0},
    {"--client-key=%s", offsetof(struct options, client_key), 0},
    {"--loop-threads %s", offsetof(struct options, loop_threads), 0},
    {"--loop-threads=%s", offsetof(struct options, loop_threads), 0},
    OPT("--restore", restore),
    OPT("--version", version),
    OPT("-V", version),
    OPT("--help", help),
    OPT("-h", help),
    OPT("--verbose", debug),
    FUSE_OPT_END,
};

static void usage(const char *prog)
{
	printf(
	    "usage: %s [-f] [-o OPTIONS] [--state DIR] [--config FILE] [--restore] [MOUNTPOINT]\n"
	    "\n"
	    "Serves the cluster state at MOUNTPOINT (default: mount in [fs], else /cluster).\n"
	    "  -f                stay in the foreground\n"
	    "  -d                FUSE debug output (implies -f)\n"
	    "  -o OPTIONS        FUSE mount options (see mount.fuse3(8))\n"
	    "  --state DIR       live store and history (default /var/lib/corral)\n"
	    "  --store etcd://HOST:PORT[,HOST:PORT...]\n"
	    "                    keep the live store in etcd, shared with other corral-fs\n"
	    "                    (default: LMDB in the state folder)\n"
	    "  --config FILE     the [fs] section: state, mount, log-level (default "
	    "/etc/corral/corral.conf)\n"
	    "  --restore         rebuild an empty live store from the history's last commit\n"
	    "  --pod-log-dir DIR containers' output, shown under namespaces/NS/logs (default "
	    "/var/log/pods)\n"
	    "  --ca-file FILE, --client-cert FILE, --client-key FILE\n"
	    "                    read the logs of pods on other hosts from their nodes\n"
	    "                    (HTTPS: the cluster CA, this client's certificate and key)\n"
	    "  --loop-threads N  threads that answer the kernel's requests (default 1)\n"
	    "  --verbose         log at the debug level\n"
	    "  -V, --version     print the version\n"
	    "See corral-fs(8) and corral-tree(5).\n",
	    prog);
}

int main(int argc, char **argv)
{
	/* Declared here: the gotos below must never skip a cleanup variable. */
	cleanup_free char *store_dir = NULL, *git_dir = NULL;
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct options opts = {0};
	struct fuse_cmdline_opts fopts = {0};
	struct fuse_session *se = NULL;
	struct store *store = NULL;
	struct history *hist = NULL;
	struct fs *fs = NULL;
	struct remotelogs *remote = NULL;
	struct error *err = NULL;
	int ret = 1;

	log_set_ident("corral-fs");
	if (fuse_opt_parse(&args, &opts, option_spec, NULL) < 0)
		return 2;
	if (opts.help) {
		usage(argv[0]);
		fuse_opt_free_args(&args);
		return 0;
	}
	if (opts.version) {
		printf("corral-fs %s (libfuse %s)\n", CORRAL_VERSION, fuse_pkgversion());
		fuse_opt_free_args(&args);
		return 0;
	}
	/* The [fs] section of the config file; flags win over it. */
	char *cfg_state = NULL, *cfg_mount = NULL, *cfg_level = NULL, *cfg_logs = NULL;
	char *cfg_store = NULL;
	char *cfg_svc_cidr = NULL;
	char *cfg_ca = NULL, *cfg_cert = NULL, *cfg_key = NULL;
	uint64_t cfg_remote_timeout_ms = 0;
	int cfg_not_ready_s = 0, cfg_unreachable_s = 0, cfg_loop_threads = 0;
	const struct config_key keys[] = {
	    {.name = "state", .type = CONFIG_STRING, .ptr = &cfg_state, .def = "/var/lib/corral"},
	    {.name = "mount", .type = CONFIG_STRING, .ptr = &cfg_mount, .def = "/cluster"},
	    {.name = "store", .type = CONFIG_STRING, .ptr = &cfg_store, .def = ""},
	    {.name = "log-level", .type = CONFIG_STRING, .ptr = &cfg_level, .def = "info"},
	    {.name = "pod-log-dir",
	     .type = CONFIG_STRING,
	     .ptr = &cfg_logs,
	     .def = "/var/log/pods"},
	    {.name = "ca-file", .type = CONFIG_STRING, .ptr = &cfg_ca, .def = ""},
	    {.name = "client-cert", .type = CONFIG_STRING, .ptr = &cfg_cert, .def = ""},
	    {.name = "client-key", .type = CONFIG_STRING, .ptr = &cfg_key, .def = ""},
	    {.name = "remote-log-timeout",
	     .type = CONFIG_DURATION,
	     .ptr = &cfg_remote_timeout_ms,
	     .def = "5s",
	     .min = 100,
	     .max = 600000},
	    {.name = "default-not-ready-toleration-seconds",
	     .type = CONFIG_INT,
	     .ptr = &cfg_not_ready_s,
	     .def = "300",
	     .min = 1,
	     .max = 1000000000},
	    {.name = "default-unreachable-toleration-seconds",
	     .type = CONFIG_INT,
	     .ptr = &cfg_unreachable_s,
	     .def = "300",
	     .min = 1,
	     .max = 1000000000},
	    {.name = "loop-threads",
	     .type = CONFIG_INT,
	     .ptr = &cfg_loop_threads,
	     .def = "1",
	     .min = 1,
	     .max = FS_LOOP_THREADS_MAX},
	    /* [cluster], shared with corral-ctrl, corral-noded and corral-dns */
	    {.name = "service-cidr",
	     .type = CONFIG_STRING,
	     .ptr = &cfg_svc_cidr,
	     .def = SERVICERANGE_DEFAULT_CIDR},
	    CONFIG_KEYS_END,
	};
	if (config_load(opts.config, "fs", keys, &err) < 0) {
		fprintf(stderr, "corral-fs: %s\n", err->msg);
		error_free(err);
		config_free(keys);
		return 2;
	}
	if (log_parse_level(cfg_level) < 0) {
		fprintf(stderr,
			"corral-fs: log-level: unknown level \"%s\" (debug, info, warn, error)\n",
			cfg_level);
		config_free(keys);
		return 2;
	}
	struct servicerange svc_range;
	if (servicerange_parse(cfg_svc_cidr, &svc_range, &err) < 0) {
		fprintf(stderr, "corral-fs: %s\n", err->msg);
		error_free(err);
		config_free(keys);
		return 2;
	}
	int loop_threads = cfg_loop_threads;
	if (opts.loop_threads) {
		char *end;
		long v = strtol(opts.loop_threads, &end, 10);
		if (end == opts.loop_threads || *end || v < 1 || v > FS_LOOP_THREADS_MAX) {
			fprintf(stderr, "corral-fs: --loop-threads: %s is not between 1 and %d\n",
				opts.loop_threads, FS_LOOP_THREADS_MAX);
			config_free(keys);
			free((char *)opts.loop_threads);
			return 2;
		}
		loop_threads = (int)v;
	}
	log_set_level((enum log_level)log_parse_level(cfg_level));
	if (opts.debug)
		log_set_level(LOG_DEBUG);
	/* fuse_opt frees a replaced %s value, so defaults come after. */
	const char *state_opt = opts.state ? opts.state : cfg_state;
	if (fuse_parse_cmdline(&args, &fopts) != 0) {
		config_free(keys);
		return 2;
	}
	if (!fopts.mountpoint)
		fopts.mountpoint = xstrdup(cfg_mount);
	/* Every user sees the cluster; the kernel checks modes. */
	fuse_opt_add_arg(&args, "-oallow_other,default_permissions,fsname=corral,subtype=corral");

	char state[PATH_MAX];
	if (util_mkdir_p(state_opt, 0755) < 0 || !realpath(state_opt, state)) {
		fprintf(stderr, "corral-fs: cannot use state folder %s: %s\n", state_opt,
			strerror(errno));
		goto out_args;
	}
	const char *store_opt = opts.store ? opts.store : cfg_store;
	if (store_opt[0] && strncmp(store_opt, "etcd://", 7) != 0) {
		fprintf(stderr,
			"corral-fs: store: \"%s\" is not etcd://HOST:PORT[,HOST:PORT...] "
			"(leave it unset for LMDB in the state folder)\n",
			store_opt);
		goto out_args;
	}
	store_dir = store_opt[0] ? xstrdup(store_opt) : xasprintf("%s/state", state);
	git_dir = xasprintf("%s/history.git", state);

	if (store_open(store_dir, &store, &err) < 0 ||
	    history_open(git_dir, store, &hist, &err) < 0)
		goto out_err;
	if (opts.restore && restore_from_history(store, hist, &err) < 0)
		goto out_err;
	fs = fs_new(store, git_dir);
	fs_set_log_dir(fs, opts.logs ? opts.logs : cfg_logs);
	const struct remotelogs_opts ro = {
	    .ca_file = opts.ca_file ? opts.ca_file : cfg_ca,
	    .cert_file = opts.client_cert ? opts.client_cert : cfg_cert,
	    .key_file = opts.client_key ? opts.client_key : cfg_key,
	    .timeout_ms = cfg_remote_timeout_ms,
	};
	if (*ro.ca_file || *ro.cert_file || *ro.key_file) {
		if (!(remote = remotelogs_new(store, &ro, &err)))
			goto out_err;
		fs_set_remote_logs(fs, remote);
	}
	fs_set_service_range(fs, &svc_range);
	fs_set_default_tolerations(fs, cfg_not_ready_s, cfg_unreachable_s);
	if (fs_load(fs, &err) < 0)
		goto out_err;

	se = fuse_session_new(&args, fs_ops(), sizeof(*fs_ops()), fs);
	if (!se) {
		error_set(&err, EINVAL, "cannot create the FUSE session");
		goto out_err;
	}
	if (fuse_set_signal_handlers(se) != 0) {
		error_set(&err, EIO, "cannot set signal handlers");
		goto out_err;
	}
	if (fuse_session_mount(se, fopts.mountpoint) != 0) {
		error_set(&err, EIO, "cannot mount %s", fopts.mountpoint);
		goto out_signals;
	}
	/* Threads start after the fork of daemonizing; LMDB is opened before
	 * it, but the parent only exits. */
	/* The replays of remote.h use it after the daemon's chdir("/"). */
	char mnt_abs[PATH_MAX];
	const char *mnt = realpath(fopts.mountpoint, mnt_abs) ? mnt_abs : fopts.mountpoint;
	fuse_daemonize(fopts.foreground);
	if (fs_start(fs, se, mnt, &err) < 0 || history_start(hist, &err) < 0 ||
	    remotelogs_start(remote, &err) < 0)
		goto out_unmount;
	log_info("serving %s (state %s)", fopts.mountpoint, state);

	/* loop_threads answer the kernel (ops.h, Threads); the workers of
	 * ops.c take the writes. */
	if (loop_threads == 1) {
		ret = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();
		fuse_loop_cfg_set_max_threads(lc, (unsigned)loop_threads);
		fuse_loop_cfg_set_idle_threads(lc, (unsigned)loop_threads);
		ret = fuse_session_loop_mt(se, lc);
		fuse_loop_cfg_destroy(lc);
	}
	ret = ret == 0 ? 0 : 1;
	log_info("stopping");

out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_err:
	if (err) {
		log_error("%s", err->msg);
		error_free(err);
		ret = 1;
	}
	/* its threads reply to requests: before the session goes */
	remotelogs_free(remote);
	if (fs)
		fs_set_remote_logs(fs, NULL);
	if (se)
		fuse_session_destroy(se);
	history_close(hist);
	fs_free(fs);
	store_close(store);
out_args:
	free(fopts.mountpoint);
	fuse_opt_free_args(&args);
	config_free(keys);
	free((char *)opts.state);
	free((char *)opts.store);
	free((char *)opts.config);
	free((char *)opts.logs);
	free((char *)opts.ca_file);
	free((char *)opts.client_cert);
	free((char *)opts.client_key);
	free((char *)opts.loop_threads);
	return ret;
}
