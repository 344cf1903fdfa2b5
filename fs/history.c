/* history.c: the history writer (outbox -> git commits) over libgit2.
 *
 * Only the writer thread touches the repository after start, except
 * history_foreach_head(), which is called before start. It never writes to
 * the live store except to trim the outbox after a commit.
 *
 * A commit that fails (a full disk) loses nothing: the outbox keeps every
 * change until HEAD holds it, libgit2 writes objects and refs through
 * temporary files, and the writer tries again each second, from HEAD's
 * revision, until it catches up.
 *
 * It is cheap by design, since it shares two cores with the writers it
 * follows: it runs niced (a burst of writes goes first; the history
 * catches up after it, in fewer and larger commits), writes each commit's
 * new objects as one pack (histpack.h: two files per commit, where loose
 * objects cost a file each, whose inode allocation was most of the
 * writer's cost) at zlib's fastest level (the repack compresses again),
 * keeps each blob without libgit2's look for an existing copy (which
 * rescans the packs for every new object), and libgit2 neither checks
 * that a new tree's entries exist nor hashes again what it reads. HEAD
 * moves only once the pack is in place, so a writer killed at any point
 * leaves HEAD on objects that exist. */
#include "history.h"
#include "histpack.h"
#include "log.h"
#include "snapshot.h"
#include "util.h"

#include <errno.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_BATCH		  4096 /* outbox entries per commit at most */
#define HISTORY_REPACK_EVERY	  64   /* commits (packs) between incremental repacks */
#define HISTORY_FULL_REPACK_EVERY 8    /* incremental repacks between full ones */
#define HISTORY_IDLE_REPACK	  32   /* commits that make an idle writer repack */
#define HISTORY_BACKLOG		  64   /* pending changes beyond which a file's changes merge */
#define HISTORY_GATHER_MS	  50   /* least pause between commits under load */
#define HISTORY_GATHER_SHARE	  10   /* a pause of 10 times what the commit took... */
#define HISTORY_GATHER_MAX_MS	  500  /* ...up to this */
#define HISTORY_QUIET_MS	  20   /* no change for this long: the pause ends */
#define HISTORY_NICE		  10   /* the writer's nice value, and its repack's */

struct history {
	git_repository *repo;
	struct histpack *pack; /* new objects until their commit's pack (its odb owns it) */
	char *gitdir;
	struct store *store;
	pthread_t thread;
	bool started;
	volatile bool stop;
	pthread_mutex_t lock;
	uint64_t rev; /* reached by HEAD; under lock */
	unsigned commits_since_repack;
	unsigned repacks;
	bool seed; /* an empty repository over a store with objects: the first
		      commit is a snapshot (history__seed) */
};

extern char **environ;

static int history__git_err(struct error **err, const char *what)
{
	const git_error *e = git_error_last();
	return error_set(err, EIO, "history: %s: %s", what,
			 e && e->message ? e->message : "failed");
}

static uint64_t history__trailer_rev(const char *msg)
{
	const char *p = msg ? strstr(msg, "\nCorral-Revision: ") : NULL;
	return p ? strtoull(p + strlen("\nCorral-Revision: "), NULL, 10) : 0;
}

/* A writer killed while it moved a ref (kill -9 in the middle of a commit)
 * leaves the ref's lock file behind, and libgit2 then refuses every later
 * commit. corral-fs is its history's only writer (DESIGN.md): a lock found
 * at open is a dead writer's. */
static void history__drop_stale_locks(struct history *h)
{
	const char *target = NULL;
	git_reference *head = NULL;
	if (git_reference_lookup(&head, h->repo, "HEAD") == 0 &&
	    git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
		target = git_reference_symbolic_target(head);
	const char *const refs[] = {"HEAD", "packed-refs", target};
	for (size_t i = 0; i < sizeof(refs) / sizeof(*refs); i++) {
		if (!refs[i])
			continue;
		cleanup_free char *path = xasprintf("%s/%s.lock", h->gitdir, refs[i]);
		if (unlink(path) == 0)
			log_warn("history: removed %s, left by a writer that died", path);
	}
	git_reference_free(head);
}

/* Gives the repository an object database of packs and loose objects
 * (those of a repository an older corral-fs wrote) to read, and of
 * h->pack, which takes every new object. */
static int history__odb(struct history *h, struct error **err)
{
	cleanup_free char *dir = xasprintf("%s/objects", h->gitdir);
	git_odb *odb = NULL;
	git_odb_backend *pack = NULL, *loose = NULL;
	if (git_odb_new(&odb) < 0 || git_odb_backend_pack(&pack, dir) < 0 ||
	    git_odb_add_backend(odb, pack, 2) < 0) {
		if (pack && odb)
			pack->free(pack);
		git_odb_free(odb);
		return history__git_err(err, dir);
	}
	if (git_odb_backend_loose(&loose, dir, -1, 0, 0, 0) < 0 ||
	    git_odb_add_backend(odb, loose, 1) < 0) {
		if (loose)
			loose->free(loose);
		git_odb_free(odb);
		return history__git_err(err, dir);
	}
	struct histpack *mine = histpack_new(dir);
	if (git_odb_add_backend(odb, histpack_backend(mine), 3) < 0) {
		histpack_backend(mine)->free(histpack_backend(mine));
		git_odb_free(odb);
		return history__git_err(err, dir);
	}
	git_repository_set_odb(h->repo, odb);
	git_odb_free(odb); /* the repository holds it */
	h->pack = mine;
	return 0;
}

/* A blob kept for the commit's pack (see the top). */
static void history__blob(struct history *h, git_oid *id, const char *text)
{
	histpack_add(h->pack, id, GIT_OBJECT_BLOB, text, strlen(text));
}

/* Writes the commit's pack, then moves HEAD (the branch it names) to id. */
static int history__publish(struct history *h, const git_oid *id, struct error **err)
{
	if (histpack_write(h->pack, err) < 0)
		return -EIO;
	git_odb *odb;
	if (git_repository_odb(&odb, h->repo) == 0) {
		git_odb_refresh(odb); /* the new pack, before the objects leave memory */
		git_odb_free(odb);
	}
	git_reference *head = NULL, *ref = NULL;
	const char *name = "HEAD";
	if (git_reference_lookup(&head, h->repo, "HEAD") == 0 &&
	    git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
		name = git_reference_symbolic_target(head);
	int r = git_reference_create(&ref, h->repo, name, id, 1, "commit") < 0
		    ? history__git_err(err, "HEAD")
		    : 0;
	git_reference_free(ref);
	git_reference_free(head);
	return r;
}

int history_open(const char *gitdir, struct store *store, struct history **out, struct error **err)
{
	git_libgit2_init();
	/* Keep libgit2's object cache small: corral-fs has an RSS budget. */
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)(8 << 20));
	/* Only this file writes the repository, and only objects it has just
	 * made: no existence checks of tree entries, no hashing on reads. */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/* The ref a commit moves is synced (file and folder) before the
	 * outbox entries it holds are trimmed: a power loss loses none. */
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
	struct history *h = xcalloc(1, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	h->store = store;
	h->gitdir = xstrdup(gitdir);
	if (git_repository_open_bare(&h->repo, gitdir) < 0) {
		git_repository_init_options opts;
		git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
		opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
		opts.initial_head = "main";
		opts.description = "corral: the declared cluster state";
		if (git_repository_init_ext(&h->repo, gitdir, &opts) < 0) {
			int r = history__git_err(err, gitdir);
			history_close(h);
			return r;
		}
		git_config *cfg = NULL;
		if (git_repository_config(&cfg, h->repo) == 0) {
			/* corral packs the repository itself. */
			git_config_set_int32(cfg, "gc.auto", 0);
			git_config_free(cfg);
		}
	}
	if (history__odb(h, err) < 0) {
		history_close(h);
		return -EIO;
	}
	/* The history holds Secrets: only root may read it. */
	chmod(gitdir, 0700);
	history__drop_stale_locks(h);
	git_commit *head = NULL;
	git_oid oid;
	if (git_reference_name_to_id(&oid, h->repo, "HEAD") == 0 &&
	    git_commit_lookup(&head, h->repo, &oid) == 0) {
		h->rev = history__trailer_rev(git_commit_message(head));
		git_commit_free(head);
	} else {
		h->seed = !store_is_empty(store);
	}
	/* What HEAD already holds never needs committing again. A trim that
	 * fails (a full disk) waits for the writer's next one: entries HEAD
	 * holds are skipped by revision anyway. */
	struct error *terr = NULL;
	if (h->rev > 0 && store_outbox_trim(store, h->rev, &terr) < 0)
		log_warn("history: outbox not trimmed at start: %s", terr->msg);
	error_free(terr);
	*out = h;
	return 0;
}

uint64_t history_revision(struct history *h)
{
	pthread_mutex_lock(&h->lock);
	uint64_t r = h->rev;
	pthread_mutex_unlock(&h->lock);
	return r;
}

static int history__signature(git_signature **sig, const char *who, int64_t when_ns)
{
	/* who is "Name <email>"; anything else is taken as a name. */
	cleanup_free char *name = NULL;
	cleanup_free char *email = NULL;
	const char *lt = strchr(who, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	if (lt && gt) {
		size_t nl = (size_t)(lt - who);
		while (nl > 0 && who[nl - 1] == ' ')
			nl--;
		name = xstrndup(who, nl);
		email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
	} else {
		name = xstrdup(who);
		email = xasprintf("%s@localhost", who);
	}
	if (!*name) {
		free(name);
		name = xstrdup("unknown");
	}
	return git_signature_new(sig, name, email, (git_time_t)(when_ns / 1000000000), 0);
}

static void history__repack(struct history *h)
{
	const char *full[] = {"git",	"--git-dir", h->gitdir, "-c", "pack.threads=1",
			      "repack", "-a",	     "-d",	"-q", NULL};
	/* Each commit leaves a small pack: the incremental repack rolls the
	 * small ones up into one, so that the packs keep a geometric
	 * progression of sizes (few of them, the large ones left alone). */
	const char *incr[] = {"git",	"--git-dir", h->gitdir,	      "-c", "pack.threads=1",
			      "repack", "-d",	     "--geometric=2", "-q", NULL};
	bool all = ++h->repacks % HISTORY_FULL_REPACK_EVERY == 0;
	pid_t pid;
	if (posix_spawnp(&pid, "git", NULL, NULL, (char **)(all ? full : incr), environ) != 0) {
		log_warn("history: cannot run git repack");
		return;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		log_warn("history: git repack failed");
	/* A new object database over the packs there are now: libgit2 never
	 * lets go of a pack it has loaded (its index stays mapped, its file
	 * open), so the old one would keep every pack the repack removed,
	 * one per commit (h->pack is empty between commits). */
	struct error *err = NULL;
	if (history__odb(h, &err) < 0) {
		log_warn("%s", err->msg);
		error_free(err);
	}
}

/* Outbox entries by path, the later (higher revision) first. */
static int history__entry_cmp(const void *a, const void *b)
{
	const struct store_outbox_entry *x = *(const struct store_outbox_entry *const *)a;
	const struct store_outbox_entry *y = *(const struct store_outbox_entry *const *)b;
	int c = strcmp(x->path, y->path);
	return c ? c : x->rv < y->rv ? 1 : x->rv > y->rv ? -1 : 0;
}

/* Writes one commit holding entries e[0..n), with message (NULL: one
 * made from theirs). */
static int history__commit(struct history *h, struct store_outbox_entry *e, size_t n,
			   const char *message, struct error **err)
{
	git_oid head_oid, tree_oid, commit_oid;
	git_commit *parent = NULL;
	git_tree *base = NULL, *tree = NULL;
	git_signature *author = NULL, *committer = NULL;
	git_tree_update *up = xcalloc(n, sizeof(*up));
	const struct store_outbox_entry **order = NULL;
	size_t nup = 0;
	int r = -EIO;
	char *msg = NULL;

	if (git_reference_name_to_id(&head_oid, h->repo, "HEAD") == 0) {
		if (git_commit_lookup(&parent, h->repo, &head_oid) < 0 ||
		    git_commit_tree(&base, parent) < 0) {
			history__git_err(err, "HEAD");
			goto out;
		}
	} else {
		git_treebuilder *tb;
		git_oid empty;
		if (git_treebuilder_new(&tb, h->repo, NULL) < 0 ||
		    git_treebuilder_write(&empty, tb) < 0 ||
		    git_tree_lookup(&base, h->repo, &empty) < 0) {
			history__git_err(err, "empty tree");
			goto out;
		}
		git_treebuilder_free(tb);
	}
	/* The last change of each path wins (the entries sorted by path, the
	 * later first); removals of paths the tree does not hold are dropped
	 * (libgit2 refuses them). */
	order = xcalloc(n, sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = &e[i];
	qsort(order, n, sizeof(*order), history__entry_cmp);
	for (size_t k = 0; k < n; k++) {
		const struct store_outbox_entry *x = order[k];
		if (k > 0 && strcmp(order[k - 1]->path, x->path) == 0)
			continue;
		size_t i = (size_t)(x - e);
		if (e[i].yaml) {
			history__blob(h, &up[nup].id, e[i].yaml);
			up[nup].action = GIT_TREE_UPDATE_UPSERT;
			up[nup].filemode = GIT_FILEMODE_BLOB;
		} else {
			git_tree_entry *te;
			if (git_tree_entry_bypath(&te, base, e[i].path) < 0)
				continue;
			git_tree_entry_free(te);
			up[nup].action = GIT_TREE_UPDATE_REMOVE;
		}
		up[nup].path = e[i].path;
		nup++;
	}
	if (git_tree_create_updated(&tree_oid, h->repo, base, nup, up) < 0 ||
	    git_tree_lookup(&tree, h->repo, &tree_oid) < 0) {
		history__git_err(err, "tree");
		goto out;
	}
	uint64_t last = e[n - 1].rv;
	if (parent && git_oid_equal(&tree_oid, git_tree_id(base))) {
		/* Nothing declared changed (a replay after a crash, or changes
		 * that cancel out); the revision is still reached. */
		r = 0;
		goto reached;
	}
	if (message) {
		msg = xstrdup(message);
	} else if (n == 1) {
		msg = xasprintf("%s\n\nCorral-Revision: %llu\n", e[0].message,
				(unsigned long long)last);
	} else {
		size_t cap = 256 + 96 * (n < 64 ? n : 64), len = 0;
		msg = xmalloc(cap);
		len += (size_t)snprintf(msg, cap, "%zu changes, revisions %llu to %llu\n\n", n,
					(unsigned long long)e[0].rv, (unsigned long long)last);
		for (size_t i = 0; i < n && i < 64; i++) {
			cleanup_free char *line = xasprintf("- %s\n", e[i].message);
			size_t l = strlen(line);
			if (len + l + 64 >= cap)
				msg = xrealloc(msg, cap = cap * 2 + l);
			memcpy(msg + len, line, l + 1);
			len += l;
		}
		cleanup_free char *tail =
		    xasprintf("%s\nCorral-Revision: %llu\n", n > 64 ? "- ...\n" : "",
			      (unsigned long long)last);
		msg = xrealloc(msg, len + strlen(tail) + 1);
		strcpy(msg + len, tail);
	}
	/* A commit is its writer's; a batch of several writers' is corral's. */
	const char *who = e[0].author;
	for (size_t i = 1; i < n; i++)
		if (strcmp(e[i].author, who) != 0)
			who = "corral <corral@localhost>";
	if (history__signature(&author, who, e[n - 1].when_ns) < 0 ||
	    history__signature(&committer, "corral-fs <corral@localhost>", e[n - 1].when_ns) < 0) {
		history__git_err(err, "signature");
		goto out;
	}
	const git_commit *parents[1] = {parent};
	if (git_commit_create(&commit_oid, h->repo, NULL, author, committer, NULL, msg, tree,
			      parent ? 1 : 0, parents) < 0) {
		history__git_err(err, "commit");
		goto out;
	}
	if (history__publish(h, &commit_oid, err) < 0)
		goto out;
	r = 0;
	if (++h->commits_since_repack >= HISTORY_REPACK_EVERY) {
		h->commits_since_repack = 0;
		history__repack(h);
	}
reached:
	pthread_mutex_lock(&h->lock);
	h->rev = last;
	pthread_mutex_unlock(&h->lock);
out:
	histpack_reset(h->pack); /* what no commit took */
	free(msg);
	free(order);
	free(up);
	git_signature_free(author);
	git_signature_free(committer);
	git_tree_free(tree);
	git_tree_free(base);
	git_commit_free(parent);
	return r;
}

static int64_t history__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How many of e[0..n) go into one commit: up to the first path that comes
 * again, so that `git log -- path` shows every change of a file; but when
 * the history has fallen far behind, all of them (DESIGN.md: changes that
 * come faster than commits can be written share one commit). */
static size_t history__batch_len(const struct store_outbox_entry *e, size_t n)
{
	if (n > HISTORY_BACKLOG)
		return n;
	for (size_t i = 1; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(e[i].path, e[j].path) == 0)
				return i;
	return n;
}

/* A history that begins after its cluster (a host that joins a shared
 * store whose outbox was trimmed, or a repository lost): its first commit
 * is the whole declared cluster at one revision R, and the writer goes on
 * from the outbox after R. An entry up to R, still in the outbox or not,
 * is in the snapshot; one after R is not: none is missed or applied
 * twice. This replica is counted in before R is chosen (a trim to 0
 * removes nothing, but records it over etcd), so that the others trim
 * nothing after R before it is read here. */
static int history__seed(struct history *h, struct error **err)
{
	struct store_outbox_entry *e = NULL;
	size_t n = 0;
	uint64_t rev = 0;
	int r = store_outbox_trim(h->store, 0, err);
	if (r < 0 || (r = snapshot_declared(h->store, &e, &n, &rev, err)) < 0)
		return r;
	if (n > 0) {
		cleanup_free char *msg = xasprintf(
		    "corral: the cluster at revision %llu, when this host's history began\n\n"
		    "%zu objects, as the live store held them. The changes before this\n"
		    "revision are not in this history (corral-fs(8), \"The history\").\n\n"
		    "Corral-Revision: %llu\n",
		    (unsigned long long)rev, n, (unsigned long long)rev);
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		e[n - 1].when_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		r = history__commit(h, e, n, msg, err);
	}
	store_outbox_free(e, n);
	if (r < 0)
		return r;
	pthread_mutex_lock(&h->lock);
	h->rev = rev;
	pthread_mutex_unlock(&h->lock);
	h->seed = false;
	log_info("history: begun with the cluster at revision %llu (%zu objects)",
		 (unsigned long long)rev, n);
	return 0;
}

static void *history__run(void *arg)
{
	struct history *h = arg;
	/* Behind the writers on a busy machine (see the top); the repack
	 * inherits it. */
	pthread_setname_np(pthread_self(), "corral-history"); /* for top -H, perf */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), HISTORY_NICE) != 0)
		log_warn("history: cannot lower the writer's priority: %s", strerror(errno));
	int64_t last_commit = 0, last_trim = history__now_ms();
	int64_t gap = HISTORY_GATHER_MS; /* between commits under load */
	uint64_t trimmed = 0;		 /* the trim at open may have failed */
	bool failing = false;		 /* said once per run of failures */
	while (!h->stop) {
		struct store_outbox_entry *e = NULL;
		size_t n = 0;
		struct error *err = NULL;
		if (h->seed && history__seed(h, &err) < 0)
			goto fail;
		uint64_t seen = store_revision(h->store);
		uint64_t from = history_revision(h);
		/* Under load, let changes gather so that they share commits
		 * instead of each rewriting the same trees: a commit rewrites
		 * every tree on its paths (a folder of 10,000 objects is a
		 * 400 KiB tree), so the pause after one grows with what it
		 * cost, and the writer spends at most a share of its time on
		 * commits however fast the changes come. */
		for (int64_t since = history__now_ms() - last_commit; since < gap && !h->stop;
		     since = history__now_ms() - last_commit) {
			/* Not when the changes have stopped: then at once, so
			 * that the history is not behind a burst for long. */
			uint64_t before = store_revision(h->store);
			store_outbox_wait(h->store, UINT64_MAX - 1, HISTORY_QUIET_MS);
			if (store_revision(h->store) == before)
				break;
		}
		if (store_outbox_read(h->store, from, HISTORY_BATCH, &e, &n, &err) < 0)
			goto fail;
		size_t take = n ? history__batch_len(e, n) : 0;
		if (take > 0) {
			int64_t t0 = history__now_ms();
			if (history__commit(h, e, take, NULL, &err) < 0)
				goto fail;
			last_commit = history__now_ms();
			gap = (last_commit - t0) * HISTORY_GATHER_SHARE;
			gap = gap < HISTORY_GATHER_MS	    ? HISTORY_GATHER_MS
			      : gap > HISTORY_GATHER_MAX_MS ? HISTORY_GATHER_MAX_MS
							    : gap;
		}
		store_outbox_free(e, n);
		e = NULL; /* a trim that fails below must not free it again */
		uint64_t reached = history_revision(h);
		/* A shared store (etcd) also hears from an idle replica now and
		 * then: it counts for the outbox's trimmer while it does. */
		bool idle_mark = store_shared(h->store) && history__now_ms() - last_trim > 3000;
		if ((reached > trimmed && (history__now_ms() - last_trim > 1000 || n == 0)) ||
		    idle_mark) {
			if (store_outbox_trim(h->store, reached, &err) < 0)
				goto fail;
			trimmed = reached;
			last_trim = history__now_ms();
		}
		if (n == 0 && h->commits_since_repack >= HISTORY_IDLE_REPACK) {
			/* A burst is over: roll up the packs it left. */
			h->commits_since_repack = 0;
			history__repack(h);
		}
		if (failing)
			log_info("history: writing again, at revision %llu",
				 (unsigned long long)reached);
		failing = false;
		if (n == 0)
			store_outbox_wait(h->store, seen, 1000);
		continue;
	fail:
		if (!failing)
			log_error("%s (trying again each second)",
				  err ? err->msg : "history: failed");
		failing = true;
		error_free(err);
		store_outbox_free(e, n);
		store_outbox_wait(h->store, UINT64_MAX - 1, 1000); /* back off */
	}
	return NULL;
}

int history_start(struct history *h, struct error **err)
{
	int rc = pthread_create(&h->thread, NULL, history__run, h);
	if (rc != 0)
		return error_set(err, rc, "history: cannot start the writer: %s", strerror(rc));
	h->started = true;
	return 0;
}

void history_close(struct history *h)
{
	if (!h)
		return;
	if (h->started) {
		h->stop = true;
		store_outbox_kick(h->store);
		pthread_join(h->thread, NULL);
	}
	git_repository_free(h->repo);
	pthread_mutex_destroy(&h->lock);
	free(h->gitdir);
	free(h);
	git_libgit2_shutdown();
}

struct history__walk {
	struct history *h;
	int (*fn)(void *data, const char *path, const char *yaml, size_t len);
	void *data;
	int r;
};

static int history__walk_cb(const char *root, const git_tree_entry *te, void *payload)
{
	struct history__walk *w = payload;
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB)
		return 0;
	git_blob *blob;
	if (git_blob_lookup(&blob, w->h->repo, git_tree_entry_id(te)) < 0)
		return 0;
	cleanup_free char *path = xasprintf("%s%s", root, git_tree_entry_name(te));
	size_t len = (size_t)git_blob_rawsize(blob);
	cleanup_free char *text = xstrndup(git_blob_rawcontent(blob), len);
	git_blob_free(blob);
	w->r = w->fn(w->data, path, text, len);
	return w->r < 0 ? -1 : 0;
}

int history_foreach_head(struct history *h,
			 int (*fn)(void *data, const char *path, const char *yaml, size_t len),
			 void *data, struct error **err)
{
	git_oid oid;
	git_commit *c = NULL;
	git_tree *t = NULL;
	if (git_reference_name_to_id(&oid, h->repo, "HEAD") < 0)
		return error_set(err, ENOENT, "history: %s has no commits", h->gitdir);
	if (git_commit_lookup(&c, h->repo, &oid) < 0 || git_commit_tree(&t, c) < 0) {
		git_commit_free(c);
		return history__git_err(err, "HEAD");
	}
	struct history__walk w = {.h = h, .fn = fn, .data = data};
	git_tree_walk(t, GIT_TREEWALK_PRE, history__walk_cb, &w);
	git_tree_free(t);
	git_commit_free(c);
	return w.r < 0 ? error_set(err, -w.r, "history: restore failed") : 0;
}
