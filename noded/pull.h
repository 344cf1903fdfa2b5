/* pull.h: pulling images from OCI registries into the layer store
 * (layers.h), the kubelet's image manager's part in corral-noded.
 *
 * The registry client is skopeo (the one under podman and CRI-O): corral
 * asks it for the manifest (`skopeo inspect --raw`), picks linux/ARCH from
 * a manifest list or OCI index, asks for the config, and has it copy the
 * layer blobs it lacks into the store's OCI layout (`skopeo copy ...
 * oci:STORE:corral-pull`, which reuses the blobs already there). Corral then
 * checks every digest itself: the manifest against the reference's digest
 * or the index entry, the config and each layer blob against the manifest,
 * each unpacked layer against the config's diffID. Docker v2 schema 2 and
 * OCI manifests; schema 1 is refused.
 *
 * A pull is blocking work: corral-noded runs it in a worker process (a fork,
 * its pidfd on the loop) and one at a time, as the kubelet's serialized
 * pulls; asking for an image being pulled joins that pull. The same
 * pull_run() serves `corral-noded image pull`. */
#ifndef CORRAL_NODED_PULL_H
#define CORRAL_NODED_PULL_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "strv.h"

struct loop;

struct pull_opts {
	const char *store;	     /* STATE/images */
	const char *skopeo;	     /* the program; NULL: "skopeo" from PATH */
	const struct strv *insecure; /* HOST[:PORT] spoken to in plain HTTP */
	const struct strv *mirrors;  /* docker.io's mirrors, tried first */
	const char *auth_file;	     /* docker config.json credentials, or NULL */
	const char *state;	     /* STATE: whose containers use which image */
	int gc_high, gc_low;	     /* image GC thresholds, percent */
	long long gc_min_age_s;	     /* an image used this recently stays */
	uint64_t gc_period_ms;	     /* how often the agent's GC looks; 0: 5 min */
	const char *arch;	     /* NULL: this machine's, as Go names it */
	bool quiet;		     /* pull_run() prints no progress */
};

/* What a pull did. */
struct pull_report {
	char *name;	  /* normalized reference */
	char *digest;	  /* what the name resolved to */
	long long size;	  /* bytes, as pulled */
	bool fetched;	  /* false: already present, unchanged */
	uint64_t took_ms; /* the pull itself */
	char *image_id;	  /* "docker.io/library/nginx@sha256:..." */
};

void pull_report_clear(struct pull_report *r);

/* Pulls ref (any reference imageref_parse() takes) into the store, blocking.
 * auths: dockerconfigjson documents (a pod's imagePullSecrets), may be
 * NULL. always: ask the registry even when the image is present (the
 * Always policy; an unchanged image fetches nothing). */
int pull_run(const struct pull_opts *o, const char *ref, const struct strv *auths, bool always,
	     struct pull_report *out, struct error **err);

/* Takes a `docker save` tar or an OCI archive into the store, as name
 * (NULL: the name the archive carries), checked as a pull is. */
int pull_import(const struct pull_opts *o, const char *file, const char *name,
		struct pull_report *out, struct error **err);

/* The puller on corral-noded's loop. */
struct puller;

enum pull_state {
	PULL_RUNNING, /* queued or under way */
	PULL_OK,
	PULL_FAILED,
};

struct pull_result {
	enum pull_state state;
	char *message;		   /* PULL_FAILED: why */
	struct pull_report report; /* PULL_OK */
	uint64_t waited_ms;	   /* from the request to the end */
};

void pull_result_clear(struct pull_result *r);

/* o is copied. done(data) is called on the loop whenever a pull ends. */
struct puller *puller_new(struct loop *loop, const struct pull_opts *o, void (*done)(void *data),
			  void *data);
void puller_free(struct puller *p);
/* Asks for ref: a new pull, or the one of the same reference, options and
 * credentials queued or running. Returns its id (never 0). */
uint64_t puller_request(struct puller *p, const char *ref, const struct strv *auths, bool always);
/* The state of pull id; a finished pull is kept for PULL_KEEP_MS. -ENOENT
 * when id is unknown (forgotten). */
int puller_result(struct puller *p, uint64_t id, struct pull_result *out);
/* Runs the image GC in the worker, between pulls. */
void puller_gc(struct puller *p);

#define PULL_KEEP_MS 600000

/* Splits a "HOST:PORT,HOST" list of corral.conf into out. */
void pull_split_list(const char *s, struct strv *out);

/* `corral-noded image CMD ...` (corral image): pull REF, list, rm REF...,
 * prune. Prints to stdout, errors to stderr; returns the exit status. */
int pull_cli(const struct pull_opts *o, int argc, char **argv);

#endif
