/*
 * fusefloor.c: the floors of bench/run.sh's read and write rows. A minimal
 * FUSE filesystem (low-level API, one loop thread, as corral-fs by
 * default) with one folder of files whose entries and attributes are
 * cached for an hour.
 *
 * Read floor: N files of SIZE bytes whose contents stay in the page cache
 * (keep_cache): reading a file costs what any FUSE filesystem that opens
 * files pays, an open and a release, and nothing of corral-fs's own.
 *   fusefloor MOUNTPOINT N SIZE      (stays in front; SIGTERM unmounts)
 *
 * Write floor (-w): files of any name are made and written; each close
 * (FLUSH) of a file written through its handle puts its bytes in an LMDB
 * database in DIR, one fully synced transaction per close, before it is
 * answered: what any FUSE filesystem that makes each close durable pays,
 * and nothing of corral-fs's own (no parse, no history, no group commit).
 *   fusefloor -w DIR MOUNTPOINT
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_NAMES_MAX (1 << 20) /* write floor: files at most */

struct floor_file {
	char *name; /* write floor: its name; read floor: NULL ("f<i>.yaml") */
	char *data; /* write floor: its last closed bytes */
	size_t len;
};

/* A writer's bytes until its close. */
struct floor_handle {
	char *buf;
	size_t len, cap;
	int dirty;
};

static long floor_n;		       /* files; ino i + 2 is file i */
static struct floor_file *floor_files; /* write floor */
static long *floor_slots;	       /* write floor: name hash -> file index + 1 */
static char *floor_text;	       /* read floor: every file's bytes */
static size_t floor_size;
static MDB_env *floor_env; /* write floor: NULL for the read floor */
static MDB_dbi floor_dbi;

static size_t floor_hash(const char *s)
{
	size_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h & (FLOOR_NAMES_MAX * 2 - 1);
}

/* The index of the file named name (made if make), or -1. */
static long floor_find(const char *name, int make)
{
	size_t h = floor_hash(name);
	while (floor_slots[h]) {
		long i = floor_slots[h] - 1;
		if (strcmp(floor_files[i].name, name) == 0)
			return i;
		h = (h + 1) & (FLOOR_NAMES_MAX * 2 - 1);
	}
	if (!make || floor_n >= FLOOR_NAMES_MAX)
		return -1;
	floor_files[floor_n].name = strdup(name);
	floor_slots[h] = floor_n + 1;
	return floor_n++;
}

static void floor_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t)(floor_env ? floor_files[ino - 2].len : floor_size);
	}
}

static void floor_entry(fuse_req_t req, long i)
{
	struct fuse_entry_param e = {.ino = (fuse_ino_t)i + 2, .generation = 1};
	floor_stat(e.ino, &e.attr);
	e.attr_timeout = e.entry_timeout = 3600.0;
	fuse_reply_entry(req, &e);
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	long i = -1;
	char tail[8];
	if (parent != FUSE_ROOT_ID)
		i = -1;
	else if (floor_env)
		i = floor_find(name, 0);
	else if (sscanf(name, "f%ld%7s", &i, tail) != 2 || strcmp(tail, ".yaml") != 0 ||
		 i >= floor_n)
		i = -1;
	if (i < 0)
		fuse_reply_err(req, ENOENT);
	else
		floor_entry(req, i);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct stat st;
	floor_stat(ino, &st);
	fuse_reply_attr(req, &st, 3600.0);
}

static struct floor_handle *floor_handle_of(const struct fuse_file_info *fi)
{
	return (struct floor_handle *)(uintptr_t)fi->fh;
}

/* Sets a writer's handle on fi (O_TRUNC: it starts empty, else with the
 * file's bytes); readers have none. */
static void floor_handle_open(fuse_ino_t ino, struct fuse_file_info *fi)
{
	fi->fh = 0;
	if (!floor_env || (fi->flags & O_ACCMODE) == O_RDONLY)
		return;
	struct floor_handle *h = calloc(1, sizeof(*h));
	const struct floor_file *f = &floor_files[ino - 2];
	if (h && !(fi->flags & O_TRUNC) && f->len) {
		h->buf = malloc(f->len);
		if (h->buf) {
			memcpy(h->buf, f->data, f->len);
			h->len = h->cap = f->len;
		}
	}
	fi->fh = (uintptr_t)h;
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fi->keep_cache = 1;
	fi->noflush = !floor_env;
	floor_handle_open(ino, fi);
	fuse_reply_open(req, fi);
}

static void floor_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			 struct fuse_file_info *fi)
{
	(void)mode;
	long i = parent == FUSE_ROOT_ID && floor_env ? floor_find(name, 1) : -1;
	if (i < 0) {
		fuse_reply_err(req, floor_env ? ENOSPC : EROFS);
		return;
	}
	struct fuse_entry_param e = {.ino = (fuse_ino_t)i + 2, .generation = 1};
	floor_stat(e.ino, &e.attr);
	e.attr_timeout = e.entry_timeout = 3600.0;
	floor_handle_open(e.ino, fi);
	fuse_reply_create(req, &e, fi);
}

static void floor_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			  struct fuse_file_info *fi)
{
	struct floor_handle *h = fi ? floor_handle_of(fi) : NULL;
	if ((to_set & FUSE_SET_ATTR_SIZE) && h && (size_t)attr->st_size <= h->len) {
		h->len = (size_t)attr->st_size;
		h->dirty = 1;
	}
	struct stat st;
	floor_stat(ino, &st);
	if (h)
		st.st_size = (off_t)h->len;
	fuse_reply_attr(req, &st, 3600.0);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	const char *text = floor_env ? floor_files[ino - 2].data : floor_text;
	size_t len = floor_env ? floor_files[ino - 2].len : floor_size;
	size_t o = (size_t)off < len ? (size_t)off : len;
	size_t n = len - o < size ? len - o : size;
	fuse_reply_buf(req, text + o, n);
}

static void floor_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	(void)ino;
	struct floor_handle *h = floor_handle_of(fi);
	size_t end = (size_t)off + size;
	if (!h || off < 0 || end > (64u << 20)) {
		fuse_reply_err(req, h ? EFBIG : EBADF);
		return;
	}
	if (end > h->cap) {
		char *b = realloc(h->buf, end);
		if (!b) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		h->buf = b;
		h->cap = end;
	}
	if ((size_t)off > h->len)
		memset(h->buf + h->len, 0, (size_t)off - h->len);
	memcpy(h->buf + off, buf, size);
	if (end > h->len)
		h->len = end;
	h->dirty = 1;
	fuse_reply_write(req, size);
}

/* A close: the handle's bytes become the file's, in one synced LMDB
 * transaction, before the answer. */
static void floor_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct floor_handle *h = floor_handle_of(fi);
	if (!h || !h->dirty) {
		fuse_reply_err(req, 0);
		return;
	}
	struct floor_file *f = &floor_files[ino - 2];
	MDB_txn *txn;
	MDB_val k = {strlen(f->name), f->name}, v = {h->len, h->buf};
	if (mdb_txn_begin(floor_env, NULL, 0, &txn) != 0) {
		fuse_reply_err(req, EIO);
		return;
	}
	if (mdb_put(txn, floor_dbi, &k, &v, 0) != 0 || mdb_txn_commit(txn) != 0) {
		mdb_txn_abort(txn);
		fuse_reply_err(req, EIO);
		return;
	}
	char *copy = malloc(h->len ? h->len : 1);
	if (copy) {
		memcpy(copy, h->buf, h->len);
		free(f->data);
		f->data = copy;
		f->len = h->len;
	}
	h->dirty = 0;
	fuse_reply_err(req, 0);
}

static void floor_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct floor_handle *h = floor_handle_of(fi);
	if (h) {
		free(h->buf);
		free(h);
	}
	fuse_reply_err(req, 0);
}

static void floor_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	char *buf = malloc(size);
	size_t used = 0;
	for (long i = off; buf && i < floor_n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%ld.yaml", i);
		struct stat st = {.st_ino = (ino_t)i + 2, .st_mode = S_IFREG};
		size_t need = fuse_add_direntry(req, buf + used, size - used,
						floor_env ? floor_files[i].name : name, &st, i + 1);
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static const struct fuse_lowlevel_ops floor_ops = {
    .lookup = floor_lookup,
    .getattr = floor_getattr,
    .setattr = floor_setattr,
    .open = floor_open,
    .create = floor_create,
    .read = floor_read,
    .write = floor_write,
    .flush = floor_flush,
    .release = floor_release,
    .readdir = floor_readdir,
};

/* The write floor's database in dir, with LMDB's default (fully synced)
 * commits, as bench/lmdbbase's. */
static int floor_open_db(const char *dir)
{
	MDB_txn *txn;
	floor_files = calloc(FLOOR_NAMES_MAX, sizeof(*floor_files));
	floor_slots = calloc(FLOOR_NAMES_MAX * 2, sizeof(*floor_slots));
	if (!floor_files || !floor_slots || mdb_env_create(&floor_env) ||
	    mdb_env_set_mapsize(floor_env, 1UL << 30) || mdb_env_open(floor_env, dir, 0, 0600) ||
	    mdb_txn_begin(floor_env, NULL, 0, &txn)) {
		fprintf(stderr, "fusefloor: cannot open an LMDB database in %s\n", dir);
		return -1;
	}
	if (mdb_dbi_open(txn, NULL, 0, &floor_dbi) || mdb_txn_commit(txn))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mnt;
	if (argc == 4 && strcmp(argv[1], "-w") == 0) {
		if (floor_open_db(argv[2]) < 0)
			return 1;
		mnt = argv[3];
	} else if (argc == 4 && atol(argv[2]) > 0 && atol(argv[3]) > 0) {
		floor_n = atol(argv[2]);
		floor_size = (size_t)atol(argv[3]);
		floor_text = malloc(floor_size);
		if (!floor_text)
			return 1;
		memset(floor_text, 'x', floor_size);
		floor_text[floor_size - 1] = '\n';
		mnt = argv[1];
	} else {
		fprintf(stderr, "usage: fusefloor MOUNTPOINT N SIZE\n"
				"       fusefloor -w LMDBDIR MOUNTPOINT\n");
		return 2;
	}
	char *fargv[] = {argv[0], "-o", "fsname=fusefloor", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL);
	if (!se)
		return 1;
	int ret = 1;
	if (fuse_set_signal_handlers(se) == 0) {
		if (fuse_session_mount(se, mnt) == 0) {
			ret = fuse_session_loop(se) ? 1 : 0;
			fuse_session_unmount(se);
		}
		fuse_remove_signal_handlers(se);
	}
	fuse_session_destroy(se);
	if (floor_env)
		mdb_env_close(floor_env);
	free(floor_text);
	return ret;
}
