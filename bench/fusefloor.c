/*
 * fusefloor.c: the floor of bench/run.sh's read rows. A minimal FUSE
 * filesystem (low-level API, one loop thread, as corral-fs by default)
 * with one folder of N files of SIZE bytes, whose contents stay
 * in the page cache (keep_cache) and whose entries and attributes are
 * cached for an hour:
 * reading a file costs what any FUSE filesystem that opens files pays,
 * an open and a release, and nothing of corral-fs's own.
 *   fusefloor MOUNTPOINT N SIZE      (stays in front; SIGTERM unmounts)
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long floor_n;
static char *floor_text;
static size_t floor_size;

/* ino 1 is the folder; file i (0-based) is ino i + 2, "f<i>.yaml". */
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
		st->st_size = (off_t)floor_size;
	}
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	long i;
	char tail[8];
	if (parent != FUSE_ROOT_ID || sscanf(name, "f%ld%7s", &i, tail) != 2 ||
	    strcmp(tail, ".yaml") != 0 || i < 0 || i >= floor_n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct fuse_entry_param e = {.ino = (fuse_ino_t)i + 2, .generation = 1};
	floor_stat(e.ino, &e.attr);
	e.attr_timeout = e.entry_timeout = 3600.0;
	fuse_reply_entry(req, &e);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct stat st;
	floor_stat(ino, &st);
	fuse_reply_attr(req, &st, 3600.0);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	size_t o = (size_t)off < floor_size ? (size_t)off : floor_size;
	size_t n = floor_size - o < size ? floor_size - o : size;
	fuse_reply_buf(req, floor_text + o, n);
}

static void floor_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
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
		size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
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
    .open = floor_open,
    .read = floor_read,
    .release = floor_release,
    .readdir = floor_readdir,
};

int main(int argc, char **argv)
{
	if (argc != 4 || atol(argv[2]) <= 0 || atol(argv[3]) <= 0) {
		fprintf(stderr, "usage: fusefloor MOUNTPOINT N SIZE\n");
		return 2;
	}
	floor_n = atol(argv[2]);
	floor_size = (size_t)atol(argv[3]);
	floor_text = malloc(floor_size);
	if (!floor_text)
		return 1;
	memset(floor_text, 'x', floor_size);
	floor_text[floor_size - 1] = '\n';
	char *fargv[] = {argv[0], "-o", "fsname=fusefloor", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL);
	if (!se)
		return 1;
	int ret = 1;
	if (fuse_set_signal_handlers(se) == 0) {
		if (fuse_session_mount(se, argv[1]) == 0) {
			ret = fuse_session_loop(se) ? 1 : 0;
			fuse_session_unmount(se);
		}
		fuse_remove_signal_handlers(se);
	}
	fuse_session_destroy(se);
	free(floor_text);
	return ret;
}
