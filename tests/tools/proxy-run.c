/* proxy-run: one corral-noded service proxy against a mount, alone, so that
 * tests and benchmarks can run it inside a network namespace of their own.
 *
 *   proxy-run --mount M --table T [--bridge BR] [--pod-cidr CIDR]
 *             [--cluster-cidr CIDR] [--service-cidr CIDR]
 *             [--node-address A]... [--nft PATH] [--once | --print] [--verbose]
 *
 * Runs until SIGTERM or SIGINT, then deletes the table. --once applies the
 * table, prints "render_us N apply_us N bytes N" and exits leaving it in
 * place; --print writes the rendered text to stdout and touches nothing.
 * Prints "ready" on stdout once the table is live (for scripts to wait on). */
#include "informer.h"
#include "log.h"
#include "loop.h"
#include "proxy.h"
#include "util.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: proxy-run --mount M --table T [--bridge BR] [--pod-cidr CIDR]\n"
		     "                 [--cluster-cidr CIDR] [--service-cidr CIDR]\n"
		     "                 [--node-address A]... [--nft PATH] [--once | --print]\n"
		     "                 [--verbose]\n");
}

static void on_stop(struct loop *loop, int signo, void *data)
{
	(void)signo;
	(void)data;
	loop_stop(loop);
}

struct collect {
	struct proxy_object *v;
	size_t n;
};

static int collect(void *data, const char *key, const struct ynode *obj)
{
	struct collect *c = data;
	c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
	c->v[c->n++] = (struct proxy_object){key, obj};
	return 0;
}

/* --print: the informers' caches, rendered, with nothing applied. */
static int print_only(struct loop *loop, const char *mount, const struct proxy_opts *o)
{
	struct error *err = NULL;
	cleanup_informer struct informer *s = informer_new(loop, mount, "services", true);
	cleanup_informer struct informer *e = informer_new(loop, mount, "endpoints", true);
	if (informer_start(s, &err) < 0 || informer_start(e, &err) < 0) {
		fprintf(stderr, "proxy-run: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	struct collect cs = {0}, ce = {0};
	informer_foreach(s, NULL, collect, &cs);
	informer_foreach(e, NULL, collect, &ce);
	char *text = NULL;
	int rc = proxy_render(o, cs.v, cs.n, ce.v, ce.n, &text, &err);
	free(cs.v);
	free(ce.v);
	if (rc < 0) {
		fprintf(stderr, "proxy-run: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"mount", required_argument, NULL, 'm'},
	    {"table", required_argument, NULL, 't'},
	    {"bridge", required_argument, NULL, 'b'},
	    {"pod-cidr", required_argument, NULL, 'p'},
	    {"cluster-cidr", required_argument, NULL, 'c'},
	    {"service-cidr", required_argument, NULL, 's'},
	    {"node-address", required_argument, NULL, 'a'},
	    {"nft", required_argument, NULL, 'n'},
	    {"once", no_argument, NULL, 'o'},
	    {"print", no_argument, NULL, 'P'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *mount = NULL;
	const char *addrs[PROXY_MAX_ADDRESSES];
	struct proxy_opts o = {.node_addresses = addrs};
	bool once = false, print = false;
	int c;

	log_set_ident("proxy-run");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mount = optarg;
			break;
		case 't':
			o.table = optarg;
			break;
		case 'b':
			o.bridge = optarg;
			break;
		case 'p':
			o.pod_cidr = optarg;
			break;
		case 'c':
			o.cluster_cidr = optarg;
			break;
		case 's':
			o.service_cidr = optarg;
			break;
		case 'a':
			if (o.n_node_addresses == PROXY_MAX_ADDRESSES) {
				fprintf(stderr, "proxy-run: at most %d node addresses\n",
					PROXY_MAX_ADDRESSES);
				return 2;
			}
			addrs[o.n_node_addresses++] = optarg;
			break;
		case 'n':
			o.nft = optarg;
			break;
		case 'o':
			once = true;
			break;
		case 'P':
			print = true;
			break;
		case 'v':
			log_set_level(LOG_DEBUG);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!mount || !o.table || optind < argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	struct error *err = NULL;
	cleanup_loop struct loop *loop = loop_new(&err);
	if (!loop) {
		fprintf(stderr, "proxy-run: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	if (print)
		return print_only(loop, mount, &o);
	if (loop_on_signal(loop, SIGTERM, on_stop, NULL, &err) < 0 ||
	    loop_on_signal(loop, SIGINT, on_stop, NULL, &err) < 0) {
		fprintf(stderr, "proxy-run: %s\n", err->msg);
		error_free(err);
		return 1;
	}
	struct proxy *p = proxy_new(loop, mount, &o, &err);
	if (!p) {
		fprintf(stderr, "proxy-run: %s\n", err->msg);
		error_free(err);
		return 2;
	}
	int ret = 1;
	if (proxy_start(p, &err) < 0)
		goto out;
	if (once) {
		struct proxy_stats st;
		proxy_get_stats(p, &st);
		printf("render_us %llu apply_us %llu bytes %zu\n",
		       (unsigned long long)st.last_render_us, (unsigned long long)st.last_apply_us,
		       proxy_text(p) ? strlen(proxy_text(p)) : (size_t)0);
		proxy_keep_table(p); /* a --once run is for measuring and looking */
		ret = 0;
		goto out;
	}
	printf("ready\n");
	fflush(stdout);
	if (loop_run(loop, &err) < 0)
		goto out;
	ret = 0;
out:
	if (err) {
		log_error("%s", err->msg);
		error_free(err);
	}
	proxy_free(p);
	return ret;
}
