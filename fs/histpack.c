/* histpack.c: see histpack.h. The formats are git's pack and index,
 * version 2 (gitformat-pack(5)): a pack is "PACK", its version and object
 * count, each object as a type-and-size header and its zlib stream, then
 * the SHA-1 of all that; the index has a fan-out table over the first byte
 * of the sorted names, the names, each packed object's CRC-32, its offset
 * (offsets beyond 2 GiB in a table of their own), the pack's checksum and
 * its own. This file must never move a ref or read the rest of the
 * repository. */
#include "histpack.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HISTPACK_ZLIB_LEVEL 1 /* Z_BEST_SPEED: the repack compresses again */
#define HISTPACK_SHA1_LEN   20

struct histpack__obj {
	git_oid id;
	git_object_t type;
	size_t len;
	char *data;
};

struct histpack {
	git_odb_backend parent; /* first: libgit2 calls us through it */
	char *dir;		/* objects/pack */
	struct histpack__obj *objs;
	size_t n, cap;
	uint32_t *slots; /* open addressing over objs: index + 1, 0 free */
	size_t nslots;	 /* a power of two, at least twice n */
};

struct histpack__buf {
	unsigned char *p;
	size_t len, cap;
};

static void histpack__buf_room(struct histpack__buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	b->cap = (b->len + more) * 2;
	b->p = xrealloc(b->p, b->cap);
}

static void histpack__buf_put(struct histpack__buf *b, const void *data, size_t len)
{
	histpack__buf_room(b, len);
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void histpack__buf_be32(struct histpack__buf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	histpack__buf_put(b, x, sizeof(x));
}

static void histpack__sha1(const void *data, size_t len, unsigned char out[HISTPACK_SHA1_LEN])
{
	EVP_Digest(data, len, out, NULL, EVP_sha1(), NULL);
}

static size_t histpack__slot(const struct histpack *p, const git_oid *id)
{
	uint32_t h;
	memcpy(&h, id->id, sizeof(h));
	return h & (p->nslots - 1);
}

/* The kept object id, or NULL. */
static struct histpack__obj *histpack__find(const struct histpack *p, const git_oid *id)
{
	if (!p->nslots)
		return NULL;
	for (size_t i = histpack__slot(p, id);; i = (i + 1) & (p->nslots - 1)) {
		if (!p->slots[i])
			return NULL;
		struct histpack__obj *o = &p->objs[p->slots[i] - 1];
		if (git_oid_equal(&o->id, id))
			return o;
	}
}

static void histpack__index(struct histpack *p, size_t k)
{
	size_t i = histpack__slot(p, &p->objs[k].id);
	while (p->slots[i])
		i = (i + 1) & (p->nslots - 1);
	p->slots[i] = (uint32_t)(k + 1);
}

static void histpack__keep(struct histpack *p, const git_oid *id, git_object_t type,
			   const void *data, size_t len)
{
	if (histpack__find(p, id))
		return; /* the same content twice in one commit: once in the pack */
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->objs = xrealloc(p->objs, p->cap * sizeof(*p->objs));
	}
	if (2 * (p->n + 1) > p->nslots) {
		free(p->slots);
		p->nslots = p->nslots ? p->nslots * 2 : 128;
		p->slots = xcalloc(p->nslots, sizeof(*p->slots));
		for (size_t k = 0; k < p->n; k++)
			histpack__index(p, k);
	}
	struct histpack__obj *o = &p->objs[p->n];
	git_oid_cpy(&o->id, id);
	o->type = type;
	o->len = len;
	o->data = xmalloc(len ? len : 1);
	memcpy(o->data, data, len);
	histpack__index(p, p->n++);
}

void histpack_reset(struct histpack *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->objs[i].data);
	p->n = 0;
	if (p->slots)
		memset(p->slots, 0, p->nslots * sizeof(*p->slots));
}

size_t histpack_count(const struct histpack *p)
{
	return p->n;
}

void histpack_add(struct histpack *p, git_oid *id, git_object_t type, const void *data, size_t len)
{
	git_odb_hash(id, data, len, type);
	histpack__keep(p, id, type, data, len);
}

/* ---- the backend ---- */

static int histpack__read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
			  const git_oid *id)
{
	struct histpack__obj *o = histpack__find((struct histpack *)be, id);
	if (!o)
		return GIT_ENOTFOUND;
	*data = git_odb_backend_data_alloc(be, o->len);
	if (!*data)
		return -1;
	memcpy(*data, o->data, o->len);
	*len = o->len;
	*type = o->type;
	return 0;
}

static int histpack__read_header(size_t *len, git_object_t *type, git_odb_backend *be,
				 const git_oid *id)
{
	struct histpack__obj *o = histpack__find((struct histpack *)be, id);
	if (!o)
		return GIT_ENOTFOUND;
	*len = o->len;
	*type = o->type;
	return 0;
}

static int histpack__write_cb(git_odb_backend *be, const git_oid *id, const void *data, size_t len,
			      git_object_t type)
{
	histpack__keep((struct histpack *)be, id, type, data, len);
	return 0;
}

static int histpack__exists(git_odb_backend *be, const git_oid *id)
{
	return histpack__find((struct histpack *)be, id) != NULL;
}

static void histpack__free(git_odb_backend *be)
{
	struct histpack *p = (struct histpack *)be;
	histpack_reset(p);
	free(p->objs);
	free(p->slots);
	free(p->dir);
	free(p);
}

struct histpack *histpack_new(const char *objects_dir)
{
	struct histpack *p = xcalloc(1, sizeof(*p));
	git_odb_init_backend(&p->parent, GIT_ODB_BACKEND_VERSION);
	p->parent.read = histpack__read;
	p->parent.read_header = histpack__read_header;
	p->parent.write = histpack__write_cb;
	p->parent.exists = histpack__exists;
	p->parent.free = histpack__free;
	p->dir = xasprintf("%s/pack", objects_dir);
	return p;
}

git_odb_backend *histpack_backend(struct histpack *p)
{
	return &p->parent;
}

/* ---- the pack and its index ---- */

/* An object's header in a pack: its type, then its size, 4 bits and then
 * 7 bits a byte, each byte but the last with its top bit set. */
static size_t histpack__obj_header(unsigned char *out, git_object_t type, size_t len)
{
	size_t n = 0;
	unsigned char c = (unsigned char)(((unsigned)type << 4) | (len & 0x0f));
	for (len >>= 4; len; len >>= 7) {
		out[n++] = c | 0x80;
		c = (unsigned char)(len & 0x7f);
	}
	out[n++] = c;
	return n;
}

static int histpack__cmp_id(const void *a, const void *b, void *arg)
{
	const struct histpack__obj *objs = arg;
	return git_oid_cmp(&objs[*(const uint32_t *)a].id, &objs[*(const uint32_t *)b].id);
}

/* The pack of every kept object; offsets[i] and crcs[i] for objs[i]. */
static void histpack__pack(const struct histpack *p, struct histpack__buf *pack, uint64_t *offsets,
			   uint32_t *crcs)
{
	histpack__buf_put(pack, "PACK", 4);
	histpack__buf_be32(pack, 2);
	histpack__buf_be32(pack, (uint32_t)p->n);
	for (size_t i = 0; i < p->n; i++) {
		const struct histpack__obj *o = &p->objs[i];
		unsigned char hdr[16];
		size_t hl = histpack__obj_header(hdr, o->type, o->len);
		uLongf zlen = compressBound((uLong)o->len);
		histpack__buf_room(pack, hl + zlen + HISTPACK_SHA1_LEN);
		offsets[i] = pack->len;
		histpack__buf_put(pack, hdr, hl);
		/* Into memory of compressBound's size: it cannot fail. */
		compress2(pack->p + pack->len, &zlen, (const Bytef *)o->data, (uLong)o->len,
			  HISTPACK_ZLIB_LEVEL);
		pack->len += zlen;
		crcs[i] = (uint32_t)crc32(0, pack->p + offsets[i], (uInt)(pack->len - offsets[i]));
	}
	unsigned char sum[HISTPACK_SHA1_LEN];
	histpack__sha1(pack->p, pack->len, sum);
	histpack__buf_put(pack, sum, sizeof(sum));
}

/* The index of the pack just made (its checksum ends it). */
static void histpack__idx(const struct histpack *p, const struct histpack__buf *pack,
			  const uint64_t *offsets, const uint32_t *crcs, struct histpack__buf *idx)
{
	uint32_t *order = xmalloc(p->n * sizeof(*order));
	for (size_t i = 0; i < p->n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, p->n, sizeof(*order), histpack__cmp_id, p->objs);
	static const unsigned char magic[4] = {0xff, 't', 'O', 'c'};
	histpack__buf_put(idx, magic, sizeof(magic));
	histpack__buf_be32(idx, 2);
	size_t k = 0;
	for (unsigned b = 0; b < 256; b++) {
		while (k < p->n && p->objs[order[k]].id.id[0] <= b)
			k++;
		histpack__buf_be32(idx, (uint32_t)k);
	}
	for (size_t i = 0; i < p->n; i++)
		histpack__buf_put(idx, p->objs[order[i]].id.id, GIT_OID_RAWSZ);
	for (size_t i = 0; i < p->n; i++)
		histpack__buf_be32(idx, crcs[order[i]]);
	uint32_t large = 0;
	for (size_t i = 0; i < p->n; i++) {
		uint64_t off = offsets[order[i]];
		histpack__buf_be32(idx, off < 0x80000000u ? (uint32_t)off : 0x80000000u | large++);
	}
	for (size_t i = 0; i < p->n; i++) {
		uint64_t off = offsets[order[i]];
		if (off >= 0x80000000u) {
			histpack__buf_be32(idx, (uint32_t)(off >> 32));
			histpack__buf_be32(idx, (uint32_t)off);
		}
	}
	histpack__buf_put(idx, pack->p + pack->len - HISTPACK_SHA1_LEN, HISTPACK_SHA1_LEN);
	unsigned char sum[HISTPACK_SHA1_LEN];
	histpack__sha1(idx->p, idx->len, sum);
	histpack__buf_put(idx, sum, sizeof(sum));
	free(order);
}

/* Writes data into a new temporary file of dir, read-only as git makes
 * its packs; its name in *tmp. */
static int histpack__file(const char *dir, const struct histpack__buf *data, char **tmp,
			  struct error **err)
{
	*tmp = xasprintf("%s/tmp_corral_XXXXXX", dir);
	cleanup_close int fd = mkstemp(*tmp);
	if (fd < 0)
		return error_set(err, errno, "history: %s: %s", *tmp, strerror(errno));
	for (size_t off = 0; off < data->len;) {
		ssize_t w = write(fd, data->p + off, data->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			unlink(*tmp);
			return error_set(err, e, "history: writing %s: %s", *tmp, strerror(e));
		}
		off += (size_t)w;
	}
	fchmod(fd, 0444);
	/* On disk before its name is: the outbox is trimmed after HEAD moves. */
	if (fdatasync(fd) < 0) {
		int e = errno;
		unlink(*tmp);
		return error_set(err, e, "history: syncing %s: %s", *tmp, strerror(e));
	}
	return 0;
}

/* Makes the names placed in dir durable. */
static int histpack__sync_dir(const char *dir, struct error **err)
{
	cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		return error_set(err, errno, "history: syncing %s: %s", dir, strerror(errno));
	return 0;
}

int histpack_write(struct histpack *p, struct error **err)
{
	if (p->n == 0)
		return 0;
	struct histpack__buf pack = {0}, idx = {0};
	uint64_t *offsets = xmalloc(p->n * sizeof(*offsets));
	uint32_t *crcs = xmalloc(p->n * sizeof(*crcs));
	histpack__pack(p, &pack, offsets, crcs);
	histpack__idx(p, &pack, offsets, crcs, &idx);
	char hex[GIT_OID_HEXSZ + 1];
	git_oid sum;
	git_oid_fromraw(&sum, pack.p + pack.len - HISTPACK_SHA1_LEN);
	git_oid_tostr(hex, sizeof(hex), &sum);
	cleanup_free char *pack_tmp = NULL;
	cleanup_free char *idx_tmp = NULL;
	cleanup_free char *pack_path = xasprintf("%s/pack-%s.pack", p->dir, hex);
	cleanup_free char *idx_path = xasprintf("%s/pack-%s.idx", p->dir, hex);
	int r = histpack__file(p->dir, &pack, &pack_tmp, err);
	if (r == 0 && (r = histpack__file(p->dir, &idx, &idx_tmp, err)) < 0)
		unlink(pack_tmp);
	/* The pack first: its index makes it seen. */
	if (r == 0 && (rename(pack_tmp, pack_path) < 0 || rename(idx_tmp, idx_path) < 0)) {
		r = error_set(err, errno, "history: cannot place %s: %s", pack_path,
			      strerror(errno));
		unlink(pack_tmp);
		unlink(idx_tmp);
	}
	if (r == 0)
		r = histpack__sync_dir(p->dir, err);
	free(pack.p);
	free(idx.p);
	free(offsets);
	free(crcs);
	histpack_reset(p);
	return r;
}
