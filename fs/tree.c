/* tree.c: the inode tree; two hash tables (by inode number and by folder
 * and name) over nodes that link their siblings in a list. */
#include "tree.h"
#include "fnv.h"
#include "treepath.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tree {
	pthread_rwlock_t lock;
	struct node *root;
	uint64_t next_ino;
	struct node **by_ino;
	struct node **by_name;
	size_t nbuckets; /* both tables */
	size_t count;
};

struct blob *blob_new(const char *data, size_t len)
{
	struct blob *b = xmalloc(sizeof(*b) + len + 1);
	atomic_init(&b->ref, 1);
	b->len = len;
	if (len)
		memcpy(b->data, data, len);
	b->data[len] = '\0';
	return b;
}

struct blob *blob_ref(struct blob *b)
{
	if (b)
		atomic_fetch_add(&b->ref, 1);
	return b;
}

void blob_unref(struct blob *b)
{
	if (b && atomic_fetch_sub(&b->ref, 1) == 1)
		free(b);
}

static uint64_t tree__hash_name(uint64_t parent, const char *name)
{
	return fnv1a_add(FNV1A_BASIS ^ parent, name, strlen(name));
}

static uint64_t tree__hash_ino(uint64_t ino)
{
	return ino * 11400714819323198485ULL;
}

static void tree__rehash(struct tree *t)
{
	size_t nb = t->nbuckets * 2;
	struct node **bi = xcalloc(nb, sizeof(*bi)), **bn = xcalloc(nb, sizeof(*bn));
	for (size_t i = 0; i < t->nbuckets; i++) {
		for (struct node *n = t->by_ino[i], *next; n; n = next) {
			next = n->ino_next;
			size_t b = tree__hash_ino(n->ino) & (nb - 1);
			n->ino_next = bi[b];
			bi[b] = n;
		}
		for (struct node *n = t->by_name[i], *next; n; n = next) {
			next = n->name_next;
			size_t b = tree__hash_name(n->parent->ino, n->name) & (nb - 1);
			n->name_next = bn[b];
			bn[b] = n;
		}
	}
	free(t->by_ino);
	free(t->by_name);
	t->by_ino = bi;
	t->by_name = bn;
	t->nbuckets = nb;
}

static void tree__name_insert(struct tree *t, struct node *n)
{
	size_t b = tree__hash_name(n->parent->ino, n->name) & (t->nbuckets - 1);
	n->name_next = t->by_name[b];
	t->by_name[b] = n;
}

static void tree__name_remove(struct tree *t, struct node *n)
{
	size_t b = tree__hash_name(n->parent->ino, n->name) & (t->nbuckets - 1);
	for (struct node **pp = &t->by_name[b]; *pp; pp = &(*pp)->name_next)
		if (*pp == n) {
			*pp = n->name_next;
			n->name_next = NULL;
			return;
		}
}

static void tree__ino_remove(struct tree *t, struct node *n)
{
	size_t b = tree__hash_ino(n->ino) & (t->nbuckets - 1);
	for (struct node **pp = &t->by_ino[b]; *pp; pp = &(*pp)->ino_next)
		if (*pp == n) {
			*pp = n->ino_next;
			return;
		}
}

static void tree__list_add(struct node *dir, struct node *n)
{
	n->parent = dir;
	n->prev = dir->last;
	n->next = NULL;
	if (dir->last)
		dir->last->next = n;
	else
		dir->first = n;
	dir->last = n;
	dir->nkids++;
}

static void tree__list_remove(struct node *n)
{
	struct node *dir = n->parent;
	if (n->prev)
		n->prev->next = n->next;
	else
		dir->first = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		dir->last = n->prev;
	dir->nkids--;
	n->prev = n->next = NULL;
}

static struct node *tree__node_new(struct tree *t, const char *name, enum node_type type,
				   mode_t mode)
{
	struct node *n = xcalloc(1, sizeof(*n));
	n->ino = t->next_ino++;
	n->type = type;
	n->name = xstrdup(name);
	n->mode = mode;
	clock_gettime(CLOCK_REALTIME, &n->mtime);
	n->atime = n->ctime = n->mtime;
	if (t->count + 1 > t->nbuckets)
		tree__rehash(t);
	size_t b = tree__hash_ino(n->ino) & (t->nbuckets - 1);
	n->ino_next = t->by_ino[b];
	t->by_ino[b] = n;
	t->count++;
	return n;
}

static void tree__node_free(struct tree *t, struct node *n)
{
	tree__ino_remove(t, n);
	t->count--;
	blob_unref(n->content);
	free(n->data);
	free(n->moved_from);
	free(n->source);
	free(n->name);
	free(n->ns);
	free(n);
}

struct tree *tree_new(void)
{
	struct tree *t = xcalloc(1, sizeof(*t));
	pthread_rwlock_init(&t->lock, NULL);
	t->nbuckets = 1024;
	t->by_ino = xcalloc(t->nbuckets, sizeof(*t->by_ino));
	t->by_name = xcalloc(t->nbuckets, sizeof(*t->by_name));
	t->next_ino = 1; /* FUSE_ROOT_ID */
	t->root = tree__node_new(t, "", NODE_ROOT, S_IFDIR | 0755);
	t->root->nlookup = 1;
	return t;
}

void tree_free(struct tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node *n = t->by_ino[i], *next; n; n = next) {
			next = n->ino_next;
			blob_unref(n->content);
			free(n->data);
			free(n->moved_from);
			free(n->source);
			free(n->name);
			free(n->ns);
			free(n);
		}
	free(t->by_ino);
	free(t->by_name);
	pthread_rwlock_destroy(&t->lock);
	free(t);
}

pthread_rwlock_t *tree_lock(struct tree *t)
{
	return &t->lock;
}

struct node *tree_root(struct tree *t)
{
	return t->root;
}

size_t tree_count(struct tree *t)
{
	return t->count;
}

struct node *tree_by_ino(struct tree *t, uint64_t ino)
{
	size_t b = tree__hash_ino(ino) & (t->nbuckets - 1);
	for (struct node *n = t->by_ino[b]; n; n = n->ino_next)
		if (n->ino == ino)
			return n;
	return NULL;
}

struct node *tree_child(struct tree *t, struct node *dir, const char *name)
{
	size_t b = tree__hash_name(dir->ino, name) & (t->nbuckets - 1);
	for (struct node *n = t->by_name[b]; n; n = n->name_next)
		if (n->parent == dir && strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

struct node *tree_add(struct tree *t, struct node *dir, const char *name, enum node_type type,
		      mode_t mode)
{
	struct node *n = tree__node_new(t, name, type, mode);
	tree__list_add(dir, n);
	tree__name_insert(t, n);
	if (dir->ns)
		n->ns = xstrdup(dir->ns);
	clock_gettime(CLOCK_REALTIME, &dir->mtime);
	dir->ctime = dir->mtime;
	return n;
}

void tree_unlink(struct tree *t, struct node *n)
{
	if (!n->parent)
		return;
	/* A folder leaves with everything in it: no node may keep a parent
	 * that is gone. */
	while (n->first)
		tree_unlink(t, n->first);
	struct node *dir = n->parent;
	tree__name_remove(t, n);
	tree__list_remove(n);
	n->parent = NULL;
	clock_gettime(CLOCK_REALTIME, &dir->mtime);
	dir->ctime = dir->mtime;
	if (n->nlookup == 0 && n->open_count == 0)
		tree__node_free(t, n);
}

void tree_move(struct tree *t, struct node *n, struct node *dir, const char *name)
{
	if (n->parent) {
		tree__name_remove(t, n);
		tree__list_remove(n);
	}
	free(n->name);
	n->name = xstrdup(name);
	tree__list_add(dir, n);
	tree__name_insert(t, n);
	clock_gettime(CLOCK_REALTIME, &n->ctime);
}

void tree_forget(struct tree *t, struct node *n, uint64_t nlookup)
{
	n->nlookup = nlookup > n->nlookup ? 0 : n->nlookup - nlookup;
	if (n->nlookup == 0 && n->open_count == 0 && !n->parent && n != t->root)
		tree__node_free(t, n);
}

char *tree_key(const struct node *dir, const char *name)
{
	/* <name>.yaml in a kind folder or in namespaces/. */
	size_t l = strlen(name);
	cleanup_free char *base = xstrndup(name, l > 5 ? l - 5 : l);
	return treepath_key(dir->type == NODE_NSROOT ? "namespaces" : dir->name, dir->ns, base);
}

char *tree_object_key(const struct node *n)
{
	return n->parent ? tree_key(n->parent, n->name) : NULL;
}
