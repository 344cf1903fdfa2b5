/* layers.h: the node's content-addressed image store (DESIGN.md, "Nodes
 * and pods"), under STATE/images/:
 *
 *   blobs/sha256/HEX     manifests' blobs as pulled (an OCI layout, which
 *                        is what skopeo writes into and reuses blobs from)
 *   layers/HEX/          a layer unpacked once, HEX its diffID (the SHA-256
 *                        of the uncompressed tar), OCI whiteouts turned into
 *                        overlayfs's: `.wh.NAME` a 0/0 character device
 *                        NAME, `.wh..wh..opq` trusted.overlay.opaque=y
 *   records/HEX.json     one image: its name, digests, ordered layers,
 *                        config, size, last use (HEX: SHA-256 of the name)
 *
 * An image's root is an overlay of its layers, the last one on top; two
 * images that share a layer share its folder. Nothing here knows of pods:
 * the garbage collector is told which images are in use. The functions
 * block (they run in the pull worker and in corral(8)'s commands). */
#ifndef CORRAL_NODED_LAYERS_H
#define CORRAL_NODED_LAYERS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "error.h"
#include "strv.h"

#define LAYERS_DIGEST_SIZE 72 /* "sha256:" + 64 hex + NUL */

/* One image of the store. */
struct layers_record {
	char *name;	    /* normalized reference: "docker.io/library/nginx:1.14.2" */
	char *digest;	    /* the manifest (or index) the name resolved to */
	char *manifest;	    /* the platform's manifest, = digest without an index */
	char *config;	    /* the config blob's digest */
	struct strv layers; /* diffIDs, base first */
	struct strv blobs;  /* the layers' blob digests, in the same order */
	long long size;	    /* bytes: config and layer blobs, as pulled */
	time_t pulled;
	time_t last_used;
	/* the image config's part that running it needs */
	struct strv entrypoint, cmd, env, ports;
	char *working_dir, *user; /* NULL: unset */
};

/* "sha256:HEX" of n bytes. */
void layers_sha256(const void *p, size_t n, char out[LAYERS_DIGEST_SIZE]);
/* "sha256:HEX" of a file's bytes. */
int layers_sha256_file(const char *path, char out[LAYERS_DIGEST_SIZE], struct error **err);

/* STATE/images/blobs/sha256/HEX, layers/HEX for digest "sha256:HEX". */
char *layers_blob_path(const char *store, const char *digest);
char *layers_layer_path(const char *store, const char *diffid);

/* Unpacks the layer blob (a tar, gzip'd, zstd'd or plain) into
 * layers/HEX of diffid, unless it is there: the blob must hash to
 * blob_digest (unless NULL) and the uncompressed bytes to diffid
 * (-EBADMSG otherwise, nothing kept). */
int layers_unpack(const char *store, const char *blob, const char *blob_digest, const char *diffid,
		  struct error **err);
/* Turns the OCI whiteouts under dir into overlayfs's (see above). */
int layers_whiteouts(const char *dir, struct error **err);

/* Records, by normalized name. read: -ENOENT when there is none. */
int layers_record_read(const char *store, const char *name, struct layers_record *out,
		       struct error **err);
int layers_record_write(const char *store, const struct layers_record *r, struct error **err);
int layers_record_remove(const char *store, const char *name, struct error **err);
/* Every record, sorted by name. */
int layers_record_list(const char *store, struct layers_record **out, size_t *n,
		       struct error **err);
void layers_record_clear(struct layers_record *r);
void layers_record_list_free(struct layers_record *v, size_t n);
/* Whether every layer of r is unpacked. */
bool layers_record_complete(const char *store, const struct layers_record *r);
/* Sets last_used to now. */
void layers_touch(const char *store, const char *name);

/* Removes the blobs and layers no record refers to; *freed: bytes. */
int layers_prune(const char *store, long long *freed, struct error **err);
/* The image file system's use of its capacity, in percent (statvfs). */
int layers_usage_percent(const char *store, int *percent, struct error **err);
/* The kubelet's image GC: when usage is at or above high percent, records
 * not named in in_use and not used for min_age_s go, least recently used
 * first, until usage is below low percent; their unshared layers with
 * them. *removed: how many. */
int layers_gc(const char *store, int high, int low, long long min_age_s, const struct strv *in_use,
	      int *removed, struct error **err);
/* The images the containers under STATE/nodes/ name (each container's
 * folder holds an "image" file, see nspawn.c), added to out. */
void layers_in_use(const char *state, struct strv *out);

#endif
